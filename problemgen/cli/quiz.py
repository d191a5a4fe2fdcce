"""`problemgen quiz` and `problemgen progress`: option parsing over problemgen.practice.quiz."""

from __future__ import annotations

import sys

import click

from problemgen.practice.store_checks import MAX_SEED

DB_HELP = "Progress file (default: problemgen/progress.sqlite3 in your user data directory)."


@click.command("quiz")
@click.option("--topic", metavar="UNIT", help="Practise one unit (e.g. attention, masks); a locked one with a notice.")
@click.option("--kind", metavar="KIND", help="Practise one problem kind (e.g. masks.causal).")
@click.option("--difficulty", type=click.IntRange(1, 3), help="Fix the difficulty (default: adapts to you).")
@click.option("--db", metavar="PATH", help=DB_HELP)
@click.option("--seed", type=click.IntRange(0, MAX_SEED),  # what SQLite's INTEGER holds
              help="Seed for new variants (replays a session exactly).")
def quiz_command(topic: str | None, kind: str | None, difficulty: int | None, db: str | None,
                 seed: int | None) -> None:
    """Practise in the terminal: one problem at a time, instant feedback, mastery gates.

    \b
    A unit is mastered by a run of unaided right answers that has covered every
    skill (problem kind) of the unit; after 8 tries at a skill without success
    the quiz offers a worked example, an easier level or the prerequisite unit.
    At the > prompt type your answer (arrow keys and history work; a matrix may
    be typed one row per line, or pasted over several lines: while a bracket is
    open the answer goes on at ...>), or a command (also at those prompts; words
    after it are ignored):
      hint      a hint; ask again for a more specific one (hinted answers do not count toward mastery)
      solution  the worked solution of this variant (ends the item; Enter to go on)
      show      print the current problem again
      skip      leave this problem and, for now, this skill
      another   a different, never-seen variant of the same skill
      quit      save and leave; the next run resumes the same problem (after a
                wrong answer: the same skill, with a new variant)
      help      list the commands
    With piped input, one answer (or command) is read per line and plain text is printed.

    \b
    Example:
      problemgen quiz
      problemgen quiz --topic masks --db ./me.sqlite3
      problemgen quiz --kind shapes.trace --difficulty 3
      printf 'hint\\nsolution\\nquit\\n' | problemgen quiz --db /tmp/demo.sqlite3 --seed 7
    """
    from problemgen.practice.quiz import run_quiz

    sys.exit(run_quiz(topic=topic, db=db, seed=seed, kind=kind, difficulty=difficulty))


@click.command("progress")
@click.option("--db", metavar="PATH", help=DB_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.option("--mistakes", is_flag=True, help="List the misconceptions you showed, how often, and if overcome.")
@click.option("--reset", is_flag=True, help="Delete all quiz history in the progress file (asks first).")
@click.option("--yes", is_flag=True, help="Do not ask before --reset.")
def progress_command(db: str | None, as_json: bool, mistakes: bool, reset: bool, yes: bool) -> None:
    """Show your quiz progress: units, the skills of each (mastered, seen, unseen)
    with accuracy, and when each review is due.

    \b
    Example:
      problemgen progress
      problemgen progress --mistakes
      problemgen progress --json --db ./me.sqlite3
      problemgen progress --reset --yes --db ./me.sqlite3
    """
    from problemgen.practice.quiz import run_progress

    if reset and not yes:
        click.confirm("Delete all quiz progress?", abort=True)
    sys.exit(run_progress(db=db, as_json=as_json, reset=reset, mistakes=mistakes))
