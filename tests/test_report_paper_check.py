"""The paper / authors' files / ours tables and their verdict counts."""

from __future__ import annotations

import pandas as pd
import pytest

from dpnotes.report import (
    VERDICTS,
    PaperCheck,
    paper_check_table,
    verdict_counts,
    verdict_counts_text,
)


def test_numbers_are_judged_by_the_tolerance():
    assert PaperCheck("x", 0.8, 0.79, tolerance=0.02).outcome == "reproduces"
    assert PaperCheck("x", 0.8, 0.75, tolerance=0.02).outcome == "differs"
    assert PaperCheck("x", 0.8, None, tolerance=0.02).outcome == "not comparable"


def test_a_table_shows_claims_numbers_and_the_authors_column():
    t = paper_check_table(
        [
            PaperCheck("a", 0.13, 0.2566, tolerance=0.005, decimals=2),
            PaperCheck(
                "b",
                "stratifying lowers it",
                "2 of 54",
                authors="26 of 54",
                verdict="differs",
                note="fewer than half",
            ),
            {
                "item": "c",
                "paper": 0.8,
                "ours": 0.75,
                "sd": 0.01,
                "n_seeds": 5,
                "verdict": "not comparable",
                "note": "another population",
            },
        ]
    )
    assert list(t.columns) == [
        "item",
        "paper",
        "authors' files",
        "ours",
        "verdict",
        "why",
    ]
    assert t.loc[0, ["paper", "ours", "verdict"]].tolist() == [
        "0.13",
        "0.26",
        "differs",
    ]
    assert (
        t.loc[1, "authors' files"] == "26 of 54" and t.loc[0, "authors' files"] == "–"
    )
    assert t.loc[2, "ours"] == "0.750 ± 0.010 (5 seeds)"
    assert verdict_counts(t) == {
        "reproduces": 0,
        "differs": 2,
        "inconclusive": 0,
        "degenerate": 0,
        "not comparable": 1,
    }
    assert verdict_counts_text(t) == (
        "of 3 comparisons, 2 differ and 1 is not comparable"
    )


def test_the_authors_column_is_left_out_when_empty():
    t = paper_check_table([PaperCheck("a", 1.0, 1.0, tolerance=0.0)])
    assert "authors' files" not in t.columns and t.loc[0, "verdict"] == "reproduces"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"item": "", "paper": 1.0, "ours": 1.0, "tolerance": 0.1}, TypeError, "item"),
        (
            {"item": "x", "paper": "a claim", "ours": 1.0, "tolerance": 0.1},
            ValueError,
            "tolerance compares two numbers",
        ),
        (
            {"item": "x", "paper": 1.0, "ours": 1.0, "verdict": "differs"},
            ValueError,
            "needs a note",
        ),
        ({"item": "x", "paper": 1.0, "ours": 1.0}, ValueError, "either a tolerance"),
        (
            {"item": "x", "paper": 1.0, "ours": 1.0, "verdict": "maybe"},
            ValueError,
            "verdict must be one of",
        ),
        (
            {"item": "x", "paper": [1.0], "ours": 1.0, "tolerance": 0.1},
            TypeError,
            "real number",
        ),
        (
            {"item": "x", "paper": 1.0, "ours": 1.0, "sd": 0.1, "tolerance": 0.1},
            ValueError,
            "single seed",
        ),
    ],
)
def test_bad_rows_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        PaperCheck(**kwargs)


def test_bad_tables_are_refused():
    with pytest.raises(ValueError, match="no rows"):
        paper_check_table([])
    with pytest.raises(ValueError, match="unknown fields"):
        paper_check_table([{"item": "x", "paper": 1, "ours": 1, "tol": 1}])
    with pytest.raises(TypeError, match="PaperCheck or a mapping"):
        paper_check_table([("x", 1, 1)])
    with pytest.raises(ValueError, match="verdict"):
        verdict_counts(pd.DataFrame({"x": [1]}))
    with pytest.raises(ValueError, match="unknown verdicts"):
        verdict_counts(pd.DataFrame({"verdict": ["fine"]}))
    assert tuple(verdict_counts(pd.DataFrame({"verdict": []}))) == VERDICTS
