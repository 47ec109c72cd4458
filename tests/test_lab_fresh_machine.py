"""A run on a fresh machine: missing data files are fetched before they are hashed.

The runner records each data file's sha256 in a result's provenance before any cell
runs; on a machine without the data it must fetch the files as the loaders do
(:func:`dpnotes.data.ensure_file`), and offline fail with the loaders'
:class:`~dpnotes.data.DataNotFoundError`, never a bare ``FileNotFoundError``. No test
here touches the network: downloads are answered by a fake server.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from dpnotes.data import KNOWN_FILES, DataIntegrityError, DataNotFoundError, data_root
from dpnotes.data import files as files_mod
from dpnotes.lab import (
    Profile,
    get_experiment,
    load_or_run,
    load_stored,
    provenance,
    register,
    run,
)
from dpnotes.lab import runner as runner_mod
from dpnotes.lab.cli import main

# The real data folder (tests and book builds set it), read before any test changes it.
REAL_DATA_DIR = os.environ.get(files_mod.ENV_DATA_DIR, "").strip()

TINY = b"x,y\n1,2\n3,4\n"
TINY_PATH = "toyfresh/tiny.csv"


class FakeResponse:
    """Enough of an HTTP response for the data package's downloader."""

    def __init__(self, body: bytes):
        self._body = io.BytesIO(body)
        self.status = 200
        self.headers = {"Content-Length": str(len(body))}

    def read(self, n: int = -1) -> bytes:
        return self._body.read(n)

    def __enter__(self) -> FakeResponse:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


@pytest.fixture
def fresh(monkeypatch, tmp_path) -> Path:
    """A fresh machine: an empty data folder, offline, no network, no cell run yet.

    Returns the results folder. Any cell that runs is recorded in ``CELLS_RUN``.
    """
    monkeypatch.setenv(files_mod.ENV_DATA_DIR, str(tmp_path / "data"))
    monkeypatch.setenv(files_mod.ENV_OFFLINE, "1")

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("a test tried to use the network")

    monkeypatch.setattr(files_mod, "_urlopen", no_network)
    monkeypatch.setattr(files_mod, "DOWNLOAD_RETRIES", 0)
    real_run_cell = runner_mod.run_cell

    def recording_run_cell(*args, **kwargs):
        CELLS_RUN.append(args)
        return real_run_cell(*args, **kwargs)

    CELLS_RUN.clear()
    monkeypatch.setattr(runner_mod, "run_cell", recording_run_cell)
    return tmp_path / "results"


CELLS_RUN: list[tuple] = []


def serve(monkeypatch, body: bytes) -> list[str]:
    """Go online, and answer every download with ``body``; return the URLs asked."""
    asked: list[str] = []

    def urlopen(request, timeout=None):
        asked.append(request.full_url)
        return FakeResponse(body)

    monkeypatch.delenv(files_mod.ENV_OFFLINE, raising=False)
    monkeypatch.setattr(files_mod, "_urlopen", urlopen)
    return asked


def _stored_nothing(results: Path, name: str) -> bool:
    folder = results / name
    return not folder.exists() or not any(folder.rglob("meta.json"))


# -- a real experiment on an empty data folder, offline ------------------------------


def test_run_offline_without_data_raises_the_loaders_error_before_any_cell(fresh):
    with pytest.raises(DataNotFoundError) as err:
        run("dp_group_error", "smoke", root=fresh, progress=False)
    message = str(err.value)
    assert "'adult/adult.data' was not found" in message
    assert "DPNOTES_OFFLINE" in message and "archive.ics.uci.edu" in message
    assert CELLS_RUN == []
    assert _stored_nothing(fresh, "dp_group_error")


def test_load_or_run_offline_without_data_raises_the_loaders_error(fresh):
    with pytest.raises(DataNotFoundError, match=r"adult/adult\.data"):
        load_or_run("dp_group_error", prefer=("smoke",), fallback="smoke", root=fresh)
    assert CELLS_RUN == []
    assert _stored_nothing(fresh, "dp_group_error")


