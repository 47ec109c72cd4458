"""The findings of gaps.md, on the stored paper results and on hand-made tables.

Every number ``book/dpsgd/gaps.md`` and its pages (``gaps_costs.md``,
``gaps_census.md``) state is computed here from the stored tables of
``book/_results`` (read as CSV: fast) and asserted at the value the chapter prints, with
the directions its prose states; then the sections run without the reference loop's
runs, with a missing seed or column, and on small tables with known answers.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from stored_tables import stored_table, whole_seeds_table

from dpnotes import report
from dpnotes.findings import dpsgdf_gaps as g
from dpnotes.findings.dpsgdf_gaps import NOT_COMPUTED
from dpnotes.findings.verdict import Verdict, verdict_columns, verdict_frame

RESULTS = Path(__file__).resolve().parents[1] / "book" / "_results"
NBSP = "\u00a0"


def _read(experiment: str, profile: str = "paper") -> pd.DataFrame:
    # Checked against meta.json; the text loop's results cut to their complete seeds,
    # as the chapter reads them (load_per_dataset).
    if experiment in ("dpsgdf_main", "dpsgdf_budget", "dpsgdf_clip"):
        return whole_seeds_table(experiment, profile)
    return stored_table(experiment, profile)


@pytest.fixture(scope="module")
def tables() -> dict[str, pd.DataFrame]:
    names = ("main", "budget", "clip", "census", "reference")
    return {n: _read(f"dpsgdf_{n}") for n in names}


@pytest.fixture(scope="module")
def runs(tables) -> g.Runs:
    return g.runs_of(*tables.values())


@pytest.fixture(scope="module")
def no_ref(tables) -> g.Runs:
    t = tables
    return g.runs_of(t["main"], t["budget"], t["clip"], t["census"], None)


@pytest.fixture(scope="module")
def figures(runs) -> g.Figures:
    return g.figures(runs)


def _outcomes(rows: list[Verdict]) -> dict[str, str]:
    return {v.quantity: v.outcome for v in rows}


# ------------------------------------------------------------- on the stored results


def test_setup_counts_the_steps_of_both_loops(runs):
    s = g.setup(runs)
    assert s.texts["n-mnist"] == "54,649"
    assert dict(s.steps) == {"text": 60 * (54_649 // 256), "reference": 12_809}
    assert s.texts["ref-steps"] == "12,809"
    assert s.texts["ref-eps-classic"] == f"ε{NBSP}={NBSP}6.55"
    assert list(s.table.setting) == ["optimiser", "pixels", "steps"]
    assert "momentum 0.5" in s.table.iloc[0, 2]


def test_reference_caption_of_the_stored_and_a_partial_result(tables):
    ref = tables["reference"]
    meta = json.loads((RESULTS / "dpsgdf_reference/paper/meta.json").read_text())
    whole = SimpleNamespace(
        table=ref, meta=meta, partial=False, cells_by_machine=lambda: {"a GPU": 38}
    )
    text = g.reference_caption(whole)
    assert text.startswith(
        "Of the reference loop's 38 runs, all are computed (on a GPU)"
    )
    assert "DPSGD-F" in text and text.endswith(".")
    part = SimpleNamespace(
        table=ref[ref.method != "naive"],
        meta={"cells": 38, "cells_done": ["x"] * 30},
        partial=True,
        cells_by_machine=lambda: {"A": 20, "B": 10},
    )
    text = g.reference_caption(part)
    assert "30 are computed so far (20 on A; 10 on B)" in text
    assert "Naive" not in text and text.endswith("as not computed.")
    assert "python -m dpnotes run dpsgdf_reference" in g.reference_caption(None)


def test_table1_under_both_loops(runs):
    t1 = g.table1(runs)
    t = t1.texts
    assert (t["t1-text"], t["t1-reference"]) == ("2 of 12", "6 of 12")
    assert t["t1-reference-clause"] == "the reference loop 6 of 12"
    assert (t["ref-acc8-dpsgd"], t["paper-acc8-dpsgd"]) == ("0.204 ± 0.028", "0.248")
    assert (t["text-acc8-dpsgd"], t["ref-d8-sds"], t["ref-closed"]) == (
        "0.005",
        "1.6",
        "82%",
    )
    assert (t["ref-acc8-f"], t["paper-acc8-f"], t["text-acc8-f"]) == (
        "0.654 ± 0.007",
        "0.886",
        "0.099",
    )
    assert (t["ref-dpsgd-8"], t["paper-dpsgd-8"]) == ("-0.739", "-0.6807")
    assert (t["ref-acc8-sgd"], t["paper-acc8-sgd"]) == ("0.943", "0.929")
    assert t["ref-dpsgd-seeds"] == "3 seeds"
    assert t["ref-naive-seeds"] == "3" and t["ref-naive-sds"] == "0.6 and 1.1"
    assert (t["ref-naive-sd2"], t["ref-dpsgd-sd2"]) == ("0.061", "0.004")
    # The prose: under the reference loop DPSGD's total and class-2 numbers
    # reproduce; its class-8 accuracy is inconclusive; Naive's total reproduces and
    # its class 2 and 8 are inconclusive.
    ref = {
        **_outcomes(t1.costs["reference loop"]),
        **_outcomes(t1.accuracy["reference loop"]),
    }
    for q in ("DPSGD, Δ, total", "DPSGD, Δ, class 2", "DPSGD, accuracy, total",
              "DPSGD, accuracy, class 2", "Naive, accuracy, total"):  # fmt: skip
        assert ref[q] == "reproduces", q
    assert ref["DPSGD, accuracy, class 8"] == "inconclusive"
    assert ref["Naive, accuracy, class 2"] == ref["Naive, accuracy, class 8"]
    assert ref["Naive, accuracy, class 8"] == "inconclusive"
    assert (
        "seeds 0, 1, 2" in t1.costs_note and "Naive seeds 0, 1, 2" in t1.accuracy_note
    )
    assert len(verdict_columns(t1.costs)) == 12


def test_figures_1_to_3a_under_the_reference_loop(figures):
    assert figures.texts == {
        "fig1-gap": "0.26",
        "fig2-ck": "3.51 ± 0.05",
        "fig3a-gap": "0.22",
        "fig3a-times": "4",
    }
    assert len(figures.verdicts) == 3
    assert all(v.outcome != "reproduces" for v in figures.verdicts)
    assert "stop during epoch 59" in figures.note
    assert len(verdict_frame(figures.verdicts)) == 3


def test_noise_sweeps_of_both_loops(runs, figures):
    s = g.noise_sweeps(runs, figures.checks)
    t = s.texts
    assert (t["sweep-text-gap"], t["sweep-ref-gap"]) == ("0.71–0.77", "0.23–0.28")
    assert (t["sweep-ref-eps"], t["sweep-ref-times"]) == ("1.5 to 15.2", "5")
    assert t["sweep-ref-ends"] == "0.25 at σ = 0.6 and 0.28 at σ = 2"
    assert t["sweep-ref-dpsgd-f8"] == "0.29 to 0.35"
    assert (t["sweep-match-eps"], t["sweep-match-eps-epochs"]) == ("4.1", "4.1")
    assert (t["sweep-match-sigma"], t["sweep-match-epoch"]) == ("1", "18")
    assert (t["sweep-match-noise-gap"], t["sweep-match-epoch-gap"]) == ("0.25", "0.69")
    assert t["sweep-eps-first-epoch"] == "2.6"
    sigmas = "σ = 0.6, 0.8, 1, 1.5, 2"
    assert s.note == f"Text loop: {sigmas}; Reference loop: {sigmas}."
    assert [c[0].outcome for c in s.columns.values()] == ["differs", "differs"]


def test_table3_under_both_loops(runs):
    t3 = g.table3(runs)
    t = t3.texts
    assert (t["t3-text"], t["t3-reference"]) == ("0 of 18", "10 of 18")
    assert (t["t3-ref-short-1"], t["t3-ref-short"]) == ("0.06", "0.11–0.12")
    assert t["t3-ref-short-sds"] == "2.5"
    assert t["t3-ref-c8"] == f"-0.74 at C{NBSP}={NBSP}1 to -0.22 at C{NBSP}={NBSP}5"
    assert (t["t3-paper-c8"], t["t3-paper-gap-f"], t["t3-paper-gap-5"]) == (
        "-0.68 to -0.11",
        "0.02",
        "0.10",
    )
    assert t["t3-ref-gap-f"] == "0.24 ± 0.02"
    assert t["t3-ref-gaps"].startswith(f"0.67 ± 0.02 at C{NBSP}={NBSP}1, ")
    assert t["t3-ref-below"] == f"C{NBSP}={NBSP}4"
    assert "C = 2: seeds 0, 1, 2" in t3.note and "(seeds 0, 1, 2, 3)" in t3.note
    # The prose: DPSGD's total and class-2 costs reproduce at every bound.
    ref = _outcomes(t3.columns["reference loop"])
    for cn in (1, 2, 3, 4, 5):
        assert ref[f"DPSGD, C = {cn}, Δ, total"] == "reproduces"
        assert ref[f"DPSGD, C = {cn}, Δ, class 2"] == "reproduces"
        assert ref[f"DPSGD, C = {cn}, Δ, class 8"] != "reproduces"


def test_curves_raise_digit_8s_bound_and_lower_its_loss(runs):
    c = g.curves(runs)
    assert c.texts == {
        "ck8-text": "2.46",
        "loss8-text": "3.91",
        "ck8-ref": "2.93",
        "loss8-ref": "1.56",
    }
    assert set(c.bound) == set(c.loss) == {"text", "reference"}
    assert list(c.bound["text"].columns) == ["digit 2", "digit 8"]


def test_ablation_compounds_for_dpsgd_and_adds_for_dpsgdf(runs):
    a = g.ablation(runs, g.setup(runs).steps)
    t = a.texts
    dpsgd = [float(t[f"abl60-{k}"]) for k in ("neither", "momentum", "pixels", "both")]
    assert dpsgd == [0.003, 0.061, 0.043, 0.236]
    # Compound: both lift more than twice the two single gains added.
    assert dpsgd[3] - dpsgd[0] > 2 * ((dpsgd[1] - dpsgd[0]) + (dpsgd[2] - dpsgd[0]))
    assert (t["abl60f-gain"], t["abl60f-sum"]) == ("0.574", "0.586")
    assert len(a.table) == 8
    assert "Seed 0, after 60 epochs" in a.note


def test_quick_ablation_reads_the_profiles_whole_epochs():
    folder = RESULTS / "dpsgdf_reference" / "quick"
    result = SimpleNamespace(
        table=_read("dpsgdf_reference", "quick"),
        meta=json.loads((folder / "meta.json").read_text()),
        caption=lambda: "Stored.",
    )
    q = g.quick_ablation(result)
    assert q.texts == {"abl-epochs": f"{q.epochs}"}
    assert q.note.endswith("Stored.") and len(q.table) == 8
    # The prose: each setting lowers the majority digit's loss, both the most.
    for method, d in q.table.groupby("method"):
        loss = d.set_index("setting")["loss, digit 2"].astype(float)
        assert loss.idxmin() == "both (reference loop)", method
        assert (loss.drop("neither") < loss["neither"]).all(), method
    late = SimpleNamespace(
        table=result.table, meta={"config": {"datasets": {"mnist": {"epochs": 999}}}}
    )
    with pytest.raises(ValueError, match="epoch 999"):
        g.quick_ablation(late)


def test_table2_readings_of_the_gradient_norm(runs):
    t2 = g.table2(runs)
    t = t2.texts
    assert t["t2-losses"] == "All 16 losses reproduce within 20%."
    assert (t["t2-per-example"], t["t2-per-example-range"]) == (
        "0 of 16",
        "2.8 to 14.8",
    )
    assert t["t2-per-example-factor"] == "6.1"
    assert (t["t2-norm"], t["t2-norm-range"], t["t2-norm-factor"]) == (
        "1 of 16",
        "0.7 to 3.5",
        "1.5",
    )
    assert (t["ratio-mnist"], t["ratio-census"]) == ("1.2 to 1.5", "1.6 to 5.1")
    assert t["mnist-dpsgd-norms"] == "do not all reproduce"
    assert (t["mnist-f-loss8"], t["mnist-f-loss8-paper"]) == ("1.26", "0.42")
    assert t["dutch-paper-male"] == "30,273"
    assert len(t2.census) == 2 and all(
        len(r) == 16 // 2 * 3 for r in t2.census.values()
    )


def test_census_table1_under_both_encodings(runs):
    e = g.census_encodings(runs)
    assert {k: v for k, v in e.texts.items() if k.startswith("t1-")} == {
        "t1-adult-paper": "10 of 12",
        "t1-adult-full": "10 of 12",
        "t1-dutch-paper": "9 of 12",
        "t1-dutch-full": "5 of 12",
    }
    assert (e.texts["dutch-dpsgd-m-full"], e.texts["dutch-dpsgd-m-paper"]) == (
        "-0.041",
        "-0.132",
    )
    assert e.texts["dutch-dpsgd-m"] == "-0.1534"


def test_stored_runs_select_the_same_runs_from_the_results(tables):
    t = {n: SimpleNamespace(table=frame) for n, frame in tables.items()}
    five = (t["main"], t["budget"], t["clip"], t["census"])
    runs = g.stored_runs(*five, t["reference"])
    assert runs.ref_main is not None
    expected = g.runs_of(*tables.values())
    for name in ("text", "text_sigma", "text_clip", "census", "reference"):
        pd.testing.assert_frame_equal(getattr(runs, name), getattr(expected, name))
    assert g.stored_runs(*five, None).reference is None
    with pytest.raises(ValueError, match="no MNIST run"):
        adult = SimpleNamespace(table=tables["main"][tables["main"].dataset == "adult"])
        g.stored_runs(adult, *five[1:], None)


def _cause(text: str) -> SimpleNamespace:
    # What the summary reads of dpsgdf_causes.cause_section: its texts.
    return SimpleNamespace(texts={"causes-reproducing": text, "causes-epochs": "10"})


def test_summary_texts_are_the_sections_values(runs, figures):
    s = g.summary_texts(runs, _cause("All 7 variants leave it outside."))
    assert tuple(s) == g.SUMMARY_KEYS
    assert s == {
        "causes-reproducing": "All 7 variants leave it outside.",
        "t3-ref-below": f"C{NBSP}={NBSP}4",
        "sweep-ref-gap": "0.23–0.28",
        "sweep-text-gap": "0.71–0.77",
    }
    # The same values as the sections of the page that shows them.
    sweep = g.noise_sweeps(runs, figures.checks).texts
    assert s["t3-ref-below"] == g.table3(runs).texts["t3-ref-below"]
    assert (s["sweep-ref-gap"], s["sweep-text-gap"]) == (
        sweep["sweep-ref-gap"],
        sweep["sweep-text-gap"],
    )


# ------------------------------------------------ without the reference loop's runs


def test_every_section_says_not_computed_without_reference_runs(no_ref):
    s = g.setup(no_ref)
    assert s.texts["ref-eps-classic"] == NOT_COMPUTED
    t1 = g.table1(no_ref)
    assert t1.texts["ref-acc8-dpsgd"] == NOT_COMPUTED
    assert t1.texts["ref-naive-seeds"] == "no"
    assert t1.texts["t1-text"] == "2 of 12"
    assert t1.texts["t1-reference"] == "0 of 0"
    assert {v.outcome for v in t1.costs["reference loop"]} == {"not comparable"}
    fig = g.figures(no_ref)
    assert fig.checks is None and set(fig.texts.values()) == {NOT_COMPUTED}
    assert {v.outcome for v in fig.verdicts} == {"not comparable"}
    assert len(verdict_frame(fig.verdicts)) == 3
    sweep = g.noise_sweeps(no_ref, None)
    assert (
        set(sweep.sweeps) == {"text"} and sweep.texts["sweep-ref-gap"] == NOT_COMPUTED
    )
    assert sweep.columns["reference loop"][0].outcome == "not comparable"
    assert "not computed yet" in sweep.note
    t3 = g.table3(no_ref)
    assert t3.texts["t3-ref-below"] == NOT_COMPUTED and "not computed" in t3.note
    assert set(g.curves(no_ref).bound) == {"text"}
    abl = g.ablation(no_ref, s.steps)
    assert abl.table.empty and set(abl.texts.values()) == {NOT_COMPUTED}
    assert report.markdown_table(abl.table).startswith("| method | setting |")
    t2 = g.table2(no_ref)
    assert t2.texts["ratio-mnist"] == NOT_COMPUTED and t2.texts["t2-norm"] == "1 of 16"


def test_summary_texts_without_reference_runs(no_ref):
    s = g.summary_texts(no_ref, _cause("No DPSGD-F variant is computed yet."))
    assert s["t3-ref-below"] == s["sweep-ref-gap"] == NOT_COMPUTED
    assert s["sweep-text-gap"] == "0.71–0.77"
    with pytest.raises(KeyError, match="causes-reproducing"):
        g.summary_texts(no_ref, SimpleNamespace(texts={}))


def test_a_reference_loop_without_the_sigma_runs_of_the_seed(runs, figures):
    ref = runs.reference
    cut = ref[~((ref.part == "sigma") & (ref.seed == 0))]
    partial = g.Runs(runs.text, runs.text_sigma, runs.text_clip, runs.census, cut)
    s = g.noise_sweeps(partial, figures.checks)
    assert "reference" not in s.sweeps
    assert s.texts["sweep-ref-gap"] == NOT_COMPUTED
    assert s.columns["reference loop"][0].outcome == "not comparable"


def test_one_seed_has_no_spread_to_count_in(runs):
    ref = runs.reference
    one = g.Runs(
        runs.text, runs.text_sigma, runs.text_clip, runs.census, ref[ref.seed == 0]
    )
    t = g.table1(one).texts
    assert "±" not in t["ref-acc8-dpsgd"]
    assert (t["ref-d8-sds"], t["ref-naive-sds"], t["ref-naive-sd2"]) == (
        "–",
        "– and –",
        "–",
    )
    assert t["ref-naive-seeds"] == "1" and t["ref-dpsgd-seeds"] == "1 seed"


# ------------------------------------------------------------- hand-made tables


def test_runs_of_refuses_a_missing_column_or_mnist(tables):
    t = dict(tables)
    with pytest.raises(ValueError, match=r"dpsgdf_budget.*'vary'"):
        g.runs_of(
            t["main"], t["budget"].drop(columns="vary"), t["clip"], t["census"], None
        )
    with pytest.raises(ValueError, match=r"dpsgdf_reference.*'part'"):
        g.runs_of(
            t["main"], t["budget"], t["clip"], t["census"],
            t["reference"].drop(columns="part"),
        )  # fmt: skip
    adult = t["main"][t["main"].dataset == "adult"]
    with pytest.raises(ValueError, match="no MNIST run"):
        g.runs_of(adult, t["budget"], t["clip"], t["census"], None)
    with pytest.raises(ValueError, match="no run of the reference loop"):
        g.runs_of(t["main"], t["budget"], t["clip"], t["census"], None).ref_part("clip")


def test_setup_refuses_a_reference_loop_without_dpsgds_epsilon(runs):
    ref = runs.reference
    cut = ref[ref.metric != "epsilon_classic"]
    with pytest.raises(ValueError, match="no DPSGD ε"):
        g.setup(g.Runs(runs.text, runs.text_sigma, runs.text_clip, runs.census, cut))


def test_seeds_text_and_equal_values():
    assert g.seeds_text([2, 0, 1]) == "0, 1, 2"
    assert g.seeds_text([]) == "none"
    assert g.seeds_text([5]) == "5"
