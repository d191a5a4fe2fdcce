"""Start-up time of the CLI: `problemgen --help` and `problemgen list` against `python -c pass`.

Target (issue 20): each command takes at most 1.5x the wall time of `python -c pass` run by the same
interpreter. Measured twice:

* in the development venv, where the editable install's import finder (a .pth hook run at every
  interpreter start) adds to every process, the baseline included;
* in a fresh, non-editable venv in a temp dir: the checkout is copied, built into a wheel and installed
  with `pip install --no-deps`; its dependencies (numpy, sympy, click, jinja2) are borrowed from the
  running venv through a .pth line, so nothing is downloaded (pass --skip-fresh to leave this out).

The row `python -c 'import click'` is a floor: any command that imports click pays at least that.
Runs are interleaved (baseline, --help, list, baseline, ...) so a load spike hits all three alike.
Then `python -X importtime` lists the modules that cost most for each command, and whether numpy,
sympy and jinja2 were imported at all (they should not be, for these two commands).

Usage: python bench/startup.py [--runs 21] [--skip-fresh]   (from the checkout, with its dependencies importable)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from _common import ROOT, VENV_BIN, machine_line, median, run_timed, table, verdict

HEAVY = ("numpy", "sympy", "jinja2", "problemgen.model.registry", "reference")


def commands(bin_dir: Path) -> dict[str, list[str]]:
    python, script = str(bin_dir / "python"), str(bin_dir / "problemgen")
    return {"python -c pass": [python, "-c", "pass"],
            "python -c 'import click'": [python, "-c", "import click"],
            "problemgen --help": [script, "--help"],
            "problemgen list": [script, "list"]}


def measure(bin_dir: Path, runs: int, cwd: str) -> dict[str, tuple[float, int, str]]:
    """name -> (median wall seconds, exit code of the last run, last stderr line)."""
    cmds = commands(bin_dir)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    times: dict[str, list[float]] = {name: [] for name in cmds}
    status: dict[str, tuple[int, str]] = {}
    for round_ in range(runs + 2):  # two warm-up rounds fill the page cache
        for name, command in cmds.items():
            seconds, code, err = run_timed(command, env=env, cwd=cwd)
            if round_ >= 2:
                times[name].append(seconds)
            lines = err.decode(errors="replace").strip().splitlines()
            status[name] = (code, lines[-1][:70] if lines else "")
    return {name: (median(times[name]), *status[name]) for name in cmds}


def rows_for(label: str, results: dict[str, tuple[float, int, str]]) -> list[list[object]]:
    base = results["python -c pass"][0]
    rows = []
    for name, (seconds, code, err) in results.items():
        ratio = seconds / base
        target = "(floor)" if "click" in name else "" if name.startswith("python") else f"<= 1.5x: {verdict(ratio <= 1.5)}"
        note = f"exit {code}: {err}" if code else ""
        rows.append([label, name, f"{seconds * 1000:.1f}", f"{ratio:.2f}", target, note])
    return rows


def build_fresh_venv(workdir: Path) -> Path:
    """A non-editable install of a copy of the checkout; returns its bin/ directory."""
    sys.path.insert(0, str(ROOT))
    from problemgen.exports.wheel import build_wheel  # packs the running checkout; no `wheel` package needed
    venv = workdir / "venv"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE, "check": True}
    built = build_wheel()
    wheel = workdir / built.filename
    wheel.write_bytes(built.data)
    base_python = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base_python, "-m", "venv", "--without-pip", str(venv)], **quiet)
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "borrowed_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                    "--no-deps", str(wheel)], cwd=workdir, **quiet)
    return venv / "bin"


def import_profile(bin_dir: Path, argv: list[str], cwd: str, top: int = 8) -> tuple[list[list[object]], list[str]]:
    """Top modules by cumulative import time (leaves and packages alike), and which heavy ones loaded."""
    proc = subprocess.run([str(bin_dir / "python"), "-X", "importtime", str(bin_dir / "problemgen"), *argv], cwd=cwd,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    entries = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line or "self [us]" in line:
            continue
        _, self_us, cumulative_us, name = (part.strip() for part in line.replace("import time:", "|").split("|"))
        depth = (len(line.split("|")[2]) - len(line.split("|")[2].lstrip())) // 2
        entries.append((int(cumulative_us), int(self_us), name.strip(), depth))
    top_level = sorted((e for e in entries if e[3] <= 1), reverse=True)[:top]
    rows = [[" ".join(argv), name, f"{cum / 1000:.1f}", f"{own / 1000:.1f}"] for cum, own, name, _ in top_level]
    loaded = sorted({e[2] for e in entries if e[2] in HEAVY or e[2].split(".")[0] in HEAVY[:3]})
    heavy = sorted({name.split(".")[0] if not name.startswith("problemgen") else name for name in loaded})
    return rows, heavy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--skip-fresh", action="store_true", help="skip the fresh non-editable venv")
    args = parser.parse_args()
    print(machine_line())
    with tempfile.TemporaryDirectory(prefix="pg-bench-startup-") as tmp:
        dev_bin = VENV_BIN if (VENV_BIN / "problemgen").exists() else None  # system python3 has no script
        rows = rows_for("dev venv (editable)", measure(VENV_BIN, args.runs, tmp)) if dev_bin else []
        fresh_bin = None
        if not args.skip_fresh:
            try:
                fresh_bin = build_fresh_venv(Path(tmp))
                rows += rows_for("fresh venv (wheel)", measure(fresh_bin, args.runs, tmp))
            except (subprocess.CalledProcessError, StopIteration, OSError) as exc:
                detail = getattr(exc, "stderr", b"") or b""
                print(f"fresh venv not measured: {exc} {detail.decode(errors='replace')[-300:]}")
        print(table(["install", "command", "median ms", "x python", "target", "note"], rows,
                    title=f"\nStart-up wall time, median of {args.runs} runs"))
        profile_rows, heavy_notes = [], []
        for label, bin_dir in (("dev", dev_bin), ("fresh", fresh_bin)):
            if bin_dir is None:
                continue
            for argv in (["--help"], ["list"]):
                top_rows, heavy = import_profile(bin_dir, argv, tmp)
                if label == ("dev" if dev_bin else "fresh"):
                    profile_rows += top_rows
                heavy_notes.append(f"{label} problemgen {' '.join(argv)}: heavy imports = {', '.join(heavy) or 'none'}")
        print(table(["command", "module (top level)", "cumulative ms", "self ms"], profile_rows,
                    title=f"\npython -X importtime, {'dev' if dev_bin else 'fresh'} venv, the installed command, largest imports at depth <= 1 (one run, noisy)"))
        print()
        print("\n".join(heavy_notes))


if __name__ == "__main__":
    main()
