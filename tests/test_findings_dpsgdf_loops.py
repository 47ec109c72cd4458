"""DPSGD-F's MNIST claims and clipping under both training loops (dpsgdf.md).

The chapter leads with the reference loop (``dpsgdf_reference``), then the text loop
(``dpsgdf_main``, ``dpsgdf_clip``, ``dpsgdf_budget``). The same functions compute both
loops' rows: checked here on the stored paper results, at the values and directions
the chapter states, and on hand-made tables with known answers.
"""

from __future__ import annotations

import pandas as pd
import pytest
from stored_tables import stored_table, whole_seeds_table

from dpnotes.experiments.dpsgd_f import PAPER_SETTINGS
from dpnotes.findings import dpsgdf as f
from dpnotes.findings.dpsgdf import NOT_RUN, TAU

SHORT = {"adult": "Adult", "dutch": "Dutch", "mnist": "MNIST"}
MNIST = PAPER_SETTINGS["mnist"]
LARGEST = "MNIST, largest Cₖ/C₀ of DPSGD-F (Figure 2)"


@pytest.fixture(scope="module")
def tables() -> dict[str, pd.DataFrame]:
    # The text loop's results cut to their complete seeds, as the chapter reads them.
    text_loop = {
        n: whole_seeds_table(f"dpsgdf_{n}") for n in ("main", "clip", "budget")
    }
    rest = {n: stored_table(f"dpsgdf_{n}") for n in ("census", "reference")}
    return text_loop | rest


@pytest.fixture(scope="module")
def both(tables) -> f.LoopClaims:
    t = tables
    return f.loop_claims(
        t["main"], t["census"], t["clip"], t["budget"], t["reference"],
        clip_norm=1.0, short=SHORT,
    )  # fmt: skip


# ----------------------------------------------------------- the stored results


def test_claims_under_both_loops_lead_with_the_reference_loop(both, tables):
    assert list(both.loops) == ["reference loop", "text loop"]
    assert list(both.mnist.columns) == [
        "quantity", "paper", "reference loop", "reference loop: verdict",
        "text loop", "text loop: verdict",
    ]  # fmt: skip
    assert len(both.mnist) == 8
    t = both.texts
    assert (t["claim-f-removed-ref"], t["claim-f-removed"]) == ("65%", "11%")
    assert (t["claim-c2-removed-ref"], t["claim-c2-removed"]) == ("42%", "4%")
    assert t["claim-f-removed-paper"] == "98%"
    assert (t["gap-f-mnist-ref"], t["gap-f-mnist"]) == ("-0.237", "-0.702")
    assert (t["gap-mnist-ref"], t["gap-mnist"], t["gap-mnist-paper"]) == (
        "-0.668", "-0.786", "-0.6100",
    )  # fmt: skip
    assert (t["claims-ref"], t["claims-text"]) == ("0 of 8", "1 of 8")
    ref = {v.quantity: v for v in both.loops["reference loop"]}
    text = {v.quantity: v for v in both.loops["text loop"]}
    # DPSGD's gap comes nearer the paper's under the reference loop; DPSGD-F's stays
    # far outside τ under both.
    dpsgd = "MNIST, DPSGD: gap (Table 1)"
    assert abs(ref[dpsgd].mean - ref[dpsgd].paper) < abs(
        text[dpsgd].mean - text[dpsgd].paper
    )
    for rows in (ref, text):
        assert rows["MNIST, DPSGD-F: gap (Table 1)"].ours.high < -TAU
    # The one text-loop claim that reproduces is the largest bound; the reference
    # loop's DPSGD-F raises it above the paper's 3 C₀.
    assert [q for q, v in text.items() if v.outcome == "reproduces"] == [LARGEST]
    assert ref[LARGEST].outcome == "differs" and ref[LARGEST].ours.low > 3.3
    # Figure 3b under the reference loop: its one seed with a σ sweep.
    fig3 = ref["MNIST, DPSGD-F: largest |gap| over the σ sweep (Figure 3b)"]
    assert fig3.n_seeds == 1 and fig3.outcome == "differs"
    assert "σ sweep (Figure 3b) seed 0;" in both.note
    # Table 3's rows pair the main runs with the clipping sweep: over its seeds.
    assert (
        "seeds 0, 1, 2, 3, 4, the larger bounds (Table 3) seeds 0, 1, 2, 3, the σ"
        in both.note
    )


