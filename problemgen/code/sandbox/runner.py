"""The grader's side of a sandboxed run: hand the fork server the inputs, start children, watch the clock, collect bytes.

The runner never imports student code and never believes a child about anything but the bytes it
offers as results. Verdicts are built from three trusted sources only: the frames it decoded with
:mod:`wire`, the deadlines it measured itself, and the exit status reported by the fork server after
every process of the run is dead. A case that crashes or hangs marks that case; the remaining cases
run in a fresh child (up to ``max_restarts`` times).
"""

from __future__ import annotations

import json
import math
import os
import queue
import selectors
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable, Iterator, Sequence

from problemgen.errors import ProblemgenError
from problemgen.code.sandbox import isolation, privileges, wire
from problemgen.code.sandbox.output import CappedBuffer, clip
from problemgen.code.sandbox.staging import StagedSubmission, stage

# Outcome statuses of one call. RETURNED means "a value came back"; the task decides OK or WRONG.
RETURNED, BAD_OUTPUT, NO_RESULT, TIMEOUT, MEMORY, CRASH, IMPORT_ERROR = (
    "RETURNED", "BAD_OUTPUT", "NO_RESULT", "TIMEOUT", "MEMORY", "CRASH", "IMPORT_ERROR")  # fmt: skip


MAX_MESSAGE_BYTES = 1 << 20  # any frame but a result: errors and notes are a few KB at most
KILL_CONFIRMATION_SECONDS = 10.0  # a fork server that does not confirm a kill by then is considered lost


class IsolationError(ProblemgenError):
    """The sandbox could not reach the demanded isolation level, or could not leave uid 0; no student code
    was run."""


class SandboxUnavailable(IsolationError):
    """No fork server could be started (too low an RLIMIT_NPROC, say): nothing can be graded from here on, so
    the run stops (exit 3) rather than mark this and every later submission "not graded" with a score of 0."""


TOO_FEW_PROCESSES = "; the process limit (RLIMIT_NPROC, ulimit -u) leaves too few processes and threads for the grader"


class ServerTampered(ProblemgenError):
    """The fork server found its own limits or scheduling changed and refused to fork; replace it."""


@dataclass(frozen=True)
class Limits:
    """Per-submission limits. Times in seconds (wall clock, measured by the grader)."""

    import_timeout: float = 10.0
    case_timeout: float = 5.0
    memory_mb: int = 1024
    output_bytes: int = 64 * 1024  # kept per stream; the rest is counted and dropped
    # Results are bounded so the grader's memory is (decoded arrays cost about as much again):
    # one call's result at most 4 MiB (the largest honest result of any task is ~260 KB), all
    # results of one submission together at most 32 MiB. Beyond either, that test is BAD_OUTPUT.
    result_bytes_per_call: int = 4 * 2**20
    result_bytes: int = 32 * 2**20
    max_restarts: int = 3
    open_files: int = 64
    # layers to skip, for tests and broken kernels: "seccomp", "landlock", "privileges" (keep every
    # capability), "nobody" (drop capabilities but stay at the grader's uid)
    disable: tuple[str, ...] = ()


@dataclass(frozen=True)
class Call:
    """One function call to make inside the child: ``function(*args, **kwargs)``."""

    function: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    status: str
    value: object = None  # decoded data (numpy arrays, numbers, lists, dicts) when RETURNED
    message: str = ""  # escaped, one line; never contains anything the grader knows and the child does not


@dataclass(frozen=True)
class SandboxRun:
    outcomes: tuple[Outcome, ...]
    isolation: str
    confinement: dict
    stdout: str
    stderr: str
    children: int
    wall_seconds: float
    cpu_seconds: float
    # result bytes read from the children, counting toward the submission's ``Limits.result_bytes``
    result_bytes_read: int = 0


# --------------------------------------------------------------------------- the fork server handle


def _scrubbed_env() -> dict[str, str]:
    """Nothing from the grader's environment (CI tokens, secrets) reaches the fork server."""
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


# The fork server runs this package's own code, also from a checkout that shadows an installed copy:
# isolated mode (-I) ignores PYTHONPATH and the working directory, so the package's root is put first.
_PACKAGE_ROOT = Path(__file__).resolve().parents[3]
_FORKSERVER_BOOT = (
    "import sys; sys.path.insert(0, {root!r}); "
    "from problemgen.code.sandbox.forkserver import main; main({fd})"
)


