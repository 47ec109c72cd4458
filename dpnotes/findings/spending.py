"""The spending paper's statements about its Figures 2, 4 and 5, checked on our runs.

The paper (rosenblatt2022spending, Section 5, Appendix A and Section 6) describes its
end-to-end figures in words: "SQ outperforms MST, both overall and in each white and
black group", "FSQ-Bal is able to balance FPR and FNR across groups", and so on
(:data:`dpnotes.paper_numbers.SPENDING_CLAIMS`). This module turns each statement into
the comparisons it makes, evaluates them on a table of
:mod:`dpnotes.experiments.spending_e2e` (means over seeds), and returns one
:class:`~dpnotes.report.PaperCheck` per statement: how many of its comparisons hold,
and a verdict.

Reading of the words (the paper defines none of them):

* "A outperforms B": A's mean over seeds is above B's, for every metric, group and
  budget the statement covers.
* "balances X across groups": the gap between the white and black groups' X is smaller
  for the method than for MST, at every budget.
* "higher variance": the standard deviation over seeds is larger than MST's, for every
  method, metric and group named (at least two seeds are needed).
* "matches the real data": within :data:`MATCH_POINTS` (one point of accuracy or F1) of
  the non-private model on real data; "MST stagnates": MST's mean moves by less than
  that over the budgets named.
* "SQ only begins to outperform MST at e^3, e^4": SQ above MST at those budgets and not
  above it at the smaller ones the run has.

A statement reproduces when every one of its comparisons holds. Its paper data set
ACSEmployment on California is replaced by the New York sample (California is not
available offline); :func:`stand_in_sentence` says so once, for a table's caption. Plain
post-processing of stored metrics: no privacy budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from dpnotes import paper_numbers
from dpnotes.paper_numbers import SpendingClaim
from dpnotes.report import PaperCheck
from dpnotes.report import e_to_the as _e

__all__ = [
    "DATASET_FOR",
    "MATCH_POINTS",
    "check_spending_claims",
    "claim_comparisons",
    "stand_in_sentence",
]

#: Largest difference (accuracy or F1, as a fraction) that counts as "matching".
MATCH_POINTS = 0.01

#: The data set of our runs that stands for each of the paper's.
DATASET_FOR = {
    "ACSEmployment-CA": "ACSEmployment-NY-sample",
    "ACSMobility-NM": "ACSMobility-NM",
    "ACSPublicCoverage-NM": "ACSPublicCoverage-NM",
}

_COLUMNS = ("dataset", "epsilon", "seed", "method", "group", "metric", "value")

# One comparison: (description, holds).
Comparison = tuple[str, bool]


class _Runs:
    """Means and spreads over seeds of one data set's metrics, by budget exponent."""

    def __init__(self, table: pd.DataFrame, dataset: str) -> None:
        d = table[table["dataset"] == dataset]
        exponents = np.log(d["epsilon"].astype(float).to_numpy())
        d = d.assign(k=np.round(exponents).astype(int))
        grouped = d.groupby(["k", "method", "group", "metric"])["value"]
        self.mean = grouped.mean()
        self.sd = grouped.std(ddof=1)
        self.budgets = sorted(int(k) for k in d["k"].unique())
        self.seeds = int(d["seed"].nunique())

    def has(self, k: int) -> bool:
        return k in self.budgets

    def m(self, k: int, method: str, group: str, metric: str) -> float:
        return float(self.mean.get((k, method, group, metric), math.nan))

    def s(self, k: int, method: str, group: str, metric: str) -> float:
        return float(self.sd.get((k, method, group, metric), math.nan))


#: How the comparisons name methods and metrics (they are shown to readers).
_NAME = {"real": "Real", "real_dp": "Real-DP", "mst": "MST", "sq": "SQ",
         "fsq_bal": "FSQ-Bal", "fsq_fnr": "FSQ-FNR"}  # fmt: skip
_METRIC = {"accuracy": "accuracy", "f1": "F1", "fnr": "FNR", "fpr": "FPR"}


