"""Privacy accounting: conversions and composition for pure DP, zCDP, (epsilon, delta).

The package tracks budgets in zero-concentrated DP (zCDP, parameter ``rho``) internally
and converts to ``(epsilon, delta)`` only at the API boundary. DP-SGD is accounted in
Rényi DP with opacus' analysis functions (:func:`rdp_epsilon`), converted with the
improved rule or the classic one (:func:`classic_rdp_conversion`);
:func:`subsampled_gaussian_epsilon` caches these epsilons and :func:`max_steps_within`
inverts them (the steps a budget allows, the twin of opacus' ``get_noise_multiplier``).

Everything here is pure math except :class:`ZCDPAccountant`, the one stateful object,
which records spends against a fixed total (as opacus keeps
``accountants/analysis/rdp.py`` apart from ``accountants/rdp.py``).

A note on numerics: every conversion below is the infimum over a free parameter (a Rényi
order ``alpha``) of a family of *valid* bounds. A numerically imprecise minimiser
therefore loses tightness, never validity; where a value is inverted
(:func:`epsilon_delta_to_rho`, :func:`analytic_gaussian_sigma`) the result is moved to
the safe side of the root.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, overload

import numpy as np
from scipy import optimize, special

from dpnotes.validation import (
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
    check_result,
    check_rho,
    check_scale,
)

__all__ = [
    "ApproxBudget",
    "Spend",
    "ZCDPAccountant",
    "analytic_gaussian_delta",
    "analytic_gaussian_sigma",
    "classic_rdp_conversion",
    "compose_parallel",
    "compose_sequential_approx",
    "compose_sequential_pure",
    "compose_sequential_zcdp",
    "epsilon_delta_to_rho",
    "epsilon_to_rho",
    "gaussian_rho",
    "gaussian_sigma_for_rho",
    "joint_noise_multiplier",
    "max_steps_within",
    "rdp_epsilon",
    "rho_to_epsilon",
    "subsampled_gaussian_epsilon",
]

#: Relative slack allowed when a spend exactly exhausts a budget (floating-point sums
#: such as ``rho/3 + rho/3 + rho/3`` may exceed ``rho`` by one ulp).
_BUDGET_RTOL = 1e-9


@dataclass(frozen=True)
class ApproxBudget:
    """An ``(epsilon, delta)`` approximate-DP guarantee.

    Attributes:
        epsilon: The multiplicative part, ``epsilon >= 0``.
        delta: The additive part, ``0 <= delta < 1``.
    """

    epsilon: float
    delta: float


# --------------------------------------------------------------------------------------
# Conversions
# --------------------------------------------------------------------------------------


def epsilon_to_rho(epsilon: float) -> float:
    """Convert a pure ``epsilon``-DP guarantee to zCDP: ``rho = epsilon**2 / 2``.

    Args:
        epsilon: The pure-DP parameter, positive and finite.

    Returns:
        The zCDP parameter ``rho``.

    Raises:
        ValueError: If ``epsilon`` is not positive and finite, or ``epsilon**2 / 2``
            overflows (``epsilon`` above about 1.8e154) or underflows to zero (below
            about 1e-162).

    Privacy:
        An ``epsilon``-DP mechanism is ``epsilon**2/2``-zCDP under the same neighbouring
        relation.

    References:
        bun2016concentrated, Proposition 1.4.

    Examples:
        >>> epsilon_to_rho(1.0)
        0.5
    """
    epsilon = check_epsilon(epsilon)
    return check_scale(
        0.5 * epsilon * epsilon,
        "zCDP budget epsilon**2 / 2",
        advice="pass an epsilon between 1e-150 and 1e150",
    )


def _cks_epsilon_of_order(a: float, rho: float, log_inv_delta: float) -> float:
    """Return the CKS bound on epsilon at Rényi order ``alpha = 1 + a`` (``a > 0``).

    ``eps(alpha) = alpha*rho + log(1/(alpha*delta))/(alpha-1) + log(1 - 1/alpha)``,
    written with ``log1p`` so that orders close to one keep their precision.
    """
    log_alpha = math.log1p(a)
    return (1.0 + a) * rho + (log_inv_delta - log_alpha) / a + math.log(a) - log_alpha


def rho_to_epsilon(rho: float, delta: float) -> float:
    """Convert ``rho``-zCDP to ``(epsilon, delta)``-DP with the tightest standard bound.

    ``rho``-zCDP is ``(alpha, alpha*rho)``-Rényi DP for every ``alpha > 1``, and CKS
    2020 (Proposition 12) turn ``(alpha, tau)``-RDP into ``(epsilon, delta)``-DP with
    ``delta = exp((alpha-1)(tau-epsilon)) / (alpha-1) * (1-1/alpha)**alpha``. Solving
    for epsilon with ``tau = alpha*rho`` gives

        ``eps(alpha) = alpha*rho + log(1/(alpha*delta))/(alpha-1) + log(1-1/alpha)``,

    and this function returns ``inf_{alpha>1} eps(alpha)`` (CKS 2020, Corollary 13),
    clipped at zero. The derivative is

        ``eps'(alpha) = rho - log(1/(alpha*delta)) / (alpha-1)**2``,

    negative and then positive, so the minimiser is the unique root of
    ``rho*(alpha-1)**2 = log(1/(alpha*delta))`` in
    ``(1, 1 + sqrt(log(1/delta)/rho)]``, found with :func:`scipy.optimize.brentq`. The
    result is never larger than the classic ``rho + 2*sqrt(rho*log(1/delta))`` (Bun &
    Steinke 2016, Proposition 1.3).

    Args:
        rho: The zCDP parameter, positive and finite.
        delta: The target delta in (0, 1).

    Returns:
        The smallest ``epsilon >= 0`` this bound certifies.

    Raises:
        ValueError: If ``rho`` or ``delta`` is out of range, or the epsilon overflows.

    Privacy:
        A ``rho``-zCDP mechanism is ``(epsilon, delta)``-DP with the returned epsilon,
        under the neighbouring relation of its zCDP guarantee.

    References:
        canonne2020discrete, Proposition 12 and Corollary 13; bun2016concentrated,
        Proposition 1.3.

    Examples:
        >>> bound = round(0.5 + 2 * (0.5 * 13.8155) ** 0.5, 4)
        >>> round(rho_to_epsilon(0.5, 1e-6), 4) < bound
        True
    """
    rho = check_rho(rho)
    delta = check_delta(delta)
    log_inv_delta = -math.log(delta)
    a_hi = math.sqrt(log_inv_delta / rho)

    def slope(log_a: float) -> float:
        # Sign of eps'(alpha) times (alpha-1)**2, with alpha = 1 + exp(log_a).
        a = math.exp(log_a)
        return rho * a * a - log_inv_delta + math.log1p(a)

    lo, hi = math.log(a_hi) - 60.0, math.log(a_hi)
    if slope(lo) < 0.0 < slope(hi):
        log_a = optimize.brentq(slope, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps)
        eps = _cks_epsilon_of_order(math.exp(log_a), rho, log_inv_delta)
    else:  # Degenerate inputs (rho*log(1/delta) below ~1e-50): fall back to a grid.
        grid = a_hi * np.exp(np.linspace(-60.0, 0.0, 4001))
        eps = min(_cks_epsilon_of_order(float(a), rho, log_inv_delta) for a in grid)
    # Any order gives a valid bound; also keep the classic one's order as a safeguard.
    eps = min(eps, _cks_epsilon_of_order(a_hi, rho, log_inv_delta))
    return check_result(
        max(0.0, float(eps)), "epsilon", advice="use a smaller rho (below 1e307)"
    )


def epsilon_delta_to_rho(epsilon: float, delta: float) -> float:
    """Return the largest ``rho`` whose zCDP guarantee implies ``(epsilon, delta)``-DP.

    The inverse of :func:`rho_to_epsilon` in ``rho`` (which is increasing and
    continuous): a root search in ``log(rho)``, then a step to the safe side so that
    ``rho_to_epsilon(result, delta) <= epsilon`` always holds.

    Args:
        epsilon: The target epsilon, positive and finite.
        delta: The target delta in (0, 1).

    Returns:
        The zCDP budget to spend for an ``(epsilon, delta)`` target.

    Raises:
        ValueError: If ``epsilon`` or ``delta`` is out of range, or ``epsilon`` is too
            small or too large for the search in floating point (``epsilon**2 / 2``
            underflows below about 2e-154, or ``2 epsilon**2`` overflows above about
            9e153).

    Privacy:
        Any ``rho``-zCDP mechanism with ``rho`` at most the returned value is
        ``(epsilon, delta)``-DP (same neighbouring relation).

    References:
        canonne2020discrete, Corollary 13.

    Examples:
        >>> rho = epsilon_delta_to_rho(1.0, 1e-6)
        >>> rho_to_epsilon(rho, 1e-6) <= 1.0
        True
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    # The search starts at log(epsilon**2 / 2) and may step one unit above it.
    if 0.5 * epsilon * epsilon < sys.float_info.min:
        raise ValueError(
            f"epsilon={epsilon!r} is too small to convert to zCDP: epsilon**2 / 2 "
            "underflows to zero in floating point. Pass an epsilon of at least 1e-150 "
            "(at such budgets only delta is left of the guarantee anyway)."
        )
    if not math.isfinite(2.0 * epsilon * epsilon):
        raise ValueError(
            f"epsilon={epsilon!r} is too large to convert to zCDP: epsilon**2 "
            "overflows in floating point. Pass an epsilon below 1e150 (a budget this "
            "large protects nothing; for a non-private baseline call the non-private "
            "computation)."
        )

    def gap(log_rho: float) -> float:
        return rho_to_epsilon(math.exp(log_rho), delta) - epsilon

    lo = math.log(0.5 * epsilon * epsilon)
    while gap(lo) >= 0.0:
        lo -= 2.0
    hi = max(lo + 1.0, math.log(epsilon) + 1.0)
    while gap(hi) <= 0.0:
        hi += 2.0
    log_rho = optimize.brentq(gap, lo, hi, xtol=1e-13, rtol=4 * np.finfo(float).eps)
    rho = math.exp(log_rho)
    for _ in range(200):  # Move to the safe side of the root if rounding overshot it.
        if rho_to_epsilon(rho, delta) <= epsilon:
            break
        rho *= 1.0 - 1e-12
    return rho


