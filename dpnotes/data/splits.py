"""Train/test splits: :class:`GroupedSplit` and the one random holdout split.

:class:`GroupedSplit` is what the DPSGD-F data sets are returned as
(:mod:`dpnotes.data.dpsgdf`): numpy arrays of float32 features, int64 labels and
group ids ``0..K-1``. :func:`holdout_split` is the one random holdout split of the
package; the census sets (:mod:`dpnotes.data.adult`, :mod:`dpnotes.data.dutch`), the
employment task and the spending tasks all split with it. ``census_split`` and
``check_split_args`` are the steps the two census loaders share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpnotes.data.blocks import check_encoding
from dpnotes.rng import check_rng
from dpnotes.validation import check_int, check_probability

__all__ = ["GroupedSplit", "holdout_split"]

# The groups of both census sets: 0 = male, 1 = female.
_SEX_GROUPS = ("male", "female")


@dataclass(frozen=True, eq=False)
class GroupedSplit:
    """A train/test split with group labels, ready for a classifier.

    Attributes:
        name: The data set (one of :data:`~dpnotes.data.dpsgdf.DPSGD_DATASETS`).
        x_train: float32 features, shape ``(n_train, d)`` for the census data and
            ``(n_train, 1, 28, 28)`` (pixels in [0, 1]) for MNIST.
        y_train: int64 labels ``0..n_classes-1``, shape ``(n_train,)``.
        g_train: int64 group ids ``0..n_groups-1``, shape ``(n_train,)``.
        x_test, y_test, g_test: The same for the test split.
        group_names: Name of each group id.
        label_names: Name of each label.
        feature_names: Name of each feature (flattened for images);
            ``"attribute=value"`` for a one-hot column.
    """

    name: str
    x_train: np.ndarray
    y_train: np.ndarray
    g_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    g_test: np.ndarray
    group_names: tuple[str, ...]
    label_names: tuple[str, ...]
    feature_names: tuple[str, ...]

    def __post_init__(self) -> None:
        for split in ("train", "test"):
            x, y, g = (getattr(self, f"{a}_{split}") for a in "xyg")
            if not len(x) == len(y) == len(g):
                raise ValueError(
                    f"{split} split has {len(x)} rows of features, {len(y)} labels "
                    f"and {len(g)} group ids; they must be equally many."
                )
        if math.prod(self.x_train.shape[1:]) != len(self.feature_names):
            raise ValueError(
                f"features have shape {self.x_train.shape[1:]} but there are "
                f"{len(self.feature_names)} feature names."
            )

    @property
    def n_features(self) -> int:
        """Number of (flattened) features."""
        return len(self.feature_names)

    @property
    def n_groups(self) -> int:
        """Number of groups ``K``."""
        return len(self.group_names)

    @property
    def n_classes(self) -> int:
        """Number of labels."""
        return len(self.label_names)


def holdout_split(
    n: int,
    *,
    test_share: float,
    rng: np.random.Generator,
    rows: int | None = None,
    sort: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(train, test)`` row indices of a uniformly random holdout split.

    A random order of the ``n`` rows is drawn (``rng.permutation(n)``); with ``rows``
    only its first ``rows`` entries are kept (a random subset, for smoke runs). The
    first ``round(test_share * m)`` of the ``m`` kept rows are the test rows, the rest
    the training rows.

    Args:
        n: Number of rows, at least 2.
        test_share: Fraction of the (kept) rows held out for testing, in (0, 1).
        rng: Draws the order.
        rows: Keep a random subset of this many rows first (``None``: all).
        sort: Return each side's indices in increasing order (else in the random
            order).

    Returns:
        int64 index arrays ``(train, test)``, disjoint.

    Raises:
        ValueError: If either side would be empty, or ``rows`` is outside ``1..n``.

    Privacy:
        The split is data-independent; the training side is the private data set.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> train, test = holdout_split(10, test_share=0.2, rng=rng)
        >>> len(train), len(test), sorted([*train, *test]) == list(range(10))
        (8, 2, True)
    """
    check_rng(rng)
    n = check_int(n, "n", minimum=1)
    order = rng.permutation(n)
    if rows is not None:
        rows = check_int(rows, "rows", minimum=1)
        if rows > n:
            raise ValueError(f"rows={rows} exceeds the {n} rows; pass rows <= {n}.")
        order = order[:rows]
    m = len(order)
    n_test = round(test_share * m)
    if not 0 < n_test < m:
        raise ValueError(
            f"test_share={test_share} of {m} rows leaves an empty split; use a share "
            "that keeps at least one row on each side (the paper's is 0.2)."
        )
    test, train = order[:n_test], order[n_test:]
    if sort:
        return np.sort(train), np.sort(test)
    return train, test


def census_split(
    name: str,
    encoded: tuple[np.ndarray, np.ndarray, np.ndarray, tuple[str, ...]],
    *,
    test_share: float,
    rng: np.random.Generator,
    label_names: tuple[str, ...],
) -> GroupedSplit:
    """Return encoded census rows as a holdout :class:`GroupedSplit` with sex groups."""
    x, y, g, feature_names = encoded
    train, test = holdout_split(len(y), test_share=test_share, rng=rng)
    return GroupedSplit(
        name=name,
        x_train=x[train],
        y_train=y[train],
        g_train=g[train],
        x_test=x[test],
        y_test=y[test],
        g_test=g[test],
        group_names=_SEX_GROUPS,
        label_names=label_names,
        feature_names=feature_names,
    )


def check_split_args(
    test_share: Any, rng: Any, group_feature: Any, encoding: Any
) -> float:
    """Check a census loader's arguments; return the checked ``test_share``."""
    check_rng(rng)
    check_encoding(encoding, group_feature)
    return check_probability(test_share, "test_share")
