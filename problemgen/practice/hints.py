"""Progressive hints, shared by every front end (terminal quiz, web): pure functions of a problem.

Levels, most general first; each level is the next hint that exists for the part (a kind always has
at least two before the solution):

1. the conventions and formula of the kind (the curriculum's hint);
2. the first intermediate quantity of this variant's worked solution that is not itself an answer,
   written as the worked solution writes it (``1/√8 = 1/2.8284``, "with sum 12.5"), never under the
   generator's internal name;
3. something about the shape of the answer: one entry of a matrix, the number of axes of a shape,
   one option ruled out with its reason, the length of a term;
4. the known mistakes to avoid on this part.

Then only the worked solution is left.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any, Mapping

import jinja2

from problemgen.documents import rendering
from problemgen.documents.terminal import to_unicode
from problemgen.misconceptions.catalogue import describe
from problemgen.model.core import AnswerPart, Problem, values_match

NO_MORE = "no more hints for this one: type solution to see the worked solution."


def hint_text(problem: Problem, part: AnswerPart, unit_hint: str, level: int,
              shown: frozenset[str] | None = None) -> str:
    """The hint of ``level`` (1, 2, …) for ``part``; ``shown`` limits level 2 to the solution values
    the worked solution prints (None: any)."""
    hints = hint_levels(problem, part, unit_hint, shown)
    return hints[level - 1] if 1 <= level <= len(hints) else NO_MORE


def hints_given(problem: Problem, reached: Mapping[str, int], unit_hint: str,
                shown: frozenset[str] | None = None) -> list[tuple[int, str]]:
    """The hints already given on ``problem``, as (level, text), part by part in the problem's order
    and level by level, each as :func:`hint_text` gave it: what a resumed problem shows again.
    ``reached``: the level each part reached (``ProgressStore.hints_reached``). Every hint past a
    part's last level said :data:`NO_MORE`; one line at the level reached stands for them all, so a
    level edited by hand into the millions costs one line."""
    given: list[tuple[int, str]] = []
    for part in problem.parts:
        level = reached.get(part.key, 0)
        if level < 1:
            continue
        texts = hint_levels(problem, part, unit_hint, shown)
        given += list(enumerate(texts[:level], 1))
        if level > len(texts):
            given.append((level, NO_MORE))
    return given


def hint_levels(problem: Problem, part: AnswerPart, unit_hint: str,
                shown: frozenset[str] | None = None) -> list[str]:
    """Every hint available for ``part``, in the order they are given."""
    levels = [unit_hint or problem.title]
    step = first_step(problem, shown)
    if step:
        levels.append(f"the worked solution starts from {step}.")
    about = about_the_answer(part)
    if about:
        levels.append(about)
    if part.mistakes:
        traps = "; ".join(dict.fromkeys(describe(m.name) for m in part.mistakes))
        levels.append(f"known mistakes on this part, to avoid: {traps}.")
    return levels


# ------------------------------------------------------------------------ level 2: the first step


def first_step(problem: Problem, shown: frozenset[str] | None = None) -> str | None:
    """The first intermediate of the worked solution, as the solution writes it, or None."""
    source = solution_source(problem.kind)
    if not source:
        return None
    names = [n for n in problem.solution if (shown is None or n in shown) and _numeric(problem.solution[n])
             and not _gives_away(problem, problem.solution[n])]
    found = sorted((m for name in names for m in _reference(name).finditer(source)), key=lambda m: m.start())
    printed = _squeeze(_solution_text(problem))  # a statement from a branch this variant skips is not used
    statements = [s for s in (_statement(problem, source, m) for m in found) if s and _squeeze(s) in printed]
    equations = [s for s in statements if "=" in s]  # written as the solution's own notation
    return (equations or statements or [None])[0]


def first_intermediate(problem: Problem, shown: frozenset[str] | None = None) -> tuple[str, Any] | None:
    """The first numeric solution value that the worked solution shows (all, when ``shown`` is None) and
    that does not give an answer away, as (internal name, value); None when there is none."""
    for name, value in problem.solution.items():
        if (shown is None or name in shown) and _numeric(value) and not _gives_away(problem, value):
            return name, value
    return None


def _gives_away(problem: Problem, value: Any) -> bool:
    for part in problem.parts:
        try:
            if values_match(part, value):
                return True
        except (TypeError, ValueError):
            continue
    return False


def _reference(name: str) -> re.Pattern:
    """A jinja expression printing ``sol.name`` (or ``sol["name"]``)."""
    return re.compile(r"\{\{-?\s*sol(?:\." + re.escape(name) + r"|\[[\"']" + re.escape(name)
                      + r"[\"']\])(?![\w\[.]).*?\}\}", re.S)


def _clause(text: str) -> str:
    """The end of ``text`` after its last clause boundary (". ", ": ", "; ", ", ")."""
    cut = max(text.rfind(mark) for mark in (". ", ": ", "; ", ", ", "! ", "? "))
    return text[cut + 2:] if cut >= 0 else text


def _statement(problem: Problem, source: str, match: re.Match) -> str | None:
    """The worked solution's own words up to the value: the math before it (``1/√dₖ = ``), or the
    clause that introduces it ("with sum"), rendered for this variant; None when it reads badly."""
    line_start = source.rfind("\n", 0, match.start()) + 1
    before = source[line_start:match.start()]
    if "{%" in before:
        before = before[before.rfind("%}") + 2:]
    math_at = _open_math(before)
    if math_at is not None:
        delimiter = "$$" if before.startswith("$$", math_at) else "$"
        math = before[math_at + len(delimiter):]
        statement = delimiter + math + match.group(0) + delimiter
        if "=" not in math:
            statement = _clause(before[:math_at]) + statement
    else:
        statement = _clause(before) + match.group(0)
    lead = statement.replace(match.group(0), "").strip().strip("$").strip()
    if lead.startswith("="):
        return None
    if "=" not in statement and (len(lead.split()) < 2 or lead.split()[0].lower() in _DANGLING):
        return None  # "which is 42", "each with 42": not a statement on its own
    return _render(problem, statement.strip())


_DANGLING = {"which", "and", "each", "so", "a", "an", "the", "with", "giving", "or", "then", "total"}


def _open_math(text: str) -> int | None:
    """Index of the ``$``/``$$`` that opens the math the end of ``text`` is in, or None."""
    opened = None
    i = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "$":
            width = 2 if text.startswith("$$", i) else 1
            opened = None if opened is not None else i
            i += width
            continue
        i += 1
    return opened


def _render(problem: Problem, statement: str) -> str | None:
    env = rendering.environment("text")
    try:
        text = env.from_string(statement).render(rendering.problem_context(problem))
    except (jinja2.TemplateError, TypeError, ValueError, KeyError, AttributeError):
        return None
    text = to_unicode(text).strip()
    return re.sub(r"[ \t]+", " ", text) if "\n" not in text else text


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _solution_text(problem: Problem) -> str:
    try:
        return rendering.render_block(problem, "solution", "text")
    except Exception:  # noqa: BLE001 - a fragment that cannot render gives no level-2 hint, not a crash
        return ""


@functools.lru_cache(maxsize=None)
def fragment_source(kind: str) -> str | None:
    """The jinja source of the kind's fragment (None when the kind has none)."""
    env = rendering.environment("text")
    try:
        return env.loader.get_source(env, f"problems/{kind}.j2")[0]
    except jinja2.TemplateNotFound:
        return None


