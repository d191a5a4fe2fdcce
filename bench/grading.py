"""Answer-sheet grading throughput in class mode: sheets per second, library and CLI.

Targets (issue 20), as ratios inside one run: class grading in one process within 1.5x the parse floor
(reading every variant.json and answer sheet, nothing else); automatic workers (``jobs=None``, what the CLI
uses without --jobs) never slower than one process (5 % allowed for noise). Sheets per second are printed
too, for this machine only.

Set-up (not timed): a class set of 200 students x 20 problems is written with the library into a temp
dir; then one submission per student: 60% are the student's own key.toml (all correct), 30% are the key
with every digit of every answer rotated (wrong, sometimes a known mistake, sometimes unreadable), and
10% are blank answer sheets (nothing answered).

Timed, median of several runs:
* `classgrade.grade_class(submissions, class_dir)` in one process and with jobs=2;
* the class runner writes its outputs as it goes (gradebook, summaries, one JSON report per student);
* the CLI end to end: `problemgen grade SUBMISSIONS --variants CLASS -o OUT --format json` (imports,
  grading and every output file), with --jobs 1 and --jobs 2.
Then a per-sheet breakdown of the steps of one student's grading (variant load, sheet read, grading).

Usage: python bench/grading.py [--students 200] [--runs 3] [--profile]   (from the checkout)
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import sys
import tempfile
import time
from pathlib import Path

from _common import KINDS, ROOT, SECRET_ENV, CLI, VENV_BIN, machine_line, median, run_timed, table, verdict

ROTATE = str.maketrans("0123456789", "1234567890")


def make_class(tmp: Path, students: int) -> tuple[Path, Path, dict[str, int]]:
    """(class dir, submissions dir, how many sheets of each sort) under ``tmp``."""
    from problemgen.documents import worksheet

    lines = ['title = "Benchmark class set"', "seed = 2024", ""]
    for index, kind in enumerate(KINDS):
        lines += ["[[problems]]", f'kind = "{kind}"', f"difficulty = {1 + index % 2}", ""]
    bank = tmp / "bench_bank.toml"
    bank.write_text("\n".join(lines))
    roster = tmp / "roster.csv"
    roster.write_text("id\n" + "".join(f"student{n:04d}\n" for n in range(students)))
    os.environ[SECRET_ENV] = "bench-secret-not-for-real-use"
    class_dir, submissions = tmp / "class", tmp / "submissions"
    worksheet.write_class_set(worksheet.WorksheetJob(bank, class_dir), roster, SECRET_ENV)
    submissions.mkdir()
    counts = {"key (correct)": 0, "digits rotated (wrong)": 0, "blank": 0}
    for n in range(students):
        student = f"student{n:04d}"
        key = (class_dir / "keys" / student / "key.toml").read_text()
        if n % 10 < 6:
            text, sort = key, "key (correct)"
        elif n % 10 < 9:
            text, sort = wrong_sheet(key), "digits rotated (wrong)"
        else:
            text, sort = (class_dir / "handouts" / student / "answers.toml").read_text(), "blank"
        (submissions / f"{student}.toml").write_text(text)
        counts[sort] += 1
    return class_dir, submissions, counts


def wrong_sheet(key: str) -> str:
    """The key with the digits of every answer line rotated (the [meta] variant line is kept)."""
    out = []
    for line in key.splitlines(keepends=True):
        match = re.match(r"^(\s*[A-Za-z_][\w-]*\s*=\s*)(.*)$", line, re.S)
        if match and not line.lstrip().startswith(("variant", "student")):
            line = match.group(1) + match.group(2).translate(ROTATE)
        out.append(line)
    return "".join(out)


def cpu_seconds() -> float:
    """CPU seconds of this process and of every child it has waited for (workers, CLI runs)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def library(class_dir: Path, submissions: Path, jobs: int, out: Path | None) -> tuple[float, float, object]:
    """(wall, CPU, ClassRun) of one class-mode run; the outputs go to ``out`` (a scratch directory when None)."""
    import tempfile

    from problemgen.classes import sheet_class as classgrade

    with tempfile.TemporaryDirectory(prefix="pg-bench-out-") as scratch:
        start, cpu_start = time.perf_counter(), cpu_seconds()
        run = classgrade.grade_class(submissions, class_dir, out or Path(scratch), "json", jobs=jobs)
        return time.perf_counter() - start, cpu_seconds() - cpu_start, run


def parse_floor(class_dir: Path, submissions: Path, students: int) -> tuple[float, float]:
    """(wall, CPU) of only reading every student's ``variant.json`` and answer sheet: what grading
    cannot avoid, the baseline of the "x parse floor" column."""
    from problemgen.model.variantfile import WorksheetVariant
    from problemgen.sheets.answersheet import read_sheet

    start, cpu_start = time.perf_counter(), cpu_seconds()
    for n in range(students):
        student = f"student{n:04d}"
        WorksheetVariant.load(class_dir / "keys" / student / "variant.json")
        read_sheet(submissions / f"{student}.toml")
    return time.perf_counter() - start, cpu_seconds() - cpu_start


