"""Cost problems: the L × L score matrix, attention FLOPs, growth with sequence length, path length.

Entries, bytes and FLOPs come from ``reference.attention_memory`` and ``reference.attention_flops``
(an ``(m × k)(k × n)`` product costs ``2·m·n·k`` FLOPs, as the prompts state). Known mistakes are the
same calls with one thing wrong: one head instead of all, the factor 2 dropped, ``d_model`` in place
of ``d_k``, a linear instead of a quadratic growth.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np

import reference
from problemgen.model.core import AnswerPart, Draft
from problemgen.misconceptions.catalogue import mistake
from problemgen.problems._common import check_override, counted, override, pick
from problemgen.problems.concepts import Option, choice_part, option_texts
from problemgen.problems.memory import DTYPES, OTHER_BASE, UNITS, three_figures
from problemgen.problems.params import config_params
from problemgen.model.registry import register

RTOL = 0.005


def _config(d_model: int, n_heads: int, n_kv_heads: int | None = None) -> reference.TransformerConfig:
    return reference.TransformerConfig(d_model=d_model, n_heads=n_heads, n_kv_heads=n_kv_heads, position="rope")


# ------------------------------------------------------------------------------------- score matrix


@register("complexity.score_matrix", title="Size of the attention score matrix")
def score_matrix(rng: np.random.Generator, difficulty: int, *, dtype: str | None = None,
                 representation: str | None = None) -> Draft:
    """Entries and bytes of the score matrices: one head (d1), a batch of heads (d2), cross-attention (d3).

    ``representation`` is the unit the memory is asked in (``bytes`` at d1, ``MiB`` or ``MB`` above): it
    shapes the question, so a class set pins it."""
    units = ("bytes",) if difficulty == 1 else ("MiB", "MB")
    check_override("representation", representation, units)
    dtype = override("dtype", dtype, pick(rng, ("fp16", "fp32")), ("fp16", "bf16", "fp32"))
    width = DTYPES[dtype]
    L = pick(rng, tuple(range(32, 1025, 32)) if difficulty == 1 else (512, 1024, 2048, 4096))
    S = pick(rng, [s for s in (256, 512, 768, 1024) if s != L]) if difficulty == 3 else L
    n_heads = 1 if difficulty == 1 else pick(rng, (8, 12, 16))
    batch = 1 if difficulty == 1 else pick(rng, (2, 4, 8))
    cfg = _config(64 * n_heads, n_heads)
    mem = reference.attention_memory(cfg, L, S, batch, width)
    entries, n_bytes = mem["score_entries"], mem["score_bytes"]
    one_head = reference.attention_memory(replace(cfg, n_heads=1), L, S, 1, width)
    linear_entries = batch * n_heads * max(L, S)  # what "attention is linear in length" would predict
    entry_mistakes = [mistake("linear_not_quadratic", linear_entries)]
    if difficulty > 1:
        entry_mistakes.append(mistake("heads_not_counted", one_head["score_entries"]))
    parts = [AnswerPart("entries", "integer", entries, label="the number of score entries",
                        mistakes=tuple(entry_mistakes))]
    other_width = reference.attention_memory(cfg, L, S, batch, 2 if width == 4 else 4)["score_bytes"]
    if difficulty == 1:
        unit = override("representation", representation, "bytes", units)
        parts.append(AnswerPart("bytes", "integer", n_bytes, label="the bytes they occupy", spec=counted("bytes"),
                                mistakes=(mistake("wrong_dtype_bytes", other_width),
                                          mistake("bits_not_bytes", n_bytes * 8))))
    else:
        drawn = ("MiB" if bool(rng.integers(2)) else "MB") if representation is None else None
        unit = override("representation", representation, drawn, units)
        scale = UNITS[unit]
        parts.append(AnswerPart(
            "bytes", "number", n_bytes / scale, label=f"the memory in {unit}", rtol=RTOL,
            exact=str(Fraction(n_bytes, scale)), spec={"unit": unit},
            mistakes=(mistake("wrong_dtype_bytes", other_width / scale),
                      mistake("bits_not_bytes", n_bytes * 8 / scale),
                      mistake("heads_not_counted", one_head["score_bytes"] / scale),
                      mistake("decimal_vs_binary_units", n_bytes / UNITS[OTHER_BASE[unit]]))))
    return Draft(
        params={"L": L, "S": S, "cross": S != L, "n_heads": n_heads, "batch": batch, "dtype": dtype,
                "bytes_per_value": width, "unit": unit, "unit_bytes": UNITS.get(unit, 1)},
        parts=parts,
        solution={"per_head": L * S, "entries": entries, "bytes": n_bytes, "value": n_bytes / UNITS.get(unit, 1),
                  "rounded": three_figures(n_bytes / UNITS.get(unit, 1))},
    )


# ----------------------------------------------------------------------------------------- FLOPs


@register("complexity.flops", title="FLOPs of attention")
def flops(rng: np.random.Generator, difficulty: int) -> Draft:
    """FLOPs of QKᵀ (one head at d1, all heads and a batch at d2) and of the projections (d2, d3)."""
    if difficulty == 1:
        d_k, L = pick(rng, (8, 16, 32, 48, 64, 80, 96, 128)), pick(rng, tuple(range(16, 513, 16)))
        cfg, batch, S = _config(d_k, 1), 1, L
    else:
        n_heads = pick(rng, (8, 12, 16))
        d_model = 64 * n_heads
        n_kv = pick(rng, [g for g in (1, 2, 4) if n_heads % g == 0]) if difficulty == 3 else None
        cfg, batch = _config(d_model, n_heads, n_kv), pick(rng, (1, 2, 4, 8))
        L = pick(rng, (128, 256, 512, 1024, 2048))
        S = pick(rng, [s for s in (256, 512, 1024) if s != L]) if difficulty == 3 else L
    f = reference.attention_flops(cfg, L, S, batch)
    one_head = reference.attention_flops(replace(cfg, n_heads=1, n_kv_heads=None, head_dim=cfg.d_head), L, S, 1)
    qk_mistakes = [mistake("flops_no_factor_two", f["qk"] // 2)]
    if cfg.n_heads > 1:
        qk_mistakes += [mistake("heads_not_counted", one_head["qk"]),
                        mistake("dk_equals_d_model", reference.attention_flops(
                            replace(cfg, head_dim=cfg.d_model), L, S, batch)["qk"])]
    parts = [AnswerPart("qk", "integer", f["qk"], label="the FLOPs of the score product", spec=counted("FLOPs"),
                        mistakes=tuple(qk_mistakes))]
    if difficulty >= 2:
        key_name = "q_proj" if difficulty == 2 else "projections"
        proj_mistakes = [mistake("flops_no_factor_two", f[key_name] // 2)]
        if cfg.kv_heads < cfg.n_heads:
            proj_mistakes.append(mistake("kv_projection_all_heads", reference.attention_flops(
                replace(cfg, n_kv_heads=None), L, S, batch)[key_name]))
        parts.append(AnswerPart(key_name, "integer", f[key_name],
                                label="the FLOPs of the Q projection" if difficulty == 2 else "the FLOPs of all four projections",
                                spec=counted("FLOPs"), mistakes=tuple(proj_mistakes)))
    return Draft(params={"config": config_params(cfg), "L": L, "S": S, "batch": batch, "cross": S != L},
                 parts=parts, solution={"flops": f})


# -------------------------------------------------------------------------------------- doubling


_FACTORS = (2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 20, 32)
"""How many times longer the sequence becomes."""


@register("complexity.doubling", title="Growth of attention cost with sequence length")
def doubling(rng: np.random.Generator, difficulty: int, *, factor: int | None = None) -> Draft:
    """How the score matrix, QKᵀ FLOPs and projections grow when the sequence gets k times longer.

    Small answer space: at difficulties 1 and 2 the answers are k² and k, functions of the length factor
    k alone (that is the lesson: they do not depend on L or the model), so the variety is the number of
    factors offered."""
    factor = override("factor", factor, 2 if difficulty == 1 else pick(rng, _FACTORS), _FACTORS)
    n_heads = pick(rng, (8, 12, 16, 20, 32))
    cfg = _config(64 * n_heads, n_heads)
    L = pick(rng, tuple(range(128, 4097, 128)) if difficulty < 3
             else (cfg.d_model // 4, cfg.d_model // 2, cfg.d_model, 2 * cfg.d_model, 4 * cfg.d_model))
    before, after = reference.attention_flops(cfg, L), reference.attention_flops(cfg, factor * L)
    mem_before, mem_after = reference.attention_memory(cfg, L), reference.attention_memory(cfg, factor * L)
    scores = Fraction(mem_after["score_entries"], mem_before["score_entries"])
    parts = [AnswerPart("scores", "number", float(scores), label="the growth factor of the score matrix",
                        rtol=RTOL, exact=str(scores), mistakes=(mistake("linear_not_quadratic", float(factor)),))]
    if difficulty == 2:
        proj = Fraction(after["projections"], before["projections"])
        parts.append(AnswerPart("projections", "number", float(proj), label="the growth factor of the projection FLOPs",
                                rtol=RTOL, exact=str(proj)))
    if difficulty == 3:
        total = Fraction(after["total"], before["total"])
        parts.append(AnswerPart("total", "number", float(total), label="the growth factor of all attention FLOPs",
                                rtol=RTOL, exact=str(total),
                                mistakes=(mistake("linear_not_quadratic", float(factor)),)))
    return Draft(
        params={"factor": factor, "L": L, "config": config_params(cfg), "difficulty": difficulty},
        parts=parts,
        solution={"before": before, "after": after, "scores": float(scores),
                  "entries_before": mem_before["score_entries"], "entries_after": mem_after["score_entries"],
                  "projections": after["projections"] / before["projections"], "total": after["total"] / before["total"]},
    )


# ----------------------------------------------------------------------------------- path length

_O1, _ON, _OLOGN, _ON2 = "$O(1)$", "$O(n)$", r"$O(\log n)$", "$O(n^2)$"

_PATH_QUESTIONS = {
    1: {
        "attention_path": [
            Option(_O1, "Any query attends to any key directly, so one layer connects every pair of positions.",
                   correct=True),
            Option(_ON, "That is the recurrent network: information hops through every hidden state in between."),
            Option(_OLOGN, "That is a stack of dilated convolutions or a tree, not self-attention."),
            Option(_ON2, "That is the cost of the score matrix, not the number of steps between two positions."),
            Option(r"$O(\sqrt{n})$", "No standard layer has this path length; attention needs no intermediate hops."),
        ],
        "rnn_path": [
            Option(_ON, "A signal from the first token passes through every hidden state up to the last.", correct=True),
            Option(_O1, "That is self-attention, where every position reads every other one directly."),
            Option(_OLOGN, "Only tree-shaped or dilated architectures shorten the path to a logarithm."),
            Option(_ON2, "The path visits each position once; nothing is repeated for every pair."),
            Option(r"$O(\sqrt{n})$", "A chain of n states has a path of length proportional to n."),
        ],
    },
    2: {
        "rnn_sequential": [
            Option(_ON, "Each hidden state needs the previous one, so the steps cannot run in parallel.", correct=True),
            Option(_O1, "That describes self-attention, where all positions are processed at once."),
            Option(_OLOGN, "No tree structure shortens a plain recurrence; every step waits for the last."),
            Option(_ON2, "The recurrence visits each position once; nothing is done for every pair."),
            Option(r"$O(n \cdot d)$", "That mixes up work with waiting: the question asks for steps in a chain."),
        ],
        "attention_sequential": [
            Option(_O1, "All queries are scored against all keys in one batch of matrix products.", correct=True),
            Option(_ON, "That is the recurrent network; attention has no chain of dependent steps."),
            Option(_ON2, "The work is quadratic, but it is parallel work, not a chain of steps."),
            Option(_OLOGN, "Attention needs no tree of partial results to connect positions."),
            Option(r"$O(n \cdot d)$", "The question is about steps that must wait for each other, and there are none."),
        ],
    },
    3: {
        "attention_time": [
            Option(r"$O(n^2 \cdot d)$", "Every pair of positions gets a d-dimensional dot product: quadratic in n.",
                   correct=True),
            Option(r"$O(n \cdot d^2)$", "That is the recurrent layer (and the projections): linear in n.",
                   misconception="linear_not_quadratic"),
            Option(r"$O(n \cdot d)$", "Too cheap: even one dot product per pair already costs more than this."),
            Option(r"$O(n^2 \cdot d^2)$", "The pairwise part multiplies $n^2$ by $d$, not by $d^2$."),
            Option(r"$O(n \log n \cdot d)$", "That is the cost of some efficient approximations, not of exact attention."),
        ],
        "attention_memory": [
            Option(_ON2, "The weights form an n by n matrix per head: quadratic in the sequence length.",
                   correct=True),
            Option(_ON, "Linear memory holds only for the per-token vectors; the weight matrix is pairwise.",
                   misconception="linear_not_quadratic"),
            Option(r"$O(n^3)$", "There is one weight per (query, key) pair, not per triple."),
            Option(_O1, "The weight matrix grows with the sequence; only its per-entry size is constant."),
            Option(_OLOGN, "Nothing in exact attention is logarithmic in n."),
        ],
    },
}


@register("complexity.path_length", title="Path length and parallelism: RNN versus attention")
def path_length(rng: np.random.Generator, difficulty: int) -> Draft:
    """Choose the maximum path length, sequential steps or per-layer cost for attention versus an RNN."""
    question = pick(rng, sorted(_PATH_QUESTIONS[difficulty]))
    part = choice_part(rng, _PATH_QUESTIONS[difficulty][question], label="the complexity")
    return Draft(params={"question": question, "options": option_texts(part)}, parts=[part],
                 solution={"question": question})
