"""Worksheets and class sets: files, determinism, keyed student seeds, rosters, overrides, heatmaps."""

from __future__ import annotations

import json
import re
import shutil
import textwrap

import pytest

from problemgen.documents import worksheet
from problemgen.model.core import ProblemgenError
from problemgen.model.variantfile import SheetProblem, WorksheetVariant
from problemgen.documents.worksheet import WorksheetJob

SECRET_ENV = "PROBLEMGEN_TEST_SECRET"
BANK = """
    title = "Weights & norms_1"
    seed = 7

    [[problems]]
    kind = "attention.weights"
    count = 2
    points = 2

    [[problems]]
    kind = "norms.layer_norm"
    seeds = [5]
    title = "Pinned LayerNorm"
"""
SINGLE_FILES = ["answer_key.md", "answers.toml", "key.toml", "variant.json", "worksheet.md"]


@pytest.fixture
def bank(tmp_path):
    path = tmp_path / "weights.toml"
    path.write_text(textwrap.dedent(BANK).lstrip(), encoding="utf-8")
    return path


@pytest.fixture
def roster(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("name,Student_ID\nAda,s001\nAlan,s002\nGrace,s003\n", encoding="utf-8")
    return path


@pytest.fixture
def secret(monkeypatch):
    monkeypatch.setenv(SECRET_ENV, "a long class secret")


def snapshot(directory) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


# --- seeds ----------------------------------------------------------------------------------------


def test_problem_seeds_depend_on_worksheet_seed_place_and_kind():
    base = worksheet.problem_seed(7, 0, 0, "attention.weights")
    assert base == worksheet.problem_seed(7, 0, 0, "attention.weights")
    others = {
        worksheet.problem_seed(8, 0, 0, "attention.weights"),
        worksheet.problem_seed(7, 1, 0, "attention.weights"),
        worksheet.problem_seed(7, 0, 1, "attention.weights"),
        worksheet.problem_seed(7, 0, 0, "attention.output"),
    }
    assert base not in others and len(others) == 4


def test_student_seeds_need_the_secret_and_differ_per_student_bank_and_round():
    seed, tag = worksheet.student_seed("secret", "bank", 1, "s001")
    assert (seed, tag) == worksheet.student_seed("secret", "bank", 1, "s001")
    for args in [("other", "bank", 1, "s001"), ("secret", "bank2", 1, "s001"),
                 ("secret", "bank", 2, "s001"), ("secret", "bank", 1, "s002")]:
        assert worksheet.student_seed(*args)[0] != seed
    assert len(tag) == 12 and str(seed) not in tag


def test_missing_or_empty_secret_is_a_clear_error(monkeypatch):
    monkeypatch.delenv(SECRET_ENV, raising=False)
    with pytest.raises(ProblemgenError, match=f"environment variable {SECRET_ENV} is not set or empty"):
        worksheet.read_secret(SECRET_ENV)
    monkeypatch.setenv(SECRET_ENV, "  ")
    with pytest.raises(ProblemgenError, match="not set or empty"):
        worksheet.read_secret(SECRET_ENV)


# --- building -------------------------------------------------------------------------------------


def test_variant_places_problems_in_bank_order_with_points_titles_and_pinned_seeds(bank):
    from problemgen.documents.banks import load_bank

    variant = worksheet.build_variant(load_bank(bank), 7)
    assert [p.id for p in variant.problems] == ["p1", "p2", "p3"]
    assert [p.points for p in variant.problems] == [2.0, 2.0, 1.0]
    assert [p.problem.kind for p in variant.problems] == ["attention.weights"] * 2 + ["norms.layer_norm"]
    assert variant.problems[0].problem.seed != variant.problems[1].problem.seed
    assert variant.problems[2].problem.seed == 5 and variant.problems[2].problem.title == "Pinned LayerNorm"
    other = worksheet.build_variant(load_bank(bank), 8)
    assert other.problems[0].problem.params != variant.problems[0].problem.params
    assert other.problems[2].problem == variant.problems[2].problem


# --- single worksheet -----------------------------------------------------------------------------


def test_worksheet_directory_holds_documents_sheets_and_the_frozen_variant(bank, tmp_path):
    out = tmp_path / "out"
    variant = worksheet.write_worksheet(WorksheetJob(bank, out))
    assert sorted(snapshot(out)) == SINGLE_FILES
    frozen = WorksheetVariant.load(out / "variant.json")
    assert frozen == variant and frozen.variant_id == "weights-s7"
    text = (out / "worksheet.md").read_text()
    assert "Variant `weights-s7`" in text and r"# Weights & norms\_1" in text
    assert "softmax runs along each row" in text  # the global conventions
    assert "Answer under `[p1]`: `weights`" in text
    assert 'variant = "weights-s7"' in (out / "answers.toml").read_text()


def test_same_inputs_give_byte_identical_outputs_and_another_seed_differs(bank, tmp_path):
    worksheet.write_worksheet(WorksheetJob(bank, tmp_path / "a"))
    worksheet.write_worksheet(WorksheetJob(bank, tmp_path / "b"))
    worksheet.write_worksheet(WorksheetJob(bank, tmp_path / "c", seed=8))
    assert snapshot(tmp_path / "a") == snapshot(tmp_path / "b")
    assert snapshot(tmp_path / "a")["worksheet.md"] != snapshot(tmp_path / "c")["worksheet.md"]


def test_key_shows_answers_tolerances_worked_solutions_and_a_weights_heatmap(bank, tmp_path):
    worksheet.write_worksheet(WorksheetJob(bank, tmp_path / "out", formats=("md", "tex")))
    key_md = (tmp_path / "out" / "answer_key.md").read_text()
    assert key_md.count("| query \\ key |") == 2  # one heatmap per weights answer
    assert "(within ±0.005)" in key_md and "### Worked solution" in key_md
    assert "Recognised mistakes: attention computed without the 1/√d\\_k scaling" in key_md
    key_tex = (tmp_path / "out" / "answer_key.tex").read_text()
    assert r"\cellcolor{blue!" in key_tex and r"\usepackage[table]{xcolor}" in key_tex
    worksheet_md = (tmp_path / "out" / "worksheet.md").read_text()
    assert "| query" not in worksheet_md and "Worked solution" not in worksheet_md


def test_a_key_part_lists_each_mistake_description_once_in_order_and_every_key_its_own_list():
    """The descriptions of a set of mistakes are made once per process; each key still gets a list of its own."""
    from problemgen.misconceptions.catalogue import describe
    from problemgen.model.core import AnswerPart, Mistake

    names = ("scale_by_dk", "no_scaling", "scale_by_dk", "not_a_catalogue_tag")
    part = AnswerPart("w", "number", 0.5, atol=0.01, mistakes=tuple(Mistake(name, 0.1, "") for name in names))
    problem = SheetProblem("p1", 1, _a_problem_with(part))
    first, second = (worksheet._key_problem({}, [{"key": "w"}], problem, "", "md")["parts"][0]["mistakes"]
                     for _ in range(2))
    assert first == [describe("scale_by_dk"), describe("no_scaling"), "not_a_catalogue_tag"]
    first.append("edited by a template")
    assert second == first[:3] and second is not first


def _a_problem_with(part):
    from problemgen.model.core import Problem

    return Problem("attention.weights", 1, 1, {}, "A problem", "attention", {}, (part,), {})


def test_tex_escapes_titles_and_ids(bank, tmp_path):
    worksheet.write_worksheet(WorksheetJob(bank, tmp_path / "out", formats=("tex",)))
    tex = (tmp_path / "out" / "worksheet.tex").read_text()
    assert r"{\LARGE Weights \& norms\_1\par}" in tex and r"\texttt{weights-s7}" in tex
    assert not (tmp_path / "out" / "worksheet.pdf").exists()


def test_non_empty_output_is_refused_without_force_and_force_keeps_other_files(bank, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ProblemgenError, match="not empty; use --force"):
        worksheet.write_worksheet(WorksheetJob(bank, out))
    (out / "worksheet.md").write_text("stale")
    worksheet.write_worksheet(WorksheetJob(bank, out, force=True))
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "worksheet.md").read_text().startswith("# Weights")