class ForkServer:
    """A running fork server; one run at a time."""

    def __init__(self, startup_timeout: float = 60.0) -> None:
        unusable = privileges.foreign_proc()
        if unusable:
            raise IsolationError(f"the sandbox cannot check its processes: {unusable}; nothing was run")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.workdir = tempfile.mkdtemp(prefix="problemgen-fs-")
        self.log = tempfile.TemporaryFile()
        command = [sys.executable, "-I", "-B", "-c", _FORKSERVER_BOOT.format(root=str(_PACKAGE_ROOT), fd=theirs.fileno())]
        try:
            self.proc = subprocess.Popen(
                command, pass_fds=[theirs.fileno()], env=_scrubbed_env(), cwd=self.workdir,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log, start_new_session=True,
            )  # fmt: skip
        except OSError:
            ours.close()
            self.log.close()
            shutil.rmtree(self.workdir, ignore_errors=True)
            raise
        finally:
            theirs.close()
        self.sock = ours
        ready = self.receive(startup_timeout)
        if not ready or ready.get("event") != "ready":
            why, log = self.last_words(), self.failure_log()  # before close() closes the log
            self.close()
            hint = TOO_FEW_PROCESSES if any(sign in log for sign in ("RLIMIT_NPROC", "temporarily unavailable")) else ""
            raise SandboxUnavailable(f"the sandbox fork server did not start ({why}){hint}; nothing more was run")
        self.drop_uid = bool(ready.get("drop_uid"))
        self.inputs: Sequence[Call] | None = None  # the calls whose inputs the server holds

    def receive(self, timeout: float) -> dict | None:
        self.sock.settimeout(max(timeout, 0.001))
        try:
            data = self.sock.recv(1 << 16)
        except (TimeoutError, OSError):
            return None
        finally:
            self.sock.settimeout(None)
        return json.loads(data) if data else None

    def hold_inputs(self, calls: Sequence[Call]) -> None:
        """Hand the fork server the test inputs once; every child it forks then starts with them decoded.

        Why: a class runs the same calls for every submission, and encoding them in the grader and
        decoding them in each freshly forked child cost about 1 ms a submission. The inputs are no
        secret from a child (it is called with them); expected values never come here. A tuple of
        calls (a plan's) is sent once and must not change afterwards; anything else is sent every run.
        """
        if self.inputs is calls and isinstance(calls, tuple):
            return
        data = _encode_calls(calls, range(len(calls)))
        holder = os.memfd_create("problemgen-inputs", os.MFD_CLOEXEC)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(holder, view) :]
            socket.send_fds(self.sock, [json.dumps({"op": "inputs", "bytes": len(data)}).encode()], [holder])
        finally:
            os.close(holder)
        reply = self._reply("inputs", "did not take the test inputs")
        if reply.get("count") != len(calls):
            raise ProblemgenError(f"the sandbox fork server did not take the test inputs: {self.failure_log()}")
        self.inputs = calls

    def start(self, config: dict, fds: list[int]) -> dict:
        """Fork a child; returns the "started" message (pid, and credentials read from /proc)."""
        socket.send_fds(self.sock, [json.dumps({"op": "run", "config": config}).encode()], fds)
        return self._reply("started", "stopped responding")

    def _reply(self, event: str, failure: str) -> dict:
        """The server's answer to a request, which must be ``event``; a server that found itself tampered
        with raises :class:`ServerTampered` (the pool replaces it), any other answer or none ``failure``."""
        reply = self.receive(30.0)
        if reply and reply.get("event") == "tampered":
            raise ServerTampered(f"the sandbox fork server was tampered with ({clip(str(reply.get('what')), 300)})")
        if not reply or reply.get("event") != event:
            raise ProblemgenError(f"the sandbox fork server {failure}: {self.failure_log()}")
        return reply

    def kill(self) -> None:
        try:
            self.sock.send(b'{"op": "kill"}')
        except OSError:
            pass

    def alive(self) -> bool:
        return self.proc.poll() is None

    def last_words(self) -> str:
        """The last line the fork server wrote (the exception that stopped it), escaped and clipped."""
        self.log.seek(0)
        lines = [line for line in self.log.read()[-4000:].decode("utf-8", "replace").splitlines() if line.strip()]
        return clip(lines[-1].strip(), 300) if lines else "it wrote nothing"

    def failure_log(self) -> str:
        self.log.seek(0)
        return clip(self.log.read()[-2000:].decode("utf-8", "replace"), 500) or "no output"

    def close(self) -> None:
        try:
            self.sock.close()
        finally:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            self.log.close()
            shutil.rmtree(self.workdir, ignore_errors=True)  # normally empty; never leave it behind


