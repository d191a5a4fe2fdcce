"""The real `problemgen quiz` / `problemgen progress` commands, in a pseudo-terminal and through pipes.

The tests read the variant id the quiz prints, rebuild that (kind, seed, difficulty) with
``registry.generate`` and type ``grading.key_value`` of each part (or a listed mistake's value), so
they never hard-code an answer and follow whatever the practice rules choose.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from click.testing import CliRunner

from problemgen.model import registry
from problemgen.sheets.answersheet import toml_value
from problemgen.cli import cli
from problemgen.sheets.grading import key_value
from problemgen.misconceptions.catalogue import describe
from problemgen.practice.rules import choose_next, load_curriculum, next_seed
from problemgen.practice.progress import from_text

sys.path.insert(0, str(Path(__file__).parent))
from unwritable import unwritable  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROBLEMGEN = [sys.executable, "-m", "problemgen"]
"""The checkout's own code (``env_at`` puts the repository first on PYTHONPATH), never an installed script."""
PATIENCE = 90
"""Seconds to wait for one screen: generous, because on a loaded 2-core machine a first question (numpy and
sympy imports in a fresh process) has taken over 20 s; a quiz that is merely slow must not fail here."""
DAY1 = "2026-03-02T09:00:00Z"
DAY2 = "2026-03-03T10:00:00Z"
VARIANT = re.compile(r"variant ([\w.]+)/d(\d+)/s(\d+)")
ANSWER_PROMPT = re.compile(r"\n> ")  # the answer prompt starts a line


def env_at(now: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "PROBLEMGEN_NOW")}
    env.update({"PROBLEMGEN_NOW": now, "TERM": "xterm", "COLUMNS": "200"}, **extra)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def typed(value) -> str:
    """One typed line for a sheet value (floats rounded far below any tolerance)."""
    if isinstance(value, float):
        value = round(value, 9)
    if isinstance(value, list):
        return "[" + ", ".join(typed(v) for v in value) + "]"
    return toml_value(value)


class Terminal:
    """A quiz running in a pseudo-terminal, with helpers that answer what it shows."""

    def __init__(self, db: Path, now: str, *args: str) -> None:
        self.child = pexpect.spawn(PROBLEMGEN[0], [*PROBLEMGEN[1:], "quiz", "--db", str(db), *args], env=env_at(now),
                                   encoding="utf-8", timeout=PATIENCE, dimensions=(50, 200))
        self.child.delaybeforesend = None  # pexpect's default 50 ms pause per line only slows the test
        self.problem = None

    def next_problem(self):
        self.child.expect(VARIANT)
        kind, difficulty, seed = self.child.match.groups()
        self.problem = registry.generate(kind, int(seed), int(difficulty))
        return self.problem

    def send(self, line: str) -> None:
        self.child.expect_exact("> ")
        self.child.sendline(line)

    def answer_all_right(self) -> None:
        for part in self.problem.parts:
            self.send(typed(key_value(part)))
            self.child.expect_exact("✓ Correct.")

    def quit(self) -> None:
        self.send("quit")
        self.child.expect_exact("Progress saved")
        self.child.expect(pexpect.EOF)
        self.child.close()
        assert self.child.exitstatus == 0


def progress_json(db: Path, now: str) -> dict:
    """``problemgen progress --json``, run in-process (the subprocess runs above cover the entry point)."""
    result = CliRunner().invoke(cli, ["progress", "--db", str(db), "--json"], env={"PROBLEMGEN_NOW": now})
    assert result.exit_code == 0, result.output
    return {row["id"]: row for row in json.loads(result.output)["units"]}


