"""Shared pytest configuration: no network, a headless backend, clean GPU skips."""

from __future__ import annotations

import os

import pytest

# Tests never download: a missing data file must fail fast with a clear error.
os.environ.setdefault("DPNOTES_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")


def _threads_per_worker() -> int | None:
    """The cores each pytest-xdist worker may use, or None outside a parallel run.

    ``make test`` runs one worker per core; left alone, torch and BLAS in each worker
    start a thread per core as well, and the workers' threads then fight over the
    cores (a test ran 3-4 times slower in CI than alone). Each worker gets its share.
    """
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if workers <= 1:
        return None
    return max(1, (os.cpu_count() or 1) // workers)


_THREADS = _threads_per_worker()
if _THREADS is not None:
    # Before torch or numpy is imported, and inherited by the subprocesses tests start.
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_name, str(_THREADS))


#: XLA's options that compile faster and run slower (book/appendix/performance.md).
#: The tests' JAX programs are small and each is compiled once, so compiling is most of
#: their time: the options took 189 s to 147 s on the synthesis and spending tests. They
#: change no semantics, only rounding (fitted marginals by up to 0.01 of a count), and
#: the tests compare within tolerances or with themselves. The package, the runner and
#: the book never set them: every stored result is compiled with XLA's defaults.
#: A run whose XLA_FLAGS names an optimisation level keeps its own.
FAST_COMPILE_FLAGS = (
    "--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false"
)
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    # Before JAX starts its backend; inherited by the subprocesses tests start.
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " " + FAST_COMPILE_FLAGS
    ).strip()


def _has_cuda() -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return False
    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    if _has_cuda():
        return
    skip_gpu = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)
