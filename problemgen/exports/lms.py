"""The format-neutral question model every learning-platform export renders (Moodle, GIFT, QTI).

Why one model: which blank a part becomes, its tolerance, which known mistakes an LMS can recognise
and what cannot be checked are decided once, here; each format (``moodle``, ``gift``, ``qti12``…)
only writes the model down. The round-trip tests then check every format against the same rules.

Mapping (from the frozen :class:`~problemgen.model.Problem`, never ``reference``):

- number -> one numerical blank with the part's absolute tolerance ``atol + rtol·|key|``; integer ->
  numerical, exact. Each known mistake farther from the key than the tolerance is a 0-credit answer
  with its hint as feedback (nearer ones are left out: an LMS would take them for the key).
- matrix -> one numerical blank per entry, row-major, each with its tolerance; a mistake matrix of the
  same shape gives a wrong answer for each entry where it differs beyond the tolerance.
- choice -> one choice blank, the options' explanations as option feedback.
- term / shape -> a short-answer blank listing accepted spellings (a shape symbolically and with the
  problem's numbers, as ``(a, b)``, ``(a,b)``, ``[a, b]``, ``a x b``).
- mask -> one choice blank per cell, the options in the part's own representation (T/F, 1/0, 0/−∞).
- expression -> the whole question becomes a manually graded essay (key and solution as grader
  information) and a notice says so: never exported wrong.

Prompts and solutions are the fragments' Markdown turned into HTML with maths as ``\\( … \\)`` and
``\\[ … \\]`` for MathJax; attention weights in a solution get a heatmap as an embedded SVG image.
"""

from __future__ import annotations

import base64
import math
import re
from dataclasses import dataclass, replace
from html import escape, unescape
from pathlib import Path
from typing import Any, Callable

from problemgen import exports
from problemgen.documents import markdown_html as md
from problemgen.errors import ProblemgenError
from problemgen.model.core import AnswerPart, Problem
from problemgen.outputs import check_output_apart, check_output_file
from problemgen.safewrite import Staged

MAX_VARIANTS = 200
SEEDS_PER_VARIANT = 20
"""How many worksheet seeds are tried per wanted variant before a pool is declared short."""


@dataclass(frozen=True)
class WrongAnswer:
    """A known mistake an LMS can recognise: 0 credit and its hint as feedback."""

    name: str  # the misconception tag
    value: float | str  # float for numerical blanks, a spelling for short ones, an option id for choices
    feedback: str  # HTML
    tolerance: float = 0.0  # numerical blanks: the window that shows this hint (at most the part's tolerance)


@dataclass(frozen=True)
class Option:
    """One option of a choice blank."""

    id: str
    html: str
    correct: bool
    feedback: str  # HTML: why this option is (not) right; may be ""


@dataclass(frozen=True)
class Blank:
    """One response an LMS checks by itself."""

    id: str  # an identifier unique in the question: "count", "weights_r1_c2", "mask_r0_c3"
    label: str  # HTML shown before the blank
    kind: str  # "numerical" | "choice" | "short"
    value: float | None = None  # numerical: the key
    tolerance: float = 0.0  # numerical: absolute tolerance (0 for integers)
    integer: bool = False
    options: tuple[Option, ...] = ()
    multiple: bool = False
    spellings: tuple[str, ...] = ()  # short: every accepted spelling, the canonical one first
    case_sensitive: bool = False
    mistakes: tuple[WrongAnswer, ...] = ()  # never within the key's tolerance; deduplicated
    points: float = 1.0  # share of the question's points; a question's blanks add up to 1
    part: str = ""  # the answer part's key (several blanks share it for a matrix or a mask)
    part_label: str = ""  # HTML label of the whole part
    cell: tuple[int, int] | None = None  # (row, column) of a matrix or mask entry, for laying out a grid


