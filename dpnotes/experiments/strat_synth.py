"""Experiments of the stratified synthetic-data chapters (Figures 4, 5, 7, 9, Table 3).

One cell is one synthesizer (MST, AIM, GEM), one stratification (none, SEX, RAC1P,
SEX x RAC1P), one epsilon and one seed, on one data set. The cell fits on the training
split only, samples as many rows as the training split has, and evaluates against the
real data:

- workload error over all 3-way marginals, overall and within each group, and the
  parity error over it (appendix Figure 9);
- parity error of the means of all ten variables (Figure 5);
- classifiers trained on the synthetic rows and tested on the real test split:
  accuracy overall and per group, demographic parity, the largest false-negative-rate
  gap (Figure 4, appendix Figure 7 b-c), and the largest gap between group means of
  the label;
- with ``parity="authors"`` (a derived profile, ``--set parity=authors``), also the
  parity error of the means as the authors' code scores it and the paper's Figure 7a
  quantity, the largest relative error of a group's mean
  (:func:`dpnotes.synth.evaluate.mean_parity_error_authors`,
  :func:`dpnotes.synth.evaluate.max_mean_error`), on the same synthetic tables;
- the fit time.

The split is fixed per data set (80/20, seed 0) so every cell sees the same training
records. The stratum weights are the proportions of the test split: a disjoint table
that no synthesizer sees, standing in for published population totals.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpnotes.data.employment import (
    EMPLOYMENT_DOMAIN,
    EMPLOYMENT_FILES,
    split_employment,
)
from dpnotes.data.employment import EMPLOYMENT_GROUPINGS as GROUPINGS
from dpnotes.lab.registry import Cache, Profile, register
from dpnotes.synth.evaluate import (
    PARITY_CONVENTIONS,
    evaluate_synthetic,
    group_code,
    group_keys,
)
from dpnotes.synth.stratified import Stratified, strata_of, stratum_weights
from dpnotes.validation import check_choice

__all__ = ["STRATIFICATIONS", "SYNTHESIZERS", "make_synthesizer"]

#: Stratifications of the paper (and the groupings every method is evaluated on).
STRATIFICATIONS: tuple[str, ...] = ("vanilla", *GROUPINGS)
#: The synthesizers the experiments run (:func:`make_synthesizer` makes each).
SYNTHESIZERS: tuple[str, ...] = ("MST", "AIM", "GEM")


def make_synthesizer(name: str, *, epsilon: float, delta: float, params: dict):
    """Build an unfitted synthesizer by name with its per-profile parameters."""
    if name == "MST":
        from dpnotes.synth.mst import MST

        return MST(epsilon=epsilon, delta=delta, **params.get("MST", {}))
    if name == "AIM":
        from dpnotes.synth.aim import AIM

        return AIM(epsilon=epsilon, delta=delta, **params.get("AIM", {}))
    if name == "GEM":
        from dpnotes.synth.gem import GEM

        return GEM(epsilon=epsilon, delta=delta, **params.get("GEM", {}))
    raise ValueError(f"unknown synthesizer {name!r}; choose one of {SYNTHESIZERS}.")


# --- the grid ---------------------------------------------------------------------


@dataclass(frozen=True)
class SynthesisProfile(Profile):
    """Settings of ``strat_synth``.

    Attributes:
        datasets: ACSEmployment data sets (keys of ``EMPLOYMENT_FILES``).
        synthesizers: Of :data:`SYNTHESIZERS`.
        stratifications: Of :data:`STRATIFICATIONS`.
        epsilons: Total budgets (each synthesizer's, in (epsilon, delta)-DP).
        seeds: Seeds of the synthesizer and the classifiers (each its own cell).
        classifiers: Trained on the synthetic rows, tested on the real test split.
        rows: Keep this many rows of the data set (None: all).
        delta: The delta of every synthesizer.
        params: ``{synthesizer: keyword arguments}`` beyond the defaults.
        parity: How the means' parity error is scored: ``"ours"`` (codes from 1,
            mean over the variables, every group present, ``omega = 1/k``) or
            ``"authors"``, which adds the scores of the authors' code (codes from 0,
            summed over the variables, the 12 large sex x race groups,
            ``omega = 1/12``; ``generate_results_from_synth_data.py`` lines 213-243 and
            325-391 in ``lurosenb/stratify_dp``) and the paper's Figure 7a quantity
            beside ours. The synthetic tables are the same either way (each cell's
            random stream depends on the cell, not on this setting).
    """

    datasets: tuple[str, ...]
    synthesizers: tuple[str, ...]
    stratifications: tuple[str, ...]
    epsilons: tuple[float, ...]
    seeds: tuple[int, ...]
    classifiers: tuple[str, ...] = ("logistic", "boosting")
    rows: int | None = None
    delta: float = 1e-9
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    parity: str = "ours"


_PROFILES = {
    "smoke": SynthesisProfile(
        datasets=("NY-sample",),
        synthesizers=("MST",),
        stratifications=("vanilla", "SEX"),
        epsilons=(1.0,),
        seeds=(0,),
        classifiers=("logistic",),
        rows=2000,
    ),
    "quick": SynthesisProfile(
        datasets=("NY-sample",),
        synthesizers=("MST", "AIM", "GEM"),
        stratifications=tuple(STRATIFICATIONS),
        epsilons=(1.0,),
        seeds=(0,),
    ),
    "paper": SynthesisProfile(
        datasets=("NY-sample", "NM"),
        synthesizers=tuple(SYNTHESIZERS),
        stratifications=tuple(STRATIFICATIONS),
        epsilons=(0.01, 0.05, 0.1, 0.5, 1.0, 5.0),
        seeds=(0, 1, 2, 3, 4),
    ),
}


@dataclass(frozen=True)
class GroupSizesProfile(Profile):
    """Settings of ``synth_group_sizes``: the data sets whose groups are counted."""

    datasets: tuple[str, ...]


def _grid(config: SynthesisProfile) -> list[dict[str, Any]]:
    check_choice(config.parity, PARITY_CONVENTIONS, "parity convention")
    # Seeds vary slowest within a data set: a partial run of the paper profile then
    # covers every synthesizer, stratification and epsilon once before repeating.
    return [
        {
            "dataset": d,
            "synthesizer": s,
            "strata": st,
            "epsilon": e,
            "seed": seed,
        }
        for d in config.datasets
        for seed in config.seeds
        for s in config.synthesizers
        for st in config.stratifications
        for e in config.epsilons
    ]


_SPLITS: dict[tuple, tuple[pd.DataFrame, pd.DataFrame]] = {}


def _cached_split(source: str, rows: int | None):
    key = (source, rows)
    if key not in _SPLITS:
        _SPLITS[key] = split_employment(source, rows=rows)
    return _SPLITS[key]


@register(
    name="strat_synth",
    title="MST, AIM and GEM, vanilla or stratified, evaluated on ACSEmployment",
    profiles=_PROFILES,
    grid=_grid,
    datasets=lambda config: [EMPLOYMENT_FILES[d] for d in config.datasets],
    figure="Figures 4, 5, 7, 9 of the stratification paper",
)
def run_cell(
    config: SynthesisProfile,
    cell,
    *,
    rng: np.random.Generator,
    cache: Cache | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    train, test = _cached_split(cell["dataset"], config.rows)
    base = make_synthesizer(
        cell["synthesizer"],
        epsilon=cell["epsilon"],
        delta=config.delta,
        params=config.params,
    )
    started = time.perf_counter()
    if cell["strata"] == "vanilla":
        model = base.fit(train, EMPLOYMENT_DOMAIN, rng=rng)
    else:
        by = GROUPINGS[cell["strata"]]
        weights = stratum_weights(test, EMPLOYMENT_DOMAIN, by)
        model = Stratified(base, by, weights).fit(train, EMPLOYMENT_DOMAIN, rng=rng)
    fit_s = time.perf_counter() - started
    synth = model.sample(len(train), rng=rng)
    rows = evaluate_synthetic(
        train,
        test,
        synth,
        classifiers=config.classifiers,
        seed=cell["seed"],
        parity=config.parity,
    )
    extra = pd.DataFrame(
        [
            {
                "metric": "fit_seconds",
                "grouping": "overall",
                "group": "all",
                "value": fit_s,
            },
            {
                "metric": "rho_spent_share",
                "grouping": "overall",
                "group": "all",
                "value": model.rho_spent / base.rho,
            },
        ]
    )
    return pd.concat([rows, extra], ignore_index=True)


@register(
    name="synth_group_sizes",
    title="Group sizes of the stratification attributes (Table 3)",
    profiles={
        "smoke": GroupSizesProfile(datasets=("NY-sample",)),
        "quick": GroupSizesProfile(datasets=("NY-sample", "NM")),
        "paper": GroupSizesProfile(datasets=("NY-sample", "NM")),
    },
    grid=lambda config: [{"dataset": d} for d in config.datasets],
    datasets=lambda config: [EMPLOYMENT_FILES[d] for d in config.datasets],
    figure="Table 3 of the stratification paper",
)
def group_sizes_cell(
    config: GroupSizesProfile,
    cell,
    *,
    rng: np.random.Generator,
    cache: Cache | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    del rng  # descriptive, no randomness
    train, test = split_employment(cell["dataset"])
    rows = []
    for grouping, by in GROUPINGS.items():
        for i, stratum in enumerate(strata_of(EMPLOYMENT_DOMAIN, by)):
            for name, part in (("train", train), ("test", test)):
                rows.append(
                    {
                        "grouping": grouping,
                        "group": group_code(stratum),
                        "split": name,
                        "count": int(np.sum(group_keys(part, by) == i)),
                        "rows": len(part),
                    }
                )
    return pd.DataFrame(rows)
