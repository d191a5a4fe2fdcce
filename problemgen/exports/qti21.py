"""IMS QTI 2.1 export: a content package with one assessment item per variant and a test that draws one
variant per bank item.

QTI 2.1 is what most other platforms import (Blackboard, Inspera, TAO, ONYX, Sakai…). The zip holds
``imsmanifest.xml``, ``items/<id>.xml`` (one ``assessmentItem`` per variant and bank place, named by
``lms.slots``) and ``test.xml``, whose ``assessmentSection`` per pool selects 1 of its items. Unlike
Canvas and GIFT, an item can hold several interactions, so a multi-part problem stays one item. It
renders the model of ``exports.lms``:

- numerical blank -> ``textEntryInteraction`` (``float``), scored with ``equal`` and an absolute
  ``tolerance``; integers exactly (``integer`` and ``match``), unless the key or a known mistake lies
  outside QTI's 32-bit integers (or is not whole): then ``float`` and ``equal`` with a zero tolerance,
  exact for every integer a double holds (players such as TAO's qtism and QTIWorks refuse a larger
  ``integer``);
- choice -> ``choiceInteraction`` scored against its ``correctResponse``; a mask cell is a choice of two;
- short answer -> ``textEntryInteraction`` (``string``) with a ``mapping`` of every spelling (ignoring case);
- each known mistake and each option's explanation -> a ``modalFeedback`` its condition shows;
- a question no LMS can check -> ``extendedTextInteraction`` without automatic scoring;
- the worked solution (``--with-solutions``) -> a ``modalFeedback`` always shown after answering.

Each blank adds its share of the item's points to ``SCORE`` (``MAXSCORE`` is the pool's points), so partial
credit is per blank. The prompt's HTML is placed in the item body as XHTML in the QTI namespace.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
import zipfile

from problemgen.exports import Export
from problemgen.exports.bundle import ZIP_DATE
from problemgen.exports.lms import Blank, LmsExport, Question, lms_build, lms_options, slots, xml_document
from problemgen.exports.moodle import number
from problemgen.exports.qti12 import sub_element as _sub
from problemgen.exports.qti12 import xml_id as _ident  # a QTI identifier: letters, digits, _ . -, not a digit first

QTI_NS = "http://www.imsglobal.org/xsd/imsqti_v2p1"
CP_NS = "http://www.imsglobal.org/xsd/imscp_v1p1"
QTI_INT_MAX = 2**31 - 1
"""QTI's ``integer`` is 32-bit (the XSD's ``xs:int``)."""


def _xhtml(parent: ET.Element, html: str) -> None:
    """HTML fragments (well-formed: the fragments write closed tags) appended as elements of ``parent``."""
    holder = ET.fromstring(f"<div>{xml_document(html, 'QTI 2.1 item text')}</div>")  # a forbidden character: one line
    if holder.text:
        if len(parent):
            parent[-1].tail = (parent[-1].tail or "") + holder.text
        else:
            parent.text = (parent.text or "") + holder.text
    parent.extend(list(holder))


def _value(parent: ET.Element, base_type: str, value: str) -> ET.Element:
    return _sub(parent, "baseValue", {"baseType": base_type}, value)


def _add(parent: ET.Element, outcome: str, base_type: str, value: str, container: str = "sum") -> None:
    """``outcome := outcome (+ or ∪) value``."""
    setter = _sub(_sub(parent, "setOutcomeValue", {"identifier": outcome}), container)
    _sub(setter, "variable", {"identifier": outcome})
    _value(setter, base_type, value)


def qti_integer(blank: Blank) -> bool:
    """Whether an integer blank can be a QTI ``integer``: its key and every mistake whole and 32-bit."""
    values = (blank.value, *(m.value for m in blank.mistakes))
    return blank.integer and all(float(v).is_integer() and abs(v) <= QTI_INT_MAX for v in values)


def _declare(item: ET.Element, blank: Blank, response: str) -> None:
    if blank.kind == "numerical":
        _sub(item, "responseDeclaration", {"identifier": response, "cardinality": "single",
                                           "baseType": "integer" if qti_integer(blank) else "float"})
        return
    if blank.kind == "choice":
        declaration = _sub(item, "responseDeclaration", {"identifier": response, "baseType": "identifier",
                                                         "cardinality": "multiple" if blank.multiple else "single"})
        correct = _sub(declaration, "correctResponse")
        for option in blank.options:
            if option.correct:
                _sub(correct, "value", text=_ident(option.id))
        return
    declaration = _sub(item, "responseDeclaration", {"identifier": response, "cardinality": "single",
                                                     "baseType": "string"})
    _sub(_sub(declaration, "correctResponse"), "value", text=blank.spellings[0])
    mapping = _sub(declaration, "mapping", {"defaultValue": "0"})
    for spelling in dict.fromkeys(s.lower() for s in blank.spellings):
        _sub(mapping, "mapEntry", {"mapKey": spelling, "mappedValue": "1", "caseSensitive": "false"})


def _interaction(body: ET.Element, blank: Blank, response: str) -> None:
    if blank.kind == "choice":
        interaction = _sub(body, "choiceInteraction", {"responseIdentifier": response, "shuffle": "false",
                                                       "maxChoices": "0" if blank.multiple else "1"})
        _xhtml(_sub(interaction, "prompt"), blank.label)
        for option in blank.options:
            _xhtml(_sub(interaction, "simpleChoice", {"identifier": _ident(option.id)}), option.html)
        return
    line = _sub(body, "p")
    _xhtml(line, blank.label + " ")
    _sub(line, "textEntryInteraction", {"responseIdentifier": response, "expectedLength": "16"})


def _matches(parent: ET.Element, blank: Blank, response: str, value, tolerance: float | None = None) -> None:
    """The condition "the response is ``value``" for this blank's kind (a number: within ``tolerance``, by
    default the blank's)."""
    if blank.kind == "numerical" and not qti_integer(blank):  # an integer's tolerance is 0: exact
        window = number(blank.tolerance if tolerance is None else tolerance)
        test = _sub(parent, "equal", {"toleranceMode": "absolute", "tolerance": f"{window} {window}"})
        _sub(test, "variable", {"identifier": response})
        _value(test, "float", number(value))
    elif blank.kind == "numerical":
        test = _sub(parent, "match")
        _sub(test, "variable", {"identifier": response})
        _value(test, "integer", str(int(value)))
    elif blank.kind == "choice":
        test = _sub(parent, "member" if blank.multiple else "match")
        if blank.multiple:
            _value(test, "identifier", _ident(str(value)))
            _sub(test, "variable", {"identifier": response})
        else:
            _sub(test, "variable", {"identifier": response})
            _value(test, "identifier", _ident(str(value)))
    else:
        test = _sub(parent, "stringMatch", {"caseSensitive": "false"})
        _sub(test, "variable", {"identifier": response})
        _value(test, "string", str(value))


