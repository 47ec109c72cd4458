"""Tabular fairness benchmarks: UCI Adult and the Dutch census 2001.

Both are used by the DPSGD-F chapter (Xu, Du, Wu 2021) and kept with their original
codes; any encoding for a model (one-hot, scaling) is done downstream with a rule fixed
in advance, never chosen by looking at the private data.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pandas as pd

from dpnotes.data.files import (
    DataIntegrityError,
    check_not_html,
    ensure_file,
    file_info,
)

__all__ = [
    "ADULT_CATEGORICAL",
    "ADULT_COLUMNS",
    "ADULT_LABELS",
    "ADULT_NUMERIC",
    "DUTCH_COLUMNS",
    "load_adult",
    "load_dutch",
    "read_arff",
]

#: The 15 standard UCI column names, in file order; ``income`` is the label.
ADULT_COLUMNS: tuple[str, ...] = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)
#: Integer columns of Adult (int64, never missing).
ADULT_NUMERIC: tuple[str, ...] = (
    "age",
    "fnlwgt",
    "education-num",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
)
#: Categorical columns of Adult (pandas ``category``; ``?`` in the files becomes NaN).
ADULT_CATEGORICAL: tuple[str, ...] = tuple(
    c for c in ADULT_COLUMNS if c not in ADULT_NUMERIC
)
#: The two income labels, identical in train and test after stripping the test dots.
ADULT_LABELS: tuple[str, ...] = ("<=50K", ">50K")

#: Columns of the Dutch census 2001 benchmark, in file order (``occupation`` is the
#: label). ``Marital_status`` in the ARFF header is lower-cased here.
DUTCH_COLUMNS: tuple[str, ...] = (
    "sex",
    "age",
    "household_position",
    "household_size",
    "prev_residence_place",
    "citizenship",
    "country_birth",
    "edu_level",
    "economic_status",
    "cur_eco_activity",
    "marital_status",
    "occupation",
)


def _read_adult_file(path: os.PathLike[str] | str) -> pd.DataFrame:
    check_not_html(path, "a UCI Adult data file (comma-separated text)")
    with open(path, encoding="latin-1") as handle:
        first = handle.readline()
    # adult.test starts with the line "|1x3 Cross validator"; adult.data does not.
    skip = 1 if first.startswith("|") else 0
    try:
        frame = pd.read_csv(
            path,
            header=None,
            names=list(ADULT_COLUMNS),
            skiprows=skip,
            skipinitialspace=True,
            dtype=str,
            na_values=["?"],
            keep_default_na=False,
            skip_blank_lines=True,
            encoding="latin-1",
        )
    except (pd.errors.ParserError, ValueError) as err:
        raise DataIntegrityError(
            f"{path} is not a 15-column UCI Adult file ({err}). Delete it and load "
            "again."
        ) from err
    for col in frame.columns:
        frame[col] = frame[col].str.strip()
    # The test file writes its labels with a trailing dot ("<=50K."): drop it.
    frame["income"] = frame["income"].str.rstrip(".")
    bad_label = ~frame["income"].isin(ADULT_LABELS)
    if bad_label.any():
        row = int(np.flatnonzero(bad_label.to_numpy())[0])
        raise DataIntegrityError(
            f"{path} row {row + 1 + skip} has income {frame['income'].iloc[row]!r}, "
            f"not one of {list(ADULT_LABELS)}: the file is truncated or not the UCI "
            "Adult file. Delete it and load again to re-download it."
        )
    for col in ADULT_NUMERIC:
        values = pd.to_numeric(frame[col], errors="coerce")
        if values.isna().any():
            row = int(np.flatnonzero(values.isna().to_numpy())[0])
            raise DataIntegrityError(
                f"{path} row {row + 1 + skip} has a missing or non-numeric {col!r}; "
                "Adult's numeric columns are never missing, so the file is corrupt."
            )
        frame[col] = values.astype(np.int64)
    return frame


def load_adult(
    root: str | os.PathLike[str] | None = None, *, dropna: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Load the UCI Adult train and test files as two DataFrames with the same dtypes.

    Whitespace around values is stripped; the test file's first line
    (``|1x3 Cross validator``) is skipped and the dots after its labels are removed,
    so both splits use ``<=50K`` / ``>50K``. The six numeric columns are int64; the
    others are pandas ``category`` with the same categories in both splits (the
    sorted union of the values seen) and ``income`` has categories
    ``["<=50K", ">50K"]``.

    Missing values: the files write an unknown value as ``?`` (only ``workclass``,
    ``occupation`` and ``native-country`` have any: 2,399 rows of the training file
    and 1,221 of the test file). They become NaN (pandas' missing marker for
    categoricals) and are never a category of their own. With ``dropna=False``
    (default) every row is kept (32,561 train and 16,281 test rows); with
    ``dropna=True`` rows with any missing value are removed (30,162 and 15,060) and the
    index is reset.

    Args:
        root: Data root; see :func:`dpnotes.data.data_root`.
        dropna: Whether to remove rows with a missing value.

    Returns:
        ``(train, test)`` DataFrames with the columns :data:`ADULT_COLUMNS`.

    Raises:
        ValueError: If a file has the wrong sha256, is HTML, or is malformed.
        DataNotFoundError: If a file is missing and cannot be downloaded.

    References:
        kohavi1996adult
    """
    if not isinstance(dropna, bool):
        raise TypeError(f"dropna must be True or False, got {dropna!r}.")
    train = _read_adult_file(ensure_file(file_info("adult/adult.data"), root))
    test = _read_adult_file(ensure_file(file_info("adult/adult.test"), root))
    for col in ADULT_CATEGORICAL:
        if col == "income":
            categories = list(ADULT_LABELS)
        else:
            seen = pd.concat([train[col], test[col]]).dropna().unique()
            categories = sorted(seen)
        dtype = pd.CategoricalDtype(categories)
        train[col] = train[col].astype(dtype)
        test[col] = test[col].astype(dtype)
    if dropna:
        train = train.dropna().reset_index(drop=True)
        test = test.dropna().reset_index(drop=True)
    return train, test


