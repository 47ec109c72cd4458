"""Grids on a Dask cluster: the same table as local processes, clear errors."""

from __future__ import annotations

import time

import pandas as pd
import pytest

from dpnotes.lab import load_stored, run
from dpnotes.lab.cli import main

distributed = pytest.importorskip("distributed")

NAME = "dp_group_error"  # three cells, real data, a few seconds


@pytest.mark.slow
@pytest.mark.data
def test_a_smoke_profile_on_a_local_cluster_equals_the_local_run(tmp_path, capsys):
    local = run(NAME, "smoke", root=tmp_path / "local", progress=False, jobs=2)
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
    ) as cluster:
        started = time.perf_counter()
        args = ["--results", str(tmp_path / "dask"), "run", NAME, "--profile", "smoke"]
        code = main([*args, "--scheduler", cluster.scheduler_address, "--no-progress"])
        seconds = time.perf_counter() - started
    assert code == 0, capsys.readouterr().err
    remote = load_stored(NAME, "smoke", root=tmp_path / "dask")
    assert remote is not None and not remote.partial
    pd.testing.assert_frame_equal(remote.table, local.table)
    print(f"smoke on a 2-worker LocalCluster: {seconds:.1f} s")


def test_a_scheduler_that_is_not_there_is_a_clear_error(tmp_path, capsys, monkeypatch):
    from dpnotes.lab import runner

    monkeypatch.setattr(runner, "SCHEDULER_TIMEOUT_S", 2)
    started = time.perf_counter()
    args = ["--results", str(tmp_path), "run", "toy_lab_absent", "--profile", "smoke"]
    # An unknown experiment is found before any connection is tried...
    assert main([*args, "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "no experiment named" in capsys.readouterr().err
    # ...and a scheduler that does not answer within seconds.
    args = ["--results", str(tmp_path), "run", NAME, "--profile", "smoke"]
    assert main([*args, "--scheduler", "tcp://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert "no Dask scheduler answered at 'tcp://127.0.0.1:9' within 2 s" in err
    assert time.perf_counter() - started < 15
    assert not any(tmp_path.iterdir()), "nothing stored, no folder made"
