"""Tests for dpnotes.dpsgd.rules and .loop: SGD, DPSGD, Naive, DPSGD-F, epsilon."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from opacus.accountants import RDPAccountant
from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent
from scipy import optimize
from torch import nn

import dpnotes.dpsgd.rules as rules_mod
from dpnotes.accounting import (
    analytic_gaussian_delta,
    classic_rdp_conversion,
    max_steps_within,
    rdp_epsilon,
)
from dpnotes.audit import assert_audit_passes, audit_epsilon, audit_fails
from dpnotes.dpsgd.evaluate import group_accuracy
from dpnotes.dpsgd.loop import train
from dpnotes.dpsgd.rules import (
    COUNT_NOISE_FACTOR,
    clipped_counts,
    dpsgd_epsilon,
    dpsgd_f_clip_bounds,
    naive_weights,
    release_counts,
    step_noise_multipliers,
)
from dpnotes.rng import torch_generator

torch.set_num_threads(1)


def linear_model(d: int = 5, seed: int = 0, dtype=torch.float64) -> nn.Module:
    """A logistic regression (two logits) initialised from a seeded generator."""
    model = nn.Linear(d, 2).to(dtype)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(0.1 * torch.randn(p.shape, generator=gen, dtype=dtype))
    return model


def two_groups(n: int = 2000, seed: int = 0, minority: float = 0.2):
    """Linearly separable labels; group 1 (a minority) is shifted and tilted."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=gen, dtype=torch.float64)
    groups = (torch.rand(n, generator=gen) < minority).long()
    x[groups == 1] += 1.0
    w = torch.tensor([1.0, -1.0, 0.5, 0.0, 2.0], dtype=torch.float64)
    y = ((x @ w) > 0.5 * groups).long()
    return x, y, groups


@pytest.fixture(scope="module")
def data():
    return two_groups()


DP = {"noise_multiplier": 1.0, "clip_norm": 1.0, "lr": 0.5, "batch_size": 100}


def params_of(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


# --- input validation -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        ({"groups": "label2"}, ValueError, "outside 0..1"),
        ({"groups": "negative"}, ValueError, "outside"),
        ({"num_groups": 3}, ValueError, "no training examples"),
        ({"groups": "float"}, TypeError, "integer"),
        ({"groups": "short"}, ValueError, "one label per example"),
        ({"y": "short"}, ValueError, "same positive number"),
        ({"batch_size": 0}, ValueError, "batch_size must be at least 1"),
        ({"batch_size": 5000}, ValueError, "sample rate"),
        ({"noise_multiplier": 0.0}, ValueError, "noise_multiplier"),
        ({"noise_multiplier": -1.0}, ValueError, "noise_multiplier"),
        ({"noise_multiplier": None}, ValueError, "needs noise_multiplier"),
        ({"clip_norm": 0.0}, ValueError, "clip_norm"),
        ({"count_noise_multiplier": 0.0}, ValueError, "count_noise_multiplier"),
        ({"method": "dpsgd-f"}, ValueError, "unknown method"),
        ({"sampling": "uniform"}, ValueError, "unknown sampling"),
        ({"lr": "cosine"}, ValueError, "lr schedule"),
        ({"lr": 0.0}, ValueError, "lr"),
        ({"delta": 0.0}, ValueError, "delta"),
        ({"epochs": 0}, ValueError, "epochs"),
        ({"weight_decay": -0.1}, ValueError, "weight_decay"),
        ({"target_epsilon": 1e-6}, ValueError, "single step"),
        ({"rng": None}, TypeError, "exactly one"),
        ({"generator": torch.Generator().manual_seed(0)}, TypeError, "exactly one"),
        ({"rng": 0}, TypeError, "Generator"),
    ],
)
def test_bad_inputs(data, change: dict, error: type, match: str) -> None:
    x, y, groups = data
    kwargs = {"num_groups": 2, "method": "dpsgd_f", "rng": np.random.default_rng(0)}
    kwargs.update(DP)
    change = dict(change)
    g = change.pop("groups", None)
    if g == "label2":
        groups = groups.clone()
        groups[0] = 2
    elif g == "negative":
        groups = groups.clone()
        groups[0] = -1
    elif g == "float":
        groups = groups.double()
    elif g == "short":
        groups = groups[:-1]
    if change.pop("y", None) == "short":
        y = y[:-1]
    kwargs.update(change)
    with pytest.raises(error, match=match):
        train(linear_model(), x, y, groups, **kwargs)


def test_model_without_trainable_parameters(data) -> None:
    x, y, groups = data
    model = linear_model().requires_grad_(False)
    with pytest.raises(ValueError, match="no trainable parameters"):
        train(model, x, y, groups, num_groups=2, rng=np.random.default_rng(0), **DP)


def test_sgd_rejects_a_target_epsilon(data) -> None:
    x, y, groups = data
    with pytest.raises(ValueError, match="not private"):
        train(
            linear_model(), x, y, groups, num_groups=2, method="sgd",
            target_epsilon=1.0, rng=np.random.default_rng(0),
        )  # fmt: skip


# --- what would break the guarantee is refused before any step ---------------------


