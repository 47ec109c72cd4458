"""Inputs found under stress in validation, accounting and DP-SGD.

Each case once gave a wrong result (a number or a NaN model where there should be an
error), a bare ``OverflowError``, or a crash in the middle of a run. Each now raises a
``ValueError``/``TypeError`` that says what to do (before any work where possible),
or a ``FloatingPointError`` naming the step at which training diverged; the valid
path next to each still works, and valid runs keep their numbers bit for bit.
"""

from __future__ import annotations

import hashlib
import math
import sys
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import dpnotes.dpsgd.loop as loop_mod
from dpnotes.accounting import (
    ZCDPAccountant,
    classic_rdp_conversion,
    compose_sequential_approx,
    compose_sequential_pure,
    compose_sequential_zcdp,
    joint_noise_multiplier,
    subsampled_gaussian_epsilon,
)
from dpnotes.dpsgd import DPSGDFRule, Privacy, train
from dpnotes.dpsgd.rules import (
    dpsgd_f_clip_bounds,
    fair_dp_clip_bounds,
    largest_step_scales,
    rule_clip_bounds,
)
from dpnotes.dpsgd.settings import FLOAT32_MAX
from dpnotes.lab.runner import device_info
from dpnotes.mechanisms import laplace_mean
from dpnotes.report import machine_name
from dpnotes.validation import check_array

torch.set_num_threads(1)


# --- check_array: entries that are not real numbers -----------------------------------


@pytest.mark.parametrize(
    ("x", "match"),
    [
        (np.array([1 + 2j, 2 + 0j]), r"x must be real numeric.*complex.*np\.real\(x\)"),
        (np.array([1 + 0j, 2 + 0j]), "complex"),  # even a zero imaginary part
        ([1 + 2j, 2.0], "complex"),
        (np.array([1, 1 + 2j], dtype=object), r"1 of its 2 entries.*\(1\+2j\)"),
        (np.array([1.0, "2"], dtype=object), r"'2' \(str\).*convert them"),
        (np.array([1.0, None], dtype=object), r"None \(NoneType\).*impute"),
        (np.array(["1.5", "2"]), "got strings"),
        (np.array([b"1"]), "got bytes"),
        (np.array(["2020-01-01"], dtype="datetime64[D]"), "got datetimes"),
        (np.array([1, 2], dtype="timedelta64[s]"), "got time deltas"),
        ([[1.0], [2.0, 3.0]], "numeric array-like"),
    ],
)
def test_check_array_refuses_entries_that_are_not_real_numbers(x, match):
    with pytest.raises(TypeError, match=match):
        check_array(x, "x")


def test_a_complex_mean_is_refused_by_name_and_real_data_still_works():
    rng = np.random.default_rng(0)
    with pytest.raises(TypeError, match="x must be real numeric array-like"):
        laplace_mean(
            np.array([1 + 2j, 2 + 0j]), lower=0.0, upper=3.0, epsilon=1.0, rng=rng
        )
    assert np.isfinite(
        laplace_mean(np.array([1.0, 2.0]), lower=0.0, upper=3.0, epsilon=1.0, rng=rng)
    )
    # Real numbers of every kind still pass, converted exactly as before.
    mixed = np.array(
        [1, 0.5, True, np.float32(0.25), Decimal(2), Fraction(1, 4)], object
    )
    np.testing.assert_array_equal(check_array(mixed), [1.0, 0.5, 1.0, 0.25, 2.0, 0.25])
    np.testing.assert_array_equal(check_array(np.array([True, False])), [1.0, 0.0])
    assert check_array([2**70]).tolist() == [float(2**70)]


# --- accounting: RDP values and sums that overflow ------------------------------------


