"""The ``problemgen`` command line: a thin click layer over the library.

Commands are loaded lazily from the table below, so ``problemgen --help`` and ``problemgen list`` do
not pay for numpy, sympy or jinja2. Every command module holds only option parsing and one call into
the library; user errors are ``ProblemgenError`` and become one ``error:`` line here.

Exit codes (the same for every command):
  0  the command ran (for graders: grading ran, whatever the score)
  1  the command ran and found a failure it was asked to report (``--fail-under``, ``check`` failures)
  2  usage error or bad input (unknown option, unreadable file, malformed bank)
  3  the sandbox could not reach the isolation level demanded by ``--min-isolation``, or a root grader
     could not leave uid 0; no student code was run
  4  an output could not be written during the run (disk or quota full, file-size limit, folder made
     read-only or removed); files an earlier run wrote under the same names are kept whole
"""

from __future__ import annotations

import sys

from problemgen import __version__

# name -> (module:attribute, one-line help shown by `problemgen --help` without importing the module)
COMMANDS: dict[str, tuple[str, str]] = {
    "list": ("problemgen.cli.problems:list_command", "List the problem kinds."),
    "show": ("problemgen.cli.problems:show_command", "Show one generated problem (and its solution)."),
    "check": ("problemgen.cli.problems:check_command", "Self-check generated variants of every kind."),
    "worksheet": ("problemgen.cli.worksheet:worksheet_command", "Generate a worksheet, key and answer sheets."),
    "bank": ("problemgen.cli.worksheet:bank_group", "Validate and inspect question banks."),
    "grade": ("problemgen.cli.grade:grade_command", "Grade answer sheets against frozen variants."),
    "whose": ("problemgen.cli.grade:whose_command", "Tell which student a leaked sheet or variant belongs to."),
    "task": ("problemgen.cli.code:task_group", "List and show coding tasks."),
    "grade-code": ("problemgen.cli.code:grade_code_command", "Grade submitted code in the sandbox."),
    "export": ("problemgen.cli.export:export_group", "Graders for platforms, question pools and grade imports for LMSs."),
    "quiz": ("problemgen.cli.quiz:quiz_command", "Practise in the terminal with instant feedback."),
    "progress": ("problemgen.cli.quiz:progress_command", "Show (or reset) your quiz progress."),
    "serve": ("problemgen.cli.serve:serve_command", "Practise in the browser (a local web page)."),
}

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_ISOLATION, EXIT_WRITE = 0, 1, 2, 3, 4


def fast_path(args: list[str]) -> str | None:
    """Output for the commands that must start instantly, or None to go through click.

    ``problemgen --help``, ``--version`` and ``list`` are what people type first and what scripts call
    in loops; importing click alone costs about as much as starting Python. These three are answered
    from precomputed text and the static kind index; anything unusual falls through to click.
    ``tests/test_cli.py`` checks that the fast answers equal click's.
    """
    if args in ([], ["--help"], ["-h"]):
        from problemgen.cli._help import TOP_LEVEL_HELP

        return TOP_LEVEL_HELP
    if args == ["--version"]:
        return f"problemgen, version {__version__}\n"
    if args and args[0] == "list":
        options = _simple_list_options(args[1:])
        if options is not None and not options["json"]:  # --json lists overrides: it draws every kind
            from problemgen.problems.index import listing

            return listing(options["topic"], as_json=options["json"]) + "\n"
    return None


def _simple_list_options(args: list[str]) -> dict | None:
    """Parse ``[--json] [--topic T]`` for the fast ``list``; None for anything else."""
    options = {"topic": None, "json": False}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--json":
            options["json"] = True
        elif arg == "--topic" and rest and not rest[0].startswith("-"):
            options["topic"] = rest.pop(0)
        elif arg.startswith("--topic=") and len(arg) > len("--topic="):
            options["topic"] = arg.split("=", 1)[1]
        else:
            return None
    return options


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the CLI, turning project errors into one clear line.

    Ctrl-C exits 130 with one word wherever it lands. Inside a command click turns it into Abort (and the
    quiz handles its own), but importing click and the commands comes before that: Ctrl-C there printed
    a KeyboardInterrupt traceback. The standard streams are made safe first (closed, a narrow encoding,
    a reader that went away: :mod:`problemgen.cli.streams`)."""
    from problemgen.cli import streams

    streams.prepare()
    try:
        code = _main(argv)
        sys.stdout.flush()  # what is still buffered fails here, inside main, not in the interpreter's exit
    except KeyboardInterrupt:
        sys.stderr.write("\naborted\n")  # as click's Abort: the ^C the terminal echoed ends its line
        code = 130
    except (BrokenPipeError, streams.ReaderGone):
        if not streams.stdout_is_broken():
            raise  # another pipe (a sandbox's, say): a real failure, not a reader that stopped reading
        code = streams.quit_broken_pipe()
    except OSError as exc:
        if not streams.stdout_full(exc):
            raise
        code = streams.quit_stdout_full(exc)
    sys.exit(code)


def _main(argv: list[str] | None) -> int:
    """The exit code of one run: the fast ``--help``/``list`` path when it applies, else click."""
    from problemgen.errors import ProblemgenError

    args = sys.argv[1:] if argv is None else list(argv)
    try:
        text = fast_path(args)
    except ProblemgenError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    if text is not None:
        sys.stdout.write(text)
        return EXIT_OK
    return run_click(args)


def run_click(args: list[str]) -> int:
    """The ordinary path: click parses and dispatches; returns the exit code."""
    import click

    from problemgen.cli import streams
    from problemgen.cli.app import cli
    from problemgen.errors import ProblemgenError, WriteFailed
    from problemgen.safewrite import out_of_room  # the outputs' writers say so in their words; this is the net
    from problemgen.outputs import no_temporary_folder  # likewise: tempfile's error where no folder is usable

    try:
        result = cli.main(args=args, prog_name="problemgen", standalone_mode=False)
    except WriteFailed as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_WRITE
    except ProblemgenError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    except click.ClickException as exc:  # a usage error or a file click checked: one line, as ours
        sys.stderr.write(f"error: {_one_line(exc)}\n")
        return EXIT_USAGE
    except click.exceptions.Abort:
        sys.stderr.write("aborted\n")
        return 130
    except OSError as exc:
        no_temporary = no_temporary_folder(exc)
        if no_temporary:  # before any work: the fork server, staging and pdflatex need one first
            sys.stderr.write(f"error: {no_temporary}\n")
            return EXIT_USAGE
        if exc.filename is None and streams.stdout_full(exc):
            return streams.quit_stdout_full(exc)  # click's echo into a full file: its error names no file
        if not out_of_room(exc):
            raise
        where = f" {exc.filename}" if exc.filename else ""  # a write no module foresaw: still one line
        sys.stderr.write(f"error: cannot write{where} ({exc.strerror})\n")
        return EXIT_WRITE
    # In non-standalone mode click returns ctx.exit()'s code instead of exiting.
    return result if isinstance(result, int) else EXIT_OK


def _one_line(exc) -> str:
    """Click's message on one line, with where to read more (click itself prints a four-line block)."""
    message = " ".join(exc.format_message().split())
    context = getattr(exc, "ctx", None)
    return f"{message} (see '{context.command_path} --help')" if context is not None else message


def __getattr__(name: str):
    """``problemgen.cli.cli`` (the click group) is built on first use, keeping the fast path click-free."""
    if name == "cli":
        from problemgen.cli.app import cli

        return cli
    raise AttributeError(name)
