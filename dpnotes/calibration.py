"""Noise for a target budget: the multiplier DP-SGD needs to spend at most epsilon.

:func:`noise_multiplier_for` answers the question opacus' ``get_noise_multiplier``
answers: given a budget ``(epsilon, delta)``, a Poisson sample rate and a number of
steps, the smallest Gaussian noise multiplier whose accounted epsilon stays within the
budget. It uses the package's own accounting
(:func:`~dpnotes.accounting.subsampled_gaussian_epsilon`, the epsilon
:func:`dpnotes.dpsgd.train` reports), so a run with the returned multiplier reports
at most the target; and it covers DPSGD-F and Naive, whose steps also release group
counts with multiplier ``count_noise_factor * sigma``.

It is a separate module so that the experiments' recorded code does not depend on it.

References:
    yousefpour2021opacus (``get_noise_multiplier``); mironov2019sampled;
    balle2020hypothesis.
"""

from __future__ import annotations

import math

from dpnotes.accounting import subsampled_gaussian_epsilon
from dpnotes.validation import check_epsilon, check_int, check_positive

__all__ = ["noise_multiplier_for"]

#: The largest multiplier searched: beyond it a budget is too small to be met.
SIGMA_LIMIT = 1e4


def _epsilon(
    sigma: float, *, sample_rate: float, steps: int, delta: float, factor: float | None
) -> float:
    sigmas = (sigma,) if factor is None else (sigma, factor * sigma)
    return subsampled_gaussian_epsilon(
        sample_rate=sample_rate, noise_multipliers=sigmas, steps=steps, delta=delta
    )


def noise_multiplier_for(
    target_epsilon: float,
    *,
    sample_rate: float,
    steps: int,
    delta: float,
    count_noise_factor: float | None = None,
    tolerance: float = 0.01,
) -> float:
    """Return the smallest noise multiplier whose ``steps`` steps spend at most
    ``target_epsilon``, to within ``tolerance`` of it.

    Epsilon falls as the multiplier grows, so a bisection finds it: the multiplier
    returned spends at most ``target_epsilon`` and at least
    ``target_epsilon - tolerance`` (or it is the least multiplier tried, 0.01, when that
    already spends less).

    Args:
        target_epsilon: The budget, positive.
        sample_rate: Poisson rate ``q`` in (0, 1].
        steps: Number of steps, at least 1.
        delta: Target delta in (0, 1).
        count_noise_factor: For DPSGD-F and Naive, ``sigma_1 / sigma_2``: each step
            also releases the group counts with multiplier ``count_noise_factor``
            times the one returned (10 in the DPSGD-F paper); None for DPSGD.
        tolerance: How far below the target the epsilon may fall, positive.

    Returns:
        The multiplier ``sigma``.

    Raises:
        ValueError: For an argument out of range, or a budget that even a multiplier
            of ``SIGMA_LIMIT`` (10,000) exceeds (too many steps or too small a budget
            for any useful noise).

    Privacy:
        Training for ``steps`` steps with this multiplier, Poisson sampling at
        ``sample_rate`` and clipping every example's gradient, is
        ``(target_epsilon, delta)``-DP under add/remove-one neighbours.

    Examples:
        >>> sigma = noise_multiplier_for(1.0, sample_rate=0.01, steps=1000,
        ...                              delta=1e-5)
        >>> round(sigma, 2)
        1.52
    """
    target = check_epsilon(target_epsilon, "target_epsilon")
    steps = check_int(steps, "steps", minimum=1)
    tolerance = check_positive(tolerance, "tolerance")
    factor = (
        None
        if count_noise_factor is None
        else check_positive(count_noise_factor, "count_noise_factor")
    )

    def eps(sigma: float) -> float:
        return _epsilon(
            sigma, sample_rate=sample_rate, steps=steps, delta=delta, factor=factor
        )

    low, high = 0.0, 0.01
    if eps(high) <= target:
        return high
    while eps(high) > target:
        low, high = high, 2 * high
        if high > SIGMA_LIMIT:
            raise ValueError(
                f"no noise multiplier up to {SIGMA_LIMIT:g} keeps {steps} steps at "
                f"sample rate {sample_rate:g} within epsilon {target:g} "
                f"(delta {delta:g}): take fewer steps or a larger budget."
            )
    # eps(low) > target >= eps(high): shrink until eps(high) is within tolerance.
    while target - eps(high) > tolerance and not math.isclose(low, high):
        mid = (low + high) / 2
        if eps(mid) > target:
            low = mid
        else:
            high = mid
    return high
