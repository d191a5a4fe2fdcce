"""End to end with the real generators: every key grades 100% through a written sheet, and every
listed mistake, written on a sheet, is named. Also every shipped bank's key.toml grades 100%."""

from __future__ import annotations

import tomllib
from dataclasses import replace
import pytest

from problemgen.model import registry
from problemgen.documents.banks import shipped_banks
from problemgen.sheets.answersheet import key_sheet, key_value, toml_value
from problemgen.sheets.grading import grade_part, grade_sheet
from problemgen.model.variantfile import SheetProblem, WorksheetVariant

KINDS = sorted(spec.name if hasattr(spec, "name") else str(spec) for spec in registry.all_kinds())
SEEDS = (0, 1, 2)


def single_problem_variant(problem) -> WorksheetVariant:
    return WorksheetVariant(variant_id=problem.variant_id, title=problem.title, bank="e2e", seed=problem.seed,
                            problems=(SheetProblem("p1", 1.0, problem),))


def test_there_are_kinds_to_check():
    assert len(KINDS) >= 10


@pytest.mark.parametrize("kind", KINDS)
def test_generated_keys_grade_full_marks_through_a_sheet(kind, tmp_path):
    for seed in SEEDS:
        for difficulty in registry.get_kind(kind).difficulties:
            problem = registry.generate(kind, seed, difficulty)
            path = tmp_path / "key.toml"
            path.write_text(key_sheet(single_problem_variant(problem)), encoding="utf-8")
            report = grade_sheet(single_problem_variant(problem), path)
            failures = [(r.name, r.status, r.feedback) for r in report.results if r.status != "correct"]
            assert failures == [] and report.meta["warnings"] == [], (kind, seed, difficulty)


def writable(part, value):
    """The mistake as a student would write it on the sheet (TOML round trip included)."""
    text = toml_value(key_value(replace(part, value=value)))
    return tomllib.loads(f"x = {text}")["x"]


@pytest.mark.parametrize("kind", KINDS)
def test_generated_mistakes_are_named_when_written_on_a_sheet(kind):
    checked = 0
    for seed in SEEDS:
        problem = registry.generate(kind, seed, registry.get_kind(kind).difficulties[0])
        for part in problem.parts:
            if part.type == "expression" and not part.spec.get("allow_decimal"):
                continue  # decimal mistake values are not valid answers to an exact-only part
            for mistake in part.mistakes:
                written = writable(part, mistake.value)
                result = grade_part(part, written)
                # two mistakes may coincide for one variant: the first listed one with this value is named
                first = next(m for m in part.mistakes if grade_part(replace(part, value=m.value), written).passed)
                assert (result.status, result.mistake) == ("wrong", first.name), (kind, seed, part.key)
                assert mistake.hint in result.feedback
                checked += 1
    if checked == 0:
        pytest.skip(f"{kind} lists no writable mistakes")


BANKS = sorted(p.stem for p in shipped_banks())


@pytest.mark.parametrize("bank", BANKS)
def test_every_shipped_bank_key_grades_full_marks(bank, tmp_path):
    from problemgen.documents import worksheet

    variant = worksheet.write_worksheet(worksheet.WorksheetJob(bank, tmp_path / "out"))
    report = grade_sheet(variant, tmp_path / "out" / "key.toml")
    assert report.score == 1.0, [(r.name, r.feedback) for r in report.results if not r.passed]
    blank = grade_sheet(variant, tmp_path / "out" / "answers.toml")
    assert blank.score == 0.0


def test_a_class_set_from_the_worksheet_command_grades_in_class_mode(tmp_path, monkeypatch):
    """Guards the contract with `problemgen worksheet --roster`: manifest, layout and sheets."""
    import shutil

    from problemgen.documents import worksheet
    from problemgen.classes.sheet_class import grade_class

    monkeypatch.setenv("GRADING_TEST_SECRET", "0123456789abcdef0123456789abcdef")
    roster = tmp_path / "roster.csv"
    roster.write_text("id\nana\nbo\ncyd\n", encoding="utf-8")
    classes, subs = tmp_path / "class", tmp_path / "subs"
    worksheet.write_class_set(worksheet.WorksheetJob("masking", classes), roster, "GRADING_TEST_SECRET")
    (subs / "bo").mkdir(parents=True)
    shutil.copy(classes / "keys" / "ana" / "key.toml", subs / "ana.toml")
    shutil.copy(classes / "keys" / "bo" / "key.toml", subs / "bo" / "answers.toml")
    run = grade_class(subs, classes, tmp_path / "grades")
    assert [(r.student, r.status, r.score) for r in run.records] == [
        ("ana", "graded", 1.0), ("bo", "graded", 1.0), ("cyd", "missing", 0.0)]


def test_worker_count_is_explicit_or_grows_with_the_class():
    from problemgen.classes.workers import worker_count

    assert worker_count(3, 10) == 3 and worker_count(5, 2) == 2
    assert worker_count(None, 50) == 1
    assert 1 <= worker_count(None, 10_000) <= 4


@pytest.mark.parametrize("loadavg, cpus, workers", [
    ("0.05 0.10 0.10 1/120 4242\n", 2, 2),  # only this process runs: both CPUs are free
    ("2.10 1.90 1.50 3/130 4242\n", 2, 1),  # two other programs keep both CPUs busy: one process
    ("1.00 1.00 1.00 2/130 4242\n", 4, 3),
    ("garbled\n", 3, 3),  # unreadable: every CPU counts
])
def test_automatic_workers_leave_out_cpus_other_programs_keep_busy(tmp_path, monkeypatch, loadavg, cpus, workers):
    from problemgen.classes import workers as pool

    (tmp_path / "loadavg").write_text(loadavg)
    monkeypatch.setattr(pool, "LOADAVG", str(tmp_path / "loadavg"))
    monkeypatch.setattr(pool.os, "sched_getaffinity", lambda pid: set(range(cpus)), raising=False)
    assert pool.worker_count(None, 10_000) == workers
    assert pool.worker_count(None, 150) == 1 and pool.worker_count(2, 150) == 2


def test_rows_come_back_in_order_whatever_the_workers(tmp_path):
    from problemgen.classes.workers import ordered_map

    items = list(range(100))
    assert list(ordered_map(str, items, 1)) == list(ordered_map(str, items, 3)) == [str(i) for i in items]
    assert list(ordered_map(str, [], 2)) == []
