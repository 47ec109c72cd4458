"""One smoke profile on a Dask LocalCluster against the same run in local processes.

Run: ``DPNOTES_DATA_DIR=... .venv/bin/python benchmarks/bench_cluster.py``. Both runs
go through ``dpnotes.lab.run`` into fresh temporary stores, in this process, one after
the other: ``jobs=2`` spawned local workers, then ``scheduler=`` a
``distributed.LocalCluster`` with two single-threaded worker processes (its start-up is
timed separately). The two tables are checked equal (wall times aside) before anything
is printed; the last lines are machine-readable.

Dask's cost is its scheduler and the workers' start (a second or two) and a round trip
per cell, so on one machine it should be close to local processes, and it is what lets
a grid use many machines.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from dpnotes.lab import get_experiment, run
from dpnotes.lab.restamp import compare_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--experiment", default="dp_group_error")
    parser.add_argument("--profile", default="smoke")
    args = parser.parse_args()
    from distributed import LocalCluster

    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        local = run(
            args.experiment, args.profile, root=f"{folder}/a", progress=False, jobs=2
        )
        t_local = time.perf_counter() - started

        started = time.perf_counter()
        with LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster:
            t_start = time.perf_counter() - started
            started = time.perf_counter()
            remote = run(
                args.experiment,
                args.profile,
                root=f"{folder}/b",
                progress=False,
                scheduler=cluster.scheduler_address,
            )
            t_dask = time.perf_counter() - started
    # Equal as stored, wall times aside.
    timing = get_experiment(args.experiment).is_timing
    differences = compare_rows(local.table, remote.table, is_timing=timing)
    assert not differences, differences
    cells = local.meta["cells"]
    print(f"{args.experiment} [{args.profile}], {cells} cells, tables equal")
    print(f"time local_jobs2={t_local:.2f}")
    print(f"time dask_cluster_start={t_start:.2f}")
    print(f"time dask_run={t_dask:.2f}")
    print(f"ratio dask_over_local={t_dask / t_local:.2f}")


if __name__ == "__main__":
    main()
