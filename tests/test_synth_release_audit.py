"""Every release a synthesizer makes during a fit, checked against its own ledger.

The unit tests of MST, AIM and GEM compare each ledger (``accountant_.history``) with
closed forms of the synthesizer's parameters, and ``test_synth_mst.py`` audits the
shared measurement and the exponential mechanism as primitives. These tests watch a
real fit instead: a recording random generator notes the scale of every Gaussian draw
as it is made, and a recording exponential mechanism notes the epsilon and the
sensitivity of every selection. Then

1. each measurement entry of the ledger must equal the zCDP cost ``1 / (2 s**2)`` of a
   consecutive run of the recorded draws (every marginal has L2 sensitivity 1), each
   selection entry must equal ``e**2 / 8`` of one recorded call (the exponential
   mechanism is ``e``-DP and ``e**2 / 8``-zCDP), nothing may be drawn that the ledger
   does not hold, and the ledger must add up to the budget;
2. the selection the fit ran at its largest privacy loss is audited with the
   foundation's harness, at the recorded epsilon and sensitivity, on neighbouring
   scores that move by the score's *true* sensitivity (1 for MST's and GEM's L1 count
   errors; AIM's largest candidate weight), against the epsilon of its ledger entry;
   the smallest recorded Gaussian scale is audited the same way against its entry.

Each synthesizer also runs *broken*: its shared ``measure`` calls (the one-way
marginals; for MST also the tree's) draw noise at half the scale the ledger records, or
its selections are told half the true sensitivity. Both checks must catch both faults.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest

from dpnotes import mechanisms
from dpnotes.accounting import rho_to_epsilon
from dpnotes.audit import assert_audit_passes, audit_epsilon, audit_fails
from dpnotes.synth import AIM, GEM, MST, aim, gem, mst

DOMAIN = {"A": 3, "B": 3, "C": 2, "D": 4}
DELTA = 1e-6
AUDIT_DELTA = 1e-3
TRIALS = 400_000

# Small, fast fits (a few seconds each) that still run every kind of release.
SYNTHS = {
    "MST": (MST, mst, {}),
    "AIM": (AIM, aim, {"rounds": 12, "iters": 50, "final_iters": 50}),
    "GEM": (
        GEM,
        gem,
        {"rounds": 4, "steps_per_round": 5, "components": 20, "hidden": (16,)},
    ),
}


def make_data(n: int = 500, seed: int = 0) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    a = r.integers(0, 3, n)
    return pd.DataFrame(
        {
            "A": a,
            "B": np.where(r.random(n) < 0.8, a, r.integers(0, 3, n)),
            "C": r.integers(0, 2, n),
            "D": r.integers(0, 4, n),
        }
    )


class RecordingGenerator(np.random.Generator):
    """A numpy Generator that notes the scale of every Gaussian draw made from it."""

    def __init__(self, seed: int) -> None:
        super().__init__(np.random.PCG64(seed))
        self.scales: list[float] = []
        self.unexpected: list[str] = []

    def normal(self, loc=0.0, scale=1.0, size=None):
        scales = np.unique(np.asarray(scale, dtype=float))
        if scales.size != 1:
            self.unexpected.append("normal with several scales in one call")
        self.scales.append(float(scales[0]))
        return super().normal(loc, scale, size)

    def standard_normal(self, *args, **kwargs):
        self.unexpected.append("standard_normal")  # noise the ledger cannot see
        return super().standard_normal(*args, **kwargs)


@dataclass
class Selection:
    epsilon: float
    sensitivity: float
    candidates: int
    true_sensitivity: float


@dataclass
class Recording:
    fitted: object
    scales: list[float]
    selections: list[Selection]
    unexpected: list[str] = field(default_factory=list)


def record_fit(
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    *,
    epsilon: float = 4.0,
    noise_factor: float = 1.0,
    sensitivity_factor: float = 1.0,
) -> Recording:
    """Fit synthesizer ``name`` while recording its releases.

    ``noise_factor`` and ``sensitivity_factor`` break the fit on purpose: its
    ``measure`` calls draw with ``sigma * noise_factor``, and its selections are told
    ``sensitivity * sensitivity_factor``, while its ledger records what it meant to do.
    """
    cls, module, kwargs = SYNTHS[name]
    selections: list[Selection] = []
    pending_weights: list[float] = []

    def recording_em(scores, *, epsilon, sensitivity, rng):
        scores = np.asarray(scores, dtype=float)
        # MST's and GEM's scores are L1 errors of counts (sensitivity 1); AIM's are
        # weighted, and select_worst below notes the largest weight first.
        true = pending_weights.pop() if pending_weights else 1.0
        sens = sensitivity * sensitivity_factor
        selections.append(Selection(epsilon, sens, scores.shape[-1], true))
        return mechanisms.exponential_mechanism(
            scores, epsilon=epsilon, sensitivity=sens, rng=rng
        )

    monkeypatch.setattr(module, "exponential_mechanism", recording_em)
    if module is aim:
        real_select = aim.select_worst

        def recording_select(errors, weights, *, epsilon, rng):
            pending_weights.append(float(np.max(weights)))
            return real_select(errors, weights, epsilon=epsilon, rng=rng)

        monkeypatch.setattr(aim, "select_worst", recording_select)
    if noise_factor != 1.0:
        real_measure = module.measure

        def broken_measure(data, domain, cliques, *, sigma, rng):
            return real_measure(
                data, domain, cliques, sigma=sigma * noise_factor, rng=rng
            )

        monkeypatch.setattr(module, "measure", broken_measure)

    rng = RecordingGenerator(1)
    fitted = cls(epsilon=epsilon, delta=DELTA, **kwargs).fit(
        make_data(), DOMAIN, rng=rng
    )
    return Recording(fitted, rng.scales, selections, rng.unexpected)


def split_draws(rec: Recording) -> list[tuple[object, list[int], float]]:
    """Split the recorded draws, in order, into the ledger's measurement entries.

    Each entry takes draws until their summed zCDP cost ``1 / (2 s**2)`` reaches its
    own. Returns ``(entry, draw indices, their cost)`` per entry; draws left over
    belong to no entry.
    """
    history = rec.fitted.accountant_.history
    costs = [0.5 / s**2 for s in rec.scales]
    out, i = [], 0
    for entry in (h for h in history if "select" not in h.label):
        total, start = 0.0, i
        while i < len(costs) and total < entry.rho * (1 - 1e-9):
            total += costs[i]
            i += 1
        out.append((entry, list(range(start, i)), total))
    return out


def ledger_mismatches(rec: Recording) -> list[str]:
    """Compare the recorded releases with the fit's ledger; describe each mismatch."""
    problems = list(rec.unexpected)
    history = rec.fitted.accountant_.history
    select = [h for h in history if "select" in h.label]

    if len(select) != len(rec.selections):
        problems.append(
            f"{len(rec.selections)} selections ran, the ledger holds {len(select)}"
        )
    for entry, call in zip(select, rec.selections, strict=False):
        cost = call.epsilon**2 / 8
        if not math.isclose(cost, entry.rho, rel_tol=1e-9):
            problems.append(
                f"{entry.label}: ran at rho {cost:.6g}, ledger {entry.rho:.6g}"
            )
        if call.sensitivity < call.true_sensitivity * (1 - 1e-12):
            problems.append(
                f"{entry.label}: sensitivity {call.sensitivity:g} below the score's "
                f"{call.true_sensitivity:g}"
            )

    groups = split_draws(rec)
    for entry, _, total in groups:
        if not math.isclose(total, entry.rho, rel_tol=1e-9):
            problems.append(
                f"{entry.label}: the draws cost rho {total:.6g}, ledger {entry.rho:.6g}"
            )
    used = sum(len(draws) for _, draws, _ in groups)
    if used != len(rec.scales):
        problems.append(
            f"{len(rec.scales) - used} Gaussian draws are not in the ledger"
        )

    spent = sum(h.rho for h in history)
    if not math.isclose(spent, rec.fitted.rho, rel_tol=1e-9):
        problems.append(f"ledger total {spent:.6g} != budget {rec.fitted.rho:.6g}")
    return problems


