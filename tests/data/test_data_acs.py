"""ACS person files and folktables tasks, end to end on tiny files."""

from __future__ import annotations

import dataclasses
import hashlib
import random
from pathlib import Path

import folktables
import numpy as np
import pandas as pd
import pytest

import dpnotes.data as data
from dpnotes.data import files as _files

# Every column that folktables' predefined problems read (features, targets, filters).
_NEEDED = sorted(
    {c for t in data.ACS_TASKS for c in getattr(folktables, t).features}
    | {getattr(folktables, t).target for t in data.ACS_TASKS}
    | {"AGEP", "PINCP", "WKHP", "PWGTP", "ESR", "RAC1P"}
)
_HEADER = ["RT", "SERIALNO", "DIVISION", "SPORDER", *_NEEDED]


def _pums_frame(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({c: rng.integers(1, 6, size=n) for c in _NEEDED})
    frame["AGEP"] = rng.integers(0, 95, size=n)
    frame["PINCP"] = rng.integers(0, 120_000, size=n)
    frame["WKHP"] = rng.integers(0, 60, size=n)
    frame["PWGTP"] = rng.integers(1, 200, size=n)
    frame["ESR"] = rng.integers(1, 7, size=n)
    frame["JWMNP"] = rng.integers(1, 90, size=n)
    frame["POVPIP"] = rng.integers(0, 501, size=n)
    frame["RAC1P"] = rng.integers(1, 10, size=n)
    # Blank cells as in real PUMS files (ESR of children); Int64 writes them as "".
    frame["ESR"] = frame["ESR"].astype("Int64")
    frame.loc[::7, "ESR"] = pd.NA
    frame.insert(0, "RT", "P")
    frame.insert(1, "SERIALNO", [f"2018HU{i:07d}" for i in range(n)])
    frame.insert(2, "DIVISION", 8)
    frame.insert(3, "SPORDER", 1)
    return frame


def _write_pums(root: Path, code: str = "50", year: int = 2018, **kw) -> Path:
    path = root / "acs" / str(year) / "1-Year" / f"psam_p{code}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    _pums_frame(**kw).to_csv(path, index=False)
    return path


def test_load_acs_person_reads_tiny_file(tmp_path: Path) -> None:
    _write_pums(tmp_path, n=40)
    frame = data.load_acs_person("vt", 2018, root=tmp_path)  # case-insensitive
    assert frame.shape == (40, len(_HEADER))
    assert list(frame.columns) == _HEADER
    assert frame["SERIALNO"].iloc[3] == "2018HU0000003"


def test_load_acs_person_uses_env_root(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _write_pums(tmp_path, n=5)
    monkeypatch.setenv("DPNOTES_DATA_DIR", str(tmp_path))
    assert len(data.load_acs_person(" Vt ")) == 5


def test_load_acs_person_keeps_global_random_state(tmp_path: Path) -> None:
    _write_pums(tmp_path, n=5)
    random.seed(1234)
    expected = random.random()
    random.seed(1234)
    data.load_acs_person("VT", root=tmp_path)  # folktables calls random.seed inside
    assert random.random() == expected


def test_load_acs_task_employment_matches_folktables_definition(tmp_path: Path) -> None:
    _write_pums(tmp_path, n=60, seed=3)
    raw = pd.read_csv(tmp_path / "acs/2018/1-Year/psam_p50.csv")
    features, label, group = data.load_acs_task("ACSEmployment", "VT", root=tmp_path)
    assert list(features.columns) == folktables.ACSEmployment.features
    assert features.shape == (60, 16) and label.shape == (60,) and group.shape == (60,)
    assert label.name == "ESR" and group.name == "RAC1P"
    np.testing.assert_array_equal(label.to_numpy(), (raw["ESR"] == 1).to_numpy())
    np.testing.assert_array_equal(group.to_numpy(), raw["RAC1P"].to_numpy())
    np.testing.assert_array_equal(features["AGEP"].to_numpy(), raw["AGEP"].to_numpy())
    assert features.index.equals(label.index) and label.index.equals(group.index)


@pytest.mark.parametrize("task", data.ACS_TASKS)
def test_every_task_runs_and_is_aligned(tmp_path: Path, task: str) -> None:
    _write_pums(tmp_path, n=80, seed=1)
    result = data.load_acs_task(task, "VT", root=tmp_path)
    assert isinstance(result, data.ACSTaskData)
    features, label, group = result
    problem = getattr(folktables, task)
    assert list(features.columns) == problem.features
    assert 0 < len(features) == len(label) == len(group) <= 80
    assert label.dtype == bool


def test_unknown_state_task_year(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown state.*'NM'.*'PR'"):
        data.load_acs_person("XX", root=tmp_path)
    with pytest.raises(ValueError, match=r"unknown task 'ACSEmploy'.*'ACSEmployment'"):
        data.load_acs_task("ACSEmploy", "NM", root=tmp_path)
    with pytest.raises(ValueError, match="year must be at least 2014"):
        data.load_acs_person("NM", 2012, root=tmp_path)
    with pytest.raises(TypeError, match="postal code"):
        data.load_acs_person(35, root=tmp_path)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="year"):
        data.load_acs_person("NM", "2018", root=tmp_path)  # type: ignore[arg-type]


def test_state_list_matches_folktables() -> None:
    from folktables.load_acs import _STATE_CODES

    assert list(data.ACS_STATES) == list(folktables.state_list)
    assert data.ACS_STATE_CODES == _STATE_CODES


def test_acs_person_file_layout() -> None:
    info = data.acs_person_file("ny")
    assert info is data.file_info("acs/2018/1-Year/psam_p36.csv")  # pinned
    vt = data.acs_person_file("VT", 2019)
    assert vt.relpath == "acs/2019/1-Year/psam_p50.csv" and vt.sha256 is None
    assert vt.urls == (
        "https://www2.census.gov/programs-surveys/acs/data/pums/2019/1-Year/csv_pvt.zip",
    )
    assert data.acs_person_file("VT", 2016).relpath == "acs/2016/1-Year/ss16pvt.csv"


def test_offline_missing_acs_file(tmp_path: Path) -> None:
    with pytest.raises(data.DataNotFoundError) as err:
        data.load_acs_person("VT", root=tmp_path)
    msg = str(err.value)
    for part in ("acs/2018/1-Year/psam_p50.csv", "csv_pvt.zip", "DPNOTES_DATA_DIR"):
        assert part in msg


def _replace_file(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda b: b"<!DOCTYPE html>\n<html><body>Forbidden</body></html>\n", "HTML"),
        (lambda b: b"", "empty"),
        (lambda b: b"  \n", "empty"),
        (lambda b: b"SOMETHING,ELSE\n1,2\n", "RT,SERIALNO"),
        (lambda b: b[:-9], "does not end with a line break"),
        (lambda b: b + b"P,2018HU9,8,1\n", "last line has 4 fields"),
        (lambda b: b.split(b"\n", 1)[0] + b"\n", "no person records"),
    ],
    ids=["html", "empty", "blank", "header", "cut", "short-row", "header-only"],
)
def test_bad_pums_files_are_refused(tmp_path: Path, mutate, match: str) -> None:
    path = _write_pums(tmp_path, n=10)
    _replace_file(path, mutate(path.read_bytes()))
    with pytest.raises(ValueError, match=match):
        data.load_acs_person("VT", root=tmp_path)


