"""Error metrics: relative and parity error (Def. 10), and group metrics of classifiers.

The group metrics of a classifier (accuracy per group, demographic parity, false
negative rate gaps) come from fairlearn's ``MetricFrame`` and its derived metrics rather
than being written again here.
"""

from __future__ import annotations

import numpy as np

from dpnotes.validation import check_array

__all__ = [
    "classifier_group_metrics",
    "group_relative_errors",
    "max_mean_disparity",
    "parity_error",
    "relative_error",
]


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


def classifier_group_metrics(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    groups: np.ndarray,
) -> dict[str, object]:
    """Return accuracy overall and per group, and fairlearn's group-gap metrics.

    Args:
        y_true: True binary labels, shape ``(n,)``.
        y_pred: Predicted binary labels, shape ``(n,)``.
        groups: Group label per record, shape ``(n,)``.

    Returns:
        ``{"accuracy": float, "accuracy_by_group": {group: float},
        "demographic_parity_difference": float, "demographic_parity_ratio": float,
        "fnr_difference": float, "fpr_difference": float}``; the differences are the
        largest gap between any two groups (fairlearn's ``between_groups``), the ratio
        the smallest over the largest selection rate.

    Raises:
        ValueError: If the arrays differ in length or are empty.

    References:
        bird2020fairlearn.
    """
    from fairlearn.metrics import (
        MetricFrame,
        demographic_parity_difference,
        demographic_parity_ratio,
        false_negative_rate_difference,
        false_positive_rate_difference,
    )
    from sklearn.metrics import accuracy_score

    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    groups = np.asarray(groups)
    if not (len(y_true) == len(y_pred) == len(groups)) or len(y_true) == 0:
        raise ValueError(
            "y_true, y_pred and groups must be non-empty and of equal length, got "
            f"{len(y_true)}, {len(y_pred)}, {len(groups)}."
        )
    frame = MetricFrame(
        metrics=accuracy_score,
        y_true=y_true,
        y_pred=y_pred,
        sensitive_features=groups,
    )
    kw = {"sensitive_features": groups}
    return {
        "accuracy": float(frame.overall),
        "accuracy_by_group": {k: float(v) for k, v in frame.by_group.items()},
        "demographic_parity_difference": float(
            demographic_parity_difference(y_true, y_pred, **kw)
        ),
        "demographic_parity_ratio": float(
            demographic_parity_ratio(y_true, y_pred, **kw)
        ),
        "fnr_difference": float(false_negative_rate_difference(y_true, y_pred, **kw)),
        "fpr_difference": float(false_positive_rate_difference(y_true, y_pred, **kw)),
    }


def max_mean_disparity(values: np.ndarray, groups: np.ndarray) -> float:
    """Return the largest difference between two groups' means of ``values``.

    Groups without records do not count.

    >>> max_mean_disparity(np.array([1.0, 3.0, 2.0, 2.0]), np.array([0, 0, 1, 1]))
    0.0
    >>> max_mean_disparity(np.array([1.0, 1.0, 3.0]), np.array(["a", "a", "b"]))
    2.0
    """
    values = check_array(values, "values", ndim=1)
    groups = np.asarray(groups)
    if groups.shape != values.shape:
        raise ValueError(
            f"groups has shape {groups.shape} but values has {values.shape}."
        )
    _, inverse = np.unique(groups, return_inverse=True)
    sums = np.bincount(inverse, weights=values)
    counts = np.bincount(inverse)
    means = sums[counts > 0] / counts[counts > 0]
    return float(means.max() - means.min())
