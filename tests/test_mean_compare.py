"""Tests for dpnotes.mean.compare: the four methods side by side, and mixture runs."""

from __future__ import annotations

import numpy as np
import pytest

from dpnotes.mean import METHODS, coinpress_mean, compare_methods, mixture_runs
from dpnotes.mean.coinpress import coinpress_schedule, step_budgets

SETTINGS = {
    "rho": 0.5,
    "lower": -3.0,
    "upper": 3.0,
    "t": 2,
    "sigma": 1.0,
    "beta": 0.01,
    "count_share": 0.1,
}


def test_mixture_runs_shapes_and_determinism() -> None:
    x, g, g_pub = mixture_runs(500, 4, 0.5, 3, rng=np.random.default_rng(0))
    assert x.shape == g.shape == g_pub.shape == (3, 500)
    assert g.min() >= 0 and max(g.max(), g_pub.max()) < 4
    again = mixture_runs(500, 4, 0.5, 3, rng=np.random.default_rng(0))
    for a, b in zip((x, g, g_pub), again, strict=True):
        np.testing.assert_array_equal(a, b)


def test_compare_methods_returns_the_four_methods_in_order() -> None:
    x, g, g_pub = mixture_runs(2000, 3, 1.0, 5, rng=np.random.default_rng(1))
    out = compare_methods(
        x, g, g_pub, public_groups=(0, 1, 2), rng=np.random.default_rng(2), **SETTINGS
    )
    assert tuple(out) == METHODS
    for overall, groups in out.values():
        assert overall.shape == (5,) and groups.shape == (5, 3)
        # Every method is close to the private means at this size and budget.
        assert np.max(np.abs(overall - x.mean(axis=1))) < 0.2
    overall, groups = out["COINPRESS"]
    np.testing.assert_array_equal(groups, np.repeat(overall[:, None], 3, axis=1))
    # COINPRESS draws first, so it equals a direct call with the same generator.
    direct = coinpress_mean(
        x,
        lower=-3.0,
        upper=3.0,
        rho=0.5,
        t=2,
        sigma=1.0,
        beta=0.01,
        rng=np.random.default_rng(2),
    )
    np.testing.assert_array_equal(overall, direct)


def test_step_budgets() -> None:
    np.testing.assert_array_equal(
        step_budgets(1.0, 3, None), coinpress_schedule(1.0, 3)
    )
    np.testing.assert_allclose(step_budgets(2.0, 2, [0.25, 0.75]), [0.5, 1.5])
    with pytest.raises(ValueError, match="one fraction per step"):
        step_budgets(1.0, 3, [0.5, 0.5])
    with pytest.raises(ValueError, match="sum to 1"):
        step_budgets(1.0, 2, [0.5, 0.6])


def test_mixture_runs_keep_unit_variance_unless_a_spread_range_is_given() -> None:
    x, _, _ = mixture_runs(500, 4, 0.5, 3, rng=np.random.default_rng(0))
    same = mixture_runs(500, 4, 0.5, 3, rng=np.random.default_rng(0), sd_range=None)
    np.testing.assert_array_equal(x, same[0])
    # Appendix B: every group's spread drawn from U(0.1, 2); here the range is narrow
    # enough that each group's sample spread identifies it.
    wide, gw, _ = mixture_runs(
        20_000, 3, 10.0, 2, rng=np.random.default_rng(1), sd_range=(1.8, 2.0)
    )
    narrow, gn, _ = mixture_runs(
        20_000, 3, 10.0, 2, rng=np.random.default_rng(1), sd_range=(0.1, 0.12)
    )
    for values, groups, lo, hi in ((wide, gw, 1.8, 2.0), (narrow, gn, 0.1, 0.12)):
        for r in range(2):
            for k in range(3):
                sd = values[r][groups[r] == k].std()
                assert 0.95 * lo < sd < 1.05 * hi


@pytest.mark.parametrize(
    "bad", [(0.0, 2.0), (2.0, 1.0), (0.1, float("inf")), (1.0,), "ab"]
)
def test_mixture_runs_reject_a_bad_spread_range(bad) -> None:
    with pytest.raises(ValueError, match="sd_range"):
        mixture_runs(100, 2, 1.0, 1, rng=np.random.default_rng(0), sd_range=bad)
