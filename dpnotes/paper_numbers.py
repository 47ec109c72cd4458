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
(:data:`STRAT_AUTHORS`).

References:
    xu2021removing: Tables 1, 2 and 3, and section 6 (the epsilons of the settings).
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
    "DPSGDF_GROUPS",
    "DPSGDF_SAMPLE_SIZES",
    "DPSGDF_TABLE1",
    "DPSGDF_TABLE2",
    "DPSGDF_TABLE3",
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
    "reported",
    "reported_frame",
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
    """

    paper: str
    where: str
    dataset: str
    method: str
    group: str
    quantity: str
    value: float
    clip_norm: float | None = None


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
