"""Moodle XML export: well-formed pools, and a small interpreter of the emitted rules re-grades each question."""

import re
import xml.etree.ElementTree as ET

import pytest

from problemgen.documents.banks import shipped_banks
from problemgen.exports.moodle import build_moodle, pools, tolerance
from problemgen.model.core import numbers_close

BLANK = re.compile(r"\{1:NUMERICAL:=([^:}]+):([^}]+)\}")


def numerical_score(question, value: float) -> float:
    """Moodle's rule: the first answer whose value ± tolerance holds ``value`` gives its fraction."""
    for answer in question.findall("answer"):
        key, tol = float(answer.findtext("text")), float(answer.findtext("tolerance"))
        if abs(value - key) <= tol:
            return float(answer.get("fraction"))
    return 0.0


def blank_score(blank: tuple[str, str], value: float) -> float:
    return 100.0 if abs(value - float(blank[0])) <= float(blank[1]) else 0.0


def just_outside(key: float, tol: float) -> float:
    """A value just beyond the tolerance (one part in 10^9 of the key beyond, for exact answers)."""
    return key + 1.01 * tol + max(1e-9, abs(key) * 1e-9)


def _export(tmp_path, bank, n=2):
    out = tmp_path / "pool.xml"
    build_moodle(str(bank), n, str(out), 0)
    return ET.parse(out).getroot()


def test_each_bank_item_becomes_a_category_of_distinct_variants(tmp_path):
    root = _export(tmp_path, "question_banks/attention_basics.toml", n=3)
    _, found = pools("question_banks/attention_basics.toml", 3, 0)
    assert sum(q.get("type") == "category" for q in root) == len(found)
    ids = [q.findtext("idnumber") for q in root if q.get("type") != "category"]
    assert len(ids) == len(set(ids)) and all(re.fullmatch(r"[\w.]+/d\d+/s\d+.*", i) for i in ids)


@pytest.mark.slow
@pytest.mark.parametrize("bank", shipped_banks(), ids=lambda p: p.stem)
def test_every_shipped_bank_round_trips_key_outside_tolerance_and_mistakes(tmp_path, bank):
    root = _export(tmp_path, bank)
    _, found = pools(str(bank), 2, 0)
    problems = {p.variant_id: p for pool in found.values() for p in pool.values()}
    checked = 0
    for q in (q for q in root if q.get("type") != "category"):
        problem = problems[q.findtext("idnumber")]
        if q.get("type") == "numerical":
            part = problem.parts[0]
            assert numerical_score(q, float(part.value)) == 100
            outside = just_outside(float(part.value), tolerance(part, part.value))
            assert numerical_score(q, outside) == 0
            for m in part.mistakes:
                if isinstance(m.value, (int, float)):
                    assert numerical_score(q, float(m.value)) == 0, m.name
            checked += 1
        elif q.get("type") == "cloze":
            blanks = BLANK.findall(q.find("questiontext").findtext("text"))
            keys = [v for p in problem.parts if p.type in ("number", "integer", "matrix")
                    for v in _flat(p.value)]
            assert len(blanks) == len(keys)
            for blank, key in zip(blanks, keys):
                assert blank_score(blank, key) == 100
                assert blank_score(blank, just_outside(key, float(blank[1]))) == 0
            checked += 1
    assert checked


def _flat(value):
    return [y for x in value for y in _flat(x)] if isinstance(value, list) else [float(value)]
