"""The registry of experiments: what each figure or table runs, under which profiles.

An experiment is a grid of *cells* (one setting each, e.g. one mechanism at one n) and a
function that computes the tidy rows of one cell. The runner
(``dpnotes.experiments.run``) spawns an independent random stream per cell from one
root seed, stores each finished cell so an interrupted run resumes where it stopped,
and writes the final table with its provenance.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import importlib.util
import json
import re
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
    "code_digests",
    "config_hash",
    "get_experiment",
    "import_closure",
    "list_experiments",
    "normalized_source",
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

# Modules that run, store and read experiments. An experiment's module imports them, but
# they compute none of its numbers, so they stay out of its config hash (a change in the
# store's file format is handled by the store itself).
_INFRASTRUCTURE: frozenset[str] = frozenset(
    {
        "dpnotes.experiments",
        "dpnotes.experiments.combine",
        "dpnotes.experiments.registry",
        "dpnotes.experiments.runner",
        "dpnotes.experiments.store",
    }
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


_NEWLINE = re.compile(r"\r\n|\r|\n")
_SPANS_LINES = re.compile(r"\"\"\"|'''|\\\r?\n")


def normalized_source(text: str) -> str:
    r"""Return Python source without the parts that cannot change what it computes.

    Removed: docstrings (every statement that is a plain string literal), comment-only
    lines, blank lines and trailing whitespace. Kept verbatim: every other line,
    indentation and end-of-line comments included, and every line of a multi-line
    string that is not a docstring (a blank line or a ``#`` in it is part of a
    value). So correcting a docstring or a comment leaves a stored result current,
    while any change to code does not. Only positions from :mod:`ast` are used,
    which every supported Python reports alike, so a file has one digest.

    >>> code = 'def f(x):\n    "Twice x."\n\n    # doubled\n    return 2 * x  # y\n'
    >>> normalized_source(code)
    'def f(x):\n    return 2 * x  # y'
    """
    tree = ast.parse(text)
    rows = _NEWLINE.split(text)

    # ast columns count UTF-8 bytes; rows are strings.
    def col(row: int, offset: int) -> int:
        return len(rows[row - 1].encode()[:offset].decode(errors="ignore"))

    docstrings = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ]
    skip = {id(node.value) for node in docstrings}
    # Rows of a string value that spans lines: a triple-quoted one, or one with a
    # backslash-newline. (Single-line literals concatenated over several lines are
    # not: their rows may hold comments and trailing spaces outside the quotes.)
    verbatim: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.Constant, ast.JoinedStr))
            and id(node) not in skip
            and isinstance(getattr(node, "value", ""), (str, bytes))
            and node.end_lineno is not None
            and node.end_lineno > node.lineno
            and _SPANS_LINES.search("\n".join(rows[node.lineno - 1 : node.end_lineno]))
        ):
            verbatim.update(range(node.lineno, node.end_lineno + 1))
    for node in docstrings:
        first, last = node.lineno, node.end_lineno or node.lineno
        a, b = col(first, node.col_offset), col(last, node.end_col_offset or 0)
        if first == last:
            rows[first - 1] = rows[first - 1][:a] + rows[first - 1][b:]
            continue
        rows[first - 1] = rows[first - 1][:a]
        for row in range(first + 1, last):
            rows[row - 1] = ""
            verbatim.discard(row)
        rows[last - 1] = rows[last - 1][b:]
        verbatim.discard(last)
    out = []
    for number, row in enumerate(rows, start=1):
        if number in verbatim:
            out.append(row)
            continue
        row = row.rstrip()
        if row and not row.lstrip().startswith("#"):
            out.append(row)
    return "\n".join(out)


#: The folder of the ``dpnotes`` package, whose modules are located by path.
_PACKAGE_ROOT = Path(__file__).resolve().parents[1]


def _module_file(name: str) -> Path | None:
    """Return the source file of a module (a package's ``__init__.py``), or None.

    A ``dpnotes`` module is found by path, without importing anything (importing a
    module to locate it would import torch to hash a census experiment); another
    module (an experiment registered outside the package) through its import spec.
    """
    parts = name.split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    if parts[0] != "dpnotes":
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            return None
        return Path(spec.origin)
    base = _PACKAGE_ROOT.joinpath(*parts[1:])
    for file in (base / "__init__.py", base.with_suffix(".py")):
        if file.is_file():
            return file
    return None


def _package_modules(name: str) -> list[str]:
    """Return ``name`` itself, or every module of the package ``name``."""
    file = _module_file(name)
    if file is None or file.name != "__init__.py":
        return [name]
    out = []
    for path in sorted(file.parent.rglob("*.py")):
        parts = path.relative_to(file.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append(".".join((name, *parts)))
    return out


def _module_digest(name: str) -> str:
    """Return the sha256 of a module's :func:`normalized_source`."""
    file = _module_file(name)
    if file is None:
        raise ValueError(f"no source file for module {name!r}.")
    stat = file.stat()
    return _normalized_digest(str(file), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=512)
def _normalized_digest(path: str, mtime_ns: int, size: int) -> str:
    """:func:`_module_digest` of one version of a file (time and size key the cache)."""
    del mtime_ns, size
    text = Path(path).read_text(encoding="utf-8")
    return hashlib.sha256(normalized_source(text).encode()).hexdigest()


def _imports_of(name: str) -> frozenset[str]:
    """Return the ``dpnotes`` modules that module ``name`` imports (read, not run).

    ``from dpnotes.a import b`` counts ``dpnotes.a.b`` when that is a module, else
    ``dpnotes.a``; relative imports are resolved against ``name``'s package.
    """
    file = _module_file(name)
    if file is None:
        return frozenset()
    stat = file.stat()
    return _parse_imports(name, str(file), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=512)
def _parse_imports(name: str, path: str, mtime_ns: int, size: int) -> frozenset[str]:
    """:func:`_imports_of` of one version of a file (time and size key the cache)."""
    del mtime_ns, size
    file = Path(path)
    tree = ast.parse(file.read_text(), filename=path)
    package = name if file.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                dpnotes = sub.startswith("dpnotes.")
                found.add(sub if dpnotes and _module_file(sub) is not None else target)
    return frozenset(m for m in found if m == "dpnotes" or m.startswith("dpnotes."))


def import_closure(names: Sequence[str]) -> set[str]:
    """Return every ``dpnotes`` module that the modules ``names`` import, transitively.

    A package in ``names`` stands for all of its modules. Modules are named as files:
    a package in the result means its ``__init__.py`` only. Imports are read from the
    source (the ``import`` statements anywhere in a file, including inside
    functions), so the result says which code a computation can run, which is what
    its config hash has to cover.

    >>> "dpnotes.validation" in import_closure(["dpnotes.rng"])
    False
    >>> "dpnotes.accounting" in import_closure(["dpnotes.mechanisms"])
    True
    """
    todo = [m for n in names for m in _package_modules(n)]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(_imports_of(name) - seen)
    return seen


def code_digests(names: Sequence[str]) -> dict[str, str]:
    """Return ``{module: digest}`` for the code that the modules ``names`` can run.

    The modules are :func:`import_closure` of ``names`` less the infrastructure that
    runs, stores and reads experiments (it computes none of their numbers; the store
    handles a change of its own file format). Each digest is the sha256 of the
    module's :func:`normalized_source`, so editing a docstring or a comment changes
    none of them.
    """
    modules = sorted(import_closure([n for n in names if n]) - _INFRASTRUCTURE)
    return {name: _module_digest(name) for name in modules}


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
        depends: Modules (or packages) whose code computes the experiment besides its
            own module, e.g. one that it calls only through a string. The config hash
            covers these, the experiment's module, and everything they import,
            transitively (:func:`code_digests`); a change in the code of any of them
            makes stored results stale.
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

    def code_digests(self) -> dict[str, str]:
        """Return ``{module: digest}`` of the code the config hash covers."""
        return code_digests([self.module, *self.depends])

    def code_digest(self) -> str:
        """Hash the code that computes this experiment (:meth:`code_digests`)."""
        return stable_hash(self.code_digests())


def config_hash(experiment: Experiment, profile: str) -> str:
    """Return the hash that decides whether a stored result is current.

    It covers the experiment's name, version, profile configuration and the code it
    can run (:meth:`Experiment.code_digests`). The root seed is recorded in the
    provenance but not hashed: a result computed with another seed is still a valid
    result of the same code.
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

    The arguments are the fields of :class:`Experiment`.

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
