"""Experiments of the chapter "Differential privacy in one chapter".

- ``dp_mean_error``: error of a clipped private mean against epsilon and n, for the
  Laplace mechanism (pure DP) and the Gaussian mechanism (at the same epsilon with a
  delta), with the closed-form error beside the measured one.
- ``dp_group_error``: error for each race group of the UCI Adult data when the group
  mean of age is estimated by one global private mean, by per-group private means that
  share the budget by parallel composition, or by per-group means that split it
  sequentially. It shows, before any of the three works, the two ways DP hurts small
  groups: a global estimate is biased towards the majority, and per-group noise is
  largest where groups are smallest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpnotes.lab.registry import Cache, Profile, register
from dpnotes.mechanisms import gaussian_mechanism, laplace_mean, laplace_mechanism

__all__ = [
    "ADULT_RACES",
    "STRATEGIES",
    "GroupErrorProfile",
    "MeanErrorProfile",
    "dp_group_error",
    "dp_mean_error",
]


def _log_grid(points: int) -> tuple[float, ...]:
    """Return ``points`` epsilons evenly spaced in log from 0.01 to 10."""
    return tuple(np.round(np.logspace(-2, 1, points), 6).tolist())


@dataclass(frozen=True)
class MeanErrorProfile(Profile):
    """Settings of ``dp_mean_error``.

    Attributes:
        epsilons: Privacy budgets of each release.
        ns: Data set sizes (one cell each, per mechanism).
        trials: Data sets drawn per n (each released once per epsilon).
        delta: The Gaussian mechanism's delta.
        beta: Parameters (a, b) of the Beta distribution the data are drawn from.
    """

    epsilons: tuple[float, ...]
    ns: tuple[int, ...]
    trials: int
    delta: float = 1e-6
    beta: tuple[float, float] = (2.0, 5.0)


_MEAN_PROFILES = {
    "smoke": MeanErrorProfile(epsilons=(0.1, 1.0), ns=(100, 1000), trials=200),
    "quick": MeanErrorProfile(
        epsilons=_log_grid(13), ns=(100, 1000, 10000), trials=1000
    ),
    "paper": MeanErrorProfile(
        epsilons=_log_grid(25), ns=(100, 1000, 10000, 100000), trials=10000
    ),
}


def _mean_grid(config: MeanErrorProfile) -> list[dict[str, Any]]:
    return [
        {"mechanism": m, "n": int(n)}
        for m in ("laplace", "gaussian")
        for n in config.ns
    ]


@register(
    name="dp_mean_error",
    title="Error of a clipped private mean vs epsilon and n (Laplace and Gaussian)",
    profiles=_MEAN_PROFILES,
    grid=_mean_grid,
)
def dp_mean_error(
    config: MeanErrorProfile,
    cell: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    cache: Cache | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Measure the error of one private mean mechanism at one n over all epsilons.

    Each trial draws a fresh data set of n values from Beta(a, b) on the public interval
    [0, 1] and releases its mean; the error is the private estimate minus the data set's
    own (non-private) mean, so it is the cost of privacy alone.
    """
    n, trials = int(cell["n"]), int(config.trials)
    a, b = config.beta
    epsilons = list(config.epsilons)
    # Bound the memory of one trials x n block to about 32 MB; each block of data sets
    # is reused for every epsilon (the noise is drawn afresh for each).
    chunk = max(1, min(trials, 4_000_000 // n))
    errors: dict[float, list[np.ndarray]] = {eps: [] for eps in epsilons}
    for start in range(0, trials, chunk):
        x = rng.beta(a, b, size=(min(chunk, trials - start), n))
        truth = x.mean(axis=-1)
        for epsilon in epsilons:
            if cell["mechanism"] == "laplace":
                est = laplace_mean(x, lower=0.0, upper=1.0, epsilon=epsilon, rng=rng)
            else:
                est = gaussian_mechanism(
                    truth,
                    sensitivity=1.0 / n,
                    epsilon=epsilon,
                    delta=config.delta,
                    rng=rng,
                )
            errors[epsilon].append(np.asarray(est) - truth)
    rows = []
    for epsilon in epsilons:
        err = np.concatenate(errors[epsilon])
        rows.append(
            {
                "epsilon": epsilon,
                "rmse": float(np.sqrt(np.mean(err**2))),
                "mae": float(np.mean(np.abs(err))),
                "trials": trials,
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class GroupErrorProfile(Profile):
    """Settings of ``dp_group_error``.

    Attributes:
        epsilons: Privacy budgets of each release.
        trials: Releases per epsilon and strategy.
        variable: The Adult column whose group means are estimated.
        bounds: Public clipping bounds of ``variable``.
        group: The Adult column that defines the groups.
    """

    epsilons: tuple[float, ...]
    trials: int
    variable: str = "age"
    bounds: tuple[float, float] = (17.0, 90.0)
    group: str = "race"


_GROUP_PROFILES = {
    "smoke": GroupErrorProfile(epsilons=(0.1, 1.0), trials=200),
    "quick": GroupErrorProfile(epsilons=_log_grid(13), trials=2000),
    "paper": GroupErrorProfile(epsilons=_log_grid(25), trials=20000),
}

#: The public list of race categories of the Adult data (from ``adult.names``).
ADULT_RACES: tuple[str, ...] = (
    "White",
    "Black",
    "Asian-Pac-Islander",
    "Amer-Indian-Eskimo",
    "Other",
)

STRATEGIES: tuple[str, ...] = (
    "global",
    "per-group (parallel)",
    "per-group (sequential)",
)


def _group_grid(config: GroupErrorProfile) -> list[dict[str, Any]]:
    return [{"strategy": s} for s in STRATEGIES]


@register(
    name="dp_group_error",
    title="Per-group error: one global private mean vs per-group means (Adult)",
    profiles=_GROUP_PROFILES,
    grid=_group_grid,
    datasets=lambda config: ["adult/adult.data"],
)
def dp_group_error(
    config: GroupErrorProfile,
    cell: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    cache: Cache | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Measure each group's error of one estimation strategy over all epsilons.

    The group sizes are treated as public here (as if taken from a published census
    table); the chapters on stratification return to what that assumption costs.
    """
    from dpnotes.data import load_adult

    train, _ = load_adult()
    values = train[config.variable].to_numpy(dtype=float)
    labels = train[config.group].astype(str).to_numpy()
    lower, upper = config.bounds
    trials, k = int(config.trials), len(ADULT_RACES)
    members = {g: values[labels == g] for g in ADULT_RACES}
    rows = []
    # The data are the same in every trial, so the clipped means are computed once and
    # each trial draws its own Laplace noise: the same mechanism as laplace_mean, with
    # the trials as an array axis instead of a copy of the data per trial.
    clipped_mean = {
        g: float(np.clip(x, lower, upper).mean()) for g, x in members.items()
    }
    overall = float(np.clip(values, lower, upper).mean())
    for epsilon in config.epsilons:
        if cell["strategy"] == "global":
            # One release for everyone: every group receives the same estimate.
            shared = laplace_mechanism(
                np.full(trials, overall),
                sensitivity=(upper - lower) / values.size,
                epsilon=epsilon,
                rng=rng,
            )
            estimates = {g: shared for g in ADULT_RACES}
        else:
            # Disjoint groups: parallel composition gives each the full budget; without
            # it, k releases would have to split the budget sequentially.
            budget = (
                epsilon if cell["strategy"] == "per-group (parallel)" else epsilon / k
            )
            estimates = {
                g: laplace_mechanism(
                    np.full(trials, clipped_mean[g]),
                    sensitivity=(upper - lower) / x.size,
                    epsilon=budget,
                    rng=rng,
                )
                for g, x in members.items()
            }
        for g, x in members.items():
            err = np.asarray(estimates[g]) - x.mean()
            rows.append(
                {
                    "epsilon": epsilon,
                    "group": g,
                    "group_size": int(x.size),
                    "true_mean": float(x.mean()),
                    "mae": float(np.mean(np.abs(err))),
                    "rmse": float(np.sqrt(np.mean(err**2))),
                    "bias": float(np.mean(err)),
                }
            )
    return pd.DataFrame(rows)
