"""Golden variants: what a (kind, seed, difficulty) draws today, pinned so that a change cannot pass unseen.

A seed must mean the same problem on every supported numpy and SymPy: the quiz and the practice page
rebuild an open problem from its stored (kind, seed, difficulty), and instructors rebuild a class set or a
``--seed`` worksheet, possibly after upgrading packages. numpy does not promise that a ``Generator``
method keeps its stream across versions (NEP 19), and SymPy's printers may change their output; either
would silently turn a stored seed into another problem. ``tests/fixtures/golden_variants.json`` holds,
for two seeds of every kind at every difficulty, the problem's parameters, each part's key (value and
exact form) and the worked solution's data, as today's code draws them; and for every coding task, the
inputs of its public cases (drawn from a fixed seed, shown to students and in starter notebooks) and of
the hidden cases and property checks one grader secret draws.

Floats are compared to a relative 1e-9: numpy's vectorised ``exp``, ``log`` and ``power`` differ by a few
units in the last place between numpy builds and between CPUs (AVX-512 or AVX2) on the same build, and
the keys inherit that (measured: at most 3.6e-15 absolute in 45,900 variants); grading tolerances are
10^-4 and coarser, so no grade depends on it. Everything else (integers, strings such as SymPy's exact
forms and LaTeX, choices, orders, shapes) is compared exactly.

Run as a script to check the running interpreter against the goldens (what the slow cross-version test
does in a virtual environment with the lowest supported numpy and SymPy), or with ``--write`` to
rewrite them after a deliberate change of what some kind draws (say in the commit which kinds changed:
stored quiz items and class sets of those kinds no longer rebuild the same problems):

    python tests/golden_variants.py            # exit 1 and a list of differences on a mismatch
    python tests/golden_variants.py --write
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

GOLDEN = Path(__file__).parent / "fixtures" / "golden_variants.json"
SEEDS = (1, 2_718_281_828)
"""A small seed (``--seed``, tests) and a 32-bit one (banks and class sets draw 32-bit problem seeds)."""
TASK_SECRET = "golden variants"
"""The grader secret the pinned hidden cases and property calls of coding tasks are drawn from."""
REL_TOL, ABS_TOL = 1e-9, 1e-12


def variant_record(kind: str, seed: int, difficulty: int) -> dict:
    """What the seed draws: parameters, each part's key and exact form, and the solution's data."""
    from problemgen.model.registry import generate

    problem = generate(kind, seed, difficulty)
    answers = [[part.key, part.type, part.value, part.exact] for part in problem.parts]
    return {"params": problem.params, "answers": answers, "solution": problem.solution}


def task_record(task) -> dict:
    """A coding task's public cases and public property calls, and the hidden cases and property calls one
    grader secret draws: each call's function and arguments, an array summed up by its shape, first values and sum."""
    from problemgen.code.grade import make_plan

    plan, public = make_plan(task, secret=TASK_SECRET), make_plan(task, public_only=True)
    return {"cases": [[case.name, *_call(case.call)] for case in plan.cases],
            "properties": _property_calls(plan), "public_properties": _property_calls(public)}


def _property_calls(plan) -> list:
    return [[prop.name, [_call(call) for call in prop.calls]] for prop in plan.properties]


def _call(call) -> list:
    return [call.function, _summary(list(call.args)), _summary(call.kwargs)]


def _summary(value):
    """JSON-able call arguments; an array becomes {"shape", "first" (three values), "sum"}."""
    import numpy as np

    if isinstance(value, np.ndarray):
        flat = value.ravel().tolist() if value.dtype == bool else value.astype(float).ravel().tolist()
        return {"shape": list(value.shape), "first": flat[:3], "sum": math.fsum(float(x) for x in flat)}
    if isinstance(value, (list, tuple)):
        return [_summary(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _summary(v) for k, v in value.items()}
    return value.item() if isinstance(value, np.generic) else value


def current() -> dict:
    """Today's records: ``variants`` keyed ``kind/dN/sSEED``, ``tasks`` keyed by task name."""
    from problemgen.code.tasks import all_tasks
    from problemgen.model.registry import all_kinds

    variants = {f"{spec.name}/d{d}/s{seed}": variant_record(spec.name, seed, d)
                for spec in all_kinds() for d in spec.difficulties for seed in SEEDS}
    tasks = {name: task_record(task) for name, task in sorted(all_tasks().items())}
    return {"variants": variants, "tasks": tasks}


def differences(expected, actual, path: str = "") -> list[str]:
    """Where ``actual`` departs from ``expected``: floats beyond the tolerance, anything else at all."""
    if isinstance(expected, float) and isinstance(actual, float):
        close = math.isclose(expected, actual, rel_tol=REL_TOL, abs_tol=ABS_TOL)
        return [] if close else [f"{path}: {expected!r} became {actual!r}"]
    if isinstance(expected, dict) and isinstance(actual, dict):
        if expected.keys() != actual.keys():
            return [f"{path}: keys {sorted(expected)} became {sorted(actual)}"]
        return [d for k in expected for d in differences(expected[k], actual[k], f"{path}/{k}")]
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{path}: {len(expected)} items became {len(actual)}"]
        return [d for i, (e, a) in enumerate(zip(expected, actual)) for d in differences(e, a, f"{path}[{i}]")]
    same = expected == actual and type(expected) is type(actual)
    return [] if same else [f"{path}: {expected!r} became {actual!r}"]


def _layout(records: dict) -> str:
    """JSON with one line per variant and per task, so a diff of the file names what changed."""
    sections = []
    for name in sorted(records):
        lines = [f"  {json.dumps(key)}: {json.dumps(value, sort_keys=True)}"
                 for key, value in sorted(records[name].items())]
        sections.append(f"{json.dumps(name)}: {{\n" + ",\n".join(lines) + "\n}")
    return "{\n" + ",\n".join(sections) + "\n}\n"


def load() -> dict:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        GOLDEN.write_text(_layout(current()), encoding="utf-8")
        print(f"wrote {GOLDEN}")
        return 0
    found = differences(load(), current())
    import numpy
    import sympy

    print(f"numpy {numpy.__version__}, SymPy {sympy.__version__}: {len(found)} difference(s) from {GOLDEN.name}")
    for line in found[:50]:
        print(" ", line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.exit(main(sys.argv[1:]))
