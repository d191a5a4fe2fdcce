"""An attention mask: nested booleans in the key (True = may attend), asked in one representation.

``spec["representation"]``: ``bool`` reads true/false, True/False, T/F (as the statement prints them)
and 1/0; ``01`` reads 1/0 and true/false; ``additive`` reads 0 and -inf (``-inf``, ``-∞``, ``−∞``,
``-infinity``), and a large negative number such as ``-1e9`` is invalid with its own message (it
is not −∞). The array may be written in any notation :mod:`problemgen.answers.arrays` reads. A wrong
shape is wrong once every entry is read; text that is no mask at all (``tril(ones(3))``) is invalid. All
or nothing; feedback names the wrong entries.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from problemgen.answers import arrays
from problemgen.answers.base import AnswerType, PartResult, Reading, correct, echo, wrong
from problemgen.answers.text import InvalidAnswer, NonFinite
from problemgen.answers.types.matrix import map_first
from problemgen.model.core import AnswerPart, _flatten

_TRUE_WORDS = {"t": True, "true": True, "f": False, "false": False}
_NUMBER_WORDS = {"1": True, "1.0": True, "0": False, "0.0": False}
_BLOCKED = {"-inf", "-infinity", "-\u221e", "\u2212\u221e", "\u2212inf", "-np.inf", "-math.inf", "float('-inf')"}
_OPEN = {"0", "0.0", "-0", "+0", "0."}
LARGE_NEGATIVE = -1e3
"""Below this an additive entry is taken as an attempt at -inf (``-1e9``): invalid, with a message."""


def as_mask_entry(x: Any, representation: str, what: str) -> bool:
    """True (may attend) / False (blocked) from an entry in the asked representation."""
    word = x.strip() if isinstance(x, str) else None
    if representation in ("bool", "01"):
        if isinstance(x, bool):
            return x
        if word is not None and word.lower() in _TRUE_WORDS:
            return _TRUE_WORDS[word.lower()]
        if word is not None and word in _NUMBER_WORDS:
            return _NUMBER_WORDS[word]
        if isinstance(x, (int, float)) and x in (0, 1):
            return bool(x)
        asked = ("a boolean mask, true (may attend) or false (blocked)" if representation == "bool"
                 else "a 0/1 mask, 1 (may attend) or 0 (blocked)")
        raise InvalidAnswer(f"{what} is {echo(x)}: this problem asks for {asked}")
    if isinstance(x, NonFinite) and x.negative_infinity:
        return False
    if not isinstance(x, bool) and isinstance(x, (int, float)) and x == 0:
        return True
    if word is not None and word.lower() in _BLOCKED:
        return False
    if word is not None and word in _OPEN:
        return True
    number = _number(x)
    if number is not None and number <= LARGE_NEGATIVE:
        written = x.strip() if isinstance(x, str) else re.sub(r"e\+?0*", "e", f"{number:g}")
        raise InvalidAnswer(f"{what} is {echo(x)}: {written} is not -inf (it still lets a little attention "
                            "through); this problem asks for an additive mask, write -inf for a blocked entry")
    raise InvalidAnswer(f"{what} is {echo(x)}: this problem asks for an additive mask, "
                        f"0 (may attend) or -inf (blocked)")


def _number(x: Any) -> float | None:
    try:
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            return float(x)
        return float(x.strip()) if isinstance(x, str) else None
    except (ValueError, OverflowError):  # not a number, or an integer beyond any float
        return None


def _lenient(value: Any) -> list[bool]:
    """A mistake's mask value (stored as bools, as the key is) as a flat list of bools."""
    _, flat = _flatten(value)
    return [bool(x) if isinstance(x, (bool, int)) else False for x in flat]


def mask_in(value: Any, representation: str) -> Any:
    """A boolean mask written in a representation: True/False, 1/0, or 0/"-inf"."""
    return _written(value, _WRITTEN[representation])


def _written(value: Any, entries: tuple[Any, Any]) -> Any:
    """The mask with each cell replaced by ``entries[allowed]``."""
    if isinstance(value, list):
        return [_written(v, entries) for v in value]
    return entries[bool(value)]


_WRITTEN = {"bool": (False, True), "01": (0, 1), "additive": ("-inf", 0)}
"""Per representation, how a blocked and an allowed cell are written."""


_PLAIN = {
    "bool": {(bool, True): True, (bool, False): False, (int, 1): True, (int, 0): False},
    "01": {(int, 1): True, (int, 0): False, (bool, True): True, (bool, False): False},
    "additive": {(int, 0): True, (float, 0.0): True, (str, "-inf"): False},
}
"""The entries of the sheets we hand out, per representation, as (type, value) -> may attend: what
:func:`as_mask_entry` reads them as (a test checks every one)."""


