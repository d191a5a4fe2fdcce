"""Re-grading exported LMS questions against the frozen problems themselves (shared by the format tests).

Each format's reader (``lms_readers``) turns a file back into responses; these checks compare what the
LMS would score with problemgen's own rules for the rebuilt variant: the key full marks, a value just
outside the tolerance 0, every known mistake 0, every mask cell and choice key full and a wrong option 0.
"""

import pytest

from problemgen.exports.lms import MASK_OPTIONS, text_html, tolerance
from problemgen.model.registry import generate


def problem_of(variant_id: str):
    """Rebuild a variant from the id in the file, as an instructor would with ``problemgen show``."""
    head, *overrides = variant_id.split(",")
    kind, difficulty, seed = head.split("/")
    values = dict(o.split("=", 1) for o in overrides)
    return generate(kind, int(seed[1:]), int(difficulty[1:]), **{k: _typed(v) for k, v in values.items()})


def _typed(text: str):
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return {"True": True, "False": False}.get(text, text)


def just_outside(key: float, tol: float) -> list[float]:
    """Values just beyond the tolerance on both sides (one part in 10^9 beyond, for exact answers)."""
    step = 1.01 * tol + max(1e-9, abs(key) * 1e-9)
    return [key + step, key - step]


def _flat(value):
    return [y for x in value for y in _flat(x)] if isinstance(value, list) else [value]


def _responses_per_part(problem) -> list[int]:
    sizes = {"matrix": lambda p: len(_flat(p.value)), "mask": lambda p: len(_flat(p.value))}
    return [sizes.get(p.type, lambda p: 1)(p) for p in problem.parts]


def check_numerical(response, part, key: float, mistakes: list, mistake_feedback: bool = True) -> None:
    tol = tolerance(part, key)
    assert response.score(key) == 100, (part.key, key)
    for inside in (key + 0.99 * tol, key - 0.99 * tol):  # a dropped tolerance fails here
        assert response.score(inside) == 100, (part.key, key, inside)
    for outside in just_outside(key, tol):
        assert response.score(outside) == 0, (part.key, key, outside)
    for name, value in mistakes:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value - key) > tol:
            assert response.score(value) == 0, name
            assert not mistake_feedback or any(a.feedback for a in response.answers if abs(float(a.text) - value) <= a.tolerance), name
    if mistake_feedback and part.type in ("number", "integer"):
        check_hints_name_the_graders_mistake(response, part, key, tol)


def _shown_hint(response, given: float) -> str:
    """The feedback Moodle and GIFT show for ``given``: the first answer whose window holds it."""
    return next((a.feedback for a in response.answers if abs(given - float(a.text)) <= a.tolerance + 1e-12), "")


def check_hints_name_the_graders_mistake(response, part, key: float, tol: float) -> None:
    """Wherever the LMS shows a known mistake's hint, problemgen's grader names that same mistake: probed at
    each mistake's value, around it within the part's tolerance, and halfway to the next listed value (where
    windows that overlap would show the first-listed mistake's hint instead of the nearer one's)."""
    from problemgen.sheets.grading import grade_part

    hints = {m.name: text_html(m.hint) for m in part.mistakes}
    values = sorted({float(m.value) for m in part.mistakes
                     if isinstance(m.value, (int, float)) and not isinstance(m.value, bool)} | {key})
    probes = {*values, *((a + b) / 2 for a, b in zip(values, values[1:]))}
    if part.type == "number":
        probes |= {v + f * tol for v in values for f in (-0.9, -0.5, 0.5, 0.9)}
    for probe in sorted(probes):
        shown = _shown_hint(response, probe)
        if shown:
            verdict = grade_part(part, int(probe) if part.type == "integer" and probe.is_integer() else probe)
            assert verdict.mistake and hints[verdict.mistake] == shown, (part.key, probe, verdict, shown)


def check_part(responses, part, mistake_feedback: bool = True) -> None:
    """Every response of one part scores as problemgen would: key full, outside 0, mistakes 0 (and, with
    ``mistake_feedback``, each numerical mistake shows a hint)."""
    if part.type in ("number", "integer"):
        check_numerical(responses[0], part, float(part.value), [(m.name, m.value) for m in part.mistakes],
                        mistake_feedback)
    elif part.type == "matrix":
        for index, (response, key) in enumerate(zip(responses, _flat(part.value))):
            mistakes = [(m.name, _flat(m.value)[index]) for m in part.mistakes
                        if len(_flat(m.value)) == len(responses)]
            check_numerical(response, part, float(key), mistakes, mistake_feedback)
    elif part.type == "choice":
        (response,) = responses
        assert len(response.correct_options()) == len(part.value)
        assert response.score(response.correct_options()) == pytest.approx(100)
        for wrong in (a.text for a in response.answers if a.fraction <= 0):
            assert response.score([wrong]) == 0
    elif part.type == "mask":
        shown = dict(MASK_OPTIONS[part.spec.get("representation", "bool")])
        for response, allowed in zip(responses, _flat(part.value)):
            right, wrong = (shown["allowed"], shown["masked"]) if allowed else (shown["masked"], shown["allowed"])
            assert response.score([right]) == 100 and response.score([wrong]) == 0
    elif part.type == "term":
        for spelling in part.value:
            assert responses[0].score(spelling) == 100, spelling
        accepted = {s.lower() for s in part.value}
        for m in part.mistakes:
            for value in (v for v in m.value if v.lower() not in accepted):
                assert responses[0].score(value) == 0, value
    elif part.type == "shape":
        assert responses[0].score("(" + ", ".join(str(d) for d in part.value) + ")") == 100
        for m in part.mistakes:
            if m.value != part.value:
                assert responses[0].score("(" + ", ".join(str(d) for d in m.value) + ")") == 0
    else:
        raise AssertionError(f"part type {part.type} exported as an automatically graded question")


