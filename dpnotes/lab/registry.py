"""The registry of experiments: what each figure or table runs, under which profiles.

An experiment is a grid of *cells* (one setting each, e.g. one mechanism at one n) and a
function that computes the tidy rows of one cell::

    run_cell(config, cell, *, rng, cache, progress) -> pandas.DataFrame

``config`` is the profile (a frozen dataclass, :class:`Profile`), ``rng`` the cell's own
random stream, ``cache`` a :class:`Cache` shared with other cells and experiments (or
None) and ``progress`` whether the cell may draw progress bars of its own. The runner
(:func:`dpnotes.lab.run`) spawns the streams from one root seed, stores each finished
cell so that an interrupted run resumes where it stopped, and writes the final table
with its provenance.

Not every experiment's numbers come from that stream. Each says how it is seeded
(:data:`SEEDINGS`, the ``seeding`` of :func:`register`, or
:func:`declare_seeding` for modules whose code must not change): from the root seed
(``"root"``, the default), from its own grid (``"grid"``: a ``seed`` key in every cell
fixes its streams, as the DPSGD-F experiments pair their methods within a seed), or
not at all (``"none"``: descriptive tables). Only a ``"root"`` experiment takes a root
seed other than 0; :meth:`Experiment.check_seed` refuses one for the others, whose
result under it would be seed 0's numbers stored under another seed's name.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from dpnotes.lab.fingerprint import code_digests

__all__ = [
    "PROFILES",
    "SEEDINGS",
    "Cache",
    "Experiment",
    "Profile",
    "check_profile",
    "config_hash",
    "declare_seeding",
    "derived_profile",
    "get_experiment",
    "list_experiments",
    "register",
    "split_profile",
    "stable_hash",
    "to_jsonable",
]

#: Profiles every experiment has, cheapest first: ``smoke`` (seconds, used by the
#: tests), ``quick`` (minutes on a 2-core CPU, what a book build runs when nothing is
#: stored) and ``paper`` (the papers' full settings).
PROFILES: tuple[str, ...] = ("smoke", "quick", "paper")

#: How an experiment's numbers depend on the runner's root seed (``seeding``):
#: ``"root"``, its cells draw from the stream the runner spawns for them from the root
#: seed; ``"grid"``, its cells seed themselves from the ``seed`` key of their grid (the
#: root seed never reaches them); ``"none"``, its cells draw no random numbers at all.
SEEDINGS: tuple[str, ...] = ("root", "grid", "none")

# Characters a setting's key or value may not hold: they separate the parts of a derived
# profile's name, which is also a folder name.
_SET_RESERVED = frozenset("@,=/\\ \t\n")


def split_profile(profile: str) -> tuple[str, dict[str, str]]:
    """Split a profile name into its base profile and its settings.

    A *derived* profile is a base profile with some settings changed from the command
    line (``--set state=NY``); its name is the base, ``@`` and the settings in key
    order, ``"paper@state=NY"``, and its results live in a folder of that name beside
    the base profile's.

    Args:
        profile: ``"paper"`` or a derived name such as ``"paper@state=NY,year=2018"``.

    Returns:
        ``(base, {key: value})``, the values as the text given.

    Raises:
        TypeError: If ``profile`` is not a string.
        ValueError: If the base is not one of :data:`PROFILES`, or a setting is not
            ``KEY=VALUE``.

    Examples:
        >>> split_profile("paper@state=NY")
        ('paper', {'state': 'NY'})
        >>> split_profile("quick")
        ('quick', {})
    """
    if not isinstance(profile, str):
        raise TypeError(f"profile must be a string, got {type(profile).__name__}.")
    base, sep, rest = profile.partition("@")
    if base not in PROFILES:
        raise ValueError(f"unknown profile {base!r}; choose one of {list(PROFILES)}.")
    settings: dict[str, str] = {}
    if sep:
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key or not value:
                raise ValueError(
                    f"profile {profile!r}: each setting after '@' is KEY=VALUE, "
                    f"separated by commas; got {item!r}."
                )
            settings[key] = value
        if not settings:
            raise ValueError(f"profile {profile!r} has '@' but no setting after it.")
    return base, settings


def derived_profile(base: str, settings: Mapping[str, str]) -> str:
    """Return the name of ``base`` with ``settings`` changed (:func:`split_profile`).

    Args:
        base: One of :data:`PROFILES`.
        settings: ``{key: value}`` as text; empty gives ``base`` itself.

    Returns:
        The canonical name: the settings sorted by key.

    Raises:
        ValueError: If ``base`` is unknown or a key or value is empty or holds one of
            the characters ``@ , = / \\`` or white space.

    Examples:
        >>> derived_profile("paper", {"year": "2018", "state": "NY"})
        'paper@state=NY,year=2018'
    """
    if base not in PROFILES:
        raise ValueError(f"unknown profile {base!r}; choose one of {list(PROFILES)}.")
    for key, value in settings.items():
        for what, text in (("key", key), ("value", value)):
            if not isinstance(text, str) or not text or _SET_RESERVED & set(text):
                raise ValueError(
                    f"setting {key!r}={value!r}: the {what} must be non-empty text "
                    "without '@', ',', '=', slashes or spaces."
                )
    if not settings:
        return base
    return base + "@" + ",".join(f"{k}={settings[k]}" for k in sorted(settings))


def check_profile(profile: str) -> str:
    """Return ``profile`` if it names a base or a well-formed derived profile.

    Raises:
        TypeError, ValueError: As :func:`split_profile` does.
    """
    base, settings = split_profile(profile)
    derived_profile(base, settings)
    return profile


def _parse_setting(config: Any, key: str, text: str) -> Any:
    """Parse the command line's text to the type of ``key`` in ``config``."""
    current = getattr(config, key)
    try:
        if isinstance(current, bool):
            if text.lower() not in ("true", "false"):
                raise ValueError("give true or false")
            return text.lower() == "true"
        if isinstance(current, int):
            return int(text)
        if isinstance(current, float):
            return float(text)
        if isinstance(current, str):
            return text
        if isinstance(current, tuple) and all(isinstance(v, str) for v in current):
            return tuple(text.split("+"))
        for kind in (int, float):
            if (
                isinstance(current, tuple)
                and current
                and all(type(v) is kind for v in current)
            ):
                return tuple(kind(v) for v in text.split("+"))
    except ValueError as exc:
        raise ValueError(
            f"--set {key}={text}: not a {type(current).__name__} ({exc})."
        ) from None
    raise ValueError(
        f"--set {key}={text}: setting {key!r} is a {type(current).__name__}, which the "
        "command line cannot set (text, numbers, true/false and lists of text or of "
        "numbers joined by '+' can be set)."
    )


