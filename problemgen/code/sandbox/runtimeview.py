"""Make the Python runtime reachable for ``nobody`` when it lives under a private directory.

Why: a root grader often runs a Python installed under ``/root`` (pyenv, conda), a directory mode
0700. A child switched to ``nobody`` could then not import a single module it did not inherit, so
the sandbox would have to keep it at uid 0. Instead the fork server (root, trusted, before it forks
any child) moves into a mount namespace of its own and covers each such private ancestor with an
empty tmpfs that holds nothing but bind mounts of the runtime directories the child is allowed to
read. Paths stay the same, so imports, ``__file__`` and Landlock rules are unchanged; the rest of
``/root`` becomes invisible to the fork server and its children. The grader's own view is untouched.

Only used as root; on any failure the namespace is left as it was, and the sandbox then refuses to run
student code rather than run it as uid 0 (``isolation.refuses_root``), saying what failed.
"""

from __future__ import annotations

import ctypes
import os
import stat

_CLONE_NEWNS = 0x00020000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 0x2, 0x4, 0x8
_MS_BIND, _MS_REC, _MS_PRIVATE = 0x1000, 0x4000, 1 << 18


def blocked_ancestor(path: str) -> str | None:
    """The highest ancestor of ``path`` that others cannot search (mode without o+x), if any."""
    parts = os.path.realpath(path).split(os.sep)[1:]
    current = ""
    for part in parts[:-1]:
        current += os.sep + part
        try:
            if not os.stat(current).st_mode & stat.S_IXOTH:
                return current
        except OSError:
            return None
    return None


def expose(paths: list[str]) -> list[str]:
    """Bind ``paths`` into a private namespace so every ancestor is searchable; returns notes on failure."""
    todo = _outermost(sorted({os.path.realpath(p) for p in paths if os.path.isdir(p) and blocked_ancestor(p)}))
    if not todo:
        return []
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWNS) != 0:
        return [f"no private mount namespace: {os.strerror(ctypes.get_errno())}"]
    if libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return [f"mounts could not be made private: {os.strerror(ctypes.get_errno())}"]
    by_cover: dict[str, list[str]] = {}
    for path in todo:
        by_cover.setdefault(blocked_ancestor(path), []).append(path)
    notes: list[str] = []
    for cover, inside in sorted(by_cover.items(), key=lambda item: len(item[0])):
        notes += _cover(libc, cover, inside)
    return notes


def _outermost(paths: list[str]) -> list[str]:
    """Drop paths that lie inside another listed path (binding the outer one brings them along)."""
    kept: list[str] = []
    for path in paths:  # sorted: a parent comes before its children
        if not any(path == k or path.startswith(k + os.sep) for k in kept):
            kept.append(path)
    return kept


def _cover(libc: ctypes.CDLL, cover: str, inside: list[str]) -> list[str]:
    """tmpfs over ``cover`` holding empty directories down to each path, each path bound back in."""
    handles = [os.open(p, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC) for p in inside]  # before they are hidden
    try:
        flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
        if libc.mount(b"none", cover.encode(), b"tmpfs", flags, b"mode=0755,size=64k") != 0:
            return [f"could not cover {cover}: {os.strerror(ctypes.get_errno())}"]
        for path, fd in zip(inside, handles):
            os.makedirs(path, mode=0o755, exist_ok=True)
            source = f"/proc/self/fd/{fd}".encode()
            if libc.mount(source, path.encode(), None, _MS_BIND | _MS_REC, None) != 0:
                return [f"could not bind {path}: {os.strerror(ctypes.get_errno())}"]
        return []
    finally:
        for fd in handles:
            os.close(fd)
