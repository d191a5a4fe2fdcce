"""The static checks on submitted sources: which uses of banned names are found, and syntax errors."""

from __future__ import annotations

import pytest

from problemgen.code import static
from problemgen.code.base import BannedRule

SCIPY_SOFTMAX = static.SOFTMAX_SHORTCUTS


def names(source: str, rules: tuple[BannedRule, ...] = (SCIPY_SOFTMAX,)) -> list[tuple[int, str]]:
    return [(f.line, f.name) for f in static.banned_uses({"s.py": source}, rules)]


@pytest.mark.parametrize("source, expected", [
    ("import numpy as np\ndef f(x):\n    return np.exp(x)\n", []),
    ("import torch\n", [(1, "torch")]),
    ("import torch.nn as nn\n", [(1, "torch.nn")]),
    ("from scipy.special import softmax\n", [(1, "scipy.special.softmax")]),
    ("from scipy.special import softmax as s\ny = s(1)\n", [(1, "scipy.special.softmax")]),
    ("import scipy.special as sp\ny = sp.softmax(1)\n", [(2, "scipy.special.softmax")]),
    # an alias applies to the whole file, also to uses written above its import
    ("def f(x):\n    return sp.softmax(x)\nimport scipy.special as sp\n", [(2, "scipy.special.softmax")]),
    # one finding per line, the fullest dotted name
    ("import scipy\ny = scipy.special.softmax(1)\n", [(2, "scipy.special.softmax")]),
    ("import importlib\nm = importlib.import_module('torch')\n", [(2, "torch")]),
    ("m = __import__('problemgen.code')\n", [(1, "problemgen.code")]),
    ("m = __import__('tor' + 'ch')\n", []),  # computed names escape the static check (the sandbox refuses them)
    ("from . import torch\n", []),  # relative imports name the submission's own modules
    ("import reference\n", [(1, "reference")]),
])  # fmt: skip
def test_banned_uses_finds_each_use_once_by_its_full_name(source, expected):
    assert names(source) == expected


def test_findings_are_sorted_by_file_and_line_across_files():
    sources = {"b.py": "import torch\n", "a.py": "x = 1\nimport jax\n"}
    found = [(f.file, f.line, f.name) for f in static.banned_uses(sources, ())]
    assert found == [("a.py", 2, "jax"), ("b.py", 1, "torch")]


@pytest.mark.parametrize("source, expected", [
    ("def f(:\n", "s.py, line 1: SyntaxError"),
    ("x = '\0'\n", "s.py: SyntaxError: source code string cannot contain null bytes"),
    ("x = 1\n", None),
])  # fmt: skip
def test_syntax_error_is_one_line_or_none(source, expected):
    problem = static.syntax_error({"s.py": source})
    assert problem == expected if expected is None else problem.startswith(expected)


def test_a_source_is_parsed_once_for_both_checks(monkeypatch):
    calls = []
    real = static.ast.parse
    monkeypatch.setattr(static.ast, "parse", lambda *a, **k: calls.append(a) or real(*a, **k))
    source = "import numpy as np\n# a comment unique to this test: 4f1c\n"
    assert static.syntax_error({"s.py": source}) is None
    assert static.banned_uses({"s.py": source}, ()) == []
    assert len(calls) == 1


def test_a_submission_never_writes_to_the_graders_stderr():
    """``1if x else 2`` makes Python's tokenizer print a SyntaxWarning when it is parsed; a fresh interpreter,
    with Python's own warning filters, runs both checks on such a source and prints nothing on stderr."""
    import subprocess
    import sys

    script = ("from problemgen.code import static\n"
              "source = {'s.py': 'x = 1if 1 else 2\\nz = [1for _ in range(2)]\\n'}\n"
              "print(static.syntax_error(source), static.banned_uses(source, ()))\n")
    done = subprocess.run([sys.executable, "-W", "default", "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
