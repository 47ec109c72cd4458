"""Tests for the DP logistic regression of dpnotes.importance.classifier.

Input checks (each refused before any fit), the unit-norm encoding, the anchor rows
(every public class predictable, the fit a function of D ∪ A), agreement with
diffprivlib's own prediction, seeded determinism, and an empirical privacy audit of the
whole classifier with the project's harness: the correct classifier passes on
neighbouring data sets (a record replaced; a record added), and a deliberately broken
variant (rows of norm 10 while diffprivlib is told ``data_norm=1`` and its clipping is
switched off) is caught.
"""

from __future__ import annotations

import math
from unittest import mock

import numpy as np
import pandas as pd
import pytest

from dpnotes.audit import assert_audit_passes, audit_epsilon, audit_fails
from dpnotes.importance import classifier as clf_module
from dpnotes.importance.classifier import (
    DPLogisticRegression,
    NonPrivateLogisticRegression,
    encode_unit_norm,
)

DOMAIN = {"A": 3, "B": 2, "Y": 3}


def make_data(n: int = 300, seed: int = 0) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    a = r.integers(0, 3, n)
    return pd.DataFrame(
        {
            "A": a,
            "B": r.integers(0, 2, n),
            # Class 2 of Y never occurs: only the anchors carry it.
            "Y": np.where(r.random(n) < 0.8, (a > 0).astype(int), 1 - (a > 0)),
        }
    )


def fit(df=None, domain=None, *, epsilon=1.0, seed=0, **kw) -> DPLogisticRegression:
    return DPLogisticRegression(epsilon=epsilon).fit(
        make_data() if df is None else df,
        DOMAIN if domain is None else domain,
        target=kw.pop("target", "Y"),
        rng=np.random.default_rng(seed),
        **kw,
    )


# --- encoding ---------------------------------------------------------------------


def test_every_encoded_row_has_norm_one_and_the_public_width():
    df = make_data(50)
    x = encode_unit_norm(df, DOMAIN, ["A", "B"])
    assert x.shape == (50, 3 + 2 + 1)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, rtol=0, atol=1e-12)
    # One-hot blocks over the public codes, the constant last.
    row = encode_unit_norm(pd.DataFrame({"A": [2], "B": [0]}), DOMAIN, ["A", "B"])
    np.testing.assert_allclose(row[0] * math.sqrt(3), [0, 0, 1, 1, 0, 1])


def test_the_width_does_not_depend_on_the_data():
    # A domain value absent from the data still has its column.
    x = encode_unit_norm(pd.DataFrame({"A": [0, 0]}), {"A": 7}, ["A"])
    assert x.shape == (2, 8)


def test_encoding_refuses_codes_outside_the_domain_and_unknown_features():
    with pytest.raises(ValueError, match="outside the declared domain"):
        encode_unit_norm(pd.DataFrame({"A": [3]}), DOMAIN, ["A"])
    with pytest.raises(ValueError, match="not in the domain"):
        encode_unit_norm(pd.DataFrame({"Z": [0]}), DOMAIN, ["Z"])


# --- fitting and predicting ---------------------------------------------------------