EXAMPLE_MASKS = ([[True, False], [True, True]], [[True, False, False], [True, True, False]])
EXAMPLE_SHAPE = (2, 2)
"""The shape of the first example mask: where a part asks for it, the second is shown."""


def _sheet_text(value: Any) -> str:
    """A mask as written on the sheet: ``[[true, false], [0, "-inf"]]``."""
    if isinstance(value, list):
        return "[" + ", ".join(_sheet_text(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


class MaskType(AnswerType):
    name = "mask"
    reads_typed_arrays = True

    def plain_reading(self, part: AnswerPart, raw: Any) -> Reading | None:
        return _plain_reading(part, raw)

    def read(self, part: AnswerPart, raw: Any) -> Reading:
        representation = part.spec.get("representation", "bool")
        items = arrays.array_items(raw)
        shape, flat = arrays.structure(items if isinstance(items, list) else [items])
        key_shape, _ = part.layout
        message = arrays.check_shape(shape, key_shape, "mask")
        convert = lambda x, what: as_mask_entry(x, representation, what)  # noqa: E731
        if message:  # a wrong-shaped mask may still be a known mistake (one built for the new tokens only)
            return Reading((shape, arrays.misshapen_entries(flat, shape, key_shape, "mask", convert), message), "")
        values = arrays.convert_entries(flat, shape, convert)
        shown = ""
        if isinstance(raw, str):
            written = mask_in(_unflatten(values, shape), representation)
            shown = arrays.nested_text(written, lambda v: str(v).lower() if isinstance(v, bool) else str(v))
        return Reading((shape, values, None), shown)

    def check(self, part: AnswerPart, reading: Reading) -> PartResult:
        shape, values, message = reading.value
        same = lambda m: _flatten(m)[0] == shape and _lenient(m) == values  # noqa: E731
        if message:
            return wrong(part, message, same)
        _, key_flat = part.layout
        bad = [i for i, (v, k) in enumerate(zip(values, key_flat)) if v != bool(k)]
        if not bad:
            return correct()
        feedback = f"{len(bad)} of {len(key_flat)} entries are wrong: {arrays.entries_text(bad, shape)}"
        return wrong(part, feedback, same)

    def canonical(self, part: AnswerPart, reading: Reading) -> str:
        """Its shape and which entries may attend (``T``/``true``/``1`` alike)."""
        shape, values, _ = reading.value
        return "x".join(map(str, shape)) + ":" + "".join("1" if v else "0" for v in values)

    def key_value(self, part: AnswerPart) -> Any:
        return mask_in(part.value, part.spec.get("representation", "bool"))

    def describe(self, part: AnswerPart) -> str:
        shape, _ = part.layout
        size = "x".join(str(n) for n in shape)
        rep = part.spec.get("representation", "bool")
        example = _sheet_text(self.examples(part)[0])
        if rep == "01":
            return f"a {size} mask of 0/1 (1 = may attend), e.g. {example}"
        if rep == "additive":
            return f"a {size} additive mask of 0 (may attend) and \"-inf\" (blocked), e.g. {example}"
        return f"a {size} mask of true/false (true = may attend), e.g. {example}"

    def examples(self, part: AnswerPart) -> tuple:
        """A small mask of another shape than the one asked, so it is never the key and says nothing of it:
        2x2 (a causal mask), or 2x3 where 2x2 is asked."""
        shape, _ = part.layout
        pattern = EXAMPLE_MASKS[1] if tuple(shape) == EXAMPLE_SHAPE else EXAMPLE_MASKS[0]
        return (mask_in(pattern, part.spec.get("representation", "bool")),)

    def key_display(self, part: AnswerPart, kit: Any) -> str:
        rep = part.spec.get("representation", "bool")
        return kit.display_math(kit.mask_latex(part.value, rep, kit.digits))

    def perturb(self, part: AnswerPart) -> AnswerPart:
        return replace(part, value=map_first(part.value, lambda b: not b))


def _plain_reading(part: AnswerPart, raw: Any) -> Reading | None:
    """What :meth:`MaskType.read` gives for a plain array in the key's shape whose entries are all in
    :data:`_PLAIN` (how the sheets we hand out come back), read without its general machinery; None
    for anything else."""
    shape, _ = part.layout
    flat = arrays.plain_entries(raw, shape)
    plain = _PLAIN.get(part.spec.get("representation", "bool"))
    if flat is None or plain is None:
        return None
    try:
        values = [plain.get((type(x), x)) for x in flat]
    except TypeError:  # an unhashable entry (a TOML table)
        return None
    return None if None in values else Reading((shape, values, None), "")


def _unflatten(values: list[Any], shape: tuple[int, ...]) -> Any:
    if len(shape) <= 1:
        return list(values)
    step = len(values) // shape[0] if shape[0] else 0
    return [_unflatten(values[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


TYPE = MaskType()
