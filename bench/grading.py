"""Answer-sheet grading throughput in class mode: sheets per second, library and CLI, RAM and disk.

Targets (issue 20), as ratios inside one run:
* class grading in one process within 1.5x the parse floor. **The parse floor** is, for each student,
  reading ``variant.json`` and the answer sheet and parsing both into Python data: the variant's bytes
  parsed by ``parse_variant_json`` (orjson, the parser grading uses; grading builds its objects from that) plus
  ``read_sheet``, the strict, size-capped sheet reader grading itself uses. Nothing else: no objects, no
  verdicts, no output.
* automatic workers (``jobs=None``, what the CLI uses without --jobs) never slower than one process
  (5 % allowed for noise);
* memory flat with class size: the peak RSS of a child process grading 100, 400 and 1600 sheets, and the
  growth per extra sheet between them.

Where the files are. Class grading creates one report file per student. On some disks creating a file is
the dominant cost (on this project's shared VMs the ext4 disk spends 0.2-0.9 ms of kernel CPU per new
inode, as much as parsing a student's two files), so the target row runs with its inputs and outputs on a
RAM directory (tmpfs, ``_common.ram_dir``) when the machine has one. Beside it the same floor and run are
timed on the disk (``_common.disk_dir``) together with the disk's own cost of creating as many inodes,
measured in the same rounds (``_common.inode_seconds``), so a reader sees both.

Set-up (not timed): a class set of 200 students x 20 problems is written with the library; then one
submission per student: 60% are the student's own key.toml (all correct), 30% are the key with every
digit of every answer rotated (wrong, sometimes a known mistake, sometimes unreadable), and 10% are blank
answer sheets (nothing answered).

Timed, interleaved rounds, medians:
* the output floor (information): the parse floor plus serialising every student's report, made beforehand,
  as the compact JSON grading writes and writing it to a new file; what the required outputs cost before
  any grading is done;
* a lower bound (information): the parse floor plus a grader reduced to comparing the parsed values with the
  key and the known mistakes, writing one small JSON report per sheet (``compare_only_grader``): what
  the 1.5x budget leaves for everything a real grader does beyond comparing values;
* the parse floor and `classgrade.grade_class(submissions, class_dir, out)` in one process, with jobs=2
  and with automatic workers (every output written: one JSON report per student, gradebook, summaries,
  items.csv), on the RAM directory, then the floor and the one-process run on the disk;
* the CLI end to end: `problemgen grade SUBMISSIONS --variants CLASS -o OUT --format json` (imports,
  grading and every output file), with --jobs 1 and --jobs 2;
then peak memory of child processes, and a per-sheet breakdown of one student's grading.

Usage: python bench/grading.py [--students 200] [--runs 5] [--memory 100,400,1600] [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import (CLI, KINDS, ROOT, SECRET_ENV, disk_dir, inode_seconds, machine_line, median, ram_dir, run_timed,
                     table, verdict)

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


def library(class_dir: Path, submissions: Path, jobs: int | None, scratch: Path) -> tuple[float, float, object]:
    """(wall, CPU, ClassRun) of one class-mode run writing into a fresh directory under ``scratch``
    (removed afterwards, untimed): every report is a new file, as in a first run."""
    from problemgen.classes import sheet_class as classgrade

    out = Path(tempfile.mkdtemp(prefix="pg-bench-out-", dir=scratch))
    try:
        start, cpu_start = time.perf_counter(), cpu_seconds()
        run = classgrade.grade_class(submissions, class_dir, out / "out", "json", jobs=jobs)
        return time.perf_counter() - start, cpu_seconds() - cpu_start, run
    finally:
        shutil.rmtree(out, ignore_errors=True)


def parse_floor(class_dir: Path, submissions: Path, students: int) -> tuple[float, float]:
    """(wall, CPU) of reading and parsing every student's two files into Python data: ``variant.json`` by
    the variant parser and the sheet by the sheet reader, both as grading uses them. What grading cannot
    avoid: the baseline of the "x parse floor" column."""
    from problemgen.model.variantfile import parse_variant_json
    from problemgen.sheets.answersheet import read_sheet

    start, cpu_start = time.perf_counter(), cpu_seconds()
    for n in range(students):
        student = f"student{n:04d}"
        parse_variant_json((class_dir / "keys" / student / "variant.json").read_bytes())
        read_sheet(submissions / f"{student}.toml")
    return time.perf_counter() - start, cpu_seconds() - cpu_start


def report_dicts(class_dir: Path, submissions: Path, students: int) -> dict[str, dict]:
    """Every student's report as the JSON-able dict grading writes (built once, untimed), for the output floor."""
    from problemgen.classes.sheet_class import SheetJob, grade_student
    from problemgen.sheets.reports import report_dict

    reports = {}
    for n in range(students):
        student = f"student{n:04d}"
        row = grade_student(SheetJob(str(class_dir), student, str(submissions / f"{student}.toml")))
        reports[student] = report_dict(row.report)
    return reports


