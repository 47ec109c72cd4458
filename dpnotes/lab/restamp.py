"""Restamp: show that new code gives a stored result's numbers, then re-stamp it.

A stored result is trusted only while its config hash, which covers the source of the
experiment's whole import closure, matches the current code. A change that should move
no number (a refactor, a module split, a renamed helper) still changes the hash. Rather
than recomputing days of cells, :func:`restamp` recomputes a sample of them under the
current code and compares them with the stored rows:

1. the whole ``smoke`` profile (compared with the stored smoke result if there is one,
   which is then re-stamped with the rest; otherwise only run, to show the code runs
   end to end);
2. ``cells`` stored cells of the profile, chosen at random with a seeded generator (or
   the cheapest first, by their stored wall times), each recomputed with the random
   stream the runner gave it, in a fresh run cache so nothing computed earlier is
   reused.

Values are compared exactly as stored (the CSV text, 10 significant digits), or, when
``rtol`` is given, numbers to that relative tolerance: floating-point reductions (a
training loss summed over a batch) come out differently in their last digits on another
CPU with the same code and packages, and a result computed on one machine and checked
on another needs such a stated tolerance. Wall times (columns, or ``metric`` values,
whose name ends in ``_seconds``) only have to be present, since they differ from run to
run. Only if every checked cell agrees is
``meta.json`` rewritten with the new config hash, settings, module digests and code
version, and a ``restamped`` entry appended (old and new hash, old and new code
version, the cells checked, the date). The table itself is never rewritten. If any
cell differs, nothing is changed and the report says which cells and columns differ.

A result computed on another CPU cannot be recomputed bit for bit here even by its own
code (a long DP-SGD run carries the last-digit differences of floating-point sums into
its accuracies). For such a result, ``reference=`` compares the current code with the
commit that computed it, both run here on the same cells (:mod:`dpnotes.lab.reference`):
exact, and with the reference's module digests checked against the stored ones.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import datetime as dt
import io
import json
import os
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpnotes.lab.reference import reference_commit, reference_rows, reference_tree
from dpnotes.lab.registry import (
    Experiment,
    check_profile,
    config_hash,
    get_experiment,
    stable_hash,
    to_jsonable,
)
from dpnotes.lab.runner import code_version, device_info, run_cell
from dpnotes.lab.store import (
    META,
    StoredResult,
    as_written,
    atomic_write_bytes,
    inspect_result,
    result_folder,
    run_lock,
    table_to_bytes,
)
from dpnotes.report import machine_name

__all__ = [
    "CellCheck",
    "RestampReport",
    "check_cells",
    "compare_rows",
    "pick_cells",
    "restamp",
    "stored_cells",
]


@dataclasses.dataclass(frozen=True)
class CellCheck:
    """One recomputed cell and how it compares with the stored rows."""

    profile: str
    cell: Mapping[str, Any]
    differences: tuple[str, ...]
    seconds: float
    max_relative_difference: float = 0.0
    compared: bool = True
    stored_relative_difference: float | None = None

    @property
    def equal(self) -> bool:
        """Whether the recomputed cell equals the stored rows (no differences)."""
        return not self.differences


@dataclasses.dataclass(frozen=True)
class RestampReport:
    """What :func:`restamp` checked and did."""

    experiment: str
    profile: str
    seed: int
    old_hash: str
    new_hash: str
    checks: tuple[CellCheck, ...]
    restamped: tuple[str, ...]
    seconds: float
    note: str = ""

    @property
    def equal(self) -> bool:
        """Whether every checked cell equals the stored rows."""
        return all(c.equal for c in self.checks)

    def summary(self) -> str:
        """Return a few lines for the command line."""
        head = f"{self.experiment} [{self.profile}] seed {self.seed}"
        if self.note:
            return f"{head}: {self.note}"

        def count(profile: str) -> str:
            mine = [c for c in self.checks if c.profile == profile]
            if all(c.compared for c in mine):
                return f"{profile}: {len(mine)} cells"
            return f"{profile}: {len(mine)} cells run, none stored to compare"

        checked = ", ".join(
            count(p) for p in dict.fromkeys(c.profile for c in self.checks)
        )
        compared = sum(c.compared for c in self.checks)
        if self.equal:
            done = (
                f"restamped {', '.join(self.restamped)} {self.old_hash} -> "
                f"{self.new_hash}"
                if self.restamped
                else "checked only (nothing written)"
            )
            worst = max((c.max_relative_difference for c in self.checks), default=0)
            within = f" (largest relative difference {worst:.1e})" if worst else ""
            return (
                f"{head}: {compared} cells recomputed equal{within} "
                f"({checked}) in {self.seconds:.1f} s; {done}"
            )
        lines = [f"{head}: cells differ; nothing changed ({checked} checked)"]
        for check in self.checks:
            if not check.equal:
                lines.append(f"  {check.profile} {dict(check.cell)}:")
                lines.extend(f"    {d}" for d in check.differences)
        return "\n".join(lines)


def _text(column: pd.Series) -> np.ndarray:
    """Return a column's values as the CSV writes them (10 significant digits)."""
    if pd.api.types.is_bool_dtype(column):
        return column.astype(str).to_numpy()
    if pd.api.types.is_numeric_dtype(column):
        return np.array(
            ["" if pd.isna(v) else f"{v:.10g}" for v in column], dtype=object
        )
    return np.array(
        ["" if pd.isna(v) else _number_text(v) for v in column], dtype=object
    )


