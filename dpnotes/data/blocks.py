"""The census encodings of Adult and Dutch: their rule and the blocks they are made of.

Encoding rule. Every discretisation comes from a public specification fixed in
advance, never from the (private) data: the one-hot categories of a census attribute
are its documented domain (:data:`~dpnotes.data.adult.ADULT_DOMAIN`, the UCI
``adult.names``; :data:`~dpnotes.data.dutch.DUTCH_DOMAIN`, the benchmark's ARFF
declarations), and a numeric attribute is min-max scaled with documented public bounds
(:data:`~dpnotes.data.adult.ADULT_NUMERIC_BOUNDS`), not with its observed minimum and
maximum. A value outside the declared domain is an error, not a silently added
category or a value outside [0, 1]. Because the encoding of a row depends on that row
alone, it costs no privacy.

Two encodings of the census sets (:data:`ENCODINGS`), chosen with ``encoding=``:

* ``"full"`` (the default): every attribute but ``fnlwgt`` and the label, each
  categorical one-hot over its whole declared domain, ``sex`` included as a feature
  unless ``group_feature=False``: 104 Adult and 74 Dutch features.
* ``"paper"``: the reading of the paper's section 6.1.1 that gives its "40 unprotected
  attributes for Adult and 35 unprotected attributes for Dutch"
  (:data:`~dpnotes.data.adult.ADULT_PAPER_ENCODING`,
  :data:`~dpnotes.data.dutch.DUTCH_PAPER_ENCODING`). ``sex`` is the group and never a
  feature. The paper states only "one-hot vectors" and "[0, 1]"; the rest is inferred
  from public code of the authors' own group (Yongkai Wu, Lu Zhang, Xintao Wu, "On
  convexity and bounds of fairness-aware classification", WWW 2019; repository
  ``yongkaiwu/Fairness-Aware-Classification``, ``src/dutch_preprocessing.py``,
  ``src/adult_preprocessing.py``, ``src/fair_classification/attribute.py``): a
  categorical attribute is dummy coded with its first level dropped (pandas
  ``get_dummies(drop_first=True)``, levels in sorted order), and Dutch ``age``,
  ``prev_residence_place`` and ``edu_level`` are numbers, not categories. That recipe
  gives exactly 35 Dutch features. For Adult the same recipe, with ``fnlwgt`` and
  ``education`` left out (``education-num`` carries it) and ``native-country``
  grouped as United-States / other (the group's own grouping, same file), gives
  exactly 40; which Adult attributes the paper kept is the least certain part (other
  readings that also give 40 are listed in a comment above
  :data:`~dpnotes.data.adult.ADULT_PAPER_ENCODING`). Attribute by attribute, the two
  readings are listed in :mod:`dpnotes.data.adult` and :mod:`dpnotes.data.dutch`.

  The paper encoding's numbers are scaled to [0, 1] by public bounds and clipped (the
  group's code scaled by the observed range; this package never does). Its level lists
  are fixed in those two modules, and a value outside them is an error that names the
  column and the value, never a silent extra column.

The encoders of :mod:`dpnotes.data.adult` and :mod:`dpnotes.data.dutch` share the
pieces here: :class:`FeatureBlock` (the columns of one attribute in the paper
encoding) and ``encode_blocks``, ``one_hot`` (the ``"full"`` encoding's one-hot
blocks), ``column_ids`` (labels and groups) and ``check_encoding``. The feature names
of an encoding, without reading any data, are
:func:`dpnotes.data.dpsgdf.encoding_feature_names`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpnotes.validation import check_choice

__all__ = ["ENCODINGS", "FeatureBlock"]

#: The encodings of the census sets (see the module docstring).
ENCODINGS: tuple[str, ...] = ("full", "paper")

_BLOCK_KINDS = ("scaled", "dummies", "indicator")


@dataclass(frozen=True)
class FeatureBlock:
    """The feature columns of one attribute in a fixed encoding.

    Three kinds:

    * ``"scaled"``: one column ``column``, the value min-max scaled with the public
      ``bounds`` and clipped to [0, 1]; if ``levels`` is not empty, the value must be
      one of them (numeric codes of a census attribute).
    * ``"dummies"``: one 0/1 column ``column=level`` per entry of ``levels``; the
      ``reference`` level is all zeros (dummy coding with the first level dropped).
    * ``"indicator"``: one 0/1 column ``column=level`` that is 1 when the value is one
      of ``levels``; any other value of ``domain`` gives 0 (a grouping into "these" and
      "other").

    Attributes:
        column: The attribute.
        kind: ``"scaled"``, ``"dummies"`` or ``"indicator"``.
        levels: See above.
        reference: The dropped level of a ``"dummies"`` block.
        bounds: Public ``(lower, upper)`` of a ``"scaled"`` block.
        domain: Every value an ``"indicator"`` block accepts.
        note: Why the accepted values are what they are; quoted in the error for a
            value outside them.
    """

    column: str
    kind: str
    levels: tuple[str, ...] = ()
    reference: str | None = None
    bounds: tuple[float, float] | None = None
    domain: tuple[str, ...] = ()
    note: str = ""

    def __post_init__(self) -> None:
        check_choice(self.kind, _BLOCK_KINDS, "feature block kind")
        if self.kind == "scaled" and self.bounds is None:
            raise ValueError(f"scaled block {self.column!r} needs public bounds.")
        if self.kind == "dummies" and self.reference is None:
            raise ValueError(f"dummies block {self.column!r} needs a reference level.")

    @property
    def feature_names(self) -> tuple[str, ...]:
        """Names of the block's columns (``column`` or ``column=level``)."""
        if self.kind == "scaled":
            return (self.column,)
        return tuple(f"{self.column}={level}" for level in self.levels)

    @property
    def accepted(self) -> tuple[str, ...]:
        """Every value the block encodes without error (empty: any number)."""
        if self.kind == "dummies":
            return (str(self.reference), *self.levels)
        if self.kind == "indicator":
            return self.domain
        return self.levels


