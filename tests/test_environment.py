"""The package metadata, the conda environment and the repository layout agree."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import tomllib
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return (
        re.split(r"[\s<>=!~;\[]", requirement.strip(), maxsplit=1)[0]
        .lower()
        .replace("_", "-")
    )


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _pyproject_packages() -> dict[str, str]:
    """Every requirement: core and all extras (less the extras' self-references)."""
    project = _project()
    reqs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        reqs += [r for r in extra if _name(r) != "dpnotes"]
    return {_name(r): r for r in reqs}


#: Import name -> distribution name, where they differ.
_DISTRIBUTION = {
    "sklearn": "scikit-learn",
    "distributed": "dask",
    "dp_accounting": "dp-accounting",
    "sage": "sage-importance",
}

#: Modules the package imports only inside a notebook or on request, each provided by
#: where it runs: IPython and myst_nb by Jupyter or the book's toolchain (the ``book``
#: extra), distributed by the ``cluster`` extra, jax by mbi.
_PROVIDED_ELSEWHERE = {
    "IPython": ("book", "jupyter-book"),
    "myst_nb": ("book", "jupyter-book"),
    "distributed": ("cluster", "dask"),
}
_TRANSITIVE = {"jax": "mbi"}


def _third_party_imports() -> set[str]:
    """Top-level modules imported in ``dpnotes`` outside the standard library."""
    found = set()
    for path in (ROOT / "dpnotes").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            found |= {n.split(".")[0] for n in names}
    return {m for m in found if m not in sys.stdlib_module_names and m != "dpnotes"}


def test_core_dependencies_are_what_the_package_imports():
    core = {_name(r) for r in _project()["dependencies"]}
    imported = _third_party_imports()
    needed = {
        _DISTRIBUTION.get(m, m).lower()
        for m in imported
        if m not in _PROVIDED_ELSEWHERE and m not in _TRANSITIVE
    }
    assert needed <= core, f"imported but not declared: {sorted(needed - core)}"
    assert core <= needed, f"declared but never imported: {sorted(core - needed)}"
    extras = _project()["optional-dependencies"]
    for module, (extra, distribution) in _PROVIDED_ELSEWHERE.items():
        if module in imported:
            assert distribution in {_name(r) for r in extras[extra]}, (module, extra)


def test_the_book_toolchain_is_not_a_core_dependency():
    core = {_name(r) for r in _project()["dependencies"]}
    assert not core & {"jupyter-book", "jupytext", "sphinx-proof", "ipywidgets"}
    assert {"jupyter-book", "jupytext"} <= {
        _name(r) for r in _project()["optional-dependencies"]["book"]
    }


def _environment_packages() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(
        d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d
    )
    return {_name(r): r for r in pip if not r.startswith("-e")}


def test_environment_yml_declares_the_same_packages_as_pyproject():
    assert set(_environment_packages()) == set(_pyproject_packages())


def test_pins_that_matter_agree():
    env, py = _environment_packages(), _pyproject_packages()
    for name in (
        "opacus",
        "mbi",
        "folktables",
        "diffprivlib",
        "scikit-learn",
        "jupyter-book",
    ):
        spec_env = env[name].replace(" ", "")[len(name) :]
        spec_py = py[name].replace(" ", "")[len(name) :]
        assert spec_env == spec_py, (
            f"{name}: environment.yml {spec_env} vs pyproject {spec_py}"
        )


def test_required_dependencies_are_declared():
    required = {
        "torch",
        "opacus",
        "mbi",
        "folktables",
        "jupyter-book",
        "jupytext",
        "numpy",
        "scipy",
        "pandas",
        "matplotlib",
        "seaborn",
        "scikit-learn",
        "diffprivlib",
        "fairlearn",
        "tqdm",
        "pytest",
        "hypothesis",
    }
    assert required <= set(_pyproject_packages())


def test_scikit_learn_range_keeps_diffprivlib_importable():
    # diffprivlib 0.6.6 fails to import with scikit-learn >= 1.8.
    assert "<1.8" in _pyproject_packages()["scikit-learn"]


def test_layout_exists():
    for path in (
        "_config.yml",
        "_toc.yml",
        "environment.yml",
        "pyproject.toml",
        "Makefile",
        "README.md",
        "CITATION.cff",
        "LICENSE",
        ".ci/run",
        "dpnotes",
        "book",
        "tests",
        "benchmarks",
        "book/references.bib",
    ):
        assert (ROOT / path).exists(), path


def test_citation_cff_parses():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    assert cff["title"] and cff["authors"]
