"""Isolation levels, and the confinement a child applies to itself before student code loads.

Levels, weakest first (each includes the ones before it):

* ``process``  - a separate, freshly forked process: scrubbed environment, private working directory
  holding only the submission, stdin on /dev/null, output captured, wall-clock kill of its group,
  and no capability in any set (see :mod:`problemgen.code.sandbox.privileges`). A child the fork
  server finds still holding a capability is ``process`` whatever else it applied.
* ``rlimits``  - plus resource limits: CPU seconds, address space, file size 0, open files, no core
  dumps, process count (when not root).
* ``seccomp``  - plus the system-call filter of :mod:`problemgen.code.sandbox.seccomp`.
* ``seccomp+landlock`` - plus the read-only file-system allowlist of :mod:`problemgen.code.sandbox.landlock`.

The child reports the layers it applied in its first frame, written before any student code runs;
that is the only message from a child the grader believes, and only after :func:`verified_level`
has checked it against what the fork server read from ``/proc/<pid>/status`` (uid, capability sets,
no_new_privs, seccomp mode) while the child waited, before it imported anything.
"""

from __future__ import annotations

import importlib.util
import os
import resource
import signal
import stat
import sys
import sysconfig
import time
from dataclasses import dataclass, field

from problemgen.code.sandbox import landlock, privileges, runtimeview, seccomp
from problemgen.code.sandbox.libc import libc as c_library

LEVELS = ("process", "rlimits", "seccomp", "seccomp+landlock")
NOBODY = privileges.NOBODY
# Packages a submission may import besides the standard library.
ALLOWED_PACKAGES = ("numpy", "sympy", "mpmath")


ROOT_OPT_IN = ("privileges", "nobody")
"""Layers whose disabling (tests only; no command offers it) is an explicit request to keep uid 0."""


def refuses_root(disable: tuple[str, ...] | list[str]) -> bool:
    """True unless the caller disabled a credential layer on purpose: student code never runs as uid 0.

    Why a refusal rather than a lower level: uid 0 without capabilities still owns every root-owned file,
    so where Landlock or seccomp is missing (an older kernel, a container's own filter) it could read the
    grader's secret and keys, or replace the grader's files. A root grader reaches uid 0 in its children
    only when ``nobody`` cannot be used: the runtime or ``$TMPDIR`` under a private directory and no
    mount namespace allowed (Docker's default root has no CAP_SYS_ADMIN), or a user namespace that does
    not map uid 65534."""
    return not any(layer in disable for layer in ROOT_OPT_IN)


def root_refusal(notes: list[str] | tuple[str, ...]) -> str:
    """The one-line reason a root grader ran nothing, with what it could not arrange and how to fix it."""
    why = [n for n in notes if not n.startswith(("RLIMIT_NPROC", "runs as uid 0", "landlock", "seccomp"))]
    because = f" ({'; '.join(sorted(why))})" if why else ""
    if any(n.startswith("could not switch") for n in why):  # a user namespace without uid 65534
        fix = "map uid 65534 into the container's user namespace"
    else:
        fix = ("let uid 65534 ('nobody') read the Python runtime and $TMPDIR (a Python outside /root), or allow "
               "the grader a private mount namespace (CAP_SYS_ADMIN)")
    return (f"the sandbox would have run student code as uid 0 (root){because}; nothing was run. Run the grader "
            f"as a non-root user, or {fix}")


def rank(level: str) -> int:
    """Position of ``level`` in LEVELS; unknown names rank below everything."""
    return LEVELS.index(level) if level in LEVELS else -1


def verified_level(claimed: str, status: dict | None) -> str:
    """The child's claimed level, lowered to what its kernel-reported credentials support.

    No status (the child died before it could be read) or any capability left: ``process``.
    A claimed seccomp filter the kernel does not show: at most ``rlimits``.
    """
    if status is None or privileges.holds_privilege(status):
        return "process"
    if rank(claimed) >= rank("seccomp") and status.get("seccomp") != 2:
        return "rlimits"
    return claimed


@dataclass(frozen=True)
class ChildLimits:
    """What the child applies to itself; sizes in bytes, times in seconds."""

    cpu_seconds: int = 30
    memory_bytes: int = 1024 * 2**20  # on top of what the pre-loaded interpreter already maps
    open_files: int = 64
    extra_tasks: int = 64  # threads + processes beyond those the user already runs (non-root only)


