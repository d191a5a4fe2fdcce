"""`problemgen task ...` and `problemgen grade-code`: option parsing only; the work is in problemgen.code.tasks.listing and problemgen.classes.grade_code."""

from __future__ import annotations

from pathlib import Path

import click

from problemgen.sheets.reports import FORMATS
from problemgen.code.sandbox.isolation import LEVELS
from problemgen.cli.downloads import layout_options
from problemgen.cli.progress import PROGRESS_OPTION, class_progress

EXIT_ISOLATION = 3


@click.group("task")
def task_group() -> None:
    """List the coding tasks and show their specs and starter files.

    \b
    Example:
      problemgen task list
      problemgen task show softmax --starter softmax.py
      problemgen task notebook softmax -o softmax.ipynb
    """


@task_group.command("list")
def list_command() -> None:
    """List the coding tasks with a one-line summary each.

    \b
    Example:
      problemgen task list
    """
    from problemgen.code.tasks.listing import list_tasks

    click.echo(list_tasks(), nl=False)


@task_group.command("show")
@click.argument("name")
@click.option("--starter", type=click.Path(dir_okay=False, path_type=Path), help="Also write the starter file to FILE.")
def show_command(name: str, starter: Path | None) -> None:
    """Show the spec and public examples of task NAME.

    \b
    Example:
      problemgen task show scaled_dot_product_attention --starter attention.py
    """
    from problemgen.code.tasks.listing import show_task, write_starter

    click.echo(show_task(name), nl=False)
    if starter is not None:
        click.echo(write_starter(name, starter), nl=False, err=True)


@task_group.command("notebook")
@click.argument("names", nargs=-1)
@click.option("--recipe", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="TOML file with `title` and `tasks = [...]`: several tasks in one notebook.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Notebook file to write (default: NAME.ipynb).")
def notebook_command(names: tuple[str, ...], recipe: Path | None, output: Path | None) -> None:
    """Write a starter notebook for one or more tasks: spec, starter cell, public examples, check cell.

    The check cell runs the task's public checks on the code above in problemgen's sandbox and prints
    the feedback `grade-code --public-only` gives. Submitted notebooks are graded by `grade-code`.

    \b
    Example:
      problemgen task notebook softmax
      problemgen task notebook layer_norm rms_norm feed_forward -o norms_and_ffn.ipynb
      problemgen task notebook --recipe week3.toml -o week3.ipynb
    """
    from problemgen.code.tasks.notebooks import read_recipe, write_notebook

    title, tasks = read_recipe(recipe) if recipe else (None, list(names))
    if not tasks or (recipe and names):
        raise click.UsageError("name the tasks or give --recipe, not both")
    click.echo(write_notebook(tasks, output or Path(f"{tasks[0]}.ipynb"), title), nl=False, err=True)


@click.command("grade-code")
@click.argument("submission", type=click.Path(exists=True, path_type=Path))
@click.option("--task", "task_name", required=True, help="Task name (see `problemgen task list`).")
@click.option("--public-only", is_flag=True, help="Run only the public examples and property checks.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True, help="Report format.")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Report file (one submission) or output directory (a class).")
@click.option("--jobs", type=click.IntRange(1, 64), default=1, show_default=True, help="Submissions graded in parallel.")
@click.option("--min-isolation", type=click.Choice(LEVELS), default="process", show_default=True,
              help="Refuse to run student code below this sandbox level.")
@click.option("--fail-under", type=click.FloatRange(0, 1), help="Exit 1 when a score is below this fraction.")
@click.option("--timeout", type=click.FloatRange(0.1, 600), default=5.0, show_default=True, help="Seconds per test (wall clock).")
@layout_options
@PROGRESS_OPTION
def grade_code_command(submission: Path, task_name: str, public_only: bool, fmt: str, output: Path | None,
                       jobs: int, min_isolation: str, fail_under: float | None, timeout: float, layout_name: str,
                       roster: Path | None, match_by: str | None, id_column: str | None,
                       progress: bool | None) -> None:  # fmt: skip
    """Grade SUBMISSION (a .py or .ipynb file, or a directory with one entry per student) in the sandbox.

    Hidden tests are drawn from $PROBLEMGEN_GRADER_SECRET (fresh random ones when unset). A class
    directory writes OUT/gradebook.csv, OUT/summary.txt/.md/.json, OUT/items.csv and OUT/reports/ (a
    report of the same format left there by an earlier run for an entry this run has none for is
    removed and named under the summary's warnings, which stderr repeats as `warning:` lines); a
    second run into an OUT that a run is writing stops at once, naming it. JSON reports carry `score`
    and the `isolation` level reached.

    A course platform's download is read as it comes with --layout canvas, moodle or classroom (a
    `gh classroom clone student-repos` folder) and --roster roster.csv, whose column --match-by
    (default canvas_id, the name, github) maps the platform's students to roster ids: rows are the
    roster's students (missing when they handed in nothing), then the entries that are nobody's.

    \b
    Example:
      problemgen grade-code alice.py --task softmax --format json
      problemgen grade-code submissions/ --task multi_head_attention -o grades/ --jobs 2 --min-isolation seccomp
      problemgen grade-code submissions/ --task softmax -o grades/ --progress 2> grading.log
      problemgen grade-code hw1-submissions/ --task softmax -o grades/ --layout classroom --roster roster.csv

    \b
    Exit codes: 0 graded, 1 a score below --fail-under, 2 usage or bad input,
    3 the sandbox cannot run student code as demanded (isolation below
    --min-isolation, a root grader that cannot leave uid 0, no usable /proc, a
    process limit too low; nothing more is run), 4 an output could not be written.
    """
    from problemgen.code.sandbox import IsolationError, Limits
    from problemgen.classes.grade_code import GradeRequest, grade_code
    from problemgen.classes.layouts import make_layout
    from problemgen.cli.grade import echo_run_notes

    layout = make_layout(layout_name, roster, match_by, id_column)
    try:
        with class_progress(progress) as advance:
            request = GradeRequest(submission, task_name, public_only, fmt, output, jobs, min_isolation, fail_under,
                                   Limits(case_timeout=timeout), progress=advance, layout=layout)  # fmt: skip
            graded = grade_code(request)
    except IsolationError as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(EXIT_ISOLATION) from exc
    click.echo(graded.text, nl=False)
    if graded.run is not None:
        echo_run_notes(graded.run, output)
    click.get_current_context().exit(graded.exit_code)
