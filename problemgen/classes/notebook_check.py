"""The check cell of a starter notebook: grade the code the student ran on the public examples.

The check runs in the student's own kernel, but the student's function is *not* called there: the code
of the kernel is written to a private directory as one module and graded by the same confined runner
``grade-code --public-only`` uses, so the feedback is the same (named misconceptions, shapes, the first
wrong entry) and the public examples are the only inputs. Hidden values never exist in the kernel.

Which code? The notebook file is not reachable from a kernel (Colab has none on disk), and replaying
the input history would replay cells that failed. The module is rebuilt from the kernel's namespace
instead: the source of every function and class defined in a cell (IPython keeps it for ``inspect``),
an ``import`` line for every module and every function imported from one, and plain constants. That
is the state the student's function sees when it runs in the kernel.
"""

from __future__ import annotations

import inspect
import math
import sys
import tempfile
import textwrap
import types
from pathlib import Path

from problemgen.errors import ProblemgenError
from problemgen.classes.grade_code import grade_file
from problemgen.sheets.reports import render

_CONSTANT_TYPES = (int, float, complex, str, bool, bytes, type(None))


def check_in_notebook(task: str, namespace: dict | None = None) -> None:
    """Print the public-check feedback for ``task`` on the functions defined in the calling kernel.

    ``namespace`` defaults to the ``__main__`` module's globals (the kernel's user namespace).
    """
    namespace = vars(sys.modules["__main__"]) if namespace is None else namespace
    try:
        source = module_from_namespace(namespace)
    except ProblemgenError as exc:
        print(f"problemgen: {exc}")
        return
    with tempfile.TemporaryDirectory(prefix="problemgen-check-") as tmp:
        path = Path(tmp) / f"{task}.py"
        path.write_text(source, encoding="utf-8")
        try:
            report = grade_file(path, task, public_only=True)
        except ProblemgenError as exc:
            print(f"problemgen: the confined runner is not available here, so nothing was run ({exc})")
            return
    print(render(report, "text"), end="")
    print(f"(public examples only; run in problemgen's sandbox at isolation level {report.meta.get('isolation', '?')!r})")


def module_from_namespace(namespace: dict) -> str:
    """Python source that rebuilds the cell-defined functions, classes, imports and constants."""
    imports, definitions, constants = [], [], []
    for name, value in namespace.items():
        if name.startswith("_") or name in ("In", "Out", "exit", "quit", "get_ipython"):
            continue
        if _ours(value):
            continue  # the check cell's own import: never part of the student's module
        if isinstance(value, types.ModuleType):
            imports.append(_import_line(value.__name__, name))
        elif _defined_in_a_cell(value):
            definitions.append(_source_of(name, value))
        elif callable(value) and _importable_from(value, name):
            imports.append(_importable_from(value, name))
        elif isinstance(value, _CONSTANT_TYPES) and _round_trips(value):
            constants.append(f"{name} = {value!r}")
    if not definitions:
        raise ProblemgenError("no function defined in this notebook yet: run the starter cell first")
    return "\n".join(sorted(set(imports)) + [""] + constants + [""] + definitions) + "\n"


def _ours(value: object) -> bool:
    module = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
    return isinstance(module, str) and (module == "problemgen" or module.startswith("problemgen."))


def _import_line(module: str, alias: str) -> str:
    return f"import {module}" if module == alias else f"import {module} as {alias}"


def _defined_in_a_cell(value: object) -> bool:
    """Functions and classes whose code lives in the kernel (``__main__``), not in an installed module."""
    return isinstance(value, (types.FunctionType, type)) and getattr(value, "__module__", None) == "__main__"


def _source_of(name: str, value: object) -> str:
    try:
        return textwrap.dedent(inspect.getsource(value)).rstrip() + "\n"
    except (OSError, TypeError) as exc:
        raise ProblemgenError(f"the source of {name!r} cannot be found (defined with exec or lambda?): {exc}") from exc


def _importable_from(value: object, name: str) -> str:
    """``from numpy import exp as name`` when the object is that module's attribute, else ''."""
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if not module or not qualname or module == "__main__" or "." in qualname:
        return ""
    if getattr(sys.modules.get(module), qualname, None) is not value:
        return ""
    return f"from {module} import {qualname}" + ("" if qualname == name else f" as {name}")


def _round_trips(value: object) -> bool:
    """Plain constants whose repr is Python source for the same value (not nan/inf, not huge)."""
    if isinstance(value, float) and not math.isfinite(value):
        return False
    if isinstance(value, complex) and not (math.isfinite(value.real) and math.isfinite(value.imag)):
        return False
    return len(repr(value)) < 10_000
