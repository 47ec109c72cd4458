"""Error metrics: relative and parity error (Def. 10), and group metrics of classifiers.

The DPSGD-F paper's criteria (xu2021removing, sections 5.1 and 6.1.4) are here too: the
cost of privacy of each group (:func:`cost_of_privacy`, ``Delta_k``) and the largest
gap between the groups' costs against the tolerance ``tau`` (:func:`equal_cost_gap`).

The group metrics of a classifier (accuracy per group, demographic parity, false
negative rate gaps) come from fairlearn's ``MetricFrame`` and its derived metrics rather
than being written again here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpnotes.validation import check_array

__all__ = [
    "EQUAL_COST_TAU",
    "EqualCostGap",
    "classifier_group_metrics",
    "cost_of_privacy",
    "equal_cost_gap",
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

    Examples:
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

    Examples:
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
    import pandas as pd
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
    for name, labels in (("y_true", y_true), ("y_pred", y_pred)):
        if labels.dtype.kind not in "biuf" or not np.isin(labels, (0, 1)).all():
            raise ValueError(
                f"{name} must hold binary labels 0 and 1 only (no NaN), got values "
                f"{np.unique(labels.astype(str))[:10].tolist()}; encode the positive "
                "class as 1 first."
            )
    if pd.isna(groups).any():  # NaN or None, in a float or object array
        raise ValueError(
            "groups holds missing labels (NaN or None); give every record its group."
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


#: The paper's tolerance on the gap between groups' costs of privacy (section 6.1.4).
EQUAL_COST_TAU: float = 0.05


def _accuracy_array(values: np.ndarray, name: str) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    if a.size == 0:
        raise ValueError(f"{name} is empty; pass one accuracy per group.")
    finite = a[~np.isnan(a)]
    if np.any(np.isinf(a)) or np.any((finite < 0) | (finite > 1)):
        raise ValueError(
            f"{name} must hold accuracies in [0, 1] (NaN for a group without test "
            "data)."
        )
    return a


def cost_of_privacy(
    private_accuracy: np.ndarray, nonprivate_accuracy: np.ndarray
) -> np.ndarray:
    """Return each group's cost of privacy ``Delta_k`` = private - non-private accuracy.

    The paper's ``Delta^k(eta~ - eta)`` (section 5.1): the change in group ``k``'s
    accuracy from the non-private model ``eta`` to the private one ``eta~``, negative
    when privacy costs accuracy (the paper reports e.g. -0.6807 for MNIST's digit 8
    under DPSGD). Compare models of the same seed (same split and initial weights), so
    the difference is paired.

    Args:
        private_accuracy: Accuracies of the private model, any shape (e.g. one per
            group); NaN where a group has no test data.
        nonprivate_accuracy: The non-private model's, the same shape.

    Returns:
        ``private_accuracy - nonprivate_accuracy``, float.

    Raises:
        ValueError: If the shapes differ, an input is empty, or an accuracy is
            outside [0, 1].

    References:
        xu2021removing (section 5.1, "equal costs of differential privacy";
        section 6.1.4).

    Examples:
        >>> cost_of_privacy([0.25, 0.875], [0.875, 1.0]).tolist()
        [-0.625, -0.125]
    """
    p = _accuracy_array(private_accuracy, "private_accuracy")
    q = _accuracy_array(nonprivate_accuracy, "nonprivate_accuracy")
    if p.shape != q.shape:
        raise ValueError(
            f"private_accuracy has shape {p.shape} but nonprivate_accuracy has "
            f"{q.shape}; pass the two models' accuracies of the same groups."
        )
    return p - q


@dataclass(frozen=True)
class EqualCostGap:
    """The equal-costs criterion of DPSGD-F's paper for one model.

    Attributes:
        gap: ``max_{i,j} |Delta_i - Delta_j|``, the largest difference between two
            groups' costs of privacy.
        tau: The tolerance.
        within: Whether ``gap <= tau`` (the paper's "equal costs of privacy").
    """

    gap: float
    tau: float
    within: bool


def equal_cost_gap(costs: np.ndarray, *, tau: float = EQUAL_COST_TAU) -> EqualCostGap:
    """Return the largest gap between the groups' costs of privacy, against ``tau``.

    The paper calls a private model free of disparate impact on accuracy when
    ``|Delta_i - Delta_j| <= tau`` for all groups ``i, j``, with ``tau = 0.05``
    (section 6.1.4); the largest such difference is ``max_k Delta_k - min_k Delta_k``.

    Args:
        costs: The groups' costs :func:`cost_of_privacy`, one-dimensional (the groups
            only; not an overall value).
        tau: The tolerance, non-negative.

    Returns:
        :class:`EqualCostGap`.

    Raises:
        ValueError: If ``costs`` is not 1-D, has fewer than two groups, or holds NaN
            or infinite values, or ``tau`` is negative or not finite.

    References:
        xu2021removing (section 6.1.4).

    Examples:
        >>> equal_cost_gap([-0.15, -0.125, -0.1875])
        EqualCostGap(gap=0.0625, tau=0.05, within=False)
    """
    c = np.asarray(costs, dtype=float)
    if c.ndim != 1 or c.size < 2:
        raise ValueError(
            f"costs must be one cost per group, at least two groups, got shape "
            f"{c.shape}."
        )
    if not np.all(np.isfinite(c)):
        raise ValueError(
            "costs contain NaN or inf: drop groups without test data or without a "
            "non-private reference before comparing them."
        )
    tau = float(tau)
    if not np.isfinite(tau) or tau < 0:
        raise ValueError(f"tau must be a finite number >= 0, got {tau!r}.")
    gap = float(c.max() - c.min())
    return EqualCostGap(gap=gap, tau=tau, within=gap <= tau)
