"""An instructor's mistakes in a bank, met by every command that reads one: one `error:` line naming the
file and the line, exit code 2, and nothing written — the same message whichever command met it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_exit import run
from problemgen.documents import banks

SECRET_ENV = "PROBLEMGEN_TEST_SECRET"
HEAD = 'title = "T"\n[[problems]]\n'


def export(fmt: str):
    return lambda bank, out, roster: ["export", fmt, "--bank", bank, "-n", "2", "-o", f"{out}/pool",
                                      "--preview", f"{out}/pool.md"]


COMMANDS = {  # every command that reads a bank: name -> argv for (bank, output directory, roster)
    "bank validate": lambda bank, out, roster: ["bank", "validate", bank],
    "bank show": lambda bank, out, roster: ["bank", "show", bank],
    "worksheet": lambda bank, out, roster: ["worksheet", bank, "-o", f"{out}/sheet"],
    "class set": lambda bank, out, roster: ["worksheet", bank, "-o", f"{out}/class", "--roster", roster,
                                            "--secret-env", SECRET_ENV],
    **{f"export {fmt}": export(fmt) for fmt in ("moodle", "gift", "qti12", "qti21")},
}

BAD_BANKS = [  # (what the instructor did, the bank, the line named, what the message says)
    ("kind misspelt", HEAD + 'kind = "attention.weight"\n', 3,
     "key 'kind': unknown kind 'attention.weight' — did you mean 'attention.weights'?"),
    ("difficulty 0", HEAD + 'kind = "attention.weights"\ndifficulty = 0\n', 4, "difficulty must be one of [1, 2, 3], not 0"),
    ("difficulty 7", HEAD + 'kind = "attention.weights"\ndifficulty = 7\n', 4, "difficulty must be one of [1, 2, 3], not 7"),
    ("difficulty as text", HEAD + 'kind = "attention.weights"\ndifficulty = "2"\n', 4, "not '2'"),
    ("points negative", HEAD + 'kind = "attention.weights"\npoints = -1\n', 4, "points must be a number above 0"),
    ("points as text", HEAD + 'kind = "attention.weights"\npoints = "2"\n', 4, "points must be a number above 0"),
    ("seed in a problem", HEAD + 'kind = "attention.weights"\nseed = 4\n', 4,
     "key 'seed': seed is the bank's, written above the first [[problems]]; to fix this problem's variants, pin them"),
    ("id in a problem", HEAD + 'kind = "attention.weights"\nid = "p1"\n', 4, "key 'id': id is the bank's"),
    ("kind above the problems", 'title = "T"\nkind = "attention.weights"\n[[problems]]\nkind = "attention.weights"\n', 2,
     "key 'kind': kind belongs in a [[problems]] table, not above the first one"),
    ("[[problem]] for [[problems]]", 'title = "T"\n[[problem]]\nkind = "attention.weights"\n', 2,
     "key 'problem': unknown key — did you mean 'problems'?"),
    ("override name misspelt", HEAD + 'kind = "attention.weights"\noverrides = { dk = 2 }\n', 4,
     "key 'dk': kind 'attention.weights' has no override 'dk' — did you mean 'd_k'?"),
    ("override 0", HEAD + 'kind = "attention.weights"\noverrides = { d_k = 0 }\n', 4,
     "key 'd_k': override d_k=0 is not allowed; choose one of 2, 3, 4, 8, 9, 16"),
    ("override 10000", HEAD + 'kind = "attention.weights"\noverrides = { d_k = 10000 }\n', 4, "override d_k=10000 is not allowed"),
    ("override on its own line", HEAD + 'kind = "attention.weights"\n[problems.overrides]\nL = 2\nd_k = 0\n', 6,
     "key 'd_k': override d_k=0 is not allowed"),
    ("override as a decimal", HEAD + 'kind = "attention.weights"\noverrides = { d_k = 4.0 }\n', 4,
     "key 'd_k': override d_k=4.0 is a decimal number, not a whole number; choose one of 2, 3, 4, 8, 9, 16"),
    ("override as text", HEAD + 'kind = "attention.weights"\noverrides = { d_k = "4" }\n', 4,
     "override d_k='4' is text, not a whole number"),
    ("override as a Boolean", HEAD + 'kind = "multihead.head_dim"\noverrides = { heads = true }\n', 4,
     "key 'heads': override heads=True is true or false, not a whole number"),
    ("a width printed as 512.0", HEAD + 'kind = "multihead.head_dim"\noverrides = { d_model = 512.0 }\n', 4,
     "key 'd_model': override d_model=512.0 is a decimal number, not a whole number"),
    ("a switch given as 1", HEAD + 'kind = "multihead.gqa"\ndifficulty = 2\noverrides = { multi_query = 1 }\n', 5,
     "override multi_query=1 is a whole number, not true or false"),
    ("heads that do not divide d_model", HEAD + 'kind = "multihead.head_dim"\noverrides = { heads = 3, d_model = 512 }\n', 4,
     "key 'overrides': d_model=512 does not split evenly into 3 heads"),
    ("overrides no variant can use", HEAD + 'kind = "multihead.head_dim"\noverrides = { heads = 1 }\n', 4,
     "no usable variant of 'multihead.head_dim' at difficulty 1 with heads=1 in 200 draws (the known mistake"),
    ("vary names what overrides pins", HEAD + 'kind = "attention.projection"\nvary = ["convention"]\n'
     'overrides = { convention = "row" }\n', 4, "key 'vary': vary names 'convention', which overrides pins"),
    ("vary names an override the kind lacks", HEAD + 'kind = "attention.weights"\nvary = ["convention"]\n', 4,
     "kind 'attention.weights' has no override 'convention'"),
    ("seed beyond 64 bits", 'title = "T"\nseed = 18446744073709551616\n[[problems]]\nkind = "attention.weights"\n', 2,
     "key 'seed': seed must be an integer from 0 to 18446744073709551615"),
    ("pinned seed beyond 64 bits", HEAD + 'kind = "attention.weights"\nseeds = [1, 18446744073709551616]\n', 4,
     "seeds must be a non-empty list of integers from 0 to 18446744073709551615"),
    ("TOML syntax error", HEAD + "kind = attention.weights\n", 3, "column 8: invalid TOML: Invalid value"),
]


@pytest.fixture
def roster(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv(SECRET_ENV, "s3cret-of-sufficient-length")
    path = tmp_path / "roster.csv"
    path.write_text("id\na1\na2\n")
    return path


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("text, line, message", [case[1:] for case in BAD_BANKS], ids=[case[0] for case in BAD_BANKS])
def test_a_bank_mistake_is_one_line_naming_file_and_line_exit_two_and_nothing_written(
        tmp_path, roster, capsys, command, text, line, message):
    bank, out = tmp_path / "bank.toml", tmp_path / "out"
    bank.write_text(text, encoding="utf-8")
    out.mkdir()
    assert run(COMMANDS[command](str(bank), str(out), str(roster))) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bank}, line {line}") and message in err, err
    assert err.count("\n") == 1, err
    assert not any(out.iterdir())


def test_a_bank_of_twenty_thousand_entries_is_refused_at_once_with_one_message(tmp_path):
    """Finding the line of each entry rescanned the whole text: 20,000 entries took minutes."""
    bank = tmp_path / "huge.toml"
    bank.write_text('title = "T"\n' + '[[problems]]\nkind = "attention.weights"\n' * 20_000, encoding="utf-8")
    _, issues = banks.check_bank(bank)
    assert [str(i) for i in issues] == [
        f"{bank}, line 2, key 'problems': the bank has 20000 [[problems]] entries; at most 500 are allowed"]


def test_a_bank_saved_with_a_byte_order_mark_crlf_and_tabs_loads(tmp_path):
    """Windows editors write the mark; tomllib refused it as an 'invalid statement' at line 1."""
    bank = tmp_path / "windows.toml"
    bank.write_bytes('\ufefftitle\t= "T"\r\n[[problems]]\r\n\tkind = "attention.weights"\r\n'.encode("utf-8"))
    assert banks.load_bank(bank).items[0].kind == "attention.weights"


def test_overrides_that_fit_only_some_draws_build_every_student_and_every_export(tmp_path, roster, capsys):
    """d_model = 512 fits h = 8 but not h = 40: the bank validated (seed 0 drew h = 8), then a class set failed
    at whichever student drew h = 40, after writing the students before."""
    bank = tmp_path / "bank.toml"
    bank.write_text(HEAD + 'kind = "multihead.head_dim"\ncount = 4\noverrides = { d_model = 512 }\n', encoding="utf-8")
    roster.write_text("id\n" + "".join(f"s{i}\n" for i in range(12)))
    for command in ("worksheet", "class set", "export moodle"):
        assert run(COMMANDS[command](str(bank), str(tmp_path), str(roster))) == 0, command
    assert "error" not in capsys.readouterr().err
    variant = (tmp_path / "class" / "keys" / "s11" / "variant.json").read_text()
    assert '"d_model":512' in variant.replace(" ", "")


BROKEN_TEMPLATES = [  # (what is broken, file, text, what the message says)
    ("fragment syntax", "problems/attention.weights.j2", "{% block prompt %}\n{% if %}{% endblock %}",
     "problems/attention.weights.j2, line 2: Expected an expression"),
    ("fragment name", "problems/attention.weights.j2",
     "{% block prompt %}{{ parms.Q }}{% endblock %}{% block solution %}s{% endblock %}",
     "problems/attention.weights.j2, line 1 (prompt): 'parms' is undefined"),
    ("fragment arithmetic", "problems/attention.weights.j2",
     "{% block prompt %}x{% endblock %}{% block solution %}\n{{ params.d_k / 0 }}{% endblock %}",
     "problems/attention.weights.j2, line 2 (solution): ZeroDivisionError: division by zero"),
    ("fragment without a solution", "problems/attention.weights.j2", "{% block prompt %}x{% endblock %}",
     "template for 'attention.weights' has no 'solution' block"),
    ("document syntax", "documents/worksheet.md.j2", "{{ title }\n", "documents/worksheet.md.j2, line 1: unexpected '}'"),
]


@pytest.mark.parametrize("command", ["bank validate", "worksheet", "class set"])
@pytest.mark.parametrize("name, text, message", [case[1:] for case in BROKEN_TEMPLATES],
                         ids=[case[0] for case in BROKEN_TEMPLATES])
def test_a_broken_template_is_found_before_anything_is_written(tmp_path, roster, capsys, command, name, text, message):
    """A Python error in a user's template was a traceback; the rest surfaced only while writing, after a class
    set had created its folder — and `bank validate --templates` passed them all."""
    bank, out, templates = tmp_path / "bank.toml", tmp_path / "out", tmp_path / "templates"
    bank.write_text(HEAD + 'kind = "attention.weights"\n', encoding="utf-8")
    (templates / name).parent.mkdir(parents=True)
    (templates / name).write_text(text, encoding="utf-8")
    out.mkdir()
    assert run([*COMMANDS[command](str(bank), str(out), str(roster)), "--templates", str(templates)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bank}") and message in err and err.count("\n") == 1, err
    assert not any(out.iterdir())


def test_a_users_document_template_that_raises_is_one_line_with_its_file_and_line(tmp_path, capsys):
    bank, templates = tmp_path / "bank.toml", tmp_path / "templates"
    bank.write_text(HEAD + 'kind = "attention.weights"\n', encoding="utf-8")
    (templates / "documents").mkdir(parents=True)
    (templates / "documents" / "worksheet.md.j2").write_text("# {{ title }}\n{{ problems | length / 0 }}\n")
    assert run(["worksheet", str(bank), "-o", str(tmp_path / "out"), "--templates", str(templates)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: template {templates}/documents/worksheet.md.j2, line 2: ZeroDivisionError: division by zero\n"
    assert not (tmp_path / "out").exists()


def test_bank_validate_checks_every_bank_after_one_that_is_not_toml(tmp_path, capsys):
    broken, misspelt = tmp_path / "broken.toml", tmp_path / "misspelt.toml"
    broken.write_text(HEAD + "kind = attention.weights\n")
    misspelt.write_text(HEAD + 'kind = "attention.weight"\n')
    assert run(["bank", "validate", str(broken), str(tmp_path / "absent.toml"), str(misspelt), "masking"]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"error: {broken}, line 3, column 8: invalid TOML: Invalid value",
        f"error: {tmp_path / 'absent.toml'}: no such bank file",
        f"error: {misspelt}, line 3, key 'kind': unknown kind 'attention.weight' — did you mean 'attention.weights'?",
    ]
    assert captured.out.startswith("ok: ") and "masking.toml" in captured.out


def test_a_problem_that_fails_while_building_names_the_bank_file_and_line(tmp_path, monkeypatch, capsys):
    """It said 'bank entry at line 3' without the file, beside messages that all name it."""
    from problemgen.documents import worksheet
    from problemgen.model.core import ProblemgenError

    real = worksheet.generate

    def refuse_seed_7(kind, seed, *args, **kwargs):
        if seed == 7:
            raise ProblemgenError("no variant for this seed")
        return real(kind, seed, *args, **kwargs)

    monkeypatch.setattr(worksheet, "generate", refuse_seed_7)
    bank = tmp_path / "bank.toml"
    bank.write_text(HEAD + 'kind = "attention.weights"\nseeds = [0, 7]\n', encoding="utf-8")
    assert run(["worksheet", str(bank), "-o", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"error: {bank}, line 2: no variant for this seed\n"
