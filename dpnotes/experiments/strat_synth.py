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

With ``cause`` (a derived profile, ``--set cause=NAME``) one difference between the
authors' code and ours is switched on alone, to measure what it moves
(:data:`CAUSES`; the pieces are in :mod:`dpnotes.synth.authors`). The gap in scale is
no cause setting: it is ``--set epsilons=10+20+50``.

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
from dpnotes.synth import authors
from dpnotes.synth.evaluate import (
    PARITY_CONVENTIONS,
    evaluate_synthetic,
    group_code,
    group_keys,
)
from dpnotes.synth.stratified import Stratified, strata_of, stratum_weights
from dpnotes.validation import check_choice

__all__ = ["CAUSES", "STRATIFICATIONS", "SYNTHESIZERS", "Cause", "make_synthesizer"]

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


@dataclass(frozen=True)
class Cause:
    """One difference of the authors' code from ours, as a setting of ``strat_synth``.

    Attributes:
        description: What it switches on.
        synthesizers: The synthesizers it applies to.
        stratifications: The stratifications it applies to.
        private: Whether the synthetic data stay differentially private.
    """

    description: str
    synthesizers: tuple[str, ...] = SYNTHESIZERS
    stratifications: tuple[str, ...] = STRATIFICATIONS
    private: bool = True


_STRATIFIED = tuple(s for s in STRATIFICATIONS if s != "vanilla")

#: The cause settings (``none``: ours).
CAUSES: dict[str, Cause] = {
    "none": Cause("the package's settings"),
    "data_domains": Cause(
        "every synthesizer fitted on the domain of the values its records hold "
        "(inside a stratum: the stratum's values), as SmartNoise infers it",
        private=False,
    ),
    "authors_gem": Cause(
        "GEM with the authors' settings (100 rounds, 1000 components, alpha 0.67, "
        "learning rate 1e-4)",
        synthesizers=("GEM",),
    ),
    "aim_2way": Cause(
        "AIM with SmartNoise's default workload, every 2-way marginal",
        synthesizers=("AIM",),
    ),
    "recode_vanilla": Cause(
        "vanilla MST and AIM samples re-coded by the values present in the sample, "
        "as the authors' evaluation does",
        synthesizers=("MST", "AIM"),
        stratifications=("vanilla",),
    ),
    "completion_order": Cause(
        "stratum row counts permuted as the authors' parallel wrapper does "
        "(completion order emulated by stratum size)",
        synthesizers=("MST", "AIM"),
        stratifications=_STRATIFIED,
        private=False,
    ),
}


def check_cause(config: SynthesisProfile) -> Cause:
    """Return the profile's :class:`Cause` after checking it applies to the grid.

    Raises:
        ValueError: For an unknown cause, or a grid with a synthesizer or
            stratification the cause does not apply to (the message lists those it
            does).
    """
    cause = CAUSES[check_choice(config.cause, CAUSES, "cause")]
    for what, have, valid in (
        ("synthesizers", config.synthesizers, cause.synthesizers),
        ("stratifications", config.stratifications, cause.stratifications),
    ):
        extra = [x for x in have if x not in valid]
        if extra:
            joined = "+".join(valid)
            raise ValueError(
                f"cause {config.cause!r} does not apply to {what} {extra}; run it "
                f"with {what} among {list(valid)} (--set {what}={joined})."
            )
    return cause


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
        cause: One of :data:`CAUSES`: a difference of the authors' code switched on
            alone (``"none"``: ours). Its grid may hold only the synthesizers and
            stratifications it applies to.
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
    cause: str = "none"


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
    check_cause(config)
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


def _cause_params(config: SynthesisProfile) -> dict[str, dict[str, Any]]:
    """The profile's synthesizer parameters with its cause's settings on top."""
    params = {k: dict(v) for k, v in config.params.items()}
    if config.cause == "authors_gem":
        params.setdefault("GEM", {}).update(authors.AUTHORS_GEM)
    return params


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
    cause = config.cause
    base = make_synthesizer(
        cell["synthesizer"],
        epsilon=cell["epsilon"],
        delta=config.delta,
        params=_cause_params(config),
    )
    if cause == "data_domains":
        base = authors.DataDomain(base)
    elif cause == "aim_2way":
        base = authors.TwoWayWorkload(base)
    started = time.perf_counter()
    if cell["strata"] == "vanilla":
        model = base.fit(train, EMPLOYMENT_DOMAIN, rng=rng)
    else:
        by = GROUPINGS[cell["strata"]]
        weights = stratum_weights(test, EMPLOYMENT_DOMAIN, by)
        wrapper = (
            authors.CompletionOrderStratified
            if cause == "completion_order"
            else Stratified
        )
        model = wrapper(base, by, weights).fit(train, EMPLOYMENT_DOMAIN, rng=rng)
    fit_s = time.perf_counter() - started
    synth = model.sample(len(train), rng=rng)
    if cause == "recode_vanilla":
        synth = authors.recode_present(synth)
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
