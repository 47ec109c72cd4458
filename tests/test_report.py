"""The chapters' helpers: formats, seeds, captions, tables and verdicts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpnotes import report

# ------------------------------------------------------------------------------ formats


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (4, "4.00"),
        (0.73, "0.730"),
        (0.7304, "0.730"),
        (12.345, "12.3"),
        (-0.5, "-0.500"),
        (0.0123456, "0.0123"),
        (100.0, "100"),
        (999.4, "999"),
        (999.6, "1,000"),  # rounds up to four digits: written whole, not as 1.00e+03
        (1000, "1,000"),
        (12345.6, "12,346"),
        (np.float64(0.25), "0.250"),
        (float("nan"), "–"),
    ],
)
def test_fmt_gives_three_significant_digits(x, text):
    assert report.fmt(x) == text


def test_fmt_digits_and_bad_input():
    assert report.fmt(0.123456, digits=2) == "0.12"
    assert report.fmt(123.456, digits=5) == "123.46"
    with pytest.raises(ValueError, match="digits"):
        report.fmt(1.0, digits=0)
    with pytest.raises(TypeError, match="real number"):
        report.fmt("0.5")


def test_mean_sd_strings():
    assert report.mean_sd(0.78412, 0.0021) == "0.784 ± 0.002"
    assert report.mean_sd(0.78412, float("nan")) == "0.784"
    assert report.mean_sd(0.78412) == "0.784"
    assert report.mean_sd(0.5, 0.01, decimals=2) == "0.50 ± 0.01"
    assert report.mean_sd(3.14159, 0.2, decimals=None) == "3.142 ± 0.200"
    assert report.mean_sd(42.25, 1.25, decimals=None) == "42.2 ± 1.2"
    assert report.mean_sd(420.0, 12.5, decimals=None) == "420 ± 12"
    with pytest.raises(ValueError, match=">= 0"):
        report.mean_sd(1.0, -0.1)
    with pytest.raises(ValueError, match="decimals"):
        report.mean_sd(1.0, 0.1, decimals=-1)
    with pytest.raises(TypeError, match="mean"):
        report.mean_sd(None, 0.1)


def test_decimals_for_boundaries():
    assert [report.decimals_for(x) for x in (9.99, 10.0, 99.9, 100.0)] == [3, 1, 1, 0]


def test_plural():
    assert report.plural(1, "near tie") == "1 near tie"
    assert report.plural(0, "near tie") == "0 near ties"
    assert report.plural(2, "data set", "data sets") == "2 data sets"
    with pytest.raises(TypeError, match="integer"):
        report.plural(1.0, "seed")


# --------------------------------------------------------------------- seeds, captions


def test_seeds_text():
    assert report.seeds_text([0]) == "seed 0"
    assert report.seeds_text((2, 0, 1)) == "seeds 0, 1, 2"
    assert report.seeds_text(pd.Series([1, 0, 1])) == "seeds 0, 1"
    assert report.seeds_text(np.array([3, 4])) == "seeds 3, 4"
    assert report.seeds_text([0, 1], mean_over=True) == "mean over seeds 0, 1"
    assert report.seeds_text(range(10)) == "seeds 0–9"
    assert report.seeds_text([9, 0, 1, 2, 3, 5, 6, 7, 8]) == "seeds 0–3, 5–9"
    assert report.seeds_text([0], mean_over=True) == "seed 0"
    with pytest.raises(ValueError, match="empty"):
        report.seeds_text([])
    with pytest.raises(TypeError, match="integers"):
        report.seeds_text([0.5])
    with pytest.raises(TypeError, match="iterable"):
        report.seeds_text(3)


def test_seeds_caption_and_spread():
    assert report.seeds_caption("New Mexico 2018", "quick", [0]) == (
        "New Mexico 2018; profile quick, seed 0; a single seed, so no error bars."
    )
    assert report.seeds_caption("NY", "paper", [1, 0]) == (
        "NY; profile paper, seeds 0, 1; mean ± sd over seeds."
    )
    with pytest.raises(ValueError, match="at least 1"):
        report.spread_text(0)


def test_labels_cover_the_strata():
    assert set(report.STRATA) == set(report.STRATA_LABEL)
    assert set(report.STRATA_PROSE) == set(report.STRATA) - {"vanilla"}
    assert set(report.ACS_DATASETS) == set(report.ACS_SHORT) == set(report.ACS_IN_PROSE)


# ------------------------------------------------------------------------------ tables


def test_markdown_table_escapes_and_formats():
    text = report.markdown_table(
        pd.DataFrame({"file": ["a|b.csv"], "rows": [3]}), code_columns=["file"]
    )
    lines = text.splitlines()
    assert lines[0] == "| file | rows |"
    assert lines[1] == "|---|---|"
    assert lines[2] == "| `a\\|b.csv` | 3 |"
    spread = report.markdown_table(
        pd.DataFrame({"acc": ["0.784 ± 0.002 [0.78, 0.79]", "SQ ± MST"]})
    )
    # A number cell breaks only before its interval; a text cell breaks before a ±,
    # never after it.
    assert spread.splitlines()[2] == "| 0.784\u00a0±\u00a00.002 [0.78,\u00a00.79] |"
    assert spread.splitlines()[3] == "| SQ ±\u00a0MST |", "no line ends in ±"
    ages = report.markdown_table(pd.DataFrame({"ages": ["17–89"]}))
    assert ages.splitlines()[2] == "| 17–\u206089 |"
    with pytest.raises(TypeError, match=r"pd\.DataFrame"):
        report.markdown_table([{"a": 1}])


# ----------------------------------------------------------------------------- verdicts


def test_better_at_lists_settings_per_group_and_averages_repeats():
    rows = pd.DataFrame(
        {
            "variable": ["A"] * 6 + ["B"] * 4,
            "k": [2, 2, 2, 4, 4, 4, 2, 2, 4, 4],
            "method": ["m", "m", "b", "m", "b", "b", "m", "b", "m", "b"],
            # A, k=2: m averages (1 + 5) / 2 = 3 > 2, so b wins; k=4: 1 < 2.5.
            "err": [1.0, 5.0, 2.0, 1.0, 2.0, 3.0, 0.5, 1.0, 7.0, 1.0],
        }
    )
    out = report.better_at(
        rows, x="k", value="err", method="m", baseline="b", by="variable"
    )
    assert out["variable"].tolist() == ["A", "B"]
    assert out["better at"].tolist() == [[4], [2]]
    assert out["compared"].tolist() == [2, 2]
    higher = report.better_at(
        rows, x="k", value="err", method="m", baseline="b", by="variable", lower=False
    )
    assert higher["better at"].tolist() == [[2], [4]]
    assert all(isinstance(k, int) for k in out["better at"].iloc[0])


def test_better_at_skips_settings_one_method_lacks_and_refuses_bad_input():
    rows = pd.DataFrame(
        {"method": ["m", "b", "m"], "k": [2, 2, 4], "err": [1.0, 2.0, 0.1]}
    )
    out = report.better_at(rows, x="k", value="err", method="m", baseline="b")
    assert out.iloc[0].tolist() == [[2], 1]
    with pytest.raises(ValueError, match="no rows of method 'c'"):
        report.better_at(rows, x="k", value="err", method="c", baseline="b")
    with pytest.raises(ValueError, match="lack the columns"):
        report.better_at(rows, x="k", value="err", method="m", baseline="b", by="v")


def test_match_groups_by_size_swaps_and_refuses_ambiguity():
    matched = report.match_groups_by_size(
        {"male": 30273, "female": 30147}, {"M": 30147, "F": 30273}
    )
    assert matched == {"M": "female", "F": "male"}
    with pytest.raises(ValueError, match="0 of our groups"):
        report.match_groups_by_size({"a": 1, "b": 2}, {"M": 3})
    with pytest.raises(ValueError, match="2 of our groups"):
        report.match_groups_by_size({"a": 5, "b": 5}, {"M": 5})


def test_e_to_the_writes_superscripts_and_refuses_non_integers():
    assert report.e_to_the(4) == "e⁴" and report.e_to_the(np.int64(-2)) == "e⁻²"
    with pytest.raises(TypeError, match="integer"):
        report.e_to_the(2.0)
    with pytest.raises(TypeError, match="integer"):
        report.e_to_the(True)
