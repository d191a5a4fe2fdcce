"""The practice server over real sockets: what only a real server and a real client show.

Flask's test client hands the app a ready-made request; these tests start ``server.practice_server`` on
a free port in a thread and talk to it with raw sockets, so request framing (chunked bodies) and the
server's own reading of a request are what is tested.
"""

from __future__ import annotations

import contextlib
import http.client
import io
import json
import re
import socket
import ssl
import threading
import time

import pytest

pytest.importorskip("flask", reason="the web extra (flask) is not installed")
pytest.importorskip("latex2mathml", reason="the web extra (latex2mathml) is not installed")

from problemgen.practice.web.app import MAX_REQUEST_BYTES, create_app  # noqa: E402
from problemgen.practice.web.server import practice_server, serve  # noqa: E402

TIMEOUT = 30.0
"""A client's patience in these tests: far beyond any answer they expect, so a hang fails, not blocks."""


class Served:
    """A running server: its port, and the page token a browser would have read."""

    def __init__(self, httpd) -> None:
        self.httpd, self.port = httpd, httpd.server_port
        _, page = self.exchange(self.request("GET", "/"))
        self.token = re.search(rb'name="problemgen-token" content="([^"]+)"', page)[1].decode()

    def request(self, method: str, path: str, body: bytes = b"", **headers: str) -> bytes:
        """Request bytes as a browser on this machine would send them (Host, and the token for a POST)."""
        lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}"]
        if method == "POST":
            lines += ["Content-Type: application/json", f"X-Problemgen-Token: {self.token}"]
        lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + body

    def exchange(self, data: bytes) -> tuple[int, object]:
        """Send ``data``; the reply's status and JSON body (None for a page), read as a browser reads it."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT) as sock:
            sock.sendall(data)
            reply = http.client.HTTPResponse(sock)
            reply.begin()
            body = reply.read()
        is_json = reply.getheader("Content-Type", "").startswith("application/json")
        return reply.status, json.loads(body) if is_json else body


def chunked(body: bytes, piece: int = 8192) -> bytes:
    """``body`` in ``Transfer-Encoding: chunked`` framing."""
    pieces = [body[i:i + piece] for i in range(0, len(body), piece)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


@contextlib.contextmanager
def serving(app, **options):
    httpd = practice_server("127.0.0.1", 0, app, **options)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Served(httpd)
    finally:
        httpd.shutdown()
        thread.join(TIMEOUT)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with serving(create_app(tmp_path_factory.mktemp("web") / "progress.sqlite3")) as server:
        yield server


DEADLINE = 2.0
"""The request deadline of the ``hurried`` server: short, so a test sees it pass."""


@pytest.fixture(scope="module")
def hurried(tmp_path_factory):
    app = create_app(tmp_path_factory.mktemp("web") / "progress.sqlite3")
    with serving(app, request_seconds=DEADLINE) as server:
        yield server


# ------------------------------------------------------------------------------------ request bodies


def test_a_chunked_body_over_the_cap_is_413_like_one_with_a_length(served):
    """Flask read a chunked body only up to the cap and stopped quietly: a 1 MB body got 400 "expected a
    JSON object" instead of 413."""
    big = b'{"unit": "' + b"x" * 1_000_000 + b'"}'
    as_chunks = served.request("POST", "/api/start", chunked(big), Transfer_Encoding="chunked")
    with_length = served.request("POST", "/api/start", big, Content_Length=str(len(big)))
    for data in (as_chunks, with_length):
        assert served.exchange(data) == (413, {"error": "request too large"})


def test_a_chunked_body_under_the_cap_is_read_whole(served):
    padded = json.dumps({"unit": None, "padding": "x" * (MAX_REQUEST_BYTES - 100)}).encode()
    status, item = served.exchange(served.request("POST", "/api/start", chunked(padded), Transfer_Encoding="chunked"))
    assert status == 200 and item["parts"]


# ------------------------------------------------------------------------------- slow and idle clients


