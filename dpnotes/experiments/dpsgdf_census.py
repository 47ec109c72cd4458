"""The DPSGD-F paper's census experiments under both encodings of Adult and Dutch.

The paper (xu2021removing, section 6.1.1) one-hot encodes the categorical attributes,
scales the numerical ones to [0, 1] and reports "40 unprotected attributes for Adult
and 35 unprotected attributes for Dutch". The package's ``"full"`` encoding (104 and
74 features, sex included) is what ``dpsgdf_main`` trains on; the ``"paper"``
encoding (:data:`dpnotes.data.adult.ADULT_PAPER_ENCODING`,
:data:`~dpnotes.data.dutch.DUTCH_PAPER_ENCODING`) is the reading that gives the
paper's counts. This experiment trains SGD, DPSGD, Naive and DPSGD-F on both, with
the same split, initial-weight stream, batches and noise per seed
(:func:`~dpnotes.experiments.dpsgd_f.seed_streams`): the encoding is the only
difference between the two runs of a method and seed.

Every cell also records, at the end of training, each group's mean training loss
and the norm of its *average* gradient over all its training rows
(:func:`~dpnotes.experiments.dpsgd_f.group_gradient_diagnostics`), the second
reading of Table 2's "average gradient norm" beside the per-epoch mean of the
per-sample norms (``grad_norm``).

Result table: the cell's keys (``dataset``, ``encoding``, ``method``, ``seed``), then
``metric``, ``group``, ``epoch``, ``value`` as in
:data:`dpnotes.experiments.dpsgd_f.METRICS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpnotes.experiments.dpsgd_f import (
    DATASET_FILES,
    METHODS,
    PAPER_SETTINGS,
    TrainingProfile,
    train_and_evaluate,
)
from dpnotes.lab.registry import Cache, register

__all__ = ["CensusProfile"]


@dataclass(frozen=True)
class CensusProfile(TrainingProfile):
    """Settings of ``dpsgdf_census``.

    Attributes:
        encodings: The census encodings trained on
            (:data:`dpnotes.data.blocks.ENCODINGS`).
        methods: The methods.
        seeds: The seeds.
    """

    encodings: tuple[str, ...] = ("paper", "full")
    methods: tuple[str, ...] = tuple(METHODS)
    seeds: tuple[int, ...] = (0,)
    datasets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def _census(epochs: int | None = None) -> dict[str, dict[str, Any]]:
    out = {d: dict(PAPER_SETTINGS[d]) for d in ("adult", "dutch")}
    if epochs is not None:
        for settings in out.values():
            settings["epochs"] = epochs
    return out


_PROFILES = {
    "smoke": CensusProfile(
        datasets={"adult": _census(1)["adult"]},
        methods=("dpsgd", "dpsgd_f"),
        train_rows=5000,
    ),
    "quick": CensusProfile(datasets=_census()),
    "paper": CensusProfile(datasets=_census(), seeds=(0, 1, 2, 3, 4)),
}


def _grid(config: CensusProfile) -> list[dict[str, Any]]:
    # Seeds vary slowest, so that a partial result holds whole seeds.
    return [
        {"dataset": d, "encoding": e, "method": m, "seed": int(s)}
        for s in config.seeds
        for d in config.datasets
        for e in config.encodings
        for m in config.methods
    ]


def _datasets_of(config: TrainingProfile) -> list[str]:
    return [f for d in config.datasets for f in DATASET_FILES[d]]


@register(
    name="dpsgdf_census",
    title="Adult and Dutch under the paper's encoding (40 / 35 features) and ours",
    profiles=_PROFILES,
    grid=_grid,
    datasets=_datasets_of,
    figure="Tables 1 and 2 of the DPSGD-F paper (xu2021removing), census rows",
)
def dpsgdf_census(
    config: CensusProfile,
    cell: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    cache: Cache | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Train one method on one census set and encoding; final rows, diagnostics.

    The streams come from the seed, not from ``rng``; Naive and DPSGD-F get
    DPSGD's epsilon as their budget, as in ``dpsgdf_main``.
    """
    d = cell["dataset"]
    settings = {**config.datasets[d], "encoding": str(cell["encoding"])}
    return train_and_evaluate(
        config,
        dataset=d,
        method=cell["method"],
        seed=int(cell["seed"]),
        settings=settings,
        cache=cache,
        progress=progress,
        diagnose=True,
    )
