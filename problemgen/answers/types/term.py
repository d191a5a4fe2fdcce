"""A short word answer; ``value`` lists the accepted spellings.

Compared ignoring case, spaces, hyphens, underscores and a plural ``s`` (``Layer-Norms`` = ``layernorm``).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from problemgen.answers.base import AnswerType, PartResult, Reading, correct, neutral_example, wrong
from problemgen.answers.text import InvalidAnswer, clean, kind_of

MAX_LENGTH = 200
EXAMPLE_TERMS = ("dropout", "learning rate")


def normal_term(text: Any) -> str:
    """The comparison form: lower case, no spaces/hyphens/underscores, a final plural ``s`` dropped."""
    word = re.sub(r"[\s\-_.]+", "", str(text)).lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


class TermType(AnswerType):
    name = "term"

    def read(self, part, raw: Any) -> Reading:
        if not isinstance(raw, str):
            raise InvalidAnswer(f"write a word or short phrase, not {kind_of(raw)}")
        if len(raw) > MAX_LENGTH:
            raise InvalidAnswer(f"answer longer than {MAX_LENGTH} characters")
        answer = normal_term(clean(raw).strip())
        if not any(ch.isalnum() for ch in answer):
            raise InvalidAnswer("write a word or short phrase")
        return Reading(answer, "")

    def same(self, part, candidate: Any, reference: Any) -> bool:
        """Any of the candidate spellings among the reference's accepted ones (case and outer spaces ignored)."""
        accepted = {str(v).strip().lower() for v in reference}
        cands = candidate if isinstance(candidate, list) else [candidate]
        return any(str(c).strip().lower() in accepted for c in cands)

    def check(self, part, reading: Reading) -> PartResult:
        accepted = part.value if isinstance(part.value, list) else [part.value]
        if reading.value in {normal_term(v) for v in accepted}:
            return correct()
        return wrong(part, "not the expected term",
                     lambda m: reading.value in {normal_term(v) for v in (m if isinstance(m, list) else [m])})

    def canonical(self, part, reading: Reading) -> str:
        """The comparison form (case, spaces, hyphens and a plural s ignored)."""
        return reading.value

    def key_value(self, part) -> Any:
        return str(part.value[0]) if isinstance(part.value, list) else str(part.value)

    def describe(self, part) -> str:
        example = self.examples(part)
        return "a word or short phrase" + (f", e.g. \"{example[0]}\"" if example else "")

    def examples(self, part) -> tuple:
        """A term that is none of the accepted spellings (no concept question's answer is either)."""
        accepted = {normal_term(v) for v in (part.value if isinstance(part.value, list) else [part.value])}
        example = neutral_example(EXAMPLE_TERMS, lambda word: normal_term(word) in accepted)
        return (example,) if example else ()

    def key_display(self, part, kit: Any) -> str:
        value = part.value
        others = f" (also accepted: {', '.join(kit.code(v) for v in value[1:])})" if len(value) > 1 else ""
        return kit.code(str(value[0])) + others

    def perturb(self, part):
        return replace(part, value=["definitely not the answer"])


TYPE = TermType()
