"""The three folktables tasks of "Spending privacy budget wisely and fairly".

Rosenblatt, Allen and Stoyanovich (2022) run DPSAGE, SuperQUAIL and FSQ on three
folktables tasks of the 2018 ACS 1-Year person files (their section 5 and appendix C),
each with a reduced, all-categorical feature set, the columns of their appendix
Tables 3-5:

* ``"ACSEmployment"``: 13 features (MAR DIS ESP CIT MIG MIL ANC NATIVITY DEAR DEYE
  DREM SEX RAC1P), target ``ESR`` (``ESR == 1``, employed at work), no filter: every
  person of the file. The paper used California (n = 378,817), which is not
  available offline. This module offers New Mexico (``source="NM"``, 19,247 rows, all
  ages: the paper's population definition) and the stored 20,000-row New York sample
  (``source="NY-sample"``, ages 17 to 89 only, as the sample was drawn); neither is the
  paper's data, and every figure computed on them must say so. California itself
  loads with ``source="CA"`` where the census file can be downloaded.
* ``"ACSPublicCoverage"``: 15 features (MAR SEX DIS ESP CIT MIG MIL ANC NATIVITY DEAR
  DEYE DREM ESR FER RAC1P), target ``PUBCOV`` (``PUBCOV == 1``, has public health
  coverage), folktables' filter: age below 65 and income ``PINCP`` at most $30,000.
  New Mexico: 7,693 rows, the paper's data.
* ``"ACSMobility"``: 13 features (MAR SEX DIS CIT MIL ANC NATIVITY DEAR DEYE DREM
  RAC1P COW ESR), target ``MIG`` (``MIG == 1``: lived in the *same* house a year ago,
  i.e. did **not** move; the paper's "whether a person moved" is the complement),
  folktables' filter: ages 19 to 34 (it drops ``AGEP <= 18`` and ``AGEP >= 35``; the
  paper says "between 18 and 35"). New Mexico: 3,443 rows, the paper's data.

Section 5 of the paper counts 17, 19 and 21 features: those are folktables' full
feature lists; the experiments, and appendix Tables 3-5, use the reduced sets above
(folktables' numeric and high-cardinality columns AGEP, SCHL, RELP, PINCP, ST, GCL,
WKHP, JWMNP dropped, and ESP for Mobility).

Encoding. Every column is categorical, and its codes come from the public 2018 PUMS
data dictionary (:data:`SPENDING_CODEBOOK`), never from the data: code ``i`` of a
column is the ``i``-th value of its codebook entry. folktables maps a blank cell
("N/A", e.g. ESR of a child) to 0, and 0 is the first value of every column that has
an N/A. The targets are 0/1. Values outside the codebook are errors. The task's
columns are the features in the paper's order, then the target
(:data:`SPENDING_FEATURES`, :data:`SPENDING_TARGETS`).

Groups. The sensitive attribute is ``RAC1P`` (recoded race: 1 White alone, 2 Black or
African American alone, 3 American Indian alone, 4 Alaska Native alone, 5 American
Indian and Alaska Native tribes specified, 6 Asian alone, 7 Native Hawaiian and Other
Pacific Islander alone, 8 Some Other Race alone, 9 Two or More Races). The groups are
a public partition of its nine values that covers everyone
(:data:`SPENDING_GROUPINGS`): by default white (RAC1P 1) / black (RAC1P 2) / other
(RAC1P 3-9), the paper's two groups and the rest. In the encoded frame the code of
RAC1P value ``v`` is ``v - 1``; :attr:`SpendingTask.groups` lists codes.

Split. One fixed, data-independent split per data set (a permutation drawn from
``seed``): a test part, an optional disjoint holdout (a stand-in for public data, e.g.
for tuning thresholds), and the training part. Synthesizers and classifiers are fitted
on the training part only; the test part is for evaluation and is never seen by any
fit.

References:
    rosenblatt2022spending: section 5 and appendix C (Tables 3-5).
    ding2021folktables: the task definitions (folktables 0.0.12).
    census2018pums: the 2018 PUMS data dictionary (the codebook).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

import numpy as np
import pandas as pd

from dpnotes.data.acs import ACS_STATES, load_acs_extract, load_acs_person
from dpnotes.data.files import DataIntegrityError
from dpnotes.data.splits import holdout_split
from dpnotes.validation import check_choice, check_columns, check_int

__all__ = [
    "SPENDING_CODEBOOK",
    "SPENDING_FEATURES",
    "SPENDING_GROUPINGS",
    "SPENDING_SENSITIVE",
    "SPENDING_TARGETS",
    "SPENDING_TASKS",
    "SPENDING_VALUE_LABELS",
    "SpendingTask",
    "compare_description",
    "describe_spending",
    "encode_spending",
    "load_spending_raw",
    "load_spending_task",
    "spending_codebook",
    "spending_domain",
]

#: The paper's three tasks, in the order of its section 5.
SPENDING_TASKS: tuple[str, ...] = (
    "ACSEmployment",
    "ACSPublicCoverage",
    "ACSMobility",
)

#: The features of each task, in the column order of the paper's appendix Tables 3-5.
SPENDING_FEATURES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "ACSEmployment": (
            "MAR", "DIS", "ESP", "CIT", "MIG", "MIL", "ANC", "NATIVITY", "DEAR",
            "DEYE", "DREM", "SEX", "RAC1P",
        ),
        "ACSPublicCoverage": (
            "MAR", "SEX", "DIS", "ESP", "CIT", "MIG", "MIL", "ANC", "NATIVITY",
            "DEAR", "DEYE", "DREM", "ESR", "FER", "RAC1P",
        ),
        "ACSMobility": (
            "MAR", "SEX", "DIS", "CIT", "MIL", "ANC", "NATIVITY", "DEAR", "DEYE",
            "DREM", "RAC1P", "COW", "ESR",
        ),
    }
)  # fmt: skip

#: The target column of each task (folktables' label, 1 = the positive class).
SPENDING_TARGETS: Mapping[str, str] = MappingProxyType(
    {"ACSEmployment": "ESR", "ACSPublicCoverage": "PUBCOV", "ACSMobility": "MIG"}
)

#: The sensitive attribute of every task.
SPENDING_SENSITIVE = "RAC1P"

#: The feature values of the 2018 PUMS data dictionary, in code order (code ``i`` is
#: the ``i``-th value). 0 stands for a blank cell ("N/A"), as folktables writes it.
SPENDING_CODEBOOK: Mapping[str, tuple[int, ...]] = MappingProxyType(
    {
        "MAR": (1, 2, 3, 4, 5),
        "SEX": (1, 2),
        "DIS": (1, 2),
        "ESP": (0, 1, 2, 3, 4, 5, 6, 7, 8),
        "CIT": (1, 2, 3, 4, 5),
        "MIG": (0, 1, 2, 3),
        "MIL": (0, 1, 2, 3, 4),
        "ANC": (1, 2, 3, 4, 8),
        "NATIVITY": (1, 2),
        "DEAR": (1, 2),
        "DEYE": (1, 2),
        "DREM": (0, 1, 2),
        "RAC1P": (1, 2, 3, 4, 5, 6, 7, 8, 9),
        "COW": (0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
        "ESR": (0, 1, 2, 3, 4, 5, 6),
        "FER": (0, 1, 2),
    }
)

#: A short label for each value of :data:`SPENDING_CODEBOOK` (same order).
SPENDING_VALUE_LABELS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "MAR": ("married", "widowed", "divorced", "separated", "never married"),
        "SEX": ("male", "female"),
        "DIS": ("with a disability", "without a disability"),
        "ESP": (
            "n/a", "two parents, both in labor force", "two parents, father only",
            "two parents, mother only", "two parents, neither",
            "father, in labor force", "father, not in labor force",
            "mother, in labor force", "mother, not in labor force",
        ),
        "CIT": (
            "born in the US", "born in PR, Guam, USVI or NMI",
            "born abroad of American parent(s)", "naturalized citizen",
            "not a citizen",
        ),
        "MIG": ("n/a", "same house", "outside US and PR", "different house in US/PR"),
        "MIL": (
            "n/a", "active duty", "active duty in the past",
            "training in Reserves/National Guard only", "never served",
        ),
        "ANC": ("single", "multiple", "unclassified", "not reported", "suppressed"),
        "NATIVITY": ("native", "foreign born"),
        "DEAR": ("hearing difficulty", "no hearing difficulty"),
        "DEYE": ("vision difficulty", "no vision difficulty"),
        "DREM": ("n/a", "cognitive difficulty", "no cognitive difficulty"),
        "RAC1P": (
            "White", "Black", "American Indian", "Alaska Native",
            "AI/AN tribes specified", "Asian", "NH/PI", "Some other race",
            "Two or more races",
        ),
        "COW": (
            "n/a", "private for-profit", "private not-for-profit",
            "local government", "state government", "federal government",
            "self-employed, not incorporated", "self-employed, incorporated",
            "family business without pay", "unemployed, last worked 5+ years ago",
        ),
        "ESR": (
            "n/a", "employed, at work", "employed, not at work", "unemployed",
            "armed forces, at work", "armed forces, not at work",
            "not in labor force",
        ),
        "FER": ("n/a", "gave birth in the past 12 months", "did not"),
    }
)  # fmt: skip

#: Public partitions of RAC1P values into groups that cover everyone. The first,
#: ``"white_black_other"``, is the default: the paper's groups white and black, and
#: the rest. ``"white_black_aian_other"`` separates American Indian and Alaska Native
#: people (RAC1P 3-5), a large group in New Mexico.
SPENDING_GROUPINGS: Mapping[str, Mapping[str, tuple[int, ...]]] = MappingProxyType(
    {
        "white_black_other": MappingProxyType(
            {"white": (1,), "black": (2,), "other": (3, 4, 5, 6, 7, 8, 9)}
        ),
        "white_black_aian_other": MappingProxyType(
            {"white": (1,), "black": (2,), "aian": (3, 4, 5), "other": (6, 7, 8, 9)}
        ),
    }
)

#: Sources other than a state code: the stored New York ACSEmployment sample.
_EXTRACT = "NY-sample"

#: How :func:`describe_spending` may recode the columns first.
Recode = Literal["none", "appearance"]


def _check_task(task: object) -> str:
    if not isinstance(task, str):
        raise TypeError(
            f"task must be a string such as 'ACSMobility', got {type(task).__name__}."
        )
    return check_choice(task, SPENDING_TASKS, "task")


def _check_source(task: str, source: object) -> str:
    if not isinstance(source, str):
        raise TypeError(
            "source must be a two-letter state code such as 'NM' or 'NY-sample', got "
            f"{type(source).__name__}."
        )
    if source == _EXTRACT:
        if task != "ACSEmployment":
            raise ValueError(
                f"source 'NY-sample' holds ACSEmployment only, not {task}; use a "
                "state's person file, e.g. source='NM' (the paper's state for it)."
            )
        return source
    state = source.strip().upper()
    if state not in ACS_STATES:
        raise ValueError(
            f"unknown source {source!r}; use a two-letter state code (one of "
            f"{', '.join(ACS_STATES)}) or 'NY-sample' (ACSEmployment only). The "
            "paper's state is 'NM' for ACSPublicCoverage and ACSMobility and 'CA' for "
            "ACSEmployment (not available offline)."
        )
    return state


def _columns(task: str) -> tuple[str, ...]:
    return (*SPENDING_FEATURES[task], SPENDING_TARGETS[task])


def spending_codebook(task: str) -> dict[str, tuple[int, ...]]:
    """Return the public codebook of a task: column -> raw values in code order.

    The features take their entry of :data:`SPENDING_CODEBOOK`; the target takes
    ``(0, 1)``. The result can be handed to
    :class:`~dpnotes.synth.codebook.Codebook` as ``categories=``.

    Args:
        task: One of :data:`SPENDING_TASKS`.

    Returns:
        An ordered dict, the features in the paper's order, then the target.

    Raises:
        ValueError: For an unknown task.

    Examples:
        >>> spending_codebook("ACSMobility")["MIG"]
        (0, 1)
        >>> spending_codebook("ACSPublicCoverage")["MIG"]
        (0, 1, 2, 3)
    """
    task = _check_task(task)
    out = {c: SPENDING_CODEBOOK[c] for c in SPENDING_FEATURES[task]}
    out[SPENDING_TARGETS[task]] = (0, 1)
    return out


def spending_domain(task: str) -> dict[str, int]:
    """Return the public domain of a task (column -> number of codes).

    Args:
        task: One of :data:`SPENDING_TASKS`.

    Returns:
        The domain the synthesizers take, columns as in :func:`spending_codebook`.

    Raises:
        ValueError: For an unknown task.

    Examples:
        >>> spending_domain("ACSMobility")["COW"]
        10
    """
    return {c: len(v) for c, v in spending_codebook(task).items()}


def _integers(frame: pd.DataFrame, column: str) -> np.ndarray:
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values) | (values != np.round(values))
    if bad.any():
        shown = frame[column].to_numpy()[bad][:5].tolist()
        raise ValueError(
            f"column {column!r} has {int(bad.sum())} value(s) that are not integer "
            f"codes, e.g. {shown}; pass folktables' values (blank cells as 0), as "
            "load_spending_raw returns them."
        )
    return values.astype(np.int64)


def encode_spending(raw: pd.DataFrame, task: str) -> pd.DataFrame:
    """Map a task's raw ACS values to the codes of :func:`spending_domain`.

    Each row is encoded on its own through the public codebook, so the encoding
    costs no privacy. Extra columns of ``raw`` are ignored.

    Args:
        raw: The task's columns (:func:`spending_codebook`) with folktables' values
            (blank cells as 0, the target 0/1 or boolean), e.g. from
            :func:`load_spending_raw`.
        task: One of :data:`SPENDING_TASKS`.

    Returns:
        int64 codes, the task's columns in domain order, with ``raw``'s index.

    Raises:
        TypeError: If ``raw`` is not a DataFrame.
        ValueError: For an unknown task, a missing column, or a value that is not an
            integer or not in the codebook (the message names column and values).

    Examples:
        >>> raw = pd.DataFrame({c: [v[-1]] for c, v in
        ...                     spending_codebook("ACSMobility").items()})
        >>> encode_spending(raw, "ACSMobility").iloc[0].tolist()
        [4, 1, 1, 4, 4, 4, 1, 1, 1, 2, 8, 9, 6, 1]
    """
    task = _check_task(task)
    if not isinstance(raw, pd.DataFrame):
        raise TypeError(f"raw must be a pandas DataFrame, got {type(raw).__name__}.")
    codebook = spending_codebook(task)
    check_columns(raw, list(codebook), f"the raw {task} frame")
    out = {}
    for column, values in codebook.items():
        x = _integers(raw, column)
        codes = pd.Index(values).get_indexer(x)
        unknown = codes < 0
        if unknown.any():
            shown = sorted(set(x[unknown].tolist()))[:5]
            raise ValueError(
                f"column {column!r} has {int(unknown.sum())} value(s) {shown} that "
                f"are not in its public codebook {list(values)} (2018 PUMS data "
                "dictionary); check the file, the survey year and the column. Do not "
                "add values because they occur in the data."
            )
        out[column] = codes.astype(np.int64)
    return pd.DataFrame(out, index=raw.index)


#: Columns that folktables' filters read besides the features and the target.
_FILTER_COLUMNS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "ACSEmployment": (),
        "ACSPublicCoverage": ("AGEP", "PINCP"),
        "ACSMobility": ("AGEP",),
    }
)


def _folktables_task(
    task: str, state: str, root: str | os.PathLike[str] | None
) -> pd.DataFrame:
    """Run folktables' task definition on a state's person file, columns checked."""
    import folktables

    person = load_acs_person(state, 2018, root)
    problem = getattr(folktables, task)
    needed = {*problem.features, problem.target, problem.group, *_FILTER_COLUMNS[task]}
    missing = sorted(needed - set(person.columns))
    if missing:
        raise DataIntegrityError(
            f"the 2018 {state} person file lacks column(s) {missing} that folktables' "
            f"{task} reads; it is not a complete PUMS person file. Delete it and load "
            "again to re-download it."
        )
    features, label, _ = problem.df_to_pandas(person)
    target = SPENDING_TARGETS[task]
    return features[list(SPENDING_FEATURES[task])].assign(
        **{target: label.iloc[:, 0].to_numpy()}
    )


def load_spending_raw(
    task: str, source: str, root: str | os.PathLike[str] | None = None
) -> pd.DataFrame:
    """Load a task's columns with folktables' raw values, in the file's row order.

    Args:
        task: One of :data:`SPENDING_TASKS`.
        source: A two-letter state code (the 2018 person file; ``"NM"`` and ``"WY"``
            are stored offline) or ``"NY-sample"`` (ACSEmployment only).
        root: Data root (see :func:`dpnotes.data.data_root`).

    Returns:
        int64 values, the task's columns (features in the paper's order, then the
        target as 0/1), index ``0..n-1`` in the order of the file. New Mexico 2018
        gives 19,247 (ACSEmployment), 7,693 (ACSPublicCoverage) and 3,443
        (ACSMobility) rows.

    Raises:
        ValueError: For an unknown task or source, a task that the source does not
            hold, a corrupt file (:class:`~dpnotes.data.DataIntegrityError`) or values
            that are not integer codes.
        DataNotFoundError: If the file is missing and cannot be downloaded.

    References:
        ding2021folktables; rosenblatt2022spending (appendix C).
    """
    task = _check_task(task)
    source = _check_source(task, source)
    columns = _columns(task)
    target = SPENDING_TARGETS[task]
    if source == _EXTRACT:
        frame = load_acs_extract("ACSEmployment_NY_2018_sample20000", root)
        frame = frame[list(columns)]
    else:
        frame = _folktables_task(task, source, root)
    if len(frame) == 0:
        raise DataIntegrityError(
            f"{task} on {source} has no rows after folktables' filter; the file is "
            "not a complete person file. Delete it and load again."
        )
    out = pd.DataFrame({c: _integers(frame, c) for c in columns})
    if not out[target].isin((0, 1)).all():
        raise DataIntegrityError(
            f"the target {target} of {task} on {source} is not 0/1; the file is not "
            "the expected extract. Delete it and load again."
        )
    return out


@dataclass(frozen=True, eq=False)
class SpendingTask:
    """One task of the paper, encoded, with its groups and its fixed split.

    Attributes:
        task: The task (one of :data:`SPENDING_TASKS`).
        source: Where the rows come from (a state code or ``"NY-sample"``).
        raw: The undiscretised rows (:func:`load_spending_raw`), file order.
        data: The same rows as codes of :attr:`domain` (:func:`encode_spending`).
        domain: The public domain, features then target.
        target: The target column.
        sensitive: The sensitive attribute (``"RAC1P"``).
        grouping: The name of the partition in :data:`SPENDING_GROUPINGS`.
        groups: Group name -> codes of :attr:`sensitive` in :attr:`data` (RAC1P
            value minus one); the groups cover every code.
        protected: The protected group (``"black"``, as in the paper).
        train_rows, holdout_rows, test_rows: Disjoint, sorted row numbers of
            :attr:`data`; the holdout is empty unless asked for.
    """

    task: str
    source: str
    raw: pd.DataFrame = field(repr=False)
    data: pd.DataFrame = field(repr=False)
    domain: Mapping[str, int]
    target: str
    sensitive: str
    grouping: str
    groups: Mapping[str, tuple[int, ...]]
    protected: str
    train_rows: np.ndarray = field(repr=False)
    holdout_rows: np.ndarray = field(repr=False)
    test_rows: np.ndarray = field(repr=False)

    @property
    def features(self) -> tuple[str, ...]:
        """The feature columns (every column of :attr:`domain` but the target)."""
        return tuple(c for c in self.domain if c != self.target)

    @property
    def train(self) -> pd.DataFrame:
        """The training rows (codes, fresh index): the only rows a fit may see."""
        return self.data.iloc[self.train_rows].reset_index(drop=True)

    @property
    def holdout(self) -> pd.DataFrame:
        """The holdout rows (codes, fresh index), disjoint from train and test."""
        return self.data.iloc[self.holdout_rows].reset_index(drop=True)

    @property
    def test(self) -> pd.DataFrame:
        """The test rows (codes, fresh index), for evaluation only."""
        return self.data.iloc[self.test_rows].reset_index(drop=True)

    def group_of(self, frame: pd.DataFrame) -> pd.Series:
        """Return the group name of each row of an encoded frame.

        Args:
            frame: Codes with the column :attr:`sensitive` (e.g. :attr:`train` or a
                synthesizer's sample).

        Returns:
            A Series of group names with ``frame``'s index, named ``"group"``.

        Raises:
            ValueError: If the column is missing or holds a code outside the domain.
        """
        check_columns(frame, [self.sensitive], "frame")
        codes = _integers(frame, self.sensitive)
        names = np.empty(self.domain[self.sensitive], dtype=object)
        for name, members in self.groups.items():
            names[list(members)] = name
        bad = (codes < 0) | (codes >= len(names))
        if bad.any():
            raise ValueError(
                f"frame[{self.sensitive!r}] has codes {sorted(set(codes[bad]))[:5]} "
                f"outside 0..{len(names) - 1}; pass encoded rows (codes of the "
                "task's domain), not raw values."
            )
        return pd.Series(names[codes], index=frame.index, name="group")


def _split(
    n: int, test_share: float, holdout_share: float, seed: int, rows: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    train, test = holdout_split(
        n, test_share=test_share, rng=rng, rows=rows, sort=False
    )
    # The holdout is cut from the front of the training order, so the test rows do
    # not depend on holdout_share.
    m = len(train) + len(test)
    n_holdout = round(holdout_share * m)
    if n_holdout >= len(train):
        raise ValueError(
            f"test_share={test_share} and holdout_share={holdout_share} of {m} rows "
            "leave no training rows; lower the shares."
        )
    holdout, train = train[:n_holdout], train[n_holdout:]
    return np.sort(train), np.sort(holdout), np.sort(test)


def load_spending_task(
    task: str,
    source: str = "NM",
    *,
    test_share: float = 0.2,
    holdout_share: float = 0.0,
    seed: int = 0,
    rows: int | None = None,
    grouping: str = "white_black_other",
    root: str | os.PathLike[str] | None = None,
) -> SpendingTask:
    """Load one of the paper's tasks, encoded, with its groups and a fixed split.

    The split is a permutation of the rows drawn from ``seed`` (data-independent):
    its first ``round(test_share * m)`` rows are the test part, the next
    ``round(holdout_share * m)`` the holdout, the rest the training part. The test
    part does not change with ``holdout_share``.

    Args:
        task: One of :data:`SPENDING_TASKS`.
        source: A state code (``"NM"``: the paper's data for ACSPublicCoverage and
            ACSMobility, and the offline stand-in for its California
            ACSEmployment) or ``"NY-sample"`` (ACSEmployment only).
        test_share: Share of the rows in the test part, in (0, 1).
        holdout_share: Share of the rows in the holdout, in [0, 1).
        seed: Seed of the permutation (non-negative).
        rows: Keep only this many rows of the permutation (smoke runs); ``None``
            keeps all.
        grouping: A partition of :data:`SPENDING_GROUPINGS`.
        root: Data root (see :func:`dpnotes.data.data_root`).

    Returns:
        A :class:`SpendingTask`.

    Raises:
        TypeError: For a task, source or seed of the wrong type.
        ValueError: For an unknown task, source or grouping, shares that leave a
            part empty, a corrupt file or values outside the codebook.
        DataNotFoundError: If the file is missing and cannot be downloaded.

    Privacy:
        The domain, the groups and the split are fixed without looking at the data;
        only the training part is private input to a fit.

    References:
        rosenblatt2022spending (section 5, appendix C); ding2021folktables.
    """
    task = _check_task(task)
    source = _check_source(task, source)
    if not 0.0 < test_share < 1.0:
        raise ValueError(f"test_share must be in (0, 1), got {test_share!r}.")
    if not 0.0 <= holdout_share < 1.0:
        raise ValueError(f"holdout_share must be in [0, 1), got {holdout_share!r}.")
    if test_share + holdout_share >= 1.0:
        raise ValueError(
            f"test_share + holdout_share = {test_share + holdout_share} leaves no "
            "training rows; keep their sum below 1."
        )
    seed = check_int(seed, "seed", minimum=0)
    check_choice(grouping, list(SPENDING_GROUPINGS), "grouping")
    raw = load_spending_raw(task, source, root)
    data = encode_spending(raw, task)
    train, holdout, test = _split(len(data), test_share, holdout_share, seed, rows)
    values = SPENDING_CODEBOOK[SPENDING_SENSITIVE]
    groups = {
        name: tuple(values.index(v) for v in members)
        for name, members in SPENDING_GROUPINGS[grouping].items()
    }
    return SpendingTask(
        task=task,
        source=source,
        raw=raw,
        data=data,
        domain=MappingProxyType(spending_domain(task)),
        target=SPENDING_TARGETS[task],
        sensitive=SPENDING_SENSITIVE,
        grouping=grouping,
        groups=MappingProxyType(groups),
        protected="black",
        train_rows=train,
        holdout_rows=holdout,
        test_rows=test,
    )


def _by_appearance(column: pd.Series) -> pd.Series:
    codes = {value: code for code, value in enumerate(column.unique())}
    return column.map(codes)


def describe_spending(
    raw: pd.DataFrame, task: str, *, recode: Recode = "none"
) -> pd.DataFrame:
    """Return the descriptive table of a task's raw rows, as the paper's Tables 3-5.

    The rows are pandas' ``describe()``: count, mean, std, min, 25%, 50%, 75%, max;
    the columns are the task's features in the paper's order, then the target.

    ``recode="appearance"`` first recodes every feature by order of first
    appearance (the first value met in the file's row order becomes 0, the next new
    one 1, ...), as the authors' released evaluation code does for the New Mexico
    tasks (``lurosenb/sq_supplementary_materials``, ``utils.py``, ``get_mobility``
    and ``get_public``): the paper's Tables 4 and 5 describe those codes, Table 3
    (California ACSEmployment, not recoded there) the raw values. The recoding reads
    the data; it serves this comparison only and is never an input of a fit.

    Args:
        raw: The task's raw rows in file order, from :func:`load_spending_raw` (or
            :attr:`SpendingTask.raw`).
        task: One of :data:`SPENDING_TASKS`.
        recode: ``"none"`` or ``"appearance"``.

    Returns:
        The table, float64, statistics as rows, columns as described.

    Raises:
        TypeError: If ``raw`` is not a DataFrame.
        ValueError: For an unknown task or recoding, a missing column or an empty
            frame.

    References:
        rosenblatt2022spending (appendix C, Tables 3-5).
    """
    task = _check_task(task)
    check_choice(recode, ("none", "appearance"), "recode")
    if not isinstance(raw, pd.DataFrame):
        raise TypeError(f"raw must be a pandas DataFrame, got {type(raw).__name__}.")
    columns = list(_columns(task))
    check_columns(raw, columns, f"the raw {task} frame")
    if len(raw) == 0:
        raise ValueError(f"the raw {task} frame has no rows; nothing to describe.")
    frame = raw[columns].astype(float)
    if recode == "appearance":
        for column in SPENDING_FEATURES[task]:
            frame[column] = _by_appearance(frame[column])
    return frame.describe().astype(float)


def compare_description(
    ours: pd.DataFrame,
    printed: Mapping[str, Mapping[str, float]],
    *,
    decimals: int = 2,
) -> pd.DataFrame:
    """Compare a descriptive table with printed values, cell by cell.

    A cell matches when ours, rounded half away from zero to ``decimals`` places,
    equals the printed value.

    Args:
        ours: A table from :func:`describe_spending` (statistics as rows).
        printed: Column -> statistic -> printed value (e.g. from
            :mod:`dpnotes.paper_numbers`).
        decimals: The printed precision.

    Returns:
        One row per printed cell: ``column``, ``statistic``, ``printed``, ``ours``
        (unrounded), ``match`` (bool).

    Raises:
        ValueError: If a printed column or statistic is not in ``ours``.

    Examples:
        >>> ours = pd.DataFrame({"A": [0.125, 1.0]}, index=["mean", "max"])
        >>> table = compare_description(ours, {"A": {"mean": 0.13, "max": 1.0}})
        >>> table["match"].tolist()
        [True, True]
    """
    check_int(decimals, "decimals", minimum=0)
    rows = []
    scale = 10.0**decimals
    for column, stats in printed.items():
        if column not in ours.columns:
            raise ValueError(
                f"printed column {column!r} is not in the table (columns "
                f"{list(ours.columns)}); describe the same task."
            )
        for stat, value in stats.items():
            if stat not in ours.index:
                raise ValueError(
                    f"printed statistic {stat!r} is not a row of the table "
                    f"({list(ours.index)})."
                )
            x = float(ours.loc[stat, column])
            # Round half away from zero, as printed tables do (not to even); the
            # small nudge absorbs the binary representation of e.g. 0.125.
            rounded = np.sign(x) * np.floor(abs(x) * scale + 0.5 + 1e-9) / scale
            match = abs(rounded - value) < 0.5 / scale
            rows.append((column, stat, float(value), x, bool(match)))
    return pd.DataFrame(
        rows, columns=["column", "statistic", "printed", "ours", "match"]
    )
