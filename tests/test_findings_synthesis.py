"""The synthesis findings: stratified against unstratified, tallies and claims."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from stored_tables import stored_table

from dpnotes.findings import synthesis
from dpnotes.findings.verdict import compact_frame
from dpnotes.report import VERDICTS

ROOT = Path(__file__).resolve().parents[1]

# ------------------------------------------------------ stratified against unstratified


def _runs(values: dict[tuple[str, float, str], list[float]]) -> pd.DataFrame:
    rows = [
        {
            "dataset": "NY",
            "synthesizer": syn,
            "epsilon": eps,
            "strata": strata,
            "seed": seed,
            "value": v,
        }
        for (syn, eps, strata), vs in values.items()
        for seed, v in enumerate(vs)
    ]
    return pd.DataFrame(rows)


RUNS = _runs(
    {
        ("MST", 1.0, "vanilla"): [1.0, 1.2],
        ("MST", 1.0, "RAC1P"): [0.5, 0.7],  # lower, apart: a clear win
        ("MST", 10.0, "vanilla"): [0.40, 0.60],
        ("MST", 10.0, "RAC1P"): [0.55, 0.65],  # higher, overlapping: a tied loss
        ("AIM", 1.0, "vanilla"): [0.2, 0.2],
        ("AIM", 1.0, "RAC1P"): [0.3, 0.4],  # higher, apart: a clear loss
        ("AIM", 10.0, "RAC1P"): [0.1],  # no unstratified run: not compared
        ("AIM", 1.0, "SEX"): [0.0],  # another stratification: ignored
    }
)


def test_compare_strata_wins_and_near_ties():
    c = synthesis.compare_strata(RUNS, "RAC1P")
    assert list(c.columns) == [
        "strat",
        "vanilla",
        "better",
        "tie",
        "gain",
        "low",
        "high",
        "paired_seeds",
        "clear",
        "clear_loss",
    ]
    assert len(c) == 3
    assert c.loc[
        ("NY", "MST", 1.0), ["strat", "vanilla", "better", "tie"]
    ].tolist() == [
        0.6,
        1.1,
        True,
        False,
    ]
    # Both seeds gain 0.5: no spread, a win beyond doubt; the others hold zero.
    assert c.clear.tolist() == [False, True, False]  # AIM 1, MST 1, MST 10
    assert not c.clear_loss.any()
    assert c.paired_seeds.tolist() == [2, 2, 2]
    assert bool(c.loc[("NY", "MST", 10.0), "tie"]) is True
    assert bool(c.loc[("NY", "MST", 10.0), "better"]) is False
    assert bool(c.loc[("NY", "AIM", 1.0), "better"]) is False
    higher = synthesis.compare_strata(RUNS, "RAC1P", lower=False)
    assert higher.better.tolist() == [True, False, True]  # AIM 1, MST 1, MST 10
    closer = synthesis.compare_strata(RUNS, "RAC1P", target=0.62)
    assert bool(closer.loc[("NY", "MST", 10.0), "better"]) is True


def test_compare_strata_refuses_bad_input():
    with pytest.raises(ValueError, match="value"):
        synthesis.compare_strata(RUNS.drop(columns="value"), "RAC1P")
    with pytest.raises(ValueError, match="vanilla"):
        synthesis.compare_strata(RUNS, "vanilla")
    with pytest.raises(TypeError, match="DataFrame"):
        synthesis.compare_strata(RUNS.to_dict(), "RAC1P")


def test_win_tally_and_its_outcome():
    c = synthesis.compare_strata(RUNS, "RAC1P")
    tally = synthesis.win_tally(c)
    assert tally == synthesis.WinTally(
        wins=1, total=3, ties=1, tied_losses=1, clear_wins=1, clear_losses=0
    )
    assert tally.undecided == 2
    assert str(tally) == "1 of 3"
    assert tally.outcome == "loses within ties"  # 2 * (1 + 1) >= 3 > 2 * 1
    by = synthesis.win_tally(c, by="synthesizer")
    assert list(by) == ["AIM", "MST"]
    assert (str(by["AIM"]), str(by["MST"])) == ("0 of 1", "1 of 2")
    with pytest.raises(ValueError, match="level"):
        synthesis.win_tally(c, by="group")
    with pytest.raises(ValueError, match="compare_strata"):
        synthesis.win_tally(RUNS)


@pytest.mark.parametrize(
    ("wins", "tied_losses", "total", "outcome"),
    [
        (0, 0, 0, "none"),
        (1, 1, 5, "loses"),  # 2 * 2 < 5
        (2, 1, 5, "loses within ties"),  # 2 * 3 >= 5 > 2 * 2
        (2, 0, 4, "half"),
        (3, 0, 5, "wins"),
    ],
)
def test_win_tally_outcome_boundaries(wins, tied_losses, total, outcome):
    tally = synthesis.WinTally(
        wins=wins, total=total, ties=tied_losses, tied_losses=tied_losses
    )
    assert tally.outcome == outcome


def test_strata_wins_text():
    c = synthesis.compare_strata(RUNS, "RAC1P")
    assert synthesis.strata_wins_text(c, ["MST", "GEM", "AIM"]) == (
        "MST at 1 of 2 ε (1 near tie); at ε = 1, 0.600 stratified against 1.10 "
        "without strata; AIM at 0 of 1 ε (0 near ties); at ε = 1, 0.350 stratified "
        "against 0.200 without strata"
    )
    assert synthesis.strata_wins_text(c.iloc[:0], ["MST"]).startswith(
        "no synthesizer yet"
    )
    two = pd.concat([c, c.rename(index={"NY": "NM"}, level="dataset")])
    with pytest.raises(ValueError, match="several data sets"):
        synthesis.strata_wins_text(two, ["MST"])
    assert math.isclose(c.loc[("NY", "AIM", 1.0), "strat"], 0.35)


def test_strata_wins_table_matches_the_text_and_keeps_the_order():
    c = synthesis.compare_strata(RUNS, "RAC1P")
    sex = synthesis.compare_strata(RUNS.assign(strata="vanilla"), "SEX")  # no SEX runs
    table = synthesis.strata_wins_table(
        {"race strata": c, "sex strata": sex}, ["MST", "GEM", "AIM"]
    )
    assert list(table.columns) == [
        "strata",
        "synthesizer",
        "stratified better",
        "near ties",
        "beyond doubt: better / worse",
        "ε = 1: stratified / none",
    ]
    # The numbers of strata_wins_text; GEM (absent) and the empty frame give no row.
    assert table.to_dict("records") == [
        {
            "strata": "race strata",
            "synthesizer": "MST",
            "stratified better": "1 of 2 ε",
            "near ties": 1,
            "beyond doubt: better / worse": "1 / 0",
            "ε = 1: stratified / none": "0.600 / 1.10",
        },
        {
            "strata": "race strata",
            "synthesizer": "AIM",
            "stratified better": "0 of 1 ε",
            "near ties": 0,
            "beyond doubt: better / worse": "0 / 0",
            "ε = 1: stratified / none": "0.350 / 0.200",
        },
    ]
    # One frame: no label column; an ε without both variants is an en dash.
    at_ten = synthesis.strata_wins_table(c, ["AIM", "MST"], at_epsilon=10)
    assert list(at_ten.columns)[:1] == ["synthesizer"]
    assert at_ten["ε = 10: stratified / none"].tolist() == ["–", "0.600 / 0.500"]
    assert synthesis.strata_wins_table(c.iloc[:0], ["MST"]).empty


def test_strata_wins_table_refuses_bad_input():
    c = synthesis.compare_strata(RUNS, "RAC1P")
    two = pd.concat([c, c.rename(index={"NY": "NM"}, level="dataset")])
    with pytest.raises(ValueError, match="several data sets"):
        synthesis.strata_wins_table({"race": two}, ["MST"])
    with pytest.raises(ValueError, match="compare_strata"):
        synthesis.strata_wins_table({"race": RUNS}, ["MST"])
    with pytest.raises(TypeError, match="mapping"):
        synthesis.strata_wins_table([c], ["MST"])


def test_paired_interval_is_students_t_over_the_seeds_gains():
    vanilla, strat = [1.0, 1.3, 1.1, 0.9], [0.7, 0.8, 0.9, 0.8]
    rows = pd.concat(
        [
            _runs({("MST", 1.0, "vanilla"): vanilla}),
            _runs({("MST", 1.0, "SEX"): strat}),
        ]
    )
    c = synthesis.compare_strata(rows, "SEX").iloc[0]
    gains = np.subtract(vanilla, strat)
    low, high = stats.t.interval(0.95, 3, loc=gains.mean(), scale=stats.sem(gains))
    assert (c.low, c.high) == pytest.approx((low, high))
    assert bool(c.clear) == bool(low > 0)
    # Closer to a target: the gain is how much closer the stratified run is.
    closer = synthesis.compare_strata(rows, "SEX", target=0.8).iloc[0]
    expected = np.abs(np.subtract(vanilla, 0.8)) - np.abs(np.subtract(strat, 0.8))
    assert closer.gain == pytest.approx(expected.mean())


def test_one_paired_seed_is_never_beyond_doubt():
    one = _runs({("MST", 1.0, "vanilla"): [1.0], ("MST", 1.0, "SEX"): [0.1]})
    c = synthesis.compare_strata(one, "SEX").iloc[0]
    assert bool(c.better) and not bool(c.clear) and math.isnan(c.low)


def test_unpaired_seeds_are_left_out_of_the_interval():
    rows = pd.concat(
        [
            _runs({("MST", 1.0, "vanilla"): [1.0, 1.0, 1.0]}),
            _runs({("MST", 1.0, "SEX"): [0.5, 0.5]}),  # seeds 0 and 1 only
        ]
    )
    c = synthesis.compare_strata(rows, "SEX").iloc[0]
    assert c.paired_seeds == 2


def test_compare_strata_needs_seeds():
    with pytest.raises(ValueError, match="seed"):
        synthesis.compare_strata(RUNS.drop(columns="seed"), "RAC1P")


@pytest.mark.parametrize(
    ("tally", "verdict"),
    [
        (synthesis.WinTally(0, 0, 0, 0), "not comparable"),
        (synthesis.WinTally(1, 5, 1, 1, clear_wins=0, clear_losses=3), "differs"),
        # 2 losses beyond doubt of 4: at most half could be wins.
        (synthesis.WinTally(2, 4, 0, 0, clear_wins=1, clear_losses=2), "differs"),
        (synthesis.WinTally(3, 5, 2, 0, clear_wins=3, clear_losses=0), "reproduces"),
        # Most raw wins, but only 2 of 5 beyond doubt: the undecided could swing it.
        (synthesis.WinTally(4, 5, 0, 0, clear_wins=2, clear_losses=0), "inconclusive"),
        (synthesis.WinTally(1, 5, 0, 0, clear_wins=0, clear_losses=2), "inconclusive"),
    ],
)
def test_claim_verdict_reads_the_intervals(tally, verdict):
    found, note = synthesis.claim_verdict(tally)
    assert found == verdict
    assert found in VERDICTS
    assert note  # every verdict says why


def test_claim_table():
    table = synthesis.claim_table(
        {
            "lower error, sex": synthesis.WinTally(1, 6, 2, 1, 0, 4),
            "lower error, race": synthesis.WinTally(5, 6, 0, 0, 4, 0),
        }
    )
    assert table.columns.tolist() == [
        "the paper",
        "ours: stratified better",
        "beyond doubt: better / worse",
        "verdict",
        "note",
    ]
    assert table["ours: stratified better"].tolist() == ["1 of 6", "5 of 6"]
    assert table["beyond doubt: better / worse"].tolist() == ["0 / 4", "4 / 0"]
    assert table["verdict"].tolist() == ["differs", "reproduces"]
    with pytest.raises(ValueError, match="no claims"):
        synthesis.claim_table({})
    with pytest.raises(TypeError, match="WinTally"):
        synthesis.claim_table({"a claim": (1, 6)})
    with pytest.raises(TypeError, match="mapping"):
        synthesis.claim_table([("a claim", synthesis.WinTally(1, 2, 0, 0))])


def test_stored_paper_run_tally():
    """The headline of the synthesis chapter, on the stored paper profile."""
    tab = stored_table("strat_synth", "paper")
    parity = tab[(tab.metric == "mean_parity_error") & (tab.group == "all")]
    compared = pd.concat(
        synthesis.compare_strata(parity[parity.grouping == g], g)
        for g in ("SEX", "RAC1P", "SEX_RAC1P")
    )
    t = synthesis.win_tally(compared)
    assert (t.wins, t.total) == (5, 108)
    assert t.clear_wins <= t.wins
    assert t.clear_losses > t.total // 2
    assert synthesis.claim_verdict(t)[0] == "differs"


# ------------------------------------------------ hand-made strat_synth tables (known)


def _tab(cells: dict[tuple, list[float]], **fixed) -> pd.DataFrame:
    """A strat_synth-like table: (synthesizer, strata, epsilon) → values per seed."""
    base = {"dataset": "NY", "metric": "m", "grouping": "overall", "group": "all"}
    base |= fixed
    rows = [
        base
        | {"synthesizer": syn, "strata": strata, "epsilon": eps, "seed": s, "value": v}
        for (syn, strata, eps), vs in cells.items()
        for s, v in enumerate(vs)
    ]
    return pd.DataFrame(rows)


TAB = _tab(
    {
        ("MST", "vanilla", 1.0): [1.0, 3.0],
        ("MST", "SEX", 1.0): [2.0, 2.0],
        ("MST", "vanilla", 5.0): [0.5, 0.5],
        ("MST", "SEX", 5.0): [0.25, 0.25],
    }
)


def test_seed_lists_and_partial_seeds():
    assert synthesis.seed_lists(TAB) == {"NY": [0, 1]}
    # One seed: fine, and said as one.
    assert synthesis.seed_lists(TAB[TAB.seed == 1]) == {"NY": [1]}
    # A seed that lacks a cell another seed has is a partial run: refused.
    partial = TAB.drop(index=TAB.index[-1])
    with pytest.raises(ValueError, match=r"seeds \[1\] of 'NY'"):
        synthesis.seed_lists(partial)
    with pytest.raises(ValueError, match="seed"):
        synthesis.seed_lists(TAB.drop(columns="seed"))
    with pytest.raises(ValueError, match="empty"):
        synthesis.seed_lists(TAB.iloc[:0])


def test_curve_means_over_the_seeds():
    c = synthesis.curve(TAB, "m", dataset="NY")
    assert c.loc[("MST", "vanilla", 1.0)].tolist() == [2.0, pytest.approx(2**0.5), 2]
    one = synthesis.curve(TAB[TAB.seed == 0], "m", dataset="NY")
    assert one["count"].eq(1).all() and one["std"].isna().all()
    with pytest.raises(ValueError, match="metric 'other'"):
        synthesis.curve(TAB, "other", dataset="NY")
    with pytest.raises(ValueError, match="on 'NM'"):
        synthesis.curve(TAB, "m", dataset="NM")
    with pytest.raises(ValueError, match="value"):
        synthesis.curve(TAB.drop(columns="value"), "m", dataset="NY")


def test_compare_metric_selects_and_compares():
    c = synthesis.compare_metric(TAB, "m", "overall", strata="SEX")
    assert c.loc[("NY", "MST", 1.0), ["strat", "vanilla"]].tolist() == [2.0, 2.0]
    assert c.better.tolist() == [False, True]
    higher = synthesis.compare_metric(TAB, "m", "overall", strata="SEX", lower=False)
    assert higher.better.tolist() == [False, False]  # a tie is no win either way
    # The largest |difference| of means and the ratios at one ε.
    assert synthesis.largest_gap(c, epsilon=1.0) == 0.0
    assert synthesis.largest_gap(c, epsilon=5.0) == 0.25
    assert synthesis.ratio_range(c, epsilon=5.0) == (0.5, 0.5)
    assert synthesis.at_epsilon(c, 5.0).strat.tolist() == [0.25]
    with pytest.raises(ValueError, match="ε = 2"):
        synthesis.largest_gap(c, epsilon=2.0)
    with pytest.raises(ValueError, match="ε = 2"):
        synthesis.ratio_range(c, epsilon=2.0)
    # The group filter: a parity table's per-group rows are not the grouping's value.
    with pytest.raises(ValueError, match="grouping 'SEX'"):
        synthesis.compare_metric(TAB, "m", "SEX")


def test_real_value_and_majority_rate():
    real = pd.DataFrame(
        {
            "metric": ["a", "a", "b"],
            "grouping": ["overall", "RAC1P", "overall"],
            "group": "all",
            "value": [0.1, 0.2, 0.3],
        }
    )
    assert synthesis.real_value(real, "a", grouping="RAC1P") == 0.2
    with pytest.raises(ValueError, match="0 rows"):
        synthesis.real_value(real, "c")
    with pytest.raises(ValueError, match="2 rows"):
        synthesis.real_value(pd.concat([real, real]), "a")
    with pytest.raises(ValueError, match="value"):
        synthesis.real_value(real.drop(columns="value"), "a")
    assert synthesis.majority_rate(pd.Series([0, 0, 0, 1])) == 0.75
    assert synthesis.majority_rate(pd.Series([1, 1])) == 1.0  # all equal
    with pytest.raises(ValueError, match="no labels"):
        synthesis.majority_rate(pd.Series([], dtype=float))


# ----------------------------------------------------------- hand-made group sizes

SIZES = pd.DataFrame(
    [
        {"dataset": d, "grouping": g, "group": code, "split": split, "count": n}
        for d, g, code, split, n in [
            ("NY-sample", "SEX", "0", "train", 60),
            ("NY-sample", "SEX", "1", "train", 40),
            ("NY-sample", "RAC1P", "0", "train", 90),
            ("NY-sample", "RAC1P", "5", "train", 8),
            ("NY-sample", "RAC1P", "1", "train", 2),
            ("NY-sample", "RAC1P", "0", "test", 30),
            ("NY-sample", "RAC1P", "5", "test", 0),
            ("NM", "SEX", "0", "train", 500),
            ("NM", "SEX", "1", "train", 30),
            ("NM", "RAC1P", "0", "train", 300),
            ("NM", "RAC1P", "2", "train", 200),  # absent from NY: NaN there
            ("NM", "RAC1P", "5", "train", 20),
        ]
    ]
)


def test_group_names():
    assert synthesis.group_name("RAC1P", "5") == "Asian"
    assert synthesis.group_name("SEX_RAC1P", "1-8") == "female × Two or more"
    for bad in [("SEX", "2"), ("SEX_RAC1P", "1"), ("RAC1P", "0-1")]:
        with pytest.raises(ValueError, match="is not a group"):
            synthesis.group_name(*bad)


def test_group_size_helpers():
    assert synthesis.small_groups(SIZES, dataset="NY-sample", grouping="RAC1P") == (
        2,
        3,
    )
    assert synthesis.small_groups(
        SIZES, dataset="NY-sample", grouping="RAC1P", split="test", below=1
    ) == (1, 2)
    shares = synthesis.group_shares(SIZES, dataset="NY-sample", grouping="SEX")
    assert shares.tolist() == [0.6, 0.4]
    assert synthesis.smallest_group(SIZES, grouping="SEX") == 30  # any data set
    assert synthesis.groups_below(
        SIZES, dataset="NY-sample", grouping="RAC1P", below=20
    ) == [("Black", 2), ("Asian", 8)]
    assert synthesis.groups_below(SIZES, dataset="NM", grouping="RAC1P", below=5) == []
    # Groups with more records in NM; a group absent from NY is not "more".
    assert synthesis.larger_groups(SIZES, dataset="NM", than="NY-sample") == [
        "White",
        "Asian",
    ]
    assert synthesis.second_largest_group(SIZES, dataset="NM", other="NY-sample")[
        :2
    ] == (
        "American Indian",
        200.0,
    )
    for call in [
        lambda: synthesis.small_groups(SIZES, dataset="CA", grouping="SEX"),
        lambda: synthesis.group_shares(SIZES, dataset="NM", grouping="SEX_RAC1P"),
        lambda: synthesis.groups_below(SIZES, dataset="CA", grouping="SEX", below=3),
        lambda: synthesis.larger_groups(SIZES, dataset="CA", than="NM"),
        lambda: synthesis.smallest_group(SIZES, grouping="SEX", split="test"),
        lambda: synthesis.second_largest_group(SIZES, dataset="CA", other="NM"),
    ]:
        with pytest.raises(ValueError, match="sizes has no"):
            call()
    with pytest.raises(ValueError, match="count"):
        synthesis.group_size_table(SIZES.drop(columns="count"))
    table = synthesis.group_size_table(SIZES)
    assert table.columns.tolist() == [
        "grouping",
        "group",
        "New York sample, train",
        "New York sample, test",
        "New Mexico, train",
    ]
    white = table[table.group == "White"].iloc[0]
    assert (white["New York sample, train"], white["New Mexico, train"]) == (
        "90",
        "300",
    )
    # A group absent from a data set shows as nan there, not as 0.
    assert table[table.group == "American Indian"].iloc[0][
        "New York sample, train"
    ] == ("nan")


# ------------------------------------------------- groups without test records (bound)


def _people(race: list[int]) -> pd.DataFrame:
    from dpnotes.data.employment import EMPLOYMENT_DOMAIN

    frame = pd.DataFrame({a: [0] * len(race) for a in EMPLOYMENT_DOMAIN})
    frame["RAC1P"] = race
    return frame


def test_absent_groups_and_their_bound():
    from dpnotes.data.employment import EMPLOYMENT_DOMAIN

    train, test = _people([0, 1]), _people([0])
    assert synthesis.absent_groups(train, test, "RAC1P") == [1]
    assert synthesis.absent_groups(train, train, "RAC1P") == []
    assert synthesis.absent_groups(train, test, "SEX") == []  # every row male
    with pytest.raises(ValueError, match="grouping"):
        synthesis.absent_groups(train, test, "AGEP")
    # At the real overall means only RAC1P's mean differs: code 2 against 1.5.
    assert synthesis.absent_term_bound(train, "RAC1P", [1], 0.0) == pytest.approx(
        0.5 / 2 / 10
    )
    # A large workload error saturates every variable's move at its whole range.
    big = sum(s - 1 for a, s in EMPLOYMENT_DOMAIN.items() if a != "RAC1P") + 7 / 2
    assert synthesis.absent_term_bound(train, "RAC1P", [1], 1.0) == pytest.approx(
        big / 10
    )


def test_absent_check_counts_the_rises_within_the_bound():
    train, test = _people([0, 1, 0]), _people([0, 0])
    parity = _tab(
        {
            ("MST", "vanilla", 1.0): [1.0, 1.0],
            ("MST", "RAC1P", 1.0): [1.01, 1.01],  # a rise within the bound
            ("MST", "vanilla", 5.0): [1.0, 1.0],
            ("MST", "RAC1P", 5.0): [9.0, 9.0],  # far above it
        },
        metric="mean_parity_error",
        grouping="RAC1P",
    )
    wl = _tab(
        {("MST", "RAC1P", e): [0.0, 0.0] for e in (1.0, 5.0)},
        metric="workload_error",
    )
    check = synthesis.absent_check(
        pd.concat([parity, wl]), {"NY": (train, test)}, groupings=["RAC1P"]
    )
    assert (check.above, check.flips, check.total) == (1, 1, 2)
    assert check.datasets == ("NY",)
    assert check.table["above the bound"].tolist() == ["1 of 2"]
    none = synthesis.absent_check(parity, {"NY": (train, train)}, groupings=["RAC1P"])
    assert (none.total, none.datasets, len(none.table)) == (0, (), 0)
    with pytest.raises(ValueError, match="workload_error"):
        synthesis.absent_check(parity, {"NY": (train, test)}, groupings=["RAC1P"])


# -------------------------------------------- the stored results: what the chapter says

RESULTS = ROOT / "book" / "_results"


@pytest.fixture(scope="module")
def stored():
    """The stored paper profile (complete), its group sizes and the authors'-way run."""
    tab = stored_table("strat_synth", "paper")
    sizes = stored_table("synth_group_sizes", "quick")
    conv_dir = RESULTS / "strat_synth" / "paper@parity=authors"
    cfg = json.loads((conv_dir / "meta.json").read_text())["config"]
    ct, pending = synthesis.whole_blocks(
        stored_table("strat_synth", "paper@parity=authors"),
        stratifications=cfg["stratifications"],
        epsilons=cfg["epsilons"],
        seeds=cfg["seeds"],
    )
    return tab, sizes, ct, pending


