"""Quiz latency: time to the first question, and answer-feedback latency (median and p95).

Targets (issue 8): the first question within 1 s of starting `problemgen quiz`; feedback at most 50 ms
(p95) after an answer is entered.

Measured three ways (fresh progress file in a temp dir each time):
* CLI in a pseudo-terminal (pexpect): wall time from spawning `problemgen quiz` to its first `> `
  prompt at the start of a line; then a session where every answer line is timed from `sendline` to the first feedback
  line (`Correct` / `Wrong` / `could not read`), and to the next prompt (which, after the last part
  of an item, includes generating and rendering the next problem). Correct answers are computed in
  this process by regenerating the problem from the variant id the quiz prints.
* CLI through pipes (no terminal): time to the first prompt only.
* the library loop (`QuizSession` with an injected console): the time between `read()` returning the
  line and the feedback being written, split into grading, the progress-store commit and the rest.
Answers alternate: one wrong ("0"), then the key; so half of the feedback is "Wrong", half "Correct".

Usage: .venv/bin/python bench/quiz.py [--runs 7] [--answers 60]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, VENV_BIN, machine_line, median, percentile, table, verdict

FEEDBACK = re.compile(r"(Correct\.|Wrong\.|could not read)")
PROMPT = re.compile(r"\n> ")  # the answer prompt starts a line (the greeting also mentions "> ")
VARIANT = re.compile(r"variant ([a-z_]+\.[a-z_]+)/d(\d)/s(\d+)")


def key_line(kind: str, difficulty: int, seed: int, part_number: int) -> str:
    """The typed key for part ``part_number`` (1-based) of the problem the quiz shows."""
    from problemgen.model import registry
    from problemgen.sheets.answersheet import key_value, toml_value

    problem = registry.generate(kind, seed, difficulty)
    return toml_value(key_value(problem.parts[part_number - 1]))


def env_for(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROBLEMGEN")}
    return {**env, "PROBLEMGEN_NOW": "2026-03-02T09:00:00Z", "NO_COLOR": "1", "TERM": "dumb", "HOME": str(tmp)}


def pty_first_question(tmp: Path, runs: int) -> list[float]:
    import pexpect

    times = []
    for run in range(runs):
        start = time.perf_counter()
        child = pexpect.spawn(str(VENV_BIN / "problemgen"), ["quiz", "--db", str(tmp / f"ttfq_{run}.sqlite3"), "--seed", "1"],
                              env=env_for(tmp), cwd=str(tmp), encoding="utf-8", timeout=30)
        child.expect(PROMPT)
        times.append(time.perf_counter() - start)
        child.sendline("quit")
        child.expect(pexpect.EOF)
        child.close()
    return times


def pipe_first_question(tmp: Path, runs: int) -> list[float]:
    times = []
    for run in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen([str(VENV_BIN / "problemgen"), "quiz", "--db", str(tmp / f"pipe_{run}.sqlite3"), "--seed", "1"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=env_for(tmp), cwd=tmp)
        seen = b""
        while b"\n> " not in seen:
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            if not chunk:
                break
            seen += chunk
        times.append(time.perf_counter() - start)
        proc.communicate(b"quit\n", timeout=30)
    return times


def pty_session(tmp: Path, answers: int) -> tuple[list[float], list[float], dict[str, int]]:
    """(feedback latencies, next-prompt latencies, feedback counts) of one pty session."""
    import pexpect

    child = pexpect.spawn(str(VENV_BIN / "problemgen"), ["quiz", "--db", str(tmp / "session.sqlite3"), "--seed", "5"],
                          env=env_for(tmp), cwd=str(tmp), encoding="utf-8", timeout=30, maxread=1 << 16)
    child.delaybeforesend = None  # pexpect sleeps 50 ms before every send by default
    child.expect(PROMPT)
    transcript = child.before
    feedback, next_prompt, counts = [], [], {"Correct.": 0, "Wrong.": 0, "could not read": 0}
    wrong_next = True
    for _ in range(answers):
        variant = VARIANT.findall(transcript)
        parts = re.findall(r"Part (\d+) of \d+|Answer: ", transcript)
        if not variant:
            break
        kind, difficulty, seed = variant[-1]
        part = int(parts[-1]) if parts and parts[-1] else 1
        line = "0" if wrong_next else key_line(kind, int(difficulty), int(seed), part)
        start = time.perf_counter()
        child.sendline(line)
        child.expect(FEEDBACK)
        feedback.append(time.perf_counter() - start)
        counts[child.match.group(1)] += 1
        child.expect(PROMPT)
        next_prompt.append(time.perf_counter() - start)
        transcript += child.before
        wrong_next = not wrong_next
    child.sendline("quit")
    child.expect(pexpect.EOF)
    child.close()
    return feedback, next_prompt, counts


def library_session(tmp: Path, answers: int) -> dict[str, list[float]]:
    """Per-answer times inside the library loop: grade, store commit, and read -> feedback written."""
    from problemgen.sheets import answersheet
    from problemgen.practice.rules import quiz
    from problemgen.practice.rules import load_curriculum
    from problemgen.practice.progress import ProgressStore

    services = quiz.default_services()
    timing = {"read -> feedback written": [], "grade_text": [], "store.record_answer": []}
    state = {"part": None, "entered": None, "wrong_next": True, "left": answers}
    describe, grade = services.describe, services.grade

    def remember_part(part):
        state["part"] = part
        return describe(part)

    def timed_grade(part, text):
        start = time.perf_counter()
        try:
            return grade(part, text)
        finally:
            timing["grade_text"].append(time.perf_counter() - start)

    def read(prompt: str) -> str:
        if state["left"] <= 0:
            raise EOFError
        state["left"] -= 1
        part = state["part"]
        line = "0" if state["wrong_next"] else answersheet.toml_value(answersheet.key_value(part))
        state["wrong_next"] = not state["wrong_next"]
        state["entered"] = time.perf_counter()
        return line

    def write(text: str) -> None:
        if state["entered"] is not None and FEEDBACK.search(text):
            timing["read -> feedback written"].append(time.perf_counter() - state["entered"])
            state["entered"] = None

    services.describe, services.grade = remember_part, timed_grade
    with ProgressStore(tmp / "library.sqlite3") as store:
        record = store.record_answer

        def timed_record(*args, **kwargs):
            start = time.perf_counter()
            try:
                return record(*args, **kwargs)
            finally:
                timing["store.record_answer"].append(time.perf_counter() - start)

        store.record_answer = timed_record
        session = quiz.QuizSession(store, load_curriculum(), quiz.Console(read, write), services,
                                   clock=quiz.clock_from_env({"PROBLEMGEN_NOW": "2026-03-02T09:00:00Z"}), seed=9)
        session.run()
    return timing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="start-ups measured per way")
    parser.add_argument("--answers", type=int, default=60, help="answers per session")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    print(machine_line())
    with tempfile.TemporaryDirectory(prefix="pg-bench-quiz-") as name:
        tmp = Path(name)
        pty_ttfq = pty_first_question(tmp, args.runs)
        pipe_ttfq = pipe_first_question(tmp, args.runs)
        rows = [["CLI in a pty: start -> first prompt", f"{median(pty_ttfq) * 1000:.0f}", f"{max(pty_ttfq) * 1000:.0f}",
                 f"<= 1 s: {verdict(median(pty_ttfq) <= 1.0)}"],
                ["CLI through pipes: start -> first prompt", f"{median(pipe_ttfq) * 1000:.0f}", f"{max(pipe_ttfq) * 1000:.0f}",
                 f"<= 1 s: {verdict(median(pipe_ttfq) <= 1.0)}"]]
        print(table(["time to first question", "median ms", "max ms", "target"], rows,
                    title=f"\nQuiz start-up, {args.runs} runs each"))

        feedback, next_prompt, counts = pty_session(tmp, args.answers)
        library = library_session(tmp, args.answers)
        rows = [["CLI in a pty: answer -> feedback line", len(feedback), f"{median(feedback) * 1000:.1f}",
                 f"{percentile(feedback, 95) * 1000:.1f}", f"p95 <= 50 ms: {verdict(percentile(feedback, 95) <= 0.05)}"],
                ["CLI in a pty: answer -> next prompt", len(next_prompt), f"{median(next_prompt) * 1000:.1f}",
                 f"{percentile(next_prompt, 95) * 1000:.1f}", "(includes the next problem)"]]
        for label, values in library.items():
            target = f"p95 <= 50 ms: {verdict(percentile(values, 95) <= 0.05)}" if label.startswith("read") else ""
            rows.append([f"library loop: {label}", len(values), f"{median(values) * 1000:.2f}",
                         f"{percentile(values, 95) * 1000:.2f}", target])
        print(table(["answer feedback", "answers", "median ms", "p95 ms", "target"], rows,
                    title="\nFeedback latency (answers alternate wrong / key)"))
        print("pty feedback seen: " + ", ".join(f"{v} {k}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
