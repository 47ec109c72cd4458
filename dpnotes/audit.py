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
show the audit has the power to notice, and :func:`audit_power` states that power: the
rate at which the audit refutes the claim when the mechanism truly spends a multiple of
it.

The sharpest statistic is the privacy loss itself, where it can be computed from the
output. For objective perturbation it can: :func:`logistic_perturbation_noise` recovers
the noise vector from the released weights, and the difference of its norms on two
neighbours is the log-likelihood ratio up to a known factor.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from dpnotes.rng import check_rng
from dpnotes.validation import (
    check_array,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
)

__all__ = [
    "AuditPower",
    "AuditResult",
    "PowerPoint",
    "assert_audit_passes",
    "audit_epsilon",
    "audit_epsilon_from_samples",
    "audit_fails",
    "audit_power",
    "check_audit_delta",
    "clopper_pearson",
    "logistic_perturbation_noise",
]

#: A mechanism under audit: ``mechanism(data, trials, rng)`` returns ``trials`` outputs.
Mechanism = Callable[[Any, int, np.random.Generator], np.ndarray]
#: A mechanism family: ``family(epsilon)`` is a mechanism that truly spends ``epsilon``.
MechanismFamily = Callable[[float], Mechanism]


def _as_claim(claimed_epsilon: object) -> float:
    """The claimed epsilon as a float at least 0 (inf: no claim to refute)."""
    if isinstance(claimed_epsilon, bool) or not isinstance(
        claimed_epsilon, (int, float, np.integer, np.floating)
    ):
        raise ValueError(
            "claimed_epsilon must be the epsilon the mechanism claims, a number at "
            f"least 0; got {claimed_epsilon!r}."
        )
    claimed = float(claimed_epsilon)
    if math.isnan(claimed) or claimed < 0:
        raise ValueError(
            "claimed_epsilon must be the epsilon the mechanism claims, a number at "
            f"least 0; got {claimed_epsilon!r}."
        )
    return claimed


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
        """Return whether the audit found no violation of ``claimed_epsilon``.

        Raises:
            ValueError: If the claim is not a number at least 0 (NaN included: a
                claim of NaN can be neither refuted nor upheld).
        """
        claimed = _as_claim(claimed_epsilon)
        return self.epsilon_lower <= claimed

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
    """Return whether the audit refutes ``claimed_epsilon`` (lower bound above it).

    Raises:
        ValueError: As :meth:`AuditResult.passes`, for a claim that is not a number
            at least 0.
    """
    return not result.passes(claimed_epsilon)


def assert_audit_passes(result: AuditResult, claimed_epsilon: float) -> None:
    """Raise ``AssertionError`` with the details if the audit refutes the claim.

    Args:
        result: The audit outcome.
        claimed_epsilon: The epsilon the mechanism claims at ``result.delta``.

    Raises:
        AssertionError: If ``result.epsilon_lower > claimed_epsilon``.
        ValueError: For a claim that is not a number at least 0 (NaN included).
    """
    if not result.passes(claimed_epsilon):
        raise AssertionError(
            f"privacy audit refutes epsilon={claimed_epsilon:g}: {result.summary()}"
        )


# --- the power of an audit ----------------------------------------------------------


@dataclass(frozen=True)
class PowerPoint:
    """How often audits refuted the claim when the mechanism spent ``factor`` times it.

    Attributes:
        factor: The overspend factor: the mechanism's true epsilon over the claim.
        true_epsilon: ``factor * claimed epsilon``, what the audited mechanism spends.
        rejections: How many of the ``repeats`` audits refuted the claim (a lower bound
            above the claimed epsilon).
        repeats: How many independent audits were run.
        rate: ``rejections / repeats``: the estimated power at this factor (at factor
            1 or below, the rate of false alarms).
        rate_lower: Lower end of the two-sided Clopper–Pearson interval on the rate.
        rate_upper: Upper end of that interval.
        epsilon_lowers: Each audit's lower bound on epsilon, in the order run.
    """

    factor: float
    true_epsilon: float
    rejections: int
    repeats: int
    rate: float
    rate_lower: float
    rate_upper: float
    epsilon_lowers: tuple[float, ...]

    @property
    def median_epsilon_lower(self) -> float:
        """The median of the audits' lower bounds."""
        return float(np.median(self.epsilon_lowers))


