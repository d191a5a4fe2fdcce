"""``problemgen export …``: one subcommand per module of ``problemgen.exports`` that defines ``EXPORT``.

The commands are built from each export's declared options, so adding a platform needs no change here.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import click

_TYPES = {
    "text": lambda o: click.STRING,
    "path": lambda o: click.Path(path_type=Path),
    "file": lambda o: click.Path(exists=True, dir_okay=False, path_type=Path),
    "dir": lambda o: click.Path(exists=True, file_okay=False, path_type=Path),
    "choice": lambda o: click.Choice(o.choices),
    "float": lambda o: click.FloatRange(0.1, 600),
}


def _option(spec) -> click.Option:
    """The click option of an export's declared option.

    A default is passed only when there is one: click treats an explicit ``default=None`` as a value
    given, and would then skip the ``required`` check (a missing ``-o`` reached the export as None)."""
    names = [spec.name, spec.dest] + ([spec.short] if spec.short else [])
    if spec.kind == "flag":
        return click.Option(names, is_flag=True, default=bool(spec.default), help=spec.help)
    default = {} if spec.default is None else {"default": spec.default, "show_default": True}
    return click.Option(names, type=_TYPES[spec.kind](spec), required=spec.required, help=spec.help, **default)


def _command(export) -> click.Command:
    def callback(**options):
        click.echo(export.run(**options), nl=False, err=True)

    return click.Command(export.name, callback=callback, params=[_option(o) for o in export.options],
                         help=inspect.cleandoc(export.help), short_help=export.summary)


class ExportGroup(click.Group):
    """The export subcommands, discovered from ``problemgen.exports``."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from problemgen.exports import all_exports

        return list(all_exports())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        from problemgen.exports import all_exports

        export = all_exports().get(name)
        return _command(export) if export else None


@click.group("export", cls=ExportGroup)
def export_group() -> None:
    """Package a grader for the platform a course already grades on, or question pools for an LMS.

    Each grader export writes an INSTRUCTOR.md inside saying how to upload it, what students submit
    and where the secret lives; the LMS exports write one file of question pools; canvas-grades and
    moodle-grades write a class run's grades as the platform's gradebook import file.

    \b
    Example:
      problemgen export gradescope --class class/ --roster roster.csv -o autograder.zip
      PROBLEMGEN_GRADER_SECRET=... problemgen export github-classroom --task softmax -o softmax-template/
      PROBLEMGEN_GRADER_SECRET=... problemgen export prairielearn --task softmax -o questions/softmax/
      problemgen export moodle --bank masking -n 5 -o masking.xml
      problemgen export canvas-grades --gradebook grades/gradebook.csv --roster roster.csv \\
          --assignment HW1 --assignment-id 48213 -o hw1.csv
    """
