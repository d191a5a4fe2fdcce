"""Red team: hostile submissions against the sandboxed code grader.

Each submission in ``submissions/`` (stored as ``.py.txt`` so nothing imports it by accident) attacks
the grader through the softmax task. For every one we assert the status of each check, a zero score
for the checks it attacked, that the grader is alive and leaves no process behind, that the report is
well-formed in every format, and that nothing it tried to write exists. A control at the end shows
the same sandbox still grades an honest solution at 100%.
"""

from __future__ import annotations

import json
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from problemgen.sheets.reports import render
from problemgen.code.sandbox import Call, Limits, Sandbox, rank, stage
from problemgen.code.tasks import get_task
from problemgen.code.grade import grade_submission, make_plan

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux")

HERE = Path(__file__).parent
SUBMISSIONS = HERE / "submissions"
SOLUTION = HERE.parents[1] / "problemgen" / "code" / "tasks" / "solutions" / "softmax.py"
SECRET = "red-team-secret-value-0451"
LIMITS = Limits(import_timeout=3.0, case_timeout=1.0, max_restarts=1, memory_mb=512)
MARKERS = ("/tmp/problemgen-redteam-subprocess", "/tmp/problemgen-redteam-system", "/tmp/problemgen-redteam-written")

# submission -> the statuses its checks may end with (every check must end with one of them, score 0)
EXPECTED: dict[str, set[str]] = {
    "exit_at_import": {"IMPORT_ERROR"},
    "os_exit_at_import": {"IMPORT_ERROR"},
    "exit_in_call": {"CRASH"},
    "os_exit_in_call": {"NO_RESULT"},
    "self_sigkill": {"MEMORY", "NO_RESULT"},
    "monkeypatch_comparisons": {"WRONG"},
    "monkeypatch_builtins": {"WRONG"},
    "lying_eq_object": {"BAD_OUTPUT"},
    "lying_ndarray_subclass": {"WRONG"},
    "array_interface_object": {"BAD_OUTPUT"},
    "frame_inspection": {"WRONG"},
    "read_grader_files": {"CRASH"},
    "import_grader": {"CRASH"},
    "import_grader_by_path": {"CRASH"},
    "steal_secret": {"CRASH"},
    "forge_report_stdout": {"WRONG"},
    "forge_exception_message": {"CRASH"},
    "forge_frames": {"BAD_OUTPUT", "NO_RESULT"},
    "garbage_on_result_channel": {"BAD_OUTPUT", "NO_RESULT"},
    "close_result_channel": {"NO_RESULT"},
    "redirect_result_channel": {"NO_RESULT", "TIMEOUT"},
    "infinite_loop": {"TIMEOUT", "NO_RESULT"},
    "infinite_loop_at_import": {"TIMEOUT"},
    "sleep_forever": {"TIMEOUT", "NO_RESULT"},
    "ignore_signals": {"TIMEOUT", "NO_RESULT"},
    "memory_bomb_numpy": {"MEMORY"},
    "memory_bomb_python": {"MEMORY"},
    "fork_bomb": {"CRASH"},
    "ctypes_fork": {"CRASH"},
    "subprocess_shell": {"CRASH"},
    "os_system": {"WRONG"},
    "socket_connect": {"CRASH"},
    "socket_unix": {"CRASH"},
    "daemon_thread": {"WRONG"},
    "lingering_thread": {"WRONG"},
    "daemon_process": {"CRASH"},
    "huge_output": {"WRONG"},
    "huge_result": {"BAD_OUTPUT", "MEMORY"},
    "deep_result": {"BAD_OUTPUT"},
    "wide_result": {"BAD_OUTPUT"},
    "segfault": {"CRASH", "NO_RESULT"},  # after max_restarts crashes the rest are not run
    "stack_overflow": {"CRASH", "NO_RESULT"},
    "write_outside": {"CRASH"},
    "write_own_directory": {"CRASH"},
    "kill_parent": {"CRASH"},
    "kill_everything": {"CRASH"},
    "raise_limits": {"CRASH"},
    "raw_syscalls": {"CRASH"},
    "mutate_inputs": {"WRONG"},
    "nan_output": {"WRONG"},
    "return_none": {"BAD_OUTPUT"},
    "object_array": {"BAD_OUTPUT"},
    "evil_exception_str": {"TIMEOUT", "NO_RESULT"},
    "huge_exception_message": {"CRASH"},
    "static_banned_torch": {"BANNED_API"},
    "dynamic_import_torch": {"CRASH"},
}

