"""The public API: a few names in ``problemgen`` itself, imported on first use."""

from __future__ import annotations

import subprocess
import sys

import problemgen


def test_every_public_name_resolves():
    for name in problemgen.__all__:
        assert getattr(problemgen, name) is not None, name
    assert issubclass(problemgen.ProblemgenError, Exception)


def test_an_unknown_name_is_an_attribute_error():
    try:
        problemgen.no_such_function  # noqa: B018
    except AttributeError as exc:
        assert "no_such_function" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")


def test_importing_problemgen_loads_nothing_heavy():
    code = "import sys, problemgen; print(sorted(m for m in ('numpy', 'sympy', 'jinja2', 'click') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
