"""Tests for SuperQUAIL, FSQ-Bal and FSQ-FNR (dpnotes.importance.superquail).

Bad input is refused before any fit; the budget spent never exceeds the budget for
every method and option; runs are deterministic under a seed; sampling replaces
exactly the beta selected features and the target; the threshold is a function of the
released histogram only (its noise scale and its sensitivity are checked, not only a
spy); the per-group classifiers compose in parallel over a covering public partition;
and an empirical audit of the threshold release passes for the package's mechanism and
catches thresholds tuned on exact counts.
"""

from __future__ import annotations

import math
import os
import time
from unittest import mock

import numpy as np
import pandas as pd
import pytest

from dpnotes.accounting import analytic_gaussian_sigma
from dpnotes.audit import assert_audit_passes, audit_epsilon, audit_fails
from dpnotes.importance import DPLogisticRegression
from dpnotes.importance import superquail as sq_module
from dpnotes.importance.superquail import (
    COLLAPSE_MIN_ROWS,
    CollapsedTargetWarning,
    NotFittedError,
    SuperQUAIL,
    paper_alpha,
    release_histogram,
    round_robin,
    score_histogram,
    threshold_objective,
    tune_threshold,
)
from dpnotes.synth.mst import MST

DOMAIN = {"A": 3, "B": 2, "C": 2, "S": 3, "Y": 2}
DELTA = 1e-6
#: Small, fast settings: tiny SAGE, a short MST estimate.
FAST = {
    "n_samples": 128,
    "n_background": 16,
    "max_permutations": 128,
    "batch_size": 64,
    "n_threshold": 512,
    "mst_options": {"iters": 30},
}
FAIR = {"sensitive": "S", "protected": 1}