# Attacks whose defence is a confinement layer: below that level the test is skipped, not weakened.
# (Without seccomp, root's kill(-1, SIGKILL) would take the machine's test runner down with it.)
NEEDS = dict.fromkeys(
    ("fork_bomb", "ctypes_fork", "subprocess_shell", "os_system", "socket_connect", "socket_unix", "daemon_process",
     "write_outside", "write_own_directory", "kill_parent", "kill_everything", "raw_syscalls"), "seccomp",
) | dict.fromkeys(
    ("read_grader_files", "import_grader", "import_grader_by_path", "dynamic_import_torch", "steal_secret"),
    "seccomp+landlock",
) | dict.fromkeys(("memory_bomb_numpy", "memory_bomb_python", "raise_limits", "huge_result"), "rlimits")  # fmt: skip


@pytest.fixture(scope="module")
def grader():
    os.environ["PROBLEMGEN_GRADER_SECRET"] = SECRET  # present in the grader, must never reach a child
    try:
        plan = make_plan(get_task("softmax"))
        with Sandbox(LIMITS) as sandbox:
            yield plan, sandbox
    finally:
        del os.environ["PROBLEMGEN_GRADER_SECRET"]


def test_the_suite_covers_every_stored_submission_and_at_least_thirty_attacks():
    stored = {p.name.removesuffix(".py.txt") for p in SUBMISSIONS.glob("*.py.txt")}
    assert stored == set(EXPECTED) and len(EXPECTED) >= 30


def _children_of(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != b"Z":
                found.append(int(name))
    return found


def assert_well_formed(report) -> None:
    data = json.loads(render(report, "json"))
    assert 0.0 <= data["score"] <= 1.0 and data["meta"]["isolation"]
    ET.fromstring(render(report, "junit").split("\n", 1)[1])
    json.loads(render(report, "gradescope"))
    for fmt in ("text", "md"):
        for line in render(report, fmt).splitlines():
            assert not line.lstrip().startswith(("::", "##[", "##vso")), line
            assert "\x1b" not in line and "\r" not in line
    assert SECRET not in render(report, "json")


def assert_grader_alive(sandbox: Sandbox) -> None:
    staged = stage({"ping.py": "def ping():\n    return 1\n"}, "ping.py")
    try:
        assert sandbox.run(staged, [Call("ping")]).outcomes[0].value == 1
    finally:
        staged.cleanup()
    for server in sandbox._servers:  # every process a run started is gone once the report exists
        assert server.alive() and _children_of(server.proc.pid) == []


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hostile_submission(name, grader, tmp_path):
    plan, sandbox = grader
    level = sandbox.probe().isolation
    if rank(level) < rank(NEEDS.get(name, "process")):
        pytest.skip(f"{name} needs {NEEDS[name]!r}; this machine reaches {level!r}")
    inputs_before = [np.copy(a) for case in plan.cases for a in case.call.args if isinstance(a, np.ndarray)]
    path = tmp_path / "softmax.py"
    path.write_text((SUBMISSIONS / f"{name}.py.txt").read_text(encoding="utf-8"), encoding="utf-8")
    report = grade_submission(plan, path, sandbox)
    for r in report.results:
        if r.group == "properties" and r.status == "OK":
            continue  # a law that the attack's garbage happens to obey (e.g. uniform rows sum to 1)
        allowed = EXPECTED[name] | ({"BAD_OUTPUT"} if r.group == "properties" else set())  # outputs unusable for a law
        assert r.status in allowed, (r.name, r.status, r.feedback[:300])
        assert r.score == 0.0
    assert all(r.score == 0.0 for r in report.results if r.group != "properties") and report.score < 0.25
    assert_well_formed(report)
    assert_grader_alive(sandbox)
    for marker in MARKERS:
        assert not os.path.exists(marker), f"{marker} was written"
    assert not (tmp_path / "softmax_planted.py").exists()
    inputs_after = [a for case in plan.cases for a in case.call.args if isinstance(a, np.ndarray)]
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(inputs_before, inputs_after))


