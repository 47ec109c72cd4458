"""Tests for dpnotes.mechanisms (CONVENTIONS rule 10 for each mechanism).

Each mechanism gets: input validation, seeded determinism, a statistical property with a
fixed seed and explicit tolerance, a value against an independent reference, and an
empirical privacy audit that passes for the mechanism and fails for a planted broken
variant.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpnotes.accounting import analytic_gaussian_sigma, rho_to_epsilon
from dpnotes.audit import assert_audit_passes, audit_epsilon, audit_fails
from dpnotes.mechanisms import (
    clipped_laplace_mean,
    clipped_mean_sensitivity,
    exponential_mechanism,
    exponential_mechanism_epsilon,
    gaussian_mean,
    gaussian_mechanism,
    gaussian_sigma,
    laplace_mean,
    laplace_mechanism,
    laplace_scale,
)

TRIALS = 500_000  # runs per dataset in each audit (vectorised, ~0.1-0.3 s per audit)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


# --- Laplace mechanism ----------------------------------------------------------------


def test_laplace_scale() -> None:
    assert laplace_scale(sensitivity=2.0, epsilon=0.5) == 4.0


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"sensitivity": 0.0}, ValueError, "sensitivity must be a positive"),
        ({"sensitivity": -1.0}, ValueError, "sensitivity must be a positive"),
        ({"sensitivity": math.nan}, ValueError, "sensitivity must be a positive"),
        ({"epsilon": 0.0}, ValueError, "positive, finite privacy budget"),
        ({"epsilon": math.inf}, ValueError, "non-private baseline"),
        ({"epsilon": "1"}, TypeError, "real number"),
        ({"value": [1.0, math.nan]}, ValueError, "1 NaN and 0 infinite"),
        ({"value": [1.0, math.inf]}, ValueError, "Drop or impute"),
        ({"rng": 0}, TypeError, "default_rng"),
        ({"rng": None}, TypeError, "numpy.random.Generator"),
    ],
)
def test_laplace_mechanism_rejects(kwargs: dict, err: type, match: str) -> None:
    args = {"value": 1.0, "sensitivity": 1.0, "epsilon": 1.0, "rng": rng()}
    args.update(kwargs)
    with pytest.raises(err, match=match):
        laplace_mechanism(args.pop("value"), **args)


def test_laplace_mechanism_deterministic_and_shapes() -> None:
    a = laplace_mechanism(np.zeros((3, 4)), sensitivity=1.0, epsilon=1.0, rng=rng(7))
    b = laplace_mechanism(np.zeros((3, 4)), sensitivity=1.0, epsilon=1.0, rng=rng(7))
    np.testing.assert_array_equal(a, b)
    assert a.shape == (3, 4)
    assert len(np.unique(a)) == 12  # independent noise per entry
    out = laplace_mechanism(2.0, sensitivity=1.0, epsilon=1.0, rng=rng(7))
    assert isinstance(out, float)


def test_laplace_noise_variance() -> None:
    # Var = 2 b^2 with b = 2; the sample variance of 1M draws has a relative sd ~0.22%.
    noisy = laplace_mechanism(
        np.full(1_000_000, 5.0), sensitivity=1.0, epsilon=0.5, rng=rng(1)
    )
    noise = noisy - 5.0
    assert np.var(noise) == pytest.approx(2 * 2.0**2, rel=0.01)
    assert np.mean(noise) == pytest.approx(0.0, abs=0.01)


def test_laplace_noise_ks_against_scipy() -> None:
    noisy = laplace_mechanism(
        np.full(100_000, 5.0), sensitivity=1.0, epsilon=0.5, rng=rng(2)
    )
    assert stats.kstest(noisy, stats.laplace(loc=5.0, scale=2.0).cdf).pvalue > 0.01
    # The same test has the power to reject a wrong scale.
    assert stats.kstest(noisy, stats.laplace(loc=5.0, scale=1.8).cdf).pvalue < 1e-6


def _laplace_on(value: float, *, sensitivity: float):
    def mech(v: float, trials: int, r: np.random.Generator) -> np.ndarray:
        return laplace_mechanism(
            np.full(trials, v), sensitivity=sensitivity, epsilon=1.0, rng=r
        )

    return mech


def test_laplace_mechanism_audit() -> None:
    # Neighbouring query values differ by the sensitivity (1.0); epsilon = 1.
    ok = audit_epsilon(
        _laplace_on(0, sensitivity=1.0), 0.0, 1.0, trials=TRIALS, rng=rng(10)
    )
    assert_audit_passes(ok, 1.0)
    assert ok.epsilon_lower > 0.9  # the audit is tight for Laplace
    # Broken: noise for half the sensitivity (true epsilon 2).
    broken = audit_epsilon(
        _laplace_on(0, sensitivity=0.5), 0.0, 1.0, trials=TRIALS, rng=rng(10)
    )
    assert audit_fails(broken, 1.0)
    assert broken.epsilon_lower > 1.8


# --- Gaussian mechanism ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({}, ValueError, "needs a budget"),
        ({"rho": 0.5, "epsilon": 1.0}, ValueError, "not both"),
        ({"rho": 0.5, "delta": 1e-5}, ValueError, "not both"),
        ({"epsilon": 1.0}, ValueError, "delta is missing"),
        ({"delta": 1e-5}, ValueError, "epsilon is missing"),
        ({"rho": 0.0}, ValueError, "zCDP budget"),
        ({"epsilon": 1.0, "delta": 1.0}, ValueError, "strictly between 0 and 1"),
        ({"epsilon": -1.0, "delta": 1e-5}, ValueError, "privacy budget"),
        (
            {"rho": 0.5, "sensitivity": 0.0},
            ValueError,
            "sensitivity must be a positive",
        ),
        ({"rho": 0.5, "value": [math.nan]}, ValueError, "NaN"),
        ({"rho": 0.5, "rng": 3}, TypeError, "numpy.random.Generator"),
    ],
)
def test_gaussian_mechanism_rejects(kwargs: dict, err: type, match: str) -> None:
    args = {"value": 1.0, "sensitivity": 1.0, "rng": rng()}
    args.update(kwargs)
    with pytest.raises(err, match=match):
        gaussian_mechanism(args.pop("value"), **args)


def test_gaussian_mechanism_deterministic_and_shapes() -> None:
    kw = {"sensitivity": 1.0, "epsilon": 1.0, "delta": 1e-5}
    a = gaussian_mechanism(np.zeros(5), rng=rng(3), **kw)
    np.testing.assert_array_equal(a, gaussian_mechanism(np.zeros(5), rng=rng(3), **kw))
    assert a.shape == (5,)
    assert isinstance(gaussian_mechanism(0.0, rng=rng(3), **kw), float)


def test_gaussian_sigma_references() -> None:
    assert gaussian_sigma(sensitivity=2.0, rho=0.5) == pytest.approx(2.0)
    assert gaussian_sigma(sensitivity=2.0, epsilon=1.0, delta=1e-5) == pytest.approx(
        analytic_gaussian_sigma(epsilon=1.0, delta=1e-5, sensitivity=2.0)
    )


@pytest.mark.parametrize(
    "budget",
    [{"rho": 0.125}, {"epsilon": 1.0, "delta": 1e-5}],
    ids=["rho", "eps-delta"],
)
def test_gaussian_noise_distribution(budget: dict) -> None:
    sigma = gaussian_sigma(sensitivity=1.0, **budget)
    noise = gaussian_mechanism(np.zeros(200_000), sensitivity=1.0, rng=rng(4), **budget)
    # Sample sd of 200k normals has relative sd 0.16%; allow 1%.
    assert np.std(noise) == pytest.approx(sigma, rel=0.01)
    assert stats.kstest(noise, stats.norm(scale=sigma).cdf).pvalue > 0.01
    assert stats.kstest(noise, stats.norm(scale=0.97 * sigma).cdf).pvalue < 1e-6


def _gaussian(sensitivity: float, **budget):
    def mech(v: float, trials: int, r: np.random.Generator) -> np.ndarray:
        return gaussian_mechanism(
            np.full(trials, v), sensitivity=sensitivity, rng=r, **budget
        )

    return mech


def test_gaussian_mechanism_audit_epsilon_delta() -> None:
    budget = {"epsilon": 1.0, "delta": 1e-5}
    ok = audit_epsilon(
        _gaussian(1.0, **budget), 0.0, 1.0, trials=TRIALS, rng=rng(11), delta=1e-5
    )
    assert_audit_passes(ok, 1.0)
    # Broken: half the calibrated sigma (what sensitivity/2 would give).
    sigma = gaussian_sigma(sensitivity=1.0, **budget)

    def broken(v: float, trials: int, r: np.random.Generator) -> np.ndarray:
        return v + r.normal(0.0, sigma / 2, size=trials)

    bad = audit_epsilon(broken, 0.0, 1.0, trials=TRIALS, rng=rng(11), delta=1e-5)
    assert audit_fails(bad, 1.0)
    assert bad.epsilon_lower > 1.3


def test_gaussian_mechanism_audit_zcdp() -> None:
    rho, delta = 0.05, 1e-3
    claimed = rho_to_epsilon(rho, delta)
    ok = audit_epsilon(
        _gaussian(1.0, rho=rho), 0.0, 1.0, trials=TRIALS, rng=rng(12), delta=delta
    )
    assert_audit_passes(ok, claimed)
    bad = audit_epsilon(
        _gaussian(0.5, rho=rho), 0.0, 1.0, trials=TRIALS, rng=rng(12), delta=delta
    )  # broken: sensitivity halved, so sigma halved
    assert audit_fails(bad, claimed)
    assert bad.epsilon_lower > claimed + 0.4


# --- clipped means --------------------------------------------------------------------

MEANS = [
    pytest.param(laplace_mean, {"epsilon": 1.0}, id="laplace"),
    pytest.param(gaussian_mean, {"rho": 0.5}, id="gaussian"),
]


@pytest.mark.parametrize(("fn", "budget"), MEANS)
@pytest.mark.parametrize(
    ("x", "kwargs", "err", "match"),
    [
        ([0.1, math.nan], {}, ValueError, "1 NaN"),
        ([0.1, -math.inf], {}, ValueError, "1 infinite"),
        ([], {}, ValueError, "empty"),
        (np.zeros((3, 0)), {}, ValueError, "empty"),
        (0.5, {}, ValueError, "at least one axis"),
        ([0.1, 0.2], {"lower": 1.0, "upper": 0.0}, ValueError, "Swap them"),
        ([0.1, 0.2], {"lower": 1.0, "upper": 1.0}, ValueError, "widen the interval"),
        ([0.1, 0.2], {"upper": math.inf}, ValueError, "public bounds"),
        ([0.1, 0.2], {"rng": 1}, TypeError, "numpy.random.Generator"),
        (["a", "b"], {}, TypeError, "numeric array-like"),
    ],
)
def test_means_reject(fn, budget, x, kwargs, err, match) -> None:
    args = {"lower": 0.0, "upper": 1.0, "rng": rng(), **budget}
    args.update(kwargs)
    with pytest.raises(err, match=match):
        fn(x, **args)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_means_reject_budget(bad: float) -> None:
    with pytest.raises(ValueError, match="privacy budget"):
        laplace_mean([0.1], lower=0, upper=1, epsilon=bad, rng=rng())
    with pytest.raises(ValueError, match="zCDP budget"):
        gaussian_mean([0.1], lower=0, upper=1, rho=bad, rng=rng())


@pytest.mark.parametrize(("fn", "budget"), MEANS)
def test_means_deterministic_and_shapes(fn, budget) -> None:
    x = rng(5).uniform(size=(4, 3, 20))
    a = fn(x, lower=0.0, upper=1.0, rng=rng(6), **budget)
    np.testing.assert_array_equal(a, fn(x, lower=0.0, upper=1.0, rng=rng(6), **budget))
    assert a.shape == (4, 3)
    assert isinstance(fn(x[0, 0], lower=0.0, upper=1.0, rng=rng(6), **budget), float)


def test_clipped_mean_sensitivity() -> None:
    assert clipped_mean_sensitivity(lower=-1.0, upper=3.0, n=8) == 0.5
    with pytest.raises(ValueError, match="at least 1"):
        clipped_mean_sensitivity(lower=0.0, upper=1.0, n=0)


def test_means_value_against_closed_form() -> None:
    # With a huge budget the noise vanishes and the release is the clipped mean.
    x = np.array([-2.0, 0.25, 0.5, 4.0])
    expected = np.mean([0.0, 0.25, 0.5, 1.0])
    assert x.mean() != pytest.approx(expected)  # clipping matters for this data
    got = laplace_mean(x, lower=0.0, upper=1.0, epsilon=1e12, rng=rng())
    assert got == pytest.approx(expected, abs=1e-9)
    got = gaussian_mean(x, lower=0.0, upper=1.0, rho=1e24, rng=rng())
    assert got == pytest.approx(expected, abs=1e-9)


def test_laplace_mean_mse_is_bias_squared_plus_variance() -> None:
    # Data partly outside [0, 1]: clipping bias plus Laplace variance 2 (Delta/eps)^2.
    n, eps, trials = 50, 0.5, 200_000
    data = np.linspace(-0.5, 1.5, n) ** 2  # fixed data set, many above 1
    bias = np.clip(data, 0, 1).mean() - data.mean()
    x = np.broadcast_to(data, (trials, n))
    est = laplace_mean(x, lower=0.0, upper=1.0, epsilon=eps, rng=rng(8))
    mse = np.mean((est - data.mean()) ** 2)
    expected = bias**2 + 2 * (1.0 / (n * eps)) ** 2
    assert abs(bias) > 0.05  # the bias term matters here
    assert mse == pytest.approx(expected, rel=0.02)
    # One independent draw per trial: consecutive releases are uncorrelated.
    assert abs(np.corrcoef(est[:-1], est[1:])[0, 1]) < 0.01


def test_gaussian_mean_mse_is_bias_squared_plus_variance() -> None:
    n, rho, trials = 40, 0.1, 200_000
    data = np.linspace(-1.0, 2.0, n)
    bias = np.clip(data, 0, 1).mean() - data.mean()
    est = gaussian_mean(
        np.broadcast_to(data, (trials, n)), lower=0.0, upper=1.0, rho=rho, rng=rng(9)
    )
    sigma = 1.0 / (n * math.sqrt(2 * rho))
    assert np.mean((est - data.mean()) ** 2) == pytest.approx(
        bias**2 + sigma**2, rel=0.02
    )
    assert (
        stats.kstest(est, stats.norm(np.clip(data, 0, 1).mean(), sigma).cdf).pvalue
        > 0.01
    )


# Audits for the clipped means: neighbours replace one record (n = 4 is public).
N = 4
D0 = np.zeros(N)
D1 = np.array([0.0, 0.0, 0.0, 1.0])  # largest change within the bounds
D1_OUTLIER = np.array([0.0, 0.0, 0.0, 3.0])  # a record far outside [0, 1]


def _laplace_mean(d: np.ndarray, trials: int, r: np.random.Generator) -> np.ndarray:
    return laplace_mean(
        np.broadcast_to(d, (trials, N)), lower=0.0, upper=1.0, epsilon=1.0, rng=r
    )


def _laplace_mean_half_sensitivity(d, trials, r):
    # Broken: sensitivity taken as (upper - lower) / (2n).
    return np.clip(d, 0.0, 1.0).mean() + r.laplace(0.0, 1.0 / (2 * N), size=trials)


def _laplace_mean_unclipped(d, trials, r):
    # Broken: the right noise scale for [0, 1], but the records are not clipped.
    return d.mean() + r.laplace(0.0, 1.0 / N, size=trials)


def test_laplace_mean_audit_passes() -> None:
    for neighbour in (D1, D1_OUTLIER):
        res = audit_epsilon(_laplace_mean, D0, neighbour, trials=TRIALS, rng=rng(13))
        assert_audit_passes(res, 1.0)
        assert res.epsilon_lower > 0.9


def test_laplace_mean_audit_catches_half_sensitivity() -> None:
    res = audit_epsilon(
        _laplace_mean_half_sensitivity, D0, D1, trials=TRIALS, rng=rng(13)
    )
    assert audit_fails(res, 1.0)
    assert res.epsilon_lower > 1.8


def test_laplace_mean_audit_catches_missing_clipping() -> None:
    res = audit_epsilon(
        _laplace_mean_unclipped, D0, D1_OUTLIER, trials=TRIALS, rng=rng(13)
    )
    assert audit_fails(res, 1.0)
    assert res.epsilon_lower > 2.5


def test_gaussian_mean_audit() -> None:
    rho, delta = 0.05, 1e-3
    claimed = rho_to_epsilon(rho, delta)

    def mech(d, trials, r):
        return gaussian_mean(
            np.broadcast_to(d, (trials, N)), lower=0.0, upper=1.0, rho=rho, rng=r
        )

    def broken(d, trials, r):  # sigma from sensitivity (upper - lower) / (2n)
        sigma = 1.0 / (2 * N * math.sqrt(2 * rho))
        return np.clip(d, 0.0, 1.0).mean() + r.normal(0.0, sigma, size=trials)

    ok = audit_epsilon(mech, D0, D1_OUTLIER, trials=TRIALS, rng=rng(14), delta=delta)
    assert_audit_passes(ok, claimed)
    bad = audit_epsilon(broken, D0, D1, trials=TRIALS, rng=rng(14), delta=delta)
    assert audit_fails(bad, claimed)
    assert bad.epsilon_lower > claimed + 0.4


# --- Overflow: never a non-finite release ---------------------------------------------


@pytest.mark.parametrize("estimator", [laplace_mean, gaussian_mean])
def test_clipped_means_reject_bounds_whose_width_overflows(estimator) -> None:
    budget = {"epsilon": 1.0} if estimator is laplace_mean else {"rho": 1.0}
    x = np.linspace(-1.0, 1.0, 10)
    with pytest.raises(ValueError, match=r"width 2.00e\+308.*pass narrower public"):
        estimator(x, lower=-1e308, upper=1e308, rng=rng(), **budget)
    with pytest.raises(ValueError, match="narrower public bounds"):
        clipped_mean_sensitivity(lower=-1e308, upper=1e308, n=3)


@pytest.mark.parametrize("estimator", [laplace_mean, gaussian_mean])
def test_clipped_means_accept_wide_but_representable_bounds(estimator) -> None:
    budget = {"epsilon": 1e-12} if estimator is laplace_mean else {"rho": 1e-12}
    x = np.linspace(-1.0, 1.0, 10)
    est = estimator(x, lower=-1e150, upper=1e150, rng=rng(), **budget)
    assert math.isfinite(est)


def test_laplace_rejects_a_scale_that_overflows_or_underflows() -> None:
    with pytest.raises(ValueError, match=r"overflows .*use a larger epsilon"):
        laplace_mechanism(1.0, sensitivity=1.0, epsilon=1e-320, rng=rng())
    with pytest.raises(ValueError, match=r"overflows .*use a larger epsilon"):
        laplace_scale(sensitivity=1e308, epsilon=1e-3)
    with pytest.raises(ValueError, match=r"underflows to 0.*rescale"):
        laplace_scale(sensitivity=1e-300, epsilon=1e300)
    with pytest.raises(ValueError, match=r"overflows .*use a larger budget"):
        laplace_mean([0.0, 1.0], lower=0.0, upper=1.0, epsilon=1e-320, rng=rng())
    assert laplace_scale(sensitivity=1.0, epsilon=1e-12) == 1e12


def test_mechanisms_reject_a_release_that_overflows() -> None:
    with pytest.raises(ValueError, match=r"noisy release is not finite.*rescale"):
        laplace_mechanism(1.7e308, sensitivity=1e307, epsilon=1e-1, rng=rng())
    with pytest.raises(ValueError, match=r"noisy release is not finite.*rescale"):
        gaussian_mechanism(1.79e308, sensitivity=1e307, rho=1e-2, rng=rng())


def test_gaussian_rejects_a_scale_that_overflows_or_underflows() -> None:
    with pytest.raises(ValueError, match=r"Gaussian noise scale overflows.*rescale"):
        gaussian_sigma(sensitivity=1e308, rho=1e-10)
    with pytest.raises(ValueError, match=r"Gaussian noise scale underflows.*rescale"):
        gaussian_mean([0.0, 1.0], lower=0.0, upper=1e-300, rho=1e308, rng=rng())
    with pytest.raises(ValueError, match=r"Gaussian noise scale overflows.*rescale"):
        gaussian_sigma(sensitivity=1e308, epsilon=1e-3, delta=1e-6)


def test_clipped_laplace_mean_rejects_a_scale_that_overflows() -> None:
    x = np.zeros(10)
    with pytest.raises(ValueError, match=r"Laplace scale overflows.*rescale the data"):
        clipped_laplace_mean(x, R=1e308, gamma=0.1, epsilon=1.0, rng=rng())
    assert math.isfinite(
        clipped_laplace_mean(x, R=1e150, gamma=0.1, epsilon=1e-12, rng=rng())
    )


def test_exponential_mechanism_rejects_scores_that_overflow() -> None:
    with pytest.raises(ValueError, match=r"scaled scores .*not finite.*rescale"):
        exponential_mechanism(
            np.array([0.0, 1e300]), epsilon=1e300, sensitivity=1e-300, rng=rng()
        )
    with pytest.raises(ValueError, match="use a smaller rho"):
        exponential_mechanism_epsilon(rho=1e308)
