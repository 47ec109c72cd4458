"""Tests for the end-to-end experiment (dpnotes.experiments.spending_e2e)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from dpnotes import paper_numbers
from dpnotes.experiments import spending_e2e
from dpnotes.experiments.spending_e2e import (
    CLASSIFIER_METRICS,
    DATASETS,
    DELTA,
    EPSILONS,
    FIDELITY_METRICS,
    GROUPS,
    METHODS,
    METRICS,
    PAPER_DATASET,
    PAPER_METHODS,
    group_metrics,
)
from dpnotes.lab import get_experiment, list_experiments, run

NAME = "spending_e2e"
#: The columns the chapter reads.
COLUMNS = ["dataset", "epsilon", "seed", "method", "group", "metric", "value"]
PRIVATE = ("real_dp", "mst", "sq", "fsq_bal", "fsq_fnr")


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> pd.DataFrame:
    root = tmp_path_factory.mktemp("results")
    return run(NAME, "smoke", root=root, progress=False).table


def test_registered_with_provenance() -> None:
    assert NAME in {e.name for e in list_experiments()}
    exp = get_experiment(NAME)
    assert "Table 1" in exp.figure and "Figures 2, 4, 5" in exp.figure
    hashed = set(exp.code_digests())
    assert {"dpnotes.importance.superquail", "dpnotes.synth.mst"} <= hashed
    assert "dpnotes.paper_numbers" not in hashed
    assert exp.datasets(exp.config("smoke")) == ["acs/2018/1-Year/psam_p35.csv"]
    assert set(exp.datasets(exp.config("paper"))) == {
        "acs/2018/1-Year/psam_p35.csv",
        "acs/extracts/ACSEmployment_NY_2018_sample20000.csv",
    }


def test_grid_is_the_papers_epsilons() -> None:
    # e^0 .. e^4, the union of the paper's grids; the printed values are rounded.
    assert len(EPSILONS) == 5
    for k, printed in paper_numbers.SPENDING_EPSILONS.items():
        assert math.isclose(EPSILONS[k], printed, abs_tol=0.01)
    exp = get_experiment(NAME)
    paper = exp.cells("paper")
    assert len(paper) == 5 * 4 * 10  # both ACSEmployment stand-ins
    assert {c["epsilon"] for c in paper} == set(EPSILONS)
    assert {c["dataset"] for c in paper} == set(DATASETS)
    seeds = [c["seed"] for c in paper]
    assert seeds == sorted(seeds)
    quick = exp.cells("quick")
    assert len(quick) == 2 and len({c["dataset"] for c in quick}) == 1
    assert {c["epsilon"] for c in quick} <= set(EPSILONS)
    assert len(exp.cells("smoke")) == 1
    assert set(PAPER_DATASET) == set(DATASETS)
    assert exp.config("paper").methods == PAPER_METHODS
    assert METHODS[: len(PAPER_METHODS)] == PAPER_METHODS  # streams by position


@pytest.mark.parametrize(
    ("override", "match"),
    [("datasets=ACSFoo", "ACSFoo"), ("methods=gan", "gan"), ("epsilons=-1", "-1")],
)
def test_bad_settings_are_refused_before_any_work(override: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        get_experiment(NAME).cells(f"smoke@{override}")


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("datasets", ("ACSFoo",), "keys of DATASETS"),
        ("methods", ("gan",), "methods must be"),
        ("methods", (), "methods must be"),
        ("epsilons", (0.0,), "positive finite"),
        ("epsilons", (math.inf,), "positive finite"),
        ("evaluations", ("authors",), "start with 'logistic'"),
        ("evaluations", ("logistic", "logistic"), "distinct"),
        ("evaluations", ("logistic", "xgb"), "evaluations must"),
        ("fnr_target", 1.5, r"fnr_target must lie in \[0, 1\]"),
    ],
)
def test_the_cell_refuses_bad_settings_before_loading_data(field, value, match) -> None:
    config = dataclasses.replace(get_experiment(NAME).config("smoke"), **{field: value})
    cell = {"dataset": "ACSFoo", "epsilon": 1.0, "seed": 0}
    with pytest.raises(ValueError, match=match):
        spending_e2e.spending_e2e(config, cell, rng=np.random.default_rng(0))


def test_group_metrics_by_hand() -> None:
    y = np.array([1, 1, 0, 0, 1, 0])
    p = np.array([1, 0, 0, 1, 1, 0])
    g = np.array(["a", "a", "a", "a", "b", "b"])
    out = group_metrics(y, p, g).set_index(["group", "metric"])["value"]
    assert out[("overall", "accuracy")] == pytest.approx(4 / 6)
    assert out[("a", "fnr")] == pytest.approx(0.5)
    assert out[("a", "fpr")] == pytest.approx(0.5)
    assert out[("b", "fnr")] == 0.0 and out[("b", "fpr")] == 0.0
    assert out[("overall", "f1")] == pytest.approx(2 * 2 / (2 * 2 + 1 + 1))
    assert out[("b", "count")] == 2
    # No positives in a group: its FNR is undefined, not 0.
    nan = group_metrics(np.array([0, 1]), np.array([0, 1]), np.array(["x", "y"]))
    nan = nan.set_index(["group", "metric"])["value"]
    assert math.isnan(nan[("x", "fnr")]) and nan[("y", "fnr")] == 0.0
    with pytest.raises(ValueError, match="equal length"):
        group_metrics(y, p[:3], g)
    with pytest.raises(ValueError, match="non-empty"):
        group_metrics(np.array([]), np.array([]), np.array([]))


def test_smoke_has_the_columns_the_chapter_needs(smoke) -> None:
    assert list(smoke.columns) == COLUMNS
    assert set(smoke.method) == set(PAPER_METHODS)
    assert set(smoke.metric) <= set(METRICS)
    assert set(smoke.group) <= set(GROUPS)
    for method in PAPER_METHODS:
        part = smoke[(smoke.method == method) & smoke.metric.isin(CLASSIFIER_METRICS)]
        assert set(part.metric) == set(CLASSIFIER_METRICS)
        assert {"overall", "white"} <= set(part.group)
        count = part[part.metric == "count"].set_index("group")["value"]
        assert count["overall"] == count.drop("overall").sum()
    rates = smoke[smoke.metric.isin(("accuracy", "f1", "fnr", "fpr"))].value.dropna()
    assert ((rates >= 0) & (rates <= 1)).all()
    times = smoke[smoke.metric.str.endswith("_seconds")]
    assert (times.value >= 0).all()
    assert set(times[times.metric == "fit_seconds"].method) == set(PAPER_METHODS)


def test_smoke_budgets_spent_within_budgets(smoke) -> None:
    spent = smoke[smoke.metric == "epsilon_spent"]
    assert set(spent.method) == set(PRIVATE)  # the non-private reference spends none
    assert (spent.value <= spent.epsilon * (1 + 1e-9)).all()
    assert (spent.value > 0).all()
    delta = smoke[smoke.metric == "delta_spent"]
    assert (delta.value <= DELTA).all()
    assert (delta[delta.method == "real_dp"].value == 0).all()


@pytest.mark.slow
def test_cell_is_deterministic() -> None:
    exp = get_experiment(NAME)
    config = dataclasses.replace(
        exp.config("smoke"), methods=("real", "real_dp", "mst")
    )
    cell = exp.cells("smoke")[0]
    a, b = (
        spending_e2e.spending_e2e(config, cell, rng=np.random.default_rng(7))
        for _ in range(2)
    )
    keep = ~a.metric.str.endswith("_seconds")
    pd.testing.assert_frame_equal(
        a[keep].reset_index(drop=True), b[keep].reset_index(drop=True)
    )


@pytest.fixture(scope="module")
def extras() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The smoke cell with the methods and options beyond the paper, and without."""
    exp = get_experiment(NAME)
    base = dataclasses.replace(
        exp.config("smoke"), methods=("real", "mst"), aim_iters=50
    )
    cell = exp.cells("smoke")[0]
    with_extras = dataclasses.replace(
        base,
        methods=("real", "mst", "fsq_fnr_cap"),
        fidelity=True,
        evaluations=("logistic", "authors"),
    )
    return tuple(
        spending_e2e.spending_e2e(c, cell, rng=np.random.default_rng(3))
        for c in (with_extras, base)
    )


