"""Question banks: TOML recipes that say which problems a worksheet holds — never the answers.

A bank names kinds, how many variants of each (or which seeds), their difficulty, overrides, titles
and points. The answers are derived from the seeds when a worksheet is built, so a bank can be
public. Layout::

    title = "Attention basics"          # printed on the worksheet
    seed = 2024                         # default worksheet seed (``--seed`` overrides it)
    id = "attention_basics"             # optional; defaults to the file name without .toml
    instructions = "Show your working." # optional paragraph under the title

    [[problems]]
    kind = "attention.projection"       # a registered kind (`problemgen list`)
    count = 2                           # how many variants (default 1) …
    # seeds = [3, 7]                    # … or pinned seeds: the same variants for every student
    difficulty = 1                      # 1–3, default: the kind's easiest
    points = 2                          # default 1
    title = "Projections by hand"       # optional; default: the kind's title
    overrides = { d_k = 2 }             # the kind's keyword parameters
    credit = "entries"                  # partial credit per matrix entry (default) or "all-or-nothing"
    mistake_credit = 0                  # 0–1: the credit for an answer equal to a named mistake (default 0)
    vary = ["convention"]               # overrides left free per student (default: one structure for all)

Validation reports every problem it finds with the file, the line and the key, and suggests the
closest name for a typo ("unknown kind 'atention.weights' — did you mean 'attention.weights'?"); a key
at the wrong level (``seed`` inside a ``[[problems]]`` table, ``kind`` above the first one) is named as
such. TOML syntax errors carry tomllib's own line numbers; for semantic errors the line is found by
scanning the text for the key inside the right ``[[problems]]`` table. A bank is UTF-8 text (a
byte-order mark is skipped); seeds run from 0 to 2**64 - 1; an override's value must be of the kind's
own type (``d_k = 4``, not ``4.0`` or ``"4"``). Every command that reads a bank goes through
:func:`load_bank`, so the messages are the same whichever command meets a mistake.
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from problemgen.documents import texmath
from problemgen.model.core import ProblemgenError
from problemgen.model.overrides import OverrideValueError
from problemgen.userfiles import read_text
from problemgen.model.registry import all_kinds, generate, get_kind, no_such_override
from problemgen.resources import banks_dir
from problemgen.wording import closest, suggest

MAX_BANK_BYTES = 1024 * 1024
MAX_PROBLEMS = 500
"""Caps that keep a mistyped ``count`` from building a million problems."""
MAX_SEED = 2**64 - 1
"""Seeds run from 0 to 2**64 - 1 (a bank's ``seed`` and pinned ``seeds``, ``worksheet --seed``; the LMS exports
draw from the same range): the largest integer ``variant.json`` holds."""

TOP_KEYS = ("id", "title", "seed", "instructions", "problems")
ITEM_KEYS = ("kind", "count", "seeds", "difficulty", "points", "title", "overrides", "credit", "mistake_credit", "vary")
CREDIT_POLICIES = ("entries", "all-or-nothing")
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class BankItem:
    """One ``[[problems]]`` entry: ``count`` fresh variants of a kind, or the pinned ``seeds``."""

    kind: str
    count: int = 1
    seeds: tuple[int, ...] | None = None
    difficulty: int | None = None
    points: float = 1.0
    title: str | None = None
    overrides: dict = field(default_factory=dict)
    line: int = 0
    credit: str = "entries"
    mistake_credit: float = 0.0
    vary: tuple[str, ...] = ()
    path: str = ""

    @property
    def size(self) -> int:
        """Problems this entry puts on the sheet."""
        return len(self.seeds) if self.seeds is not None else self.count

    @property
    def where(self) -> str:
        """``bank.toml, line 7``: where an error found while building this entry's problems points."""
        return f"{self.path or 'bank'}, line {self.line}"


@dataclass(frozen=True)
class Bank:
    """A validated bank. ``id`` is part of every student's keyed seed, so keep it stable."""

    id: str
    title: str
    seed: int
    items: tuple[BankItem, ...]
    path: str
    instructions: str = ""

    @property
    def size(self) -> int:
        return sum(item.size for item in self.items)


@dataclass(frozen=True)
class BankIssue:
    """One validation finding, rendered as ``file, line N, key 'k': message``."""

    path: str
    line: int
    key: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}, line {self.line}" if self.line else self.path
        return f"{where}, key {self.key!r}: {self.message}" if self.key else f"{where}: {self.message}"


# --------------------------------------------------------------------------------------------------
# Finding banks and lines
# --------------------------------------------------------------------------------------------------