def check_variant(variant_id: str, responses: list, essay: bool = False, mistake_feedback: bool = True) -> None:
    """All responses of one exported variant, in part order, against the rebuilt problem
    (``mistake_feedback`` False for a format that cannot show a numerical mistake's hint: Canvas)."""
    problem = problem_of(variant_id)
    if essay:
        assert any(p.type == "expression" for p in problem.parts), variant_id
        return
    sizes = _responses_per_part(problem)
    assert len(responses) == sum(sizes), variant_id
    start = 0
    for part, size in zip(problem.parts, sizes):
        check_part(responses[start:start + size], part, mistake_feedback)
        start += size


HOSTILE = "a ~ b = c # d { e } f : g \\ h ]]> </text> & {1:NUMERICAL:=1} \\n"
"""Every character the formats treat specially, in one string."""


def hostile_export(several_blanks: bool):
    """A hand-built export whose title, prompt, options, spellings and feedback all carry ``HOSTILE``."""
    from problemgen.exports.lms import Blank, LmsExport, Option, Pool, Question, WrongAnswer

    blanks = (
        Blank("n", f"n {HOSTILE}", "numerical", value=-2.5, tolerance=0.01,
              mistakes=(WrongAnswer("m", 2.5, f"hint {HOSTILE}"),), points=0.25),
        Blank("c", f"c {HOSTILE}", "choice", options=(
            Option("a", f"yes {HOSTILE}", True, f"why {HOSTILE}"), Option("b", f"no {HOSTILE} &", False, "")),
            mistakes=(WrongAnswer("m", "b", f"hint {HOSTILE}"),), points=0.25),
        Blank("s", f"s {HOSTILE}", "short", spellings=("h*d_k", "x ~ y", "p{q}#r=s:t", "a\\b"),
              mistakes=(WrongAnswer("m", "w}~#", f"hint {HOSTILE}"),), points=0.5),
    )
    questions = tuple(Question(f"attention.scores/d1/s{k}", f"T {HOSTILE}", f"<p>\\(x_{{1}}\\) {HOSTILE}</p>",
                               f"<p>solution {HOSTILE}</p>", blanks if several_blanks else (blank,), 1.0)
                      for k, blank in enumerate(blanks))
    return LmsExport("hostile", f"H {HOSTILE}", (Pool("p1", f"P {HOSTILE}", 1.0, questions),), ())


def check_hostile_responses(responses, blanks, mistake_feedback: bool = True) -> None:
    """What a reader got back from the hostile export: every value, spelling and feedback intact (the
    hints of numerical and short-answer mistakes only with ``mistake_feedback``; else none at all)."""
    assert len(responses) == len(blanks)
    for response, blank in zip(responses, blanks):
        hints = [blank.mistakes[0].feedback] if mistake_feedback else []
        if blank.kind == "numerical":
            assert response.score(-2.5) == 100 and response.score(-2.5 + 0.0099) == 100
            assert response.score(2.5) == 0 and response.score(-2.52) == 0
            assert [a.feedback for a in response.answers if a.fraction == 0] == hints
        elif blank.kind == "choice":
            texts = [a.text.strip() for a in response.answers]  # a separator-hiding end gets a space
            assert texts == [o.html for o in blank.options]
            assert response.score([response.answers[0].text]) == 100 and response.score([response.answers[1].text]) == 0
            assert [a.feedback for a in response.answers] == [o.feedback or blank.mistakes[0].feedback
                                                             for o in blank.options]
        else:
            for spelling in blank.spellings:
                assert response.score(spelling) == 100, spelling
            assert response.score("hxd_k") == 0  # the * is literal, not a wildcard
            assert response.score("w}~#") == 0
            assert [a.feedback for a in response.answers if a.fraction == 0] == hints


DUPLICATE_BANK = """title = "Dup"
seed = 1
[[problems]]
kind = "attention.weights"
seeds = [5]
points = 1
[[problems]]
kind = "attention.weights"
seeds = [5, 5]
points = 4
"""
"""One variant in three bank places worth 1, 4 and 4 points: a format must keep three questions."""
