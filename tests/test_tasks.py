"""Coding tasks: specs and starters, secret-seeded hidden cases, safe feedback, stage diagnosis,
static bans, class mode and the `task` / `grade-code` commands."""

from __future__ import annotations

import ast
import csv
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from problemgen.sheets.reports import render
from problemgen.code.sandbox import Limits, Sandbox
from problemgen.code.tasks import all_tasks, get_task
from problemgen.classes.code_class import grade_class
from problemgen.classes.runner import gradebook_csv
from problemgen.code.grade import grade_submission, make_plan
from problemgen.code.tasks.mutation import solution_source

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux")

STATUSES = {"OK", "WRONG", "BAD_OUTPUT", "NO_RESULT", "TIMEOUT", "MEMORY", "CRASH", "IMPORT_ERROR", "BANNED_API"}
CLI = [sys.executable, "-m", "problemgen"]


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(Limits(import_timeout=5.0, case_timeout=3.0)) as box:
        yield box


def solution(task: str) -> str:
    return solution_source(task)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the catalogue of tasks


def test_the_catalogue_holds_the_thirteen_tasks_of_the_curriculum():
    assert set(all_tasks()) >= {
        "softmax", "scaled_dot_product_attention", "causal_mask", "padding_mask", "multi_head_attention",
        "cross_attention", "layer_norm", "rms_norm", "feed_forward", "sinusoidal_encoding", "transformer_block",
        "count_parameters", "kv_cache_step",
    }  # fmt: skip


@pytest.mark.parametrize("name", list(all_tasks()))
def test_spec_names_every_function_and_the_starter_defines_them(name):
    task = get_task(name)
    defined = {n.name for n in ast.parse(task.starter).body if isinstance(n, ast.FunctionDef)}
    assert set(task.functions) <= defined
    for function in task.functions:
        assert f"`{function}(" in task.spec or f"`{function}`" in task.spec
    assert task.public_cases(), "every task shows at least one public example"


@pytest.mark.parametrize("name", list(all_tasks()))
def test_hidden_cases_come_from_the_secret(name):
    task = get_task(name)
    first, again, other = (make_plan(task, secret=s) for s in ("alpha", "alpha", "beta"))
    assert [c.name for c in first.cases] == [c.name for c in again.cases]
    assert all(_same(a.call.args, b.call.args) for a, b in zip(first.cases, again.cases))
    hidden = [(a, b) for a, b in zip(first.cases, other.cases) if a.group == "hidden"]
    assert hidden and not all(_same(a.call.args, b.call.args) for a, b in hidden)
    public_only = make_plan(task, public_only=True)
    assert {c.group for c in public_only.cases} == {"public"}


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and np.array_equal(a, b)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def test_hidden_attention_inputs_do_not_saturate_the_softmax():
    from problemgen.code.inputs import not_saturated

    plan = make_plan(get_task("scaled_dot_product_attention"), secret="saturation")
    for case in plan.cases:
        assert not_saturated(case.expected[1]), case.name
        assert "no_scaling" in {v.tag for v in case.variants}, f"{case.name}: forgetting 1/sqrt(d_k) would go unnoticed"


def test_kv_cache_task_matches_the_full_causal_computation():
    """The expected step equals the corresponding rows of full causal multi-head attention."""
    import reference as ref

    plan = make_plan(get_task("kv_cache_step"), secret="kv")
    for case in plan.cases:
        x_new, p, h, cache_k, _ = case.call.args
        T = cache_k.shape[2]
        if T == 0:
            full, _ = ref.multi_head_attention(x_new, x_new, p, h, mask=ref.causal_mask(x_new.shape[1]))
            assert np.allclose(case.expected[0], full)


# --------------------------------------------------------------------------- grading behaviour


def test_the_starter_scores_zero_with_a_crash_per_test(sandbox, tmp_path):
    plan = make_plan(get_task("layer_norm"), secret="starter")
    report = grade_submission(plan, write(tmp_path, "layer_norm.py", get_task("layer_norm").starter), sandbox)
    assert report.score == 0.0
    assert {r.status for r in report.results} == {"CRASH"}
    assert all("NotImplementedError" in r.feedback for r in report.results)


