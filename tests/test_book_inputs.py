"""Tests for scripts/book_inputs.py: a new result clears the book's build caches."""

from __future__ import annotations

from pathlib import Path

import pytest
from script_loader import load_script


def _load():
    return load_script("scripts/book_inputs.py")


bi = _load()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "dpnotes").mkdir()
    (tmp_path / "dpnotes" / "mod.py").write_text("X = 1\n")
    res = tmp_path / "book" / "_results" / "exp" / "paper"
    res.mkdir(parents=True)
    (res / "results.csv").write_text("a,b\n1,2\n")
    (res / "meta.json").write_text("{}\n")
    cache = tmp_path / "book" / "_results" / ".run_cache"
    cache.mkdir()
    (cache / "run.csv").write_text("x\n")
    (tmp_path / "book" / "_figures").mkdir()
    (tmp_path / "book" / "_figures" / "exp-fig-a.svg").write_text("<svg/>\n")
    return tmp_path


def _caches(build: Path) -> None:
    for name in bi.CACHES:
        (build / name).mkdir(parents=True, exist_ok=True)
        (build / name / "entry").write_text("cached\n")


def _present(build: Path) -> list[bool]:
    return [(build / name / "entry").is_file() for name in bi.CACHES]


ENV = {"DPNOTES_DATA_DIR": "/data", "DPNOTES_OFFLINE": "1"}


def test_first_build_clears_then_unchanged_inputs_keep_the_caches(repo: Path) -> None:
    build = repo / "_build"
    _caches(build)
    assert bi.refresh(repo, build, ENV)  # no record yet: start clean
    assert _present(build) == [False, False]
    _caches(build)
    assert not bi.refresh(repo, build, ENV)
    assert _present(build) == [True, True]


@pytest.mark.parametrize(
    "change",
    [
        lambda r: (r / "book/_results/exp/paper/results.csv").write_text("a,b\n1,3\n"),
        lambda r: (
            (r / "book/_results/exp/quick").mkdir()
            or (r / "book/_results/exp/quick/results.csv").write_text("a\n")
        ),
        lambda r: (r / "dpnotes/mod.py").write_text("X = 2\n"),
        lambda r: (r / "pyproject.toml").write_text("[project]\nname = 'y'\n"),
        lambda r: (r / "book/_results/exp/paper/meta.json").unlink(),
    ],
    ids=["result-edited", "result-added", "source", "dependencies", "result-removed"],
)
def test_a_changed_input_clears_the_caches(repo: Path, change) -> None:
    build = repo / "_build"
    bi.refresh(repo, build, ENV)
    _caches(build)
    change(repo)
    assert bi.refresh(repo, build, ENV)
    assert _present(build) == [False, False]
    # The new fingerprint is recorded: the next build keeps its caches.
    _caches(build)
    assert not bi.refresh(repo, build, ENV)


def test_missing_figure_files_clear_the_caches(repo: Path) -> None:
    # A cached chapter does not run, so it would not write its SVG and PDF files,
    # which its captions link.
    build = repo / "_build"
    bi.refresh(repo, build, ENV)
    _caches(build)
    (repo / "book/_figures/exp-fig-a.svg").unlink()
    assert bi.refresh(repo, build, ENV)
    assert _present(build) == [False, False]


def test_environment_counts_and_hidden_folders_do_not(repo: Path) -> None:
    base = bi.fingerprint(repo, ENV)
    assert bi.fingerprint(repo, {**ENV, "DPNOTES_DATA_DIR": "/other"}) != base
    assert bi.fingerprint(repo, {**ENV, "DPNOTES_RESULTS_DIR": "/r"}) != base
    assert bi.fingerprint(repo, {**ENV, "UNRELATED": "1"}) == base
    # The run cache is read by runs, not by the chapters.
    (repo / "book/_results/.run_cache/run.csv").write_text("y\n")
    assert bi.fingerprint(repo, ENV) == base


def test_main_prints_when_it_clears(repo: Path, capsys, monkeypatch) -> None:
    for name in bi.ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    assert bi.main(["--root", str(repo)]) == 0
    assert "every chapter runs again" in capsys.readouterr().out
    assert (repo / "_build" / bi.RECORD).is_file()
    assert bi.main(["--root", str(repo)]) == 0
    assert capsys.readouterr().out == ""


def test_a_results_folder_elsewhere_is_the_one_fingerprinted(
    repo: Path, tmp_path_factory
) -> None:
    elsewhere = tmp_path_factory.mktemp("results")
    (elsewhere / "results.csv").write_text("a\n1\n")
    env = {**ENV, "DPNOTES_RESULTS_DIR": str(elsewhere)}
    assert bi.results_folder(repo, env) == elsewhere
    base = bi.fingerprint(repo, env)
    # The chapters read the folder the variable names, not book/_results.
    (repo / "book/_results/exp/paper/results.csv").write_text("a,b\n9,9\n")
    assert bi.fingerprint(repo, env) == base
    (elsewhere / "results.csv").write_text("a\n2\n")
    assert bi.fingerprint(repo, env) != base