@dataclass(frozen=True)
class Question:
    """One variant as an LMS question: prompt, blanks and (optionally) the worked solution."""

    variant_id: str  # kind/dD/sSEED…: in the name and metadata of every exported question
    title: str
    prompt: str  # HTML
    solution: str  # HTML worked solution ("" unless with_solutions)
    blanks: tuple[Blank, ...]
    points: float
    manual: str = ""  # non-empty: why an LMS cannot check it -> a manually graded essay
    key_html: str = ""  # the key as HTML (grader information of essays)
    prompt_md: str = ""  # the prompt's Markdown, for the preview
    solution_md: str = ""


@dataclass(frozen=True)
class Pool:
    """One bank item: a Moodle category, a QTI section selecting 1, a Canvas question group."""

    id: str  # a safe identifier
    title: str
    points: float
    questions: tuple[Question, ...]


@dataclass(frozen=True)
class LmsExport:
    bank_id: str
    title: str
    pools: tuple[Pool, ...]
    notices: tuple[str, ...]  # one line each: short pools, questions turned into essays


# --------------------------------------------------------------------------------------------------
# HTML of the fragments: MathJax delimiters
# --------------------------------------------------------------------------------------------------


def mathjax(latex: str, display: bool) -> str:
    """One formula for MathJax; escaped as HTML (the browser decodes it before MathJax reads it)."""
    return f"\\[{escape(latex, quote=False)}\\]" if display else f"\\({escape(latex, quote=False)}\\)"


def fragment_html(markdown: str) -> str:
    """A rendered block (Markdown with ``$…$`` maths) as HTML paragraphs for an LMS."""
    return md.markdown_html(markdown, mathjax)


def text_html(text: Any) -> str:
    """One line of plain text (a label, an option, a hint) as HTML for an LMS: only its maths rendered."""
    return md.text_html(str(text), mathjax)


XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
"""The characters XML 1.0 cannot hold, escaped or not (its ``Char`` production)."""


def xml_document(document: str | bytes, name: str) -> str | bytes:
    """``document`` unchanged, or a one-line error when it would hold a character XML 1.0 forbids.

    Why here: bank validation refuses control characters, but a model built by a library caller or a
    generator could still carry one, and ElementTree writes it raw into a file no reader accepts."""
    text = document.decode("utf-8") if isinstance(document, bytes) else document
    found = XML_FORBIDDEN.search(text)
    if found:
        near = text[max(0, found.start() - 40):found.start()]
        raise ProblemgenError(f"{name}: U+{ord(found.group()):04X} is a character XML 1.0 forbids "
                              f"(after {near!r}); remove it from the bank")
    return document


def plain_text(html: str) -> str:
    """Readable text of model HTML, for the preview: tags dropped, MathJax delimiters back to ``$``."""
    text = re.sub(r"<[^>]+>", "", html)
    text = re.sub(r"\\\((.*?)\\\)", r"$\1$", text)
    return unescape(re.sub(r"\\\[(.*?)\\\]", r"$$\1$$", text, flags=re.S))


# --------------------------------------------------------------------------------------------------
# Blanks, part by part
# --------------------------------------------------------------------------------------------------


def tolerance(part: AnswerPart, value: float) -> float:
    """The absolute tolerance an LMS applies: the part's ``atol + rtol·|value|`` (0 for integers)."""
    if part.type == "integer":
        return 0.0
    return float(part.atol) + float(part.rtol) * abs(float(value))


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _wrong_numbers(candidates: list[tuple[str, Any, str]], key: float, part: AnswerPart) -> tuple[WrongAnswer, ...]:
    """(name, value, hint) -> wrong answers farther than the part's tolerance from the key, first of each value
    kept, each with the tolerance it is exported with (:func:`_mistake_window`)."""
    found: dict[float, tuple[str, str]] = {}
    for name, value, hint in candidates:
        if _is_number(value) and abs(float(value) - key) > tolerance(part, key) and float(value) not in found:
            found[float(value)] = name, text_html(hint)
    return tuple(WrongAnswer(name, value, hint, _mistake_window(part, value, [key, *found]))
                 for value, (name, hint) in found.items())