def one_hot(
    frame: pd.DataFrame, column: str, domain: Sequence[str], source: str
) -> np.ndarray:
    """Return the (n, len(domain)) one-hot block of ``column``; codes follow domain."""
    values = frame[column].astype(object)
    if values.isna().any():
        row = int(np.flatnonzero(values.isna().to_numpy())[0])
        raise ValueError(
            f"{column!r} is missing in row {row}; remove rows with missing values "
            "first (load_adult(dropna=True) does), with a rule fixed in advance."
        )
    position = {value: i for i, value in enumerate(domain)}
    codes = values.astype(str).map(position).fillna(-1).to_numpy(np.int64)
    if (codes < 0).any():
        unknown = sorted(set(values[codes < 0].astype(str)))
        raise ValueError(
            f"{column!r} has values {unknown[:5]} outside its declared domain "
            f"{list(domain)} ({source}). The one-hot categories come from that public "
            "specification, never from the data: fix or remove these rows, or "
            "extend the specification if the domain really changed."
        )
    block = np.zeros((len(frame), len(domain)), dtype=np.float32)
    block[np.arange(len(frame)), codes] = 1.0
    return block


def column_ids(
    frame: pd.DataFrame, column: str, coding: Mapping[str, int]
) -> np.ndarray:
    """Return the int64 id of each row's ``column`` value under ``coding``."""
    values = frame[column].astype(object).astype(str)
    ids = values.map(coding)
    if ids.isna().any():
        unknown = sorted(set(values[ids.isna()]))
        raise ValueError(
            f"{column!r} has values {unknown[:5]}; expected one of {list(coding)}."
        )
    return ids.to_numpy(dtype=np.int64)


def encode_blocks(
    frame: pd.DataFrame, blocks: Sequence[FeatureBlock], what: str
) -> np.ndarray:
    """Return the float32 ``(n, d)`` features of ``frame`` under fixed ``blocks``."""
    out: list[np.ndarray] = []
    for block in blocks:
        values = frame[block.column].astype(object)
        if values.isna().any():
            row = int(np.flatnonzero(values.isna().to_numpy())[0])
            raise ValueError(
                f"{block.column!r} is missing in row {row}; remove rows with missing "
                "values first, with a rule fixed in advance."
            )
        text = values.astype(str)
        accepted = block.accepted
        if accepted:
            unknown = sorted(set(text[~text.isin(accepted)]))
            if unknown:
                raise ValueError(
                    f"{block.column!r} has values {unknown[:5]} that {what} does not "
                    f"encode; it accepts {list(accepted)} ({block.note}). Remove these "
                    "rows or choose another encoding; the levels are a public "
                    "specification and are never read from the data."
                )
        if block.kind == "scaled":
            lo, hi = block.bounds  # type: ignore[misc]
            number = pd.to_numeric(text, errors="coerce").to_numpy(np.float64)
            if np.isnan(number).any():
                bad = sorted(set(text[np.isnan(number)]))[:5]
                raise ValueError(
                    f"{block.column!r} has non-numeric values {bad}; {what} scales it "
                    "as a number."
                )
            scaled = (np.clip(number, lo, hi) - lo) / (hi - lo)
            out.append(scaled.astype(np.float32)[:, None])
        else:
            levels = np.asarray(block.levels, dtype=object)
            hits = text.to_numpy(dtype=object)[:, None] == levels[None, :]
            if block.kind == "indicator":
                hits = hits.any(axis=1, keepdims=True)
            out.append(hits.astype(np.float32))
    return np.concatenate(out, axis=1)


def check_encoding(encoding: Any, group_feature: Any) -> bool:
    """Validate ``encoding`` and return the effective ``group_feature``."""
    check_choice(encoding, ENCODINGS, "encoding")
    if group_feature is None:
        return encoding == "full"
    if not isinstance(group_feature, bool):
        raise TypeError(
            f"group_feature must be True, False or None, got {group_feature!r}."
        )
    if group_feature and encoding == "paper":
        raise ValueError(
            "encoding='paper' never uses sex as a feature (the paper's 40 and 35 "
            "unprotected attributes exclude it); pass group_feature=None or False, or "
            "use encoding='full'."
        )
    return group_feature
