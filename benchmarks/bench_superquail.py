"""Fit times of MST, SuperQUAIL, FSQ-Bal and FSQ-FNR on New Mexico ACSPublicCoverage.

Run: ``DPNOTES_DATA_DIR=... .venv/bin/python benchmarks/bench_superquail.py``
(``--epsilon`` the budget, default e^2; ``--seed`` the table's seed).

The data are the paper's ACSPublicCoverage scenario (New Mexico 2018, its appendix
Table 5) through :func:`dpnotes.data.spending.load_spending_task`, training split
only (80 %, 6,154 rows); the groups are white / black / other (RAC1P), protected
black. Every method runs at its defaults (``alpha = 0.7`` at ``epsilon <= e^2``,
``gamma = 0.5``, ``beta = 3``; MST at 3,000 iterations; SAGE with 2,048 explained rows
and a 128-row background), ``delta = 1e-9``, one thread.

Where the time goes. A cold MST fit on these 16 attributes used to spend most of its
time compiling JAX programs: its select step read the 120 pair marginals of the one-way
model through mbi's per-clique projection, one compilation each (about 25 s of a 30 s
fit). That model makes the attributes independent, so the package now forms each pair's
marginal as the outer product of two one-way marginals
(:func:`dpnotes.synth.mst.independent_pair_marginals`), with the same trees and samples;
section 3 below times both ways on the same model. What is left of a fit is the final
estimate (it compiles one program per clique structure, a few seconds) and, in
SuperQUAIL, SAGE. Within a process the compiled programs are reused, and across
processes JAX's persistent compilation cache (which the experiment runner turns on in
its workers) carries them over.

This script measures:

1. the table: after one MST fit that compiles (or, with a filled ``--cache``, loads)
   the one-way programs, one fit of each method at ``--seed`` in this process, with
   the stages of each fit and its ratio to MST;
2. with ``--fresh``, first: one SuperQUAIL fit in a fresh process with an empty
   persistent cache (what a first run pays), seed 0, then one in another fresh
   process with that cache, seed 1 (what a later worker pays);
3. MST's select step on the one-way model of SQ's MST share: the 120 pair marginals
   through mbi's projection (the former path, compiling) against the outer products.

JAX's persistent cache keeps only programs that took at least a second to compile
(``jax_persistent_cache_min_compile_time_secs``); each of MST's projections takes
less, so with the runner's settings a fresh process compiles them all again. The
script sets that threshold to 0.

The last lines are machine-readable (``time <name>=<s>``, ``ratio <name>=<x>``); the
ratios are the meaningful output on a noisy machine.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time

DELTA = 1e-9


def _setup(cache_dir: str) -> None:
    # As the runner's workers: one thread, and the persistent cache on before the
    # first compilation.
    from dpnotes.lab.runner import one_thread_each

    one_thread_each()
    import jax

    jax.config.update("jax_compilation_cache_dir", cache_dir)
    jax.config.update("jax_enable_compilation_cache", True)
    # JAX stores only programs that took at least a second to compile; MST's many
    # small projections each take less, so keep them all.
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def _task():
    from dpnotes.data.spending import load_spending_task

    return load_spending_task("ACSPublicCoverage", "NM")


def _fair(task, fairness: str) -> dict:
    groups = dict(task.groups)
    return {
        "fairness": fairness,
        "sensitive": task.sensitive,
        "protected": groups["black"][0],
        "groups": groups,
        "privileged": "white",
    }


def _fit(method: str, task, epsilon: float, seed: int) -> tuple[float, dict]:
    import numpy as np

    from dpnotes.importance.superquail import SuperQUAIL
    from dpnotes.synth.mst import MST

    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    if method == "MST":
        MST(epsilon=epsilon, delta=DELTA).fit(task.train, task.domain, rng=rng)
        return time.perf_counter() - start, {}
    fair = {} if method == "SQ" else _fair(task, method.split("-")[1].lower())
    model = SuperQUAIL(epsilon=epsilon, delta=DELTA, **fair)
    model.fit(task.train, task.domain, target=task.target, rng=rng)
    return time.perf_counter() - start, dict(model.seconds_)


def _select_step(task, epsilon: float, seed: int) -> tuple[float, float, float]:
    """Time the pair marginals of MST's one-way model both ways; their largest gap."""
    import itertools

    import numpy as np

    from dpnotes.synth import pgm
    from dpnotes.synth.base import measure
    from dpnotes.synth.mst import MST, compress_domain, independent_pair_marginals

    mst = MST(epsilon=epsilon, delta=DELTA)
    d = len(task.domain)
    sigma = np.sqrt(d / (2.0 * mst.rho / 3.0))  # as MST's one-way step
    rng = np.random.default_rng(seed)
    oneway = measure(task.train, task.domain, [(a,) for a in task.domain],
                     sigma=sigma, rng=rng)  # fmt: skip
    comp, measured = compress_domain(task.domain, oneway, sigma=sigma, threshold=3.0)
    log = pgm.MeasurementLog(comp.domain)
    for clique, y, s, query in measured:
        log.add(clique, y, s, query)
    model = pgm.estimate(log, iters=mst.iters // 3)
    pairs = list(itertools.combinations(comp.domain, 2))
    start = time.perf_counter()
    products = independent_pair_marginals(model, comp.domain, pairs)
    fast = time.perf_counter() - start
    start = time.perf_counter()
    projected = {p: np.asarray(model.project(p).datavector()) for p in pairs}
    slow = time.perf_counter() - start
    gap = max(float(np.abs(products[p] - projected[p]).max()) for p in pairs)
    return slow, fast, gap


def _child(cache_dir: str, epsilon: float, seed: int) -> None:
    _setup(cache_dir)
    task = _task()
    seconds, stages = _fit("SQ", task, epsilon, seed)
    print(json.dumps({"seconds": seconds, "stages": stages}))


def _run_child(cache_dir: str, epsilon: float, seed: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", cache_dir, "--epsilon", str(epsilon),
         "--seed", str(seed)],
        check=True,
        capture_output=True,
        text=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilon", type=float, default=math.exp(2))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--cache",
        default=None,
        help="JAX cache folder (default: a fresh temporary one)",
    )
    parser.add_argument(
        "--fresh", action="store_true", help="also time SQ in two fresh processes"
    )
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        _child(args.child, args.epsilon, args.seed)
        return

    with tempfile.TemporaryDirectory() as tmp:
        cache = args.cache or tmp
        fresh = {}
        if args.fresh:
            fresh["fill"] = _run_child(cache, args.epsilon, 0)
            fresh["warm"] = _run_child(cache, args.epsilon, 1)
        for name, res in fresh.items():
            parts = ", ".join(f"{k} {v:.1f} s" for k, v in res["stages"].items())
            print(
                f"SQ fit, fresh process, {name} cache: {res['seconds']:.1f} s ({parts})"
            )

        _setup(cache)
        from dpnotes.importance.superquail import paper_alpha

        task = _task()
        print(
            f"New Mexico ACSPublicCoverage: {len(task.train):,} training rows, "
            f"{len(task.domain)} columns; epsilon {args.epsilon:.3g}, delta {DELTA:g}"
        )
        # One untimed MST fit at each budget MST gets here (all of epsilon alone, its
        # share gamma * alpha * epsilon inside SQ and FSQ): each compiles (or loads)
        # the one-way programs of its compressed domain.
        share = paper_alpha(args.epsilon) * 0.5 * args.epsilon
        untimed = sum(_fit("MST", task, e, 0)[0] for e in (args.epsilon, share))
        print(f"untimed MST fits (compile or load the programs): {untimed:.1f} s")
        rows = {}
        for method in ("MST", "SQ", "FSQ-Bal", "FSQ-FNR"):
            rows[method] = _fit(method, task, args.epsilon, args.seed)
        # The fits above never project a pair, so these projections compile as a cold
        # fit's did.
        slow, fast, gap = _select_step(task, share, args.seed)

    print(f"\n{'method':<8} {'fit (s)':>8} {'x MST':>7}  stages")
    base = rows["MST"][0]
    for method, (seconds, stages) in rows.items():
        parts = ", ".join(f"{k} {v:.1f}" for k, v in stages.items())
        print(f"{method:<8} {seconds:8.1f} {seconds / base:7.2f}  {parts}")
    print(
        f"\nMST select step, {len(task.domain) * (len(task.domain) - 1) // 2} pair "
        f"marginals of the one-way model: mbi projection {slow:.2f} s, outer products "
        f"{fast:.3f} s (largest difference {gap:.1e} of a count)"
    )
    print()
    print(f"time mst_first_in_process={untimed:.3f}")
    print(f"time select_pairs_projection={slow:.3f}")
    print(f"time select_pairs_products={fast:.3f}")
    for name, res in fresh.items():
        print(f"time sq_fresh_process_{name}={res['seconds']:.3f}")
    for method, (seconds, _) in rows.items():
        key = method.lower().replace("-", "_")
        print(f"time {key}={seconds:.3f}")
    for method, (seconds, _) in rows.items():
        if method != "MST":
            key = method.lower().replace("-", "_")
            print(f"ratio {key}_over_mst={seconds / base:.3f}")
    print(f"ratio select_pairs_projection_over_products={slow / fast:.1f}")
    if fresh:
        ratio = fresh["fill"]["seconds"] / fresh["warm"]["seconds"]
        print(f"ratio sq_fresh_fill_over_warm={ratio:.3f}")


if __name__ == "__main__":
    main()
