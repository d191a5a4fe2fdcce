"""The answer-sheet file (``answers.toml`` / ``key.toml``): writing blank and key sheets, reading them safely.

A sheet has one ``[meta]`` table and one table per problem (``[p1]``, ``[p2]`` …, as in ``variant.json``)
with one key per answer part; ``""`` means "not answered"::

    # problemgen answer sheet
    [meta]
    variant = "attention.weights/d1/s7"
    student = ""

    [p1]
    # weights: the attention weights A: matrix 2x2 of numbers, each within ±0.005, e.g. [[0.5, 0.5], [0.25, 0.75]]
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
import os
import re
import stat
import tomllib
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from problemgen.model.core import AnswerPart, ProblemgenError, _flatten
from problemgen.answers.formatting import tolerance_text

MAX_SHEET_BYTES = 256 * 1024
"""Largest accepted answer sheet; a worksheet's answers fit in a few kilobytes."""
MAX_TEXT_ANSWER = 64 * 1024
BOM = "\ufeff"


@dataclass(frozen=True)
class NonFinite:
    """A TOML float that is not a finite number (``nan``, ``inf``, ``-inf``, ``1e999``), kept as written."""

    text: str

    @property
    def negative_infinity(self) -> bool:
        return float(self.text) == -math.inf


@dataclass(frozen=True)
class BadValue:
    """A part whose value could not be read from the file; ``message`` says why (the part is invalid)."""

    message: str


@dataclass(frozen=True)
class SheetAnswers:
    """What was read from a sheet: raw values per problem table, plus warnings or a whole-file error."""

    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    error: str | None = None


# ------------------------------------------------------------------------------------------ characters


def describe_char(char: str) -> str:
    """``'１' (U+FF11 FULLWIDTH DIGIT ONE)``: how a rejected character is named in messages."""
    return f"{char!r} (U+{ord(char):04X} {unicodedata.name(char, 'unnamed character')})"


def check_ascii(text: str, what: str = "answer") -> None:
    """Reject non-ASCII and control characters, naming the first offender and what to type instead.

    Look-alikes (fullwidth or Arabic-Indic digits, the Unicode minus sign, Cyrillic letters) could make
    two different answers look the same on screen, so they are refused with a message rather than
    silently normalised. Raises ``ValueError``.
    """
    for position, char in enumerate(text, start=1):
        if " " <= char <= "~" or char == "\t":
            continue
        raise ValueError(f"{what} has a non-ASCII character {describe_char(char)} at position {position}: "
                         f"{_ascii_hint(char)}")


def _ascii_hint(char: str) -> str:
    if char in "\u2212\u2010\u2011\u2012\u2013\u2014\ufe63\uff0d":
        return "type the ASCII hyphen-minus '-'"
    if unicodedata.category(char) == "Nd":
        return "type the ASCII digits 0-9"
    if char in "\u00d7\u22c5\u00b7":
        return "type '*' for multiplication"
    if ord(char) < 0x20 or ord(char) == 0x7F:
        return "remove control characters"
    return "use plain ASCII letters, digits and symbols"


def _first_non_ascii(text: str) -> str | None:
    for char in text:
        if not (" " <= char <= "~" or char in "\t\n\r"):
            return char
    return None


# ------------------------------------------------------------------------------------------ reading


def read_bytes(path: str | Path, limit: int = MAX_SHEET_BYTES) -> bytes:
    """Read a regular file without following a symlink, refusing more than ``limit`` bytes.

    Raises ``ProblemgenError`` (missing file) or ``ValueError`` (a file we refuse to read: symlink,
    not a regular file, too large).
    """
    path = Path(path)
    if path.is_symlink():
        raise ValueError(f"{path.name} is a symbolic link; submit the file itself")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ProblemgenError(f"{path}: no such file") from None
    except OSError as exc:
        raise ValueError(f"{path.name}: cannot open ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{path.name} is not a regular file")
        if info.st_size > limit:
            raise ValueError(f"{path.name} is larger than {limit // 1024} KiB")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ValueError(f"{path.name} is larger than {limit // 1024} KiB")
    return data


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
    return SheetAnswers(sheet.tables, sheet.meta, tuple(warnings) + sheet.warnings, sheet.error)


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
    """Parse sheet text: the whole file at once, or statement by statement when that fails."""
    data = _loads_simple(text)
    if data is None:
        try:
            data = _loads(text)
        except ValueError as exc:
            return _recover(text, str(exc))
    return _split_tables(data, [])


_SIMPLE_HEADER = re.compile(r"\[([A-Za-z0-9_-]+)\]")
_SIMPLE_STATEMENT = re.compile(r"([A-Za-z0-9_-]+) *= *(.+)")
_SIMPLE_VALUE = re.compile(
    r"(?:[\[\], ]|true|false|-?(?>0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][+-]?[0-9]++)?|\"[ !#-\[\]-~]*+\")++")