def gaussian_rho(sensitivity: float, sigma: float) -> float:
    """Return the zCDP parameter ``sensitivity**2 / (2 sigma**2)`` of Gaussian noise.

    Args:
        sensitivity: The L2 sensitivity of the released query, positive.
        sigma: The standard deviation of the added noise, positive.

    Returns:
        ``rho`` such that adding ``N(0, sigma**2)`` noise is ``rho``-zCDP.

    Raises:
        ValueError: If an argument is not positive and finite, or ``rho`` overflows
            or underflows to zero (rescale so that ``sensitivity / sigma`` is
            moderate).

    Privacy:
        ``rho``-zCDP under the neighbouring relation that defines ``sensitivity``.

    References:
        bun2016concentrated, Proposition 1.6.

    Examples:
        >>> gaussian_rho(1.0, 1.0)
        0.5
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    sigma = check_positive(sigma, "sigma")
    advice = "rescale so that sensitivity and sigma are between 1e-150 and 1e150"
    numerator = check_scale(sensitivity * sensitivity, "sensitivity**2", advice=advice)
    denominator = check_scale(2.0 * sigma * sigma, "2 sigma**2", advice=advice)
    return check_scale(numerator / denominator, "rho", advice=advice)


def gaussian_sigma_for_rho(*, sensitivity: float, rho: float) -> float:
    """Return the Gaussian noise scale for ``rho``-zCDP: ``sensitivity / sqrt(2 rho)``.

    Args:
        sensitivity: The L2 sensitivity of the released query, positive.
        rho: The zCDP budget, positive and finite.

    Returns:
        The standard deviation ``sigma`` of the noise to add.

    Raises:
        ValueError: If an argument is not positive and finite, or ``sigma`` overflows
            or underflows to zero (rescale the data or change rho).

    Privacy:
        Adding ``N(0, sigma**2)`` is ``rho``-zCDP under the relation defining
        ``sensitivity``.

    References:
        bun2016concentrated, Proposition 1.6.

    Examples:
        >>> gaussian_sigma_for_rho(sensitivity=1.0, rho=0.5)
        1.0
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    rho = check_rho(rho)
    return check_scale(
        sensitivity / math.sqrt(2.0 * rho),
        "Gaussian noise scale",
        advice="rescale the data so that the sensitivity is moderate, or pass a rho "
        "between 1e-300 and 1e300",
    )