def test_stored_group_sizes(stored):
    _, sizes, _, _ = stored
    assert synthesis.small_groups(sizes, dataset="NY-sample", grouping="SEX_RAC1P") == (
        7,
        18,
    )
    assert synthesis.small_groups(
        sizes, dataset="NY-sample", grouping="RAC1P", split="test"
    ) == (4, 9)
    assert synthesis.smallest_group(sizes, grouping="SEX") == 6011
    shares = synthesis.group_shares(sizes, dataset="NY-sample", grouping="SEX")
    assert [round(100 * x, 1) for x in (shares.min(), shares.max())] == [46.9, 53.1]
    assert synthesis.groups_below(
        sizes, dataset="NY-sample", grouping="RAC1P", below=100
    ) == [
        ("Alaska Native", 2),
        ("NH/PI", 5),
        ("AI/AN other", 20),
        ("American Indian", 38),
    ]
    assert synthesis.larger_groups(sizes, dataset="NM", than="NY-sample") == [
        "American Indian",
        "AI/AN other",
        "NH/PI",
    ]
    assert synthesis.second_largest_group(sizes, dataset="NM", other="NY-sample") == (
        "American Indian",
        1991.0,
        38.0,
    )
    table = synthesis.group_size_table(sizes)
    assert len(table) == 11 and table.iloc[0].tolist() == [
        "SEX",
        "male",
        "7,504",
        "1,929",
        "6,011",
        "1,521",
    ]


