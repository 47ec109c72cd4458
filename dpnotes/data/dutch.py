"""The Dutch census 2001 encoded for DPSGD-F (Xu, Du, Wu 2021, section 6).

Sex is the group, the high-level occupation the label. :func:`load_dutch_split` loads
the benchmark file, encodes the rows (:func:`encode_dutch`) and splits them at random.
The encodings and the rule they follow are described in :mod:`dpnotes.data.blocks`:
``"full"``, one-hot over the declared domains (:data:`DUTCH_DOMAIN`), and ``"paper"``
(:data:`DUTCH_PAPER_ENCODING`).

The paper encoding follows the recipe inferred from public code of the authors' own
group (see :mod:`dpnotes.data.blocks`; for Dutch ``src/dutch_preprocessing.py``):
dummy coding with the first level dropped, and ``age``, ``prev_residence_place`` and
``edu_level`` as numbers, which gives exactly 35 features. Attribute by attribute, in
column order:

- Dutch (35): ``age`` (class code 1..17), ``prev_residence_place`` (1..2) and
  ``edu_level`` (0..5) scaled (3); ``household_position`` (7), ``household_size``
  (5), ``citizenship`` (2), ``country_birth`` (2), ``economic_status`` (2),
  ``cur_eco_activity`` (11), ``marital_status`` (3) dummy coded.

Its level lists are fixed in this file: the codes that the published benchmark file
contains, a subset of its ARFF declarations. A value outside those lists is an error
that names the column and the value, never a silent extra column.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from dpnotes.data.blocks import (
    FeatureBlock,
    check_encoding,
    column_ids,
    encode_blocks,
    one_hot,
)
from dpnotes.data.splits import GroupedSplit, census_split, check_split_args
from dpnotes.data.tabular import DUTCH_COLUMNS, load_dutch
from dpnotes.validation import check_columns

__all__ = [
    "DUTCH_DOMAIN",
    "DUTCH_PAPER_ENCODING",
    "encode_dutch",
    "load_dutch_split",
]

#: The declared domain of each Dutch census attribute: the nominal declarations of the
#: benchmark's ARFF header (Le Quy et al. 2022), codes sorted numerically. ``sex``: 1 =
#: male, 2 = female; ``occupation`` (the label): ``2_1`` = high-level occupation
#: (the survey's CSV codes it 1), ``5_4_9`` = other (0).
DUTCH_DOMAIN: dict[str, tuple[str, ...]] = {
    "sex": ("1", "2"),
    "age": tuple(str(i) for i in range(1, 18)),
    "household_position": (
        "1110",
        "1121",
        "1122",
        "1131",
        "1132",
        "1140",
        "1210",
        "1220",
    ),
    "household_size": ("111", "112", "113", "114", "125", "126"),
    "prev_residence_place": ("1", "2", "9"),
    "citizenship": ("1", "2", "3"),
    "country_birth": ("1", "2", "3"),
    "edu_level": ("0", "1", "2", "3", "4", "5", "9"),
    "economic_status": ("111", "112", "120", "210", "221", "222", "223", "224"),
    "cur_eco_activity": (
        "111",
        "122",
        "124",
        "131",
        "132",
        "133",
        "134",
        "135",
        "136",
        "137",
        "138",
        "139",
        "200",
    ),
    "marital_status": ("1", "2", "3", "4"),
    "occupation": ("5_4_9", "2_1"),
}

# Group and label coding: value of the attribute -> id (0 = male, 1 = female, as for
# Adult; label 1 for the "positive" outcome).
_DUTCH_SEX = {"1": 0, "2": 1}
_DUTCH_LABEL = {"5_4_9": 0, "2_1": 1}

_DUTCH_ABSENT = (
    "the paper encoding's levels are the codes the published benchmark file contains "
    "(a subset of its ARFF declarations); use encoding='full' for data with other codes"
)

#: The paper's Dutch encoding: 35 features (3 scaled codes, 32 dummies). The scaled
#: attributes are ordered codes: ``age`` a class 1..17 and ``edu_level`` a level 0..5
#: (bounds: the ARFF declarations, less ``edu_level`` 9, which is not a level), and
#: ``prev_residence_place`` 1 or 2 (its declared code 9 is not a place).
DUTCH_PAPER_ENCODING: tuple[FeatureBlock, ...] = (
    FeatureBlock(
        "age",
        "scaled",
        levels=tuple(str(i) for i in range(1, 18)),
        bounds=(1.0, 17.0),
        note="age classes 1..17 (the ARFF declaration)",
    ),
    FeatureBlock(
        "household_position",
        "dummies",
        reference="1110",
        levels=("1121", "1122", "1131", "1132", "1140", "1210", "1220"),
        note=_DUTCH_ABSENT,
    ),
    FeatureBlock(
        "household_size",
        "dummies",
        reference="111",
        levels=("112", "113", "114", "125", "126"),
        note=_DUTCH_ABSENT,
    ),
    FeatureBlock(
        "prev_residence_place",
        "scaled",
        levels=("1", "2"),
        bounds=(1.0, 2.0),
        note="code 9 (declared in the ARFF header, absent from the benchmark file) "
        "has no place on this scale; " + _DUTCH_ABSENT,
    ),
    FeatureBlock(
        "citizenship", "dummies", reference="1", levels=("2", "3"), note=_DUTCH_ABSENT
    ),
    FeatureBlock(
        "country_birth", "dummies", reference="1", levels=("2", "3"), note=_DUTCH_ABSENT
    ),
    FeatureBlock(
        "edu_level",
        "scaled",
        levels=("0", "1", "2", "3", "4", "5"),
        bounds=(0.0, 5.0),
        note="code 9 (declared in the ARFF header, absent from the benchmark file) "
        "is not an education level; " + _DUTCH_ABSENT,
    ),
    FeatureBlock(
        "economic_status",
        "dummies",
        reference="111",
        levels=("112", "120"),
        note=_DUTCH_ABSENT,
    ),
    FeatureBlock(
        "cur_eco_activity",
        "dummies",
        reference="111",
        levels=(
            "122",
            "124",
            "131",
            "132",
            "133",
            "134",
            "135",
            "136",
            "137",
            "138",
            "139",
        ),
        note=_DUTCH_ABSENT,
    ),
    FeatureBlock(
        "marital_status",
        "dummies",
        reference="1",
        levels=("2", "3", "4"),
        note=_DUTCH_ABSENT,
    ),
)


def encode_dutch(
    frame: pd.DataFrame,
    *,
    group_feature: bool | None = None,
    encoding: str = "full",
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[str, ...]]:
    """Encode Dutch census rows: every attribute one-hot over its declared domain.

    With ``encoding="paper"`` the rows are encoded with :data:`DUTCH_PAPER_ENCODING`
    instead (35 features, no ``sex``: ``age``, ``prev_residence_place`` and
    ``edu_level`` scaled codes, the other seven attributes dummy coded; see the module
    docstring); the rest of this description is the ``"full"`` encoding.

    All eleven attributes other than the label are categorical codes; each becomes one
    0/1 column per value of :data:`DUTCH_DOMAIN` (codes in numeric order), so a row's
    features sum to 11 (10 without ``sex``).

    Args:
        frame: Rows with the columns :data:`DUTCH_COLUMNS` (as returned by
            :func:`~dpnotes.data.load_dutch`), no missing values.
        group_feature: Whether ``sex`` (the group) is also a feature; ``None``
            (default): yes for ``"full"``, no for ``"paper"``.
        encoding: One of :data:`~dpnotes.data.blocks.ENCODINGS`.

    Returns:
        ``(x, y, g, feature_names)``: float32 features ``(n, d)``; int64
        labels (occupation ``2_1`` = 1, ``5_4_9`` = 0); int64 groups (sex ``1``,
        male = 0; ``2``, female = 1).

    Raises:
        ValueError: If a column is missing, a value is missing, or a code is outside
            its declared domain (for ``"paper"``: outside the encoding's levels), or
            for ``group_feature=True`` with ``"paper"``.

    Privacy:
        The encoding of a row depends on that row and on public constants only, so it
        costs no privacy.

    References:
        lequy2022survey; xu2021removing (section 6.1)
    """
    check_columns(frame, DUTCH_COLUMNS, "the Dutch frame")
    group_feature = check_encoding(encoding, group_feature)
    if encoding == "paper":
        x = encode_blocks(frame, DUTCH_PAPER_ENCODING, "the paper's Dutch encoding")
        names = tuple(n for b in DUTCH_PAPER_ENCODING for n in b.feature_names)
        return (
            x,
            column_ids(frame, "occupation", _DUTCH_LABEL),
            column_ids(frame, "sex", _DUTCH_SEX),
            names,
        )
    blocks: list[np.ndarray] = []
    names: list[str] = []
    for col in DUTCH_COLUMNS:
        if col == "occupation" or (col == "sex" and not group_feature):
            continue
        domain = DUTCH_DOMAIN[col]
        blocks.append(one_hot(frame, col, domain, "the benchmark's ARFF header"))
        names.extend(f"{col}={v}" for v in domain)
    x = np.concatenate(blocks, axis=1)
    y = column_ids(frame, "occupation", _DUTCH_LABEL)
    g = column_ids(frame, "sex", _DUTCH_SEX)
    return x, y, g, tuple(names)


def load_dutch_split(
    root: str | os.PathLike[str] | None = None,
    *,
    rng: np.random.Generator,
    test_share: float = 0.2,
    group_feature: bool | None = None,
    encoding: str = "full",
) -> GroupedSplit:
    """Load the Dutch census 2001 as in the paper: one-hot encode, split 80/20.

    All 60,420 rows are kept (the file has no missing values) and encoded with
    :func:`encode_dutch` (74 one-hot features by default, 13 of them
    declared codes that never occur in the file; 35 with ``encoding="paper"``), then
    split at random. The split depends on ``rng`` and the number of rows only, so
    every encoding has the same rows, labels and groups on each side.

    Note: the paper's Table 1 gives Dutch group sizes M 30,273 and F 30,147; in this
    file those are the counts of sex code ``2`` (female in the census codebook and in
    the benchmark's CSV) and code ``1`` (male). This loader keeps the codebook's
    names, so the paper's "M" column corresponds to this loader's ``"female"`` group.

    Args:
        root: Data root; see :func:`dpnotes.data.data_root`.
        rng: Draws the random split.
        test_share: Fraction of rows held out for testing, in (0, 1).
        group_feature: Whether ``sex`` (the group) is also a feature; ``None``
            (default): yes for ``"full"``, no for ``"paper"``.
        encoding: One of :data:`~dpnotes.data.blocks.ENCODINGS`; ``"full"``
            (default) or ``"paper"``.

    Returns:
        A :class:`GroupedSplit`: groups ``("male", "female")``, labels
        ``("5_4_9", "2_1")`` (1 = the high-level occupation ``2_1``).

    Raises:
        ValueError: For a ``test_share`` outside (0, 1), data outside the declared
            domain, or a corrupt file.
        DataNotFoundError: If the file is missing and cannot be downloaded.

    Privacy:
        Encoding and split are data-independent; the training split is the private data
        set DP-SGD protects.

    References:
        lequy2022survey; xu2021removing (section 6.1)
    """
    test_share = check_split_args(test_share, rng, group_feature, encoding)
    encoded = encode_dutch(
        load_dutch(root), group_feature=group_feature, encoding=encoding
    )
    return census_split(
        "dutch",
        encoded,
        test_share=test_share,
        rng=rng,
        label_names=DUTCH_DOMAIN["occupation"],
    )
