"""The spending checks that say more (dpnotes.findings.spending_checks).

On the stored paper results (read through the store), asserted at the values the
chapters print, and on small hand-made tables with known answers: one seed, all
equal, a group absent, a missing column or seed.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import ndcg_score
from stored_tables import stored_result

from dpnotes import paper_numbers
from dpnotes.findings import spending as findings
from dpnotes.findings import spending_checks as checks
from dpnotes.findings.spending import DPSAGE_COLUMNS, E2E_COLUMNS
from dpnotes.findings.verdict import verdict_columns, verdict_frame
from dpnotes.importance import ndcg_at_k

NY = "ACSEmployment-NY-sample"
PC = "ACSPublicCoverage-NM"
MOB = "ACSMobility-NM"


# --- hand-made spending_e2e tables --------------------------------------------------


def e2e_table(values, *, seeds=(0, 1, 2), counts=None, epsilons=(1.0,), dataset="d"):
    """A spending_e2e table from ``values[(method, group, metric)] -> per-seed list``.

    ``counts`` maps a group to its test count (added for every method and seed).
    """
    counts = counts or {"overall": 1000, "white": 700, "black": 300}
    rows = []
    for e in epsilons:
        for (method, group, metric), v in values.items():
            v = np.broadcast_to(np.asarray(v, dtype=float), (len(seeds),))
            rows += [(dataset, e, s, method, group, metric, float(x))
                     for s, x in zip(seeds, v, strict=True)]  # fmt: skip
        for method in {m for m, _, _ in values}:
            rows += [(dataset, e, s, method, g, "count", n)
                     for s in seeds for g, n in counts.items()]  # fmt: skip
    return pd.DataFrame(rows, columns=list(E2E_COLUMNS))


def rates(method, group, acc, fnr, fpr, jitter=0.0, seeds=3):
    """Accuracy, FNR and FPR of one method and group, jittered by seed."""
    j = jitter * np.arange(seeds)
    return {
        (method, group, "accuracy"): acc + j,
        (method, group, "fnr"): fnr + j,
        (method, group, "fpr"): fpr + j,
    }


def table1_values(jitter=0.004, mst_gap=0.10, bal_fnr=(0.09, 0.09)):
    """Real with a 0.03 white-black gap, MST with ``mst_gap``, FSQ-Bal's FNRs."""
    v = {}
    for g, acc in (("overall", 0.74), ("white", 0.75), ("black", 0.72)):
        v |= rates("real", g, acc, 0.12, 0.30)
    for g, acc in (("overall", 0.65), ("white", 0.68), ("black", 0.68 - mst_gap)):
        v |= rates("mst", g, acc, 0.10, 0.50, jitter * (1 + (g == "black")))
    for g, acc, fnr in (("overall", 0.72, 0.09), ("white", 0.72, bal_fnr[0]),
                        ("black", 0.70, bal_fnr[1])):  # fmt: skip
        v |= rates("fsq_bal", g, acc, fnr, 0.45, jitter)
    return v


# --- Frozen predictions ------------------------------------------------------------


def test_frozen_predictions_on_a_known_table():
    v = {("m", "overall", "accuracy"): [0.7, 0.7, 0.7],
         ("m", "black", "accuracy"): [0.6, 0.6, 0.6]}  # fmt: skip
    t = e2e_table(v, epsilons=(1.0, 2.0))
    moving = (t.epsilon == 2.0) & (t.group == "black") & (t.metric == "accuracy")
    t.loc[moving, "value"] = [0.6, 0.61, 0.62]
    f = checks.frozen_predictions(t, dataset="d", method="m")
    assert f.frozen_budgets == (1.0,) and (f.frozen_cells, f.cells) == (3, 4)
    assert f.overall_accuracies == (0.7,) and f.records_apart == 0
    assert not f.everywhere and not f.deterministic
    assert isinstance(f.frozen_cells, int)


def test_frozen_texts_read_right_at_none_one_and_all():
    base = {(m, "overall", "accuracy"): [0.7, 0.7] for m in ("mst", "real")}
    t = e2e_table(base, seeds=(0, 1), epsilons=(1.0, 2.0))
    texts = checks.frozen_texts(t, dataset="d")
    assert texts["mst-frozen-budgets"] == "all 2 budgets"
    assert texts["mst-accuracies"] == "one value" and texts["mst-runs"] == "4"
    assert texts["real-frozen"] == "all 2 metrics" and texts["frozen-seeds"] == "2"
    moving = (t.method == "mst") & (t.metric == "accuracy") & (t.seed == 1)
    t.loc[moving, "value"] = 0.701  # 1 record of 1,000 apart
    texts = checks.frozen_texts(t, dataset="d")
    assert texts["mst-frozen-budgets"] == "none of the 2 budgets"
    assert texts["mst-accuracies"] == "2 values, 1 test record apart"
    assert texts["mst-frozen-cells"] == "0 of 2"
    t.loc[moving & (t.epsilon == 1.0), "value"] = 0.7
    assert checks.frozen_texts(t, dataset="d")["mst-frozen-budgets"] == "1 of 2 budgets"


def test_frozen_predictions_skip_a_rate_without_denominator():
    v = {("m", "overall", "accuracy"): [0.7, 0.7], ("m", "black", "fpr"): [np.nan] * 2}
    f = checks.frozen_predictions(e2e_table(v, seeds=(0, 1)), dataset="d", method="m")
    assert f.cells == 1 and f.everywhere