def _kwargs(**change):
    kwargs = {"num_groups": 2, "method": "dpsgd", "rng": np.random.default_rng(0)}
    return {**kwargs, **DP, **change}


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_inputs_are_refused(data, bad: float) -> None:
    x, y, groups = data
    x = x.clone()
    x[7, 2] = bad
    with pytest.raises(ValueError, match=r"non-finite values .* rows \[7\]"):
        train(linear_model(), x, y, groups, **_kwargs())


@pytest.mark.parametrize(
    ("labels", "error", "match"),
    [
        ("float", TypeError, "integer class indices"),
        ("bool", TypeError, "integer class indices"),
        ("two", ValueError, r"labels \[2\] outside 0..1"),
        ("negative", ValueError, r"labels \[-1\] outside 0..1"),
    ],
)
def test_class_labels_must_be_integers_of_the_model_outputs(
    data, labels: str, error: type, match: str
) -> None:
    x, y, groups = data
    y = {
        "float": y.double(),
        "bool": y.bool(),
        "two": torch.where(torch.arange(len(y)) == 3, 2, y),
        "negative": torch.where(torch.arange(len(y)) == 3, -1, y),
    }[labels]
    with pytest.raises(error, match=match):
        train(linear_model(), x, y, groups, **_kwargs())


def test_a_custom_loss_takes_real_targets_but_not_non_finite_ones(data) -> None:
    x, y, groups = data

    def squared(out, target):
        return (out[:, 1] - target).pow(2)

    yf = y.double()
    run = train(linear_model(), x, yf, groups, loss_fn=squared, **_kwargs(epochs=1))
    assert run.steps == 20
    yf[5] = math.nan
    with pytest.raises(ValueError, match=r"y holds non-finite values, first in rows"):
        train(linear_model(), x, yf, groups, loss_fn=squared, **_kwargs())


def test_inputs_of_the_wrong_width_or_type(data) -> None:
    x, y, groups = data
    with pytest.raises(ValueError, match="cannot take inputs of shape \\(4,\\)"):
        train(linear_model(), x[:, :4], y, groups, **_kwargs())
    with pytest.raises(TypeError, match="floating-point features"):
        train(linear_model(), (x > 0).long(), y, groups, **_kwargs())
    # float64 features for a float32 model are converted, not refused.
    run = train(linear_model(dtype=torch.float32), x, y, groups, **_kwargs())
    assert next(run.model.parameters()).dtype == torch.float32


@pytest.mark.parametrize(
    ("schedule", "error", "match"),
    [
        (lambda t: 0.1 if t < 15 else math.nan, ValueError, r"nan at step t=15"),
        (lambda t: 0.1 if t < 3 else math.inf, ValueError, r"inf at step t=3"),
        (lambda t: 0.1 - 0.01 * t, ValueError, r"at step t=10 .* finite and > 0"),
        (lambda t: "fast", TypeError, r"must return a number for step t=0"),
    ],
)
def test_learning_rate_schedules_are_checked_at_every_planned_step(
    data, schedule, error: type, match: str
) -> None:
    x, y, groups = data
    calls = []

    def on_epoch_end(epoch, model):  # never reached: the check comes first
        calls.append(epoch)

    with pytest.raises(error, match=match):
        train(
            linear_model(), x, y, groups,
            **_kwargs(lr=schedule, epochs=1, on_epoch_end=on_epoch_end),
        )  # fmt: skip
    assert calls == []


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        ({"momentum": 1.0}, ValueError, r"momentum must be in \[0, 1\)"),
        ({"momentum": -0.1}, ValueError, "momentum"),
        ({"momentum": math.nan}, ValueError, "momentum"),
        ({"momentum": True}, TypeError, "momentum"),
        ({"epochs": 2, "steps": 30}, ValueError, "epochs or steps, not both"),
        ({"steps": 0}, ValueError, "steps"),
    ],
)
def test_momentum_and_steps_are_checked(data, change, error, match) -> None:
    x, y, groups = data
    with pytest.raises(error, match=match):
        train(linear_model(), x, y, groups, **_kwargs(**change))


def test_steps_end_with_a_partial_epoch(data) -> None:
    x, y, groups = data
    run = train(linear_model(), x, y, groups, **_kwargs(steps=45))
    # 2000 rows, batch 100: epochs of 20 steps, then 5 steps of a third epoch.
    assert run.steps == 45 and not run.stopped_early
    assert [h.steps for h in run.history] == [20, 40, 45]


def test_momentum_is_torch_sgds_heavy_ball() -> None:
    from dpnotes.dpsgd.loop import _apply_update

    gen = torch.Generator().manual_seed(1)
    ours = [torch.randn(3, 2, generator=gen, dtype=torch.float64)]
    theirs = [ours[0].clone().requires_grad_(True)]
    opt = torch.optim.SGD(theirs, lr=0.3, momentum=0.5, weight_decay=0.01)
    velocity: list[torch.Tensor] = []
    for _ in range(4):
        grad_sum = torch.randn(6, generator=gen, dtype=torch.float64)
        _apply_update(ours, [grad_sum], 2, 0.3, 0.01, 0.5, velocity)
        theirs[0].grad = grad_sum.view(3, 2) / 2
        opt.step()
        torch.testing.assert_close(ours[0], theirs[0].detach(), rtol=1e-14, atol=0)


