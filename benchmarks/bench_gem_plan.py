"""Where a GEM training step's time goes, and whether a cheaper marginal plan helps.

Run: ``.venv/bin/python benchmarks/bench_gem_plan.py [--cliques 0,15,30]``.

``bench_grid_floor.py`` shows that a GEM step on this CPU costs about three times the
matrix products of the generator MLP, which are the floor of GEM at its settings. This
script splits a step (one thread, GEM's default sizes: 500 components, hidden
(256, 256), noise 64; the employment domain; loss over the ten one-way marginals and
``m`` three-way ones, as after round ``m`` of a fit) into:

- ``generator``: the generator's forward and backward pass alone (the MLP, its
  per-attribute log-softmax and gathers; loss: a fixed linear function of its output);
- ``step``: the package's whole step (``_MarginalPlan``, L1 loss, backward, fused Adam);
- ``step_grouped``: the same step with :class:`GroupedPlan` in place of
  ``_MarginalPlan``.

``_MarginalPlan`` computes every marginal with two dense products: ``logp @
incidence`` (``K x L`` times ``L x U``: the log-probability of each of the ``U``
prefix cells, summed from ``L = 47`` columns of which at most two are non-zero per
prefix cell), and ``Q.T @ probs`` (``U x K`` times ``K x L``), of whose ``L`` columns
each prefix cell keeps only the ``<= 9`` values of its clique's last attribute. Both
products do mostly multiplications by zero or of columns thrown away.
:class:`GroupedPlan` computes the same proportions with gathers for the prefix (the sum
of at most two columns per prefix cell) and one product per *last attribute* (all
prefix cells whose clique ends in attribute ``a``, times ``a``'s own columns only):
``K x U x s_a`` instead of ``K x U x L``. It is checked equal to ``_MarginalPlan``
(forward and gradient, up to float32 rounding: the summation order differs).

Measured on this 2-core machine, uncontended (2026-11-25, defaults): the generator
alone 4.8-5.1 ms; the package's step 5.5 ms (m = 0), 6.6 ms (m = 15), 8.4 ms (m = 30);
the grouped plan's step 0.99x, 0.90x and 0.99x as fast, i.e. *not faster*: the dense
products on 47 columns are efficient, and the gathers' backward is a scatter-add. So
the plan is not where a GEM step's time goes: the generator is 60-90 % of it, and of the
generator's ~4.8 ms its matrix products are ~2.8 ms (``bench_grid_floor.py``), the
rest its activations, log-softmax and their gradients. A "cheaper marginal plan", which
an earlier closing note listed as a way to approach the grid's 2-hour target, is ruled
out; ``GroupedPlan`` is not in the package. The last lines are machine-readable
(``time <name>=<s>``, ``ratio <name>=<x>``).
"""

from __future__ import annotations

import argparse
import math
import random

import numpy as np
import torch
from _timing import best_of

from dpnotes.data.employment import EMPLOYMENT_DOMAIN
from dpnotes.synth.gem import _adam, _cells_of, _Generator, _MarginalPlan
from dpnotes.synth.marginals import all_kway

K, HIDDEN, NOISE = 500, (256, 256), 64


class GroupedPlan:
    """``_MarginalPlan``'s output from gathers and one product per last attribute.

    For each clique the largest attribute is split off as the last one (as in
    ``_MarginalPlan``); the other attributes' cells form the prefix. Prefix cells are
    grouped by (prefix length, last attribute). A group's prefix probabilities are
    ``exp`` of the sum of one gathered column of ``logp`` per prefix attribute (``1``
    for one-way marginals), and its marginal cells ``Q.T @ probs[:, a]``, with ``a``'s
    own columns only. One final gather puts every cell where ``_MarginalPlan`` has it.
    """

    def __init__(self, domain: dict[str, int], cliques) -> None:
        names = list(domain)
        starts = dict(
            zip(names, np.cumsum([0, *domain.values()])[:-1].tolist(), strict=True)
        )
        groups: dict[tuple[int, str], dict] = {}
        where: list[tuple[tuple[int, str], int]] = []  # per output cell
        for clique in cliques:
            shape = [domain[a] for a in clique]
            split = int(np.argmax(shape))
            last = clique[split]
            prefix = [a for j, a in enumerate(clique) if j != split]
            key = (len(prefix), last)
            g = groups.setdefault(key, {"columns": [[] for _ in prefix], "rows": 0})
            grid = _cells_of([domain[a] for a in prefix])
            n_prefix = grid.shape[1]
            for j, a in enumerate(prefix):
                g["columns"][j].extend((starts[a] + grid[j]).tolist())
            # Every cell of the clique in C order: (prefix cell, value of last).
            full = _cells_of(shape)
            u = np.zeros(full.shape[1], dtype=np.int64)
            for j, a in enumerate(clique):
                if j != split:
                    u = u * domain[a] + full[j]
            for uu, v in zip(u.tolist(), full[split].tolist(), strict=True):
                where.append((key, (g["rows"] + uu) * domain[last] + v))
            g["rows"] += n_prefix
        self.groups = []
        offset = {}
        total = 0
        for key, g in groups.items():
            m, last = key
            cols = [torch.tensor(c) for c in g["columns"]]
            s = domain[last]
            self.groups.append((m, cols, starts[last], s))
            offset[key] = total
            total += g["rows"] * s
        self.order = torch.tensor([offset[key] + i for key, i in where])

    def __call__(self, logp: torch.Tensor) -> torch.Tensor:
        probs = torch.exp(logp) / logp.shape[0]
        out = []
        for m, cols, start, s in self.groups:
            block = probs[:, start : start + s]
            if m == 0:
                out.append(block.sum(0, keepdim=True).reshape(-1))
                continue
            acc = logp.index_select(1, cols[0])
            for c in cols[1:]:
                acc = acc + logp.index_select(1, c)
            out.append((torch.exp(acc).T @ block).reshape(-1))
        return torch.cat(out).index_select(0, self.order)


