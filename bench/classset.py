"""Class-set generation: 200 students x 20 problems, its linearity, and peak memory at 10,000 problems.

Targets (issues 8 and 20):
* CPU per problem of a class set at most 1.5x the CPU of generating the same problems alone (same run,
  same seeds, one process; the baseline's CPU seconds are printed in the "CPU s" column);
* 200 students x 20 problems (Markdown worksheet, answer key, answer sheet, key sheet and frozen
  variant for each student) in at most 5 s wall: measured end to end through the CLI
  (`problemgen worksheet BANK --roster roster.csv --secret-env VAR`, imports included) and through the
  library (`problemgen.documents.worksheet.write_class_set`, imports already paid);
* generation cost linear in the number of problems: 50, 100 and 200 students in one warm process,
  shown as milliseconds per problem and as the time ratio against the student ratio;
* peak memory (ru_maxrss of a child process) for 10,000 problems (500 students) at most 300 MB, next
  to the same figure for 2,000 problems and for the imports alone, so the growth per problem shows.

The bank is written into the temp dir: 20 kinds across the topics, difficulties 1 and 2 alternating.
Everything is written under a temp dir that is deleted at the end.

Usage: python bench/classset.py [--runs 3] [--profile]   (from the checkout)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import KINDS, ROOT, SECRET_ENV, CLI, VENV_BIN, machine_line, median, run_timed, table, verdict

PER_STUDENT = ("handouts/{}/answers.toml", "handouts/{}/worksheet.md", "keys/{}/answer_key.md", "keys/{}/key.toml",
               "keys/{}/variant.json")

# Run in a child so its ru_maxrss is this workload's alone (the parent has run other sizes already).
MEMORY_CHILD = """
import json, resource, sys, time
import problemgen.model.registry, problemgen.documents.rendering, problemgen.sheets.answersheet, jinja2, numpy, sympy
from problemgen.documents import worksheet
imported = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
bank, roster, out, env, jobs = sys.argv[1:6]
start = time.perf_counter()
fields = worksheet.WorksheetJob.__dataclass_fields__
extra = {"jobs": int(jobs) if jobs != "auto" else None} if "jobs" in fields else {}
job = worksheet.WorksheetJob(bank, out, **extra)
worksheet.write_class_set(job, roster, env)
seconds = time.perf_counter() - start
print(json.dumps({"imported_kb": imported, "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "worker_peak_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "seconds": seconds}))
"""


def write_bank(directory: Path) -> Path:
    lines = ['title = "Benchmark class set"', "seed = 2024", ""]
    for index, kind in enumerate(KINDS):
        lines += ["[[problems]]", f'kind = "{kind}"', f"difficulty = {1 + index % 2}", ""]
    path = directory / "bench_bank.toml"
    path.write_text("\n".join(lines))
    return path


def write_roster(directory: Path, students: int, prefix: str = "student") -> Path:
    """A roster CSV; a distinct ``prefix`` gives distinct seeds, so no cache carries over between runs."""
    path = directory / f"roster_{prefix}_{students}.csv"
    path.write_text("id\n" + "".join(f"{prefix}{n:04d}\n" for n in range(students)))
    return path


def check_output(out: Path, students: int) -> str:
    """A sanity line: every student's handout and key directories hold the five files."""
    ids = [p.name for p in (out / "keys").iterdir() if p.is_dir()] if (out / "keys").is_dir() else []
    complete = sum(all((out / name.format(i)).is_file() for name in PER_STUDENT) for i in ids)
    problems = len(json.loads((out / "keys" / ids[0] / "variant.json").read_text())["problems"]) if ids else 0
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    return f"{complete}/{students} student dirs complete, {problems} problems each, {size / 2**20:.1f} MiB written"


def cli_runs(tmp: Path, bank: Path, roster: Path, runs: int) -> tuple[list[float], str]:
    """Wall seconds of each CLI run, and a note: output check and the largest RSS of any process it ran."""
    env = {**os.environ, SECRET_ENV: "bench-secret-not-for-real-use"}
    times, note = [], ""
    for run in range(runs):
        out = tmp / f"cli_{run}"
        seconds, code, err = run_timed([*CLI, "worksheet", str(bank), "-o", str(out),
                                        "--roster", str(roster), "--secret-env", SECRET_ENV], env=env, cwd=tmp)
        if code:
            raise SystemExit(f"problemgen worksheet failed (exit {code}): {err.decode(errors='replace')[-500:]}")
        times.append(seconds)
        note = check_output(out, 200)
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # CLI or any of its workers
    return times, f"{note}; largest process RSS {largest:.0f} MB"


