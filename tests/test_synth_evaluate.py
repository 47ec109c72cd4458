"""Tests for dpnotes.synth.evaluate and the fixed split of the employment data."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from dpnotes.data.employment import (
    EMPLOYMENT_DOMAIN,
    EMPLOYMENT_GROUPINGS,
    EMPLOYMENT_LABEL,
    split_employment,
)
from dpnotes.synth.evaluate import (
    classifier_metrics,
    evaluate_synthetic,
    group_code,
    group_keys,
    make_classifier,
    mean_parity_error,
    one_hot_features,
    workload_metrics,
)
from dpnotes.synth.stratified import strata_of


def employment_like(n: int, seed: int) -> pd.DataFrame:
    """Random codes of the employment domain; the label follows SCHL and SEX."""
    r = np.random.default_rng(seed)
    df = pd.DataFrame({a: r.integers(0, s, n) for a, s in EMPLOYMENT_DOMAIN.items()})
    p = 0.2 + 0.12 * df["SCHL"] + 0.1 * df["SEX"]
    df[EMPLOYMENT_LABEL] = (r.random(n) < p).astype(np.int64)
    return df


TRAIN = employment_like(600, 0)
TEST = employment_like(300, 1)


def test_group_keys_number_groups_as_strata_of() -> None:
    by = ["SEX", "RAC1P"]
    keys = group_keys(TRAIN, by)
    strata = strata_of(EMPLOYMENT_DOMAIN, by)
    for j in range(0, len(TRAIN), 37):
        row = tuple(int(TRAIN[a].iloc[j]) for a in by)
        assert tuple(int(c) for c in np.atleast_1d(strata[keys[j]])) == row
    assert group_keys(TRAIN, ["SEX"], domain={"SEX": 2}).max() <= 1


def test_group_code() -> None:
    assert group_code(3) == "3"
    assert group_code((1, 0)) == "1-0"
    assert group_code(np.array([2, 8])) == "2-8"


def test_one_hot_features_have_fixed_columns() -> None:
    width = sum(s for a, s in EMPLOYMENT_DOMAIN.items() if a != EMPLOYMENT_LABEL)
    full = one_hot_features(TRAIN)
    assert full.shape == (len(TRAIN), width)
    np.testing.assert_array_equal(full.sum(axis=1), len(EMPLOYMENT_DOMAIN) - 1)
    # A table that lacks most values still gets every column.
    one = one_hot_features(TRAIN.iloc[:1])
    assert one.shape == (1, width)
    np.testing.assert_array_equal(one[0], full[0])


def test_make_classifier_checks_the_kind() -> None:
    assert type(make_classifier("logistic", 0)).__name__ == "LogisticRegression"
    assert make_classifier("boosting", 7).random_state == 7
    with pytest.raises(ValueError, match="classifier"):
        make_classifier("forest", 0)


def test_mean_parity_error_is_zero_for_a_copy_and_grows_with_bias() -> None:
    by = ["SEX"]
    strata = strata_of(EMPLOYMENT_DOMAIN, by)
    assert mean_parity_error(TRAIN, TRAIN, by, strata) == pytest.approx(0.0, abs=1e-12)
    shifted = TRAIN.copy()
    women = shifted["SEX"] == 1
    shifted.loc[women, "SCHL"] = np.minimum(shifted.loc[women, "SCHL"] + 2, 4)
    assert mean_parity_error(TRAIN, shifted, by, strata) > 0.01


def test_evaluate_synthetic_rows_for_a_copy_of_the_training_data() -> None:
    rows = evaluate_synthetic(TRAIN, TEST, TRAIN, classifiers=["logistic"], seed=0)
    assert list(rows.columns) == ["metric", "grouping", "group", "value"]
    overall = rows[(rows.metric == "workload_error") & (rows.grouping == "overall")]
    assert overall["value"].tolist() == [0.0]
    assert set(rows.grouping) == {"overall", *EMPLOYMENT_GROUPINGS}
    mpe = rows[rows.metric == "mean_parity_error"]["value"]
    np.testing.assert_allclose(mpe, 0.0, atol=1e-12)
    # Per group: one workload error and one accuracy per stratum of each grouping.
    for grouping, by in EMPLOYMENT_GROUPINGS.items():
        k = len(strata_of(EMPLOYMENT_DOMAIN, by))
        sel = rows[(rows.grouping == grouping) & (rows.metric == "workload_error")]
        assert len(sel) == k
    acc = rows[(rows.metric == "logistic:accuracy") & (rows.grouping == "overall")]
    assert len(acc) == 1 and 0.5 < float(acc["value"].iloc[0]) <= 1.0
    for m in ("dp_difference", "dp_ratio", "fnr_difference"):
        assert (rows.metric == f"logistic:{m}").sum() == len(EMPLOYMENT_GROUPINGS)


def test_evaluate_synthetic_is_the_two_parts_in_order() -> None:
    synth = employment_like(400, 2)
    whole = evaluate_synthetic(TRAIN, TEST, synth, classifiers=["logistic"], seed=3)
    parts = pd.concat(
        [
            workload_metrics(TRAIN, synth),
            classifier_metrics(synth, TEST, classifiers=["logistic"], seed=3),
        ],
        ignore_index=True,
    )
    pd.testing.assert_frame_equal(whole, parts, check_exact=True)


def test_a_synthetic_table_with_one_label_value_predicts_it() -> None:
    synth = TRAIN.assign(**{EMPLOYMENT_LABEL: 1})
    rows = classifier_metrics(synth, TEST, classifiers=["logistic", "boosting"])
    acc = rows[(rows.metric == "boosting:accuracy") & (rows.grouping == "overall")]
    assert float(acc["value"].iloc[0]) == pytest.approx(TEST[EMPLOYMENT_LABEL].mean())


def test_other_groupings_and_domains() -> None:
    domain = {"A": 2, "B": 3, "Y": 2}
    r = np.random.default_rng(4)
    df = pd.DataFrame({a: r.integers(0, s, 200) for a, s in domain.items()})
    rows = evaluate_synthetic(
        df,
        df,
        df,
        classifiers=["logistic"],
        domain=domain,
        groupings={"A": ["A"]},
        label="Y",
    )
    assert set(rows.grouping) == {"overall", "A"}
    assert (rows.metric == "logistic:accuracy").sum() == 1 + 2


@pytest.mark.data
@pytest.mark.skipif(
    not os.environ.get("DPNOTES_DATA_DIR"), reason="set DPNOTES_DATA_DIR"
)
def test_split_employment_is_fixed_and_disjoint() -> None:
    train, test = split_employment("NY-sample", rows=1000)
    again, _ = split_employment("NY-sample", rows=1000)
    pd.testing.assert_frame_equal(train, again)
    assert (len(train), len(test)) == (800, 200)
    assert list(train.index) == list(range(800))
    full_train, full_test = split_employment("NY-sample")
    assert len(full_train) + len(full_test) == 20000
    assert len(full_test) == 4000
    with pytest.raises(ValueError, match="test_share"):
        split_employment("NY-sample", test_share=1.0)