def make_data(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """Y follows A closely, C weakly; B is noise; S has three groups (1 is small)."""
    r = np.random.default_rng(seed)
    a = r.integers(0, 3, n)
    s = r.choice(3, size=n, p=[0.6, 0.15, 0.25])
    y = np.where(r.random(n) < 0.85, (a == 0).astype(int), r.integers(0, 2, n))
    c = np.where(r.random(n) < 0.6, y, r.integers(0, 2, n))
    return pd.DataFrame({"A": a, "B": r.integers(0, 2, n), "C": c, "S": s, "Y": y})


DATA = make_data()


def fit(*, epsilon=math.e**2, seed=0, df=None, holdout=None, **kw):
    model = SuperQUAIL(epsilon=epsilon, delta=DELTA, **{**FAST, "beta": 2, **kw})
    return model.fit(
        DATA if df is None else df,
        DOMAIN,
        target="Y",
        rng=np.random.default_rng(seed),
        holdout=holdout,
    )


# --- bad input: refused before any work -------------------------------------------


@pytest.fixture
def no_fits():
    with (
        mock.patch.object(MST, "fit", side_effect=AssertionError("MST fitted")),
        mock.patch.object(
            DPLogisticRegression, "fit", side_effect=AssertionError("C fitted")
        ),
    ):
        yield


CTOR_BAD = [
    ({"alpha": 0.0}, ValueError, r"alpha must lie in \(0, 1\)"),
    ({"alpha": 1.0}, ValueError, r"alpha must lie in \(0, 1\)"),
    ({"gamma": 0.0}, ValueError, r"gamma must lie in \(0, 1\)"),
    ({"gamma": 1.5}, ValueError, r"gamma must lie in \(0, 1\)"),
    ({"beta": 0}, ValueError, "beta must be at least 1"),
    ({"beta": 1.5}, TypeError, "beta must be an integer"),
    ({"epsilon": 0.0}, ValueError, "epsilon must be a positive"),
    ({"delta": 0.0}, ValueError, "delta must lie strictly between 0 and 1"),
    ({"fairness": "equal"}, ValueError, "unknown fairness 'equal'"),
    ({"fairness": "fnr_cap", **FAIR}, ValueError, "needs fnr_target="),
    (
        {"fairness": "fnr", **FAIR, "fnr_target": 0.1},
        ValueError,
        "applies to the constrained threshold only",
    ),
    ({"fnr_target": 0.1}, ValueError, "applies to the constrained threshold only"),
    (
        {"fairness": "fnr_cap", **FAIR, "fnr_target": 1.5},
        ValueError,
        r"fnr_target must lie in \[0, 1\]",
    ),
    (
        {"fairness": "fnr_cap", **FAIR, "fnr_target": "low"},
        TypeError,
        "fnr_target must be a number",
    ),
    ({"labels": "real"}, ValueError, "unknown labels 'real'"),
    ({"fairness": "bal"}, TypeError, "needs sensitive="),
    ({"fairness": "bal", "sensitive": "S"}, TypeError, "needs protected="),
    ({"sensitive": "S"}, ValueError, "apply to the fair variants only"),
    ({"threshold_source": "test"}, ValueError, "unknown threshold_source"),
    ({"group_split": "split"}, ValueError, "unknown group_split"),
    ({"histogram_noise": "none"}, ValueError, "unknown histogram_noise"),
    ({"threshold_share": 1.0}, ValueError, r"threshold_share must lie in \(0, 1\)"),
    ({"bins": 1}, ValueError, "bins must be at least 2"),
    ({"n_background": 4096}, ValueError, "above 1024"),
    ({"mst_options": {"rounds": 2}}, ValueError, r"unknown option\(s\)"),
    ({"classifier_options": {"C": -1.0}}, ValueError, "C must be"),
]


@pytest.mark.parametrize(("change", "error", "match"), CTOR_BAD)
def test_the_constructor_refuses_bad_settings(change, error, match, no_fits):
    args = {"epsilon": 1.0, "delta": DELTA, **change}
    with pytest.raises(error, match=match):
        SuperQUAIL(**args)


FIT_BAD = [
    ({}, {"target": "Q"}, ValueError, "target 'Q' is not an attribute"),
    ({}, {"target": 3}, TypeError, "target must be a column name"),
    ({"fairness": "bal", "sensitive": "Z", "protected": 1}, {}, ValueError,
     "sensitive attribute 'Z' is not in the domain"),
    ({"fairness": "bal", "sensitive": "S", "protected": 3}, {}, ValueError,
     "protected=3 is not a code of 'S'"),
    ({"fairness": "bal", **FAIR, "groups": {"x": (0, 1, 2)}}, {}, ValueError,
     "at least two groups"),
    ({"fairness": "bal", **FAIR, "groups": {"a": (0,), "b": (1,)}}, {}, ValueError,
     "must partition the codes"),
    ({"fairness": "bal", **FAIR, "groups": {"a": (0, 1), "b": (1, 2)}}, {},
     ValueError, "must partition the codes"),
    ({"fairness": "bal", "sensitive": "Y", "protected": 1}, {}, ValueError,
     "cannot be the target"),
    ({"beta": 5}, {}, ValueError, "beta=5 is above the number of features"),
    ({}, {"df": DATA.assign(A=3)}, ValueError, "outside the declared domain"),
    ({}, {"df": DATA.iloc[:0]}, ValueError, "has no rows"),
    ({}, {"df": "rows"}, TypeError, "pandas DataFrame"),
    ({}, {"rng": 1}, TypeError, "numpy.random.Generator"),
    ({"fairness": "bal", **FAIR, "threshold_source": "holdout"}, {}, ValueError,
     "needs holdout="),
    ({"fairness": "bal", **FAIR}, {"holdout": DATA}, ValueError,
     "holdout is used only"),
    ({"fairness": "bal", **FAIR, "threshold_source": "holdout"},
     {"holdout": DATA.assign(B=7)}, ValueError, "holdout"),
]  # fmt: skip


@pytest.mark.parametrize(("ctor", "change", "error", "match"), FIT_BAD)
def test_fit_refuses_bad_input_before_any_fit(ctor, change, error, match, no_fits):
    model = SuperQUAIL(epsilon=1.0, delta=DELTA, **{**FAST, "beta": 2, **ctor})
    args = {"target": "Y", "rng": np.random.default_rng(0), **change}
    df = args.pop("df", DATA)
    with pytest.raises(error, match=match):
        model.fit(df, DOMAIN, **args)
    assert model.epsilon_spent == 0.0


def test_fsq_needs_a_binary_target(no_fits):
    domain = {**DOMAIN, "Y": 3}
    model = SuperQUAIL(epsilon=1.0, delta=DELTA, fairness="bal", **FAIR)
    with pytest.raises(ValueError, match="target must be binary"):
        model.fit(DATA, domain, target="Y", rng=np.random.default_rng(0))


def test_sample_refuses_bad_input():
    model = SuperQUAIL(epsilon=1.0, delta=DELTA)
    with pytest.raises(NotFittedError, match="not fitted"):
        model.sample(5, rng=np.random.default_rng(0))
    # Raised as the other synthesizers do (RuntimeError), and a ValueError.
    with pytest.raises(ValueError):
        model.sample(5, rng=np.random.default_rng(0))
    with pytest.raises(RuntimeError):
        model.sample(5, rng=np.random.default_rng(0))
    fitted = fit(beta=1)
    for n in (0, -3):
        with pytest.raises(ValueError, match="n must be at least 1"):
            fitted.sample(n, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="n must be an integer"):
        fitted.sample(2.5, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match=r"numpy\.random\.Generator"):
        fitted.sample(2, rng=0)


# --- the budget ---------------------------------------------------------------------

OPTIONS = [
    pytest.param(
        {"fairness": f, **FAIR, "threshold_source": s, "group_split": g,
         "histogram_noise": h},
        id=f"{f}-{s}-{g}-{h}",
    )
    for f in ("bal", "fnr")
    for s in ("histogram", "synthetic", "holdout")
    for g in ("parallel", "even")
    for h in (("laplace", "gaussian") if s == "histogram" else ("laplace",))
]  # fmt: skip


@pytest.mark.parametrize("epsilon", [1.0, math.e**2, math.e**4])
@pytest.mark.parametrize("options", [pytest.param({}, id="SQ"), *OPTIONS])
def test_the_budget_spent_never_exceeds_the_budget(options, epsilon):
    holdout = (
        make_data(200, seed=9) if options.get("threshold_source") == "holdout" else None
    )
    model = fit(epsilon=epsilon, holdout=holdout, **options)
    assert model.epsilon_spent <= epsilon
    assert model.delta_spent <= DELTA
    assert model.epsilon_spent == pytest.approx(epsilon, rel=1e-9)
    # Every release is a ledger line; the lines compose to the total.
    eps = math.fsum(b.epsilon for _, b in model.ledger_)
    assert eps == model.epsilon_spent
    # The ledger matches what the parts spent.
    (_, mst), (_, targets), *rest = model.ledger_
    assert model.synthesizer_.rho_spent <= model.synthesizer_.rho * (1 + 1e-9)
    assert mst.epsilon <= model.alpha * model.gamma * epsilon * (1 + 1e-12)
    per_group = [c.epsilon_spent for c in model.target_classifiers_.values()]
    expected_targets = (
        math.fsum(per_group) if options.get("group_split") == "even" else max(per_group)
    )
    assert targets.epsilon == expected_targets
    features = [b for w, b in rest if w.startswith("feature classifier")]
    assert len(features) == model.beta
    for f, clf in model.classifiers_.items():
        assert clf.epsilon_spent == features[0].epsilon
        assert f in model.selected_
    hist = [b for w, b in rest if w.startswith("threshold histogram")]
    private = options.get("threshold_source") == "histogram"
    assert len(hist) == (1 if private else 0)
    if private:
        # Taken from the classifiers' share, not added on top.
        share = model.threshold_share * (1 - model.alpha) * epsilon
        assert hist[0].epsilon == pytest.approx(share)
        assert features[0].epsilon == pytest.approx(
            ((1 - model.alpha) * epsilon - share) / model.beta
        )
        gaussian = options["histogram_noise"] == "gaussian"
        assert hist[0].delta == (DELTA / 2 if gaussian else 0.0)
        assert mst.delta == (DELTA / 2 if gaussian else DELTA)
    else:
        assert features[0].epsilon == pytest.approx(
            (1 - model.alpha) * epsilon / model.beta
        )


def test_the_paper_splits_are_the_defaults():
    assert paper_alpha(1.0) == 0.7 and paper_alpha(math.e**2) == 0.7
    assert paper_alpha(math.e**3) == 0.5 and paper_alpha(math.e**4) == 0.5
    model = SuperQUAIL(epsilon=math.e**3, delta=DELTA)
    assert (model.alpha, model.gamma, model.beta) == (0.5, 0.5, 3)


# --- determinism and the result -----------------------------------------------------


@pytest.mark.parametrize(
    "options", [pytest.param({}, id="SQ"), pytest.param({"fairness": "bal", **FAIR})]
)
def test_seeded_fits_and_samples_are_deterministic(options):
    a, b = fit(seed=5, **options), fit(seed=5, **options)
    assert a.selected_ == b.selected_ and a.rankings_ == b.rankings_
    assert a.threshold_ == b.threshold_
    if options:
        np.testing.assert_array_equal(a.histogram_, b.histogram_)
    sa = a.sample(300, rng=np.random.default_rng(1))
    pd.testing.assert_frame_equal(sa, b.sample(300, rng=np.random.default_rng(1)))
    assert not sa.equals(a.sample(300, rng=np.random.default_rng(2)))
    c = fit(seed=6, **options)
    assert not np.allclose(
        a.target_classifiers_[next(iter(a.target_classifiers_))].coef_,
        c.target_classifiers_[next(iter(c.target_classifiers_))].coef_,
    )
    assert list(sa.columns) == list(DOMAIN)
    for col, size in DOMAIN.items():
        assert sa[col].between(0, size - 1).all()


def test_superquail_selects_the_top_beta_of_the_dpsage_ranking():
    model = fit(epsilon=50.0, beta=2)
    assert model.selected_ == model.rankings_["all"][:2]
    assert "Y" not in model.selected_
    # The planted strong feature is found at a generous budget.
    assert model.rankings_["all"][0] == "A"


class _Fake:
    """A classifier that predicts one code and records the rows it was asked about."""

    def __init__(self, column, code, calls):
        self.column, self.code, self.calls = column, code, calls

    def predict(self, rows):
        self.calls.extend((i, self.column) for i in rows.index)
        return np.full(len(rows), self.code)


def test_sampling_replaces_exactly_the_beta_features_and_the_target():
    model = fit(beta=2)
    base = make_data(400, seed=3)
    calls = []
    model.classifiers_ = {f: _Fake(f, 1, calls) for f in model.selected_}
    model.target_classifiers_ = {"all": _Fake("Y", 1, calls)}
    # The rows of S are fixed, and chosen so that no replaced column already holds 1.
    rows = base.assign(**{c: 0 for c in (*model.selected_, "Y")})
    with (
        mock.patch.object(
            type(model.synthesizer_), "sample", lambda self, n, *, rng: rows.copy()
        ),
        pytest.warns(CollapsedTargetWarning, match="collapsed to one class"),
    ):
        out = model.sample(len(rows), rng=np.random.default_rng(0))
    replaced = [*model.selected_, "Y"]
    kept = [c for c in DOMAIN if c not in replaced]
    pd.testing.assert_frame_equal(out[kept], rows[kept])
    assert (out[replaced] == 1).all().all()
    # Each row was visited once by each of the beta + 1 classifiers, in random orders.
    order = {}
    for i, column in calls:
        order.setdefault(i, []).append(column)
    assert len(order) == len(rows)
    assert all(sorted(o) == sorted(replaced) for o in order.values())
    assert len({tuple(o) for o in order.values()}) == math.factorial(len(replaced))


def test_fsq_samples_the_target_with_its_threshold():
    model = fit(fairness="fnr", **FAIR)
    model.threshold_ = 0.0
    with pytest.warns(CollapsedTargetWarning, match="fnr_cap"):
        assert (model.sample(200, rng=np.random.default_rng(0))["Y"] == 1).all()
    model.threshold_ = 1.0 + 1e-9
    with pytest.warns(CollapsedTargetWarning, match="Y = 0"):
        assert (model.sample(200, rng=np.random.default_rng(0))["Y"] == 0).all()


# --- the threshold: a function of the histogram only --------------------------------


def test_the_threshold_is_tuned_on_the_released_histogram():
    model = fit(fairness="bal", **FAIR)
    assert dict(model.thresholds_) == model.thresholds_of(model.histogram_)
    assert model.threshold_ == model.thresholds_["bal"]
    assert model.threshold_ == tune_threshold(
        model.histogram_, objective="bal", protected=1
    )
    # Whatever the data, a fixed released histogram gives the same thresholds.
    fixed = np.zeros((3, 2, model.bins))
    fixed[:, 0, :4] = 10.0
    fixed[:, 1, 15:] = 10.0
    got = []
    for seed in (0, 1):
        with mock.patch.object(
            sq_module, "release_histogram", return_value=(fixed, 1.0)
        ):
            m = fit(fairness="bal", **FAIR, df=make_data(seed=seed))
        got.append(dict(m.thresholds_))
    assert got[0] == got[1] == model.thresholds_of(fixed)


def test_the_histograms_noise_has_the_stated_scale():
    model = fit(fairness="fnr", **FAIR, threshold_share=0.5)
    eps_t = model.shares(3)["histogram"]
    assert model.histogram_scale_ == pytest.approx(1.0 / eps_t)
    exact = model.histogram_of(DATA)
    assert exact.sum() == len(DATA)
    noise = model.histogram_ - exact
    assert np.all(noise != 0.0)
    # The mean absolute Laplace noise is its scale: 120 cells, a wide tolerance.
    assert 0.6 < np.abs(noise).mean() * eps_t < 1.5
    # Many releases of one histogram: the noise's standard deviation is sqrt(2) / eps.
    rng = np.random.default_rng(0)
    draws = np.stack(
        [release_histogram(exact, epsilon=0.7, rng=rng)[0] for _ in range(400)]
    )
    sd = (draws - exact).std()
    assert sd == pytest.approx(math.sqrt(2) / 0.7, rel=0.03)
    draws, sigma = release_histogram(
        np.zeros((200, 200)), epsilon=0.7, delta=1e-6, noise="gaussian", rng=rng
    )
    assert sigma == pytest.approx(
        analytic_gaussian_sigma(epsilon=0.7, delta=1e-6, sensitivity=1.0)
    )
    assert draws.std() == pytest.approx(sigma, rel=0.03)
    with pytest.raises(ValueError, match="needs a delta"):
        release_histogram(exact, epsilon=1.0, noise="gaussian", rng=rng)


def test_one_training_record_changes_the_histogram_by_at_most_one():
    model = fit(fairness="bal", **FAIR)
    exact = model.histogram_of(DATA)
    for i in (0, 17, 311, len(DATA) - 1):
        removed = model.histogram_of(DATA.drop(index=i))
        assert np.abs(exact - removed).sum() == 1.0
        assert np.abs(exact - removed).max() == 1.0
        added = model.histogram_of(pd.concat([DATA, DATA.iloc[[i]]]))
        assert np.abs(added - exact).sum() == 1.0
        # Replacing a record (a removal and an addition) moves two counts at most.
        changed = DATA.copy()
        changed.loc[i, "Y"] = 1 - changed.loc[i, "Y"]
        assert np.abs(model.histogram_of(changed) - exact).sum() <= 2.0


def test_score_histogram_counts_each_record_in_one_cell():
    g = np.array([0, 0, 1, 1, 1])
    y = np.array([0, 1, 1, 1, 0])
    s = np.array([0.0, 0.49, 0.5, 1.0, 0.99])
    h = score_histogram(g, y, s, groups=2, bins=2)
    assert h.shape == (2, 2, 2) and h.sum() == 5
    assert h[0, 0, 0] == 1 and h[0, 1, 0] == 1 and h[1, 1, 1] == 2 and h[1, 0, 1] == 1
    with pytest.raises(ValueError, match="one length"):
        score_histogram(g, y[:2], s, groups=2, bins=2)
    with pytest.raises(ValueError, match="0 or 1"):
        score_histogram(g, y + 1, s, groups=2, bins=2)
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        score_histogram(g, y, s + 1, groups=2, bins=2)
    with pytest.raises(ValueError, match="group indices"):
        score_histogram(g + 1, y, s, groups=2, bins=2)


def test_the_objectives_on_a_known_histogram():
    # Group 0: negatives in bins 0-1, positives in bins 2-3. Group 1 (protected):
    # negatives in bin 0, its positives spread over bins 1-3.
    h = np.zeros((2, 2, 4))
    h[0, 0, :2] = 50
    h[0, 1, 2:] = 50
    h[1, 0, 0] = 20
    h[1, 1, 1:] = 10
    edges, acc_only = threshold_objective(h, objective="fnr", protected=1, weight=0)
    np.testing.assert_allclose(edges, [0, 0.25, 0.5, 0.75, 1.0])
    # Correct predictions at each edge, counted by hand (250 records).
    np.testing.assert_allclose(acc_only, np.array([130, 200, 240, 180, 120]) / 250)
    _, fnr = threshold_objective(h, objective="fnr", protected=1, weight=1.0)
    np.testing.assert_allclose(fnr, acc_only - np.array([0, 0, 10, 20, 30]) / 30)
    # FNR puts the threshold where the protected group misses nobody: 0.25.
    assert tune_threshold(h, objective="fnr", protected=1, weight=1.0) == 0.25
    # Bal: equal FNR (both 0) at 0.25 as well; a heavy weight keeps it there.
    assert tune_threshold(h, objective="bal", protected=1, weight=10.0) == 0.25
    # Pure accuracy prefers 0.5.
    assert tune_threshold(h, objective="bal", protected=1, weight=0.0) == 0.5
    with pytest.raises(ValueError, match="shape"):
        threshold_objective(h[0], objective="bal", protected=1)
    with pytest.raises(ValueError, match="unknown objective"):
        threshold_objective(h, objective="acc", protected=1)
    with pytest.raises(ValueError, match="group index"):
        threshold_objective(h, objective="bal", protected=2)


def test_round_robin_takes_turns_with_the_protected_group_last():
    ranks = {
        "white": ["A", "B", "C", "D"],
        "other": ["A", "C", "B", "D"],
        "black": ["D", "A", "B", "C"],
    }
    assert round_robin(ranks, 3, protected="black") == ("A", "C", "D")
    # A partial last round: the protected group goes first in it.
    assert round_robin(ranks, 4, protected="black") == ("A", "C", "D", "B")
    assert round_robin(ranks, 1, protected="black") == ("D",)
    with pytest.raises(ValueError, match="not one of the groups"):
        round_robin(ranks, 2, protected="asian")
    with pytest.raises(ValueError, match="fewer than beta"):
        round_robin(ranks, 5, protected="black")


def test_fsq_selects_round_robin_from_its_per_group_rankings():
    model = fit(fairness="bal", **FAIR, beta=3)
    assert set(model.rankings_) == {"protected", "other"}
    assert model.selected_ == round_robin(
        {"other": model.rankings_["other"], "protected": model.rankings_["protected"]},
        3,
        protected="protected",
    )


# --- parallel composition over a public partition -----------------------------------

GROUPS = {"white": (0,), "black": (1,), "other": (2,)}


@pytest.mark.parametrize("split", ["parallel", "even"])
def test_the_group_classifiers_compose_over_a_covering_partition(split):
    seen = []
    original = DPLogisticRegression.fit

    def recording(self, df, domain, *, target, rng, features=None, **kw):
        if target == "Y":
            seen.append((self.epsilon, sorted(set(df["S"])), len(df)))
        return original(
            self, df, domain, target=target, rng=rng, features=features, **kw
        )

    with mock.patch.object(DPLogisticRegression, "fit", recording):
        model = fit(fairness="bal", **FAIR, groups=GROUPS, group_split=split)
    # One classifier per group, each on that group's records only, and together on
    # every record exactly once.
    assert [codes for _, codes, _ in seen] == [[0], [1], [2]]
    assert sum(n for _, _, n in seen) == len(DATA)
    share = model.alpha * (1 - model.gamma) * model.epsilon
    each = share if split == "parallel" else share / 3
    assert [e for e, _, _ in seen] == pytest.approx([each] * 3)
    (_, targets) = model.ledger_[1]
    # Parallel: the largest of the three counts; even: their sum. Both are the share.
    assert targets.epsilon == pytest.approx(share)
    assert model.epsilon_spent <= model.epsilon
    assert model._protected_name == "black"


def test_parallel_composition_gives_each_group_more_budget_than_the_even_split():
    par = fit(fairness="fnr", **FAIR, groups=GROUPS)
    even = fit(fairness="fnr", **FAIR, groups=GROUPS, group_split="even")
    for g in GROUPS:
        assert par.target_classifiers_[g].epsilon_spent == pytest.approx(
            3 * even.target_classifiers_[g].epsilon_spent
        )
    assert par.epsilon_spent == pytest.approx(even.epsilon_spent)


# --- an empirical privacy audit of the threshold release ----------------------------


def _threshold_records(extra: bool) -> pd.DataFrame:
    """Neighbouring record sets (group, label, score) whose exact threshold moves."""
    rows = [(0, 0, 0.1)] * 6 + [(0, 1, 0.9)] * 6 + [(1, 0, 0.1)] * 2
    rows += [(1, 0, 0.3)] * 2 + [(1, 1, 0.6)] * 2
    if extra:  # a protected positive with a low score: FNR wants a lower threshold
        rows.append((1, 1, 0.3))
    return pd.DataFrame(rows, columns=["g", "y", "s"])


def _exact(records: pd.DataFrame) -> np.ndarray:
    return score_histogram(
        records["g"].to_numpy(),
        records["y"].to_numpy(),
        records["s"].to_numpy(),
        groups=2,
        bins=4,
    )


EPS_T = 1.0


def _release(records, trials, rng):
    """The package's threshold release: noisy histogram, then tune (post-processing)."""
    counts = _exact(records)
    return np.array(
        [
            tune_threshold(
                release_histogram(counts, epsilon=EPS_T, rng=rng)[0],
                objective="fnr",
                protected=1,
            )
            for _ in range(trials)
        ]
    )


def _broken_release(records, trials, rng):
    """A planted bug: the threshold tuned on the exact counts (no noise)."""
    p = tune_threshold(_exact(records), objective="fnr", protected=1)
    return np.full(trials, p)


def test_the_threshold_release_passes_an_audit_that_catches_exact_counts():
    d0, d1 = _threshold_records(False), _threshold_records(True)
    # The neighbours differ by one record, and the exact thresholds differ.
    assert np.abs(_exact(d1) - _exact(d0)).sum() == 1
    assert _broken_release(d0, 1, None)[0] != _broken_release(d1, 1, None)[0]
    good = audit_epsilon(_release, d0, d1, trials=3000, rng=np.random.default_rng(0))
    assert_audit_passes(good, EPS_T)
    broken = audit_epsilon(
        _broken_release, d0, d1, trials=3000, rng=np.random.default_rng(0)
    )
    assert audit_fails(broken, EPS_T), broken.summary()


@pytest.mark.slow
def test_the_fitted_models_threshold_release_passes_the_audit():
    # The fit's own path: the model's histogram of records (its fixed classifiers),
    # released at the model's epsilon_T, thresholds by the model.
    model = fit(fairness="fnr", **FAIR, threshold_share=0.5)
    eps_t = model.shares(2)["histogram"]
    d0 = DATA.iloc[:60].reset_index(drop=True)
    d1 = DATA.iloc[:61].reset_index(drop=True)

    def release(rows, trials, rng):
        counts = model.histogram_of(rows)
        return np.array(
            [
                model.thresholds_of(
                    release_histogram(counts, epsilon=eps_t, rng=rng)[0]
                )["fnr"]
                for _ in range(trials)
            ]
        )

    result = audit_epsilon(release, d0, d1, trials=4000, rng=np.random.default_rng(1))
    assert_audit_passes(result, eps_t)


# --- end to end on real data --------------------------------------------------------

REAL_DATA_DIR = os.environ.get("DPNOTES_DATA_DIR", "").strip()


@pytest.mark.slow
@pytest.mark.data
@pytest.mark.skipif(not REAL_DATA_DIR, reason="set DPNOTES_DATA_DIR (real data)")
def test_superquail_and_fsq_end_to_end_on_new_mexico_public_coverage():
    from dpnotes.data.spending import load_spending_task

    task = load_spending_task("ACSPublicCoverage", "NM", holdout_share=0.1, rows=3000)
    groups = dict(task.groups)
    settings = {
        "n_samples": 512,
        "n_background": 32,
        "max_permutations": 1024,
        "batch_size": 256,
        "mst_options": {"iters": 300},
    }
    for fairness in (None, "bal"):
        fair = (
            {}
            if fairness is None
            else {
                "fairness": fairness,
                "sensitive": task.sensitive,
                "protected": groups["black"][0],
                "groups": groups,
                "privileged": "white",
            }
        )
        started = time.perf_counter()
        model = SuperQUAIL(epsilon=math.e**2, delta=1e-9, **settings, **fair).fit(
            task.train, task.domain, target=task.target, rng=np.random.default_rng(0)
        )
        seconds = time.perf_counter() - started
        out = model.sample(1000, rng=np.random.default_rng(1))
        assert list(out.columns) == list(task.domain)
        assert model.epsilon_spent <= math.e**2 and model.delta_spent <= 1e-9
        # A cold MST compiles for 1-2 minutes on this 2-core machine (see the bench).
        assert seconds < 300, seconds
        if fairness:
            assert set(model.target_classifiers_) == set(groups)
            assert 0.0 <= model.threshold_ <= 1.0


# --- groups without records, the constrained threshold, labels, collapse -------------


@pytest.mark.parametrize(
    ("ctor", "df"),
    [
        pytest.param(
            {"groups": {"w": (0,), "b": (1,), "o": (2,)}},
            DATA.assign(S=DATA.S.clip(0, 1)),
            id="one-group-empty",
        ),
        pytest.param({}, DATA.assign(S=0), id="every-record-in-one-group"),
    ],
)
def test_fsq_fits_when_a_group_has_no_training_records(ctor, df):
    # Refusing would be an outcome that reveals which groups have records; the empty
    # group's classifier is fitted on the anchors alone, and the budget is unchanged.
    full = fit(fairness="bal", **FAIR, **ctor)
    model = fit(fairness="bal", **FAIR, **ctor, df=df)
    assert list(model.target_classifiers_) == list(full.target_classifiers_)
    assert model.epsilon_spent == full.epsilon_spent
    assert [b for _, b in model.ledger_] == [b for _, b in full.ledger_]
    assert model.histogram_.shape == full.histogram_.shape
    out = model.sample(50, rng=np.random.default_rng(0))
    assert list(out.columns) == list(DOMAIN)


def test_constrained_threshold_maximises_accuracy_under_the_cap():
    # Group 0: 50 negatives in bin 0, 50 positives in bin 3. Protected group 1: 2
    # positives in bin 1, 2 in bin 3, 6 negatives in bin 1.
    h = np.zeros((2, 2, 4))
    h[0, 0, 0], h[0, 1, 3] = 50, 50
    h[1, 1, 1], h[1, 1, 3], h[1, 0, 1] = 2, 2, 6
    edges, values = threshold_objective(
        h, objective="fnr_cap", protected=1, fnr_target=0.5
    )
    # Edges 0, .25, .5, .75, 1: protected FNR 0, 0, .5, .5, 1; accuracy
    # 54/110, 104/110, 108/110, 108/110, 56/110.
    np.testing.assert_allclose(edges, [0.0, 0.25, 0.5, 0.75, 1.0])
    np.testing.assert_allclose(
        values, [54 / 110, 104 / 110, 108 / 110, 108 / 110, -np.inf]
    )
    assert tune_threshold(h, objective="fnr_cap", protected=1, fnr_target=0.5) == 0.5
    assert tune_threshold(h, objective="fnr_cap", protected=1, fnr_target=0.0) == 0.25
    # The penalty objective at weight 1 prefers the same edge here, ...
    assert tune_threshold(h, objective="fnr", protected=1) == 0.25
    # ... but it gives up accuracy for FNR when majority negatives share the bin of
    # the protected positives: one protected positive is 1/4 of FNR, one record 1/140
    # of accuracy. Edge .25: accuracy 104/140, FNR 0; edge .5: 138/140, FNR .5.
    h[0, 0, 1] = 30
    assert tune_threshold(h, objective="fnr", protected=1) == 0.25
    assert tune_threshold(h, objective="fnr_cap", protected=1, fnr_target=0.5) == 0.5
    # A cap of 0 can always be met: everyone positive (edge 0) has FNR 0.
    h2 = np.zeros((2, 2, 4))
    h2[:, 1, 0], h2[:, 0, 3] = 5, 5
    assert tune_threshold(h2, objective="fnr_cap", protected=1, fnr_target=0.0) == 0.0


@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        ({"objective": "fnr_cap"}, ValueError, "needs fnr_target="),
        ({"objective": "fnr", "fnr_target": 0.1}, ValueError, "constrained threshold"),
        ({"objective": "fnr_cap", "fnr_target": -0.1}, ValueError, r"in \[0, 1\]"),
        ({"objective": "fnr_cap", "fnr_target": True}, TypeError, "a number"),
    ],
)
def test_constrained_threshold_refuses_bad_caps(kw, error, match):
    with pytest.raises(error, match=match):
        threshold_objective(np.ones((2, 2, 4)), protected=1, **kw)


