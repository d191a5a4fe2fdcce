"""The answer-sheet file (``answers.toml`` / ``key.toml``): writing blank and key sheets, reading them safely.

A sheet has one ``[meta]`` table and one table per problem (``[p1]``, ``[p2]`` …, as in ``variant.json``)
with one key per answer part; ``""`` means "not answered"::

    # problemgen answer sheet
    [meta]
    variant = "attention.weights/d1/s7"
    student = ""

    [p1]
    # weights: the attention weights A: a 2x2 matrix of numbers, each entry within ±0.005, as [[a11, a12], [a21, a22]]
    weights = ""

Reading treats the file as hostile data. The whole file is refused (``SheetAnswers.error``) when it is
a symlink or not a regular file, larger than :data:`MAX_SHEET_BYTES`, or not strict UTF-8 (a leading
byte-order mark is tolerated with a warning). Otherwise problems are confined to the part they touch:
when TOML parsing fails, the file is re-read statement by statement, so a duplicate key, a fullwidth
digit or a broken array makes that one part :class:`BadValue` and the rest is still graded.
``nan``/``inf`` come back as :class:`NonFinite` (only an additive mask may contain ``-inf``).
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from problemgen.answers import types
from problemgen.answers.text import NonFinite, SheetArray, check_ascii, describe_char  # noqa: F401 - re-exported
from problemgen.answers.text import ascii_hint as _ascii_hint
from problemgen.model.core import AnswerPart, ProblemgenError
from problemgen.userfiles import IsLink, Refused, TooLarge, read_regular

MAX_SHEET_BYTES = 256 * 1024
"""Largest accepted answer sheet; a worksheet's answers fit in a few kilobytes."""
MAX_TEXT_ANSWER = 64 * 1024
BOM = "\ufeff"


@dataclass(frozen=True)
class BadValue:
    """A part whose value could not be read from the file; ``message`` says why (the part is invalid)."""

    message: str


@dataclass(frozen=True)
class SheetAnswers:
    """What was read from a sheet: raw values per problem table, plus warnings or a whole-file error.

    ``meta_problems`` names each ``[meta]`` entry that was given twice or could not be read: it is left out
    of ``meta``, and whose sheet this is can then not be told from it, so grading says so (a warning, and
    a flag in class mode) instead of grading the sheet as if the line had never been there."""

    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    error: str | None = None
    meta_problems: tuple[str, ...] = ()


# ------------------------------------------------------------------------------------------ characters


def _first_non_ascii(text: str) -> str | None:
    for char in text:
        if not (" " <= char <= "~" or char in "\t\n\r"):
            return char
    return None


# ------------------------------------------------------------------------------------------ reading


def read_bytes(path: str | Path, limit: int = MAX_SHEET_BYTES) -> bytes:
    """Read a regular file without following a symlink, refusing more than ``limit`` bytes
    (``userfiles.read_regular``: a FIFO or device put in its place is refused, never waited on).

    Raises ``ProblemgenError`` (missing file) or ``ValueError`` (a file we refuse to read: symlink,
    not a regular file, too large).
    """
    path = Path(path)
    try:
        return read_regular(path, limit, follow_symlinks=False)
    except FileNotFoundError:
        raise ProblemgenError(f"{path}: no such file") from None
    except IsLink:
        raise ValueError(f"{path.name} is a symbolic link; submit the file itself") from None
    except TooLarge:
        raise ValueError(f"{path.name} is larger than {limit // 1024} KiB") from None
    except Refused as exc:
        raise ValueError(f"{path.name} {exc}") from None
    except OSError as exc:
        raise ValueError(f"{path.name}: cannot open ({exc.strerror})") from None


def decode(data: bytes, name: str = "answer sheet") -> tuple[str, list[str]]:
    """Strict UTF-8; a leading byte-order mark is dropped with a warning (some editors add one)."""
    try:
        text = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name} is not valid UTF-8 (bad byte at offset {exc.start}); save it as UTF-8") from None
    warnings = []
    if text.startswith(BOM):
        text = text[1:]
        warnings.append(f"{name} starts with a byte-order mark (ignored)")
    return text, warnings


