"""The cause table of the stratified-synthesis chapter (findings.synthesis_causes)."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from dpnotes.findings import synthesis_causes as sc

METRIC = sc.METRIC


def _run(values: dict[tuple[str, str, float, int], float]) -> pd.DataFrame:
    """A strat_synth table of the authors' parity over each cell's own grouping:
    ``{(synthesizer, strata, epsilon, seed): value}``; a vanilla cell is scored
    over every grouping with the same value."""
    rows = []
    for (syn, strata, eps, seed), v in values.items():
        groupings = sc.GROUPINGS if strata == "vanilla" else (strata,)
        for g in groupings:
            rows.append(
                {
                    "dataset": "NY-sample",
                    "synthesizer": syn,
                    "strata": strata,
                    "epsilon": eps,
                    "seed": seed,
                    "metric": METRIC,
                    "grouping": g,
                    "group": "all",
                    "value": v,
                }
            )
    return pd.DataFrame(rows)


def _ours() -> pd.DataFrame:
    # Vanilla 1.0 everywhere; stratified 2.0 (stratifying loses) at both budgets.
    cells = {}
    for eps, seed in itertools.product((0.1, 1.0), (0, 1)):
        cells[("MST", "vanilla", eps, seed)] = 1.0
        for g in sc.GROUPINGS:
            cells[("MST", g, eps, seed)] = 2.0 + 0.1 * seed
    return _run(cells)


def test_with_cause_replaces_only_the_cells_the_cause_computed():
    cause = _run({("MST", "vanilla", 1.0, 0): 5.0})
    tab = sc.with_cause(_ours(), cause)
    # One block (ε = 1, seed 0): the cause's vanilla cell and our three stratified.
    assert set(tab[["epsilon", "seed"]].itertuples(index=False)) == {(1.0, 0)}
    vanilla = tab[(tab.strata == "vanilla") & (tab.grouping == "SEX")]
    assert vanilla["value"].tolist() == [5.0]
    assert sorted(set(tab.strata)) == sorted({"vanilla", *sc.GROUPINGS})
    with pytest.raises(ValueError, match="no rows yet"):
        sc.with_cause(_ours(), cause.iloc[:0])


def test_cause_rows_count_wins_with_and_without_the_cause():
    # Vanilla re-coded much worse at ε = 1 in both seeds: stratifying wins there.
    cause = _run({("MST", "vanilla", 1.0, s): 9.0 for s in (0, 1)})
    (row,) = sc.cause_rows(_ours(), {"recode_vanilla": cause})
    assert (row.with_cause.wins, row.with_cause.total) == (3, 3)
    assert (row.ours.wins, row.ours.total) == (0, 3)
    assert row.moved == 3 and row.seeds == (0, 1) and row.epsilons == (1.0,)
    assert row.with_cause.clear_wins == 3
    assert row.authors == 1  # the authors' MST: 1 of 18
    table = sc.cause_table([row])
    assert table.loc[0, "with the setting"] == "3 of 3 (3 / 0 beyond doubt)"
    assert table.loc[0, "change"] == "+3"


def test_a_cause_missing_its_own_cells_is_not_filled_with_ours():
    from types import SimpleNamespace

    vanilla_only = _run({("MST", "vanilla", 1.0, s): 9.0 for s in (0, 1)})
    everything = {"stratifications": ["vanilla", *sc.GROUPINGS]}
    stored = SimpleNamespace(table=vanilla_only, config=everything)
    assert sc.cause_rows(_ours(), {"data_domains": stored}) == []
    recode = SimpleNamespace(
        table=vanilla_only, config={"stratifications": ["vanilla"]}
    )
    (row,) = sc.cause_rows(_ours(), {"recode_vanilla": recode})
    assert row.with_cause.total == 3
    with pytest.raises(TypeError, match="a stored result"):
        sc.cause_rows(_ours(), {"recode_vanilla": object()})


def test_ours_is_counted_on_the_comparisons_the_cause_run_makes():
    from types import SimpleNamespace

    # A partial slip run: only the SEX cells of one block are computed so far.
    partial = _run({("MST", "SEX", 1.0, 0): 0.5})
    config = {"stratifications": list(sc.GROUPINGS)}
    stored = SimpleNamespace(table=partial, config=config)
    (row,) = sc.cause_rows(_ours(), {"completion_order": stored})
    assert (row.with_cause.wins, row.with_cause.total) == (1, 1)
    assert (row.ours.wins, row.ours.total) == (0, 1)
    stored.partial = True
    section = sc.cause_section(
        _ours(),
        {"completion_order": stored},
        records=pd.DataFrame({"SEX": [0], "RAC1P": [0]}),
    )
    assert "--set cause=completion_order" in section.texts["causes-pending"]


def test_a_scale_run_has_no_cells_of_ours():
    cause = _run({("MST", s, 10.0, 0): v for s, v in [("vanilla", 1.0), ("SEX", 0.5)]})
    (row,) = sc.cause_rows(_ours(), {"scale": cause})
    assert row.ours is None and row.moved is None
    assert str(row.with_cause) == "1 of 1"
    assert sc.cause_table([row]).loc[0, "ours, same cells"] == "—"


def test_cause_rows_refuse_unknown_causes_and_runs_without_the_authors_parity():
    with pytest.raises(ValueError, match="unknown causes"):
        sc.cause_rows(_ours(), {"bogus": _ours()})
    other = _ours().assign(metric="mean_parity_error")
    with pytest.raises(ValueError, match="--set parity=authors"):
        sc.cause_rows(_ours(), {"aim_2way": other})


def test_completion_order_shift():
    # First appearance: the large stratum first; it then gets the small count.
    records = pd.DataFrame({"S": [0] * 90 + [1] * 10})
    assert sc.completion_order_shift(records, ["S"]) == pytest.approx(0.8)
    # Already in increasing size: nothing moves.
    assert sc.completion_order_shift(records.iloc[::-1], ["S"]) == 0.0
    # A stratum below the threshold is dropped before the counts are dealt.
    tiny = pd.concat([records, pd.DataFrame({"S": [2]})], ignore_index=True)
    assert sc.completion_order_shift(tiny, ["S"], smallest=0.05) == pytest.approx(0.8)
    with pytest.raises(ValueError, match="lack the columns"):
        sc.completion_order_shift(records, ["R"])


def test_cause_profiles_are_the_lab_s_derived_names_and_valid_settings():
    from dpnotes.lab import derived_profile, get_experiment

    experiment = get_experiment("strat_synth")
    for cause, settings in sc.CAUSE_RUNS.items():
        assert sc.cause_profile(cause) == derived_profile("paper", settings)
        assert experiment.cells(sc.cause_profile(cause))  # the cause fits its grid
    with pytest.raises(ValueError, match="unknown cause"):
        sc.cause_profile("bogus")


def test_cause_section_texts_say_what_moved_and_what_is_left():
    recoded = _run({("MST", "vanilla", 1.0, s): 9.0 for s in (0, 1)})
    records = pd.DataFrame({"SEX": [1, 1, 0], "RAC1P": [0, 0, 1]})
    section = sc.cause_section(
        _ours(), {"recode_vanilla": recoded, "aim_2way": None}, records=records
    )
    assert len(section.table) == 1
    assert section.texts["causes-moved"].endswith("MST +3 of 3")
    assert section.texts["causes-largest"].startswith(sc.CAUSE_LABELS["recode_vanilla"])
    assert "--set cause=aim_2way" in section.texts["causes-pending"]
    # Two seeds pair each comparison: the text says how many are won beyond doubt.
    assert section.texts["causes-recode_vanilla"] == (
        "MST 3 of 3 (3 / 0 beyond doubt) against 0 without it (seeds 0, 1)"
    )
    assert section.texts["causes-aim_2way"] == "not run yet"
    # One seed: no interval, so no beyond-doubt counts; the text names the seed.
    one = _run({("MST", "vanilla", 1.0, 0): 9.0})
    single = sc.cause_section(_ours(), {"recode_vanilla": one}, records=records)
    assert single.texts["causes-recode_vanilla"] == (
        "MST 3 of 3 against 0 without it (seed 0)"
    )
    assert section.texts["scale-match"] == "not computed"  # no scale run given
    # A cause that moves nothing is not called the largest.
    same = _run({("MST", "vanilla", 1.0, s): 1.0 for s in (0, 1)})
    flat = sc.cause_section(_ours(), {"recode_vanilla": same}, records=records)
    assert flat.texts["causes-largest"].startswith("none of the settings")
    # The authors' MST wins 1 of 18: 3 of 3 is farther from that share than 0 of 3.
    label = sc.CAUSE_LABELS["recode_vanilla"]
    assert section.texts["causes-toward"] == (
        f"toward the authors' share of wins: none; away from it: {label} (MST)"
    )
    assert flat.texts["causes-toward"].endswith("none; away from it: none")
    assert section.texts["causes-closest"] == (
        f"MST, {label} with 3 of 3 against the authors' 1 of 18"
    )
    with pytest.raises(ValueError, match="no cause run"):
        sc.cause_section(_ours(), {"aim_2way": None}, records=records)
    assert section.texts["causes-slip-sex"] == "0.33"
    assert section.texts["causes-gem-vanilla"].startswith("0.43 at ε = 0.01")
    assert section.texts["causes-gem-ours-vanilla"] == "not run yet"
    assert section.texts["causes-open"].startswith("What else the gap is made of")


def test_our_vanilla_gem_with_the_authors_settings_is_read_per_budget():
    gem = _run(
        {
            ("GEM", "vanilla", e, s): v + s
            for e, v in ((0.1, 4.0), (5.0, 0.5))
            for s in (0, 1)
        }
    )
    assert sc.gem_vanilla_ours_text(gem) == (
        "4.50 at ε = 0.1, 1.00 at ε = 5 (4-fold from the smallest budget to the "
        "largest; seeds 0, 1)"
    )
    records = pd.DataFrame({"SEX": [1, 1, 0], "RAC1P": [0, 0, 1]})
    runs = {c: _run({("MST", "vanilla", 1.0, 0): 9.0}) for c in sc.CAUSE_RUNS}
    runs["authors_gem"] = gem
    every = sc.cause_section(_ours(), runs, records=records)
    assert every.texts["causes-pending"] == "every cause setting is run"
    assert every.texts["causes-open"].startswith("Every setting is run")
    assert every.texts["causes-gem-ours-vanilla"].startswith("4.50 at ε = 0.1")
    # A run without the vanilla GEM cells cannot say it: the error names the command.
    with pytest.raises(ValueError, match="--set cause=authors_gem"):
        sc.gem_vanilla_ours_text(gem[gem.strata != "vanilla"])


def test_scale_shares_count_each_budget_s_groupings():
    cells = {("MST", "vanilla", 10.0, 0): 1.0, ("MST", "SEX", 10.0, 0): 0.5}
    cells |= {("MST", g, 10.0, 0): 2.0 for g in ("RAC1P", "SEX_RAC1P")}
    cells |= {("MST", "vanilla", 20.0, 0): 1.0, ("MST", "SEX", 20.0, 0): 0.5}
    shares = sc.scale_shares(_run(cells))
    assert shares[["epsilon", "wins", "compared"]].values.tolist() == [
        [10.0, 1, 3],
        [20.0, 1, 1],
    ]
    assert shares["share"].round(3).tolist() == [0.333, 1.0]
    assert sc.scale_shares(_run({("MST", "vanilla", 1.0, 0): 1.0})).empty
    with pytest.raises(ValueError, match="column"):
        sc.scale_shares(_run(cells).drop(columns="grouping"))


def test_the_scale_figure_puts_both_runs_on_records_times_epsilon():
    import matplotlib.pyplot as plt

    from dpnotes import plotting

    larger = _run(
        {
            ("MST", s, 10.0, 0): v
            for s, v in [("vanilla", 1.0), *((g, 0.5) for g in sc.GROUPINGS)]
        }
        | {("MST", "vanilla", 20.0, 0): 1.0, ("MST", "SEX", 20.0, 0): 0.5}
    )
    fig = sc.scale_figure(_ours(), larger, records=16_000, seeds=(0, 1))
    try:
        mst, _, gem = fig.axes
        xs = {tuple(line.get_xdata()) for line in mst.get_lines()}
        # Ours at 0.1 and 1 (x 16,000); the larger run only where all three groupings
        # are compared (ε = 10); the authors' six budgets x 196,967.
        assert (1600.0, 16000.0) in xs and (160000.0,) in xs
        authors = [line for line in gem.get_lines() if "authors" in line.get_label()]
        (line,) = authors
        assert line.get_xdata()[0] == pytest.approx(0.01 * sc.AUTHORS_RECORDS)
        assert list(line.get_ydata()) == [v / 3 for v in (1, 3, 3, 3, 3, 3)]
        assert plotting.smallest_font_px(fig) >= plotting.MIN_FONT_PX
        assert plotting.colliding_ticks(fig) == []
    finally:
        plt.close(fig)


def test_scale_comparison_sets_ours_beside_the_authors_at_the_same_scale():
    # ε = 10 complete (stratifying wins 1 of 3), ε = 20 incomplete: only ε = 10 counts.
    cells = {("MST", "vanilla", 10.0, 0): 1.0, ("MST", "SEX", 10.0, 0): 0.5}
    cells |= {("MST", g, 10.0, 0): 2.0 for g in ("RAC1P", "SEX_RAC1P")}
    cells |= {("MST", "vanilla", 20.0, 0): 1.0, ("MST", "SEX", 20.0, 0): 0.5}
    larger = _run(cells)
    # 16,000 x 10 = 1.6e5: within a factor 2 of the authors' ε = 0.5 (9.8e4) and
    # 1 (2.0e5), not 5 (9.8e5). Their MST wins 0 and 1 of 3 there.
    text = sc.scale_comparison(larger, records=16_000)
    assert text.startswith("MST 1 of 3 against the authors' 1 of 6 (ours at ε = 10,")
    assert "1.6·10⁵ to 1.6·10⁵ records × ε" in text and "theirs at ε = 0.5, 1," in text
    assert "AIM" not in text  # no AIM cell in our run
    # A tighter match keeps only ε = 1; none at all when the scales are far apart.
    assert "the authors' 1 of 3" in sc.scale_comparison(
        larger, records=16_000, factor=1.3
    )
    assert sc.scale_comparison(larger, records=10, factor=1).startswith("no budget")
    assert sc.scale_comparison(_run({("MST", "vanilla", 10.0, 0): 1.0}), records=1) == (
        "not computed"
    )
    with pytest.raises(ValueError, match="at least 1"):
        sc.scale_comparison(larger, records=16_000, factor=0.5)


def test_integer_budgets_read_back_from_a_file_merge_without_a_warning():
    import warnings

    cause = _run({("MST", s, 1.0, 0): 0.5 for s in ("vanilla", *sc.GROUPINGS)})
    cause["epsilon"] = cause["epsilon"].astype(int)  # as a CSV of 10, 20, 50 reads
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (row,) = sc.cause_rows(_ours(), {"scale": cause})
    assert row.ours is not None and row.epsilons == (1.0,)
