"""Tests for the paper's Eq. 1 estimator: clipped_laplace_mean and its half-width.

Eq. 1 of rosenblatt2024stratification: clip every record to ``[-h, h]`` with
``h = R + sqrt(log(n / gamma))`` and add ``Lap(2 h / (n epsilon))`` to the clipped mean.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpnotes.audit import assert_audit_passes, audit_epsilon, audit_fails
from dpnotes.mechanisms import clipped_laplace_half_width, clipped_laplace_mean

TRIALS = 500_000  # runs per dataset in each audit (vectorised, ~0.1 s per audit)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def half_width(n: float, R: float, gamma: float) -> float:
    """Independent reference for Eq. 1's half-width."""
    return R + math.sqrt(math.log(n / gamma))


# --- half-width -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "R", "gamma"), [(1, 1.0, 0.1), (100, 1.0, 0.1), (10_000, 3.0, 0.01)]
)
def test_half_width_reference(n: int, R: float, gamma: float) -> None:
    got = clipped_laplace_half_width(n, R=R, gamma=gamma)
    assert isinstance(got, float)
    assert got == pytest.approx(half_width(n, R, gamma), rel=1e-12)


def test_half_width_vectorised() -> None:
    sizes = np.array([1.0, 10.0, 1000.0])
    got = clipped_laplace_half_width(sizes, R=2.0, gamma=0.05)
    assert got.shape == (3,)
    np.testing.assert_allclose(got, [half_width(s, 2.0, 0.05) for s in sizes])
    assert np.all(np.diff(got) > 0)  # grows with the number of records


# --- validation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "kwargs", "err", "match"),
    [
        ([], {}, ValueError, "empty"),
        (np.zeros((3, 0)), {}, ValueError, "empty"),
        (0.5, {}, ValueError, "at least one axis"),
        ([0.1, math.nan], {}, ValueError, "1 NaN"),
        ([0.1, math.inf], {}, ValueError, "1 infinite"),
        ([0.1], {"R": 0.0}, ValueError, "R must be a positive"),
        ([0.1], {"R": -1.0}, ValueError, "R must be a positive"),
        ([0.1], {"R": math.inf}, ValueError, "R must be a positive"),
        ([0.1], {"gamma": 0.0}, ValueError, r"gamma must lie in \(0, 1\)"),
        ([0.1], {"gamma": 1.0}, ValueError, r"gamma must lie in \(0, 1\)"),
        ([0.1], {"gamma": -0.1}, ValueError, r"gamma must lie in \(0, 1\)"),
        ([0.1], {"gamma": math.nan}, ValueError, r"gamma must lie in \(0, 1\)"),
        ([0.1], {"epsilon": 0.0}, ValueError, "privacy budget"),
        ([0.1], {"epsilon": -1.0}, ValueError, "privacy budget"),
        ([0.1], {"epsilon": math.inf}, ValueError, "privacy budget"),
        ([0.1], {"rng": 0}, TypeError, "numpy.random.Generator"),
        ([0.1], {"rng": None}, TypeError, "numpy.random.Generator"),
        (["a"], {}, TypeError, "numeric array-like"),
    ],
)
def test_clipped_laplace_mean_rejects(x, kwargs, err, match) -> None:
    args = {"R": 1.0, "gamma": 0.1, "epsilon": 1.0, "rng": rng()}
    args.update(kwargs)
    with pytest.raises(err, match=match):
        clipped_laplace_mean(x, **args)


# --- determinism, shapes, vectorisation -----------------------------------------------


def test_deterministic_and_shapes() -> None:
    x = rng(1).normal(size=(4, 3, 50))
    kw = {"R": 1.0, "gamma": 0.1, "epsilon": 1.0}
    a = clipped_laplace_mean(x, rng=rng(2), **kw)
    np.testing.assert_array_equal(a, clipped_laplace_mean(x, rng=rng(2), **kw))
    assert a.shape == (4, 3)
    assert len(np.unique(a)) == 12  # independent noise per trial
    assert not np.array_equal(a, clipped_laplace_mean(x, rng=rng(3), **kw))
    assert isinstance(clipped_laplace_mean(x[0, 0], rng=rng(2), **kw), float)


def test_vectorised_matches_loop_in_distribution() -> None:
    data = rng(4).normal(0.3, 1.0, size=20)
    trials = 4000
    kw = {"R": 1.0, "gamma": 0.1, "epsilon": 0.5}
    vec = clipped_laplace_mean(np.broadcast_to(data, (trials, 20)), rng=rng(5), **kw)
    r = rng(6)
    loop = np.array([clipped_laplace_mean(data, rng=r, **kw) for _ in range(trials)])
    # Noise sd = sqrt(2) * 2h / (n eps) ~ 1.1; the standard error of a mean of 4000
    # draws is ~0.018 and of a difference of two ~0.025, so 0.1 is a 4-sigma band.
    # The sample sd of Laplace draws has relative sd ~ sqrt(5/4 / 4000) ~ 1.8%.
    assert vec.mean() == pytest.approx(loop.mean(), abs=0.1)
    assert vec.std() == pytest.approx(loop.std(), rel=0.08)
    assert stats.ks_2samp(vec, loop).pvalue > 0.001