def read_sheet(path: str | Path) -> SheetAnswers:
    """Read an answer sheet. A missing file raises ``ProblemgenError``; any other problem is reported
    in the result (``error`` for the whole file, ``BadValue`` for one part), never raised."""
    path = Path(path)
    try:
        text, warnings = decode(read_bytes(path), path.name)
    except ValueError as exc:
        return SheetAnswers(error=str(exc))
    sheet = parse_sheet_text(text)
    return SheetAnswers(sheet.tables, sheet.meta, tuple(warnings) + sheet.warnings, sheet.error, sheet.meta_problems)


def _parse_float(text: str) -> float | NonFinite:
    value = float(text)
    return value if math.isfinite(value) else NonFinite(text)


def _loads(text: str) -> dict:
    """``tomllib.loads`` with non-finite floats kept as :class:`NonFinite`; every failure is ``ValueError``."""
    try:
        return tomllib.loads(text, parse_float=_parse_float)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(str(exc)) from None
    except (RecursionError, MemoryError):
        raise ValueError("arrays nested too deeply") from None
    except ValueError:
        raise ValueError("a number has too many digits") from None


def parse_sheet_text(text: str) -> SheetAnswers:
    r"""Parse sheet text: the whole file at once, or statement by statement when that fails.

    Every line ending becomes ``\n`` first. An editor may end lines with a lone ``\r`` (old Mac), which
    TOML does not take as a line break, so such a sheet could not be read at all; ``\r\n`` (Windows)
    becomes ``\n`` too, so those sheets take the fast reader. The text never grows (the size caps hold),
    and a sheet without ``\r`` costs one scan.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    simple = _loads_simple(text)
    if simple is not None:
        data, digit_commas = simple
        sheet = _split_tables(data, [])
        return _keep_array_sources(sheet, text) if digit_commas else sheet
    try:
        data = _loads(text)
    except ValueError as exc:
        return _keep_array_sources(_recover(text, str(exc)), text)
    return _keep_array_sources(_split_tables(data, []), text)


_SIMPLE_HEADER = re.compile(r"\[([A-Za-z0-9_-]+)\]")
_SIMPLE_STATEMENT = re.compile(r"([A-Za-z0-9_-]+) *= *(.+)")
_SIMPLE_VALUE = re.compile(
    r"(?:[\[\], ]|true|false|-?(?>0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][+-]?[0-9]++)?|\"[ !#-\[\]-~]*+\")++")
"""Values whose JSON and TOML readings are identical: plain numbers, escape-free ASCII strings, booleans
and single-line arrays of them (no nan/inf, no escapes, no comments, no trailing commas).