def test_a_whole_session_in_a_terminal_reaches_mastery_and_resumes_the_next_day(tmp_path):
    db = tmp_path / "me.sqlite3"
    term = Terminal(db, DAY1, "--seed", "7")
    term.child.expect_exact("Unit: Scaled dot-product attention [attention]")

    # 1. a wrong answer equal to a known mistake is named as that misconception
    problem = term.next_problem()
    while not problem.parts[0].mistakes:  # find an item whose first part lists a mistake
        term.send("another")
        problem = term.next_problem()
    slip = problem.parts[0].mistakes[0]
    term.send(typed(slip.value))
    term.child.expect_exact("✗ Wrong.")
    term.child.expect_exact(f"Known mistake: {describe(slip.name)}.")

    # 2. two levels of hints, then this variant's worked solution
    term.send("hint")
    term.child.expect_exact("Hint 1: ")
    term.send("hint")
    term.child.expect_exact("Hint 2: ")
    term.send("solution")
    term.child.expect_exact("Worked solution:")
    term.child.expect_exact("Press Enter for the next problem")  # time to read it
    term.child.sendline("")

    # 3. the next item practises the same skill; right answers until the unit is mastered, which
    #    takes one unaided right answer on every kind of the unit (6 here), not just a streak of 3
    assert term.next_problem().kind == problem.kind
    kinds = set()
    while True:
        kinds.add(term.problem.kind)
        term.answer_all_right()
        if term.child.expect([r"★ Unit mastered: Scaled dot-product attention\. First review on 2026-03-03\.",
                              VARIANT]) == 0:
            break
        kind, difficulty, seed = term.child.match.groups()
        term.problem = registry.generate(kind, int(seed), int(difficulty))
    assert kinds == set(load_curriculum().unit("attention").kinds)
    term.child.expect_exact("Unlocked: Why and how the scores are scaled [scaling].")
    term.child.expect_exact("Unit: Why and how the scores are scaled [scaling]")
    left = term.next_problem()
    term.quit()

    rows = progress_json(db, DAY1)
    assert rows["attention"]["status"] == "mastered" and rows["attention"]["box"] == 1
    assert rows["attention"]["next_review"].startswith("2026-03-03")
    assert rows["scaling"]["status"] == "learning" and rows["scaling"]["unlocked"]

    # 4. the next day: the problem left open comes back first (the same variant), then the due review
    term = Terminal(db, DAY2)
    term.child.expect_exact("Resuming the problem you left:")
    assert term.next_problem().variant_id == left.variant_id
    term.answer_all_right()
    term.child.expect_exact("Review of a mastered unit (Leitner box 1).")
    assert term.next_problem().kind.startswith("attention.")
    term.answer_all_right()
    term.child.expect_exact("Review passed; next review on 2026-03-06.")
    term.child.expect_exact("Unit: Why and how the scores are scaled [scaling]")
    term.next_problem()
    term.quit()
    rows = progress_json(db, DAY2)
    assert rows["attention"]["box"] == 2 and rows["scaling"]["status"] == "learning"


def test_killing_the_quiz_mid_session_loses_nothing_already_answered(tmp_path):
    db = tmp_path / "me.sqlite3"
    term = Terminal(db, DAY1, "--seed", "3")
    term.next_problem()
    term.answer_all_right()
    term.next_problem()
    term.send("1")  # graded (wrong or invalid) and committed before the feedback is printed
    term.child.expect(r"✗ Wrong\.|\? I could not read that")
    term.send("hint")
    term.child.expect_exact("Hint 1: ")
    term.child.expect_exact("> ")
    term.child.kill(signal.SIGKILL)
    term.child.close()
    assert term.child.signalstatus == signal.SIGKILL

    connection = sqlite3.connect(db)
    try:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        items = connection.execute("SELECT outcome, hints FROM items ORDER BY id").fetchall()
        answers = connection.execute("SELECT text FROM answers ORDER BY id").fetchall()
    finally:
        connection.close()
    assert items[0][0] == "correct" and items[1][1] == 1  # the hint was stored too
    assert answers[-1] == ("1",)
    assert progress_json(db, DAY1)["attention"]["answered"] >= 1


def first_problem(seed: int, now: str):
    """The variant a fresh store shows first with ``--seed seed`` (the practice rules, replayed)."""
    available = {k.name: tuple(k.difficulties) for k in registry.all_kinds()}
    choice = choose_next(load_curriculum(), [], from_text(now), available)
    return registry.generate(choice.kind, next_seed(seed, choice.kind, choice.difficulty, set()), choice.difficulty)


def test_piped_input_reads_one_answer_per_line_and_prints_plain_text(tmp_path):
    db = tmp_path / "me.sqlite3"
    problem = first_problem(11, DAY1)
    lines = [typed(key_value(part)) for part in problem.parts] + ["quit"]
    run = subprocess.run([*PROBLEMGEN, "quiz", "--db", str(db), "--seed", "11"], input="\n".join(lines) + "\n",
                         env=env_at(DAY1), capture_output=True, text=True, timeout=PATIENCE)
    assert run.returncode == 0, run.stderr
    assert f"variant {problem.variant_id}" in run.stdout
    assert run.stdout.count("✓ Correct.") == len(problem.parts)
    assert "\x1b[" not in run.stdout  # no colour, no cursor movement
    rows = progress_json(db, DAY1)
    assert (rows["attention"]["answered"], rows["attention"]["correct"]) == (1, 1)


