"""The `worksheet` command and the `bank` group: thin wrappers, documented, with the documented exit codes."""

from __future__ import annotations

import pytest

from tests.cli_exit import run

SECRET_ENV = "PROBLEMGEN_TEST_SECRET"
GOOD_BANK = 'title = "T"\nseed = 3\n\n[[problems]]\nkind = "norms.layer_norm"\ncount = 2\n'


@pytest.fixture
def bank(tmp_path):
    path = tmp_path / "bank.toml"
    path.write_text(GOOD_BANK, encoding="utf-8")
    return path


def test_worksheet_command_writes_the_directory_and_reports_the_variant(bank, tmp_path, capsys):
    assert run(["worksheet", str(bank), "-o", str(tmp_path / "out"), "--seed", "4"]) == 0
    assert "wrote 2 problems (bank-s4)" in capsys.readouterr().out
    assert (tmp_path / "out" / "key.toml").exists()


def test_the_largest_seed_a_variant_file_holds_is_accepted_and_one_more_is_a_usage_error(bank, tmp_path, capsys):
    assert run(["worksheet", str(bank), "-o", str(tmp_path / "top"), "--seed", str(2**64 - 1)]) == 0
    assert run(["worksheet", str(bank), "-o", str(tmp_path / "over"), "--seed", str(2**64)]) == 2
    assert "--seed" in capsys.readouterr().err and not (tmp_path / "over").exists()


def test_worksheet_command_with_a_roster_writes_a_class_set(bank, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(SECRET_ENV, "s3cret-of-sufficient-length")
    roster = tmp_path / "roster.csv"
    roster.write_text("id\na1\na2\n")
    argv = ["worksheet", str(bank), "-o", str(tmp_path / "class"), "--roster", str(roster), "--secret-env", SECRET_ENV]
    assert run(argv) == 0
    assert "wrote 2 student worksheets" in capsys.readouterr().out
    assert (tmp_path / "class" / "keys" / "a2" / "variant.json").exists()
    assert (tmp_path / "class" / "handouts" / "a2" / "worksheet.md").exists()
    roster.write_text("id\na1\n")
    assert run([*argv, "--force"]) == 0
    assert "wrote 1 student worksheet and manifest.json" in capsys.readouterr().out  # not "1 student worksheets"


def test_an_output_path_under_a_file_is_one_error_line(bank, tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    assert run(["worksheet", str(bank), "-o", str(tmp_path / "f" / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "is a file" in err and err.count("\n") == 1


def test_roster_without_secret_env_is_a_usage_error(bank, tmp_path, capsys):
    roster = tmp_path / "roster.csv"
    roster.write_text("id\na1\n")
    assert run(["worksheet", str(bank), "-o", str(tmp_path / "o"), "--roster", str(roster)]) == 2
    assert "--roster and --secret-env go together" in capsys.readouterr().err


def test_bad_bank_is_one_error_line_with_exit_code_two(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text('title = "T"\n[[problems]]\nkind = "norms.layer_nrom"\n')
    assert run(["worksheet", str(path), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}, line 3, key 'kind': unknown kind") and err.count("\n") == 1


def test_bank_validate_reports_every_issue_and_exits_two(bank, tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('title = "T"\n[[problems]]\nkind = "norms.layer_norm"\ncuont = 2\ndifficulty = 9\n')
    assert run(["bank", "validate", str(bank), str(bad)]) == 2
    captured = capsys.readouterr()
    assert f"ok: {bank} (2 problems)" in captured.out
    assert "key 'cuont'" in captured.err and "key 'difficulty'" in captured.err


def test_bank_validate_exits_zero_when_all_banks_are_valid(bank, capsys):
    assert run(["bank", "validate", str(bank)]) == 0


def test_bank_list_and_show_describe_the_shipped_banks(capsys):
    assert run(["bank", "list"]) == 0
    assert "attention_basics" in capsys.readouterr().out
    assert run(["bank", "show", "attention_basics"]) == 0
    out = capsys.readouterr().out
    assert "attention.weights" in out and "p1" in out


@pytest.mark.parametrize("argv", [["worksheet", "--help"], ["bank", "--help"], ["bank", "validate", "--help"],
                                  ["bank", "list", "--help"], ["bank", "show", "--help"]])
def test_every_command_documents_an_example(argv, capsys):
    assert run(argv) == 0
    assert "Example:" in capsys.readouterr().out


def test_commands_stay_thin():
    import inspect

    from problemgen.cli import worksheet as module

    for command in (module.worksheet_command, module.validate_command, module.list_command, module.show_command):
        body = inspect.getsource(command.callback).split('"""')[-1]
        code = [line for line in body.splitlines() if line.strip()]
        assert len(code) <= 15, f"{command.name} has {len(code)} lines of code"
