"""The stratification chapters' findings, on the stored results and on hand-made tables.

The stored tables are read from ``book/_results`` with pandas (fast); every number the
chapters glue into their prose is asserted here in the form the chapter prints it, and
every claim the prose makes about those numbers is asserted as a test. The hand-made
tables have known answers and cover the edge cases: one run, all methods equal, a group
or a method absent, a missing column, rows over different numbers of runs.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from stored_tables import stored_table

from dpnotes import paper_numbers as pn
from dpnotes.findings import stratification as f
from dpnotes.findings.verdict import compact_frame

RESULTS = Path(__file__).resolve().parents[1] / "book" / "_results"


def stored(experiment: str, profile: str = "paper") -> pd.DataFrame:
    return stored_table(experiment, profile)


def config(experiment: str, profile: str = "paper") -> dict:
    return json.loads((RESULTS / experiment / profile / "meta.json").read_text())[
        "config"
    ]


def verdicts(checks: list) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in checks:
        out[v.outcome] = out.get(v.outcome, 0) + 1
    return out


# ------------------------------------------------------------------ theory chapter


def test_log_size_sum_check_on_the_stored_results():
    check = f.log_size_sum_check(stored("log_size_sum"), runs=50)
    assert (check.n, check.runs, check.points) == (10_000, 50, 240)
    assert f"{check.max_z:.1f}" == "3.8"
    assert f"{check.within_two:.0%}" == "94%"  # about 95% expected
    # The largest deviation is not at small alpha: at k = 3, alpha = 0.75, where the
    # draws' spread is well below the exact one.
    assert (check.max_k, check.max_alpha) == (3, 0.75)
    assert f"{check.max_sd_ratio:.2f}" == "0.62"
    assert f"{check.max_z_exact:.1f}" == "3.5"


def test_log_size_sum_sd_against_scipy_and_a_simulation():
    # k = 2: g_1 ~ Beta(alpha, alpha) and the sum is log g_1 + log(1 - g_1).
    for alpha in (0.8, 1.0, 4.0):
        beta = stats.beta(alpha, alpha)
        mean = beta.expect(lambda g: np.log(g) + np.log1p(-g))
        second = beta.expect(lambda g: (np.log(g) + np.log1p(-g)) ** 2)
        assert f.log_size_sum_sd(alpha, 2) == pytest.approx(
            np.sqrt(second - mean**2), rel=1e-6
        )
    rng = np.random.default_rng(0)
    for alpha, k in ((0.5, 3), (0.75, 10), (2.0, 30)):
        g = rng.dirichlet(np.full(k, alpha), size=200_000)
        sd = np.log(g).sum(axis=1).std()
        assert f.log_size_sum_sd(alpha, k) == pytest.approx(sd, rel=0.01)
    assert f.log_size_sum_sd(np.array([0.5, 1.0]), 3).shape == (2,)
    with pytest.raises(ValueError, match="alpha"):
        f.log_size_sum_sd(0.0, 3)
    with pytest.raises(ValueError, match="at least 2"):
        f.log_size_sum_sd(0.5, 1)


def _lss(means, sds, *, runs=4, expected=1.0):
    m = len(means)
    return pd.DataFrame(
        {
            "k": [3] * m,
            "alpha": np.linspace(0.2, 0.9, m),
            "n": [100] * m,
            "runs": [runs] * m if np.isscalar(runs) else runs,
            "expected": [expected] * m,
            "worst": [2.0] * m,
            "best_paper": [0.0] * m,
            "mc_continuous_mean": means,
            "mc_continuous_sd": sds,
        }
    )


def test_log_size_sum_check_on_a_hand_made_table():
    # se = sd / 2 with 4 runs: gaps of 0, 1 and 3 standard errors.
    check = f.log_size_sum_check(_lss([1.0, 1.5, 2.5], [1.0, 1.0, 1.0]))
    assert check.max_z == pytest.approx(3.0)
    assert check.within_two == pytest.approx(2 / 3)
    # The largest gap is the last point's (alpha 0.9), its sd measured against the
    # exact one there, and the exact-sd gaps use the exact sd of each point.
    assert (check.max_k, check.max_alpha) == (3, pytest.approx(0.9))
    exact = f.log_size_sum_sd(np.array([0.2, 0.55, 0.9]), 3)
    assert check.max_sd_ratio == pytest.approx(1.0 / exact[2])
    assert check.max_z_exact == pytest.approx(
        max(np.array([0, 0.5, 1.5]) / (exact / 2))
    )


def test_log_size_sum_check_edge_cases():
    # all equal, no spread: on the formula exactly
    check = f.log_size_sum_check(_lss([1.0, 1.0], [0.0, 0.0]))
    assert (check.max_z, check.within_two) == (0.0, 1.0)
    # no spread but off the formula: infinitely far
    assert f.log_size_sum_check(_lss([1.5], [0.0])).max_z == np.inf
    with pytest.raises(ValueError, match="no standard error"):
        f.log_size_sum_check(_lss([1.0], [np.nan], runs=1))
    with pytest.raises(ValueError, match="different numbers of runs"):
        f.log_size_sum_check(_lss([1.0, 1.0], [1.0, 1.0], runs=[4, 3]))
    with pytest.raises(ValueError, match=r"not the 50"):
        f.log_size_sum_check(_lss([1.0], [1.0]), runs=50)
    with pytest.raises(ValueError, match="mc_continuous_sd"):
        f.log_size_sum_check(_lss([1.0], [1.0]).drop(columns="mc_continuous_sd"))


def test_fig1_interpolation_on_stored_and_hand_made_tables():
    out = f.fig1_interpolation(stored("log_size_sum"), low=0.2, high=1.0)
    assert out.between and out.points == 240 and out.ks == (3, 10, 30)
    table = _lss([1.0, 1.0], [1.0, 1.0])
    assert f.fig1_interpolation(table, low=0.0, high=1.0).between
    table.loc[1, "expected"] = 3.0  # above the worst case
    assert not f.fig1_interpolation(table, low=0.0, high=1.0).between
    assert f.fig1_interpolation(table, low=0.0, high=0.5).between  # outside the range
    with pytest.raises(ValueError, match="no point"):
        f.fig1_interpolation(table, low=5.0, high=6.0)


def test_bound_check_on_the_stored_results():
    check = f.bound_check(stored("laplace_bound_check"), gamma=0.05, runs=50)
    assert f"{check.slope:.2f}" == "0.45"  # close to the sqrt(k) of the analysis
    assert f"{check.ratio_low:.1f}" == "1.9" and f"{check.ratio_high:.1f}" == "2.6"
    assert f"{check.k1_observed:.4f}" == "0.0041"
    assert f"{check.k1_bound:.4f}" == "0.0039"
    assert check.releases == 2_000
    # At k = 1 the observed quantile is above the exact one, by 1.9 standard errors.
    assert f"{check.k1_z:.1f}" == "1.9"


def _bounds(ks, *, runs=5):
    ks = np.asarray(ks, dtype=float)
    return pd.DataFrame(
        {
            "k": ks,
            "runs": runs,
            "noise_draws": 4,
            "error_quantile": 0.01 * np.sqrt(ks),
            "bound_data": 0.02 * np.sqrt(ks) * np.where(ks > 1, 1.0, 1.5),
        }
    )


def test_bound_check_on_a_hand_made_table():
    check = f.bound_check(_bounds([4, 1, 16, 2]), gamma=0.05)  # any row order
    assert check.slope == pytest.approx(0.5)
    assert check.ratio_low == pytest.approx(2.0) == check.ratio_high
    assert (check.k1_observed, check.k1_bound) == pytest.approx((0.01, 0.03))
    assert check.releases == 20
    # b = 0.03 / log 20; se = b sqrt(0.95 / (0.05 * 20)); 0.01 lies below 0.03.
    se = 0.03 / np.log(20) * np.sqrt(0.95 / 1.0)
    assert check.k1_z == pytest.approx((0.01 - 0.03) / se)
    texts = f.bound_texts(check)
    assert (texts["bound-k1-z"], texts["bound-k1-side"]) == ("2.0", "below")


def test_quantile_standard_error_against_a_simulation():
    # The spread of the 95% quantile of 400 draws of |Lap(2)| over 4,000 samples.
    rng = np.random.default_rng(1)
    draws = np.abs(rng.laplace(scale=2.0, size=(4_000, 400)))
    observed = np.quantile(draws, 0.95, axis=1).std()
    se = f.quantile_standard_error(2.0, gamma=0.05, releases=400)
    assert se == pytest.approx(observed, rel=0.05)
    assert se == pytest.approx(2.0 * np.sqrt(0.95 / 20))
    for bad in ({"scale": 0.0}, {"gamma": 1.0}, {"releases": 0}):
        kw = {"scale": 1.0, "gamma": 0.05, "releases": 10} | bad
        with pytest.raises(ValueError):
            f.quantile_standard_error(kw.pop("scale"), **kw)


def test_bound_check_edge_cases():
    with pytest.raises(ValueError, match="k = 1"):
        f.bound_check(_bounds([2, 4]), gamma=0.05)
    with pytest.raises(ValueError, match="two rows"):
        f.bound_check(_bounds([1, 2]), gamma=0.05)
    with pytest.raises(ValueError, match="different numbers of runs"):
        f.bound_check(_bounds([1, 2, 4], runs=[5, 5, 4]), gamma=0.05)
    with pytest.raises(ValueError, match="noise_draws"):
        f.bound_check(_bounds([1, 2, 4]).drop(columns="noise_draws"), gamma=0.05)
    with pytest.raises(ValueError, match="gamma"):
        f.bound_check(_bounds([1, 2, 4]), gamma=1.5)


def test_paper_race_counts():
    counts = f.paper_race_counts()
    assert list(counts.index) == list(range(1, 10))
    assert int(counts.sum()) == pn.STRAT_NY_RACE.n
    assert counts.iloc[0] == 70881 + 67593
    # a group absent from the counts gets 0; a wrong total is an error
    assert f.paper_race_counts({(1, 1): 2, (2, 3): 1}, total=3).tolist()[:3] == [
        2,
        0,
        1,
    ]
    with pytest.raises(ValueError, match="add up"):
        f.paper_race_counts({(1, 1): 2}, total=3)


@pytest.fixture(scope="module")
def race() -> f.RaceAlpha:
    counts = f.paper_race_counts()
    fits = f.table3_alphas(counts, rng=np.random.default_rng(2024))
    return f.race_alpha(stored("ny_race_alpha"), counts=counts, table3_fits=fits)


def test_race_alpha_on_the_stored_results(race):
    ex = pn.STRAT_NY_RACE
    mle, sorted_fit = race.table3_alpha["mle"], race.table3_alpha["mc-sorted"]
    assert f"{mle:.2f}" == "0.26" and f"{sorted_fit:.2f}" == "0.09"
    # The prose: the likelihood fit of the paper's own counts is about twice its alpha,
    # the order-statistics fit below it, no reading reaches 80%, and the likelihood
    # fit gives exactly the observed shares' gain.
    assert 1.8 < mle / ex.alpha < 2.2 and sorted_fit < ex.alpha
    paper = race.paper_gain
    assert max(paper.between, paper.ratio, paper.sqrt) < ex.gain - 0.05
    assert race.mle_gain.between == pytest.approx(race.observed_gain.between)
    assert f"{paper.between:.0%}" == "72%" and f"{race.mle_gain.between:.0%}" == "33%"
    assert f"{race.stored_alpha['NY-extract', 'mle']:.2f}" == "0.27"
    assert f"{race.stored_alpha['NM', 'mle']:.2f}" == "0.31"
    assert len(race.rows) == 1 + 2 + 6 + 1 and race.rows[-1].alpha is None


def test_race_alpha_rows_keep_each_source_apart(race):
    # Two stored fits share a label ("maximum likelihood, stored fit"); each row
    # carries its own gain (an earlier chapter keyed gains by label and showed New
    # Mexico's for the New York sample).
    rows = {(r.label, r.data): r for r in race.rows}
    ny = rows["maximum likelihood, stored fit", f.RACE_SOURCES["NY-extract"]]
    nm = rows["maximum likelihood, stored fit", f.RACE_SOURCES["NM"]]
    assert ny.gain.value != nm.gain.value
    assert f"{ny.gain.value:.1f}" == "68.7" and f"{nm.gain.value:.1f}" == "71.5"
    view = f.race_alpha_view(race)
    assert view.iloc[0]["(a) (W − E)/(W − B)"] == "72%"
    assert view.iloc[-1]["α"] == "–"


def test_race_alpha_errors():
    table = stored("ny_race_alpha")
    counts = f.paper_race_counts()
    with pytest.raises(ValueError, match="'mle'"):
        f.race_alpha(table, counts=counts, table3_fits={"mc-sorted": 0.1})
    with pytest.raises(ValueError, match="unknown sources"):
        f.race_alpha(table.assign(source="CA"), counts=counts, table3_fits={"mle": 0.2})
    with pytest.raises(ValueError, match="alpha"):
        f.race_alpha(
            table.drop(columns="alpha"), counts=counts, table3_fits={"mle": 0.2}
        )


def test_stored_gains_agree():
    table = stored("ny_race_alpha")
    assert f.stored_gains_agree(table)
    broken = table.copy()
    broken.loc[broken["n"] == 200_000, "gain_sqrt"] += 0.01
    assert not f.stored_gains_agree(broken)
    assert f.stored_gains_agree(broken, n=20_000)  # the other size is untouched
    with pytest.raises(ValueError, match="no row"):
        f.stored_gains_agree(table, n=5)


def test_race_share_view():
    view = f.race_share_view(pd.Series({1: 6, 2: 2}), labels={1: "a", 2: "b"})
    assert view["share"].tolist() == ["0.7500", "0.2500"]
    with pytest.raises(ValueError, match="no label"):
        f.race_share_view(pd.Series({1: 6, 3: 2}), labels={1: "a"})
    with pytest.raises(ValueError, match="no records"):
        f.race_share_view(pd.Series({1: 0}), labels={1: "a"})


def test_theory_checks_on_the_stored_results(race):
    table = f.theory_checks(
        stored("log_size_sum"), race, simplex_alphas=(0.1, 1.0, 10.0)
    )
    assert verdicts(table) == {"reproduces": 2, "differs": 6}
    assert [v.outcome for v in table[:2]] == ["reproduces", "reproduces"]
    assert table[0].ours_text == "at all 240 points (k = 3, 10, 30)"
    # the race example's values are exact: one number each, no runs, no interval
    assert [v.ours_text for v in table[2:]] == [
        "0.26",
        "0.09",
        "0.72",
        "0.56",
        "0.33",
        "0.33",
    ]
    assert all(v.ours is None for v in table[2:])
    frame = compact_frame(table, seeds_label="runs")
    assert "runs" not in frame.columns and "authors' files" not in frame.columns
    assert frame["verdict"].tolist()[2:] == ["differs"] * 6
    # another simplex setting than the paper's is a difference
    other = f.theory_checks(stored("log_size_sum"), race, simplex_alphas=(0.5, 1.0))
    assert other[1].outcome == "differs"
    # a gain within 0.05 of the paper's reproduces
    close = f.theory_checks(
        stored("log_size_sum"),
        race,
        simplex_alphas=(0.1, 1.0, 10.0),
        example=replace(pn.STRAT_NY_RACE, gain=0.75),
    )
    assert close[4].outcome == "reproduces"
    assert close[4].reason == "at the paper's n, k and α"


# ---------------------------------------------------------------- COINPRESS chapter


@pytest.fixture(scope="module")
def synth():
    cfg = config("strat_mean_synthetic")
    cells = f.synthetic_cells(stored("strat_mean_synthetic"), runs=cfg["runs"])
    return cells, cfg


def test_sweep_ratios_on_the_stored_results(synth):
    cells, cfg = synth
    kw = {"sweeps": cfg["sweeps"], "fixed": cfg["fixed"]}
    by_k = f.sweep(cells, var="k", **kw)
    by_a = f.sweep(cells, var="alpha", **kw)
    assert len(f.sweep(cells, var="n", **kw)) == 4 * len(cfg["sweeps"]["n"])
    ratio = f.error_ratio
    assert f"{ratio(by_k, var='k', value=2, method=f.LEAKY):.1f}" == "2.2"
    assert f"{ratio(by_k, var='k', value=48, method=f.LEAKY):.0f}" == "35"
    assert f"{ratio(by_a, var='alpha', value=100, method=f.LEAKY):.1f}" == "1.9"
    assert f"{ratio(by_a, var='alpha', value=0.01, method=f.LEAKY):.0f}" == "16"
    assert f"{ratio(by_k, var='k', value=3, method=f.COUNTS):.1f}" == "3.2"
    pub = ratio(by_a, var="alpha", value=100, method="PubStratCoinpress")
    assert f"{pub:.0f}" == "9"
    # the private variant is below the leaky one at the defaults
    assert ratio(by_k, var="k", value=3, method=f.COUNTS) < ratio(
        by_k, var="k", value=3, method=f.LEAKY
    )
    assert f.settings_text(cfg["fixed"]) == "n = 10,000, k = 3, α = 0.3"
    assert f.settings_text(cfg["fixed"], omit="n") == "k = 3, α = 0.3"
    with pytest.raises(ValueError, match="lack"):
        f.settings_text({"n": 5, "k": 3})


def _synthetic(maes, *, runs=10, ns=(1000, 2000, 10_000, 20_000), ks=(3, 6)):
    """Hand-made sweeps over n and k; ``maes`` maps each method to its error."""
    rows = []
    settings = [(n, 3, 0.3) for n in ns] + [(10_000, k, 0.3) for k in ks if k != 3]
    for n, k, alpha in settings:
        for method in maes:
            rows.append(
                {
                    "n": n,
                    "k": k,
                    "alpha": alpha,
                    "method": method,
                    "mae": maes[method](n, k),
                    "se": 0.0,
                    "runs": runs,
                }
            )
    return pd.DataFrame(rows)


ALL_EQUAL = dict.fromkeys(
    ("COINPRESS", f.LEAKY, f.COUNTS, "PubStratCoinpress"), lambda n, k: 0.001
)
SWEEPS = {"n": [1000, 2000, 10_000, 20_000], "k": [3, 6], "alpha": [0.3]}
FIXED = {"n": 10_000, "k": 3, "alpha": 0.3}


def test_synthetic_findings_when_all_methods_are_equal():
    cells = f.synthetic_cells(_synthetic(ALL_EQUAL))
    out = f.synthetic_claims(cells, sweeps=SWEEPS, fixed=FIXED, runs=10)
    assert out.below == 0 and out.settings == 5
    assert (out.ratio_n == 1).all() and (out.ratio_k == 1).all()
    assert out.worst_error == pytest.approx(0.001)
    table = f.coinpress_checks(out)
    assert table[0].outcome == "differs"  # 10 runs, not the paper's 50
    assert table[3].outcome == "differs"  # no setting below COINPRESS
    # no spread (se 0): the interval is the mean, well below the paper's 1%
    assert table[1].outcome == "reproduces" and table[1].ours.half_width == 0


def test_synthetic_findings_when_stratifying_wins():
    maes = dict(ALL_EQUAL)
    maes[f.COUNTS] = lambda n, k: 0.0005
    maes[f.LEAKY] = lambda n, k: 0.002 * 10_000 / n  # the cost fades with n
    out = f.synthetic_claims(
        f.synthetic_cells(_synthetic(maes)), sweeps=SWEEPS, fixed=FIXED, runs=50
    )
    assert out.below == out.settings == 5
    assert out.ratio_n.iloc[0] == pytest.approx(20) and out.ratio_n.iloc[-1] == 1
    table = f.coinpress_checks(out)
    assert [v.outcome for v in table[:4]] == [
        "reproduces",
        "reproduces",
        "reproduces",
        "reproduces",
    ]
    spread = f.spread_variants({"a": _synthetic(maes)}, fixed=FIXED)[0]
    assert spread.below == 5 and spread.smallest_ratio == pytest.approx(0.5)
    assert spread.ratio == pytest.approx(2.0)


def test_synthetic_edge_cases():
    one_run = f.synthetic_cells(_synthetic(ALL_EQUAL, runs=1))  # one run is a mean
    assert len(one_run) == 20
    table = _synthetic(ALL_EQUAL)
    with pytest.raises(ValueError, match="not the 50"):
        f.synthetic_cells(table, runs=50)
    partial = table.copy()
    partial.loc[0, "runs"] = 3
    with pytest.raises(ValueError, match="partial"):
        f.synthetic_cells(partial)
    absent = table[~((table["method"] == f.COUNTS) & (table["n"] == 1000))]
    with pytest.raises(ValueError, match="lack some of the methods"):
        f.synthetic_cells(absent)
    with pytest.raises(ValueError, match="no rows of the methods"):
        f.synthetic_cells(table[table["method"] != f.COUNTS])
    with pytest.raises(ValueError, match="'se'"):
        f.synthetic_cells(table.drop(columns="se"))
    cells = f.synthetic_cells(table)
    with pytest.raises(ValueError, match="no rows of the sweep"):
        f.sweep(cells, var="n", sweeps=SWEEPS, fixed={**FIXED, "k": 99})
    by_n = f.sweep(cells, var="n", sweeps=SWEEPS, fixed=FIXED)
    assert f.error_ratio(by_n, var="n", value=1000, method=f.LEAKY) == 1.0
    with pytest.raises(ValueError, match="no 'x'"):
        f.error_ratio(by_n, var="n", value=1000, method="x")
    with pytest.raises(ValueError, match="lacks the default"):
        f.spread_variants({"a": table}, fixed={**FIXED, "n": 5})


def test_spread_variants_on_the_stored_results():
    cfg = config("strat_mean_synthetic")
    profiles = {
        "unit": "paper",
        "cover": "paper@group_spreads=uniform-0.1-2",
        "authors": "paper@group_spreads=uniform-0.1-2,spread=unit",
    }
    out = f.spread_variants(
        {k: stored("strat_mean_synthetic", p) for k, p in profiles.items()},
        fixed=cfg["fixed"],
        runs=50,
    )
    # No convention lets a stratified variant beat COINPRESS on the mixtures, and
    # with the appendix's spreads the unit bound gives COINPRESS the smaller error.
    assert all(v.below == 0 for v in out)
    assert out[2].coinpress < out[1].coinpress
    assert [v.settings for v in out] == [25, 25, 25]
    from dpnotes.report import fmt

    assert (fmt(out[2].coinpress, 2), fmt(out[1].coinpress, 2)) == ("0.0012", "0.0021")
    view = f.spread_variant_view(out)
    assert view["stratified below COINPRESS"].tolist() == ["0 of 25"] * 3


def test_synthetic_claims_on_the_stored_results(synth):
    cells, cfg = synth
    out = f.synthetic_claims(
        cells, sweeps=cfg["sweeps"], fixed=cfg["fixed"], runs=cfg["runs"]
    )
    # Stratifying costs accuracy everywhere, and the cost does not fade with n.
    assert out.below == 0
    assert (
        out.ratio_n.iloc[-1] > 1.5 and out.ratio_k.iloc[-1] > 10 * out.ratio_k.iloc[0]
    )
    assert out.worst_error <= out.err_max == 0.01
    table = f.coinpress_checks(out)
    assert verdicts(table) == {"reproduces": 3, "differs": 3, "not comparable": 1}
    # the largest error at n >= 10,000: a mean over 50 runs, its interval below 1%
    worst = table[1]
    assert worst.n_seeds == 50 and worst.ours.high < 0.01
    assert worst.ours.interval_text(4) == "[0.0042, 0.0081]"
    assert worst.reason == "our interval is below it (PubStratCoinpress)"
    frame = compact_frame(table, seeds_label="runs")
    assert frame["runs"].tolist() == ["–", "50", "–", "–", "–", "–", "–"]
    assert frame.loc[1, "ours: mean ± sd [95% interval]"].startswith("0.0061")


# ------------------------------------------------------------------- census chapter


@pytest.fixture(scope="module")
def census():
    return stored("strat_mean_census"), stored("strat_mean_census", "paper@spread=unit")


def test_census_headline_numbers(census):
    tab, _ = census
    everything = "SEX×RAC1P×AGE×DIS"
    err = {"variable": "SCHL", "column": "normalised_error"}
    pe = {"variable": "SCHL", "column": "parity_error"}
    mean = f.census_mean
    assert f"{mean(tab, **err, attributes='SEX', method=f.LEAKY):.2%}" == "0.05%"
    assert f"{mean(tab, **err, attributes='SEX'):.2%}" == "0.04%"
    assert f"{mean(tab, **err, attributes=everything, method=f.LEAKY):.2%}" == "2.88%"
    ratio = f.census_ratio(tab, **err, attributes=everything, method=f.LEAKY)
    assert f"{ratio:.0f}" == "60"
    from dpnotes.report import fmt

    assert fmt(mean(tab, **pe, attributes="SEX", method=f.LEAKY), 2) == "0.0021"
    assert fmt(mean(tab, **pe, attributes="SEX"), 2) == "0.025"
    assert fmt(mean(tab, **pe, attributes="SEX×AGE", method=f.LEAKY), 2) == "0.050"
    assert fmt(mean(tab, **pe, attributes="SEX×AGE"), 2) == "3.2"


def test_census_overall_mean_claims(census):
    tab, _ = census
    overall = f.stratified_wins(tab)
    # COINPRESS is the more accurate for the overall mean at almost every k ...
    assert overall.total_wins <= 0.1 * overall.total_pairs
    assert f.compared_text(overall.compared[f.LEAKY].values()) == "11"
    # ... and the cost of stratifying grows with k.
    top = f.error_at_largest_k(tab)
    assert (top[f.LEAKY] > 2 * top["COINPRESS"]).all()
    view = f.overall_wins_view(overall)
    assert list(view.columns) == ["variable", *f.STRATIFIED]


def test_census_parity_claims(census):
    tab, _ = census
    parity = f.parity_lower(tab)
    assert parity.coarse and parity.k_top <= 20
    assert f.compared_text(parity.compared.values()) == "11"
    assert all(cp > dp for cp, dp in parity.at_k.values())  # lower at k = 2
    view = f.parity_view(parity)
    assert view["variable"].tolist() == ["SCHL", "WKHP", "JWMNP", "PINCP"]


def test_census_checks_on_the_stored_results(census):
    tab, _ = census
    table = f.census_checks(tab, stored("census_descriptive"), state_name="New Mexico")
    assert verdicts(table) == {"not comparable": 4, "reproduces": 2, "differs": 4}
    assert [v.ours_text for v in table[:4]] == [
        "15.94 (18,745)",
        "37.73 (8,776)",
        "23.44 (7,259)",
        "33,423 (16,113)",
    ]
    assert table[5].ours_text == (
        "stratified below at 0 of 33 (method, k) (0 beyond doubt)"
    )
    assert table[4].ours_text == "the same, fixed age buckets: k up to 180"
    frame = compact_frame(table, seeds_label="runs")
    assert "runs" not in frame.columns  # no row is a mean over runs
    assert "nan" not in frame.to_string()
    # without the finest grouping the attributes' levels are not the paper's
    desc = stored("census_descriptive")
    coarse = f.census_checks(tab[tab["k"] < 180], desc, state_name="X")
    assert coarse[4].outcome == "differs" and coarse[0].reason == "X, not New York"
    with pytest.raises(ValueError, match="'k'"):
        f.census_checks(tab.drop(columns="k"), desc, state_name="X")
    # For every variable stratifying loses the overall mean at most k.
    wins = f.stratified_wins(tab)
    assert all(10 * wins.wins(v) <= wins.pairs(v) for v in wins.variables)


def test_census_unit_spread_claims(census):
    tab, unit = census
    mean = f.census_mean
    unit_err = {v: mean(unit, variable=v) for v in ("SCHL", "WKHP", "JWMNP", "PINCP")}
    cover_err = {v: mean(tab, variable=v) for v in unit_err}
    by_age = {
        v: mean(unit, variable=v, method=f.LEAKY, attributes="AGE") for v in unit_err
    }
    w_unit = f.stratified_wins(unit, x="attributes")
    w_cover = f.stratified_wins(tab, x="attributes")
    glued = [f"{unit_err[v]:.1%}" for v in ("SCHL", "WKHP", "JWMNP")]
    assert glued == ["4.4%", "2.0%", "6.6%"]
    assert [f"{by_age[v]:.1%}" for v in ("SCHL", "WKHP")] == ["1.3%", "1.3%"]
    assert f"{cover_err['SCHL']:.2%}" == "0.04%"
    assert [w_unit.text(v) for v in unit_err] == [
        "36 of 45",
        "27 of 45",
        "15 of 45",
        "0 of 45",
    ]
    assert [w_cover.wins(v) for v in w_cover.variables] == [0, 0, 0, 1]
    for v in ("SCHL", "WKHP", "JWMNP"):
        assert unit_err[v] > 10 * cover_err[v]
        assert f.coinpress_bias_is_constant(unit, variable=v)  # a bias, not noise
    for v in ("SCHL", "WKHP"):  # age strata remove much of the unit spread's bias
        assert by_age[v] < 0.75 * unit_err[v]
        assert 2 * w_unit.wins(v) > w_unit.pairs(v)
        assert f.strata_with_age_best(unit, variable=v)
    assert by_age["SCHL"] < 0.5 * unit_err["SCHL"]
    assert all(10 * w_cover.wins(v) <= w_cover.pairs(v) for v in w_cover.variables)
    assert 10 * w_unit.wins("PINCP") <= w_unit.pairs("PINCP")  # the hard case
    assert 0 < 2 * w_unit.wins("JWMNP") < w_unit.pairs("JWMNP")
    assert by_age["JWMNP"] > unit_err["JWMNP"]
    view = f.unit_spread_view(tab, unit, authors=f.census_authors())
    assert view["COINPRESS: authors"].tolist() == ["4.7%", "2.0%", "3.2%", "–"]
    assert not f.coinpress_bias_is_constant(tab, variable="PINCP", tolerance=0.0)


def _census(errors, *, runs=50, variables=("V",)):
    """Hand-made census table: ``errors[(attributes, method)] = (error, parity)``."""
    k_of = {"SEX": 2, "AGE": 5, "SEX×AGE": 10}
    rows = [
        {
            "variable": v,
            "attributes": a,
            "k": k_of[a],
            "method": m,
            "normalised_error": e,
            "parity_error": p,
            "runs": runs,
        }
        for v in variables
        for (a, m), (e, p) in errors.items()
    ]
    return pd.DataFrame(rows)


def _all_methods(by_attributes):
    """``{attributes: {method: (error, parity)}}`` with COINPRESS and 3 variants."""
    return {
        (a, m): by_attributes[a].get(m, by_attributes[a]["*"])
        for a in by_attributes
        for m in ("COINPRESS", *f.STRATIFIED)
    }


def test_census_findings_on_a_hand_made_table():
    table = _census(
        _all_methods(
            {
                "SEX": {"COINPRESS": (0.02, 0.5), "*": (0.01, 0.1)},
                "AGE": {"COINPRESS": (0.02, 0.5), "*": (0.04, 0.2)},
                "SEX×AGE": {"COINPRESS": (0.02, 0.5), "*": (0.08, 0.9)},
            }
        ),
        variables=("V", "W"),
    )
    assert f.census_mean(table, variable="V") == pytest.approx(0.02)
    assert f.census_ratio(
        table, variable="V", method=f.LEAKY, attributes="SEX"
    ) == pytest.approx(0.5)
    wins = f.stratified_wins(table)
    assert wins.better_at[f.COUNTS]["V"] == (2,)
    assert (wins.wins("V"), wins.pairs("V"), wins.text("W")) == (3, 9, "3 of 9")
    assert (wins.total_wins, wins.total_pairs) == (6, 18)
    parity = f.parity_lower(table)
    assert parity.lower_at == {"V": (2, 5), "W": (2, 5)} and parity.k_top == 5
    assert parity.at_k["V"] == (0.5, 0.1) and parity.coarse
    assert f.strata_with_age_best(table, variable="V") is False
    assert f.coinpress_bias_is_constant(table, variable="V")
    top = f.error_at_largest_k(table)
    assert top.loc["V", f.LEAKY] == pytest.approx(0.08)


def test_census_findings_when_all_methods_are_equal():
    table = _census(
        _all_methods({a: {"*": (0.01, 0.1)} for a in ("SEX", "AGE", "SEX×AGE")})
    )
    wins = f.stratified_wins(table)
    assert wins.total_wins == 0 and wins.total_pairs == 9
    assert f.overall_wins_view(wins).iloc[0, 1] == "none"
    parity = f.parity_lower(table)
    assert parity.k_top == 0 and parity.coarse
    assert f.parity_view(parity)["DP counts lower at"].tolist() == ["none"]


def test_census_edge_cases():
    errors = _all_methods({a: {"*": (0.01, 0.1)} for a in ("SEX", "AGE", "SEX×AGE")})
    table = _census(errors)
    with pytest.raises(ValueError, match="stratified by 'DIS'"):
        f.census_mean(table, variable="V", attributes="DIS")
    with pytest.raises(ValueError, match="no rows of 'COINPRESS' for 'X'"):
        f.census_mean(table, variable="X")
    with pytest.raises(ValueError, match="parity_error"):
        f.census_mean(
            table.drop(columns="parity_error"), variable="V", column="parity_error"
        )
    partial = table.copy()
    partial.loc[0, "runs"] = 12  # one setting stopped early
    with pytest.raises(ValueError, match="partial"):
        f.census_mean(partial, variable="V")
    with pytest.raises(ValueError, match="not the 50"):
        f.stratified_wins(partial, runs=50)
    one_run = _census(errors, runs=1)  # one run is still a mean over what it says
    assert f.census_mean(one_run, variable="V", runs=1) == pytest.approx(0.01)
    absent = table[~((table["method"] == f.COUNTS) & (table["attributes"] == "AGE"))]
    with pytest.raises(ValueError, match="lack some of the methods"):
        f.stratified_wins(absent)
    with pytest.raises(ValueError, match="with k = 2"):
        f.parity_lower(table[table["k"] != 2])
    with pytest.raises(ValueError, match="with and without AGE"):
        f.strata_with_age_best(table[table["attributes"] != "SEX"], variable="V")
    with pytest.raises(ValueError, match="no COINPRESS rows"):
        f.coinpress_bias_is_constant(table, variable="X")


def test_descriptive_findings():
    desc = stored("census_descriptive")
    assert f"{f.universe_size(desc, variable='WKHP'):,}" == "8,776"
    assert f"{f.descriptive_records(desc):,}" == "19,247"
    view = f.descriptive_view(desc)
    assert view.loc[view.variable == "SCHL", "not applicable"].item() == "502 (3%)"
    hand = pd.DataFrame(
        {
            "variable": ["A"],
            "records": [10],
            "missing": [5],
            "mean": [2.5],
            "sd": [1.0],
            "min": [1.0],
            "median": [2.0],
            "max": [4.0],
        }
    )
    row = f.descriptive_view(hand).iloc[0]
    assert (row["not applicable"], row["mean"], row["sd"]) == ("5 (50%)", "2.50", "1")
    with pytest.raises(ValueError, match="no row of 'B'"):
        f.universe_size(hand, variable="B")
    with pytest.raises(ValueError, match="disagree"):
        f.descriptive_records(pd.concat([hand, hand.assign(records=11)]))
    with pytest.raises(ValueError, match="'median'"):
        f.descriptive_view(hand.drop(columns="median"))
    with pytest.raises(ValueError, match=r"lacks \['PINCP'\]"):
        f.census_checks(
            stored("strat_mean_census"),
            desc[desc.variable != "PINCP"],
            state_name="New Mexico",
        )


def test_small_formatters():
    assert f.compared_text([3]) == "3" and f.compared_text([11, 9, 11]) == "9 to 11"
    with pytest.raises(ValueError):
        f.compared_text([])
    view = f.prior_view({"X": {"lower": -1.0, "upper": 2000.0, "sigma": 3.0}})
    assert view.iloc[0].tolist() == ["X", "[-1, 2,000]", "3"]
    authors = f.census_authors()
    assert authors.wins == {"SCHL": 23, "WKHP": 30, "JWMNP": 21, "PINCP": 1}
    assert "PINCP" not in authors.relative


# ------------------------------------------------- verdict helpers and glued texts


def test_mc_mean_gives_the_interval_of_a_monte_carlo_mean():
    from scipy import stats

    e = f.mc_mean(0.5, se=0.01, runs=50)
    assert e.mean == 0.5 and e.n_seeds == 50
    assert e.sd == pytest.approx(0.01 * np.sqrt(50))
    assert e.half_width == pytest.approx(stats.t.ppf(0.975, 49) * 0.01)
    one = f.mc_mean(0.5, se=0.0, runs=1)  # one run: no spread, no interval
    assert one.sd is None and one.half_width == 0 and one.contains(0.5)
    with pytest.raises(ValueError, match="finite"):
        f.mc_mean(float("nan"), se=0.1, runs=5)
    with pytest.raises(ValueError, match="se >= 0"):
        f.mc_mean(0.5, se=-0.1, runs=5)
    with pytest.raises(ValueError, match="runs"):
        f.mc_mean(0.5, se=0.1, runs=0)


def test_at_most_judges_by_the_whole_interval():
    below = f.at_most("e", 0.01, f.mc_mean(0.006, se=0.001, runs=50), note="m")
    assert (below.outcome, below.reason) == (
        "reproduces",
        "our interval is below it (m)",
    )
    assert below.claim == "at most 0.01" and below.paper == 0.01
    across = f.at_most("e", 0.01, f.mc_mean(0.0095, se=0.001, runs=50))
    assert across.outcome == "inconclusive"
    above = f.at_most("e", 0.01, f.mc_mean(0.02, se=0.001, runs=50))
    assert above.outcome == "differs"
    # all runs equal: the interval is the value itself
    assert f.at_most("e", 0.01, f.mc_mean(0.01, se=0.0, runs=5)).outcome == (
        "reproduces"
    )


def test_checks_frame_names_runs_and_drops_an_empty_column():
    from dpnotes.findings.verdict import Verdict

    text = Verdict("a", None, None, "reproduces", "", claim="c", ours_text="3 of 4")
    number = f.at_most("b", 0.01, f.mc_mean(0.006, se=0.001, runs=50))
    frame = compact_frame([text, number], seeds_label="runs")
    assert frame["runs"].tolist() == ["–", "50"]
    assert list(frame.columns).index("runs") == list(frame.columns).index("verdict") - 1
    assert "runs" not in compact_frame([text], seeds_label="runs").columns
    assert "seeds" not in frame.columns
    with pytest.raises(ValueError):
        compact_frame([], seeds_label="runs")


def test_glue_texts_refuses_empty_and_nan_texts():
    assert f.glue_texts({"a": 1, "b": "x"}) == {"a": "1", "b": "x"}
    with pytest.raises(ValueError, match="'a'"):
        f.glue_texts({"a": " "})
    with pytest.raises(ValueError, match="'b'"):
        f.glue_texts({"b": float("nan")})


def test_plain_log_ticks():
    assert f.plain_log_ticks(0.0015, 0.03) == [0.002, 0.005, 0.01, 0.02]
    assert f.plain_log_ticks(1.0, 1.0) == [1.0]
    assert f.plain_log_ticks(3.0, 4.0) == []
    with pytest.raises(ValueError):
        f.plain_log_ticks(0.0, 1.0)
    with pytest.raises(ValueError):
        f.plain_log_ticks(2.0, 1.0)


def test_theory_texts_on_the_stored_results(race):
    log = f.log_size_texts(f.log_size_sum_check(stored("log_size_sum")))
    assert log == {
        "log-size-n": "10,000",
        "log-size-runs": "50",
        "log-size-maxz": "3.8",
        "log-size-within2": "94%",
        "log-size-points": "240",
        "log-size-maxz-where": "k = 3 and α = 0.75",
        "log-size-maxz-sd": "0.62",
        "log-size-maxz-exact": "3.5",
    }
    bound = f.bound_texts(f.bound_check(stored("laplace_bound_check"), gamma=0.05))
    assert (bound["bound-slope"], bound["bound-releases"]) == ("0.45", "2,000")
    assert (bound["bound-ratio-lo"], bound["bound-ratio-hi"]) == ("1.9", "2.6")
    assert (bound["bound-k1-z"], bound["bound-k1-side"]) == ("1.9", "above")
    texts = f.race_texts(race)
    assert texts == {
        "table3-alpha": "0.26",
        "table3-alpha-sorted": "0.09",
        "paper-gain-a": "72%",
        "mle-gain-a": "33%",
        "ny-alpha-mle": "0.27",
        "nm-alpha-mle": "0.31",
    }
    without_nm = replace(
        race, stored_alpha={k: v for k, v in race.stored_alpha.items() if k[0] != "NM"}
    )
    with pytest.raises(ValueError, match="NM"):
        f.race_texts(without_nm)


def test_coinpress_texts_on_the_stored_and_hand_made_tables(synth):
    cells, cfg = synth
    kw = {"sweeps": cfg["sweeps"], "fixed": cfg["fixed"]}
    texts = f.synthetic_texts(cells, **kw)
    assert texts["synth-fixed-n"] == "k = 3, α = 0.3"
    assert [texts[k] for k in f.SYNTHETIC_RATIOS] == [
        "2.2",
        "35",
        "1.9",
        "16",
        "3.2",
        "9",
    ]
    hand = f.synthetic_cells(_synthetic(ALL_EQUAL))
    ratios = {"r": ("n", 1000, f.LEAKY, ".2f")}
    out = f.synthetic_texts(hand, sweeps=SWEEPS, fixed=FIXED, ratios=ratios)
    assert out["r"] == "1.00"
    with pytest.raises(ValueError, match="no 'x'"):
        f.synthetic_texts(
            hand, sweeps=SWEEPS, fixed=FIXED, ratios={"r": ("n", 1000, "x", ".1f")}
        )
    variants = f.spread_variants(
        {label: _synthetic(ALL_EQUAL) for label in "abc"}, fixed=FIXED
    )
    spread = f.spread_texts(variants, fixed=FIXED)
    assert spread["spread-settings"] == "5" and spread["spread-unit-cp"] == "0.0010"
    with pytest.raises(ValueError, match="3 conventions"):
        f.spread_texts(variants[:2], fixed=FIXED)


def test_census_texts_on_the_stored_results(census):
    tab, unit = census
    texts = f.census_texts(tab, stored("census_descriptive"))
    assert texts["schl-k2-strat"] == "0.05%" and texts["schl-k2-cp"] == "0.04%"
    assert texts["schl-k180-strat"] == "2.88%" and texts["schl-k180-ratio"] == "60"
    assert texts["schl-pe-k2-strat"] == "0.0021" and texts["schl-pe-k10-cp"] == "3.2"
    assert texts["wkhp-n"] == "8,776" and texts["desc-records"] == "19,247"
    assert texts["overall-k-compared"] == texts["parity-k-compared"] == "11"
    u = f.unit_spread_texts(tab, unit, authors=f.census_authors())
    assert [u[f"unit-{v}"] for v in ("SCHL", "WKHP", "JWMNP")] == [
        "4.4%",
        "2.0%",
        "6.6%",
    ]
    assert u["unit-SCHL-authors"] == "4.7%" and u["unit-WKHP-age"] == "1.3%"
    assert u["unit-SCHL-wins"] == "36 of 45" and u["unit-PINCP-wins"] == "0 of 45"
    assert u["cover-SCHL"] == "0.04%"
    assert u["cover-wins"] == "SCHL 0, WKHP 0, JWMNP 0, PINCP 1"
    with pytest.raises(ValueError, match="stratified by"):
        f.census_texts(tab, stored("census_descriptive"), finest="SEX×NATIVITY")


def _with_se(table, se=0.001):
    return table.assign(normalised_error_se=se, parity_error_se=se)


def test_wins_tally_on_stored_and_hand_made_tables(census):
    tab, unit = census
    for v in ("SCHL", "WKHP", "JWMNP", "PINCP"):
        t = f.wins_tally(tab, variable=v)
        wins = f.stratified_wins(tab)
        assert (t.wins, t.total) == (wins.wins(v), wins.pairs(v))
    by_set = f.wins_tally(unit, variable="SCHL", x="attributes")
    assert (by_set.wins, by_set.total) == (36, 45)
    assert by_set.clear_wins <= by_set.wins
    hand = _census(
        _all_methods(
            {
                "SEX": {"COINPRESS": (0.02, 0.5), "*": (0.01, 0.1)},  # clear win
                "AGE": {"COINPRESS": (0.02, 0.5), "*": (0.0199, 0.2)},  # within noise
                "SEX×AGE": {"COINPRESS": (0.02, 0.5), "*": (0.08, 0.9)},  # clear loss
            }
        )
    )
    t = f.wins_tally(_with_se(hand), variable="V")
    assert (t.total, t.wins, t.clear_wins, t.clear_losses) == (9, 6, 3, 3)
    equal = _census(
        _all_methods({a: {"*": (0.01, 0.1)} for a in ("SEX", "AGE", "SEX×AGE")})
    )
    t = f.wins_tally(_with_se(equal, 0.0), variable="V")
    assert (t.wins, t.clear_wins, t.clear_losses) == (0, 0, 0)
    with pytest.raises(ValueError, match="normalised_error_se"):
        f.wins_tally(hand, variable="V")
    with pytest.raises(ValueError, match="no rows of 'X'"):
        f.wins_tally(_with_se(hand), variable="X")
    partial = _with_se(hand)
    partial.loc[0, "runs"] = 3
    with pytest.raises(ValueError, match="partial"):
        f.wins_tally(partial, variable="V")
    absent = _with_se(hand)
    absent = absent[~((absent["method"] == f.COUNTS) & (absent["attributes"] == "AGE"))]
    with pytest.raises(ValueError, match="lack some of the methods"):
        f.wins_tally(absent, variable="V")


def test_figures_draw_every_panel_and_refuse_a_missing_column(synth, census):
    import matplotlib.pyplot as plt

    lss = stored("log_size_sum")
    fig = f.log_size_figure(lss)
    assert [ax.get_title() for ax in fig.axes] == ["k = 3", "k = 10", "k = 30"]
    fig2 = f.bound_figure(stored("laplace_bound_check"))
    assert fig2.axes[0].get_yticks().size > 0
    cells, cfg = synth
    fig3 = f.sweep_figure(cells, var="k", sweeps=cfg["sweeps"], fixed=cfg["fixed"])
    assert len(fig3.axes[0].lines) >= 4
    fig4 = f.census_figure(census[0], column="parity_error", ylabel="parity")
    assert [ax.get_title() for ax in fig4.axes[:4]] == [
        "SCHL",
        "WKHP",
        "JWMNP",
        "PINCP",
    ]
    plt.close("all")
    with pytest.raises(ValueError, match="min_exact"):
        f.log_size_figure(lss.drop(columns="min_exact"))
    with pytest.raises(ValueError, match="bound_worst"):
        f.bound_figure(stored("laplace_bound_check").drop(columns="bound_worst"))
    with pytest.raises(ValueError, match="parity_error"):
        f.census_figure(
            census[0].drop(columns="parity_error"), column="parity_error", ylabel="p"
        )
