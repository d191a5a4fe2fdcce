"""The self-quiz session: one problem at a time, instant feedback, hints, solutions, mastery gates.

The loop is I/O-agnostic: it reads lines through ``Console.read`` and writes through
``Console.write``, and reaches generation, grading and rendering through ``Services``, so tests drive
it with lists of strings and the CLI with a terminal or a pipe. Every graded answer is committed to the
progress store before the feedback is printed (see ``problemgen.practice.progress``); which item comes next is
decided by ``problemgen.practice.rules`` from the stored history.

At the prompt the student types an answer or one of the commands in ``COMMANDS``.
"""

from __future__ import annotations

import os
import shutil
import shlex
import sys
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Mapping

from problemgen.model.core import AnswerPart, Problem, ProblemgenError
from problemgen.practice.rules import (
    Choice,
    Curriculum,
    MasteryRule,
    UnitState,
    all_states,
    day_text,
    progress_phrase,
    apply_offer,
    choose_next,
    draw_variant,
    load_curriculum,
    mistake_history,
    regenerate,
    resumable,
    summary,
    unit_unlocked,
)
from problemgen.practice.hints import first_entry, first_intermediate, hint_text, solution_names  # noqa: F401  (re-exported)
from problemgen.practice.progress import ItemConflict, ProgressStore, default_db_path, filed_afresh, utc_now
from problemgen.practice.store_checks import MAX_SEED
from problemgen.practice.typed_lines import (
    command_of,
    continuation_prompt,
    join_lines,
    matrix_rows,
    one_row,
    open_brackets,
    row_prompt,
    rows_as_one_line,
)
from problemgen.documents.terminal import can_encode, layout_width, style, to_ascii, use_colour, wrap
from problemgen.misconceptions.catalogue import describe
from problemgen.problems import index
from problemgen.practice.services import (  # noqa: F401  (re-exported for callers of the quiz module)
    NOW_ENV, OFFER_TEXT, Services, clock_from_env, default_services, warm_expression_reader,
)

COMMANDS: dict[str, str] = {
    "hint": "a hint; ask again for a more specific one (an item answered after a hint does not count toward mastery)",
    "solution": "the worked solution of this variant (ends the item; it counts as not known)",
    "show": "print the current problem again",
    "skip": "leave this problem, and this skill for now, and go to the next one",
    "another": "a different, never-seen variant of the same skill",
    "quit": "save and leave (the next run resumes this problem; after a wrong answer, its skill with a new variant)",
    "help": "list these commands",
}
COMMAND_HELP = "\n".join(f"  {name:<9} {text}" for name, text in COMMANDS.items())

# ---------------------------------------------------------------------------------- plumbing


@dataclass
class Console:
    """Where lines come from and go to. ``read`` raises EOFError at the end of the input."""

    read: Callable[[str], str]
    write: Callable[[str], None]
    colour: bool = False
    interactive: bool = False  # a person at a terminal: pause after a worked solution
    width: int = 0  # fold prose to this many columns (0: never)

    def say(self, text: str = "", role: str = "") -> None:
        if self.width:
            text = wrap(text, self.width)
        self.write(style(text, role, self.colour) + "\n")


def terminal_console(stdin=None, stdout=None, env: Mapping[str, str] | None = None) -> Console:
    """A console on real streams: ``input()`` on a terminal, one line per answer from a pipe."""
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    interactive = stdin.isatty() and stdout.isatty()
    for stream in (stdin, stdout):  # an undecodable byte or unencodable character must never end the quiz
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    write = safe_writer(stdout)

    def read(prompt: str) -> str:
        if interactive:
            return input(prompt)
        write(prompt)
        line = stdin.readline()
        if not line:
            raise EOFError
        write(line if line.endswith("\n") else line + "\n")  # echo: the transcript reads like a session
        return line.rstrip("\r\n")

    if interactive:
        enable_line_editing()
    width = terminal_width(stdout, env)
    layout_width.set(width)
    return Console(read, write, colour=interactive and use_colour(stdout, env), interactive=interactive,
                   width=width)


