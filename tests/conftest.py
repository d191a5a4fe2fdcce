"""What every test shares: a grader fault fails the test that meets it.

Grading turns a reader's unexpected exception into an invalid answer (``answers.base.grader_fault``), so
one bug costs one answer in a class. In a test that containment would hide the bug behind an "invalid"
the test may well expect, so here the exception is raised again, except in tests marked ``grader_fault``
(the ones that check the containment itself).

It also holds ``shared_tmp``, a folder another uid can use, for the tests that run a command as ``nobody``.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def grader_faults_fail_the_test(request, monkeypatch):
    if request.node.get_closest_marker("grader_fault"):
        return

    def raise_again(exc: Exception):
        raise exc

    monkeypatch.setattr("problemgen.sheets.grading.grader_fault", raise_again)


@pytest.fixture
def shared_tmp():
    """A folder another uid can use (pytest's own is under a 0700 folder of root's)."""
    path = Path(tempfile.mkdtemp(prefix="problemgen-shared-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)
