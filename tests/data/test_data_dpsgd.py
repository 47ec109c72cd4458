"""The DPSGD-F data sets: public encoding rules, splits, and the real files' counts."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpnotes.data as data
from dpnotes.data.adult import (
    ADULT_DOMAIN,
    ADULT_NUMERIC_BOUNDS,
    encode_adult,
    load_adult_split,
)
from dpnotes.data.dpsgdf import load_grouped_split
from dpnotes.data.dutch import DUTCH_DOMAIN, encode_dutch, load_dutch_split
from dpnotes.data.splits import GroupedSplit
from dpnotes.data.unbalanced_mnist import load_unbalanced_mnist, unbalanced_indices

# Read at import, like the conftest: its autouse fixture unsets the variable per test,
# and the real data are loaded once per module below.
REAL_DATA_DIR = os.environ.get(data.ENV_DATA_DIR, "").strip()
needs_real_data = pytest.mark.skipif(
    not REAL_DATA_DIR, reason=f"set {data.ENV_DATA_DIR} to run on the real data"
)

ADULT_ROWS = [
    # age, workclass, fnlwgt, education, education-num, marital-status, occupation,
    # relationship, race, sex, capital-gain, capital-loss, hours-per-week,
    # native-country, income
    (39, "State-gov", 77516, "Bachelors", 13, "Never-married", "Adm-clerical",
     "Not-in-family", "White", "Male", 2174, 0, 40, "United-States", "<=50K"),
    (17, "Private", 89814, "Preschool", 1, "Married-civ-spouse", "Armed-Forces",
     "Wife", "Black", "Female", 0, 99999, 99, "Holand-Netherlands", ">50K"),
    (90, "Never-worked", 13492, "Doctorate", 16, "Widowed", "Tech-support",
     "Unmarried", "Other", "Female", 99999, 0, 1, "Outlying-US(Guam-USVI-etc)",
     "<=50K"),
]  # fmt: skip

DUTCH_ROWS = [
    ("1", "6", "1131", "112", "1", "1", "1", "5", "111", "135", "1", "2_1"),
    ("2", "10", "1122", "113", "1", "1", "1", "2", "111", "122", "2", "5_4_9"),
    ("2", "17", "1220", "126", "9", "3", "3", "9", "224", "200", "4", "5_4_9"),
]


def adult_frame(rows=ADULT_ROWS) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(data.ADULT_COLUMNS))


def dutch_frame(rows=DUTCH_ROWS) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(data.DUTCH_COLUMNS))


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


# --- public specifications ------------------------------------------------------------


def test_adult_domain_is_the_uci_specification() -> None:
    assert set(ADULT_DOMAIN) == set(data.ADULT_CATEGORICAL)
    sizes = {c: len(v) for c, v in ADULT_DOMAIN.items()}
    assert sizes == {
        "workclass": 8,
        "education": 16,
        "marital-status": 7,
        "occupation": 14,
        "relationship": 6,
        "race": 5,
        "sex": 2,
        "native-country": 41,
        "income": 2,
    }
    assert ADULT_DOMAIN["income"] == data.ADULT_LABELS
    assert "fnlwgt" not in ADULT_NUMERIC_BOUNDS
    assert set(ADULT_NUMERIC_BOUNDS) < set(data.ADULT_NUMERIC)


def test_dutch_domain_matches_the_arff_declarations(tmp_path: Path) -> None:
    assert tuple(DUTCH_DOMAIN) == data.DUTCH_COLUMNS
    header = "@relation dutch\n" + "".join(
        f"@attribute {c} {{{','.join(reversed(v))}}}\n" for c, v in DUTCH_DOMAIN.items()
    )
    path = tmp_path / "d.arff"
    path.write_text(header + "@data\n" + ",".join(DUTCH_ROWS[0]) + "\n")
    frame = data.read_arff(path)
    for col, domain in DUTCH_DOMAIN.items():
        assert set(frame[col].cat.categories) == set(domain)


# --- encoding -------------------------------------------------------------------------


def test_encode_adult_values() -> None:
    x, y, g, names = encode_adult(adult_frame())
    assert x.dtype == np.float32 and y.dtype == g.dtype == np.int64
    assert x.shape == (3, 104) and len(names) == 104
    assert y.tolist() == [0, 1, 0]  # >50K = 1
    assert g.tolist() == [0, 1, 1]  # male = 0, female = 1
    col = {n: i for i, n in enumerate(names)}
    np.testing.assert_allclose(x[:, col["age"]], [22 / 73, 0.0, 1.0], rtol=1e-6)
    np.testing.assert_allclose(x[:, col["education-num"]], [12 / 15, 0.0, 1.0])
    np.testing.assert_allclose(x[:, col["hours-per-week"]], [39 / 98, 1.0, 0.0])
    np.testing.assert_allclose(x[:, col["capital-gain"]], [2174 / 99999, 0.0, 1.0])
    assert x.min() == 0.0 and x.max() == 1.0
    onehot = np.array(["=" in n for n in names])
    assert onehot.sum() == 99
    np.testing.assert_array_equal(x[:, onehot].sum(axis=1), 8.0)
    assert x[1, col["native-country=Holand-Netherlands"]] == 1.0
    assert x[2, col["workclass=Never-worked"]] == 1.0  # declared, even if rare
    assert "fnlwgt" not in col and "income=>50K" not in col
    # The columns follow the UCI declaration order, not the data.
    first = names.index("workclass=Private")
    assert names[first : first + 2] == (
        "workclass=Private",
        "workclass=Self-emp-not-inc",
    )


def test_encode_adult_options() -> None:
    x, _, g, names = encode_adult(adult_frame(), group_feature=False)
    assert x.shape == (3, 102) and not any(n.startswith("sex") for n in names)
    assert g.tolist() == [0, 1, 1]
    np.testing.assert_array_equal(x[:, ["=" in n for n in names]].sum(axis=1), 7.0)
    bounds = ADULT_NUMERIC_BOUNDS | {"fnlwgt": (0.0, 2e6)}
    x, _, _, names = encode_adult(adult_frame(), numeric_bounds=bounds)
    assert names.index("fnlwgt") == 9  # after age and the 8 workclasses
    np.testing.assert_allclose(x[:, 9], np.array([77516, 89814, 13492]) / 2e6)


def test_encode_adult_accepts_the_loaders_categoricals() -> None:
    frame = adult_frame()
    categorical = frame.copy()
    for col in data.ADULT_CATEGORICAL:
        categorical[col] = categorical[col].astype("category")
    for a, b in zip(encode_adult(frame), encode_adult(categorical), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    ("column", "value", "match"),
    [
        ("workclass", "Martian", "outside its declared domain"),
        ("native-country", "Netherlands", "outside its declared domain"),
        ("age", 16, "outside its public bounds"),
        ("hours-per-week", 120, "outside its public bounds"),
        ("capital-loss", -1, "outside its public bounds"),
        ("occupation", np.nan, "missing"),
        ("age", np.nan, "outside its public bounds"),
        ("income", ">50K.", "expected one of"),
    ],
)
def test_encode_adult_refuses_values_outside_the_domain(
    column: str, value: object, match: str
) -> None:
    frame = adult_frame()
    frame[column] = frame[column].astype(object)
    frame.loc[1, column] = value
    with pytest.raises(ValueError, match=match):
        encode_adult(frame)


@pytest.mark.parametrize(
    ("bounds", "error", "match"),
    [
        ({"height": (0, 1)}, ValueError, "not numeric Adult attributes"),
        ({"age": (90, 17)}, ValueError, "lower < upper"),
        ({"age": (0, np.inf)}, ValueError, "finite"),
        ({"age": 5}, ValueError, "a pair"),
        ([("age", (0, 1))], TypeError, "mapping"),
    ],
)
def test_encode_adult_bounds_validation(bounds, error, match) -> None:
    with pytest.raises(error, match=match):
        encode_adult(adult_frame(), numeric_bounds=bounds)


def test_encode_adult_needs_the_columns() -> None:
    with pytest.raises(ValueError, match="missing column"):
        encode_adult(adult_frame().drop(columns="race"))


def test_encode_dutch_values() -> None:
    x, y, g, names = encode_dutch(dutch_frame())
    assert x.shape == (3, 74) and x.dtype == np.float32
    np.testing.assert_array_equal(x.sum(axis=1), 11.0)
    assert set(np.unique(x)) == {0.0, 1.0}
    assert y.tolist() == [1, 0, 0]  # 2_1 (high-level occupation) = 1
    assert g.tolist() == [0, 1, 1]  # sex 1 (male) = 0, 2 (female) = 1
    col = {n: i for i, n in enumerate(names)}
    assert x[0, col["age=6"]] == 1.0 and x[2, col["cur_eco_activity=200"]] == 1.0
    assert names[:3] == ("sex=1", "sex=2", "age=1")
    x, _, _, names = encode_dutch(dutch_frame(), group_feature=False)
    assert x.shape == (3, 72) and names[0] == "age=1"
    np.testing.assert_array_equal(x.sum(axis=1), 10.0)


@pytest.mark.parametrize(
    ("column", "value", "match"),
    [
        ("age", "18", "outside its declared domain"),
        ("edu_level", "6", "outside its declared domain"),
        ("sex", "3", "outside its declared domain"),
        ("marital_status", None, "missing"),
        ("occupation", "1", "expected one of"),
    ],
)
def test_encode_dutch_refuses_values_outside_the_domain(
    column: str, value: object, match: str
) -> None:
    frame = dutch_frame()
    frame.loc[2, column] = value
    with pytest.raises(ValueError, match=match):
        encode_dutch(frame)


# --- unbalanced MNIST subset ----------------------------------------------------------


def test_unbalanced_indices() -> None:
    labels = np.repeat(np.arange(10), 50)
    keep = unbalanced_indices(labels, minority_size=5, rng=rng(0))
    assert keep.dtype == np.int64 and keep.size == 455
    assert np.all(np.diff(keep) > 0)
    counts = np.bincount(labels[keep])
    assert counts[8] == 5 and np.all(np.delete(counts, 8) == 50)
    np.testing.assert_array_equal(
        keep, unbalanced_indices(labels, minority_size=5, rng=rng(0))
    )
    other = unbalanced_indices(labels, minority_size=5, rng=rng(1))
    assert not np.array_equal(keep, other)
    keep3 = unbalanced_indices(labels, minority_class=3, minority_size=50, rng=rng(0))
    np.testing.assert_array_equal(keep3, np.arange(500))


def test_unbalanced_indices_is_uniform() -> None:
    # Each of 20 members is kept with probability 5/20; over 4,000 draws the counts
    # are Binomial(4000, 1/4): sd 27, so 6 sd is 165.
    labels = np.full(20, 8)
    generator = rng(2)
    counts = np.zeros(20)
    for _ in range(4000):
        counts[unbalanced_indices(labels, minority_size=5, rng=generator)] += 1
    assert np.all(np.abs(counts - 1000) < 165)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"minority_size": 51}, ValueError, "has only 50 examples"),
        ({"minority_size": 0}, ValueError, "at least 1"),
        ({"minority_class": 8.0}, TypeError, "integer"),
        ({"rng": 0}, TypeError, "numpy.random.Generator"),
        ({"labels": np.zeros((2, 2), int)}, ValueError, "one-dimensional integer"),
        ({"labels": np.linspace(0, 1, 5)}, ValueError, "one-dimensional integer"),
    ],
)
def test_unbalanced_indices_validation(kwargs, error, match) -> None:
    args = {"labels": np.repeat(np.arange(10), 50), "rng": rng(0)} | kwargs
    with pytest.raises(error, match=match):
        unbalanced_indices(**args)


# --- entry points: validation before any file is read ---------------------------------


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: load_grouped_split("cifar", rng=rng()), ValueError, "cifar"),
        (lambda: load_adult_split(rng=rng(), test_share=0), ValueError, "(0, 1)"),
        (
            lambda: load_dutch_split(rng=rng(), test_share=1.0),
            ValueError,
            "(0, 1)",
        ),
        (lambda: load_adult_split(rng=rng(), test_share="a"), TypeError, "real"),
        (lambda: load_adult_split(rng=0), TypeError, "Generator"),
        (lambda: load_dutch_split(rng=rng(), group_feature=1), TypeError, "True"),
        (lambda: load_unbalanced_mnist(rng=None), TypeError, "Generator"),
        (
            lambda: load_unbalanced_mnist(rng=rng(), minority_class=10),
            ValueError,
            "digit 0..9",
        ),
    ],
    ids=[
        "name",
        "share-0",
        "share-1",
        "share-str",
        "rng",
        "group-feature",
        "mnist-rng",
        "mnist-class",
    ],
)
def test_entry_point_validation(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()


def test_grouped_split_checks_lengths() -> None:
    x, y = np.zeros((3, 2), np.float32), np.zeros(3, np.int64)
    args = dict(
        name="t",
        x_train=x,
        y_train=y,
        g_train=y,
        x_test=x,
        y_test=y,
        g_test=y,
        group_names=("a", "b"),
        label_names=("0", "1"),
        feature_names=("f0", "f1"),
    )
    split = GroupedSplit(**args)
    assert (split.n_features, split.n_groups, split.n_classes) == (2, 2, 2)
    with pytest.raises(ValueError, match="equally many"):
        GroupedSplit(**(args | {"g_test": y[:2]}))
    with pytest.raises(ValueError, match="feature names"):
        GroupedSplit(**(args | {"feature_names": ("f0",)}))


# --- the real files -------------------------------------------------------------------

MNIST_TRAIN_COUNTS = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 500, 5949]


@pytest.fixture(scope="module")
def mnist() -> GroupedSplit:
    return load_grouped_split("mnist", REAL_DATA_DIR, rng=rng(0))


@pytest.fixture(scope="module")
def adult() -> GroupedSplit:
    return load_grouped_split("adult", REAL_DATA_DIR, rng=rng(0))


@pytest.fixture(scope="module")
def dutch() -> GroupedSplit:
    return load_grouped_split("dutch", REAL_DATA_DIR, rng=rng(0))


@needs_real_data
@pytest.mark.data
@pytest.mark.slow
def test_unbalanced_mnist(mnist: GroupedSplit) -> None:
    assert mnist.x_train.shape == (54_649, 1, 28, 28)
    assert mnist.x_test.shape == (10_000, 1, 28, 28)
    assert mnist.x_train.dtype == np.float32
    assert np.bincount(mnist.y_train).tolist() == MNIST_TRAIN_COUNTS
    assert len(mnist.y_test) == 10_000
    np.testing.assert_array_equal(mnist.g_train, mnist.y_train)
    np.testing.assert_array_equal(mnist.g_test, mnist.y_test)
    assert mnist.x_train.min() == 0.0 and mnist.x_train.max() == 1.0
    assert (mnist.n_groups, mnist.n_classes, mnist.n_features) == (10, 10, 784)
    # The same seed picks the same 500 eights, a different seed others.
    x_raw, y_raw, _, _ = data.load_mnist(REAL_DATA_DIR)
    keep = unbalanced_indices(y_raw, rng=rng(0))
    np.testing.assert_array_equal(mnist.y_train, y_raw[keep])
    np.testing.assert_array_equal(mnist.x_train[:, 0] * 255, x_raw[keep])
    np.testing.assert_array_equal(keep, unbalanced_indices(y_raw, rng=rng(0)))
    assert not np.array_equal(keep, unbalanced_indices(y_raw, rng=rng(1)))


@needs_real_data
@pytest.mark.data
def test_adult_split(adult: GroupedSplit) -> None:
    assert len(adult.y_train) + len(adult.y_test) == 45_222
    assert (len(adult.y_train), len(adult.y_test)) == (36_178, 9_044)
    assert adult.n_features == 104 and adult.x_train.dtype == np.float32
    for x in (adult.x_train, adult.x_test):
        assert x.min() >= 0.0 and x.max() <= 1.0
        onehot = np.array(["=" in n for n in adult.feature_names])
        np.testing.assert_array_equal(x[:, onehot].sum(axis=1), 8.0)
    g = np.concatenate([adult.g_train, adult.g_test])
    y = np.concatenate([adult.y_train, adult.y_test])
    assert np.bincount(g).tolist() == [30_527, 14_695]  # male, female
    assert np.bincount(y).tolist() == [34_014, 11_208]  # <=50K, >50K
    assert adult.group_names == ("male", "female")
    assert adult.label_names == ("<=50K", ">50K")
    sex = adult.feature_names.index("sex=Female")
    np.testing.assert_array_equal(adult.x_train[:, sex], adult.g_train)


@needs_real_data
@pytest.mark.data
def test_adult_split_is_seeded() -> None:
    a = load_adult_split(REAL_DATA_DIR, rng=rng(5))
    b = load_adult_split(REAL_DATA_DIR, rng=rng(5))
    c = load_adult_split(REAL_DATA_DIR, rng=rng(6), test_share=0.5)
    np.testing.assert_array_equal(a.x_test, b.x_test)
    np.testing.assert_array_equal(a.y_train, b.y_train)
    assert len(c.y_test) == 22_611
    assert not np.array_equal(a.y_test, c.y_test[: len(a.y_test)])


@needs_real_data
@pytest.mark.data
def test_dutch_split(dutch: GroupedSplit) -> None:
    assert len(dutch.y_train) + len(dutch.y_test) == 60_420
    assert (len(dutch.y_train), len(dutch.y_test)) == (48_336, 12_084)
    assert dutch.n_features == 74
    np.testing.assert_array_equal(dutch.x_train.sum(axis=1), 11.0)
    g = np.concatenate([dutch.g_train, dutch.g_test])
    y = np.concatenate([dutch.y_train, dutch.y_test])
    assert np.bincount(g).tolist() == [30_147, 30_273]  # sex 1 (male), 2 (female)
    assert np.bincount(y).tolist() == [31_657, 28_763]  # 5_4_9, 2_1
    assert dutch.label_names == ("5_4_9", "2_1")
