"""`problemgen serve`: option parsing over problemgen.practice.web.server."""

from __future__ import annotations

import sys

import click

from problemgen.cli.quiz import DB_HELP


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port to listen on (0 picks a free one).")
@click.option("--db", metavar="PATH", help=DB_HELP)
@click.option("--no-browser", is_flag=True, help="Do not open a browser; just print the URL.")
def serve_command(host: str, port: int, db: str | None, no_browser: bool) -> None:
    """Practise in the browser: the quiz's rules and progress, with rendered maths and grid inputs.

    Needs the web extra: pip install 'problemgen[web]'. Works offline; Ctrl-C stops the server.

    \b
    Example:
      problemgen serve
      problemgen serve --port 0 --no-browser --db ./me.sqlite3
    """
    from problemgen.practice.progress import default_db_path
    from problemgen.practice.web.server import serve

    sys.exit(serve(host, port, db or default_db_path(), open_browser=not no_browser, out=sys.stdout))
