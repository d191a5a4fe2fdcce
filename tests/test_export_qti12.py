"""Canvas QTI 1.2 export: question groups of distinct variants, re-graded by an interpreter of the
emitted response processing and read back by a third-party QTI reader."""

import io
import re
import zipfile
import xml.etree.ElementTree as ET

import pytest

from problemgen.documents.banks import shipped_banks
from problemgen.exports.lms import build_export
from problemgen.exports.moodle import number
from problemgen.exports.qti12 import EXPORT, VARIANT_FIELD, render_qti12
from tests.lms_readers import read_qti12
from tests.lms_roundtrip import DUPLICATE_BANK, check_hostile_responses, check_variant, hostile_export

FAST_BANKS = ("question_banks/params_memory.toml", "question_banks/masking.toml",
              "question_banks/multihead_shapes.toml")
PART = re.compile(r" part (\d+) of (\d+): ")


def export_zip(tmp_path, bank, n=2, **options) -> bytes:
    out = tmp_path / "pool.zip"
    EXPORT.build(bank=str(bank), n=str(n), output=out, seed="0", **options)
    return out.read_bytes()


def round_trip(data: bytes) -> dict:
    """Group the items by variant (one per blank for multi-blank problems) and re-grade each variant."""
    variants: dict[str, list] = {}
    counts: dict[str, int] = {}
    for item in read_qti12(data):
        found = PART.findall(item.title)
        part, total = map(int, found[-1]) if found else (1, 1)
        variants.setdefault(item.metadata[VARIANT_FIELD], []).append((part, total, item))
        counts[item.kind] = counts.get(item.kind, 0) + 1
    for variant_id, items in variants.items():
        assert [p for p, _, _ in items] == list(range(1, items[0][1] + 1)), variant_id
        check_variant(variant_id, [item for _, _, item in items], essay=items[0][2].kind == "essay",
                      mistake_feedback=False)
    return counts


@pytest.mark.parametrize("bank", FAST_BANKS, ids=lambda p: p.split("/")[-1])
def test_a_bank_round_trips_key_outside_tolerance_mistakes_and_options(tmp_path, bank):
    assert sum(round_trip(export_zip(tmp_path, bank)).values()) > 0


@pytest.mark.slow
@pytest.mark.parametrize("bank", shipped_banks(), ids=lambda p: p.stem)
def test_every_shipped_bank_round_trips_and_is_valid(tmp_path, schema, bank):
    data = export_zip(tmp_path, bank, n=3, with_solutions=True)
    assert sum(round_trip(data).values()) > 0
    schema.validate(_assessment(data).decode())


def test_the_same_variant_in_two_bank_places_is_an_item_per_place_and_blank(tmp_path):
    bank = tmp_path / "dup.toml"
    bank.write_text(DUPLICATE_BANK, encoding="utf-8")
    data = export_zip(tmp_path, bank, n=3)
    ns = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
    root = ET.fromstring(zipfile.ZipFile(io.BytesIO(data)).read("dup/dup.xml"))
    idents = [i.get("ident") for i in root.iter(f"{ns}item")]
    blanks = len(build_export(str(bank), 3).pools[0].questions[0].blanks)
    assert len(idents) == len(set(idents)) == 3 * blanks
    groups = [s for s in root.iter(f"{ns}section") if s.find(f"{ns}selection_ordering") is not None]
    assert [(len(g.findall(f"{ns}item")), float(g.findtext(f".//{ns}points_per_item"))) for g in groups] == [
        (blanks, 1.0), (blanks, 4.0), (blanks, 4.0)]


def test_manifest_identifiers_are_xml_ids_when_the_bank_id_starts_with_a_digit(tmp_path):
    """A content package's identifiers are xsd:ID (an NCName: no digit first); bank ids may start with one."""
    bank = tmp_path / "2024_exam.toml"
    bank.write_text('title = "Exam"\n[[problems]]\nkind = "attention.scores"\n', encoding="utf-8")
    data = export_zip(tmp_path, bank, n=1)
    manifest = ET.fromstring(zipfile.ZipFile(io.BytesIO(data)).read("imsmanifest.xml"))
    identifiers = [e.get("identifier") for e in manifest.iter() if e.get("identifier")]
    assert len(identifiers) == 2 and all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", i) for i in identifiers), identifiers
    assert read_qti12(data)


