"""variant.json: what grading reads. It must round-trip exactly, be deterministic, and refuse bad files clearly."""

from __future__ import annotations

import json

import pytest

from problemgen.model import registry
from problemgen.model.core import ProblemgenError
from problemgen.model.variantfile import SCHEMA, SheetProblem, WorksheetVariant


def sample() -> WorksheetVariant:
    problems = tuple(
        SheetProblem(f"p{i + 1}", 2.0, registry.generate(kind, 5, 1))
        for i, kind in enumerate(["attention.weights", "masks.causal", "shapes.trace"])
    )
    return WorksheetVariant("bank-s5", "A bank", "bank", 5, problems, student="s001")


def test_a_variant_survives_writing_and_loading_unchanged(tmp_path):
    path = tmp_path / "variant.json"
    path.write_text(sample().to_json(), encoding="utf-8")
    assert WorksheetVariant.load(path) == sample()


def test_the_same_variant_always_writes_the_same_bytes():
    assert sample().to_json() == sample().to_json()
    assert json.loads(sample().to_json())["schema"] == SCHEMA


def test_the_written_file_is_compact_json_with_every_object_in_key_order():
    data = sample().to_json_bytes()
    assert data.endswith(b"}\n") and b"\n" not in data[:-1] and b'": ' not in data
    key_orders = []
    parsed = json.loads(data, object_pairs_hook=lambda pairs: key_orders.append([k for k, _ in pairs]) or dict(pairs))
    assert parsed == json.loads(json.dumps(sample().to_dict()))
    assert len(key_orders) > 40 and all(keys == sorted(keys) for keys in key_orders)


def test_a_seed_beyond_64_bits_is_refused_in_one_line_not_written_wrong():
    variant = WorksheetVariant("bank-big", "A bank", "bank", 10**30, sample().problems)
    with pytest.raises(ProblemgenError, match="cannot write the variant file"):
        variant.to_json_bytes()


@pytest.mark.parametrize(
    "content,message",
    [
        ('{"schema": "something/else"}', "not a problemgen variant"),
        ("{not json", "not valid JSON"),
        (f'{{"schema": "{SCHEMA}", "problems": [{{"id": "p1", "points": NaN}}]}}', "not valid JSON"),
        (f'{{"schema": "{SCHEMA}", "problems": [{{"id": "p1"}}]}}', "malformed variant"),
    ],
)
def test_bad_variant_files_give_one_clear_error(tmp_path, content, message):
    path = tmp_path / "variant.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ProblemgenError, match=message):
        WorksheetVariant.load(path)


def test_bytes_that_are_not_utf8_are_refused_as_not_json(tmp_path):
    path = tmp_path / "variant.json"
    path.write_bytes(b'{"schema": "\xff"}')
    with pytest.raises(ProblemgenError, match="not valid JSON"):
        WorksheetVariant.load(path)


def test_a_file_written_by_the_standard_encoder_reads_back_the_same(tmp_path):
    """Class sets written before orjson spelled small floats ``1e-05``: they must grade the same."""
    variant = WorksheetVariant("bank-s5", "A bank", "bank", 5,
                               (SheetProblem("p1", 1.0, registry.generate("params.attention_layer", 5, 1)),))
    path = tmp_path / "variant.json"
    path.write_text(json.dumps(variant.to_dict(), sort_keys=True, separators=(",", ":")), encoding="utf-8")
    assert "e-05" in path.read_text(encoding="utf-8") and b"e-05" not in variant.to_json_bytes()
    assert WorksheetVariant.load(path) == variant


def test_a_missing_variant_file_names_the_path(tmp_path):
    with pytest.raises(ProblemgenError, match="cannot read"):
        WorksheetVariant.load(tmp_path / "absent.json")


def test_shipped_data_directories_are_found(tmp_path):
    from problemgen.resources import banks_dir, templates_dir

    assert (templates_dir() / "problems" / "attention.weights.j2").is_file()
    assert (banks_dir() / "curriculum.toml").is_file()
