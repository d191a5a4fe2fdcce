"""Canvas QTI 1.2 export: a zip Canvas imports as question banks with one question group per bank item.

Canvas reads IMS QTI 1.2 with its own metadata (``question_type``, ``points_possible``). The zip holds
``imsmanifest.xml`` and one assessment whose sections are question groups that pick one item
(``selection_number`` 1, ``points_per_item`` the bank item's points). It renders the model of
``exports.lms``:

- numerical blank -> ``numerical_question``, the key as an exact answer with a margin in the form
  Canvas itself writes (``varequal`` or ``vargte``/``varlte`` around the key); integers exact;
- choice -> ``multiple_choice_question`` (or ``multiple_answers_question``), per-option feedback;
- short answer -> ``short_answer_question`` with every accepted spelling (Canvas compares ignoring case);
- a question no LMS can check -> ``essay_question`` (graded by hand);
- a choice's known mistakes -> the wrong option's feedback; the known mistakes of numerical and
  short-answer items are left out: Canvas's importer makes every condition of those items that
  compares the response with a value a full-credit answer (its numerical and short-answer questions
  have no 0-credit answers), so a mistake written there would be marked right. Only the key is
  written, and the command says how many hints that leaves out;
- the worked solution (``--with-solutions``) -> the item's general feedback.

Several blanks (multi-part problems, matrices, masks): Canvas's fill-in-multiple-blanks compares text
only, so tolerances would be lost; each blank becomes its own item instead, titled ``TITLE [VARIANT]
part k of K: label`` with the whole prompt — the choice the GIFT export makes, for the same reason,
and said by the command. Canvas then draws one blank of one variant per group; a whole multi-part
problem is graded as one question only in the Moodle export.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import replace

from problemgen.exports import Export
from problemgen.exports.bundle import ZIP_DATE
from problemgen.exports.lms import (
    Blank,
    LmsExport,
    Pool,
    Question,
    lms_build,
    lms_options,
    one_per_blank_note,
    slots,
    xml_document,
)
from problemgen.exports.moodle import number

QTI_NS = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
CP_NS = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"
VARIANT_FIELD = "problemgen_variant"
"""The item metadata field carrying the variant id (``problemgen show`` rebuilds the question from it)."""
_QUESTION_TYPES = {"numerical": "numerical_question", "short": "short_answer_question"}


def _ident(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


def xml_id(text: str) -> str:
    """An identifier that is a valid ``xsd:ID`` (an NCName: letters, digits, ``_ . -``, not starting with a
    digit, dot or hyphen): ``I`` and the text with anything else replaced, as QTI 2.1 names everything.
    The content package manifest needs it: a bank file ``2024_exam.toml`` has the id ``2024_exam``."""
    return "I" + _ident(text)


def sub_element(parent: ET.Element, tag: str, attrib: dict | None = None, text: str | None = None) -> ET.Element:
    """A child element with attributes and text (both QTI exports build their XML with it)."""
    element = ET.SubElement(parent, tag, attrib or {})
    if text is not None:
        element.text = text
    return element


def _material(parent: ET.Element, html: str) -> None:
    sub_element(sub_element(parent, "material"), "mattext", {"texttype": "text/html"}, html)


def _metadata(item: ET.Element, fields: dict[str, str]) -> None:
    box = sub_element(sub_element(item, "itemmetadata"), "qtimetadata")
    for label, entry in fields.items():
        field = sub_element(box, "qtimetadatafield")
        sub_element(field, "fieldlabel", text=label)
        sub_element(field, "fieldentry", text=entry)


def _feedback(item: ET.Element, ident: str, html: str) -> None:
    box = sub_element(item, "itemfeedback", {"ident": ident})
    _material(sub_element(box, "flow_mat"), html)


def _condition(processing: ET.Element, *, score: str | None, feedback: str | None, last: bool) -> ET.Element:
    """A ``respcondition``; returns its ``conditionvar`` for the caller to fill."""
    condition = sub_element(processing, "respcondition", {"continue": "No" if last else "Yes"})
    test = sub_element(condition, "conditionvar")
    if feedback:
        sub_element(condition, "displayfeedback", {"feedbacktype": "Response", "linkrefid": feedback})
    if score is not None:
        sub_element(condition, "setvar", {"action": "Set", "varname": "SCORE"}, score)
    return test


def _near(test: ET.Element, value: float, tolerance: float) -> None:
    """The response equals ``value`` or lies within ``tolerance`` of it (Canvas's exact-with-margin form)."""
    either = sub_element(test, "or")
    sub_element(either, "varequal", {"respident": "response1"}, number(value))
    both = sub_element(either, "and")
    sub_element(both, "vargte", {"respident": "response1"}, number(value - tolerance))
    sub_element(both, "varlte", {"respident": "response1"}, number(value + tolerance))


def _typed_response(item: ET.Element, render: dict | None = None, label: dict | None = None) -> None:
    """The box a student types into: a number (``fibtype`` Decimal) or text."""
    response = sub_element(item.find("presentation"), "response_str", {"ident": "response1", "rcardinality": "Single"})
    sub_element(sub_element(response, "render_fib", render), "response_label", label or {"ident": "answer1",
                                                                                     "rshuffle": "No"})


def _numerical(item: ET.Element, processing: ET.Element, blank: Blank) -> None:
    """Only the key: Canvas would import a mistake's condition as another correct answer."""
    _typed_response(item, {"fibtype": "Decimal"}, {"ident": "answer1"})
    _near(_condition(processing, score="100", feedback=None, last=True), float(blank.value), blank.tolerance)


def _choice(item: ET.Element, processing: ET.Element, blank: Blank) -> None:
    cardinality = "Multiple" if blank.multiple else "Single"
    response = sub_element(item.find("presentation"), "response_lid",
                           {"ident": "response1", "rcardinality": cardinality})
    render = sub_element(response, "render_choice")
    hints = {m.value: m.feedback for m in blank.mistakes}
    for option in blank.options:
        _material(sub_element(render, "response_label", {"ident": _ident(option.id)}), option.html)
        why = option.feedback or hints.get(option.id, "")
        if why:
            sub_element(_condition(processing, score=None, feedback=f"{_ident(option.id)}_fb", last=False), "varequal",
                 {"respident": "response1"}, _ident(option.id))
            _feedback(item, f"{_ident(option.id)}_fb", why)
    test = _condition(processing, score="100", feedback=None, last=True)
    if not blank.multiple:
        (right,) = [o for o in blank.options if o.correct]
        sub_element(test, "varequal", {"respident": "response1"}, _ident(right.id))
        return
    every = sub_element(test, "and")
    for option in blank.options:
        holder = every if option.correct else sub_element(every, "not")
        sub_element(holder, "varequal", {"respident": "response1"}, _ident(option.id))


def _short(item: ET.Element, processing: ET.Element, blank: Blank) -> None:
    """Only the accepted spellings: Canvas would import a wrong spelling's condition as a right one."""
    _typed_response(item)
    either = sub_element(_condition(processing, score="100", feedback=None, last=True), "or")  # explicit: any spelling
    for spelling in blank.spellings:
        sub_element(either, "varequal", {"respident": "response1"}, spelling)


def _essay(item: ET.Element, processing: ET.Element) -> None:
    _typed_response(item)
    sub_element(_condition(processing, score=None, feedback=None, last=True), "other")


def _item(section: ET.Element, question: Question, blank: Blank | None, title: str, text: str, points: float,
          slot: str) -> None:
    """One Canvas item: a single blank of ``question`` (or the whole question as an essay), its ident
    unique in the export (the ``slot`` name of ``lms.slots`` and the blank)."""
    item = sub_element(section, "item", {"ident": _ident(f"{slot}_{blank.id if blank else 'essay'}"),
                                         "title": title})
    choice = "multiple_answers_question" if blank and blank.multiple else "multiple_choice_question"
    kind = "essay_question" if blank is None else _QUESTION_TYPES.get(blank.kind, choice)
    _metadata(item, {"question_type": kind, "points_possible": number(points), VARIANT_FIELD: question.variant_id})
    _material(sub_element(item, "presentation"), text)
    processing = sub_element(item, "resprocessing")
    sub_element(sub_element(processing, "outcomes"), "decvar", {"maxvalue": "100", "minvalue": "0", "varname": "SCORE",
                                                 "vartype": "Decimal"})
    general = question.solution if blank else question.key_html + question.solution if question.solution else ""
    if general:
        sub_element(_condition(processing, score=None, feedback="general_fb", last=False), "other")
        _feedback(item, "general_fb", general)
    if blank is None:
        _essay(item, processing)
    else:
        {"numerical": _numerical, "choice": _choice, "short": _short}[blank.kind](item, processing, blank)


def _items(section: ET.Element, question: Question, points: float, slot: str) -> None:
    name = f"{question.title} [{question.variant_id}]"
    if question.manual or not question.blanks:
        _item(section, question, None, name, question.prompt, points, slot)
        return
    total = len(question.blanks)
    for k, blank in enumerate(question.blanks, start=1):
        title = f"{name} part {k} of {total}: {re.sub(r'<[^>]+>', '', blank.label)}" if total > 1 else name
        heading = f"Part {k} of {total}: " if total > 1 else ""
        _item(section, question, blank, title, f"{question.prompt}<p>{heading}{blank.label}</p>", points, slot)


def _group(root: ET.Element, pool: Pool, questions: list[tuple[Question, str]]) -> None:
    section = sub_element(root, "section", {"ident": _ident(f"group_{pool.id}"), "title": pool.title})
    selection = sub_element(sub_element(section, "selection_ordering"), "selection")
    sub_element(selection, "selection_number", text="1")
    sub_element(sub_element(selection, "selection_extension"), "points_per_item", text=number(pool.points))
    for question, slot in questions:
        _items(section, question, pool.points, slot)


def assessment_xml(export: LmsExport) -> bytes:
    """The QTI 1.2 assessment: a root section holding one question group per pool."""
    root = ET.Element("questestinterop", {"xmlns": QTI_NS})
    assessment = sub_element(root, "assessment", {"ident": _ident(export.bank_id), "title": export.title})
    top = sub_element(assessment, "section", {"ident": "root_section"})
    named = slots(export)
    for pool in export.pools:
        _group(top, pool, [(question, slot) for owner, question, slot in named if owner is pool])
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8", xml_declaration=False)


def manifest_xml(export: LmsExport) -> bytes:
    ident, xid = _ident(export.bank_id), xml_id(export.bank_id)
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<manifest identifier="{xid}_manifest" xmlns="{CP_NS}">'
            f'<metadata><schema>IMS Content</schema><schemaversion>1.1.3</schemaversion></metadata>'
            f'<organizations/><resources><resource identifier="{xid}" type="imsqti_xmlv1p2" '
            f'href="{ident}/{ident}.xml"><file href="{ident}/{ident}.xml"/></resource></resources>'
            f'</manifest>\n').encode("utf-8")