def test_stored_accuracy_and_parity_comparisons(stored):
    tab = stored[0]
    assert synthesis.seed_lists(tab) == {
        "NY-sample": [0, 1, 2, 3, 4],
        "NM": [0, 1, 2, 3, 4],
    }
    acc = pd.concat(
        synthesis.compare_metric(
            tab,
            "logistic:accuracy",
            "overall",
            strata=g,
            dataset="NY-sample",
            lower=False,
        )
        for g in ("SEX", "RAC1P")
    )
    t = synthesis.win_tally(acc)
    assert (t.ties, t.total) == (36, 36)
    assert round(synthesis.largest_gap(acc), 3) == 0.006
    pe = {
        g: synthesis.compare_metric(tab, "mean_parity_error", g, dataset="NY-sample")
        for g in ("SEX", "RAC1P", "SEX_RAC1P")
    }
    race = pd.concat([pe["RAC1P"], pe["SEX_RAC1P"]])
    assert [round(x, 1) for x in synthesis.ratio_range(race)] == [2.2, 2.8]
    assert synthesis.win_tally(race).wins == 0  # race strata never lower a parity error
    sex = synthesis.win_tally(pe["SEX"])
    assert (sex.ties, sex.total, sex.wins) == (15, 18, 2)
    # The prose: most sex comparisons are near ties and stratifying wins few.
    assert 2 * sex.ties > sex.total and 2 * sex.wins < sex.total
    wl = synthesis.compare_metric(
        tab, "workload_error", "overall", strata="RAC1P", dataset="NY-sample"
    )
    wlpe = synthesis.compare_metric(
        tab, "workload_parity_error", "RAC1P", dataset="NY-sample"
    )
    assert str(synthesis.win_tally(wl)) == "2 of 18"
    assert str(synthesis.win_tally(wlpe)) == "0 of 18"
    nm = pd.concat(
        synthesis.compare_metric(tab, "mean_parity_error", g, dataset="NM")
        for g in ("RAC1P", "SEX_RAC1P")
    )
    assert str(synthesis.win_tally(nm)) == "0 of 36"
    nm_acc = synthesis.win_tally(
        synthesis.compare_metric(
            tab,
            "logistic:accuracy",
            "overall",
            strata="RAC1P",
            dataset="NM",
            lower=False,
        )
    )
    assert (nm_acc.ties, nm_acc.total) == (18, 18)


def test_stored_own_grouping_headline(stored):
    tab = stored[0]
    own = synthesis.own_grouping_comparisons(tab)
    assert list(own) == ["SEX", "RAC1P", "SEX_RAC1P"]
    allc = pd.concat(own.values())
    t = synthesis.win_tally(allc)
    assert (str(t), t.clear_wins, t.clear_losses) == ("5 of 108", 5, 76)
    assert t.outcome == "loses"
    by_data = synthesis.win_tally(allc, by="dataset")
    assert {d: str(v) for d, v in by_data.items()} == {
        "NM": "3 of 54",
        "NY-sample": "2 of 54",
    }
    assert str(synthesis.win_tally(own["SEX"])) == "5 of 36"
    # The GEM factor stays below 1: stratifying raises GEM's parity error.
    ratio = synthesis.gem_reduction(tab, dataset="NY-sample")
    assert (round(ratio.min(), 2), round(ratio.max(), 2)) == (0.31, 0.39)
    assert round(synthesis.accuracy_gap(tab, min_epsilon=1.0), 4) == 0.0079
    best = synthesis.lowest_variants(tab, dataset="NY-sample")
    assert len(best) == 6 and set(best.synthesizer) == {"MST"}


