"""Public codebooks: a user's own table to the synthesizers' integer codes and back.

The synthesizers (:class:`~dpnotes.synth.mst.MST`, :class:`~dpnotes.synth.aim.AIM`,
:class:`~dpnotes.synth.gem.GEM`, :class:`~dpnotes.synth.stratified.Stratified`) take
integer codes inside a public domain (:mod:`dpnotes.synth.domain`). A
:class:`Codebook` is written from a public specification of the table (the survey's
documentation, a standard code list, a schema): ordered labels for each categorical
column and bin edges for each numeric one. It gives the domain, encodes a DataFrame
into codes and decodes sampled codes back to labels and bins::

    cb = Codebook(categories={"SEX": ["F", "M"]}, bins={"AGE": [0, 18, 65, 100]})
    synth = MST(epsilon=1.0, delta=1e-6).fit(cb.encode(df), cb.domain, rng=rng)
    rows = cb.decode(synth.sample(1000, rng=rng))
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Mapping, Sequence, Set
from numbers import Real
from types import MappingProxyType
from typing import Literal

import numpy as np
import pandas as pd

__all__ = ["Codebook"]

#: How :meth:`Codebook.decode` writes a binned column back.
BinsAs = Literal["interval", "midpoint"]

_SHOW = 5  # offending values quoted in an error message


def _show(values: Sequence[object]) -> str:
    """Quote up to ``_SHOW`` distinct values (by repr) for an error message."""
    seen: dict[str, None] = {}
    for v in values:
        seen.setdefault(repr(v.item() if isinstance(v, np.generic) else v))
        if len(seen) == _SHOW:
            break
    return "[" + ", ".join(seen) + "]"


def _labels(labels: Sequence[object], most: int = 20) -> str:
    """Show a column's labels, the first ``most`` of a long list."""
    shown = ", ".join(repr(v) for v in labels[:most])
    return f"[{shown}{', ...' if len(labels) > most else ''}]"


def _plain(x: object) -> object:
    """Return numpy scalars as Python scalars (cleaner reprs, same hash)."""
    return x.item() if isinstance(x, np.generic) else x


def _check_mapping(arg: object, name: str) -> Mapping:
    if arg is None:
        return {}
    if not isinstance(arg, Mapping):
        raise TypeError(
            f"{name} must be a mapping column -> list, e.g. {name}="
            + (
                "{'SEX': ['F', 'M']}"
                if name == "categories"
                else "{'AGE': [0, 18, 65]}"
            )
            + f"; got {type(arg).__name__}."
        )
    for col in arg:
        if not isinstance(col, str) or not col:
            raise TypeError(
                f"{name} column names must be non-empty strings (the synthesizers' "
                f"domain is keyed by name); got {col!r}. Rename the column first, "
                "e.g. df.rename(columns=str)."
            )
    return arg


def _check_sequence(values: object, where: str, example: str) -> list:
    """Return ``values`` as a list when it is an ordered collection."""
    if isinstance(values, (str, bytes)):
        raise TypeError(
            f"{where} must be a list, not the string {values!r}; write e.g. {example}."
        )
    if isinstance(values, (Set, Mapping)) or not hasattr(values, "__iter__"):
        raise TypeError(
            f"{where} must be an ordered list (a list, tuple or array), got "
            f"{type(values).__name__}; the order fixes the codes. Write e.g. "
            f"{example}."
        )
    return [_plain(v) for v in values]


def _check_labels(col: str, labels: object) -> tuple[Hashable, ...]:
    where = f"categories[{col!r}]"
    out = _check_sequence(labels, where, f"{where} = ['F', 'M']")
    if not out:
        raise ValueError(
            f"{where} is empty; list every label the column can take, in the order "
            "of their codes."
        )
    for label in out:
        if not pd.api.types.is_scalar(label):
            raise TypeError(
                f"{where} holds {label!r}, which is not a single label; labels are "
                "scalars such as strings or numbers."
            )
        if pd.isna(label):
            raise ValueError(
                f"{where} holds the missing value {label!r}; a missing value cannot be "
                "a label. Fill missing entries with an explicit label (e.g. "
                "df[col].fillna('missing')) and list that label instead."
            )
    first: dict[Hashable, Hashable] = {}
    dups = []
    for label in out:
        if label in first:
            dups.append((first[label], label))
        else:
            first[label] = label
    if dups:
        pairs = ", ".join(
            f"{a!r}" if repr(a) == repr(b) else f"{a!r} and {b!r}" for a, b in dups
        )
        raise ValueError(
            f"{where} lists the same label more than once: {pairs} (equal values, "
            "such as 1, 1.0 and True, are one label). Give each label once."
        )
    return tuple(out)


