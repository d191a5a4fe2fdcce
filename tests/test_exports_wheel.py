"""The wheel every export ships: the running problemgen, installable, without the tasks' solutions."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import subprocess
import sys
import zipfile

import pytest

from problemgen.exports.wheel import STUDENT_VISIBLE_LEFT_OUT, build_wheel


@pytest.fixture(scope="module")
def wheel():
    return build_wheel()


def test_the_wheel_holds_the_packages_data_and_metadata(wheel):
    names = zipfile.ZipFile(io.BytesIO(wheel.data)).namelist()
    assert wheel.filename.startswith("problemgen-") and wheel.filename.endswith("-py3-none-any.whl")
    for expected in ("problemgen/__init__.py", "problemgen/exports/autograde.py", "reference/__init__.py",
                     "problemgen/templates/documents/worksheet.md.j2"):
        assert expected in names or any(n.startswith(expected.rsplit("/", 1)[0]) for n in names), expected
    assert any(n.startswith("problemgen/question_banks/") and n.endswith(".toml") for n in names)
    dist_info = wheel.filename.split("-py3")[0] + ".dist-info"
    assert {f"{dist_info}/{f}" for f in ("METADATA", "WHEEL", "RECORD")} <= set(names)
    command = zipfile.ZipFile(io.BytesIO(wheel.data)).read(dist_info.replace(".dist-info", ".data/scripts/problemgen"))
    assert command.startswith(b"#!python\n") and b"from problemgen.cli import main" in command


def test_every_package_of_the_source_tree_is_declared_for_packing():
    """pyproject's package list drives both `pip install .` and the exported wheel: a package missing there is missing everywhere."""
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    declared = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {str(p.parent.relative_to(root)).replace("/", ".") for top in ("problemgen", "reference")
             for p in (root / top).rglob("__init__.py")}
    assert found - declared == set()


def test_a_wheel_for_students_eyes_leaves_the_tasks_solutions_out(wheel):
    full = zipfile.ZipFile(io.BytesIO(wheel.data)).namelist()
    assert [n for n in full if n.startswith(STUDENT_VISIBLE_LEFT_OUT)]  # the graders need them
    names = zipfile.ZipFile(io.BytesIO(build_wheel(STUDENT_VISIBLE_LEFT_OUT).data)).namelist()
    assert not [n for n in names if n.startswith(STUDENT_VISIBLE_LEFT_OUT)]
    assert "problemgen/code/tasks/__init__.py" in names


def test_record_hashes_match_the_files(wheel):
    archive = zipfile.ZipFile(io.BytesIO(wheel.data))
    record_name = next(n for n in archive.namelist() if n.endswith(".dist-info/RECORD"))
    rows = list(csv.reader(io.StringIO(archive.read(record_name).decode())))
    assert {row[0] for row in rows} == set(archive.namelist())
    for path, digest, size in rows:
        if path == record_name:
            continue
        data = archive.read(path)
        expected = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert (digest, int(size)) == (expected, len(data)), path


def test_the_same_code_packs_to_the_same_bytes(wheel):
    assert build_wheel().data == wheel.data


@pytest.mark.slow
def test_pip_installs_the_wheel_and_its_command_runs(wheel, tmp_path):
    """Installed without dependencies into a virtual environment that sees this Python's packages."""
    path = tmp_path / wheel.filename
    path.write_bytes(wheel.data)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                          str(path)], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stderr
    done = subprocess.run([str(venv / "bin" / "problemgen"), "export", "--help"], capture_output=True, text=True,
                          cwd=tmp_path)
    assert done.returncode == 0 and "gradescope" in done.stdout, done.stderr
    shown = subprocess.run([str(venv / "bin" / "problemgen"), "show", "attention.weights", "--seed", "3"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert shown.returncode == 0 and shown.stdout.strip(), shown.stderr
    repacked = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import io, sys, zipfile; from problemgen.exports.wheel import build_wheel; w = build_wheel(); "
         "names = zipfile.ZipFile(io.BytesIO(w.data)).namelist(); "
         "sys.stdout.write(zipfile.ZipFile(io.BytesIO(w.data)).read("
         "next(n for n in names if n.endswith('.data/scripts/problemgen'))).decode())"],
        capture_output=True, text=True, cwd=tmp_path)
    assert repacked.returncode == 0, repacked.stderr  # the installed distribution packs its command back
    assert repacked.stdout.startswith("#!python\n") and "from problemgen.cli import main" in repacked.stdout