def audit_largest_selection(rec: Recording, seed: int):
    """Audit the recorded selection with the largest claimed epsilon.

    Returns the audit result and the claim (the epsilon of its ledger entry). The
    scores are zero on one dataset; on its neighbour the first candidate's score rises
    by the true sensitivity and every other score falls by it (the worst case for
    picking the first candidate).
    """
    select = [h for h in rec.fitted.accountant_.history if "select" in h.label]
    k = int(np.argmax([h.rho for h in select]))
    call = rec.selections[k]
    claim = math.sqrt(8 * select[k].rho)
    s0 = np.zeros(call.candidates)
    s1 = np.full(call.candidates, -call.true_sensitivity)
    s1[0] = call.true_sensitivity

    def mechanism(scores, trials, r):
        picks = mechanisms.exponential_mechanism(
            np.broadcast_to(scores, (trials, scores.size)),
            epsilon=call.epsilon,
            sensitivity=call.sensitivity,
            rng=r,
        )
        return (picks == 0).astype(float)

    res = audit_epsilon(
        mechanism, s0, s1, trials=TRIALS, rng=np.random.default_rng(seed)
    )
    return res, claim


def audit_draw(rec: Recording, draw: int, rho_per_marginal: float, seed: int):
    """Audit recorded Gaussian draw ``draw`` against a claimed zCDP cost.

    The neighbours differ by one record in one cell of the marginal (L2 sensitivity
    1); the claim is ``rho_per_marginal`` converted at ``AUDIT_DELTA``.
    """
    scale = rec.scales[draw]

    def mechanism(x, trials, r):
        return x + r.normal(0.0, scale, size=trials)

    res = audit_epsilon(
        mechanism, 0.0, 1.0, trials=TRIALS, rng=np.random.default_rng(seed),
        delta=AUDIT_DELTA,
    )  # fmt: skip
    return res, rho_to_epsilon(rho_per_marginal, AUDIT_DELTA)


