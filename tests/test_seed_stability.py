"""A seed means the same problem on every supported numpy and SymPy (see tests/golden_variants.py).

The quiz and the practice page rebuild an open problem from its stored (kind, seed, difficulty);
instructors rebuild class sets and ``--seed`` worksheets, maybe after an upgrade; starter notebooks print
the public cases of coding tasks. These tests pin what today's code draws, so a numpy whose ``Generator``
draws differently, a SymPy that prints exact forms differently, or an unintended change of a generator
fails here rather than silently turning stored seeds into other problems.
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import golden_variants as golden  # noqa: E402

from problemgen.code.tasks import all_tasks  # noqa: E402
from problemgen.model import registry  # noqa: E402
from problemgen.model.registry import all_kinds  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REWRITE = ("if the change is deliberate, rewrite them with `python tests/golden_variants.py --write` and say in the "
           "commit which kinds changed: stored quiz items and class sets of those kinds no longer rebuild the same problems")


@functools.cache
def goldens() -> dict:
    return golden.load()


def kind_differences(kind: str) -> list[str]:
    expected = goldens()["variants"]
    keys = [key for key in expected if key.split("/", 1)[0] == kind]
    assert keys, f"{kind} has no golden variants: {REWRITE}"
    found = []
    for key in keys:
        _, difficulty, seed = key.split("/")
        found += golden.differences(expected[key], golden.variant_record(kind, int(seed[1:]), int(difficulty[1:])), key)
    return found


@pytest.mark.parametrize("kind", [spec.name for spec in all_kinds()])
def test_every_kind_still_draws_its_golden_variants(kind):
    found = kind_differences(kind)
    assert not found, f"{kind} draws other variants than its goldens ({REWRITE}):\n" + "\n".join(found[:20])


def test_every_golden_variant_belongs_to_a_kind_and_difficulty_that_exists():
    expected = {f"{spec.name}/d{d}/s{seed}" for spec in all_kinds() for d in spec.difficulties for seed in golden.SEEDS}
    assert set(goldens()["variants"]) == expected, REWRITE


def test_every_coding_task_still_draws_its_golden_cases():
    tasks = all_tasks()
    assert set(goldens()["tasks"]) == set(tasks), REWRITE
    found = [d for name, task in sorted(tasks.items())
             for d in golden.differences(goldens()["tasks"][name], golden.task_record(task), name)]
    assert not found, f"coding-task cases changed ({REWRITE}):\n" + "\n".join(found[:20])


def _other_default_rng(seed=None):
    """What ``default_rng`` would build if numpy switched its default bit generator (its policy allows it)."""
    return np.random.Generator(np.random.PCG64DXSM(seed))


def test_a_new_default_bit_generator_in_numpy_changes_no_variant_and_no_coding_task_case(monkeypatch):
    monkeypatch.setattr(np.random, "default_rng", _other_default_rng)
    for kind in ("attention.weights", "concepts.choice", "positional.sinusoidal", "shapes.trace"):
        assert not kind_differences(kind), kind
    for name in ("softmax", "multi_head_attention", "transformer_block"):
        assert not golden.differences(goldens()["tasks"][name], golden.task_record(all_tasks()[name]), name), name


def test_the_golden_check_notices_a_changed_stream(monkeypatch):
    """Not vacuous: with another stream behind every draw, every kind is caught."""
    def other_stream(kind: str, seed: int, attempt: int) -> np.random.Generator:
        return np.random.Generator(np.random.PCG64DXSM([zlib.crc32(kind.encode()), seed, attempt]))

    monkeypatch.setattr(registry, "rng_for", other_stream)
    missed = [spec.name for spec in all_kinds() if not kind_differences(spec.name)]
    assert missed == []


def test_floats_may_differ_in_the_last_places_but_nothing_else_may():
    assert golden.differences([0.1 + 0.2, 1e-17], [0.30000000000000004 + 2e-16, -1e-17]) == []  # ulps of numpy's exp
    assert golden.differences([0.5], [0.5000001]) == ["[0]: 0.5 became 0.5000001"]
    assert golden.differences({"n": 3}, {"n": 3.0}) == ["/n: 3 became 3.0"]
    assert golden.differences({"exact": "1/(2*sqrt(2))"}, {"exact": "sqrt(2)/4"}) \
        == ["/exact: '1/(2*sqrt(2))' became 'sqrt(2)/4'"]
    assert golden.differences([[1, 2]], [[2, 1]]) == ["[0][0]: 1 became 2", "[0][1]: 2 became 1"]


def _lowest_supported() -> list[str]:
    """``numpy==X`` and ``sympy==Y`` for the lower bounds pyproject.toml declares."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return [name + "==" + re.search('"' + name + '>=([0-9.]+)"', text).group(1) for name in ("numpy", "sympy")]


@pytest.mark.slow
def test_the_lowest_supported_numpy_and_sympy_draw_the_golden_variants(tmp_path):
    """Builds a virtual environment with the lowest numpy and SymPy pyproject.toml allows (from the package
    registry; skipped with pip's reason when it cannot be reached) and runs the golden check there."""
    venv = tmp_path / "floor"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                              *_lowest_supported(), "click", "jinja2", "nbformat", "orjson"],
                             capture_output=True, text=True, timeout=900)
    if install.returncode != 0:
        pytest.skip(f"could not install {_lowest_supported()}: {install.stderr.strip().splitlines()[-1:]}")
    check = subprocess.run([str(python), str(ROOT / "tests" / "golden_variants.py")],
                           capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert " 0 difference(s)" in check.stdout and _lowest_supported()[0].split("==")[1] in check.stdout
