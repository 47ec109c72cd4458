"""Adult and Dutch loaders on tiny files that reproduce the originals' quirks."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import dpnotes.data as data

ADULT_TRAIN = """\
39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, \
White, Male, 2174, 0, 40, United-States, <=50K
50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, \
Husband, White, Male, 0, 0, 13, United-States, <=50K
38, ?, 215646, HS-grad, 9, Divorced, ?, Not-in-family, White, Female, 0, 0, 40, ?, >50K

"""

ADULT_TEST = """\
|1x3 Cross validator
25, Private, 226802, 11th, 7, Never-married, Machine-op-inspct, Own-child, Black, \
Male, 0, 0, 40, United-States, <=50K.
38, Private, 89814, HS-grad, 9, Married-civ-spouse, Farming-fishing, Husband, White, \
Male, 0, 0, 50, Peru, >50K.

"""


@pytest.fixture
def adult_root(unpin, tmp_path: Path) -> Path:
    unpin("adult/adult.data")
    unpin("adult/adult.test")
    (tmp_path / "adult").mkdir()
    (tmp_path / "adult" / "adult.data").write_text(ADULT_TRAIN)
    (tmp_path / "adult" / "adult.test").write_text(ADULT_TEST)
    return tmp_path


def test_load_adult_quirks(adult_root: Path) -> None:
    train, test = data.load_adult(adult_root)
    assert train.shape == (3, 15) and test.shape == (2, 15)
    assert tuple(train.columns) == data.ADULT_COLUMNS == tuple(test.columns)
    assert train["income"].tolist() == ["<=50K", "<=50K", ">50K"]
    assert test["income"].tolist() == ["<=50K", ">50K"]  # trailing dots removed
    assert test["age"].tolist() == [25, 38]  # the "|1x3" line is not a record
    assert train["workclass"].iloc[0] == "State-gov"  # whitespace stripped
    for col in data.ADULT_NUMERIC:
        assert train[col].dtype == "int64"
    for col in data.ADULT_CATEGORICAL:
        assert isinstance(train[col].dtype, pd.CategoricalDtype)
        assert train[col].dtype == test[col].dtype  # same categories in both splits
    assert list(train["income"].cat.categories) == ["<=50K", ">50K"]
    # "?" is missing, never a category
    assert train.loc[2, ["workclass", "occupation", "native-country"]].isna().all()
    assert "?" not in train["workclass"].cat.categories
    assert "Peru" in train["native-country"].cat.categories


def test_load_adult_dropna(adult_root: Path) -> None:
    train, test = data.load_adult(adult_root, dropna=True)
    assert len(train) == 2 and len(test) == 2
    assert train.index.tolist() == [0, 1]
    assert not train.isna().any().any()
    with pytest.raises(TypeError, match="dropna"):
        data.load_adult(adult_root, dropna="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("<html><head><title>404</title></head></html>\n", "HTML page"),
        (ADULT_TRAIN.strip()[:-9] + "\n", "truncated or not the UCI Adult"),
        (ADULT_TRAIN.replace("39,", "thirty-nine,", 1), "non-numeric 'age'"),
        (ADULT_TRAIN.replace("<=50K", "maybe", 1), "has income 'maybe'"),
    ],
    ids=["html", "cut-line", "bad-number", "bad-label"],
)
def test_load_adult_bad_files(adult_root: Path, content: str, match: str) -> None:
    (adult_root / "adult" / "adult.data").write_text(content)
    with pytest.raises(ValueError, match=match):
        data.load_adult(adult_root)


def test_load_adult_offline_missing(tmp_path: Path) -> None:
    with pytest.raises(data.DataNotFoundError, match=r"adult\.data.*DPNOTES_DATA_DIR"):
        data.load_adult(tmp_path)


ARFF = """\
@relation dutch_census_data-tiny
% a comment line
@attribute sex {2,1}
@attribute age {17,15,16,13,14,11,12,3,2,1,10,7,6,5,4,9,8}
@attribute household_position {1110,1132,1210,1131,1121,1140,1122,1220}
@attribute household_size {125,126,114,112,113,111}
@attribute prev_residence_place {2,1,9}
@attribute citizenship {3,2,1}
@attribute country_birth {3,2,1}
@attribute edu_level {3,2,1,0,5,4,9}
@attribute economic_status {221,222,210,223,112,224,111,120}
@attribute cur_eco_activity {134,135,132,133,138,122,139,200,136,137,124,111,131}
@attribute Marital_status {3,2,1,4}
@attribute occupation {5_4_9,2_1}

