"""The results store: one folder per experiment and profile, written atomically.

Layout under the store root (``book/_results`` in the repository)::

    <experiment>/<profile>/
        results.csv       the tidy table (results.csv.gz if large)
        meta.json         provenance, including the table's sha256
        seed-<s>/         the same for root seed s > 0 (side by side)
        cells/<hash>/     finished cells of a run (resume points)
        .lock             held while a run writes here (filelock)
    .run_cache/<namespace>/<key hash>/
                          sub-computations shared between experiments

``.run_cache`` is where :class:`RunCache` keeps them.

A result is *trusted* only if ``meta.json`` parses, names the right experiment and
profile, and the sha256 it records equals that of the table's CSV text. Writing never
touches the table the current ``meta.json`` names: a new table that differs goes to
the other of two names (``results.csv`` and ``results.1.csv``, each possibly ``.gz``),
then ``meta.json`` is replaced in one :func:`os.replace`, and only then are the other
tables removed. So a run interrupted at any point leaves the previous trusted result
or the new one, never a half-written table that a later build would use, and never
nothing where a complete result was.

A table whose CSV text exceeds ``COMPRESS_ABOVE`` bytes is stored gzip-compressed
as ``results.csv.gz`` (per-epoch, per-group training logs run to megabytes and
compress about sixfold). ``meta.json`` names the file in ``"table"``, and the sha256
is always that of the uncompressed CSV text, so it does not depend on the zlib
version and a table keeps its checksum when it crosses the threshold.

Files are written readable by everyone (0644), and the repository's ``.gitattributes``
keeps stored tables byte-exact across checkouts (no end-of-line conversion), so that
their sha256 holds on every platform.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import math
import os
import tempfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from filelock import FileLock, Timeout

from dpnotes.lab.fingerprint import code_digests
from dpnotes.lab.registry import stable_hash, to_jsonable
from dpnotes.paths import repository_root
from dpnotes.report import machine_name

__all__ = [
    "RunCache",
    "RunLocked",
    "StoredResult",
    "atomic_write_bytes",
    "check_wait",
    "inspect_result",
    "read_result",
    "result_folder",
    "results_root",
    "run_lock",
    "stored_seeds",
    "write_result",
]

RESULTS_ENV = "DPNOTES_RESULTS_DIR"
RUN_CACHE_DIR = ".run_cache"
LOCK = ".lock"
#: Mode of every file the store writes: readable by all, writable by the owner.
FILE_MODE = 0o644
TABLE = "results.csv"
TABLE_GZ = "results.csv.gz"
#: Every name a stored table may have: the plain and compressed ``results.csv``, and
#: their alternates, to which a new table goes while the old one is still trusted.
TABLE_NAMES: tuple[str, ...] = (TABLE, TABLE_GZ, "results.1.csv", "results.1.csv.gz")
META = "meta.json"
#: Tables whose CSV text is larger than this many bytes are stored as ``TABLE_GZ``.
COMPRESS_ABOVE = 1_000_000


def results_root(root: str | os.PathLike[str] | None = None) -> Path:
    """Return the folder that holds stored results.

    Resolution order: ``root``; the environment variable ``DPNOTES_RESULTS_DIR``; the
    ``book/_results`` folder of the repository that contains the current directory
    (found by walking up to a folder with ``_toc.yml`` and ``book/``); else
    ``./dpnotes_results``.
    """
    if root is not None:
        return Path(root)
    env = os.environ.get(RESULTS_ENV)
    if env:
        return Path(env)
    root = repository_root()
    return (
        root / "book" / "_results" if root else Path.cwd().resolve() / "dpnotes_results"
    )


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp creates 0600: a stored result is for everyone to read.
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


#: How a results table writes its floats: ten significant digits.
FLOAT_FORMAT = "%.10g"


def table_to_bytes(table: pd.DataFrame) -> bytes:
    """Serialise a results table as CSV (small, diffable and portable)."""
    buffer = io.StringIO()
    table.to_csv(buffer, index=False, float_format=FLOAT_FORMAT, lineterminator="\n")
    return buffer.getvalue().encode()


def as_written(value: float) -> float:
    """Return ``value`` as a stored table reads it back (:data:`FLOAT_FORMAT`)."""
    return float(FLOAT_FORMAT % value)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class StoredResult:
    """A trusted stored result: its table, provenance and where it lives."""

    experiment: str
    profile: str
    table: pd.DataFrame
    meta: Mapping[str, Any]
    path: Path

    @property
    def config_hash(self) -> str:
        """The hash of the configuration that computed the table (``""`` if absent)."""
        return str(self.meta.get("config_hash", ""))

    @property
    def config(self) -> Mapping[str, Any]:
        """The profile's configuration that produced the table."""
        return self.meta.get("config", {})

    @property
    def datasets(self) -> list[str]:
        """The names of the data sets the table comes from (else "synthetic data")."""
        return [d["name"] for d in self.meta.get("datasets", [])] or ["synthetic data"]

    @property
    def partial(self) -> bool:
        """Whether this is an unfinished run's checkpoint rather than the whole grid."""
        return bool(self.meta.get("partial", False))

    def cells_by_machine(self) -> dict[str, int]:
        """Return how many of the stored cells each machine computed, in run order.

        A machine is named by its accelerator, or by its CPU where it had none. A
        result computed in one run (no ``meta["runs"]``) has one machine, its
        ``device``, with every stored cell (all of the grid's for a whole result).

        Examples:
            >>> gpu = {"accelerator": "NVIDIA H200", "cpu": "Xeon"}
            >>> cpu = {"accelerator": "none", "cpu": "AMD EPYC"}
            >>> runs = [{"device": gpu, "cells_done": ["a", "b"]},
            ...         {"device": cpu, "cells_done": ["c"]}]
            >>> meta = {"runs": runs}
            >>> StoredResult("e", "p", pd.DataFrame(), meta, Path()).cells_by_machine()
            {'NVIDIA H200': 2, 'AMD EPYC': 1}
        """
        runs = self.meta.get("runs")
        if not runs:  # one run: every stored cell (a whole result lists none)
            done = self.meta.get("cells_done")
            n = len(done) if done is not None else int(self.meta.get("cells", 0))
            return {machine_name(self.meta.get("device")): n}
        machines: dict[str, int] = {}
        for r in runs:
            name = machine_name(r.get("device"))
            machines[name] = machines.get(name, 0) + len(r.get("cells_done", []))
        return machines

    def caption(self) -> str:
        """Return one plain-text sentence for a figure caption: what produced the data.

        It names the experiment, the profile, the data and the seed, and gives the
        command that regenerates the stored result. A result whose cells were computed
        on different machines (``meta["runs"]``) names each and its number of cells.
        """
        data = ", ".join(self.datasets)
        profile = self.profile
        if self.partial:
            done = len(self.meta.get("cells_done", []))
            profile += f" (partial: {done} of {self.meta.get('cells')} cells computed)"
        machines = self.cells_by_machine()
        where = (
            "; cells computed on "
            + ", ".join(f"{name}: {n}" for name, n in machines.items())
            if len(machines) > 1
            else ""
        )
        seed = self.meta.get("seed")
        again = f" --seed {seed}" if seed not in (0, None) else ""
        # A derived profile ("paper@state=NY") is its base and the command's --set.
        base, _, settings = self.profile.partition("@")
        for item in settings.split(",") if settings else []:
            again += f" --set {item}"
        return (
            f"Experiment {self.experiment}, profile {profile}, data: {data}, "
            f"seed {seed}{where}; regenerate with: python -m dpnotes run "
            f"{self.experiment} --profile {base}{again}."
        )