def _gaussian_delta_unit(s: float, epsilon: float) -> float:
    """Return the privacy profile of ``N(0, s**2)`` noise on a sensitivity-one query."""
    a = 0.5 / s - epsilon * s
    b = -0.5 / s - epsilon * s
    log_pa = float(special.log_ndtr(a))
    log_pb = float(special.log_ndtr(b))
    if log_pa == -math.inf:  # Phi(a) underflows: delta <= Phi(a) = 0 (was NaN).
        return 0.0
    # Phi(a) - e^eps Phi(b) = Phi(a) * (1 - exp(eps + log Phi(b) - log Phi(a))), stably.
    ratio = epsilon + log_pb - log_pa
    if ratio >= 0.0:
        return 0.0
    return math.exp(log_pa) * -math.expm1(ratio)


def analytic_gaussian_delta(
    *, epsilon: float, sensitivity: float, sigma: float
) -> float:
    """Return the exact ``delta(epsilon)`` of the Gaussian mechanism (privacy profile).

    ``delta = Phi(D/(2s) - eps*s/D) - exp(eps) * Phi(-D/(2s) - eps*s/D)`` with ``D`` the
    sensitivity and ``s`` the noise standard deviation.

    Args:
        epsilon: The epsilon at which to evaluate the profile, positive and finite.
        sensitivity: The L2 sensitivity, positive.
        sigma: The noise standard deviation, positive.

    Returns:
        The smallest delta for which the mechanism is ``(epsilon, delta)``-DP.

    Raises:
        ValueError: If an argument is not positive and finite.

    Privacy:
        Exact ``(epsilon, delta)`` profile under the relation defining ``sensitivity``.

    References:
        balle2018improving, Theorem 8.

    Examples:
        >>> round(analytic_gaussian_delta(epsilon=1.0, sensitivity=1.0, sigma=1.0), 4)
        0.1269
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive(sensitivity, "sensitivity")
    sigma = check_positive(sigma, "sigma")
    return _gaussian_delta_unit(sigma / sensitivity, epsilon)


def analytic_gaussian_sigma(
    *, epsilon: float, delta: float, sensitivity: float
) -> float:
    """Return the smallest Gaussian noise scale that gives ``(epsilon, delta)``-DP.

    The analytic Gaussian mechanism (Balle & Wang 2018, Theorem 8 and Algorithm 1): the
    privacy profile :func:`analytic_gaussian_delta` is decreasing in ``sigma``, so the
    calibrated scale is its root, found in ``log(sigma)`` with
    :func:`scipy.optimize.brentq` and then moved to the safe side. Valid for every
    ``epsilon > 0`` (unlike the classic ``sqrt(2 log(1.25/delta))/epsilon`` scale, which
    needs ``epsilon < 1`` and is always larger).

    Args:
        epsilon: The target epsilon, positive and finite.
        delta: The target delta in (0, 1).
        sensitivity: The L2 sensitivity, positive.

    Returns:
        The noise standard deviation ``sigma``.

    Raises:
        ValueError: If an argument is out of range, ``epsilon**2`` overflows
            (``epsilon`` above about 1.3e154), or the scale overflows (rescale the
            data so that the sensitivity is smaller).

    Privacy:
        Adding ``N(0, sigma**2)`` is ``(epsilon, delta)``-DP under the relation defining
        ``sensitivity``.

    References:
        balle2018improving, Theorem 8 and Algorithm 1.

    Examples:
        >>> s = analytic_gaussian_sigma(epsilon=1.0, delta=1e-5, sensitivity=1.0)
        >>> round(s, 3)
        3.731
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sensitivity = check_positive(sensitivity, "sensitivity")
    if not math.isfinite(epsilon * epsilon):
        raise ValueError(
            f"epsilon={epsilon!r} is too large for the analytic Gaussian calibration: "
            "epsilon**2 overflows in floating point. Pass an epsilon below 1e150 (a "
            "budget this large protects nothing)."
        )
    log_delta = math.log(delta)

    def gap(log_s: float) -> float:
        d = _gaussian_delta_unit(math.exp(log_s), epsilon)
        return math.log(max(d, 1e-320)) - log_delta

    lo = hi = 0.0
    while gap(lo) <= 0.0:
        lo -= 1.0
    while gap(hi) > 0.0:
        hi += 1.0
    s = math.exp(optimize.brentq(gap, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps))
    for _ in range(200):  # Safe side: the profile at the returned scale is <= delta.
        if _gaussian_delta_unit(s, epsilon) <= delta:
            break
        s *= 1.0 + 1e-12
    return check_scale(
        s * sensitivity,
        "Gaussian noise scale",
        advice="rescale the data so that the sensitivity is smaller, or use a larger "
        "epsilon",
    )


