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
- each known mistake -> a condition before the key's that scores nothing and shows its hint;
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

from problemgen.exports import Export
from problemgen.exports.bundle import ZIP_DATE
from problemgen.exports.lms import Blank, LmsExport, Pool, Question, lms_build, lms_options, one_per_blank_note
from problemgen.exports.moodle import number

QTI_NS = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
CP_NS = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"
VARIANT_FIELD = "problemgen_variant"
"""The item metadata field carrying the variant id (``problemgen show`` rebuilds the question from it)."""
_QUESTION_TYPES = {"numerical": "numerical_question", "short": "short_answer_question"}


def _ident(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


def _sub(parent: ET.Element, tag: str, attrib: dict | None = None, text: str | None = None) -> ET.Element:
    element = ET.SubElement(parent, tag, attrib or {})
    if text is not None:
        element.text = text
    return element


def _material(parent: ET.Element, html: str) -> None:
    _sub(_sub(parent, "material"), "mattext", {"texttype": "text/html"}, html)


def _metadata(item: ET.Element, fields: dict[str, str]) -> None:
    box = _sub(_sub(item, "itemmetadata"), "qtimetadata")
    for label, entry in fields.items():
        field = _sub(box, "qtimetadatafield")
        _sub(field, "fieldlabel", text=label)
        _sub(field, "fieldentry", text=entry)


def _feedback(item: ET.Element, ident: str, html: str) -> None:
    box = _sub(item, "itemfeedback", {"ident": ident})
    _material(_sub(box, "flow_mat"), html)


def _condition(processing: ET.Element, *, score: str | None, feedback: str | None, last: bool) -> ET.Element:
    """A ``respcondition``; returns its ``conditionvar`` for the caller to fill."""
    condition = _sub(processing, "respcondition", {"continue": "No" if last else "Yes"})
    test = _sub(condition, "conditionvar")
    if feedback:
        _sub(condition, "displayfeedback", {"feedbacktype": "Response", "linkrefid": feedback})
    if score is not None:
        _sub(condition, "setvar", {"action": "Set", "varname": "SCORE"}, score)
    return test


def _near(test: ET.Element, value: float, tolerance: float) -> None:
    """The response equals ``value`` or lies within ``tolerance`` of it (Canvas's exact-with-margin form)."""
    either = _sub(test, "or")
    _sub(either, "varequal", {"respident": "response1"}, number(value))
    both = _sub(either, "and")
    _sub(both, "vargte", {"respident": "response1"}, number(value - tolerance))
    _sub(both, "varlte", {"respident": "response1"}, number(value + tolerance))


def _numerical(item: ET.Element, processing: ET.Element, blank: Blank) -> None:
    fib = _sub(_sub(item.find("presentation"), "response_str", {"ident": "response1", "rcardinality": "Single"}),
               "render_fib", {"fibtype": "Decimal"})
    _sub(fib, "response_label", {"ident": "answer1"})
    for k, mistake in enumerate(blank.mistakes, start=1):
        _near(_condition(processing, score=None, feedback=f"mistake{k}_fb", last=False), float(mistake.value),
              blank.tolerance)
        _feedback(item, f"mistake{k}_fb", mistake.feedback)
    _near(_condition(processing, score="100", feedback=None, last=True), float(blank.value), blank.tolerance)


def _choice(item: ET.Element, processing: ET.Element, blank: Blank) -> None:
    cardinality = "Multiple" if blank.multiple else "Single"
    render = _sub(_sub(item.find("presentation"), "response_lid", {"ident": "response1", "rcardinality": cardinality}),
                  "render_choice")
    hints = {m.value: m.feedback for m in blank.mistakes}
    for option in blank.options:
        _material(_sub(render, "response_label", {"ident": _ident(option.id)}), option.html)
        why = option.feedback or hints.get(option.id, "")
        if why:
            _sub(_condition(processing, score=None, feedback=f"{_ident(option.id)}_fb", last=False), "varequal",
                 {"respident": "response1"}, _ident(option.id))
            _feedback(item, f"{_ident(option.id)}_fb", why)
    test = _condition(processing, score="100", feedback=None, last=True)
    if not blank.multiple:
        (right,) = [o for o in blank.options if o.correct]
        _sub(test, "varequal", {"respident": "response1"}, _ident(right.id))
        return
    every = _sub(test, "and")
    for option in blank.options:
        holder = every if option.correct else _sub(every, "not")
        _sub(holder, "varequal", {"respident": "response1"}, _ident(option.id))


def _short(item: ET.Element, processing: ET.Element, blank: Blank) -> None:
    fib = _sub(_sub(item.find("presentation"), "response_str", {"ident": "response1", "rcardinality": "Single"}),
               "render_fib")
    _sub(fib, "response_label", {"ident": "answer1", "rshuffle": "No"})
    for k, mistake in enumerate(blank.mistakes, start=1):
        _sub(_condition(processing, score=None, feedback=f"mistake{k}_fb", last=False), "varequal",
             {"respident": "response1"}, str(mistake.value))
        _feedback(item, f"mistake{k}_fb", mistake.feedback)
    either = _sub(_condition(processing, score="100", feedback=None, last=True), "or")  # explicit: any spelling
    for spelling in blank.spellings:
        _sub(either, "varequal", {"respident": "response1"}, spelling)


def _essay(item: ET.Element, processing: ET.Element) -> None:
    fib = _sub(_sub(item.find("presentation"), "response_str", {"ident": "response1", "rcardinality": "Single"}),
               "render_fib")
    _sub(fib, "response_label", {"ident": "answer1", "rshuffle": "No"})
    _sub(_condition(processing, score=None, feedback=None, last=True), "other")


def _item(section: ET.Element, question: Question, blank: Blank | None, title: str, text: str, points: float) -> None:
    """One Canvas item: a single blank of ``question`` (or the whole question as an essay)."""
    item = _sub(section, "item", {"ident": _ident(f"{question.variant_id}_{blank.id if blank else 'essay'}"),
                                  "title": title})
    kind = "essay_question" if blank is None else (
        _QUESTION_TYPES.get(blank.kind) or ("multiple_answers_question" if blank.multiple else "multiple_choice_question"))
    _metadata(item, {"question_type": kind, "points_possible": number(points), VARIANT_FIELD: question.variant_id})
    _material(_sub(item, "presentation"), text)
    processing = _sub(item, "resprocessing")
    _sub(_sub(processing, "outcomes"), "decvar", {"maxvalue": "100", "minvalue": "0", "varname": "SCORE",
                                                 "vartype": "Decimal"})
    general = question.solution if blank else question.key_html + question.solution if question.solution else ""
    if general:
        _sub(_condition(processing, score=None, feedback="general_fb", last=False), "other")
        _feedback(item, "general_fb", general)
    if blank is None:
        _essay(item, processing)
    else:
        {"numerical": _numerical, "choice": _choice, "short": _short}[blank.kind](item, processing, blank)


def _items(section: ET.Element, question: Question, points: float) -> None:
    name = f"{question.title} [{question.variant_id}]"
    if question.manual or not question.blanks:
        _item(section, question, None, name, question.prompt, points)
        return
    total = len(question.blanks)
    for k, blank in enumerate(question.blanks, start=1):
        title = f"{name} part {k} of {total}: {re.sub(r'<[^>]+>', '', blank.label)}" if total > 1 else name
        heading = f"Part {k} of {total}: " if total > 1 else ""
        _item(section, question, blank, title, f"{question.prompt}<p>{heading}{blank.label}</p>", points)


def _group(root: ET.Element, pool: Pool) -> None:
    section = _sub(root, "section", {"ident": _ident(f"group_{pool.id}"), "title": pool.title})
    selection = _sub(_sub(section, "selection_ordering"), "selection")
    _sub(selection, "selection_number", text="1")
    _sub(_sub(selection, "selection_extension"), "points_per_item", text=number(pool.points))
    for question in pool.questions:
        _items(section, question, pool.points)


def assessment_xml(export: LmsExport) -> bytes:
    """The QTI 1.2 assessment: a root section holding one question group per pool."""
    root = ET.Element("questestinterop", {"xmlns": QTI_NS})
    assessment = _sub(root, "assessment", {"ident": _ident(export.bank_id), "title": export.title})
    top = _sub(assessment, "section", {"ident": "root_section"})
    for pool in export.pools:
        _group(top, pool)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8", xml_declaration=False)


def manifest_xml(export: LmsExport) -> bytes:
    ident = _ident(export.bank_id)
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<manifest identifier="{ident}_manifest" xmlns="{CP_NS}">'
            f'<metadata><schema>IMS Content</schema><schemaversion>1.1.3</schemaversion></metadata>'
            f'<organizations/><resources><resource identifier="{ident}" type="imsqti_xmlv1p2" '
            f'href="{ident}/{ident}.xml"><file href="{ident}/{ident}.xml"/></resource></resources>'
            f'</manifest>\n').encode("utf-8")