def shipped_banks() -> list[Path]:
    """The worksheet recipes shipped with problemgen (the curriculum and concept files are not recipes)."""
    not_recipes = {"concepts.toml", "curriculum.toml"}
    return sorted(p for p in banks_dir().glob("*.toml") if p.name not in not_recipes)


def resolve_bank(name: str | Path) -> Path:
    """A bank path as given, or a shipped bank by name (``attention_basics`` or ``attention_basics.toml``)."""
    path = Path(name)
    if path.exists():
        return path
    shipped = {p.stem: p for p in shipped_banks()}
    stem = path.name.removesuffix(".toml")
    if path.parent == Path(".") and stem in shipped:
        return shipped[stem]
    raise ProblemgenError(f"{name}: no such bank file{suggest(stem, sorted(shipped))}")


class _Lines:
    """Locate keys in the bank text, table by table, for error messages."""

    HEADER = re.compile(r"^\s*\[")
    ITEM_HEADER = re.compile(r"^\s*\[\[\s*problems\s*\]\]")
    SUB_HEADER = re.compile(r"^\s*\[\s*problems\s*\.")

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        # where each [[problems]] table starts, found once (found per entry, a long bank took quadratic time)
        self.headers = [n for n, line in enumerate(self.lines) if self.ITEM_HEADER.match(line)]

    def _find(self, key: str, start: int, stop: int, *, anywhere: bool = False) -> int:
        pattern = re.compile(rf"(^|[{{,]\s*){re.escape(key)}\s*=" if anywhere else rf"^\s*{re.escape(key)}\s*=")
        for number in range(start, stop):
            line = self.lines[number]
            if (pattern.search(line) if anywhere else pattern.match(line)):
                return number + 1
        return 0

    def item_span(self, index: int) -> tuple[int, int]:
        """0-based [start, stop) of the ``index``-th ``[[problems]]`` table, sub-tables included."""
        if index >= len(self.headers):
            return 0, len(self.lines)
        start = self.headers[index]
        stop = start + 1
        while stop < len(self.lines) and not (
            self.HEADER.match(self.lines[stop]) and not self.SUB_HEADER.match(self.lines[stop])
        ):
            stop += 1
        return start, stop

    def top(self, key: str) -> int:
        """Line of a top-level key (before the first table) or of a table header named ``key``; 0 if absent."""
        stop = next((n for n, line in enumerate(self.lines) if self.HEADER.match(line)), len(self.lines))
        header = re.compile(rf"^\s*\[{{1,2}}\s*{re.escape(key)}\s*[\].]")
        found = next((n + 1 for n, line in enumerate(self.lines) if header.match(line)), 0)
        return self._find(key, 0, stop) or found

    def item(self, index: int, key: str) -> int:
        start, stop = self.item_span(index)
        found = self._find(key, start, stop) or self._find(key, start, stop, anywhere=True)
        return found or start + 1


# --------------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------------


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def control_problem(text: str, allowed: str = "\t") -> str:
    """A one-line explanation when ``text`` holds a control character other than ``allowed``, else "".

    Why: bank text reaches XML (Moodle, QTI), LaTeX, Markdown and terminals; XML 1.0 cannot hold most
    control characters at all, and the rest (escape sequences, NUL) only garble what a reader sees."""
    for char in text:
        if char not in allowed and (unicodedata.category(char) == "Cc" or char in "\ufffe\uffff"):
            where = "tabs and newlines only" if "\n" in allowed else "tabs only; a title is one line"
            return f"contains the control character U+{ord(char):04X}; remove it ({where})"
    return ""


class _Checker:
    """Collects issues while turning the parsed TOML into a Bank."""

    def __init__(self, display: str, text: str) -> None:
        self.display = display
        self.where = _Lines(text)
        self.issues: list[BankIssue] = []

    def top_issue(self, key: str, message: str) -> None:
        self.issues.append(BankIssue(self.display, self.where.top(key) if key else 0, key, message))

    def item_issue(self, index: int, key: str, message: str) -> None:
        self.issues.append(BankIssue(self.display, self.where.item(index, key), key, message))

    def unknown_keys(self, found: dict, top: bool, report) -> None:
        """Report keys a bank's top level (``top``) or a ``[[problems]]`` table does not take."""
        allowed = TOP_KEYS if top else ITEM_KEYS
        for key in sorted(set(found) - set(allowed)):
            if key.lower().startswith("answer"):
                report(key, "banks are recipes and never store answers (they are derived from the seeds)")
            elif key in WRONG_LEVEL and WRONG_LEVEL[key][0] != top:
                report(key, WRONG_LEVEL[key][1])
            else:
                report(key, f"unknown key{suggest(key, list(allowed))}; allowed: {', '.join(allowed)}")


