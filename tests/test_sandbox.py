"""The sandbox: wire format, staging, output escaping, confinement, statuses, restarts, fail-closed.

Red-team submissions live in tests/redteam/; this file covers the mechanisms one at a time and the
controls that honest numpy code (BLAS threads, einsum, linalg) runs normally inside the sandbox.
"""

from __future__ import annotations

import os
import struct
import sys
import tempfile
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from problemgen.code.sandbox import (
    BAD_OUTPUT, CRASH, IMPORT_ERROR, MEMORY, NO_RESULT, RETURNED, TIMEOUT, Call, IsolationError, Limits,
    RejectedSubmission, Sandbox, collect, stage,
)  # fmt: skip
from problemgen.code.sandbox import isolation, seccomp, wire
from problemgen.code.sandbox.isolation import rank
from problemgen.code.sandbox.output import CappedBuffer, clip, escape

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux")

FAST = Limits(import_timeout=3.0, case_timeout=1.0, max_restarts=3)


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(FAST) as box:
        yield box


def run_source(sandbox: Sandbox, source: str, calls: list[Call]):
    staged = stage({"submission.py": source}, "submission.py")
    try:
        return sandbox.run(staged, calls)
    finally:
        staged.cleanup()


# --------------------------------------------------------------------------- wire format

values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(max_size=20)
    | hnp.arrays(st.sampled_from(["<f8", "<f4", "<i8", "?", "u1"]), hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=10,
)  # fmt: skip


def same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@settings(max_examples=60, deadline=None)
@given(values)
def test_wire_round_trips_every_supported_value(value):
    assert same(wire.decode(wire.encode(value)), value)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=200))
def test_wire_decoder_rejects_garbage_cleanly(data):
    try:
        wire.decode(data)
    except wire.WireError:
        pass


def test_wire_refuses_pickle_like_objects_and_object_arrays():
    with pytest.raises(wire.WireError):
        wire.encode(object())
    with pytest.raises(wire.WireError):
        wire.encode(np.array([object()], dtype=object))
    with pytest.raises(wire.WireError):
        wire.encode({1: 2})


def test_wire_checks_the_byte_count_against_the_shape_before_allocating():
    header = b"a" + struct.pack("<BB", 1, 2) + struct.pack("<2Q", 3, 3)
    with pytest.raises(wire.WireError, match="byte count"):
        wire.decode(header + struct.pack("<Q", 8) + b"\0" * 8)
    with pytest.raises(wire.WireError, match="too large"):
        wire.decode(b"a" + struct.pack("<BB", 1, 1) + struct.pack("<Q", 2**40) + struct.pack("<Q", 2**43))
    with pytest.raises(wire.WireError, match="dtype"):
        wire.decode(b"a" + struct.pack("<BB", 99, 0) + struct.pack("<Q", 8) + b"\0" * 8)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([0, 1, 3, 2**12, 2**24]), min_size=1, max_size=8))
def test_wire_refuses_an_empty_array_whose_shape_numpy_cannot_hold(shape):
    """An empty array carries no bytes, so only the shape bounds it: a child once sent (0, 2**24, ...)
    and numpy's own ValueError escaped the decoder and ended the whole class run."""
    shape = [0, *shape]
    data = b"a" + struct.pack("<BB", 1, len(shape)) + struct.pack(f"<{len(shape)}Q", *shape) + struct.pack("<Q", 0)
    try:
        assert wire.decode(data).shape == tuple(shape)
    except wire.WireError as exc:
        assert "too large" in str(exc) or "dimensions" in str(exc)


def test_frame_reader_rejects_a_bad_magic_and_an_oversized_message():
    with pytest.raises(wire.WireError):
        wire.FrameReader(1024, 4096).feed(b"EVIL" + b"\0" * 20)
    with pytest.raises(wire.WireError):
        wire.FrameReader(16, 4096).feed(wire.frame(wire.ERROR, 0, b"x" * 17))


def test_frame_reader_skips_an_oversized_result_without_buffering_it_and_reads_on():
    reader = wire.FrameReader(64, max_total=100, max_result=16)
    stream = wire.frame(wire.RESULT, 0, b"x" * 5000) + wire.frame(wire.RESULT, 1, b"y" * 16)
    frames = []
    for start in range(0, len(stream), 7):  # arbitrary chunking
        frames += reader.feed(stream[start : start + 7])
        assert len(reader.buffer) < 64
    assert frames[0][:2] == (wire.TOO_LARGE, 0) and b'"limit": "test"' in frames[0][2]
    assert frames[1] == (wire.RESULT, 1, b"y" * 16) and reader.kept == 16


