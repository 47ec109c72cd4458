"""The spending paper's findings: its claims, table rows and headline numbers.

rosenblatt2022spending evaluates DPSAGE (its Table 2 and Figure 3) and SuperQUAIL with
its fair variants FSQ-Bal and FSQ-FNR (its Table 1, Figures 2, 4 and 5, and their
description in words). Every number the book's DPSAGE and SuperQUAIL chapters state is
a function here of the tidy tables the experiments store:
:mod:`dpnotes.experiments.spending` (``spending_dpsage``: columns dataset, epsilon,
seed, method, labels, feature, metric, value) and
:mod:`dpnotes.experiments.spending_e2e` (``spending_e2e``: dataset, epsilon, seed,
method, group, metric, value; its ``count`` metric is the number of test records of
the group, the denominator of every rate). The functions read no file and run nothing;
a table without a column they need, or without a seed they are asked for, is a
:class:`ValueError` naming what is missing, and every value over seeds comes with the
seeds it is taken over.

The paper's statements about its Figures 2, 4 and 5
(:data:`dpnotes.paper_numbers.SPENDING_CLAIMS`) are turned into the comparisons they
make, evaluated on a ``spending_e2e`` table (means over seeds), with one
:class:`~dpnotes.findings.verdict.Verdict` per statement: how many of its comparisons
hold (its ``ours_text``), and a verdict.

Reading of the words (the paper defines none of them):

* "A outperforms B": A's mean over seeds is above B's, for every metric, group and
  budget the statement covers.
* "balances X across groups": the gap between the white and black groups' X is smaller
  for the method than for MST, at every budget.
* "FSQ-FNR achieves lower FNR for the black group even compared to the DP classifier
  on real data": below Real-DP's, and below SQ's and MST's at the same budget (SQ and
  MST have no fair threshold; a lower FNR than Real-DP that they share, because every
  synthetic data set predicts the positive class more often, says nothing of FSQ-FNR).
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
import pandas as pd
from scipy import stats

from dpnotes import paper_numbers
from dpnotes.findings.verdict import (
    LEVEL,
    Estimate,
    Verdict,
    compare_value,
    degenerate_reason,
    difference,
    estimate,
    one_class_seeds,
)
from dpnotes.paper_numbers import SpendingClaim
from dpnotes.report import e_to_the as _e
from dpnotes.report import machine_name, mean_sd, seeds_text, verdict_counts_text

__all__ = [
    "DATASET_FOR",
    "DPSAGE_COLUMNS",
    "DPSAGE_DATASETS",
    "E2E_COLUMNS",
    "E2E_DATASETS",
    "LABELLINGS",
    "MATCH_POINTS",
    "METHOD_LABELS",
    "SYNTHETIC_METHODS",
    "TABLE2_METRICS",
    "TABLE2_PAPER_DATASET",
    "TABLE2_TOLERANCE",
    "ClaimComparison",
    "MobilityDegenerate",
    "PaperProfile",
    "StageSeconds",
    "Table2Summary",
    "authors_caption",
    "authors_verdicts",
    "black_fnr_gap",
    "budget_of",
    "budgets",
    "budgets_where_above",
    "ceiling",
    "ceiling_frame",
    "cell_count",
    "cell_seconds",
    "check_spending_claims",
    "claim_comparisons",
    "claims_caption",
    "classifier_accuracy",
    "complete_seeds",
    "dpsage_per_seed",
    "dpsage_texts",
    "e2e_mean",
    "e2e_per_seed",
    "fair_cost",
    "fair_cost_frame",
    "figure3_values",
    "group_positives",
    "group_test_counts",
    "has_whole_seed",
    "mean_by_budget",
    "mobility_degenerate",
    "negative_shares",
    "overspent",
    "paper_profile",
    "paper_run_sentence",
    "quick_texts",
    "sage_values",
    "seed_stats",
    "sq_gap_beside_authors",
    "stage_seconds",
    "stand_in_sentence",
    "table1_caption",
    "table1_verdicts",
    "table2_comparisons",
    "table2_summary",
    "whole_seed_table",
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


@dataclass(frozen=True)
class ClaimComparison:
    """One comparison a statement makes, judged on the means and on the intervals.

    Attributes:
        text: What is compared, as the table's note names it.
        holds: Whether it holds on the means over seeds (the raw reading).
        clear: Whether it holds beyond doubt: the 95% interval of the paired
            difference over seeds (:mod:`dpnotes.findings.verdict`) lies wholly on the
            claimed side.
        against: Whether the interval lies wholly on the other side.
        degenerate: Why the comparison says nothing (a model predicts one class, or
            a spread compared is zero by construction), or "".
    """

    text: str
    holds: bool
    clear: bool
    against: bool
    degenerate: str = ""

    def __post_init__(self) -> None:
        # numpy's booleans print as np.True_; keep plain ones.
        for name in ("holds", "clear", "against"):
            object.__setattr__(self, name, bool(getattr(self, name)))


class _Runs:
    """Per-seed values of a data set's metrics, by budget exponent; test counts."""

    def __init__(self, table: pd.DataFrame, dataset: str) -> None:
        d = table[table["dataset"] == dataset]
        exponents = np.log(d["epsilon"].astype(float).to_numpy())
        d = d.assign(k=np.round(exponents).astype(int))
        keys = ["k", "method", "group", "metric"]
        self.values = d.set_index([*keys, "seed"])["value"].sort_index()
        grouped = d.groupby(keys)["value"]
        self.mean = grouped.mean()
        self.sd = grouped.std(ddof=1)
        self.budgets = sorted(int(k) for k in d["k"].unique())
        self.seed_list = sorted(int(s) for s in d["seed"].unique())
        self.seeds = len(self.seed_list)
        counts = d[d["metric"] == "count"].groupby("group")["value"].min()
        self.counts = {str(g): int(n) for g, n in counts.items() if n >= 1}
        # The positives behind each group's FNR (its negatives are behind its FPR);
        # none where the table cannot give them (no counts, or no run whose FNR and
        # FPR differ): those rates then count the seed spread only.
        self.positives: dict[str, int] = {}
        if self.counts:
            try:
                positives = group_positives(d, dataset=dataset)
            except ValueError:
                positives = pd.Series(dtype=int)
            self.positives = {str(g): int(n) for g, n in positives.items()}

    def has(self, k: int) -> bool:
        return k in self.budgets

    def m(self, k: int, method: str, group: str, metric: str) -> float:
        return float(self.mean.get((k, method, group, metric), math.nan))

    def s(self, k: int, method: str, group: str, metric: str) -> float:
        return float(self.sd.get((k, method, group, metric), math.nan))

    def v(self, k: int, method: str, group: str, metric: str) -> np.ndarray:
        """The values of every seed of the run, in seed order (NaN where absent)."""
        try:
            s = self.values.loc[(k, method, group, metric)]
        except KeyError:
            return np.full(self.seeds, math.nan)
        return s.reindex(self.seed_list).to_numpy(dtype=float)

    def n(self, group: str, metric: str) -> int | None:
        """The test records behind a metric, whose binomial error the interval adds.

        Accuracy: the group's count; FNR: its positives, FPR: its negatives (both
        recovered from the stored rates by :func:`group_positives`). F1 is no
        proportion of a fixed set of records (its denominator depends on the
        predictions): its interval counts the seed spread only, as does a rate whose
        count the table cannot give.
        """
        if metric == "accuracy":
            return self.counts.get(group)
        p = self.positives.get(group)
        if p is None or metric not in ("fnr", "fpr"):
            return None
        return p if metric == "fnr" else max(self.counts[group] - p, 1)

    def one_class(self, k: int, method: str, group: str) -> int:
        """Seeds in which ``method`` predicts a single class for ``group``."""
        fnr, fpr = self.v(k, method, group, "fnr"), self.v(k, method, group, "fpr")
        ok = ~(np.isnan(fnr) | np.isnan(fpr))
        if not ok.any():
            return 0
        return one_class_seeds(fnr[ok], fpr[ok])


#: How the comparisons name methods and metrics (they are shown to readers).
_NAME = {"real": "Real", "real_dp": "Real-DP", "mst": "MST", "sq": "SQ",
         "fsq_bal": "FSQ-Bal", "fsq_fnr": "FSQ-FNR"}  # fmt: skip
_METRIC = {"accuracy": "accuracy", "f1": "F1", "fnr": "FNR", "fpr": "FPR"}


def _what(group: str, metric: str) -> str:
    """E.g. ``"black accuracy"``, ``"overall F1"``."""
    return f"{group} {_METRIC.get(metric, metric)}"


def _budgets(claim: SpendingClaim, runs: _Runs) -> list[int]:
    return [k for k in claim.log_epsilons if runs.has(k)]


def _judged(
    text: str, margin: Estimate | None, degenerate: str = ""
) -> ClaimComparison:
    """A comparison whose claim holds where ``margin`` is positive."""
    if margin is None:
        return ClaimComparison(text, False, False, False, degenerate)
    return ClaimComparison(
        text,
        holds=margin.mean > 0,
        clear=margin.n_seeds > 1 and margin.low > 0,
        against=margin.n_seeds > 1 and margin.high < 0,
        degenerate=degenerate,
    )


def _margin(
    a: np.ndarray, b: np.ndarray, n_a: int | None = None, n_b: int | None = None
) -> Estimate | None:
    """The paired difference ``a - b`` over the seeds both have (None without any)."""
    both = ~(np.isnan(a) | np.isnan(b))
    if not both.any():
        return None
    return difference(a[both], b[both], n_test_a=n_a, n_test_b=n_b)


def _one_class_reason(runs: _Runs, k: int, methods: Sequence[str], group: str) -> str:
    for method in methods:
        if method in ("real", "real_dp"):
            continue
        n = runs.one_class(k, method, group)
        if n:
            return f"{_NAME[method]}, {group}: " + degenerate_reason(
                runs.v(k, method, group, "fnr")[: runs.seeds], one_class=n
            )
    return ""


def _better(
    runs: _Runs, a: str, b: str, ks: Sequence[int], groups, metrics
) -> list[ClaimComparison]:
    out = []
    for k in ks:
        for metric in metrics:
            for group in groups:
                n = runs.n(group, metric)
                margin = _margin(
                    runs.v(k, a, group, metric), runs.v(k, b, group, metric), n, n
                )
                out.append(
                    _judged(
                        f"{_NAME[a]} above {_NAME[b]}: {_what(group, metric)} "
                        f"at {_e(k)}",
                        margin,
                        _one_class_reason(runs, k, (a, b), group),
                    )
                )
    return out


def _gaps(runs: _Runs, k: int, method: str, metric: str) -> np.ndarray:
    return np.abs(
        runs.v(k, method, "white", metric) - runs.v(k, method, "black", metric)
    )


