"""Small interpreters of the LMS files we emit, written from the formats' documented rules.

They read the exported *file* back (never the model that wrote it) and score a response the way the
LMS would: Moodle numerical answers (first answer whose value ± tolerance holds the response), multiple
choice fractions, short-answer spellings (``*`` a wildcard unless escaped) and cloze blanks (an answer
ends at an unescaped ``~ # }``, feedback at ``~ }``; HTML entities decoded afterwards). The GIFT reader
is also the grammar check of the subset we write: anything else fails an assert.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape as xml_escape
from dataclasses import dataclass, field


@dataclass
class Answer:
    fraction: float  # percent
    text: str  # a number, a spelling or an option's HTML
    tolerance: float = 0.0
    feedback: str = ""


@dataclass
class Response:
    """One gradable response: a one-blank question, or one blank of a cloze."""

    kind: str  # numerical | choice | short
    answers: list[Answer]
    weight: int = 1
    multiple: bool = False
    case_sensitive: bool = False

    def score(self, given) -> float:
        """Percent of this response's marks for ``given`` (a number, a spelling, or a list of option texts)."""
        if self.kind == "numerical":
            return next((a.fraction for a in self.answers if abs(float(given) - float(a.text)) <= a.tolerance + 1e-12), 0.0)
        if self.kind == "short":
            return next((a.fraction for a in self.answers if _spelling_matches(a.text, given, self.case_sensitive)), 0.0)
        chosen = [a for a in self.answers if a.text in given]
        return max(0.0, sum(a.fraction for a in chosen))

    def correct_options(self) -> list[str]:
        return [a.text for a in self.answers if a.fraction > 0]


def _spelling_matches(pattern: str, given: str, case_sensitive: bool) -> bool:
    """Moodle's short-answer rule: ``*`` matches anything, ``\\*`` a literal star; case as configured."""
    pieces = re.split(r"(?<!\\)\*", pattern)
    regex = ".*".join(re.escape(p.replace("\\*", "*")) for p in pieces)
    flags = 0 if case_sensitive else re.IGNORECASE
    return re.fullmatch(regex, given.strip(), flags) is not None


@dataclass
class MoodleQuestion:
    type: str
    name: str
    idnumber: str
    text: str
    general_feedback: str
    default_grade: float
    responses: list[Response] = field(default_factory=list)
    grader_info: str = ""
    category: str = ""


def _text(element, tag: str) -> str:
    found = element.find(tag)
    return "" if found is None else (found.findtext("text") or "")


def read_moodle(path) -> list[MoodleQuestion]:
    """Every question of a Moodle XML file (categories set on the questions that follow them)."""
    root = ET.parse(path).getroot()
    assert root.tag == "quiz"
    questions, category = [], ""
    for q in root.findall("question"):
        kind = q.get("type")
        if kind == "category":
            category = q.find("category").findtext("text")
            continue
        question = MoodleQuestion(kind, q.find("name").findtext("text"), q.findtext("idnumber"), _text(q, "questiontext"),
                                  _text(q, "generalfeedback"), float(q.findtext("defaultgrade")), category=category)
        if kind == "cloze":
            question.responses = cloze_responses(question.text)
        elif kind == "essay":
            question.grader_info = _text(q, "graderinfo")
        else:
            question.responses = [_single(q, kind)]
        questions.append(question)
    return questions


def _single(q, kind: str) -> Response:
    answers = [Answer(float(a.get("fraction")), a.findtext("text"), float(a.findtext("tolerance") or 0), _text(a, "feedback"))
               for a in q.findall("answer")]
    if kind == "numerical":
        return Response("numerical", answers)
    if kind == "multichoice":
        return Response("choice", answers, multiple=q.findtext("single") == "false")
    assert kind == "shortanswer", kind
    return Response("short", answers, case_sensitive=q.findtext("usecase") == "1")


# --------------------------------------------------------------------------------------------------
# Cloze blanks
# --------------------------------------------------------------------------------------------------

_BLANK_START = re.compile(r"\{(\d*):(NUMERICAL|MULTICHOICE|MCV|MR|SHORTANSWER|SAC):")
_KINDS = {"NUMERICAL": "numerical", "MULTICHOICE": "choice", "MCV": "choice", "MR": "choice",
          "SHORTANSWER": "short", "SAC": "short"}