def test_stored_authors_convention(stored):
    tab, _, ct, pending = stored
    assert pending.empty
    groupings = ["SEX", "RAC1P", "SEX_RAC1P"]
    conv_c = synthesis.convention_comparisons(ct, groupings)
    conv = synthesis.convention_tally(
        conv_c, datasets=["NY-sample", "NM"], synthesizers=["MST", "AIM", "GEM"]
    )
    assert {k: str(v) for k, v in conv.total.items()} == {
        "ours": "9 of 108",
        "authors": "15 of 108",
    }
    assert [
        (t["ours"].wins, t["authors"].wins, t["ours"].total)
        for _, t in conv.by_synth.values()
    ] == [(6, 8, 36), (1, 3, 36), (2, 4, 36)]
    assert len(conv.table) == 22 and conv.table.iloc[0].tolist() == [
        "MST",
        "New York sample",
        "SEX",
        "3 of 6",
        "1 of 6",
    ]
    # The paragraph: the authors' way wins more, still fewer than half.
    assert conv.total["ours"].wins < conv.total["authors"].wins
    assert 2 * conv.total["authors"].wins < conv.total["authors"].total
    wins, top, race_ours = synthesis.convention_flips(conv_c, top_epsilon=5.0)
    assert (len(wins), top, race_ours.wins) == (7, 4, 0)
    refit = synthesis.refit_check(ct, tab, seeds=[0, 1])
    assert refit.rows == refit.conv_rows > 0 and refit.others_same
    assert (len(refit.gem_same), int(refit.gem_same.sum())) == (96, 0)
    assert (round(refit.gem_gap, 3), round(refit.seed_gap, 3)) == (0.158, 0.255)
    assert synthesis.remaining_fit_hours(tab, [], seeds=[0, 1]) == 0.0
    f7 = synthesis.largest_error(ct)
    assert f7.steps == 5 and f7.gradual and f7.stratified_above
    assert list(f7.rises.values()) == [1, 1, 1, 0, 1, 0]
    authors = [round(f) for k, f in f7.factors.items() if k[2] == "authors'"]
    ours = [round(f, 1) for k, f in f7.factors.items() if k[2] == "ours"]
    assert authors == [10, 8, 25, 69, 15, 59] and ours == [1.0, 1.2, 0.9, 1.0, 1.0, 1.1]
    # "Steeply" against "only".
    assert min(authors) > 5 and max(ours) < 2
    # The paper beside ours: Verdicts judged by the paired intervals.
    checks = synthesis.stratified_checks(
        tab,
        stored[1],
        dataset="NY-sample",
        real_accuracy=0.743,
        real_test_n=4000,
        convention=conv,
        largest=f7,
        convention_seeds=[0, 1],
    )
    from dpnotes.report import verdict_counts_text

    table = compact_frame(checks)
    assert verdict_counts_text(table) == (
        "of 18 comparisons, 3 reproduce, 10 differ, 1 is inconclusive and 4 are not "
        "comparable"
    )
    assert table.columns.tolist() == [
        "quantity",
        "paper",
        "authors' files",
        "ours: mean ± sd [95% interval]",
        "seeds",
        "verdict",
        "why",
    ]
    assert table.verdict.tolist()[:6] == [
        "not comparable",
        "not comparable",
        "reproduces",
        "differs",
        "differs",
        "differs",
    ]
    by_q = table.set_index("quantity")
    own = by_q.loc["Figure 5: own-group parity error, all"]
    assert own["ours: mean ± sd [95% interval]"] == "5 of 108 (5 better beyond doubt)"
    assert (own["authors' files"], own["seeds"]) == ("26 of 54", "5")
    assert own["why"] == "worse beyond doubt in 76 of 108 comparisons"
    # The real-data accuracy: one fit, its binomial interval over the test records.
    real = table.quantity.str.startswith("Figure 4: accuracy trained").idxmax()
    assert table.quantity[real].endswith("(n\u00a0=\u00a04,000)")
    assert table.loc[real, "seeds"] == "1"
    assert "[0.729,\u00a00.757]" in table.loc[real, "ours: mean ± sd [95% interval]"]
    gap = by_q.loc["Figure 4: accuracy gap, ε ≥ 1"]
    assert gap["verdict"] == "reproduces"
    assert gap["ours: mean ± sd [95% interval]"].startswith("largest 0.0079; 36 of 36")
    # "Harms utility only for ε < 0.1": at ε = 0.1 sex × race strata cost up to 4
    # points, beyond doubt for 2 of the 6 synthesizers and data sets (the review's
    # "1.6 to 4.0" holds for 5 of them; New Mexico's GEM gains 0.1).
    low = by_q.loc["Figure 4: accuracy with sex × race strata, ε = 0.1"]
    assert (low["verdict"], low["seeds"]) == ("differs", "5")
    assert low["ours: mean ± sd [95% interval]"] == (
        "stratified − none -0.0397 to +0.0009; 2 of 6 worse beyond doubt"
    )
    assert low["authors' files"] == "-0.0217, -0.0185, +0.0064"
    assert low["why"] == (
        "lower beyond doubt in 2 of 6 (logistic, per synthesizer and data set)"
    )
    authors_way = by_q.loc["Figure 5 scored the authors' way"]
    assert authors_way["verdict"] == "inconclusive"
    assert authors_way["seeds"] == "2"
    assert not table.isna().any().any()
    assert "nan" not in table.to_string()
    with pytest.raises(ValueError, match="convention_seeds"):
        synthesis.stratified_checks(
            tab,
            stored[1],
            dataset="NY-sample",
            real_accuracy=0.743,
            real_test_n=4000,
            convention=conv,
            largest=f7,
            convention_seeds=[],
        )
    with pytest.raises(ValueError, match="SEX_RAC1P"):
        synthesis.stratified_checks(
            tab,
            stored[1][stored[1].grouping != "SEX_RAC1P"],
            dataset="NY-sample",
            real_accuracy=0.743,
            real_test_n=4000,
            convention=conv,
            largest=f7,
            convention_seeds=[0, 1],
        )


def test_stored_race_ratios(stored):
    tab, sizes, _, _ = stored
    ratio, unweighted, eps = synthesis.race_ratios(tab, sizes, epsilon=1.0)
    assert eps == 1.0
    assert list(zip(unweighted.dataset, unweighted.group.astype(str), strict=True)) == [
        ("NY-sample", "3")
    ]
    s = synthesis.ratio_summary(ratio, small=100)
    assert (s.small_raised, s.small_total, s.large_raised, s.large_total) == (
        18,
        18,
        21,
        33,
    )
    assert round(s.worst["ratio"], 2) == 1.90 and s.worst["synthesizer"] == "GEM"
    assert (s.helped_min, s.helped, s.helped_of) == (815, 12, 18)
    # The paragraphs: every small group is hurt, most larger ones too, and the loss
    # does not shrink steadily with size; only larger groups are ever helped.
    assert 2 * s.large_raised > s.large_total and s.helped_all_large
    assert s.worst["ratio"] > s.small_median
    assert s.table["median ratio"].tolist() == ["1.55", "1.32"]
    assert s.table["median error: race strata / none"].tolist() == [
        "1.78 / 1.11",
        "0.243 / 0.207",
    ]
    # An ε not computed falls back to the largest computed.
    assert synthesis.race_ratios(tab, sizes, epsilon=2.0)[2] == 5.0


# ------------------------------------ hand-made: partial runs and the two conventions


def _conv(cells: dict[tuple, tuple[float, float]], seeds=(0, 1)) -> pd.DataFrame:
    """Parity errors both ways: (synthesizer, strata, eps) → (ours, theirs)."""
    parts = []
    for name, k in [("mean_parity_error", 0), ("mean_parity_error_authors", 1)]:
        parts.append(
            _tab(
                {key: [v[k]] * len(seeds) for key, v in cells.items()},
                metric=name,
                grouping="SEX",
            )
        )
    return pd.concat(parts, ignore_index=True)


CONV = _conv(
    {
        ("MST", "vanilla", 1.0): (1.0, 10.0),
        ("MST", "SEX", 1.0): (2.0, 5.0),  # worse our way, better theirs
        ("MST", "vanilla", 5.0): (1.0, 10.0),
        ("MST", "SEX", 5.0): (0.5, 20.0),  # better our way, worse theirs
    }
)


def test_whole_blocks_keeps_complete_seeds_only():
    ct, pending = synthesis.whole_blocks(
        CONV, stratifications=["vanilla", "SEX"], epsilons=[1.0, 5.0], seeds=[0, 1]
    )
    assert len(ct) == len(CONV) and pending.empty
    # Seed 1 of MST loses a cell: one whole seed is not enough for a two-seed profile.
    partial = CONV.drop(index=CONV.index[(CONV.seed == 1) & (CONV.epsilon == 5.0)])
    ct, pending = synthesis.whole_blocks(
        partial, stratifications=["vanilla", "SEX"], epsilons=[1.0, 5.0], seeds=[0, 1]
    )
    assert ct.empty and pending.to_dict() == {("MST", "NY"): 6}
    # A one-seed profile counts its one whole seed.
    ct, pending = synthesis.whole_blocks(
        partial, stratifications=["vanilla", "SEX"], epsilons=[1.0, 5.0], seeds=[0]
    )
    assert set(ct.seed) == {0} and pending.to_dict() == {("MST", "NY"): 2}
    with pytest.raises(ValueError, match="seeds is empty"):
        synthesis.whole_blocks(
            CONV, stratifications=["vanilla"], epsilons=[1.0], seeds=[]
        )
    with pytest.raises(ValueError, match="metric"):
        synthesis.whole_blocks(
            CONV.drop(columns="metric"), stratifications=[], epsilons=[], seeds=[0]
        )


