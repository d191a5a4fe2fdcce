"""The ``problemgen`` command line: a thin click layer over the library.

Commands are loaded lazily from the table below, so ``problemgen --help`` and ``problemgen list`` do
not pay for numpy, sympy or jinja2. Every command module holds only option parsing and one call into
the library; user errors are ``ProblemgenError`` and become one ``error:`` line here.

Exit codes (the same for every command):
  0  the command ran (for graders: grading ran, whatever the score)
  1  the command ran and found a failure it was asked to report (``--fail-under``, ``check`` failures)
  2  usage error or bad input (unknown option, unreadable file, malformed bank)
  3  the sandbox could not reach the isolation level demanded by ``--min-isolation``
"""

from __future__ import annotations

import importlib
import sys

import click

from problemgen import __version__

# name -> (module:attribute, one-line help shown by `problemgen --help` without importing the module)
COMMANDS: dict[str, tuple[str, str]] = {
    "list": ("problemgen.cli.problems:list_command", "List the problem kinds."),
    "show": ("problemgen.cli.problems:show_command", "Show one generated problem (and its solution)."),
    "check": ("problemgen.cli.problems:check_command", "Self-check generated variants of every kind."),
    "worksheet": ("problemgen.cli.worksheet:worksheet_command", "Generate a worksheet, key and answer sheets."),
    "bank": ("problemgen.cli.worksheet:bank_group", "Validate and inspect question banks."),
    "grade": ("problemgen.cli.grade:grade_command", "Grade answer sheets against frozen variants."),
    "task": ("problemgen.cli.code:task_group", "List and show coding tasks."),
    "grade-code": ("problemgen.cli.code:grade_code_command", "Grade submitted code in the sandbox."),
    "quiz": ("problemgen.cli.quiz:quiz_command", "Practise in the terminal with instant feedback."),
    "progress": ("problemgen.cli.quiz:progress_command", "Show (or reset) your quiz progress."),
}

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_ISOLATION = 0, 1, 2, 3


class LazyGroup(click.Group):
    """A click group whose subcommands are imported only when invoked."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module_name, _, attribute = COMMANDS[name][0].partition(":")
        return getattr(importlib.import_module(module_name), attribute)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_text) for name, (_, help_text) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="problemgen")
def cli() -> None:
    """Practice problems and automated grading for transformer fundamentals.

    \b
    Examples:
      problemgen list
      problemgen show attention.weights --seed 7 --solution
      problemgen worksheet question_banks/attention_basics.toml -o out/
      problemgen grade out/key.toml --variant out/variant.json --format json
      problemgen quiz --topic attention

    \b
    Exit codes: 0 ran, 1 ran and found a failure it was asked to report,
    2 usage error or bad input, 3 sandbox isolation below --min-isolation.
    """


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the CLI, turning project errors into one clear line."""
    from problemgen.core import ProblemgenError

    try:
        result = cli.main(args=argv, prog_name="problemgen", standalone_mode=False)
    except ProblemgenError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_USAGE)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(EXIT_OK)
    # In non-standalone mode click returns ctx.exit()'s code instead of exiting.
    sys.exit(result if isinstance(result, int) else EXIT_OK)
