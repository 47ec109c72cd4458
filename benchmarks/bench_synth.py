"""Speed of the synthesizers (issue: MST on New Mexico under 10 s once warm).

Run: ``DPNOTES_DATA_DIR=... .venv/bin/python benchmarks/bench_synth.py [--skip-gem]``.

1. MST on New Mexico ACSEmployment (15,458 records, ten columns): a cold fit (mbi
   compiles one program per clique structure), then warm refits with the same seed (the
   compiled structures are reused), and the speed-up of warm over cold.
2. The estimator itself: the package's single jitted mirror-descent program against
   mbi's ``MirrorDescent().estimate`` (whose first and last steps run eagerly), on the
   same measurements, each on a fresh clique structure.
3. One vanilla fit of each synthesizer at epsilon 1 on the New York sample, and one
   stratified fit per stratification (the per-synthesizer fit time table).

Absolute times depend on the machine; the ratios are the meaningful output. The last
lines are machine-readable (``time <name>=<s>``, ``ratio <name>=<x>``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _timing import best_of

from dpnotes.data.employment import EMPLOYMENT_DOMAIN, load_employment
from dpnotes.synth import AIM, MST, Stratified, pgm, stratum_weights
from dpnotes.synth.marginals import marginal


def _mst_nm() -> dict[str, float]:
    data = load_employment("NM")

    def fit() -> None:
        MST(epsilon=1.0, delta=1e-9).fit(
            data, EMPLOYMENT_DOMAIN, rng=np.random.default_rng(0)
        )

    start = time.perf_counter()
    fit()
    cold = time.perf_counter() - start
    warm = best_of(fit, 3)
    print(
        f"MST on New Mexico ({len(data):,} rows): cold {cold:.2f} s, warm {warm:.3f} s"
    )
    return {"mst_nm_cold": cold, "mst_nm_warm": warm}


def _estimator(seed: int) -> dict[str, float]:
    pgm.enable_float64()  # before mbi is imported
    from mbi import estimation

    data = load_employment("NY-sample")
    rng = np.random.default_rng(seed)
    attrs = list(EMPLOYMENT_DOMAIN)
    order = rng.permutation(attrs)
    cliques = [(a,) for a in attrs] + [
        tuple(a for a in attrs if a in (order[i], order[rng.integers(0, i)]))
        for i in range(1, len(order))
    ]
    log = pgm.MeasurementLog(EMPLOYMENT_DOMAIN)
    for cl in cliques:
        x = marginal(data, EMPLOYMENT_DOMAIN, cl)
        log.add(cl, x + rng.normal(0, 10.0, x.size), 10.0)
    start = time.perf_counter()
    pgm.estimate(log, iters=1000)
    ours = time.perf_counter() - start
    # The same measurements on a fresh structure for mbi's own loop: permute one edge.
    log2 = pgm.MeasurementLog(EMPLOYMENT_DOMAIN)
    extra = tuple(a for a in attrs if a in (order[0], order[-1]))
    for cl in [*cliques, extra]:
        x = marginal(data, EMPLOYMENT_DOMAIN, cl)
        log2.add(cl, x + rng.normal(0, 10.0, x.size), 10.0)
    start = time.perf_counter()
    estimation.MirrorDescent().estimate(
        pgm.mbi_domain(EMPLOYMENT_DOMAIN), log2.measurements(), iters=1000
    )
    theirs = time.perf_counter() - start
    print(f"estimate on a new structure: ours {ours:.2f} s, mbi's loop {theirs:.2f} s")
    return {"estimate_ours": ours, "estimate_mbi": theirs}


def _fit_table(skip_gem: bool) -> dict[str, float]:
    data = load_employment("NY-sample")
    rng = np.random.default_rng(0)
    order = rng.permutation(len(data))
    test, train = data.iloc[order[:4000]], data.iloc[order[4000:]]
    makers = {"MST": MST, "AIM": AIM}
    if not skip_gem:
        from dpnotes.synth.gem import GEM

        makers["GEM"] = GEM
    times = {}
    print("fit time (s), epsilon 1, New York sample (16,000 training rows):")
    print(
        f"{'':6}"
        + "".join(f"{s:>12}" for s in ("vanilla", "SEX", "RAC1P", "SEX×RAC1P"))
    )
    for name, cls in makers.items():
        row = []
        for by in (None, ["SEX"], ["RAC1P"], ["SEX", "RAC1P"]):
            base = cls(epsilon=1.0, delta=1e-9)
            start = time.perf_counter()
            if by is None:
                base.fit(train, EMPLOYMENT_DOMAIN, rng=np.random.default_rng(1))
            else:
                w = stratum_weights(test, EMPLOYMENT_DOMAIN, by)
                Stratified(base, by, w).fit(
                    train, EMPLOYMENT_DOMAIN, rng=np.random.default_rng(1)
                )
            row.append(time.perf_counter() - start)
            times[f"{name}_{'vanilla' if by is None else '_'.join(by)}"] = row[-1]
        print(f"{name:6}" + "".join(f"{t:12.1f}" for t in row), flush=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-gem", action="store_true")
    parser.add_argument("--skip-table", action="store_true")
    args = parser.parse_args()
    times = {}
    times.update(_mst_nm())
    times.update(_estimator(seed=11))
    if not args.skip_table:
        times.update(_fit_table(args.skip_gem))
    for key, value in times.items():
        print(f"time {key}={value:.3f}")
    print(
        f"ratio mst_nm_cold_vs_warm={times['mst_nm_cold'] / times['mst_nm_warm']:.1f}"
    )
    print(
        "ratio estimate_mbi_loop_vs_ours="
        f"{times['estimate_mbi'] / times['estimate_ours']:.2f}"
    )


if __name__ == "__main__":
    main()
