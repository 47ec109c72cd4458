"""Error metrics for private estimates: relative error and parity error (Def. 10)."""

from __future__ import annotations

import numpy as np

from dpnotes.validation import check_array

__all__ = ["group_relative_errors", "parity_error", "relative_error"]


def _check_truth(true: np.ndarray, name: str) -> np.ndarray:
    t = check_array(true, name, allow_empty=True)
    if np.any(t == 0):
        raise ValueError(
            f"{name} has a zero entry: relative errors divide by the true value. "
            "Shift the variable to a scale without zero (or report absolute errors); "
            "a zero true value has no relative error."
        )
    return t


def relative_error(
    true: float | np.ndarray, estimate: float | np.ndarray
) -> np.ndarray:
    """Return ``|estimate - true| / |true|`` (broadcast over trials).

    Raises:
        ValueError: If a true value is zero or a value is NaN/inf.

    >>> float(relative_error(2.0, 2.5))
    0.25
    """
    t = _check_truth(true, "true")
    e = check_array(estimate, "estimate")
    return np.abs(e - t) / np.abs(t)


def group_relative_errors(
    true_groups: np.ndarray, estimate_groups: np.ndarray
) -> np.ndarray:
    """Return the per-group relative errors ``|f(S_i') - f(S_i)| / |f(S_i)|``.

    ``estimate_groups`` may carry leading trial axes; a scalar per trial (a
    non-stratified estimate used for every group) broadcasts.
    """
    t = _check_truth(true_groups, "true group values")
    e = check_array(estimate_groups, "group estimates")
    return np.abs(e - t) / np.abs(t)


def parity_error(
    true: tuple[float, np.ndarray],
    estimate: tuple[float | np.ndarray, np.ndarray | None],
    *,
    omega: float | None = None,
) -> float | np.ndarray:
    """Return the parity error of Definition 10.

    ``PE = omega * |f(X') - f(X)| / |f(X)| + sum_i |f(S_i') - f(S_i)| / |f(S_i)|``:
    the relative error of the overall statistic, weighted by ``omega``, plus the
    relative errors of the ``k`` group statistics. A method that releases only an
    overall estimate is scored by using that estimate for every group (pass ``None``
    as its group estimates) -- the disparate impact of not stratifying.

    Args:
        true: ``(overall, groups)``: the true overall value and the ``k`` true group
            values.
        estimate: ``(overall, groups)``: ``overall`` is a float or an array of trials;
            ``groups`` has shape ``(*overall.shape, k)``, or is ``None`` to use the
            overall estimate for every group.
        omega: Weight of the overall term, default ``1 / k``.

    Returns:
        The parity error (float, or one value per trial).

    Raises:
        ValueError: If a true value is zero (the relative error is undefined; the
            convention here is to refuse, see the message), the group estimates do not
            have shape ``(*overall.shape, k)``, or ``omega`` is negative.

    References:
        rosenblatt2024stratification, Definition 10.

    >>> round(parity_error((2.0, [1.0, 4.0]), (2.2, [1.1, 4.0])), 6)  # .5 * .1 + .1
    0.15
    """
    t_all, t_groups = true
    e_all, e_groups = estimate
    tg = check_array(t_groups, "true group values", ndim=1)
    k = tg.shape[0]
    omega = 1.0 / k if omega is None else float(omega)
    if not np.isfinite(omega) or omega < 0:
        raise ValueError(f"omega must be a non-negative number, got {omega!r}.")
    overall = relative_error(t_all, e_all)
    if e_groups is None:
        eg = np.repeat(np.asarray(e_all, dtype=float)[..., None], k, axis=-1)
    else:
        eg = check_array(e_groups, "group estimates")
        if eg.shape != (*overall.shape, k):
            raise ValueError(
                f"group estimates have shape {eg.shape}, expected "
                f"{(*overall.shape, k)} (one column per true group); pass None to use "
                "the overall estimate for every group."
            )
    out = omega * overall + group_relative_errors(tg, eg).sum(axis=-1)
    return float(out) if np.ndim(out) == 0 else out
