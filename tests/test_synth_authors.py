"""The authors' code conventions emulated (dpnotes.synth.authors) and strat_synth's
cause settings."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from dpnotes.experiments import strat_synth
from dpnotes.synth import authors
from dpnotes.synth.mst import MST
from dpnotes.synth.stratified import Stratified

DOMAIN = {"S": 2, "A": 6, "B": 4}


def _table(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "S": rng.integers(0, 2, n),
            "A": rng.choice([0, 2, 5], n),  # 1, 3 and 4 never occur
            "B": rng.integers(0, 3, n),  # 3 never occurs
        }
    )


def test_data_domain_samples_only_present_values_and_spends_the_base_budget():
    rng = np.random.default_rng(1)
    model = authors.DataDomain(MST(epsilon=1.0, delta=1e-9)).fit(
        _table(), DOMAIN, rng=rng
    )
    assert model.inner_.domain_ == {"S": 2, "A": 3, "B": 3}
    synth = model.sample(3000, rng=rng)
    assert set(synth["A"]) <= {0, 2, 5} and set(synth["B"]) <= {0, 1, 2}
    assert model.rho_spent == pytest.approx(model.rho)
    # The public domain lets the base put rows on values the data never hold.
    public = MST(epsilon=0.01, delta=1e-9).fit(_table(), DOMAIN, rng=rng)
    assert set(public.sample(3000, rng=rng)["A"]) - {0, 2, 5}


def test_data_domain_keeps_the_public_size_without_records():
    model = authors.DataDomain(MST(epsilon=1.0, delta=1e-9)).fit(
        _table().iloc[:0], DOMAIN, rng=np.random.default_rng(0)
    )
    assert model.inner_.domain_ == DOMAIN


def test_data_domain_refuses_a_non_synthesizer():
    with pytest.raises(TypeError, match="unfitted synthesizer"):
        authors.DataDomain("MST")


def test_completion_order_moves_the_counts_to_the_strata_by_size():
    assert authors.completion_order_counts([5, 3, 2], [10, 30, 20]).tolist() == [
        5,
        2,
        3,
    ]
    # Sizes already increasing: nothing moves.
    assert authors.completion_order_counts([5, 3], [1, 2]).tolist() == [5, 3]
    with pytest.raises(ValueError, match="one entry per stratum"):
        authors.completion_order_counts([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="non-negative"):
        authors.completion_order_counts([1, -2], [1, 2])


def test_completion_order_stratified_swaps_the_strata_sizes():
    df = _table(3000)
    df = pd.concat([df[df["S"] == 0], df[df["S"] == 1].iloc[:200]])
    rng = np.random.default_rng(2)
    weights = [0.7, 0.3]
    slip = authors.CompletionOrderStratified(
        MST(epsilon=1.0, delta=1e-9), "S", weights
    ).fit(df, DOMAIN, rng=rng)
    assert slip.sizes_.tolist() == [int((df["S"] == 0).sum()), 200]
    assert np.bincount(slip.sample(1000, rng=rng)["S"]).tolist() == [300, 700]
    ours = Stratified(MST(epsilon=1.0, delta=1e-9), "S", weights).fit(
        df, DOMAIN, rng=rng
    )
    assert np.bincount(ours.sample(1000, rng=rng)["S"]).tolist() == [700, 300]


def test_recode_present_shifts_codes_above_a_missing_value():
    out = authors.recode_present(pd.DataFrame({"A": [0, 2, 2, 5], "B": [1, 0, 1, 0]}))
    assert out["A"].tolist() == [0, 1, 1, 2]
    assert out["B"].tolist() == [1, 0, 1, 0]
    with pytest.raises(TypeError, match="DataFrame"):
        authors.recode_present(np.zeros((2, 2)))


def test_two_way_workload_is_every_pair():
    pairs = authors.two_way_workload({"A": 2, "B": 2, "C": 2, "D": 2})
    assert len(pairs) == 6 and all(len(p) == 2 for p in pairs)


def _profile(**changes) -> strat_synth.SynthesisProfile:
    return replace(strat_synth._PROFILES["smoke"], **changes)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"cause": "bogus"}, "unknown cause 'bogus'; choose one of: 'none'"),
        ({"cause": "authors_gem"}, r"does not apply to synthesizers \['MST'\]"),
        (
            {"cause": "recode_vanilla"},
            r"does not apply to stratifications \['SEX'\].*--set stratifications=",
        ),
        (
            {"cause": "completion_order"},
            r"does not apply to stratifications \['vanilla'\]",
        ),
    ],
)
def test_a_cause_outside_its_grid_is_refused_before_any_work(changes, message):
    with pytest.raises(ValueError, match=message):
        strat_synth._grid(_profile(**changes))


def test_cause_settings_reach_the_synthesizers():
    gem = strat_synth._cause_params(
        _profile(cause="authors_gem", synthesizers=("GEM",))
    )
    assert gem["GEM"]["rounds"] == 100 and gem["GEM"]["lr"] == 1e-4
    aim = _profile(cause="aim_2way", synthesizers=("AIM",), params={"AIM": {"a": 5}})
    assert strat_synth._cause_params(aim) == {"AIM": {"a": 5}}
    assert strat_synth._cause_params(_profile()) == {}


def test_two_way_workload_follows_the_stratum_domain():
    from dpnotes.synth.aim import AIM

    base = AIM(epsilon=1.0, delta=1e-9, iters=20, final_iters=20)
    model = Stratified(authors.TwoWayWorkload(base), "S", [0.5, 0.5]).fit(
        _table(500), DOMAIN, rng=np.random.default_rng(3)
    )
    inner = model.synthesizers_[(0,)].inner_
    assert sorted(inner.workload) == [("A", "B")]  # S is constant in a stratum
    assert model.rho_spent == pytest.approx(base.rho)
    assert base.workload is None  # the template is not changed
    with pytest.raises(TypeError, match="with a workload"):
        authors.TwoWayWorkload(MST(epsilon=1.0, delta=1e-9))


@pytest.mark.parametrize("cause", ["data_domains"])
def test_a_cause_cell_runs_end_to_end(cause):
    config = _profile(
        cause=cause,
        stratifications=("vanilla",),
        rows=1000,
        classifiers=("logistic",),
    )
    (cell,) = strat_synth._grid(config)
    rows = strat_synth.run_cell(config, cell, rng=np.random.default_rng(0))
    value = rows.set_index(["metric", "grouping"])["value"]
    assert value["rho_spent_share", "overall"] == pytest.approx(1.0)
    assert 0.5 < value["logistic:accuracy", "overall"] <= 1.0
