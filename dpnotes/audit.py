"""Empirical privacy audits: a statistical lower bound on a mechanism's epsilon.

Run a mechanism many times on two neighbouring datasets ``d0`` and ``d1``, and look for
an event ``S`` (here: the output, or a public statistic of it, above or below a
threshold) that is much more likely under one dataset than the other. An
``(epsilon, delta)``-DP mechanism satisfies
``P[M(d0) in S] <= exp(epsilon) P[M(d1) in S] + delta`` for every ``S``, so with
Clopper–Pearson bounds ``p0_lower <= P[M(d0) in S]`` and ``p1_upper >= P[M(d1) in S]``
(jointly holding with probability ``confidence``),

    ``epsilon >= log((p0_lower - delta) / p1_upper)``.

The method follows Jagielski et al. (2020) and Nasr et al. (2021): the samples are split
in two; the *selection* half picks the event (threshold, direction and which dataset it
favours) that maximises the bound computed on that half; the *estimation* half,
independent of that choice, evaluates the one chosen event. Only the two one-sided
intervals of that single test are made, so each gets a Bonferroni share
``(1 - confidence) / 2``, and no correction for the search over thresholds is needed.

An audit can show that a mechanism is broken (a lower bound above the claimed epsilon),
but never that it is correct: a low bound only means these tests on these neighbours
found no violation. The tests pair every audit with a deliberately broken variant to
show the audit has the power to notice.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from dpnotes.rng import check_rng
from dpnotes.validation import check_array, check_int, check_probability

__all__ = [
    "AuditResult",
    "assert_audit_passes",
    "audit_epsilon",
    "audit_epsilon_from_samples",
    "audit_fails",
    "check_audit_delta",
    "clopper_pearson",
]

#: A mechanism under audit: ``mechanism(data, trials, rng)`` returns ``trials`` outputs.
Mechanism = Callable[[Any, int, np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class AuditResult:
    """The outcome of an empirical privacy audit.

    The chosen event is ``{output > threshold}`` or ``{output < threshold}``. ``p0`` is
    the probability of the event under the dataset it favours (``d0``, or ``d1`` when
    ``swapped``), ``p1`` under the other one.

    Attributes:
        epsilon_lower: The lower bound ``max(0, log((p0_lower - delta) / p1_upper))``,
            valid with probability at least ``confidence``.
        epsilon_estimate: The plug-in value ``log((p0 - delta) / p1)`` on the estimation
            half (not a bound; ``inf`` when ``p1`` is zero).
        threshold: The threshold of the chosen event.
        direction: ``">"`` or ``"<"``.
        swapped: Whether the event favours ``d1`` (then ``p0`` refers to ``d1``).
        p0: Estimated event probability under the favoured dataset.
        p1: Estimated event probability under the other dataset.
        p0_lower: One-sided Clopper–Pearson lower bound on ``p0``.
        p1_upper: One-sided Clopper–Pearson upper bound on ``p1``.
        trials: Number of runs per dataset (both halves).
        confidence: Joint confidence level of the two bounds.
        delta: The delta the bound accounts for.
    """

    epsilon_lower: float
    epsilon_estimate: float
    threshold: float
    direction: str
    swapped: bool
    p0: float
    p1: float
    p0_lower: float
    p1_upper: float
    trials: int
    confidence: float
    delta: float

    def passes(self, claimed_epsilon: float) -> bool:
        """Return whether the audit found no violation of ``claimed_epsilon``."""
        return self.epsilon_lower <= claimed_epsilon

    def summary(self) -> str:
        """Return a one-line description of the result."""
        who = "d1" if self.swapped else "d0"
        return (
            f"epsilon >= {self.epsilon_lower:.4f} at {self.confidence:.0%} confidence "
            f"(delta={self.delta:g}, plug-in {self.epsilon_estimate:.4f}); event "
            f"'output {self.direction} {self.threshold:.6g}' favours {who}: "
            f"p0={self.p0:.4g} (>= {self.p0_lower:.4g}), p1={self.p1:.4g} "
            f"(<= {self.p1_upper:.4g}); {self.trials} trials per dataset"
        )


def clopper_pearson(
    k: int | np.ndarray, n: int, *, confidence: float, side: str
) -> float | np.ndarray:
    """Return a one-sided Clopper–Pearson (exact binomial) bound on a probability.

    Args:
        k: Number of successes (an integer or an integer array), ``0 <= k <= n``.
        n: Number of trials, at least 1.
        confidence: Coverage of the one-sided interval, in (0, 1).
        side: ``"lower"`` or ``"upper"``.

    Returns:
        The bound, with the shape of ``k``.

    Raises:
        ValueError: If ``side`` is unknown or an argument is out of range.

    References:
        clopper1934use.

    Examples:
        >>> round(clopper_pearson(0, 100, confidence=0.95, side="upper"), 4)
        0.0295
    """
    n = check_int(n, "n", minimum=1)
    confidence = check_probability(confidence, "confidence")
    k_arr = np.asarray(k)
    if np.any(k_arr < 0) or np.any(k_arr > n):
        raise ValueError(f"k must lie in [0, n={n}].")
    alpha = 1.0 - confidence
    with np.errstate(invalid="ignore"):
        if side == "lower":
            out = np.where(k_arr > 0, stats.beta.ppf(alpha, k_arr, n - k_arr + 1), 0.0)
        elif side == "upper":
            out = np.where(
                k_arr < n, stats.beta.ppf(1 - alpha, k_arr + 1, n - k_arr), 1.0
            )
        else:
            raise ValueError(f"side must be 'lower' or 'upper', got {side!r}.")
    return float(out) if out.ndim == 0 else out


def _default_thresholds(pooled: np.ndarray, n_thresholds: int) -> np.ndarray:
    # Quantiles of the pooled selection outputs, denser in both tails, where the
    # likelihood ratio of most mechanisms is largest.
    tail = np.logspace(-6, -2, max(n_thresholds // 8, 2))
    body = np.linspace(0.0, 1.0, n_thresholds)
    levels = np.unique(np.concatenate([tail, body, 1.0 - tail]))
    return np.unique(np.quantile(pooled, levels))


def _event_counts(
    sorted_out: np.ndarray, thresholds: np.ndarray
) -> dict[str, np.ndarray]:
    n = sorted_out.shape[0]
    return {
        ">": n - np.searchsorted(sorted_out, thresholds, side="right"),
        "<": np.searchsorted(sorted_out, thresholds, side="left"),
    }


def _log_bound(
    k_hi: np.ndarray, n_hi: int, k_lo: np.ndarray, n_lo: int, level: float, delta: float
) -> np.ndarray:
    p_lower = clopper_pearson(k_hi, n_hi, confidence=level, side="lower")
    p_upper = clopper_pearson(k_lo, n_lo, confidence=level, side="upper")
    num = np.asarray(p_lower) - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(num > 0, np.log(np.maximum(num, 1e-300) / p_upper), -np.inf)


def audit_epsilon_from_samples(
    out0: np.ndarray,
    out1: np.ndarray,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    thresholds: np.ndarray | None = None,
    n_thresholds: int = 256,
) -> AuditResult:
    """Lower-bound epsilon from scalar outputs already sampled on two neighbours.

    Use this when the runs are produced elsewhere (e.g. many training runs); otherwise
    call :func:`audit_epsilon`. The first half of each sample selects the event, the
    second half estimates it (see the module docstring).

    Args:
        out0: Scalar outputs of independent runs on ``d0``, shape ``(trials0,)``.
        out1: Scalar outputs of independent runs on ``d1``, shape ``(trials1,)``.
        delta: The delta of the claim being audited, in ``[0, 1)``.
        confidence: Joint confidence of the bound, in (0, 1).
        thresholds: Candidate thresholds; default quantiles of the pooled selection
            half.
        n_thresholds: Number of default quantile thresholds.

    Returns:
        An :class:`AuditResult`.

    Raises:
        ValueError: If a sample has fewer than 4 entries, NaN entries, or a parameter is
            out of range.

    References:
        jagielski2020auditing; nasr2021adversary.
    """
    a0 = _check_outputs(out0, "out0")
    a1 = _check_outputs(out1, "out1")
    delta = check_audit_delta(delta)
    confidence = check_probability(confidence, "confidence")
    n_thresholds = check_int(n_thresholds, "n_thresholds", minimum=2)
    if a0.shape[0] < 4 or a1.shape[0] < 4:
        raise ValueError(
            "each sample needs at least 4 outputs (half select, half estimate); use "
            "thousands of trials for a useful bound."
        )
    m0, m1 = a0.shape[0] // 2, a1.shape[0] // 2
    sel0, est0 = np.sort(a0[:m0]), np.sort(a0[m0:])
    sel1, est1 = np.sort(a1[:m1]), np.sort(a1[m1:])
    if thresholds is None:
        cand = _default_thresholds(np.concatenate([sel0, sel1]), n_thresholds)
    else:
        cand = check_array(thresholds, "thresholds", ndim=1)
    # Each of the two one-sided bounds gets half of the error probability (Bonferroni).
    level = 1.0 - (1.0 - confidence) / 2.0

    # Selection: score every (threshold, direction, favoured dataset) on the first half
    # by the bound it would get if all 4 * len(cand) events were tested at once
    # (Bonferroni). The stricter level only steers the choice away from sparse tail
    # events whose high score is luck (the winner's curse); validity comes from the
    # estimation half.
    sel_level = 1.0 - (1.0 - confidence) / (2.0 * 4 * cand.size)
    c0, c1 = _event_counts(sel0, cand), _event_counts(sel1, cand)
    best = (-np.inf, 0.0, ">", False)
    for direction in (">", "<"):
        for swapped in (False, True):
            k_hi, n_hi = (c1, sel1.size) if swapped else (c0, sel0.size)
            k_lo, n_lo = (c0, sel0.size) if swapped else (c1, sel1.size)
            score = _log_bound(
                k_hi[direction], n_hi, k_lo[direction], n_lo, sel_level, delta
            )
            i = int(np.argmax(score))
            if score[i] > best[0]:
                best = (float(score[i]), float(cand[i]), direction, swapped)
    _, threshold, direction, swapped = best

    # Estimation: evaluate the one chosen event on the independent second half.
    t = np.array([threshold])
    e0, e1 = _event_counts(est0, t)[direction][0], _event_counts(est1, t)[direction][0]
    (k_hi, n_hi), (k_lo, n_lo) = (
        ((e1, est1.size), (e0, est0.size))
        if swapped
        else ((e0, est0.size), (e1, est1.size))
    )
    p0_lower = float(clopper_pearson(k_hi, n_hi, confidence=level, side="lower"))
    p1_upper = float(clopper_pearson(k_lo, n_lo, confidence=level, side="upper"))
    p0, p1 = k_hi / n_hi, k_lo / n_lo
    eps_lower = math.log((p0_lower - delta) / p1_upper) if p0_lower > delta else 0.0
    if p0 <= delta:
        eps_est = 0.0
    else:
        eps_est = math.inf if p1 == 0 else math.log((p0 - delta) / p1)
    return AuditResult(
        epsilon_lower=max(0.0, eps_lower),
        epsilon_estimate=max(0.0, eps_est),
        threshold=threshold,
        direction=direction,
        swapped=swapped,
        p0=float(p0),
        p1=float(p1),
        p0_lower=p0_lower,
        p1_upper=p1_upper,
        trials=int(min(a0.shape[0], a1.shape[0])),
        confidence=confidence,
        delta=delta,
    )


def audit_epsilon(
    mechanism: Mechanism,
    d0: Any,
    d1: Any,
    *,
    trials: int,
    rng: np.random.Generator,
    delta: float = 0.0,
    confidence: float = 0.95,
    statistic: Callable[[np.ndarray], np.ndarray] | None = None,
    thresholds: np.ndarray | None = None,
) -> AuditResult:
    """Audit a mechanism on two neighbouring datasets: a lower bound on its epsilon.

    Args:
        mechanism: ``mechanism(data, trials, rng)`` returning ``trials`` independent
            outputs (vectorised: shape ``(trials,)``, or ``(trials, ...)`` together with
            a ``statistic``).
        d0: A dataset.
        d1: A neighbour of ``d0`` under the relation of the claim being audited.
        trials: Runs per dataset (at least 100; 10^5 to 10^6 for a sharp bound).
        rng: The random generator; ``d0`` and ``d1`` get independent child streams.
        delta: The delta of the claim being audited, in ``[0, 1)``.
        confidence: Joint confidence of the bound, in (0, 1).
        statistic: A public function mapping the ``(trials, ...)`` outputs to
            ``(trials,)`` scalars (e.g. one coordinate, a norm, a log-likelihood
            ratio). It must not look at the private data beyond the outputs.
        thresholds: Candidate thresholds; default quantiles of the selection half.

    Returns:
        An :class:`AuditResult`; ``result.passes(claimed_epsilon)`` is False when the
        audit proves the claim wrong (with probability at least ``confidence``).

    Raises:
        ValueError: If ``trials < 100``, the outputs have the wrong shape or NaN
            entries, or a parameter is out of range.
        TypeError: If ``mechanism`` is not callable or ``rng`` is not a Generator.

    Privacy:
        An audit gives a lower bound: it can show a mechanism violates its claim under
        the chosen neighbours, never that the mechanism is private.

    References:
        jagielski2020auditing; nasr2021adversary; tramer2022debugging.

    Examples:
        >>> def rr(bit, trials, rng):  # randomized response with epsilon = log(3)
        ...     keep = rng.random(trials) < 0.75
        ...     return np.where(keep, bit, 1 - bit).astype(float)
        >>> res = audit_epsilon(rr, 0, 1, trials=20000, rng=np.random.default_rng(0))
        >>> 0.9 < res.epsilon_lower <= math.log(3)
        True
    """
    if not callable(mechanism):
        raise TypeError("mechanism must be callable as mechanism(data, trials, rng).")
    trials = check_int(trials, "trials", minimum=100)
    rng = check_rng(rng)
    r0, r1 = rng.spawn(2)
    outs = []
    for name, data, r in (("d0", d0, r0), ("d1", d1, r1)):
        out = np.asarray(mechanism(data, trials, r))
        if statistic is not None:
            out = np.asarray(statistic(out))
        if out.shape != (trials,):
            hint = (
                "pass a statistic that maps the outputs to one scalar per trial"
                if statistic is None
                else "the statistic must return one scalar per trial"
            )
            raise ValueError(
                f"the outputs on {name} have shape {out.shape}, expected ({trials},): "
                f"{hint}."
            )
        outs.append(out)
    return audit_epsilon_from_samples(
        outs[0], outs[1], delta=delta, confidence=confidence, thresholds=thresholds
    )


def audit_fails(result: AuditResult, claimed_epsilon: float) -> bool:
    """Return whether the audit refutes ``claimed_epsilon`` (lower bound above it)."""
    return not result.passes(claimed_epsilon)


def assert_audit_passes(result: AuditResult, claimed_epsilon: float) -> None:
    """Raise ``AssertionError`` with the details if the audit refutes the claim.

    Args:
        result: The audit outcome.
        claimed_epsilon: The epsilon the mechanism claims at ``result.delta``.

    Raises:
        AssertionError: If ``result.epsilon_lower > claimed_epsilon``.
    """
    if not result.passes(claimed_epsilon):
        raise AssertionError(
            f"privacy audit refutes epsilon={claimed_epsilon:g}: {result.summary()}"
        )


def _check_outputs(out: Any, name: str) -> np.ndarray:
    arr = np.asarray(out, dtype=float)
    if arr.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D (one scalar output per trial), got shape {arr.shape}; "
            "reduce vector outputs with a public statistic first."
        )
    if np.isnan(arr).any():
        raise ValueError(f"{name} has NaN outputs; the mechanism must return numbers.")
    return arr


def check_audit_delta(delta: Any) -> float:
    """Return an audit's delta as a float in [0, 1), or raise a clear error."""
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.number)):
        raise TypeError(f"delta must be a real number, got {type(delta).__name__}.")
    x = float(delta)
    if math.isnan(x) or not 0.0 <= x < 1.0:
        raise ValueError(
            f"delta must lie in [0, 1), got {delta!r}: use 0 to audit pure DP and the "
            "claimed delta to audit (epsilon, delta)-DP."
        )
    return x
