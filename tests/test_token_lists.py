"""No list in a rendered problem ends in a stray comma (a print defect reported in issue 14).

Every kind's statement and worked solution, in Markdown and LaTeX, is searched for a comma that closes
a list: before another punctuation mark, a LaTeX line break or list end, a blank line, or the end.
"""

from __future__ import annotations

import re

import pytest

from problemgen.documents.rendering import render_problem
from problemgen.model.registry import all_kinds, generate

STRAY_COMMA = re.compile(r",\s*[,.;:]|,\s*(\\\\|\\item|\\end)|,[ \t]*\n[ \t]*\n|,\s*\Z")


@pytest.mark.parametrize("kind", [spec.name for spec in all_kinds()])
def test_no_rendered_list_ends_in_a_stray_comma(kind):
    spec = next(s for s in all_kinds() if s.name == kind)
    for difficulty in spec.difficulties:
        for seed in range(4):
            problem = generate(kind, seed, difficulty)
            for fmt in ("md", "tex"):
                for solution in (False, True):
                    text = render_problem(problem, fmt, solution=solution)
                    found = STRAY_COMMA.search(text)
                    assert found is None, (kind, difficulty, seed, fmt, text[max(0, found.start() - 80):found.end() + 20])
