"""Odd file-system objects wherever problemgen reads a path it was given: named pipes with no writer, devices
(a link to ``/dev/zero``), sockets, folders where a file belongs, files a non-root grader cannot read and
huge sparse files.

The rule they protect: bad input is one clear line naming the file and what it is, never a hang and never
an unbounded read; in a class run one student's odd file refuses that student and the run goes on. Every
test that could hang runs under a timeout (an alarm in the test process, or a subprocess with ``timeout=``).
"""

from __future__ import annotations

import csv
import json
import os
import resource
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "grading"))
import grading_fixture as fx  # noqa: E402

from problemgen.classes.overrides import read_overrides  # noqa: E402
from problemgen.classes.sheet_class import roster  # noqa: E402
from problemgen.classes.whose import whose  # noqa: E402
from problemgen.code.notebook import read_notebook  # noqa: E402
from problemgen.code.sandbox.staging import RejectedSubmission, collect  # noqa: E402
from problemgen.code.tasks.notebooks import read_recipe  # noqa: E402
from problemgen.documents import banks, rendering, rosters  # noqa: E402
from problemgen.errors import ProblemgenError  # noqa: E402
from problemgen.exports.grades_back import read_gradebook  # noqa: E402
from problemgen.exports.wheel import read_wheel  # noqa: E402
from problemgen.model.variantfile import WorksheetVariant  # noqa: E402
from problemgen.practice.progress import ProgressStore  # noqa: E402
from problemgen.sheets.answersheet import key_sheet  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
SECRET = "3f9a1c7e5b2d8f4a6c0e9b1d3f5a7c9e"


@pytest.fixture
def no_hang():
    """Fail, instead of hanging the test run, if anything waits on a FIFO."""
    previous = signal.signal(signal.SIGALRM, lambda *_: pytest.fail("blocked on a FIFO or a device"))
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


# --------------------------------------------------------------------------- the odd objects


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _link_to_fifo(path: Path) -> None:
    os.mkfifo(path.with_name(path.name + ".pipe"))
    path.symlink_to(path.name + ".pipe")


def _link_to_dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _socket(path: Path) -> None:
    """A socket file at ``path``; where the path is too long for a socket's address (107 bytes, fewer than
    a test's own folder may take), bound at a short name and moved there."""
    with socket.socket(socket.AF_UNIX) as server:
        if len(os.fsencode(path)) < 100:
            server.bind(str(path))
            return
        short = Path(tempfile.mkdtemp(prefix="pg-"))
        server.bind(str(short / "s"))
    os.rename(short / "s", path)
    short.rmdir()


def _folder(path: Path) -> None:
    path.mkdir()


ODD = {  # what is put at the path -> what the message must say it is
    "FIFO": (_fifo, "is a FIFO, not a regular file"),
    "link to a FIFO": (_link_to_fifo, "is a FIFO, not a regular file"),
    "link to /dev/zero": (_link_to_dev_zero, "is a character device, not a regular file"),
    "socket": (_socket, "is a socket, not a regular file"),
    "folder": (_folder, "is a directory, not a regular file"),
}


# --------------------------------------------------------------------------- every file a user names


def _whose_file(path: Path):
    class_dir = path.parent / "class"
    class_dir.mkdir()
    (class_dir / "manifest.json").write_text(json.dumps({"students": [{"student": "ana"}]}))
    return whose(str(path), class_dir)


