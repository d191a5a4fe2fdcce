"""Which uploaded file the platforms grade (``problemgen.exports.uploads``), decided without running anything.

Every platform goes through :func:`uploads` and :func:`graded_file`: the file that defines the task's
function is graded; a submission that offers none is not gradable, with a reason the student sees
(on PrairieLearn it then costs no attempt).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from problemgen.code.tasks import get_task
from problemgen.exports.uploads import NotGradable, graded_file, uploads


def submit(tmp: Path, files: dict[str, bytes | str]) -> Path:
    submission = tmp / "submission"
    submission.mkdir()
    for name, data in files.items():
        (submission / name).write_bytes(data.encode() if isinstance(data, str) else data)
    return submission


def chosen(task_name: str, submission: Path) -> Path:
    task = get_task(task_name)
    return graded_file(task, uploads(submission, task))


@pytest.mark.parametrize("files", [
    {"softmax.py": "def soft_max(x):\n    return x\n"},
    {"softmax.py": "import numpy as np\n"},
    {"softmax.py": ""},
], ids=["misspelt", "no function", "empty"])
def test_a_lone_file_without_any_of_the_tasks_functions_is_not_gradable(files, tmp_path):
    with pytest.raises(NotGradable, match=r"needs a function softmax\(\).*uploaded: softmax.py; defining it: none"):
        chosen("softmax", submit(tmp_path, files))


@pytest.mark.parametrize("files, graded", [
    ({"work.py": "def softmax(x):\n    return x\n"}, "work.py"),
    ({"softmax.py": "def softmax(x):\n    return x +\n"}, "softmax.py"),  # its syntax error is reported by grading
    ({"a.py": "def softmax(x):\n    return x\n", "b.py": "X = 1\n"}, "a.py"),
])
def test_the_file_defining_the_function_or_a_lone_file_that_does_not_parse_is_graded(files, graded, tmp_path):
    assert chosen("softmax", submit(tmp_path, files)).name == graded


def test_a_lone_file_with_another_of_the_tasks_functions_is_graded_for_those(tmp_path):
    submission = submit(tmp_path, {"mha.py": "def merge_heads(x):\n    return x\n"})
    assert chosen("multi_head_attention", submission).name == "mha.py"


def test_several_files_defining_the_function_are_not_gradable_and_named(tmp_path):
    body = "def softmax(x):\n    return x\n"
    with pytest.raises(NotGradable, match="defining it: several: a.py, b.py"):
        chosen("softmax", submit(tmp_path, {"a.py": body, "b.py": body}))


def starter_and_notebook(starter: str) -> dict[str, str]:
    from exports_platform import filled_starter_notebook

    return {"softmax.py": starter, "softmax.ipynb": filled_starter_notebook("softmax")}


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["as shipped", "checked out with CRLF"])
def test_the_untouched_starter_does_not_count_beside_a_notebook_that_defines_the_function(newline, tmp_path):
    starter = get_task("softmax").starter.replace("\n", newline)
    assert chosen("softmax", submit(tmp_path, starter_and_notebook(starter))).name == "softmax.ipynb"


def test_an_edited_starter_beside_a_notebook_is_still_ambiguous(tmp_path):
    edited = get_task("softmax").starter + "\n# my notes\n"
    with pytest.raises(NotGradable, match="several: softmax.ipynb, softmax.py"):
        chosen("softmax", submit(tmp_path, starter_and_notebook(edited)))


def test_the_untouched_starter_alone_is_graded(tmp_path):
    assert chosen("softmax", submit(tmp_path, {"softmax.py": get_task("softmax").starter})).name == "softmax.py"


# ------------------------------------------------------------------------------------------ bounded reading


@pytest.fixture
def parsed(monkeypatch):
    """The size of every text the grader hands to ``ast.parse`` while it looks for the graded file."""
    import ast

    sizes: list[int] = []
    real = ast.parse

    def spy(source, *args, **kwargs):
        sizes.append(len(source))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", spy)
    return sizes


SOLUTION = "import numpy as np\n\ndef softmax(x, axis=-1):\n    e = np.exp(x - x.max(axis, keepdims=True))\n    return e / e.sum(axis, keepdims=True)\n"


def test_only_files_that_can_define_the_function_are_parsed(tmp_path, parsed):
    helper = "# notes\n" + "VALUES = [1, 2, 3]\n" * 5000
    submission = submit(tmp_path, {"helper.py": helper, "softmax.py": SOLUTION})
    assert chosen("softmax", submission).name == "softmax.py"
    assert parsed == [len(SOLUTION)]


def test_a_name_python_reads_as_the_function_still_counts(tmp_path):
    """Python reads identifiers in NFKC form: ``def ｓｏｆｔｍａｘ`` defines ``softmax``."""
    submission = submit(tmp_path, {"a.py": SOLUTION.replace("def softmax", "def ｓｏｆｔｍａｘ"), "b.py": "X = 1\n"})
    assert chosen("softmax", submission).name == "a.py"


def test_what_is_parsed_in_all_is_capped_and_the_rest_says_so(tmp_path, parsed):
    from problemgen.code.sandbox.staging import MAX_TOTAL_BYTES

    filler = "def softmax(x):\n    return x\n" + "Y = 1\n" * 40_000  # about 240 KB, a candidate
    submission = submit(tmp_path, {f"try{i}.py": filler for i in range(8)})
    with pytest.raises(NotGradable, match=rf"not parsed: the uploaded Python exceeds {MAX_TOTAL_BYTES} bytes in all"):
        chosen("softmax", submission)
    assert sum(parsed) <= MAX_TOTAL_BYTES


def test_what_is_read_in_all_is_capped_and_the_rest_says_so(tmp_path, monkeypatch):
    from problemgen.exports import uploads as module

    monkeypatch.setattr(module, "MAX_SCANNED_BYTES", 1000)
    submission = submit(tmp_path, {"a.py": "X = 1\n" * 100, "b.py": "X = 2\n" * 100})
    with pytest.raises(NotGradable, match=r"b.py \(not read: the uploaded files exceed 1000 bytes in all\)"):
        chosen("softmax", submission)


def test_a_syntax_error_is_named_when_no_file_can_be_graded(tmp_path):
    submission = submit(tmp_path, {"a.py": "def softmax(x):\n    return x +\n", "b.py": "X = 1\n"})
    with pytest.raises(NotGradable, match=r"defining it: none of them; not looked into: a.py \(syntax error on line 2\)"):
        chosen("softmax", submission)


HIDDEN = "# coding: utf-7\n# +AAo-def softmax(x):+AAo-    return x\n"
"""Python reads ``def softmax`` here (``+AAo-`` is a line break in UTF-7); UTF-8 reads two comments."""


def test_an_upload_whose_declared_codec_hides_code_is_not_judged_by_its_utf8_text(tmp_path):
    """The scan once saw two comments in HIDDEN and judged the file to define nothing."""
    submission = submit(tmp_path, {"a.py": HIDDEN, "b.py": "X = 1\n"})
    with pytest.raises(NotGradable, match=r"not looked into: a.py \(declares coding utf-7: Python would decode"):
        chosen("softmax", submission)
    (tmp_path / "alone").mkdir()
    assert chosen("softmax", submit(tmp_path / "alone", {"a.py": HIDDEN})).name == "a.py"  # graded: the student sees why


APPLE_DOUBLE = b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        "


def test_files_a_mac_adds_to_a_zipped_upload_are_not_uploads(tmp_path):
    """Gradescope unzips what a student uploads, __MACOSX/._softmax.py and ._softmax.py included: counted as
    uploads, they made a lone softmax.py with a syntax error "not gradable" instead of graded (its error then
    reported), and a lone answer sheet under another name no longer lone."""
    from problemgen.exports.autograde import find_sheet

    submission = submit(tmp_path, {"softmax.py": "def softmax(x):\n    return x +\n", "._softmax.py": APPLE_DOUBLE,
                                   "my answers.toml": "", "._my answers.toml": APPLE_DOUBLE})
    (submission / "__MACOSX").mkdir()
    for name in ("._softmax.py", "._my answers.toml"):
        (submission / "__MACOSX" / name).write_bytes(APPLE_DOUBLE)
    assert [u.path.name for u in uploads(submission, get_task("softmax"))] == ["softmax.py"]
    assert chosen("softmax", submission).name == "softmax.py"
    assert find_sheet(submission) == submission / "my answers.toml"
