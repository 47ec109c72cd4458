"""Tests for dpnotes.bounds: log-size sums, Laplace tails, Dirichlet fits, error bounds.

References used: scipy.stats (beta expectations, Laplace tails, Dirichlet densities),
brute force over small integer compositions, and Monte Carlo with fixed seeds.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import optimize, special, stats

from dpnotes.bounds import (
    best_case_log_size_sum,
    expected_case_error_bound,
    expected_log_size_sum,
    fit_dirichlet_alpha,
    laplace_sum_tail_bound,
    laplace_tail_bound,
    log_size_sum,
    min_log_size_sum,
    stratified_laplace_error_bound,
    worst_case_error_bound,
    worst_case_log_size_sum,
)
from dpnotes.mean import ClippedLaplace, stratified_mean


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def compositions(n: int, k: int):
    """All ways to write n as an ordered sum of k positive integers."""
    for cuts in itertools.combinations(range(1, n), k - 1):
        edges = (0, *cuts, n)
        yield [b - a for a, b in itertools.pairwise(edges)]


# --- validation -----------------------------------------------------------------------

BOUND = {"R": 1.0, "gamma": 0.1, "epsilon": 1.0}


@pytest.mark.parametrize(
    ("call", "err", "match"),
    [
        (lambda: log_size_sum([2.0, 0.5]), ValueError, "at least 1"),
        (lambda: log_size_sum([]), ValueError, "empty"),
        (lambda: log_size_sum([2.0, math.nan]), ValueError, "NaN"),
        (lambda: worst_case_log_size_sum(0, 10), ValueError, "k must be at least 1"),
        (lambda: worst_case_log_size_sum(5, 4), ValueError, "need n >= k"),
        (lambda: worst_case_log_size_sum(2, 0), ValueError, "n must be a positive"),
        (lambda: worst_case_log_size_sum(2.0, 10), TypeError, "k must be an integer"),
        (lambda: best_case_log_size_sum(3, 3), ValueError, "needs n > k"),
        (lambda: best_case_log_size_sum(3, 2), ValueError, "need n >= k"),
        (lambda: min_log_size_sum(3, 2), ValueError, "need n >= k"),
        (lambda: min_log_size_sum(0, 2), ValueError, "k must be at least 1"),
        (lambda: expected_log_size_sum(0.0, 3, 10), ValueError, "alpha must be"),
        (lambda: expected_log_size_sum(-1.0, 3, 10), ValueError, "alpha must be"),
        (lambda: expected_log_size_sum(1.0, 0, 10), ValueError, "k must be at least"),
        (lambda: expected_log_size_sum(1.0, 3, 0), ValueError, "n must be a positive"),
        (lambda: laplace_tail_bound(1.0, gamma=0.0), ValueError, "gamma must lie"),
        (lambda: laplace_tail_bound(1.0, gamma=1.0), ValueError, "gamma must lie"),
        (lambda: laplace_tail_bound(0.0, gamma=0.1), ValueError, "scale must be"),
        (lambda: laplace_tail_bound([1, -1], gamma=0.1), ValueError, "scale must be"),
        (lambda: laplace_sum_tail_bound([1.0], gamma=1.5), ValueError, "gamma"),
        (lambda: laplace_sum_tail_bound([1.0, 0.0], gamma=0.1), ValueError, "scales"),
        (lambda: laplace_sum_tail_bound([[1.0]], gamma=0.1), ValueError, "1-dim"),
        (lambda: laplace_sum_tail_bound([], gamma=0.1), ValueError, "1-dim|empty"),
        (
            lambda: stratified_laplace_error_bound([5, 0.5], **BOUND),
            ValueError,
            "at least 1",
        ),
        (
            lambda: stratified_laplace_error_bound([5, 5], R=0.0, gamma=0.1, epsilon=1),
            ValueError,
            "R must be",
        ),
        (
            lambda: stratified_laplace_error_bound([5, 5], R=1, gamma=1.0, epsilon=1),
            ValueError,
            "gamma must lie",
        ),
        (
            lambda: stratified_laplace_error_bound([5, 5], R=1, gamma=0.1, epsilon=0),
            ValueError,
            "epsilon must be",
        ),
        (lambda: worst_case_error_bound(3, 2, **BOUND), ValueError, "need n >= k"),
        (
            lambda: worst_case_error_bound(3, 10, R=-1.0, gamma=0.1, epsilon=1.0),
            ValueError,
            "R must be",
        ),
        (
            lambda: expected_case_error_bound(0.0, 3, 10, **BOUND),
            ValueError,
            "alpha must be",
        ),
        (
            lambda: expected_case_error_bound(1.0, 3, 10, R=1, gamma=0.0, epsilon=1),
            ValueError,
            "gamma must lie",
        ),
    ],
)
def test_rejects(call, err: type, match: str) -> None:
    with pytest.raises(err, match=match):
        call()


@pytest.mark.parametrize(
    ("args", "kwargs", "err", "match"),
    [
        ([0.5, 0.5, 0.0], {}, ValueError, "pseudocount=0.5"),
        ([[3, 0], [1, 1]], {}, ValueError, "zero proportion"),
        ([0.5, -0.1, 0.6], {}, ValueError, "non-negative"),
        ([1.0], {}, ValueError, "k >= 2"),
        (np.ones((2, 2, 2)), {}, ValueError, "k >= 2"),
        ([0.5, math.nan], {}, ValueError, "NaN"),
        ([0.2, 0.8], {"method": "moments"}, ValueError, "unknown method"),
        ([0.2, 0.8], {"pseudocount": -1.0}, ValueError, "pseudocount must be"),
        ([0.2, 0.8], {"method": "mc-moment"}, TypeError, "pass rng"),
        ([0.2, 0.8], {"method": "mc-sorted"}, TypeError, "pass rng"),
        ([0.2, 0.8], {"method": "mc-sorted", "rng": 1}, TypeError, "Generator"),
        (
            [0.2, 0.8],
            {"method": "mc-moment", "rng": rng(), "draws": 10},
            ValueError,
            "draws must be at least 100",
        ),
    ],
)
def test_fit_dirichlet_rejects(args, kwargs, err: type, match: str) -> None:
    with pytest.raises(err, match=match):
        fit_dirichlet_alpha(args, **kwargs)


def test_zero_proportion_works_with_pseudocount() -> None:
    counts = np.array([[30, 0, 10], [12, 5, 3]])
    got = fit_dirichlet_alpha(counts, pseudocount=0.5)
    expected = fit_dirichlet_alpha(
        (counts + 0.5) / (counts + 0.5).sum(1, keepdims=True)
    )
    assert got == pytest.approx(expected, rel=1e-12)
    assert 0 < got < math.inf


# --- log-size sums --------------------------------------------------------------------


def test_log_size_sum_values() -> None:
    assert log_size_sum([1, 2, 3]) == pytest.approx(math.log(6))
    got = log_size_sum(np.array([[1, 1, 8], [2, 2, 6]]))
    np.testing.assert_allclose(got, [math.log(8), math.log(24)])


@pytest.mark.parametrize(
    ("n", "k"), [(6, 1), (7, 2), (9, 3), (12, 3), (12, 4), (11, 4)]
)
def test_extremes_against_brute_force(n: int, k: int) -> None:
    sums = [sum(math.log(s) for s in c) for c in compositions(n, k)]
    assert min_log_size_sum(k, n) == pytest.approx(min(sums), abs=1e-12)
    # Jensen: k log(n/k) bounds every composition, with equality when k divides n.
    assert max(sums) <= worst_case_log_size_sum(k, n) + 1e-12
    if n % k == 0:
        assert worst_case_log_size_sum(k, n) == pytest.approx(max(sums), abs=1e-12)
    if n > k:
        # The paper's "best case" is not the minimum: it lies above it (for k > 1).
        best = best_case_log_size_sum(k, n)
        assert best == pytest.approx((k - 1) + math.log(n - k))
        if k > 1:  # (k - 1) >= 1 > log((n - k + 1) / (n - k))
            assert best > min(sums)


def test_worst_case_doc_value() -> None:
    assert worst_case_log_size_sum(9, 19_000) == pytest.approx(9 * math.log(19_000 / 9))


@pytest.mark.parametrize(
    ("alpha", "k"), [(0.5, 2), (0.5, 9), (1.0, 3), (2.0, 5), (5.0, 9), (20.0, 3)]
)
def test_expected_log_size_sum_references(alpha: float, k: int) -> None:
    n = 1000.0
    got = expected_log_size_sum(alpha, k, n)
    # Each g_i of a symmetric Dirichlet is Beta(alpha, (k - 1) alpha).
    e_log = stats.beta(alpha, (k - 1) * alpha).expect(np.log)
    assert got == pytest.approx(k * (e_log + math.log(n)), rel=1e-6, abs=1e-6)
    # Monte Carlo over Dirichlet draws; the tolerance is 4 standard errors.
    g = rng(int(alpha * 100) + k).dirichlet(np.full(k, alpha), size=100_000)
    s = np.log(n * g).sum(axis=1)
    assert np.all(np.isfinite(s))
    assert got == pytest.approx(s.mean(), abs=4 * s.std() / math.sqrt(s.size))
    # It never exceeds the worst case k log(n / k).
    assert got <= worst_case_log_size_sum(k, n)


def test_expected_log_size_sum_tight_for_large_alpha() -> None:
    k, n = 9, 19_000.0
    worst = worst_case_log_size_sum(k, n)
    values = [expected_log_size_sum(a, k, n) for a in (0.1, 1.0, 10.0, 1e3, 1e5)]
    assert np.all(np.diff(values) > 0)  # more equal groups, larger sum
    # psi(a) - psi(k a) = -log k - (k - 1) / (2 k a) + O(a^-2): gap ~ (k - 1) / (2 a).
    for a, v in zip((1e3, 1e5), values[-2:], strict=True):
        assert worst - v == pytest.approx((k - 1) / (2 * a), rel=0.01)
    assert expected_log_size_sum(3.0, 1, n) == pytest.approx(math.log(n))  # k = 1


# --- Laplace tails --------------------------------------------------------------------


@pytest.mark.parametrize("gamma", [0.5, 0.1, 0.01, 1e-6])
def test_laplace_tail_bound_against_scipy(gamma: float) -> None:
    scales = np.array([0.1, 1.0, 7.5])
    t = laplace_tail_bound(scales, gamma=gamma)
    assert t.shape == (3,)
    # P(|Y| > t) = 2 P(Y > t) for Y ~ Lap(b): exactly gamma.
    np.testing.assert_allclose(2 * stats.laplace(scale=scales).sf(t), gamma, rtol=1e-10)
    one = laplace_tail_bound(2.0, gamma=gamma)
    assert isinstance(one, float)
    assert 2 * stats.laplace(scale=2.0).sf(one) == pytest.approx(gamma, rel=1e-10)


@pytest.mark.parametrize(
    "scales",
    [
        np.full(10, 1.0),
        np.array([0.2, 0.5, 1.0, 3.0]),
        np.array([5.0, 0.1, 0.1, 0.1, 0.1]),  # one scale dominates
        np.full(200, 0.3),
    ],
    ids=["equal", "mixed", "dominant", "many"],
)
@pytest.mark.parametrize("gamma", [0.2, 0.05])
def test_laplace_sum_tail_bound_coverage(scales: np.ndarray, gamma: float) -> None:
    t = laplace_sum_tail_bound(scales, gamma=gamma)
    draws = 20_000
    r = rng(len(scales))
    total = (r.laplace(size=(draws, scales.size)) * scales).sum(axis=1)
    exceed = np.mean(np.abs(total) > t)
    # P(|sum| > t) <= gamma; the observed rate has binomial sd <= sqrt(gamma / draws),
    # so 3 of those is the allowance.
    assert exceed <= gamma + 3 * math.sqrt(gamma / draws)
    # Not vacuous: within a small factor of the true (1 - gamma) quantile. The worst
    # case is one dominant scale b: the bound is then about 2 sqrt(2) b log(2 / gamma)
    # against the exact b log(1 / gamma), a factor ~4.1 at gamma = 0.2.
    assert t < 5 * np.quantile(np.abs(total), 1 - gamma)


def test_laplace_sum_tail_bound_single_scale_is_exact() -> None:
    for gamma in (0.3, 0.05):
        t = laplace_sum_tail_bound(np.array([2.5]), gamma=gamma)
        assert t == pytest.approx(laplace_tail_bound(2.5, gamma=gamma))
    # Smaller gamma, larger bound.
    b = np.array([1.0, 2.0, 0.5])
    assert laplace_sum_tail_bound(b, gamma=0.01) > laplace_sum_tail_bound(b, gamma=0.1)


# --- Dirichlet fits -------------------------------------------------------------------


def _scipy_mle(p: np.ndarray) -> float:
    """Maximise the summed scipy Dirichlet log-density over log alpha."""
    k = p.shape[1]

    def neg_loglik(log_a: float) -> float:
        return -float(np.sum(stats.dirichlet.logpdf(p.T, np.full(k, math.exp(log_a)))))

    res = optimize.minimize_scalar(
        neg_loglik, bounds=(-7.0, 7.0), method="bounded", options={"xatol": 1e-10}
    )
    return math.exp(res.x)


@pytest.mark.parametrize(("alpha", "k", "m"), [(0.4, 3, 5), (2.0, 5, 50), (8.0, 2, 20)])
def test_mle_is_the_likelihood_maximiser(alpha: float, k: int, m: int) -> None:
    p = rng(k).dirichlet(np.full(k, alpha), size=m)
    got = fit_dirichlet_alpha(p)
    assert got == pytest.approx(_scipy_mle(p), rel=1e-5)
    # Counts give the same fit as their proportions.
    counts = np.round(p * 1000) + 1
    assert fit_dirichlet_alpha(counts) == pytest.approx(
        fit_dirichlet_alpha(counts / counts.sum(1, keepdims=True)), rel=1e-12
    )


def test_mle_doc_value_and_uniform() -> None:
    assert fit_dirichlet_alpha([0.7, 0.2, 0.1]) == pytest.approx(
        _scipy_mle(np.array([[0.7, 0.2, 0.1]])), rel=1e-5
    )
    assert fit_dirichlet_alpha([0.25] * 4) == math.inf  # equal groups: alpha -> inf
    assert fit_dirichlet_alpha([5, 5, 5]) == math.inf


@pytest.mark.parametrize(("alpha", "k"), [(0.5, 3), (0.5, 6), (3.0, 3), (3.0, 6)])
@pytest.mark.parametrize("method", ["mle", "mc-moment", "mc-sorted"])
def test_methods_recover_alpha(alpha: float, k: int, method: str) -> None:
    m = 3000
    p = rng(17).dirichlet(np.full(k, alpha), size=m)
    got = fit_dirichlet_alpha(p, method=method, rng=rng(18), draws=4000)
    # Standard error of the MLE from the Fisher information per vector,
    # k psi'(alpha) - k^2 psi'(k alpha); allow 4 of them (the MC methods get 5% more
    # for their simulation error with 4000 draws).
    info = k * special.polygamma(1, alpha) - k**2 * special.polygamma(1, k * alpha)
    se = 1 / math.sqrt(m * info)
    tol = 4 * se + (0 if method == "mle" else 0.05 * alpha)
    assert got == pytest.approx(alpha, abs=tol)


def test_mc_methods_deterministic_given_seed() -> None:
    p = rng(19).dirichlet(np.full(4, 1.5), size=200)
    for method in ("mc-moment", "mc-sorted"):
        a = fit_dirichlet_alpha(p, method=method, rng=rng(20), draws=1000)
        b = fit_dirichlet_alpha(p, method=method, rng=rng(20), draws=1000)
        assert a == b
    # The moment method is a simulation of the MLE's score equation.
    mc = fit_dirichlet_alpha(p, method="mc-moment", rng=rng(21), draws=8000)
    assert mc == pytest.approx(fit_dirichlet_alpha(p), rel=0.03)


# --- error bounds ---------------------------------------------------------------------


def test_stratified_bound_covers_eq1_error() -> None:
    # The stratified Eq. 1 estimator with the true group sizes as weights and sizes
    # (the leaky option): on the event that nothing is clipped its error is a sum of
    # independent Lap(2 h_i / (n eps)), which the bound covers with prob. >= 1 - gamma.
    sizes = np.array([10, 40, 150, 400])
    R, gamma, eps = 2.0, 0.1, 0.5
    r = rng(22)
    x = np.concatenate([np.clip(r.normal(0.0, 1.0, s), -3, 3) for s in sizes])
    g = np.repeat(np.arange(4), sizes)
    h = R + np.sqrt(np.log(sizes / gamma))
    assert np.abs(x).max() < h.min()  # clipping is not merely negligible but absent
    trials = 10_000
    res = stratified_mean(
        np.broadcast_to(x, (trials, x.size)),
        g,
        public_groups=range(4),
        estimator=ClippedLaplace(R=R, gamma=gamma),
        weights="private_sizes",
        leak_group_sizes=True,
        epsilon=eps,
        rng=rng(23),
    )
    err = np.abs(res.estimate - x.mean())
    bound = stratified_laplace_error_bound(sizes, R=R, gamma=gamma, epsilon=eps)
    # Coverage >= 1 - gamma up to 3 binomial sds of the observed rate.
    assert np.mean(err <= bound) >= 1 - gamma - 3 * math.sqrt(gamma / trials)
    # The bound must use n, not n_i, in the scales: with n_i it would be far larger.
    assert bound < 4 * np.quantile(err, 1 - gamma)
    # Same value as the Laplace sum bound on the explicit scales.
    scales = 2 * h / (sizes.sum() * eps)
    assert bound == pytest.approx(laplace_sum_tail_bound(scales, gamma=gamma))


def test_worst_case_bound_dominates_every_composition() -> None:
    k, n = 4, 400
    kw = {"R": 1.0, "gamma": 0.05, "epsilon": 1.0}
    worst = worst_case_error_bound(k, n, **kw)
    r = rng(24)
    for _ in range(200):
        sizes = 1 + r.multinomial(n - k, r.dirichlet(np.full(k, 0.3)))
        assert stratified_laplace_error_bound(sizes, **kw) <= worst * (1 + 1e-12)
    # Equal groups come close to it (only the squared-sum inequality is lost).
    equal = stratified_laplace_error_bound(np.full(k, n // k), **kw)
    assert equal > 0.8 * worst


def test_expected_case_bound_between_and_increasing() -> None:
    k, n = 9, 19_000
    kw = {"R": 1.0, "gamma": 0.1, "epsilon": 1.0}
    worst = worst_case_error_bound(k, n, **kw)
    values = [expected_case_error_bound(a, k, n, **kw) for a in (0.5, 1.0, 5.0, 1e4)]
    assert np.all(np.diff(values) > 0)
    assert values[-1] <= worst
    assert values[-1] == pytest.approx(worst, rel=1e-4)  # equal groups in the limit
    # Reference: the same formula written out.
    log_term = math.log(2 / 0.1)
    s = expected_log_size_sum(1.0, k, n)
    sum_sq = 8 / n**2 * (k + k * math.log(10) + s)
    b_max = 2 * (1 + math.sqrt(math.log(n / 0.1))) / n
    nu = max(math.sqrt(sum_sq), b_max * math.sqrt(log_term))
    assert values[1] == pytest.approx(nu * math.sqrt(8 * log_term), rel=1e-12)


def test_expected_case_bound_small_alpha_does_not_crash() -> None:
    kw = {"R": 1.0, "gamma": 0.1, "epsilon": 1.0}
    got = expected_case_error_bound(0.05, 9, 19_000, **kw)
    assert 0 < got <= worst_case_error_bound(9, 19_000, **kw)
