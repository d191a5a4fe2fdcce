"""The command line as users meet it: every command documented with examples, clean errors, exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from problemgen import __version__
from problemgen.cli import COMMANDS, fast_path
from problemgen.cli.app import cli, top_level_help


def leaf_commands():
    """(path, command) for every command and sub-command reachable from the top-level table."""
    found = []
    for name in COMMANDS:
        command = cli.get_command(click.Context(cli), name)
        found.append(((name,), command))
        if isinstance(command, click.Group):
            for sub in command.list_commands(click.Context(command)):
                found.append(((name, sub), command.get_command(click.Context(command), sub)))
    return found


@pytest.mark.parametrize("path,command", leaf_commands(), ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_every_command_has_help_with_a_pasteable_example(path, command):
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Example" in result.output, f"`problemgen {' '.join(path)} --help` shows no example"
    example = result.output.split("Example", 1)[1].split("\n", 1)[1]
    first = example.lstrip().splitlines()[0]
    assert first.startswith("problemgen " + path[0]) or "=" in first.split()[0], (
        f"`problemgen {' '.join(path)} --help`: the example is rewrapped into prose (a missing \\b?): {first!r}")
    # pasteable anywhere, not only in a clone: shipped banks are named, not given as repository paths
    assert "question_banks/" not in example, f"`problemgen {' '.join(path)} --help` names a file of the repository"


def test_top_level_help_lists_every_command_without_importing_them():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in COMMANDS:
        assert name in result.output


def test_version_option_prints_the_package_version():
    result = CliRunner().invoke(cli, ["--version"])
    assert __version__ in result.output


def run_main(*argv):
    return subprocess.run([sys.executable, "-m", "problemgen", *argv], capture_output=True, text=True, timeout=120)


def test_unknown_command_is_a_usage_error_with_exit_code_2():
    result = run_main("no-such-command")
    assert result.returncode == 2
    assert "No such command" in result.stderr


@pytest.mark.parametrize("argv", [("show", "attention.weights", "--difficulty", "9"), ("no-such-command",),
                                  ("grade-code", "no-such-file.py", "--task", "softmax"), ("export", "gift")])
def test_usage_errors_are_one_error_line_that_says_where_help_is(argv):
    """The exit-code table promises one `error:` line for bad input; click's own block took four."""
    result = run_main(*argv)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert "--help" in result.stderr


def test_project_errors_become_one_line_without_a_traceback():
    result = run_main("show", "atention.weights")
    assert result.returncode == 2
    assert result.stderr.startswith("error: unknown kind 'atention.weights'")
    assert "did you mean 'attention." in result.stderr
    assert "Traceback" not in result.stderr


class _CtrlCWhileImporting:
    """Stands in for ``problemgen.cli.app`` while it is being imported: Ctrl-C arrives then."""

    def __getattr__(self, name):
        raise KeyboardInterrupt


def test_ctrl_c_while_the_command_line_loads_exits_130_without_a_traceback(monkeypatch, capsys):
    """The first tenth of a second of every command imports click and the commands, outside click's own
    Ctrl-C handling: a KeyboardInterrupt traceback, exit 1."""
    from problemgen.cli import main

    monkeypatch.setitem(sys.modules, "problemgen.cli.app", _CtrlCWhileImporting())
    try:
        main(["quiz", "--seed", "1"])
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C escaped the command line (a traceback for the user)")
    except SystemExit as leaving:
        assert leaving.code == 130 and capsys.readouterr().err == "\naborted\n"
    else:
        pytest.fail("the command ran on after Ctrl-C")


def test_fast_help_is_exactly_what_click_prints():
    """The precomputed help (start-up fast path) must not drift from the real one: regenerate with
    `python -m problemgen.cli.app` when this fails."""
    assert fast_path(["--help"]) == top_level_help()
    assert fast_path([]) == top_level_help()


@pytest.mark.parametrize("args", [["list"], ["list", "--topic", "masks"], ["list", "--topic=masks"]])
def test_fast_list_equals_the_click_command(args):
    assert fast_path(args) == CliRunner().invoke(cli, args).output


def test_list_json_goes_through_click_because_it_draws_the_overrides():
    assert fast_path(["list", "--json"]) is None


