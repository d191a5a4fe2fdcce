"""``problemgen grade``: option parsing only; grading is ``problemgen.sheets.grading`` (class mode ``problemgen.classes.sheet_class``), output ``problemgen.sheets.reports``."""

from __future__ import annotations

from pathlib import Path

import click

from problemgen.classes import sheet_class as classgrade
from problemgen.classes.layouts import make_layout
from problemgen.classes.runner import ClassRun
from problemgen.classes.summary import render_summary
from problemgen.cli.downloads import layout_options
from problemgen.cli.progress import PROGRESS_OPTION, class_progress
from problemgen.errors import ProblemgenError
from problemgen.sheets import grading, reports
from problemgen.wording import counted


@click.command("grade")
@click.argument("answers", type=click.Path(path_type=Path))
@click.option("--variant", "variant_path", type=click.Path(path_type=Path),
              help="The sheet's frozen variant.json (grade one sheet).")
@click.option("--variants", "class_dir", type=click.Path(path_type=Path),
              help="Class directory from `problemgen worksheet --roster` (grade a directory of sheets).")
@click.option("--overrides", "overrides_file", type=click.Path(path_type=Path),
              help="Class mode: TOML of [[override]] tables (student, part, score 0-1, reason), "
                   "applied or listed as not applied.")
@click.option("--format", "fmt", type=click.Choice(reports.FORMATS), default="text", show_default=True,
              help="Report format (class mode: the per-student reports).")
@click.option("-o", "--output", type=click.Path(path_type=Path),
              help="Report file (default: stdout); in class mode the output directory (default: grades).")
