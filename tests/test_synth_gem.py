"""Tests for dpnotes.synth.gem: checks, accounting, determinism, recovery, layout."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd
import pytest
import torch

from dpnotes.synth.gem import GEM, MarginalPlan, mixture_marginals
from dpnotes.synth.marginals import all_kway, marginal, workload_error

DOMAIN = {"A": 3, "B": 3, "C": 2, "E": 2}
# A small, fast configuration for the tests that do not measure quality.
FAST = {"rounds": 3, "components": 16, "hidden": (16,), "noise_dim": 8}
FAST_STEPS = {**FAST, "steps_per_round": 5}


def dependent_data(n: int, seed: int = 0) -> pd.DataFrame:
    """Four attributes with strong dependence (B follows A, C follows B, E both)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (a + (rng.random(n) < 0.2)) % 3
    c = (rng.random(n) < np.where(b == 0, 0.8, 0.2)).astype(np.int64)
    e = (rng.random(n) < np.where(a == c, 0.9, 0.3)).astype(np.int64)
    return pd.DataFrame({"A": a, "B": b, "C": c, "E": e})


def max_tv(model: GEM, df: pd.DataFrame) -> float:
    """Largest total-variation distance between model and data workload marginals."""
    return max(
        0.5 * np.abs(p - marginal(df, DOMAIN, cl) / len(df)).sum()
        for cl, p in model.answers().items()
    )


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    return dependent_data(3000)


@pytest.fixture(scope="module")
def fitted(data: pd.DataFrame) -> GEM:
    return GEM(epsilon=1.0, delta=1e-6, **FAST_STEPS).fit(
        data, DOMAIN, rng=np.random.default_rng(0)
    )


# --- input validation -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"epsilon": 0.0}, ValueError),
        ({"epsilon": -1.0}, ValueError),
        ({"delta": 0.0}, ValueError),
        ({"delta": 1.0}, ValueError),
        ({"rounds": 0}, ValueError),
        ({"rounds": 2.5}, TypeError),
        ({"alpha": 0.0}, ValueError),
        ({"alpha": 1.0}, ValueError),
        ({"alpha": 1.5}, ValueError),
        ({"components": 0}, ValueError),
        ({"hidden": (16, 0)}, ValueError),
        ({"hidden": 16}, TypeError),
        ({"noise_dim": 0}, ValueError),
        ({"lr": 0.0}, ValueError),
        ({"steps_per_round": 0}, ValueError),
        ({"stop_factor": -0.1}, ValueError),
        ({"stop_factor": 1.0}, ValueError),
        ({"device": "no-such-device"}, ValueError),
        ({"workload": []}, ValueError),
        ({"workload": [()]}, ValueError),
        ({"workload": ["AB"]}, TypeError),
        ({"workload": "AB"}, TypeError),
        ({"epsilon": 1e-300}, ValueError),
    ],
)
def test_bad_parameters(kwargs: dict, error: type) -> None:
    params = {"epsilon": 1.0, "delta": 1e-6, **kwargs}
    with pytest.raises(error):
        GEM(**params)


def test_bad_data(data: pd.DataFrame) -> None:
    gem = GEM(epsilon=1.0, delta=1e-6, **FAST_STEPS)
    rng = np.random.default_rng(0)
    outside = data.copy()
    outside.loc[0, "A"] = 3
    with pytest.raises(ValueError, match=r"outside|domain|range"):
        gem.fit(outside, DOMAIN, rng=rng)
    with pytest.raises(ValueError, match="missing"):
        gem.fit(data.drop(columns="E"), DOMAIN, rng=rng)
    with pytest.raises(ValueError, match="extra"):
        gem.fit(data.assign(F=0), DOMAIN, rng=rng)
    with pytest.raises(ValueError, match="unknown attribute"):
        GEM(epsilon=1.0, delta=1e-6, workload=[("A", "Z")], **FAST_STEPS).fit(
            data, DOMAIN, rng=rng
        )
    with pytest.raises(TypeError):
        gem.fit(data, DOMAIN, rng=0)


