"""Tests for dpnotes.findings.spending_beyond: hand-made tables and the stored run."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from dpnotes import paper_numbers
from dpnotes.findings import spending_beyond as b
from dpnotes.findings import spending_checks
from dpnotes.findings.spending import E2E_COLUMNS
from dpnotes.lab import load_stored

COLS = list(E2E_COLUMNS)


def _table(values, *, seeds=(0, 1), n=100):
    """methods -> accuracy per seed at epsilon 1, with a count of n test records."""
    rows = []
    for m, per_seed in values.items():
        for s, v in zip(seeds, per_seed, strict=True):
            rows.append(("d", 1.0, s, m, "overall", "accuracy", v))
            rows.append(("d", 1.0, s, m, "overall", "count", n))
    return pd.DataFrame(rows, columns=COLS)


def test_paired_by_hand():
    t = _table({"a": [0.80, 0.82], "b": [0.70, 0.71]})
    e = b.paired(t, dataset="d", a="a", b="b")[1.0]
    assert e.values == pytest.approx((0.10, 0.11))
    assert e.n_seeds == 2 and e.n_test == 100
    # The test error of both accuracies is counted: wider than the seed spread alone.
    assert e.se > (pd.Series(e.values).std() / math.sqrt(2))
    same = b.paired(
        _table({"a": [0.7, 0.7], "b": [0.7, 0.7]}), dataset="d", a="a", b="b"
    )
    assert same[1.0].mean == 0.0 and same[1.0].low < 0 < same[1.0].high


def test_paired_refuses_what_is_missing():
    t = _table({"a": [0.8, 0.8], "b": [0.7, 0.7]})
    with pytest.raises(ValueError, match=r"no rows of the methods \['c'\]"):
        b.paired(t, dataset="d", a="a", b="c")
    with pytest.raises(ValueError, match="no rows of 'x'"):
        b.paired(t, dataset="x", a="a", b="b")
    short = t[~((t.method == "b") & (t.seed == 1))]
    with pytest.raises(ValueError, match="b lacks accuracy"):
        b.paired(short, dataset="d", a="a", b="b")
    with pytest.raises(ValueError, match="lacks the columns"):
        b.paired(t.drop(columns="seed"), dataset="d", a="a", b="b")
    with pytest.raises(TypeError):
        b.paired("table", dataset="d", a="a", b="b")


def test_beyond_frame_marks_intervals_that_exclude_zero():
    t = _table({"a": [0.90, 0.91], "b": [0.50, 0.51]}, n=10_000)
    frame = b.beyond_frame(
        t, dataset="d", comparisons=[("a − b", "a", "b", "accuracy", "overall")]
    )
    assert frame.columns.tolist() == ["comparison", "e^0"]
    assert frame.iloc[0]["e^0"].startswith("+0.400") and frame.iloc[0]["e^0"].endswith(
        "*"
    )


def test_fidelity_text_counts():
    from dpnotes.findings.verdict import compare_direction, estimate

    up = compare_direction("x", "MST closer", estimate([0.1, 0.11]))
    down = compare_direction("y", "MST closer", estimate([-0.1, 0.0]))
    assert b.fidelity_text([up, down]) == (
        "MST is closer to the real training split than SQ in 1 of 2 comparisons by "
        "the mean, 1 with an interval above 0"
    )
    with pytest.raises(ValueError, match="needs verdicts"):
        b.fidelity_text([])


@pytest.fixture(scope="module")
def stored():
    return load_stored("spending_e2e", b.BEYOND_PROFILE).table


def test_on_the_stored_run(stored):
    frame = b.beyond_frame(stored)
    assert frame["comparison"].tolist() == [c[0] for c in b.COMPARISONS]
    assert frame.columns.tolist()[1:] == [f"e^{k}" for k in range(5)]
    m = paper_numbers.SPENDING_AUTHORS_E2
    texts = b.beyond_texts(stored, authors_margin=m["sq"][0] - m["mst"][0])
    assert texts["margin-paper"] == "+7.5 points"
    assert set(texts) == {
        "sq-mst",
        "aim-sq",
        "margin-ours",
        "margin-authors-pipeline",
        "margin-paper",
        "cap-fnr",
        "black-n",
        "black-pos",
    }
    assert int(texts["black-n"]) > int(texts["black-pos"]) > 0
    assert texts["sq-mst"].endswith("of 5 budgets (0 with an interval above 0)")
    # New Mexico's base rate is the paper's population's, far below the NY sample's.
    assert 0.35 < b.base_rate(stored, dataset="ACSEmployment-NM") < 0.45
    verdicts = spending_checks.fidelity_check(stored)
    assert len(verdicts) == 25
    assert b.fidelity_text(verdicts).startswith("MST is closer")


def test_stand_ins_side_by_side(stored):
    ny = load_stored("spending_e2e", "paper").table
    frame = b.stand_in_frame(
        {"NY": (ny, "ACSEmployment-NY-sample"), "NM": (stored, "ACSEmployment-NM")}
    )
    assert frame["seeds"].tolist() == [10, 2]
    assert float(frame.loc[0, "base rate"]) > 0.55
