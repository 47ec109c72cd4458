"""Tests for the authors' evaluation pipeline of dpnotes.importance.evaluation.

The upsampling (equal counts; the majority kept; the authors' bootstrap of the
minority and the keep-and-top-up variant; their tie rule), the selection (the winner
is the first best of the candidates' F1 computed here from each candidate's own
run), the subset of groups, the training fraction, seeded determinism, the
candidates' settings, and every refusal before any fit. Tiny data and tiny
estimators: the whole file runs in a few seconds.
"""

from __future__ import annotations

import math
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score

from dpnotes.importance import evaluation as ev
from dpnotes.importance.evaluation import (
    AUTHORS_CLASSIFIERS,
    CLASSIFIERS,
    QUICK_OPTIONS,
    authors_evaluation,
    make_classifier,
    upsample_minority,
)

#: Small estimators so that a fit takes milliseconds.
TINY = {
    "gradient_boosting": {"max_iter": 5},
    "mlp": {"max_iter": 5, "hidden_layer_sizes": (4,)},
    "random_forest": {"n_estimators": 3},
}
GROUP_NAMES = np.array(["white", "black", "other"])
DOMAIN = {"A": 4, "B": 2, "Y": 2}


def make_data(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Codes A (0..3), B (0..1), a noisy imbalanced label Y, and a group per row."""
    r = np.random.default_rng(seed)
    a, b = r.integers(0, 4, n), r.integers(0, 2, n)
    signal = (a >= 1) | (b == 1)
    y = np.where(r.random(n) < 0.75, signal, r.random(n) < 0.5).astype(int)
    groups = GROUP_NAMES[r.choice(3, size=n, p=[0.6, 0.25, 0.15])]
    return pd.DataFrame({"A": a, "B": b, "Y": y}), groups


TRAIN, TRAIN_G = make_data(160, 1)
TEST, TEST_G = make_data(80, 2)


def run(rng_seed: int = 0, **kw):
    args = {
        "target": "Y",
        "features": ["A", "B"],
        "rng": np.random.default_rng(rng_seed),
        "train_groups": TRAIN_G,
        "test_groups": TEST_G,
        "classifier_options": TINY,
    }
    args.update(kw)
    return authors_evaluation(args.pop("train", TRAIN), args.pop("test", TEST), **args)


# --- upsampling -----------------------------------------------------------------


def test_upsampling_balances_and_keeps_the_majority_rows():
    rows = pd.DataFrame({"x": np.arange(10), "y": [1] * 7 + [0] * 3})
    up = upsample_minority(rows, "y", rng=np.random.default_rng(0))
    assert up["y"].value_counts().to_dict() == {1: 7, 0: 7}
    # The majority's rows come first, each once, unchanged; the minority's draws
    # are rows of the minority.
    assert up.index[:7].tolist() == list(range(7))
    assert set(up.index[7:]) <= {7, 8, 9}
    pd.testing.assert_frame_equal(up, rows.loc[up.index])


def test_authors_bootstrap_may_drop_minority_rows_and_topup_keeps_all():
    rows = pd.DataFrame({"x": np.arange(40), "y": [0] * 30 + [1] * 10})
    seen_all = []
    for seed in range(20):
        boot = upsample_minority(rows, "y", rng=np.random.default_rng(seed))
        seen_all.append(set(range(30, 40)) <= set(boot.index))
        kept = upsample_minority(
            rows, "y", rng=np.random.default_rng(seed), bootstrap_minority=False
        )
        assert set(kept.index) == set(range(40))
        assert kept["y"].value_counts().to_dict() == {0: 30, 1: 30}
        assert len(boot) == 60 and boot["y"].sum() == 30
    # 30 draws from 10 rows miss one with probability about 0.4 each time.
    assert not all(seen_all)


def test_a_tie_bootstraps_label_1_as_the_authors_rule():
    rows = pd.DataFrame({"x": np.arange(8), "y": [0, 1] * 4})
    up = upsample_minority(rows, "y", rng=np.random.default_rng(3))
    assert up.index[:4].tolist() == [0, 2, 4, 6]
    assert up["y"].tolist() == [0] * 4 + [1] * 4


def test_upsampling_is_deterministic_given_the_seed():
    a = upsample_minority(TRAIN, "Y", rng=np.random.default_rng(5))
    b = upsample_minority(TRAIN, "Y", rng=np.random.default_rng(5))
    c = upsample_minority(TRAIN, "Y", rng=np.random.default_rng(6))
    assert a.index.tolist() == b.index.tolist()
    assert a.index.tolist() != c.index.tolist()


@pytest.mark.parametrize(
    ("rows", "target", "error", "match"),
    [
        (pd.DataFrame({"y": []}), "y", ValueError, "no rows"),
        (pd.DataFrame({"y": [1, 1]}), "z", ValueError, "missing column"),
        (pd.DataFrame({"y": [1, 1, 1]}), "y", ValueError, "only the label"),
        (pd.DataFrame({"y": [0, 1, 2]}), "y", ValueError, "labels 0 and 1"),
        (pd.DataFrame({"y": ["a", "b"]}), "y", ValueError, "labels 0 and 1"),
        ([[0, 1]], "y", TypeError, "DataFrame"),
        (pd.DataFrame({"y": [0, 1]}), 0, TypeError, "string"),
    ],
)
def test_upsampling_refuses_bad_input(rows, target, error, match):
    with pytest.raises(error, match=match):
        upsample_minority(rows, target, rng=np.random.default_rng(0))


def test_upsampling_refuses_a_non_generator():
    with pytest.raises(TypeError, match="Generator"):
        upsample_minority(TRAIN, "Y", rng=0)


# --- the candidates -------------------------------------------------------------


def test_candidates_carry_the_authors_settings_and_a_drawn_seed():
    gb = make_classifier("gradient_boosting", rng=np.random.default_rng(0))
    p = gb.get_params()
    assert (p["max_iter"], p["learning_rate"], p["max_depth"]) == (500, 0.01, 14)
    assert p["early_stopping"] is False and p["l2_regularization"] == 1.0
    assert make_classifier("mlp", rng=np.random.default_rng(0)).max_iter == 1000
    assert (
        make_classifier("random_forest", rng=np.random.default_rng(0)).n_estimators
        == 100
    )
    seeds = [
        make_classifier("mlp", rng=np.random.default_rng(s)).random_state
        for s in (0, 0, 1)
    ]
    assert seeds[0] == seeds[1] != seeds[2]
    assert tuple(AUTHORS_CLASSIFIERS) == CLASSIFIERS
    quick = make_classifier(
        "mlp", rng=np.random.default_rng(0), options=QUICK_OPTIONS["mlp"]
    )
    assert quick.early_stopping is True


def test_make_classifier_refuses_unknown_names_and_options():
    with pytest.raises(ValueError, match="unknown classifier"):
        make_classifier("xgboost", rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="unknown option"):
        make_classifier("mlp", rng=np.random.default_rng(0), options={"depth": 3})
    with pytest.raises(ValueError, match="random_state is drawn"):
        make_classifier(
            "mlp", rng=np.random.default_rng(0), options={"random_state": 1}
        )
    with pytest.raises(TypeError, match="mapping"):
        make_classifier("mlp", rng=np.random.default_rng(0), options=[("max_iter", 3)])


# --- selection, subset, fraction, determinism ----------------------------------


def test_the_winner_is_the_first_best_of_each_candidates_own_f1():
    opts = {"upsample": False, "subset": None}
    best = run(**opts)
    f1 = {}
    for name in CLASSIFIERS:
        alone = run(selection=name, **opts)
        # A candidate gets the same stream alone as among the three.
        assert alone.chosen == name and list(alone.test_f1) == [name]
        f1[name] = f1_score(alone.labels, alone.predictions, zero_division=0)
        assert best.test_f1[name] == pytest.approx(f1[name])
    assert len(set(f1.values())) > 1, "the data should separate the candidates"
    top = max(f1.values())
    assert best.chosen == next(n for n in CLASSIFIERS if f1[n] == top)
    winner = run(selection=best.chosen, **opts)
    np.testing.assert_array_equal(best.predictions, winner.predictions)


def test_a_tie_goes_to_the_earlier_candidate():
    fixed = np.ones(len(TEST), dtype=np.int64)
    tied = ({n: fixed for n in CLASSIFIERS}, {n: 0.5 for n in CLASSIFIERS})
    with mock.patch.object(ev, "_fit_candidates", return_value=tied):
        assert run(subset=None).chosen == CLASSIFIERS[0]
    scores = {"gradient_boosting": 0.0, "mlp": 0.0, "random_forest": 0.0}
    with mock.patch.object(ev, "_fit_candidates", return_value=(tied[0], scores)):
        assert run(subset=None).chosen == CLASSIFIERS[0]


def test_subset_keeps_only_the_named_groups():
    out = run(subset=("white", "black"), upsample=False, train_fraction=1.0)
    expected = np.flatnonzero(np.isin(TEST_G, ["white", "black"]))
    np.testing.assert_array_equal(out.test_rows, expected)
    assert set(out.groups) == {"white", "black"}
    np.testing.assert_array_equal(out.labels, TEST["Y"].to_numpy()[expected])
    assert out.n_train == np.isin(TRAIN_G, ["white", "black"]).sum()
    everyone = run(subset=None, upsample=False, train_fraction=1.0)
    assert len(everyone.test_rows) == len(TEST) and everyone.n_train == len(TRAIN)
    np.testing.assert_array_equal(everyone.groups, TEST_G)


def test_upsampling_and_fraction_set_the_training_size():
    counts = np.bincount(TRAIN["Y"])
    up = run(subset=None, train_fraction=1.0)
    assert up.n_train == 2 * counts.max()
    part = run(subset=None, train_fraction=0.8)
    assert part.n_train == math.floor(0.8 * 2 * counts.max())
    assert run(subset=None, upsample=False).n_train == math.floor(0.8 * len(TRAIN))


def test_seeded_runs_repeat_and_other_seeds_differ():
    a, b = run(3), run(3)
    np.testing.assert_array_equal(a.predictions, b.predictions)
    assert (a.chosen, a.n_train, dict(a.test_f1)) == (
        b.chosen,
        b.n_train,
        dict(b.test_f1),
    )
    others = [run(s) for s in (4, 5, 6)]
    assert any(
        o.n_train != a.n_train or not np.array_equal(o.predictions, a.predictions)
        for o in others
    )


def test_onehot_encoding_runs_and_needs_the_domain():
    out = run(encoding="onehot", domain=DOMAIN, subset=None)
    assert out.encoding == "onehot" and len(out.predictions) == len(TEST)
    with pytest.raises(ValueError, match="needs the public domain"):
        run(encoding="onehot")
    with pytest.raises(ValueError, match="outside the codes"):
        run(encoding="onehot", domain={"A": 2, "B": 2, "Y": 2})


# --- refusals, all before any fit -----------------------------------------------


@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        ({"train": TRAIN.iloc[:0]}, ValueError, "train has no rows"),
        ({"test": TEST.iloc[:0]}, ValueError, "test has no rows"),
        ({"test": TEST.drop(columns="B")}, ValueError, "missing column"),
        ({"train": TRAIN.assign(Y=1)}, ValueError, "only the label"),
        ({"train": TRAIN.assign(Y=TRAIN["Y"] + 1)}, ValueError, "labels 0 and 1"),
        ({"test": TEST.assign(A=TEST["A"].astype(str))}, ValueError, "numeric codes"),
        ({"features": ["A", "Y"]}, ValueError, "among the features"),
        ({"features": "A"}, TypeError, "sequence of column names"),
        ({"selection": "best"}, ValueError, "unknown selection"),
        ({"encoding": "ordinal"}, ValueError, "unknown encoding"),
        ({"train_fraction": 0}, ValueError, "train_fraction"),
        ({"train_fraction": 1.5}, ValueError, "train_fraction"),
        ({"classifier_options": {"xgboost": {}}}, ValueError, "unknown candidates"),
        ({"classifier_options": {"mlp": {"nope": 1}}}, ValueError, "unknown option"),
        ({"train_groups": None}, ValueError, "train_groups is needed"),
        ({"test_groups": TEST_G[:5]}, ValueError, "one label per row"),
        ({"subset": "white"}, TypeError, "sequence of group labels"),
        ({"subset": ()}, ValueError, "subset is empty"),
        ({"subset": ("purple",)}, ValueError, "no test row belongs"),
        ({"rng": 1}, TypeError, "Generator"),
        ({"train": TRAIN.to_numpy()}, TypeError, "DataFrame"),
    ],
)
def test_bad_input_is_refused_before_any_fit(kw, error, match):
    with (
        mock.patch.object(ev, "_fit_candidates", side_effect=AssertionError("fitted")),
        pytest.raises(error, match=match),
    ):
        run(**kw)


def test_one_label_left_after_the_subset_is_refused():
    train = TRAIN.copy()
    train.loc[TRAIN_G != "other", "Y"] = 1
    with (
        mock.patch.object(ev, "_fit_candidates", side_effect=AssertionError("fitted")),
        pytest.raises(ValueError, match="training rows kept"),
    ):
        run(train=train, upsample=False)


def test_unknown_keywords_are_refused():
    with pytest.raises(TypeError):
        run(upsampling=False)
