"""Refusing cross-site requests: every POST needs the page's token AND a same-origin request.

The app listens on localhost, but any web page the student visits could make their browser POST to it
(cross-site request forgery) and write answers into their progress. Two independent checks close that:

- a random token, made when the server starts, embedded in every page and sent back in the
  ``X-Problemgen-Token`` header (another site cannot read our pages, so it cannot know it; a custom
  header also forces a CORS preflight, which we never answer);
- the ``Origin`` header, when the browser sends one, must name this server's own host and port
  (``Sec-Fetch-Site: cross-site`` is refused too).

The token is compared in constant time. Responses also forbid framing and any off-site resource.
"""

from __future__ import annotations

import hmac
import secrets
from urllib.parse import urlsplit

TOKEN_HEADER = "X-Problemgen-Token"

CSP = ("default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
"""Content-Security-Policy: our own CSS and JS only; nothing from the network, no inline script."""


def new_token() -> str:
    return secrets.token_urlsafe(32)


def refusal(method: str, headers, host: str, token: str) -> str | None:
    """Why this request must be refused, or None. ``host`` is the Host the request was made to."""
    if method in ("GET", "HEAD", "OPTIONS"):
        return None
    if headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
        return "cross-site request refused"
    origin = headers.get("Origin")
    if origin is not None and not _same_origin(origin, host):
        return "cross-origin request refused"
    sent = headers.get(TOKEN_HEADER, "")
    if not hmac.compare_digest(sent.encode(), token.encode()):
        return "missing or wrong page token (reload the page)"
    return None


def _same_origin(origin: str, host: str) -> bool:
    parts = urlsplit(origin)
    return parts.scheme == "http" and parts.netloc.lower() == host.lower()


def harden(response) -> None:
    """Security headers for every response."""
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Cross-Origin-Resource-Policy"] = "same-origin"