def test_momentum_zero_is_plain_sgd_and_momentum_moves_further(data) -> None:
    x, y, groups = data
    plain = train(linear_model(), x, y, groups, **_kwargs(epochs=1))
    zero = train(linear_model(), x, y, groups, **_kwargs(epochs=1, momentum=0.0))
    heavy = train(linear_model(), x, y, groups, **_kwargs(epochs=1, momentum=0.5))
    assert torch.equal(params_of(plain.model), params_of(zero.model))
    # Same batches and noise, same epsilon: momentum is post-processing.
    assert heavy.epsilon == plain.epsilon and heavy.steps == plain.steps
    start = params_of(linear_model())
    moved = (params_of(heavy.model) - start).norm() / (
        params_of(plain.model) - start
    ).norm()
    assert moved > 1.3


def test_a_huge_record_moves_one_step_no_more_than_its_clip_bound(data) -> None:
    # Neighbouring data sets: record 0 replaced by one with a huge finite feature.
    # With the same batches and noise, one DPSGD step differs by at most
    # lr * 2 C / b (each version of the record contributes at most C).
    # The batch is the whole data set, so the record is in it.
    x, y, groups = data
    far = x.clone()
    far[0] = 1e30
    b = len(y)
    one_step = {"steps": 1, "sampling": "shuffle", "batch_size": b}
    runs = [
        train(linear_model(), xs, y, groups, **_kwargs(**one_step)) for xs in (x, far)
    ]
    gap = (params_of(runs[0].model) - params_of(runs[1].model)).norm()
    assert 0 < gap <= DP["lr"] * 2 * DP["clip_norm"] / b * (1 + 1e-9)


# --- the pieces of the rules ----------------------------------------------------------


def test_naive_weights() -> None:
    noisy = torch.tensor([10.0, 30.0, -2.0, 0.5], dtype=torch.float64)
    theta = naive_weights(noisy, batch_size=80, num_groups=4)
    # theta_k = (b / K) / max(b~_k, 1)
    expected = torch.tensor([2.0, 20.0 / 30.0, 20.0, 20.0], dtype=torch.float64)
    torch.testing.assert_close(theta, expected)
    # With exact counts every group gets total weight b / K and the weights sum to b.
    groups = torch.tensor([0] * 5 + [1] * 15 + [2] * 60)
    exact = torch.bincount(groups, minlength=3).double()
    theta = naive_weights(exact, batch_size=80, num_groups=3)
    totals = torch.zeros(3, dtype=torch.float64).index_add_(0, groups, theta[groups])
    torch.testing.assert_close(totals, torch.full((3,), 80.0 / 3, dtype=torch.float64))


def test_dpsgd_f_clip_bounds() -> None:
    # m = (1, 4, 0), o = (9, 0, 5): b_k = (10, 4, 5), m = 5, b = 19.
    noisy = torch.tensor([1.0, 4.0, 0.0, 9.0, 0.0, 5.0], dtype=torch.float64)
    bounds = dpsgd_f_clip_bounds(noisy, clip_norm=2.0)
    overall = 5.0 / 19.0
    expected = [2.0 * (1 + r / overall) for r in (0.1, 1.0, 0.0)]
    torch.testing.assert_close(bounds, torch.tensor(expected, dtype=torch.float64))
    assert bool(torch.all(bounds >= 2.0))
    # Guards: negative noisy counts are clipped at 0; undefined ratios are neutral.
    # m = (0, 2, 1), o = (0, 2, 7): b~_0 = 0, shares 0.5 and 0.125 against 3/12.
    noisy = torch.tensor([-3.0, 2.0, 1.0, -1.0, 2.0, 7.0], dtype=torch.float64)
    torch.testing.assert_close(
        dpsgd_f_clip_bounds(noisy, clip_norm=1.0),
        torch.tensor([2.0, 3.0, 1.5], dtype=torch.float64),
    )
    none_clipped = torch.tensor([0.0, -1.0, 5.0, 7.0], dtype=torch.float64)
    torch.testing.assert_close(
        dpsgd_f_clip_bounds(none_clipped, clip_norm=1.0),
        torch.full((2,), 2.0, dtype=torch.float64),
    )


def test_clipped_counts() -> None:
    norms = torch.tensor([0.5, 2.0, 3.0, 1.0, 0.1])
    groups = torch.tensor([0, 0, 1, 1, 2])
    counts = clipped_counts(norms, groups, clip_norm=1.0, num_groups=3)
    assert counts.tolist() == [1, 1, 0, 1, 1, 1]  # a norm equal to C_0 is not clipped
    assert int(counts.sum()) == norms.numel()


# --- equivalences and accounting ------------------------------------------------------


