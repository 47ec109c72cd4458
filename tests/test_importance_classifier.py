"""Tests for the DP logistic regression of dpnotes.importance.classifier.

Input checks (each refused before any fit), the unit-norm encoding, the anchor rows
(every public class predictable, the fit a function of D ∪ A), agreement with
diffprivlib's own prediction, seeded determinism, and an empirical privacy audit of the
whole classifier with the project's harness: the correct classifier passes on
neighbouring data sets (a record replaced; a record removed), a classifier that truly
spends twice the epsilon it claims is caught, and so is a deliberately broken variant
(rows of norm 10 while diffprivlib is told ``data_norm=1`` and its clipping is
switched off). The audit's statistic, the noise vector recovered from the weights, is
checked against the noise diffprivlib drew.
"""

from __future__ import annotations

import math
from unittest import mock

import numpy as np
import pandas as pd
import pytest

from dpnotes.audit import (
    assert_audit_passes,
    audit_epsilon,
    audit_fails,
    logistic_perturbation_noise,
)
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
#
# Objective perturbation's worst case is a record whose loss gradient is large and
# points away from the other record's. The neighbours below put the differing record
# against a strong trend (1000 records say A=0 -> Y=1, 1000 say A=1 -> Y=0): D0 holds
# (A=0, Y=0), its replacement D1 holds (A=1, Y=1). Both are confidently misclassified,
# so their gradients have norm near 1 and their difference norm near sqrt(3), the most
# two rows of this one-feature encoding allow (x . x' = 1/2; the theorem's worst case,
# 2, needs rows x' = -x, which a non-negative one-hot encoding never has). A label flip
# of one record, the earlier pair, moves the gradient by exactly 1, which caps the
# privacy loss at about epsilon / 2 and hides even a 2x overspend.
#
# The statistic is the log-likelihood ratio up to a constant factor: the noise vector
# that would have produced the released weights on D1 minus the one on D0, in norm
# (dpnotes.audit.logistic_perturbation_noise). The harness picks the threshold on one
# half of the runs and bounds on the other half, so the bound stays a valid 95% one.

AUDIT_DOMAIN = {"A": 2, "Y": 2}
#: The claimed epsilon of the audits; the broken variant truly spends twice it.
AUDIT_EPSILON = 2.0
#: Runs per data set: the correct classifier's audits, and the 2x variant's (its
#: power, the rate at which this audit refutes the claim, is in scripts/audit_power.py).
AUDIT_TRIALS = 1000
AUDIT_TRIALS_2X = 3000
AUDIT_TREND = 1000
AUDIT_BASE = pd.DataFrame(
    {
        "A": [0] * AUDIT_TREND + [1] * AUDIT_TREND,
        "Y": [1] * AUDIT_TREND + [0] * AUDIT_TREND,
    }
)
AUDIT_D0 = pd.concat(
    [AUDIT_BASE, pd.DataFrame({"A": [0], "Y": [0]})], ignore_index=True
)
#: The replace-one neighbour (the relation of the classifier's claim) ...
AUDIT_REPLACED = AUDIT_D0.assign(
    A=np.r_[AUDIT_BASE["A"], 1], Y=np.r_[AUDIT_BASE["Y"], 1]
)
#: ... and the add/remove neighbour (SuperQUAIL's relation): D0 without its record.
AUDIT_REMOVED = AUDIT_BASE