def _mistake_window(part: AnswerPart, value: float, listed: list[float]) -> float:
    """How far from a mistake's ``value`` a response shows its hint: the grader's tolerance at that value,
    narrowed so that no response in the window is nearer another ``listed`` value (the key, the other
    mistakes) in the grader's measure.

    Why: Moodle and GIFT give a response the first answer whose window holds it, while the grader names the
    mistake a response is nearest to, counted in tolerances at each value, and none where the key is nearer
    (:mod:`problemgen.answers.diagnosis`). Windows of the key's width would overlap where values are close
    or the tolerance is relative, showing a mistake's hint where the grader names another one or none. A
    response ``w`` from ``value`` towards a value ``g`` away is nearer ``value`` while ``w / t < (g - w) / t'``
    (``t``, ``t'`` the two tolerances), so the window stops at ``g·t / (t + t')``. Beyond it a response
    gets no hint (0 credit either way). The window is a hair (:data:`WINDOW_MARGIN`) inside that bound: at
    its very edge the grader's float arithmetic and the LMS's (Moodle widens every window by 10^-14) could
    round to different sides."""
    own = tolerance(part, value)
    limits = [own]
    for other in listed:
        if other != value:
            both = own + tolerance(part, other)
            limits.append(abs(value - other) * own / both if both else 0.0)
    return min(limits) * (1 - WINDOW_MARGIN)


WINDOW_MARGIN = 1e-9
"""How far inside the grader's own bound a mistake's window ends, relative to its width."""


def _numerical(part: AnswerPart, share: float) -> list[Blank]:
    key = float(part.value)
    tol = tolerance(part, key)
    wrong = _wrong_numbers([(m.name, m.value, m.hint) for m in part.mistakes], key, part)
    return [Blank(part.key, text_html(part.label or part.key), "numerical", value=key, tolerance=tol,
                  integer=part.type == "integer", mistakes=wrong, points=share)]


def _grid(value: Any) -> list[list[Any]]:
    """A vector or matrix as rows (a vector is one row)."""
    return value if value and isinstance(value[0], list) else [value]


def _entry(grid: Any, i: int, j: int) -> Any:
    """The (i, j) entry of a mistake value, or None where its shape differs from the key's."""
    try:
        rows = _grid(grid)
        return rows[i][j] if len(rows) > i and isinstance(rows[i], list) else None
    except (IndexError, TypeError):
        return None


def _cells(part: AnswerPart) -> list[tuple[int, int, str, str]]:
    """(row, column, blank id, HTML label) of every entry, row-major; a vector's entries have no row."""
    rows = _grid(part.value)
    vector = not isinstance(part.value[0], list)
    label = text_html(part.label or part.key)
    return [(i, j, f"{part.key}_c{j}" if vector else f"{part.key}_r{i}_c{j}",
             f"{label} [{j + 1}]" if vector else f"{label} [{i + 1}, {j + 1}]")
            for i, row in enumerate(rows) for j in range(len(row))]


def _matrix(part: AnswerPart, share: float) -> list[Blank]:
    rows = _grid(part.value)
    cells = _cells(part)
    blanks = []
    for i, j, blank_id, label in cells:
        key = float(rows[i][j])
        tol = tolerance(part, key)
        candidates = [(m.name, _entry(m.value, i, j), m.hint) for m in part.mistakes]
        blanks.append(Blank(blank_id, label, "numerical", value=key, tolerance=tol,
                            mistakes=_wrong_numbers(candidates, key, part), points=share / len(cells), cell=(i, j)))
    return blanks


def _choice(part: AnswerPart, share: float) -> list[Blank]:
    correct = set(part.value)
    options = tuple(Option(str(o["id"]), text_html(o["text"]), o["id"] in correct, text_html(o.get("why", "")))
                    for o in part.spec["options"])
    wrong: dict[str, WrongAnswer] = {}
    for m in part.mistakes:
        ids = m.value if isinstance(m.value, list) else [m.value]
        if len(ids) == 1 and ids[0] not in correct and any(o.id == ids[0] for o in options):
            wrong.setdefault(str(ids[0]), WrongAnswer(m.name, str(ids[0]), text_html(m.hint)))
    return [Blank(part.key, text_html(part.label or part.key), "choice", options=options,
                  multiple=bool(part.spec.get("multiple")), mistakes=tuple(wrong.values()), points=share)]


