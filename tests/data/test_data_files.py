"""Registry, root resolution, hashing, verification and the atomic download path."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import os
import re
from pathlib import Path

import pytest

import dpnotes.data as data
from dpnotes.data import files as _files

CITATIONS = {
    "ding2021folktables",
    "lecun1998mnist",
    "kohavi1996adult",
    "lequy2022survey",
}


# --------------------------------------------------------------------------- registry


def test_registry_records_are_complete() -> None:
    assert len(data.KNOWN_FILES) == 13
    for relpath, info in data.KNOWN_FILES.items():
        assert relpath == info.relpath and not relpath.startswith("/")
        assert info.sha256 is not None and re.fullmatch(r"[0-9a-f]{64}", info.sha256)
        assert info.urls and all(u.startswith("https://") for u in info.urls)
        assert info.citation in CITATIONS
        assert info.description and info.licence and info.source_page


def test_registry_values_from_the_data_readme() -> None:
    ny = data.file_info("acs/2018/1-Year/psam_p36.csv")
    assert ny.size == 138_176_785 and ny.sha256.startswith("f9bfd886")
    assert ny.archive_member == "psam_p36.csv" and ny.urls[0].endswith("csv_pny.zip")
    assert data.file_info("acs/2018/1-Year/psam_p35.csv").rows == 19_247
    assert data.file_info("mnist/t10k-labels-idx1-ubyte.gz").urls[0] == (
        "https://ossci-datasets.s3.amazonaws.com/mnist/t10k-labels-idx1-ubyte.gz"
    )


def test_registry_is_read_only_and_records_frozen() -> None:
    with pytest.raises(TypeError):
        data.KNOWN_FILES["x"] = None  # type: ignore[index]
    info = data.file_info("adult/adult.data")
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.sha256 = "0" * 64  # type: ignore[misc]


def test_file_info_unknown_lists_known_files() -> None:
    with pytest.raises(ValueError, match=r"unknown data file.*adult/adult\.data"):
        data.file_info("adult/adult.csv")


# ------------------------------------------------------------------------- data root


def test_data_root_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert data.data_root(tmp_path / "explicit") == tmp_path / "explicit"
    assert data.data_root(str(tmp_path)) == tmp_path
    # autouse fixture: XDG_CACHE_HOME=tmp_path/xdg-cache and DPNOTES_DATA_DIR unset
    assert data.data_root() == tmp_path / "xdg-cache" / "dpnotes" / "data"
    monkeypatch.setenv("DPNOTES_DATA_DIR", str(tmp_path / "env"))
    assert data.data_root() == tmp_path / "env"
    assert data.data_root(tmp_path / "explicit") == tmp_path / "explicit"
    monkeypatch.setenv("DPNOTES_DATA_DIR", "  ")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert data.data_root() == tmp_path / "home" / ".cache" / "dpnotes" / "data"


def test_data_root_rejects_bad_values(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"os\.PathLike"):
        data.data_root(3)  # type: ignore[arg-type]
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(ValueError, match="not a folder"):
        data.data_root(afile)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1", True), ("TRUE", True), ("yes", True), ("0", False), ("", False)],
)
def test_is_offline(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: bool
) -> None:
    monkeypatch.setenv("DPNOTES_OFFLINE", value)
    assert data.is_offline() is expected


# --------------------------------------------------------------------- hashing


def test_file_sha256_matches_hashlib(tmp_path: Path) -> None:
    payload = os.urandom(3 * 1024 * 1024 + 17)  # more than one read chunk
    path = tmp_path / "blob"
    path.write_bytes(payload)
    assert data.file_sha256(path) == hashlib.sha256(payload).hexdigest()


def test_verification_is_cached_by_path_size_mtime(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    good = hashlib.sha256(b"abc").hexdigest()
    calls = []
    real_sha256 = hashlib.sha256

    class CountingHashlib:
        @staticmethod
        def sha256(*args: bytes):
            calls.append(args)
            return real_sha256(*args)

    # Count how often the file is actually read and hashed.
    monkeypatch.setattr(_files, "hashlib", CountingHashlib)
    monkeypatch.setattr(_files, "_HASH_CACHE", {})
    data.verify_sha256(path, good)
    data.verify_sha256(path, good)
    assert len(calls) == 1
    path.write_bytes(b"abd")  # new content and size -> new key -> rehash, then fail
    with pytest.raises(data.DataIntegrityError):
        data.verify_sha256(path, good)
    assert len(calls) == 2


def test_wrong_hash_message_names_file_hashes_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "adult" / "adult.data"
    path.parent.mkdir()
    path.write_bytes(b"not adult\n")
    info = dataclasses.replace(data.file_info("adult/adult.data"), size=None)
    actual = hashlib.sha256(b"not adult\n").hexdigest()
    with pytest.raises(ValueError) as err:
        data.ensure_file(info, tmp_path)
    msg = str(err.value)
    assert isinstance(err.value, data.DataIntegrityError)
    for part in (str(path), info.sha256, actual, "delete it", info.urls[0]):
        assert part in msg


def test_wrong_size_is_reported_without_hashing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "adult" / "adult.data"
    path.parent.mkdir()
    path.write_bytes(b"short\n")
    monkeypatch.setattr(_files, "file_sha256", lambda p: pytest.fail("hashed"))
    with pytest.raises(data.DataIntegrityError, match="size of 6 bytes"):
        data.ensure_file(data.file_info("adult/adult.data"), tmp_path)


# ----------------------------------------------------------------- missing, offline


def test_offline_missing_file_names_file_url_and_env(tmp_path: Path) -> None:
    info = data.file_info("mnist/train-labels-idx1-ubyte.gz")
    with pytest.raises(data.DataNotFoundError) as err:
        data.ensure_file(info, tmp_path)
    msg = str(err.value)
    assert isinstance(err.value, FileNotFoundError)
    for part in (info.relpath, info.urls[0], "DPNOTES_DATA_DIR", "DPNOTES_OFFLINE"):
        assert part in msg
    assert not (tmp_path / "mnist").exists()


def test_download_false_never_touches_network(fake_server, tmp_path: Path) -> None:
    requested = fake_server(b"irrelevant")
    with pytest.raises(data.DataNotFoundError, match="disabled"):
        data.ensure_file(data.file_info("adult/adult.names"), tmp_path, download=False)
    assert requested == []


# ------------------------------------------------------------------- downloading


def _entry(body: bytes, **changes: object) -> _files.KnownFile:
    base = data.file_info("mnist/t10k-labels-idx1-ubyte.gz")
    fields = {
        "sha256": hashlib.sha256(body).hexdigest(),
        "size": len(body),
        "urls": ("https://example.org/a.gz", "https://example.org/b.gz"),
    }
    return dataclasses.replace(base, **(fields | changes))


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_download_writes_verified_file(fake_server, tmp_path: Path) -> None:
    body = gzip.compress(b"payload")
    requested = fake_server(body)
    info = _entry(body)
    path = data.ensure_file(info, tmp_path)
    assert path == tmp_path / info.relpath and path.read_bytes() == body
    assert requested == ["https://example.org/a.gz"]
    assert _leftovers(path.parent) == [path.name]  # no temporary files left behind


def test_download_falls_back_to_the_next_mirror(fake_server, tmp_path: Path) -> None:
    body = gzip.compress(b"payload")
    requested = fake_server(
        responses=[(b"<html>503 Slow Down</html>", 200, {}), (body, 200, {})]
    )
    path = data.ensure_file(_entry(body), tmp_path)
    assert path.read_bytes() == body and len(requested) == 2


@pytest.mark.parametrize(
    ("body", "status", "headers", "reason"),
    [
        (b"<!DOCTYPE html><html>403 Forbidden</html>", 200, {}, "HTML"),
        (b"\x1f\x8b whatever", 200, {"Content-Type": "text/html"}, "HTML"),
        (b"\x1f\x8b whatever", 404, {}, "HTTP status 404"),
        (b"\x1f\x8b short", 200, {"Content-Length": "999"}, "truncated"),
        (b"BZh9 not gzip", 200, {}, "expected bytes"),
        (b"", 200, {}, "empty"),
    ],
)
def test_download_refuses_bad_responses(
    fake_server, tmp_path: Path, body: bytes, status: int, headers: dict, reason: str
) -> None:
    requested = fake_server(body, status, headers)
    info = _entry(gzip.compress(b"the real file"))
    with pytest.raises(data.DataNotFoundError) as err:
        data.ensure_file(info, tmp_path)
    msg = str(err.value)
    assert reason in msg and "DPNOTES_DATA_DIR" in msg and info.relpath in msg
    assert requested == list(info.urls)  # every mirror was tried
    assert _leftovers(tmp_path / "mnist") == []  # nothing at the final path, no .part


def test_download_with_wrong_hash_is_refused(fake_server, tmp_path: Path) -> None:
    fake_server(gzip.compress(b"a different version"))
    info = _entry(gzip.compress(b"the real file"), size=None)
    with pytest.raises(data.DataNotFoundError, match="failed verification"):
        data.ensure_file(info, tmp_path)
    assert _leftovers(tmp_path / "mnist") == []


def _zip_bytes(members: dict[str, bytes]) -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in members.items():
            zf.writestr(name, content)
    return buffer.getvalue()


def test_download_extracts_archive_member(fake_server, tmp_path: Path) -> None:
    csv = b"RT,SERIALNO,ST\nP,1,50\n"
    requested = fake_server(_zip_bytes({"psam_p50.csv": csv, "README.pdf": b"%PDF"}))
    info = data.acs_person_file("VT", 2018)
    path = data.ensure_file(info, tmp_path)
    assert path.read_bytes() == csv
    assert requested == [
        "https://www2.census.gov/programs-surveys/acs/data/pums/2018/1-Year/csv_pvt.zip"
    ]
    assert _leftovers(path.parent) == ["psam_p50.csv"]  # the zip itself is not kept


def test_download_archive_without_member_fails(fake_server, tmp_path: Path) -> None:
    fake_server(_zip_bytes({"other.csv": b"x"}))
    with pytest.raises(data.DataNotFoundError, match=r"no member 'psam_p50\.csv'"):
        data.ensure_file(data.acs_person_file("VT", 2018), tmp_path)


def test_download_corrupt_archive_fails(fake_server, tmp_path: Path) -> None:
    fake_server(b"PK\x03\x04 this is not really a zip")
    with pytest.raises(data.DataNotFoundError, match="not a valid zip"):
        data.ensure_file(data.acs_person_file("VT", 2018), tmp_path)
    assert _leftovers(tmp_path / "acs" / "2018" / "1-Year") == []


def test_census_html_saved_as_zip_is_refused(fake_server, tmp_path: Path) -> None:
    # What folktables' own downloader would have saved as csv_pvt.zip.
    fake_server(b"<html><body>Access Denied</body></html>", 200, {})
    with pytest.raises(data.DataNotFoundError, match="HTML"):
        data.load_acs_person("VT", 2018, root=tmp_path)