def test_dpsgd_f_equals_dpsgd_when_all_bounds_are_equal(data, monkeypatch) -> None:
    # Every example is clipped (tiny C_0), so m_k / b_k = m / b = 1 and every
    # C_k = 2 C_0. Without count noise, DPSGD-F is then DPSGD with clip 2 C_0, drawing
    # the same batches and the same gradient noise from the same seed.
    x, y, groups = data
    c0 = 1e-4
    common = {"num_groups": 2, "lr": 50.0, "batch_size": 100, "epochs": 1}
    common["noise_multiplier"] = 0.7
    ref = train(
        linear_model(), x, y, groups, method="dpsgd", clip_norm=2 * c0,
        rng=np.random.default_rng(5), **common,
    )  # fmt: skip
    noisy = train(
        linear_model(), x, y, groups, method="dpsgd_f", clip_norm=c0,
        rng=np.random.default_rng(5), **common,
    )  # fmt: skip
    monkeypatch.setattr(
        rules_mod, "release_counts", lambda counts, **kw: counts.to(torch.float64)
    )
    exact = train(
        linear_model(), x, y, groups, method="dpsgd_f", clip_norm=c0,
        rng=np.random.default_rng(5), **common,
    )  # fmt: skip
    assert torch.equal(params_of(exact.model), params_of(ref.model))
    assert exact.history[0].clip_bounds == pytest.approx((2 * c0, 2 * c0), rel=1e-12)
    # With the count noise the bounds move, and so do the parameters.
    assert not torch.equal(params_of(noisy.model), params_of(ref.model))


def test_accounting_matches_opacus(data) -> None:
    x, y, groups = data
    q, delta, s2, s1 = 100 / 2000, 1e-5, 1.1, 5.0
    orders = np.asarray(RDPAccountant.DEFAULT_ALPHAS, dtype=float)
    for method in ("dpsgd", "naive", "dpsgd_f"):
        res = train(
            linear_model(), x, y, groups, num_groups=2, method=method, epochs=2,
            noise_multiplier=s2, count_noise_multiplier=s1, clip_norm=1.0,
            batch_size=100, delta=delta, rng=np.random.default_rng(0),
        )  # fmt: skip
        assert res.steps == 2 * 20
        # Naive and DPSGD-F release counts and gradient from the same Poisson batch:
        # one Gaussian with the joint multiplier, amplified once.
        joint = s2 if method == "dpsgd" else (s2**-2 + s1**-2) ** -0.5
        rdp = compute_rdp(q=q, noise_multiplier=joint, steps=res.steps, orders=orders)
        eps, _ = get_privacy_spent(orders=orders, rdp=rdp, delta=delta)
        assert res.epsilon == pytest.approx(float(eps), rel=1e-12)
        if method != "dpsgd":
            # Amplifying the two releases separately would claim less.
            separate = rdp_epsilon(
                sample_rate=q, noise_multipliers=[s2, s1], steps=res.steps,
                delta=delta, same_sample=False,
            )  # fmt: skip
            assert res.epsilon > separate
            classic = classic_rdp_conversion(rdp, orders, delta=delta)
            assert res.epsilon_classic == pytest.approx(classic, rel=1e-12)
        epochs_eps = [h.epsilon for h in res.history]
        assert epochs_eps[-1] == res.epsilon and epochs_eps[0] < epochs_eps[1]
    # The count release is not free: Naive and DPSGD-F spend more than DPSGD.
    base = dpsgd_epsilon(
        method="dpsgd", sample_rate=q, noise_multiplier=s2, steps=40, delta=delta
    )
    assert res.epsilon > base


def test_target_epsilon_stops_before_exceeding(data) -> None:
    x, y, groups = data
    kwargs = {"method": "dpsgd_f", "sample_rate": 0.05, "noise_multiplier": 1.0}
    kwargs["count_noise_multiplier"] = 10.0
    eps_at = [dpsgd_epsilon(steps=t, delta=1e-5, **kwargs) for t in (30, 31)]
    target = 0.5 * (eps_at[0] + eps_at[1])  # between steps 30 and 31
    sigmas = [kwargs["noise_multiplier"], kwargs["count_noise_multiplier"]]
    assert (
        max_steps_within(
            target, sample_rate=0.05, noise_multipliers=sigmas, delta=1e-5, limit=100
        )
        == 30
    )
    res = train(
        linear_model(), x, y, groups, num_groups=2, method="dpsgd_f", epochs=3,
        target_epsilon=target, rng=np.random.default_rng(0), **DP,
    )  # fmt: skip
    assert res.steps == 30 and res.stopped_early
    assert res.epsilon <= target < eps_at[1]
    assert [h.steps for h in res.history] == [20, 30]  # a partial second epoch
    full = train(
        linear_model(), x, y, groups, num_groups=2, method="dpsgd_f", epochs=1,
        target_epsilon=100.0, rng=np.random.default_rng(0), **DP,
    )  # fmt: skip
    assert full.steps == 20 and not full.stopped_early