def test_every_public_class_is_predictable_through_the_anchor_rows():
    clf = fit()
    assert set(make_data()["Y"]) == {0, 1}
    np.testing.assert_array_equal(clf.classes_, [0, 1, 2])
    proba = clf.predict_proba(make_data())
    assert proba.shape == (300, 3)
    assert np.all(proba[:, 2] > 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # diffprivlib saw all three classes: the anchors are in its training set.
    np.testing.assert_array_equal(clf.model_.classes_, [0, 1, 2])


@pytest.mark.filterwarnings("ignore:scipy.optimize:DeprecationWarning")
def test_the_fit_is_diffprivlib_on_the_data_plus_fixed_anchors():
    # A data-independent transformation: fitting diffprivlib by hand on D ∪ A with
    # the same seed gives the same weights.
    from diffprivlib.accountant import BudgetAccountant
    from diffprivlib.models import LogisticRegression

    df = make_data()
    clf = fit(df, epsilon=2.0, seed=5)
    x = encode_unit_norm(df, DOMAIN, ["A", "B"])
    anchors = np.zeros((3, x.shape[1]))
    anchors[:, -1] = 1 / math.sqrt(3)
    seed = int(np.random.default_rng(5).integers(0, 2**32))
    ref = LogisticRegression(
        epsilon=2.0,
        data_norm=1.0,
        fit_intercept=False,
        C=clf.C,
        max_iter=clf.max_iter,
        tol=clf.tol,
        random_state=np.random.RandomState(seed),
        accountant=BudgetAccountant(),
    ).fit(np.vstack([x, anchors]), np.concatenate([df["Y"], [0, 1, 2]]))
    np.testing.assert_allclose(clf.coef_, ref.coef_)


def test_predictions_agree_with_diffprivlib_on_the_encoding():
    for domain, target in ((DOMAIN, "Y"), ({"A": 3, "B": 2, "Y": 2}, "B")):
        df = make_data()
        df = df.assign(Y=np.minimum(df["Y"], domain["Y"] - 1))
        clf = fit(df, domain, target=target)
        x = encode_unit_norm(df, domain, clf.features_)
        np.testing.assert_allclose(
            clf.predict_proba(df), clf.model_.predict_proba(x), atol=1e-12
        )
        np.testing.assert_array_equal(
            clf.predict(df), np.argmax(clf.model_.predict_proba(x), axis=1)
        )


def test_probabilities_stay_finite_when_every_class_score_underflows():
    # Scores below about -745 make every one-vs-rest logistic exactly 0.0: the
    # normalised probabilities must be the log-space limit, not 0 / 0, and the
    # prediction the class with the largest score, not the first.
    clf = fit()
    df = make_data(40, seed=3)
    normal = clf.predict_proba(df)
    shift = np.zeros_like(clf.coef_)
    shift[:, -1] = -2000.0 * math.sqrt(len(clf.features_) + 1)  # every score - 2000
    original = clf.coef_
    clf.coef_ = original + shift
    scores = clf.decision_function(df)
    assert (scores < -1500).all()
    proba = clf.predict_proba(df)
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.predict(df), np.argmax(scores, axis=1))
    # The limit of sigma(s_k) / sum_j sigma(s_j) for very negative s is a softmax.
    want = np.exp(scores - scores.max(axis=1, keepdims=True))
    np.testing.assert_allclose(proba, want / want.sum(axis=1, keepdims=True), rtol=1e-9)
    # Rows that do not underflow are untouched.
    clf.coef_ = original
    np.testing.assert_array_equal(clf.predict_proba(df), normal)
    assert np.isfinite(normal).all() and (normal > 0).all()


def test_arrays_of_codes_and_frames_give_the_same_prediction():
    clf = fit()
    df = make_data(40, seed=3)
    np.testing.assert_allclose(
        clf.predict_proba(df), clf.predict_proba(df[["A", "B"]].to_numpy())
    )
    # Other columns of the domain (the target) are ignored.
    np.testing.assert_allclose(
        clf.predict_proba(df), clf.predict_proba(df.drop(columns="Y"))
    )


def test_seeded_fits_are_deterministic_and_seeds_matter():
    np.testing.assert_array_equal(fit(seed=1).coef_, fit(seed=1).coef_)
    assert not np.allclose(fit(seed=1).coef_, fit(seed=2).coef_)


def test_epsilon_spent_and_features():
    clf = DPLogisticRegression(epsilon=0.7)
    assert clf.epsilon_spent == 0.0
    clf.fit(make_data(), DOMAIN, target="Y", rng=np.random.default_rng(0))
    assert clf.epsilon_spent == 0.7
    assert clf.features_ == ("A", "B")
    one = fit(features=["A"])
    assert one.features_ == ("A",)
    assert one.coef_.shape == (3, 3 + 1)


