"""Credentials of the sandboxed child: no capability of any kind, and an unprivileged uid when possible.

Why a step of its own: seccomp and Landlock decide what a *call* may do, but a child that still holds
capabilities (a grader running as root, the usual case in CI containers and course autograders) could
use every privileged operation they leave open. So the child gives up all five capability sets, locks
the securebits so uid 0 never regains them, and switches to ``nobody`` when the runtime is reachable
for that uid. Where it is not, the child runs no student code (``isolation.refuses_root``): uid 0 without
capabilities still owns every root-owned file.

The child's own account of this is never believed: :func:`read_status` is how the fork server (trusted
code, the child's parent) reads the result back from ``/proc/<pid>/status`` before any student byte runs.
"""

from __future__ import annotations

import ctypes
import functools
import os

from problemgen.code.sandbox.libc import libc as c_library

NOBODY = 65534

# prctl options and securebits (linux/prctl.h, linux/securebits.h).
_PR_CAPBSET_DROP = 24
_PR_SET_SECUREBITS = 28
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
SECUREBITS = (
    1 << 0 | 1 << 1  # NOROOT, locked: uid 0 gains no capability from execve
    | 1 << 2 | 1 << 3  # NO_SETUID_FIXUP, locked: we clear the sets ourselves, explicitly
    | 1 << 5  # KEEP_CAPS_LOCKED (KEEP_CAPS itself off)
    | 1 << 6 | 1 << 7  # NO_CAP_AMBIENT_RAISE, locked
)  # fmt: skip
_CAP_V3 = 0x20080522
CAPABILITY_FIELDS = {"CapInh": "inheritable", "CapPrm": "permitted", "CapEff": "effective",
                     "CapBnd": "bounding", "CapAmb": "ambient"}  # fmt: skip


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop(target_uid: int | None) -> list[str]:
    """Give up every capability (and switch to ``target_uid`` if given); returns notes on what failed.

    Order: the bounding set and securebits need CAP_SETPCAP, the uid switch CAP_SETUID, so both come
    before the capability sets are emptied; NO_SETUID_FIXUP keeps the switch from clearing them
    implicitly, so the final ``capset`` is the one step that empties them, whatever the uid.
    A non-root grader has nothing to give up but the bounding set, which it may not change: that is
    harmless under no_new_privs and is reported as it is.
    """
    libc = c_library()
    notes: list[str] = []
    euid = os.geteuid()
    if euid == 0:
        _drop_bounding_set(libc, notes)
        if libc.prctl(_PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0) != 0:
            notes.append(f"securebits not locked: {os.strerror(ctypes.get_errno())}")
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    if target_uid is not None and euid == 0:
        try:
            os.setgroups([])
            os.setresgid(target_uid, target_uid, target_uid)
            os.setresuid(target_uid, target_uid, target_uid)
        except OSError as exc:
            notes.append(f"could not switch to uid {target_uid}: {exc.strerror}")
    if not _clear_capability_sets(libc):
        notes.append(f"capset failed: {os.strerror(ctypes.get_errno())}")
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        notes.append(f"no_new_privs not set: {os.strerror(ctypes.get_errno())}")
    return notes


def _drop_bounding_set(libc: ctypes.CDLL, notes: list[str]) -> None:
    for cap in range(last_capability() + 1):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            notes.append(f"bounding set not emptied: {os.strerror(ctypes.get_errno())}")
            return


def _clear_capability_sets(libc: ctypes.CDLL) -> bool:
    header = _CapHeader(_CAP_V3, 0)
    data = (_CapData * 2)()  # all zero: effective, permitted and inheritable, both 32-bit halves
    return libc.capset(ctypes.byref(header), data) == 0


@functools.lru_cache(maxsize=1)
def last_capability() -> int:
    """The highest capability number this kernel knows (read once; the fork server warms it)."""
    try:
        with open("/proc/sys/kernel/cap_last_cap", "rb") as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return 63


def foreign_proc() -> str:
    """Why ``/proc`` cannot be trusted to describe this process's children ('' when it can).

    The fork server reads each child's credentials from ``/proc/<pid>/status`` and finds what a run left
    behind in ``/proc/<pid>/task/*/children``. In a pid namespace whose ``/proc`` was not mounted anew
    (``unshare --pid --fork`` without ``--mount-proc``), those paths name *other* processes, of the outer
    namespace: a root grader believed a host process's credentials (and refused as if it could not leave
    uid 0), a non-root one failed every test, and the descendants it killed could be anyone's."""
    try:
        shown = os.readlink("/proc/self")
    except OSError as exc:
        return f"/proc/self cannot be read ({exc.strerror}): is /proc mounted?"
    if shown != str(os.getpid()):
        return (f"/proc belongs to another pid namespace (it shows this process as pid {shown}, not "
                f"{os.getpid()}): mount a /proc for this one, e.g. unshare --pid --fork --mount-proc")
    return ""


def read_status(pid: int, opened: int | None = None) -> dict | None:
    """Credentials of process ``pid`` as the kernel reports them, or None if it is gone.

    ``opened``: its ``/proc/<pid>/status`` opened earlier (read from the start; left open), for a process
    that ``/proc`` may hide by now (``hidepid``). ``capabilities`` maps each set to its hex mask;
    ``seccomp`` is the mode (2 = filter).
    """
    try:
        if opened is None:
            with open(f"/proc/{pid}/status", "rb") as handle:
                text = handle.read().decode("ascii", "replace")
        else:
            text = _read_from_start(opened).decode("ascii", "replace")
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    try:
        return {
            "uid": int(fields["Uid"].split()[1]),  # effective
            "gid": int(fields["Gid"].split()[1]),
            "groups": [int(g) for g in fields.get("Groups", "").split()],
            "capabilities": {name: fields[key].strip() for key, name in CAPABILITY_FIELDS.items()},
            "no_new_privs": fields.get("NoNewPrivs", "0").strip() == "1",
            "seccomp": int(fields.get("Seccomp", "0").strip() or 0),
        }
    except (KeyError, ValueError, IndexError):
        return None


def _read_from_start(fd: int) -> bytes:
    chunks, offset = [], 0
    while chunk := os.pread(fd, 1 << 16, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def holds_privilege(status: dict) -> bool:
    """True if any set the process can act with (not the bounding set: a ceiling, not a power) is non-empty."""
    caps = status["capabilities"]
    return any(int(caps[name], 16) for name in ("effective", "permitted", "inheritable", "ambient"))
