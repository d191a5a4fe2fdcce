"""What runs inside the forked child: confine, report the level, then import and call student code.

Everything up to the CONFINED frame is trusted; from the moment the submission is imported the
process belongs to the student, so nothing it sends afterwards is believed by the grader beyond
"these bytes were offered as the result of case i". Expected values never exist in this process:
the fork server that forked us has never seen them.

File descriptors after setup: 0 = /dev/null, 1/2 = capture pipes, 3 = result frames, and until the
fork server has checked our credentials: 4 = "confined" to it, 5 = its "go" to us (and, before we
confine, its "opened": it holds our ``/proc/<pid>/status`` open, see :mod:`forkserver`); until Landlock is
enforced, 6 = the ruleset the fork server prepared and we completed. The test inputs are already in
memory, decoded by the fork server before it forked us.

While the fork server reads our credentials from /proc, we do the trusted work that needs no
verdict (forgetting the grader's modules); the submission is imported only after its "go".
"""

from __future__ import annotations

import fcntl
import functools
import importlib.util
import json
import os
import sys
import sysconfig
import traceback
from dataclasses import dataclass

from problemgen.code.sandbox import isolation, wire

RESULT_FD, READY_FD, GO_FD, RULESET_FD = 3, 4, 5, 6
_exit = os._exit  # bound early: the submission may replace os._exit


class MissingFunction(Exception):
    """The spec names a function the submission does not define (reported as an import error)."""


def main(config: dict, fds: list[int], allow: isolation.ReadAllowlist, cases: list,
         prepared: isolation.Ruleset | None = None, traces: GraderTraces | None = None) -> None:
    """Never returns. ``fds``: results, stdout, stderr, then ready and go of the handshake; ``cases``:
    the calls to make, as ``[index, function, args, kwargs]``;
    ``prepared``: the Landlock ruleset the fork server made for this child, if any;
    ``traces``: the grader's modules and finders as the fork server listed them (else listed here)."""
    try:
        if os.read(fds[4], 1) != b"o":  # the fork server holds our /proc status open: see forkserver._serve_run
            _exit(0)
        disable = tuple(config.get("disable", ()))
        ruleset = isolation.child_ruleset(allow, config["submission_dir"], prepared, disable)
        _setup_process(fds, config["submission_dir"], ruleset)
        limits = isolation.ChildLimits(**config["limits"])
        done = isolation.confine(allow, config["submission_dir"], limits, disable, ruleset)
        os.write(READY_FD, b"c")  # the fork server now reads our credentials; meanwhile, trusted work only
        os.close(READY_FD)
        _scrub_interpreter(config["submission_dir"], traces or grader_traces())
        _await_go()
        _send(wire.CONFINED, 0, json.dumps(done.as_dict(), sort_keys=True).encode())
        if isolation.rank(done.level) < isolation.rank(config["min_level"]):
            _exit(0)  # fail closed: no student code below the demanded level
        if os.geteuid() == 0 and isolation.refuses_root(disable):
            _exit(0)  # fail closed: no student code as uid 0 (the grader reports why)
        module = _import_submission(config["submission_dir"], config["entry"])
        if module is None:
            _exit(0)
        _send(wire.IMPORTED, 0)
        for index, function, args, kwargs in cases:
            _run_case(module, index, function, args, kwargs, config["max_result_bytes"])
        _send(wire.DONE, 0)
    except BaseException:  # noqa: BLE001 - the process ends here whatever happened
        pass
    _exit(0)


def _setup_process(fds: list[int], directory: str, ruleset: isolation.Ruleset) -> None:
    """Own session; descriptors 0-5 (and 6, the ruleset) in place, every other one closed."""
    os.setsid()  # own session and process group: the grader kills the group as a whole
    keep = [*fds, ruleset.fd] if ruleset.fd is not None else list(fds)
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in keep]
    for fd in keep:
        os.close(fd)
    results, out, err, ready, go = moved[:5]
    devnull = os.open("/dev/null", os.O_RDONLY)
    targets = [(devnull, 0), (out, 1), (err, 2), (results, RESULT_FD), (ready, READY_FD), (go, GO_FD)]
    if ruleset.fd is not None:
        targets.append((moved[5], RULESET_FD))
        ruleset.fd = RULESET_FD
    for source, target in targets:
        os.dup2(source, target)
    os.closerange(targets[-1][1] + 1, 1 << 16)  # the fork server's open paths among them
    sys.stdin = open(0, "r", closefd=False)
    sys.stdout = open(1, "w", buffering=1, closefd=False, errors="backslashreplace")
    sys.stderr = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")
    os.chdir(directory)
    os.environ.clear()
    os.environ.update({"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": directory})


