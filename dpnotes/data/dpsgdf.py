"""The DPSGD-F data sets by name (Xu, Du, Wu 2021, section 6).

Three tasks, each returned as a :class:`~dpnotes.data.splits.GroupedSplit` of numpy
arrays (float32 features, int64 labels and group ids ``0..K-1``):

* ``"mnist"`` -- unbalanced MNIST
  (:func:`~dpnotes.data.unbalanced_mnist.load_unbalanced_mnist`): the training set
  with class 8 cut to 500 examples (54,649 images), the full test set; the groups are
  the ten digits.
* ``"adult"`` -- UCI Adult (:func:`~dpnotes.data.adult.load_adult_split`): sex is the
  group, income > 50K the label.
* ``"dutch"`` -- the Dutch census 2001 (:func:`~dpnotes.data.dutch.load_dutch_split`):
  sex is the group, the high-level occupation the label.

:func:`load_grouped_split` loads one of them by name; :func:`encoding_feature_names`
lists the features of a census set under an encoding
(:data:`~dpnotes.data.blocks.ENCODINGS`, described in :mod:`dpnotes.data.blocks`)
without reading any data.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from dpnotes.data.adult import (
    ADULT_DOMAIN,
    ADULT_NUMERIC_BOUNDS,
    ADULT_PAPER_ENCODING,
    load_adult_split,
)
from dpnotes.data.blocks import FeatureBlock, check_encoding
from dpnotes.data.dutch import DUTCH_DOMAIN, DUTCH_PAPER_ENCODING, load_dutch_split
from dpnotes.data.splits import GroupedSplit
from dpnotes.data.tabular import ADULT_COLUMNS, ADULT_NUMERIC, DUTCH_COLUMNS
from dpnotes.data.unbalanced_mnist import load_unbalanced_mnist
from dpnotes.validation import check_choice

__all__ = ["DPSGD_DATASETS", "encoding_feature_names", "load_grouped_split"]

#: Names accepted by :func:`load_grouped_split`.
DPSGD_DATASETS: tuple[str, ...] = ("mnist", "adult", "dutch")


def _paper_blocks(name: str) -> tuple[FeatureBlock, ...]:
    return ADULT_PAPER_ENCODING if name == "adult" else DUTCH_PAPER_ENCODING


def encoding_feature_names(
    name: str, encoding: str = "full", *, group_feature: bool | None = None
) -> tuple[str, ...]:
    """Return the feature names of a census data set under an encoding.

    They are fixed by the public specification alone, so they can be listed without
    reading any data: ``"attribute"`` for a scaled number, ``"attribute=value"`` for
    a 0/1 column.

    Args:
        name: ``"adult"`` or ``"dutch"``.
        encoding: One of :data:`~dpnotes.data.blocks.ENCODINGS`.
        group_feature: Whether ``sex`` is a feature (``None``: yes for ``"full"``,
            no for ``"paper"``, which never has it).

    Returns:
        The names, in column order: 104 / 74 for ``"full"``, 40 / 35 for
        ``"paper"``.

    Raises:
        ValueError: For an unknown data set or encoding, or ``group_feature=True``
            with ``encoding="paper"``.

    Examples:
        >>> len(encoding_feature_names("adult", "paper"))
        40
        >>> len(encoding_feature_names("dutch", "paper"))
        35

    References:
        xu2021removing (section 6.1.1)
    """
    check_choice(name, ("adult", "dutch"), "census data set")
    with_group = check_encoding(encoding, group_feature)
    if encoding == "paper":
        return tuple(n for b in _paper_blocks(name) for n in b.feature_names)
    if name == "dutch":
        return tuple(
            f"{col}={v}"
            for col in DUTCH_COLUMNS
            if col != "occupation" and (col != "sex" or with_group)
            for v in DUTCH_DOMAIN[col]
        )
    names: list[str] = []
    for col in ADULT_COLUMNS:
        if col == "income" or (col == "sex" and not with_group):
            continue
        if col in ADULT_NUMERIC:
            if col in ADULT_NUMERIC_BOUNDS:
                names.append(col)
        else:
            names.extend(f"{col}={v}" for v in ADULT_DOMAIN[col])
    return tuple(names)


def load_grouped_split(
    name: str,
    root: str | os.PathLike[str] | None = None,
    *,
    rng: np.random.Generator,
    **options: Any,
) -> GroupedSplit:
    """Load one of the paper's data sets by name (:data:`DPSGD_DATASETS`).

    Args:
        name: ``"mnist"``, ``"adult"`` or ``"dutch"``.
        root: Data root; see :func:`dpnotes.data.data_root`.
        rng: Draws the MNIST subset or the census split.
        **options: Passed on to :func:`load_unbalanced_mnist`,
            :func:`load_adult_split` or :func:`load_dutch_split` (for the census
            sets e.g. ``encoding="paper"``, see :data:`~dpnotes.data.blocks.ENCODINGS`).

    Returns:
        The :class:`GroupedSplit`.

    Raises:
        ValueError: For an unknown name (or whatever the loader raises).

    References:
        xu2021removing (section 6.1)
    """
    check_choice(name, DPSGD_DATASETS, "DPSGD-F data set")
    loader = {
        "mnist": load_unbalanced_mnist,
        "adult": load_adult_split,
        "dutch": load_dutch_split,
    }[name]
    return loader(root, rng=rng, **options)