def breakdown(class_dir: Path, submissions: Path, students: int) -> list[list[object]]:
    """Median microseconds per sheet of each step of grading one student."""
    from problemgen.sheets import grading
    from problemgen.sheets.answersheet import read_sheet
    from problemgen.model.variantfile import WorksheetVariant

    steps: dict[str, list[float]] = {"WorksheetVariant.load (variant.json)": [], "read_sheet (TOML)": [],
                                     "grade_answers (20 problems)": []}
    for n in range(students):
        student = f"student{n:04d}"
        t0 = time.perf_counter()
        variant = WorksheetVariant.load(class_dir / "keys" / student / "variant.json")
        t1 = time.perf_counter()
        answers = read_sheet(submissions / f"{student}.toml")
        t2 = time.perf_counter()
        grading.grade_answers(variant, answers, student=student)
        t3 = time.perf_counter()
        for name, seconds in zip(steps, (t1 - t0, t2 - t1, t3 - t2)):
            steps[name].append(seconds)
    total = sum(median(v) for v in steps.values())
    return [[name, f"{median(v) * 1e6:.0f}", f"{median(v) / total:.0%}"] for name, v in steps.items()]


def profile(class_dir: Path, submissions: Path) -> None:
    try:
        from pyinstrument import Profiler
    except ImportError:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(library, class_dir, submissions, 1, None)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
        return
    profiler = Profiler(interval=0.0005)
    profiler.start()
    library(class_dir, submissions, 1, None)
    profiler.stop()
    print(profiler.output_text(unicode=False, color=False, show_all=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="profile one library run instead")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    print(machine_line())
    with tempfile.TemporaryDirectory(prefix="pg-bench-grading-") as name:
        tmp = Path(name)
        class_dir, submissions, counts = make_class(tmp, args.students)
        print("sheets: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
        if args.profile:
            return profile(class_dir, submissions)
        n = args.students
        _, _, outcome = library(class_dir, submissions, 1, None)  # warm-up: imports, parser caches
        statuses: dict[str, int] = {}
        for result in outcome.records:
            statuses[result.status] = statuses.get(result.status, 0) + 1
        mean_score = sum(r.score for r in outcome.records) / n

        floors = [parse_floor(class_dir, submissions, n) for _ in range(args.runs)]
        floor = median([f[0] for f in floors])
        rows = [["parse floor: variant.json + sheet read, 1 process", f"{floor:.3f}",
                 f"{median([f[1] for f in floors]):.3f}", f"{n / floor:.0f}", "", "1.00", "(baseline)"]]
        timed = {}
        for label, jobs, out in (("library grade_class (outputs written), 1 process", 1, None),
                                 ("library grade_class (outputs written), jobs=2", 2, None),
                                 ("library grade_class (outputs written), automatic workers", None, None)):
            runs = [library(class_dir, submissions, jobs, out)[:2] for _ in range(args.runs)]
            seconds, cpu = median([r[0] for r in runs]), median([r[1] for r in runs])
            timed[jobs] = seconds
            target = (f"<= 1.5x floor: {verdict(seconds / floor <= 1.5)}" if jobs == 1 else
                      f"<= 1 process: {verdict(seconds <= timed[1] * 1.05)}" if jobs is None else "")
            rows.append([label, f"{seconds:.3f}", f"{cpu:.3f}", f"{n / seconds:.0f}", f"{n / cpu:.0f}",
                         f"{seconds / floor:.2f}", target])
        for jobs in (1, 2):
            times, cpus = [], []
            for run in range(args.runs):
                cpu_start = cpu_seconds()
                command = [*CLI, "grade", str(submissions), "--variants", str(class_dir),
                           "-o", str(tmp / f"cli_{jobs}_{run}"), "--format", "json", "--jobs", str(jobs), "--no-progress"]
                seconds, code, err = run_timed(command, cwd=tmp)
                if code:
                    raise SystemExit(f"problemgen grade failed (exit {code}): {err.decode(errors='replace')[-500:]}")
                times.append(seconds)
                cpus.append(cpu_seconds() - cpu_start)
            seconds, cpu = median(times), median(cpus)
            rows.append([f"CLI problemgen grade --jobs {jobs} (end to end)", f"{seconds:.3f}", f"{cpu:.3f}",
                         f"{n / seconds:.0f}", f"{n / cpu:.0f}", f"{seconds / floor:.2f}", ""])
        print(table(["workload", "wall s", "CPU s", "sheets/s (wall)", "sheets/CPU-s", "x parse floor", "target"], rows,
                    title=f"\nClass-mode grading of {n} sheets x 20 problems, median of {args.runs} runs"))
        print(f"outcome check: {statuses}, mean score {mean_score:.2f}")
        print(table(["step (per sheet, 1 process)", "median us", "share"], breakdown(class_dir, submissions, n),
                    title="\nWhere the time goes per sheet"))


if __name__ == "__main__":
    main()