def _until(text: str, i: int, stops: str, answer: bool = False) -> int:
    """Index of the first character of ``stops`` at or after ``i`` not preceded by a backslash (in an
    answer, nor by ``&`` or ``&amp;``: Moodle lets an entity such as ``&#126;`` through there)."""
    def ends(j: int) -> bool:
        before = text[:j]
        return not (before.endswith("\\") or (answer and before.endswith(("&", "&amp;"))))

    while i < len(text) and not (text[i] in stops and ends(i)):
        i += 1
    return i


def _decode(text: str) -> str:
    return html.unescape(text.replace("\\}", "}").replace("\\#", "#"))


def cloze_responses(text: str) -> list[Response]:
    """Every embedded answer ``{w:TYPE:alt~alt…}`` of a cloze text, read by Moodle's separator rules."""
    responses = []
    for start in _BLANK_START.finditer(text):
        i, answers = start.end(), []
        while True:
            fraction = 0.0
            if text.startswith("=", i):
                fraction, i = 100.0, i + 1
            elif (m := re.match(r"%(-?\d+(?:\.\d*)?)%", text[i:])):
                fraction, i = float(m.group(1)), i + m.end()
            end = _until(text, i, "~#}", answer=True)
            body, feedback, i = text[i:end], "", end
            if text.startswith("#", i):
                end = _until(text, i + 1, "~}")
                feedback, i = text[i + 1:end], end
            answers.append(_cloze_answer(start.group(2), fraction, body, _decode(feedback)))
            assert i < len(text), "unterminated cloze blank"
            if text[i] == "}":
                break
            i += 1  # "~"
        kind = start.group(2)
        responses.append(Response(_KINDS[kind], answers, int(start.group(1) or 1), multiple=kind == "MR",
                                  case_sensitive=kind == "SAC"))
    return responses


def _cloze_answer(kind: str, fraction: float, body: str, feedback: str) -> Answer:
    if kind == "NUMERICAL":
        value, _, tol = body.partition(":")
        return Answer(fraction, value, float(tol or 0), feedback)
    return Answer(fraction, _decode(body), 0.0, feedback)


# --------------------------------------------------------------------------------------------------
# GIFT
# --------------------------------------------------------------------------------------------------

GIFT_ESCAPES = {"\\\\": "\\", "\\~": "~", "\\=": "=", "\\#": "#", "\\{": "{", "\\}": "}", "\\:": ":", "\\n": "\n"}


def gift_unescape(text: str) -> str:
    """Moodle's GIFT rule: ``\\\\`` a backslash, ``\\~ \\= \\# \\{ \\} \\:`` the character, ``\\n`` a newline."""
    return re.sub(r"\\[\\~=#{}:n]", lambda m: GIFT_ESCAPES[m.group(0)], text)


def _unescaped(text: str, chars: str, start: int = 0) -> int:
    """Index of the first of ``chars`` not escaped by a backslash (a ``\\\\`` pair escapes nothing), or -1."""
    i = start
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] in chars:
            return i
        i += 1
    return -1


def _split_unescaped(text: str, chars: str) -> list[str]:
    """Split before every unescaped character of ``chars`` (the character stays with its piece)."""
    starts, i = [], _unescaped(text, chars)
    while i != -1:
        starts.append(i)
        i = _unescaped(text, chars, i + 1)
    assert starts and not text[:starts[0]].strip(), f"an answer must start with = or ~: {text[:60]}"
    return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)])]


@dataclass
class GiftQuestion:
    name: str
    text: str
    kind: str  # numerical | choice | short | essay
    general_feedback: str
    category: str
    responses: list[Response] = field(default_factory=list)


def read_gift(text: str) -> list[GiftQuestion]:
    """Every question of a GIFT file written as we write it; anything outside the subset fails an assert.

    The subset: ``//`` comments, ``$CATEGORY:`` lines, then questions ``::name::[html]text{answers}``
    one per block (blocks separated by blank lines), the answers last."""
    questions, category = [], ""
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = [line for line in block.splitlines() if not line.lstrip().startswith("//")]
        if not lines:
            continue
        body = " ".join(lines)
        if body.startswith("$CATEGORY:"):
            category = body[len("$CATEGORY:"):].strip()
            continue
        questions.append(_gift_question(body, category))
    return questions