WRONG_LEVEL = {
    **{key: (False, f"{key} belongs in a [[problems]] table, not above the first one")
       for key in ITEM_KEYS if key not in TOP_KEYS},
    "seed": (True, ("seed is the bank's, written above the first [[problems]]; "
                    "to fix this problem's variants, pin them with seeds = [...]")),
    "id": (True, "id is the bank's, written above the first [[problems]]; problems are numbered p1, p2, … in order"),
    "instructions": (True, "instructions are the bank's, written above the first [[problems]]"),
}
"""Keys written at the wrong level: key -> (is it a top-level key?, what to say)."""


def _check_top(data: dict, check: _Checker, default_id: str) -> tuple[str, str, int, str]:
    check.unknown_keys(data, True, check.top_issue)
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        check.top_issue("title", "a non-empty title string is required")
        title = default_id
    seed = data.get("seed", 0)
    if not _is_int(seed) or not 0 <= seed <= MAX_SEED:
        check.top_issue("seed", f"seed must be an integer from 0 to {MAX_SEED}, not {seed!r}")
        seed = 0
    bank_id = data.get("id", default_id)
    if not isinstance(bank_id, str) or not SAFE_ID.match(bank_id):
        check.top_issue("id", f"id must be letters, digits, '.', '_' or '-' (at most 64), not {bank_id!r}")
        bank_id = "bank"
    instructions = data.get("instructions", "")
    if not isinstance(instructions, str):
        check.top_issue("instructions", "instructions must be a string")
        instructions = ""
    for key, text, allowed in (("title", title.strip(), "\t"), ("instructions", instructions.strip(), "\t\n")):
        if problem := control_problem(text, allowed) or texmath.problem(text):
            check.top_issue(key, problem)
    return bank_id, title.strip(), seed, instructions.strip()


def _check_kind(index: int, raw: dict, check: _Checker):
    kind = raw.get("kind")
    if not isinstance(kind, str) or not kind:
        check.item_issue(index, "kind", "every [[problems]] entry needs a kind (see `problemgen list`)")
        return None
    try:
        return get_kind(kind)
    except ProblemgenError:
        names = [spec.name for spec in all_kinds()]
        check.item_issue(index, "kind", f"unknown kind {kind!r}{suggest(kind, names)}")
        return None


def _check_count_and_seeds(index: int, raw: dict, check: _Checker) -> tuple[int, tuple[int, ...] | None]:
    if "count" in raw and "seeds" in raw:
        check.item_issue(index, "seeds", "give either count or seeds, not both")
    count = raw.get("count", 1)
    if not _is_int(count) or not 1 <= count <= MAX_PROBLEMS:
        check.item_issue(index, "count", f"count must be an integer from 1 to {MAX_PROBLEMS}, not {count!r}")
        count = 1
    seeds = raw.get("seeds")
    if seeds is None:
        return count, None
    if not isinstance(seeds, list) or not seeds or not all(_is_int(s) and 0 <= s <= MAX_SEED for s in seeds):
        check.item_issue(index, "seeds", f"seeds must be a non-empty list of integers from 0 to {MAX_SEED}")
        return count, None
    return count, tuple(seeds)


