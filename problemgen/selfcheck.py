"""The variant contract: every kind checks itself over many seeds before anyone sees a problem.

For each kind and seed (difficulties cycle with the seed, so N seeds cover every difficulty), a
generated problem must satisfy, part by part:

- the key (``grading.key_value``) scores full marks through ``grading.grade_part``;
- a perturbed answer (the key moved beyond tolerance) scores less;
- garbage (``"@@"``, entry by entry for arrays and shapes) is invalid, not wrong;
- every listed mistake is a catalogued tag, grades as wrong, and is named by its own tag (generation
  redraws a variant where two different mistakes give one value) so feedback says what went wrong;

and, per problem: generation is deterministic, the frozen JSON round-trips, the fragment renders in
md, tex and text, the prompt prints each numeric tolerance. Per kind: the template source keeps to
the Markdown/LaTeX common subset, and different seeds give different variants (per difficulty, at
least half of the seeds give distinct params, or at least 25 distinct variants in large samples).

``check_kind`` returns the failures as data; the CLI (``problemgen check``) prints them and the test
suite (``tests/test_contract.py``) runs the same contract over every registered kind.

It sits above the stages it checks (it renders with ``documents`` and grades with ``sheets``), so it is
not part of ``problemgen.model``: the model must not depend on its own users.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from problemgen.answers import types
from problemgen.answers.base import GARBAGE, PartResult, garbage_like  # noqa: F401 - GARBAGE re-exported for the self-check tests
from problemgen.documents import FORMATS
from problemgen.documents.rendering import builtin_templates_dir, format_number, render_block
from problemgen.misconceptions.catalogue import CATALOGUE
from problemgen.model import registry
from problemgen.model.core import AnswerPart, Mistake, Problem, ProblemgenError, values_match
from problemgen.problems.index import check_topic
from problemgen.sheets.grading import grade_part, key_value
from problemgen.wording import counted

MIN_DISTINCT_FRACTION = 0.5
MIN_DISTINCT_CAP = 25
"""Per difficulty, at least half of the seeds must give distinct params, up to 25 distinct variants:
small samples must be mostly distinct, and large samples must show a space of 25 variants or more."""

_PROSE_SPECIALS = set("_%&#^~\\{}<>")
_JINJA = re.compile(r"\{%.*?%\}|\{\{.*?\}\}|\{#.*?#\}", re.S)
_MATH = re.compile(r"\$\$.+?\$\$|\$[^$]+?\$", re.S)


@dataclass(frozen=True)
class Failure:
    """One broken promise: which kind, seed and difficulty, which check, and what was seen."""

    kind: str
    check: str
    detail: str
    seed: int | None = None
    difficulty: int | None = None

    def __str__(self) -> str:
        where = "" if self.seed is None else f" seed={self.seed} d{self.difficulty}"
        return f"{self.kind}{where} [{self.check}] {self.detail}"


def check_kind(kind: str, seeds: int | Iterable[int] = 50) -> list[Failure]:
    """Run the contract for one kind over ``seeds`` (a count, or explicit seed numbers)."""
    spec = registry.get_kind(kind)
    seed_list = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    failures = _check_template_source(kind)
    signatures: dict[int, list[str]] = defaultdict(list)
    for index, seed in enumerate(seed_list):
        difficulty = spec.difficulties[index % len(spec.difficulties)]
        where = {"seed": seed, "difficulty": difficulty}
        try:
            problem = registry.generate(kind, seed, difficulty)
        except Exception as exc:  # a crash is a finding, not a reason to stop checking
            failures.append(Failure(kind, "generate", f"{type(exc).__name__}: {exc}", **where))
            continue
        if index < len(spec.difficulties):
            failures += [Failure(kind, "determinism", d, **where) for d in _determinism(problem)]
        failures += [Failure(kind, "render", d, **where) for d in _render(problem)]
        for part in problem.parts:
            failures += [Failure(kind, f"part {part.key}", d, **where) for d in check_part(part)]
        signatures[difficulty].append(_signature(problem))
    failures += _distinctness(kind, signatures)
    return failures


def check_kinds(
    kinds: Iterable[str] | None = None, seeds: int | Iterable[int] = 50, *, topic: str | None = None
) -> dict[str, list[Failure]]:
    """``check_kind`` for each named kind (default: every registered kind, or every kind of ``topic``)."""
    if topic is not None:
        check_topic(topic)  # as `list --topic` says it
    names = list(kinds or ()) or [spec.name for spec in registry.all_kinds(topic)]
    if topic is not None:
        names = [name for name in names if registry.get_kind(name).topic == topic]
    if not names:
        raise ProblemgenError(f"no kinds to check (topic {topic!r})" if topic else "no kinds to check")
    seed_list = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    return {name: check_kind(name, seed_list) for name in names}


# ------------------------------------------------------------------------------------------- parts


def check_part(part: AnswerPart) -> list[str]:
    """The grading promises of one answer part; returns what broke, in words."""
    problems = [*_check_spec(part)]

    def graded(part: AnswerPart, raw) -> PartResult:
        """``grade_part``, with a reader's exception (which grading turns into an invalid answer) a finding."""
        result = grade_part(part, raw)
        if result.fault:
            problems.append(f"the grader failed on {raw!r}: {result.fault}")
        return result

    key = key_value(part)
    result = graded(part, key)
    if result.status != "correct" or result.score != 1.0:
        problems.append(f"the key {key!r} graded {result.status} ({result.score}): {result.feedback}")
    perturbed = key_value(perturb(part))
    result = graded(part, perturbed)
    if result.score >= 1.0:
        problems.append(f"a perturbed answer {perturbed!r} still scored {result.score}")
    garbage = _answer_type(part).garbage(part)
    result = graded(part, garbage)
    if result.status != "invalid":
        problems.append(f"garbage {garbage!r} graded {result.status}, not invalid")
    if part.exact and graded(part, part.exact).status != "correct":
        problems.append(f"the exact form {part.exact!r} of the key is not graded correct")
    for mistake in part.mistakes:
        problems += _check_mistake(part, mistake, graded, key_value)
    return problems


