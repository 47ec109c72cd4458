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
    AUTHORS_GROUPS,
    classifier_metrics,
    evaluate_synthetic,
    group_code,
    group_keys,
    make_classifier,
    max_mean_error,
    mean_parity_error,
    mean_parity_error_authors,
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


# --- The authors' scoring of the means (parity="authors") and Figure 7a -------------


def authors_reference(real: pd.DataFrame, synth: pd.DataFrame, by: list[str]) -> float:
    """The authors' parity error, written as their code does it, with pandas groupby.

    ``parity_error_synth_data`` and ``mean_f`` of
    ``generate_results_from_synth_data.py`` and the aggregation of
    ``plots_for_synths.ipynb`` (lurosenb/stratify_dp): rows of the 12 groups only,
    codes from 0, a vector of per-variable errors, summed with the NaN entries left
    out.
    """
    keep = {tuple(g) for g in AUTHORS_GROUPS}

    def kept(df):
        return df[[(s, r) in keep for s, r in zip(df.SEX, df.RAC1P, strict=True)]]

    real, synth = kept(real), kept(synth)

    def f(df):
        return df.astype(float).mean().values

    real_groups = dict(iter(real.groupby(by)))
    synth_groups = dict(iter(synth.groupby(by)))
    with np.errstate(invalid="ignore", divide="ignore"):
        beta = (1 / 12) * (np.abs(f(real) - f(synth)) / f(real))
        for key, part in real_groups.items():
            t = f(part)
            s = f(synth_groups[key]) if key in synth_groups else f(synth)
            beta = beta + np.abs(t - s) / t
    return float(np.sum(beta[np.isfinite(beta)]))


@pytest.mark.parametrize("by", [["SEX"], ["RAC1P"], ["SEX", "RAC1P"]])
def test_authors_parity_error_matches_their_code(by) -> None:
    synth = employment_like(500, 5)
    assert mean_parity_error_authors(TRAIN, TRAIN, by) == pytest.approx(0, abs=1e-12)
    expected = authors_reference(TRAIN, synth, by)
    assert mean_parity_error_authors(TRAIN, synth, by) == pytest.approx(expected)
    assert expected > 0


def test_authors_parity_error_counts_only_the_twelve_groups() -> None:
    small_race = TRAIN["RAC1P"].isin([3, 4, 6])  # not among the authors' groups
    assert small_race.any()
    synth = employment_like(500, 6)
    changed = synth.copy()
    rows = changed["RAC1P"].isin([3, 4, 6])
    changed.loc[rows, "SCHL"] = 4 - changed.loc[rows, "SCHL"]
    assert not changed.equals(synth)
    for by in (["SEX"], ["SEX", "RAC1P"]):
        assert mean_parity_error_authors(TRAIN, changed, by) == pytest.approx(
            mean_parity_error_authors(TRAIN, synth, by)
        )
        # Our convention scores every group, so the same change moves it.
        strata = strata_of(EMPLOYMENT_DOMAIN, by)
        assert mean_parity_error(TRAIN, changed, by, strata) != pytest.approx(
            mean_parity_error(TRAIN, synth, by, strata)
        )


def test_authors_parity_error_leaves_out_variables_without_a_relative_error() -> None:
    # ESP is 0 in every real row: 0/0 where the synthetic rows agree (left out as
    # NaN, as the authors' plotting code does) and x/0 where they do not (infinite,
    # which their stored results never are; left out as well).
    real = TRAIN.assign(ESP=0)
    synth = employment_like(500, 7)
    value = mean_parity_error_authors(real, synth, ["SEX"])
    assert np.isfinite(value)
    assert value == pytest.approx(
        mean_parity_error_authors(real, synth.assign(ESP=0), ["SEX"])
    )
    # The sum over variables, not the mean: a second biased variable adds its error.
    one = synth.assign(ESP=0)
    two = one.assign(MIL=np.minimum(one["MIL"] + 1, 4))
    assert mean_parity_error_authors(real, two, ["SEX"]) > mean_parity_error_authors(
        real, one, ["SEX"]
    )