MASK_OPTIONS = {
    "bool": (("allowed", "T"), ("masked", "F")),
    "01": (("allowed", "1"), ("masked", "0")),
    "additive": (("allowed", "0"), ("masked", "−∞")),
}
"""(option id, how the part's representation writes it) for a cell that may attend and one that may not."""


def _mask(part: AnswerPart, share: float) -> list[Blank]:
    rows = _grid(part.value)
    choices = MASK_OPTIONS[part.spec.get("representation", "bool")]
    cells = _cells(part)
    blanks = []
    for i, j, blank_id, label in cells:
        key = "allowed" if rows[i][j] else "masked"
        options = tuple(Option(oid, text_html(text), oid == key, "") for oid, text in choices)
        wrong = {}
        for m in part.mistakes:
            cell = _entry(m.value, i, j)
            if isinstance(cell, bool) and bool(cell) != bool(rows[i][j]):
                value = "allowed" if cell else "masked"
                wrong.setdefault(value, WrongAnswer(m.name, value, text_html(m.hint)))
        blanks.append(Blank(blank_id, label, "choice", options=options, mistakes=tuple(wrong.values()),
                            points=share / len(cells), cell=(i, j)))
    return blanks


def shape_spellings(dims: list[Any], given: dict) -> tuple[str, ...]:
    """Accepted spellings of a shape: symbolic and, where the problem gave the numbers, numeric."""
    forms = [[str(d) for d in dims]]
    numeric = [str(_dim_number(d, given)) for d in dims]
    if numeric != forms[0]:
        forms.append(numeric)
    spellings = []
    for form in forms:
        spellings += [f"({', '.join(form)})", f"({','.join(form)})", f"[{', '.join(form)}]", " x ".join(form)]
    if len(dims) == 1:
        spellings += [forms[0][0]] + ([forms[1][0]] if len(forms) > 1 else [])
    return tuple(dict.fromkeys(spellings))


def _dim_number(dim: Any, given: dict) -> Any:
    """A dimension with the problem's numbers put in where every factor is given (``h*d_k`` -> 512)."""
    if isinstance(dim, int):
        return dim
    factors = [f.strip() for f in str(dim).split("*")]
    if all(f in given for f in factors):
        return math.prod(int(given[f]) for f in factors)
    return dim


def _short(part: AnswerPart, share: float) -> list[Blank]:
    if part.type == "term":
        spellings = tuple(dict.fromkeys(str(s) for s in part.value))
        wrong_values = [(m, str(v)) for m in part.mistakes for v in (m.value if isinstance(m.value, list) else [m.value])]
    else:
        spellings = shape_spellings(part.value, part.spec.get("dims", {}))
        wrong_values = [(m, shape_spellings(m.value, {})[0]) for m in part.mistakes if isinstance(m.value, list)]
    fold = (lambda s: s) if part.type == "shape" else str.lower
    accepted = {fold(s) for s in spellings}
    wrong: dict[str, WrongAnswer] = {}
    for m, value in wrong_values:
        if fold(value) not in accepted:
            wrong.setdefault(value, WrongAnswer(m.name, value, text_html(m.hint)))
    return [Blank(part.key, text_html(part.label or part.key), "short", spellings=spellings,
                  case_sensitive=part.type == "shape", mistakes=tuple(wrong.values()), points=share)]


BLANKS: dict[str, Callable[[AnswerPart, float], list[Blank]]] = {
    "number": _numerical, "integer": _numerical, "matrix": _matrix, "choice": _choice,
    "mask": _mask, "term": _short, "shape": _short,
}
"""Answer type -> its blanks; a type missing here (``expression``) makes the question a manual essay."""


