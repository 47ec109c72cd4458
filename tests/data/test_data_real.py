"""The loaders on the real public files (skipped unless DPNOTES_DATA_DIR is set)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dpnotes.data as data

pytestmark = pytest.mark.data

MNIST_TRAIN_COUNTS = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
MNIST_TEST_COUNTS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


def test_new_mexico_person_file(real_root: Path) -> None:
    frame = data.load_acs_person("NM", 2018, root=real_root)
    assert frame.shape == (19_247, 286)
    assert (frame["ST"] == 35).all()


def test_new_mexico_employment_task(real_root: Path) -> None:
    features, label, group = data.load_acs_task("ACSEmployment", "NM", root=real_root)
    assert features.shape == (19_247, 16)
    assert label.shape == group.shape == (19_247,)
    assert set(group.unique()) <= set(range(1, 10))
    assert 0.3 < label.mean() < 0.6


def test_wyoming_person_file(real_root: Path) -> None:
    assert len(data.load_acs_person("WY", root=real_root)) == 5_740


def test_new_york_extract(real_root: Path) -> None:
    frame = data.load_acs_extract(root=real_root)
    assert frame.shape == (20_000, 17)
    assert set(frame["ESR"].unique()) == {0, 1}


def test_mnist(real_root: Path) -> None:
    x_train, y_train, x_test, y_test = data.load_mnist(real_root)
    assert x_train.shape == (60_000, 28, 28) and x_test.shape == (10_000, 28, 28)
    assert np.bincount(y_train).tolist() == MNIST_TRAIN_COUNTS
    assert np.bincount(y_test).tolist() == MNIST_TEST_COUNTS
    assert x_train.max() == 255 and x_train.min() == 0


def test_adult(real_root: Path) -> None:
    train, test = data.load_adult(real_root)
    assert train.shape == (32_561, 15) and test.shape == (16_281, 15)
    assert train["income"].value_counts().to_dict() == {"<=50K": 24_720, ">50K": 7_841}
    assert test["income"].value_counts().to_dict() == {"<=50K": 12_435, ">50K": 3_846}
    clean_train, clean_test = data.load_adult(real_root, dropna=True)
    assert len(clean_train) == 30_162 and len(clean_test) == 15_060


def test_dutch(real_root: Path) -> None:
    frame = data.load_dutch(real_root)
    assert frame.shape == (60_420, 12)
    assert frame["occupation"].value_counts().to_dict() == {
        "5_4_9": 31_657,
        "2_1": 28_763,
    }
    assert frame["sex"].value_counts().to_dict() == {"2": 30_273, "1": 30_147}


def test_every_present_registered_file_verifies(real_root: Path) -> None:
    checked = 0
    for relpath, info in data.KNOWN_FILES.items():
        if (real_root / relpath).exists():
            data.ensure_file(info, real_root)
            checked += 1
    assert checked >= 12  # all but the New York person file