def test_both_loops_share_the_quantities_and_the_census_rows(both, tables):
    t = tables
    rows = f.claims(
        t["main"], t["census"], t["clip"], t["budget"], clip_norm=1.0, short=SHORT
    )
    mnist = [v for v in rows if v.quantity.startswith("MNIST")]
    assert [(v.quantity, v.mean) for v in both.loops["text loop"]] == [
        (v.quantity, v.mean) for v in mnist
    ]
    assert [v.quantity for v in both.census] == [v.quantity for v in rows[len(mnist) :]]
    ref = f.reference_claims(t["reference"], clip_norm=1.0)
    assert [(v.quantity, v.paper, v.mean) for v in ref] == [
        (v.quantity, v.paper, v.mean) for v in both.loops["reference loop"]
    ]
    assert [v.quantity for v in ref] == [v.quantity for v in mnist]


def test_without_the_reference_loop_its_rows_say_so(tables):
    t = tables
    only = f.loop_claims(
        t["main"], t["census"], t["clip"], t["budget"], None, clip_norm=1.0,
        short=SHORT,
    )  # fmt: skip
    ref = only.loops["reference loop"]
    assert {v.outcome for v in ref} == {"not comparable"} and len(ref) == 8
    assert set(only.mnist["reference loop"]) == {"–"}
    assert only.texts["claim-f-removed-ref"] == NOT_RUN
    assert only.texts["claims-ref"] == "0 of 0"
    assert only.texts["claim-f-removed"] == "11%"
    assert "Reference loop (`dpsgdf_reference`): not stored" in only.note


def test_reference_claims_refuse_a_missing_part_or_column(tables):
    ref = tables["reference"]
    with pytest.raises(ValueError, match="'part'"):
        f.reference_claims(ref.drop(columns="part"), clip_norm=1.0)
    with pytest.raises(ValueError, match="part 'clip'"):
        f.reference_claims(ref[ref.part != "clip"], clip_norm=1.0)
    no_c5 = ref[~((ref.part == "clip") & (ref.clip_norm == 5.0))]
    with pytest.raises(ValueError, match="C = 5"):
        f.reference_claims(no_c5, clip_norm=1.0)


def test_clipping_under_both_loops(tables):
    c = f.clipping_by_loop(tables["reference"], tables["main"], MNIST)
    assert list(c.loops) == ["reference loop", "text loop"]
    assert (
        c.table["loop"].tolist()
        == ["reference loop"] * 3 + ["text loop"] * 3 + ["either"] * 2
    )
    share = c.table.iloc[1]
    assert (share["nine majority digits"], share["digit 8"]) == ("7% to 36%", "100%")
    t = c.texts
    assert t["mnist-late"] == "10"
    assert (t["mnist-share-ref"], t["mnist-cap-ref"], t["mnist-c8-ref"]) == (
        "21%", "5.7", "3.3",
    )  # fmt: skip
    assert (t["mnist-share-text"], t["mnist-cap-text"], t["mnist-c8-text"]) == (
        "40%", "3.5", "2.6",
    )  # fmt: skip
    assert (t["mnist-clipped-ref"], t["mnist-clipped-text"]) == (
        "7% to 36%", "11% to 83%",
    )  # fmt: skip
    assert (t["mnist-others-ref"], t["mnist-others-text"]) == (
        "1.5 to 2.3", "1.4 to 2.6",
    )  # fmt: skip
    assert (t["mnist-phantom"], t["mnist-eights"]) == ("3.2", "2.3")
    ref, text = c.loops["reference loop"], c.loops["text loop"]
    # The prose: DPSGD clips every eight under both loops and fewer of the other
    # digits' examples under the reference loop; digit 8's bound stays well below what
    # exact counts would give it there, and near the other digits' largest under the
    # text loop.
    for m in (ref, text):
        assert m.clip_share["digit 8"] == 1.0
    assert ref.clip_share.drop("digit 8").max() < text.clip_share.drop("digit 8").max()
    assert ref.bound_ratio["digit 8"] < 1 + 1 / ref.overall_share - 2
    others = text.bound_ratio.drop("digit 8").max()
    assert abs(text.bound_ratio["digit 8"] - others) < 0.1
    # Naive keeps most of digit 8's accuracy under either loop.
    reference = tables["reference"]
    for runs in (reference[reference.part == "main"], tables["main"]):
        runs = runs[runs.dataset == "mnist"]
        naive, sgd = (f.per_seed(runs, m, "digit 8") for m in ("naive", "sgd"))
        assert (naive > 0.5 * sgd).all()


def test_clipping_without_the_reference_or_a_setting(tables):
    c = f.clipping_by_loop(None, tables["main"], MNIST)
    assert list(c.loops) == ["text loop"]
    assert set(c.table["loop"]) == {"text loop", "either"}
    assert c.texts["mnist-c8-ref"] == NOT_RUN and c.texts["mnist-c8-text"] == "2.6"
    with pytest.raises(ValueError, match="'noise_multiplier'"):
        f.clipping_by_loop(None, tables["main"], {"batch_size": 256, "clip_norm": 1.0})


