"""Combine the stored profiles of an experiment, data set by data set.

A paper-profile run can take days on a CPU and is stored as a *partial* result while it
runs; its data sets finish at different times. A chapter then wants, for each data set,
the best numbers that exist: the paper profile's where it has finished whole seeds, the
quick profile's elsewhere. :func:`load_per_dataset` makes that choice explicitly and
records it, so that a caption can say, for every data set, which profile and which seeds
a table or figure shows.

Only *complete seeds* are taken: a seed counts for a data set when every cell of the
profile's grid for that data set and seed is in the stored table. A half-computed seed
would otherwise mix methods that were run with methods that were not.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from dpnotes import report
from dpnotes.lab.registry import get_experiment
from dpnotes.lab.runner import load_or_run, load_stored, profile_with
from dpnotes.lab.store import StoredResult

__all__ = [
    "Combined",
    "Source",
    "cells_left",
    "complete_seeds",
    "load_per_dataset",
    "unfinished_text",
]


@dataclasses.dataclass(frozen=True)
class Source:
    """Where one data set's rows come from.

    ``cells_done`` and ``cells`` count the profile's grid cells of this data set: how
    many are stored, of how many.
    """

    profile: str
    seeds: tuple[int, ...]
    partial: bool
    cells_done: int
    cells: int

    def describe(self) -> str:
        """Return e.g. ``"profile paper (partial: 12 of 20 cells computed), seed 0"``.

        The seeds are the complete ones taken from that profile. A data set whose
        every cell is computed is not called partial, even while the profile's other
        data sets are.
        """
        profile = f"profile {self.profile}"
        if self.partial and self.cells_done < self.cells:
            profile += f" (partial: {self.cells_done} of {self.cells} cells computed)"
        seeds = ", ".join(str(s) for s in self.seeds)
        return f"{profile}, seed{'s' if len(self.seeds) > 1 else ''} {seeds}"


@dataclasses.dataclass(frozen=True)
class Combined:
    """Rows of an experiment drawn, per data set, from the best stored profile."""

    experiment: str
    table: pd.DataFrame
    sources: Mapping[str, Source]

    @property
    def profiles(self) -> list[str]:
        """The profiles the table draws on, in first-use order."""
        return list(dict.fromkeys(s.profile for s in self.sources.values()))

    def caption(
        self,
        names: Mapping[str, str] | None = None,
        *,
        datasets: Sequence[str] | None = None,
    ) -> str:
        """Return a caption sentence naming each data set's profile and seeds.

        Args:
            names: Display names of the data sets (default: their keys).
            datasets: Only these data sets (a figure that shows some of them).

        Raises:
            ValueError: If ``datasets`` names a data set the table does not hold.
        """
        names = names or {}
        chosen = list(self.sources) if datasets is None else list(datasets)
        unknown = [d for d in chosen if d not in self.sources]
        if unknown:
            raise ValueError(
                f"no rows of data set(s) {unknown} in {self.experiment!r}; it holds "
                f"{list(self.sources)}."
            )
        sources = {d: self.sources[d] for d in chosen}
        parts = [f"{names.get(d, d)}: {s.describe()}" for d, s in sources.items()]
        profiles = dict.fromkeys(s.profile for s in sources.values())
        commands = " or ".join(
            f"python -m dpnotes run {self.experiment} --profile {p}" for p in profiles
        )
        return (
            f"Experiment {self.experiment}; {'; '.join(parts)}. Regenerate with: "
            f"{commands}."
        )


def _norm(value: Any) -> Any:
    # Grid cells hold None where a table holds NaN, and ints where it holds floats.
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return str(value)


def _cells_of(stored: StoredResult, dataset: str) -> list[tuple[int, bool]]:
    """Return ``(seed, stored)`` for each grid cell of ``dataset`` in the profile."""
    grid = get_experiment(stored.experiment).cells(stored.profile)
    if not grid or not {"dataset", "seed"} <= set(grid[0]):
        raise ValueError(
            f"experiment {stored.experiment!r} has no dataset and seed in its grid "
            "cells; combine its profiles by hand."
        )
    keys = list(grid[0])
    missing = [k for k in keys if k not in stored.table.columns]
    if missing:
        raise ValueError(
            f"the stored table of {stored.experiment!r} lacks the cell column(s) "
            f"{missing}; rerun it with the current code."
        )
    present = {
        tuple(_norm(v) for v in row)
        for row in stored.table[keys].drop_duplicates().itertuples(index=False)
    }
    return [
        (int(cell["seed"]), tuple(_norm(cell[k]) for k in keys) in present)
        for cell in grid
        if cell["dataset"] == dataset
    ]


def complete_seeds(stored: StoredResult, dataset: str) -> list[int]:
    """Return the seeds whose every grid cell for ``dataset`` is in the stored table.

    Args:
        stored: A stored result (possibly partial) whose grid cells name ``dataset``
            and ``seed``.
        dataset: The data set.

    Raises:
        ValueError: If the experiment's grid has no ``dataset`` or ``seed`` key.
    """
    seeds: dict[int, bool] = {}
    for seed, found in _cells_of(stored, dataset):
        seeds[seed] = seeds.get(seed, True) and found
    return sorted(s for s, ok in seeds.items() if ok)


def _dataset_settings(stored: StoredResult, dataset: str) -> Any:
    datasets = stored.config.get("datasets")
    if isinstance(datasets, Mapping):
        return datasets.get(dataset)
    return None


def load_per_dataset(
    name: str,
    *,
    profiles: Sequence[str] = ("paper", "quick"),
    root: str | os.PathLike[str] | None = None,
    settings: Mapping[str, object] | None = None,
) -> Combined:
    """Return an experiment's rows, per data set, from the best stored profile.

    For each data set, the first profile in ``profiles`` with at least one complete seed
    is taken, restricted to its complete seeds, unless a later profile ran the same
    settings for that data set (equal ``config["datasets"][dataset]``) on more complete
    seeds: then that one is taken, since more seeds of the same computation show the
    spread. A data set that only a partial run has begun, without a complete seed, is
    left out until it has one. The last profile is computed (as :func:`load_or_run`
    does) when nothing is stored for it; earlier ones are read only, partial results
    included.

    Args:
        name: The experiment; its grid cells must have ``dataset`` and ``seed`` keys.
        profiles: Profiles in order of preference; the last one is the fallback.
        root: The results root (default: the configured one).
        settings: Settings of the derived profiles to load instead (``{"state":
            "NY"}``: :func:`~dpnotes.lab.runner.profile_with`).

    Returns:
        A :class:`Combined` with the concatenated rows and their sources.

    Raises:
        ValueError: If ``profiles`` is empty or no profile has a complete seed of some
            data set of the fallback profile.
    """
    if not profiles:
        raise ValueError("profiles is empty; name at least one, e.g. ('quick',).")
    *first, last = [profile_with(name, p, settings) for p in profiles]
    stored: list[StoredResult] = []
    for profile in first:
        result = load_stored(name, profile, root=root, allow_partial=True)
        if result is not None:
            stored.append(result)
    stored.append(load_or_run(name, prefer=(last,), fallback=last, root=root))

    datasets = list(
        dict.fromkeys(
            d for result in stored for d in result.table["dataset"].unique().tolist()
        )
    )
    parts: list[pd.DataFrame] = []
    sources: dict[str, Source] = {}
    fallback_datasets = set(stored[-1].table["dataset"].unique().tolist())
    for dataset in datasets:
        options = [(r, complete_seeds(r, dataset)) for r in stored]
        options = [(r, s) for r, s in options if s]
        if not options and dataset not in fallback_datasets:
            # Only a partial run has begun this data set: nothing to show yet.
            continue
        if not options:
            raise ValueError(
                f"no stored profile of {name!r} has a complete seed of {dataset!r}; "
                f"run python -m dpnotes run {name} --profile {last}."
            )
        best, seeds = options[0]
        for result, result_seeds in options[1:]:
            settings = _dataset_settings(result, dataset)
            # Without per-data-set settings to compare, the profiles are not the same.
            same = settings is not None and settings == _dataset_settings(best, dataset)
            if same and len(result_seeds) > len(seeds):
                best, seeds = result, result_seeds
        table = best.table
        parts.append(table[(table["dataset"] == dataset) & table["seed"].isin(seeds)])
        cells = _cells_of(best, dataset)
        sources[dataset] = Source(
            profile=best.profile,
            seeds=tuple(seeds),
            partial=best.partial,
            cells_done=sum(found for _, found in cells),
            cells=len(cells),
        )
    return Combined(
        experiment=name,
        table=pd.concat(parts, ignore_index=True),
        sources=sources,
    )


# ------------------------------------------------------------ unfinished paper profiles


def unfinished_text(
    results: Mapping[str, StoredResult | None],
    names: Mapping[str, str] | None = None,
) -> str:
    """Say which stored profiles are unfinished, how far each got, and which seeds.

    For a partial result whose grid cells name a data set and a seed, each data set with
    a seed still incomplete gets the seeds whose cells are all stored (those a chapter
    reads: :func:`complete_seeds`) and those to come.

    Args:
        results: Experiment name -> its stored result (partial ones included:
            :func:`~dpnotes.lab.runner.load_stored` with ``allow_partial=True``), or
            None where nothing is stored.
        names: Data set -> the name to print (default: the data set's key).

    Returns:
        ``"dpsgdf_clip 24 of 30 cells, MNIST seeds 0–3 whole and seed 4 to come;
        dpsgdf_budget ...; 32 cells left in all"`` (the count: :func:`cells_left`), or
        "" when every one is complete.

    Raises:
        TypeError: If a value is neither a stored result nor None.
    """
    _check_stored(results, "unfinished_text")
    names = names or {}
    parts = []
    for name, result in results.items():
        if result is None:
            parts.append(f"{name} not run")
        elif result.partial:
            done = len(result.meta.get("cells_done", []))
            seeds = [
                f"{names.get(d, d)} {have} and {to_come}"
                for d, have, to_come in _unfinished_seeds(result)
            ]
            parts.append(
                ", ".join(
                    [f"{name} {done} of {result.meta.get('cells')} cells", *seeds]
                )
            )
    left = cells_left(results)
    return "; ".join(parts) + (f"; {left} cells left in all" if left else "")


def _unfinished_seeds(result: StoredResult) -> list[tuple[str, str, str]]:
    """``(data set, "seeds 0–2 whole", "seeds 3, 4 to come")`` for each data set of a
    partial result with a seed still incomplete (none when its grid's cells name no data
    set and seed, or its table has no rows)."""
    config = result.meta.get("config")
    if not isinstance(config, Mapping) or result.table.empty:
        return []
    grid = get_experiment(result.experiment).cells(result.profile)
    if not grid or not {"dataset", "seed"} <= set(grid[0]):
        return []
    out = []
    for dataset in dict.fromkeys(cell["dataset"] for cell in grid):
        whole = complete_seeds(result, dataset)
        seeds = dict.fromkeys(int(c["seed"]) for c in grid if c["dataset"] == dataset)
        to_come = [s for s in seeds if s not in whole]
        if to_come:
            have = f"{report.seeds_text(whole)} whole" if whole else "no seed whole"
            out.append((dataset, have, f"{report.seeds_text(to_come)} to come"))
    return out


def cells_left(results: Mapping[str, StoredResult | None]) -> int:
    """Count the cells the stored partial profiles still lack, in all.

    Args:
        results: As for :func:`unfinished_text`; a result not stored (None) is not
            counted (its grid is the experiment's; :func:`unfinished_text` names it
            "not run").

    Returns:
        The number of grid cells the partial results have not stored (0 when every
        result is complete).

    Raises:
        TypeError: If a value is neither a stored result nor None.
    """
    _check_stored(results, "cells_left")
    left = 0
    for result in results.values():
        if result is not None and result.partial:
            meta = result.meta
            left += int(meta.get("cells") or 0) - len(meta.get("cells_done", []))
    return left


def _check_stored(results: Mapping[str, object], caller: str) -> None:
    """Raise TypeError for a value that is neither a stored result nor None."""
    for name, result in results.items():
        if result is None:
            continue
        meta = getattr(result, "meta", None)
        if not isinstance(meta, Mapping) or not hasattr(result, "partial"):
            raise TypeError(
                f"{caller}: {name!r} is a {type(result).__name__}, not a stored "
                "result (load it with load_stored(..., allow_partial=True))."
            )