def _what(group: str, metric: str) -> str:
    """E.g. ``"black accuracy"``, ``"overall F1"``."""
    return f"{group} {_METRIC.get(metric, metric)}"


def _budgets(claim: SpendingClaim, runs: _Runs) -> list[int]:
    return [k for k in claim.log_epsilons if runs.has(k)]


def _better(
    runs: _Runs, a: str, b: str, ks: Sequence[int], groups, metrics
) -> list[Comparison]:
    return [
        (f"{_NAME[a]} above {_NAME[b]}: {_what(group, metric)} at {_e(k)}",
         runs.m(k, a, group, metric) > runs.m(k, b, group, metric))
        for k in ks for metric in metrics for group in groups
    ]  # fmt: skip


def _gap(runs: _Runs, k: int, method: str, metric: str) -> float:
    return abs(runs.m(k, method, "white", metric) - runs.m(k, method, "black", metric))


def _balances(runs: _Runs, method: str, ks, metrics) -> list[Comparison]:
    return [
        (f"{_NAME[method]}'s white–black {_METRIC[metric]} gap below MST's at {_e(k)}",
         _gap(runs, k, method, metric) < _gap(runs, k, "mst", metric))
        for k in ks for metric in metrics
    ]  # fmt: skip


def _variance(claim: SpendingClaim, runs: _Runs) -> list[Comparison]:
    others = [m for m in claim.methods if m != "mst"]
    return [
        (f"{_NAME[m]}'s sd above MST's: {_what(group, metric)} at {_e(k)}",
         runs.s(k, m, group, metric) > runs.s(k, "mst", group, metric))
        for k in _budgets(claim, runs) for m in others
        for metric in claim.metrics for group in claim.groups
    ]  # fmt: skip


def _sq_over_mst(claim: SpendingClaim, runs: _Runs) -> list[Comparison]:
    return _better(
        runs, "sq", "mst", _budgets(claim, runs), claim.groups, claim.metrics
    )


def _fsq_bal_balances_accuracy(claim: SpendingClaim, runs: _Runs) -> list[Comparison]:
    ks = _budgets(claim, runs)
    return _balances(runs, "fsq_bal", ks, ("accuracy",)) + _better(
        runs, "fsq_bal", "mst", ks, ("overall",), claim.metrics
    )


def _fsq_bal_balances_rates(claim: SpendingClaim, runs: _Runs) -> list[Comparison]:
    return _balances(runs, "fsq_bal", _budgets(claim, runs), claim.metrics)


def _fsq_fnr_below_real_dp(claim: SpendingClaim, runs: _Runs) -> list[Comparison]:
    # "the DP classifier on real data": Real-DP.
    return [
        (f"FSQ-FNR's black FNR below Real-DP's at {_e(k)}",
         runs.m(k, "fsq_fnr", "black", "fnr") < runs.m(k, "real_dp", "black", "fnr"))
        for k in _budgets(claim, runs)
    ]  # fmt: skip


def _sq_matches_real(claim: SpendingClaim, runs: _Runs) -> list[Comparison]:
    ks = _budgets(claim, runs)
    out = [
        (f"SQ within {MATCH_POINTS:g} of Real: overall {_METRIC[metric]} at {_e(k)}",
         abs(runs.m(k, "sq", "overall", metric) - runs.m(k, "real", "overall", metric))
         <= MATCH_POINTS)
        for k in ks for metric in claim.metrics
    ]  # fmt: skip
    for metric in claim.metrics:
        values = [runs.m(k, "mst", "overall", metric) for k in ks]
        out.append(
            (f"MST flat within {MATCH_POINTS:g}: overall {_METRIC[metric]}",
             len(values) > 1 and max(values) - min(values) < MATCH_POINTS)
        )  # fmt: skip
    return out


