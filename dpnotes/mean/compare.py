"""COINPRESS and its stratified variants side by side, on many runs at once.

The stratification paper compares four estimators of a mean (Figures 2, 3 and 6-8):

- ``COINPRESS``: one estimate for the whole population;
- ``StratCoinpress (paper, leaks sizes)``: per-group COINPRESS with the full budget,
  recombined with the private group sizes as if public (the paper's estimator);
- ``StratCoinpress (DP counts)``: the same with privatised group counts as weights;
- ``PubStratCoinpress``: the same with the group proportions of a disjoint public
  holdout.

:func:`compare_methods` runs the four on ``runs`` samples at once;
:func:`mixture_runs` draws such samples from Gaussian mixtures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpnotes.data.synthetic import sample_gaussian_mixture
from dpnotes.mean.coinpress import coinpress_mean
from dpnotes.mean.stratified import (
    Coinpress,
    PrivatisedCounts,
    holdout_weights,
    stratified_mean,
)

__all__ = ["METHODS", "compare_methods", "mixture_runs"]

#: The four methods, in the order :func:`compare_methods` returns them.
METHODS: tuple[str, ...] = (
    "COINPRESS",
    "StratCoinpress (paper, leaks sizes)",
    "StratCoinpress (DP counts)",
    "PubStratCoinpress",
)


def mixture_runs(
    n: int,
    k: int,
    alpha: float,
    runs: int,
    *,
    rng: np.random.Generator,
    sd_range: tuple[float, float] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw ``runs`` Gaussian mixtures of ``2 n`` points: a private and a public half.

    Each run is :func:`~dpnotes.data.synthetic.sample_gaussian_mixture` of ``2 n``
    points, ``k`` groups and Dirichlet(``alpha``) proportions, shuffled; its first
    ``n`` points are private, the other ``n`` are a public holdout whose group labels
    only PubStratCoinpress uses.

    Every group has unit variance, as in the authors' code (``utils.model`` in
    ``lurosenb/stratify_dp``), unless ``sd_range = (a, b)``: then each run first draws
    every group's standard deviation from ``Uniform(a, b)``, as the paper's appendix B
    states (``sigma_i ~ U(0.1, 2.0)``).

    Args:
        n: Points per half.
        k: Number of groups.
        alpha: The Dirichlet concentration of the group proportions.
        runs: Number of runs.
        rng: The random generator.
        sd_range: ``(a, b)`` with ``0 < a <= b`` finite, or ``None`` for unit
            variance.

    Returns:
        ``(x, groups, holdout_groups)``: the private values and their groups, each
        ``(runs, n)``, and the holdout's groups ``(runs, n)``.

    Raises:
        ValueError: If ``sd_range`` is not two finite numbers ``0 < a <= b``.

    References:
        rosenblatt2024stratification, appendix B.
    """
    if sd_range is not None:
        lo, hi = _check_sd_range(sd_range)
    xs, gs = [], []
    for _ in range(runs):
        # Drawn only when asked, so the unit-variance runs keep their random stream.
        sd = 1.0 if sd_range is None else rng.uniform(lo, hi, size=k)
        s = sample_gaussian_mixture(2 * n, k, alpha, rng=rng, sd=sd)  # shuffled
        xs.append(s.x)
        gs.append(s.groups)
    x, g = np.stack(xs), np.stack(gs)
    return x[:, :n], g[:, :n], g[:, n:]


def _check_sd_range(sd_range: object) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in sd_range)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise ValueError(
            f"sd_range must be two numbers (a, b), got {sd_range!r}; pass e.g. "
            "(0.1, 2.0), or None for unit variance."
        ) from None
    if not (np.isfinite(lo) and np.isfinite(hi) and 0 < lo <= hi):
        raise ValueError(
            f"sd_range must satisfy 0 < a <= b (finite), got {sd_range!r}; pass e.g. "
            "(0.1, 2.0)."
        )
    return lo, hi


def compare_methods(
    x: np.ndarray,
    groups: np.ndarray,
    holdout_groups: np.ndarray,
    *,
    public_groups: Sequence[Any],
    rho: float,
    lower: float,
    upper: float,
    t: int,
    sigma: float,
    beta: float,
    count_share: float,
    rng: np.random.Generator,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Run the four methods of :data:`METHODS` on ``runs`` private samples at once.

    Args:
        x: Private values, shape ``(runs, n)``.
        groups: Their group labels, same shape.
        holdout_groups: Labels of the public holdout of every run, ``(runs, h)``.
        public_groups: The public list of groups.
        rho: The zCDP budget of each method.
        lower: Lower end of the public interval that holds the mean.
        upper: Its upper end.
        t: COINPRESS steps.
        sigma: A public bound on the standard deviation.
        beta: COINPRESS' failure probability.
        count_share: The share of ``rho`` spent on the counts of
            ``StratCoinpress (DP counts)``.
        rng: The random generator.

    Returns:
        ``{method: (overall estimates (runs,), group estimates (runs, k))}`` in the
        order of :data:`METHODS`; the non-stratified COINPRESS uses its overall
        estimate for every group.

    Privacy:
        Each method is ``rho``-zCDP under adding or removing one record, except the
        paper's ``StratCoinpress``, which uses the private group sizes as weights
        and is not differentially private (the comparison shows what that costs).

    References:
        rosenblatt2024stratification, Algorithms 2 and 3; biswas2020coinpress.
    """
    est = Coinpress(lower=lower, upper=upper, t=t, sigma=sigma, beta=beta)
    k = len(public_groups)
    overall = coinpress_mean(
        x, lower=lower, upper=upper, rho=rho, t=t, sigma=sigma, beta=beta, rng=rng
    )
    out = {METHODS[0]: (overall, np.repeat(overall[:, None], k, axis=1))}
    variants = {
        METHODS[1]: "private_sizes",
        METHODS[2]: PrivatisedCounts(share=count_share),
        METHODS[3]: holdout_weights(holdout_groups, public_groups),
    }
    for name, weights in variants.items():
        res = stratified_mean(
            x,
            groups,
            public_groups=public_groups,
            estimator=est,
            weights=weights,
            leak_group_sizes=isinstance(weights, str),
            rho=rho,
            rng=rng,
        )
        out[name] = (res.estimate, res.group_estimates)
    return out
