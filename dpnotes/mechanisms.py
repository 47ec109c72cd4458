"""Noise-adding mechanisms: Laplace and Gaussian, and the clipped means built on them.

Every function takes an explicit ``rng`` and is vectorised: an array input gets
independent noise per entry, and the clipped means treat all leading axes as independent
trials (``x`` of shape ``(trials, n)`` gives ``trials`` independent releases at once).
"""

from __future__ import annotations

import math

import numpy as np

from dpnotes.accounting import analytic_gaussian_sigma, gaussian_sigma_for_rho
from dpnotes.rng import check_rng
from dpnotes.validation import (
    check_array,
    check_bounds,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
    check_result,
    check_rho,
    check_scale,
    check_width,
)

__all__ = [
    "clipped_laplace_half_width",
    "clipped_laplace_mean",
    "clipped_mean_sensitivity",
    "exponential_mechanism",
    "exponential_mechanism_epsilon",
    "gaussian_mean",
    "gaussian_mechanism",
    "gaussian_sigma",
    "laplace_mean",
    "laplace_mechanism",
    "laplace_scale",
]


def _as_output(value: np.ndarray, scalar: bool) -> float | np.ndarray:
    return float(value) if scalar else value


def _check_release(noisy: np.ndarray) -> np.ndarray:
    """Refuse a release that overflowed (a huge value plus huge noise)."""
    return check_result(
        noisy,
        "noisy release",
        advice="rescale the data (e.g. to other units) so that values and noise stay "
        "far below 1e308",
    )


_LAPLACE_ADVICE = (
    "use a larger epsilon, or rescale the data so that the sensitivity is smaller"
)
_MEAN_ADVICE = "rescale the data, pass narrower public bounds, or use a larger budget"


