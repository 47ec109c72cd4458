"""Clear the book's build caches when something the chapters read has changed.

jupyter-book re-executes a chapter only when the chapter's own code changes, and Sphinx
re-reads a page only when its source file changes. The chapters also read inputs that
neither cache sees: the stored results (``book/_results``, which ``python -m dpnotes
run`` rewrites), the package's source (run, and shown in the chapters), the dependency
specification, and the environment variables that choose the data and results
folders. After a new run, a cached build would show the old tables and figures.

This script fingerprints those inputs. When the fingerprint differs from the one the
last build recorded, it removes the execution cache and Sphinx's saved environment, so
that the build runs and reads every chapter again; then it records the new fingerprint.

Run: ``python scripts/book_inputs.py [--root .] [--build _build]`` (``make book`` does).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
from pathlib import Path

# Environment variables the chapters read (see dpnotes.data and dpnotes.experiments).
ENV_VARS = ("DPNOTES_DATA_DIR", "DPNOTES_OFFLINE", "DPNOTES_RESULTS_DIR")
# Caches under the build folder that hold outputs computed from the inputs.
CACHES = (".jupyter_cache", ".doctrees")
RECORD = ".book-inputs"


def results_folder(root: Path, environ) -> Path:
    """The results folder the chapters read: ``DPNOTES_RESULTS_DIR`` if set (relative
    to ``root``), else ``book/_results``, as ``dpnotes.experiments.results_root``."""
    env = environ.get("DPNOTES_RESULTS_DIR")
    return root / env if env else root / "book" / "_results"


def _files(root: Path, environ) -> list[Path]:
    """Input files: results (not in hidden folders), package source, dependencies."""
    out = [root / "pyproject.toml"]
    results = results_folder(root, environ)
    if results.is_dir():
        out += [
            p
            for p in results.rglob("*")
            if p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(results).parts)
        ]
    out += (root / "dpnotes").rglob("*.py")
    return sorted(p for p in out if p.is_file())


def fingerprint(root: Path, environ: dict[str, str] | None = None) -> str:
    """Return a hash of every input the chapters read that the build caches miss.

    Args:
        root: The repository root.
        environ: The environment to read ``ENV_VARS`` from; default ``os.environ``.

    Returns:
        A hex digest: equal for equal inputs.
    """
    environ = os.environ if environ is None else environ
    h = hashlib.sha256()
    for name in ENV_VARS:
        h.update(f"{name}={environ.get(name, '')}\n".encode())
    for path in _files(root, environ):
        h.update(path.as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def refresh(root: Path, build: Path, environ: dict[str, str] | None = None) -> bool:
    """Remove the build caches if the inputs changed since the last build.

    Args:
        root: The repository root.
        build: The build folder (``_build``).
        environ: As for :func:`fingerprint`.

    Returns:
        True if the caches were removed (or there was no record of a previous build).
    """
    new = fingerprint(root, environ)
    record = build / RECORD
    old = record.read_text().strip() if record.is_file() else None
    # The chapters write their figures' SVG and PDF files there as they run; a cached
    # chapter would not write them again.
    figures = root / "book" / "_figures"
    if old == new and figures.is_dir() and any(figures.iterdir()):
        return False
    for name in CACHES:
        shutil.rmtree(build / name, ignore_errors=True)
    build.mkdir(parents=True, exist_ok=True)
    tmp = record.with_suffix(".tmp")
    tmp.write_text(new + "\n")
    tmp.replace(record)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path("."))
    parser.add_argument("--build", type=Path, default=None, help="default: ROOT/_build")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    build = args.build or root / "_build"
    if refresh(root, build):
        print(
            "book inputs changed (results, package source, dependencies or data "
            "settings): every chapter runs again"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