def terminal_width(stdout, env: Mapping[str, str] | None = None) -> int:
    """The terminal's columns (``COLUMNS`` when set, else the terminal's size, else 100 for pipes)."""
    env = os.environ if env is None else env
    if str(env.get("COLUMNS", "")).isdigit() and int(env["COLUMNS"]) >= 20:
        return int(env["COLUMNS"])
    try:
        return max(20, os.get_terminal_size(stdout.fileno()).columns)
    except (OSError, AttributeError, ValueError):
        return shutil.get_terminal_size((100, 24)).columns


def safe_writer(stdout) -> Callable[[str], None]:
    """A write-and-flush for ``stdout`` that spells the Unicode maths in ASCII when the stream's
    encoding cannot show it (``PYTHONIOENCODING=ascii``, latin-1): never a UnicodeEncodeError."""
    encoding = getattr(stdout, "encoding", None) or "utf-8"
    plain = not can_encode(encoding)

    def write(text: str) -> None:
        stdout.write(to_ascii(text, encoding) if plain else text)
        stdout.flush()

    return write


def enable_line_editing() -> bool:
    """Arrow keys, line editing and history at the prompt: importing ``readline`` makes ``input()``
    use it (absent on some platforms, e.g. Windows without pyreadline; then the prompt stays plain)."""
    try:
        import readline  # noqa: F401  (the import itself hooks input())
    except ImportError:
        return False
    return True


class Quit(Exception):
    """The student asked to leave (``quit``, end of input or Ctrl-C)."""


@dataclass
class ItemState:
    """The item on screen: its problem, id in the store, hints taken and what has happened so far."""

    choice: Choice
    problem: Problem
    item_id: int
    part: AnswerPart | None = None
    hints: int = 0  # on any part: then the item does not count toward mastery
    failed: bool = False
    done: set[str] = field(default_factory=set)  # parts answered right (kept when resuming)


