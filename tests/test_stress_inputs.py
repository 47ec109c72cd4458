"""Inputs found under stress that once gave garbage or an unclear error.

Each case was a wrong result (a number returned where there should be an error, or a
wrong number) or an error message that did not say what to do. Each now raises a
``ValueError`` naming the problem, or returns the right number.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import special

from dpnotes.bounds import expected_log_size_sum
from dpnotes.mean.coinpress import coinpress_mean
from dpnotes.mean.stratified import pub_strat_coinpress
from dpnotes.metrics import classifier_group_metrics
from dpnotes.synth.aim import AIM
from dpnotes.synth.marginals import marginal
from dpnotes.synth.mst import MST
from dpnotes.synth.stratified import largest_remainder

DOMAIN = {"a": 2, "b": 2}
DF = pd.DataFrame({"a": [0, 1, 1], "b": [1, 0, 1]})


@pytest.mark.parametrize(
    ("n", "weights", "error", "match"),
    [
        (-1, [0.5, 0.5], ValueError, "at least 0"),
        (2.5, [1.0], TypeError, "integer"),
        (10, [np.nan, 0.5], ValueError, "NaN"),
        (10, [-0.5, 1.5], ValueError, "non-negative"),
        (10, [0.2, 0.2], ValueError, "sum to 1"),
        (10, [], ValueError, "empty"),
    ],
)
def test_largest_remainder_refuses_what_it_cannot_split(n, weights, error, match):
    with pytest.raises(error, match=match):
        largest_remainder(n, np.array(weights))


def test_largest_remainder_still_splits_exactly():
    assert largest_remainder(0, np.array([0.5, 0.5])).tolist() == [0, 0]
    assert largest_remainder(7, np.array([1 / 3] * 3)).sum() == 7


@pytest.mark.parametrize(
    ("weights", "match"),
    [
        (np.array([-1.0, 1, 1]), "non-negative"),
        (np.array([np.nan, 1, 1]), "finite"),
        (np.array([1.0, 1]), r"shape \(3,\)"),
        (np.array([1 + 1j, 1, 1]), "real number"),
    ],
)
def test_marginal_refuses_weights_that_are_not_counts(weights, match):
    with pytest.raises(ValueError, match=match):
        marginal(DF, DOMAIN, ["a"], weights=weights)


def test_marginal_names_an_unknown_attribute():
    with pytest.raises(ValueError, match=r"\['z'\]; the domain declares"):
        marginal(DF, DOMAIN, ["a", "z"])
    # Valid weights still count.
    assert marginal(DF, DOMAIN, ["a"], weights=np.array([2.0, 1, 0])).tolist() == [
        2.0,
        1.0,
    ]


@pytest.mark.parametrize("synth", [MST, AIM])
def test_synthesizers_name_a_duplicated_column(synth):
    data = pd.DataFrame(np.zeros((5, 3), int), columns=["a", "a", "b"])
    with pytest.raises(ValueError, match=r"\['a'\] more than once"):
        synth(epsilon=1.0, delta=1e-6).fit(data, DOMAIN, rng=np.random.default_rng(0))


def test_pub_strat_coinpress_refuses_when_no_group_can_be_estimated():
    # Three records, two groups: the holdout leaves every public size below one.
    with pytest.raises(ValueError, match="below one record"):
        pub_strat_coinpress(
            np.array([1.0, 2.0, 3.0]),
            np.array([0, 1, 1]),
            public_groups=[0, 1],
            rho=1.0,
            lower=0.0,
            upper=5.0,
            rng=np.random.default_rng(1),
        )


@pytest.mark.parametrize("shape", [(3,), (4, 1), (2, 2)])
def test_coinpress_names_a_bound_of_the_wrong_shape(shape):
    x = np.random.default_rng(0).normal(size=(4, 100))
    with pytest.raises(ValueError, match=r"one per trial \(shape \(4,\)"):
        coinpress_mean(
            x, lower=np.zeros(shape), upper=5.0, rho=1.0, rng=np.random.default_rng(0)
        )
    # A scalar and one bound per trial are the same run.
    a = coinpress_mean(x, lower=0.0, upper=5.0, rho=1.0, rng=np.random.default_rng(0))
    b = coinpress_mean(
        x,
        lower=np.zeros(4),
        upper=np.full(4, 5.0),
        rho=1.0,
        rng=np.random.default_rng(0),
    )
    np.testing.assert_array_equal(a, b)


def test_expected_log_size_sum_is_right_where_k_alpha_overflows():
    k, n = 3, 100.0
    limit = k * (math.log(n) - math.log(k))
    assert expected_log_size_sum(1e308, k, n) == pytest.approx(limit, rel=1e-12)
    # Just below the overflow the digamma formula gives the same limit.
    assert expected_log_size_sum(1e300, k, n) == pytest.approx(limit, rel=1e-12)
    small = k * (special.digamma(0.5) - special.digamma(1.5) + math.log(n))
    assert expected_log_size_sum(0.5, k, n) == pytest.approx(small)


@pytest.mark.parametrize(
    ("y_true", "y_pred", "groups", "match"),
    [
        ([0, 1, np.nan], [0, 1, 1], [0, 0, 1], "y_true must hold binary"),
        ([0, 1, 1], [0, 1, 2], [0, 0, 1], "y_pred must hold binary"),
        ([0, 1, 1], [0, 1, 1], ["a", None, "b"], "missing labels"),
        ([0, 1, 1], [0, 1, 1], [0.0, np.nan, 1.0], "missing labels"),
    ],
)
def test_classifier_group_metrics_names_bad_labels(y_true, y_pred, groups, match):
    with pytest.raises(ValueError, match=match):
        classifier_group_metrics(
            np.array(y_true),
            np.array(y_pred),
            np.array(groups, dtype=object)
            if any(g is None for g in groups)
            else np.array(groups),
        )
