"""Sandboxed code grading against its fork floor, as a ratio measured in one run (issue 20).

Target: the per-submission time of class code grading (``classes.code_class.class_rows`` with warm
fork servers, the full sandbox at the best level this machine reaches) within 3x of the fork floor.

The fork floor is the least any forking grader must do: from a process that already imported numpy,
fork a child, import the submission, run the same calls, send the encoded results back over a pipe,
wait for the child. No confinement, no checks, no report. The two are interleaved round by round so
that both see the same machine load; the ratio of medians is the figure, the absolute times are
printed beside it for reference only.

Submissions (written to a temp dir): 80% a correct numpy implementation of scaled dot-product
attention, 20% one that forgets the 1/sqrt(d_k) scaling. Hidden tests come from a fixed secret.

Usage: python bench/codegrading.py [--submissions 20] [--rounds 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, machine_line, median, table, verdict

sys.path.insert(0, str(ROOT))

TASK = "scaled_dot_product_attention"
SECRET = "bench-fixed-secret"
TARGET_RATIO = 3.0


def write_class(directory: Path, count: int) -> list[Path]:
    good = (ROOT / "problemgen" / "code" / "tasks" / "solutions" / f"{TASK}.py").read_text()
    bad = good.replace("/ np.sqrt(d_k)", "").replace("/ np.sqrt(q.shape[-1])", "")
    paths = []
    for n in range(count):
        path = directory / f"student{n:03d}.py"
        path.write_text(bad if n % 5 == 4 else good)
        paths.append(path)
    return paths


def fork_floor(paths: list[Path], calls) -> float:
    """Seconds per submission: fork, import, run the calls, encode, send over a pipe, wait."""
    from problemgen.code.sandbox import wire

    start = time.perf_counter()
    for path in paths:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: no confinement at all
            os.close(read)
            spec = importlib.util.spec_from_file_location("submission", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            for call in calls:
                value = getattr(module, call.function)(*call.args, **call.kwargs)
                data = wire.encode(list(value) if isinstance(value, tuple) else value)
                os.write(write, len(data).to_bytes(8, "little") + data)
            os._exit(0)
        os.close(write)
        while os.read(read, 1 << 16):
            pass
        os.close(read)
        os.waitpid(pid, 0)
    return (time.perf_counter() - start) / len(paths)


def sandboxed(plan, directory: Path, sandbox, count: int) -> tuple[float, list[float]]:
    """Seconds per submission of class grading in the sandbox; the scores (a check that it graded)."""
    from problemgen.classes.code_class import class_rows

    start = time.perf_counter()
    _, rows = class_rows(plan, directory, sandbox)
    scores = [row.report.score for row in rows]
    return (time.perf_counter() - start) / count, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--submissions", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    from problemgen.code.grade import make_plan
    from problemgen.code.sandbox import Sandbox
    from problemgen.code.tasks import get_task

    plan = make_plan(get_task(TASK), secret=SECRET)
    work = Path(tempfile.mkdtemp(prefix="problemgen-bench-"))
    try:
        paths = write_class(work, args.submissions)
        with Sandbox() as probe:
            level = probe.probe().isolation
        floors, graded = [], []
        with Sandbox(min_level=level) as sandbox:
            sandbox.probe()  # the fork server starts before the clock
            fork_floor(paths[:2], plan.calls)
            for _ in range(args.rounds):
                floors.append(fork_floor(paths, plan.calls))
                seconds, scores = sandboxed(plan, work, sandbox, len(paths))
                graded.append(seconds)
        perfect = sum(s == 1.0 for s in scores)
        ratio = median(graded) / median(floors)
        print(machine_line())
        print(table(
            ["row", "ms per submission (median)", "ratio to fork floor", "target"],
            [["fork floor (fork, import, calls, pipe)", f"{median(floors) * 1000:.2f}", "1.00", ""],
             [f"class grading in the sandbox ({level})", f"{median(graded) * 1000:.2f}", f"{ratio:.2f}",
              f"<= {TARGET_RATIO:g}x: {verdict(ratio <= TARGET_RATIO)}"]],
            title=f"{TASK}: {len(paths)} submissions x {args.rounds} interleaved rounds, {len(plan.calls)} calls each "
                  f"({perfect} graded 1.0, expected {len(paths) - len(paths) // 5})",
        ))  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
