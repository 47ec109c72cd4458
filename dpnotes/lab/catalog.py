"""The book's catalogue of stored results and data files (its appendix tables).

The appendices *Reproducing this book* and *Data and provenance* list what the results
store holds (status, data, device, wall time, the commit and config hash each result is
stamped with) and which data files each experiment reads. Those tables are built here
from the store's ``meta.json`` files, the registry and
:data:`dpnotes.data.files.KNOWN_FILES`, so the chapters only display them.

Like the rest of :mod:`dpnotes.lab`, this module computes none of the experiments'
numbers and is outside every config hash.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import pandas as pd

from dpnotes.data import KNOWN_FILES
from dpnotes.data.acs import ACS_STATE_CODES
from dpnotes.data.files import KnownFile
from dpnotes.lab.registry import PROFILES, Experiment, config_hash, list_experiments
from dpnotes.lab.runner import stale_reason
from dpnotes.lab.store import StoredResult, read_result, results_root

__all__ = [
    "STAMP_COLUMNS",
    "WHAT_COLUMNS",
    "citation_text",
    "compute_by_machine",
    "compute_text",
    "data_files",
    "data_names",
    "device_text",
    "experiment_data",
    "licences",
    "machine_text",
    "machines",
    "sha256_lines",
    "short_name",
    "stamped_by",
    "status_text",
    "stored_results",
    "wall_text",
]

_STATES = {code: state for state, code in ACS_STATE_CODES.items()}
_SOURCES = {"mnist": "MNIST", "adult": "Adult", "dutch": "Dutch"}

#: The columns of the first stored-results table: what each result is.
WHAT_COLUMNS = ("experiment", "profile", "status", "data", "computed on")
#: The columns of the second: the code each result is stamped with.
STAMP_COLUMNS = ("experiment", "profile", "commit", "config hash", "stamped by")


def short_name(path: str) -> str:
    """Name a data file (a path under the data root) by its data set.

    Examples:
        >>> short_name("acs/2018/1-Year/psam_p35.csv")
        'ACS 2018 NM'
        >>> short_name("acs/extracts/ACSEmployment_NY_2018_sample20000.csv")
        'ACS NY sample'
        >>> short_name("mnist/train-images-idx3-ubyte.gz"), short_name("other/x")
        ('MNIST', 'other/x')
    """
    if path.startswith("acs/extracts/"):
        return "ACS NY sample"
    if path.startswith("acs/"):
        code = path.rsplit("psam_p", 1)[-1].split(".")[0]
        return f"ACS {path.split('/')[1]} {_STATES.get(code, code)}"
    return _SOURCES.get(path.split("/")[0], path)


def data_names(paths: Iterable[str]) -> str:
    """Name the data sets of some files, each once, in order; "synthetic" for none.

    Examples:
        >>> data_names(["adult/adult.data", "adult/adult.test"]), data_names([])
        ('Adult', 'synthetic')
    """
    return ", ".join(dict.fromkeys(map(short_name, paths))) or "synthetic"


def device_text(meta: Mapping[str, Any]) -> str:
    """Name the device a result was computed on: its accelerator, else its CPUs.

    Examples:
        >>> device_text({"device": {"accelerator": "NVIDIA H100", "cpu_count": 16}})
        'NVIDIA H100'
        >>> device_text({"device": {"accelerator": "none", "cpu_count": 2}})
        'CPU ×2'
    """
    device = meta.get("device", {})
    if device.get("accelerator", "none") != "none":
        return str(device["accelerator"])
    return f"CPU ×{device.get('cpu_count')}"


def machine_text(device: Mapping[str, Any]) -> str:
    """Name a machine: its accelerator, else its CPU model and count.

    Examples:
        >>> machine_text({"accelerator": "NVIDIA H200", "cpu_count": 16})
        'NVIDIA H200'
        >>> machine_text({"accelerator": "none", "cpu": "Intel(R) Xeon(R) Processor",
        ...               "cpu_count": 2})
        'Intel Xeon ×2'
        >>> machine_text({"cpu_count": 2})
        'CPU ×2'
    """
    if device.get("accelerator", "none") != "none":
        return str(device["accelerator"])
    cpu = str(device.get("cpu") or "CPU")
    cpu = " ".join(w for w in cpu.replace("(R)", "").split() if w != "Processor")
    return f"{cpu or 'CPU'} ×{device.get('cpu_count')}"


def _elapsed(run: Mapping[str, Any]) -> float | None:
    try:
        start = datetime.fromisoformat(str(run["started"]))
        end = datetime.fromisoformat(str(run["date"]))
    except (KeyError, ValueError):
        return None
    return max((end - start).total_seconds(), 0.0)


def compute_by_machine(meta: Mapping[str, Any]) -> list[tuple[str, int, float]]:
    """Return ``(machine, cells, seconds)`` per machine that computed a result's cells.

    A result finished over several runs (``meta["runs"]``, each with its device, the
    cells it computed and its start and end) is summed per machine; the last run is the
    result's own meta (its cells are those no earlier run lists). The seconds are each
    run's elapsed time (wall clock, with however many workers it had).

    Examples:
        >>> meta = {"device": {"accelerator": "NVIDIA H200"}, "wall_time_s": 60.0,
        ...         "cells_done": ["a", "b", "c"],
        ...         "runs": [{"device": {"cpu": "AMD EPYC", "cpu_count": 2},
        ...                   "cells_done": ["a", "b"],
        ...                   "started": "2026-01-01T00:00:00+00:00",
        ...                   "date": "2026-01-01T01:00:00+00:00"}]}
        >>> compute_by_machine(meta)
        [('AMD EPYC ×2', 2, 3600.0), ('NVIDIA H200', 1, 60.0)]
    """
    runs = list(meta.get("runs") or [])
    done = meta.get("cells_done")
    total = len(done) if done else int(meta.get("cells") or 0)
    earlier = sum(len(r.get("cells_done") or []) for r in runs)
    # The runner lists the storing run itself among the runs when it resumed earlier
    # ones (same start and machine): its time is then counted there, not twice.
    own = (meta.get("started"), meta.get("device"))
    listed = any((r.get("started"), r.get("device")) == own for r in runs)
    last = {
        "device": meta.get("device", {}),
        "cells": max(total - earlier, 0),
        "seconds": 0.0 if listed else float(meta.get("wall_time_s") or 0.0),
    }
    out: dict[str, list[float]] = {}
    for run in runs:
        entry = out.setdefault(machine_text(run.get("device", {})), [0, 0.0])
        entry[0] += len(run.get("cells_done") or [])
        entry[1] += _elapsed(run) or 0.0
    entry = out.setdefault(machine_text(last["device"]), [0, 0.0])
    entry[0] += last["cells"]
    entry[1] += last["seconds"]
    return [(m, int(c), float(t)) for m, (c, t) in out.items() if c or t]


def compute_text(meta: Mapping[str, Any]) -> str:
    """Write :func:`compute_by_machine` as a table cell shows it.

    Examples:
        >>> compute_text({"device": {"accelerator": "none", "cpu_count": 2},
        ...               "wall_time_s": 5400, "cells": 3})
        'CPU ×2: 3 cells, 1.5 h'
    """
    found = compute_by_machine(meta)
    # A result adopted from such a partial one (python -m dpnotes adopt) keeps its
    # times, and so the same gap.
    adopted = meta.get("adopted") or {}
    last_only = meta.get("partial") or (
        adopted.get("source_partial") and not adopted.get("source_runs_recorded")
    )
    if last_only and not meta.get("runs") and len(found) == 1:
        # A partial result stored without its runs' history (an older runner, or a
        # run still going): only the last run's time is known.
        ((m, c, t),) = found
        return f"{m}: {c} cell{'s' if c != 1 else ''} (the last run: {wall_text(t)})"
    # A run entry migrated from such a result (its cells resumed by a later run) has
    # the same gap: its machine's time is a lower bound.
    unknown = {
        machine_text(r.get("device", {}))
        for r in meta.get("runs") or []
        if r.get("last_run_only")
    }
    parts = [
        f"{m}: {c} cell{'s' if c != 1 else ''}, "
        f"{'at least ' if m in unknown else ''}{wall_text(t)}"
        for m, c, t in found
    ]
    return "; ".join(parts)


def machines(table: pd.DataFrame) -> list[str]:
    """The machines that computed the results of :func:`stored_results`, by name."""
    names = {m for text in table["computed on"] for m in _machine_names(text)}
    return sorted(names)


def _machine_names(text: str) -> list[str]:
    return [part.split(":")[0] for part in text.split("; ") if part]


def status_text(
    stored: StoredResult,
    experiment: Experiment,
    profile: str,
    *,
    root: str | os.PathLike[str] | None = None,
) -> str:
    """Say whether a chapter may use a stored result: complete, partial or stale.

    A stale result (its config hash is not the current code's) says why; a partial
    one how many cells of the grid it holds.
    """
    if stored.config_hash != config_hash(experiment, profile):
        return f"stale ({stale_reason(experiment.name, profile, root=root)})"
    if stored.partial:
        done = len(stored.meta.get("cells_done", []))
        return f"partial: {done} of {stored.meta.get('cells')} cells"
    return "complete"


def stamped_by(meta: Mapping[str, Any]) -> str:
    """Say which code a result is stamped with: the run's, or the last restamp's.

    Examples:
        >>> stamped_by({"profile": "paper"})
        'run'
        >>> check = {"cells_checked": [{"profile": "paper"}, {"profile": "smoke"}]}
        >>> stamped_by({"profile": "paper", "restamped": [check]})
        'restamp: 1 cell vs stored rows'
        >>> stamped_by({"profile": "paper@seeds=0", "adopted": check})
        'adopt: 2 cells vs stored rows'
    """
    checks = [e for e in meta.get("restamped", []) if "cells_checked" in e]
    adopted = meta.get("adopted")
    if adopted and (not checks or checks[-1].get("date", "") < adopted["date"]):
        # Adopted from a wider profile's rows (python -m dpnotes adopt) after any
        # restamp of those: the adoption's check stamped it.
        cells = len(adopted.get("cells_checked", []))
        return f"adopt: {cells} cell{'' if cells == 1 else 's'} vs stored rows"
    if not checks:
        return "run"
    last = checks[-1]
    cells = sum(c["profile"] == meta["profile"] for c in last["cells_checked"])
    against = "its own code" if last.get("reference") else "stored rows"
    return f"restamp: {cells} cell{'' if cells == 1 else 's'} vs {against}"


def wall_text(seconds: float | None) -> str:
    """Write a wall time in hours, minutes or seconds ("" when unknown).

    Examples:
        >>> wall_text(5400), wall_text(125), wall_text(9.4), wall_text(None)
        ('1.5 h', '2 min', '9 s', '')
    """
    if seconds is None:
        return ""
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


def _row(stored: StoredResult, experiment: Experiment, profile: str, root) -> dict:
    meta = stored.meta
    return {
        "experiment": experiment.name,
        "profile": profile,
        "status": status_text(stored, experiment, profile, root=root),
        "data": data_names(e["name"] for e in meta.get("datasets", [])),
        "device": device_text(meta),
        "wall time": wall_text(
            sum(t for _, _, t in compute_by_machine(meta)) or meta.get("wall_time_s")
        ),
        "computed on": compute_text(meta),
        "commit": str(meta.get("code_version", "")).rpartition("+g")[2][:8],
        "config hash": stored.config_hash,
        "stamped by": stamped_by(meta),
        "seed": meta.get("seed"),
    }


def stored_results(
    root: str | os.PathLike[str] | None = None,
    *,
    experiments: Iterable[Experiment] | None = None,
) -> pd.DataFrame:
    """List every stored result of every experiment and profile, one row each.

    Args:
        root: The results store (default :func:`dpnotes.lab.store.results_root`).
        experiments: The experiments (default: every registered one).

    Returns:
        The columns of :data:`WHAT_COLUMNS` and :data:`STAMP_COLUMNS`, ``device``,
        ``wall time`` and ``seed``; no rows when nothing is stored.
    """
    folder = results_root(root)
    rows = []
    for exp in list_experiments() if experiments is None else experiments:
        for profile in PROFILES:
            stored = read_result(
                folder / exp.name / profile, experiment=exp.name, profile=profile
            )
            if stored is not None:
                rows.append(_row(stored, exp, profile, folder))
    columns = dict.fromkeys(
        (*WHAT_COLUMNS, *STAMP_COLUMNS, "device", "wall time", "seed")
    )
    return pd.DataFrame(rows, columns=list(columns))


def citation_text(
    table: pd.DataFrame,
    *,
    version: str,
    experiment: str = "dp_mean_error",
    figure: str = "fig-mean-error",
) -> str:
    """Write how to cite one figure from its stored paper result ("" if none).

    Args:
        table: :func:`stored_results`.
        version: The package's version.
        experiment: The figure's experiment.
        figure: The figure's name.

    Raises:
        ValueError: If ``table`` lacks the columns of :func:`stored_results`.
    """
    need = {"experiment", "profile", "commit", "config hash"}
    if not need <= set(table.columns):
        raise ValueError(f"citation_text: the table lacks {sorted(need - set(table))}.")
    rows = table[(table["experiment"] == experiment) & (table["profile"] == "paper")]
    if rows.empty:
        return ""
    row = rows.iloc[0]
    return (
        f"For example: *Figure `{experiment}-{figure}` (profile `paper`, commit "
        f"`{row['commit']}`, config hash `{row['config hash']}`), dpnotes {version}.*"
    )


def data_files(files: Mapping[str, KnownFile] = KNOWN_FILES) -> pd.DataFrame:
    """List the data files: name, folder and description, records.

    Examples:
        >>> data_files().columns.tolist()
        ['file', 'what', 'rows']
    """
    rows = []
    for info in files.values():
        folder, _, name = info.relpath.rpartition("/")
        rows.append(
            {
                "file": name,
                "what": f"in `{folder}/`: {info.description}",
                "rows": f"{info.rows:,}" if info.rows else "",
            }
        )
    return pd.DataFrame(rows, columns=["file", "what", "rows"])


def licences(files: Mapping[str, KnownFile] = KNOWN_FILES) -> pd.DataFrame:
    """List each licence with the folders of the files under it."""
    folders: dict[str, list[str]] = {}
    for info in files.values():
        folder = info.relpath.rpartition("/")[0]
        folders.setdefault(info.licence, []).append(f"`{folder}/`")
    return pd.DataFrame(
        {
            "folder": [", ".join(dict.fromkeys(f)) for f in folders.values()],
            "licence": list(folders),
        }
    )


def sha256_lines(files: Mapping[str, KnownFile] = KNOWN_FILES) -> str:
    """The pinned files' sha256 in the format ``sha256sum -c`` reads."""
    return "\n".join(
        f"{info.sha256}  {info.relpath}" for info in files.values() if info.sha256
    )


def experiment_data(experiments: Iterable[Experiment] | None = None) -> pd.DataFrame:
    """List what each experiment computes and the data sets its quick profile reads."""
    rows = [
        {
            "experiment": exp.name,
            "what it computes": exp.title,
            "data": data_names(exp.datasets(exp.config("quick"))),
        }
        for exp in (list_experiments() if experiments is None else experiments)
    ]
    return pd.DataFrame(rows, columns=["experiment", "what it computes", "data"])
