"""Tests for dpnotes.synth.domain and dpnotes.synth.marginals.

Domains are public mappings ``attribute -> number of values``; data are integer codes
inside them. Marginals are flat count vectors in C order over the clique's attributes;
the workload error is the average L1 distance between real and synthetic marginals as
proportions (so it lies in [0, 2]).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from dpnotes.synth.domain import (
    check_data,
    check_domain,
    domain_cells,
    drop_attributes,
)
from dpnotes.synth.marginals import (
    all_kway,
    canonical,
    downward_closure,
    marginal,
    marginals,
    workload_error,
    workload_errors_by_group,
)

DOMAIN = {"A": 2, "B": 3, "C": 4}


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def random_data(n: int, domain: dict[str, int], seed: int = 0) -> pd.DataFrame:
    r = rng(seed)
    return pd.DataFrame({a: r.integers(0, s, n) for a, s in domain.items()})


# --- check_domain ---------------------------------------------------------------------


def test_check_domain_returns_plain_ordered_dict() -> None:
    got = check_domain({"Z": np.int64(3), "A": 1})
    assert got == {"Z": 3, "A": 1}
    assert list(got) == ["Z", "A"]  # order kept, not sorted
    assert all(type(v) is int for v in got.values())


@pytest.mark.parametrize(
    ("domain", "err", "match"),
    [
        ([("A", 2)], TypeError, "must be a mapping"),
        ("A", TypeError, "must be a mapping"),
        (None, TypeError, "must be a mapping"),
        ({}, ValueError, "is empty"),
        ({"A": 0}, ValueError, r"domain\['A'\] must be a positive integer"),
        ({"A": -2}, ValueError, r"domain\['A'\] must be a positive integer"),
        ({"A": 2.0}, ValueError, r"domain\['A'\] must be a positive integer"),
        ({"A": "3"}, ValueError, r"domain\['A'\] must be a positive integer"),
        ({"A": True}, ValueError, r"domain\['A'\] must be a positive integer"),
        ({"A": 2, 3: 2}, ValueError, "attribute names must be strings"),
        ({("A",): 2}, ValueError, "attribute names must be strings"),
    ],
)
def test_check_domain_rejects(domain, err, match) -> None:
    with pytest.raises(err, match=match):
        check_domain(domain)


def test_check_domain_uses_name_in_messages() -> None:
    with pytest.raises(ValueError, match="strata_domain is empty"):
        check_domain({}, name="strata_domain")


def test_domain_cells_and_drop_attributes() -> None:
    assert domain_cells(DOMAIN) == 24
    assert domain_cells(DOMAIN, ["B", "C"]) == 12
    assert domain_cells(DOMAIN, []) == 1
    assert drop_attributes(DOMAIN, ["B"]) == {"A": 2, "C": 4}
    assert drop_attributes(DOMAIN, []) == DOMAIN


# --- check_data -----------------------------------------------------------------------


def test_check_data_returns_int64_in_domain_order() -> None:
    df = pd.DataFrame(
        {"C": [3.0, 0.0], "B": [2, 1], "A": np.array([1, 0], dtype=np.int8)},
        index=[10, 20],
    )
    out = check_data(df, DOMAIN)
    assert list(out.columns) == ["A", "B", "C"]
    assert all(out[c].dtype == np.int64 for c in out.columns)
    assert out.index.equals(pd.RangeIndex(2))
    assert out.to_dict("list") == {"A": [1, 0], "B": [2, 1], "C": [3, 0]}
    assert df["C"].dtype == float  # the input is not modified


def _df(**cols) -> pd.DataFrame:
    base = {"A": [0, 1], "B": [0, 2], "C": [3, 1]}
    base.update(cols)
    return pd.DataFrame({k: v for k, v in base.items() if v is not None})


@pytest.mark.parametrize(
    ("df", "err", "match"),
    [
        ({"A": [0]}, TypeError, "data must be a pandas DataFrame"),
        (np.zeros((2, 3)), TypeError, "data must be a pandas DataFrame"),
        (_df(C=None), ValueError, r"missing \['C'\], extra \[\]"),
        (_df(Z=[0, 0]), ValueError, r"missing \[\], extra \['Z'\]"),
        (_df().iloc[:0], ValueError, "data has no rows"),
        (_df(B=[0.0, math.nan]), ValueError, r"data\['B'\] has 1 missing values"),
        (_df(B=[0, None]), ValueError, r"data\['B'\] has 1 missing values"),
        (_df(C=[0.5, 1.0]), ValueError, r"data\['C'\] must hold integer codes 0..3"),
        (_df(C=[1.0, math.inf]), ValueError, r"must hold integer codes"),
        (_df(A=[0, 2]), ValueError, r"data\['A'\] has 1 value\(s\) outside.*0..1"),
        (_df(C=[-1, 4]), ValueError, r"data\['C'\] has 2 value\(s\) outside.*0..3"),
        (_df(B=[3.0, 0.0]), ValueError, r"data\['B'\] has 1 value\(s\) outside"),
    ],
)
def test_check_data_rejects(df, err, match) -> None:
    with pytest.raises(err, match=match):
        check_data(df, DOMAIN)


def test_check_data_checks_the_domain_and_uses_name() -> None:
    with pytest.raises(ValueError, match="is empty"):
        check_data(_df(), {})
    with pytest.raises(ValueError, match=r"real\['A'\] has 1 value"):
        check_data(_df(A=[0, 5]), DOMAIN, name="real")


# --- cliques and workloads ------------------------------------------------------------


def test_canonical_orders_by_domain_and_rejects_unknown() -> None:
    assert canonical(("C", "A"), DOMAIN) == ("A", "C")
    assert canonical(["B", "C", "A"], DOMAIN) == ("A", "B", "C")
    assert canonical((), DOMAIN) == ()
    with pytest.raises(ValueError, match=r"unknown attribute\(s\) \['X', 'Y'\]"):
        canonical(("Y", "A", "X"), DOMAIN)


def test_all_kway() -> None:
    d = {"A": 2, "B": 2, "C": 2, "D": 2}
    assert all_kway(d, 1) == [("A",), ("B",), ("C",), ("D",)]
    assert all_kway(d, 3) == [
        ("A", "B", "C"),
        ("A", "B", "D"),
        ("A", "C", "D"),
        ("B", "C", "D"),
    ]
    assert len(all_kway(d, 2)) == 6
    assert all_kway(d, 9) == [("A", "B", "C", "D")]  # k > d: the whole domain
    assert all_kway(d, np.int64(2)) == all_kway(d, 2)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="k must be a positive integer"):
            all_kway(d, bad)


def test_downward_closure() -> None:
    got = downward_closure([("C", "A"), ("B", "C")], DOMAIN)
    assert got == [("A",), ("B",), ("C",), ("A", "C"), ("B", "C")]
    full = downward_closure([("A", "B", "C")], DOMAIN)
    assert len(full) == 7 and full[-1] == ("A", "B", "C")
    assert downward_closure([], DOMAIN) == []
    with pytest.raises(ValueError, match="unknown attribute"):
        downward_closure([("A", "Q")], DOMAIN)


# --- marginal -------------------------------------------------------------------------


def _brute_force(df: pd.DataFrame, domain, clique) -> np.ndarray:
    counts = np.zeros([domain[a] for a in clique])
    for row in df[list(clique)].itertuples(index=False):
        counts[tuple(row)] += 1
    return counts.reshape(-1)


@pytest.mark.parametrize(
    "clique",
    [("A",), ("C",), ("A", "B"), ("B", "C"), ("A", "C"), ("A", "B", "C")],
)
def test_marginal_matches_brute_force_and_histogramdd(clique) -> None:
    df = random_data(300, DOMAIN, seed=1)
    got = marginal(df, DOMAIN, clique)
    assert got.dtype == float and got.shape == (domain_cells(DOMAIN, clique),)
    np.testing.assert_array_equal(got, _brute_force(df, DOMAIN, clique))
    bins = [np.arange(DOMAIN[a] + 1) - 0.5 for a in clique]
    hist, _ = np.histogramdd(df[list(clique)].to_numpy(), bins=bins)
    np.testing.assert_array_equal(got, hist.reshape(-1))  # C order, first attr major
    assert got.sum() == 300


def test_marginal_layout_is_c_order_over_the_clique_order() -> None:
    df = pd.DataFrame({"A": [1], "B": [2], "C": [3]})
    # Cell index of (A=1, B=2, C=3) in C order is (1 * 3 + 2) * 4 + 3 = 23.
    assert np.flatnonzero(marginal(df, DOMAIN, ("A", "B", "C"))).tolist() == [23]
    # (A=1, C=3): 1 * 4 + 3 = 7; and the reversed clique puts C first: 3 * 2 + 1 = 7.
    assert np.flatnonzero(marginal(df, DOMAIN, ("A", "C"))).tolist() == [7]
    df = random_data(200, DOMAIN, seed=2)
    ac = marginal(df, DOMAIN, ("A", "C")).reshape(2, 4)
    ca = marginal(df, DOMAIN, ("C", "A")).reshape(4, 2)
    np.testing.assert_array_equal(ca, ac.T)


def test_marginal_weights_empty_clique_and_mapping_input() -> None:
    df = random_data(50, DOMAIN, seed=3)
    w = rng(4).random(50)
    got = marginal(df, DOMAIN, ("B",), weights=w)
    expected = [w[df["B"].to_numpy() == v].sum() for v in range(3)]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert marginal(df, DOMAIN, ()).tolist() == [50.0]
    assert marginal(df, DOMAIN, (), weights=w) == pytest.approx(w.sum())
    as_dict = {a: df[a].to_numpy() for a in DOMAIN}
    np.testing.assert_array_equal(
        marginal(as_dict, DOMAIN, ("A", "C")), marginal(df, DOMAIN, ("A", "C"))
    )
    assert marginal(as_dict, DOMAIN, ()).tolist() == [50.0]
    many = marginals(df, DOMAIN, [("A",), ("B", "C")])
    assert list(many) == [("A",), ("B", "C")]
    np.testing.assert_array_equal(many[("B", "C")], marginal(df, DOMAIN, ("B", "C")))


# --- workload error -------------------------------------------------------------------

PAIRS = all_kway(DOMAIN, 2)


def test_workload_error_zero_for_identical_and_scale_invariant() -> None:
    real = random_data(200, DOMAIN, seed=5)
    assert workload_error(real, real, DOMAIN, PAIRS) == 0.0
    assert workload_error(real, real.sample(frac=1.0, random_state=1), DOMAIN) == 0.0
    doubled = pd.concat([real, real, real], ignore_index=True)
    assert workload_error(real, doubled, DOMAIN, PAIRS) == pytest.approx(0.0, abs=1e-15)
    other = random_data(150, DOMAIN, seed=6)
    base = workload_error(real, other, DOMAIN, PAIRS)
    assert base > 0.05  # different random tables do differ
    twice = pd.concat([other, other], ignore_index=True)
    assert workload_error(real, twice, DOMAIN, PAIRS) == pytest.approx(base, rel=1e-12)


def test_workload_error_hand_value_and_default_workload() -> None:
    d = {"A": 2, "B": 2}
    real = pd.DataFrame({"A": [0, 0, 1, 1], "B": [0, 1, 0, 1]})
    synth = pd.DataFrame({"A": [0, 0, 0, 1], "B": [0, 0, 0, 0]})
    # A: |.5-.75| + |.5-.25| = 0.5.  B: |.5-1| + |.5-0| = 1.0.
    # AB: cells (00, 01, 10, 11): |.25-.75| + .25 + 0 + .25 = 1.0.
    assert workload_error(real, synth, d, [("A",)]) == pytest.approx(0.5)
    assert workload_error(real, synth, d, [("A",), ("B",)]) == pytest.approx(0.75)
    assert workload_error(real, synth, d, [("B", "A")]) == pytest.approx(1.0)
    got = workload_error(real, synth, d, [("A",), ("B",)], weights=[2.0, 0.0])
    assert got == pytest.approx((2 * 0.5 + 0 * 1.0) / 2)
    # Default workload: all 3-way marginals, which for d = 2 is the single pair.
    assert workload_error(real, synth, d) == pytest.approx(1.0)


def test_workload_error_range_and_symmetry() -> None:
    for seed in range(5):
        a = random_data(40 + seed, DOMAIN, seed=10 + seed)
        b = random_data(30, DOMAIN, seed=20 + seed)
        ab = workload_error(a, b, DOMAIN, PAIRS)
        assert 0.0 < ab <= 2.0
        assert ab == pytest.approx(workload_error(b, a, DOMAIN, PAIRS), rel=1e-12)
    # Disjoint supports reach the maximum 2.
    zeros = pd.DataFrame({a: [0, 0] for a in DOMAIN})
    ones = pd.DataFrame({a: [1, 1, 1] for a in DOMAIN})
    assert workload_error(zeros, ones, DOMAIN, PAIRS) == pytest.approx(2.0)


def test_workload_error_empty_tables() -> None:
    real = random_data(20, DOMAIN, seed=7)
    empty = real.iloc[:0]
    assert workload_error(real, empty, DOMAIN, PAIRS) == pytest.approx(1.0)
    assert workload_error(empty, empty, DOMAIN, PAIRS) == 0.0
    with pytest.raises(
        ValueError, match=r"synthetic columns do not match.*missing \['C'\]"
    ):
        workload_error(real, empty[["A", "B"]], DOMAIN, PAIRS)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"weights": [1.0, 1.0]}, "weights must be 3 non-negative finite"),
        ({"weights": [1.0, 1.0, 1.0, 1.0]}, "weights must be 3 non-negative finite"),
        ({"weights": [1.0, -1.0, 1.0]}, "weights must be 3 non-negative finite"),
        ({"weights": [1.0, math.nan, 1.0]}, "weights must be 3 non-negative finite"),
        ({"weights": [1.0, math.inf, 1.0]}, "weights must be 3 non-negative finite"),
        ({"weights": [[1.0, 1.0, 1.0]]}, "weights must be 3 non-negative finite"),
        ({"workload": []}, "workload is empty"),
        ({"workload": [("A", "Q")]}, "unknown attribute"),
    ],
)
def test_workload_error_rejects(kwargs, match) -> None:
    real = random_data(20, DOMAIN, seed=8)
    args = {"workload": PAIRS}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        workload_error(real, real, DOMAIN, **args)


def test_workload_error_checks_data() -> None:
    real = random_data(20, DOMAIN, seed=9)
    bad = real.assign(B=real["B"] + 5)
    with pytest.raises(ValueError, match=r"synthetic\['B'\] has \d+ value"):
        workload_error(real, bad, DOMAIN, PAIRS)
    with pytest.raises(ValueError, match=r"real\['B'\] has \d+ value"):
        workload_error(bad, real, DOMAIN, PAIRS)


# --- workload errors by group ---------------------------------------------------------


def test_workload_errors_by_group() -> None:
    real = random_data(120, DOMAIN, seed=11)
    real = real[real["A"] == 0].reset_index(drop=True)  # no real rows with A = 1
    synth = random_data(90, DOMAIN, seed=12)
    got = workload_errors_by_group(real, synth, DOMAIN, ["A"], [(0,), (1,)], PAIRS)
    assert list(got) == [(0,), (1,)]
    assert math.isnan(got[(1,)])
    expected = workload_error(real, synth[synth["A"] == 0], DOMAIN, PAIRS)
    assert got[(0,)] == pytest.approx(expected, rel=1e-12)
    assert 0.0 < got[(0,)] <= 2.0

    same = workload_errors_by_group(real, real, DOMAIN, ["A"], [(0,)], PAIRS)
    assert same == {(0,): 0.0}
    # Real rows but no synthetic rows: every proportion missed, error 1.
    none = workload_errors_by_group(
        real, synth[synth["A"] == 1], DOMAIN, ["A"], [(0,)], PAIRS
    )
    assert none[(0,)] == pytest.approx(1.0)


def test_workload_errors_by_group_two_attributes_and_bad_group() -> None:
    real = random_data(300, DOMAIN, seed=13)
    synth = random_data(300, DOMAIN, seed=14)
    groups = list(itertools.product(range(2), range(3)))
    got = workload_errors_by_group(real, synth, DOMAIN, ["A", "B"], groups, [("C",)])
    for a, b in groups:
        r = real[(real["A"] == a) & (real["B"] == b)]
        s = synth[(synth["A"] == a) & (synth["B"] == b)]
        assert got[(a, b)] == pytest.approx(workload_error(r, s, DOMAIN, [("C",)]))
    with pytest.raises(ValueError, match=r"group \(0,\) has 1 codes but by has 2"):
        workload_errors_by_group(real, synth, DOMAIN, ["A", "B"], [(0,)], [("C",)])