# --------------------------------------------------------------------------------------
# Composition
# --------------------------------------------------------------------------------------


def _nonnegative_list(values: Iterable[float], name: str) -> list[float]:
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(
            v, (int, float, np.integer, np.floating)
        ):
            raise TypeError(
                f"{name}[{i}] must be a real number, got {type(v).__name__}."
            )
        x = float(v)
        if not math.isfinite(x) or x < 0:
            raise ValueError(
                f"{name}[{i}] must be a finite, non-negative budget, got {v!r}. Remove "
                "the entry or pass its actual budget."
            )
        out.append(x)
    if not out:
        raise ValueError(f"{name} is empty; pass at least one budget.")
    return out


#: What to do when a composed budget overflows floating point.
_HUGE_BUDGET = (
    "a budget that large is no meaningful guarantee: check the entries for a "
    "mistake upstream (e.g. a noise scale that underflowed)"
)


def _budget_sum(values: Iterable[float], name: str, advice: str) -> float:
    """Return ``math.fsum(values)``, or say that the total overflows floating point.

    Every entry is finite (checked by the caller), but their exact sum can still
    exceed the largest float (about 1.8e308): ``math.fsum`` then raises a bare
    ``OverflowError``. A budget that large is no meaningful guarantee (``inf`` would
    not be one either), so it is refused with ``advice``.
    """
    try:
        return math.fsum(values)
    except OverflowError:
        raise ValueError(
            f"the total of {name} overflows floating point (it exceeds "
            f"{sys.float_info.max:.4g}); {advice}."
        ) from None


def _approx_list(
    budgets: Iterable[ApproxBudget | tuple[float, float]],
) -> list[ApproxBudget]:
    out = []
    for i, b in enumerate(budgets):
        if isinstance(b, ApproxBudget):
            eps, delta = b.epsilon, b.delta
        else:
            try:
                eps, delta = b
            except (TypeError, ValueError) as err:
                raise TypeError(
                    f"budgets[{i}] must be an ApproxBudget or an (epsilon, delta) "
                    f"pair, got {b!r}."
                ) from err
        (eps,) = _nonnegative_list([eps], f"budgets[{i}].epsilon")
        (delta,) = _nonnegative_list([delta], f"budgets[{i}].delta")
        if delta >= 1.0:
            raise ValueError(f"budgets[{i}].delta must be below 1, got {delta!r}.")
        out.append(ApproxBudget(eps, delta))
    if not out:
        raise ValueError("budgets is empty; pass at least one (epsilon, delta) pair.")
    return out


def compose_sequential_pure(epsilons: Iterable[float]) -> float:
    """Compose pure-DP mechanisms run on the same data: the epsilons add up.

    Args:
        epsilons: The epsilon of each mechanism (non-negative, finite).

    Returns:
        The epsilon of the joint release.

    Raises:
        ValueError: If the list is empty, an entry is negative or not finite, or the
            total overflows floating point (above about 1.8e308: no meaningful
            guarantee).

    Privacy:
        If mechanism ``i`` is ``epsilon_i``-DP, releasing all outputs (even chosen
        adaptively) is ``sum(epsilon_i)``-DP under the same neighbouring relation.

    References:
        dwork2014algorithmic, Theorem 3.16.

    Examples:
        >>> compose_sequential_pure([0.5, 0.25, 0.25])
        1.0
    """
    return _budget_sum(
        _nonnegative_list(epsilons, "epsilons"),
        "the epsilons",
        _HUGE_BUDGET,
    )


def compose_sequential_zcdp(rhos: Iterable[float]) -> float:
    """Compose zCDP mechanisms run on the same data: the rhos add up.

    Args:
        rhos: The zCDP parameter of each mechanism (non-negative, finite).

    Returns:
        The rho of the joint release.

    Raises:
        ValueError: If the list is empty, an entry is negative or not finite, or the
            total overflows floating point (above about 1.8e308: no meaningful
            guarantee).

    Privacy:
        Adaptive composition of ``rho_i``-zCDP mechanisms is ``sum(rho_i)``-zCDP under
        the same neighbouring relation.

    References:
        bun2016concentrated, Lemma 1.7.

    Examples:
        >>> compose_sequential_zcdp([0.125, 0.25])
        0.375
    """
    return _budget_sum(
        _nonnegative_list(rhos, "rhos"),
        "the rhos",
        _HUGE_BUDGET,
    )


def compose_sequential_approx(
    budgets: Iterable[ApproxBudget | tuple[float, float]],
) -> ApproxBudget:
    """Compose ``(epsilon, delta)``-DP mechanisms with basic composition.

    Args:
        budgets: ``(epsilon_i, delta_i)`` pairs or :class:`ApproxBudget` objects.

    Returns:
        ``ApproxBudget(sum(epsilon_i), sum(delta_i))``.

    Raises:
        ValueError: If the list is empty or an entry is out of range, the epsilons
            add up to more than floating point holds (about 1.8e308), or the deltas
            add up to 1 or more (track the budget in zCDP instead, which composes far
            better).

    Privacy:
        Adaptive composition under the common neighbouring relation.

    References:
        dwork2014algorithmic, Theorem 3.16.

    Examples:
        >>> compose_sequential_approx([(0.5, 1e-6), (0.5, 1e-6)])
        ApproxBudget(epsilon=1.0, delta=2e-06)
    """
    items = _approx_list(budgets)
    eps = _budget_sum(
        (b.epsilon for b in items),
        "the epsilons",
        _HUGE_BUDGET,
    )
    # Each delta is below 1, so their sum cannot overflow.
    delta = math.fsum(b.delta for b in items)
    if delta >= 1.0:
        raise ValueError(
            f"the deltas add up to {delta:.3g} >= 1, a vacuous guarantee. Use smaller "
            "deltas, or account in zCDP (compose_sequential_zcdp) and convert once."
        )
    return ApproxBudget(eps, delta)


