"""How a request reaches the Flask app: one at a time, each with its whole body already read.

One at a time, because the practice rules read the store and then write it (``engine.Practice``: is
this part answered already, which variant was seen, which item is current), and two requests at once
could both answer the same part or both start an item; the store's one SQLite connection is also used
by one request at a time. The server reads connections on many threads (``server``); the app behind
this lock stays as serial as a one-thread server.

The body is read before the lock is taken, so a client that sends it slowly holds up no other request.
It is read at most one byte past the size cap: a chunked body (``Transfer-Encoding: chunked``, no
length up front) then reaches the app with a ``Content-Length`` like any other, and Flask answers 413
for every body over the cap. (Flask alone read a chunked body only up to the cap and stopped there
quietly: a view saw the first 64 KiB of a 1 MB body, and the client got 400 instead of 413.)
"""

from __future__ import annotations

import io
import threading
from typing import Callable, Iterable

from werkzeug.wsgi import get_content_length

WSGIApp = Callable[[dict, Callable], Iterable[bytes]]


def one_at_a_time(app: WSGIApp, cap: int) -> WSGIApp:
    """``app`` behind a lock, called with the request body in memory (at most ``cap + 1`` bytes of it)."""
    lock = threading.Lock()

    def dispatch(environ: dict, start_response: Callable) -> Iterable[bytes]:
        _read_body(environ, cap)
        with lock:
            return app(environ, start_response)

    return dispatch


def _read_body(environ: dict, cap: int) -> None:
    """Replace the environ's input stream by the body read from it, and give its length.

    A declared length over the cap is left unread: Flask refuses it from the header alone. Framing that
    is not valid chunked encoding reads as an empty body, which the views refuse as not JSON; a timeout
    or a dropped connection goes up to the server, which closes the connection."""
    chunked = bool(environ.get("wsgi.input_terminated"))
    declared = None if chunked else get_content_length(environ)
    if not chunked and (declared is None or declared > cap):
        return
    try:
        body = _read_at_most(environ["wsgi.input"], cap + 1 if chunked else declared)
    except (TimeoutError, ConnectionError):
        raise
    except OSError:  # werkzeug's chunk decoder refusing the framing
        body = b""
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    environ.pop("wsgi.input_terminated", None)
    environ.pop("HTTP_TRANSFER_ENCODING", None)  # the body in memory is no longer chunked


def _read_at_most(stream, size: int) -> bytes:
    """Up to ``size`` bytes: a stream may return fewer per read, and returns none at its end."""
    body = bytearray()
    while len(body) < size:
        data = stream.read(size - len(body))
        if not data:
            break
        body += data
    return bytes(body)
