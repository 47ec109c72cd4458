"""Could GEM's generator train in bfloat16 on this CPU? Speed and fidelity, measured.

Run: ``DPNOTES_DATA_DIR=... .venv/bin/python benchmarks/bench_gem_bf16.py``.

GEM's share of the stratified-synthesis paper grid is bounded below by the float32
matrix products of its generator MLP (``benchmarks/bench_grid_floor.py``). This
machine's CPU has AVX-512 BF16 instructions, which oneDNN uses for bfloat16 matrix
products. This script asks what running only those products in bfloat16 would give,
without touching the package: within a context, ``torch.nn.functional.linear`` (the
one call the generator makes per layer) casts its inputs to bfloat16 and its output
back to float32. Weights, Adam state, softmax, the marginal products and the loss stay
in float32, as with mixed-precision training.

1. One training step's generator products at GEM's sizes (as timed by
   ``bench_grid_floor.py``), alone, float32 against bfloat16.
2. GEM at its defaults on the New York sample's training split, one thread, same seed,
   float32 against bfloat16 linears, at each ``--epsilons``: fit time, and the
   fitted model's own all-3-way workload error (the mixture's marginals against the
   real ones, no sampling noise), so any loss of fidelity shows directly.

The package does not use bfloat16 (yet): it would change the bits of every stored GEM
result, which are recomputed only with the next change to the synthesizers.

The last lines are machine-readable (``time <name>=<s>``, ``ratio <name>=<x>``).
"""

from __future__ import annotations

import argparse
import contextlib
import time
from unittest import mock

import numpy as np
import torch
from bench_grid_floor import _matmul_seconds

from dpnotes.data.employment import EMPLOYMENT_DOMAIN
from dpnotes.experiments.strat_synth import split
from dpnotes.synth import GEM
from dpnotes.synth.marginals import all_kway, marginal

_LINEAR = torch.nn.functional.linear


def _bf16_linear(x, weight, bias=None):
    bias = None if bias is None else bias.bfloat16()
    return _LINEAR(x.bfloat16(), weight.bfloat16(), bias).float()


def bf16_linears() -> contextlib.AbstractContextManager:
    """Within the context, every ``torch.nn.functional.linear`` multiplies in bf16."""
    return mock.patch.object(torch.nn.functional, "linear", _bf16_linear)


def _products(gem: GEM) -> tuple[float, float]:
    """One step's generator products, float32 and bfloat16 (bench_grid_floor's)."""
    fp32, _ = _matmul_seconds(gem, repeats=5)
    bf16, _ = _matmul_seconds(gem, repeats=5, dtype=torch.bfloat16)
    return fp32, bf16


def _model_error(gem: GEM, train, workload) -> float:
    answers = gem.answers(workload)
    return float(
        np.mean(
            [
                np.abs(
                    answers[c] - marginal(train, EMPLOYMENT_DOMAIN, c) / len(train)
                ).sum()
                for c in workload
            ]
        )
    )


def _fit(train, epsilon: float, bf16: bool) -> tuple[GEM, float]:
    gem = GEM(epsilon=epsilon, delta=1e-9, device="cpu")
    with bf16_linears() if bf16 else contextlib.nullcontext():
        start = time.perf_counter()
        gem.fit(train, EMPLOYMENT_DOMAIN, rng=np.random.default_rng(0))
        return gem, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 5.0])
    args = parser.parse_args()
    torch.set_num_threads(1)
    fp32, bf16 = _products(GEM(epsilon=1.0, delta=1e-9))
    print(
        f"generator MLP products per step, one thread: float32 {fp32 * 1e3:.2f} ms, "
        f"bfloat16 {bf16 * 1e3:.2f} ms"
    )
    train, _ = split("NY-sample")
    workload = all_kway(EMPLOYMENT_DOMAIN, 3)
    print(f"GEM defaults on the New York sample ({len(train):,} training records)")
    times = {}
    for eps in args.epsilons:
        m32, t32 = _fit(train, eps, bf16=False)
        m16, t16 = _fit(train, eps, bf16=True)
        e32 = _model_error(m32, train, workload)
        e16 = _model_error(m16, train, workload)
        print(
            f"  eps {eps:g}: float32 {t32:6.1f} s (model workload error {e32:.4f}); "
            f"bf16 linears {t16:6.1f} s (error {e16:.4f})"
        )
        times[eps] = (t32, t16)
    print(f"time mlp_products_fp32={fp32:.5f}")
    print(f"time mlp_products_bf16={bf16:.5f}")
    for eps, (t32, t16) in times.items():
        print(f"time gem_eps{eps:g}_fp32={t32:.2f}")
        print(f"time gem_eps{eps:g}_bf16={t16:.2f}")
    ratios = [f"mlp_products_fp32_vs_bf16={fp32 / bf16:.2f}"] + [
        f"gem_eps{eps:g}_fp32_vs_bf16={t32 / t16:.2f}"
        for eps, (t32, t16) in times.items()
    ]
    print("ratio " + " ".join(ratios))


if __name__ == "__main__":
    main()
