"""Speed of the stratified mean-estimation figures (issue: all under 60 s at ``paper``).

Run: ``DPNOTES_DATA_DIR=... .venv/bin/python benchmarks/bench_stratified.py``.

1. Runs every experiment behind the figures and tables of the part "Stratified mean
   estimation" at the ``paper`` profile (50 runs) into a temporary results folder and
   prints the time of each and the total.
2. Measures, in the same process and on the same inputs, the speed-up of the vectorised
   path (runs and groups as array axes, one pass per COINPRESS step) over calling the
   estimators one run at a time, for one cell of Figures 3/6/7 and one of Figures 2/8.

Absolute times depend on the machine; the ratios are the meaningful output. The last
lines are machine-readable (``time <name>=<s>``, ``ratio <name>=<x>``).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from _timing import best_of

from dpnotes.lab import run
from dpnotes.mean import (
    Coinpress,
    coinpress_mean,
    compare_methods,
    mixture_runs,
    stratified_mean,
)

FIGURE_EXPERIMENTS = (
    "log_size_sum",
    "laplace_bound_check",
    "ny_race_alpha",
    "strat_mean_synthetic",
    "strat_mean_census",
    "census_descriptive",
)

# The method settings of the paper profile of Figures 3, 6 and 7.
_METHOD = {
    "rho": 0.5,
    "lower": -3.0,
    "upper": 3.0,
    "t": 2,
    "sigma": 1.0,
    "beta": 0.01,
    "count_share": 0.1,
}


def _loop(x, g, g_pub, public_groups, rng):
    """The same four methods, one run (one row) at a time."""
    return [
        compare_methods(
            x[r : r + 1],
            g[r : r + 1],
            g_pub[r : r + 1],
            public_groups=public_groups,
            rng=rng,
            **_METHOD,
        )
        for r in range(x.shape[0])
    ]


def speedup(n: int, k: int, alpha: float, runs: int, repeats: int) -> dict[str, float]:
    """Time the four methods vectorised against two one-at-a-time baselines."""
    rng = np.random.default_rng(0)
    x, g, g_pub = mixture_runs(n, k, alpha, runs, rng=rng)
    public = tuple(range(k))
    lower, upper, rho = _METHOD["lower"], _METHOD["upper"], _METHOD["rho"]

    def vectorised():
        compare_methods(
            x,
            g,
            g_pub,
            public_groups=public,
            rng=np.random.default_rng(1),
            **_METHOD,
        )

    def per_run():
        _loop(x, g, g_pub, public, np.random.default_rng(1))

    def per_group():
        # The textbook implementation of COINPRESS and StratCoinpress: one estimator
        # call per run and per group, as in the authors' notebook.
        r_ng = np.random.default_rng(1)
        for r in range(runs):
            coinpress_mean(x[r], lower=lower, upper=upper, rho=rho, rng=r_ng)
            total = 0.0
            for i in public:
                xi = x[r][g[r] == i]
                if xi.size:
                    est = coinpress_mean(
                        xi, lower=lower, upper=upper, rho=rho, rng=r_ng
                    )
                    total += est * xi.size / n

    def strat_vectorised():
        # The same two methods (COINPRESS and StratCoinpress), vectorised.
        r_ng = np.random.default_rng(1)
        coinpress_mean(x, lower=lower, upper=upper, rho=rho, rng=r_ng)
        stratified_mean(
            x,
            g,
            public_groups=public,
            estimator=Coinpress(lower=lower, upper=upper),
            weights="private_sizes",
            leak_group_sizes=True,
            rho=rho,
            rng=r_ng,
        )

    t_vec = best_of(vectorised, repeats)
    t_run = best_of(per_run, repeats)
    t_svec = best_of(strat_vectorised, repeats)
    t_grp = best_of(per_group, repeats)
    print(
        f"{runs} runs x n={n:,}, k={k}: four methods vectorised {t_vec * 1e3:.1f} ms, "
        f"one run at a time {t_run * 1e3:.1f} ms; COINPRESS + StratCoinpress "
        f"vectorised {t_svec * 1e3:.1f} ms, one run and one group at a time "
        f"{t_grp * 1e3:.1f} ms"
    )
    return {
        f"k{k}_per_run": t_run / t_vec,
        f"k{k}_per_run_and_group": t_grp / t_svec,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--profile", default="paper")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-figures", action="store_true")
    args = parser.parse_args()

    times = {}
    if not args.skip_figures:
        with tempfile.TemporaryDirectory() as tmp:
            for name in FIGURE_EXPERIMENTS:
                start = time.perf_counter()
                run(name, args.profile, root=Path(tmp), progress=False)
                times[name] = time.perf_counter() - start
                print(f"{name:22s} {times[name]:6.1f} s")
        print(f"{'total':22s} {sum(times.values()):6.1f} s (target: under 60 s)")

    ratios = {
        **speedup(10_000, 3, 0.3, 50, args.repeats),
        **speedup(10_000, 48, 0.3, 50, args.repeats),
    }
    for name, value in times.items():
        print(f"time {name}={value:.2f}")
    if times:
        print(f"time total={sum(times.values()):.2f}")
    for name, value in ratios.items():
        print(f"ratio {name}_loop_vs_vectorised={value:.1f}")


if __name__ == "__main__":
    main()
