"""The commands in the processes CI runners, course autograders and containers actually start.

Each test runs the command line in a fresh interpreter with a controlled environment: a narrow output
encoding, a closed or broken standard stream, no home directory, a uid without a password entry, a loose
or strict umask, and a root grader that may not leave uid 0.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBLEMGEN = [sys.executable, "-m", "problemgen"]
SECRET = "3f9a1c7e5b2d8f4a6c0e9b1d3f5a7c9e2b4d6f8a0c1e3b5d7f9a2c4e6b8d0f1a"
ROSTER = "id,name,github\nana,Ána Žižek,ana-gh\nchen,陈伟,chen-gh\n"
AS_ROOT = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs a root test run")


def env(**extra: str) -> dict[str, str]:
    """A container's sparse environment: the checkout first on PYTHONPATH, a UTF-8 C locale, no colour."""
    base = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8", "NO_COLOR": "1",
            "HOME": os.environ.get("HOME", "/tmp"), "CLASS_SECRET": SECRET, "PROBLEMGEN_GRADER_SECRET": SECRET}
    base.update(extra)
    return {k: v for k, v in base.items() if v is not None}


def problemgen(*args: str, cwd: Path, environ: dict | None = None, **options) -> subprocess.CompletedProcess:
    if "stdout" not in options:
        options["capture_output"] = True
    return subprocess.run([*PROBLEMGEN, *args], cwd=cwd, env=environ or env(), timeout=120, **options)


def clean(run: subprocess.CompletedProcess) -> None:
    err = run.stderr.decode("utf-8", "replace") if isinstance(run.stderr, bytes) else run.stderr or ""
    assert "Traceback" not in err and "Exception ignored" not in err, err[-2000:]


def class_set(tmp_path: Path, name: str = "class", **options) -> Path:
    (tmp_path / "roster.csv").write_text(ROSTER, encoding="utf-8")
    out = tmp_path / name
    run = problemgen("worksheet", "masking", "-o", str(out), "--roster", "roster.csv", "--secret-env", "CLASS_SECRET",
                     cwd=tmp_path, **options)
    clean(run)
    assert run.returncode == 0, run.stderr
    return out


# --------------------------------------------------------------------------- standard streams


def test_a_latin1_terminal_gets_the_maths_spelled_in_ascii_rather_than_a_traceback(tmp_path):
    run = problemgen("show", "masks.causal", "--format", "text", "--solution", cwd=tmp_path,
                     environ=env(PYTHONIOENCODING="latin-1"))
    clean(run)
    assert run.returncode == 0
    text = run.stdout.decode("latin-1")
    assert "j <= i" in text and "≤" not in text


def test_a_closed_stdout_discards_the_output_and_the_quiz_still_ends_cleanly(tmp_path):
    run = problemgen("quiz", "--db", str(tmp_path / "p.sqlite3"), "--seed", "7", cwd=tmp_path,
                     input=b"solution\n\nquit\n", preexec_fn=lambda: os.close(1))
    clean(run)
    assert run.returncode == 0


def test_a_closed_stderr_still_writes_the_whole_class_set(tmp_path):
    """A cron job or daemon without fd 2: the progress and summary lines used to end the run with nothing written."""
    out = class_set(tmp_path, preexec_fn=lambda: os.close(2))
    assert (out / "manifest.json").is_file() and (out / "keys" / "chen" / "variant.json").is_file()


@pytest.mark.parametrize("args", [["show", "masks.causal"], ["--version"]], ids=["click", "fast-path"])
def test_a_reader_that_goes_away_ends_the_command_quietly_with_141(tmp_path, args):
    """``problemgen ... | head -1``: exit 1 would read as "a failure the command was asked to report"."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        run = problemgen(*args, cwd=tmp_path, stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    clean(run)
    assert run.returncode == 141 and run.stderr == b""
