"""The book's sources: table of contents, notebook pairs, Colab links, citations."""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest
import yaml
from script_loader import load_script

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())
REPO_URL = CONFIG["repository"]["url"].rstrip("/")
COLAB = re.compile(
    r"https://colab\.research\.google\.com/github/([^/\s]+)/([^/\s]+)/blob/([^/\s]+)/"
    r"([^\s)\"'<>]+)"
)


def _toc_files(node) -> list[str]:
    files = []
    if isinstance(node, dict):
        for key in ("root", "file"):
            if key in node:
                files.append(node[key])
        for key in ("parts", "chapters", "sections"):
            for child in node.get(key, []):
                files.extend(_toc_files(child))
    return files


PAGES = _toc_files(TOC)


def _source(page: str) -> Path:
    for suffix in (".md", ".ipynb", ".rst"):
        path = ROOT / f"{page}{suffix}"
        if path.exists():
            return path
    raise AssertionError(f"_toc.yml lists {page}, which does not exist")


def _is_notebook(md: Path) -> bool:
    return md.suffix == ".md" and md.read_text().startswith("---\njupytext:")


NOTEBOOKS = [p for p in map(_source, PAGES) if _is_notebook(p)]


def test_every_toc_page_exists():
    assert PAGES, "the table of contents is empty"
    for page in PAGES:
        _source(page)


def test_toc_lists_every_chapter_source():
    # Pages under book/ that are not in the toc would be silently skipped by the build.
    listed = {_source(p).resolve() for p in PAGES}
    for md in (ROOT / "book").rglob("*.md"):
        if any(
            part.startswith(("_", ".")) for part in md.relative_to(ROOT / "book").parts
        ):
            continue
        assert md.resolve() in listed, f"{md.relative_to(ROOT)} is not in _toc.yml"


def test_book_config_is_strict_and_offline_ready():
    assert CONFIG["only_build_toc_files"] is True
    assert CONFIG["execute"]["execute_notebooks"] == "cache"
    assert CONFIG["execute"]["allow_errors"] is False
    assert CONFIG["execute"]["timeout"] >= 600
    assert any("ipynb" in p for p in CONFIG["exclude_patterns"])
    assert ".venv" in CONFIG["exclude_patterns"]
    assert CONFIG["bibtex_bibfiles"] == ["book/references.bib"]
    assert CONFIG["launch_buttons"]["colab_url"].startswith(
        "https://colab.research.google.com"
    )
    assert "sphinx_proof" in CONFIG["sphinx"]["extra_extensions"]


colab = load_script("scripts/colab.py")


def test_every_chapter_is_a_notebook_source():
    assert {p.resolve() for p in NOTEBOOKS} == {
        p.resolve() for p in colab.chapters(ROOT)
    }


def test_colab_notebooks_are_in_step_with_their_chapters():
    # Each book/**/*.ipynb is generated from its chapter (scripts/colab.py): the same
    # code cells, plain Markdown, and the numbers the book shows.
    problems = colab.check(ROOT, None)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("md", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_chapters_are_not_jupytext_pairs(md: Path):
    # The .ipynb is generated (plain Markdown for Colab), so jupytext must not pair
    # and overwrite it with MyST.
    meta = yaml.safe_load(md.read_text().split("---\n")[1])
    assert "formats" not in meta["jupytext"], f"{md.name}: drop jupytext formats"


@pytest.mark.parametrize("md", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_first_code_cell_installs_the_package_in_colab(md: Path):
    nb = jupytext.read(md)
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert "remove-cell" in first.metadata.get("tags", []), (
        "the install cell must be hidden"
    )
    assert first.source == colab.install_cell(REPO_URL), (
        f"{md.name}: the install cell differs from scripts/colab.py's for the "
        "repository in _config.yml: run `make sync`"
    )
    compile(first.source, md.name, "exec")  # plain Python, valid outside IPython


def _colab_targets(text: str) -> list[str]:
    targets = []
    for owner, repo, _branch, path in COLAB.findall(text):
        assert f"https://github.com/{owner}/{repo}" == REPO_URL, (owner, repo)
        targets.append(path)
    return targets


def test_readme_colab_links_point_at_existing_notebooks():
    targets = _colab_targets((ROOT / "README.md").read_text())
    assert targets, "the README should link at least one chapter in Colab"
    for path in targets:
        if path.endswith("/"):  # a template such as book/<chapter>.ipynb
            continue
        assert (ROOT / path).is_file(), f"README links {path}, which does not exist"


def test_built_colab_buttons_point_at_existing_notebooks():
    html = ROOT / "_build" / "html"
    if not html.is_dir():
        pytest.skip("the book has not been built")
    found = 0
    for page in html.rglob("*.html"):
        for path in _colab_targets(page.read_text(errors="replace")):
            found += 1
            assert (ROOT / path).is_file(), (
                f"{page.name} links {path} in Colab; missing"
            )
    assert found, "no Colab button found in the built book"


def _bib_keys() -> set[str]:
    text = (ROOT / "book" / "references.bib").read_text()
    return set(re.findall(r"@\w+\{([^,\s]+),", text))


def test_every_citation_is_in_the_bibliography():
    keys = _bib_keys()
    cited = set()
    for md in (ROOT / "book").rglob("*.md"):
        for group in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", md.read_text()):
            cited.update(k.strip() for k in group.split(","))
    assert cited, "the book cites nothing"
    assert cited <= keys, f"unknown citation keys: {sorted(cited - keys)}"


def test_docstring_references_are_in_the_bibliography():
    keys = _bib_keys()
    pattern = re.compile(r"References:\s*\n((?:\s{8,}.*\n)+)")
    used = set()
    for py in (ROOT / "dpnotes").rglob("*.py"):
        for block in pattern.findall(py.read_text()):
            used.update(re.findall(r"\b([a-z]+\d{4}[a-z]+)\b", block))
    assert used <= keys, (
        f"docstrings cite keys missing from references.bib: {sorted(used - keys)}"
    )


@pytest.mark.parametrize("md", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_figure_is_shown_once_in_the_book(md: Path):
    # glue_figure shows the figure as its cell's output (for Jupyter and Colab) and
    # glues it for a captioned {glue:figure}; the book must not show the output too.
    for cell in jupytext.read(md).cells:
        if cell.cell_type == "code" and "glue_figure(" in cell.source:
            tags = set(cell.metadata.get("tags", []))
            assert tags & {"remove-cell", "remove-output"}, (
                f"{md.name}: a cell that calls glue_figure needs the remove-output "
                f"(or remove-cell) tag: {cell.source[:80]!r}"
            )