def test_seeded_runs_are_identical_and_leave_global_rng_alone(data) -> None:
    x, y, groups = data
    kwargs = {"num_groups": 2, "method": "dpsgd_f", "epochs": 1, **DP}
    model = linear_model()  # nn.Linear's constructor itself draws from the global RNG
    torch_state = torch.get_rng_state()
    np_state = np.random.get_state()[1].copy()  # noqa: NPY002 (checked, not used)
    a = train(model, x, y, groups, rng=np.random.default_rng(11), **kwargs)
    b = train(model, x, y, groups, rng=np.random.default_rng(11), **kwargs)
    c = train(model, x, y, groups, rng=np.random.default_rng(12), **kwargs)
    g1 = train(
        model, x, y, groups, generator=torch.Generator().manual_seed(3), **kwargs
    )
    g2 = train(
        model, x, y, groups, generator=torch.Generator().manual_seed(3), **kwargs
    )
    assert torch.equal(torch.get_rng_state(), torch_state), "global torch RNG used"
    assert np.array_equal(np.random.get_state()[1], np_state)  # noqa: NPY002
    assert torch.equal(params_of(a.model), params_of(b.model))
    assert a.history == b.history
    assert not torch.equal(params_of(a.model), params_of(c.model))
    assert torch.equal(params_of(g1.model), params_of(g2.model))


def test_input_model_is_not_modified(data) -> None:
    x, y, groups = data
    model = linear_model()
    before = params_of(model).clone()
    res = train(model, x, y, groups, num_groups=2, rng=np.random.default_rng(0), **DP)
    assert torch.equal(params_of(model), before)
    assert not torch.equal(params_of(res.model), before)
    assert not any(m._forward_hooks for m in res.model.modules())


# --- empirical privacy audit of the released counts ----------------------------------


def _gaussian_epsilon(sigma: float, delta: float) -> float:
    """Exact epsilon of a sensitivity-1 Gaussian at ``delta`` (the claim audited)."""

    def gap(eps: float) -> float:
        return (
            analytic_gaussian_delta(epsilon=eps, sensitivity=1.0, sigma=sigma) - delta
        )

    return optimize.brentq(gap, 1e-9, 50.0)


def _count_release(sigma: float):
    def mechanism(batch, trials: int, rng: np.random.Generator) -> np.ndarray:
        norms, groups = batch
        counts = clipped_counts(norms, groups, clip_norm=1.0, num_groups=2)
        return release_counts(
            counts.expand(trials, -1),
            noise_multiplier=sigma,
            generator=torch_generator(rng),
        ).numpy()

    return mechanism


def test_audit_of_the_noisy_counts() -> None:
    # Neighbouring batches: d1 adds one clipped example of group 1, so m_1 moves by 1.
    norms = torch.tensor([0.5, 2.0, 0.3, 3.0, 0.1])
    groups = torch.tensor([0, 0, 1, 1, 1])
    d0 = (norms, groups)
    d1 = (
        torch.cat([norms, torch.tensor([5.0])]),
        torch.cat([groups, torch.tensor([1])]),
    )
    sigma, delta = 2.0, 1e-3
    claim = _gaussian_epsilon(sigma, delta)

    def audit(mech_sigma: float):
        return audit_epsilon(
            _count_release(mech_sigma), d0, d1, trials=200_000, delta=delta,
            rng=np.random.default_rng(1), statistic=lambda out: out[:, 1],
        )  # fmt: skip

    assert_audit_passes(audit(sigma), claim)
    broken = audit(sigma / 2)  # half the noise the claim is calibrated to
    assert audit_fails(broken, claim), broken.summary()


# --- training -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "window"),
    [("sgd", (0.92, 1.0)), ("dpsgd", (0.9, 1.0)), ("naive", (0.85, 1.0)),
     ("dpsgd_f", (0.9, 1.0))],
)  # fmt: skip
def test_one_epoch_smoke_accuracy(method: str, window: tuple) -> None:
    x, y, groups = two_groups(n=3000, seed=1)
    xt, yt, gt = two_groups(n=3000, seed=2)
    res = train(
        linear_model(), x, y, groups, num_groups=2, method=method, epochs=1,
        rng=np.random.default_rng(0), **DP,
    )  # fmt: skip
    acc = group_accuracy(res.model, xt, yt, gt, num_groups=2)
    assert acc.shape == (2,)
    # Untrained: about 0.5 in both groups; always predicting the majority label:
    # 0.51 and 0.80. The lower ends of the windows are above both.
    assert np.all((window[0] <= acc) & (acc <= window[1])), acc


def test_history_and_group_epsilon(data) -> None:
    x, y, groups = data
    res = train(
        linear_model(), x, y, groups, num_groups=2, method="dpsgd_f", epochs=2,
        rng=np.random.default_rng(0), **DP,
    )  # fmt: skip
    assert len(res.history) == 2
    for h in res.history:
        assert len(h.group_loss) == len(h.group_grad_norm) == 2
        assert all(b >= DP["clip_norm"] for b in h.clip_bounds)
        assert sum(h.group_examples) > 0 and all(v > 0 for v in h.group_grad_norm)
    # Per-group statement: (mean C_k / max C) * epsilon, at most epsilon.
    assert len(res.group_epsilon) == 2
    assert all(0 < e <= res.epsilon for e in res.group_epsilon)
    frame = res.history_frame()
    assert list(frame["group"]) == [0, 1, 0, 1] and frame["clip_bound"].notna().all()
    assert frame["clip_fraction"].between(0, 1).all()
    dp = train(
        linear_model(), x, y, groups, num_groups=2, method="dpsgd", epochs=1,
        rng=np.random.default_rng(0), **DP,
    )  # fmt: skip
    assert dp.group_epsilon == (dp.epsilon, dp.epsilon)
    assert dp.history[0].clip_bounds == (1.0, 1.0)
    sgd = train(
        linear_model(), x, y, groups, num_groups=2, method="sgd", epochs=1,
        rng=np.random.default_rng(0), lr=0.5, batch_size=100,
    )  # fmt: skip
    assert sgd.epsilon == math.inf and sgd.group_epsilon is None


