"""Conceptual questions: multiple choice and short answers drawn from ``question_banks/concepts.toml``.

The bank holds the questions as data (prompt, options, a why-explanation for every option, and the
misconception a tempting wrong option stands for), so instructors can add questions without touching
code. The seed picks a question of the requested difficulty and shuffles its options; a bank id given
as the ``question`` override pins the question (the options are still shuffled by the seed).

This module also provides :func:`choice_part`, the one way every generator builds a multiple-choice
answer: options shuffled deterministically by the variant's rng, ids ``a``, ``b``, … in display order,
and each tagged wrong option turned into a named :class:`~problemgen.model.core.Mistake`.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from problemgen.model.core import AnswerPart, Draft, ProblemgenError
from problemgen.misconceptions.catalogue import CATALOGUE, mistake, titled
from problemgen.model.registry import register
from problemgen.problems._common import check_override, override
from problemgen.resources import banks_dir
from problemgen.wording import suggest

OPTION_IDS = "abcdefgh"
BANK_FILE = "concepts.toml"
TOPICS = (
    "attention", "scaling", "masks", "multihead", "shapes", "params", "memory", "complexity",
    "norms", "ffn", "positional", "objective", "architecture", "training",
)
"""Topics a bank question may name (the product's topics plus model families and training vs inference)."""


@dataclass(frozen=True)
class Option:
    """One answer option: its text, why it is right or wrong, and the misconception it stands for."""

    text: str
    why: str
    correct: bool = False
    misconception: str | None = None


def choice_part(
    rng: np.random.Generator,
    options: Sequence[Option],
    *,
    key: str = "choice",
    label: str = "your choice",
    multiple: bool = False,
) -> AnswerPart:
    """A ``choice`` answer with the options in a seed-determined order.

    Wrong options that carry a misconception tag become Mistakes whose value is that option's id, so
    the grader can name the misconception when a student picks it. Their hint is the misconception's title
    with the option's own ``why``: the catalogue's hint is written for the computation (a mask, a cache),
    and on a question about something else it can read as the opposite of the key (the causal mask's
    "itself included" for a token conditioned on itself, "there is a factor 2" for a saving of 2 that is
    not one).
    """
    if not any(o.correct for o in options):
        raise ValueError("a choice question needs at least one correct option")
    if not multiple and sum(o.correct for o in options) != 1:
        raise ValueError("a single-answer choice question needs exactly one correct option")
    order = rng.permutation(len(options))
    shown = [options[i] for i in order]
    ids = OPTION_IDS[: len(shown)]
    spec_options = [{"id": i, "text": o.text, "why": o.why} for i, o in zip(ids, shown)]
    correct = sorted(i for i, o in zip(ids, shown) if o.correct)
    mistakes = tuple(
        mistake(o.misconception, [i], hint=titled(o.misconception, o.why))
        for i, o in zip(ids, shown) if o.misconception and not o.correct
    )
    return AnswerPart(
        key=key,
        type="choice",
        value=correct,
        label=label,
        spec={"options": spec_options, "multiple": multiple},
        mistakes=mistakes,
    )


def option_texts(part: AnswerPart) -> list[str]:
    """The option texts in display order: part of what the student sees, so part of the params."""
    return [o["text"] for o in part.spec["options"]]


# ---------------------------------------------------------------------------------------- the bank


@dataclass(frozen=True)
class ChoiceQuestion:
    """A multiple-choice question from the bank (options in bank order; shuffled per variant)."""

    id: str
    topic: str
    difficulty: int
    prompt: str
    options: tuple[Option, ...]
    multiple: bool = False


@dataclass(frozen=True)
class ShortQuestion:
    """A short-answer question: accepted spellings, an explanation, and named tempting wrong terms."""

    id: str
    topic: str
    difficulty: int
    prompt: str
    answers: tuple[str, ...]
    explanation: str
    wrong: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ConceptBank:
    choice: tuple[ChoiceQuestion, ...]
    short: tuple[ShortQuestion, ...]

    def find(self, section: str, question_id: str):
        """The question with this id in ``section`` ("choice" or "short"), with a did-you-mean error."""
        questions = {q.id: q for q in getattr(self, section)}
        if question_id not in questions:
            raise ProblemgenError(
                f"no {section} question {question_id!r} in the concept bank{suggest(question_id, sorted(questions))}")
        return questions[question_id]


_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_MATH_SPAN = re.compile(r"\$\$.+?\$\$|\$[^$]+?\$", re.S)
_PROSE_SPECIALS = set("_%&#^~\\{}<>")
MAX_BANK_BYTES = 1024 * 1024


class _Reader:
    """Validates one bank file, naming the file, the line of the question and the key in every error."""

    def __init__(self, text: str, source: str) -> None:
        self.text, self.source = text, source

    def fail(self, message: str, question_id: str | None = None) -> ProblemgenError:
        line = self._line_of(question_id) if question_id else None
        where = f"{self.source}:{line}" if line else self.source
        return ProblemgenError(f"{where}: {message}")

    def _line_of(self, question_id: str) -> int | None:
        pattern = re.compile(rf"""^\s*id\s*=\s*["']{re.escape(question_id)}["']""", re.M)
        match = pattern.search(self.text)
        return self.text.count("\n", 0, match.start()) + 1 if match else None

    def keys(self, table: dict, allowed: set[str], required: set[str], what: str, qid: str | None) -> None:
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise self.fail(f"{what}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})", qid)
        missing = sorted(required - set(table))
        if missing:
            raise self.fail(f"{what}: missing key {missing[0]!r}", qid)

    def text_field(self, table: dict, key: str, what: str, qid: str | None) -> str:
        value = table[key]
        if not isinstance(value, str) or not value.strip():
            raise self.fail(f"{what}: {key!r} must be a non-empty string", qid)
        prose = _MATH_SPAN.sub(" ", value)
        if value.count("$") % 2:
            raise self.fail(f"{what}: {key!r} has an unbalanced $", qid)
        bad = sorted(set(prose) & _PROSE_SPECIALS)
        if bad or "**" in prose or "`" in prose:
            shown = " ".join(bad) or "Markdown markup"
            raise self.fail(f"{what}: {key!r} has {shown} outside $...$ math (it must render in Markdown and LaTeX)",
                            qid)
        return value.strip()

    def header(self, table: dict, section: str, index: int) -> tuple[str, str, int, str]:
        """id, topic, difficulty and prompt of a question, validated."""
        qid = table.get("id")
        what = f"{section} question {qid!r}" if isinstance(qid, str) else f"{section} question number {index + 1}"
        if not isinstance(qid, str) or not _ID.match(qid):
            raise self.fail(f"{what}: 'id' must be lowercase letters, digits and hyphens")
        topic = table.get("topic")
        if topic not in TOPICS:
            raise self.fail(f"{what}: 'topic' must be one of {', '.join(TOPICS)}, not {topic!r}", qid)
        difficulty = table.get("difficulty")
        if not isinstance(difficulty, int) or isinstance(difficulty, bool) or difficulty not in (1, 2, 3):
            raise self.fail(f"{what}: 'difficulty' must be 1, 2 or 3, not {difficulty!r}", qid)
        return qid, topic, difficulty, self.text_field(table, "prompt", what, qid)

    def tag(self, value, what: str, qid: str) -> str | None:
        if value is None:
            return None
        if value not in CATALOGUE:
                raise self.fail(f"{what}: unknown misconception {value!r}{suggest(str(value), sorted(CATALOGUE))}", qid)
        return value

    def choice(self, table: dict, index: int) -> ChoiceQuestion:
        qid, topic, difficulty, prompt = self.header(table, "choice", index)
        what = f"choice question {qid!r}"
        self.keys(table, {"id", "topic", "difficulty", "prompt", "multiple", "options"}, {"prompt", "options"}, what, qid)
        multiple = table.get("multiple", False)
        if not isinstance(multiple, bool):
            raise self.fail(f"{what}: 'multiple' must be true or false", qid)
        raw = table["options"]
        if not isinstance(raw, list) or not 2 <= len(raw) <= len(OPTION_IDS):
            raise self.fail(f"{what}: 'options' needs 2 to {len(OPTION_IDS)} [[choice.options]] tables", qid)
        options = []
        for n, opt in enumerate(raw, start=1):
            where = f"{what}, option {n}"
            if not isinstance(opt, dict):
                raise self.fail(f"{where}: must be a table with text and why", qid)
            self.keys(opt, {"text", "why", "correct", "misconception"}, {"text", "why"}, where, qid)
            correct = opt.get("correct", False)
            if not isinstance(correct, bool):
                raise self.fail(f"{where}: 'correct' must be true or false", qid)
            tag = self.tag(opt.get("misconception"), where, qid)
            if correct and tag:
                raise self.fail(f"{where}: a correct option cannot carry a misconception", qid)
            options.append(Option(self.text_field(opt, "text", where, qid), self.text_field(opt, "why", where, qid),
                                  correct, tag))
        n_correct = sum(o.correct for o in options)
        if n_correct == 0 or (not multiple and n_correct != 1):
            need = "at least one" if multiple else "exactly one"
            raise self.fail(f"{what}: needs {need} correct option, has {n_correct}", qid)
        if len({o.text for o in options}) != len(options):
            raise self.fail(f"{what}: two options have the same text", qid)
        return ChoiceQuestion(qid, topic, difficulty, prompt, tuple(options), multiple)

    def short(self, table: dict, index: int) -> ShortQuestion:
        qid, topic, difficulty, prompt = self.header(table, "short", index)
        what = f"short question {qid!r}"
        self.keys(table, {"id", "topic", "difficulty", "prompt", "answers", "explanation", "wrong"},
                  {"prompt", "answers", "explanation"}, what, qid)
        answers = table["answers"]
        if not isinstance(answers, list) or not answers or not all(isinstance(a, str) and a.strip() for a in answers):
            raise self.fail(f"{what}: 'answers' must be a non-empty list of strings", qid)
        accepted = {normal_term(a) for a in answers}
        wrong = []
        for n, item in enumerate(table.get("wrong", []), start=1):
            where = f"{what}, wrong answer {n}"
            if not isinstance(item, dict):
                raise self.fail(f"{where}: must be a table with answer and misconception", qid)
            self.keys(item, {"answer", "misconception"}, {"answer", "misconception"}, where, qid)
            answer = item["answer"]
            if not isinstance(answer, str) or normal_term(answer) in accepted:
                raise self.fail(f"{where}: 'answer' must be a string that is not an accepted answer", qid)
            wrong.append((answer, self.tag(item["misconception"], where, qid)))
        return ShortQuestion(qid, topic, difficulty, prompt, tuple(a.strip() for a in answers),
                             self.text_field(table, "explanation", what, qid), tuple(wrong))


def normal_term(text: str) -> str:
    """A term as the grader compares it: case, spaces, hyphens and underscores ignored."""
    return re.sub(r"[\s\-_]+", "", text).lower()


def parse_bank(text: str, source: str) -> ConceptBank:
    """Parse and validate the text of a concept bank; errors name ``source``, the line and the key."""
    reader = _Reader(text, source)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProblemgenError(f"{source}: invalid TOML: {exc}") from None
    unknown = sorted(set(data) - {"choice", "short"})
    if unknown:
        raise reader.fail(f"unknown top-level key {unknown[0]!r} (expected [[choice]] and [[short]] tables)")
    choice = tuple(reader.choice(t, i) for i, t in enumerate(_tables(reader, data, "choice")))
    short = tuple(reader.short(t, i) for i, t in enumerate(_tables(reader, data, "short")))
    seen: set[str] = set()
    for q in (*choice, *short):
        if q.id in seen:
            raise reader.fail(f"question id {q.id!r} is used twice", q.id)
        seen.add(q.id)
    return ConceptBank(choice, short)


def _tables(reader: _Reader, data: dict, section: str) -> list[dict]:
    tables = data.get(section, [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise reader.fail(f"{section!r} must be written as [[{section}]] tables")
    return tables


def load_bank(path: str | Path | None = None) -> ConceptBank:
    """The concept bank at ``path`` (default: the shipped ``question_banks/concepts.toml``)."""
    if path is None:
        return _shipped_bank()
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BANK_BYTES:
            raise ProblemgenError(f"{path}: larger than {MAX_BANK_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProblemgenError(f"cannot read concept bank {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ProblemgenError(f"{path}: not UTF-8 text") from None
    return parse_bank(text, str(path))


@functools.lru_cache(maxsize=1)
def _shipped_bank() -> ConceptBank:
    return load_bank(banks_dir() / BANK_FILE)


# ------------------------------------------------------------------------------------------- kinds


def _pick_question(rng: np.random.Generator, questions, difficulty: int):
    pool = sorted((q for q in questions if q.difficulty == difficulty), key=lambda q: q.id)
    if not pool:
        raise ProblemgenError(f"the concept bank has no questions of difficulty {difficulty}")
    return pool[int(rng.integers(len(pool)))]


def _note_question(question: str | None, questions) -> None:
    """Report the ``question`` override with the bank's ids as its allowed values (``list --json``); an
    unknown id has already failed in ``find`` with a did-you-mean."""
    override("question", question, None, sorted(q.id for q in questions))


CHOICE_FORMS = ("single", "multiple")
"""The ``form`` of a choice question: one correct option, or several with partial credit."""


def _form(q: ChoiceQuestion) -> str:
    return "multiple" if q.multiple else "single"


@register("concepts.choice", title="Conceptual multiple choice")
def choice(rng: np.random.Generator, difficulty: int, *, question: str | None = None, form: str | None = None) -> Draft:
    """A bank question of the given difficulty (or the one named by ``question``), options shuffled.

    ``form``: a single-answer question or one with several correct options (graded with partial credit);
    it shapes the question, so a class set pins it while the question itself stays each student's own."""
    bank = load_bank()
    forms = CHOICE_FORMS if question else \
        sorted({_form(q) for q in bank.choice if q.difficulty == difficulty}, key=CHOICE_FORMS.index)
    check_override("form", form, forms)
    if question:
        q = bank.find("choice", question)
        if form not in (None, _form(q)):
            raise ProblemgenError(f"question {question!r} is a {_form(q)}-answer question, not form={form}")
    else:
        q = _pick_question(rng, [c for c in bank.choice if form in (None, _form(c))], difficulty)
    _note_question(question and q.id, bank.choice)
    override("form", form, _form(q), forms)
    part = choice_part(rng, q.options, label="your choice" if not q.multiple else "all correct options",
                       multiple=q.multiple)
    return Draft(
        params={"question": q.id, "topic": q.topic, "prompt": q.prompt, "multiple": q.multiple,
                "options": option_texts(part)},
        parts=[part],
    )


SHORT_PER_VARIANT = 3


@register("concepts.short", title="Conceptual short answers")
def short(rng: np.random.Generator, difficulty: int, *, question: str | None = None) -> Draft:
    """Three bank terms of the given difficulty to name (or the one named by ``question``)."""
    bank = load_bank()
    _note_question(bank.find("short", question).id if question else None, bank.short)
    if question:
        chosen = [bank.find("short", question)]
    else:
        pool = sorted((q for q in bank.short if q.difficulty == difficulty), key=lambda q: q.id)
        if len(pool) < SHORT_PER_VARIANT:
            raise ProblemgenError(f"the concept bank needs {SHORT_PER_VARIANT} short questions of difficulty "
                                  f"{difficulty}, it has {len(pool)}")
        chosen = [pool[int(i)] for i in sorted(rng.choice(len(pool), size=SHORT_PER_VARIANT, replace=False))]
    parts = [
        AnswerPart(f"term{n}", "term", list(q.answers), label=f"the term for question {n}",
                   mistakes=tuple(mistake(tag, [answer]) for answer, tag in q.wrong))
        for n, q in enumerate(chosen, start=1)
    ]
    return Draft(
        params={"questions": [q.id for q in chosen], "prompts": [q.prompt for q in chosen]},
        parts=parts,
        solution={"explanations": [q.explanation for q in chosen], "answers": [q.answers[0] for q in chosen]},
    )
