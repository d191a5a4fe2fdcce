"""IMS QTI 2.1 export: items re-graded by an interpreter of the emitted response processing, sections
that draw one variant, and a package whose manifest, test and items agree."""

import io
import xml.etree.ElementTree as ET
import zipfile

import pytest

from problemgen.documents.banks import shipped_banks
from problemgen.exports.lms import Blank, LmsExport, Option, Pool, Question, WrongAnswer, build_export
from problemgen.exports.qti21 import EXPORT, render_qti21
from tests.lms_readers import QTI21, Qti21Item, read_qti21
from tests.lms_roundtrip import DUPLICATE_BANK, check_variant

FAST_BANKS = ("question_banks/params_memory.toml", "question_banks/masking.toml",
              "question_banks/multihead_shapes.toml")


def export_zip(tmp_path, bank, n=2, **options) -> bytes:
    out = tmp_path / "pool.zip"
    EXPORT.build(bank=str(bank), n=str(n), output=out, seed="0", **options)
    return out.read_bytes()


def round_trip(data: bytes) -> int:
    """Re-grade every item's blanks against the rebuilt variant; the blanks' shares add up to the points."""
    _, items = read_qti21(data)
    for item in items:
        variant_id = item.title.rsplit("[", 1)[1].rstrip("]")
        responses = item.responses()
        check_variant(variant_id, responses, essay=item.essay)
        if responses:
            assert sum(r.share for r in responses) == pytest.approx(item.maxscore)
    return len(items)


@pytest.mark.parametrize("bank", FAST_BANKS, ids=lambda p: p.split("/")[-1])
def test_a_bank_round_trips_key_outside_tolerance_mistakes_and_options(tmp_path, bank):
    assert round_trip(export_zip(tmp_path, bank)) > 0


@pytest.mark.slow
@pytest.mark.parametrize("bank", shipped_banks(), ids=lambda p: p.stem)
def test_every_shipped_bank_round_trips_and_is_valid(tmp_path, schema, bank):
    data = export_zip(tmp_path, bank, n=3, with_solutions=True)
    assert round_trip(data) > 0
    assert all(schema.is_valid(text) for text in _documents(data).values())
    assert all(abs(v) <= 2**31 - 1 for v in _integers(data))


def _integers(data: bytes) -> list[int]:
    """Every QTI ``integer`` the package's items declare a key or a mistake with."""
    return [int(v.text) for text in _documents(data).values() for v in ET.fromstring(text).iter(f"{QTI21}baseValue")
            if v.get("baseType") == "integer"]


@pytest.mark.parametrize("bank, n", [("question_banks/multihead_shapes.toml", 20), ("flops", 1)],
                         ids=["multihead_shapes n=20", "complexity.flops d2 s3"])
def test_integer_answers_beyond_32_bits_are_exact_floats(tmp_path, bank, n):
    """QTI's integer is 32-bit (TAO's qtism and QTIWorks refuse 3221225472): a larger key or mistake
    makes the blank a float compared with a zero tolerance, and it still scores as problemgen does."""
    if bank == "flops":
        bank = tmp_path / "flops.toml"
        bank.write_text('title = "FLOPs"\n[[problems]]\nkind = "complexity.flops"\ndifficulty = 2\nseeds = [3]\n')
    export = build_export(str(bank), n)
    big = [b for p in export.pools for q in p.questions for b in q.blanks
           if b.integer and any(abs(v) > 2**31 - 1 for v in (b.value, *(m.value for m in b.mistakes)))]
    assert big  # the bank does reach beyond 32 bits
    data = export_zip(tmp_path, bank, n=n)
    assert all(abs(v) <= 2**31 - 1 for v in _integers(data))
    assert round_trip(data) > 0
    if n > 1:
        assert _integers(data)  # integers that fit stay integers


def test_the_same_variant_in_two_bank_places_is_an_item_per_place_with_its_points(tmp_path):
    bank = tmp_path / "dup.toml"
    bank.write_text(DUPLICATE_BANK, encoding="utf-8")
    data = export_zip(tmp_path, bank, n=3)
    test, items = read_qti21(data)
    refs = [r.get("identifier") for r in test.iter(f"{QTI21}assessmentItemRef")]
    manifest = ET.fromstring(zipfile.ZipFile(io.BytesIO(data)).read("imsmanifest.xml"))
    resources = [r.get("identifier") for r in manifest.iter("{http://www.imsglobal.org/xsd/imscp_v1p1}resource")]
    assert len(items) == len(refs) == len(set(refs)) == 3 and len(resources) == len(set(resources)) == 4
    archive = zipfile.ZipFile(io.BytesIO(data))
    pools = build_export(str(bank), 3).pools
    assert [p.points for p in pools] == [1.0, 4.0, 4.0]
    for section, pool in zip(test.iter(f"{QTI21}assessmentSection"), pools):
        (ref,) = section.findall(f"{QTI21}assessmentItemRef")
        assert Qti21Item(ET.fromstring(archive.read(ref.get("href")))).maxscore == pool.points