def test_convention_tally_and_flips():
    conv_c = synthesis.convention_comparisons(CONV, ["SEX"])
    t = synthesis.convention_tally(conv_c, datasets=["NY"], synthesizers=["MST"])
    assert {k: str(v) for k, v in t.total.items()} == {
        "ours": "1 of 2",
        "authors": "1 of 2",
    }
    assert t.table.to_dict("records")[0] == {
        "synthesizer": "MST",
        "data set": "NY",
        "grouping": "SEX",
        "our convention": "1 of 2",
        "authors' convention": "1 of 2",
    }
    assert len(t.table) == 2  # one synthesizer: no "all" row
    with pytest.raises(ValueError, match="conventions"):
        synthesis.convention_tally(
            {"ours": conv_c["ours"]}, datasets=["NY"], synthesizers=["MST"]
        )
    # No race grouping here: the flips need one.
    with pytest.raises(ValueError, match="race"):
        synthesis.convention_flips(conv_c, top_epsilon=5.0)
    race = {name: {"RAC1P": c["SEX"]} for name, c in conv_c.items()}
    wins, top, ours = synthesis.convention_flips(race, top_epsilon=5.0)
    assert wins.index.get_level_values("epsilon").tolist() == [1.0] and top == 0
    assert str(ours) == "1 of 2"


def test_refit_check_finds_changed_cells():
    tab = CONV[CONV.metric == "mean_parity_error"].assign(synthesizer="GEM")
    refit = synthesis.refit_check(tab, tab, seeds=[0, 1])
    assert refit.rows == refit.conv_rows == 8 and bool(refit.gem_same.all())
    assert refit.gem_gap == 0.0 and refit.seed_gap == 0.0  # all seeds equal
    moved = tab.assign(value=tab.value + 0.5 * (tab.seed == 1))
    refit = synthesis.refit_check(moved, tab, seeds=[0, 1])
    assert int(refit.gem_same.sum()) == 4 and refit.gem_gap == 0.25
    assert refit.others_same  # no other synthesizer
    with pytest.raises(ValueError, match="seeds"):
        synthesis.refit_check(tab, tab, seeds=[])


def test_largest_error_reads_falls_and_rises():
    rows = []
    for metric, scale in [("max_mean_error", 1.0), ("max_mean_error_authors", 10.0)]:
        for strata, values in [
            ("vanilla", [2.0, 1.0, 0.5]),
            ("SEX_RAC1P", [4.0, 4.0, 1.0]),
        ]:
            rows.append(
                _tab(
                    {
                        ("MST", strata, e): [scale * v]
                        for e, v in zip([0.1, 1.0, 5.0], values, strict=True)
                    },
                    metric=metric,
                    grouping="SEX_RAC1P",
                )
            )
    f7 = synthesis.largest_error(pd.concat(rows))
    assert f7.steps == 2
    # A flat step is no fall: it counts as a rise.
    assert f7.rises == {("NY", "MST", "authors'"): 1}
    assert f7.factors == {("NY", "MST", "ours"): 4.0, ("NY", "MST", "authors'"): 4.0}
    assert f7.gradual and f7.stratified_above
    assert f7.table.columns.tolist()[-3:] == ["ε = 0.1", "ε = 1", "ε = 5"]
    with pytest.raises(ValueError, match="max_mean_error"):
        synthesis.largest_error(CONV)


def test_race_ratios_by_size():
    wl = _tab(
        {
            ("MST", "vanilla", 1.0): [1.0, 1.0],
            ("MST", "RAC1P", 1.0): [2.0, 2.0],
        },
        metric="workload_error",
        grouping="RAC1P",
        group="5",
    )
    wl2 = wl.assign(group="0", value=wl.value.where(wl.strata == "vanilla", 0.5))
    wl3 = wl.assign(group="1")  # no test records: left out
    ratio, unweighted, eps = synthesis.race_ratios(
        pd.concat([wl, wl2, wl3]),
        SIZES[SIZES.dataset == "NY-sample"].assign(dataset="NY"),
        epsilon=1.0,
    )
    assert eps == 1.0 and unweighted.group.tolist() == ["5"]
    # Group 1 has no test row at all in SIZES: not merged, so not in either frame.
    assert ratio.set_index("group").ratio.to_dict() == {"0": 0.5}
    s = synthesis.ratio_summary(ratio, small=100)
    assert (s.small_raised, s.small_total, s.helped, s.helped_min) == (0, 1, 1, 90)
    assert s.worst is None and s.table.iloc[0, 0] == "fewer than 100"
    with pytest.raises(ValueError, match="workload error per race group"):
        synthesis.race_ratios(CONV, SIZES)
    with pytest.raises(ValueError, match="train"):
        synthesis.ratio_summary(ratio.drop(columns="train"))


def test_findings_refuse_what_they_cannot_compute():
    with pytest.raises(ValueError, match="mean_parity_error"):
        synthesis.own_grouping_comparisons(TAB)
    with pytest.raises(ValueError, match="logistic:accuracy"):
        synthesis.accuracy_gap(TAB, min_epsilon=1.0)
    acc = TAB.assign(metric="logistic:accuracy")
    assert synthesis.accuracy_gap(acc, min_epsilon=1.0) == 0.25
    with pytest.raises(ValueError, match="ε ≥ 10"):
        synthesis.accuracy_gap(acc, min_epsilon=10.0)
    pe = TAB.assign(metric="mean_parity_error", grouping="SEX_RAC1P")
    with pytest.raises(ValueError, match="no GEM"):
        synthesis.gem_reduction(
            pe.assign(strata=pe.strata.replace("SEX", "SEX_RAC1P")), dataset="NY"
        )
    best = synthesis.lowest_variants(pe, dataset="NY")
    # A tie at ε = 1 goes to the first in sorted order.
    assert best.strata.tolist() == ["SEX", "SEX"]


# ------------------------------------------------------ the synthesizers chapter


def test_whole_value_bins_and_code_zero():
    assert synthesis.whole_value_bins("AGEP", 17, 89) == [
        "17–31",
        "32–45",
        "46–60",
        "61–74",
        "75–89",
    ]
    assert synthesis.whole_value_bins("SCHL", 1, 24)[2] == "11–14"
    with pytest.raises(ValueError, match="unknown attribute"):
        synthesis.whole_value_bins("AGE", 17, 89)
    with pytest.raises(ValueError, match="above"):
        synthesis.whole_value_bins("AGEP", 89, 17)
    with pytest.raises(ValueError, match="holds no whole value"):
        synthesis.whole_value_bins("AGEP", 17, 20)  # the top bins stay empty
    # Table 2's shift by the paper's lowest value needs code 0 to be that value.
    from dpnotes.data.employment import employment_labels

    labels = employment_labels()
    assert [labels[a][0] for a in ("SEX", "DIS", "ESR")] == [
        "male",
        "disability",
        "not employed",
    ]


def test_table2_checks_shift_by_the_lowest_value():
    from dpnotes.data.employment import EMPLOYMENT_DOMAIN
    from dpnotes.paper_numbers import STRAT_TABLE2

    sample = pd.DataFrame({a: [0, 1] for a in EMPLOYMENT_DOMAIN})
    checks = synthesis.table2_checks(sample)
    assert len(checks) == len(STRAT_TABLE2)
    for check, (attr, (mean, _, lo, _, _)) in zip(
        checks, STRAT_TABLE2.items(), strict=True
    ):
        assert attr in check.quantity and check.paper == mean
        assert check.ours_text == f"{0.5 + lo:.3f}"
        assert check.outcome == "not comparable" and check.reason
    table = compact_frame(checks)
    # A data statistic has no seeds: the table leaves the column out.
    assert table.columns.tolist() == ["quantity", "paper", "ours", "verdict", "why"]
    assert table.paper.tolist()[:2] == ["1.687", "2.834"]
    with pytest.raises(ValueError, match="empty"):
        synthesis.table2_checks(sample.iloc[:0])
    with pytest.raises(ValueError, match="outside"):
        synthesis.table2_checks(sample.assign(SEX=[0, 2]))
    with pytest.raises(ValueError, match="ESR"):
        synthesis.table2_checks(sample.drop(columns="ESR"))


def test_workload_summary_falls_and_trails_by_hand():
    runs = _tab(
        {
            ("MST", "vanilla", 0.5): [0.4, 0.6],
            ("MST", "vanilla", 5.0): [0.45, 0.45],
            ("AIM", "vanilla", 0.5): [0.6, 0.6],
            ("AIM", "vanilla", 5.0): [0.1, 0.1],
            ("AIM", "SEX", 5.0): [9.0, 9.0],  # stratified: not in the summary
        },
        metric="workload_error",
        dataset="NY-sample",
    )
    summary = synthesis.workload_summary(runs)
    assert len(summary) == 4 and summary.value.max() == 0.6
    assert synthesis.errors_fall(summary)
    assert not synthesis.errors_fall(summary.assign(value=1.0))  # all equal: no fall
    fall = synthesis.fall_shares(summary, low=0.5, high=5.0, datasets=["NY-sample"])
    assert fall["NY-sample"].round(4).to_dict() == {"AIM": 0.8333, "MST": 0.1}
    missing = synthesis.fall_shares(summary, low=0.05, high=5.0, datasets=["NY-sample"])
    assert missing.isna().all().all()
    assert synthesis.at_epsilon_wide(summary, 5.0).idxmin(axis=1).tolist() == ["AIM"]
    with pytest.raises(ValueError, match="ε = 2"):
        synthesis.at_epsilon_wide(summary, 2.0)
    table = synthesis.workload_table(
        summary, datasets=["NY-sample"], synthesizers=["MST", "AIM", "GEM"]
    )
    assert table.iloc[0].tolist() == ["New York sample", "0.5", "0.500", "0.600", "–"]
    trails = synthesis.aim_trails(
        summary, n_train={"NY-sample": 16000}, delta=1e-9, datasets=["NY-sample"]
    )
    assert (trails.cells, trails.epsilons) == (2, (0.5,))
    assert trails.table.iloc[0]["training records"] == "16,000"
    with pytest.raises(ValueError, match="AIM and MST"):
        synthesis.aim_trails(
            summary[summary.synthesizer == "MST"], n_train={}, delta=1e-9, datasets=[]
        )
    with pytest.raises(ValueError, match="unstratified"):
        synthesis.workload_summary(runs[runs.strata == "SEX"])