def _check_spec(part: AnswerPart) -> list[str]:
    """Structural checks: catalogued mistake tags, well-formed choice options."""
    problems = [f"mistake tag {m.name!r} is not in the catalogue" for m in part.mistakes if m.name not in CATALOGUE]
    if part.type == "choice":
        ids = [o.get("id") for o in part.spec.get("options", [])]
        if len(ids) < 2 or len(set(ids)) != len(ids):
            problems.append(f"choice options need at least two distinct ids, got {ids}")
        if not part.value or any(v not in ids for v in part.value):
            problems.append(f"choice key {part.value} is not among the options {ids}")
        for option in part.spec.get("options", []):
            if not option.get("why"):
                problems.append(f"choice option {option.get('id')} needs a 'why' explanation")
            for field in ("text", "why"):
                bad = _prose_problems(_MATH.sub(" ", str(option.get(field, ""))))
                if bad:
                    problems.append(f"choice option {option.get('id')} {field}: outside math: {' '.join(bad)}")
    return problems


def _check_mistake(part: AnswerPart, mistake: Mistake, grade_part, key_value) -> list[str]:
    if values_match(part, mistake.value):
        return [f"mistake {mistake.name} cannot be told from the key"]
    raw = _answer_type(part).mistake_answer(part, mistake.value)
    result = grade_part(part, raw)
    if result.status != "wrong":
        return [f"mistake {mistake.name} ({raw!r}) graded {result.status}, not wrong"]
    if result.mistake != mistake.name:
        return [f"mistake {mistake.name} was not named by the grader (it said {result.mistake!r})"]
    return []


def perturb(part: AnswerPart) -> AnswerPart:
    """The same part with its value moved clearly outside tolerance (a plausible wrong answer)."""
    return _answer_type(part).perturb(part)


def _answer_type(part: AnswerPart):
    try:
        return types.get(part.type)
    except KeyError:
        raise ProblemgenError(f"cannot check an answer of type {part.type!r}") from None


# --------------------------------------------------------------------------------- whole problems


def _determinism(problem: Problem) -> list[str]:
    again = registry.generate(problem.kind, problem.seed, problem.difficulty, **problem.overrides)
    problems = []
    if again != problem:
        problems.append("generating the same seed twice gave different problems")
    frozen = json.loads(json.dumps(problem.to_dict(), sort_keys=True))
    if Problem.from_dict(frozen) != problem:
        problems.append("the frozen JSON does not round-trip")
    return problems


