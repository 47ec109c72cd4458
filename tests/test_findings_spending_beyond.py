"""Tests for dpnotes.findings.spending_beyond: hand-made tables and the stored run."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dpnotes import paper_numbers, plotting
from dpnotes.findings import spending_beyond as b
from dpnotes.findings import spending_checks as checks
from dpnotes.findings.spending import E2E_COLUMNS
from dpnotes.findings.verdict import Verdict
from dpnotes.importance.evaluation import CLASSIFIERS
from dpnotes.lab import load_stored

COLS = list(E2E_COLUMNS)
E = tuple(math.e**k for k in range(3))  # e^0, e^1, e^2


def _table(
    values,
    *,
    dataset=b.NM,
    eps=(1.0,),
    seeds=(0, 1),
    n=1000,
    pos=400,
    n_black=50,
    pos_black=20,
    rates=None,
    extra=(),
):
    """A spending_e2e table: ``values`` maps method -> accuracy (and F1) per seed,
    the same at every budget; ``rates`` maps method -> (black FNR, black FPR) per
    seed (the black accuracy then follows from them). A reference method ``real``
    (and ``real@authors`` beside the authors' rows, on 100 test records fewer) has
    rates consistent with ``pos`` and ``pos_black`` positives, so that
    group_positives recovers them exactly; the other methods' FNR and FPR are equal
    elsewhere, which leaves them out of that recovery."""
    refs = ["real"] + ["real@authors"] * any(m.endswith(b.AUTHORS) for m in values)

    def acc_of(fnr, fpr, p, nn):
        return 1 - (fnr * p + fpr * (nn - p)) / nn

    rows = []
    for e in eps:
        for i, s in enumerate(seeds):
            for m in refs + list(values):
                n_all = n - 100 if m.endswith(b.AUTHORS) else n
                for g, nn, p in (
                    ("overall", n_all, pos),
                    ("black", n_black, pos_black),
                ):
                    if m in refs:
                        fnr, fpr = 0.1, 0.4
                        acc = acc_of(fnr, fpr, p, nn)
                    elif g == "black" and rates and m in rates:
                        fnr, fpr = rates[m][0][i], rates[m][1][i]
                        acc = acc_of(fnr, fpr, p, nn)
                    else:
                        fnr, fpr, acc = 0.3, 0.3, values[m][i]
                    f1 = 0.5 if m in refs else values[m][i]
                    for k, v in (("accuracy", acc), ("f1", f1), ("fnr", fnr),
                                 ("fpr", fpr), ("count", nn)):  # fmt: skip
                        rows.append((dataset, e, s, m, g, k, v))
    rows += list(extra)
    return pd.DataFrame(rows, columns=COLS)


# --- paired ---------------------------------------------------------------------------


def test_paired_by_hand():
    t = _table({"a": [0.80, 0.82], "b": [0.70, 0.71]})
    e = b.paired(t, dataset=b.NM, a="a", b="b")[1.0]
    assert e.values == pytest.approx((0.10, 0.11))
    assert e.n_seeds == 2 and e.n_test == 1000
    # The test error of both accuracies is counted: wider than the seed spread alone.
    assert e.se > pd.Series(e.values).std() / math.sqrt(2)
    # F1 is no proportion of a count: the seed spread only.
    f1 = b.paired(t, dataset=b.NM, a="a", b="b", metric="f1")[1.0]
    assert f1.se_test == 0 and f1.n_test is None
    # FNR counts the group's positives, recovered from the stored rates.
    rates = {"a": ((0.1, 0.2), (0.5, 0.5)), "b": ((0.3, 0.3), (0.5, 0.5))}
    t = _table({"a": [0.8, 0.8], "b": [0.7, 0.7]}, rates=rates)
    fnr = b.paired(t, dataset=b.NM, a="a", b="b", metric="fnr", group="black")[1.0]
    assert fnr.n_test == 20 and fnr.mean == pytest.approx(-0.15)


def test_paired_all_equal_and_one_seed():
    same = b.paired(
        _table({"a": [0.7, 0.7], "b": [0.7, 0.7]}), dataset=b.NM, a="a", b="b"
    )[1.0]
    assert same.mean == 0.0 and same.low < 0 < same.high
    one = b.paired(
        _table({"a": [0.8], "b": [0.7]}, seeds=(3,)), dataset=b.NM, a="a", b="b"
    )[1.0]
    assert one.n_seeds == 1 and one.low < 0.1 < one.high  # the test error alone


def test_paired_refuses_what_is_missing():
    t = _table({"a": [0.8, 0.8], "b": [0.7, 0.7], "a@authors": [0.8, 0.8]})
    with pytest.raises(ValueError, match=r"no rows of the methods \['c'\]"):
        b.paired(t, dataset=b.NM, a="a", b="c")
    with pytest.raises(ValueError, match="no rows of 'x'"):
        b.paired(t, dataset="x", a="a", b="b")
    short = t[~((t.method == "b") & (t.seed == 1))]
    with pytest.raises(ValueError, match=r"lacks seeds \[1\] .* b, overall accuracy"):
        b.paired(short, dataset=b.NM, a="a", b="b")
    with pytest.raises(ValueError, match="lacks the columns"):
        b.paired(t.drop(columns="seed"), dataset=b.NM, a="a", b="b")
    with pytest.raises(ValueError, match="mix our evaluation with the authors'"):
        b.paired(t, dataset=b.NM, a="a@authors", b="b")
    with pytest.raises(ValueError, match=r"no rows for .* a, white accuracy"):
        b.paired(t, dataset=b.NM, a="a", b="b", group="white")
    with pytest.raises(TypeError):
        b.paired("table", dataset=b.NM, a="a", b="b")


# --- the stand-ins --------------------------------------------------------------------


def _stand_ins(ny_sq, nm_sq, *, mst=(0.70, 0.70)):
    kw = {"eps": E, "n": 100_000}
    return {
        b.NY: _table({"sq": ny_sq, "mst": list(mst)}, dataset=b.NY, **kw),
        b.NM: _table({"sq": nm_sq, "mst": list(mst)}, **kw),
    }


def test_stand_in_verdicts_orient_rows_by_the_papers_claim():
    cols = b.stand_in_verdicts(_stand_ins([0.60, 0.61], [0.80, 0.81]))
    assert list(cols) == ["New York sample, 2 seeds", "New Mexico, 2 seeds"]
    ny, nm = cols.values()
    assert [v.quantity for v in ny[:3]] == [
        "MST − SQ, accuracy, ε = e⁰",
        "SQ − MST, accuracy, ε = e¹",
        "SQ − MST, accuracy, ε = e²",
    ]
    assert ny[0].claim == "MST above SQ" and ny[1].claim == "SQ above MST"
    # SQ far below MST: the e^0 claim (MST ahead) holds, "SQ above MST" fails.
    assert [v.outcome for v in ny[:3]] == ["reproduces", "differs", "differs"]
    assert [v.outcome for v in nm[:3]] == ["differs", "reproduces", "reproduces"]
    assert len(ny) == 6 and ny[3].quantity == "MST − SQ, F1, ε = e⁰"


def test_stand_in_texts_count_and_list_the_changes():
    texts = b.stand_in_texts(_stand_ins([0.60, 0.61], [0.80, 0.81]))
    assert texts["ny-accuracy-above"] == "at none of the 3 budgets"
    assert texts["nm-accuracy-above"] == "at all 3 budgets"
    assert texts["changed"].startswith("in all 6 comparisons: accuracy at e⁰ (")
    assert (
        "reproduces on the New York sample, differs on New Mexico" in texts["changed"]
    )
    # The same runs on both: nothing changes.
    same = b.stand_in_texts(_stand_ins([0.80, 0.81], [0.80, 0.81]))
    assert same["changed"] == "in none of the 6 comparisons"
    # A frozen pair of models (the same values in both seeds) is degenerate.
    frozen = b.stand_in_verdicts(_stand_ins([0.75, 0.75], [0.75, 0.75]))
    assert {v.outcome for vs in frozen.values() for v in vs} == {"degenerate"}


def test_the_direction_and_the_agreement_of_the_stand_ins():
    flipped = b.stand_in_texts(_stand_ins([0.60, 0.61], [0.80, 0.81]))
    assert flipped["direction"] == "the direction flips with the population"
    same = b.stand_in_texts(_stand_ins([0.80, 0.81], [0.82, 0.83]))
    assert same["direction"] == "the direction is the same on both"
    cols = b.stand_in_verdicts(_stand_ins([0.60, 0.61], [0.80, 0.81]))
    texts = b.agreement_texts(cols, ten_seeds=True)
    # New Mexico (SQ far above) reproduces "SQ above MST" from e^1 on, at both metrics.
    assert texts["nm-confirms"] == "all 4 comparisons"
    assert texts["contradicts"] == "in all 6 comparisons"
    assert texts["standing"].startswith("both stand-ins now have")
    quiet = b.agreement_texts(
        b.stand_in_verdicts(_stand_ins([0.60, 0.61], [0.60, 0.61])), ten_seeds=False
    )
    assert quiet["nm-confirms"] == "none of the 4 comparisons"
    assert quiet["contradicts"] == "in none of the 6 comparisons"
    assert "until the ten-seed run" in quiet["standing"]
    with pytest.raises(ValueError, match="two stand-ins"):
        b.agreement_texts({"x": cols[next(iter(cols))]}, ten_seeds=False)


def test_stand_ins_refuse_what_is_missing():
    tables = _stand_ins([0.6, 0.6], [0.8, 0.8])
    with pytest.raises(ValueError, match="not stand-ins"):
        b.stand_in_verdicts({"ACSMobility-NM": tables[b.NM]})
    with pytest.raises(ValueError, match="no stand-ins"):
        b.stand_in_verdicts({})
    with pytest.raises(ValueError, match="give both stand-ins"):
        b.stand_in_texts({b.NM: tables[b.NM]})
    with pytest.raises(ValueError, match=r"no rows of the methods \['mst'\]"):
        b.stand_in_verdicts({b.NM: tables[b.NM][tables[b.NM].method != "mst"]})


def test_population_frame():
    tables = _stand_ins([0.6, 0.6], [0.8, 0.8])
    share = [(b.NM, 1.0, s, "real", "overall", "target_share", 0.4) for s in (0, 1)]
    tables[b.NM] = pd.concat([tables[b.NM], pd.DataFrame(share, columns=COLS)])
    frame = b.population_frame(tables)
    assert frame["ages"].tolist() == ["17–89", "all"]
    assert frame["test records"].tolist() == ["100,000", "100,000"]
    assert frame["positive (test)"].tolist() == ["0.004", "0.004"]  # 400 of 100,000
    assert frame["positive (training)"].tolist() == ["–", "0.400"]
    with pytest.raises(ValueError, match="not a stand-in"):
        b.population_frame({"x": tables[b.NM]})


def test_aim_verdicts_share_their_quantities():
    t = _table({"aim_target": [0.9, 0.91], "sq": [0.5, 0.5], "mst": [0.9, 0.91]},
               n=100_000)  # fmt: skip
    cols = b.aim_verdicts(t)
    assert list(cols) == ["AIM − SQ", "AIM − MST"]
    assert [v.quantity for v in cols["AIM − SQ"]] == ["accuracy, ε = e⁰", "F1, ε = e⁰"]
    assert cols["AIM − SQ"][0].outcome == "reproduces"
    assert cols["AIM − MST"][0].ours.mean == 0.0
    with pytest.raises(ValueError, match=r"methods \['aim_target'\]"):
        b.aim_verdicts(t[t.method != "aim_target"])


# --- the capped threshold -------------------------------------------------------------


def test_cap_frame_and_texts():
    rates = {
        "fsq_fnr": ((0.0, 0.3), (1.0, 0.4)),  # seed 0: everyone positive (black)
        "fsq_fnr_cap": ((0.0, 0.05), (0.2, 0.5)),
    }
    t = _table({"fsq_fnr": [0.5, 0.6], "fsq_fnr_cap": [0.55, 0.6]}, rates=rates)
    frame = b.cap_frame(t)
    row = frame.iloc[0]
    assert row["ε"] == "e⁰"
    assert row["black FNR, penalty"] == "0.150" and row["black FNR, capped"] == "0.025"
    assert row["all positive (black), penalty"] == "0 (1) of 2"
    assert row["all positive (black), capped"] == "0 (0) of 2"
    texts = b.cap_texts(t, fnr_target=0.1)
    assert texts["cap-met"] == (
        "in all 2 runs of the capped threshold and in 1 of 2 runs of the penalty's"
    )
    assert texts["cap-all-positive"].startswith("in none of the 2 runs")
    assert texts["cap-fpr-low"] == "0.350 to 0.700"
    assert texts["cap-acc-gap-high"] == "–"  # no budget from e^3 on
    one = _table({"fsq_fnr": [0.5], "fsq_fnr_cap": [0.5]}, seeds=(0,))
    assert b.cap_texts(one, fnr_target=0.1)["cap-met"] == (
        "in 0 of 1 run of the capped threshold and in 0 of 1 run of the penalty's"
    )
    # A black FNR exactly at the cap meets it.
    assert b.cap_texts(t, fnr_target=0.05)["cap-met"].startswith("in all 2 runs")
    assert b.cap_texts(t, fnr_target=0.0)["cap-met"].startswith("in 1 of 2 runs")
    with pytest.raises(ValueError, match="fnr_target"):
        b.cap_texts(t, fnr_target=1.5)
    with pytest.raises(ValueError, match=r"methods \['fsq_fnr_cap'\]"):
        b.cap_frame(t[t.method != "fsq_fnr_cap"])


# --- the authors' evaluation ----------------------------------------------------------


def _authors_table(**kw):
    chosen = [
        (b.NM, e, s, f"{m}@authors", "overall", "chosen", c)
        for e in E
        for s, c in ((0, 0), (1, 2))
        for m in ("sq", "mst")
    ] + [(b.NM, 1.0, 0, "fsq_fnr@authors", "overall", "chosen", -1)]
    values = {"sq": [0.71, 0.72], "mst": [0.70, 0.70],
              "sq@authors": [0.75, 0.76], "mst@authors": [0.70, 0.70]}  # fmt: skip
    return _table(values, eps=E, extra=chosen, **kw)


def test_authors_frame_and_texts():
    t = _authors_table(n=100_000)
    frame = b.authors_frame(t)
    assert frame.columns.tolist() == [
        "ε", "ours", "the authors' pipeline", "pipeline − ours", "authors' files",
    ]  # fmt: skip
    e2 = frame.iloc[2]
    assert e2["ours"].startswith("+1.5 [") and e2["pipeline − ours"].startswith("+4.0")
    stored = paper_numbers.SPENDING_AUTHORS_E2
    assert e2["authors' files"] == f"{(stored['sq'][0] - stored['mst'][0]) * 100:+.1f}"
    assert frame.iloc[0]["authors' files"] == "–"
    texts = b.authors_texts(t)
    assert texts["margin-paper"] == "+7.5 points"
    assert texts["margin-added"].startswith("+4.0 points [")
    assert texts["added-above"] == "at all 3 budgets"
    assert texts["chosen-sq-mst"] == (
        "gradient boosting in 6 of 12 runs, random forest in 6 of 12 runs"
    )
    assert texts["chosen"].endswith(
        "; in 1 of 13 runs the training rows held one label"
    )
    with pytest.raises(ValueError, match="no budget e\\^2"):
        b.authors_texts(t[t.epsilon < 5])
    with pytest.raises(ValueError, match=r"methods \['sq@authors'\]"):
        b.authors_frame(t[t.method != "sq@authors"])


def test_chosen_counts():
    t = _authors_table()
    counts = b.chosen_counts(t)
    assert list(counts.index) == list(b.CHOSEN_NAMES.values())
    assert counts.to_dict() == {
        "one label": 1, "gradient boosting": 6, "MLP": 0, "random forest": 6,
    }  # fmt: skip
    assert set(b.CHOSEN_NAMES) == {-1, *range(len(CLASSIFIERS))}
    with pytest.raises(ValueError, match=r"no 'chosen' rows .* \['aim_target'\]"):
        b.chosen_counts(t, methods=("aim_target",))
    bad = t.copy()
    bad.loc[bad.metric == "chosen", "value"] = 7
    with pytest.raises(ValueError, match=r"chosen indices \[7\]"):
        b.chosen_counts(bad)


# --- aggregate fidelity ---------------------------------------------------------------


def _fidelity_table():
    rows = []
    for e in E:
        for s in (0, 1):
            sq = ("sq", 0.50 + 0.002 * s, 0.05 + 0.001 * s)
            for m, share, tvd in (("real", 0.40, None), ("mst", 0.41, 0.01), sq):
                rows.append((b.NM, e, s, m, "overall", "target_share", share))
                if tvd is not None:
                    rows.append((b.NM, e, s, m, "overall", "tvd_2way_mean", tvd))
    return pd.DataFrame(rows, columns=COLS)


def test_fidelity_frame_and_texts():
    t = _fidelity_table()
    frame = b.fidelity_frame(t)
    assert frame.columns.tolist() == ["metric", "e⁰", "e¹", "e²"]
    assert frame["metric"].tolist() == [
        "target share (distance from the real one)", "TVD, 2-way, mean",
    ]  # fmt: skip
    assert frame.iloc[0]["e⁰"] == "+0.091 reproduces"
    texts = b.fidelity_texts(t)
    assert texts["fidelity"] == (
        "MST is closer to the real training split than SQ in all 6 comparisons by "
        "the mean, 6 beyond doubt"
    )
    assert texts["share-real"] == "0.400" and texts["share-mst"] == "0.410"
    assert texts["share-sq"] == "0.501"
    no_fidelity = _table({"sq": [0.7, 0.7], "mst": [0.7, 0.7]})
    with pytest.raises(ValueError, match="no fidelity rows"):
        b.fidelity_frame(no_fidelity)
    with pytest.raises(ValueError, match="'real' lacks seeds"):
        b.fidelity_texts(t[t.method != "real"])


def test_preview_note_names_the_seeds_and_the_next_run():
    t = _table({"sq": [0.7]}, seeds=(0,))
    note = b.preview_note(t, next_seeds=10)
    assert "seed 0 only (a preview)" in note and "(10 seeds)" in note
    assert "in place of the paper's California" in note
    done = b.preview_note(t, next_seeds=10, done=True)
    assert "a preview" not in done and "the paper profile's 10 seeds" in done


# --- the stored run -------------------------------------------------------------------


@pytest.fixture(scope="module")
def stored():
    return load_stored("spending_e2e", b.BEYOND_PROFILE)


@pytest.fixture(scope="module")
def paper():
    return load_stored("spending_e2e", "paper").table


@pytest.fixture(scope="module")
def ny(paper):
    """The paper profile without its New Mexico Employment cells."""
    return paper[paper["dataset"] != b.NM]


@pytest.fixture(scope="module")
def report(stored, ny):
    return b.beyond_report(stored, paper=ny)


def test_the_stored_run_is_complete(stored):
    t = stored.table
    assert not stored.partial
    assert sorted(t["seed"].unique()) == [0, 1]
    assert t.groupby("method")["epsilon"].nunique().eq(5).all()


def test_new_mexico_comes_from_the_paper_profile_where_it_holds_it(stored, paper):
    assert paper.groupby("dataset")["seed"].nunique().to_dict()[b.NM] == 10
    report = b.beyond_report(stored, paper=paper)
    stand_ins = report.blocks["stand-ins"]
    assert "a preview" not in stand_ins.split("\n\n")[0]
    assert "the paper profile's New Mexico Employment cells (seeds 0–9)" in stand_ins
    # Its ten seeds, not the preview's two: SQ above MST at three budgets.
    assert report.texts["nm-accuracy-above"] == "at 3 of 5 budgets"
    assert report.texts["ny-accuracy-above"] == "at none of the 5 budgets"


def test_report_on_the_stored_run(report, stored):
    assert set(report.blocks) == {"stand-ins", "cap", "aim", "authors", "fidelity"}
    for block in report.blocks.values():
        assert "seeds 0, 1 only (a preview)" in block
        assert "New Mexico Employment (10 seeds)" in block
    texts = report.texts
    assert texts["margin-paper"] == "+7.5 points"
    assert int(texts["black-n"]) > int(texts["black-pos"]) > 0
    # The sentences the chapter builds on them (book/spending/superquail.md).
    assert texts["nm-accuracy-above"] == "at 4 of 5 budgets"
    assert texts["ny-accuracy-above"] == "at none of the 5 budgets"
    assert texts["nm-f1-above"] == "at none of the 5 budgets"
    assert "reproduces" not in texts["nm-verdicts"]
    assert texts["cap-met"].startswith("in all 10 runs of the capped threshold")
    assert texts["aim-mst"] == "at all 5 budgets"
    assert texts["added-above"] == "at all 5 budgets"
    assert texts["fidelity"].startswith("MST is closer to the real training split")
    # SQ's target share rises above the real one; MST's stays near it.
    assert float(texts["share-sq-max"].split()[0]) > float(texts["share-real"]) + 0.1


def test_chapter_claims_on_the_stored_run(stored):
    t = stored.table
    # On New Mexico SQ finds fewer of the employed than MST (higher overall FNR).
    fnr = b.paired(t, dataset=b.NM, a="sq", b="mst", metric="fnr")
    assert all(e.mean > 0 for e in fnr.values())
    # Up to e^2 both FSQ-FNR variants are below SQ's accuracy (they pay with false
    # positives); from e^3 on they are within a point of each other.
    for m in ("fsq_fnr", "fsq_fnr_cap"):
        d = b.paired(t, dataset=b.NM, a=m, b="sq")
        assert all(e.mean < 0 for k, e in enumerate(d.values()) if k <= 2)
    # AIM does not share SQ's loss at e^0.
    assert b.paired(t, dataset=b.NM, a="aim_target", b="sq")[1.0].mean > 0.03
    # What the authors' pipeline adds at e^2: its interval holds none and all of the
    # authors' margin.
    m = paper_numbers.SPENDING_AUTHORS_E2
    ours = b.paired(t, dataset=b.NM, a="sq", b="mst")
    theirs = b.paired(t, dataset=b.NM, a="sq@authors", b="mst@authors")
    e2 = min(ours, key=lambda e: abs(e - math.e**2))
    added = checks.gap_of_gaps(theirs[e2], ours[e2])
    assert added.contains(0.0) and added.contains(m["sq"][0] - m["mst"][0])
    # New Mexico's base rate is the paper's population's, far below the NY sample's.
    assert 0.35 < b.base_rate(t, dataset=b.NM) < 0.45


def test_stand_ins_on_the_stored_runs(stored, ny):
    frame = b.population_frame({b.NY: ny, b.NM: stored.table})
    assert frame["seeds"].tolist() == [10, 2]
    assert frame["test records"].tolist() == ["4,000", "3,849"]
    # The test split is a fifth of POPULATIONS' rows (dpnotes.data.spending).
    for d, n in zip((b.NY, b.NM), frame["test records"], strict=True):
        assert int(n.replace(",", "")) == round(0.2 * b.POPULATIONS[d][2])
    assert float(frame.loc[0, "positive (test)"]) > 0.55
    cols = b.stand_in_verdicts({b.NY: ny, b.NM: stored.table})
    assert all(isinstance(v, Verdict) for vs in cols.values() for v in vs)
    # The chapter: no New Mexico verdict confirms "SQ above MST", and none
    # contradicts a New York one.
    ny_col, nm_col = cols.values()
    assert not any(
        v.outcome == "reproduces" and v.claim == "SQ above MST" for v in nm_col
    )
    pairs = {
        frozenset((v.outcome, w.outcome)) for v, w in zip(ny_col, nm_col, strict=True)
    }
    assert frozenset(("reproduces", "differs")) not in pairs


def test_figure_is_legible(stored):
    plotting.set_style()
    fig = b.beyond_figure(stored.table, fnr_target=0.1)
    try:
        assert plotting.smallest_font_px(fig) >= plotting.MIN_FONT_PX
        assert plotting.colliding_ticks(fig) == []
        (acc, fnr) = fig.axes
        assert len(acc.get_lines()) == len(b.FIGURE_METHODS)
        assert np.isclose(fnr.get_lines()[-1].get_ydata()[0], 0.1)
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_report_reads_the_stored_config(stored, ny):
    fake = SimpleNamespace(table=stored.table, config={"fnr_target": 0.2})
    assert b.beyond_report(fake, paper=ny).texts["cap-target"] == "0.2"
