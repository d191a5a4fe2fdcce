"""Worksheets and class sets: a question bank becomes printable sheets, keys and grader files.

One worksheet is a ``WorksheetVariant`` (the frozen problems, ``variant.json``) plus documents rendered
from it: ``worksheet.md`` / ``answer_key.md`` (and ``.tex`` / ``.pdf`` on request), the blank answer
sheet ``answers.toml`` and the filled ``key.toml``. A class set keeps what a student may see apart from
what only the instructor may: ``handouts/<id>/`` (worksheet in every requested format, blank
``answers.toml``) and ``keys/<id>/`` (answer key, ``key.toml``, ``variant.json``), plus ``manifest.json``
and, with PDF output, one combined print-ready ``handouts.pdf`` and ``keys.pdf`` (each student's pages
start on a new sheet, name and id in the header). Zipping ``handouts/<id>/`` never gives a key away.

Seeds. Every problem seed is a hash of the worksheet seed and the problem's place in the bank, so one
worksheet seed rebuilds the whole sheet. A student's worksheet seed is an HMAC-SHA256 of the class
secret over (bank id, base seed, student id): without the secret nobody can rebuild another student's
sheet, and the printed variant id is a separate slice of the same MAC, so it gives the seed away neither.

Output directories. Nothing is written outside ``out_dir``. A non-empty ``out_dir`` is refused unless
``force`` is set; then files of the same names are replaced and, once the run has written everything, the
files an earlier run left there under the names this command gives its outputs and this run did not write
are removed (a format no longer asked, the folders of a student no longer on the roster: they would
describe the earlier run beside the new files) and named in warnings; nothing else is touched. A class
run also removes the earlier ``manifest.json`` before it starts, so an interrupted run never looks complete.
Same inputs give the same bytes: no timestamps, sorted JSON keys, roster order kept.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import hmac
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass, replace
from operator import attrgetter
from pathlib import Path
from typing import Callable, Iterator

from problemgen.documents.banks import MAX_SEED, Bank, BankItem, load_bank  # noqa: F401 - MAX_SEED re-exported
from problemgen.documents.rosters import RosterStudent, read_roster_entries
from problemgen.model.core import Problem, ProblemgenError
from problemgen.model.variantfile import SheetProblem, WorksheetVariant
from problemgen.errors import WriteFailed
from problemgen.outputlock import holding
from problemgen.outputs import (FILE_MODE, FOLDER_MODE, Removal, allowed_mode, check_output_apart, make_folder,
                                remove_leftovers, remove_stale, why_unwritable)
from problemgen.processes import pools_usable
from problemgen.safewrite import Staged
import problemgen.secret_env as secret_env
from problemgen.model.registry import draw_choices, generate, get_kind
from problemgen.misconceptions.catalogue import describe
from problemgen.sheets.answersheet import blank_and_key_sheets
from problemgen.wording import counted, listed

FORMATS = ("md", "tex", "pdf")
"""Document formats; Markdown is always written, ``tex`` and ``pdf`` on request."""

HANDOUTS, KEYS = "handouts", "keys"
MANIFEST = "manifest.json"
KEY_FILE_PREFIXES = ("answer_key.", "key.toml", "variant.json")
"""Files of a worksheet directory that hold answers: never among the handouts."""


# --------------------------------------------------------------------------------------------------
# Seeds
# --------------------------------------------------------------------------------------------------


def problem_seed(worksheet_seed: int, item_index: int, copy: int, kind: str) -> int:
    """The seed of one problem: a 32-bit slice of SHA-256 over the worksheet seed and its place in the bank."""
    message = f"problemgen.problem/1\0{worksheet_seed}\0{item_index}\0{copy}\0{kind}".encode()
    return int.from_bytes(hashlib.sha256(message).digest()[:4], "big")


def student_seed(secret: str, bank_id: str, base_seed: int, student: str) -> tuple[int, str]:
    """(worksheet seed, variant tag) of one student, from the class secret by HMAC-SHA256.

    The seed (48 bits) and the printed tag (12 hex digits) are disjoint slices of the MAC, so the tag on
    a student's sheet does not reveal the seed that would rebuild the key.
    """
    message = f"problemgen.student/1\0{bank_id}\0{base_seed}\0{student}".encode()
    digest = hmac.new(secret.encode(), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:6], "big"), digest[6:12].hex()


def read_secret(env_var: str) -> str:
    """The class secret from the named environment variable (never from the command line)."""
    return secret_env.read_secret(env_var, "class secret")


# --------------------------------------------------------------------------------------------------
# Building variants
# --------------------------------------------------------------------------------------------------


class ProblemCache:
    """Problems of pinned-seed entries, generated once per class (other seeds are unique per student,
    so keeping those would only hold memory)."""

    def __init__(self) -> None:
        self._pinned: dict[tuple, Problem] = {}

    def get(self, item: BankItem, seed: int, fair: dict | None = None) -> Problem:
        key = (item.kind, seed, item.difficulty, json.dumps(item.overrides, sort_keys=True))
        if item.seeds is None:
            return self._generate(item, seed, fair or {})
        if key not in self._pinned:
            self._pinned[key] = self._generate(item, seed, {})
        return self._pinned[key]

    @staticmethod
    def _generate(item: BankItem, seed: int, fair: dict) -> Problem:
        try:
            return generate(item.kind, seed, item.difficulty, **{**fair, **item.overrides})
        except ProblemgenError as exc:
            raise ProblemgenError(f"{item.where}: {exc}") from exc


STRUCTURAL_OVERRIDES = ("representation", "convention", "alignment", "form", "order", "bias", "tied",
                        "with_positions", "multi_query", "stages", "norm", "kind")
"""Overrides that always shape a problem (a representation, a convention or form, which parts are asked,
which norm or feed-forward layer is meant); a numeric override does when it sizes a matrix or vector.
``question`` is content, not structure."""


def _dimensions(value, found: set[int] | None = None) -> set[int]:
    """Every length of every (nested) list in ``value``: the sizes a student sees."""
    found = set() if found is None else found
    if isinstance(value, dict):
        for item in value.values():
            _dimensions(item, found)
    elif isinstance(value, (list, tuple)):
        found.add(len(value))
        for item in value:
            _dimensions(item, found)
    return found


def fair_overrides(bank: Bank, base_seed: int) -> dict[tuple[int, int], dict]:
    """(item index, copy) -> the structural overrides every student of a class set shares.

    One class-wide draw per problem chooses its structure — sizes, mask representation, convention —
    and every student's variant is drawn with those values pinned, so only the numbers differ. Names in
    the item's ``vary`` stay free per student; the item's own ``overrides`` win. Pinned-seed items are
    identical for everyone already.
    """
    pinned: dict[tuple[int, int], dict] = {}
    for index, item in enumerate(bank.items):
        for copy in range(item.count if item.seeds is None else 0):
            seed = problem_seed(base_seed, index, copy, item.kind)
            try:
                problem, chosen = draw_choices(item.kind, seed, item.difficulty, **item.overrides)
            except ProblemgenError as exc:
                raise ProblemgenError(f"{item.where}: {exc}") from exc
            shared = structural_choices(problem, chosen)
            pinned[(index, copy)] = {
                name: value for name, value in shared.items() if name not in item.vary and name not in item.overrides
            }
    return pinned


def structural_choices(problem: Problem, chosen: dict) -> dict:
    """The override values of one draw that shape what a student sees: the named structural ones and
    integers that size a matrix or vector. Values noted by helpers the kind does not accept are left out."""
    accepted = set(get_kind(problem.kind).override_names)
    sizes = _dimensions(problem.params) | _dimensions([p.value for p in problem.parts])
    return {
        name: value for name, value in sorted(chosen.items())
        if name in accepted and value is not None
        and (name in STRUCTURAL_OVERRIDES or (type(value) is int and value in sizes))
    }


def _item_seeds(item: BankItem, item_index: int, worksheet_seed: int) -> list[int]:
    if item.seeds is not None:
        return list(item.seeds)
    return [problem_seed(worksheet_seed, item_index, copy, item.kind) for copy in range(item.count)]


def build_variant(
    bank: Bank, seed: int, *, student: str | None = None, variant_id: str | None = None,
    cache: ProblemCache | None = None, fair: dict | None = None,
) -> WorksheetVariant:
    """The frozen worksheet for ``seed``: problems ``p1…pn`` in bank order, with their points and titles
    (``fair``: the class set's pinned structure, see :func:`fair_overrides`)."""
    cache = cache or ProblemCache()
    fair = fair or {}
    placed: list[SheetProblem] = []
    for index, item in enumerate(bank.items):
        for copy, problem_seed_ in enumerate(_item_seeds(item, index, seed)):
            problem = cache.get(item, problem_seed_, fair.get((index, copy)))
            if item.title:
                problem = replace(problem, title=item.title)
            placed.append(SheetProblem(id=f"p{len(placed) + 1}", points=item.points, problem=problem,
                                       credit=item.credit, mistake_credit=item.mistake_credit))
    return WorksheetVariant(
        variant_id=variant_id or f"{bank.id}-s{seed}", title=bank.title, bank=bank.id, seed=seed,
        problems=tuple(placed), student=student,
    )


# --------------------------------------------------------------------------------------------------
# Rendering documents
# --------------------------------------------------------------------------------------------------


class DocumentRenderer:
    """Renders a variant's worksheet and key; the worksheet and the key share each rendered prompt."""

    def __init__(self, user_dir: str | None = None) -> None:
        self.user_dir = str(user_dir) if user_dir else None
        self._blocks: dict[tuple, str] = {}
        self._conventions: dict[str, str] = {}

    def block(self, problem: Problem, block: str, fmt: str = "md") -> str:
        """The ``prompt`` or ``solution`` block of the problem's fragment (cached; template errors as
        :class:`ProblemgenError`) — for exports that lay out problems themselves."""
        key = (problem.variant_id, problem.title, block, fmt)
        if key not in self._blocks:
            self._blocks[key] = self._fragments(problem, (block,), fmt)[0]
        return self._blocks[key]

    def _fragments(self, problem: Problem, blocks: tuple[str, ...], fmt: str) -> list[str]:
        """The text of each of ``blocks`` of the problem's fragment, rendered from one template context
        (template errors as :class:`ProblemgenError`)."""
        from problemgen.documents.rendering import render_blocks  # lazy: jinja2 only when rendering

        return list(render_blocks(problem, blocks, fmt, self.user_dir))

    def conventions(self, fmt: str) -> str:
        if fmt not in self._conventions:
            from problemgen.documents.rendering import environment  # lazy: jinja2 only when rendering

            template = environment(fmt, self.user_dir).get_template("documents/conventions.j2")
            self._conventions[fmt] = template.render().strip() + "\n"
        return self._conventions[fmt]

    def context(self, variant: WorksheetVariant, fmt: str, *, key: bool, instructions: str = "", name: str = "") -> dict:
        """What the document templates see (documented at the top of each template)."""
        return next(self._contexts(variant, fmt, ((key, instructions, name),)))

    def _contexts(self, variant: WorksheetVariant, fmt: str, documents: tuple[tuple[bool, str, str], ...],
                  fragments: list[tuple[str, str]] | None = None):
        """The context of each document (key?, instructions, name) of one variant in one format.

        Each problem's fragment is rendered once for all of them (``fragments``: its prompt and solution,
        when :meth:`_batch_fragments` rendered them already), and what every document shows alike (place,
        title, points, prompt, each part's key and label) is worked out once; the key adds the solution and
        the answers."""
        if fragments is None:
            fragments = self._batch_fragments([variant], fmt)[0]
        keys = any(key for key, _, _ in documents)
        problems = [self._problem_view(placed, number, fmt, keys, prompt, solution)
                    for number, (placed, (prompt, solution)) in enumerate(zip(variant.problems, fragments), start=1)]
        for key, instructions, name in documents:
            yield {
                "title": variant.title, "bank": variant.bank, "variant_id": variant.variant_id,
                "student": variant.student, "student_name": _name_for(name, fmt), "instructions": instructions,
                "conventions": self.conventions(fmt),
                "total_points": sum(p.points for p in variant.problems),
                "problems": [keyed if key else shown for shown, keyed in problems],
            }

    def _batch_fragments(self, variants: list[WorksheetVariant], fmt: str) -> list[list[tuple[str, str]]]:
        """Per variant, each problem's (prompt, solution), rendered from one template context.

        The batch is taken problem by problem: every variant's first problem, then every second one. In a
        class set those are one kind, so its template's code stays in the processor's caches from one
        student to the next (a tenth less CPU for the fragments than student by student,
        ``bench/classset.py``). Only the text is kept across the batch (tuples of strings, which the garbage
        collector soon stops walking): the documents' dicts are made student by student and dropped, where
        holding them for the batch made the collector walk thousands more objects."""
        fragments: list[list] = [[None] * len(variant.problems) for variant in variants]
        for index in range(max((len(variant.problems) for variant in variants), default=0)):
            for variant, row in zip(variants, fragments):
                if index < len(variant.problems):
                    prompt, solution = self._fragments(variant.problems[index].problem, FRAGMENT_BLOCKS, fmt)
                    row[index] = (prompt, solution)
        return fragments

    @staticmethod
    def _problem_view(placed: SheetProblem, number: int, fmt: str, key: bool, prompt: str,
                      solution: str) -> tuple[dict, dict | None]:
        """One problem as the worksheet shows it, and as the key does (None unless ``key``)."""
        problem = placed.problem
        entry = {"id": placed.id, "number": number, "title": problem.title, "points": placed.points,
                 "kind": problem.kind, "problem_variant": problem.variant_id, "prompt": prompt}
        shown = [{"key": p.key, "label": p.label or p.key, "type": p.type} for p in problem.parts]
        keyed = _key_problem(entry, shown, placed, solution, fmt) if key else None
        return {**entry, "solution": "", "parts": shown}, keyed

    def documents(
        self, variant: WorksheetVariant, formats: tuple[str, ...], instructions: str = "", student_name: str = ""
    ) -> dict[str, bytes]:
        """File name -> bytes of every document of one variant in the requested formats (``student_name``:
        the roster's name, printed on the name line)."""
        return self.batch_documents([variant], formats, instructions, [student_name])[0]

    def batch_documents(
        self, variants: list[WorksheetVariant], formats: tuple[str, ...], instructions: str, names: list[str]
    ) -> list[dict[str, bytes]]:
        """:meth:`documents` of each variant (``names``: the roster's, one per variant), the fragments of the
        whole batch rendered first, problem by problem (:meth:`_batch_fragments`)."""
        from problemgen.documents.rendering import render_document  # lazy: jinja2 only when rendering

        batch: list[dict[str, bytes]] = [{} for _ in variants]
        wanted = ("md", "tex") if {"tex", "pdf"} & set(formats) else ("md",)
        documents = (("worksheet", False), ("answer_key", True))
        for fmt in wanted:
            fragments = self._batch_fragments(variants, fmt)
            for variant, student_name, rendered, files in zip(variants, names, fragments, batch):
                asked = tuple((key, instructions, student_name) for _, key in documents)
                for (name, _), context in zip(documents, self._contexts(variant, fmt, asked, rendered)):
                    text = render_document(name, fmt, context, self.user_dir)
                    if fmt == "md" or "tex" in formats:
                        files[f"{name}.{fmt}"] = text.encode("utf-8")
                    if fmt == "tex" and "pdf" in formats:
                        from problemgen.documents.latex import compile_pdf  # lazy: only PDF output needs LaTeX

                        files[f"{name}.pdf"] = compile_pdf(text, name)
        return batch


def _key_problem(entry: dict, shown: list[dict], placed: SheetProblem, solution: str, fmt: str) -> dict:
    """One problem of the answer key: the shared entry with the worked solution and each part's answer."""
    from problemgen.documents import rendering  # lazy: jinja2 only when rendering

    heatmap = rendering.heatmap_md if fmt == "md" else rendering.heatmap_tex
    parts = [{
        **part_shown,
        "tolerance": rendering.tolerance_text(part),
        "answer": rendering.answer_display(part, fmt),
        "heatmap": heatmap(part.value) if rendering.is_heatmap(part) else "",
        "mistakes": list(_mistake_titles(tuple(map(_NAME, part.mistakes)))),
    } for part_shown, part in zip(shown, placed.problem.parts)]
    return {**entry, "solution": solution, "parts": parts}


_NAME = attrgetter("name")


@functools.lru_cache(maxsize=1024)
def _mistake_titles(names: tuple[str, ...]) -> tuple[str, ...]:
    """The catalogue's description of each named mistake, each description once, in order. A class set's
    key lists the same few sets of mistakes thousands of times; the catalogue is fixed, so each set is
    described once per process."""
    return tuple(dict.fromkeys(map(describe, names)))


FRAGMENT_BLOCKS = ("prompt", "solution")
"""The blocks of a problem's template fragment."""


def _name_for(name: str, fmt: str) -> str:
    """The roster name for one format: pdflatex (no unicode engine) gets '?' for characters it cannot print."""
    if fmt != "tex":
        return name
    from problemgen.documents.rendering import TEX_UNICODE  # lazy: jinja2 only when rendering

    return "".join(c if ord(c) < 0x250 or c in TEX_UNICODE else "?" for c in name)


def answer_sheets(variant: WorksheetVariant) -> dict[str, bytes]:
    """``answers.toml`` (blank) and ``key.toml`` (filled): the sheet format belongs to the grader's module."""
    blank, key = blank_and_key_sheets(variant)
    return {"answers.toml": blank.encode("utf-8"), "key.toml": key.encode("utf-8")}


def variant_files(
    variant: WorksheetVariant, renderer: DocumentRenderer, formats: tuple[str, ...], instructions: str = "",
    name: str = "",
) -> dict[str, bytes]:
    """Every file of one worksheet directory."""
    return batch_files([variant], renderer, formats, instructions, [name])[0]


def batch_files(
    variants: list[WorksheetVariant], renderer: DocumentRenderer, formats: tuple[str, ...], instructions: str,
    names: list[str],
) -> list[dict[str, bytes]]:
    """Every file of each variant's worksheet directory (``names``: the roster's, one per variant).

    One step at a time over the whole batch, the documents of every variant, then their answer sheets, then
    their ``variant.json``: each step's code and data stay in the processor's caches from one variant to
    the next instead of being pushed out by the other steps (see :data:`BATCH_STUDENTS`)."""
    documents = renderer.batch_documents(variants, formats, instructions, names)
    sheets = [answer_sheets(variant) for variant in variants]
    frozen = [variant.to_json_bytes() for variant in variants]
    return [dict(sorted({**files, **answers, "variant.json": data}.items()))
            for files, answers, data in zip(documents, sheets, frozen)]


# --------------------------------------------------------------------------------------------------
# Output directories
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Output:
    """The output folder, and whether it held anything before this run (only then can a file be stale)."""

    root: Path
    earlier: bool


@contextmanager
def prepare_output(out_dir: str | Path, force: bool) -> Iterator[Output]:
    """Create ``out_dir`` and hold it for the run (:mod:`problemgen.outputlock`), refusing a non-empty one
    without ``force``: its resolved path, and whether an earlier run (or anyone) left files there. Held,
    a second run into the folder stops at once instead of mixing its students with this run's."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ProblemgenError(f"{out}: exists and is not a directory")
    try:
        make_folder(out)
    except OSError as exc:
        raise ProblemgenError(f"{out}: cannot create the output directory ({_os_reason(exc, out)})") from None
    if reason := why_unwritable(out):  # before any work, as an output file that cannot be written
        raise ProblemgenError(f"{out}: cannot be written ({reason})")
    with holding(out, writing=True):
        try:
            earlier = any(out.iterdir())
        except OSError as exc:
            raise ProblemgenError(f"{out}: cannot list the output directory ({_os_reason(exc, out)})") from None
        if earlier and not force:
            raise ProblemgenError(f"{out}: directory is not empty; use --force to replace the files problemgen writes there")
        yield Output(out.resolve(), earlier)


def _os_reason(exc: OSError, path: Path) -> str:
    """Why a path could not be made, in words (a parent that is a file is the common case)."""
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            return f"{parent} is a file, not a directory"
    return exc.strerror or type(exc).__name__


def write_files(root: Path, subdir: str | None, files: dict[str, bytes], *, durable: bool = False) -> None:
    """Write ``files`` into ``root/subdir`` together, whole or not at all (see :func:`write_folders`)."""
    write_folders(root, {subdir: files}, durable=durable)


def write_folders(root: Path, folders: dict[str | None, dict[str, bytes]], *, durable: bool = False) -> None:
    """Write each folder's files (``subdir`` -> name -> bytes; None: ``root`` itself) all together, whole
    or not at all (:class:`problemgen.safewrite.Staged`): a full disk leaves every earlier file as it was,
    never one student's new handout beside their earlier key. A directory or file link on the way is
    refused (a link could lead outside ``root``). New files get :data:`FILE_MODE` as the umask allows
    (:mod:`problemgen.outputs`), worked out once for the call: reading the umask costs more than a file."""
    new_mode = allowed_mode(FILE_MODE)
    with Staged(durable=durable) as staged:
        for subdir, files in folders.items():
            target = str(root)
            for component in (subdir.split("/") if subdir else ()):
                target = os.path.join(target, component)
                _make_directory(Path(target))
            for name, data in files.items():
                staged.add(os.path.join(target, name), data, new_mode=new_mode)
        staged.commit()


def _make_directory(path: Path) -> None:
    """Create one directory of the output, or accept it when it is there already and not a link."""
    try:
        os.mkdir(path, FOLDER_MODE)  # never group- or world-writable (problemgen.outputs)
    except FileExistsError as exc:
        if path.is_symlink():
            raise ProblemgenError(f"refusing to write into {path}: it is a symbolic link") from None
        if not path.is_dir():
            raise ProblemgenError(f"cannot create {path} ({_os_reason(exc, path)})") from None
    except OSError as exc:  # a parent that is a file is the user's; a full disk or a vanished folder is not
        error = ProblemgenError if exc.errno == errno.ENOTDIR else WriteFailed
        raise error(f"cannot create {path} ({_os_reason(exc, path)})") from None


def parse_formats(text: str) -> tuple[str, ...]:
    """``"md,tex,pdf"`` -> a sorted tuple of known formats (Markdown always included)."""
    names = {f.strip().lower() for f in text.split(",") if f.strip()}
    unknown = sorted(names - set(FORMATS))
    if unknown:
        raise ProblemgenError(f"unknown {'format' if len(unknown) == 1 else 'formats'} {', '.join(unknown)}; "
                              f"choose from {', '.join(FORMATS)}")
    return tuple(f for f in FORMATS if f in names | {"md"})


# --------------------------------------------------------------------------------------------------
# The two jobs
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorksheetJob:
    """What ``problemgen worksheet`` was asked to do. ``jobs`` = worker processes for class sets (None: auto)."""

    bank: str | Path
    out_dir: str | Path
    seed: int | None = None
    formats: tuple[str, ...] = ("md",)
    templates: str | Path | None = None
    force: bool = False
    jobs: int | None = None


def _check_formats(job: WorksheetJob) -> None:
    if "pdf" in job.formats:
        from problemgen.documents.latex import INSTALL_HINT, pdflatex_path  # lazy: only PDF output needs the LaTeX tools

        if pdflatex_path() is None:
            raise ProblemgenError(INSTALL_HINT)
    if job.templates is not None and not Path(job.templates).is_dir():
        raise ProblemgenError(f"{job.templates}: templates directory not found")
    check_output_apart(job.out_dir, {"--templates folder": job.templates})  # documents would join the templates


def write_worksheet(job: WorksheetJob, warn: Callable[[str], None] | None = None) -> WorksheetVariant:
    """One worksheet (no roster) into ``job.out_dir``; returns the variant written. ``warn`` gets a line
    for each file an earlier run left there that this run replaced by nothing (see the module's notes)."""
    _check_formats(job)
    bank = load_bank(job.bank, job.templates)
    seed = bank.seed if job.seed is None else job.seed
    variant = build_variant(bank, seed)
    files = variant_files(variant, DocumentRenderer(job.templates), job.formats, bank.instructions)
    with prepare_output(job.out_dir, job.force) as output:
        if output.earlier:  # a killed run's unfinished files (problemgen.outputs)
            remove_leftovers(output.root, worksheet_files(FORMATS))
        try:
            write_files(output.root, None, files)
        except WriteFailed as exc:  # staged: the worksheet, key and variant of an earlier run stay together
            raise WriteFailed(f"{exc}; no file in {job.out_dir} was replaced") from None
        if output.earlier:
            _report_removal(remove_stale(output.root, worksheet_files(FORMATS), files), set(), warn)
    return variant


def worksheet_files(formats: tuple[str, ...]) -> list[str]:
    """The files of a worksheet directory in ``formats``: documents, answer sheets and the frozen variant."""
    return [*(f"{name}.{fmt}" for name in ("worksheet", "answer_key") for fmt in FORMATS if fmt in formats),
            "answers.toml", "key.toml", "variant.json"]


def class_set_patterns() -> list[str]:
    """Every file a class set of any formats may hold, as :func:`problemgen.outputs.remove_stale` matches
    them: each student's handout and key files and the combined documents (never ``manifest.json``,
    which every class run writes)."""
    handout = [f"{HANDOUTS}/*/{name}" for name in worksheet_files(FORMATS) if not is_key_file(name)]
    key = [f"{KEYS}/*/{name}" for name in worksheet_files(FORMATS) if is_key_file(name)]
    return [*handout, *key, *(f"{name}.{fmt}" for name in (HANDOUTS, KEYS) for fmt in ("pdf", "tex"))]


def _report_removal(removal: Removal, students: set[str], warn: Callable[[str], None] | None) -> None:
    """One warning line per kind of file removed: the folders of students not on this roster (by id), each
    document name of a format no longer asked (with how many students' folders held it), each other file."""
    gone, dropped, lines = set(), {}, []
    for path in removal.removed:
        parts = path.split("/")
        if len(parts) == 3 and parts[1] not in students:
            gone.add(parts[1])
        elif len(parts) == 3:
            dropped.setdefault(parts[2], set()).add(parts[1])
        else:
            lines.append(f"removed {path}, left by an earlier run: this run wrote no {_suffix(path)}")
    if gone:
        lines.insert(0, f"removed the handouts and keys of {counted(len(gone), 'student')} not on this roster, left "
                        f"by an earlier run: {listed(sorted(gone), 10)}")
    for name, folders in sorted(dropped.items()):
        lines.append(f"removed {name} from {counted(len(folders), 'student folder')}, left by an earlier run: "
                     f"this run wrote no {_suffix(name)}")
    for line in (*lines, *removal.failed) if warn else ():
        warn(line)


def _suffix(path: str) -> str:
    return "." + path.rsplit(".", 1)[-1]


def is_key_file(name: str) -> bool:
    """Whether a worksheet file holds answers (answer key, filled sheet, frozen variant)."""
    return name.startswith(KEY_FILE_PREFIXES)


class StudentWriter:
    """Builds and writes students' handout and key directories, a batch of students at a time. Each process
    has its own (the caches are per process)."""

    def __init__(self, bank: Bank, job: WorksheetJob, secret: str, base_seed: int, root: Path) -> None:
        self.bank, self.job, self.secret, self.base_seed, self.root = bank, job, secret, base_seed, root
        self.fair = fair_overrides(bank, base_seed)
        self.cache = ProblemCache()
        self.renderer = DocumentRenderer(job.templates)
        self.combine = "pdf" in job.formats

    def __call__(self, students: list[RosterStudent]) -> list[dict]:
        """Write a batch of students' directories, drawing all their variants first and then making all
        their files (:func:`batch_files`); returns their manifest entries."""
        variants = [self._variant(student) for student in students]
        formats = (*self.job.formats, "tex") if self.combine else self.job.formats
        batch = batch_files(variants, self.renderer, formats, self.bank.instructions, [s.name for s in students])
        return [self._write(student, variant, files) for student, variant, files in zip(students, variants, batch)]

    def _variant(self, student: RosterStudent) -> WorksheetVariant:
        seed, tag = student_seed(self.secret, self.bank.id, self.base_seed, student.id)
        return build_variant(self.bank, seed, student=student.id, variant_id=f"{self.bank.id}-{tag}", cache=self.cache,
                             fair=self.fair)

    def _write(self, student: RosterStudent, variant: WorksheetVariant, files: dict[str, bytes]) -> dict:
        """Write one student's handout and key directories; returns the student's manifest entry."""
        sources = {name: files[name].decode() for name in ("worksheet.tex", "answer_key.tex")} if self.combine else {}
        if "tex" not in self.job.formats:  # rendered only for the combined PDFs
            files = {name: data for name, data in files.items() if not name.endswith(".tex")}
        handout, key = f"{HANDOUTS}/{student.id}", f"{KEYS}/{student.id}"
        write_folders(self.root, {handout: {n: d for n, d in files.items() if not is_key_file(n)},
                                  key: {n: d for n, d in files.items() if is_key_file(n)}})
        entry = {"student": student.id, "name": student.name, "variant_id": variant.variant_id,
                 "handout": handout, "key": key,
                 "_written": [f"{key if is_key_file(name) else handout}/{name}" for name in files]}
        if self.combine:
            entry["_tex"] = (sources["worksheet.tex"], sources["answer_key.tex"])
        return entry


_WORKER: StudentWriter | None = None


def _start_worker(writer: StudentWriter) -> None:
    global _WORKER
    _WORKER = writer


def _write_in_worker(students: list[RosterStudent]) -> list[dict]:
    assert _WORKER is not None
    return _WORKER(students)


def worker_count(job: WorksheetJob, students: int) -> int:
    """Processes for a class set: ``job.jobs``, or up to 4 of the CPUs available when the class is large."""
    if job.jobs is not None:
        return max(1, min(job.jobs, students))
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(4, cpus, students // 25))


BATCH_STUDENTS = 16
"""Students a writer takes at a time: it draws their variants, then makes their files step by step
(:func:`batch_files`), then writes them. Keeping each step's code warm across a batch costs about 4 % less
CPU for a class set than one student at a time (``bench/classset.py``); a batch's files are a few MB."""


def _write_students(writer: StudentWriter, students: list[RosterStudent], workers: int):
    """Yield manifest entries in roster order, from this process or from a pool of workers."""
    size = min(BATCH_STUDENTS, -(-len(students) // workers))  # every worker gets a batch in a small class
    batches = [students[start:start + size] for start in range(0, len(students), size)]
    if workers == 1 or not pools_usable():  # no /dev/shm: no pool, this process writes all (problemgen.processes)
        for batch in batches:
            yield from writer(batch)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    with ProcessPoolExecutor(workers, multiprocessing.get_context(method), _start_worker, (writer,)) as pool:
        for entries in pool.map(_write_in_worker, batches, chunksize=max(1, len(batches) // (workers * 8))):
            yield from entries


def student_files(formats: tuple[str, ...]) -> list[str]:
    """The files of each ``handouts/<id>/`` directory (what a student may see)."""
    return ["answers.toml", *(f"worksheet.{fmt}" for fmt in FORMATS if fmt in formats)]


def combine_tex(sources: list[str]) -> str:
    """One LaTeX document printing every source in turn: the first one's preamble, then each body.

    Each student starts on an odd page (a blank page pads an odd count), so printed double-sided every
    student's pages begin on a new sheet; page numbers restart per student and each body sets its own
    header (name, id, variant).
    """
    begin, end = "\\begin{document}", "\\end{document}"
    bodies = []
    for source in sources:
        if source.count(begin) != 1 or end not in source:
            raise ProblemgenError("cannot combine the documents: a template must hold exactly one \\begin{document}")
        bodies.append(source[source.index(begin) + len(begin) : source.rindex(end)].strip("\n"))
    new_sheet = "\\clearpage\\ifodd\\value{page}\\else\\null\\thispagestyle{empty}\\clearpage\\fi\\setcounter{page}{1}"
    preamble = sources[0][: sources[0].index(begin)]
    return preamble + begin + "\n" + f"\n{new_sheet}\n".join(bodies) + "\n" + end + "\n"


def _write_combined(root: Path, formats: tuple[str, ...], sources: dict[str, list[str]]) -> list[str]:
    """``handouts.pdf`` and ``keys.pdf`` (and their ``.tex`` when asked) at the top of the class set;
    returns their names."""
    from problemgen.documents.latex import compile_pdf  # lazy: only PDF output needs the LaTeX tools

    written = []
    for name, docs in sources.items():
        text = combine_tex(docs)
        files = {f"{name}.pdf": compile_pdf(text, name)}
        if "tex" in formats:
            files[f"{name}.tex"] = text.encode("utf-8")
        write_files(root, None, files)
        written.extend(files)
    return written


def _forget_manifest(root: Path) -> None:
    """Remove an earlier run's ``manifest.json`` before any student is written: the manifest marks a
    complete class set, and the earlier one would claim this run complete if it stopped midway."""
    path = root / MANIFEST
    if path.is_file() and not path.is_symlink():
        try:
            path.unlink()
        except OSError as exc:
            raise ProblemgenError(f"cannot replace {path} ({exc.strerror})") from None


def _write_set(writer: StudentWriter, students: list[RosterStudent],
               progress: Callable[[int, int], None] | None) -> tuple[list[dict], set[str]]:
    """Every student's folders, the combined documents, then ``manifest.json`` (flushed to the disk: it says
    the set is whole); returns the manifest entries and the files written."""
    bank, job = writer.bank, writer.job
    entries, combined, written = [], {"handouts": [], "keys": []}, {MANIFEST}
    for entry in _write_students(writer, students, worker_count(job, len(students))):
        for name, source in zip(combined, entry.pop("_tex", ())):
            combined[name].append(source)
        written.update(entry.pop("_written"))
        entries.append(entry)
        if progress:
            progress(len(entries), len(students))
    if writer.combine:
        written.update(_write_combined(writer.root, job.formats, combined))
    manifest = {
        "schema": "problemgen.manifest/2", "bank": bank.id, "title": bank.title, "base_seed": writer.base_seed,
        "formats": list(job.formats), "problems": bank.size, "students": entries,
        "handouts": HANDOUTS, "keys": KEYS, "student_files": student_files(job.formats),
        "structure": {f"{index}.{copy}": pinned for (index, copy), pinned in sorted(writer.fair.items())},
    }
    manifest_bytes = (json.dumps(manifest, sort_keys=True, indent=1) + "\n").encode()
    write_files(writer.root, None, {MANIFEST: manifest_bytes}, durable=True)
    return entries, written


def write_class_set(
    job: WorksheetJob, roster: str | Path, secret_env: str,
    progress: Callable[[int, int], None] | None = None, id_column: str | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[dict]:
    """``handouts/<id>/`` and ``keys/<id>/`` per roster student, combined PDFs, and ``manifest.json``.

    Students are independent, so large classes are spread over worker processes; every file depends only
    on the inputs, never on which worker wrote it. ``manifest.json`` is written last: a directory without
    it is an interrupted run. Then the files of an earlier class set that this run did not write are
    removed, each kind named in a line to ``warn`` (see the module's notes). Returns the manifest entries.
    """
    _check_formats(job)
    bank = load_bank(job.bank, job.templates)
    students = read_roster_entries(roster, id_column)
    secret = read_secret(secret_env)
    base_seed = bank.seed if job.seed is None else job.seed
    with prepare_output(job.out_dir, job.force) as output:
        return _write_class_set(job, bank, students, secret, base_seed, output, progress, warn)


def _write_class_set(job: WorksheetJob, bank: Bank, students: list[RosterStudent], secret: str, base_seed: int,
                     output: Output, progress: Callable[[int, int], None] | None,
                     warn: Callable[[str], None] | None) -> list[dict]:
    """The writing of :func:`write_class_set`, into the folder it holds."""
    root = output.root
    _forget_manifest(root)
    if output.earlier:  # a killed run's unfinished files (problemgen.outputs)
        remove_leftovers(root, [*class_set_patterns(), MANIFEST])
    writer = StudentWriter(bank, job, secret, base_seed, root)
    try:
        entries, written = _write_set(writer, students, progress)
    except WriteFailed as exc:  # a full disk or quota midway: say what the folder holds now
        raise WriteFailed(f"{exc}; the class set in {job.out_dir} is unfinished (no {MANIFEST}); run the same "
                          "command with --force once there is room") from None
    if output.earlier:  # a new or empty folder holds nothing an earlier run left (no walk over the class set)
        _report_removal(remove_stale(root, class_set_patterns(), written), {s.id for s in students}, warn)
    return entries