def test_sample_checks(fitted: GEM) -> None:
    with pytest.raises(RuntimeError, match="not fitted"):
        GEM(epsilon=1.0, delta=1e-6).sample(5, rng=np.random.default_rng(0))
    with pytest.raises(RuntimeError, match="not fitted"):
        GEM(epsilon=1.0, delta=1e-6).answers()
    for n in (0, -3):
        with pytest.raises(ValueError):
            fitted.sample(n, rng=np.random.default_rng(0))


def test_mixture_marginals_checks() -> None:
    p = {"A": np.full((2, 3), 1 / 3), "B": np.full((2, 3), 1 / 3)}
    with pytest.raises(ValueError, match="lacks"):
        mixture_marginals(p, DOMAIN, [("A", "B")])
    p.update(C=np.full((2, 3), 1 / 3), E=np.full((2, 2), 0.5))
    with pytest.raises(ValueError, match="shape"):
        mixture_marginals(p, DOMAIN, [("A", "C")])


# --- accounting -----------------------------------------------------------------------


def test_accounting(data: pd.DataFrame) -> None:
    rounds, alpha = 4, 0.3
    gem = GEM(epsilon=2.0, delta=1e-6, alpha=alpha, **{**FAST_STEPS, "rounds": rounds})
    gem.fit(data, DOMAIN, rng=np.random.default_rng(3))
    assert gem.rho * (1 - 1e-9) <= gem.rho_spent <= gem.rho * (1 + 1e-9)
    history = gem.accountant_.history
    assert len(history) == 1 + 2 * rounds
    assert history[0].label == "one-way marginals"
    assert all(h.label.startswith("select") for h in history[1::2])
    assert all(h.label.startswith("measure") for h in history[2::2])
    # Independent reference: the closed forms of the class docstring.
    rho_t = gem.rho / (rounds + 1)
    assert history[0].rho == pytest.approx(rho_t, rel=1e-12)
    assert len(gem.history_) == rounds
    for h, sel, mea in zip(gem.history_, history[1::2], history[2::2], strict=True):
        assert h["epsilon"] == pytest.approx(math.sqrt(8 * alpha * rho_t), rel=1e-12)
        assert h["sigma"] == pytest.approx(
            math.sqrt(1 / (2 * (1 - alpha) * rho_t)), rel=1e-12
        )
        assert sel.rho == pytest.approx(h["epsilon"] ** 2 / 8, rel=1e-12)
        assert mea.rho == pytest.approx(1 / (2 * h["sigma"] ** 2), rel=1e-12)
        assert h["clique"] in all_kway(DOMAIN, 3)


def test_repeated_measurements_are_combined(data: pd.DataFrame) -> None:
    # With a one-clique workload every round measures the same clique; the
    # measurements are combined by inverse variance (variance sigma**2 / rounds).
    gem = GEM(epsilon=1.0, delta=1e-6, workload=[("B", "A")], **FAST_STEPS)
    gem.fit(data, DOMAIN, rng=np.random.default_rng(4))
    assert [h["clique"] for h in gem.history_] == [("A", "B")] * FAST["rounds"]
    assert set(gem.measurements_) == {("A",), ("B",), ("C",), ("E",), ("A", "B")}
    y, var = gem.measurements_[("A", "B")]
    assert var == pytest.approx(gem.history_[0]["sigma"] ** 2 / FAST["rounds"])
    assert y.shape == (9,)


