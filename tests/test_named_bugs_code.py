"""Every common bug collected from real implementations is named by its tag when a coding task grades it.

Each submission below is written here, independently of the task's solution and mutants (a loop
where they vectorise, another library idiom), so a diagnosis that only recognises the mutant's exact
arithmetic fails. A crash is reported with the line it happened on and no stage claimed.
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from problemgen.code.grade import grade_submission, make_plan
from problemgen.code.sandbox import Limits, Sandbox
from problemgen.code.tasks import get_task

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux")

SINUSOIDAL_LOOP = '''
import math
import numpy as np

def sinusoidal_encoding(n_positions, d_model):
    pe = np.zeros((n_positions, d_model))
    for pos in range(n_positions):
        for i in range(d_model):  # i is the column here, yet the formula's 2i is used as if it were the pair
            angle = pos / 10000 ** (2 * i / d_model)
            pe[pos, i] = math.sin(angle) if i % 2 == 0 else math.cos(angle)
    return pe
'''

SINUSOIDAL_HALVES = '''
import numpy as np

def sinusoidal_encoding(n_positions, d_model):
    freqs = np.exp(-np.log(10000.0) * np.arange(0, d_model, 2) / d_model)
    angles = np.outer(np.arange(n_positions), freqs)
    return np.hstack([np.sin(angles), np.cos(angles)])
'''

SINUSOIDAL_FLOAT32 = '''
import numpy as np

def sinusoidal_encoding(n_positions, d_model):
    pe = np.zeros((n_positions, d_model), dtype=np.float32)
    position = np.arange(n_positions, dtype=np.float32)[:, None]
    div = np.exp(np.arange(0, d_model, 2, dtype=np.float32) * (-np.log(np.float32(10000.0)) / d_model))
    pe[:, 0::2] = np.sin(position * div)
    pe[:, 1::2] = np.cos(position * div)
    return pe
'''

RMS_NO_EPS = '''
import numpy as np

def rms_norm(x, gamma, eps=1e-6):
    rms = np.sqrt(np.mean(np.square(x), axis=-1, keepdims=True))
    return x / rms * gamma
'''

LN_TEMPLATE = '''
import numpy as np

def layer_norm(x, gamma, beta, eps=1e-5):
    mu = np.mean(x, axis=-1, keepdims=True)
    sigma = np.std(x, axis=-1, keepdims=True, ddof={ddof})
    return gamma * (x - mu) / {denominator} + beta
'''

SOFTMAX_BASE2 = '''
import numpy as np

def softmax(x, axis=-1):
    z = x - x.max(axis=axis, keepdims=True)
    p = np.exp2(z)
    return p / p.sum(axis=axis, keepdims=True)
'''

SOFTMAX_NAIVE = '''
import numpy as np

def softmax(x, axis=-1):
    return np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True)
'''

CAUSAL_TRIU = '''
import numpy as np

def causal_mask(L, S=None, align="top-left"):
    S = L if S is None else S
    shift = S - L if align == "bottom-right" else 0
    return np.triu(np.ones((L, S), dtype=bool), k=shift)
'''

CAUSAL_TOP_LEFT_ALWAYS = '''
import numpy as np

def causal_mask(L, S=None, align="top-left"):
    S = L if S is None else S
    return np.tril(np.ones((L, S))).astype(bool)
'''

SDPA_TIMES_SQRT = '''
import math
import numpy as np

def scaled_dot_product_attention(q, k, v, mask=None):
    scores = np.matmul(q, np.swapaxes(k, -2, -1)) * math.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, float("-inf"))
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return np.matmul(w, v), w
'''

MHA_TEMPLATE = '''
import numpy as np

def split_heads(x, n_heads):
    B, L, D = x.shape
    {split}

def merge_heads(x):
    B, h, L, d = x.shape
    {merge}

def _softmax(s):
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)

def multi_head_attention(x_q, x_kv, params, n_heads, mask=None):
    w_q, w_k, w_v = (params[n]{transpose} for n in ("w_q", "w_k", "w_v"))
    w_o = params["w_o"]{transpose}
    Q, K, V = split_heads(x_q @ w_q, n_heads), split_heads(x_kv @ w_k, n_heads), split_heads(x_kv @ w_v, n_heads)
    s = np.einsum("bhld,bhsd->bhls", Q, K) / np.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(np.expand_dims(mask, -3), s, -np.inf)
    a = _softmax(s)
    return merge_heads(a @ V) @ w_o{o_transposed}, a
'''
MHA_RIGHT = {"split": "return np.moveaxis(x.reshape(B, L, n_heads, D // n_heads), 2, 1)",
             "merge": "return np.moveaxis(x, 1, 2).reshape(B, L, h * d)",
             "transpose": "", "o_transposed": ""}  # fmt: skip

MHA_GQA_TILED = '''
import numpy as np

def split_heads(x, n_heads):
    B, L, D = x.shape
    return x.reshape(B, L, n_heads, -1).swapaxes(1, 2)

def merge_heads(x):
    B, h, L, d = x.shape
    return x.swapaxes(1, 2).reshape(B, L, h * d)

def multi_head_attention(x_q, x_kv, params, n_heads, mask=None, n_kv_heads=None):
    n_kv = n_kv_heads or n_heads
    q = split_heads(x_q @ params["w_q"], n_heads)
    k = split_heads(x_kv @ params["w_k"], n_kv)
    v = split_heads(x_kv @ params["w_v"], n_kv)
    k = np.concatenate([k] * (n_heads // n_kv), axis=1)  # heads cycled: 0, 1, 0, 1 instead of 0, 0, 1, 1
    v = np.concatenate([v] * (n_heads // n_kv), axis=1)
    s = q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(np.asarray(mask)[:, None] if np.ndim(mask) == 3 else mask, s, -np.inf)
    a = np.exp(s - s.max(-1, keepdims=True))
    a = a / a.sum(-1, keepdims=True)
    return merge_heads(a @ v) @ params["w_o"], a
'''

COUNT_WITH_BIASES = '''
def count_parameters(config):
    d, h, kv = config["d_model"], config["n_heads"], config["n_kv_heads"]
    hd = d // h
    L = config["n_layers"]
    emb = config["vocab_size"] * d + (config["max_positions"] * d if config["position"] == "learned" else 0)
    # every linear layer gets a bias, whatever config["bias"] says
    attn = L * ((d * d + d) * 2 + (d * kv * hd + kv * hd) * 2)
    n_mat = 3 if config["ffn"] == "swiglu" else 2
    ffn = L * (n_mat * d * config["d_ff"] + (n_mat - 1) * config["d_ff"] + d)
    norms = (2 * L + 1) * (2 * d if config["norm"] == "layer" else d)
    head = 0 if config["tie_embeddings"] else config["vocab_size"] * d
    return {"embeddings": emb, "attention": attn, "ffn": ffn, "norms": norms, "head": head,
            "total": emb + attn + ffn + norms + head}
'''

KV_TEMPLATE = '''
import numpy as np

def _heads(x, h):
    B, T, D = x.shape
    return x.reshape(B, T, h, D // h).transpose(0, 2, 1, 3)

def kv_cache_step(x_new, params, n_heads, cache_k, cache_v):
    q = _heads(x_new @ params["w_q"], n_heads)
    k = np.concatenate([cache_k, _heads(x_new @ params["w_k"], n_heads)], axis=-2)
    v = np.concatenate([cache_v, _heads(x_new @ params["w_v"], n_heads)], axis=-2)
    t = x_new.shape[1]
    s = q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1])
    {mask_lines}
    s = s - s.max(-1, keepdims=True)
    a = np.exp(s)
    a = a / a.sum(-1, keepdims=True)
    B, h, _, d = q.shape
    out = (a @ v).transpose(0, 2, 1, 3).reshape(B, t, h * d) @ params["w_o"]
    return out, k, v
'''
KV_NEW_ONLY = '''mask = np.tril(np.ones((t, t), dtype=bool))
    full = np.zeros((t, k.shape[-2]), dtype=bool)
    full[:, -t:] = mask
    s = np.where(full, s, -np.inf)'''
KV_CRASH = '''mask = np.tril(np.ones((t, t), dtype=bool))
    s = np.where(mask, s, -np.inf)'''

NAMED = [
    ("sinusoidal_encoding", SINUSOIDAL_LOOP, "pe_wrong_frequency_index"),
    ("sinusoidal_encoding", SINUSOIDAL_HALVES, "pe_concatenated"),
    ("sinusoidal_encoding", SINUSOIDAL_FLOAT32, "pe_float32"),
    ("rms_norm", RMS_NO_EPS, "rms_no_eps"),
    ("layer_norm", LN_TEMPLATE.format(ddof=0, denominator="(sigma + eps)"), "eps_outside_sqrt"),
    ("layer_norm", LN_TEMPLATE.format(ddof=1, denominator="np.sqrt(sigma**2 + eps)"), "unbiased_variance"),
    ("layer_norm", LN_TEMPLATE.format(ddof=1, denominator="(sigma + eps)"), "unbiased_variance_eps_outside"),
    ("softmax", SOFTMAX_BASE2, "softmax_wrong_base"),
    ("softmax", SOFTMAX_NAIVE, "softmax_overflow"),
    ("causal_mask", CAUSAL_TRIU, "causal_upper_triangle"),
    ("causal_mask", CAUSAL_TOP_LEFT_ALWAYS, "causal_wrong_alignment"),
    ("scaled_dot_product_attention", SDPA_TIMES_SQRT, "scale_multiplied"),
    ("multi_head_attention", MHA_TEMPLATE.format(**MHA_RIGHT | {"o_transposed": ".T"}), "w_o_transposed"),
    ("multi_head_attention", MHA_TEMPLATE.format(**MHA_RIGHT | {
        "split": "return x.reshape(B, L, D // n_heads, n_heads).transpose(0, 3, 1, 2)",
        "merge": "return x.transpose(0, 2, 3, 1).reshape(B, L, h * d)"}), "heads_split_wrong_axis"),
    ("multi_head_attention", MHA_TEMPLATE.format(**MHA_RIGHT | {"transpose": ".T"}),
     "projection_transposed"),
    ("multi_head_attention", MHA_GQA_TILED, "gqa_repeat_wrong"),
    ("count_parameters", COUNT_WITH_BIASES, "biases_counted_when_none"),
    ("kv_cache_step", KV_TEMPLATE.format(mask_lines=KV_NEW_ONLY), "cache_mask_new_tokens_only"),
]  # fmt: skip


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(Limits(import_timeout=5.0, case_timeout=3.0)) as box:
        yield box


def grade(task: str, source: str, sandbox, tmp_path, secret: str = "named-bugs"):
    path = tmp_path / f"{task}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return grade_submission(make_plan(get_task(task), secret=secret), path, sandbox)


@pytest.mark.parametrize(("task", "source", "tag"), NAMED, ids=[tag for _, _, tag in NAMED])
def test_an_independently_written_bug_is_named_by_its_tag(task, source, tag, sandbox, tmp_path):
    report = grade(task, source, sandbox, tmp_path)
    assert report.score < 1.0
    assert tag in report.meta["misconceptions"], (report.meta["misconceptions"], [r.feedback for r in report.results if not r.passed][:3])


@pytest.mark.parametrize(("task", "source", "tag"), [n for n in NAMED if n[2] in {
    "pe_float32", "rms_no_eps", "softmax_overflow", "unbiased_variance_eps_outside", "cache_mask_new_tokens_only"}],
    ids=lambda v: v if isinstance(v, str) and "\n" not in v else "")  # fmt: skip
def test_the_public_examples_already_show_the_edge_case_bugs(task, source, tag, sandbox, tmp_path):
    """The bugs that only show on edge cases are caught by the public examples, before any hidden test."""
    report = grade(task, source, sandbox, tmp_path)
    public = [r for r in report.results if r.group == "public" and not r.passed]
    assert any(r.mistake == tag for r in public), [r.feedback for r in public]


def test_a_crash_names_the_line_and_claims_no_stage(sandbox, tmp_path):
    """A (t, t) mask for a step with cached tokens raises at the mask: the report says where, not 'cache update'."""
    source = textwrap.dedent(KV_TEMPLATE.format(mask_lines=KV_CRASH))
    report = grade("kv_cache_step", source, sandbox, tmp_path)
    crashed = [r for r in report.results if r.status == "CRASH"]
    assert crashed and any(r.name == "public/cached-and-new" for r in crashed)
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "s = np.where(mask" in text)
    for result in crashed:
        assert f"kv_cache_step.py, line {line}" in result.feedback, result.feedback
        assert "no stage of this call could be compared" in result.feedback
        assert "First diverging stage" not in result.feedback
    assert any(r.passed for r in report.results if r.name == "public/prefill")


def test_a_crash_after_a_wrong_stage_still_names_that_earlier_stage(sandbox, tmp_path):
    """Stages compared before the crash keep their diagnosis: a wrong layer norm, then a crashing attention."""
    from problemgen.code.tasks.mutation import solution_source

    source = solution_source("transformer_block")
    source = source.replace("var = ((x - mean) ** 2).mean(", "var = 2 * ((x - mean) ** 2).mean(", 1)
    source = source.replace("def attention_sublayer(x, params, n_heads, mask=None):",
                            "def attention_sublayer(x, params, n_heads, mask=None):\n    raise RuntimeError('unfinished')", 1)
    report = grade("transformer_block", source, sandbox, tmp_path)
    crashed = [r for r in report.results if r.status == "CRASH" and r.group == "hidden"]
    assert crashed and all("First diverging stage for this input: layer norm" in r.feedback for r in crashed)


@pytest.mark.parametrize("task", ["softmax", "layer_norm", "rms_norm", "sinusoidal_encoding", "kv_cache_step",
                                  "transformer_block", "multi_head_attention", "causal_mask"])
def test_hidden_tests_diagnose_every_bug_the_public_examples_do(task):
    """The public examples show the edge cases; the hidden tests keep covering all of them (and more)."""
    from problemgen.code.tasks.mutation import plans

    public = {v.tag for c in get_task(task).public_cases() for v in c.variants}
    for plan in plans(get_task(task)).values():
        hidden = {v.tag for c in plan.cases if c.group == "hidden" for v in c.variants}
        assert public <= hidden, sorted(public - hidden)
