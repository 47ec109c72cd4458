"""The numbers the reproduced papers report, as data, with the table and row of each.

A chapter that puts a paper's number beside ours takes it from here, never types it:
one place to read, cite and check (``tests/test_paper_numbers.py`` compares every value
with the paper's text where the text is available). Each value is a :class:`Reported`:
the paper (its bibliography key), where in the paper it stands, the data set, method,
group and quantity, and the value as printed.

So far: the DPSGD-F paper's Tables 1-3 and its epsilons (xu2021removing); the
"Spending privacy budget wisely and fairly" paper's Tables 1-5, the numbers its text
states about Table 1 and Figures 2-5, and its claims about those figures as
:class:`Claim` records (rosenblatt2022spending).

References:
    xu2021removing: Tables 1, 2 and 3, and section 6 (the epsilons of the settings).
    rosenblatt2022spending: Tables 1-5, sections 1, 3.3, 5 and 6, appendix A.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pandas as pd

__all__ = [
    "DPSGDF_EPSILON",
    "DPSGDF_GROUPS",
    "DPSGDF_SAMPLE_SIZES",
    "DPSGDF_TABLE1",
    "DPSGDF_TABLE2",
    "DPSGDF_TABLE3",
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
    "Claim",
    "Reported",
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

_ROSENBLATT = "rosenblatt2022spending"

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
class Claim:
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
SPENDING_CLAIMS: tuple[Claim, ...] = (
    Claim(
        _ROSENBLATT, "Section 5", ("2a", "2b"), "ACSEmployment-CA",
        "SQ and FSQ exhibit higher variance compared to MST at epsilon = e^0, and "
        "thus an unreliable advantage over MST for a low privacy budget.",
        ("accuracy", "f1"), ("sq", "fsq_bal", "fsq_fnr", "mst"), _ALL_GROUPS, (0,),
    ),
    Claim(
        _ROSENBLATT, "Section 5", ("2a", "2b"), "ACSEmployment-CA",
        "beginning with epsilon = e^1 (not shown), and particularly for epsilon = "
        "{e^2, e^3}, SQ outperforms MST, both overall and in each white and black "
        "group.",
        ("accuracy", "f1"), ("sq", "mst"), _ALL_GROUPS, (1, 2, 3),
    ),
    Claim(
        _ROSENBLATT, "Section 5", ("4a", "4b"), "ACSMobility-NM",
        "A similar trend holds for ACSMobility",
        ("accuracy", "f1"), ("sq", "mst"), _ALL_GROUPS, (2, 3, 4),
    ),
    Claim(
        _ROSENBLATT, "Section 5", ("5a", "5b"), "ACSPublicCoverage-NM",
        "ACSPublicCoverage requires a higher privacy budget epsilon = {e^3, e^4}",
        ("accuracy", "f1"), ("sq", "mst"), _ALL_GROUPS, (3, 4),
    ),
    Claim(
        _ROSENBLATT, "Section 5", ("2a", "2b"), "ACSEmployment-CA",
        "FSQ-Bal balances accuracy across groups, while outperforming MST in both "
        "accuracy and f1, albeit with higher variance.",
        ("accuracy", "f1"), ("fsq_bal", "mst"), _ALL_GROUPS, (0, 2, 3),
    ),
    Claim(
        _ROSENBLATT, "Section 5", ("2c", "2d"), "ACSEmployment-CA",
        "FSQ-Bal is, indeed, able to balance FPR and FNR across groups.",
        ("fnr", "fpr"), ("fsq_bal",), ("white", "black"), (0, 2, 3),
    ),
    Claim(
        _ROSENBLATT, "Section 5", ("2c",), "ACSEmployment-CA",
        "FSQ-FNR achieves lower FNR for the black group even compared to the DP "
        "classifier on real data",
        ("fnr",), ("fsq_fnr", "real"), ("black",), (0, 2, 3),
    ),
    Claim(
        _ROSENBLATT, "Appendix A.1", ("4a", "4b"), "ACSMobility-NM",
        "at these medium/large epsilon values, the SuperQUAIL method matches the "
        "accuracy and F1 scores of the real data, whereas MST stagnates in its "
        "performance.",
        ("accuracy", "f1"), ("sq", "real", "mst"), ("overall",), (2, 3, 4),
    ),
    Claim(
        _ROSENBLATT, "Appendix A.2", ("5a", "5b", "5c", "5d"), "ACSPublicCoverage-NM",
        "SuperQUAIL only begins to outperform MST at high privacy budgets epsilon in "
        "{e^3, e^4}.",
        ("accuracy", "f1"), ("sq", "mst"), ("overall",), (3, 4),
    ),
    Claim(
        _ROSENBLATT, "Section 6, Limitations", ("2a", "2b"), "ACSEmployment-CA",
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
                    _ROSENBLATT, where, "ACSEmployment-CA", method, group, quantity,
                    value, epsilon=eps,
                )  # fmt: skip
    for group, value in SPENDING_TABLE1_BASE_RATES.items():
        where = f"Table 1, row '{group.capitalize()}', column 'Base rate (%)'"
        yield Reported(
            _ROSENBLATT, where, "ACSEmployment-CA", "data", group, "base_rate_pct",
            value,
        )  # fmt: skip
    for group, value in SPENDING_TABLE1_SHARES.items():
        yield Reported(
            _ROSENBLATT, "Table 1, caption", "ACSEmployment-CA", "data", group,
            "share_pct", value,
        )  # fmt: skip
    for (method, group, quantity), value in SPENDING_TABLE1_TEXT.items():
        yield Reported(
            _ROSENBLATT, "Section 1 (on Table 1)", "ACSEmployment-CA", method, group,
            quantity, value, epsilon=None if method == "real" else e3,
        )  # fmt: skip
    for dataset, metrics in SPENDING_TABLE2.items():
        where = f"Table 2, row '{dataset.split('-')[0]}'"
        for metric, values in metrics.items():
            for eps, value in zip(SPENDING_TABLE2_EPSILONS, values, strict=True):
                yield Reported(
                    _ROSENBLATT, where, dataset, "dpsage", "all", metric, value,
                    epsilon=eps,
                )  # fmt: skip
    for dataset, stats in SPENDING_DESCRIPTIONS.items():
        table = _TABLE_OF[dataset]
        yield Reported(
            _ROSENBLATT, f"Table {table}, caption", dataset, "data", "all", "count",
            SPENDING_DESCRIPTION_COUNTS[dataset],
        )  # fmt: skip
        for stat, values in stats.items():
            columns = SPENDING_DESCRIPTION_COLUMNS[dataset]
            for (printed, acs), value in zip(columns, values, strict=True):
                where = f"Table {table}, row '{stat}', column '{printed}'"
                yield Reported(
                    _ROSENBLATT, where, dataset, "data", "all", stat, value,
                    feature=acs,
                )  # fmt: skip
    for k, value in SPENDING_EPSILONS.items():
        yield Reported(
            _ROSENBLATT, f"Section 3.3 (e^{k})", "all", "all", "all", "epsilon", value
        )
    yield Reported(
        _ROSENBLATT, "Figure 3, caption", "ACSEmployment-CA", "dpsage", "all",
        "epsilon", 1.0,
    )  # fmt: skip
    for k, (alpha, gamma) in SPENDING_SPLITS.items():
        where = "Section 5, Settings (Figures 2a-2d)"
        for quantity, value in (("alpha", alpha), ("gamma", gamma)):
            yield Reported(
                _ROSENBLATT, where, "ACSEmployment-CA", "sq", "all", quantity, value,
                epsilon=SPENDING_EPSILONS[k],
            )  # fmt: skip
    for (dataset, quantity), (value, where) in SPENDING_DATA.items():
        yield Reported(_ROSENBLATT, where, dataset, "data", "all", quantity, value)


def _every() -> Iterable[Reported]:
    yield from _dpsgdf()
    yield from _spending()


# --------------------------------------------------------------------------------------
# Selection, for every paper.
# --------------------------------------------------------------------------------------


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
    return [r for r in _every() if all(getattr(r, k) == v for k, v in match.items())]


def reported_frame() -> pd.DataFrame:
    """Every reported number as a table, one row per :class:`Reported`."""
    return pd.DataFrame([r.__dict__ for r in _every()])
