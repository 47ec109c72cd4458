"""Tests for dpnotes.synth.mst (MST) and the Gaussian measurement it shares with AIM.

MST (mckenna2021winning) splits ``rho`` in thirds: one-way marginals, the exponential
mechanism choosing a spanning tree of pairs, and the tree's two-way marginals. mbi
compiles one program per clique structure, so the fits below reuse one domain and, with
a strong ``A - B`` dependence, the same selected tree.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from dpnotes.accounting import rho_to_epsilon
from dpnotes.audit import assert_audit_passes, audit_epsilon, audit_fails
from dpnotes.mechanisms import exponential_mechanism, exponential_mechanism_epsilon
from dpnotes.synth import MST, mst, pgm
from dpnotes.synth.base import measure
from dpnotes.synth.marginals import marginal, workload_error
from dpnotes.synth.mst import compress_domain, independent_pair_marginals, select_tree

DOMAIN = {"A": 3, "B": 3, "C": 2, "D": 2}
DELTA = 1e-6


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def make_data(n: int = 1000, seed: int = 0) -> pd.DataFrame:
    """B copies A 90% of the time; C and D are independent coin flips."""
    r = rng(seed)
    a = r.integers(0, 3, n)
    b = np.where(r.random(n) < 0.9, a, r.integers(0, 3, n))
    return pd.DataFrame(
        {"A": a, "B": b, "C": r.integers(0, 2, n), "D": r.integers(0, 2, n)}
    )


DATA = make_data()


@pytest.fixture(scope="module")
def fitted() -> MST:
    return MST(epsilon=1.0, delta=DELTA).fit(DATA, DOMAIN, rng=rng(0))


@pytest.fixture(scope="module")
def exact() -> MST:
    # epsilon = 1e6: the noise (sigma ~ 2e-3) and the selection's randomness vanish.
    return MST(epsilon=1e6, delta=DELTA).fit(DATA, DOMAIN, rng=rng(1))


# --- validation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"epsilon": 0.0}, ValueError, "positive, finite privacy budget"),
        ({"epsilon": -1.0}, ValueError, "positive, finite privacy budget"),
        ({"epsilon": math.inf}, ValueError, "positive, finite privacy budget"),
        ({"epsilon": math.nan}, ValueError, "positive, finite privacy budget"),
        ({"delta": 0.0}, ValueError, "strictly between 0 and 1"),
        ({"delta": 1.0}, ValueError, "strictly between 0 and 1"),
        ({"delta": -1e-6}, ValueError, "strictly between 0 and 1"),
        ({"delta": 1.5}, ValueError, "strictly between 0 and 1"),
        ({"iters": 0}, ValueError, "iters must be at least 1"),
        ({"iters": -5}, ValueError, "iters must be at least 1"),
        ({"iters": 10.0}, TypeError, "iters must be an integer"),
        ({"compress_threshold": 0.0}, ValueError, "compress_threshold must be a pos"),
        ({"compress_threshold": -3.0}, ValueError, "compress_threshold must be a pos"),
        ({"epsilon": 1e-300}, ValueError, "too small to convert.*at least 1e-150"),
        ({"epsilon": 1e300}, ValueError, "too large to convert.*below 1e150"),
    ],
)
def test_constructor_rejects(kwargs, err, match) -> None:
    args = {"epsilon": 1.0, "delta": DELTA}
    args.update(kwargs)
    with pytest.raises(err, match=match):
        MST(**args)


@pytest.mark.parametrize(
    ("df", "domain", "fit_rng", "err", "match"),
    [
        (DATA.assign(A=DATA["A"] + 1), DOMAIN, rng(), ValueError, r"outside the decl"),
        (DATA.assign(C=-DATA["C"]), DOMAIN, rng(), ValueError, r"data\['C'\] has"),
        (DATA.drop(columns="D"), DOMAIN, rng(), ValueError, r"missing \['D'\]"),
        (DATA.iloc[:0, :3], DOMAIN, rng(), ValueError, r"missing \['D'\]"),
        (DATA, {}, rng(), ValueError, "domain is empty"),
        (DATA.to_numpy(), DOMAIN, rng(), TypeError, "must be a pandas DataFrame"),
        (DATA, DOMAIN, 0, TypeError, "numpy.random.Generator"),
        (DATA, DOMAIN, None, TypeError, "numpy.random.Generator"),
    ],
)
def test_fit_rejects(df, domain, fit_rng, err, match) -> None:
    model = MST(epsilon=1.0, delta=DELTA)
    with pytest.raises(err, match=match):
        model.fit(df, domain, rng=fit_rng)
    assert model.domain_ is None


def test_sample_before_fit_and_bad_n(fitted) -> None:
    with pytest.raises(RuntimeError, match="MST is not fitted; call fit"):
        MST(epsilon=1.0, delta=DELTA).sample(5, rng=rng())
    for n in (0, -3):
        with pytest.raises(ValueError, match="n must be at least 1"):
            fitted.sample(n, rng=rng())
    with pytest.raises(TypeError, match="n must be an integer"):
        fitted.sample(2.5, rng=rng())
    with pytest.raises(TypeError, match=r"numpy\.random\.Generator"):
        fitted.sample(5, rng=1)


# --- accounting -----------------------------------------------------------------------


def test_accounting_thirds_and_labels(fitted) -> None:
    d, rho = len(DOMAIN), fitted.rho
    assert fitted.rho_spent == pytest.approx(rho, rel=1e-9)
    assert fitted.rho_spent <= rho * (1 + 1e-9)
    assert fitted.epsilon_spent <= 1.0 * (1 + 1e-9)
    assert fitted.epsilon_spent == pytest.approx(1.0, rel=1e-6)
    history = fitted.accountant_.history
    labels = [s.label for s in history]
    assert labels == (
        ["one-way marginals"]
        + ["tree edge selection"] * (d - 1)
        + ["two-way marginals"]
    )
    assert history[0].rho == pytest.approx(rho / 3, rel=1e-12)
    assert history[-1].rho == pytest.approx(rho / 3, rel=1e-12)
    for s in history[1:-1]:
        assert s.rho == pytest.approx(rho / 3 / (d - 1), rel=1e-12)
    # The noise scales MST's formulas give, read back from the measurement log.
    share = rho / 3
    for a in DOMAIN:
        assert fitted.log_.value((a,))[1] == pytest.approx(math.sqrt(d / (2 * share)))
    assert len(fitted.tree_) == d - 1
    for edge in fitted.tree_:
        assert fitted.log_.value(edge)[1] == pytest.approx(
            math.sqrt((d - 1) / (2 * share))
        )


def test_deterministic_for_a_seed(exact) -> None:
    again = MST(epsilon=1e6, delta=DELTA).fit(DATA, DOMAIN, rng=rng(1))
    assert again.tree_ == exact.tree_
    for a, b in zip(exact.log_.measurements(), again.log_.measurements(), strict=True):
        np.testing.assert_array_equal(a.noisy_measurement, b.noisy_measurement)
    s1, s2 = exact.sample(300, rng=rng(5)), again.sample(300, rng=rng(5))
    pd.testing.assert_frame_equal(s1, s2)
    other = MST(epsilon=1e6, delta=DELTA).fit(DATA, DOMAIN, rng=rng(2))
    assert not np.array_equal(other.log_.value(("A",))[0], exact.log_.value(("A",))[0])
    assert not s1.equals(exact.sample(300, rng=rng(6)))


def test_independent_pair_marginals_match_mbi_projection() -> None:
    # The select step's model has one-way cliques only: its pair marginals are outer
    # products. They must equal mbi's own projection of each pair (in C order, with
    # attributes of different sizes), which compiles one program per pair.
    domain = {"A": 3, "B": 4, "C": 2, "D": 5}
    r = rng(11)
    data = pd.DataFrame({a: r.integers(0, k, 800) for a, k in domain.items()})
    log = pgm.MeasurementLog(domain)
    for clique, y in measure(data, domain, [(a,) for a in domain], sigma=3.0,
                             rng=rng(12)).items():  # fmt: skip
        log.add(clique, y, 3.0)
    model = pgm.estimate(log, iters=200)
    pairs = list(itertools.combinations(domain, 2))
    got = independent_pair_marginals(model, domain, pairs)
    assert set(got) == set(pairs)
    for pair in pairs:
        want = np.asarray(model.project(pair).datavector())
        np.testing.assert_allclose(got[pair], want, rtol=1e-9, atol=1e-9)
        # Not a trivial uniform table: the noisy one-way marginals differ by value.
        assert np.ptp(got[pair]) > 1.0


def test_independent_pair_marginals_refuse_a_model_with_pairs(exact) -> None:
    with pytest.raises(ValueError, match="not products"):
        independent_pair_marginals(exact.model_, DOMAIN, [("A", "B")])


# --- utility with a huge budget -------------------------------------------------------


def test_huge_budget_selects_dependent_pair_and_fits_marginals(exact) -> None:
    assert ("A", "B") in exact.tree_
    assert exact.compression_.domain == DOMAIN  # no value is rare
    measured = [(a,) for a in DOMAIN] + exact.tree_
    got = pgm.model_marginals(exact.model_, DOMAIN, measured)
    for cl in measured:
        np.testing.assert_allclose(got[cl], marginal(DATA, DOMAIN, cl), atol=0.5)
    # The dependent pair is far from what the one-way marginals alone would give.
    ab = marginal(DATA, DOMAIN, ("A", "B"))
    indep = np.outer(marginal(DATA, DOMAIN, ("A",)), marginal(DATA, DOMAIN, ("B",)))
    assert np.abs(ab - indep.reshape(-1) / len(DATA)).sum() > 500
    # Samples reproduce the measured marginals up to sampling error: with 50,000
    # records the L1 error of a 9-cell proportion vector is about 0.01.
    synth = exact.sample(50_000, rng=rng(3))
    assert workload_error(DATA, synth, DOMAIN, measured) < 0.02


def test_one_attribute_spends_everything_on_one_way() -> None:
    r = rng(4)
    df = pd.DataFrame({"A": r.choice(3, size=600, p=[0.5, 0.3, 0.2])})
    synth = MST(epsilon=5.0, delta=DELTA).fit(df, {"A": 3}, rng=rng(5))
    rho = synth.rho
    assert [s.label for s in synth.accountant_.history] == ["one-way marginals"]
    assert synth.accountant_.history[0].rho == pytest.approx(rho, rel=1e-12)
    assert synth.tree_ == []
    assert synth.log_.value(("A",))[1] == pytest.approx(math.sqrt(1 / (2 * rho)))
    assert synth.compression_.domain == {"A": 3}
    out = synth.sample(20_000, rng=rng(6))
    assert list(out.columns) == ["A"] and out["A"].dtype == np.int64
    freq = np.bincount(out["A"], minlength=3) / 20_000
    observed = np.bincount(df["A"], minlength=3) / len(df)
    np.testing.assert_allclose(freq, observed, atol=0.03)


def _rare_values_data(n: int = 600, seed: int = 4) -> pd.DataFrame:
    # A and B take values 0..2 only; B copies A 80% of the time.
    r = rng(seed)
    a = r.choice(3, size=n, p=[0.5, 0.3, 0.2])
    b = np.where(r.random(n) < 0.8, a, r.integers(0, 3, n))
    return pd.DataFrame({"A": a, "B": b})


def test_rare_values_are_merged_and_expanded() -> None:
    # A's values 3 and 4 never occur: with sigma ~ 2.5 their noisy counts fall below
    # 3 sigma and are merged; B keeps its values. Samples draw 3 and 4 only rarely and
    # reproduce the observed distribution.
    df = _rare_values_data()
    synth = MST(epsilon=5.0, delta=DELTA).fit(df, {"A": 5, "B": 3}, rng=rng(5))
    comp = synth.compression_
    assert comp.domain == {"A": 4, "B": 3}
    np.testing.assert_array_equal(comp.merged["A"], [3, 4])
    assert comp.merged["B"].size == 0
    assert synth.tree_ == [("A", "B")]
    assert float(synth.model_.total) == pytest.approx(600, rel=0.05)
    out = synth.sample(20_000, rng=rng(6))
    freq = np.bincount(out["A"], minlength=5) / 20_000
    observed = np.bincount(df["A"], minlength=3) / len(df)
    np.testing.assert_allclose(freq[:3], observed, atol=0.03)
    assert freq[3:].sum() < 0.02
    assert workload_error(df, out, {"A": 5, "B": 3}, [("A", "B")]) < 0.1


# Regression: when every one-way measurement is compressed (each carries a
# ScaledQuery), the model's total must still come from them, not default to 1.


def test_selection_model_has_the_data_total_when_all_attributes_compressed(
    monkeypatch,
) -> None:
    seen = []
    real_select = mst.select_tree

    def spy(data, domain, model_marginals, **kwargs):
        seen.append({p: float(v.sum()) for p, v in model_marginals.items()})
        return real_select(data, domain, model_marginals, **kwargs)

    monkeypatch.setattr(mst, "select_tree", spy)
    df = _rare_values_data()
    synth = MST(epsilon=5.0, delta=DELTA).fit(df, {"A": 5, "B": 4}, rng=rng(5))
    assert synth.compression_.merged["B"].tolist() == [3]  # both are compressed
    # The one-way model that scores the candidate edges should hold ~600 records.
    assert seen[0][("A", "B")] == pytest.approx(600, rel=0.05)


def test_one_compressed_attribute_samples_its_distribution() -> None:
    df = _rare_values_data()[["A"]]
    synth = MST(epsilon=5.0, delta=DELTA).fit(df, {"A": 5}, rng=rng(5))
    np.testing.assert_array_equal(synth.compression_.merged["A"], [3, 4])
    freq = np.bincount(synth.sample(20_000, rng=rng(6))["A"], minlength=5) / 20_000
    # Today every sample is A = 0: the model put all its mass (total 1) on one cell.
    observed = np.bincount(df["A"], minlength=3) / len(df)
    np.testing.assert_allclose(freq[:3], observed, atol=0.03)


def test_empty_table_fits_and_samples() -> None:
    empty = pd.DataFrame({a: np.zeros(0, dtype=int) for a in DOMAIN})
    synth = MST(epsilon=1.0, delta=DELTA).fit(empty, DOMAIN, rng=rng(7))
    assert synth.rho_spent == pytest.approx(synth.rho, rel=1e-9)
    assert len(synth.tree_) == len(DOMAIN) - 1
    out = synth.sample(100, rng=rng(8))
    assert list(out.columns) == list(DOMAIN) and len(out) == 100
    for a, size in DOMAIN.items():
        assert out[a].between(0, size - 1).all()


# --- compress_domain and Compression --------------------------------------------------


def test_compress_domain_merges_exactly_the_values_below_threshold() -> None:
    sigma = 2.0
    domain = {"X": 5, "Y": 3}
    oneway = {
        ("X",): np.array([100.0, 5.9, 6.0, -4.0, 50.0]),  # 3 sigma = 6
        ("Y",): np.array([6.0, 7.0, 80.0]),
    }
    comp, measured = compress_domain(domain, oneway, sigma=sigma)
    assert comp.domain == {"X": 4, "Y": 3}
    np.testing.assert_array_equal(comp.merged["X"], [1, 3])
    np.testing.assert_array_equal(comp.maps["X"], [0, 3, 1, 3, 2])
    assert comp.merged["Y"].size == 0
    np.testing.assert_array_equal(comp.maps["Y"], [0, 1, 2])

    (cl_x, y_x, s_x, q_x), (cl_y, y_y, s_y, q_y) = measured
    assert cl_x == ("X",) and s_x == sigma
    # The merged cell holds (5.9 - 4.0) / sqrt(2), so that its noise std stays sigma.
    np.testing.assert_allclose(y_x, [100.0, 6.0, 50.0, 1.9 / math.sqrt(2)])
    assert q_x == pgm.ScaledQuery((1.0, 1.0, 1.0, 1 / math.sqrt(2)))
    assert cl_y == ("Y",) and q_y is None and s_y == sigma
    np.testing.assert_array_equal(y_y, oneway[("Y",)])

    # A higher threshold merges more; everything merged leaves one value.
    comp9, _ = compress_domain(domain, oneway, sigma=sigma, threshold=9.0)
    assert comp9.domain == {"X": 3, "Y": 2}
    np.testing.assert_array_equal(comp9.merged["Y"], [0, 1])
    comp_all, meas_all = compress_domain(domain, oneway, sigma=sigma, threshold=1e3)
    assert comp_all.domain == {"X": 1, "Y": 1}
    np.testing.assert_allclose(
        meas_all[0][1], [(100 + 5.9 + 6 - 4 + 50) / math.sqrt(5)]
    )


def test_compression_transform_and_expand() -> None:
    domain = {"X": 5, "Y": 3}
    oneway = {("X",): np.array([100.0, 0.0, 50.0, 0.0, 20.0]), ("Y",): np.ones(3) * 9}
    comp, _ = compress_domain(domain, oneway, sigma=1.0)
    data = pd.DataFrame({"X": [0, 1, 2, 3, 4], "Y": [2, 1, 0, 0, 1]})
    np.testing.assert_array_equal(comp.transform(data)["X"], [0, 3, 1, 3, 2])
    np.testing.assert_array_equal(comp.transform(data)["Y"], data["Y"])

    n = 30_000
    codes = {"X": np.tile(np.arange(4), n // 4 + 1)[:n], "Y": np.zeros(n, dtype=int)}
    full = comp.expand(codes, rng(9))
    np.testing.assert_array_equal(full["Y"], codes["Y"])  # nothing merged: unchanged
    kept = codes["X"] < 3
    np.testing.assert_array_equal(
        full["X"][kept], np.array([0, 2, 4])[codes["X"][kept]]
    )
    merged_draws = full["X"][~kept]
    assert set(np.unique(merged_draws)) == {1, 3}  # only from the merged set
    # Uniform over the merged set: 7,500 draws, share of value 1 within 4 sd of 1/2.
    share = np.mean(merged_draws == 1)
    assert abs(share - 0.5) < 4 * math.sqrt(0.25 / merged_draws.size)
    # Expansion inverts the transform on kept values.
    round_trip = comp.expand({"X": comp.transform(data)["X"].to_numpy()}, rng(10))
    np.testing.assert_array_equal(round_trip["X"][[0, 2, 4]], [0, 2, 4])


# --- select_tree ----------------------------------------------------------------------


def _independent_pairs(df: pd.DataFrame) -> dict:
    n = len(df)
    out = {}
    for a, b in itertools.combinations(DOMAIN, 2):
        ma, mb = marginal(df, DOMAIN, (a,)), marginal(df, DOMAIN, (b,))
        out[(a, b)] = np.outer(ma, mb).reshape(-1) / n
    return out


def _is_spanning_tree(edges) -> bool:
    parent = {a: a for a in DOMAIN}

    def root(a):
        while parent[a] != a:
            a = parent[a]
        return a

    for a, b in edges:
        if root(a) == root(b):
            return False
        parent[root(a)] = root(b)
    return len(edges) == len(DOMAIN) - 1


def _max_spanning_tree_weight(scores: dict) -> float:
    # Brute force over every set of d - 1 pairs (20 sets for d = 4).
    return max(
        sum(scores[e] for e in edges)
        for edges in itertools.combinations(scores, len(DOMAIN) - 1)
        if _is_spanning_tree(edges)
    )


def test_select_tree_is_a_maximum_spanning_tree_with_huge_epsilon() -> None:
    df = make_data(2000, seed=11)
    df["D"] = np.where(rng(12).random(2000) < 0.7, df["C"], 1 - df["C"])
    model = _independent_pairs(df)
    scores = {
        p: np.abs(marginal(df, DOMAIN, p) - model[p]).sum()
        for p in itertools.combinations(DOMAIN, 2)
    }
    tree = select_tree(df, DOMAIN, model, epsilon=1e9, rng=rng(13))
    assert tree[0] == max(scores, key=scores.get)
    assert _is_spanning_tree(tree)
    assert ("A", "B") in tree and ("C", "D") in tree
    assert sum(scores[e] for e in tree) == pytest.approx(
        _max_spanning_tree_weight(scores)
    )


def test_select_tree_uses_exponential_mechanism_with_sensitivity_one(
    monkeypatch,
) -> None:
    calls = []

    def spy(scores, *, epsilon, sensitivity, rng):
        calls.append((np.array(scores), epsilon, sensitivity))
        return exponential_mechanism(
            scores, epsilon=epsilon, sensitivity=sensitivity, rng=rng
        )

    monkeypatch.setattr(mst, "exponential_mechanism", spy)
    df = make_data(300, seed=14)
    tree = select_tree(df, DOMAIN, _independent_pairs(df), epsilon=0.3, rng=rng(15))
    assert _is_spanning_tree(tree)
    assert len(calls) == len(DOMAIN) - 1
    assert all(eps == 0.3 and sens == 1.0 for _, eps, sens in calls)
    # Kruskal: the candidate set shrinks as components merge (6 pairs, then fewer).
    sizes = [c[0].size for c in calls]
    assert sizes[0] == 6 and sizes == sorted(sizes, reverse=True) and sizes[-1] >= 1
    # Deterministic for a seed.
    again = select_tree(df, DOMAIN, _independent_pairs(df), epsilon=0.3, rng=rng(15))
    assert again == tree


def test_select_tree_is_random_at_small_epsilon() -> None:
    # With a tiny epsilon every spanning tree is about equally likely: the first edge
    # is each of the 6 pairs about 1/6 of the time (400 draws, sd ~ 0.019).
    df = make_data(300, seed=16)
    model = _independent_pairs(df)
    r = rng(17)
    firsts = [
        select_tree(df, DOMAIN, model, epsilon=1e-6, rng=r)[0] for _ in range(400)
    ]
    counts = pd.Series([str(f) for f in firsts]).value_counts(normalize=True)
    assert len(counts) == 6
    assert counts.max() < 1 / 6 + 0.08 and counts.min() > 1 / 6 - 0.08


# --- privacy audits -------------------------------------------------------------------
#
# Neighbours: D1 is D0 with one record added (unbounded DP, as in base.py). The audits
# run the real `measure` on a table replicated across a public "trial" attribute T:
# the marginal on (T, clique) holds one independent noisy marginal per trial.

AUDIT_TRIALS = 300_000  # runs per dataset (vectorised; about a second per audit)
AUDIT_DOMAIN = {"A": 3, "B": 3, "C": 2}
AUDIT_RHO = 0.375  # MST's total; each third is rho / 3 = 0.125
AUDIT_DELTA = 1e-3
D0 = pd.DataFrame({"A": [0, 1, 2, 0], "B": [1, 1, 0, 2], "C": [0, 1, 1, 0]})
ADDED = {"A": 2, "B": 0, "C": 1}
D1 = pd.concat([D0, pd.DataFrame([ADDED])], ignore_index=True)

# The MST step being audited: its cliques, and the number of marginals measured with
# the third of the budget (d for the one-way step, d - 1 for the tree).
STEPS = {
    "one-way": [("A",), ("B",), ("C",)],
    "two-way": [("A", "B"), ("B", "C")],
}


def _mst_sigma(step: str) -> float:
    share = AUDIT_RHO / 3
    return math.sqrt(len(STEPS[step]) / (2 * share))  # MST's sigma1 / sigma2


def _replicated_measure(step: str, sigma: float):
    cliques = STEPS[step]

    def mech(data: pd.DataFrame, trials: int, r: np.random.Generator) -> np.ndarray:
        n = len(data)
        table = {"T": np.repeat(np.arange(trials), n)}
        table.update({a: np.tile(data[a].to_numpy(), trials) for a in AUDIT_DOMAIN})
        domain = {"T": trials, **AUDIT_DOMAIN}
        out = measure(table, domain, [("T", *cl) for cl in cliques], sigma=sigma, rng=r)
        return np.concatenate(
            [out[("T", *cl)].reshape(trials, -1) for cl in cliques], axis=1
        )

    return mech


def _changed_cells(step: str) -> list[int]:
    # Column of the cell the added record changes in each marginal, in the
    # concatenated output; the statistic sums them (the likelihood-ratio direction).
    cols, offset = [], 0
    for cl in STEPS[step]:
        shape = tuple(AUDIT_DOMAIN[a] for a in cl)
        cols.append(offset + int(np.ravel_multi_index([ADDED[a] for a in cl], shape)))
        offset += int(np.prod(shape))
    return cols


def test_replicated_measure_has_the_right_mean_and_noise() -> None:
    sigma = _mst_sigma("two-way")
    out = _replicated_measure("two-way", sigma)(D0, 20_000, rng(20))
    truth = np.concatenate([marginal(D0, AUDIT_DOMAIN, cl) for cl in STEPS["two-way"]])
    assert out.shape == (20_000, truth.size)
    # Mean within 4 standard errors; the sample sd of 20,000 normals within 2%.
    np.testing.assert_allclose(out.mean(axis=0), truth, atol=4 * sigma / math.sqrt(2e4))
    np.testing.assert_allclose(out.std(axis=0), sigma, rtol=0.02)
    # Cells are independent across the two marginals and across cells.
    corr = np.corrcoef(out[:, :4].T)
    assert np.abs(corr - np.eye(4)).max() < 0.04


@pytest.mark.parametrize("step", ["one-way", "two-way"])
def test_audit_gaussian_measurement(step) -> None:
    claim = rho_to_epsilon(AUDIT_RHO / 3, AUDIT_DELTA)  # ~1.55 at rho/3 = 0.125
    cells = _changed_cells(step)

    def statistic(out):
        return out[:, cells].sum(axis=1)

    res = audit_epsilon(
        _replicated_measure(step, _mst_sigma(step)),
        D0,
        D1,
        trials=AUDIT_TRIALS,
        rng=rng(21),
        delta=AUDIT_DELTA,
        statistic=statistic,
    )
    assert_audit_passes(res, claim)
    # The sum of the k changed cells shifts by k against noise sd sqrt(k) sigma, i.e.
    # sqrt(2 rho / 3) sds: the whole privacy loss. The audit has power (~1.2 here).
    assert res.epsilon_lower > 0.6 * claim

    broken = audit_epsilon(
        _replicated_measure(step, _mst_sigma(step) / 2),  # half the noise
        D0,
        D1,
        trials=AUDIT_TRIALS,
        rng=rng(22),
        delta=AUDIT_DELTA,
        statistic=statistic,
    )
    assert audit_fails(broken, claim)
    assert broken.epsilon_lower > 1.5 * claim


# The exponential mechanism of select_tree: scores are L1 distances in counts, which
# change by at most 1 when a record is added or removed (some up, some down). The
# neighbouring score vectors below realise the worst case for candidate 0.

EM_TRIALS = 500_000
EM_M = 10
EM_EPSILON = exponential_mechanism_epsilon(rho=AUDIT_RHO / 3 / 2)  # d = 3: 2 edges
SCORES0 = np.zeros(EM_M)
SCORES1 = np.r_[1.0, -np.ones(EM_M - 1)]


def _em(sensitivity: float):
    def mech(scores: np.ndarray, trials: int, r: np.random.Generator) -> np.ndarray:
        picks = exponential_mechanism(
            np.broadcast_to(scores, (trials, EM_M)),
            epsilon=EM_EPSILON,
            sensitivity=sensitivity,
            rng=r,
        )
        return (picks == 0).astype(float)

    return mech


def test_exponential_mechanism_pick_probabilities() -> None:
    # Independent reference: P(pick i) = exp(eps s_i / 2) / sum_j exp(eps s_j / 2).
    picks = exponential_mechanism(
        np.broadcast_to(SCORES1, (EM_TRIALS, EM_M)),
        epsilon=EM_EPSILON,
        sensitivity=1.0,
        rng=rng(23),
    )
    w = np.exp(EM_EPSILON * SCORES1 / 2)
    p = w / w.sum()
    freq = np.bincount(picks, minlength=EM_M) / EM_TRIALS
    np.testing.assert_allclose(freq, p, atol=5 * math.sqrt(0.25 / EM_TRIALS))


def test_audit_exponential_mechanism() -> None:
    res = audit_epsilon(_em(1.0), SCORES0, SCORES1, trials=EM_TRIALS, rng=rng(24))
    assert_audit_passes(res, EM_EPSILON)
    # The true log ratio is log(e^eps * 10 / (e^eps + 9)) ~ 0.86 eps: a tight bound.
    assert res.epsilon_lower > 0.75 * EM_EPSILON

    broken = audit_epsilon(_em(0.25), SCORES0, SCORES1, trials=EM_TRIALS, rng=rng(25))
    assert audit_fails(broken, EM_EPSILON)
    assert broken.epsilon_lower > 2 * EM_EPSILON


def test_mst_selection_epsilon_matches_its_zcdp_share(fitted) -> None:
    # Each selection is eps-DP and eps^2/8-zCDP; the d - 1 selections use a third.
    d = len(DOMAIN)
    eps_each = exponential_mechanism_epsilon(rho=fitted.rho / 3 / (d - 1))
    spends = [s.rho for s in fitted.accountant_.history if s.label.startswith("tree")]
    assert spends == pytest.approx([eps_each**2 / 8] * (d - 1), rel=1e-12)