def _template(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    return rendering.environment("md", str(path.parents[1])).get_template("problems/attention.weights.j2")


READERS = {  # what the file is -> (its name, how problemgen reads it)
    "bank": ("bank.toml", banks.load_bank),
    "roster": ("roster.csv", rosters.read_roster),
    "overrides file": ("overrides.toml", read_overrides),
    "notebook recipe": ("recipe.toml", read_recipe),
    "gradebook": ("gradebook.csv", read_gradebook),
    "notebook": ("work.ipynb", read_notebook),
    "wheel": ("problemgen-0.1.0-py3-none-any.whl", read_wheel),
    "variant file": ("variant.json", WorksheetVariant.load),
    "class manifest": ("manifest.json", lambda path: roster(path.parent)),
    "leaked file (whose)": ("leaked.md", _whose_file),
    "progress store": ("progress.sqlite3", ProgressStore),
    "template": ("templates/problems/attention.weights.j2", _template),
}


@pytest.mark.parametrize("odd", ODD)
@pytest.mark.parametrize("reader", READERS)
def test_a_file_that_is_no_regular_file_is_one_line_naming_it_never_a_hang(tmp_path, no_hang, reader, odd):
    """A FIFO with no writer blocked every one of these readers forever (a `grade --overrides`, a roster, a
    bank...); a link to /dev/zero filled the memory of the variant and manifest readers (a MemoryError
    traceback); `whose` called what was there "no such file"; the progress store called a FIFO a disk error
    and /dev/zero a full disk (exit 4); a template that was no regular file was silently replaced by the
    built-in one; the rest said "larger than" of /dev/zero and "no such device" of a socket."""
    name, read = READERS[reader]
    make, what = ODD[odd]
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    make(path)
    with pytest.raises((ProblemgenError, RejectedSubmission)) as refusal:
        read(path)
    message = str(refusal.value)
    assert what in message and path.name in message and "\n" not in message


@pytest.mark.parametrize("name, read, cap", [
    ("manifest.json", lambda path: roster(path.parent), 64 * 2**20),
    ("templates/problems/attention.weights.j2", _template, 2**20),
])
def test_a_huge_sparse_manifest_or_template_is_refused_unread(tmp_path, name, read, cap):
    """The manifest and templates were read whole, whatever their size: a sparse file of a few gigabytes
    costs no disk and filled the memory (the 1-byte-over case here was read and parsed as it came)."""
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(cap + 1)
    with pytest.raises(ProblemgenError, match=f"larger than {cap} bytes"):
        read(path)


def test_a_fifo_in_place_of_the_manifest_is_named_not_taken_for_an_unfinished_class_set(tmp_path, no_hang):
    """A class set whose manifest.json was a FIFO (or a folder, a broken link) was called unfinished, and a
    class put together by hand then hung on it in the variant-owner lookup."""
    class_dir = tmp_path / "class"
    (class_dir / "handouts").mkdir(parents=True)
    os.mkfifo(class_dir / "manifest.json")
    with pytest.raises(ProblemgenError, match=r"manifest\.json: class manifest is a FIFO, not a regular file"):
        roster(class_dir)


# --------------------------------------------------------------------------- class runs go on


def _class(root: Path) -> tuple[Path, Path]:
    """Three students' variants and their key sheets, as grade reads a class."""
    class_dir, subs = root / "class", root / "subs"
    subs.mkdir()
    students = ["ada", "ben", "cy"]
    for student in students:
        (class_dir / "keys" / student).mkdir(parents=True)
        (class_dir / "keys" / student / "variant.json").write_text(fx.fixture_variant(student).to_json())
        (subs / f"{student}.toml").write_text(key_sheet(fx.fixture_variant(student)))
    manifest = {"title": "Odd files", "students": [{"student": s, "key": f"keys/{s}"} for s in students]}
    (class_dir / "manifest.json").write_text(json.dumps(manifest))
    return class_dir, subs


def _memory_cap() -> None:
    """An unbounded read in the child ends as a MemoryError, not with the machine's memory."""
    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))


def _problemgen(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "PROBLEMGEN_GRADER_SECRET": SECRET}
    return subprocess.run([sys.executable, "-m", "problemgen", *args], cwd=cwd, env=environ, capture_output=True,
                          text=True, timeout=90, preexec_fn=_memory_cap, check=False)


