"""Tests for dpnotes.metrics: relative and parity error (Def. 10), DPSGD-F's costs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpnotes.metrics import (
    EQUAL_COST_TAU,
    EqualCostGap,
    cost_of_privacy,
    equal_cost_gap,
    group_relative_errors,
    parity_error,
    relative_error,
)

TRUE = (2.0, np.array([1.0, 4.0, -2.0]))


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


# --- relative errors ------------------------------------------------------------------


def test_relative_error_values() -> None:
    assert float(relative_error(2.0, 2.5)) == pytest.approx(0.25)
    assert float(relative_error(-2.0, -2.5)) == pytest.approx(0.25)  # |true| divides
    assert float(relative_error(-2.0, 2.0)) == pytest.approx(2.0)
    got = relative_error(4.0, np.array([3.0, 4.0, 6.0]))
    np.testing.assert_allclose(got, [0.25, 0.0, 0.5])


def test_group_relative_errors_values_and_broadcast() -> None:
    est = np.array([[1.5, 4.0, -1.0], [0.0, 2.0, -2.0]])  # two trials
    got = group_relative_errors(TRUE[1], est)
    np.testing.assert_allclose(got, [[0.5, 0.0, 0.5], [1.0, 0.5, 0.0]])
    # A scalar per trial (as a column) is compared with every group.
    col = group_relative_errors(TRUE[1], np.array([[2.0], [1.0]]))
    np.testing.assert_allclose(col, [[1.0, 0.5, 2.0], [0.0, 0.75, 1.5]])


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: relative_error(0.0, 1.0), "zero entry"),
        (lambda: relative_error([1.0, 0.0], [1.0, 1.0]), "zero entry"),
        (lambda: relative_error(1.0, math.nan), "NaN"),
        (lambda: relative_error(math.inf, 1.0), "infinite"),
        (lambda: group_relative_errors([1.0, 0.0], [1.0, 1.0]), "zero entry"),
        (lambda: group_relative_errors([1.0, 2.0], [1.0, math.inf]), "infinite"),
    ],
)
def test_relative_errors_reject(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


# --- parity error ---------------------------------------------------------------------


def test_parity_error_hand_computation() -> None:
    est = (2.2, np.array([1.1, 3.0, -2.0]))
    # omega = 1/3 by default: (1/3) |2.2 - 2| / 2 + 0.1/1 + 1/4 + 0/2.
    expected = 0.1 / 3 + 0.1 + 0.25 + 0.0
    got = parity_error(TRUE, est)
    assert isinstance(got, float)
    assert got == pytest.approx(expected, rel=1e-12)
    assert parity_error(TRUE, est, omega=1 / 3) == pytest.approx(expected, rel=1e-12)
    # An explicit omega weights only the overall term.
    assert parity_error(TRUE, est, omega=2.0) == pytest.approx(0.2 + 0.35, rel=1e-12)
    assert parity_error(TRUE, est, omega=0.0) == pytest.approx(0.35, rel=1e-12)


def test_parity_error_doc_example() -> None:
    assert parity_error((2.0, [1.0, 4.0]), (2.2, [1.1, 4.0])) == pytest.approx(0.15)


def test_parity_error_is_zero_for_exact_estimates() -> None:
    assert parity_error(TRUE, TRUE) == 0.0


def test_parity_error_vectorised_over_trials() -> None:
    trials, k = 50, 3
    r = rng(1)
    e_all = TRUE[0] + r.normal(size=trials)
    e_groups = TRUE[1] + r.normal(size=(trials, k))
    got = parity_error(TRUE, (e_all, e_groups))
    assert got.shape == (trials,)
    loop = [parity_error(TRUE, (e_all[t], e_groups[t])) for t in range(trials)]
    np.testing.assert_allclose(got, loop, rtol=1e-12)
    # Explicit omega, vectorised.
    got2 = parity_error(TRUE, (e_all, e_groups), omega=0.5)
    loop2 = [
        parity_error(TRUE, (e_all[t], e_groups[t]), omega=0.5) for t in range(trials)
    ]
    np.testing.assert_allclose(got2, loop2, rtol=1e-12)


@pytest.mark.parametrize("trials", [5, 3], ids=["trials!=k", "trials==k"])
def test_parity_error_scalar_estimate_broadcast_to_groups(trials: int) -> None:
    # A non-stratified method releases one number; it is scored as the estimate of
    # every group. With trials == k the (trials,) array must still mean one per trial.
    e_all = TRUE[0] + rng(2).normal(size=trials)
    got = parity_error(TRUE, (e_all, None))
    full = np.repeat(e_all[:, None], 3, axis=1)
    np.testing.assert_allclose(got, parity_error(TRUE, (e_all, full)), rtol=1e-12)
    hand = np.abs(e_all - 2) / 2 / 3 + (
        np.abs(e_all - 1) / 1 + np.abs(e_all - 4) / 4 + np.abs(e_all + 2) / 2
    )
    np.testing.assert_allclose(got, hand, rtol=1e-12)
    # Scalar case.
    assert parity_error(TRUE, (2.2, None)) == pytest.approx(
        parity_error(TRUE, (2.2, np.full(3, 2.2)))
    )


@pytest.mark.parametrize(
    ("true", "est", "kwargs", "match"),
    [
        ((0.0, [1.0, 2.0]), (0.1, [1.0, 2.0]), {}, "zero entry"),
        ((1.0, [1.0, 0.0]), (1.0, [1.0, 0.1]), {}, "zero entry"),
        ((1.0, [1.0, 2.0]), (1.0, [1.0, 2.0]), {"omega": -0.5}, "omega"),
        ((1.0, [1.0, 2.0]), (1.0, [1.0, 2.0]), {"omega": math.nan}, "omega"),
        ((1.0, [1.0, 2.0]), (math.nan, [1.0, 2.0]), {}, "NaN"),
        ((1.0, [1.0, 2.0]), (1.0, [1.0, math.inf]), {}, "infinite"),
        ((1.0, [[1.0, 2.0]]), (1.0, [1.0, 2.0]), {}, "1-dimensional"),
    ],
)
def test_parity_error_rejects(true, est, kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        parity_error(true, est, **kwargs)


def test_parity_error_rejects_wrong_number_of_groups() -> None:
    with pytest.raises(ValueError, match="one column per true group"):
        parity_error((2.0, [1.0, 4.0]), (np.full(3, 2.0), np.ones((3, 3))))
    # trials == k: a (trials,) vector is not silently read as group estimates.
    with pytest.raises(ValueError, match="one column per true group"):
        parity_error((2.0, [1.0, 4.0]), (np.array([2.0, 3.0]), np.array([1.0, 4.0])))


# --- DPSGD-F's cost of privacy and the equal-cost criterion ---------------------------


def test_cost_of_privacy_by_hand() -> None:
    # Three groups; binary fractions, so every difference is exact.
    private = np.array([0.5, 0.75, 0.875])
    sgd = np.array([0.75, 0.875, 0.875])
    np.testing.assert_array_equal(cost_of_privacy(private, sgd), [-0.25, -0.125, 0.0])
    # The paper's MNIST example (Table 1): DPSGD on digit 8, 0.2485 against 0.9292.
    assert cost_of_privacy([0.2485], [0.9292])[0] == pytest.approx(-0.6807)
    # NaN (a group without test data) passes through.
    assert np.isnan(cost_of_privacy([np.nan, 0.5], [0.5, 0.5])[0])


def test_cost_of_privacy_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="shape"):
        cost_of_privacy([0.5, 0.5], [0.5])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        cost_of_privacy([1.5], [0.5])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        cost_of_privacy([0.5], [-0.1])
    with pytest.raises(ValueError, match="empty"):
        cost_of_privacy([], [])


def test_equal_cost_gap_by_hand() -> None:
    # Costs -0.25, -0.125, 0: the largest gap is between the first and the last.
    out = equal_cost_gap([-0.25, -0.125, 0.0])
    assert out == EqualCostGap(gap=0.25, tau=EQUAL_COST_TAU, within=False)
    assert EQUAL_COST_TAU == 0.05
    # Two groups 0.03125 apart are within the paper's tau; the gap ignores the sign.
    assert equal_cost_gap([-0.0625, -0.09375]) == EqualCostGap(0.03125, 0.05, True)
    # "Within" includes the boundary.
    assert equal_cost_gap([0.0, -0.25], tau=0.25).within
    assert not equal_cost_gap([0.0, -0.25], tau=0.125).within
    # The paper's MNIST numbers: DPSGD-F -0.0432 on digit 8, -0.0281 on digit 2.
    assert equal_cost_gap([-0.0432, -0.0281]).within


def test_equal_cost_gap_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="at least two"):
        equal_cost_gap([0.1])
    with pytest.raises(ValueError, match="at least two"):
        equal_cost_gap([[0.1, 0.2]])
    with pytest.raises(ValueError, match="NaN"):
        equal_cost_gap([0.1, np.nan])
    with pytest.raises(ValueError, match="tau"):
        equal_cost_gap([0.1, 0.2], tau=-0.01)
    with pytest.raises(ValueError, match="tau"):
        equal_cost_gap([0.1, 0.2], tau=math.inf)
