"""American Community Survey (ACS) PUMS person files and the folktables tasks.

The raw person table is read by folktables itself (``ACSDataSource.get_data`` with
``download=False``), after dpnotes has made sure the CSV is there and is the real file:
folktables' own download does not check the HTTP status and would save a census error
page as a "zip". Files are laid out as folktables expects them,
``<data root>/acs/<year>/1-Year/psam_pNN.csv``.
"""

from __future__ import annotations

import os
import random
from typing import NamedTuple

import pandas as pd

from dpnotes.data.files import (
    ZIP_MAGIC,
    DataIntegrityError,
    KnownFile,
    check_not_html,
    data_root,
    ensure_file,
    lookup,
)
from dpnotes.validation import check_choice, check_int

__all__ = [
    "ACS_EXTRACTS",
    "ACS_STATES",
    "ACS_STATE_CODES",
    "ACS_TASKS",
    "ACSTaskData",
    "acs_person_file",
    "load_acs_extract",
    "load_acs_person",
    "load_acs_task",
]

#: Two-letter postal codes folktables supports (50 states and Puerto Rico) -> FIPS code.
ACS_STATE_CODES: dict[str, str] = {
    "AL": "01", "AK": "02", "AZ": "04", "AR": "05", "CA": "06", "CO": "08", "CT": "09",
    "DE": "10", "FL": "12", "GA": "13", "HI": "15", "ID": "16", "IL": "17", "IN": "18",
    "IA": "19", "KS": "20", "KY": "21", "LA": "22", "ME": "23", "MD": "24", "MA": "25",
    "MI": "26", "MN": "27", "MS": "28", "MO": "29", "MT": "30", "NE": "31", "NV": "32",
    "NH": "33", "NJ": "34", "NM": "35", "NY": "36", "NC": "37", "ND": "38", "OH": "39",
    "OK": "40", "OR": "41", "PA": "42", "RI": "44", "SC": "45", "SD": "46", "TN": "47",
    "TX": "48", "UT": "49", "VT": "50", "VA": "51", "WA": "53", "WV": "54", "WI": "55",
    "WY": "56", "PR": "72",
}  # fmt: skip

#: The valid ``state`` arguments, in folktables' order.
ACS_STATES: tuple[str, ...] = tuple(ACS_STATE_CODES)

#: folktables' predefined problems that :func:`load_acs_task` accepts.
ACS_TASKS: tuple[str, ...] = (
    "ACSEmployment",
    "ACSIncome",
    "ACSPublicCoverage",
    "ACSMobility",
    "ACSTravelTime",
    "ACSIncomePovertyRatio",
    "ACSHealthInsurance",
)

#: Extracts that :func:`load_acs_extract` accepts (files under ``acs/extracts/``).
ACS_EXTRACTS: tuple[str, ...] = ("ACSEmployment_NY_2018_sample20000",)

_FIRST_YEAR = 2014  # folktables refuses earlier years
_CENSUS_ZIP = (
    "https://www2.census.gov/programs-surveys/acs/data/pums/{year}/1-Year/csv_p{st}.zip"
)


class ACSTaskData(NamedTuple):
    """A folktables task as three aligned pandas objects (unpacks as a 3-tuple).

    Attributes:
        features: One row per person, the task's feature columns (float64, NaN -> 0 as
            folktables' postprocessing does).
        label: The binary target (bool), named after the ACS column (e.g. ``ESR``).
        group: The task's group column (``RAC1P`` for all predefined tasks).
    """

    features: pd.DataFrame
    label: pd.Series
    group: pd.Series


def _check_state(state: str) -> str:
    if not isinstance(state, str):
        raise TypeError(
            f"state must be a two-letter postal code string such as 'NM', got "
            f"{type(state).__name__}."
        )
    return check_choice(
        state.strip().upper(), ACS_STATES, "state (two-letter postal code)"
    )


def _check_year(year: int) -> int:
    year = check_int(year, "year", minimum=_FIRST_YEAR)
    return year


