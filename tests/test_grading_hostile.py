"""Hostile answer files (tests/hostile/): each gets a clean invalid/malformed verdict; nothing runs or hangs.

"Nothing executed" is checked with an audit hook (PEP 578) that records process launches, ``exec`` of
code mentioning the injected names, and opens of the files the injections aim at, while grading runs in
an empty working directory where the injections would leave a ``PWNED`` file.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "grading"))
import grading_fixture as fx  # noqa: E402

from problemgen.sheets.answersheet import MAX_SHEET_BYTES  # noqa: E402
from problemgen.sheets.grading import grade_sheet  # noqa: E402
from problemgen.sheets.reports import FORMATS, render  # noqa: E402

HOSTILE = Path(__file__).parent / "hostile"
VARIANT = fx.fixture_variant()

_events: list[tuple] = []
_watching = False
_SUSPICIOUS_NAMES = {"system", "__import__", "popen", "getcwd", "__subclasses__", "__class__"}


def _audit(event: str, args: tuple) -> None:
    if not _watching:
        return
    if event in ("os.system", "subprocess.Popen", "os.posix_spawn", "os.fork", "os.exec", "os.spawn"):
        _events.append((event, args))
    elif event == "exec" and args and _SUSPICIOUS_NAMES & set(getattr(args[0], "co_names", ())):
        _events.append((event, args[0].co_names))
    elif event == "open" and args and any(s in str(args[0]) for s in ("passwd", "PWNED")):
        _events.append((event, args[0]))


sys.addaudithook(_audit)


@contextmanager
def watched(cwd: Path, monkeypatch, seconds: int = 30):
    """Grade inside ``cwd`` with the audit hook on and a generous alarm against hangs (not a speed test)."""
    global _watching

    def on_alarm(signum, frame):
        raise AssertionError(f"grading did not finish within {seconds} s")

    monkeypatch.chdir(cwd)
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    _events.clear()
    _watching = True
    try:
        yield
    finally:
        _watching = False
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert _events == [], f"grading did something it must not: {_events}"
    assert not (cwd / "PWNED").exists()


def grade(path: Path, tmp_path: Path, monkeypatch):
    with watched(tmp_path, monkeypatch):
        report = grade_sheet(VARIANT, path)
        for fmt in FORMATS:
            render(report, fmt)
    return report, {r.name: r for r in report.results}


EXPECTED = {
    "code_injection.toml": {
        "p1.top": "invalid", "p1.weights": "invalid", "p2.w1": "invalid", "p2.half": "invalid",
        "p3.params": "invalid", "p3.scores_shape": "invalid", "p4.bool_mask": "invalid",
        "p5.why_scale": "invalid", "p5.single": "invalid", "p5.name": "wrong",
    },
    "exponent_bombs.toml": {
        "p1.top": "invalid", "p1.weights": "invalid", "p2.w1": "invalid", "p2.half": "invalid", "p3.params": "invalid",
    },
    "deep_nesting.toml": {
        "p1.top": "invalid", "p1.weights": "invalid", "p2.w1": "invalid", "p2.half": "invalid", "p3.params": "correct",
    },
    "huge_numbers.toml": {
        "p1.top": "invalid", "p2.half": "invalid", "p2.w1": "invalid", "p3.params": "wrong",
        "p3.scores_shape": "wrong", "p4.row": "invalid",
    },
    "broadcast_shapes.toml": {
        "p1.weights": "wrong", "p1.top": "invalid", "p4.row": "invalid", "p4.bool_mask": "wrong",
        "p4.zero_one": "wrong", "p4.additive": "wrong",
    },
    "nan_inf.toml": {
        "p1.top": "invalid", "p1.weights": "invalid", "p2.half": "invalid", "p2.w1": "invalid",
        "p3.params": "invalid", "p4.additive": "correct", "p4.zero_one": "invalid",
    },
    "duplicates.toml": {"p1.top": "invalid", "p3.params": "invalid"},
    "confusables.toml": {
        "p1.top": "invalid", "p2.half": "invalid", "p2.w1": "invalid", "p3.params": "invalid",
        "p3.scores_shape": "invalid", "p4.zero_one": "invalid", "p4.row": "wrong", "p5.name": "invalid",
        "p5.single": "invalid",
    },
    "booleans_as_numbers.toml": {"p1.top": "invalid", "p1.weights": "invalid", "p3.params": "invalid",
                                 "p4.zero_one": "correct"},  # true/false is read as 1/0 in a 0/1 mask
    "bom.toml": {"p3.params": "correct"},
    "literal_limits.toml": {"p1.top": "invalid", "p1.weights": "invalid", "p2.w1": "invalid", "p2.half": "invalid",
                            "p3.params": "invalid"},
}
MALFORMED = ["invalid_utf8.toml", "binary_garbage.toml", "not_toml.toml"]


def test_every_hostile_file_has_an_expectation():
    assert sorted(p.name for p in HOSTILE.glob("*.toml")) == sorted([*EXPECTED, *MALFORMED])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hostile_parts_get_clean_verdicts_and_the_rest_is_graded(name, tmp_path, monkeypatch):
    report, results = grade(HOSTILE / name, tmp_path, monkeypatch)
    assert "error" not in report.meta
    got = {part: results[part].status for part in EXPECTED[name]}
    assert got == EXPECTED[name]
    for part, result in results.items():
        if result.status == "invalid":
            assert result.feedback and "\n" not in result.feedback and "Traceback" not in result.feedback
        if part not in EXPECTED[name]:
            assert (result.status, result.feedback) == ("wrong", "no answer")


@pytest.mark.parametrize("name", MALFORMED)
def test_unreadable_files_are_malformed_with_every_part_invalid(name, tmp_path, monkeypatch):
    report, results = grade(HOSTILE / name, tmp_path, monkeypatch)
    assert report.meta["error"]
    assert {r.status for r in results.values()} == {"invalid"}


def test_messages_name_the_problem(tmp_path, monkeypatch):
    _, results = grade(HOSTILE / "confusables.toml", tmp_path, monkeypatch)
    assert "ARABIC-INDIC DIGIT ZERO" in results["p1.top"].feedback
    assert "FULLWIDTH DIGIT ONE" in results["p4.zero_one"].feedback
    assert "(1, 1)" in results["p4.row"].feedback  # "\u22120.25" is read as -0.25: a wrong entry, not a format error
    assert "CYRILLIC SMALL LETTER A" in results["p5.name"].feedback
    _, results = grade(HOSTILE / "duplicates.toml", tmp_path, monkeypatch)
    assert "more than once" in results["p1.top"].feedback
    _, results = grade(HOSTILE / "broadcast_shapes.toml", tmp_path, monkeypatch)
    assert "double brackets" in results["p4.row"].feedback
    assert "2x2" in results["p1.weights"].feedback


def test_a_bom_is_tolerated_with_a_warning(tmp_path, monkeypatch):
    report, _ = grade(HOSTILE / "bom.toml", tmp_path, monkeypatch)
    assert any("byte-order mark" in w for w in report.meta["warnings"])


def test_a_file_over_the_size_cap_with_a_million_digit_number_is_malformed(tmp_path, monkeypatch):
    path = tmp_path / "huge.toml"
    path.write_text("[p3]\nparams = " + "9" * 1_000_000 + "\n", encoding="ascii")
    assert path.stat().st_size > MAX_SHEET_BYTES
    report, _ = grade(path, tmp_path, monkeypatch)
    assert "larger than" in report.meta["error"]


def test_a_symlink_to_the_key_is_not_followed(tmp_path, monkeypatch):
    from problemgen.sheets.answersheet import key_sheet

    key = tmp_path / "key.toml"
    key.write_text(key_sheet(VARIANT), encoding="utf-8")
    link = tmp_path / "answers.toml"
    link.symlink_to(key)
    report, _ = grade(link, tmp_path, monkeypatch)
    assert report.score == 0.0 and "symbolic link" in report.meta["error"]


def test_the_audit_hook_would_notice_an_injection(tmp_path, monkeypatch):
    """The 'nothing executed' check can fail: running the injected text for real is caught."""
    with pytest.raises(AssertionError, match="must not"):
        with watched(tmp_path, monkeypatch):
            eval(compile("__import__('os').getcwd()", "<student>", "eval"))  # noqa: S307 - the point of the test


def test_an_answer_never_writes_to_the_graders_stderr():
    """``1or 2`` makes Python's tokenizer print a SyntaxWarning when it is parsed; a student's text must not
    reach the grader's stderr (the quiz's terminal, a CI log). A fresh interpreter, with Python's own
    warning filters, grades the sheet holding such answers."""
    script = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent / 'fixtures' / 'grading')!r})\n"
              "import grading_fixture as fx\n"
              "from problemgen.sheets.grading import grade_sheet\n"
              f"report = grade_sheet(fx.fixture_variant(), {str(HOSTILE / 'literal_limits.toml')!r})\n"
              "print(sorted({r.status for r in report.results}))\n")
    done = subprocess.run([sys.executable, "-W", "default", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "['invalid', 'wrong']", done.stderr
    assert done.stderr == ""


def test_a_sheet_of_thousands_of_stray_keys_gets_a_bounded_report(tmp_path, monkeypatch):
    """Each unknown key is a warning; a sheet at the size cap holds 20,000 of them, which made each student's
    report a megabyte. The report lists the first ones and counts the rest."""
    from problemgen.sheets.grading import MAX_WARNINGS

    path = tmp_path / "stray.toml"
    path.write_text("[p1]\n" + "".join(f"k{i} = 1\n" for i in range(20_000)), encoding="ascii")
    report, _ = grade(path, tmp_path, monkeypatch)
    warnings = report.meta["warnings"]
    assert len(warnings) == MAX_WARNINGS + 1 and warnings[-1] == f"... and {20_000 - MAX_WARNINGS} more warnings"
    assert warnings[0] == "[p1] has no part 'k0' (ignored)"