"""Values whose JSON and TOML readings are identical: plain numbers, escape-free ASCII strings, booleans
and single-line arrays of them (no nan/inf, no escapes, no comments, no trailing commas).

Every repetition is possessive or atomic: a long digit run can then be split into numbers only one
way, so a hostile line such as ``x = 999…9a`` fails in linear time instead of trying every split."""


def _loads_simple(text: str) -> dict | None:
    """A fast reader for the plain sheets we write and most students return; None means "use tomllib".

    ``tomllib`` is pure Python and dominates class-mode grading time. Sheets made only of comments,
    ``[table]`` headers and single-line ``key = value`` statements whose value matches
    :data:`_SIMPLE_VALUE` are read with the C JSON parser instead; the grammar is a subset on which
    JSON and TOML agree value for value (a test checks this against tomllib). Anything else, including
    a repeated key or table, falls back to tomllib and its error handling.
    """
    if "\r" in text:
        return None
    data: dict[str, Any] = {}
    table = data
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
            table[statement.group(1)] = json.loads(statement.group(2), parse_float=_parse_float)
        except (ValueError, RecursionError, MemoryError):
            return None
    return data


def _split_tables(data: dict, warnings: list[str]) -> SheetAnswers:
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    tables: dict[str, dict[str, Any]] = {}
    for name in sorted(data):
        value = data[name]
        if name == "meta":
            continue
        if isinstance(value, dict):
            tables[name] = value
        else:
            warnings.append(f"top-level key {name!r} ignored: answers belong under a problem table such as [p1]")
    return SheetAnswers(tables=tables, meta=meta, warnings=tuple(warnings))


_HEADER = re.compile(r"^\s*\[\s*([A-Za-z0-9_-]+)\s*\]\s*(#.*)?$")
_KEY_LINE = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=")
_LINE_REF = re.compile(r"line (\d+)")


def _recover(text: str, whole_error: str) -> SheetAnswers:
    """Re-read a file TOML refused, one ``key = value`` statement at a time.

    Statements that parse are kept; a statement that does not becomes a :class:`BadValue` for its key,
    a key given twice becomes a ``BadValue`` naming both lines. Lines that belong to no statement are
    reported as warnings. If nothing at all can be read, the whole file is malformed.
    """
    statements: list[tuple[str | None, str, int, list[str]]] = []  # (table, key, first line, lines)
    table: str | None = None
    stray: list[int] = []
    for number, line in enumerate(text.split("\n"), start=1):
        header, key = _HEADER.match(line), _KEY_LINE.match(line)
        if header:
            table = header.group(1)
        elif key:
            statements.append((table, key.group(1), number, [line]))
        elif statements and statements[-1][0] == table:
            statements[-1][3].append(line)
        elif line.strip() and not line.lstrip().startswith("#"):
            stray.append(number)
    if not statements:
        return SheetAnswers(error=f"not a valid answer sheet: {_explain(text, whole_error)}")
    data: dict[str, dict[str, Any]] = {}
    first_seen: dict[tuple[str | None, str], int] = {}
    for table, key, start, lines in statements:
        target = data.setdefault(table or "", {})
        if (table, key) in first_seen:
            target[key] = BadValue(f"answered more than once (lines {first_seen[(table, key)]} and {start}); keep one")
            continue
        first_seen[(table, key)] = start
        chunk = "\n".join(lines)
        try:
            target[key] = _loads(chunk)[key]
        except (ValueError, KeyError) as exc:
            message = _LINE_REF.sub(lambda m: f"line {int(m.group(1)) + start - 1}", str(exc))
            target[key] = BadValue(f"line {start}: cannot read the value: {_explain(chunk, message)}")
    warnings = [f"line {n} ignored: not part of any answer" for n in stray]
    root = data.pop("", {})
    tables = {name: values for name, values in data.items() if name != "meta"}
    meta = {k: v for k, v in data.get("meta", {}).items() if not isinstance(v, BadValue)}
    for name in sorted(root):
        warnings.append(f"top-level key {name!r} ignored: answers belong under a problem table such as [p1]")
    return SheetAnswers(tables=tables, meta=meta, warnings=tuple(warnings))


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
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to an answer sheet")


def key_value(part: AnswerPart) -> Any:
    """The TOML value a perfect student would write for ``part`` (used for key.toml and self-checks)."""
    if part.type == "integer":
        return int(part.value)
    if part.type == "number":
        return float(part.value)
    if part.type == "shape":
        return "(" + ", ".join(str(d) for d in part.value) + ")"
    if part.type == "choice":
        ids = sorted(str(v) for v in part.value)
        return ids if part.spec.get("multiple") else ids[0]
    if part.type == "mask":
        return _mask_in(part.value, part.spec.get("representation", "bool"))
    if part.type == "term":
        return str(part.value[0]) if isinstance(part.value, list) else str(part.value)
    return part.value  # matrix (nested numbers) and expression (the exact string)