def blanks_of(problem: Problem) -> tuple[Blank, ...] | None:
    """Every blank of the problem (shares of the points by part weight), or None when a part cannot be checked."""
    if any(part.type not in BLANKS for part in problem.parts):
        return None
    total = sum(part.weight for part in problem.parts) or 1.0
    return tuple(replace(b, part=part.key, part_label=text_html(part.label or part.key))
                 for part in problem.parts for b in BLANKS[part.type](part, part.weight / total))


# --------------------------------------------------------------------------------------------------
# Questions and pools
# --------------------------------------------------------------------------------------------------


def heatmap_image(part: AnswerPart) -> str:
    """The part's attention weights as an embedded SVG image (an LMS keeps no separate files)."""
    from problemgen.documents.rendering import heatmap_svg  # lazy: jinja2 only when exporting

    data = base64.b64encode(heatmap_svg(part.value).encode()).decode()
    alt = f"Heatmap of {plain_text(text_html(part.label or part.key))}: rows are queries, columns keys"
    return f'<p><img src="data:image/svg+xml;base64,{data}" alt="{escape(alt)}" /></p>'


def _key_html(problem: Problem) -> str:
    from problemgen.documents.rendering import answer_display  # lazy: jinja2 only when exporting

    return "\n".join(f"<p><strong>{text_html(part.label or part.key)}:</strong></p>"
                     f"{fragment_html(answer_display(part, 'md'))}" for part in problem.parts)


def question_of(problem: Problem, points: float, renderer, with_solutions: bool) -> Question:
    """One variant as a :class:`Question` (an essay when a part cannot be checked by an LMS)."""
    from problemgen.documents.rendering import is_heatmap  # lazy: jinja2 only when exporting

    prompt_md = renderer.block(problem, "prompt")
    solution_md = renderer.block(problem, "solution") if with_solutions else ""
    solution = fragment_html(solution_md) if with_solutions else ""
    if with_solutions:
        solution += "".join("\n" + heatmap_image(p) for p in problem.parts if is_heatmap(p))
    blanks = blanks_of(problem)
    manual = "" if blanks is not None else (
        "parts " + ", ".join(f"{p.key} ({p.type})" for p in problem.parts if p.type not in BLANKS)
        + " cannot be checked by an LMS")
    return Question(problem.variant_id, problem.title, fragment_html(prompt_md), solution, blanks or (), points,
                    manual=manual, key_html=_key_html(problem) if manual else "",
                    prompt_md=prompt_md, solution_md=solution_md)


def slots(export: LmsExport) -> list[tuple[Pool, Question, str]]:
    """Each question with a name unique in the export, ``POOL.K_VARIANT`` (its pool, its place there).

    Why not the variant id alone: the same variant can sit in two bank places (pinned seeds, or a kind
    with few variants), and a format whose identifiers must be unique (QTI) would then share one item,
    with one place's points, between both places."""
    return [(pool, question, f"{pool.id}.{k}_{question.variant_id}")
            for pool in export.pools for k, question in enumerate(pool.questions, start=1)]


def variant_pools(bank, n: int, seed: int) -> list[tuple[str, float, list[Problem]]]:
    """(pool id, points, up to ``n`` distinct problems) per bank place, drawn from worksheet seeds
    ``seed, seed+1, …`` exactly as worksheets draw them (so ``problemgen show`` rebuilds each one)."""
    from problemgen.documents.worksheet import MAX_SEED, ProblemCache, problem_seed  # lazy: numpy only when exporting

    cache, found = ProblemCache(), []
    sheets = range(seed, min(seed + SEEDS_PER_VARIANT * n, MAX_SEED + 1))  # worksheet seeds only
    for index, item in enumerate(bank.items):
        for copy in range(item.size):
            distinct: dict[str, Problem] = {}
            seeds = [item.seeds[copy]] if item.seeds is not None else [
                problem_seed(s, index, copy, item.kind) for s in sheets]
            for problem_seed_ in seeds:
                problem = cache.get(item, problem_seed_)
                distinct.setdefault(problem.variant_id, replace(problem, title=item.title) if item.title else problem)
                if len(distinct) >= n:
                    break
            found.append((f"p{len(found) + 1}", item.points, list(distinct.values())))
    return found