Every repetition is possessive or atomic: a long digit run can then be split into numbers only one
way, so a hostile line such as ``x = 999…9a`` fails in linear time instead of trying every split."""


_SIMPLE_JSON = json.JSONDecoder(parse_float=_parse_float)
"""One decoder for every value (``json.loads`` with a ``parse_float`` builds a new one per call)."""


def _loads_simple(text: str) -> tuple[dict, bool] | None:
    """A fast reader for the plain sheets we write and most students return; None means "use tomllib".

    ``tomllib`` is pure Python and dominates class-mode grading time. Sheets made only of comments,
    ``[table]`` headers and single-line ``key = value`` statements whose value matches
    :data:`_SIMPLE_VALUE` are read with the C JSON parser instead; the grammar is a subset on which
    JSON and TOML agree value for value (a test checks this against tomllib). Anything else, including
    a repeated key or table, falls back to tomllib and its error handling.

    Returns (the data, whether a value holds ``digit,digit``). Only then can an array need its text
    kept (:func:`_keep_array_sources`): in this grammar a statement is one line and comments are whole
    lines, so no other text reaches an array's source (a test compares the two paths).
    """
    if "\r" in text:
        return None
    data: dict[str, Any] = {}
    table = data
    digit_commas = False
    for line in text.split("\n"):
        line = line.strip(" \t")
        if not line or line.startswith("#"):
            continue
        header = _SIMPLE_HEADER.fullmatch(line)
        if header:
            if header.group(1) in data:
                return None
            table = data[header.group(1)] = {}
            continue
        statement = _SIMPLE_STATEMENT.fullmatch(line)
        if not statement or statement.group(1) in table or not _SIMPLE_VALUE.fullmatch(statement.group(2)):
            return None
        try:
            table[statement.group(1)] = _SIMPLE_JSON.decode(statement.group(2))
        except (ValueError, RecursionError, MemoryError):
            return None
        digit_commas = digit_commas or _DIGIT_COMMA_DIGIT.search(statement.group(2)) is not None
    return data, digit_commas


def _split_tables(data: dict, warnings: list[str]) -> SheetAnswers:
    meta, problems = data.get("meta", {}), ()
    if not isinstance(meta, dict):
        meta, problems = {}, ("meta is not a table (so whose sheet this is was not checked)",)
    tables: dict[str, dict[str, Any]] = {}
    for name in sorted(data):
        value = data[name]
        if name == "meta":
            continue
        if isinstance(value, dict):
            tables[name] = value
        else:
            warnings.append(f"top-level key {name!r} ignored: answers belong under a problem table such as [p1]")
    return SheetAnswers(tables=tables, meta=meta, warnings=tuple(warnings), meta_problems=problems)


_HEADER = re.compile(r"^\s*\[\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\]\s*(#.*)?$")  # not " [0]", a row of a bare matrix
_KEY_LINE = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=")
_LINE_REF = re.compile(r"line (\d+)")


def _statements(text: str) -> tuple[list[tuple[str | None, str, int, list[str]]], list[int]]:
    """The file's ``key = value`` statements as (table, key, first line, lines), and the numbers of
    non-blank, non-comment lines that belong to none (a value may span lines while brackets are open)."""
    statements: list[tuple[str | None, str, int, list[str]]] = []
    table: str | None = None
    stray: list[int] = []
    unclosed = 0  # brackets the last statement's value has opened and not closed, counted line by line
    for number, line in enumerate(text.split("\n"), start=1):
        header, key = _HEADER.match(line), _KEY_LINE.match(line)
        if statements and statements[-1][0] == table and unclosed > 0:
            statements[-1][3].append(line)  # " [F]" inside a bare matrix is a row, not a table header
            unclosed += _bracket_balance(line)
        elif header:
            table = header.group(1)
        elif key:
            statements.append((table, key.group(1), number, [line]))
            unclosed = _bracket_balance(line.split("=", 1)[1])
        elif statements and statements[-1][0] == table:
            statements[-1][3].append(line)
            unclosed += _bracket_balance(line)
        elif line.strip() and not line.lstrip().startswith("#"):
            stray.append(number)
    return statements, stray


_DIGIT_COMMA_DIGIT = re.compile(r"\d,\d")
"""``0,5``: in a TOML array two integers, in a student's hand perhaps one decimal (see ``SheetArray``)."""


def _keep_array_sources(sheet: SheetAnswers, text: str) -> SheetAnswers:
    """Wrap each array answer written with ``digit,digit`` as a :class:`SheetArray` holding its text.

    TOML reads ``w = [[0,5, 0,5]]`` as integers; only the text lets the matrix type say "decimal
    comma" (invalid) instead of "wrong shape", as it does for the same typed line.
    """
    if not _DIGIT_COMMA_DIGIT.search(text):
        return sheet  # the common case costs one scan
    for table, key, _, lines in _statements(text)[0]:
        values = sheet.tables.get(table) if table else None
        value = values.get(key) if isinstance(values, dict) else None
        source = re.sub(r'"[^"\n]*"|#[^\n]*', "", "\n".join(lines).split("=", 1)[1]).strip()  # no text, no comments
        if isinstance(value, list) and _DIGIT_COMMA_DIGIT.search(source):
            values[key] = SheetArray(value, source)
    return sheet