def _gradebook(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "gradebook.csv", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def _statuses(out: Path) -> dict[str, str]:
    return {student: row["status"] for student, row in _gradebook(out).items()}


@pytest.mark.parametrize("odd", ["FIFO", "link to /dev/zero"])
def test_an_odd_variant_file_refuses_that_student_and_the_class_run_goes_on(tmp_path, odd):
    """A FIFO as one student's keys/<id>/variant.json blocked `grade` for the whole class forever, and a
    link to /dev/zero ran it out of memory (a traceback, exit 1, no gradebook)."""
    class_dir, _ = _class(tmp_path)
    variant = class_dir / "keys" / "ben" / "variant.json"
    variant.unlink()
    ODD[odd][0](variant)
    done = _problemgen("grade", "subs", "--variants", "class", "-o", "out", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _statuses(tmp_path / "out") == {"ada": "graded", "ben": "refused: the variant cannot be loaded",
                                           "cy": "graded"}
    assert _gradebook(tmp_path / "out")["ben"]["message"] == f"class/keys/ben/variant.json: variant file {ODD[odd][1]}"


def test_an_answer_file_that_is_a_folder_is_refused_saying_so(tmp_path, capsys):
    """``ben/answers.toml/`` (a folder) was refused as "a special file"."""
    from problemgen.cli import main

    class_dir, subs = _class(tmp_path)
    (subs / "ben.toml").unlink()
    (subs / "ben" / "answers.toml").mkdir(parents=True)
    with pytest.raises(SystemExit) as exit_info:
        main(["grade", str(subs), "--variants", str(class_dir), "-o", str(tmp_path / "out")])
    assert exit_info.value.code == 0, capsys.readouterr().err
    assert _statuses(tmp_path / "out")["ben"] == "refused: answers.toml is a directory, not a regular file"


STARTER = "import numpy as np\n\ndef softmax(x, axis=-1):\n    e = np.exp(x - x.max(axis=axis, keepdims=True))\n" \
          "    return e / e.sum(axis=axis, keepdims=True)\n"


def test_a_fifo_in_a_students_code_folder_refuses_that_student_and_the_class_run_goes_on(tmp_path):
    """``bob/helper.py`` as a FIFO blocked `grade-code` for the whole class forever (a socket there ended
    it with an OSError traceback, a device such as /dev/zero with a MemoryError)."""
    subs = tmp_path / "subs"
    (subs / "bob").mkdir(parents=True)
    (subs / "ana.py").write_text(STARTER)
    (subs / "bob" / "softmax.py").write_text(STARTER)
    os.mkfifo(subs / "bob" / "helper.py")
    done = _problemgen("grade-code", "subs", "--task", "softmax", "--public-only", "-o", "out", "--format", "json",
                       cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    ana, bob = (json.loads((tmp_path / "out" / "reports" / f"{s}.json").read_text()) for s in ("ana", "bob"))
    assert ana["score"] == 1.0
    assert "submission rejected: helper.py: is a FIFO, not a regular file" in json.dumps(bob)


@pytest.mark.parametrize("odd", ["FIFO", "socket", "folder"])
def test_a_lone_submission_that_is_no_file_says_what_it_is(tmp_path, no_hang, odd):
    """`grade-code pipe.py` (a FIFO, a socket...) said "no such file or directory" of a file that is there."""
    path = tmp_path / "work.py"
    ODD[odd][0](path)
    if odd == "folder":
        os.mkfifo(path / "softmax.py")
        expected = "softmax.py: is a FIFO, not a regular file"
    else:
        expected = f"{path}: {ODD[odd][1].removesuffix(', not a regular file')}, not a regular file or a directory"
    with pytest.raises(RejectedSubmission) as refusal:
        collect(path)
    assert str(refusal.value) == expected


def test_a_socket_in_a_students_code_folder_is_that_students_rejection(tmp_path, no_hang):
    """Opening a socket fails (ENXIO): the OSError left collect() and stopped the class run."""
    (tmp_path / "softmax.py").write_text(STARTER)
    _socket(tmp_path / "helper.py")
    with pytest.raises(RejectedSubmission, match=r"^helper\.py: is a socket, not a regular file$"):
        collect(tmp_path)


@pytest.mark.skipif(not IS_ROOT, reason="making a device file needs root")
def test_a_device_in_a_students_code_folder_is_refused_not_read_without_end(tmp_path, no_hang):
    """A character device named ``helper.py`` (/dev/zero's numbers) was read until the memory ran out."""
    (tmp_path / "softmax.py").write_text(STARTER)
    os.mknod(tmp_path / "helper.py", stat.S_IFCHR | 0o644, os.makedev(1, 5))
    with pytest.raises(RejectedSubmission, match=r"^helper\.py: is a character device, not a regular file$"):
        collect(tmp_path)


# --------------------------------------------------------------------------- a grader that is not root


LEAVE_ROOT = """
import os, sys
from problemgen.code.sandbox import runtimeview
runtimeview.expose([sys.prefix, sys.base_prefix])  # a CI venv may live in a private (0700) temporary folder
os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)
exec(compile({code!r}, "<test>", "exec"))
"""


def _unprivileged(code: str, cwd: Path) -> subprocess.CompletedProcess:
    """``code`` run by Python as uid 65534 under a root test run (as this user otherwise), for mode-000 files:
    root reads them, as a root grader does; any other user cannot. As root, the runtime is first made
    reachable for uid 65534 the way the sandbox's fork server does it (``runtimeview``)."""

    def run(text: str) -> subprocess.CompletedProcess:
        script = LEAVE_ROOT.format(code=text) if IS_ROOT else text
        return subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True,
                              timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)

    probe = run("import os, click, numpy, problemgen.cli\nassert os.getuid() != 0")
    if probe.returncode:
        pytest.skip(f"this Python or checkout cannot be used by an unprivileged user: {probe.stderr.strip()[-200:]}")
    return run(code)


def test_an_unreadable_file_in_a_students_code_folder_is_that_students_rejection(shared_tmp):
    """Under a grader that is not root, a mode-000 ``.py`` file in a student's folder raised PermissionError
    out of collect(), which stopped the class run (root reads such a file and grades it)."""
    (shared_tmp / "sub").mkdir()
    (shared_tmp / "sub" / "softmax.py").write_text(STARTER)
    (shared_tmp / "sub" / "helper.py").write_text("X = 1\n")
    (shared_tmp / "sub").chmod(0o755)
    (shared_tmp / "sub" / "softmax.py").chmod(0o644)
    (shared_tmp / "sub" / "helper.py").chmod(0)
    done = _unprivileged("from problemgen.code.sandbox.staging import RejectedSubmission, collect\n"
                         "try:\n    collect('sub')\nexcept RejectedSubmission as exc:\n    print(exc)\n", shared_tmp)
    assert done.stdout == "helper.py: cannot be read (Permission denied)\n", done.stderr


def test_whose_on_an_unreadable_file_is_one_line(shared_tmp):
    """`whose leaked.md` on a file this (non-root) user cannot read ended in a PermissionError traceback."""
    class_dir = shared_tmp / "class"
    class_dir.mkdir(mode=0o755)
    (class_dir / "manifest.json").write_text(json.dumps({"students": [{"student": "ana"}]}))
    (class_dir / "manifest.json").chmod(0o644)
    (shared_tmp / "leaked.md").write_text("masking-0123456789ab\n")
    (shared_tmp / "leaked.md").chmod(0)
    done = _unprivileged("from problemgen.cli import main\nmain(['whose', 'leaked.md', '--class', 'class'])\n",
                         shared_tmp)
    assert (done.returncode, done.stderr) == (2, "error: leaked.md: cannot read file (Permission denied)\n")


def test_whose_reads_only_class_files_of_the_leaked_files_size(tmp_path, monkeypatch):
    """`whose` hashed every handout and key file whole to find the leaked one's bytes, so one huge (sparse)
    file in a handout folder filled the memory; now a file of another size is never read."""
    import problemgen.classes.whose as whose_module

    class_dir = tmp_path / "class"
    (class_dir / "handouts" / "ana").mkdir(parents=True)
    manifest = {"students": [{"student": "ana", "handout": "handouts/ana"}]}
    (class_dir / "manifest.json").write_text(json.dumps(manifest))
    with open(class_dir / "handouts" / "ana" / "big.bin", "wb") as handle:
        handle.truncate(2 * 2**20)
    os.mkfifo(class_dir / "handouts" / "ana" / "pipe.md")
    (class_dir / "handouts" / "ana" / "worksheet.md").write_text("a worksheet\n")
    (tmp_path / "leaked.md").write_text("a worksheet\n")
    hashed, sha256 = [], whose_module.hashlib.sha256
    monkeypatch.setattr(whose_module.hashlib, "sha256", lambda data=b"": hashed.append(len(data)) or sha256(data))
    found = whose(str(tmp_path / "leaked.md"), class_dir)
    assert (found.student, found.how) == ("ana", "same bytes as handouts/ana/worksheet.md")
    assert max(hashed) == len("a worksheet\n")


def test_progress_on_a_loop_of_links_says_so(tmp_path, capsys):
    """`progress --db` on a link to itself showed an empty progress (a loop was taken for no file)."""
    from problemgen.cli import main

    path = tmp_path / "me.sqlite3"
    path.symlink_to(path.name)
    with pytest.raises(SystemExit) as exit_info:
        main(["progress", "--db", str(path)])
    assert (exit_info.value.code, capsys.readouterr().err) == (
        2, f"error: {path}: cannot open the progress store (Too many levels of symbolic links)\n")