@pytest.mark.parametrize("args", [["list", "--help"], ["list", "--topic"], ["list", "extra"], ["show", "x"], ["--helpx"]])
def test_anything_unusual_falls_through_to_click(args):
    assert fast_path(args) is None


def test_fast_paths_do_not_import_click_or_numpy():
    code = (
        "import sys\n"
        "from problemgen.cli import fast_path\n"
        "fast_path(['--help']); fast_path(['list', '--json'])\n"
        "print(sorted(m for m in ('click', 'numpy', 'sympy', 'jinja2') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "[]", result.stderr


def _imported(*argv: str) -> set[str]:
    """The modules a Python run imports (from ``-X importtime``), the checkout first on the path.

    ``-S`` leaves site-packages out: the .pth hooks of a busy environment import ``re`` and ``typing``
    before any command runs, which would hide what the command itself imports. The baseline imports
    ``site`` itself, which a normal start loads (with ``os``), without running those hooks."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    err = subprocess.run([sys.executable, "-S", "-X", "importtime", *argv], capture_output=True, text=True, env=env,
                         timeout=120).stderr
    return {line.split("|")[2].strip() for line in err.splitlines()
            if line.startswith("import time:") and "imported package" not in line}


@pytest.mark.parametrize("argv", [["--help"], ["list"], ["list", "--topic", "attention"]], ids=" ".join)
def test_the_problemgen_command_starts_with_nothing_beyond_a_bare_python(argv):
    """Start-up target: `problemgen --help`/`list` within 1.5x `python -c pass` (bench/startup.py measures it).

    Only our own modules and ``__future__`` may load beyond what a bare interpreter loads; pip's
    entry-point launcher imported ``re`` (1.6x a bare start on its own), hence bin/problemgen."""
    script = Path(__file__).resolve().parents[1] / "bin" / "problemgen"
    extra = _imported(str(script), *argv) - _imported("-c", "import site")
    assert {m for m in extra if m.split(".")[0] not in ("problemgen", "__future__")} == set()


def _export_required_cases():
    from problemgen.exports import all_exports

    return [(name, option) for name, export in all_exports().items() for option in export.options if option.required]


def _valid_value(option, tmp_path) -> str:
    """A value click accepts for ``option`` (the export itself is never reached)."""
    return {"file": str(tmp_path / "f.txt"), "dir": str(tmp_path), "choice": (option.choices or ("",))[0],
            "float": "5"}.get(option.kind, str(tmp_path / "out"))


@pytest.mark.parametrize("name, missing", _export_required_cases(), ids=lambda c: getattr(c, "name", c))
def test_every_required_export_option_is_enforced_as_a_usage_error(tmp_path, name, missing):
    """Every export subcommand refuses a missing required option with click's usage error (exit 2)
    before building anything: `export moodle --bank masking` without -o built the pool, then crashed."""
    from problemgen.exports import all_exports

    (tmp_path / "f.txt").write_text("x", encoding="utf-8")
    args = [a for o in all_exports()[name].options if o.required and o is not missing
            for a in (o.name, _valid_value(o, tmp_path))]
    result = CliRunner().invoke(cli, ["export", name, *args])
    assert result.exit_code == 2, result.output
    assert f"Missing option '{missing.name}'" in result.output, result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


def test_a_class_set_writes_nothing_but_its_result_unless_progress_is_asked_for(tmp_path):
    """stderr not a terminal (a log): `worksheet --roster` once always printed a `students` line there, and
    `--progress` drew no bar, only the word; it now writes plain lines of done/total on request."""
    roster = tmp_path / "roster.csv"
    roster.write_text("id\na1\nb2\n", encoding="utf-8")
    env = {**os.environ, "TEST_CLASS_SECRET": "a long class secret for tests"}

    def worksheet(out: str, *more: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "problemgen", "worksheet", "masking", "-o", str(tmp_path / out),
                               "--roster", str(roster), "--secret-env", "TEST_CLASS_SECRET", *more],
                              capture_output=True, text=True, timeout=120, env=env)

    quiet, loud = worksheet("quiet"), worksheet("loud", "--progress")
    assert quiet.returncode == loud.returncode == 0 and quiet.stderr == ""
    assert loud.stderr.splitlines()[-1] == "students: 2/2"
