"""The stratification authors' conventions as settings of the experiments (issue 27).

Each convention is a field of an experiment's profile whose default is our choice, so
``--set KEY=VALUE`` computes the authors' choice as a derived profile beside ours:
``spread`` (COINPRESS' spread bound, census and mixtures), ``group_spreads`` (the
mixtures' group spreads) and ``parity`` (how synthesis is scored).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from dpnotes.experiments import stratified_mean as sm
from dpnotes.experiments.strat_synth import SynthesisProfile
from dpnotes.lab import load_stored
from dpnotes.lab.registry import get_experiment


def test_each_convention_defaults_to_ours_and_is_a_setting() -> None:
    census = get_experiment("strat_mean_census")
    mixtures = get_experiment("strat_mean_synthetic")
    synth = get_experiment("strat_synth")
    for profile in ("smoke", "quick", "paper"):
        assert census.config(profile).spread == "cover"
        assert mixtures.config(profile).spread == "cover"
        assert mixtures.config(profile).group_spreads == "unit"
        assert synth.config(profile).parity == "ours"
    assert census.config("paper@spread=unit").spread == "unit"
    assert census.config("paper@spread=unit").runs == census.config("paper").runs
    both = mixtures.config("paper@group_spreads=uniform-0.1-2,spread=unit")
    assert (both.group_spreads, both.spread) == ("uniform-0.1-2", "unit")
    assert synth.config("paper@parity=authors").parity == "authors"
    for name in ("spread", "group_spreads"):
        assert name in mixtures.settings("paper")
    assert "parity" in synth.settings("paper")


@pytest.mark.parametrize(
    ("name", "profile", "message"),
    [
        ("strat_mean_census", "paper@spread=fit", "unknown spread"),
        ("strat_mean_synthetic", "paper@spread=one", "unknown spread"),
        ("strat_mean_synthetic", "paper@group_spreads=U(0.1-2)", "group_spreads"),
        ("strat_synth", "paper@parity=paper", "unknown parity convention"),
    ],
)
def test_an_unknown_convention_fails_before_any_cell_runs(name, profile, message):
    with pytest.raises(ValueError, match=message):
        get_experiment(name).cells(profile)


def test_the_mixtures_spread_bound_covers_the_groups_or_is_one() -> None:
    mixtures = get_experiment("strat_mean_synthetic")
    bound = {
        p: sm._spread_bound(mixtures.config(f"paper{p}"))
        for p in (
            "",
            "@spread=unit",
            "@group_spreads=uniform-0.1-2",
            "@group_spreads=uniform-0.1-2,spread=unit",
        )
    }
    # With unit-variance groups the authors' unit bound is our covering bound.
    assert bound == {
        "": 1.0,
        "@spread=unit": 1.0,
        "@group_spreads=uniform-0.1-2": 2.0,
        "@group_spreads=uniform-0.1-2,spread=unit": 1.0,
    }
    assert sm.GROUP_SPREADS["uniform-0.1-2"] == (0.1, 2.0)


def test_the_mixture_cell_draws_the_spreads_it_is_told() -> None:
    mixtures = get_experiment("strat_mean_synthetic")
    cell = {"sweep": "n", "value": 2000}

    def run(profile):
        config = mixtures.config(profile)
        return sm.strat_mean_synthetic(config, cell, rng=np.random.default_rng(3))

    base, unit = run("smoke"), run("smoke@spread=unit")
    # Unit groups: the two bounds coincide, so the tables are equal.
    assert base.equals(unit)
    wide = run("smoke@group_spreads=uniform-0.1-2")
    assert not wide.equals(base)
    assert list(wide.columns) == list(base.columns)


@pytest.mark.slow
@pytest.mark.data
@pytest.mark.skipif(
    not os.environ.get("DPNOTES_DATA_DIR"), reason="set DPNOTES_DATA_DIR"
)
def test_parity_authors_scores_the_same_synthetic_table_both_ways() -> None:
    synth = get_experiment("strat_synth")
    cell = synth.cells("smoke")[1]  # MST with sex strata
    assert cell["strata"] == "SEX"
    tables = {}
    for profile in ("smoke", "smoke@parity=authors"):
        config = synth.config(profile)
        assert isinstance(config, SynthesisProfile)
        rows = synth.run_cell(config, cell, rng=np.random.default_rng(5))
        tables[profile] = rows[rows.metric != "fit_seconds"].reset_index(drop=True)
    ours, both = tables["smoke"], tables["smoke@parity=authors"]
    added = {"mean_parity_error_authors", "max_mean_error", "max_mean_error_authors"}
    assert set(both.metric) - set(ours.metric) == added
    # The same random stream gives the same synthetic table: our rows are unchanged.
    kept = both[~both.metric.isin(added)].reset_index(drop=True)
    assert kept.equals(ours)
    authors = both[both.metric == "mean_parity_error_authors"].set_index("grouping")
    assert set(authors.index) == {"SEX", "RAC1P", "SEX_RAC1P"}
    assert np.all(np.isfinite(authors.value)) and np.all(authors.value > 0)
    # Another stream, other numbers: the runner's root seed reaches this experiment's
    # cells through their stream (tests/test_lab_seeds.py leaves it to this test).
    other = synth.run_cell(synth.config("smoke"), cell, rng=np.random.default_rng(6))
    other = other[other.metric != "fit_seconds"].reset_index(drop=True)
    assert len(other) == len(ours) and not other.value.equals(ours.value)


@pytest.mark.data
@pytest.mark.skipif(
    not os.environ.get("DPNOTES_DATA_DIR"), reason="set DPNOTES_DATA_DIR"
)
def test_a_unit_spread_biases_the_census_mean_and_age_strata_reduce_it() -> None:
    # The mechanism behind the paper's Figure 2: COINPRESS told sigma = 1 on raw
    # SCHL (sd about 5) clips much of the data once its interval has shrunk, and its
    # overall mean is off by several percent; within age buckets SCHL is narrower,
    # so the stratified estimate is off by less. With our spread bound neither holds.
    census = get_experiment("strat_mean_census")
    cell = {"variable": "SCHL", "attributes": ["AGE"]}
    errors = {}
    for profile in ("smoke", "smoke@spread=unit"):
        table = sm.strat_mean_census(
            census.config(profile), cell, rng=np.random.default_rng(0)
        )
        errors[profile] = table.set_index("method").normalised_error
    leak = "StratCoinpress (paper, leaks sizes)"
    unit, ours = errors["smoke@spread=unit"], errors["smoke"]
    assert unit["COINPRESS"] > 0.02 > 0.002 > ours["COINPRESS"]
    assert unit[leak] < 0.5 * unit["COINPRESS"]
    assert ours[leak] > ours["COINPRESS"]


RESULTS = Path(__file__).resolve().parents[1] / "book" / "_results"

#: The derived profiles the chapters show beside the defaults.
CHAPTER_DERIVED = [
    ("strat_mean_census", "paper@spread=unit"),
    ("strat_mean_synthetic", "paper@group_spreads=uniform-0.1-2"),
    ("strat_mean_synthetic", "paper@group_spreads=uniform-0.1-2,spread=unit"),
    ("strat_synth", "paper@parity=authors"),
]


@pytest.mark.parametrize(("name", "profile"), CHAPTER_DERIVED)
def test_the_chapters_derived_results_are_stored_and_current(name, profile) -> None:
    # Stale after a change to their code: restamp them (python -m dpnotes restamp NAME
    # --profile paper --set KEY=VALUE) or recompute them, as the base profiles.
    stored = load_stored(name, profile, root=RESULTS, allow_partial=True)
    assert stored is not None, f"{name} {profile} is missing or stale"
    assert not str(stored.meta.get("code_version", "")).endswith(".dirty")
