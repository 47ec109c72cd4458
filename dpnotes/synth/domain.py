"""Public domains and the validation of data against them.

A domain is an ordered mapping ``attribute -> number of values``; data are integer codes
``0 .. size - 1`` per attribute. Domains and every discretisation that produces the
codes are public inputs fixed before looking at the private data (a bin edge chosen from
the data would leak it), so this module only *checks* data against a domain and never
derives one from data.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "Domain",
    "check_data",
    "check_domain",
    "domain_cells",
    "drop_attributes",
]

#: The type of a public domain: attribute name -> number of values (at least 1).
Domain = Mapping[str, int]


def check_domain(domain: object, name: str = "domain") -> dict[str, int]:
    """Return ``domain`` as a plain ordered dict after checking it.

    Args:
        domain: A mapping from attribute name (string) to its number of values.
        name: Name used in error messages.

    Returns:
        A new ``dict`` with the same order.

    Raises:
        TypeError: If ``domain`` is not a mapping.
        ValueError: If it is empty, or a name is not a string, or a size is not a
            positive integer.

    Examples:
        >>> check_domain({"SEX": 2, "AGEP": 5})
        {'SEX': 2, 'AGEP': 5}
    """
    if not isinstance(domain, Mapping):
        raise TypeError(
            f"{name} must be a mapping attribute -> number of values, e.g. "
            f"{{'SEX': 2, 'AGEP': 5}}; got {type(domain).__name__}."
        )
    if len(domain) == 0:
        raise ValueError(f"{name} is empty; declare at least one attribute.")
    out: dict[str, int] = {}
    for attr, size in domain.items():
        if not isinstance(attr, str):
            raise ValueError(f"{name} attribute names must be strings, got {attr!r}.")
        if (
            isinstance(size, bool)
            or not isinstance(size, (int, np.integer))
            or int(size) < 1
        ):
            raise ValueError(
                f"{name}[{attr!r}] must be a positive integer number of values, "
                f"got {size!r}."
            )
        out[attr] = int(size)
    return out


def domain_cells(domain: Domain, attrs: Iterable[str] | None = None) -> int:
    """Return the number of cells of the marginal on ``attrs`` (default: all).

    >>> domain_cells({"A": 2, "B": 3, "C": 4}, ["A", "C"])
    8
    """
    keys = domain.keys() if attrs is None else attrs
    return int(np.prod([domain[a] for a in keys], dtype=np.int64))


def drop_attributes(domain: Domain, attrs: Sequence[str]) -> dict[str, int]:
    """Return ``domain`` without ``attrs`` (order kept).

    >>> drop_attributes({"A": 2, "B": 3, "C": 4}, ["B"])
    {'A': 2, 'C': 4}
    """
    gone = set(attrs)
    return {a: s for a, s in domain.items() if a not in gone}


def check_data(
    df: object, domain: Domain, name: str = "data", *, allow_empty: bool = False
) -> pd.DataFrame:
    """Check that ``df`` holds exactly the domain's columns, as codes inside it.

    Args:
        df: A DataFrame with one column per attribute of ``domain``.
        domain: The public domain (see :func:`check_domain`).
        name: Name used in error messages.
        allow_empty: Accept a table with the right columns and no rows.

    Returns:
        The data as a new DataFrame of int64 columns in the domain's order.

    Raises:
        TypeError: If ``df`` is not a DataFrame, or a column holds values that are not
            numbers (labels such as ``'F'``): encode those with
            :class:`~dpnotes.synth.codebook.Codebook` first.
        ValueError: If it has no rows (unless ``allow_empty``), columns are missing
            or extra, a value is NaN, not an integer, or outside ``0 .. size - 1``.
    """
    domain = check_domain(domain)
    if not isinstance(df, pd.DataFrame):
        raise TypeError(
            f"{name} must be a pandas DataFrame with columns {list(domain)}, got "
            f"{type(df).__name__}."
        )
    cols = [str(c) for c in df.columns]
    repeated = sorted({c for c in cols if cols.count(c) > 1})
    if repeated:
        raise ValueError(
            f"{name} has column(s) {repeated} more than once; keep one column per "
            "attribute (e.g. df.loc[:, ~df.columns.duplicated()])."
        )
    missing = [a for a in domain if a not in cols]
    extra = [c for c in cols if c not in domain]
    if missing or extra:
        raise ValueError(
            f"{name} columns do not match the domain: missing {missing}, extra "
            f"{extra}. "
            "Select exactly the domain's attributes (df[list(domain)]) or declare the "
            "extra ones in the domain."
        )
    labelled = _non_numeric_columns(df, domain)
    if labelled:
        raise TypeError(
            f"{name} column(s) {list(labelled)} hold values that are not numbers "
            f"(e.g. {labelled}); the synthesizers take integer codes. Encode them "
            "with a public codebook first: cb = dpnotes.synth.Codebook(categories="
            "{column: [labels]}, bins={column: [edges]}), then fit(cb.encode(df), "
            "cb.domain, rng=...) and cb.decode(synth.sample(n, rng=...))."
        )
    if len(df) == 0:
        if allow_empty:
            return pd.DataFrame({a: np.zeros(0, dtype=np.int64) for a in domain})
        raise ValueError(
            f"{name} has no rows; a synthesizer needs at least one record."
        )
    out = {}
    for attr, size in domain.items():
        col = df[attr]
        values = col.to_numpy()
        if col.isna().any():
            raise ValueError(
                f"{name}[{attr!r}] has {int(col.isna().sum())} missing values. Encode "
                "missing as its own public code before fitting."
            )
        if not np.issubdtype(values.dtype, np.integer):
            as_float = np.asarray(values, dtype=float)
            if not np.all(np.isfinite(as_float)) or np.any(
                as_float != np.round(as_float)
            ):
                raise ValueError(
                    f"{name}[{attr!r}] must hold integer codes 0..{size - 1}, got "
                    f"non-integer values such as {values[:3].tolist()}. Discretise "
                    "with public bins first."
                )
        codes = np.asarray(values, dtype=np.int64)
        bad = (codes < 0) | (codes >= size)
        if bad.any():
            raise ValueError(
                f"{name}[{attr!r}] has {int(bad.sum())} value(s) outside the declared "
                f"domain 0..{size - 1} (e.g. {codes[bad][:3].tolist()}). Fix the "
                "encoding or declare a larger domain; the domain must not be read "
                "off the data."
            )
        out[attr] = codes
    return pd.DataFrame(out, index=pd.RangeIndex(len(df)))


def _non_numeric_columns(df: pd.DataFrame, attrs: Iterable[str]) -> dict[str, list]:
    """Return ``{column: up to 3 offending values}`` for columns that are not numbers.

    A column is refused exactly when :func:`check_data` would fail to read it as
    floats (so every input it accepted before is accepted alike); numeric dtypes are
    not inspected.
    """
    out: dict[str, list] = {}
    for attr in attrs:
        values = df[attr].to_numpy()
        if values.dtype.kind in "biufc":
            continue
        try:
            np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            bad: dict[str, object] = {}
            for v in values:
                if pd.api.types.is_scalar(v) and pd.isna(v):
                    continue  # missing values have their own error
                try:
                    float(v)
                except (TypeError, ValueError):
                    bad.setdefault(repr(v), v)
                    if len(bad) == 3:
                        break
            out[attr] = list(bad.values())
    return out
