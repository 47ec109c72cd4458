"""Tests for the empirical privacy audit harness (dpnotes.audit)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats
from script_loader import load_script

from dpnotes.audit import (
    AuditPower,
    AuditResult,
    assert_audit_passes,
    audit_epsilon,
    audit_epsilon_from_samples,
    audit_fails,
    audit_power,
    clopper_pearson,
    logistic_perturbation_noise,
)
from dpnotes.rng import spawn


def randomized_response(epsilon: float):
    """Report a bit truthfully with probability e^eps / (1 + e^eps): exactly eps-DP."""
    keep = math.exp(epsilon) / (1.0 + math.exp(epsilon))

    def mech(bit: int, trials: int, rng: np.random.Generator) -> np.ndarray:
        truthful = rng.random(trials) < keep
        return np.where(truthful, bit, 1 - bit).astype(float)

    return mech


def laplace(epsilon: float):
    def mech(value: float, trials: int, rng: np.random.Generator) -> np.ndarray:
        return value + rng.laplace(0.0, 1.0 / epsilon, size=trials)

    return mech


# --- Clopper–Pearson ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "n"), [(0, 50), (3, 50), (25, 50), (50, 50), (7, 10_000)]
)
def test_clopper_pearson_against_scipy_binomtest(k: int, n: int) -> None:
    # A one-sided bound at level c is one end of the two-sided interval at level 2c - 1.
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.9, method="exact")
    assert clopper_pearson(k, n, confidence=0.95, side="lower") == pytest.approx(
        ci.low, abs=1e-12
    )
    assert clopper_pearson(k, n, confidence=0.95, side="upper") == pytest.approx(
        ci.high, abs=1e-12
    )


def test_clopper_pearson_vectorised() -> None:
    k = np.array([0, 5, 10])
    out = clopper_pearson(k, 10, confidence=0.9, side="upper")
    assert out.shape == (3,)
    assert out[2] == 1.0
    assert out[0] == pytest.approx(1 - 0.1 ** (1 / 10))


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ({"k": 1, "n": 10, "confidence": 0.95, "side": "both"}, "side must be"),
        ({"k": 11, "n": 10, "confidence": 0.95, "side": "lower"}, r"k must lie"),
        ({"k": 1, "n": 10, "confidence": 1.0, "side": "lower"}, r"confidence must lie"),
    ],
)
def test_clopper_pearson_rejects(args: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        clopper_pearson(args.pop("k"), args.pop("n"), **args)


# --- known answers --------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_randomized_response_bound_is_tight(epsilon: float) -> None:
    res = audit_epsilon(
        randomized_response(epsilon), 0, 1, trials=500_000, rng=np.random.default_rng(0)
    )
    assert res.passes(epsilon)
    assert res.epsilon_lower > 0.95 * epsilon
    assert res.epsilon_estimate == pytest.approx(epsilon, rel=0.03)
    assert res.p0 >= res.p1


def test_laplace_bound_is_tight_and_reports_event() -> None:
    res = audit_epsilon(
        laplace(1.0), 0.0, 1.0, trials=500_000, rng=np.random.default_rng(1)
    )
    assert 0.95 < res.epsilon_lower <= 1.0
    # Upper events favour d1 (mean 1), lower events favour d0 (mean 0).
    assert res.swapped == (res.direction == ">")
    assert res.p0 > res.p1
    assert res.p0_lower <= res.p0 and res.p1_upper >= res.p1


def test_identical_distributions_give_no_evidence() -> None:
    res = audit_epsilon(
        laplace(1.0), 0.0, 0.0, trials=200_000, rng=np.random.default_rng(2)
    )
    assert res.epsilon_lower < 0.02


def test_delta_is_accounted() -> None:
    # M(d0) = 1 with probability 0.01, else 0; M(d1) = 0: (0, 0.01)-DP, not pure DP.
    def mech(d: int, trials: int, rng: np.random.Generator) -> np.ndarray:
        return ((rng.random(trials) < 0.01) & (d == 0)).astype(float)

    pure = audit_epsilon(mech, 0, 1, trials=200_000, rng=np.random.default_rng(3))
    assert pure.epsilon_lower > 5.0  # refutes every small pure-DP claim
    approx = audit_epsilon(
        mech, 0, 1, trials=200_000, rng=np.random.default_rng(3), delta=0.01
    )
    assert approx.epsilon_lower == 0.0


def test_bound_holds_across_seeds() -> None:
    # Coverage: at 95% confidence at most ~5% of independent audits of an exactly 1-DP
    # mechanism may exceed 1 (6 of 100 allowed here; Clopper–Pearson is conservative,
    # so far fewer do).
    lbs = []
    for r in spawn(123, 100):
        out0 = r.laplace(0.0, 1.0, size=4000)
        out1 = 1.0 + r.laplace(0.0, 1.0, size=4000)
        lbs.append(audit_epsilon_from_samples(out0, out1).epsilon_lower)
    lbs = np.array(lbs)
    assert np.sum(lbs > 1.0) <= 6
    assert np.mean(lbs) > 0.6  # and the bounds are not vacuous


# --- interface ------------------------------------------------------------------------


def test_statistic_reduces_vector_outputs() -> None:
    def vector_mech(d: float, trials: int, rng: np.random.Generator) -> np.ndarray:
        out = rng.laplace(0.0, 1.0, size=(trials, 3))
        out[:, 1] += d
        return out

    res = audit_epsilon(
        vector_mech,
        0.0,
        1.0,
        trials=200_000,
        rng=np.random.default_rng(4),
        statistic=lambda o: o[:, 1],
    )
    assert 0.9 < res.epsilon_lower <= 1.0
    with pytest.raises(ValueError, match="pass a statistic"):
        audit_epsilon(vector_mech, 0.0, 1.0, trials=200, rng=np.random.default_rng(4))
    with pytest.raises(ValueError, match="statistic must return one scalar"):
        audit_epsilon(
            vector_mech,
            0.0,
            1.0,
            trials=200,
            rng=np.random.default_rng(4),
            statistic=lambda o: o[:, :2],
        )


def test_audit_is_deterministic_and_frozen() -> None:
    a = audit_epsilon(
        laplace(1.0), 0.0, 1.0, trials=10_000, rng=np.random.default_rng(5)
    )
    b = audit_epsilon(
        laplace(1.0), 0.0, 1.0, trials=10_000, rng=np.random.default_rng(5)
    )
    assert a == b
    assert isinstance(a, AuditResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.epsilon_lower = 0.0  # type: ignore[misc]


def test_explicit_thresholds() -> None:
    r = np.random.default_rng(6)
    out0, out1 = r.laplace(0, 1, 100_000), 1 + r.laplace(0, 1, 100_000)
    res = audit_epsilon_from_samples(out0, out1, thresholds=np.array([1.5]))
    assert res.threshold == 1.5
    assert res.direction == ">" and res.swapped


def test_pass_fail_helpers() -> None:
    res = audit_epsilon(
        laplace(2.0), 0.0, 1.0, trials=200_000, rng=np.random.default_rng(7)
    )
    assert_audit_passes(res, 2.0)
    assert not audit_fails(res, 2.0)
    assert audit_fails(res, 1.0)
    with pytest.raises(AssertionError, match="refutes epsilon=1"):
        assert_audit_passes(res, 1.0)
    assert "epsilon >=" in res.summary()
    assert_audit_passes(res, math.inf)  # no claim: nothing to refute
    for bad in (math.nan, -1.0, "2", None, True):
        with pytest.raises(ValueError, match="a number at least 0"):
            assert_audit_passes(res, bad)
        with pytest.raises(ValueError, match="a number at least 0"):
            audit_fails(res, bad)


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"trials": 50}, ValueError, "trials must be at least 100"),
        ({"trials": 1e5}, TypeError, "trials must be an integer"),
        ({"confidence": 1.0}, ValueError, r"confidence must lie in \(0, 1\)"),
        ({"delta": 1.0}, ValueError, r"delta must lie in \[0, 1\)"),
        ({"delta": -0.1}, ValueError, r"delta must lie in \[0, 1\)"),
        ({"rng": 0}, TypeError, "numpy.random.Generator"),
        ({"mechanism": "laplace"}, TypeError, "mechanism must be callable"),
        ({"mechanism": lambda d, t, r: np.full(t, np.nan)}, ValueError, "NaN outputs"),
    ],
)
def test_audit_rejects(kwargs: dict, err: type, match: str) -> None:
    args = {"mechanism": laplace(1.0), "trials": 1000, "rng": np.random.default_rng(0)}
    args.update(kwargs)
    with pytest.raises(err, match=match):
        audit_epsilon(args.pop("mechanism"), 0.0, 1.0, **args)


def test_audit_from_samples_rejects() -> None:
    with pytest.raises(ValueError, match="at least 4 outputs"):
        audit_epsilon_from_samples(np.zeros(3), np.zeros(10))
    with pytest.raises(ValueError, match="must be 1-D"):
        audit_epsilon_from_samples(np.zeros((10, 2)), np.zeros(10))


# --- the power of an audit ----------------------------------------------------------


def laplace_family(epsilon: float):
    """Laplace noise on a value of sensitivity 1: exactly epsilon-DP."""
    return laplace(epsilon)


def test_power_is_near_zero_at_the_claim_and_near_one_far_above_it() -> None:
    res = audit_power(
        laplace_family,
        0.0,
        1.0,
        epsilon=1.0,
        factors=(1.0, 1.5, 4.0),
        repeats=40,
        trials=2000,
        rng=np.random.default_rng(0),
    )
    assert isinstance(res, AuditPower)
    rates = res.rates()
    assert list(rates) == [1.0, 1.5, 4.0]
    # A valid 95% audit of an exactly 1-DP mechanism refutes epsilon = 1 in at most
    # about 5% of audits (Clopper-Pearson is conservative: fewer); 4 of 40 allowed.
    assert res.point(1.0).rejections <= 4
    assert rates[4.0] == 1.0
    assert rates[1.0] <= rates[1.5] <= rates[4.0]
    # The lower bounds grow with the truth and never pass it by much.
    medians = [p.median_epsilon_lower for p in res.points]
    assert medians[0] < medians[1] < medians[2] < 4.0
    assert res.smallest_factor(0.8) in (1.5, 4.0)
    assert res.smallest_factor(0.8, conservative=True) in (1.5, 4.0)
    assert res.smallest_factor(0.99, conservative=True) is None  # 40 repeats: < 0.92
    assert (res.trials, res.repeats, res.epsilon, res.delta) == (2000, 40, 1.0, 0.0)
    assert res.seconds > 0.0
    table = res.table()
    assert len(table.splitlines()) == 4 and "40/40" in table


def test_power_intervals_are_clopper_pearson() -> None:
    res = audit_power(
        laplace_family,
        0.0,
        1.0,
        epsilon=1.0,
        factors=(1.3,),
        repeats=25,
        trials=500,
        rng=np.random.default_rng(1),
        interval_confidence=0.9,
    )
    p = res.point(1.3)
    assert 0 < p.rejections < 25  # an interior count, where the interval matters
    assert p.rate == p.rejections / 25
    ci = stats.binomtest(p.rejections, 25).proportion_ci(0.9, method="exact")
    assert p.rate_lower == pytest.approx(ci.low, abs=1e-12)
    assert p.rate_upper == pytest.approx(ci.high, abs=1e-12)
    assert len(p.epsilon_lowers) == 25
    assert p.rejections == sum(lb > 1.0 for lb in p.epsilon_lowers)
    with pytest.raises(KeyError, match="was not audited"):
        res.point(2.0)


def test_power_is_deterministic_and_factors_have_their_own_streams() -> None:
    def run(factors):
        return audit_power(
            laplace_family,
            0.0,
            1.0,
            epsilon=1.0,
            factors=factors,
            repeats=3,
            trials=500,
            rng=np.random.default_rng(2),
        )

    a, b = run((1.0, 2.0)), run((1.0, 2.0))
    assert a.points == b.points
    # Appending a factor leaves the earlier factors' audits unchanged.
    c = run((1.0, 2.0, 3.0))
    assert c.points[:2] == a.points
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.repeats = 1  # type: ignore[misc]


def _never_called(epsilon):
    raise AssertionError("the family was called before the inputs were checked")


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"family": "laplace"}, TypeError, "family must be callable"),
        ({"statistic": 3}, TypeError, "statistic must be callable"),
        ({"epsilon": 0.0}, ValueError, "epsilon must be a positive"),
        ({"factors": ()}, ValueError, "factors is empty"),
        ({"factors": 2.0}, TypeError, "factors must be a sequence"),
        ({"factors": "12"}, TypeError, "factors must be a sequence"),
        ({"factors": (1.0, -2.0)}, ValueError, "factors must be positive, finite"),
        ({"factors": (1.0, "2")}, TypeError, "factors must be real numbers"),
        ({"factors": (1.0, 1.0)}, ValueError, "factors has duplicates"),
        ({"repeats": 0}, ValueError, "repeats must be at least 1"),
        ({"repeats": 2.5}, TypeError, "repeats must be an integer"),
        ({"trials": 50}, ValueError, "trials must be at least 100"),
        ({"rng": 0}, TypeError, "numpy.random.Generator"),
        ({"delta": 1.0}, ValueError, r"delta must lie in \[0, 1\)"),
        ({"confidence": 1.5}, ValueError, r"confidence must lie in \(0, 1\)"),
        ({"interval_confidence": 0.0}, ValueError, "interval_confidence must lie"),
    ],
)
def test_power_refuses_bad_input_before_any_audit(kwargs, err, match) -> None:
    args = {
        "family": _never_called,
        "epsilon": 1.0,
        "factors": (1.0, 2.0),
        "repeats": 5,
        "trials": 1000,
        "rng": np.random.default_rng(0),
        **kwargs,
    }
    with pytest.raises(err, match=match):
        audit_power(args.pop("family"), 0.0, 1.0, **args)


def test_power_refuses_a_family_that_returns_no_mechanism() -> None:
    with pytest.raises(TypeError, match="not a mechanism"):
        audit_power(
            lambda eps: eps,
            0.0,
            1.0,
            epsilon=1.0,
            repeats=1,
            trials=100,
            rng=np.random.default_rng(0),
        )


# --- the objective-perturbation statistic -------------------------------------------


def test_the_noise_vector_is_recovered_from_the_minimiser() -> None:
    # Reference: minimise the perturbed objective with scipy for known noise vectors,
    # then recover them from the minimisers alone.
    from scipy import optimize
    from scipy.special import expit

    rng = np.random.default_rng(3)
    x = rng.random((40, 4))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = (rng.random(40) < 0.5).astype(float)
    C = 0.3
    noises = rng.normal(0.0, 3.0, size=(5, 4))

    def objective(w, b):
        z = x @ w
        loss = np.sum(np.logaddexp(0.0, z) - y * z) + w @ w / (2 * C) + b @ w
        grad = (expit(z) - y) @ x + w / C + b
        return loss, grad

    weights = np.array(
        [
            optimize.minimize(objective, np.zeros(4), args=(b,), jac=True, tol=1e-12).x
            for b in noises
        ]
    )
    got = logistic_perturbation_noise(weights, x, y, C=C)
    np.testing.assert_allclose(got, noises, atol=1e-5)
    one = logistic_perturbation_noise(weights[0], x, y, C=C)
    assert one.shape == (4,)
    np.testing.assert_allclose(one, got[0])
    # Repeated rows (summed over distinct rows on large inputs) give the same answer.
    xx, yy = np.repeat(x, 30, axis=0), np.repeat(y, 30)
    many = np.repeat(weights, 300, axis=0)
    direct = logistic_perturbation_noise(weights, xx, yy, C=C)
    np.testing.assert_allclose(
        logistic_perturbation_noise(many, xx, yy, C=C)[::300], direct, rtol=1e-10
    )


@pytest.mark.parametrize(
    ("args", "err", "match"),
    [
        ({"coef": np.zeros(3)}, ValueError, "coef must have shape"),
        ({"coef": np.zeros((2, 2, 2))}, ValueError, "coef must have shape"),
        ({"y": np.array([0, 2])}, ValueError, "0 or 1"),
        ({"y": np.array([0])}, ValueError, "one label"),
        ({"x": np.zeros(2)}, ValueError, "2-dimensional"),
        ({"C": 0.0}, ValueError, "C must be"),
    ],
)
def test_the_noise_recovery_refuses_bad_input(args, err, match) -> None:
    call = {"coef": np.zeros(2), "x": np.eye(2), "y": np.array([0, 1]), "C": 1.0}
    call.update(args)
    with pytest.raises(err, match=match):
        logistic_perturbation_noise(
            call.pop("coef"), call.pop("x"), call.pop("y"), **call
        )


def test_the_power_script_prints_the_table_of_the_tests_audit(capsys) -> None:
    script = load_script("scripts/audit_power.py")
    setup = script.audit_setup("lr")
    assert setup["epsilon"] == 2.0 and setup["trials"] == 3000
    assert len(setup["d0"]) == len(setup["d1"])
    assert isinstance(script.cpu_model(), str)
    argv = ["--audit", "lr", "--factors", "4", "--repeats", "1", "--trials", "100"]
    assert script.main(argv) == 0
    out = capsys.readouterr().out
    assert "claim: epsilon=2" in out and "100 runs per data set" in out
    assert "cpu: " in out and "wall time" in out
    assert "smallest overspend caught with >= 80% power" in out
    assert (
        len([line for line in out.splitlines() if line.strip().startswith("4 ")]) == 1
    )
