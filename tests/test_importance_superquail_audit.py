"""An empirical privacy audit of SuperQUAIL.fit and FSQ.fit end to end.

Each audit fits the whole synthesizer thousands of times on two neighbouring data sets
(one record added or removed, the relation of SuperQUAIL's claim) and bounds the
epsilon of the release from one released scalar, with the project's harness
(:func:`dpnotes.audit.audit_epsilon`: threshold chosen on one half of the runs, the
Clopper–Pearson bound computed on the other). The claim audited is the total
``(epsilon, delta)``: each statistic is a function of the fitted model, so a valid
claim for ``fit`` covers it.

* SuperQUAIL: the statistic is the released target classifier's privacy loss at its
  claimed share (for objective perturbation it can be computed from the weights,
  :func:`dpnotes.audit.logistic_perturbation_noise`). Planted bug: the target
  classifier silently spends 20 times its share while the ledger shows the share.
* FSQ-Bal: the statistic is the tuned threshold ``threshold_``. Planted bug:
  ``release_histogram`` adds no noise while it reports its noise scale.

What the audits can see, and so their power: the records' influence is visible only
through the parts the statistic reads, and the DP logistic regression's privacy loss
under adding or removing one record is about half its epsilon. The target
classifier's statistic therefore sees at most ``0.35 * epsilon / 2`` of the correct
model (its share is ``alpha (1 - gamma) = 0.35`` of it), and refutes the total claim
only when that classifier overspends many times over (20x is caught; 10x is not, see
``scripts/audit_power.py``). The threshold's release (``0.03 * epsilon``) is caught
only when its noise is (nearly) gone. A passing audit shows no violation through these
statistics, never that ``fit`` is private.
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
from dpnotes.importance import DPLogisticRegression
from dpnotes.importance import superquail as sq_module
from dpnotes.importance.classifier import encode_unit_norm
from dpnotes.importance.superquail import SuperQUAIL, release_histogram

#: The smallest domain SuperQUAIL and FSQ accept: a sensitive feature and the target.
DOMAIN = {"S": 2, "Y": 2}
EPSILON = 1.0
DELTA = 1e-6
#: Tiny settings: one feature classifier, a small SAGE, a short MST estimate.
SETTINGS = {
    "beta": 1,
    "n_samples": 64,
    "n_background": 8,
    "max_permutations": 64,
    "batch_size": 32,
    "mst_options": {"iters": 30},
}
FAIR = {"fairness": "bal", "sensitive": "S", "protected": 1}
#: A strong trend (S=0 -> Y=1, S=1 -> Y=0) and one record against it, which both
#: classifiers (Y from S, and S from Y) misclassify confidently: its loss gradient,
#: and so its influence on objective perturbation's output, is near its maximum.
TREND = 1000
BASE = pd.DataFrame({"S": [0] * TREND + [1] * TREND, "Y": [1] * TREND + [0] * TREND})
RECORD = pd.DataFrame({"S": [1], "Y": [1]})
D0 = pd.concat([BASE, RECORD], ignore_index=True)
D1 = BASE
#: Runs per data set.
TRIALS_SQ = 300
#: FSQ: a noiseless histogram is caught far above the claim (bound 2.76 at 120 runs).
TRIALS_FSQ = 120
#: The planted overspend of the target classifier.
OVERSPEND = 20.0


_ROWS: dict = {}


def classifier_rows(
    df: pd.DataFrame, clf: DPLogisticRegression
) -> tuple[np.ndarray, np.ndarray]:
    """The rows and labels a fitted classifier's diffprivlib model saw on ``df``."""
    key = (id(df), clf.features_, clf.target_)
    if key not in _ROWS:  # the audits call this thousands of times on D0 and D1
        x = encode_unit_norm(df, DOMAIN, clf.features_)
        anchors = np.zeros((DOMAIN[clf.target_], x.shape[1]))
        anchors[:, -1] = 1 / math.sqrt(len(clf.features_) + 1)
        labels = np.r_[df[clf.target_].to_numpy(), np.arange(DOMAIN[clf.target_])]
        _ROWS[key] = (np.vstack([x, anchors]), labels)
    return _ROWS[key]