class QuizSession:
    """One run of the quiz: picks items, asks each part, grades, records, and reports progress."""

    def __init__(self, store: ProgressStore, curriculum: Curriculum, console: Console, services: Services,
                 *, clock: Callable[[], datetime] = utc_now, seed: int | None = None,
                 topic: str | None = None, kind: str | None = None, difficulty: int | None = None,
                 progress_command: str = "problemgen progress") -> None:
        self.store, self.curriculum, self.console, self.services = store, curriculum, console, services
        self.progress_command = progress_command  # what shows this store: with its --db when one was named
        self.clock, self.topic, self.kind, self.difficulty = clock, topic, kind, difficulty
        self.seed = store.base_seed() if seed is None else seed
        self.session_id = 0
        self.current_unit: str | None = None
        self.leave: str | None = None  # the kind just skipped
        self.warmed = False

    # -- top level ----------------------------------------------------------------------------

    def run(self) -> int:
        """Ask items until the student quits or input ends; return the exit code."""
        self._next()  # validates --topic / --kind before anything is written (run_quiz checks them first too)
        self.session_id = self.store.start_session(self.seed, self.topic, self.clock())
        self.console.say("problemgen quiz: type your answer at the > prompt, or one of: "
                         + ", ".join(COMMANDS) + ".", "dim")
        try:
            self._resume()
            choice = self._next()  # chosen again: resuming may have failed, mastered or credited a problem
            while True:
                if choice.offers:
                    choice = self._offer(choice)
                self._ask_choice(choice)
                choice = self._next()
        except Quit as stop:
            code = stop.args[0] if stop.args else 0
        except KeyboardInterrupt:  # Ctrl-C while a problem is drawn: every answer is already stored
            self.console.say()
            code = 130
        self.console.say(f"Progress saved in {self.store.path}. See it with `{self.progress_command}`.")
        return code

    def _next(self) -> Choice:
        return choose_next(self.curriculum, self.store.items(), self.clock(), self.services.available,
                           self.topic, kind=self.kind, difficulty=self.difficulty, leave=self.leave)

    def _states(self) -> dict[str, UnitState]:
        return all_states(self.curriculum, self.store.items(), self.services.available)

    def _ask_choice(self, choice: Choice) -> None:
        """Ask variants of ``choice`` until one ends without ``another``."""
        self._announce(choice)
        before = self._states()
        if choice.example:
            self._example(choice)
            return
        while True:
            item = self._start_item(choice)
            ending = self._ask_item(item)
            if ending != "another":
                break
            self.console.say("Another variant of the same skill:", "dim")
        self._finish(choice, item, ending, before)

    def _finish(self, choice: Choice, item: ItemState, ending: str, before: Mapping[str, UnitState]) -> None:
        self.leave = choice.kind if ending == "skipped" else None
        self._report(choice, item, ending, before)
        if ending == "revealed":
            self._pause()

    def _pause(self) -> None:
        """After a worked solution, let the student read it before the next problem appears."""
        if not self.console.interactive:
            return
        line = self._read_between("Press Enter for the next problem (or type quit) ")
        if line.strip().lower() in ("quit", "exit"):
            raise Quit(0)

    def _read_between(self, prompt: str) -> str:
        """A line read between problems: the end of input quits (0), Ctrl-C quits with 130, as at the
        answer prompt (it exited 0 here)."""
        try:
            return self.console.read(prompt)
        except (EOFError, KeyboardInterrupt) as exc:
            self.console.say()
            raise Quit(130 if isinstance(exc, KeyboardInterrupt) else 0) from None

    def _resume(self) -> None:
        """Show again the variant the student left unfinished, asking only the parts not yet answered (or
        credit it, when every part was already right); what comes next is chosen after this, from the
        history it added to."""
        latest = self.store.last_item()
        last = resumable([latest] if latest else [])
        if last is None or last.kind not in self.services.available or (self.kind and last.kind != self.kind):
            return
        unit = self.curriculum.unit_of_kind(last.kind)
        if unit is None or (self.topic and self.curriculum.resolve_topic(self.topic) is not unit):
            return
        choice = Choice(unit, last.kind, last.difficulty, last.review, last.target, "resume")
        problem = regenerate(last, self.services.generate)
        if problem is None:
            self.console.say(f"Note: the problem left open in {self.store.path} (items row {last.id}: "
                             f"{last.kind}, difficulty {last.difficulty}) cannot be shown by this problemgen; "
                             "it is left as it is.", "warn")
            return
        if not self.store.resume_item(last.id, [p.key for p in problem.parts], self.clock()):
            return
        done = {a.part for a in self.store.answers(last.id) if a.status == "correct"}
        self.console.say()
        self.console.say("Resuming the problem you left:", "dim")
        self._announce(choice)
        before = self._states()
        item = ItemState(choice, problem, last.id, hints=last.hints, done=done)
        self._show(problem)
        self._show_given_hints(item)
        self._finish(choice, item, self._ask_item(item), before)

    def _offer(self, choice: Choice) -> Choice:
        """Wheel-spinning: say so, and let the student pick another way in (Enter keeps going)."""
        skill = self._states()[choice.unit.id].skills[choice.kind]
        self.console.say()
        self.console.say(f"{skill.stuck} tries at this skill without a right answer yet — that happens. "
                         "Another way in may help:", "warn")
        for number, offer in enumerate(choice.offers, 1):
            self.console.say(f"  {number}. {OFFER_TEXT[offer]}")
        self.console.say("  Enter: keep practising as before", "dim")
        while True:
            line = self._read_between("choose> ").strip().lower()
            if line in ("quit", "exit"):
                raise Quit(0)
            if not line:
                return choice
            picked = next((o for n, o in enumerate(choice.offers, 1) if line in (str(n), o)), None)
            if picked:
                return apply_offer(choice, picked, self.curriculum, self.store.items(), self.clock(),
                                   self.services.available)
            self.console.say(f"Type a number from 1 to {len(choice.offers)}, or press Enter.", "dim")

    def _example(self, choice: Choice) -> None:
        """A worked example: a new variant shown with its solution (stored as skipped: it is not an
        answer, and it is never shown again)."""
        problem, item_id = self._file_new(choice, review=False, target=None)
        self.console.say()
        self.console.say("Worked example:", "bold")
        self._show(problem)
        self.console.say(self.services.render(problem, "solution").rstrip())
        self.store.finish_item(item_id, "skipped", self.clock())
        if self.console.interactive:
            self._pause()

    def _announce(self, choice: Choice) -> None:
        unit, state = choice.unit, self._states()[choice.unit.id]
        if choice.notice:
            self.console.say(f"Note: {choice.notice}.", "warn")
        if choice.unit.id != self.current_unit:
            self.current_unit = choice.unit.id
            self.console.say()
            self.console.say(f"Unit: {unit.title} [{unit.id}]", "bold")
            self.console.say(f"Mastery: {unit.rule.describe()}.", "dim")
            self.console.say(f"So far: {progress_phrase(state, unit.rule)}", "dim")
            if self.difficulty is not None and self.difficulty != state.level:  # --difficulty overrides the level
                self.console.say(f"Problems at difficulty {self.difficulty}, as --difficulty asks.", "dim")
        if choice.review:
            self.console.say(f"Review of a mastered unit (Leitner box {state.box}).", "accent")
        if choice.target:
            self.console.say(f"Practising again; watch for this mistake: {describe(choice.target)}.", "warn")
        elif choice.reason == "practice again":
            self.console.say("Practising the same skill again.", "warn")

    def _start_item(self, choice: Choice) -> ItemState:
        problem, item_id = self._file_new(choice, review=choice.review, target=choice.target)
        self.console.say()
        self._show(problem)
        return ItemState(choice, problem, item_id)

    def _file_new(self, choice: Choice, *, review: bool, target: str | None) -> tuple[Problem, int]:
        """Draw a new variant of ``choice`` and store it (drawn again when the page filed it first)."""
        return filed_afresh(lambda: self._draw(choice), lambda problem: self.store.start_item(
            self.session_id, unit=choice.unit.id, kind=choice.kind, seed=problem.seed,
            difficulty=problem.difficulty, variant_id=problem.variant_id, review=review, target=target,
            now=self.clock()))

    def _show(self, problem: Problem) -> None:
        self.console.say(f"── {problem.title} · variant {problem.variant_id} ──", "bold")
        self.console.say(self.services.render(problem, "prompt").rstrip())
        if not self.warmed:
            self.warmed = True
            self.services.warm_up()

    def _draw(self, choice: Choice) -> Problem:
        last = self.store.last_item(choice.kind)
        previous = last and regenerate(last, self.services.generate)
        return draw_variant(choice, self.seed, set(self.store.seen(choice.kind)), self.services.generate,
                            previous)

    # -- one item -----------------------------------------------------------------------------

    def _ask_item(self, item: ItemState) -> str:
        """Ask every part in turn; return how the item ended (correct/wrong/skipped/another/revealed)."""
        parts = item.problem.parts
        for number, part in enumerate(parts, 1):
            if part.key in item.done:
                continue
            label = f"Part {number} of {len(parts)}: " if len(parts) > 1 else "Answer: "
            rows = " (or type it one row per line)" if matrix_rows(part) > 1 else ""
            self.console.say(f"{label}{part.label or part.key} — {self.services.describe(part)}{rows}", "accent")
            item.part = part
            try:
                ending = self._ask_part(item, part)
            except ItemConflict as conflict:
                return self._changed_elsewhere(conflict)
            if ending != "answered":
                return ending
        return "wrong" if item.failed else "correct"

    def _changed_elsewhere(self, conflict: ItemConflict) -> str:
        """The page (or another quiz) on the same progress file changed this item first: say so, go on."""
        self.console.say(f"Not recorded: {conflict} (changed from another window). On to the next problem.",
                         "warn")
        return "closed"

    def _ask_part(self, item: ItemState, part: AnswerPart) -> str:
        """Read lines until the part is answered right (or a command ends the item); return how it ended."""
        while True:
            line = self._read("> ", item)
            if not line.strip():
                continue
            ending, answer = self._command_or_answer(item, part, line)
            if ending is None and answer:
                ending = self._take_answer(item, part, answer)
            if ending:
                return ending

    def _command_or_answer(self, item: ItemState, part: AnswerPart, line: str) -> tuple[str | None, str]:
        """Run ``line`` when it is a command: (the ending it gave, ""); else (None, the line)."""
        command = command_of(line, lambda text: self.services.grade(part, text).status == "correct")
        if command is None:
            return None, line
        return self._command(item, command), ""

    def _take_answer(self, item: ItemState, part: AnswerPart, line: str) -> str | None:
        """Grade ``line``, or the lines it starts: while its brackets are open (a matrix pasted over several
        lines), or when it is one row of a matrix with several rows; those are graded as one answer.
        Return "answered" once the part is right, the ending a command gave, or None to ask again."""
        rows = matrix_rows(part)
        if open_brackets(line):
            ending, typed = self._more_lines(item, part, [line], continuation_prompt)
            text = join_lines(typed) if typed else ""
        elif rows > 1 and one_row(line, len(part.value[0])):
            ending, typed = self._more_lines(item, part, [line], lambda typed: row_prompt(typed, rows))
            text = rows_as_one_line(typed) if typed else ""
        else:
            ending, text = None, line
        if ending or not text:
            return ending
        return "answered" if self._answer(item, part, text) else None

    def _more_lines(self, item: ItemState, part: AnswerPart, typed: list[str],
                    prompt_for: Callable[[list[str]], str | None]) -> tuple[str | None, list[str]]:
        """Ask for more lines of one answer while ``prompt_for(typed)`` gives a prompt; return (None, the
        lines), or (the ending, []) when a command there ended the problem, (None, []) when an empty line
        cancelled. Hint, show and help run as at the > prompt, then the same line is asked for again."""
        while prompt := prompt_for(typed):
            more = self._read(prompt, item)
            if not more.strip():
                self.console.say("Entry cancelled.", "dim")
                return None, []
            ending, text = self._command_or_answer(item, part, more)
            if ending:
                return ending, []
            if text:
                typed.append(text)
        return None, typed

    def _read(self, prompt: str, item: ItemState) -> str:
        try:
            return self.console.read(prompt)
        except (EOFError, KeyboardInterrupt) as exc:
            self.console.say()
            self.store.finish_item(item.item_id, "quit", self.clock())
            raise Quit(130 if isinstance(exc, KeyboardInterrupt) else 0) from None

    def _command(self, item: ItemState, command: str) -> str | None:
        """Run a prompt command; return an ending when it ends the item, None to keep asking."""
        if command == "help":
            self.console.say(COMMAND_HELP)
        elif command == "show":
            self._show(item.problem)
        elif command == "hint":
            self._hint(item)
        elif command == "solution":
            self.console.say("Worked solution:", "bold")
            self.console.say(self.services.render(item.problem, "solution").rstrip())
            self.store.finish_item(item.item_id, "revealed", self.clock())
            return "revealed"
        elif command in ("skip", "another"):
            self.store.finish_item(item.item_id, "skipped" if command == "skip" else "another", self.clock())
            return "skipped" if command == "skip" else "another"
        else:
            self.store.finish_item(item.item_id, "quit", self.clock())
            raise Quit(0)
        return None

    def _answer(self, item: ItemState, part: AnswerPart, line: str) -> bool:
        """Grade one typed line, commit it, then give feedback; True when the part is done."""
        result = self.services.grade(part, line)
        decided = self.store.record_answer(item.item_id, part.key, line, result.status, result.score,
                                           result.mistake, self.clock(), parts=[p.key for p in item.problem.parts])
        item.failed = item.failed or decided == "wrong"
        read_as = getattr(result, "read_as", "")  # how the answer type read a notation that was not plain
        if read_as and result.status != "invalid":
            self.console.say(f"  read as: {read_as}", "dim")
        if result.status == "correct":
            item.done.add(part.key)
            self.console.say("✓ Correct.", "good")
            return True
        if result.status == "invalid":
            self.console.say(f"? I could not read that: {result.feedback}", "warn")
            self.console.say(f"  Expected {self.services.describe(part)}.", "dim")
            return False
        self._wrong_feedback(part, result)
        return False

    def _wrong_feedback(self, part: AnswerPart, result: Any) -> None:
        self.console.say("✗ Wrong.", "bad")
        feedback = result.feedback or ""
        if result.mistake:
            title = describe(result.mistake)
            self.console.say(f"  Known mistake: {title}.", "warn")
            lead = f"{title[:1].upper()}{title[1:]}? "
            feedback = feedback[len(lead):] if feedback.startswith(lead) else feedback  # title said once
        if feedback:
            self.console.say(f"  {feedback}")
        self.console.say("  Try again, or type hint, solution or skip.", "dim")

    def _hint(self, item: ItemState) -> None:
        """The next hint for the part being asked: each part has its own levels (the store keeps them)."""
        level = self.store.record_hint(item.item_id, item.part.key)
        item.hints += 1
        self.console.say(f"Hint {level}: {self.services.hint(item.choice.unit, item.problem, item.part, level)}", "accent")

    def _show_given_hints(self, item: ItemState) -> None:
        """The hints a resumed problem was given before, as they were printed (the practice page shows
        them again after a reload alike); reading them counts nothing."""
        reached = self.store.hints_reached(item.item_id)
        for level, text in self.services.hints_given(item.choice.unit, item.problem, reached):
            self.console.say(f"Hint {level}: {text}", "accent")

    # -- after an item ------------------------------------------------------------------------

    def _report(self, choice: Choice, item: ItemState, ending: str, before: Mapping[str, UnitState]) -> None:
        after = self._states()
        unit, old, new = choice.unit, before[choice.unit.id], after[choice.unit.id]
        if ending == "correct" and item.hints:
            self.console.say("Right, with a hint: this one does not count toward mastery.", "dim")
        if new.mastered and not old.mastered:
            self.console.say(f"★ Unit mastered: {unit.title}. First review on {day_text(new.due)}.", "good")
        elif old.mastered and new.due != old.due:  # this item was a review that counted
            passed = ending == "correct" and not item.hints
            direction = "passed" if passed else "missed: back to box 1"
            self.console.say(f"Review {direction}; next review on {day_text(new.due)}.", "accent")
        elif ending in ("correct", "wrong", "revealed") and not new.mastered:
            self.console.say(f"{unit.title}: {progress_phrase(new, unit.rule)}", "dim")
        for other in self.curriculum.units:
            was = unit_unlocked(other, self.curriculum, before, self.services.available)
            now = unit_unlocked(other, self.curriculum, after, self.services.available)
            if now and not was:
                self.console.say(f"Unlocked: {other.title} [{other.id}].", "good")


