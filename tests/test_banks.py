"""Question banks: parsing, validation messages (file, line, key, did-you-mean) and the shipped banks."""

from __future__ import annotations

import textwrap

import pytest

from problemgen.documents import banks
from problemgen.model.core import ProblemgenError
from problemgen.model.registry import all_kinds

KIND = "norms.layer_norm"  # a kind with an override ("d") that the tests below rely on


def write_bank(tmp_path, body: str, name: str = "demo.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return path


def issues_of(path) -> list[str]:
    bank, issues = banks.check_bank(path)
    assert bank is None
    return [str(i) for i in issues]


def test_a_valid_bank_loads_with_defaults_and_sizes(tmp_path):
    path = write_bank(tmp_path, f"""
        title = "Norms"
        seed = 11

        [[problems]]
        kind = "{KIND}"
        count = 3
        points = 2
        overrides = {{ d = 3 }}

        [[problems]]
        kind = "{KIND}"
        seeds = [4, 9]
        difficulty = 2
        title = "Pinned"
    """)
    bank = banks.load_bank(path)
    assert (bank.id, bank.title, bank.seed, bank.size) == ("demo", "Norms", 11, 5)
    first, second = bank.items
    assert (first.count, first.seeds, first.points, first.overrides, first.line) == (3, None, 2.0, {"d": 3}, 4)
    assert (second.seeds, second.difficulty, second.title, second.line) == ((4, 9), 2, "Pinned", 10)


def test_unknown_kind_names_file_line_key_and_the_closest_kind(tmp_path):
    path = write_bank(tmp_path, """
        title = "T"

        [[problems]]
        kind = "norms.layer_norm"

        [[problems]]
        points = 2
        kind = "norms.layer_nrom"
    """)
    assert issues_of(path) == [
        f"{path}, line 8, key 'kind': unknown kind 'norms.layer_nrom' — did you mean 'norms.layer_norm'?"
    ]


def test_misspelt_entry_key_is_reported_with_a_suggestion(tmp_path):
    path = write_bank(tmp_path, f"""
        title = "T"
        [[problems]]
        kind = "{KIND}"
        cuont = 2
    """)
    [message] = issues_of(path)
    assert message.startswith(f"{path}, line 4, key 'cuont': unknown key — did you mean 'count'?")


def test_unknown_override_is_reported_on_its_own_line(tmp_path):
    path = write_bank(tmp_path, f"""
        title = "T"
        [[problems]]
        kind = "{KIND}"

        [problems.overrides]
        dd = 3
    """)
    [message] = issues_of(path)
    assert message.startswith(f"{path}, line 6, key 'dd': kind '{KIND}' has no override 'dd' — did you mean 'd'?")


def test_inline_override_tables_are_located_too(tmp_path):
    path = write_bank(tmp_path, f"""
        title = "T"
        [[problems]]
        kind = "{KIND}"
        overrides = {{ width = 3 }}
    """)
    [message] = issues_of(path)
    assert message.startswith(f"{path}, line 4, key 'width'")


def test_banks_refuse_stored_answers(tmp_path):
    path = write_bank(tmp_path, f"""
        title = "T"
        [[problems]]
        kind = "{KIND}"
        answer = 0.5
    """)
    [message] = issues_of(path)
    assert "key 'answer': banks are recipes and never store answers" in message


@pytest.mark.parametrize(
    "line, key, message",
    [
        ("count = 0", "count", "count must be an integer from 1"),
        ("seeds = [1, -2]", "seeds", "seeds must be a non-empty list of integers from 0 to"),
        ("difficulty = 7", "difficulty", "difficulty must be one of [1, 2, 3]"),
        ("points = 0", "points", "points must be a number above 0"),
        ('title = ""', "title", "title must be a non-empty string"),
        ("overrides = 3", "overrides", "overrides must be a table"),
    ],
)
def test_bad_entry_values_are_reported_by_key(tmp_path, line, key, message):
    path = write_bank(tmp_path, f'title = "T"\n[[problems]]\nkind = "{KIND}"\n{line}\n')
    [found] = issues_of(path)
    assert f"line 4, key {key!r}: {message}" in found


@pytest.mark.parametrize("where, key, text, code", [
    ("top", "title", "Ctrl \\u0001 esc", "U+0001"),
    ("top", "title", "colour \\u001b[31m red", "U+001B"),
    ("top", "title", "two\\nlines", "U+000A"),
    ("top", "instructions", "a C1 CSI \\u009b here", "U+009B"),
    ("item", "title", "Item \\u0000 nul", "U+0000"),
    ("item", "title", "vertical \\u000b tab", "U+000B"),
], ids=["SOH in a title", "ESC in a title", "newline in a title", "C1 in instructions", "NUL in an item title",
        "VT in an item title"])
def test_control_characters_in_bank_text_are_refused_naming_the_key(tmp_path, where, key, text, code):
    """They would reach XML (which cannot hold most of them), LaTeX, Markdown and terminals."""
    line = f'{key} = "{text}"\n'
    head = line if (where, key) == ("top", "title") else 'title = "T"\n' + (line if where == "top" else "")
    path = write_bank(tmp_path, f'{head}[[problems]]\nkind = "{KIND}"\n' + (line if where == "item" else ""))
    [message] = issues_of(path)
    line = {"top": 1 if key == "title" else 2, "item": 4}[where]
    assert f"line {line}, key {key!r}: contains the control character {code}; remove it" in message
    assert "\n" not in message and not any(ord(c) < 32 for c in message)


def test_tabs_and_newlines_stay_allowed_where_text_allows_them(tmp_path):
    path = write_bank(tmp_path, f'title = "A\\tB"\ninstructions = """Line one\n\tline two"""\n'
                                f'[[problems]]\nkind = "{KIND}"\ntitle = "x\\ty"\n')
    bank = banks.load_bank(path)
    assert (bank.title, bank.instructions, bank.items[0].title) == ("A\tB", "Line one\n\tline two", "x\ty")


def test_count_and_seeds_together_are_ambiguous(tmp_path):
    path = write_bank(tmp_path, f'title = "T"\n[[problems]]\nkind = "{KIND}"\ncount = 2\nseeds = [1]\n')
    assert any("give either count or seeds" in m for m in issues_of(path))


def test_top_level_problems_are_all_reported(tmp_path):
    path = write_bank(tmp_path, 'titel = "T"\nseed = -1\n')
    found = issues_of(path)
    assert f"{path}, line 1, key 'titel': unknown key — did you mean 'title'?" in found[0]
    assert any("key 'title': a non-empty title string is required" in m for m in found)
    assert any("line 2, key 'seed'" in m for m in found)
    assert any("at least one [[problems]] entry is required" in m for m in found)


def test_toml_syntax_errors_carry_the_line_number(tmp_path):
    path = write_bank(tmp_path, 'title = "T"\n[[problems]]\nkind = norms\n')
    with pytest.raises(ProblemgenError, match=r"demo\.toml, line 3, column 8: invalid TOML: Invalid value$"):
        banks.check_bank(path)


def test_override_values_the_kind_rejects_are_caught_at_validation(tmp_path):
    path = write_bank(tmp_path, f'title = "T"\n[[problems]]\nkind = "{KIND}"\noverrides = {{ d = 1 }}\n')
    bank, issues = banks.check_bank(path)
    assert bank is None and issues and issues[0].line == 4


def test_load_bank_raises_the_first_issue_and_counts_the_rest(tmp_path):
    path = write_bank(tmp_path, 'title = "T"\n[[problems]]\nkind = "nope.a"\n[[problems]]\nkind = "nope.b"\n')
    with pytest.raises(ProblemgenError, match=r"line 3, key 'kind': unknown kind 'nope\.a'.*and 1 more"):
        banks.load_bank(path)


def test_shipped_banks_resolve_by_name_and_unknown_names_get_a_suggestion():
    assert banks.resolve_bank("attention_basics") == banks.resolve_bank("attention_basics.toml")
    with pytest.raises(ProblemgenError, match="did you mean 'attention_basics'"):
        banks.resolve_bank("atention_basics")


def test_the_curriculum_banks_are_shipped():
    names = {path.stem for path in banks.shipped_banks()}
    assert {"attention_basics", "masking", "multihead_shapes", "params_memory", "full_block", "mixed_exam"} <= names


@pytest.mark.parametrize("path", banks.shipped_banks(), ids=lambda p: p.stem)
def test_every_shipped_bank_validates(path):
    bank, issues = banks.check_bank(path)
    assert not issues, "\n".join(map(str, issues))
    assert bank.size >= 4


def test_describe_bank_lists_problem_ids_kinds_and_points(tmp_path):
    path = write_bank(tmp_path, f'title = "T"\n[[problems]]\nkind = "{KIND}"\ncount = 2\npoints = 3\n')
    text = banks.describe_bank(banks.load_bank(path))
    assert "p1-p2" in text and KIND in text and "3 pt" in text


def test_kinds_named_by_the_tests_exist():
    assert KIND in {spec.name for spec in all_kinds()}


def test_kinds_without_a_fragment_are_reported_unless_the_template_directory_supplies_one(tmp_path, monkeypatch):
    from problemgen.model import registry
    from problemgen.model.core import AnswerPart, Draft

    def make(rng, difficulty):
        return Draft(params={}, parts=[AnswerPart("n", "integer", 3)])

    registry.load_all()
    monkeypatch.setitem(registry._REGISTRY, "demo.bare", registry.KindSpec("demo.bare", "Bare", make))
    path = tmp_path / "bare.toml"
    path.write_text('title = "T"\n[[problems]]\nkind = "demo.bare"\n', encoding="utf-8")
    assert issues_of(path) == [f"{path}, line 3, key 'kind': kind 'demo.bare' has no template fragment problems/demo.bare.j2"]
    templates = tmp_path / "templates"
    (templates / "problems").mkdir(parents=True)
    (templates / "problems" / "demo.bare.j2").write_text("{% block prompt %}x{% endblock %}{% block solution %}y{% endblock %}")
    assert banks.check_bank(path, templates=templates)[1] == []


def test_the_layout_documented_in_the_banks_module_is_a_valid_bank(tmp_path):
    """README points bank authors to this example; its `vary` once named an override its kind lacks."""
    import textwrap

    from problemgen.documents import banks

    layout = banks.__doc__.split("Layout::", 1)[1].split("\n\nValidation", 1)[0]
    path = tmp_path / "my_bank.toml"
    path.write_text(textwrap.dedent(layout.strip("\n")), encoding="utf-8")
    bank = banks.load_bank(path)
    assert bank.title == "Attention basics" and bank.items[0].vary == ("convention",)