def test_frozen_predictions_bad_input():
    v = {("m", "overall", "accuracy"): [0.7, 0.7, 0.7]}
    t = e2e_table(v)
    with pytest.raises(ValueError, match="one seed"):
        checks.frozen_predictions(t[t.seed == 0], dataset="d", method="m")
    with pytest.raises(ValueError, match=r"lacks seeds \[2\]"):
        gap = (t.seed == 2) & (t.metric == "accuracy")
        checks.frozen_predictions(t[~gap], dataset="d", method="m")
    with pytest.raises(ValueError, match="no classifier metrics of 'x'"):
        checks.frozen_predictions(t, dataset="d", method="x")
    with pytest.raises(ValueError, match="no rows of data set 'e'"):
        checks.frozen_predictions(t, dataset="e", method="m")
    with pytest.raises(ValueError, match="lacks columns"):
        checks.frozen_predictions(t.drop(columns="seed"), dataset="d", method="m")
    with pytest.raises(TypeError, match="DataFrame"):
        checks.frozen_predictions([], dataset="d", method="m")


# --- Table 1's motivating claims -----------------------------------------------------


def test_table1_claims_on_a_table_where_they_hold():
    counts = {"overall": 100_000, "white": 60_000, "black": 40_000}
    t = e2e_table(table1_values(), counts=counts)
    rows = checks.table1_text_verdicts(t, dataset="d", epsilon=1.0, note="other data")
    assert [r.quantity for r in rows] == [
        "Real: white − black accuracy",
        "MST's overall accuracy below Real's",
        "MST: white − black accuracy",
        "MST's white − black accuracy gap above Real's",
        "FSQ-Bal's overall accuracy above MST's",
        "FSQ-Bal: black − white FNR",
        "FSQ-Bal's overall FNR below Real's",
        "FSQ-Bal's white FNR below Real's",
        "FSQ-Bal's black FNR below Real's",
    ]
    assert [r.outcome for r in rows] == [
        "not comparable", "reproduces", "not comparable", "reproduces", "reproduces",
        "reproduces", "reproduces", "reproduces", "reproduces"]  # fmt: skip
    # The paper's 2.7 and 7 points as proportions; ours 0.03 and 0.10.
    assert rows[0].paper == pytest.approx(0.027) and rows[0].mean == pytest.approx(0.03)
    assert rows[0].reason == "other data; the paper's value inside our interval"
    assert rows[2].paper == pytest.approx(0.07)
    assert rows[2].reason.endswith("outside our interval")
    # MST's gap 0.10 less the jitter (0.004 white, 0.008 black) above Real's 0.03.
    assert rows[3].mean == pytest.approx(0.066) and rows[5].paper == 0.0
    # A gap is two disjoint groups: both test counts; FNR over the positives.
    assert rows[0].ours.n_test == 40_000
    assert "“exacerbated”: 7 against 2.7 points" == rows[3].claim


def test_table1_claims_that_fail_or_cannot_be_decided():
    counts = {"overall": 100_000, "white": 60_000, "black": 40_000}
    t = e2e_table(table1_values(mst_gap=0.0, bal_fnr=(0.04, 0.08)), counts=counts)
    rows = checks.table1_text_verdicts(t, dataset="d", epsilon=1.0, note="n")
    assert rows[3].outcome == "differs"  # MST narrows the gap, beyond doubt
    assert rows[5].outcome == "differs" and rows[5].mean == pytest.approx(0.04)
    # Few black records: the same differences can no longer be told from 0.
    small = e2e_table(table1_values(mst_gap=0.0, bal_fnr=(0.04, 0.08)),
                      counts={"overall": 1_000, "white": 950, "black": 50})  # fmt: skip
    rows = checks.table1_text_verdicts(small, dataset="d", epsilon=1.0, note="n")
    assert rows[3].outcome == rows[5].outcome == "inconclusive"


def test_table1_claims_on_frozen_and_one_class_models_are_degenerate():
    counts = {"overall": 100_000, "white": 60_000, "black": 40_000}
    t = e2e_table(table1_values(jitter=0.0), counts=counts)
    rows = checks.table1_text_verdicts(t, dataset="d", epsilon=1.0, note="n")
    below = rows[1]
    assert below.outcome == "degenerate"
    assert below.reason == (
        "MST: the same value in all 3 seeds; on the test error alone: reproduces"
    )
    assert rows[4].reason.startswith("MST and FSQ-Bal: the same value in all 3 seeds")
    # Real alone is deterministic by design: its gap stays a plain value claim.
    assert rows[0].outcome == "not comparable"
    # FSQ-Bal predicting "positive" for every black record in one seed.
    v = table1_values()
    v[("fsq_bal", "black", "fnr")] = [0.0, 0.1, 0.1]
    v[("fsq_bal", "black", "fpr")] = [1.0, 0.4, 0.4]
    rows = checks.table1_text_verdicts(e2e_table(v, counts=counts), dataset="d",
                                       epsilon=1.0, note="n")  # fmt: skip
    assert rows[5].outcome == "degenerate"
    assert rows[5].reason.startswith("FSQ-Bal, black: predicts one class in 1 of 3")


def test_table1_claims_with_one_seed_count_the_test_error_only():
    counts = {"overall": 10_000, "white": 6_000, "black": 4_000}
    t = e2e_table(table1_values(), counts=counts)
    t = t[t.seed == 0]
    rows = checks.table1_text_verdicts(t, dataset="d", epsilon=1.0, note="n")
    assert {r.n_seeds for r in rows} == {1}
    assert all(r.ours.half_width > 0 for r in rows)
    assert rows[3].outcome == "reproduces"  # 7 points over 4,000 and 6,000 records
    small = e2e_table(table1_values(), counts={"overall": 1000, "white": 600,
                                               "black": 400})  # fmt: skip
    rows = checks.table1_text_verdicts(small[small.seed == 0], dataset="d",
                                       epsilon=1.0, note="n")  # fmt: skip
    assert rows[3].outcome == "inconclusive"  # four binomial errors of 0.02 or more


