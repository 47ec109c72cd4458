"""PLD accounting: at most the RDP epsilon, exact where the answer is known."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from scipy.optimize import brentq

from dpnotes import accounting
from dpnotes.pld import pld_epsilon


def _exact_gaussian_epsilon(*, sigma: float, sensitivity: float, delta: float) -> float:
    """The exact epsilon of one Gaussian mechanism (inverting its privacy profile)."""

    def gap(eps: float) -> float:
        return (
            accounting.analytic_gaussian_delta(
                epsilon=eps, sensitivity=sensitivity, sigma=sigma
            )
            - delta
        )

    return brentq(gap, 1e-9, 200.0, xtol=1e-10)


@pytest.mark.parametrize(("sigma", "steps"), [(1.0, 1), (2.0, 16), (8.0, 100)])
def test_without_subsampling_it_is_the_exact_gaussian_epsilon(sigma, steps):
    # k full-batch Gaussian steps compose to one Gaussian with sensitivity sqrt(k):
    # the exact epsilon is known, and PLD (pessimistic, grid 1e-4) is just above it.
    exact = _exact_gaussian_epsilon(
        sigma=sigma, sensitivity=math.sqrt(steps), delta=1e-6
    )
    pld = pld_epsilon(sample_rate=1.0, noise_multipliers=sigma, steps=steps, delta=1e-6)
    assert exact - 1e-6 <= pld <= exact + 0.01


@pytest.mark.parametrize(
    ("q", "sigma", "steps"),
    [(256 / 54_649, 0.8, 60 * 213), (256 / 36_177, 1.0, 20 * 141), (0.01, 1.1, 1_000)],
    ids=["mnist-like", "adult-like", "generic"],
)
def test_it_is_at_most_the_rdp_epsilon_and_not_far_below(q, sigma, steps):
    rdp = accounting.rdp_epsilon(
        sample_rate=q, noise_multipliers=sigma, steps=steps, delta=1e-6
    )
    pld = pld_epsilon(sample_rate=q, noise_multipliers=sigma, steps=steps, delta=1e-6)
    assert pld <= rdp
    # RDP is a sound upper bound of the same mechanism: the two cannot be far apart.
    assert pld >= 0.7 * rdp


def test_mechanisms_of_one_step_are_merged_as_for_rdp():
    # DPSGD-F's count (sigma_1 = 10 sigma_2) and gradient read the same sample.
    two = pld_epsilon(
        sample_rate=0.01, noise_multipliers=[10.0, 1.0], steps=500, delta=1e-5
    )
    one = pld_epsilon(
        sample_rate=0.01,
        noise_multipliers=accounting.joint_noise_multiplier([10.0, 1.0]),
        steps=500,
        delta=1e-5,
    )
    assert two == one
    assert two > pld_epsilon(
        sample_rate=0.01, noise_multipliers=1.0, steps=500, delta=1e-5
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"sample_rate": 0.0},
        {"sample_rate": 1.5},
        {"sample_rate": float("nan")},
        {"steps": 0},
        {"steps": 2.5},
        {"delta": 0.0},
        {"delta": 1.0},
        {"noise_multipliers": 0.0},
        {"noise_multipliers": []},
        {"discretization": 0.0},
    ],
)
def test_bad_arguments_are_refused(kwargs):
    args = {"sample_rate": 0.1, "noise_multipliers": 1.0, "steps": 10, "delta": 1e-5}
    with pytest.raises(ValueError):
        pld_epsilon(**{**args, **kwargs})


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"steps": 10**9}, "rdp_epsilon"),
        ({"noise_multipliers": 1e-3}, "grid of about"),
        ({"noise_multipliers": 0.3, "discretization": 1e-6}, "coarser"),
    ],
)
def test_work_that_would_hang_or_exhaust_memory_is_refused_at_once(kwargs, match):
    # steps=10**9 ran for minutes in C code (no signal stops it) and sigma=1e-3 asked
    # for a 38 GiB array; both are refused before dp_accounting is called.
    args = {"sample_rate": 0.01, "noise_multipliers": 1.0, "steps": 10, "delta": 1e-5}
    start = time.perf_counter()
    with pytest.raises(ValueError, match=match):
        pld_epsilon(**{**args, **kwargs})
    assert time.perf_counter() - start < 1.0


def test_small_multipliers_in_use_still_run():
    # The guard leaves room: sigma = 0.5 (a fifth of the allowed grid) runs in seconds.
    eps = pld_epsilon(sample_rate=0.01, noise_multipliers=0.5, steps=1, delta=1e-5)
    assert np.isfinite(eps) and eps > 0