def test_early_stopping_ends_rounds_sooner(data: pd.DataFrame) -> None:
    # Without early stopping every round takes all its steps; with the reference
    # code's threshold a round ends once every measured cell is within half the
    # moving average of the post-measurement worst error, which happens within 60.
    params = {**FAST, "steps_per_round": 60}
    full = GEM(epsilon=1.0, delta=1e-6, **params)
    full.fit(data, DOMAIN, rng=np.random.default_rng(3))
    assert full.steps_ == [60] * (FAST["rounds"] + 1)
    early = GEM(epsilon=1.0, delta=1e-6, stop_factor=0.5, **params)
    early.fit(data, DOMAIN, rng=np.random.default_rng(3))
    assert len(early.steps_) == FAST["rounds"] + 1
    assert sum(early.steps_) < sum(full.steps_)
    assert all(0 <= s <= 60 for s in early.steps_)


# --- determinism and global state -----------------------------------------------------


def test_determinism(data: pd.DataFrame) -> None:
    def run(fit_seed: int, sample_seed: int) -> pd.DataFrame:
        gem = GEM(epsilon=1.0, delta=1e-6, **FAST_STEPS)
        gem.fit(data, DOMAIN, rng=np.random.default_rng(fit_seed))
        return gem.sample(500, rng=np.random.default_rng(sample_seed))

    torch_state = torch.get_rng_state()
    first = run(7, 8)
    assert torch.equal(torch.get_rng_state(), torch_state), "global torch RNG used"
    pd.testing.assert_frame_equal(first, run(7, 8))
    assert not first.equals(run(9, 8))
    assert not first.equals(run(7, 9))
    assert list(first.columns) == list(DOMAIN)
    assert all(first[a].dtype == np.int64 for a in DOMAIN)
    for a, s in DOMAIN.items():
        assert first[a].between(0, s - 1).all()


def test_pickle_round_trip(fitted: GEM) -> None:
    clone = pickle.loads(pickle.dumps(fitted))
    pd.testing.assert_frame_equal(
        clone.sample(100, rng=np.random.default_rng(1)),
        fitted.sample(100, rng=np.random.default_rng(1)),
    )
    assert next(clone.model_.parameters()).device.type == "cpu"


# --- marginal layout and sampling -----------------------------------------------------


def test_mixture_marginals_by_hand() -> None:
    rng = np.random.default_rng(0)
    domain = {"A": 2, "B": 3, "C": 2}
    probs = {a: rng.dirichlet(np.ones(s), size=3) for a, s in domain.items()}
    got = mixture_marginals(probs, domain, [("C", "A"), ("B",), ("A", "B", "C")])
    assert list(got) == [("A", "C"), ("B",), ("A", "B", "C")]
    by_hand = np.mean([np.outer(probs["A"][k], probs["C"][k]) for k in range(3)], 0)
    np.testing.assert_allclose(got[("A", "C")], by_hand.ravel(), atol=1e-12)
    np.testing.assert_allclose(got[("B",)], probs["B"].mean(0), atol=1e-12)
    cell = np.mean(
        [probs["A"][k][1] * probs["B"][k][2] * probs["C"][k][0] for k in range(3)]
    )
    # Cell (A=1, B=2, C=0) is index 1*6 + 2*2 + 0 in C order.
    assert got[("A", "B", "C")][10] == pytest.approx(cell, abs=1e-12)


def test_mixture_of_point_masses_matches_marginal() -> None:
    # Components that are point masses at the rows of a table: the mixture's marginal
    # is the table's marginal divided by its size, cell by cell.
    df = dependent_data(40, seed=5)
    probs = {a: np.eye(s)[df[a].to_numpy()] for a, s in DOMAIN.items()}
    cliques = [(a,) for a in DOMAIN] + all_kway(DOMAIN, 2) + all_kway(DOMAIN, 4)
    got = mixture_marginals(probs, DOMAIN, cliques)
    for cl in cliques:
        np.testing.assert_allclose(got[cl], marginal(df, DOMAIN, cl) / 40, atol=1e-12)


