"""Moodle XML export: each bank item becomes a question category holding a pool of N variants.

An instructor imports the file into the question bank and adds "random question from category" to a
quiz, so each student gets one variant. Each question's name and idnumber carry the variant id
(``kind/dD/sSEED``) so a delivered question can be rebuilt with ``problemgen show``.

Answers are the frozen values of the :class:`~problemgen.model.Problem` (never ``reference``):
a lone number or integer is a ``numerical`` question with the part's tolerance (integers exact), each
known mistake a 0-credit answer with its hint; a lone choice is ``multichoice`` with per-option feedback;
a lone term is ``shortanswer`` with every accepted spelling; anything else (several parts, matrices,
shapes) is a ``cloze`` question with one blank per entry. Parts Moodle cannot check (expressions,
masks) make the question left out, and are listed — never exported wrong.
"""

from __future__ import annotations

import re
from pathlib import Path
from xml.sax.saxutils import escape

from problemgen.errors import ProblemgenError
from problemgen.exports import Export, Option
from problemgen.model.core import AnswerPart, Problem

UNCHECKABLE = ("expression", "mask")


def mathjax(markdown: str) -> str:
    """Turn the fragments' ``$…$`` maths into ``\\( … \\)`` for MathJax, as Moodle and Canvas render it."""
    return re.sub(r"(?<!\\)\$([^$\n]+?)\$", r"\\(\1\\)", markdown)


def tolerance(part: AnswerPart, value: float) -> float:
    """The absolute tolerance Moodle applies: the part's ``atol + rtol·|value|`` (0 for integers)."""
    if part.type == "integer":
        return 0.0
    return float(part.atol) + float(part.rtol) * abs(float(value))


def _num(x: float) -> str:
    return repr(float(x)) if not float(x).is_integer() else str(int(x)) if abs(x) < 1e15 else repr(float(x))


def _flat(value) -> list:
    return [y for x in value for y in _flat(x)] if isinstance(value, list) else [value]


def _text(tag: str, body: str) -> str:
    return f'<{tag} format="html"><text><![CDATA[{body}]]></text></{tag}>'


def _numerical(part: AnswerPart) -> str:
    answers = [f'<answer fraction="100"><text>{_num(part.value)}</text>'
               f'<tolerance>{_num(tolerance(part, part.value))}</tolerance></answer>']
    for m in part.mistakes:
        if not isinstance(m.value, (int, float)):
            continue
        answers.append(f'<answer fraction="0"><text>{_num(m.value)}</text><tolerance>'
                       f'{_num(tolerance(part, m.value))}</tolerance>{_text("feedback", escape(m.hint))}</answer>')
    return "".join(answers)


def _choice(part: AnswerPart) -> str:
    correct = set(part.value)
    share = 100.0 / len(correct)
    out = [f"<single>{'false' if part.spec.get('multiple') else 'true'}</single><shuffleanswers>0</shuffleanswers>"]
    for option in part.spec["options"]:
        fraction = _num(share) if option["id"] in correct else "0"
        out.append(f'<answer fraction="{fraction}" format="html"><text><![CDATA[{mathjax(option["text"])}]]></text>'
                   f'{_text("feedback", mathjax(option.get("why", "")))}</answer>')
    return "".join(out)


def _short(spellings: list[str]) -> str:
    return "<usecase>0</usecase>" + "".join(
        f'<answer fraction="100"><text>{escape(s)}</text></answer>' for s in spellings)


def _spellings(part: AnswerPart) -> list[str]:
    if part.type == "term":
        return [str(s) for s in part.value]
    dims = [str(d) for d in part.value]  # shape: "(a, b)" and "a x b" both accepted
    return [f"({', '.join(dims)})", " x ".join(dims), ", ".join(dims)]


def _cloze_escape(text: str) -> str:
    return re.sub(r"([}#~/\"\\=])", r"\\\1", text)


def _cloze_blanks(part: AnswerPart) -> list[str]:
    """One embedded answer per entry: NUMERICAL with tolerance, MULTICHOICE or SHORTANSWER."""
    if part.type in ("number", "integer", "matrix"):
        return [f"{{1:NUMERICAL:={_num(v)}:{_num(tolerance(part, v))}}}" for v in _flat(part.value)]
    if part.type == "choice":
        opts = "~".join(("%100%" if o["id"] in part.value else "%0%") + _cloze_escape(o["text"])
                        for o in part.spec["options"])
        return [f"{{1:MULTICHOICE:{opts}}}"]
    return ["{1:SHORTANSWER:" + "~".join(f"%100%{_cloze_escape(s)}" for s in _spellings(part)) + "}"]


