"""Adopt: store a profile's cells from the stored results of profiles it narrows.

A derived profile that only narrows the grid (``paper@parity=authors,seeds=0+1`` of
``paper@parity=authors``) computes, cell for cell, what the wider profile computes:
a cell's rows depend only on the code, the profile's settings that its run reads and
the cell itself (its random stream is spawned from the root seed and the cell's
content, ``dpnotes.lab.runner.run_cell``). The settings that only *enumerate*
the grid are declared per experiment (:data:`GRID_SETTINGS`,
:func:`declare_grid_settings`); no other setting may differ.

:func:`adopt` copies the stored rows of exactly the narrower profile's cells into a
result of its own, without recomputing hours of cells, and proves it first:

1. it refuses, before any work, a source that is not stored, damaged, stale or
   computed by uncommitted code; settings that differ beyond the declared grid
   settings; a grid that is not a subset of the source's; cells the source has not
   stored; data files that changed since the source read them; and a stored result of
   the narrower profile that is complete already (a partial one may be replaced);
2. it recomputes ``cells`` of the adopted cells under the narrower profile and the
   current code, each with the random stream the runner gives it, in a fresh run
   cache, and compares them with the stored rows exactly, with restamp's comparison
   (:func:`~dpnotes.lab.restamp.check_cells`);
3. only if every checked cell is equal it writes the rows, in the narrower grid's
   order as a run would, through the store's atomic write
   (:func:`~dpnotes.lab.store.write_result`).

Several sources may be named: then the profile's grid must lie in the union of
theirs, each cell is taken from the first source that stores it, and ``cells``
cells are recomputed *from each source* that gives any. This is how a profile whose
grid grew (a data set added to ``paper``) is stored from the result of the old grid
(kept under a derived name such as ``paper@datasets=A+B``) and a derived profile
that computed the new cells (``paper@datasets=C``), without recomputing either.

The new ``meta.json`` is stamped with the narrower profile's settings and config hash,
and keeps the source's record of how the cells were computed: its code version,
packages, machine (``device``, ``workers``), dates and wall time, and its ``runs``
(each run's ``cells_done`` cut to the adopted cells), so that the store's account of
which machine computed which cells, and in how long, stays true. Its ``adopted``
entry names the source (profile, config hash, code version, table sha256), the
settings that differ, the cells checked and the code and machine that checked them.
From several sources, every run of every source is listed in ``runs`` (a source's
own last run as an entry of its own), the top-level provenance is the first
source's, and ``adopted["sources"]`` names each source with the cells taken from it.
Per-cell wall times live in the rows (the ``*_seconds`` columns or metrics), which
are copied unchanged.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpnotes.lab.registry import (
    Experiment,
    check_profile,
    config_hash,
    get_experiment,
    split_profile,
    stable_hash,
    to_jsonable,
)
from dpnotes.lab.restamp import CellCheck, check_cells, pick_cells, stored_cells
from dpnotes.lab.runner import (
    code_version,
    device_info,
    provenance,
    stale_reason,
)
from dpnotes.lab.store import (
    LOCK,
    META,
    StoredResult,
    inspect_result,
    result_folder,
    run_lock,
    write_result,
)
from dpnotes.report import machine_name
from dpnotes.validation import check_int

__all__ = [
    "GRID_SETTINGS",
    "AdoptReport",
    "adopt",
    "declare_grid_settings",
    "grid_settings",
]

#: Per experiment, the settings that only select which cells its grid holds: no cell
#: reads them, so a cell computes the same rows under any of their values that
#: lists it. ``strat_synth``'s run reads ``rows``, ``delta``, ``params``, ``cause``,
#: ``classifiers`` and ``parity`` from its settings and takes data set,
#: synthesizer, stratification, epsilon and seed from the cell.
GRID_SETTINGS: dict[str, tuple[str, ...]] = {
    "strat_synth": ("datasets", "synthesizers", "stratifications", "epsilons", "seeds"),
    # A cell {dataset, epsilon, seed} reads the methods, rows, SAGE, MST and AIM
    # settings, fidelity and evaluations from its settings, never these three.
    "spending_e2e": ("datasets", "epsilons", "seeds"),
}


#: The top-level keys of ``meta.json`` that say how a run computed its cells.
_PROVENANCE = ("code_version", "packages", "device", "workers", "started", "date")


def declare_grid_settings(settings: Mapping[str, Sequence[str]]) -> None:
    """Declare the settings of experiments that only select cells of their grid.

    Declare a setting only if no cell's computation reads it (the cell carries
    the value it selects); :func:`adopt` recomputes a sample of cells to confirm it.

    Args:
        settings: ``{experiment name: setting names}``; replaces an earlier
            declaration of that experiment.

    Raises:
        TypeError: If the names are not a list of strings.
    """
    for name, names in settings.items():
        if isinstance(names, str) or not all(isinstance(n, str) for n in names):
            raise TypeError(
                f"declare_grid_settings: give {name!r} a list of setting names, got "
                f"{names!r}."
            )
        GRID_SETTINGS[str(name)] = tuple(names)


def grid_settings(experiment: Experiment) -> tuple[str, ...]:
    """Return the declared grid-selecting settings of ``experiment`` (checked).

    Raises:
        ValueError: If a declared name is not one of the experiment's settings.
    """
    declared = GRID_SETTINGS.get(experiment.name, ())
    own = set(experiment.settings("paper"))
    unknown = [n for n in declared if n not in own]
    if unknown:
        raise ValueError(
            f"{experiment.name}: the declared grid settings {unknown} are not among "
            f"its settings {sorted(own)}; correct GRID_SETTINGS."
        )
    return declared


@dataclasses.dataclass(frozen=True)
class AdoptReport:
    """What :func:`adopt` checked and stored.

    Attributes:
        experiment: The experiment.
        profile: The profile adopted into (the narrower one).
        source: The stored profile the rows come from (several joined by " + ").
        seed: The root seed of both results.
        cells: How many cells the narrower profile has (all adopted on success).
        checks: The recomputed cells and how they compare with the stored rows.
        seconds: Wall time of the checks.
        path: Where the result was stored (``None`` when nothing was written).
    """

    experiment: str
    profile: str
    source: str
    seed: int
    cells: int
    checks: tuple[CellCheck, ...]
    seconds: float
    path: Path | None = None

    @property
    def equal(self) -> bool:
        """Whether every recomputed cell equals its stored rows."""
        return all(c.equal for c in self.checks)

    @property
    def _sources(self) -> str:
        return " and ".join(f"[{s}]" for s in self.source.split(" + "))

    def summary(self) -> str:
        """Return a few lines for the command line."""
        head = f"{self.experiment} [{self.profile}] seed {self.seed}"
        checked = len(self.checks)
        if self.equal:
            where = f"stored in {self.path}" if self.path else "nothing written"
            took = ", ".join(f"{c.seconds:.1f} s" for c in self.checks)
            return (
                f"{head}: {checked} of {self.cells} cells recomputed under the current "
                f"code equal to the stored rows of {self._sources} ({took}); adopted "
                f"all {self.cells} cells; {where}"
            )
        lines = [
            f"{head}: cells differ from the stored rows of {self._sources}; nothing "
            f"written ({checked} cells checked)"
        ]
        for check in self.checks:
            if not check.equal:
                lines.append(f"  {dict(check.cell)}:")
                lines.extend(f"    {d}" for d in check.differences)
        return "\n".join(lines)


def _command(name: str, profile: str, extra: str = "") -> str:
    base, settings = split_profile(profile)
    sets = "".join(f" --set {k}={v}" for k, v in settings.items())
    return f"python -m dpnotes {name} --profile {base}{sets}{extra}"


def _source(experiment: Experiment, source: str, seed: int, root) -> StoredResult:
    """Return the trusted, current stored source result, or say what to do."""
    name = experiment.name
    folder = result_folder(root, name, source, seed)
    stored, why = inspect_result(folder, experiment=name, profile=source)
    if stored is None:
        run = _command(f"run {name}", source)
        if why:
            raise ValueError(
                f"the stored result of {name} [{source}] seed {seed} is damaged "
                f"({why}); there is nothing to adopt. Recompute it with {run}."
            )
        raise ValueError(
            f"nothing is stored for {name} [{source}] seed {seed} under {folder}; "
            f"there is nothing to adopt. Compute it with {run}."
        )
    if stored.config_hash != config_hash(experiment, source):
        why = stale_reason(name, source, root=root, seed=seed)
        raise ValueError(
            f"the stored result of {name} [{source}] is stale ({why}): the current "
            "code has not been shown to compute its rows. Restamp it first with "
            f"{_command(f'restamp {name}', source)}, then adopt from it."
        )
    if str(stored.meta.get("code_version", "")).endswith(".dirty"):
        raise ValueError(
            f"the stored result of {name} [{source}] was computed by uncommitted code "
            f"({stored.meta.get('code_version')}); restamp it from a commit first "
            f"({_command(f'restamp {name}', source)})."
        )
    return stored


def _differing_settings(
    experiment: Experiment, profile: str, source: str
) -> dict[str, list[Any]]:
    """The settings whose values differ, ``{name: [source's, target's]}``; refuse
    any that is not a declared grid setting."""
    mine = to_jsonable(experiment.config(profile))
    theirs = to_jsonable(experiment.config(source))
    differ = {
        k: [theirs.get(k), mine.get(k)]
        for k in sorted({*mine, *theirs})
        if mine.get(k) != theirs.get(k)
    }
    allowed = set(grid_settings(experiment))
    beyond = {k: v for k, v in differ.items() if k not in allowed}
    if beyond:
        shown = "; ".join(
            f"{k}: {v[0]!r} there, {v[1]!r} here" for k, v in beyond.items()
        )
        only = (
            f"only {', '.join(sorted(allowed))} may differ"
            if allowed
            else "it declares no setting that only selects cells of its grid "
            "(dpnotes.lab.adopt.declare_grid_settings), so none may differ"
        )
        raise ValueError(
            f"{experiment.name} [{profile}] differs from [{source}] in settings its "
            f"cells compute with ({shown}); {only}. Its cells are other computations: "
            f"run them with {_command(f'run {experiment.name}', profile)}."
        )
    return differ


def _missing_command(
    name: str, source: str, missing: Sequence[Mapping[str, Any]], grid: Sequence[Any]
) -> str:
    """The ``run`` command that computes ``missing`` cells in the source profile."""
    only = ""
    for key in missing[0] if missing else {}:
        values = list(dict.fromkeys(str(c[key]) for c in missing))
        if len(values) < len({str(c[key]) for c in grid}):
            only += "".join(f" --only {key}={v}" for v in values)
    return _command(f"run {name}", source, only)


def _runs(meta: Mapping[str, Any], stored: Sequence[str], adopted: set[str]):
    """The source's record of which run computed which cell, cut to ``adopted``.

    Returns ``(runs, last)``: the earlier runs (``meta["runs"]``) that computed
    adopted cells, each with only those cells (and ``cells_in_source_run`` where
    that is fewer than it computed), and whether any adopted cell is one of the
    result's own last run (those no earlier run lists).
    """
    runs = []
    listed: set[str] = set()
    for entry in meta.get("runs") or []:
        done = list(entry.get("cells_done") or [])
        listed.update(done)
        kept = [h for h in done if h in adopted]
        if kept:
            run = {**entry, "cells_done": kept}
            if len(kept) < len(done):
                run["cells_in_source_run"] = len(done)
            runs.append(run)
    last = any(h in adopted and h not in listed for h in stored)
    return runs, last


def _sources_rows(
    experiment: Experiment, profile: str, stored: Sequence[StoredResult]
) -> tuple[
    list[dict[str, Any]], dict[str, pd.DataFrame], dict[str, int], list[list[str]]
]:
    """The narrower grid, its rows by cell hash, which source gives each cell, and
    each source's stored cells' hashes.

    A cell is taken from the first source (in the order given) that stores it.

    Raises:
        ValueError: If the grid is empty or not a subset of the sources' grids, a
            source's rows do not split into cells, or some cell is stored by none.
    """
    name = experiment.name
    named = " and ".join(f"[{s.profile}]" for s in stored)
    grid = experiment.cells(profile)
    if not grid:
        raise ValueError(f"{name} [{profile}] has no cells; there is nothing to adopt.")
    wider = {stable_hash(c) for s in stored for c in experiment.cells(s.profile)}
    outside = [c for c in grid if stable_hash(c) not in wider]
    if outside:
        whose = f"{named}'s grid" if len(stored) == 1 else f"the grids of {named}"
        raise ValueError(
            f"{len(outside)} of the {len(grid)} cells of {name} [{profile}] are not "
            f"cells of {whose} (the first: {outside[0]}); adopt only narrows a grid "
            "(or joins several). Compute them with "
            f"{_command(f'run {name}', profile)}."
        )
    rows: dict[str, pd.DataFrame] = {}
    origin: dict[str, int] = {}
    hashes: list[list[str]] = []
    for i, result in enumerate(stored):
        split = stored_cells(experiment, result)
        if any(r is None for _, r in split):
            raise ValueError(
                f"the stored rows of {name} [{result.profile}] cannot be split into "
                "its cells by their key columns (a cell writes a key in a format of "
                "its own); adopt cannot tell which rows are whose."
            )
        hashes.append([stable_hash(c) for c, _ in split])
        for c, r in split:
            h = stable_hash(c)
            if h not in rows:
                rows[h], origin[h] = r, i
    missing = [c for c in grid if stable_hash(c) not in rows]
    if missing:
        if len(stored) == 1:
            (only,) = stored
            held = (
                f"partial: {len(hashes[0])} of {only.meta.get('cells')} cells stored"
                if only.partial
                else "complete"
            )
            how = _missing_command(name, only.profile, missing, grid)
            where = f"stored in [{only.profile}] ({held}; the first missing: "
        else:
            how = _missing_command(name, profile, missing, grid)
            where = f"stored in any of {named} (the first missing: "
        raise ValueError(
            f"{len(missing)} of the {len(grid)} cells of {name} [{profile}] are not "
            f"{where}{missing[0]}). Compute them there with {how}, then adopt again."
        )
    rows = {h: rows[h] for h in map(stable_hash, grid)}
    origin = {h: origin[h] for h in rows}
    unused = [s.profile for i, s in enumerate(stored) if i not in set(origin.values())]
    if unused:
        raise ValueError(
            f"no cell of {name} [{profile}] is taken from {unused} (an earlier source "
            "stores them all); name only the sources it needs."
        )
    return grid, rows, origin, hashes


def _check_data(
    name: str, profile: str, stored: Sequence[StoredResult], here: Mapping[str, Any]
) -> None:
    """Refuse a data file that is not the one the sources' cells read: each file the
    profile reads must be recorded by some source, and by every source that records it
    with the same checksum."""
    for data in here["datasets"]:
        recorded = {
            s.profile: {d["name"]: d.get("sha256") for d in s.meta.get("datasets", [])}
            for s in stored
        }
        holders = [p for p, files in recorded.items() if data["name"] in files]
        for source in holders or [stored[0].profile]:
            sha = recorded[source].get(data["name"])
            if sha != data["sha256"]:
                raise ValueError(
                    f"the data file {data['name']} is not the one [{source}] was "
                    f"computed from (sha256 {sha} stored, {data['sha256']} here); "
                    f"compute {name} [{profile}] with "
                    f"{_command(f'run {name}', profile)}."
                )


def _source_names(source: str | Sequence[str]) -> tuple[str, ...]:
    """The source profiles, checked: at least one, each a profile name, none twice."""
    names = (source,) if isinstance(source, str) else tuple(source)
    if not names:
        raise ValueError("adopt needs a source profile (--from) to take cells from.")
    for name in names:
        check_profile(name)
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"the sources name {repeated} more than once; name each once.")
    return names


def adopt(
    name: str,
    profile: str,
    *,
    source: str | Sequence[str],
    cells: int = 2,
    cheapest: bool = False,
    sample_seed: int = 0,
    seed: int = 0,
    root: str | Path | None = None,
    progress: bool = False,
    allow_dirty: bool = False,
) -> AdoptReport:
    """Store ``profile``'s cells from ``source``'s stored rows, after checking a sample.

    See the module docstring for what is refused, checked and written.

    Args:
        name: A registered experiment.
        profile: The narrower profile to store, e.g.
            ``"paper@parity=authors,seeds=0+1"`` (what ``run --set`` names).
        source: The stored profile whose rows are adopted, e.g.
            ``"paper@parity=authors"``; it may be partial, as long as it holds
            every cell of ``profile``. Or several profiles: each cell is taken from
            the first that stores it, and together they must hold every cell.
        cells: How many adopted cells to recompute and compare (all if fewer),
            from each source.
        cheapest: Recompute the cells with the smallest stored wall times instead
            of a random sample.
        sample_seed: Seeds the random choice of cells.
        seed: The root seed of the source result, and of the new one.
        root: Results store (default: :func:`~dpnotes.lab.store.results_root`).
        progress: Let the recomputed cells draw their own progress bars.
        allow_dirty: Allow package code with uncommitted changes; the check then
            cites no commit, so this is for tests only.

    Returns:
        The report; ``report.equal`` says whether every checked cell agreed, and
        ``report.path`` where the result was stored (``None``: nothing written).

    Raises:
        ValueError: Before any cell is computed, for: an unknown experiment or
            profile; ``cells < 1``; ``profile`` equal to ``source``; a source that
            is not stored, damaged, stale or computed by uncommitted code (the
            message gives the ``run`` or ``restamp`` command); settings that differ
            beyond the grid settings of :data:`GRID_SETTINGS` (named); a grid that
            is not a subset of the source's; cells of ``profile`` that the source
            has not stored (counted, with the ``run`` command that computes them);
            a data file that changed since the source read it; a stored result of
            ``profile`` that is complete (current, or stale and not adopted whole
            into one of the sources) or damaged; a source repeated, or one from
            which no cell is taken; uncommitted code without ``allow_dirty``.
        dpnotes.lab.store.RunLocked: If a run is writing ``profile``'s result.
    """
    cells = check_int(cells, "cells", minimum=1)
    check_profile(profile)
    sources = _source_names(source)
    experiment = get_experiment(name)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}.")
    seed = experiment.check_seed(int(seed))
    if profile in sources:
        raise ValueError(
            f"adopt copies cells from one profile into another; {profile!r} is both. "
            "Name the narrower profile to store (--profile and --set) and the stored "
            "wider one (--from)."
        )
    version = code_version()
    if version.endswith(".dirty") and not allow_dirty:
        raise ValueError(
            f"the package code has uncommitted changes ({version}); commit them first, "
            "so that the check cites a commit that exists."
        )
    stored = [_source(experiment, s, seed, root) for s in sources]
    changed = [_differing_settings(experiment, profile, s) for s in sources]
    grid, rows, origin, stored_hashes = _sources_rows(experiment, profile, stored)
    here = provenance(experiment, profile, seed)
    _check_data(name, profile, stored, here)
    folder = result_folder(root, name, profile, seed)
    _refuse_existing(experiment, profile, folder, stored)
    chosen = [
        picked
        for i in range(len(stored))
        for picked in pick_cells(
            experiment,
            [(c, rows[stable_hash(c)]) for c in grid if origin[stable_hash(c)] == i],
            cells,
            sample_seed=sample_seed,
            cheapest=cheapest,
        )
    ]
    started = time.perf_counter()
    created = not folder.exists()
    with (
        run_lock(folder, what=f"{name} [{profile}] seed {seed}"),
        tempfile.TemporaryDirectory(prefix="dpnotes-adopt-") as cache,
    ):
        # A run may have stored a result while this one waited for the lock.
        _refuse_existing(experiment, profile, folder, stored)
        checks = check_cells(
            experiment, profile, seed, chosen, Path(cache), progress, 0.0
        )
        seconds = time.perf_counter() - started
        report = AdoptReport(
            name, profile, " + ".join(sources), seed, len(grid), tuple(checks), seconds
        )
        if report.equal:
            adopted = (stored, grid, rows, origin, stored_hashes, here, changed, checks)
            result = _store(folder, *adopted, version, sample_seed, cheapest)
    if not report.equal:
        if created:  # leave no empty folder behind (only the lock is in it)
            with contextlib.suppress(OSError):
                (folder / LOCK).unlink()
                folder.rmdir()
        return report
    return dataclasses.replace(report, path=result.path)


def _store(
    folder: Path,
    stored: Sequence[StoredResult],
    grid: Sequence[Mapping[str, Any]],
    rows: Mapping[str, pd.DataFrame],
    origin: Mapping[str, int],
    stored_hashes: Sequence[Sequence[str]],
    here: Mapping[str, Any],
    changed: Sequence[Mapping[str, Any]],
    checks: Sequence[CellCheck],
    version: str,
    sample_seed: int,
    cheapest: bool,
) -> StoredResult:
    """Write the adopted rows, in the narrower grid's order, and their metadata."""
    hashes = [stable_hash(c) for c in grid]
    table = pd.concat([rows[h] for h in hashes], ignore_index=True)
    taken = [[h for h in hashes if origin[h] == i] for i in range(len(stored))]
    if len(stored) == 1:
        meta = _meta(
            here,
            stored[0],
            hashes,
            stored_hashes[0],
            changed[0],
            checks,
            version=version,
            sample_seed=sample_seed,
            cheapest=cheapest,
        )
    else:
        meta = _joined_meta(
            here,
            stored,
            taken,
            stored_hashes,
            changed,
            checks,
            version=version,
            sample_seed=sample_seed,
            cheapest=cheapest,
        )
    return write_result(folder, table, meta)


