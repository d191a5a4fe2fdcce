"""The fork server: a clean interpreter that has imported numpy and forks one child per run.

Why a separate process and not ``os.fork()`` in the grader: a child forked from the grader would
inherit its memory, expected values included, and ``gc.get_objects()`` would find them. This process
is started with isolated interpreter flags and a scrubbed environment, never receives expected
values (only the test inputs, which every child is called with anyway), and never runs student
code itself. Forking it costs a few milliseconds instead of re-importing numpy.

Protocol (SOCK_SEQPACKET, JSON messages, one run at a time):
  grader -> server  {"op": "inputs", "bytes": n} with fd [memfd]: the wire-encoded calls of the class,
                    decoded once here and inherited by every child, which runs those listed in its
                    config's "cases"
  server -> grader  {"event": "inputs", "count": k}
  grader -> server  {"op": "run", "config": {...}} with fds [results_w, stdout_w, stderr_w]
  server -> grader  {"event": "started", "pid": n, "credentials": {...} | null}
                    (sent once the child is confined and its /proc/<pid>/status has been read)
  server -> grader  {"event": "tampered", "what": "..."}   instead of "started": our own limits or
                    scheduling changed since start-up; the server exits and the grader starts a new one
  grader -> server  {"op": "kill"}            (optional, at any time during the run)
  server -> grader  {"event": "exited", "exit_code"|"signal": n, "cpu": s, "maxrss_kb": k, "escapees": e}
The server is a child subreaper: anything the run left behind is reparented here and killed
before "exited" is sent, so "exited" means every process of that run is dead.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import socket
import sys

HANDSHAKE_SECONDS = 10.0  # confinement is our own code: far longer than it ever takes

MAX_MESSAGE = 1 << 16
PRELOAD = (
    "numpy", "numpy.linalg", "numpy.fft", "numpy.random", "math", "cmath", "functools", "itertools",
    "collections", "dataclasses", "typing", "abc", "enum", "operator", "numbers", "fractions",
    "decimal", "statistics", "random", "string", "re", "copy", "traceback", "linecache", "tokenize",
    "warnings", "json", "importlib.util", "sysconfig", "fcntl",
)  # fmt: skip


def main(fd: int) -> None:
    sock = socket.socket(fileno=fd)
    for name in PRELOAD:
        __import__(name)
    _warm_blas()
    # After the preloads, so that they are not imported through these modules first:
    from problemgen.code.sandbox import child, isolation, landlock, privileges, seccomp, wire
    from problemgen.code.sandbox import libc as c_library

    allow = isolation.server_allowlist()
    fixed = landlock.FixedRules(*allow.fixed()) if landlock.abi_version() >= 1 else None
    prepared = isolation.prepared_ruleset(fixed) if fixed else None  # the next child's, made while idle
    seccomp._template()  # built once here, patched with each child's pid
    child.runtime_paths()  # likewise: what each child keeps of sys.path
    c_library.warm()  # the C library and the capability count, loaded once and inherited by every child
    privileges.last_capability()
    c_library.libc().prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    baseline = own_state()
    _send(sock, {"event": "ready", "pid": os.getpid(), "drop_uid": allow.drop_uid, "notes": list(allow.notes)})
    held: list = []  # the calls of the class, decoded once; children inherit them
    while True:
        message, fds = _receive(sock)
        if message is None:
            break
        op = message.get("op")
        refused = _changes(baseline, own_state()) or _unusable(message, fds, len(held))
        if refused:  # a child reached us after all (or the kernel dropped descriptors): never serve on
            for fd in fds:
                os.close(fd)
            _send(sock, {"event": "tampered", "what": refused})
            break
        if op == "inputs":
            held = _read_inputs(fds[0], wire)
            _send(sock, {"event": "inputs", "count": len(held)})
        elif op == "run":
            if os.geteuid() != 0 or allow.drop_uid:  # the count RLIMIT_NPROC starts from, inherited by the child
                isolation.tasks_of_uid(isolation.NOBODY if allow.drop_uid else os.getuid())
            cases = [held[i] for i in message["config"]["cases"]]
            _serve_run(sock, message["config"], fds, allow, prepared, cases, child, privileges)
            prepared = isolation.prepared_ruleset(fixed) if fixed else None
        else:
            for extra in fds:
                os.close(extra)
    _kill_descendants()


def _warm_blas() -> None:
    """Run BLAS/einsum once so their lazy initialisation is inherited instead of redone per child."""
    import numpy as np

    a = np.ones((64, 64))
    (a @ a).sum()
    np.einsum("ij,jk->ik", a, a)
    np.linalg.norm(a)


def own_state() -> dict[str, object]:
    """What a process of the same uid could change about us: resource limits and scheduling."""
    state: dict[str, object] = {
        name: resource.getrlimit(getattr(resource, name)) for name in sorted(dir(resource)) if name.startswith("RLIMIT_")
    }
    state["nice"] = os.getpriority(os.PRIO_PROCESS, 0)
    state["scheduler"] = os.sched_getscheduler(0)
    state["affinity"] = sorted(os.sched_getaffinity(0))
    return state


DESCRIPTORS = {"inputs": 1, "run": 3}  # what each request comes with


def _unusable(message: dict, fds: list[int], held: int) -> str:
    """Why a request cannot be served ('' when it can): descriptors the kernel did not deliver (a
    lowered limit), or a run naming test inputs this server was never given."""
    op = message.get("op")
    if op in DESCRIPTORS and len(fds) != DESCRIPTORS[op]:
        return f"{len(fds)} of the {op} request's {DESCRIPTORS[op]} descriptors arrived"
    if op == "run":
        cases = message.get("config", {}).get("cases")
        if not isinstance(cases, list) or not all(isinstance(i, int) and 0 <= i < held for i in cases):
            return "the run names test inputs this server does not hold"
    return ""


def _changes(baseline: dict[str, object], now: dict[str, object]) -> str:
    return ", ".join(f"{key} {baseline[key]} -> {now.get(key)}" for key in baseline if now.get(key) != baseline[key])


def _read_inputs(fd: int, wire) -> list:
    """The calls in the grader's memfd, decoded (trusted bytes: the grader wrote them)."""
    try:
        size = os.fstat(fd).st_size
        data = os.pread(fd, size, 0)
    finally:
        os.close(fd)
    return wire.decode(data, wire.WireLimits(max_bytes=1 << 30, max_items=1 << 20))


