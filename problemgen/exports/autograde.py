"""Grading one submission on a platform: the part of an export that runs where the students submit.

Every export bakes a ``problemgen-export.json`` (see :data:`CONFIG`) next to its entry script. Two modes:

- ``sheets``: the frozen variants of a class (``keys/<student>/variant.json``, the keys never leave the
  export), a map from the platform's user field to roster ids, and the variant id of every student.
  The submitter's sheet is graded against the submitter's own variant; a submitter not on the roster,
  a missing or unreadable sheet, or a sheet of another variant gives score 0 and says why.
- ``task``: a coding task, the hidden-test secret and the minimum sandbox isolation. The uploaded
  ``.py`` or ``.ipynb`` file that defines the task's function is graded in the sandbox; a submission
  without one is not gradable and says why (:mod:`problemgen.exports.uploads`).

Whatever the student uploaded, these functions return a :class:`Report`, never raise: the platform
must always receive a result. Platform modules turn the report into their own files
(``python -m problemgen.exports.autograde PLATFORM --root ROOT`` runs one).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
from pathlib import Path

from problemgen import exports
from problemgen.errors import ProblemgenError
from problemgen.exports.uploads import NotGradable, file_name, graded_file, hidden, uploads
from problemgen.safewrite import write_file
from problemgen.sheets.reports import Report

CONFIG = "problemgen-export.json"
SCHEMA = "problemgen.export/1"
SHEET_NAME = "answers.toml"


def failure(title: str, message: str, **meta) -> Report:
    """A score-0 report that explains itself (no checks ran)."""
    return Report(title=title, results=(), meta={"error": message, **meta})


def grader_failed() -> Report:
    """The report for a failure of the grader itself (call it in an ``except``): the platform still gets a
    result, the student is told it is not their fault, and the traceback goes to the log for the instructor."""
    import traceback

    kind, exc, _ = sys.exc_info()
    traceback.print_exc(file=sys.stdout)
    what = f"{kind.__name__}: {exc}" if kind else "unknown error"
    return failure("problemgen", f"the autograder failed ({what[:300]}); nothing was graded, tell your instructor")


def write_result(path: Path, text: str) -> None:
    """Write a platform's result file whole or not at all (a partial file would read as a broken result)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_file(path, text, durable=True)


def load_config(source: Path) -> dict:
    path = source / CONFIG
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ProblemgenError(f"{path}: the export's configuration is missing or unreadable ({exc})") from exc
    if not isinstance(config, dict) or config.get("schema") != SCHEMA:
        raise ProblemgenError(f"{path}: not a problemgen export configuration ({SCHEMA})")
    return config


# ------------------------------------------------------------------------------------------ answer sheets


def identify(config: dict, identities: list[str]) -> list[str]:
    """Roster ids of the given platform identities (e-mails, ids, logins), in order, without repeats."""
    # deferred: export discovery imports this module; grading pulls in numpy
    from problemgen.exports.roster import normalise

    found: list[str] = []
    for value in identities:
        student = config["match"].get(normalise(value))
        if student and student not in found:
            found.append(student)
    return found


def find_sheet(submission: Path) -> Path | None:
    """``answers.toml`` at the top of the submission, else the only ``.toml`` file uploaded."""
    direct = submission / SHEET_NAME
    if direct.is_file():
        return direct
    tomls = sorted(p for p in submission.rglob("*.toml") if p.is_file() and not p.is_symlink() and not hidden(p, submission))
    return tomls[0] if len(tomls) == 1 else None


def grade_sheet_submission(source: Path, submission: Path, identities: list[str], who: str = "") -> Report:
    """Grade the submitted answer sheet against the submitter's own frozen variant in ``source/keys``; never raises."""
    try:
        config = load_config(source)
        return grade_sheet(config, lambda student: (source / "keys" / student / "variant.json").read_text("utf-8"),
                           submission, identities, who)
    except Exception as exc:  # noqa: BLE001 - the platform must always receive a result
        return failure("problemgen", f"the autograder could not grade this submission: {exc}")


