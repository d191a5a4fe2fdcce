"""A write that fails midway (a full disk, a quota, a file-size limit, a folder made read-only or removed)
loses nothing: one ``error:`` line, exit 4, and every file an earlier run wrote is still whole.

The commands run in a child process whose file-size limit (``RLIMIT_FSIZE``, SIGXFSZ ignored, so a write
past it fails with EFBIG as one past a full disk fails with ENOSPC) lets the small files of a run through
and stops a larger one; no root and no special file system is needed. The earlier run is made without
the limit, and the test compares every byte after the failed re-run.
"""

from __future__ import annotations

import errno
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from problemgen.errors import ProblemgenError, WriteFailed
from problemgen.safewrite import Staged, write_file

ROOT = Path(__file__).resolve().parents[1]
SECRET = "0123456789abcdef0123456789abcdef-class"
PATIENCE = 300


def problemgen(args: list[str], *, limit: int | None = None, stdin: str = "", cwd: Path | None = None,
               **env: str) -> subprocess.CompletedProcess:
    """``python -m problemgen ARGS`` from this checkout; with ``limit``, no file it writes may grow past it."""
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               "CLASS_SECRET": SECRET, "PYTHONDONTWRITEBYTECODE": "1", **env}

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # inherited through exec: a write past it is EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-m", "problemgen", *args], input=stdin, capture_output=True, text=True,
                          env=environ, cwd=cwd, preexec_fn=limited if limit else None, timeout=PATIENCE)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_one_write_error(run: subprocess.CompletedProcess, *words: str) -> None:
    assert run.returncode == 4, run.stderr
    assert run.stderr.startswith("error: cannot write") and run.stderr.count("\n") == 1, run.stderr
    assert "Traceback" not in run.stderr and "File too large" in run.stderr
    for word in words:
        assert word in run.stderr


# -------------------------------------------------------------------------------- worksheets


def test_a_worksheet_rerun_that_fills_the_disk_keeps_the_earlier_worksheet_key_and_variant_whole(tmp_path):
    out = tmp_path / "ws"
    assert problemgen(["worksheet", "mixed_exam", "-o", str(out)]).returncode == 0
    before = snapshot(out)
    run = problemgen(["worksheet", "mixed_exam", "-o", str(out), "--seed", "8", "--force"], limit=16_000)
    assert_one_write_error(run, "no file in")
    assert snapshot(out) == before  # no truncated answer_key.md, no new worksheet beside the old key, no temporary


def test_a_class_set_rerun_that_fills_the_disk_is_unfinished_and_keeps_every_file_whole(tmp_path):
    out, roster = tmp_path / "class", tmp_path / "roster.csv"
    roster.write_text("id,name\ns1,Ada\ns2,Bo\ns3,Cy\n")
    args = ["worksheet", "attention_basics", "-o", str(out), "--roster", str(roster), "--secret-env", "CLASS_SECRET"]
    assert problemgen(args).returncode == 0
    before = snapshot(out)
    roster.write_text("id,name\ns1,Ada\ns2,Bo\n")  # s3 withdrew: their folders stay until a run finishes
    handouts = max(len(data) for name, data in before.items() if name.startswith("handouts/"))
    run = problemgen([*args, "--seed", "9", "--force"], limit=handouts + 2000)  # handouts fit, answer keys do not
    assert_one_write_error(run, "unfinished (no manifest.json)")
    after = snapshot(out)
    assert "manifest.json" not in after  # grade and the exports refuse the folder: it does not look finished
    assert {name: data for name, data in before.items() if name != "manifest.json"} == after


# -------------------------------------------------------------------------------- grading


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """A class set of three, each student's key as their submission, graded once into grades/."""
    root = tmp_path_factory.mktemp("graded")
    roster, subs = root / "roster.csv", root / "subs"
    roster.write_text("id,name\ns1,Ada\ns2,Bo\ns3,Cy\n")
    made = problemgen(["worksheet", "attention_basics", "-o", str(root / "class"), "--roster", str(roster),
                       "--secret-env", "CLASS_SECRET"])
    assert made.returncode == 0, made.stderr
    subs.mkdir()
    for student in ("s1", "s2", "s3"):
        (subs / f"{student}.toml").write_bytes((root / "class" / "keys" / student / "key.toml").read_bytes())
    return root


