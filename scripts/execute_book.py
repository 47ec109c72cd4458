"""Execute the book's chapters on every core, into jupyter-book's execution cache.

jupyter-book (1.x, ``execute_notebooks: cache``) runs the chapters one after another
while Sphinx reads them, so a build on a 2-core machine leaves a core idle for the
several minutes the chapters take. This script runs them first, ``--jobs`` at a time,
and stores each executed notebook in the same cache (``execute.cache`` of
``_config.yml``) under the same key jupyter-book looks up: the hash of the code cells
and the kernelspec, read by myst-nb's own reader with the book's MyST settings. The
build that follows then finds every chapter cached and only renders it.

Nothing here replaces the build's own checks: a chapter that fails, or runs past the
configured timeout, is not cached, and the build runs it again and reports the error as
it always does. A chapter already cached is skipped; chapters with the same code (the
errata pages) run once. Each kernel gets its share of the cores
(``OMP_NUM_THREADS`` and friends), so two kernels never fight over threads.

Run: ``python scripts/execute_book.py [--root .] [--jobs N]`` (``make book`` does,
after ``scripts/book_inputs.py`` has cleared a stale cache).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import yaml

#: Thread-pool sizes a kernel's numerical libraries read at start-up.
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def toc_files(root: Path) -> list[Path]:
    """Every source file ``_toc.yml`` lists (root, chapters, sections), in order."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    names: list[str] = [toc["root"]]

    def walk(node) -> None:
        if isinstance(node, dict):
            if "file" in node:
                names.append(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk({k: v for k, v in toc.items() if k != "root"})
    out = []
    for name in names:
        path = root / name
        found = [p for p in (path, path.with_suffix(".md")) if p.is_file()]
        if not found:
            raise FileNotFoundError(f"_toc.yml lists {name}, which does not exist")
        out.append(found[0])
    return out


def md_config(root: Path):
    """The MyST parser settings of ``_config.yml``, as myst-nb reads a chapter with."""
    from myst_parser.config.main import MdParserConfig

    config = yaml.safe_load((root / "_config.yml").read_text())
    extensions = (config.get("parse") or {}).get("myst_enable_extensions") or []
    return MdParserConfig(enable_extensions=set(extensions))


def read_notebook(path: Path, config):
    """The chapter as myst-nb builds it (None for a page without code)."""
    from myst_nb.core.read import is_myst_markdown_notebook, read_myst_markdown_notebook

    text = path.read_text(encoding="utf8")
    if path.suffix != ".md" or not is_myst_markdown_notebook(text):
        return None
    return read_myst_markdown_notebook(
        text, config=config, add_source_map=True, path=str(path)
    )


def _execute(path: str, root: str, timeout: int, allow_errors: bool):
    """Run one chapter in a fresh kernel (a worker process); return what happened."""
    from jupyter_cache.executors.utils import single_nb_execution

    nb = read_notebook(Path(path), md_config(Path(root)))
    result = single_nb_execution(
        nb,
        cwd=str(Path(path).parent),
        allow_errors=allow_errors,
        timeout=timeout,
        meta_override=True,
    )
    error = None
    if result.err is not None:  # the cell's error (nbclient names it), else the type
        name = getattr(result.err, "ename", None) or type(result.err).__name__
        value = getattr(result.err, "evalue", None)
        error = f"{name}: {value}" if value else name
    return nb, error, result.time


def default_jobs() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("."))
    parser.add_argument(
        "--jobs", type=int, default=None, help="kernels at a time (default: the cores)"
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    jobs = default_jobs() if args.jobs is None else args.jobs
    if jobs < 1:
        parser.error(f"--jobs must be at least 1, got {jobs}")
    config = yaml.safe_load((root / "_config.yml").read_text())
    execute = config.get("execute") or {}
    if execute.get("execute_notebooks") != "cache":
        print("execute_book: the book does not use the execution cache; nothing to do")
        return 0

    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache = get_cache(str(root / execute.get("cache", "_build/.jupyter_cache")))
    parse = md_config(root)
    todo: dict[str, Path] = {}  # hash -> the first chapter with that code
    for path in toc_files(root):
        nb = read_notebook(path, parse)
        if nb is None:
            continue
        _, key = cache.create_hashed_notebook(nb)
        if key in todo:
            continue
        try:
            cache.match_cache_notebook(nb)
        except KeyError:
            todo[key] = path
    if not todo:
        print("execute_book: every chapter is cached")
        return 0
    # Longest first (by source size, the best guess before a first run), so that no
    # long chapter starts last while the other cores idle.
    order = sorted(todo.values(), key=lambda p: p.stat().st_size, reverse=True)
    share = str(max(1, default_jobs() // jobs))
    for name in THREAD_VARS:
        os.environ[name] = share
    print(f"execute_book: {len(order)} chapters, {jobs} at a time")
    start = time.perf_counter()
    failed = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {
            pool.submit(
                _execute,
                str(path),
                str(root),
                int(execute.get("timeout", 30)),
                bool(execute.get("allow_errors", False)),
            ): path
            for path in order
        }
        for future in as_completed(futures):
            path = futures[future]
            rel = path.relative_to(root)
            try:
                nb, error, seconds = future.result()
            except Exception as exc:  # the worker itself failed: let the build run it
                error, seconds = f"{type(exc).__name__}: {exc}", 0.0
            if error is not None:
                failed.append(rel)
                print(f"  {rel}: failed ({error}); the build runs it again")
                continue
            cache.cache_notebook_bundle(
                CacheBundleIn(nb, str(path), data={"execution_seconds": seconds}),
                check_validity=False,
                overwrite=True,
            )
            print(f"  {rel}: {seconds:.1f} s")
    print(
        f"execute_book: {len(order) - len(failed)} of {len(order)} chapters cached "
        f"in {time.perf_counter() - start:.0f} s"
    )
    # Failures are the build's to report, with its full traceback: never fail here.
    return 0


if __name__ == "__main__":
    sys.exit(main())
