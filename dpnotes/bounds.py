"""Bounds of the stratification paper: how much stratifying costs in the worst case,
in expectation under a Dirichlet model of group proportions, and in the best case.

The error of a stratified Laplace mean is driven by ``sum_i log |G_i|`` (the sum of the
log group sizes, Prop. 8). This module gives that sum's extreme values for ``k`` groups
of ``n`` records, its exact expectation when the group proportions are
``Dirichlet(alpha, ..., alpha)``, tail bounds for Laplace noise, and ways to fit
``alpha`` to observed group proportions.

All functions are plain math (no privacy budget is spent here).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from scipy import optimize, special

from dpnotes.rng import check_rng
from dpnotes.validation import check_array, check_int, check_positive, check_probability

__all__ = [
    "best_case_log_size_sum",
    "expected_case_error_bound",
    "expected_log_size_sum",
    "fit_dirichlet_alpha",
    "laplace_sum_tail_bound",
    "laplace_tail_bound",
    "log_size_sum",
    "min_log_size_sum",
    "stratified_laplace_error_bound",
    "worst_case_error_bound",
    "worst_case_log_size_sum",
]


def _check_k_n(k: int, n: float) -> tuple[int, float]:
    k = check_int(k, "k", minimum=1)
    n = check_positive(n, "n")
    if n < k:
        raise ValueError(
            f"need n >= k (at least one record per group), got n={n}, k={k}."
        )
    return k, n


def log_size_sum(sizes: np.ndarray) -> float | np.ndarray:
    """Return ``sum_i log |G_i|`` over the last axis of ``sizes``.

    Raises:
        ValueError: If a size is below 1 (an empty group has no log size; drop it or
            use sizes of at least one).
    """
    s = check_array(sizes, "sizes")
    if np.any(s < 1):
        raise ValueError("every group size must be at least 1 for sum(log |G_i|).")
    out = np.log(s).sum(axis=-1)
    return float(out) if out.ndim == 0 else out


def worst_case_log_size_sum(k: int, n: float) -> float:
    """Return ``k log(n / k)``, the largest ``sum_i log |G_i|`` (Lemma 12).

    ``log`` is concave, so by Jensen's inequality ``sum_i log |G_i| <= k log(n / k)``
    with equality for equal group sizes.

    Raises:
        ValueError: If ``k < 1`` or ``n < k``.

    References:
        rosenblatt2024stratification, Lemma 12.

    Examples:
        >>> round(worst_case_log_size_sum(9, 19_000), 3)
        68.895
    """
    k, n = _check_k_n(k, n)
    return k * math.log(n / k)


def best_case_log_size_sum(k: int, n: float) -> float:
    """Return the paper's best case ``(k - 1) + log(n - k)``.

    This is the value the paper plots as the lower curve of Figure 1. It is *not* the
    minimum of ``sum_i log |G_i|`` over integer sizes of at least one record, which is
    ``log(n - k + 1)`` (:func:`min_log_size_sum`, ``k - 1`` singletons); it matches the
    configuration of ``k - 1`` groups of ``e`` records (``log e = 1``) and one large
    group, up to replacing ``(k - 1) e`` by ``k`` inside the logarithm. For ``k = 1``
    it is ``log(n - 1)``, below the only possible value ``log n``.

    Raises:
        ValueError: If ``k < 1`` or ``n <= k``.

    References:
        rosenblatt2024stratification, Figure 1.
    """
    k, n = _check_k_n(k, n)
    if n <= k:
        raise ValueError(f"the paper's best case needs n > k, got n={n}, k={k}.")
    return (k - 1) + math.log(n - k)


def min_log_size_sum(k: int, n: float) -> float:
    """Return ``log(n - k + 1)``: the exact minimum over integer sizes ``>= 1``.

    ``sum_i log s_i`` is concave in the sizes, so its minimum over the polytope
    ``{s_i >= 1, sum s_i = n}`` is at a vertex: ``k - 1`` singletons and one group of
    ``n - k + 1``.

    Raises:
        ValueError: If ``k < 1`` or ``n < k``.
    """
    k, n = _check_k_n(k, n)
    return math.log(n - k + 1)


def expected_log_size_sum(alpha: float, k: int, n: float) -> float:
    """Return ``E[sum_i log(n g_i)] = k (psi(alpha) - psi(k alpha) + log n)``.

    For proportions ``g ~ Dirichlet(alpha, ..., alpha)`` each ``g_i`` is
    ``Beta(alpha, (k - 1) alpha)``, and ``E[log X] = psi(a) - psi(a + b)`` for
    ``X ~ Beta(a, b)``. The paper states this as an upper bound (Thm. 9); for group
    sizes ``n g_i`` it is an equality.

    Args:
        alpha: The symmetric Dirichlet parameter, positive.
        k: Number of groups, at least 1.
        n: Number of records, positive.

    Raises:
        ValueError: If ``alpha <= 0``, ``k < 1`` or ``n <= 0``.

    References:
        rosenblatt2024stratification, Theorem 9.

    Examples:
        >>> # 2 (psi(1) - psi(2) + log 100):
        >>> round(expected_log_size_sum(1.0, 2, 100.0), 4)
        7.2103
    """
    alpha = check_positive(alpha, "alpha")
    k = check_int(k, "k", minimum=1)
    n = check_positive(n, "n")
    if math.isfinite(k * alpha):
        gap = special.digamma(alpha) - special.digamma(k * alpha)
    else:
        # k alpha overflows: psi(alpha) - psi(k alpha) = -log k + O(1 / alpha), and
        # 1 / alpha is below double precision here.
        gap = -math.log(k)
    return float(k * (gap + math.log(n)))


def laplace_tail_bound(
    scale: float | np.ndarray, *, gamma: float
) -> float | np.ndarray:
    """Return ``t = scale * log(1 / gamma)``, so that ``P(|Lap(scale)| > t) = gamma``.

    The Laplace tail (Def. 5): ``P(|Y| >= t b) = exp(-t)`` for ``Y ~ Lap(b)``.

    Raises:
        ValueError: If ``gamma`` is not in (0, 1) or a scale is not positive.

    References:
        rosenblatt2024stratification, Definition 5; dwork2014algorithmic, Fact 3.7.

    Examples:
        >>> round(laplace_tail_bound(2.0, gamma=0.05), 4)
        5.9915
    """
    gamma = check_probability(gamma, "gamma")
    b = check_array(scale, "scale")
    if np.any(b <= 0):
        raise ValueError("scale must be positive.")
    out = b * math.log(1.0 / gamma)
    return float(out) if out.ndim == 0 else out


def laplace_sum_tail_bound(scales: np.ndarray, *, gamma: float) -> float:
    """Return ``t`` with ``P(|sum_i Y_i| > t) <= gamma`` for independent ``Lap(b_i)``.

    Uses the concentration bound for sums of independent Laplace variables of
    Chan, Shi and Song (2011, Lemma 2.8): for ``nu >= sqrt(sum b_i**2)`` and
    ``0 < lam < 2 sqrt(2) nu**2 / max b_i``,
    ``P(|sum Y_i| > lam) <= 2 exp(-lam**2 / (8 nu**2))``. With
    ``nu = max(sqrt(sum b_i**2), max_i b_i sqrt(log(2 / gamma)))`` the choice
    ``lam = nu sqrt(8 log(2 / gamma))`` satisfies the condition. For one variable it is
    looser than :func:`laplace_tail_bound`, so the smaller of the two is returned when
    there is a single scale.

    Raises:
        ValueError: If ``gamma`` is not in (0, 1) or a scale is not positive.

    References:
        chan2011private, Lemma 2.8.
    """
    gamma = check_probability(gamma, "gamma")
    b = check_array(scales, "scales", ndim=1)
    if np.any(b <= 0):
        raise ValueError("scales must be positive.")
    log_term = math.log(2.0 / gamma)
    nu = max(float(np.sqrt(np.sum(b**2))), float(b.max()) * math.sqrt(log_term))
    bound = nu * math.sqrt(8.0 * log_term)
    if b.size == 1:
        bound = min(bound, float(b[0]) * math.log(1.0 / gamma))
    return bound


def _as_proportions(values: object, pseudocount: float) -> np.ndarray:
    p = check_array(values, "proportions_or_counts")
    if p.ndim == 1:
        p = p[None, :]
    if p.ndim != 2 or p.shape[1] < 2:
        raise ValueError(
            "give one vector of k >= 2 proportions or counts, or a (m, k) array of "
            f"them; got shape {p.shape}."
        )
    if np.any(p < 0):
        raise ValueError("proportions or counts must be non-negative.")
    p = p + pseudocount
    if np.any(p <= 0):
        raise ValueError(
            "a zero proportion has zero likelihood under a Dirichlet model; pass "
            "pseudocount=0.5 (for counts) or drop the empty group."
        )
    return p / p.sum(axis=1, keepdims=True)


def _solve_alpha(target: float, k: int) -> float:
    """Solve ``psi(a) - psi(k a) = target``, the score equation of the symmetric MLE."""
    # psi(a) - psi(k a) increases from -inf (a -> 0) to -log k (a -> inf); a uniform
    # vector (target = -log k) has its likelihood maximised at infinity.
    if target >= -math.log(k) - 1e-12:
        return math.inf

    def f(log_a: float) -> float:
        a = math.exp(log_a)
        return special.digamma(a) - special.digamma(k * a) - target

    return math.exp(optimize.brentq(f, -40.0, 40.0, xtol=1e-12))


def fit_dirichlet_alpha(
    proportions_or_counts: np.ndarray,
    *,
    method: Literal["mle", "mc-moment", "mc-sorted"] = "mle",
    pseudocount: float = 0.0,
    rng: np.random.Generator | None = None,
    draws: int = 20_000,
) -> float:
    """Fit the parameter of a symmetric Dirichlet to observed group proportions.

    Methods:

    * ``"mle"``: maximum likelihood. For ``m`` vectors ``p^(j)`` on the ``k``-simplex
      the score equation is ``psi(alpha) - psi(k alpha) = mean_{i,j} log p_i^(j)``;
      it is solved by root finding (unique root, since the left side is increasing).
    * ``"mc-moment"``: Monte Carlo moment matching on ``sum_i log g_i``: choose
      ``alpha`` so that the simulated mean of ``sum_i log g_i`` over ``draws``
      Dirichlet vectors equals the observed one. Its population version is the MLE
      (the statistic is sufficient), so this checks the MLE by simulation.
    * ``"mc-sorted"``: Monte Carlo matching of the *sorted* proportions: choose
      ``alpha`` to minimise the squared distance between the observed proportions in
      decreasing order and the simulated mean of sorted Dirichlet draws (common random
      numbers across ``alpha``). This is our reconstruction of a simulation-based fit;
      the paper does not spell out its procedure.

    Args:
        proportions_or_counts: One vector of ``k`` proportions or counts, or an
            ``(m, k)`` array of them (rows are normalised).
        method: ``"mle"``, ``"mc-moment"`` or ``"mc-sorted"``.
        pseudocount: Added to every entry before normalising (needed for zeros).
        rng: Generator for the Monte Carlo methods.
        draws: Number of Dirichlet draws per evaluation for the Monte Carlo methods.

    Returns:
        The fitted ``alpha`` (``inf`` for perfectly equal proportions under ``"mle"``).

    Raises:
        ValueError: If the input has fewer than two groups, negative or non-finite
            entries, a zero without a pseudocount, or an unknown method.
        TypeError: If a Monte Carlo method gets no ``rng``.

    References:
        rosenblatt2024stratification, Section "Adaptive Private Mean Estimation";
        minka2000estimating.

    Examples:
        >>> round(fit_dirichlet_alpha([0.7, 0.2, 0.1]), 3)
        1.206
    """
    if method not in ("mle", "mc-moment", "mc-sorted"):
        raise ValueError(
            f"unknown method {method!r}; use 'mle', 'mc-moment' or 'mc-sorted'."
        )
    if pseudocount < 0 or not math.isfinite(pseudocount):
        raise ValueError(f"pseudocount must be >= 0 and finite, got {pseudocount!r}.")
    p = _as_proportions(proportions_or_counts, pseudocount)
    k = p.shape[1]
    target = float(np.mean(np.log(p)))
    if method == "mle":
        return _solve_alpha(target, k)
    if rng is None:
        raise TypeError(f"method {method!r} is a Monte Carlo fit: pass rng=...")
    rng = check_rng(rng)
    draws = check_int(draws, "draws", minimum=100)
    # Common random numbers: Dirichlet(alpha) = normalised Gamma(alpha) draws, built
    # from one fixed set of uniforms through the Gamma quantile function, so that the
    # objective is a smooth deterministic function of alpha.
    u = rng.random((draws, k))
    u = np.clip(u, 1e-300, 1 - 1e-16)

    def simulate(alpha: float) -> np.ndarray:
        gam = special.gammaincinv(alpha, u)
        gam = np.maximum(gam, np.finfo(float).tiny)
        return gam / gam.sum(axis=1, keepdims=True)

    if method == "mc-moment":

        def moment_gap(log_a: float) -> float:
            g = simulate(math.exp(log_a))
            return float(np.mean(np.log(g))) - target

        lo, hi = -8.0, 8.0
        if moment_gap(hi) <= 0:
            return math.inf
        if moment_gap(lo) >= 0:
            return math.exp(lo)
        return math.exp(optimize.brentq(moment_gap, lo, hi, xtol=1e-6))

    observed = np.sort(p, axis=1)[:, ::-1].mean(axis=0)

    def sorted_gap(log_a: float) -> float:
        g = np.sort(simulate(math.exp(log_a)), axis=1)[:, ::-1].mean(axis=0)
        return float(np.sum((g - observed) ** 2))

    res = optimize.minimize_scalar(sorted_gap, bounds=(-8.0, 8.0), method="bounded")
    return math.exp(res.x)


def _laplace_scales(
    sizes: np.ndarray, n: float, R: float, gamma: float, epsilon: float
) -> np.ndarray:
    """Scales ``2 h_i / (n epsilon)`` of the weighted group noises ``(n_i / n) L_i``."""
    h = R + np.sqrt(np.log(sizes / gamma))
    return 2.0 * h / (n * epsilon)


def _sum_bound(
    sum_sq: float, k: int, n: float, R: float, gamma: float, epsilon: float
) -> float:
    """Apply the Laplace-sum bound given (an upper bound on) the squared scales."""
    log_term = math.log(2.0 / gamma)
    b_max = 2.0 * (R + math.sqrt(math.log(n / gamma))) / (n * epsilon)
    nu = max(math.sqrt(sum_sq), b_max * math.sqrt(log_term))
    bound = nu * math.sqrt(8.0 * log_term)
    if k == 1:
        # One group: the exact Laplace tail is tighter (as in laplace_sum_tail_bound).
        bound = min(bound, b_max * math.log(1.0 / gamma))
    return bound


def stratified_laplace_error_bound(
    sizes: np.ndarray, *, R: float, gamma: float, epsilon: float
) -> float:
    """Bound the error of the stratified clipped-Laplace mean for given group sizes.

    With weights ``n_i / n`` and Eq. 1 in every group, the estimate minus the data
    mean is ``sum_i (n_i / n) L_i`` on the event that no record is clipped, where
    ``L_i ~ Lap(2 h_i / (n_i epsilon))`` and ``h_i = R + sqrt(log(n_i / gamma))``. So
    the error is a sum of independent ``Lap(2 h_i / (n epsilon))`` variables, bounded
    with :func:`laplace_sum_tail_bound` at failure probability ``gamma``. The scales'
    squared sum is at most ``(8 / (n epsilon)**2) (k R**2 + k log(1/gamma) +
    sum_i log n_i)``: the data enter only through ``sum_i log n_i`` (Prop. 8).

    Args:
        sizes: Group sizes ``n_i``, each at least 1.
        R: Public bound on the absolute group means.
        gamma: Failure parameter in (0, 1) (clip interval and tail).
        epsilon: The budget of every group.

    Returns:
        ``t`` with ``P(|error| > t, nothing clipped) <= gamma``.

    Raises:
        ValueError: On sizes below 1 or invalid parameters.

    References:
        rosenblatt2024stratification, Proposition 8.
    """
    s = check_array(sizes, "sizes", ndim=1)
    if np.any(s < 1):
        raise ValueError("every group size must be at least 1.")
    R = check_positive(R, "R")
    gamma = check_probability(gamma, "gamma")
    epsilon = check_positive(epsilon, "epsilon")
    return laplace_sum_tail_bound(
        _laplace_scales(s, float(s.sum()), R, gamma, epsilon), gamma=gamma
    )


def worst_case_error_bound(
    k: int, n: float, *, R: float, gamma: float, epsilon: float
) -> float:
    """Bound the stratified clipped-Laplace error for *any* ``k`` groups of ``n``.

    Replaces ``sum_i log n_i`` by its maximum ``k log(n / k)`` (Lemma 12) in the
    scale bound of :func:`stratified_laplace_error_bound`, and the largest scale by
    that of a group of ``n`` records. The result grows like
    ``sqrt(k) (R + sqrt(log(n / (k gamma)))) sqrt(log(1 / gamma)) / (n epsilon)``:
    stratification costs at most a factor of order ``sqrt(k)`` (Prop. 8).

    Raises:
        ValueError: If ``k < 1``, ``n < k`` or a parameter is invalid.

    References:
        rosenblatt2024stratification, Proposition 8 and Lemma 12.
    """
    k, n = _check_k_n(k, n)
    R = check_positive(R, "R")
    gamma = check_probability(gamma, "gamma")
    epsilon = check_positive(epsilon, "epsilon")
    sum_sq = (8.0 / (n * epsilon) ** 2) * (
        k * R**2 + k * math.log(1.0 / gamma) + worst_case_log_size_sum(k, n)
    )
    return _sum_bound(sum_sq, k, n, R, gamma, epsilon)


def expected_case_error_bound(
    alpha: float, k: int, n: float, *, R: float, gamma: float, epsilon: float
) -> float:
    """The bound of :func:`worst_case_error_bound` at the expected ``sum_i log n_i``.

    ``sum_i log n_i`` is replaced by its expectation ``k (psi(alpha) - psi(k alpha) +
    log n)`` under a symmetric Dirichlet model (Thm. 9): the bound for a typical draw
    of group sizes, not a bound that holds for every draw. For small ``alpha`` the
    expectation counts groups of a fraction of a record and can fall below what any
    data set with non-empty groups attains; it is then floored at
    :func:`min_log_size_sum`.

    Raises:
        ValueError: If a parameter is invalid.

    References:
        rosenblatt2024stratification, Theorem 9.
    """
    k, n = _check_k_n(k, n)
    R = check_positive(R, "R")
    gamma = check_probability(gamma, "gamma")
    epsilon = check_positive(epsilon, "epsilon")
    sum_sq = (8.0 / (n * epsilon) ** 2) * (
        k * R**2
        + k * math.log(1.0 / gamma)
        + max(expected_log_size_sum(alpha, k, n), min_log_size_sum(k, n))
    )
    return _sum_bound(sum_sq, k, n, R, gamma, epsilon)