def laplace_scale(*, sensitivity: float, epsilon: float) -> float:
    """Return the Laplace noise scale ``b = sensitivity / epsilon`` for ``epsilon``-DP.

    Args:
        sensitivity: The L1 sensitivity of the released query, positive.
        epsilon: The privacy budget, positive and finite.

    Returns:
        The scale ``b`` (the noise variance is ``2 b**2``).

    Raises:
        ValueError: If an argument is not positive and finite, or the scale
            overflows (or underflows to zero): use a larger epsilon or rescale the data.

    Privacy:
        ``Laplace(b)`` noise gives ``epsilon``-DP under the relation defining
        ``sensitivity``.

    References:
        dwork2006calibrating; dwork2014algorithmic, Theorem 3.6.

    Examples:
        >>> laplace_scale(sensitivity=2.0, epsilon=0.5)
        4.0
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    epsilon = check_epsilon(epsilon)
    return check_scale(sensitivity / epsilon, "Laplace scale", advice=_LAPLACE_ADVICE)


def laplace_mechanism(
    value: float | np.ndarray,
    *,
    sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
) -> float | np.ndarray:
    """Release ``value`` plus Laplace noise of scale ``sensitivity / epsilon``.

    Args:
        value: A scalar or an array; each entry gets independent noise.
        sensitivity: The L1 sensitivity of the *whole* released value (for a vector,
            the largest L1 distance between its values on neighbouring datasets).
        epsilon: The privacy budget, positive and finite.
        rng: The random generator.

    Returns:
        A float for a scalar ``value``, else an array of the same shape.

    Raises:
        ValueError: If ``value`` has NaN or infinite entries, a parameter is out of
            range, the noise scale overflows (checked before drawing), or the noisy
            release overflows.
        TypeError: If ``rng`` is not a :class:`numpy.random.Generator`.

    Privacy:
        ``epsilon``-DP under the neighbouring relation that defines ``sensitivity``.

    References:
        dwork2006calibrating; dwork2014algorithmic, Theorem 3.6.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> y = laplace_mechanism(3.0, sensitivity=1.0, epsilon=1e9, rng=rng)
        >>> abs(y - 3.0) < 1e-6
        True
    """
    scale = laplace_scale(sensitivity=sensitivity, epsilon=epsilon)
    rng = check_rng(rng)
    arr = check_array(value, "value")
    noisy = arr + rng.laplace(0.0, scale, size=arr.shape)
    return _as_output(_check_release(noisy), arr.ndim == 0)


def gaussian_sigma(
    *,
    sensitivity: float,
    rho: float | None = None,
    epsilon: float | None = None,
    delta: float | None = None,
) -> float:
    """Return the Gaussian noise scale for a zCDP or an ``(epsilon, delta)`` target.

    Give exactly one of ``rho`` (``sigma = sensitivity / sqrt(2 rho)``) or the pair
    ``(epsilon, delta)`` (the analytic Gaussian mechanism).

    Args:
        sensitivity: The L2 sensitivity, positive.
        rho: A zCDP budget.
        epsilon: An epsilon, together with ``delta``.
        delta: A delta, together with ``epsilon``.

    Returns:
        The noise standard deviation.

    Raises:
        ValueError: If neither or both ways are given, only one of ``epsilon`` and
            ``delta`` is, a value is out of range, or the scale overflows (or
            underflows to zero).

    Privacy:
        ``rho``-zCDP, or ``(epsilon, delta)``-DP, under the relation defining
        ``sensitivity``.

    References:
        bun2016concentrated, Proposition 1.6; balle2018improving, Theorem 8.

    Examples:
        >>> gaussian_sigma(sensitivity=1.0, rho=0.5)
        1.0
    """
    sensitivity = check_positive(sensitivity, "sensitivity")
    has_rho = rho is not None
    has_pair = epsilon is not None or delta is not None
    if has_rho and has_pair:
        raise ValueError(
            "pass either rho (zCDP) or epsilon and delta (approximate DP), not both. "
            "To spend an (epsilon, delta) budget in zCDP, convert it with "
            "dpnotes.accounting.epsilon_delta_to_rho."
        )
    if has_rho:
        return gaussian_sigma_for_rho(sensitivity=sensitivity, rho=check_rho(rho))
    if epsilon is None or delta is None:
        missing = "delta" if delta is None else "epsilon"
        if not has_pair:
            raise ValueError(
                "the Gaussian mechanism needs a budget: pass rho=... (zCDP) or both "
                "epsilon=... and delta=... (approximate DP). For pure epsilon-DP use "
                "the Laplace mechanism."
            )
        raise ValueError(
            f"{missing} is missing: the (epsilon, delta) form needs both. For pure "
            "epsilon-DP use the Laplace mechanism; for zCDP pass rho instead."
        )
    return analytic_gaussian_sigma(
        epsilon=check_epsilon(epsilon),
        delta=check_delta(delta),
        sensitivity=sensitivity,
    )


def gaussian_mechanism(
    value: float | np.ndarray,
    *,
    sensitivity: float,
    rho: float | None = None,
    epsilon: float | None = None,
    delta: float | None = None,
    rng: np.random.Generator,
) -> float | np.ndarray:
    """Release ``value`` plus Gaussian noise for ``rho``-zCDP or (epsilon, delta)-DP.

    Args:
        value: A scalar or an array; each entry gets independent noise.
        sensitivity: The L2 sensitivity of the whole released value.
        rho: A zCDP budget (``sigma = sensitivity / sqrt(2 rho)``).
        epsilon: An epsilon, with ``delta`` (analytic Gaussian calibration).
        delta: A delta, with ``epsilon``.
        rng: The random generator.

    Returns:
        A float for a scalar ``value``, else an array of the same shape.

    Raises:
        ValueError: If ``value`` has NaN or infinite entries, the budget is not given in
            exactly one of the two ways, a parameter is out of range, the noise scale
            overflows (checked before drawing), or the noisy release overflows.
        TypeError: If ``rng`` is not a :class:`numpy.random.Generator`.

    Privacy:
        ``rho``-zCDP or ``(epsilon, delta)``-DP under the neighbouring relation that
        defines ``sensitivity``.

    References:
        bun2016concentrated, Proposition 1.6; balle2018improving, Theorem 8 and
        Algorithm 1.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> gaussian_mechanism(np.zeros(3), sensitivity=1.0, rho=0.5, rng=rng).shape
        (3,)
    """
    sigma = gaussian_sigma(
        sensitivity=sensitivity, rho=rho, epsilon=epsilon, delta=delta
    )
    rng = check_rng(rng)
    arr = check_array(value, "value")
    noisy = arr + rng.normal(0.0, sigma, size=arr.shape)
    return _as_output(_check_release(noisy), arr.ndim == 0)


def clipped_mean_sensitivity(*, lower: float, upper: float, n: int) -> float:
    """Return the sensitivity ``(upper - lower) / n`` of the clipped mean of n records.

    Args:
        lower: Public lower clipping bound.
        upper: Public upper clipping bound, above ``lower``.
        n: The public number of records, at least 1.

    Returns:
        The L1 (= L2) sensitivity of the clipped mean under replace-one neighbouring.

    Raises:
        ValueError: If the bounds are not finite with ``lower < upper``, their width
            overflows, or ``n < 1``.

    Examples:
        >>> clipped_mean_sensitivity(lower=0.0, upper=1.0, n=4)
        0.25
    """
    lo, hi = check_bounds(lower, upper)
    check_width(lo, hi)
    n = check_int(n, "n", minimum=1)
    return (hi - lo) / n


def _clipped_means(
    x: object, lower: float, upper: float
) -> tuple[np.ndarray, float, bool]:
    lo, hi = check_bounds(lower, upper)
    check_width(lo, hi)
    arr = check_array(x, "x")
    if arr.ndim == 0:
        raise ValueError(
            "x must have at least one axis (the records); pass an array of shape (n,) "
            "or (trials, n)."
        )
    n = arr.shape[-1]
    if n == 0:
        raise ValueError("x has no records along its last axis; pass at least one.")
    means = np.clip(arr, lo, hi).mean(axis=-1)
    return means, (hi - lo) / n, arr.ndim == 1


def laplace_mean(
    x: np.ndarray,
    *,
    lower: float,
    upper: float,
    epsilon: float,
    rng: np.random.Generator,
) -> float | np.ndarray:
    """Release the mean of ``x`` clipped to ``[lower, upper]``, with Laplace noise.

    Each record is clipped to the public interval, the mean is taken over the last axis
    (``n`` records, ``n`` public), and ``Laplace((upper - lower) / (n * epsilon))``
    noise is added, one independent draw per leading index. The mean squared error is
    ``bias**2 + 2 * ((upper - lower) / (n * epsilon))**2``, where ``bias`` is the
    difference between the clipped and the true mean.

    Args:
        x: Records, shape ``(n,)``, or ``(..., n)`` for independent trials.
        lower: Public lower bound (from domain knowledge, never from the data).
        upper: Public upper bound, above ``lower``.
        epsilon: The privacy budget, positive and finite.
        rng: The random generator.

    Returns:
        A float for 1-D ``x``, else an array of shape ``x.shape[:-1]``.

    Raises:
        ValueError: If ``x`` is empty, 0-dimensional or has NaN/inf entries, the bounds
            are not finite with ``lower < upper``, ``epsilon`` is not positive and
            finite, the bounds' width or the noise scale overflows (checked before
            drawing; rescale the data or pass narrower bounds), or the release
            overflows.
        TypeError: If ``rng`` is not a :class:`numpy.random.Generator`.

    Privacy:
        ``epsilon``-DP for each trial under replace-one neighbouring with ``n`` public
        (sensitivity ``(upper - lower) / n``).

    References:
        dwork2006calibrating; rosenblatt2024stratification.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> x = np.zeros((5, 10))  # 5 trials of 10 records
        >>> laplace_mean(x, lower=0.0, upper=1.0, epsilon=1.0, rng=rng).shape
        (5,)
    """
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    means, sensitivity, scalar = _clipped_means(x, lower, upper)
    scale = check_scale(sensitivity / epsilon, "Laplace scale", advice=_MEAN_ADVICE)
    noisy = means + rng.laplace(0.0, scale, size=means.shape)
    return _as_output(_check_release(noisy), scalar)


def gaussian_mean(
    x: np.ndarray,
    *,
    lower: float,
    upper: float,
    rho: float,
    rng: np.random.Generator,
) -> float | np.ndarray:
    """Release the mean of ``x`` clipped to ``[lower, upper]`` with Gaussian noise.

    The zCDP analogue of :func:`laplace_mean`: noise ``N(0, sigma**2)`` with
    ``sigma = (upper - lower) / (n * sqrt(2 rho))``.

    Args:
        x: Records, shape ``(n,)``, or ``(..., n)`` for independent trials.
        lower: Public lower bound.
        upper: Public upper bound, above ``lower``.
        rho: The zCDP budget, positive and finite.
        rng: The random generator.

    Returns:
        A float for 1-D ``x``, else an array of shape ``x.shape[:-1]``.

    Raises:
        ValueError: As :func:`laplace_mean`, with ``rho`` in place of ``epsilon``.
        TypeError: If ``rng`` is not a :class:`numpy.random.Generator`.

    Privacy:
        ``rho``-zCDP for each trial under replace-one neighbouring with ``n`` public.

    References:
        bun2016concentrated, Proposition 1.6.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> m = gaussian_mean([0.2, 0.4], lower=0, upper=1, rho=0.5, rng=rng)
        >>> isinstance(m, float)
        True
    """
    rho = check_rho(rho)
    rng = check_rng(rng)
    means, sensitivity, scalar = _clipped_means(x, lower, upper)
    sigma = sensitivity / math.sqrt(2.0 * rho)
    check_scale(sigma, "Gaussian noise scale", advice=_MEAN_ADVICE)
    noisy = means + rng.normal(0.0, sigma, size=means.shape)
    return _as_output(_check_release(noisy), scalar)


def clipped_laplace_half_width(
    size: float | np.ndarray, *, R: float, gamma: float
) -> float | np.ndarray:
    """Return ``R + sqrt(log(size / gamma))``, the half-width of Eq. 1's clip interval.

    Args:
        size: The public number of records ``n`` (at least 1; an array is allowed).
        R: Public bound on the absolute mean, positive.
        gamma: The paper's failure parameter, in (0, 1).

    Returns:
        The half-width ``h``; the estimator clips to ``[-h, h]``.

    Raises:
        ValueError: If ``size < 1``, ``R <= 0`` or ``gamma`` is not in (0, 1).

    References:
        rosenblatt2024stratification, Eq. 1.

    Examples:
        >>> round(clipped_laplace_half_width(100, R=1.0, gamma=0.1), 4)
        3.6283
    """
    R = check_positive(R, "R")
    gamma = check_probability(gamma, "gamma")
    arr = np.asarray(size, dtype=float)
    if np.any(~np.isfinite(arr)) or np.any(arr < 1):
        raise ValueError("size must be a finite number of records, at least 1.")
    h = R + np.sqrt(np.log(arr / gamma))
    return _as_output(h, arr.ndim == 0)


def clipped_laplace_mean(
    x: np.ndarray,
    *,
    R: float,
    gamma: float,
    epsilon: float,
    rng: np.random.Generator,
) -> float | np.ndarray:
    """Release the mean of N(mu, 1) data with ``|mu| <= R``: the paper's Eq. 1.

    Each record is clipped to ``[-h, h]`` with ``h = R + sqrt(log(n / gamma))`` and
    ``Laplace(2 h / (n epsilon))`` noise is added to the clipped mean. (The paper prints
    the interval asymmetrically; this is the symmetric interval its analysis uses, see
    the errata page.) With ``sqrt(log(n / gamma))`` rather than
    ``sqrt(2 log(2 n / gamma))`` some records of a Gaussian sample do get clipped; the
    bias this causes is far below the noise for the sizes used in the book.

    Args:
        x: Records, shape ``(n,)``, or ``(..., n)`` for independent trials; ``n``
            public.
        R: Public bound on ``|mu|``, positive.
        gamma: Failure parameter in (0, 1); smaller values widen the interval.
        epsilon: The privacy budget, positive and finite.
        rng: The random generator.

    Returns:
        A float for 1-D ``x``, else an array of shape ``x.shape[:-1]``.

    Raises:
        ValueError: If ``x`` is empty or has NaN/inf, ``R <= 0``, ``gamma`` is not in
            (0, 1), ``epsilon`` is not positive and finite, or the noise scale
            ``2 h / (n epsilon)`` overflows (checked before drawing; rescale the data
            so that ``R`` is smaller, or use a larger epsilon).
        TypeError: If ``rng`` is not a :class:`numpy.random.Generator`.

    Privacy:
        ``epsilon``-DP per trial under replace-one neighbouring with ``n`` public (the
        clipped mean has sensitivity ``2 h / n``).

    References:
        rosenblatt2024stratification, Eq. 1; dwork2006calibrating.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> x = rng.normal(0.5, 1.0, size=(3, 5_000))
        >>> est = clipped_laplace_mean(x, R=2.0, gamma=0.1, epsilon=1.0, rng=rng)
        >>> est.shape, bool(np.all(np.abs(est - 0.5) < 0.1))
        ((3,), True)
    """
    R = check_positive(R, "R")
    gamma = check_probability(gamma, "gamma")
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    arr = check_array(x, "x")
    if arr.ndim == 0:
        raise ValueError(
            "x must have at least one axis (the records); pass shape (n,) or "
            "(trials, n)."
        )
    n = arr.shape[-1]
    h = float(clipped_laplace_half_width(n, R=R, gamma=gamma))
    scale = check_scale(2.0 * h / (n * epsilon), "Laplace scale", advice=_MEAN_ADVICE)
    means = np.clip(arr, -h, h).mean(axis=-1)
    noisy = means + rng.laplace(0.0, scale, size=means.shape)
    return _as_output(_check_release(noisy), arr.ndim == 1)


def exponential_mechanism(
    scores: np.ndarray,
    *,
    epsilon: float,
    sensitivity: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """Pick an index with probability proportional to ``exp(eps * score / (2 sens))``.

    Implemented with the Gumbel-max trick, which samples exactly this distribution and
    vectorises: leading axes of ``scores`` are independent selections.

    Args:
        scores: Scores of the candidates along the last axis (higher is better), shape
            ``(..., m)`` with ``m >= 1``.
        epsilon: The privacy budget of one selection, positive and finite.
        sensitivity: The largest change of any score between neighbouring datasets.
        rng: The random generator.

    Returns:
        The selected index, shape ``scores.shape[:-1]`` (an int64 array; 0-d for one
        selection).

    Raises:
        ValueError: If scores are empty or not finite, a parameter is out of range, or
            ``epsilon * score / (2 sensitivity)`` overflows (rescale the scores or the
            sensitivity).

    Privacy:
        ``epsilon``-DP under the relation defining ``sensitivity``; as a bounded-range
        mechanism it is also ``epsilon**2 / 8``-zCDP
        (:func:`exponential_mechanism_epsilon` inverts that).

    References:
        mcsherry2007mechanism; cesar2021bounding (bounded range, zCDP of
        ``epsilon**2 / 8``).

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> int(exponential_mechanism(np.array([0.0, 1e6]), epsilon=1.0,
        ...                           sensitivity=1.0, rng=rng))
        1
    """
    scores = check_array(scores, "scores")
    if scores.ndim == 0:
        raise ValueError("scores must have at least one axis of candidates.")
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive(sensitivity, "sensitivity")
    rng = check_rng(rng)
    with np.errstate(over="ignore", invalid="ignore"):
        logits = (0.5 * epsilon / sensitivity) * scores
    check_result(
        logits,
        "scaled scores epsilon * score / (2 sensitivity)",
        advice="rescale the scores and the sensitivity together, or use a smaller "
        "epsilon",
    )
    return np.argmax(logits + rng.gumbel(size=scores.shape), axis=-1)


def exponential_mechanism_epsilon(*, rho: float) -> float:
    """Return the epsilon of an exponential mechanism that costs ``rho`` of zCDP.

    A bounded-range ``epsilon``-DP mechanism is ``epsilon**2 / 8``-zCDP, so
    ``epsilon = sqrt(8 rho)``.

    >>> exponential_mechanism_epsilon(rho=0.125)
    1.0

    Raises:
        ValueError: If ``rho`` is not positive and finite, or ``8 rho`` overflows.
    """
    rho = check_rho(rho)
    return check_result(
        math.sqrt(8.0 * rho), "epsilon", advice="use a smaller rho (below 1e307)"
    )
