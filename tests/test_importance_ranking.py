"""Tests for the ranking metrics of Table 2 (dpnotes.importance.ranking).

Every expected value is computed by hand in the comment beside it, from the module's
definitions: relevance = membership in the reference's top k; AP@k normalised by k;
nDCG gains graded by the reference's rank (k + 1 - r) unless given.
"""

from __future__ import annotations

import math

import pytest

from dpnotes.importance.ranking import (
    average_precision_at_k,
    jaccard_at_k,
    mean_average_precision,
    ndcg_at_k,
)

REF = ["a", "b", "c", "d", "e", "f", "g"]


@pytest.mark.parametrize("metric", [jaccard_at_k, average_precision_at_k, ndcg_at_k])
def test_identical_top_k_scores_one_and_disjoint_scores_zero(metric):
    assert metric(REF, REF) == pytest.approx(1.0)
    assert metric(["v", "w", "x", "y", "z"], REF) == 0.0
    # Only the top k matters.
    assert metric([*REF[:5], "z", "y"], REF) == pytest.approx(1.0)


def test_jaccard_by_hand():
    # top 5: {a,b,c,d,x} vs {a,b,c,d,e}: 4 shared, 6 in the union.
    assert jaccard_at_k(["a", "b", "c", "d", "x"], REF) == pytest.approx(4 / 6)
    # Order inside the top k does not matter.
    assert jaccard_at_k(["e", "d", "c", "b", "a"], REF) == 1.0
    # k = 2: {b,z} vs {a,b}: 1 / 3.
    assert jaccard_at_k(["b", "z", "a"], REF, k=2) == pytest.approx(1 / 3)


def test_average_precision_by_hand():
    # relevant at positions 1, 3, 5: (1/1 + 2/3 + 3/5) / 5.
    ranking = ["a", "x", "b", "y", "c"]
    assert average_precision_at_k(ranking, REF) == pytest.approx(
        (1 + 2 / 3 + 3 / 5) / 5
    )
    # A relevant feature found late counts less: position 5 only gives (1/5) / 5.
    assert average_precision_at_k(["x", "y", "z", "w", "a"], REF) == pytest.approx(0.04)
    # The same set in another order is still 1 (relevance is set membership).
    assert average_precision_at_k(["e", "d", "c", "b", "a"], REF) == 1.0


def test_mean_average_precision_is_the_mean_over_runs():
    runs = [["a", "x", "b", "y", "c"], REF]
    refs = [REF, REF]
    assert mean_average_precision(runs, refs) == pytest.approx(
        ((1 + 2 / 3 + 3 / 5) / 5 + 1.0) / 2
    )
    with pytest.raises(ValueError, match="equal length"):
        mean_average_precision(runs, refs[:1])
    with pytest.raises(ValueError, match="non-empty"):
        mean_average_precision([], [])


def test_ndcg_by_hand_with_rank_graded_gains():
    # k = 3, gains a:3 b:2 c:1. Ranking (b, a, x): DCG = 2 + 3/log2(3) + 0;
    # IDCG = 3 + 2/log2(3) + 1/2.
    dcg = 2 + 3 / math.log2(3)
    idcg = 3 + 2 / math.log2(3) + 0.5
    assert ndcg_at_k(["b", "a", "x"], REF, k=3) == pytest.approx(dcg / idcg)
    # Unlike Jaccard and AP, nDCG sees the order: reversing the top 5 costs.
    reversed_top = ndcg_at_k(["e", "d", "c", "b", "a"], REF)
    gains = [1, 2, 3, 4, 5]
    expected = sum(g / math.log2(i + 2) for i, g in enumerate(gains)) / sum(
        g / math.log2(i + 2) for i, g in enumerate(sorted(gains, reverse=True))
    )
    assert reversed_top == pytest.approx(expected)
    assert reversed_top < 1.0


def test_ndcg_with_given_gains():
    # SAGE-like gains: a dominates, so swapping d and e barely matters.
    values = {"a": 0.10, "b": 0.02, "c": 0.01, "d": 0.005, "e": -0.001, "f": 0.0}
    ranking = ["a", "b", "c", "e", "d"]
    # Gains (negative -> 0): a .1, b .02, c .01, d .005, e 0. DCG puts e (0) at
    # position 4 and d (.005) at 5.
    d = [1 / math.log2(i + 2) for i in range(5)]
    dcg = 0.1 * d[0] + 0.02 * d[1] + 0.01 * d[2] + 0.0 * d[3] + 0.005 * d[4]
    idcg = 0.1 * d[0] + 0.02 * d[1] + 0.01 * d[2] + 0.005 * d[3] + 0.0 * d[4]
    assert ndcg_at_k(ranking, REF, gains=values) == pytest.approx(dcg / idcg)
    with pytest.raises(ValueError, match="lacks the reference's top-5"):
        ndcg_at_k(ranking, REF, gains={"a": 1.0})
    with pytest.raises(ValueError, match="must be finite"):
        ndcg_at_k(ranking, REF, gains={**values, "a": math.nan})
    with pytest.raises(ValueError, match="undefined"):
        ndcg_at_k(ranking, REF, gains=dict.fromkeys(REF, -1.0))
    with pytest.raises(TypeError, match="mapping"):
        ndcg_at_k(ranking, REF, gains=[1, 2, 3])


@pytest.mark.parametrize("metric", [jaccard_at_k, average_precision_at_k, ndcg_at_k])
def test_bad_rankings_are_refused(metric):
    with pytest.raises(ValueError, match="fewer than k=5"):
        metric(["a", "b"], REF)
    with pytest.raises(ValueError, match="fewer than k=5"):
        metric(REF, ["a"])
    with pytest.raises(ValueError, match="duplicate"):
        metric(["a", "a", "b", "c", "d"], REF)
    with pytest.raises(TypeError, match="sequence of feature names"):
        metric("abcde", REF)
    with pytest.raises(ValueError, match="k must be at least 1"):
        metric(REF, REF, k=0)
    with pytest.raises(TypeError, match="k must be an integer"):
        metric(REF, REF, k=2.0)