def test_clip_fraction_counts_the_examples_over_their_bound(data) -> None:
    x, y, groups = data
    fractions = {}
    for method, c0 in (
        ("dpsgd", 1e-6),
        ("dpsgd", 1e6),
        ("naive", 1e-6),
        ("naive", 1e6),
    ):
        res = train(
            linear_model(), x, y, groups, num_groups=2, method=method, epochs=1,
            count_noise_multiplier=5.0,
            rng=np.random.default_rng(0), **{**DP, "clip_norm": c0},
        )  # fmt: skip
        fractions[method, c0] = res.history[0].group_clip_fraction
    for method in ("dpsgd", "naive"):
        assert fractions[method, 1e-6] == (1.0, 1.0), "every norm exceeds a tiny bound"
        assert fractions[method, 1e6] == (0.0, 0.0), "none exceeds a huge one"
    # DPSGD-F raises the bound of a group above C_0, so fewer of its examples are
    # clipped than under DPSGD at C_0, never more.
    mid = {m: train(
        linear_model(), x, y, groups, num_groups=2, method=m, epochs=1,
        count_noise_multiplier=5.0, rng=np.random.default_rng(0), **DP,
    ).history[0].group_clip_fraction for m in ("dpsgd", "dpsgd_f")}  # fmt: skip
    assert all(0 < f < 1 for f in mid["dpsgd"])
    assert all(f <= d for f, d in zip(mid["dpsgd_f"], mid["dpsgd"], strict=True))
    sgd = train(
        linear_model(), x, y, groups, num_groups=2, method="sgd", epochs=1,
        rng=np.random.default_rng(0), lr=0.5, batch_size=100,
    )  # fmt: skip
    assert sgd.history[0].group_clip_fraction is None


