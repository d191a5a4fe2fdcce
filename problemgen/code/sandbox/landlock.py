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
import stat

from problemgen.code.sandbox.libc import libc as c_library

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


def abi_version() -> int:
    """The Landlock ABI the kernel offers, or 0 when it is absent or disabled."""
    if platform.system() != "Linux":
        return 0
    libc = c_library()
    version = libc.syscall(_NR_CREATE, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    return max(int(version), 0)


def _handled_fs(abi: int) -> int:
    return _FS_V5 if abi >= 5 else _FS_BY_ABI[min(abi, 3)]


class FixedRules:
    """The part of an allowlist that is the same for every child, opened once by the fork server.

    Why: resolving ~200 paths (the standard library entry by entry, numpy, system libraries) and
    adding a rule for each took a freshly forked child 1.4 ms, longer than importing and running a
    submission. The fork server holds an ``O_PATH`` descriptor per path instead, and before each
    fork makes a new ruleset holding these rules (:meth:`new_ruleset`); the child adds its own paths
    (its submission, its ``/proc/self``) and enforces it. The fork server closes its copy right after
    the fork, so every ruleset belongs to one child; the rules are those :func:`add_paths` makes from the same names.
    """

    def __init__(self, read_paths: list[str], list_paths: list[str] = ()) -> None:
        wanted = [*((p, READ_FILE | READ_DIR) for p in read_paths), *((p, READ_DIR) for p in list_paths)]
        self.rules = [rule for rule in (_open_rule(path, rights) for path, rights in wanted) if rule is not None]

    def new_ruleset(self) -> tuple[int, int]:
        """(ruleset descriptor, ABI): a new ruleset holding every fixed rule, not enforced."""
        ruleset, abi = create()
        try:
            for rule in self.rules:
                _add(ruleset, rule, "a path the fork server opened")
        except BaseException:
            os.close(ruleset)
            raise
        return ruleset, abi


def create() -> tuple[int, int]:
    """(descriptor, ABI) of a new empty ruleset handling every right the kernel knows."""
    abi = abi_version()
    if abi < 1:
        raise OSError("Landlock is not available in this kernel")
    attr = _RulesetAttr(_handled_fs(abi), _NET_TCP if abi >= 4 else 0, _SCOPE_ALL if abi >= 6 else 0)
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    ruleset = int(c_library().syscall(_NR_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), 0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    return ruleset, abi


def add_paths(ruleset: int, read_paths: list[str], list_paths: list[str] = ()) -> None:
    """Allow reading beneath ``read_paths`` and listing ``list_paths`` (missing paths are skipped)."""
    for path, rights in [*((p, READ_FILE | READ_DIR) for p in read_paths), *((p, READ_DIR) for p in list_paths)]:
        rule = _open_rule(path, rights)
        if rule is not None:
            try:
                _add(ruleset, rule, path)
            finally:
                os.close(rule.parent_fd)


def enforce(ruleset: int) -> None:
    """Restrict the calling process to ``ruleset`` (irreversible) and close the descriptor."""
    libc = c_library()
    try:
        _no_new_privs(libc)
        if libc.syscall(_NR_RESTRICT, ruleset, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)


def _open_rule(path: str, rights: int) -> _PathBeneathAttr | None:
    """A rule granting ``rights`` beneath ``path``, holding an open ``O_PATH`` descriptor of it; None when
    the path does not exist or no right applies to it (directory rights on a file are EINVAL)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISDIR(os.fstat(fd).st_mode):
        rights &= FILE_RIGHTS
    if not rights:
        os.close(fd)
        return None
    return _PathBeneathAttr(rights, fd)


def _add(ruleset: int, rule: _PathBeneathAttr, what: str) -> None:
    if c_library().syscall(_NR_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
        raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {what}")


def _no_new_privs(libc: ctypes.CDLL) -> None:
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
