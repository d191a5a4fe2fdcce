"""``problemgen list``, ``show`` and ``check``: output, exit codes, help examples, start-up imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from problemgen import selfcheck
from problemgen.model import registry
from problemgen.cli import main
from problemgen.errors import ProblemgenError
from problemgen.problems import index


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def test_kinds_read_from_the_sources_match_the_live_registry():
    live = [
        {"name": s.name, "topic": s.topic, "title": s.title, "summary": s.summary, "difficulties": list(s.difficulties)}
        for s in registry.all_kinds()
    ]
    read = index.load()
    differ = sorted({e["name"] for e in read} ^ {e["name"] for e in live}) or [
        a["name"] for a, b in zip(read, live) if a != b]
    assert read == live, f"kinds the source reading gets wrong: {differ} (keep @register(...) on one line, literals only)"


def test_the_source_reading_refuses_what_it_cannot_read():
    with pytest.raises(ProblemgenError, match="one line"):
        index._kinds_in('x\n@register("a.b",\n    title="T")\ndef f(rng, d):\n    """S."""\n', "a")
    with pytest.raises(ProblemgenError, match="literals"):
        index._kinds_in('x\n@register("a.b", title=TITLE)\ndef f(rng, d):\n    """S."""\n', "a")


def test_list_does_not_import_numpy_sympy_or_jinja():
    code = (
        "import sys\n"
        "from problemgen.cli import main\n"
        "try:\n    main(['list'])\nexcept SystemExit:\n    pass\n"
        "print([m for m in ('numpy', 'sympy', 'jinja2') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_list_shows_every_kind_and_filters_by_topic(capsys):
    code, out, _ = run(["list"], capsys)
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == [spec.name for spec in registry.all_kinds()]
    code, out, _ = run(["list", "--topic", "masks"], capsys)
    assert code == 0 and out.splitlines() and all(line.startswith("masks.") for line in out.splitlines())


def test_list_json_carries_names_titles_difficulties_and_overrides(capsys):
    code, out, _ = run(["list", "--json", "--topic", "attention"], capsys)
    entries = json.loads(out)
    assert code == 0
    assert {e["name"] for e in entries} == {spec.name for spec in registry.all_kinds("attention")}
    assert all(set(e) == {"name", "topic", "title", "summary", "difficulties", "overrides"} for e in entries)
    by_name = {e["name"]: e for e in entries}
    assert by_name["attention.projection"]["overrides"] == {"convention": ["row", "column"], "d_model": [2, 3, 4],
                                                            "d_k": [2, 3]}
    assert by_name["attention.weights"]["overrides"]["d_k"] == [2, 3, 4, 8, 9, 16]


def test_every_override_of_every_kind_is_listed_with_its_allowed_values():
    for spec in registry.all_kinds():
        assert set(registry.override_choices(spec.name)) == set(spec.override_names), spec.name


def test_show_set_pins_an_override_and_refuses_a_bad_value_in_one_line(capsys):
    code, out, _ = run(["show", "masks.causal", "--set", "L=5", "--set", "representation=additive"], capsys)
    assert code == 0 and "5 tokens" in out and "additive" in out
    code, _, err = run(["show", "masks.causal", "--set", "L=50"], capsys)
    assert code == 2 and err.startswith("error: override L=50 is not allowed; choose one of 2, 3")
    code, _, err = run(["show", "masks.causal", "--set", "L"], capsys)
    assert code == 2 and "expected NAME=VALUE" in err


@pytest.mark.parametrize("setting, message", [
    ("d_k=4.0", "error: override d_k=4.0 is a decimal number, not a whole number; choose one of 2, 3, 4, 8, 9, 16\n"),
    ("dk=2", "error: kind 'attention.weights' has no override 'dk' — did you mean 'd_k'?; allowed: L, d_k, S\n"),
], ids=["a decimal where a whole number goes", "a misspelt name"])
def test_show_set_mistakes_are_one_line_as_in_a_bank(capsys, setting, message):
    """``--set d_k=4.0`` was a numpy traceback; a misspelt name got no suggestion, though a bank's did."""
    assert run(["show", "attention.weights", "--set", setting], capsys)[::2] == (2, message)


@pytest.mark.parametrize("command", ["list", "check"])
def test_unknown_topic_is_a_usage_error_with_a_suggestion(capsys, command):
    """`check --topic mask` said only 'no kinds to check', where `list` suggested the topic."""
    code, _, err = run([command, "--topic", "mask"], capsys)
    assert code == 2 and err.startswith("error: unknown topic 'mask' — did you mean 'masks'?; topics: attention, ")


def test_show_renders_the_prompt_and_the_worked_solution(capsys):
    code, out, _ = run(["show", "attention.weights", "--seed", "7", "--solution"], capsys)
    problem = registry.generate("attention.weights", 7)
    assert code == 0
    assert "**Solution.**" in out and r"\begin{bmatrix}" in out
    assert str(problem.params["d_k"]) in out


@pytest.mark.parametrize("fmt,marker", [("tex", r"\paragraph{Solution.}"), ("text", "Solution:")])
def test_show_other_formats(capsys, fmt, marker):
    code, out, _ = run(["show", "masks.causal", "--difficulty", "2", "--format", fmt, "--solution"], capsys)
    assert code == 0 and marker in out


def test_show_unknown_kind_suggests_the_closest(capsys):
    code, _, err = run(["show", "attention.weight"], capsys)
    assert code == 2 and "did you mean 'attention.weights'" in err


def test_show_rejects_a_difficulty_out_of_range(capsys):
    code, _, _ = run(["show", "masks.causal", "--difficulty", "4"], capsys)
    assert code == 2


def test_check_passes_a_good_kind(capsys):
    code, out, _ = run(["check", "masks.causal", "--seeds", "3"], capsys)
    assert code == 0 and out.endswith("variety: 0 of 1 kind below the threshold\n"
                                      "checked 1 kind x 3 seeds: 0 failures in 0 kinds\n")


def test_check_prints_failures_and_exits_one(capsys, monkeypatch):
    broken = selfcheck.Failure("masks.causal", "render", "prompt does not render as tex", 0, 1)
    monkeypatch.setattr(selfcheck, "check_kind", lambda kind, seeds: [broken])
    code, out, _ = run(["check", "masks.causal", "--seeds", "1"], capsys)
    assert code == 1 and str(broken) in out and out.endswith("checked 1 kind x 1 seed: 1 failure in 1 kind\n")


@pytest.mark.parametrize("command", ["list", "show", "check"])
def test_every_command_documents_examples(capsys, command):
    code, out, _ = run([command, "--help"], capsys)
    assert code == 0 and "Examples:" in out and f"problemgen {command}" in out




def test_the_code_summary_counts_in_plain_english(monkeypatch):
    """It once said "1 tasks, … 1 task(s) failing"."""
    from problemgen.code.tasks import mutation

    monkeypatch.setattr(mutation, "_mutants", lambda: {"softmax": [("tag", [])]})
    assert mutation.summary({"softmax": ["a failure"]}) == "code: 1 task, 1 mutant, 1 task failing the mutation contract"
    assert mutation.summary({"softmax": [], "gelu": []}) == "code: 2 tasks, 1 mutant, 0 tasks failing the mutation contract"
