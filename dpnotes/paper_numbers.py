"""The numbers the reproduced papers report, as data, with the table and row of each.

A chapter that puts a paper's number beside ours takes it from here, never types it:
one place to read, cite and check (``tests/test_paper_numbers.py`` compares every value
with the paper's text where the text is available). Each value is a :class:`Reported`:
the paper (its bibliography key), where in the paper it stands, the data set, method,
group and quantity, and the value as printed.

So far: the DPSGD-F paper's Tables 1-3 and its epsilons (xu2021removing); the
stratification paper's Tables 1-3, the values and claims stated for its Figures 1-10,
its New York race example and its "80%" claim (rosenblatt2024stratification), with the
numbers the authors' repository ``lurosenb/stratify_dp`` stores for them
(:data:`STRAT_AUTHORS`); the "Spending privacy budget wisely and fairly" paper's
Tables 1-5, the numbers its text states about Table 1 and Figures 2-5, and its claims
about those figures as :class:`SpendingClaim` records (rosenblatt2022spending).

References:
    xu2021removing: Tables 1, 2 and 3, and section 6 (the epsilons of the settings).
    rosenblatt2022spending: Tables 1-5, sections 1, 3.3, 5 and 6, appendix A.
    rosenblatt2024stratification: arXiv 2312.11712v1, appendix D (Tables 1-3), the
    captions of Figures 1-10 and the text that cites them, section "Adaptive Private
    Mean Estimation" (the New York race example).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pandas as pd

__all__ = [
    "DPSGDF_EPSILON",
    "DPSGDF_FEWER_STEPS",
    "DPSGDF_GROUPS",
    "DPSGDF_SAMPLE_SIZES",
    "DPSGDF_TABLE1",
    "DPSGDF_TABLE2",
    "DPSGDF_TABLE3",
    "SPENDING_AUTHORS_COMMIT",
    "SPENDING_AUTHORS_E2",
    "SPENDING_AUTHORS_REPOSITORY",
    "SPENDING_BETA_GRID",
    "SPENDING_CLAIMS",
    "SPENDING_DATA",
    "SPENDING_DESCRIPTIONS",
    "SPENDING_DESCRIPTION_COLUMNS",
    "SPENDING_DESCRIPTION_COUNTS",
    "SPENDING_DESCRIPTION_STATS",
    "SPENDING_EPSILONS",
    "SPENDING_EPSILON_GRIDS",
    "SPENDING_SPLITS",
    "SPENDING_SPLIT_GRID",
    "SPENDING_TABLE1",
    "SPENDING_TABLE1_BASE_RATES",
    "SPENDING_TABLE1_GROUPS",
    "SPENDING_TABLE1_SHARES",
    "SPENDING_TABLE1_TEXT",
    "SPENDING_TABLE2",
    "SPENDING_TABLE2_EPSILONS",
    "STRAT_AUTHORS",
    "STRAT_AUTHORS_COMMIT",
    "STRAT_AUTHORS_REPOSITORY",
    "STRAT_CLAIMS",
    "STRAT_NY_RACE",
    "STRAT_RACE_CODES",
    "STRAT_TABLE1",
    "STRAT_TABLE2",
    "STRAT_TABLE2_COUNT",
    "STRAT_TABLE3",
    "AuthorsNumber",
    "Claim",
    "NyRaceExample",
    "Reported",
    "SpendingClaim",
    "reported",
    "reported_frame",
    "spending_description",
]


@dataclass(frozen=True)
class Reported:
    """One number a paper reports.

    Attributes:
        paper: The paper's key in ``book/references.bib``.
        where: Where it stands, e.g. ``"Table 1, row 'DPSGD vs. SGD'"``.
        dataset: The data set (``"mnist"``, ``"adult"``, ``"dutch"``).
        method: The method (``"sgd"``, ``"dpsgd"``, ``"naive"``, ``"dpsgd_f"``).
        group: The group (``"all"``, ``"digit 2"``, ``"male"``, ...).
        quantity: What is reported: ``"accuracy"``, ``"delta"`` (private minus SGD
            accuracy), ``"loss"``, ``"grad_norm"`` or ``"epsilon"``.
        value: The value as printed.
        clip_norm: The clipping bound of the run (Table 3's ``C``), where it varies.
        epsilon: The privacy budget of the run as the paper prints it, where one is
            stated (e.g. 20.08 for e^3).
        feature: The column a per-column number describes (Tables 3-5 of the
            spending paper: an ACS column name).
    """

    paper: str
    where: str
    dataset: str
    method: str
    group: str
    quantity: str
    value: float
    clip_norm: float | None = None
    epsilon: float | None = None
    feature: str | None = None


_XU = "xu2021removing"

#: The groups of the DPSGD-F paper's tables, in its column order, by data set: the
#: total, then (MNIST) classes 2 and 8 or (Adult, Dutch) male and female.
DPSGDF_GROUPS: Mapping[str, tuple[str, ...]] = {
    "mnist": ("all", "digit 2", "digit 8"),
    "adult": ("all", "male", "female"),
    "dutch": ("all", "male", "female"),
}

#: Table 1 of the DPSGD-F paper: per data set and method, the values for
#: :data:`DPSGDF_GROUPS`; row "SGD" is accuracy, rows "DPSGD / Naive / DPSGD-F vs. SGD"
#: are private minus SGD accuracy.
DPSGDF_TABLE1: Mapping[str, Mapping[str, tuple[float, float, float]]] = {
    "mnist": {
        "sgd": (0.9855, 0.9903, 0.9292),
        "dpsgd": (-0.1081, -0.0707, -0.6807),
        "naive": (-0.1500, -0.1512, -0.1510),
        "dpsgd_f": (-0.0293, -0.0281, -0.0432),
    },
    "adult": {
        "sgd": (0.8099, 0.7610, 0.9117),
        "dpsgd": (-0.0592, -0.0740, -0.0281),
        "naive": (-0.0593, -0.0742, -0.0281),
        "dpsgd_f": (-0.0254, -0.0298, -0.0161),
    },
    "dutch": {
        "sgd": (0.7879, 0.8013, 0.7744),
        "dpsgd": (-0.1001, -0.1534, -0.0466),
        "naive": (-0.1004, -0.1549, -0.0458),
        "dpsgd_f": (-0.0130, -0.0160, -0.0099),
    },
}

#: Table 2 of the DPSGD-F paper: per data set and method, the average loss and the
#: average gradient norm of the two groups (MNIST: classes 2 and 8; Adult, Dutch: male
#: and female) at the last training epoch, as ``(loss, loss, norm, norm)``.
DPSGDF_TABLE2: Mapping[str, Mapping[str, tuple[float, float, float, float]]] = {
    "mnist": {
        "sgd": (0.04, 0.04, 0.68, 4.76),
        "dpsgd": (0.41, 2.16, 13.53, 100.46),
        "naive": (3.08, 1.89, 0.83, 0.76),
        "dpsgd_f": (0.20, 0.42, 1.45, 2.53),
    },
    "adult": {
        "sgd": (0.48, 0.27, 0.08, 0.11),
        "dpsgd": (0.68, 0.31, 0.41, 0.12),
        "naive": (0.71, 0.32, 0.43, 0.13),
        "dpsgd_f": (0.50, 0.27, 0.12, 0.08),
    },
    "dutch": {
        "sgd": (0.52, 0.53, 0.19, 0.19),
        "dpsgd": (0.59, 0.53, 0.26, 0.12),
        "naive": (0.59, 0.53, 0.26, 0.12),
        "dpsgd_f": (0.51, 0.52, 0.19, 0.18),
    },
}

#: Table 3 of the DPSGD-F paper (MNIST): private minus SGD accuracy for the groups of
#: :data:`DPSGDF_GROUPS` ``["mnist"]``, by ``(method, clipping bound)``: DPSGD at
#: ``C = 1..5`` and DPSGD-F at ``C_0 = 1``.
DPSGDF_TABLE3: Mapping[tuple[str, float], tuple[float, float, float]] = {
    ("dpsgd", 1.0): (-0.1081, -0.0707, -0.6807),
    ("dpsgd", 2.0): (-0.0587, -0.0426, -0.3286),
    ("dpsgd", 3.0): (-0.0390, -0.0232, -0.2013),
    ("dpsgd", 4.0): (-0.0286, -0.0194, -0.1376),
    ("dpsgd", 5.0): (-0.0240, -0.0145, -0.1099),
    ("dpsgd_f", 1.0): (-0.0293, -0.0281, -0.0432),
}

#: Row "Sample size" of Table 1 of the DPSGD-F paper: the examples of each group of
#: :data:`DPSGDF_GROUPS` (MNIST: its training set; Adult and Dutch: all rows, training
#: and test). The sizes identify the groups: the paper's Dutch column "M" has the size
#: of the group with sex code 2, which the data's codebook calls female.
DPSGDF_SAMPLE_SIZES: Mapping[str, Mapping[str, int]] = {
    "mnist": {"all": 54649, "digit 2": 5958, "digit 8": 500},
    "adult": {"all": 45222, "male": 30527, "female": 14695},
    "dutch": {"all": 60420, "male": 30273, "female": 30147},
}

#: The epsilon of each data set's runs at delta = 1e-6 (captions of Tables 1 and 2,
#: section 6 of the DPSGD-F paper).
DPSGDF_EPSILON: Mapping[str, float] = {"mnist": 6.55, "adult": 3.1, "dutch": 2.66}

#: Section 6.1.3: to stay within DPSGD's budget, DPSGD-F and Naive run "T is 19, 11 and
#: 17 less" steps than DPSGD on MNIST, Adult and Dutch.
DPSGDF_FEWER_STEPS: Mapping[str, int] = {"mnist": 19, "adult": 11, "dutch": 17}

_ROW = {"sgd": "SGD", "dpsgd": "DPSGD", "naive": "Naïve", "dpsgd_f": "DPSGD-F"}


def _dpsgdf() -> Iterable[Reported]:
    for dataset, rows in DPSGDF_TABLE1.items():
        for method, values in rows.items():
            row = _ROW[method] if method == "sgd" else f"{_ROW[method]} vs. SGD"
            quantity = "accuracy" if method == "sgd" else "delta"
            for group, value in zip(DPSGDF_GROUPS[dataset], values, strict=True):
                where = f"Table 1, row '{row}'"
                yield Reported(_XU, where, dataset, method, group, quantity, value)
    for dataset, rows in DPSGDF_TABLE2.items():
        pair = DPSGDF_GROUPS[dataset][1:]
        for method, values in rows.items():
            where = f"Table 2, row '{_ROW[method]}'"
            for quantity, part in (("loss", values[:2]), ("grad_norm", values[2:])):
                for group, value in zip(pair, part, strict=True):
                    yield Reported(_XU, where, dataset, method, group, quantity, value)
    for (method, clip), values in DPSGDF_TABLE3.items():
        bound = "C" if method == "dpsgd" else "C_0"
        where = f"Table 3, row '{_ROW[method]} ({bound} = {clip:g}) vs. SGD'"
        for group, value in zip(DPSGDF_GROUPS["mnist"], values, strict=True):
            yield Reported(_XU, where, "mnist", method, group, "delta", value, clip)
    for dataset, value in DPSGDF_EPSILON.items():
        where = "Tables 1 and 2, captions (delta = 1e-6)"
        yield Reported(_XU, where, dataset, "dpsgd", "all", "epsilon", value)


# --------------------------------------------------------------------------------------
# Rosenblatt, Allen, Stoyanovich (2022), "Spending privacy budget wisely and fairly"
# (rosenblatt2022spending). Data sets are named "<task>-<state>" as the paper ran them:
# ACSEmployment on California, ACSPublicCoverage and ACSMobility on New Mexico.
# --------------------------------------------------------------------------------------

_SPENDING = "rosenblatt2022spending"

#: The epsilons of the paper, e^k, as its section 3.3 prints them ("e^0, e^2, e^3, e^4,
#: or epsilon ~ 1.0, 7.38, 20.08, 54.59"), by the exponent k. The printed values are
#: e^k cut (not rounded) to two decimals: e^2 = 7.389, e^3 = 20.086, e^4 = 54.598. The
#: value for e^1, which the paper names but never prints, is left out.
SPENDING_EPSILONS: Mapping[int, float] = {0: 1.0, 2: 7.38, 3: 20.08, 4: 54.59}

#: The exponents k of the epsilons e^k that each part of the paper names. They
#: disagree: the appendix text gives {e^2, e^3, e^4} for Figures 4 and 5, the
#: captions of Figure 5 {e^0, e^2, e^3}.
SPENDING_EPSILON_GRIDS: Mapping[str, tuple[int, ...]] = {
    "Section 3.3": (0, 2, 3, 4),
    "Section 5, Settings": (0, 1, 2, 3),
    "Section 5, Settings (detailed results)": (0, 2, 3),
    "Figure 2, captions": (0, 2, 3),
    "Figure 4, captions": (2, 3, 4),
    "Appendix A.1 (Figure 4)": (2, 3, 4),
    "Figure 5, captions": (0, 2, 3),
    "Appendix A.2 (Figure 5)": (2, 3, 4),
}

#: The groups of Table 1, in its row order.
SPENDING_TABLE1_GROUPS: tuple[str, ...] = ("overall", "white", "black")

#: Table 1 (ACSEmployment, California, epsilon = e^3, mean of 10 runs): per method and
#: group of :data:`SPENDING_TABLE1_GROUPS`, ``(accuracy, false negative rate)`` in
#: percent, as printed ("Accuracy / FNR (%)").
SPENDING_TABLE1: Mapping[str, Mapping[str, tuple[float, float]]] = {
    "real": {"overall": (74.3, 12.0), "white": (74.5, 12.0), "black": (71.8, 16.0)},
    "mst": {"overall": (65.2, 10.0), "white": (65.6, 10.0), "black": (58.6, 21.0)},
    "fsq_bal": {"overall": (72.0, 9.0), "white": (72.4, 9.0), "black": (66.8, 9.0)},
}

#: Table 1, column "Base rate (%)": the share of positive labels per group.
SPENDING_TABLE1_BASE_RATES: Mapping[str, float] = {
    "overall": 45.6,
    "white": 45.8,
    "black": 39.3,
}

#: Table 1's caption: "data contains 61.4% white and 4.8% black individuals".
SPENDING_TABLE1_SHARES: Mapping[str, float] = {"white": 61.4, "black": 4.8}

#: What section 1 states about Table 1, as ``(method, group, quantity) -> value``:
#: accuracies and FNRs in percent, ``accuracy_gap_pct`` the white minus black accuracy.
#: The text's MST accuracy (65.1) differs from the table's (65.2).
SPENDING_TABLE1_TEXT: Mapping[tuple[str, str, str], float] = {
    ("real", "overall", "accuracy_pct"): 74.3,
    ("real", "white-black", "accuracy_gap_pct"): 2.7,
    ("mst", "overall", "accuracy_pct"): 65.1,
    ("mst", "white-black", "accuracy_gap_pct"): 7.0,
    ("fsq_bal", "overall", "accuracy_pct"): 72.0,
    ("fsq_bal", "overall", "fnr_pct"): 9.0,
    ("fsq_bal", "white", "fnr_pct"): 9.0,
    ("fsq_bal", "black", "fnr_pct"): 9.0,
}

#: The spending authors' repository and the commit whose stored metrics are quoted.
SPENDING_AUTHORS_REPOSITORY = "lurosenb/sq_supplementary_materials"
SPENDING_AUTHORS_COMMIT = "61f90f276876d0b531eda0870a56596f86c616dd"

#: The authors' stored metrics for ACSEmployment on California at epsilon = 7 (their
#: files' ``_7``; the plotting call says 7.38, i.e. e^2): per method, the mean over its
#: 10 stored runs of ``(accuracy, F1, false-positive rate, false-negative rate)``,
#: computed from the printed output of ``load_metrics.ipynb`` (cell 7, the
#: ``fake_overall_*`` columns). Their evaluation, not the paper's text: white and
#: black records only (codes as their loader numbers them), the best of XGBoost, MLP
#: and random forest chosen on the test split's F1, the synthetic minority class
#: upsampled (``metrics_and_plotting.py``). No real-data row is stored beside them.
SPENDING_AUTHORS_E2: Mapping[str, tuple[float, float, float, float]] = {
    "mst": (0.648, 0.708, 0.593, 0.066),
    "sq": (0.723, 0.753, 0.449, 0.073),
    "fsq_bal": (0.712, 0.732, 0.414, 0.138),
    "fsq_fnr": (0.712, 0.736, 0.429, 0.121),
}

#: The DPSAGE budgets of Table 2's two values per cell ("epsilon_1/epsilon_2").
SPENDING_TABLE2_EPSILONS: tuple[float, float] = (0.2, 1.0)

#: Table 2 (DPSAGE against SAGE on real data, top-5 features, mean of 10 runs): per
#: data set and metric, the values at :data:`SPENDING_TABLE2_EPSILONS`.
SPENDING_TABLE2: Mapping[str, Mapping[str, tuple[float, float]]] = {
    "ACSEmployment-CA": {
        "ndcg": (0.73, 0.97),
        "jaccard": (0.54, 0.80),
        "map": (0.58, 0.81),
    },
    "ACSPublicCoverage-NM": {
        "ndcg": (0.40, 0.59),
        "jaccard": (0.30, 0.41),
        "map": (0.33, 0.44),
    },
    "ACSMobility-NM": {
        "ndcg": (0.96, 0.98),
        "jaccard": (0.64, 0.70),
        "map": (0.66, 0.71),
    },
}

#: The rows of Tables 3-5 (pandas' ``describe()`` without the count).
SPENDING_DESCRIPTION_STATS: tuple[str, ...] = (
    "mean",
    "std",
    "min",
    "25%",
    "50%",
    "75%",
    "max",
)

#: The columns of Tables 3 (ACSEmployment-CA), 4 (ACSMobility-NM) and 5
#: (ACSPublicCoverage-NM) in printed order: ``(printed header, ACS column)``. The
#: last column is the target.
SPENDING_DESCRIPTION_COLUMNS: Mapping[str, tuple[tuple[str, str], ...]] = {
    "ACSEmployment-CA": (
        ("MAR", "MAR"), ("DIS", "DIS"), ("ESP", "ESP"), ("CIT", "CIT"),
        ("MIG", "MIG"), ("MIL", "MIL"), ("ANC", "ANC"), ("NAT", "NATIVITY"),
        ("DEAR", "DEAR"), ("DEYE", "DEYE"), ("DREM", "DREM"), ("SEX", "SEX"),
        ("RAC", "RAC1P"), ("ESR", "ESR"),
    ),
    "ACSMobility-NM": (
        ("MAR", "MAR"), ("SEX", "SEX"), ("DIS", "DIS"), ("CIT", "CIT"),
        ("MIL", "MIL"), ("ANC", "ANC"), ("NAT", "NATIVITY"), ("DEAR", "DEAR"),
        ("DEYE", "DEYE"), ("DREM", "DREM"), ("RAC", "RAC1P"), ("COW", "COW"),
        ("ESR", "ESR"), ("MIG", "MIG"),
    ),
    "ACSPublicCoverage-NM": (
        ("MAR", "MAR"), ("SEX", "SEX"), ("DIS", "DIS"), ("ESP", "ESP"),
        ("CIT", "CIT"), ("MIG", "MIG"), ("MIL", "MIL"), ("ANC", "ANC"),
        ("NAT", "NATIVITY"), ("DER", "DEAR"), ("DEY", "DEYE"), ("DRM", "DREM"),
        ("ESR", "ESR"), ("FER", "FER"), ("RAC", "RAC1P"), ("PUB", "PUBCOV"),
    ),
}  # fmt: skip

#: The "Count=" of the captions of Tables 3-5.
SPENDING_DESCRIPTION_COUNTS: Mapping[str, int] = {
    "ACSEmployment-CA": 378817,
    "ACSMobility-NM": 3443,
    "ACSPublicCoverage-NM": 7693,
}

#: Tables 3-5: per data set and row of :data:`SPENDING_DESCRIPTION_STATS`, the values
#: of the columns of :data:`SPENDING_DESCRIPTION_COLUMNS`. Table 3 describes raw ACS
#: values; Tables 4 and 5 describe the authors' codes, each feature recoded by order
#: of first appearance (:func:`dpnotes.data.spending.describe_spending`).
SPENDING_DESCRIPTIONS: Mapping[str, Mapping[str, tuple[float, ...]]] = {
    "ACSEmployment-CA": {
        "mean": (
            3.05, 1.88, 0.59, 1.92, 1.24, 3.12, 1.70,
            1.26, 1.96, 1.98, 1.85, 1.51, 3.10, 0.46,
        ),
        "std": (
            1.87, 0.33, 1.64, 1.53, 0.66, 1.59, 1.06,
            0.44, 0.18, 0.15, 0.48, 0.50, 2.95, 0.50,
        ),
        "min": (
            1.00, 1.00, 0.00, 1.00, 0.00, 0.00, 1.00,
            1.00, 1.00, 1.00, 0.00, 1.00, 1.00, 0.00,
        ),
        "25%": (
            1.00, 2.00, 0.00, 1.00, 1.00, 4.00, 1.00,
            1.00, 2.00, 2.00, 2.00, 1.00, 1.00, 0.00,
        ),
        "50%": (
            3.00, 2.00, 0.00, 1.00, 1.00, 4.00, 1.00,
            1.00, 2.00, 2.00, 2.00, 2.00, 1.00, 0.00,
        ),
        "75%": (
            5.00, 2.00, 0.00, 4.00, 1.00, 4.00, 2.00,
            2.00, 2.00, 2.00, 2.00, 2.00, 6.00, 1.00,
        ),
        "max": (
            5.00, 2.00, 8.00, 5.00, 3.00, 4.00, 4.00,
            2.00, 2.00, 2.00, 2.00, 2.00, 9.00, 1.00,
        ),
    },
    "ACSMobility-NM": {
        "mean": (
            0.42, 0.48, 0.92, 0.16, 0.16, 0.99, 0.08,
            0.99, 0.02, 0.05, 1.89, 1.57, 0.94, 0.75,
        ),
        "std": (
            0.63, 0.50, 0.27, 0.57, 0.61, 0.63, 0.27,
            0.11, 0.13, 0.21, 1.60, 2.12, 0.96, 0.43,
        ),
        "min": (
            0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00,
            0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00,
        ),
        "25%": (
            0.00, 0.00, 1.00, 0.00, 0.00, 1.00, 0.00,
            1.00, 0.00, 0.00, 1.00, 0.00, 0.00, 0.50,
        ),
        "50%": (
            0.00, 0.00, 1.00, 0.00, 0.00, 1.00, 0.00,
            1.00, 0.00, 0.00, 1.00, 0.00, 1.00, 1.00,
        ),
        "75%": (
            1.00, 1.00, 1.00, 0.00, 0.00, 1.00, 0.00,
            1.00, 0.00, 0.00, 2.00, 3.00, 1.00, 1.00,
        ),
        "max": (
            4.00, 1.00, 1.00, 4.00, 3.00, 3.00, 1.00,
            1.00, 1.00, 1.00, 7.00, 9.00, 5.00, 1.00,
        ),
    },
    "ACSPublicCoverage-NM": {
        "mean": (
            0.79, 0.54, 0.16, 0.22, 0.19, 0.85, 0.30, 0.45,
            0.10, 0.03, 0.04, 0.07, 0.72, 0.39, 1.49, 0.47,
        ),
        "std": (
            1.03, 0.50, 0.37, 0.91, 0.63, 0.38, 0.88, 0.76,
            0.30, 0.18, 0.19, 0.26, 0.92, 0.53, 2.12, 0.50,
        ),
        "min": (
            0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00,
            0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00,
        ),
        "25%": (
            0.00, 0.00, 0.00, 0.00, 0.00, 1.00, 0.00, 0.00,
            0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00,
        ),
        "50%": (
            1.00, 1.00, 0.00, 0.00, 0.00, 1.00, 0.00, 0.00,
            0.00, 0.00, 0.00, 0.00, 1.00, 0.00, 0.00, 0.00,
        ),
        "75%": (
            1.00, 1.00, 0.00, 0.00, 0.00, 1.00, 0.00, 1.00,
            0.00, 0.00, 0.00, 0.00, 1.00, 1.00, 3.00, 1.00,
        ),
        "max": (
            4.00, 1.00, 1.00, 8.00, 4.00, 2.00, 4.00, 3.00,
            1.00, 1.00, 1.00, 1.00, 6.00, 2.00, 7.00, 1.00,
        ),
    },
}  # fmt: skip

#: The splits of section 5 (for Figures 2a-2d) by the exponent k of epsilon = e^k:
#: ``(alpha, gamma)``. At e^0 and e^2 "an overall alpha-split of {0.7 eps, 0.3 eps}
#: ... often performed best, while the internal DPSAGE gamma-split was most often
#: best at {0.5 eps, 0.5 eps}"; at e^3 and e^4 "an even split ... across all
#: components". beta, the number of features, is not reported.
SPENDING_SPLITS: Mapping[int, tuple[float, float]] = {
    0: (0.7, 0.5),
    2: (0.7, 0.5),
    3: (0.5, 0.5),
    4: (0.5, 0.5),
}

#: The grid the splits were searched over: ``(low, high, step)`` ("a grid search over
#: [0.2, 0.8] at intervals of 0.1").
SPENDING_SPLIT_GRID: tuple[float, float, float] = (0.2, 0.8, 0.1)

#: The numbers of features beta searched over ("beta in {2, 3, 4, 5}").
SPENDING_BETA_GRID: tuple[int, ...] = (2, 3, 4, 5)

#: What the text states about each data set, as ``(data set, quantity) -> (value,
#: where)``: sizes, feature counts (folktables' full lists; Tables 3-5 show the
#: reduced sets used) and the filters of the appendix ("between the ages of 18 and
#: 35"; "under the age of 65 making less than $30,000").
SPENDING_DATA: Mapping[tuple[str, str], tuple[float, str]] = {
    ("ACSEmployment-CA", "rows"): (378817, "Section 5, Data sets"),
    ("ACSPublicCoverage-NM", "rows"): (7693, "Section 5, Data sets"),
    ("ACSEmployment-CA", "features"): (17, "Section 5, Data sets"),
    ("ACSPublicCoverage-NM", "features"): (19, "Section 5, Data sets"),
    ("ACSMobility-NM", "features"): (21, "Section 5, Data sets"),
    ("ACSMobility-NM", "age_lower"): (18, "Appendix A.1"),
    ("ACSMobility-NM", "age_upper"): (35, "Appendix A.1"),
    ("ACSPublicCoverage-NM", "age_upper"): (65, "Appendix A.2"),
    ("ACSPublicCoverage-NM", "income_upper"): (30000, "Appendix A.2"),
    ("all", "runs"): (10, "Section 5, Settings"),
}


@dataclass(frozen=True)
class SpendingClaim:
    """A statement of a paper about a figure, quoted, with what it compares.

    Attributes:
        paper: The paper's key in ``book/references.bib``.
        where: Where the statement stands, e.g. ``"Section 5"``.
        figures: The panels it is about, e.g. ``("2a", "2b")``.
        dataset: The data set (``"ACSEmployment-CA"``, ...).
        text: The statement, quoted (math written out as in ``"epsilon = e^0"``).
        metrics: The metrics it is about (``"accuracy"``, ``"f1"``, ``"fnr"``,
            ``"fpr"``).
        methods: The methods it compares (``"real"``, ``"mst"``, ``"sq"``,
            ``"fsq_bal"``, ``"fsq_fnr"``).
        groups: The groups it is about (``"overall"``, ``"white"``, ``"black"``).
        log_epsilons: The exponents k of the budgets e^k it is about.
    """

    paper: str
    where: str
    figures: tuple[str, ...]
    dataset: str
    text: str
    metrics: tuple[str, ...]
    methods: tuple[str, ...]
    groups: tuple[str, ...]
    log_epsilons: tuple[int, ...]


_ALL_GROUPS = ("overall", "white", "black")

#: Every statement the text makes about Figures 2, 4 and 5 (Figure 3 is described
#: only by its caption: DPSAGE and SAGE on real data at epsilon = 1.0, ACSEmployment).
SPENDING_CLAIMS: tuple[SpendingClaim, ...] = (
    SpendingClaim(
        _SPENDING, "Section 5", ("2a", "2b"), "ACSEmployment-CA",
        "SQ and FSQ exhibit higher variance compared to MST at epsilon = e^0, and "
        "thus an unreliable advantage over MST for a low privacy budget.",
        ("accuracy", "f1"), ("sq", "fsq_bal", "fsq_fnr", "mst"), _ALL_GROUPS, (0,),
    ),
    SpendingClaim(
        _SPENDING, "Section 5", ("2a", "2b"), "ACSEmployment-CA",
        "beginning with epsilon = e^1 (not shown), and particularly for epsilon = "
        "{e^2, e^3}, SQ outperforms MST, both overall and in each white and black "
        "group.",
        ("accuracy", "f1"), ("sq", "mst"), _ALL_GROUPS, (1, 2, 3),
    ),
    SpendingClaim(
        _SPENDING, "Section 5", ("4a", "4b"), "ACSMobility-NM",
        "A similar trend holds for ACSMobility",
        ("accuracy", "f1"), ("sq", "mst"), _ALL_GROUPS, (2, 3, 4),
    ),
    SpendingClaim(
        _SPENDING, "Section 5", ("5a", "5b"), "ACSPublicCoverage-NM",
        "ACSPublicCoverage requires a higher privacy budget epsilon = {e^3, e^4}",
        ("accuracy", "f1"), ("sq", "mst"), _ALL_GROUPS, (3, 4),
    ),
    SpendingClaim(
        _SPENDING, "Section 5", ("2a", "2b"), "ACSEmployment-CA",
        "FSQ-Bal balances accuracy across groups, while outperforming MST in both "
        "accuracy and f1, albeit with higher variance.",
        ("accuracy", "f1"), ("fsq_bal", "mst"), _ALL_GROUPS, (0, 2, 3),
    ),
    SpendingClaim(
        _SPENDING, "Section 5", ("2c", "2d"), "ACSEmployment-CA",
        "FSQ-Bal is, indeed, able to balance FPR and FNR across groups.",
        ("fnr", "fpr"), ("fsq_bal",), ("white", "black"), (0, 2, 3),
    ),
    SpendingClaim(
        _SPENDING, "Section 5", ("2c",), "ACSEmployment-CA",
        "FSQ-FNR achieves lower FNR for the black group even compared to the DP "
        "classifier on real data",
        ("fnr",), ("fsq_fnr", "real"), ("black",), (0, 2, 3),
    ),
    SpendingClaim(
        _SPENDING, "Appendix A.1", ("4a", "4b"), "ACSMobility-NM",
        "at these medium/large epsilon values, the SuperQUAIL method matches the "
        "accuracy and F1 scores of the real data, whereas MST stagnates in its "
        "performance.",
        ("accuracy", "f1"), ("sq", "real", "mst"), ("overall",), (2, 3, 4),
    ),
    SpendingClaim(
        _SPENDING, "Appendix A.2", ("5a", "5b", "5c", "5d"), "ACSPublicCoverage-NM",
        "SuperQUAIL only begins to outperform MST at high privacy budgets epsilon in "
        "{e^3, e^4}.",
        ("accuracy", "f1"), ("sq", "mst"), ("overall",), (3, 4),
    ),
    SpendingClaim(
        _SPENDING, "Section 6, Limitations", ("2a", "2b"), "ACSEmployment-CA",
        "Marginal-based DP data synthesizers, such as MST, outperform SuperQUAIL at "
        "low epsilon values",
        ("accuracy", "f1"), ("mst", "sq"), ("overall",), (0,),
    ),
)  # fmt: skip


def spending_description(dataset: str) -> pd.DataFrame:
    """Return one of Tables 3-5 as a frame: statistics as rows, ACS columns.

    The frame lines up with :func:`dpnotes.data.spending.describe_spending` (count
    included, from the caption), so the two compare cell by cell.

    Args:
        dataset: ``"ACSEmployment-CA"`` (Table 3), ``"ACSMobility-NM"`` (Table 4) or
            ``"ACSPublicCoverage-NM"`` (Table 5).

    Returns:
        A float frame with rows ``count`` and :data:`SPENDING_DESCRIPTION_STATS`.

    Raises:
        ValueError: For another data set.

    Examples:
        >>> spending_description("ACSMobility-NM").loc["mean", "MIG"]
        np.float64(0.75)
    """
    if dataset not in SPENDING_DESCRIPTIONS:
        raise ValueError(
            f"unknown data set {dataset!r}; Tables 3-5 describe "
            f"{list(SPENDING_DESCRIPTIONS)}."
        )
    columns = [acs for _, acs in SPENDING_DESCRIPTION_COLUMNS[dataset]]
    rows = {"count": [float(SPENDING_DESCRIPTION_COUNTS[dataset])] * len(columns)}
    rows.update({s: list(v) for s, v in SPENDING_DESCRIPTIONS[dataset].items()})
    return pd.DataFrame.from_dict(rows, orient="index", columns=columns)


_TABLE_OF = {"ACSEmployment-CA": 3, "ACSMobility-NM": 4, "ACSPublicCoverage-NM": 5}


def _spending() -> Iterable[Reported]:
    e3 = SPENDING_EPSILONS[3]
    for method, rows in SPENDING_TABLE1.items():
        eps = None if method == "real" else e3
        for group, (acc, fnr) in rows.items():
            where = f"Table 1, row '{group.capitalize()}', column '{method}'"
            for quantity, value in (("accuracy_pct", acc), ("fnr_pct", fnr)):
                yield Reported(
                    _SPENDING, where, "ACSEmployment-CA", method, group, quantity,
                    value, epsilon=eps,
                )  # fmt: skip
    for group, value in SPENDING_TABLE1_BASE_RATES.items():
        where = f"Table 1, row '{group.capitalize()}', column 'Base rate (%)'"
        yield Reported(
            _SPENDING, where, "ACSEmployment-CA", "data", group, "base_rate_pct",
            value,
        )  # fmt: skip
    for group, value in SPENDING_TABLE1_SHARES.items():
        yield Reported(
            _SPENDING, "Table 1, caption", "ACSEmployment-CA", "data", group,
            "share_pct", value,
        )  # fmt: skip
    for (method, group, quantity), value in SPENDING_TABLE1_TEXT.items():
        yield Reported(
            _SPENDING, "Section 1 (on Table 1)", "ACSEmployment-CA", method, group,
            quantity, value, epsilon=None if method == "real" else e3,
        )  # fmt: skip
    for dataset, metrics in SPENDING_TABLE2.items():
        where = f"Table 2, row '{dataset.split('-')[0]}'"
        for metric, values in metrics.items():
            for eps, value in zip(SPENDING_TABLE2_EPSILONS, values, strict=True):
                yield Reported(
                    _SPENDING, where, dataset, "dpsage", "all", metric, value,
                    epsilon=eps,
                )  # fmt: skip
    for dataset, stats in SPENDING_DESCRIPTIONS.items():
        table = _TABLE_OF[dataset]
        yield Reported(
            _SPENDING, f"Table {table}, caption", dataset, "data", "all", "count",
            SPENDING_DESCRIPTION_COUNTS[dataset],
        )  # fmt: skip
        for stat, values in stats.items():
            columns = SPENDING_DESCRIPTION_COLUMNS[dataset]
            for (printed, acs), value in zip(columns, values, strict=True):
                where = f"Table {table}, row '{stat}', column '{printed}'"
                yield Reported(
                    _SPENDING, where, dataset, "data", "all", stat, value,
                    feature=acs,
                )  # fmt: skip
    for k, value in SPENDING_EPSILONS.items():
        yield Reported(
            _SPENDING, f"Section 3.3 (e^{k})", "all", "all", "all", "epsilon", value
        )
    yield Reported(
        _SPENDING, "Figure 3, caption", "ACSEmployment-CA", "dpsage", "all",
        "epsilon", 1.0,
    )  # fmt: skip
    for k, (alpha, gamma) in SPENDING_SPLITS.items():
        where = "Section 5, Settings (Figures 2a-2d)"
        for quantity, value in (("alpha", alpha), ("gamma", gamma)):
            yield Reported(
                _SPENDING, where, "ACSEmployment-CA", "sq", "all", quantity, value,
                epsilon=SPENDING_EPSILONS[k],
            )  # fmt: skip
    for (dataset, quantity), (value, where) in SPENDING_DATA.items():
        yield Reported(_SPENDING, where, dataset, "data", "all", quantity, value)


def reported(**match: object) -> list[Reported]:
    """Return the reported numbers whose fields equal ``match``.

    Args:
        **match: Field values to select by, e.g. ``paper="xu2021removing"``,
            ``quantity="delta"``, ``dataset="mnist"``.

    Returns:
        The matching :class:`Reported` values, in the papers' order.

    Raises:
        ValueError: If a keyword is not a field of :class:`Reported`.

    Examples:
        >>> [r.value for r in reported(where="Table 1, row 'SGD'", dataset="adult")]
        [0.8099, 0.761, 0.9117]
    """
    fields = set(Reported.__dataclass_fields__)
    unknown = sorted(set(match) - fields)
    if unknown:
        raise ValueError(
            f"reported(): unknown field(s) {unknown}; select by {sorted(fields)}."
        )
    return [r for r in _all() if all(getattr(r, k) == v for k, v in match.items())]


def reported_frame() -> pd.DataFrame:
    """Every reported number as a table, one row per :class:`Reported`."""
    return pd.DataFrame([r.__dict__ for r in _all()])


def _all() -> Iterable[Reported]:
    yield from _dpsgdf()
    yield from _spending()
    yield from _stratification()


# =====================================================================================
# The stratification paper (rosenblatt2024stratification)
# =====================================================================================
#
# Numbering: the arXiv version 2312.11712v1 with its appendix (Tables 1-3 and
# Figures 6-10 are in the appendix only); its Definition 11, Proposition 9 and Theorem
# 10 are the AAAI version's Definition 10, Proposition 8 and Theorem 9. Claims the
# paper makes without a number are :class:`Claim` objects whose text is our paraphrase.

_ROSENBLATT = "rosenblatt2024stratification"

#: The columns of the stratification paper's Table 1 (appendix D: the New York 2018
#: person file, all ages, used for mean estimation): per variable ``(count, mean, std,
#: min, max, median)`` as printed (the range as its two ends).
STRAT_TABLE1: Mapping[str, tuple[int, float, float, float, float, float]] = {
    "SEX": (196967, 1.517, 0.5, 1, 2, 2),
    "DIS": (196967, 1.865, 0.341, 1, 2, 2),
    "NATIVITY": (196967, 1.196, 0.397, 1, 2, 1),
    "RAC1P": (196967, 2.186, 2.342, 1, 9, 1),
    "AGEP": (196967, 41.831, 23.554, 0, 95, 42),
    "SCHL": (191372, 16.39, 5.686, 1, 24, 18),
    "WKHP": (103756, 37.562, 13.105, 1, 99, 40),
    "JWMNP": (87355, 33.464, 26.601, 1, 138, 30),
    "PINCP": (166318, 46657.585, 76027.3, -8300, 1423000, 26500),
}

#: The count of every column of the stratification paper's Table 2 (its caption: all
#: columns fully represented).
STRAT_TABLE2_COUNT = 196967

#: The stratification paper's Table 2 (appendix D: the ten ACSEmployment columns of the
#: synthesis experiments, New York, as the authors coded them; AGEP, SCHL and MIL are
#: codes 0-4, not years): per column ``(mean, std, min, max, median)`` as printed.
STRAT_TABLE2: Mapping[str, tuple[float, float, float, float, float]] = {
    "AGEP": (1.687, 1.234, 0, 4, 2),
    "SCHL": (2.834, 1.246, 0, 4, 3),
    "MAR": (3.043, 1.867, 1, 5, 3),
    "DIS": (1.865, 0.341, 1, 2, 2),
    "ESP": (0.543, 1.587, 0, 8, 0),
    "MIL": (3.183, 1.547, 0, 4, 4),
    "DREM": (1.852, 0.471, 0, 2, 2),
    "SEX": (1.517, 0.5, 1, 2, 2),
    "RAC1P": (2.186, 2.342, 1, 9, 1),
    "ESR": (0.464, 0.499, 0, 1, 0),
}

#: The race labels of the stratification paper's Table 3 and their ``RAC1P`` codes (ACS
#: PUMS 2018 codebook); the paper truncates label 5.
STRAT_RACE_CODES: Mapping[str, int] = {
    "White": 1,
    "Black": 2,
    "American Indian alone": 3,
    "Alaska Native alone": 4,
    "American Indian and/or Alaska Native (tribes no…": 5,
    "Asian": 6,
    "Native Hawaiian": 7,
    "Some other race alone": 8,
    "Two or more races": 9,
}

#: The stratification paper's Table 3 (appendix D: New York ACSEmployment, all ages):
#: records by ``(SEX, RAC1P)`` code (``SEX`` 1 male, 2 female), in its row order.
STRAT_TABLE3: Mapping[tuple[int, int], int] = {
    (2, 1): 70881,
    (1, 1): 67593,
    (2, 2): 12947,
    (1, 2): 11077,
    (2, 6): 8900,
    (1, 6): 8130,
    (2, 8): 5668,
    (1, 8): 5296,
    (2, 9): 3026,
    (1, 9): 2620,
    (1, 3): 277,
    (2, 3): 231,
    (1, 5): 125,
    (2, 5): 119,
    (1, 7): 42,
    (2, 7): 30,
    (2, 4): 3,
    (1, 4): 2,
}


@dataclass(frozen=True)
class NyRaceExample:
    """The stratification paper's worked example: the race groups of New York.

    Attributes:
        n: Records (the New York person file, all ages).
        k: Race groups (``RAC1P`` codes).
        shares: The leading group shares as printed (the paper elides the rest).
        alpha: The Dirichlet parameter its "iterative Monte Carlo" fit gives ("≈").
        gain: How much better than the worst case the expected error is, relative to
            the best case ("approximately ~80%"), as a fraction.
        where: Where it stands.
    """

    n: int
    k: int
    shares: tuple[float, ...]
    alpha: float
    gain: float
    where: str


#: The New York race example (section "Adaptive Private Mean Estimation", the
#: paragraph after Figure 1; arXiv and AAAI alike).
STRAT_NY_RACE = NyRaceExample(
    n=196967,
    k=9,
    shares=(0.70, 0.12, 0.086, 0.056, 0.029),
    alpha=0.13,
    gain=0.80,
    where="section 'Adaptive Private Mean Estimation', the New York race example",
)


@dataclass(frozen=True)
class Claim:
    """One thing the stratification paper states about a figure or its experiments.

    Attributes:
        where: Where it stands (figure caption, or the text that cites the figure).
        claim: What it states, in our words (the paper's numbers kept exact).
        values: The numbers it states, in the order ``claim`` names them; empty for a
            claim without a number.
    """

    where: str
    claim: str
    values: tuple[float, ...] = ()


#: What the stratification paper states for each of Figures 1-10 and for its
#: experiments, by key (``"fig3-error"``); the text of each is our paraphrase.
STRAT_CLAIMS: Mapping[str, Claim] = {
    "fig1-interpolation": Claim(
        "Figure 1 and the text citing it",
        "for Dirichlet alpha in [0.2, 1.0) the expected sum of log group sizes lies "
        "between the lower bound and the worst case k log(n/k)",
        (0.2, 1.0),
    ),
    "fig2-overall": Claim(
        "text citing Figure 2 (top row)",
        "the overall-mean error of stratified COINPRESS stays controlled; for SCHL, "
        "WKHP and JWMNP stratifying sometimes improves on COINPRESS's overall mean",
    ),
    "fig2-pincp": Claim(
        "text citing Figure 2 (top row)",
        "PINCP (wide, long-tailed) is the hard case for stratification",
    ),
    "fig2-parity": Claim(
        "text citing Figure 2 (bottom row)",
        "StratCoinpress keeps the parity error tightly controlled; COINPRESS loses "
        "much utility for most intersectional groups",
    ),
    "fig2-groups": Claim(
        "text citing Figure 2",
        "groups from sex (2 levels), race (9), bucketed age (5) and disability (2)",
        (2, 9, 5, 2),
    ),
    "fig2-domains": Claim(
        "captions of Figures 2 and 8",
        "SCHL ranges over 0-24, WKHP over 0-168, JWMNP over 0-400",
        (24, 168, 400),
    ),
    "fig3-runs": Claim("Figure 3, caption", "50 runs per point", (50,)),
    "fig3-error": Claim(
        "Figure 3, caption",
        "for n >= 10,000 the error is at most 1%",
        (10_000, 0.01),
    ),
    "fig3-converge": Claim(
        "Figure 3, caption, and the text citing it",
        "the stratified variants converge to COINPRESS as n grows: no price in "
        "global error for large samples",
    ),
    "abstract-coinpress": Claim(
        "abstract",
        "for COINPRESS, stratifying can even reduce the error of the global mean",
    ),
    "fig4-real": Claim(
        "Figure 4, caption",
        "a classifier trained on real data reaches accuracy about 0.8",
        (0.8,),
    ),
    "fig4-gap": Claim(
        "Figure 4, caption",
        "for epsilon >= 1 stratified and unstratified accuracy differ by at most 2%",
        (1.0, 0.02),
    ),
    "fig4-low-eps": Claim(
        "text citing Figure 4",
        "stratification harms the synthetic data's utility only for epsilon < 0.1",
        (0.1,),
    ),
    "fig5-all": Claim(
        "text citing Figure 5",
        "the stratified variants of all synthesizers reduce parity error",
    ),
    "fig5-gem-best": Claim(
        "text citing Figure 5",
        "GEM gives the best parity error at nearly every epsilon",
    ),
    "fig5-reduction": Claim(
        "Figure 5, caption",
        "stratifying GEM reduces parity error by 200% or more",
        (2.0,),
    ),
    "fig5-aim": Claim(
        "Figure 5, caption",
        "vanilla AIM has the lower parity error at low budgets, stratified AIM at "
        "higher ones",
    ),
    "fig6": Claim(
        "Figure 6, caption",
        "complete synthetic COINPRESS results (no value stated)",
    ),
    "fig7-k": Claim(
        "Figure 7, caption",
        "over 50 runs, the error is low and relatively stable across reasonable "
        "numbers of groups k",
        (50,),
    ),
    "fig7a": Claim(
        "text citing Figure 7a",
        "for all synthesizers the maximum disparity of all means falls as epsilon "
        "grows",
    ),
    "fig7b": Claim(
        "text citing Figure 7b",
        "for all synthesizers the demographic parity rises towards 1 as epsilon grows",
        (1.0,),
    ),
    "fig7c": Claim(
        "text citing Figure 7c",
        "for all synthesizers the largest false negative rate difference falls as "
        "epsilon grows",
    ),
    "fig8-task": Claim(
        "Figure 8, caption",
        "the full version of Figure 2 (four variables), captioned as the Mobility task",
    ),
    "fig9-gem": Claim(
        "text citing Figure 9",
        "stratified GEM achieves low 3-way-marginal parity error",
    ),
    "fig9-aim": Claim(
        "text citing Figure 9",
        "below epsilon = 1.0 vanilla AIM's parity error is much larger than its "
        "stratified variant's",
        (1.0,),
    ),
    "fig10": Claim(
        "Figure 10 and the text citing it",
        "100 Dirichlet draws for k = 3 and alpha in {0.1, 1, 10}",
        (100, 3, 0.1, 1.0, 10.0),
    ),
    "synthesis-settings": Claim(
        "section on private data synthesis",
        "epsilon in {0.01, 0.05, 0.1, 0.5, 1.0, 5.0}; 5 seeds per synthesizer and "
        "setting",
        (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 5),
    ),
}

#: The authors' public repository and the commit whose files :data:`STRAT_AUTHORS`
#: quotes (its last commit, 2023-05-13).
STRAT_AUTHORS_REPOSITORY = "lurosenb/stratify_dp"
#: That commit.
STRAT_AUTHORS_COMMIT = "a4b70789442e55c0c789cb4da419f5e55c14fd64"


@dataclass(frozen=True)
class AuthorsNumber:
    """A number computed from a file the stratification paper's authors committed.

    Attributes:
        file: The file in :data:`STRAT_AUTHORS_REPOSITORY` at
            :data:`STRAT_AUTHORS_COMMIT`.
        quantity: What the number is and how it is read off the file.
        values: The number(s), rounded as quoted.
    """

    file: str
    quantity: str
    values: tuple[float, ...]


#: Numbers read off the authors' stored results, keyed like :data:`STRAT_CLAIMS` where
#: they bear on a claim. The census means (``stratified_data_means.db``, table
#: ``means``) are one run on the full New York file; the overall COINPRESS estimate is
#: compared with the exact mean, the stratified one recombines the private stratum
#: estimates with the exact stratum sizes (as the authors' notebook does), over the 31
#: attribute sets. ``results_df.pkl`` is the synthetic-mixture table of
#: ``coinpress_results.ipynb`` (10 runs per cell); the synthesis files hold 5 seeds per
#: synthesizer, stratification and epsilon, parity vectors summed over the variables
#: with NaN dropped, as ``plots_for_synths.ipynb`` plots them.
STRAT_AUTHORS: Mapping[str, AuthorsNumber] = {
    "table1-sizes": AuthorsNumber(
        "stratified_data_means.db",
        "records of SCHL, WKHP, JWMNP, PINCP (the private 'overall' sizes)",
        (191372, 103756, 87355, 166318),
    ),
    "table1-means": AuthorsNumber(
        "stratified_data_means.db",
        "exact ('standard') overall means of SCHL, WKHP, JWMNP, PINCP",
        (16.3895, 37.5623, 33.4640, 46657.585),
    ),
    "fig2-coinpress-bias": AuthorsNumber(
        "stratified_data_means.db",
        "COINPRESS overall estimate minus the exact mean, SCHL, WKHP, JWMNP (the same "
        "in all 31 attribute sets)",
        (0.770, 0.760, -1.085),
    ),
    "fig2-coinpress-relative": AuthorsNumber(
        "stratified_data_means.db",
        "the same as a share of the mean, SCHL, WKHP, JWMNP",
        (0.047, 0.020, 0.032),
    ),
    "fig2-overall": AuthorsNumber(
        "stratified_data_means.db",
        "attribute sets (of 31) where the stratified estimate is closer to the exact "
        "mean than COINPRESS's, SCHL, WKHP, JWMNP, PINCP",
        (23, 30, 21, 1),
    ),
    "fig3-strat-error": AuthorsNumber(
        "results_df.pkl",
        "StratCoinpress mean error, smallest and largest over the 90 cells",
        (0.00016, 0.0025),
    ),
    "fig3-below": AuthorsNumber(
        "results_df.pkl",
        "cells (alpha, k, n) where StratCoinpress's error is below COINPRESS's, of 90",
        (84, 90),
    ),
    "fig3-error": AuthorsNumber(
        "results_df.pkl",
        "largest mean error at n >= 10,000 (stored n), COINPRESS, StratCoinpress, "
        "StratCoinpressPublic",
        (0.0032, 0.0024, 0.0149),
    ),
    "fig3-runs": AuthorsNumber(
        "coinpress_results.ipynb",
        "runs per cell (the loop 'for i in range(10)')",
        (10,),
    ),
    "fig4-gap": AuthorsNumber(
        "gem_mst_performance.pkl, aim_performance.pkl",
        "largest |stratified - vanilla| mean accuracy (random forest) at epsilon >= 1, "
        "MST, AIM, GEM",
        (0.0145, 0.0124, 0.0077),
    ),
    "fig4-low-eps": AuthorsNumber(
        "gem_mst_performance.pkl, aim_performance.pkl",
        "mean accuracy (random forest) with sex x race strata minus without strata "
        "at epsilon = 0.1, MST, AIM, GEM",
        (-0.0217, -0.0185, 0.0064),
    ),
    "fig4-real": AuthorsNumber(
        "gem_mst_performance.pkl, aim_performance.pkl",
        "highest mean accuracy of any synthesizer variant (the real-data accuracy is "
        "not stored)",
        (0.791,),
    ),
    "fig5-all": AuthorsNumber(
        "gem_mst_performance.pkl, aim_performance.pkl",
        "comparisons (synthesizer x grouping x epsilon) where stratifying by a "
        "grouping lowers the parity error over it: all, MST, AIM, GEM (of 54, 18, "
        "18, 18)",
        (26, 1, 9, 16),
    ),
    "fig5-by-epsilon": AuthorsNumber(
        "gem_mst_performance.pkl, aim_performance.pkl",
        "fig5-all per epsilon: of the 3 groupings, those where stratifying by the "
        "grouping lowers the parity error over it (summed over the variables with "
        "nansum, mean of the 5 seeds), MST, AIM, GEM at epsilon 0.01, then 0.05, "
        "0.1, 0.5, 1, 5",
        (0, 1, 1, 0, 1, 3, 0, 1, 3, 0, 3, 3, 1, 1, 3, 0, 2, 3),
    ),
    "fig5-reduction": AuthorsNumber(
        "gem_mst_performance.pkl, aim_performance.pkl",
        "vanilla over stratified GEM parity error at epsilon >= 0.05, smallest and "
        "largest, SEX x RAC1P strata",
        (1.63, 4.84),
    ),
    "fig5-gem-best": AuthorsNumber(
        "gem_mst_performance.pkl, aim_performance.pkl",
        "epsilons (of 6) at which a stratified GEM has the lowest SEX x RAC1P parity "
        "error of all variants",
        (5, 6),
    ),
    "gem-vanilla-sex-parity": AuthorsNumber(
        "gem_mst_performance.pkl",
        "vanilla GEM's parity error over sex, summed over the variables as "
        "plots_for_synths.ipynb sums it, mean of the 5 seeds, at epsilon 0.01, 0.05, "
        "0.1, 0.5, 1, 5",
        (0.434, 0.393, 0.353, 0.343, 0.370, 0.409),
    ),
}


def _stratification() -> Iterable[Reported]:
    table1 = ("count", "mean", "std", "min", "max", "median")
    for column, values in STRAT_TABLE1.items():
        for quantity, value in zip(table1, values, strict=True):
            where = f"Table 1, column '{column}', row '{quantity}'"
            yield Reported(_ROSENBLATT, where, "NY", "data", column, quantity, value)
    for column, values in STRAT_TABLE2.items():
        for quantity, value in zip(table1[1:], values, strict=True):
            where = f"Table 2, column '{column}', row '{quantity}'"
            yield Reported(_ROSENBLATT, where, "NY", "data", column, quantity, value)
    sex = {1: "Male", 2: "Female"}
    race = {code: label for label, code in STRAT_RACE_CODES.items()}
    for (s, r), count in STRAT_TABLE3.items():
        where = f"Table 3, row '{sex[s]} {race[r]}'"
        group = f"SEX={s}, RAC1P={r}"
        yield Reported(_ROSENBLATT, where, "NY", "data", group, "count", count)
    ex = STRAT_NY_RACE
    for quantity, value in (("n", ex.n), ("alpha", ex.alpha), ("gain", ex.gain)):
        yield Reported(
            _ROSENBLATT, ex.where, "NY", "dirichlet", "RAC1P", quantity, value
        )
    for key, claim in STRAT_CLAIMS.items():
        for i, value in enumerate(claim.values):
            where = f"{claim.where} ({key}, value {i + 1})"
            yield Reported(_ROSENBLATT, where, "", "claim", "all", key, value)