def test_table1_claims_bad_input():
    t = e2e_table(table1_values())
    with pytest.raises(ValueError, match="note"):
        checks.table1_text_verdicts(t, dataset="d", epsilon=1.0, note=" ")
    with pytest.raises(ValueError, match=r"lacks seeds \[1\]"):
        gap = (t.method == "mst") & (t.seed == 1) & (t.group == "white")
        checks.table1_text_verdicts(t[~gap], dataset="d", epsilon=1.0, note="n")
    with pytest.raises(ValueError, match="no rows"):
        checks.table1_text_verdicts(t[t.method != "fsq_bal"], dataset="d",
                                    epsilon=1.0, note="n")  # fmt: skip
    no_black = t[~((t.group == "black") & (t.metric == "count"))]
    with pytest.raises(ValueError, match="black"):
        checks.table1_text_verdicts(no_black, dataset="d", epsilon=1.0, note="n")
    with pytest.raises(ValueError, match="lacks columns"):
        checks.table1_text_verdicts(t.drop(columns="group"), dataset="d", epsilon=1.0,
                                    note="n")  # fmt: skip


def test_table1_caption_names_the_seeds():
    t = e2e_table(table1_values())
    assert checks.table1_text_caption(t).endswith("Ours over seeds 0, 1, 2.")
    assert checks.table1_text_caption(t[t.seed == 1]).endswith("Ours over seed 1.")


# --- FSQ-FNR against its controls ----------------------------------------------------


def controls_table(fsq=0.05, sq=0.10, mst=0.12, real_dp=0.15, jitter=0.002):
    """Black FNRs per method; half of every group positive (accuracy consistent)."""
    v = {}
    j = jitter * np.arange(3)
    for m, fnr in (("fsq_fnr", fsq), ("sq", sq), ("mst", mst), ("real_dp", real_dp)):
        for g in ("overall", "black"):
            v |= {(m, g, "fnr"): fnr + j, (m, g, "fpr"): 0.4 - j,
                  (m, g, "accuracy"): 1 - 0.5 * (fnr + 0.4) + 0 * j}  # fmt: skip
    counts = {"overall": 100_000, "black": 50_000}
    return e2e_table(v, counts=counts, epsilons=(1.0, math.e**2))


def test_fnr_controls_on_a_known_table():
    out = checks.fnr_controls(controls_table(), dataset="d", powers=(0, 2))
    assert list(out) == ["ε = e⁰", "ε = e²"]
    rows = out["ε = e⁰"]
    assert [r.quantity for r in rows] == [
        "FSQ-FNR's black FNR below Real-DP's", "SQ's black FNR below Real-DP's",
        "MST's black FNR below Real-DP's", "FSQ-FNR's black FNR below SQ's",
        "FSQ-FNR's black FNR below MST's"]  # fmt: skip
    assert [r.claim for r in rows] == [c[2] for c in checks.FNR_CONTROLS]
    assert {r.outcome for r in rows} == {"reproduces"}
    assert [round(r.mean, 3) for r in rows] == [0.1, 0.05, 0.03, 0.05, 0.07]
    frame = verdict_columns(out)
    # The black group's positives (half of its 50,000 records) beside the quantity.
    assert frame.shape == (5, 6)
    assert frame["quantity"][0].endswith("(n\u00a0=\u00a025,000)")


def test_fnr_controls_say_when_the_controls_do_as_well():
    # SQ as low as FSQ-FNR: the claim holds, the control too, FSQ-FNR adds nothing.
    out = checks.fnr_controls(controls_table(sq=0.05), dataset="d", powers=(0,))
    rows = out["ε = e⁰"]
    assert rows[0].outcome == rows[1].outcome == "reproduces"
    # The same difference, 0, in every seed, but both models move: the test error
    # alone decides, and it cannot.
    assert rows[3].outcome == "inconclusive" and rows[3].mean == pytest.approx(0.0)
    out = checks.fnr_controls(controls_table(sq=0.05, jitter=0.0), dataset="d",
                              powers=(0,))  # fmt: skip
    assert out["ε = e⁰"][0].outcome == "degenerate"
    assert out["ε = e⁰"][0].reason == (
        "Real-DP and FSQ-FNR: the same value in all 3 seeds; on the test error alone: "
        "reproduces"
    )


def test_fnr_controls_a_one_class_model_is_degenerate_and_bad_input():
    t = controls_table()
    black = (t.method == "fsq_fnr") & (t.group == "black")
    t.loc[black & (t.metric == "fnr"), "value"] = 0.0
    t.loc[black & (t.metric == "fpr"), "value"] = 1.0
    rows = checks.fnr_controls(t, dataset="d", powers=(0,))["ε = e⁰"]
    assert [r.outcome for r in rows] == [
        "degenerate",
        "reproduces",
        "reproduces",
        "degenerate",
        "degenerate",
    ]
    assert "predicts one class in all 3 seeds" in rows[0].reason
    with pytest.raises(ValueError, match="powers is empty"):
        checks.fnr_controls(t, dataset="d", powers=())
    with pytest.raises(ValueError, match="no budget e\\^3"):
        checks.fnr_controls(t, dataset="d", powers=(3,))
    with pytest.raises(ValueError, match="no rows"):
        checks.fnr_controls(t[t.method != "sq"], dataset="d", powers=(0,))