def _gift_question(body: str, category: str) -> GiftQuestion:
    assert body.startswith("::"), body[:80]
    name_end = _unescaped(body, ":", 2)
    assert body[name_end:name_end + 2] == "::", body[:80]
    name, rest = gift_unescape(body[2:name_end]), body[name_end + 2:]
    assert rest.startswith("[html]"), rest[:40]
    open_ = _unescaped(rest, "{")
    close = _unescaped(rest, "}", open_ + 1)
    assert open_ != -1 and close != -1 and not rest[close + 1:].strip(), "answers must close the question"
    assert _unescaped(rest, "{}", open_ + 1) == close, "nested braces in the answers"
    assert _unescaped(rest[:open_], "~=#{}:") == -1, "unescaped special in the question text"
    inside = rest[open_ + 1:close]
    general = ""
    if (g := inside.find("####")) != -1:
        inside, general = inside[:g], gift_unescape(inside[g + 4:].strip())
    question = GiftQuestion(name, gift_unescape(rest[6:open_]), "essay", general, category)
    if inside.strip():
        question.kind, response = _gift_answers(inside.strip())
        question.responses = [response]
    return question


def _gift_alternative(piece: str) -> tuple[str, float | None, str, str]:
    """(mark, percent or None, answer, feedback) of one ``=…`` / ``~…`` alternative."""
    mark, piece = piece[0], piece[1:]
    percent = None
    if (m := re.match(r"%(-?\d+(?:\.\d+)?)%", piece)):
        percent, piece = float(m.group(1)), piece[m.end():]
    hash_ = _unescaped(piece, "#")
    answer, feedback = (piece, "") if hash_ == -1 else (piece[:hash_], piece[hash_ + 1:])
    return mark, percent, answer.strip(), gift_unescape(feedback.strip())


def _gift_answers(inside: str) -> tuple[str, Response]:
    if inside.startswith("#"):
        inside = inside[1:].strip()
        pieces = _split_unescaped(inside, "=") if inside.startswith("=") else ["=" + inside]
        answers = []
        for piece in pieces:
            _, percent, value, feedback = _gift_alternative(piece.strip())
            key, _, tol = value.partition(":")
            answers.append(Answer(100.0 if percent is None else percent, key, float(tol or 0), feedback))
        return "numerical", Response("numerical", answers)
    alternatives = [_gift_alternative(p.strip()) for p in _split_unescaped(inside, "=~")]
    answers = [Answer(100.0 if percent is None and mark == "=" else (percent or 0.0), gift_unescape(answer), 0.0, fb)
               for mark, percent, answer, fb in alternatives]
    if all(mark == "=" for mark, *_ in alternatives):
        return "short", Response("short", answers)
    multiple = any(percent is not None for _, percent, *_ in alternatives)
    return "choice", Response("choice", answers, multiple=multiple)


# --------------------------------------------------------------------------------------------------
# Canvas QTI 1.2: an interpreter of the response processing we emit
# --------------------------------------------------------------------------------------------------

QTI12 = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"


def _local(element) -> str:
    return element.tag.split("}")[-1]


