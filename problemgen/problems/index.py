"""The kinds read from the generator sources, so ``problemgen list`` starts without numpy, sympy or jinja2.

The registry learns about kinds by importing the generator modules, which import numpy and the
reference. Listing kinds should not pay for that, so this module reads the ``@register(...)`` lines
of the topic modules as text: the kind's name, title, summary and difficulties are literals there,
and the summary defaults to the first paragraph of the generator's docstring. Nothing is generated or kept
by hand, so the list cannot go stale; ``tests/test_cli_problems.py`` checks that this reading equals
the live registry, which keeps the one rule this needs: ``@register("topic.skill", title="…")`` on one
line, with literal arguments (strings, an int tuple for ``difficulties``).

Reading the 13 topic files costs about a millisecond, which keeps ``problemgen list`` within ~1.2 times
the start-up of Python itself.
"""

from __future__ import annotations

import os

from problemgen.errors import ProblemgenError
from problemgen.model.summaries import docstring_summary

FIELDS = ("name", "topic", "title", "summary", "difficulties")
"""Read from the sources; ``list --json`` adds ``overrides`` (every keyword override with its allowed
values, discovered by drawing each difficulty once: ``registry.override_choices``)."""
DEFAULT_DIFFICULTIES = [1, 2, 3]
_MARK = "\n@register("
_HERE = os.path.dirname(os.path.abspath(__file__))


def topic_modules() -> list[str]:
    """Names of the topic modules: every public module of this package except this index."""
    return sorted(
        name[:-3] for name in os.listdir(_HERE)
        if name.endswith(".py") and not name.startswith("_") and name != "index.py"
    )  # fmt: skip


def check_topic(topic: str) -> None:
    """An unknown topic is one error naming the closest topic and every one: the same from ``list`` and ``check``."""
    topics = topic_modules()
    if topic not in topics:
        from problemgen.wording import suggest  # lazy: a plain `list` imports nothing it does not use

        raise ProblemgenError(f"unknown topic {topic!r}{suggest(topic, topics)}; topics: {', '.join(topics)}")


def load() -> list[dict]:
    """Every kind read from the sources, sorted by name (no generator module is imported)."""
    entries = []
    for topic in topic_modules():
        with open(os.path.join(_HERE, f"{topic}.py"), encoding="utf-8") as source:
            entries += _kinds_in(source.read(), topic)
    return sorted(entries, key=lambda e: e["name"])


def _kinds_in(text: str, topic: str) -> list[dict]:
    entries = []
    at = text.find(_MARK)
    while at != -1:
        end = text.find("\n", at + 1)
        call = text[at + len(_MARK): end].rstrip()
        if not call.endswith(")"):
            raise ProblemgenError(f"problems/{topic}.py: keep @register(...) on one line: {call[:60]}")
        name, options = _arguments(call[:-1], topic)
        doc = text.find('"""', end) + 3
        summary = docstring_summary(text[doc: text.find('"""', doc)])
        entries.append({
            "name": name, "topic": topic, "title": options.get("title", ""),
            "summary": options.get("summary", summary),
            "difficulties": list(options.get("difficulties", DEFAULT_DIFFICULTIES)),
        })  # fmt: skip
        at = text.find(_MARK, end)
    return entries


def _arguments(text: str, topic: str) -> tuple[str, dict]:
    """``"name", key=literal, ...`` -> (name, {key: value}); literals only, never evaluated."""
    name, rest = _literal(text, 0, topic)
    options = {}
    while rest < len(text):
        comma = text.index(",", rest)
        equals = text.index("=", comma)
        value, rest = _literal(text, equals + 1, topic)
        options[text[comma + 1: equals].strip()] = value
    return name, options


def _literal(text: str, start: int, topic: str) -> tuple[object, int]:
    """The string, int tuple or int starting at ``start`` (after spaces), and where it ends."""
    while text[start] == " ":
        start += 1
    quote = text[start]
    if quote in "\"'":
        end = text.index(quote, start + 1)
        return text[start + 1: end], end + 1
    if quote == "(":
        end = text.index(")", start)
        return [int(x) for x in text[start + 1: end].split(",") if x.strip()], end + 1
    raise ProblemgenError(f"problems/{topic}.py: @register arguments must be literals: {text[start:start + 40]}")


def listing(topic: str | None = None, *, as_json: bool = False) -> str:
    """The text of ``problemgen list``: one kind per line, or a JSON array with ``as_json``."""
    entries = load()
    if topic is not None:
        check_topic(topic)
        entries = [e for e in entries if e["topic"] == topic]
    if as_json:
        import json  # only here: plain listing must start as fast as Python itself

        from problemgen.model.registry import override_choices  # lazy: JSON lists the overrides, drawn live

        entries = [{**e, "overrides": override_choices(e["name"])} for e in entries]
        return json.dumps(entries, indent=1, ensure_ascii=False)
    width = max((len(e["name"]) for e in entries), default=0)
    return "\n".join(
        f"{e['name']:<{width}}  d{''.join(str(d) for d in e['difficulties'])}  {e['title']}" for e in entries
    )