def test_shuffle_sampling_and_lr_schedules(data) -> None:
    x, y, groups = data
    for lr in ("1/sqrt(T)", "1/sqrt(t)", lambda t: 0.1):
        res = train(
            linear_model(), x, y, groups, num_groups=2, method="naive",
            sampling="shuffle", noise_multiplier=1.0, clip_norm=1.0, lr=lr,
            batch_size=300, epochs=2, rng=np.random.default_rng(0),
        )  # fmt: skip
        assert res.steps == 2 * (2000 // 300) and res.sampling == "shuffle"
        # Every shuffled batch has exactly batch_size examples.
        assert [sum(h.group_examples) for h in res.history] == [1800, 1800]
        assert res.history[0].group_weights is not None


def test_empty_poisson_batches_are_fine() -> None:
    x, y, groups = two_groups(n=40, seed=3)
    res = train(
        linear_model(), x, y, groups, num_groups=2, method="dpsgd_f",
        noise_multiplier=1.0, clip_norm=1.0, batch_size=1, epochs=1,
        rng=np.random.default_rng(0),
    )  # fmt: skip
    # 40 steps at rate 1/40: about 37% of the batches are empty (P = (39/40)^40).
    assert res.steps == 40 and res.history[0].epsilon == res.epsilon
    assert torch.isfinite(params_of(res.model)).all()


def test_weight_decay_shrinks_and_defaults_to_the_model_attribute(data) -> None:
    x, y, groups = data
    kwargs = {"num_groups": 2, "method": "sgd", "lr": 0.5, "batch_size": 100}
    plain = train(linear_model(), x, y, groups, rng=np.random.default_rng(0), **kwargs)
    decayed = train(
        linear_model(), x, y, groups, weight_decay=0.5, rng=np.random.default_rng(0),
        **kwargs,
    )  # fmt: skip
    model = linear_model()
    model.weight_decay = 0.5
    declared = train(model, x, y, groups, rng=np.random.default_rng(0), **kwargs)
    assert params_of(decayed.model).norm() < params_of(plain.model).norm()
    assert torch.equal(params_of(declared.model), params_of(decayed.model))


def test_group_accuracy() -> None:
    class Constant(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bias = nn.Parameter(torch.tensor([0.0, 1.0]))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.bias.expand(x.shape[0], 2)

    x = torch.zeros(6, 3)
    y = torch.tensor([1, 1, 0, 1, 0, 0])
    groups = torch.tensor([0, 0, 0, 1, 1, 2])
    acc = group_accuracy(Constant(), x, y, groups, num_groups=4)
    np.testing.assert_allclose(acc[:3], [2 / 3, 1 / 2, 0.0])
    assert np.isnan(acc[3])
    with pytest.raises(ValueError):
        group_accuracy(Constant(), x, y, groups, num_groups=2)


@pytest.mark.gpu
def test_training_on_cuda_matches_the_cpu_run(data) -> None:
    # The noise comes from generators on the training device, so a CUDA run's
    # parameters differ from the CPU run's; it must take the same (CPU-sampled)
    # steps, spend the same epsilon, and learn.
    x, y, groups = data
    common = {"num_groups": 2, "method": "dpsgd_f", "epochs": 1, **DP}
    cpu = train(linear_model(), x, y, groups, rng=np.random.default_rng(0), **common)
    gpu = train(
        linear_model().to("cuda"), x.cuda(), y.cuda(), groups.cuda(),
        rng=np.random.default_rng(0), device="cuda", **common,
    )  # fmt: skip
    assert next(gpu.model.parameters()).device.type == "cuda"
    assert gpu.steps == cpu.steps and gpu.epsilon == pytest.approx(cpu.epsilon)
    acc = group_accuracy(gpu.model, x.cuda(), y.cuda(), groups.cuda(), num_groups=2)
    assert np.all(acc > 0.6), acc


# --- the classic RDP conversion and the per-epoch hook ------------------------------

# The paper's settings (section 6): (n_train, sigma, steps = epochs * n / 256), and the
# epsilons it reports at delta = 1e-6 (computed with TF Privacy's classic conversion).
PAPER_RUNS = {
    "mnist": (54_649, 0.8, 12_808, 6.55),
    "adult": (36_178, 1.0, 2_826, 3.1),
    "dutch": (48_336, 1.0, 3_776, 2.66),
}


@pytest.mark.parametrize("name", sorted(PAPER_RUNS))
def test_classic_conversion_reproduces_the_paper_epsilons(name: str) -> None:
    n, sigma, steps, reported = PAPER_RUNS[name]
    q, delta = 256 / n, 1e-6
    orders = np.asarray(RDPAccountant.DEFAULT_ALPHAS, dtype=float)
    rdp = np.asarray(
        compute_rdp(q=q, noise_multiplier=sigma, steps=steps, orders=orders)
    )
    # Mironov 2017, Prop. 3, written out here independently of the package.
    reference = float(np.min(rdp + np.log(1 / delta) / (orders - 1)))
    improved_ref, _ = get_privacy_spent(orders=orders, rdp=rdp, delta=delta)
    kwargs = {"sample_rate": q, "noise_multiplier": sigma, "steps": steps}
    classic = dpsgd_epsilon(method="dpsgd", delta=delta, conversion="classic", **kwargs)
    improved = dpsgd_epsilon(method="dpsgd", delta=delta, **kwargs)
    assert classic == pytest.approx(reference, rel=1e-12)
    assert improved == pytest.approx(float(improved_ref), rel=1e-12)
    # The paper rounds to two or three digits: 6.55 / 3.1 / 2.66.
    assert round(classic, 2 if name != "adult" else 1) == reported
    expected = {
        "mnist": (6.550, 5.911),
        "adult": (3.078, 2.662),
        "dutch": (2.656, 2.270),
    }
    assert (classic, improved) == pytest.approx(expected[name], abs=1e-3)
    assert improved < classic


def test_classic_conversion_with_counts_and_validation() -> None:
    q, delta, s2, s1, steps = 0.01, 1e-5, 1.0, 10.0, 500
    orders = np.asarray(RDPAccountant.DEFAULT_ALPHAS, dtype=float)
    joint = (s2**-2 + s1**-2) ** -0.5  # counts and gradient share the batch
    rdp = np.asarray(
        compute_rdp(q=q, noise_multiplier=joint, steps=steps, orders=orders)
    )
    got = dpsgd_epsilon(
        method="dpsgd_f", sample_rate=q, noise_multiplier=s2,
        count_noise_multiplier=s1, steps=steps, delta=delta, conversion="classic",
    )  # fmt: skip
    assert got == pytest.approx(classic_rdp_conversion(rdp, orders, delta=delta))
    assert got == pytest.approx(float(np.min(rdp + np.log(1 / delta) / (orders - 1))))
    with pytest.raises(ValueError, match="conversion"):
        dpsgd_epsilon(
            method="dpsgd", sample_rate=q, noise_multiplier=s2, steps=steps,
            delta=delta, conversion="tight",
        )  # fmt: skip
    with pytest.raises(ValueError, match="orders"):
        classic_rdp_conversion([1.0, 2.0], [1.0, 2.0], delta=delta)
    with pytest.raises(ValueError):
        classic_rdp_conversion([1.0], [2.0], delta=2.0)


def test_train_result_epsilon_classic(data) -> None:
    x, y, groups = data
    res = train(
        linear_model(), x, y, groups, num_groups=2, method="naive", epochs=1,
        rng=np.random.default_rng(0), **DP,
    )  # fmt: skip
    expected = dpsgd_epsilon(
        method="naive", sample_rate=res.sample_rate, noise_multiplier=1.0,
        count_noise_multiplier=10.0, steps=res.steps, delta=res.delta,
        conversion="classic",
    )  # fmt: skip
    assert res.epsilon_classic == expected > res.epsilon
    sgd = train(
        linear_model(), x, y, groups, num_groups=2, method="sgd", epochs=1,
        rng=np.random.default_rng(0), lr=0.5, batch_size=100,
    )  # fmt: skip
    assert sgd.epsilon_classic == math.inf


def test_on_epoch_end_hook(data) -> None:
    x, y, groups = data
    calls: list[tuple] = []

    def hook(epoch: int, model: nn.Module) -> None:
        calls.append(
            (
                epoch,
                model.training,
                torch.is_grad_enabled(),
                params_of(model).clone(),
                group_accuracy(model, x, y, groups, num_groups=2),
            )
        )

    res = train(
        linear_model(), x, y, groups, num_groups=2, method="dpsgd", epochs=3,
        rng=np.random.default_rng(0), on_epoch_end=hook, **DP,
    )  # fmt: skip
    assert [c[0] for c in calls] == [1, 2, 3]
    assert not any(c[1] for c in calls) and not any(c[2] for c in calls)
    assert res.model.training  # train mode restored
    # The hook sees the model as it is after each epoch: the last call's is the result.
    assert torch.equal(calls[-1][3], params_of(res.model))
    assert not torch.equal(calls[0][3], calls[1][3])
    np.testing.assert_array_equal(
        calls[-1][4], group_accuracy(res.model, x, y, groups, num_groups=2)
    )
    # The hook observes only: the run is the same as without it.
    plain = train(
        linear_model(), x, y, groups, num_groups=2, method="dpsgd", epochs=3,
        rng=np.random.default_rng(0), **DP,
    )  # fmt: skip
    assert torch.equal(params_of(plain.model), params_of(res.model))
    # After an early stop, once more for the partial epoch: once per history entry.
    stops: list[int] = []
    target = dpsgd_epsilon(
        method="dpsgd_f", sample_rate=0.05, noise_multiplier=1.0,
        count_noise_multiplier=10.0, steps=30, delta=1e-5,
    )  # fmt: skip
    early = train(
        linear_model(), x, y, groups, num_groups=2, method="dpsgd_f", epochs=3,
        target_epsilon=target, rng=np.random.default_rng(0),
        on_epoch_end=lambda e, m: stops.append(e), **DP,
    )  # fmt: skip
    assert early.stopped_early and early.steps == 30
    assert stops == [h.epoch for h in early.history] == [1, 2]
    with pytest.raises(TypeError, match="on_epoch_end"):
        train(
            linear_model(), x, y, groups, num_groups=2, method="dpsgd",
            rng=np.random.default_rng(0), on_epoch_end="print", **DP,
        )  # fmt: skip


def test_history_carries_both_conversions(data) -> None:
    # The per-epoch classic epsilon is the one the experiments report; the last
    # epoch's equals TrainResult.epsilon_classic.
    x, y, groups = data
    res = train(
        linear_model(), x, y, groups, num_groups=2, method="dpsgd_f", epochs=2,
        rng=np.random.default_rng(0), **DP,
    )  # fmt: skip
    for h in res.history:
        assert h.epsilon_classic == dpsgd_epsilon(
            method="dpsgd_f", sample_rate=res.sample_rate, noise_multiplier=1.0,
            steps=h.steps, delta=res.delta, conversion="classic",
        ) > h.epsilon  # fmt: skip
    assert res.history[-1].epsilon_classic == res.epsilon_classic
    sgd = train(
        linear_model(), x, y, groups, num_groups=2, method="sgd", epochs=1,
        rng=np.random.default_rng(0), lr=0.5, batch_size=100,
    )  # fmt: skip
    assert sgd.history[0].epsilon_classic == math.inf


def test_step_noise_multipliers_and_the_paper_factor(data) -> None:
    assert COUNT_NOISE_FACTOR == 10.0
    assert step_noise_multipliers("dpsgd", noise_multiplier=0.8) == (0.8,)
    assert step_noise_multipliers("naive", noise_multiplier=0.8) == (0.8, 8.0)
    assert step_noise_multipliers(
        "dpsgd_f", noise_multiplier=1.0, count_noise_multiplier=3.0
    ) == (1.0, 3.0)
    assert step_noise_multipliers(
        "dpsgd_f", noise_multiplier=1.0, count_noise_factor=5.0
    ) == (1.0, 5.0)
    with pytest.raises(ValueError, match="not both"):
        step_noise_multipliers(
            "naive", noise_multiplier=1.0, count_noise_multiplier=3.0,
            count_noise_factor=5.0,
        )  # fmt: skip
    with pytest.raises(ValueError, match="method"):
        step_noise_multipliers("sgd", noise_multiplier=1.0)
    # The trainer's default sigma_1 is the factor times sigma_2.
    x, y, groups = data
    res = train(
        linear_model(), x, y, groups, num_groups=2, method="naive", epochs=1,
        rng=np.random.default_rng(0), **DP,
    )  # fmt: skip
    assert res.count_noise_multiplier == COUNT_NOISE_FACTOR * DP["noise_multiplier"]