# ------------------------------------------------------------------------------- entry points


def run_quiz(topic: str | None = None, db: str | None = None, seed: int | None = None,
             *, kind: str | None = None, difficulty: int | None = None,
             stdin=None, stdout=None, env: Mapping[str, str] | None = None) -> int:
    """``problemgen quiz``: open the store, build the session and run it; return the exit code."""
    env = os.environ if env is None else env
    if seed is not None and not 0 <= seed <= MAX_SEED:
        raise ProblemgenError(f"--seed must be a whole number from 0 to {MAX_SEED}, not {seed}")
    console = terminal_console(stdin, stdout, env)
    curriculum, services, clock = load_curriculum(), default_services(), clock_from_env(env)
    # --topic, --kind and --difficulty are checked on an empty history first: a mistyped one must not
    # create (or open) the progress file
    choose_next(curriculum, [], clock(), services.available, topic, kind=kind, difficulty=difficulty)
    # plain `problemgen progress` would show the default file, not the one --db named
    shown_with = "problemgen progress" + (f" --db {shlex.quote(str(db))}" if db else "")
    with ProgressStore(db or default_db_path(env)) as store:
        session = QuizSession(store, curriculum, console, services, clock=clock, seed=seed, topic=topic,
                              kind=kind, difficulty=difficulty, progress_command=shown_with)
        return session.run()


