"""Tests for scripts/execute_book.py: chapters run ahead land where the build looks."""

from __future__ import annotations

from pathlib import Path

import pytest
from script_loader import load_script

eb = load_script("scripts/execute_book.py")

HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# {title}

"""


def _chapter(path: Path, title: str, code: str | None) -> None:
    body = HEADER.format(title=title)
    if code is not None:
        body += f"```{{code-cell}} ipython3\n{code}\n```\n"
    else:  # a page without code: plain MyST, no notebook front matter
        body = f"# {title}\n\nText only.\n"
    path.write_text(body)


@pytest.fixture
def book(tmp_path: Path) -> Path:
    (tmp_path / "_config.yml").write_text(
        "title: t\nexecute:\n  execute_notebooks: cache\n"
        "  cache: _build/.jupyter_cache\n  timeout: 60\n"
        "parse:\n  myst_enable_extensions:\n    - colon_fence\n    - dollarmath\n"
    )
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nchapters:\n"
        "  - file: ok\n    sections:\n      - file: same\n"
        "  - file: broken\n"
    )
    _chapter(tmp_path / "intro.md", "Intro", None)
    _chapter(tmp_path / "ok.md", "Ok", "x = 6 * 7\nprint(x)")
    _chapter(tmp_path / "same.md", "Same code", "x = 6 * 7\nprint(x)")
    _chapter(tmp_path / "broken.md", "Broken", "raise RuntimeError('planted')")
    return tmp_path


def _as_the_build_reads(path: Path, root: Path):
    """The notebook myst-nb builds from a chapter inside Sphinx (its own reader)."""
    from myst_nb.core.config import NbParserConfig
    from myst_nb.core.read import create_nb_reader

    text = path.read_text()
    reader = create_nb_reader(str(path), eb.md_config(root), NbParserConfig(), text)
    return reader.read(text)


def test_toc_files_lists_every_page_in_order(book):
    assert [p.name for p in eb.toc_files(book)] == [
        "intro.md",
        "ok.md",
        "same.md",
        "broken.md",
    ]
    (book / "ok.md").unlink()
    with pytest.raises(FileNotFoundError, match="lists ok"):
        eb.toc_files(book)


@pytest.mark.slow
def test_chapters_are_cached_under_the_builds_key_and_failures_left_to_it(book, capsys):
    from jupyter_cache import get_cache

    assert eb.main(["--root", str(book), "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    # Two distinct notebooks ran (same.md has ok.md's code); the planted error is named.
    assert "2 chapters, 2 at a time" in out
    assert "broken.md: failed (RuntimeError: planted)" in out
    cache = get_cache(str(book / "_build" / ".jupyter_cache"))
    # The build finds ok.md and same.md cached, with their outputs ...
    for name in ("ok.md", "same.md"):
        record = cache.match_cache_notebook(_as_the_build_reads(book / name, book))
        bundle = cache.get_cache_bundle(record.pk)
        outputs = bundle.nb.cells[0].outputs
        assert outputs and "42" in outputs[0]["text"]
    # ... and runs broken.md itself, to report the error with its traceback.
    with pytest.raises(KeyError):
        cache.match_cache_notebook(_as_the_build_reads(book / "broken.md", book))
    # A second call runs only what is still missing.
    assert eb.main(["--root", str(book), "--jobs", "1"]) == 0
    assert "1 chapters, 1 at a time" in capsys.readouterr().out


def test_a_book_without_the_cache_is_left_alone(book, capsys):
    config = book / "_config.yml"
    config.write_text(config.read_text().replace("execute_notebooks: cache", "x: 1"))
    assert eb.main(["--root", str(book)]) == 0
    assert "nothing to do" in capsys.readouterr().out
    assert not (book / "_build").exists()


def test_jobs_below_one_is_refused(book):
    with pytest.raises(SystemExit):
        eb.main(["--root", str(book), "--jobs", "0"])