def left_out_hints_note(export: LmsExport) -> list[str]:
    """How many known mistakes of numerical and short-answer blanks Canvas cannot keep (see the module)."""
    typed = [b for pool in export.pools for q in pool.questions if not q.manual for b in q.blanks
             if b.kind in _QUESTION_TYPES]
    count = sum(len(b.mistakes) for b in typed)
    if not count:
        return []
    return [(f"{count} known-mistake hints of numerical and short-answer items left out: Canvas would import "
             "them as correct answers (the moodle, gift and qti21 exports keep them)")]


def without_typed_mistakes(export: LmsExport) -> LmsExport:
    """The model as Canvas gets it: numerical and short-answer blanks without their known mistakes."""
    def blank(b: Blank) -> Blank:
        return replace(b, mistakes=()) if b.kind in _QUESTION_TYPES else b

    def question(q: Question) -> Question:
        return replace(q, blanks=tuple(map(blank, q.blanks)))

    return replace(export, pools=tuple(replace(p, questions=tuple(map(question, p.questions))) for p in export.pools))


def _notes(export: LmsExport) -> list[str]:
    return one_per_blank_note("Canvas items")(export) + left_out_hints_note(export)


def render_qti12(export: LmsExport) -> bytes:
    """The zip: ``imsmanifest.xml`` and ``BANK/BANK.xml``, fixed timestamps (same bank, same bytes)."""
    ident = _ident(export.bank_id)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in (("imsmanifest.xml", manifest_xml(export)), (f"{ident}/{ident}.xml", assessment_xml(export))):
            archive.writestr(zipfile.ZipInfo(path, ZIP_DATE), xml_document(data, path), zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


EXPORT = Export(
    name="qti12",
    summary="Canvas QTI 1.2 zip of question groups (one per bank item).",
    help="""Write a Canvas QTI 1.2 zip: one question group per bank item, drawing 1 of N distinct variants.

    Numbers become numerical questions with the part's tolerance; choices multiple choice with
    per-option feedback (a known mistake's hint on its option); words and shapes short answer. Canvas
    has no wrong answers with feedback for numbers and words, so their known mistakes are left out
    (the command says how many). Canvas's fill-in-multiple-blanks cannot keep tolerances, so a problem
    with several blanks becomes one item per blank ("part k of K"). Import it in Canvas: Settings >
    Import Course Content > QTI .zip file.

    \b
    Example:
      problemgen export qti12 --bank params_memory -n 5 -o params.zip
      problemgen export qti12 --bank masking -n 3 -o masking.zip --with-solutions --preview masking.md
    """,
    options=lms_options(),
    build=lms_build(render_qti12, _notes, without_typed_mistakes),
)
