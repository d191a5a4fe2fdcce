"""Refusing requests from other sites: a known Host, then for a POST the page's token AND the same origin.

The app listens on localhost, but any web page the student visits could make their browser talk to it:

- DNS rebinding: a page at ``attacker.example:PORT`` re-points that name to 127.0.0.1, and its script
  then reads our pages and posts to us as *same-origin*, Host and Origin both naming attacker.example.
  So every request must name this server in its ``Host`` header: a loopback name (localhost,
  127.0.0.1, [::1]), the address the server is bound to, or the ``--host`` name it was started with, at
  the server's port. A rebinding needs a DNS name, so when the server is bound to every interface
  (0.0.0.0 or ::) any IP address literal is accepted as well.
- cross-site request forgery: a random token, made when the server starts, embedded in every page and
  sent back in the ``X-Problemgen-Token`` header (another site cannot read our pages, so it cannot know
  it; a custom header also forces a CORS preflight, which we never answer); and the ``Origin`` header,
  when the browser sends one, must name the Host the request was made to (``Sec-Fetch-Site:
  cross-site`` is refused too).

The token is compared in constant time. Responses also forbid framing and any off-site resource.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
import secrets

TOKEN_HEADER = "X-Problemgen-Token"

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARD_ADDRESSES = frozenset({"0.0.0.0", "::"})
_AUTHORITY = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::([0-9]{1,5}))?")

CSP = ("default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
"""Content-Security-Policy: our own CSS and JS only; nothing from the network, no inline script."""


def new_token() -> str:
    return secrets.token_urlsafe(32)


def host_refusal(host: str | None, bound: tuple[str, int], names: frozenset[str] = frozenset()) -> str | None:
    """Why a request whose Host header is ``host`` must be refused, or None (see DNS rebinding above).

    ``bound`` is the (address, port) the server listens on; ``names`` other lower-case names it answers to."""
    address, port = bound
    asked = authority(host or "")
    if asked is not None and asked[1] == port and _names_us(asked[0], address.lower(), names):
        return None
    shown = "127.0.0.1" if address in WILDCARD_ADDRESSES else f"[{address}]" if ":" in address else address
    return f"unknown Host {host or ''!r}: open this page at http://{shown}:{port}/"


def _names_us(name: str, address: str, names: frozenset[str]) -> bool:
    if name in LOOPBACK_NAMES or name == address or name in names:
        return True
    return address in WILDCARD_ADDRESSES and _is_ip_address(name)


def _is_ip_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def authority(text: str) -> tuple[str, int] | None:
    """``NAME[:PORT]`` (a Host header, an origin after its scheme) as (lower-case name, port), the
    brackets of an IPv6 address dropped and port 80 when none is given; None when it is not one."""
    match = _AUTHORITY.fullmatch(text)
    if match is None:
        return None
    return match.group(1).strip("[]").lower(), int(match.group(2) or 80)


def refusal(method: str, headers, token: str) -> str | None:
    """Why this request must be refused as cross-site, or None."""
    if method in ("GET", "HEAD", "OPTIONS"):
        return None
    if headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
        return "cross-site request refused"
    origin = headers.get("Origin")
    if origin is not None and not _same_origin(origin, headers.get("Host", "")):
        return "cross-origin request refused"
    sent = headers.get(TOKEN_HEADER, "")
    if not hmac.compare_digest(sent.encode(), token.encode()):
        return "missing or wrong page token (reload the page)"
    return None


def _same_origin(origin: str, host: str) -> bool:
    """Whether ``origin`` is ``http://`` and the Host (malformed origins such as ``http://[`` are not)."""
    scheme, _, rest = origin.partition("://")
    asked = authority(rest)
    return scheme == "http" and asked is not None and asked == authority(host)


def harden(response) -> None:
    """Security headers for every response."""
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Cross-Origin-Resource-Policy"] = "same-origin"
