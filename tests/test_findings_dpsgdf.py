"""DPSGD-F's findings, on the stored paper results and on hand-made tables.

Every number the chapters ``book/dpsgd/disparate.md``, ``dpsgdf.md`` and ``gaps.md``
state is computed here from the stored tables of ``book/_results`` (read as CSV: fast)
and asserted at the value the chapters print, with the directions their prose states;
then the functions run on small tables with known answers and their edge cases (one
seed, all values equal, a group absent, a missing column or seed).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from stored_tables import stored_table, whole_seeds_table

from dpnotes import paper_numbers
from dpnotes.findings import dpsgdf as f
from dpnotes.findings.dpsgdf import TAU
from dpnotes.findings.verdict import Verdict, estimate

RESULTS = Path(__file__).resolve().parents[1] / "book" / "_results"
SHORT = {"adult": "Adult", "dutch": "Dutch", "mnist": "MNIST"}
NAMES = {"adult": "Adult", "dutch": "Dutch", "mnist": "MNIST (unbalanced)"}
TEXT_LOOP = ("dpsgdf_main", "dpsgdf_clip", "dpsgdf_budget")


def _read(experiment: str) -> pd.DataFrame:
    # The text loop's paper results may hold part of a seed: read them as the
    # chapters do (load_per_dataset: complete seeds only).
    if experiment in TEXT_LOOP:
        return whole_seeds_table(experiment, "paper")
    return stored_table(experiment, "paper")


@pytest.fixture(scope="module")
def main() -> pd.DataFrame:
    return _read("dpsgdf_main")


@pytest.fixture(scope="module")
def clip() -> pd.DataFrame:
    return _read("dpsgdf_clip")


@pytest.fixture(scope="module")
def budget() -> pd.DataFrame:
    return _read("dpsgdf_budget")


@pytest.fixture(scope="module")
def census() -> pd.DataFrame:
    return _read("dpsgdf_census")


@pytest.fixture(scope="module")
def ref() -> pd.DataFrame:
    return _read("dpsgdf_reference")


@pytest.fixture(scope="module")
def text(main) -> pd.DataFrame:
    return main[main.dataset == "mnist"]


@pytest.fixture(scope="module")
def ref_main(ref) -> pd.DataFrame:
    return ref[ref.part == "main"]


@pytest.fixture(scope="module")
def sweeps(budget, text, ref, ref_main) -> dict[str, pd.DataFrame]:
    text_sigma = budget[(budget.dataset == "mnist") & (budget.vary == "sigma")]
    return {
        "text": f.noise_sweep(text_sigma, text, seed=0),
        "reference": f.noise_sweep(
            ref[ref.part.isin(["main", "sigma"])], ref_main, seed=0
        ),
    }


@pytest.fixture(scope="module")
def checks(ref_main) -> f.FigureChecks:
    return f.figure_checks(ref_main, clip_norm=1.0)


# ------------------------------------------------ gaps.md: Figure 3b, the noise sweep


def test_noise_sweep_gap_over_sigma_under_both_loops(sweeps):
    text, rs = sweeps["text"], sweeps["reference"].set_index("σ").sort_index()
    assert f"{text.gap.min():.2f}–{text.gap.max():.2f}" == "0.71–0.77"
    assert f"{rs.gap.min():.2f}–{rs.gap.max():.2f}" == "0.23–0.28"
    assert sorted(rs.index) == [0.6, 0.8, 1.0, 1.5, 2.0]
    assert f"{rs['ε'].min():.1f} to {rs['ε'].max():.1f}" == "1.5 to 15.2"
    assert f"{rs.gap.iloc[0]:.2f}" == "0.25" and f"{rs.gap.iloc[-1]:.2f}" == "0.28"
    assert f"{-rs['digit 8'].max():.2f} to {-rs['digit 8'].min():.2f}" == "0.29 to 0.35"
    # The prose: far above τ under the text loop; a third of it under the reference
    # loop, still several τ; no steady rise with σ; digit 8 pays, digit 2 little.
    assert text.gap.min() > 10 * TAU
    assert rs.gap.min() > 3 * TAU and rs.gap.max() < text.gap.min() / 2
    assert 0.2 < rs.gap.mean() / text.gap.mean() < 0.45
    assert (rs["digit 2"].abs() < 2 * TAU).all() and (rs["digit 8"] < -4 * TAU).all()
    assert abs(rs.gap.iloc[-1] - rs.gap.iloc[0]) < 2 * TAU
    assert not (np.diff(rs.gap) > 0).all()


def test_figure3b_gap_per_seed_agrees_with_the_noise_sweep(budget, sweeps):
    mnist = budget[budget.dataset == "mnist"]
    gap = f.figure3b_gap(mnist[mnist.vary == "sigma"], mnist[mnist.vary == "epochs"])
    assert list(gap.index) == [0, 1, 2]
    assert f"{gap.mean():.3f} ± {gap.std():.3f}" == "0.755 ± 0.041"
    # The same computation as gaps.md's sweep: seed 0's SGD runs are identical.
    assert gap[0] == pytest.approx(sweeps["text"].gap.max(), abs=1e-12)


def test_more_noise_beats_fewer_epochs_at_one_epsilon(sweeps, ref_main, checks):
    m = f.noise_or_epochs(
        sweeps["reference"], ref_main, checks.epoch_gap[0], seed=0, noise_multiplier=0.8
    )
    assert (m.sigma, m.epoch) == (1.0, 18)
    assert f"{m.epsilon_noise:.1f}" == f"{m.epsilon_epochs:.1f}" == "4.1"
    assert f"{m.epsilon_first_epoch:.1f}" == "2.6"
    assert (f"{m.gap_noise:.2f}", f"{m.gap_epochs:.2f}") == ("0.25", "0.69")
    assert m.gap_epochs > 2 * m.gap_noise
    assert abs(m.epsilon_epochs / m.epsilon_noise - 1) < 0.1


def test_figures_1_to_3a_under_the_reference_loop(checks):
    rows = {c.quantity.split("(")[-1].rstrip(")"): c for c in checks.rows()}
    assert checks.seeds == (0, 1, 2)
    assert f"{rows['Figure 1'].mean:.2f}" == "0.26"
    assert f"{rows['Figure 2'].mean:.2f} ± {rows['Figure 2'].sd:.2f}" == "3.51 ± 0.05"
    assert f"{rows['Figure 3a'].mean:.2f}" == "0.22"
    assert all(c.outcome == "differs" for c in rows.values())
    assert all(isinstance(c, Verdict) for c in rows.values())
    # Figures 1 and 3a: the whole interval (seeds and the test error of the two
    # digits' four accuracies) lies above τ, not only the mean.
    assert checks.se_digit_gap > 0 and checks.se_last_gap > 0
    assert rows["Figure 1"].ours.low > TAU and rows["Figure 3a"].ours.low > TAU
    assert rows["Figure 1"].ours.interval_text() == "[0.183, 0.343]"
    assert rows["Figure 2"].mean > 3.0
    assert all(pd.isna(b) or b <= 2 for b in checks.first_below_tau)
    assert checks.last_epoch + 1 == 59  # "stop during epoch 59"


# --------------------------------------------------------- gaps.md: Table 1, both loops


def test_table1_under_both_loops(text, ref_main):
    t1_text, t1_ref = f.table1_rows(text), f.table1_rows(ref_main)
    assert f.reproduced(t1_text) == (2, 12) and f.reproduced(t1_ref) == (6, 12)
    r = {c.quantity: c for c in t1_ref}
    assert all(
        r[f"DPSGD, Δ, {g}"].outcome == "reproduces" for g in ("total", "class 2")
    )
    assert f"{r['DPSGD, Δ, class 8'].mean:+.3f}" == "-0.739"
    # Nothing stored: every row is "not comparable".
    assert f.reproduced(f.table1_rows(None)) == (0, 0)


def test_reference_loop_accuracies_beside_the_papers(text, ref_main):
    a = {c.quantity: c for c in f.implied_accuracy_rows(ref_main)}
    t = {c.quantity: c for c in f.implied_accuracy_rows(text)}
    d8, f8 = a["DPSGD, accuracy, class 8"], a["DPSGD-F, accuracy, class 8"]
    assert f"{d8.mean:.3f} ± {d8.sd:.3f}" == "0.204 ± 0.028"
    assert f"{f.sds_from_paper(d8):.1f}" == "1.6"
    closed = f.share_closed(
        start=t["DPSGD, accuracy, class 8"].mean, reached=d8.mean, target=d8.paper
    )
    assert f"{closed:.0%}" == "82%" and closed > 0.75
    assert all(
        a[f"DPSGD, accuracy, {g}"].outcome == "reproduces" for g in ("total", "class 2")
    )
    # Beyond the tolerance, but inside our 95% interval: inconclusive, not differs.
    assert d8.outcome == "inconclusive" and abs(d8.mean - d8.paper) < 0.1
    assert f8.outcome == "differs"
    assert t["DPSGD-F, accuracy, class 8"].mean < f8.mean < f8.paper
    sgd8 = f.per_seed(ref_main, "sgd", "digit 8").mean()
    assert sgd8 > paper_numbers.DPSGDF_TABLE1["mnist"]["sgd"][2]
    naive = {g: a[f"Naive, accuracy, {g}"] for g in ("total", "class 2", "class 8")}
    assert naive["total"].outcome == "reproduces"
    assert naive["class 2"].outcome == naive["class 8"].outcome == "inconclusive"
    sds = sorted(abs(f.sds_from_paper(naive[g])) for g in ("class 2", "class 8"))
    assert [f"{v:.1f}" for v in sds] == ["0.6", "1.1"] and max(sds) < 2
    assert naive["class 2"].sd > 5 * a["DPSGD, accuracy, class 2"].sd


def test_reference_epsilon_is_the_papers(ref_main):
    eps = f.final(ref_main[ref_main.method == "dpsgd"], "epsilon_classic")["value"]
    assert round(eps.mean(), 2) == paper_numbers.DPSGDF_EPSILON["mnist"]


# ---------------------------------------------- gaps.md: Table 3, the shortfall


def test_table3_shortfall_and_gaps_under_the_reference_loop(clip, text, ref, ref_main):
    text_clip = clip[clip.dataset == "mnist"]
    ref_clip = pd.concat([ref_main, ref[ref.part == "clip"]])
    rows = f.table3_rows(ref_clip, ref_main)
    assert f.reproduced(f.table3_rows(text_clip, text)) == (0, 18)
    assert f.reproduced(rows) == (10, 18)
    t3 = f.table3_reading(rows, ref_clip, ref_main)
    short = list(t3.shortfall.values())
    assert t3.bounds == (1.0, 2.0, 3.0, 4.0, 5.0)
    assert f"{short[0]:.2f}" == "0.06"
    assert f"{min(short[1:]):.2f}–{max(short[1:]):.2f}" == "0.11–0.12"
    assert f"{min(t3.shortfall_sds.values()):.1f}" == "2.5"
    assert ", ".join(f.mean_sd_text(g) for g in t3.gaps.values()) == (
        "0.67 ± 0.02, 0.39 ± 0.02, 0.28 ± 0.01, 0.23 ± 0.01, 0.20 ± 0.03"
    )
    assert f.mean_sd_text(t3.gap_f) == "0.24 ± 0.02"
    assert f"{t3.paper_gap_f:.2f}" == "0.02"
    assert t3.as_equal[0] == 4.0
    # The prose: total and class 2 reproduce at every bound, class 8 gains with C but
    # stays short by a tenth or so, many standard deviations; DPSGD-F's gap is far
    # above the paper's, and a large enough bound is as equal.
    assert all(
        t3.rows[cn][g].outcome == "reproduces"
        for cn in t3.bounds
        for g in ("total", "class 2")
    )
    # Short at every bound; at C = 1 the paper's number is inside our interval.
    assert [t3.rows[cn]["class 8"].outcome for cn in t3.bounds] == (
        ["inconclusive"] + ["differs"] * 4
    )
    assert 0 < min(short) and max(short) < 0.15 and min(t3.shortfall_sds.values()) > 2
    assert all(np.diff([t3.rows[cn]["class 8"].mean for cn in t3.bounds]) > 0)
    assert t3.gap_f.mean() > 3 * t3.paper_gap_f
    f8 = t3.dpsgdf["class 8"]
    assert any(t3.rows[cn]["class 8"].mean >= f8.mean - f8.sd for cn in t3.bounds)


# --------------------------------------------------------- gaps.md: Table 2, the census


def test_table2_readings_of_the_gradient_norm(census, ref_main):
    match = f.match_paper_groups(census)
    assert match["adult"] == {"all": "all", "male": "male", "female": "female"}
    assert match["dutch"] == {"all": "all", "male": "female", "female": "male"}
    rows = []
    for d in ("adult", "dutch"):
        frame = census[(census.dataset == d) & (census.encoding == "paper")]
        groups = [match[d][g] for g in ("male", "female")]
        rows += f.table2_rows(frame, d, groups, ("M", "F"))
    loss = f.paper_ratios(rows, "loss")
    per_example = f.paper_ratios(rows, "per-example norm")
    norm = f.paper_ratios(rows, "norm of the average")
    assert f.reproduced(c for c in rows if c.quantity.endswith("loss")) == (16, 16)
    assert f"{loss.median():.1f}" == "1.0"
    assert f"{per_example.median():.1f}" == "6.1"
    assert f"{per_example.min():.1f} to {per_example.max():.1f}" == "2.8 to 14.8"
    assert f"{norm.median():.1f}" == "1.5"
    assert per_example.median() > 3 * norm.median() and 0.5 < norm.median() < 2
    assert per_example.min() > 2
    t2 = {
        c.quantity: c
        for c in f.table2_rows(
            ref_main, "mnist", ("digit 2", "digit 8"), ("class 2", "class 8")
        )
    }
    assert t2["DPSGD-F, class 8, norm of the average"].outcome == "differs"
    f8 = t2["DPSGD-F, class 8, loss"]
    assert f"{f8.mean:.2f}" == "1.26" and f8.mean > 2 * f8.paper
    ratio = {
        "census": f.norm_ratios(census[census.encoding == "paper"]),
        "mnist": f.norm_ratios(ref_main),
    }
    assert f"{ratio['mnist'].min():.1f} to {ratio['mnist'].max():.1f}" == "1.2 to 1.5"
    assert f"{ratio['census'].min():.1f} to {ratio['census'].max():.1f}" == "1.6 to 5.1"
    assert ratio["census"].max() > 2 * ratio["mnist"].max()


def test_census_table1_under_both_encodings(census, main):
    hits = {
        (d, e): f.reproduced(f.census_table1(census, d, e))[0]
        for d in ("adult", "dutch")
        for e in ("paper", "full")
    }
    assert hits == {
        ("adult", "paper"): 10,
        ("adult", "full"): 10,
        ("dutch", "paper"): 9,
        ("dutch", "full"): 5,
    }
    assert hits[("dutch", "paper")] > hits[("dutch", "full")] + 2
    m = {
        e: {c.quantity: c for c in f.census_table1(census, "dutch", e)}[
            "DPSGD, Δ, male"
        ]
        for e in ("paper", "full")
    }
    assert (f"{m['paper'].mean:+.3f}", f"{m['full'].mean:+.3f}") == ("-0.132", "-0.041")
    assert abs(m["paper"].mean - m["paper"].paper) < abs(
        m["full"].mean - m["full"].paper
    )
    dutch = {c.quantity: c for c in f.table1_comparisons(main, census, "dutch")}
    assert all(
        dutch[f"DPSGD-F, Δ, {g}"].outcome == "reproduces"
        for g in ("total", "male", "female")
    )


# ---------------------------------------------- dpsgdf.md: the paper's claims


def test_table1_is_computed_once_for_both_chapters(main, census, text):
    a = f.table1_comparisons(main, census, "mnist")
    b = f.table1_rows(text)
    assert [(c.quantity, c.mean, c.sd) for c in a] == [
        (c.quantity, c.mean, c.sd) for c in b
    ]
    assert f.reproduced(a) == (2, 12)
    eight = {m: f.cost(text, m, "digit 8").mean() for m in ("dpsgd", "dpsgd_f")}
    assert (f"{eight['dpsgd']:.3f}", f"{eight['dpsgd_f']:.3f}") == ("-0.882", "-0.788")
    assert eight["dpsgd_f"] < 0.5 * eight["dpsgd"]  # DPSGD-F leaves digit 8 badly off


@pytest.fixture(scope="module")
def claim_rows(main, census, clip, budget) -> list[Verdict]:
    return f.claims(main, census, clip, budget, clip_norm=1.0, short=SHORT)


def test_claims_share_of_the_gap_removed_and_census_gaps(claim_rows):
    rows = claim_rows
    c = {r.quantity: r for r in rows}
    share_f = c["MNIST, share of DPSGD's gap that DPSGD-F removes (Table 1)"]
    share_2 = c["MNIST, share of DPSGD's gap that DPSGD with C = 2 removes (Table 3)"]
    assert (f"{share_f.mean:.0%}", f"{share_f.paper:.0%}") == ("11%", "98%")
    assert (f"{share_2.mean:.0%}", f"{share_2.paper:.0%}") == ("4%", "53%")
    fig3b = c["MNIST, DPSGD-F: largest |gap| over the σ sweep (Figure 3b)"]
    assert (fig3b.n_seeds, fig3b.outcome) == (3, "differs")
    assert fig3b.ours.low > TAU and fig3b.claim.startswith("below τ")
    assert c["MNIST, DPSGD-F: gap (Table 1)"].outcome == "differs"
    # Naive's MNIST gap: 0.077 over five seeds, every seed's positive; the paper's
    # 0.0002 lies outside our interval (over four seeds it was inside: inconclusive).
    naive = c["MNIST, Naive: gap (Table 1)"]
    assert naive.outcome == "differs" and not naive.ours.contains(naive.paper)
    # The share DPSGD-F removes: its interval lies far below the paper's 0.975.
    assert share_f.outcome == "differs" and share_f.ours.high < 0.5
    assert all(isinstance(r, Verdict) and r.ours is not None for r in rows)
    for d in ("Adult", "Dutch"):
        for m in ("DPSGD", "Naive"):
            assert c[f"{d}, {m}: gap (Table 1)"].outcome == "reproduces"
        assert c[f"{d}, DPSGD: gap (Table 1)"].mean < -TAU  # the men pay more
        assert abs(c[f"{d}, DPSGD-F: gap (Table 1)"].mean) < TAU
    assert f"{c['Adult, DPSGD: gap (Table 1)'].mean:.3f}" == "-0.056"
    assert c["Dutch, DPSGD-F: gap (Table 1)"].outcome == "reproduces"
    adult_f = c["Adult, DPSGD-F: gap (Table 1)"]
    assert adult_f.outcome == "differs" and adult_f.mean < adult_f.paper
    assert f"{adult_f.mean:+.3f}" == "-0.045"


def test_larger_bounds_for_dpsgd(clip, main):
    assert f.matching_bounds(clip) == (3.0, 4.0, 5.0)
    share = f.clip_shares(clip)
    assert share["digit 8"].min() >= 0.95
    assert share["other digits"].is_monotonic_decreasing
    runs = f.clip_table(clip)
    dp = runs[runs.method == "dpsgd"].groupby("C")["e"].mean()
    assert dp.is_monotonic_increasing and dp.iloc[0] < 0.1
    assert f.largest_bound_ratio(main, clip_norm=1.0).index.tolist() == [0, 1, 2, 3, 4]
    assert f.last_bound_ratios(main, "dutch").between(1.9, 2.1).all()


def test_budget_sweep_gaps(budget):
    change = []
    for dataset in ("mnist", "adult"):
        g = f.sweep_gaps(budget, dataset)
        assert g.smaller == len(g.gap) == 5  # DPSGD-F's gap smaller at every budget
        change.append(g.change["dpsgd"])
    assert f"{max(change):.1f}" == "0.2" and max(change) < 0.5


def test_why_dpsgdf_moves_little_on_mnist(main):
    m = f.mnist_clipping(main, batch_size=256, clip_norm=1.0)
    assert len(m.per_batch) == 10
    assert f"{m.per_batch['digit 8']:.1f}" == "2.3"
    assert f"{m.naive_weight['digit 8']:.1f}" == "10.9"
    assert (m.grad_norm > 1.0).all()  # every digit's gradients are above C_0


def test_display_tables_have_a_row_per_dataset_and_method(main):
    gaps = f.gap_table(main, NAMES)
    assert len(gaps) == 3 + 4 + 4  # MNIST has no DPSGD 2C0
    assert len(f.parity_table(main, NAMES)) == len(gaps)
    acc = f.accuracy_table(main, "mnist")
    assert acc.group.iloc[-1] == "all" and len(acc) == 11


# --------------------------------------------------------- disparate.md: who pays


def test_who_pays_on_the_census_data(main):
    g = {
        (d, s): f.group_diagnostics(main, d, s)
        for d in ("adult", "dutch")
        for s in ("male", "female")
    }
    assert g["adult", "male"].seeds == (0, 1, 2, 3, 4)
    text = {
        k: (f"{-v.cost.mean():.3f}", f"{v.clip_share.mean():.0%}") for k, v in g.items()
    }
    assert text == {
        ("adult", "male"): ("0.093", "40%"),
        ("adult", "female"): ("0.024", "12%"),
        ("dutch", "male"): ("0.030", "70%"),
        ("dutch", "female"): ("0.041", "59%"),
    }
    a, w = g["adult", "male"], g["adult", "female"]
    assert a.cost.mean() < w.cost.mean() and a.clip_share.mean() > w.clip_share.mean()
    assert a.sgd.mean() < w.sgd.mean()
    m, w = g["dutch", "male"], g["dutch", "female"]
    assert w.cost.mean() < m.cost.mean() and w.grad_norm.mean() < m.grad_norm.mean()
    assert w.clip_share.mean() < m.clip_share.mean()
    # Naive's accuracies match DPSGD's on the census data.
    for d in ("adult", "dutch"):
        frame = main[main.dataset == d]
        for s in ("male", "female"):
            naive, dpsgd = (f.cost(frame, m_, s).mean() for m_ in ("naive", "dpsgd"))
            assert abs(naive - dpsgd) < 0.002


# ----------------------------------------------------------------- hand-made tables


def _runs(
    acc: dict[tuple[str, int], dict[str, float]],
    *,
    dataset: str = "mnist",
    epochs: int = 2,
    **settings,
) -> pd.DataFrame:
    """Accuracy rows: ``acc[(method, seed)][group]`` at the last of ``epochs``.

    Earlier epochs hold 0.5, so that a function reading any but the last one fails.
    """
    rows = []
    for (method, seed), groups in acc.items():
        for group, value in groups.items():
            for epoch in range(1, epochs + 1):
                rows.append(
                    {
                        "dataset": dataset,
                        **settings,
                        "method": method,
                        "seed": seed,
                        "metric": "accuracy",
                        "group": group,
                        "epoch": epoch,
                        "value": value if epoch == epochs else 0.5,
                    }
                )
    return pd.DataFrame(rows)


def test_final_takes_each_runs_last_epoch_and_keeps_missing_settings():
    t = pd.concat(
        [
            _runs({("sgd", 0): {"all": 0.9}}, epochs=3, clip_norm=np.nan),
            _runs({("sgd", 0): {"all": 0.8}}, epochs=2, clip_norm=2.0),
        ]
    )
    got = f.final(t, "accuracy").sort_values("value")["value"].tolist()
    assert got == [0.8, 0.9]


def test_per_seed_and_cost_with_one_seed_and_a_missing_sgd_seed():
    t = _runs(
        {
            ("sgd", 0): {"digit 8": 0.9},
            ("dpsgd", 0): {"digit 8": 0.2},
            ("dpsgd", 1): {"digit 8": 0.3},
        }
    )
    assert f.per_seed(t, "dpsgd", "digit 8").to_dict() == {0: 0.2, 1: 0.3}
    c = f.cost(t, "dpsgd", "digit 8")
    assert c.index.tolist() == [0]  # the seeds used travel with the values
    assert c[0] == pytest.approx(-0.7)
    assert f.per_seed(t, "dpsgd", "digit 5").empty  # a group absent


def test_per_seed_refuses_a_table_without_a_column_or_with_ambiguous_runs():
    t = _runs({("sgd", 0): {"all": 0.9}})
    with pytest.raises(ValueError, match="'epoch'"):
        f.per_seed(t.drop(columns="epoch"), "sgd", "all")
    twice = pd.concat([t.assign(encoding="paper"), t.assign(encoding="full")])
    with pytest.raises(ValueError, match="several runs"):
        f.per_seed(twice, "sgd", "all")
    assert f.per_seed(twice, "sgd", "all", encoding="full").tolist() == [0.9]


def test_mean_sd_text_with_one_seed_and_equal_values():
    assert f.mean_sd_text([0.25]) == "0.25"
    assert f.mean_sd_text(pd.Series([0.3, 0.3, 0.3])) == "0.30 ± 0.00"
    with pytest.raises(ValueError, match="no values"):
        f.mean_sd_text([])


def _sweep(values: dict[tuple[int, float], tuple[float, float]]) -> pd.DataFrame:
    """DPSGD and DPSGD-F over σ; ``values[(seed, σ)]``: DPSGD-F's digits 2 and 8."""
    parts = []
    for (seed, sigma), (two, eight) in values.items():
        acc = {("dpsgd_f", seed): {"digit 2": two, "digit 8": eight}}
        parts.append(_runs(acc, noise_multiplier=sigma))
        eps = _runs({("dpsgd", seed): {"all": 10 / sigma}}, noise_multiplier=sigma)
        parts.append(eps.assign(metric="epsilon_classic"))
    return pd.concat(parts, ignore_index=True)