def _check_edges(col: str, edges: object) -> tuple[Real, ...]:
    where = f"bins[{col!r}]"
    out = _check_sequence(edges, where, f"{where} = [0, 18, 65, 100]")
    wrong = [e for e in out if isinstance(e, bool) or not isinstance(e, Real)]
    if wrong:
        raise TypeError(
            f"{where} holds non-numeric edge(s) {_show(wrong)}; bin edges are "
            "numbers. Declare a column of labels under categories instead."
        )
    if len(out) < 2:
        raise ValueError(
            f"{where} has {len(out)} edge(s); give at least two (one bin [a, b])."
        )
    bad = [e for e in out if not math.isfinite(e)]
    if bad:
        raise ValueError(
            f"{where} holds non-finite edge(s) {_show(bad)}. Edges must be finite: "
            "use a public bound of the column instead (e.g. 0 and 120 for an age) and "
            "clip the data to it before encoding (df[col].clip(lo, hi))."
        )
    for a, b in itertools.pairwise(out):
        if not a < b:
            raise ValueError(
                f"{where} must be strictly increasing, but {a!r} is followed by "
                f"{b!r}. Sort the edges and drop repeated ones."
            )
    return tuple(out)


def _codebook(categories: dict, bins: dict) -> Codebook:
    """Rebuild a :class:`Codebook` (used by pickle and copy)."""
    return Codebook(categories=categories, bins=bins)