# --- FSQ-FNR's collapse --------------------------------------------------------------


def collapse_table(all_positive_seeds=(0, 1, 2)):
    """FSQ-FNR predicting positive for everyone in the given seeds; base rate 0.4.

    Every run's errors are consistent with 40% positives: 1 - accuracy = 0.4 FNR +
    0.6 FPR.
    """
    v = {}
    for g in ("overall", "black"):
        fnr = [0.0 if s in all_positive_seeds else 0.3 for s in range(3)]
        fpr = [1.0 if s in all_positive_seeds else 0.5 for s in range(3)]
        acc = [0.4 if s in all_positive_seeds else 0.58 for s in range(3)]
        v |= {("fsq_fnr", g, "fnr"): fnr, ("fsq_fnr", g, "fpr"): fpr,
              ("fsq_fnr", g, "accuracy"): acc}  # fmt: skip
        v |= rates("real", g, 0.7, 0.2, 0.22 / 0.6)
    return e2e_table(v, counts={"overall": 1000, "black": 100}, epsilons=(math.e,))


def test_fnr_collapse_counts_all_positive_seeds_and_the_base_rate():
    c = checks.fnr_collapse(collapse_table(), dataset="d").iloc[0]
    assert (c.all_positive, c.protected_all_positive, c.seeds) == (3, 3, 3)
    assert c.accuracy == pytest.approx(c.base_rate) == pytest.approx(0.4)
    assert c.protected_fpr == 1.0
    # epsilon_T = 0.1 (1 - 0.7) e, the Laplace noise sqrt(2) / epsilon_T.
    assert c.epsilon_t == pytest.approx(0.03 * math.e)
    assert c.noise_sd == pytest.approx(math.sqrt(2) / (0.03 * math.e))
    c = checks.fnr_collapse(collapse_table((1,)), dataset="d").iloc[0]
    assert (c.all_positive, c.protected_all_positive) == (1, 1)


def test_collapse_texts_read_right_at_none_and_all():
    texts = checks.collapse_texts(collapse_table(), datasets=["d"])
    assert texts["d-collapse-budgets"] == "e¹" and texts["d-collapse-acc"] == "0.400"
    assert texts["d-mostly"] == "e¹" and texts["d-mostly-fpr"] == "1.000"
    assert texts["d-worth"] == "25" and texts["d-black-pos"] == "40 of 100"
    assert texts["d-train-pos"] == "160" and texts["bins"] == "20"
    texts = checks.collapse_texts(collapse_table(()), datasets=["d"])
    assert texts["d-collapse-budgets"] == texts["d-mostly"] == "no budget"
    assert texts["d-collapse-acc"] == texts["d-mostly-fpr"] == "–"
    texts = checks.collapse_texts(collapse_table((0, 2)), datasets=["d"])
    assert texts["d-mostly"] == "e¹" and texts["d-collapse-budgets"] == "no budget"
    frame = checks.collapse_frame(collapse_table((0, 2)), dataset="d")
    assert frame.iloc[0]["seeds all positive (black)"] == "2 (2) of 3"


def test_fnr_collapse_bad_input():
    t = collapse_table()
    with pytest.raises(ValueError, match="no rows"):
        checks.fnr_collapse(t[t.group != "black"], dataset="d")
    with pytest.raises(ValueError, match="no rows of data set"):
        checks.fnr_collapse(t, dataset="x")


# --- nDCG ----------------------------------------------------------------------------


def manual_graded_ndcg(real: dict, values: dict) -> float:
    """nDCG over all features, by hand (distinct values: no ties)."""
    gains = {f: max(v, 0.0) for f, v in real.items()}
    order = sorted(values, key=values.get, reverse=True)
    ideal = sorted(gains.values(), reverse=True)
    disc = [1 / math.log2(i + 2) for i in range(len(order))]
    return sum(gains[f] * d for f, d in zip(order, disc, strict=True)) / sum(
        g * d for g, d in zip(ideal, disc, strict=True)
    )


def test_graded_ndcg_against_a_hand_computation_and_its_edges():
    real = {"a": 0.30, "b": 0.10, "c": -0.05, "d": 0.02}
    est = {"a": 0.01, "b": 0.20, "c": 0.05, "d": -0.3}
    assert checks.graded_ndcg(real, est) == pytest.approx(manual_graded_ndcg(real, est))
    assert checks.graded_ndcg(real, real) == pytest.approx(1.0)
    # A negative real value counts as 0: swapping it with a zero changes nothing.
    zero = {"a": 0.3, "b": 0.1, "c": 0.0, "d": -0.2}
    assert checks.graded_ndcg(zero, {"a": 4, "b": 3, "c": 1, "d": 2}) == 1.0
    # Order of the mappings does not matter; a Series works too.
    assert checks.graded_ndcg(pd.Series(real), dict(reversed(est.items()))) == (
        pytest.approx(manual_graded_ndcg(real, est)))  # fmt: skip
    with pytest.raises(ValueError, match="same features"):
        checks.graded_ndcg(real, {"a": 1, "b": 2, "c": 3})
    with pytest.raises(ValueError, match="0 or negative"):
        checks.graded_ndcg({"a": -1.0, "b": 0.0}, {"a": 1, "b": 2})
    with pytest.raises(ValueError, match="non-finite"):
        checks.graded_ndcg({"a": np.nan, "b": 1.0}, {"a": 1, "b": 2})
    with pytest.raises(ValueError, match="non-finite"):
        checks.graded_ndcg({"a": 1.0, "b": 1.0}, {"a": np.inf, "b": 2})
    with pytest.raises(ValueError, match="one feature"):
        checks.graded_ndcg({"a": 1.0}, {"a": 1.0})


