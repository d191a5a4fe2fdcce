"""Reading arrays (vectors, matrices, masks) the ways people write them, and naming their entries.

One reader turns any of these into nested lists of entries, the entries left as text for the answer
type to read (a number, ``1/sqrt(2)``, ``T``, ``-inf``):

- Python/JSON lists ``[[0.5, 0.5], [0.25, 0.75]]`` and tuples ``((0.5, 0.5), (0.25, 0.75))``, with or
  without trailing commas;
- numpy's printed form ``[[0.5 0.5]\\n [0.25 0.75]]`` and ``array([[0.5, 0.5], [0.25, 0.75]])``;
- MATLAB rows ``[1 -1; 2 0]`` (a space before a sign starts a new entry, as in MATLAB and numpy);
- bare rows on separate lines ``0.5 0.5\\n0.25 0.75`` (or separated by ``;``).

Where spaces or tabs separate the entries, a comma between two digits (``0,5 0,25``) can only be a
decimal comma: the answer is invalid, with the fix.

Inside an entry, parentheses group (``exp(2)/(1+exp(2))``); a parenthesis opens a tuple only when a
comma sits directly inside it. Nothing is evaluated here.
"""

from __future__ import annotations

import re
from typing import Any

from problemgen.answers.text import InvalidAnswer, clean

MAX_ENTRIES = 100_000
MAX_NESTING = 8
MAX_LISTED_ENTRIES = 6
_WRAPPER = re.compile(r"(?:np\.|numpy\.|torch\.)?(?:array|tensor|asarray|matrix)\((.*?)(?:,\s*dtype\s*=\s*[\w.]+)?\)",
                      re.DOTALL)
_OPEN, _CLOSE = "([", ")]"


# ------------------------------------------------------------------------------------------ text → nested lists


def read_array_text(text: str, what: str = "answer") -> list:
    """Nested lists of entry texts from any notation in the module doc; InvalidAnswer when ambiguous."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # a lone CR (old Mac line end) ends a row too
    lines = [clean(line, what) for line in text.split("\n")]
    body = "\n".join(lines).strip()
    wrapper = _WRAPPER.fullmatch(body)
    if wrapper:
        body = wrapper.group(1).strip()
    _check_brackets(body)
    if body[:1] in _OPEN and _closing(body, 0) == len(body) - 1 and (body[0] == "[" or _is_tuple(body[1:-1])):
        return _group(body[1:-1], 1)
    if "\n" in body and ";" not in body:  # bare rows on separate lines
        return [_group(line, 1) for line in body.split("\n") if line.strip()]
    return _group(body, 1)


def _check_brackets(text: str) -> None:
    """Say where bracketing breaks ("the '[' at position 3 is never closed")."""
    stack: list[tuple[str, int]] = []
    for position, char in enumerate(text, start=1):
        if char in _OPEN:
            stack.append((char, position))
            if len(stack) > MAX_NESTING * 4:
                raise InvalidAnswer(f"brackets nested more than {MAX_NESTING * 4} deep")
        elif char in _CLOSE:
            expected = _OPEN[_CLOSE.index(char)]
            if not stack or stack[-1][0] != expected:
                raise InvalidAnswer(f"read up to position {position}: the {char!r} there closes nothing; "
                                    "check the brackets, e.g. [[a, b], [c, d]]")
            stack.pop()
    if stack:
        char, position = stack[-1]
        raise InvalidAnswer(f"the {char!r} at position {position} is never closed; "
                            "check the brackets, e.g. [[a, b], [c, d]]")


def _closing(text: str, start: int) -> int:
    """Index of the bracket closing the one at ``start`` (brackets are known to balance)."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in _OPEN:
            depth += 1
        elif text[i] in _CLOSE:
            depth -= 1
            if depth == 0:
                return i
    return len(text)


def _top_level(text: str) -> list[tuple[int, str]]:
    """(index, char) of the separators ``,`` ``;`` and newlines outside any bracket."""
    found, depth = [], 0
    for i, char in enumerate(text):
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
        elif depth == 0 and char in ",;\n":
            found.append((i, char))
    return found


def _is_tuple(inner: str) -> bool:
    return any(char == "," for _, char in _top_level(inner))


def _split(text: str, separators: str) -> list[str]:
    pieces, start = [], 0
    for i, char in _top_level(text):
        if char in separators:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    return pieces


def _group(body: str, depth: int) -> list:
    """The items of one bracketed group (or of bare text): nested groups or entry texts."""
    if depth > MAX_NESTING:
        raise InvalidAnswer(f"arrays nested more than {MAX_NESTING} deep")
    seps = {char for _, char in _top_level(body)}
    if ";" in seps:  # MATLAB rows: [1 -1; 2 0]
        rows = [row for row in _split(body, ";\n") if row.strip()]
        return [_group(row, depth + 1) for row in rows]
    if "," in seps:
        items = _split(body, ",")
        if len(items) > 1 and not items[-1].strip():
            items.pop()  # a trailing comma: [1, 2,]
        if any(not item.strip() for item in items):
            raise InvalidAnswer("two commas with nothing between them; write one entry between commas")
        _refuse_spaced_decimal_commas(items)
    else:
        items = _spaced_items(body)
    return [_item(item.strip(), depth) for item in items]