# ------------------------------------------------------------- hand-made tables


def _rows(**run) -> list[dict]:
    """Rows of one run: ``values[(metric, group)]`` at every epoch in ``epochs``."""
    values, epochs = run.pop("values"), run.pop("epochs", (1,))
    return [
        {"dataset": "mnist", **run, "metric": metric, "group": group, "epoch": e,
         "value": v(e) if callable(v) else v}
        for (metric, group), v in values.items()
        for e in epochs
    ]  # fmt: skip


def _acc(a8: float, a2: float, n: bool = False) -> dict:
    out = {("accuracy", "digit 8"): a8, ("accuracy", "digit 2"): a2}
    if n:
        out |= {("n_test", "digit 8"): 1000, ("n_test", "digit 2"): 1000}
    return out


def _loop(dpsgd_f8: tuple[float, float]) -> dict[str, pd.DataFrame]:
    """A loop's tables, two seeds: SGD costs nothing; DPSGD's gap is −0.6."""
    main, clip, sweep = [], [], []
    for s in (0, 1):
        main += _rows(method="sgd", seed=s, values=_acc(0.9, 0.9, n=True))
        main += _rows(method="dpsgd", seed=s, values=_acc(0.3, 0.9))
        main += _rows(method="naive", seed=s, values=_acc(0.85, 0.85))
        f_values = _acc(dpsgd_f8[s], 0.9) | {("clip_bound", "digit 8"): 2.5 + s}
        main += _rows(method="dpsgd_f", seed=s, values=f_values)
        for cn, a8 in ((2.0, 0.6), (5.0, 0.75)):
            clip += _rows(method="dpsgd", seed=s, clip_norm=cn, values=_acc(a8, 0.9))
        for sigma, a8 in ((0.8, 0.7), (2.0, 0.8)):
            sweep += _rows(
                method="dpsgd", seed=s, noise_multiplier=sigma,
                values={("epsilon_classic", "all"): 6 / sigma},
            )  # fmt: skip
            sweep += _rows(
                method="dpsgd_f", seed=s, noise_multiplier=sigma, values=_acc(a8, 0.9)
            )
    return {k: pd.DataFrame(v) for k, v in (("main", main), ("clip", clip),
                                             ("sweep", sweep))}  # fmt: skip


def test_mnist_claims_on_a_known_loop():
    t = _loop((0.6, 0.75))  # DPSGD-F's gaps −0.3 and −0.15: shares 1/2 and 3/4
    rows = {v.quantity: v for v in f.mnist_claims(t["main"], t["clip"], t["sweep"],
                                                 clip_norm=1.0)}  # fmt: skip
    share = rows["MNIST, share of DPSGD's gap that DPSGD-F removes (Table 1)"]
    assert share.ours.values == pytest.approx((0.5, 0.75))
    assert share.ours.se_test > 0  # the groups' test error, by the delta method
    c2 = rows["MNIST, share of DPSGD's gap that DPSGD with C = 2 removes (Table 3)"]
    assert c2.ours.values == pytest.approx((0.5, 0.5))
    assert rows["MNIST, DPSGD with C = 5: gap (Table 3)"].ours.values == pytest.approx(
        (-0.15, -0.15)
    )
    assert rows["MNIST, DPSGD: gap (Table 1)"].mean == pytest.approx(-0.6)
    assert rows[LARGEST].ours.values == pytest.approx((2.5, 3.5))
    fig3 = rows["MNIST, DPSGD-F: largest |gap| over the σ sweep (Figure 3b)"]
    assert fig3.ours.values == pytest.approx((0.2, 0.2))  # the larger of 0.2 and 0.1
    assert fig3.outcome == "differs"
    # A bound of half: C₀ = 2 halves every ratio.
    half = f.mnist_claims(t["main"], t["clip"], t["sweep"], clip_norm=2.0)[6]
    assert half.ours.values == pytest.approx((1.25, 1.75))