def _setup(m: int, seed: int):
    gen = torch.Generator().manual_seed(seed)
    model = _Generator(EMPLOYMENT_DOMAIN, NOISE, HIDDEN, gen)
    z = torch.randn(K, NOISE, generator=gen)
    rnd = random.Random(seed)
    cliques = [(a,) for a in EMPLOYMENT_DOMAIN]
    cliques += rnd.sample(all_kway(EMPLOYMENT_DOMAIN, 3), m)
    return model, z, cliques


def _check(m: int) -> float:
    model, z, cliques = _setup(m, 1)
    dense, grouped = (
        _MarginalPlan(EMPLOYMENT_DOMAIN, cliques),
        GroupedPlan(EMPLOYMENT_DOMAIN, cliques),
    )
    logp = model(z).detach().double().requires_grad_(True)
    weights = torch.randn(int(dense.offsets[-1]), dtype=torch.float64)
    a = dense(logp)
    (ga,) = torch.autograd.grad((a * weights).sum(), logp)
    b = grouped(logp)
    (gb,) = torch.autograd.grad((b * weights).sum(), logp)
    torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-15)
    torch.testing.assert_close(ga, gb, rtol=1e-10, atol=1e-13)
    return float((a - b).detach().abs().max())


def _steppers(m: int):
    out = {}
    for name in ("generator", "step", "step_grouped"):
        model, z, cliques = _setup(m, 2)
        opt = _adam(list(model.parameters()), lr=1e-3)
        if name == "generator":
            w = torch.randn(K, sum(EMPLOYMENT_DOMAIN.values()))

            def run(model=model, z=z, w=w):
                model.zero_grad(set_to_none=True)
                (model(z) * w).sum().backward()

        else:
            plan = (_MarginalPlan if name == "step" else GroupedPlan)(
                EMPLOYMENT_DOMAIN, cliques
            )
            with torch.no_grad():
                target = plan(model(z)) + 0.01

            def run(model=model, z=z, plan=plan, target=target, opt=opt):
                opt.zero_grad(set_to_none=True)
                (plan(model(z)) - target).abs().sum().backward()
                opt.step()

        out[name] = run
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--cliques", default="0,15,30", help="three-way cliques measured"
    )
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    sizes = [int(s) for s in args.cliques.split(",")]
    for m in sizes:
        print(
            f"m = {m:2d}: grouped plan equals _MarginalPlan (float64), max |diff| "
            f"{_check(m):.1e}"
        )
    ratios = []
    print(
        f"{'m':>3} {'gen ms':>7} {'step ms':>8} {'grouped ms':>11} "
        f"{'step/gen':>9} {'grouped/gen':>12} {'step/grouped':>13}"
    )
    for m in sizes:
        fns = _steppers(m)
        for fn in fns.values():
            for _ in range(5):
                fn()
        best = {}
        # Interleaved rounds, so that a slow spell of the machine hits all three.
        for _ in range(args.repeats):
            for name, fn in fns.items():
                t = best_of(lambda fn=fn: [fn() for _ in range(args.steps)], 1)
                best[name] = min(best.get(name, math.inf), t / args.steps)
        ratios.append(best["step"] / best["step_grouped"])
        gen = best["generator"]
        print(
            f"{m:3d} {1e3 * gen:7.2f} {1e3 * best['step']:8.2f} "
            f"{1e3 * best['step_grouped']:11.2f} {best['step'] / gen:9.2f} "
            f"{best['step_grouped'] / gen:12.2f} {ratios[-1]:13.2f}"
        )
        print(f"time step_m{m}={best['step']:.5f}")
        print(f"time step_grouped_m{m}={best['step_grouped']:.5f}")
    print(f"ratio step_vs_grouped_mean={float(np.mean(ratios)):.3f}")


if __name__ == "__main__":
    main()
