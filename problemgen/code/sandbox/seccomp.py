"""A seccomp-BPF system-call filter for the sandboxed child, assembled by hand and loaded via ctypes.

The policy itself is :data:`POLICY`, shown as one table in the package docstring
(:mod:`problemgen.code.sandbox`); a test keeps the two identical.

Why a deny-list and not an allow-list: CPython, numpy and OpenBLAS use a long and version-dependent
list of system calls (futex, mmap, sched_*, ...). Listing them all would break honest code on the
next glibc; listing what a grader must never allow is short and stable. The list does not rely on
the child's uid or capabilities (it holds none, see :mod:`privileges`) nor on Landlock's signal
scoping: every kernel with seccomp gets the same rules.

Denied calls fail with EPERM (ENOSYS where a fallback exists) instead of killing the process, so a
student sees a Python ``PermissionError`` naming the operation rather than a silent death.
Only x86-64 is supported; elsewhere ``available()`` is False and the level stays below "seccomp".
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
import struct

from problemgen.code.sandbox.libc import libc as c_library

AUDIT_ARCH_X86_64 = 0xC000003E
_X32_SYSCALL_BIT = 0x40000000

# BPF opcodes (linux/filter.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JSET_K = 0x45
_JGE_K = 0x35
_RET_K = 0x06

RET_KILL_PROCESS = 0x80000000
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
DENY = RET_ERRNO | errno.EPERM
NOSYS = RET_ERRNO | errno.ENOSYS

# Offsets in struct seccomp_data (little-endian: low word of args[i] at 16 + 8 i).
_NR, _ARCH = 0, 4


def _arg_low(i: int) -> int:
    return 16 + 8 * i


# x86-64 system call numbers (asm/unistd_64.h).
NR = {
    "open": 2, "socket": 41, "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "kill": 62,
    "truncate": 76, "rename": 82, "mkdir": 83, "rmdir": 84, "creat": 85, "link": 86, "unlink": 87,
    "symlink": 88, "chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93, "lchown": 94,
    "ptrace": 101, "syslog": 103, "rt_sigqueueinfo": 129, "mknod": 133, "personality": 135,
    "vhangup": 153, "pivot_root": 155, "chroot": 161, "acct": 163, "settimeofday": 164,
    "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169,
    "sethostname": 170, "setdomainname": 171, "iopl": 172, "ioperm": 173, "init_module": 175,
    "delete_module": 176, "quotactl": 179, "tkill": 200, "lookup_dcookie": 212,
    "clock_settime": 227, "tgkill": 234, "kexec_load": 246, "add_key": 248, "request_key": 249,
    "keyctl": 250, "openat": 257, "mkdirat": 258, "mknodat": 259, "fchownat": 260,
    "unlinkat": 263, "renameat": 264, "linkat": 265, "symlinkat": 266, "fchmodat": 268,
    "unshare": 272, "rt_tgsigqueueinfo": 297, "perf_event_open": 298, "name_to_handle_at": 303,
    "open_by_handle_at": 304, "setns": 308, "process_vm_readv": 310, "process_vm_writev": 311,
    "kcmp": 312, "finit_module": 313, "renameat2": 316, "kexec_file_load": 320, "bpf": 321,
    "execveat": 322, "userfaultfd": 323, "pidfd_send_signal": 424, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsmount": 432, "fspick": 433, "pidfd_open": 434, "clone3": 435,
    "openat2": 437, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442,
    "fchmodat2": 452, "ioctl": 16, "shmget": 29, "shmat": 30, "shmctl": 31, "semget": 64, "semop": 65,
    "semctl": 66, "shmdt": 67, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "fcntl": 72,
    "utime": 132, "uselib": 134, "setpriority": 141, "sched_setparam": 142, "sched_setscheduler": 144,
    "adjtimex": 159, "nfsservctl": 180, "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190,
    "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "sched_setaffinity": 203,
    "semtimedop": 220, "utimes": 235, "mq_open": 240, "mq_unlink": 241, "ioprio_set": 251,
    "migrate_pages": 256, "futimesat": 261, "move_pages": 279, "utimensat": 280, "fanotify_init": 300,
    "prlimit64": 302, "clock_adjtime": 305, "sched_setattr": 314, "fsconfig": 431, "quotactl_fd": 443,
    "process_mrelease": 448, "setxattrat": 463, "removexattrat": 466, "open_tree_attr": 467,
    "file_setattr": 469,
}  # fmt: skip

# fcntl commands that aim signals at other processes (F_SETOWN, F_SETSIG, F_SETOWN_EX) or hold a
# lease that stalls other processes' opens (F_SETLEASE); ioctls that do the same (FIOSETOWN, SIOCSPGRP)
# or change inode flags through a read-only descriptor (FS_IOC_SETFLAGS, its 32-bit twin, FSSETXATTR).
FCNTL_DENIED = (8, 10, 15, 1024)
IOCTL_DENIED = (0x8901, 0x8902, 0x40086602, 0x40046602, 0x401C5820)

# (what it protects, rule, system calls). Rules: "EPERM" / "ENOSYS" always; "self" = allowed only when
# the first argument (a pid) is the child's own; "self or 0" likewise, 0 meaning the caller;
# "threads only"; "read-only" = no write/create/truncate/append flag; "commands" = refused commands above.
POLICY: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("new processes", "EPERM", ("fork", "vfork")),
    ("new processes", "threads only", ("clone",)),
    ("new processes", "ENOSYS", ("clone3",)),
    ("program execution", "EPERM", ("execve", "execveat", "uselib")),
    ("network", "EPERM", ("socket",)),
    ("writing files", "read-only", ("open", "openat")),
    ("writing files", "ENOSYS", ("openat2",)),
    ("writing files", "EPERM", ("creat", "truncate", "rename", "renameat", "renameat2", "mkdir", "mkdirat",
                                "rmdir", "link", "linkat", "symlink", "symlinkat", "unlink", "unlinkat", "mknod",
                                "mknodat", "name_to_handle_at", "open_by_handle_at")),
    ("file metadata: mode, owner", "EPERM", ("chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown",
                                             "lchown", "fchownat")),
    ("file metadata: xattrs, ACLs", "EPERM", ("setxattr", "lsetxattr", "fsetxattr", "setxattrat", "removexattr",
                                              "lremovexattr", "fremovexattr", "removexattrat", "file_setattr")),
    ("file metadata: timestamps", "EPERM", ("utime", "utimes", "futimesat", "utimensat")),
    ("file metadata, signals, leases", "commands", ("fcntl", "ioctl")),
    ("other processes: limits", "self or 0", ("prlimit64",)),
    ("other processes: signals", "self", ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")),
    ("other processes: signals", "EPERM", ("tkill", "pidfd_send_signal", "pidfd_open", "pidfd_getfd")),
    ("other processes: tracing, memory", "EPERM", ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
                                                   "process_madvise", "process_mrelease", "migrate_pages",
                                                   "move_pages")),
    ("other processes: scheduling", "EPERM", ("setpriority", "sched_setparam", "sched_setscheduler",
                                              "sched_setattr", "ioprio_set")),
    ("other processes: scheduling", "self or 0", ("sched_setaffinity",)),
    ("shared IPC objects", "EPERM", ("shmget", "shmat", "shmctl", "shmdt", "semget", "semop", "semctl",
                                     "semtimedop", "msgget", "msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink")),
    ("capabilities: clock", "EPERM", ("settimeofday", "clock_settime", "clock_adjtime", "adjtimex")),
    ("capabilities: mounts, namespaces", "EPERM", ("mount", "umount2", "pivot_root", "chroot", "open_tree",
                                                      "open_tree_attr", "move_mount", "fsopen", "fsconfig",
                                                      "fsmount", "fspick", "mount_setattr", "unshare", "setns",
                                                      "swapon", "swapoff", "quotactl", "quotactl_fd")),
    ("capabilities: system", "EPERM", ("reboot", "kexec_load", "kexec_file_load", "init_module",
                                          "finit_module", "delete_module", "sethostname", "setdomainname",
                                          "iopl", "ioperm", "acct", "vhangup", "syslog", "nfsservctl",
                                          "lookup_dcookie", "personality")),
    ("kernel attack surface", "EPERM", ("bpf", "perf_event_open", "fanotify_init", "userfaultfd", "keyctl",
                                        "add_key", "request_key", "io_uring_setup", "io_uring_enter",
                                        "io_uring_register")),
)  # fmt: skip

# open(2) flags that create, write or truncate: O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND.
WRITE_FLAGS = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000
CLONE_THREAD = 0x00010000
# Namespace flags are refused even on threads.
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080  # fmt: skip


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def _ret(value: int) -> list[bytes]:
    return [_insn(_RET_K, 0, 0, value)]


def _deny_if_flags(arg: int, mask: int) -> list[bytes]:
    """Block for a syscall allowed unless ``args[arg] & mask``."""
    return [
        _insn(_LD_W_ABS, 0, 0, _arg_low(arg)),
        _insn(_JSET_K, 0, 1, mask),
        *_ret(DENY),
        *_ret(RET_ALLOW),
    ]


def _allow_if_in(arg: int, values: tuple[int, ...]) -> list[bytes]:
    """Block for a syscall allowed only when ``args[arg]`` (an int, so its low word) is one of ``values``."""
    block = [_insn(_LD_W_ABS, 0, 0, _arg_low(arg))]
    for i, value in enumerate(values):
        block.append(_insn(_JEQ_K, len(values) - i, 0, value & 0xFFFFFFFF))  # -> the ALLOW below
    return block + _ret(DENY) + _ret(RET_ALLOW)


def _deny_if_in(arg: int, values: tuple[int, ...]) -> list[bytes]:
    """Block for a syscall refused when ``args[arg]`` (low word) is one of ``values``."""
    block = [_insn(_LD_W_ABS, 0, 0, _arg_low(arg))]
    for i, value in enumerate(values):
        block.append(_insn(_JEQ_K, len(values) - i, 0, value & 0xFFFFFFFF))  # -> the DENY below
    return block + _ret(RET_ALLOW) + _ret(DENY)


def _clone_block() -> list[bytes]:
    """clone(flags, ...): threads only, and no namespace tricks."""
    return [
        _insn(_LD_W_ABS, 0, 0, _arg_low(0)),
        _insn(_JSET_K, 2, 0, CLONE_NAMESPACES),  # namespaces -> deny
        _insn(_JSET_K, 0, 1, CLONE_THREAD),  # a thread -> allow
        *_ret(RET_ALLOW),
        *_ret(DENY),
    ]


def policy_table(width: int = 100) -> str:
    """POLICY as the text table of the package docstring (a test checks they are the same)."""
    import textwrap

    lines = [f"{'protects':<34} {'rule':<12} system calls", f"{'-' * 34} {'-' * 12} {'-' * (width - 48)}"]
    for what, rule, names in POLICY:
        wrapped = textwrap.wrap(" ".join(names), width - 48) or [""]
        lines.append(f"{what:<34} {rule:<12} {wrapped[0]}")
        lines += [" " * 48 + more for more in wrapped[1:]]
    return "\n".join(lines)


def _block(name: str, rule: str, own_pid: int) -> list[bytes]:
    if rule == "EPERM":
        return _ret(DENY)
    if rule == "ENOSYS":
        return _ret(NOSYS)
    if rule == "threads only":
        return _clone_block()
    if rule == "read-only":
        return _deny_if_flags(1 if name == "open" else 2, WRITE_FLAGS)
    if rule == "self":
        return _allow_if_in(0, (own_pid,))
    if rule == "self or 0":
        return _allow_if_in(0, (0, own_pid))
    if rule == "commands":
        return _deny_if_in(1, FCNTL_DENIED if name == "fcntl" else IOCTL_DENIED)
    raise ValueError(f"unknown seccomp rule {rule!r}")


def build_filter(own_pid: int) -> bytes:
    """Assemble the program; ``own_pid`` is the only process the child may signal or re-limit."""
    rules = [(name, _block(name, rule, own_pid)) for _, rule, names in POLICY for name in names]
    program = [
        _insn(_LD_W_ABS, 0, 0, _ARCH),
        _insn(_JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        *_ret(RET_KILL_PROCESS),
        _insn(_LD_W_ABS, 0, 0, _NR),
        _insn(_JGE_K, 0, 1, _X32_SYSCALL_BIT),  # x32 ABI numbers alias the same calls
        *_ret(DENY),
    ]
    for name, block in rules:
        # Every block ends in a return, so the accumulator still holds the syscall number here.
        program.append(_insn(_JEQ_K, 0, len(block), NR[name]))
        program.extend(block)
    program.extend(_ret(RET_ALLOW))
    return b"".join(program)


def available() -> bool:
    return platform.system() == "Linux" and platform.machine() in ("x86_64", "AMD64")


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_PR_SET_NO_NEW_PRIVS = 38
_NR_SECCOMP = 317
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_TSYNC = 1


_PID_SLOT = 0x7FFFFFFE  # above any pid_max: marks the instructions that compare with the child's pid


@functools.lru_cache(maxsize=1)
def _template() -> tuple[bytes, tuple[int, ...]]:
    """The program built once (the fork server warms this), and the byte offsets of its pid constants."""
    program = build_filter(_PID_SLOT)
    slots = tuple(i + 4 for i in range(0, len(program), 8) if struct.unpack_from("<I", program, i + 4)[0] == _PID_SLOT)
    return program, slots


def filter_for(own_pid: int) -> bytes:
    """``build_filter(own_pid)``, made by patching the cached template (a child has no time to spare)."""
    program, slots = _template()
    patched = bytearray(program)
    for offset in slots:
        struct.pack_into("<I", patched, offset, own_pid & 0xFFFFFFFF)
    return bytes(patched)


def install(own_pid: int | None = None) -> None:
    """Load the filter into the calling process (irreversible). Raises OSError on failure."""
    if not available():
        raise OSError(errno.ENOSYS, "seccomp filter is only built for x86-64 Linux")
    libc = c_library()
    program = filter_for(os.getpid() if own_pid is None else own_pid)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    flags = _SECCOMP_FILTER_FLAG_TSYNC
    if libc.syscall(_NR_SECCOMP, _SECCOMP_SET_MODE_FILTER, flags, ctypes.byref(fprog)) != 0:
        raise OSError(ctypes.get_errno(), "seccomp(SECCOMP_SET_MODE_FILTER) failed")