def test_mnist_claims_pair_the_main_runs_with_each_sweep_by_the_seeds_both_have():
    # A main seed the clipping and σ sweeps lack (seed 2, DPSGD's gap −0.45 there):
    # Table 1's rows take it; the rows that pair with a sweep leave it out.
    t = _loop((0.6, 0.75))
    main = t["main"]
    extra = main[main.seed == 1].assign(seed=2)
    dpsgd8 = (extra.method == "dpsgd") & (extra.group == "digit 8")
    extra.loc[dpsgd8 & (extra.metric == "accuracy"), "value"] = 0.45
    rows = {v.quantity: v for v in f.mnist_claims(
        pd.concat([main, extra], ignore_index=True), t["clip"], t["sweep"],
        clip_norm=1.0,
    )}  # fmt: skip
    assert rows["MNIST, DPSGD: gap (Table 1)"].ours.values == pytest.approx(
        (-0.6, -0.6, -0.45)
    )
    assert rows["MNIST, DPSGD with C = 5: gap (Table 3)"].ours.values == pytest.approx(
        (-0.15, -0.15)
    )
    c2 = rows["MNIST, share of DPSGD's gap that DPSGD with C = 2 removes (Table 3)"]
    assert c2.ours.values == pytest.approx((0.5, 0.5))  # against seeds 0-1's −0.6
    fig3 = rows["MNIST, DPSGD-F: largest |gap| over the σ sweep (Figure 3b)"]
    assert fig3.ours.n_seeds == 2
    clip = t["clip"]
    clip = pd.concat([clip, clip[clip.group == "digit 2"].assign(group="all")])
    both = pd.concat([main, extra], ignore_index=True)
    assert f.clip_gap(clip, both, 5.0).to_dict() == pytest.approx({0: -0.15, 1: -0.15})


def test_mnist_claims_refuse_missing_runs_and_columns():
    t = _loop((0.6, 0.75))
    with pytest.raises(ValueError, match="'clip_norm'"):
        f.mnist_claims(t["main"], t["clip"].drop(columns="clip_norm"), t["sweep"],
                       clip_norm=1.0)  # fmt: skip
    with pytest.raises(ValueError, match="'noise_multiplier'"):
        no_sigma = t["sweep"].drop(columns="noise_multiplier")
        f.mnist_claims(t["main"], t["clip"], no_sigma, clip_norm=1.0)
    with pytest.raises(ValueError, match="C = 2"):
        f.mnist_claims(t["main"], t["clip"][t["clip"].clip_norm != 2.0], t["sweep"],
                       clip_norm=1.0)  # fmt: skip
    main = t["main"]
    one_seed = main[~((main.method == "dpsgd_f") & (main.seed == 1))]
    with pytest.raises(ValueError, match="seeds missing"):
        f.mnist_claims(one_seed, t["clip"], t["sweep"], clip_norm=1.0)
    with pytest.raises(ValueError, match="no rows"):
        f.mnist_claims(main.assign(dataset="adult"), t["clip"], t["sweep"],
                       clip_norm=1.0)  # fmt: skip


def _clipping_runs(last_steps: int) -> pd.DataFrame:
    """Three epochs of 10 steps, then a short one of ``last_steps``: metric = epoch."""
    steps = {1: 10, 2: 20, 3: 30, 4: 30 + last_steps}
    rows = []
    for s in (0, 1):
        sizes = {("n_train", "digit 8"): 10, ("n_train", "digit 2"): 90}
        rows += _rows(method="sgd", seed=s, values=sizes)
        for method, metrics in (("dpsgd", ("grad_norm", "clip_fraction")),
                                ("dpsgd_f", ("clip_bound",))):  # fmt: skip
            values = {("steps", "all"): steps.get}
            for metric in metrics:
                values |= {(metric, "digit 8"): float, (metric, "digit 2"): 0.1}
            rows += _rows(method=method, seed=s, epochs=(1, 2, 3, 4), values=values)
    return pd.DataFrame(rows)


def test_mnist_clipping_averages_the_last_whole_epochs():
    runs = _clipping_runs(last_steps=2)  # epoch 4 is short: left out
    m = f.mnist_clipping(runs, batch_size=10, clip_norm=2.0, epochs=2)
    assert m.grad_norm["digit 8"] == pytest.approx(2.5)  # epochs 2 and 3
    assert m.bound_ratio["digit 8"] == pytest.approx(1.25)  # 2.5 / C₀
    assert m.per_batch.to_dict() == pytest.approx({"digit 8": 1.0, "digit 2": 9.0})
    assert m.naive_weight["digit 8"] == pytest.approx(5.0)
    # m / b: one eight in ten, clipped at "share" 2.5, nine others at 0.1.
    assert m.overall_share == pytest.approx((2.5 + 9 * 0.1) / 10)
    whole = f.mnist_clipping(_clipping_runs(last_steps=10), batch_size=10,
                             clip_norm=1.0, epochs=1)  # fmt: skip
    assert whole.grad_norm["digit 8"] == pytest.approx(4.0)  # epoch 4 is whole
    with pytest.raises(ValueError, match="epochs must be at least 1"):
        f.mnist_clipping(runs, batch_size=10, clip_norm=1.0, epochs=0)
    with pytest.raises(ValueError, match="steps"):
        f.mnist_clipping(runs[runs.metric != "steps"], batch_size=10, clip_norm=1.0)
    assert m.epochs == 2
