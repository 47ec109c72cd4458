"""DP-SGD with group-dependent clipping: the rules, the loop, evaluation, the engine.

* :mod:`dpnotes.dpsgd.rules` -- DPSGD-F's Algorithms 1-3 as the paper states them:
  the private counts, Naive's weights, DPSGD-F's bounds, one step function each, and
  their epsilon (:func:`dpsgd_epsilon`).
* :mod:`dpnotes.dpsgd.settings` -- a run's settings as frozen records
  (:class:`Privacy`, :class:`Schedule`; with :class:`DPSGDFRule`, all a run's switches).
* :mod:`dpnotes.dpsgd.loop` -- :func:`~dpnotes.dpsgd.loop.train` (SGD, DPSGD, Naive,
  DPSGD-F) and its results.
* :mod:`dpnotes.dpsgd.evaluate` -- predictions and accuracy per group.
* :mod:`dpnotes.dpsgd.engine` -- per-sample gradient norms and clipped sums in batch
  (:class:`PerSampleClipper`, ghost, bookkeeping and ``torch.func`` backends).
* :mod:`dpnotes.dpsgd.models` -- the paper's models.

The data sets are in :mod:`dpnotes.data.dpsgdf` (by name; one module each:
:mod:`dpnotes.data.unbalanced_mnist`, :mod:`dpnotes.data.adult`,
:mod:`dpnotes.data.dutch`); the RDP accounting in :mod:`dpnotes.accounting`.

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
from dpnotes.dpsgd.evaluate import Accuracies, accuracies, group_accuracy, predict
from dpnotes.dpsgd.loop import (
    METHODS,
    EpochStats,
    TrainResult,
    dpsgd_f,
    naive,
    sgd,
    train,
)
from dpnotes.dpsgd.rules import (
    COUNT_NOISE_FACTOR,
    PRIVATE_METHODS,
    DPSGDFRule,
    StepOutput,
    dpsgd_epsilon,
    step_noise_multipliers,
)
from dpnotes.dpsgd.settings import Privacy, Schedule

__all__ = [
    "COUNT_NOISE_FACTOR",
    "METHODS",
    "PRIVATE_METHODS",
    "Accuracies",
    "DPSGDFRule",
    "EpochStats",
    "PerSampleClipper",
    "PerSampleGradients",
    "Privacy",
    "Schedule",
    "StepOutput",
    "TrainResult",
    "accuracies",
    "clip_factors",
    "cross_entropy_per_sample",
    "dpsgd_epsilon",
    "dpsgd_f",
    "group_accuracy",
    "naive",
    "predict",
    "sgd",
    "step_noise_multipliers",
    "train",
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