def test_each_pool_is_a_group_drawing_one_item_worth_the_pool_points(tmp_path):
    data = export_zip(tmp_path, FAST_BANKS[0], n=3)
    export = build_export(FAST_BANKS[0], 3)
    root = ET.fromstring(zipfile.ZipFile(io.BytesIO(data)).read("params_memory/params_memory.xml"))
    ns = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
    groups = [s for s in root.iter(f"{ns}section") if s.find(f"{ns}selection_ordering") is not None]
    assert [g.get("title") for g in groups] == [p.title for p in export.pools]
    for group, pool in zip(groups, export.pools):
        assert group.findtext(f".//{ns}selection_number") == "1"
        assert float(group.findtext(f".//{ns}points_per_item")) == pool.points
        variants = {f.findtext(f"{ns}fieldentry") for f in group.iter(f"{ns}qtimetadatafield")
                    if f.findtext(f"{ns}fieldlabel") == VARIANT_FIELD}
        assert variants == {q.variant_id for q in pool.questions}


def _canvas_key(blank) -> set[str]:
    """What a Canvas item must accept, from the model: the key, every spelling, the right options."""
    if blank.kind == "numerical":
        return {number(blank.value)}
    return set(blank.spellings) if blank.kind == "short" else {o.id for o in blank.options if o.correct}


def test_canvas_imports_only_the_key_as_a_correct_answer(tmp_path):
    """Canvas makes every condition of a numerical or short-answer item that compares the response with a
    value a full-credit answer; a known mistake written that way would be marked right."""
    bank = "question_banks/mixed_exam.toml"
    export = build_export(bank, 1)
    blanks = [b for p in export.pools for q in p.questions for b in q.blanks]
    assert {b.kind for b in blanks if b.mistakes} == {"numerical", "short", "choice"}
    items = read_qti12(export_zip(tmp_path, bank, n=1))
    assert len(items) == len(blanks)
    for item, blank in zip(items, blanks):
        assert item.canvas_correct() == _canvas_key(blank), item.title
        for mistake in blank.mistakes if blank.kind == "numerical" else ():
            assert item.score(mistake.value) == 0, item.title


def test_the_command_and_the_preview_say_which_mistake_hints_canvas_cannot_keep(tmp_path):
    bank = "question_banks/mixed_exam.toml"
    export = build_export(bank, 1)
    left_out = sum(len(b.mistakes) for p in export.pools for q in p.questions for b in q.blanks
                   if b.kind != "choice")
    kept = sum(len(b.mistakes) for p in export.pools for q in p.questions for b in q.blanks if b.kind == "choice")
    said = EXPORT.build(bank=bank, n="1", output=tmp_path / "m.zip", seed="0", preview=tmp_path / "m.md")
    assert left_out and f"{left_out} known-mistake hints of numerical and short-answer items left out" in said
    assert (tmp_path / "m.md").read_text(encoding="utf-8").count("\n  - wrong: ") == kept  # the preview is the export


def test_solutions_are_general_feedback_only_when_asked(tmp_path):
    plain = read_qti12(export_zip(tmp_path, FAST_BANKS[0]))
    solved = read_qti12(export_zip(tmp_path, FAST_BANKS[0], with_solutions=True))
    assert not any("general_fb" in i.feedback for i in plain)
    assert all(i.feedback.get("general_fb") for i in solved)


@pytest.mark.parametrize("several", [False, True], ids=["one blank", "several blanks"])
def test_hostile_text_in_every_field_reads_back_intact(several):
    export = hostile_export(several_blanks=several)
    items = read_qti12(render_qti12(export))
    blanks = [b for q in export.pools[0].questions for b in q.blanks]
    check_hostile_responses(items, blanks, mistake_feedback=False)
    assert all(i.title.startswith(export.pools[0].questions[0].title) for i in items)


def test_render_is_deterministic():
    export = build_export(FAST_BANKS[1], 2)
    assert render_qti12(export) == render_qti12(build_export(FAST_BANKS[1], 2))