def make_job(bank: Path, out: Path, jobs: int | None):
    """A WorksheetJob with ``jobs`` worker processes (None: the library's choice), if the field exists."""
    from problemgen.documents import worksheet

    extra = {"jobs": jobs} if "jobs" in worksheet.WorksheetJob.__dataclass_fields__ else {}
    return worksheet.WorksheetJob(bank, out, **extra)


def library_run(tmp: Path, bank: Path, roster: Path, label: str, jobs: int | None = 1) -> tuple[float, float]:
    """(wall, CPU) seconds of one write_class_set; CPU includes worker processes (if any ended)."""
    from problemgen.documents import worksheet

    def cpu() -> float:
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    start, cpu_start = time.perf_counter(), cpu()
    worksheet.write_class_set(make_job(bank, tmp / label, jobs), roster, SECRET_ENV)
    return time.perf_counter() - start, cpu() - cpu_start


def generation_ratio(tmp: Path, bank_path: Path, students: int, runs: int) -> tuple[float, float, float]:
    """(class-set CPU s, generation-alone CPU s, ratio), medians of ``runs`` interleaved pairs in this process.

    The class set is ``write_class_set`` in one process (every file written); the baseline generates the
    same students' problems (same seeds, same cache) and nothing else — the cost no class set can avoid."""
    from problemgen.documents import worksheet
    from problemgen.documents.banks import load_bank

    bank, full, alone = load_bank(bank_path), [], []
    for run in range(runs):
        prefix = f"ratio{run}_"
        roster = write_roster(tmp, students, prefix)
        start = time.process_time()
        worksheet.write_class_set(make_job(bank_path, tmp / f"ratio_{run}", 1), roster, SECRET_ENV)
        full.append(time.process_time() - start)
        cache, start = worksheet.ProblemCache(), time.process_time()
        for n in range(students):
            student = f"{prefix}{n:04d}"
            seed, tag = worksheet.student_seed(os.environ[SECRET_ENV], bank.id, bank.seed, student)
            worksheet.build_variant(bank, seed, student=student, variant_id=f"{bank.id}-{tag}", cache=cache)
        alone.append(time.process_time() - start)
    return median(full), median(alone), median(full) / median(alone)