def test_leaving_a_quiz_on_a_named_db_says_the_progress_command_that_shows_that_file(tmp_path):
    """Plain `problemgen progress` shows the default file, not the one --db named."""
    db = tmp_path / "my progress.sqlite3"
    run = subprocess.run([*PROBLEMGEN, "quiz", "--db", str(db)], input="quit\n", env=env_at(DAY1),
                         capture_output=True, text=True, timeout=PATIENCE)
    assert run.returncode == 0, run.stderr
    assert f"See it with `problemgen progress --db '{db}'`." in " ".join(run.stdout.split())


def test_piped_input_that_ends_early_is_a_clean_quit(tmp_path):
    db = tmp_path / "me.sqlite3"
    run = subprocess.run([*PROBLEMGEN, "quiz", "--db", str(db)], input="hint\n", env=env_at(DAY1),
                         capture_output=True, text=True, timeout=PATIENCE)
    assert run.returncode == 0 and "Hint 1:" in run.stdout and "Progress saved" in run.stdout
    assert sqlite3.connect(db).execute("SELECT outcome, hints FROM items").fetchall() == [("quit", 1)]


def test_progress_shows_units_and_reset_clears_them(tmp_path):
    db = tmp_path / "me.sqlite3"
    problem = first_problem(5, DAY1)
    subprocess.run([*PROBLEMGEN, "quiz", "--db", str(db), "--seed", "5"], env=env_at(DAY1), text=True,
                   input="\n".join(typed(key_value(p)) for p in problem.parts) + "\nquit\n",
                   capture_output=True, check=True, timeout=PATIENCE)
    text = subprocess.run([*PROBLEMGEN, "progress", "--db", str(db)], env=env_at(DAY1), capture_output=True,
                          text=True, check=True).stdout
    assert re.search(r"attention\s+learning: 1/3", text)
    assert re.search(r"scaling\s+locked \(needs attention\)", text)
    assert "Leitner" in text
    reset = subprocess.run([*PROBLEMGEN, "progress", "--db", str(db), "--reset", "--yes"], env=env_at(DAY1),
                           capture_output=True, text=True)
    assert reset.returncode == 0
    assert progress_json(db, DAY1)["attention"]["answered"] == 0


def test_reset_of_a_file_that_does_not_exist_says_there_was_nothing_to_reset(tmp_path):
    db = tmp_path / "never-used.sqlite3"
    result = CliRunner().invoke(cli, ["progress", "--reset", "--yes", "--db", str(db)])
    assert (result.exit_code, result.output) == (0, f"Nothing to reset: {db} does not exist.\n")
    assert not db.exists()


def test_reset_without_yes_asks_first_and_keeps_history_when_declined(tmp_path):
    db = tmp_path / "me.sqlite3"
    subprocess.run([*PROBLEMGEN, "quiz", "--db", str(db)], input="skip\nquit\n", env=env_at(DAY1), text=True,
                   capture_output=True, check=True, timeout=PATIENCE)
    declined = subprocess.run([*PROBLEMGEN, "progress", "--db", str(db), "--reset"], input="n\n",
                              env=env_at(DAY1), capture_output=True, text=True)
    assert declined.returncode != 0
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM items").fetchone()[0] == 2


@pytest.mark.parametrize(
    "args, message",
    [
        (["quiz", "--kind", "attention.weigths"], "did you mean 'attention.weights'"),
        (["quiz", "--topic", "atention"], "did you mean 'attention'"),
    ],
)
def test_user_errors_are_one_clear_line_with_exit_code_2(tmp_path, args, message):
    run = subprocess.run([*PROBLEMGEN, *args, "--db", str(tmp_path / "me.sqlite3")], input="",
                         env=env_at(DAY1), capture_output=True, text=True, timeout=PATIENCE)
    assert run.returncode == 2 and run.stderr.startswith("error: ") and message in run.stderr


def test_a_seed_too_large_to_store_is_a_usage_error_not_a_traceback(tmp_path):
    run = subprocess.run([*PROBLEMGEN, "quiz", "--seed", "99999999999999999999999", "--db", str(tmp_path / "me.sqlite3")],
                         input="quit\n", env=env_at(DAY1), capture_output=True, text=True, timeout=PATIENCE)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "'--seed': 99999999999999999999999 is not in the range 0<=x<=9223372036854775807" in run.stderr