@dataclass(frozen=True)
class ReadAllowlist:
    """Paths the child may read (and paths it may only list), computed once by the fork server."""

    read: tuple[str, ...]
    list_only: tuple[str, ...]
    drop_uid: bool  # root: switch to 'nobody' when everything needed is world-readable
    notes: tuple[str, ...] = ()  # what the fork server could not arrange (reported with every run)

    def fixed(self) -> tuple[list[str], list[str]]:
        """(read, list-only) paths that mean the same in every child: the fork server opens them once."""
        return [p for p in self.read if p not in PER_CHILD_PATHS], list(self.list_only)

    def per_child(self, directory: str) -> list[str]:
        """Readable paths each child resolves itself: its submission and its own ``/proc/self``."""
        return [directory, *(p for p in self.read if p in PER_CHILD_PATHS)]


# Paths whose meaning depends on the process that opens them (``/proc/self`` is the opener's own).
PER_CHILD_PATHS = ("/proc/self",)


@dataclass
class Ruleset:
    """A child's Landlock ruleset, built but not yet enforced, or why it could not be built."""

    fd: int | None = None
    abi: int = 0
    error: str = ""

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def prepared_ruleset(fixed: landlock.FixedRules) -> Ruleset:
    """The fork server's part: a new ruleset holding the fixed rules, made before the child is forked."""
    try:
        fd, abi = fixed.new_ruleset()
    except OSError as exc:
        return Ruleset(error=str(exc))
    return Ruleset(fd, abi)


def child_ruleset(allow: ReadAllowlist, submission_dir: str, prepared: Ruleset | None,
                  disable: tuple[str, ...] = ()) -> Ruleset:
    """The child's part: its own paths added to the ruleset the fork server prepared (None: the kernel
    has no Landlock), enforced later by :func:`confine`."""
    if "landlock" in disable:
        if prepared is not None:
            prepared.close()
        return Ruleset()
    if prepared is None:
        return Ruleset(error="Landlock is not available in this kernel")
    if prepared.fd is None:
        return prepared
    try:
        landlock.add_paths(prepared.fd, allow.per_child(submission_dir))
    except OSError as exc:
        prepared.close()
        return Ruleset(error=str(exc))
    return prepared


@dataclass
class Confinement:
    """What actually got applied; ``level`` is derived from the steps that succeeded."""

    rlimits: bool = False
    seccomp: bool = False
    landlock_abi: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def level(self) -> str:
        if not self.rlimits:
            return "process"
        if not self.seccomp:
            return "rlimits"
        return "seccomp+landlock" if self.landlock_abi else "seccomp"

    def as_dict(self) -> dict:
        return {
            "level": self.level,
            "rlimits": self.rlimits,
            "seccomp": self.seccomp,
            "landlock_abi": self.landlock_abi,
            "notes": sorted(self.notes),
        }


# --------------------------------------------------------------------------- allowlist (fork server)


def _package_dir(name: str) -> str | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.realpath(list(spec.submodule_search_locations)[0])


def build_allowlist() -> ReadAllowlist:
    """Directories the child needs: the standard library (minus its site-packages), allowed packages.

    Landlock grants rights on whole subtrees, so the standard library is granted entry by entry,
    skipping ``site-packages``: a grader installed there must stay unreadable. The directories that
    hold packages are list-only, so the import system can still find numpy in them.
    """
    read: list[str] = []
    listing: set[str] = set()
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    listing.add(stdlib)
    for entry in sorted(os.listdir(stdlib)):
        if entry not in ("site-packages", "dist-packages"):
            read.append(os.path.join(stdlib, entry))
    for name in ALLOWED_PACKAGES:
        directory = _package_dir(name)
        if directory:
            read.append(directory)
            listing.add(os.path.dirname(directory))
            libs = directory + ".libs"  # auditwheel puts bundled shared libraries here
            if os.path.isdir(libs):
                read.append(libs)
    # /proc/self resolves to the child's own /proc/<pid> when the child builds its ruleset.
    read += [p for p in ("/dev/null", "/dev/urandom", "/sys/devices/system/cpu", "/proc/self") if os.path.exists(p)]
    read += [p for p in _system_library_dirs() if os.path.isdir(p)]
    drop = os.geteuid() == 0 and all(_world_readable(p) for p in read + sorted(listing))
    return ReadAllowlist(tuple(read), tuple(sorted(listing)), drop)


def server_allowlist() -> ReadAllowlist:
    """The allowlist as the fork server (root or not) prepares it, once, before forking any child.

    As root with a runtime 'nobody' cannot reach, the fork server first exposes the runtime in a
    mount namespace of its own (:mod:`runtimeview`); whatever it could not arrange becomes a note.
    """
    allow = build_allowlist()
    if os.geteuid() != 0 or allow.drop_uid:
        return allow
    notes = runtimeview.expose([*allow.list_only, *allow.read])
    again = build_allowlist()
    return ReadAllowlist(again.read, again.list_only, again.drop_uid, tuple(notes))


