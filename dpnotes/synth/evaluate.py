"""Synthetic-data metrics: how well a synthetic table stands in for the real one.

:func:`evaluate_synthetic` scores one synthetic table against the real training split
it was fitted on and the held-out real test split, overall and within the groups of
each grouping:

- workload error over all 3-way marginals, overall and within each group, and the
  parity error over it (:func:`~dpnotes.synth.marginals.workload_errors_by_group`);
- parity error of the means of every variable (:func:`mean_parity_error`);
- the largest gap between group means of the label;
- classifiers trained on the synthetic rows and tested on the real test split:
  accuracy overall and per group, demographic parity, and the largest gap in false
  negative rates (:func:`~dpnotes.metrics.classifier_group_metrics`).

Defaults are those of the stratification paper's ACSEmployment experiments
(:mod:`dpnotes.data.employment`). Nothing here is private: the metrics read the real
data and are for evaluation only, never released.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpnotes.data.employment import (
    EMPLOYMENT_DOMAIN,
    EMPLOYMENT_GROUPINGS,
    EMPLOYMENT_LABEL,
)
from dpnotes.metrics import classifier_group_metrics, max_mean_disparity, parity_error
from dpnotes.synth.marginals import all_kway, workload_error, workload_errors_by_group
from dpnotes.synth.stratified import strata_of
from dpnotes.validation import check_choice

__all__ = [
    "CLASSIFIERS",
    "classifier_metrics",
    "evaluate_synthetic",
    "group_code",
    "group_keys",
    "make_classifier",
    "mean_parity_error",
    "one_hot_features",
    "workload_metrics",
]

#: Classifiers trained on synthetic rows: scikit-learn's logistic regression and
#: histogram gradient boosting.
CLASSIFIERS: tuple[str, ...] = ("logistic", "boosting")

_Rows = list[dict[str, Any]]


def group_keys(
    data: pd.DataFrame,
    by: Sequence[str],
    *,
    domain: Mapping[str, int] = EMPLOYMENT_DOMAIN,
) -> np.ndarray:
    """Return each row's group: the mixed-radix code of its values of ``by``.

    Args:
        data: Codes of the public domain.
        by: The grouping attributes.
        domain: The public domain (number of codes per attribute).

    Returns:
        An int array: row ``j``'s index in :func:`~dpnotes.synth.stratified.strata_of`
        ``(domain, by)``.

    Examples:
        >>> group_keys(pd.DataFrame({"SEX": [0, 1], "RAC1P": [2, 0]}), ["SEX", "RAC1P"])
        array([2, 9])
    """
    return np.ravel_multi_index(
        tuple(data[a].to_numpy() for a in by), tuple(domain[a] for a in by)
    )


def group_code(group: Any) -> str:
    """Return a group's codes as a string: ``"1"``, or ``"1-3"`` for an intersection.

    >>> group_code((1, 3))
    '1-3'
    """
    return "-".join(str(int(c)) for c in np.atleast_1d(group))


def one_hot_features(
    data: pd.DataFrame,
    *,
    domain: Mapping[str, int] = EMPLOYMENT_DOMAIN,
    label: str = EMPLOYMENT_LABEL,
) -> np.ndarray:
    """Return the one-hot codes of every attribute but the label, side by side.

    The domain is public, so every table gets the same columns whatever values it
    happens to contain.

    Args:
        data: Codes of the public domain.
        domain: The public domain.
        label: The column left out.

    Returns:
        A float array ``(rows, sum of the features' sizes)``.
    """
    cols = []
    for attr, size in domain.items():
        if attr == label:
            continue
        cols.append(np.eye(size)[data[attr].to_numpy()])
    return np.hstack(cols)


def make_classifier(kind: str, seed: int):
    """Return an unfitted scikit-learn classifier of :data:`CLASSIFIERS`.

    Args:
        kind: ``"logistic"`` (logistic regression, 1000 iterations) or
            ``"boosting"`` (histogram gradient boosting, 100 iterations).
        seed: The boosting model's ``random_state``.

    Returns:
        The classifier.

    Raises:
        ValueError: For an unknown kind.
    """
    check_choice(kind, CLASSIFIERS, "classifier")
    if kind == "logistic":
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(max_iter=1000)
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(max_iter=100, random_state=seed)


def mean_parity_error(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    by: Sequence[str],
    strata: Sequence[Any],
    *,
    domain: Mapping[str, int] = EMPLOYMENT_DOMAIN,
) -> float:
    """Return the parity error of the variables' means, averaged over the variables.

    Definition 10 per variable, on values numbered from 1 (as the ACS codebook), with
    ``omega = 1 / len(strata)``. Groups absent from the real data are left out; a
    group absent from the synthetic data is scored with the synthetic overall mean.

    Args:
        real: The real table (codes).
        synth: The synthetic table (codes).
        by: The grouping attributes.
        strata: The public list of groups, :func:`~dpnotes.synth.stratified.strata_of`
            ``(domain, by)``.
        domain: The public domain; every attribute is a variable.

    Returns:
        The mean over the variables of their parity errors.

    References:
        rosenblatt2024stratification, Definition 10 and Figure 5.
    """
    rk = group_keys(real, by, domain=domain)
    sk = group_keys(synth, by, domain=domain)
    present = [i for i in range(len(strata)) if np.any(rk == i)]
    errors = []
    for attr in domain:
        rv = real[attr].to_numpy() + 1.0
        sv = synth[attr].to_numpy() + 1.0
        true_groups = np.array([rv[rk == i].mean() for i in present])
        est_all = sv.mean()
        est_groups = np.array(
            [sv[sk == i].mean() if np.any(sk == i) else est_all for i in present]
        )
        errors.append(
            parity_error(
                (rv.mean(), true_groups),
                (est_all, est_groups),
                omega=1.0 / len(strata),
            )
        )
    return float(np.mean(errors))


def _row(metric: str, grouping: str, group: str, value: float) -> dict[str, Any]:
    return {"metric": metric, "grouping": grouping, "group": group, "value": value}


def workload_metrics(
    train: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    domain: Mapping[str, int] = EMPLOYMENT_DOMAIN,
    groupings: Mapping[str, Sequence[str]] = EMPLOYMENT_GROUPINGS,
    label: str = EMPLOYMENT_LABEL,
) -> pd.DataFrame:
    """Return the rows of the metrics that compare the two tables directly.

    Metrics: ``workload_error`` over all 3-way marginals (overall, then per group);
    per grouping ``workload_parity_error`` (the overall error over ``k`` plus the
    finite group errors), ``mean_parity_error`` (:func:`mean_parity_error`) and
    ``label_mean_disparity`` (the largest gap between the synthetic groups' label
    means).

    Args:
        train: The real training table the synthesizer was fitted on.
        synth: The synthetic table.
        domain: The public domain.
        groupings: ``name -> grouping attributes``.
        label: The label column.

    Returns:
        Columns ``metric``, ``grouping`` (``"overall"`` or a key of ``groupings``),
        ``group`` (:func:`group_code`, or ``"all"``), ``value``.
    """
    return pd.DataFrame(_workload_rows(train, synth, domain, groupings, label))


def _workload_rows(train, synth, domain, groupings, label) -> _Rows:
    workload = all_kway(domain, 3)
    overall_w = workload_error(train, synth, domain, workload)
    rows: _Rows = [_row("workload_error", "overall", "all", overall_w)]
    for grouping, by in groupings.items():
        strata = strata_of(domain, by)
        per_group = workload_errors_by_group(train, synth, domain, by, strata, workload)
        finite = {g: v for g, v in per_group.items() if np.isfinite(v)}
        for g, v in per_group.items():
            rows.append(_row("workload_error", grouping, group_code(g), v))
        parity = overall_w / len(strata) + float(np.sum(list(finite.values())))
        rows.append(_row("workload_parity_error", grouping, "all", parity))
        mpe = mean_parity_error(train, synth, by, strata, domain=domain)
        rows.append(_row("mean_parity_error", grouping, "all", mpe))
        sk = group_keys(synth, by, domain=domain)
        gap = max_mean_disparity(synth[label].to_numpy(float), sk)
        rows.append(_row("label_mean_disparity", grouping, "all", gap))
    return rows


def _predict(kind, seed, x_train, y_train, x_test, y_test) -> np.ndarray:
    if np.unique(y_train).size < 2:
        # A synthetic table with one label value trains a constant predictor.
        return np.full_like(y_test, y_train[0] if y_train.size else 0)
    return make_classifier(kind, seed).fit(x_train, y_train).predict(x_test)


def classifier_metrics(
    synth: pd.DataFrame,
    test: pd.DataFrame,
    *,
    classifiers: Sequence[str],
    seed: int = 0,
    domain: Mapping[str, int] = EMPLOYMENT_DOMAIN,
    groupings: Mapping[str, Sequence[str]] = EMPLOYMENT_GROUPINGS,
    label: str = EMPLOYMENT_LABEL,
) -> pd.DataFrame:
    """Return the rows of classifiers trained on ``synth`` and tested on ``test``.

    Per classifier ``kind``: ``kind:accuracy`` overall (once) and per group, and per
    grouping ``kind:dp_difference``, ``kind:dp_ratio`` (demographic parity) and
    ``kind:fnr_difference`` (the largest gap in false negative rates).

    Args:
        synth: The synthetic table (the training rows).
        test: The held-out real test table.
        classifiers: Kinds of :data:`CLASSIFIERS`.
        seed: Seed of the classifiers that take one.
        domain: The public domain.
        groupings: ``name -> grouping attributes``.
        label: The label column; the other columns are one-hot features.

    Returns:
        Columns ``metric``, ``grouping``, ``group``, ``value``.
    """
    return pd.DataFrame(
        _classifier_rows(synth, test, classifiers, seed, domain, groupings, label)
    )


def _classifier_rows(synth, test, classifiers, seed, domain, groupings, label) -> _Rows:
    x_train = one_hot_features(synth, domain=domain, label=label)
    y_train = synth[label].to_numpy()
    x_test = one_hot_features(test, domain=domain, label=label)
    y_test = test[label].to_numpy()
    first = next(iter(groupings), None)
    rows: _Rows = []
    for kind in classifiers:
        y_pred = _predict(kind, seed, x_train, y_train, x_test, y_test)
        for grouping, by in groupings.items():
            res = classifier_group_metrics(
                y_test, y_pred, group_keys(test, by, domain=domain)
            )
            if grouping == first:
                rows.append(_row(f"{kind}:accuracy", "overall", "all", res["accuracy"]))
            sizes = tuple(domain[a] for a in by)
            for g, v in res["accuracy_by_group"].items():
                code = group_code(np.unravel_index(int(g), sizes))
                rows.append(_row(f"{kind}:accuracy", grouping, code, v))
            for key, name in (
                ("demographic_parity_difference", "dp_difference"),
                ("demographic_parity_ratio", "dp_ratio"),
                ("fnr_difference", "fnr_difference"),
            ):
                rows.append(_row(f"{kind}:{name}", grouping, "all", res[key]))
    return rows


def evaluate_synthetic(
    train: pd.DataFrame,
    test: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    classifiers: Sequence[str],
    seed: int = 0,
    domain: Mapping[str, int] = EMPLOYMENT_DOMAIN,
    groupings: Mapping[str, Sequence[str]] = EMPLOYMENT_GROUPINGS,
    label: str = EMPLOYMENT_LABEL,
) -> pd.DataFrame:
    """Return the tidy evaluation rows of one synthetic table.

    The rows of :func:`workload_metrics` (``synth`` against ``train``) followed by
    those of :func:`classifier_metrics` (trained on ``synth``, tested on ``test``).

    Args:
        train: The real training split the synthesizer was fitted on.
        test: The held-out real test split.
        synth: The synthetic table.
        classifiers: Kinds of :data:`CLASSIFIERS` to train on ``synth``.
        seed: Seed of the classifiers that take one.
        domain: The public domain.
        groupings: ``name -> grouping attributes``; default the paper's.
        label: The label column.

    Returns:
        Columns ``metric``, ``grouping`` (``"overall"`` or a key of ``groupings``),
        ``group`` (a stratum code string, or ``"all"``), ``value``.

    References:
        rosenblatt2024stratification, Figures 4, 5, 7 and 9.
    """
    rows = _workload_rows(train, synth, domain, groupings, label)
    rows += _classifier_rows(synth, test, classifiers, seed, domain, groupings, label)
    return pd.DataFrame(rows)