def question_xml(problem: Problem, prompt: str, solution: str) -> str:
    """One Moodle ``<question>`` for the variant (the caller has checked that every part is checkable)."""
    vid = problem.variant_id
    head = f"<name><text>{escape(problem.title)} [{escape(vid)}]</text></name><idnumber>{escape(vid)}</idnumber>"
    feedback = _text("generalfeedback", mathjax(solution))
    if len(problem.parts) == 1 and problem.parts[0].type in ("number", "integer"):
        kind, body = "numerical", _numerical(problem.parts[0])
    elif len(problem.parts) == 1 and problem.parts[0].type == "choice":
        kind, body = "multichoice", _choice(problem.parts[0])
    elif len(problem.parts) == 1 and problem.parts[0].type == "term":
        kind, body = "shortanswer", _short(_spellings(problem.parts[0]))
    else:
        kind, body = "cloze", ""
        prompt += "".join(f"<p>{escape(p.label or p.key)}: {' '.join(_cloze_blanks(p))}</p>" for p in problem.parts)
    return (f'<question type="{kind}">{head}{_text("questiontext", mathjax(prompt))}{feedback}'
            f"<defaultgrade>1</defaultgrade>{body}</question>\n")


def pools(bank_path: str, n: int, seed: int):
    """For each bank item, ``n`` distinct variants drawn from worksheet seeds ``seed, seed+1, …``."""
    from problemgen.documents.banks import load_bank  # lazy: listing exports must not load banks
    from problemgen.documents.worksheet import build_variant  # lazy: numpy only when exporting

    if not 1 <= n <= 200:
        raise ProblemgenError("-n must be between 1 and 200")
    bank = load_bank(bank_path)
    found: dict[str, dict[str, Problem]] = {}
    for s in range(seed, seed + 20 * n):
        for placed in build_variant(bank, s).problems:
            pool = found.setdefault(placed.id, {})
            if len(pool) < n:
                pool.setdefault(placed.problem.variant_id, placed.problem)
        if all(len(p) >= n for p in found.values()):
            break
    return bank, found


def build_moodle(bank: str, n: int, output: str, seed: int = 0) -> str:
    from problemgen.documents.worksheet import DocumentRenderer  # lazy: jinja2 only when exporting

    bank_obj, found = pools(bank, n, seed)
    renderer, out, skipped = DocumentRenderer(), ['<?xml version="1.0" encoding="UTF-8"?>\n<quiz>\n'], []
    for pid, pool in found.items():
        out.append(f'<question type="category"><category><text>$course$/{escape(bank_obj.id)}/{pid}</text>'
                   f"</category></question>\n")
        for problem in pool.values():
            bad = [p.key for p in problem.parts if p.type in UNCHECKABLE]
            if bad:
                skipped.append(f"{problem.variant_id}: parts {', '.join(bad)} cannot be checked by Moodle (left out)")
                continue
            out.append(question_xml(problem, renderer._block(problem, "prompt", "md"),
                                    renderer._block(problem, "solution", "md")))
    out.append("</quiz>\n")
    Path(output).write_text("".join(out), encoding="utf-8")
    short = [f"{pid}: only {len(p)} distinct variants" for pid, p in found.items() if len(p) < n]
    return "".join(line + "\n" for line in [*short, *skipped, f"wrote {output}"])


EXPORT = Export(
    name="moodle",
    summary="Moodle XML question pools (one category per bank item).",
    help="""Write a Moodle XML file: one question category per bank item holding N distinct variants.

    Import it in Moodle (Question bank > Import > Moodle XML) and add "random question from category".
    Parts Moodle cannot check are listed and left out.

    Example:
      problemgen export moodle question_banks/attention_basics.toml -n 5 -o pool.xml
    """,
    options=(
        Option("--bank", "bank", "Question bank (path or shipped name).", required=True),
        Option("--count", "n", "Variants per bank item.", default="5", short="-n"),
        Option("--output", "output", "The XML file to write.", kind="path", required=True, short="-o"),
        Option("--seed", "seed", "First worksheet seed.", default="0"),
    ),
    build=lambda bank, n, output, seed="0": build_moodle(bank, _int(n, "-n"), str(output), _int(seed, "--seed")),
)


def _int(text, name: str) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        raise ProblemgenError(f"{name} must be an integer, got {text!r}") from None