def audit_rows(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The rows and labels diffprivlib fits on: the encoding plus the anchor rows."""
    x = encode_unit_norm(df, AUDIT_DOMAIN, ["A"])
    anchors = np.zeros((2, x.shape[1]))
    anchors[:, -1] = 1 / math.sqrt(2)
    return np.vstack([x, anchors]), np.r_[df["Y"].to_numpy(), 0, 1]


def noise_gap(d0: pd.DataFrame, d1: pd.DataFrame, *, C: float = 0.1):
    """The statistic: ``||b_d1(w)|| - ||b_d0(w)||`` for released weights ``w``.

    Large values favour ``d0``. The privacy loss of ``w`` is ``epsilon' / 2`` times it,
    plus a log-determinant term of at most ``2 log(1 + C / 4)``.
    """
    (x0, y0), (x1, y1) = audit_rows(d0), audit_rows(d1)

    def statistic(coefs: np.ndarray) -> np.ndarray:
        b0 = logistic_perturbation_noise(coefs, x0, y0, C=C)
        b1 = logistic_perturbation_noise(coefs, x1, y1, C=C)
        return np.linalg.norm(b1, axis=1) - np.linalg.norm(b0, axis=1)

    return statistic


def dp_lr_family(epsilon: float):
    """The mechanism under audit: the weights of ``DPLogisticRegression(epsilon)``."""

    def mechanism(data: pd.DataFrame, trials: int, rng: np.random.Generator):
        coefs = np.empty((trials, 3))
        for t in range(trials):
            clf = DPLogisticRegression(epsilon=epsilon)
            coefs[t] = clf.fit(data, AUDIT_DOMAIN, target="Y", rng=rng).coef_[0]
        return coefs

    return mechanism


def _broken_norm_family(epsilon: float):
    """Rows of norm 10, diffprivlib told data_norm=1, its clipping switched off."""
    from diffprivlib.models import LogisticRegression

    correct = dp_lr_family(epsilon)
    encode = clf_module._encode_codes

    def mechanism(data, trials, rng):
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
            return correct(data, trials, rng)

    return mechanism


@pytest.mark.filterwarnings("ignore:scipy.optimize:DeprecationWarning")
def test_the_noise_recovered_from_the_weights_is_the_noise_diffprivlib_drew():
    # An independent reference for the statistic: diffprivlib's Vector mechanism draws
    # its noise from the seed the classifier passes; redraw it and compare.
    from diffprivlib.mechanisms import Vector

    binary = make_data().assign(Y=lambda d: np.minimum(d["Y"], 1))
    cases = [
        (AUDIT_D0, AUDIT_DOMAIN, 2.0),
        (AUDIT_REPLACED, AUDIT_DOMAIN, 0.5),
        (binary, {"A": 3, "B": 2, "Y": 2}, 1.0),
    ]
    for df, domain, eps in cases:
        clf = DPLogisticRegression(epsilon=eps).fit(
            df, domain, target="Y", rng=np.random.default_rng(7)
        )
        seed = int(np.random.default_rng(7).integers(0, 2**32))
        x = encode_unit_norm(df, domain, clf.features_)
        anchors = np.zeros((2, x.shape[1]))
        anchors[:, -1] = 1 / math.sqrt(len(clf.features_) + 1)
        rows = np.vstack([x, anchors])
        mech = Vector(
            epsilon=eps,
            function_sensitivity=0.25,
            data_sensitivity=1.0,
            dimension=rows.shape[1],
            alpha=1 / clf.C,
            n=rows.shape[0],
            random_state=np.random.RandomState(seed),
        )
        # At w = 0 the perturbed objective's gradient is the noise vector over n.
        _, grad = mech.randomise(lambda w: (0.0, np.zeros_like(w)))(
            np.zeros(rows.shape[1])
        )
        drawn = grad * rows.shape[0]
        got = logistic_perturbation_noise(
            clf.coef_[0], rows, np.r_[df["Y"].to_numpy(), 0, 1], C=clf.C
        )
        # L-BFGS stops at a small gradient, not at the exact minimiser.
        np.testing.assert_allclose(got, drawn, atol=1e-3 * np.linalg.norm(drawn))
        assert np.linalg.norm(drawn) > 0.1


def test_the_audit_neighbours_and_the_bounds_of_their_statistic():
    # One record replaced (the last); one removed.
    assert len(AUDIT_D0) == len(AUDIT_REPLACED) == len(AUDIT_REMOVED) + 1
    diff = (AUDIT_D0 != AUDIT_REPLACED).any(axis=1)
    assert diff.sum() == 1 and diff.iloc[-1]
    pd.testing.assert_frame_equal(AUDIT_D0.iloc[:-1], AUDIT_REMOVED)
    # Whatever the weights, the statistic is at most the gradients' difference in
    # norm: sqrt(3) for the replaced record, 1 for the removed one.
    w = np.random.default_rng(0).normal(0.0, 5.0, size=(5000, 3))
    replaced = noise_gap(AUDIT_D0, AUDIT_REPLACED)(w)
    removed = noise_gap(AUDIT_D0, AUDIT_REMOVED)(w)
    assert np.abs(replaced).max() <= math.sqrt(3) + 1e-9
    assert np.abs(removed).max() <= 1.0 + 1e-9
    # ... and the replacement reaches well past 1, where a label flip stops.
    assert np.abs(replaced).max() > 1.5


@pytest.mark.slow
def test_audit_passes_for_the_classifier_and_catches_a_2x_overspend():
    claim = AUDIT_EPSILON
    correct_replace = audit_epsilon(
        dp_lr_family(claim),
        AUDIT_D0,
        AUDIT_REPLACED,
        trials=AUDIT_TRIALS,
        rng=np.random.default_rng(11),
        statistic=noise_gap(AUDIT_D0, AUDIT_REPLACED),
    )
    correct_remove = audit_epsilon(
        dp_lr_family(claim),
        AUDIT_D0,
        AUDIT_REMOVED,
        trials=AUDIT_TRIALS // 2,
        rng=np.random.default_rng(12),
        statistic=noise_gap(AUDIT_D0, AUDIT_REMOVED),
    )
    # A classifier that truly spends twice what it claims.
    overspent = audit_epsilon(
        dp_lr_family(2 * claim),
        AUDIT_D0,
        AUDIT_REPLACED,
        trials=AUDIT_TRIALS_2X,
        rng=np.random.default_rng(13),
        statistic=noise_gap(AUDIT_D0, AUDIT_REPLACED),
    )
    for name, res in (
        ("correct, replace", correct_replace),
        ("correct, remove", correct_remove),
        ("2x, replace", overspent),
    ):
        print(f"{name}: {res.summary()}")  # shown by pytest -rP
    assert_audit_passes(correct_replace, claim)
    assert_audit_passes(correct_remove, claim)
    # The audit is not blind: it sees the correct classifier's neighbours apart ...
    assert correct_replace.epsilon_lower > 0.5, correct_replace.summary()
    # ... and refutes the claim of the one that spends twice as much.
    assert audit_fails(overspent, claim), overspent.summary()


@pytest.mark.slow
def test_audit_catches_rows_above_the_declared_norm():
    # The same audit, on a different planted bug: 300 runs suffice for a 10x one.
    broken = audit_epsilon(
        _broken_norm_family(AUDIT_EPSILON),
        AUDIT_D0,
        AUDIT_REPLACED,
        trials=300,
        rng=np.random.default_rng(14),
        statistic=noise_gap(AUDIT_D0, AUDIT_REPLACED),
    )
    print(f"norm 10: {broken.summary()}")
    assert audit_fails(broken, AUDIT_EPSILON), broken.summary()
