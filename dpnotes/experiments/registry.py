"""The registry of experiments: what each figure or table runs, under which profiles.

An experiment is a grid of *cells* (one setting each, e.g. one mechanism at one n) and a
function that computes the tidy rows of one cell. The runner
(``dpnotes.experiments.run``) spawns an independent random stream per cell from one
root seed, stores each finished cell so an interrupted run resumes where it stopped,
and writes the final table with its provenance.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "PROFILES",
    "Experiment",
    "config_hash",
    "get_experiment",
    "list_experiments",
    "register",
    "stable_hash",
]

#: Profiles every experiment has, cheapest first: ``smoke`` (seconds, used by the
#: tests), ``quick`` (minutes on a 2-core CPU, what a book build runs when nothing is
#: stored) and ``paper`` (the papers' full settings).
PROFILES: tuple[str, ...] = ("smoke", "quick", "paper")

Config = Mapping[str, Any]
Cell = Mapping[str, Any]
CellFunction = Callable[..., pd.DataFrame]

_REGISTRY: dict[str, Experiment] = {}

# Modules that define experiments; importing them fills the registry.
_EXPERIMENT_MODULES: tuple[str, ...] = (
    "dpnotes.experiments.dp_basics",
    "dpnotes.experiments.stratified_mean",
    "dpnotes.experiments.strat_synth",
    "dpnotes.experiments.dpsgd_f",
)


def _jsonable(value: Any) -> Any:
    """Convert configs to plain JSON types so that their hash is stable."""
    if isinstance(value, Mapping):
        return {
            str(k): _jsonable(v)
            for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
        }
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    raise TypeError(
        "experiment configs must hold JSON-like values (numbers, strings, lists, "
        f"dicts); "
        f"got {type(value).__name__}: {value!r}"
    )


def stable_hash(value: Any, *, length: int = 16) -> str:
    """Return a short sha256 digest of a JSON-like value (dict order does not matter).

    >>> stable_hash({"b": 1, "a": [1, 2]}) == stable_hash({"a": [1, 2], "b": 1})
    True
    """
    text = json.dumps(_jsonable(value), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def _source_digest(module_name: str) -> str:
    """Hash a module's source; for a package, every ``.py`` file under it."""
    module = importlib.import_module(module_name)
    digest = hashlib.sha256()
    paths = getattr(module, "__path__", None)
    if paths:
        for folder in map(Path, paths):
            for file in sorted(folder.rglob("*.py")):
                digest.update(file.relative_to(folder).as_posix().encode())
                digest.update(file.read_bytes())
        return digest.hexdigest()
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):  # pragma: no cover - frozen or compiled modules
        source = getattr(module, "__version__", module_name)
    digest.update(source.encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class Experiment:
    """One registered experiment (a figure or a table of the book).

    Attributes:
        name: Registry key, used on the command line and as the results folder name.
        title: One line saying what it computes.
        profiles: ``{"smoke": config, "quick": config, "paper": config}``.
        grid: ``grid(config) -> list[cell]``, the settings to run; each cell is a dict
            of JSON-like values, and its keys become columns of the results table.
        run_cell: ``run_cell(config, cell, *, rng) -> DataFrame``, the tidy rows of
            one cell.
        datasets: ``datasets(config) -> list[str]``, the data files read, as paths
            relative to the data root (``"acs/2018/1-Year/psam_p35.csv"``); empty for
            synthetic data.
        depends: Modules whose source code enters the config hash (the experiment's own
            module always does). A change in any of them makes stored results stale.
        version: Bump to invalidate stored results for a reason the hash cannot see.
        figure: The figure or table of a paper it reproduces, if any (for the caption).
    """

    name: str
    title: str
    profiles: Mapping[str, Config]
    grid: Callable[[Config], Sequence[Cell]]
    run_cell: CellFunction
    datasets: Callable[[Config], Sequence[str]] = field(default=lambda config: ())
    depends: tuple[str, ...] = ()
    version: int = 1
    figure: str = ""
    module: str = ""

    def config(self, profile: str) -> Mapping[str, Any]:
        """Return the (read-only) configuration of one profile."""
        if profile not in PROFILES:
            raise ValueError(
                f"unknown profile {profile!r}; choose one of {list(PROFILES)}."
            )
        return MappingProxyType(dict(self.profiles[profile]))

    def cells(self, profile: str) -> list[dict[str, Any]]:
        """Return the grid of one profile as a list of plain dicts."""
        return [dict(_jsonable(c)) for c in self.grid(self.config(profile))]

    def code_digest(self) -> str:
        """Hash the source of this experiment's module and the modules it depends on."""
        names = sorted({self.module, *self.depends} - {""})
        return stable_hash({n: _source_digest(n) for n in names})


def config_hash(experiment: Experiment, profile: str) -> str:
    """Return the hash that decides whether a stored result is current.

    It covers the experiment's name, version, profile configuration and the source
    code of the modules it depends on. The root seed is recorded in the provenance but
    not hashed: a result computed with another seed is still a valid result of the
    same code.
    """
    return stable_hash(
        {
            "name": experiment.name,
            "version": experiment.version,
            "profile": profile,
            "config": dict(experiment.config(profile)),
            "code": experiment.code_digest(),
        }
    )


def register(
    *,
    name: str,
    title: str,
    profiles: Mapping[str, Config],
    grid: Callable[[Config], Sequence[Cell]],
    datasets: Callable[[Config], Sequence[str]] | None = None,
    depends: Sequence[str] = (),
    version: int = 1,
    figure: str = "",
) -> Callable[[CellFunction], CellFunction]:
    """Register the decorated ``run_cell`` function as an experiment.

    Raises:
        ValueError: If the name is taken or a profile is missing.
    """
    missing = [p for p in PROFILES if p not in profiles]
    if missing:
        raise ValueError(
            f"experiment {name!r} lacks profile(s) {missing}; give all of {PROFILES}."
        )
    extra = sorted(set(profiles) - set(PROFILES))
    if extra:
        raise ValueError(f"experiment {name!r} has unknown profile(s) {extra}.")

    def decorator(fn: CellFunction) -> CellFunction:
        if name in _REGISTRY and _REGISTRY[name].run_cell is not fn:
            existing = _REGISTRY[name].module
            if existing != fn.__module__:
                raise ValueError(
                    f"experiment {name!r} is already registered by {existing}."
                )
        _REGISTRY[name] = Experiment(
            name=name,
            title=title,
            profiles=MappingProxyType({k: dict(v) for k, v in profiles.items()}),
            grid=grid,
            run_cell=fn,
            datasets=datasets or (lambda config: ()),
            depends=tuple(depends),
            version=version,
            figure=figure,
            module=fn.__module__,
        )
        return fn

    return decorator


def _load_all() -> None:
    for module in _EXPERIMENT_MODULES:
        importlib.import_module(module)


def list_experiments() -> list[Experiment]:
    """Return every registered experiment, sorted by name."""
    _load_all()
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def get_experiment(name: str) -> Experiment:
    """Return the experiment registered under ``name``.

    Raises:
        ValueError: If there is none; the message lists the registered names.
    """
    _load_all()
    if name not in _REGISTRY:
        raise ValueError(
            f"no experiment named {name!r}; run `python -m dpnotes list` to see them: "
            f"{sorted(_REGISTRY)}."
        )
    return _REGISTRY[name]