# --- values against references --------------------------------------------------------


def test_huge_budget_gives_symmetrically_clipped_mean() -> None:
    n, R, gamma = 8, 1.0, 0.1
    h = half_width(n, R, gamma)  # ~2.74
    x = np.array([-10.0, -3.0, -1.0, 0.0, 0.5, 2.0, 2.9, 50.0])
    expected = np.clip(x, -h, h).mean()
    assert expected != pytest.approx(x.mean())  # clipping matters for this data
    assert np.clip(x, -h, 5.0).mean() != pytest.approx(expected)  # both ends matter
    got = clipped_laplace_mean(x, R=R, gamma=gamma, epsilon=1e12, rng=rng())
    assert got == pytest.approx(expected, abs=1e-9)


def test_noise_is_laplace_with_eq1_scale() -> None:
    n, R, gamma, eps = 25, 2.0, 0.05, 0.7
    data = np.linspace(-1.0, 1.0, n)  # nothing is clipped (h ~ 4.7)
    scale = 2 * half_width(n, R, gamma) / (n * eps)
    est = clipped_laplace_mean(
        np.broadcast_to(data, (100_000, n)), R=R, gamma=gamma, epsilon=eps, rng=rng(7)
    )
    ref = stats.laplace(loc=data.mean(), scale=scale)
    assert stats.kstest(est, ref.cdf).pvalue > 0.01
    # The same test rejects the scale of a sensitivity h / n (half the noise) and of a
    # gap-free interval [-R, R] instead of Eq. 1's h.
    assert stats.kstest(est, stats.laplace(data.mean(), scale / 2).cdf).pvalue < 1e-6
    wrong = 2 * R / (n * eps)
    assert stats.kstest(est, stats.laplace(data.mean(), wrong).cdf).pvalue < 1e-6


def test_error_shrinks_like_one_over_n() -> None:
    # Gaussian data with |mu| <= R: the error around the data mean is the noise (plus a
    # tiny clipping bias), of sd sqrt(2) 2 h / (n eps); it must shrink ~9-fold from
    # n = 100 to n = 1000 (h grows only from ~3.6 to ~4.0).
    errs = []
    for n in (100, 1000):
        x = rng(n).normal(0.8, 1.0, size=(5000, n))
        est = clipped_laplace_mean(x, R=1.0, gamma=0.1, epsilon=1.0, rng=rng(8))
        errs.append(np.sqrt(np.mean((est - x.mean(axis=1)) ** 2)))
        sd = math.sqrt(2) * 2 * half_width(n, 1.0, 0.1) / n
        # Var(L^2) = 20 b^4 for Laplace, so over 5000 trials the RMSE has a relative sd
        # of sqrt(20 / 4 / 5000) / 2 ~ 1.6%; allow 6% (almost 4 sd).
        assert errs[-1] == pytest.approx(sd, rel=0.06)
    assert errs[1] < errs[0] / 6


# --- privacy audit --------------------------------------------------------------------

N, R, GAMMA, EPS = 4, 1.0, 0.1, 1.0
H = half_width(N, R, GAMMA)  # ~2.92
D0 = np.array([0.0, 0.0, 0.0, -H])
D1 = np.array([0.0, 0.0, 0.0, H])  # one record moved across the whole clip interval
D1_OUTLIER = np.array([0.0, 0.0, 0.0, 3 * H])  # a record far outside [-h, h]


def _eq1(d: np.ndarray, trials: int, r: np.random.Generator) -> np.ndarray:
    return clipped_laplace_mean(
        np.broadcast_to(d, (trials, N)), R=R, gamma=GAMMA, epsilon=EPS, rng=r
    )


def _eq1_half_noise(d, trials, r):
    # Broken: noise scale h / (n eps), as if the sensitivity were h / n.
    return np.clip(d, -H, H).mean() + r.laplace(0.0, H / (N * EPS), size=trials)


def _eq1_unclipped(d, trials, r):
    # Broken: the right noise scale, but the records are not clipped.
    return d.mean() + r.laplace(0.0, 2 * H / (N * EPS), size=trials)


def test_audit_passes_and_is_tight() -> None:
    for neighbour in (D1, D1_OUTLIER):
        res = audit_epsilon(_eq1, D0, neighbour, trials=TRIALS, rng=rng(10))
        assert_audit_passes(res, EPS)
        # The extreme neighbours realise the full sensitivity 2h/n: a tight bound.
        assert res.epsilon_lower > 0.9 * EPS


def test_audit_catches_half_noise() -> None:
    res = audit_epsilon(_eq1_half_noise, D0, D1, trials=TRIALS, rng=rng(11))
    assert audit_fails(res, EPS)
    assert res.epsilon_lower > 1.8 * EPS


def test_audit_catches_missing_clipping() -> None:
    res = audit_epsilon(_eq1_unclipped, D0, D1_OUTLIER, trials=TRIALS, rng=rng(12))
    assert audit_fails(res, EPS)
    assert res.epsilon_lower > 1.8 * EPS  # the shift is 4h/n: true epsilon 2
