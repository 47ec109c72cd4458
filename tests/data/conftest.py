"""Fixtures for the data tests: no network, an isolated data root, fake servers."""

from __future__ import annotations

import dataclasses
import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dpnotes.data import files as _files

# Read once at import: the autouse fixture below removes the variable for every test so
# that the fast tests can never read (or write to) the real data folder by accident.
REAL_DATA_DIR = os.environ.get(_files.ENV_DATA_DIR, "").strip()


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(_files.ENV_OFFLINE, "1")
    monkeypatch.delenv(_files.ENV_DATA_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("a test tried to use the network")

    monkeypatch.setattr(_files, "_urlopen", no_network)
    # pooch waits seconds between attempts: the tests' fake servers answer at once.
    monkeypatch.setattr(_files, "DOWNLOAD_RETRIES", 0)


@pytest.fixture
def real_root() -> Path:
    """The real data folder from $DPNOTES_DATA_DIR; skip the test when it is unset."""
    if not REAL_DATA_DIR:
        pytest.skip(f"set {_files.ENV_DATA_DIR} to run the tests on the real data")
    return Path(REAL_DATA_DIR)


@pytest.fixture
def unpin(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Drop the pinned sha256 and size of a registry entry (to load tiny test files)."""

    def _unpin(relpath: str) -> None:
        info = _files.file_info(relpath)
        monkeypatch.setitem(
            _files._REGISTRY,
            relpath,
            dataclasses.replace(info, sha256=None, size=None),
        )

    return _unpin


class FakeResponse:
    """Enough of ``http.client.HTTPResponse`` for ``_files._fetch``."""

    def __init__(self, body: bytes, status: int = 200, headers: dict | None = None):
        self._body = io.BytesIO(body)
        self.status = status
        self.headers = {"Content-Length": str(len(body))} | (headers or {})

    def read(self, n: int = -1) -> bytes:
        return self._body.read(n)

    def getcode(self) -> int:
        return self.status

    def __enter__(self) -> FakeResponse:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., list[str]]]:
    """Allow downloads and answer requests with canned responses.

    Call ``fake_server(body, status=200, headers=None)`` to answer every request the
    same way, or ``fake_server(responses=[(body, status, headers), ...])`` to answer
    the n-th request with the n-th response. It returns the list of requested URLs.
    """

    def install(
        body: bytes = b"",
        status: int = 200,
        headers: dict | None = None,
        *,
        responses: list[tuple[bytes, int, dict]] | None = None,
    ) -> list[str]:
        requested: list[str] = []

        def urlopen(request: object, timeout: float | None = None) -> FakeResponse:
            assert timeout is not None and timeout > 0
            requested.append(request.full_url)  # type: ignore[attr-defined]
            if responses is not None:
                return FakeResponse(*responses[len(requested) - 1])
            return FakeResponse(body, status, headers)

        monkeypatch.delenv(_files.ENV_OFFLINE, raising=False)
        monkeypatch.setattr(_files, "_urlopen", urlopen)
        return requested

    yield install