SGD = _runs({(("sgd", s)): {"digit 2": 0.99, "digit 8": 0.9} for s in (0, 1)})


def test_noise_sweep_on_a_known_table():
    runs = _sweep({(0, 1.0): (0.95, 0.5), (0, 2.0): (0.9, 0.8)})
    s = f.noise_sweep(runs, SGD, seed=0)
    assert s["σ"].tolist() == [2.0, 1.0]  # in increasing ε
    assert s["ε"].tolist() == [5.0, 10.0]
    assert s["gap"].round(6).tolist() == [0.01, 0.36]
    assert f.figure3b_gap(runs, SGD).round(6).to_dict() == {0: 0.36}


def test_noise_sweep_with_all_costs_equal_has_no_gap():
    runs = _sweep({(s, 1.0): (0.9, 0.8) for s in (0, 1)})
    sgd = _runs({(("sgd", s)): {"digit 2": 0.95, "digit 8": 0.85} for s in (0, 1)})
    assert f.figure3b_gap(runs, sgd).round(12).tolist() == [0.0, 0.0]


def test_noise_sweep_refuses_a_missing_seed_or_column():
    runs = _sweep({(2, 1.0): (0.9, 0.8)})
    with pytest.raises(ValueError, match="no SGD run of seed 2"):
        f.noise_sweep(runs, SGD, seed=2)
    with pytest.raises(ValueError, match="seed 2"):
        f.figure3b_gap(runs, SGD)
    with pytest.raises(ValueError, match="'noise_multiplier'"):
        f.noise_sweep(runs.drop(columns="noise_multiplier"), SGD, seed=2)
    only_f = runs[runs.method == "dpsgd_f"]
    with pytest.raises(ValueError, match="no σ with both"):
        f.noise_sweep(only_f, SGD[SGD.seed == 0].assign(seed=2), seed=2)


