"""What users hand in, read as Python would read it (``problemgen.userfiles``)."""

from __future__ import annotations

import ast

import pytest

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
