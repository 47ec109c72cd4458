"""Tests for the DPSAGE quality experiment (dpnotes.experiments.spending)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpnotes import paper_numbers
from dpnotes.data.spending import SPENDING_FEATURES
from dpnotes.experiments import spending
from dpnotes.experiments.spending import (
    DATASETS,
    DELTA,
    GAMMA,
    METHODS,
    METRICS,
    PAPER_DATASET,
    RANKING_METRICS,
    TABLE2_EPSILONS,
    score_ranking,
)
from dpnotes.lab import get_experiment, list_experiments, run

NAME = "spending_dpsage"
#: The columns the chapter reads.
COLUMNS = [
    "dataset",
    "epsilon",
    "seed",
    "method",
    "labels",
    "feature",
    "metric",
    "value",
]


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> pd.DataFrame:
    root = tmp_path_factory.mktemp("results")
    return run(NAME, "smoke", root=root, progress=False).table


def test_registered_with_provenance() -> None:
    assert NAME in {e.name for e in list_experiments()}
    exp = get_experiment(NAME)
    assert "Table 2" in exp.figure and "Figure 3" in exp.figure
    hashed = set(exp.code_digests())
    assert {"dpnotes.importance.dpsage", "dpnotes.data.spending"} <= hashed
    # The paper's numbers are read by the chapter, not by the experiment: an edit
    # there must not make its stored results stale.
    assert "dpnotes.paper_numbers" not in hashed
    assert exp.datasets(exp.config("smoke")) == ["acs/2018/1-Year/psam_p35.csv"]
    assert set(exp.datasets(exp.config("paper"))) == {
        "acs/2018/1-Year/psam_p35.csv",
        "acs/extracts/ACSEmployment_NY_2018_sample20000.csv",
    }


def test_settings_are_the_papers() -> None:
    assert TABLE2_EPSILONS == paper_numbers.SPENDING_TABLE2_EPSILONS
    # gamma: the paper's reported DPSAGE split, the same at every budget.
    assert {g for _, g in paper_numbers.SPENDING_SPLITS.values()} == {GAMMA}
    exp = get_experiment(NAME)
    paper = exp.config("paper")
    assert len(paper.seeds) == paper_numbers.SPENDING_DATA[("all", "runs")][0] == 10
    assert paper.k == 5
    assert paper.gamma == GAMMA and paper.delta == DELTA
    # Every data set of Table 2 has a stand-in, and every stand-in names one of them.
    assert set(PAPER_DATASET) == set(DATASETS)
    assert set(PAPER_DATASET.values()) == set(paper_numbers.SPENDING_TABLE2)
    assert {PAPER_DATASET[d] for d in paper.datasets} == set(
        paper_numbers.SPENDING_TABLE2
    )


@pytest.mark.parametrize(("profile", "n"), [("smoke", 2), ("quick", 6), ("paper", 80)])
def test_grid_matches_the_papers_epsilons(profile: str, n: int) -> None:
    cells = get_experiment(NAME).cells(profile)
    assert len(cells) == n
    assert len({tuple(sorted(c.items())) for c in cells}) == n  # no duplicates
    assert {c["epsilon"] for c in cells} == set(paper_numbers.SPENDING_TABLE2_EPSILONS)
    # Seeds vary slowest, so a partial run holds whole seeds.
    seeds = [c["seed"] for c in cells]
    assert seeds == sorted(seeds)


def test_unknown_dataset_is_refused_before_any_work() -> None:
    with pytest.raises(ValueError, match="ACSFoo"):
        get_experiment(NAME).config("smoke@datasets=ACSFoo")


def test_score_ranking_identical_disjoint_and_undefined_gains() -> None:
    ref = ["a", "b", "c", "d", "e", "f"]
    values = dict(zip(ref, [0.6, 0.5, 0.4, 0.3, 0.2, 0.1], strict=True))
    same = score_ranking(ref, ref, values, k=5)
    assert set(same) == set(RANKING_METRICS)
    assert all(math.isclose(v, 1.0) for v in same.values())
    other = score_ranking(["f", "g", "h", "i", "j"], ref, values, k=1)
    assert all(v == 0.0 for v in other.values())
    # Swapping the reference's first two costs rank-graded nDCG, not Jaccard.
    swapped = score_ranking(["b", "a", "c", "d", "e"], ref, values, k=5)
    assert swapped["jaccard"] == 1.0 and swapped["ndcg"] < 1.0
    negative = {f: -1.0 for f in ref}
    assert math.isnan(score_ranking(ref, ref, negative, k=5)["ndcg_sage"])
    with pytest.raises(ValueError, match="fewer than k"):
        score_ranking(["a", "b"], ref, values, k=5)


def test_smoke_has_the_columns_and_rows_the_chapter_needs(smoke) -> None:
    assert list(smoke.columns) == COLUMNS
    assert set(smoke.method) == set(METHODS)
    assert set(smoke.metric) <= set(METRICS)
    assert set(smoke.labels) == {"synthetic", "model", "real"}
    features = set(smoke[smoke.feature != "all"].feature)
    assert features == set(SPENDING_FEATURES["ACSMobility"])
    for (_, _, _, _), part in smoke.groupby(["epsilon", "seed", "method", "labels"]):
        ranks = part[part.metric == "rank"].value.sort_values().to_numpy()
        assert np.array_equal(ranks, np.arange(1, len(features) + 1))
    scored = smoke[smoke.metric.isin(RANKING_METRICS)]
    assert set(scored.method) == {"dpsage", "real_sage_rerun"}
    assert len(scored) == len(RANKING_METRICS) * 3 * len(TABLE2_EPSILONS)


def test_smoke_metrics_in_range_and_budget_spent(smoke) -> None:
    scored = smoke[smoke.metric.isin(RANKING_METRICS)].value.dropna()
    assert ((scored >= 0) & (scored <= 1)).all()
    acc = smoke[smoke.metric == "test_accuracy"].value
    assert ((acc > 0) & (acc <= 1)).all()
    times = smoke[smoke.metric.str.endswith("_seconds")].value
    assert (times >= 0).all() and len(times) > 0
    std = smoke[smoke.metric == "sage_std"].value
    assert (std >= 0).all()
    dp = smoke[smoke.method == "dpsage"]
    spent = dp[dp.metric == "epsilon_spent"]
    assert np.allclose(spent.value, spent.epsilon)
    assert np.allclose(dp[dp.metric == "delta_spent"].value, DELTA)


def test_smoke_reference_is_shared_and_labels_share_the_fit(smoke) -> None:
    # The reference (real SAGE and its rerun) does not depend on epsilon.
    reference = smoke[smoke.method != "dpsage"]
    by_eps = [
        g.drop(columns="epsilon").reset_index(drop=True)
        for _, g in reference.groupby("epsilon")
    ]
    assert len(by_eps) == len(TABLE2_EPSILONS)
    assert len(by_eps[0]) > 0
    pd.testing.assert_frame_equal(by_eps[0], by_eps[1])
    # Both labellings explain the same classifier C: one accuracy per epsilon.
    acc = smoke[(smoke.method == "dpsage") & (smoke.metric == "test_accuracy")]
    assert (acc.groupby("epsilon").value.nunique() == 1).all()


@pytest.mark.slow
def test_cell_is_deterministic() -> None:
    exp = get_experiment(NAME)
    config = exp.config("smoke")
    cell = exp.cells("smoke")[0]
    a, b = (
        spending.spending_dpsage(config, cell, rng=np.random.default_rng(7))
        for _ in range(2)
    )
    keep = ~a.metric.str.endswith("_seconds")
    pd.testing.assert_frame_equal(a[keep], b[keep])
    c = spending.spending_dpsage(config, cell, rng=np.random.default_rng(8))
    dp = (c.method == "dpsage") & (c.metric == "sage_value")
    assert not np.allclose(a[dp].value, c[dp].value)