def test_output_path_that_is_a_file_is_refused(bank, tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(ProblemgenError, match="not a directory"):
        worksheet.write_worksheet(WorksheetJob(bank, target))


def test_user_templates_override_the_built_in_ones_by_relative_path(bank, tmp_path):
    templates = tmp_path / "templates" / "documents"
    templates.mkdir(parents=True)
    (templates / "worksheet.md.j2").write_text("CUSTOM {{ variant_id }} {{ problems | length }}\n")
    out = tmp_path / "out"
    worksheet.write_worksheet(WorksheetJob(bank, out, templates=tmp_path / "templates"))
    assert (out / "worksheet.md").read_text() == "CUSTOM weights-s7 3\n"
    assert (out / "answer_key.md").read_text().startswith("# Answer key")  # not overridden: built in


def test_template_typos_surface_as_project_errors_naming_the_template(bank, tmp_path):
    problems = tmp_path / "templates" / "problems"
    problems.mkdir(parents=True)
    (problems / "attention.weights.j2").write_text("{% block prompt %}{{ parms.Q }}{% endblock %}{% block solution %}{% endblock %}")
    with pytest.raises(ProblemgenError, match=r"problems/attention\.weights\.j2, line 1 \(prompt\): 'parms' is undefined"):
        worksheet.write_worksheet(WorksheetJob(bank, tmp_path / "out", templates=tmp_path / "templates"))
    assert not (tmp_path / "out").exists()

    for name, fragment, message in [  # a directory each: an environment keeps the templates it has loaded
        ("solution", "{% block prompt %}{% endblock %}{% block solution %}{{ sol.Z }}{% endblock %}",
         r"problems/attention\.weights\.j2, line 1 \(solution\): .* no attribute 'Z'"),
        ("syntax", "{% block prompt %}\n{% if %}{% endblock %}", r"attention\.weights\.j2, line 2: "),
    ]:
        (tmp_path / name / "problems").mkdir(parents=True)
        (tmp_path / name / "problems" / "attention.weights.j2").write_text(fragment)
        with pytest.raises(ProblemgenError, match=message):
            worksheet.write_worksheet(WorksheetJob(bank, tmp_path / "out", templates=tmp_path / name))


def test_missing_templates_directory_is_refused(bank, tmp_path):
    with pytest.raises(ProblemgenError, match="templates directory not found"):
        worksheet.write_worksheet(WorksheetJob(bank, tmp_path / "out", templates=tmp_path / "nope"))


def test_pdf_without_pdflatex_explains_how_to_install(bank, tmp_path, monkeypatch):
    from problemgen.documents import latex

    monkeypatch.setattr(latex, "pdflatex_path", lambda: None)
    with pytest.raises(ProblemgenError, match="apt-get install texlive"):
        worksheet.write_worksheet(WorksheetJob(bank, tmp_path / "out", formats=("md", "pdf")))
    assert not (tmp_path / "out").exists()


def test_formats_parse_with_markdown_always_included():
    assert worksheet.parse_formats("pdf, TEX") == ("md", "tex", "pdf")
    assert worksheet.parse_formats("") == ("md",)
    with pytest.raises(ProblemgenError, match="unknown format docx; choose from"):
        worksheet.parse_formats("md,docx")
    with pytest.raises(ProblemgenError, match="unknown formats docx, odt; choose from"):
        worksheet.parse_formats("odt,md,docx")


# --- rosters and class sets ----------------------------------------------------------------------


def test_class_set_keeps_handouts_apart_from_keys_and_writes_a_manifest(bank, roster, secret, tmp_path):
    out = tmp_path / "class"
    calls = []
    entries = worksheet.write_class_set(WorksheetJob(bank, out), roster, SECRET_ENV, lambda d, t: calls.append((d, t)))
    assert [e["student"] for e in entries] == ["s001", "s002", "s003"]
    assert [e["name"] for e in entries] == ["Ada", "Alan", "Grace"]
    assert calls == [(1, 3), (2, 3), (3, 3)]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["students"] == entries and manifest["bank"] == "weights" and manifest["base_seed"] == 7
    assert manifest["student_files"] == ["answers.toml", "worksheet.md"]
    assert sorted(p.name for p in out.iterdir()) == ["handouts", "keys", "manifest.json"]
    variants = {s: WorksheetVariant.load(out / "keys" / s / "variant.json") for s in ("s001", "s002", "s003")}
    for (student, variant), entry in zip(variants.items(), entries):
        assert sorted(snapshot(out / "handouts" / student)) == ["answers.toml", "worksheet.md"]
        assert sorted(snapshot(out / "keys" / student)) == ["answer_key.md", "key.toml", "variant.json"]
        assert variant.student == student
        text = (out / "handouts" / student / "worksheet.md").read_text()
        assert f"Name: {entry['name']} · Student id: `{student}`" in text
        assert f"Variant `{variant.variant_id}`" in text
        assert str(variant.seed) not in text  # the sheet never shows the seed that rebuilds the key
    params = [v.problems[0].problem.params for v in variants.values()]
    assert params[0] != params[1] != params[2]
    pinned = {json.dumps(v.problems[2].problem.to_dict(), sort_keys=True) for v in variants.values()}
    assert len(pinned) == 1


def _renderings(numbers: str) -> set[str]:
    """How the documents print each non-integer number of a text: 4 decimals, 3 decimals, the repr."""
    import re

    found = set()
    for number in re.findall(r"-?\d+\.\d+", numbers):
        value = float(number)
        if value != round(value):
            found |= {f"{value:.4f}".rstrip("0"), f"{value:.4f}", repr(value), f"{value:.3f}"}
    return found


def _key_renderings(variant: WorksheetVariant) -> set[str]:
    """Every text rendering of every key value that the problem did not itself give: the key.toml value
    and each non-trivial number as the key prints it. (An answer may legitimately reuse given numbers,
    e.g. the rows of a given output in a permuted order.)"""
    import json

    from problemgen.sheets.answersheet import key_sheet

    found: set[str] = set()
    for line in key_sheet(variant).splitlines():
        if "=" in line and not line.startswith(("#", "[", "variant", "student")):
            value = line.split("=", 1)[1].strip()
            found |= {value} | _renderings(value)
    given = set()
    for placed in variant.problems:
        given |= _renderings(json.dumps(placed.problem.params))
    return {text for text in found - given if len(text.strip('"')) >= 4}


def test_no_key_value_appears_anywhere_under_handouts(tmp_path, monkeypatch):
    monkeypatch.setenv(SECRET_ENV, "a long class secret")
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\ns1,Ada\ns2,Bo\n", encoding="utf-8")
    out = tmp_path / "class"
    worksheet.write_class_set(WorksheetJob("mixed_exam", out, formats=("md", "tex")), roster, SECRET_ENV)
    handout_files = [p for p in (out / "handouts").rglob("*") if p.is_file()]
    assert {p.name for p in handout_files} == {"answers.toml", "worksheet.md", "worksheet.tex"}
    # the fixed format examples of the blank sheet ("e.g. 0.125") are the same for every sheet: not a value
    texts = [re.sub(r"e\.g\. .*", "", p.read_text(encoding="utf-8")) for p in handout_files]
    for student in ("s1", "s2"):
        renderings = _key_renderings(WorksheetVariant.load(out / "keys" / student / "variant.json"))
        assert len(renderings) > 20  # the check has teeth: matrices, counts, sizes, shapes
        leaked = sorted(r for r in renderings for text in texts if r in text)
        assert leaked == [], leaked


def test_class_sets_are_reproducible_with_the_secret_and_change_without_it(bank, roster, secret, tmp_path, monkeypatch):
    worksheet.write_class_set(WorksheetJob(bank, tmp_path / "a"), roster, SECRET_ENV)
    worksheet.write_class_set(WorksheetJob(bank, tmp_path / "b"), roster, SECRET_ENV)
    assert snapshot(tmp_path / "a") == snapshot(tmp_path / "b")
    monkeypatch.setenv(SECRET_ENV, "another long secret")
    worksheet.write_class_set(WorksheetJob(bank, tmp_path / "c"), roster, SECRET_ENV)
    assert snapshot(tmp_path / "a")["keys/s001/variant.json"] != snapshot(tmp_path / "c")["keys/s001/variant.json"]


def test_class_sets_are_identical_whether_written_by_one_process_or_several(bank, roster, secret, tmp_path):
    worksheet.write_class_set(WorksheetJob(bank, tmp_path / "serial", jobs=1), roster, SECRET_ENV)
    calls = []
    worksheet.write_class_set(WorksheetJob(bank, tmp_path / "pool", jobs=2), roster, SECRET_ENV, lambda d, t: calls.append(d))
    assert snapshot(tmp_path / "serial") == snapshot(tmp_path / "pool")
    assert calls == [1, 2, 3]


@pytest.mark.parametrize("batch", [1, 2])
def test_class_sets_are_identical_whatever_the_batch_of_students(bank, roster, secret, tmp_path, monkeypatch, batch):
    """A writer makes its students' files step by step over a batch: the batch size changes no byte."""
    worksheet.write_class_set(WorksheetJob(bank, tmp_path / "default", jobs=1), roster, SECRET_ENV)
    monkeypatch.setattr(worksheet, "BATCH_STUDENTS", batch)
    calls = []
    worksheet.write_class_set(WorksheetJob(bank, tmp_path / "batched", jobs=1), roster, SECRET_ENV,
                              lambda d, t: calls.append(d))
    assert snapshot(tmp_path / "default") == snapshot(tmp_path / "batched")
    assert calls == [1, 2, 3]


def test_a_batch_of_documents_made_problem_by_problem_is_each_variant_made_alone(bank):
    """Variants of different lengths and kinds in one batch: each document is the one made for it alone."""
    from problemgen.documents.banks import load_bank

    weights, exam = load_bank(bank), load_bank("mixed_exam")
    variants = [worksheet.build_variant(weights, 3, student="s1"), worksheet.build_variant(exam, 4, student="s2"),
                worksheet.build_variant(weights, 5)]
    assert len({len(v.problems) for v in variants}) == 2
    renderer = worksheet.DocumentRenderer()
    names = ["Ada", "Bo", ""]
    batch = renderer.batch_documents(variants, ("md", "tex"), "Show your work.", names)
    alone = [worksheet.DocumentRenderer().documents(v, ("md", "tex"), "Show your work.", n) for v, n in zip(variants, names)]
    assert batch == alone and sorted(batch[1]) == ["answer_key.md", "answer_key.tex", "worksheet.md", "worksheet.tex"]
    assert renderer.batch_documents([], ("md",), "", []) == []


def test_worker_count_follows_the_request_and_stays_serial_for_small_classes():
    assert worksheet.worker_count(WorksheetJob("b", "o", jobs=3), 200) == 3
    assert worksheet.worker_count(WorksheetJob("b", "o", jobs=8), 2) == 2
    assert worksheet.worker_count(WorksheetJob("b", "o"), 10) == 1
    assert 1 <= worksheet.worker_count(WorksheetJob("b", "o"), 1000) <= 4


def test_class_set_without_the_secret_writes_nothing(bank, roster, tmp_path, monkeypatch):
    monkeypatch.delenv(SECRET_ENV, raising=False)
    with pytest.raises(ProblemgenError, match="not set or empty"):
        worksheet.write_class_set(WorksheetJob(bank, tmp_path / "class"), roster, SECRET_ENV)
    assert not (tmp_path / "class").exists()


def test_a_short_class_secret_is_refused(monkeypatch):
    monkeypatch.setenv(SECRET_ENV, "short-secret")
    with pytest.raises(ProblemgenError, match="12 characters; at least 16"):
        worksheet.read_secret(SECRET_ENV)


def test_an_output_directory_under_a_file_is_one_clear_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ProblemgenError, match="is a file, not a directory"):
        with worksheet.prepare_output(tmp_path / "file" / "out", force=False):
            pass