def output_floor(class_dir: Path, submissions: Path, reports: dict[str, dict], scratch: Path) -> tuple[float, float]:
    """(wall, CPU) of the parse floor plus what any grader must still do with the result: serialise each
    student's (already made) report as compact JSON and write it to a new file. No objects, no grading, no
    statistics: it shows how much of the 1.5x budget the required outputs alone take."""
    from problemgen.model.variantfile import parse_variant_json
    from problemgen.sheets.answersheet import read_sheet
    from problemgen.sheets.reports import json_text

    out = Path(tempfile.mkdtemp(prefix="pg-bench-floor-", dir=scratch))
    try:
        start, cpu_start = time.perf_counter(), cpu_seconds()
        for student, report in reports.items():
            parse_variant_json((class_dir / "keys" / student / "variant.json").read_bytes())
            read_sheet(submissions / f"{student}.toml")
            text = json_text(report, compact=True)
            with open(out / f"{student}.json", "w", encoding="utf-8") as stream:
                stream.write(text)
        return time.perf_counter() - start, cpu_seconds() - cpu_start
    finally:
        shutil.rmtree(out, ignore_errors=True)


# A grader reduced to comparing values, to show what the 1.5x budget leaves once the values are compared. It
# reads nothing but the parsed TOML values (no notations, units or shapes written as text), names a
# mistake only by an equal value, keeps no statistics and writes one small JSON report per sheet. It grades
# nothing problemgen would: it is a lower bound on any grader's cost, not a grader.


def _flat(value: object) -> list:
    if isinstance(value, list):
        return [x for row in value for x in row] if value and isinstance(value[0], list) else value
    return [value]


def _fraction_close(answer: object, key: object, rtol: float, atol: float) -> float:
    """Fraction of entries within tolerance (0 on a length mismatch); anything not numeric compares by ==."""
    try:
        given, expected = _flat(answer), _flat(key)
        if len(given) != len(expected):
            return 0.0
        return sum(abs(a - b) <= atol + rtol * abs(b) for a, b in zip(given, expected)) / max(len(expected), 1)
    except TypeError:
        return 1.0 if answer == key else 0.0


def _compare_only(variant: dict, tables: dict) -> dict:
    """One sheet's report from value comparisons alone (see the comment above)."""
    results, earned, possible = [], 0.0, 0.0
    for placed in variant["problems"]:
        table = tables.get(placed["id"]) or {}
        for part in placed["problem"]["parts"]:
            answer, name = table.get(part["key"], ""), f"{placed['id']}.{part['key']}"
            possible += part["weight"]
            if answer in ("", []):
                results.append({"name": name, "status": "wrong", "score": 0, "feedback": "no answer"})
                continue
            score = 1.0 if answer == part["value"] else _fraction_close(answer, part["value"], part["rtol"], part["atol"])
            mistake = None if score == 1 else next(
                (m["name"] for m in part["mistakes"]
                 if _fraction_close(answer, m["value"], part["rtol"], part["atol"]) == 1), None)
            earned += score * part["weight"]
            results.append({"name": name, "status": "correct" if score == 1 else "wrong", "score": score,
                            "mistake": mistake})
    return {"student": variant["student"], "score": earned / possible, "results": results}