def test_frame_reader_caps_the_results_kept_per_run():
    reader = wire.FrameReader(64, max_total=40, max_result=16)
    frames = reader.feed(b"".join(wire.frame(wire.RESULT, i, b"z" * 16) for i in range(3)))
    assert [f[0] for f in frames] == [wire.RESULT, wire.RESULT, wire.TOO_LARGE] and b'"run"' in frames[2][2]
    frames = wire.FrameReader(64, 4096).feed(wire.frame(wire.START, 3) + wire.frame(wire.RESULT, 3, b"N")[:5])
    assert frames == [(wire.START, 3, b"")]


# --------------------------------------------------------------------------- staging


@pytest.mark.parametrize("name", ["sitecustomize.py", "usercustomize.py", "conftest.py", "numpy.py", "os.py", "json.py",
                                  "sympy.py", "problemgen.py", "helper.pyc", "paths.pth"])  # fmt: skip
def test_staging_rejects_files_python_would_run_or_that_shadow_modules(tmp_path, name):
    (tmp_path / "submission.py").write_text("x = 1\n")
    (tmp_path / name).write_text("x = 2\n")
    with pytest.raises(RejectedSubmission, match=name.split(".")[0]):
        collect(tmp_path)


def test_staging_refuses_symlinks_and_copies_only_python_sources(tmp_path):
    (tmp_path / "submission.py").write_text("import helper\n")
    (tmp_path / "helper.py").write_text("y = 1\n")
    (tmp_path / "notes.txt").write_text("ignored\n")
    (tmp_path / "sub").mkdir()
    sources, entry = collect(tmp_path)
    assert sorted(sources) == ["helper.py", "submission.py"] and entry == "submission.py"
    staged = stage(sources, entry)
    try:
        assert sorted(os.listdir(staged.directory)) == ["helper.py", "submission.py"]
        assert not os.access(os.path.join(staged.directory, "helper.py"), os.W_OK) or os.geteuid() == 0
    finally:
        staged.cleanup()
    (tmp_path / "evil.py").symlink_to("/etc/passwd")
    with pytest.raises(RejectedSubmission, match="symbolic"):
        collect(tmp_path)


def test_staging_goes_to_ram_unless_the_user_names_a_temporary_directory(tmp_path, monkeypatch):
    from problemgen.code.sandbox import staging

    monkeypatch.delenv("TMPDIR", raising=False)
    staged = stage({"submission.py": "X = 1\n"}, "submission.py")
    try:
        expected = staging.RAM_DIRECTORY if os.access(staging.RAM_DIRECTORY, os.W_OK) else None
        place = os.path.dirname(os.path.dirname(staged.directory))  # the staging place, then the enclosure
        assert place == (expected or place)
    finally:
        staged.cleanup()
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # tempfile caches the directory it chose
    staged = stage({"submission.py": "X = 1\n"}, "submission.py")
    try:
        assert os.path.dirname(os.path.dirname(staged.directory)) == str(tmp_path)
    finally:
        staged.cleanup()


def test_a_lone_file_with_a_reserved_name_is_staged_under_a_neutral_name(tmp_path):
    path = tmp_path / "random.py"
    path.write_text("x = 1\n")
    assert collect(path) == ({"submission.py": "x = 1\n"}, "submission.py")


# --------------------------------------------------------------------------- output escaping


def test_escaped_output_cannot_start_ci_commands_or_carry_terminal_controls():
    shown = escape(b"::error file=a.py::forged\n##vso[task.complete]x\n\x1b[2Jclear\rover\x00\xe2\x80\xae")
    for line in shown.split("\n"):
        assert line.startswith("| ")
    assert "\x1b" not in shown and "\r" not in shown and "\x00" not in shown and "\u202e" not in shown
    assert "\\x1b[2J" in shown
    assert clip("::warning::x\nsecond").startswith("\\::") and "\n" not in clip("a\nb")


def test_capped_buffer_keeps_the_head_and_counts_the_rest():
    buffer = CappedBuffer(10)
    buffer.add(b"0123456789abc")
    buffer.add(b"def")
    assert buffer.text().startswith("| 0123456789") and "6 more bytes" in buffer.text()