def _kept_in(existing: StoredResult, stored: Sequence[StoredResult]) -> str | None:
    """The source that was adopted from the whole of ``existing``, if one was.

    Such a source holds every row of ``existing`` (adopt copies rows unchanged,
    after recomputing a sample of them), so replacing ``existing`` loses nothing.
    """
    sha = existing.meta.get("table_sha256")
    for result in stored:
        record = result.meta.get("adopted") or {}
        if (
            sha
            and record.get("source_profile") == existing.profile
            and record.get("source_table_sha256") == sha
            and record.get("cells_adopted") == existing.meta.get("cells")
            and not existing.partial
        ):
            return result.profile
    return None


def _refuse_existing(
    experiment: Experiment,
    profile: str,
    folder: Path,
    stored: Sequence[StoredResult] = (),
) -> None:
    """Refuse to replace a complete (or damaged) stored result of ``profile``.

    A table without ``meta.json`` (a first write interrupted before its switch)
    claims nothing and is replaced, as a run replaces it. So is a complete result
    of an older grid of ``profile`` (its config hash is not the current one) that
    was adopted whole into one of the sources (:func:`_kept_in`).
    """
    name = experiment.name
    existing, why = inspect_result(folder, experiment=name, profile=profile)
    if why and (folder / META).exists():
        raise ValueError(
            f"{folder} holds a damaged result of {name} [{profile}] ({why}); look at "
            "it, and delete it if it is of no use, then adopt again."
        )
    if existing is not None and not existing.partial:
        if existing.config_hash != config_hash(experiment, profile) and _kept_in(
            existing, stored
        ):
            return
        raise ValueError(
            f"{name} [{profile}] is stored complete already ({folder}, config "
            f"{existing.config_hash}); adopt never replaces a complete result. If it "
            f"is stale, restamp it ({_command(f'restamp {name}', profile)}); if its "
            "grid grew, first adopt it whole into a profile that names its old grid "
            "(e.g. --set datasets=...) and name that as a source."
        )


