"""The catalogue's data: every named mistake's tag, title and hint, written once.

Imported by ``problemgen.model.core`` (a Mistake's default hint), so this module imports nothing
from problemgen and no numpy: importing it costs a few dictionaries. The buggy computations that
produce each mistake's value live next door (``attention``, ``multihead``, ``norms``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Misconception:
    """A named mistake: its stable tag (reports, class statistics), what the student did, how to fix it."""

    tag: str
    title: str
    hint: str


_ENTRIES = (
    # --- attention arithmetic
    ("no_scaling", "attention computed without the 1/√d_k scaling",
     "Divide every score by √d_k before the softmax."),
    ("scale_by_dk", "scores divided by d_k instead of √d_k",
     "The scale is the square root of d_k: the standard deviation of q·k, not its variance."),
    ("scale_by_d_model", "scores scaled with d_model instead of the per-head d_k",
     "Scale with the key width of one head, d_k = d_model / h, not the model width."),
    ("softmax_wrong_axis", "softmax taken down the columns (over queries) instead of along each row",
     "Each query's weights form one distribution: normalise along the key axis so every row sums to 1."),
    ("no_softmax", "raw (scaled) scores used as weights without the softmax",
     "Weights must be non-negative and sum to 1: apply the softmax to the scaled scores."),
    ("transpose_scores", "scores computed as K Qᵀ (keys as rows) instead of Q Kᵀ",
     "Row i of the score matrix belongs to query i: S = Q Kᵀ, so S[i, j] = q_i · k_j."),
    ("weights_times_wrong", "output mixed from Q or K instead of V",
     "The weights average the value vectors: output = A V."),
    # --- masks
    ("mask_after_softmax", "mask applied after the softmax instead of before it",
     "Add −∞ (or drop positions) before the softmax; zeroing afterwards leaves rows that no longer sum to 1."),
    ("mask_zero_not_inf", "blocked positions given 0 instead of −∞ in the additive mask",
     "Adding 0 changes nothing; blocked scores need −∞ so that exp(−∞) = 0."),
    ("inverted_mask", "mask polarity inverted (True read as 'blocked')",
     "Here True means 'may attend'. Check which convention the problem states."),
    ("causal_off_by_one", "causal mask shifted by one (the diagonal blocked, or one future token allowed)",
     "Query i may attend to keys j ≤ i — itself included, nothing after it."),
    ("causal_wrong_alignment", "causal mask aligned top-left when queries are the last tokens (KV cache)",
     "With a cache of S keys and L new queries, query i sits at position S − L + i: align bottom-right."),
    ("padding_rows_not_columns", "padding masked along query rows instead of key columns",
     "Padding hides keys: block the padded columns so no query attends to them."),
    # --- multi-head
    ("missing_w_o", "concatenated heads returned without the output projection W_O",
     "After concatenating the heads, multiply by W_O to mix them back into d_model."),
    ("split_without_transpose", "heads split by reshaping without moving the head axis before the sequence axis",
     "Reshape to (B, L, h, d_k) then transpose to (B, h, L, d_k) before computing per-head scores."),
    ("dk_equals_d_model", "per-head width taken as d_model instead of d_model / h",
     "Each of the h heads gets d_k = d_model / h features."),
    ("heads_multiply_params", "parameters multiplied by h as if each head had full-width projections",
     "Splitting into heads partitions one d_model × d_model projection; it does not add parameters."),
    # --- counting and memory
    ("forgot_biases", "bias vectors left out of the count",
     "Each linear layer with a bias adds one parameter per output feature."),
    ("forgot_norm_params", "normalisation parameters (γ, β) left out of the count",
     "LayerNorm has a scale and a shift per feature (RMSNorm only a scale)."),
    ("tied_counted_twice", "tied input and output embeddings counted twice",
     "With tied embeddings the output head reuses the embedding matrix: count it once."),
    ("untied_counted_once", "untied output head left out of the count",
     "Without weight tying the output projection is a separate vocab × d_model matrix."),
    ("kv_not_both_cached", "only keys (or only values) counted in the KV cache",
     "The cache stores both K and V for every layer: there is a factor 2."),
    ("bits_not_bytes", "bits and bytes confused",
     "A 16-bit value takes 2 bytes; divide bit counts by 8."),
    ("wrong_dtype_bytes", "wrong bytes per value for the dtype (e.g. fp32 instead of fp16)",
     "fp32 = 4 bytes, fp16/bf16 = 2 bytes, int8 = 1 byte per value."),
    ("gqa_ignored", "KV cache sized with all query heads instead of the KV heads",
     "With grouped-query attention only the key/value heads are cached, fewer than the query heads."),
    ("swiglu_two_matrices", "SwiGLU FFN counted with two matrices instead of three",
     "SwiGLU has gate, up and down projections: three matrices."),
    ("decimal_vs_binary_units", "decimal and binary units confused (MB and MiB, GB and GiB)",
     "1 MiB = 2²⁰ bytes but 1 MB = 10⁶ bytes (and 1 GiB = 2³⁰, 1 GB = 10⁹): use the unit the problem asks for."),
    # --- norms and layers
    ("unbiased_variance", "LayerNorm computed with the unbiased (n − 1) variance",
     "LayerNorm uses the population variance: divide by n, not n − 1."),
    ("norm_wrong_axis", "normalisation statistics taken over the wrong axis (across tokens)",
     "LayerNorm and RMSNorm normalise each token over its own features (the last axis)."),
    ("rms_subtracts_mean", "RMSNorm computed like LayerNorm (mean subtracted)",
     "RMSNorm divides by the root mean square; it does not centre the vector."),
    ("forgot_residual", "residual connection left out",
     "The sublayer output is added to its input: x + sublayer(x)."),
    ("relu_for_gelu", "ReLU used where the problem asked for GELU",
     "GELU(x) = x·Φ(x) is smooth and lets small negative values through."),
    ("pre_post_ln_swapped", "pre-LN and post-LN order confused",
     "Pre-LN: x + sublayer(LN(x)). Post-LN: LN(x + sublayer(x))."),
    # --- complexity, positions, objective
    ("linear_not_quadratic", "attention cost assumed to grow linearly with sequence length",
     "The score matrix has L × L entries: doubling L quadruples it."),
    ("sin_cos_swapped", "sine and cosine swapped in the positional encoding",
     "Even feature indices use sin, odd ones use cos."),
    ("positions_zero_vs_one", "positions counted from 1 instead of 0",
     "The first token has position 0."),
    ("log_base_wrong", "logarithm taken in base 2 or 10 instead of the natural log",
     "Cross-entropy in nats uses the natural logarithm."),
    ("missing_minus_sign", "cross-entropy written without its minus sign",
     "The loss is −log p: probabilities below 1 give a positive loss."),
    # --- added with the params/memory/complexity/norms/ffn/positional/objective generators
    ("forgot_position_embeddings", "learned position embeddings left out of the count",
     "A learned position table holds one d_model-wide vector per position: positions × d_model parameters."),
    ("layers_forgotten", "only one layer counted where every layer contributes",
     "Every layer has its own copy: multiply by the number of layers."),
    ("heads_not_counted", "only one head (or one sequence) counted where all of them are needed",
     "Every head of every sequence in the batch has its own L × L score matrix."),
    ("flops_no_factor_two", "multiply–adds counted instead of FLOPs (factor 2 missing)",
     "An (m × k)(k × n) product costs 2·m·n·k FLOPs: one multiply and one add per term."),
    ("activation_skipped", "the nonlinearity between the two linear layers left out",
     "Apply the activation to the hidden vector before the second matrix."),
    ("gelu_form_confused", "exact (erf) GELU and its tanh approximation confused",
     "Use the form the problem names: x·Φ(x) with erf, or the tanh formula."),
    ("swiglu_gate_swapped", "SiLU applied to the up projection instead of the gate",
     "SwiGLU is SiLU(x W_gate) ⊙ (x W_up): only the gate goes through the SiLU."),
    ("logits_not_normalised", "raw logit used in place of the log-probability (softmax skipped)",
     "Turn logits into probabilities first: −log softmax(z)_y = logsumexp(z) − z_y."),
    ("pe_wrong_frequency_index", "frequency exponent built from the column index instead of the pair index",
     "Columns 2i and 2i + 1 share one frequency: the exponent is 2i / d_model for both."),
    ("degrees_not_radians", "angle evaluated in degrees instead of radians",
     "The encoding uses sin and cos of angles in radians: set the calculator to RAD."),
    ("permutation_ignored", "outputs assumed to stay in their old order after the tokens were permuted",
     "Self-attention without positions is permutation-equivariant: the outputs move with their tokens."),
    ("scaling_direction_reversed", "unscaled scores believed to make the softmax too flat (they make it too sharp)",
     "Large dot products make one exponential dominate; dividing by √d_k softens a too-peaked softmax."),
    ("permutation_inverted", "the inverse permutation applied to the outputs",
     "Output row i belongs to new input row i: if new row i is old token π(i), so is output row i."),
    # --- added with the attention/scaling/masks/multihead/shapes generators
    ("projection_transposed", "projection matrix used in the other convention (W where Wᵀ was meant)",
     "Row convention: Q = X W_Q with W_Q of shape d_model × d_k. Column convention: q = W_Q x, i.e. Q = X W_Qᵀ."),
    ("assumed_symmetric_scores", "score(j, i) assumed equal to score(i, j)",
     "score(i, j) = q_i · k_j uses token i's query and token j's key; swapping the tokens swaps which vector is the query."),
    ("std_for_variance", "standard deviation and variance of q·k confused (√d_k vs d_k)",
     "For unit-variance components Var(q·k) = d_k; its square root √d_k is the standard deviation, the number the scores are divided by."),
    ("concat_wrong_axis", "head outputs stacked along the sequence axis instead of the feature axis",
     "Concatenate the heads side by side per token: (L, d_v) blocks give (L, h·d_v)."),
    # --- implementation bugs that show up in submitted code (coding tasks)
    ('softmax_overflow', 'softmax computed without subtracting the maximum, so large inputs overflow',
     'Subtract the maximum along the axis before exponentiating; softmax does not change.'),
    ('softmax_ignores_axis', 'softmax always taken along the last axis, whatever `axis` says',
     "Use the axis argument for the max, the exponentials' sum and keepdims."),
    ('softmax_global_sum', 'exponentials divided by the sum over the whole array',
     'Normalise each slice along the axis separately (sum with axis=..., keepdims=True).'),
    ('mask_ignored', 'the mask was not applied',
     'Blocked positions must get weight 0: set their scores to −∞ before the softmax.'),
    ('eps_outside_sqrt', 'ε added after the square root instead of inside it',
     'Use sqrt(var + ε), not sqrt(var) + ε.'),
    ('affine_skipped', 'the learned scale γ (and shift β) not applied',
     'Multiply by γ (and add β) after normalising.'),
    ('merge_without_transpose', 'heads merged by reshaping without moving the head axis back after the sequence axis',
     'Transpose (B, h, L, d) to (B, L, h, d) before reshaping to (B, L, h·d).'),
    ('causal_upper_triangle', 'causal mask built upper-triangular: queries see the future, not the past',
     'Query i may attend to keys j ≤ i: that is the lower triangle (np.tril).'),
    ('padding_off_by_one', 'padding mask keeps one pad position (j ≤ length instead of j < length)',
     'Positions 0 … length − 1 are real tokens: keep j < length.'),
    ('pe_concatenated', 'all sines placed before all cosines instead of interleaving them',
     'Column 2i holds the sine and column 2i + 1 the cosine of the same frequency.'),
    ('ffn_biases_skipped', 'the bias vectors of the feed-forward layers not added',
     'Add b_1 after the first matrix and b_2 after the second when they are given.'),
    ('cache_not_appended', 'the new keys and values were not added to the cache before attending',
     'Concatenate the new K and V to the cache along the sequence axis, then attend over all of them.'),
    # --- named from implementations collected in the wild (issue: name every common bug)
    ("pe_float32", "positional table computed in float32 instead of float64",
     "float32 keeps about 7 digits: sin(pos · ω) for large positions is off by ~1e-5. Build the table in float64."),
    ("rms_no_eps", "RMSNorm computed without ε in the square root",
     "Divide by sqrt(mean(x²) + ε): without ε a token whose mean square is near zero blows up."),
    ("unbiased_variance_eps_outside", "LayerNorm with the unbiased (n − 1) variance and ε added outside the square root",
     "Two fixes: divide the variance by n (not n − 1), and put ε inside the root: sqrt(var + ε)."),
    ("softmax_wrong_base", "softmax computed with powers of 2 (or another base) instead of exp",
     "softmax uses the natural exponential: exp(x), not 2**x or 10**x."),
    ("cache_mask_new_tokens_only", "causal mask built for the new tokens only: the cached keys are hidden",
     "With T cached and t new tokens the mask is (t, T + t): every cached key is visible, new ones up to the query's own position."),
    ("w_o_transposed", "output projection applied as W_Oᵀ",
     "Row convention: out = concat(heads) @ W_O with W_O of shape (h·d_v, d_model); do not transpose it."),
    ("heads_split_wrong_axis", "features split into heads on the wrong axis (reshaped as (d_k, h): each head takes every h-th feature)",
     "Head r owns the contiguous columns r·d_k … (r + 1)·d_k − 1: reshape to (…, L, h, d_k), not (…, L, d_k, h)."),
    ("gqa_repeat_wrong", "K/V heads repeated the wrong way for grouped-query attention (tiled instead of repeated in place)",
     "Each run of h / h_kv consecutive query heads shares one KV head (counting from 0, query head r uses KV head "
     "r // (h / h_kv)): repeat each KV head in place (np.repeat along the head axis), not np.tile."),
    ("biases_counted_when_none", "bias vectors counted although the model has none",
     "This model's linear layers have no biases: count the weight matrices only."),
    ("kv_projection_all_heads", "W_K and W_V given one head per query head under grouped-query attention",
     "With grouped-query attention W_K and W_V produce only the shared key/value heads: (key/value heads) × (head "
     "width) columns each, fewer than W_Q's."),
    ("scale_multiplied", "scores multiplied by √d_k instead of divided by it",
     "Scaled attention divides: S = Q Kᵀ / √d_k."),
    ('causal_missing', 'no causal mask among the new tokens',
     'When several tokens arrive at once, token i may not see tokens after it.'),
)

CATALOGUE: dict[str, Misconception] = {tag: Misconception(tag, title, hint) for tag, title, hint in _ENTRIES}


def titled(tag: str, explanation: str) -> str:
    """Feedback naming the misconception ``tag`` (its title as a question), then ``explanation``: how every
    default hint reads, and a choice option's hint with the option's own explanation."""
    title = CATALOGUE[tag].title
    return f"{title[0].upper()}{title[1:]}? {explanation}"


DEFAULT_HINTS: dict[str, str] = {tag: titled(tag, entry.hint) for tag, entry in CATALOGUE.items()}
"""The feedback a Mistake carries unless its generator wrote a more specific one."""


def describe(tag: str) -> str:
    """One-line description of a tag for reports ("applied the mask after the softmax")."""
    return CATALOGUE[tag].title if tag in CATALOGUE else tag


def title_and_hint(tag: str) -> tuple[str, str]:
    """(title, hint) of a tag; an unknown tag is its own title with no hint."""
    entry = CATALOGUE.get(tag)
    return (entry.title, entry.hint) if entry else (tag, "")