# --------------------------------------------------------------------------- seccomp program


def test_seccomp_program_checks_the_architecture_first_and_ends_by_allowing():
    program = seccomp.build_filter(1234)
    assert len(program) % 8 == 0 and len(program) // 8 < 4096
    code, _, _, k = struct.unpack_from("<HBBI", program, 0)
    assert (code, k) == (0x20, 4)  # load the arch field
    assert struct.unpack_from("<HBBI", program, len(program) - 8)[3] == seccomp.RET_ALLOW
    assert struct.pack("<I", 1234) in program  # the only pid the child may signal
    assert seccomp.filter_for(1234) == program and seccomp.filter_for(4_194_303) == seccomp.build_filter(4_194_303)


# --------------------------------------------------------------------------- running code


def test_isolation_level_is_probed_and_reported(sandbox):
    probe = sandbox.probe()
    assert probe.isolation in isolation.LEVELS
    assert probe.confinement["level"] == probe.isolation
    if seccomp.available():
        assert isolation.rank(probe.isolation) >= isolation.rank("seccomp")


def test_honest_numpy_with_blas_threads_einsum_and_linalg_runs_normally():
    source = """
import os
from dataclasses import replace
import numpy as np

def work(a, b):
    c = a @ b                                   # large enough for OpenBLAS to use its threads
    e = np.einsum("ij,jk->ik", a, b)
    s = np.linalg.solve(a @ a.T + np.eye(len(a)), b[:, 0])
    w = np.linalg.eigvalsh(a + a.T)
    f = np.fft.rfft(a[0])
    return [c, e, s, w, np.abs(f), np.random.default_rng(0).normal(size=3)]

def threads():
    np.ones((600, 600)) @ np.ones((600, 600))
    return len(os.listdir("/proc/self/task"))
"""
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(300, 300)), rng.normal(size=(300, 300))
    with Sandbox(Limits(import_timeout=10.0, case_timeout=10.0)) as roomy:  # linalg on a loaded 2-core machine
        run = run_source(roomy, source, [Call("work", (a, b)), Call("threads")])
    assert [o.status for o in run.outcomes] == [RETURNED, RETURNED], run.outcomes[0].message
    c, e, s, w, f, r = run.outcomes[0].value
    assert np.allclose(c, a @ b) and np.allclose(e, a @ b)
    assert np.allclose(s, np.linalg.solve(a @ a.T + np.eye(300), b[:, 0]))
    assert np.allclose(w, np.linalg.eigvalsh(a + a.T)) and np.allclose(f, np.abs(np.fft.rfft(a[0])))
    assert np.allclose(r, np.random.default_rng(0).normal(size=3))
    if (os.cpu_count() or 1) > 1:
        assert run.outcomes[1].value > 1, "BLAS threads should be able to start inside the sandbox"


def test_each_failure_marks_its_own_case_and_the_rest_still_run(sandbox):
    source = """
import os, sys, numpy as np
def ok(x): return x * 2
def boom(x): raise ValueError("nope")
def hang(x):
    while True: pass
def quit(x): os._exit(3)
def greedy(x): return np.ones((40000, 40000))
def unsendable(x): return object()
"""
    calls = [Call(name, (np.arange(3.0),)) for name in ("ok", "boom", "hang", "ok", "quit", "greedy", "unsendable", "absent", "ok")]
    run = run_source(sandbox, source, calls)
    statuses = [o.status for o in run.outcomes]
    assert statuses == [RETURNED, CRASH, TIMEOUT, RETURNED, NO_RESULT, MEMORY, BAD_OUTPUT, IMPORT_ERROR, RETURNED]
    assert np.array_equal(run.outcomes[-1].value, [0.0, 2.0, 4.0])
    assert "ValueError: nope" in run.outcomes[1].message and "line 4, in boom" in run.outcomes[1].message
    assert run.children == 3  # restarted after the hang and after the exit


def test_import_failures_mark_every_case(sandbox):
    run = run_source(sandbox, "import sys\nsys.exit(0)\n", [Call("f"), Call("g")])
    assert [o.status for o in run.outcomes] == [IMPORT_ERROR, IMPORT_ERROR]
    assert "SystemExit" in run.outcomes[0].message
    slow = run_source(sandbox, "while True:\n    pass\n", [Call("f")])
    assert slow.outcomes[0].status == TIMEOUT


