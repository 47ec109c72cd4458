"""Tests for dpnotes.synth.aim (AIM, mckenna2022aim).

Two kinds of tests. A few fit the real thing on a 3-attribute domain with few rounds
(mbi compiles one program per clique structure; the structures repeat). The round
logic (annealing, the last round, the model-size cap, accounting) is tested with a
stand-in for the mbi glue whose model changes by a chosen amount per estimate: fast,
and exact about which branch is taken.
"""

from __future__ import annotations

import itertools
import math
import types

import numpy as np
import pandas as pd
import pytest

from dpnotes.mechanisms import exponential_mechanism
from dpnotes.synth import AIM, aim, pgm
from dpnotes.synth.aim import candidate_weights, select_worst
from dpnotes.synth.marginals import all_kway, marginal, workload_error

DOMAIN = {"A": 3, "B": 3, "C": 2}
PAIRS = all_kway(DOMAIN, 2)
DELTA = 1e-6


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def make_data(n: int = 1000, seed: int = 0) -> pd.DataFrame:
    """B copies A 85% of the time; C is mostly the indicator of B == 0."""
    r = rng(seed)
    a = r.integers(0, 3, n)
    b = np.where(r.random(n) < 0.85, a, r.integers(0, 3, n))
    c = np.where(r.random(n) < 0.8, (b == 0).astype(int), r.integers(0, 2, n))
    return pd.DataFrame({"A": a, "B": b, "C": c})


DATA = make_data()


@pytest.fixture(scope="module")
def fitted() -> AIM:
    return AIM(epsilon=50.0, delta=DELTA, workload=PAIRS, rounds=6).fit(
        DATA, DOMAIN, rng=rng(0)
    )


# --- validation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"rounds": 0}, ValueError, "rounds must be at least 1"),
        ({"rounds": -4}, ValueError, "rounds must be at least 1"),
        ({"rounds": 2.0}, TypeError, "rounds must be an integer"),
        ({"alpha": 0.0}, ValueError, r"alpha must lie in \(0, 1\)"),
        ({"alpha": 1.0}, ValueError, r"alpha must lie in \(0, 1\)"),
        ({"alpha": -0.5}, ValueError, r"alpha must lie in \(0, 1\)"),
        ({"alpha": 1.5}, ValueError, r"alpha must lie in \(0, 1\)"),
        ({"alpha": math.nan}, ValueError, r"alpha must lie in \(0, 1\)"),
        ({"workload": []}, ValueError, "workload is empty"),
        ({"workload": ["SEX"]}, TypeError, r"workload\[0\] is 'SEX'.*\('SEX',\)"),
        ({"workload": [("A", "B"), "C"]}, TypeError, r"workload\[1\] is 'C'"),
        ({"workload": "SEX"}, TypeError, "must be a list of cliques"),
        ({"workload": [()]}, ValueError, "empty clique"),
        ({"epsilon": 1e-300}, ValueError, "too small to convert.*at least 1e-150"),
        ({"max_model_size": 0.0}, ValueError, "max_model_size must be a positive"),
        ({"iters": 0}, ValueError, "iters must be at least 1"),
        ({"final_iters": 0}, ValueError, "final_iters must be at least 1"),
        ({"epsilon": 0.0}, ValueError, "positive, finite privacy budget"),
        ({"delta": 0.0}, ValueError, "strictly between 0 and 1"),
        ({"delta": 1.0}, ValueError, "strictly between 0 and 1"),
    ],
)
def test_constructor_rejects(kwargs, err, match) -> None:
    args = {"epsilon": 1.0, "delta": DELTA}
    args.update(kwargs)
    with pytest.raises(err, match=match):
        AIM(**args)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"workload_weights": [1.0]}, "workload_weights must be 3 non-negative"),
        ({"workload_weights": [1.0] * 4}, "workload_weights must be 3 non-negative"),
        ({"workload_weights": [1.0, -1.0, 1.0]}, "workload_weights must be 3 non-neg"),
        ({"workload_weights": [1.0, math.nan, 1]}, "workload_weights must be 3 non-ne"),
        ({"workload": [("A", "Z")]}, r"unknown attribute\(s\) \['Z'\]"),
    ],
)
def test_fit_rejects_bad_workload(kwargs, match) -> None:
    args = {"workload": PAIRS}
    args.update(kwargs)
    synth = AIM(epsilon=1.0, delta=DELTA, **args)
    with pytest.raises(ValueError, match=match):
        synth.fit(DATA, DOMAIN, rng=rng())
    assert synth.rho_spent == 0.0  # nothing was measured
    with pytest.raises(RuntimeError, match="AIM is not fitted"):
        synth.sample(3, rng=rng())