@dataclass
class QtiItem:
    """One item of a QTI 1.2 assessment; ``score`` runs its ``respcondition`` list as QTI does."""

    title: str
    group: str
    metadata: dict
    text: str
    options: dict  # option ident -> HTML
    conditions: list  # the respcondition elements, in order
    feedback: dict  # itemfeedback ident -> HTML

    @property
    def kind(self) -> str:
        return {"numerical_question": "numerical", "short_answer_question": "short",
                "essay_question": "essay"}.get(self.metadata["question_type"], "choice")

    def _holds(self, test, given) -> bool:
        tag = _local(test)
        if tag in ("conditionvar", "and"):
            return all(self._holds(t, given) for t in test)
        if tag == "or":
            return any(self._holds(t, given) for t in test)
        if tag == "not":
            return not any(self._holds(t, given) for t in test)
        if tag == "other":
            return True
        value = test.text or ""
        if self.kind == "numerical":
            number = float(given)
            return {"varequal": number == float(value), "vargte": number >= float(value),
                    "varlte": number <= float(value)}[tag]
        assert tag == "varequal", tag
        if self.kind == "choice":
            return value in given  # the chosen option idents
        return value.strip().lower() == str(given).strip().lower()  # Canvas: short answers ignore case

    def run(self, given) -> tuple[float, list[str]]:
        """(SCORE, feedback idents shown) for a response: conditions in order until one with continue=No holds."""
        score, shown = 0.0, []
        for condition in self.conditions:
            if not self._holds(condition.find(f"{QTI12}conditionvar"), given):
                continue
            for action in condition:
                if _local(action) == "setvar":
                    assert action.get("action") == "Set" and action.get("varname") == "SCORE"
                    score = float(action.text)
                elif _local(action) == "displayfeedback":
                    shown.append(action.get("linkrefid"))
            if condition.get("continue") == "No":
                break
        return score, shown

    def score(self, given) -> float:
        if self.kind == "choice" and not isinstance(given, str):
            by_text = {text: ident for ident, text in self.options.items()}
            given = {by_text.get(g, g) for g in given}
        return self.run(given)[0]

    @property
    def answers(self) -> list[Answer]:
        """The answers a reader of this item sees: each feedback condition (0 credit, with its hint) and
        each option, for the shared round-trip checks."""
        if self.kind == "choice":
            right = self._required_options()
            return [Answer(100.0 if ident in right else 0.0, text, 0.0, self._option_feedback(ident))
                    for ident, text in self.options.items()]
        found = []
        for condition in self.conditions[:-1]:
            shown = [f.get("linkrefid") for f in condition if _local(f) == "displayfeedback"]
            equal = condition.find(f".//{QTI12}varequal")
            if shown and shown[0] != "general_fb" and equal is not None:
                low, high = condition.find(f".//{QTI12}vargte"), condition.find(f".//{QTI12}varlte")
                margin = (float(high.text) - float(low.text)) / 2 if low is not None else 0.0
                found.append(Answer(0.0, equal.text, margin, self.feedback[shown[0]]))
        return found

    def canvas_correct(self) -> set[str]:
        """The values Canvas's importer takes as correct answers, by the rule of its public source: in a
        numerical or short-answer question every condition that compares the response with a value is
        a full-credit answer (those questions have no 0-credit answers); in a choice question an option
        is correct when a condition choosing it sets a score above 0."""
        if self.kind == "choice":
            return self._required_options()
        found = set()
        for condition in self.conditions:
            tests = {}
            for test in condition.find(f"{QTI12}conditionvar").iter():
                tests.setdefault(_local(test), []).append(test.text)
            if "varequal" in tests:
                found |= set(tests["varequal"])
            elif "vargte" in tests or "varlte" in tests:  # a range answer
                found.add(f"[{tests.get('vargte', ['-inf'])[0]}, {tests.get('varlte', ['inf'])[0]}]")
        return found

    def _required_options(self) -> set[str]:
        """The options the full-marks condition requires chosen (its ``varequal`` outside any ``not``)."""
        (scoring,) = [c for c in self.conditions if any(_local(a) == "setvar" and a.text == "100" for a in c)]
        negated = {id(e) for n in scoring.iter(f"{QTI12}not") for e in n.iter()}
        return {e.text for e in scoring.iter(f"{QTI12}varequal") if id(e) not in negated}

    def _option_feedback(self, ident: str) -> str:
        shown = [f for f in self.run({ident})[1] if f != "general_fb"]
        return self.feedback[shown[0]] if shown else ""

    def correct_options(self) -> list[str]:
        return [a.text for a in self.answers if a.fraction > 0]


def read_qti12(data: bytes) -> list[QtiItem]:
    """Every item of the zip's assessment (found through ``imsmanifest.xml``), in document order."""
    import io
    import zipfile

    archive = zipfile.ZipFile(io.BytesIO(data))
    manifest = ET.fromstring(archive.read("imsmanifest.xml"))
    (href,) = [r.get("href") for r in manifest.iter() if _local(r) == "resource"]
    root = ET.fromstring(archive.read(href))
    items = []
    for group in root.iter(f"{QTI12}section"):
        for item in group.findall(f"{QTI12}item"):
            fields = {f.findtext(f"{QTI12}fieldlabel"): f.findtext(f"{QTI12}fieldentry")
                      for f in item.iter(f"{QTI12}qtimetadatafield")}
            presentation = item.find(f"{QTI12}presentation")
            options = {label.get("ident"): label.findtext(f".//{QTI12}mattext")
                       for label in presentation.iter(f"{QTI12}response_label") if label.find(f".//{QTI12}mattext") is not None}
            feedback = {f.get("ident"): f.findtext(f".//{QTI12}mattext") for f in item.findall(f"{QTI12}itemfeedback")}
            items.append(QtiItem(item.get("title"), group.get("title"), fields,
                                 presentation.find(f"{QTI12}material").findtext(f"{QTI12}mattext"), options,
                                 item.find(f"{QTI12}resprocessing").findall(f"{QTI12}respcondition"), feedback))
    return items


