"""Marginals, workloads and the workload error used to evaluate synthetic data.

A *clique* is a tuple of attribute names; its *marginal* is the vector of counts of
every combination of their values (C order, the clique's attributes in domain order).
A *workload* is a list of cliques whose marginals the synthetic data should preserve,
e.g. all 3-way marginals (:func:`all_kway`), which is what AIM optimises for by default
and what the stratification paper evaluates in its appendix.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from dpnotes.synth.domain import Domain, check_data, check_domain

__all__ = [
    "Clique",
    "all_kway",
    "canonical",
    "downward_closure",
    "marginal",
    "marginals",
    "workload_error",
    "workload_errors_by_group",
]

#: A set of attributes, as a tuple of their names: the support of one marginal.
Clique = tuple[str, ...]


def canonical(clique: Iterable[str], domain: Domain) -> Clique:
    """Return the clique's attributes in domain order (the order marginals use).

    >>> canonical(("C", "A"), {"A": 2, "B": 2, "C": 2})
    ('A', 'C')
    """
    clique = tuple(clique)
    _check_attributes(clique, domain)
    members = set(clique)
    return tuple(a for a in domain if a in members)


def _check_attributes(clique: Clique, domain: Domain) -> None:
    """Raise ValueError naming the clique's attributes the domain does not declare."""
    unknown = sorted({a for a in clique if a not in domain}, key=str)
    if unknown:
        raise ValueError(
            f"clique {clique} names unknown attribute(s) {unknown}; the domain "
            f"declares {list(domain)}."
        )


def _n_records(df: pd.DataFrame | Mapping[str, np.ndarray]) -> int:
    return len(next(iter(df.values()))) if isinstance(df, Mapping) else len(df)


def all_kway(domain: Domain, k: int) -> list[Clique]:
    """Return every clique of ``k`` attributes, in domain order.

    If the domain has fewer than ``k`` attributes, the single clique of all of them.

    >>> all_kway({"A": 2, "B": 2, "C": 2}, 2)
    [('A', 'B'), ('A', 'C'), ('B', 'C')]
    """
    domain = check_domain(domain)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}.")
    attrs = list(domain)
    return list(itertools.combinations(attrs, min(int(k), len(attrs))))


def downward_closure(cliques: Iterable[Sequence[str]], domain: Domain) -> list[Clique]:
    """Return every non-empty subset of every clique, smallest first.

    >>> downward_closure([("A", "B")], {"A": 2, "B": 2})
    [('A',), ('B',), ('A', 'B')]
    """
    out: set[Clique] = set()
    for cl in cliques:
        cl = canonical(cl, domain)
        for r in range(1, len(cl) + 1):
            out.update(itertools.combinations(cl, r))
    order = {a: i for i, a in enumerate(domain)}
    return sorted(out, key=lambda c: (len(c), [order[a] for a in c]))


def _codes(df: pd.DataFrame | Mapping[str, np.ndarray], attr: str) -> np.ndarray:
    col = df[attr]
    return col.to_numpy() if isinstance(col, pd.Series) else np.asarray(col)


