"""Command line: ``python -m dpnotes list``, ``run NAME`` and ``checkpoint NAME``."""

from __future__ import annotations

import argparse
import concurrent.futures
import signal
import sys
from collections.abc import Sequence

from dpnotes.experiments.registry import PROFILES, list_experiments
from dpnotes.experiments.runner import checkpoint, load_stored, run, stale_reason


def _cmd_list(args: argparse.Namespace) -> int:
    rows = []
    for exp in list_experiments():
        stored = []
        for p in PROFILES:
            result = load_stored(exp.name, p, root=args.results, allow_partial=True)
            if result is not None:
                done = len(result.meta.get("cells_done", []))
                total = result.meta.get("cells")
                stored.append(f"{p} ({done}/{total})" if result.partial else p)
            elif (why := stale_reason(exp.name, p, root=args.results)) is not None:
                stored.append(f"{p} (stale: {why})")
        rows.append((exp.name, exp.figure or "-", ",".join(stored) or "-", exp.title))
    if not rows:
        print("no experiments registered")
        return 0
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    header = ("experiment", "reproduces", "stored", "what it computes")
    widths = [max(w, len(h)) for w, h in zip(widths, header[:3], strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths) + "  {}"
    print(fmt.format(*header))
    for row in rows:
        print(fmt.format(*row))
    return 0


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


def _cmd_run(args: argparse.Namespace) -> int:
    previous = signal.signal(signal.SIGTERM, _interrupt_on_sigterm)
    try:
        result = run(
            args.name,
            args.profile,
            seed=args.seed,
            root=args.results,
            progress=not args.no_progress,
            keep_cells=args.keep_cells,
            jobs=args.jobs,
            only=_parse_only(args.only),
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
    result = checkpoint(args.name, args.profile, seed=args.seed, root=args.results)
    if result is None:
        print(
            f"no finished cell of {args.name} [{args.profile}] for the current code "
            f"and seed {args.seed}; nothing stored"
        )
    elif result.partial:
        print(f"stored {result.caption()}")
    else:
        print(f"{args.name} [{args.profile}] is complete; its result is unchanged")
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
        help="results store (default: book/_results of this repository, or "
        "$DPNOTES_RESULTS_DIR)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_list = sub.add_parser(
        "list", help="list the experiments and their stored profiles"
    )
    p_list.set_defaults(func=_cmd_list)
    p_run = sub.add_parser("run", help="run one experiment and store its results")
    p_run.add_argument("name", help="experiment name (see `list`)")
    p_run.add_argument("--profile", choices=PROFILES, default="quick")
    p_run.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p_run.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="worker processes running cells in parallel (default 1)",
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
    p_ck = sub.add_parser(
        "checkpoint",
        help="store the finished cells of an unfinished run as a partial result",
    )
    p_ck.add_argument("name", help="experiment name (see `list`)")
    p_ck.add_argument("--profile", choices=PROFILES, default="paper")
    p_ck.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p_ck.set_defaults(func=_cmd_checkpoint)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the command line."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:
        if args.func is not _cmd_run:
            raise
        # Ctrl-C, or ``kill`` (see _interrupt_on_sigterm): the runner has stored the
        # finished cells; say so instead of printing a traceback.
        how = str(err) or "Ctrl-C"
        print(
            f"interrupted ({how}): the finished cells are stored as a partial result; "
            "run the same command again to compute the rest.",
            file=sys.stderr,
        )
        return 130
    except concurrent.futures.BrokenExecutor:
        if args.func is not _cmd_run:
            raise
        # A worker process died without raising (the kernel's out-of-memory killer,
        # or a signal sent to the worker rather than to this process): the pool stops
        # every cell in flight, and the runner has stored the finished ones.
        print(
            "a worker process ended abruptly (killed by a signal, or out of memory: "
            "try fewer --jobs): the finished cells are stored as a partial result; "
            "run the same command again to compute the rest.",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