def test_authors_parity_error_checks_its_input() -> None:
    with pytest.raises(ValueError, match="subset of the scope"):
        mean_parity_error_authors(TRAIN, TRAIN, ["AGEP"])
    with pytest.raises(ValueError, match="subset of the scope"):
        mean_parity_error_authors(TRAIN, TRAIN, [])
    with pytest.raises(ValueError, match="tuples of 2 codes"):
        mean_parity_error_authors(TRAIN, TRAIN, ["SEX"], groups=[(0,)])
    with pytest.raises(ValueError, match="omega"):
        mean_parity_error_authors(TRAIN, TRAIN, ["SEX"], omega=0.0)


def brute_max_error(real, synth, by, offset):
    worst = np.nan
    for key, part in real.groupby(by):
        other = synth
        for a, v in zip(by, np.atleast_1d(key), strict=True):
            other = other[other[a] == v]
        if other.empty:
            continue
        for attr in EMPLOYMENT_DOMAIN:
            t = part[attr].mean() + offset
            with np.errstate(invalid="ignore", divide="ignore"):
                rel = abs(t - (other[attr].mean() + offset)) / abs(t)
            if np.isfinite(rel) and not rel <= worst:
                worst = rel
    return worst


@pytest.mark.parametrize("by", [["SEX"], ["RAC1P"], ["SEX", "RAC1P"]])
def test_max_mean_error_is_the_largest_relative_error_of_a_group_mean(by) -> None:
    synth = employment_like(300, 8)
    assert max_mean_error(TRAIN, TRAIN, by) == 0.0
    assert max_mean_error(TRAIN, synth, by) == pytest.approx(
        brute_max_error(TRAIN, synth, by, 1.0)
    )
    keep = [
        (s, r) in set(AUTHORS_GROUPS)
        for s, r in zip(TRAIN.SEX, TRAIN.RAC1P, strict=True)
    ]
    keep_s = [
        (s, r) in set(AUTHORS_GROUPS)
        for s, r in zip(synth.SEX, synth.RAC1P, strict=True)
    ]
    assert max_mean_error(TRAIN, synth, by, convention="authors") == pytest.approx(
        brute_max_error(TRAIN[keep], synth[keep_s], by, 0.0)
    )


def test_max_mean_error_checks_its_input() -> None:
    with pytest.raises(ValueError, match="convention"):
        max_mean_error(TRAIN, TRAIN, ["SEX"], convention="paper")
    with pytest.raises(ValueError, match="subset of"):
        max_mean_error(TRAIN, TRAIN, ["DIS"], convention="authors")
    assert np.isnan(max_mean_error(TRAIN, TRAIN.iloc[:0], ["SEX"]))


def test_parity_authors_adds_rows_and_keeps_ours_unchanged() -> None:
    synth = employment_like(400, 9)
    ours = workload_metrics(TRAIN, synth)
    both = workload_metrics(TRAIN, synth, parity="authors")
    added = {"mean_parity_error_authors", "max_mean_error", "max_mean_error_authors"}
    assert set(both.metric) - set(ours.metric) == added
    pd.testing.assert_frame_equal(
        both[~both.metric.isin(added)].reset_index(drop=True), ours
    )
    for grouping, by in EMPLOYMENT_GROUPINGS.items():
        row = both[
            (both.metric == "mean_parity_error_authors") & (both.grouping == grouping)
        ]
        assert float(row.value.iloc[0]) == pytest.approx(
            mean_parity_error_authors(TRAIN, synth, by)
        )
    whole = evaluate_synthetic(
        TRAIN, TEST, synth, classifiers=["logistic"], parity="authors"
    )
    assert added <= set(whole.metric)
    with pytest.raises(ValueError, match="parity convention"):
        workload_metrics(TRAIN, synth, parity="paper")
    with pytest.raises(ValueError, match="other attributes"):
        evaluate_synthetic(
            TRAIN,
            TEST,
            synth,
            classifiers=["logistic"],
            groupings={"DIS": ["DIS"]},
            parity="authors",
        )


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
