"""Tests of the holdout split (dpnotes.data.splits) and the census encodings
(dpnotes.data.blocks, .adult, .dutch, .dpsgdf)."""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pandas as pd
import pytest

import dpnotes.data.adult
import dpnotes.data.dutch
from dpnotes.data import holdout_split
from dpnotes.data.adult import ADULT_DOMAIN, ADULT_PAPER_ENCODING, encode_adult
from dpnotes.data.blocks import FeatureBlock
from dpnotes.data.dpsgdf import encoding_feature_names, load_grouped_split
from dpnotes.data.dutch import DUTCH_DOMAIN, DUTCH_PAPER_ENCODING, encode_dutch
from dpnotes.data.tabular import ADULT_COLUMNS, DUTCH_COLUMNS, load_adult, load_dutch


def test_holdout_split_is_a_seeded_partition() -> None:
    train, test = holdout_split(50, test_share=0.2, rng=np.random.default_rng(3))
    assert len(test) == 10 and len(train) == 40
    assert sorted([*train, *test]) == list(range(50))
    assert np.all(np.diff(train) > 0) and np.all(np.diff(test) > 0)
    again = holdout_split(50, test_share=0.2, rng=np.random.default_rng(3))
    assert np.array_equal(train, again[0]) and np.array_equal(test, again[1])


def test_holdout_split_is_the_first_entries_of_one_permutation() -> None:
    # The definition the data sets' splits rely on: test = the first round(share * m)
    # rows of rng.permutation(n), possibly cut to ``rows`` first.
    order = np.random.default_rng(7).permutation(30)
    train, test = holdout_split(
        30, test_share=0.25, rng=np.random.default_rng(7), rows=20, sort=False
    )
    assert np.array_equal(test, order[:5]) and np.array_equal(train, order[5:20])


def test_holdout_split_rejects_bad_input() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="empty split"):
        holdout_split(4, test_share=0.1, rng=rng)
    with pytest.raises(ValueError, match="rows"):
        holdout_split(4, test_share=0.5, rng=rng, rows=5)
    with pytest.raises(TypeError):
        holdout_split(4, test_share=0.5, rng=0)


# --- The census encodings: "full" (the stored results') and "paper" (40 / 35) ---

REAL_DATA_DIR = os.environ.get("DPNOTES_DATA_DIR", "").strip()
needs_real_data = pytest.mark.skipif(
    not REAL_DATA_DIR, reason="set DPNOTES_DATA_DIR to run on the real data"
)

# sha256 of the "full" encoding of all rows (x, y, g bytes) and of its feature names,
# recorded before the "paper" encoding was added: stored results depend on them.
FULL_DIGESTS = {
    "adult": (
        (45222, 104),
        "13d81d2b3e6e6b1e9242f1c71963a463475f765ab7e66100e394d1c3329dc21c",
        "e1dd52f1d12d4bc6ff0d66aed6feafba7bde66d8e5abdeb1bf1bf9cb220a0b12",
    ),
    "dutch": (
        (60420, 74),
        "6785018dc960db150c01a6c0c66fbe4f22aeff623c093bcec72703fa929b557c",
        "6a3fbdf677f27b709c4aae667416f5c74456456209389204c06c3bb798059528",
    ),
}
# Same for the seed-0 split of load_*_split (train and test x, y, g).
FULL_SPLIT_DIGESTS = {
    "adult": "b479b2b471e4d8d1d72d19f91679fc1954c2742f799e598bb77aa97f688b672e",
    "dutch": "002ff28561bdcb283feb46988b23c7e05186b8cf5abcb2e568ddcc3b2beb4e4b",
}
PAPER_COUNTS = {"adult": 40, "dutch": 35}


def _digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _frame(name: str) -> pd.DataFrame:
    if name == "adult":
        train, test = load_adult(REAL_DATA_DIR, dropna=True)
        return pd.concat([train, test], ignore_index=True)
    return load_dutch(REAL_DATA_DIR)


def _encode(name: str, frame: pd.DataFrame, **kw):
    return (encode_adult if name == "adult" else encode_dutch)(frame, **kw)


def _module_doc(name: str) -> str:
    module = dpnotes.data.adult if name == "adult" else dpnotes.data.dutch
    return module.__doc__ or ""