def test_the_command_line_says_which_file_is_missing_without_a_traceback(fresh, capsys):
    args = ["--results", str(fresh), "run", "dp_group_error", "--profile", "smoke"]
    assert main([*args, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: data file 'adult/adult.data' was not found")
    assert "Traceback" not in err
    assert CELLS_RUN == []


@pytest.mark.data
def test_a_real_file_fetched_by_a_fake_download_is_hashed(fresh, monkeypatch):
    real = Path(REAL_DATA_DIR) / "adult" / "adult.data"
    if not real.is_file():
        pytest.skip("set DPNOTES_DATA_DIR to the real data to serve adult.data")
    asked = serve(monkeypatch, real.read_bytes())
    meta = provenance(get_experiment("dp_group_error"), "smoke", 0)
    expected = KNOWN_FILES["adult/adult.data"].sha256
    assert meta["datasets"] == [{"name": "adult/adult.data", "sha256": expected}]
    assert asked == list(KNOWN_FILES["adult/adult.data"].urls[:1])
    assert (data_root() / "adult" / "adult.data").is_file()


# -- a toy experiment whose data file the registry knows -----------------------------


@dataclass(frozen=True)
class _FreshProfile(Profile):
    file: str = "tiny.csv"


@register(
    name="toy_fresh_data",
    title="A toy that reads one small data file",
    profiles={p: _FreshProfile() for p in ("smoke", "quick", "paper")},
    grid=lambda config: [{"part": 0}, {"part": 1}],
    datasets=lambda config: [f"toyfresh/{config.file}"],
)
def toy_fresh_data(config, cell, *, rng, cache=None, progress=False):
    # The cell reads the file the run fetched: it is there before any cell runs.
    table = pd.read_csv(data_root() / "toyfresh" / config.file)
    return pd.DataFrame(
        {"rows": [len(table)], "value": [float(rng.normal())], "part": cell["part"]}
    )


@pytest.fixture
def tiny_known(monkeypatch) -> str:
    """Make ``toyfresh/tiny.csv`` a known file (its sha256 pinned); return the sha."""
    sha = hashlib.sha256(TINY).hexdigest()
    template = KNOWN_FILES["adult/adult.data"]
    entry = dataclasses.replace(
        template,
        relpath=TINY_PATH,
        sha256=sha,
        urls=("https://example.org/toyfresh/tiny.csv",),
        rows=2,
        size=len(TINY),
        magic=None,
    )
    monkeypatch.setitem(files_mod._REGISTRY, TINY_PATH, entry)
    return sha


def test_a_fake_download_fetches_the_file_and_the_run_hashes_it(
    fresh, monkeypatch, tiny_known
):
    asked = serve(monkeypatch, TINY)
    result = run("toy_fresh_data", "smoke", root=fresh, progress=False)
    assert asked == ["https://example.org/toyfresh/tiny.csv"]  # once, not per cell
    assert result.meta["datasets"] == [{"name": TINY_PATH, "sha256": tiny_known}]
    assert (data_root() / TINY_PATH).read_bytes() == TINY
    assert list(result.table["rows"]) == [2, 2] and len(CELLS_RUN) == 2


def test_the_same_toy_offline_is_refused_before_any_cell(fresh, tiny_known):
    with pytest.raises(DataNotFoundError, match="No download was attempted"):
        load_or_run("toy_fresh_data", prefer=("smoke",), fallback="smoke", root=fresh)
    assert CELLS_RUN == []
    assert load_stored("toy_fresh_data", "smoke", root=fresh) is None


def test_a_download_that_fails_verification_is_the_loaders_error(
    fresh, monkeypatch, tiny_known
):
    serve(monkeypatch, b"x,y\n9,9\n9,9\n")  # same size, other bytes
    with pytest.raises(DataNotFoundError, match="failed verification"):
        run("toy_fresh_data", "smoke", root=fresh, progress=False)
    assert CELLS_RUN == []
    assert not (data_root() / TINY_PATH).exists()


def test_a_present_file_of_the_wrong_version_is_refused(fresh, tiny_known):
    path = data_root() / TINY_PATH
    path.parent.mkdir(parents=True)
    path.write_bytes(b"x,y\n1,2\n")
    with pytest.raises(DataIntegrityError, match="delete it and load again"):
        run("toy_fresh_data", "smoke", root=fresh, progress=False)
    assert CELLS_RUN == []


def test_a_file_the_registry_does_not_know_is_hashed_if_present(fresh):
    profile = "smoke@file=unknown.csv"
    with pytest.raises(DataNotFoundError, match="not one dpnotes knows how to fetch"):
        run("toy_fresh_data", profile, root=fresh, progress=False)
    assert CELLS_RUN == []
    path = data_root() / "toyfresh" / "unknown.csv"
    path.parent.mkdir(parents=True)
    path.write_bytes(TINY)
    result = run("toy_fresh_data", profile, root=fresh, progress=False)
    sha = hashlib.sha256(TINY).hexdigest()
    assert result.meta["datasets"] == [{"name": "toyfresh/unknown.csv", "sha256": sha}]