@overload
def compose_parallel(budgets: Sequence[float]) -> float: ...


@overload
def compose_parallel(
    budgets: Sequence[ApproxBudget | tuple[float, float]],
) -> ApproxBudget: ...


def compose_parallel(
    budgets: Sequence[float] | Sequence[ApproxBudget | tuple[float, float]],
) -> float | ApproxBudget:
    """Compose mechanisms run on disjoint groups of people: the largest budget counts.

    This is the basis of stratification: each group (stratum) is estimated with the full
    budget, and the joint release costs no more than the most expensive group.

    Args:
        budgets: One budget per group, all of one kind: numbers (an epsilon or a
            rho each) or ``(epsilon, delta)`` pairs / :class:`ApproxBudget` objects.

    Returns:
        ``max(budgets)`` for numbers; the componentwise maximum ``ApproxBudget`` for
        pairs.

    Raises:
        ValueError: If the list is empty, mixes kinds, or has an out-of-range entry.

    Privacy:
        Let every individual belong to exactly one group, with membership given by a
        public, fixed rule (a group attribute of the record fixed in advance, the list
        of groups chosen without looking at the data), and let mechanism ``i`` see only
        group ``i``'s records and be ``epsilon_i``-DP (or ``rho_i``-zCDP, or
        ``(epsilon_i, delta_i)``-DP). For neighbours that add or remove one individual,
        or replace one individual by another *of the same group*, only one group's data
        changes, so the joint release has the largest of the budgets. If a replacement
        may move a person to another group, two groups change (one loses a record, one
        gains one): each group mechanism then needs its guarantee under add/remove, and
        the joint cost is the sum of the two largest budgets, not the maximum.
        Mechanisms that use public group sizes (a clipped mean with ``n_i`` public) are
        only covered under the same-group relation.

    References:
        mcsherry2009privacy, Theorem 4 (parallel composition).

    Examples:
        >>> compose_parallel([0.5, 1.0, 0.25])
        1.0
        >>> compose_parallel([(1.0, 1e-6), (0.5, 1e-5)])
        ApproxBudget(epsilon=1.0, delta=1e-05)
    """
    items = list(budgets)
    if not items:
        raise ValueError("budgets is empty; pass one budget per group.")
    is_pair = [isinstance(b, (ApproxBudget, tuple, list)) for b in items]
    if all(is_pair):
        pairs = _approx_list(items)
        return ApproxBudget(max(b.epsilon for b in pairs), max(b.delta for b in pairs))
    if any(is_pair):
        raise ValueError(
            "budgets mixes numbers and (epsilon, delta) pairs; convert them to one "
            "kind first (e.g. every group in zCDP)."
        )
    return max(_nonnegative_list(items, "budgets"))


# --------------------------------------------------------------------------------------
# Rényi DP for DP-SGD (opacus' analysis functions)
# --------------------------------------------------------------------------------------


def joint_noise_multiplier(noise_multipliers: float | Sequence[float]) -> float:
    """Return the noise multiplier of several Gaussian releases read as one.

    Releasing ``f_i(x)`` with independent noise of std ``sigma_i * s_i`` (``s_i`` the
    sensitivity of ``f_i``) is, after scaling each part by ``1 / (sigma_i s_i)``, one
    Gaussian release of unit noise whose sensitivity is at most
    ``sqrt(sum_i sigma_i**-2)``: a single Gaussian mechanism with multiplier
    ``sigma = (sum_i sigma_i**-2) ** -0.5``. Its RDP, ``alpha / (2 sigma**2)``, equals
    the sum of the parts' RDP; under subsampling the parts must be merged *before*
    amplification when they read the same sample (:func:`rdp_epsilon`).

    Args:
        noise_multipliers: One positive multiplier per release, or a single one.

    Returns:
        The joint multiplier, never larger than the smallest one.

    Raises:
        ValueError: If the list is empty, a multiplier is not positive and finite, or
            ``sum_i sigma_i**-2`` overflows floating point (a multiplier below about
            7.5e-155).

    References:
        andrew2021differentially (section 3, the joint multiplier of the clipped
        count and the gradient).

    Examples:
        >>> round(joint_noise_multiplier([0.8, 8.0]), 4)
        0.796
    """
    sigmas = _noise_multiplier_list(noise_multipliers)
    inverse_variance = _budget_sum(
        (s**-2 for s in sigmas),
        "the noise multipliers' sigma**-2",
        "a multiplier that small gives no privacy; use larger noise multipliers",
    )
    return float(inverse_variance**-0.5)


def _noise_multiplier_list(noise_multipliers: float | Sequence[float]) -> list[float]:
    """Return the multipliers as a list, one or more, each checked positive."""
    if isinstance(noise_multipliers, (int, float, np.integer, np.floating)):
        sigmas = [noise_multipliers]
    else:
        sigmas = list(noise_multipliers)
    if not sigmas:
        raise ValueError("noise_multipliers is empty; pass one per mechanism per step.")
    return [check_positive(s, f"noise_multipliers[{i}]") for i, s in enumerate(sigmas)]


#: The smallest noise multiplier the RDP analysis accepts. Below it epsilon exceeds
#: 1e10 at any sampling rate above 1e-6 (no privacy left to report), and near 1e-154
#: opacus' ``compute_rdp`` overflows ``1 / sigma**2`` and loops without end.
MIN_RDP_NOISE_MULTIPLIER = 1e-6


