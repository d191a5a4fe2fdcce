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


# Where the timed files go. On some machines creating a file is the filesystem's dominant cost: on this
# project's shared VMs the ext4 disk spends 0.2-0.9 ms of kernel CPU on every new inode (a file, a directory
# or a symlink), while rewriting an existing file takes ~50 us and tmpfs creates one in ~5 us. That cost
# belongs to the disk, not to our code, and it moves with the disk's state, so benches that write many files
# time them on a RAM filesystem when the machine has one, and print the disk run beside it together with
# the disk's own cost of creating the same number of inodes, measured in the same run (`inode_seconds`).
RAM_DIRS = ("/dev/shm",)


def ram_dir() -> str | None:
    """A writable RAM-backed (tmpfs) directory to hold timed output, or None when the machine has none."""
    for candidate in RAM_DIRS:
        if os.path.isdir(candidate) and os.access(candidate, os.W_OK) and _is_tmpfs(candidate):
            return candidate
    return None


def disk_dir() -> str:
    """The temporary directory the user's environment names (TMPDIR, else the system default)."""
    import tempfile

    return tempfile.gettempdir()


def _is_tmpfs(path: str) -> bool:
    """True when ``path`` is on a tmpfs mount (read from /proc/self/mounts; False where that is missing)."""
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return False
    best, kind = "", ""
    for line in mounts:
        fields = line.split()
        if len(fields) >= 3 and (path == fields[1] or path.startswith(fields[1].rstrip("/") + "/")):
            if len(fields[1]) > len(best):
                best, kind = fields[1], fields[2]
    return kind == "tmpfs"


def inode_seconds(directory: str | os.PathLike, files: int, directories: int = 0) -> float:
    """CPU seconds this process spends creating ``files`` small files and ``directories`` directories in a
    fresh directory under ``directory`` (then removed): the filesystem's own cost of the new inodes a
    workload creates, to print beside that workload's figure on the same disk."""
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="pg-bench-inodes-", dir=directory))
    try:
        start = time.process_time()
        for n in range(directories):
            os.mkdir(root / f"d{n}")
        for n in range(files):
            descriptor = os.open(root / f"f{n}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(descriptor, b"x" * 512)
            os.close(descriptor)
        return time.process_time() - start
    finally:
        shutil.rmtree(root, ignore_errors=True)