@pytest.mark.parametrize(
    ("rdp", "match"),
    [
        ([np.nan, 1.0], "got nan at order 2"),
        ([0.5, -0.1], "got -0.1 at order 5"),
        ([-np.inf, 1.0], "got -inf"),
        ([-1e-15, 1.0], r"np\.maximum\(rdp, 0\.0\)"),
    ],
)
def test_classic_conversion_refuses_nan_and_negative_rdp(rdp, match):
    with pytest.raises(ValueError, match=match):
        classic_rdp_conversion(rdp, [2.0, 5.0], delta=1e-5)


def test_classic_conversion_valid_curves():
    log_inv = math.log(1e5)
    # An order without a finite bound (inf) is never the minimiser; 0 is valid.
    assert classic_rdp_conversion([np.inf, 1.0], [2.0, 5.0], delta=1e-5) == (
        1.0 + log_inv / 4
    )
    assert classic_rdp_conversion([0.0], [3.0], delta=1e-5) == log_inv / 2
    # A subnormal delta: 1 / delta overflows, its log (744.44) does not.
    assert classic_rdp_conversion([1.0], [2.0], delta=5e-324) == pytest.approx(
        1.0 + 1074 * math.log(2), rel=1e-15
    )
    # opacus returns values a few ulps below 0 for huge multipliers; the cached
    # classic epsilon clips them at 0 (the safe side) instead of failing.
    eps = subsampled_gaussian_epsilon(
        sample_rate=0.5,
        noise_multipliers=1e6,
        steps=1,
        delta=1e-5,
        conversion="classic",
    )
    assert 0 < eps < 1


@pytest.mark.parametrize(
    ("compose", "budgets", "match"),
    [
        (compose_sequential_pure, [1e308, 1e308], "total of the epsilons overflows"),
        (compose_sequential_zcdp, [1e308, 1e308], "total of the rhos overflows"),
        (
            compose_sequential_approx,
            [(1e308, 1e-6), (1e308, 1e-6)],
            "total of the epsilons overflows",
        ),
        (joint_noise_multiplier, [1e-160], "larger noise multipliers"),
        (joint_noise_multiplier, [1e-154, 1e-154], "larger noise multipliers"),
    ],
)
def test_sums_of_budgets_that_overflow_are_refused(compose, budgets, match):
    with pytest.raises(ValueError, match=match):
        compose(budgets)


def test_large_budgets_that_fit_still_add_up():
    assert compose_sequential_pure([1e308, 7e307]) == 1.7e308
    assert compose_sequential_zcdp([1e308, 7e307]) == 1.7e308
    assert compose_sequential_approx([(1e308, 0.1), (7e307, 0.1)]).epsilon == 1.7e308
    assert joint_noise_multiplier([1e-150]) == pytest.approx(1e-150, rel=1e-15)
    # The largest budget refuses a spend whose running total overflows, instead of
    # recording it and failing later in the sum.
    acc = ZCDPAccountant(rho=sys.float_info.max)
    acc.spend(1e308)
    with pytest.raises(ValueError, match="would exceed the budget"):
        acc.spend(1e308)
    assert acc.spent == 1e308


# --- DP-SGD: clip norms the model cannot hold -----------------------------------------


def linear_model(seed: int = 0, dtype=torch.float32) -> nn.Module:
    """A logistic regression (two logits) initialised from a seeded generator."""
    model = nn.Linear(5, 2).to(dtype)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(0.1 * torch.randn(p.shape, generator=gen, dtype=dtype))
    return model