def _sq_only_from(claim: SpendingClaim, runs: _Runs) -> list[Comparison]:
    first = min(claim.log_epsilons)
    out = _sq_over_mst(claim, runs)
    for k in runs.budgets:
        if k < first:
            out += [
                (f"SQ not above MST: {_what('overall', metric)} at {_e(k)}",
                 not runs.m(k, "sq", "overall", metric)
                 > runs.m(k, "mst", "overall", metric))
                for metric in claim.metrics
                if not math.isnan(runs.m(k, "sq", "overall", metric) -
                                  runs.m(k, "mst", "overall", metric))
            ]  # fmt: skip
    return out


def _mst_over_sq(claim: SpendingClaim, runs: _Runs) -> list[Comparison]:
    return _better(
        runs, "mst", "sq", _budgets(claim, runs), claim.groups, claim.metrics
    )


#: How each statement of :data:`~dpnotes.paper_numbers.SPENDING_CLAIMS` is checked, in
#: its order, with a short name for the table.
_RULES: tuple[tuple[str, Callable[[SpendingClaim, _Runs], list[Comparison]]], ...] = (
    ("SQ and FSQ vary more than MST at e⁰", _variance),
    ("SQ outperforms MST from e¹, overall and per group", _sq_over_mst),
    ("ACSMobility: the same trend", _sq_over_mst),
    ("ACSPublicCoverage: SQ needs e³, e⁴", _sq_over_mst),
    ("FSQ-Bal balances accuracy, outperforms MST", _fsq_bal_balances_accuracy),
    ("FSQ-Bal balances FNR and FPR", _fsq_bal_balances_rates),
    ("FSQ-FNR: black FNR below the DP model on real data", _fsq_fnr_below_real_dp),
    ("ACSMobility: SQ matches real data, MST stagnates", _sq_matches_real),
    ("ACSPublicCoverage: SQ outperforms MST only at e³, e⁴", _sq_only_from),
    ("MST outperforms SQ at small epsilon", _mst_over_sq),
)