def test_a_regrade_that_fills_the_disk_keeps_the_gradebook_summaries_and_earlier_reports(graded_class, tmp_path):
    subs, grades = tmp_path / "subs", tmp_path / "grades"
    subs.mkdir()
    for sheet in (graded_class / "subs").iterdir():
        (subs / sheet.name).write_bytes(sheet.read_bytes())
    args = ["grade", str(subs), "--variants", str(graded_class / "class"), "-o", str(grades), "--format", "json"]
    assert problemgen(args).returncode == 0
    before = snapshot(grades)
    (subs / "s3.toml").unlink()  # withdrawn: its report goes only once the new gradebook is in place
    largest_report = max(len(data) for name, data in before.items() if name.startswith("reports/"))
    assert len(before["summary.json"]) > largest_report
    run = problemgen(args, limit=largest_report)
    assert_one_write_error(run, "an earlier run's are kept")
    assert snapshot(grades) == before  # old code: a new gradebook, a truncated summary.json, reports/s3.json gone


def test_a_regrade_that_fills_the_disk_midway_through_the_reports_puts_none_of_its_reports_in_place(
        graded_class, tmp_path):
    """The regrade's first report fits and its second does not: the first used to be renamed into reports/ at
    once, so the folder held a new report beside the old gradebook, which contradicted it."""
    subs, grades, trial = tmp_path / "subs", tmp_path / "grades", tmp_path / "trial"
    subs.mkdir()
    for sheet in (graded_class / "subs").iterdir():
        (subs / sheet.name).write_bytes(sheet.read_bytes())
    args = ["grade", str(subs), "--variants", str(graded_class / "class"), "--format", "json"]
    assert problemgen([*args, "-o", str(grades)]).returncode == 0
    before = snapshot(grades)
    key = (subs / "s1.toml").read_text()
    (subs / "s1.toml").write_text(_one_answer_blank(key))
    (subs / "s2.toml").write_text((graded_class / "class" / "handouts" / "s2" / "answers.toml").read_text())
    assert problemgen([*args, "-o", str(trial)]).returncode == 0  # the sizes the regrade's reports will have
    first, second = ((trial / "reports" / f"{s}.json").stat().st_size for s in ("s1", "s2"))
    assert first < second and (trial / "reports" / "s1.json").read_bytes() != before["reports/s1.json"]
    run = problemgen([*args, "-o", str(grades)], limit=first)
    assert_one_write_error(run, "s2.json", "an earlier run's are kept")
    assert snapshot(grades) == before


def _one_answer_blank(sheet: str) -> str:
    """The sheet with its first answer line emptied (``key = ""``): a report with one wrong answer."""
    lines = sheet.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("[p1]"))
    answer = next(i for i in range(at + 1, len(lines)) if " = " in lines[i] and not lines[i].startswith("#"))
    lines[answer] = lines[answer].split(" = ", 1)[0] + ' = ""\n'
    return "".join(lines)