def stage_breakdown(bank_path: Path, students: int) -> list[list[object]]:
    """Median ms per student of each step write_class_set takes, timed separately on one process."""
    from problemgen.documents import worksheet
    from problemgen.documents.banks import load_bank

    bank = load_bank(bank_path)
    cache, renderer = worksheet.ProblemCache(), worksheet.DocumentRenderer()
    steps: dict[str, list[float]] = {"build_variant (generate 20)": [], "documents (md worksheet + key)": [],
                                     "answer_sheets (2 TOML)": [], "variant.to_json": []}
    for n in range(students):
        seed, tag = worksheet.student_seed("stage-secret", bank.id, bank.seed, f"stage{n}")
        t0 = time.perf_counter()
        variant = worksheet.build_variant(bank, seed, student=f"stage{n}", variant_id=f"{bank.id}-{tag}", cache=cache)
        t1 = time.perf_counter()
        renderer.documents(variant, ("md",), bank.instructions)
        t2 = time.perf_counter()
        worksheet.answer_sheets(variant)
        t3 = time.perf_counter()
        variant.to_json()
        t4 = time.perf_counter()
        for name, seconds in zip(steps, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
            steps[name].append(seconds)
    total = sum(median(v) for v in steps.values())
    return [[name, f"{median(v) * 1000:.1f}", f"{median(v) / 20 * 1000:.3f}", f"{median(v) / total:.0%}"]
            for name, v in steps.items()]


def memory_child(tmp: Path, bank: Path, students: int, jobs: str) -> dict:
    roster = write_roster(tmp, students, f"m{jobs}_")
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))  # the checkout's code
    env = {**os.environ, SECRET_ENV: "bench-secret-not-for-real-use", "PYTHONPATH": path}
    proc = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(bank), str(roster),
                           str(tmp / f"mem_{students}_{jobs}"), SECRET_ENV, jobs],
                          env=env, cwd=tmp, capture_output=True, text=True, check=False)
    if proc.returncode:
        raise SystemExit(f"memory child failed: {proc.stderr[-800:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def profile(tmp: Path, bank: Path) -> None:
    """One serial 100-student library run under pyinstrument (or cProfile when it is not installed)."""
    roster = write_roster(tmp, 100, "prof")
    library_run(tmp, bank, write_roster(tmp, 5, "warm"), "profile_warm")
    try:
        from pyinstrument import Profiler
    except ImportError:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(library_run, tmp, bank, roster, "profile")
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
        return
    profiler = Profiler(interval=0.0005)
    profiler.start()
    library_run(tmp, bank, roster, "profile")
    profiler.stop()
    print(profiler.output_text(unicode=False, color=False, show_all=False))


def kind_costs(bank_path: Path, seeds: int = 30, top: int = 6) -> list[list[object]]:
    """The bank's most expensive kinds to generate: mean ms over ``seeds`` fresh seeds (redraws and tails count)."""
    from problemgen.model import registry
    from problemgen.documents.banks import load_bank

    rows = []
    for item in load_bank(bank_path).items:
        times = []
        for seed in range(10_000, 10_000 + seeds):
            start = time.perf_counter()
            registry.generate(item.kind, seed, item.difficulty, **item.overrides)
            times.append(time.perf_counter() - start)
        rows.append((sum(times) / len(times), item.kind, item.difficulty))
    total = sum(r[0] for r in rows)
    return [[kind, difficulty, f"{t * 1000:.2f}", f"{t / total:.0%}"] for t, kind, difficulty in sorted(rows, reverse=True)[:top]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="CLI runs of the 200-student set")
    parser.add_argument("--profile", action="store_true", help="profile a serial 100-student run instead")
    args = parser.parse_args()
    os.environ[SECRET_ENV] = "bench-secret-not-for-real-use"
    sys.path.insert(0, str(ROOT))
    print(machine_line())
    with tempfile.TemporaryDirectory(prefix="pg-bench-classset-") as name:
        tmp = Path(name)
        bank = write_bank(tmp)
        if args.profile:
            return profile(tmp, bank)
        cli_times, note = cli_runs(tmp, bank, write_roster(tmp, 200), args.runs)
        cli = median(cli_times)
        rows = [["CLI, 200 x 20, default workers (end to end)", f"{cli:.2f}", "", f"{cli / 4000 * 1000:.2f}", "", "",
                 f"<= 5 s: {verdict(cli <= 5.0)}"]]

        library_run(tmp, bank, write_roster(tmp, 10, "warm"), "warm")  # imports, template compilation
        sizes = (50, 100, 200)
        serial = {n: library_run(tmp, bank, write_roster(tmp, n, f"j1n{n}_"), f"serial_{n}") for n in sizes}
        for n in sizes:
            (wall, cpu), (base_wall, base_cpu) = serial[n], serial[sizes[0]]
            rows.append([f"library, {n} x 20, 1 process (warm)", f"{wall:.2f}", f"{cpu:.2f}", f"{wall / (n * 20) * 1000:.2f}",
                         f"{n / sizes[0]:.0f}", f"{wall / base_wall:.2f} / {cpu / base_cpu:.2f}", ""])
        full_cpu, alone_cpu, ratio = generation_ratio(tmp, bank, 100, 3)
        rows.append(["library, 100 x 20, 1 process: CPU vs generating alone", f"{full_cpu:.2f}", f"{alone_cpu:.2f}",
                     f"{full_cpu / 2000 * 1000:.2f}", "", f"{ratio:.2f} x generation",
                     f"<= 1.5x: {verdict(ratio <= 1.5)}"])
        auto, auto_cpu = library_run(tmp, bank, write_roster(tmp, 200, "auto"), "auto_200", None)
        rows.append(["library, 200 x 20, default workers (warm)", f"{auto:.2f}", f"{auto_cpu:.2f}", f"{auto / 4000 * 1000:.2f}",
                     "", f"{auto / serial[200][0]:.2f} of 1 proc", f"<= 5 s: {verdict(auto <= 5.0)}"])
        print(table(["workload", "wall s", "CPU s", "wall ms/problem", "x students", "x wall / x CPU", "target"], rows,
                    title=f"\nClass set (md + key + answers.toml + key.toml + variant.json); CLI median of {args.runs}"))
        print(f"CLI runs: {note}")

        print(table(["step (1 process, warm)", "ms/student", "ms/problem", "share"], stage_breakdown(bank, 40),
                    title="\nWhere the time goes: median per student over 40 students (file writes not included)"))
        print(table(["kind", "difficulty", "mean generate ms", "share of the 20"], kind_costs(bank),
                    title="\nMost expensive kinds of the bank to generate (mean over 30 fresh seeds)"))

        result = memory_child(tmp, bank, 500, "1")
        peak_mb = result["peak_kb"] / 1024
        growth = (result["peak_kb"] - result["imported_kb"]) / 10000
        mem_rows = [["10,000 problems (500 x 20), 1 process", f"{result['imported_kb'] / 1024:.0f}", f"{peak_mb:.0f}",
                     f"{growth:.2f}", f"{result['seconds']:.2f}", f"<= 300 MB: {verdict(peak_mb <= 300)}"]]
        print(table(["child process", "after imports MB", "peak MB", "KiB/problem", "seconds", "target"], mem_rows,
                    title="\nPeak memory (ru_maxrss of a child running write_class_set in one process)"))

if __name__ == "__main__":
    main()