def _number_text(value: Any) -> str:
    # A number read into a text column (a column that mixes both) prints as the CSV
    # printed it; anything else as itself.
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, bool
    ):
        return f"{value:.10g}"
    return str(value)


def compare_rows(
    stored: pd.DataFrame,
    new: pd.DataFrame,
    *,
    is_timing=Experiment.is_timing,
    rtol: float = 0.0,
) -> list[str]:
    """Return how ``new`` rows differ from ``stored`` ones (empty when equal).

    Both are compared as the CSV stores them: as text, or, with ``rtol > 0``, numbers
    to that relative tolerance (text elsewhere). Wall-time values (a column, or the
    ``value`` of a row whose ``metric``, named by ``is_timing``) are not compared.
    """
    return _compare(stored, new, is_timing=is_timing, rtol=rtol)[0]


def _compare(
    stored: pd.DataFrame, new: pd.DataFrame, *, is_timing, rtol: float
) -> tuple[list[str], float]:
    """:func:`compare_rows`, and the largest relative difference of equal-text cells."""
    new = pd.read_csv(io.BytesIO(table_to_bytes(new)))
    stored = stored.reset_index(drop=True)
    if list(stored.columns) != list(new.columns):
        return [f"columns {list(stored.columns)} != {list(new.columns)}"], np.inf
    if len(stored) != len(new):
        return [f"{len(stored)} stored rows != {len(new)} recomputed rows"], np.inf
    timing_rows = np.zeros(len(new), dtype=bool)
    if "metric" in new.columns:
        timing_rows = np.array([is_timing(str(m)) for m in new["metric"]])
    out: list[str] = []
    worst = 0.0
    for column in new.columns:
        if is_timing(column):
            continue
        a, b = _text(stored[column]), _text(new[column])
        differs = a != b
        if column == "value":
            differs &= ~timing_rows
        if differs.any():
            worst = max(worst, _largest_relative(a[differs], b[differs]))
        if rtol > 0 and differs.any():
            differs &= ~_close(a, b, rtol)
        if differs.any():
            i = int(np.flatnonzero(differs)[0])
            out.append(
                f"column {column!r}: {int(differs.sum())} of {len(a)} rows differ "
                f"(first at row {i}: stored {a[i]!r}, now {b[i]!r})"
            )
    return out, worst


def _largest_relative(a: np.ndarray, b: np.ndarray) -> float:
    x = pd.to_numeric(pd.Series(a), errors="coerce").to_numpy(dtype=float)
    y = pd.to_numeric(pd.Series(b), errors="coerce").to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.abs(x - y) / np.maximum(np.abs(x), np.abs(y))
    return float(np.nanmax(rel)) if np.isfinite(rel).any() else np.inf


def _close(a: np.ndarray, b: np.ndarray, rtol: float) -> np.ndarray:
    """Return where two text columns hold numbers within ``rtol`` of each other."""
    x = pd.to_numeric(pd.Series(a), errors="coerce").to_numpy(dtype=float)
    y = pd.to_numeric(pd.Series(b), errors="coerce").to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        return np.isclose(x, y, rtol=rtol, atol=0.0) & np.isfinite(x) & np.isfinite(y)