def _values(table: pd.DataFrame, **where) -> pd.Series:
    keep = np.logical_and.reduce([table[k] == v for k, v in where.items()])
    return table[keep].set_index(["group", "metric"])["value"]


def test_extra_methods_spend_within_budget_and_leave_the_others_alone(extras):
    full, base = extras
    plain = {"real", "mst", "fsq_fnr_cap"}
    assert set(full.method) == plain | {f"{m}@authors" for m in plain}
    spent = full[full.metric == "epsilon_spent"].set_index("method")["value"]
    assert spent["fsq_fnr_cap"] == pytest.approx(EPSILONS[2], rel=1e-9)
    # Each method draws from its own stream: MST's numbers do not move when other
    # methods run beside it or fidelity rows are added.
    for method in ("real", "mst"):
        a = _values(full, method=method)
        b = _values(base, method=method)
        keep = [i for i in b.index if not i[1].endswith("_seconds")]
        pd.testing.assert_series_equal(a[keep], b[keep])


def test_fidelity_rows(extras):
    full, base = extras
    assert not base.metric.isin(FIDELITY_METRICS).any()
    for method in ("mst", "fsq_fnr_cap"):
        rows = _values(full, method=method, group="overall")
        assert set(FIDELITY_METRICS) <= {m for _, m in rows.index}
        for k in (1, 2):
            mean = rows[("overall", f"tvd_{k}way_mean")]
            top = rows[("overall", f"tvd_{k}way_max")]
            assert 0.0 <= mean <= top <= 1.0
        assert 0.0 <= rows[("overall", "target_share")] <= 1.0
    real = _values(full, method="real", group="overall")
    assert ("overall", "tvd_1way_mean") not in real.index
    task = spending_e2e.load_task("ACSMobility-NM", 600)
    assert real[("overall", "target_share")] == pytest.approx(
        float(np.mean(task.train[task.target] == 1))
    )


