"""Credit that proves nothing is withheld: constant outputs, hard-coded public answers, laws on the wrong shape.

Also: every property call's expected form comes from the task's shipped solution, so a law is never
checked on a result of the wrong shape or dtype.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from problemgen.code import forms
from problemgen.code.grade import grade_submission, make_plan
from problemgen.code.sandbox import Limits, Sandbox
from problemgen.code.tasks import all_tasks, get_task

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux")


@pytest.fixture(scope="module")
def box():
    with Sandbox(Limits(import_timeout=5.0, case_timeout=3.0)) as sandbox:
        yield sandbox


def grade(box, tmp_path, source: str, task: str = "softmax"):
    path = tmp_path / f"{task}.py"
    path.write_text(source)
    return grade_submission(make_plan(get_task(task), secret="credit"), path, box)


def _public_table() -> list:
    plan = make_plan(get_task("softmax"), secret="credit")
    return [(c.call.args[0].tolist(), c.call.kwargs.get("axis", -1), np.asarray(c.expected).tolist())
            for c in plan.cases if c.public]  # fmt: skip


LOOKUP = """import numpy as np
TABLE = {table!r}
def softmax(x, axis=-1):
    for given, given_axis, answer in TABLE:
        if np.shape(given) == np.shape(x) and given_axis == axis and np.allclose(given, x):
            return np.array(answer)
    {fallback}
"""


def test_a_constant_output_scores_zero_even_where_it_happens_to_be_right(box, tmp_path):
    vector = _public_table()[0][2]  # the right answer to the first public case, returned for every input
    report = grade(box, tmp_path, f"import numpy as np\ndef softmax(x, axis=-1):\n    return np.array({vector!r})\n")
    assert report.score == 0.0 and all(r.score == 0.0 for r in report.results)
    assert "do not change with the inputs" in report.results[0].feedback


def test_public_answers_hard_coded_over_a_constant_score_zero(box, tmp_path):
    report = grade(box, tmp_path, LOOKUP.format(table=_public_table(), fallback="return np.full(3, 1 / 3)"))
    assert report.score == 0.0
    public = [r for r in report.results if r.group == "public"]
    assert all("do not change with the inputs" in r.feedback for r in public)  # right, and withdrawn


def test_public_answers_hard_coded_earn_no_credit_for_laws(box, tmp_path):
    uniform = "x = np.asarray(x, dtype=float)\n    return np.ones_like(x) / x.shape[axis]"  # obeys the laws
    report = grade(box, tmp_path, LOOKUP.format(table=_public_table(), fallback=uniform))
    public = [r for r in report.results if r.group == "public"]
    assert public and all(r.status == "OK" for r in public)
    assert all(r.score == 0.0 for r in report.results if r.group != "public")
    assert any("confirm nothing" in r.feedback for r in report.results if r.group == "properties")


def test_a_law_is_not_checked_on_a_result_of_the_wrong_shape(box, tmp_path):
    """Right on every value case, garbage of a convenient shape on the property calls."""
    source = ("import numpy as np\n"
              "def softmax(x, axis=-1):\n"
              "    x = np.asarray(x, dtype=float)\n"
              "    if x.shape == (2, 6, 4):\n"
              "        return np.ones((1, 1))\n"
              "    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
              "    return e / e.sum(axis=axis, keepdims=True)\n")  # fmt: skip
    report = grade(box, tmp_path, source)
    law = next(r for r in report.results if r.name == "property/slices-sum-to-one")
    assert law.status == "BAD_OUTPUT" and "shape (1, 1), expected (2, 6, 4)" in law.feedback
    assert all(r.status == "OK" for r in report.results if r.group != "properties")


def test_the_honest_solution_keeps_full_marks_on_every_task(box):
    import problemgen.code.tasks as tasks_package
    from pathlib import Path

    solutions = Path(tasks_package.__file__).parent / "solutions"
    for name, task in all_tasks().items():
        report = grade_submission(make_plan(task, secret="credit"), solutions / f"{name}.py", box)
        assert report.score == 1.0, (name, [(r.name, r.status, r.feedback[:200]) for r in report.results if not r.passed])


def test_forms_compare_structure_shapes_and_dtype_kinds():
    expected = forms.form_of((np.zeros((2, 3)), np.zeros((2, 3), dtype=bool)))
    assert forms.mismatch(expected, [np.ones((2, 3), dtype=np.float32), np.ones((2, 3), dtype=bool)]) == ""
    assert "result[1] has dtype kind number" in forms.mismatch(expected, [np.ones((2, 3)), np.ones((2, 3))])
    assert "shape (3, 2)" in forms.mismatch(expected, [np.ones((3, 2)), np.ones((2, 3), dtype=bool)])
    assert "tuple or list of 2" in forms.mismatch(expected, np.ones((2, 3)))
    assert forms.mismatch(forms.form_of(7), np.asarray(7)) == ""  # a numpy scalar travels as a 0-d array