def _mask_in(value: Any, representation: str) -> Any:
    if isinstance(value, list):
        return [_mask_in(v, representation) for v in value]
    allowed = bool(value)
    return {"bool": allowed, "01": int(allowed), "additive": 0 if allowed else "-inf"}[representation]


def _dims_text(shape: tuple[int, ...]) -> str:
    return "x".join(str(n) for n in shape)


def _layout(shape: tuple[int, ...]) -> str:
    """The bracket layout of a matrix with named entries, e.g. [[a11, a12], [a21, a22]] (not the answer)."""
    if len(shape) != 2:
        return "nested arrays, one per row"
    rows, cols = shape

    def row(i: int) -> str:
        names = [f"a{i}{j}" for j in range(1, cols + 1)]
        return "[" + ", ".join(names if cols <= 4 else names[:2] + ["...", names[-1]]) + "]"

    body = [row(i) for i in range(1, rows + 1)]
    return "[" + ", ".join(body if rows <= 3 else body[:2] + ["...", body[-1]]) + "]"


def describe_format(part: AnswerPart) -> str:
    """How to write the answer to ``part``, with its tolerance and a neutral example (not the answer)."""
    kind = part.type
    if kind == "number":
        extra = ", or an exact expression such as \"1/(1+exp(2))\"" if part.exact else ""
        return f"a number, {tolerance_text(part)}{extra}, e.g. 0.125"
    if kind == "integer":
        return "a whole number, exact, e.g. 124439808 or \"124,439,808\""
    if kind == "matrix":
        shape, _ = _flatten(part.value)
        if len(shape) == 1:
            return f"a vector of {shape[0]} numbers, each {tolerance_text(part)}, e.g. [0.1, 0.2, 0.7]"
        if len(shape) == 2 and shape[0] == 1:
            return (f"a 1x{shape[1]} matrix (one row inside double brackets), each entry {tolerance_text(part)}, "
                    f"e.g. [[0.1, 0.2, 0.7]]")
        return f"a {_dims_text(shape)} matrix of numbers, each entry {tolerance_text(part)}, as {_layout(shape)}"
    if kind == "shape":
        numbers = ", or the numbers the problem gave" if part.spec.get("dims") else ""
        return f"a shape, dimensions in order, as names{numbers} (a product as C*W), e.g. \"(N, C, W)\""
    if kind == "expression":
        decimals = (f"; decimals {tolerance_text(part)} are accepted" if part.spec.get("allow_decimal")
                    else "; decimals are not accepted")
        return ("an exact expression (numbers, + - * / ^, parentheses, exp, log, sqrt, pi, e), "
                f"e.g. \"1/(1+exp(2))\"{decimals}")
    if kind == "choice":
        ids = ", ".join(str(o["id"]) for o in part.spec.get("options", ()))
        if part.spec.get("multiple"):
            return (f"every correct option among {ids}, e.g. [\"a\", \"c\"] "
                    "(partial credit: right picks minus wrong picks)")
        return f"one option among {ids}, e.g. \"b\""
    if kind == "mask":
        shape, _ = _flatten(part.value)
        size = _dims_text(shape)
        rep = part.spec.get("representation", "bool")
        if rep == "01":
            return f"a {size} mask of 0/1 (1 = may attend), e.g. [[1, 0], [1, 1]]"
        if rep == "additive":
            return f"a {size} additive mask of 0 (may attend) and \"-inf\" (blocked), e.g. [[0, \"-inf\"], [0, 0]]"
        return f"a {size} mask of true/false (true = may attend), e.g. [[true, false], [true, true]]"
    return "a word or short phrase, e.g. \"dropout\""


def _comment(text: str) -> str:
    """One-line TOML comment (newlines folded so a label can never start a new statement)."""
    return "# " + " ".join(str(text).split())


def _sheet(variant, header: str, value_of) -> str:
    lines = [header, "# One table per problem, one line per answer. \"\" means not answered.",
             "# Numbers are plain (0.25); expressions, shapes and choices go in quotes.",
             "[meta]", f"variant = {toml_value(variant.variant_id)}",
             f"student = {toml_value(variant.student or '')}"]
    for sheet_problem in variant.problems:
        problem = sheet_problem.problem
        points = f"{sheet_problem.points:g} point" + ("" if sheet_problem.points == 1 else "s")
        lines += ["", _comment(f"{sheet_problem.id} ({points}): {problem.title}"),
                  f"[{sheet_problem.id}]"]
        for part in problem.parts:
            label = f"{part.key}: {part.label}" if part.label else part.key
            lines.append(_comment(f"{label}: {describe_format(part)}"))
            lines.append(f"{part.key} = {toml_value(value_of(part))}")
    return "\n".join(lines) + "\n"


def blank_sheet(variant) -> str:
    """The answer sheet students fill in for a ``WorksheetVariant`` (every answer ``""``)."""
    return _sheet(variant, "# problemgen answer sheet", lambda part: "")


def key_sheet(variant) -> str:
    """The same sheet filled with the key values (grading it scores 100%)."""
    return _sheet(variant, "# problemgen answer key", key_value)