def test_fidelity_rows_by_hand() -> None:
    from types import SimpleNamespace

    task = SimpleNamespace(domain={"A": 2, "B": 3, "Y": 2}, target="Y")
    real = pd.DataFrame({"A": [0, 0, 1, 1], "B": [0, 1, 2, 2], "Y": [0, 0, 1, 1]})
    same = spending_e2e.fidelity_rows("m", real, real, task)
    assert {r["metric"]: r["value"] for r in same} == {
        "target_share": 0.5,
        "tvd_1way_mean": 0.0,
        "tvd_1way_max": 0.0,
        "tvd_2way_mean": 0.0,
        "tvd_2way_max": 0.0,
    }
    flipped = {
        r["metric"]: r["value"]
        for r in spending_e2e.fidelity_rows("m", real.assign(Y=1), real, task)
    }
    # Y's one-way marginal moves by half its mass; A and B do not move.
    assert flipped["target_share"] == 1.0
    assert flipped["tvd_1way_max"] == 0.5
    assert flipped["tvd_1way_mean"] == pytest.approx(0.5 / 3)
    # (A, Y): real {(0,0): .5, (1,1): .5}, synthetic {(0,1): .5, (1,1): .5}.
    assert flipped["tvd_2way_max"] == 0.5


def test_aim_target_is_aim_with_the_target_pairs() -> None:
    # AIM itself (its budget, its rounds) is tested in test_synth_aim.py; a cell fit
    # compiles a new model structure each round (about a minute on the smoke data).
    exp = get_experiment(NAME)
    config = dataclasses.replace(exp.config("smoke"), aim_iters=50)
    task = spending_e2e.load_task("ACSMobility-NM", 600)
    synth = spending_e2e._synthesizer(config, "aim_target", task, EPSILONS[2])
    assert type(synth).__name__ == "AIM"
    assert (synth.epsilon, synth.delta, synth.iters) == (EPSILONS[2], DELTA, 50)
    assert sorted(map(tuple, synth.workload)) == sorted(
        (task.target, f) for f in task.domain if f != task.target
    )


def test_authors_evaluation_rows(extras):
    full, base = extras
    assert not base.method.str.endswith("@authors").any()
    for method in ("real", "mst", "fsq_fnr_cap"):
        rows = _values(full, method=f"{method}@authors")
        chosen = rows[("overall", "chosen")]
        assert chosen in (-1.0, 0.0, 1.0, 2.0)
        # Only the white and black test records are scored, as the authors did.
        groups = {g for g, m in rows.index if m == "count"}
        assert groups <= {"overall", "white", "black"}
        counts = rows.xs("count", level="metric")
        assert counts["overall"] == counts.drop("overall").sum()
        task = spending_e2e.load_task("ACSMobility-NM", 600)
        kept = task.group_of(task.test).isin(["white", "black"]).sum()
        assert counts["overall"] == kept
        assert rows[("overall", "eval_seconds")] >= 0
