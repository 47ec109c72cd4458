"""Command line: ``python -m dpnotes list``, ``run``, ``restamp``, ``adopt``,
``attribute`` and ``checkpoint``."""

from __future__ import annotations

import argparse
import concurrent.futures
import signal
import sys
from collections.abc import Sequence

from dpnotes.data import DataNotFoundError
from dpnotes.lab.adopt import adopt
from dpnotes.lab.attribute import attribute
from dpnotes.lab.registry import (
    PROFILES,
    Experiment,
    config_hash,
    derived_profile,
    get_experiment,
    list_experiments,
)
from dpnotes.lab.restamp import restamp
from dpnotes.lab.runner import checkpoint, run, stale_reason
from dpnotes.lab.store import (
    RunLocked,
    inspect_result,
    read_result,
    result_folder,
    results_root,
    stored_seeds,
)

__all__ = ["PROFILE_HELP", "build_parser", "main"]


def _status(exp: Experiment, profile: str, seed: int, root: str | None) -> list[str]:
    """Return ``[profile, seed, cells, status]`` of one stored result folder."""
    folder = result_folder(root, exp.name, profile, seed)
    if seed != 0 and exp.seeding != "root":
        # Seed 0's numbers under another seed's name (stored before runs refused it).
        how = "its grid fixes its seeds" if exp.seeding == "grid" else "not random"
        why = f"not a seed of this experiment ({how}): delete {folder}"
        return [profile, str(seed), "-", why]
    result, why = inspect_result(folder, experiment=exp.name, profile=profile)
    if result is None:
        return [profile, str(seed), "-", f"damaged: {why}" if why else "empty folder"]
    total = result.meta.get("cells")
    done = len(result.meta.get("cells_done", [])) if result.partial else total
    state = ["partial"] if result.partial else []
    if result.config_hash != config_hash(exp, profile):
        state.append(f"stale: {stale_reason(exp.name, profile, root=root, seed=seed)}")
    if str(result.meta.get("code_version", "")).endswith(".dirty"):
        state.append("computed by uncommitted code: restamp it from a commit")
    return [profile, str(seed), f"{done}/{total}", "; ".join(state) or "current"]


def _stored_profiles(root: str | None, name: str) -> list[str]:
    """The base profiles, then the derived ones (``paper@state=NY``) found on disk."""
    folder = results_root(root) / name
    derived = sorted(
        d.name
        for d in (folder.iterdir() if folder.is_dir() else [])
        if d.is_dir() and d.name.partition("@")[0] in PROFILES and "@" in d.name
    )
    return [*PROFILES, *derived]


def _cmd_list(args: argparse.Namespace) -> int:
    print(f"results folder: {results_root(args.results)}")
    rows = []
    experiments = list_experiments()
    for exp in experiments:
        found = [
            _status(exp, p, seed, args.results)
            for p in _stored_profiles(args.results, exp.name)
            for seed in stored_seeds(args.results, exp.name, p)
        ]
        rows.extend(
            [exp.name, *r] for r in found or [["-", "-", "-", "nothing stored"]]
        )
    if not rows:
        print("no experiments registered")
        return 0
    header = ["experiment", "profile", "seed", "cells", "status"]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths) + "  {}"
    for row in [header, *rows]:
        print(fmt.format(*row))
    print()
    width = max(len(e.name) for e in experiments)
    for exp in experiments:
        figure = f" ({exp.figure})" if exp.figure else ""
        print(f"{exp.name:<{width}}  {exp.title}{figure}")
    return 0


#: What each profile costs, for ``--profile``'s help.
PROFILE_HELP = (
    "smoke: seconds (what the tests run); quick (default): minutes on a 2-core "
    "CPU, what a book build computes when nothing is stored; paper: the papers' "
    "settings, from minutes (the census tables) to many CPU hours (the DPSGD-F and "
    "synthesis grids: run those with --jobs or --scheduler, or on a GPU)"
)


def _interrupt_on_sigterm(signum, frame) -> None:
    # ``kill PID`` then stops a run like Ctrl-C does: the finished cells are stored
    # as a partial result before the process exits.
    raise KeyboardInterrupt(f"signal {signum}")