def compare_only_grader(class_dir: Path, submissions: Path, students: int, scratch: Path) -> tuple[float, float]:
    """(wall, CPU) of the parse floor plus ``_compare_only`` and one compact JSON report written per sheet."""
    import orjson

    from problemgen.model.variantfile import parse_variant_json
    from problemgen.sheets.answersheet import read_sheet

    out = Path(tempfile.mkdtemp(prefix="pg-bench-compare-", dir=scratch))
    try:
        start, cpu_start = time.perf_counter(), cpu_seconds()
        for n in range(students):
            student = f"student{n:04d}"
            variant = parse_variant_json((class_dir / "keys" / student / "variant.json").read_bytes())
            report = _compare_only(variant, read_sheet(submissions / f"{student}.toml").tables)
            (out / f"{student}.json").write_bytes(orjson.dumps(report))
        return time.perf_counter() - start, cpu_seconds() - cpu_start
    finally:
        shutil.rmtree(out, ignore_errors=True)


def breakdown(class_dir: Path, submissions: Path, students: int) -> list[list[object]]:
    """Median microseconds per sheet of each step of grading one student (as ``grade_student`` does)."""
    from problemgen.classes.sheet_class import SheetJob, grade_student
    from problemgen.model.variantfile import parse_variant_json
    from problemgen.sheets.answersheet import read_sheet
    from problemgen.sheets.reports import render_json

    steps: dict[str, list[float]] = {"parse_variant_json (variant.json)": [], "read_sheet (TOML)": [],
                                     "the rest of grade_student (objects, 20 problems graded)": [],
                                     "render_json (the report)": []}
    for n in range(students):
        student = f"student{n:04d}"
        sheet = submissions / f"{student}.toml"
        t0 = time.perf_counter()
        parse_variant_json((class_dir / "keys" / student / "variant.json").read_bytes())
        t1 = time.perf_counter()
        read_sheet(sheet)
        t2 = time.perf_counter()
        row = grade_student(SheetJob(str(class_dir), student, str(sheet)))
        t3 = time.perf_counter()
        render_json(row.report, compact=True)
        t4 = time.perf_counter()
        for name, seconds in zip(steps, (t1 - t0, t2 - t1, (t3 - t2) - (t2 - t0), t4 - t3)):
            steps[name].append(seconds)
    total = sum(median(v) for v in steps.values())
    return [[name, f"{median(v) * 1e6:.0f}", f"{median(v) / total:.0%}"] for name, v in steps.items()]


def profile(class_dir: Path, submissions: Path, scratch: Path) -> None:
    library(class_dir, submissions, 1, scratch)  # warm-up: imports, caches
    try:
        from pyinstrument import Profiler
    except ImportError:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(library, class_dir, submissions, 1, scratch)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
        return
    profiler = Profiler(interval=0.0005)
    profiler.start()
    library(class_dir, submissions, 1, scratch)
    profiler.stop()
    print(profiler.output_text(unicode=False, color=False, show_all=False))


# ------------------------------------------------------------------------------------------ memory