def acs_person_file(state: str, year: int = 2018) -> KnownFile:
    """Return the provenance record of one ACS 1-Year person file.

    Files listed in :data:`dpnotes.data.KNOWN_FILES` (New Mexico, Wyoming and New York
    2018) come with a pinned sha256; other states and years are checked for format only.

    Args:
        state: Two-letter postal code (case-insensitive), one of :data:`ACS_STATES`.
        year: Survey year, at least 2014.

    Returns:
        The :class:`~dpnotes.data.KnownFile` record, with ``relpath`` in folktables'
        layout under ``acs/``.

    Raises:
        ValueError: For an unknown state or a year before 2014.
    """
    state = _check_state(state)
    year = _check_year(year)
    code = ACS_STATE_CODES[state]
    # folktables' naming: psam_pNN.csv from 2017 on, ssYYpst.csv before.
    name = (
        f"psam_p{code}.csv"
        if year >= 2017
        else f"ss{str(year)[-2:]}p{state.lower()}.csv"
    )
    relpath = f"acs/{year}/1-Year/{name}"
    known = lookup(relpath)
    if known is not None:
        return known
    return KnownFile(
        relpath=relpath,
        sha256=None,
        urls=(_CENSUS_ZIP.format(year=year, st=state.lower()),),
        source_page="https://www.census.gov/programs-surveys/acs/microdata/access.html",
        licence="US government work, public domain",
        rows=None,
        size=None,
        description=f"ACS PUMS {year} 1-Year person file, {state} (state {code})",
        citation="ding2021folktables",
        archive_member=name,
        magic=ZIP_MAGIC,
    )


def _check_pums_csv(path: os.PathLike[str] | str) -> None:
    """Check a PUMS CSV's header and last line (catches HTML, empty and cut files)."""
    check_not_html(path, "an ACS PUMS person CSV file")
    with open(path, "rb") as handle:
        header = handle.readline().rstrip(b"\r\n")
        if not (header.startswith(b"RT,") or b"SERIALNO" in header):
            raise DataIntegrityError(
                f"{path} does not look like an ACS PUMS person file: its first line "
                f"starts with {header[:40]!r} instead of 'RT,SERIALNO,...'. Delete it "
                "and load again to re-download it."
            )
        n_cols = header.count(b",") + 1
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - 65536))
        tail = handle.read()
    if not tail.endswith(b"\n"):
        raise DataIntegrityError(
            f"{path} is truncated: it does not end with a line break, so its last "
            "record is incomplete. Delete it and load again to re-download it."
        )
    lines = tail.rstrip(b"\r\n").split(b"\n")
    last = lines[-1].rstrip(b"\r")
    if last and last.count(b",") + 1 != n_cols:
        raise DataIntegrityError(
            f"{path} looks truncated or corrupt: its last line has "
            f"{last.count(b',') + 1} fields but the header has {n_cols}. Delete it and "
            "load again to re-download it."
        )


def load_acs_person(
    state: str, year: int = 2018, root: str | os.PathLike[str] | None = None
) -> pd.DataFrame:
    """Load the raw ACS PUMS 1-Year person table of one state through folktables.

    The CSV is looked up as ``<root>/acs/<year>/1-Year/psam_pNN.csv``; when it is
    missing and downloads are allowed, the census zip ``csv_pXX.zip`` is downloaded,
    checked (zip magic, not HTML, HTTP status, length) and the CSV extracted atomically.
    Known files (NM, WY, NY 2018) are checked against their sha256; every file is
    checked for an HTML body, a header starting with ``RT,``/``SERIALNO`` and a complete
    last line.

    Args:
        state: Two-letter postal code, case-insensitive (one of :data:`ACS_STATES`).
        year: Survey year, at least 2014 (the book uses 2018).
        root: Data root; see :func:`dpnotes.data.data_root`.

    Returns:
        The person table as folktables returns it (one row per person record, 286
        columns for 2018). New Mexico 2018 has 19,247 rows.

    Raises:
        ValueError: For an unknown state, a bad year, or a file that is HTML, truncated,
            or has the wrong sha256 (:class:`~dpnotes.data.DataIntegrityError`).
        DataNotFoundError: If the file is missing and cannot be downloaded (offline).

    References:
        ding2021folktables
    """
    from folktables import ACSDataSource

    state = _check_state(state)
    info = acs_person_file(state, year)
    path = ensure_file(info, root)
    _check_pums_csv(path)
    source = ACSDataSource(
        survey_year=str(int(year)),
        horizon="1-Year",
        survey="person",
        root_dir=str(data_root(root) / "acs"),
    )
    # folktables reseeds Python's global `random` module; keep the caller's state.
    saved = random.getstate()
    try:
        frame = source.get_data(states=[state], download=False)
    finally:
        random.setstate(saved)
    if len(frame) == 0:
        raise DataIntegrityError(
            f"{path} has a header but no person records. Delete it and load again to "
            "re-download it."
        )
    return frame


