"""Buggy feed-forward networks: the activation replaced or skipped, the SwiGLU gate swapped, biases dropped."""

from __future__ import annotations

import reference as ref


def gelu_tanh(x):
    """The tanh approximation of GELU (gelu_form_confused when the exact form was asked, and back)."""
    return ref.gelu(x, approximate="tanh")


def identity(x):
    """activation_skipped: no nonlinearity."""
    return x


def feed_forward(x, params, kind, *, activation=None, biases=True, swap_gate=False):
    """The FFN with its activation replaceable (None = the one ``kind`` names).

    ``biases=False`` ffn_biases_skipped; ``swap_gate`` swiglu_gate_swapped; ``activation`` relu_for_gelu,
    gelu_form_confused, activation_skipped.
    """
    if kind == "swiglu":
        gate, up = x @ params["w_gate"], x @ params["w_up"]  # (..., d_ff)
        if swap_gate:
            gate, up = up, gate
        act = ref.silu if activation is None else activation
        return (act(gate) * up) @ params["w_down"]  # (..., d)
    act = activation or {"relu": ref.relu, "gelu": ref.gelu, "gelu_tanh": gelu_tanh}[kind]
    hidden = x @ params["w_1"] + (params.get("b_1", 0.0) if biases else 0.0)  # (..., d_ff)
    return act(hidden) @ params["w_2"] + (params.get("b_2", 0.0) if biases else 0.0)  # (..., d)