def _score_rule(processing: ET.Element, blank: Blank, response: str, share: float) -> None:
    """Full marks for the key add ``share`` to SCORE; else each known mistake shows its feedback."""
    condition = _sub(processing, "responseCondition")
    branch = _sub(condition, "responseIf")
    if blank.kind == "numerical":
        _matches(branch, blank, response, blank.value)
    elif blank.kind == "choice":
        test = _sub(branch, "match")
        _sub(test, "variable", {"identifier": response})
        _sub(test, "correct", {"identifier": response})
    else:
        test = _sub(branch, "gt")
        _sub(test, "mapResponse", {"identifier": response})
        _value(test, "float", "0")
    _add(branch, "SCORE", "float", number(share))
    for k, mistake in enumerate(blank.mistakes, start=1):
        if blank.kind == "choice":
            continue  # a wrong option's hint is its option feedback, below
        other = _sub(condition, "responseElseIf")
        _matches(other, blank, response, mistake.value, mistake.tolerance)
        _add(other, "FEEDBACK", "identifier", f"{response}_M{k}", "multiple")


def _option_rules(processing: ET.Element, blank: Blank, response: str) -> None:
    hints = {m.value: m.feedback for m in blank.mistakes}
    for option in blank.options:
        if option.feedback or hints.get(option.id):
            branch = _sub(_sub(processing, "responseCondition"), "responseIf")
            _matches(branch, blank, response, option.id)
            _add(branch, "FEEDBACK", "identifier", f"{response}_{_ident(option.id)}", "multiple")


def _feedbacks(item: ET.Element, blank: Blank, response: str) -> None:
    if blank.kind == "choice":
        hints = {m.value: m.feedback for m in blank.mistakes}
        found = [(f"{response}_{_ident(o.id)}", o.feedback or hints.get(o.id, "")) for o in blank.options]
    else:
        found = [(f"{response}_M{k}", m.feedback) for k, m in enumerate(blank.mistakes, start=1)]
    for identifier, html in found:
        if html:
            _xhtml(_sub(item, "modalFeedback", {"outcomeIdentifier": "FEEDBACK", "identifier": identifier,
                                                "showHide": "show"}), html)


def _outcomes(item: ET.Element, points: float) -> None:
    for name, value in (("SCORE", "0"), ("MAXSCORE", number(points))):
        declaration = _sub(item, "outcomeDeclaration", {"identifier": name, "cardinality": "single",
                                                        "baseType": "float"})
        _sub(_sub(declaration, "defaultValue"), "value", text=value)
    _sub(item, "outcomeDeclaration", {"identifier": "FEEDBACK", "cardinality": "multiple", "baseType": "identifier"})


