"""Stratified private means: estimate every group with the full budget, recombine.

Neighbouring relation used throughout: two datasets of the same public size ``n``
differ in one person's record, *including the person's group*. Group sizes are
therefore private. One record then touches at most two groups (the one it leaves and
the one it joins), each by at most half the clip width, so per-group mechanisms that
are each ``epsilon``-DP (or ``rho``-zCDP) for a replacement inside their group give an
``epsilon``-DP (``rho``-zCDP) release overall: parallel composition.

That argument needs every quantity inside a group's mechanism -- the clip interval,
the noise scale, the divisor of the sum -- to be public. :func:`stratified_mean` uses a
public size ``m_i`` for group ``i``, from one of:

* known public proportions ``w`` (``m_i = w_i n``);
* proportions measured on a disjoint public holdout (:func:`holdout_weights`, the
  paper's PubStratCoinpress);
* privatised counts, paid for with an explicit share of the budget
  (:class:`PrivatisedCounts`).

The paper's own StratCoinpress uses the true group sizes both as weights and inside
each group's noise scale. It is available as ``weights="private_sizes"`` together with
``leak_group_sizes=True`` and is *not* differentially private under the relation above:
moving one person between groups changes two noise scales, and the ratio of two
Laplace (or Gaussian) densities with different scales is unbounded. The tests show an
audit catching it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpnotes.mean.coinpress import check_run, coinpress_segments, step_budgets
from dpnotes.mean.layout import Layout
from dpnotes.mechanisms import clipped_laplace_half_width
from dpnotes.rng import check_rng
from dpnotes.validation import (
    check_array,
    check_epsilon,
    check_groups,
    check_int,
    check_positive,
    check_probability,
    check_rho,
    check_scale,
    check_width,
)

__all__ = [
    "PRIVATE_SIZES",
    "ClippedLaplace",
    "Coinpress",
    "PrivatisedCounts",
    "StratifiedEstimate",
    "holdout_weights",
    "pub_strat_coinpress",
    "split_holdout",
    "strat_coinpress",
    "stratified_mean",
]

#: The leaky weighting of the paper: true group sizes as weights and noise scales.
PRIVATE_SIZES = "private_sizes"


@dataclass(frozen=True)
class ClippedLaplace:
    """Per-group estimator: the clipped Laplace mean of Eq. 1 (budget ``epsilon``).

    Attributes:
        R: Public bound on the absolute group mean.
        gamma: Failure parameter in (0, 1) of the clip interval.
    """

    R: float
    gamma: float = 0.1
    budget = "epsilon"

    def __post_init__(self) -> None:
        R = check_positive(self.R, "R")
        check_probability(self.gamma, "gamma")
        check_width(-R, R, what=f"the clip interval [-R, R]'s (R={R:g})")


@dataclass(frozen=True)
class Coinpress:
    """Per-group estimator: COINPRESS / UVMRec (budget ``rho``).

    Attributes:
        lower: Public lower end of an interval containing every group mean.
        upper: Public upper end.
        t: Number of steps.
        sigma: Public bound on the within-group standard deviation.
        beta: Failure probability of one group's run.
        rho_fractions: Budget split over the steps (default
            :func:`dpnotes.mean.coinpress_schedule`).
    """

    lower: float
    upper: float
    t: int = 2
    sigma: float = 1.0
    beta: float = 0.01
    rho_fractions: tuple[float, ...] | None = None
    budget = "rho"

    def __post_init__(self) -> None:
        lo = float(check_array(self.lower, "lower"))
        hi = float(check_array(self.upper, "upper"))
        if lo >= hi:
            raise ValueError(
                f"lower={self.lower!r} must be below upper={self.upper!r}: give a "
                "public interval that contains every group mean."
            )
        check_width(lo, hi)
        check_int(self.t, "t", minimum=1)
        check_positive(self.sigma, "sigma")
        check_probability(self.beta, "beta")


@dataclass(frozen=True)
class PrivatisedCounts:
    """Weights from noisy group counts, paid for with ``share`` of the budget.

    Under replace-one neighbouring with private groups the count vector changes by one
    in two entries (L1 sensitivity 2, L2 sensitivity sqrt(2)). The counts get Laplace
    noise of scale ``2 / (share * epsilon)`` for a pure-DP estimator, or Gaussian noise
    of standard deviation ``1 / sqrt(share * rho)`` for a zCDP one; the group means get
    the remaining ``(1 - share)`` of the budget. The noisy counts are used as public
    sizes (post-processing).

    Attributes:
        share: Fraction of the budget for the counts, in (0, 1).
    """

    share: float = 0.1

    def __post_init__(self) -> None:
        check_probability(self.share, "share")


@dataclass(frozen=True)
class StratifiedEstimate:
    """A stratified release.

    Attributes:
        estimate: The overall mean, a float or an array of shape ``(trials,)``.
        group_estimates: Per-group private means, shape ``(k,)`` or ``(trials, k)``;
            NaN for a group that was skipped (public size below one record).
        weights: The recombination weights used (zero for skipped groups; each row
            sums to one).
        sizes: The group sizes ``m_i`` that set each group's clip interval and noise
            (public or privatised, or the true sizes under the leaky option).
        public_groups: The public list of groups, in column order.
        epsilon: The total pure-DP budget spent, or ``None`` for a zCDP estimator.
        rho: The total zCDP budget spent, or ``None`` for a pure-DP estimator.
        leaks_group_sizes: Whether the release used the private group sizes as if
            public (then ``epsilon``/``rho`` do not describe it).
    """

    estimate: float | np.ndarray
    group_estimates: np.ndarray
    weights: np.ndarray
    sizes: np.ndarray
    public_groups: tuple[Any, ...]
    epsilon: float | None
    rho: float | None
    leaks_group_sizes: bool


def _group_codes(groups: object, public_groups: Sequence[Any]) -> np.ndarray:
    """Map labels to ``0..k-1`` in the order of the public list."""
    g = np.asarray(groups)
    k = len(public_groups)
    if (
        np.issubdtype(g.dtype, np.integer)
        and list(public_groups) == list(range(k))
        and (g.size == 0 or (g.min() >= 0 and g.max() < k))
    ):
        return g.astype(np.int64, copy=False)
    flat = g.reshape(-1)
    codes = pd.Index(list(public_groups)).get_indexer(flat)
    if np.any(codes < 0):
        check_groups(flat, public_groups)  # raises with the unknown labels listed
    return codes.astype(np.int64).reshape(g.shape)


def _check_public(public_groups: Sequence[Any]) -> tuple[Any, ...]:
    public = tuple(public_groups)
    if not public:
        raise ValueError("public_groups is empty; list the groups (strata) to use.")
    if len(set(public)) != len(public):
        raise ValueError(f"public_groups has duplicates: {list(public)[:20]}.")
    return public


def _check_inputs(
    x: object, groups: object, public_groups: Sequence[Any]
) -> tuple[np.ndarray, np.ndarray, tuple[Any, ...]]:
    arr = check_array(x, "x")
    if arr.ndim not in (1, 2):
        raise ValueError(
            f"x must have shape (n,) or (trials, n), got {arr.shape}; put Monte Carlo "
            "trials on the first axis."
        )
    public = _check_public(public_groups)
    g = np.asarray(groups)
    if g.shape[-1:] != arr.shape[-1:] or g.shape not in (arr.shape[-1:], arr.shape):
        raise ValueError(
            f"groups has shape {g.shape} but x has shape {arr.shape}; give one group "
            "label per record (shape (n,) shared by all trials, or the shape of x)."
        )
    if g.dtype.kind == "f" and np.any(~np.isfinite(g)):
        raise ValueError(
            "groups has NaN/inf labels; map missing group labels to a listed group "
            "(e.g. 'unknown') before calling."
        )
    return arr, _group_codes(g, public), public


def _check_weight_rows(weights: object, k: int, trials: int | None) -> np.ndarray:
    w = check_array(weights, "weights")
    if w.ndim not in (1, 2) or w.shape[-1] != k:
        raise ValueError(
            f"weights has shape {w.shape} but there are {k} public groups; give one "
            "weight per group (shape (k,) or (trials, k))."
        )
    if w.ndim == 2 and (trials is None or w.shape[0] != trials):
        raise ValueError(
            f"weights has {w.shape[0]} rows but x has "
            f"{'no trial axis' if trials is None else f'{trials} trials'}."
        )
    if np.any(w < 0):
        raise ValueError("weights must be non-negative.")
    sums = w.sum(axis=-1)
    if np.any(np.abs(sums - 1.0) > 1e-8):
        raise ValueError(
            f"weights must sum to 1 (got {np.atleast_1d(sums)[:5].tolist()}); "
            "normalise them first (weights / weights.sum())."
        )
    return w


def _budget(estimator: Any, epsilon: float | None, rho: float | None) -> float:
    if estimator.budget == "epsilon":
        if rho is not None or epsilon is None:
            raise ValueError(
                "ClippedLaplace is a pure-DP estimator: pass epsilon=..., not rho."
            )
        return check_epsilon(epsilon)
    if epsilon is not None or rho is None:
        raise ValueError("Coinpress is a zCDP estimator: pass rho=..., not epsilon.")
    return check_rho(rho)


def _group_sizes(
    weights: np.ndarray | PrivatisedCounts | str,
    counts: np.ndarray,
    *,
    estimator: ClippedLaplace | Coinpress,
    total: float,
    n: int,
    trials: int | None,
    leak_group_sizes: bool,
    rng: np.random.Generator,
) -> tuple[np.ndarray, float, bool]:
    """Return the group sizes ``m_i`` ``(trials, k)``, the means' budget, and leakiness.

    Public proportions give ``m_i = w_i n``; :class:`PrivatisedCounts` noisy counts
    (spending its share of ``total``); ``"private_sizes"`` the true ``counts``.
    """
    t_count, k = counts.shape
    leaky = False
    mean_budget = total
    if isinstance(weights, str):
        if weights != PRIVATE_SIZES:
            raise ValueError(
                f"unknown weights {weights!r}; pass public proportions, "
                f"PrivatisedCounts(...), or {PRIVATE_SIZES!r} (leaky)."
            )
        if not leak_group_sizes:
            raise ValueError(
                "weights='private_sizes' uses the true group sizes as public weights "
                "and inside each group's noise scale, which leaks them: the result is "
                "not differentially private when group membership is private. Pass "
                "leak_group_sizes=True to accept that (e.g. to reproduce the paper), "
                "or use public proportions, holdout_weights(...) or "
                "PrivatisedCounts(share=...)."
            )
        leaky = True
        sizes = counts.copy()
    elif isinstance(weights, PrivatisedCounts):
        count_budget = weights.share * total
        mean_budget = total - count_budget
        advice = "use a larger budget or a larger share for the counts"
        if estimator.budget == "epsilon":
            scale = check_scale(2.0 / count_budget, "count noise scale", advice=advice)
            noise = rng.laplace(0.0, scale, size=counts.shape)
        else:
            scale = check_scale(
                1.0 / math.sqrt(count_budget), "count noise scale", advice=advice
            )
            noise = rng.normal(0.0, scale, size=counts.shape)
        sizes = np.maximum(counts + noise, 0.0)
    else:
        w = _check_weight_rows(weights, k, trials)
        sizes = np.broadcast_to(w * n, (t_count, k)).astype(float)
    return sizes, mean_budget, leaky


def stratified_mean(
    x: np.ndarray,
    groups: np.ndarray,
    *,
    public_groups: Sequence[Any],
    estimator: ClippedLaplace | Coinpress,
    weights: np.ndarray | PrivatisedCounts | str,
    rng: np.random.Generator,
    epsilon: float | None = None,
    rho: float | None = None,
    leak_group_sizes: bool = False,
) -> StratifiedEstimate:
    """Estimate the overall mean as a weighted sum of per-group private means.

    Every group is estimated with the *full* budget (parallel composition over the
    disjoint groups) and the estimates are recombined with ``weights``. Group ``i``'s
    mechanism sees its records and a size ``m_i``: its sum (clipped, centred) plus
    noise is divided by ``m_i``, and ``m_i`` also sets the clip interval and noise
    scale. ``m_i`` is public, privatised, or -- only under the leaky option -- the true
    group size.

    A group in the public list with no records gets an estimate anyway (the interval
    centre plus noise, divided by its public size), so its weight still counts and
    nothing crashes. A group whose size ``m_i`` is below one record (weight zero, or a
    noisy count below one) is skipped: its estimate is NaN and the other weights are
    renormalised.

    Args:
        x: Values, shape ``(n,)`` or ``(trials, n)``; ``n`` is public.
        groups: Group label of every record, shape ``(n,)`` (shared by all trials) or
            the shape of ``x``. Every label must be in ``public_groups``.
        public_groups: The public list of groups (fixed in advance, not read off the
            data).
        estimator: :class:`ClippedLaplace` (pass ``epsilon``) or :class:`Coinpress`
            (pass ``rho``).
        weights: Public proportions, shape ``(k,)`` or ``(trials, k)``, non-negative
            and summing to one (known proportions, or :func:`holdout_weights`); or a
            :class:`PrivatisedCounts`; or ``"private_sizes"`` (the paper's choice,
            needs ``leak_group_sizes=True``).
        rng: The random generator.
        epsilon: Total pure-DP budget (ClippedLaplace).
        rho: Total zCDP budget (Coinpress).
        leak_group_sizes: Must be ``True`` to use ``weights="private_sizes"``; an
            explicit acknowledgement that the release is then not DP.

    Returns:
        A :class:`StratifiedEstimate`.

    Raises:
        ValueError: On empty or non-finite ``x``, mismatched shapes, labels outside the
            public list, an empty or duplicated public list, invalid weights (negative,
            not summing to one, wrong length), a missing or wrong budget,
            ``"private_sizes"`` without ``leak_group_sizes=True``, a noise scale or
            clip width that overflows (checked before the group means' noise is
            drawn; rescale the data or pass narrower bounds), or a group estimate that
            is not finite (never recombined into a finite overall estimate).
        TypeError: If ``rng`` is not a :class:`numpy.random.Generator`.

    Privacy:
        With public or privatised sizes: ``epsilon``-DP (ClippedLaplace) or
        ``rho``-zCDP (Coinpress) per trial under replace-one neighbouring with ``n``
        public and group membership private. With ``"private_sizes"``: no DP guarantee
        (the group sizes leak).

    References:
        rosenblatt2024stratification, Eqs. 2-3 and Algorithm 3; mcsherry2009privacy.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> x = np.r_[rng.normal(-1, 1, 3000), rng.normal(2, 1, 1000)]
        >>> g = np.r_[np.zeros(3000, int), np.ones(1000, int)]
        >>> res = stratified_mean(x, g, public_groups=[0, 1], weights=[0.75, 0.25],
        ...                       estimator=Coinpress(lower=-10, upper=10), rho=0.5,
        ...                       rng=rng)
        >>> abs(res.estimate - (-0.25)) < 0.1
        True
    """
    arr, codes, public = _check_inputs(x, groups, public_groups)
    if not isinstance(estimator, ClippedLaplace | Coinpress):
        raise TypeError(
            "estimator must be ClippedLaplace(R=..., gamma=...) or "
            f"Coinpress(lower=..., upper=...), got {type(estimator).__name__}."
        )
    total = _budget(estimator, epsilon, rho)
    rng = check_rng(rng)
    k = len(public)
    trials = arr.shape[0] if arr.ndim == 2 else None
    n = arr.shape[-1]
    t_count = trials or 1

    if codes.ndim == 1:
        seg = (np.arange(t_count)[:, None] * k + codes[None, :]).reshape(-1)
    else:
        seg = (np.arange(t_count)[:, None] * k + codes).reshape(-1)
    layout = Layout.ragged(seg, t_count * k)
    counts = layout.counts.reshape(t_count, k).astype(float)

    sizes, mean_budget, leaky = _group_sizes(
        weights,
        counts,
        estimator=estimator,
        total=total,
        n=n,
        trials=trials,
        leak_group_sizes=leak_group_sizes,
        rng=rng,
    )

    keep = sizes >= 1.0
    if trials is None and not keep.any():
        raise ValueError(
            f"every group's size is below one record (sizes {np.round(sizes[0], 3)}), "
            "so no group can be estimated and the mean would be NaN; use more records "
            "(with a holdout, a larger public_fraction) or fewer groups."
        )
    safe_sizes = np.where(keep, sizes, 1.0).reshape(-1)
    est = _run_estimator(
        estimator,
        layout,
        arr.reshape(-1),
        safe_sizes,
        mean_budget,
        rng,
        keep.reshape(-1),
    )
    if not np.all(np.isfinite(est[keep.reshape(-1)])):
        # A finite overall estimate must never be built from non-finite parts.
        raise ValueError(
            "a group estimate is not finite (a value or noise overflowed); rescale the "
            "data (e.g. to other units) or pass narrower public bounds."
        )
    est = np.where(keep.reshape(-1), est, np.nan).reshape(t_count, k)
    w_used = np.where(keep, sizes, 0.0)
    row_sums = w_used.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        w_used = w_used / row_sums
    overall = np.nansum(np.where(keep, est * w_used, 0.0), axis=1)
    overall = np.where(row_sums[:, 0] > 0, overall, np.nan)

    def shape(a: np.ndarray) -> np.ndarray:
        return a if trials is not None else a[0]

    return StratifiedEstimate(
        estimate=overall if trials is not None else float(overall[0]),
        group_estimates=shape(est),
        weights=shape(np.nan_to_num(w_used)),
        sizes=shape(sizes),
        public_groups=public,
        epsilon=total if estimator.budget == "epsilon" else None,
        rho=total if estimator.budget == "rho" else None,
        leaks_group_sizes=leaky,
    )


def _run_estimator(
    estimator: ClippedLaplace | Coinpress,
    layout: Layout,
    x: np.ndarray,
    sizes: np.ndarray,
    budget: float,
    rng: np.random.Generator,
    keep: np.ndarray,
) -> np.ndarray:
    """Per-segment private means with public sizes ``sizes`` (each at least 1).

    Only the segments in ``keep`` are checked for overflow before the noise is drawn;
    the others are discarded by the caller.
    """
    advice = "rescale the data, pass narrower public bounds, or use a larger budget"
    if isinstance(estimator, ClippedLaplace):
        h = clipped_laplace_half_width(sizes, R=estimator.R, gamma=estimator.gamma)
        with np.errstate(over="ignore"):
            scale = 2.0 * h / budget
        check_scale(scale[keep], "Laplace scale", advice=advice)
        clipped_sum = layout.sum(layout.clip(x, -h, h))
        noise = rng.laplace(0.0, 1.0, size=layout.n_segments) * scale
        return (clipped_sum + noise) / sizes
    steps = step_budgets(budget, estimator.t, estimator.rho_fractions)
    s = layout.n_segments
    n_kept = int(keep.sum())
    check_run(
        np.full(n_kept, float(estimator.lower)),
        np.full(n_kept, float(estimator.upper)),
        sizes[keep],
        steps,
        estimator.beta,
        estimator.sigma,
    )
    est, _, _ = coinpress_segments(
        layout,
        x,
        lower=np.full(s, float(estimator.lower)),
        upper=np.full(s, float(estimator.upper)),
        size=sizes,
        rho_steps=steps,
        beta=estimator.beta,
        sigma=estimator.sigma,
        rng=rng,
    )
    return est


def holdout_weights(
    holdout_groups: np.ndarray,
    public_groups: Sequence[Any],
    *,
    pseudocount: float = 0.0,
) -> np.ndarray:
    """Return group proportions measured on a disjoint public holdout.

    Args:
        holdout_groups: Group labels of the public holdout records, shape ``(h,)`` or
            ``(trials, h)``.
        public_groups: The public list of groups.
        pseudocount: Added to every count before normalising, so that a group absent
            from the holdout keeps a small weight (0 follows the paper: such a group
            gets weight zero and is skipped).

    Returns:
        Proportions of shape ``(k,)`` or ``(trials, k)``, each row summing to one.

    Raises:
        ValueError: If the holdout is empty, has labels outside the public list, or
            ``pseudocount`` is negative.

    Privacy:
        None needed: the holdout is public data, disjoint from the private records.

    References:
        rosenblatt2024stratification (PubStratCoinpress).
    """
    public = _check_public(public_groups)
    g = np.asarray(holdout_groups)
    if g.size == 0:
        raise ValueError("the holdout is empty; pass the group labels of its records.")
    if pseudocount < 0 or not math.isfinite(pseudocount):
        raise ValueError(f"pseudocount must be >= 0 and finite, got {pseudocount!r}.")
    codes = _group_codes(g, public)
    k = len(public)
    rows = codes.reshape(-1, codes.shape[-1])
    offsets = np.arange(rows.shape[0])[:, None] * k
    counts = np.bincount((rows + offsets).reshape(-1), minlength=rows.shape[0] * k)
    counts = counts.reshape(rows.shape[0], k) + pseudocount
    w = counts / counts.sum(axis=1, keepdims=True)
    return w if g.ndim == 2 else w[0]


def split_holdout(
    x: np.ndarray,
    groups: np.ndarray,
    *,
    fraction: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split every trial's records at random into a private part and a public holdout.

    Args:
        x: Values, shape ``(n,)`` or ``(trials, n)``.
        groups: Labels, shape ``(n,)`` or the shape of ``x``.
        fraction: Share of the records that goes to the public holdout, in (0, 1);
            ``round(fraction * n)`` records (at least one on each side).
        rng: The random generator.

    Returns:
        ``(x_private, groups_private, groups_holdout)``, with the trial axis kept.

    Raises:
        ValueError: If the shapes disagree, ``fraction`` is outside (0, 1) or ``n < 2``.
    """
    arr = check_array(x, "x")
    fraction = check_probability(fraction, "fraction")
    rng = check_rng(rng)
    g = np.asarray(groups)
    if arr.ndim not in (1, 2) or g.shape not in (arr.shape[-1:], arr.shape):
        raise ValueError(
            f"x {arr.shape} and groups {g.shape} must have the same number of records "
            "(groups of shape (n,) shared by all trials, or the shape of x)."
        )
    n = arr.shape[-1]
    if n < 2:
        raise ValueError("need at least two records to split off a holdout.")
    n_pub = min(max(round(fraction * n), 1), n - 1)
    x2 = arr.reshape(-1, n)
    g2 = np.broadcast_to(g.reshape(-1, n), x2.shape)
    order = np.argsort(rng.random(x2.shape), axis=1)
    pub, priv = order[:, :n_pub], order[:, n_pub:]
    x_priv = np.take_along_axis(x2, priv, axis=1)
    g_priv = np.take_along_axis(g2, priv, axis=1)
    g_pub = np.take_along_axis(g2, pub, axis=1)
    if arr.ndim == 1:
        return x_priv[0], g_priv[0], g_pub[0]
    return x_priv, g_priv, g_pub


