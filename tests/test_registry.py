"""The registry: (kind, seed, difficulty, overrides) -> Problem, deterministic, validated, redrawn when degenerate."""

from __future__ import annotations

import pytest

from problemgen.model import registry
from problemgen.model.core import AnswerPart, Draft, ProblemgenError, Redraw
from problemgen.misconceptions.catalogue import mistake


def test_the_same_identity_rebuilds_the_same_problem_and_seeds_differ():
    a = registry.generate("attention.weights", 11, 2)
    assert a == registry.generate("attention.weights", 11, 2)
    assert a.params != registry.generate("attention.weights", 12, 2).params


def test_unknown_kinds_suggest_the_closest_name():
    with pytest.raises(ProblemgenError, match="did you mean 'attention.weights'"):
        registry.generate("atention.weights", 0)


def test_overrides_are_checked_against_the_generator_signature():
    with pytest.raises(ProblemgenError, match="has no override 'nonsense'; allowed: L, d_k, S"):
        registry.generate("attention.weights", 0, nonsense=3)


@pytest.mark.parametrize("difficulty", [0, 4])
def test_difficulty_outside_the_kind_range_is_refused(difficulty):
    with pytest.raises(ProblemgenError, match="difficulties"):
        registry.generate("attention.weights", 0, difficulty)


def test_negative_seeds_are_refused():
    with pytest.raises(ProblemgenError, match="seed"):
        registry.generate("attention.weights", -1)


def fake_kind(monkeypatch, make):
    spec = registry.KindSpec("fake.kind", "Fake", make)
    monkeypatch.setitem(registry._REGISTRY, "fake.kind", spec)
    return spec


def test_degenerate_draws_and_indistinguishable_mistakes_are_redrawn(monkeypatch):
    attempts = []

    def make(rng, difficulty):
        attempts.append(1)
        if len(attempts) == 1:
            raise Redraw("saturated")
        clash = 1.0 if len(attempts) == 2 else 2.0  # the second draw's mistake equals the key
        part = AnswerPart("x", "number", 1.0, atol=0.01, mistakes=(mistake("no_scaling", clash),))
        return Draft({"n": len(attempts)}, [part])

    fake_kind(monkeypatch, make)
    problem = registry.generate("fake.kind", 0)
    assert len(attempts) == 3 and problem.params == {"n": 3}


def test_a_kind_that_is_always_degenerate_fails_with_a_clear_error(monkeypatch):
    def make(rng, difficulty):
        raise Redraw("always")

    fake_kind(monkeypatch, make)
    with pytest.raises(ProblemgenError, match=r"could not draw a usable variant of 'fake.kind' .* \(always\)"):
        registry.generate("fake.kind", 0)


def test_an_override_one_draw_refuses_is_drawn_again_and_draws_that_fit_are_unchanged(monkeypatch):
    """An override's fit can depend on the draw (d_model = 512 takes h = 8, not h = 40): a bank that validated
    on seed 0 failed at whichever student's seed drew the other."""
    def make(rng, difficulty, *, n=None):
        drawn = int(rng.integers(1, 4))
        if n is not None and n % drawn:
            raise ProblemgenError(f"n={n} does not split into {drawn}")
        return Draft({"drawn": drawn}, [AnswerPart("x", "integer", drawn)])

    fake_kind(monkeypatch, make)
    for seed in range(30):
        free, pinned = registry.generate("fake.kind", seed), registry.generate("fake.kind", seed, n=2)
        assert pinned.params["drawn"] in (1, 2)
        if free.params["drawn"] in (1, 2):  # the first draw fits: the same variant as before
            assert pinned.params == free.params


def test_a_real_overridden_width_builds_at_every_seed():
    for seed in range(40):
        problem = registry.generate("multihead.head_dim", seed, 1, d_model=512)
        assert 512 % problem.params["heads"] == 0


def test_an_override_every_draw_refuses_alike_is_that_refusal_and_none_usable_says_why():
    with pytest.raises(ProblemgenError, match=r"^override d_k=0 is not allowed; choose one of 2, 3, 4, 8, 9, 16$"):
        registry.generate("attention.weights", 0, d_k=0)
    with pytest.raises(ProblemgenError, match=r"^no usable variant of 'multihead.head_dim' at difficulty 1 with heads=1 "
                       r"in 200 draws \(the known mistake '.*' gives the key's own value on part '.*'\); choose other"):
        registry.generate("multihead.head_dim", 0, 1, heads=1)


def test_every_registered_kind_is_named_topic_dot_skill_after_its_module():
    for spec in registry.all_kinds():
        assert spec.topic in registry.topic_modules()
        assert spec.make.__module__ == f"problemgen.problems.{spec.topic}"


def test_an_override_refusal_keeps_its_name_when_a_worker_process_sends_it_back():
    """A class set's workers return errors pickled; an exception whose arguments differ from its constructor's
    cannot be unpickled, and the parent would see a TypeError instead of the refusal."""
    import pickle

    from problemgen.model.overrides import OverrideValueError

    with pytest.raises(OverrideValueError) as refused:
        registry.generate("attention.weights", 0, d_k=0)
    copy = pickle.loads(pickle.dumps(refused.value))
    assert (type(copy), str(copy), copy.name) == (OverrideValueError, str(refused.value), "d_k")