def test_combined_documents_start_every_student_on_a_fresh_sheet():
    docs = ["\\documentclass{article}\n\\begin{document}\nA\n\\end{document}\n",
            "\\documentclass{article}\n\\begin{document}\nB\n\\end{document}\n"]
    text = worksheet.combine_tex(docs)
    assert text.count("\\begin{document}") == 1 and text.count("\\documentclass") == 1
    assert text.index("A") < text.index("\\ifodd\\value{page}") < text.index("B")
    with pytest.raises(ProblemgenError, match="exactly one"):
        worksheet.combine_tex(["no document here"])


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed")
def test_combined_pdfs_hold_every_student_each_starting_on_a_new_sheet(tmp_path, monkeypatch):
    from problemgen.documents.latex import compile_with_log

    monkeypatch.setenv(SECRET_ENV, "a long class secret")
    roster = tmp_path / "roster.csv"
    roster.write_text("id;name\ns1;Ada Lovelace\ns2;Zoë Ärger\ns3;李雷\n", encoding="utf-8")
    out = tmp_path / "class"
    worksheet.write_class_set(WorksheetJob("masking", out, formats=("tex", "pdf")), roster, SECRET_ENV)
    assert (out / "handouts.pdf").read_bytes().startswith(b"%PDF") and (out / "keys.pdf").exists()
    pages = lambda log: int(re.search(r"\((\d+) pages?", log).group(1))  # noqa: E731
    for kind, name in (("handouts", "worksheet"), ("keys", "answer_key")):
        each = [pages(compile_with_log((out / kind / s / f"{name}.tex").read_text(), "d")[1]) for s in ("s1", "s2", "s3")]
        combined = (out / f"{kind}.tex").read_text()
        assert pages(compile_with_log(combined, "c")[1]) == sum(n + n % 2 for n in each[:-1]) + each[-1]
        assert "\\markright{Ada Lovelace \\quad s1" in combined and "\\markright{Zo" in combined
        assert "\\markright{?? \\quad s3" in combined  # pdflatex cannot print it: never a compile error


