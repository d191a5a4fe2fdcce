"""Training-objective problems: next-token cross-entropy and the autoregressive factorisation.

Probabilities from logits come from ``reference.softmax``; the loss is the natural-log ``−log p`` of
the target token. Hand-sized probabilities are multiples of 1/20 so exact forms (``-log(3/20)``)
exist; the known slips are the same formula in base 2, without the minus sign, or on the raw logit.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

import reference
from problemgen.model.core import AnswerPart, Draft, Redraw
from problemgen.misconceptions.catalogue import mistake
from problemgen.problems._common import sentence
from problemgen.problems.concepts import Option, choice_part
from problemgen.model.registry import register

ATOL = 0.005
VOCAB = ("cat", "dog", "mat", "sat", "hat", "car", "sun", "tree")


def _distribution(rng: np.random.Generator, n: int) -> list[Fraction]:
    """n probabilities, multiples of 1/20, each between 1/20 and 17/20, summing to 1."""
    cuts = np.sort(rng.choice(np.arange(1, 20), size=n - 1, replace=False))
    counts = np.diff(np.concatenate([[0], cuts, [20]]))
    return [Fraction(int(c), 20) for c in counts]


def _loss_slips(p: float) -> list:
    """The named slips on −ln p: base-2 logarithm and a dropped minus sign."""
    return [mistake("log_base_wrong", -math.log2(p)), mistake("missing_minus_sign", math.log(p))]


@register("objective.cross_entropy", title="Next-token cross-entropy")
def cross_entropy(rng: np.random.Generator, difficulty: int) -> Draft:
    """−log p of the target from given probabilities (d1), from logits (d2), averaged over positions (d3)."""
    n = 4 if difficulty < 3 else 3
    words = [str(w) for w in rng.choice(VOCAB, size=n, replace=False)]
    if difficulty == 1:
        probs = _distribution(rng, n)
        target = int(rng.integers(n))
        p = probs[target]
        loss = -math.log(p)
        part = AnswerPart("loss", "number", loss, label="the cross-entropy loss in nats", atol=ATOL,
                          exact=f"-log({p})", mistakes=tuple(_loss_slips(float(p))))
        return Draft(params={"words": words, "probs": [float(q) for q in probs], "probs_text": [str(q) for q in probs],
                             "target": target},
                     parts=[part], solution={"p": float(p), "p_text": str(p), "loss": loss})

    positions = 1 if difficulty == 2 else 3
    logits = rng.integers(-2, 4, size=(positions, n)).astype(float)  # (T, V)
    targets = rng.integers(n, size=positions)  # (T,)
    probs = reference.softmax(logits, axis=-1)  # (T, V)
    p = probs[np.arange(positions), targets]  # (T,) probability of each target
    if np.any(p > 0.95) or np.any(np.all(logits == logits[:, :1], axis=-1)):
        raise Redraw("a near-certain or flat prediction hides the slips")
    losses = -np.log(p)  # (T,)
    z = logits[np.arange(positions), targets]  # (T,) target logits
    lse = losses + z  # (T,) log-sum-exp of each row
    exact_terms = [
        f"log({' + '.join(f'exp({int(v)})' for v in row)}) - ({int(zt)})" for row, zt in zip(logits, z)
    ]
    mean = float(losses.mean())
    slips = [mistake("logits_not_normalised", float(-z.mean())),
             mistake("log_base_wrong", float((-np.log2(p)).mean())),
             mistake("missing_minus_sign", -mean)]
    parts = []
    if difficulty == 2:
        parts.append(AnswerPart("prob", "number", float(p[0]), label="the probability of the target", atol=ATOL,
                                exact=f"exp({int(z[0])})/({' + '.join(f'exp({int(v)})' for v in logits[0])})"))
    exact_mean = exact_terms[0] if positions == 1 else f"({' + '.join(f'({t})' for t in exact_terms)})/{positions}"
    parts.append(AnswerPart("loss", "number", mean,
                            label="the loss in nats" if positions == 1 else "the mean loss per position in nats",
                            atol=ATOL, exact=exact_mean, mistakes=tuple(slips)))
    return Draft(
        params={"words": words, "logits": logits, "targets": targets,
                "target_words": [words[t] for t in targets], "positions": positions},
        parts=parts,
        solution={"probs": probs, "p": p, "lse": lse, "losses": losses, "mean": mean, "z": z},
    )


def _short_decimal(x: Fraction) -> bool:
    """True when ``x`` has at most 6 decimal places, so the solution may write "=" rather than "≈"."""
    return (x * 10**6).denominator == 1


def _factor_options() -> list[Option]:
    return [
        Option(r"$P(x_t \mid x_1, \ldots, x_{t-1})$",
               "Each token is predicted from the tokens before it, which is what the causal mask allows.", correct=True),
        Option(r"$P(x_t \mid x_1, \ldots, x_t)$",
               "A token cannot be conditioned on itself: the answer would be visible in the input.",
               misconception="causal_off_by_one"),
        Option(r"$P(x_t \mid x_1, \ldots, x_{t-1}, x_{t+1}, \ldots, x_n)$",
               "Conditioning on both sides is a masked-language-model objective (BERT), not a left-to-right factorisation."),
        Option(r"$P(x_t)$",
               "Dropping the context gives a bag of independent unigram probabilities, not the chain rule."),
    ]


@register("objective.factorisation", title="Autoregressive factorisation")
def factorisation(rng: np.random.Generator, difficulty: int) -> Draft:
    """Which conditional each token contributes (choice) and the sequence probability or its NLL."""
    n = 3 if difficulty == 1 else 4
    words = sentence(rng, n)
    cond = [Fraction(int(rng.integers(2, 10)), 10) for _ in range(n)]  # P(x_t | x_<t), tenths
    joint = math.prod(cond, start=Fraction(1))
    parts = [choice_part(rng, _factor_options(), key="factor", label="the factor of token t")]
    nll = -sum(math.log(c) for c in cond)
    if difficulty == 1:
        parts.append(AnswerPart("joint", "number", float(joint), label="the probability of the sentence",
                                rtol=0.005, exact=str(joint)))
    else:
        slips = [mistake("missing_minus_sign", -nll), mistake("log_base_wrong", -math.log2(joint))]
        value, exact, label = nll, f"-log({joint})", "the negative log-likelihood in nats"
        if difficulty == 3:
            slips = [mistake("missing_minus_sign", -nll / n), mistake("log_base_wrong", -math.log2(joint) / n)]
            value, exact, label = nll / n, f"-log({joint})/{n}", "the mean negative log-likelihood per token in nats"
        parts.append(AnswerPart("nll", "number", value, label=label, atol=ATOL, exact=exact, mistakes=tuple(slips)))
        if difficulty == 3:
            ppl = math.exp(nll / n)
            parts.append(AnswerPart("perplexity", "number", ppl, label="the perplexity", rtol=0.005,
                                    exact=f"exp({exact})",
                                    mistakes=(mistake("log_base_wrong", math.exp(-math.log2(joint) / n),
                                                      hint="Perplexity is e to the mean loss in nats, or 2 to the mean loss in bits; do not mix the two."),)))
    return Draft(
        params={"words": words, "cond": [float(c) for c in cond], "cond_text": [str(c) for c in cond], "n": n},
        parts=parts,
        solution={"joint": float(joint), "joint_text": str(joint), "joint_is_short_decimal": _short_decimal(joint),
                  "neglogs": [-math.log(c) for c in cond], "nll": nll,
                  "mean": nll / n, "perplexity": math.exp(nll / n)},
    )