# --------------------------------------------------------------------------- one child's life


@dataclass
class _ChildRun:
    confinement: dict | None = None
    credentials: dict | None = None  # read by the fork server from /proc/<pid>/status, never by the child
    imported: bool = False
    import_failure: dict | None = None
    current: int | None = None  # case started and not finished
    done: bool = False
    killed_by_us: bool = False
    protocol_error: str = ""
    exit: dict = field(default_factory=dict)
    outcomes: dict[int, Outcome] = field(default_factory=dict)


class _ChildDriver:
    """Event loop for one child: reads frames and output, enforces deadlines."""

    def __init__(self, server: ForkServer, limits: Limits, pending: list[int], out: CappedBuffer, err: CappedBuffer,
                 result_budget: int):  # fmt: skip
        self.server, self.limits, self.pending = server, limits, pending
        self.out, self.err = out, err
        self.run = _ChildRun()
        self.expected = iter(pending)
        self.next_case = next(self.expected, None)
        self.reader = wire.FrameReader(MAX_MESSAGE_BYTES, max_total=result_budget, max_result=limits.result_bytes_per_call)

    def drive(self, config: dict) -> _ChildRun:
        pipes = [os.pipe() for _ in range(3)]  # results, stdout, stderr
        child_ends = [pipes[0][1], pipes[1][1], pipes[2][1]]
        res_r, out_r, err_r = pipes[0][0], pipes[1][0], pipes[2][0]
        self.open_fds = {res_r, out_r, err_r}
        try:
            self.run.credentials = self.server.start(config, child_ends).get("credentials")
        except BaseException:
            for fd in self.open_fds:
                os.close(fd)
            raise
        finally:
            for fd in child_ends:
                os.close(fd)
        try:
            self._loop(res_r, out_r, err_r)
        finally:
            for fd in sorted(self.open_fds):  # never close twice: another thread may own that number by now
                os.close(fd)
        return self.run

    def _loop(self, res_r: int, out_r: int, err_r: int) -> None:
        sel = selectors.DefaultSelector()
        for fd, tag in ((res_r, "res"), (out_r, "out"), (err_r, "err")):
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ, tag)
        sel.register(self.server.sock, selectors.EVENT_READ, "server")
        start = time.monotonic()
        self.deadline = start + self.limits.import_timeout
        hard_stop = start + self.limits.import_timeout + self.limits.case_timeout * (len(self.pending) + 1)
        exited_at = None
        while True:
            readers = [k for k in sel.get_map().values() if k.data in ("res", "out", "err")]
            now = time.monotonic()
            if exited_at is not None and (not readers or now > exited_at + 2.0):
                break
            if exited_at is not None:
                limit = exited_at + 2.0  # drain what is left in the pipes, then stop
            elif self.run.killed_by_us:
                limit = self.kill_deadline
                if now >= limit:  # the fork server does not confirm the kill: treat it as lost
                    self.run.exit = {"server_lost": True}
                    break
            else:
                limit = min(self.deadline, hard_stop)
            for key, _ in sel.select(max(0.0, limit - now)):
                if key.data == "server":
                    if self._server_message(sel):
                        exited_at = time.monotonic()
                else:
                    self._read(sel, key.fd, key.data)
            if exited_at is None and time.monotonic() >= min(self.deadline, hard_stop) and not self.run.killed_by_us:
                self._kill()
        sel.close()

    def _kill(self) -> None:
        self.run.killed_by_us = True
        self.kill_deadline = time.monotonic() + KILL_CONFIRMATION_SECONDS
        self.server.kill()

    def _server_message(self, sel: selectors.BaseSelector) -> bool:
        message = self.server.receive(1.0)
        if message is None:  # the fork server died: nothing more will come
            sel.unregister(self.server.sock)
            self.run.exit = {"server_lost": True}
            return True
        if message.get("event") == "exited":
            sel.unregister(self.server.sock)
            self.run.exit = message
            return True
        return False

    def _read(self, sel: selectors.BaseSelector, fd: int, tag: str) -> None:
        try:
            chunk = os.read(fd, 1 << 16)
        except (BlockingIOError, InterruptedError):
            return
        if not chunk:
            sel.unregister(fd)
            return
        if tag == "out":
            self.out.add(chunk)
        elif tag == "err":
            self.err.add(chunk)
        elif not self.run.protocol_error:
            try:
                for kind, case, payload in self.reader.feed(chunk):
                    if self.run.protocol_error:
                        break  # nothing after a violation is believed
                    self._frame(kind, case, payload)
            except wire.WireError as exc:
                self._violation(str(exc))
            if self.run.protocol_error:
                sel.unregister(fd)

    def _violation(self, why: str) -> None:
        self.run.protocol_error = why
        if not self.run.killed_by_us:
            self._kill()

    def _frame(self, kind: int, case: int, payload: bytes) -> None:
        run, now = self.run, time.monotonic()
        if run.confinement is None:
            if kind != wire.CONFINED:
                return self._violation("the child spoke before confining itself")
            run.confinement = json.loads(payload.decode("utf-8"))
        elif kind == wire.IMPORTED and not run.imported:
            run.imported = True
            self.deadline = now + self.limits.case_timeout
        elif kind == wire.IMPORT_FAILED and not run.imported:
            run.import_failure = _decode_dict(payload)
        elif kind == wire.START and run.imported and run.current is None and case == self.next_case:
            run.current = case
            self.deadline = now + self.limits.case_timeout
        elif kind in (wire.RESULT, wire.ERROR, wire.BAD_VALUE, wire.TOO_LARGE) and run.current == case:
            run.outcomes[case] = _case_outcome(kind, payload, self.limits)
            run.current = None
            self.next_case = next(self.expected, None)
            self.deadline = now + self.limits.case_timeout
        elif kind == wire.DONE and run.imported and run.current is None:
            run.done = True
            self.deadline = now + 1.0
        else:
            self._violation("out-of-order or repeated frame on the result channel")