def _store_with_one_answer(db: Path) -> bytes:
    done = subprocess.run([*PROBLEMGEN, "quiz", "--db", str(db), "--seed", "3"], input="0\nquit\n",
                          env=env_at(DAY1), capture_output=True, text=True, timeout=PATIENCE)
    assert done.returncode == 0, done.stderr
    return db.read_bytes()


@pytest.mark.parametrize("command", [["quiz"], ["progress", "--reset", "--yes"]], ids=["quiz", "reset"])
def test_a_read_only_progress_file_is_one_error_line_for_the_commands_that_write_it(tmp_path, command):
    db = tmp_path / "me.sqlite3"
    before = _store_with_one_answer(db)
    with unwritable(db):
        run = subprocess.run([*PROBLEMGEN, *command, "--db", str(db)], input="quit\n", env=env_at(DAY1),
                             capture_output=True, text=True, timeout=PATIENCE)
    assert run.returncode == 2 and run.stderr == (
        f"error: {db}: the progress file is read-only; `problemgen progress` can show it, but nothing can be "
        "saved to it (make it writable, or name another file with --db)\n")
    assert db.read_bytes() == before


@pytest.mark.parametrize("where", ["file", "directory"])
def test_progress_still_shows_a_store_that_cannot_be_written(tmp_path, where):
    db = tmp_path / "shared" / "me.sqlite3"
    db.parent.mkdir()
    _store_with_one_answer(db)
    with unwritable(db if where == "file" else db.parent):
        rows = progress_json(db, DAY1)
        quiz = subprocess.run([*PROBLEMGEN, "quiz", "--db", str(db)], input="quit\n", env=env_at(DAY1),
                              capture_output=True, text=True, timeout=PATIENCE)
    assert rows["attention"]["answered"] == 1
    said = "the progress file is read-only" if where == "file" else f"the directory {db.parent} is not writable"
    assert quiz.returncode == 2 and quiz.stderr.startswith(f"error: {db}: {said}") and quiz.stderr.count("\n") == 1


def test_an_open_problem_edited_to_a_difficulty_its_kind_lacks_does_not_lock_the_student_out(tmp_path):
    db = tmp_path / "me.sqlite3"
    subprocess.run([*PROBLEMGEN, "quiz", "--db", str(db), "--seed", "3"], input="quit\n", env=env_at(DAY1),
                   capture_output=True, text=True, timeout=PATIENCE, check=True)
    with sqlite3.connect(db) as edit:
        edit.execute("UPDATE items SET difficulty = 99")
    run = subprocess.run([*PROBLEMGEN, "quiz", "--db", str(db), "--seed", "3"], input="quit\n", env=env_at(DAY1),
                         capture_output=True, text=True, timeout=PATIENCE)
    assert run.returncode == 0 and run.stderr == ""
    assert f"Note: the problem left open in {db} (items row 1: " in run.stdout
    assert VARIANT.search(run.stdout)  # and a new problem is asked


