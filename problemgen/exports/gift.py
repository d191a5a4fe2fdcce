"""GIFT export: Moodle's plain-text question format, one ``$CATEGORY:`` per bank place.

GIFT suits instructors who keep question banks as text (or edit them before import: Question bank >
Import > GIFT). It renders the same model as the Moodle XML export (``exports.lms``):

- numerical blank -> ``{#key:tol}``; with known mistakes ``{#=key:tol =%0%value:tol#hint …}``;
- choice -> ``{=right#why ~wrong#why}`` (several right options: ``~%50%a ~%50%b ~%-100%c``);
- short answer -> ``{=spelling =spelling =%0%wrong#hint}`` (GIFT cannot make it case-sensitive, so a
  shape's names are compared ignoring case there; ``*`` is escaped, Moodle reads it as a wildcard);
- a question no LMS can check -> essay ``{}`` (GIFT has no grader information, so with
  ``--with-solutions`` the key comes first in the general feedback; the ``--preview`` always has it);
- the worked solution (``--with-solutions``) -> general feedback ``####…``.

Multi-part problems, matrices and masks: GIFT has no cloze (one answer set per question), so each
blank becomes its own question, named ``TITLE [VARIANT] part k of K: label`` and carrying the whole
prompt, in the pool's category. Why not one essay: the blanks stay automatically graded with their
tolerances and mistakes. The price: "random question from category" then asks one blank of one
variant, so the command says so, and Moodle XML (cloze) is the format for whole multi-part problems.

Escaping follows Moodle's GIFT reader: ``\\\\`` is a backslash, and ``\\~ \\= \\# \\{ \\} \\:`` (and
``\\n``) the characters themselves; so every backslash of the HTML and its LaTeX is doubled first, then
the six specials are escaped, and lines are joined (a blank line would end the question).
"""

from __future__ import annotations

import re

from problemgen.exports import Export
from problemgen.exports.lms import Blank, LmsExport, Pool, Question, lms_build, lms_options, one_per_blank_note
from problemgen.exports.moodle import choice_fractions, number

_SPECIALS = re.compile(r"([~=#{}:])")


def gift_escape(text: str) -> str:
    """Text for anywhere in a GIFT question: backslashes doubled, ``~ = # { } :`` escaped, one line."""
    text = _SPECIALS.sub(r"\\\1", text.replace("\\", "\\\\"))
    return " ".join(text.split("\n")).strip()


def gift_spelling(spelling: str) -> str:
    return gift_escape(spelling.replace("*", "\\*"))


def _feedback(html: str) -> str:
    return f"#{gift_escape(html)}" if html else ""


def _percent(share: float) -> str:
    return f"%{100 * share:.7g}%"


def answers(blank: Blank) -> str:
    """The inside of the braces for one blank (without general feedback)."""
    if blank.kind == "numerical":
        key = f"{number(blank.value)}:{number(blank.tolerance)}"
        if not blank.mistakes:
            return f"#{key}"
        wrong = " ".join(f"=%0%{number(m.value)}:{number(m.tolerance)}{_feedback(m.feedback)}" for m in blank.mistakes)
        return f"#={key} {wrong}"
    if blank.kind == "choice":
        hints = {m.value: m.feedback for m in blank.mistakes}
        parts = []
        for option, share in zip(blank.options, choice_fractions(blank)):
            mark = ("=" if option.correct else "~") if not blank.multiple else f"~{_percent(share)}"
            parts.append(f"{mark}{gift_escape(option.html)}{_feedback(option.feedback or hints.get(option.id, ''))}")
        return " ".join(parts)
    right = [f"={gift_spelling(s)}" for s in blank.spellings]
    wrong = [f"=%0%{gift_spelling(str(m.value))}{_feedback(m.feedback)}" for m in blank.mistakes]
    return " ".join(right + wrong)


def _general(question: Question) -> str:
    return f" ####{gift_escape(question.solution)}" if question.solution else ""


def _name(question: Question, suffix: str = "") -> str:
    return f"::{gift_escape(f'{question.title} [{question.variant_id}]{suffix}')}::"


def question_gift(question: Question) -> list[str]:
    """The GIFT question(s) of one variant: one, or one per blank for a multi-blank problem."""
    prompt = f"[html]{gift_escape(question.prompt)}"
    if question.manual:  # GIFT has no grader information: the key joins the solution as general feedback
        key = f" ####{gift_escape(question.key_html + question.solution)}" if question.solution else ""
        return [f"{_name(question)}{prompt}{{{key.strip()}}}"]
    if len(question.blanks) == 1:
        (blank,) = question.blanks
        return [f"{_name(question)}{prompt} {gift_escape(f'<p>{blank.label}</p>')}{{{answers(blank)}{_general(question)}}}"]
    total = len(question.blanks)
    return [f"{_name(question, f' part {k} of {total}: ' + blank.label)}{prompt} "
            f"{gift_escape(f'<p>Part {k} of {total}: {blank.label}</p>')}{{{answers(blank)}{_general(question)}}}"
            for k, blank in enumerate(question.blanks, start=1)]


def category_line(bank_id: str, pool: Pool) -> str:
    """``$CATEGORY:`` of a pool; GIFT specials left out of the name, ``/`` doubled (Moodle's path separator)."""
    name = re.sub(r"[~=#{}:\\\s]+", " ", f"{bank_id}/{pool.id} {pool.title.replace('/', '//')}").strip()
    return f"$CATEGORY: $course$/top/{name}"


def render_gift(export: LmsExport) -> str:
    """The whole GIFT file: a comment, then per pool its category and questions, blank lines between."""
    blocks = [f"// {gift_escape(export.title)} ({export.bank_id}): exported by problemgen"]
    for pool in export.pools:
        blocks.append(category_line(export.bank_id, pool))
        blocks += [text for q in pool.questions for text in question_gift(q)]
    return "\n\n".join(blocks) + "\n"


EXPORT = Export(
    name="gift",
    summary="GIFT text question pools for Moodle (one category per bank item).",
    help="""Write a GIFT file: one $CATEGORY per bank item holding N distinct variants.

    Numbers become numerical questions with tolerance and the known mistakes as 0-credit answers with
    hints; choices multiple choice; words and shapes short answer. GIFT has no cloze, so a problem with
    several blanks (parts, matrix entries, mask cells) becomes one question per blank, named after the
    variant with "part k of K" (use the moodle export for whole multi-part problems). Import it in
    Moodle (Question bank > Import > GIFT).

    \b
    Example:
      problemgen export gift --bank params_memory -n 5 -o pool.gift.txt
      problemgen export gift --bank masking -n 2 -o masking.txt --with-solutions --preview masking.md
    """,
    options=lms_options(),
    build=lms_build(render_gift, one_per_blank_note("GIFT questions")),
)