def test_more_budget_gives_a_better_classifier():
    # Statistical property, fixed seeds: at epsilon 50 the learned rule (Y = A > 0,
    # 80% of the time) is recovered; at epsilon 0.05 it is mostly noise.
    df = make_data(3000)
    truth = (df["A"] > 0).astype(int)

    def acc(eps):
        return np.mean(
            [
                (fit(df, epsilon=eps, seed=s).predict(df) == truth).mean()
                for s in range(5)
            ]
        )

    assert acc(50.0) > 0.97
    assert acc(50.0) > acc(0.05) + 0.1


def test_the_non_private_reference_fits_the_same_model():
    df = make_data(2000)
    ref = NonPrivateLogisticRegression().fit(df, DOMAIN, target="Y")
    assert ref.predict_proba(df).shape == (2000, 3)
    assert (ref.predict(df) == (df["A"] > 0)).mean() > 0.97
    binary = NonPrivateLogisticRegression().fit(
        df, {"A": 3, "B": 2, "Y": 3}, target="B"
    )
    assert binary.coef_.shape == (1, 3 + 3 + 1)


# --- bad input: refused before any work ---------------------------------------------


@pytest.mark.parametrize("epsilon", [0.0, -1.0, math.inf, math.nan])
def test_bad_epsilon_is_refused(epsilon):
    with pytest.raises(ValueError, match="epsilon must be a positive, finite"):
        DPLogisticRegression(epsilon=epsilon)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"C": 0.0}, ValueError, "C must be"),
        ({"max_iter": 0}, ValueError, "max_iter must be at least 1"),
        ({"tol": -1e-3}, ValueError, "tol must be"),
        ({"epsilon": "1"}, TypeError, "epsilon must be a real number"),
    ],
)
def test_bad_parameters_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        DPLogisticRegression(**{"epsilon": 1.0, **kwargs})


def _spy_fit():
    from diffprivlib.models import LogisticRegression

    return mock.patch.object(LogisticRegression, "fit", side_effect=AssertionError)


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        (lambda df, dom: (df.iloc[:0], dom), ValueError, "has no rows"),
        (
            lambda df, dom: (df.assign(A=df["A"].replace(2, 3)), dom),
            ValueError,
            "outside the declared domain",
        ),
        (lambda df, dom: (df.assign(Z=0), dom), ValueError, r"extra \['Z'\]"),
        (lambda df, dom: (df.drop(columns="B"), dom), ValueError, r"missing \['B'\]"),
        (lambda df, dom: ("not a frame", dom), TypeError, "pandas DataFrame"),
        (lambda df, dom: (df, [("A", 3)]), TypeError, "must be a mapping"),
        (
            lambda df, dom: (df.assign(A=df["A"] + 0.5), dom),
            ValueError,
            "integer codes",
        ),
    ],
)
def test_bad_data_is_refused_before_fitting(change, error, match):
    df, dom = change(make_data(), DOMAIN)
    with _spy_fit(), pytest.raises(error, match=match):
        DPLogisticRegression(epsilon=1.0).fit(
            df, dom, target="Y", rng=np.random.default_rng(0)
        )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"target": "Z"}, ValueError, "target 'Z' is not an attribute"),
        ({"target": 3}, TypeError, "target must be a column name"),
        ({"features": ["A", "Q"]}, ValueError, r"features \['Q'\] are not"),
        ({"features": ["A", "Y"]}, ValueError, "target 'Y' is among the features"),
        ({"features": ["A", "A"]}, ValueError, "duplicates"),
        ({"features": "A"}, TypeError, "sequence of column names"),
        ({"features": []}, ValueError, "no features"),
        ({"rng": 0}, TypeError, "numpy.random.Generator"),
    ],
)
def test_bad_target_features_and_rng_are_refused_before_fitting(kwargs, error, match):
    args = {"target": "Y", "rng": np.random.default_rng(0), **kwargs}
    with _spy_fit(), pytest.raises(error, match=match):
        DPLogisticRegression(epsilon=1.0).fit(make_data(), DOMAIN, **args)


def test_a_target_with_one_public_value_is_refused():
    with pytest.raises(ValueError, match="at least two classes"):
        DPLogisticRegression(epsilon=1.0).fit(
            pd.DataFrame({"A": [0], "Y": [0]}),
            {"A": 2, "Y": 1},
            target="Y",
            rng=np.random.default_rng(0),
        )