def test_a_report_written_with_o_stays_whole_when_the_disk_fills(graded_class, tmp_path):
    sheet, variant = graded_class / "subs" / "s1.toml", graded_class / "class" / "keys" / "s1" / "variant.json"
    report = tmp_path / "report.md"
    assert problemgen(["grade", str(sheet), "--variant", str(variant), "--format", "md", "-o", str(report)]).returncode == 0
    before = report.read_bytes()
    run = problemgen(["grade", str(sheet), "--variant", str(variant), "--format", "json", "-o", str(report)],
                     limit=len(before) // 2)
    assert_one_write_error(run)
    assert report.read_bytes() == before and os.listdir(tmp_path) == ["report.md"]


def test_a_submission_that_does_not_fit_where_it_is_staged_is_one_line_naming_that_place(tmp_path, shared_tmp):
    """A full staging folder (``/dev/shm``, ``$TMPDIR``): the write's error names no file, so the command said
    the standard output had been cut short (a pipe here, which never is). The staging folder is one 'nobody'
    can reach, as a root grader's children run as 'nobody'."""
    staging, work = shared_tmp / "staging", tmp_path / "work"
    staging.mkdir(mode=0o755)
    work.mkdir()
    padding = "# " + "x" * 78 + "\n"
    (work / "ana.py").write_text("def softmax(x, axis=-1):\n    return x\n" + padding * 100, encoding="utf-8")
    run = problemgen(["grade-code", "ana.py", "--task", "softmax", "--public-only"], limit=4096, cwd=work,
                     TMPDIR=str(staging))
    assert_one_write_error(run, f"cannot write ana.py in {staging}, where submissions are staged")
    assert "standard output" not in run.stderr and run.stdout == ""
    assert [p.name for p in staging.iterdir() if p.name.startswith("problemgen-") and not p.name.startswith(
        "problemgen-fs-")] == []


# -------------------------------------------------------------------------------- exports


def test_an_export_zip_rewritten_on_a_full_disk_keeps_the_earlier_zip(tmp_path):
    target = tmp_path / "grader.zip"
    args = ["export", "gradescope", "--task", "softmax", "--secret-env", "CLASS_SECRET", "-o", str(target)]
    assert problemgen(args).returncode == 0
    before = target.read_bytes()
    run = problemgen(args, limit=len(before) // 2)
    assert_one_write_error(run)
    assert target.read_bytes() == before and os.listdir(tmp_path) == ["grader.zip"]


def test_an_lms_export_and_its_preview_are_replaced_together_or_not_at_all(tmp_path):
    out, preview = tmp_path / "pool.xml", tmp_path / "pool.md"
    args = ["export", "moodle", "--bank", "masking", "-n", "2", "-o", str(out), "--preview", str(preview)]
    assert problemgen(args).returncode == 0
    before = snapshot(tmp_path)
    run = problemgen([*args[:5], "3", *args[6:]], limit=len(before["pool.md"]) + 1)
    assert_one_write_error(run)
    assert snapshot(tmp_path) == before


def test_an_export_directory_rewritten_on_a_full_disk_keeps_every_earlier_file(tmp_path):
    out = tmp_path / "question"
    args = ["export", "prairielearn", "--task", "softmax", "--secret-env", "CLASS_SECRET", "-o", str(out), "--force"]
    assert problemgen(args).returncode == 0
    before = snapshot(out)
    sizes = sorted(map(len, before.values()))
    run = problemgen(args, limit=sizes[-1] - 1)  # only the largest file does not fit
    assert_one_write_error(run, "no file of the export")
    assert snapshot(out) == before


# -------------------------------------------------------------------------------- the progress store


def test_a_full_disk_while_answering_loses_only_that_answer_and_says_so(tmp_path):
    db = tmp_path / "me.sqlite3"
    first = problemgen(["quiz", "--db", str(db), "--seed", "3"], stdin="0\nquit\n", PROBLEMGEN_NOW="2026-03-02T09:00:00Z")
    assert first.returncode == 0, first.stderr
    with sqlite3.connect(db) as raw:
        answers_before = raw.execute("SELECT count(*) FROM answers").fetchone()[0]
    run = problemgen(["quiz", "--db", str(db), "--seed", "3"], stdin="0\n" * 200 + "quit\n",
                     limit=db.stat().st_size, PROBLEMGEN_NOW="2026-03-02T09:05:00Z")
    assert run.returncode == 4, run.stderr
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert "your last answer or step was not saved; everything saved before it is kept" in run.stderr
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        answers = raw.execute("SELECT count(*) FROM answers").fetchone()[0]
    assert answers >= answers_before and answers == answers_before + run.stdout.count("✗ Wrong.")  # each shown one kept


def test_the_practice_page_says_an_answer_was_not_saved_when_the_store_is_full(tmp_path, monkeypatch):
    pytest.importorskip("flask", reason="the web extra (flask) is not installed")
    pytest.importorskip("latex2mathml", reason="the web extra (latex2mathml) is not installed")
    from problemgen.model import registry
    from problemgen.practice.progress import ProgressStore
    from problemgen.practice.web.app import create_app

    opened = []
    connect = ProgressStore._connect
    monkeypatch.setattr(ProgressStore, "_connect", staticmethod(lambda *a, **k: opened.append(connect(*a, **k))
                                                                or opened[-1]))
    app = create_app(tmp_path / "p.sqlite3", clock=lambda: datetime(2026, 3, 1, 9, tzinfo=timezone.utc))
    client = app.test_client()
    token = client.get("/").get_data(as_text=True).split('name="problemgen-token" content="')[1].split('"')[0]
    post = lambda url, body: client.post(url, json=body, headers={"X-Problemgen-Token": token})  # noqa: E731
    item = post("/api/start", {}).get_json()
    part = registry.generate(item["kind"], item["seed"], item["difficulty"]).parts[0].key
    pages = opened[-1].execute("PRAGMA page_count").fetchone()[0]
    opened[-1].execute(f"PRAGMA max_page_count = {pages}")  # the disk is full: no page more
    for _ in range(40):  # answers until one needs a new page
        response = post("/api/answer", {"item": item["item"], "part": part, "text": "no idea " * 60})
        if response.status_code != 200:
            break
    assert response.status_code == 507
    assert "your last answer or step was not saved" in response.get_json()["error"]


# -------------------------------------------------------------------------------- the shared writer


def test_a_failed_write_leaves_the_earlier_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "gradebook.csv"
    target.write_text("earlier\n")
    target.chmod(0o600)

    def full(*args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(WriteFailed, match=r"cannot write .*gradebook.csv \(No space left on device\)"):
        write_file(target, "new\n", durable=True)
    assert target.read_text() == "earlier\n" and os.listdir(tmp_path) == ["gradebook.csv"]
    monkeypatch.undo()
    write_file(target, "new\n", durable=True)
    assert target.read_text() == "new\n" and target.stat().st_mode & 0o777 == 0o600  # a private key stays private


def test_a_staged_file_the_system_takes_in_short_pieces_is_written_whole(tmp_path, monkeypatch):
    """``os.write`` may take fewer bytes than it is given (a signal, a pipe-like file system): the rest follows."""
    write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: write(fd, bytes(data[:7])))
    with Staged() as staged:
        staged.add(tmp_path / "key.toml", "x = 1\n" * 100)
        staged.add(tmp_path / "variant.json", b"{}" * 50)
        staged.commit()
    monkeypatch.undo()
    assert (tmp_path / "key.toml").read_text() == "x = 1\n" * 100
    assert (tmp_path / "variant.json").read_bytes() == b"{}" * 50 and sorted(os.listdir(tmp_path)) == [
        "key.toml", "variant.json"]


def test_a_staged_write_that_takes_nothing_fails_instead_of_trying_forever(tmp_path, monkeypatch):
    (tmp_path / "key.toml").write_text("earlier\n")
    monkeypatch.setattr(os, "write", lambda fd, data: 0)
    with pytest.raises(WriteFailed, match=r"cannot write .*key.toml \(No space left on device\)"):
        with Staged() as staged:
            staged.add(tmp_path / "key.toml", "new\n")
    monkeypatch.undo()
    assert (tmp_path / "key.toml").read_text() == "earlier\n" and os.listdir(tmp_path) == ["key.toml"]


def test_a_staged_file_never_replaces_a_symbolic_link_nor_writes_through_it(tmp_path):
    (tmp_path / "elsewhere.md").write_text("theirs\n")
    (tmp_path / "worksheet.md").symlink_to(tmp_path / "elsewhere.md")
    with pytest.raises(ProblemgenError, match="worksheet.md: it is a symbolic link"):
        with Staged() as staged:
            staged.add(tmp_path / "worksheet.md", "ours\n")
    assert (tmp_path / "elsewhere.md").read_text() == "theirs\n" and (tmp_path / "worksheet.md").is_symlink()
    assert sorted(os.listdir(tmp_path)) == ["elsewhere.md", "worksheet.md"]


def test_a_staged_group_is_put_in_place_only_when_every_file_is_written(tmp_path):
    (tmp_path / "a.md").write_text("old a")
    with pytest.raises(WriteFailed, match="is gone"):
        with Staged() as staged:
            staged.add(tmp_path / "a.md", "new a")
            staged.add(tmp_path / "gone" / "b.md", "new b")
            staged.commit()
    assert (tmp_path / "a.md").read_text() == "old a" and os.listdir(tmp_path) == ["a.md"]


def test_an_unforeseen_full_disk_reaching_the_command_line_is_one_line_and_exit_4(monkeypatch, capsys):
    from problemgen.cli import run_click

    def full(name):
        raise OSError(errno.ENOSPC, "No space left on device", "/somewhere/out.txt")

    monkeypatch.setattr("problemgen.code.tasks.listing.show_task", full)
    assert run_click(["task", "show", "softmax"]) == 4
    assert capsys.readouterr().err == "error: cannot write /somewhere/out.txt (No space left on device)\n"


def test_a_class_run_whose_output_folder_vanishes_stops_with_one_line(graded_class, tmp_path):
    import shutil

    from problemgen.classes import sheet_class

    grades = tmp_path / "grades"

    def remove_the_folder(done, total):
        shutil.rmtree(grades, ignore_errors=True)

    with pytest.raises(WriteFailed, match="is gone"):
        sheet_class.grade_class(graded_class / "subs", graded_class / "class", grades, "json", jobs=1,
                                progress=remove_the_folder)


def test_an_export_folder_that_cannot_be_made_is_a_usage_error_not_a_failed_write(tmp_path):
    """The merge made every failure to create an export folder exit 4 (a full disk); a path through a file
    is the user's input, exit 2, as for a worksheet or a class run's folder."""
    from problemgen.errors import ProblemgenError
    from problemgen.exports.bundle import Bundle, write_directory

    (tmp_path / "afile").write_text("x", encoding="utf-8")
    with pytest.raises(ProblemgenError, match="cannot write the export") as raised:
        write_directory(Bundle({"a.txt": b"a"}), tmp_path / "afile" / "export")
    assert not isinstance(raised.value, WriteFailed)