# --- candidate weights and selection --------------------------------------------------


def test_candidate_weights_by_hand() -> None:
    got = candidate_weights([("A", "B"), ("B", "C")], DOMAIN, [1.0, 2.0])
    # w(r) = sum_s c_s |r & s|:  A: 1,  B: 1 + 2,  C: 2,  AB: 2 + 2,  BC: 1 + 4.
    assert got == {
        ("A",): 1.0,
        ("B",): 3.0,
        ("C",): 2.0,
        ("A", "B"): 4.0,
        ("B", "C"): 5.0,
    }
    full = candidate_weights(all_kway(DOMAIN, 3), DOMAIN, [1.0])
    assert full == {
        ("A",): 1.0,
        ("B",): 1.0,
        ("C",): 1.0,
        ("A", "B"): 2.0,
        ("A", "C"): 2.0,
        ("B", "C"): 2.0,
        ("A", "B", "C"): 3.0,
    }
    with pytest.raises(ValueError):
        candidate_weights([("A", "B")], DOMAIN, [1.0, 2.0])  # weights do not match


def test_select_worst_is_the_exponential_mechanism_with_max_weight() -> None:
    errors = np.array([10.0, 6.0, -3.0, 0.5])
    weights = np.array([1.0, 2.0, 4.0, 0.5])
    # Huge epsilon: the argmax of the weighted error (index 1), not of the error.
    assert select_worst(errors, weights, epsilon=1e9, rng=rng()) == 1
    for seed in range(20):
        got = select_worst(errors, weights, epsilon=0.7, rng=rng(seed))
        ref = exponential_mechanism(
            weights * errors, epsilon=0.7, sensitivity=4.0, rng=rng(seed)
        )
        assert isinstance(got, int) and got == int(ref)


# --- a real fit -----------------------------------------------------------------------


def test_accounting_is_exact(fitted) -> None:
    rho = fitted.rho
    assert fitted.rho_spent == pytest.approx(rho, rel=1e-9)
    spends = [s.rho for s in fitted.accountant_.history]
    assert np.cumsum(spends).max() <= rho * (1 + 1e-9)
    assert fitted.epsilon_spent == pytest.approx(50.0, rel=1e-6)
    _check_history(fitted, rounds=6)


def test_model_recovers_the_workload(fitted) -> None:
    n = len(DATA)
    got = pgm.model_marginals(fitted.model_, DOMAIN, PAIRS)
    for cl in PAIRS:
        assert np.abs(got[cl] - marginal(DATA, DOMAIN, cl)).sum() / n < 0.01
    # The independence model misses the pairs badly, so the tolerance is meaningful.
    for cl in [("A", "B"), ("B", "C")]:
        a, b = (marginal(DATA, DOMAIN, (x,)) for x in cl)
        indep = np.outer(a, b).reshape(-1) / n
        assert np.abs(indep - marginal(DATA, DOMAIN, cl)).sum() / n > 0.3
    synth = fitted.sample(50_000, rng=rng(1))
    assert workload_error(DATA, synth, DOMAIN, PAIRS) < 0.03


def test_deterministic_for_a_seed(fitted) -> None:
    again = AIM(epsilon=50.0, delta=DELTA, workload=PAIRS, rounds=6).fit(
        DATA, DOMAIN, rng=rng(0)
    )
    assert again.history_ == fitted.history_
    for a, b in zip(again.log_.measurements(), fitted.log_.measurements(), strict=True):
        np.testing.assert_array_equal(a.noisy_measurement, b.noisy_measurement)
    pd.testing.assert_frame_equal(
        again.sample(200, rng=rng(2)), fitted.sample(200, rng=rng(2))
    )
    assert not fitted.sample(200, rng=rng(3)).equals(fitted.sample(200, rng=rng(2)))


def test_empty_table_and_default_workload() -> None:
    empty = pd.DataFrame({a: np.zeros(0, dtype=int) for a in DOMAIN})
    synth = AIM(epsilon=1.0, delta=DELTA, rounds=6).fit(empty, DOMAIN, rng=rng(4))
    assert synth.rho_spent == pytest.approx(synth.rho, rel=1e-9)
    out = synth.sample(50, rng=rng(5))
    assert list(out.columns) == list(DOMAIN) and len(out) == 50
    for a, size in DOMAIN.items():
        assert out[a].between(0, size - 1).all()


