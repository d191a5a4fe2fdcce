"""The options of ``grade`` and ``grade-code`` that read a course platform's download, defined once for both.

The work is ``problemgen.classes.layouts``; here only the options and their help.
"""

from __future__ import annotations

from pathlib import Path

import click

from problemgen.classes.layouts import LAYOUTS, PLAIN

_OPTIONS = (
    click.option("--layout", "layout_name", type=click.Choice(LAYOUTS), default=PLAIN, show_default=True,
                 help="How the submissions are named: plain (<student id>.toml / .py or a folder), or a "
                      "platform's download as it comes: canvas, moodle, classroom (needs --roster)."),
    click.option("--roster", "roster", type=click.Path(dir_okay=False, path_type=Path),
                 help="With --layout: the roster CSV, with the column that maps the platform's students to "
                      "roster ids."),
    click.option("--match-by", "match_by", metavar="COLUMN",
                 help="With --layout: the roster column holding the platform's identity (default: canvas_id "
                      "for canvas, github for classroom, the name for moodle; a column of numbers is Moodle "
                      "participant ids)."),
    click.option("--id-column", "id_column", metavar="COLUMN",
                 help="With --layout: the roster's id column (default: id, student_id, student or SID)."),
)


def layout_options(command):
    """Add the four download options to a click command (its function takes them as keywords)."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command

