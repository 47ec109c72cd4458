"""How well one feature ranking recovers another: nDCG, Jaccard and MAP of the top k.

The paper's Table 2 compares DPSAGE's top 5 features with those of SAGE on the real
data by nDCG, Jaccard similarity and MAP, without defining gains or relevance. The
definitions used here (ours, stated once):

- **relevance**: a feature is relevant when it is in the reference's top ``k``;
- **Jaccard@k**: ``|A ∩ B| / |A ∪ B|`` for the two top-``k`` sets;
- **AP@k**: ``(1 / k) * sum_{i <= k} precision@i * rel_i``, where ``rel_i`` says
  whether the ranking's ``i``-th feature is relevant; normalised by ``k``, the number
  of relevant features, so that 1 means the same top-``k`` set (in any order) and a
  relevant feature found late counts less; **MAP** is its mean over runs;
- **nDCG@k**: ``DCG / IDCG`` with ``DCG = sum_{i <= k} gain(f_i) / log2(i + 1)``.
  The default gains are graded by the reference's rank: the reference's ``r``-th
  feature (``r = 1 .. k``) has gain ``k + 1 - r``, every other feature 0. Optionally
  the gains are given (e.g. the reference's SAGE values, negative ones taken as 0).
  ``IDCG`` is the DCG of the reference's own order. 1 means the same top ``k`` in the
  reference's order (up to ties of the given gains).

All three equal 1 for identical top-``k`` lists and 0 for disjoint ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from dpnotes.validation import check_int

__all__ = [
    "average_precision_at_k",
    "jaccard_at_k",
    "mean_average_precision",
    "ndcg_at_k",
]


def _top(ranking: object, k: int, name: str) -> list:
    if isinstance(ranking, (str, bytes)) or not isinstance(ranking, Sequence):
        raise TypeError(
            f"{name} must be a sequence of feature names, most important first; got "
            f"{type(ranking).__name__}."
        )
    items = list(ranking)
    if len(set(items)) != len(items):
        raise ValueError(f"{name} has duplicate features: {items}.")
    if len(items) < k:
        raise ValueError(
            f"{name} has {len(items)} features, fewer than k={k}; pass a full "
            "ranking or a smaller k."
        )
    return items[:k]


def _check_k(k: object) -> int:
    return check_int(k, "k", minimum=1)


def jaccard_at_k(
    ranking: Sequence[str], reference: Sequence[str], *, k: int = 5
) -> float:
    """Return the Jaccard similarity of the two top-``k`` sets.

    Args:
        ranking: Features, most important first (e.g. DPSAGE's).
        reference: The reference ranking (e.g. SAGE on the real data).
        k: How many top features to compare.

    Returns:
        ``|A ∩ B| / |A ∪ B|`` in [0, 1].

    Raises:
        ValueError: If a ranking has duplicates or fewer than ``k`` features, or
            ``k < 1``.
        TypeError: If a ranking is not a sequence (a bare string included).

    References:
        rosenblatt2022spending, Table 2.

    Examples:
        >>> jaccard_at_k(["a", "b", "c"], ["a", "c", "d"], k=3)
        0.5
    """
    k = _check_k(k)
    a, b = set(_top(ranking, k, "ranking")), set(_top(reference, k, "reference"))
    return len(a & b) / len(a | b)


def average_precision_at_k(
    ranking: Sequence[str], reference: Sequence[str], *, k: int = 5
) -> float:
    """Return AP@k: precision at each relevant position, averaged over ``k``.

    A feature of ``ranking``'s top ``k`` is relevant when it is in ``reference``'s top
    ``k`` (see the module docstring).

    Args:
        ranking: Features, most important first.
        reference: The reference ranking.
        k: How many top features to compare.

    Returns:
        AP@k in [0, 1].

    Raises:
        ValueError: As :func:`jaccard_at_k`.

    References:
        rosenblatt2022spending, Table 2.

    Examples:
        >>> round(average_precision_at_k(["a", "x", "b"], ["a", "b", "c"], k=3), 4)
        0.5556
    """
    k = _check_k(k)
    top = _top(ranking, k, "ranking")
    relevant = set(_top(reference, k, "reference"))
    hits, total = 0, 0.0
    for i, feature in enumerate(top, start=1):
        if feature in relevant:
            hits += 1
            total += hits / i
    return total / k


def mean_average_precision(
    rankings: Sequence[Sequence[str]],
    references: Sequence[Sequence[str]],
    *,
    k: int = 5,
) -> float:
    """Return MAP@k: the mean of :func:`average_precision_at_k` over pairs of runs.

    Args:
        rankings: One ranking per run.
        references: The reference ranking of each run (same length as ``rankings``).
        k: How many top features to compare.

    Raises:
        ValueError: If the lists are empty or of different lengths, or as
            :func:`average_precision_at_k`.
    """
    if len(rankings) == 0 or len(rankings) != len(references):
        raise ValueError(
            f"rankings and references must be non-empty and of equal length, got "
            f"{len(rankings)} and {len(references)}."
        )
    return float(
        np.mean(
            [
                average_precision_at_k(r, ref, k=k)
                for r, ref in zip(rankings, references, strict=True)
            ]
        )
    )


def ndcg_at_k(
    ranking: Sequence[str],
    reference: Sequence[str],
    *,
    k: int = 5,
    gains: Mapping[str, float] | None = None,
) -> float:
    """Return nDCG@k of ``ranking`` against ``reference``.

    Args:
        ranking: Features, most important first.
        reference: The reference ranking.
        k: How many top features to compare.
        gains: Gain of each feature; default graded by the reference's rank (its
            ``r``-th feature gets ``k + 1 - r`` for ``r <= k``, others 0). Given gains
            apply to the reference's top ``k`` only (others 0); negative ones count
            as 0; missing ones are an error.

    Returns:
        nDCG@k in [0, 1].

    Raises:
        ValueError: As :func:`jaccard_at_k`; also if ``gains`` lacks a feature of the
            reference's top ``k``, holds a non-finite value, or gives all of them 0.

    References:
        jarvelin2002cumulated; rosenblatt2022spending, Table 2.

    Examples:
        >>> ndcg_at_k(["a", "b"], ["a", "b"], k=2)
        1.0
        >>> round(ndcg_at_k(["b", "a"], ["a", "b"], k=2), 4)
        0.8597
    """
    k = _check_k(k)
    top = _top(ranking, k, "ranking")
    ref = _top(reference, k, "reference")
    if gains is None:
        gain = {f: float(k - r) for r, f in enumerate(ref)}
    else:
        if not isinstance(gains, Mapping):
            raise TypeError(
                f"gains must be a mapping feature -> gain, got {type(gains).__name__}."
            )
        missing = [f for f in ref if f not in gains]
        if missing:
            raise ValueError(
                f"gains lacks the reference's top-{k} feature(s) {missing}."
            )
        gain = {}
        for f in ref:
            g = float(gains[f])
            if not math.isfinite(g):
                raise ValueError(f"gains[{f!r}] is {g}; gains must be finite.")
            gain[f] = max(g, 0.0)
    discounts = 1.0 / np.log2(np.arange(2, k + 2))
    ideal = float(np.sort(list(gain.values()))[::-1] @ discounts)
    if ideal <= 0.0:
        raise ValueError(
            "every gain of the reference's top features is 0 or negative, so nDCG is "
            "undefined; pass positive gains or use the default rank-graded ones."
        )
    dcg = float(np.array([gain.get(f, 0.0) for f in top]) @ discounts)
    return dcg / ideal