def _check_item(index: int, raw: Any, check: _Checker) -> BankItem | None:
    if not isinstance(raw, dict):
        check.item_issue(index, "problems", "each problem must be a table ([[problems]])")
        return None
    check.unknown_keys(raw, False, lambda key, msg: check.item_issue(index, key, msg))
    spec = _check_kind(index, raw, check)
    count, seeds = _check_count_and_seeds(index, raw, check)
    difficulty = raw.get("difficulty")
    if difficulty is not None and (not _is_int(difficulty) or (spec and difficulty not in spec.difficulties)):
        allowed = list(spec.difficulties) if spec else [1, 2, 3]
        check.item_issue(index, "difficulty", f"difficulty must be one of {allowed}, not {difficulty!r}")
    points = raw.get("points", 1)
    if isinstance(points, bool) or not isinstance(points, (int, float)) or not 0 < points <= 1000:
        check.item_issue(index, "points", f"points must be a number above 0 (at most 1000), not {points!r}")
        points = 1
    title = raw.get("title")
    if title is not None and (not isinstance(title, str) or not title.strip()):
        check.item_issue(index, "title", "title must be a non-empty string")
        title = None
    if title and (problem := control_problem(title.strip()) or texmath.problem(title)):
        check.item_issue(index, "title", problem)
    overrides = raw.get("overrides", {})
    if not isinstance(overrides, dict):
        check.item_issue(index, "overrides", "overrides must be a table, e.g. overrides = { L = 3 }")
        overrides = {}
    if spec is not None:
        for name in sorted(set(overrides) - set(spec.override_names)):
            check.item_issue(index, name, no_such_override(spec, [name]))
    credit, mistake_credit = _check_credit(index, raw, check)
    vary = _check_vary(index, raw, check, spec)
    for name in sorted(set(vary) & set(overrides)):  # the override would win silently: say which was meant
        check.item_issue(index, "vary", f"vary names {name!r}, which overrides pins; keep it in one of the two")
    if spec is None:
        return None
    return BankItem(
        kind=spec.name, count=count, seeds=seeds, difficulty=difficulty if _is_int(difficulty) else None,
        points=float(points), title=title.strip() if title else None, overrides=dict(sorted(overrides.items())),
        line=check.where.item_span(index)[0] + 1, credit=credit, mistake_credit=mistake_credit, vary=vary,
        path=check.display,
    )


def _check_credit(index: int, raw: dict, check: _Checker) -> tuple[str, float]:
    """The item's credit policy: how matrices earn partial credit, and what a named mistake is worth."""
    credit = raw.get("credit", "entries")
    if credit not in CREDIT_POLICIES:
        check.item_issue(index, "credit", f"credit must be one of {', '.join(map(repr, CREDIT_POLICIES))}, not {credit!r}")
        credit = "entries"
    mistake_credit = raw.get("mistake_credit", 0)
    if isinstance(mistake_credit, bool) or not isinstance(mistake_credit, (int, float)) or not 0 <= mistake_credit <= 1:
        check.item_issue(index, "mistake_credit", f"mistake_credit is a fraction from 0 to 1, not {mistake_credit!r}")
        mistake_credit = 0
    return credit, float(mistake_credit)


def _check_vary(index: int, raw: dict, check: _Checker, spec) -> tuple[str, ...]:
    """Overrides the bank wants to differ between students (structural variety, reported per variant)."""
    vary = raw.get("vary", [])
    if not isinstance(vary, list) or not all(isinstance(v, str) for v in vary):
        check.item_issue(index, "vary", 'vary must be a list of override names, e.g. vary = ["convention"]')
        return ()
    if spec is not None:
        for name in sorted(set(vary) - set(spec.override_names)):
            check.item_issue(index, "vary", no_such_override(spec, [name]))
    return tuple(sorted(set(vary)))


TOML_WHERE = re.compile(r"^(?P<message>.*) \(at line (?P<line>\d+), column (?P<column>\d+)\)$")


def _parse(path: Path, display: str) -> tuple[str, dict]:
    """The bank's text and its TOML. A byte-order mark (which Windows editors write) is skipped, as for rosters."""
    try:
        text = read_text(path, MAX_BANK_BYTES, "bank")
    except ProblemgenError as exc:
        raise ProblemgenError(str(exc).replace(str(path), display, 1)) from exc
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        where = TOML_WHERE.match(str(exc))
        if where is None:
            raise ProblemgenError(f"{display}: invalid TOML: {exc}") from exc
        raise ProblemgenError(f"{display}, line {where['line']}, column {where['column']}: invalid TOML: "
                              f"{where['message']}") from exc


def check_bank(
    path: str | Path, *, try_generate: bool = True, templates: str | Path | None = None
) -> tuple[Bank | None, list[BankIssue]]:
    """Parse and validate a bank; return it (None when invalid) with every issue found.

    ``try_generate`` draws the first variant of each entry and looks for its template fragment (in
    ``templates`` first), so override values a kind rejects (say ``L = 0``) and kinds without a
    fragment are reported with their line instead of surfacing while building a class set.
    """
    path = resolve_bank(path)
    display = str(path)
    text, data = _parse(path, display)
    check = _Checker(display, text)
    bank_id, title, seed, instructions = _check_top(data, check, path.stem if SAFE_ID.match(path.stem) else "bank")
    raw_items = data.get("problems")
    misspelt = any(closest(key, ["problems"]) for key in data if key != "problems")  # reported as unknown already
    if (not isinstance(raw_items, list) or not raw_items) and not (misspelt and raw_items is None):
        check.top_issue("problems", "at least one [[problems]] entry is required")
    if not isinstance(raw_items, list):
        raw_items = []
    if len(raw_items) > MAX_PROBLEMS:  # each entry is a problem at least: say so once, not per entry
        check.top_issue("problems", f"the bank has {len(raw_items)} [[problems]] entries; at most {MAX_PROBLEMS} are allowed")
        raw_items = []
    items = [_check_item(i, raw, check) for i, raw in enumerate(raw_items)]
    total = sum(item.size for item in items if item)
    if total > MAX_PROBLEMS:
        check.top_issue("problems", f"the bank asks for {total} problems; at most {MAX_PROBLEMS} are allowed")
    if try_generate and not check.issues:
        _try_items(items, check, str(templates) if templates else None)
    if check.issues:
        return None, check.issues
    bank = Bank(bank_id, title, seed, tuple(items), display, instructions)
    return bank, []


