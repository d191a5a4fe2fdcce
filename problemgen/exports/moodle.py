"""Moodle XML export: each bank place becomes a question category holding a pool of N variants.

An instructor imports the file into the question bank (Question bank > Import > Moodle XML) and adds
"random question from category" to a quiz, so each student gets one variant. Each question's name and
idnumber carry the variant id (``kind/dD/sSEED``) so a delivered question can be rebuilt with
``problemgen show``. The questions come from the format-neutral model of ``exports.lms``; this module
only writes Moodle's forms of it:

- one numerical blank -> ``numerical`` (tolerance; each known mistake a 0-fraction answer whose feedback
  is its hint);
- one choice blank -> ``multichoice`` with per-option feedback (a known mistake's hint where the option
  has no explanation);
- one short blank -> ``shortanswer`` with every accepted spelling (``*`` escaped: Moodle reads it as a
  wildcard), known wrong spellings as 0-fraction answers with feedback;
- several blanks (multi-part problems, matrices, masks) -> ``cloze``: NUMERICAL blanks with tolerance
  and the mistakes as wrong answers with feedback inside the blank (``{1:NUMERICAL:=key:tol#~%0%m:tol#hint}``),
  MULTICHOICE (a drop-down) per mask cell, MCV (vertical buttons) or MR (several answers) per choice,
  SHORTANSWER or SAC (case-sensitive) for spellings — the short names Moodle documents, which readers
  that take a blank's type to be capital letters also understand;
- a question an LMS cannot check -> ``essay``, with the key and solution as grader information.

Cloze text escaping follows Moodle's reader: an answer ends at an unescaped ``~ # }`` and feedback at
``~ }``, and only HTML entities are decoded after that, so those characters (and ``{ &``) are written as
numeric entities inside blanks.
"""

from __future__ import annotations

import math
from fractions import Fraction
from html import escape

from problemgen.exports import Export
from problemgen.exports.lms import Blank, LmsExport, Pool, Question, lms_build, lms_options, xml_document

FRACTION_DIGITS = 7
MAX_IDNUMBER = 100
"""Moodle's idnumber holds 100 characters; a longer variant id (many overrides) stays in the name only."""


def number(x: float) -> str:
    """A number as Moodle reads it (``1.5``, ``-2``, ``5e-05``): whole numbers without a decimal point."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(float(x))


def cdata(html: str) -> str:
    """HTML inside CDATA; a ``]]>`` in the text is split across two sections."""
    return "<![CDATA[" + html.replace("]]>", "]]]]><![CDATA[>") + "]]>"


def _text(tag: str, html: str) -> str:
    return f'<{tag} format="html"><text>{cdata(html)}</text></{tag}>'


def _fraction(share: float) -> str:
    return f"{100 * share:.{FRACTION_DIGITS}g}"


def literal_spelling(spelling: str) -> str:
    """A short-answer spelling matched literally: Moodle's ``*`` wildcard escaped."""
    return spelling.replace("*", "\\*")


# --------------------------------------------------------------------------------------------------
# One-blank questions
# --------------------------------------------------------------------------------------------------


def _numerical(blank: Blank) -> str:
    answers = [(f'<answer fraction="100"><text>{number(blank.value)}</text><tolerance>{number(blank.tolerance)}'
                f'</tolerance>{_text("feedback", "")}</answer>')]
    answers += [f'<answer fraction="0"><text>{number(m.value)}</text><tolerance>{number(m.tolerance)}'
                f'</tolerance>{_text("feedback", m.feedback)}</answer>' for m in blank.mistakes]
    return "".join(answers)


def choice_fractions(blank: Blank) -> list[float]:
    """Each option's share: correct ones split full marks; in a multiple choice each wrong one takes
    back one correct option's share, so ticking everything does not score."""
    correct = sum(o.correct for o in blank.options) or 1
    wrong = 0.0 if not blank.multiple else -1.0 / correct
    return [1.0 / correct if o.correct else wrong for o in blank.options]


def _option_feedback(blank: Blank) -> list[str]:
    hints = {m.value: m.feedback for m in blank.mistakes}
    return [o.feedback or hints.get(o.id, "") for o in blank.options]


