"""answers.toml / key.toml: the sheets we write, and safe, forgiving reading of the sheets students return."""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "grading"))
import grading_fixture as fx  # noqa: E402

from problemgen.sheets.answersheet import (  # noqa: E402
    MAX_SHEET_BYTES,
    BadValue,
    NonFinite,
    blank_sheet,
    describe_format,
    key_sheet,
    parse_sheet_text,
    parse_value,
    read_sheet,
    toml_value,
)
from problemgen.model.core import AnswerPart, ProblemgenError  # noqa: E402
from problemgen.sheets.grading import grade_part, grade_sheet  # noqa: E402

VARIANT = fx.fixture_variant(student="s001")


def write(tmp_path: Path, text: str | bytes, name: str = "answers.toml") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


# ------------------------------------------------------------------------------------------ writing


def test_the_blank_sheet_has_meta_and_one_blank_entry_per_part():
    data = tomllib.loads(blank_sheet(VARIANT))
    assert data["meta"] == {"variant": VARIANT.variant_id, "student": "s001"}
    for sheet_problem in VARIANT.problems:
        assert data[sheet_problem.id] == {p.key: "" for p in sheet_problem.problem.parts}
    assert set(data) == {"meta"} | {p.id for p in VARIANT.problems}


def test_every_part_has_a_comment_with_its_format_and_tolerance():
    text = blank_sheet(VARIANT)
    lines = text.splitlines()
    for sheet_problem in VARIANT.problems:
        for part in sheet_problem.problem.parts:
            index = lines.index(f'{part.key} = ""')
            assert lines[index - 1].startswith(f"# {part.key}: ")
            assert describe_format(part) in lines[index - 1]
    assert "within ±0.005" in text


def test_the_key_sheet_grades_full_marks(tmp_path):
    report = grade_sheet(VARIANT, write(tmp_path, key_sheet(VARIANT)))
    assert [r.status for r in report.results] == ["correct"] * len(report.results)
    assert report.score == 1.0 and report.meta["warnings"] == []


def test_the_blank_sheet_grades_zero_with_no_answer_everywhere(tmp_path):
    report = grade_sheet(VARIANT, write(tmp_path, blank_sheet(VARIANT)))
    assert {(r.status, r.feedback) for r in report.results} == {("wrong", "no answer")}
    assert report.score == 0.0


def test_sheets_are_deterministic():
    assert blank_sheet(VARIANT) == blank_sheet(fx.fixture_variant(student="s001"))
    assert key_sheet(VARIANT) == key_sheet(fx.fixture_variant(student="s001"))


def test_a_label_with_a_newline_cannot_inject_a_statement():
    from dataclasses import replace

    problem = fx.attention_problem()
    part = replace(problem.parts[1], label='x\ntop = 1\n[p9]')
    variant = replace(VARIANT, problems=(replace(VARIANT.problems[0], problem=replace(problem, parts=(part,))),))
    assert tomllib.loads(blank_sheet(variant))["p1"] == {"top": ""}


@settings(max_examples=100, deadline=None)
@given(st.recursive(
    st.one_of(st.booleans(), st.integers(-10**30, 10**30), st.floats(allow_nan=False, allow_infinity=False),
              st.text(max_size=20)),
    lambda inner: st.lists(inner, max_size=4), max_leaves=10))
def test_toml_value_round_trips(value):
    assert tomllib.loads(f"x = {toml_value(value)}")["x"] == value


# ------------------------------------------------------------------------------------------ reading: whole file


def test_a_missing_file_is_a_usage_error(tmp_path):
    with pytest.raises(ProblemgenError, match="no such file"):
        read_sheet(tmp_path / "nope.toml")


def test_a_symlink_is_refused_not_followed(tmp_path):
    target = write(tmp_path, key_sheet(VARIANT), "key.toml")
    link = tmp_path / "answers.toml"
    link.symlink_to(target)
    sheet = read_sheet(link)
    assert sheet.error and "symbolic link" in sheet.error and not sheet.tables


def test_a_directory_or_fifo_is_not_a_sheet(tmp_path):
    assert "not a regular file" in read_sheet(tmp_path).error
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    assert "not a regular file" in read_sheet(fifo).error  # and reading it did not block