def test_first_noise_scales():
    # Independent closed forms: AIM splits 0.9 rho over 16 d measurements, MST a third
    # of rho over d.
    rho, d = 0.02, 10
    assert synthesis.first_sigma_aim(rho=rho, attributes=d) == pytest.approx(
        (16 * d / (1.8 * rho)) ** 0.5
    )
    assert synthesis.first_sigma_mst(rho=rho, attributes=d) == pytest.approx(
        (3 * d / (2 * rho)) ** 0.5
    )
    ratio = synthesis.first_sigma_aim(
        rho=1.0, attributes=d
    ) / synthesis.first_sigma_mst(rho=1.0, attributes=d)
    assert round(ratio, 2) == 2.43  # "2.4 times MST's noise, at any budget"
    with pytest.raises(TypeError):
        synthesis.first_sigma_aim(rho="1", attributes=d)


def test_draw_added():
    draws = synthesis.draw_added({1.0: {1: 0.11, 30: 0.1}, 5.0: {1: 0.1, 30: 0.1}})
    assert draws["added by the draw"].tolist() == ["10%", "0%"]
    assert draws["added"].tolist() == pytest.approx([0.1, 0.0])
    with pytest.raises(ValueError, match="1 and 30"):
        synthesis.draw_added({1.0: {1: 0.1}})


def test_devices_and_gem_steps():
    accel, cpus = synthesis.stored_devices(
        [{"device": {"accelerator": "none", "cpu": "B"}}, {"device": {"cpu": "A"}}, {}]
    )
    assert accel == {"none", "unknown"} and cpus == ["A", "B", "unknown"]
    with pytest.raises(ValueError, match="metadata"):
        synthesis.stored_devices([])
    steps, same = synthesis.gem_steps([{}, {}])
    assert same and steps > 0
    assert not synthesis.gem_steps([{}, {"rounds": 3}])[1]
    with pytest.raises(ValueError, match="GEM parameters"):
        synthesis.gem_steps([])


def test_stored_synthesizers_chapter(stored):
    tab = stored[0]
    summary = synthesis.workload_summary(tab)
    order = ["NY-sample", "NM"]
    table = synthesis.workload_table(
        summary, datasets=order, synthesizers=["MST", "AIM", "GEM"]
    )
    assert table.iloc[0].tolist() == [
        "New York sample",
        "0.01",
        "0.724",
        "0.703",
        "1.144",
    ]
    assert len(table) == 12
    # The paragraph: every error falls at each step, AIM is lowest at the top, MST
    # gains least from the last tenfold and AIM and GEM halve.
    assert synthesis.errors_fall(summary)
    at_max = synthesis.at_epsilon_wide(summary, 5.0)
    assert (at_max.idxmin(axis=1) == "AIM").all()
    assert [round(at_max.loc[d, "AIM"], 4) for d in order] == [0.0274, 0.0376]
    fall = synthesis.fall_shares(summary, low=0.5, high=5.0, datasets=order)
    assert [f"{fall.loc['MST', d]:.0%}" for d in order] == ["10%", "16%"]
    assert (fall.idxmin() == "MST").all() and (
        fall.drop(index="MST") >= 0.5
    ).all().all()
    trails = synthesis.aim_trails(
        summary, n_train={"NY-sample": 16000, "NM": 12366}, delta=1e-9, datasets=order
    )
    assert (len(trails.table), trails.cells) == (2, 12)
    assert max(trails.epsilons) <= 0.1  # AIM trails MST only at small budgets
    assert trails.table[["σ, MST", "σ, AIM"]].values.tolist() == [
        ["568", "1,383"],
        ["291", "708"],
    ]
    medians = synthesis.fit_times(
        tab, dataset="NY-sample", synthesizers=["MST", "AIM", "GEM"]
    )
    assert medians.columns.tolist() == ["vanilla", "SEX", "RAC1P", "SEX_RAC1P"]
    assert round(medians.loc["GEM", "SEX_RAC1P"], 1) == 388.8
    assert (np.diff(medians.loc["GEM"].to_numpy()) > 0).all()  # grows with the strata
    by_eps = synthesis.fit_times_by_epsilon(tab, dataset="NY-sample")
    assert by_eps["AIM"].iloc[-1] > 2 * by_eps["AIM"].iloc[0]  # AIM slows with ε
    assert by_eps["GEM"].iloc[0] > 1.25 * by_eps["GEM"].iloc[-1]  # GEM slow at small ε
    meta = json.loads((RESULTS / "strat_synth" / "paper" / "meta.json").read_text())
    assert synthesis.stored_devices([meta]) == ({"none"}, ["AMD EPYC"])
    assert synthesis.gem_steps([meta["config"]["params"].get("GEM", {})]) == (
        3100,
        True,
    )


# ------------------------------------- the chapters' sections, texts and figures (new)


def test_checks_frame_folds_the_test_count_and_drops_empty_seeds():
    from dpnotes.findings.verdict import Verdict, estimate

    with_run = Verdict(
        "accuracy", 0.8, estimate([0.75, 0.77], n_test=500), "reproduces", ""
    )
    claim = Verdict(
        "a claim",
        None,
        None,
        "differs",
        "worse beyond doubt",
        claim="stratifying helps",
        ours_text="1 of 6 (0 better beyond doubt)",
        authors="4 of 6",
        extra={"seeds": "5"},
    )
    table = compact_frame([with_run, claim])
    assert table.columns.tolist() == [
        "quantity",
        "paper",
        "authors' files",
        "ours: mean ± sd [95% interval]",
        "seeds",
        "verdict",
        "why",
    ]
    assert table.quantity.tolist() == ["accuracy (n\u00a0=\u00a0500)", "a claim"]
    assert table.seeds.tolist() == ["2", "5"]  # a tally's seeds come from extra
    assert table.iloc[1, 3] == "1 of 6 (0 better beyond doubt)"
    # Data statistics only: no seeds, no test count.
    stat = Verdict("mean", 1.5, None, "not comparable", "another file", ours_text="2")
    stat_table = compact_frame([stat])
    assert "seeds" not in stat_table.columns and stat_table.ours.tolist() == ["2"]
    with pytest.raises(ValueError, match="no verdicts"):
        compact_frame([])


def test_fig4_low_epsilon_row_by_hand():
    # MST's accuracy over three seeds, sex × race strata against none, at ε = 0.1 (the
    # row's) and ε = 1 (the gap row's, equal there).
    sizes = pd.DataFrame(
        [
            {
                "dataset": "NY-sample",
                "grouping": "SEX_RAC1P",
                "group": "1_1",
                "split": "train",
                "count": 30,
            }
        ]
    )

    def row(stratified: list[float]):
        tab = _tab(
            {
                ("MST", "vanilla", 0.1): [0.70, 0.71, 0.72],
                ("MST", "SEX_RAC1P", 0.1): stratified,
                ("MST", "vanilla", 1.0): [0.73, 0.74, 0.75],
                ("MST", "SEX_RAC1P", 1.0): [0.73, 0.74, 0.75],
            },
            dataset="NY-sample",
            metric="logistic:accuracy",
        )
        checks = synthesis._table3_fig4_checks(
            tab, sizes, real_accuracy=0.74, real_test_n=100, seeds=3
        )
        assert (
            checks[-1].quantity == "Figure 4: accuracy with sex × race strata, ε = 0.1"
        )
        return checks[-1]

    # Three points lower in every seed: worse beyond doubt, the claim differs.
    worse = row([0.67, 0.68, 0.69])
    assert (worse.outcome, worse.extra["seeds"]) == ("differs", "3")
    assert worse.ours_text == (
        "stratified − none -0.0300 to -0.0300; 1 of 1 worse beyond doubt"
    )
    assert worse.reason.startswith("lower beyond doubt in 1 of 1")
    # Lower by the mean, but the seeds cannot tell: inconclusive.
    assert row([0.66, 0.72, 0.71]).outcome == "inconclusive"
    # Higher by the mean: the claim holds.
    kept = row([0.72, 0.70, 0.72])
    assert (kept.outcome, kept.reason.split(" (")[0]) == (
        "reproduces",
        "lower in 0 of 1, none beyond doubt",
    )
    # One seed pairs nothing: refused rather than judged.
    with pytest.raises(ValueError, match=r"ε = 0\.1"):
        synthesis._table3_fig4_checks(
            _tab(
                {
                    ("MST", "vanilla", 0.1): [0.70],
                    ("MST", "SEX_RAC1P", 0.1): [0.60],
                    ("MST", "vanilla", 1.0): [0.73, 0.74],
                    ("MST", "SEX_RAC1P", 1.0): [0.73, 0.74],
                },
                dataset="NY-sample",
                metric="logistic:accuracy",
            ),
            sizes,
            real_accuracy=0.74,
            real_test_n=100,
            seeds=1,
        )


