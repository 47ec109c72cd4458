"""DPSGD-F's bound rule read other ways: the switches of :class:`DPSGDFRule`.

Each switch is checked against a hand computation, the default against the package's
own rule (bit for bit), and the bad inputs the cause study could meet are refused
before any training.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from dpnotes.dpsgd.engine import PerSampleClipper, cross_entropy_per_sample
from dpnotes.dpsgd.loop import train
from dpnotes.dpsgd.rules import (
    DPSGDFRule,
    dpsgd_f_clip_bounds,
    dpsgd_f_step,
    fair_dp_clip_bounds,
    rule_clip_bounds,
)

# m_1, m_2, o_1, o_2 of one batch: group 1 has 10 rows (1 clipped), group 2 has 4
# (all clipped); b = 14 rows, m = 5 clipped.
COUNTS = torch.tensor([1.0, 4.0, 9.0, 0.0], dtype=torch.float64)


def _round(t: torch.Tensor) -> list[float]:
    return [round(v, 6) for v in t.tolist()]


# --------------------------------------------------------------------------------------
# The record
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"guard": "floor"}, "guard"),
        ({"counts": "true"}, "counts"),
        ({"noise_scale": "C0"}, "noise_scale"),
        ({"reading": "esipova"}, "reading"),
        ({"denominator": "b"}, "denominator"),
        ({"guard": "clip"}, "pass cap > 1"),
        ({"guard": "clip", "cap": 1.0}, "at or below C_0"),
        ({"guard": "clip", "cap": 0.5}, "at or below C_0"),
        ({"guard": "clip", "cap": math.inf}, "cap"),
        ({"guard": "clip", "cap": math.nan}, "cap"),
        ({"cap": 3.0}, "guard='clip' only"),
        ({"reading": "fair_dp", "guard": "clamp1"}, "own guard"),
        ({"reading": "fair_dp", "denominator": "public"}, "own guard"),
    ],
)
def test_rule_refuses_bad_switches(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DPSGDFRule(**kwargs)


def test_rule_privacy_and_label():
    assert DPSGDFRule().private and DPSGDFRule().is_default
    assert DPSGDFRule().label == "default"
    assert DPSGDFRule(guard="clamp1").private  # post-processing of noisy counts
    assert DPSGDFRule(denominator="public").private
    assert DPSGDFRule(reading="fair_dp").private  # its bounds, our noise scale
    for rule in (
        DPSGDFRule(counts="exact"),
        DPSGDFRule(noise_scale="base_bound"),
        DPSGDFRule(reading="fair_dp", noise_scale="batch_max"),
    ):
        assert not rule.private
    assert DPSGDFRule(guard="clip", cap=3).cap == 3.0
    assert (
        DPSGDFRule(counts="exact", noise_scale="base_bound").label
        == "counts=exact, noise_scale=base_bound"
    )


# --------------------------------------------------------------------------------------
# The bounds under each reading, by hand
# --------------------------------------------------------------------------------------


def test_default_reading_is_the_package_rule():
    noisy = torch.tensor([-2.0, 3.5, 7.0, 0.4], dtype=torch.float64)
    for rule in (None, DPSGDFRule()):
        got = rule_clip_bounds(noisy, clip_norm=1.5, rule=rule, batch_size=14)
        assert torch.equal(got, dpsgd_f_clip_bounds(noisy, clip_norm=1.5))


def test_public_denominator_divides_by_b():
    # shares 0.1 and 1; overall m / b = 5 / 28 (not the noisy total 14)
    rule = DPSGDFRule(denominator="public")
    got = rule_clip_bounds(COUNTS, clip_norm=1.0, rule=rule, batch_size=28)
    assert _round(got) == _round(1 + torch.tensor([0.1, 1.0]) / (5 / 28))
    with pytest.raises(ValueError, match="batch_size"):
        rule_clip_bounds(COUNTS, clip_norm=1.0, rule=rule)


def test_clamp1_guard_keeps_every_ratio_defined():
    noisy = torch.tensor([-3.0, 4.0, 9.0, -1.0], dtype=torch.float64)
    got = rule_clip_bounds(noisy, clip_norm=1.0, rule=DPSGDFRule(guard="clamp1"))
    # counts -> [1, 4, 9, 1]: shares 1/10 and 4/5, overall 5/15
    assert _round(got) == _round(1 + torch.tensor([0.1, 0.8]) / (5 / 15))
    # The neutral guard gives the undefined group 2 C_0 instead.
    zero = torch.tensor([0.0, 0.0, 9.0, 3.0], dtype=torch.float64)
    assert _round(dpsgd_f_clip_bounds(zero, clip_norm=1.0)) == [2.0, 2.0]
    assert _round(
        rule_clip_bounds(zero, clip_norm=1.0, rule=DPSGDFRule(guard="clamp1"))
    ) == _round(1 + torch.tensor([1 / 10, 1 / 4]) / (2 / 14))


def test_clip_guard_uses_raw_counts_then_clips():
    rule = DPSGDFRule(guard="clip", cap=3.0)
    # raw counts: group 1 share -2 / 6 (negative -> bound below C_0 -> C_0);
    # group 2 share 4 / 4 = 1, overall 2 / 10 -> 1 + 5 = 6 -> capped at 3.
    noisy = torch.tensor([-2.0, 4.0, 8.0, 0.0], dtype=torch.float64)
    assert _round(rule_clip_bounds(noisy, clip_norm=0.5, rule=rule)) == [0.5, 1.5]
    # A zero denominator: inf is capped, nan (0 / 0) falls to C_0.
    zero = torch.tensor([0.0, 2.0, 0.0, 0.0], dtype=torch.float64)
    assert _round(rule_clip_bounds(zero, clip_norm=1.0, rule=rule)) == [1.0, 2.0]


def test_fair_dp_reading_by_hand():
    # counts truncated toward zero, floored at 0: [1, 4, 9, 0] from these
    noisy = torch.tensor([1.9, 4.2, 9.99, -0.7], dtype=torch.float64)
    got = fair_dp_clip_bounds(noisy, clip_norm=1.0)
    assert _round(got) == _round(1 + torch.tensor([0.1, 1.0]) / (0.55 + 1e-8))
    # an empty group counts as share 1; all-zero shares give C_0 everywhere
    empty = torch.tensor([3.0, 0.0, 1.0, 0.0], dtype=torch.float64)
    assert _round(fair_dp_clip_bounds(empty, clip_norm=1.0)) == _round(
        1 + torch.tensor([0.75, 1.0]) / (0.875 + 1e-8)
    )
    none = torch.tensor([0.0, 0.0, 5.0, 2.0], dtype=torch.float64)
    assert _round(fair_dp_clip_bounds(none, clip_norm=2.0)) == [2.0, 2.0]
    rule = DPSGDFRule(reading="fair_dp")
    assert torch.equal(rule_clip_bounds(noisy, clip_norm=1.0, rule=rule), got)


# --------------------------------------------------------------------------------------
# One step under each reading
# --------------------------------------------------------------------------------------


def _batch(n: int = 40, seed: int = 0):
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(5, 2))
    x = torch.randn(n, 5) * 3
    y = torch.randint(0, 2, (n,))
    groups = (torch.arange(n) % 8 == 0).long()  # group 1: rows 0, 8, 16, ...
    clipper = PerSampleClipper(net, cross_entropy_per_sample, backend="ghost")
    return clipper.compute(x, y), groups


def _step(rule, *, sigma1=8.0, groups=None, seed=0):
    batch, g = _batch()
    return dpsgd_f_step(
        batch,
        g if groups is None else groups,
        num_groups=2,
        noise_multiplier=0.8,
        count_noise_multiplier=sigma1,
        clip_norm=0.3,
        generator=torch.Generator().manual_seed(seed),
        count_generator=torch.Generator().manual_seed(seed + 1),
        rule=rule,
        batch_size=40,
    )


def test_step_noise_scale_switch():
    ours = _step(None)
    assert ours.noise_std == pytest.approx(0.8 * float(ours.clip_bounds.max()))
    slip = _step(DPSGDFRule(noise_scale="base_bound"))
    assert slip.noise_std == pytest.approx(0.8 * 0.3)
    assert torch.equal(slip.clip_bounds, ours.clip_bounds)  # same counts, same C_k
    # One group alone in the batch: the noise follows that group's bound, whatever
    # the absent group's (counted as share 0 in the paper's reading).
    batch, _ = _batch()
    for k in (0, 1):
        alone = torch.full((batch.batch_size,), k, dtype=torch.long)
        present = _step(DPSGDFRule(noise_scale="batch_max"), groups=alone)
        assert present.noise_std == pytest.approx(0.8 * float(present.clip_bounds[k]))


def test_step_exact_counts_ignore_the_count_noise():
    a = _step(DPSGDFRule(counts="exact"), sigma1=8.0, seed=0)
    b = _step(DPSGDFRule(counts="exact"), sigma1=50.0, seed=5)
    assert torch.equal(a.clip_bounds, b.clip_bounds)
    noisy = [_step(None, seed=s).clip_bounds for s in (0, 5)]
    assert not torch.equal(noisy[0], noisy[1])


def test_default_record_is_the_default_step():
    a, b = _step(None), _step(DPSGDFRule())
    assert a.noise_std == b.noise_std
    assert all(torch.equal(u, v) for u, v in zip(a.noisy_sum, b.noisy_sum, strict=True))


# --------------------------------------------------------------------------------------
# Training under a rule
# --------------------------------------------------------------------------------------


def _data(n: int = 400, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6)).astype(np.float32)
    y = (x[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(np.int64)
    g = (rng.random(n) < 0.2).astype(np.int64)
    return x, y, g


def _train(**kwargs):
    x, y, g = _data()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 2))
    args = dict(
        num_groups=2, method="dpsgd_f", noise_multiplier=1.0, clip_norm=0.5,
        batch_size=50, epochs=2, rng=np.random.default_rng(0),
    )  # fmt: skip
    args.update(kwargs)
    return train(model, x, y, g, **args)


def test_train_refuses_rule_misuse_before_training():
    with pytest.raises(ValueError, match="method='dpsgd'"):
        _train(method="dpsgd", rule=DPSGDFRule(guard="clamp1"))
    with pytest.raises(ValueError, match="not private"):
        _train(rule=DPSGDFRule(counts="exact"), target_epsilon=3.0)
    with pytest.raises(ValueError, match="not private"):
        _train(rule=DPSGDFRule(noise_scale="base_bound"), target_epsilon=3.0)
    with pytest.raises(TypeError, match="DPSGDFRule"):
        _train(rule={"counts": "exact"})


def test_train_reports_no_epsilon_for_a_rule_that_is_not_private():
    ours = _train()
    exact = _train(rule=DPSGDFRule(counts="exact"))
    assert math.isfinite(ours.epsilon) and ours.private
    assert exact.epsilon == math.inf and exact.epsilon_classic == math.inf
    assert not exact.private and exact.group_epsilon is None
    assert all(h.epsilon == math.inf for h in exact.history)
    assert exact.rule == DPSGDFRule(counts="exact")
    # A private reading spends what the default spends.
    clamp = _train(rule=DPSGDFRule(guard="clamp1"))
    assert clamp.epsilon == ours.epsilon and clamp.private


def test_train_default_record_reproduces_the_default_run():
    a, b = _train(), _train(rule=DPSGDFRule())
    assert b.rule is None
    for p, q in zip(a.model.parameters(), b.model.parameters(), strict=True):
        assert torch.equal(p, q)


def test_epoch_diagnostics_of_the_bounds():
    res = _train()
    for h in res.history:
        ratio, share = np.array(h.sensitivity_ratio), np.array(h.step_share)
        assert ((ratio > 0) & (ratio <= 1)).all()
        assert share.sum() == pytest.approx(1.0)
        assert h.largest_bound >= max(h.clip_bounds) >= 0.5
    assert res.largest_bound == max(h.largest_bound for h in res.history)
    frame = res.history_frame()
    assert frame["sensitivity_ratio"].between(0, 1).all()
    sgd = _train(method="sgd", noise_multiplier=None, clip_norm=None)
    assert sgd.history[0].step_share is None and sgd.largest_bound is None