def solution_source(kind: str) -> str | None:
    """The solution block of the kind's fragment (None when the kind has no fragment)."""
    source = fragment_source(kind)
    if source is None:
        return None
    start = source.find("{% block solution %}")
    return source[start:] if start >= 0 else source


@functools.lru_cache(maxsize=None)
def solution_names(kind: str) -> frozenset[str] | None:
    """Names of the ``sol`` values the kind's worked solution actually shows (None if unreadable).

    A generator may keep helper values in ``solution`` that the fragment never prints (or prints
    differently, e.g. blocked scores as -inf); only values the solution shows make honest hints."""
    source = fragment_source(kind)
    if source is None:
        return None
    return frozenset(a or b for a, b in re.findall(r"\bsol(?:\.(\w+)|\[[\"'](\w+)[\"']\])", source))


# ---------------------------------------------------------------- level 3: the form of the answer


def about_the_answer(part: AnswerPart) -> str | None:
    """A little about the answer itself, by answer type; None when there is nothing safe to say."""
    label = part.label or part.key
    if part.type == "matrix":
        entry = first_entry(part)
        return entry and f"the first entry of {label} is {entry}; the others follow the same way."
    if part.type == "shape" and isinstance(part.value, list):
        return f"{label} has {len(part.value)} axes; the first is {part.value[0]}."
    if part.type == "choice":
        return _ruled_out(part)
    if part.type == "term" and part.value:
        term = part.value if isinstance(part.value, str) else part.value[0]
        words = len(term.split())
        return f"the usual term has {words} word{'s' if words > 1 else ''} and starts with “{term[0]}”."
    if part.type == "integer" and isinstance(part.value, int):
        digits = len(str(abs(part.value)))
        return f"{label} is a whole number with {digits} digit{'s' if digits > 1 else ''}."
    if part.type == "number" and isinstance(part.value, (int, float)) and part.value:
        return f"{label} is {_magnitude(part.value)}."
    if part.type == "mask" and isinstance(part.value, list) and part.value:
        return f"{label} is {len(part.value)} × {len(part.value[0])}, one row per query."
    return None


def _magnitude(value: float) -> str:
    """The order of magnitude of a number in words ("between 1000 and 10000")."""
    size = abs(value)
    low = 10 ** math.floor(math.log10(size))
    sign = "negative, " if value < 0 else ""
    low_text = f"{low:g}" if low < 1 else f"{int(low):,}".replace(",", " ")
    high_text = f"{low * 10:g}" if low * 10 < 1 else f"{int(low * 10):,}".replace(",", " ")
    return f"{sign}between {low_text} and {high_text} in size"


def _ruled_out(part: AnswerPart) -> str | None:
    wrong = [o for o in part.spec.get("options", []) if o.get("id") not in part.value]
    if not wrong:
        return None
    option = wrong[-1]
    why = to_unicode(option.get("why", ""))
    return f"option ({option['id']}) is not right{': ' + why if why else ''}"


def first_entry(part: AnswerPart) -> str | None:
    """Entry (1, 1) of a matrix answer with several entries, formatted; None for other answers."""
    if part.type != "matrix" or not isinstance(part.value, list) or len(part.value) < 1:
        return None
    first = part.value[0][0] if isinstance(part.value[0], list) else part.value[0]
    many = len(part.value) > 1 or (isinstance(part.value[0], list) and len(part.value[0]) > 1)
    return rendering.format_number(first) if many and isinstance(first, (int, float)) else None


def _numeric(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_numeric(v) for v in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)