# Run in a child so its peak is this class size's alone. ru_maxrss would also count the image the child was
# forked from (Linux keeps the high-water mark across exec), so on Linux the child reads its own VmHWM after
# resetting it once its imports are done (/proc/self/clear_refs); elsewhere it falls back to ru_maxrss.
MEMORY_CHILD = """
import json, resource, sys
from problemgen.classes import sheet_class
submissions, class_dir, out, jobs = sys.argv[1:5]

def kb(field):
    try:
        with open("/proc/self/status") as status:
            return int(next(line for line in status if line.startswith(field)).split()[1])
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

imported = kb("VmRSS:")
try:
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
except OSError:
    pass
sheet_class.grade_class(submissions, class_dir, out, "json", jobs=None if jobs == "auto" else int(jobs))
print(json.dumps({"imported_kb": imported, "peak_kb": kb("VmHWM:")}))
"""


def class_subset(big_class: Path, big_submissions: Path, where: Path, students: int) -> tuple[Path, Path]:
    """The first ``students`` of a generated class as a class of their own: a manifest listing them, the
    big class's keys (a symbolic link) and hard links to their sheets (no regeneration)."""
    class_dir, submissions = where / f"class_{students}", where / f"submissions_{students}"
    class_dir.mkdir()
    submissions.mkdir()
    manifest = json.loads((big_class / "manifest.json").read_text())
    manifest["students"] = manifest["students"][:students]
    (class_dir / "manifest.json").write_text(json.dumps(manifest))
    (class_dir / "keys").symlink_to(big_class / "keys")
    for entry in manifest["students"]:
        name = f"{entry['student']}.toml"
        os.link(big_submissions / name, submissions / name)
    return class_dir, submissions


