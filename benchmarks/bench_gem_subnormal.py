"""Why GEM's fit takes longer at small epsilon: arithmetic on subnormal floats.

Run: ``DPNOTES_DATA_DIR=... .venv/bin/python benchmarks/bench_gem_subnormal.py``.

GEM trains a fixed number of Adam steps whatever epsilon is, yet the stored paper runs
fit about twice as slowly at epsilon 0.01 as at 5. A profile shows the extra time in
``exp`` and in the marginal products of the generator's output, not in more measured
marginals. At small epsilon the noisy targets push many of the generator's
probabilities towards zero, into float32's subnormal range (below about 1.2e-38), where
x86 CPUs compute far more slowly. This script fits GEM on the New York sample's
training split:

1. at epsilon 0.01, as the package runs it;
2. at epsilon 0.01 with ``torch.set_flush_denormal(True)`` (subnormals read and written
   as zero), same seed;
3. at epsilon 5, as the package runs it (the fast reference);

and prints the times, the largest difference between the fitted component
probabilities of (1) and (2), and their workload errors. The package does not flush
subnormals (yet): doing so would change the bits of stored results, which are
recomputed only with the next change to the synthesizers.

The last lines are machine-readable (``time <name>=<s>``, ``ratio <name>=<x>``).
"""

from __future__ import annotations

import time

import numpy as np
import torch

from dpnotes.data.employment import EMPLOYMENT_DOMAIN
from dpnotes.experiments.strat_synth import split
from dpnotes.synth import GEM
from dpnotes.synth.marginals import all_kway, workload_error


def _fit(train, epsilon: float, flush: bool) -> tuple[GEM, float]:
    torch.set_flush_denormal(flush)
    try:
        start = time.perf_counter()
        model = GEM(epsilon=epsilon, delta=1e-9).fit(
            train, EMPLOYMENT_DOMAIN, rng=np.random.default_rng(0)
        )
        return model, time.perf_counter() - start
    finally:
        torch.set_flush_denormal(False)


def main() -> None:
    torch.set_num_threads(1)
    if not torch.set_flush_denormal(True):
        raise SystemExit("this CPU does not support flushing subnormals (needs SSE3).")
    train, _ = split("NY-sample")
    workload = all_kway(EMPLOYMENT_DOMAIN, 3)
    slow, t_slow = _fit(train, 0.01, flush=False)
    flushed, t_flush = _fit(train, 0.01, flush=True)
    _, t_fast = _fit(train, 5.0, flush=False)
    diff = max(
        float(np.max(np.abs(slow.probs_[a] - flushed.probs_[a]))) for a in slow.probs_
    )
    errors = {
        name: workload_error(
            train,
            model.sample(len(train), rng=np.random.default_rng(1)),
            EMPLOYMENT_DOMAIN,
            workload,
        )
        for name, model in (("default", slow), ("flushed", flushed))
    }
    print(f"GEM on the New York sample ({len(train):,} training records), one thread")
    print(f"  eps 0.01, as run:             {t_slow:7.1f} s")
    print(f"  eps 0.01, subnormals flushed: {t_flush:7.1f} s")
    print(f"  eps 5,    as run:             {t_fast:7.1f} s")
    print(f"  largest difference of fitted probabilities, flushed vs not: {diff:.2e}")
    print(
        f"  workload error at eps 0.01: {errors['default']:.5f} as run, "
        f"{errors['flushed']:.5f} flushed"
    )
    print(f"time gem_eps0.01={t_slow:.2f}")
    print(f"time gem_eps0.01_flushed={t_flush:.2f}")
    print(f"time gem_eps5={t_fast:.2f}")
    print(f"ratio gem_eps0.01_vs_flushed={t_slow / t_flush:.2f}")
    print(f"ratio gem_eps0.01_vs_eps5={t_slow / t_fast:.2f}")


if __name__ == "__main__":
    main()