def test_our_gap_and_the_share_removed_on_a_known_table():
    acc = {}
    for s in (0, 1):
        acc[("sgd", s)] = {"digit 8": 0.9, "digit 2": 1.0}
        acc[("dpsgd", s)] = {"digit 8": 0.1, "digit 2": 0.9}  # gap -0.7
        acc[("dpsgd_f", s)] = {"digit 8": 0.2 + 0.1 * s, "digit 2": 0.9}  # -0.6, -0.5
    main = _runs(acc)
    base = f.our_gap(main, None, "mnist", "dpsgd")
    gap = f.our_gap(main, None, "mnist", "dpsgd_f")
    assert base.round(6).tolist() == [-0.7, -0.7]
    share = f.removed_share(gap, base)
    assert share.round(6).tolist() == [round(1 / 7, 6), round(2 / 7, 6)]
    assert f.removed_share(-0.0432 + 0.0281, -0.6807 + 0.0707) == 0.975
    # A missing seed of one group is named, not silently dropped.
    del acc[("sgd", 1)]
    acc[("sgd", 1)] = {"digit 8": 0.9}
    with pytest.raises(ValueError, match="seeds missing"):
        f.our_gap(_runs(acc), None, "mnist", "dpsgd_f")
    with pytest.raises(ValueError, match="seeds missing"):
        f.removed_share(gap, base.drop(1))