@dataclass(frozen=True)
class AuditPower:
    """The power of an audit against a claimed epsilon, at several overspend factors.

    Attributes:
        epsilon: The claimed epsilon every audit tested.
        delta: The claimed delta.
        trials: Runs per dataset in each audit.
        repeats: Independent audits per factor.
        confidence: The confidence of each audit's lower bound.
        interval_confidence: The confidence of the intervals on the rates.
        points: One :class:`PowerPoint` per factor, in the order the factors were given.
        seconds: Wall time of all the audits.
    """

    epsilon: float
    delta: float
    trials: int
    repeats: int
    confidence: float
    interval_confidence: float
    points: tuple[PowerPoint, ...]
    seconds: float

    def point(self, factor: float) -> PowerPoint:
        """Return the :class:`PowerPoint` of ``factor``.

        Raises:
            KeyError: If ``factor`` was not audited.
        """
        for p in self.points:
            if math.isclose(p.factor, factor, rel_tol=1e-12, abs_tol=0.0):
                return p
        raise KeyError(
            f"factor {factor!r} was not audited; the factors are "
            f"{[p.factor for p in self.points]}."
        )

    def rates(self) -> dict[float, float]:
        """Return ``{factor: rejection rate}``."""
        return {p.factor: p.rate for p in self.points}

    def smallest_factor(
        self, power: float = 0.8, *, conservative: bool = False
    ) -> float | None:
        """Return the smallest audited factor caught with at least ``power``.

        Args:
            power: The required rejection rate, in (0, 1).
            conservative: Compare the lower end of the rate's interval, not the rate,
                with ``power`` (the power is then demonstrated, not only estimated).

        Returns:
            The smallest such factor, or ``None`` if no audited factor reaches it.
        """
        power = check_probability(power, "power")
        for p in sorted(self.points, key=lambda q: q.factor):
            if (p.rate_lower if conservative else p.rate) >= power:
                return p.factor
        return None

    def table(self) -> str:
        """Return the power table as aligned text, one row per factor."""
        pct = f"{self.interval_confidence:.0%}"
        head = (
            f"{'factor':>7} {'true eps':>9} {'rejected':>9} {'rate':>6} "
            f"{pct + ' interval':>17} {'median lower bound':>19}"
        )
        rows = [head]
        for p in self.points:
            rows.append(
                f"{p.factor:>7g} {p.true_epsilon:>9.4g} "
                f"{f'{p.rejections}/{p.repeats}':>9} {p.rate:>6.2f} "
                f"{f'[{p.rate_lower:.2f}, {p.rate_upper:.2f}]':>17} "
                f"{p.median_epsilon_lower:>19.3f}"
            )
        return "\n".join(rows)


def _check_factors(factors: Any) -> tuple[float, ...]:
    if isinstance(factors, (str, bytes)) or not isinstance(
        factors, (Sequence, np.ndarray)
    ):
        raise TypeError(
            "factors must be a sequence of overspend factors, e.g. (1.0, 2.0); got "
            f"{type(factors).__name__}."
        )
    if not all(
        isinstance(f, (int, float, np.integer, np.floating)) and not isinstance(f, bool)
        for f in factors
    ):
        raise TypeError(f"factors must be real numbers, got {list(factors)!r}.")
    out = tuple(float(f) for f in factors)
    if not all(math.isfinite(f) and f > 0.0 for f in out):
        raise ValueError(
            f"factors must be positive, finite overspend factors (true epsilon over "
            f"the claimed one, e.g. 1.0 and 2.0); got {list(out)}."
        )
    if not out:
        raise ValueError(
            "factors is empty; pass the overspend factors to audit, e.g. (1.0, 2.0)."
        )
    if len(set(out)) != len(out):
        raise ValueError(f"factors has duplicates: {list(out)}; list each once.")
    return out