def test_pinned_acs_file_with_wrong_hash(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = _write_pums(tmp_path, n=10)
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    pinned = dataclasses.replace(data.acs_person_file("VT"), sha256="ab" * 32)
    monkeypatch.setitem(_files._REGISTRY, pinned.relpath, pinned)
    with pytest.raises(data.DataIntegrityError) as err:
        data.load_acs_person("VT", root=tmp_path)
    assert "ab" * 32 in str(err.value) and actual in str(err.value)
    assert "delete it" in str(err.value)


def test_known_state_file_of_wrong_size(tmp_path: Path) -> None:
    _write_pums(tmp_path, code="35", n=10)
    with pytest.raises(ValueError, match=r"13,442,944"):
        data.load_acs_person("NM", root=tmp_path)


# ----------------------------------------------------------------------- extracts


_EXTRACT_COLUMNS = [*folktables.ACSEmployment.features, "ESR"]


def _write_extract(root: Path, n: int = 12) -> Path:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({c: rng.integers(0, 5, size=n) for c in _EXTRACT_COLUMNS})
    path = root / "acs" / "extracts" / "ACSEmployment_NY_2018_sample20000.csv"
    path.parent.mkdir(parents=True)
    frame.to_csv(path, index=False)
    return path


def test_load_acs_extract_tiny(unpin, tmp_path: Path) -> None:
    unpin("acs/extracts/ACSEmployment_NY_2018_sample20000.csv")
    _write_extract(tmp_path, n=12)
    frame = data.load_acs_extract(root=tmp_path)
    assert frame.shape == (12, 17) and set(frame.columns) == set(_EXTRACT_COLUMNS)


def test_load_acs_extract_errors(unpin, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown ACS extract name.*sample20000"):
        data.load_acs_extract("ACSIncome_CA", root=tmp_path)
    with pytest.raises(data.DataNotFoundError, match=r"folk_employment_NY_2018\.csv"):
        data.load_acs_extract(root=tmp_path)
    unpin("acs/extracts/ACSEmployment_NY_2018_sample20000.csv")
    path = _write_extract(tmp_path)
    path.write_text(path.read_text().replace("ESR", "XYZ", 1))
    with pytest.raises(ValueError, match=r"missing columns \['ESR'\]"):
        data.load_acs_extract(root=tmp_path)
    path.write_text(path.read_text().replace("XYZ", "ESR", 1).rsplit(",", 3)[0] + "\n")
    with pytest.raises(ValueError, match="empty cells"):
        data.load_acs_extract(root=tmp_path)