def test_a_multi_blank_problem_is_one_item_per_blank_and_the_command_says_so(tmp_path):
    out = tmp_path / "m.zip"
    said = EXPORT.build(bank=FAST_BANKS[1], n="1", output=out, seed="0")
    assert re.search(r"\d+ variants with several blanks became \d+ Canvas items, one per blank", said)
    assert any(PART.search(i.title) for i in read_qti12(out.read_bytes()))


@pytest.mark.parametrize("bank", FAST_BANKS, ids=lambda p: p.split("/")[-1])
def test_a_third_party_canvas_qti_reader_gets_every_question_and_exactly_the_key(tmp_path, bank):
    """qti2latex (PyPI) reads Canvas QTI 1.2: each item's type, prompt and options come out as we wrote
    them, and the correct answers it finds are exactly the key of a numerical or short-answer item. It
    collects every ``varequal`` of the processing, so for a choice it also finds the options whose
    feedback Canvas shows by a condition without a score (Canvas writes option feedback that way and
    weighs those options 0); nothing else."""
    qti2latex = pytest.importorskip("qti2latex")
    path = tmp_path / "pool.zip"
    path.write_bytes(export_zip(tmp_path, bank))
    unpacked = qti2latex.extract_zip_to_tmp(path)
    try:
        files = qti2latex.read_qti_dir(unpacked)
        theirs = [i for f in files for i in qti2latex.findall_anyns(ET.parse(f).getroot(), "item")]
    finally:
        import shutil
        shutil.rmtree(unpacked)
    ours = read_qti12(path.read_bytes())
    blanks = [b for p in build_export(bank, 2).pools for q in p.questions for b in q.blanks]
    assert len(theirs) == len(ours) == len(blanks) > 0
    for item, mine, blank in zip(theirs, ours, blanks):
        assert qti2latex.get_qti_metadata(item)["question_type"] == mine.metadata["question_type"]
        assert qti2latex.get_item_stem(item) == mine.text.strip()
        assert dict(qti2latex.get_choices(item)) == {k: v.strip() for k, v in mine.options.items()} or mine.kind != "choice"
        feedback_only = _feedback_only_options(mine) if mine.kind == "choice" else set()
        assert qti2latex.get_correct_idents(item) == _canvas_key(blank) | feedback_only, mine.title


def _feedback_only_options(item) -> set[str]:
    """The options a condition tests only to show their feedback (no score)."""
    return {e.text for c in item.conditions if not any(a.tag.endswith("setvar") for a in c)
            for e in c.iter() if e.tag.endswith("varequal")}


SCHEMA = __import__("pathlib").Path(__file__).parent / "fixtures" / "lms" / "qti12_subset.xsd"


@pytest.fixture(scope="module")
def schema():
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema (test extra) validates the XSD")
    return xmlschema.XMLSchema11(str(SCHEMA))


def _assessment(data: bytes) -> bytes:
    archive = zipfile.ZipFile(io.BytesIO(data))
    return archive.read(next(n for n in archive.namelist() if n != "imsmanifest.xml"))


@pytest.mark.parametrize("bank", FAST_BANKS, ids=lambda p: p.split("/")[-1])
def test_every_export_is_valid_against_our_schema_of_the_qti_subset(tmp_path, schema, bank):
    schema.validate(_assessment(export_zip(tmp_path, bank, with_solutions=True)).decode())


@pytest.mark.parametrize("edit", [
    ("<selection_number>1<", "<selection_number>2<"),
    ("<fieldentry>numerical_question<", "<fieldentry>numeric<"),
    ('varname="SCORE">100<', 'varname="SCORE">150<'),
    ('continue="No"', 'continue="Maybe"'),
    ('<vargte respident="response1">', '<vargte respident="response2">'),
], ids=["draws two", "unknown type", "score over 100", "bad continue", "unknown response"])
def test_the_schema_refuses_what_canvas_would_not_read(tmp_path, schema, edit):
    text = _assessment(export_zip(tmp_path, FAST_BANKS[0])).decode()
    assert edit[0] in text
    assert not schema.is_valid(text.replace(edit[0], edit[1], 1))