def marginal(
    df: pd.DataFrame | Mapping[str, np.ndarray],
    domain: Domain,
    clique: Sequence[str],
    *,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Return the flat count vector of ``clique`` (C order over the clique's values).

    Trusted fast path: ``df`` holds codes already checked against ``domain``
    (:func:`dpnotes.synth.domain.check_data`). The clique's names and the weights are
    checked (each in time proportional to its length).

    >>> df = pd.DataFrame({"A": [0, 1, 1], "B": [2, 0, 2]})
    >>> marginal(df, {"A": 2, "B": 3}, ("A", "B")).tolist()
    [0.0, 0.0, 1.0, 1.0, 0.0, 1.0]

    Raises:
        ValueError: If the clique names an attribute the domain does not declare, or
            ``weights`` are not one finite, non-negative number per record.
    """
    clique = tuple(clique)
    _check_attributes(clique, domain)
    n = _n_records(df)
    if weights is not None:
        weights = _check_record_weights(weights, n)
    shape = tuple(domain[a] for a in clique)
    size = int(np.prod(shape, dtype=np.int64))
    if len(clique) == 0:
        total = float(n if weights is None else np.sum(weights))
        return np.array([total])
    idx = np.ravel_multi_index(tuple(_codes(df, a) for a in clique), shape)
    return np.bincount(idx, weights=weights, minlength=size).astype(float)


def _check_record_weights(weights: np.ndarray, n: int) -> np.ndarray:
    w = np.asarray(weights)
    if w.dtype.kind not in "biuf" or w.shape != (n,):
        raise ValueError(
            f"weights must be one real number per record (shape ({n},)), got an "
            f"array of dtype {w.dtype} and shape {w.shape}."
        )
    w = w.astype(float, copy=False)
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(
            "weights must be finite and non-negative (each record's count); got NaN, "
            "infinite or negative values."
        )
    return w


def marginals(
    df: pd.DataFrame | Mapping[str, np.ndarray],
    domain: Domain,
    cliques: Iterable[Sequence[str]],
) -> dict[Clique, np.ndarray]:
    """Return ``{clique: marginal}`` for every clique (see :func:`marginal`)."""
    return {tuple(cl): marginal(df, domain, cl) for cl in cliques}


def _proportions(counts: np.ndarray) -> np.ndarray:
    total = counts.sum()
    return counts / total if total > 0 else np.zeros_like(counts)


def workload_error(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    domain: Domain,
    workload: Sequence[Sequence[str]] | None = None,
    *,
    weights: Sequence[float] | None = None,
) -> float:
    """Return the average L1 distance between real and synthetic workload marginals.

    ``(1/|W|) sum_r c_r || M_r(D)/|D| - M_r(S)/|S| ||_1`` with marginals as
    proportions, so data sets of different sizes compare (it equals the count form of
    the AIM paper divided by ``n`` when ``|S| = |D|``). It lies in ``[0, 2]``; 0 means
    every workload marginal is reproduced exactly. An empty synthetic table counts as
    error 1 per marginal only if the real one is not empty too (both empty: 0).

    Args:
        real: Real data (codes in ``domain``).
        synthetic: Synthetic data over the same domain.
        domain: The public domain.
        workload: Cliques to compare; default all 3-way marginals.
        weights: Weight ``c_r`` per clique; default 1.

    Returns:
        The weighted average L1 error.

    Raises:
        ValueError: If the data do not match the domain, or the weights do not match
            the workload.

    References:
        mckenna2022aim (Section 2, workload error).

    Examples:
        >>> d = {"A": 2, "B": 2}
        >>> df = pd.DataFrame({"A": [0, 1], "B": [0, 1]})
        >>> workload_error(df, df, d, [("A", "B")])
        0.0
    """
    domain = check_domain(domain)
    real = check_data(real, domain, "real", allow_empty=True)
    synthetic = check_data(synthetic, domain, "synthetic", allow_empty=True)
    workload = all_kway(domain, 3) if workload is None else list(workload)
    if not workload:
        raise ValueError("workload is empty; pass at least one clique.")
    c = np.ones(len(workload)) if weights is None else np.asarray(weights, float)
    if c.shape != (len(workload),) or not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError(
            f"weights must be {len(workload)} non-negative finite numbers, one per "
            "workload clique."
        )
    errs = [
        np.abs(
            _proportions(marginal(real, domain, canonical(cl, domain)))
            - _proportions(marginal(synthetic, domain, canonical(cl, domain)))
        ).sum()
        for cl in workload
    ]
    return float(np.dot(c, errs) / len(workload))


def workload_errors_by_group(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    domain: Domain,
    by: Sequence[str],
    groups: Sequence[tuple[int, ...]],
    workload: Sequence[Sequence[str]] | None = None,
) -> dict[tuple[int, ...], float]:
    """Return the workload error within each group (rows with ``by == group``).

    Real and synthetic rows of a group are compared with each other; a group with no
    real rows gets NaN (its error is undefined), one with real rows but no synthetic
    rows gets the error of an empty table (every proportion missed).

    Args:
        real: Real data.
        synthetic: Synthetic data.
        domain: The public domain.
        by: The attributes that define groups (e.g. ``["SEX", "RAC1P"]``).
        groups: The public list of groups, each a tuple of codes of ``by``.
        workload: Cliques to compare; default all 3-way marginals of ``domain``.

    Returns:
        ``{group: error}``.
    """
    domain = check_domain(domain)
    real = check_data(real, domain, "real")
    synthetic = check_data(synthetic, domain, "synthetic", allow_empty=True)
    by = list(by)
    out: dict[tuple[int, ...], float] = {}
    for g in groups:
        g = tuple(int(v) for v in g)
        if len(g) != len(by):
            raise ValueError(f"group {g} has {len(g)} codes but by has {len(by)}.")
        rmask = np.all(
            [real[a].to_numpy() == v for a, v in zip(by, g, strict=True)], axis=0
        )
        smask = np.all(
            [synthetic[a].to_numpy() == v for a, v in zip(by, g, strict=True)], axis=0
        )
        if not rmask.any():
            out[g] = float("nan")
            continue
        out[g] = workload_error(real[rmask], synthetic[smask], domain, workload)
    return out