@click.option("--fail-under", type=click.FloatRange(0, 1), help="Exit 1 when the score (0-1) is below this.")
@click.option("--jobs", type=click.IntRange(min=1), help="Worker processes (class mode; default: automatic, 1 below 200 students or on busy CPUs).")
@layout_options
@PROGRESS_OPTION
def grade_command(answers, variant_path, class_dir, overrides_file, fmt, output, fail_under, jobs, layout_name, roster,
                  match_by, id_column, progress):
    """Grade ANSWERS (one answers.toml) against its variant, or a SUBMISSIONS_DIR against a class.

    Class mode reads <student>.toml or <student>/answers.toml (names matched ignoring case) for every
    student of CLASS_DIR and writes gradebook.csv (one row per roster student and per entry, with a
    status: graded, missing, unreadable, variant-mismatch: belongs to <id>, duplicate-submission,
    refused: <reason>; flags for possible copies; overrides), summary.txt/.md/.json (what needs
    attention first, then scores, item statistics and misconceptions), items.csv and
    reports/<student>.<ext>. It prints the summary (JSON with --format json). Run again into the
    same OUT, it removes (and names on stderr) a report of the same format that the new run did not
    write, e.g. of a sheet withdrawn since; other files there are left as they are.
    OUT may not lie inside SUBMISSIONS_DIR or CLASS_DIR. A run holds OUT (and reads CLASS_DIR)
    until it ends: a second run into the same OUT stops at once, naming the first.

    A course platform's download is read as it comes with --layout canvas (files
    <name>_<user id>_<file id>_<file>, matched by the roster column canvas_id), moodle (<Full
    Name>_<participant id>_assignsubmission_file folders or files, matched by the roster's name, or by
    participant ids in a --match-by column of numbers) or classroom (<prefix>-<login> repositories,
    matched by the column github), with --roster roster.csv. Rows keep the roster ids; a name that fits
    no student or two is a refused row, two entries of one student a duplicate-submission.

    An override rescores one part of a graded sheet; one for a student without a graded sheet
    (missing, refused, duplicate) or for a part the sheet lacks is listed as not applied, at the top
    of the summary and on stderr; one for a student not on the roster is an error (exit 2).

    An answer is wrong only when it was read unambiguously and its value is wrong. Anything not read
    unambiguously is invalid: it costs nothing, and the message says what was read, where reading
    stopped and one way to write it. Sheet values and quiz lines are read alike: fractions, .5, −0.5,
    √2, π, 2.5×10^3, numpy/MATLAB matrices, (B, L, d) or B x L x d, T/F masks, (b) or option b.

    Each part is correct, wrong or invalid. Blank answers are wrong ("no answer"); matrices earn the fraction of entries within tolerance, multiple choice
    right minus wrong picks; a sheet that cannot be read at all scores 0 and says why. Shapes: names
    match by name, a product of names as a product (h*d_k = d_k*h); a number may stand for a name whose
    value the problem gave (512 or 8*d_k for h*d_k with h = 8, d_k = 64); a different name of the same
    size is wrong (d_v for d_k).

    \b
    Example:
      problemgen grade out/answers.toml --variant out/variant.json
      problemgen grade answers.toml --variant variant.json --format junit -o report.xml --fail-under 0.6
      problemgen grade submissions/ --variants class/ -o grades/ --format json --jobs 2
      problemgen grade canvas_download/ --variants class/ -o grades/ --layout canvas --roster roster.csv
      problemgen grade moodle_download/ --variants class/ -o grades/ --layout moodle --roster roster.csv

    Exit codes: 0 grading ran (whatever the score), 1 score below --fail-under, 2 usage error or bad input,
    4 an output could not be written (a full disk: the earlier gradebook or report is kept whole).
    """
    classgrade.check_grade_paths(answers, variant_path, class_dir, output, class_only=overrides_file)
    layout = make_layout(layout_name, roster, match_by, id_column)
    if layout is not None and class_dir is None:
        raise ProblemgenError("--layout reads a class's download: give --variants CLASS_DIR")
    if class_dir is None:
        report = grading.grade_file(answers, variant_path)
        _emit(reports.render(report, fmt), output)
        click.get_current_context().exit(1 if fail_under is not None and report.score < fail_under else 0)
    if fail_under is not None:
        raise ProblemgenError("--fail-under applies to one sheet, not to a class run")
    with class_progress(progress) as advance:
        run = classgrade.grade_class(answers, class_dir, output or Path("grades"), fmt, jobs=jobs,
                                     overrides_file=overrides_file, progress=advance, layout=layout)
    click.echo(render_summary(run.summary, "json" if fmt == "json" else "text"), nl=False)
    echo_run_notes(run, output or Path("grades"))


def echo_run_notes(run: ClassRun, out: Path) -> None:
    """What a class run says on stderr after its summary, for ``grade`` and ``grade-code`` alike: each
    warning of the summary on a ``warning:`` line (an operator reads stderr), then what was written."""
    for line in run.summary["overrides_not_applied"]:
        click.echo(f"warning: override for {line}", err=True)
    for line in run.summary["warnings"]:
        click.echo(f"warning: {line}", err=True)
    click.echo(f"wrote {counted(len(run.written) + run.reports, 'file')} to {out}", err=True)


@click.command("whose")
@click.argument("what")
@click.option("--class", "class_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Class directory from `problemgen worksheet --roster`.")
def whose_command(what, class_dir):
    """Tell which student a leaked question, a stray sheet or a variant id belongs to.

    WHAT is a file (an answer sheet, a worksheet or key in Markdown/LaTeX, or any handout or key file,
    matched by its printed variant id or its exact bytes) or a variant id.

    \b
    Example:
      problemgen whose found_on_forum.md --class class/
      problemgen whose mixed_exam-6df762af9efc --class class/

    Exit codes: 0 found, 1 no student of the class matches, 2 bad input.
    """
    from problemgen.classes.whose import whose

    owner = whose(what, class_dir)
    click.echo(str(owner) if owner else f"{what}: matches no student of {class_dir}")
    click.get_current_context().exit(0 if owner else 1)


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        return click.echo(text, nl=False)
    from problemgen.safewrite import write_file

    write_file(output, text, durable=True)  # a full disk keeps an earlier report whole, never a truncated one