def _balances(runs: _Runs, method: str, ks, metrics) -> list[ClaimComparison]:
    # Gaps of a seed's two groups are compared with MST's of the same seed; the
    # groups' test errors are not added (a difference of absolute gaps).
    return [
        _judged(
            f"{_NAME[method]}'s white–black {_METRIC[metric]} gap below MST's "
            f"at {_e(k)}",
            _margin(_gaps(runs, k, "mst", metric), _gaps(runs, k, method, metric)),
            _one_class_reason(runs, k, (method, "mst"), "black"),
        )
        for k in ks
        for metric in metrics
    ]


def _spread_above(text: str, a: np.ndarray, b: np.ndarray) -> ClaimComparison:
    """Is ``a``'s sd above ``b``'s (MST's)? An F test over the seeds both have."""
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    if len(a) < 2 or len(b) < 2:
        return ClaimComparison(text, False, False, False)
    va, vb = np.var(a, ddof=1), np.var(b, ddof=1)
    frozen = degenerate_reason(b)
    if frozen:
        return ClaimComparison(text, va > vb, False, False, "MST: " + frozen)
    ratio = va / vb
    hi = stats.f.ppf(0.5 + LEVEL / 2, len(a) - 1, len(b) - 1)
    lo = stats.f.ppf(0.5 - LEVEL / 2, len(a) - 1, len(b) - 1)
    return ClaimComparison(text, va > vb, ratio > hi, ratio < lo)


def _variance(claim: SpendingClaim, runs: _Runs) -> list[ClaimComparison]:
    """SD above MST's, by the F test of two variances over the same seeds.

    A model whose values are identical in every seed has a spread of zero by
    construction (its predictions do not move), so a comparison with it is degenerate.
    """
    return [
        _spread_above(
            f"{_NAME[m]}'s sd above MST's: {_what(group, metric)} at {_e(k)}",
            runs.v(k, m, group, metric),
            runs.v(k, "mst", group, metric),
        )
        for k in _budgets(claim, runs)
        for m in claim.methods
        if m != "mst"
        for metric in claim.metrics
        for group in claim.groups
    ]


def _sq_over_mst(claim: SpendingClaim, runs: _Runs) -> list[ClaimComparison]:
    return _better(
        runs, "sq", "mst", _budgets(claim, runs), claim.groups, claim.metrics
    )


def _fsq_bal_balances_accuracy(
    claim: SpendingClaim, runs: _Runs
) -> list[ClaimComparison]:
    ks = _budgets(claim, runs)
    return _balances(runs, "fsq_bal", ks, ("accuracy",)) + _better(
        runs, "fsq_bal", "mst", ks, ("overall",), claim.metrics
    )


def _fsq_bal_balances_rates(claim: SpendingClaim, runs: _Runs) -> list[ClaimComparison]:
    return _balances(runs, "fsq_bal", _budgets(claim, runs), claim.metrics)


def _fsq_fnr_below_real_dp(claim: SpendingClaim, runs: _Runs) -> list[ClaimComparison]:
    # "the DP classifier on real data": Real-DP. Lower FNR is the claim: the other's
    # minus FSQ-FNR's is positive where it holds. The claim credits FSQ-FNR ("affirming
    # the effectiveness of our methods"), so it is also checked against SQ and MST,
    # which have no fair threshold: a lower FNR than Real-DP that they share says
    # nothing of FSQ-FNR.
    n = runs.n("black", "fnr")
    return [
        _judged(
            f"FSQ-FNR's black FNR below {_NAME[other]}'s at {_e(k)}",
            _margin(
                runs.v(k, other, "black", "fnr"),
                runs.v(k, "fsq_fnr", "black", "fnr"),
                n,
                n,
            ),
            _one_class_reason(runs, k, ("fsq_fnr", other), "black"),
        )
        for k in _budgets(claim, runs)
        for other in ("real_dp", "sq", "mst")
    ]


def _within(text: str, diff: Estimate | None) -> ClaimComparison:
    """``|diff| <= MATCH_POINTS``: beyond doubt when the whole interval is inside."""
    if diff is None:
        return ClaimComparison(text, False, False, False)
    tol = MATCH_POINTS
    several = diff.n_seeds > 1
    return ClaimComparison(
        text,
        holds=abs(diff.mean) <= tol,
        clear=several and -tol <= diff.low and diff.high <= tol,
        against=several and (diff.low > tol or diff.high < -tol),
    )


def _sq_matches_real(claim: SpendingClaim, runs: _Runs) -> list[ClaimComparison]:
    ks = _budgets(claim, runs)
    out = []
    for k in ks:
        for metric in claim.metrics:
            n = runs.n("overall", metric)
            diff = _margin(
                runs.v(k, "sq", "overall", metric),
                runs.v(k, "real", "overall", metric),
                n,
                n,
            )
            out.append(
                _within(
                    f"SQ within {MATCH_POINTS:g} of Real: overall "
                    f"{_METRIC[metric]} at {_e(k)}",
                    diff,
                )
            )
    for metric in claim.metrics:
        text = f"MST flat within {MATCH_POINTS:g}: overall {_METRIC[metric]}"
        if len(ks) < 2:
            out.append(ClaimComparison(text, False, False, False))
            continue
        # From the smallest budget named to the largest, seed by seed.
        first = runs.v(ks[0], "mst", "overall", metric)
        last = runs.v(ks[-1], "mst", "overall", metric)
        means = [runs.m(k, "mst", "overall", metric) for k in ks]
        flat = _within(text, _margin(last, first))
        out.append(
            ClaimComparison(
                text,
                holds=max(means) - min(means) < MATCH_POINTS,
                clear=flat.clear,
                against=flat.against,
            )
        )
    return out


def _sq_only_from(claim: SpendingClaim, runs: _Runs) -> list[ClaimComparison]:
    first = min(claim.log_epsilons)
    out = _sq_over_mst(claim, runs)
    for k in runs.budgets:
        if k >= first:
            continue
        for metric in claim.metrics:
            n = runs.n("overall", metric)
            margin = _margin(
                runs.v(k, "mst", "overall", metric),
                runs.v(k, "sq", "overall", metric),
                n,
                n,
            )
            if margin is None:
                continue
            # "not above": holds where MST's mean is at least SQ's.
            out.append(
                ClaimComparison(
                    f"SQ not above MST: {_what('overall', metric)} at {_e(k)}",
                    holds=margin.mean >= 0,
                    clear=margin.n_seeds > 1 and margin.low > 0,
                    against=margin.n_seeds > 1 and margin.high < 0,
                )
            )
    return out


def _mst_over_sq(claim: SpendingClaim, runs: _Runs) -> list[ClaimComparison]:
    return _better(
        runs, "mst", "sq", _budgets(claim, runs), claim.groups, claim.metrics
    )