def _meta(
    here: Mapping[str, Any],
    stored: StoredResult,
    hashes: Sequence[str],
    stored_hashes: Sequence[str],
    changed: Mapping[str, Any],
    checks: Sequence[CellCheck],
    *,
    version: str,
    sample_seed: int,
    cheapest: bool,
) -> dict[str, Any]:
    """The new result's ``meta.json`` (see the module docstring)."""
    source = stored.meta
    runs, last = _runs(source, stored_hashes, set(hashes))
    meta: dict[str, Any] = {
        **here,
        # How the cells were computed, as the source recorded it.
        **{k: source[k] for k in _PROVENANCE if k in source},
        "cells": len(hashes),
        "cells_resumed": len(hashes),
        "partial": False,
        # The source's own last run's time, only if it computed adopted cells.
        "wall_time_s": float(source.get("wall_time_s") or 0.0) if last else 0.0,
    }
    if runs:
        meta["runs"] = runs
    if source.get("restamped"):
        meta["restamped"] = list(source["restamped"])
    meta["adopted"] = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "how": "python -m dpnotes adopt: the stored rows of this profile's cells "
        "copied from a wider profile's result; a sample recomputed and compared",
        **_source_record(stored, stored_hashes, changed),
        "code_version": version,
        "machine": machine_name(device_info()),
        "cells_checked": _checked(checks),
        "cells_adopted": len(hashes),
        "sample_seed": sample_seed,
        "cheapest_first": cheapest,
        "rtol": 0.0,
    }
    return meta


