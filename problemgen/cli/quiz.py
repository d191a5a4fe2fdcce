"""`problemgen quiz` and `problemgen progress`: option parsing over problemgen.practice.quiz."""

from __future__ import annotations

import sys

import click

DB_HELP = "Progress file (default: problemgen/progress.sqlite3 in your user data directory)."


@click.command("quiz")
@click.option("--topic", metavar="UNIT", help="Practise one unit (e.g. attention, masks); it must be unlocked.")
@click.option("--db", metavar="PATH", help=DB_HELP)
@click.option("--seed", type=click.IntRange(min=0), help="Seed for new variants (replays a session exactly).")
def quiz_command(topic: str | None, db: str | None, seed: int | None) -> None:
    """Practise in the terminal: one problem at a time, instant feedback, mastery gates.

    \b
    At the > prompt type your answer, or a command:
      hint      a hint; ask again for a more specific one (hinted answers do not count toward mastery)
      solution  the worked solution of this variant (ends the item)
      skip      go to the next problem
      another   a different, never-seen variant of the same skill
      quit      save and leave; run the quiz again to resume
      help      list the commands
    With piped input, one answer (or command) is read per line and plain text is printed.

    \b
    Example:
      problemgen quiz
      problemgen quiz --topic masks --db ./me.sqlite3
      printf 'hint\\nsolution\\nquit\\n' | problemgen quiz --db /tmp/demo.sqlite3 --seed 7
    """
    from problemgen.practice.quiz import run_quiz

    sys.exit(run_quiz(topic=topic, db=db, seed=seed))


@click.command("progress")
@click.option("--db", metavar="PATH", help=DB_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.option("--reset", is_flag=True, help="Delete all quiz history in the progress file (asks first).")
@click.option("--yes", is_flag=True, help="Do not ask before --reset.")
def progress_command(db: str | None, as_json: bool, reset: bool, yes: bool) -> None:
    """Show your quiz progress: units, mastery, and when each review is due.

    \b
    Example:
      problemgen progress
      problemgen progress --json --db ./me.sqlite3
      problemgen progress --reset --yes --db ./me.sqlite3
    """
    from problemgen.practice.quiz import run_progress

    if reset and not yes:
        click.confirm("Delete all quiz progress?", abort=True)
    sys.exit(run_progress(db=db, as_json=as_json, reset=reset))