def _blocks(name: str) -> tuple[FeatureBlock, ...]:
    return ADULT_PAPER_ENCODING if name == "adult" else DUTCH_PAPER_ENCODING


def _adult_rows(**changes: object) -> pd.DataFrame:
    row = dict(
        zip(
            ADULT_COLUMNS,
            (39, "State-gov", 77516, "Bachelors", 13, "Never-married",
             "Adm-clerical", "Not-in-family", "White", "Male", 2174, 0, 40,
             "United-States", "<=50K"),
            strict=True,
        )
    )  # fmt: skip
    row.update(changes)
    return pd.DataFrame([row])


def _dutch_rows(**changes: object) -> pd.DataFrame:
    values = ("1", "6", "1131", "112", "1", "1", "1", "5", "111", "135", "1", "2_1")
    row = dict(zip(DUTCH_COLUMNS, values, strict=True))
    row.update(changes)
    return pd.DataFrame([row])


@pytest.mark.parametrize("name", ["adult", "dutch"])
def test_paper_feature_names_are_unique_documented_and_without_sex(name: str) -> None:
    names = encoding_feature_names(name, "paper")
    assert len(names) == PAPER_COUNTS[name] == len(set(names))
    assert not any(n == "sex" or n.startswith("sex=") for n in names)
    # Every name comes from a documented block, in block order.
    assert names == tuple(n for b in _blocks(name) for n in b.feature_names)
    for block in _blocks(name):
        # Each block is described in its data set's module docstring.
        assert f"``{block.column}``" in _module_doc(name) and block.note
        assert block.column in (ADULT_COLUMNS if name == "adult" else DUTCH_COLUMNS)
    # The full encoding's names are unchanged: 104 / 74 with sex.
    full = encoding_feature_names(name, "full")
    assert len(full) == {"adult": 104, "dutch": 74}[name] == len(set(full))
    assert len(encoding_feature_names(name, "full", group_feature=False)) == (
        len(full) - 2
    )


def test_paper_blocks_drop_one_reference_level_from_a_public_list() -> None:
    adult = {b.column: b for b in ADULT_PAPER_ENCODING}
    for col in ("marital-status", "occupation", "relationship", "race"):
        # Dummy coding: the UCI domain, first level in sorted order dropped.
        levels = sorted(ADULT_DOMAIN[col])
        assert adult[col].reference == levels[0]
        assert list(adult[col].levels) == levels[1:]
    work = sorted(set(ADULT_DOMAIN["workclass"]) - {"Never-worked"})
    assert [adult["workclass"].reference, *adult["workclass"].levels] == work
    for block in DUTCH_PAPER_ENCODING:
        declared = DUTCH_DOMAIN[block.column]
        assert set(block.accepted) <= set(declared)


def test_paper_encoding_of_single_rows() -> None:
    x, y, g, names = encode_adult(_adult_rows(), encoding="paper")
    row = dict(zip(names, x[0], strict=True))
    assert row["age"] == pytest.approx((39 - 17) / 73)
    assert row["education-num"] == pytest.approx(12 / 15)
    assert row["workclass=State-gov"] == 1 and row["native-country=United-States"] == 1
    assert sum(v for k, v in row.items() if k.startswith("race=")) == 1
    assert (y[0], g[0]) == (0, 0)
    # A non-US country is "other" (all zero); the reference levels are all zero.
    x, _, _, _ = encode_adult(
        _adult_rows(**{"native-country": "Holand-Netherlands", "workclass":
                       "Federal-gov", "race": "Amer-Indian-Eskimo"}),
        encoding="paper",
    )  # fmt: skip
    row = dict(zip(names, x[0], strict=True))
    assert row["native-country=United-States"] == 0
    assert not any(row[n] for n in names if n.startswith(("workclass=", "race=")))
    # Numbers outside the public bounds are clipped in the paper encoding (and
    # rejected by the full one, unchanged).
    x, _, _, _ = encode_adult(_adult_rows(age=95), encoding="paper")
    assert x[0, names.index("age")] == 1.0
    with pytest.raises(ValueError, match="outside its public bounds"):
        encode_adult(_adult_rows(age=95))
    x, y, g, names = encode_dutch(_dutch_rows(), encoding="paper")
    row = dict(zip(names, x[0], strict=True))
    assert row["age"] == pytest.approx(5 / 16) and row["edu_level"] == 1.0
    assert row["prev_residence_place"] == 0.0 and row["household_position=1131"] == 1
    assert (y[0], g[0]) == (1, 0)