def test_files_are_never_written_through_a_link_leaving_the_output(tmp_path):
    root = (tmp_path / "out").resolve()
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "s001").symlink_to(outside)
    with pytest.raises(ProblemgenError, match="symbolic link"):
        worksheet.write_files(root, "s001", {"worksheet.md": b"x"})
    (root / "s002").mkdir()
    (root / "s002" / "worksheet.md").symlink_to(outside / "target.md")
    with pytest.raises(ProblemgenError, match="symbolic link"):
        worksheet.write_files(root, "s002", {"worksheet.md": b"x"})
    assert not any(outside.iterdir())


def test_files_replace_what_is_there_and_a_file_in_the_way_of_a_directory_is_a_clear_error(tmp_path):
    root = tmp_path.resolve()
    worksheet.write_files(root, "keys/s001", {"key.toml": b"a longer first version", "variant.json": b"{}"})
    worksheet.write_files(root, "keys/s001", {"key.toml": b"short"})
    assert (root / "keys" / "s001" / "key.toml").read_bytes() == b"short"
    assert (root / "keys" / "s001" / "variant.json").read_bytes() == b"{}"
    (root / "handouts").write_text("not a directory")
    with pytest.raises(ProblemgenError, match=r"cannot create .*handouts \(File exists\)"):
        worksheet.write_files(root, "handouts/s001", {"worksheet.md": b"x"})


