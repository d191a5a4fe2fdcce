"""Coding tasks as notebooks: starter notebooks, notebook submissions graded like files, the check cell."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

from exports_platform import filled_starter_notebook  # noqa: E402

from problemgen.classes.grade_code import GradeRequest, grade_code  # noqa: E402
from problemgen.classes.notebook_check import module_from_namespace  # noqa: E402
from problemgen.code.grade import grade_submission, make_plan  # noqa: E402
from problemgen.code.notebook import CHECK_MARKER, INSTALL_MARKER, LEGACY_INSTALL_LINES, read_notebook  # noqa: E402
from problemgen.code.sandbox import Limits, Sandbox  # noqa: E402
from problemgen.code.sandbox.staging import RejectedSubmission  # noqa: E402
from problemgen.code.tasks import all_tasks, get_task  # noqa: E402
from problemgen.code.tasks.notebooks import build_notebook, write_notebook  # noqa: E402
from problemgen.errors import ProblemgenError  # noqa: E402
from problemgen.sheets.reports import render  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "problemgen" / "code" / "tasks" / "solutions"
SECRET = "notebook-test-secret"


def notebook_with(*cells: str, check: bool = False) -> str:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# my work")]
                                  + [nbformat.v4.new_code_cell(c) for c in cells])
    if check:
        nb.cells.append(nbformat.v4.new_code_cell(f"{CHECK_MARKER}\nprint('checks')"))
    return nbformat.writes(nb)


@pytest.mark.parametrize("name", list(all_tasks()))
def test_every_task_has_a_starter_notebook_that_validates(name):
    notebook = build_notebook([name])
    nbformat.validate(notebook)
    task = get_task(name)
    sources = [c.source for c in notebook.cells]
    assert task.starter.rstrip() in sources and task.spec.rstrip() in sources
    assert any("## Public examples" in s for s in sources)
    checks = [c for c in notebook.cells if c.metadata.get("problemgen", {}).get("role") == "check"]
    assert len(checks) == 1 and f"check_in_notebook({name!r})" in checks[0].source


def test_several_tasks_go_in_one_notebook_and_the_same_tasks_give_the_same_bytes(tmp_path):
    first, second = tmp_path / "a.ipynb", tmp_path / "b.ipynb"
    write_notebook(["layer_norm", "rms_norm"], first)
    write_notebook(["layer_norm", "rms_norm"], second)
    assert first.read_bytes() == second.read_bytes()
    assert json.loads(first.read_text())["metadata"]["problemgen"]["tasks"] == ["layer_norm", "rms_norm"]
    with pytest.raises(ProblemgenError, match="already exists"):
        write_notebook(["softmax"], first)
    with pytest.raises(ProblemgenError, match="unknown task"):
        build_notebook(["softmx"])


def test_code_cells_are_extracted_in_order_without_magics_or_check_cells(tmp_path):
    path = tmp_path / "work.ipynb"
    path.write_text(notebook_with("%matplotlib inline\nimport numpy as np", "!pip install x\nX = 1", check=True))
    code = read_notebook(path)
    assert "import numpy as np" in code.source and "X = 1" in code.source
    assert code.source.index("import numpy") < code.source.index("X = 1")
    assert "%matplotlib" not in code.source and "pip install" not in code.source and "checks" not in code.source
    assert any("2 IPython magic or shell line" in n for n in code.notes)
    assert any("public-check cell" in n for n in code.notes)


def notebook_file(tmp_path: Path, *cells: str) -> Path:
    path = tmp_path / "work.ipynb"
    path.write_text(notebook_with(*cells))
    return path


def test_magic_lines_inside_a_string_or_an_expression_are_kept_as_python(tmp_path):
    python = ('DOC = """\n!important note\n%s\n"""\n'  # inside a triple-quoted string
              "same = (1\n!= 1)\n"  # a continuation line inside brackets
              "rest = 10 \\\n% 3\n"  # a continuation line after a backslash
              "for i in range(2):\n")
    code = read_notebook(notebook_file(tmp_path, python + "    !echo {i}\n    rest += i\n%time rest\n"))
    assert code.source == "# --- cell 1 ---\n" + python + "    rest += i\n"
    assert code.notes == ("2 IPython magic or shell lines (%… or !…) were dropped: they are not Python",)


@pytest.mark.parametrize("cell, graded, dropped", [
    ("if missing:\n    !pip install foo\n", "if missing:\n    pass\n", 1),
    ("if missing:\n    !pip install \\\n        foo\n    # then\n    %load_ext bar\nX = 1\n",
     "if missing:\n    pass\n    # then\nX = 1\n", 3),
    ("for a in b:\n\tif a:  # note\n\n\t\t!echo {a}\n\tprint(a)\n",
     "for a in b:\n\tif a:  # note\n\n\t\tpass\n\tprint(a)\n", 1),
])
def test_a_magic_that_was_a_blocks_only_statement_leaves_pass_so_the_cell_stays_python(tmp_path, cell, graded,
                                                                                          dropped):
    """Dropping `    !pip install foo` under `if missing:` once left the block empty: a syntax error in
    the graded module, so the whole submission scored 0. The magic lines are still counted as dropped."""
    code = read_notebook(notebook_file(tmp_path, cell))
    assert code.source == "# --- cell 1 ---\n" + graded
    compile(code.source, "graded.py", "exec")  # parses only: nothing runs
    lines = ("1 IPython magic or shell line (%… or !…) was dropped: it is not Python" if dropped == 1 else
             f"{dropped} IPython magic or shell lines (%… or !…) were dropped: they are not Python")
    assert code.notes == (lines,)


def test_a_cell_magic_keeps_its_body_only_when_ipython_runs_it_as_the_notebooks_python(tmp_path):
    """A %%bash cell (say, to pip install) once reached the grader as Python: a syntax error, so 0 marks."""
    code = read_notebook(notebook_file(tmp_path, "%%bash\npip install numpy\necho done\n",
                                       "\n%%time\nX = 1\n!ls\n", "%%writefile helper.py\nY = 2\n"))
    assert "pip install" not in code.source and "Y = 2" not in code.source and "%%" not in code.source
    assert "X = 1" in code.source and "!ls" not in code.source
    assert code.notes == ("7 IPython magic or shell lines (%… or !…) were dropped: they are not Python",)


@pytest.mark.parametrize("cell", ["x = 1\n", "x = 1", "x = 1\n\n\n", "\n", "# only a comment\n"])
def test_a_cell_without_magics_drops_nothing_and_says_nothing_however_it_ends(tmp_path, cell):
    code = read_notebook(notebook_file(tmp_path, cell, "y = 2\n"))
    assert code.notes == ()
    assert code.source.startswith("# --- cell 1 ---\n" + cell.rstrip())


def test_text_that_is_not_python_is_kept_from_where_it_breaks_so_the_error_is_the_students(tmp_path):
    code = read_notebook(notebook_file(tmp_path, "!ls\ns = '''never closed\n!ls\n"))
    assert code.source == "# --- cell 1 ---\ns = '''never closed\n!ls\n"
    assert code.notes[0].startswith("1 IPython magic")


def test_code_cells_over_the_size_limit_are_refused_before_they_are_tokenized(tmp_path, monkeypatch):
    from problemgen.code import magics
    from problemgen.code.sandbox.staging import MAX_TOTAL_BYTES

    monkeypatch.setattr(magics, "_logical_line_end", lambda *_: pytest.fail("tokenized"))
    cell = "!echo\nx = 1\n" * (MAX_TOTAL_BYTES // 12 + 1)  # what is left after the magics is within it
    with pytest.raises(RejectedSubmission, match=f"code cells exceed {MAX_TOTAL_BYTES} bytes"):
        read_notebook(notebook_file(tmp_path, cell))


def test_the_starter_install_cell_is_marked_like_a_check_cell():
    install = build_notebook(["softmax"]).cells[1]
    assert install.metadata["problemgen"] == {"role": "install"}
    assert install.source.splitlines()[0] == INSTALL_MARKER and "pip" in install.source


def _metadata_lost(notebook) -> None:
    notebook.cells[1].metadata = {}


def _line_ends_changed(notebook) -> None:
    notebook.cells[1].source = "\r\n".join(line + "  " for line in LEGACY_INSTALL_LINES) + "\r\n"


@pytest.mark.parametrize("legacy, edit", [
    pytest.param(False, None, id="marked"),
    pytest.param(False, _metadata_lost, id="metadata lost, marker line kept"),
    pytest.param(True, None, id="old starter"),
    pytest.param(True, _line_ends_changed, id="old starter, line ends and trailing blanks changed"),
])
def test_the_install_cell_is_left_out_of_the_graded_code(tmp_path, legacy, edit):
    notebook = nbformat.reads(filled_starter_notebook("softmax", legacy=legacy), as_version=4)
    if edit:
        edit(notebook)
    path = tmp_path / "work.ipynb"
    path.write_text(nbformat.writes(notebook))
    code = read_notebook(path)
    assert "pip" not in code.source and "subprocess" not in code.source and "def softmax" in code.source
    assert code.notes == ("1 problemgen install cell was left out", "1 public-check cell was left out")


def test_code_a_student_added_below_the_old_install_lines_is_kept(tmp_path):
    old_cell = "\n".join(LEGACY_INSTALL_LINES)
    code = read_notebook(notebook_file(tmp_path, old_cell + "\nimport numpy as np\nSCALE = 2\n"))
    assert code.source == "# --- cell 1 ---\nimport numpy as np\nSCALE = 2\n"
    assert code.notes == ("1 problemgen install cell was left out",)
    edited = old_cell.replace("check=True", "check=False")  # no longer the old cell: the student's code
    assert "check=False" in read_notebook(notebook_file(tmp_path, edited)).source


@pytest.mark.parametrize("content, message", [
    (b"{not json", "not a readable notebook"),
    (b'{"cells": 5}', "not a readable notebook"),
    (b"\xff\xfe\x00", "not UTF-8"),
    (b"[" * 100_000 + b"]" * 100_000, "not a readable notebook"),
    (notebook_with("x = '\\ud800'").replace("\\\\ud800", "\\ud800").encode(), "lone surrogate"),
])
def test_an_unreadable_notebook_is_rejected_with_one_line(tmp_path, content, message):
    path = tmp_path / "bad.ipynb"
    path.write_bytes(content)
    with pytest.raises(RejectedSubmission, match=message) as info:
        read_notebook(path)
    assert "\n" not in str(info.value)


def test_a_first_cell_that_declares_a_codec_hiding_code_is_rejected_naming_it(tmp_path):
    """The cell marker is a comment on line 1, so the first cell's first line is where Python looks for a
    declaration; under UTF-7 the second line below is ``import os`` to Python, a comment to the checks."""
    with pytest.raises(RejectedSubmission, match=r"^work.ipynb: the first code cell declares coding utf-7: Python"):
        read_notebook(notebook_file(tmp_path, "# coding: utf-7\n# +AAo-import os\n"))
    (tmp_path / "work.ipynb").unlink()
    assert "NAME = 'café'" in read_notebook(notebook_file(tmp_path, "# -*- coding: utf-8 -*-\nNAME = 'café'\n")).source


def test_a_notebook_without_code_is_rejected(tmp_path):
    path = tmp_path / "empty.ipynb"
    path.write_text(notebook_with())
    with pytest.raises(RejectedSubmission, match="no code cells"):
        read_notebook(path)


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(Limits(case_timeout=5.0)) as box:
        yield box


@pytest.mark.parametrize("source", ["honest", "buggy"])
def test_a_notebook_submission_and_the_same_code_as_a_file_get_identical_reports(tmp_path, sandbox, source):
    code = (SOLUTIONS / "softmax.py").read_text()
    if source == "buggy":  # forgets the max subtraction: named on the large public example
        code = code.replace("np.max(", "0 * np.max(")
        assert "0 * np.max(" in code
    as_file, as_notebook = tmp_path / "alice.py", tmp_path / "alice.ipynb"
    as_file.write_text(code)
    as_notebook.write_text(notebook_with(code))
    plan = make_plan(get_task("softmax"), secret=SECRET)
    from_file, from_notebook = (grade_submission(plan, p, sandbox) for p in (as_file, as_notebook))
    assert from_notebook.results == from_file.results
    assert from_notebook.score == from_file.score == (1.0 if source == "honest" else from_file.score)
    if source == "buggy":
        assert from_file.score < 1.0


def test_a_file_or_notebook_saved_with_a_utf8_byte_order_mark_grades_as_without_it(tmp_path, sandbox):
    """Windows editors may save UTF-8 with a byte-order mark; Python runs such a file, and the grader once
    refused the right answer (the mark read as a stray character) and scored it 0."""
    code = (SOLUTIONS / "softmax.py").read_text()
    plan = make_plan(get_task("softmax"), secret=SECRET)
    for name, text in (("alice.py", code), ("alice.ipynb", notebook_with(code))):
        path = tmp_path / name
        path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
        assert grade_submission(plan, path, sandbox).score == 1.0, name


@pytest.mark.parametrize("legacy", [False, True], ids=["starter", "old starter"])
@pytest.mark.parametrize("task", list(all_tasks()))
def test_every_tasks_starter_notebook_filled_with_its_solution_scores_full_marks(tmp_path, sandbox, task, legacy):
    path = tmp_path / f"{task}.ipynb"
    path.write_text(filled_starter_notebook(task, legacy=legacy))
    report = grade_submission(make_plan(get_task(task), secret=SECRET), path, sandbox)
    assert report.score == 1.0, render(report, "text")
    assert "notebook: 1 problemgen install cell was left out" in report.meta["warnings"]


def test_one_notebook_of_every_task_filled_with_the_solutions_scores_full_marks_on_each(tmp_path, sandbox):
    path = tmp_path / "course.ipynb"
    path.write_text(filled_starter_notebook(*all_tasks()))
    for task in all_tasks():
        report = grade_submission(make_plan(get_task(task), secret=SECRET), path, sandbox)
        assert report.score == 1.0, render(report, "text")


def test_a_class_directory_grades_notebooks_and_refuses_an_unreadable_one(tmp_path):
    submissions = tmp_path / "subs"
    submissions.mkdir()
    (submissions / "ana.ipynb").write_text(notebook_with((SOLUTIONS / "softmax.py").read_text()))
    (submissions / "ben.ipynb").write_text("{broken")
    out = tmp_path / "out"
    grade_code(GradeRequest(submission=submissions, task="softmax", output=out, secret=SECRET, fmt="json"))
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert rows["ana"]["status"] == "graded" and float(rows["ana"]["score"]) == 1.0
    assert rows["ben"]["status"].startswith("refused: ben.ipynb: not a readable notebook")


def test_the_check_module_rebuilds_imports_constants_and_cell_functions():
    import numpy as np
    from numpy import exp as e

    def softmax(x, axis=-1):
        return e(x) / e(x).sum(axis=axis, keepdims=True)

    softmax.__module__ = "__main__"
    namespace = {"np": np, "e": e, "SCALE": 2.5, "softmax": softmax, "In": [], "_": None, "bad": float("nan")}
    source = module_from_namespace(namespace)
    assert "import numpy as np" in source and "from numpy import exp as e" in source
    assert "SCALE = 2.5" in source and "def softmax(x, axis=-1):" in source and "nan" not in source
    compile(source, "check.py", "exec")  # valid Python, never executed here
    with pytest.raises(ProblemgenError, match="run the starter cell"):
        module_from_namespace({"np": np})


def _execute(notebook, cwd: Path) -> list[str]:
    """Run every cell in a real Jupyter kernel; the text of every output, errors included."""
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    env_path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = str(ROOT) + (os.pathsep + env_path if env_path else "")
    try:
        nbclient.NotebookClient(notebook, timeout=180, kernel_name="python3",
                                resources={"metadata": {"path": str(cwd)}}).execute()
    finally:
        os.environ["PYTHONPATH"] = env_path
    texts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            texts.append(output.get("text") or output.get("evalue") or json.dumps(output.get("data", {})))
            if output.get("output_type") == "error":
                texts.append("ERROR: " + output.get("ename", ""))
    return texts


@pytest.mark.slow
@pytest.mark.parametrize("name", ["softmax", "layer_norm"])
def test_in_a_real_kernel_the_solution_passes_and_grades_in_full_once_saved_and_the_starter_reports_what_is_missing(
        tmp_path, name):
    solved = build_notebook([name])
    starter_index = next(i for i, c in enumerate(solved.cells) if c.source == get_task(name).starter.rstrip())
    solved.cells[starter_index].source = (SOLUTIONS / f"{name}.py").read_text()
    solved_text = "\n".join(_execute(solved, tmp_path))
    assert "score: " in solved_text and "(100%)" in solved_text and "ERROR" not in solved_text
    assert "public examples only" in solved_text
    saved = tmp_path / f"{name}.ipynb"  # the run notebook, outputs and all, as the student hands it in
    saved.write_text(nbformat.writes(solved))
    with Sandbox(Limits(case_timeout=5.0)) as box:
        report = grade_submission(make_plan(get_task(name), secret=SECRET), saved, box)
    assert report.score == 1.0, render(report, "text")

    starter_text = "\n".join(_execute(build_notebook([name]), tmp_path))
    assert "ERROR" not in starter_text and "Traceback" not in starter_text
    assert "score: 0/" in starter_text and "NotImplementedError" in starter_text


def run_cli(args: list[str], capsys) -> tuple[int, str]:
    from problemgen.cli import main

    try:
        main(args)
        code = 0
    except SystemExit as exit_:
        code = exit_.code or 0
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_a_recipe_puts_several_tasks_under_one_title(tmp_path, capsys):
    recipe = tmp_path / "week3.toml"
    recipe.write_text('title = "Week 3: norms"\ntasks = ["layer_norm", "rms_norm"]\n')
    code, output = run_cli(["task", "notebook", "--recipe", str(recipe), "-o", str(tmp_path / "w.ipynb")], capsys)
    assert code == 0, output
    notebook = nbformat.read(tmp_path / "w.ipynb", as_version=4)
    assert notebook.cells[0].source.startswith("# Week 3: norms")
    assert notebook.metadata["problemgen"]["tasks"] == ["layer_norm", "rms_norm"]


@pytest.mark.parametrize("text, message", [
    ('tasks = "softmax"\n', "non-empty list of task names"),
    ('tasks = []\n', "non-empty list"),
    ('tasks = ["softmax"]\ncode = "import os"\n', "unknown key 'code'"),
    ("tasks = [\n", "not a readable TOML recipe"),
    ('tasks = ["softmx"]\n', "unknown task 'softmx'"),
])
def test_a_bad_recipe_is_one_error_line(tmp_path, capsys, text, message):
    recipe = tmp_path / "bad.toml"
    recipe.write_text(text)
    code, output = run_cli(["task", "notebook", "--recipe", str(recipe), "-o", str(tmp_path / "x.ipynb")], capsys)
    assert code == 2 and message in output and output.count("error:") == 1
    assert not (tmp_path / "x.ipynb").exists()


def test_an_oversized_notebook_is_rejected_before_it_is_parsed(tmp_path):
    from problemgen.code.notebook import MAX_NOTEBOOK_BYTES

    path = tmp_path / "huge.ipynb"
    path.write_bytes(b" " * (MAX_NOTEBOOK_BYTES + 1))
    with pytest.raises(RejectedSubmission, match=r"^huge.ipynb: notebook larger than"):
        read_notebook(path)


def test_a_shell_line_continued_with_a_backslash_and_an_indented_cell_magic_are_left_out_whole(tmp_path):
    """IPython joins `!pip install -q \\` with its next line and strips a cell magic's indentation; the
    continuation was once kept as Python (an IndentationError) and ` %%writefile`'s body graded."""
    code = read_notebook(notebook_file(tmp_path, "!pip install -q \\\n    numpy\nX = 1\n", "  %%writefile h.py\nY = 2\n"))
    assert code.source.startswith("# --- cell 1 ---\nX = 1\n") and "numpy" not in code.source
    assert "Y = 2" not in code.source
    assert code.notes == ("4 IPython magic or shell lines (%… or !…) were dropped: they are not Python",)
