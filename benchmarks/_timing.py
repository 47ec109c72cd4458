"""Shared timing helper for the benchmark scripts."""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from pathlib import Path


def best_of(fn: Callable[[], object], repeats: int) -> float:
    """Return the fastest of ``repeats`` wall-clock timings of ``fn()`` (seconds)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux), else the platform's word."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def machine_line() -> str:
    """One line naming the CPU, its cores and the load average when timing began.

    A ratio measured on a loaded machine (load above the cores in use) is not the
    machine's: print this beside every ratio so a reader can tell.
    """
    try:
        load = "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:
        load = "load average unknown"
    return f"cpu: {cpu_model()}, {os.cpu_count()} cores, {load}"
