"""No command writes its output over one of its inputs, or inside an input folder: it would lose what it
reads (a student's sheet replaced by its report) or read its own output next time."""

from __future__ import annotations

import os
import re

import pytest

from problemgen.errors import ProblemgenError
from problemgen.outputs import check_output_apart

SECRET_ENV = "PROBLEMGEN_OUTPUT_PATHS_TEST_SECRET"


def test_an_output_is_apart_from_its_inputs_however_the_path_is_written(tmp_path, monkeypatch):
    sheet, folder = tmp_path / "a.toml", tmp_path / "subs"
    sheet.write_text("x")
    folder.mkdir()
    os.link(sheet, tmp_path / "hard.toml")
    (tmp_path / "soft.toml").symlink_to(sheet)
    monkeypatch.chdir(tmp_path)
    for same in ("a.toml", "./a.toml", str(sheet), "subs/../a.toml", "soft.toml", "hard.toml"):
        with pytest.raises(ProblemgenError, match="is the sheet"):
            check_output_apart(same, {"sheet": sheet})
    with pytest.raises(ProblemgenError, match="is inside the folder"):
        check_output_apart("subs/deeper/out.json", {"folder": folder})
    check_output_apart("b.toml", {"sheet": sheet, "folder": folder, "not given": None})
    check_output_apart("subs-out", {"folder": folder})  # a name that only starts like the folder's


@pytest.fixture
def one_student(tmp_path, monkeypatch):
    from problemgen.documents import worksheet

    monkeypatch.setenv(SECRET_ENV, "a long class secret for tests")
    roster = tmp_path / "roster.csv"
    roster.write_text("id\ns1\n", encoding="utf-8")
    worksheet.write_class_set(worksheet.WorksheetJob("masking", tmp_path / "class"), roster, SECRET_ENV)
    sheet = tmp_path / "s1.toml"
    sheet.write_bytes((tmp_path / "class" / "keys" / "s1" / "key.toml").read_bytes())
    return tmp_path


def _softmax(path):
    path.write_text("import numpy as np\n\ndef softmax(x):\n    e = np.exp(x - x.max(-1, keepdims=True))\n"
                    "    return e / e.sum(-1, keepdims=True)\n")
    return path


@pytest.mark.parametrize("command, overwritten", [
    (["grade", "{d}/s1.toml", "--variant", "{d}/class/keys/s1/variant.json", "-o", "{d}/s1.toml"], "s1.toml"),
    (["grade", "{d}/s1.toml", "--variant", "{d}/class/keys/s1/variant.json", "-o", "{d}/class/keys/s1/variant.json"],
     "class/keys/s1/variant.json"),
    (["grade-code", "{d}/softmax.py", "--task", "softmax", "-o", "{d}/softmax.py"], "softmax.py"),
    (["export", "moodle", "--bank", "{d}/bank.toml", "-o", "{d}/bank.toml"], "bank.toml"),
    (["export", "moodle", "--bank", "{d}/bank.toml", "-o", "{d}/out.xml", "--preview", "{d}/bank.toml"], "bank.toml"),
    (["export", "gradescope", "--class", "{d}/class", "--roster", "{d}/roster.csv", "--match-by", "id",
      "-o", "{d}/roster.csv"], "roster.csv"),
])
def test_a_command_whose_output_is_one_of_its_inputs_refuses_and_leaves_it_as_it_was(one_student, capsys, command,
                                                                                    overwritten, monkeypatch):
    from problemgen.cli import main

    monkeypatch.setenv("PROBLEMGEN_GRADER_SECRET", "a long grader secret for tests")
    _softmax(one_student / "softmax.py")
    (one_student / "bank.toml").write_text('title = "t"\nseed = 1\n\n[[problems]]\nkind = "masks.causal"\n')
    before = (one_student / overwritten).read_bytes()
    with pytest.raises(SystemExit) as exit_info:
        main([part.format(d=one_student) for part in command])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert (one_student / overwritten).read_bytes() == before


def test_an_export_inside_the_class_set_it_packs_is_refused(one_student, capsys, monkeypatch):
    from problemgen.cli import main

    monkeypatch.setenv("PROBLEMGEN_GRADER_SECRET", "a long grader secret for tests")
    with pytest.raises(SystemExit) as exit_info:
        main(["export", "gradescope", "--class", str(one_student / "class"), "--roster", str(one_student / "roster.csv"),
              "--match-by", "id", "-o", str(one_student / "class" / "autograder.zip")])
    assert exit_info.value.code == 2 and "is inside the --class" in capsys.readouterr().err
    assert not (one_student / "class" / "autograder.zip").exists()


@pytest.mark.parametrize("command", [
    ["grade", "{d}/s1.toml", "--variant", "{d}/class/keys/s1/variant.json", "-o", "{d}/absent/report.json"],
    ["grade-code", "{d}/softmax.py", "--task", "softmax", "-o", "{d}/absent/report.json"],
    ["export", "moodle", "--bank", "{d}/bank.toml", "-o", "{d}/absent/pool.xml"],
])
def test_an_output_file_that_cannot_be_written_is_one_error_line_before_any_work(one_student, capsys, command,
                                                                                 monkeypatch):
    """grade-code ran the sandbox, then met the missing folder with a traceback; grade and the LMS exports
    checked first, each in its own words."""
    from problemgen.cli import main

    monkeypatch.setenv("PROBLEMGEN_GRADER_SECRET", "a long grader secret for tests")
    _softmax(one_student / "softmax.py")
    (one_student / "bank.toml").write_text('title = "t"\nseed = 1\n\n[[problems]]\nkind = "masks.causal"\n')
    with pytest.raises(SystemExit) as exit_info:
        main([part.format(d=one_student) for part in command])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2, err
    assert re.fullmatch(r"error: (-o|--output) \S+/absent/\S+: cannot be written \(no directory \S+/absent\)\n", err)


def test_an_export_run_from_the_library_checks_its_outputs_as_the_command_does(one_student, monkeypatch):
    """The check sat in the CLI's wrapper: a script building the Gradescope export with -o on its roster
    replaced the roster."""
    from problemgen.exports import all_exports

    monkeypatch.setenv("PROBLEMGEN_GRADER_SECRET", "a long grader secret for tests")
    roster = one_student / "roster.csv"
    before = roster.read_bytes()
    with pytest.raises(ProblemgenError, match="is the --roster"):
        all_exports()["gradescope"].run(class_dir=one_student / "class", roster=roster, match_by="id", output=roster)
    assert roster.read_bytes() == before


def test_a_worksheet_written_inside_its_own_templates_folder_is_refused(tmp_path, capsys):
    from problemgen.cli import main

    templates = tmp_path / "templates"
    templates.mkdir()
    with pytest.raises(SystemExit) as exit_info:
        main(["worksheet", "masking", "--templates", str(templates), "-o", str(templates / "week1")])
    assert exit_info.value.code == 2 and "is inside the --templates folder" in capsys.readouterr().err
    assert list(templates.iterdir()) == []