def render_qti12(export: LmsExport) -> bytes:
    """The zip: ``imsmanifest.xml`` and ``BANK/BANK.xml``, fixed timestamps (same bank, same bytes)."""
    ident = _ident(export.bank_id)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in (("imsmanifest.xml", manifest_xml(export)), (f"{ident}/{ident}.xml", assessment_xml(export))):
            archive.writestr(zipfile.ZipInfo(path, ZIP_DATE), data, zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


EXPORT = Export(
    name="qti12",
    summary="Canvas QTI 1.2 zip of question groups (one per bank item).",
    help="""Write a Canvas QTI 1.2 zip: one question group per bank item, drawing 1 of N distinct variants.

    Numbers become numerical questions with the part's tolerance (known mistakes show their hint);
    choices multiple choice with per-option feedback; words and shapes short answer. Canvas's
    fill-in-multiple-blanks cannot keep tolerances, so a problem with several blanks becomes one item
    per blank ("part k of K"). Import it in Canvas: Settings > Import Course Content > QTI .zip file.

    \b
    Example:
      problemgen export qti12 --bank question_banks/params_memory.toml -n 5 -o params.zip
      problemgen export qti12 --bank masking -n 3 -o masking.zip --with-solutions --preview masking.md
    """,
    options=lms_options(),
    build=lms_build(render_qti12, one_per_blank_note("Canvas items")),
)
