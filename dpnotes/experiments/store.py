"""The results store: one folder per experiment and profile, written atomically.

Layout under the store root (``book/_results`` in the repository)::

    <experiment>/<profile>/results.csv     the tidy table (results.csv.gz if large)
    <experiment>/<profile>/meta.json       provenance, including the table's sha256
    <experiment>/<profile>/cells/<seed>/   finished cells of a run (resume points)
    .run_cache/<namespace>/<key hash>/     sub-computations shared between
                                           experiments (:func:`shared_table`)

A result is *trusted* only if ``meta.json`` parses, names the right experiment and
profile, and the sha256 it records equals that of the table's CSV text. Writing removes
the old ``meta.json`` first, replaces the table, and writes the new ``meta.json`` last,
each file through a temporary file and :func:`os.replace`; so a run interrupted at any
point leaves either the previous trusted result or nothing trusted, never a
half-written table that a later build would use.

A table whose CSV text exceeds :data:`COMPRESS_ABOVE` bytes is stored gzip-compressed
as ``results.csv.gz`` (per-epoch, per-group training logs run to megabytes and
compress about sixfold). ``meta.json`` names the file in ``"table"``, and the sha256
is always that of the uncompressed CSV text, so it does not depend on the zlib
version and a table keeps its checksum when it crosses the threshold.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import tempfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = [
    "StoredResult",
    "atomic_write_bytes",
    "read_result",
    "results_root",
    "run_cache",
    "shared_table",
    "write_result",
]

RESULTS_ENV = "DPNOTES_RESULTS_DIR"
#: Folder of the run cache; the runner sets it to ``<store root>/.run_cache`` while
#: it runs an experiment (unless already set), so its workers inherit it.
RUN_CACHE_ENV = "DPNOTES_RUN_CACHE"
RUN_CACHE_DIR = ".run_cache"
TABLE = "results.csv"
TABLE_GZ = "results.csv.gz"
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
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").is_file() and (folder / "book").is_dir():
            return folder / "book" / "_results"
    return here / "dpnotes_results"


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def table_to_bytes(table: pd.DataFrame) -> bytes:
    """Serialise a results table as CSV (small, diffable and portable)."""
    buffer = io.StringIO()
    table.to_csv(buffer, index=False, float_format="%.10g", lineterminator="\n")
    return buffer.getvalue().encode()


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
        return str(self.meta.get("config_hash", ""))

    @property
    def config(self) -> Mapping[str, Any]:
        """The profile's configuration that produced the table."""
        return self.meta.get("config", {})

    @property
    def datasets(self) -> list[str]:
        return [d["name"] for d in self.meta.get("datasets", [])] or ["synthetic data"]

    @property
    def partial(self) -> bool:
        """Whether this is an unfinished run's checkpoint rather than the whole grid."""
        return bool(self.meta.get("partial", False))

    def caption(self) -> str:
        """Return one plain-text sentence for a figure caption: what produced the data.

        It names the experiment, the profile, the data and the seed, and gives the
        command that regenerates the stored result.
        """
        data = ", ".join(self.datasets)
        profile = self.profile
        if self.partial:
            done = len(self.meta.get("cells_done", []))
            profile += f" (partial: {done} of {self.meta.get('cells')} cells computed)"
        return (
            f"Experiment {self.experiment}, profile {profile}, data: {data}, "
            f"seed {self.meta.get('seed')}; regenerate with: python -m dpnotes run "
            f"{self.experiment} --profile {self.profile}."
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
    name, stale = (TABLE_GZ, TABLE) if len(data) > COMPRESS_ABOVE else (TABLE, TABLE_GZ)
    meta = {
        **meta,
        "table": name,
        "table_sha256": sha256_bytes(data),
        "rows": len(table),
    }
    # Untrust the old result before touching its table.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(folder / META)
    # mtime=0: equal tables give equal files, so git sees no change on a rerun.
    packed = gzip.compress(data, compresslevel=9, mtime=0) if name == TABLE_GZ else data
    atomic_write_bytes(folder / name, packed)
    atomic_write_bytes(
        folder / META, (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode()
    )
    # The table in the other format, if any, is an older result's: remove it.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(folder / stale)
    return StoredResult(
        experiment=str(meta.get("experiment")),
        profile=str(meta.get("profile")),
        table=pd.read_csv(io.BytesIO(data)),
        meta=meta,
        path=folder,
    )


def read_result(folder: Path, *, experiment: str, profile: str) -> StoredResult | None:
    """Return the stored result in ``folder`` if complete and consistent, else None."""
    try:
        meta = json.loads((folder / META).read_text())
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(meta, dict):
        return None
    # Results written before compression existed have no "table" entry.
    name = meta.get("table", TABLE)
    if name not in (TABLE, TABLE_GZ):
        return None
    try:
        data = (folder / name).read_bytes()
        if name == TABLE_GZ:
            data = gzip.decompress(data)
    except (OSError, EOFError, zlib.error):  # missing, or not gzip
        return None
    if meta.get("experiment") != experiment or meta.get("profile") != profile:
        return None
    if meta.get("table_sha256") != sha256_bytes(data):
        return None
    try:
        table = pd.read_csv(io.BytesIO(data))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError):
        return None
    return StoredResult(experiment, profile, table, meta, folder)


def run_cache() -> Path | None:
    """Return the run cache folder (``$DPNOTES_RUN_CACHE``), or None when unset."""
    env = os.environ.get(RUN_CACHE_ENV)
    return Path(env) if env else None


def shared_table(
    namespace: str,
    key: Mapping[str, Any],
    compute: Callable[[], pd.DataFrame],
) -> pd.DataFrame:
    """Return ``compute()``, computed once for every experiment that needs it.

    Some cells of different experiments are the same computation: DPSGD at the
    paper's settings is a cell of Table 1, of Table 3 (``C = 1``) and of both sweeps
    of Figure 3. With a run cache (:func:`run_cache`; the runner sets one), the
    table is stored under ``<cache>/<namespace>/<hash of key>/`` with the same
    atomic, checksummed writes as a result, and later calls with an equal ``key``
    read it back. ``key`` must therefore name *everything* the computation depends
    on, the source code included; an unreadable or inconsistent entry is computed
    again. Without a cache the table is computed every time.

    The table always goes through its CSV form (as cell files do), so a computed
    table and a cached one are equal.

    Args:
        namespace: A folder name for one kind of computation.
        key: JSON-serialisable description of the computation.
        compute: Returns the table.
    """
    from dpnotes.experiments.registry import _jsonable, stable_hash

    folder = run_cache()
    if folder is None:
        return pd.read_csv(io.BytesIO(table_to_bytes(compute())))
    digest = stable_hash(dict(key))
    entry = folder / namespace / digest
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
            "key": _jsonable(dict(key)),
        },
    ).table