def _source_record(
    stored: StoredResult,
    stored_hashes: Sequence[str],
    changed: Mapping[str, Any],
) -> dict[str, Any]:
    """What the ``adopted`` entry says of one source."""
    source = stored.meta
    return {
        "source_profile": stored.profile,
        "source_config_hash": stored.config_hash,
        "source_code_version": source.get("code_version"),
        "source_table_sha256": source.get("table_sha256"),
        "source_partial": stored.partial,
        "source_runs_recorded": bool(source.get("runs")),
        "source_cells": source.get("cells"),
        "source_cells_stored": len(stored_hashes),
        "settings_changed": {k: list(v) for k, v in changed.items()},
    }


def _last_run(meta: Mapping[str, Any], cells: Sequence[str]) -> dict[str, Any]:
    """A source's own last run (its top-level provenance) as an entry of ``runs``."""
    entry = {
        k: meta.get(k) for k in ("device", "workers", "code_version", "started", "date")
    }
    return {**entry, "cells_done": list(cells)}


def _joined_meta(
    here: Mapping[str, Any],
    stored: Sequence[StoredResult],
    taken: Sequence[Sequence[str]],
    stored_hashes: Sequence[Sequence[str]],
    changed: Sequence[Mapping[str, Any]],
    checks: Sequence[CellCheck],
    *,
    version: str,
    sample_seed: int,
    cheapest: bool,
) -> dict[str, Any]:
    """The ``meta.json`` of a result adopted from several sources.

    Every cell is listed in ``runs`` under the run that computed it (each source's
    earlier runs, cut to the cells taken from it, then its own last run), so the
    result's own last run holds no cell and takes no time; the top-level code,
    packages and machine are the first source's.
    """
    runs: list[dict[str, Any]] = []
    for result, mine, held in zip(stored, taken, stored_hashes, strict=True):
        earlier, last = _runs(result.meta, held, set(mine))
        runs.extend(earlier)
        if last:
            listed = {h for r in result.meta.get("runs") or [] for h in r["cells_done"]}
            runs.append(_last_run(result.meta, [h for h in mine if h not in listed]))
    first = stored[0].meta
    restamped = [r for result in stored for r in result.meta.get("restamped") or []]
    cells = sum(len(mine) for mine in taken)
    meta: dict[str, Any] = {
        **here,
        **{k: first[k] for k in _PROVENANCE if k in first},
        "cells": cells,
        "cells_resumed": cells,
        "partial": False,
        "wall_time_s": 0.0,
        "runs": runs,
    }
    if restamped:
        meta["restamped"] = restamped
    meta["adopted"] = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "how": "python -m dpnotes adopt: the stored rows of this profile's cells "
        "copied from the results of several profiles whose grids together hold it "
        "(each cell from the first that stores it); a sample from each recomputed "
        "and compared",
        "sources": [
            {**_source_record(*parts), "cells_adopted": len(mine)}
            for *parts, mine in zip(stored, stored_hashes, changed, taken, strict=True)
        ],
        "code_version": version,
        "machine": machine_name(device_info()),
        "cells_checked": _checked(checks),
        "cells_adopted": cells,
        "sample_seed": sample_seed,
        "cheapest_first": cheapest,
        "rtol": 0.0,
    }
    return meta


def _checked(checks: Sequence[CellCheck]) -> list[dict[str, Any]]:
    """The ``cells_checked`` entry: each recomputed cell, its time and difference."""
    return [
        {
            "cell": to_jsonable(dict(c.cell)),
            "seconds": round(c.seconds, 3),
            "max_relative_difference": c.max_relative_difference,
        }
        for c in checks
    ]