def _refuse_spaced_decimal_commas(items: list[str]) -> None:
    """Raise InvalidAnswer for ``0,5 0,25``: a comma between two digits where spaces (or tabs) separate entries.

    Split at its commas, such a row holds items like ``5 0``, and was read as more entries than were written
    (a false shape error for a tab-separated paste from a decimal-comma spreadsheet, or MATLAB
    ``[0,5 0,25; 0,1 0,2]``). With spaces separating the entries, such a comma can only be a decimal comma.
    """
    pairs = [i for i in range(len(items) - 1) if items[i][-1:].isdigit() and items[i + 1][:1].isdigit()]
    if pairs and any(len(_spaced_items(item)) > 1 for item in items):
        left, right = items[pairs[0]], items[pairs[0] + 1]
        raise decimal_comma_error(f"{_spaced_items(left)[-1]},{_spaced_items(right)[0]}",
                                  "where spaces or tabs separate the entries")


def decimal_comma_error(token: str, reading: str) -> InvalidAnswer:
    """The one message for a decimal comma in an array (``token`` as written, e.g. ``0,5``): how it was read
    and the fix."""
    return InvalidAnswer(f"read {token!r} {reading}: write the decimal point as '.', e.g. {token.replace(',', '.')}")


def _item(text: str, depth: int) -> Any:
    if text[:1] == "[" and _closing(text, 0) == len(text) - 1:
        return _group(text[1:-1], depth + 1)
    if text[:1] == "(" and _closing(text, 0) == len(text) - 1 and _is_tuple(text[1:-1]):
        return _group(text[1:-1], depth + 1)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]  # a quoted entry, as in a TOML array: ["1/2", "-inf"]
    if re.search(r"[\[\]]", text):
        raise InvalidAnswer(f"could not read {_short(text)!r} as one entry: separate entries and rows with "
                            "commas, e.g. [[a, b], [c, d]]")
    return text


_OPERATOR_END = re.compile(r"[-+*/^(]$")
_OPERATOR_START = re.compile(r"^(?:[*/^)]|[-+]$)")


def _spaced_items(body: str) -> list[str]:
    """Entries separated by spaces (numpy, MATLAB): ``0.5 0.5``; ``1 -1`` is two entries, ``1 - 1`` one."""
    tokens, depth, current = [], 0, ""
    for char in body:
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
        if depth == 0 and char.isspace():
            if current:
                tokens.append(current)
            current = ""
        else:
            current += char
    if current:
        tokens.append(current)
    items: list[str] = []
    for token in tokens:
        if items and (_OPERATOR_END.search(items[-1]) or _OPERATOR_START.search(token)):
            items[-1] += " " + token
        else:
            items.append(token)
    return items


def _short(text: str, limit: int = 30) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ------------------------------------------------------------------------------------------ structure


def structure(raw: Any, depth: int = 0) -> tuple[tuple[int, ...], list[Any]]:
    """(shape, flat entries) of nested lists; ragged or too-deep nesting is InvalidAnswer."""
    if not isinstance(raw, list):
        return (), [raw]
    if depth >= MAX_NESTING:
        raise InvalidAnswer(f"arrays nested more than {MAX_NESTING} deep")
    if not raw:
        return (0,), []
    if not any(isinstance(item, list) for item in raw):  # a vector, or one row of a matrix
        if len(raw) > MAX_ENTRIES:
            raise InvalidAnswer(f"more than {MAX_ENTRIES} entries")
        return (len(raw),), list(raw)
    shapes, flat = [], []
    for item in raw:
        shape, entries = structure(item, depth + 1)
        shapes.append(shape)
        flat.extend(entries)
        if len(flat) > MAX_ENTRIES:
            raise InvalidAnswer(f"more than {MAX_ENTRIES} entries")
    if len(set(shapes)) != 1:
        first = shapes[0]
        other = next(i for i, s in enumerate(shapes) if s != first)
        raise InvalidAnswer(f"rows of different lengths: row 1 has {_count(first)}, row {other + 1} has "
                            f"{_count(shapes[other])}; every row needs the same number of entries")
    return (len(raw), *shapes[0]), flat


def plain_entries(raw: Any, shape: tuple[int, ...]) -> list | None:
    """The flat entries of ``raw`` when it is a plain list (for a vector) or list of lists (for a matrix)
    with exactly ``shape``'s rows and columns; None for anything else. The entries are not looked at:
    the caller checks each one's type, which refuses a nested list too.

    The sheets we hand out come back as such arrays, and for them :func:`structure` gives this; the
    answer types take this shortcut first (the same reading, a test compares them) and leave the rest,
    a :class:`SheetArray` included, to the general reader.
    """
    if type(raw) is not list or not 0 < len(shape) <= 2 or len(raw) != shape[0]:
        return None
    if len(shape) == 1:
        return raw
    width, flat = shape[1], []
    for row in raw:
        if type(row) is not list or len(row) != width:
            return None
        flat += row
    return flat