def _parse_only(items: Sequence[str]) -> dict[str, list[str]] | None:
    only: dict[str, list[str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--only takes KEY=VALUE, got {item!r}.")
        only.setdefault(key, []).append(value)
    return only or None


def _profile(args: argparse.Namespace) -> str:
    """Return the profile a command names: ``--profile`` and its ``--set`` settings."""
    settings: dict[str, str] = {}
    for item in getattr(args, "set", None) or []:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise ValueError(f"--set takes KEY=VALUE (e.g. state=NY), got {item!r}.")
        if key in settings:
            raise ValueError(f"--set {key} is given twice; give each setting once.")
        settings[key] = value
    profile = derived_profile(args.profile, settings)
    get_experiment(args.name).config(profile)  # an unknown setting or value fails here
    return profile


def _cmd_run(args: argparse.Namespace) -> int:
    profile = _profile(args)
    previous = signal.signal(signal.SIGTERM, _interrupt_on_sigterm)
    try:
        result = run(
            args.name,
            profile,
            seed=args.seed,
            root=args.results,
            progress=not args.no_progress,
            keep_cells=args.keep_cells,
            jobs=args.jobs,
            scheduler=args.scheduler,
            only=_parse_only(args.only),
            wait=args.wait,
        )
    finally:
        signal.signal(signal.SIGTERM, previous)
    meta = result.meta
    if result.partial:
        print(f"stored {result.caption()}")
        return 0
    print(
        f"stored {meta['rows']} rows in {result.path} "
        f"({meta['wall_time_s']:.1f} s, config {meta['config_hash']}, "
        f"{meta['cells_resumed']}/{meta['cells']} cells resumed)"
    )
    return 0


def _cmd_checkpoint(args: argparse.Namespace) -> int:
    profile = _profile(args)
    result = checkpoint(args.name, profile, seed=args.seed, root=args.results)
    if result is None:
        print(
            f"no finished cell of {args.name} [{profile}] for the current code "
            f"and seed {args.seed}; nothing stored"
        )
    elif result.partial:
        print(f"stored {result.caption()}")
    else:
        print(f"{args.name} [{profile}] is complete; its result is unchanged")
    return 0


def _seed(args: argparse.Namespace) -> int:
    """Return ``--seed`` if the experiment takes that root seed (else ValueError)."""
    return get_experiment(args.name).check_seed(args.seed)


def _cmd_restamp(args: argparse.Namespace) -> int:
    report = restamp(
        args.name,
        _profile(args),
        cells=args.cells,
        seed=_seed(args),
        sample_seed=args.sample_seed,
        cheapest=args.cheapest,
        root=args.results,
        write=not args.check,
        progress=not args.no_progress,
        rtol=args.rtol,
        reference=args.reference,
        machine=args.machine,
    )
    print(report.summary())
    return 0 if report.equal else 1


def _cmd_adopt(args: argparse.Namespace) -> int:
    report = adopt(
        args.name,
        _profile(args),
        source=args.source,
        cells=args.cells,
        cheapest=args.cheapest,
        sample_seed=args.sample_seed,
        seed=_seed(args),
        root=args.results,
        progress=not args.no_progress,
    )
    print(report.summary())
    return 0 if report.equal else 1


def _cmd_attribute(args: argparse.Namespace) -> int:
    profile = _profile(args)
    entry = attribute(
        args.name,
        profile,
        commit=args.commit,
        seed=_seed(args),
        root=args.results,
        accelerator=args.accelerator,
        write=not args.check,
    )
    done = "checked only (nothing written)" if args.check else "written"
    print(
        f"{args.name} [{profile}]: {entry['modules_checked']} module digests "
        f"equal at {entry['code_version']} (was {entry['old_code_version']}); {done}"
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``python -m dpnotes``."""
    parser = argparse.ArgumentParser(
        prog="python -m dpnotes",
        description="Run the experiments behind the book's figures and tables.",
    )
    parser.add_argument(
        "--results",
        default=None,
        help="results folder (default: $DPNOTES_RESULTS_DIR; else book/_results of "
        "the book's repository that holds the current directory; else "
        "./dpnotes_results); `list` prints the one it reads",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_list = sub.add_parser(
        "list", help="list the experiments and their stored profiles"
    )
    p_list.set_defaults(func=_cmd_list)
    _add_run(sub)
    _add_restamp(sub)
    _add_adopt(sub)
    _add_attribute(sub)
    _add_checkpoint(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the command line."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (ValueError, RunLocked, DataNotFoundError) as err:
        # A missing data file offline: the loaders' message says which and where.
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:
        if args.func is not _cmd_run:
            raise
        # Ctrl-C, or ``kill`` (see _interrupt_on_sigterm): the runner has stored the
        # finished cells; say so instead of printing a traceback.
        how = str(err) or "Ctrl-C"
        print(f"interrupted ({how}): {_what_was_kept(args)}", file=sys.stderr)
        return 130
    except concurrent.futures.BrokenExecutor:
        if args.func is not _cmd_run:
            raise
        # A worker process died without raising (the kernel's out-of-memory killer,
        # or a signal sent to the worker rather than to this process): the pool stops
        # every cell in flight, and the runner has stored the finished ones.
        print(
            "a worker process ended abruptly (killed by a signal, or out of memory: "
            f"try fewer --jobs): {_what_was_kept(args)}",
            file=sys.stderr,
        )
        return 1


def _what_was_kept(args: argparse.Namespace) -> str:
    """Say what an interrupted ``run`` left stored: a partial result, or nothing new."""
    try:
        profile = _profile(args)
        stored = read_result(
            result_folder(args.results, args.name, profile, args.seed),
            experiment=args.name,
            profile=profile,
        )
    except (ValueError, OSError):
        stored = None
    again = "run the same command again to compute the rest."
    if stored is not None and stored.partial:
        done = len(stored.meta.get("cells_done", []))
        total = stored.meta.get("cells", "?")
        return f"{done} of {total} cells are stored as a partial result; {again}"
    if stored is not None:
        return "no cell of this run finished; the result stored before it is unchanged."
    return "no cell finished, so nothing was stored; run the same command again."


if __name__ == "__main__":
    sys.exit(main())


def _add_set(parser: argparse.ArgumentParser) -> None:
    """Add ``--set KEY=VALUE``: a setting of the profile, for a derived profile."""
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change one setting of the profile (e.g. --set state=NY; repeat for "
        "several); the result is stored as the derived profile PROFILE@KEY=VALUE",
    )


def _add_run(sub) -> None:
    """Add the ``run`` command."""
    p_run = sub.add_parser("run", help="run one experiment and store its results")
    p_run.add_argument("name", help="experiment name (see `list`)")
    p_run.add_argument(
        "--profile", choices=PROFILES, default="quick", help=PROFILE_HELP
    )
    _add_set(p_run)
    p_run.add_argument(
        "--seed",
        type=int,
        default=0,
        help="root seed (default 0); refused by experiments whose cells fix their "
        "own seeds (select those with --only seed=S) or draw no random numbers",
    )
    p_run.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="worker processes running cells in parallel (default 1)",
    )
    p_run.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run the cells on a Dask cluster (e.g. tcp://host:8786; default "
        "$DPNOTES_SCHEDULER); without it, --jobs local processes",
    )
    p_run.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long for another run of the same result to finish (default: "
        "refuse at once)",
    )
    p_run.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="compute only cells with this value of a grid key (repeat a key for "
        "several values, e.g. --only dataset=NM --only seed=0); the rest stays to do",
    )
    p_run.add_argument(
        "--no-progress",
        action="store_true",
        help="hide every progress bar: the run's and its cells' (training steps)",
    )
    p_run.add_argument(
        "--keep-cells", action="store_true", help="keep per-cell files after the run"
    )
    p_run.set_defaults(func=_cmd_run)


def _add_restamp(sub) -> None:
    """Add the ``restamp`` command."""
    p_rs = sub.add_parser(
        "restamp",
        help="recompute the smoke profile and a sample of stored cells under the "
        "current code; if all agree, re-stamp the stored result with the new hash",
    )
    p_rs.add_argument("name", help="experiment name (see `list`)")
    p_rs.add_argument("--profile", choices=PROFILES, default="paper")
    _add_set(p_rs)
    p_rs.add_argument(
        "--cells",
        type=int,
        default=3,
        metavar="K",
        help="stored cells to recompute (default 3)",
    )
    p_rs.add_argument("--seed", type=int, default=0, help="root seed of the result")
    p_rs.add_argument(
        "--sample-seed", type=int, default=0, help="seed of the random choice of cells"
    )
    p_rs.add_argument(
        "--cheapest",
        action="store_true",
        help="check the cells with the smallest stored wall times instead of random",
    )
    p_rs.add_argument(
        "--check", action="store_true", help="compare only; never rewrite meta.json"
    )
    p_rs.add_argument(
        "--rtol",
        type=float,
        default=0.0,
        help="relative tolerance for numbers (default 0: exactly as stored); for a "
        "result computed on another CPU, whose floating-point sums differ in their "
        "last digits",
    )
    p_rs.add_argument(
        "--reference",
        default=None,
        metavar="COMMIT",
        help="compare with the stored result's own code run here (a commit, or "
        "'auto' for the one its code version names) instead of its stored rows: for "
        "a result computed on another CPU",
    )
    p_rs.add_argument(
        "--machine",
        default=None,
        metavar="NAME",
        help="choose only among the cells this machine computed, named as captions "
        "name it (e.g. 'Intel Xeon'; `list` and the captions show a result's "
        "machines): to check a result computed on several machines against the "
        "stored rows of the cells a machine like this one computed",
    )
    p_rs.add_argument("--no-progress", action="store_true", help="hide cells' bars")
    p_rs.set_defaults(func=_cmd_restamp)


def _add_adopt(sub) -> None:
    """Add the ``adopt`` command."""
    p_ad = sub.add_parser(
        "adopt",
        help="store a profile that only narrows another's grid (e.g. fewer seeds) "
        "from that profile's stored rows, after recomputing a sample of its cells "
        "under the current code and finding them equal",
    )
    p_ad.add_argument("name", help="experiment name (see `list`)")
    p_ad.add_argument(
        "--profile",
        choices=PROFILES,
        default="paper",
        help="the base of the profile to store; --set narrows it",
    )
    _add_set(p_ad)
    p_ad.add_argument(
        "--from",
        dest="source",
        required=True,
        action="append",
        metavar="SOURCE",
        help="the stored profile to adopt from, as `list` names it (e.g. "
        "'paper@parity=authors'); it may be partial if it holds every cell. Repeat "
        "it to join several: each cell is taken from the first that stores it",
    )
    p_ad.add_argument(
        "--cells",
        type=int,
        default=2,
        metavar="K",
        help="adopted cells to recompute and compare exactly, from each source "
        "(default 2)",
    )
    p_ad.add_argument(
        "--cheapest",
        action="store_true",
        help="check the cells with the smallest stored wall times instead of random",
    )
    p_ad.add_argument(
        "--sample-seed", type=int, default=0, help="seed of the random choice of cells"
    )
    p_ad.add_argument("--seed", type=int, default=0, help="root seed of the results")
    p_ad.add_argument("--no-progress", action="store_true", help="hide cells' bars")
    p_ad.set_defaults(func=_cmd_adopt)


def _add_attribute(sub) -> None:
    """Add the ``attribute`` command."""
    p_at = sub.add_parser(
        "attribute",
        help="set a stored result's code version to the commit whose module digests "
        "it recorded (a run on a machine without the repository's history)",
    )
    p_at.add_argument("name", help="experiment name (see `list`)")
    p_at.add_argument("--profile", choices=PROFILES, default="paper")
    _add_set(p_at)
    p_at.add_argument("--seed", type=int, default=0, help="root seed of the result")
    p_at.add_argument("--commit", required=True, help="the commit whose code ran")
    p_at.add_argument(
        "--accelerator",
        default=None,
        help="the accelerator the cells ran on, if the recorded one is wrong",
    )
    p_at.add_argument(
        "--check", action="store_true", help="compare only; never rewrite meta.json"
    )
    p_at.set_defaults(func=_cmd_attribute)


def _add_checkpoint(sub) -> None:
    """Add the ``checkpoint`` command."""
    p_ck = sub.add_parser(
        "checkpoint",
        help="store the finished cells of an unfinished run as a partial result",
    )
    p_ck.add_argument("name", help="experiment name (see `list`)")
    p_ck.add_argument("--profile", choices=PROFILES, default="paper")
    _add_set(p_ck)
    p_ck.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p_ck.set_defaults(func=_cmd_checkpoint)