def _decode_dict(payload: bytes) -> dict:
    try:
        value = wire.decode(payload, wire.WireLimits(max_bytes=1 << 16, max_items=16))
    except wire.WireError:
        return {}
    return value if isinstance(value, dict) else {}


def _case_outcome(kind: int, payload: bytes, limits: Limits) -> Outcome:
    if kind == wire.TOO_LARGE:
        info = json.loads(payload)
        if info["limit"] == "test":
            return Outcome(BAD_OUTPUT, message=f"the result is {info['bytes']} bytes; at most "
                                               f"{limits.result_bytes_per_call} bytes are read per test")  # fmt: skip
        return Outcome(BAD_OUTPUT, message=f"the results together exceed {limits.result_bytes} bytes; this one was not read")
    if kind == wire.RESULT:
        try:
            return Outcome(RETURNED, wire.decode(payload))
        except wire.WireError as exc:
            return Outcome(BAD_OUTPUT, message=f"the returned value could not be read: {exc}")
    info = _decode_dict(payload)
    if kind == wire.BAD_VALUE:
        return Outcome(BAD_OUTPUT, message=_text(info, "message"))
    name, where = _text(info, "type"), _text(info, "where")
    text = f"{name}: {_text(info, 'message')}" + (f" ({where})" if where else "")
    status = {"MemoryError": MEMORY, "MissingFunction": IMPORT_ERROR}.get(name, CRASH)
    return Outcome(status, message=clip(text, 1500))


def _text(info: dict, key: str) -> str:
    value = info.get(key, "")
    return clip(value if isinstance(value, str) else "", 1000)


# --------------------------------------------------------------------------- a whole submission


def _unfinished_outcome(run: _ChildRun, limits: Limits) -> Outcome:
    """Status of the case that was running when the child stopped."""
    if run.protocol_error:
        return Outcome(BAD_OUTPUT, message=f"the result channel was corrupted ({run.protocol_error})")
    if run.killed_by_us:
        return Outcome(TIMEOUT, message=f"no result within {limits.case_timeout:g} s (wall clock)")
    return _death(run.exit, "during this test")


