"""COINPRESS for a univariate Gaussian mean under zCDP (Biswas et al., 2020).

The algorithm starts from a public interval ``[lower, upper]`` known to contain the
mean and repeatedly shrinks it. One step (UVM, Algorithm 1 in the appendix of
:cite:`rosenblatt2024stratification`) clips the data to the interval widened by the
Gaussian tail ``sigma * sqrt(2 log(2 m / beta))``, releases the clipped mean with
Gaussian noise, and returns a new interval of half-width
``psi = sqrt(2 (sigma**2 / m + s**2) log(2 / beta))`` around the release, where ``s`` is
the noise standard deviation. UVMRec (Algorithm 2) runs ``t`` steps with budgets
``rho_1 + ... + rho_t = rho`` and returns the last release.

Everything is vectorised: ``x`` may have leading trial axes, and the internal segment
functions run many groups and trials in one pass (see :mod:`dpnotes.mean.layout`).

The number of records ``m`` that enters the clipping tail and the noise scale must be
public. For a plain mean of ``n`` records with ``n`` public it is ``n`` itself; inside a
stratified estimate it is a public (or privatised) group size, see
:func:`dpnotes.mean.stratified_mean`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpnotes.mean.layout import Layout
from dpnotes.rng import check_rng
from dpnotes.validation import (
    check_array,
    check_int,
    check_positive,
    check_probability,
    check_result,
    check_rho,
    check_scale,
    check_width,
)

__all__ = [
    "CoinpressResult",
    "coinpress_mean",
    "coinpress_schedule",
    "step_budgets",
    "uvm",
]


@dataclass(frozen=True)
class CoinpressResult:
    """A COINPRESS release and the intervals it passed through.

    Attributes:
        estimate: The private mean (the last step's release); a float, or an array of
            the leading (trial) shape of ``x``.
        lower: Interval lower ends, shape ``(t + 1, *estimate_shape)``; row 0 is the
            public starting interval, row ``j`` the interval after step ``j``.
        upper: Interval upper ends, same shape.
        rho: The zCDP budget spent per step, shape ``(t,)``.
    """

    estimate: float | np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    rho: np.ndarray

    @property
    def width(self) -> np.ndarray:
        """Interval widths per step, shape ``(t + 1, ...)``."""
        return self.upper - self.lower


def coinpress_schedule(rho: float, t: int) -> np.ndarray:
    """Split ``rho`` over ``t`` COINPRESS steps: a quarter for the first ``t - 1``.

    The last step produces the estimate, so it gets three quarters of the budget and
    the ``t - 1`` interval-shrinking steps share the remaining quarter equally. For
    ``t = 2`` this is the split ``(rho / 4, 3 rho / 4)`` of the COINPRESS reference
    code, which the stratification paper's code also uses.

    Args:
        rho: Total zCDP budget, positive.
        t: Number of steps, at least 1.

    Returns:
        The per-step budgets, shape ``(t,)``, summing to ``rho``.

    References:
        biswas2020coinpress.

    Examples:
        >>> coinpress_schedule(0.5, 2).tolist()
        [0.125, 0.375]
    """
    rho = check_rho(rho)
    t = check_int(t, "t", minimum=1)
    if t == 1:
        return np.array([rho])
    return np.concatenate([np.full(t - 1, rho / (4 * (t - 1))), [0.75 * rho]])


def step_budgets(
    rho: float, t: int, rho_fractions: Sequence[float] | None
) -> np.ndarray:
    """Return the zCDP budget of each of the ``t`` steps of COINPRESS.

    Args:
        rho: The total budget.
        t: The number of steps.
        rho_fractions: The share of ``rho`` of each step (positive, summing to 1);
            ``None`` gives :func:`coinpress_schedule`.

    Returns:
        ``(t,)`` budgets summing to ``rho``.

    Raises:
        ValueError: If ``rho_fractions`` has not ``t`` positive entries summing to 1.
    """
    if rho_fractions is None:
        return coinpress_schedule(rho, t)
    fractions = check_array(rho_fractions, "rho_fractions", ndim=1)
    if fractions.shape[0] != t:
        raise ValueError(
            f"rho_fractions has {fractions.shape[0]} entries but t={t}; give one "
            "fraction per step."
        )
    if np.any(fractions <= 0) or abs(float(fractions.sum()) - 1.0) > 1e-9:
        raise ValueError(
            f"rho_fractions must be positive and sum to 1, got {fractions.tolist()}."
        )
    return rho * fractions


def _betas(beta: float, t: int) -> np.ndarray:
    """Failure probabilities per step: ``beta / (4 (t - 1))`` then ``beta / 4``."""
    if t == 1:
        return np.array([beta / 4])
    return np.concatenate([np.full(t - 1, beta / (4 * (t - 1))), [beta / 4]])


def _uvm_step(
    layout: Layout,
    x: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    size: np.ndarray,
    rho: float,
    beta: float,
    sigma: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One UVM step on every segment; ``size`` is the public record count ``m``."""
    tail = sigma * np.sqrt(2.0 * np.log(2.0 * size / beta))
    a, b = lower - tail, upper + tail
    centre = 0.5 * (a + b)
    # Summing the clipped values around the interval centre keeps one record's
    # influence on the sum at most (b - a) / 2 when it is added or removed, and at most
    # b - a when it is replaced; dividing by the public m (not the private count) keeps
    # the noise scale free of private information.
    clipped = layout.clip(x, a, b)
    centred_sum = layout.sum(clipped) - layout.counts * centre
    sd = (b - a) / size / math.sqrt(2.0 * rho)
    release = centre + centred_sum / size + sd * rng.standard_normal(layout.n_segments)
    psi = np.sqrt(2.0 * (sigma**2 / size + sd**2) * math.log(2.0 / beta))
    return release, release - psi, release + psi


_ADVICE = (
    "rescale the data (e.g. to other units), pass narrower public bounds or a smaller "
    "sigma, or use a larger rho"
)


def check_run(
    lower: np.ndarray,
    upper: np.ndarray,
    size: np.ndarray,
    rho_steps: np.ndarray,
    beta: float | np.ndarray,
    sigma: float,
) -> None:
    """Raise if any step's interval or noise scale would overflow (internal).

    ``beta`` is the run's failure probability, split over the steps as in
    :func:`coinpress_mean`, or an array of the per-step values.

    The widths COINPRESS passes through do not depend on the data: step ``j`` clips to
    an interval ``2 tail_j`` wider than the current one and returns one of width
    ``2 psi_j``, both set by public quantities. So the whole run is checked before any
    noise is drawn.
    """
    betas = np.asarray(beta) if np.ndim(beta) else _betas(beta, rho_steps.shape[0])
    sigma = np.float64(sigma)  # sigma**2 overflows to inf, not OverflowError
    with np.errstate(over="ignore", invalid="ignore"):
        tail = sigma * np.sqrt(2.0 * np.log(2.0 * size / betas[0]))
        a, b = lower - tail, upper + tail
        check_width(a, b, what="the clip interval's (the bounds plus the tail)")
        check_result(0.5 * (a + b), "clip interval's centre", advice=_ADVICE)
        width = b - a
        for j in range(rho_steps.shape[0]):
            if j > 0:
                tail = sigma * np.sqrt(2.0 * np.log(2.0 * size / betas[j]))
                width = width + 2.0 * tail
            check_result(width, f"step {j + 1}'s clip width", advice=_ADVICE)
            sd = width / size / math.sqrt(2.0 * rho_steps[j])
            check_scale(sd, f"step {j + 1}'s noise scale", advice=_ADVICE)
            psi = np.sqrt(2.0 * (sigma**2 / size + sd**2) * math.log(2.0 / betas[j]))
            check_result(psi, f"step {j + 1}'s interval half-width", advice=_ADVICE)
            width = 2.0 * psi


def coinpress_segments(
    layout: Layout,
    x: np.ndarray,
    *,
    lower: np.ndarray,
    upper: np.ndarray,
    size: np.ndarray,
    rho_steps: np.ndarray,
    beta: float,
    sigma: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run UVMRec on every segment of ``layout`` at once (internal; inputs trusted).

    Returns:
        ``(estimate, lowers, uppers)`` with shapes ``(S,)``, ``(t + 1, S)``,
        ``(t + 1, S)``.
    """
    t = rho_steps.shape[0]
    betas = _betas(beta, t)
    lowers = [np.asarray(lower, dtype=float)]
    uppers = [np.asarray(upper, dtype=float)]
    estimate = np.full(layout.n_segments, np.nan)
    for j in range(t):
        estimate, lo, hi = _uvm_step(
            layout, x, lowers[-1], uppers[-1], size, rho_steps[j], betas[j], sigma, rng
        )
        lowers.append(lo)
        uppers.append(hi)
    return estimate, np.stack(lowers), np.stack(uppers)


def _per_trial(bound: object, name: str, lead: tuple[int, ...]) -> np.ndarray:
    """A bound as one float per trial: a scalar, or an array of the trials' shape."""
    arr = check_array(bound, name)
    try:
        return np.broadcast_to(arr, lead).astype(float)
    except ValueError:
        raise ValueError(
            f"{name} must be a number or one per trial (shape {lead}, the shape of x "
            f"without its last axis of records), got shape {arr.shape}."
        ) from None


def _prepare(
    x: object, lower: float, upper: float, sigma: float, beta: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    arr = check_array(x, "x")
    if arr.ndim == 0:
        raise ValueError(
            "x must have at least one axis (the records); pass shape (n,) or "
            "(trials, n)."
        )
    lead = arr.shape[:-1]
    lo, hi = (
        _per_trial(b, name, lead) for b, name in ((lower, "lower"), (upper, "upper"))
    )
    if np.any(lo >= hi):
        raise ValueError(
            "lower must be below upper: the starting interval [lower, upper] must be a "
            "public range known to contain the mean."
        )
    check_width(lo, hi)
    sigma = check_positive(sigma, "sigma")
    beta = check_probability(beta, "beta")
    return arr, lo.reshape(-1), hi.reshape(-1), sigma, beta


def coinpress_mean(
    x: np.ndarray,
    *,
    lower: float | np.ndarray,
    upper: float | np.ndarray,
    rho: float,
    rng: np.random.Generator,
    t: int = 2,
    sigma: float = 1.0,
    beta: float = 0.01,
    rho_fractions: Sequence[float] | None = None,
    return_trace: bool = False,
) -> float | np.ndarray | CoinpressResult:
    """Release a Gaussian mean with COINPRESS (UVMRec) under ``rho``-zCDP.

    Args:
        x: Records, shape ``(n,)``, or ``(..., n)`` for independent trials. The number
            of records ``n`` is public.
        lower: Public lower end of an interval known to contain the mean (scalar or
            one per trial).
        upper: Public upper end, above ``lower``.
        rho: Total zCDP budget, positive and finite.
        rng: The random generator.
        t: Number of steps, at least 1 (``t = 1`` is a single clipped Gaussian mean).
        sigma: Public bound on the data's standard deviation; the clipping tail is
            ``sigma * sqrt(2 log(2 n / beta_j))``.
        beta: Failure probability of the whole run (split over the steps as in
            Algorithm 2: ``beta / (4 (t - 1))`` per shrinking step, ``beta / 4`` last;
            each step spends its share twice, on clipping and on its interval, so the
            shares add up to ``beta``).
        rho_fractions: Fractions of ``rho`` per step, summing to one; the default is
            :func:`coinpress_schedule`.
        return_trace: Return a :class:`CoinpressResult` with every interval instead of
            just the estimate.

    Returns:
        The private mean (a float for 1-D ``x``, else an array of the leading shape),
        or a :class:`CoinpressResult`.

    Raises:
        ValueError: If ``x`` is empty or has NaN/inf, ``lower >= upper``, ``rho``,
            ``sigma`` are not positive, ``beta`` is outside (0, 1), ``t < 1``, the
            fractions are invalid, or an interval width or noise scale of the run
            would overflow (checked before any noise is drawn: rescale the data or
            pass narrower bounds).
        TypeError: If ``rng`` is not a :class:`numpy.random.Generator`.

    Privacy:
        ``rho``-zCDP per trial under replace-one neighbouring with ``n`` public: step
        ``j`` is a Gaussian mechanism with sensitivity ``(b_j - a_j) / n`` and budget
        ``rho_j``, and the steps compose sequentially. Accuracy (not privacy) rests on
        the Gaussian assumption and the starting interval.

    References:
        biswas2020coinpress, Algorithms 1-2; rosenblatt2024stratification, Appendix B.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> x = rng.normal(3.0, 1.0, size=(4, 20_000))
        >>> est = coinpress_mean(x, lower=-50, upper=50, rho=0.5, rng=rng)
        >>> bool(np.all(np.abs(est - 3.0) < 0.05))
        True
    """
    arr, lo, hi, sigma, beta = _prepare(x, lower, upper, sigma, beta)
    rho = check_rho(rho)
    t = check_int(t, "t", minimum=1)
    steps = step_budgets(rho, t, rho_fractions)
    rng = check_rng(rng)
    n = arr.shape[-1]
    layout = Layout.rectangular(lo.shape[0], n)
    size = np.full(layout.n_segments, float(n))
    check_run(lo, hi, size, steps, beta, sigma)
    est, lows, highs = coinpress_segments(
        layout,
        arr.reshape(-1),
        lower=lo,
        upper=hi,
        size=size,
        rho_steps=steps,
        beta=beta,
        sigma=sigma,
        rng=rng,
    )
    check_result(est, "COINPRESS estimate", advice=_ADVICE)
    lead = arr.shape[:-1]
    estimate = float(est[0]) if not lead else est.reshape(lead)
    if not return_trace:
        return estimate
    return CoinpressResult(
        estimate=estimate,
        lower=lows.reshape((t + 1, *lead)),
        upper=highs.reshape((t + 1, *lead)),
        rho=steps,
    )


def uvm(
    x: np.ndarray,
    *,
    lower: float | np.ndarray,
    upper: float | np.ndarray,
    rho: float,
    rng: np.random.Generator,
    sigma: float = 1.0,
    beta: float = 0.01,
) -> CoinpressResult:
    """Run one COINPRESS step (UVM): a private mean and a shrunken interval.

    The step spends ``beta`` twice, as in Algorithm 1: on the clipping tail (a union
    bound over the ``n`` records: some record is clipped with probability at most
    ``beta``) and on the new interval (``psi`` is the Gaussian tail at which
    ``2 exp(-psi^2 / 2 v) = beta``, ``v`` the variance of the release). When the data
    are Gaussian with standard deviation at most ``sigma`` and the mean lies in
    ``[lower, upper]``, the returned interval therefore contains the mean with
    probability at least ``1 - 2 beta``; :func:`coinpress_mean` splits its ``beta`` so
    that the whole run fails with probability at most ``beta``.

    Args:
        x: Records, shape ``(n,)`` or ``(..., n)``; ``n`` public.
        lower: Public lower end of the starting interval.
        upper: Public upper end.
        rho: The step's zCDP budget.
        rng: The random generator.
        sigma: Public bound on the standard deviation.
        beta: Failure probability of the step, in (0, 1).

    Returns:
        A :class:`CoinpressResult` with ``t = 1``.

    Raises:
        ValueError: As :func:`coinpress_mean`.
        TypeError: If ``rng`` is not a :class:`numpy.random.Generator`.

    Privacy:
        ``rho``-zCDP per trial under replace-one neighbouring with ``n`` public.

    References:
        biswas2020coinpress, Algorithm 1 (UVM).
    """
    arr, lo, hi, sigma, beta = _prepare(x, lower, upper, sigma, beta)
    rho = check_rho(rho)
    rng = check_rng(rng)
    n = arr.shape[-1]
    layout = Layout.rectangular(lo.shape[0], n)
    size = np.full(layout.n_segments, float(n))
    check_run(lo, hi, size, np.array([rho]), np.array([beta]), sigma)
    est, new_lo, new_hi = _uvm_step(
        layout, arr.reshape(-1), lo, hi, size, rho, beta, sigma, rng
    )
    check_result(est, "UVM estimate", advice=_ADVICE)
    lead = arr.shape[:-1]
    return CoinpressResult(
        estimate=float(est[0]) if not lead else est.reshape(lead),
        lower=np.stack([lo, new_lo]).reshape((2, *lead)),
        upper=np.stack([hi, new_hi]).reshape((2, *lead)),
        rho=np.array([rho]),
    )