def test_the_child_sees_inputs_but_no_grader_state(sandbox):
    source = """
import gc, os, sys
def look():
    names = sorted(m for m in sys.modules if m.split(".")[0] in ("problemgen", "reference"))
    return [names, sorted(os.environ), os.getcwd() == os.path.dirname(__file__)]
"""
    os.environ["PROBLEMGEN_TEST_TOKEN"] = "do-not-leak"
    try:
        run = run_source(sandbox, source, [Call("look")])
    finally:
        del os.environ["PROBLEMGEN_TEST_TOKEN"]
    modules, env, in_own_dir = run.outcomes[0].value
    assert modules == [] and "PROBLEMGEN_TEST_TOKEN" not in env and in_own_dir


PEEK = """
import os
from dataclasses import replace
def peek(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode()
    except OSError as exc:
        return type(exc).__name__
def own():
    with open(__file__, "rb") as handle:
        return handle.read().decode()
"""


def test_a_child_reads_its_own_submission_but_not_another_students(sandbox):
    """Each child's ruleset grants its own directory only, also now that the fork server prepares the
    fixed part of every ruleset before the fork (a ruleset shared between children would leak here)."""
    if rank(sandbox.probe().isolation) < rank("seccomp+landlock"):
        pytest.skip("Landlock is not available on this kernel")
    other = stage({"submission.py": "SECRET_ANSWER = 42\n"}, "submission.py")
    try:
        for _ in range(2):  # the second child comes from the ruleset prepared after the first
            run = run_source(sandbox, PEEK, [Call("peek", (os.path.join(other.directory, "submission.py"),)), Call("own")])
            assert run.outcomes[0].value == "PermissionError"
            assert "def own()" in run.outcomes[1].value
        with open(os.path.join(other.directory, "submission.py")) as handle:  # the file is there to be read
            assert "SECRET_ANSWER" in handle.read()
    finally:
        other.cleanup()


HUNT = """
import glob, os
def hunt(place):
    found = []
    for path in glob.glob(os.path.join(place, "**", "*.py"), recursive=True):
        try:
            with open(path, "rb") as handle:
                found.append(handle.read().decode())
        except OSError:
            pass
    return found
"""


def test_without_landlock_a_child_cannot_find_another_students_staged_code():
    """Every child of a root grader is 'nobody', those of this run's other workers and of other graders on
    the host alike. Without Landlock a child listed the staging place and read (or imported) a classmate's
    staged answer; each submission now lies in an enclosure others may pass through but not list."""
    if os.geteuid() != 0:
        pytest.skip("only a root grader's children run under another uid than the grader's")
    from problemgen.code.sandbox import staging

    other = stage({"submission.py": "SECRET_ANSWER = 42\n"}, "submission.py")
    place = staging.staging_parent() or tempfile.gettempdir()
    try:
        with Sandbox(replace(FAST, disable=("landlock",))) as no_landlock:
            run = run_source(no_landlock, HUNT, [Call("hunt", (place,))])
        assert run.confinement["uid"] != 0 and run.outcomes[0].status == "RETURNED"
        assert not any("SECRET_ANSWER" in text for text in run.outcomes[0].value)
    finally:
        other.cleanup()


def test_inputs_held_by_the_fork_server_reach_every_child_unchanged(sandbox):
    """The fork server keeps the class's inputs and each child inherits them: a child that overwrites
    every input it can find (its arguments, and through the garbage collector the other cases' too)
    changes only its own copy."""
    x = np.arange(6.0).reshape(2, 3)
    calls = (Call("f", (x,)), Call("f", (x,)))  # one tuple, as a plan's calls: sent to the server once
    vandal = ("import gc\nimport numpy as np\ndef f(x):\n    for o in gc.get_objects():\n"
              "        if isinstance(o, list):\n            for a in o:\n"
              "                if isinstance(a, np.ndarray) and a.shape == (2, 3) and a.flags.writeable:\n"
              "                    a[...] = -1.0\n    x[...] = -1.0\n    return x\n")
    honest = "def f(x):\n    return x\n"
    spoiled = run_source(sandbox, vandal, calls)
    assert [o.status for o in spoiled.outcomes] == [RETURNED, RETURNED]
    assert all((o.value == -1.0).all() for o in spoiled.outcomes)
    for run in (run_source(sandbox, honest, calls), run_source(sandbox, honest, list(calls))):
        assert [o.status for o in run.outcomes] == [RETURNED, RETURNED]
        assert all(np.array_equal(o.value, x) for o in run.outcomes)