def test_captured_output_is_capped_and_inert(grader, tmp_path):
    plan, sandbox = grader
    for name in ("huge_output", "forge_report_stdout", "daemon_thread"):
        path = tmp_path / f"{name}.py"
        path.write_text((SUBMISSIONS / f"{name}.py.txt").read_text(encoding="utf-8"), encoding="utf-8")
        report = grade_submission(plan, path, sandbox)
        for stream in ("stdout", "stderr"):
            text = report.meta.get(stream, "")
            assert len(text) < 3 * LIMITS.output_bytes
            assert all(line.startswith("| ") for line in text.splitlines())
            assert "\x1b" not in text and "\r" not in text and "\u202e" not in text


def test_the_secret_is_invisible_to_the_child(grader, tmp_path):
    plan, sandbox = grader
    if rank(sandbox.probe().isolation) < rank("seccomp+landlock"):
        pytest.skip("reading the parent's /proc entries is only blocked with Landlock")
    path = tmp_path / "steal.py"
    path.write_text((SUBMISSIONS / "steal_secret.py.txt").read_text(encoding="utf-8"), encoding="utf-8")
    report = grade_submission(plan, path, sandbox)
    assert all("secret=None" in r.feedback for r in report.results), report.results[0].feedback


@pytest.mark.parametrize(("files", "reason"), [
    ({"softmax.py": "import numpy\n", "numpy.py": "VALUE = 1\n"}, "shadows"),
    ({"softmax.py": "x = 1\n", "sitecustomize.py": "import os\n"}, "not accepted"),
    ({"softmax.py": "x = 1\n", "conftest.py": "import os\n"}, "not accepted"),
    ({"softmax.py": "x = 1\n", "helper.pyc": "\0\0"}, "compiled"),
    ({"softmax.py": "x = 1\n", "evil.pth": "import os; os.system('id')\n"}, "path-configuration"),
])  # fmt: skip
def test_planted_files_reject_the_whole_submission(files, reason, grader, tmp_path):
    plan, sandbox = grader
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    report = grade_submission(plan, tmp_path, sandbox)
    assert {r.status for r in report.results} == {"IMPORT_ERROR"} and report.score == 0.0
    assert reason in report.results[0].feedback
    assert_well_formed(report)


def test_code_hidden_by_a_utf7_declaration_rejects_the_submission_naming_the_codec(grader, tmp_path):
    """Under ``# coding: utf-7``, ``+AAo-`` is a line break: the static check once read a comment where
    Python ran ``import torch``."""
    plan, sandbox = grader
    path = tmp_path / "softmax.py"
    path.write_text("# coding: utf-7\n# +AAo-import torch\n" + SOLUTION.read_text(encoding="utf-8"), encoding="utf-8")
    report = grade_submission(plan, path, sandbox)
    assert {r.status for r in report.results} == {"IMPORT_ERROR"} and report.score == 0.0
    assert "submission rejected: softmax.py: declares coding utf-7: Python would" in report.results[0].feedback
    assert_well_formed(report)


@pytest.mark.parametrize("declaration", ["# -*- coding: utf-8 -*-\n", "# -*- coding: latin-1 -*-\n"])
def test_a_coding_declaration_that_reads_the_file_as_utf8_does_still_grades_fully(declaration, grader, tmp_path):
    plan, sandbox = grader
    path = tmp_path / "softmax.py"
    path.write_text(declaration + SOLUTION.read_text(encoding="utf-8"), encoding="utf-8")
    assert SOLUTION.read_bytes().isascii()  # so latin-1 reads it as UTF-8 does
    assert grade_submission(plan, path, sandbox).score == 1.0


def test_a_symlink_to_a_secret_file_is_rejected(grader, tmp_path):
    plan, sandbox = grader
    (tmp_path / "softmax.py").write_text("from helper import *\n")
    (tmp_path / "helper.py").symlink_to("/etc/passwd")
    report = grade_submission(plan, tmp_path, sandbox)
    assert {r.status for r in report.results} == {"IMPORT_ERROR"} and "symbolic" in report.results[0].feedback


def test_control_the_same_sandbox_still_grades_an_honest_solution_fully(grader):
    plan, sandbox = grader
    report = grade_submission(plan, SOLUTION, sandbox)
    assert report.score == 1.0 and report.meta["isolation"] == sandbox.probe().isolation