def _serve_run(sock: socket.socket, config: dict, fds: list[int], allow, prepared, cases: list, child,
               privileges) -> None:
    traces = child.grader_traces()
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        sock.close()
        for fd in (ready_r, go_w):
            os.close(fd)
        child.main(config, [*fds, ready_w, go_r], allow, cases, prepared, traces)  # never returns
        os._exit(70)
    for fd in (*fds, ready_w, go_r):
        os.close(fd)
    if prepared is not None:
        prepared.close()  # the child's ruleset from now on: never touched here again
    status = _open_status(pid)
    try:
        try:
            os.write(go_w, b"o")  # the child confines itself only now
        except OSError:
            pass  # it died already: it never says "confined", and _verify_child finds that out
        credentials = _verify_child(pid, ready_r, go_w, privileges, status)
    finally:
        if status is not None:
            os.close(status)
    _send(sock, {"event": "started", "pid": pid, "credentials": credentials})
    if credentials is not None:
        try:
            os.write(go_w, b"g")
        except OSError:
            pass
    os.close(go_w)
    killed = _wait_or_kill(sock, pid)
    _, status, usage = os.wait4(pid, 0)
    escapees = _kill_descendants()
    report = {"event": "exited", "cpu": usage.ru_utime + usage.ru_stime, "maxrss_kb": usage.ru_maxrss,
              "escapees": escapees, "killed": killed}
    if os.WIFSIGNALED(status):
        report["signal"] = os.WTERMSIG(status)
    else:
        report["exit_code"] = os.waitstatus_to_exitcode(status)
    _send(sock, report)


