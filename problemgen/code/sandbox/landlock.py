"""Landlock: a read-only file-system allowlist (and, on newer kernels, no TCP and no signals out).

Why: seccomp cannot look at path names, so it cannot stop the child from *reading* the grader's
sources, the answer keys or another student's files. Landlock can: after ``restrict_self`` the
child may read only beneath the directories listed here (the submission, the standard library,
numpy/sympy) and may write nowhere. The ABI version decides which rights the kernel understands;
we handle every right the running kernel knows, so anything not granted is denied.
"""

from __future__ import annotations

import ctypes
import os
import platform

_NR_CREATE, _NR_ADD_RULE, _NR_RESTRICT = 444, 445, 446  # same numbers on x86-64 and arm64
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

# Access rights per ABI version (linux/landlock.h).
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_V1 = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
_FS_BY_ABI = {1: _FS_V1, 2: _FS_V1 | 1 << 13, 3: _FS_V1 | 1 << 13 | 1 << 14}
_FS_V5 = _FS_BY_ABI[3] | 1 << 15  # + IOCTL_DEV
_NET_TCP = 1 | 2  # BIND_TCP | CONNECT_TCP, ABI >= 4
_SCOPE_ALL = 1 | 2  # ABSTRACT_UNIX_SOCKET | SIGNAL, ABI >= 6
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | 1 << 14 | 1 << 15  # rights valid on a non-directory


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The Landlock ABI the kernel offers, or 0 when it is absent or disabled."""
    if platform.system() != "Linux":
        return 0
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(_NR_CREATE, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    return max(int(version), 0)


def _handled_fs(abi: int) -> int:
    return _FS_V5 if abi >= 5 else _FS_BY_ABI[min(abi, 3)]


def restrict(read_paths: list[str], list_paths: list[str] = ()) -> int:
    """Confine the calling process to reading beneath ``read_paths``; returns the ABI used.

    ``list_paths`` may only be listed (file names, not contents): the import system needs to list
    site-packages to find numpy, but must not read the grader installed next to it.
    Raises OSError when Landlock is unavailable or a step fails. Paths that do not exist are
    skipped. Sets no_new_privs, which Landlock requires of unprivileged callers.
    """
    abi = abi_version()
    if abi < 1:
        raise OSError("Landlock is not available in this kernel")
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    attr = _RulesetAttr(_handled_fs(abi), _NET_TCP if abi >= 4 else 0, _SCOPE_ALL if abi >= 6 else 0)
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    ruleset = libc.syscall(_NR_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for path in read_paths:
            _allow(libc, int(ruleset), path, READ_FILE | READ_DIR)
        for path in list_paths:
            _allow(libc, int(ruleset), path, READ_DIR)
        _no_new_privs(libc)
        if libc.syscall(_NR_RESTRICT, int(ruleset), 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(int(ruleset))
    return abi


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS  # directory rights on a file are EINVAL
        if not rights:
            return
        rule = _PathBeneathAttr(rights, fd)
        if libc.syscall(_NR_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(fd)


def _no_new_privs(libc: ctypes.CDLL) -> None:
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