@data

1,6,1131,112,1,1,1,5,111,135,1,2_1
2,10,1122,113,1,1,1,2,111,122,2,5_4_9
1,8,1122,113,1,1,1,2,111,122,2,2_1
"""


# A well-formed ARFF that lacks the sex attribute (declaration and values).
_NO_SEX = (
    ARFF.replace("@attribute sex {2,1}\n", "")
    .replace("\n1,", "\n")
    .replace("\n2,", "\n")
)


@pytest.fixture
def dutch_root(unpin, tmp_path: Path) -> Path:
    unpin("dutch/dutch_census_2001.arff")
    (tmp_path / "dutch").mkdir()
    (tmp_path / "dutch" / "dutch_census_2001.arff").write_text(ARFF)
    return tmp_path


def test_load_dutch_tiny(dutch_root: Path) -> None:
    frame = data.load_dutch(dutch_root)
    assert frame.shape == (3, 12) and tuple(frame.columns) == data.DUTCH_COLUMNS
    assert frame["sex"].tolist() == ["1", "2", "1"]  # original codes, as strings
    assert list(frame["sex"].cat.categories) == ["1", "2"]  # integer codes sorted
    assert list(frame["age"].cat.categories) == [str(i) for i in range(1, 18)]
    assert list(frame["occupation"].cat.categories) == ["5_4_9", "2_1"]  # as declared
    assert frame["occupation"].tolist() == ["2_1", "5_4_9", "2_1"]


def _write_arff(root: Path, text: str) -> None:
    (root / "dutch" / "dutch_census_2001.arff").write_text(text)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("<!doctype html><html></html>", "HTML page"),
        (ARFF + "1,6,1131,112,1,1\n", "has 6 fields, expected 12"),
        (ARFF.replace("1,8,1122,113", "3,8,1122,113"), r"'sex' has values \['3'\]"),
        (ARFF.split("@data")[0], "no ARFF header"),
        (ARFF.replace("{2,1}", "numeric", 1), "only nominal attributes"),
        (_NO_SEX, "not the Dutch census"),
        ("hello\n" + ARFF, "is not ARFF"),
    ],
    ids=["html", "cut", "undeclared", "no-data", "numeric", "columns", "junk"],
)
def test_load_dutch_bad_files(dutch_root: Path, text: str, match: str) -> None:
    _write_arff(dutch_root, text)
    with pytest.raises(ValueError, match=match):
        data.load_dutch(dutch_root)


def test_read_arff_missing_values_and_quotes(tmp_path: Path) -> None:
    path = tmp_path / "x.arff"
    path.write_text(
        "@RELATION r\n@ATTRIBUTE 'a b' {'x y',z}\n@attribute c {1,2}\n@DATA\n"
        "'x y',1\n?,2\n% trailing comment\n"
    )
    frame = data.read_arff(path)
    assert list(frame.columns) == ["a b", "c"]
    assert frame["a b"].iloc[0] == "x y" and pd.isna(frame["a b"].iloc[1])


def test_load_dutch_offline_missing(tmp_path: Path) -> None:
    with pytest.raises(data.DataNotFoundError) as err:
        data.load_dutch(tmp_path)
    assert "tailequy/fairness_dataset" in str(err.value)