@pytest.mark.parametrize(
    ("name", "changes", "column"),
    [
        ("adult", {"workclass": "Never-worked"}, "workclass"),
        ("adult", {"native-country": "Atlantis"}, "native-country"),
        ("dutch", {"economic_status": "221"}, "economic_status"),
        ("dutch", {"cur_eco_activity": "200"}, "cur_eco_activity"),
        ("dutch", {"edu_level": "9"}, "edu_level"),
        ("dutch", {"prev_residence_place": "9"}, "prev_residence_place"),
    ],
)
def test_paper_encoding_rejects_values_outside_its_levels(
    name: str, changes: dict, column: str
) -> None:
    frame = (_adult_rows if name == "adult" else _dutch_rows)(**changes)
    value = next(iter(changes.values()))
    with pytest.raises(ValueError, match=rf"'{column}' has values \['{value}'\]"):
        _encode(name, frame, encoding="paper")


def test_encoding_options_are_validated() -> None:
    with pytest.raises(ValueError, match="unknown encoding"):
        encode_adult(_adult_rows(), encoding="fairgan")
    with pytest.raises(ValueError, match="never uses sex"):
        encode_dutch(_dutch_rows(), encoding="paper", group_feature=True)
    with pytest.raises(ValueError, match="numeric_bounds applies"):
        encode_adult(_adult_rows(), encoding="paper", numeric_bounds={})
    with pytest.raises(TypeError, match="group_feature"):
        encode_adult(_adult_rows(), group_feature="yes")
    with pytest.raises(ValueError, match="unknown census data set"):
        encoding_feature_names("mnist", "paper")


@needs_real_data
@pytest.mark.parametrize("name", ["adult", "dutch"])
def test_full_encoding_is_bit_for_bit_unchanged(name: str) -> None:
    shape, data_digest, names_digest = FULL_DIGESTS[name]
    x, y, g, names = _encode(name, _frame(name))
    assert x.shape == shape
    assert _digest(x, y, g) == data_digest
    assert hashlib.sha256("|".join(names).encode()).hexdigest() == names_digest
    assert names == encoding_feature_names(name, "full")
    s = load_grouped_split(name, REAL_DATA_DIR, rng=np.random.default_rng(0))
    assert s.n_features == shape[1]
    assert FULL_SPLIT_DIGESTS[name] == _digest(
        s.x_train, s.y_train, s.g_train, s.x_test, s.y_test, s.g_test
    )


@needs_real_data
@pytest.mark.parametrize("name", ["adult", "dutch"])
def test_paper_encoding_on_the_real_data(name: str) -> None:
    x, _, g, names = _encode(name, _frame(name), encoding="paper")
    assert x.shape[1] == PAPER_COUNTS[name] == len(names)
    assert x.dtype == np.float32 and x.min() >= 0.0 and x.max() <= 1.0
    start = 0
    for block in _blocks(name):
        width = len(block.feature_names)
        part = x[:, start : start + width]
        start += width
        if block.kind == "scaled":
            continue
        # One-hot consistent: 0/1 entries, at most one per row (none = reference).
        assert set(np.unique(part)) <= {0.0, 1.0}
        assert part.sum(axis=1).max() <= 1.0
        if block.kind == "dummies":
            # Every level occurs (no dead column) and so does the reference.
            assert part.sum(axis=0).min() > 0 and (part.sum(axis=1) == 0).any()
    # Sex is the group, never a feature; the paper's Table 1 group sizes.
    sizes = sorted(np.bincount(g).tolist())
    assert sizes == ([14695, 30527] if name == "adult" else [30147, 30273])
    # The split has the same rows whatever the encoding.
    a = load_grouped_split(name, REAL_DATA_DIR, rng=np.random.default_rng(1))
    b = load_grouped_split(
        name, REAL_DATA_DIR, rng=np.random.default_rng(1), encoding="paper"
    )
    assert b.n_features == PAPER_COUNTS[name] and b.feature_names == names
    for side in ("train", "test"):
        for attr in "yg":
            assert np.array_equal(
                getattr(a, f"{attr}_{side}"), getattr(b, f"{attr}_{side}")
            )