class Codebook:
    """A public codebook: ordered labels and bin edges per column, fixed in advance.

    Each column is either categorical, with an ordered list of labels (label ``i``
    gets code ``i``), or binned, with strictly increasing finite edges
    ``e_0 < e_1 < ... < e_k``. Bin ``i`` is the left-closed interval
    ``[e_i, e_{i+1})``, except the last, ``[e_{k-1}, e_k]``, which is closed on both
    sides so that the top edge belongs to the table (as in :func:`numpy.histogram`).
    Values below ``e_0`` or above ``e_k`` are errors, never silently clipped.

    The domain's column order is the order of ``categories``, then the order of
    ``bins``. The codebook is immutable; build a new one to change it.

    Args:
        categories: ``{column: [labels in code order]}``. Labels are scalars
            (strings, numbers, booleans), distinct, none missing; a list must not be
            empty.
        bins: ``{column: [edges]}``, at least two finite, strictly increasing
            numbers per column.

    Raises:
        TypeError: If an argument is not a mapping, a column name is not a string, a
            list of labels or edges is a string, a set or not a list, or an edge is
            not a number.
        ValueError: If the codebook has no column, a column is both categorical and
            binned, a list of labels is empty or repeats a label or holds a missing
            value, or edges are fewer than two, not finite or not strictly
            increasing.

    Privacy:
        The codebook must come from a public specification written before looking at
        the private data, never from the data themselves. A domain read off the data
        leaks it: listing the labels that occur reveals that someone has a rare
        label, and edges at quantiles or at the minimum and maximum reveal values of
        individual records. The synthesizers' guarantee (under adding or removing one
        record) holds for a fixed, public domain, so a codebook derived from the data
        would need its own privacy budget. For the same reason :meth:`encode` refuses
        values outside the codebook instead of adding them. Mapping each record on
        its own (filling a missing value with a public label, clipping to public
        bounds, dropping a record with an unknown label) does not depend on other
        records and is allowed before encoding. Error messages quote offending
        values: they are for the data holder, not for release.

    Examples:
        >>> import pandas as pd
        >>> cb = Codebook(categories={"SEX": ["F", "M"]},
        ...               bins={"AGE": [0, 18, 65, 100]})
        >>> cb.domain
        {'SEX': 2, 'AGE': 3}
        >>> df = pd.DataFrame({"SEX": ["M", "F", "F"], "AGE": [17, 18, 100]})
        >>> codes = cb.encode(df)
        >>> codes.to_dict("list")
        {'SEX': [1, 0, 0], 'AGE': [0, 1, 2]}
        >>> back = cb.decode(codes)
        >>> back["SEX"].tolist()
        ['M', 'F', 'F']
        >>> [str(b) for b in back["AGE"]]
        ['[0, 18)', '[18, 65)', '[65, 100]']
        >>> cb.decode(codes, bins_as="midpoint")["AGE"].tolist()
        [9.0, 41.5, 82.5]
    """

    __slots__ = ("_bins", "_categories", "_columns")

    def __init__(
        self,
        *,
        categories: Mapping[str, Sequence[Hashable]] | None = None,
        bins: Mapping[str, Sequence[float]] | None = None,
    ) -> None:
        cats = _check_mapping(categories, "categories")
        edges = _check_mapping(bins, "bins")
        both = [c for c in cats if c in edges]
        if both:
            raise ValueError(
                f"column(s) {both} are in both categories and bins; a column is "
                "either categorical (labels) or binned (numeric edges). Remove it "
                "from one of them."
            )
        if not cats and not edges:
            raise ValueError(
                "the codebook has no column; give categories={column: [labels]} "
                "and/or bins={column: [edges]} for every column of the table."
            )
        checked_cats = {c: _check_labels(c, v) for c, v in cats.items()}
        checked_bins = {c: _check_edges(c, v) for c, v in edges.items()}
        object.__setattr__(self, "_categories", MappingProxyType(checked_cats))
        object.__setattr__(self, "_bins", MappingProxyType(checked_bins))
        object.__setattr__(self, "_columns", (*checked_cats, *checked_bins))

    # --- immutability ---------------------------------------------------------------

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(
            "Codebook is immutable; build a new Codebook(categories=..., bins=...)."
        )

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Codebook is immutable.")

    def __reduce__(self):
        return (
            _codebook,
            (
                {c: list(v) for c, v in self._categories.items()},
                {c: list(v) for c, v in self._bins.items()},
            ),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Codebook):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple:
        return (tuple(self._categories.items()), tuple(self._bins.items()))

    def __repr__(self) -> str:
        cats = {c: list(v) for c, v in self._categories.items()}
        bins = {c: list(v) for c, v in self._bins.items()}
        return f"Codebook(categories={cats}, bins={bins})"

    # --- public views ---------------------------------------------------------------

    @property
    def categories(self) -> Mapping[str, tuple[Hashable, ...]]:
        """Read-only ``{column: labels}`` of the categorical columns."""
        return self._categories

    @property
    def bins(self) -> Mapping[str, tuple[float, ...]]:
        """Read-only ``{column: edges}`` of the binned columns."""
        return self._bins

    @property
    def columns(self) -> tuple[str, ...]:
        """Every column, in domain order (categories first, then bins)."""
        return self._columns

    @property
    def domain(self) -> dict[str, int]:
        """The synthesizers' public domain ``{column: number of codes}`` (a copy).

        A categorical column has one code per label; a binned column with ``k + 1``
        edges has ``k`` codes.
        """
        out = {c: len(v) for c, v in self._categories.items()}
        out.update({c: len(v) - 1 for c, v in self._bins.items()})
        return out

    def intervals(self, column: str) -> tuple[pd.Interval, ...]:
        """Return the bins of a binned column as :class:`pandas.Interval` objects.

        All are ``closed="left"`` except the last, ``closed="both"``.

        Raises:
            KeyError: If ``column`` is not a binned column.

        Examples:
            >>> Codebook(bins={"X": [0, 1, 2]}).intervals("X")
            (Interval(0, 1, closed='left'), Interval(1, 2, closed='both'))
        """
        if column not in self._bins:
            raise KeyError(
                f"{column!r} is not a binned column; the binned columns are "
                f"{list(self._bins)}."
            )
        e = self._bins[column]
        k = len(e) - 1
        return tuple(
            pd.Interval(e[i], e[i + 1], closed="both" if i == k - 1 else "left")
            for i in range(k)
        )

    # --- encode / decode ------------------------------------------------------------

    def _check_columns(self, df: object, name: str, what: str) -> pd.DataFrame:
        if not isinstance(df, pd.DataFrame):
            raise TypeError(
                f"{name} must be a pandas DataFrame with columns "
                f"{list(self._columns)}, got {type(df).__name__}."
            )
        cols = list(df.columns)
        dup = sorted({repr(c) for c in cols if cols.count(c) > 1})
        if dup:
            raise ValueError(
                f"{name} has repeated column name(s) {dup}; give each column once."
            )
        missing = [c for c in self._columns if c not in cols]
        if missing:
            raise ValueError(
                f"{name} lacks column(s) {missing} that the codebook declares; "
                f"{what} needs every column of the codebook {list(self._columns)}."
            )
        extra = [c for c in cols if c not in self._columns]
        if extra:
            raise ValueError(
                f"{name} has column(s) {extra} that the codebook does not cover. Add "
                "them to the codebook (categories={column: [labels]} or "
                "bins={column: [edges]}, from a public specification), or select "
                f"the codebook's columns first: {name}[list(codebook.columns)]."
            )
        return df

    def encode(self, df: pd.DataFrame) -> pd.DataFrame:
        """Return the synthesizers' integer codes of ``df``.

        Every value is checked before anything is returned: a categorical value
        must be one of its column's labels, a binned value a number inside
        ``[e_0, e_k]``.

        Args:
            df: A DataFrame with exactly the codebook's columns (any order). A column
                the codebook does not cover is an error, not silently dropped.

        Returns:
            A DataFrame of int64 codes, columns in domain order (:attr:`columns`),
            with ``df``'s index; pass it with :attr:`domain` to a synthesizer's
            ``fit``.

        Raises:
            TypeError: If ``df`` is not a DataFrame, or a binned column holds values
                that are not numbers (strings, booleans, dates).
            ValueError: If a codebook column is missing, ``df`` has a column the
                codebook does not cover or a repeated column name, a value is
                missing (NaN/None), a categorical value is not a label, or a binned
                value lies outside the edges. The message names the column and the
                offending values.
        """
        df = self._check_columns(df, "df", "encode")
        out = {}
        for col in self._columns:
            if col in self._categories:
                out[col] = self._encode_labels(df, col)
            else:
                out[col] = self._encode_bins(df, col)
        return pd.DataFrame(out, index=df.index)

    @staticmethod
    def _check_missing(df: pd.DataFrame, col: str, missing: np.ndarray) -> None:
        if missing.any():
            rows = df.index[missing][:_SHOW].tolist()
            raise ValueError(
                f"column {col!r} has {int(missing.sum())} missing value(s) (NaN/None), "
                f"e.g. at rows {rows}. The codebook has no missing code: fill them "
                "with a public label declared in the codebook (e.g. "
                f"df[{col!r}].fillna('missing') with 'missing' added to "
                f"categories[{col!r}]) or drop those rows before encoding."
            )

    def _encode_labels(self, df: pd.DataFrame, col: str) -> np.ndarray:
        labels = self._categories[col]
        values = np.asarray(df[col].to_numpy(), dtype=object)
        self._check_missing(df, col, np.asarray(pd.isna(values), dtype=bool))
        codes = pd.Index(labels, dtype=object).get_indexer(values)
        unknown = codes < 0
        if unknown.any():
            raise ValueError(
                f"column {col!r} has {int(unknown.sum())} value(s) that are not among "
                f"its labels, e.g. {_show(values[unknown])}; the labels are "
                f"{_labels(labels)}. If these "
                f"values belong to the public specification, add them to "
                f"categories[{col!r}]; otherwise map them to a declared label (e.g. "
                "'other') or drop those rows before encoding. Do not add labels "
                "because they occur in the data."
            )
        return codes.astype(np.int64)

    def _encode_bins(self, df: pd.DataFrame, col: str) -> np.ndarray:
        edges = self._bins[col]
        values = df[col].to_numpy()
        kind = values.dtype.kind
        if kind == "O":
            wrong = [
                v
                for v in values
                if not (pd.api.types.is_scalar(v) and pd.isna(v))
                and (isinstance(v, (bool, np.bool_)) or not isinstance(v, Real))
            ]
        elif kind in "iuf":
            wrong = []
        else:
            wrong = list(df[col])  # dates, strings: quote them as pandas shows them
        if wrong:
            raise TypeError(
                f"column {col!r} is binned but holds value(s) that are not numbers, "
                f"e.g. {_show(wrong)}. Convert the column to numbers first (e.g. "
                f"pd.to_numeric(df[{col!r}])), or declare it under categories if "
                "its values are labels."
            )
        missing = np.asarray(pd.isna(values), dtype=bool)
        self._check_missing(df, col, missing)
        x = np.asarray(values, dtype=np.float64)
        lo, hi = edges[0], edges[-1]
        outside = ~((x >= lo) & (x <= hi))
        if outside.any():
            bad = np.unique(x[outside])
            raise ValueError(
                f"column {col!r} has {int(outside.sum())} value(s) outside its bins "
                f"[{lo!r}, {hi!r}], e.g. {_show(bad)}. Widen the first or last edge "
                "to a public bound of the column, or clip the column to public "
                f"bounds before encoding (df[{col!r}].clip({lo!r}, {hi!r})); never "
                "choose edges from the data."
            )
        e = np.asarray(edges, dtype=np.float64)
        codes = np.searchsorted(e, x, side="right") - 1
        # The top edge belongs to the last bin, which is closed on both sides.
        return np.minimum(codes, len(edges) - 2).astype(np.int64)

    def decode(
        self, codes: pd.DataFrame, *, bins_as: BinsAs = "interval"
    ) -> pd.DataFrame:
        """Return sampled integer codes as the user's labels and bins.

        Args:
            codes: Integer codes with exactly the codebook's columns (any order), such
                as a synthesizer's ``sample`` after ``fit(..., codebook.domain)``.
            bins_as: How a binned column comes back: ``"interval"`` gives each row
                its bin as a :class:`pandas.Interval` (object dtype; see
                :meth:`intervals`), ``"midpoint"`` gives the bin's midpoint
                ``(e_i + e_{i+1}) / 2`` as a float, a representative value and not
                a sample from inside the bin.

        Returns:
            A DataFrame, columns in domain order, with ``codes``'s index:
            categorical columns hold the labels (dtype inferred from the labels),
            binned ones intervals or midpoints.

        Raises:
            TypeError: If ``codes`` is not a DataFrame, or a column is not integer.
            ValueError: If ``bins_as`` is unknown, columns do not match the codebook,
                or a code is not an integer inside ``0 .. size - 1`` of its column.
        """
        if bins_as not in ("interval", "midpoint"):
            raise ValueError(
                f"bins_as must be 'interval' or 'midpoint', got {bins_as!r}."
            )
        codes = self._check_columns(codes, "codes", "decode")
        domain = self.domain
        ints = {}
        for col in self._columns:
            values = codes[col].to_numpy()
            kind = values.dtype.kind
            if kind == "f":
                if not np.all(np.isfinite(values) & (values == np.round(values))):
                    bad = values[~(np.isfinite(values) & (values == np.round(values)))]
                    raise ValueError(
                        f"codes[{col!r}] holds non-integer value(s) {_show(bad)}; "
                        "decode integer codes sampled from a synthesizer fitted on "
                        "codebook.domain."
                    )
            elif kind not in "iu":
                raise TypeError(
                    f"codes[{col!r}] must hold integer codes, got dtype "
                    f"{values.dtype}; decode a synthesizer's sample, not labels."
                )
            c = values.astype(np.int64)
            size = domain[col]
            out_of_range = (c < 0) | (c >= size)
            if out_of_range.any():
                raise ValueError(
                    f"codes[{col!r}] has {int(out_of_range.sum())} code(s) outside "
                    f"0..{size - 1}, e.g. {_show(np.unique(c[out_of_range]))}; the "
                    "codes do not come from this codebook's domain. Fit and sample "
                    "the synthesizer with codebook.domain."
                )
            ints[col] = c
        out = {}
        for col, c in ints.items():
            if col in self._categories:
                out[col] = pd.Index(list(self._categories[col])).take(c).to_numpy()
            elif bins_as == "interval":
                out[col] = np.array(self.intervals(col), dtype=object)[c]
            else:
                e = np.asarray(self._bins[col], dtype=np.float64)
                out[col] = ((e[:-1] + e[1:]) / 2.0)[c]
        return pd.DataFrame(out, index=codes.index)