def _try_items(items: list[BankItem], check: _Checker, templates: str | None) -> None:
    """Draw each entry's first variant; with a user's template directory, also compile every template there
    and render each entry's variant, so a broken template is found before a worksheet or class set writes."""
    from problemgen.documents import rendering  # lazy: checking a bank file need not load jinja2

    fragments = set(rendering.environment("md", templates).loader.list_templates())  # one walk of the folders
    broken = rendering.user_template_problems(templates) if templates else {}
    for index, item in enumerate(items):
        fragment = f"problems/{item.kind}.j2"
        if fragment not in fragments:
            check.item_issue(index, "kind", f"kind {item.kind!r} has no template fragment {fragment}")
        elif fragment in broken:
            check.item_issue(index, "kind", broken[fragment])
        problem = _try_item(index, item, check)
        if problem is not None and templates and fragment in fragments and fragment not in broken:
            _try_fragment(index, problem, check, templates)
    used = {f"problems/{item.kind}.j2" for item in items}
    check.issues += [BankIssue(check.display, 0, "", message) for name, message in broken.items() if name not in used]


def _try_item(index: int, item: BankItem, check: _Checker):
    """The entry's first variant, or None with the issue noted (an override's own line when it is one value)."""
    try:
        return generate(item.kind, item.seeds[0] if item.seeds else 0, item.difficulty, **item.overrides)
    except OverrideValueError as exc:
        check.item_issue(index, exc.name if exc.name in item.overrides else "overrides", str(exc))
    except ProblemgenError as exc:
        check.item_issue(index, "overrides" if item.overrides else "kind", str(exc))
    except (TypeError, ValueError) as exc:
        check.item_issue(index, "overrides", f"kind {item.kind!r} rejected these overrides: {exc}")
    return None


def _try_fragment(index: int, problem, check: _Checker, templates: str) -> None:
    """Render the variant's prompt and solution with the user's templates, as Markdown and as LaTeX."""
    from problemgen.documents.rendering import render_blocks  # lazy: checking a bank file need not load jinja2

    for fmt in ("md", "tex"):
        try:
            list(render_blocks(problem, ("prompt", "solution"), fmt, templates))
        except ProblemgenError as exc:
            check.item_issue(index, "kind", f"{exc}{' (as LaTeX)' if fmt == 'tex' else ''}")
            return


def load_bank(path: str | Path, templates: str | Path | None = None) -> Bank:
    """A validated bank, or a ProblemgenError naming the first issue (and how many more there are)."""
    bank, issues = check_bank(path, templates=templates)
    if issues:
        more = f" (and {len(issues) - 1} more; run `problemgen bank validate`)" if len(issues) > 1 else ""
        raise ProblemgenError(f"{issues[0]}{more}")
    assert bank is not None
    return bank


def describe_bank(bank: Bank) -> str:
    """A plain-text table of what the bank puts on a sheet, for ``problemgen bank show``."""
    lines = [f"{bank.title}  (id {bank.id}, default seed {bank.seed}, {bank.size} problems)"]
    first = 1
    for item in bank.items:
        ids = f"p{first}" if item.size == 1 else f"p{first}-p{first + item.size - 1}"
        seeds = f"seeds {list(item.seeds)}" if item.seeds is not None else f"x{item.count}"
        level = f"d{item.difficulty}" if item.difficulty else "d-"
        extra = " ".join(f"{k}={v}" for k, v in item.overrides.items())
        title = item.title or get_kind(item.kind).title
        lines.append(f"  {ids:<9} {item.kind:<28} {seeds:<12} {level}  {item.points:g} pt  {title}  {extra}".rstrip())
        first += item.size
    return "\n".join(lines)