def test_each_pool_is_a_section_selecting_one_of_its_items(tmp_path):
    data = export_zip(tmp_path, FAST_BANKS[0], n=3)
    export = build_export(FAST_BANKS[0], 3)
    test, items = read_qti21(data)
    sections = list(test.iter(f"{QTI21}assessmentSection"))
    assert [s.get("title") for s in sections] == [p.title for p in export.pools]
    names = set(zipfile.ZipFile(io.BytesIO(data)).namelist())
    for section, pool in zip(sections, export.pools):
        assert section.find(f"{QTI21}selection").get("select") == "1"
        refs = section.findall(f"{QTI21}assessmentItemRef")
        assert len(refs) == len(pool.questions) and all(r.get("href") in names for r in refs)
    assert len(items) == sum(len(p.questions) for p in export.pools)


def test_a_multi_part_problem_stays_one_item_with_partial_credit_per_blank(tmp_path):
    _, items = read_qti21(export_zip(tmp_path, FAST_BANKS[2]))
    several = [i for i in items if len(i.responses()) > 1]
    assert several
    item = several[0]
    first = item.responses()[0]
    right = first.correct_options()[0] if first.kind == "choice" else None
    given = {first.name: first._given([right]) if right else _key(item, first)}
    assert item.run(given)[0] == pytest.approx(first.share) and first.share < item.maxscore


def _key(item, response):
    """The key of a numerical or short blank, read from the item's own rules."""
    if response.kind == "short":
        return item.declarations[response.name].findtext(f".//{QTI21}value")
    for condition in item.processing.iter(f"{QTI21}responseIf"):
        if any(v.get("identifier") == response.name for v in condition[0].iter(f"{QTI21}variable")):
            return float(condition[0].find(f"{QTI21}baseValue").text)


def test_solutions_are_feedback_only_when_asked(tmp_path):
    _, plain = read_qti21(export_zip(tmp_path, FAST_BANKS[0]))
    _, solved = read_qti21(export_zip(tmp_path, FAST_BANKS[0], with_solutions=True))
    assert not any("SOLUTION" in i.feedback for i in plain)
    assert all(i.feedback.get("SOLUTION") for i in solved)


def test_render_is_deterministic():
    export = build_export(FAST_BANKS[1], 2)
    assert render_qti21(export) == render_qti21(build_export(FAST_BANKS[1], 2))


def test_text_with_markup_characters_reads_back_intact():
    """Prompts, options, spellings and hints full of characters XML treats specially stay text."""
    hostile = "a &lt; b &amp; c &gt; d ]]&gt; \"quoted\" 'single' {1:NUMERICAL:=1}"
    blanks = (Blank("n", f"n {hostile}", "numerical", value=-2.5, tolerance=0.01,
                    mistakes=(WrongAnswer("m", 2.5, f"<p>hint {hostile}</p>"),), points=0.5),
              Blank("c", f"c {hostile}", "choice", options=(Option("a", f"yes {hostile}", True, f"why {hostile}"),
                                                              Option("b", f"no {hostile}", False, "")), points=0.25),
              Blank("s", "s", "short", spellings=("a<b & c", "x ~ y"), points=0.25))
    question = Question("attention.scores/d1/s1", "T", f"<p>{hostile}</p>", "", blanks, 2.0)
    export = LmsExport("hostile", "H", (Pool("p1", "P", 2.0, (question,)),), ())
    (item,) = read_qti21(render_qti21(export))[1]
    numerical, choice, short = item.responses()
    assert numerical.score(-2.5) == 100 and numerical.score(-2.49) == 100 and numerical.score(-2.52) == 0
    assert numerical.shown(2.5) == [f"<p>hint {hostile}</p>"]
    assert [a.text for a in choice.answers] == [f"yes {hostile}", f"no {hostile}"]
    assert choice.score([f"yes {hostile}"]) == 100 and choice.score([f"no {hostile}"]) == 0
    assert short.score("A<B & c") == 100 and short.score("x ~ y") == 100 and short.score("a<b") == 0


SCHEMA = __import__("pathlib").Path(__file__).parent / "fixtures" / "lms" / "qti21_subset.xsd"


@pytest.fixture(scope="module")
def schema():
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema (test extra) validates the XSD")
    return xmlschema.XMLSchema(str(SCHEMA))


def _documents(data: bytes) -> dict[str, str]:
    archive = zipfile.ZipFile(io.BytesIO(data))
    return {n: archive.read(n).decode() for n in archive.namelist() if n != "imsmanifest.xml"}


@pytest.mark.parametrize("bank", FAST_BANKS, ids=lambda p: p.split("/")[-1])
def test_every_item_and_the_test_are_valid_against_our_schema_of_the_qti_subset(tmp_path, schema, bank):
    for name, text in _documents(export_zip(tmp_path, bank, with_solutions=True)).items():
        assert schema.is_valid(text), name


@pytest.mark.parametrize("edit", [
    ('<selection select="1" />', '<selection select="2" />'),
    ('toleranceMode="absolute"', 'toleranceMode="relative"'),
    ('<setOutcomeValue identifier="SCORE">', '<setOutcomeValue identifier="POINTS">'),
    ('cardinality="single"', 'cardinality="ordered"'),
    ('<textEntryInteraction responseIdentifier="RESPONSE_1"', '<textEntryInteraction responseIdentifier="1st"'),
], ids=["draws two", "relative tolerance", "unknown outcome", "unknown cardinality", "bad identifier"])
def test_the_schema_refuses_what_we_never_write(tmp_path, schema, edit):
    documents = _documents(export_zip(tmp_path, FAST_BANKS[0]))
    text = next(t for t in documents.values() if edit[0] in t)
    assert schema.is_valid(text)
    assert not schema.is_valid(text.replace(edit[0], edit[1], 1))