def test_random_ndcg_is_the_mean_over_every_order():
    real = {"a": 0.30, "b": 0.10, "c": -0.05, "d": 0.02, "e": 0.07}
    features = list(real)
    full, top = [], []
    for order in itertools.permutations(features):
        scores = {f: len(order) - i for i, f in enumerate(order)}
        full.append(checks.graded_ndcg(real, scores))
        top.append(ndcg_at_k(list(order), sorted(real, key=real.get, reverse=True),
                             k=3))  # fmt: skip
    assert checks.random_ndcg(real) == pytest.approx(np.mean(full))
    assert checks.random_ndcg(real, k=3) == pytest.approx(np.mean(top))
    with pytest.raises(ValueError, match="between 1 and 5"):
        checks.random_ndcg(real, k=6)
    with pytest.raises(ValueError, match="between 1 and 5"):
        checks.random_ndcg(real, k=True)


def dpsage_table(seeds=(0, 1), shuffle=False):
    """Real SAGE values and DPSAGE's (equal, or in reversed order) per seed."""
    real = {"A": 0.3, "B": 0.2, "C": 0.1, "D": 0.05, "E": 0.02, "F": -0.01}
    rows = []
    for e, s in itertools.product((0.2, 1.0), seeds):
        for f, v in real.items():
            rows.append(("d", e, s, "real_sage", "real", f, "sage_value", v))
            for lab in ("synthetic", "model"):
                mine = -v if shuffle else v
                rows.append(("d", e, s, "dpsage", lab, f, "sage_value", mine))
        for lab in ("synthetic", "model"):
            rows.append(("d", e, s, "dpsage", lab, "all", "ndcg", 0.5))
    return pd.DataFrame(rows, columns=list(DPSAGE_COLUMNS))


def test_graded_ndcg_per_seed_on_a_hand_made_table():
    t = dpsage_table()
    v = checks.graded_ndcg_per_seed(t, dataset="d", epsilon=1.0, labels="synthetic")
    assert v.to_dict() == {0: pytest.approx(1.0), 1: pytest.approx(1.0)}
    rev = checks.graded_ndcg_per_seed(dpsage_table(shuffle=True), dataset="d",
                                      epsilon=0.2, labels="model")  # fmt: skip
    real = {"A": 0.3, "B": 0.2, "C": 0.1, "D": 0.05, "E": 0.02, "F": -0.01}
    assert rev[0] == pytest.approx(
        manual_graded_ndcg(real, {f: -x for f, x in real.items()})
    )
    gap = t[~((t.method == "dpsage") & (t.seed == 1) & (t.feature == "A"))]
    with pytest.raises(ValueError, match="lack seeds"):
        checks.graded_ndcg_per_seed(gap, dataset="d", epsilon=1.0, labels="synthetic")


def test_table2_ndcg_verdicts_on_a_hand_made_table(monkeypatch):
    t = dpsage_table().replace({"dataset": {"d": MOB}})
    out = checks.table2_ndcg_verdicts(t)
    top5, graded = (out[name] for name in checks.NDCG_DEFINITIONS.values())
    assert [v.quantity for v in top5] == [
        "ACSMobility, New Mexico, ε = 0.2",
        "ACSMobility, New Mexico, ε = 1.0",
    ]
    assert [v.paper for v in graded] == list(
        paper_numbers.SPENDING_TABLE2["ACSMobility-NM"]["ndcg"]
    )
    # DPSAGE equal to the reference: 1.0 under the full list, the paper's 0.96, 0.98.
    assert [v.mean for v in graded] == pytest.approx([1.0, 1.0])
    assert [v.outcome for v in graded] == ["reproduces"] * 2
    # The stored top-5 nDCG, 0.5, differs (the same in both seeds: no interval).
    assert [v.outcome for v in top5] == ["differs"] * 2
    with pytest.raises(ValueError, match="labels must be one of"):
        checks.table2_ndcg_verdicts(t, labels="real")
    with pytest.raises(ValueError, match="none of"):
        checks.table2_ndcg_verdicts(dpsage_table())


# --- Aggregate fidelity --------------------------------------------------------------


def fidelity_table(sq=0.10, mst=0.05, seeds=(0, 1, 2), share=(0.50, 0.45, 0.48)):
    rows = []
    for s in seeds:
        j = 0.001 * s
        for metric in ("tvd_1way_mean", "tvd_2way_max"):
            rows += [("d", 1.0, s, "sq", "overall", metric, sq + j),
                     ("d", 1.0, s, "mst", "overall", metric, mst + 2 * j)]  # fmt: skip
        real, sq_share, mst_share = share
        rows += [
            ("d", 1.0, s, "real", "overall", "target_share", real),
            ("d", 1.0, s, "sq", "overall", "target_share", sq_share + j),
            ("d", 1.0, s, "mst", "overall", "target_share", mst_share),
        ]
    return pd.DataFrame(rows, columns=list(E2E_COLUMNS))


