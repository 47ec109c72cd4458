"""Tests for DPSAGE and the real-SAGE reference (dpnotes.importance.dpsage).

Bad input is refused before any fit; the budget spent never exceeds the budget, for
every option; SAGE reads only the synthesizer's samples and the DP classifier (a spy
checks the arrays it is handed); runs are deterministic under a seed; SAGE's cost is
bounded by its parameters; and an end-to-end run on New Mexico ACSEmployment rows.
"""

from __future__ import annotations

import math
import os
import time
from unittest import mock

import numpy as np
import pandas as pd
import pytest

from dpnotes.importance.classifier import DPLogisticRegression
from dpnotes.importance.dpsage import LABELS, dpsage, dpsage_groups, real_sage
from dpnotes.synth.mst import MST

DOMAIN = {"A": 3, "B": 2, "C": 2, "Y": 2}
DELTA = 1e-6
#: Small, fast settings: tiny SAGE, a short MST estimate.
FAST = {
    "n_samples": 256,
    "n_background": 16,
    "max_permutations": 256,
    "batch_size": 64,
    "mst_options": {"iters": 50},
}


def make_data(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """Y follows A closely, C weakly; B is noise."""
    r = np.random.default_rng(seed)
    a = r.integers(0, 3, n)
    y = np.where(r.random(n) < 0.9, (a == 0).astype(int), r.integers(0, 2, n))
    c = np.where(r.random(n) < 0.6, y, r.integers(0, 2, n))
    return pd.DataFrame({"A": a, "B": r.integers(0, 2, n), "C": c, "Y": y})


def run(df=None, *, epsilon=1.0, seed=0, **kw):
    args = {**FAST, **kw}
    return dpsage(
        make_data() if df is None else df,
        DOMAIN,
        target="Y",
        epsilon=epsilon,
        delta=DELTA,
        rng=np.random.default_rng(seed),
        **args,
    )


# --- bad input: refused before any work -----------------------------------------------


def _no_fits():
    return (
        mock.patch.object(MST, "fit", side_effect=AssertionError("MST fitted")),
        mock.patch.object(
            DPLogisticRegression, "fit", side_effect=AssertionError("C fitted")
        ),
    )


BAD = [
    ({"df": make_data().iloc[:0]}, ValueError, "has no rows"),
    ({"df": make_data().assign(A=3)}, ValueError, "outside the declared domain"),
    ({"df": make_data().assign(Z=0)}, ValueError, r"extra \['Z'\]"),
    ({"df": "rows"}, TypeError, "pandas DataFrame"),
    ({"domain": {"A": 3}}, ValueError, "target 'Y' is not an attribute"),
    ({"domain": {"Y": 2}}, ValueError, "at least one feature"),
    ({"target": "Q"}, ValueError, "target 'Q' is not an attribute"),
    ({"target": None}, TypeError, "target must be a column name"),
    ({"epsilon": 0.0}, ValueError, "epsilon must be a positive, finite"),
    ({"epsilon": -1.0}, ValueError, "epsilon must be a positive, finite"),
    ({"epsilon": math.inf}, ValueError, "epsilon must be a positive, finite"),
    ({"epsilon": math.nan}, ValueError, "epsilon must be a positive, finite"),
    ({"delta": 0.0}, ValueError, "delta must lie strictly between 0 and 1"),
    ({"delta": 1.0}, ValueError, "delta must lie strictly between 0 and 1"),
    ({"gamma": 0.0}, ValueError, r"gamma must lie in \(0, 1\)"),
    ({"gamma": 1.0}, ValueError, r"gamma must lie in \(0, 1\)"),
    ({"labels": "real"}, ValueError, "unknown labels 'real'"),
    ({"n_samples": 0}, ValueError, "n_samples must be at least 1"),
    ({"n_background": 0}, ValueError, "n_background must be at least 1"),
    ({"n_background": 2000}, ValueError, "above 1024"),
    ({"thresh": 0.0}, ValueError, r"thresh must lie in \(0, 1\)"),
    ({"max_permutations": 0}, ValueError, "max_permutations must be at least 1"),
    ({"batch_size": 0}, ValueError, "batch_size must be at least 1"),
    ({"mst_options": {"rounds": 3}}, ValueError, r"unknown option\(s\) \['rounds'\]"),
    ({"mst_options": [("iters", 3)]}, TypeError, "must be a mapping"),
    ({"mst_options": {"iters": 0}}, ValueError, "iters must be at least 1"),
    ({"classifier_options": {"epsilon": 9}}, ValueError, r"unknown option\(s\)"),
    ({"classifier_options": {"C": -1.0}}, ValueError, "C must be"),
    ({"rng": 7}, TypeError, "numpy.random.Generator"),
]


@pytest.mark.parametrize(("change", "error", "match"), BAD)
def test_bad_input_is_refused_before_any_fit(change, error, match):
    args = {
        "df": make_data(),
        "domain": DOMAIN,
        "target": "Y",
        "epsilon": 1.0,
        "delta": DELTA,
        "rng": np.random.default_rng(0),
        **FAST,
        **change,
    }
    spy_mst, spy_clf = _no_fits()
    with spy_mst, spy_clf, pytest.raises(error, match=match):
        dpsage(args.pop("df"), args.pop("domain"), **args)


def test_real_sage_refuses_bad_input():
    with pytest.raises(ValueError, match="has no rows"):
        real_sage(
            make_data().iloc[:0], DOMAIN, target="Y", rng=np.random.default_rng(0)
        )
    with pytest.raises(ValueError, match="target 'Q'"):
        real_sage(make_data(), DOMAIN, target="Q", rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="above 1024"):
        real_sage(
            make_data(),
            DOMAIN,
            target="Y",
            rng=np.random.default_rng(0),
            n_background=5000,
        )
    with pytest.raises(TypeError, match=r"numpy\.random\.Generator"):
        real_sage(make_data(), DOMAIN, target="Y", rng=None)


# --- the budget -----------------------------------------------------------------------


#: Every budget twice, every split with both label sources, each pair of budget and
#: split at most once: the arithmetic is the same in every cell of the full product
#: (24 end-to-end runs), so 8 cover its corners at a third of the time.
BUDGET_CASES = [
    (0.2, 0.2, "synthetic"),
    (0.2, 0.8, "model"),
    (1.0, 0.5, "synthetic"),
    (1.0, 0.2, "model"),
    (math.e**2, 0.8, "synthetic"),
    (math.e**2, 0.5, "model"),
    (math.e**4, 0.2, "synthetic"),
    (math.e**4, 0.8, "model"),
]


def test_the_budget_cases_cover_every_budget_split_and_label():
    epsilons = [e for e, _, _ in BUDGET_CASES]
    assert sorted(set(epsilons)) == [0.2, 1.0, math.e**2, math.e**4]
    assert all(epsilons.count(e) == 2 for e in epsilons)
    splits = {(g, lab) for _, g, lab in BUDGET_CASES}
    assert splits == {(g, lab) for g in (0.2, 0.5, 0.8) for lab in LABELS}
    assert len({(e, g) for e, g, _ in BUDGET_CASES}) == len(BUDGET_CASES)


@pytest.mark.parametrize(("epsilon", "gamma", "labels"), BUDGET_CASES)
def test_the_budget_spent_never_exceeds_the_budget(epsilon, gamma, labels):
    res = run(epsilon=epsilon, gamma=gamma, labels=labels)
    assert res.budget.epsilon <= epsilon
    assert res.budget.delta == DELTA
    (what_s, spent_s), (what_c, spent_c) = res.ledger
    assert "MST" in what_s and "logistic" in what_c
    # MST gets gamma * epsilon (and all of delta), C the rest, pure.
    assert spent_s.epsilon <= gamma * epsilon * (1 + 1e-12)
    assert spent_s.epsilon == pytest.approx(gamma * epsilon, rel=1e-9)
    assert spent_s.delta == DELTA
    assert spent_c.epsilon == pytest.approx((1 - gamma) * epsilon, rel=1e-12)
    assert spent_c.delta == 0.0
    assert res.synthesizer.epsilon == pytest.approx(gamma * epsilon)
    assert res.synthesizer.rho_spent <= res.synthesizer.rho * (1 + 1e-9)
    assert res.classifier.epsilon_spent == spent_c.epsilon
    assert res.budget.epsilon == pytest.approx(epsilon, rel=1e-9)


# --- post-processing: SAGE sees synthetic rows and C only -----------------------------


@pytest.mark.parametrize("labels", LABELS)
def test_sage_reads_only_the_synthesizers_samples(labels):
    import sage

    samples, seen = [], {}
    original_sample = MST.sample

    def recording_sample(self, n, *, rng):
        out = original_sample(self, n, rng=rng)
        samples.append(out)
        return out

    original_imputer = sage.MarginalImputer.__init__

    def recording_imputer(self, model, data):
        seen["background"] = np.array(data)
        seen["model"] = model
        original_imputer(self, model, data)

    original_call = sage.PermutationEstimator.__call__

    def recording_call(self, X, Y=None, **kw):
        seen["X"], seen["Y"] = np.array(X), None if Y is None else np.array(Y)
        return original_call(self, X, Y, **kw)

    with (
        mock.patch.object(MST, "sample", recording_sample),
        mock.patch.object(sage.MarginalImputer, "__init__", recording_imputer),
        mock.patch.object(sage.PermutationEstimator, "__call__", recording_call),
    ):
        res = run(labels=labels)
    features = ["A", "B", "C"]
    explained, background = samples
    assert len(explained) == FAST["n_samples"]
    np.testing.assert_array_equal(seen["X"], explained[features].to_numpy())
    np.testing.assert_array_equal(seen["background"], background[features].to_numpy())
    if labels == "synthetic":
        np.testing.assert_array_equal(seen["Y"], explained["Y"].to_numpy())
    else:
        assert seen["Y"] is None
    # The explained model is C's prediction.
    assert seen["model"].__self__ is res.classifier


# --- the result -----------------------------------------------------------------------


def test_the_result_ranks_by_value_and_keeps_s_and_c():
    res = run(epsilon=20.0)
    assert set(res.ranking) == {"A", "B", "C"}
    assert list(res.values.index) == ["A", "B", "C"]
    assert list(res.values[list(res.ranking)]) == sorted(res.values, reverse=True)
    assert res.std.shape == (3,)
    assert res.target == "Y" and res.gamma == 0.5 and res.labels == "synthetic"
    assert set(res.seconds) == {"classifier", "synthesizer", "sampling", "sage"}
    # S and C are fitted and reusable.
    assert res.synthesizer.sample(5, rng=np.random.default_rng(0)).shape == (5, 4)
    assert res.classifier.predict_proba(make_data(5)).shape == (5, 2)
    # A planted strong feature is found at a generous budget.
    assert res.ranking[0] == "A"


def test_seeded_runs_are_deterministic():
    a, b = run(seed=3), run(seed=3)
    pd.testing.assert_series_equal(a.values, b.values)
    assert a.ranking == b.ranking
    np.testing.assert_array_equal(a.classifier.coef_, b.classifier.coef_)
    c = run(seed=4)
    assert not np.allclose(a.values, c.values)


def test_sage_stops_after_max_permutations():
    import sage

    rounds = []
    original = sage.PermutationEstimator._process_sample

    def counting(self, *args, **kw):
        rounds.append(len(args[0]))
        return original(self, *args, **kw)

    with mock.patch.object(sage.PermutationEstimator, "_process_sample", counting):
        # A convergence threshold that is never reached: the cap stops it.
        run(thresh=1e-9, max_permutations=100, batch_size=32)
    assert rounds == [32] * 4  # ceil(100 / 32) rounds of 32 permutations


def test_real_sage_is_labelled_non_private_and_finds_the_planted_feature():
    res = real_sage(
        make_data(2000),
        DOMAIN,
        target="Y",
        rng=np.random.default_rng(0),
        n_background=32,
        max_permutations=1024,
        batch_size=128,
    )
    assert res.private is False
    assert res.ranking == ("A", "C", "B")
    assert res.values["A"] > 5 * abs(res.values["B"])
    again = real_sage(
        make_data(2000),
        DOMAIN,
        target="Y",
        rng=np.random.default_rng(0),
        n_background=32,
        max_permutations=1024,
        batch_size=128,
    )
    pd.testing.assert_series_equal(res.values, again.values)


# --- end to end on real data ----------------------------------------------------------

REAL_DATA_DIR = os.environ.get("DPNOTES_DATA_DIR", "").strip()


@pytest.mark.slow
@pytest.mark.data
@pytest.mark.skipif(not REAL_DATA_DIR, reason="set DPNOTES_DATA_DIR (real data)")
def test_dpsage_end_to_end_on_new_mexico_employment():
    from dpnotes.data.employment import EMPLOYMENT_DOMAIN, split_employment

    train, _ = split_employment("NM", rows=3000)
    started = time.perf_counter()
    res = dpsage(
        train,
        EMPLOYMENT_DOMAIN,
        target="ESR",
        epsilon=2.0,
        delta=1e-9,
        rng=np.random.default_rng(0),
        n_samples=1024,
        n_background=32,
        max_permutations=2048,
        batch_size=256,
        mst_options={"iters": 200},
    )
    seconds = time.perf_counter() - started
    assert len(train) == 2400
    assert sorted(res.ranking) == sorted(a for a in EMPLOYMENT_DOMAIN if a != "ESR")
    assert res.budget.epsilon <= 2.0 and res.budget.delta == 1e-9
    # Age is by far the strongest predictor of employment (ages 17-89).
    assert res.ranking[0] == "AGEP"
    assert seconds < 60, seconds


# --- DPSAGE per group -----------------------------------------------------------------

#: A partition of A's codes: group "a0" (code 0) and "rest" (codes 1 and 2).
GROUPS = {"a0": (0,), "rest": (1, 2)}


def run_groups(df=None, *, epsilon=1.0, seed=0, **kw):
    args = {**FAST, **kw}
    return dpsage_groups(
        make_data() if df is None else df,
        DOMAIN,
        target="Y",
        sensitive="A",
        groups=GROUPS,
        epsilon=epsilon,
        delta=DELTA,
        rng=np.random.default_rng(seed),
        **args,
    )


GROUP_BAD = [
    ({"sensitive": "Y"}, ValueError, "cannot be the target"),
    ({"sensitive": "Z"}, ValueError, "not an attribute"),
    ({"groups": {"a0": (0,), "a1": (1,)}}, ValueError, "partition"),
    ({"groups": {"a0": (0, 1), "rest": (1, 2)}}, ValueError, "partition"),
    ({"groups": {"a0": (), "rest": (0, 1, 2)}}, ValueError, "no codes"),
    ({"groups": [(0,), (1, 2)]}, TypeError, "mapping"),
    ({"group_split": "halves"}, ValueError, "group_split"),
    ({"epsilon": 0.0}, ValueError, "epsilon"),
]


@pytest.mark.parametrize("change, error, match", GROUP_BAD)
def test_dpsage_groups_refuses_bad_input_before_any_fit(change, error, match):
    kw = {
        "target": "Y",
        "sensitive": "A",
        "groups": GROUPS,
        "epsilon": 1.0,
        "delta": DELTA,
        "rng": np.random.default_rng(0),
        **FAST,
        **change,
    }
    a, b = _no_fits()
    with a, b, pytest.raises(error, match=match):
        dpsage_groups(make_data(), DOMAIN, **kw)


def test_dpsage_groups_fits_a_group_without_records_on_the_anchors():
    # Refusing would reveal that the group is empty; its classifier sees the fixed
    # anchor rows alone, and the release costs what it costs with records.
    df = make_data()
    full, empty = run_groups(df), run_groups(df[df.A != 0].reset_index(drop=True))
    assert list(empty.classifiers) == list(full.classifiers)
    assert empty.budget == full.budget
    assert [w for w, _ in empty.ledger] == [w for w, _ in full.ledger]
    anchors_only = empty.classifiers["a0"]
    assert anchors_only.epsilon_spent == full.classifiers["a0"].epsilon_spent
    assert anchors_only.predict_proba(df.iloc[:5]).shape == (5, DOMAIN["Y"])
    assert set(empty.rankings["a0"]) == set(full.rankings["a0"])


def test_dpsage_groups_labels_model_uses_the_classifiers_output():
    df = make_data()
    synthetic, model = run_groups(df), run_groups(df, labels="model")
    for g, clf in synthetic.classifiers.items():
        np.testing.assert_array_equal(clf.coef_, model.classifiers[g].coef_)
    assert any(
        not np.allclose(synthetic.values[g], model.values[g]) for g in synthetic.values
    )
    with pytest.raises(ValueError, match="unknown labels"):
        run_groups(df, labels="real")


@pytest.mark.parametrize("split", ["parallel", "even"])
def test_dpsage_groups_budget_one_classifier_per_group(split):
    res = run_groups(epsilon=2.0, gamma=0.25, group_split=split)
    assert list(res.classifiers) == list(res.rankings) == ["a0", "rest"]
    each = 1.5 if split == "parallel" else 0.75
    for clf in res.classifiers.values():
        assert clf.epsilon == pytest.approx(each)
    assert res.synthesizer.epsilon == pytest.approx(0.5)
    # Parallel: the classifiers together cost one share; even: the sum of halves.
    assert res.budget.epsilon == pytest.approx(2.0, rel=1e-9)
    assert res.budget.epsilon <= 2.0 * (1 + 1e-9) and res.budget.delta <= DELTA
    for name, ranking in res.rankings.items():
        values = res.values[name]
        assert sorted(ranking) == sorted(values.index) == ["A", "B", "C"]
        assert list(values[list(ranking)]) == sorted(values, reverse=True)


def test_dpsage_groups_explains_each_group_on_its_own_synthetic_rows():
    import sage

    seen = []
    original_call = sage.PermutationEstimator.__call__

    def recording_call(self, X, Y=None, **kw):
        seen.append(np.array(X))
        return original_call(self, X, Y, **kw)

    with mock.patch.object(sage.PermutationEstimator, "__call__", recording_call):
        res = run_groups()
    features = list(res.classifiers["a0"].features_)
    a = features.index("A")
    assert len(seen) == 2
    assert set(np.unique(seen[0][:, a])) <= {0}
    assert set(np.unique(seen[1][:, a])) <= {1, 2}
    assert all(len(x) == FAST["n_samples"] for x in seen)


def test_dpsage_groups_is_deterministic_and_superquail_runs_it():
    from dpnotes.importance.superquail import SuperQUAIL

    first, second = run_groups(seed=3), run_groups(seed=3)
    assert first.rankings == second.rankings
    for name in GROUPS:
        pd.testing.assert_series_equal(first.values[name], second.values[name])
    # FSQ's first step is this function, on its alpha share of the budget.
    model = SuperQUAIL(
        epsilon=2.0,
        delta=DELTA,
        fairness="bal",
        sensitive="A",
        protected=0,
        groups=GROUPS,
        alpha=0.5,
        beta=1,
        n_samples=FAST["n_samples"],
        n_background=FAST["n_background"],
        max_permutations=FAST["max_permutations"],
        batch_size=FAST["batch_size"],
        mst_options=FAST["mst_options"],
    )
    with mock.patch(
        "dpnotes.importance.superquail.dpsage_groups", wraps=dpsage_groups
    ) as spy:
        model.fit(make_data(), DOMAIN, target="Y", rng=np.random.default_rng(0))
    assert spy.call_count == 1 and spy.call_args.kwargs["epsilon"] == 1.0
    assert set(model.rankings_) == set(GROUPS)