def test_claim_rows_follow_claim_verdict():
    t = synthesis.WinTally(1, 6, 1, 1, clear_wins=0, clear_losses=4)
    v = synthesis._claim("q", "the claim", t, seeds=3, authors="2 of 6")
    assert (v.outcome, v.ours_text, v.extra["seeds"]) == (
        "differs",
        "1 of 6 (0 better beyond doubt)",
        "3",
    )
    # Undecided comparisons keep a claim open: inconclusive, never a reproduction.
    open_t = synthesis.WinTally(5, 6, 0, 0, clear_wins=2, clear_losses=0)
    assert synthesis._claim("q", "c", open_t, seeds=2).outcome == "inconclusive"
    none = synthesis._claim("q", "c", synthesis.WinTally(0, 0, 0, 0), seeds=2)
    assert none.outcome == "not comparable"


def test_absent_texts_by_hand():
    check = synthesis.AbsentCheck(pd.DataFrame([{"a": 1}]), 3, 0, 4, ("NY-sample",))
    texts = synthesis.absent_texts(check, ["NY-sample", "NM"])
    assert texts == {
        "absent-above": "3 of these 4",
        "absent-flips": "could not turn any of them in favour of stratifying",
        "absent-clean": "New Mexico has no such group.",
    }
    flips = synthesis.AbsentCheck(pd.DataFrame(), 1, 2, 4, ("NY-sample", "NM"))
    texts = synthesis.absent_texts(flips, ["NY-sample", "NM"])
    assert texts["absent-flips"] == (
        "could turn at most 2 of them in favour of stratifying"
    )
    assert texts["absent-clean"] == ""  # every data set has such a group
    with pytest.raises(TypeError, match="AbsentCheck"):
        synthesis.absent_texts({"above": 1}, ["NM"])


def test_absent_check_on_stored_splits_like_data():
    # The chapter's bound on hand-made splits: a group with training records only.
    train, test = _people([0, 1, 1, 0]), _people([0, 0])
    parity = _tab(
        {
            ("MST", "vanilla", 1.0): [1.0, 1.0],
            ("MST", "RAC1P", 1.0): [2.0, 2.0],
        },
        metric="mean_parity_error",
        grouping="RAC1P",
        dataset="NY-sample",
    )
    wl = _tab(
        {("MST", "RAC1P", 1.0): [0.01, 0.02]},
        metric="workload_error",
        dataset="NY-sample",
    )
    check = synthesis.absent_check(
        pd.concat([parity, wl]), {"NY-sample": (train, test)}, groupings=["RAC1P"]
    )
    assert check.table.columns.tolist() == [
        "strata",
        "groups (training records)",
        "term",
        "bound",
        "least rise",
        "above the bound",
    ]
    row = check.table.iloc[0]
    assert row["strata"] == "RAC1P, New York sample"
    assert row["groups (training records)"] == "Black (2)"
    # The bound grows with the workload error, and the term at W = 0 is below it.
    bound = [
        synthesis.absent_term_bound(train, "RAC1P", [1], w) for w in (0.0, 0.01, 0.02)
    ]
    assert bound[0] < bound[1] < bound[2]
    assert row["term"] == synthesis.fmt(bound[0])
    # One comparison: the bound is the mean of its seeds' bounds.
    mean = synthesis.fmt((bound[1] + bound[2]) / 2)
    assert row["bound"] == f"{mean} to {mean}"
    assert (row["least rise"], row["above the bound"]) == ("1.00", "1 of 1")


def test_section_texts_on_the_stored_runs(stored):
    tab, sizes, ct, _ = stored
    synths = ["MST", "AIM", "GEM"]
    captions, texts = synthesis.run_texts(tab, {"NY-sample": "paper", "NM": "paper"})
    assert list(captions) == ["NY-sample", "NM"]
    assert (
        texts["strat-nseeds"]
        == "5 seeds for the New York sample; 5 seeds for New Mexico"
    )
    assert captions["NM"].startswith("Experiment strat_synth; New Mexico 2018; profile")
    with pytest.raises(ValueError, match="profile"):
        synthesis.run_texts(tab, {"NY-sample": "paper"})
    assert synthesis.size_texts(sizes, "quick")["sizes-tiny"] == "7"
    acc = synthesis.accuracy_section(tab, dataset="NY-sample", synthesizers=synths)
    assert acc.texts == {"acc-ties": "36 of the 36", "acc-gap": "0.006"}
    assert len(acc.table) == 6
    pe = synthesis.parity_section(tab, dataset="NY-sample", synthesizers=synths)
    assert pe.texts == {"pe-ratio": "2.2 to 2.8", "pe-sex-ties": "15 of its 18",
                        "pe-sex-wins": "2"}  # fmt: skip
    wl = synthesis.workload_section(tab, dataset="NY-sample", synthesizers=synths)
    assert wl.texts == {"wl-wins": "2 of 18", "wlpe-wins": "0 of 18"}
    nm = synthesis.nm_section(tab, sizes, synthesizers=synths, n_train=12366)
    assert "stratifying wins 0 of 36 comparisons" in nm.texts["nm-reading"]
    assert "(18 of 18)" in nm.texts["nm-reading"]
    assert "American Indian, with 1,991 training records" in nm.texts["nm-intro"]
    assert len(nm.table) == 12
    own = synthesis.own_texts(tab)
    assert own["own-total"] == "5 of 108"
    assert own["own-clear"] == "5 better and 76 worse"
    assert own["own-by-data"] == (
        "2 of 54 comparisons on the New York sample and 3 of 54 on New Mexico"
    )
    assert own["own-scope"] == "2 data sets, 3 synthesizers and 6 values of ε"
    assert own["sex-own"] == "5 of 36"
    # The authors' stored results, by synthesizer (not "almost all with GEM").
    assert own["authors-own"] == (
        "26 of the 54 comparisons: 16 with GEM, 9 with AIM and 1 with MST"
    )
    f7 = synthesis.largest_error_texts(synthesis.largest_error(ct))
    assert (
        f7["f7-steps"] == "5" and f7["f7-ours-factor"] == "1.0, 1.2, 0.9, 1.0, 1.0, 1.1"
    )
    assert f7["f7-authors-factor"].startswith("10 (AIM, New Mexico)")
    with pytest.raises(TypeError, match="LargestError"):
        synthesis.largest_error_texts(None)


def test_race_section_on_the_stored_runs(stored):
    tab, sizes, _, _ = stored
    race = synthesis.race_section(
        tab,
        sizes,
        profiles={"NY-sample": "paper", "NM": "paper"},
        n_train={"NY-sample": 16000, "NM": 12366},
    )
    t = race.texts
    assert (t["ratio-small-raised"], t["ratio-large-raised"]) == (
        "18 of 18",
        "21 of 33",
    )
    assert (t["ratio-worst"], t["ratio-help-min"], t["ratio-helped"]) == (
        "1.90",
        "815",
        "12 of the 18",
    )
    assert t["ratio-source"] == (
        "Experiment strat_synth, profile paper; New York 2018, 20,000-row sample; "
        "New Mexico 2018; each point a mean over seeds 0–4."
    )
    assert "Alaska Native in the New York sample" in t["ratio-left-out"]
    assert t["sex-shares"] == "46.9% and 53.1%" and t["sex-min"] == "6,011"
    assert t["tiny-race"].startswith("Alaska Native (2), NH/PI (5)")
    assert t["nm-sizes"] == (
        "has fewer training records than the sample (12,366 against 16,000), and more "
        "only in its American Indian, AI/AN other and NH/PI groups"
    )
    with pytest.raises(KeyError):
        synthesis.race_section(tab, sizes, profiles={}, n_train={})


def test_convention_section_on_the_stored_run(stored):
    tab = stored[0]
    conv_dir = RESULTS / "strat_synth" / "paper@parity=authors"
    cfg = json.loads((conv_dir / "meta.json").read_text())["config"]
    run = stored_table("strat_synth", "paper@parity=authors")
    cs = synthesis.convention_section(run, cfg, tab)
    t = cs.texts
    assert (t["conv-ours"], t["conv-authors"]) == ("9 of 108", "15 of 108")
    assert t["conv-by-synth"] == (
        "MST: 6 and 8 of 36; AIM: 1 and 3 of 36; GEM: 2 and 4 of 36"
    )
    assert (t["conv-race-flips"], t["conv-race-top"]) == ("7", "4")
    assert t["conv-pending"] == "" and t["conv-todo"] == "nothing"
    assert t["conv-scope"].startswith(
        "MST, AIM and GEM on the New York sample and New Mexico, at ε = 0.01"
    )
    assert "none of its 96 cells" in t["conv-refit"]
    assert t["conv-authors-own"] == (
        "1 of 18 comparisons for MST and 9 of 18 comparisons for AIM and 16 of 18 "
        "comparisons for GEM"
    )
    assert cs.seeds == [0, 1] and len(cs.epsilons) == 6
    with pytest.raises(ValueError, match="synthesizers"):
        synthesis.convention_section(
            run, {k: v for k, v in cfg.items() if k != "synthesizers"}, tab
        )
    with pytest.raises(ValueError, match="no whole block"):
        synthesis.convention_section(run[run.seed == 0].iloc[:10], cfg, tab)


