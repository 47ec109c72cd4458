"""Speed of the foundation's Monte Carlo path: trials as an array axis vs a Python loop.

Run: ``.venv/bin/python benchmarks/bench_foundation.py``. Both variants run in the same
process on the same inputs, so the printed ratio is meaningful on a noisy machine; the
absolute times are not. The last line is machine-readable.
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import best_of

from dpnotes.mechanisms import laplace_mean


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    x = np.random.default_rng(0).beta(2, 5, size=(args.trials, args.n))

    def vectorised() -> np.ndarray:
        rng = np.random.default_rng(1)
        return laplace_mean(x, lower=0.0, upper=1.0, epsilon=1.0, rng=rng)

    def loop() -> np.ndarray:
        rng = np.random.default_rng(1)
        return np.array(
            [laplace_mean(row, lower=0.0, upper=1.0, epsilon=1.0, rng=rng) for row in x]
        )

    # Same generator, same draws in the same order: the two paths agree exactly.
    np.testing.assert_allclose(vectorised(), loop())
    t_vec = best_of(vectorised, args.repeats)
    t_loop = best_of(loop, args.repeats)
    print(f"laplace_mean, {args.trials} trials x n={args.n}")
    print(f"  vectorised over trials: {t_vec * 1e3:8.2f} ms")
    print(f"  one trial at a time:    {t_loop * 1e3:8.2f} ms")
    print(f"ratio laplace_mean_loop_vs_vectorised={t_loop / t_vec:.1f}")


if __name__ == "__main__":
    main()