def test_fidelity_check_on_known_tables():
    out = checks.fidelity_check(fidelity_table())
    assert [v.quantity for v in out] == [
        "d, ε = e⁰: target share's distance from the training split's",
        "d, ε = e⁰: TVD, 1-way mean", "d, ε = e⁰: TVD, 2-way max"]  # fmt: skip
    # |0.45 - 0.5| against |0.48 - 0.5|: SQ is further, as MST's TVDs are lower.
    assert [v.outcome for v in out] == ["reproduces"] * 3
    assert out[0].mean == pytest.approx(0.029)  # |0.45 + j - 0.5| - |0.48 - 0.5|
    assert out[1].claim == "MST closer to the real data than SQ"
    flipped = checks.fidelity_check(fidelity_table(sq=0.05, mst=0.10))
    assert [v.outcome for v in flipped[1:]] == ["differs"] * 2
    equal = fidelity_table(sq=0.07, mst=0.07)
    equal.loc[equal.method == "mst", "value"] = equal.loc[equal.method == "sq", "value"
                                                          ].to_numpy()  # fmt: skip
    assert {v.outcome for v in checks.fidelity_check(equal)} == {"degenerate"}
    one = checks.fidelity_check(fidelity_table(seeds=(0,)))
    assert {v.outcome for v in one} == {"inconclusive"}
    assert "one seed" in one[0].reason


def test_fidelity_check_bad_input():
    t = fidelity_table()
    with pytest.raises(ValueError, match="none of the fidelity metrics"):
        checks.fidelity_check(t[~t.metric.isin(checks.FIDELITY_METRICS)])
    with pytest.raises(ValueError, match="'real' lacks seeds"):
        checks.fidelity_check(t[t.method != "real"])
    with pytest.raises(ValueError, match=r"'sq' lacks seeds \[1\]"):
        checks.fidelity_check(t[~((t.method == "sq") & (t.seed == 1))])
    with pytest.raises(ValueError, match="several rows per seed"):
        checks.fidelity_check(pd.concat([t, t.iloc[:1]]))
    with pytest.raises(ValueError, match="lacks columns"):
        checks.fidelity_check(t.drop(columns="metric"))


# --- The chapter's blocks and texts without a stored run -----------------------------


def test_without_a_paper_run_every_block_and_text_says_so():
    empty = findings.PaperProfile(None, [], [], {})
    blocks = checks.paper_blocks(empty, dataset=NY, note="n")
    assert set(blocks) == {"table1", "table1-claims", "authors", "claims",
                           "fnr-controls", "collapse"}  # fmt: skip
    assert set(blocks.values()) == {"Not computed yet (see above)."}
    texts = checks.paper_check_texts(empty, dataset=NY)
    assert tuple(texts) == checks.CHECK_TEXT_KEYS
    assert set(texts.values()) == {"– (not computed)"}


# --- The stored paper results --------------------------------------------------------


@pytest.fixture(scope="module")
def e2e():
    result = stored_result("spending_e2e", "paper")
    return result.table, result


@pytest.fixture(scope="module")
def dpsage():
    return stored_result("spending_dpsage", "paper").table


def test_stored_mst_makes_the_same_predictions_in_every_seed(e2e):
    t, _ = e2e
    mst = checks.frozen_predictions(t, dataset=NY, method="mst")
    assert mst.seeds == tuple(range(10)) and len(mst.budgets) == 5
    # From e^1 on every per-group metric is the same number in all ten seeds; at
    # e^0 one seed differs by one test record.
    assert [round(math.log(e)) for e in mst.frozen_budgets] == [1, 2, 3, 4]
    assert (mst.frozen_cells, mst.cells) == (74, 80)
    assert mst.overall_accuracies == (0.67825, 0.6785) and mst.records_apart == 1
    real = checks.frozen_predictions(t, dataset=NY, method="real")
    assert real.everywhere and real.deterministic
    sq = checks.frozen_predictions(t, dataset=NY, method="sq")
    assert sq.frozen_budgets == () and sq.frozen_cells < 5
    # Elsewhere MST's predictions move.
    assert not checks.frozen_predictions(t, dataset=PC, method="mst").frozen_budgets
    assert checks.frozen_texts(t, dataset=NY) == {
        "frozen-seeds": "10", "mst-frozen-budgets": "4 of 5 budgets",
        "mst-frozen-cells": "74 of 80", "mst-runs": "50",
        "mst-accuracies": "2 values, 1 test record apart",
        "real-frozen": "all 80 metrics"}  # fmt: skip


def test_stored_table1_claims(e2e):
    t, _ = e2e
    e3 = findings.budget_of(t, dataset=NY, power=3)
    rows = checks.table1_text_verdicts(t, dataset=NY, epsilon=e3, note="NY")
    assert [r.outcome for r in rows] == [
        "not comparable",
        "degenerate",
        "not comparable",
        "degenerate",
        "inconclusive",
        "inconclusive",
        "reproduces",
        "reproduces",
        "degenerate",
    ]
    assert [f"{r.mean:.3f}" for r in rows] == [
        "0.056", "0.006", "0.049", "-0.007", "-0.017", "0.036", "0.044", "0.045",
        "0.072"]  # fmt: skip
    # MST narrows Real's gap; by the test error alone that cannot be decided.
    assert rows[3].reason == (
        "MST: the same value in all 10 seeds; on the test error alone: inconclusive"
    )
    assert rows[8].reason.startswith("FSQ-Bal: the same value in all 10 seeds")
    assert [r.ours.n_test for r in rows[5:]] == [250, 2267, 1627, 250]
    texts = checks.table1_text_texts(t, dataset=NY, epsilon=e3)
    assert texts == {
        "t1-real-gap": "0.056", "t1-mst-gap": "0.049", "t1-bal-fnr-w": "0.044",
        "t1-bal-fnr-b": "0.080", "t1-fnr-real": "0.090", "t1-fnr-mst": "0.060",
        "t1-fnr-sq": "0.045", "t1-fnr-fsq_bal": "0.046"}  # fmt: skip
    # The directions the paragraph states.
    num = {k: float(v) for k, v in texts.items()}
    assert num["t1-mst-gap"] < num["t1-real-gap"]
    assert num["t1-bal-fnr-w"] < num["t1-bal-fnr-b"]
    assert max(num["t1-fnr-sq"], num["t1-fnr-mst"], num["t1-fnr-fsq_bal"]) < (
        num["t1-fnr-real"])  # fmt: skip