# --- the round logic, with a stand-in for the mbi glue --------------------------------


def _fake_pgm(step, size_mb=lambda cliques: 0.0):
    """The mbi glue, replaced by a model whose every cell grows by `step` per estimate.

    Estimate ``k`` (0 = one-way, then one per round, then the final one) is the integer
    ``k``; its marginal of any clique has every cell equal to ``k * step``. A round's
    change on the picked clique is therefore ``step * n_r`` in L1.
    """
    calls = {"estimate": 0}

    def estimate(log, *, iters, warm_start=None):
        calls["estimate"] += 1
        return calls["estimate"] - 1

    def model_marginals(model, domain, cliques, *, joint=None):
        return {
            tuple(c): np.full(int(np.prod([domain[a] for a in c])), model * step)
            for c in cliques
        }

    return types.SimpleNamespace(
        MeasurementLog=pgm.MeasurementLog,
        estimate=estimate,
        model_marginals=model_marginals,
        model_size_mb=lambda domain, cliques: size_mb(cliques),
        calls=calls,
    )


def _sigma0(rho: float, rounds: int, alpha: float = 0.9) -> float:
    return math.sqrt(rounds / (2 * alpha * rho))


def _check_history(synth: AIM, rounds: int) -> None:
    """The bookkeeping of the rounds: spends, labels, annealing and the last round."""
    h = synth.history_
    spends = synth.accountant_.history
    assert spends[0].label == "one-way marginals"
    assert [s.label for s in spends[1:]] == [
        lab for e in h for lab in ("select", f"measure {e['clique']}")
    ]
    sigma0 = _sigma0(synth.rho, rounds, synth.alpha)
    assert spends[0].rho == pytest.approx(len(synth.domain_) / (2 * sigma0**2))
    for i, e in enumerate(h):
        assert spends[1 + 2 * i].rho == pytest.approx(e["epsilon"] ** 2 / 8, rel=1e-12)
        assert spends[2 + 2 * i].rho == pytest.approx(0.5 / e["sigma"] ** 2, rel=1e-12)
    assert h[-1]["anneal"] is False  # the last round never anneals
    for prev, nxt in itertools.pairwise(h[:-1]):  # rounds before the last
        factor = 0.5 if prev["anneal"] else 1.0
        assert nxt["sigma"] == pytest.approx(prev["sigma"] * factor, rel=1e-12)
        assert nxt["epsilon"] == pytest.approx(prev["epsilon"] / factor, rel=1e-12)
    if len(h) >= 2 and not h[-2]["anneal"]:
        # The last round takes what is left: at least the regular round's cost.
        assert spends[-1].rho + spends[-2].rho >= 0.5 / h[-2]["sigma"] ** 2
    # Before the last round the regular rounds used the initial scales (or annealed).
    assert h[0]["sigma"] == pytest.approx(sigma0, rel=1e-12) or len(h) == 1


@pytest.mark.parametrize(("rounds", "alpha"), [(4, 0.9), (12, 0.9), (40, 0.5)])
@pytest.mark.parametrize("change", [0.3, 1.5, 3.0, 100.0])
def test_round_logic_accounting(monkeypatch, rounds, alpha, change) -> None:
    # `change` is the per-cell model change in units of sqrt(2/pi) sigma0: small values
    # anneal, large ones do not.
    rho_total = AIM(epsilon=2.0, delta=DELTA).rho
    step = change * math.sqrt(2 / math.pi) * _sigma0(rho_total, rounds, alpha)
    monkeypatch.setattr(aim, "pgm", _fake_pgm(step))
    synth = AIM(
        epsilon=2.0, delta=DELTA, workload=PAIRS, rounds=rounds, alpha=alpha
    ).fit(DATA, DOMAIN, rng=rng(6))
    assert synth.rho_spent == pytest.approx(synth.rho, rel=1e-9)
    assert np.cumsum([s.rho for s in synth.accountant_.history]).max() <= synth.rho * (
        1 + 1e-9
    )
    _check_history(synth, rounds)
    # One estimate for the one-way marginals, one per round, one final.
    assert aim.pgm.calls["estimate"] == len(synth.history_) + 2
    assert 1 <= len(synth.history_) <= rounds