def target_loss(model: SuperQUAIL, d0: pd.DataFrame, d1: pd.DataFrame) -> float:
    """The target classifier's privacy loss at its claimed epsilon (the statistic).

    ``epsilon' / 2 * (||b_d1(w)|| - ||b_d0(w)||)`` for SuperQUAIL's target classifier
    (fitted on the whole data): the log-likelihood ratio of its weights between
    ``d0`` and ``d1`` if it spent what it claims, up to a log-determinant term. It
    reads only the fitted model.
    """
    clf = model.target_classifiers_["all"]
    norms = [
        np.linalg.norm(
            logistic_perturbation_noise(clf.coef_[0], *classifier_rows(d, clf), C=clf.C)
        )
        for d in (d0, d1)
    ]
    epsilon_prime = clf.epsilon - 2 * math.log1p(clf.C / 4)
    return epsilon_prime / 2 * (norms[1] - norms[0])


def superquail_family(epsilon: float):
    """SuperQUAIL.fit at ``epsilon``, reduced to :func:`target_loss` (a mechanism)."""

    def mechanism(data: pd.DataFrame, trials: int, rng: np.random.Generator):
        out = np.empty(trials)
        for t in range(trials):
            model = SuperQUAIL(epsilon=epsilon, delta=DELTA, **SETTINGS).fit(
                data, DOMAIN, target="Y", rng=rng
            )
            assert model.epsilon_spent <= epsilon and model.delta_spent <= DELTA
            out[t] = target_loss(model, D0, D1)
        return out

    return mechanism


#: The audit's mechanism: SuperQUAIL at the claimed epsilon.
superquail_mechanism = superquail_family(EPSILON)


def fsq_mechanism(data: pd.DataFrame, trials: int, rng: np.random.Generator):
    """FSQ-Bal's fit, reduced to its tuned threshold (the audit's mechanism)."""
    out = np.empty(trials)
    for t in range(trials):
        model = SuperQUAIL(epsilon=EPSILON, delta=DELTA, **SETTINGS, **FAIR).fit(
            data, DOMAIN, target="Y", rng=rng
        )
        assert model.epsilon_spent <= EPSILON and model.delta_spent <= DELTA
        out[t] = model.threshold_
    return out


def overspent_target_classifier(factor: float = OVERSPEND):
    """Planted bug: the target's classifier fits with ``factor`` times its epsilon.

    Its ``epsilon`` (and so ``epsilon_spent`` and SuperQUAIL's ledger) is restored
    after the fit: the overspend is silent.
    """
    original = DPLogisticRegression.fit

    def fit(self, df, domain, *, target, rng, features=None):
        if target != "Y":
            return original(self, df, domain, target=target, rng=rng, features=features)
        claimed = self.epsilon
        self.epsilon = factor * claimed
        try:
            return original(self, df, domain, target=target, rng=rng, features=features)
        finally:
            self.epsilon = claimed

    return mock.patch.object(DPLogisticRegression, "fit", fit)


def noiseless_histogram():
    """Planted bug: the threshold histogram is released exact (its scale reported)."""

    def release(counts, *, epsilon, rng, noise="laplace", delta=None):
        return np.asarray(counts, dtype=float), 1.0 / epsilon

    return mock.patch.object(sq_module, "release_histogram", release)


def broken(mechanism, patch):
    """``mechanism`` run under a planted bug."""

    def run(data, trials, rng):
        with patch():
            return mechanism(data, trials, rng)

    return run


def target_overspend_family(epsilon: float):
    """SuperQUAIL claiming ``EPSILON`` whose target classifier silently overspends.

    The classifier's factor is set so that the fit truly spends ``epsilon`` in all (by
    basic composition): the planted bug as a family indexed by the true epsilon, for
    ``scripts/audit_power.py``. ``OVERSPEND`` is ``epsilon = 1 + 19 * 0.35 = 7.65``.
    """
    share = SuperQUAIL(epsilon=EPSILON, delta=DELTA, **SETTINGS).shares()["target_each"]
    factor = 1.0 + (epsilon - EPSILON) / share
    return broken(superquail_mechanism, lambda: overspent_target_classifier(factor))


# --- fast checks: the neighbours and the planted bugs are what they say ------------


def test_the_neighbours_differ_by_one_added_record():
    assert len(D0) == len(D1) + 1
    pd.testing.assert_frame_equal(D0.iloc[:-1], D1)
    # Both groups hold records in both data sets (FSQ refuses a single group).
    assert set(D1["S"]) == {0, 1}