def test_paper_gap_reads_tables_1_and_3():
    assert f.paper_gap("mnist", "dpsgd") == round(-0.6807 + 0.0707, 4)
    assert f.paper_gap("adult", "dpsgd") == round(-0.0740 + 0.0281, 4)
    c5 = paper_numbers.DPSGDF_TABLE3[("dpsgd", 5.0)]
    assert f.paper_gap("mnist", None, ("dpsgd", 5.0)) == round(c5[2] - c5[1], 4)


def test_table1_rows_with_a_group_absent_is_not_comparable():
    acc = {
        (m, 0): {"all": 0.9, "digit 2": 0.95}
        for m in ("sgd", "dpsgd", "naive", "dpsgd_f")
    }
    rows = {c.quantity: c for c in f.table1_rows(_runs(acc))}
    assert rows["SGD, accuracy, class 8"].outcome == "not comparable"
    assert rows["SGD, accuracy, class 8"].reason == f.NOT_RUN
    assert rows["DPSGD, Δ, total"].mean == pytest.approx(0.0)
    assert rows["DPSGD, Δ, total"].n_seeds == 1


def test_share_closed_and_distance_in_sds():
    assert f.share_closed(start=0.0, reached=0.2, target=0.8) == pytest.approx(0.25)
    with pytest.raises(ValueError, match="no gap"):
        f.share_closed(start=0.3, reached=0.3, target=0.3)
    from dpnotes.findings.verdict import compare_value

    two = compare_value("x", 0.5, estimate([0.1, 0.3], proportion=False), tolerance=0.1)
    assert f.sds_from_paper(two) == pytest.approx(0.3 / np.std([0.1, 0.3], ddof=1))
    one = compare_value("x", 0.5, estimate([0.1], proportion=False), tolerance=0.1)
    with pytest.raises(ValueError, match="two or more seeds"):
        f.sds_from_paper(one)
    with pytest.raises(ValueError, match="two or more seeds"):
        f.sds_from_paper(compare_value("x", 0.5, None))