def _problem(task: str):
    import folktables

    return getattr(folktables, task)


def load_acs_task(
    task: str,
    state: str,
    year: int = 2018,
    root: str | os.PathLike[str] | None = None,
) -> ACSTaskData:
    """Load a folktables prediction task (features, label, group) for one state.

    Args:
        task: One of :data:`ACS_TASKS`, e.g. ``"ACSEmployment"`` (label ``ESR == 1``,
            group ``RAC1P``).
        state: Two-letter postal code (see :func:`load_acs_person`).
        year: Survey year, at least 2014.
        root: Data root; see :func:`dpnotes.data.data_root`.

    Returns:
        An :class:`ACSTaskData` ``(features, label, group)``; it unpacks as a 3-tuple.
        The three objects share a 0..n-1 index.

    Raises:
        ValueError: For an unknown task or state, or a bad file (see
            :func:`load_acs_person`).
        DataNotFoundError: If the file is missing and cannot be downloaded.

    References:
        ding2021folktables
    """
    if not isinstance(task, str):
        raise TypeError(f"task must be a string such as 'ACSEmployment', got {task!r}.")
    check_choice(task, ACS_TASKS, "task")
    _check_state(state)
    problem = _problem(task)
    frame = load_acs_person(state, year, root)
    features, label, group = problem.df_to_pandas(frame)
    return ACSTaskData(features, label.iloc[:, 0], group.iloc[:, 0])


def load_acs_extract(
    name: str = "ACSEmployment_NY_2018_sample20000",
    root: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Load a stored extract of a folktables task, ``<root>/acs/extracts/<name>.csv``.

    The only extract is ``ACSEmployment_NY_2018_sample20000``: a 20,000-row uniform
    random subsample of ACSEmployment for New York 2018 (the state of the
    stratification paper), 16 feature columns plus ``ESR`` already mapped to 0/1. Its
    subsample seed is unknown. It stands in for the full New York file (138 MB) when
    that cannot be downloaded; figures computed on it must say so.

    Args:
        name: One of :data:`ACS_EXTRACTS`.
        root: Data root; see :func:`dpnotes.data.data_root`.

    Returns:
        The extract as a DataFrame of int64 columns.

    Raises:
        ValueError: For an unknown name, or a file with the wrong sha256, HTML or a
            malformed table.
        DataNotFoundError: If the file is missing and cannot be downloaded.

    References:
        ding2021folktables
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {type(name).__name__}.")
    check_choice(name, ACS_EXTRACTS, "ACS extract name")
    info = lookup(f"acs/extracts/{name}.csv")
    assert info is not None  # every name in ACS_EXTRACTS is registered
    path = ensure_file(info, root)
    check_not_html(path, "a CSV extract of an ACS task")
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise DataIntegrityError(
            f"{path} is not a readable CSV table ({err}). Delete it and load again."
        ) from err
    expected = [*_problem("ACSEmployment").features, "ESR"]
    missing = sorted(set(expected) - set(frame.columns))
    if missing or frame.isna().any().any():
        raise DataIntegrityError(
            f"{path} is not the expected extract: missing columns {missing} or empty "
            "cells (a truncated file?). Delete it and load again."
        )
    return frame