def test_answer_sheet_says_how_to_write_a_product_dimension_and_the_key_sheet_grades_full(tmp_path):
    """multihead.concat at d3 asks for (B, L, h*d_v): the sheet must say how a product is typed."""
    from problemgen.sheets.answersheet import blank_sheet, key_sheet
    from problemgen.sheets.grading import grade_sheet
    from problemgen.model.registry import generate

    problem = generate("multihead.concat", 1, 3)
    assert "h*d_v" in problem.part("batched").value
    variant = WorksheetVariant("concat-s1", "Concat", "concat", 1, (SheetProblem("p1", 1, problem),))
    assert "(a product as C*W)" in blank_sheet(variant)
    (tmp_path / "key.toml").write_text(key_sheet(variant), encoding="utf-8")
    assert grade_sheet(variant, tmp_path / "key.toml").score == 1.0


# --- fair variants --------------------------------------------------------------------------------

FAIR_BANK = """
    title = "Fair"
    seed = 11

    [[problems]]
    kind = "attention.weights"
    difficulty = 2

    [[problems]]
    kind = "masks.causal"
    difficulty = 2

    [[problems]]
    kind = "attention.projection"
    difficulty = 2
    {vary}
"""


def _class_variants(tmp_path, monkeypatch, vary: str, students: int = 12) -> list[WorksheetVariant]:
    monkeypatch.setenv(SECRET_ENV, "a long class secret")
    bank = tmp_path / f"fair{len(vary)}.toml"
    bank.write_text(textwrap.dedent(FAIR_BANK.format(vary=vary)).lstrip(), encoding="utf-8")
    roster = tmp_path / "fair_roster.csv"
    roster.write_text("id\n" + "".join(f"s{i}\n" for i in range(students)), encoding="utf-8")
    out = tmp_path / f"fair{len(vary)}"
    worksheet.write_class_set(WorksheetJob(bank, out), roster, SECRET_ENV)
    return [WorksheetVariant.load(out / "keys" / f"s{i}" / "variant.json") for i in range(students)]


