"""How long the stratified-synthesis paper grid must take on this machine, at least.

Run: ``DPNOTES_DATA_DIR=... .venv/bin/python benchmarks/bench_grid_floor.py``.

The issue asks for the paper profile of ``strat_synth`` (2 data sets x 3 synthesizers x
4 stratifications x 6 epsilons x 5 seeds) in under 2 hours on this 2-core machine. GEM
trains a fixed number of Adam steps per fitted model whatever the data, so its share
has a floor that no implementation of GEM *at its settings* can beat on this CPU:

    fits x steps per fit x FLOPs per step / (cores x matrix-multiply throughput)

1. Per step: the generator MLP's matrix products alone, forward and backward (weight
   gradients for every layer, input gradients for all but the first, whose input is
   the fixed noise ``z``), at GEM's default sizes, each timed alone on one thread here
   at its best. Everything else a step does (softmax, marginals, loss, Adam) is left
   out, which only lowers the floor. The best FLOP rate among them is printed too.
   The same products in bfloat16 give the floor that mixed precision would have
   where the CPU multiplies bfloat16 natively (the package trains in float32).
2. Cores: the target's, each running one fit at a time.
3. Fits: one per stratum of every cell (strata from the public domain: SEX, RAC1P,
   SEX x RAC1P), counted from the registered paper grid.
4. A measured GEM training step on the New York sample, to show how close to the
   floor the implementation runs (``ratio gem_step_vs_floor``).
5. The stored paper cells' fit times (median per data set, synthesizer and
   stratification, over epsilons and seeds), projected onto the whole grid: what the
   grid costs as implemented, without evaluation.

The last lines are machine-readable (``time <name>=<s>``, ``ratio <name>=<x>``).
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import torch

from dpnotes.data.employment import (
    EMPLOYMENT_DOMAIN,
    EMPLOYMENT_GROUPINGS,
    split_employment,
)
from dpnotes.lab import get_experiment, load_stored
from dpnotes.synth import GEM
from dpnotes.synth.stratified import strata_of

TARGET_S = 2 * 3600.0


def _mlp_shapes(gem: GEM) -> list[tuple[int, int]]:
    widths = [gem.noise_dim, *gem.hidden, sum(EMPLOYMENT_DOMAIN.values())]
    return list(itertools.pairwise(widths))


def _step_flops(gem: GEM) -> float:
    k = gem.components
    shapes = _mlp_shapes(gem)
    forward = sum(2 * k * a * b for a, b in shapes)
    weight_grads = forward
    input_grads = sum(2 * k * a * b for a, b in shapes[1:])
    return float(forward + weight_grads + input_grads)


def _best_seconds(fn, repeats: int, inner: int = 50) -> float:
    for _ in range(5):
        fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        best = min(best, (time.perf_counter() - start) / inner)
    return best


def _matmul_seconds(
    gem: GEM, repeats: int, dtype: torch.dtype = torch.float32
) -> tuple[float, float]:
    """Time one training step's MLP matrix products, and their best FLOP/s.

    Per layer ``(a -> b)`` with ``K`` rows: the forward product ``(K, a) @ (a, b)``,
    the weight gradient ``(b, K) @ (K, a)`` and, past the first layer, the input
    gradient ``(K, b) @ (b, a)``; each timed alone at its best of ``repeats``, with
    operands of ``dtype``.
    """
    k = gem.components
    total, best_rate = 0.0, 0.0
    for layer, (a, b) in enumerate(_mlp_shapes(gem)):
        x, w, g = (
            torch.randn(k, a, dtype=dtype),
            torch.randn(a, b, dtype=dtype),
            torch.randn(k, b, dtype=dtype),
        )
        products = [(lambda x=x, w=w: x @ w), (lambda x=x, g=g: g.T @ x)]
        if layer > 0:
            products.append(lambda g=g, w=w: g @ w.T)
        for product in products:
            seconds = _best_seconds(product, repeats)
            total += seconds
            best_rate = max(best_rate, 2 * k * a * b / seconds)
    return total, best_rate


def _gem_fits(config) -> int:
    per_cell = {"vanilla": 1}
    per_cell |= {
        name: len(strata_of(EMPLOYMENT_DOMAIN, by))
        for name, by in EMPLOYMENT_GROUPINGS.items()
    }
    cells = get_experiment("strat_synth").cells("paper")
    return sum(per_cell[c["strata"]] for c in cells if c["synthesizer"] == "GEM")


def _measured_step(steps: int) -> float:
    train, _ = split_employment("NY-sample")
    gem = GEM(epsilon=1.0, delta=1e-9, rounds=1, steps_per_round=steps, device="cpu")
    start = time.perf_counter()
    gem.fit(train, EMPLOYMENT_DOMAIN, rng=np.random.default_rng(0))
    seconds = time.perf_counter() - start
    return seconds / sum(gem.steps_)


def _projection() -> tuple[float, int, int] | None:
    stored = load_stored("strat_synth", "paper", allow_partial=True)
    if stored is None:
        return None
    fit = stored.table[stored.table["metric"] == "fit_seconds"]
    keys = ["dataset", "synthesizer", "strata"]
    median = fit.groupby(keys)["value"].median()
    cells = get_experiment("strat_synth").cells("paper")
    total, missing = 0.0, 0
    for c in cells:
        key = (c["dataset"], c["synthesizer"], c["strata"])
        if key in median.index:
            total += float(median[key])
        else:
            missing += 1
    return total, len(fit), missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2, help="cores of the target")
    parser.add_argument("--steps", type=int, default=300, help="GEM steps to time")
    args = parser.parse_args()
    torch.set_num_threads(1)
    gem = GEM(epsilon=1.0, delta=1e-9)
    steps_per_fit = (gem.rounds + 1) * gem.steps_per_round
    flops = _step_flops(gem)
    floor_step, peak = _matmul_seconds(gem, repeats=5)
    fits = _gem_fits(get_experiment("strat_synth").config("paper"))
    floor = fits * steps_per_fit * floor_step / args.cores
    # The floor holds for float32, the package's precision. Where the CPU multiplies
    # bfloat16 natively (AVX-512 BF16, AMX), mixed precision would lower it:
    # benchmarks/README.md records what that did to a whole fit (not adopted).
    floor_step_bf16, _ = _matmul_seconds(gem, repeats=5, dtype=torch.bfloat16)
    floor_bf16 = fits * steps_per_fit * floor_step_bf16 / args.cores
    print(
        f"GEM defaults: K={gem.components}, MLP {gem.noise_dim}->"
        f"{'->'.join(map(str, gem.hidden))}->{sum(EMPLOYMENT_DOMAIN.values())}, "
        f"{gem.rounds} rounds + 1, {gem.steps_per_round} steps each "
        f"= {steps_per_fit} steps per fit"
    )
    print(
        f"MLP matrix products per step: {flops / 1e6:.0f} MFLOP in "
        f"{floor_step * 1e3:.2f} ms on one thread ({flops / floor_step / 1e9:.1f} "
        f"GFLOP/s; best single product {peak / 1e9:.1f} GFLOP/s)"
    )
    print(f"GEM fits in the paper grid (one per stratum): {fits:,}")
    print(
        f"floor for GEM alone on {args.cores} cores: {floor / 3600:.2f} h "
        f"(target for the whole grid: {TARGET_S / 3600:.0f} h)"
    )
    print(
        f"the same products in bfloat16: {floor_step_bf16 * 1e3:.2f} ms per step, "
        f"floor {floor_bf16 / 3600:.2f} h (the package trains in float32)"
    )
    step = _measured_step(args.steps)
    print(
        f"measured GEM step (New York sample, all marginals, Adam): "
        f"{step * 1e3:.2f} ms, floor {floor_step * 1e3:.2f} ms"
    )
    projected = _projection()
    if projected is not None:
        total, n, missing = projected
        print(
            f"stored paper cells: {n} fit times; projected fit time of the grid on "
            f"{args.cores} cores: {total / args.cores / 3600:.1f} h"
            + (f" ({missing} cells without a stored median)" if missing else "")
        )
        print(f"time grid_fits_projected={total / args.cores:.0f}")
    print(f"time gem_floor={floor:.0f}")
    print(f"time gem_floor_bf16={floor_bf16:.0f}")
    print(f"time gem_step={step:.5f}")
    print(
        f"ratio gem_floor_vs_target={floor / TARGET_S:.2f} "
        f"gem_step_vs_floor={step / floor_step:.2f} "
        f"gem_floor_fp32_vs_bf16={floor_step / floor_step_bf16:.2f}"
    )


if __name__ == "__main__":
    main()