def strat_coinpress(
    x: np.ndarray,
    groups: np.ndarray,
    *,
    public_groups: Sequence[Any],
    rho: float,
    lower: float,
    upper: float,
    rng: np.random.Generator,
    weights: np.ndarray | PrivatisedCounts | str,
    t: int = 2,
    sigma: float = 1.0,
    beta: float = 0.01,
    leak_group_sizes: bool = False,
) -> StratifiedEstimate:
    """StratCoinpress (Algorithm 3): COINPRESS per group, recombined with ``weights``.

    A thin wrapper of :func:`stratified_mean` with a :class:`Coinpress` estimator. The
    paper's version is ``weights="private_sizes", leak_group_sizes=True`` (with the
    weights normalised to sum to one; the printed algorithm has a spurious ``1/k``).

    Args:
        x: Values, shape ``(n,)`` or ``(trials, n)``; ``n`` is public.
        groups: Group label of every record, shape ``(n,)`` or the shape of ``x``.
        public_groups: The public list of groups.
        rho: Total zCDP budget.
        lower: Public lower end of an interval containing every group mean.
        upper: Public upper end.
        rng: The random generator.
        weights: As in :func:`stratified_mean`: public proportions, a
            :class:`PrivatisedCounts`, or ``"private_sizes"``.
        t: Number of COINPRESS steps.
        sigma: Public bound on the within-group standard deviation.
        beta: Failure probability of one group's run.
        leak_group_sizes: Must be ``True`` to use ``weights="private_sizes"``.

    Returns:
        The estimate, as :func:`stratified_mean` returns it.

    Privacy:
        As :func:`stratified_mean`.

    References:
        rosenblatt2024stratification, Algorithm 3; biswas2020coinpress.
    """
    return stratified_mean(
        x,
        groups,
        public_groups=public_groups,
        estimator=Coinpress(lower=lower, upper=upper, t=t, sigma=sigma, beta=beta),
        weights=weights,
        rho=rho,
        rng=rng,
        leak_group_sizes=leak_group_sizes,
    )


