"""The release is named once (dpnotes.__version__) and cited alike everywhere."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib
import yaml

import dpnotes

ROOT = Path(__file__).resolve().parents[1]


def _changelog_releases() -> list[tuple[str, str]]:
    text = (ROOT / "CHANGELOG.md").read_text()
    return re.findall(
        r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", text, flags=re.M
    )


def _readme_bibtex() -> dict[str, str]:
    block = re.search(r"```bibtex\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert block, "the README's citation section has no BibTeX entry"
    return dict(re.findall(r"^\s*(\w+)\s*=\s*\{+(.*?)\}+,?$", block.group(1), re.M))


def test_the_version_is_written_once():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"], "the version lives in dpnotes/__init__"
    assert "version" in project["project"]["dynamic"]
    attr = project["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "dpnotes.__version__"
    assert re.fullmatch(r"\d+\.\d+\.\d+", dpnotes.__version__)


def test_changelog_starts_with_this_release():
    releases = _changelog_releases()
    assert releases, "CHANGELOG.md has no '## [X.Y.Z] - YYYY-MM-DD' release heading"
    assert releases[0][0] == dpnotes.__version__
    dates = [date for _, date in releases]
    assert dates == sorted(dates, reverse=True), "newest release first"


def test_citation_cff_and_readme_cite_this_release():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    version, date = _changelog_releases()[0]
    assert str(cff["version"]) == version
    assert str(cff["date-released"]) == date
    bib = _readme_bibtex()
    assert bib["version"] == version
    assert bib["date"] == date
    assert bib["url"] == cff["repository-code"]
    assert bib["title"] == cff["title"]
