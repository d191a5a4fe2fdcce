"""Quiz latency as ratios on the same machine: start-up to the first question, and answer feedback.

Targets (issue 16):
* start-up to the first question <= 2x the start-up of `python -c "import numpy"` (the quiz cannot
  start faster than the numpy its generators use); measured through pipes and in a pseudo-terminal,
  interleaved with the numpy baseline run for run, so both see the same load;
* every answer graded <= 100 ms p95, including the first answer written as an expression (which
  needs the SymPy-based expression reader: the quiz imports it in a background thread once the first
  problem is on screen, so start-up never pays for it).

Both sides run as an installed package would: bytecode cached (one untimed warm-up run writes it into a
temporary PYTHONPYCACHEPREFIX; PYTHONDONTWRITEBYTECODE is dropped), a fresh progress file per run.

The answer session runs in a pty. Answers cycle through three forms: the key written as an expression
(``…*1`` for numbers, names for shapes), a wrong ``0``, and the key as a plain value; the very first
answer is an expression. Fresh quizzes then time their first answer alone: an integer key written as
an expression, and a shape written in another form than the key (``d_model/h`` for ``d_k``), which
is decided exactly without SymPy. Each answer is timed from ``sendline`` to the first feedback line. With
``--read-seconds S`` the script waits S seconds (a student reading) before each answer, which gives
the background import time to finish; the default 0 answers at once (the worst case).

Usage: python bench/quiz.py [--runs 7] [--answers 45] [--read-seconds 0]
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
OTHER_FORM = {"d_k": "d_model/h", "d_v": "d_model/h", "d_model": "h*d_k", "h*d_k": "d_model", "h*d_v": "d_model"}
"""How a student may write a shape's dimension other than the key does (the problems define d_model = h*d_k)."""
VARIANT = re.compile(r"variant ([a-z_]+\.[a-z_]+)/d(\d)/s(\d+)")


def quiz_command() -> list[str]:
    script = VENV_BIN / "problemgen"
    return [str(script)] if script.exists() else [sys.executable, "-m", "problemgen"]


