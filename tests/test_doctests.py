"""Run the doctests of every module of the dpnotes package.

Modules are found with :func:`pkgutil.walk_packages`; an import error is a test
failure (``onerror`` re-raises instead of the default of silently skipping the
package), and the list is checked against the ``.py`` files on disk so that no module
is left out.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import types
from pathlib import Path

import pytest

import dpnotes

PACKAGE_DIR = Path(dpnotes.__file__).parent


def _raise(name: str) -> None:
    raise ImportError(f"walk_packages could not import {name}")


def module_names() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.walk_packages(dpnotes.__path__, "dpnotes.", onerror=_raise)
    )


MODULES = module_names()


def run_doctests(module: types.ModuleType) -> doctest.TestResults:
    return doctest.testmod(
        module,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        report=False,
        verbose=False,
    )


def test_every_module_is_collected() -> None:
    on_disk = set()
    for path in PACKAGE_DIR.rglob("*.py"):
        parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts == ("dpnotes",):
            continue  # the package itself, imported above
        on_disk.add(".".join(parts))
    assert on_disk == set(MODULES)
    assert {"dpnotes.bounds", "dpnotes.mean.coinpress", "dpnotes.metrics"} <= on_disk


@pytest.mark.parametrize("name", ["dpnotes", *MODULES])
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = run_doctests(module)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctests failed"


def test_doctests_exist_where_expected() -> None:
    # A module that lost its examples would pass the test above vacuously.
    for name in (
        "dpnotes.bounds",
        "dpnotes.mean.coinpress",
        "dpnotes.mean.stratified",
        "dpnotes.mechanisms",
        "dpnotes.metrics",
    ):
        assert run_doctests(importlib.import_module(name)).attempted > 0, name


def test_a_failing_doctest_is_detected() -> None:
    bad = types.ModuleType("dpnotes_fake_module")
    bad.__doc__ = ">>> 1 + 1\n3\n"
    assert run_doctests(bad).failed == 1
