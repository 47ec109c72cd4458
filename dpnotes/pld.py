"""The tightest epsilon of subsampled Gaussian steps: privacy loss distributions.

:func:`dpnotes.accounting.rdp_epsilon` bounds the privacy loss of DP-SGD through Rényi
DP, which is an upper bound at every step: the conversion from RDP to
``(epsilon, delta)`` loses a little, and the classic conversion the DPSGD-F paper uses
loses more. Privacy-loss-distribution (PLD) accounting composes the distribution of the
privacy loss itself, numerically, and reads ``epsilon`` off it for the given ``delta``:
up to its discretisation it is the exact ``epsilon`` of the composition. Here it is
Google's ``dp_accounting`` package (its ``PLDAccountant``, pessimistic estimates, so
the result is an upper bound on the exact value, never below it).

The book uses it to say how much the RDP accounting of a run overstates its privacy
loss; the runs themselves are accounted (and stop) by the RDP accountant.

References:
    koskela2020computing and meiser2018tight (privacy loss distributions);
    doroshenko2022connect (the connect-the-dots discretisation ``dp_accounting``
    uses); mironov2017renyi (the RDP accounting compared with).
"""

from __future__ import annotations

from collections.abc import Sequence

from dpnotes.accounting import joint_noise_multiplier
from dpnotes.validation import check_delta

__all__ = ["DEFAULT_DISCRETIZATION", "MAX_GRID_POINTS", "MAX_STEPS", "pld_epsilon"]

#: Width of the privacy-loss grid of the PLD (``dp_accounting``'s
#: ``value_discretization_interval``): epsilon comes out at most about this much above
#: the exact value, per composition of the discretised distribution.
DEFAULT_DISCRETIZATION = 1e-4

#: The most steps :func:`pld_epsilon` composes: ``dp_accounting``'s composition of
#: 10**6 steps takes seconds, of 10**9 minutes inside C code that no signal
#: interrupts. DP-SGD runs take 10**3 to 10**5 steps.
MAX_STEPS = 10**6

#: The largest privacy-loss grid :func:`pld_epsilon` builds for one step, in points:
#: about ``(8 / sigma + 1 / (2 sigma**2)) / discretization`` (the loss of a Gaussian of
#: multiplier ``sigma`` spans ``1 / (2 sigma**2)`` plus some eight standard deviations
#: ``1 / sigma``). Two million points take about 30 s (``sigma = 0.1`` at the default
#: width); ``sigma = 0.001`` would need a 38 GiB array.
MAX_GRID_POINTS = 2_000_000


def pld_epsilon(
    *,
    sample_rate: float,
    noise_multipliers: float | Sequence[float],
    steps: int,
    delta: float,
    discretization: float = DEFAULT_DISCRETIZATION,
) -> float:
    """Return epsilon of ``steps`` Poisson-subsampled Gaussian steps by PLD accounting.

    The Gaussian mechanisms of one step read the same Poisson sample (as in DPSGD-F:
    the noisy counts and the noisy gradient), so they are merged into one Gaussian
    of multiplier :func:`dpnotes.accounting.joint_noise_multiplier` before the
    subsampling, exactly as :func:`dpnotes.accounting.rdp_epsilon` does with
    ``same_sample=True``; the two functions then account the same mechanism.

    Args:
        sample_rate: Poisson sampling probability ``q`` in (0, 1].
        noise_multipliers: The noise multiplier of each Gaussian release of a step
            (noise standard deviation over sensitivity), or a single one.
        steps: Number of steps, at least 1.
        delta: Target delta in (0, 1).
        discretization: Width of the privacy-loss grid; smaller is tighter and
            slower.

    Returns:
        The epsilon under add/remove-one neighbouring, an upper bound on the exact
        value (pessimistic discretisation) and, in practice, below the RDP epsilon.

    Raises:
        ValueError: If an argument is out of range or not finite, ``steps`` exceeds
            :data:`MAX_STEPS`, or the privacy-loss grid would exceed
            :data:`MAX_GRID_POINTS` (a multiplier far below one at this
            ``discretization``); the message points to the RDP bound.

    Privacy:
        The neighbouring relation is add/remove one record, as for Poisson-subsampled
        DP-SGD and :func:`dpnotes.accounting.rdp_epsilon`.

    Examples:
        >>> round(pld_epsilon(sample_rate=1.0, noise_multipliers=1.0, steps=1,
        ...                   delta=1e-5), 2)
        4.38
    """
    from dp_accounting import NeighboringRelation, dp_event
    from dp_accounting.pld import pld_privacy_accountant

    q = float(sample_rate)
    if not 0.0 < q <= 1.0:  # also refuses NaN
        raise ValueError(f"sample_rate must be in (0, 1], got {sample_rate!r}.")
    if isinstance(steps, bool) or int(steps) != steps or steps < 1:
        raise ValueError(f"steps must be a whole number >= 1, got {steps!r}.")
    if not 0.0 < float(discretization) < 1.0:
        raise ValueError(f"discretization must be in (0, 1), got {discretization!r}.")
    check_delta(delta)
    if steps > MAX_STEPS:
        raise ValueError(
            f"steps={steps} is more than the {MAX_STEPS:,} steps the PLD accountant "
            "composes in reasonable time; use dpnotes.accounting.rdp_epsilon, whose "
            "bound costs the same for any number of steps."
        )
    sigma = joint_noise_multiplier(noise_multipliers)
    points = (8.0 / sigma + 0.5 / sigma**2) / float(discretization)
    if points > MAX_GRID_POINTS:
        raise ValueError(
            f"a Gaussian of noise multiplier {sigma:.3g} at discretization "
            f"{float(discretization):g} needs a privacy-loss grid of about "
            f"{points:,.0f} points (at most {MAX_GRID_POINTS:,}); such a step spends "
            "a large epsilon anyway: use dpnotes.accounting.rdp_epsilon, or a "
            "coarser discretization."
        )
    accountant = pld_privacy_accountant.PLDAccountant(
        neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE,
        value_discretization_interval=float(discretization),
    )
    event = dp_event.GaussianDpEvent(sigma)
    if q < 1.0:
        event = dp_event.PoissonSampledDpEvent(q, event)
    accountant.compose(event, int(steps))
    return float(accountant.get_epsilon(float(delta)))
