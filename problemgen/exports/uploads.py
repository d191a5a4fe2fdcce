"""Which uploaded file a platform grades for a coding task: the uploads read as text, never run.

A platform hands over whatever the student uploaded (Gradescope: any files; GitHub Classroom: the whole
repository; PrairieLearn: one file), and the grader — outside the sandbox, often as root — must find the
file that defines the task's function before anything runs. So the reading is bounded: at most
:data:`MAX_PY_FILES` files; a ``.py`` file only up to the size the sandbox accepts (anything larger
could never be graded) and a notebook up to its reader's cap; :data:`MAX_SCANNED_BYTES` read in all; and
only files whose text can define one of the task's functions (``def name``) are parsed, at most the
sandbox's total of Python source in all. (``ast.parse`` takes a few hundred times a text's size in
memory: one 12 MB helper once cost 4.9 GB and 36 s before the sandbox even started.) A file that is
not looked into says why, and the reasons reach the student when no file can be graded.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from pathlib import Path

from problemgen.classes.entries import escaped, is_system_file
from problemgen.code.sandbox.staging import MAX_FILE_BYTES, MAX_TOTAL_BYTES, RejectedSubmission
from problemgen.errors import ProblemgenError
from problemgen.userfiles import coding_problem, read_capped, syntax_tree

MAX_PY_FILES = 50
MAX_SCANNED_BYTES = 16 * 2**20
"""All uploaded files read to find the graded one, together (notebooks with images are the large ones)."""


class NotGradable(ProblemgenError):
    """No uploaded file can be graded; the message says what was uploaded and what was looked for."""


@dataclass(frozen=True)
class Upload:
    """One uploaded ``.py`` or ``.ipynb`` file, as the grader sees it without running it."""

    path: Path
    defines: frozenset[str] | None
    """The task's functions it defines at top level; None when it was not read or does not parse."""
    starter: bool = False
    """A ``.py`` file that is still the task's starter as handed out (its functions only raise)."""
    problem: str = ""
    """Why ``defines`` is None: too large, not read, does not parse…"""


def file_name(path: Path) -> str:
    """A file's name as report text, as a class run shows an entry's: bytes that are not UTF-8 (a zip made
    on Windows) and control characters as ``\\xNN``."""
    return escaped(os.fsencode(path.name))


def hidden(path: Path, top: Path) -> bool:
    """Inside a dot-directory (``.git``, ``.problemgen``) or byte-code cache, or what an operating system adds
    to a folder it zips (``__MACOSX/``, ``._softmax.py``: :func:`problemgen.classes.entries.is_system_file`):
    never the student's work. Counted as uploads, such files made a lone file no longer alone."""
    parts = path.relative_to(top).parts
    return (any(part.startswith(".") or part == "__pycache__" for part in parts[:-1])
            or any(is_system_file(os.fsencode(part)) for part in parts))


def uploads(submission: Path, task) -> list[Upload]:
    """Every uploaded ``.py`` and ``.ipynb`` file (at most :data:`MAX_PY_FILES`) with the task's functions
    it defines, within the bounds the module describes."""
    files = sorted(p for p in submission.rglob("*") if p.suffix in (".py", ".ipynb")
                   and p.is_file() and not p.is_symlink() and not hidden(p, submission))[:MAX_PY_FILES]
    budget = {"read": MAX_SCANNED_BYTES, "parsed": MAX_TOTAL_BYTES}
    return [_upload(path, task, budget) for path in files]


def _upload(path: Path, task, budget: dict[str, int]) -> Upload:
    try:
        code = _code_of(path, budget)
    except (OSError, ValueError, ProblemgenError) as exc:
        return Upload(path, None, problem=str(exc))
    starter = path.suffix == ".py" and _is_starter(code, task.starter)
    if not _may_define(code, task.functions):
        return Upload(path, frozenset(), starter)
    if len(code) > budget["parsed"]:
        return Upload(path, None, problem=f"not parsed: the uploaded Python exceeds {MAX_TOTAL_BYTES} bytes in all")
    budget["parsed"] -= len(code)
    try:
        text = code if isinstance(code, str) else code.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return Upload(path, None, problem=f"not UTF-8 text (byte {exc.start})")
    problem = coding_problem(text)  # what it defines must be judged on the code Python would run
    if problem:
        return Upload(path, None, problem=problem)
    try:
        tree = syntax_tree(text)
    except (SyntaxError, ValueError) as exc:  # ValueError: a null byte
        where = f" on line {exc.lineno}" if getattr(exc, "lineno", None) else ""
        return Upload(path, None, problem=f"syntax error{where}")
    defines = frozenset(n.name for n in tree.body
                        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in task.functions)
    return Upload(path, defines, starter)