def _recover(text: str, whole_error: str) -> SheetAnswers:
    """Re-read a file TOML refused, one ``key = value`` statement at a time.

    Statements that parse are kept; a statement that does not becomes a :class:`BadValue` for its key,
    a key given twice becomes a ``BadValue`` naming both lines. Lines that belong to no statement are
    reported as warnings. If nothing at all can be read, the whole file is malformed.
    """
    statements, stray = _statements(text)
    if not statements:
        return SheetAnswers(error=f"not a valid answer sheet: {_explain(text, whole_error)}")
    data: dict[str, dict[str, Any]] = {}
    first_seen: dict[tuple[str | None, str], int] = {}
    for table, key, start, lines in statements:
        target = data.setdefault(table or "", {})
        if (table, key) in first_seen:
            given = "given" if table == "meta" else "answered"
            target[key] = BadValue(f"{given} more than once (lines {first_seen[(table, key)]} and {start}); keep one")
            continue
        first_seen[(table, key)] = start
        chunk = "\n".join(lines)
        try:
            target[key] = _loads(chunk)[key]
        except (ValueError, KeyError) as exc:
            unquoted = _unquoted_value(chunk)
            if unquoted is not None:  # e.g. w = [[.5 .5] [.25 .75]]: the answer types read it as typed text
                target[key] = unquoted
                continue
            message = _LINE_REF.sub(lambda m: f"line {int(m.group(1)) + start - 1}", str(exc))
            target[key] = BadValue(f"line {start}: cannot read the value: {_explain(chunk, message)}")
    warnings = [f"line {n} ignored: not part of any answer" for n in stray]
    root = data.pop("", {})
    tables = {name: values for name, values in data.items() if name != "meta"}
    meta = {k: v for k, v in data.get("meta", {}).items() if not isinstance(v, BadValue)}
    meta_problems = tuple(f"[meta] {str(k)[:40]}: {v.message} (so whose sheet this is was not checked)"
                          for k, v in data.get("meta", {}).items() if isinstance(v, BadValue))
    for name in sorted(root):
        warnings.append(f"top-level key {name!r} ignored: answers belong under a problem table such as [p1]")
    return SheetAnswers(tables=tables, meta=meta, warnings=tuple(warnings), meta_problems=meta_problems)


_QUOTED = re.compile(r'"[^"\n]*"|\'[^\'\n]*\'')


def _bracket_balance(line: str) -> int:
    """Brackets a line of a value opens minus those it closes, quoted text ignored. Quotes never span lines,
    so a statement's balance is the sum over its lines: counted as lines arrive, one pass over the file
    (recounting the whole statement at each line made a 256 KiB sheet of unclosed brackets take 10 s)."""
    value = _QUOTED.sub("", line)
    return value.count("[") - value.count("]")


def _unquoted_value(chunk: str) -> str | None:
    """The text after ``key =`` of a statement TOML refused, read as the student's typed answer.

    The same reader then serves the sheet and the quiz line: ``x = −0.5``, ``s = (B, L, d)`` or a
    numpy-printed matrix over several lines need no quotes. A broken quoted string, or nothing after
    ``=``, stays unreadable (None): its intent is not clear.
    """
    value = chunk.split("=", 1)[1]
    lines = [line for line in value.split("\n") if not line.strip().startswith("#")]
    text = "\n".join(lines).strip()
    if " #" in text.split("\n")[-1]:
        text = text.rsplit(" #", 1)[0].rstrip()
    if not text or text[0] in "\"'" or len(text) > MAX_TEXT_ANSWER:
        return None
    return text


def _explain(text: str, message: str) -> str:
    """Prefer naming a look-alike character over TOML's generic 'invalid value'."""
    char = _first_non_ascii(text.split("#", 1)[0] if "\n" not in text else text)
    if char is not None and char != BOM:
        return f"non-ASCII character {describe_char(char)}: {_ascii_hint(char)}"
    return message


def parse_value(text: str) -> Any:
    """Read one typed answer (the quiz): a TOML value when it is one (``0.25``, ``[[1, 0]]``, ``true``,
    ``"b"``), otherwise the trimmed text itself (``exp(2)/(1+exp(2))``, ``(B, L, d)``, ``124,439,808``)."""
    if not isinstance(text, str):
        raise ValueError("expected text")
    if len(text) > MAX_TEXT_ANSWER:
        raise ValueError(f"answer longer than {MAX_TEXT_ANSWER // 1024} KiB")
    text = text.strip()
    if "\n" in text or "\r" in text:
        raise ValueError("type the answer on one line")
    if not text:
        return ""
    try:
        return _loads(f"answer = {text}")["answer"]
    except (ValueError, KeyError):
        return text


# ------------------------------------------------------------------------------------------ writing