def test_stored_fnr_controls(e2e):
    t, _ = e2e
    out = checks.fnr_controls(t, dataset=NY)
    assert list(out) == ["ε = e⁰", "ε = e²", "ε = e³"]
    means = {k: [round(v.mean, 3) for v in rows] for k, rows in out.items()}
    assert means["ε = e³"] == [0.042, 0.04, 0.017, 0.002, 0.025]
    # Every synthetic set beats Real-DP on the means; FSQ-FNR adds 0.002 to SQ at e³.
    assert all(m > 0 for rows in means.values() for m in rows[:3])
    outcomes = {k: [v.outcome for v in rows] for k, rows in out.items()}
    assert outcomes["ε = e⁰"] == ["degenerate", "inconclusive", "inconclusive",
                                  "degenerate", "degenerate"]  # fmt: skip
    assert set(outcomes["ε = e²"]) == set(outcomes["ε = e³"]) == {"inconclusive"}
    assert "predicts one class in 7 of 10 seeds" in out["ε = e⁰"][0].reason
    assert "250 positives" in checks.fnr_controls_caption(t, dataset=NY)


def test_stored_fsq_fnr_collapse(e2e):
    t, _ = e2e
    pc = checks.fnr_collapse(t, dataset=PC)
    assert list(pc["all_positive"]) == [7, 10, 8, 2, 0]
    assert list(pc["protected_all_positive"]) == [9, 10, 9, 2, 0]
    assert pc["protected_fpr"].iloc[:3].min() > 0.93
    e1 = pc.iloc[1]
    assert e1.accuracy == pytest.approx(e1.base_rate) and f"{e1.base_rate:.3f}" == (
        "0.477")  # fmt: skip
    assert [f"{x:.0f}" for x in pc["noise_sd"]] == ["47", "17", "4", "1", "1"]
    texts = checks.collapse_texts(t, datasets=[NY, PC, MOB])
    expected = {
        "pc-worth": "118", "pc-black-pos": "13 of 36", "pc-train-pos": "52",
        "pc-mostly": "e⁰, e¹, e²", "pc-mostly-fpr": "0.935 to 1.000",
        "pc-collapse-budgets": "e¹", "pc-collapse-acc": "0.477", "pc-base": "0.477",
        "ny-worth": "16", "ny-black-pos": "250 of 486", "ny-mostly": "e⁰",
        "ny-collapse-budgets": "no budget", "bins": "20", "threshold-share": "0.1",
    }  # fmt: skip
    assert {k: texts[k] for k in expected} == expected
    # "From e³ on ... collapses in few seeds or none"; the noise about a record.
    assert pc["all_positive"].iloc[3:].max() <= 2 and pc["noise_sd"].iloc[3:].max() < 2
    # "up to e², more than the black group's positives per bin" (52 over 20 bins).
    per_bin = int(texts["pc-train-pos"]) / int(texts["bins"])
    assert (pc["noise_sd"].iloc[:3] > per_bin).all()
    assert (pc["noise_sd"].iloc[3:] < per_bin).all()


def test_stored_claims_check_fsq_fnr_against_sq_and_mst(e2e):
    t, _ = e2e
    claims = findings.check_spending_claims(t)
    fnr = claims[6]
    assert (
        fnr.outcome == "degenerate" and fnr.ours_text == "9 of 9 hold, 3 beyond doubt"
    )
    texts = [c.text for c in findings.claim_comparisons(
        t, paper_numbers.SPENDING_CLAIMS[6])]  # fmt: skip
    assert texts[:3] == ["FSQ-FNR's black FNR below Real-DP's at e⁰",
                         "FSQ-FNR's black FNR below SQ's at e⁰",
                         "FSQ-FNR's black FNR below MST's at e⁰"]  # fmt: skip


def test_stored_paper_blocks_and_texts(e2e):
    _, result = e2e
    quick = stored_result("spending_e2e", "quick").table
    profile = findings.paper_profile(result, quick=quick)
    blocks = checks.paper_blocks(profile, dataset=NY, note="NY")
    # Number cells keep their spaces unbreakable (report.number_breaks).
    blocks = {
        k: b.replace("\u00a0", " ").replace("\u2060", "") for k, b in blocks.items()
    }
    assert all(result.caption() in b for b in blocks.values())
    assert blocks["table1-claims"].count("\n| ") == 9  # the rows below the header
    assert (
        "| ACSPublicCoverage, New Mexico | e¹ | 10 (10) of 10 |" in blocks["collapse"]
    )
    texts = checks.paper_check_texts(profile, dataset=NY)
    assert tuple(sorted(texts)) == tuple(sorted(checks.CHECK_TEXT_KEYS))
    assert texts["t1-claims-counts"] == (
        "of 9 claims, 2 reproduce, 2 are inconclusive, 3 are degenerate and 2 are not "
        "comparable"
    )
    assert texts["controls-counts"] == (
        "of 15 comparisons, 12 are inconclusive and 3 are degenerate"
    )