def write_result(
    folder: Path, table: pd.DataFrame, meta: Mapping[str, Any]
) -> StoredResult:
    """Store ``table`` and ``meta`` in ``folder``; a crash never leaves a trusted half.

    The table's sha256 is added to the metadata; see the module docstring for the
    order of the writes.
    """
    folder.mkdir(parents=True, exist_ok=True)
    data = table_to_bytes(table)
    digest = sha256_bytes(data)
    compressed = len(data) > COMPRESS_ABOVE
    # The table meta.json names now, and the digest of what that file holds.
    current, same = _current_table(folder)
    if same == digest and current is not None and current.endswith(".gz") == compressed:
        name = current  # an equal table: nothing to rewrite, no name to change
    else:
        names = (
            (TABLE_GZ, "results.1.csv.gz") if compressed else (TABLE, "results.1.csv")
        )
        name = names[1] if current == names[0] else names[0]
        # mtime=0: equal tables give equal files, so git sees no change on a rerun.
        packed = gzip.compress(data, compresslevel=9, mtime=0) if compressed else data
        atomic_write_bytes(folder / name, packed)
    meta = {**meta, "table": name, "table_sha256": digest, "rows": len(table)}
    # The switch: one replace of meta.json, from the old table to the new one.
    atomic_write_bytes(
        folder / META, (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode()
    )
    for other in TABLE_NAMES:
        if other != name:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(folder / other)
    return StoredResult(
        experiment=str(meta.get("experiment")),
        profile=str(meta.get("profile")),
        table=pd.read_csv(io.BytesIO(data)),
        meta=meta,
        path=folder,
    )


def _current_table(folder: Path) -> tuple[str | None, str | None]:
    """The table file the current ``meta.json`` names, and the sha256 of its CSV text.

    The digest is of the file as it is on disk (``None`` if it cannot be read), not
    the one ``meta.json`` records; ``(None, None)`` without a readable ``meta.json``
    naming a known table.
    """
    try:
        meta = json.loads((folder / META).read_text())
    except (OSError, ValueError):
        return None, None
    if not isinstance(meta, dict):
        return None, None
    name = meta.get("table", TABLE)
    if name not in TABLE_NAMES:
        return None, None
    try:
        data = (folder / name).read_bytes()
        if name.endswith(".gz"):
            data = gzip.decompress(data)
    except (OSError, EOFError, zlib.error):
        return name, None
    return name, sha256_bytes(data)


def inspect_result(
    folder: Path, *, experiment: str, profile: str
) -> tuple[StoredResult | None, str | None]:
    """Read the stored result in ``folder`` and say what is wrong with it, if anything.

    Returns:
        ``(result, None)`` for a trusted result; ``(None, None)`` when nothing is
        stored; ``(None, why)`` for a damaged one (a table edited by hand, a missing
        or truncated file, metadata of another experiment), which is never used.
    """
    try:
        meta = json.loads((folder / META).read_text())
    except FileNotFoundError:
        tables = [n for n in TABLE_NAMES if (folder / n).is_file()]
        return None, (f"{tables[0]} without {META}" if tables else None)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        return None, f"{META} does not parse ({err.__class__.__name__})"
    if not isinstance(meta, dict):
        return None, f"{META} is not a JSON object"
    # Results written before compression existed have no "table" entry.
    name = meta.get("table", TABLE)
    if name not in TABLE_NAMES:
        return None, f"{META} names an unknown table file {name!r}"
    try:
        data = (folder / name).read_bytes()
        if name.endswith(".gz"):
            data = gzip.decompress(data)
    except FileNotFoundError:
        return None, f"{name} is missing"
    except (OSError, EOFError, zlib.error):
        return None, f"{name} is not a readable gzip file"
    if meta.get("experiment") != experiment or meta.get("profile") != profile:
        return None, (
            f"{META} belongs to {meta.get('experiment')!r} [{meta.get('profile')!r}]"
        )
    if meta.get("table_sha256") != sha256_bytes(data):
        return None, (
            f"{name} does not match the sha256 in {META} (edited by hand, truncated, "
            "or converted by a checkout)"
        )
    try:
        table = pd.read_csv(io.BytesIO(data))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError):
        return None, f"{name} does not parse as CSV"
    return StoredResult(experiment, profile, table, meta, folder), None