def _code_of(path: Path, budget: dict[str, int]) -> bytes | str:
    """The Python code of an uploaded file: a ``.py`` file's bytes, or a notebook's code cells; ValueError
    (the reason) beyond a cap. What is read counts against ``budget["read"]``."""
    from problemgen.code.notebook import MAX_NOTEBOOK_BYTES, read_notebook  # deferred: only notebooks need it

    notebook = path.suffix == ".ipynb"
    cap = MAX_NOTEBOOK_BYTES if notebook else MAX_FILE_BYTES
    size = min(path.stat().st_size, cap + 1)
    if size > budget["read"]:
        raise ValueError(f"not read: the uploaded files exceed {MAX_SCANNED_BYTES} bytes in all")
    budget["read"] -= size
    if notebook:
        try:
            return read_notebook(path).source
        except RejectedSubmission as exc:
            raise ValueError(str(exc).removeprefix(f"{path.name}: ")) from exc
    try:
        return read_capped(path, MAX_FILE_BYTES, "Python file")
    except ProblemgenError as exc:
        raise ValueError(str(exc).removeprefix(f"{path}: ")) from exc


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _may_define(code: bytes | str, functions: tuple[str, ...]) -> bool:
    """False only when ``code`` certainly defines none of ``functions``: ASCII text without ``def name``.

    Cheap, so only candidates are parsed. Non-ASCII text is always a candidate: Python reads identifiers
    in NFKC form, so ``def ｓｏｆｔｍａｘ`` defines ``softmax``.
    """
    data = code.encode("utf-8", "surrogatepass") if isinstance(code, str) else code
    if not data.isascii() or not all(_WORD.match(f) for f in functions):
        return True
    names = b"|".join(f.encode("ascii") for f in functions)
    return re.search(rb"\bdef[\s\\]+(?:" + names + rb")\b", data) is not None


def _is_starter(code: bytes | str, starter: str) -> bool:
    """Whether ``code`` is the starter as shipped (line endings aside: Git may check it out with CRLF)."""
    return isinstance(code, bytes) and code.replace(b"\r\n", b"\n") == starter.encode("utf-8").replace(b"\r\n", b"\n")


def graded_file(task, found: list[Upload]) -> Path:
    """The file to grade; NotGradable when there is none.

    The file defining the task's first function; the starter ``.py`` as shipped does not count beside
    another such file (GitHub Classroom's template holds it, and a student may solve the task in a
    notebook instead). Else a lone file that defines another of the task's functions (graded for those),
    or that could not be parsed (graded, so the student sees the reason). A lone file that defines none
    of them is not graded: a PrairieLearn submission always holds exactly one file, and grading it would
    only use up an attempt.
    """
    function = task.functions[0]
    defining = [u for u in found if u.defines and function in u.defines]
    if len(defining) > 1:
        defining = [u for u in defining if not u.starter] or defining
    if len(defining) == 1:
        return defining[0].path
    if not defining and len(found) == 1 and (found[0].defines is None or found[0].defines):
        return found[0].path
    uploaded = ", ".join(file_name(u.path) for u in found) or "no .py or .ipynb file"
    where = "none of them" if not defining else "several: " + ", ".join(file_name(u.path) for u in defining)
    unread = [f"{file_name(u.path)} ({u.problem})" for u in found if u.problem]
    looked = f"; not looked into: {', '.join(unread[:5])}" + (" …" if len(unread) > 5 else "") if unread else ""
    raise NotGradable(f"the task needs a function {function}() in one uploaded .py or .ipynb file; "
                      f"uploaded: {uploaded}; defining it: {where}{looked}")