def test_a_class_set_gives_every_student_the_same_structure_and_different_numbers(tmp_path, monkeypatch):
    from problemgen.classes.sheet_class import structure_label

    variants = _class_variants(tmp_path, monkeypatch, "")
    for position in range(3):
        problems = [v.problems[position].problem for v in variants]
        assert len({structure_label(p) for p in problems}) == 1, [structure_label(p) for p in problems]
        if position != 1:  # a causal mask of a given size has no numbers to vary
            assert len({json.dumps(p.params, sort_keys=True) for p in problems}) >= 10  # the numbers differ
    masks = [v.problems[1].problem.parts[0].spec.get("representation") for v in variants]
    assert len(set(masks)) == 1


def test_vary_asks_for_structural_variety_and_the_gradebook_reports_it_per_variant(tmp_path, monkeypatch):
    from problemgen.classes.sheet_class import structure_label
    from problemgen.classes.statistics import ItemStatistics
    from problemgen.sheets.answersheet import key_sheet, parse_sheet_text
    from problemgen.sheets.grading import grade_answers

    variants = _class_variants(tmp_path, monkeypatch, 'vary = ["convention"]')
    conventions = {v.problems[2].problem.params.get("convention") for v in variants}
    assert conventions == {"row", "column"}
    stats = ItemStatistics()
    for variant in variants:
        report = grade_answers(variant, parse_sheet_text(key_sheet(variant)))
        stats.add(variant.student, report, {p.id: structure_label(p.problem) for p in variant.problems})
    items = {i["part"]: i for i in stats.items()}
    varied = [i for name, i in items.items() if name.startswith("p3.")]
    assert varied and all(len(i["variants"]) == 2 for i in varied)
    assert all(i["variants"] == {} for name, i in items.items() if not name.startswith("p3."))