def test_training_plan_matches_fitted_answers(fitted: GEM) -> None:
    cliques = all_kway(DOMAIN, 3)
    plan = MarginalPlan(DOMAIN, cliques)
    with torch.no_grad():
        flat = plan(fitted.model_(fitted.z_)).numpy()
    answers = fitted.answers(cliques)
    for i, cl in enumerate(cliques):
        np.testing.assert_allclose(
            flat[plan.offsets[i] : plan.offsets[i + 1]], answers[cl], atol=1e-5
        )
        assert answers[cl].sum() == pytest.approx(1.0, abs=1e-9)


def test_chunked_plan_matches_single_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    probs = {a: rng.dirichlet(np.ones(s), size=5) for a, s in DOMAIN.items()}
    cliques = all_kway(DOMAIN, 2) + all_kway(DOMAIN, 3)
    whole = mixture_marginals(probs, DOMAIN, cliques)
    monkeypatch.setattr(MarginalPlan, "max_cells", 10)
    chunked = mixture_marginals(probs, DOMAIN, cliques)
    assert len(MarginalPlan(DOMAIN, cliques).chunks) > 3
    for cl in cliques:
        np.testing.assert_allclose(chunked[cl], whole[cl], atol=1e-12)


def test_samples_follow_the_model(fitted: GEM) -> None:
    n = 200_000
    syn = fitted.sample(n, rng=np.random.default_rng(11))
    for cl, p in fitted.answers(all_kway(DOMAIN, 2)).items():
        # Sampling error of a 9-cell marginal at n = 200k: L1 about 0.005.
        assert np.abs(marginal(syn, DOMAIN, cl) / n - p).sum() < 0.02


# --- statistical behaviour ------------------------------------------------------------


def test_large_budget_recovers_the_workload() -> None:
    df = dependent_data(3000, seed=1)
    config = {
        "rounds": 8,
        "components": 64,
        "hidden": (64,),
        "noise_dim": 16,
        "lr": 3e-3,
    }
    big = GEM(epsilon=1e5, delta=1e-9, **config).fit(
        df, DOMAIN, rng=np.random.default_rng(2)
    )
    # At this budget the noise is negligible: every workload marginal is fitted to
    # within 0.05 total variation, and n_hat is the true count.
    assert max_tv(big, df) < 0.05
    assert abs(big.n_hat_ - len(df)) < 1.0
    syn = big.sample(50_000, rng=np.random.default_rng(3))
    # Sampling adds about 0.01 of L1 error per 3-way marginal at 50k rows.
    assert workload_error(df, syn, DOMAIN) < 0.06

    tiny = GEM(epsilon=0.01, delta=1e-9, **config).fit(
        df, DOMAIN, rng=np.random.default_rng(2)
    )
    assert max_tv(tiny, df) > 0.2
    syn_tiny = tiny.sample(50_000, rng=np.random.default_rng(3))
    assert workload_error(df, syn_tiny, DOMAIN) > 4 * workload_error(df, syn, DOMAIN)


def test_empty_table_releases_noise_only() -> None:
    empty = pd.DataFrame({a: np.zeros(0, dtype=np.int64) for a in DOMAIN})
    gem = GEM(epsilon=1.0, delta=1e-6, **FAST_STEPS)
    gem.fit(empty, DOMAIN, rng=np.random.default_rng(0))
    assert gem.n_hat_ >= 1.0
    assert gem.rho_spent == pytest.approx(gem.rho, rel=1e-9)
    out = gem.sample(25, rng=np.random.default_rng(1))
    assert out.shape == (25, len(DOMAIN))
    for a, s in DOMAIN.items():
        assert out[a].between(0, s - 1).all()


@pytest.mark.gpu
def test_fit_on_cuda(data: pd.DataFrame) -> None:
    gem = GEM(epsilon=1.0, delta=1e-6, device="cuda", **FAST_STEPS)
    gem.fit(data, DOMAIN, rng=np.random.default_rng(0))
    assert next(gem.model_.parameters()).device.type == "cpu"
    assert gem.sample(10, rng=np.random.default_rng(0)).shape == (10, len(DOMAIN))