def _count(shape: tuple[int, ...]) -> str:
    return f"{shape[0]} entries" if len(shape) == 1 else shape_text(shape)


def shape_text(shape: tuple[int, ...]) -> str:
    if not shape:
        return "a single value"
    if len(shape) == 1:
        return f"a vector of {shape[0]}"
    return "x".join(map(str, shape))


def check_shape(answer: tuple[int, ...], key: tuple[int, ...], noun: str) -> str | None:
    """None when the shapes agree; the wrong-shape message when the answer is read as another shape.

    Raises InvalidAnswer when the entries are all there but laid out ambiguously: a 1xN / Nx1 / vector
    mix-up, or a flat list whose length is the number of entries of a 2-D key ("write 2 rows of 3").
    """
    if answer == key:
        return None
    if same_layout(answer, key):
        raise InvalidAnswer(f"the {noun} is {shape_text(key)} but your answer is {shape_text(answer)}: "
                            f"{_layout_fix(key)}")
    return f"shape error: the {noun} is {shape_text(key)} but your answer is {shape_text(answer)}"


def same_layout(answer: tuple[int, ...], key: tuple[int, ...]) -> bool:
    """Whether an answer of shape ``answer`` holds the key's entries in its order: the same shape, a 1xN / Nx1 /
    vector mix-up, or a flat list of as many entries as a 2-D key."""
    squeeze = lambda s: tuple(n for n in s if n != 1)  # noqa: E731 - tiny local helper
    return squeeze(answer) == squeeze(key) or (len(answer) == 1 and len(key) == 2 and answer[0] == key[0] * key[1])


def _layout_fix(key: tuple[int, ...]) -> str:
    if len(key) == 2 and key[0] == 1:
        return f"write one row inside double brackets, e.g. [[a, b, ...]] ({key[1]} entries)"
    if len(key) == 2 and key[1] == 1:
        return f"write each entry as its own row, e.g. [[a], [b], ...] ({key[0]} rows)"
    if len(key) == 2:
        return f"write {key[0]} rows of {key[1]}, e.g. [[a, b, ...], [c, d, ...], ...]"
    if len(key) == 1:
        return f"write one flat list of {key[0]} entries, e.g. [a, b, ...]"
    return "check the brackets"


def index_text(flat_index: int, shape: tuple[int, ...]) -> str:
    """1-based (row, column) of a flat entry index (a plain number for vectors)."""
    index = []
    for size in reversed(shape):
        index.append(flat_index % size + 1)
        flat_index //= size
    index.reverse()
    return str(index[0]) if len(index) == 1 else "(" + ", ".join(map(str, index)) + ")"


def entries_text(indices: list[int], shape: tuple[int, ...]) -> str:
    listed = ", ".join(index_text(i, shape) for i in indices[:MAX_LISTED_ENTRIES])
    more = len(indices) - MAX_LISTED_ENTRIES
    return listed + (f" and {more} more" if more > 0 else "")


def convert_entries(flat: list[Any], shape: tuple[int, ...], convert) -> list[Any]:
    """Convert every entry; the first unreadable one is reported by its (row, column)."""
    values = []
    for i, x in enumerate(flat):
        try:
            values.append(convert(x, "entry"))
        except InvalidAnswer:
            convert(x, f"entry {index_text(i, shape)}")  # raise again, naming the entry
            raise
    return values


def misshapen_entries(flat: list[Any], shape: tuple[int, ...], key_shape: tuple[int, ...], noun: str,
                      convert) -> list[Any]:
    """The entries of an answer read in another shape than the key's, converted (a transposed matrix may
    still be a known mistake). An entry that cannot be read makes the answer unreadable, not a wrong shape:
    text that is no array at all (``see attached``, ``tril(ones(3))``) reads as a vector of words."""
    try:
        return convert_entries(flat, shape, convert)
    except InvalidAnswer as exc:
        asked = shape_text(key_shape) if len(key_shape) == 1 else f"a {shape_text(key_shape)} {noun}"
        raise InvalidAnswer(f"not read as {asked}: {exc}") from None


def nested_text(value: Any, entry) -> str:
    """``[[a, b], [c, d]]`` with each entry written by ``entry`` (how an answer was read)."""
    if isinstance(value, list):
        return "[" + ", ".join(nested_text(v, entry) for v in value) + "]"
    return entry(value)


def array_items(raw: Any, what: str = "answer") -> list | Any:
    """A raw array answer as nested lists: lists as they are, text through :func:`read_array_text`.

    Text entries inside a TOML array may themselves be a whole row or matrix in text (rare); they stay
    entries and the type reports them. Anything else is returned unchanged for the type to refuse.
    """
    if isinstance(raw, str):
        return read_array_text(raw, what)
    return raw
