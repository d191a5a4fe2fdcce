"""The C library the sandbox calls (prctl, capset, seccomp, Landlock), loaded once per process.

Why a module of its own: ``ctypes.CDLL(None)`` costs a freshly forked child about 0.13 ms each time
(the library is looked up again and every function resolved anew), and confining a child used to
do it four times. The fork server loads it here once and resolves the functions the child needs
(:func:`warm`); every child inherits the handle ready to use.
"""

from __future__ import annotations

import ctypes
import functools


@functools.lru_cache(maxsize=1)
def libc() -> ctypes.CDLL:
    """The process's C library, with ``errno`` kept for ``ctypes.get_errno`` and a 64-bit ``syscall``."""
    library = ctypes.CDLL(None, use_errno=True)
    library.syscall.restype = ctypes.c_long
    return library


def warm() -> None:
    """Load the library and resolve the functions a child calls, so that it inherits them resolved."""
    library = libc()
    for name in ("prctl", "capset", "syscall"):
        getattr(library, name)
