"""Noise for a target budget (dpnotes.calibration), against opacus."""

from __future__ import annotations

import warnings

import pytest

from dpnotes.accounting import subsampled_gaussian_epsilon
from dpnotes.calibration import noise_multiplier_for

SETTINGS = [(1.0, 0.01, 1000), (3.0, 256 / 60_000, 14_040)]


@pytest.mark.parametrize(("epsilon", "q", "steps"), SETTINGS)
def test_the_multiplier_meets_the_budget_as_opacus_finds_it(epsilon, q, steps):
    from opacus.accountants.utils import get_noise_multiplier

    sigma = noise_multiplier_for(epsilon, sample_rate=q, steps=steps, delta=1e-5)
    spent = subsampled_gaussian_epsilon(
        sample_rate=q, noise_multipliers=sigma, steps=steps, delta=1e-5
    )
    assert epsilon - 0.01 <= spent <= epsilon
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # opacus' note on its orders
        theirs = get_noise_multiplier(
            target_epsilon=epsilon,
            target_delta=1e-5,
            sample_rate=q,
            steps=steps,
            accountant="rdp",
        )
    assert sigma == pytest.approx(theirs, abs=0.01)


def test_dpsgd_f_counts_need_more_noise_and_are_accounted():
    args = {"sample_rate": 0.01, "steps": 1000, "delta": 1e-5}
    alone = noise_multiplier_for(1.0, **args)
    with_counts = noise_multiplier_for(1.0, count_noise_factor=10.0, **args)
    assert with_counts > alone
    spent = subsampled_gaussian_epsilon(
        noise_multipliers=(with_counts, 10.0 * with_counts), **args
    )
    assert 0.99 <= spent <= 1.0


def test_a_generous_budget_takes_the_least_multiplier_tried():
    assert noise_multiplier_for(1e6, sample_rate=0.01, steps=1, delta=1e-5) == 0.01


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"target_epsilon": 0.0}, "target_epsilon"),
        ({"steps": 0}, "steps"),
        ({"sample_rate": 1.5}, "sample_rate"),
        ({"delta": 0.0}, "delta"),
        ({"count_noise_factor": -1.0}, "count_noise_factor"),
        (
            {"target_epsilon": 1e-3, "sample_rate": 1.0, "steps": 10**6},
            "take fewer steps or a larger budget",
        ),
    ],
)
def test_bad_input_is_refused_with_what_to_do(kwargs, message):
    args = {"target_epsilon": 1.0, "sample_rate": 0.01, "steps": 100, "delta": 1e-5}
    with pytest.raises(ValueError, match=message):
        noise_multiplier_for(**(args | kwargs))