def audit_smallest_scale(rec: Recording, seed: int):
    """Audit the smallest recorded scale against the ledger entry that owns it.

    The draws are split into the ledger's entries by their costs, which
    :func:`ledger_mismatches` has checked for this fit; each marginal of an entry
    claims an equal share of it.
    """
    owner = {
        j: entry.rho / len(draws) for entry, draws, _ in split_draws(rec) for j in draws
    }
    d = int(np.argmin(rec.scales))
    return audit_draw(rec, d, owner[d], seed)


def audit_one_way(rec: Recording, seed: int):
    """Audit the first one-way draw against the one-way entry's share per marginal.

    Every synthesizer here releases the ``d`` one-way marginals first, at one scale,
    under one ledger entry; this holds even when the draws do not match the entry.
    """
    entry = rec.fitted.accountant_.history[0]
    assert entry.label == "one-way marginals"
    return audit_draw(rec, 0, entry.rho / len(DOMAIN), seed)


@pytest.fixture(scope="module")
def recordings() -> dict[str, Recording]:
    with pytest.MonkeyPatch.context() as mp:
        out = {}
        for name in SYNTHS:
            out[name] = record_fit(name, mp)
            mp.undo()
        return out


@pytest.mark.parametrize("name", list(SYNTHS))
def test_every_release_is_in_the_ledger(recordings, name: str) -> None:
    rec = recordings[name]
    assert ledger_mismatches(rec) == []
    # The fit did release something of each kind.
    assert len(rec.selections) >= 1 and len(rec.scales) >= len(DOMAIN)


@pytest.mark.parametrize("name", list(SYNTHS))
def test_audit_of_the_largest_releases(recordings, name: str) -> None:
    rec = recordings[name]
    res, claim = audit_largest_selection(rec, seed=10)
    assert_audit_passes(res, claim)
    # Power: with the first candidate's pick probability near 1/m, the bound is
    # close to the claim (the exact log ratio is above 0.7 of it for m >= 3).
    assert res.epsilon_lower > 0.5 * claim, (res.summary(), claim)
    for res, claim in (audit_smallest_scale(rec, seed=11), audit_one_way(rec, seed=14)):
        assert_audit_passes(res, claim)
        assert res.epsilon_lower > 0.4 * claim, (res.summary(), claim)


@pytest.mark.parametrize("name", list(SYNTHS))
def test_half_noise_is_caught(monkeypatch, name: str) -> None:
    rec = record_fit(name, monkeypatch, noise_factor=0.5)
    problems = ledger_mismatches(rec)
    # (With d = 4 and draws at 4x the cost, the first draw alone matches the one-way
    # entry, so the mismatch shows up further on; what matters is that it shows.)
    assert problems, "the ledger check missed noise drawn at half its scale"
    # Each one-way draw now costs 4x its share of the entry: the audit refutes it.
    res, claim = audit_one_way(rec, seed=12)
    assert audit_fails(res, claim), (res.summary(), claim)


@pytest.mark.parametrize("name", list(SYNTHS))
def test_understated_sensitivity_is_caught(monkeypatch, name: str) -> None:
    rec = record_fit(name, monkeypatch, sensitivity_factor=0.5)
    problems = ledger_mismatches(rec)
    assert any("sensitivity" in p for p in problems), problems
    res, claim = audit_largest_selection(rec, seed=13)
    assert audit_fails(res, claim), (res.summary(), claim)