def test_the_overspent_classifier_spends_more_than_its_ledger_says():
    rng_seed = 3
    with overspent_target_classifier(20.0):
        clf = DPLogisticRegression(epsilon=0.35).fit(
            D0, DOMAIN, target="Y", rng=np.random.default_rng(rng_seed)
        )
        other = DPLogisticRegression(epsilon=0.35).fit(
            D0, DOMAIN, target="S", rng=np.random.default_rng(rng_seed)
        )
    truth = DPLogisticRegression(epsilon=7.0).fit(
        D0, DOMAIN, target="Y", rng=np.random.default_rng(rng_seed)
    )
    honest = DPLogisticRegression(epsilon=0.35).fit(
        D0, DOMAIN, target="S", rng=np.random.default_rng(rng_seed)
    )
    np.testing.assert_array_equal(clf.coef_, truth.coef_)
    assert clf.epsilon_spent == 0.35
    # Only the target's classifier is affected.
    np.testing.assert_array_equal(other.coef_, honest.coef_)


def test_the_noiseless_histogram_reports_a_scale_and_adds_nothing():
    counts = np.arange(8.0).reshape(2, 2, 2)
    with noiseless_histogram():
        noisy, scale = sq_module.release_histogram(
            counts, epsilon=0.5, rng=np.random.default_rng(0)
        )
    np.testing.assert_array_equal(noisy, counts)
    assert scale == 2.0
    # Unpatched, the same call adds Laplace noise.
    noisy, _ = release_histogram(counts, epsilon=0.5, rng=np.random.default_rng(0))
    assert np.all(noisy != counts)


def test_the_target_statistic_is_bounded_by_the_claimed_epsilon():
    # Under adding or removing one record the loss gradient moves by at most 1, so the
    # statistic is at most epsilon' / 2 in size, whatever the weights.
    clf = DPLogisticRegression(epsilon=0.35).fit(
        D1, DOMAIN, target="Y", rng=np.random.default_rng(0)
    )
    model = mock.Mock(target_classifiers_={"all": clf})
    bound = (clf.epsilon - 2 * math.log1p(clf.C / 4)) / 2
    values = []
    for w in np.random.default_rng(1).normal(0.0, 5.0, size=(500, 1, 3)):
        clf.coef_ = w
        values.append(target_loss(model, D0, D1))
    assert np.abs(values).max() <= bound + 1e-9
    assert np.abs(values).max() > 0.8 * bound


# --- the audits ---------------------------------------------------------------------


@pytest.mark.slow
def test_superquail_fit_passes_the_audit_and_catches_an_overspent_classifier():
    correct = audit_epsilon(
        superquail_mechanism,
        D0,
        D1,
        trials=TRIALS_SQ,
        rng=np.random.default_rng(21),
        delta=DELTA,
    )
    overspent = audit_epsilon(
        broken(superquail_mechanism, overspent_target_classifier),
        D0,
        D1,
        trials=TRIALS_SQ,
        rng=np.random.default_rng(22),
        delta=DELTA,
    )
    print(f"SuperQUAIL: {correct.summary()}")  # shown by pytest -rP
    print(f"SuperQUAIL, target at 20x: {overspent.summary()}")
    assert_audit_passes(correct, EPSILON)
    assert audit_fails(overspent, EPSILON), overspent.summary()


@pytest.mark.slow
def test_fsq_fit_passes_the_audit_and_catches_a_noiseless_histogram():
    correct = audit_epsilon(
        fsq_mechanism,
        D0,
        D1,
        trials=TRIALS_FSQ,
        rng=np.random.default_rng(23),
        delta=DELTA,
    )
    noiseless = audit_epsilon(
        broken(fsq_mechanism, noiseless_histogram),
        D0,
        D1,
        trials=TRIALS_FSQ,
        rng=np.random.default_rng(24),
        delta=DELTA,
    )
    print(f"FSQ-Bal: {correct.summary()}")  # shown by pytest -rP
    print(f"FSQ-Bal, noiseless histogram: {noiseless.summary()}")
    assert_audit_passes(correct, EPSILON)
    assert audit_fails(noiseless, EPSILON), noiseless.summary()
