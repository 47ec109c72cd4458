"""The package metadata, the conda environment and the repository layout agree."""

from __future__ import annotations

import re
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


def _pyproject_packages() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    reqs = [*project["dependencies"], *extras["test"], *extras["cluster"]]
    return {_name(r): r for r in reqs}


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
        "sage-importance",
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