def test_prediction_refuses_bad_input():
    clf = fit()
    with pytest.raises(RuntimeError, match="not fitted"):
        DPLogisticRegression(epsilon=1.0).predict(make_data())
    with pytest.raises(ValueError, match="not in the fitted domain"):
        clf.predict(make_data().assign(Z=1))
    with pytest.raises(ValueError, match=r"lacks the feature column\(s\) \['B'\]"):
        clf.predict(make_data().drop(columns="B"))
    with pytest.raises(ValueError, match="outside the declared domain"):
        clf.predict(make_data().assign(A=5))
    with pytest.raises(ValueError, match="outside the public domain"):
        clf.predict(np.array([[0, 2]]))
    with pytest.raises(ValueError, match="shape"):
        clf.predict(np.array([0, 1]))
    with pytest.raises(ValueError, match="integer codes"):
        clf.predict(np.array([[0.5, 1.0]]))
    with pytest.raises(ValueError, match="no rows"):
        clf.predict(np.zeros((0, 2), dtype=int))


# --- the empirical privacy audit ------------------------------------------------------

AUDIT_DOMAIN = {"A": 2, "Y": 2}
AUDIT_EPSILON = 1.0
AUDIT_TRIALS = 2000
#: Four records; a neighbour replaces (A=0, Y=0) by (A=0, Y=1), another adds (A=0, Y=1).
AUDIT_D0 = pd.DataFrame({"A": [0, 0, 1, 1], "Y": [0, 1, 0, 1]})
AUDIT_REPLACED = AUDIT_D0.assign(Y=[1, 1, 0, 1])
AUDIT_ADDED = pd.concat(
    [AUDIT_D0, pd.DataFrame({"A": [0], "Y": [1]})], ignore_index=True
)
#: The public statistic: the fitted model's score of the record that differs.
AUDIT_RECORD = np.array([[0]])


def _dp_lr(data: pd.DataFrame, trials: int, rng: np.random.Generator) -> np.ndarray:
    out = np.empty(trials)
    for t in range(trials):
        clf = DPLogisticRegression(epsilon=AUDIT_EPSILON).fit(
            data, AUDIT_DOMAIN, target="Y", rng=rng
        )
        out[t] = clf.decision_function(AUDIT_RECORD)[0]
    return out


def _broken_dp_lr(data, trials, rng):
    """Rows of norm 10, diffprivlib told data_norm=1, its clipping switched off."""
    from diffprivlib.models import LogisticRegression

    encode = clf_module._encode_codes
    with (
        mock.patch.object(
            clf_module,
            "_encode_codes",
            lambda codes, sizes: 10.0 * encode(codes, sizes),
        ),
        mock.patch.object(
            LogisticRegression, "_clip_to_norm", staticmethod(lambda x, norm: x)
        ),
    ):
        return _dp_lr(data, trials, rng)


@pytest.mark.slow
def test_audit_passes_for_the_classifier_and_catches_a_broken_norm():
    correct_replace = audit_epsilon(
        _dp_lr,
        AUDIT_D0,
        AUDIT_REPLACED,
        trials=AUDIT_TRIALS,
        rng=np.random.default_rng(11),
    )
    correct_add = audit_epsilon(
        _dp_lr,
        AUDIT_D0,
        AUDIT_ADDED,
        trials=AUDIT_TRIALS,
        rng=np.random.default_rng(12),
    )
    broken = audit_epsilon(
        _broken_dp_lr,
        AUDIT_D0,
        AUDIT_REPLACED,
        trials=AUDIT_TRIALS,
        rng=np.random.default_rng(13),
    )
    assert_audit_passes(correct_replace, AUDIT_EPSILON)
    assert_audit_passes(correct_add, AUDIT_EPSILON)
    # The audit sees the neighbours apart at all (it is not blind) ...
    assert correct_replace.epsilon_lower > 0.05
    # ... and refutes the broken variant's claim.
    assert audit_fails(broken, AUDIT_EPSILON), broken.summary()
