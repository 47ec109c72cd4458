"""ACSEmployment with the stratification paper's ten columns, as public integer codes.

The paper's synthetic-data experiments (Rosenblatt, Stoyanovich, Musco 2024, appendix
Table 2) use ten columns of folktables' ACSEmployment task: AGEP and SCHL cut into five
bins, MAR, DIS, ESP, MIL, DREM, SEX, RAC1P and the label ESR. Every code here comes from
a public codebook fixed in advance: the bins are equal-width over the population's
public range (the authors cut at the observed range, which reads the private data), and
"not applicable" gets its own code. The population is people aged 17 to 89, the
population of the stored 20,000-row New York sample; the same filter applies to a full
state file.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from dpnotes.data.acs import acs_person_file, load_acs_extract, load_acs_task
from dpnotes.data.splits import holdout_split
from dpnotes.validation import check_choice

__all__ = [
    "EMPLOYMENT_COLUMNS",
    "EMPLOYMENT_DOMAIN",
    "EMPLOYMENT_FILES",
    "EMPLOYMENT_GROUPINGS",
    "EMPLOYMENT_LABEL",
    "EMPLOYMENT_SOURCES",
    "employment_labels",
    "encode_employment",
    "load_employment",
    "split_employment",
]

#: The paper's ten columns, in the order used everywhere.
EMPLOYMENT_COLUMNS: tuple[str, ...] = (
    "AGEP",
    "SCHL",
    "MAR",
    "DIS",
    "ESP",
    "MIL",
    "DREM",
    "SEX",
    "RAC1P",
    "ESR",
)

#: The public domain: number of codes per column.
EMPLOYMENT_DOMAIN: dict[str, int] = {
    "AGEP": 5,
    "SCHL": 5,
    "MAR": 5,
    "DIS": 2,
    "ESP": 9,
    "MIL": 5,
    "DREM": 3,
    "SEX": 2,
    "RAC1P": 9,
    "ESR": 2,
}

#: Data sources: the stored New York sample, or a state's full person file.
EMPLOYMENT_SOURCES: tuple[str, ...] = ("NY-sample", "NM", "WY", "NY", "CA")

#: The label column (employed or not); the other nine columns are the features.
EMPLOYMENT_LABEL = "ESR"

#: The groupings of the stratification paper: the attributes whose intersection
#: defines the groups (the strata of the stratified synthesizers, and the groups every
#: method is evaluated on).
EMPLOYMENT_GROUPINGS: dict[str, list[str]] = {
    "SEX": ["SEX"],
    "RAC1P": ["RAC1P"],
    "SEX_RAC1P": ["SEX", "RAC1P"],
}

#: The file under the data root that each source reads: the stored sample's, else the
#: state's 2018 person file (those of New York and California are downloaded on first
#: use, so ``--set datasets=NY`` runs the paper's state where the network is there).
EMPLOYMENT_FILES: dict[str, str] = {
    "NY-sample": "acs/extracts/ACSEmployment_NY_2018_sample20000.csv",
    **{s: acs_person_file(s, 2018).relpath for s in EMPLOYMENT_SOURCES[1:]},
}

_AGE_RANGE = (17, 89)
_SCHL_RANGE = (1, 24)


def _equal_width_codes(x: np.ndarray, lo: float, hi: float, name: str) -> np.ndarray:
    if np.any((x < lo) | (x > hi)):
        bad = x[(x < lo) | (x > hi)][:3].tolist()
        raise ValueError(
            f"{name} has values outside the public range {lo}..{hi} (e.g. {bad}); "
            "filter the population first (load_employment does)."
        )
    inner = np.linspace(lo, hi, 6)[1:-1]
    # Right-closed bins with the lowest value in the first bin, as pandas.cut.
    return np.searchsorted(inner, x, side="left")


def _mapped(x: np.ndarray, mapping: dict[float, int], name: str) -> np.ndarray:
    out = np.full(x.shape, -1, dtype=np.int64)
    for value, code in mapping.items():
        out[x == value] = code
    if np.any(out < 0):
        bad = sorted(set(x[out < 0].tolist()))[:5]
        raise ValueError(
            f"{name} has values {bad} outside its public codebook "
            f"{sorted(mapping)}; check the file or the column."
        )
    return out


def encode_employment(frame: pd.DataFrame) -> pd.DataFrame:
    """Map raw ACS values of the ten columns to codes of :data:`EMPLOYMENT_DOMAIN`.

    Args:
        frame: Raw values (folktables' ACSEmployment features plus ``ESR``, as 0/1 or
            bool); "not applicable" may be NaN, 0 or -1.

    Returns:
        A DataFrame of int64 codes with columns :data:`EMPLOYMENT_COLUMNS`.

    Raises:
        ValueError: If a column is missing or holds a value outside the codebook.
    """
    missing = [c for c in EMPLOYMENT_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(
            f"the frame lacks column(s) {missing}; pass folktables' ACSEmployment "
            "features with the label as ESR."
        )

    def col(name: str) -> np.ndarray:
        return np.nan_to_num(frame[name].to_numpy(dtype=float), nan=0.0)

    codes = {
        "AGEP": _equal_width_codes(col("AGEP"), *_AGE_RANGE, "AGEP"),
        "SCHL": _equal_width_codes(col("SCHL"), *_SCHL_RANGE, "SCHL"),
        "MAR": _mapped(col("MAR"), {v: v - 1 for v in range(1, 6)}, "MAR"),
        "DIS": _mapped(col("DIS"), {1: 0, 2: 1}, "DIS"),
        "ESP": _mapped(col("ESP"), {v: v for v in range(0, 9)}, "ESP"),
        "MIL": _mapped(col("MIL"), {-1: 0, 0: 0, 1: 1, 2: 2, 3: 3, 4: 4}, "MIL"),
        "DREM": _mapped(col("DREM"), {-1: 0, 0: 0, 1: 1, 2: 2}, "DREM"),
        "SEX": _mapped(col("SEX"), {1: 0, 2: 1}, "SEX"),
        "RAC1P": _mapped(col("RAC1P"), {v: v - 1 for v in range(1, 10)}, "RAC1P"),
        "ESR": _mapped(col("ESR"), {0: 0, 1: 1}, "ESR"),
    }
    return pd.DataFrame({c: codes[c].astype(np.int64) for c in EMPLOYMENT_COLUMNS})


def load_employment(
    source: str = "NY-sample", root: str | os.PathLike[str] | None = None
) -> pd.DataFrame:
    """Load ACSEmployment 2018 (ages 17-89) as codes of :data:`EMPLOYMENT_DOMAIN`.

    Args:
        source: ``"NY-sample"`` (the stored 20,000-row New York sample, closest to the
            paper) or a state code whose full person file is available (``"NM"``,
            ``"WY"`` offline; ``"NY"``, ``"CA"`` after a download).
        root: Data root (see :func:`dpnotes.data.data_root`).

    Returns:
        The encoded table, one row per person.

    Raises:
        ValueError: For an unknown source or a malformed file.
        DataNotFoundError: If the file is missing and cannot be downloaded.

    References:
        rosenblatt2024stratification (appendix Table 2); ding2021folktables.
    """
    check_choice(source, EMPLOYMENT_SOURCES, "employment data source")
    if source == "NY-sample":
        raw = load_acs_extract("ACSEmployment_NY_2018_sample20000", root)
    else:
        features, label, _ = load_acs_task("ACSEmployment", source, 2018, root)
        raw = features.assign(ESR=label.astype(int).to_numpy())
    raw = raw[(raw["AGEP"] > 16) & (raw["AGEP"] < 90)].reset_index(drop=True)
    return encode_employment(raw)


def split_employment(
    source: str = "NY-sample",
    *,
    test_share: float = 0.2,
    rows: int | None = None,
    root: str | os.PathLike[str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the fixed train/test split of a source (a permutation with seed 0).

    The split is the same on every call, so every experiment cell sees the same
    training records. Synthesizers are fitted on the training part only; the test
    part is the held-out real data of the evaluation (and its group proportions the
    public stratum weights).

    Args:
        source: A source of :func:`load_employment`.
        test_share: The share of records in the test part, in (0, 1).
        rows: Keep only this many records of the permutation first (smoke runs);
            ``None`` keeps all.
        root: Data root (see :func:`dpnotes.data.data_root`).

    Returns:
        ``(train, test)``, each with a fresh 0-based index.

    Raises:
        ValueError: For an unknown source or a share outside (0, 1).
    """
    if not 0.0 < test_share < 1.0:
        raise ValueError(f"test_share must be in (0, 1), got {test_share!r}.")
    df = load_employment(source, root)
    # Rows in the permutation's order (not sorted): the order the synthesizers and
    # classifiers have always seen.
    train_rows, test_rows = holdout_split(
        len(df),
        test_share=test_share,
        rng=np.random.default_rng(0),
        rows=rows,
        sort=False,
    )
    test = df.iloc[test_rows].reset_index(drop=True)
    train = df.iloc[train_rows].reset_index(drop=True)
    return train, test


def employment_labels() -> dict[str, list[str]]:
    """Return readable labels for every code (for tables and figure axes)."""
    age = np.linspace(*_AGE_RANGE, 6)
    schl = np.linspace(*_SCHL_RANGE, 6)
    return {
        "AGEP": [f"{age[i]:.0f}-{age[i + 1]:.0f}" for i in range(5)],
        "SCHL": [f"{schl[i]:.0f}-{schl[i + 1]:.0f}" for i in range(5)],
        "MAR": ["married", "widowed", "divorced", "separated", "never married"],
        "DIS": ["disability", "no disability"],
        "ESP": [f"ESP {v}" for v in range(9)],
        "MIL": ["n/a", "active duty", "veteran", "reserves", "never served"],
        "DREM": ["n/a", "cognitive difficulty", "none"],
        "SEX": ["male", "female"],
        "RAC1P": [
            "White",
            "Black",
            "American Indian",
            "Alaska Native",
            "AI/AN other",
            "Asian",
            "NH/PI",
            "Other",
            "Two or more",
        ],
        "ESR": ["not employed", "employed"],
    }