def _death(exit: dict, when: str) -> Outcome:
    if exit.get("server_lost"):
        return Outcome(CRASH, message="the sandbox supervisor was lost")
    sig = exit.get("signal")
    if sig == signal.SIGXCPU:
        return Outcome(TIMEOUT, message="CPU time limit exceeded")
    if sig == signal.SIGKILL:
        return Outcome(MEMORY, message=f"killed by the system {when} (usually: out of memory)")
    if sig is not None:
        return Outcome(CRASH, message=f"the process died with {_signal_name(sig)} {when}")
    return Outcome(NO_RESULT, message=f"the process exited (code {exit.get('exit_code')}) {when} without a result")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _import_outcome(run: _ChildRun, limits: Limits) -> Outcome:
    if run.import_failure is not None:
        info = run.import_failure
        where = _text(info, "where")
        text = f"{_text(info, 'type')}: {_text(info, 'message')}" + (f" ({where})" if where else "")
        return Outcome(IMPORT_ERROR, message=clip(f"importing the submission failed: {text}", 1500))
    if run.protocol_error:
        return Outcome(BAD_OUTPUT, message=f"the result channel was corrupted ({run.protocol_error})")
    if run.killed_by_us:
        return Outcome(TIMEOUT, message=f"importing the submission took longer than {limits.import_timeout:g} s")
    if run.confinement is None:
        return Outcome(CRASH, message="the sandbox could not start the submission")
    death = _death(run.exit, "while the submission was being imported")
    return Outcome(IMPORT_ERROR, message=death.message) if death.status == NO_RESULT else death


def run_calls(
    server: ForkServer, staged: StagedSubmission, calls: Sequence[Call], limits: Limits, min_level: str = "process",
    result_bytes_read: int = 0,
) -> SandboxRun:
    """Run every call against one submission; restarts a fresh child after a crash or hang.

    ``result_bytes_read``: what earlier runs of the same submission already read, so that the
    submission's results stay within ``limits.result_bytes`` however many runs it takes.
    """
    started = time.monotonic()
    server.hold_inputs(calls)
    outcomes: dict[int, Outcome] = {}
    out, err = CappedBuffer(limits.output_bytes), CappedBuffer(limits.output_bytes)
    pending, children, cpu, levels, confinement = list(range(len(calls))), 0, 0.0, [], {}
    read = 0  # result bytes kept from this run's children; the budget is the submission's, shared by all
    while True:  # at least one child, even with no calls (a probe)
        driver = _ChildDriver(server, limits, pending, out, err, limits.result_bytes - result_bytes_read - read)
        run = driver.drive(_config(staged, limits, min_level, pending))
        read += driver.reader.kept
        children, cpu = children + 1, cpu + float(run.exit.get("cpu", 0.0))
        if run.exit.get("server_lost"):
            raise ProblemgenError(f"the sandbox fork server died: {server.failure_log()}")
        if run.confinement is not None:
            run.confinement = _verified(run.confinement, run.credentials)
            levels.append(run.confinement["level"])
            confinement = confinement or run.confinement
            if isolation.rank(levels[-1]) < isolation.rank(min_level):
                raise IsolationError(
                    f"sandbox isolation is {levels[-1]!r}, below the required {min_level!r}; nothing was run")
            if run.confinement["uid"] == 0 and isolation.refuses_root(limits.disable):
                raise IsolationError(isolation.root_refusal(run.confinement.get("notes", ())))
        if not run.imported:
            outcomes.update(dict.fromkeys(pending, _import_outcome(run, limits)))
            break
        outcomes.update(run.outcomes)
        if run.current is not None:
            outcomes[run.current] = _unfinished_outcome(run, limits)
        pending = [i for i in pending if i not in outcomes]
        if not pending:
            break
        if (children > limits.max_restarts or run.protocol_error):
            reason = "the result channel was corrupted" if run.protocol_error else "too many crashes or timeouts"
            outcomes.update(dict.fromkeys(pending, Outcome(NO_RESULT, message=f"not run: {reason} in earlier tests")))
            break
    level = min(levels, key=isolation.rank) if levels else "process"

    def redact(text: str) -> str:  # the private directory's random name would make reports differ run to run
        return text.replace(staged.directory, "<submission>")

    ordered = [outcomes[i] for i in range(len(calls))]
    ordered = [Outcome(o.status, o.value, redact(o.message)) if o.message else o for o in ordered]
    return SandboxRun(
        outcomes=tuple(ordered), isolation=level, confinement=confinement,
        stdout=redact(out.text()), stderr=redact(err.text()), children=children,
        wall_seconds=time.monotonic() - started, cpu_seconds=cpu,
        result_bytes_read=read,
    )  # fmt: skip