def grade_sheet(config: dict, variant_text, submission: Path, identities: list[str], who: str) -> Report:
    """Grade against the variant that ``variant_text(student)`` returns (a file, or decrypted keys)."""
    # deferred: export discovery imports this module; grading pulls in numpy
    from problemgen.model.variantfile import WorksheetVariant
    from problemgen.sheets.answersheet import read_sheet  # (same reason)
    from problemgen.sheets.grading import grade_answers  # (same reason)

    title = config.get("title", "problemgen")
    students = identify(config, identities)
    if not students:
        return failure(title, f"{who or 'this submitter'} is not on the class roster (matched by "
                              f"{config['match_by']}); ask your instructor to check the roster")
    sheet = find_sheet(submission)
    if sheet is None:
        return failure(title, f"no {SHEET_NAME} in the submission: upload the answers.toml of your worksheet")
    answers = read_sheet(sheet)
    sheet_variant = str(answers.meta.get("variant") or "") if answers.error is None else ""
    variants = config["variants"]  # student id -> variant id
    if sheet_variant and sheet_variant not in {variants[s] for s in students}:
        return failure(title, f"this sheet is for worksheet variant {sheet_variant[:80]!r}, not yours "
                              f"({variants[students[0]]}): fill in and upload your own answers.toml")
    student = next((s for s in students if variants[s] == sheet_variant), students[0])
    variant = WorksheetVariant.from_dict(json.loads(variant_text(student)))
    return grade_answers(variant, answers, student=student, source=sheet.name)


# ------------------------------------------------------------------------------------------ code


def grade_code_submission(source: Path, submission: Path, who: str = "", secret: str | None = None) -> Report:
    """Grade the uploaded file that defines the task's function, in the sandbox; never raises.

    Below the configured isolation nothing runs and the report says so (score 0): an instructor
    who asked for ``seccomp`` must not get grades from a weaker sandbox.
    """
    try:
        config = load_config(source)
        if secret is not None:
            config = {**config, "secret": secret}
        if not config.get("secret"):
            return failure(config.get("task", "problemgen"), "the hidden-test secret is not available to the grader "
                           "(tell your instructor); nothing was run")
        return _grade_code(config, submission, who)
    except Exception as exc:  # noqa: BLE001 - the platform must always receive a result
        return failure("problemgen", f"the autograder could not grade this submission: {exc}")


def _grade_code(config: dict, submission: Path, who: str) -> Report:
    # deferred: export discovery imports this module; grading pulls in numpy
    from problemgen.code.grade import grade_submission, make_plan
    from problemgen.code.sandbox import IsolationError, Limits, Sandbox, rank  # (same reason)
    from problemgen.code.tasks import get_task  # (same reason)

    task = get_task(config["task"])
    try:
        graded = graded_file(task, uploads(submission, task))
    except NotGradable as exc:
        return failure(task.name, str(exc), task=task.name)
    plan = make_plan(task, secret=config["secret"])
    limits = Limits(case_timeout=float(config.get("timeout", 5.0)))
    minimum = config.get("min_isolation", "process")
    try:
        with Sandbox(limits, jobs=1, min_level=minimum) as sandbox:
            level = sandbox.probe().isolation
            if rank(level) < rank(minimum):
                raise IsolationError(f"sandbox isolation is {level!r}, below the required {minimum!r}")
            student = who or file_name(graded).rpartition(".")[0]
            report = grade_submission(plan, graded, sandbox, student=student)
    except IsolationError as exc:
        return failure(task.name, f"not graded: {exc}; nothing was run (tell your instructor)", task=task.name)
    return hide_secret_checks(report)


def hide_secret_checks(report: Report) -> Report:
    """Only the public examples are visible checks; hidden cases and properties come from the secret."""
    from dataclasses import replace

    results = tuple(replace(r, visible=r.group == "public") for r in report.results)
    return replace(report, results=results)


# ------------------------------------------------------------------------------------------ entry point


def platforms() -> dict:
    """Platform name -> module, for every export module that grades on its platform (defines ``run``)."""
    found = {}
    for name in sorted(m.name for m in pkgutil.iter_modules(exports.__path__)):
        module = importlib.import_module(f"problemgen.exports.{name}")
        if callable(getattr(module, "run", None)):
            found[name] = module
    return found


def main(argv: list[str] | None = None) -> int:
    """``python -m problemgen.exports.autograde PLATFORM --root ROOT``: grade one submission, write results."""
    import argparse

    runnable = platforms()
    parser = argparse.ArgumentParser(prog="python -m problemgen.exports.autograde")
    parser.add_argument("platform", choices=sorted(runnable))
    parser.add_argument("--root", type=Path, required=True, help="the platform's working root")
    args = parser.parse_args(argv)
    return runnable[args.platform].run(args.root)


if __name__ == "__main__":
    sys.exit(main())