def two_groups(n: int = 400, seed: int = 3):
    """Linearly separable labels; group 1 (a minority) is shifted and tilted."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=gen, dtype=torch.float64)
    groups = (torch.rand(n, generator=gen) < 0.2).long()
    x[groups == 1] += 1.0
    w = torch.tensor([1.0, -1.0, 0.5, 0.0, 2.0], dtype=torch.float64)
    y = ((x @ w) > 0.5 * groups).long()
    return x, y, groups


DATA = two_groups()


def run(method="dpsgd", dtype=torch.float32, **kwargs):
    x, y, groups = DATA
    settings = {"lr": 0.5, "batch_size": 50}
    if "steps" not in kwargs:
        settings["epochs"] = 2
    if method != "sgd":
        settings |= {"noise_multiplier": 1.0, "clip_norm": 1.0}
    settings |= kwargs
    return train(
        linear_model(dtype=dtype),
        x,
        y,
        groups,
        num_groups=2,
        method=method,
        rng=np.random.default_rng(7),
        **settings,
    )


F32_ABOVE = math.nextafter(FLOAT32_MAX, math.inf)


@pytest.mark.parametrize(
    ("noise_multiplier", "clip_norm"),
    [
        (1.0, 1e39),  # once a crash mid-run (torch.full in float32)
        (1.0, 1e308),  # once a NaN model with an epsilon (DPSGD-F)
        (1.0, F32_ABOVE),  # just above the limit
        (2.0, 2e38),  # the noise scale above it
        (0.5, 4e38),  # the clip bound itself above it
    ],
)
def test_privacy_refuses_a_clip_norm_float32_cannot_hold(noise_multiplier, clip_norm):
    with pytest.raises(ValueError, match="above float32's largest value"):
        Privacy(noise_multiplier=noise_multiplier, clip_norm=clip_norm)


@pytest.mark.parametrize("method", ["dpsgd", "naive", "dpsgd_f"])
def test_train_refuses_such_a_clip_norm_before_any_step(method, monkeypatch):
    def no_step(*args, **kwargs):
        raise AssertionError("a step ran")

    monkeypatch.setattr(loop_mod, "_sgd_step", no_step)
    with pytest.raises(ValueError, match="above float32's largest value"):
        run(method, clip_norm=1e39)


def test_the_float32_limit_is_exact():
    assert Privacy(noise_multiplier=1.0, clip_norm=FLOAT32_MAX).clip_norm == (
        FLOAT32_MAX
    )
    assert Privacy(noise_multiplier=0.5, clip_norm=FLOAT32_MAX).noise_multiplier == 0.5
    with pytest.raises(ValueError, match="noise_multiplier \\* clip_norm"):
        Privacy(noise_multiplier=math.nextafter(1.0, 2.0), clip_norm=FLOAT32_MAX)


@pytest.mark.parametrize(
    ("method", "rule", "expected"),
    [
        ("dpsgd", None, (1.0, 2.0)),
        ("naive", None, (1.0, 2.0 * 50 / 2)),  # theta_k <= b / K
        ("dpsgd_f", None, (2.0, 4.0)),  # at least 2 C_0; no finite maximum
        ("dpsgd_f", DPSGDFRule(guard="clamp1"), (2.0, 4.0)),
        ("dpsgd_f", DPSGDFRule(denominator="public"), (1.0, 2.0)),
        ("dpsgd_f", DPSGDFRule(guard="clip", cap=3.0), (3.0, 6.0)),
        ("dpsgd_f", DPSGDFRule(reading="fair_dp"), (3.0, 6.0)),  # 1 + K
        ("dpsgd_f", DPSGDFRule(noise_scale="base_bound"), (2.0, 2.0)),
        ("dpsgd_f", DPSGDFRule(guard="clip", cap=3.0, noise_scale="batch_max"), (3, 6)),
        ("dpsgd_f", DPSGDFRule(noise_scale="batch_max"), (2.0, 2.0)),
    ],
)
def test_largest_step_scales(method, rule, expected):
    assert largest_step_scales(
        method,
        noise_multiplier=2.0,
        clip_norm=1.0,
        batch_size=50,
        num_groups=2,
        rule=rule,
    ) == pytest.approx(expected)


@pytest.mark.parametrize("num_groups", [1, 2, 5])
def test_the_rules_stay_within_their_largest_bound(num_groups):
    # Random noisy counts, many of them near or below 0: the capped readings never
    # exceed their maximum, and the default's largest bound never falls below 2 C_0.
    gen = torch.Generator().manual_seed(num_groups)
    shape = (2000, 2 * num_groups)
    counts = torch.rand(shape, generator=gen, dtype=torch.float64) * 20
    counts += 5 * torch.randn(shape, generator=gen, dtype=torch.float64)
    common = {"batch_size": 50, "num_groups": num_groups, "noise_multiplier": 1.0}
    clip = DPSGDFRule(guard="clip", cap=3.0)
    fair = DPSGDFRule(reading="fair_dp")
    top = {
        rule: largest_step_scales("dpsgd_f", clip_norm=1.0, rule=rule, **common)[0]
        for rule in (None, clip, fair)
    }
    for c in counts:
        assert float(dpsgd_f_clip_bounds(c, clip_norm=1.0).max()) >= top[None]
        assert float(rule_clip_bounds(c, clip_norm=1.0, rule=clip).max()) <= top[clip]
        assert float(fair_dp_clip_bounds(c, clip_norm=1.0).max()) <= top[fair]


@pytest.mark.parametrize(
    ("method", "clip_norm", "rule", "bound"),
    [
        ("naive", 1e37, None, "noise std of 1.25e\\+39"),  # b / K = 125 ...
        ("dpsgd_f", 2e38, None, "clip bound of 4e\\+38"),
        ("dpsgd_f", 1e38, DPSGDFRule(guard="clip", cap=5.0), "clip bound of 5e\\+38"),
    ],
)
def test_train_refuses_a_step_scale_the_model_dtype_cannot_hold(
    method, clip_norm, rule, bound
):
    kwargs = {"rule": rule} if rule is not None else {}
    with pytest.raises(ValueError, match=f"{bound}.*largest torch.float32 value"):
        run(method, clip_norm=clip_norm, batch_size=250, **kwargs)
    # A float64 model holds it: the limit is the model's dtype's.
    assert run(method, torch.float64, clip_norm=clip_norm, steps=1, **kwargs).steps


# --- DP-SGD: divergence and a loss that is never finite -------------------------------


def test_a_diverging_run_stops_at_the_step_that_diverged():
    # Naive's noise std sigma C_0 b / K = 2.5e38 passes the check (float32 holds
    # it), but the parameters overflow at the second step.
    assert run("naive", clip_norm=1e37, steps=1).steps == 1
    with pytest.raises(
        FloatingPointError, match=r"diverged at step 2 \(epoch 1\).*Lower lr"
    ):
        run("naive", clip_norm=1e37, steps=2)


def nan_loss(output, target):
    return output[:, 0] * float("nan")


@pytest.mark.parametrize("method", ["sgd", "dpsgd", "dpsgd_f"])
def test_a_loss_that_is_nan_everywhere_is_refused_before_training(method):
    # Before, every per-example gradient was zeroed and the run trained on noise
    # alone, reporting its epsilon.
    with pytest.raises(ValueError, match=r"not finite.*data-free probe"):
        run(method, loss_fn=nan_loss)


def test_the_loss_probe_does_not_look_at_the_data():
    # Finite at the probe (target 0), infinite on every example of class 1: the
    # probe cannot see that (it would need the private targets), so the run goes on
    # and those examples get weight 0.
    def loss(output, target):
        return F.cross_entropy(output, target, reduction="none") / (target == 0)

    assert run("dpsgd", loss_fn=loss).steps == 16


# --- valid runs keep their numbers ----------------------------------------------------

#: sha256 (first 16 hex digits) of the parameters and epsilon of small valid runs, as
#: float.hex, recorded on main before these checks were added (torch 2.13.0+cpu,
#: x86-64, one thread), per CPU: the same run differs in its last bits between the
#: Intel Xeon and the AMD EPYC (oneDNN picks its kernels by instruction set), and is
#: the same from run to run on each.
PINNED_TORCH = "2.13.0+cpu"
PINNED = {
    "Intel Xeon": {
        ("sgd", "float64"): "db4b6cab9958ba07",
        ("dpsgd", "float64"): "eb4013ac8fc023cf",
        ("naive", "float64"): "d032dda9d2ee480d",
        ("dpsgd_f", "float64"): "bfc8a1cc91236949",
        ("sgd", "float32"): "07f2e785de6cfa6d",
        ("dpsgd", "float32"): "4fa9ccf91a8a8431",
        ("naive", "float32"): "76bb79295eb3e163",
        ("dpsgd_f", "float32"): "b453ecb7b6a5ff2d",
        # dpsgd_f, float32, guard=clip(cap=3), momentum 0.5
        "rule": "827493c34a313ee8",
    },
    # Recorded on 2026-11-28 with the same DP-SGD code as the Xeon's digests.
    "AMD EPYC": {
        ("sgd", "float64"): "f21e83ec52aef8a6",
        ("dpsgd", "float64"): "f2b5be0b34ba28e0",
        ("naive", "float64"): "4207bb69ba598a69",
        ("dpsgd_f", "float64"): "e6f82ac6edf22fbe",
        ("sgd", "float32"): "a0bbc0735c50593a",
        ("dpsgd", "float32"): "6d961c27fab93746",
        ("naive", "float32"): "5dac065b6e61899a",
        ("dpsgd_f", "float32"): "d42e4930a7a03ae7",
        "rule": "909b43af60374512",
    },
}


def digest(result) -> str:
    params = torch.cat([p.detach().reshape(-1) for p in result.model.parameters()])
    words = [v.hex() for v in params.double().tolist()] + [float(result.epsilon).hex()]
    return hashlib.sha256("|".join(words).encode()).hexdigest()[:16]


def test_valid_runs_are_bitwise_those_of_main():
    if torch.__version__ != PINNED_TORCH:
        pytest.skip(f"digests pinned with torch {PINNED_TORCH}")
    cpu = machine_name(device_info())
    if cpu not in PINNED:
        pytest.skip(f"digests pinned on {sorted(PINNED)}, not on {cpu}")
    pinned = dict(PINNED[cpu])
    rule_run = pinned.pop("rule")
    for (method, dtype), expected in pinned.items():
        assert digest(run(method, getattr(torch, dtype))) == expected, (method, dtype)
    rule = DPSGDFRule(guard="clip", cap=3.0)
    assert digest(run("dpsgd_f", rule=rule, momentum=0.5)) == rule_run


@pytest.mark.parametrize("method", ["dpsgd", "naive", "dpsgd_f"])
def test_the_checks_change_no_number(method, monkeypatch):
    # On any platform: the same run with the new checks switched off.
    checked = run(method)
    monkeypatch.setattr(loop_mod, "_probe_loss", lambda *a, **k: None)
    monkeypatch.setattr(loop_mod, "_check_finite_parameters", lambda *a, **k: None)
    monkeypatch.setattr(loop_mod, "_check_step_scales", lambda *a, **k: None)
    assert digest(run(method)) == digest(checked)


@pytest.mark.parametrize("sigma", [1e-7, 1e-20, 1e-154])
def test_rdp_refuses_multipliers_below_the_floor_instead_of_hanging(sigma):
    # At 1e-154 opacus' compute_rdp overflowed 1 / sigma**2 and looped without end.
    from dpnotes.accounting import rdp_epsilon, subsampled_gaussian_epsilon

    with pytest.raises(ValueError, match="at least 1e-06"):
        rdp_epsilon(sample_rate=0.01, noise_multipliers=sigma, steps=10, delta=1e-5)
    with pytest.raises(ValueError, match="at least 1e-06"):
        subsampled_gaussian_epsilon(
            sample_rate=0.01,
            noise_multipliers=sigma,
            steps=10,
            delta=1e-5,
            conversion="classic",
        )


def test_rdp_at_the_floor_reports_an_epsilon_with_no_privacy_left():
    from dpnotes.accounting import MIN_RDP_NOISE_MULTIPLIER, rdp_epsilon

    eps = rdp_epsilon(
        sample_rate=1e-6,
        noise_multipliers=MIN_RDP_NOISE_MULTIPLIER,
        steps=1,
        delta=1e-5,
    )
    assert 1e10 < eps < float("inf")