def test_fairness_section_by_hand():
    fair = _tab(
        {
            ("MST", "vanilla", 1.0): [0.5, 0.5],
            ("MST", "RAC1P", 1.0): [0.2, 0.25],  # closer to the real 0.2
        },
        grouping="RAC1P",
    )
    tab = pd.concat(
        fair.assign(metric=m)
        for m in [
            "label_mean_disparity",
            "logistic:dp_difference",
            "logistic:fnr_difference",
        ]
    )
    real = pd.DataFrame(
        {
            "metric": [
                "label_mean_disparity",
                "logistic:dp_difference",
                "logistic:fnr_difference",
            ],
            "grouping": "RAC1P",
            "group": "all",
            "value": [0.2, 0.3, 0.4],
        }
    )
    sizes = SIZES.assign(dataset="NY")
    section = synthesis.fairness_section(
        tab, dataset="NY", synthesizers=["MST"], real=real, sizes=sizes, n_test=30
    )
    assert section.texts == {
        "fair-wins": "2 of 3",  # the FNR gap: 0.225 is farther from 0.4 than 0.5
        "fair-ties": "0",
        "disp-real": "0.200",
        "dp-real": "0.300",
        "fnr-real": "0.400",
        "test-small": "1 of the 2",
        "test-n": "30",
        "test-nseeds": "2 seeds",
    }
    with pytest.raises(ValueError, match="rows of metric"):
        synthesis.fairness_section(
            tab, dataset="NY", synthesizers=["MST"], real=real.iloc[:1], sizes=sizes,
            n_test=30,
        )  # fmt: skip


def test_figures_draw_one_panel_per_synthesizer():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = synthesis.strata_figure(
        TAB, "m", "error", dataset="NY", logy=True, refs=[(1.0, "real")]
    )
    assert len(fig.axes) == 1 and fig.axes[0].get_ylabel() == "error"
    labels = {t.get_text() for t in fig.legends[0].get_texts()}
    assert {"no strata", "SEX", "real"} <= labels
    plt.close(fig)
    with pytest.raises(ValueError, match="rows of metric"):
        synthesis.strata_figure(TAB, "other", "y", dataset="NY")
    ratio = pd.DataFrame(
        {
            "dataset": ["NY-sample", "NM"],
            "synthesizer": ["MST", "AIM"],
            "train": [10, 1000],
            "ratio": [2.0, 0.8],
        }
    )
    fig = synthesis.ratio_figure(ratio)
    assert [ax.get_title() for ax in fig.axes] == ["New York sample", "New Mexico"]
    plt.close(fig)
    with pytest.raises(ValueError, match="ratio"):
        synthesis.ratio_figure(ratio.drop(columns="ratio"))


def test_real_references_by_hand():
    from dpnotes.data.employment import EMPLOYMENT_DOMAIN

    rng = np.random.default_rng(0)
    people = pd.DataFrame(
        {a: rng.integers(0, s, 120) for a, s in EMPLOYMENT_DOMAIN.items()}
    )
    refs = synthesis.real_references({"NY": (people.iloc[:80], people.iloc[80:])},
                                     classifiers=["logistic"])  # fmt: skip
    r = refs["NY"]
    assert len(r.train) == 80 and len(r.test) == 40
    assert r.majority == synthesis.majority_rate(people.iloc[80:]["ESR"])
    # The evaluation waits for its first reader, then is kept.
    assert "real" not in vars(r)
    assert 0 <= synthesis.real_value(r.real, "logistic:accuracy") <= 1
    assert vars(r)["real"] is r.real
    assert not r.real.metric.str.startswith("boosting:").any()
    with pytest.raises(ValueError, match="ESR"):
        synthesis.real_references({"NY": (people, people.drop(columns="ESR"))})
    # An unknown classifier is refused at once, not when a page first reads it.
    with pytest.raises(ValueError, match="logistic"):
        synthesis.real_references({"NY": (people, people)}, classifiers=["svm"])


def test_stratified_runs_reads_what_every_page_shares(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from types import SimpleNamespace

    from dpnotes import plotting
    from dpnotes.data.employment import EMPLOYMENT_DOMAIN

    rng = np.random.default_rng(0)
    domain = EMPLOYMENT_DOMAIN.items()
    people = {
        d: pd.DataFrame({a: rng.integers(0, s, n) for a, s in domain})
        for d, n in [("NY-sample", 100), ("NM", 60)]
    }
    # New Mexico first in the table, AIM before MST: the pages' order is the book's.
    tab = pd.concat(
        [
            TAB.assign(dataset="NM", synthesizer="AIM"),
            TAB.assign(dataset="NY-sample"),
            TAB.assign(dataset="NM"),
        ]
    )
    result = SimpleNamespace(
        table=tab,
        sources={"NM": SimpleNamespace(profile="quick"),
                 "NY-sample": SimpleNamespace(profile="paper")},
    )  # fmt: skip
    asked = []

    def split(d):
        asked.append(d)
        half = len(people[d]) // 2
        return people[d].iloc[:half], people[d].iloc[half:]

    runs = synthesis.stratified_runs(result, split, classifiers=["logistic"])
    assert sorted(asked) == ["NM", "NY-sample"]  # each data set's splits read once
    assert runs.datasets == ["NY-sample", "NM"] and runs.dataset == "NY-sample"
    assert runs.synthesizers == ["MST", "AIM"]
    assert runs.profiles == {"NM": "quick", "NY-sample": "paper"}
    assert runs.n_train == {"NY-sample": 50, "NM": 30}
    assert runs.table is tab
    # The texts and captions are run_texts' own.
    captions, texts = synthesis.run_texts(tab, runs.profiles)
    assert runs.captions == captions and runs.texts == texts
    assert set(runs.texts) == {"strat-short", "strat-nseeds"}
    assert runs.texts["strat-short"] == captions["NY-sample"]
    assert "profile quick" in captions["NM"]
    ref = runs.refs["NM"]
    assert len(ref.train) == 30 and len(ref.test) == 30
    assert ref.majority == synthesis.majority_rate(people["NM"].iloc[30:]["ESR"])
    assert 0 <= synthesis.real_value(ref.real, "logistic:accuracy") <= 1

    # panel glues strata_figure under its name, on the main data set unless told.
    glued = []
    monkeypatch.setattr(
        plotting, "glue_figure",
        lambda name, fig, *, source: glued.append((name, fig, source)),
    )  # fmt: skip
    runs.panel("m", "fig-a", "error", refs=[(1.0, "real")])
    runs.panel("m", "fig-b", "error", dataset="NM")
    assert [(n, s) for n, _, s in glued] == [
        ("fig-a", "strat_synth"),
        ("fig-b", "strat_synth"),
    ]
    titles = [[ax.get_title() for ax in fig.axes] for _, fig, _ in glued]
    assert titles == [["MST"], ["MST", "AIM"]]  # New Mexico has AIM's rows too
    assert "real" in {t.get_text() for t in glued[0][1].legends[0].get_texts()}
    with pytest.raises(ValueError, match="rows of metric"):
        runs.panel("other", "fig-c", "y")
    for _, fig, _ in glued:
        matplotlib.pyplot.close(fig)

    with pytest.raises(TypeError, match="load_per_dataset"):
        synthesis.stratified_runs(tab, split)
    with pytest.raises(TypeError, match="split_employment"):
        synthesis.stratified_runs(result, people)
    unknown = SimpleNamespace(table=tab, sources={"NM": SimpleNamespace(profile="q")})
    with pytest.raises(ValueError, match="no profile"):
        synthesis.stratified_runs(unknown, split)


def test_synthesizers_chapter_sections_on_the_stored_runs(stored):
    tab = stored[0]
    summary = synthesis.workload_summary(tab)
    order = ["NY-sample", "NM"]
    fall = synthesis.fall_section(summary, datasets=order)
    assert fall.texts == {
        "wl-e-max": "5",
        "wl-e-low": "0.5",
        "wl-aim-max": "0.0274 on the New York sample and 0.0376 on New Mexico",
        "wl-mst-fall": "10% and 16%",
    }
    assert fall.table.columns.tolist() == [
        "synthesizer",
        "fall, New York sample",
        "fall, New Mexico",
    ]
    trails = synthesis.trails_section(
        summary, n_train={"NY-sample": 16000, "NM": 12366}, delta=1e-9, datasets=order
    )
    assert trails.texts == {
        "aim-noise-ratio": "2.4",
        "aim-rounds": "160",
        "aim-trails": "2 of the 12",
    }
    meta = json.loads((RESULTS / "strat_synth" / "paper" / "meta.json").read_text())
    fits, by_eps = synthesis.fit_time_section(tab, [meta])
    assert fits.texts["gem-steps"] == "3,100"
    assert fits.texts["gem-device"] == "the stored runs ran on the CPU"
    assert fits.texts["synth-device"].endswith("(AMD EPYC), one thread per fit.")
    assert fits.table.columns.tolist() == [
        "synthesizer",
        "no strata",
        "SEX",
        "RAC1P",
        "SEX × RAC1P",
    ]
    assert fits.table.iloc[2, 4] == "388.8"
    assert by_eps.columns.tolist() == ["ε", "MST", "AIM", "GEM"]
    assert by_eps["ε"].tolist() == ["0.01", "0.05", "0.1", "0.5", "1", "5"]
    with pytest.raises(ValueError, match="metadata"):
        synthesis.fit_time_section(tab, [])


def test_attribute_table_and_where_the_rows_come_from():
    from types import SimpleNamespace

    table = synthesis.attribute_table()
    assert table.attribute.tolist()[0] == "AGEP" and len(table) == 10
    assert table.set_index("attribute").loc["SCHL", "values"] == (
        "1–5, 6–10, 11–14, 15–19, 20–24"
    )
    assert not table.isna().any().any()

    def src(profile, seeds):
        return SimpleNamespace(
            profile=profile, seeds=seeds, describe=lambda: f"{profile} run"
        )

    same = {"NY-sample": src("paper", [0, 1]), "NM": src("paper", [0, 1])}
    assert synthesis.stored_where(same) == (
        "Experiment strat_synth, profile paper, seeds 0, 1 of each data set "
        "(New York 2018, 20,000-row sample; New Mexico 2018)."
    )
    mixed = {"NY-sample": src("paper", [0, 1]), "NM": src("quick", [0])}
    assert synthesis.stored_where(mixed) == (
        "Experiment strat_synth, New York 2018, 20,000-row sample: paper run; "
        "New Mexico 2018: quick run."
    )
    with pytest.raises(ValueError, match="no source"):
        synthesis.stored_where({})
