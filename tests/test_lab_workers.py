"""A run's local worker processes end with it, even when the run is killed (SIGKILL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's"
)

#: A parent that starts the runner's local pool, reports its workers' pids, and waits.
PARENT = textwrap.dedent(
    """
    import time
    from dpnotes.lab import runner

    with runner._executor(2, None) as pool:
        futures = [pool.submit(time.sleep, 120) for _ in range(2)]
        time.sleep(0.5)
        while len(pool._processes) < 2:
            time.sleep(0.1)
        print(" ".join(map(str, pool._processes)), flush=True)
        time.sleep(120)
    """
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (ended, not yet reaped by init) is gone for our purpose.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_workers_end_when_the_run_is_killed():
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True
    )
    pids: list[int] = []
    try:
        pids = [int(p) for p in parent.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(p) for p in pids)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in pids if _alive(p)], "workers outlived the killed run"
    finally:
        parent.kill()
        for pid in pids:  # never leave a sleeping worker behind, pass or fail
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