def test_group_diagnostics_refuses_a_missing_seed():
    acc = {(m, s): {"male": 0.8} for m in ("sgd", "dpsgd", "dpsgd_2c0") for s in (0, 1)}
    t = _runs(acc, dataset="adult")
    extra = []
    for metric in ("grad_norm", "clip_fraction"):
        extra.append(
            _runs(
                {("dpsgd", s): {"male": 0.5} for s in (0, 1)}, dataset="adult"
            ).assign(metric=metric)
        )
    t = pd.concat([t, *extra], ignore_index=True)
    g = f.group_diagnostics(t, "adult", "male")
    assert g.seeds == (0, 1) and g.cost.tolist() == [0.0, 0.0]
    short = t[~((t.method == "dpsgd_2c0") & (t.seed == 1))]
    with pytest.raises(ValueError, match="dpsgd_2c0 lacks 1"):
        f.group_diagnostics(short, "adult", "male")
    with pytest.raises(ValueError, match="no runs of 'female'"):
        f.group_diagnostics(t, "adult", "female")


def test_whole_epochs_drops_a_short_last_epoch():
    steps = pd.DataFrame(
        {
            "method": "sgd",
            "seed": 0,
            "metric": "steps",
            "group": "all",
            "epoch": [1, 2, 3, 4],
            "value": [10, 20, 30, 32],  # the last epoch has two steps
        }
    )
    assert f.whole_epochs(steps, "sgd", 0) == [1, 2, 3]
    with pytest.raises(ValueError, match="no rows"):
        f.whole_epochs(steps, "sgd", 1)


def test_paper_ratios_refuses_rows_without_numbers():
    from dpnotes.findings.verdict import compare_value

    rows = [
        compare_value("a, loss", 0.5, estimate([1.0], proportion=False)),
        compare_value("b, loss", 0.5, None),
    ]
    with pytest.raises(ValueError, match="1 of 2 rows"):
        f.paper_ratios(rows, "loss")
    assert f.paper_ratios(rows[:1], "loss").tolist() == [2.0]


# ------------------------------------------------------------ gaps.md: the ablation


def test_ablation_settings_compound_for_dpsgd_and_add_for_dpsgdf(ref, text):
    abl = f.ablation(ref, text, seed=0)
    assert abl.missing == ()
    n, m, z, both = abl.digit8("dpsgd")
    assert [f"{v:.3f}" for v in (n, m, z, both)] == ["0.003", "0.061", "0.043", "0.236"]
    assert n < m and n < z
    assert both - n > 2 * ((m - n) + (z - n))  # the two settings compound
    n, m, z, both = abl.digit8("dpsgd_f")
    assert f"{(m - n) + (z - n):.3f}" == "0.586" and f"{both - n:.3f}" == "0.574"
    assert min(m, z) - n > 0.2
    assert abs((both - n) - ((m - n) + (z - n))) < 0.1  # the two gains add
    shown = abl.table()
    assert shown["accuracy, digit 8"].str.fullmatch(r"\d\.\d{3}").all()


def test_quick_ablation_each_setting_lowers_the_majoritys_loss():
    quick = stored_table("dpsgdf_reference", "quick")
    epochs = 3  # the quick profile's whole epochs ("abl-epochs")
    at = quick[quick.method.isin(["dpsgd", "dpsgd_f"]) & (quick.epoch == epochs)]
    rows = pd.DataFrame(f.setting_rows(at, "quick"))
    d2 = rows[rows.method == "DPSGD"].set_index("setting")["loss, digit 2"]
    assert d2["momentum only"] < d2["neither"]
    assert d2["standardised pixels only"] < d2["neither"]
    assert d2["both (reference loop)"] < min(
        d2["momentum only"], d2["standardised pixels only"]
    )


def test_ablation_refuses_a_seed_without_runs(ref, text):
    with pytest.raises(ValueError, match="no ablation run of seed 7"):
        f.ablation(ref, text, seed=7)
    with pytest.raises(ValueError, match="'part'"):
        f.ablation(ref.drop(columns="part"), text)


def test_reference_loop_raises_digit_8s_bound_and_lowers_its_loss(text, ref_main):
    last = {}
    for loop, frame in (("text", text), ("reference", ref_main)):
        bound = f.epoch_curves(frame, "clip_bound").iloc[-1]["digit 8"]
        loss = f.epoch_curves(frame, "train_loss").iloc[-1]["digit 8"]
        last[loop] = (f"{bound:.2f}", f"{loss:.2f}")
    assert last == {"text": ("2.46", "3.91"), "reference": ("2.93", "1.56")}
    assert float(last["reference"][0]) > float(last["text"][0])
    assert float(last["reference"][1]) < float(last["text"][1])
    with pytest.raises(ValueError, match="digit 11"):
        f.epoch_curves(text, "train_loss", groups=("digit 11",))


def test_adult_reproduces_about_as_much_under_either_encoding(census):
    hits = {
        e: f.reproduced(f.census_table1(census, "adult", e))[0]
        for e in ("paper", "full")
    }
    assert hits["paper"] >= hits["full"] - 1


def test_figure3b_row_and_training_size(sweeps, text):
    row = f.figure3b_row(sweeps["reference"])
    assert (f"{row.mean:.3f}", row.outcome) == ("0.284", "differs")
    assert isinstance(row, Verdict) and row.n_seeds == 1
    counts = f.group_test_counts(text)
    assert counts == {"digit 2": 1032, "digit 8": 974}
    wide = f.figure3b_row(sweeps["reference"], n_test=counts)
    assert wide.ours.half_width > 0 and wide.outcome == "differs"
    assert f.figure3b_row(None).outcome == "not comparable"
    small = pd.DataFrame({"σ": [1.0], "ε": [2.0], "gap": [0.01]})
    assert f.figure3b_row(small).outcome == "reproduces"
    # A gap near τ with the test error of 1,000 records: inconclusive.
    near = pd.DataFrame({"σ": [1.0], "ε": [2.0], "gap": [0.04]})
    assert f.figure3b_row(near, n_test=counts).outcome == "inconclusive"
    with pytest.raises(ValueError, match="'gap'"):
        f.figure3b_row(near.drop(columns="gap"))
    with pytest.raises(ValueError, match="no n_test of digit 11"):
        f.group_test_counts(text, ("digit 11",))
    assert f.training_size(text) == 54649


