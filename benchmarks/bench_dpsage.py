"""Speed of DPSAGE (issue 26): one run on New Mexico ACSPublicCoverage, MST vs SAGE.

Run: ``DPNOTES_DATA_DIR=... .venv/bin/python benchmarks/bench_dpsage.py``.

The frame is the paper's ACSPublicCoverage scenario (New Mexico 2018, 7,693 people
under 65 with income below $30,000; its appendix Table 5): the 15 categorical features
MAR, SEX, DIS, ESP, CIT, MIG, MIL, ANC, NATIVITY, DEAR, DEYE, DREM, ESR, FER, RAC1P
and the target PUBCOV, each coded over its public PUMS 2018 codebook (folktables maps
"not applicable" to 0). This encoding is a stand-in written for the benchmark; the
package's loader for the scenario is separate work.

1. One DPSAGE run at the defaults (epsilon 1, gamma 0.5, MST at its 3,000 iterations,
   2,048 explained rows, a 128-row background, thresh 0.025), cold (MST compiles its
   clique structure), then warm (the same seed: the same structure, compiled), then
   with another seed (MST's tree may differ and compile anew).
2. The stages' shares: the DP classifier, MST, sampling and SAGE.
3. The non-private real-SAGE reference at the same SAGE settings.

The last lines are machine-readable (``time <name>=<s>``, ``ratio <name>=<x>``).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from dpnotes.data.acs import load_acs_task
from dpnotes.importance import dpsage, real_sage

#: Public PUMS 2018 codes of each column (0 = not applicable, as folktables writes it).
CODEBOOK: dict[str, list[int]] = {
    "MAR": [1, 2, 3, 4, 5],
    "SEX": [1, 2],
    "DIS": [1, 2],
    "ESP": list(range(9)),
    "CIT": [1, 2, 3, 4, 5],
    "MIG": [0, 1, 2, 3],
    "MIL": [0, 1, 2, 3, 4],
    "ANC": [1, 2, 3, 4, 8],
    "NATIVITY": [1, 2],
    "DEAR": [1, 2],
    "DEYE": [1, 2],
    "DREM": [0, 1, 2],
    "ESR": list(range(7)),
    "FER": [0, 1, 2],
    "RAC1P": list(range(1, 10)),
}


def public_coverage_nm() -> tuple[pd.DataFrame, dict[str, int]]:
    """Return New Mexico ACSPublicCoverage as codes of a public domain."""
    features, label, _ = load_acs_task("ACSPublicCoverage", "NM")
    columns = {}
    for col, values in CODEBOOK.items():
        raw = features[col].fillna(0).to_numpy()
        codes = np.searchsorted(values, raw)
        if not np.array_equal(
            np.asarray(values)[np.minimum(codes, len(values) - 1)], raw
        ):
            raise ValueError(f"{col} holds a value outside its public codebook.")
        columns[col] = codes
    columns["PUBCOV"] = label.astype(int).to_numpy()
    domain = {col: len(values) for col, values in CODEBOOK.items()} | {"PUBCOV": 2}
    return pd.DataFrame(columns), domain


def main() -> None:
    df, domain = public_coverage_nm()
    print(f"New Mexico ACSPublicCoverage: {len(df):,} rows, {len(domain)} columns")

    def run(seed):
        start = time.perf_counter()
        res = dpsage(
            df,
            domain,
            target="PUBCOV",
            epsilon=1.0,
            delta=1e-9,
            rng=np.random.default_rng(seed),
        )
        return res, time.perf_counter() - start

    cold, cold_s = run(0)
    warm, warm_s = run(0)
    # Another seed: MST may choose another tree, whose program compiles anew.
    other, other_s = run(1)
    runs = (("cold", cold, cold_s), ("warm", warm, warm_s), ("seed1", other, other_s))
    for name, res, total in runs:
        parts = ", ".join(f"{k} {v:.2f} s" for k, v in res.seconds.items())
        print(f"DPSAGE {name}: {total:.2f} s ({parts}); spent {res.budget}")
    print("ranking:", ", ".join(warm.ranking))

    start = time.perf_counter()
    ref = real_sage(df, domain, target="PUBCOV", rng=np.random.default_rng(0))
    real_s = time.perf_counter() - start
    print(f"real SAGE (not private): {real_s:.2f} s; ranking:", ", ".join(ref.ranking))

    for name, res, total in runs:
        print(f"time dpsage_{name}={total:.3f}")
        print(f"ratio dpsage_{name}_mst_share={res.seconds['synthesizer'] / total:.3f}")
        print(f"ratio dpsage_{name}_sage_share={res.seconds['sage'] / total:.3f}")
    print(f"time real_sage={real_s:.3f}")


if __name__ == "__main__":
    main()
