"""Grids on a Dask cluster: the same table as local processes, clear errors."""

from __future__ import annotations

import http.server
import time

import pandas as pd
import pytest

from dpnotes.lab import load_stored, run
from dpnotes.lab.cli import main

distributed = pytest.importorskip("distributed")

NAME = "dp_group_error"  # three cells, real data, a few seconds


class _Quiet(http.server.BaseHTTPRequestHandler):
    """An HTTP server's handler that answers nothing a Dask client understands."""

    def log_message(self, *args):  # keep the test's output clean
        pass


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


def test_a_server_that_is_not_a_scheduler_is_a_clear_error_not_a_hang(
    tmp_path, capsys, monkeypatch
):
    import threading

    from dpnotes.lab import runner

    monkeypatch.setattr(runner, "SCHEDULER_TIMEOUT_S", 1)
    monkeypatch.setattr(runner, "_CONNECT_GRACE_S", 1)
    # Threads per connection: a handler stuck reading the client never blocks shutdown.
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        address = f"tcp://127.0.0.1:{server.server_address[1]}"
        started = time.perf_counter()
        args = ["--results", str(tmp_path), "run", NAME, "--profile", "smoke"]
        assert main([*args, "--scheduler", address]) == 2
        assert time.perf_counter() - started < 10
    finally:
        server.shutdown()
    err = capsys.readouterr().err
    assert f"no Dask scheduler answered at {address!r} within 1 s" in err
    assert "nothing answered as a scheduler would" in err
    assert not any(tmp_path.iterdir()), "nothing stored, no folder made"