def _await_go() -> None:
    """Wait until the fork server has read our credentials from /proc and lets us go on."""
    if os.read(GO_FD, 1) != b"g":
        _exit(0)  # the fork server refused (or vanished): no student code
    os.close(GO_FD)


def _send(kind: int, case: int, payload: bytes = b"") -> None:
    data = memoryview(wire.frame(kind, case, payload))
    while data:
        written = os.write(RESULT_FD, data)
        data = data[written:]


@dataclass(frozen=True)
class GraderTraces:
    """What of the grader a child finds in the interpreter it inherits: the names of its modules and
    the import-path finders of paths a child does not keep. Listed by the fork server right before
    each fork (:func:`grader_traces`): scanning ~300 modules in the child costs page faults instead."""

    modules: tuple[str, ...]
    finders: tuple[str, ...]


def grader_traces() -> GraderTraces:
    kept = set(runtime_paths())
    return GraderTraces(tuple(n for n in sys.modules if n.split(".")[0] in ("problemgen", "reference")),
                        tuple(k for k in sys.path_importer_cache if k not in kept))


_retired: list = []  # what the scrub took away, still referenced: freeing it would touch shared pages


def _scrub_interpreter(directory: str, traces: GraderTraces) -> None:
    """Forget the grader: its modules, its import hooks and its paths (Landlock also hides its files)."""
    _retired.extend(sys.modules.pop(name, None) for name in traces.modules)
    _retired.extend(sys.path_importer_cache.pop(key, None) for key in traces.finders)
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__name__.lower()
                        and "editable" not in getattr(f, "__name__", "").lower()]
    sys.path[:] = [directory, *runtime_paths()]
    sys.argv = ["submission"]


@functools.lru_cache(maxsize=1)
def runtime_paths() -> tuple[str, ...]:
    """The interpreter's own import paths (standard library, site-packages), without the grader's.

    Computed once by the fork server (``sysconfig`` and ``realpath`` per entry cost a child a
    millisecond); every child inherits the answer.
    """
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    return tuple(p for p in sys.path if p and ("site-packages" in p or os.path.realpath(p).startswith(stdlib)))


def _import_submission(directory: str, entry: str):
    path = os.path.join(directory, entry)
    try:
        spec = importlib.util.spec_from_file_location("submission", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["submission"] = module
        spec.loader.exec_module(module)
        return module
    except BaseException as exc:  # noqa: BLE001 - SystemExit and friends are import failures too
        _send(wire.IMPORT_FAILED, 0, _describe(exc, directory))
        return None


def _run_case(module, index: int, function: str, args: list, kwargs: dict, max_bytes: int) -> None:
    _send(wire.START, index)
    try:
        target = getattr(module, function, None)
        if not callable(target):
            raise MissingFunction(f"the submission defines no function named {function!r}")
        value = target(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - SystemExit in a test is that test's crash
        _send(wire.ERROR, index, _describe(exc, os.getcwd()))
        return
    try:
        payload = wire.encode(_plain(value))
        if len(payload) > max_bytes:  # a courtesy: the grader skips such a frame anyway
            raise wire.WireError(f"the result is {len(payload)} bytes; at most {max_bytes} bytes are read per test")
    except BaseException as exc:  # noqa: BLE001 - a value that cannot be sent is a bad output
        _send(wire.BAD_VALUE, index, wire.encode({"message": _safe_str(exc)}))
        return
    _send(wire.RESULT, index, payload)


MAX_ITEMS = 4096  # the grader's decoder refuses more; saying so here is faster and clearer


def _plain(value: object, budget: list[int] | None = None) -> object:
    """Tuples become lists; containers are rebuilt so no student object reaches the encoder."""
    budget = [MAX_ITEMS] if budget is None else budget
    if type(value) in (tuple, list, dict):
        budget[0] -= len(value)
        if budget[0] < 0:
            raise wire.WireError(f"the result holds more than {MAX_ITEMS} items; return numpy arrays")
    if type(value) in (tuple, list):
        return [_plain(v, budget) for v in value]
    if type(value) is dict:
        return {k: _plain(v, budget) for k, v in value.items()}
    return value


def _describe(exc: BaseException, directory: str) -> bytes:
    where = ""
    try:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(directory)]
        if frames:
            last = frames[-1]
            where = f"{os.path.basename(last.filename)}, line {last.lineno}, in {last.name}: {last.line or ''}"
    except BaseException:  # noqa: BLE001
        where = ""
    return wire.encode({"type": _safe_name(exc), "message": _safe_str(exc), "where": where[:500]})


def _safe_name(exc: BaseException) -> str:
    try:
        return str(type(exc).__name__)[:100]
    except BaseException:  # noqa: BLE001
        return "Exception"


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)[:2000]
    except BaseException:  # noqa: BLE001
        return "<the exception could not be printed>"