def pub_strat_coinpress(
    x: np.ndarray,
    groups: np.ndarray,
    *,
    public_groups: Sequence[Any],
    rho: float,
    lower: float,
    upper: float,
    rng: np.random.Generator,
    public_fraction: float = 0.5,
    t: int = 2,
    sigma: float = 1.0,
    beta: float = 0.01,
) -> StratifiedEstimate:
    """PubStratCoinpress: weights from a random public holdout, COINPRESS on the rest.

    Each trial's records are split at random (:func:`split_holdout`); the holdout's
    group proportions give the weights and the public sizes ``m_i = w_i n_private``;
    the private part is estimated per group. Unlike the paper's code, the noise scale
    of each group uses ``m_i`` rather than the private group size.

    Args:
        x: Values, shape ``(n,)`` or ``(trials, n)``; ``n`` is public.
        groups: Group label of every record, shape ``(n,)`` or the shape of ``x``.
        public_groups: The public list of groups.
        rho: Total zCDP budget.
        lower: Public lower end of an interval containing every group mean.
        upper: Public upper end.
        rng: The random generator.
        public_fraction: Share of the records that goes to the public holdout, in
            (0, 1).
        t: Number of COINPRESS steps.
        sigma: Public bound on the within-group standard deviation.
        beta: Failure probability of one group's run.

    Returns:
        The estimate of the private part, as :func:`stratified_mean` returns it.

    Privacy:
        ``rho``-zCDP for the private part, as :func:`stratified_mean`; the holdout is
        treated as public data.

    References:
        rosenblatt2024stratification (PubStratCoinpress).
    """
    x_priv, g_priv, g_pub = split_holdout(x, groups, fraction=public_fraction, rng=rng)
    return stratified_mean(
        x_priv,
        g_priv,
        public_groups=public_groups,
        estimator=Coinpress(lower=lower, upper=upper, t=t, sigma=sigma, beta=beta),
        weights=holdout_weights(g_pub, public_groups),
        rho=rho,
        rng=rng,
    )
