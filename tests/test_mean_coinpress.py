"""Tests for dpnotes.mean.coinpress: UVM, UVMRec (coinpress_mean) and the schedule.

Closed forms used as references (biswas2020coinpress, Algorithm 1): one UVM step on
``n`` records with interval ``[l, u]``, budget ``rho`` and failure probability ``beta``
clips to ``[l - tail, u + tail]`` with ``tail = sigma sqrt(2 log(2 n / beta))``, adds
``N(0, sd^2)`` with ``sd = (u - l + 2 tail) / (n sqrt(2 rho))`` to the clipped mean, and
returns the interval ``release +- psi`` with
``psi = sqrt(2 (sigma^2 / n + sd^2) log(2 / beta))`` (the paper's Algorithm 1).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpnotes.accounting import rho_to_epsilon
from dpnotes.audit import assert_audit_passes, audit_epsilon, audit_fails
from dpnotes.mean import CoinpressResult, coinpress_mean, coinpress_schedule, uvm

TRIALS = 500_000  # runs per dataset in each audit (vectorised, ~0.2 s per audit)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def tail(n: float, sigma: float, beta: float) -> float:
    return sigma * math.sqrt(2 * math.log(2 * n / beta))


def uvm_sd(lower: float, upper: float, n: int, rho: float, sigma: float, beta: float):
    return (upper - lower + 2 * tail(n, sigma, beta)) / n / math.sqrt(2 * rho)


# --- validation -----------------------------------------------------------------------

BAD_INPUTS = [
    ([], {}, ValueError, "empty"),
    (np.zeros((3, 0)), {}, ValueError, "empty"),
    (1.0, {}, ValueError, "at least one axis"),
    ([0.0, math.nan], {}, ValueError, "1 NaN"),
    ([0.0, -math.inf], {}, ValueError, "1 infinite"),
    ([0.0, 1.0], {"lower": 1.0, "upper": 1.0}, ValueError, "lower must be below"),
    ([0.0, 1.0], {"lower": 2.0, "upper": 1.0}, ValueError, "lower must be below"),
    ([0.0, 1.0], {"upper": math.inf}, ValueError, "infinite"),
    ([0.0, 1.0], {"rho": 0.0}, ValueError, "zCDP budget"),
    ([0.0, 1.0], {"rho": -0.5}, ValueError, "zCDP budget"),
    ([0.0, 1.0], {"rho": math.inf}, ValueError, "zCDP budget"),
    ([0.0, 1.0], {"sigma": 0.0}, ValueError, "sigma must be a positive"),
    ([0.0, 1.0], {"beta": 0.0}, ValueError, r"beta must lie in \(0, 1\)"),
    ([0.0, 1.0], {"beta": 1.0}, ValueError, r"beta must lie in \(0, 1\)"),
    ([0.0, 1.0], {"rng": 0}, TypeError, "numpy.random.Generator"),
    ([0.0, 1.0], {"rng": None}, TypeError, "numpy.random.Generator"),
    (["a", "b"], {}, TypeError, "numeric array-like"),
]


@pytest.mark.parametrize(("x", "kwargs", "err", "match"), BAD_INPUTS)
@pytest.mark.parametrize("fn", [coinpress_mean, uvm])
def test_rejects(fn, x, kwargs, err, match) -> None:
    args = {"lower": -5.0, "upper": 5.0, "rho": 0.5, "rng": rng()}
    args.update(kwargs)
    with pytest.raises(err, match=match):
        fn(x, **args)


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"t": 0}, ValueError, "t must be at least 1"),
        ({"t": -2}, ValueError, "t must be at least 1"),
        ({"t": 2.0}, TypeError, "t must be an integer"),
        ({"t": 2, "rho_fractions": [1.0]}, ValueError, "one fraction per step"),
        ({"t": 2, "rho_fractions": [0.5, 0.6]}, ValueError, "sum to 1"),
        ({"t": 2, "rho_fractions": [1.5, -0.5]}, ValueError, "positive"),
        ({"t": 2, "rho_fractions": [0.0, 1.0]}, ValueError, "positive"),
        ({"lower": [-1.0, -2.0, -3.0]}, ValueError, "one per trial"),
    ],
)
def test_coinpress_mean_rejects_schedule(kwargs: dict, err: type, match: str) -> None:
    args = {"lower": -5.0, "upper": 5.0, "rho": 0.5, "rng": rng()}
    args.update(kwargs)
    with pytest.raises(err, match=match):
        coinpress_mean(np.zeros((2, 10)), **args)


# --- schedule -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rho", "t", "expected"),
    [
        (0.5, 1, [0.5]),
        (0.5, 2, [0.125, 0.375]),
        (1.0, 3, [0.125, 0.125, 0.75]),
        (0.8, 5, [0.05, 0.05, 0.05, 0.05, 0.6]),
    ],
)
def test_schedule_values(rho: float, t: int, expected: list[float]) -> None:
    got = coinpress_schedule(rho, t)
    assert got.shape == (t,)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert got.sum() == pytest.approx(rho, rel=1e-12)


@pytest.mark.parametrize(
    ("rho", "t", "err", "match"),
    [
        (0.0, 2, ValueError, "zCDP budget"),
        (-1.0, 2, ValueError, "zCDP budget"),
        (math.nan, 2, ValueError, "zCDP budget"),
        (0.5, 0, ValueError, "t must be at least 1"),
        (0.5, 1.5, TypeError, "t must be an integer"),
    ],
)
def test_schedule_rejects(rho: float, t, err: type, match: str) -> None:
    with pytest.raises(err, match=match):
        coinpress_schedule(rho, t)


def test_custom_fractions_are_used() -> None:
    x = rng(1).normal(size=(3, 100))
    res = coinpress_mean(
        x,
        lower=-10,
        upper=10,
        rho=0.4,
        rng=rng(2),
        t=3,
        rho_fractions=[0.2, 0.3, 0.5],
        return_trace=True,
    )
    np.testing.assert_allclose(res.rho, [0.08, 0.12, 0.2], rtol=1e-12)
    # The first step's interval follows the first step's budget (closed form).
    sd1 = uvm_sd(-10, 10, 100, 0.08, 1.0, 0.01 / 8)  # beta / (4 (t - 1)) per step
    psi1 = math.sqrt(2 * (1 / 100 + sd1**2) * math.log(2 / (0.01 / 8)))
    np.testing.assert_allclose(res.width[1], 2 * psi1, rtol=1e-12)
    default = coinpress_mean(x, lower=-10, upper=10, rho=0.4, rng=rng(2), t=3)
    assert not np.array_equal(res.estimate, default)


# --- determinism, shapes, vectorisation -----------------------------------------------


def test_deterministic_and_shapes() -> None:
    x = rng(3).normal(size=(2, 3, 40))
    kw = {"lower": -10.0, "upper": 10.0, "rho": 0.5, "t": 3}
    a = coinpress_mean(x, rng=rng(4), **kw)
    np.testing.assert_array_equal(a, coinpress_mean(x, rng=rng(4), **kw))
    assert a.shape == (2, 3)
    assert len(np.unique(a)) == 6
    assert not np.array_equal(a, coinpress_mean(x, rng=rng(5), **kw))
    assert isinstance(coinpress_mean(x[0, 0], rng=rng(4), **kw), float)

    res = coinpress_mean(x, rng=rng(4), return_trace=True, **kw)
    assert isinstance(res, CoinpressResult)
    np.testing.assert_array_equal(res.estimate, a)  # the trace changes nothing
    assert res.lower.shape == res.upper.shape == res.width.shape == (4, 2, 3)
    assert np.all(res.lower[0] == -10.0) and np.all(res.upper[0] == 10.0)
    # The estimate is the centre of the last interval (release +- psi).
    np.testing.assert_allclose((res.lower[-1] + res.upper[-1]) / 2, a)

    step = uvm(x, lower=-10.0, upper=10.0, rho=0.5, rng=rng(4))
    assert step.lower.shape == (2, 2, 3) and step.rho.tolist() == [0.5]
    np.testing.assert_array_equal(
        step.estimate, uvm(x, lower=-10.0, upper=10.0, rho=0.5, rng=rng(4)).estimate
    )
    one = uvm(x[0, 0], lower=-10.0, upper=10.0, rho=0.5, rng=rng(4))
    assert isinstance(one.estimate, float) and one.lower.shape == (2,)


def test_per_trial_intervals() -> None:
    x = np.stack([rng(6).normal(-20, 1, 200), rng(7).normal(20, 1, 200)])
    res = coinpress_mean(
        x,
        lower=np.array([-30.0, 10.0]),
        upper=np.array([-10.0, 30.0]),
        rho=10.0,
        rng=rng(8),
        return_trace=True,
    )
    np.testing.assert_array_equal(res.lower[0], [-30.0, 10.0])
    # With per-trial intervals each trial finds its own mean (error ~ 1/sqrt(n)).
    np.testing.assert_allclose(res.estimate, [-20.0, 20.0], atol=0.3)


def test_t1_is_one_uvm_step_with_beta_over_four() -> None:
    # Algorithm 2 gives the last step beta / 4; with t = 1 that is the only step.
    x = rng(9).normal(size=(5, 30))
    kw = {"lower": -3.0, "upper": 4.0, "rho": 0.3}
    a = coinpress_mean(x, rng=rng(10), t=1, beta=0.2, return_trace=True, **kw)
    b = uvm(x, rng=rng(10), beta=0.05, **kw)
    np.testing.assert_allclose(a.estimate, b.estimate, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.width, b.width, rtol=1e-12)


def test_vectorised_matches_loop_in_distribution() -> None:
    data = rng(11).normal(1.0, 1.0, size=30)
    trials = 3000
    kw = {"lower": -20.0, "upper": 20.0, "rho": 2.0}
    vec = coinpress_mean(np.broadcast_to(data, (trials, 30)), rng=rng(12), **kw)
    r = rng(13)
    loop = np.array([coinpress_mean(data, rng=r, **kw) for _ in range(trials)])
    # Same distribution (sd ~0.4): the two sample means differ by less than 4 standard
    # errors of their difference, and the sample sds (relative sd ~1.3% each) by < 8%.
    se = loop.std() * math.sqrt(2 / trials)
    assert vec.mean() == pytest.approx(loop.mean(), abs=4 * se)
    assert vec.mean() == pytest.approx(data.mean(), abs=4 * se)
    assert vec.std() == pytest.approx(loop.std(), rel=0.08)
    assert stats.ks_2samp(vec, loop).pvalue > 0.001


# --- UVM closed forms -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "lower", "upper", "rho", "sigma", "beta"),
    [
        (100, -1e3, 1e3, 0.5, 1.0, 0.05),
        (1000, -50.0, 80.0, 0.01, 2.0, 0.01),
        (20, -5.0, 5.0, 2.0, 0.5, 0.2),
    ],
)
def test_uvm_width_closed_form(n, lower, upper, rho, sigma, beta) -> None:
    x = rng(14).normal(0.0, sigma, size=(7, n))
    res = uvm(x, lower=lower, upper=upper, rho=rho, sigma=sigma, beta=beta, rng=rng())
    sd = (upper - lower + 2 * sigma * math.sqrt(2 * math.log(2 * n / beta))) / n
    sd /= math.sqrt(2 * rho)
    expected = 2 * math.sqrt(2 * (sigma**2 / n + sd**2) * math.log(2 / beta))
    np.testing.assert_allclose(res.width[1], expected, rtol=1e-12)
    np.testing.assert_array_equal(res.width[0], upper - lower)
    # The new interval is centred on the release.
    np.testing.assert_allclose((res.lower[1] + res.upper[1]) / 2, res.estimate)


def test_uvm_noise_is_gaussian_with_closed_form_sd() -> None:
    n, rho, beta = 50, 0.2, 0.05
    data = np.linspace(-1.0, 1.0, n) + 2.0  # well inside the widened interval
    res = uvm(
        np.broadcast_to(data, (100_000, n)),
        lower=-5.0,
        upper=5.0,
        rho=rho,
        beta=beta,
        rng=rng(15),
    )
    sd = uvm_sd(-5.0, 5.0, n, rho, 1.0, beta)
    assert stats.kstest(res.estimate, stats.norm(data.mean(), sd).cdf).pvalue > 0.01
    # The same test rejects a 5% smaller noise.
    ref = stats.norm(data.mean(), 0.95 * sd)
    assert stats.kstest(res.estimate, ref.cdf).pvalue < 1e-6


@pytest.mark.parametrize(("mu", "beta"), [(0.0, 0.1), (4.5, 0.05), (-3.0, 0.2)])
def test_uvm_interval_covers_mean(mu: float, beta: float) -> None:
    trials, n = 20_000, 50
    x = rng(16).normal(mu, 1.0, size=(trials, n))
    res = uvm(x, lower=-5.0, upper=5.0, rho=0.1, beta=beta, rng=rng(17))
    covered = (res.lower[1] <= mu) & (mu <= res.upper[1])
    # Coverage must be at least 1 - beta; the binomial sd of the observed rate is at
    # most sqrt(beta (1 - beta) / 20000) <= 0.003, so 0.01 is a > 3-sigma allowance.
    assert covered.mean() >= 1 - beta - 0.01
    # The interval is not trivially wide: it is much narrower than the start.
    assert res.width[1, 0] < 0.5 * res.width[0, 0]


@pytest.mark.parametrize("t", [1, 2, 3, 5])
def test_failure_budget_adds_up_to_beta(t: int) -> None:
    # Each step j fails if a record is clipped (union bound over the n records:
    # n * 2 exp(-tail_j^2 / 2 sigma^2)) or if the release leaves its interval
    # (2 exp(-psi_j^2 / 2 v_j), v_j the release's variance). Algorithm 2's split of
    # beta makes these bounds sum to beta exactly (t > 1); an interval constant of
    # log(4 / beta) would leave a quarter of beta unspent, log(1 / beta) overspend it.
    n, sigma, beta, rho = 200, 1.5, 0.02, 0.3
    x = rng(30).normal(1.0, sigma, size=(2, n))
    res = coinpress_mean(
        x, lower=-50, upper=50, rho=rho, t=t, sigma=sigma, beta=beta, rng=rng(31),
        return_trace=True,
    )  # fmt: skip
    spent = 0.0
    for j in range(t):
        width = res.width[j, 0]
        beta_j = beta / 4 if j == t - 1 else beta / (4 * (t - 1))
        sd = uvm_sd(0.0, width, n, res.rho[j], sigma, beta_j)
        psi = res.width[j + 1, 0] / 2
        variance = sigma**2 / n + sd**2
        spent += n * 2 * math.exp(-(tail(n, sigma, beta_j) ** 2) / (2 * sigma**2))
        spent += 2 * math.exp(-(psi**2) / (2 * variance))
    # With t = 1 there are no shrinking steps: the last step's beta / 4 alone, half
    # of beta spent.
    assert spent == pytest.approx(beta if t > 1 else beta / 2, rel=1e-9)


def test_widths_shrink_from_a_wide_start() -> None:
    x = rng(18).normal(3.0, 1.0, size=(20, 1000))
    res = coinpress_mean(
        x, lower=-1e6, upper=1e6, rho=0.5, t=4, rng=rng(19), return_trace=True
    )
    w = res.width
    assert np.all(np.diff(w, axis=0) < 0)
    assert np.all(w[-1] < 1.0)  # from 2e6 down to below one unit in 4 steps
    # The widths are public: identical in every trial.
    np.testing.assert_allclose(w, np.broadcast_to(w[:, :1], w.shape), rtol=1e-12)
    assert np.all((res.lower[-1] <= 3.0) & (3.0 <= res.upper[-1]))


def test_error_decreases_with_n() -> None:
    rmse = []
    for n in (100, 1000, 10_000):
        x = rng(n).normal(2.0, 1.0, size=(200, n))
        est = coinpress_mean(x, lower=-100, upper=100, rho=0.1, rng=rng(20))
        rmse.append(float(np.sqrt(np.mean((est - 2.0) ** 2))))
    # Noise and sampling error both shrink at least like 1/sqrt(n): 10x more records
    # must cut the RMSE by well over half (200 trials: RMSE relative sd ~5%).
    assert rmse[1] < 0.5 * rmse[0]
    assert rmse[2] < 0.5 * rmse[1]


def test_huge_rho_gives_sample_mean() -> None:
    x = rng(21).uniform(2.0, 4.0, size=(3, 100))  # within the widened intervals
    est = coinpress_mean(x, lower=-10.0, upper=10.0, rho=1e20, t=3, rng=rng(22))
    np.testing.assert_allclose(est, x.mean(axis=1), rtol=0, atol=1e-8)


def test_huge_rho_single_step_clips_to_widened_interval() -> None:
    n, beta = 100, 0.01
    x = np.r_[np.zeros(n - 2), -1e3, 1e3 + 7]  # two outliers far outside
    a = tail(n, 1.0, beta / 4)  # t = 1 runs its only step at beta / 4
    expected = np.clip(x, -2.0 - a, 2.0 + a).mean()
    assert expected != pytest.approx(x.mean())
    est = coinpress_mean(x, lower=-2.0, upper=2.0, rho=1e20, t=1, beta=beta, rng=rng())
    assert est == pytest.approx(expected, abs=1e-9)


# --- privacy audits under rho-zCDP ----------------------------------------------------

RHO, DELTA, N = 0.05, 1e-3, 4
CLAIMED = rho_to_epsilon(RHO, DELTA)  # ~0.90
# One record outside every clip interval, at the far left or the far right: the clipped
# sum of each step then differs by the full interval width.
D0 = np.array([0.0, 0.0, 0.0, -100.0])
D1 = np.array([0.0, 0.0, 0.0, 100.0])


def _mech(fn, rho: float):
    def mech(d: np.ndarray, trials: int, r: np.random.Generator) -> np.ndarray:
        x = np.broadcast_to(d, (trials, N))
        out = fn(x, lower=-1.0, upper=1.0, rho=rho, rng=r)
        return out.estimate if isinstance(out, CoinpressResult) else out

    return mech


@pytest.mark.parametrize("fn", [uvm, coinpress_mean], ids=["uvm", "coinpress_t2"])
def test_audit_passes(fn) -> None:
    res = audit_epsilon(_mech(fn, RHO), D0, D1, trials=TRIALS, rng=rng(30), delta=DELTA)
    assert_audit_passes(res, CLAIMED)
    assert res.epsilon_lower > 0.4  # the neighbours do reveal something


@pytest.mark.parametrize(
    ("fn", "margin"), [(uvm, 0.5), (coinpress_mean, 0.3)], ids=["uvm", "coinpress_t2"]
)
def test_audit_catches_half_noise(fn, margin: float) -> None:
    # Broken: every step's noise sd halved (the noise of a budget 4 rho, claimed rho).
    res = audit_epsilon(
        _mech(fn, 4 * RHO), D0, D1, trials=TRIALS, rng=rng(31), delta=DELTA
    )
    assert audit_fails(res, CLAIMED)
    assert res.epsilon_lower > CLAIMED + margin


# --- Overflow: never a non-finite release ---------------------------------------------


def test_rejects_bounds_whose_width_overflows() -> None:
    x = np.linspace(-1.0, 1.0, 10)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"width 2.00e\+308.*narrower public bounds"):
        coinpress_mean(x, lower=-1e308, upper=1e308, rho=1.0, rng=rng)
    with pytest.raises(ValueError, match="narrower public bounds"):
        uvm(x, lower=-1e308, upper=1e308, rho=1.0, rng=rng)


def test_rejects_a_run_whose_noise_scale_overflows_before_drawing() -> None:
    # The bounds' width is finite, but the noise scale of step 1 squared (inside the
    # next interval's half-width) overflows.
    x = np.linspace(-1.0, 1.0, 10)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match=r"step 1's interval half-width.*rescale"):
        coinpress_mean(x, lower=-1e200, upper=1e200, rho=1.0, rng=rng)
    assert rng.bit_generator.state == state  # nothing was drawn
    with pytest.raises(ValueError, match=r"clip interval's .*width.*rescale"):
        coinpress_mean(x, lower=-1e307, upper=1e307, sigma=1e308, rho=1.0, rng=rng)


def test_wide_but_representable_bounds_still_work() -> None:
    x = np.random.default_rng(1).normal(0.0, 1.0, 1000)
    res = coinpress_mean(
        x,
        lower=-1e150,
        upper=1e150,
        rho=1e-4,
        t=3,
        rng=np.random.default_rng(0),
        return_trace=True,
    )
    assert math.isfinite(res.estimate)
    assert np.all(np.isfinite(res.lower)) and np.all(np.isfinite(res.upper))
    # At rho=1e-12 the first step's noise scale squared overflows (the run used to
    # end in NaN): refused before drawing.
    with pytest.raises(ValueError, match=r"interval half-width.*larger rho"):
        coinpress_mean(
            x, lower=-1e150, upper=1e150, rho=1e-12, t=3, rng=np.random.default_rng(0)
        )