# --------------------------------------------------------------------------------------------------
# QTI 2.1: an interpreter of the response processing we emit
# --------------------------------------------------------------------------------------------------

QTI21 = "{http://www.imsglobal.org/xsd/imsqti_v2p1}"


def inner_xml(element) -> str:
    """An element's content as markup (text and children), written without the QTI namespace."""
    ET.register_namespace("", QTI21[1:-1])
    markup = xml_escape(element.text or "") + "".join(ET.tostring(child, encoding="unicode") for child in element)
    return markup.replace(f' xmlns="{QTI21[1:-1]}"', "")


class Qti21Item:
    """One ``assessmentItem``: its declarations, processing rules and feedback, run as QTI 2.1 does."""

    def __init__(self, root) -> None:
        self.title = root.get("title")
        self.declarations = {d.get("identifier"): d for d in root.findall(f"{QTI21}responseDeclaration")}
        self.processing = root.find(f"{QTI21}responseProcessing")
        self.feedback = {f.get("identifier"): inner_xml(f) for f in root.findall(f"{QTI21}modalFeedback")}
        self.maxscore = float(next(o for o in root.findall(f"{QTI21}outcomeDeclaration")
                                   if o.get("identifier") == "MAXSCORE").findtext(f".//{QTI21}value"))
        self.choices_of = {i.get("responseIdentifier"): {c.get("identifier"): inner_xml(c)
                                                         for c in i.iter(f"{QTI21}simpleChoice")}
                           for i in root.iter(f"{QTI21}choiceInteraction")}  # response -> option ident -> HTML
        self.essay = root.find(f".//{QTI21}extendedTextInteraction") is not None

    def responses(self) -> list["Qti21Response"]:
        return [Qti21Response(self, name) for name in self.declarations if name.startswith("RESPONSE_")]

    def run(self, given: dict) -> tuple[float, list[str]]:
        """(SCORE, FEEDBACK identifiers) after the processing rules, for responses ``given`` (others null)."""
        outcomes = {"SCORE": 0.0, "FEEDBACK": []}
        self._rules(self.processing, given, outcomes)
        return outcomes["SCORE"], outcomes["FEEDBACK"]

    def _rules(self, parent, given, outcomes) -> None:
        for rule in parent:
            tag = _local(rule)
            if tag == "setOutcomeValue":
                outcomes[rule.get("identifier")] = self._value(rule[0], given, outcomes)
            elif tag == "responseCondition":
                for branch in rule:
                    if _local(branch) == "responseElse" or self._value(branch[0], given, outcomes):
                        self._rules(list(branch)[0 if _local(branch) == "responseElse" else 1:], given, outcomes)
                        break
            else:
                raise AssertionError(f"unexpected rule {tag}")

    def _value(self, expression, given, outcomes):
        tag, args = _local(expression), list(expression)
        if tag == "variable":
            name = expression.get("identifier")
            return outcomes[name] if name in outcomes else given.get(name)
        if tag == "baseValue":
            return {"float": float, "integer": int}.get(expression.get("baseType"), str)(expression.text or "")
        if tag == "correct":
            values = [v.text for v in self.declarations[expression.get("identifier")].iter(f"{QTI21}value")]
            return values[0] if self.declarations[expression.get("identifier")].get("cardinality") == "single" else set(values)
        if tag == "mapResponse":
            return self._mapped(expression.get("identifier"), given)
        values = [self._value(a, given, outcomes) for a in args]
        if tag in ("sum", "multiple"):
            return values[0] + values[1] if tag == "sum" else [*values[0], values[1]]
        if any(v is None for v in values):
            return False  # a null operand: the condition does not hold
        if tag == "equal":
            assert expression.get("toleranceMode") == "absolute"
            low, high = (float(t) for t in expression.get("tolerance").split())
            return values[1] - low <= float(values[0]) <= values[1] + high
        if tag == "match":
            first = set(values[0]) if isinstance(values[0], (set, list)) else values[0]
            return first == values[1]
        if tag == "member":
            return values[0] in values[1]
        if tag == "stringMatch":
            return values[0].strip().lower() == values[1].strip().lower()
        if tag == "gt":
            return values[0] > values[1]
        raise AssertionError(f"unexpected expression {tag}")

    def _mapped(self, name: str, given) -> float | None:
        if given.get(name) is None:
            return None
        mapping = self.declarations[name].find(f"{QTI21}mapping")
        for entry in mapping.findall(f"{QTI21}mapEntry"):
            same = entry.get("caseSensitive") == "true" and entry.get("mapKey") == given[name]
            if same or entry.get("caseSensitive") == "false" and entry.get("mapKey").lower() == given[name].strip().lower():
                return float(entry.get("mappedValue"))
        return float(mapping.get("defaultValue"))


