"""DP-SGD with group-dependent clipping: the engine, the algorithms, the models.

* :mod:`dpnotes.dpsgd.engine` -- per-sample gradient norms and clipped sums in batch
  (:class:`PerSampleClipper`, ghost and ``torch.func`` backends).
* :mod:`dpnotes.dpsgd.train` -- SGD, DPSGD, Naive and DPSGD-F
  (``dpnotes.dpsgd.train.train``; not re-exported here, where the name ``train`` is
  the module), their accounting and per-group evaluation.
* :mod:`dpnotes.dpsgd.models` -- the paper's models.

References:
    xu2021removing; abadi2016deep; yousefpour2021opacus.
"""

from __future__ import annotations

import importlib
from typing import Any

from dpnotes.dpsgd.engine import (
    PerSampleClipper,
    PerSampleGradients,
    clip_factors,
    cross_entropy_per_sample,
)
from dpnotes.dpsgd.train import (
    METHODS,
    EpochStats,
    TrainResult,
    dpsgd_epsilon,
    dpsgd_f,
    group_accuracy,
    naive,
    predict,
    sgd,
)

__all__ = [
    "METHODS",
    "EpochStats",
    "PerSampleClipper",
    "PerSampleGradients",
    "TrainResult",
    "clip_factors",
    "cross_entropy_per_sample",
    "dpsgd_epsilon",
    "dpsgd_f",
    "group_accuracy",
    "naive",
    "predict",
    "sgd",
]


def __getattr__(name: str) -> Any:
    # The models live in their own module; re-export its public names lazily so that
    # this package imports even where that module is absent.
    try:
        models = importlib.import_module("dpnotes.dpsgd.models")
    except ImportError:
        models = None
    if models is not None and name in getattr(models, "__all__", ()):
        return getattr(models, name)
    raise AttributeError(f"module 'dpnotes.dpsgd' has no attribute {name!r}")