REMEMBERING_SOFTMAX = """
import numpy as np
_seen = []

def softmax(x, axis=-1):
    x = np.asarray(x, float)
    for old, out in _seen:  # x = an earlier input + a constant: answer from memory, as the law expects
        if old.shape == x.shape and np.allclose(x - old, (x - old).flat[0]):
            return out
    if x.ndim == 1:  # right on vectors only
        out = np.exp(x - x.max()) / np.exp(x - x.max()).sum()
    else:  # x**2 / sum(x**2): not shift-invariant
        out = x**2 / (x**2).sum(axis=axis, keepdims=True)
    _seen.append((x.copy(), out))
    return out
"""


def test_a_law_cannot_be_earned_by_remembering_its_first_input(sandbox, tmp_path):
    """The calls of a law run in separate children, so a submission that recognises softmax(x + c) as a
    shift of an earlier input and returns the earlier output from memory does not confirm the law."""
    plan = make_plan(get_task("softmax"), secret="memory")
    report = grade_submission(plan, write(tmp_path, "softmax.py", REMEMBERING_SOFTMAX), sandbox)
    law = {r.name: r for r in report.results}["property/shift-invariance"]
    assert any(r.passed for r in report.results if r.group == "hidden")  # so laws could earn credit
    assert not law.passed and law.status == "WRONG", law
    honest = grade_submission(plan, write(tmp_path, "right.py", solution("softmax")), sandbox)
    assert {r.name: r for r in honest.results}["property/shift-invariance"].passed


FINDING_HELD_INPUTS_SOFTMAX = """
import gc
import numpy as np

def _right(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        return _right(x, axis)  # right on vectors only
    for held in (v for o in gc.get_objects() if isinstance(o, (list, tuple)) for v in o
                 if type(v) is np.ndarray and v.shape == x.shape and not np.array_equal(v, x)):
        shift = x - held
        if np.ptp(shift) < 1e-9 and shift.flat[0] > 1e-6:  # x = a held input + c: the law's second call
            x = held
            break
    return x**2 / (x**2).sum(axis=axis, keepdims=True)  # not shift-invariant
"""


def test_the_fresh_child_that_re_asks_a_law_does_not_hold_the_laws_first_input(sandbox, tmp_path):
    """The re-asking child once came from a fork server holding every input of the plan, which a
    submission could find with gc and answer the law's second call from."""
    plan = make_plan(get_task("softmax"), secret="held")
    report = grade_submission(plan, write(tmp_path, "softmax.py", FINDING_HELD_INPUTS_SOFTMAX), sandbox)
    assert any(r.passed for r in report.results if r.group == "hidden")
    assert {r.name: r for r in report.results}["property/shift-invariance"].status == "WRONG"


LAW_SPENDING_SOFTMAX = """
import numpy as np
_UNSET = object()

def softmax(x, axis=_UNSET):
    if axis is _UNSET:  # only the shift law calls without an axis: the same large output for both
        return np.arange(SIZE, dtype=float)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
"""


