"""Where MST's and AIM's time goes, and what JAX's persistent compilation cache saves.

Run: ``DPNOTES_DATA_DIR=... .venv/bin/python benchmarks/bench_compile_cache.py``
(``--cells MST:SEX:1.0,AIM:RAC1P:0.1`` picks the fits, ``--seeds 0,1`` the two seeds).

mbi compiles one program per clique structure. Within a process, equal structures
reuse the compiled program (``dpnotes.synth.pgm`` keeps measurements canonical for
that); across processes nothing is reused, and the paper grid runs in several
processes (two workers per run, one run per data set and seed). JAX's persistent
compilation cache carries compiled programs from one process to the next. The package
leaves it as the caller set it (off while no cache folder is set, as mbi advises); the
experiment runner turns it on in its workers, in the run cache. This measures what
that saves, turning the cache on through JAX's own settings as the runner does.

Each fit runs in a fresh process on one thread (as a grid worker does) on the New
York sample's fixed training split, and reports, from JAX's own monitoring events:

- the fit's wall time, and how much of it went to tracing to a jaxpr, lowering to
  MLIR and backend compilation (only the last is what the persistent cache can skip);
- persistent-cache hits and misses.

Three runs of the same cells:

1. ``cold``: seed ``b`` without the cache (what the grid does now);
2. ``fill``: seed ``a`` with an empty cache directory, filling it;
3. ``warm``: seed ``b`` with the cache that seed ``a`` filled (a later worker or run).

Two fits are a small sample of the programs a grid compiles, and a cache only pays
where structures recur, which is often not between two single fits. The grid itself
is the better measurement (New York sample, MST and AIM, every stratification,
epsilon in {0.01, 0.1, 0.5, 1}, seed 1, ``--jobs 2``; 32 cells)::

    SEL="--only dataset=NY-sample --only synthesizer=MST --only synthesizer=AIM \
         --only epsilon=0.01 --only epsilon=0.1 --only epsilon=0.5 --only epsilon=1.0"
    DPNOTES_RESULTS_DIR=/tmp/cold DPNOTES_COMPILATION_CACHE=0 \
        python -m dpnotes run strat_synth --profile paper --jobs 2 $SEL --only seed=1
    DPNOTES_RESULTS_DIR=/tmp/warm python -m dpnotes run strat_synth --profile paper \
        --jobs 2 $SEL --only seed=0    # fills /tmp/warm/.run_cache/jax
    DPNOTES_RESULTS_DIR=/tmp/warm python -m dpnotes run strat_synth --profile paper \
        --jobs 2 $SEL --only seed=1

Measured on this 2-core machine (2026-11-25): the cold run took 676 s and 722 s (two
runs), the warm one 580 s; AIM's fit time summed over the cells went from 887 s and
978 s to 736 s (the stratified AIM cells gained most, up to 1.6x: their many small
strata repeat structures), MST's stayed at 300-313 s; all three tables are equal to
the stored paper cells except the fit times. The cache took 87 MB.

Compiling faster instead of less often (XLA options) was tried too, and not adopted:
see ``benchmarks/README.md``.

``warm`` and ``cold`` must sample the same records (a digest of a sample drawn with
a fixed generator is compared): the cache changes no result. The last lines are
machine-readable (``time <name>=<s>``, ``ratio <name>=<x>``); the ratios are the
meaningful output on a noisy machine.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

_EVENTS = {
    "trace": "/jax/core/compile/jaxpr_trace_duration",
    "lower": "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "compile": "/jax/core/compile/backend_compile_duration",
}


def _child(cells: list[str], seed: int, cache_dir: str | None) -> None:
    # As the runner's workers: one thread, set before JAX starts its backend.
    from dpnotes.lab.runner import one_thread_each

    one_thread_each()
    import jax
    import numpy as np

    from dpnotes.data.employment import (
        EMPLOYMENT_DOMAIN,
        EMPLOYMENT_GROUPINGS,
        split_employment,
    )
    from dpnotes.synth import AIM, MST, Stratified, stratum_weights

    # The "cache" runs turn the persistent cache on before the first compilation, as
    # the experiment runner does in its workers.
    if cache_dir is not None:
        jax.config.update("jax_compilation_cache_dir", cache_dir)
        jax.config.update("jax_enable_compilation_cache", True)
    else:
        jax.config.update("jax_enable_compilation_cache", False)

    totals = {k: 0.0 for k in _EVENTS}
    counts = {"hits": 0, "misses": 0}
    names = {v: k for k, v in _EVENTS.items()}

    def on_duration(event: str, duration: float, **kwargs) -> None:
        if event in names:
            totals[names[event]] += duration

    def on_event(event: str, **kwargs) -> None:
        if event == "/jax/compilation_cache/cache_hits":
            counts["hits"] += 1
        elif event == "/jax/compilation_cache/cache_misses":
            counts["misses"] += 1

    jax.monitoring.register_event_duration_secs_listener(on_duration)
    jax.monitoring.register_event_listener(on_event)

    train, test = split_employment("NY-sample")
    synthesizers = {"MST": MST, "AIM": AIM}
    fits = []
    for spec in cells:
        name, strata, eps = spec.split(":")
        base = synthesizers[name](epsilon=float(eps), delta=1e-9)
        before = dict(totals)
        start = time.perf_counter()
        if strata == "vanilla":
            model = base.fit(train, EMPLOYMENT_DOMAIN, rng=np.random.default_rng(seed))
        else:
            by = EMPLOYMENT_GROUPINGS[strata]
            weights = stratum_weights(test, EMPLOYMENT_DOMAIN, by)
            model = Stratified(base, by, weights).fit(
                train, EMPLOYMENT_DOMAIN, rng=np.random.default_rng(seed)
            )
        wall = time.perf_counter() - start
        sample = model.sample(2000, rng=np.random.default_rng(12345))
        digest = hashlib.sha256(
            sample[list(EMPLOYMENT_DOMAIN)].to_numpy().tobytes()
        ).hexdigest()[:16]
        fits.append(
            {
                "cell": spec,
                "wall": wall,
                **{k: totals[k] - before[k] for k in totals},
                "digest": digest,
            }
        )
    print("RESULT " + json.dumps({"fits": fits, **counts}))


def _run(cells: list[str], seed: int, cache_dir: str | None) -> dict:
    args = [sys.executable, __file__, "--child", "--cells", ",".join(cells)]
    args += ["--seed", str(seed)]
    if cache_dir is not None:
        args += ["--cache-dir", cache_dir]
    out = subprocess.run(args, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"child failed:\n{out.stderr[-3000:]}")
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def _report(label: str, result: dict) -> dict[str, float]:
    tot = {k: sum(f[k] for f in result["fits"]) for k in ("wall", *_EVENTS)}
    print(
        f"{label:>5}: wall {tot['wall']:7.1f} s  trace {tot['trace']:6.1f}  "
        f"lower {tot['lower']:6.1f}  backend compile {tot['compile']:6.1f}  "
        f"cache hits {result['hits']}, misses {result['misses']}"
    )
    for f in result["fits"]:
        print(
            f"       {f['cell']:<22} {f['wall']:7.1f} s  (compile {f['compile']:.1f},"
            f" trace+lower {f['trace'] + f['lower']:.1f})  sample {f['digest']}"
        )
    return tot


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cells", default="MST:SEX:1.0,AIM:RAC1P:0.1")
    parser.add_argument("--seeds", default="0,1", help="seed a (fills), seed b")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    cells = args.cells.split(",")
    if args.child:
        _child(cells, args.seed, args.cache_dir)
        return
    seed_a, seed_b = (int(s) for s in args.seeds.split(","))
    with tempfile.TemporaryDirectory() as cache:
        cold = _run(cells, seed_b, None)
        fill = _run(cells, seed_a, cache)
        warm = _run(cells, seed_b, cache)
        size = sum(
            os.path.getsize(os.path.join(d, f))
            for d, _, files in os.walk(cache)
            for f in files
        )
    print(f"cells {cells}; seeds: fill {seed_a}, cold and warm {seed_b}")
    t_cold = _report("cold", cold)
    t_fill = _report("fill", fill)
    t_warm = _report("warm", warm)
    same = [
        c["digest"] == w["digest"]
        for c, w in zip(cold["fits"], warm["fits"], strict=True)
    ]
    print(f"cache directory after fill and warm: {size / 1e6:.1f} MB")
    print(f"warm samples the same records as cold: {all(same)}")
    if not all(same):
        raise SystemExit("the persistent cache changed a result")
    print(f"time cold={t_cold['wall']:.2f}")
    print(f"time fill={t_fill['wall']:.2f}")
    print(f"time warm={t_warm['wall']:.2f}")
    print(f"ratio compile_share_cold={t_cold['compile'] / t_cold['wall']:.3f}")
    print(f"ratio cold_vs_warm={t_cold['wall'] / t_warm['wall']:.3f}")
    print(f"ratio cold_vs_fill={t_cold['wall'] / t_fill['wall']:.3f}")


if __name__ == "__main__":
    main()
