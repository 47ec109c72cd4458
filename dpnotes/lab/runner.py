"""Run registered experiments, store results with provenance, and load them back.

Cells run in this process (``jobs=1``), in spawned local worker processes
(``jobs > 1``), or on a Dask cluster (``scheduler="tcp://host:8786"`` or
``$DPNOTES_SCHEDULER``): a ``distributed.Client``'s executor is a
:mod:`concurrent.futures` executor, so all three go through one code path, and each
finished cell is stored as it returns, whichever machine computed it.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import datetime as dt
import importlib.metadata
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm import tqdm

from dpnotes.lab.registry import (
    Experiment,
    check_profile,
    config_hash,
    derived_profile,
    get_experiment,
    split_profile,
    stable_hash,
    to_jsonable,
)
from dpnotes.lab.store import (
    RUN_CACHE_DIR,
    RunCache,
    StoredResult,
    atomic_write_bytes,
    check_wait,
    read_result,
    result_folder,
    results_root,
    run_lock,
    table_to_bytes,
    write_result,
)

__all__ = [
    "checkpoint",
    "device_info",
    "load_or_run",
    "load_stored",
    "profile_with",
    "provenance",
    "run",
    "stale_reason",
]

FALLBACK_ENV = "DPNOTES_FALLBACK_PROFILE"
#: Address of a Dask scheduler to send cells to when ``scheduler`` is not given.
SCHEDULER_ENV = "DPNOTES_SCHEDULER"
#: Seconds :func:`load_or_run` waits for another process computing the same result.
LOAD_WAIT_S = 3600.0


_PACKAGES = (
    "dpnotes",
    "numpy",
    "scipy",
    "pandas",
    "scikit-learn",
    "torch",
    "opacus",
    "mbi",
    "jax",
    "folktables",
    "diffprivlib",
    "fairlearn",
    "sage-importance",
)


def _package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in _PACKAGES:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            versions[name] = importlib.metadata.version(name)
    return versions


def code_version() -> str:
    """Return the package version and, in a git checkout, the commit (``.dirty``)."""
    from dpnotes import __version__

    here = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(here), "status", "--porcelain", "--", "dpnotes"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return __version__
    return f"{__version__}+g{commit}{'.dirty' if dirty else ''}"


def device_info(config: Any = None) -> dict[str, Any]:
    """Describe the machine; ``accelerator`` names the GPU the cells could use.

    Cells may run in spawned workers that import torch while this process never
    does, so a config whose ``device`` is not ``"cpu"`` (``"auto"``, ``"cuda"``)
    makes this process import torch to ask; otherwise torch is asked only if it is
    already imported (a CPU-only experiment pays no import for its provenance).
    """
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "accelerator": "none",
    }
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    torch = sys.modules.get("torch")
    if torch is None and str(getattr(config, "device", "cpu")) != "cpu":
        with contextlib.suppress(ImportError):
            import torch
    if torch is not None and torch.cuda.is_available():
        info["accelerator"] = torch.cuda.get_device_name(0)
    return info


def _datasets(experiment: Experiment, profile: str) -> list[dict[str, Any]]:
    """Return the name and sha256 of each data file the profile reads.

    A missing file is fetched first, as the experiment's loaders would fetch it
    (:func:`dpnotes.data.ensure_file`: downloaded and verified against its sha256,
    or, offline, a :class:`~dpnotes.data.DataNotFoundError` naming the file and where
    to get it), so that a run on a fresh machine gets its data before any cell runs.

    Raises:
        dpnotes.data.DataNotFoundError: If a file is missing and cannot be fetched
            (offline, or the download failed), or is not a known file.
        dpnotes.data.DataIntegrityError: If a known file's sha256 is wrong.
    """
    names = list(experiment.datasets(experiment.config(profile)))
    if not names:
        return []
    from dpnotes.data import (
        KNOWN_FILES,
        DataNotFoundError,
        data_root,
        ensure_file,
        file_sha256,
    )

    root = data_root()
    found = []
    for name in names:
        if name in KNOWN_FILES:
            path = ensure_file(KNOWN_FILES[name], root)
        elif (root / name).is_file():
            path = root / name
        else:
            raise DataNotFoundError(
                f"{experiment.name} [{profile}] reads the data file {name!r}, which "
                f"is not at {root / name} and is not one dpnotes knows how to fetch "
                "(dpnotes.data.KNOWN_FILES); save it there, or set DPNOTES_DATA_DIR "
                "to the folder that holds it."
            )
        found.append({"name": name, "sha256": file_sha256(path)})
    return found


def provenance(experiment: Experiment, profile: str, seed: int) -> dict[str, Any]:
    """Return the provenance of a run (everything but its timing and table hash)."""
    return {
        "experiment": experiment.name,
        "title": experiment.title,
        "figure": experiment.figure,
        "profile": profile,
        "seed": seed,
        "config": to_jsonable(experiment.config(profile)),
        "config_hash": config_hash(experiment, profile),
        "code_digests": experiment.code_digests(),
        "code_version": code_version(),
        "packages": _package_versions(),
        "device": device_info(experiment.config(profile)),
        "datasets": _datasets(experiment, profile),
    }


def _cell_rng(seed: int, cell: dict[str, Any]) -> np.random.Generator:
    # Keyed by the cell's content, not its position, so adding cells to a grid does not
    # change the random streams of the others.
    key = int(stable_hash(cell, length=8), 16)
    return np.random.default_rng(np.random.SeedSequence([seed, key]))


def _check_profile(profile: str) -> None:
    check_profile(profile)


#: True in the runner's spawned local worker processes (set by their initializer).
_IN_WORKER = False


def _start_worker(parent: int | None = None) -> None:
    """Prepare a spawned local worker: one thread per worker, gone with its parent."""
    global _IN_WORKER
    _IN_WORKER = True
    _die_with_parent(parent)
    one_thread_each()


def _die_with_parent(parent: int | None) -> None:
    """End this worker when the run that started it ends, even by SIGKILL.

    On Linux the kernel sends SIGTERM to the worker when its parent dies
    (``PR_SET_PDEATHSIG``); a parent that died before this call is caught by its pid.
    Elsewhere the executor's own checks stop idle workers.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - no libc prctl
        return
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def one_thread_each() -> None:
    """Make this process compute on one thread, as the runner's local workers do.

    Runs in each spawned worker before any task: with several workers, numeric
    libraries that start one thread per core each oversubscribe the machine (torch ran
    20x slower in a measured case). Call it before JAX starts its backend.
    """
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "")
        + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    ).strip()
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return
    torch.set_num_threads(1)


