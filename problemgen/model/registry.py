"""The kind registry: generators register themselves; ``generate`` turns (kind, seed, overrides) into a Problem.

A new kind is one decorated generator function in ``problemgen/problems/<topic>.py`` plus one template
fragment ``templates/problems/<kind>.j2`` (the whole path, test and curriculum line included, is in README.md,
"Adding a problem kind"). The generator is pure:

    @register("attention.weights", title="Attention weights")
    def weights(rng, difficulty, *, L=None):
        ...
        return Draft(params, parts, solution)

It receives a ``numpy.random.Generator`` and the difficulty (1–3); keyword-only parameters are the
overrides it accepts. It raises ``Redraw`` for degenerate draws. ``generate`` also redraws any variant in
which a listed mistake cannot be told apart from the key (rule 5 of the house plan).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import zlib
from dataclasses import dataclass, replace
from typing import Callable

from problemgen.model import overrides as watch
from problemgen.model.summaries import docstring_summary
from problemgen.model.core import Draft, Mistake, Problem, ProblemgenError, Redraw, to_jsonable, values_match
from problemgen.model.streams import stream
from problemgen.wording import suggest

MAX_ATTEMPTS = 200
GENERATORS = "problemgen.problems"
"""The package of topic modules; each registers its kinds on import. The registry finds them by name at
run time (``problemgen.problems.index.topic_modules``), so the model never imports its content."""


@dataclass(frozen=True)
class KindSpec:
    """A registered kind: its name (``topic.skill``), title, difficulties and generator."""

    name: str
    title: str
    make: Callable[..., Draft]
    difficulties: tuple[int, ...] = (1, 2, 3)
    summary: str = ""

    @property
    def topic(self) -> str:
        return self.name.split(".", 1)[0]

    @functools.cached_property
    def override_names(self) -> tuple[str, ...]:
        signature = inspect.signature(self.make)
        return tuple(
            p.name for p in signature.parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY
        )


_REGISTRY: dict[str, KindSpec] = {}
_loaded = False


def register(name: str, *, title: str, difficulties: tuple[int, ...] = (1, 2, 3), summary: str = ""):
    """Decorator registering a generator under ``name`` (``topic.skill``)."""

    def decorate(make: Callable[..., Draft]) -> Callable[..., Draft]:
        if name in _REGISTRY:
            raise ValueError(f"kind {name!r} registered twice")
        if "." not in name:
            raise ValueError(f"kind {name!r} must be named topic.skill")
        _REGISTRY[name] = KindSpec(name, title, make, tuple(difficulties), summary or docstring_summary(make.__doc__))
        return make

    return decorate


def load_all() -> None:
    """Import every topic module so its kinds register (idempotent)."""
    global _loaded
    if _loaded:
        return
    for topic in topic_modules():
        importlib.import_module(f"{GENERATORS}.{topic}")
    _loaded = True


def topic_modules() -> list[str]:
    """The topic modules present in the generators package (discovered, never listed by hand)."""
    return importlib.import_module(f"{GENERATORS}.index").topic_modules()


def all_kinds(topic: str | None = None) -> list[KindSpec]:
    """Registered kinds sorted by name, optionally filtered by topic."""
    load_all()
    kinds = sorted(_REGISTRY.values(), key=lambda spec: spec.name)
    return [k for k in kinds if topic is None or k.topic == topic]


def get_kind(name: str) -> KindSpec:
    """Look a kind up, with a did-you-mean suggestion in the error.

    Only the kind's own topic module is imported on the way (``attention.weights`` lives in
    ``problemgen.problems.attention``), so showing or quizzing one kind does not pay for every
    generator's imports; an unknown name loads them all to suggest the closest one.
    """
    topic = name.split(".", 1)[0]
    if name not in _REGISTRY and topic in topic_modules():
        importlib.import_module(f"{GENERATORS}.{topic}")
    if name in _REGISTRY:
        return _REGISTRY[name]
    load_all()
    raise ProblemgenError(f"unknown kind {name!r}{suggest(name, sorted(_REGISTRY))}")


def no_such_override(spec: KindSpec, names: list[str]) -> str:
    """The message for override names a kind does not take, with the closest name to a single one: the same
    words from ``show --set`` and from a bank."""
    named = f"override {names[0]!r}{suggest(names[0], list(spec.override_names))}" if len(names) == 1 \
        else f"overrides {', '.join(map(repr, names))}"
    return f"kind {spec.name!r} has no {named}; allowed: {', '.join(spec.override_names) or 'none'}"


def rng_for(kind: str, seed: int, attempt: int):
    """The deterministic random stream of one draw: independent per kind, seed and attempt (on a named
    bit generator, so a stored seed draws the same numbers under later numpy versions: see ``streams``)."""
    return stream([zlib.crc32(kind.encode()), int(seed), attempt])


def generate(kind: str, /, seed: int, difficulty: int | None = None, **overrides) -> Problem:
    """Build the Problem for (kind, seed, difficulty, overrides); pure and deterministic.

    ``kind`` is positional only, so a kind may take an override of that name (``params.ffn_layer``
    pins its feed-forward ``kind``)."""
    spec = get_kind(kind)
    difficulty = spec.difficulties[0] if difficulty is None else int(difficulty)
    if difficulty not in spec.difficulties:
        raise ProblemgenError(f"kind {kind!r} has difficulties {list(spec.difficulties)}, not {difficulty}")
    unknown = sorted(set(overrides) - set(spec.override_names))
    if unknown:
        raise ProblemgenError(no_such_override(spec, unknown))
    if not isinstance(seed, int) or seed < 0:
        raise ProblemgenError(f"seed must be a non-negative integer, not {seed!r}")
    refusals: list[ProblemgenError] = []
    last_reason = ""
    for attempt in range(MAX_ATTEMPTS):
        watch.new_attempt()
        try:
            draft = spec.make(rng_for(kind, seed, attempt), difficulty, **overrides)
        except Redraw as exc:
            last_reason = str(exc)
            continue
        except ProblemgenError as exc:
            if not overrides:
                raise
            refusals.append(exc)  # the value may fit another draw (d_model=512 with h=8, not h=40): draw again
            continue
        problem = _freeze(spec, seed, difficulty, overrides, draft)
        clashes = indistinguishable_mistakes(problem)
        if not clashes:
            watch.attempt_succeeded()
            return problem
        last_reason = _clash_reason(clashes[0])
    raise _no_variant(spec.name, difficulty, overrides, refusals, last_reason)


def _clash_reason(clash: tuple[str, str]) -> str:
    part, mistake = clash
    if "=" in mistake:
        first, second = mistake.split("=", 1)
        return f"the known mistakes {first!r} and {second!r} give one value on part {part!r}"
    return f"the known mistake {mistake!r} gives the key's own value on part {part!r}"


def _no_variant(kind: str, difficulty: int, overrides: dict, refusals: list[ProblemgenError], reason: str) -> ProblemgenError:
    """The error when no draw of MAX_ATTEMPTS worked: the refusal itself when every draw refused the overrides
    alike (``d_k=0``), else what kept the draws from a variant the grader can use."""
    if refusals and len(refusals) == MAX_ATTEMPTS and len({str(e) for e in refusals}) == 1:
        return refusals[0]
    why = "; ".join(filter(None, (f"e.g. {refusals[-1]}" if refusals else "", reason))) or "degenerate numbers"
    if not overrides:  # a kind that cannot draw on its own: a bug, reported as plainly
        return ProblemgenError(f"could not draw a usable variant of {kind!r} at difficulty {difficulty} "
                               f"in {MAX_ATTEMPTS} draws ({why})")
    given = ", ".join(f"{name}={value!r}" for name, value in sorted(overrides.items()))
    return ProblemgenError(f"no usable variant of {kind!r} at difficulty {difficulty} with {given} in {MAX_ATTEMPTS} "
                           f"draws ({why}); choose other values, or leave more to be drawn")


def override_choices(kind: str) -> dict[str, list | str]:
    """Every override of ``kind`` with its allowed values, discovered by drawing each difficulty once.

    An override the generator accepts but never validates through the shared helper is listed as
    ``"any"`` (its meaning is in the generator's docstring).
    """
    spec = get_kind(kind)
    with watch.watching() as seen:
        for difficulty in spec.difficulties:
            generate(kind, 0, difficulty)
    return {name: seen.allowed.get(name, "any") for name in spec.override_names}


def draw_choices(kind: str, /, seed: int, difficulty: int | None = None, **overrides) -> tuple[Problem, dict]:
    """(problem, the override values its successful draw used): what a class set pins for fairness."""
    with watch.watching() as seen:
        problem = generate(kind, seed, difficulty, **overrides)
    return problem, dict(seen.chosen)


def _freeze(spec: KindSpec, seed: int, difficulty: int, overrides: dict, draft: Draft) -> Problem:
    return Problem(
        kind=spec.name,
        seed=seed,
        difficulty=difficulty,
        overrides=to_jsonable(dict(sorted(overrides.items()))),
        title=spec.title,
        topic=spec.topic,
        params=to_jsonable(draft.params),
        parts=tuple(_freeze_part(p) for p in draft.parts),
        solution=to_jsonable(draft.solution),
    )


def _freeze_part(part):
    mistakes = tuple(Mistake(m.name, to_jsonable(m.value), m.hint) for m in part.mistakes)
    return replace(part, value=to_jsonable(part.value), spec=to_jsonable(part.spec), mistakes=mistakes)


def indistinguishable_mistakes(problem: Problem) -> list[tuple[str, str]]:
    """(part key, mistake name) pairs the grader could not tell apart: a mistake whose value is the key's,
    or two differently named mistakes with one value (the answer could not say which was made, so the
    variant is redrawn rather than given a hint that covers both)."""
    clashes = []
    for part in problem.parts:
        for i, mistake in enumerate(part.mistakes):
            if values_match(part, mistake.value):
                clashes.append((part.key, mistake.name))
            clashes += [(part.key, f"{mistake.name}={other.name}") for other in part.mistakes[i + 1 :]
                        if other.name != mistake.name and _same_value(part, other.value, mistake.value)]  # fmt: skip
    return clashes


def _same_value(part, a, b) -> bool:
    try:
        return values_match(part, a, b)
    except (TypeError, ValueError, ArithmeticError):
        return False