def build_export(bank: str, n: int, seed: int = 0, with_solutions: bool = False) -> LmsExport:
    """The pools of ``n`` distinct variants per bank place, ready for any LMS format."""
    from problemgen.documents.banks import load_bank  # lazy: listing exports must not load banks
    from problemgen.documents.worksheet import MAX_SEED, DocumentRenderer  # lazy: jinja2 only when exporting

    if not 1 <= n <= MAX_VARIANTS:
        raise ProblemgenError(f"-n must be between 1 and {MAX_VARIANTS}, got {n}")
    if not 0 <= seed <= MAX_SEED:
        raise ProblemgenError(f"--seed must be a worksheet seed from 0 to {MAX_SEED}, got {seed}")
    bank_obj, renderer = load_bank(bank), DocumentRenderer()
    pools, notices = [], []
    for pool_id, points, problems in variant_pools(bank_obj, n, seed):
        questions = tuple(question_of(p, points, renderer, with_solutions) for p in problems)
        pools.append(Pool(pool_id, questions[0].title, points, questions))
        if len(questions) < n:
            notices.append(f"{pool_id} ({questions[0].title}): only {_count(len(questions), 'distinct variant')}")
        notices += [f"{q.variant_id}: {q.manual}: exported as a manually graded essay" for q in questions if q.manual]
    return LmsExport(bank_obj.id, bank_obj.title, tuple(pools), tuple(notices))


# --------------------------------------------------------------------------------------------------
# The shared command: options, preview, writing
# --------------------------------------------------------------------------------------------------


def lms_options() -> tuple[exports.Option, ...]:
    """The options every LMS export takes (the format's own, if any, come after these)."""
    return (
        exports.Option("--bank", "bank", "Question bank (path or shipped name).", required=True),
        exports.Option("--count", "n", "Distinct variants per bank item (1 to 200).", default="5", short="-n"),
        exports.Option("--output", "output", "The file to write.", kind="path", required=True, short="-o"),
        exports.Option("--seed", "seed", "First worksheet seed; variants come from seed, seed+1, ….", default="0"),
        exports.Option("--with-solutions", "with_solutions", "Include each worked solution as general feedback.",
                       kind="flag"),
        exports.Option("--preview", "preview", "Also write a readable Markdown preview of the export.", kind="path"),
    )


def _int(text: Any, name: str) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        raise ProblemgenError(f"{name} must be an integer, got {text!r}") from None


def lms_build(render: Callable[[LmsExport], str | bytes],
              note: Callable[[LmsExport], list[str]] | None = None,
              adapt: Callable[[LmsExport], LmsExport] | None = None) -> Callable[..., str]:
    """The ``build`` of an LMS :class:`~problemgen.exports.Export`: model, render, write, report.

    ``render`` turns the model into the file's text (or bytes, e.g. a zip); ``adapt``, if any, first
    drops what the format cannot hold, so the preview shows what was written; the terminal gets the
    notices, the format's own ``note`` lines about the whole model, if any, and the files written."""

    def build(bank: str, n: Any, output: Any, seed: Any = "0", with_solutions: bool = False,
              preview: Any = None) -> str:
        targets = output_paths(output, preview, bank)
        export = build_export(str(bank), _int(n, "-n"), _int(seed, "--seed"), bool(with_solutions))
        written_model = adapt(export) if adapt else export
        contents = [render(written_model), *([preview_markdown(written_model)] if preview else [])]
        with Staged(durable=True) as staged:  # the export and its preview together, or neither
            for path, content in zip(targets, contents):
                staged.add(path, content)
            staged.commit()
        notes = note(export) if note else []
        return "".join(f"{line}\n" for line in [*export.notices, *notes, *(f"wrote {p}" for p in targets)])

    return build