_ATTRIBUTE = re.compile(
    r"^@attribute\s+('[^']*'|\"[^\"]*\"|\S+)\s+(.+)$", re.IGNORECASE
)


def _unquote(token: str) -> str:
    token = token.strip()
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return token[1:-1]
    return token


def read_arff(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read an ARFF file of nominal attributes into a DataFrame of categoricals.

    Only what the fairness benchmarks use is supported: ``@relation``, nominal
    ``@attribute name {v1,v2,...}`` declarations, ``%`` comments and a dense ``@data``
    section; ``?`` is a missing value. Values are kept as the original code strings.
    Each column's categories are the declared values, sorted numerically when they are
    all integers and otherwise kept in declaration order.

    Args:
        path: The ``.arff`` file.

    Returns:
        One categorical column per attribute, in declaration order.

    Raises:
        ValueError: (:class:`~dpnotes.data.DataIntegrityError`) for HTML, a missing
            header or ``@data`` line, a non-nominal attribute, a row with the wrong
            number of fields (e.g. a truncated last line) or an undeclared value.
    """
    check_not_html(path, "an ARFF file")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    lines = text.splitlines()
    names: list[str] = []
    domains: list[list[str]] = []
    data_start = None
    for number, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith("%"):
            continue
        lower = stripped.lower()
        if lower.startswith("@data"):
            data_start = number + 1
            break
        if lower.startswith("@attribute"):
            match = _ATTRIBUTE.match(stripped)
            spec = match.group(2).strip() if match else ""
            if not match or not (spec.startswith("{") and spec.endswith("}")):
                raise DataIntegrityError(
                    f"{path} line {number + 1}: only nominal attributes "
                    f"('@attribute name {{a,b}}') are supported, got {stripped[:80]!r}."
                )
            names.append(_unquote(match.group(1)))
            domains.append([_unquote(v) for v in spec[1:-1].split(",")])
        elif not lower.startswith("@relation"):
            raise DataIntegrityError(
                f"{path} line {number + 1} is not ARFF: {stripped[:80]!r}. Delete the "
                "file and load again."
            )
    if data_start is None or not names:
        raise DataIntegrityError(
            f"{path} has no ARFF header with @attribute lines and an @data line: it is "
            "not an ARFF file or it is truncated. Delete it and load again."
        )
    rows = [
        (number, line)
        for number, line in enumerate(lines[data_start:], start=data_start + 1)
        if line.strip() and not line.lstrip().startswith("%")
    ]
    fields = [[_unquote(v) for v in line.split(",")] for _, line in rows]
    for (number, _), values in zip(rows, fields, strict=True):
        if len(values) != len(names):
            raise DataIntegrityError(
                f"{path} line {number} has {len(values)} fields, expected "
                f"{len(names)}: the file is truncated or corrupt. Delete it and load "
                "again."
            )
    columns = list(zip(*fields, strict=True)) if fields else [()] * len(names)
    frame = {}
    for name, domain, column in zip(names, domains, columns, strict=True):
        values = np.asarray(column, dtype=object)
        unknown = set(values.tolist()) - set(domain) - {"?"}
        if unknown:
            raise DataIntegrityError(
                f"{path}: attribute {name!r} has values {sorted(unknown)[:5]} that its "
                f"declaration {domain} does not list. The file is corrupt."
            )
        if all(v.lstrip("-").isdigit() for v in domain):
            domain = sorted(domain, key=int)
        values[values == "?"] = np.nan
        frame[name] = pd.Categorical(values, categories=domain)
    return pd.DataFrame(frame)


def load_dutch(root: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Load the Dutch census 2001 fairness benchmark (60,420 people, 12 attributes).

    Read from ``<root>/dutch/dutch_census_2001.arff`` as distributed with the Le Quy et
    al. (2022) survey. Every column is a pandas ``category`` of the original code
    strings (see :func:`read_arff`); the file has no missing values. Columns
    (:data:`DUTCH_COLUMNS`):

    - ``sex``: ``1`` = male, ``2`` = female (the protected attribute in the DPSGD-F
      paper; the survey's CSV writes male/female).
    - ``age``: age class code ``1`` to ``17``.
    - ``household_position``, ``household_size``, ``prev_residence_place``,
      ``citizenship``, ``country_birth``, ``edu_level``, ``economic_status``,
      ``cur_eco_activity``, ``marital_status``: census codes (``Marital_status`` in
      the ARFF header is lower-cased here).
    - ``occupation``: the label, ``2_1`` (the survey's high-level occupation, coded 1
      in its CSV) or ``5_4_9`` (coded 0).

    The exact code lists are in the IPUMS / World Bank data dictionary of the Dutch
    Virtual Census 2001 (https://microdata.worldbank.org/index.php/catalog/2102).

    Args:
        root: Data root; see :func:`dpnotes.data.data_root`.

    Returns:
        The data set as a DataFrame of categoricals, columns :data:`DUTCH_COLUMNS`.

    Raises:
        ValueError: If the file has the wrong sha256, is HTML, truncated or not the
            12-attribute benchmark.
        DataNotFoundError: If the file is missing and cannot be downloaded.

    References:
        lequy2022survey
    """
    path = ensure_file(file_info("dutch/dutch_census_2001.arff"), root)
    frame = read_arff(path)
    frame.columns = [c.lower() for c in frame.columns]
    if tuple(frame.columns) != DUTCH_COLUMNS:
        raise DataIntegrityError(
            f"{path} has attributes {list(frame.columns)}, expected "
            f"{list(DUTCH_COLUMNS)}: not the Dutch census benchmark. Delete it and "
            "load again."
        )
    return frame
