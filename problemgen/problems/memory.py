"""KV-cache memory problems: bytes of the cache for a config, and what grouped-query attention saves.

Every size is ``reference.kv_cache_bytes(config, seq_len, batch, bytes_per_value)``; each known
mistake is the same call with one argument wrong (only K or V, the wrong dtype, all query heads
instead of the KV heads, one layer) or the right bytes converted with the wrong unit.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

import numpy as np

import reference
from problemgen.model.core import AnswerPart, Draft, ProblemgenError
from problemgen.misconceptions.catalogue import mistake
from problemgen.problems._common import (ATTENTION_FORMS, attention_form, check_override, counted, override, pick,
                                         presets_of_form)
from problemgen.problems.params import config_params, preset_params
from problemgen.model.registry import register

RTOL = 0.005
"""Sizes in MiB/GiB/MB/GB are accepted within 0.5 % (three significant figures)."""

DTYPES = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1}
UNITS = {"MiB": 2**20, "GiB": 2**30, "MB": 10**6, "GB": 10**9}
OTHER_BASE = {"MiB": "MB", "GiB": "GB", "MB": "MiB", "GB": "GiB"}
CACHE_PRESETS = ("gpt2-small", "gpt2-xl", "llama-2-7b", "llama-3-8b", "mistral-7b", "qwen3-4b")


def _custom_config(rng: np.random.Generator, *, gqa: bool, form: str | None = None) -> reference.TransformerConfig:
    """A small decoder for hand computation; grouped-query attention when ``gqa`` (a group as large as all
    heads is plain multi-head attention, so ``form="gqa"``, a class set's pinned form, leaves it out)."""
    n_heads = pick(rng, (4, 8, 12, 16))
    d_head = pick(rng, (32, 64, 128))
    kv = pick(rng, [g for g in (1, 2, 4) if n_heads % g == 0 and (g < n_heads or form != "gqa")]) if gqa else None
    return reference.TransformerConfig(
        d_model=n_heads * d_head, n_heads=n_heads, n_kv_heads=kv, n_decoder_layers=pick(rng, (2, 4, 6, 12, 24)),
        position="rope",
    )


def _within_context(cfg: reference.TransformerConfig, seq_len: int) -> int:
    """A real model never caches more tokens than its context window holds."""
    return seq_len if cfg.name == "custom" else min(seq_len, cfg.max_positions)


def _unit_for(n_bytes: int, rng: np.random.Generator) -> str:
    """A binary or decimal unit that keeps the answer between about 0.1 and 10,000."""
    binary = bool(rng.integers(2))
    if n_bytes >= 2**30:
        return "GiB" if binary else "GB"
    return "MiB" if binary else "MB"


def _units(difficulty: int) -> tuple[str, ...]:
    """The units a KV-cache size may be asked in: exact bytes at difficulty 1, else a memory unit."""
    return ("bytes",) if difficulty == 1 else tuple(UNITS)


def _in_unit(n_bytes: int, unit: str) -> float:
    return n_bytes / UNITS[unit]


def three_figures(x: float) -> float:
    """``x`` rounded to the 3 significant figures the prompts ask for (402.6532 -> 403.0).

    Solutions show this next to the exact byte count ("402653184 bytes, about 403 MB"), so the worked
    answer has the precision the student was asked for. A half rounds up, as students are taught
    (11.25 MiB -> 11.3), where Python's formatting would round it to even (11.2).
    """
    if x == 0:
        return 0.0
    exact = Decimal(x)  # the float's exact value: 11.25 is 11.25, 0.1 is a little above a tenth
    return float(exact.quantize(Decimal(1).scaleb(exact.adjusted() - 2), rounding=ROUND_HALF_UP))


def _other_dtype(dtype: str) -> int:
    """The byte width a student most often confuses with this dtype's."""
    return {"fp32": 2, "fp16": 4, "bf16": 4, "int8": 2}[dtype]


def _cache_mistakes(cfg, seq_len: int, batch: int, dtype: str, convert) -> list:
    """The named slips for a KV-cache size, each the reference size of one wrong computation."""
    width = DTYPES[dtype]
    size = reference.kv_cache_bytes(cfg, seq_len, batch, width)
    found = [mistake("kv_not_both_cached", convert(size // 2)), mistake("bits_not_bytes", convert(size * 8))]
    if _other_dtype(dtype) * 2 != width:  # fp32 read as 2 bytes halves the size: the same answer as caching K only
        found.append(mistake("wrong_dtype_bytes", convert(reference.kv_cache_bytes(cfg, seq_len, batch, _other_dtype(dtype)))))
    if cfg.n_decoder_layers > 1:
        found.append(mistake("layers_forgotten", convert(reference.kv_cache_bytes(
            replace(cfg, n_decoder_layers=1), seq_len, batch, width))))
    if cfg.kv_heads < cfg.n_heads:
        found.append(mistake("gqa_ignored", convert(reference.kv_cache_bytes(
            replace(cfg, n_kv_heads=None), seq_len, batch, width))))
    return found


@register("memory.kv_cache", title="KV-cache size")
def kv_cache(rng: np.random.Generator, difficulty: int, *, preset: str | None = None, dtype: str | None = None,
             form: str | None = None, representation: str | None = None) -> Draft:
    """Bytes of the KV cache for a config, sequence length, batch and dtype (GiB vs GB stated).

    Overrides that shape the question, so a class set pins them: ``form``, with or without grouped-query
    attention (``mha``/``gqa``), and ``representation``, the unit asked (``bytes`` at d1, else MiB, GiB,
    MB or GB)."""
    override("preset", preset, None, CACHE_PRESETS)
    override("dtype", dtype, None, sorted(DTYPES))
    forms = ("mha",) if difficulty == 1 and not preset else ATTENTION_FORMS
    check_override("form", form, forms)
    check_override("representation", representation, _units(difficulty))
    if preset or difficulty == 3:
        cfg = reference.PRESETS[preset or pick(rng, presets_of_form(CACHE_PRESETS, form))]
    else:
        drawn = difficulty == 2 and bool(rng.integers(2))
        cfg = _custom_config(rng, gqa=drawn if form is None else form == "gqa", form=form)
    if form not in (None, attention_form(cfg)):
        raise ProblemgenError(f"the preset {preset} has form={attention_form(cfg)}, not form={form}")
    override("form", form, attention_form(cfg), forms)
    dtype = dtype or ("fp16" if difficulty == 1 else pick(rng, sorted(DTYPES)))
    seq_len = pick(rng, (128, 256, 512, 1024) if difficulty == 1 else (1024, 2048, 4096, 8192) if difficulty == 2
                    else (4096, 8192, 32768))
    seq_len = _within_context(cfg, seq_len)
    batch = 1 if difficulty == 1 else pick(rng, (1, 2, 4, 8, 16))
    size = reference.kv_cache_bytes(cfg, seq_len, batch, DTYPES[dtype])

    if difficulty == 1:
        unit = override("representation", representation, "bytes", _units(difficulty))
        part = AnswerPart("size", "integer", size, label="the KV-cache size in bytes", spec=counted("bytes"),
                          mistakes=tuple(_cache_mistakes(cfg, seq_len, batch, dtype, int)))
    else:
        unit = override("representation", representation, _unit_for(size, rng) if representation is None else None,
                        _units(difficulty))

        def convert(n_bytes: int) -> float:
            return _in_unit(n_bytes, unit)

        mistakes = _cache_mistakes(cfg, seq_len, batch, dtype, convert)
        mistakes.append(mistake("decimal_vs_binary_units", _in_unit(size, OTHER_BASE[unit])))
        part = AnswerPart("size", "number", convert(size), label=f"the KV-cache size in {unit}", rtol=RTOL,
                          exact=str(Fraction(size, UNITS[unit])), spec={"unit": unit}, mistakes=tuple(mistakes))
    per_token = reference.kv_cache_bytes(cfg, 1, 1, DTYPES[dtype])
    return Draft(
        params={"config": config_params(cfg)} | preset_params(cfg) | {
                "seq_len": seq_len, "batch": batch, "dtype": dtype, "bytes_per_value": DTYPES[dtype], "unit": unit,
                "unit_bytes": UNITS.get(unit, 1)},
        parts=[part],
        solution={"per_token": per_token, "bytes": size, "value": size / UNITS.get(unit, 1),
                  "rounded": three_figures(size / UNITS.get(unit, 1))},
    )


@register("memory.gqa_savings", title="KV-cache savings from grouped-query attention")
def gqa_savings(rng: np.random.Generator, difficulty: int, *, n_kv_heads: int | None = None) -> Draft:
    """Going from multi-head to grouped-query (or multi-query) attention: the ratio and the bytes saved."""
    if difficulty == 3:
        cfg = reference.PRESETS[pick(rng, ("llama-3-8b", "mistral-7b", "qwen3-4b"))]
    else:
        cfg = _custom_config(rng, gqa=False)
        kv_options = [g for g in (1, 2, 4) if cfg.n_heads % g == 0 and g < cfg.n_heads]
        override("n_kv_heads", n_kv_heads, None, kv_options)
        cfg = replace(cfg, n_kv_heads=n_kv_heads or (1 if difficulty == 1 else pick(rng, kv_options)))
    mha = replace(cfg, n_kv_heads=None)
    seq_len = pick(rng, (512, 1024, 2048, 4096) if difficulty == 1 else (1024, 2048, 4096, 8192, 16384, 32768))
    seq_len = _within_context(cfg, seq_len)
    batch = 1 if difficulty == 1 else pick(rng, (2, 3, 4, 6, 8, 16))
    width = 2
    gqa_bytes = reference.kv_cache_bytes(cfg, seq_len, batch, width)
    mha_bytes = reference.kv_cache_bytes(mha, seq_len, batch, width)
    saved = mha_bytes - gqa_bytes
    unit = "MiB" if difficulty < 3 else "GiB"
    ratio = Fraction(mha_bytes, gqa_bytes)
    parts = [
        AnswerPart("ratio", "number", float(ratio), label="how many times smaller the GQA cache is", rtol=RTOL,
                   exact=str(ratio)),
        AnswerPart("saved", "number", _in_unit(saved, unit), label=f"the memory saved in {unit}", rtol=RTOL,
                   exact=str(Fraction(saved, UNITS[unit])), spec={"unit": unit},
                   mistakes=(mistake("kv_not_both_cached", _in_unit(saved // 2, unit)),
                             mistake("decimal_vs_binary_units", _in_unit(saved, OTHER_BASE[unit])))),
    ]
    return Draft(
        params={"config": config_params(cfg)} | preset_params(cfg) | {
                "seq_len": seq_len, "batch": batch, "unit": unit, "unit_bytes": UNITS[unit]},
        parts=parts,
        solution={"mha_bytes": mha_bytes, "gqa_bytes": gqa_bytes, "saved": saved, "ratio": float(ratio),
                  "mha": _in_unit(mha_bytes, unit), "gqa": _in_unit(gqa_bytes, unit), "saved_value": _in_unit(saved, unit),
                  "rounded": {name: three_figures(_in_unit(n, unit))
                              for name, n in (("mha", mha_bytes), ("gqa", gqa_bytes), ("saved", saved))}},
    )