def one_per_blank_note(noun: str) -> Callable[[LmsExport], list[str]]:
    """For formats without multi-blank questions (GIFT, Canvas): the line saying how many variants
    became one ``noun`` per blank."""

    def note(export: LmsExport) -> list[str]:
        several = [q for pool in export.pools for q in pool.questions if len(q.blanks) > 1]
        blanks = sum(len(q.blanks) for q in several)
        return [f"{len(several)} variants with several blanks became {blanks} {noun}, one per blank"] if several else []

    return note


def output_paths(output: Any, preview: Any, bank: Any = None) -> list[Path]:
    """The files an export writes (``--output``, then ``--preview`` if given), each checked writable and
    apart from the bank file it reads before anything is built or written: a bad ``--preview`` must
    neither leave a new export behind nor have replaced an old one."""
    paths = [Path(output), *([Path(preview)] if preview else [])]
    if len(paths) == 2 and paths[0].resolve() == paths[1].resolve():
        raise ProblemgenError(f"--preview {preview} is the --output file; give it another name")
    bank_file = bank if bank is not None and Path(bank).is_file() else None  # else a shipped bank's name
    for path, option in zip(paths, ("--output", "--preview")):
        check_output_apart(path, {"bank": bank_file}, option)
        check_output_file(path, option)
    return paths


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(float(x))


def _count(value: float, noun: str) -> str:
    return f"{_number(value)} {noun}" + ("" if value == 1 else "s")


def _md(text: str) -> str:
    """Plain text (a title, a notice) for the preview: Markdown specials escaped, ``$…$`` maths kept."""
    from problemgen.documents.rendering import md_text  # lazy: jinja2 only when exporting

    return md_text(text)


def _md_of(html: str) -> str:
    """Model HTML (a label, an option, a hint) for the preview, as :func:`_md` of its text."""
    return _md(plain_text(html))


def _blank_line(blank: Blank) -> str:
    """One blank of the preview: its key and what the LMS does with the known mistakes."""
    if blank.kind == "numerical":
        answer = _number(blank.value) + ("" if blank.integer else f" ± {_number(blank.tolerance)}")
    elif blank.kind == "choice":
        answer = ", ".join(_md_of(o.html) for o in blank.options if o.correct)
        answer += f" (of: {' / '.join(_md_of(o.html) for o in blank.options)})"
    else:
        answer = " | ".join(f"`{s}`" for s in blank.spellings)
    shown = {o.id: _md_of(o.html) for o in blank.options}  # a choice's mistake is an option id

    def value(m: WrongAnswer) -> str:
        return _number(m.value) if isinstance(m.value, float) else shown.get(m.value, _md(m.value))

    mistakes = "".join(f"\n  - wrong: {value(m)} ({m.name}): {_md_of(m.feedback)}" for m in blank.mistakes)
    return f"- {_md_of(blank.label)} [{blank.kind}, {blank.points:.3g} of the points]: {answer}{mistakes}"


def _question_markdown(question: Question) -> str:
    lines = [f"### {_md(question.title)} [{question.variant_id}]", "", question.prompt_md.strip(), ""]
    if question.manual:
        lines += [f"*Manually graded essay: {question.manual}.* Key:", "", plain_text(question.key_html), ""]
    else:
        lines += ["Answers:", "", *(_blank_line(b) for b in question.blanks), ""]
    if question.solution_md:
        lines += ["**Solution.**", "", question.solution_md.strip(), ""]
    return "\n".join(lines)


def preview_markdown(export: LmsExport) -> str:
    """What was exported, readable: each pool, each variant's prompt, its blanks with keys and mistakes."""
    lines = [f"# {_md(export.title)} ({export.bank_id})", ""]
    if export.notices:
        lines += ["Notices:", "", *(f"- {_md(n)}" for n in export.notices), ""]
    for pool in export.pools:
        heading = (f"## {pool.id}: {_md(pool.title)} ({_count(pool.points, 'point')}, "
                   f"{_count(len(pool.questions), 'variant')})")
        lines += [heading, ""]
        lines += [_question_markdown(q) for q in pool.questions]
    return "\n".join(lines).rstrip() + "\n"