def test_table1_counts_each_groups_test_records(main, text):
    rows = {v.quantity: v for v in f.table1_rows(text)}
    # MNIST's test set: 974 eights, 1,032 twos, 10,000 in all.
    assert rows["SGD, accuracy, class 8"].ours.n_test == 974
    assert rows["DPSGD, Δ, class 2"].ours.n_test == 1032
    assert rows["DPSGD, Δ, total"].ours.n_test == 10_000
    # Class 8's SGD accuracy: 0.042 from the paper's over five seeds, outside both
    # the tolerance and our interval (over four it was 0.037 and inconclusive).
    assert rows["SGD, accuracy, class 8"].outcome == "differs"
    assert f.group_test_count(None, "all") is None


def test_exceptions_and_costs_text_read_cleanly():
    from dpnotes.findings.verdict import compare_value, estimate

    def v(q, x):
        return compare_value(q, 0.0, estimate([x, x + 0.001, x]), tolerance=0.02)

    whose = {"total": "total", "male": "men's", "female": "women's"}
    good = [v(f"F, Δ, {g}", 0.0) for g in whose]
    assert f.costs_text(good, "Adult", whose) == "all 3 reproduce on Adult"
    assert f.costs_text(good[:1], "Adult", whose) == "the one reproduces on Adult"
    two_off = [good[0], v("F, Δ, male", -0.05), v("F, Δ, female", 0.04)]
    text = f.costs_text(two_off, "Dutch", whose)
    assert text.endswith("(tolerance 0.02) and the other one reproduces")
    assert "men's cost differs" in text and "women's cost differs" in text
    assert f.exceptions_text(good) == "none differs"
    assert f.exceptions_text(two_off).startswith("2 numbers differ: F, Δ, male")


# ------------------------------------------- issue 44: verdicts with intervals, texts


def test_accuracy_error_adds_binomial_errors_as_variances():
    one = estimate([0.5], n_test=100).se_test
    assert f.accuracy_error([(0.5, 100)]) == pytest.approx(one)
    assert f.accuracy_error([(0.5, 100)] * 4) == pytest.approx(2 * one)
    assert f.accuracy_error([(0.5, None)]) == 0.0  # no count: nothing added
    assert f.accuracy_error([]) == 0.0
    # An accuracy of 0 or 1 still has an error (Agresti–Coull).
    assert f.accuracy_error([(0.0, 974)]) > 0


def test_compare_below_judges_the_whole_interval():
    def below(values, se=0.0):
        return f.compare_below("gap", "below τ", f.Estimate(values, se_test=se))

    assert below((0.01, 0.012, 0.011)).outcome == "reproduces"
    assert below((0.01, 0.02)).outcome == "inconclusive"  # two seeds: a wide t
    assert below((0.2, 0.21, 0.22)).outcome == "differs"
    assert below((0.01, 0.09)).outcome == "inconclusive"  # the interval holds τ
    assert below((0.04,), se=0.01).outcome == "inconclusive"  # one seed, test error
    assert below((0.04,)).outcome == "reproduces"  # one seed, no error: a point
    none = f.compare_below("gap", "below τ", None, missing="not run")
    assert (none.outcome, none.reason) == ("not comparable", "not run")
    assert below((0.3, 0.3, 0.3)).claim == "below τ"


def test_gap_estimate_on_stored_and_known_tables(main, census):
    g = f.gap_estimate(main, census, "mnist", "dpsgd")
    assert g.values == tuple(f.our_gap(main, census, "mnist", "dpsgd"))
    assert f"{g.mean:.3f}" == "-0.786" and g.n_seeds == 5 and g.se_test > 0
    adult = f.gap_estimate(main, census, "adult", "dpsgd")
    assert adult.n_seeds == 5 and adult.high < 0  # the men pay more, beyond doubt
    acc = {}
    for s in (0, 1):
        acc[("sgd", s)] = {"digit 8": 0.9, "digit 2": 1.0}
        acc[("dpsgd", s)] = {"digit 8": 0.1, "digit 2": 0.9}
    known = f.gap_estimate(_runs(acc), None, "mnist", "dpsgd")
    assert known.values == pytest.approx((-0.7, -0.7))
    assert known.se_test == 0.0  # no n_test rows: no test error counted
    del acc[("dpsgd", 1)]
    acc[("dpsgd", 1)] = {"digit 8": 0.1}
    with pytest.raises(ValueError, match="seeds missing"):
        f.gap_estimate(_runs(acc), None, "mnist", "dpsgd")


def test_claim_texts_are_the_headline_numbers(claim_rows):
    rows = claim_rows
    t = f.claim_texts(rows)
    assert (t["claim-f-removed"], t["claim-f-removed-paper"]) == ("11%", "98%")
    assert (t["claim-c2-removed"], t["claim-c2-removed-paper"]) == ("4%", "53%")
    assert (t["gap-adult-ours"], t["gap-adult-paper"]) == ("0.056 more", "0.046 more")
    assert (t["gap-dutch-ours"], t["gap-dutch-paper"]) == ("0.091 more", "0.107 more")
    assert (t["gap-f-adult"], t["gap-f-adult-paper"]) == ("-0.045", "-0.0137")
    assert (t["gap-f-dutch"], t["gap-f-dutch-paper"]) == ("-0.019", "-0.0061")
    with pytest.raises(ValueError, match="Adult, DPSGD: gap"):
        f.claim_texts([r for r in rows if not r.quantity.startswith("Adult, DPSGD:")])


def test_table1_texts_and_frames(main, census):
    t = f.table1_texts(main, census, SHORT)
    assert t["t1-mnist"] == "2 of 12"
    assert t["t1-mnist-sgd"] == "2 of 3"
    assert (t["t1-mnist-sgd-8"], t["paper-mnist-sgd-8"]) == ("0.887", "0.9292")
    assert (t["t1-adult"], t["t1-adult-full"]) == ("10 of 12", "10 of 12")
    assert (t["t1-dutch"], t["t1-dutch-full"]) == ("9 of 12", "5 of 12")
    assert t["t1-adult-off"].startswith("2 numbers differ: DPSGD-F, Δ, total")
    assert "1 is inconclusive: DPSGD, Δ, male" in t["t1-dutch-off"]
    assert t["f-costs-census"].endswith("all 3 reproduce on Dutch")
    assert (t["t1-mnist-8-dpsgd"], t["t1-mnist-8-dpsgdf"]) == ("-0.882", "-0.788")
    assert t["paper-mnist-8-dpsgdf"] == "-0.0432"
    mnist = f.table1_frame(main, census, "mnist")
    assert len(mnist) == 12 and "verdict" in mnist.columns
    adult = f.table1_frame(main, census, "adult")
    assert list(adult.columns[2:]) == [
        "paper's encoding", "paper's encoding: verdict",
        "full encoding", "full encoding: verdict",
    ]  # fmt: skip
    note = f.census_note(census, "dutch", "paper")
    assert "its male are our female, its female are our male." in note
    assert f.census_note(census, "adult", "paper").endswith("(paper profile).")


