"""Tests for dpnotes.accounting: conversions, calibration, composition, accountant."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opacus.accountants import RDPAccountant
from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent
from scipy import optimize
from scipy.stats import norm

from dpnotes.accounting import (
    ApproxBudget,
    Spend,
    ZCDPAccountant,
    analytic_gaussian_delta,
    analytic_gaussian_sigma,
    classic_rdp_conversion,
    compose_parallel,
    compose_sequential_approx,
    compose_sequential_pure,
    compose_sequential_zcdp,
    epsilon_delta_to_rho,
    epsilon_to_rho,
    gaussian_rho,
    gaussian_sigma_for_rho,
    joint_noise_multiplier,
    max_steps_within,
    rdp_epsilon,
    rho_to_epsilon,
    subsampled_gaussian_epsilon,
)

RHOS = st.floats(min_value=1e-6, max_value=100.0)
DELTAS = st.floats(min_value=1e-12, max_value=0.5)
HYP = settings(max_examples=60, deadline=None)


def simple_bound(rho: float, delta: float) -> float:
    """Bun & Steinke 2016, Proposition 1.3."""
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def cks_delta_form(alpha: np.ndarray, rho: float, delta: float) -> np.ndarray:
    """Epsilon at order alpha, solved directly from CKS 2020 Prop. 12's delta formula.

    delta = exp((alpha-1)(alpha*rho - eps)) / (alpha-1) * (1-1/alpha)**alpha, solved for
    eps without the simplifications used in the package.
    """
    return alpha * rho + (
        math.log(1.0 / delta) + alpha * np.log1p(-1.0 / alpha) - np.log(alpha - 1.0)
    ) / (alpha - 1.0)


def brute_force_epsilon(rho: float, delta: float) -> float:
    """Minimise on a log-grid over alpha, then by bounded search near the best point."""
    log_a = np.linspace(-14.0, 20.0, 20001)
    vals = cks_delta_form(1.0 + np.exp(log_a), rho, delta)
    i = int(np.argmin(vals))
    lo, hi = log_a[max(i - 1, 0)], log_a[min(i + 1, log_a.size - 1)]
    res = optimize.minimize_scalar(
        lambda u: float(cks_delta_form(np.array([1.0 + math.exp(u)]), rho, delta)[0]),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return max(0.0, min(float(vals[i]), float(res.fun)))


def scipy_gaussian_profile(epsilon: float, sensitivity: float, sigma: float) -> float:
    """Balle & Wang 2018 Theorem 8, evaluated plainly with scipy.stats.norm."""
    a = sensitivity / (2 * sigma) - epsilon * sigma / sensitivity
    b = -sensitivity / (2 * sigma) - epsilon * sigma / sensitivity
    return float(norm.cdf(a) - math.exp(epsilon) * norm.cdf(b))


# --- pure DP -> zCDP ------------------------------------------------------------------


def test_epsilon_to_rho_value() -> None:
    assert epsilon_to_rho(2.0) == 2.0
    assert epsilon_to_rho(0.1) == pytest.approx(0.005)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_epsilon_to_rho_rejects(bad: float) -> None:
    with pytest.raises(ValueError, match="positive, finite privacy budget"):
        epsilon_to_rho(bad)


# --- zCDP -> (epsilon, delta) ---------------------------------------------------------


@HYP
@given(rho=RHOS, delta=DELTAS)
def test_rho_to_epsilon_below_simple_bound(rho: float, delta: float) -> None:
    assert rho_to_epsilon(rho, delta) <= simple_bound(rho, delta)


@HYP
@given(rho=RHOS, delta=DELTAS)
def test_rho_to_epsilon_matches_brute_force(rho: float, delta: float) -> None:
    ours = rho_to_epsilon(rho, delta)
    ref = brute_force_epsilon(rho, delta)
    # Ours is the exact minimiser, so it is never above the grid's minimum.
    assert ours <= ref + 1e-10 * max(1.0, ref)
    assert ours == pytest.approx(ref, rel=1e-8, abs=1e-10)


@HYP
@given(rho=RHOS, delta=DELTAS)
def test_rho_to_epsilon_valid_for_gaussian(rho: float, delta: float) -> None:
    # The Gaussian with sigma = 1/sqrt(2 rho) is rho-zCDP, so its exact profile at the
    # converted epsilon cannot exceed delta.
    eps = rho_to_epsilon(rho, delta)
    if eps > 0:
        sigma = gaussian_sigma_for_rho(sensitivity=1.0, rho=rho)
        assert (
            analytic_gaussian_delta(epsilon=eps, sensitivity=1.0, sigma=sigma) <= delta
        )


@HYP
@given(rho=RHOS, factor=st.floats(1.001, 10.0), delta=DELTAS)
def test_rho_to_epsilon_monotone(rho: float, factor: float, delta: float) -> None:
    assert rho_to_epsilon(rho, delta) <= rho_to_epsilon(rho * factor, delta)
    assert rho_to_epsilon(rho, delta) <= rho_to_epsilon(rho, delta / (1 + factor))


@pytest.mark.parametrize(
    ("rho", "delta"), [(0.5, 1e-6), (0.01, 1e-5), (1e-4, 1e-3), (10.0, 1e-10)]
)
def test_rho_to_epsilon_matches_opacus_rdp_conversion(rho: float, delta: float) -> None:
    # rho-zCDP is (alpha, alpha*rho)-RDP; opacus' get_privacy_spent applies the same
    # conversion on a grid of orders, so on a fine grid it can only be slightly larger.
    orders = 1.0 + np.logspace(-6, 8, 200_001)
    ref, _ = get_privacy_spent(orders=orders, rdp=rho * orders, delta=delta)
    ours = rho_to_epsilon(rho, delta)
    assert ours <= ref + 1e-12
    assert ours == pytest.approx(ref, rel=1e-6)


def test_rho_to_epsilon_known_value() -> None:
    # Reference: Steinke's cdp2adp bisection on the delta form gives 5.2215344445 here.
    assert rho_to_epsilon(0.5, 1e-6) == pytest.approx(5.221534444530169, rel=1e-10)


def test_rho_to_epsilon_clips_at_zero() -> None:
    assert rho_to_epsilon(1e-12, 0.9) == 0.0


@pytest.mark.parametrize(
    ("rho", "delta", "match"),
    [
        (0.0, 1e-6, "zCDP budget"),
        (-1.0, 1e-6, "zCDP budget"),
        (math.inf, 1e-6, "zCDP budget"),
        (0.5, 0.0, "strictly between 0 and 1"),
        (0.5, 1.0, "strictly between 0 and 1"),
        (0.5, math.nan, "strictly between 0 and 1"),
    ],
)
def test_rho_to_epsilon_rejects(rho: float, delta: float, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        rho_to_epsilon(rho, delta)


def test_rho_to_epsilon_rejects_non_number() -> None:
    with pytest.raises(TypeError, match="real number"):
        rho_to_epsilon("0.5", 1e-6)  # type: ignore[arg-type]


# --- (epsilon, delta) -> zCDP ---------------------------------------------------------


@HYP
@given(eps=st.floats(1e-3, 50.0), delta=DELTAS)
def test_epsilon_delta_to_rho_is_safe_and_tight(eps: float, delta: float) -> None:
    rho = epsilon_delta_to_rho(eps, delta)
    assert rho_to_epsilon(rho, delta) <= eps
    assert rho_to_epsilon(rho, delta) == pytest.approx(eps, rel=1e-8)
    # At least as large as inverting the simple bound rho + 2 sqrt(rho L) = eps.
    log_inv = math.log(1 / delta)
    assert rho >= (math.sqrt(log_inv + eps) - math.sqrt(log_inv)) ** 2 * (1 - 1e-9)


@HYP
@given(rho=st.floats(1e-4, 50.0), delta=DELTAS)
def test_epsilon_delta_to_rho_round_trip(rho: float, delta: float) -> None:
    eps = rho_to_epsilon(rho, delta)
    if eps > 0:
        assert epsilon_delta_to_rho(eps, delta) == pytest.approx(rho, rel=1e-6)


def test_epsilon_delta_to_rho_against_delta_form_bisection() -> None:
    # Independent reference: the largest rho with min_alpha delta(alpha, eps) <= delta,
    # by plain bisection on the delta form of CKS 2020 Prop. 12.
    eps, delta = 1.0, 1e-6
    alphas = 1.0 + np.logspace(-6, 6, 200_001)

    def cks_delta(rho: float) -> float:
        logd = (alphas - 1) * (alphas * rho - eps) + alphas * np.log1p(-1 / alphas)
        with np.errstate(over="ignore"):
            return float(np.min(np.exp(logd) / (alphas - 1)))

    lo, hi = 0.0, eps + 1
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cks_delta(mid) <= delta else (lo, mid)
    assert epsilon_delta_to_rho(eps, delta) == pytest.approx(lo, rel=1e-5)


@pytest.mark.parametrize(
    ("eps", "delta", "match"),
    [
        (0.0, 1e-6, "privacy budget"),
        (1.0, 0.0, "strictly between"),
        (1.0, 2.0, "strictly"),
    ],
)
def test_epsilon_delta_to_rho_rejects(eps: float, delta: float, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        epsilon_delta_to_rho(eps, delta)


# --- Gaussian calibration -------------------------------------------------------------


def test_gaussian_rho_and_sigma_round_trip() -> None:
    assert gaussian_rho(2.0, 4.0) == pytest.approx(0.125)
    sigma = gaussian_sigma_for_rho(sensitivity=3.0, rho=0.7)
    assert gaussian_rho(3.0, sigma) == pytest.approx(0.7)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sensitivity": 0.0, "rho": 0.5}, "sensitivity must be a positive"),
        ({"sensitivity": 1.0, "rho": -0.5}, "zCDP budget"),
        ({"sensitivity": math.nan, "rho": 0.5}, "sensitivity must be a positive"),
    ],
)
def test_gaussian_sigma_for_rho_rejects(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        gaussian_sigma_for_rho(**kwargs)


def test_gaussian_sigma_for_rho_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        gaussian_sigma_for_rho(1.0, 0.5)  # type: ignore[misc]


def test_gaussian_rho_rejects() -> None:
    with pytest.raises(ValueError, match="sigma must be a positive"):
        gaussian_rho(1.0, 0.0)


def test_analytic_gaussian_delta_against_scipy() -> None:
    for eps, sens, sigma in [(1.0, 1.0, 1.0), (0.3, 2.0, 5.0), (4.0, 1.0, 0.7)]:
        ours = analytic_gaussian_delta(epsilon=eps, sensitivity=sens, sigma=sigma)
        assert ours == pytest.approx(scipy_gaussian_profile(eps, sens, sigma), rel=1e-9)


@HYP
@given(
    eps=st.floats(0.01, 10.0), delta=st.floats(1e-10, 0.3), sens=st.floats(0.1, 10.0)
)
def test_analytic_gaussian_sigma_is_the_profile_root(
    eps: float, delta: float, sens: float
) -> None:
    sigma = analytic_gaussian_sigma(epsilon=eps, delta=delta, sensitivity=sens)
    # Checked with a plain scipy evaluation of Balle & Wang's Theorem 8.
    assert scipy_gaussian_profile(eps, sens, sigma) <= delta * (1 + 1e-9)
    assert scipy_gaussian_profile(eps, sens, sigma * (1 - 1e-6)) > delta


@pytest.mark.parametrize(("eps", "delta"), [(0.1, 1e-5), (1.0, 1e-5), (5.0, 1e-8)])
def test_analytic_gaussian_sigma_against_diffprivlib(eps: float, delta: float) -> None:
    from diffprivlib.mechanisms import GaussianAnalytic

    ref = GaussianAnalytic(epsilon=eps, delta=delta, sensitivity=2.0)._scale
    ours = analytic_gaussian_sigma(epsilon=eps, delta=delta, sensitivity=2.0)
    assert ours == pytest.approx(ref, rel=1e-6)


@pytest.mark.parametrize("eps", [0.1, 0.5, 0.99])
def test_analytic_gaussian_sigma_beats_classic(eps: float) -> None:
    classic = math.sqrt(2 * math.log(1.25 / 1e-5)) / eps
    ours = analytic_gaussian_sigma(epsilon=eps, delta=1e-5, sensitivity=1.0)
    assert ours < classic


def test_analytic_gaussian_sigma_scales_with_sensitivity() -> None:
    s1 = analytic_gaussian_sigma(epsilon=0.5, delta=1e-6, sensitivity=1.0)
    assert analytic_gaussian_sigma(
        epsilon=0.5, delta=1e-6, sensitivity=7.0
    ) == pytest.approx(7.0 * s1, rel=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"epsilon": 0.0, "delta": 1e-5, "sensitivity": 1.0}, "privacy budget"),
        ({"epsilon": 1.0, "delta": 0.0, "sensitivity": 1.0}, "strictly between"),
        ({"epsilon": 1.0, "delta": 1e-5, "sensitivity": -1.0}, "sensitivity"),
    ],
)
def test_analytic_gaussian_sigma_rejects(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        analytic_gaussian_sigma(**kwargs)


# --- composition ----------------------------------------------------------------------


def test_sequential_compositions() -> None:
    assert compose_sequential_pure([0.1, 0.2, 0.3]) == pytest.approx(0.6)
    assert compose_sequential_zcdp(np.array([0.1, 0.2])) == pytest.approx(0.3)
    assert compose_sequential_approx(
        [(0.5, 1e-6), ApproxBudget(0.25, 2e-6)]
    ) == ApproxBudget(0.75, 3e-6)


def test_parallel_composition() -> None:
    assert compose_parallel([0.1, 0.7, 0.3]) == 0.7
    assert compose_parallel([(1.0, 1e-6), (0.5, 1e-5)]) == ApproxBudget(1.0, 1e-5)


@pytest.mark.parametrize(
    ("fn", "arg", "match"),
    [
        (compose_sequential_pure, [], "empty"),
        (compose_sequential_pure, [0.1, -0.2], r"epsilons\[1\] must be a finite"),
        (compose_sequential_zcdp, [math.nan], r"rhos\[0\] must be a finite"),
        (compose_sequential_approx, [(0.5, 0.6), (0.5, 0.6)], "add up to"),
        (compose_sequential_approx, [(0.5, 1.0)], "below 1"),
        (compose_parallel, [], "one budget per group"),
        (compose_parallel, [0.1, (0.1, 1e-6)], "mixes numbers"),
        (compose_parallel, [0.1, math.inf], "finite, non-negative"),
    ],
)
def test_compositions_reject(fn, arg, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        fn(arg)


def test_compositions_reject_non_numbers() -> None:
    with pytest.raises(TypeError, match="real number"):
        compose_sequential_pure(["0.1"])
    with pytest.raises(TypeError, match=r"\(epsilon, delta\) pair"):
        compose_sequential_approx([(0.1, 0.2, 0.3)])


# --- RDP for DP-SGD -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("q", "sigma", "steps"), [(0.01, 1.0, 1000), (0.004, 1.1, 6000), (1.0, 5.0, 10)]
)
def test_rdp_epsilon_equals_opacus_accountant(
    q: float, sigma: float, steps: int
) -> None:
    acc = RDPAccountant()
    for _ in range(steps):
        acc.step(noise_multiplier=sigma, sample_rate=q)
    ref = acc.get_epsilon(delta=1e-5)
    ours = rdp_epsilon(sample_rate=q, noise_multipliers=sigma, steps=steps, delta=1e-5)
    assert ours == pytest.approx(ref, rel=1e-12)


def test_rdp_epsilon_independent_samples_compose_like_opacus() -> None:
    acc = RDPAccountant()
    for _ in range(5):
        acc.step(noise_multiplier=1.0, sample_rate=0.02)
        acc.step(noise_multiplier=3.0, sample_rate=0.02)
    ref = acc.get_epsilon(delta=1e-5)
    ours = rdp_epsilon(
        sample_rate=0.02,
        noise_multipliers=[1.0, 3.0],
        steps=5,
        delta=1e-5,
        same_sample=False,
    )
    assert ours == pytest.approx(ref, rel=1e-10)
    # A second mechanism per step costs privacy.
    assert ours > rdp_epsilon(
        sample_rate=0.02, noise_multipliers=1.0, steps=5, delta=1e-5
    )


def test_rdp_epsilon_same_sample_is_one_gaussian_with_the_joint_multiplier() -> None:
    # DPSGD-F on MNIST: sigma_2 = 0.8 on the gradient, sigma_1 = 8 on the counts.
    q, steps = 256 / 54649, 12780
    joint = joint_noise_multiplier([0.8, 8.0])
    assert joint == pytest.approx((0.8**-2 + 8.0**-2) ** -0.5, rel=1e-15)
    acc = RDPAccountant()
    for _ in range(steps):
        acc.step(noise_multiplier=joint, sample_rate=q)
    ref = acc.get_epsilon(delta=1e-6)
    ours = rdp_epsilon(
        sample_rate=q, noise_multipliers=[0.8, 8.0], steps=steps, delta=1e-6
    )
    assert ours == pytest.approx(ref, rel=1e-12)
    separate = rdp_epsilon(
        sample_rate=q,
        noise_multipliers=[0.8, 8.0],
        steps=steps,
        delta=1e-6,
        same_sample=False,
    )
    alone = rdp_epsilon(sample_rate=q, noise_multipliers=0.8, steps=steps, delta=1e-6)
    # The counts cost about 7 times more than separate amplification suggests.
    assert ours - alone > 5 * (separate - alone) > 0


@pytest.mark.parametrize("q", [0.01, 0.3, 0.9])
def test_merging_before_amplification_matches_the_closed_form_at_order_2(q) -> None:
    # Order 2 of the Poisson-subsampled Gaussian: log(1 + q^2 (exp(1/sigma^2) - 1)).
    a, b = 1.0 / 1.5**2, 1.0 / 4.0**2
    joint = compute_rdp(
        q=q, noise_multiplier=joint_noise_multiplier([1.5, 4.0]), steps=1, orders=[2.0]
    )[0]
    assert joint == pytest.approx(math.log1p(q**2 * math.expm1(a + b)), rel=1e-12)
    parts = math.log1p(q**2 * math.expm1(a)) + math.log1p(q**2 * math.expm1(b))
    gap = q**2 * (1 - q**2) * math.expm1(a) * math.expm1(b)
    assert math.exp(joint) - math.exp(parts) == pytest.approx(gap, rel=1e-9)
    assert joint > parts


def test_joint_noise_multiplier_rejects_bad_input() -> None:
    assert joint_noise_multiplier(2.0) == 2.0
    with pytest.raises(ValueError, match="empty"):
        joint_noise_multiplier([])
    with pytest.raises(ValueError, match=r"noise_multipliers\[1\]"):
        joint_noise_multiplier([1.0, 0.0])


def test_rdp_epsilon_custom_orders() -> None:
    orders = [2.0, 4.0, 8.0, 16.0, 32.0]
    ref, _ = get_privacy_spent(
        orders=orders, rdp=np.array(orders) / (2 * 4.0), delta=1e-6
    )  # q = 1: the plain Gaussian, RDP alpha / (2 sigma^2).
    ours = rdp_epsilon(
        sample_rate=1.0, noise_multipliers=2.0, steps=1, delta=1e-6, orders=orders
    )
    assert ours == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"sample_rate": 0.0}, ValueError, r"sample_rate must lie in \(0, 1\]"),
        ({"sample_rate": 1.5}, ValueError, r"sample_rate must lie in \(0, 1\]"),
        ({"noise_multipliers": 0.0}, ValueError, "noise_multipliers"),
        ({"noise_multipliers": [1.0, -1.0]}, ValueError, r"noise_multipliers\[1\]"),
        ({"noise_multipliers": []}, ValueError, "empty"),
        ({"steps": 0}, ValueError, "steps must be at least 1"),
        ({"steps": 1.5}, TypeError, "steps must be an integer"),
        ({"delta": 0.0}, ValueError, "strictly between"),
        ({"delta": 1.0}, ValueError, "strictly between"),
        ({"orders": [0.5, 2.0]}, ValueError, "greater than 1"),
    ],
)
def test_rdp_epsilon_rejects(kwargs: dict, err: type, match: str) -> None:
    args = {"sample_rate": 0.01, "noise_multipliers": 1.0, "steps": 10, "delta": 1e-5}
    args.update(kwargs)
    with pytest.raises(err, match=match):
        rdp_epsilon(**args)


# --- ZCDPAccountant -------------------------------------------------------------------


def test_accountant_tracks_spends() -> None:
    acc = ZCDPAccountant(rho=1.0)
    first = acc.spend(0.25, "1-way marginals")
    acc.spend(0.5, "2-way marginals")
    assert first == Spend(0.25, "1-way marginals")
    assert acc.spent == pytest.approx(0.75)
    assert acc.remaining == pytest.approx(0.25)
    assert [s.label for s in acc.history] == ["1-way marginals", "2-way marginals"]
    assert acc.epsilon(1e-6) == pytest.approx(rho_to_epsilon(0.75, 1e-6))
    with pytest.raises(dataclasses.FrozenInstanceError):
        acc.history[0].rho = 0.0  # type: ignore[misc]


def test_accountant_refuses_overspending() -> None:
    acc = ZCDPAccountant(rho=1.0)
    acc.spend(0.8, "a")
    with pytest.raises(ValueError, match=r"only 0\.2 is left"):
        acc.spend(0.3, "b")
    assert len(acc.history) == 1  # nothing recorded on refusal
    assert not acc.can_spend(0.3)
    acc.spend(acc.remaining, "rest")
    assert acc.remaining == 0.0


def test_accountant_allows_exact_exhaustion_in_thirds() -> None:
    acc = ZCDPAccountant(rho=0.1)
    for i in range(3):
        acc.spend(0.1 / 3, f"third {i}")
    assert acc.spent == pytest.approx(0.1)


def test_accountant_from_epsilon_delta() -> None:
    acc = ZCDPAccountant(epsilon=1.0, delta=1e-6)
    assert acc.total == pytest.approx(epsilon_delta_to_rho(1.0, 1e-6))
    acc.spend(acc.total, "all")
    assert acc.epsilon(1e-6) <= 1.0
    assert ZCDPAccountant(rho=1.0).epsilon(1e-6) == 0.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "give the total budget"),
        ({"epsilon": 1.0}, "give the total budget"),
        ({"rho": 1.0, "epsilon": 1.0}, "not both"),
        ({"rho": 0.0}, "zCDP budget"),
    ],
)
def test_accountant_rejects_construction(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ZCDPAccountant(**kwargs)


def test_accountant_rejects_bad_spend() -> None:
    acc = ZCDPAccountant(rho=1.0)
    with pytest.raises(ValueError, match="zCDP budget"):
        acc.spend(-0.1, "x")
    with pytest.raises(TypeError, match="label must be a string"):
        acc.spend(0.1, 3)  # type: ignore[arg-type]


# --- the cached subsampled-Gaussian epsilons and the steps within a budget -----------


def test_subsampled_gaussian_epsilon_matches_opacus_and_the_classic_rule() -> None:
    q, sigmas, steps, delta = 0.02, (1.2, 12.0), 300, 1e-6
    orders = np.asarray(RDPAccountant.DEFAULT_ALPHAS, dtype=float)
    joint = (1.2**-2 + 12.0**-2) ** -0.5
    rdp = np.asarray(
        compute_rdp(q=q, noise_multiplier=joint, steps=steps, orders=orders)
    )
    improved, _ = get_privacy_spent(orders=orders, rdp=rdp, delta=delta)
    got = subsampled_gaussian_epsilon(
        sample_rate=q, noise_multipliers=sigmas, steps=steps, delta=delta
    )
    assert got == pytest.approx(float(improved), rel=1e-12)
    assert got == rdp_epsilon(
        sample_rate=q, noise_multipliers=list(sigmas), steps=steps, delta=delta
    )
    classic = subsampled_gaussian_epsilon(
        sample_rate=q, noise_multipliers=sigmas, steps=steps, delta=delta,
        conversion="classic",
    )  # fmt: skip
    expected = float(np.min(rdp + math.log(1 / delta) / (orders - 1)))
    assert classic == pytest.approx(expected, rel=1e-12) and classic >= got
    assert classic == classic_rdp_conversion(rdp, orders, delta=delta)
    # A single multiplier may be given as a number.
    assert subsampled_gaussian_epsilon(
        sample_rate=q, noise_multipliers=1.2, steps=steps, delta=delta
    ) == subsampled_gaussian_epsilon(
        sample_rate=q, noise_multipliers=[1.2], steps=steps, delta=delta
    )


def test_subsampled_gaussian_epsilon_rejects_bad_input() -> None:
    kw = {"sample_rate": 0.01, "noise_multipliers": 1.0, "steps": 10, "delta": 1e-5}
    with pytest.raises(ValueError, match="conversion"):
        subsampled_gaussian_epsilon(**kw, conversion="tight")
    with pytest.raises(ValueError):
        subsampled_gaussian_epsilon(**{**kw, "sample_rate": 1.5})
    with pytest.raises(ValueError):
        subsampled_gaussian_epsilon(**{**kw, "steps": 0})
    with pytest.raises(ValueError):
        subsampled_gaussian_epsilon(**{**kw, "noise_multipliers": [1.0, 0.0]})
    with pytest.raises(ValueError):
        subsampled_gaussian_epsilon(**{**kw, "noise_multipliers": []})


def test_max_steps_within_is_the_largest_affordable_step_count() -> None:
    kw = {"sample_rate": 0.05, "noise_multipliers": [1.0, 10.0], "delta": 1e-5}

    def eps(t: int) -> float:
        return subsampled_gaussian_epsilon(steps=t, **kw)

    target = 0.5 * (eps(40) + eps(41))
    assert max_steps_within(target, limit=100, **kw) == 40
    assert max_steps_within(target, limit=25, **kw) == 25  # the limit binds
    assert max_steps_within(eps(1) / 2, limit=100, **kw) == 0  # one step is too many
    assert max_steps_within(eps(41), limit=100, **kw) == 41  # "at most" is inclusive


def test_max_steps_within_rejects_bad_input() -> None:
    kw = {"sample_rate": 0.05, "noise_multipliers": 1.0, "delta": 1e-5}
    with pytest.raises(ValueError, match="target_epsilon"):
        max_steps_within(0.0, limit=10, **kw)
    with pytest.raises(ValueError, match="limit"):
        max_steps_within(1.0, limit=0, **kw)


def test_classic_rdp_conversion_by_hand() -> None:
    # min(0.5 + log(1e5) / 1, 1.0 + log(1e5) / 4) = 1 + 11.5129 / 4 = 3.8782
    assert classic_rdp_conversion([0.5, 1.0], [2.0, 5.0], delta=1e-5) == (
        pytest.approx(1.0 + math.log(1e5) / 4, rel=1e-15)
    )
    with pytest.raises(ValueError, match="orders"):
        classic_rdp_conversion([1.0, 2.0], [1.0, 2.0], delta=1e-5)
    with pytest.raises(ValueError, match="orders"):
        classic_rdp_conversion([1.0], [2.0, 3.0], delta=1e-5)
    with pytest.raises(ValueError):
        classic_rdp_conversion([1.0], [2.0], delta=2.0)


# --- Overflow: conversions never return inf, 0 or NaN ---------------------------------


def test_conversions_reject_results_that_overflow() -> None:
    with pytest.raises(
        ValueError, match=r"overflows .*epsilon between 1e-150 and 1e150"
    ):
        epsilon_to_rho(1e308)
    with pytest.raises(ValueError, match=r"underflows to 0.*epsilon between"):
        epsilon_to_rho(1e-170)
    with pytest.raises(ValueError, match=r"too large to convert.*below 1e150"):
        epsilon_delta_to_rho(1e308, 1e-6)
    with pytest.raises(ValueError, match=r"too small to convert.*at least 1e-150"):
        epsilon_delta_to_rho(1e-300, 1e-6)
    with pytest.raises(ValueError, match=r"sensitivity\*\*2 overflows.*rescale"):
        gaussian_rho(1e200, 1.0)
    with pytest.raises(ValueError, match=r"underflows to 0.*rescale"):
        gaussian_rho(1.0, 1e-200)
    with pytest.raises(ValueError, match=r"Gaussian noise scale overflows.*rescale"):
        gaussian_sigma_for_rho(sensitivity=1e308, rho=1e-10)
    with pytest.raises(ValueError, match=r"underflows to 0.*rescale"):
        gaussian_sigma_for_rho(sensitivity=1.0, rho=1e308)
    with pytest.raises(ValueError, match="too large for the analytic Gaussian"):
        analytic_gaussian_sigma(epsilon=1e300, delta=1e-6, sensitivity=1.0)
    with pytest.raises(ValueError, match=r"Gaussian noise scale overflows.*rescale"):
        analytic_gaussian_sigma(epsilon=1.0, delta=1e-6, sensitivity=1e308)


def test_conversions_at_extreme_but_valid_inputs() -> None:
    assert epsilon_to_rho(1e-12) == 0.5e-24
    assert math.isfinite(epsilon_to_rho(1e150))
    for eps in (1e-150, 1e-12, 1e150):
        rho = epsilon_delta_to_rho(eps, 1e-6)
        assert 0.0 < rho < math.inf
        assert rho_to_epsilon(rho, 1e-6) <= eps
    assert math.isfinite(
        analytic_gaussian_sigma(epsilon=1e150, delta=1e-6, sensitivity=1.0)
    )
    # Both tails of the profile underflow: delta is 0 (it was NaN).
    assert analytic_gaussian_delta(epsilon=1e200, sensitivity=1.0, sigma=1e-3) == 0.0
