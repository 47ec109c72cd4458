"""The Verdict type: intervals, classes, tallies and the sentences made from counts."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpnotes.findings.verdict import (
    Estimate,
    Tally,
    compare_direction,
    compare_value,
    degenerate_reason,
    difference,
    estimate,
    one_class_seeds,
    tally,
    values_of_seeds,
    verdict_frame,
    without_shared_reason,
)
from dpnotes.report import VERDICTS, count_of, verdict_counts, verdict_counts_text

# ---------------------------------------------------------------------- the interval


def test_seed_spread_alone_is_students_t_interval():
    values = [0.61, 0.64, 0.59, 0.66, 0.62]
    e = estimate(values)  # no test count: the seed spread only
    low, high = stats.t.interval(
        0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values)
    )
    assert e.low == pytest.approx(low) and e.high == pytest.approx(high)


def test_one_seed_counts_the_test_error_only():
    e = estimate([0.5], n_test=36)
    assert e.sd is None and not e.seed_spread_counted
    p = (0.5 * 36 + 2) / 40  # Agresti–Coull
    assert e.half_width == pytest.approx(1.959964 * math.sqrt(p * (1 - p) / 40))


def test_test_error_widens_the_interval_and_small_groups_more():
    seeds = [0.70, 0.72, 0.71]
    no_test = estimate(seeds).half_width
    big, small = (estimate(seeds, n_test=n).half_width for n in (10_000, 17))
    assert no_test < big < small
    # A test group of 17 records: about 10 points of sampling error, as the issue says.
    assert 0.18 < estimate([0.7], n_test=17).half_width < 0.22


def test_accuracy_of_one_still_has_an_error():
    assert estimate([1.0, 1.0], n_test=40).half_width > 0


def test_interval_covers_the_truth_about_95_percent_of_the_time():
    # Monte Carlo: a model of true accuracy 0.7 whose seeds vary by sd 0.02, scored on
    # a fresh test set of 200 records; our interval should cover 0.7 close to 95%.
    rng = np.random.default_rng(0)
    hits, trials, seeds, n = 0, 2000, 5, 200
    for _ in range(trials):
        test_shift = rng.binomial(n, 0.7) / n - 0.7  # shared by every seed
        values = np.clip(0.7 + test_shift + rng.normal(0, 0.02, seeds), 0, 1)
        hits += estimate(values, n_test=n).contains(0.7)
    assert 0.92 < hits / trials < 0.98


def test_difference_pairs_seeds_and_adds_test_errors():
    a, b = [0.70, 0.74, 0.72], [0.60, 0.65, 0.61]
    d = difference(a, b, n_test_a=100, n_test_b=400)
    assert d.values == pytest.approx((0.10, 0.09, 0.11))
    se_a, se_b = (estimate(v, n_test=n).se_test for v, n in ((a, 100), (b, 400)))
    assert d.se_test == pytest.approx(math.hypot(se_a, se_b))
    assert d.n_test == 100
    with pytest.raises(ValueError, match="same seeds"):
        difference([0.1, 0.2], [0.3])


@pytest.mark.parametrize(
    ("values", "kwargs", "match"),
    [
        ([], {}, "empty"),
        ([0.5, math.nan], {}, "non-finite"),
        ([0.5, math.inf], {}, "non-finite"),
        ([55.0], {"n_test": 100}, r"\[0, 1\]"),
        ([0.5], {"n_test": 0}, "at least 1"),
        ([0.5], {"n_test": 10, "proportion": False}, "proportion"),
    ],
)
def test_bad_estimates_are_refused(values, kwargs, match):
    with pytest.raises(ValueError, match=match):
        estimate(values, **kwargs)


def test_wrong_types_are_refused():
    with pytest.raises(TypeError):
        estimate("0.5")
    with pytest.raises(TypeError):
        estimate([True])
    with pytest.raises(TypeError):
        compare_value("x", 0.5, [0.5])


# ---------------------------------------------------------------------- the classes


def test_value_classes():
    tight = estimate([0.800, 0.801, 0.799], n_test=100_000)
    wide = estimate([0.60, 0.80, 0.70], n_test=36)
    assert compare_value("a", 0.81, tight, tolerance=0.02).outcome == "reproduces"
    assert compare_value("a", 0.90, tight, tolerance=0.02).outcome == "differs"
    assert compare_value("a", 0.85, wide, tolerance=0.02).outcome == "inconclusive"
    assert compare_value("a", 0.30, wide, tolerance=0.02).outcome == "differs"
    # Without a tolerance, inside the interval reproduces.
    assert compare_value("a", 0.85, wide).outcome == "reproduces"
    assert compare_value("a", None, tight).outcome == "not comparable"
    assert compare_value("a", math.nan, tight).outcome == "not comparable"
    v = compare_value("a", 0.5, None, missing="California is not available offline")
    assert (v.outcome, v.reason) == (
        "not comparable",
        "California is not available offline",
    )


def test_degenerate_is_detected_from_values_and_rates():
    frozen = [0.67825] * 10
    assert "do not move" in degenerate_reason(frozen)
    assert degenerate_reason(frozen, deterministic=True) == ""
    assert degenerate_reason([0.67825]) == ""  # one seed says nothing about movement
    n_one = one_class_seeds(fnr=[0.0, 0.0, 0.2], fpr=[1.0, 0.93, 0.4])
    assert n_one == 1
    assert degenerate_reason([0.5, 0.6, 0.7], one_class=n_one) == (
        "predicts one class in 1 of 3 seeds"
    )
    v = compare_value(
        "SQ sd", 0.67, estimate(frozen), degenerate=degenerate_reason(frozen)
    )
    assert v.outcome == "degenerate"
    with pytest.raises(ValueError):
        degenerate_reason([0.5], one_class=2)


def test_direction_classes():
    up = difference([0.70, 0.72, 0.71], [0.60, 0.61, 0.62])
    down = difference([0.60, 0.61, 0.62], [0.70, 0.72, 0.71])
    near = difference([0.700, 0.710], [0.705, 0.700], n_test_a=500, n_test_b=500)
    assert compare_direction("q", "A above B", up).outcome == "reproduces"
    assert compare_direction("q", "A above B", down).outcome == "differs"
    assert compare_direction("q", "A above B", near).outcome == "inconclusive"
    assert compare_direction("q", "A above B", None).outcome == "not comparable"


def test_a_verdict_needs_a_reason_and_a_known_class():
    from dpnotes.findings.verdict import Verdict

    with pytest.raises(ValueError, match="reason"):
        Verdict("q", 0.5, None, "differs", "")
    with pytest.raises(ValueError, match="outcome"):
        Verdict("q", 0.5, None, "maybe", "why")


def test_verdict_frame_shows_interval_seeds_and_test_count():
    rows = [
        compare_value("black accuracy", 0.77, estimate([0.7, 0.8], n_test=36)),
        compare_value("white accuracy", 0.80, estimate([0.79, 0.81], n_test=3000)),
    ]
    t = verdict_frame(rows)
    assert list(t.columns) == [
        "quantity",
        "paper",
        "ours: mean ± sd [95% interval]",
        "seeds",
        "test n",
        "verdict",
        "why",
    ]
    # No-break spaces inside each number group: a narrow column wraps between them.
    assert t.loc[0, "ours: mean ± sd [95% interval]"].count(" ") == 1
    assert t["test n"].tolist() == ["36", "3,000"]
    assert t["seeds"].tolist() == [2, 2]
    no_counts = verdict_frame([compare_value("ε", 6.55, estimate([6.55]))])
    assert "test n" not in no_counts.columns
    with pytest.raises(ValueError):
        verdict_frame([])


def test_a_claim_verdict_shows_our_tally_and_the_authors_files():
    from dpnotes.findings.verdict import Verdict

    rows = [
        Verdict(
            "Fig. 5: stratifying helps",
            None,
            None,
            "differs",
            "loses most comparisons",
            claim="stratifying lowers the error",
            ours_text="9 of 108 (2 beyond doubt)",
            authors="26 of 54",
        ),
        compare_value("ε", 6.55, estimate([6.55])),
    ]
    t = verdict_frame(rows)
    assert list(t.columns[:4]) == [
        "quantity",
        "paper",
        "authors' files",
        "ours: mean ± sd [95% interval]",
    ]
    assert t.loc[0, "ours: mean ± sd [95% interval]"] == "9 of 108 (2 beyond doubt)"
    assert t["authors' files"].tolist() == ["26 of 54", "–"]
    assert t.loc[0, "paper"] == "stratifying lowers the error"
    # Without the authors' files on any row, the column goes.
    assert "authors' files" not in verdict_frame(rows[1:]).columns
    with pytest.raises(TypeError, match="ours_text"):
        Verdict("q", None, None, "reproduces", "", ours_text=3)


# ------------------------------------------------------------- tallies and sentences


def test_tally_counts_raw_and_beyond_doubt():
    diffs = [
        difference([0.7, 0.71], [0.6, 0.6]),  # clear win
        difference([0.7, 0.71], [0.705, 0.70]),  # raw win, interval holds 0
        difference([0.5, 0.51], [0.7, 0.71]),  # clear loss
    ]
    t = tally(diffs)
    assert t == Tally(total=3, wins=2, clear_wins=1, clear_losses=1)
    assert t.undecided == 1
    assert str(t) == "2 of 3 (1 beyond doubt)"
    assert tally([]) == Tally(0, 0, 0, 0)


@pytest.mark.parametrize(
    ("k", "n", "text"),
    [
        (0, 16, "none of the 16 losses"),
        (1, 16, "1 of 16 losses"),
        (16, 16, "all 16 losses"),
        (1, 1, "the one loss"),
        (0, 1, "not the one loss"),
        (0, 0, "no losses"),
    ],
)
def test_count_of_is_right_at_zero_one_and_all(k, n, text):
    assert count_of(k, n, "loss", "losses") == text


def test_count_of_refuses_impossible_counts():
    with pytest.raises(ValueError):
        count_of(3, 2, "seed")
    with pytest.raises(TypeError):
        count_of(-1, 2, "seed")


@pytest.mark.parametrize(
    ("verdicts", "text"),
    [
        (["reproduces"], "the one comparison reproduces"),
        (["differs"] * 3, "all 3 comparisons differ"),
        (["reproduces", "differs"], "of 2 comparisons, 1 reproduces and 1 differs"),
        (
            ["reproduces"] * 3 + ["differs"] * 10 + ["not comparable"] * 4,
            "of 17 comparisons, 3 reproduce, 10 differ and 4 are not comparable",
        ),
        ([], "no comparison yet"),
    ],
)
def test_verdict_counts_text_reads_cleanly(verdicts, text):
    assert verdict_counts_text(pd.DataFrame({"verdict": verdicts})) == text


def test_verdict_counts_include_zeros_and_refuse_unknown():
    counts = verdict_counts(pd.DataFrame({"verdict": ["differs"]}))
    assert list(counts) == list(VERDICTS) and counts["differs"] == 1
    with pytest.raises(ValueError, match="unknown"):
        verdict_counts(pd.DataFrame({"verdict": ["maybe"]}))


def test_values_of_seeds_names_missing_seeds():
    s = pd.Series({0: 0.5, 1: 0.6})
    assert values_of_seeds(s, [1, 0]).tolist() == [0.6, 0.5]
    with pytest.raises(ValueError, match=r"seeds \[2\]"):
        values_of_seeds(s, [0, 1, 2])


def test_estimate_is_frozen():
    e = Estimate((0.5, 0.6))
    with pytest.raises(AttributeError):
        e.values = (0.1,)  # type: ignore[misc]


def test_verdict_columns_put_the_interval_beside_each_run():
    from dpnotes.findings.verdict import verdict_columns

    a = [compare_value("acc", 0.8, estimate([0.79, 0.80, 0.81], n_test=1000))]
    b = [compare_value("acc", 0.8, estimate([0.6, 0.62, 0.61], n_test=1000))]
    t = verdict_columns({"text loop": a, "reference loop": b})
    assert t.loc[0, "quantity"] == "acc (n\u00a0=\u00a01,000)"
    assert list(t.columns) == [
        "quantity",
        "paper",
        "text loop",
        "text loop: verdict",
        "reference loop",
        "reference loop: verdict",
    ]
    assert t.loc[0, "text loop"].startswith("0.800\u00a0±\u00a00.010 [")
    assert t.loc[0, "reference loop: verdict"] == "differs"
    with pytest.raises(ValueError, match="other quantities"):
        verdict_columns({"a": a, "b": [compare_value("loss", 0.8, None)]})
    with pytest.raises(ValueError, match="own columns"):
        verdict_columns({"paper": a})
    v = a[0]
    assert (v.mean, v.n_seeds) == (pytest.approx(0.8), 3)
    assert compare_value("x", 1.0, None).n_seeds == 0


def test_a_proportions_interval_stays_within_zero_and_one():
    e = estimate([0.99, 1.0, 0.995], n_test=200)
    assert e.high == 1.0 and e.low < e.mean
    assert estimate([0.0, 0.01], n_test=50).low == 0.0
    # A difference of proportions is not one: its interval is not cut.
    assert difference([0.99, 1.0], [0.0, 0.01], n_test_a=50, n_test_b=50).high > 1.0


def test_a_reason_every_row_shares_is_said_once():
    frame = pd.DataFrame({"why": ["New York; outside", "New York; inside"]})
    rows, said = without_shared_reason(frame, "New York")
    assert rows["why"].tolist() == ["outside", "inside"]
    assert said == "Every row's reason begins: New York."
    # Not every row: the table unchanged, nothing to say.
    mixed = pd.DataFrame({"why": ["New York; outside", "degenerate"]})
    same, nothing = without_shared_reason(mixed, "New York")
    assert same is mixed and nothing == ""
    assert without_shared_reason(frame, "")[1] == ""
