"""Shared pytest configuration: no network, a headless backend, clean GPU skips."""

from __future__ import annotations

import os

import pytest

# Tests never download: a missing data file must fail fast with a clear error.
os.environ.setdefault("DPNOTES_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")


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
