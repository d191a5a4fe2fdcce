"""The reference's scaled_dot_product_attention against a plain numpy version and PyTorch on the CPU.

Informative (issue 8): no target beyond "no needless copies". One head, d_k = d_v = 64, float64
(the reference computes in float64), L = S = 128, 512, 2048, without and with a causal boolean mask.

Columns: median and minimum wall time of several calls (interleaved); the ratio to the plain numpy version timed in the same
run; and the peak of extra memory one call allocates (tracemalloc, which numpy reports to), in units
of one L x S float64 matrix, which is what tells a needless copy from a needed one. The plain
version holds about three such matrices at its peak (scores, shifted scores, their exponentials).

Usage: python bench/attention_speed.py [--runs 15]   (from the checkout)
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc

import numpy as np

from _common import ROOT, machine_line, median, table

D = 64


def plain_numpy(q, k, v, mask=None):
    """The textbook lines: scores, masked, stable softmax, weighted sum."""
    s = q @ k.T / np.sqrt(q.shape[-1])  # (L, S)
    if mask is not None:
        s = np.where(mask, s, -np.inf)  # (L, S)
    w = np.exp(s - s.max(axis=-1, keepdims=True))  # (L, S)
    w /= w.sum(axis=-1, keepdims=True)  # (L, S)
    return w @ v, w  # (L, d_v), (L, S)


def implementations() -> dict:
    from reference import scaled_dot_product_attention

    found = {"numpy one-liner": plain_numpy, "reference": scaled_dot_product_attention}
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return found

    def torch_sdpa(q, k, v, mask=None):
        tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))  # shares memory, no copy
        tm = None if mask is None else torch.from_numpy(mask)
        with torch.no_grad():
            return F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm)

    found[f"torch {torch.__version__} CPU ({torch.get_num_threads()} threads)"] = torch_sdpa
    return found


def timed_round_robin(functions: dict, args, runs: int) -> dict[str, list[float]]:
    """Wall seconds of each function, calls interleaved so a load spike hits all of them alike."""
    for function in functions.values():
        function(*args)  # warm-up (allocator, BLAS threads)
    times: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(runs):
        for name, function in functions.items():
            start = time.perf_counter()
            function(*args)
            times[name].append(time.perf_counter() - start)
    return times


def peak_matrices(function, args, length: int) -> float:
    """Peak extra memory of one call, in L x S float64 matrices."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    result = function(*args)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del result
    return peak / (length * length * 8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    print(machine_line())
    impls = implementations()
    rng = np.random.default_rng(0)
    rows = []
    for length in (128, 512, 2048):
        q, k, v = (rng.standard_normal((length, D)) for _ in range(3))  # (L, d) each
        causal = np.tril(np.ones((length, length), dtype=bool))  # (L, S) True = may attend
        for masked in (False, True):
            call_args = (q, k, v, causal) if masked else (q, k, v)
            runs = args.runs if length < 2048 else max(3, args.runs // 3)
            # numpy versions interleaved; torch in its own block, because its OpenMP threads keep
            # spinning after a call and would starve the BLAS threads of whatever runs next
            numpy_impls = {n: f for n, f in impls.items() if not n.startswith("torch")}
            times = timed_round_robin(numpy_impls, call_args, runs)
            for name in set(impls) - set(numpy_impls):
                times |= timed_round_robin({name: impls[name]}, call_args, runs)
            base = median(times["numpy one-liner"])
            for name, function in impls.items():
                seconds = median(times[name])
                peak = peak_matrices(function, call_args, length) if not name.startswith("torch") else float("nan")
                rows.append([length, "causal" if masked else "none", name, f"{seconds * 1000:.2f}",
                             f"{min(times[name]) * 1000:.2f}", f"{seconds / base:.2f}",
                             "n/a" if peak != peak else f"{peak:.1f}"])
    print(table(["L = S", "mask", "implementation", "median ms", "min ms", "x numpy", "peak extra (L x S)"], rows,
                title=f"\nscaled_dot_product_attention, one head, d = {D}, float64"))
    print("(torch allocations are not visible to tracemalloc)")


if __name__ == "__main__":
    main()