def test_small_change_anneals(monkeypatch) -> None:
    rounds = 20
    rho = AIM(epsilon=2.0, delta=DELTA).rho
    sigma0 = _sigma0(rho, rounds)
    # Change of half the expected noise L1 sqrt(2/pi) sigma n_r: both the paper's
    # rule and a looser one anneal.
    monkeypatch.setattr(aim, "pgm", _fake_pgm(0.5 * math.sqrt(2 / math.pi) * sigma0))
    synth = AIM(epsilon=2.0, delta=DELTA, workload=PAIRS, rounds=rounds).fit(
        DATA, DOMAIN, rng=rng(7)
    )
    h = synth.history_
    assert h[0]["anneal"] is True and len(h) >= 3
    assert h[1]["sigma"] == pytest.approx(sigma0 / 2, rel=1e-12)
    assert h[1]["epsilon"] == pytest.approx(2 * h[0]["epsilon"], rel=1e-12)


def test_large_change_does_not_anneal(monkeypatch) -> None:
    rounds = 20
    rho = AIM(epsilon=2.0, delta=DELTA).rho
    sigma0 = _sigma0(rho, rounds)
    monkeypatch.setattr(aim, "pgm", _fake_pgm(3.0 * math.sqrt(2 / math.pi) * sigma0))
    synth = AIM(epsilon=2.0, delta=DELTA, workload=PAIRS, rounds=rounds).fit(
        DATA, DOMAIN, rng=rng(7)
    )
    h = synth.history_
    assert not any(e["anneal"] for e in h)
    # Without annealing, the rounds after the one-way marginals use the initial
    # scales until the budget covers at most two more: 20 * (1 - 3 * 0.9 / 20) = 17.3
    # rounds' worth, so 16 regular rounds and a last one.
    assert len(h) == 17
    assert all(e["sigma"] == pytest.approx(sigma0, rel=1e-12) for e in h[:-1])
    assert h[-1]["sigma"] < sigma0


def test_anneal_threshold_is_the_papers(monkeypatch) -> None:
    rounds = 20
    rho = AIM(epsilon=2.0, delta=DELTA).rho
    sigma0 = _sigma0(rho, rounds)
    # 1.5 times the expected L1 of the noise: above the paper's threshold.
    monkeypatch.setattr(aim, "pgm", _fake_pgm(1.5 * math.sqrt(2 / math.pi) * sigma0))
    synth = AIM(epsilon=2.0, delta=DELTA, workload=PAIRS, rounds=rounds).fit(
        DATA, DOMAIN, rng=rng(7)
    )
    assert synth.history_[0]["anneal"] is False


def test_model_size_cap_excludes_large_candidates(monkeypatch) -> None:
    # Any model containing the 3-way clique is "too big"; AIM must never select it,
    # although it carries the largest weight of the workload's candidates.
    def size(cliques):
        return 1e6 if any(len(c) == 3 for c in cliques) else 0.0

    monkeypatch.setattr(aim, "pgm", _fake_pgm(1e-9, size_mb=size))
    synth = AIM(epsilon=50.0, delta=DELTA, workload=[("A", "B", "C")], rounds=12).fit(
        DATA, DOMAIN, rng=rng(8)
    )
    picks = [e["clique"] for e in synth.history_]
    assert len(picks) >= 3
    assert all(len(c) < 3 for c in picks)
    # With no cap the 3-way clique is picked first (its error and weight are largest).
    monkeypatch.setattr(aim, "pgm", _fake_pgm(1e-9))
    free = AIM(epsilon=50.0, delta=DELTA, workload=[("A", "B", "C")], rounds=12).fit(
        DATA, DOMAIN, rng=rng(8)
    )
    assert free.history_[0]["clique"] == ("A", "B", "C")


@pytest.mark.parametrize(
    ("domain", "rounds", "alpha"),
    [
        ({"A": 3, "B": 3}, 1, 0.5),  # rounds == alpha * d: nothing left after one-way
        (DOMAIN, 2, 0.9),  # rounds < alpha * d: one-way alone exceeds the budget
        (DOMAIN, 1, 0.5),
    ],
)
def test_too_few_rounds_is_a_clear_error(monkeypatch, domain, rounds, alpha) -> None:
    monkeypatch.setattr(aim, "pgm", _fake_pgm(1.0))
    synth = AIM(epsilon=1.0, delta=DELTA, rounds=rounds, alpha=alpha)
    with pytest.raises(ValueError, match="rounds"):
        synth.fit(DATA[list(domain)], domain, rng=rng(9))
