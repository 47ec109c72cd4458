"""Tests for the one-run privacy audit of DP-SGD training (dpnotes.dpsgd.audit)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from scipy import special, stats
from torch import nn

from dpnotes.dpsgd.audit import (
    OneRunAudit,
    audit_training,
    canary_batch,
    count_correct_guesses,
    one_run_epsilon_lower_bound,
    one_run_p_value,
)
from dpnotes.dpsgd.engine import PerSampleClipper
from dpnotes.dpsgd.rules import (
    DPSGDFRule,
    clipped_counts,
    dpsgd_f_clip_bounds,
    dpsgd_f_step,
    dpsgd_step,
    release_counts,
)

# --- The theorem: p-value and lower bound ---------------------------------------------


@pytest.mark.parametrize("r", [1, 10, 100, 1000])
@pytest.mark.parametrize("beta", [0.05, 0.01])
def test_all_correct_without_delta_solves_p_to_the_r_equals_beta(
    r: int, beta: float
) -> None:
    # With delta = 0 and v = r, the p-value is (e^eps / (1 + e^eps))**r.
    q = beta ** (1.0 / r)
    expected = max(0.0, math.log(q / (1.0 - q)))  # r = 1 cannot reject epsilon = 0
    got = one_run_epsilon_lower_bound(r, r, delta=0.0, m=max(r, 1000), beta=beta)
    assert got == pytest.approx(expected, abs=1e-8)
    assert got <= expected  # the lower end of the bisection's bracket


def test_p_value_without_delta_is_the_binomial_tail() -> None:
    for eps in (0.0, 0.5, 2.0):
        q = special.expit(eps)
        assert one_run_p_value(7, 7, epsilon=eps, delta=0.0, m=7) == pytest.approx(
            q**7, rel=1e-12
        )
        assert one_run_p_value(60, 100, epsilon=eps, delta=0.0, m=500) == (
            pytest.approx(stats.binom.sf(59, 100, q), rel=1e-12)
        )


@pytest.mark.parametrize(("v", "r", "m"), [(15, 20, 30), (1, 5, 8), (40, 40, 45)])
def test_delta_term_is_the_theorems_maximum_over_every_i(v: int, r: int, m: int):
    # The theorem's max runs over i = 1..m; the code stops at i = v (f(v - i) = 1
    # beyond). Evaluate the statement literally and compare.
    eps, delta = 0.7, 1e-3
    q = special.expit(eps)

    def f(u: int) -> float:
        return 1.0 if u <= 0 else float(stats.binom.sf(u - 1, r, q))

    literal = f(v) + 2 * m * delta * max((f(v - i) - f(v)) / i for i in range(1, m + 1))
    got = one_run_p_value(v, r, epsilon=eps, delta=delta, m=m)
    assert got == pytest.approx(min(literal, 1.0), rel=1e-10)


def test_reproduces_the_published_examples() -> None:
    # The paper's appendix D example (m=1000, r=100, v=75, delta=1e-4: 0.673) and its
    # section 7 value (m=1e5, r=1510, v=1439, delta=1e-5: 2.675, printed truncated).
    assert one_run_epsilon_lower_bound(75, 100, delta=1e-4, m=1000) == pytest.approx(
        0.673, abs=5e-4
    )
    big = one_run_epsilon_lower_bound(1439, 1510, delta=1e-5, m=100_000)
    assert 2.675 <= big < 2.676


def test_bound_is_monotone_in_correct_guesses_and_delta() -> None:
    bounds = [
        one_run_epsilon_lower_bound(v, 200, delta=1e-5, m=1000) for v in range(201)
    ]
    assert all(a <= b for a, b in itertools.pairwise(bounds))
    assert bounds[-1] > bounds[-2] > bounds[150] > 0
    looser = [
        one_run_epsilon_lower_bound(v, 200, delta=1e-3, m=1000) for v in (150, 200)
    ]
    assert looser[0] < bounds[150] and looser[1] < bounds[200]


@pytest.mark.parametrize("v", [0, 30, 50, 55])
def test_chance_gives_zero(v: int) -> None:
    # 55/100 right is within chance at 95%: P[Bin(100, 1/2) >= 55] = 0.18 > 0.05.
    assert one_run_epsilon_lower_bound(v, 100, delta=1e-5, m=1000) == 0.0
    assert one_run_epsilon_lower_bound(0, 0, delta=0.0, m=1) == 0.0


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"correct": 11, "guesses": 10, "m": 20}, ValueError),
        ({"correct": 5, "guesses": 30, "m": 20}, ValueError),
        ({"correct": 0, "guesses": 0, "m": 0}, ValueError),
        ({"correct": -1, "guesses": 10, "m": 20}, ValueError),
        ({"correct": 5.0, "guesses": 10, "m": 20}, TypeError),
        ({"correct": 5, "guesses": 10, "m": 20, "beta": 0.0}, ValueError),
        ({"correct": 5, "guesses": 10, "m": 20, "beta": 1.0}, ValueError),
        ({"correct": 5, "guesses": 10, "m": 20, "delta": 1.0}, ValueError),
        ({"correct": 5, "guesses": 10, "m": 20, "delta": -1e-5}, ValueError),
        ({"correct": 5, "guesses": 10, "m": 20, "delta": "0"}, TypeError),
    ],
)
def test_bound_refuses_bad_input(kwargs: dict, error: type) -> None:
    kwargs = {"delta": 1e-5, **kwargs}
    with pytest.raises(error):
        one_run_epsilon_lower_bound(**kwargs)


def test_p_value_refuses_a_negative_epsilon() -> None:
    with pytest.raises(ValueError, match="epsilon"):
        one_run_p_value(5, 10, epsilon=-0.1, delta=0.0, m=10)


# --- Guessing -------------------------------------------------------------------------


def test_count_correct_guesses() -> None:
    scores = np.array([5.0, -3.0, 4.0, 0.0, -2.0, 1.0])
    included = np.array([True, False, False, True, False, True])
    # highest two: 0 (in, right), 2 (out, wrong); lowest two: 1, 4 (out, right)
    assert count_correct_guesses(scores, included, k_plus=2, k_minus=2) == 3
    assert count_correct_guesses(scores, included, k_plus=0, k_minus=1) == 1
    assert (
        count_correct_guesses(torch.tensor(scores), included, k_plus=6, k_minus=0) == 3
    )
    with pytest.raises(ValueError, match="exceeds"):
        count_correct_guesses(scores, included, k_plus=4, k_minus=3)
    with pytest.raises(ValueError, match="at least 1"):
        count_correct_guesses(scores, included, k_plus=0, k_minus=0)
    with pytest.raises(ValueError, match="same length"):
        count_correct_guesses(scores, included[:5], k_plus=1, k_minus=1)
    with pytest.raises(ValueError, match="NaN"):
        count_correct_guesses([np.nan, 1.0], [True, False], k_plus=1, k_minus=1)


# --- Gradient canaries in a batch -----------------------------------------------------


def _real_batch(clipper: PerSampleClipper, n: int = 6):
    g = torch.Generator().manual_seed(3)
    x = 2.0 * torch.randn(n, 4, generator=g)
    y = torch.randint(0, 2, (n,), generator=g)
    return clipper.compute(x, y)


def _model() -> nn.Linear:
    model = nn.utils.skip_init(nn.Linear, 4, 2)
    with torch.no_grad():
        model.weight.copy_(torch.arange(8.0).view(2, 4) / 10)
        model.bias.zero_()
    return model


def _directions(coordinates: list[int], total: int = 10) -> torch.Tensor:
    d = torch.zeros(len(coordinates), total)
    d[torch.arange(len(coordinates)), torch.tensor(coordinates)] = 1.0
    return d


def test_canary_batch_adds_each_canary_clipped() -> None:
    with PerSampleClipper(_model()) as clipper:
        real = _real_batch(clipper)
        aug = canary_batch(real, _directions([1, 9, 1]), 50.0)
        assert aug.batch_size == real.batch_size + 3
        assert torch.equal(aug.norms[-3:], torch.full((3,), 50.0))
        base = [s.clone() for s in real.clipped_sum(0.5, set_grad=False)]
        weight, bias = aug.clipped_sum(0.5, set_grad=False)
    # Canaries 0 and 2 on weight[0, 1] (0.5 each after clipping), canary 1 on bias[1].
    assert float(weight[0, 1] - base[0][0, 1]) == pytest.approx(1.0, abs=1e-6)
    assert float(bias[1] - base[1][1]) == pytest.approx(0.5, abs=1e-6)
    others = torch.ones_like(weight, dtype=torch.bool)
    others[0, 1] = False
    assert torch.allclose(weight[others], base[0][others], atol=1e-6)


def test_dpsgd_step_noises_the_canaries_like_real_examples() -> None:
    with PerSampleClipper(_model()) as clipper:
        real = _real_batch(clipper)
        groups = torch.zeros(real.batch_size, dtype=torch.long)
        aug = canary_batch(real, _directions([2, 7]), 100.0)
        aug_groups = torch.zeros(aug.batch_size, dtype=torch.long)
        kw = {"num_groups": 2, "noise_multiplier": 1.0, "clip_norm": 0.5}
        plain = dpsgd_step(
            real, groups, generator=torch.Generator().manual_seed(1), **kw
        )
        with_canaries = dpsgd_step(
            aug, aug_groups, generator=torch.Generator().manual_seed(1), **kw
        )
    diff = torch.cat(
        [
            (a - b).reshape(-1)
            for a, b in zip(with_canaries.noisy_sum, plain.noisy_sum, strict=True)
        ]
    )
    assert torch.allclose(diff, 0.5 * _directions([2, 7]).sum(0), atol=1e-5)
    assert with_canaries.noise_std == plain.noise_std == 0.5


def test_dpsgd_f_counts_and_clips_the_canaries_in_their_group() -> None:
    with PerSampleClipper(_model()) as clipper:
        real = _real_batch(clipper)
        groups = torch.tensor([0, 0, 0, 0, 1, 0])
        aug = canary_batch(real, _directions([3, 3, 8]), 100.0)
        aug_groups = torch.cat([groups, torch.ones(3, dtype=torch.long)])
        counts_real = clipped_counts(real.norms, groups, clip_norm=0.5, num_groups=2)
        counts = clipped_counts(aug.norms, aug_groups, clip_norm=0.5, num_groups=2)
        assert counts.tolist() == (counts_real + torch.tensor([0, 3, 0, 0])).tolist()
        out = dpsgd_f_step(
            aug,
            aug_groups,
            num_groups=2,
            noise_multiplier=1.0,
            count_noise_multiplier=10.0,
            clip_norm=0.5,
            generator=torch.Generator().manual_seed(5),
            count_generator=torch.Generator().manual_seed(6),
        )
        # The same step by hand: the released counts include the canaries.
        noisy = release_counts(
            counts, noise_multiplier=10.0, generator=torch.Generator().manual_seed(6)
        )
        bounds = dpsgd_f_clip_bounds(noisy, clip_norm=0.5)
        sums = real.clipped_sum(bounds.float()[groups], set_grad=False)
    g = torch.Generator().manual_seed(5)
    std = float(bounds.max())
    expected = [s + std * torch.randn(s.shape, generator=g) for s in sums]
    expected[0][0, 3] += 2 * bounds[1]  # two canaries on weight[0, 3], clipped to C_1
    expected[1][0] += bounds[1]  # coordinate 8: bias[0]
    assert torch.allclose(out.clip_bounds, bounds)
    for got, want in zip(out.noisy_sum, expected, strict=True):
        assert torch.allclose(got, want.to(got.dtype), atol=1e-4)


def test_canary_batch_edge_cases_and_bad_input() -> None:
    with PerSampleClipper(_model()) as clipper:
        real = _real_batch(clipper)
        none = canary_batch(real, torch.zeros(0, 10), 10.0)
        assert none.batch_size == real.batch_size
        for a, b in zip(
            none.clipped_sum(1.0, set_grad=False),
            real.clipped_sum(1.0, set_grad=False),
            strict=True,
        ):
            assert torch.equal(a, b)
        empty = clipper.compute(torch.zeros(0, 4), torch.zeros(0, dtype=torch.long))
        only = canary_batch(empty, _directions([0]), 10.0)
        weight, _ = only.clipped_sum(1.0, set_grad=False)
        assert float(weight[0, 0]) == pytest.approx(1.0)
        with pytest.raises(ValueError, match="shape"):
            canary_batch(real, torch.zeros(2, 9), 10.0)
        with pytest.raises(ValueError, match="unit"):
            canary_batch(real, 2 * _directions([0]), 10.0)
        with pytest.raises(ValueError, match="canary_norm"):
            canary_batch(real, _directions([0]), 0.0)


# --- The audit of a training run ------------------------------------------------------

SMALL = {
    "m": 60,
    "k_plus": 10,
    "k_minus": 10,
    "steps": 10,
    "group_sizes": (300, 60),
    "sample_rate": 0.1,
}


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"method": "sgd"}, ValueError, "method"),
        ({"method": "dpsgd", "rule": DPSGDFRule()}, ValueError, "dpsgd_f"),
        ({"rule": "base_bound"}, TypeError, "DPSGDFRule"),
        ({"m": 0}, ValueError, "m"),
        ({"m": 100, "k_plus": 60, "k_minus": 50}, ValueError, "exceeds"),
        ({"k_plus": 0, "k_minus": 0}, ValueError, "at least 1"),
        ({"beta": 1.0}, ValueError, "beta"),
        ({"delta": 0.0}, ValueError, "delta"),
        ({"steps": 0}, ValueError, "steps"),
        ({"sample_rate": 1.5}, ValueError, "sample_rate"),
        ({"noise_multiplier": 0.0}, ValueError, "noise_multiplier"),
        ({"canary_group": 2}, ValueError, "canary_group"),
        ({"group_sizes": (100,)}, ValueError, "group_sizes"),
        ({"seed": 1.5}, TypeError, "seed"),
    ],
)
def test_audit_training_refuses_bad_input(kwargs: dict, error: type, match: str):
    with pytest.raises(error, match=match):
        audit_training(**kwargs)


def test_small_audit_runs_and_reports_its_settings() -> None:
    res = audit_training("naive", seed=3, **SMALL)
    assert isinstance(res, OneRunAudit)
    assert res.guesses == 20 and res.m == 60 and 0 <= res.correct <= 20
    assert 0 < res.included < 60
    assert res.private and res.effective_noise_multiplier == pytest.approx(2.0)
    assert res.count_noise_multiplier == pytest.approx(20.0)
    assert res.canary_norm == 100.0 and res.steps == 10
    assert res.epsilon_lower == one_run_epsilon_lower_bound(
        res.correct, 20, delta=res.delta, m=60, beta=res.beta
    )
    assert "naive" in res.summary()


@pytest.mark.slow
@pytest.mark.parametrize("method", ["dpsgd", "naive", "dpsgd_f"])
def test_audit_passes_for_the_private_rules(method: str) -> None:
    res = audit_training(method, seed=0)
    assert res.private
    assert 1.0 < res.claimed_epsilon < 2.0
    assert res.passes(), res.summary()
    assert res.epsilon_lower < 0.5 * res.claimed_epsilon
    assert res.effective_noise_multiplier == pytest.approx(res.noise_multiplier)


@pytest.mark.slow
def test_audit_catches_gradient_noise_scaled_to_the_base_bound() -> None:
    # noise sigma_2 C_0 against the sensitivity max_k C_k: not private.
    res = audit_training("dpsgd_f", rule=DPSGDFRule(noise_scale="base_bound"), seed=0)
    assert not res.private and "not private" in res.note
    assert not res.passes(), res.summary()
    assert res.epsilon_lower > res.claimed_epsilon + 1.0
    assert res.effective_noise_multiplier < 0.25 * res.noise_multiplier
    assert res.effective_epsilon > 10 * res.claimed_epsilon


@pytest.mark.slow
def test_audit_is_deterministic_given_the_seed() -> None:
    a = audit_training("dpsgd_f", seed=4)
    b = audit_training("dpsgd_f", seed=4)
    c = audit_training("dpsgd_f", seed=5)
    assert (a.correct, a.epsilon_lower, a.included) == (
        b.correct,
        b.epsilon_lower,
        b.included,
    )
    assert (a.correct, a.included) != (c.correct, c.included)