def read_result(folder: Path, *, experiment: str, profile: str) -> StoredResult | None:
    """Return the stored result in ``folder`` if complete and consistent, else None."""
    return inspect_result(folder, experiment=experiment, profile=profile)[0]


def result_folder(
    root: str | os.PathLike[str] | None, experiment: str, profile: str, seed: int = 0
) -> Path:
    """Return the folder of one experiment, profile and root seed.

    Seed 0 (every result the book shows) lives in ``<experiment>/<profile>``; another
    root seed ``s`` beside it in ``<experiment>/<profile>/seed-<s>``, so a run with a
    new seed never touches a stored result of another.
    """
    folder = results_root(root) / experiment / profile
    return folder if seed == 0 else folder / f"seed-{seed}"


def stored_seeds(
    root: str | os.PathLike[str] | None, experiment: str, profile: str
) -> list[int]:
    """Return the root seeds that have a folder for ``experiment`` and ``profile``."""
    folder = results_root(root) / experiment / profile
    seeds = [0] if any((folder / n).is_file() for n in (META, *TABLE_NAMES)) else []
    for sub in sorted(folder.glob("seed-*")) if folder.is_dir() else []:
        tail = sub.name.removeprefix("seed-")
        if tail.isdigit() and int(tail) > 0 and sub.is_dir():
            seeds.append(int(tail))
    return sorted(seeds)