def _check_rdp_multiplier(sigma: float) -> float:
    """Return ``sigma`` if the RDP analysis can account it, else raise ValueError."""
    if sigma < MIN_RDP_NOISE_MULTIPLIER:
        raise ValueError(
            f"noise multiplier {sigma:.3g} is below {MIN_RDP_NOISE_MULTIPLIER:g}: its "
            "epsilon exceeds 1e10 (no privacy), and opacus' RDP analysis overflows for "
            "multipliers that small. Use a noise multiplier of at least "
            f"{MIN_RDP_NOISE_MULTIPLIER:g} (DP-SGD typically uses 0.5-10)."
        )
    return sigma


def rdp_epsilon(
    *,
    sample_rate: float,
    noise_multipliers: float | Sequence[float],
    steps: int,
    delta: float,
    orders: Sequence[float] | None = None,
    same_sample: bool = True,
) -> float:
    """Return epsilon of ``steps`` rounds of Poisson-subsampled Gaussian mechanisms.

    Each step releases one or more Gaussian mechanisms, each with its own noise
    multiplier (e.g. DPSGD-F's noisy clipped-example counts and its noisy gradient).

    * ``same_sample=True`` (default; DPSGD-F and Naive): every mechanism of a step
      reads the *same* Poisson sample, so an example is in all of them or in none.
      They are merged into one Gaussian mechanism
      (:func:`joint_noise_multiplier`) and amplified once. Amplifying each part and
      adding the curves would understate the cost. At order 2, for instance, the
      subsampled Gaussian's RDP is ``log(1 + q**2 (exp(1/sigma**2) - 1))``. With
      ``a, b = sigma_1**-2, sigma_2**-2`` the merged mechanism's argument of the
      logarithm, ``1 + q**2 (e**(a+b) - 1)``, exceeds the product of the parts',
      ``(1 + q**2 (e**a - 1)) (1 + q**2 (e**b - 1))``, by
      ``q**2 (1 - q**2) (e**a - 1) (e**b - 1) > 0`` whenever ``0 < q < 1``.
    * ``same_sample=False``: each mechanism draws its own independent Poisson
      sample; their subsampled RDP curves add (composition).

    The RDP curves come from opacus' ``compute_rdp(q, sigma, steps, orders)`` and are
    converted once with opacus' ``get_privacy_spent``. The cost is constant in
    ``steps``, unlike opacus' ``RDPAccountant`` when mechanisms alternate.

    Args:
        sample_rate: Poisson sampling rate ``q`` in (0, 1].
        noise_multipliers: One noise multiplier (noise std / sensitivity) per mechanism
            released each step; each positive.
        steps: Number of steps, at least 1.
        delta: Target delta in (0, 1).
        orders: Rényi orders to optimise over (each > 1); default opacus'
            ``RDPAccountant.DEFAULT_ALPHAS``.
        same_sample: Whether a step's mechanisms share one Poisson sample.

    Returns:
        The epsilon of the whole run at ``delta``.

    Raises:
        ValueError: If an argument is out of range, or a (joint) noise multiplier is
            below ``MIN_RDP_NOISE_MULTIPLIER`` (1e-6).

    Privacy:
        ``(epsilon, delta)``-DP under add/remove-one neighbouring (the relation of the
        subsampled Gaussian RDP analysis), with the sensitivity each noise multiplier is
        relative to. With ``same_sample=True`` a later mechanism of a step may depend on
        an earlier one's output (DPSGD-F's bounds depend on its noisy counts): given
        that output, the later release is a Gaussian of sensitivity at most 1 in its
        own units, and the merged pair is no worse than one Gaussian with the joint
        multiplier.

    References:
        mironov2017renyi; mironov2019sampled; abadi2016deep;
        andrew2021differentially.

    Examples:
        >>> round(rdp_epsilon(sample_rate=0.01, noise_multipliers=1.0, steps=1000,
        ...                   delta=1e-5), 2) > 0
        True
    """
    from opacus.accountants import RDPAccountant
    from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent

    q = check_probability(sample_rate, "sample_rate", closed_right=True)
    sigmas = _noise_multiplier_list(noise_multipliers)
    steps = check_int(steps, "steps", minimum=1)
    delta = check_delta(delta)
    if orders is None:
        orders = RDPAccountant.DEFAULT_ALPHAS
    orders_arr = np.asarray(orders, dtype=float)
    if orders_arr.ndim != 1 or orders_arr.size == 0 or not np.all(orders_arr > 1.0):
        raise ValueError(
            "orders must be a non-empty 1-D list of Rényi orders, each greater than 1, "
            "e.g. opacus' RDPAccountant.DEFAULT_ALPHAS."
        )
    if same_sample:
        sigmas = [joint_noise_multiplier(sigmas)]
    sigmas = [_check_rdp_multiplier(s) for s in sigmas]
    rdp = sum(
        np.asarray(compute_rdp(q=q, noise_multiplier=s, steps=steps, orders=orders_arr))
        for s in sigmas
    )
    eps, _ = get_privacy_spent(orders=orders_arr, rdp=rdp, delta=delta)
    return float(eps)