Cell = Mapping[str, Any]
CellFunction = Callable[..., pd.DataFrame]

_REGISTRY: dict[str, Experiment] = {}

# Seedings declared apart from registration (declare_seeding), by experiment name.
_DECLARED_SEEDING: dict[str, str] = {}

# Modules that define experiments; importing them fills the registry.
_EXPERIMENT_MODULES: tuple[str, ...] = (
    "dpnotes.experiments.dp_basics",
    "dpnotes.experiments.stratified_mean",
    "dpnotes.experiments.strat_synth",
    "dpnotes.experiments.dpsgd_f",
    "dpnotes.experiments.dpsgdf_reference",
    "dpnotes.experiments.dpsgdf_causes",
    "dpnotes.experiments.dpsgdf_census",
    "dpnotes.experiments.spending",
    "dpnotes.experiments.spending_e2e",
)


@dataclass(frozen=True)
class Profile:
    """Base class of an experiment's settings under one profile.

    Subclass it as a frozen dataclass whose fields are the settings, with the defaults
    the profiles share; each profile is one instance. The fields are what the config
    hash covers (:func:`config_hash`), so a setting that no code reads does not belong
    here.
    """

    def as_dict(self) -> dict[str, Any]:
        """Return the settings as plain JSON values (tuples become lists)."""
        return to_jsonable(
            {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        )


class Cache(Protocol):
    """A store of tables shared between cells and experiments (the run cache).

    The runner hands one to every cell (``cache=``); a cell that computes something
    another cell also needs asks it for the table instead of computing it again.
    """

    def table(
        self,
        namespace: str,
        key: Mapping[str, Any],
        compute: Callable[[], pd.DataFrame],
        *,
        code: Sequence[str] = (),
    ) -> pd.DataFrame:
        """Return ``compute()``, computed once for every ``key`` and code.

        ``key`` names all the computation depends on but its code; ``code`` names the
        modules whose source (with everything they import) the cache adds to it.
        """


def to_jsonable(value: Any) -> Any:
    """Convert settings to plain JSON types so that their hash is stable.

    >>> to_jsonable({"b": (1, 2), "a": np.float64(0.5)})
    {'a': 0.5, 'b': [1, 2]}
    """
    if isinstance(value, Profile):
        return value.as_dict()
    if isinstance(value, Mapping):
        return {
            str(k): to_jsonable(v)
            for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
        }
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [to_jsonable(v) for v in value.tolist()]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    raise TypeError(
        "experiment settings must hold JSON-like values (numbers, strings, lists, "
        f"dicts); got {type(value).__name__}: {value!r}"
    )


def stable_hash(value: Any, *, length: int = 16) -> str:
    """Return a short sha256 digest of a JSON-like value (dict order does not matter).

    >>> stable_hash({"b": 1, "a": [1, 2]}) == stable_hash({"a": [1, 2], "b": 1})
    True
    """
    text = json.dumps(to_jsonable(value), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def _is_timing(name: str) -> bool:
    return name.endswith("_seconds")


@dataclass(frozen=True)
class Experiment:
    """One registered experiment (a figure or a table of the book).

    Attributes:
        name: Registry key, used on the command line and as the results folder name.
        title: One line saying what it computes.
        profiles: ``{"smoke": Profile, "quick": Profile, "paper": Profile}``.
        grid: ``grid(config) -> list[cell]``, the settings to run; each cell is a dict
            of JSON-like values, and its keys become columns of the results table.
        run_cell: ``run_cell(config, cell, *, rng, cache, progress) -> DataFrame``,
            the tidy rows of one cell (see the module docstring).
        datasets: ``datasets(config) -> list[str]``, the data files read, as paths
            relative to the data root (``"acs/2018/1-Year/psam_p35.csv"``); empty for
            synthetic data.
        version: Bump to invalidate stored results for a reason the hash cannot see.
        figure: The figure or table of a paper it reproduces, if any (for the caption).
        module: The module that defines it; the config hash covers this module and
            every ``dpnotes`` module it imports, transitively.
        seeding: How its numbers depend on the root seed, one of :data:`SEEDINGS`;
            only a ``"root"`` experiment runs under a root seed other than 0
            (:meth:`check_seed`). Outside the config hash: it describes the code,
            it does not change what the code computes.
    """

    name: str
    title: str
    profiles: Mapping[str, Profile]
    grid: Callable[[Any], Sequence[Cell]]
    run_cell: CellFunction
    datasets: Callable[[Any], Sequence[str]] = field(default=lambda config: ())
    version: int = 1
    figure: str = ""
    module: str = ""
    seeding: str = "root"

    def check_seed(self, seed: int) -> int:
        """Return ``seed`` if this experiment's numbers depend on it, else refuse it.

        Root seed 0 is every experiment's default and always accepted. Another root
        seed is accepted only where it reaches the cells' numbers
        (``seeding == "root"``): elsewhere every root seed gives seed 0's numbers,
        and storing them under another seed's name would pass them off as an
        independent run.

        Raises:
            ValueError: For a root seed other than 0 of an experiment whose cells fix
                their own seeds or draw no random numbers; the message says what to
                do instead.
        """
        if seed == 0 or self.seeding == "root":
            return seed
        if self.seeding == "grid":
            raise ValueError(
                f"{self.name} fixes its seeds in its grid (the 'seed' key of its "
                "cells), so the root seed never reaches its numbers and root seed "
                f"{seed} would store the numbers of seed 0 under the name of seed "
                f"{seed}; select seeds with --only seed={seed} instead of --seed "
                f"(only={{'seed': [{seed}]}} from Python), with a profile whose grid "
                "lists that seed."
            )
        raise ValueError(
            f"{self.name} draws no random numbers: every root seed gives the numbers "
            f"of seed 0, and root seed {seed} would store them under another seed's "
            "name; run it without --seed (root seed 0)."
        )

    def config(self, profile: str) -> Profile:
        """Return the settings of one profile.

        A derived profile (``"paper@state=NY"``, see :func:`split_profile`) is its base
        profile's settings with the named ones replaced, each parsed to the type of the
        base's value.

        Raises:
            ValueError: If ``profile`` is not one of :data:`PROFILES` or a derived
                profile of one, names a setting the experiment does not have, or gives
                a value the setting cannot take.
        """
        base, settings = split_profile(profile)
        config = self.profiles[base]
        if not settings:
            return config
        if not dataclasses.is_dataclass(config):
            raise ValueError(
                f"experiment {self.name!r} has no settings the command line can change."
            )
        names = [f.name for f in dataclasses.fields(config) if f.init]
        unknown = sorted(set(settings) - set(names))
        if unknown:
            raise ValueError(
                f"experiment {self.name!r} has no setting {', '.join(unknown)}; its "
                f"settings are {', '.join(names)}."
            )
        changed = dataclasses.replace(
            config, **{k: _parse_setting(config, k, v) for k, v in settings.items()}
        )
        try:  # the data files it would read: an unknown state fails here, not later
            list(self.datasets(changed))
        except (KeyError, ValueError) as exc:
            why = (
                f"{exc.args[0]!r} is not a value it knows"
                if isinstance(exc, KeyError)
                else str(exc)
            )
            raise ValueError(
                f"experiment {self.name!r} under {profile!r}: {why}."
            ) from None
        return changed

    def settings(self, profile: str) -> list[str]:
        """Return the names of the settings ``--set`` can change under ``profile``."""
        config = self.profiles[split_profile(profile)[0]]
        if not dataclasses.is_dataclass(config):
            return []
        return [f.name for f in dataclasses.fields(config) if f.init]

    def cells(self, profile: str) -> list[dict[str, Any]]:
        """Return the grid of one profile as a list of plain dicts."""
        return [dict(to_jsonable(c)) for c in self.grid(self.config(profile))]

    def code_digests(self) -> dict[str, str]:
        """Return ``{module: digest}`` of the code the config hash covers."""
        return code_digests([self.module])

    def code_digest(self) -> str:
        """Hash the code that computes this experiment (:meth:`code_digests`)."""
        return stable_hash(self.code_digests())

    @staticmethod
    def is_timing(name: str) -> bool:
        """Return whether a column or a ``metric`` value names a wall time.

        Wall times (names ending in ``_seconds``) differ from run to run; every other
        value a cell returns is a function of the code, the settings and the seed.
        """
        return _is_timing(name)


def config_hash(experiment: Experiment, profile: str) -> str:
    """Return the hash that decides whether a stored result is current.

    It covers the experiment's name, version, profile settings and the code it
    can run (:meth:`Experiment.code_digests`). The root seed is recorded in the
    provenance but not hashed: a result computed with another seed is still a valid
    result of the same code.
    """
    return stable_hash(
        {
            "name": experiment.name,
            "version": experiment.version,
            "profile": profile,
            "config": to_jsonable(experiment.config(profile)),
            "code": experiment.code_digest(),
        }
    )


def register(
    *,
    name: str,
    title: str,
    profiles: Mapping[str, Profile],
    grid: Callable[[Any], Sequence[Cell]],
    datasets: Callable[[Any], Sequence[str]] | None = None,
    version: int = 1,
    figure: str = "",
    seeding: str | None = None,
) -> Callable[[CellFunction], CellFunction]:
    """Register the decorated ``run_cell`` function as an experiment.

    The arguments are the fields of :class:`Experiment`. ``seeding`` (one of
    :data:`SEEDINGS`) defaults to the one :func:`declare_seeding` declared for
    ``name``, else ``"root"``.

    Raises:
        ValueError: If the name is taken, a profile is missing, ``seeding`` is not
            one of :data:`SEEDINGS` or contradicts a declared one.
        TypeError: If a profile is not a :class:`Profile` instance.
    """
    declared = _DECLARED_SEEDING.get(name)
    if seeding is not None and declared is not None and seeding != declared:
        raise ValueError(
            f"experiment {name!r} is registered with seeding={seeding!r} but declared "
            f"{declared!r} (declare_seeding); give one."
        )
    seeding = _check_seeding(name, seeding or declared or "root")
    missing = [p for p in PROFILES if p not in profiles]
    if missing:
        raise ValueError(
            f"experiment {name!r} lacks profile(s) {missing}; give all of {PROFILES}."
        )
    extra = sorted(set(profiles) - set(PROFILES))
    if extra:
        raise ValueError(f"experiment {name!r} has unknown profile(s) {extra}.")
    for key, value in profiles.items():
        if not isinstance(value, Profile):
            raise TypeError(
                f"experiment {name!r}: profile {key!r} must be an instance of a "
                "frozen dataclass derived from dpnotes.lab.Profile, got "
                f"{type(value).__name__}."
            )

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
            profiles=dict(profiles),
            grid=grid,
            run_cell=fn,
            datasets=datasets or (lambda config: ()),
            version=version,
            figure=figure,
            module=fn.__module__,
            seeding=seeding,
        )
        return fn

    return decorator


def _check_seeding(name: str, seeding: str) -> str:
    if seeding not in SEEDINGS:
        raise ValueError(
            f"experiment {name!r}: seeding must be one of {list(SEEDINGS)}, got "
            f"{seeding!r}."
        )
    return seeding


def declare_seeding(seeding: Mapping[str, str]) -> None:
    """Declare how experiments are seeded, apart from their :func:`register` call.

    For experiments whose module cannot say it itself without a code change (which
    would make their stored results stale): ``dpnotes.experiments`` declares them in
    its ``__init__``, which runs before any of its modules registers and is outside
    every config hash. An experiment already registered is updated.

    Args:
        seeding: ``{experiment name: one of SEEDINGS}``.

    Raises:
        ValueError: If a value is not one of :data:`SEEDINGS`, or contradicts a
            seeding declared before or one other than ``"root"`` registered.
    """
    for name, value in seeding.items():
        _check_seeding(name, value)
        known = _DECLARED_SEEDING.get(name)
        if known is None and name in _REGISTRY and _REGISTRY[name].seeding != "root":
            known = _REGISTRY[name].seeding
        if known is not None and known != value:
            raise ValueError(
                f"experiment {name!r} is {known!r} already; cannot declare it "
                f"{value!r}."
            )
    for name, value in seeding.items():
        _DECLARED_SEEDING[name] = value
        if name in _REGISTRY:
            _REGISTRY[name] = dataclasses.replace(_REGISTRY[name], seeding=value)


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