def _system_library_dirs() -> list[str]:
    """Shared-library directories (an extension imported late may need one); no Python packages."""
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    dirs = ["/lib64", "/usr/lib64"]
    if multiarch:
        dirs += [f"/lib/{multiarch}", f"/usr/lib/{multiarch}"]
    return dirs


def _world_readable(path: str) -> bool:
    """True if 'nobody' could reach and read ``path`` (every ancestor searchable by others)."""
    path = os.path.realpath(path)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return True  # missing paths are skipped later anyway
    if not mode & stat.S_IROTH:
        return False
    parent = os.path.dirname(path)
    while parent and parent != path:
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            return False
        path, parent = parent, os.path.dirname(parent)
    return True


# --------------------------------------------------------------------------- confinement (child)


def confine(allow: ReadAllowlist, submission_dir: str, limits: ChildLimits, disable: tuple[str, ...],
            ruleset: Ruleset) -> Confinement:
    """Apply every available layer to the calling (child) process; irreversible.

    Order matters: credentials first (they reset the parent-death signal), then resource limits,
    then Landlock (it needs its own system calls), then seccomp last. ``ruleset`` is the Landlock
    ruleset the child completed beforehand (:func:`child_ruleset`).
    """
    done = Confinement(notes=list(allow.notes))
    libc = c_library()
    if "privileges" in disable:
        done.notes.append("privileges kept by configuration")
    else:
        switch = allow.drop_uid and "nobody" not in disable
        if switch and runtimeview.blocked_ancestor(os.path.join(submission_dir, "x")):
            switch = False  # e.g. $TMPDIR under /root: 'nobody' could not even import the submission
            done.notes.append("the submission directory is not reachable by 'nobody' (check $TMPDIR)")
        done.notes += privileges.drop(NOBODY if switch else None)
    if os.geteuid() == 0:
        done.notes.append("runs as uid 0: the runtime is not readable by 'nobody'")
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: die with the fork server
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: no ptrace or /proc/<pid>/mem by peers
    _apply_rlimits(limits, done)
    if "landlock" in disable:
        done.notes.append("landlock disabled by configuration")
    else:
        try:
            if ruleset.fd is None:
                raise OSError(ruleset.error)
            landlock.enforce(ruleset.fd)
            done.landlock_abi = ruleset.abi
        except OSError as exc:
            done.notes.append(f"landlock unavailable: {exc}")
    if "seccomp" in disable:
        done.notes.append("seccomp disabled by configuration")
    else:
        try:
            seccomp.install(os.getpid())
            done.seccomp = True
        except OSError as exc:
            done.notes.append(f"seccomp unavailable: {exc}")
    return done


def _apply_rlimits(limits: ChildLimits, done: Confinement) -> None:
    try:
        mapped = _mapped_bytes()
        _set(resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1)
        _set(resource.RLIMIT_AS, mapped + limits.memory_bytes)
        _set(resource.RLIMIT_FSIZE, 0)
        _set(resource.RLIMIT_NOFILE, limits.open_files)
        _set(resource.RLIMIT_CORE, 0)
        if os.getuid() != 0:
            _set(resource.RLIMIT_NPROC, tasks_of_uid(os.getuid()) + limits.extra_tasks)
        else:
            done.notes.append("RLIMIT_NPROC not enforced for root")
        done.rlimits = True
    except (OSError, ValueError) as exc:
        done.notes.append(f"rlimits failed: {exc}")


def _set(which: int, soft: int, hard: int | None = None) -> None:
    resource.setrlimit(which, (soft, soft if hard is None else hard))


def _mapped_bytes() -> int:
    with open("/proc/self/statm", "rb") as handle:
        pages = int(handle.read().split()[0])
    return pages * os.sysconf("SC_PAGE_SIZE")


TASK_COUNT_SECONDS = 5.0
_task_counts: dict[int, tuple[float, int]] = {}


def tasks_of_uid(uid: int) -> int:
    """Threads owned by ``uid`` (RLIMIT_NPROC counts them all, system-wide), counted at most every 5 s.

    A full scan of /proc costs milliseconds per child; the fork server counts before it forks and
    every child inherits the count. The margin (``extra_tasks``) absorbs what changed since.
    """
    counted_at, count = _task_counts.get(uid, (-TASK_COUNT_SECONDS, 0))
    if time.monotonic() - counted_at >= TASK_COUNT_SECONDS:
        count = _scan_tasks_of_uid(uid)
        _task_counts[uid] = (time.monotonic(), count)
    return count


def _scan_tasks_of_uid(uid: int) -> int:
    count = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid == uid:
                count += len(os.listdir(f"/proc/{name}/task"))
        except OSError:
            continue
    return count


def platform_supported() -> bool:
    return sys.platform.startswith("linux")