def classic_rdp_conversion(
    rdp: np.ndarray | list[float], orders: np.ndarray | list[float], *, delta: float
) -> float:
    """Convert an RDP curve to epsilon with the classic rule (mironov2017renyi).

    ``epsilon = min over alpha of RDP(alpha) + log(1 / delta) / (alpha - 1)``.

    Args:
        rdp: RDP values, one per order: each ``>= 0`` (a Rényi divergence is never
            negative), ``inf`` allowed (an order at which the mechanism has no
            finite bound; it is then never the minimiser).
        orders: Rényi orders ``alpha > 1``, as many as ``rdp``.
        delta: Target delta in (0, 1).

    Returns:
        The smallest epsilon over the orders.

    Raises:
        ValueError: If the arrays are empty, of different lengths, not 1-D, an
            order is at most 1 (or NaN), an RDP value is NaN or negative (a negative
            one would under-report epsilon), or ``delta`` is outside (0, 1).

    Privacy:
        An ``(alpha, r)``-RDP mechanism is ``(r + log(1/delta)/(alpha-1), delta)``-DP.

    References:
        mironov2017renyi (Prop. 3).

    Examples:
        >>> round(classic_rdp_conversion([0.5, 1.0], [2.0, 5.0], delta=1e-5), 4)
        3.8782
    """
    delta = check_delta(delta)
    r = np.asarray(rdp, dtype=float)
    a = np.asarray(orders, dtype=float)
    if r.shape != a.shape or r.ndim != 1 or r.size == 0 or not np.all(a > 1.0):
        raise ValueError(
            "rdp and orders must be non-empty 1-D arrays of the same length, with "
            "every order greater than 1."
        )
    bad = np.isnan(r) | (r < 0)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"rdp must be >= 0 (or inf) at every order, got {float(r[i])!r} at order "
            f"{float(a[i]):g} ({int(bad.sum())} such value(s)): the RDP of a "
            "mechanism is never NaN or negative, and a negative value would "
            "under-report epsilon. Fix the curve; if the negatives are rounding "
            "errors of values that are truly >= 0 (as opacus' compute_rdp gives for "
            "huge noise multipliers), clip them with np.maximum(rdp, 0.0), which can "
            "only raise epsilon."
        )
    # 1 / delta overflows for a subnormal delta although its log is finite; the
    # usual deltas keep the expression as written (and its last bit).
    inv_delta = 1.0 / delta
    log_inv_delta = (
        math.log(inv_delta) if math.isfinite(inv_delta) else -math.log(delta)
    )
    return float(np.min(r + log_inv_delta / (a - 1.0)))


def subsampled_gaussian_epsilon(
    *,
    sample_rate: float,
    noise_multipliers: float | Sequence[float],
    steps: int,
    delta: float,
    conversion: Literal["improved", "classic"] = "improved",
) -> float:
    """Return epsilon of ``steps`` steps of Gaussians that read one Poisson sample.

    The mechanisms of a step are merged into one Gaussian of multiplier
    :func:`joint_noise_multiplier` and amplified once (as :func:`rdp_epsilon` with
    ``same_sample=True``), over opacus' default orders. Values are cached: opacus'
    RDP of fractional orders is slow pure Python (about 0.1 s per curve), and runs
    repeat configurations (seeds, methods, the bisection of :func:`max_steps_within`).

    Args:
        sample_rate: Poisson rate ``q`` in (0, 1].
        noise_multipliers: One multiplier per release of a step, or a single one.
        steps: Number of steps, at least 1.
        delta: Target delta in (0, 1).
        conversion: ``"improved"`` (opacus' ``get_privacy_spent``, balle2020hypothesis
            Thm. 21) or ``"classic"`` (:func:`classic_rdp_conversion`, never smaller).

    Returns:
        Epsilon at ``delta``.

    Raises:
        ValueError: For an unknown conversion or an argument out of range.

    Privacy:
        ``(epsilon, delta)``-DP under add/remove-one neighbours for Poisson sampling.

    References:
        mironov2017renyi (Prop. 3); mironov2019sampled; balle2020hypothesis.

    Examples:
        >>> a = subsampled_gaussian_epsilon(sample_rate=0.01, noise_multipliers=1.0,
        ...                                 steps=100, delta=1e-5)
        >>> b = subsampled_gaussian_epsilon(sample_rate=0.01, noise_multipliers=1.0,
        ...                                 steps=100, delta=1e-5, conversion="classic")
        >>> 0 < a <= b
        True
    """
    if conversion not in ("improved", "classic"):
        raise ValueError(
            f"conversion must be 'improved' or 'classic', got {conversion!r}."
        )
    if isinstance(noise_multipliers, (int, float, np.integer, np.floating)):
        sigmas = (noise_multipliers,)
    else:
        sigmas = tuple(noise_multipliers)
    if conversion == "classic":
        return _classic_epsilon_cached(sample_rate, sigmas, steps, delta)
    return _improved_epsilon_cached(sample_rate, sigmas, steps, delta)


@functools.lru_cache(maxsize=4096)
def _classic_epsilon_cached(
    sample_rate: float, sigmas: tuple[float, ...], steps: int, delta: float
) -> float:
    from opacus.accountants import RDPAccountant
    from opacus.accountants.analysis.rdp import compute_rdp

    q = check_probability(sample_rate, "sample_rate", closed_right=True)
    steps = check_int(steps, "steps", minimum=1)
    orders = np.asarray(RDPAccountant.DEFAULT_ALPHAS, dtype=float)
    rdp = compute_rdp(
        q=q,
        noise_multiplier=_check_rdp_multiplier(joint_noise_multiplier(sigmas)),
        steps=steps,
        orders=orders,
    )
    # opacus' log-space arithmetic can return values a few ulps below 0 where the
    # RDP is truly >= 0 (huge multipliers); clipping them at 0 is the safe side.
    return classic_rdp_conversion(np.maximum(np.asarray(rdp), 0.0), orders, delta=delta)


@functools.lru_cache(maxsize=4096)
def _improved_epsilon_cached(
    sample_rate: float, sigmas: tuple[float, ...], steps: int, delta: float
) -> float:
    return rdp_epsilon(
        sample_rate=sample_rate,
        noise_multipliers=list(sigmas),
        steps=steps,
        delta=delta,
        same_sample=True,
    )