def test_files_over_the_size_cap_are_refused(tmp_path):
    path = write(tmp_path, "# pad\n" * (MAX_SHEET_BYTES // 6 + 1))
    assert "larger than" in read_sheet(path).error


def test_invalid_utf8_is_refused_with_the_offset(tmp_path):
    path = write(tmp_path, b'[p1]\ntop = "\xff\xfe"\n')
    assert "not valid UTF-8" in read_sheet(path).error and "offset 12" in read_sheet(path).error


def test_a_leading_byte_order_mark_is_tolerated_with_a_warning(tmp_path):
    path = write(tmp_path, "\ufeff" + key_sheet(VARIANT))
    report = grade_sheet(VARIANT, path)
    assert report.score == 1.0
    assert any("byte-order mark" in w for w in report.meta["warnings"])


@pytest.mark.parametrize("ending", ["\r", "\r\n"])
def test_a_sheet_saved_with_other_line_endings_reads_as_written_with_newlines(tmp_path, ending):
    """An old Mac editor ends lines with a lone CR, which TOML does not take as a line break: such a
    sheet was refused whole ("invalid character '\\r'")."""
    text = key_sheet(VARIANT)
    path = write(tmp_path, text.replace("\n", ending))
    assert read_sheet(path) == read_sheet(write(tmp_path, text, "unix.toml"))
    report = grade_sheet(VARIANT, path)
    assert report.score == 1.0 and report.meta["warnings"] == []


def test_a_cr_only_sheet_toml_refuses_is_recovered_line_by_line_with_its_line_numbers():
    sheet = parse_sheet_text("[p1]\rtop = 1\rtop = 2\rw = [[.5 .5]\r [.25 .75]]\r")
    assert sheet.error is None
    assert sheet.tables["p1"]["top"] == BadValue("answered more than once (lines 2 and 3); keep one")
    assert sheet.tables["p1"]["w"] == "[[.5 .5]\n [.25 .75]]"


def test_text_that_is_not_toml_at_all_is_malformed():
    sheet = parse_sheet_text("this is not an answer sheet\nat all\n")
    assert sheet.error and "not a valid answer sheet" in sheet.error


# ------------------------------------------------------------------------------------------ reading: one part


def test_a_duplicate_key_invalidates_that_part_and_the_rest_is_read():
    sheet = parse_sheet_text("[p1]\ntop = 0.73\nweights = [[1, 0], [0, 1]]\ntop = 0.5\n")
    assert isinstance(sheet.tables["p1"]["top"], BadValue)
    assert "lines 2 and 4" in sheet.tables["p1"]["top"].message
    assert sheet.tables["p1"]["weights"] == [[1, 0], [0, 1]]


def test_a_table_given_twice_is_merged_when_its_keys_differ():
    sheet = parse_sheet_text("[p1]\ntop = 0.73\n[p2]\nhalf = 0.7\n[p1]\nweights = [[1]]\n")
    assert sheet.tables["p1"] == {"top": 0.73, "weights": [[1]]}


def test_a_statement_toml_refuses_is_kept_as_typed_text_and_the_rest_is_read():
    text = "[p1]\nweights = [[0.73, 0.27],\n  [0.27 0.73]]\ntop = 0.73\n[p2]\nhalf = 0.7\n"
    sheet = parse_sheet_text(text)
    assert sheet.tables["p1"]["weights"] == "[[0.73, 0.27],\n  [0.27 0.73]]"  # numpy's spacing: the matrix reader's job
    assert sheet.tables["p1"]["top"] == 0.73 and sheet.tables["p2"]["half"] == 0.7


def test_a_sheet_at_the_size_cap_of_unclosed_brackets_is_read_in_one_pass():
    """Every ``k = [1,`` line opens a bracket that never closes, so the whole file is one statement that
    grows line by line. Recounting its brackets at each new line took 10 s of CPU for this 256 KiB
    file; counted as lines arrive it takes milliseconds. The bound leaves a hundredfold margin."""
    import time

    text = "[p1]\n" + "".join(f"k{i} = [1,\n" for i in range(MAX_SHEET_BYTES // 10))
    start = time.process_time()
    sheet = parse_sheet_text(text[:MAX_SHEET_BYTES - 100])
    assert time.process_time() - start < 3.0
    assert isinstance(sheet.tables["p1"]["k0"], (BadValue, str))  # one unreadable part; nothing else


def test_a_broken_quoted_string_invalidates_only_its_part():
    text = "[p1]\nweights = \"[[0.73, 0.27],\n  [0.27 0.73]]\ntop = 0.73\n"
    sheet = parse_sheet_text(text)
    bad = sheet.tables["p1"]["weights"]
    assert isinstance(bad, BadValue) and bad.message.startswith("line 2:")
    assert sheet.tables["p1"]["top"] == 0.73


def test_a_bare_fullwidth_number_is_named_in_the_message():
    sheet = parse_sheet_text("[p3]\nparams = \uff11\uff12\n")
    part = AnswerPart(key="params", type="integer", value=12)
    result = grade_part(part, sheet.tables["p3"]["params"])
    assert result.status == "invalid" and "FULLWIDTH DIGIT ONE" in result.feedback


def test_nan_and_inf_are_kept_as_non_finite_markers():
    sheet = parse_sheet_text("[p1]\na = nan\nb = -inf\nc = +inf\nd = 1e999\n")
    assert sheet.tables["p1"] == {"a": NonFinite("nan"), "b": NonFinite("-inf"), "c": NonFinite("+inf"),
                                  "d": NonFinite("1e999")}
    assert sheet.tables["p1"]["b"].negative_infinity and not sheet.tables["p1"]["c"].negative_infinity


def test_keys_outside_problem_tables_and_unknown_parts_are_warnings(tmp_path):
    text = key_sheet(VARIANT).replace("[meta]", "stray = 1\n[meta]") + "\n[p1]\nextra = 3\n"
    report = grade_sheet(VARIANT, write(tmp_path, text))
    # [p1] is declared twice, so TOML refuses the file and it is re-read statement by statement
    warnings = " ".join(report.meta["warnings"])
    assert "'stray' ignored" in warnings and "no part 'extra'" in warnings
    assert report.score == 1.0


def test_a_sheet_for_another_variant_is_graded_with_a_warning(tmp_path):
    text = key_sheet(VARIANT).replace(VARIANT.variant_id, "someone-else")
    report = grade_sheet(VARIANT, write(tmp_path, text))
    assert report.score == 1.0 and any("someone-else" in w for w in report.meta["warnings"])


# ------------------------------------------------------------------------------------------ typed values


@pytest.mark.parametrize("text, value", [
    ("0.25", 0.25), ("[[1, 0], [0, 1]]", [[1, 0], [0, 1]]), ("true", True), ('"b"', "b"),
    ("exp(2)/(1+exp(2))", "exp(2)/(1+exp(2))"), ("(B, L, d)", "(B, L, d)"), ("124,439,808", "124,439,808"),
    ("a, c", "a, c"), ("  ", ""), ("-inf", NonFinite("-inf")), ("1 # comment", 1),
])
def test_parse_value_reads_toml_values_or_falls_back_to_text(text, value):
    assert parse_value(text) == value


def test_parse_value_cannot_smuggle_extra_keys():
    with pytest.raises(ValueError, match="one line"):
        parse_value("1\nother = 2")
    assert parse_value("1 other = 2") == "1 other = 2"


# ------------------------------------------------------------------------------------------ the fast reader

from problemgen.sheets.answersheet import _loads, _loads_simple  # noqa: E402

LINE_PIECES = st.sampled_from([
    "[p1]", "[p2]", "[meta]", "# comment", "", "top = ", "w = ", "k-1 = ", "x=", "1", "-0", "0.5", "-2.75e-3",
    "1E5", "01", "1.", ".5", "+1", "1_000", "nan", "inf", "-inf", "1e999", "true", "false", '"a b"', '"x\\"y"',
    '"\\u0041"', "'lit'", '"exp(2)/(1+exp(2))"', "[", "]", ", ", ",", "[[0.5, 0.25], [1, 0]]", '["a", "c"]',
    "[1, 2,]", "[]", "# trailing", "\t", " ", "=", "\r", "\u00e9", '"\u00e9"', "[[", "]]", "9" * 30,
])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(LINE_PIECES, max_size=5).map("".join), max_size=8).map("\n".join))
def test_the_fast_reader_agrees_with_tomllib_whenever_it_answers(text):
    fast = _loads_simple(text)
    if fast is None:
        return
    assert fast[0] == _loads(text)


SOURCE_LINES = st.one_of(
    st.sampled_from(["[p1]", "[p2]", "[0]", "[meta]", "", "\t", "# comment", "# [", "# ]", "# '[", '# "0,5"',
                     "# 124,439,808", "  # [[", "]", "0,5"]),
    st.builds("{} = {}".format, st.sampled_from(["w", "x", "k-1", "0"]),
              st.sampled_from(["[[0,5, 0,5]]", "[0,5]", "[[0.5, 0.5]]", '["0,5"]', '"0,5"', "[1,2]", "[1, 2]", "1",
                               '"[["', '["#", 1,2]', "[[1,2], [3, 4]]", '"a,b"'])),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(SOURCE_LINES, max_size=10).map("\n".join))
def test_sheets_without_digit_commas_in_values_need_no_array_sources(text):
    """The fast reader skips the statement scan of _keep_array_sources unless a value holds digit,digit:
    whenever it answers, the sheet is exactly what the scan would have made of it."""
    from problemgen.sheets.answersheet import _keep_array_sources, _split_tables

    fast = _loads_simple(text)
    if fast is None:
        return
    scanned = _keep_array_sources(_split_tables(fast[0], []), text)
    sheet = parse_sheet_text(text)
    assert sheet == scanned
    assert _sources(sheet) == _sources(scanned)


def _sources(sheet) -> dict:
    return {(table, key): getattr(value, "source", None)
            for table, values in sheet.tables.items() for key, value in values.items()}


def test_the_sheets_we_write_take_the_fast_path():
    assert _loads_simple(key_sheet(VARIANT)) == (_loads(key_sheet(VARIANT)), False)
    assert _loads_simple(blank_sheet(VARIANT)) is not None


@pytest.mark.parametrize("text", ["[p1]\na = 1\na = 2", "[p1]\n[p1]", "[p1]\na = nan", 'a = "\\u00e9"',
                                  "a = 1 # c", "a = [1,\n2]", "a = 'x'", "a = +1", "a = 1_000", "a.b = 1"])
def test_the_fast_reader_leaves_everything_unusual_to_tomllib(text):
    assert _loads_simple(text) is None


def test_a_long_digit_run_is_rejected_in_linear_time():
    """A hostile sheet line of many digits ending in a letter once took exponential time in the fast reader."""
    import time

    started = time.perf_counter()
    assert _loads_simple("x = " + "9" * 5000 + "a") is None
    assert _loads_simple("x = [" + "1, " * 2000 + "9" * 200 + "x]") is None
    assert time.perf_counter() - started < 1.0