def _multichoice(blank: Blank) -> str:
    head = (f"<single>{'false' if blank.multiple else 'true'}</single><shuffleanswers>0</shuffleanswers>"
            "<answernumbering>abc</answernumbering>")
    return head + "".join(
        f'<answer fraction="{_fraction(share)}" format="html"><text>{cdata(o.html)}</text>{_text("feedback", fb)}</answer>'
        for o, share, fb in zip(blank.options, choice_fractions(blank), _option_feedback(blank)))


def _shortanswer(blank: Blank) -> str:
    answers = [f'<answer fraction="100"><text>{escape(literal_spelling(s), quote=False)}</text>{_text("feedback", "")}</answer>'
               for s in blank.spellings]
    answers += [f'<answer fraction="0"><text>{escape(literal_spelling(str(m.value)), quote=False)}</text>'
                f'{_text("feedback", m.feedback)}</answer>' for m in blank.mistakes]
    return f"<usecase>{int(blank.case_sensitive)}</usecase>" + "".join(answers)


SINGLE = {"numerical": ("numerical", _numerical), "choice": ("multichoice", _multichoice),
          "short": ("shortanswer", _shortanswer)}


# --------------------------------------------------------------------------------------------------
# Cloze
# --------------------------------------------------------------------------------------------------

_CLOZE_ENTITIES = str.maketrans({"~": "&#126;", "#": "&#35;", "}": "&#125;", "{": "&#123;"})


def cloze_text(html: str) -> str:
    """Answer or feedback text for inside a cloze blank: ``& ~ # { }`` as entities (Moodle decodes them
    after splitting the blank), and no trailing backslash or ``&`` that would hide the next separator."""
    text = html.replace("&", "&amp;").translate(_CLOZE_ENTITIES)
    return text + " " if text.endswith(("\\", "&amp;")) else text


