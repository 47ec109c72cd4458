"""Tests for dpnotes.synth.pgm: measurement log, mbi estimation, marginals, sampling.

mbi compiles one program per clique structure (a second or two each), so every test
here reuses the same tiny domain and two structures: a tree ``A-B-C-D`` and a
triangle ``A-B-C`` with a pendant ``C-D``.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpnotes.synth import pgm
from dpnotes.synth.marginals import all_kway, marginal

DOMAIN = {"A": 3, "B": 3, "C": 2, "D": 2}
ONEWAY = [("A",), ("B",), ("C",), ("D",)]
TREE = [("A", "B"), ("B", "C"), ("C", "D")]
TRIANGLE = [("A", "B"), ("A", "C"), ("B", "C"), ("C", "D")]
# mbi needs double precision; estimation switches it on, and these tests build mbi
# objects of their own (mbi warns about JAX's compilation cache, unused here).
pgm.enable_float64()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import mbi
ALL_CLIQUES = [cl for k in (1, 2, 3, 4) for cl in all_kway(DOMAIN, k)]


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def dependent_data(n: int = 1000, seed: int = 0) -> pd.DataFrame:
    """A table with strong dependence along the chain A - B - C - D."""
    r = rng(seed)
    a = r.integers(0, 3, n)
    b = np.where(r.random(n) < 0.8, a, r.integers(0, 3, n))
    c = ((b == 0) | (r.random(n) < 0.3)).astype(int)
    d = np.where(r.random(n) < 0.75, c, 1 - c)
    return pd.DataFrame({"A": a, "B": b, "C": c, "D": d})


DATA = dependent_data()


def noisy_log(cliques, sigma: float, seed: int = 0) -> pgm.MeasurementLog:
    r = rng(seed)
    log = pgm.MeasurementLog(DOMAIN)
    for cl in cliques:
        x = marginal(DATA, DOMAIN, cl)
        log.add(cl, x + r.normal(0.0, sigma, size=x.size), sigma)
    return log


@pytest.fixture(scope="module")
def tree_model() -> mbi.MarkovRandomField:
    # Moderate noise: a model that is not just the data, fitted on the tree structure.
    return pgm.estimate(noisy_log(ONEWAY + TREE, sigma=5.0, seed=1), iters=500)


@pytest.fixture(scope="module")
def triangle_model() -> mbi.MarkovRandomField:
    return pgm.estimate(noisy_log(ONEWAY + TRIANGLE, sigma=5.0, seed=2), iters=500)


# --- ScaledQuery ----------------------------------------------------------------------


def test_scaled_query_hashes_by_value() -> None:
    q1 = pgm.ScaledQuery((1.0, 1.0, 0.5))
    q2 = pgm.ScaledQuery((1.0, 1.0, 0.5))
    q3 = pgm.ScaledQuery((1.0, 0.5, 1.0))
    assert q1 == q2 and hash(q1) == hash(q2) and q1 is not q2
    assert q1 != q3
    assert len({q1, q2, q3}) == 2
    assert q1.op_norm_sq() == pytest.approx(1.0)
    assert pgm.ScaledQuery((0.5, 2.0)).op_norm_sq() == pytest.approx(4.0)
    factor = mbi.Factor(mbi.Domain(["A"], [3]), np.array([2.0, 4.0, 6.0]))
    np.testing.assert_allclose(np.asarray(q1(factor)), [2.0, 4.0, 3.0])


# --- MeasurementLog -------------------------------------------------------------------


def test_log_merges_by_inverse_variance() -> None:
    log = pgm.MeasurementLog(DOMAIN)
    y1, s1 = np.array([10.0, 20.0, 30.0]), 1.0
    y2, s2 = np.array([13.0, 14.0, 36.0]), 2.0
    log.add(("A",), y1, s1)
    log.add(("A",), y2, s2)
    assert len(log) == 1
    y, sd = log.value(("A",))
    w1, w2 = 1 / s1**2, 1 / s2**2
    np.testing.assert_allclose(y, (w1 * y1 + w2 * y2) / (w1 + w2), rtol=1e-14)
    np.testing.assert_allclose(y, [10.6, 18.8, 31.2], rtol=1e-14)
    assert sd == pytest.approx(1.0 / math.sqrt(1.25), rel=1e-14)
    # Three equal-variance measurements: the plain mean, std / sqrt(3).
    log.add(("B",), np.array([1.0, 2.0, 3.0]), 3.0)
    log.add(("B",), np.array([4.0, 2.0, 0.0]), 3.0)
    log.add(("B",), np.array([4.0, 5.0, 6.0]), 3.0)
    y, sd = log.value(("B",))
    np.testing.assert_allclose(y, [3.0, 3.0, 3.0], rtol=1e-14)
    assert sd == pytest.approx(math.sqrt(3.0), rel=1e-14)
    (m_a, m_b) = log.measurements()
    assert m_a.clique == ("A",) and m_b.clique == ("B",)
    assert m_a.stddev == pytest.approx(1.0 / math.sqrt(1.25), rel=1e-14)
    np.testing.assert_allclose(m_a.noisy_measurement, [10.6, 18.8, 31.2], rtol=1e-14)


def test_log_keeps_queries_apart() -> None:
    log = pgm.MeasurementLog(DOMAIN)
    q = pgm.ScaledQuery((1.0, 1.0, 0.5))
    log.add(("A",), np.ones(3), 1.0, q)
    log.add(("A",), np.zeros(3), 1.0)
    log.add(("A",), 3 * np.ones(3), 1.0, pgm.ScaledQuery((1.0, 1.0, 0.5)))
    assert len(log) == 2  # equal weights merge, the identity query stays apart
    assert log.cliques == [("A",)]
    np.testing.assert_allclose(log.value(("A",))[0], np.zeros(3))
    ms = log.measurements()
    assert isinstance(ms[1].query, pgm.ScaledQuery)
    np.testing.assert_allclose(ms[1].noisy_measurement, 2 * np.ones(3))
    assert ms[1].stddev == pytest.approx(math.sqrt(0.5))
    with pytest.raises(KeyError):
        log.value(("B",))


def _build(order: list[int], seed: int = 3) -> pgm.MeasurementLog:
    # Measurements of the tree and one-way marginals, two of ("B",), added in `order`.
    r = rng(seed)
    items = []
    for cl in [*ONEWAY, *TREE, ("B",)]:
        x = marginal(DATA, DOMAIN, cl)
        items.append((cl, x + r.normal(0.0, 4.0, size=x.size), 4.0))
    items[-1] = (items[-1][0], items[-1][1], 2.0)  # the repeat has another std
    log = pgm.MeasurementLog(DOMAIN)
    for i in order:
        log.add(*items[i])
    return log


def test_log_order_is_canonical_and_estimates_are_identical() -> None:
    forward = _build(list(range(8)))
    backward = _build([7, 6, 5, 4, 3, 2, 1, 0])
    shuffled = _build([5, 0, 7, 2, 6, 1, 4, 3])
    expected = [*ONEWAY, *TREE]
    for log in (forward, backward, shuffled):
        assert log.cliques == expected
        assert [m.clique for m in log.measurements()] == expected
    for m_f, m_b in zip(forward.measurements(), backward.measurements(), strict=True):
        np.testing.assert_array_equal(m_f.noisy_measurement, m_b.noisy_measurement)
        assert m_f.stddev == m_b.stddev
    models = [pgm.estimate(log, iters=300) for log in (forward, backward, shuffled)]
    for other in models[1:]:
        assert float(other.total) == float(models[0].total)
        assert other.cliques == models[0].cliques
        for cl in models[0].cliques:
            np.testing.assert_array_equal(
                np.asarray(other.potentials[cl].values),
                np.asarray(models[0].potentials[cl].values),
            )


def test_estimate_total_is_minimum_variance() -> None:
    log = pgm.MeasurementLog(DOMAIN)
    log.add(("A",), np.array([100.0, 200.0, 300.0]), 1.0)  # total 600, var 3
    log.add(("B",), np.array([200.0, 200.0, 260.0]), 2.0)  # total 660, var 12
    model = pgm.estimate(log, iters=1)
    assert float(model.total) == pytest.approx((600 / 3 + 660 / 12) / (1 / 3 + 1 / 12))


def test_estimate_total_counts_scaled_query_measurements() -> None:
    # MST's compressed one-way measurement: values 0..2 kept, 3 and 4 merged into one
    # cell whose sum is scaled by 1/sqrt(2). It still determines the total,
    # 300 + 200 + 100 + sqrt(2) * 1.0 ~ 601.4 (variance 3 + 2 = 5 sigma^2).
    w = 1 / math.sqrt(2)
    log = pgm.MeasurementLog({"A": 4})
    log.add(
        ("A",),
        np.array([300.0, 200.0, 100.0, 1.0]),
        1.0,
        pgm.ScaledQuery((1.0, 1.0, 1.0, w)),
    )
    model = pgm.estimate(log, iters=200)
    assert float(model.total) == pytest.approx(600 + 1 / w, rel=1e-6)


# --- estimation recovers exact measurements -----------------------------------------


def test_estimate_reproduces_nearly_exact_measurements() -> None:
    # With sigma = 1e-3 the measured marginals are the data's, which are consistent, so
    # the maximum-likelihood model reproduces them. Mirror descent converges like
    # 1/iters (about 0.04 counts of n = 1000 after 10^4 iterations).
    cliques = ONEWAY + TREE
    log = noisy_log(cliques, sigma=1e-3, seed=4)
    model = pgm.estimate(log, iters=10_000)
    got = pgm.model_marginals(model, DOMAIN, cliques)
    assert float(model.total) == pytest.approx(len(DATA), abs=0.01)
    for cl in cliques:
        np.testing.assert_allclose(got[cl], marginal(DATA, DOMAIN, cl), atol=0.1)
    # The same tolerance rejects the independence model on the chain's pairs: the test
    # can fail.
    oneway_only = pgm.estimate(noisy_log(ONEWAY, sigma=1e-3, seed=4), iters=2000)
    indep = pgm.model_marginals(oneway_only, DOMAIN, [("A", "B")])[("A", "B")]
    assert np.abs(indep - marginal(DATA, DOMAIN, ("A", "B"))).max() > 50


def test_warm_start_converges_faster() -> None:
    log = noisy_log(ONEWAY + TREE, sigma=1e-3, seed=5)
    target = {cl: marginal(DATA, DOMAIN, cl) for cl in TREE}

    def err(model) -> float:
        got = pgm.model_marginals(model, DOMAIN, TREE)
        return max(np.abs(got[cl] - target[cl]).max() for cl in TREE)

    cold = pgm.estimate(log, iters=2000)
    warm = pgm.estimate(log, iters=2000, warm_start=cold)
    assert err(warm) < 0.7 * err(cold)


def test_compiled_estimators_are_bounded(monkeypatch) -> None:
    # A long experiment compiles one estimator per structure; past the limit the cache
    # is dropped, and the estimates are unchanged by it.
    monkeypatch.setattr(pgm, "MAX_COMPILED", 2)
    monkeypatch.setattr(pgm, "_COMPILED", set())
    pgm._mirror_descent.clear_cache()
    logs = [noisy_log(ONEWAY + TREE[:k], sigma=1.0, seed=6) for k in (0, 1, 2)]
    first = pgm.estimate(logs[0], iters=50)
    for log in logs[1:]:
        pgm.estimate(log, iters=50)
        assert len(pgm._COMPILED) <= 2
        assert pgm._mirror_descent._cache_size() <= 2
    again = pgm.estimate(logs[0], iters=50)  # compiled anew after the drop
    for cl in ONEWAY:
        np.testing.assert_allclose(
            pgm.model_marginals(again, DOMAIN, [cl])[cl],
            pgm.model_marginals(first, DOMAIN, [cl])[cl],
        )


# --- model marginals ------------------------------------------------------------------


@pytest.mark.parametrize("which", ["tree", "triangle"])
def test_model_marginals_fast_path_matches_mbi(which, tree_model, triangle_model):
    model = tree_model if which == "tree" else triangle_model
    got = pgm.model_marginals(model, DOMAIN, ALL_CLIQUES)
    assert list(got) == ALL_CLIQUES
    for cl in ALL_CLIQUES:
        ref = np.asarray(model.project(cl).datavector())
        np.testing.assert_allclose(got[cl], ref, rtol=1e-9, atol=1e-9)
        assert got[cl].sum() == pytest.approx(float(model.total), rel=1e-9)
    joint = pgm.joint_table(model, DOMAIN)
    assert joint.shape == (3, 3, 2, 2) and joint.sum() == pytest.approx(1.0)
    again = pgm.model_marginals(model, DOMAIN, TREE, joint=joint)
    for cl in TREE:
        np.testing.assert_array_equal(again[cl], got[cl])


def test_model_marginals_slow_path(monkeypatch, tree_model) -> None:
    fast = pgm.model_marginals(tree_model, DOMAIN, ALL_CLIQUES)
    monkeypatch.setattr(pgm, "FULL_JOINT_CELLS", 0)
    slow = pgm.model_marginals(tree_model, DOMAIN, ALL_CLIQUES)
    for cl in ALL_CLIQUES:
        np.testing.assert_allclose(slow[cl], fast[cl], rtol=1e-9, atol=1e-9)


# --- sampling -------------------------------------------------------------------------

N_SAMPLES = 200_000


def _cell_counts(samples: dict[str, np.ndarray]) -> np.ndarray:
    flat = np.ravel_multi_index(
        tuple(samples[a] for a in DOMAIN), tuple(DOMAIN.values())
    )
    return np.bincount(flat, minlength=36)


def _check_sampler(model, seed: int) -> None:
    samples = pgm.sample_model(model, DOMAIN, N_SAMPLES, rng=rng(seed))
    assert list(samples) == list(DOMAIN)
    for a, size in DOMAIN.items():
        assert samples[a].dtype == np.int64 and samples[a].shape == (N_SAMPLES,)
        assert samples[a].min() >= 0 and samples[a].max() < size
    p = pgm.joint_table(model, DOMAIN).reshape(-1)
    counts = _cell_counts(samples)
    # Chi-square goodness of fit of the whole joint table (36 cells, each expected at
    # least a few hundred counts); with a fixed seed the p-value is a fixed number.
    assert stats.chisquare(counts, N_SAMPLES * p).pvalue > 1e-3
    # Every marginal of the model within 5 binomial standard errors.
    for cl in ALL_CLIQUES[:10]:
        q = pgm.model_marginals(model, DOMAIN, [cl])[cl] / float(model.total)
        emp = marginal(samples, DOMAIN, cl) / N_SAMPLES
        se = np.sqrt(q * (1 - q) / N_SAMPLES)
        assert np.all(np.abs(emp - q) <= 5 * se + 1e-12)
    # Power: the same test rejects the product of the one-way marginals.
    prod = np.ones((1,))
    for a in DOMAIN:
        q = pgm.model_marginals(model, DOMAIN, [(a,)])[(a,)] / float(model.total)
        prod = np.multiply.outer(prod, q)
    assert stats.chisquare(counts, N_SAMPLES * prod.reshape(-1)).pvalue < 1e-12


@pytest.mark.parametrize("path", ["full_joint", "sequential"])
@pytest.mark.parametrize("which", ["tree", "triangle"])
def test_sample_model_matches_model(
    path, which, monkeypatch, tree_model, triangle_model
) -> None:
    model = tree_model if which == "tree" else triangle_model
    if path == "sequential":
        # The joint-table fast paths are switched off, so marginals (for the checks)
        # and samples both go through mbi's variable elimination.
        monkeypatch.setattr(pgm, "FULL_JOINT_CELLS", 0)
    _check_sampler(model, seed=10)


@pytest.mark.parametrize("path", ["full_joint", "sequential"])
def test_sample_model_deterministic(path, monkeypatch, triangle_model) -> None:
    if path == "sequential":
        monkeypatch.setattr(pgm, "FULL_JOINT_CELLS", 0)
    a = pgm.sample_model(triangle_model, DOMAIN, 500, rng=rng(7))
    b = pgm.sample_model(triangle_model, DOMAIN, 500, rng=rng(7))
    c = pgm.sample_model(triangle_model, DOMAIN, 500, rng=rng(8))
    for attr in DOMAIN:
        np.testing.assert_array_equal(a[attr], b[attr])
    assert any(not np.array_equal(a[attr], c[attr]) for attr in DOMAIN)
    empty = pgm.sample_model(triangle_model, DOMAIN, 0, rng=rng(7))
    assert all(v.shape == (0,) and v.dtype == np.int64 for v in empty.values())


def test_sample_paths_agree_in_distribution(monkeypatch, triangle_model) -> None:
    fast = pgm.sample_model(triangle_model, DOMAIN, N_SAMPLES, rng=rng(11))
    monkeypatch.setattr(pgm, "FULL_JOINT_CELLS", 0)
    slow = pgm.sample_model(triangle_model, DOMAIN, N_SAMPLES, rng=rng(12))
    table = np.stack([_cell_counts(fast), _cell_counts(slow)])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > 1e-3


def test_model_size_mb_grows_with_cliques() -> None:
    small = pgm.model_size_mb(DOMAIN, TREE)
    big = pgm.model_size_mb(DOMAIN, [("A", "B", "C", "D")])
    assert 0 < small < big
    assert big == pytest.approx(36 * 8 / 2**20, rel=1e-9)  # 36 doubles


# --- the caller's JAX configuration ---------------------------------------------------

_IMPORT_CHECK = """
import json
import jax
before = {k: getattr(jax.config, k) for k in KEYS}
import dpnotes.synth
import dpnotes.synth.mst, dpnotes.synth.aim, dpnotes.synth.pgm
after_import = {k: getattr(jax.config, k) for k in KEYS}
import numpy as np, pandas as pd
r = np.random.default_rng(0)
df = pd.DataFrame({"A": r.integers(0, 3, 200), "B": r.integers(0, 2, 200)})
dpnotes.synth.MST(epsilon=1.0, delta=1e-6).fit(df, {"A": 3, "B": 2}, rng=r)
after_fit = {k: getattr(jax.config, k) for k in KEYS}
print(json.dumps([before, after_import, after_fit]))
"""


def test_importing_synth_leaves_the_callers_jax_configuration_alone():
    keys = [
        "jax_enable_x64",
        "jax_enable_compilation_cache",
        "jax_compilation_cache_dir",
    ]
    out = subprocess.run(
        [sys.executable, "-c", f"KEYS = {keys!r}" + _IMPORT_CHECK],
        capture_output=True,
        text=True,
        check=True,
    )
    before, after_import, after_fit = json.loads(out.stdout.strip().splitlines()[-1])
    assert before["jax_enable_x64"] is False
    assert after_import == before, "importing dpnotes.synth changed JAX's settings"
    # Estimation switches on double precision, which mbi needs, and (no cache folder
    # being set) the persistent compilation cache off, as mbi advises.
    assert after_fit == {
        **before,
        "jax_enable_x64": True,
        "jax_enable_compilation_cache": False,
    }
    assert "float32 mode" not in out.stderr, "mbi was imported before float64 was on"


_CACHE_CHOSEN = """
import json, sys
import jax
jax.config.update("jax_compilation_cache_dir", sys.argv[1])
jax.config.update("jax_enable_compilation_cache", True)
import numpy as np, pandas as pd
from dpnotes.synth import MST
r = np.random.default_rng(0)
df = pd.DataFrame({"A": r.integers(0, 3, 200), "B": r.integers(0, 2, 200)})
MST(epsilon=1.0, delta=1e-6).fit(df, {"A": 3, "B": 2}, rng=r)
print(json.dumps(bool(jax.config.jax_enable_compilation_cache)))
"""


def test_estimation_keeps_a_compilation_cache_the_caller_chose(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", _CACHE_CHOSEN, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) is True
    assert "compilation cache is enabled" not in out.stderr