def _verified(claimed: dict, credentials: dict | None) -> dict:
    """The child's account of its layers, with the level lowered to what the kernel showed."""
    level = isolation.verified_level(str(claimed.get("level", "process")), credentials)
    creds = credentials or {}
    return {**claimed, "level": level, "uid": creds.get("uid"), "gid": creds.get("gid"),
            "capabilities": creds.get("capabilities"), "no_new_privs": creds.get("no_new_privs")}  # fmt: skip


def _config(staged: StagedSubmission, limits: Limits, min_level: str, pending: list[int]) -> dict:
    cpu = math.ceil(limits.import_timeout + limits.case_timeout * (len(pending) + 1))
    child = isolation.ChildLimits(cpu_seconds=cpu, memory_bytes=limits.memory_mb * 2**20, open_files=limits.open_files)
    return {"submission_dir": staged.directory, "entry": staged.entry, "limits": asdict(child), "min_level": min_level,
            "disable": list(limits.disable), "max_result_bytes": limits.result_bytes_per_call,
            "cases": list(pending)}  # fmt: skip


def _encode_calls(calls: Sequence[Call], pending: Iterable[int]) -> bytes:
    return wire.encode([[i, calls[i].function, list(calls[i].args), dict(calls[i].kwargs)] for i in pending])


# --------------------------------------------------------------------------- the pool


class Sandbox:
    """A pool of fork servers. Use as a context manager; ``run`` is thread-safe."""

    def __init__(self, limits: Limits = Limits(), jobs: int = 1, min_level: str = "process") -> None:
        if min_level not in isolation.LEVELS:
            raise ProblemgenError(f"unknown isolation level {min_level!r}; expected one of {', '.join(isolation.LEVELS)}")
        if not isolation.platform_supported():
            raise ProblemgenError("the code sandbox needs Linux")
        self.limits, self.jobs, self.min_level = limits, max(1, jobs), min_level
        self._idle: queue.Queue[ForkServer] = queue.Queue()
        self._servers: list[ForkServer] = []
        self._lock = threading.Lock()
        self._probed: SandboxRun | None = None

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _acquire(self) -> ForkServer:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            server = ForkServer()
            with self._lock:
                self._servers.append(server)
            return server

    def run(self, staged: StagedSubmission, calls: Sequence[Call], *, result_bytes_read: int = 0) -> SandboxRun:
        """Run ``calls``; a fork server that reports tampering is replaced and the run made on a fresh one.

        A later run of the same submission passes the ``result_bytes_read`` of the earlier ones: it
        gets only what is left of the submission's ``Limits.result_bytes``.
        """
        try:
            return self._run_once(staged, calls, result_bytes_read)
        except ServerTampered:
            return self._run_once(staged, calls, result_bytes_read)

    def _run_once(self, staged: StagedSubmission, calls: Sequence[Call], result_bytes_read: int) -> SandboxRun:
        server = self._acquire()
        healthy = False
        try:
            result = run_calls(server, staged, calls, self.limits, self.min_level, result_bytes_read)
            healthy = True
            return result
        except IsolationError:
            healthy = True  # the server is fine; the level is simply too low
            raise
        finally:
            if healthy and server.alive():
                self._idle.put(server)
            else:  # lost, unresponsive or tampered with: never reuse it
                with self._lock:
                    self._servers.remove(server)
                server.close()

    def map(self, work: Callable[[object], object], items: Iterable[object]) -> Iterator[object]:
        """Apply ``work`` (which calls ``self.run``) to items with ``jobs`` threads, in order."""
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            yield from pool.map(work, items)

    def probe(self) -> SandboxRun:
        """Confine a one-line module of ours and report the level reached (cached after the first call)."""
        with self._lock:
            probed = self._probed
        if probed is None:
            staged = stage({"probe.py": "VALUE = 1\n"}, "probe.py")
            try:
                probed = self.run(staged, [])
            finally:
                staged.cleanup()
            with self._lock:
                self._probed = probed
        return probed

    def close(self) -> None:
        for server in self._servers:
            server.close()
        self._servers.clear()