def test_chapter_tables_of_the_stored_runs(main, clip, budget):
    mean, sd = f.digit_accuracy(main)
    assert list(mean.columns) == ["sgd", "dpsgd", "naive", "dpsgd_f"]
    assert mean.index[0] == "digit 0" and mean.index[-1] == "digit 9"
    assert mean.loc["digit 8", "dpsgd"] < 0.05 < 0.8 < mean.loc["digit 8", "naive"]
    assert sd.notna().all().all()
    v, s = f.bound_curves(main, "adult")
    assert (s["male"].dropna() >= 0).all()
    assert f"{v['male'].iloc[-1]:.2f}" == "2.33" and v["female"].iloc[-1] < 1.4
    assert f.base_bound(main, "adult") == 0.5 and f.base_bound(main, "mnist") == 1.0
    shares = f.clip_share_table(clip)
    assert shares["C"].tolist() == ["1", "2", "3", "4", "5"]
    assert f.bound_text(f.matching_bounds(clip)) == "C\u00a0=\u00a03"
    assert f.bound_text(()) == "–"
    table, texts = f.sweep_table(
        budget, ["mnist", "adult"], seeds={"mnist": [0, 1, 2], "adult": [0, 1, 2]},
        short=SHORT,
    )  # fmt: skip
    assert len(table) == 6 and texts == {"budget-dpsgd-change": "0.2"}
    assert (table["smaller gap than DPSGD's"] == "at 5 of 5 budgets").sum() == 2
    assert f.epochs_text(main, "mnist", paper=60) == "the paper's 60 epochs"
    assert f.epochs_text(main, "adult", paper=60) == "20 epochs (the paper trains 60)"
    m = f.mnist_clipping(main, batch_size=256, clip_norm=1.0)
    # The last whole epoch: DPSGD-F's budget stop cuts a short one off its runs.
    assert f.mnist_clipping_table(m)["digit 8"].tolist() == [
        "127.5", "100%", "2.68", "2.3", "10.9"
    ]  # fmt: skip
    texts = f.mnist_clipping_texts(m, noise_multiplier=0.8, clip_norm=1.0)
    assert (
        texts["mnist-sigma1"] == "σ₁\u00a0=\u00a08" and texts["mnist-eights"] == "2.3"
    )


def test_disparate_tables_of_the_census_groups(main):
    acc, grads, texts = f.diagnostics_tables(
        main, {"adult": "Adult", "dutch": "Dutch"}, {"male": "men", "female": "women"}
    )
    assert acc["Δ of DPSGD"].tolist()[:2] == ["-0.093 ± 0.003", "-0.024 ± 0.003"]
    assert grads["share clipped"].tolist()[0] == "0.40 ± 0.01"
    assert (texts["cost-adult-male"], texts["cf-adult-male"]) == ("0.093", "40%")
    assert (texts["cost-dutch-female"], texts["cost-dutch-male"]) == ("0.041", "0.030")
    assert texts["acc-adult-male-2c0"] == "0.713"
    # The prose: on Adult the men pay more and are clipped more; on Dutch the women
    # pay slightly more although they are clipped less.
    assert float(texts["cost-adult-male"]) > 3 * float(texts["cost-adult-female"])
    assert float(texts["cost-dutch-female"]) > float(texts["cost-dutch-male"])
    norms = f.epoch_means(main, "grad_norm", "adult", "dpsgd")
    assert list(norms.columns) == ["female", "male"] and len(norms) == 20
    with pytest.raises(ValueError, match="epoch_means"):
        f.epoch_means(main, "grad_norm", "adult", "dpsgd_3c0")


def test_small_helpers_on_hand_made_inputs():
    from types import SimpleNamespace as NS

    split = NS(y_train=np.array([0, 1, 0]), y_test=np.array([0]),
               g_train=np.array([0, 0, 1]), g_test=np.array([1]),
               group_names=["male", "female"])  # fmt: skip
    assert f.negative_rates(split, data="adult") == {
        "base-adult-male": "0.500", "base-adult-female": "1.000"
    }  # fmt: skip
    with pytest.raises(ValueError, match="no record of group 'other'"):
        f.negative_rates(NS(**{**vars(split), "group_names": ["a", "b", "other"]}),
                         data="x")  # fmt: skip
    assert f.device_text([NS(meta={"device": {"accelerator": "none"}})]) == (
        "the CPU (no accelerator)"
    )
    assert f.device_text([None, NS(meta={"device": {"accelerator": "H100"}})]) == (
        "H100; unknown"
    )
    with pytest.raises(ValueError, match="no stored result"):
        f.device_text([])
    assert f.stored_text(NS(partial=True, cells_done=3, cells=5)) == (
        "3 of 5 runs stored"
    )
    assert f.stored_text(NS(partial=True, cells_done=5, cells=5)) == "all runs stored"
    four = NS(partial=True, cells_done=3, cells=5, seeds=[0, 1, 2, 3])
    assert f.stored_text(four, seeds=True) == "seeds 0–3, 3 of 5 runs stored"
    names = {"mnist": "MNIST", "adult": "Adult"}
    assert f.budget_data_text(["adult"], names) == "Adult"
    assert f.budget_data_text(["mnist", "adult"], names).startswith(
        "MNIST and Adult (a row each); MNIST: digit 8"
    )
    with pytest.raises(ValueError, match="no data set"):
        f.budget_data_text([], names)


def test_wall_table_and_base_bound_on_known_tables():
    t = _runs({("sgd", 0): {"all": 0.9}, ("dpsgd", 0): {"all": 0.8}})
    wall = t.assign(metric="wall_seconds", value=[0.0, 7200.0, 0.0, 1800.0])
    steps = t.assign(metric="steps")
    grid = [{"dataset": "mnist", "method": m} for m in ("sgd", "dpsgd", "dpsgd")]
    table = f.wall_table(pd.concat([wall, steps]), {"mnist": "MNIST (unbalanced)"},
                         profiles={"mnist": "paper"}, grid=grid)  # fmt: skip
    row = table.iloc[0]
    assert row["data"] == "MNIST (paper, 2 ep.)"
    assert (row["SGD"], row["DPSGD"], row["Naive"]) == ("3,600", "900", "–")
    assert (row["paper grid"], row["runs"]) == ("1.5 h", 3)
    with pytest.raises(ValueError, match="no wall_seconds"):
        f.wall_table(steps, {"mnist": "MNIST"}, profiles={"mnist": "quick"}, grid=grid)
    bounds = t.assign(metric="clip_bound", value=[0.5, 0.5, 0.5, 1.0])
    with pytest.raises(ValueError, match="varies"):
        f.base_bound(bounds, "mnist")
    with pytest.raises(ValueError, match="no rows"):
        f.base_bound(bounds, "adult")


