"""The Dirichlet-Gaussian mixture of the stratification paper's experiments."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import special

from dpnotes.data import GaussianMixtureSample, sample_gaussian_mixture


def _draw(seed: int = 0, **kw) -> GaussianMixtureSample:
    args = {"n": 2000, "k": 4, "alpha": 0.5} | kw
    return sample_gaussian_mixture(rng=np.random.default_rng(seed), **args)


def test_shapes_types_and_public_groups() -> None:
    s = _draw()
    assert s.x.shape == (2000,) and s.x.dtype == np.float64
    assert s.groups.shape == (2000,) and s.groups.dtype == np.int64
    for arr in (s.proportions, s.sizes, s.means, s.sds):
        assert arr.shape == (4,)
    assert s.public_groups == (0, 1, 2, 3) and s.k == 4 and s.n == 2000
    assert int(s.sizes.sum()) == 2000
    np.testing.assert_array_equal(np.bincount(s.groups, minlength=4), s.sizes)
    assert np.isclose(s.proportions.sum(), 1.0)
    assert s.mixture_mean == pytest.approx(float(s.proportions @ s.means))


def test_seeded_determinism() -> None:
    a, b, c = _draw(seed=7), _draw(seed=7), _draw(seed=8)
    for field in ("x", "groups", "proportions", "sizes", "means"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert not np.array_equal(a.x, c.x)


def test_result_is_immutable() -> None:
    s = _draw()
    with pytest.raises(ValueError, match="read-only"):
        s.x[0] = 0.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.x = np.zeros(3)  # type: ignore[misc]


def test_rounded_sizes_follow_proportions() -> None:
    for seed in range(20):
        s = _draw(seed=seed, n=1003, k=7, alpha=0.3, min_group_size=0)
        assert int(s.sizes.sum()) == 1003
        assert np.all(np.abs(s.sizes - 1003 * s.proportions) < 1.0)


def test_min_group_size_is_guaranteed() -> None:
    for seed in range(20):
        s = _draw(seed=seed, n=500, k=10, alpha=0.05, min_group_size=3)
        assert s.sizes.min() >= 3 and int(s.sizes.sum()) == 500
        spare = s.sizes - 3
        assert np.all(np.abs(spare - (500 - 30) * s.proportions) < 1.0)
    s = _draw(n=10, k=10, alpha=1.0, min_group_size=1)
    np.testing.assert_array_equal(s.sizes, np.ones(10))


def test_multinomial_sizes() -> None:
    s = _draw(group_sizes="multinomial", n=3000, k=5, alpha=2.0, min_group_size=2)
    assert int(s.sizes.sum()) == 3000 and s.sizes.min() >= 2
    # Multinomial(2990, g): each count within 6 standard deviations of its mean.
    mean = 2990 * s.proportions
    sd = np.sqrt(2990 * s.proportions * (1 - s.proportions))
    assert np.all(np.abs(s.sizes - 2 - mean) <= 6 * sd + 1)


def test_dirichlet_log_proportions_match_digamma() -> None:
    # E[sum_i log g_i] = k (psi(alpha) - psi(k alpha)), the identity behind Thm. 9.
    k, alpha, reps = 5, 0.7, 3000
    rng = np.random.default_rng(11)
    logs = np.array(
        [
            np.log(sample_gaussian_mixture(k, k, alpha, rng=rng).proportions).sum()
            for _ in range(reps)
        ]
    )
    expected = k * (special.digamma(alpha) - special.digamma(k * alpha))
    assert abs(logs.mean() - expected) < 5 * logs.std(ddof=1) / np.sqrt(reps)


def test_group_data_have_the_group_mean_and_sd() -> None:
    s = _draw(seed=3, n=40_000, k=3, alpha=5.0, sd=[0.5, 1.0, 2.0])
    for i in range(3):
        xi = s.x[s.groups == i]
        tol = 5 * s.sds[i] / np.sqrt(xi.size)
        assert abs(xi.mean() - s.means[i]) < tol
        assert xi.std(ddof=1) == pytest.approx(s.sds[i], rel=0.05)


def test_mean_distributions() -> None:
    means = np.concatenate(
        [_draw(seed=i, k=50, mean_scale=2.0).means for i in range(40)]
    )
    # 2000 draws of N(0, 4): mean within 5 SE of 0, variance within 15 % of 4.
    assert abs(means.mean()) < 5 * 2.0 / np.sqrt(means.size)
    assert means.var() == pytest.approx(4.0, rel=0.15)
    uni = np.concatenate(
        [
            _draw(seed=i, k=50, mean_distribution="uniform", mean_scale=3.0).means
            for i in range(40)
        ]
    )
    assert uni.min() >= -3.0 and uni.max() <= 3.0
    assert uni.var() == pytest.approx(9.0 / 3.0, rel=0.15)  # Var U(-R, R) = R^2 / 3


def test_shuffle_false_sorts_by_group() -> None:
    s = _draw(shuffle=False)
    assert np.all(np.diff(s.groups) >= 0)
    t = _draw(shuffle=True)
    assert np.any(np.diff(t.groups) < 0)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n": 0}, ValueError, "n must be at least 1"),
        ({"n": -5}, ValueError, "n must be at least 1"),
        ({"n": 10.0}, TypeError, "n must be an integer"),
        ({"k": 0}, ValueError, "k must be at least 1"),
        ({"alpha": 0.0}, ValueError, "alpha"),
        ({"alpha": -1.0}, ValueError, "alpha"),
        ({"alpha": float("nan")}, ValueError, "alpha"),
        ({"alpha": "1"}, TypeError, "alpha"),
        ({"sd": -1.0}, ValueError, "sd must be positive"),
        ({"sd": [1.0, 2.0]}, ValueError, "array of 4 positive numbers"),
        ({"mean_scale": 0.0}, ValueError, "mean_scale"),
        ({"mean_distribution": "cauchy"}, ValueError, "mean_distribution"),
        ({"group_sizes": "poisson"}, ValueError, "group_sizes"),
        ({"n": 7, "min_group_size": 2}, ValueError, "too small"),
        ({"min_group_size": -1}, ValueError, "min_group_size"),
        ({"shuffle": 1}, TypeError, "shuffle"),
    ],
)
def test_bad_inputs(kwargs: dict, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        _draw(**kwargs)


def test_rng_must_be_a_generator() -> None:
    with pytest.raises(TypeError, match=r"numpy\.random\.Generator"):
        sample_gaussian_mixture(10, 2, 1.0, rng=0)  # type: ignore[arg-type]