def test_superquail_runs_is_what_every_page_of_the_chapter_reads(e2e):
    _, result = e2e
    quick = stored_result("spending_e2e", "quick")
    runs = checks.superquail_runs(quick, result)
    assert runs.dataset == NY and runs.table is quick.table
    assert runs.paper.seeds == list(range(10))
    # The paper profile's blocks and texts, as paper_blocks and paper_check_texts give.
    blocks = checks.paper_blocks(runs.paper, dataset=NY, note=checks.TABLE1_NOTE)
    assert {k: runs.blocks[k] for k in blocks} == blocks
    assert set(runs.texts) >= set(checks.CHECK_TEXT_KEYS) | set(runs.paper.texts)
    assert runs.texts["claims-counts"] == (
        "of 10 statements, 1 reproduces, 1 differs, 3 are inconclusive and 5 are "
        "degenerate"
    )
    # The quick run's texts, its caption, Table 1 beside it and the fair variants' cost.
    assert runs.texts["caption"] == quick.caption()
    assert runs.texts["seeds"] == "seed 0" and runs.texts["delta"] == "1e-09"
    assert runs.blocks["quick-table1"].endswith(
        "ε = e³. Every row's reason begins: New York sample, not California. "
        + quick.caption()
    )
    assert "| not comparable | the paper's value" in runs.blocks["quick-table1"]
    # Number cells keep their spaces unbreakable (report.number_breaks).
    cost = runs.blocks["fair-cost"].replace("\u00a0", " ").replace("\u2060", "")
    assert "| FSQ-FNR | black | 240 (123) | -0.054 | -0.089 | +0.205 |" in cost
    # Without a paper run, the quick run's blocks stand and the paper's say so.
    bare = checks.superquail_runs(quick, None)
    assert bare.blocks["fair-cost"] == runs.blocks["fair-cost"]
    assert bare.blocks["table1"] == "Not computed yet (see above)."
    assert bare.texts["claims-counts"] == "not computed"


def test_stored_table2_under_both_ndcg_definitions(dpsage):
    t = dpsage
    v = checks.graded_ndcg_per_seed(t, dataset=NY, epsilon=1.0, labels="synthetic")
    assert list(v.index) == list(range(10)) and f"{v.mean():.3f}" == "0.943"
    # One seed by an independent call of scikit-learn.
    real = findings.sage_values(t, dataset=NY, epsilon=1.0, method="real_sage",
                                labels="real")[3]  # fmt: skip
    mine = findings.sage_values(t, dataset=NY, epsilon=1.0, method="dpsage",
                                labels="synthetic")[3].reindex(real.index)  # fmt: skip
    assert v[3] == pytest.approx(
        ndcg_score([real.clip(lower=0).to_numpy()], [mine.to_numpy()])
    )
    out = checks.table2_ndcg_verdicts(t)
    top5, graded = (out[n] for n in checks.NDCG_DEFINITIONS.values())
    assert [f"{x.mean:.2f}" for x in graded] == [
        "0.59",
        "0.94",
        "0.50",
        "0.92",
        "0.58",
        "0.83",
        "0.42",
        "0.46",
    ]
    assert [x.outcome for x in graded] == [
        "inconclusive", "reproduces", "differs", "reproduces", "differs", "differs",
        "differs", "differs"]  # fmt: skip
    # The top-5 column is the stored nDCG of Table 2 (table2_comparisons' nDCG rows).
    stored = [r for r in findings.table2_comparisons(t, labels="synthetic")
              if ", nDCG, " in r.quantity]  # fmt: skip
    assert [x.mean for x in top5] == [r.mean for r in stored]
    texts = checks.ndcg_texts(t)
    assert texts == {
        "ndcg-top5": "of 8 cells, 1 reproduces and 7 differ",
        "ndcg-model-top5": "of 8 cells, 3 reproduce and 5 differ",
        "ndcg-top5-above": "0 of 8", "ndcg-top5-below": "7 of 8",
        "ndcg-emp-top5": "0.66 to 0.82", "ndcg-random-top5": "0.29 to 0.33",
        "ndcg-graded": "of 8 cells, 2 reproduce, 5 differ and 1 is inconclusive",
        "ndcg-model-graded": "of 8 cells, 3 reproduce and 5 differ",
        "ndcg-graded-above": "2 of 8", "ndcg-graded-below": "4 of 8",
        "ndcg-emp-graded": "0.92 to 0.94", "ndcg-random-graded": "0.53 to 0.65",
        "ndcg-below-random": "ACSMobility, New Mexico"}  # fmt: skip
    block = checks.table2_ndcg_block(t, caption="CAPTION")
    assert block.endswith("CAPTION") and "full list, graded by real SAGE" in block
    frame = verdict_frame(graded)
    assert set(frame["verdict"]) == {"reproduces", "differs", "inconclusive"}


def test_quick_run_fsq_fnr_shares_its_direction_with_mst_and_sq():
    # The quick-run paragraph: MST's and SQ's black FNR are below Real-DP's at e³ too.
    t = stored_result("spending_e2e", "quick").table
    texts = findings.quick_texts(t, dataset=NY, rows=None)
    real_dp = float(texts["fnrb-real_dp-e3"])
    assert (
        float(texts["fnrb-mst-e3"]) < real_dp and float(texts["fnrb-sq-e3"]) < real_dp
    )