def _open_status(pid: int) -> int | None:
    """``/proc/<pid>/status`` of a child that has not yet confined itself, opened for :func:`_verify_child`.

    Why before: confining makes the child non-dumpable (and, as root, another uid), and where ``/proc`` is
    mounted with ``hidepid=1`` or ``2`` (hardened course servers) the kernel then hides its entry from a
    non-root fork server: the status could not be read, so every child was killed as unverified and every
    test of every submission failed with "the sandbox could not start the submission". A file opened while
    the child was visible still shows its current state when read later."""
    try:
        return os.open(f"/proc/{pid}/status", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


def _verify_child(pid: int, ready_r: int, go_w: int, privileges, status_fd: int | None = None) -> dict | None:
    """Wait for the child to confine itself, then read its credentials as the kernel reports them (from
    ``status_fd``, its status file opened before it confined, else from ``/proc``).

    The child is blocked on ``go`` meanwhile, so what we read is its state before any student code.
    None when it died or never got there (then it is killed and never told to go on).
    """
    try:
        ready, _, _ = select.select([ready_r], [], [], HANDSHAKE_SECONDS)
        confined = bool(ready) and os.read(ready_r, 1) == b"c"
    finally:
        os.close(ready_r)
    status = privileges.read_status(pid, status_fd) if confined else None
    if status is None:
        _kill_group(pid)
    return status


def _wait_or_kill(sock: socket.socket, pid: int) -> bool:
    """Block until the child exits, obeying kill requests meanwhile; True if we killed it."""
    killed = False
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            ready, _, _ = select.select([sock, pidfd], [], [])
            if pidfd in ready:
                return killed
            message, fds = _receive(sock)
            for extra in fds:
                os.close(extra)
            if message is None or message.get("op") == "kill":
                _kill_group(pid)  # its escapees are reparented to us as it dies; swept once it is reaped
                killed = True
                if message is None:  # the grader is gone: clean up and leave
                    os.waitpid(pid, 0)
                    _kill_descendants()
                    os._exit(0)
    finally:
        os.close(pidfd)


def _kill_group(pid: int) -> None:
    for action in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            action()
        except OSError:
            pass


def _children(pid: int) -> list[int]:
    """Live and dead children of ``pid`` (every thread's), from /proc/<pid>/task/<tid>/children."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as handle:
                found += [int(p) for p in handle.read().split()]
        except (OSError, ValueError):
            continue
    return found


def _subtree(pid: int) -> list[int]:
    """``pid``'s descendants, depth first (children files: no scan of all of /proc)."""
    found, todo = [], _children(pid)
    while todo and len(found) < 1 << 16:
        current = todo.pop()
        found.append(current)
        todo += _children(current)
    return found


def _kill_descendants() -> int:
    """SIGKILL everything left below us once the run's child is reaped; returns how many were killed.

    We are a child subreaper, so whatever the run left behind (escaped its process group, daemonised)
    is our child by now, or a descendant of one; stopped first so a forking tree cannot outrun us.
    Under seccomp a child cannot fork at all and this is one read of our own children file.
    """
    killed, me = 0, os.getpid()
    for _ in range(64):
        _reap()
        direct = _children(me)
        victims = _subtree(me)
        if not victims:
            break
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in victims:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        for pid in direct:  # wait until they are gone: their own children then come to us
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        killed += len(victims)
    _reap()
    return killed


def _reap() -> None:
    """Collect every dead child (orphans reparented to us included)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _send(sock: socket.socket, message: dict) -> None:
    sock.send(json.dumps(message).encode())


def _receive(sock: socket.socket) -> tuple[dict | None, list[int]]:
    try:
        data, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, 8)
    except OSError:
        return None, []
    if not data:
        return None, list(fds)
    return json.loads(data), list(fds)


if __name__ == "__main__":
    main(int(sys.argv[1]))