def toml_value(value: Any) -> str:
    """Serialise a sheet value (str, int, float, bool, nested lists) as a TOML value."""
    if type(value) is list:  # a key's commonest value (a matrix, a row), sent straight to the list's path
        return _toml_array(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _json_string(value).replace("\x7f", "\\u007f") if value else '""'  # "": every blank answer
    if isinstance(value, (list, tuple)):
        return _toml_array(value)
    raise TypeError(f"cannot write {type(value).__name__} to an answer sheet")


def _toml_array(value: list | tuple) -> str:
    """A list or tuple as a TOML array: a row of numbers or of booleans in one C join, anything else element
    by element (a matrix: row by row)."""
    kinds = set(map(type, value))
    if kinds <= _NUMBER_TYPES:  # a row of numbers, a key's commonest value
        return "[" + ", ".join(map(repr, value)) + "]"
    if kinds == {bool}:  # a row of a boolean mask
        return "[" + ", ".join([_BOOLEANS[v] for v in value]) + "]"
    return "[" + ", ".join([toml_value(v) for v in value]) + "]"


_NUMBER_TYPES = {int, float}
"""Exactly these types (not bool, not a subclass) are written by ``repr``: for them ``toml_value`` is
``repr`` (TOML's inf and nan are spelled as Python prints them)."""
_BOOLEANS = {False: "false", True: "true"}
_json_string = json.JSONEncoder(ensure_ascii=False).encode
"""``json.dumps(value, ensure_ascii=False)`` without building an encoder for every string."""


def key_value(part: AnswerPart) -> Any:
    """The TOML value a perfect student would write for ``part`` (used for key.toml and self-checks)."""
    return types.get(part.type).key_value(part)


def describe_format(part: AnswerPart) -> str:
    """How to write the answer to ``part``, with its tolerance and a neutral example (not the answer)."""
    return types.get(part.type).describe(part)


def _comment(text: str) -> str:
    """One-line TOML comment (newlines folded so a label can never start a new statement)."""
    return "# " + " ".join(str(text).split())


def _sheets(variant, headers: tuple[str, ...], answers: tuple[Callable[[AnswerPart], str], ...]) -> list[str]:
    """Sheets of ``variant`` that differ only in their first line and in each answer (``answers``: the TOML
    text of a part's answer on each sheet), written in one pass: the comment lines, most of a sheet's cost,
    are made once for all of them."""
    sheets = [[header, "# One table per problem, one line per answer. \"\" means not answered.",
               "# Write answers as on paper: -4.25, -17/4, 2e-3, [[-4.25, 1/3], [2e-3, -7]], (N, C, W); quotes are optional.",
               "[meta]", f"variant = {toml_value(variant.variant_id)}",
               f"student = {toml_value(variant.student or '')}"]
              for header in headers]
    for sheet_problem in variant.problems:
        problem = sheet_problem.problem
        points = f"{sheet_problem.points:g} point" + ("" if sheet_problem.points == 1 else "s")
        heading = ["", _comment(f"{sheet_problem.id} ({points}): {problem.title}"), f"[{sheet_problem.id}]"]
        for lines in sheets:
            lines += heading
        for part in problem.parts:
            label = f"{part.key}: {part.label}" if part.label else part.key
            comment = _comment(f"{label}: {describe_format(part)}")
            for lines, answer in zip(sheets, answers):
                lines += (comment, f"{part.key} = {answer(part)}")
    return ["\n".join(lines) + "\n" for lines in sheets]


BLANK_HEADER, KEY_HEADER = "# problemgen answer sheet", "# problemgen answer key"


def _unanswered(part: AnswerPart) -> str:
    """The TOML text of a blank answer (``toml_value("")``)."""
    return '""'


def _key_answer(part: AnswerPart) -> str:
    """The TOML text of the key's answer (``toml_value(key_value(part))``)."""
    return toml_value(key_value(part))


def blank_sheet(variant) -> str:
    """The answer sheet students fill in for a ``WorksheetVariant`` (every answer ``""``)."""
    return _sheets(variant, (BLANK_HEADER,), (_unanswered,))[0]


def key_sheet(variant) -> str:
    """The same sheet filled with the key values (grading it scores 100%)."""
    return _sheets(variant, (KEY_HEADER,), (_key_answer,))[0]


def blank_and_key_sheets(variant) -> tuple[str, str]:
    """``(blank_sheet(variant), key_sheet(variant))`` in one pass, for a class set that writes both."""
    blank, key = _sheets(variant, (BLANK_HEADER, KEY_HEADER), (_unanswered, _key_answer))
    return blank, key
