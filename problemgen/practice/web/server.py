"""Running the app: bind (127.0.0.1 by default), print the URL, open the browser, serve until Ctrl-C."""

from __future__ import annotations

import threading
import webbrowser
from pathlib import Path
from typing import Callable, TextIO

from problemgen.model.core import ProblemgenError


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


def serve(host: str, port: int, db: str | Path, *, open_browser: bool, out: TextIO,
          opener: Callable[[str], object] = webbrowser.open) -> int:
    """Serve the practice app until interrupted; return the exit code."""
    check_web_dependencies()
    from werkzeug.serving import make_server

    from problemgen.practice.web.app import create_app  # lazy: Flask is optional, checked just above

    app = create_app(db, hosts=[host])
    try:
        # one serving thread: a local page for one student, and its progress store stays open (see app._store)
        server = make_server(host, port, app, threaded=False)
    except OSError as exc:
        raise ProblemgenError(f"cannot listen on {host}:{port} ({exc.strerror or exc})") from exc
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