def max_steps_within(
    target_epsilon: float,
    *,
    sample_rate: float,
    noise_multipliers: float | Sequence[float],
    delta: float,
    limit: int,
) -> int:
    """Return the largest ``t <= limit`` whose epsilon is at most ``target_epsilon``.

    The steps a budget allows: the twin of opacus' ``get_noise_multiplier``, which
    fixes the steps and finds the noise. Epsilon
    (:func:`subsampled_gaussian_epsilon`, improved conversion) increases with the
    number of steps, so a bisection finds it.

    Args:
        target_epsilon: The budget.
        sample_rate: Poisson rate ``q`` in (0, 1].
        noise_multipliers: The multipliers of the releases of one step (read from the
            same sample), or a single one.
        delta: Target delta in (0, 1).
        limit: The most steps to consider, at least 1.

    Returns:
        The number of steps; 0 when a single step already exceeds the target.

    Raises:
        ValueError: If an argument is out of range.

    Privacy:
        ``t`` steps are ``(target_epsilon, delta)``-DP (add/remove-one neighbours,
        Poisson sampling).

    References:
        mironov2019sampled; yousefpour2021opacus.

    Examples:
        >>> max_steps_within(1.0, sample_rate=0.01, noise_multipliers=[1.0, 10.0],
        ...                  delta=1e-5, limit=10)
        2
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")
    limit = check_int(limit, "limit", minimum=1)

    def eps(t: int) -> float:
        return subsampled_gaussian_epsilon(
            sample_rate=sample_rate,
            noise_multipliers=noise_multipliers,
            steps=t,
            delta=delta,
        )

    if eps(limit) <= target_epsilon:
        return limit
    lo, hi = 0, limit  # eps(lo) <= target (or lo == 0), eps(hi) > target
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if eps(mid) <= target_epsilon:
            lo = mid
        else:
            hi = mid
    return lo


# --------------------------------------------------------------------------------------
# A stateful budget accountant
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spend:
    """One recorded spend of a :class:`ZCDPAccountant`.

    Attributes:
        rho: The zCDP budget spent.
        label: What it was spent on (e.g. ``"1-way marginals"``).
    """

    rho: float
    label: str


class ZCDPAccountant:
    """Track spends of a fixed zCDP budget and refuse any spend that would exceed it.

    Construct it with either ``rho`` or an ``(epsilon, delta)`` target (converted with
    :func:`epsilon_delta_to_rho`). Synthesizers (MST, AIM) call :meth:`spend` before
    each measurement.

    Args:
        rho: The total zCDP budget.
        epsilon: The total epsilon (with ``delta``), instead of ``rho``.
        delta: The delta of the ``(epsilon, delta)`` target.

    Raises:
        ValueError: If neither or both ways of giving the budget are used, or a value is
            out of range.

    Privacy:
        Sequential zCDP composition (bun2016concentrated, Lemma 1.7): if every spend is
        recorded, the whole computation is ``spent``-zCDP.

    Examples:
        >>> acc = ZCDPAccountant(rho=1.0)
        >>> acc.spend(0.25, "1-way marginals")
        Spend(rho=0.25, label='1-way marginals')
        >>> acc.remaining
        0.75
    """

    def __init__(
        self,
        *,
        rho: float | None = None,
        epsilon: float | None = None,
        delta: float | None = None,
    ) -> None:
        if rho is not None and (epsilon is not None or delta is not None):
            raise ValueError(
                "give the budget either as rho or as (epsilon, delta), not both."
            )
        if rho is not None:
            self._total = check_rho(rho)
        elif epsilon is not None and delta is not None:
            self._total = epsilon_delta_to_rho(epsilon, delta)
        else:
            raise ValueError(
                "give the total budget as rho=... (zCDP) or as both epsilon=... and "
                "delta=... (converted to zCDP)."
            )
        self._spends: list[Spend] = []

    @property
    def total(self) -> float:
        """The total zCDP budget."""
        return self._total

    @property
    def spent(self) -> float:
        """The zCDP budget spent so far."""
        return math.fsum(s.rho for s in self._spends)

    @property
    def remaining(self) -> float:
        """The zCDP budget still available (never negative)."""
        return max(0.0, self._total - self.spent)

    @property
    def history(self) -> tuple[Spend, ...]:
        """Every recorded spend, in order."""
        return tuple(self._spends)

    def can_spend(self, rho: float) -> bool:
        """Return whether spending ``rho`` more stays within the total budget."""
        rho = check_rho(rho)
        after = self.spent + rho
        # A finite total (even the largest float) cannot hold an overflowed sum,
        # although the slack total * (1 + rtol) may itself round up to inf.
        return math.isfinite(after) and after <= self._total * (1.0 + _BUDGET_RTOL)

    def spend(self, rho: float, label: str = "") -> Spend:
        """Record a spend of ``rho``, or raise if it would exceed the total budget.

        Args:
            rho: The zCDP budget of the measurement about to be made, positive.
            label: What it is spent on.

        Returns:
            The recorded :class:`Spend`.

        Raises:
            ValueError: If ``rho`` is not positive and finite, or the spend would exceed
                the budget (nothing is recorded then).
        """
        rho = check_rho(rho)
        if not isinstance(label, str):
            raise TypeError(f"label must be a string, got {type(label).__name__}.")
        if not self.can_spend(rho):
            raise ValueError(
                f"spending rho={rho:.6g} on {label or 'this measurement'!r} would "
                f"exceed the budget: {self.spent:.6g} of {self._total:.6g} is spent "
                f"and only {self.remaining:.6g} is left. Spend at most "
                "accountant.remaining, or start with a larger budget."
            )
        entry = Spend(rho, label)
        self._spends.append(entry)
        return entry

    def epsilon(self, delta: float) -> float:
        """Return the epsilon at ``delta`` of the budget spent so far (0 if nothing)."""
        delta = check_delta(delta)
        spent = self.spent
        return 0.0 if spent == 0.0 else rho_to_epsilon(spent, delta)

    def __repr__(self) -> str:
        return (
            f"ZCDPAccountant(total={self._total:.6g}, spent={self.spent:.6g}, "
            f"spends={len(self._spends)})"
        )