def env_for(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROBLEMGEN") and k != "PYTHONDONTWRITEBYTECODE"}
    path = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return {**env, "PROBLEMGEN_NOW": "2026-03-02T09:00:00Z", "NO_COLOR": "1", "TERM": "dumb", "HOME": str(tmp),
            "PYTHONPATH": path, "PYTHONPYCACHEPREFIX": str(tmp / "pycache"), "COLUMNS": "100"}


def answer_line(kind: str, difficulty: int, seed: int, part_number: int, form: str) -> str:
    """What the bench types for part ``part_number`` (1-based): the key as an expression, or plain."""
    from problemgen.model import registry
    from problemgen.sheets.answersheet import key_value, toml_value

    part = registry.generate(kind, seed, difficulty).parts[part_number - 1]
    if form == "wrong":
        return "0"
    if form == "expression" and part.type == "shape":
        return "(" + ", ".join(str(d) for d in part.value) + ")"
    if form == "other form" and part.type == "shape":  # the key's dimensions rewritten through d_model = h*d_k
        return "(" + ", ".join(OTHER_FORM.get(str(d), str(d)) for d in part.value) + ")"
    if form == "expression" and part.type in ("integer", "number"):
        return f"{toml_value(key_value(part))}*1"
    return toml_value(key_value(part))


def numpy_start(tmp: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import numpy"], env=env_for(tmp), check=True)
    return time.perf_counter() - start


def pipe_first_question(tmp: Path, run: int) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen([*quiz_command(), "quiz", "--db", str(tmp / f"pipe_{run}.sqlite3"), "--seed", "1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env_for(tmp), cwd=tmp)
    seen = b""
    while b"\n> " not in seen:
        chunk = os.read(proc.stdout.fileno(), 1 << 16)
        if not chunk:
            break
        seen += chunk
    elapsed = time.perf_counter() - start
    proc.communicate(b"quit\n", timeout=60)
    return elapsed


def pty_first_question(tmp: Path, run: int) -> float:
    import pexpect

    command = quiz_command()
    start = time.perf_counter()
    child = pexpect.spawn(command[0], [*command[1:], "quiz", "--db", str(tmp / f"pty_{run}.sqlite3"), "--seed", "1"],
                          env=env_for(tmp), cwd=str(tmp), encoding="utf-8", timeout=60)
    child.expect(PROMPT)
    elapsed = time.perf_counter() - start
    child.sendline("quit")
    child.expect(pexpect.EOF)
    child.close()
    return elapsed


def start_up(tmp: Path, runs: int) -> dict[str, list[float]]:
    """Interleaved runs of the numpy baseline and the quiz (pipes, pty), after one untimed warm-up each."""
    numpy_start(tmp), pipe_first_question(tmp, -1), pty_first_question(tmp, -1)  # write the bytecode caches
    times = {"numpy": [], "pipes": [], "pty": []}
    for run in range(runs):
        times["numpy"].append(numpy_start(tmp))
        times["pipes"].append(pipe_first_question(tmp, run))
        times["pty"].append(pty_first_question(tmp, run))
    return times


FIRST_ANSWERS = {"expression": ("multihead.head_dim", "2"), "other form": ("shapes.cross", "3")}
"""A fresh quiz's first answer: the key of an integer kind as an expression (``v*1``), or a shape
whose dimensions are written in another form than the key's (``d_model/h`` for ``d_k``)."""


def first_answer(tmp: Path, run: int, read_seconds: float, form: str) -> float:
    """A fresh quiz whose first answer is ``form`` (see :data:`FIRST_ANSWERS`), typed ``read_seconds``
    after the first prompt: seconds from sendline to the feedback line."""
    import pexpect

    command = quiz_command()
    child = pexpect.spawn(command[0], [*command[1:], "quiz", "--db", str(tmp / f"expr_{run}.sqlite3"), "--seed",
                                       str(run), "--kind", FIRST_ANSWERS[form][0], "--difficulty",
                                       FIRST_ANSWERS[form][1]],
                          env=env_for(tmp), cwd=str(tmp), encoding="utf-8", timeout=60)
    child.delaybeforesend = None
    child.expect(PROMPT)
    kind, difficulty, seed = VARIANT.findall(child.before)[-1]
    line = answer_line(kind, int(difficulty), int(seed), 1, form)
    time.sleep(read_seconds)
    start = time.perf_counter()
    child.sendline(line)
    child.expect(FEEDBACK)
    elapsed = time.perf_counter() - start
    assert child.match.group(1) == "Correct.", f"{line!r} for {kind}/d{difficulty}/s{seed}: {child.match.group(1)}"
    child.sendline("quit")
    child.expect(pexpect.EOF)
    child.close()
    return elapsed


def pty_session(tmp: Path, answers: int, read_seconds: float) -> list[tuple[str, float, str]]:
    """(form, seconds from sendline to feedback, feedback word) for each answer of one pty session."""
    import pexpect

    command = quiz_command()
    child = pexpect.spawn(command[0], [*command[1:], "quiz", "--db", str(tmp / "session.sqlite3"), "--seed", "5"],
                          env=env_for(tmp), cwd=str(tmp), encoding="utf-8", timeout=60, maxread=1 << 16)
    child.delaybeforesend = None  # pexpect sleeps 50 ms before every send by default
    child.expect(PROMPT)
    transcript = child.before
    results = []
    forms = ("expression", "wrong", "plain")
    for number in range(answers):
        variant = VARIANT.findall(transcript)
        parts = re.findall(r"Part (\d+) of \d+|Answer: ", transcript)
        if not variant:
            break
        kind, difficulty, seed = variant[-1]
        part = int(parts[-1]) if parts and parts[-1] else 1
        form = forms[number % 3]
        line = answer_line(kind, int(difficulty), int(seed), part, form)
        time.sleep(read_seconds)
        start = time.perf_counter()
        child.sendline(line)
        child.expect(FEEDBACK)
        results.append((form, time.perf_counter() - start, child.match.group(1)))
        while child.expect([PROMPT, re.compile(r"Press Enter|choose> ")]) == 1:  # a pause or an offer:
            transcript += child.before
            child.sendline("")  # Enter goes on as before
        transcript += child.before
    child.sendline("quit")
    child.expect(pexpect.EOF)
    child.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="start-ups measured per way")
    parser.add_argument("--answers", type=int, default=45, help="answers in the pty session")
    parser.add_argument("--read-seconds", type=float, default=0.0, help="pause before each answer")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    print(machine_line())
    with tempfile.TemporaryDirectory(prefix="pg-bench-quiz-") as name:
        tmp = Path(name)
        times = start_up(tmp, args.runs)
        base = median(times["numpy"])
        rows = [['python -c "import numpy"', f"{base * 1000:.0f}", "1.00", "(baseline)"]]
        for way in ("pipes", "pty"):
            ratio = median(times[way]) / base
            rows.append([f"quiz through {way}: start -> first prompt", f"{median(times[way]) * 1000:.0f}",
                         f"{ratio:.2f}", f"<= 2x: {verdict(ratio <= 2.0)}"])
        print(table(["start-up", "median ms", "ratio", "target"], rows,
                    title=f"\nStart-up to the first question, {args.runs} interleaved runs each"))

        results = pty_session(tmp, args.answers, args.read_seconds)
        everything = [t for _, t, _ in results]
        expressions = [t for form, t, _ in results if form == "expression"]
        firsts = [first_answer(tmp, run, args.read_seconds, "expression") for run in range(args.runs)]
        shapes = [first_answer(tmp, run, args.read_seconds, "other form") for run in range(args.runs)]
        rows = [["every answer", len(everything), f"{median(everything) * 1000:.1f}",
                 f"{percentile(everything, 95) * 1000:.1f}", f"p95 <= 100 ms: {verdict(percentile(everything, 95) <= 0.1)}"],
                ["answers written as expressions", len(expressions), f"{median(expressions) * 1000:.1f}",
                 f"{percentile(expressions, 95) * 1000:.1f}", f"p95 <= 100 ms: {verdict(percentile(expressions, 95) <= 0.1)}"],
                ["a fresh quiz's first answer, an expression", len(firsts), f"{median(firsts) * 1000:.1f}",
                 f"{percentile(firsts, 95) * 1000:.1f}", f"p95 <= 100 ms: {verdict(percentile(firsts, 95) <= 0.1)}"],
                ["a fresh quiz's first answer, a shape as d_model/h", len(shapes), f"{median(shapes) * 1000:.1f}",
                 f"{percentile(shapes, 95) * 1000:.1f}", f"p95 <= 100 ms: {verdict(percentile(shapes, 95) <= 0.1)}"]]
        print(table(["answer -> feedback line (pty)", "answers", "median ms", "p95 ms", "target"], rows,
                    title=f"\nFeedback latency, {args.read_seconds:g} s reading pause before each answer"))
        counts = {}
        for _, _, word in results:
            counts[word] = counts.get(word, 0) + 1
        print("feedback seen: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
