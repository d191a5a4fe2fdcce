"""Multiple choice: ``value`` is the sorted list of correct option ids; ``spec["options"]`` lists
``{"id", "text", "why"}``; ``spec["multiple"]`` says whether several may be chosen.

Read: ``b``, ``B``, ``(b)``, ``b)``, ``b.``, ``option b``, ``b, d``, ``b and d``, ``["b", "d"]``.
Single: exactly one id, all or nothing. Multiple: score = max(0, right − wrong picks) / correct options.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from problemgen.answers.base import AnswerType, PartResult, Reading, correct, wrong
from problemgen.answers.text import InvalidAnswer, clean
from problemgen.model.core import AnswerPart

_SEPARATORS = re.compile(r"\s*(?:,|;|/|&|\+|\band\b|\s)\s*", re.IGNORECASE)
_DECORATION = re.compile(r"^(?:options?|answers?|choices?)\s*:?\s*", re.IGNORECASE)


def choice_ids(raw: Any, options: list[str]) -> list[str]:
    """The chosen option ids, sorted, from any of the notations in the module doc."""
    if isinstance(raw, str):
        text = _DECORATION.sub("", clean(raw).strip())
        items = [x for x in _SEPARATORS.split(text) if x]
    elif isinstance(raw, list) and all(isinstance(x, str) for x in raw):
        items = [_DECORATION.sub("", clean(x).strip()) for x in raw]
    else:
        raise InvalidAnswer("give option ids as text: a letter, or letters separated by commas")
    chosen = []
    for item in items:
        bare = item.strip().strip("().[]").lower()
        if bare not in options:
            raise InvalidAnswer(f"there is no option {item[:20]!r}; the options are {', '.join(options)} "
                                "(write a letter, or letters separated by commas)")
        if bare not in chosen:
            chosen.append(bare)
    return sorted(chosen)


class ChoiceType(AnswerType):
    name = "choice"

    def read(self, part: AnswerPart, raw: Any) -> Reading:
        options = sorted(str(o["id"]).lower() for o in part.spec.get("options", ()))
        chosen = choice_ids(raw, options)
        if not part.spec.get("multiple") and len(chosen) != 1:
            raise InvalidAnswer(f"read {', '.join(chosen)}: choose exactly one option")
        return Reading(chosen, ", ".join(chosen) if isinstance(raw, str) else "")

    def same(self, part: AnswerPart, candidate: Any, reference: Any) -> bool:
        """The same set of option ids, in any order."""
        return sorted(candidate) == sorted(reference)

    def check(self, part: AnswerPart, reading: Reading) -> PartResult:
        options = {str(o["id"]).lower(): o for o in part.spec.get("options", ())}
        chosen = reading.value
        correct_ids = sorted(str(v).lower() for v in part.value)
        multiple = bool(part.spec.get("multiple"))
        matches = lambda m: sorted(str(v).lower() for v in (m if isinstance(m, list) else [m])) == chosen  # noqa: E731
        if chosen == correct_ids:
            return correct()
        wrong_picks = [c for c in chosen if c not in correct_ids]
        reasons = [f"{c}: {options[c]['why']}" for c in wrong_picks if options[c].get("why")]
        if not multiple:
            return wrong(part, "; ".join(reasons) or "not the right option", matches)
        right = len([c for c in chosen if c in correct_ids])
        score = max(0.0, (right - len(wrong_picks)) / len(correct_ids))
        summary = f"{right} of {len(correct_ids)} correct options chosen, {len(wrong_picks)} wrong"
        return wrong(part, "; ".join([summary, *reasons]), matches, score=score)

    def canonical(self, part, reading: Reading) -> str:
        """The chosen ids, sorted (``(b)``, ``B`` and ``option b`` alike)."""
        return ",".join(reading.value)

    def key_value(self, part) -> Any:
        ids = sorted(str(v) for v in part.value)
        return ids if part.spec.get("multiple") else ids[0]

    def describe(self, part) -> str:
        """No example: any option may be the key, and one chosen to avoid it would tell which is."""
        ids = ", ".join(str(o["id"]) for o in part.spec.get("options", ()))
        if part.spec.get("multiple"):
            return (f"every correct option among {ids}: their letters, separated by commas or in a list "
                    "(partial credit: right picks minus wrong picks)")
        return f"one option among {ids}: its letter (quotes optional)"

    def key_display(self, part, kit: Any) -> str:
        options = {o["id"]: o for o in part.spec.get("options", [])}
        return "; ".join(f"({cid}) " + kit.prose(options[cid]["text"]) if cid in options else f"({cid})"
                         for cid in part.value)

    def perturb(self, part):
        ids = [o["id"] for o in part.spec["options"]]
        if part.spec.get("multiple"):
            return replace(part, value=sorted(set(part.value) ^ {ids[0]}) or [ids[1]])
        return replace(part, value=[next(i for i in ids if i not in part.value)])


TYPE = ChoiceType()