def _render(problem: Problem) -> list[str]:
    problems = []
    for fmt in FORMATS:
        for block in ("prompt", "solution"):
            try:
                text = render_block(problem, block, fmt)
            except Exception as exc:
                problems.append(f"{block} does not render as {fmt}: {type(exc).__name__}: {exc}")
                continue
            if not text.strip():
                problems.append(f"{block} renders empty as {fmt}")
            elif fmt == "md" and ("**" in text or "`" in text):
                problems.append(f"{block} uses Markdown-only markup (** or backticks)")
            elif fmt == "tex" and _unbalanced_dollars(text):
                problems.append(f"{block} has unbalanced $ math delimiters in tex")
            elif fmt == "tex" and set(_MATH.sub(" ", text)) & _PROSE_SPECIALS:
                specials = "".join(sorted(set(_MATH.sub(" ", text)) & _PROSE_SPECIALS))
                problems.append(f"{block} puts LaTeX specials {specials!r} outside math (from an interpolated value?)")
            if fmt == "md" and block == "prompt":
                problems += _tolerances_stated(problem, text, format_number)
    return problems


def _tolerances_stated(problem: Problem, prompt: str, format_number) -> list[str]:
    missing = []
    for part in problem.parts:
        if not _answer_type(part).tolerant or not (part.atol or part.rtol):
            continue
        shown = []
        if part.atol:
            shown.append(format_number(part.atol, 8))
        if part.rtol:
            shown += [format_number(part.rtol, 8), format_number(part.rtol * 100, 6)]
        if not any(s in prompt for s in shown):
            missing.append(f"the prompt does not state the tolerance of part {part.key} ({' or '.join(shown)})")
    return missing


def _unbalanced_dollars(text: str) -> bool:
    return len(re.findall(r"(?<!\\)\$", text)) % 2 == 1


def _check_template_source(kind: str) -> list[Failure]:
    """Prose outside math in the fragment source must avoid LaTeX specials and Markdown-only markup."""
    path = builtin_templates_dir() / "problems" / f"{kind}.j2"
    if not path.is_file():
        return [Failure(kind, "template", f"missing template fragment {path.name}")]
    text = _MATH.sub(_blank, _JINJA.sub(_blank, path.read_text(encoding="utf-8")))
    failures = []
    for number, line in enumerate(text.splitlines(), start=1):
        bad = _prose_problems(line)
        if bad:
            failures.append(Failure(kind, "template", f"{path.name}:{number}: outside math: {' '.join(bad)}"))
    return failures


def _blank(match: re.Match) -> str:
    """Replace a jinja tag or math span by a space, keeping its newlines so line numbers stay right."""
    return " " + "\n" * match.group(0).count("\n")


def _prose_problems(prose: str) -> list[str]:
    """LaTeX specials and Markdown-only markup found in text that is not math."""
    bad = sorted(set(prose) & _PROSE_SPECIALS)
    if "**" in prose or "`" in prose or prose.lstrip().startswith(("#", "- ", "* ", "|")):
        bad.append("Markdown-only markup")
    return bad


# ------------------------------------------------------------------------------------ distinctness


def _signature(problem: Problem) -> str:
    """What the student sees: the params and the questions asked."""
    return json.dumps([problem.params, [p.label for p in problem.parts]], sort_keys=True)


def _distinctness(kind: str, signatures: dict[int, list[str]]) -> list[Failure]:
    failures = []
    for difficulty, seen in sorted(signatures.items()):
        distinct = len(set(seen))
        needed = max(2, min(math.ceil(MIN_DISTINCT_FRACTION * len(seen)), MIN_DISTINCT_CAP))
        if len(seen) >= 2 and distinct < needed:
            failures.append(Failure(
                kind, "distinct",
                f"difficulty {difficulty}: only {distinct} distinct variants among {len(seen)} seeds",
            ))
    return failures


def summary(results: dict[str, list[Failure]], seeds: int) -> str:
    """One line: how many kinds and seeds were checked and how many failures were found."""
    total = sum(len(f) for f in results.values())
    bad = sum(1 for f in results.values() if f)
    return (f"checked {counted(len(results), 'kind')} x {counted(seeds, 'seed')}: {counted(total, 'failure')} "
            f"in {counted(bad, 'kind')}")