def audit_power(
    family: MechanismFamily,
    d0: Any,
    d1: Any,
    *,
    epsilon: float,
    factors: Sequence[float] = (1.0, 1.5, 2.0, 3.0),
    repeats: int,
    trials: int,
    rng: np.random.Generator,
    delta: float = 0.0,
    confidence: float = 0.95,
    interval_confidence: float = 0.95,
    statistic: Callable[[np.ndarray], np.ndarray] | None = None,
    progress: bool = False,
) -> AuditPower:
    """Estimate how often an audit refutes ``epsilon`` when the truth is a multiple.

    For each factor ``f``, run :func:`audit_epsilon` ``repeats`` times, independently,
    on ``family(f * epsilon)`` (a mechanism that truly spends ``f * epsilon``) and
    count the audits whose lower bound exceeds the claimed ``epsilon``. At ``f > 1``
    the rate is the audit's power to catch an ``f``-fold overspend; at ``f <= 1`` it
    is the rate of false alarms, which a valid audit keeps below
    ``1 - confidence``.

    Args:
        family: ``family(true_epsilon)`` returns the mechanism (as
            :func:`audit_epsilon` takes it) that spends ``true_epsilon``.
        d0: A dataset.
        d1: A neighbour of ``d0``.
        epsilon: The claimed epsilon every audit tests.
        factors: Overspend factors (positive, distinct), e.g. ``(1, 1.5, 2, 3)``.
        repeats: Independent audits per factor (at least 1; 20 or more for a rate
            with a useful interval).
        trials: Runs per dataset in each audit (at least 100).
        rng: The random generator; each factor and each repeat gets its own child
            stream, so adding a factor leaves the others' results unchanged.
        delta: The claimed delta, in ``[0, 1)``.
        confidence: Confidence of each audit's lower bound, in (0, 1).
        interval_confidence: Confidence of the two-sided Clopper–Pearson interval
            on each rate, in (0, 1).
        statistic: As :func:`audit_epsilon`.
        progress: Show a progress bar over the audits.

    Returns:
        An :class:`AuditPower`.

    Raises:
        TypeError: If ``family`` or ``statistic`` is not callable, ``rng`` is not a
            Generator, ``factors`` is not a sequence, or ``repeats``/``trials`` not
            integers; all before any audit runs.
        ValueError: If a number is out of range or ``factors`` is empty or has
            duplicates; all before any audit runs.

    Privacy:
        None needed: it runs audits, which give lower bounds only.

    References:
        jagielski2020auditing; nasr2021adversary; clopper1934use.

    Examples:
        >>> def laplace(eps):
        ...     return lambda x, t, r: x + r.laplace(0.0, 1.0 / eps, t)
        >>> res = audit_power(laplace, 0.0, 1.0, epsilon=1.0, factors=(1.0, 3.0),
        ...                   repeats=10, trials=2000, rng=np.random.default_rng(0))
        >>> res.rates()
        {1.0: 0.0, 3.0: 1.0}
    """
    if not callable(family):
        raise TypeError(
            "family must be callable as family(epsilon) -> mechanism, the mechanism "
            "that truly spends epsilon."
        )
    if statistic is not None and not callable(statistic):
        raise TypeError("statistic must be callable (outputs -> one scalar per trial).")
    epsilon = check_epsilon(epsilon)
    factors = _check_factors(factors)
    repeats = check_int(repeats, "repeats", minimum=1)
    trials = check_int(trials, "trials", minimum=100)
    rng = check_rng(rng)
    delta = check_audit_delta(delta)
    confidence = check_probability(confidence, "confidence")
    interval_confidence = check_probability(interval_confidence, "interval_confidence")
    level = 1.0 - (1.0 - interval_confidence) / 2.0

    start = time.perf_counter()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(factors) * repeats, desc="audits", unit="audit")
    points = []
    for factor, stream in zip(factors, rng.spawn(len(factors)), strict=True):
        mechanism = family(factor * epsilon)
        if not callable(mechanism):
            raise TypeError(
                f"family({factor * epsilon:g}) returned {type(mechanism).__name__}, "
                "not a mechanism; it must return mechanism(data, trials, rng)."
            )
        lowers = []
        for r in stream.spawn(repeats):
            result = audit_epsilon(
                mechanism,
                d0,
                d1,
                trials=trials,
                rng=r,
                delta=delta,
                confidence=confidence,
                statistic=statistic,
            )
            lowers.append(result.epsilon_lower)
            if bar is not None:
                bar.update()
        k = int(sum(lb > epsilon for lb in lowers))
        points.append(
            PowerPoint(
                factor=factor,
                true_epsilon=factor * epsilon,
                rejections=k,
                repeats=repeats,
                rate=k / repeats,
                rate_lower=float(
                    clopper_pearson(k, repeats, confidence=level, side="lower")
                ),
                rate_upper=float(
                    clopper_pearson(k, repeats, confidence=level, side="upper")
                ),
                epsilon_lowers=tuple(float(lb) for lb in lowers),
            )
        )
    if bar is not None:
        bar.close()
    return AuditPower(
        epsilon=epsilon,
        delta=delta,
        trials=trials,
        repeats=repeats,
        confidence=confidence,
        interval_confidence=interval_confidence,
        points=tuple(points),
        seconds=time.perf_counter() - start,
    )


