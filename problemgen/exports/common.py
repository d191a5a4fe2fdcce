"""What the platform exports share: their common options and reading the class set or task to export.

A class set is read as ``problemgen worksheet --roster`` wrote it and as class grading reads it: the
students of its manifest, each with a frozen ``variant.json`` under ``keys/<id>/`` (or ``<id>/`` in
older class sets). The variants are copied into the export as they are; they hold the
keys, so an export of a class is as secret as the class's key directory.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from problemgen.code.sandbox.isolation import LEVELS
import problemgen.secret_env as secret_env
from problemgen.errors import ProblemgenError
from problemgen.exports import Option
from problemgen.exports.autograde import CONFIG, SCHEMA
from problemgen.exports.bundle import Bundle
from problemgen.exports.wheel import Wheel, build_wheel, read_wheel
from problemgen.outputlock import holding
from problemgen.userfiles import read_capped

SECRET_ENV = "PROBLEMGEN_GRADER_SECRET"

OUTPUT_FILE = Option("--output", "output", "The file to write.", kind="path", required=True, short="-o")
OUTPUT_DIR = Option("--output", "output", "The directory to write (created; must be empty unless --force).",
                    kind="path", required=True, short="-o")
FORCE = Option("--force", "force", "Write into a non-empty output directory: replace the export's files and remove "
               "those an earlier export left that this one does not write.", kind="flag", default=False)
TASK = Option("--task", "task", "A coding task (see `problemgen task list`).")
CLASS = Option("--class", "class_dir", "A class set from `problemgen worksheet --roster`.", kind="dir")
SECRET = Option("--secret-env", "secret_env", "Environment variable holding the hidden-test secret.",
                default=SECRET_ENV)
MIN_ISOLATION = Option("--min-isolation", "min_isolation", "Grade nothing below this sandbox level.",
                       kind="choice", choices=LEVELS, default="process")
TIMEOUT = Option("--timeout", "timeout", "Seconds per test of student code.", kind="float", default=5.0)
ID_COLUMN = Option("--id-column", "id_column", "The roster's student id column (default: id, student_id, student or SID).")
WHEEL = Option("--wheel", "wheel", "Ship this problemgen wheel instead of packing the running problemgen.",
               kind="file")


@dataclass(frozen=True)
class ClassSet:
    title: str
    students: tuple[str, ...]
    variant_files: dict[str, bytes]  # student id -> variant.json bytes
    variant_ids: dict[str, str]  # student id -> variant id


def read_class(class_dir: str | Path) -> ClassSet:
    """The class set, held for reading as class grading holds it (:mod:`problemgen.outputlock`): a
    ``worksheet --roster`` rewriting it meanwhile would give the export some students' old keys and
    others' new ones, and one that starts meanwhile stops instead."""
    # deferred: export discovery imports this module; class sets and tasks pull in numpy
    from problemgen.classes.sheet_class import roster, variant_path
    from problemgen.model.variantfile import MAX_VARIANT_BYTES, WorksheetVariant  # (same reason)

    class_dir = Path(class_dir)
    with holding(class_dir, writing=False):
        title, students = roster(class_dir)
        files, ids = {}, {}
        for student in students:
            path = variant_path(class_dir, student)
            ids[student] = WorksheetVariant.load(path).variant_id
            files[student] = read_capped(path, MAX_VARIANT_BYTES, "variant file")
    return ClassSet(title, tuple(students), files, ids)


def read_task(name: str | None):
    # deferred: export discovery imports this module; class sets and tasks pull in numpy
    from problemgen.code.tasks import get_task

    if not name:
        raise ProblemgenError("give --task NAME (see `problemgen task list`)")
    return get_task(name)


def read_secret(env_var: str) -> str:
    """The hidden-test secret from the named environment variable; exports are reproducible, so it is required."""
    return secret_env.read_secret(env_var, "hidden-test secret")


def one_of(task: str | None, class_dir: Path | None) -> str:
    """``task`` or ``class``: exactly one of --task and --class."""
    if (task is None) == (class_dir is None):
        raise ProblemgenError("give exactly one of --task NAME (code) or --class CLASS_DIR (answer sheets)")
    return "task" if task is not None else "class"


def the_wheel(path: Path | None, left_out: tuple[str, ...] = ()) -> Wheel:
    """The user's ``--wheel`` as it is, or a wheel of the running problemgen without ``left_out``."""
    return read_wheel(path) if path is not None else build_wheel(left_out)


def task_config(task, secret: str, min_isolation: str, timeout: float, **extra) -> dict:
    return {"schema": SCHEMA, "mode": "task", "task": task.name, "title": task.title, "secret": secret,
            "min_isolation": min_isolation, "timeout": float(timeout), **extra}


def class_config(klass: ClassSet, match_by: str, match: dict[str, str], **extra) -> dict:
    return {"schema": SCHEMA, "mode": "sheets", "title": klass.title, "match_by": match_by, "match": match,
            "variants": klass.variant_ids, **extra}


def add_grader_files(bundle: Bundle, prefix: str, config: dict, klass: ClassSet | None, wheel: Wheel | None) -> None:
    """The configuration, the frozen variants (class mode) and the wheel, under ``prefix``."""
    bundle.add_json(f"{prefix}{CONFIG}", config)
    for student, data in (klass.variant_files.items() if klass else ()):
        bundle.add(f"{prefix}keys/{student}/variant.json", data)
    if wheel is not None:
        bundle.add(f"{prefix}{wheel.filename}", wheel.data)
