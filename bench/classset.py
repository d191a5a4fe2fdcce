"""Class-set generation: 200 students x 20 problems, its linearity, and peak memory at 10,000 problems.

Targets (issues 8 and 20):
* CPU per problem of a class set at most 1.5x the CPU of generating the same problems alone (same run,
  same seeds, one process, interleaved rounds; the baseline's CPU seconds have their own row). The target
  row writes the class set into a RAM directory (/dev/shm) when the machine has one: on some disks creating
  a file or directory costs the kernel 0.2-0.9 ms of CPU, the filesystem's cost and not problemgen's. Beside
  it the same class set is written to the disk (TMPDIR), with the disk's own CPU for creating that many
  files and directories measured in the same round, and the disk figure minus it;
* 200 students x 20 problems (Markdown worksheet, answer key, answer sheet, key sheet and frozen
  variant for each student) in at most 5 s wall: measured end to end through the CLI
  (`problemgen worksheet BANK --roster roster.csv --secret-env VAR`, imports included) and through the
  library (`problemgen.documents.worksheet.write_class_set`, imports already paid);
* generation cost linear in the number of problems: 50, 100 and 200 students in one warm process,
  shown as milliseconds per problem and as the time ratio against the student ratio;
* peak memory (ru_maxrss of a child process) for 10,000 problems (500 students) at most 300 MB, next
  to the same figure for 2,000 problems and for the imports alone, so the growth per problem shows.

The bank is written into the temp dir: 20 kinds across the topics, difficulties 1 and 2 alternating.
Everything is written under temp dirs (on the disk; the ratio's RAM class sets under /dev/shm) that are
deleted at the end.

Usage: python bench/classset.py [--runs 3] [--pairs 5] [--profile]   (from the checkout)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from _common import (KINDS, ROOT, SECRET_ENV, CLI, disk_dir, inode_seconds, machine_line, median, ram_dir, run_timed,
                     table, verdict)

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


@dataclass
class RatioRun:
    """CPU seconds of each workload of :func:`generation_ratio`, one list entry per interleaved round."""

    ram: list[float] = field(default_factory=list)
    alone: list[float] = field(default_factory=list)
    disk: list[float] = field(default_factory=list)
    inodes: list[float] = field(default_factory=list)


def class_set_inodes(students: int) -> tuple[int, int]:
    """(files, directories) a class set creates: five files per student and the manifest; a handout and a
    key directory per student, plus the output, ``handouts`` and ``keys`` directories."""
    return len(PER_STUDENT) * students + 1, 2 * students + 3


def generation_ratio(ram: str | None, disk: str, tmp: Path, bank_path: Path, students: int, rounds: int) -> RatioRun:
    """CPU seconds of a class set against generating its problems alone, ``rounds`` interleaved rounds.

    Each round times, in this process and on one fresh roster: ``write_class_set`` writing into the RAM
    directory (the target; skipped when the machine has none), the baseline, ``write_class_set`` writing
    into the disk directory, and the disk's own CPU for creating as many new files and directories as that
    class set did (:func:`inode_seconds`). The baseline generates exactly the class set's problems and
    nothing else: the class-wide structure draw (``fair_overrides``) and every student's ``build_variant``
    with it, same seeds, same cache — the cost no class set can avoid."""
    from problemgen.documents import worksheet
    from problemgen.documents.banks import load_bank

    bank, run = load_bank(bank_path), RatioRun()
    files, directories = class_set_inodes(students)
    for number in range(rounds):
        prefix = f"ratio{number}_"
        roster = write_roster(tmp, students, prefix)
        if ram:
            run.ram.append(class_set_cpu(bank_path, roster, ram))
        start = time.process_time()
        fair, cache = worksheet.fair_overrides(bank, bank.seed), worksheet.ProblemCache()
        for n in range(students):
            student = f"{prefix}{n:04d}"
            seed, tag = worksheet.student_seed(os.environ[SECRET_ENV], bank.id, bank.seed, student)
            worksheet.build_variant(bank, seed, student=student, variant_id=f"{bank.id}-{tag}", cache=cache, fair=fair)
        run.alone.append(time.process_time() - start)
        run.disk.append(class_set_cpu(bank_path, roster, disk))
        run.inodes.append(inode_seconds(disk, files, directories))
    return run


def class_set_cpu(bank_path: Path, roster: Path, parent: str) -> float:
    """CPU seconds of one ``write_class_set`` in this process, writing into a fresh directory under
    ``parent`` (deleted afterwards, untimed)."""
    from problemgen.documents import worksheet

    out = Path(tempfile.mkdtemp(prefix="pg-bench-classset-", dir=parent))
    try:
        start = time.process_time()
        worksheet.write_class_set(make_job(bank_path, out / "class", 1), roster, SECRET_ENV)
        return time.process_time() - start
    finally:
        shutil.rmtree(out, ignore_errors=True)


def ratio_rows(run: RatioRun, ram: str | None, disk: str, students: int) -> list[list[object]]:
    """The target row (class set on the RAM directory) and the disk rows beside it, medians of the rounds."""
    alone, problems = median(run.alone), students * len(KINDS)
    files, directories = class_set_inodes(students)

    def row(label: str, rounds: list[float], target: bool = False) -> list[object]:
        seconds = median(rounds)
        ratio, spread = seconds / alone, [r / a for r, a in zip(rounds, run.alone)]
        verdict_text = f"<= 1.5x: {verdict(ratio <= 1.5)}" if target else "(information)"
        return [label, f"{seconds:.3f}", f"{seconds / problems * 1000:.3f}", f"{ratio:.2f}",
                f"{min(spread):.2f}-{max(spread):.2f}", verdict_text]

    net = [d - i for d, i in zip(run.disk, run.inodes)]
    rows = [["baseline: generating the same problems alone (fair_overrides + build_variant, same seeds)",
             f"{alone:.3f}", f"{alone / problems * 1000:.3f}", "1.00", "", ""]]
    if ram:
        rows.append(row(f"TARGET: class set, output on RAM ({ram})", run.ram, target=True))
    rows += [
        row(f"{'' if ram else 'TARGET (no RAM directory): '}class set, output on disk ({disk})", run.disk,
            target=not ram),
        row(f"disk's own cost: creating {files} files + {directories} dirs on {disk} (inode_seconds)", run.inodes),
        row("class set on disk, minus that inode cost (per round)", net),
    ]
    return rows


def stage_breakdown(bank_path: Path, students: int) -> list[list[object]]:
    """Median ms per student of each step write_class_set takes, timed separately on one process."""
    from problemgen.documents import worksheet
    from problemgen.documents.banks import load_bank

    bank = load_bank(bank_path)
    cache, renderer = worksheet.ProblemCache(), worksheet.DocumentRenderer()
    fair = worksheet.fair_overrides(bank, bank.seed)
    steps: dict[str, list[float]] = {"build_variant (generate 20)": [], "documents (md worksheet + key)": [],
                                     "answer_sheets (2 TOML)": [], "variant.to_json": []}
    for n in range(students):
        seed, tag = worksheet.student_seed("stage-secret", bank.id, bank.seed, f"stage{n}")
        t0 = time.perf_counter()
        variant = worksheet.build_variant(bank, seed, student=f"stage{n}", variant_id=f"{bank.id}-{tag}", cache=cache,
                                          fair=fair)
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
    """One serial 100-student library run under pyinstrument (or cProfile when it is not installed), writing
    where the target row does (the RAM directory when the machine has one)."""
    roster = write_roster(tmp, 100, "prof")
    out = Path(tempfile.mkdtemp(prefix="pg-bench-profile-", dir=ram_dir() or tmp))
    try:
        library_run(out, bank, write_roster(tmp, 5, "warm"), "profile_warm")
        _profiled(lambda: library_run(out, bank, roster, "profile"))
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _profiled(run) -> None:
    try:
        from pyinstrument import Profiler
    except ImportError:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(run)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
        return
    profiler = Profiler(interval=0.0005)
    profiler.start()
    run()
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


def overview(tmp: Path, bank: Path, runs: int) -> None:
    """The CLI end to end, the library at 50/100/200 students and with default workers (output on the disk)."""
    cli_times, note = cli_runs(tmp, bank, write_roster(tmp, 200), runs)
    cli = median(cli_times)
    rows = [["CLI, 200 x 20, default workers (end to end)", f"{cli:.2f}", "", f"{cli / 4000 * 1000:.2f}", "", "",
             f"<= 5 s: {verdict(cli <= 5.0)}"]]
    sizes = (50, 100, 200)
    serial = {n: library_run(tmp, bank, write_roster(tmp, n, f"j1n{n}_"), f"serial_{n}") for n in sizes}
    for n in sizes:
        (wall, cpu), (base_wall, base_cpu) = serial[n], serial[sizes[0]]
        growth = f"{wall / base_wall:.2f} / {cpu / base_cpu:.2f}"
        rows.append([f"library, {n} x 20, 1 process (warm)", f"{wall:.2f}", f"{cpu:.2f}",
                     f"{wall / (n * 20) * 1000:.2f}", f"{n / sizes[0]:.0f}", growth, ""])
    auto, auto_cpu = library_run(tmp, bank, write_roster(tmp, 200, "auto"), "auto_200", None)
    rows.append(["library, 200 x 20, default workers (warm)", f"{auto:.2f}", f"{auto_cpu:.2f}",
                 f"{auto / 4000 * 1000:.2f}", "", f"{auto / serial[200][0]:.2f} of 1 proc",
                 f"<= 5 s: {verdict(auto <= 5.0)}"])
    print(table(["workload", "wall s", "CPU s", "wall ms/problem", "x students", "x wall / x CPU", "target"], rows,
                title=f"\nClass set (md + key + answers.toml + key.toml + variant.json), output on {tmp.parent}; "
                      f"CLI median of {runs}"))
    print(f"CLI runs: {note}")


def ratio_table(tmp: Path, bank: Path, pairs: int) -> None:
    """The issue-20 target: class-set CPU against generating alone, on RAM (target) and on the disk."""
    ram, disk = ram_dir(), disk_dir()
    run = generation_ratio(ram, disk, tmp, bank, 100, pairs)
    headers = ["workload (100 x 20, 1 process, warm)", "CPU s", "CPU ms/problem", "x baseline", "per round", "target"]
    print(table(headers, ratio_rows(run, ram, disk, 100),
                title=f"\nClass set CPU against generating alone: medians of {pairs} interleaved rounds "
                      "(each: RAM class set, baseline, disk class set, disk inode cost; one roster per round)"))
    print("The inode cost is the filesystem's (kernel CPU per new file or directory), not problemgen's: the target "
          "is timed on RAM; the disk rows show what this disk adds.")


def memory_table(tmp: Path, bank: Path) -> None:
    result = memory_child(tmp, bank, 500, "1")
    peak_mb = result["peak_kb"] / 1024
    growth = (result["peak_kb"] - result["imported_kb"]) / 10000
    rows = [["10,000 problems (500 x 20), 1 process", f"{result['imported_kb'] / 1024:.0f}", f"{peak_mb:.0f}",
             f"{growth:.2f}", f"{result['seconds']:.2f}", f"<= 300 MB: {verdict(peak_mb <= 300)}"]]
    print(table(["child process", "after imports MB", "peak MB", "KiB/problem", "seconds", "target"], rows,
                title="\nPeak memory (ru_maxrss of a child running write_class_set in one process)"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="CLI runs of the 200-student set")
    parser.add_argument("--pairs", type=int, default=5, help="interleaved rounds of the generation ratio")
    parser.add_argument("--ratio", action="store_true", help="print only the generation-ratio table")
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
        library_run(tmp, bank, write_roster(tmp, 10, "warm"), "warm")  # imports, template compilation
        if not args.ratio:
            overview(tmp, bank, args.runs)
        ratio_table(tmp, bank, args.pairs)
        if args.ratio:
            return None
        print(table(["step (1 process, warm)", "ms/student", "ms/problem", "share"], stage_breakdown(bank, 40),
                    title="\nWhere the time goes: median per student over 40 students (file writes not included)"))
        print(table(["kind", "difficulty", "mean generate ms", "share of the 20"], kind_costs(bank),
                    title="\nMost expensive kinds of the bank to generate (mean over 30 fresh seeds)"))
        memory_table(tmp, bank)


if __name__ == "__main__":
    main()