def _matches(values: pd.Series, wanted: Any) -> np.ndarray:
    if wanted is None:
        return values.isna().to_numpy()
    if isinstance(wanted, list):
        wanted = str(wanted)
    text = values.astype(str).to_numpy() == str(wanted)
    if isinstance(wanted, (int, float)) and not isinstance(wanted, bool):
        numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
        # A key such as e**3 is stored with ten significant digits: match it as
        # written too.
        text |= (numbers == float(wanted)) | (numbers == as_written(float(wanted)))
    return text


def stored_cells(
    experiment: Experiment, result: StoredResult
) -> list[tuple[dict[str, Any], pd.DataFrame | None]]:
    """Split a stored table into the current grid's cells: ``[(cell, rows), ...]``.

    A partial result records its cells' hashes and row counts; a complete one is split
    by the cells' key columns, which the runner adds to every row. Where a cell writes
    a key column of its own in another format (``"SEX×RAC1P"`` for ``["SEX",
    "RAC1P"]``), the rows are ``None``: they are found after the cell is recomputed,
    as the one block of stored rows whose text columns equal the new rows'.

    Raises:
        ValueError: If the stored rows are not the cells of the current grid (the grid
            changed): such a result cannot be restamped, only recomputed.
    """
    grid = experiment.cells(result.profile)
    by_hash = {stable_hash(cell): cell for cell in grid}
    table = result.table
    if result.partial:
        done = result.meta.get("cells_done", [])
        counts = result.meta.get("cell_rows", [])
        if len(done) != len(counts) or sum(counts) != len(table):
            raise ValueError("the partial result's cell list does not match its table.")
        unknown = [h for h in done if h not in by_hash]
        if unknown:
            raise ValueError(
                f"{len(unknown)} stored cells are not cells of the current grid (the "
                "grid changed); recompute this result instead of restamping it."
            )
        out, start = [], 0
        for h, k in zip(done, counts, strict=True):
            out.append((by_hash[h], table.iloc[start : start + k]))
            start += k
        return out
    if result.meta.get("cells") not in (None, len(grid)):
        raise ValueError(
            f"the stored result has {result.meta.get('cells')} cells and the current "
            f"grid {len(grid)}; recompute this result instead of restamping it."
        )
    if not all(
        _matches(table[key], value).any()
        for cell in grid
        for key, value in cell.items()
        if key in table.columns
    ):
        return [(cell, None) for cell in grid]
    owner = np.full(len(table), -1)
    out = []
    for i, cell in enumerate(grid):
        mask = np.ones(len(table), dtype=bool)
        for key, value in cell.items():
            if key not in table.columns:
                raise ValueError(
                    f"the stored table has no column for grid key {key!r}."
                )
            mask &= _matches(table[key], value)
        if not mask.any() or (owner[mask] >= 0).any():
            raise ValueError(
                f"the stored rows do not split into the current grid's cells (cell "
                f"{cell} has {'no rows' if not mask.any() else 'rows of another'})."
            )
        owner[mask] = i
        out.append((cell, table[mask]))
    if (owner < 0).any():
        raise ValueError(
            f"{int((owner < 0).sum())} stored rows belong to no cell of the current "
            "grid."
        )
    return out


def _stored_seconds(experiment: Experiment, rows: pd.DataFrame | None) -> float:
    """Return the wall time a cell's rows record (its cost), or its row count."""
    if rows is None:
        return 0.0
    total = 0.0
    for column in rows.columns:
        if experiment.is_timing(column):
            total += float(pd.to_numeric(rows[column], errors="coerce").sum())
    if "metric" in rows.columns and "value" in rows.columns:
        timing = rows["metric"].astype(str).map(experiment.is_timing).to_numpy(bool)
        total += float(pd.to_numeric(rows["value"][timing], errors="coerce").sum())
    return total if total > 0 else float(len(rows))