def test_fsq_with_the_constrained_threshold_samples_with_it():
    model = fit(fairness="fnr_cap", fnr_target=0.2, **FAIR)
    plain = fit(fairness="fnr", **FAIR)
    assert set(model.thresholds_) == {"bal", "fnr", "fnr_cap"}
    assert set(plain.thresholds_) == {"bal", "fnr"}
    assert model.threshold_ == model.thresholds_["fnr_cap"]
    # Same seed, same releases: the threshold is post-processing of one histogram.
    np.testing.assert_array_equal(model.histogram_, plain.histogram_)
    assert model.thresholds_["fnr"] == plain.threshold_
    assert model.epsilon_spent == plain.epsilon_spent
    assert "FSQ-FNR<=0.2" in repr(model)


@pytest.mark.parametrize("fair", [{}, {"fairness": "bal", **FAIR}], ids=["SQ", "FSQ"])
def test_labels_model_reaches_dpsage(fair):
    synthetic = fit(seed=3, **fair)
    model = fit(seed=3, labels="model", **fair)
    assert model.labels == "model"
    # The fits are the same; only SAGE's labels differ, so the values differ.
    for g, clf in synthetic.target_classifiers_.items():
        np.testing.assert_array_equal(clf.coef_, model.target_classifiers_[g].coef_)
    assert any(
        not np.allclose(synthetic.values_[g], model.values_[g])
        for g in synthetic.values_
    )


def test_no_collapse_warning_for_few_rows_or_two_classes(recwarn):
    model = fit(beta=1)
    out = model.sample(400, rng=np.random.default_rng(0))
    assert out["Y"].nunique() == 2
    model.target_classifiers_ = {"all": _Fake("Y", 1, [])}
    few = model.sample(COLLAPSE_MIN_ROWS - 1, rng=np.random.default_rng(0))
    assert (few["Y"] == 1).all()
    assert not [w for w in recwarn if w.category is CollapsedTargetWarning]


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_release_histogram_refuses_counts_that_are_not_finite(bad):
    counts = np.ones((2, 2, 3))
    counts[0, 1, 2] = bad
    with pytest.raises(ValueError, match="counts must be finite"):
        release_histogram(counts, epsilon=1.0, rng=np.random.default_rng(0))