def tls_client_hello() -> bytes:
    """What a browser sends first to an https:// URL: a TLS ClientHello (the server speaks plain HTTP)."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ssl.create_default_context().wrap_bio(incoming, outgoing, server_hostname="localhost")
    with contextlib.suppress(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


def stalls(server: Served) -> dict[str, bytes]:
    """Clients that send this much of a request and then nothing more, keeping the connection open."""
    host = f"Host: 127.0.0.1:{server.port}\r\n".encode()
    return {"idle": b"", "partial headers": b"GET / HTTP/1.1\r\n" + host, "bare request line": b"GET /\r\n",
            "short body": server.request("POST", "/api/hint", b"{", Content_Length="1000"),
            "TLS ClientHello": tls_client_hello()}


def seconds_until_closed(sock: socket.socket) -> float:
    """How long until the server closes ``sock`` (it may reply first); fails if it never does."""
    start = time.monotonic()
    while sock.recv(65536):
        pass
    return time.monotonic() - start


def test_a_slow_or_idle_client_holds_up_no_other_and_is_cut_off(hurried):
    """The server read one connection at a time with no timeout: any of these froze it for every client."""
    opened = {}
    for name, data in stalls(hurried).items():
        opened[name] = socket.create_connection(("127.0.0.1", hurried.port), timeout=TIMEOUT)
        opened[name].sendall(data)
    try:
        start = time.monotonic()
        status, _ = hurried.exchange(hurried.request("GET", "/"))
        assert status == 200 and time.monotonic() - start < DEADLINE / 2  # it waited for none of them
        for name, sock in opened.items():
            assert seconds_until_closed(sock) < DEADLINE + 3, name
    finally:
        for sock in opened.values():
            sock.close()


def test_an_endless_chunked_body_is_cut_off_after_a_bounded_read(hurried):
    """An endless chunked body was read and dropped for ever (6.8 GB in 5 s), the server frozen meanwhile."""
    piece = chunked(b" " * 65536)[:-5]  # one 64 KiB chunk, without the final empty chunk
    sent = 0
    with socket.create_connection(("127.0.0.1", hurried.port), timeout=TIMEOUT) as sock:
        sock.sendall(hurried.request("POST", "/api/start", Transfer_Encoding="chunked"))
        start = time.monotonic()
        with pytest.raises(OSError):  # the server closes the connection: a send fails
            while time.monotonic() - start < DEADLINE + 3:
                sock.sendall(piece)
                sent += len(piece)
    assert sent < 64 * 1024 * 1024  # the server reads 1 MiB; the rest is what the sockets' buffers hold
    assert hurried.exchange(hurried.request("GET", "/"))[0] == 200


def test_the_app_sees_one_request_at_a_time(tmp_path):
    """Connections are read on many threads; the practice rules and the store must still see one request
    at a time (dispatch's lock), or two answers to one part could both be recorded."""
    app = create_app(tmp_path / "progress.sqlite3")
    inside, most = [], []

    @app.before_request
    def enter():
        inside.append(1)
        most.append(len(inside))
        time.sleep(0.05)

    @app.teardown_request
    def leave(_exc):
        inside.pop()

    with serving(app) as server:
        replies = []
        threads = [threading.Thread(target=lambda: replies.append(server.exchange(server.request("GET", "/"))))
                   for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(TIMEOUT)
    assert [status for status, _ in replies] == [200] * 6
    assert max(most) == 1


def test_a_port_in_use_is_a_one_line_error_not_werkzeugs_exit(tmp_path):
    """Werkzeug reports a port it cannot bind by printing and calling sys.exit(1), which the CLI would
    pass on as exit 1 ("found a failure"); it is bad input, our one-line error (exit 2)."""
    from problemgen.errors import ProblemgenError

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        app = create_app(tmp_path / "progress.sqlite3", hosts=["127.0.0.1"])
        with pytest.raises(ProblemgenError, match=f"cannot listen on 127.0.0.1:{port} .*in use"):
            practice_server("127.0.0.1", port, app)
        with pytest.raises(ProblemgenError, match="cannot listen"):  # serve binds before it opens the store
            serve("127.0.0.1", port, tmp_path / "untouched.sqlite3", open_browser=False, out=io.StringIO())
        assert not (tmp_path / "untouched.sqlite3").exists()
