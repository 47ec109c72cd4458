"""The spending paper's three tasks: codebook, encoding, groups, split, Tables 3-5.

The fast tests run on tiny person files written here; the tests marked ``data`` read
the real New Mexico file and the New York sample (and skip without them).
"""

from __future__ import annotations

import time
from pathlib import Path

import folktables
import numpy as np
import pandas as pd
import pytest

import dpnotes.data as data
from dpnotes import paper_numbers as pn
from dpnotes.data import spending as sp
from dpnotes.synth.codebook import Codebook
from dpnotes.synth.domain import check_data

# --------------------------------------------------------------- tiny person files

_PUMS_COLUMNS = sorted(
    {c for t in sp.SPENDING_TASKS for c in getattr(folktables, t).features}
    | {"PUBCOV", "PINCP", "AGEP"}
)


def _pums_frame(n: int, seed: int) -> pd.DataFrame:
    """Random person records whose every value is in the public codebook."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({c: rng.integers(1, 3, size=n) for c in _PUMS_COLUMNS})
    for column, values in sp.SPENDING_CODEBOOK.items():
        frame[column] = rng.choice(values, size=n)
    frame["AGEP"] = rng.integers(0, 95, size=n)
    frame["PINCP"] = rng.integers(0, 60_000, size=n)
    frame["PUBCOV"] = rng.integers(1, 3, size=n)
    frame["MIG"] = frame["MIG"].where(frame["MIG"] > 0, 1)
    # Blank cells where the dictionary has "N/A" (0 after folktables' NaN -> 0).
    for column in ("ESP", "MIL", "DREM", "COW", "ESR", "FER"):
        frame[column] = frame[column].astype("Int64").mask(frame[column] == 0)
    frame.insert(0, "RT", "P")
    frame.insert(1, "SERIALNO", [f"2018HU{i:07d}" for i in range(n)])
    return frame


def _write(root: Path, frame: pd.DataFrame) -> Path:
    path = root / "acs" / "2018" / "1-Year" / "psam_p50.csv"  # Vermont, unpinned
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return path


@pytest.fixture
def vermont(tmp_path: Path) -> tuple[Path, pd.DataFrame]:
    frame = _pums_frame(400, seed=5)
    _write(tmp_path, frame)
    return tmp_path, frame


# ----------------------------------------------------------------- codebook, domain


def test_feature_sets_are_the_papers_and_come_from_folktables() -> None:
    for task in sp.SPENDING_TASKS:
        problem = getattr(folktables, task)
        assert set(sp.SPENDING_FEATURES[task]) <= set(problem.features)
        assert sp.SPENDING_TARGETS[task] == problem.target
    assert len(sp.SPENDING_FEATURES["ACSEmployment"]) == 13
    assert len(sp.SPENDING_FEATURES["ACSPublicCoverage"]) == 15
    assert len(sp.SPENDING_FEATURES["ACSMobility"]) == 13
    # The printed columns of Tables 3-5 are exactly the features and the target.
    for task, dataset in (
        ("ACSEmployment", "ACSEmployment-CA"),
        ("ACSMobility", "ACSMobility-NM"),
        ("ACSPublicCoverage", "ACSPublicCoverage-NM"),
    ):
        printed = [acs for _, acs in pn.SPENDING_DESCRIPTION_COLUMNS[dataset]]
        assert printed == [*sp.SPENDING_FEATURES[task], sp.SPENDING_TARGETS[task]]


def test_codebook_and_domain() -> None:
    for column, values in sp.SPENDING_CODEBOOK.items():
        assert list(values) == sorted(set(values)), column
        assert len(sp.SPENDING_VALUE_LABELS[column]) == len(values), column
    mob = sp.spending_domain("ACSMobility")
    assert list(mob) == [*sp.SPENDING_FEATURES["ACSMobility"], "MIG"]
    assert mob["MIG"] == 2 and mob["COW"] == 10 and mob["ESR"] == 7
    assert sp.spending_domain("ACSPublicCoverage")["MIG"] == 4
    assert sp.spending_domain("ACSEmployment")["ANC"] == 5  # 8 = suppressed
    with pytest.raises(ValueError, match="unknown task 'ACSIncome'"):
        sp.spending_domain("ACSIncome")
    with pytest.raises(TypeError, match="task must be a string"):
        sp.spending_codebook(3)  # type: ignore[arg-type]


def test_groupings_are_public_partitions_of_every_race_code() -> None:
    for name, groups in sp.SPENDING_GROUPINGS.items():
        members = [v for g in groups.values() for v in g]
        assert sorted(members) == list(sp.SPENDING_CODEBOOK["RAC1P"]), name
        assert groups["white"] == (1,) and groups["black"] == (2,)


# ------------------------------------------------------------------------ encoding


def test_encoding_agrees_with_the_synthesizers_codebook(vermont) -> None:
    root, _ = vermont
    for task in sp.SPENDING_TASKS:
        raw = sp.load_spending_raw(task, "VT", root=root)
        codes = sp.encode_spending(raw, task)
        book = Codebook(categories=sp.spending_codebook(task))
        pd.testing.assert_frame_equal(codes, book.encode(raw))
        checked = check_data(codes, sp.spending_domain(task))
        pd.testing.assert_frame_equal(checked, codes)


def test_raw_frame_follows_folktables(vermont) -> None:
    root, frame = vermont
    raw = sp.load_spending_raw("ACSMobility", "vt", root=root)
    kept = frame[(frame["AGEP"] > 18) & (frame["AGEP"] < 35)]
    assert len(raw) == len(kept) > 0
    np.testing.assert_array_equal(raw["MIG"], (kept["MIG"] == 1).astype(int))
    np.testing.assert_array_equal(raw["COW"], kept["COW"].fillna(0).astype(int))
    assert list(raw.dtypes.unique()) == [np.dtype("int64")]
    pub = sp.load_spending_raw("ACSPublicCoverage", "VT", root=root)
    assert len(pub) == int(((frame["AGEP"] < 65) & (frame["PINCP"] <= 30000)).sum())
    assert sp.load_spending_raw("ACSEmployment", "VT", root=root).shape == (400, 14)


def test_encode_refuses_bad_input() -> None:
    raw = pd.DataFrame(
        {c: [v[0]] for c, v in sp.spending_codebook("ACSMobility").items()}
    )
    assert sp.encode_spending(raw, "ACSMobility").iloc[0].sum() == 0
    with pytest.raises(ValueError, match=r"missing column\(s\) \['COW'\]"):
        sp.encode_spending(raw.drop(columns="COW"), "ACSMobility")
    with pytest.raises(ValueError, match=r"'ANC' has 1 value\(s\) \[7\].*codebook"):
        sp.encode_spending(raw.assign(ANC=7), "ACSMobility")
    with pytest.raises(ValueError, match="not integer codes"):
        sp.encode_spending(raw.assign(MAR=1.5), "ACSMobility")
    with pytest.raises(ValueError, match="not integer codes"):
        sp.encode_spending(raw.assign(MAR=np.nan), "ACSMobility")
    with pytest.raises(TypeError, match="DataFrame"):
        sp.encode_spending(raw.to_numpy(), "ACSMobility")  # type: ignore[arg-type]


# ------------------------------------------------------------- task, split, groups


def test_task_split_is_fixed_disjoint_and_covers_every_row(vermont) -> None:
    root, _ = vermont
    task = sp.load_spending_task("ACSEmployment", "VT", root=root)
    n = len(task.data)
    parts = [task.train_rows, task.holdout_rows, task.test_rows]
    assert sorted(np.concatenate(parts).tolist()) == list(range(n))
    assert len(task.test_rows) == 80 and len(task.holdout_rows) == 0
    again = sp.load_spending_task("ACSEmployment", "VT", root=root)
    np.testing.assert_array_equal(task.test_rows, again.test_rows)
    other = sp.load_spending_task("ACSEmployment", "VT", seed=1, root=root)
    assert not np.array_equal(task.test_rows, other.test_rows)
    # A holdout is cut from the training part; the test part stays the same.
    held = sp.load_spending_task("ACSEmployment", "VT", holdout_share=0.1, root=root)
    np.testing.assert_array_equal(held.test_rows, task.test_rows)
    assert len(held.holdout_rows) == 40
    assert set(held.holdout_rows) | set(held.train_rows) == set(task.train_rows)
    assert not set(held.holdout_rows) & set(held.train_rows)
    pd.testing.assert_frame_equal(
        task.train, task.data.iloc[task.train_rows].reset_index(drop=True)
    )
    small = sp.load_spending_task("ACSEmployment", "VT", rows=50, root=root)
    assert len(small.train) + len(small.test) == 50


def test_task_fields_and_groups(vermont) -> None:
    root, frame = vermont
    task = sp.load_spending_task("ACSEmployment", "VT", root=root)
    assert task.target == "ESR" and task.sensitive == "RAC1P"
    assert task.features == sp.SPENDING_FEATURES["ACSEmployment"]
    assert dict(task.groups) == {
        "white": (0,),
        "black": (1,),
        "other": tuple(range(2, 9)),
    }
    assert task.protected == "black"
    names = task.group_of(task.data)
    expected = np.select(
        [frame["RAC1P"] == 1, frame["RAC1P"] == 2], ["white", "black"], "other"
    )
    np.testing.assert_array_equal(names.to_numpy(), expected)
    four = sp.load_spending_task(
        "ACSEmployment", "VT", grouping="white_black_aian_other", root=root
    )
    assert set(four.group_of(four.test)) <= {"white", "black", "aian", "other"}
    assert four.groups["aian"] == (2, 3, 4)
    with pytest.raises(ValueError, match=r"outside 0\.\.8"):
        task.group_of(pd.DataFrame({"RAC1P": [9]}))
    with pytest.raises(ValueError, match=r"missing column\(s\) \['RAC1P'\]"):
        task.group_of(pd.DataFrame({"SEX": [0]}))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"task": "ACSIncome"}, ValueError, "unknown task 'ACSIncome'"),
        ({"source": "XX"}, ValueError, "unknown source 'XX'.*'NM'"),
        ({"source": 35}, TypeError, "source must be a two-letter state code"),
        ({"task": "ACSMobility", "source": "NY-sample"}, ValueError, "Employment only"),
        ({"test_share": 1.0}, ValueError, r"test_share must be in \(0, 1\)"),
        ({"holdout_share": -0.1}, ValueError, r"holdout_share must be in \[0, 1\)"),
        ({"test_share": 0.5, "holdout_share": 0.5}, ValueError, "no training rows"),
        ({"seed": -1}, ValueError, "seed must be at least 0"),
        ({"seed": 1.5}, TypeError, "seed must be an integer"),
        ({"grouping": "race"}, ValueError, "unknown grouping 'race'"),
    ],
)
def test_bad_arguments_fail_before_reading(
    tmp_path: Path, kwargs: dict, error: type, match: str
) -> None:
    args = {"task": "ACSEmployment", "source": "VT"} | kwargs
    task, source = args.pop("task"), args.pop("source")
    # tmp_path holds no file: an argument error must come before the missing file.
    with pytest.raises(error, match=match):
        sp.load_spending_task(task, source, root=tmp_path, **args)


def test_missing_and_corrupt_files(tmp_path: Path) -> None:
    with pytest.raises(data.DataNotFoundError, match=r"psam_p50\.csv"):
        sp.load_spending_task("ACSMobility", "VT", root=tmp_path)
    with pytest.raises(data.DataNotFoundError, match="folk_employment_NY_2018"):
        sp.load_spending_task("ACSEmployment", "NY-sample", root=tmp_path)
    path = _write(tmp_path, _pums_frame(30, seed=1))
    path.write_text("<!DOCTYPE html><html>Forbidden</html>\n")
    with pytest.raises(ValueError, match="HTML"):
        sp.load_spending_task("ACSMobility", "VT", root=tmp_path)
    # A column dropped from the file: folktables cannot build the task.
    _write(tmp_path, _pums_frame(30, seed=1).drop(columns="COW"))
    with pytest.raises(data.DataIntegrityError, match=r"lacks column\(s\) \[.COW.\]"):
        sp.load_spending_task("ACSMobility", "VT", root=tmp_path)
    # A value outside the dictionary (a newer survey year, a shifted column).
    _write(tmp_path, _pums_frame(30, seed=1).assign(ANC=7))
    with pytest.raises(ValueError, match=r"'ANC' has 30 value\(s\) \[7\]"):
        sp.load_spending_task("ACSEmployment", "VT", root=tmp_path)
    # Nobody passes folktables' filter.
    _write(tmp_path, _pums_frame(30, seed=1).assign(AGEP=70))
    with pytest.raises(ValueError, match="no rows after folktables' filter"):
        sp.load_spending_task("ACSPublicCoverage", "VT", root=tmp_path)


def test_new_york_sample_extract(unpin, tmp_path: Path) -> None:
    unpin("acs/extracts/ACSEmployment_NY_2018_sample20000.csv")
    rng = np.random.default_rng(0)
    columns = [*folktables.ACSEmployment.features, "ESR"]
    frame = pd.DataFrame({c: rng.integers(1, 3, size=20) for c in columns})
    frame["ESR"] = rng.integers(0, 2, size=20)
    path = tmp_path / "acs" / "extracts" / "ACSEmployment_NY_2018_sample20000.csv"
    path.parent.mkdir(parents=True)
    frame.to_csv(path, index=False)
    task = sp.load_spending_task("ACSEmployment", "NY-sample", root=tmp_path)
    assert task.source == "NY-sample" and task.data.shape == (20, 14)
    np.testing.assert_array_equal(task.raw["ESR"], frame["ESR"])
    frame.assign(ESR=2).to_csv(path, index=False)
    with pytest.raises(ValueError, match="not 0/1"):
        sp.load_spending_task("ACSEmployment", "NY-sample", root=tmp_path)


# -------------------------------------------------------------------- description


def test_describe_and_compare_on_a_known_frame() -> None:
    raw = pd.DataFrame({c: [v[-1], v[0], v[-1]] for c, v in
                        sp.spending_codebook("ACSMobility").items()})  # fmt: skip
    table = sp.describe_spending(raw, "ACSMobility")
    assert table.loc["count", "MAR"] == 3 and table.loc["max", "COW"] == 9
    assert table.loc["mean", "MAR"] == pytest.approx(11 / 3)
    # By order of appearance the first value seen becomes 0: MAR 5 -> 0, 1 -> 1.
    recoded = sp.describe_spending(raw, "ACSMobility", recode="appearance")
    assert recoded.loc["mean", "MAR"] == pytest.approx(1 / 3)
    assert recoded.loc["mean", "MIG"] == table.loc["mean", "MIG"]  # target kept
    printed = {"MAR": {"mean": 0.33, "max": 1.0}, "COW": {"mean": 0.34}}
    result = sp.compare_description(recoded, printed)
    assert result["match"].tolist() == [True, True, False]
    assert list(result.columns) == ["column", "statistic", "printed", "ours", "match"]
    # Printed tables round half away from zero.
    half = pd.DataFrame({"A": [0.125, -0.125, 0.135]}, index=["a", "b", "c"])
    got = sp.compare_description(half, {"A": {"a": 0.13, "b": -0.13, "c": 0.14}})
    assert got["match"].all()
    with pytest.raises(ValueError, match="printed column 'XYZ'"):
        sp.compare_description(table, {"XYZ": {"mean": 1.0}})
    with pytest.raises(ValueError, match="printed statistic 'median'"):
        sp.compare_description(table, {"MAR": {"median": 1.0}})
    with pytest.raises(ValueError, match="unknown recode 'order'"):
        sp.describe_spending(raw, "ACSMobility", recode="order")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"missing column\(s\) \['MIG'\]"):
        sp.describe_spending(raw.drop(columns="MIG"), "ACSMobility")
    with pytest.raises(ValueError, match="no rows"):
        sp.describe_spending(raw.iloc[:0], "ACSMobility")


# -------------------------------------------------------------- the real data sets


@pytest.mark.data
def test_row_counts_and_groups_on_the_real_files(real_root: Path) -> None:
    sizes = {}
    for task, source, rows in (
        ("ACSMobility", "NM", 3443),
        ("ACSPublicCoverage", "NM", 7693),
        ("ACSEmployment", "NM", 19247),
        ("ACSEmployment", "NY-sample", 20000),
    ):
        loaded = sp.load_spending_task(task, source, root=real_root)
        assert len(loaded.data) == len(loaded.raw) == rows, (task, source)
        assert len(loaded.test) == round(0.2 * rows)
        checked = check_data(loaded.data, loaded.domain)
        pd.testing.assert_frame_equal(checked, loaded.data)
        sizes[task, source] = loaded.group_of(loaded.data).value_counts().to_dict()
    assert sizes["ACSMobility", "NM"] == {"white": 2313, "other": 1029, "black": 101}
    assert sizes["ACSPublicCoverage", "NM"]["black"] == 167
    assert sizes["ACSEmployment", "NM"]["black"] == 342
    assert sizes["ACSEmployment", "NY-sample"]["black"] == 2436


@pytest.mark.data
@pytest.mark.parametrize(
    ("task", "dataset"),
    [("ACSMobility", "ACSMobility-NM"), ("ACSPublicCoverage", "ACSPublicCoverage-NM")],
)
def test_tables_4_and_5_are_reproduced_exactly(
    real_root: Path, task: str, dataset: str
) -> None:
    raw = sp.load_spending_raw(task, "NM", root=real_root)
    ours = sp.describe_spending(raw, task, recode="appearance")
    printed = pn.spending_description(dataset)
    result = sp.compare_description(ours, printed.to_dict())
    columns = len(pn.SPENDING_DESCRIPTION_COLUMNS[dataset])
    assert len(result) == 8 * columns  # count and the seven printed rows
    assert result["match"].all(), result[~result["match"]]
    # Without the authors' recoding the raw values do not give the tables.
    plain = sp.compare_description(sp.describe_spending(raw, task), printed.to_dict())
    assert not plain["match"].all()


@pytest.mark.data
def test_load_times(real_root: Path) -> None:
    sp.load_spending_task("ACSMobility", "NM", root=real_root)  # imports folktables
    start = time.perf_counter()
    for task in sp.SPENDING_TASKS:
        sp.load_spending_task(task, "NM", root=real_root)
    assert time.perf_counter() - start < 10.0