def test_a_class_secret_of_few_different_characters_is_refused(monkeypatch):
    """A handout lets a student test guesses offline, so a secret like sixteen a's must not pass."""
    monkeypatch.setenv(SECRET_ENV, "a" * 40)
    with pytest.raises(ProblemgenError, match="uses 1 different characters"):
        worksheet.read_secret(SECRET_ENV)
    monkeypatch.setenv(SECRET_ENV, "passwordpassword")
    with pytest.raises(ProblemgenError, match="uses 7 different characters"):
        worksheet.read_secret(SECRET_ENV)


def test_white_space_around_the_class_secret_is_no_part_of_it(monkeypatch):
    """A trailing newline (a secret read from a file) once gave a different class set, silently."""
    monkeypatch.setenv(SECRET_ENV, "a long class secret\n")
    padded = worksheet.read_secret(SECRET_ENV)
    monkeypatch.setenv(SECRET_ENV, "a long class secret")
    assert padded == worksheet.read_secret(SECRET_ENV) == "a long class secret"


# --- runs into an earlier run's folder ------------------------------------------------------------


def test_a_forced_rerun_removes_the_documents_of_a_format_no_longer_asked(bank, tmp_path, capsys):
    """worksheet.tex of the earlier seed beside the new key.toml would be printed, answered and graded
    against another variant; the user's own file stays."""
    from problemgen.cli import main

    out = tmp_path / "out"
    worksheet.write_worksheet(WorksheetJob(bank, out, seed=1, formats=("md", "tex")))
    (out / "notes.tex").write_text("mine")
    with pytest.raises(SystemExit) as exit_info:
        main(["worksheet", str(bank), "-o", str(out), "--seed", "2", "--force"])
    assert exit_info.value.code == 0
    assert sorted(p.name for p in out.iterdir()) == sorted([*SINGLE_FILES, "notes.tex"])
    assert capsys.readouterr().err.splitlines() == [
        "warning: removed answer_key.tex, left by an earlier run: this run wrote no .tex",
        "warning: removed worksheet.tex, left by an earlier run: this run wrote no .tex",
    ]


