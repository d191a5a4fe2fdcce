"""What users hand in, read as Python would read it, and the files instructors write (``problemgen.userfiles``)."""

from __future__ import annotations

import ast

import pytest

from problemgen.classes.overrides import read_overrides
from problemgen.code.tasks.notebooks import read_recipe
from problemgen.documents import banks, rosters
from problemgen.userfiles import coding_problem

UTF7_REFUSAL = ("declares coding utf-7: Python would decode it with that codec and run other code than the UTF-8 "
                "text that is checked; save it as UTF-8 without the declaration")


def python_reads_the_same(text: str) -> bool:
    """Whether Python, given the file's UTF-8 bytes (declaration honoured), parses what the text says."""
    try:
        return ast.dump(ast.parse(text.encode("utf-8"))) == ast.dump(ast.parse(text))
    except SyntaxError:  # Python refuses the declaration
        return False


@pytest.mark.parametrize("text, problem", [
    ("# coding: utf-7\n# +AAo-import os\n", UTF7_REFUSAL),
    ("# -*- coding: latin-1 -*-\nNAME = 'café'\n", "declares coding iso-8859-1: Python would decode it"),
    ("#!/usr/bin/env python\n# vim: set fileencoding=utf-16 :\nX = 1\n", "declares coding utf-16: Python would"),
    ("# coding: rot13\nX = 1\n", "declares coding rot13: Python would"),
    ("# coding: klingon\nX = 1\n", "declares a coding Python does not know (unknown encoding: klingon)"),
    ("# -*- coding: utf-8 -*-\nNAME = 'café'\n", None),
    ("# vim: set fileencoding=UTF8 :\nNAME = 'café'\n", None),
    ("# -*- coding: latin-1 -*-\nX = 1\n", None),  # ASCII: latin-1 reads it as UTF-8 does
    ("# coding: utf-7\nX = 1\n", None),  # no + in it: the same text either way
    ("X = 1\n# coding: utf-7\n# +AAo-Y = 2\n", None),  # after a line of code, line 2 declares nothing
])  # fmt: skip
def test_a_coding_declaration_passes_only_where_python_reads_the_same_text(text, problem):
    found = coding_problem(text)
    if problem is None:
        assert found is None
    else:
        assert found.startswith(problem)
    assert python_reads_the_same(text) == (problem is None)  # the verdict is Python's own



INSTRUCTOR_FILES = {  # what an instructor writes -> (its text, how problemgen reads it, what that must give)
    "bank": ('title = "T"\n[[problems]]\nkind = "attention.weights"\n',
             lambda path: banks.load_bank(path).items[0].kind, "attention.weights"),
    "roster": ("id,name\nana,Ana\n", rosters.read_roster, ["ana"]),
    "overrides": ('[[override]]\nstudent = "ana"\npart = "p1.x"\nscore = 1\nreason = "r"\n',
                  lambda path: list(read_overrides(path)), ["ana"]),
    "notebook recipe": ('tasks = ["softmax"]\n', read_recipe, (None, ["softmax"])),
}


@pytest.mark.parametrize("kind", INSTRUCTOR_FILES)
def test_every_file_an_instructor_writes_reads_the_same_with_a_byte_order_mark(tmp_path, kind):
    """Windows editors save UTF-8 with a byte-order mark: banks and rosters skipped it, but an overrides file
    or a notebook recipe so saved was refused as invalid TOML at line 1."""
    text, read, expected = INSTRUCTOR_FILES[kind]
    path = tmp_path / "file"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert read(path) == expected
