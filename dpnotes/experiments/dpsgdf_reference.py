"""The DPSGD-F paper's MNIST experiments under the reference code's training loop.

The paper (xu2021removing) says it replicates the unbalanced-MNIST setting of
bagdasaryan2019differential, whose public code trains with two settings the paper's
text never mentions: SGD with momentum 0.5, and pixels standardised by the public
MNIST constants (0.1307, 0.3081). Its privacy accountant also counts
``ceil(60 n / 256)`` steps, which gives the paper's epsilon 6.55 exactly. The
experiments of :mod:`dpnotes.experiments.dpsgd_f` follow the paper's text (plain
SGD, pixels in [0, 1], ``60 * (n // 256)`` steps): the **text** loop. This module runs
the same MNIST experiments on the **reference** loop (:data:`REFERENCE_SETTINGS`):

- ``part="main"``: SGD, DPSGD, Naive, DPSGD-F (Tables 1 and 2; Figures 1 and 2;
  test accuracy after every epoch, so also Figure 3a);
- ``part="clip"``: DPSGD at C = 2..5 (Table 3; C = 1 is the main DPSGD run);
- ``part="sigma"``: DPSGD and DPSGD-F at other noise multipliers (Figure 3b);
- ``part="ablation"``: DPSGD and DPSGD-F with one reference setting at a time
  (momentum only, normalisation only, neither), at the reference step count.

Every cell also records, at the end, the norm of each group's average gradient and
its mean loss over all of its training rows
(:func:`~dpnotes.experiments.dpsgd_f.group_gradient_diagnostics`), the other
reading of Table 2's "average gradient norm".

Nothing else changes: the same data streams, initial weights, Poisson batches and
noise per seed as the text loop (:func:`~dpnotes.experiments.dpsgd_f.seed_streams`),
the same rules and accounting. Momentum acts on the already-noised update
(post-processing); the normalisation constants are public; so every epsilon is that
of the same subsampled Gaussian steps. The reference code's fixed-size shuffled
batches are not copied: Poisson sampling keeps the accounting exact (the reference
code's epsilons assume it too).

Result table: the cell's keys (``part``, ``dataset``, ``method``, ``clip_norm``,
``noise_multiplier``, ``momentum``, ``normalize``, ``seed``), then ``metric``,
``group``, ``epoch``, ``value`` as in :data:`dpnotes.experiments.dpsgd_f.METRICS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpnotes.experiments.dpsgd_f import (
    DATASET_FILES,
    PAPER_SETTINGS,
    TrainingProfile,
    train_and_evaluate,
)
from dpnotes.lab.registry import Cache, register

__all__ = ["PARTS", "REFERENCE_SETTINGS", "ReferenceProfile"]

#: The MNIST settings of the reference loop: the paper's, plus momentum 0.5,
#: standardised pixels and ``ceil(epochs n / b)`` steps.
REFERENCE_SETTINGS: dict[str, Any] = {
    **PAPER_SETTINGS["mnist"],
    "momentum": 0.5,
    "normalize": True,
    "step_rule": "ceil",
}

#: The parts of the grid, in the order they run.
PARTS: tuple[str, ...] = ("main", "ablation", "clip", "sigma")


@dataclass(frozen=True)
class ReferenceProfile(TrainingProfile):
    """Settings of ``dpsgdf_reference`` (MNIST only).

    Attributes:
        methods: The methods of ``part="main"``.
        seeds: The seeds of ``part="main"``.
        clip_norms: DPSGD's bounds of ``part="clip"``.
        clip_seeds: Their seeds.
        noise_multipliers: The sigmas of ``part="sigma"``.
        sigma_methods: The methods trained at each of them.
        sigma_seeds: Their seeds.
        ablation: ``(momentum, normalize)`` pairs of ``part="ablation"`` (the
            reference loop itself is ``part="main"``).
        ablation_methods: The methods of the ablation.
        ablation_seeds: Its seeds.
    """

    methods: tuple[str, ...] = ("sgd", "dpsgd", "naive", "dpsgd_f")
    seeds: tuple[int, ...] = (0,)
    clip_norms: tuple[float, ...] = ()
    clip_seeds: tuple[int, ...] = (0,)
    noise_multipliers: tuple[float, ...] = ()
    sigma_methods: tuple[str, ...] = ("dpsgd", "dpsgd_f")
    sigma_seeds: tuple[int, ...] = (0,)
    ablation: tuple[tuple[float, bool], ...] = ()
    ablation_methods: tuple[str, ...] = ("dpsgd", "dpsgd_f")
    ablation_seeds: tuple[int, ...] = (0,)


_ONE_AT_A_TIME = ((0.5, False), (0.0, True), (0.0, False))

_PROFILES = {
    "smoke": ReferenceProfile(
        datasets={"mnist": {**REFERENCE_SETTINGS, "epochs": 1}},
        methods=("sgd", "dpsgd_f"),
        clip_norms=(2.0,),
        noise_multipliers=(1.5,),
        sigma_methods=("dpsgd",),
        ablation=((0.0, False),),
        ablation_methods=("dpsgd",),
        train_rows=1024,
        test_rows=1000,
    ),
    # The first 3 epochs, seed 0: the start of the trajectories the paper profile
    # follows for 60 (about 25 s per epoch and run on one CPU thread).
    "quick": ReferenceProfile(
        datasets={"mnist": {**REFERENCE_SETTINGS, "epochs": 3}},
        methods=("sgd", "dpsgd", "dpsgd_f"),
        ablation=_ONE_AT_A_TIME,
    ),
    "paper": ReferenceProfile(
        datasets={"mnist": dict(REFERENCE_SETTINGS)},
        device="auto",
        seeds=(0, 1, 2),
        clip_norms=(2.0, 3.0, 4.0, 5.0),
        clip_seeds=(0, 1, 2),
        noise_multipliers=(0.6, 1.0, 1.5, 2.0),
        ablation=_ONE_AT_A_TIME,
    ),
}


def _cell(part: str, method: str, seed: int, settings: Mapping[str, Any], **over):
    values = {
        "clip_norm": float(settings["clip_norm"]),
        "noise_multiplier": float(settings["noise_multiplier"]),
        "momentum": float(settings["momentum"]),
        "normalize": bool(settings["normalize"]),
        **over,
    }
    if method == "sgd":  # SGD has no clipping or noise
        values["clip_norm"] = values["noise_multiplier"] = None
    return {"part": part, "dataset": "mnist", "method": method, **values, "seed": seed}


def _grid(config: ReferenceProfile) -> list[dict[str, Any]]:
    # In order of what the chapter needs most, so that a partial result holds whole
    # tables: Table 1 (every seed), the ablation, Table 3 (seed by seed), Figure 3b.
    settings = config.datasets["mnist"]
    cells = [
        _cell("main", m, s, settings) for s in config.seeds for m in config.methods
    ]
    cells += [
        _cell("ablation", m, s, settings, momentum=mu, normalize=z)
        for s in config.ablation_seeds
        for mu, z in config.ablation
        for m in config.ablation_methods
    ]
    cells += [
        _cell("clip", "dpsgd", s, settings, clip_norm=float(c))
        for s in config.clip_seeds
        for c in config.clip_norms
    ]
    cells += [
        _cell("sigma", m, s, settings, noise_multiplier=float(sigma))
        for s in config.sigma_seeds
        for sigma in config.noise_multipliers
        for m in config.sigma_methods
    ]
    return cells


def _datasets_of(config: TrainingProfile) -> list[str]:
    return list(DATASET_FILES["mnist"])


@register(
    name="dpsgdf_reference",
    title="MNIST under the reference code's loop (momentum 0.5, normalised pixels)",
    profiles=_PROFILES,
    grid=_grid,
    datasets=_datasets_of,
    figure="Tables 1-3 and Figure 3 of the DPSGD-F paper (xu2021removing) under "
    "the loop of bagdasaryan2019differential's code, and its ablation",
)
def dpsgdf_reference(
    config: ReferenceProfile,
    cell: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    cache: Cache | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Train one method of one part; test accuracy after every epoch, diagnostics.

    The cell's ``clip_norm``, ``noise_multiplier``, ``momentum`` and ``normalize``
    replace the profile's settings (Naive and DPSGD-F get DPSGD's epsilon at the
    cell's sigma as their budget). The streams come from the seed, not from ``rng``.
    """
    settings = dict(config.datasets["mnist"])
    for key in ("clip_norm", "noise_multiplier"):
        if cell["method"] != "sgd":
            settings[key] = float(cell[key])
    settings["momentum"] = float(cell["momentum"])
    settings["normalize"] = bool(cell["normalize"])
    return train_and_evaluate(
        config,
        dataset="mnist",
        method=cell["method"],
        seed=int(cell["seed"]),
        settings=settings,
        every_epoch=True,
        cache=cache,
        progress=progress,
        diagnose=True,
    )