def test_a_file_that_is_not_a_store_is_refused(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n" * 500)
    run = subprocess.run([*PROBLEMGEN, "progress", "--db", str(notes)], env=env_at(DAY1), capture_output=True,
                         text=True)
    assert run.returncode == 2 and "not a problemgen progress store" in run.stderr
    assert notes.read_text() == "my notes\n" * 500


@pytest.mark.parametrize("command", ["quiz", "progress"])
def test_help_has_examples_and_quiz_help_lists_the_prompt_commands(command):
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0 and "Example:" in result.output
    if command == "quiz":
        for word in ("hint", "solution", "skip", "another", "quit"):
            assert re.search(rf"^\s+{word}\s", result.output, re.M), word


def test_progress_of_a_new_user_shows_the_first_unit_and_creates_no_file(tmp_path):
    db = tmp_path / "never-used.sqlite3"
    rows = progress_json(db, DAY1)
    assert rows["attention"]["status"] == "learning" and rows["scaling"]["status"] == "locked"
    assert not db.exists()


def test_ctrl_c_at_the_prompt_saves_and_exits_130(tmp_path):
    db = tmp_path / "me.sqlite3"
    term = Terminal(db, DAY1, "--seed", "2")
    term.next_problem()
    term.answer_all_right()
    term.next_problem()
    term.child.expect(ANSWER_PROMPT)  # the prompt itself, not a "> " inside the problem's text
    term.child.sendintr()
    if term.child.expect_exact(["Progress saved", pexpect.TIMEOUT], timeout=10) == 1:
        # CPython's readline shows the prompt, then waits in select() and looks at signals only when a signal
        # interrupts that wait: a Ctrl-C landing between the two (a busy machine can stall the quiz right
        # there) is noted and not acted on until the next signal. A person presses Ctrl-C again; so does this
        # test, once.
        term.child.sendintr()
        term.child.expect_exact("Progress saved")
    term.child.expect(pexpect.EOF)
    term.child.close()
    assert term.child.exitstatus == 130
    assert progress_json(db, DAY1)["attention"]["correct"] == 1


def test_in_a_terminal_a_command_at_the_row_prompt_runs_and_the_row_is_asked_again(tmp_path):
    db = tmp_path / "me.sqlite3"
    term = Terminal(db, DAY1, "--kind", "attention.projection", "--seed", "4")
    rows = [" ".join(typed(x) for x in row) for row in key_value(term.next_problem().parts[0])]
    term.send(rows[0])
    term.child.expect_exact("row 2 of 2> ")
    term.child.sendline("hint")
    term.child.expect_exact("Hint 1: ")
    term.send(rows[1])
    term.child.expect_exact("✓ Correct.")
    term.quit()
    answers = sqlite3.connect(db).execute("SELECT status FROM answers").fetchall()
    assert answers == [("correct",)]


def test_in_a_terminal_a_matrix_pasted_as_numpy_prints_it_is_one_answer(tmp_path):
    db = tmp_path / "me.sqlite3"
    term = Terminal(db, DAY1, "--kind", "attention.projection", "--seed", "4")
    matrix = key_value(term.next_problem().parts[0])
    printed = "\n ".join("[" + " ".join(f"{typed(x):>2}" for x in row) + "]" for row in matrix)
    term.child.expect(ANSWER_PROMPT)
    term.child.send(f"[{printed}]\n")  # one paste: every line at once, as a terminal delivers it
    term.child.expect_exact("✓ Correct.")
    term.quit()
    answers = sqlite3.connect(db).execute("SELECT status FROM answers").fetchall()
    assert answers == [("correct",)]


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_an_output_encoding_without_unicode_gets_ascii_maths_not_a_traceback(tmp_path, encoding):
    db = tmp_path / "me.sqlite3"
    run = subprocess.run([*PROBLEMGEN, "quiz", "--db", str(db), "--kind", "attention.weights"],
                         input=b"hint\nhint\nsolution\nquit\n", env=env_at(DAY1, PYTHONIOENCODING=encoding, COLUMNS="40"),
                         capture_output=True, timeout=PATIENCE)
    assert run.returncode == 0 and b"Traceback" not in run.stderr, run.stderr.decode(errors="replace")
    text = run.stdout.decode(encoding)
    assert "sqrt(d_k)" in text and "Worked solution:" in text
    progress = subprocess.run([*PROBLEMGEN, "progress", "--db", str(db)], env=env_at(DAY1, PYTHONIOENCODING=encoding),
                              capture_output=True, timeout=PATIENCE)
    assert progress.returncode == 0 and b"Traceback" not in progress.stderr


def test_arrow_keys_edit_the_answer_line(tmp_path):
    """Line editing at the prompt: the key typed without its first character, the cursor moved back
    to the start with the Left arrow, the first character inserted there — graded as the key; the Up
    arrow brings the line back at the next prompt (history)."""
    term = Terminal(tmp_path / "me.sqlite3", DAY1, "--kind", "params.attention_layer")
    problem = term.next_problem()
    key = typed(key_value(problem.parts[0]))
    term.child.expect(ANSWER_PROMPT)
    term.child.send(key[1:] + "\x1b[D" * (len(key) - 1) + key[0] + "\r")
    term.child.expect_exact("✓ Correct.")
    assert "^[[D" not in term.child.before and "[D" not in term.child.before
    term.next_problem()
    term.child.expect(ANSWER_PROMPT)
    term.child.send("\x1b[A")  # Up: the answer line from history comes back to the prompt
    term.child.expect_exact(key)
    term.child.send("\x15quit\r")  # Ctrl-U clears it; then leave
    term.child.expect_exact("Progress saved")
    term.child.expect(pexpect.EOF)
