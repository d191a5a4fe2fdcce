"""Captured stdout/stderr of a child: bounded while it arrives, made inert before it is shown.

Why escape: a submission's output ends up in CI logs and terminals. A line starting with
``::error file=...::`` becomes a GitHub annotation, ``##vso[...]`` an Azure command, and ANSI or
other control sequences can repaint a terminal (hiding a verdict or faking one). After
:func:`escape`, output contains only printable text and newlines, every control character is shown as
a visible escape, and every line is prefixed so no line can start a CI command.
"""

from __future__ import annotations

PREFIX = "| "


class CappedBuffer:
    """Keeps the first ``cap`` bytes and counts the rest (the child is drained regardless)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        shown = escape(bytes(self.data))
        if self.dropped:
            shown += f"\n{PREFIX}[... {self.dropped} more bytes not shown]"
        return shown


def escape(data: bytes) -> str:
    """Printable, prefixed text: control characters (ANSI ESC, CR, NUL...) become ``\\xNN`` escapes."""
    text = data.decode("utf-8", errors="backslashreplace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return "\n".join(PREFIX + _visible(line) for line in lines)


def _visible(line: str) -> str:
    out = []
    for ch in line:
        code = ord(ch)
        if ch == "\t" or (code >= 0x20 and code != 0x7F and not 0x80 <= code < 0xA0 and not _invisible(code)):
            out.append(ch)
        else:
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    return "".join(out)


def _invisible(code: int) -> bool:
    """Bidi overrides, zero-width and line/paragraph separators: text that lies about itself."""
    return code in (0x2028, 0x2029, 0xFEFF) or 0x200B <= code <= 0x200F or 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069


def clip(message: str, limit: int = 2000) -> str:
    """Shorten an untrusted message and make it inert: one line, newlines and controls escaped."""
    if len(message) > limit:
        message = message[:limit] + f"... [{len(message) - limit} more characters]"
    shown = _visible(message)
    return "\\" + shown if shown.lstrip().startswith(("::", "##")) else shown