#: How each statement of :data:`~dpnotes.paper_numbers.SPENDING_CLAIMS` is checked, in
#: its order, with a short name for the table.
_RULES: tuple[
    tuple[str, Callable[[SpendingClaim, _Runs], list[ClaimComparison]]], ...
] = (
    ("SQ and FSQ vary more than MST at e⁰", _variance),
    ("SQ outperforms MST from e¹, overall and per group", _sq_over_mst),
    ("ACSMobility: the same trend", _sq_over_mst),
    ("ACSPublicCoverage: SQ needs e³, e⁴", _sq_over_mst),
    ("FSQ-Bal balances accuracy, outperforms MST", _fsq_bal_balances_accuracy),
    ("FSQ-Bal balances FNR and FPR", _fsq_bal_balances_rates),
    (
        "FSQ-FNR: black FNR below Real-DP's, and below SQ's and MST's",
        _fsq_fnr_below_real_dp,
    ),
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
        methods |= {"real_dp", "sq"}
    groups = set(claim.groups) | (
        {"white", "black"} if "fsq_bal" in claim.methods else set()
    )
    found = [
        f"{_NAME.get(m, m)}, {_what(g, metric)} at {_e(k)}"
        for k in _budgets(claim, runs)
        for m in sorted(methods)
        for g in sorted(groups)
        for metric in claim.metrics
        if math.isnan(runs.m(k, m, g, metric))
    ]
    if found:
        return found
    # A value over fewer seeds than the run has would be a mean over fewer seeds than
    # the table says.
    return [
        f"seeds of {_NAME.get(m, m)}, {_what(g, metric)} at {_e(k)}"
        for k in _budgets(claim, runs)
        for m in sorted(methods)
        for g in sorted(groups)
        for metric in claim.metrics
        if np.isnan(runs.v(k, m, g, metric)).any()
    ]


def claim_comparisons(
    table: pd.DataFrame, claim: SpendingClaim
) -> list[ClaimComparison]:
    """Return the comparisons one statement makes, judged on means and intervals.

    Args:
        table: A :mod:`~dpnotes.experiments.spending_e2e` result table.
        claim: One of :data:`~dpnotes.paper_numbers.SPENDING_CLAIMS`.

    Returns:
        One :class:`ClaimComparison` per comparison; empty where the table has none of
        the statement's data set or budgets.

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
    return rule(claim, runs)


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


def _claim_verdict(comparisons: Sequence[ClaimComparison]) -> tuple[str, str, str]:
    """The statement's verdict, our side as text and why."""
    n = len(comparisons)
    held = sum(c.holds for c in comparisons)
    clear = sum(c.clear for c in comparisons)
    ours = f"{held} of {n} hold, {clear} beyond doubt"
    degenerate = [c for c in comparisons if c.degenerate]
    against = [c for c in comparisons if c.against]
    if degenerate:
        first = degenerate[0]
        return (
            "degenerate",
            ours,
            (
                f"{first.text}: {first.degenerate}"
                + (f" (and {len(degenerate) - 1} more)" if len(degenerate) > 1 else "")
            ),
        )
    if against:
        return (
            "differs",
            ours,
            (
                f"fails beyond doubt: {against[0].text}"
                + (f" (and {len(against) - 1} more)" if len(against) > 1 else "")
            ),
        )
    if clear == n:
        return "reproduces", ours, ""
    undecided = [c for c in comparisons if not c.clear]
    failing = [c for c in undecided if not c.holds]
    first = (failing or undecided)[0]
    return (
        "inconclusive",
        ours,
        (
            f"{len(undecided)} of {n} within our uncertainty, e.g. {first.text}"
            + (" (fails on the means)" if failing else "")
        ),
    )


def check_spending_claims(table: pd.DataFrame) -> list[Verdict]:
    """Check every statement of the paper about Figures 2, 4 and 5 on a result table.

    Each comparison is a paired difference over seeds with a 95% interval (the seed
    spread by Student's t, plus the binomial test error of accuracy from the group's
    ``count``, and of FNR and FPR from its positives and negatives,
    :func:`group_positives`; for two models scored on the same records the two errors
    are added, an upper bound); a comparison of spreads is an F test over the seeds.

    Args:
        table: A :mod:`~dpnotes.experiments.spending_e2e` result table.

    Returns:
        One :class:`~dpnotes.findings.verdict.Verdict` per statement, in the paper's
        order: its ``claim`` the paper's words, its ``ours_text`` how many comparisons
        hold on the means and how many beyond doubt, its ``extra`` column ``seeds``
        the seeds of the data set. The verdict is *differs* when a comparison of
        models that are not degenerate fails beyond doubt; else *degenerate* when a
        comparison rests on a model that predicts one class or whose compared spread
        is zero by construction; *reproduces* when every comparison holds beyond
        doubt; *inconclusive* when our intervals cannot decide some; *not comparable*
        where the table lacks the data set, a budget, a seed or (for a statement
        about variance) a second seed.

    Raises:
        TypeError: If ``table`` is not a DataFrame.
        ValueError: If it lacks a column.

    Examples:
        >>> import pandas as pd
        >>> rows = [("ACSMobility-NM", math.e**k, s, m, g, metric, v + 0.001 * s)
        ...         for k in (2, 3, 4) for s in (0, 1, 2)
        ...         for metric in ("accuracy", "f1")
        ...         for g in ("overall", "white", "black")
        ...         for m, v in (("sq", 0.8), ("mst", 0.7))]
        >>> t = pd.DataFrame(rows, columns=["dataset", "epsilon", "seed", "method",
        ...                                 "group", "metric", "value"])
        >>> check = check_spending_claims(t)[2]
        >>> check.ours_text, check.outcome
        ('18 of 18 hold, 18 beyond doubt', 'reproduces')
    """
    _check_table(table)
    checks = []
    for claim, (name, rule) in zip(paper_numbers.SPENDING_CLAIMS, _RULES, strict=True):
        item = f"{claim.where}, Fig. {', '.join(claim.figures)}: {name}"
        comparisons = claim_comparisons(table, claim)
        missing = _missing(table, claim)
        seeds = table.loc[table["dataset"] == DATASET_FOR[claim.dataset], "seed"]
        if missing or not comparisons:
            why = (
                f"the stored runs lack {missing[0]}"
                if missing
                else "needs two seeds or more"
                if rule is _variance
                else "not in the stored runs"
            )
            outcome, ours = "not comparable", ""
        else:
            outcome, ours, why = _claim_verdict(comparisons)
        checks.append(
            Verdict(
                item,
                None,
                None,
                outcome,
                why or "every comparison holds beyond doubt",
                claim=claim.text,
                ours_text=ours,
                extra={"seeds": str(seeds.nunique())},
            )
        )
    return checks


def claims_caption(claims: Sequence[Verdict]) -> str:
    """The claims table's caption: what it checks, how the verdicts fall, stand-ins.

    Raises:
        ValueError: If there are no claims, or a verdict is unknown.
    """
    if not claims:
        raise ValueError("no claims: pass check_spending_claims(table).")
    return (
        "The paper's statements about its Figures 2, 4 and 5 (Section 5, Appendix A, "
        "Section 6) against the stored paper-profile runs; "
        + verdict_counts_text(claims, noun="statement")
        + ". "
        + stand_in_sentence()
    )


# --- Selecting values from the stored tables ------------------------------------------

#: The columns of a ``spending_e2e`` table (:mod:`dpnotes.experiments.spending_e2e`).
E2E_COLUMNS: tuple[str, ...] = _COLUMNS

#: The columns of a ``spending_dpsage`` table (:mod:`dpnotes.experiments.spending`).
DPSAGE_COLUMNS: tuple[str, ...] = (
    "dataset", "epsilon", "seed", "method", "labels", "feature", "metric", "value",
)  # fmt: skip

#: How tables and figures name the methods of ``spending_e2e``.
METHOD_LABELS: dict[str, str] = {
    "real": "Real (not private)", "real_dp": "Real-DP", "mst": "MST", "sq": "SQ",
    "fsq_bal": "FSQ-Bal", "fsq_fnr": "FSQ-FNR",
}  # fmt: skip

#: The methods that train on synthetic data.
SYNTHETIC_METHODS: tuple[str, ...] = ("mst", "sq", "fsq_bal", "fsq_fnr")


def _require(table: object, columns: Sequence[str], what: str) -> pd.DataFrame:
    """Check that ``table`` is a DataFrame with ``columns``; name the missing ones."""
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a DataFrame, got {type(table).__name__}.")
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValueError(f"table lacks columns {missing}: pass a {what} result table.")
    return table


def _seed_list(table: pd.DataFrame, seeds: Sequence[int] | None) -> list[int]:
    # np.unique first: a stored table has hundreds of thousands of rows.
    values = np.unique(table["seed"].to_numpy()) if seeds is None else seeds
    want = sorted({int(s) for s in values})
    if not want:
        raise ValueError("no seeds: the table is empty, or seeds is.")
    return want


def _by_seed(rows: pd.DataFrame, want: Sequence[int], what: str) -> pd.Series:
    """One value per seed of ``want`` from ``rows``, or a ValueError naming the gap."""
    if rows.empty:
        raise ValueError(f"the table has no rows for {what}.")
    if rows["seed"].duplicated().any():
        raise ValueError(
            f"the table has several rows per seed for {what}: select one data set, "
            "budget, method, group (or labels and feature) and metric."
        )
    missing = sorted(set(want) - {int(s) for s in rows["seed"]})
    if missing:
        raise ValueError(
            f"the table lacks seeds {missing} for {what} (a partial result?): keep "
            "the complete seeds (complete_seeds) or pass seeds."
        )
    out = rows[rows["seed"].isin(want)].set_index("seed")["value"].sort_index()
    return out


def complete_seeds(
    table: pd.DataFrame,
    *,
    datasets: Sequence[str],
    epsilons: Sequence[float],
) -> list[int]:
    """Return the seeds whose every data set and budget the table holds.

    A partial run stores the cells it finished, so its last seed may lack some; the
    chapters show the complete seeds only.

    Args:
        table: A ``spending_e2e`` or ``spending_dpsage`` result table (columns
            dataset, epsilon and seed at least).
        datasets: The data sets of the run's grid (its config's ``datasets``).
        epsilons: Its budgets (its config's ``epsilons``); matched to the table's with
            a relative tolerance of 1e-6, as tables store them rounded.

    Returns:
        The complete seeds, in increasing order (empty when there is none).

    Raises:
        TypeError: If ``table`` is not a DataFrame.
        ValueError: If it lacks a column, or no data set or budget is given.

    Examples:
        >>> t = pd.DataFrame({"dataset": ["a", "a", "a"], "epsilon": [1.0, 2.0, 1.0],
        ...                   "seed": [0, 0, 1]})
        >>> complete_seeds(t, datasets=["a"], epsilons=[1, 2])
        [0]
    """
    _require(table, ("dataset", "epsilon", "seed"), "result")
    grid = np.asarray(list(epsilons), dtype=float)
    if not len(datasets) or not grid.size:
        raise ValueError("give the grid's datasets and epsilons (its config's).")
    cells = table[["dataset", "epsilon", "seed"]].drop_duplicates()
    out = []
    for seed, g in cells.groupby("seed"):
        have = {
            (d, j)
            for d, e in zip(g["dataset"], g["epsilon"].astype(float), strict=True)
            for j in np.flatnonzero(np.isclose(grid, e, rtol=1e-6, atol=0.0))
        }
        if all((d, j) in have for d in datasets for j in range(grid.size)):
            out.append(int(seed))
    return out


def budgets(table: pd.DataFrame, *, dataset: str) -> list[float]:
    """Return the budgets the table holds for one data set, in increasing order.

    Raises:
        TypeError: If ``table`` is not a DataFrame.
        ValueError: If it lacks a column, or has no row of ``dataset``.
    """
    _require(table, ("dataset", "epsilon"), "result")
    found = table.loc[table["dataset"] == dataset, "epsilon"]
    if found.empty:
        raise ValueError(f"the table has no rows of data set {dataset!r}.")
    return sorted(float(e) for e in set(found))


def budget_of(table: pd.DataFrame, *, dataset: str, power: int) -> float:
    """Return the stored budget of one data set that is e^power (as the table has it).

    Raises:
        TypeError: If ``table`` is not a DataFrame.
        ValueError: If it lacks a column, or holds no such budget for ``dataset``.

    Examples:
        >>> t = pd.DataFrame({"dataset": ["a", "a"], "epsilon": [1.0, 20.08553692]})
        >>> budget_of(t, dataset="a", power=3)
        20.08553692
    """
    found = [e for e in budgets(table, dataset=dataset) if np.isclose(e, np.e**power)]
    if not found:
        raise ValueError(
            f"the table holds no budget e^{power} for {dataset!r}: run that budget."
        )
    return found[0]


def e2e_per_seed(
    table: pd.DataFrame,
    *,
    dataset: str,
    epsilon: float,
    method: str,
    group: str,
    metric: str,
    seeds: Sequence[int] | None = None,
) -> pd.Series:
    """Return one ``spending_e2e`` metric per seed.

    Args:
        table: A ``spending_e2e`` result table.
        dataset: The data set.
        epsilon: The budget (matched with ``np.isclose``).
        method: One of the table's methods (``"real"``, ``"mst"``, ``"sq"`` ...).
        group: ``"overall"`` or a group (``"white"``, ``"black"``, ``"other"``).
        metric: ``"accuracy"``, ``"f1"``, ``"fnr"``, ``"fpr"``, ``"count"`` ...
        seeds: The seeds wanted; by default every seed of the table.

    Returns:
        The values indexed by seed, in increasing order. A rate whose group has no
        record of its denominator is NaN.

    Raises:
        TypeError: If ``table`` is not a DataFrame.
        ValueError: If it lacks a column, has no such row, several rows per seed, or
            lacks one of the seeds.
    """
    _require(table, E2E_COLUMNS, "spending_e2e")
    # The metric first, then the rest on its rows: the chapters call this hundreds of
    # times on tables of tens of thousands of rows, and each string comparison of a
    # whole column costs more than all the others on one metric's rows.
    rows = table[table["metric"] == metric]
    rows = rows[
        (rows["dataset"] == dataset)
        & np.isclose(rows["epsilon"].astype(float), epsilon)
        & (rows["method"] == method)
        & (rows["group"] == group)
    ]
    what = f"{dataset}, ε = {epsilon:g}, {method}, {group} {metric}"
    return _by_seed(rows, _seed_list(table, seeds), what)


def e2e_mean(
    table: pd.DataFrame,
    *,
    dataset: str,
    epsilon: float,
    method: str,
    group: str,
    metric: str,
    seeds: Sequence[int] | None = None,
) -> float:
    """Return the mean over seeds of one ``spending_e2e`` metric.

    See :func:`e2e_per_seed` for the arguments and errors.

    NaN values (a rate without denominator) are left out of the mean.
    """
    return float(
        e2e_per_seed(table, dataset=dataset, epsilon=epsilon, method=method,
                     group=group, metric=metric, seeds=seeds).mean()
    )  # fmt: skip


def seed_stats(
    table: pd.DataFrame,
    *,
    dataset: str,
    groups: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Return each metric's mean, sd and seeds over the table's seeds, per budget.

    Args:
        table: A ``spending_e2e`` result table.
        dataset: The data set.
        groups: Keep these groups only (default: all).
        metrics: Keep these metrics only (default: all).

    Returns:
        A frame indexed by ``(method, group, metric, epsilon)`` with columns ``mean``,
        ``sd`` (sample, NaN for one seed) and ``n_seeds`` (the values the mean takes,
        NaN values left out).

    Raises:
        TypeError: If ``table`` is not a DataFrame.
        ValueError: If it lacks a column, has no such rows, or a metric lacks one of
            the table's seeds (a partial result: keep :func:`complete_seeds`).
    """
    _require(table, E2E_COLUMNS, "spending_e2e")
    want = _seed_list(table, None)
    d = table[table["dataset"] == dataset]
    if groups is not None:
        d = d[d["group"].isin(groups)]
    if metrics is not None:
        d = d[d["metric"].isin(metrics)]
    if d.empty:
        raise ValueError(f"the table has no rows of {dataset!r} for these metrics.")
    keys = ["method", "group", "metric", "epsilon"]
    seeds_per_cell = d.groupby(keys)["seed"].nunique()
    short = seeds_per_cell[seeds_per_cell < len(want)]
    if not short.empty:
        raise ValueError(
            f"{dataset}: {dict(short.head(3))} hold fewer than the table's "
            f"{len(want)} seeds (a partial result?): keep the complete seeds."
        )
    out = d.groupby(keys)["value"].agg(["mean", "std", "count"])
    return out.rename(columns={"std": "sd", "count": "n_seeds"})


def group_test_counts(table: pd.DataFrame, *, dataset: str) -> pd.Series:
    """Return the number of test records of each group (the ``count`` metric).

    Every classifier of a data set is scored on the same real test split, so the
    count is the same for every method, budget and seed; it is the denominator of the
    group's accuracy (and the sum of the denominators of its FNR and FPR).

    Returns:
        The counts, indexed by group (``"overall"`` is the whole test split).

    Raises:
        TypeError: If ``table`` is not a DataFrame.
        ValueError: If it lacks a column, holds no count for ``dataset``, or its counts
            differ between runs.
    """
    _require(table, E2E_COLUMNS, "spending_e2e")
    c = table[(table["dataset"] == dataset) & (table["metric"] == "count")]
    if c.empty:
        raise ValueError(f"the table has no 'count' metric for {dataset!r}.")
    spread = c.groupby("group")["value"].agg(["min", "max"])
    varies = spread.index[spread["min"] != spread["max"]].tolist()
    if varies:
        raise ValueError(f"{dataset}: the test counts of {varies} differ between runs.")
    return spread["min"].astype(int).rename("count")


def group_positives(table: pd.DataFrame, *, dataset: str) -> pd.Series:
    """Return the number of positive test records of each group, from the stored rates.

    An FNR is a proportion of the group's positives, not of all its test records, so
    its binomial error needs that count, which the table does not store. It follows
    from what it does store: with ``n`` records, ``P`` positives and ``n − P``
    negatives, the errors are ``n (1 − accuracy) = FNR · P + FPR · (n − P)``, so
    ``P = n (1 − accuracy − FPR) / (FNR − FPR)``. Every run of a seed is scored on the
    same split; the value is the median over the runs whose FNR and FPR differ by at
    least 0.05 (where the ratio is well conditioned), rounded.

    Returns:
        The counts, indexed by group (``"overall"`` included).

    Raises:
        ValueError: As :func:`group_test_counts`, or if no run of a group has FNR and
            FPR apart.

    Examples:
        >>> rows = [("d", 1.0, 0, "m", "g", k, v) for k, v in (("count", 100),
        ...         ("accuracy", 0.8), ("fnr", 0.25), ("fpr", 0.1))]
        >>> t = pd.DataFrame(rows, columns=list(E2E_COLUMNS))
        >>> int(group_positives(t, dataset="d")["g"])  # 0.25 P + 0.1 (100 - P) = 20
        67
    """
    counts = group_test_counts(table, dataset=dataset)
    d = table[table["dataset"] == dataset]
    keys = [c for c in E2E_COLUMNS if c not in ("metric", "value")]
    wide = d[d["metric"].isin(("accuracy", "fnr", "fpr"))].pivot_table(
        index=keys, columns="metric", values="value", aggfunc="first"
    )
    wide = wide.dropna().reset_index()
    wide = wide[wide["group"].isin(counts.index)]
    apart = (wide["fnr"] - wide["fpr"]).abs() >= 0.05
    wide = wide[apart]
    n = wide["group"].map(counts).astype(float)
    wide["positives"] = (
        n * (1 - wide["accuracy"] - wide["fpr"]) / (wide["fnr"] - wide["fpr"])
    )
    out = wide.groupby("group")["positives"].median().round()
    missing = [g for g in counts.index if g not in out.index]
    if missing:
        raise ValueError(
            f"{dataset}: no run of {missing} has FNR and FPR apart, so its positives "
            "cannot be recovered."
        )
    return (
        out.clip(lower=1, upper=counts.reindex(out.index))
        .astype(int)
        .rename("positives")
    )


# --- SuperQUAIL: Table 1, the quick run, the paper profile -------------------------


def table1_verdicts(
    table: pd.DataFrame, *, dataset: str, epsilon: float, note: str
) -> list[Verdict]:
    """Return the paper's Table 1 beside ours: accuracy and FNR per method and group.

    Ours is a proportion over every seed of the table, with the 95% interval of
    :func:`~dpnotes.findings.verdict.estimate`: the seed spread and the binomial error
    of the group's test count (the ``count`` metric). For FNR that count is the whole
    group, not its positives (the table does not store them), so the FNR's interval
    leaves out part of its test error.

    Args:
        table: A ``spending_e2e`` result table.
        dataset: Our data set in place of the paper's California.
        epsilon: The budget (the paper's is e^3).
        note: Why the rows are not comparable (every row's verdict).

    Returns:
        One :class:`~dpnotes.findings.verdict.Verdict` per method, group and metric
        of :data:`~dpnotes.paper_numbers.SPENDING_TABLE1` (the paper's percent as a
        proportion), each *not comparable* for ``note``; its reason says whether the
        paper's value lies inside our interval all the same.

    Raises:
        ValueError: As :func:`e2e_per_seed` and :func:`group_test_counts`, or if a
            group of the paper's table has no test count.
    """
    if not isinstance(note, str) or not note.strip():
        raise ValueError("note must say why the rows are not comparable.")
    counts = group_test_counts(table, dataset=dataset)
    positives = group_positives(table, dataset=dataset)
    rows = []
    for method, groups in paper_numbers.SPENDING_TABLE1.items():
        for group, (acc, fnr) in groups.items():
            if group not in counts.index:
                raise ValueError(f"{dataset}: no test count of the {group} group.")
            for name, paper, metric in (
                ("accuracy", acc, "accuracy"),
                ("FNR", fnr, "fnr"),
            ):
                values = e2e_per_seed(
                    table,
                    dataset=dataset,
                    epsilon=epsilon,
                    method=method,
                    group=group,
                    metric=metric,
                )
                # An FNR is a proportion of the group's positives.
                n = positives if metric == "fnr" else counts
                ours = estimate(
                    values.to_numpy(dtype=float),
                    n_test=int(n[group]),
                    proportion=True,
                )
                v = compare_value(
                    f"{METHOD_LABELS[method]}, {group}, {name}", paper / 100, ours
                )
                where = "inside" if v.outcome == "reproduces" else "outside"
                rows.append(
                    replace(
                        v,
                        outcome="not comparable",
                        reason=f"{note}; the paper's value {where} our interval",
                    )
                )
    return rows


def fair_cost(table: pd.DataFrame, *, dataset: str, epsilon: float) -> pd.DataFrame:
    """Return what FSQ-Bal and FSQ-FNR change from SQ, per group: mean differences.

    Returns:
        One row per variant and group (white, black, other) with columns variant,
        group, and the differences from SQ's mean of accuracy, FNR and FPR (over every
        seed of the table).

    Raises:
        ValueError: As :func:`e2e_per_seed`.
    """

    def mean(method: str, group: str, metric: str) -> float:
        return e2e_mean(
            table,
            dataset=dataset,
            epsilon=epsilon,
            method=method,
            group=group,
            metric=metric,
        )

    return pd.DataFrame(
        [
            {
                "variant": variant,
                "group": group,
                **{
                    metric: mean(variant, group, metric) - mean("sq", group, metric)
                    for metric in ("accuracy", "fnr", "fpr")
                },
            }
            for variant in ("fsq_bal", "fsq_fnr")
            for group in ("white", "black", "other")
        ]
    )


def authors_verdicts(
    table: pd.DataFrame, *, dataset: str, epsilon: float
) -> list[Verdict]:
    """Return the authors' stored metrics at e^2 beside ours, one row per number.

    Args:
        table: A ``spending_e2e`` result table.
        dataset: Ours in place of their California.
        epsilon: Our budget e^2.

    Returns:
        One *not comparable* :class:`~dpnotes.findings.verdict.Verdict` per method of
        :data:`~dpnotes.paper_numbers.SPENDING_AUTHORS_E2` and overall accuracy, F1,
        FPR and FNR: the authors' number in ``authors``, ours over every seed of the
        table (accuracy with the binomial error of the test split's count; the other
        metrics, ratios over parts of it, with the seed spread only).

    Raises:
        ValueError: As :func:`e2e_per_seed` and :func:`group_test_counts`.
    """
    n = int(group_test_counts(table, dataset=dataset)["overall"])
    rows = []
    for method, theirs in paper_numbers.SPENDING_AUTHORS_E2.items():
        for label, metric, value in zip(
            ("accuracy", "F1", "FPR", "FNR"),
            ("accuracy", "f1", "fpr", "fnr"),
            theirs,
            strict=True,
        ):
            values = e2e_per_seed(
                table,
                dataset=dataset,
                epsilon=epsilon,
                method=method,
                group="overall",
                metric=metric,
            )
            is_acc = metric == "accuracy"
            ours = estimate(
                values.to_numpy(dtype=float),
                n_test=n if is_acc else None,
                proportion=is_acc,
            )
            rows.append(
                Verdict(
                    f"{METHOD_LABELS[method]}, overall {label}",
                    None,
                    ours,
                    "not comparable",
                    "another state and another evaluation",
                    authors=f"{value:.3f}",
                )
            )
    return rows


def _pick(stats: pd.Series, method: str, group: str, metric: str, eps: float) -> float:
    """One entry of a :func:`seed_stats` column, matching the budget with isclose."""
    try:
        part = stats.loc[(method, group, metric)]
    except KeyError:
        raise ValueError(f"no {group} {metric} of {method!r} in the table.") from None
    hit = part[np.isclose(part.index.astype(float), eps)]
    if hit.empty:
        raise ValueError(f"no {group} {metric} of {method!r} at ε = {eps:g}.")
    return float(hit.iloc[0])


def sq_gap_beside_authors(
    table: pd.DataFrame, *, dataset: str, epsilon: float
) -> tuple[float, float]:
    """Return SQ's overall accuracy minus MST's: the authors' at e^2, and ours.

    Raises:
        ValueError: As :func:`seed_stats`.
    """
    theirs = paper_numbers.SPENDING_AUTHORS_E2
    ours = seed_stats(table, dataset=dataset, groups=("overall",))["mean"]
    gap = _pick(ours, "sq", "overall", "accuracy", epsilon) - _pick(
        ours, "mst", "overall", "accuracy", epsilon
    )
    return theirs["sq"][0] - theirs["mst"][0], gap


def mean_by_budget(
    table: pd.DataFrame, *, dataset: str, method: str, group: str, metric: str
) -> pd.Series:
    """Return one metric's mean over the table's seeds at each budget.

    Raises:
        ValueError: As :func:`seed_stats` (a budget lacking a seed among them).
    """
    stats = seed_stats(table, dataset=dataset, groups=(group,), metrics=(metric,))
    if (method, group, metric) not in stats.index.droplevel("epsilon"):
        raise ValueError(f"no {group} {metric} of {method!r} on {dataset!r}.")
    d = table[(table["dataset"] == dataset) & (table["method"] == method)
              & (table["group"] == group) & (table["metric"] == metric)]  # fmt: skip
    return d.groupby("epsilon")["value"].mean()


@dataclass(frozen=True, eq=False)
class MobilityDegenerate:
    """How often ACSMobility's models predict the positive class for everyone.

    Attributes:
        all_positive: Synthetic-data runs (method, budget, seed) with overall FNR 0 and
            FPR 1.
        synthetic_runs: All synthetic-data runs.
        share: The mean accuracy of those all-positive runs (the positive class's share
            of the test split).
        real_fpr: The non-private real-data model's mean overall FPR.
        seeds: The seeds counted.
    """

    all_positive: int
    synthetic_runs: int
    share: float
    real_fpr: float
    seeds: tuple[int, ...]


def mobility_degenerate(
    table: pd.DataFrame, *, dataset: str = "ACSMobility-NM"
) -> MobilityDegenerate:
    """Count the runs whose model predicts the positive class for every test record.

    Raises:
        TypeError: If ``table`` is not a DataFrame.
        ValueError: If it lacks a column or the data set's FNR and FPR.
    """
    _require(table, E2E_COLUMNS, "spending_e2e")
    overall = table[(table["dataset"] == dataset) & (table["group"] == "overall")]
    fnr = overall[overall["metric"] == "fnr"]
    fpr = overall[overall["metric"] == "fpr"]
    if fnr.empty or fpr.empty:
        raise ValueError(f"the table lacks the overall FNR or FPR of {dataset!r}.")
    keys = ["method", "epsilon", "seed"]
    both = fnr.merge(fpr, on=keys, suffixes=("_fnr", "_fpr"))
    everyone = (both["value_fnr"] == 0) & (both["value_fpr"] == 1)
    on_synthetic = both["method"].isin(SYNTHETIC_METHODS)
    accuracy = overall[overall["metric"] == "accuracy"]
    share = accuracy.merge(both[everyone][keys], on=keys)["value"]
    real = both[both["method"] == "real"]
    if real.empty:
        raise ValueError(f"the table lacks the real-data model of {dataset!r}.")
    return MobilityDegenerate(
        all_positive=int(everyone[on_synthetic].sum()),
        synthetic_runs=int(on_synthetic.sum()),
        share=float(share.mean()),
        real_fpr=float(real["value_fpr"].mean()),
        seeds=tuple(sorted({int(s) for s in both["seed"]})),
    )


def budgets_where_above(
    table: pd.DataFrame,
    *,
    dataset: str,
    method: str,
    other: str,
    metric: str = "accuracy",
    group: str = "overall",
) -> list[float]:
    """Return the budgets at which ``method``'s mean is above ``other``'s.

    Raises:
        ValueError: As :func:`mean_by_budget`.
    """
    a = mean_by_budget(
        table, dataset=dataset, method=method, group=group, metric=metric
    )
    b = mean_by_budget(table, dataset=dataset, method=other, group=group, metric=metric)
    above = a > b
    return [float(e) for e in above.index[above]]


def cell_seconds(table: pd.DataFrame) -> pd.Series:
    """Return each cell's seconds of fitting, sampling and scoring, summed.

    A cell is one data set, budget and seed.

    Raises:
        TypeError: If ``table`` is not a DataFrame.
        ValueError: If it lacks a column or holds no ``*_seconds`` metric.
    """
    _require(table, ("dataset", "epsilon", "seed", "metric", "value"), "result")
    secs = table[table["metric"].str.endswith("_seconds")]
    if secs.empty:
        raise ValueError("the table holds no '*_seconds' metric.")
    return secs.groupby(["dataset", "epsilon", "seed"])["value"].sum()


def overspent(table: pd.DataFrame) -> pd.DataFrame:
    """Return the rows whose spent ε exceeds the budget (empty when none does).

    Raises:
        TypeError: If ``table`` is not a DataFrame.
        ValueError: If it lacks a column or holds no ``epsilon_spent``.
    """
    _require(table, ("epsilon", "metric", "value"), "result")
    spent = table[table["metric"] == "epsilon_spent"]
    if spent.empty:
        raise ValueError("the table holds no 'epsilon_spent' metric.")
    return spent[~(spent["value"] <= spent["epsilon"] * (1 + 1e-9))]


def paper_run_sentence(meta: Mapping[str, object], *, partial: bool) -> str:
    """Say how a stored paper run was computed: in one run (how long, where) or in parts.

    Args:
        meta: The stored result's metadata (``cells``, ``cells_resumed``,
            ``wall_time_s``, ``workers``, ``device``).
        partial: Whether the stored result is partial.

    Returns:
        A sentence of plain words (glued text is not parsed as Markdown).

    Examples:
        >>> paper_run_sentence({"cells": 4, "cells_resumed": 0, "wall_time_s": 600,
        ...     "workers": "2 local process(es)",
        ...     "device": {"cpu_count": 2, "cpu": "CPU"}}, partial=False)
        'The stored paper run computed all 4 cells in one run in 10 minutes with 2 worker processes, on a 2-core CPU.'
    """  # noqa: E501
    runs = meta.get("runs")
    if not partial and isinstance(runs, list) and runs and "adopted" in meta:
        # Adopted from the runs that computed its cells, each on record.
        # The workers of every run said once where they agree.
        shared = {_where(run, machine=False) for run in runs}
        each = f", each{shared.pop()}" if len(shared) == 1 else ""
        parts = [_run_text(run, workers=not each) for run in runs]
        return (
            f"The stored paper profile's {meta['cells']} cells were computed in "
            f"{len(runs)} runs{each}: " + "; ".join(parts) + "."
        )
    if partial or meta.get("cells_resumed") != 0:
        return (
            "The stored paper run was computed in parts, so no single run's wall time "
            "is on record."
        )
    return (
        f"The stored paper run computed all {meta['cells']} cells in one run "
        f"in {float(meta['wall_time_s']) / 60:.0f} minutes{_where(meta)}."
    )


def _where(
    run: Mapping[str, object], *, workers: bool = True, machine: bool = True
) -> str:
    """`` with 2 worker processes, on a 2-core AMD EPYC``: a run's workers, machine."""
    text = str(run.get("workers", ""))
    jobs = (
        f" with {text.split()[0]} worker processes"
        if workers and text.endswith("local process(es)")
        else ""
    )
    if not machine:
        return jobs
    device = run.get("device", {})
    device = device if isinstance(device, Mapping) else {}
    name = machine_name(device)
    name = "CPU" if name == "unknown" else name
    return f"{jobs}, on a {device.get('cpu_count', '?')}-core {name}"


def _run_text(run: Mapping[str, object], *, workers: bool = True) -> str:
    """One run of ``meta["runs"]``: its cells, its elapsed minutes, where."""
    cells = len(run.get("cells_done") or [])  # type: ignore[arg-type]
    try:
        start = datetime.fromisoformat(str(run["started"]))
        end = datetime.fromisoformat(str(run["date"]))
        took = f" in {(end - start).total_seconds() / 60:.0f} minutes"
    except (KeyError, ValueError):
        took = ""
    plural = "s" if cells != 1 else ""
    return f"{cells} cell{plural}{took}{_where(run, workers=workers)}"


# --- DPSAGE: Table 2, the ceiling, the values ----------------------------------------

#: Our DPSAGE data sets in the order of the paper's Table 2, with how tables name them.
DPSAGE_DATASETS: dict[str, str] = {
    "ACSEmployment-NY-sample": "ACSEmployment, New York sample",
    "ACSEmployment-NM": "ACSEmployment, New Mexico",
    "ACSPublicCoverage-NM": "ACSPublicCoverage, New Mexico",
    "ACSMobility-NM": "ACSMobility, New Mexico",
}

#: The paper's data set of Table 2 that each of ours stands for (as
#: ``dpnotes.experiments.spending.PAPER_DATASET``; a test checks they agree).
TABLE2_PAPER_DATASET: dict[str, str] = {
    "ACSEmployment-NY-sample": "ACSEmployment-CA",
    "ACSEmployment-NM": "ACSEmployment-CA",
    "ACSPublicCoverage-NM": "ACSPublicCoverage-NM",
    "ACSMobility-NM": "ACSMobility-NM",
}

#: Table 2's metrics: name -> (the paper's key, our per-seed metric).
TABLE2_METRICS: dict[str, tuple[str, str]] = {
    "nDCG": ("ndcg", "ndcg"), "Jaccard": ("jaccard", "jaccard"), "MAP": ("map", "ap"),
}  # fmt: skip

#: The two labellings of DPSAGE's explained rows, with how tables name them.
LABELLINGS: dict[str, str] = {"synthetic": "S's labels", "model": "C's probabilities"}

#: Largest difference of a Table 2 mean from the paper's that still reproduces.
TABLE2_TOLERANCE = 0.1


def dpsage_per_seed(
    table: pd.DataFrame,
    *,
    dataset: str,
    epsilon: float,
    method: str,
    labels: str,
    metric: str,
    seeds: Sequence[int] | None = None,
) -> pd.Series:
    """Return one whole-ranking ``spending_dpsage`` metric per seed (feature ``all``).

    Args:
        table: A ``spending_dpsage`` result table.
        dataset: The data set.
        epsilon: DPSAGE's budget (matched with ``np.isclose``).
        method: ``"dpsage"``, ``"real_sage"`` or ``"real_sage_rerun"``.
        labels: ``"synthetic"``, ``"model"`` (DPSAGE) or ``"real"`` (the reference).
        metric: ``"ndcg"``, ``"jaccard"``, ``"ap"``, ``"test_accuracy"``, a time ...
        seeds: The seeds wanted; by default every seed of the table.

    Returns:
        The values indexed by seed, in increasing order.

    Raises:
        TypeError: If ``table`` is not a DataFrame.
        ValueError: If it lacks a column, has no such row, or lacks one of the seeds.
    """
    _require(table, DPSAGE_COLUMNS, "spending_dpsage")
    rows = table[
        (table["dataset"] == dataset)
        & np.isclose(table["epsilon"].astype(float), epsilon)
        & (table["method"] == method)
        & (table["labels"] == labels)
        & (table["metric"] == metric)
        & (table["feature"] == "all")
    ]
    what = f"{dataset}, ε = {epsilon:g}, {method} with {labels} labels, {metric}"
    return _by_seed(rows, _seed_list(table, seeds), what)


def sage_values(
    table: pd.DataFrame, *, dataset: str, epsilon: float, method: str, labels: str
) -> pd.DataFrame:
    """Return the SAGE value of every feature and seed (features x seeds).

    Raises:
        TypeError: If ``table`` is not a DataFrame.
        ValueError: If it lacks a column, has no such values, or a feature lacks one
            of the table's seeds.
    """
    _require(table, DPSAGE_COLUMNS, "spending_dpsage")
    d = table[
        (table["dataset"] == dataset)
        & np.isclose(table["epsilon"].astype(float), epsilon)
        & (table["method"] == method)
        & (table["labels"] == labels)
        & (table["metric"] == "sage_value")
    ]
    if d.empty:
        raise ValueError(
            f"the table has no SAGE values of {method} ({labels} labels) on "
            f"{dataset!r} at ε = {epsilon:g}."
        )
    wide = d.pivot(index="feature", columns="seed", values="value")
    missing = sorted(set(_seed_list(table, None)) - set(wide.columns))
    if missing or wide.isna().any().any():
        raise ValueError(
            f"the SAGE values of {method} on {dataset!r} at ε = {epsilon:g} lack "
            f"seeds {missing or 'for some features'} (a partial result?)."
        )
    return wide


def _table2_datasets(table: pd.DataFrame) -> list[str]:
    return [d for d in DPSAGE_DATASETS if d in set(table["dataset"])]


def table2_comparisons(
    table: pd.DataFrame, *, labels: str, tolerance: float = TABLE2_TOLERANCE
) -> list[Verdict]:
    """Return the paper's Table 2 beside DPSAGE's per-seed scores under one labelling.

    Args:
        table: A ``spending_dpsage`` result table (its data sets among
            :data:`DPSAGE_DATASETS`, in that order).
        labels: ``"synthetic"`` (the paper's reading) or ``"model"``.
        tolerance: Largest difference of the mean that reproduces.

    Returns:
        One :class:`~dpnotes.findings.verdict.Verdict` per data set, metric and
        budget of :data:`~dpnotes.paper_numbers.SPENDING_TABLE2_EPSILONS`, ours over
        every seed with a 95% interval of the seed spread (the ranking metrics are
        not proportions of test records: no test error is added; they lie in [0, 1],
        so the interval is cut to it).

    Raises:
        ValueError: If ``labels`` is unknown, the table has none of the data sets, or
            as :func:`dpsage_per_seed`.
    """
    if labels not in LABELLINGS:
        raise ValueError(f"labels must be one of {list(LABELLINGS)}, got {labels!r}.")
    _require(table, DPSAGE_COLUMNS, "spending_dpsage")
    datasets = _table2_datasets(table)
    if not datasets:
        raise ValueError(f"the table holds none of {list(DPSAGE_DATASETS)}.")
    rows = []
    for dataset in datasets:
        paper = paper_numbers.SPENDING_TABLE2[TABLE2_PAPER_DATASET[dataset]]
        for name, (key, metric) in TABLE2_METRICS.items():
            for k, epsilon in enumerate(paper_numbers.SPENDING_TABLE2_EPSILONS):
                values = dpsage_per_seed(
                    table, dataset=dataset, epsilon=epsilon, method="dpsage",
                    labels=labels, metric=metric,
                ).to_numpy(dtype=float)  # fmt: skip
                rows.append(compare_value(
                    f"{DPSAGE_DATASETS[dataset]}, {name}, ε = {epsilon:.1f}",
                    paper[key][k], Estimate(tuple(values), proportion=True),
                    tolerance=tolerance, decimals=2,
                ))  # fmt: skip
    return rows


@dataclass(frozen=True)
class Table2Summary:
    """What the text says about Table 2, per labelling of :data:`LABELLINGS`.

    Attributes:
        n_cells: Cells of the table (data sets x metrics x budgets).
        below: Per labelling, how many of our means lie below the paper's.
        reproduces: Per labelling, how many cells reproduce.
        mean: Per labelling and budget, our means averaged over data sets and metrics.
        paper_mean: Per budget, the paper's cells averaged the same way.
        dataset_mean: Per labelling and data set, ``(ours, paper's)`` averaged over
            its metrics and budgets.
        seeds: The seeds our means are taken over.
    """

    n_cells: int
    below: dict[str, int]
    reproduces: dict[str, int]
    mean: dict[str, dict[float, float]]
    paper_mean: dict[float, float]
    dataset_mean: dict[str, dict[str, tuple[float, float]]]
    seeds: tuple[int, ...]


def table2_summary(
    table: pd.DataFrame, *, tolerance: float = TABLE2_TOLERANCE
) -> Table2Summary:
    """Summarise Table 2 under both labellings (see :class:`Table2Summary`).

    Raises:
        ValueError: As :func:`table2_comparisons`.
    """
    cells = {lab: table2_comparisons(table, labels=lab, tolerance=tolerance)
             for lab in LABELLINGS}  # fmt: skip
    eps = paper_numbers.SPENDING_TABLE2_EPSILONS

    def at(rows: list[Verdict], e: float, side: str) -> float:
        return float(np.mean([getattr(c, side) for c in rows
                              if c.quantity.endswith(f"= {e:.1f}")]))  # fmt: skip

    def of(rows: list[Verdict], dataset: str) -> tuple[float, float]:
        mine = [c for c in rows if c.quantity.startswith(DPSAGE_DATASETS[dataset])]
        return (float(np.mean([c.mean for c in mine])),
                float(np.mean([c.paper for c in mine])))  # fmt: skip

    return Table2Summary(
        n_cells=len(cells["synthetic"]),
        below={lab: sum(c.mean < c.paper for c in rows) for lab, rows in cells.items()},
        reproduces={lab: sum(c.outcome == "reproduces" for c in rows)
                    for lab, rows in cells.items()},
        mean={lab: {e: at(rows, e, "mean") for e in eps}
              for lab, rows in cells.items()},
        paper_mean={e: at(cells["synthetic"], e, "paper") for e in eps},
        dataset_mean={lab: {d: of(rows, d) for d in _table2_datasets(table)}
                      for lab, rows in cells.items()},
        seeds=tuple(_seed_list(table, None)),
    )  # fmt: skip


def ceiling(table: pd.DataFrame, *, epsilon: float) -> pd.DataFrame:
    """Return real SAGE's agreement with its own rerun: the ceiling of any estimate.

    Args:
        table: A ``spending_dpsage`` result table.
        epsilon: The budget whose cells hold the rerun (the reference is not private,
            so any budget's cell; the chapter uses the first).

    Returns:
        One row per data set of :data:`DPSAGE_DATASETS` the table has, with, per metric
        of :data:`TABLE2_METRICS`, columns ``<name>`` (mean over seeds) and
        ``<name> sd`` (NaN for one seed), then ``accuracy`` (the reference model's mean
        accuracy on the real test split) and ``n_seeds``.

    Raises:
        ValueError: As :func:`dpsage_per_seed`.
    """
    rows = []
    for dataset in _table2_datasets(_require(table, DPSAGE_COLUMNS, "spending_dpsage")):
        row: dict[str, object] = {"dataset": dataset}
        for name, (_, metric) in TABLE2_METRICS.items():
            v = dpsage_per_seed(
                table,
                dataset=dataset,
                epsilon=epsilon,
                method="real_sage_rerun",
                labels="real",
                metric=metric,
            )
            row[name] = v.mean()
            row[f"{name} sd"] = v.std() if len(v) > 1 else math.nan
        acc = dpsage_per_seed(
            table,
            dataset=dataset,
            epsilon=epsilon,
            method="real_sage",
            labels="real",
            metric="test_accuracy",
        )
        row["accuracy"] = acc.mean()
        row["n_seeds"] = len(v)
        rows.append(row)  # fmt: skip
    return pd.DataFrame(rows)


def negative_shares(table: pd.DataFrame, *, epsilon: float) -> dict[str, float]:
    """Return the share of negative SAGE values, over data sets, features and seeds.

    Returns:
        ``{"synthetic": ..., "model": ..., "real": ...}``: DPSAGE under each labelling
        and the non-private reference, over every seed of the table (each data set
        must have them all).

    Raises:
        ValueError: As :func:`sage_values`.
    """
    datasets = _table2_datasets(_require(table, DPSAGE_COLUMNS, "spending_dpsage"))
    out = {}
    for key, method, labels in (
        ("synthetic", "dpsage", "synthetic"),
        ("model", "dpsage", "model"),
        ("real", "real_sage", "real"),
    ):
        v = pd.concat(
            [
                sage_values(
                    table, dataset=d, epsilon=epsilon, method=method, labels=labels
                )
                for d in datasets
            ]
        )
        out[key] = float((v < 0).to_numpy().mean())  # fmt: skip
    return out


def classifier_accuracy(table: pd.DataFrame) -> dict[str, dict[float, float]]:
    """Return the test accuracy of DPSAGE's classifier C and of the reference model.

    Returns:
        ``{"dp": {epsilon: ...}, "real": {epsilon: ...}}``, each a mean over every
        seed of the table (each data set must have them all) averaged over data sets,
        at each budget of Table 2.

    Raises:
        ValueError: As :func:`dpsage_per_seed`.
    """
    datasets = _table2_datasets(_require(table, DPSAGE_COLUMNS, "spending_dpsage"))
    return {
        lab: {e: float(np.mean([dpsage_per_seed(
                  table, dataset=d, epsilon=e, method=method, labels=labels,
                  metric="test_accuracy").mean() for d in datasets]))
              for e in paper_numbers.SPENDING_TABLE2_EPSILONS}
        for lab, method, labels in (("dp", "dpsage", "synthetic"),
                                    ("real", "real_sage", "real"))
    }  # fmt: skip


@dataclass(frozen=True)
class StageSeconds:
    """How long DPSAGE's stages took (runs with S's labels), in seconds.

    Attributes:
        synthesizer_median: MST's fit, median over runs.
        synthesizer_max: MST's fit, the longest run.
        sage_median: SAGE's estimate, median.
        classifier_median: The DP classifier's fit, median.
    """

    synthesizer_median: float
    synthesizer_max: float
    sage_median: float
    classifier_median: float


def stage_seconds(table: pd.DataFrame) -> StageSeconds:
    """Return the times of DPSAGE's stages over the table's runs.

    Raises:
        TypeError: If ``table`` is not a DataFrame.
        ValueError: If it lacks a column or one of the stages' times.
    """
    _require(table, DPSAGE_COLUMNS, "spending_dpsage")
    dp = table[(table["method"] == "dpsage") & (table["labels"] == "synthetic")
               & table["metric"].str.endswith("_seconds")]  # fmt: skip
    stage = dp.groupby("metric")["value"].median()
    need = ["synthesizer_seconds", "sage_seconds", "classifier_seconds"]
    missing = [m for m in need if m not in stage.index]
    if missing:
        raise ValueError(f"the table lacks DPSAGE's times {missing}.")
    return StageSeconds(
        synthesizer_median=float(stage["synthesizer_seconds"]),
        synthesizer_max=float(dp[dp["metric"] == "synthesizer_seconds"]["value"].max()),
        sage_median=float(stage["sage_seconds"]),
        classifier_median=float(stage["classifier_seconds"]),
    )


def black_fnr_gap(
    table: pd.DataFrame,
    *,
    dataset: str,
    method: str = "fsq_fnr",
    other: str = "real_dp",
) -> pd.Series:
    """Return ``other``'s black FNR minus ``method``'s, per budget (means over seeds).

    Positive where ``method`` (by default FSQ-FNR) leaves fewer black positives
    unpredicted than ``other`` (by default the DP model on real data).

    Raises:
        ValueError: As :func:`mean_by_budget`.
    """

    def fnr(m: str) -> pd.Series:
        return mean_by_budget(table, dataset=dataset, method=m, group="black",
                              metric="fnr")  # fmt: skip

    return fnr(other) - fnr(method)


def cell_count(table: pd.DataFrame) -> int:
    """Return how many cells (data set, budget, seed) the table holds.

    Raises:
        TypeError: If ``table`` is not a DataFrame.
        ValueError: If it lacks a column.

    Examples:
        >>> cell_count(pd.DataFrame({"dataset": ["a", "a", "b"], "epsilon": [1, 1, 1],
        ...                          "seed": [0, 0, 0]}))
        2
    """
    _require(table, ("dataset", "epsilon", "seed"), "result")
    return int(table.groupby(["dataset", "epsilon", "seed"]).ngroups)


# --- The texts the SuperQUAIL chapter glues ---------------------------------------

#: The paper profile's data sets, in the order of the chapter's figure rows.
E2E_DATASETS: tuple[str, ...] = (
    "ACSEmployment-NY-sample",
    "ACSMobility-NM",
    "ACSPublicCoverage-NM",
)

#: The quick run's glued numbers: key -> (group, metric).
_QUICK_KEYS = {
    "acc": ("overall", "accuracy"),
    "accb": ("black", "accuracy"),
    "fnrb": ("black", "fnr"),
    "fnrw": ("white", "fnr"),
    "fprb": ("black", "fpr"),
}


def quick_texts(
    table: pd.DataFrame, *, dataset: str, rows: int | None
) -> dict[str, str]:
    """Return the texts the chapter glues about the quick run, by glue name.

    Args:
        table: The quick ``spending_e2e`` result table.
        dataset: Its data set.
        rows: Its config's ``rows`` (None or 0: all rows).

    Returns:
        ``delta``, ``rows``, ``n-test`` (the test split's count), ``seeds``,
        ``eps-list``, and ``<key>-<method>-e0`` / ``-e3`` for every method and key
        ``acc`` (overall accuracy), ``accb`` (black accuracy), ``fnrb``, ``fnrw``
        (black and white FNR), ``fprb`` (black FPR): means over the table's seeds
        at e^0 and e^3, three decimals.

    Raises:
        ValueError: As :func:`seed_stats` and :func:`budget_of` (no e^0 or e^3), or
            if a method lacks a metric.
    """
    from dpnotes.experiments.spending_e2e import DELTA

    means = seed_stats(table, dataset=dataset)["mean"]
    out = {
        "delta": f"{DELTA:g}",
        "rows": f"{rows:,}" if rows else "all",
        "n-test": f"{int(group_test_counts(table, dataset=dataset)['overall']):,}",
        "seeds": seeds_text(_seed_list(table, None)),
        "eps-list": ", ".join(f"{e:.2f}" for e in budgets(table, dataset=dataset)),
    }
    for tag, power in (("e0", 0), ("e3", 3)):
        e = budget_of(table, dataset=dataset, power=power)
        for m in METHOD_LABELS:
            for key, (group, metric) in _QUICK_KEYS.items():
                out[f"{key}-{m}-{tag}"] = f"{_pick(means, m, group, metric, e):.3f}"
    return out


def _whole_seeds(stored: object) -> list[int]:
    """The seeds of a stored result that hold every data set and budget of its grid."""
    config = stored.meta.get("config", {})
    if "datasets" not in config or "epsilons" not in config:
        raise ValueError("the stored result's config lacks 'datasets' or 'epsilons'.")
    return complete_seeds(
        stored.table, datasets=config["datasets"], epsilons=config["epsilons"]
    )


def whole_seed_table(stored: object) -> tuple[pd.DataFrame, list[int]]:
    """Keep the seeds of a stored result that hold every data set and budget.

    Args:
        stored: A stored result (``.table`` and ``.meta["config"]`` with its
            ``datasets`` and ``epsilons``).

    Returns:
        The table of its complete seeds, and those seeds.

    Raises:
        ValueError: If no seed is complete, or the config lacks its grid.
    """
    seeds = _whole_seeds(stored)
    if not seeds:
        raise ValueError("no seed of the stored result holds every cell of its grid.")
    return stored.table[stored.table["seed"].isin(seeds)], seeds


@dataclass(frozen=True, eq=False)
class PaperProfile:
    """The stored paper profile of ``spending_e2e``, as the chapter shows it.

    Attributes:
        table: Its table over the complete seeds, or None where none is stored.
        seeds: Those seeds (empty without a table).
        claims: :func:`check_spending_claims` on it (empty without a table).
        texts: The chapter's glued texts about it, by glue name (placeholders
            without a table).
    """

    table: pd.DataFrame | None
    seeds: list[int]
    claims: list[Verdict]
    texts: dict[str, str]


#: Glue names of the paragraphs written for the whole paper grid.
_PROSE_KEYS = (
    "ny-mst",
    "ny-sq-max",
    "ny-sq-best",
    "pc-sq-above",
    "pc-first",
    "mob-share",
    "mob-all-positive",
    "mob-real-fpr",
    "fnr-black-gap",
)


def _prose_texts(ft: pd.DataFrame) -> dict[str, str]:
    """The numbers the paragraphs about the paper grid state."""
    ny, pc, mob = E2E_DATASETS[0], E2E_DATASETS[2], E2E_DATASETS[1]
    ny_mst, ny_sq = (
        mean_by_budget(ft, dataset=ny, method=m, group="overall", metric="accuracy")
        for m in ("mst", "sq")
    )
    above = budgets_where_above(ft, dataset=pc, method="sq", other="mst")
    m = mobility_degenerate(ft, dataset=mob)
    gap = black_fnr_gap(ft, dataset=ny)

    def e(eps: float) -> str:
        return _e(round(math.log(eps)))

    return {
        "ny-mst": f"{ny_mst.min():.3f}"
        + ("" if np.ptp(ny_mst) < 0.0005 else f" to {ny_mst.max():.3f}"),
        "ny-sq-max": f"{ny_sq.max():.3f}",
        "ny-sq-best": e(ny_sq.idxmax()),
        "pc-sq-above": ", ".join(e(x) for x in above) or "no budget",
        "pc-first": e(above[0]) if above else "no budget",
        "mob-share": f"{m.share:.3f}",
        "mob-all-positive": f"{m.all_positive} of {m.synthetic_runs}",
        "mob-real-fpr": f"{m.real_fpr:.3f}",
        "fnr-black-gap": f"{gap.min():.3f} to {gap.max():.3f}",
    }


def paper_profile(stored: object | None, *, quick: pd.DataFrame) -> PaperProfile:
    """Read the stored paper profile for the chapter: table, claims and texts.

    Args:
        stored: The stored paper result (``.table``, ``.meta``, ``.partial``,
            ``.caption()``), or None where none is stored.
        quick: The quick run's table: its cells time the profile when no paper run
            is stored.

    Returns:
        The :class:`PaperProfile`. Its texts: ``paper-scope``, ``paper-caption``,
        ``paper-black-n``, ``claims-counts``, ``authors-sq-gap``, ``ours-sq-gap``,
        the paragraphs' numbers (where the table holds the paper's three data sets and
        five budgets), and the cost of a rerun: ``cell-profile``, ``cell-mean``,
        ``cell-max``, ``paper-cells``, ``paper-hours``, ``paper-run``.

    Raises:
        ValueError: As :func:`whole_seed_table` and the functions it calls.
    """
    # The figures' three data sets and New Mexico Employment, five budgets, ten seeds.
    cells = (len(E2E_DATASETS) + 1) * 5 * 10
    if stored is None:
        per_cell = cell_seconds(quick)
        texts = dict.fromkeys(_PROSE_KEYS, "– (not computed)") | {
            "paper-scope": "No run of it is stored here: compute it with `python -m "
            "dpnotes run spending_e2e --profile paper`.",
            "paper-caption": "Not computed yet.",
            "paper-black-n": "not computed",
            "claims-counts": "not computed",
            "authors-sq-gap": "–",
            "ours-sq-gap": "–",
            "cell-profile": "quick",
            "paper-run": paper_run_sentence({}, partial=True),
        }
        ft, seeds, claims = None, [], []
    else:
        every, seeds = whole_seed_table(stored)
        # The pages of the paper's claims show its three data sets; the second
        # ACSEmployment stand-in is compared on the page beyond the paper.
        ft = every[every["dataset"].isin(E2E_DATASETS)]
        others = sorted(set(every["dataset"]) - set(E2E_DATASETS))
        claims = check_spending_claims(ft)
        per_cell = cell_seconds(every)
        cells = int(stored.meta.get("cells") or cells)
        ny = E2E_DATASETS[0]
        black = {
            d: int(group_test_counts(ft, dataset=d)["black"])
            for d in E2E_DATASETS
            if d in set(ft["dataset"])
        }
        theirs, ours = sq_gap_beside_authors(
            ft, dataset=ny, epsilon=budget_of(ft, dataset=ny, power=2)
        )
        whole = len(set(ft["dataset"])) == 3 and len(set(ft["epsilon"])) == 5
        texts = {
            "paper-scope": f"Shown here: {cell_count(ft)} of its "
            f"{stored.meta['cells']} cells, {seeds_text(seeds)} of every data set "
            "and budget"
            + (" (the whole seeds of a partial run)" if stored.partial else "")
            + (
                f"; its {', '.join(DPSAGE_DATASETS.get(d, d) for d in others)} "
                "cells are compared with the New York sample's on the page beyond "
                "the paper."
                if others
                else "."
            ),
            "paper-caption": stored.caption(),
            "paper-black-n": "; ".join(
                f"{n:,} on {DPSAGE_DATASETS[d]}" for d, n in black.items()
            ),
            "claims-counts": verdict_counts_text(claims, noun="statement"),
            "authors-sq-gap": f"{theirs:+.3f}",
            "ours-sq-gap": f"{ours:+.3f}",
            "cell-profile": "paper",
            "paper-run": paper_run_sentence(stored.meta, partial=stored.partial),
        } | (
            _prose_texts(ft)
            if whole
            else dict.fromkeys(_PROSE_KEYS, "– (not computed)")
        )
    texts |= {
        "cell-mean": f"{per_cell.mean():.0f} s",
        "cell-max": f"{per_cell.max():.0f} s",
        "paper-cells": f"{cells}",
        "paper-hours": f"{cells * per_cell.mean() / 3600:.1f}",
    }
    return PaperProfile(ft, seeds, claims, texts)


def fair_cost_frame(
    table: pd.DataFrame, *, dataset: str, epsilon: float
) -> pd.DataFrame:
    """Return :func:`fair_cost` as the chapter shows it: names and signed differences.

    Beside each group, its test records and among them its positives (the records
    behind its accuracy and its FNR; its FPR's are the rest).

    Raises:
        ValueError: As :func:`fair_cost`, :func:`group_test_counts` and
            :func:`group_positives`.
    """
    cost = fair_cost(table, dataset=dataset, epsilon=epsilon)
    counts = group_test_counts(table, dataset=dataset)
    positives = group_positives(table, dataset=dataset)
    shown = {"accuracy": "accuracy − SQ's", "fnr": "FNR − SQ's", "fpr": "FPR − SQ's"}
    out = cost.assign(
        variant=cost["variant"].map(METHOD_LABELS),
        **{m: cost[m].map("{:+.3f}".format) for m in shown},
    ).rename(columns=shown)
    # The records behind each group's rates: accuracy's, and FNR's (its positives).
    out.insert(
        2,
        "test n (positives)",
        [f"{counts[g]:,} ({positives[g]:,})" for g in cost["group"]],
    )
    return out


def authors_caption(seeds: Sequence[int]) -> str:
    """The caption of :func:`authors_verdicts`' table: whose numbers, where from.

    Args:
        seeds: The seeds our means are taken over.

    Raises:
        ValueError: If there are no seeds.
        TypeError: If a seed is not an integer.

    Examples:
        >>> authors_caption([0, 1])[:39]
        "The authors' stored metrics (ACSEmploym"
    """
    return (
        "The authors' stored metrics (ACSEmployment, California, ε = 7, i.e. e², mean "
        f"of their 10 runs; {paper_numbers.SPENDING_AUTHORS_REPOSITORY} at "
        f"{paper_numbers.SPENDING_AUTHORS_COMMIT[:7]}) beside ours (New York sample, "
        f"ε = e², {seeds_text(seeds, mean_over=True)}, a logistic regression on all "
        "records)."
    )


# --- The texts and tables the DPSAGE chapter shows --------------------------------


def has_whole_seed(stored: object) -> bool:
    """Whether a stored result holds a seed with every cell of its grid.

    A paper run that has not finished one seed yet has none; the chapter then shows
    the quick profile instead.

    Raises:
        ValueError: If the config lacks its grid.
    """
    return bool(_whole_seeds(stored))


def ceiling_frame(table: pd.DataFrame, *, epsilon: float) -> pd.DataFrame:
    """Return :func:`ceiling` as the chapter shows it: mean ± sd per metric, text.

    Returns:
        Columns ``data set``, one per metric of :data:`TABLE2_METRICS` (mean ± sd over
        seeds, two decimals; the mean alone for one seed), and ``accuracy of the
        reference model`` (three decimals).

    Raises:
        ValueError: As :func:`ceiling`.
    """
    c = ceiling(table, epsilon=epsilon)
    return pd.DataFrame(
        {"data set": c["dataset"].map(DPSAGE_DATASETS)}
        | {
            name: [
                mean_sd(m, None if math.isnan(sd) else sd, decimals=2)
                for m, sd in zip(c[name], c[f"{name} sd"], strict=True)
            ]
            for name in TABLE2_METRICS
        }
        | {"accuracy of the reference model": c["accuracy"].map("{:.3f}".format)}
    )


def dpsage_texts(
    table: pd.DataFrame, *, config: Mapping[str, object]
) -> dict[str, str]:
    """Return the texts the DPSAGE chapter glues, by glue name.

    Args:
        table: A ``spending_dpsage`` result table over whole seeds.
        config: Its config (``n_background``, ``n_samples``, ``thresh``).

    Returns:
        The settings (``gamma``, ``delta``, ``tolerance``, ``n-background``,
        ``n-samples``, ``thresh``); Table 2's verdict counts (``t2-synthetic``,
        ``t2-model``), cells below the paper's (``below-<labelling>``) and averages
        (``avg-<labelling>-<k>``, ``avg-paper-<k>`` for the budgets k = 0, 1); the
        ceiling's least value and least Jaccard (``ceiling-min``,
        ``ceiling-jaccard-min``); the shares of negative values at ε = 1
        (``negative-<key>``); the classifiers' accuracy (``acc-dp-<k>``,
        ``acc-real``); and the stages' times (``mst-median``, ``mst-max``,
        ``sage-median``, ``clf-median``).

    Raises:
        ValueError: As the functions it calls, or if ``config`` lacks a setting.
    """
    from dpnotes.experiments.spending import DELTA, GAMMA

    missing = [k for k in ("n_background", "n_samples", "thresh") if k not in config]
    if missing:
        raise ValueError(f"config lacks {missing}: pass the stored result's config.")
    eps = paper_numbers.SPENDING_TABLE2_EPSILONS
    summary = table2_summary(table)
    limit = ceiling(table, epsilon=eps[0])
    negative = negative_shares(table, epsilon=eps[1])
    acc = classifier_accuracy(table)
    stage = stage_seconds(table)
    out = {
        "gamma": f"{GAMMA:g}",
        "delta": f"{DELTA:g}",
        "tolerance": f"{TABLE2_TOLERANCE:g}",
        "n-background": f"{config['n_background']}",
        "n-samples": f"{config['n_samples']:,}",
        "thresh": f"{config['thresh']:g}",
        "ceiling-min": f"{limit[list(TABLE2_METRICS)].min().min():.2f}",
        "ceiling-jaccard-min": f"{limit['Jaccard'].min():.2f}",
        "acc-real": f"{acc['real'][eps[0]]:.3f}",
        "mst-median": f"{stage.synthesizer_median:.0f} s",
        "mst-max": f"{stage.synthesizer_max:.0f} s",
        "sage-median": f"{stage.sage_median:.0f} s",
        "clf-median": f"{stage.classifier_median:.2f} s",
    }
    for lab in LABELLINGS:
        out[f"t2-{lab}"] = verdict_counts_text(table2_comparisons(table, labels=lab))
        out[f"below-{lab}"] = f"{summary.below[lab]} of {summary.n_cells}"
    for k, e in enumerate(eps):
        for lab in LABELLINGS:
            out[f"avg-{lab}-{k}"] = f"{summary.mean[lab][e]:.2f}"
        out[f"avg-paper-{k}"] = f"{summary.paper_mean[e]:.2f}"
        out[f"acc-dp-{k}"] = f"{acc['dp'][e]:.3f}"
    for key, share in negative.items():
        out[f"negative-{key}"] = f"{share:.0%}"
    return out


def figure3_values(
    table: pd.DataFrame, *, dataset: str, epsilon: float
) -> dict[str, pd.DataFrame]:
    """Return the SAGE values Figure 3 draws: per bar, mean and sd per feature.

    Returns:
        ``{"real": ..., "synthetic": ..., "model": ...}`` (real SAGE, DPSAGE with S's
        labels, with C's probabilities), each a frame with columns ``mean`` and ``sd``
        (NaN for one seed), its features sorted by real SAGE's mean, least first (the
        most important on top of a horizontal bar chart).

    Raises:
        ValueError: As :func:`sage_values`.
    """
    out = {}
    for key, method in (("real", "real_sage"), ("synthetic", "dpsage"),
                        ("model", "dpsage")):  # fmt: skip
        v = sage_values(
            table, dataset=dataset, epsilon=epsilon, method=method, labels=key
        )
        out[key] = pd.DataFrame({"mean": v.mean(axis=1), "sd": v.std(axis=1, ddof=1)})
    order = out["real"]["mean"].sort_values().index
    return {key: frame.loc[order] for key, frame in out.items()}


def table1_caption(table: pd.DataFrame) -> str:
    """The caption of :func:`table1_verdicts`' table, for the seeds of ``table``.

    Raises:
        ValueError: If the table has no seed column or no seed.

    Examples:
        >>> table1_caption(pd.DataFrame({"seed": [0]})).endswith(
        ...     "too narrow. Ours over seed 0 at ε = e³.")
        True
    """
    _require(table, ("seed",), "spending_e2e")
    return (
        "The paper's Table 1 (ACSEmployment, California, ε = e³, logistic regression; "
        "accuracy and false-negative rate, its percentages as proportions) beside ours "
        "on the New York sample. Our 95% interval adds the binomial error of the "
        "group's test records (test n) to the seed spread; an FNR is a share of the "
        "group's positives only, fewer than test n, so those intervals are too narrow. "
        f"Ours over {seeds_text(_seed_list(table, None))} at ε = e³."
    )