def item_xml(question: Question, points: float, slot: str | None = None) -> bytes:
    """One ``assessmentItem``: the prompt, one interaction per blank (or an essay), scoring and feedback;
    its identifier is the ``slot`` name (see ``lms.slots``), or the variant id."""
    item = ET.Element("assessmentItem", {"xmlns": QTI_NS, "identifier": _ident(slot or question.variant_id),
                                         "title": f"{question.title} [{question.variant_id}]",
                                         "adaptive": "false", "timeDependent": "false"})
    blanks = () if question.manual else question.blanks
    responses = [f"RESPONSE_{k}" for k in range(1, len(blanks) + 1)]
    for blank, response in zip(blanks, responses):
        _declare(item, blank, response)
    if not blanks:
        _sub(item, "responseDeclaration", {"identifier": "RESPONSE", "cardinality": "single", "baseType": "string"})
    _outcomes(item, points)
    body = _sub(item, "itemBody")
    _xhtml(_sub(body, "div"), question.prompt)
    for blank, response in zip(blanks, responses):
        _interaction(body, blank, response)
    if not blanks:
        _sub(body, "extendedTextInteraction", {"responseIdentifier": "RESPONSE"})
    processing = _sub(item, "responseProcessing")
    for blank, response in zip(blanks, responses):
        _score_rule(processing, blank, response, blank.points * points)
        if blank.kind == "choice":
            _option_rules(processing, blank, response)
    solution = question.solution if blanks else (question.key_html + question.solution if question.solution else "")
    if solution:
        _add(processing, "FEEDBACK", "identifier", "SOLUTION", "multiple")
    for blank, response in zip(blanks, responses):
        _feedbacks(item, blank, response)
    if solution:
        _xhtml(_sub(item, "modalFeedback", {"outcomeIdentifier": "FEEDBACK", "identifier": "SOLUTION",
                                            "showHide": "show"}), solution)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(item, encoding="utf-8")


def test_xml(export: LmsExport, hrefs: dict[str, str]) -> bytes:
    """The ``assessmentTest``: one section per pool selecting 1 of its items."""
    test = ET.Element("assessmentTest", {"xmlns": QTI_NS, "identifier": _ident(export.bank_id), "title": export.title})
    part = _sub(test, "testPart", {"identifier": "part1", "navigationMode": "nonlinear",
                                   "submissionMode": "individual"})
    sections = {}
    for pool, _, slot in slots(export):
        if pool.id not in sections:
            sections[pool.id] = _sub(part, "assessmentSection", {"identifier": _ident(pool.id), "title": pool.title,
                                                                 "visible": "true"})
            _sub(sections[pool.id], "selection", {"select": "1"})
        _sub(sections[pool.id], "assessmentItemRef", {"identifier": _ident(slot), "href": hrefs[slot]})
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(test, encoding="utf-8")


def manifest_xml(export: LmsExport, hrefs: dict[str, str]) -> bytes:
    manifest = ET.Element("manifest", {"xmlns": CP_NS, "identifier": _ident(export.bank_id) + "_manifest"})
    _sub(manifest, "organizations")
    resources = _sub(manifest, "resources")
    test = _sub(resources, "resource", {"identifier": "TEST", "type": "imsqti_test_xmlv2p1", "href": "test.xml"})
    _sub(test, "file", {"href": "test.xml"})
    for slot, href in hrefs.items():
        _sub(test, "dependency", {"identifierref": _ident(slot)})
        resource = _sub(resources, "resource", {"identifier": _ident(slot), "type": "imsqti_item_xmlv2p1",
                                                "href": href})
        _sub(resource, "file", {"href": href})
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(manifest, encoding="utf-8")


def render_qti21(export: LmsExport) -> bytes:
    """The content package zip: manifest, test and items, fixed timestamps (same bank, same bytes)."""
    files, hrefs = {}, {}
    for pool, question, slot in slots(export):
        hrefs[slot] = f"items/{_ident(slot)}.xml"
        files[hrefs[slot]] = item_xml(question, pool.points, slot)
    files["test.xml"] = test_xml(export, hrefs)
    files["imsmanifest.xml"] = manifest_xml(export, hrefs)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(files):
            archive.writestr(zipfile.ZipInfo(path, ZIP_DATE), xml_document(files[path], path), zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


EXPORT = Export(
    name="qti21",
    summary="IMS QTI 2.1 content package (one section per bank item).",
    help="""Write an IMS QTI 2.1 content package: one item per variant, a test drawing 1 of N per bank item.

    Numbers are scored with an absolute tolerance (integers exactly), choices against their correct
    response, words and shapes against every accepted spelling; a multi-part problem stays one item
    with one interaction per blank and partial credit per blank. Known mistakes and option
    explanations are feedback. Import it in any platform that reads QTI 2.1 packages (e.g. Blackboard,
    TAO).

    \b
    Example:
      problemgen export qti21 --bank params_memory -n 5 -o params-qti21.zip
      problemgen export qti21 --bank masking -n 3 -o masking-qti21.zip --with-solutions
    """,
    options=lms_options(),
    build=lms_build(render_qti21),
)