def cloze_weights(blanks: tuple[Blank, ...]) -> list[int]:
    """Whole-number cloze weights in the proportions of the blanks' shares (exact for the shares of
    part weights over entry counts; limited to denominators of 1000)."""
    shares = [Fraction(b.points).limit_denominator(1000) for b in blanks]
    scale = math.lcm(*(s.denominator for s in shares))
    weights = [max(1, int(s * scale)) for s in shares]
    common = math.gcd(*weights)
    return [w // common for w in weights]


def _alternative(fraction: str, answer: str, feedback: str) -> str:
    return f"{fraction}{answer}" + (f"#{cloze_text(feedback)}" if feedback else "")


def cloze_blank(blank: Blank, weight: int) -> str:
    """One embedded answer: ``{weight:TYPE:alternatives}``."""
    if blank.kind == "numerical":
        tol = number(blank.tolerance)
        alts = [f"={number(blank.value)}:{tol}"]
        alts += [_alternative("%0%", f"{number(m.value)}:{number(m.tolerance)}", m.feedback) for m in blank.mistakes]
        kind = "NUMERICAL"
    elif blank.kind == "choice":
        alts = [_alternative(f"%{_fraction(share)}%", cloze_text(o.html), fb)
                for o, share, fb in zip(blank.options, choice_fractions(blank), _option_feedback(blank))]
        kind = "MR" if blank.multiple else "MCV" if len(blank.options) > 2 else "MULTICHOICE"
    else:
        alts = [f"={cloze_text(literal_spelling(s))}" for s in blank.spellings]
        alts += [_alternative("%0%", cloze_text(literal_spelling(str(m.value))), m.feedback) for m in blank.mistakes]
        kind = "SAC" if blank.case_sensitive else "SHORTANSWER"
    return f"{{{weight}:{kind}:{'~'.join(alts)}}}"


def outside_blanks(html: str) -> str:
    """Cloze text around the blanks: ``{`` as an entity, so nothing in a prompt or label (LaTeX, a
    hostile title) can read as an embedded answer; the browser shows it as ``{`` to MathJax."""
    return html.replace("{", "&#123;")


def _grid(cells: list[tuple[Blank, str]]) -> str:
    """A matrix or mask part's blanks laid out as the matrix: one table row per row of entries."""
    rows: dict[int, list[str]] = {}
    for blank, text in cells:
        rows.setdefault(blank.cell[0], []).append(f"<td>{text}</td>")
    body = "".join(f"<tr>{''.join(row)}</tr>" for row in rows.values())
    return f"<p>{outside_blanks(cells[0][0].part_label)}:</p>\n<table>{body}</table>"


def _cloze_text(question: Question) -> str:
    """The prompt, then each part: a line with its blank, or a grid of blanks for a matrix or mask."""
    groups: dict[str, list[tuple[Blank, str]]] = {}
    for blank, weight in zip(question.blanks, cloze_weights(question.blanks)):
        groups.setdefault(blank.part or blank.id, []).append((blank, cloze_blank(blank, weight)))
    lines = [_grid(cells) if cells[0][0].cell is not None else
             f"<p>{outside_blanks(cells[0][0].label)}: {cells[0][1]}</p>" for cells in groups.values()]
    return outside_blanks(question.prompt) + "\n" + "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# Questions, categories, the file
# --------------------------------------------------------------------------------------------------


def question_xml(question: Question) -> str:
    """One Moodle ``<question>`` (numerical, multichoice, shortanswer, cloze or essay)."""
    vid = escape(question.variant_id)
    head = f"<name><text>{escape(question.title)} [{vid}]</text></name>"
    idnumber = f"<idnumber>{vid}</idnumber>" if len(question.variant_id) <= MAX_IDNUMBER else ""
    tail = (f'{_text("generalfeedback", question.solution)}<defaultgrade>{number(question.points)}</defaultgrade>'
            f"<penalty>0</penalty><hidden>0</hidden>{idnumber}")
    if question.manual:
        grader = f"<p>Graded by hand: {escape(question.manual)}.</p>{question.key_html}{question.solution}"
        body = ("<responseformat>editor</responseformat><responserequired>1</responserequired>"
                "<responsefieldlines>10</responsefieldlines><attachments>0</attachments>"
                f'{_text("graderinfo", grader)}{_text("responsetemplate", "")}')
        return f'<question type="essay">{head}{_text("questiontext", question.prompt)}{tail}{body}</question>\n'
    if len(question.blanks) == 1:
        kind, write = SINGLE[question.blanks[0].kind]
        text = f"{question.prompt}\n<p>{question.blanks[0].label}</p>"
        return f'<question type="{kind}">{head}{_text("questiontext", text)}{tail}{write(question.blanks[0])}</question>\n'
    return f'<question type="cloze">{head}{_text("questiontext", _cloze_text(question))}{tail}</question>\n'


def category_name(pool: Pool) -> str:
    """A category path segment: Moodle splits category paths at ``/`` and reads ``//`` as a slash."""
    return f"{pool.id} {pool.title}".replace("/", "//")


def render_moodle(export: LmsExport) -> str:
    """The whole Moodle XML file: a category per pool, then its questions."""
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n<quiz>\n']
    bank = export.bank_id.replace("/", "//")
    for pool in export.pools:
        out.append(f'<question type="category"><category><text>$course$/top/{escape(bank)}/'
                   f"{escape(category_name(pool))}</text></category></question>\n")
        out += [question_xml(q) for q in pool.questions]
    out.append("</quiz>\n")
    return xml_document("".join(out), "Moodle XML")


def long_ids_note(export: LmsExport) -> list[str]:
    """Variants whose id does not fit Moodle's idnumber (the question name still carries it)."""
    return [f"{q.variant_id}: longer than Moodle's {MAX_IDNUMBER}-character idnumber, kept in the name only"
            for pool in export.pools for q in pool.questions if len(q.variant_id) > MAX_IDNUMBER]


EXPORT = Export(
    name="moodle",
    summary="Moodle XML question pools (one category per bank item).",
    help="""Write a Moodle XML file: one question category per bank item holding N distinct variants.

    Numbers become numerical questions with the part's tolerance and the known mistakes as 0-credit
    answers with their hints; choices multiple choice; words and shapes short answer; multi-part
    problems, matrices and masks cloze questions. A problem Moodle cannot check (an expression) becomes
    a manually graded essay and is listed. Import it in Moodle (Question bank > Import > Moodle XML)
    and add "random question from category" to a quiz.

    \b
    Example:
      problemgen export moodle --bank attention_basics -n 5 -o pool.xml
      problemgen export moodle --bank masking -n 3 -o masking.xml --with-solutions --preview masking.md
    """,
    options=lms_options(),
    build=lms_build(render_moodle, long_ids_note),
)
