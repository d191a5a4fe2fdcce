"""problemgen: practice problems and automated grading for transformer fundamentals.

The library in a few calls (the CLI is a thin layer over the same functions). A variant is
(kind, seed, overrides); everything else is derived from it:

>>> import problemgen
>>> problem = problemgen.generate("attention.scores", seed=7)
>>> problem.kind, problem.seed
('attention.scores', 7)
>>> "Q" in problemgen.render(problem, "prompt", "text")
True

Every answer part carries its key and its checking rules; a typed answer is graded against it, and a
known wrong value is named:

>>> part = problem.parts[0]
>>> problemgen.grade_part(part, part.value).status
'correct'
>>> result = problemgen.grade_part(part, part.mistakes[0].value)
>>> result.status, result.mistake
('wrong', 'transpose_scores')
>>> problemgen.grade_part(part, [["@@"] * len(row) for row in part.value]).status  # unreadable: not wrong
'invalid'

Bad input raises the one project exception:

>>> problemgen.generate("attention.score", seed=1)
Traceback (most recent call last):
...
problemgen.errors.ProblemgenError: unknown kind 'attention.score' — did you mean 'attention.scores'?

``grade_sheet(answers_path, variant_path)`` grades an answer sheet against the frozen ``variant.json``
a worksheet run wrote; ``grade_code(path, task)`` runs a submission in the sandbox:

>>> from importlib.resources import files
>>> solution = files("problemgen.code.tasks") / "solutions" / "softmax.py"
>>> problemgen.grade_code(solution, "softmax", secret="a doctest secret").score
1.0

Names are imported on first use (PEP 562), so ``import problemgen`` stays as cheap as the CLI start-up.
"""

__version__ = "0.1.0"

_API = {
    "generate": ("problemgen.model.registry", "generate"),
    "render": ("problemgen.documents.rendering", "render_block"),
    "grade_part": ("problemgen.sheets.grading", "grade_part"),
    "grade_sheet": ("problemgen.sheets.grading", "grade_file"),
    "grade_code": ("problemgen.classes.grade_code", "grade_file"),
    "check_in_notebook": ("problemgen.classes.notebook_check", "check_in_notebook"),
    "ProblemgenError": ("problemgen.errors", "ProblemgenError"),
}
"""Public name -> (module, attribute): the whole public API."""

__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name not in _API:
        raise AttributeError(f"module 'problemgen' has no attribute {name!r}")
    import importlib  # only on first use of an API name: `import problemgen` must stay cheap

    module, attribute = _API[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