def test_the_child_that_re_asks_a_law_reads_only_what_is_left_of_the_submissions_result_bytes(tmp_path, monkeypatch):
    """The re-asking child once started with a fresh budget of result bytes, so a submission could
    return up to one more cap than the stated total. Here the law's two large outputs spend most of the
    total in the first child; the re-asked one must be cut as it would be in the first child."""
    size, total = 2**13, 2 * 2**16 + 2**15  # two outputs of 64 KiB fit the total, a third does not
    limits = Limits(import_timeout=5.0, case_timeout=3.0, result_bytes_per_call=2**18, result_bytes=total)
    plan = make_plan(get_task("softmax"), secret="budget")
    with Sandbox(limits) as box:
        runs, run = [], box.run

        def recorded(*args, **kwargs):
            runs.append(run(*args, **kwargs))
            return runs[-1]

        monkeypatch.setattr(box, "run", recorded)
        source = LAW_SPENDING_SOFTMAX.replace("SIZE", str(size))
        report = grade_submission(plan, write(tmp_path, "softmax.py", source), box)
        # the same total overrun in the first child: outputs large enough that the law's second one is cut there
        direct = grade_submission(plan, write(tmp_path, "big.py", LAW_SPENDING_SOFTMAX.replace("SIZE", str(size * 3 // 2))), box)
    assert len(runs) == 3, "the first submission's law was not re-asked"  # two runs, then one for the second file
    read = sum(np.asarray(o.value).nbytes for r in runs[:2] for o in r.outcomes if o.status == "RETURNED")
    assert read <= total
    law = {r.name: r for r in report.results}["property/shift-invariance"]
    first_child = {r.name: r for r in direct.results}["property/shift-invariance"]
    assert law.status == first_child.status == "BAD_OUTPUT"
    assert law.feedback == first_child.feedback and f"exceed {total} bytes" in law.feedback, law.feedback


def test_hidden_feedback_shows_where_but_never_the_expected_values(sandbox, tmp_path):
    source = solution("scaled_dot_product_attention").replace(" / np.sqrt(d_k)", " / 1.5")
    plan = make_plan(get_task("scaled_dot_product_attention"), secret="leak")
    report = grade_submission(plan, write(tmp_path, "attn.py", source), sandbox)
    hidden = [r for r in report.results if r.group == "hidden" and not r.passed]
    public = [r for r in report.results if r.group == "public" and not r.passed]
    assert hidden and public
    for result in hidden:
        assert "first at index" in result.feedback
        assert "got " not in result.feedback and not re.search(r"expected -?[0-9.]", result.feedback)
    assert any("expected 0." in r.feedback or "expected -0." in r.feedback or "expected 1" in r.feedback for r in public)
    case_values = [float(v) for case in plan.cases if case.group == "hidden" for v in np.ravel(case.expected[0])[:5]]
    text = render(report, "json")
    assert not any(f"{v:.6g}" in text for v in case_values if abs(v) > 1e-3)


def test_a_known_misconception_is_named_with_its_hint(sandbox, tmp_path):
    source = solution("layer_norm").replace("np.sqrt(var + eps)", "(np.sqrt(var) + eps)")
    report = grade_submission(make_plan(get_task("layer_norm"), secret="eps"), write(tmp_path, "ln.py", source), sandbox)
    named = [r for r in report.results if r.mistake == "eps_outside_sqrt"]
    assert named and "ε added after the square root" in named[0].feedback and "Hint:" in named[0].feedback


@pytest.mark.parametrize(("task", "old", "new", "stage"), [
    ("multi_head_attention", "return x.transpose(0, 2, 1, 3).reshape(B, L, h * d)", "return x.reshape(B, L, h * d)", "merge_heads"),
    ("multi_head_attention", 'out = merge_heads(weights @ v) @ params["w_o"]', "out = merge_heads(weights @ v)", "output projection"),
    ("multi_head_attention", " / np.sqrt(q.shape[-1])", "", "attention weights"),
    ("transformer_block", "return x + gelu_tanh(", "return gelu_tanh(", "feed-forward sublayer"),
    ("transformer_block", "var = ((x - mean) ** 2).mean(", "var = 2 * ((x - mean) ** 2).mean(", "layer norm"),
])  # fmt: skip
def test_multi_stage_tasks_name_the_first_diverging_stage(task, old, new, stage, sandbox, tmp_path):
    source = solution(task)
    assert source.count(old) == 1
    report = grade_submission(make_plan(get_task(task), secret="stages"), write(tmp_path, f"{task}.py", source.replace(old, new)), sandbox)
    failing = [r for r in report.results if r.group == "hidden" and not r.passed]
    assert failing and all(f"First diverging stage for this input: {stage}" in r.feedback for r in failing)


def test_banned_shortcuts_are_reported_and_the_code_is_not_run(sandbox, tmp_path):
    source = "from scipy.special import softmax as sm\nimport numpy as np\ndef softmax(x, axis=-1):\n    return sm(x, axis=axis)\n"
    report = grade_submission(make_plan(get_task("softmax"), secret="ban"), write(tmp_path, "s.py", source), sandbox)
    assert {r.status for r in report.results} == {"BANNED_API"} and report.score == 0.0
    assert "line 1: uses scipy.special.softmax" in report.results[0].feedback
    assert report.meta["ran"] is False and report.meta["isolation"]


def test_syntax_errors_and_missing_functions_are_import_errors(sandbox, tmp_path):
    plan = make_plan(get_task("softmax"), secret="syntax")
    broken = grade_submission(plan, write(tmp_path, "a.py", "def softmax(x:\n"), sandbox)
    assert {r.status for r in broken.results} == {"IMPORT_ERROR"} and "line 1: SyntaxError" in broken.results[0].feedback
    missing = grade_submission(plan, write(tmp_path, "b.py", "def soft_max(x, axis=-1):\n    return x\n"), sandbox)
    assert {r.status for r in missing.results} == {"IMPORT_ERROR"} and "no function named 'softmax'" in missing.results[0].feedback


def test_reports_are_deterministic_and_well_formed(sandbox, tmp_path):
    path = write(tmp_path, "sm.py", solution("softmax").replace("np.max(x, axis=axis, keepdims=True)", "0"))
    plan = make_plan(get_task("softmax"), secret="same")
    first, second = (grade_submission(plan, path, sandbox) for _ in range(2))
    assert render(first, "json") == render(second, "json")
    data = json.loads(render(first, "json"))
    assert 0 <= data["score"] < 1 and data["meta"]["isolation"] == first.meta["isolation"]
    assert {p["status"] for g in data["problems"] for p in g["parts"]} <= STATUSES
    ET.fromstring(render(first, "junit").split("\n", 1)[1])
    assert json.loads(render(first, "gradescope"))["tests"]


# --------------------------------------------------------------------------- class mode


def test_class_mode_writes_gradebook_reports_and_misconception_counts(sandbox, tmp_path):
    roster = tmp_path / "class"
    (roster / "bob").mkdir(parents=True)
    write(roster, "alice.py", solution("padding_mask"))
    write(roster / "bob", "submission.py", solution("padding_mask").replace("< lengths", "<= lengths"))
    write(roster, "=cmd.py", solution("padding_mask").replace("< lengths", "<= lengths"))
    write(roster, "notes.txt", "not a submission")
    plan = make_plan(get_task("padding_mask"), secret="class")
    progress = []
    run = grade_class(plan, roster, sandbox, tmp_path / "out", "junit", lambda done, total: progress.append((done, total)))
    assert [r.student for r in run.records] == ["_cmd", "alice", "bob", "notes.txt"]  # file-name safe, sorted
    assert progress[-1] == (4, 4)
    rows = list(csv.DictReader((tmp_path / "out" / "gradebook.csv").open(encoding="utf-8")))
    assert [r["student"] for r in rows] == ["_cmd", "alice", "bob", "notes.txt"]
    assert [r["status"] for r in rows][:3] == ["graded"] * 3 and rows[3]["status"].startswith("refused: unsupported type")
    assert rows[1]["score"] == "1.0000"
    assert run.summary["misconceptions"][0]["tag"] == "padding_off_by_one"
    assert run.summary["misconceptions"][0]["students"] == ["_cmd", "bob"]
    assert "2 of 3 students: padding mask keeps one pad position" in (tmp_path / "out" / "summary.txt").read_text()
    assert sorted(p.name for p in (tmp_path / "out" / "reports").iterdir()) == ["_cmd.xml", "alice.xml", "bob.xml"]


def test_gradebook_neutralises_spreadsheet_formulas():
    from problemgen.classes.rows import Record

    text = gradebook_csv([Record("=HYPERLINK(1)", "graded")])
    assert "'=HYPERLINK" in text


# --------------------------------------------------------------------------- commands


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The checkout's own ``problemgen`` (first on PYTHONPATH), from any working directory."""
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, cwd=cwd, env=env)


@pytest.mark.slow
def test_task_list_and_show_with_starter(tmp_path):
    listing = run_cli("task", "list")
    assert listing.returncode == 0 and len(listing.stdout.splitlines()) == len(all_tasks())
    target = tmp_path / "softmax.py"
    shown = run_cli("task", "show", "softmax", "--starter", str(target))
    assert shown.returncode == 0 and "## Public examples" in shown.stdout and target.read_text() == get_task("softmax").starter
    again = run_cli("task", "show", "softmax", "--starter", str(target))
    assert again.returncode == 2 and "already exists" in again.stderr
    unknown = run_cli("task", "show", "no_such_task")
    assert unknown.returncode == 2 and "unknown task" in unknown.stderr


@pytest.mark.slow
def test_grade_code_json_and_fail_under(tmp_path):
    path = write(tmp_path, "rms.py", solution("rms_norm"))
    graded = run_cli("grade-code", str(path), "--task", "rms_norm", "--format", "json")
    assert graded.returncode == 0, graded.stderr
    data = json.loads(graded.stdout)
    assert data["score"] == 1.0 and data["isolation"] == data["meta"]["isolation"] and data["meta"]["hidden_tests"] == "random"
    wrong = write(tmp_path, "wrong.py", solution("rms_norm").replace("gamma * x", "x"))
    below = run_cli("grade-code", str(wrong), "--task", "rms_norm", "--fail-under", "0.9", "-o", str(tmp_path / "r.txt"))
    assert below.returncode == 1 and below.stdout == "" and ": wrong" in (tmp_path / "r.txt").read_text()
    missing_out = run_cli("grade-code", str(tmp_path), "--task", "rms_norm")
    assert missing_out.returncode == 2 and "-o OUT_DIR" in missing_out.stderr


def test_grade_code_exits_3_when_isolation_is_below_the_minimum(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from problemgen.cli import cli
    from problemgen.classes import grade_code as service

    class WeakSandbox(Sandbox):
        def __init__(self, limits, jobs=1, min_level="process"):
            super().__init__(Limits(disable=("seccomp", "landlock")), jobs, min_level)

    monkeypatch.setattr(service, "Sandbox", WeakSandbox)
    path = write(tmp_path, "sm.py", "print('ran')\n" + solution("softmax"))
    result = CliRunner().invoke(cli, ["grade-code", str(path), "--task", "softmax", "--min-isolation", "seccomp"])
    assert result.exit_code == 3 and "below the required 'seccomp'" in result.output and "ran" not in result.output


@pytest.mark.slow
def test_grade_code_draws_a_progress_bar_only_on_request_when_stderr_is_not_a_terminal(tmp_path):
    """A CI log (stderr a pipe) gets no bar unless --progress asks for one, as with `grade`."""
    submissions = tmp_path / "class"
    submissions.mkdir()
    for student in ("ada", "bo"):
        write(submissions, f"{student}.py", solution("softmax"))
    quiet = run_cli("grade-code", str(submissions), "--task", "softmax", "--public-only", "-o", str(tmp_path / "a"))
    loud = run_cli("grade-code", str(submissions), "--task", "softmax", "--public-only", "-o", str(tmp_path / "b"),
                   "--progress")
    assert quiet.returncode == loud.returncode == 0, quiet.stderr + loud.stderr
    assert "grading" not in quiet.stderr and "grading" in loud.stderr


def _filled(value, fill):
    """The reference's output with every float array replaced by ``fill`` (lists and tuples kept)."""
    if isinstance(value, (list, tuple)):
        items = [_filled(item, fill) for item in value]
        return value if all(a is b for a, b in zip(items, value)) else items
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return np.full(value.shape, fill)
    return value


@pytest.mark.parametrize("fill", [np.inf, -np.inf, np.nan, 0.0])
def test_no_property_is_earned_by_outputs_that_are_constant_or_not_finite(fill):
    """inf agrees with inf, so an output of all +inf once satisfied six invariance laws (softmax shift,
    key order, permutation, padding, position-wise FFN, causality) that a zero output could not."""
    from problemgen.code.grade import _property_result
    from problemgen.code.sandbox import RETURNED, Outcome

    for task in all_tasks().values():
        plan = make_plan(task, secret="laws")
        for prop, shapes in zip(plan.properties, plan.property_forms):
            right = [task.solve(call) for call in prop.calls]
            if all(_filled(value, fill) is value for value in right):
                continue  # no float output (a Boolean mask, a count): nothing to fill
            outcomes = [Outcome(RETURNED, _filled(value, fill)) for value in right]
            assert not _property_result(prop, outcomes, shapes).passed, (task.name, prop.name, fill)


def test_a_submission_whose_file_name_is_not_utf8_gets_a_report_in_every_format(sandbox, tmp_path):
    """`l\\xf6sung.py`, as unzipping a Windows archive may name it, once crashed the JSON report."""
    path = write(tmp_path, "l\udcf6sung.py", solution("softmax"))  # the byte 0xF6, not the letter ö
    report = grade_submission(make_plan(get_task("softmax"), public_only=True), path, sandbox)
    assert report.score == 1.0 and report.title == "softmax: l\\xf6sung"
    for fmt in ("json", "junit", "md", "text", "gradescope"):
        render(report, fmt).encode("utf-8")


def test_every_report_format_states_the_isolation_level_a_submission_ran_at(sandbox, tmp_path):
    """The README promises it of every report; only JSON carried it."""
    report = grade_submission(make_plan(get_task("softmax"), public_only=True),
                              write(tmp_path, "softmax.py", solution("softmax")), sandbox)
    level = report.meta["isolation"]
    for fmt in ("text", "md", "junit", "gradescope", "json"):
        assert "isolation" in render(report, fmt) and level in render(report, fmt), fmt