def run_progress(db: str | None = None, as_json: bool = False, reset: bool = False,
                 *, mistakes: bool = False, stdout=None, env: Mapping[str, str] | None = None) -> int:
    """``problemgen progress``: print (or reset) the stored progress; return the exit code.

    A missing progress file is shown as "nothing yet" and is not created (only the quiz creates it)."""
    import json
    from pathlib import Path

    env = os.environ if env is None else env
    stdout = stdout or sys.stdout
    path = Path(db) if db else default_db_path(env)
    items, answers = [], []
    if _exists(path):
        with ProgressStore(path, read_only=not reset) as store:  # a file that cannot be written is still shown
            if reset:
                store.reset()
            if store.schema_version():  # 0: an empty file, nothing recorded yet
                items, answers = store.items(), store.answers()
    if reset:
        stdout.write(f"Progress reset: {path}\n" if path.exists() else f"Nothing to reset: {path} does not exist.\n")
        return 0
    now = clock_from_env(env)()
    curriculum = load_curriculum()
    rows = summary(curriculum, items, now, _installed_kinds())
    history = mistake_history(items, answers)
    write = safe_writer(stdout)
    if as_json:
        payload = {"db": str(path), "now": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "units": rows,
                   "mistakes": history}
        write(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    elif mistakes:
        write(format_mistakes(history, str(path)))
    else:
        write(format_progress(rows, str(path), now, curriculum.intervals_days))
    return 0


def _exists(path: os.PathLike[str]) -> bool:
    """Whether the progress file is there; a folder this user may not enter, or a loop of links, is one error
    line, as the quiz gives (``Path.exists`` raises PermissionError there, and takes a loop for no file)."""
    try:
        os.stat(path)
        return True
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise ProblemgenError(f"{path}: cannot open the progress store ({exc.strerror})") from None


def _installed_kinds() -> dict[str, tuple[int, ...]]:
    return {k["name"]: tuple(k["difficulties"]) for k in index.load()}


def format_progress(rows: list[dict], path: str, now: datetime, intervals: tuple[int, ...]) -> str:
    """The ``progress`` table: one line per unit, then how mastery and review work."""
    lines = [f"Quiz progress ({path}), {now.strftime('%Y-%m-%d %H:%M')} UTC", ""]
    lines.append(f"  {'unit':<12} {'status':<34} {'answered':>8} {'correct':>8}  next review")
    for row in rows:
        lines.append(f"  {row['id']:<12} {_status_text(row):<34} {row['answered']:>8} {row['correct']:>8}  "
                     f"{(row['next_review'] or '—')[:10]}")
        if row["status"] not in ("locked", "not installed") or row["answered"]:
            lines += [_skill_line(skill) for skill in row["skills"]]
    days = ", ".join(str(d) for d in intervals)
    default = _default_rule_text()
    lines += ["", f"Mastery: {default}; and every skill of the unit (✓) answered right unaided at least once."]
    lines += [f"  except {row['id']}: {row['rule']}." for row in rows if row["rule"] != default]
    lines += [f"Mastered units come back for review after {days} days (Leitner boxes 1–{len(intervals)});",
              "a missed review goes back to box 1. Units unlock when their prerequisites are mastered.", ""]
    return "\n".join(lines)


def _skill_line(skill: dict) -> str:
    """One skill under its unit: ✓ mastered (right unaided at least once), · seen, blank unseen."""
    mark = {"mastered": "✓", "seen": "·"}.get(skill["status"], " ")
    accuracy = "" if skill["accuracy"] is None else f"{skill['correct']}/{skill['answered']} right"
    return f"      {mark} {skill['kind']:<30} {skill['status']:<9} {accuracy}".rstrip()


def format_mistakes(history: list[dict], path: str) -> str:
    """``progress --mistakes``: each misconception shown, how often, where, and if overcome since."""
    lines = [f"Mistakes ({path})", ""]
    if not history:
        return "\n".join(lines + ["  No known misconception shown yet.", ""])
    for row in history:
        state = "overcome since" if row["overcome"] else "not yet overcome"
        times = "once" if row["count"] == 1 else f"{row['count']} times"
        lines.append(f"  {describe(row['mistake'])}: {times}, {state} (last {row['last_at'][:10]})")
        lines.append(f"      in {', '.join(row['kinds'])}")
    lines += ["", "Overcome: a later unaided right answer on the same kind of problem.", ""]
    return "\n".join(lines)


def _status_text(row: dict) -> str:
    if row["status"] in ("mastered", "review due"):
        return f"{row['status']} (box {row['box']})"
    if row["status"] == "locked":
        return f"locked (needs {', '.join(row['requires'])})"
    if row["status"] == "learning":
        solved = sum(skill["status"] == "mastered" for skill in row["skills"])
        return f"learning: {row['progress']}/{row['needed']}, skills {solved}/{len(row['skills'])}"
    return row["status"]


def _default_rule_text() -> str:
    return MasteryRule().describe()
