"""Running the app: bind (127.0.0.1 by default), print the URL, open the browser, serve until Ctrl-C."""

from __future__ import annotations

import io
import socket
import threading
import time
import webbrowser
from pathlib import Path
from typing import Callable, TextIO

from problemgen.model.core import ProblemgenError

REQUEST_SECONDS = 10.0
"""How long a connection has to send its request (line, headers and body) from when it opens. The
server closes every connection after one reply, so a connection that is idle, or slow, ends there."""

READ_BYTES = 1024 * 1024
"""The most one connection may send. A request is at most 64 KiB (``app.MAX_REQUEST_BYTES``); the rest
lets the server read and drop a moderately larger body, so its sender sees the 413 and not a reset."""

SEND_SECONDS = 10.0
"""How long sending one piece of the reply may wait for a client that does not read it."""


def check_web_dependencies() -> None:
    """A clear one-line error when the ``web`` extra is not installed."""
    missing = []
    for module in ("flask", "latex2mathml"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        raise ProblemgenError(f"problemgen serve needs {', '.join(missing)}: pip install 'problemgen[web]'")


def practice_server(host: str, port: int, app, *, request_seconds: float = REQUEST_SECONDS):
    """The HTTP server for ``app``, bound to ``host``:``port`` (port 0 picks a free one).

    Each connection is read on its own thread, so a slow or idle client never holds up another; the
    app sees one request at a time all the same (``dispatch``). A connection has ``request_seconds`` to
    send its request and may send at most ``READ_BYTES``, so none is held open for ever."""
    server = _server_class()(host, port, app, handler=_handler_class())
    server.request_seconds = request_seconds
    return server


def _server_class():
    """Werkzeug's threaded server, whose failure to bind is our one-line error (exit 2): werkzeug itself
    prints the reason and calls ``sys.exit(1)``, which no caller can tell from a crash."""
    from werkzeug.serving import ThreadedWSGIServer

    class PracticeServer(ThreadedWSGIServer):
        def server_bind(self) -> None:
            try:
                super().server_bind()
            except OSError as exc:  # werkzeug re-raises anything but an OSError as it is
                raise ProblemgenError(f"cannot listen on {self.host}:{self.port} ({exc.strerror or exc})") from exc

    return PracticeServer


def serve(host: str, port: int, db: str | Path, *, open_browser: bool, out: TextIO,
          opener: Callable[[str], object] = webbrowser.open) -> int:
    """Serve the practice app until interrupted; return the exit code."""
    check_web_dependencies()
    from problemgen.practice.web.app import create_app  # lazy: Flask is optional, checked just above

    server = practice_server(host, port, None)  # bound first: a port in use must not touch the progress file
    server.app = create_app(db, hosts=[host])
    shown_host = f"[{host}]" if ":" in host else host
    url = f"http://{shown_host}:{server.server_port}/"
    out.write(f"problemgen serve: practise at {url}  (progress in {db}; Ctrl-C stops)\n")
    if host not in ("127.0.0.1", "localhost", "::1"):
        out.write(f"warning: listening on {host}: other machines can reach this page and your progress\n")
    out.flush()
    if open_browser:
        threading.Timer(0.3, opener, args=(url,)).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        out.write("stopped\n")
    finally:
        server.server_close()
    return 0


def _handler_class():
    """Werkzeug's request handler, reading through a ``_BoundedReader`` (made here: werkzeug is optional)."""
    from werkzeug.serving import WSGIRequestHandler

    class BoundedRequestHandler(WSGIRequestHandler):
        timeout = SEND_SECONDS  # socketserver sets it on the connection: it bounds every send

        def setup(self) -> None:
            super().setup()
            self.rfile.close()
            reader = _BoundedReader(self.connection, time.monotonic() + self.server.request_seconds, READ_BYTES)
            self.rfile = io.BufferedReader(reader)

    return BoundedRequestHandler


class _BoundedReader(io.RawIOBase):
    """A connection's socket as its request is read from it: by one deadline, and up to a byte budget.

    A timeout per read alone would let a client that sends a byte now and then keep its connection
    (and thread) for days; here every read waits only for what is left of the deadline. Past the budget
    the reader answers end-of-stream, which also ends werkzeug's reading and dropping of a body the
    app did not want (without it, an endless chunked body was read for ever)."""

    def __init__(self, sock: socket.socket, deadline: float, budget: int) -> None:
        super().__init__()
        self._sock, self._deadline, self._budget = sock, deadline, budget

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request took too long to arrive")
        if self._budget <= 0:
            return 0
        send_timeout = self._sock.gettimeout()
        self._sock.settimeout(left)
        try:
            count = self._sock.recv_into(memoryview(buffer)[: self._budget])
        finally:
            self._sock.settimeout(send_timeout)
        self._budget -= count
        return count