# --- a statistic for objective perturbation ----------------------------------------


def logistic_perturbation_noise(
    coef: np.ndarray, x: np.ndarray, y: np.ndarray, *, C: float
) -> np.ndarray:
    """Recover the noise vector of objective perturbation from the weights it released.

    Objective perturbation releases the minimiser ``w`` of
    ``sum_i l(w . x_i, y_i) + ||w||^2 / (2 C) + b . w`` with the logistic loss ``l``
    and a random vector ``b`` of density proportional to ``exp(-epsilon' ||b|| / 2)``
    (diffprivlib's scaling for rows of norm at most 1). The gradient vanishes at
    ``w``, so

        ``b_D(w) = -(sum_i (sigmoid(w . x_i) - y_i) x_i + w / C)``,

    a function of the output and the data set ``D``, one to one in ``w``. For
    neighbours ``D`` and ``D'`` the log-likelihood ratio of the output ``w`` is
    ``(epsilon' / 2) (||b_D'(w)|| - ||b_D(w)||) + log det H_D(w) - log det H_D'(w)``,
    where ``H`` is the objective's Hessian; the determinant term is at most
    ``2 log(1 + C / 4)`` in size. The norm difference is thus the likelihood-ratio
    statistic an audit of objective perturbation should threshold, and it is at most
    ``||grad l_D(w) - grad l_D'(w)||`` (the differing records' loss gradients) in size.

    Args:
        coef: Released weights, shape ``(d,)`` or ``(trials, d)``.
        x: The rows the mechanism was fitted on, shape ``(n, d)`` (every row it saw,
            fixed rows such as anchors included).
        y: Their labels, 0 or 1 (1 is the positive class), shape ``(n,)``.
        C: The inverse regularisation strength of the objective above.

    Returns:
        ``b_D(w)`` for each set of weights, with the shape of ``coef``.

    Raises:
        ValueError: If the shapes disagree or a label is not 0 or 1.

    References:
        chaudhuri2011differentially, Algorithm 2 and the proof of Theorem 9.

    Examples:
        >>> x = np.array([[0.6, 0.8], [0.8, 0.6]])
        >>> logistic_perturbation_noise(np.zeros(2), x, np.array([1, 0]), C=1.0)
        array([-0.1,  0.1])
    """
    C = check_positive(C, "C")
    w = np.asarray(coef, dtype=float)
    xs = check_array(x, "x", ndim=2)
    ys = np.asarray(y, dtype=float)
    if w.ndim not in (1, 2) or w.shape[-1] != xs.shape[1]:
        raise ValueError(
            f"coef must have shape (d,) or (trials, d) with d = {xs.shape[1]} (the "
            f"width of x); got {w.shape}."
        )
    if ys.shape != (xs.shape[0],) or not np.isin(ys, (0.0, 1.0)).all():
        raise ValueError(
            f"y must hold one label, 0 or 1, per row of x ({xs.shape[0]} rows)."
        )
    ws = np.atleast_2d(w)
    if ws.shape[0] * xs.shape[0] > 1_000_000:
        # Many weights on a large data set: audits' data sets repeat rows, so sum
        # over the distinct rows, with their counts (sorting them costs a little).
        rows, counts = np.unique(np.column_stack([xs, ys]), axis=0, return_counts=True)
        xs, ys = rows[:, :-1], rows[:, -1]
    else:
        counts = np.ones(xs.shape[0])
    sigma = 0.5 * (1.0 + np.tanh(0.5 * (ws @ xs.T)))  # the logistic, overflow-free
    b = -(((sigma - ys) * counts) @ xs + ws / C)
    return b[0] if w.ndim == 1 else b


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