def memory_child(class_dir: Path, submissions: Path, out: Path, jobs: str) -> dict:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))  # the checkout's code
    proc = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(submissions), str(class_dir), str(out), jobs],
                          env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True, check=False)
    shutil.rmtree(out, ignore_errors=True)
    if proc.returncode:
        raise SystemExit(f"memory child failed: {proc.stderr[-800:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def memory_rows(tmp: Path, sizes: list[int]) -> list[list[object]]:
    """Peak RSS of a child grading each class size (one process and automatic workers), and the growth
    per extra sheet from the next smaller size: "flat" means no more than a small record per sheet. (Below
    100 sheets per worker the automatic run is one process, so its first step up also pays for starting
    the worker pool.)"""
    where = tmp / "memory"
    where.mkdir()
    big_class, big_submissions, _ = make_class(where, max(sizes))
    classes = {size: class_subset(big_class, big_submissions, where, size) for size in sizes[:-1]}
    classes[sizes[-1]] = (big_class, big_submissions)
    rows = []
    for jobs in ("1", "auto"):
        peaks = {}
        for size in sizes:
            result = memory_child(*classes[size], where / f"out_{size}_{jobs}", jobs)
            peaks[size] = result["peak_kb"]
            smaller = [n for n in sizes if n < size]
            growth = (peaks[size] - peaks[smaller[-1]]) / (size - smaller[-1]) if smaller else None
            rows.append([f"{size} sheets, {'1 process' if jobs == '1' else 'automatic workers'}",
                         f"{result['imported_kb'] / 1024:.1f}", f"{peaks[size] / 1024:.1f}",
                         "" if growth is None else f"{growth:.2f}"])
    return rows


# ------------------------------------------------------------------------------------------ the tables


def timed_rounds(ram: tuple[Path, Path, Path], disk: tuple[Path, Path, Path] | None, n: int, runs: int) -> dict:
    """Every timed library workload, interleaved round by round; each value a list of (wall, CPU)."""
    from problemgen.classes.workers import worker_count

    times: dict[str, list[tuple[float, float]]] = {}
    reports = report_dicts(ram[0], ram[1], n)

    def add(name: str, result: tuple) -> None:
        times.setdefault(name, []).append(result[:2])

    for _ in range(runs):
        class_dir, submissions, scratch = ram
        add("floor", parse_floor(class_dir, submissions, n))
        add("output floor", output_floor(class_dir, submissions, reports, scratch))
        add("compare only", compare_only_grader(class_dir, submissions, n, scratch))
        add("one", library(class_dir, submissions, 1, scratch))
        add("jobs2", library(class_dir, submissions, 2, scratch))
        times.setdefault("chosen", []).append((worker_count(None, n),) * 2)  # what the automatic run is about to pick
        add("auto", library(class_dir, submissions, None, scratch))
        if disk is not None:
            class_dir, submissions, scratch = disk
            add("disk floor", parse_floor(class_dir, submissions, n))
            add("disk one", library(class_dir, submissions, 1, scratch))
            seconds = inode_seconds(scratch, n + 5, 2)  # reports, gradebook, 3 summaries, items.csv; 2 directories
            add("disk inodes", (seconds, seconds))
    return times


def cli_rows(class_dir: Path, submissions: Path, scratch: Path, n: int, runs: int, floor: float) -> list[list[object]]:
    rows = []
    for jobs in (1, 2):
        times, cpus = [], []
        for run in range(runs):
            out = Path(tempfile.mkdtemp(prefix="pg-bench-cli-", dir=scratch))
            cpu_start = cpu_seconds()
            command = [*CLI, "grade", str(submissions), "--variants", str(class_dir),
                       "-o", str(out / "out"), "--format", "json", "--jobs", str(jobs), "--no-progress"]
            seconds, code, err = run_timed(command, cwd=scratch)
            cpus.append(cpu_seconds() - cpu_start)
            shutil.rmtree(out, ignore_errors=True)
            if code:
                raise SystemExit(f"problemgen grade failed (exit {code}): {err.decode(errors='replace')[-500:]}")
            times.append(seconds)
        seconds, cpu = median(times), median(cpus)
        rows.append([f"CLI problemgen grade --jobs {jobs} (end to end)", f"{seconds:.3f}", f"{cpu:.3f}",
                     f"{n / seconds:.0f}", f"{seconds / floor:.2f}", ""])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--memory", default="100,400,1600", help="class sizes for peak memory ('' to skip)")
    parser.add_argument("--profile", action="store_true", help="profile one library run instead")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    os.environ[SECRET_ENV] = "bench-secret-not-for-real-use"
    ram = ram_dir()
    print(machine_line())
    print(f"RAM directory: {ram or 'none (every row on the disk)'}; disk directory: {disk_dir()}")
    with tempfile.TemporaryDirectory(prefix="pg-bench-grading-", dir=ram or disk_dir()) as name, \
            tempfile.TemporaryDirectory(prefix="pg-bench-grading-disk-", dir=disk_dir()) as disk_name:
        tmp, n = Path(name), args.students
        class_dir, submissions, counts = make_class(tmp, n)
        print("sheets: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
        if args.profile:
            return profile(class_dir, submissions, tmp)
        disk = None
        if ram:
            disk_tmp = Path(disk_name)
            shutil.copytree(class_dir, disk_tmp / "class")
            shutil.copytree(submissions, disk_tmp / "submissions")
            disk = (disk_tmp / "class", disk_tmp / "submissions", disk_tmp)
        _, _, outcome = library(class_dir, submissions, 1, tmp)  # warm-up: imports, parser caches
        statuses: dict[str, int] = {}
        for result in outcome.records:
            statuses[result.status] = statuses.get(result.status, 0) + 1
        mean_score = sum(r.score for r in outcome.records) / n
        load = os.getloadavg()[0]
        times = timed_rounds((class_dir, submissions, tmp), disk, n, args.runs)
        print(f"load1 after the timed rounds: {os.getloadavg()[0]:.2f} (before: {load:.2f})")
        wall = {k: median([t[0] for t in v]) for k, v in times.items()}
        cpu = {k: median([t[1] for t in v]) for k, v in times.items()}
        place = "RAM directory" if ram else "disk"
        floor = wall["floor"]
        rows = [[f"parse floor: parse_variant_json + read_sheet ({place})", f"{floor:.3f}", f"{cpu['floor']:.3f}",
                 f"{n / floor:.0f}", "1.00", "(baseline)"],
                [f"  parse floor + each report's JSON written, nothing graded ({place})", f"{wall['output floor']:.3f}",
                 f"{cpu['output floor']:.3f}", f"{n / wall['output floor']:.0f}", f"{wall['output floor'] / floor:.2f}",
                 "(information: the outputs' own cost)"],
                [f"  parse floor + values compared, a small JSON report each; a lower bound, not a grader ({place})",
                 f"{wall['compare only']:.3f}", f"{cpu['compare only']:.3f}", f"{n / wall['compare only']:.0f}",
                 f"{wall['compare only'] / floor:.2f}", "(information: see compare_only_grader)"],
                [f"grade_class, 1 process, every output written ({place})", f"{wall['one']:.3f}", f"{cpu['one']:.3f}",
                 f"{n / wall['one']:.0f}", f"{wall['one'] / floor:.2f}",
                 f"<= 1.5x floor: {verdict(wall['one'] / floor <= 1.5)} (CPU {cpu['one'] / cpu['floor']:.2f}x)"],
                [f"grade_class, jobs=2 ({place})", f"{wall['jobs2']:.3f}", f"{cpu['jobs2']:.3f}",
                 f"{n / wall['jobs2']:.0f}", f"{wall['jobs2'] / floor:.2f}", ""],
                [f"grade_class, automatic workers ({place}; chose {'/'.join(str(int(c[0])) for c in times['chosen'])})",
                 f"{wall['auto']:.3f}", f"{cpu['auto']:.3f}",
                 f"{n / wall['auto']:.0f}", f"{wall['auto'] / floor:.2f}",
                 f"<= 1 process: {verdict(wall['auto'] <= wall['one'] * 1.05)} ({wall['auto'] / wall['one']:.2f}x)"]]
        if disk:
            disk_floor, inodes = wall["disk floor"], wall["disk inodes"]
            rows += [["parse floor on the disk", f"{disk_floor:.3f}", f"{cpu['disk floor']:.3f}",
                      f"{n / disk_floor:.0f}", f"{disk_floor / disk_floor:.2f}", "(disk baseline)"],
                     ["grade_class, 1 process, on the disk", f"{wall['disk one']:.3f}", f"{cpu['disk one']:.3f}",
                      f"{n / wall['disk one']:.0f}", f"{wall['disk one'] / disk_floor:.2f}", "x the disk floor"],
                     [f"  the disk creating {n + 5} files + 2 directories (CPU, same rounds)", f"{inodes:.3f}",
                      f"{inodes:.3f}", "", f"{inodes / disk_floor:.2f}", "the filesystem's cost"],
                     ["  grade_class on the disk less that cost", f"{wall['disk one'] - inodes:.3f}",
                      f"{cpu['disk one'] - inodes:.3f}", "", f"{(wall['disk one'] - inodes) / disk_floor:.2f}", ""]]
        rows += cli_rows(class_dir, submissions, tmp, n, args.runs, floor)
        print(table(["workload", "wall s", "CPU s", "sheets/s", "x parse floor", "target"], rows,
                    title=f"\nClass-mode grading of {n} sheets x 20 problems, median of {args.runs} interleaved rounds"))
        print(f"outcome check: {statuses}, mean score {mean_score:.2f}")
        sizes = [int(s) for s in args.memory.split(",") if s.strip()]
        if len(sizes) > 1:
            print(table(["child process grading", "after imports MB", "peak while grading MB", "KB per extra sheet"],
                        memory_rows(tmp, sorted(sizes)),
                        title="\nPeak memory of the grading process (its VmHWM; growth from the next smaller class)"))
        print(table(["step (per sheet, 1 process)", "median us", "share"], breakdown(class_dir, submissions, n),
                    title="\nWhere the time goes per sheet"))


if __name__ == "__main__":
    main()
