"""Tests for dpnotes.mean.stratified: stratified means, weights, holdouts and audits.

Neighbouring relation of the module: same public ``n``, one person's record differs,
*including its group*. The audits below use two kinds of neighbours: a record that
moves from group ``a`` to group ``b`` (group sizes change), and a record replaced
inside its group at the two clip edges. With public weights every released quantity
must pass at the claimed budget; the paper's ``weights="private_sizes"`` (with
``leak_group_sizes=True``) must be caught, because its noise scale depends on the
private group size.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from dpnotes.accounting import rho_to_epsilon
from dpnotes.audit import assert_audit_passes, audit_epsilon, audit_fails
from dpnotes.mean import (
    PRIVATE_SIZES,
    ClippedLaplace,
    Coinpress,
    PrivatisedCounts,
    StratifiedEstimate,
    holdout_weights,
    pub_strat_coinpress,
    split_holdout,
    strat_coinpress,
    stratified_mean,
)
from dpnotes.mechanisms import clipped_laplace_half_width

TRIALS = 500_000  # runs per dataset in each audit (vectorised, ~0.4 s per audit)
LAPLACE = ClippedLaplace(R=3.0, gamma=0.1)
COINPRESS = Coinpress(lower=-10.0, upper=10.0)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def grouped_data(seed: int = 0, scale: int = 10):
    """Three groups of 20/30/50 records times ``scale``, each within 2 of its mean."""
    sizes = np.array([20, 30, 50]) * scale
    means = np.array([-2.0, 0.5, 1.5])
    r = rng(seed)
    x = np.concatenate(
        [
            np.clip(r.normal(m, 1.0, s), m - 2, m + 2)
            for m, s in zip(means, sizes, strict=True)
        ]
    )
    labels = np.repeat(np.array(["low", "mid", "high"]), sizes)
    order = r.permutation(x.size)
    return x[order], labels[order], sizes


# --- validation -----------------------------------------------------------------------

X2 = np.array([0.1, 0.2, 0.3, 0.4])
G2 = np.array(["a", "a", "b", "b"])


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"x": [], "groups": []}, ValueError, "empty"),
        ({"x": np.zeros((3, 0)), "groups": []}, ValueError, "empty"),
        ({"groups": G2[:3]}, ValueError, "one group label per record"),
        ({"groups": np.append(G2, "a")}, ValueError, "one group label per record"),
        ({"groups": np.array(["a", "a", "b", "z"])}, ValueError, "not in the public"),
        ({"public_groups": []}, ValueError, "public_groups is empty"),
        ({"public_groups": ["a", "b", "a"]}, ValueError, "duplicates"),
        ({"weights": [1.2, -0.2]}, ValueError, "non-negative"),
        ({"weights": [0.5, 0.4]}, ValueError, "sum to 1"),
        ({"weights": [0.6, 0.6]}, ValueError, "sum to 1"),
        ({"weights": [1.0]}, ValueError, "one weight per group"),
        ({"weights": [0.2, 0.3, 0.5]}, ValueError, "one weight per group"),
        ({"weights": [[0.5, 0.5]]}, ValueError, "no trial axis"),
        ({"weights": [0.5, math.nan]}, ValueError, "NaN"),
        ({"weights": "sizes"}, ValueError, "unknown weights"),
        ({"x": [0.1, math.nan, 0.3, 0.4]}, ValueError, "1 NaN"),
        ({"x": [0.1, 0.2, math.inf, 0.4]}, ValueError, "1 infinite"),
        ({"x": np.zeros((2, 2, 4))}, ValueError, r"shape \(n,\) or \(trials, n\)"),
        ({"groups": np.array([0.0, 1.0, math.nan, 1.0])}, ValueError, "NaN/inf"),
        ({"epsilon": None, "rho": 0.5}, ValueError, "pure-DP estimator"),
        ({"rho": 0.5}, ValueError, "pure-DP estimator"),
        ({"epsilon": None}, ValueError, "pure-DP estimator"),
        ({"epsilon": 0.0}, ValueError, "privacy budget"),
        ({"epsilon": -1.0}, ValueError, "privacy budget"),
        ({"epsilon": math.inf}, ValueError, "privacy budget"),
        ({"estimator": COINPRESS}, ValueError, "zCDP estimator"),
        ({"estimator": COINPRESS, "epsilon": None}, ValueError, "zCDP estimator"),
        ({"estimator": COINPRESS, "epsilon": None, "rho": 0.0}, ValueError, "zCDP"),
        ({"estimator": COINPRESS, "epsilon": None, "rho": -1.0}, ValueError, "zCDP"),
        ({"estimator": "laplace"}, TypeError, "estimator must be"),
        ({"rng": 0}, TypeError, "numpy.random.Generator"),
        ({"rng": None}, TypeError, "numpy.random.Generator"),
    ],
)
def test_rejects(kwargs: dict, err: type, match: str) -> None:
    args = {
        "x": X2,
        "groups": G2,
        "public_groups": ["a", "b"],
        "estimator": LAPLACE,
        "weights": [0.5, 0.5],
        "epsilon": 1.0,
        "rng": rng(),
    }
    args.update(kwargs)
    with pytest.raises(err, match=match):
        stratified_mean(args.pop("x"), args.pop("groups"), **args)


def test_trial_weights_must_match_trials() -> None:
    with pytest.raises(ValueError, match="3 rows but x has 2 trials"):
        stratified_mean(
            np.zeros((2, 4)),
            G2,
            public_groups=["a", "b"],
            estimator=LAPLACE,
            weights=np.full((3, 2), 0.5),
            epsilon=1.0,
            rng=rng(),
        )


@pytest.mark.parametrize("estimator", [LAPLACE, COINPRESS], ids=["laplace", "coin"])
def test_private_sizes_needs_the_leak_flag(estimator) -> None:
    budget = {"epsilon": 1.0} if estimator is LAPLACE else {"rho": 0.5}
    with pytest.raises(ValueError, match="leak_group_sizes=True") as info:
        stratified_mean(
            X2,
            G2,
            public_groups=["a", "b"],
            estimator=estimator,
            weights=PRIVATE_SIZES,
            rng=rng(),
            **budget,
        )
    assert "not differentially private" in str(info.value)
    res = stratified_mean(
        X2,
        G2,
        public_groups=["a", "b"],
        estimator=estimator,
        weights=PRIVATE_SIZES,
        rng=rng(),
        leak_group_sizes=True,
        **budget,
    )
    assert res.leaks_group_sizes
    np.testing.assert_array_equal(res.sizes, [2.0, 2.0])


def test_unknown_labels_do_not_rely_on_deprecated_pandas_behaviour() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with pytest.raises(ValueError, match="not in the public list"):
            holdout_weights(["a", "q"], ["a", "b"])


@pytest.mark.parametrize(
    ("make", "err", "match"),
    [
        (lambda: ClippedLaplace(R=0.0), ValueError, "R must be a positive"),
        (lambda: ClippedLaplace(R=-1.0), ValueError, "R must be a positive"),
        (lambda: ClippedLaplace(R=math.nan), ValueError, "R must be a positive"),
        (lambda: ClippedLaplace(R=1.0, gamma=0.0), ValueError, "gamma must lie"),
        (lambda: ClippedLaplace(R=1.0, gamma=1.0), ValueError, "gamma must lie"),
        (lambda: ClippedLaplace(R=1.0, gamma=1.5), ValueError, "gamma must lie"),
        (lambda: Coinpress(lower=1.0, upper=1.0), ValueError, "must be below"),
        (lambda: Coinpress(lower=2.0, upper=1.0), ValueError, "must be below"),
        (lambda: Coinpress(lower=-1, upper=math.inf), ValueError, "infinite"),
        (lambda: Coinpress(lower=-1, upper=1, t=0), ValueError, "t must be at least"),
        (lambda: Coinpress(lower=-1, upper=1, t=1.5), TypeError, "t must be an int"),
        (lambda: Coinpress(lower=-1, upper=1, sigma=0), ValueError, "sigma must be"),
        (lambda: Coinpress(lower=-1, upper=1, beta=1.0), ValueError, "beta must lie"),
        (lambda: PrivatisedCounts(share=0.0), ValueError, "share must lie"),
        (lambda: PrivatisedCounts(share=1.0), ValueError, "share must lie"),
    ],
)
def test_estimator_configs_reject(make, err: type, match: str) -> None:
    with pytest.raises(err, match=match):
        make()


def test_coinpress_bad_fractions_rejected_at_run() -> None:
    est = Coinpress(lower=-1.0, upper=1.0, t=2, rho_fractions=(0.5, 0.6))
    with pytest.raises(ValueError, match="sum to 1"):
        stratified_mean(
            X2,
            G2,
            public_groups=["a", "b"],
            estimator=est,
            weights=[0.5, 0.5],
            rho=0.5,
            rng=rng(),
        )


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (([], ["a"]), {}, "holdout is empty"),
        ((["a", "q"], ["a", "b"]), {}, "not in the public list"),
        ((["a"], ["a", "b"]), {"pseudocount": -1.0}, "pseudocount must be >= 0"),
        ((["a"], ["a", "b"]), {"pseudocount": math.nan}, "pseudocount must be >= 0"),
        # pandas' message, not the package's own (see the report); any ValueError.
        ((["a"], ["a", "b", "b"]), {}, "(?i)duplicat|unique"),
    ],
)
def test_holdout_weights_rejects(args, kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        holdout_weights(*args, **kwargs)


@pytest.mark.parametrize(
    ("x", "groups", "kwargs", "err", "match"),
    [
        (np.zeros(10), np.zeros(10), {"fraction": 0.0}, ValueError, "fraction"),
        (np.zeros(10), np.zeros(10), {"fraction": 1.0}, ValueError, "fraction"),
        (np.zeros(1), np.zeros(1), {}, ValueError, "at least two records"),
        (np.zeros(10), np.zeros(9), {}, ValueError, "same number of records"),
        (np.zeros((2, 2, 5)), np.zeros(5), {}, ValueError, "same number of records"),
        (np.zeros(10), np.zeros(10), {"rng": 1}, TypeError, "numpy.random.Generator"),
        ([1.0, math.nan], np.zeros(2), {}, ValueError, "NaN"),
    ],
)
def test_split_holdout_rejects(x, groups, kwargs, err, match) -> None:
    args = {"fraction": 0.5, "rng": rng()}
    args.update(kwargs)
    with pytest.raises(err, match=match):
        split_holdout(x, groups, **args)


# --- values with a huge budget --------------------------------------------------------

HUGE = [
    pytest.param(LAPLACE, {"epsilon": 1e13}, id="laplace"),
    pytest.param(COINPRESS, {"rho": 1e24}, id="coinpress"),
]


@pytest.mark.parametrize(("estimator", "budget"), HUGE)
def test_huge_budget_gives_weighted_group_means(estimator, budget) -> None:
    x, labels, _ = grouped_data()
    public = ["high", "low", "mid"]  # column order follows the public list
    n_i = np.array([500, 200, 300])
    w = n_i / n_i.sum()
    res = stratified_mean(
        x,
        labels,
        public_groups=public,
        estimator=estimator,
        weights=w,
        rng=rng(1),
        **budget,
    )
    means = np.array([x[labels == g].mean() for g in public])
    assert isinstance(res, StratifiedEstimate)
    np.testing.assert_allclose(res.group_estimates, means, rtol=0, atol=1e-8)
    assert res.estimate == pytest.approx(float(w @ means), abs=1e-8)
    assert res.estimate == pytest.approx(x.mean(), abs=1e-8)  # true proportions
    np.testing.assert_allclose(res.sizes, n_i)
    np.testing.assert_allclose(res.weights, w)
    assert res.public_groups == ("high", "low", "mid")
    assert not res.leaks_group_sizes
    assert (res.epsilon, res.rho) == (
        (budget["epsilon"], None) if "epsilon" in budget else (None, budget["rho"])
    )


@pytest.mark.parametrize(("estimator", "budget"), HUGE)
def test_huge_budget_with_per_trial_groups(estimator, budget) -> None:
    r = rng(2)
    x = r.uniform(-1.0, 1.0, size=(3, 40)) + np.array([[0.0], [2.0], [-1.0]])
    groups = r.integers(0, 2, size=(3, 40))
    groups[:, :2] = [0, 1]  # both groups present in every trial
    w = np.stack([np.bincount(g, minlength=2) / 40 for g in groups])
    res = stratified_mean(
        x,
        groups,
        public_groups=[0, 1],
        estimator=estimator,
        weights=w,
        rng=rng(3),
        **budget,
    )
    assert res.group_estimates.shape == (3, 2) and res.estimate.shape == (3,)
    for t in range(3):
        for g in (0, 1):
            assert res.group_estimates[t, g] == pytest.approx(
                x[t, groups[t] == g].mean(), abs=1e-8
            )
    np.testing.assert_allclose(res.estimate, x.mean(axis=1), atol=1e-8)


@pytest.mark.parametrize(("estimator", "budget"), HUGE)
def test_empty_listed_group(estimator, budget) -> None:
    x, labels, _ = grouped_data(4)
    public = ["low", "mid", "high", "none"]  # "none" has no records
    w = np.array([0.2, 0.3, 0.4, 0.1])
    res = stratified_mean(
        x,
        labels,
        public_groups=public,
        estimator=estimator,
        weights=w,
        rng=rng(5),
        **budget,
    )
    assert np.all(np.isfinite(res.group_estimates))
    assert math.isfinite(res.estimate)
    # No records: the estimate is the clip interval's centre (0 for both estimators
    # here) plus noise, which vanishes with the huge budget.
    assert res.group_estimates[3] == pytest.approx(0.0, abs=1e-6)
    np.testing.assert_allclose(res.weights, w)

    # With weight zero the group is skipped: NaN estimate, zero weight.
    w0 = np.array([0.2, 0.3, 0.5, 0.0])
    res = stratified_mean(
        x,
        labels,
        public_groups=public,
        estimator=estimator,
        weights=w0,
        rng=rng(5),
        **budget,
    )
    assert np.isnan(res.group_estimates[3]) and res.weights[3] == 0.0
    assert np.all(np.isfinite(res.group_estimates[:3]))
    assert math.isfinite(res.estimate)
    np.testing.assert_allclose(res.weights, w0)


def test_public_size_below_one_record_is_skipped_and_renormalised() -> None:
    x, labels, _ = grouped_data(6)  # n = 1000
    w = np.array([0.9995, 0.0005, 0.0])  # public sizes 999.5, 0.5, 0
    res = stratified_mean(
        x,
        labels,
        public_groups=["low", "mid", "high"],
        estimator=LAPLACE,
        weights=w,
        epsilon=1e13,
        rng=rng(),
    )
    assert np.isnan(res.group_estimates[1]) and np.isnan(res.group_estimates[2])
    np.testing.assert_allclose(res.weights, [1.0, 0.0, 0.0])
    # The 200 "low" records summed and divided by the public size 999.5.
    assert res.estimate == pytest.approx(x[labels == "low"].sum() / 999.5, abs=1e-8)


# --- determinism and vectorisation ----------------------------------------------------


@pytest.mark.parametrize(
    ("estimator", "budget", "weights"),
    [
        (LAPLACE, {"epsilon": 1.0}, [0.3, 0.2, 0.5]),
        (COINPRESS, {"rho": 0.5}, [0.3, 0.2, 0.5]),
        (LAPLACE, {"epsilon": 1.0}, PrivatisedCounts(0.2)),
        (COINPRESS, {"rho": 0.5}, PrivatisedCounts(0.2)),
    ],
    ids=["laplace", "coinpress", "laplace-counts", "coinpress-counts"],
)
def test_deterministic(estimator, budget, weights) -> None:
    x, labels, _ = grouped_data(7)
    x = np.stack([x, x[::-1]])

    def run(seed: int) -> StratifiedEstimate:
        return stratified_mean(
            x,
            labels,
            public_groups=["mid", "low", "high"],
            estimator=estimator,
            weights=weights,
            rng=rng(seed),
            **budget,
        )

    a, b = run(8), run(8)
    np.testing.assert_array_equal(a.estimate, b.estimate)
    np.testing.assert_array_equal(a.group_estimates, b.group_estimates)
    np.testing.assert_array_equal(a.sizes, b.sizes)
    assert a.estimate.shape == (2,) and a.group_estimates.shape == (2, 3)
    assert not np.array_equal(a.group_estimates, run(9).group_estimates)


@pytest.mark.parametrize(
    ("estimator", "budget"),
    [(LAPLACE, {"epsilon": 0.5}), (COINPRESS, {"rho": 0.5})],
    ids=["laplace", "coinpress"],
)
def test_vectorised_matches_loop_in_distribution(estimator, budget) -> None:
    r = rng(10)
    n = 60
    x = np.r_[r.normal(-1.0, 1.0, 20), r.normal(1.0, 1.0, 40)]
    g = np.r_[np.zeros(20, int), np.ones(40, int)]
    kw = {
        "public_groups": [0, 1],
        "estimator": estimator,
        "weights": [1 / 3, 2 / 3],
        **budget,
    }
    trials = 2000
    vec = stratified_mean(np.broadcast_to(x, (trials, n)), g, rng=rng(11), **kw)
    one = stratified_mean(x, g, rng=rng(11), **kw)
    assert isinstance(one.estimate, float) and one.group_estimates.shape == (2,)
    assert one.weights.shape == one.sizes.shape == (2,)
    r = rng(12)
    loop = [stratified_mean(x, g, rng=r, **kw) for _ in range(trials)]
    loop_est = np.array([res.estimate for res in loop])
    loop_groups = np.array([res.group_estimates for res in loop])
    # Same distribution: means within 4 standard errors of their difference, sample
    # sds within 10% (relative sd of a sample sd of 2000 heavy-ish draws is ~2-3%).
    for v, lp in [(vec.estimate, loop_est)] + [
        (vec.group_estimates[:, j], loop_groups[:, j]) for j in range(2)
    ]:
        se = lp.std() * math.sqrt(2 / trials)
        assert v.mean() == pytest.approx(lp.mean(), abs=4 * se)
        assert v.std() == pytest.approx(lp.std(), rel=0.1)
        assert stats.ks_2samp(v, lp).pvalue > 0.001


def test_laplace_group_noise_has_eq1_scale() -> None:
    # Public size m_i: group i's estimate is (clipped sum + Lap(2 h_i / eps)) / m_i.
    x, labels, _ = grouped_data(13, scale=1)
    w = np.array([0.25, 0.25, 0.5])  # not the true proportions 0.2/0.3/0.5
    trials, eps = 20_000, 0.8
    res = stratified_mean(
        np.broadcast_to(x, (trials, x.size)),
        labels,
        public_groups=["low", "mid", "high"],
        estimator=LAPLACE,
        weights=w,
        epsilon=eps,
        rng=rng(14),
    )
    m = w * x.size
    h = clipped_laplace_half_width(m, R=LAPLACE.R, gamma=LAPLACE.gamma)
    assert np.abs(x).max() < h.min()  # nothing is clipped
    for j, g in enumerate(["low", "mid", "high"]):
        noise = res.group_estimates[:, j] * m[j] - x[labels == g].sum()
        ref = stats.laplace(scale=2 * h[j] / eps)
        assert stats.kstest(noise, ref.cdf).pvalue > 0.001
        wrong = stats.laplace(scale=1.8 * h[j] / eps)  # 10% less noise is rejected
        assert stats.kstest(noise, wrong.cdf).pvalue < 1e-6
    # The overall estimate is the public-weighted sum of the group releases.
    np.testing.assert_allclose(res.estimate, res.group_estimates @ w)


# --- privatised counts ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("estimator", "budget", "noise", "wrong"),
    [
        # L1 sensitivity 2 -> Laplace scale 2 / (share eps) = 1; a sensitivity of 1
        # would give scale 0.5.
        (LAPLACE, {"epsilon": 4.0}, stats.laplace(scale=1.0), stats.laplace(scale=0.5)),
        # L2 sensitivity sqrt(2) -> sd 1 / sqrt(share rho) = 1; a sensitivity of 1
        # would give sd 1 / sqrt(2).
        (
            COINPRESS,
            {"rho": 2.0},
            stats.norm(scale=1.0),
            stats.norm(scale=math.sqrt(0.5)),
        ),
    ],
    ids=["laplace", "coinpress"],
)
def test_privatised_counts_noise(estimator, budget, noise, wrong) -> None:
    x, labels, sizes = grouped_data(15, scale=1)
    trials = 20_000
    res = stratified_mean(
        np.broadcast_to(x, (trials, x.size)),
        labels,
        public_groups=["low", "mid", "high"],
        estimator=estimator,
        weights=PrivatisedCounts(share=0.5),
        rng=rng(16),
        **budget,
    )
    assert res.sizes.shape == (trials, 3)
    err = res.sizes - sizes  # counts >= 20 = 20 noise sds: the clamp at 0 never acts
    for j in range(3):
        assert stats.kstest(err[:, j], noise.cdf).pvalue > 0.001
        assert stats.kstest(err[:, j], wrong.cdf).pvalue < 1e-6
    # 20k draws: the sample sd has a relative sd below 2%.
    np.testing.assert_allclose(err.std(axis=0), noise.std(), rtol=0.05)
    np.testing.assert_allclose(res.weights, res.sizes / res.sizes.sum(1, keepdims=True))
    assert res.epsilon == budget.get("epsilon") and res.rho == budget.get("rho")


def test_privatised_counts_means_get_the_rest_of_the_budget() -> None:
    # The group means run on (1 - share) epsilon with the noisy counts as sizes:
    # est_i * m_i - clipped sum_i ~ Lap(2 h(m_i) / ((1 - share) eps)).
    x, labels, _ = grouped_data(17, scale=1)
    trials, eps, share = 20_000, 4.0, 0.5  # count noise Lap(1): no size near zero
    res = stratified_mean(
        np.broadcast_to(x, (trials, x.size)),
        labels,
        public_groups=["low", "mid", "high"],
        estimator=LAPLACE,
        weights=PrivatisedCounts(share=share),
        epsilon=eps,
        rng=rng(18),
    )
    assert np.all(res.sizes >= 1)  # no group skipped
    for j, g in enumerate(["low", "mid", "high"]):
        m = res.sizes[:, j]
        h = clipped_laplace_half_width(m, R=LAPLACE.R, gamma=LAPLACE.gamma)
        assert np.abs(x).max() < h.min()  # nothing is clipped
        std_noise = (res.group_estimates[:, j] * m - x[labels == g].sum()) / (
            2 * h / ((1 - share) * eps)
        )
        assert stats.kstest(std_noise, stats.laplace.cdf).pvalue > 0.001
        # The full budget would give half the noise: rejected.
        assert stats.kstest(std_noise * 0.5, stats.laplace.cdf).pvalue < 1e-6


def test_privatised_counts_skip_tiny_groups() -> None:
    x = np.r_[np.zeros(500), 1.0]
    g = np.r_[np.zeros(500, int), 1]  # group 1 has one record, group 2 none
    res = stratified_mean(
        np.broadcast_to(x, (5000, x.size)),
        g,
        public_groups=[0, 1, 2],
        estimator=LAPLACE,
        weights=PrivatisedCounts(share=0.5),
        epsilon=1.0,
        rng=rng(19),
    )
    assert np.all(res.sizes >= 0)  # the noisy counts are clamped at zero
    skipped = res.sizes < 1
    assert 0.2 < skipped[:, 2].mean() < 0.9  # a count of 0 + Lap(4): often below 1
    np.testing.assert_array_equal(np.isnan(res.group_estimates), skipped)
    np.testing.assert_array_equal(res.weights == 0, skipped)
    np.testing.assert_allclose(res.weights.sum(axis=1), 1.0)
    assert np.all(np.isfinite(res.estimate))


# --- holdout weights and splits -------------------------------------------------------


def test_holdout_weights_counts() -> None:
    public = ["a", "b", "c", "d"]
    labels = ["a", "b", "a", "c", "a"]
    np.testing.assert_allclose(
        holdout_weights(labels, public), [3 / 5, 1 / 5, 1 / 5, 0]
    )
    np.testing.assert_allclose(
        holdout_weights(labels, public, pseudocount=1.0), [4 / 9, 2 / 9, 2 / 9, 1 / 9]
    )
    # Columns follow the public list, not the order of first appearance.
    np.testing.assert_allclose(
        holdout_weights(labels, ["d", "c", "b", "a"]), [0, 1 / 5, 1 / 5, 3 / 5]
    )
    # Integer labels (the fast path) agree with a manual count.
    ints = rng(20).integers(0, 5, size=(7, 30))
    w = holdout_weights(ints, range(5))
    assert w.shape == (7, 5)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    for row, counts in zip(w, ints, strict=True):
        np.testing.assert_allclose(row, np.bincount(counts, minlength=5) / 30)
    w_pc = holdout_weights(ints, range(5), pseudocount=0.5)
    for row, counts in zip(w_pc, ints, strict=True):
        np.testing.assert_allclose(row, (np.bincount(counts, minlength=5) + 0.5) / 32.5)
    # Integer labels with a non-canonical public list go through the label lookup.
    np.testing.assert_allclose(holdout_weights([3, 3, 7], [7, 3]), [1 / 3, 2 / 3])


@pytest.mark.parametrize(
    ("n", "fraction", "n_pub"),
    [(10, 0.3, 3), (10, 0.01, 1), (10, 0.99, 9), (7, 0.5, 4)],
)
def test_split_holdout_sizes_and_disjointness(n: int, fraction: float, n_pub: int):
    ids = np.arange(n)
    x = 10.0 * ids  # values identify the records
    xp, gp, gh = split_holdout(x, ids, fraction=fraction, rng=rng(21))
    assert gh.shape == (n_pub,) and gp.shape == xp.shape == (n - n_pub,)
    # Every record in exactly one part, and the private values stay with their labels.
    np.testing.assert_array_equal(np.sort(np.r_[gp, gh]), ids)
    np.testing.assert_array_equal(xp, 10.0 * gp)


def test_split_holdout_vectorised_and_random() -> None:
    trials, n = 4000, 10
    ids = np.arange(n)
    x = np.broadcast_to(10.0 * ids, (trials, n))
    xp, gp, gh = split_holdout(x, ids, fraction=0.3, rng=rng(22))
    assert xp.shape == gp.shape == (trials, 7) and gh.shape == (trials, 3)
    np.testing.assert_array_equal(
        np.sort(np.c_[gp, gh], axis=1), np.tile(ids, (trials, 1))
    )
    np.testing.assert_array_equal(xp, 10.0 * gp)
    # Each record is in the holdout with probability 0.3 (binomial sd ~0.007).
    freq = np.bincount(gh.reshape(-1), minlength=n) / trials
    np.testing.assert_allclose(freq, 0.3, atol=0.03)
    again = split_holdout(x, ids, fraction=0.3, rng=rng(22))
    np.testing.assert_array_equal(again[2], gh)
    # Per-trial labels (shape of x) are split along with the values.
    g2 = np.tile(ids, (trials, 1)) + 100 * np.arange(trials)[:, None]
    _, gp2, gh2 = split_holdout(x, g2, fraction=0.3, rng=rng(22))
    np.testing.assert_array_equal(gh2 % 100, gh)
    np.testing.assert_array_equal(
        gp2 // 100, np.broadcast_to(np.arange(trials)[:, None], gp2.shape)
    )


# --- wrappers -------------------------------------------------------------------------


def test_strat_coinpress_is_stratified_mean_with_coinpress() -> None:
    x, labels, _ = grouped_data(23)
    public = ["low", "mid", "high"]
    kw = {"public_groups": public, "rho": 0.3, "weights": [0.2, 0.3, 0.5]}
    a = strat_coinpress(x, labels, lower=-10, upper=10, t=3, rng=rng(24), **kw)
    b = stratified_mean(
        x,
        labels,
        estimator=Coinpress(lower=-10, upper=10, t=3),
        rng=rng(24),
        **kw,
    )
    assert a.estimate == b.estimate
    np.testing.assert_array_equal(a.group_estimates, b.group_estimates)
    with pytest.raises(ValueError, match="leak_group_sizes"):
        strat_coinpress(
            x,
            labels,
            public_groups=public,
            rho=0.3,
            lower=-10,
            upper=10,
            weights=PRIVATE_SIZES,
            rng=rng(),
        )
    leaky = strat_coinpress(
        x,
        labels,
        public_groups=public,
        rho=0.3,
        lower=-10,
        upper=10,
        weights=PRIVATE_SIZES,
        leak_group_sizes=True,
        rng=rng(),
    )
    assert leaky.leaks_group_sizes
    np.testing.assert_array_equal(leaky.sizes, [200, 300, 500])


def test_pub_strat_coinpress_vectorised_pipeline() -> None:
    x, labels, _ = grouped_data(25)
    trials = 50
    xt = np.stack([rng(s).permutation(x) for s in range(trials)])  # labels stay fixed
    public = ["low", "mid", "high"]
    res = pub_strat_coinpress(
        xt,
        labels,
        public_groups=public,
        rho=0.5,
        lower=-10,
        upper=10,
        public_fraction=0.3,
        rng=rng(26),
    )
    assert res.estimate.shape == (trials,) and res.group_estimates.shape == (trials, 3)
    assert res.weights.shape == res.sizes.shape == (trials, 3)
    np.testing.assert_allclose(res.weights.sum(axis=1), 1.0)
    np.testing.assert_allclose(res.sizes, res.weights * 700)  # m_i = w_i * n_private
    assert not res.leaks_group_sizes and res.rho == 0.5
    # The same pipeline spelled out, from the same seed, gives the same release.
    r = rng(26)
    xp, gp, gh = split_holdout(xt, labels, fraction=0.3, rng=r)
    manual = stratified_mean(
        xp,
        gp,
        public_groups=public,
        estimator=Coinpress(lower=-10, upper=10),
        weights=holdout_weights(gh, public),
        rho=0.5,
        rng=r,
    )
    np.testing.assert_array_equal(res.estimate, manual.estimate)
    # Accuracy: the weights are estimated from 300 public records (sd of a proportion
    # ~0.03, group means 3.5 apart) so the error is of order 0.1, far below the range.
    assert np.sqrt(np.mean((res.estimate - x.mean()) ** 2)) < 0.3


# --- privacy audits -------------------------------------------------------------------

EPS = 1.0
AUDIT_LAPLACE = ClippedLaplace(R=1.0, gamma=0.1)
N = 4
# Public weights (0.5, 0.5): public sizes m = 2 for both groups, h = 1 + sqrt(log 20).
H = float(clipped_laplace_half_width(2.0, R=1.0, gamma=0.1))
G_B1 = np.array(["a", "a", "a", "b"])  # group b has 1 record
G_B2 = np.array(["a", "a", "b", "b"])  # record 2 moved from a into b
# Moved record: value -10 (clipped to -h) while in a, +10 (clipped to +h) in b.
MOVED = (
    (np.array([0.0, 0.0, -10.0, 0.0]), G_B1),
    (np.array([0.0, 0.0, 10.0, 0.0]), G_B2),
)
# Only the group changes, not the value: this isolates the size-dependent noise scale.
MOVED_ZERO = ((np.zeros(N), G_B1), (np.zeros(N), G_B2))
# Replacement inside group b at the two clip edges.
WITHIN = (
    (np.array([0.0, 0.0, 0.0, -10.0]), G_B1),
    (np.array([0.0, 0.0, 0.0, 10.0]), G_B1),
)


def _stratified(
    statistic: str, weights, *, leak: bool = False, estimator=None, **budget
):
    estimator = estimator or AUDIT_LAPLACE
    budget = budget or {"epsilon": EPS}

    def mech(d, trials: int, r: np.random.Generator) -> np.ndarray:
        x, g = d
        res = stratified_mean(
            np.broadcast_to(x, (trials, N)),
            g,
            public_groups=["a", "b"],
            estimator=estimator,
            weights=weights,
            rng=r,
            leak_group_sizes=leak,
            **budget,
        )
        if statistic == "abs_b":  # post-processing of group b's release
            return np.abs(res.group_estimates[:, 1])
        if statistic == "b":
            return res.group_estimates[:, 1]
        return res.estimate

    return mech


@pytest.mark.parametrize("statistic", ["abs_b", "b", "overall"])
def test_audit_public_weights_moved_record(statistic: str) -> None:
    res = audit_epsilon(
        _stratified(statistic, [0.5, 0.5]), *MOVED, trials=TRIALS, rng=rng(30)
    )
    assert_audit_passes(res, EPS)
    # Group b gains a record at +h: a shift of h against noise 2h/eps, i.e. eps/2; the
    # overall estimate shifts by 2h against two such noises.
    assert res.epsilon_lower > 0.35


def test_audit_public_weights_within_group_is_tight() -> None:
    res = audit_epsilon(
        _stratified("b", [0.5, 0.5]), *WITHIN, trials=TRIALS, rng=rng(31)
    )
    assert_audit_passes(res, EPS)
    assert res.epsilon_lower > 0.9 * EPS  # the audit has the power to see eps itself
    overall = audit_epsilon(
        _stratified("overall", [0.5, 0.5]), *WITHIN, trials=TRIALS, rng=rng(32)
    )
    assert_audit_passes(overall, EPS)


@pytest.mark.parametrize("neighbours", [MOVED_ZERO, MOVED], ids=["zero", "edges"])
def test_audit_catches_leaky_private_sizes(neighbours) -> None:
    # D0: group b has 1 member, so its release is Lap(2 h(1) / eps) / 1; D1: 2 members,
    # Lap(2 h(2) / eps) / 2. The scales differ by a factor ~1.8 and the likelihood
    # ratio is unbounded in the tails of |estimate|.
    leaky = audit_epsilon(
        _stratified("abs_b", PRIVATE_SIZES, leak=True),
        *neighbours,
        trials=TRIALS,
        rng=rng(33),
    )
    assert audit_fails(leaky, EPS)
    assert leaky.epsilon_lower > 2.0 * EPS
    # The same release with public weights passes on the same neighbours.
    public = audit_epsilon(
        _stratified("abs_b", [0.5, 0.5]), *neighbours, trials=TRIALS, rng=rng(33)
    )
    assert_audit_passes(public, EPS)


def test_audit_coinpress_public_weights_and_leaky() -> None:
    # StratCoinpress (the paper's algorithm) on the group-size-changing neighbours:
    # with public weights it is rho-zCDP; with the private sizes the noise sd of group
    # b is halved when its size doubles, which no (epsilon, delta) claim survives.
    rho, delta = 0.05, 1e-3
    claimed = rho_to_epsilon(rho, delta)
    est = Coinpress(lower=-1.0, upper=1.0)
    public = audit_epsilon(
        _stratified("b", [0.5, 0.5], estimator=est, rho=rho),
        *MOVED,
        trials=TRIALS,
        rng=rng(34),
        delta=delta,
    )
    assert_audit_passes(public, claimed)
    leaky = audit_epsilon(
        _stratified("abs_b", PRIVATE_SIZES, leak=True, estimator=est, rho=rho),
        *MOVED_ZERO,
        trials=TRIALS,
        rng=rng(35),
        delta=delta,
    )
    assert audit_fails(leaky, claimed)
    assert leaky.epsilon_lower > claimed + 0.5


# --- Overflow: never a finite estimate from non-finite parts --------------------------


def test_estimators_reject_bounds_whose_width_overflows() -> None:
    with pytest.raises(ValueError, match=r"width 2.00e\+308.*narrower public bounds"):
        Coinpress(lower=-1e308, upper=1e308)
    with pytest.raises(ValueError, match=r"R=1e\+308.*narrower public bounds"):
        ClippedLaplace(R=1e308)


def test_rejects_a_noise_scale_that_overflows() -> None:
    x = np.linspace(-1.0, 1.0, 10)
    g = np.r_[np.zeros(5, int), np.ones(5, int)]
    common = {"public_groups": [0, 1], "rng": np.random.default_rng(0)}
    with pytest.raises(ValueError, match=r"Laplace scale overflows.*larger budget"):
        stratified_mean(
            x, g, estimator=LAPLACE, weights=[0.5, 0.5], epsilon=1e-320, **common
        )
    with pytest.raises(ValueError, match=r"count noise scale overflows.*larger budget"):
        stratified_mean(
            x,
            g,
            estimator=LAPLACE,
            weights=PrivatisedCounts(0.1),
            epsilon=1e-320,
            **common,
        )
    with pytest.raises(ValueError, match=r"interval half-width.*rescale the data"):
        stratified_mean(
            x,
            g,
            estimator=Coinpress(lower=-1e200, upper=1e200),
            weights=[0.5, 0.5],
            rho=1.0,
            **common,
        )


def test_never_returns_a_finite_estimate_from_non_finite_group_estimates(
    monkeypatch,
) -> None:
    import dpnotes.mean.stratified as strat

    x = np.linspace(-1.0, 1.0, 10)
    g = np.r_[np.zeros(5, int), np.ones(5, int)]
    for bad in (np.nan, np.inf):
        monkeypatch.setattr(
            strat, "_run_estimator", lambda *a, bad=bad, **k: np.array([0.5, bad])
        )
        with pytest.raises(ValueError, match=r"group estimate is not finite.*rescale"):
            stratified_mean(
                x,
                g,
                public_groups=[0, 1],
                estimator=COINPRESS,
                weights=[0.5, 0.5],
                rho=1.0,
                rng=np.random.default_rng(0),
            )
    # A skipped group (weight zero) is NaN by design and does not count.
    monkeypatch.setattr(strat, "_run_estimator", lambda *a, **k: np.array([0.5, 7.0]))
    res = stratified_mean(
        x,
        g,
        public_groups=[0, 1],
        estimator=COINPRESS,
        weights=[1.0, 0.0],
        rho=1.0,
        rng=np.random.default_rng(0),
    )
    assert res.estimate == 0.5 and np.isnan(res.group_estimates[1])


def test_wide_but_representable_bounds_still_work() -> None:
    gen = np.random.default_rng(1)
    x = gen.normal(0.0, 1.0, 2000)
    g = gen.integers(0, 2, 2000)
    for estimator, budget in (
        (Coinpress(lower=-1e150, upper=1e150), {"rho": 1e-4}),
        (ClippedLaplace(R=1e150), {"epsilon": 1e-12}),
    ):
        res = stratified_mean(
            x,
            g,
            public_groups=[0, 1],
            estimator=estimator,
            weights=[0.5, 0.5],
            rng=np.random.default_rng(0),
            **budget,
        )
        assert math.isfinite(res.estimate)
        assert np.all(np.isfinite(res.group_estimates))