def pick_cells(
    experiment: Experiment,
    cells: Sequence[tuple[dict[str, Any], pd.DataFrame]],
    k: int,
    *,
    sample_seed: int,
    cheapest: bool,
) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """Choose ``k`` stored cells to recompute (all of them if there are fewer).

    Args:
        experiment: The experiment (it names the wall-time columns).
        cells: ``[(cell, rows), ...]`` as :func:`stored_cells` returns them.
        k: How many to choose.
        sample_seed: Seeds the random choice.
        cheapest: Take the cells with the smallest stored wall times instead (their
            ``*_seconds`` values; the row count where a cell records none).
    """
    if cheapest:
        order = np.argsort(
            [_stored_seconds(experiment, rows) for _, rows in cells], kind="stable"
        )
    else:
        order = np.random.default_rng(sample_seed).permutation(len(cells))
    return [cells[i] for i in order[:k]]


def _find_block(table: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame | None:
    """Return the one run of ``len(new)`` stored rows whose text columns equal new's."""
    new = pd.read_csv(io.BytesIO(table_to_bytes(new)))
    keys = [
        c
        for c in new.columns
        if c in table.columns and not pd.api.types.is_float_dtype(new[c])
    ]
    if not keys or len(new) > len(table):
        return None
    stored_text = np.stack([_text(table[c]) for c in keys], axis=1)
    new_text = np.stack([_text(new[c]) for c in keys], axis=1)
    starts = np.flatnonzero((stored_text == new_text[0]).all(axis=1))
    found = [
        int(i)
        for i in starts
        if i + len(new) <= len(table)
        and (stored_text[i : i + len(new)] == new_text).all()
    ]
    return table.iloc[found[0] : found[0] + len(new)] if len(found) == 1 else None


def _against_reference(
    experiment: Experiment,
    profile: str,
    seed: int,
    chosen: Sequence[tuple[dict[str, Any], pd.DataFrame | None]],
    cache: Path,
    progress: bool,
    rtol: float,
    stored: StoredResult,
    tree: Path,
) -> list[CellCheck]:
    """Compare each cell under the current code with the reference code, both here."""
    checks = []
    for cell, rows in chosen:
        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            # The reference runs in its own process, beside the current code.
            ref = pool.submit(
                reference_rows, tree, experiment.name, profile, seed, cell
            )
            new = run_cell(
                experiment.name, profile, seed, cell, cache=cache, progress=progress
            )
            ref_rows, digests = ref.result()
        seconds = time.perf_counter() - started
        found, worst = _compare(
            ref_rows, new, is_timing=experiment.is_timing, rtol=rtol
        )
        if digests != stored.meta.get("code_digests"):
            found.append(
                "the reference commit's code is not the code the stored result is "
                "stamped with (its module digests differ from meta.json's); use the "
                "commit its code_version names (--reference auto)"
            )
        if rows is None:
            rows = _find_block(stored.table, new)
        against_stored = np.inf
        if rows is not None:
            against_stored = _compare(
                rows, new, is_timing=experiment.is_timing, rtol=0.0
            )[1]
        checks.append(
            CellCheck(profile, cell, tuple(found), seconds, worst, True, against_stored)
        )
    return checks


def check_cells(
    experiment: Experiment,
    profile: str,
    seed: int,
    chosen: Sequence[tuple[dict[str, Any], pd.DataFrame | None]],
    cache: Path,
    progress: bool,
    rtol: float,
    stored_table: pd.DataFrame | None = None,
) -> list[CellCheck]:
    """Recompute each chosen cell under ``profile`` and compare it with its rows.

    Args:
        experiment: The experiment.
        profile: The profile to recompute the cells under.
        seed: The root seed (each cell's stream comes from it and the cell).
        chosen: ``[(cell, stored rows), ...]``; rows ``None`` are looked up in
            ``stored_table`` after the cell is recomputed (:func:`stored_cells`).
        cache: A run cache folder (a fresh one, so that nothing computed before is
            reused).
        progress: Let cells draw their own progress bars.
        rtol: Relative tolerance for numbers (0: the stored text exactly).
        stored_table: The whole stored table, for rows given as ``None``.

    Returns:
        One :class:`CellCheck` per cell, in the order given.
    """
    checks = []
    for cell, rows in chosen:
        started = time.perf_counter()
        new = run_cell(
            experiment.name, profile, seed, cell, cache=cache, progress=progress
        )
        seconds = time.perf_counter() - started
        if rows is None:
            rows = _find_block(stored_table, new)
        if rows is None:
            checks.append(
                CellCheck(
                    profile,
                    cell,
                    ("no block of stored rows has these rows' text columns",),
                    seconds,
                    np.inf,
                )
            )
            continue
        found, worst = _compare(rows, new, is_timing=experiment.is_timing, rtol=rtol)
        checks.append(CellCheck(profile, cell, tuple(found), seconds, worst))
    return checks


def _smoke_checks(
    experiment: Experiment,
    seed: int,
    cache: Path,
    root,
    progress: bool,
    rtol: float,
    *,
    compare: bool = True,
) -> tuple[list[CellCheck], StoredResult | None]:
    """Recompute the whole smoke profile; compare it with a stored one if any.

    With ``compare=False`` (a restamp against reference code) it is only run, and so
    it is where another kind of machine computed the stored smoke result (its last
    digits differ here): restamp that one on its own, with ``reference``.
    """
    stored, _ = inspect_result(
        result_folder(root, experiment.name, "smoke", seed),
        experiment=experiment.name,
        profile="smoke",
    )
    if stored is not None and set(stored.cells_by_machine()) != {
        machine_name(device_info())
    }:
        compare = False
    if compare and stored is not None and not stored.partial:
        cells = stored_cells(experiment, stored)
        checks = check_cells(
            experiment, "smoke", seed, cells, cache, progress, rtol, stored.table
        )
        return checks, stored
    checks = []
    for cell in experiment.cells("smoke"):
        started = time.perf_counter()
        run_cell(experiment.name, "smoke", seed, cell, cache=cache, progress=progress)
        seconds = time.perf_counter() - started
        checks.append(CellCheck("smoke", cell, (), seconds, compared=False))
    return checks, None


def _entry(
    stored: StoredResult,
    new_hash: str,
    version: str,
    checks: Sequence[CellCheck],
    *,
    sample_seed: int,
    cheapest: bool,
    total: int,
    rtol: float,
) -> dict[str, Any]:
    return {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "how": "python -m dpnotes restamp: cells recomputed and compared",
        "old_hash": stored.config_hash,
        "new_hash": new_hash,
        "old_code_version": stored.meta.get("code_version"),
        "old_code_digests": stored.meta.get("code_digests"),
        "code_version": version,
        "cells_checked": [
            {
                "profile": c.profile,
                "cell": to_jsonable(dict(c.cell)),
                "seconds": round(c.seconds, 3),
                "max_relative_difference": c.max_relative_difference,
                "compared": c.compared,
                **(
                    {"stored_relative_difference": c.stored_relative_difference}
                    if c.stored_relative_difference is not None
                    else {}
                ),
            }
            for c in checks
        ],
        "cells_stored": total,
        "sample_seed": sample_seed,
        "cheapest_first": cheapest,
        "rtol": rtol,
        "max_relative_difference": max(
            (c.max_relative_difference for c in checks), default=0.0
        ),
    }


def _rewrite_meta(
    experiment: Experiment, stored: StoredResult, entry: Mapping[str, Any]
) -> None:
    meta = dict(stored.meta)
    meta.update(
        {
            "config": to_jsonable(experiment.config(stored.profile)),
            "config_hash": entry["new_hash"],
            "code_digests": experiment.code_digests(),
            "code_version": entry["code_version"],
            "restamped": [*meta.get("restamped", []), dict(entry)],
        }
    )
    atomic_write_bytes(
        stored.path / META,
        (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode(),
    )


@contextlib.contextmanager
def _fresh_cache() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="dpnotes-restamp-") as folder:
        yield Path(folder)


def restamp(
    name: str,
    profile: str = "paper",
    *,
    cells: int = 3,
    seed: int = 0,
    sample_seed: int = 0,
    cheapest: bool = False,
    root: str | os.PathLike[str] | None = None,
    write: bool = True,
    allow_dirty: bool = False,
    progress: bool = False,
    rtol: float = 0.0,
    reference: str | None = None,
    machine: str | None = None,
) -> RestampReport:
    """Recompute a sample of a stored result under the current code; re-stamp if equal.

    See the module docstring for what is recomputed and compared.

    Args:
        name: A registered experiment.
        profile: The stored profile to restamp.
        cells: How many stored cells of ``profile`` to recompute (all if fewer).
        seed: The root seed of the stored result.
        sample_seed: Seeds the random choice of cells.
        cheapest: Take the cells with the smallest stored wall times instead.
        root: Results store (default: :func:`~dpnotes.lab.store.results_root`).
        write: Re-stamp when every cell agrees (``False`` checks only, also a result
            that is already current).
        allow_dirty: Allow a working tree whose package code is not committed; the
            code version then ends in ``.dirty`` and cites no commit, so this is for
            tests only.
        progress: Let cells draw their own progress bars.
        rtol: Relative tolerance for numbers (default 0: the stored text exactly);
            state it when a result computed on another CPU is checked here. It is
            recorded in the ``restamped`` entry with the largest difference found.
        reference: Compare with the code that computed the stored result instead of
            its stored rows: a commit, or ``"auto"`` for the one its code version
            names (:mod:`dpnotes.lab.reference`). Both codes run here, so the
            comparison is exact even for a result computed on another CPU; the
            reference's module digests must equal the stored ones, and each cell's
            difference from the stored rows is recorded. The smoke profile is then
            run, not compared with its stored rows (another CPU may have computed
            them too): restamp it on its own.
        machine: Choose only among the cells this machine computed, named as
            captions name it (:meth:`~dpnotes.lab.store.StoredResult.cells_by_machine`,
            e.g. ``"Intel Xeon"``): for a result computed on several machines, the
            cells of the one like this can be checked against their stored rows.

    Returns:
        The report; ``report.equal`` says whether every checked cell agreed.

    Raises:
        ValueError: For an unknown experiment or profile, ``cells < 1``, nothing
            stored (or a damaged stored result), uncommitted code, a stored table
            that does not split into the current grid's cells, or a ``machine`` that
            computed none of them.
        dpnotes.lab.store.RunLocked: If a run is writing the result.
    """
    if isinstance(cells, bool) or not isinstance(cells, (int, np.integer)) or cells < 1:
        raise ValueError(f"cells must be a positive integer, got {cells!r}.")
    if not (isinstance(rtol, (int, float)) and 0.0 <= rtol < 1e-3):
        raise ValueError(
            f"rtol must be a number in [0, 1e-3), got {rtol!r}: it covers the last "
            "digits of floating-point sums, not different results."
        )
    check_profile(profile)
    experiment = get_experiment(name)
    stored = _stored(name, profile, seed, root)
    version = code_version()
    if version.endswith(".dirty") and not allow_dirty:
        raise ValueError(
            f"the package code has uncommitted changes ({version}); commit them first, "
            "so that the restamp cites a commit that exists."
        )
    if reference == "auto":
        reference = reference_commit(str(stored.meta.get("code_version", "")))
    new_hash = config_hash(experiment, profile)
    if write and stored.config_hash == new_hash and not _dirty(stored):
        return RestampReport(
            name,
            profile,
            seed,
            new_hash,
            new_hash,
            (),
            (),
            0.0,
            note=f"already current ({new_hash}); nothing to do",
        )
    started = time.perf_counter()
    what = f"{name} [{profile}] seed {seed}"
    with contextlib.ExitStack() as stack:
        stack.enter_context(run_lock(stored.path, what=what))
        cache = stack.enter_context(_fresh_cache())
        tree = stack.enter_context(reference_tree(reference)) if reference else None
        split = stored_cells(experiment, stored)
        if machine is not None:
            split = _computed_on(stored, split, machine)
        chosen = pick_cells(
            experiment, split, int(cells), sample_seed=sample_seed, cheapest=cheapest
        )
        smoke_checks, smoke = [], None
        if profile != "smoke":
            smoke_checks, smoke = _smoke_checks(
                experiment, seed, cache, root, progress, rtol, compare=tree is None
            )
        if tree is None:
            main = check_cells(
                experiment, profile, seed, chosen, cache, progress, rtol, stored.table
            )
        else:
            main = _against_reference(
                experiment, profile, seed, chosen, cache, progress, rtol, stored, tree
            )
        checks = smoke_checks + main
        report = RestampReport(
            name,
            profile,
            seed,
            stored.config_hash,
            new_hash,
            tuple(checks),
            (),
            time.perf_counter() - started,
        )
        if not report.equal or not write:
            return report
        done = _write(
            experiment,
            stored,
            smoke,
            checks,
            smoke_checks,
            version,
            sample_seed=sample_seed,
            cheapest=cheapest,
            total=len(split),
            rtol=rtol,
            reference=reference,
        )
        return dataclasses.replace(report, restamped=done)


def _computed_on(
    stored: StoredResult,
    split: Sequence[tuple[dict[str, Any], pd.DataFrame | None]],
    machine: str,
) -> list[tuple[dict[str, Any], pd.DataFrame | None]]:
    """The stored cells that ``machine`` computed (named as captions name it)."""
    runs = stored.meta.get("runs") or [
        {"device": stored.meta.get("device"), "cells_done": None}
    ]
    hashes: set[str] | None = set()
    for run in runs:
        if machine_name(run.get("device")) == machine:
            done = run.get("cells_done")
            if done is None:  # one run computed the whole result
                hashes = None
                break
            hashes.update(done)
    chosen = (
        list(split)
        if hashes is None
        else [(c, r) for c, r in split if stable_hash(c) in hashes]
    )
    if not chosen:
        raise ValueError(
            f"no stored cell of {stored.experiment} [{stored.profile}] was computed "
            f"on {machine!r}; its machines: {sorted(stored.cells_by_machine())}."
        )
    return chosen


def _dirty(result: StoredResult) -> bool:
    return str(result.meta.get("code_version", "")).endswith(".dirty")


def _stored(name: str, profile: str, seed: int, root) -> StoredResult:
    """Return the trusted stored result to restamp, or say why there is none."""
    folder = result_folder(root, name, profile, seed)
    stored, why = inspect_result(folder, experiment=name, profile=profile)
    if stored is not None:
        return stored
    if why:
        raise ValueError(
            f"the stored result of {name} [{profile}] seed {seed} is damaged ({why}); "
            f"recompute it with python -m dpnotes run {name} --profile {profile}."
        )
    raise ValueError(
        f"nothing is stored for {name} [{profile}] seed {seed} under {folder}; there "
        "is nothing to restamp."
    )


def _write(
    experiment: Experiment,
    stored: StoredResult,
    smoke: StoredResult | None,
    checks: Sequence[CellCheck],
    smoke_checks: Sequence[CellCheck],
    version: str,
    *,
    sample_seed: int,
    cheapest: bool,
    total: int,
    rtol: float,
    reference: str | None = None,
) -> tuple[str, ...]:
    """Re-stamp the result, and its stored smoke profile if that is not current."""
    new_hash = config_hash(experiment, stored.profile)
    entry = _entry(
        stored,
        new_hash,
        version,
        checks,
        sample_seed=sample_seed,
        cheapest=cheapest,
        total=total,
        rtol=rtol,
    )
    if reference:
        entry["reference"] = reference
        entry["how"] = (
            "python -m dpnotes restamp --reference: cells recomputed here by the "
            "current code and by the reference commit, and compared"
        )
    _rewrite_meta(experiment, stored, entry)
    done = [stored.profile]
    smoke_hash = config_hash(experiment, "smoke")
    if smoke is not None and (smoke.config_hash != smoke_hash or _dirty(smoke)):
        what = f"{experiment.name} [smoke] seed {stored.meta.get('seed', 0)}"
        with run_lock(smoke.path, what=what):
            now, _ = inspect_result(
                smoke.path, experiment=experiment.name, profile="smoke"
            )
            if now is None or now.meta.get("table_sha256") != smoke.meta.get(
                "table_sha256"
            ):
                # A run replaced the smoke result while its cells were checked: what
                # was checked is gone, so the new one is left as it is.
                return tuple(done)
            entry = _entry(
                smoke,
                smoke_hash,
                version,
                smoke_checks,
                sample_seed=sample_seed,
                cheapest=False,
                total=len(smoke_checks),
                rtol=rtol,
            )
            _rewrite_meta(experiment, smoke, entry)
        done.append("smoke")
    return tuple(done)