#: Set to ``0`` to keep JAX's persistent compilation cache off in experiment runs.
COMPILATION_CACHE_ENV = "DPNOTES_COMPILATION_CACHE"
#: Disk the persistent compilation cache may take before JAX evicts old programs.
COMPILATION_CACHE_BYTES = 4 << 30


def _compilation_cache_on(cache: Path) -> None:
    """Let a worker load JAX programs that another worker or an earlier run compiled.

    ``dpnotes.synth`` leaves JAX's persistent cache off, as mbi advises for
    interactive use: mbi compiles one program per clique structure, each used a
    handful of times. An experiment grid is the opposite case. Its cells run in
    separate processes (the workers of one run, then the runs of each seed and data
    set), and MST and AIM fits spend most of their time compiling programs that
    another process has already compiled: on the New York sample, backend compilation
    was 87 % of a stratified MST fit. A loaded program is the same machine code, so no
    result changes (a test compares samples drawn with and without it).

    The cache lives in the run cache (``<cache>/jax``, ignored by git). Only worker
    processes (local ``jobs > 1``, or Dask workers) turn it on, never the caller's
    process, whose JAX settings stay its own. JAX decides once per process, at its
    first compilation, whether to use it, so this runs before each cell; it does
    nothing where JAX is not loaded or ``$DPNOTES_COMPILATION_CACHE`` is ``0``.
    """
    jax = sys.modules.get("jax")
    if jax is None or os.environ.get(COMPILATION_CACHE_ENV) == "0":
        return
    jax.config.update("jax_compilation_cache_dir", str(cache / "jax"))
    jax.config.update("jax_compilation_cache_max_size", COMPILATION_CACHE_BYTES)
    jax.config.update("jax_enable_compilation_cache", True)


def run_cell(
    name: str,
    profile: str,
    seed: int,
    cell: Mapping[str, Any],
    *,
    cache: str | os.PathLike[str] | None = None,
    progress: bool = False,
    worker: bool | None = None,
) -> pd.DataFrame:
    """Compute one cell of an experiment, as a run does (the unit of resumable work).

    The rows are those :func:`run` stores for the cell: the cell's random stream is
    spawned from ``seed`` and the cell's content, and its keys are added as columns.

    Args:
        name: A registered experiment.
        profile: ``smoke``, ``quick`` or ``paper``.
        seed: The run's root seed; other than 0 only for an experiment whose cells
            draw from their stream (``seeding == "root"``).
        cell: One cell of the profile's grid.
        cache: Folder of the run cache handed to the cell, or None for no cache.
        progress: Let the cell draw progress bars of its own.
        worker: Whether this is a worker process (turns on JAX's compilation cache);
            default: true in the runner's local workers and on Dask workers.

    Raises:
        ValueError: For a root seed the experiment refuses
            (:meth:`~dpnotes.lab.registry.Experiment.check_seed`), before any work.
    """
    experiment = get_experiment(name)
    seed = _check_seed(seed, experiment)
    if worker is None:
        worker = _IN_WORKER or _on_dask_worker()
    if worker and cache is not None:
        _compilation_cache_on(Path(cache))
    rows = experiment.run_cell(
        experiment.config(profile),
        cell,
        rng=_cell_rng(seed, dict(cell)),
        cache=RunCache(cache) if cache is not None else None,
        progress=progress,
    )
    if not isinstance(rows, pd.DataFrame):
        raise TypeError(f"{name}: run_cell must return a DataFrame, got {type(rows)}.")
    for key, value in reversed(list(cell.items())):
        if key not in rows.columns:
            rows.insert(0, key, value if not isinstance(value, list) else str(value))
    return rows


