"""What training GEM's per-stratum generators as one batched network would save.

Run: ``.venv/bin/python benchmarks/bench_gem_batched.py [--strata 2,9,18]``.

A stratified GEM fit trains one generator per stratum, each for the same number of Adam
steps; on the New York sample a SEX x RAC1P cell (18 strata) costs about 14 unstratified
fits. The strata's generators have the same shapes, so their steps could run as one
network whose weights carry a leading stratum axis (batched matrix products, one
log-softmax, one marginal plan, one fused Adam update). Each stratum keeps its own
parameters and its own loss, and the summed loss gives each stratum exactly its own
gradient, so the training would be the same computation (up to the order of float
reductions); privacy is unchanged (each stratum's selections and measurements are its
own, parallel composition). It is not in the package: see the measurement below.

This times one training step of GEM at its default sizes (500 components, hidden
(256, 256), noise 64) on the employment domain, with the loss over the ten one-way
marginals and 15 three-way marginals (a fit's midpoint: 30 rounds measure up to 30):

- ``sequential``: ``S`` of the package's own generators, one step each, one after
  the other (what ``Stratified(GEM(...))`` does, stratum after stratum);
- ``batched``: the same ``S`` generators as one batched network, one step.

Both on one thread, as a grid worker runs. The batched forward pass is first checked
against the package's generator (same weights, same output). The last lines are
machine-readable (``ratio sequential_vs_batched_S<k>=<x>``).

Measured on this 2-core machine, uncontended (2026-11-25, ``--steps 10``): 6.4-6.8 ms
per stratum and step either way; ``sequential_vs_batched`` 1.005 (S = 2), 1.000
(S = 9), 0.961 (S = 18). On the CPU a step is compute-bound, not overhead-bound, so
batching the strata saves nothing here: a stratified GEM cell costs its strata's fits
because each stratum really does that arithmetic. Batching pays only where one
stratum's step leaves the device idle (a GPU), which is where it belongs.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from _timing import best_of

from dpnotes.data.employment import EMPLOYMENT_DOMAIN
from dpnotes.synth.gem import _LOG_ZERO, _adam, _Generator, _MarginalPlan
from dpnotes.synth.marginals import all_kway

K, HIDDEN, NOISE = 500, (256, 256), 64


class _Batched(torch.nn.Module):
    """``S`` generators of :class:`_Generator`'s shape with a leading stratum axis."""

    def __init__(self, singles: list[_Generator]) -> None:
        super().__init__()
        self.grid = singles[0].grid
        n_layers = len(singles[0].weights)
        self.weights = torch.nn.ParameterList(
            torch.nn.Parameter(torch.stack([g.weights[i].detach() for g in singles]))
            for i in range(n_layers)
        )
        self.biases = torch.nn.ParameterList(
            torch.nn.Parameter(torch.stack([g.biases[i].detach() for g in singles]))
            for i in range(n_layers)
        )
        self.register_buffer("spread", singles[0].spread)
        self.register_buffer("gather", singles[0].gather)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        """``z (S, K, noise)`` -> log-probabilities ``(S, K, sum(sizes))``."""
        h = z
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = torch.baddbmm(b.unsqueeze(1), h, w.transpose(1, 2))
            if i < last:
                h = torch.relu(h)
        s, k = h.shape[:2]
        padded = torch.nn.functional.pad(h, (0, 1), value=_LOG_ZERO)
        logits = padded.index_select(2, self.spread).view(s, k, *self.grid)
        logp = torch.log_softmax(logits, dim=2).reshape(s, k, -1)
        return logp.index_select(2, self.gather)


def _plan_batched(plan: _MarginalPlan, logp: torch.Tensor) -> torch.Tensor:
    """:class:`_MarginalPlan` applied to ``(S, K, L)``: ``(S, cells)``."""
    s, k = logp.shape[:2]
    probs = torch.exp(logp) / k
    out = []
    for incidence, source in plan.chunks:
        prefix = torch.exp(logp @ incidence.to(logp.dtype))
        out.append((prefix.transpose(1, 2) @ probs).reshape(s, -1)[:, source])
    return torch.cat(out, dim=1)


def _cliques() -> list[tuple[str, ...]]:
    rng = np.random.default_rng(0)
    three = all_kway(EMPLOYMENT_DOMAIN, 3)
    picks = rng.choice(len(three), size=15, replace=False)
    return [(a,) for a in EMPLOYMENT_DOMAIN] + [three[i] for i in sorted(picks)]


def _setup(s: int):
    gen = torch.Generator().manual_seed(0)
    singles = [_Generator(EMPLOYMENT_DOMAIN, NOISE, HIDDEN, gen) for _ in range(s)]
    z = torch.randn(s, K, NOISE, generator=gen)
    plan = _MarginalPlan(EMPLOYMENT_DOMAIN, _cliques())
    cells = int(plan.offsets[-1])
    targets = torch.rand(s, cells, generator=gen) / 50.0
    return singles, z, plan, targets


def _check(singles, z) -> float:
    batched = _Batched(singles)
    with torch.no_grad():
        ref = torch.stack([g(z[i]) for i, g in enumerate(singles)])
        return float((batched(z) - ref).abs().max())


def _time(s: int, steps: int, repeats: int) -> tuple[float, float, float]:
    """Return seconds per step of ``s`` strata, sequential and batched, and the gap."""
    singles, z, plan, targets = _setup(s)
    gap = _check(singles, z)
    assert gap < 1e-4, f"batched forward differs from the package's by {gap}"
    opts = [_adam(list(g.parameters()), lr=1e-3) for g in singles]
    batched = _Batched(singles)
    opt_b = _adam(list(batched.parameters()), lr=1e-3)

    def sequential() -> None:
        for _ in range(steps):
            for i, (g, opt) in enumerate(zip(singles, opts, strict=True)):
                opt.zero_grad(set_to_none=True)
                loss = (plan(g(z[i])) - targets[i]).abs().sum()
                loss.backward()
                opt.step()

    def together() -> None:
        for _ in range(steps):
            opt_b.zero_grad(set_to_none=True)
            loss = (_plan_batched(plan, batched(z)) - targets).abs().sum()
            loss.backward()
            opt_b.step()

    sequential()  # warm-up
    together()
    return best_of(sequential, repeats) / steps, best_of(together, repeats) / steps, gap


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--strata", default="2,9,18")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20, help="steps per timing")
    args = parser.parse_args()
    torch.set_num_threads(1)
    ratios = {}
    for s in (int(x) for x in args.strata.split(",")):
        t_seq, t_bat, gap = _time(s, args.steps, args.repeats)
        ratios[s] = t_seq / t_bat
        print(
            f"S={s:>2}: sequential {t_seq * 1e3:7.2f} ms per step of all strata "
            f"({t_seq / s * 1e3:.2f} ms per stratum), batched {t_bat * 1e3:7.2f} ms "
            f"(forward check: max |diff| {gap:.1e})"
        )
    for s, r in ratios.items():
        print(f"ratio sequential_vs_batched_S{s}={r:.3f}")


if __name__ == "__main__":
    main()
