"""Small helpers shared by the bench scripts: timing, medians, percentiles and plain-text tables.

The scripts measure; they never assert on a time (a slow shared machine must not turn into a red
build). Each prints one table and says which target it checks, so a reader can compare by eye.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

ROOT = Path(__file__).resolve().parent.parent
"""The repository checkout the scripts run against."""

VENV_BIN = Path(sys.executable).parent
# The `problemgen` command: the installed script, or the checkout run by this Python when none is installed
# (system python3 has no script; the checkout is put on sys.path so the bench needs no install).
CLI = ([str(VENV_BIN / "problemgen")] if (VENV_BIN / "problemgen").exists() else
       [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); sys.argv[0] = 'problemgen'; "
        "from problemgen.cli import main; main()"])
"""The bin/ directory of the interpreter running the bench (its `problemgen` script sits next to it)."""


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation between closest ranks."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def time_call(function: Callable[[], object], runs: int, warmup: int = 1) -> list[float]:
    """Wall seconds of ``runs`` calls of ``function`` after ``warmup`` untimed ones."""
    for _ in range(warmup):
        function()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return times


def run_timed(command: Sequence[str], *, env: dict | None = None, cwd: str | os.PathLike | None = None,
              stdin: bytes | None = None) -> tuple[float, int, bytes]:
    """(wall seconds, exit code, stderr) of one subprocess run, output discarded."""
    start = time.perf_counter()
    proc = subprocess.run(command, env=env, cwd=cwd, input=stdin, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=False)
    return time.perf_counter() - start, proc.returncode, proc.stderr


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], title: str = "") -> str:
    """A fixed-width text table (also valid inside a Markdown code block)."""
    cells = [[str(h) for h in headers]] + [[_cell(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [title] if title else []
    for number, row in enumerate(cells):
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
        if number == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def machine_line() -> str:
    """CPU count and load, so a reader can tell a busy machine from a slow program."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"cpus={os.cpu_count()} load1={load:.2f} python={sys.version.split()[0]}"


# The 20 kinds of the benchmark class set (classset.py and grading.py use the same bank).
SECRET_ENV = "PROBLEMGEN_BENCH_SECRET"
KINDS = (
    "attention.projection", "attention.scores", "attention.scaled_scores", "attention.weights",
    "attention.output", "attention.one_query", "attention.asymmetry", "masks.causal", "masks.padding",
    "masks.combined", "masks.masked_weights", "masks.kv_alignment", "norms.layer_norm", "norms.rms_norm",
    "norms.residual", "ffn.relu_ffn", "ffn.gelu", "params.attention_layer", "memory.kv_cache",
    "scaling.dot_variance",
)  # fmt: skip
