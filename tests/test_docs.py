"""Docs the tests keep true: every option has help, and the README's facts are read back from the code.

The README states counts (kinds, tasks), lists (topics, report formats, commands), the exit codes and
the layout of the package. Each is parsed out of README.md here and compared with what the code
discovers, so adding a kind, a task, a format or a command fails this file until the README says so.
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from problemgen import cli as cli_package
from problemgen.cli import COMMANDS
from problemgen.cli.app import cli
from problemgen.code.tasks import all_tasks
from problemgen.problems import index
from problemgen.sheets.reports import FORMATS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                "sixteen seventeen eighteen nineteen twenty").split()  # fmt: skip


def commands():
    """(path, command) for every command and sub-command."""
    found = []
    for name in COMMANDS:
        command = cli.get_command(click.Context(cli), name)
        found.append(((name,), command))
        if isinstance(command, click.Group):
            found += [((name, sub), command.get_command(click.Context(command), sub))
                      for sub in command.list_commands(click.Context(command))]  # fmt: skip
    return found


@pytest.mark.parametrize("path,command", commands(), ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_every_option_has_help(path, command):
    """(That every command's help has an ``Example`` block is tests/test_cli.py's check.)"""
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            assert (param.help or "").strip(), f"problemgen {' '.join(path)}: option {param.opts[0]} has no help"


def test_readme_never_states_a_stale_count_of_kinds():
    """The README names no fixed number of kinds (a new kind must not need a README edit); any count
    it does state, e.g. "51 kinds", must be the registry's."""
    stated = [int(n) for n in re.findall(r"\b(\d+) (?:problem )?kinds\b", README)]
    assert all(n == len(index.load()) for n in stated), f"README states {stated} kinds; there are {len(index.load())}"


def test_readme_counts_the_tasks():
    stated = re.search(r"\b([A-Z][a-z]+) tasks \(", README)
    assert stated, "README: the `N tasks (...)` sentence is gone"
    assert NUMBER_WORDS.index(stated.group(1).lower()) == len(all_tasks())


def test_readme_lists_the_topics():
    stated = re.search(r"Topics: (.*?) \(", README, re.S)
    assert stated, "README: the `Topics: ...` sentence is gone"
    assert sorted(re.findall(r"`([a-z_]+)`", stated.group(1))) == index.topic_modules()


def test_readme_lists_the_report_formats():
    stated = re.search(r"Report formats \(`--format`\): (.*?)\.", README)
    assert stated, "README: the `Report formats (`--format`): ...` sentence is gone"
    assert tuple(re.findall(r"`([a-z]+)`", stated.group(1))) == FORMATS


def test_readme_lists_the_commands():
    stated = re.search(r"Commands: (.*?)\.\n", README, re.S)
    assert stated, "README: the `Commands: ...` sentence is gone"
    assert re.findall(r"`([a-z-]+)`", stated.group(1)) == list(COMMANDS)


def test_readme_exit_codes_match_the_cli():
    table = dict(re.findall(r"^\| ([0-9]) \| (.+?) \|$", README, re.M))
    documented = dict(re.findall(r"^  ([0-9])  (.+)$", cli_package.__doc__, re.M))
    constants = {cli_package.EXIT_OK, cli_package.EXIT_FAILURE, cli_package.EXIT_USAGE, cli_package.EXIT_ISOLATION,
                 cli_package.EXIT_WRITE}
    assert {int(code) for code in table} == {int(code) for code in documented} == constants
    for code, meaning in documented.items():
        first_words = " ".join(meaning.split()[:3])
        assert first_words in table[code], f"exit code {code}: README says {table[code]!r}, the CLI {meaning!r}"


def test_readme_architecture_names_paths_that_exist():
    block = README.split("## Architecture", 1)[1].split("```", 2)[1]
    paths = re.findall(r"^((?:problemgen|reference|templates|question_banks|tests|bench)/[\w/.]*)", block, re.M)
    assert paths, "README: no paths in the Architecture block"
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, f"README's Architecture names paths that do not exist: {missing}"