def _tests(expression, name: str) -> bool:
    """Whether a condition reads the response ``name``."""
    return any(e.get("identifier") == name for e in expression.iter()
               if _local(e) in ("variable", "mapResponse", "correct"))


class Qti21Response:
    """One blank of an item, scored alone in percent of its share of the item's points."""

    def __init__(self, item: Qti21Item, name: str) -> None:
        self.item, self.name = item, name
        declaration = item.declarations[name]
        base = declaration.get("baseType")
        self.kind = {"float": "numerical", "integer": "numerical", "identifier": "choice"}.get(base, "short")
        self.share = next(float(c.find(f"{QTI21}setOutcomeValue[@identifier='SCORE']").find(f".//{QTI21}baseValue").text)
                          for c in item.processing.iter(f"{QTI21}responseIf") if _tests(c[0], name)
                          and c.find(f"{QTI21}setOutcomeValue[@identifier='SCORE']") is not None)

    def _given(self, given):
        if self.kind == "choice":
            by_text = {html: ident for ident, html in self.item.choices_of[self.name].items()}
            chosen = [by_text.get(g, g) for g in given] if not isinstance(given, str) else [given]
            return chosen if self.item.declarations[self.name].get("cardinality") == "multiple" else chosen[0]
        return given

    def score(self, given) -> float:
        return 100.0 * (self.item.run({self.name: self._given(given)})[0] / self.share)

    def shown(self, given) -> list[str]:
        return [self.item.feedback[f] for f in self.item.run({self.name: self._given(given)})[1] if f != "SOLUTION"]

    @property
    def answers(self) -> list[Answer]:
        if self.kind == "choice":
            correct = {v.text for v in self.item.declarations[self.name].iter(f"{QTI21}value")}
            return [Answer(100.0 if ident in correct else 0.0, html, 0.0, "".join(self.shown([html])))
                    for ident, html in self.item.choices_of[self.name].items()]
        found = []
        for condition in self.item.processing.findall(f"{QTI21}responseCondition"):
            if not _tests(condition[0][0], self.name):
                continue
            for other in condition.findall(f"{QTI21}responseElseIf"):
                test = other[0]
                tolerance = float(test.get("tolerance", "0 0").split()[0])
                value = test.find(f"{QTI21}baseValue").text
                found.append(Answer(0.0, value, tolerance, "".join(self.shown(float(value)))))
        return found

    def correct_options(self) -> list[str]:
        return [a.text for a in self.answers if a.fraction > 0]


def read_qti21(data: bytes) -> tuple[ET.Element, list[Qti21Item]]:
    """The package's test and its items (found through ``imsmanifest.xml``), in manifest order."""
    import io
    import zipfile

    archive = zipfile.ZipFile(io.BytesIO(data))
    manifest = ET.fromstring(archive.read("imsmanifest.xml"))
    resources = [r for r in manifest.iter() if _local(r) == "resource"]
    (test,) = [r.get("href") for r in resources if r.get("type") == "imsqti_test_xmlv2p1"]
    items = [Qti21Item(ET.fromstring(archive.read(r.get("href")))) for r in resources
             if r.get("type") == "imsqti_item_xmlv2p1"]
    return ET.fromstring(archive.read(test)), items