def test_a_class_set_regenerated_into_its_folder_describes_the_new_run_alone(bank, roster, secret, tmp_path,
                                                                             monkeypatch):
    """Roster shrunk, secret and formats changed: the folder must hold what a run into an empty folder
    writes, plus the user's own files (a withdrawn student's folder stays while it holds one)."""
    out, fresh = tmp_path / "class", tmp_path / "fresh"
    worksheet.write_class_set(WorksheetJob(bank, out, formats=("md", "tex")), roster, SECRET_ENV)
    (out / "handouts" / "s003" / "notes.txt").write_text("mine")
    (out / "keys" / "s001" / "remarks.md").write_text("mine")
    shorter = tmp_path / "shorter.csv"
    shorter.write_text("name,Student_ID\nAda,s001\nAlan,s002\n", encoding="utf-8")
    monkeypatch.setenv(SECRET_ENV, "another long class secret")
    worksheet.write_class_set(WorksheetJob(bank, out, force=True), shorter, SECRET_ENV)
    worksheet.write_class_set(WorksheetJob(bank, fresh), shorter, SECRET_ENV)
    mine = {"handouts/s003/notes.txt": b"mine", "keys/s001/remarks.md": b"mine"}
    assert snapshot(out) == {**snapshot(fresh), **mine}
    assert not (out / "keys" / "s003").exists()


def test_a_class_rerun_names_what_it_removed_on_stderr(bank, roster, secret, tmp_path, capsys):
    from problemgen.cli import main

    out = tmp_path / "class"
    worksheet.write_class_set(WorksheetJob(bank, out, formats=("md", "tex")), roster, SECRET_ENV)
    shorter = tmp_path / "shorter.csv"
    shorter.write_text("name,Student_ID\nAda,s001\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        main(["worksheet", str(bank), "-o", str(out), "--roster", str(shorter), "--secret-env", SECRET_ENV,
              "--force", "--no-progress"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().err.splitlines() == [
        ("warning: removed the handouts and keys of 2 students not on this roster, left by an earlier run: "
         "s002, s003"),
        "warning: removed answer_key.tex from 1 student folder, left by an earlier run: this run wrote no .tex",
        "warning: removed worksheet.tex from 1 student folder, left by an earlier run: this run wrote no .tex",
    ]


def test_an_interrupted_class_rerun_leaves_no_manifest_calling_it_complete(bank, roster, secret, tmp_path, monkeypatch):
    """manifest.json marks a finished class set; the earlier one would vouch for a folder now half of the new
    run. Nothing of the earlier run is removed when the rerun stops."""
    out = tmp_path / "class"
    worksheet.write_class_set(WorksheetJob(bank, out, formats=("md", "tex")), roster, SECRET_ENV)
    write = worksheet.StudentWriter._write

    def stop_after_the_first(self, student, variant, files):
        if student.id != "s001":
            raise ProblemgenError("the run stops here")
        return write(self, student, variant, files)

    monkeypatch.setattr(worksheet.StudentWriter, "_write", stop_after_the_first)
    with pytest.raises(ProblemgenError, match="stops here"):
        worksheet.write_class_set(WorksheetJob(bank, out, seed=99, force=True), roster, SECRET_ENV)
    assert not (out / "manifest.json").exists()
    assert (out / "handouts" / "s003" / "worksheet.tex").exists()
    assert (out / "keys" / "s001" / "answer_key.tex").exists()