def _check_table(table: pd.DataFrame) -> None:
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a DataFrame, got {type(table).__name__}.")
    missing = [c for c in _COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(
            f"table lacks columns {missing}: pass a spending_e2e result table."
        )
    if not np.isfinite(table["epsilon"].astype(float)).all():
        raise ValueError("table has non-finite budgets in its 'epsilon' column.")


def _missing(table: pd.DataFrame, claim: SpendingClaim) -> list[str]:
    """Name the numbers a statement needs that the table lacks (or holds as NaN)."""
    runs = _Runs(table, DATASET_FOR[claim.dataset])
    if not runs.budgets:
        return []  # the whole data set is absent: "not in the stored runs"
    absent = [_e(k) for k in claim.log_epsilons if not runs.has(k)]
    if absent:
        return [f"the budget{'s' if len(absent) > 1 else ''} {', '.join(absent)}"]
    methods = set(claim.methods) | {"mst"}
    if _RULES[paper_numbers.SPENDING_CLAIMS.index(claim)][1] is _fsq_fnr_below_real_dp:
        methods |= {"real_dp"}
    groups = set(claim.groups) | (
        {"white", "black"} if "fsq_bal" in claim.methods else set()
    )
    return [
        f"{_NAME.get(m, m)}, {_what(g, metric)} at {_e(k)}"
        for k in _budgets(claim, runs)
        for m in sorted(methods)
        for g in sorted(groups)
        for metric in claim.metrics
        if math.isnan(runs.m(k, m, g, metric))
    ]


def claim_comparisons(
    table: pd.DataFrame, claim: SpendingClaim
) -> list[tuple[str, bool]]:
    """Return the comparisons one statement makes, each with whether it holds here.

    Args:
        table: A :mod:`~dpnotes.experiments.spending_e2e` result table.
        claim: One of :data:`~dpnotes.paper_numbers.SPENDING_CLAIMS`.

    Returns:
        ``[(description, holds), ...]``; empty where the table has none of the
        statement's data set or budgets.

    Raises:
        TypeError: If ``table`` is not a DataFrame.
        ValueError: If it lacks a column, or ``claim`` is not one of the paper's.
    """
    _check_table(table)
    claims = paper_numbers.SPENDING_CLAIMS
    if claim not in claims:
        raise ValueError("claim must be one of paper_numbers.SPENDING_CLAIMS.")
    runs = _Runs(table, DATASET_FOR[claim.dataset])
    if not runs.budgets:
        return []
    _, rule = _RULES[claims.index(claim)]
    if rule is _variance and runs.seeds < 2:
        return []
    return [(text, bool(holds)) for text, holds in rule(claim, runs)]


#: How the captions name the data sets of :data:`DATASET_FOR` that differ.
_READABLE = {
    "ACSEmployment-CA": "ACSEmployment in California",
    "ACSEmployment-NY-sample": "the New York sample",
}


def stand_in_sentence() -> str:
    """Say, once for a table of checks, which of our data sets stand in for the paper's.

    Returns:
        A sentence for a caption (empty when every data set is the paper's).

    Examples:
        >>> print(stand_in_sentence())  # doctest: +NORMALIZE_WHITESPACE
        Statements about ACSEmployment in California are checked on the New York
        sample, as the paper's data are not available offline.
    """
    swapped = [
        f"{_READABLE.get(theirs, theirs)} are checked on {_READABLE.get(ours, ours)}"
        for theirs, ours in DATASET_FOR.items()
        if ours != theirs
    ]
    if not swapped:
        return ""
    return (
        f"Statements about {'; about '.join(swapped)}, as the paper's data are not "
        "available offline."
    )


def check_spending_claims(table: pd.DataFrame) -> list[PaperCheck]:
    """Check every statement of the paper about Figures 2, 4 and 5 on a result table.

    Args:
        table: A :mod:`~dpnotes.experiments.spending_e2e` result table (any number of
            seeds; means over them are compared).

    Returns:
        One :class:`~dpnotes.report.PaperCheck` per statement, in the paper's order:
        ``ours`` says how many of its comparisons hold; the verdict is "reproduces"
        when all do, "differs" otherwise (the note names the first that fails), and
        "not comparable" where the table lacks the data set, the budgets or (for a
        statement about variance) a second seed.

    Raises:
        TypeError: If ``table`` is not a DataFrame.
        ValueError: If it lacks a column.

    Examples:
        >>> import pandas as pd
        >>> rows = [("ACSMobility-NM", math.e**k, s, m, g, metric, v)
        ...         for k in (2, 3, 4) for s in (0, 1) for metric in ("accuracy", "f1")
        ...         for g in ("overall", "white", "black")
        ...         for m, v in (("sq", 0.8), ("mst", 0.7))]
        >>> t = pd.DataFrame(rows, columns=["dataset", "epsilon", "seed", "method",
        ...                                 "group", "metric", "value"])
        >>> check = check_spending_claims(t)[2]
        >>> check.ours, check.outcome
        ('18 of 18 comparisons hold', 'reproduces')
    """
    _check_table(table)
    checks = []
    for claim, (name, _) in zip(paper_numbers.SPENDING_CLAIMS, _RULES, strict=True):
        item = f"{claim.where}, Fig. {', '.join(claim.figures)}: {name}"
        comparisons = claim_comparisons(table, claim)
        missing = _missing(table, claim)
        if missing or not comparisons:
            why = (
                f"the stored runs lack {missing[0]}"
                if missing
                else "needs two seeds or more"
                if _RULES[paper_numbers.SPENDING_CLAIMS.index(claim)][1] is _variance
                else "not in the stored runs"
            )
            checks.append(
                PaperCheck(item, claim.text, None, verdict="not comparable",
                           note=why)
            )  # fmt: skip
            continue
        held = sum(holds for _, holds in comparisons)
        failed = [text for text, holds in comparisons if not holds]
        ours = f"{held} of {len(comparisons)} comparisons hold"
        if failed:
            checks.append(
                PaperCheck(item, claim.text, ours, verdict="differs",
                           note=f"first to fail: {failed[0]}")
            )  # fmt: skip
        else:
            checks.append(
                PaperCheck(item, claim.text, ours, verdict="reproduces", note="")
            )  # fmt: skip
    return checks