def test_isolation_below_the_minimum_fails_closed_without_running_student_code(tmp_path):
    marker = tmp_path / "ran"
    source = f"open({str(marker)!r}, 'w').close()\nprint('imported')\n"
    with Sandbox(Limits(disable=("landlock", "seccomp")), min_level="seccomp") as weak:
        with pytest.raises(IsolationError, match="below the required 'seccomp'"):
            run_source(weak, source, [Call("f")])
    assert not marker.exists()


def test_disabling_layers_lowers_the_reported_level():
    with Sandbox(Limits(disable=("landlock",))) as box:
        probe = box.probe()
    assert probe.isolation in ("rlimits", "seccomp") and probe.confinement["landlock_abi"] == 0


def test_descendants_that_escape_the_process_group_are_killed_without_seccomp():
    """With seccomp off a child can fork, setsid and double-fork away; the fork server still kills it."""
    source = """
import os, time
def escape():
    read, write = os.pipe()
    if os.fork() == 0:
        os.setsid()
        pid = os.fork()
        if pid == 0:
            time.sleep(600)
        os.write(write, str(pid).encode())
        os._exit(0)
    return int(os.read(read, 32))
"""
    with Sandbox(Limits(disable=("seccomp", "landlock"), case_timeout=3.0)) as weak:
        run = run_source(weak, source, [Call("escape")])
        assert run.isolation == "rlimits" and run.outcomes[0].status == RETURNED
        grandchild = run.outcomes[0].value
        assert not os.path.exists(f"/proc/{grandchild}"), "the escaped grandchild is still alive"


def test_a_dead_fork_server_is_reported_and_replaced():
    import signal
    import threading

    from problemgen.model.core import ProblemgenError

    with Sandbox(Limits(case_timeout=5.0)) as box:
        box.probe()
        victim = box._servers[0].proc.pid
        threading.Timer(0.5, os.kill, (victim, signal.SIGKILL)).start()
        with pytest.raises(ProblemgenError, match="fork server died"):
            run_source(box, "import time\ndef nap():\n    time.sleep(3)\n", [Call("nap")])
        again = run_source(box, "def one():\n    return 1\n", [Call("one")])
        assert again.outcomes[0].value == 1 and box._servers[0].proc.pid != victim


def test_an_oversized_result_is_a_bad_output_for_that_test_only():
    source = """
import numpy as np
def big(n):
    return np.zeros(n)
def small():
    return 3
"""
    limits = Limits(import_timeout=3.0, case_timeout=2.0, result_bytes_per_call=2**20, result_bytes=3 * 2**20)
    with Sandbox(limits) as box:
        calls = [Call("big", (2**18,)), Call("small"), Call("big", (100,))] + [Call("big", (120_000,))] * 4
        run = run_source(box, source, calls)
    statuses = [o.status for o in run.outcomes]
    assert statuses[:3] == [BAD_OUTPUT, RETURNED, RETURNED], run.outcomes[0].message
    assert "per test" in run.outcomes[0].message and run.outcomes[1].value == 3
    assert statuses[3:6] == [RETURNED] * 3 and statuses[6] == BAD_OUTPUT and "together" in run.outcomes[6].message


def test_a_forged_oversized_result_frame_is_skipped_by_the_grader_itself():
    """The child's own size check is a courtesy; a submission writing frames by hand meets the grader's."""
    source = """
import os, struct
def forge():
    size = 3 * 2**20
    os.write(3, struct.pack("<4sBII", b"PGF1", 4, 0, size))
    chunk = b"a" * 2**16
    for _ in range(size // len(chunk)):
        os.write(3, chunk)
    os._exit(0)
def small():
    return 5
"""
    with Sandbox(Limits(import_timeout=3.0, case_timeout=2.0, result_bytes_per_call=2**20)) as box:
        run = run_source(box, source, [Call("forge"), Call("small")])
    assert run.outcomes[0].status == BAD_OUTPUT and "per test" in run.outcomes[0].message
    assert run.outcomes[1].value == 5