def _on_dask_worker() -> bool:
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return False
    try:
        distributed.get_worker()
    except ValueError:
        return False
    return True


def _check_jobs(jobs: Any) -> int:
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}.")
    return int(jobs)


def _check_seed(seed: Any, experiment: Experiment | None = None) -> int:
    """Return ``seed`` as an int; with ``experiment``, one its numbers depend on.

    Raises:
        ValueError: If ``seed`` is not a non-negative integer, or is a root seed
            that ``experiment`` refuses (its ``check_seed``).
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}.")
    return int(seed) if experiment is None else experiment.check_seed(int(seed))


def run(
    name: str,
    profile: str = "quick",
    *,
    seed: int = 0,
    root: str | os.PathLike[str] | None = None,
    progress: bool = True,
    keep_cells: bool = False,
    jobs: int = 1,
    scheduler: str | None = None,
    checkpoint_s: float = 120.0,
    only: Mapping[str, Sequence[Any]] | None = None,
    wait: float = 0.0,
) -> StoredResult:
    """Run one experiment under one profile and store its table with provenance.

    Finished cells are stored under ``cells/`` as they complete; a rerun after an
    interruption skips them. At most every ``checkpoint_s`` seconds (after every cell
    when cells take longer than that on average) the finished cells are also written
    as a *partial* result (``meta["partial"]`` true, with the
    hashes of the finished cells), which notebooks may show with
    ``allow_partial=True`` and which a rerun of the same code on another checkout
    resumes from. When every cell is done the table and ``meta.json`` are written
    atomically and the cell files are removed (unless ``keep_cells``).

    A result finished over several runs (resumed from a partial one, perhaps on another
    machine) says which run computed which cells: ``meta["runs"]`` lists, oldest
    first, each run's machine (``device``), ``workers``, ``code_version``, start and
    end dates and the hashes of the cells it computed (``cells_done``). A result
    computed in one run has no ``runs``; its ``device`` is that run's.

    A finished result is never lost: a partial result never replaces a complete one,
    nor a partial one that holds more cells (the finished cells then stay in
    ``cells/`` to resume from); results of different root seeds live in different
    folders (:func:`~dpnotes.lab.store.result_folder`); and a run holds a file lock
    on its folder, so a second run of the same experiment, profile and seed refuses
    (or waits ``wait`` seconds) instead of writing over the first.

    Args:
        name: A registered experiment (``python -m dpnotes list``).
        profile: ``smoke``, ``quick`` or ``paper``.
        seed: Root seed. Every cell gets its own stream spawned from it and from the
            cell's content; it is what the cells of an experiment with
            ``seeding == "root"`` (:data:`~dpnotes.lab.registry.SEEDINGS`) draw
            from. The others refuse any seed but 0: the DPSGD-F experiments fix
            their seeds in their grids (a ``seed`` key; select seeds with
            ``only={"seed": [...]}``) and descriptive ones draw nothing, so under
            another root seed they would store seed 0's numbers under its name.
        root: Results store (default: :func:`results_root`).
        progress: Show a tqdm progress bar over the cells, and let cells show their
            own (e.g. over training steps); ``False`` hides them all.
        keep_cells: Keep the per-cell files after the final write.
        jobs: Local worker processes; cells are independent (each has its own random
            stream keyed by its content), so the table does not depend on ``jobs``.
        scheduler: Address of a Dask scheduler (``tcp://host:8786``) to run the cells
            on instead of local processes; default ``$DPNOTES_SCHEDULER``. The
            workers need this package and the data, and must see the store's run
            cache folder if experiments share computations through it.
        checkpoint_s: Seconds between partial results; ``0`` writes one after every
            cell.
        only: Compute only the cells whose value of each named key is among the
            given ones, e.g. ``{"dataset": ["NM"], "seed": [0]}`` (values are matched
            as written or as numbers); a run that leaves cells undone stores a partial
            result.
        wait: Seconds to wait for another run of the same result to finish.

    Returns:
        The stored result.

    Raises:
        ValueError: For an unknown experiment or profile, a bad seed (or one the
            experiment refuses, see ``seed``), ``jobs`` or ``only``, or a scheduler
            that cannot be reached (nothing is changed).
        dpnotes.data.DataNotFoundError: If a data file the profile reads is missing
            and cannot be downloaded (offline, ``DPNOTES_OFFLINE=1``), before any
            cell runs.
        dpnotes.lab.store.RunLocked: If another run holds the result's lock.
    """
    _check_profile(profile)
    seed = _check_seed(seed)
    jobs = _check_jobs(jobs)
    wait = check_wait(wait)
    experiment = get_experiment(name)
    experiment.check_seed(seed)
    scheduler = scheduler or os.environ.get(SCHEDULER_ENV) or None
    folder, meta, cells, hashes, files = _layout(experiment, profile, seed, root)
    # Where this run's cells ran, beside its wall time: the time means little alone.
    meta["workers"] = f"dask {scheduler}" if scheduler else f"{jobs} local process(es)"
    selected = _select_cells(cells, only) if only else None
    with contextlib.ExitStack() as stack:
        executor = stack.enter_context(_executor(jobs, scheduler))
        stack.enter_context(
            run_lock(folder, wait=wait, what=f"{name} [{profile}] seed {seed}")
        )
        return _run_locked(
            experiment,
            profile,
            seed,
            root,
            folder,
            meta,
            cells,
            hashes,
            files,
            executor=executor,
            selected=selected,
            progress=progress,
            keep_cells=keep_cells,
            checkpoint_s=checkpoint_s,
        )


def _run_locked(
    experiment: Experiment,
    profile: str,
    seed: int,
    root: str | os.PathLike[str] | None,
    folder: Path,
    meta: dict[str, Any],
    cells: list[dict[str, Any]],
    hashes: list[str],
    files: list[Path],
    *,
    executor: concurrent.futures.Executor | None,
    selected: set[int] | None,
    progress: bool,
    keep_cells: bool,
    checkpoint_s: float,
) -> StoredResult:
    """Run the cells still to do and store the result (the lock is held)."""
    name = experiment.name
    started = time.perf_counter()
    started_at = dt.datetime.now(dt.timezone.utc)
    _restore_partial(folder, name, profile, meta, hashes, files)
    _credit_found_cells(files[0].parent, meta, hashes, files)
    todo = [i for i, f in enumerate(files) if not f.is_file()]
    resumed = len(cells) - len(todo)
    if selected is not None:
        todo = [i for i in todo if i in selected]
    bar = tqdm(
        total=len(cells),
        initial=resumed,
        desc=f"{name} [{profile}]",
        unit="cell",
        disable=not progress,
    )
    last_checkpoint = [time.perf_counter()]
    stored_here = [0]
    if todo:
        _write_run_record(files[0].parent, meta, started_at)

    def partial() -> None:
        _write_partial(folder, meta, hashes, files, started, started_at)

    def store(i: int, rows: pd.DataFrame) -> None:
        atomic_write_bytes(files[i], table_to_bytes(rows))
        bar.update(1)
        stored_here[0] += 1
        now = time.perf_counter()
        # Cells that take longer than the interval on average (hours-long trainings,
        # several finishing within a minute of each other) each get a partial result:
        # its cost is then small beside theirs, and none waits for the next finish.
        slow = (now - started) / stored_here[0] >= checkpoint_s
        if slow or now - last_checkpoint[0] >= checkpoint_s:
            partial()
            last_checkpoint[0] = time.perf_counter()

    cache = results_root(root) / RUN_CACHE_DIR
    try:
        _compute(name, profile, seed, cells, todo, store, executor, cache, progress)
    except BaseException:
        # A failure or an interruption (Ctrl-C, or SIGTERM through the command line)
        # keeps what is finished: the partial result then holds every finished cell,
        # not only those of the last checkpoint.
        if any(f.is_file() for f in files):
            partial()
        raise
    finally:
        bar.close()
    if not all(f.is_file() for f in files):
        # A selection (``only``) left cells undone: the result is partial.
        partial()
        stored = read_result(folder, experiment=name, profile=profile)
        assert stored is not None
        return stored
    parts = [pd.read_csv(f) for f in files]
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    finished_at = dt.datetime.now(dt.timezone.utc)
    meta.update(_runs(meta, hashes, started_at, finished_at))
    meta.update(
        {
            "cells": len(cells),
            "cells_resumed": resumed,
            "partial": False,
            "wall_time_s": round(time.perf_counter() - started, 3),
            "started": started_at.isoformat(timespec="seconds"),
            "date": finished_at.isoformat(timespec="seconds"),
        }
    )
    result = write_result(folder, table, meta)
    if not keep_cells:
        shutil.rmtree(folder / "cells", ignore_errors=True)
    return result


def _compute(
    name: str,
    profile: str,
    seed: int,
    cells: Sequence[dict[str, Any]],
    todo: Sequence[int],
    store: Callable[[int, pd.DataFrame], None],
    executor: concurrent.futures.Executor | None,
    cache: Path,
    progress: bool,
) -> None:
    """Compute the cells ``todo`` and hand each finished one to ``store``."""
    if executor is None or len(todo) <= 1:
        for i in todo:
            store(
                i,
                run_cell(name, profile, seed, cells[i], cache=cache, progress=progress),
            )
        return
    futures = {
        executor.submit(
            run_cell, name, profile, seed, cells[i], cache=str(cache), progress=False
        ): i
        for i in todo
    }
    try:
        for future in concurrent.futures.as_completed(futures):
            store(futures[future], future.result())
    except BaseException:
        # Start no queued cell: its result could no longer be stored.
        for future in futures:
            future.cancel()
        raise


@contextlib.contextmanager
def _executor(
    jobs: int, scheduler: str | None
) -> Iterator[concurrent.futures.Executor | None]:
    """Yield where cells run: None (this process), local processes, or Dask."""
    if scheduler:
        with _dask_executor(scheduler) as executor:
            yield executor
        return
    if jobs == 1:
        yield None
        return
    import multiprocessing

    # Spawned (not forked) workers: JAX and torch are not fork-safe.
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker,
        initargs=(os.getpid(),),
    )
    try:
        yield pool
    except BaseException:
        # Stop the running cells: orphaned workers would hold the cores.
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        raise
    pool.shutdown(wait=True)


#: Seconds to wait for a Dask scheduler to answer before giving up.
SCHEDULER_TIMEOUT_S = 10
# Beyond that timeout, seconds the client's start may take before it is abandoned.
_CONNECT_GRACE_S = 5


@contextlib.contextmanager
def _dask_executor(address: str) -> Iterator[concurrent.futures.Executor]:
    """Yield a ``concurrent.futures`` executor backed by the Dask scheduler ``address``.

    Dask reruns the cells of a worker that is lost; when the client itself fails,
    the finished cells are stored and a rerun resumes from them.

    Raises:
        ValueError: If ``distributed`` is not installed or the scheduler does not
            answer within :data:`SCHEDULER_TIMEOUT_S` seconds.
    """
    try:
        from distributed import Client
    except ImportError:
        raise ValueError(
            "running on a Dask scheduler needs the optional extra 'cluster': "
            "pip install 'dpnotes[cluster]'."
        ) from None
    # The whole start under a deadline: a server that is not a Dask scheduler (an
    # HTTP server on that port) accepts the connection and never answers the
    # handshake, and Client's own timeout does not cover that wait.
    box: dict[str, Any] = {}

    def connect() -> None:
        try:
            box["client"] = Client(address, timeout=f"{SCHEDULER_TIMEOUT_S}s")
        except BaseException as err:  # handed to the caller below
            box["error"] = err

    thread = threading.Thread(target=connect, name="dpnotes-dask-connect", daemon=True)
    thread.start()
    thread.join(SCHEDULER_TIMEOUT_S + _CONNECT_GRACE_S)
    err = box.get("error")
    if thread.is_alive() or isinstance(err, (OSError, TimeoutError, ValueError)):
        why = (
            "the connection opened but nothing answered as a scheduler would"
            if thread.is_alive()
            else f"{err.__class__.__name__}: {err}"
        )
        raise ValueError(
            f"no Dask scheduler answered at {address!r} within {SCHEDULER_TIMEOUT_S} s "
            f"({why}); start one with `dask scheduler` and "
            "workers with `dask worker ADDRESS`, or run without --scheduler to use "
            "local processes. Nothing was changed."
        ) from None
    if err is not None:
        raise err
    client = box["client"]
    try:
        yield client.get_executor(pure=False)
    finally:
        client.close()


def _layout(
    experiment: Experiment, profile: str, seed: int, root: str | os.PathLike[str] | None
) -> tuple[Path, dict[str, Any], list[dict[str, Any]], list[str], list[Path]]:
    """Return a run's folder, provenance, cells, cell hashes and per-cell files."""
    folder = result_folder(root, experiment.name, profile, seed)
    meta = provenance(experiment, profile, seed)
    cells_dir = folder / "cells" / f"{meta['config_hash']}-seed{seed}"
    cells = experiment.cells(profile)
    hashes = [stable_hash(cell) for cell in cells]
    return folder, meta, cells, hashes, [cells_dir / f"{h}.csv" for h in hashes]


def _matches(value: Any, wanted: Any) -> bool:
    if str(value) == str(wanted):
        return True
    try:
        return float(value) == float(wanted)
    except (TypeError, ValueError):
        return False


def _select_cells(
    cells: Sequence[Mapping[str, Any]], only: Mapping[str, Sequence[Any]]
) -> set[int]:
    """Return the indices of the cells that ``only`` selects (see :func:`run`)."""
    keys = set(cells[0]) if cells else set()
    unknown = [k for k in only if k not in keys]
    if unknown:
        raise ValueError(
            f"only names {unknown}, which are not keys of this experiment's cells "
            f"{sorted(keys)}."
        )
    only = {
        k: [v] if isinstance(v, (str, int, float)) else list(v) for k, v in only.items()
    }
    selected = {
        i
        for i, cell in enumerate(cells)
        if all(any(_matches(cell[k], w) for w in wanted) for k, wanted in only.items())
    }
    if not selected:
        # Name the values each selected key takes, so a misspelt value is easy to fix.
        takes = "; ".join(
            f"{k} takes " + ", ".join(dict.fromkeys(str(cell[k]) for cell in cells))
            for k in only
        )
        raise ValueError(
            f"no cell matches only={only}: {takes}. Pick values from these (several "
            "keys must match together)."
        )
    return selected


def checkpoint(
    name: str,
    profile: str,
    *,
    seed: int = 0,
    root: str | os.PathLike[str] | None = None,
) -> StoredResult | None:
    """Store the finished cells of a run in progress as a partial result, now.

    A long run writes partial results on its own (see :func:`run`); this writes one
    from the cell files on disk at any moment, for instance to commit what a run in
    another process has finished so far. Nothing is computed. The cells are credited
    to the run computing them (its machine, workers, code and start, from the record
    it keeps beside its cell files), or, without such a record, to this call.

    Returns:
        The partial result; the complete result if the run has finished (it is not
        replaced); ``None`` when no cell of the current code and ``seed`` is done.
    """
    _check_profile(profile)
    seed = _check_seed(seed, get_experiment(name))
    complete = load_stored(name, profile, root=root, seed=seed)
    if complete is not None:
        return complete
    folder, meta, _, hashes, files = _layout(get_experiment(name), profile, seed, root)
    # The stored partial's cells belong to the new one too.
    _restore_partial(folder, name, profile, meta, hashes, files)
    if not any(f.is_file() for f in files):
        return None
    # The cells found were computed by the run that wrote the record (on its machine,
    # with its workers and code, from its start), not by this command.
    record = _read_run_record(files[0].parent)
    started_at = dt.datetime.now(dt.timezone.utc)
    if record is not None:
        meta.update({k: record[k] for k in RUN_RECORD_KEYS if k != "started"})
        started_at = dt.datetime.fromisoformat(record["started"])
    elapsed = (dt.datetime.now(dt.timezone.utc) - started_at).total_seconds()
    _write_partial(
        folder, meta, hashes, files, time.perf_counter() - elapsed, started_at
    )
    return load_stored(name, profile, root=root, seed=seed, allow_partial=True)


RUN_RECORD = "run.json"
RUN_RECORD_KEYS = ("device", "workers", "code_version", "started")


def _write_run_record(
    cells_dir: Path, meta: Mapping[str, Any], started_at: dt.datetime
) -> None:
    """Record, beside its cell files, where and when a run that computes cells began.

    :func:`checkpoint`, called from another process while the run goes on, credits the
    cells it finds to this run rather than to itself.
    """
    record = {
        "device": meta.get("device"),
        "workers": meta.get("workers"),
        "code_version": meta.get("code_version"),
        "started": started_at.isoformat(timespec="seconds"),
    }
    atomic_write_bytes(
        cells_dir / RUN_RECORD, (json.dumps(record, indent=1) + "\n").encode()
    )


def _read_run_record(cells_dir: Path) -> dict[str, Any] | None:
    """The record of the run computing into ``cells_dir``; ``None`` if none or bad."""
    try:
        record = json.loads((cells_dir / RUN_RECORD).read_text())
        dt.datetime.fromisoformat(record["started"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(record, dict) or not set(RUN_RECORD_KEYS) <= set(record):
        return None
    return record


def _credit_found_cells(
    cells_dir: Path,
    meta: dict[str, Any],
    hashes: Sequence[str],
    files: Sequence[Path],
) -> None:
    """Credit cells in ``cells/`` that no stored run lists to the run that wrote them.

    A run stopped before it stored its last cells leaves them, and its record
    (``run.json``), in ``cells/``. The run that resumes finds them done; they are the
    stopped run's (its machine, workers, code and start; it ended when the newest of
    them was written), not the resuming run's, which computed them in no time. Without
    a record they stay the resuming run's, as before records were written.
    """
    record = _read_run_record(cells_dir)
    if record is None:
        return
    runs = [dict(r) for r in meta.get("runs") or []]
    listed = {h for r in runs for h in r.get("cells_done", [])}
    pairs = zip(hashes, files, strict=True)
    found = [(h, f) for h, f in pairs if f.is_file() and h not in listed]
    if not found:
        return
    newest = max(f.stat().st_mtime for _, f in found)
    date = dt.datetime.fromtimestamp(newest, dt.timezone.utc).isoformat(
        timespec="seconds"
    )
    entry = _run_entry(record, record["started"], date, [h for h, _ in found])
    # One run is one machine, worker set, code and start (the record's keys).
    if runs and all(runs[-1].get(k) == entry[k] for k in RUN_RECORD_KEYS):
        # The stopped run had stored a checkpoint: one run, one entry.
        entry["cells_done"] = [*runs[-1].get("cells_done", []), *entry["cells_done"]]
        runs = runs[:-1]
    meta["runs"] = [*runs, entry]


def _write_partial(
    folder: Path,
    meta: dict[str, Any],
    hashes: Sequence[str],
    files: Sequence[Path],
    started: float,
    started_at: dt.datetime,
) -> None:
    """Store the finished cells as a partial result (table plus their hashes).

    Nothing is written over a complete result, nor over a partial one with more
    finished cells (of other code, or another checkout): the finished cells stay in
    the run's ``cells/`` folder, and a rerun resumes from them. Nor over a partial one
    that already holds every finished cell: a run stopped before it finished a cell
    of its own leaves the stored record (its runs, start and wall time) as it was.
    """
    done = [(h, f) for h, f in zip(hashes, files, strict=True) if f.is_file()]
    stored = read_result(folder, experiment=meta["experiment"], profile=meta["profile"])
    if stored is not None and (
        not stored.partial
        or len(stored.meta.get("cells_done", [])) > len(done)
        or {h for h, _ in done} <= set(stored.meta.get("cells_done", []))
    ):
        return
    parts = [pd.read_csv(f) for _, f in done]
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    now = dt.datetime.now(dt.timezone.utc)
    write_result(
        folder,
        table,
        {
            **meta,
            **_runs(meta, [h for h, _ in done], started_at, now),
            "cells": len(hashes),
            "partial": True,
            "cells_done": [h for h, _ in done],
            "cell_rows": [len(p) for p in parts],
            "wall_time_s": round(time.perf_counter() - started, 3),
            "started": started_at.isoformat(timespec="seconds"),
            "date": now.isoformat(timespec="seconds"),
        },
    )


def _run_entry(
    meta: Mapping[str, Any], started: Any, date: Any, cells: Sequence[str]
) -> dict[str, Any]:
    """One entry of ``meta["runs"]``: where and when a run computed ``cells``."""
    return {
        "device": meta.get("device"),
        "workers": meta.get("workers"),
        "code_version": meta.get("code_version"),
        "started": started,
        "date": date,
        "cells_done": list(cells),
    }


def _earlier_runs(stored: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The runs that computed a stored partial result's cells, oldest first."""
    if stored.get("runs"):
        return [dict(r) for r in stored["runs"]]
    entry = _run_entry(
        stored, stored.get("started"), stored.get("date"), stored.get("cells_done", [])
    )
    # A partial result stored without its runs' history (an older runner) knows only
    # its last run's start: its cells may have taken longer (catalog.compute_text).
    entry["last_run_only"] = True
    return [entry]


def _runs(
    meta: Mapping[str, Any],
    done: Sequence[str],
    started_at: dt.datetime,
    now: dt.datetime,
) -> dict[str, Any]:
    """``{"runs": ...}`` for a result resumed from earlier runs, else ``{}``.

    The earlier runs (restored with their partial result) keep their cells; this run
    gets the finished cells none of them lists.
    """
    earlier = meta.get("runs")
    if not earlier:
        return {}
    listed = {h for r in earlier for h in r.get("cells_done", [])}
    mine = [h for h in done if h not in listed]
    if not mine:
        return {"runs": list(earlier)}
    stamp = {"timespec": "seconds"}
    entry = _run_entry(
        meta, started_at.isoformat(**stamp), now.isoformat(**stamp), mine
    )
    last = earlier[-1]
    if all(last.get(k) == entry[k] for k in RUN_RECORD_KEYS):
        # A checkpoint of this very run (written by itself or by ``checkpoint``):
        # one run, one entry, with every cell it has finished.
        entry["cells_done"] = [*last.get("cells_done", []), *mine]
        return {"runs": [*earlier[:-1], entry]}
    return {"runs": [*earlier, entry]}


def _restore_partial(
    folder: Path,
    name: str,
    profile: str,
    meta: dict[str, Any],
    hashes: Sequence[str],
    files: Sequence[Path],
) -> None:
    """Write back the cells of a stored partial result of the same code and seed.

    Only a trusted partial result (checksum verified) whose config hash and root seed
    match is used; its rows are split by the stored per-cell row counts. Its
    ``restamped`` history, if any, is copied into ``meta``: those cells were computed
    before a re-stamp of the config hash, and the new result says so. So are the runs
    that computed its cells (``meta["runs"]``, see :func:`run`); cells found in
    ``cells/`` that no earlier run lists belong to the run recorded beside them
    (:func:`_credit_found_cells`).
    """
    stored = read_result(folder, experiment=name, profile=profile)
    if stored is None or not stored.partial:
        return
    if stored.config_hash != meta["config_hash"] or stored.meta.get("seed") != meta.get(
        "seed"
    ):
        return
    done = stored.meta.get("cells_done", [])
    counts = stored.meta.get("cell_rows", [])
    if len(done) != len(counts) or sum(counts) != len(stored.table):
        return
    if stored.meta.get("restamped"):
        meta["restamped"] = list(stored.meta["restamped"])
    meta["runs"] = _earlier_runs(stored.meta)
    where = dict(zip(hashes, files, strict=True))
    start = 0
    for h, k in zip(done, counts, strict=True):
        rows = stored.table.iloc[start : start + k]
        start += k
        if h in where and not where[h].is_file():
            atomic_write_bytes(where[h], table_to_bytes(rows.reset_index(drop=True)))


def _read_stored(
    experiment: Experiment,
    profile: str,
    root: str | os.PathLike[str] | None,
    seed: int,
) -> StoredResult | None:
    """Return the trusted stored result of one experiment, profile and seed, if any."""
    folder = result_folder(root, experiment.name, profile, _check_seed(seed))
    return read_result(folder, experiment=experiment.name, profile=profile)


def load_stored(
    name: str,
    profile: str,
    *,
    root: str | os.PathLike[str] | None = None,
    seed: int = 0,
    allow_partial: bool = False,
) -> StoredResult | None:
    """Return the stored result of ``name``/``profile`` if it is trusted and current.

    A partial result (an unfinished run's checkpoint) counts only with
    ``allow_partial``. ``seed`` selects the root seed's result (default 0).

    Raises:
        ValueError: For an unknown experiment or profile, or a root seed the
            experiment refuses (:func:`run`'s ``seed``).
    """
    _check_profile(profile)
    experiment = get_experiment(name)
    _check_seed(seed, experiment)
    stored = _read_stored(experiment, profile, root, seed)
    if stored is None or stored.config_hash != config_hash(experiment, profile):
        return None
    if stored.partial and not allow_partial:
        return None
    return stored


def stale_reason(
    name: str,
    profile: str,
    *,
    root: str | os.PathLike[str] | None = None,
    seed: int = 0,
) -> str | None:
    """Say why a trusted stored result of ``name``/``profile`` is no longer current.

    Returns None when nothing is stored (or the store is damaged) and when the stored
    result is current. Otherwise a short reason: the modules whose code changed
    (from the per-module digests that runs record in ``meta.json``), or that the
    settings or the experiment's version changed.

    Raises:
        ValueError: For a root seed the experiment refuses (:func:`run`'s ``seed``).
    """
    _check_profile(profile)
    experiment = get_experiment(name)
    _check_seed(seed, experiment)
    stored = _read_stored(experiment, profile, root, seed)
    if stored is None or stored.config_hash == config_hash(experiment, profile):
        return None
    before = stored.meta.get("code_digests")
    if isinstance(before, dict):
        now = experiment.code_digests()
        changed = sorted(m for m in {*before, *now} if before.get(m) != now.get(m))
        if changed:
            shown = ", ".join(changed[:3])
            more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
            return f"code changed in {shown}{more}"
    if stored.config != to_jsonable(experiment.config(profile)):
        return "settings changed"
    return "code, settings or version changed"


def profile_with(
    name: str, profile: str, settings: Mapping[str, object] | None = None
) -> str:
    """Return ``profile`` with ``settings`` changed: the derived profile to load.

    ``profile_with("strat_mean_census", "paper", {"state": "NY"})`` is
    ``"paper@state=NY"`` (:func:`~dpnotes.lab.registry.split_profile`), the profile a
    run with ``--set state=NY`` stores. A chapter that loads another state's results
    says so in its own code, by passing ``settings`` to :func:`load_or_run`; nothing
    in the environment changes which result a chapter loads. Settings already in
    ``profile`` win.

    Raises:
        ValueError: If the experiment has no such setting (a chapter asking for a
            state of an experiment that has none), or a value is empty.
    """
    if not settings:
        return profile
    if not isinstance(settings, Mapping):
        raise TypeError(
            f"settings must be a mapping such as {{'state': 'NY'}}, got "
            f"{type(settings).__name__}."
        )
    base, derived = split_profile(profile)
    own = set(get_experiment(name).settings(base))
    unknown = sorted(set(settings) - own)
    if unknown:
        raise ValueError(
            f"{name} has no setting {', '.join(map(str, unknown))}; its settings are "
            f"{sorted(own)}."
        )
    for key, value in settings.items():
        derived.setdefault(str(key), str(value))
    return derived_profile(base, derived)


def load_or_run(
    name: str,
    *,
    prefer: Sequence[str] = ("paper", "quick"),
    fallback: str | None = None,
    seed: int = 0,
    root: str | os.PathLike[str] | None = None,
    progress: bool = False,
    allow_partial: bool = False,
    settings: Mapping[str, object] | None = None,
) -> StoredResult:
    """Return the best current stored result of an experiment, else compute one.

    Notebooks call this. It looks for a stored result, in the order of ``prefer``, whose
    config hash matches the current code and settings; a stale or half-written one is
    ignored, and so is an unfinished run's partial result unless ``allow_partial``
    (then ``result.partial`` is true and ``result.caption()`` says how many cells it
    holds). If none matches it runs the ``fallback`` profile (default ``quick``, or
    the environment variable ``DPNOTES_FALLBACK_PROFILE``) and stores it. With
    ``settings`` (``{"state": "NY"}``) every profile is the derived one of
    :func:`profile_with`.

    Raises:
        ValueError: For a root seed the experiment refuses (:func:`run`'s ``seed``),
            before anything is loaded or computed.
        dpnotes.data.DataNotFoundError: If it must compute and a data file is
            missing and cannot be downloaded, before any cell runs.
    """
    _check_seed(seed, get_experiment(name))
    prefer = [profile_with(name, p, settings) for p in prefer]
    for profile in prefer:
        stored = load_stored(
            name, profile, root=root, seed=seed, allow_partial=allow_partial
        )
        if stored is not None:
            return stored
    fallback = profile_with(
        name, fallback or os.environ.get(FALLBACK_ENV) or "quick", settings
    )
    _check_profile(fallback)
    # Another process (a second notebook) may be computing the same result: wait for
    # it, then use what it stored.
    with run_lock(
        result_folder(root, name, fallback, _check_seed(seed)), wait=LOAD_WAIT_S
    ):
        stored = load_stored(name, fallback, root=root, seed=seed)
    if stored is not None:
        return stored
    return run(
        name, fallback, seed=seed, root=root, progress=progress, wait=LOAD_WAIT_S
    )
