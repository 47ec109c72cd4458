"""Synthetic-data metrics: how well a synthetic table stands in for the real one.

:func:`evaluate_synthetic` scores one synthetic table against the real training split
it was fitted on and the held-out real test split, overall and within the groups of
each grouping:

- workload error over all 3-way marginals, overall and within each group, and the
  parity error over it (:func:`~dpnotes.synth.marginals.workload_errors_by_group`);
- parity error of the means of every variable (:func:`mean_parity_error`);
- the largest gap between group means of the label;
- on request (``parity="authors"``), the parity error of the means as the authors'
  code scores it (:func:`mean_parity_error_authors`) and the paper's Figure 7a
  quantity, the largest relative error of a group's mean (:func:`max_mean_error`),
  under both conventions;
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
from dpnotes.validation import check_choice, check_positive

__all__ = [
    "AUTHORS_GROUPS",
    "AUTHORS_SCOPE",
    "CLASSIFIERS",
    "PARITY_CONVENTIONS",
    "classifier_metrics",
    "evaluate_synthetic",
    "group_code",
    "group_keys",
    "make_classifier",
    "max_mean_error",
    "mean_parity_error",
    "mean_parity_error_authors",
    "one_hot_features",
    "workload_metrics",
]

#: Classifiers trained on synthetic rows: scikit-learn's logistic regression and
#: histogram gradient boosting.
CLASSIFIERS: tuple[str, ...] = ("logistic", "boosting")

#: How the means' parity error is scored: ``"ours"`` (:func:`mean_parity_error`) or,
#: in addition, ``"authors"`` (:func:`mean_parity_error_authors` and
#: :func:`max_mean_error` under both conventions).
PARITY_CONVENTIONS: tuple[str, ...] = ("ours", "authors")

#: The attributes of the groups the authors' evaluation keeps.
AUTHORS_SCOPE: tuple[str, ...] = ("SEX", "RAC1P")

#: The 12 sex x race groups the authors' evaluation scores, as codes of
#: :data:`~dpnotes.data.employment.EMPLOYMENT_DOMAIN` (SEX 0-1; RAC1P 0-8 for the ACS
#: codes 1-9): both sexes of White, Black, American Indian alone, Asian, Some Other
#: Race and Two or More Races. Their code keeps the sex x race groups present in every
#: synthesizer's sample (``determine_limiting_synth``,
#: ``generate_results_from_synth_data.py`` lines 377-391 in ``lurosenb/stratify_dp``)
#: and scores them with ``omega = 1/12`` (line 325); their stored results
#: (``gem_mst_performance.pkl``, ``aim_performance.pkl``) name exactly these race
#: codes. Here the list is fixed in advance, a public specification.
AUTHORS_GROUPS: tuple[tuple[int, int], ...] = tuple(
    (sex, race) for sex in (0, 1) for race in (0, 1, 2, 5, 7, 8)
)

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


def _in_groups(
    data: pd.DataFrame, groups: Sequence[tuple[int, ...]], scope: Sequence[str]
) -> pd.DataFrame:
    """Return the rows of ``data`` whose values of ``scope`` form one of ``groups``."""
    keys = set(map(tuple, groups))
    values = zip(*(data[a].to_numpy().tolist() for a in scope), strict=True)
    return data[np.fromiter((v in keys for v in values), bool, count=len(data))]


def _group_means(
    values: np.ndarray, keys: np.ndarray, groups: Sequence[int]
) -> np.ndarray:
    """Mean of ``values`` in each of ``groups`` (NaN for a group without rows)."""
    size = max(int(keys.max(initial=-1)), max(groups, default=-1)) + 1
    sums = np.bincount(keys, weights=values, minlength=size)
    counts = np.bincount(keys, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums[list(groups)] / counts[list(groups)]


def mean_parity_error_authors(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    by: Sequence[str],
    *,
    groups: Sequence[tuple[int, ...]] = AUTHORS_GROUPS,
    scope: Sequence[str] = AUTHORS_SCOPE,
    omega: float = 1.0 / 12.0,
    domain: Mapping[str, int] = EMPLOYMENT_DOMAIN,
) -> float:
    """Return the parity error of the variables' means as the authors' code scores it.

    The convention of the authors' repository ``lurosenb/stratify_dp``:
    ``parity_error_synth_data`` in ``generate_results_from_synth_data.py`` (lines
    213-243, with ``omega = 1/12`` from line 325) and ``plots_for_synths.ipynb`` (the
    vector of per-variable errors summed with NaN left out):

    1. both tables keep only the rows of the 12 large sex x race ``groups`` (their
       code restricts the real table to them; its stratified samples hold only the
       strata it fitted, which leave out those under 0.1% of the records);
    2. values are the codes numbered from 0 (pandas category codes);
    3. per variable, Definition 10: ``omega |F - S| / F`` plus
       ``sum_i |f_i - s_i| / f_i`` over the groups of ``by`` in the kept real rows
       (a group absent from the synthetic rows is scored with their overall mean);
    4. the per-variable errors are **summed**, leaving out those that are not finite.

    A variable whose real mean is 0 in some group has no relative error: ``0 / 0`` for
    the grouping attributes themselves (a group's own code is 0), which the authors'
    plotting code leaves out as NaN; a non-zero synthetic mean over 0 would be
    infinite, which their stored results never are, and is left out too.

    Our own convention (:func:`mean_parity_error`) numbers values from 1, averages
    over the variables, scores every group present in the real data and takes
    ``omega = 1/k``: codes from 0 make the relative errors of variables whose common
    value is coded 0 large, and the sum lets such variables dominate.

    Args:
        real: The real table (codes).
        synth: The synthetic table (codes).
        by: The grouping attributes, within ``scope``.
        groups: The value combinations of ``scope`` that are scored (public).
        scope: The attributes ``groups`` are given in.
        omega: The weight of the overall term.
        domain: The public domain; every attribute is a variable.

    Returns:
        The sum over the variables of their finite parity errors (NaN if none is
        finite).

    Raises:
        ValueError: If ``by`` is not within ``scope``, ``groups`` does not match it, or
            ``omega`` is not positive.

    References:
        rosenblatt2024stratification, Definition 10 and Figure 5.
    """
    by, scope = list(by), list(scope)
    if not by or not set(by) <= set(scope):
        raise ValueError(
            f"by={by} must be a non-empty subset of the scope {scope}; the authors' "
            "groups are given in the scope's attributes."
        )
    if any(len(g) != len(scope) for g in groups) or not len(groups):
        raise ValueError(
            f"groups must be non-empty tuples of {len(scope)} codes, one per attribute "
            f"of {scope}."
        )
    omega = check_positive(omega, "omega")
    real = _in_groups(real, groups, scope)
    synth = _in_groups(synth, groups, scope)
    if real.empty:
        return float("nan")
    rk = group_keys(real, by, domain=domain)
    sk = group_keys(synth, by, domain=domain)
    present = np.flatnonzero(np.bincount(rk))
    total = 0.0
    finite = 0
    with np.errstate(invalid="ignore", divide="ignore"):
        for attr in domain:
            rv = real[attr].to_numpy(dtype=float)
            sv = synth[attr].to_numpy(dtype=float)
            s_all = sv.mean() if sv.size else np.nan
            t_groups = _group_means(rv, rk, present)
            s_groups = _group_means(sv, sk, present) if sv.size else t_groups * np.nan
            s_groups = np.where(np.isnan(s_groups), s_all, s_groups)
            f_all = rv.mean()
            term = omega * abs(f_all - s_all) / f_all
            term += float(np.sum(np.abs(t_groups - s_groups) / t_groups))
            if np.isfinite(term):
                total += term
                finite += 1
    return float(total) if finite else float("nan")


def max_mean_error(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    by: Sequence[str],
    *,
    convention: str = "ours",
    domain: Mapping[str, int] = EMPLOYMENT_DOMAIN,
) -> float:
    """Return the largest relative error of a group's mean: the paper's Figure 7a.

    ``max |f_i(real) - f_i(synth)| / |f_i(real)|`` over the groups of ``by`` present in
    both tables and over every variable, leaving out terms that are not finite: the
    "maximum disparity of all means" of the authors' ``calculate_disparity``
    (``generate_results_from_synth_data.py`` lines 245-276 in ``lurosenb/stratify_dp``),
    which the paper plots for sex x race strata.

    Args:
        real: The real table (codes).
        synth: The synthetic table (codes).
        by: The grouping attributes.
        convention: ``"ours"``: values numbered from 1, every group; ``"authors"``:
            values numbered from 0, only the :data:`AUTHORS_GROUPS` (``by`` then within
            :data:`AUTHORS_SCOPE`).
        domain: The public domain; every attribute is a variable.

    Returns:
        The largest relative error (NaN if no group has a finite one).

    Raises:
        ValueError: For an unknown convention, or ``by`` outside the authors' scope
            under theirs.

    References:
        rosenblatt2024stratification, Figure 7a (appendix).
    """
    check_choice(convention, PARITY_CONVENTIONS, "convention")
    offset = 1.0
    if convention == "authors":
        if not list(by) or not set(by) <= set(AUTHORS_SCOPE):
            raise ValueError(
                f"by={list(by)} must be a non-empty subset of {list(AUTHORS_SCOPE)} "
                "under the authors' convention."
            )
        real = _in_groups(real, AUTHORS_GROUPS, AUTHORS_SCOPE)
        synth = _in_groups(synth, AUTHORS_GROUPS, AUTHORS_SCOPE)
        offset = 0.0
    if real.empty or synth.empty:
        return float("nan")
    rk = group_keys(real, by, domain=domain)
    sk = group_keys(synth, by, domain=domain)
    both = np.intersect1d(np.unique(rk), np.unique(sk))
    worst = float("nan")
    with np.errstate(invalid="ignore", divide="ignore"):
        for attr in domain:
            t = _group_means(real[attr].to_numpy(dtype=float) + offset, rk, both)
            s = _group_means(synth[attr].to_numpy(dtype=float) + offset, sk, both)
            rel = np.abs(t - s) / np.abs(t)
            rel = rel[np.isfinite(rel)]
            if rel.size and (np.isnan(worst) or rel.max() > worst):
                worst = float(rel.max())
    return worst


def _row(metric: str, grouping: str, group: str, value: float) -> dict[str, Any]:
    return {"metric": metric, "grouping": grouping, "group": group, "value": value}


def workload_metrics(
    train: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    domain: Mapping[str, int] = EMPLOYMENT_DOMAIN,
    groupings: Mapping[str, Sequence[str]] = EMPLOYMENT_GROUPINGS,
    label: str = EMPLOYMENT_LABEL,
    parity: str = "ours",
) -> pd.DataFrame:
    """Return the rows of the metrics that compare the two tables directly.

    Metrics: ``workload_error`` over all 3-way marginals (overall, then per group);
    per grouping ``workload_parity_error`` (the overall error over ``k`` plus the
    finite group errors), ``mean_parity_error`` (:func:`mean_parity_error`) and
    ``label_mean_disparity`` (the largest gap between the synthetic groups' label
    means). With ``parity="authors"`` each grouping also gets
    ``mean_parity_error_authors`` (:func:`mean_parity_error_authors`), and
    ``max_mean_error`` and ``max_mean_error_authors`` (:func:`max_mean_error` under
    our convention and theirs), all scored on the same synthetic table.

    Args:
        train: The real training table the synthesizer was fitted on.
        synth: The synthetic table.
        domain: The public domain.
        groupings: ``name -> grouping attributes``.
        label: The label column.
        parity: One of :data:`PARITY_CONVENTIONS`: ``"ours"`` alone, or
            ``"authors"`` in addition (groupings within :data:`AUTHORS_SCOPE`).

    Returns:
        Columns ``metric``, ``grouping`` (``"overall"`` or a key of ``groupings``),
        ``group`` (:func:`group_code`, or ``"all"``), ``value``.

    Raises:
        ValueError: For an unknown ``parity``, or under ``"authors"`` a grouping
            outside :data:`AUTHORS_SCOPE`.
    """
    _check_parity(parity, groupings)
    return pd.DataFrame(_workload_rows(train, synth, domain, groupings, label, parity))


def _check_parity(parity: str, groupings: Mapping[str, Sequence[str]]) -> None:
    check_choice(parity, PARITY_CONVENTIONS, "parity convention")
    if parity == "authors":
        outside = {
            g: list(by)
            for g, by in groupings.items()
            if not set(by) <= {*AUTHORS_SCOPE}
        }
        if outside:
            raise ValueError(
                f"parity='authors' scores sex x race groups, but the groupings "
                f"{outside} use other attributes; pass groupings within "
                f"{list(AUTHORS_SCOPE)} or parity='ours'."
            )


def _workload_rows(train, synth, domain, groupings, label, convention="ours") -> _Rows:
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
        if convention == "authors":
            authors = mean_parity_error_authors(train, synth, by, domain=domain)
            rows.append(_row("mean_parity_error_authors", grouping, "all", authors))
            for name, kind in (("", "ours"), ("_authors", "authors")):
                worst = max_mean_error(train, synth, by, convention=kind, domain=domain)
                rows.append(_row(f"max_mean_error{name}", grouping, "all", worst))
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
    parity: str = "ours",
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
        parity: ``"ours"``, or ``"authors"`` to add the authors' scoring of the means
            and the paper's Figure 7a quantity (:func:`workload_metrics`).

    Returns:
        Columns ``metric``, ``grouping`` (``"overall"`` or a key of ``groupings``),
        ``group`` (a stratum code string, or ``"all"``), ``value``.

    Raises:
        ValueError: For an unknown ``parity`` (see :func:`workload_metrics`).

    References:
        rosenblatt2024stratification, Figures 4, 5, 7 and 9.
    """
    _check_parity(parity, groupings)
    rows = _workload_rows(train, synth, domain, groupings, label, parity)
    rows += _classifier_rows(synth, test, classifiers, seed, domain, groupings, label)
    return pd.DataFrame(rows)