def test_accounting_tables_on_a_small_setting(monkeypatch):
    # The accountants are the package's (tested with them); stand-ins with known
    # values keep this test fast and check the tables, verdicts and texts.
    import dpnotes.accounting as acc
    import dpnotes.dpsgd.rules as rules
    import dpnotes.pld as pld

    def dpsgd_epsilon(*, conversion="improved", steps, **_):
        return steps * (0.7 if conversion == "classic" else 0.6)

    monkeypatch.setattr(rules, "dpsgd_epsilon", dpsgd_epsilon)
    monkeypatch.setattr(pld, "pld_epsilon", lambda *, steps, **_: steps * 0.5)
    monkeypatch.setattr(
        acc, "rdp_epsilon",
        lambda *, steps, same_sample=True, **_: steps * (0.65 if same_sample else 0.62),
    )  # fmt: skip
    monkeypatch.setattr(acc, "max_steps_within", lambda eps, *, limit, **_: limit - 1)
    settings = {"mnist": {"noise_multiplier": 1.0, "epochs": 1, "lr": "1/sqrt(T)"}}
    e = f.epsilon_table({"mnist": 2560}, settings, names={"mnist": "MNIST"})
    cells = e.table.iloc[0][["steps T", "ε classic", "ε improved", "ε PLD"]]
    assert cells.tolist() == ["10", "7.000", "6.000", "5.000"]
    v = e.verdicts[0]
    # 7.0 against the paper's 6.55, beyond the 0.05 of its rounding.
    assert (v.outcome, v.ours_text, v.paper) == ("differs", "7.000 (computed)", 6.55)
    assert e.pld_below_rdp
    assert e.texts == {
        "classic-worst": "0.450", "conversion-saving": "14%–14%",
        "pld-overstate": "40%–40%",
    }  # fmt: skip
    a = f.accounting({"mnist": 2560}, settings, names={"mnist": "MNIST"})
    row = a.table.iloc[0]
    assert (row["ε DPSGD"], row["ε DPSGD-F, joint"], row["ε DPSGD-F, separate"]) == (
        "6.000", "6.500", "6.200"
    )  # fmt: skip
    assert row["DPSGD-F's steps at DPSGD's ε"] == "9" and row["σ₂, σ₁"] == "1, 10"
    assert a.texts["count-cost-joint"] == "0.500"
    assert a.texts["count-ratio"] == "2"  # 0.5 against 0.2
    assert a.texts["lr-gain"] == f"{(10 / 9) ** 0.5 - 1:.1%} on MNIST"
    assert a.texts["pld-joint"] == "MNIST 5.00 against 6.50" and a.pld_below_rdp
    # The paper's "T is 19 less" beside our one step less (the stand-in above).
    (fewer,) = a.verdicts
    assert (fewer.paper, fewer.ours.mean, fewer.outcome) == (19, 1.0, "differs")
    assert set(fewer.extra) == {"the paper's accounting, recomputed"}
    with pytest.raises(ValueError, match="no size or setting"):
        f.accounting({}, settings, names={"mnist": "MNIST"})
    with pytest.raises(ValueError, match="smaller than a batch"):
        f.epsilon_table({"mnist": 100}, settings, names={"mnist": "MNIST"})


# ------------------------------------------------------- models that predict one class


def _two_group_runs(male: float, female: float, method: str = "dpsgd") -> pd.DataFrame:
    rows = []
    for seed, (m, w) in enumerate([(male, female), (male, female)]):
        for group, value in (("male", m), ("female", w), ("all", (m + w) / 2)):
            rows.append(("adult", method, seed, "accuracy", group, 20, value))
    return pd.DataFrame(
        rows, columns=["dataset", "method", "seed", "metric", "group", "epoch", "value"]
    )


def _counts(seeds=(0, 1)) -> pd.DataFrame:
    # Per seed: 100 men (70 of class "<=50K"), 50 women (45 of class "<=50K").
    rows = []
    for seed in seeds:
        for group, low, n in (("male", 70, 100), ("female", 45, 50)):
            rows.append(("adult", seed, group, 0, "<=50K", low))
            rows.append(("adult", seed, group, 1, ">50K", n - low))
    return pd.DataFrame(
        rows, columns=["dataset", "seed", "group", "label", "label_name", "count"]
    )


def test_a_constant_predictor_is_found_to_the_record():
    constant = f.one_class_runs(_two_group_runs(0.70, 0.90), _counts())
    assert constant.predicts.tolist() == ["<=50K", "<=50K"]
    # One record off in the men's group: not one class for everyone, but still for
    # every woman.
    near = f.one_class_runs(_two_group_runs(0.71, 0.90), _counts())
    assert near.predicts.tolist() == ["", ""]
    assert near.one_class_groups.tolist() == ["female", "female"]
    # Always ">50K": 30 of 100 men, 5 of 50 women.
    high = f.one_class_runs(_two_group_runs(0.30, 0.10), _counts())
    assert set(high.predicts) == {">50K"}
    both = pd.concat([constant.assign(method="dpsgd"), near.assign(method="dpsgd_f")])
    table = f.one_class_table(both)
    assert table["one class for everyone"].tolist() == [
        "all 2 seeds (<=50K)",
        "none of the 2 seeds",
    ]
    assert table["one class within a group"].tolist() == ["–", "female: all 2 seeds"]
    assert f.one_class_count(constant, "adult", "dpsgd") == 2
    assert f.one_class_count(near, "adult", "dpsgd") == 0
    assert f.one_class_count(None, "adult", "dpsgd") == 0


def test_one_class_runs_names_what_is_missing():
    with pytest.raises(ValueError, match="no test counts for adult, seed 1"):
        f.one_class_runs(_two_group_runs(0.7, 0.9), _counts(seeds=(0,)))
    with pytest.raises(ValueError, match="'count'"):
        f.one_class_runs(_two_group_runs(0.7, 0.9), _counts().drop(columns="count"))
    with pytest.raises(ValueError, match="census splits"):
        f.split_label_counts("mnist", [0])
    with pytest.raises(ValueError, match="at least one seed"):
        f.split_label_counts("adult", [])


def test_a_degenerate_method_makes_its_table1_rows_degenerate(census):
    constant = pd.DataFrame(
        {
            "dataset": "adult",
            "encoding": "paper",
            "method": "dpsgd",
            "seed": range(5),
            "predicts": "<=50K",
            "one_class_groups": "male, female",
        }
    )
    rows = f.census_table1(census, "adult", "paper", constant=constant)
    outcome = {v.quantity: v.outcome for v in rows}
    assert outcome["DPSGD, Δ, male"] == "degenerate"
    assert "predicts one class in all 5 seeds" in next(
        v.reason for v in rows if v.quantity == "DPSGD, Δ, male"
    )
    assert outcome["Naive, Δ, male"] != "degenerate"  # not flagged here
    plain = f.census_table1(census, "adult", "paper")
    assert all(
        v.outcome != "degenerate" for v in plain if v.quantity.startswith("DPSGD,")
    )


@pytest.mark.data
def test_our_adult_dpsgd_and_the_papers_predict_one_class(census):
    # Two seeds' splits (each is a data load): the chapter counts all five.
    constant = f.census_one_class(census[census.seed.isin([0, 1])])
    paper = constant[constant.encoding == "paper"]
    for method in ("dpsgd", "naive"):
        assert f.one_class_count(paper, "adult", method, "paper") == 2
    assert f.one_class_count(paper, "adult", "sgd", "paper") == 0
    assert f.one_class_count(constant, "dutch", "dpsgd", "paper") == 0
    theirs = f.paper_one_class(census).set_index(["data set", "method"])
    assert theirs.loc[("adult", "DPSGD"), "one-class predictor"] == "yes"
    assert theirs.loc[("adult", "SGD"), "one-class predictor"] == "no"
    assert (theirs.loc["dutch", "one-class predictor"] == "no").all()


def test_paper_steps_cut_by_its_accounting():
    # The counts' curve added to the gradient's: a larger sigma_1 costs fewer steps,
    # a tiny one (counts as noisy as the gradient) about half of them.
    q, t = 256 / 54649, 12809
    cut = [f.paper_steps_cut(q, (0.8, s1), t, 1e-6) for s1 in (80.0, 8.0, 0.8)]
    assert 0 <= cut[0] < cut[1] < cut[2] < t
    assert cut[1] == 47  # MNIST at the paper's settings (its text says 19)
    assert abs(cut[2] - t / 2) < 0.1 * t
    # One step of budget: never a negative cut.
    assert f.paper_steps_cut(q, (0.8, 8.0), 1, 1e-6) in (0, 1)