class RunLocked(RuntimeError):
    """Another process is running the same experiment, profile and seed."""


def check_wait(wait: object) -> float:
    """Return ``wait`` (seconds to wait for a lock) as a float, or refuse it.

    filelock reads a negative timeout as "wait forever"; a run must never hang on a
    typo, so only a finite number of seconds, ``0`` or more, is taken.

    Raises:
        ValueError: If ``wait`` is not a finite number of seconds ``>= 0``.
    """
    if isinstance(wait, bool) or not isinstance(wait, (int, float)):
        raise ValueError(f"wait must be a number of seconds, got {wait!r}.")
    if not math.isfinite(wait) or wait < 0:
        raise ValueError(
            f"wait must be a finite number of seconds >= 0 (0 refuses at once), got "
            f"{wait!r}."
        )
    return float(wait)


@contextlib.contextmanager
def run_lock(folder: Path, *, wait: float = 0.0, what: str = "this result"):
    """Hold the lock of a result folder while a run or a restamp writes there.

    Args:
        folder: The result folder (:func:`result_folder`).
        wait: Seconds to wait for another holder; ``0`` refuses at once.
        what: How to name the result in the error message.

    Raises:
        RunLocked: If another process holds the lock after ``wait`` seconds.
    """
    wait = check_wait(wait)
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(folder / LOCK), mode=FILE_MODE)
    try:
        lock.acquire(timeout=wait)
    except Timeout:
        raise RunLocked(
            f"{what} is being written by another process (lock {folder / LOCK}); "
            "wait for that run to finish, or stop it, then run this command again."
        ) from None
    try:
        yield
    finally:
        lock.release()


class RunCache:
    """Sub-computations shared between cells and experiments, stored on disk.

    Some cells of different experiments are the same computation: DPSGD at the paper's
    settings is a cell of Table 1, of Table 3 (``C = 1``) and of both sweeps of
    Figure 3. The runner hands each cell a ``RunCache`` on ``<store>/.run_cache``
    (ignored by git); :meth:`table` stores a computed table under
    ``<folder>/<namespace>/<hash of key>/`` with the same atomic, checksummed writes as
    a result, and later calls with an equal ``key`` read it back.

    Args:
        folder: Where the entries live (created on first use).
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    def __repr__(self) -> str:
        return f"RunCache({str(self.folder)!r})"

    def table(
        self,
        namespace: str,
        key: Mapping[str, Any],
        compute: Callable[[], pd.DataFrame],
        *,
        code: Sequence[str] = (),
    ) -> pd.DataFrame:
        """Return ``compute()``, computed once for every experiment that needs it.

        ``key`` and ``code`` must name *everything* the computation depends on; an
        unreadable or inconsistent entry is computed again. The table always goes
        through its CSV form (as cell files do), so a computed table and a cached one
        are equal.

        Args:
            namespace: A folder name for one kind of computation.
            key: JSON-serialisable description of the computation.
            compute: Returns the table.
            code: Modules that compute it: their source digests, and those of every
                module they import (:func:`~dpnotes.lab.fingerprint.code_digests`),
                join the key.
        """
        if code:
            key = {**key, "code": code_digests(list(code))}
        digest = stable_hash(dict(key))
        entry = self.folder / namespace / digest
        stored = read_result(entry, experiment=namespace, profile=digest)
        if stored is not None and stored.meta.get("key_hash") == digest:
            return stored.table
        table = compute()
        return write_result(
            entry,
            table,
            {
                "experiment": namespace,
                "profile": digest,
                "key_hash": digest,
                "key": to_jsonable(dict(key)),
            },
        ).table
