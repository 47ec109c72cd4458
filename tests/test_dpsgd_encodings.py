"""Tests for the one holdout split of the package (dpnotes.data.encodings)."""

from __future__ import annotations

import numpy as np
import pytest

from dpnotes.data import holdout_split


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
