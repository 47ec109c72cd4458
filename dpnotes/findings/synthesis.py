"""The stratification paper's synthesis findings: does stratifying beat not stratifying?

rosenblatt2024stratification (Figures 4, 5, 7 and 9) claims that synthesizing each group
separately and recombining lowers the disparity of MST, AIM and GEM's synthetic data.
Its evidence is a direction read off plots, so our side is a count: per data set,
synthesizer and ε, is the stratified variant better than the unstratified one of the
same seed? Each comparison is a paired difference over seeds with a 95% interval
(Student's t over the seeds' differences; :mod:`dpnotes.findings.verdict`), so a tally
gives the raw count of wins (means) beside the count whose interval excludes zero, and
a claim's verdict is *inconclusive* when the comparisons our seeds cannot decide could
change it. The metrics compared (workload and parity errors of the synthetic data, or a
classifier's score on the held-out real split) are not proportions of test records, so
no test-set error is added: the seed spread is the uncertainty.

Beside the comparisons, every number the two synthesis chapters state is computed here
from the stored tables (strat_synth, synth_group_sizes) as the chapters load them:
group sizes (the paper's Table 3), the real-data references, the groups without test
records and the bound on what they can move, the authors' parity convention (Figures 5
and 7a), the race groups' workload errors by size, the paper-beside-ours rows, and the
synthesizers chapter's workload errors, noise scales and fit times. Functions refuse a
table without the columns or rows they need (``ValueError`` naming them) rather than
return a value over fewer seeds than they say.

Privacy: plain post-processing of stored results; no privacy budget is spent.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from dpnotes import paper_numbers
from dpnotes.data.employment import (
    EMPLOYMENT_COLUMNS,
    EMPLOYMENT_DOMAIN,
    EMPLOYMENT_GROUPINGS,
    employment_labels,
    encode_employment,
)
from dpnotes.findings.verdict import LEVEL
from dpnotes.report import (
    ACS_DATASETS,
    ACS_SHORT,
    STRATA,
    STRATA_LABEL,
    PaperCheck,
    fmt,
    plural,
    seeds_text,
)
from dpnotes.synth import MST
from dpnotes.synth.evaluate import group_keys
from dpnotes.synth.marginals import all_kway

__all__ = [
    "CONVENTIONS",
    "GROUPINGS",
    "SIZE_COLUMNS",
    "SYNTHESIZERS",
    "TABLE_COLUMNS",
    "AbsentCheck",
    "ConventionTally",
    "LargestError",
    "RatioSummary",
    "RefitCheck",
    "Trails",
    "WinTally",
    "absent_check",
    "absent_groups",
    "absent_term_bound",
    "accuracy_gap",
    "aim_trails",
    "at_epsilon",
    "at_epsilon_wide",
    "claim_table",
    "claim_verdict",
    "compare_metric",
    "compare_strata",
    "convention_comparisons",
    "convention_flips",
    "convention_maxima",
    "convention_tally",
    "curve",
    "domain_cells",
    "draw_added",
    "errors_fall",
    "fall_shares",
    "first_sigma_aim",
    "first_sigma_mst",
    "fit_times",
    "fit_times_by_epsilon",
    "gem_reduction",
    "gem_steps",
    "group_name",
    "group_shares",
    "group_size_table",
    "groups_below",
    "larger_groups",
    "largest_error",
    "largest_gap",
    "lowest_variants",
    "majority_rate",
    "own_grouping_comparisons",
    "race_ratios",
    "ratio_range",
    "ratio_summary",
    "real_value",
    "refit_check",
    "remaining_fit_hours",
    "second_largest_group",
    "seed_lists",
    "small_groups",
    "smallest_group",
    "stored_devices",
    "strata_wins_table",
    "strata_wins_text",
    "stratified_checks",
    "table2_checks",
    "whole_blocks",
    "whole_value_bins",
    "win_tally",
    "workload_summary",
    "workload_table",
]


def _real(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}.")
    return float(value)


def _paired(
    rows: pd.DataFrame, strata: str, *, lower: bool, target: float | None
) -> pd.DataFrame:
    """Per setting: the seeds both variants have, and the interval of their gain.

    The gain of a seed is positive when its stratified run is better than its
    unstratified run (lower, higher, or closer to ``target``).
    """
    keys = ["dataset", "synthesizer", "epsilon"]
    wide = rows.pivot_table(
        index=[*keys, "seed"], columns="strata", values="value", aggfunc="mean"
    ).reindex(columns=["vanilla", strata])
    wide = wide.dropna()
    if target is not None:
        gain = (wide["vanilla"] - target).abs() - (wide[strata] - target).abs()
    elif lower:
        gain = wide["vanilla"] - wide[strata]
    else:
        gain = wide[strata] - wide["vanilla"]
    g = gain.groupby(level=keys)
    n, mean, sd = g.size(), g.mean(), g.std(ddof=1)
    q = 0.5 + LEVEL / 2
    t = pd.Series(
        [stats.t.ppf(q, k - 1) if k > 1 else math.nan for k in n], index=n.index
    )
    half = t * sd / np.sqrt(n)
    return pd.DataFrame(
        {"gain": mean, "low": mean - half, "high": mean + half, "paired_seeds": n}
    )


def compare_strata(
    rows: pd.DataFrame,
    strata: str,
    *,
    lower: bool = True,
    target: float | None = None,
) -> pd.DataFrame:
    """Compare stratified with unstratified synthesis, per data set, synthesizer and ε.

    Args:
        rows: Tidy results with the columns dataset, synthesizer, epsilon, strata, seed
            and value, already restricted to one metric, grouping and group; the rows of
            ``strata == "vanilla"`` are the unstratified runs.
        strata: The stratification compared with ``"vanilla"``.
        lower: Whether a lower value is better (else higher); ignored with ``target``.
        target: A real-data value: then the mean closer to it is better.

    Returns:
        A DataFrame indexed by (dataset, synthesizer, epsilon) with the columns
        ``strat`` and ``vanilla`` (means over seeds), ``better`` (the stratified mean
        is better) and ``tie`` (a near tie: the two variants' values over the seeds
        overlap, the lowest of one below the highest of the other, so the seeds cannot
        tell them apart); then the paired comparison over the seeds both variants
        have: ``gain`` (the mean of the seeds' gains, positive where stratifying is
        better), its 95% interval ``low`` and ``high`` (NaN with one paired seed),
        ``paired_seeds``, ``clear`` (the whole interval above zero: better beyond
        doubt) and ``clear_loss`` (below zero: worse beyond doubt). Only settings
        where both variants have values are kept.

    Raises:
        ValueError: If a column is missing or ``strata`` is ``"vanilla"``.
        TypeError: If ``rows`` is not a DataFrame.
    """
    if not isinstance(rows, pd.DataFrame):
        raise TypeError(f"rows must be a pandas DataFrame, got {type(rows).__name__}.")
    need = {"dataset", "synthesizer", "epsilon", "strata", "seed", "value"}
    if need - set(rows.columns):
        raise ValueError(
            f"rows lack the columns {sorted(need - set(rows.columns))}; pass the "
            "strat_synth results table filtered to one metric, grouping and group."
        )
    if strata == "vanilla":
        raise ValueError("strata must name a stratification, not 'vanilla' itself.")
    g = rows[rows.strata.isin(["vanilla", strata])].groupby(
        ["dataset", "synthesizer", "epsilon", "strata"]
    )["value"]
    m, lo, hi = (
        g.agg(f).unstack("strata").reindex(columns=["vanilla", strata])
        for f in ("mean", "min", "max")
    )
    out = pd.DataFrame({"strat": m[strata], "vanilla": m["vanilla"]}).dropna()
    if target is not None:
        out["better"] = (out.strat - target).abs() < (out.vanilla - target).abs()
    elif lower:
        out["better"] = out.strat < out.vanilla
    else:
        out["better"] = out.strat > out.vanilla
    overlap = (lo[strata] <= hi["vanilla"]) & (lo["vanilla"] <= hi[strata])
    out["tie"] = overlap.loc[out.index]
    paired = _paired(
        rows[rows.strata.isin(["vanilla", strata])], strata, lower=lower, target=target
    ).reindex(out.index)
    out = out.join(paired)
    out["paired_seeds"] = out["paired_seeds"].fillna(0).astype(int)
    out["clear"] = (out["low"] > 0).fillna(False).astype(bool)
    out["clear_loss"] = (out["high"] < 0).fillna(False).astype(bool)
    return out


@dataclass(frozen=True)
class WinTally:
    """How often stratifying won a set of comparisons.

    Attributes:
        wins: Comparisons where the stratified mean is better.
        total: Comparisons made.
        ties: Near ties among them (wins and losses).
        tied_losses: Losses that are near ties.
        clear_wins: Comparisons whose interval lies wholly on stratifying's side.
        clear_losses: Those whose interval lies wholly on the other side.
    """

    wins: int
    total: int
    ties: int
    tied_losses: int
    clear_wins: int = 0
    clear_losses: int = 0

    @property
    def undecided(self) -> int:
        """Comparisons whose interval holds zero (or that have one paired seed)."""
        return self.total - self.clear_wins - self.clear_losses

    @property
    def outcome(self) -> str:
        """The majority verdict.

        ``"none"`` without comparisons; ``"loses"`` when stratifying wins fewer than
        half even if every tied loss were a win; ``"loses within ties"`` when it wins
        fewer than half but the tied losses could change that; ``"half"`` at exactly
        half; ``"wins"`` above half.
        """
        if self.total == 0:
            return "none"
        if 2 * (self.wins + self.tied_losses) < self.total:
            return "loses"
        if 2 * self.wins < self.total:
            return "loses within ties"
        if 2 * self.wins == self.total:
            return "half"
        return "wins"

    def __str__(self) -> str:
        """``"2 of 54"``."""
        return f"{self.wins} of {self.total}"


def _tally(compared: pd.DataFrame) -> WinTally:
    better = compared["better"].astype(bool)
    tie = compared["tie"].astype(bool)
    clear = compared.get("clear", pd.Series(False, index=compared.index))
    clear_loss = compared.get("clear_loss", pd.Series(False, index=compared.index))
    return WinTally(
        wins=int(better.sum()),
        total=len(compared),
        ties=int(tie.sum()),
        tied_losses=int((tie & ~better).sum()),
        clear_wins=int(clear.astype(bool).sum()),
        clear_losses=int(clear_loss.astype(bool).sum()),
    )


def win_tally(compared: pd.DataFrame, *, by: str | None = None):
    """Count the wins of stratifying in :func:`compare_strata`'s comparisons.

    Args:
        compared: One or more :func:`compare_strata` frames (concatenated).
        by: An index level (``"dataset"``, ``"synthesizer"``): then one tally per value.

    Returns:
        A :class:`WinTally`, or with ``by`` a dict from the level's values (in order of
        appearance) to tallies.

    Raises:
        ValueError: If ``compared`` lacks the columns better and tie, or the level.
    """
    if not isinstance(compared, pd.DataFrame) or not {"better", "tie"} <= set(
        compared.columns
    ):
        raise ValueError("compared must be a frame returned by compare_strata.")
    if by is None:
        return _tally(compared)
    if by not in compared.index.names:
        raise ValueError(
            f"no index level {by!r}; the levels are {compared.index.names}."
        )
    keys = pd.unique(compared.index.get_level_values(by))
    return {k: _tally(compared.xs(k, level=by, drop_level=False)) for k in keys}


def strata_wins_text(
    compared: pd.DataFrame, synthesizers: Iterable[str], *, at_epsilon: float = 1.0
) -> str:
    """Say per synthesizer at how many ε stratifying won, and both values at one ε.

    Args:
        compared: :func:`compare_strata`'s frame for one data set.
        synthesizers: The synthesizers to report, in order; absent ones are skipped.
        at_epsilon: The ε whose two means are quoted, when computed.

    Returns:
        E.g. ``"MST at 2 of 6 ε (1 near tie); at ε = 1, 0.123 stratified against 0.456
        without strata; AIM at ..."``, or a sentence saying nothing is computed yet.

    Raises:
        ValueError: If ``compared`` holds more than one data set.
    """
    if compared.index.get_level_values("dataset").nunique() > 1:
        raise ValueError("compared holds several data sets; select one with .xs first.")
    parts = []
    present = set(compared.index.get_level_values("synthesizer"))
    for syn in synthesizers:
        if syn not in present:
            continue
        w = compared.xs(syn, level="synthesizer").droplevel("dataset")
        tally = _tally(w)
        text = f"{syn} at {tally} ε ({plural(tally.ties, 'near tie')})"
        if at_epsilon in w.index:
            strat, vanilla = w.loc[at_epsilon, "strat"], w.loc[at_epsilon, "vanilla"]
            text += (
                f"; at ε = {at_epsilon:g}, {fmt(strat)} stratified "
                f"against {fmt(vanilla)} without strata"
            )
        parts.append(text)
    return (
        "; ".join(parts) or "no synthesizer yet (no cells computed for this comparison)"
    )


def strata_wins_table(
    compared: pd.DataFrame | Mapping[str, pd.DataFrame],
    synthesizers: Iterable[str],
    *,
    at_epsilon: float = 1.0,
    label: str = "strata",
) -> pd.DataFrame:
    """Tabulate per synthesizer at how many ε stratifying won, and both means at one ε.

    The table form of :func:`strata_wins_text`, for one comparison or several (one
    per stratification or metric) under one another.

    Args:
        compared: :func:`compare_strata`'s frame for one data set, or a mapping from a
            row label (``"sex strata"``) to such frames, shown in the mapping's order.
        synthesizers: The synthesizers to show, in order; absent ones are skipped.
        at_epsilon: The ε whose two means are shown.
        label: The header of the column of the mapping's labels.

    Returns:
        One row per label (with a mapping) and synthesizer, with the columns ``label``
        (with a mapping), ``synthesizer``, ``stratified better`` (``"2 of 6 ε"``),
        ``near ties`` (a count), ``beyond doubt: better / worse`` (the comparisons
        whose paired interval lies wholly above or below zero, :func:`compare_strata`),
        and the stratified and unstratified means at
        ``at_epsilon`` (:func:`~dpnotes.report.fmt`; an en dash where that ε is not
        computed). No rows when nothing is computed.

    Raises:
        TypeError: If ``compared`` is neither a DataFrame nor a mapping of them.
        ValueError: If a frame is not :func:`compare_strata`'s or holds several data
            sets.

    Examples:
        >>> runs = pd.DataFrame({"dataset": "NY", "synthesizer": "MST", "seed": 0,
        ...                      "epsilon": [1.0, 1.0, 5.0, 5.0],
        ...                      "strata": ["vanilla", "SEX"] * 2,
        ...                      "value": [0.5, 0.4, 0.2, 0.3]})
        >>> t = strata_wins_table({"sex strata": compare_strata(runs, "SEX")}, ["MST"])
        >>> list(t.to_dict("records")[0].values())
        ['sex strata', 'MST', '1 of 2 ε', 0, '0 / 0', '0.400', '0.500']
    """
    if isinstance(compared, pd.DataFrame):
        frames, keyed = {None: compared}, False
    elif isinstance(compared, Mapping):
        frames, keyed = dict(compared), True
    else:
        raise TypeError(
            "compared must be compare_strata's DataFrame or a mapping of labels to "
            f"them, got {type(compared).__name__}."
        )
    order = list(synthesizers)
    e = _real(at_epsilon, "at_epsilon")
    at_strat, at_vanilla = f"stratified, ε = {e:g}", f"no strata, ε = {e:g}"
    rows = []
    for key, frame in frames.items():
        if not isinstance(frame, pd.DataFrame) or not {
            "strat",
            "vanilla",
            "better",
            "tie",
        } <= set(frame.columns):
            raise ValueError(
                f"compared[{key!r}] must be a frame returned by compare_strata."
            )
        if frame.index.get_level_values("dataset").nunique() > 1:
            raise ValueError(
                f"compared[{key!r}] holds several data sets; select one with .xs first."
            )
        present = set(frame.index.get_level_values("synthesizer"))
        for syn in order:
            if syn not in present:
                continue
            w = frame.xs(syn, level="synthesizer").droplevel("dataset")
            tally = _tally(w)
            there = e in w.index
            row = {label: key} if keyed else {}
            rows.append(
                {
                    **row,
                    "synthesizer": syn,
                    "stratified better": f"{tally} ε",
                    "near ties": tally.ties,
                    "beyond doubt: better / worse": (
                        f"{tally.clear_wins} / {tally.clear_losses}"
                    ),
                    at_strat: fmt(w.loc[e, "strat"]) if there else "–",
                    at_vanilla: fmt(w.loc[e, "vanilla"]) if there else "–",
                }
            )
    columns = [label] * keyed + [
        "synthesizer",
        "stratified better",
        "near ties",
        "beyond doubt: better / worse",
        at_strat,
        at_vanilla,
    ]
    return pd.DataFrame(rows, columns=columns)


def claim_verdict(tally: WinTally) -> tuple[str, str]:
    """Judge a claim that stratifying does better from its comparisons' intervals.

    The paper reports a direction (stratifying lowers an error) but no number, so the
    claim is that stratifying is better in most comparisons:

    * *reproduces* when more than half are better beyond doubt (interval above 0);
    * *differs* when, even counting every comparison our seeds cannot decide as a
      win, at most half could be wins (the losses beyond doubt are half or more);
    * *inconclusive* otherwise: the undecided comparisons could make it either way;
    * *not comparable* without comparisons.

    Args:
        tally: The wins of stratifying (:func:`win_tally`).

    Returns:
        The verdict (one of :data:`dpnotes.findings.verdict.VERDICTS`) and a note
        saying why.

    Raises:
        TypeError: If ``tally`` is not a :class:`WinTally`.

    Examples:
        >>> claim_verdict(WinTally(1, 6, 1, 1, clear_wins=0, clear_losses=4))
        ('differs', 'worse beyond doubt in 4 of 6 comparisons')
        >>> claim_verdict(WinTally(5, 6, 0, 0, clear_wins=2, clear_losses=0))[0]
        'inconclusive'
    """
    if not isinstance(tally, WinTally):
        raise TypeError(f"tally must be a WinTally, got {type(tally).__name__}.")
    n = tally.total
    if n == 0:
        return "not comparable", "no comparison computed yet"
    if 2 * tally.clear_wins > n:
        return "reproduces", f"better beyond doubt in {tally.clear_wins} of {n}"
    if 2 * (n - tally.clear_losses) <= n:
        return (
            "differs",
            f"worse beyond doubt in {tally.clear_losses} of {n} comparisons",
        )
    return (
        "inconclusive",
        f"{tally.undecided} of {n} comparisons are within our seeds' uncertainty: "
        "they could make it either way",
    )


def claim_table(claims: Mapping[str, WinTally]) -> pd.DataFrame:
    """Tabulate the paper's claims that stratifying does better against our wins.

    Args:
        claims: From each claim, as the paper makes it (with its figure), to the wins
            of stratifying in our comparisons that test it (:func:`win_tally`).

    Returns:
        One row per claim, with the columns ``the paper``, ``ours: stratified better``
        (the raw count of better means, ``"5 of 54"``), ``beyond doubt: better /
        worse`` (the counts whose interval excludes zero), ``verdict`` and ``note``
        (:func:`claim_verdict`).

    Raises:
        TypeError: If ``claims`` is not a mapping or a value is not a WinTally.
        ValueError: If there are no claims.

    Examples:
        >>> t = claim_table({"Figure 5: lower error": WinTally(5, 6, 0, 0, 4, 0)})
        >>> list(t.to_dict("records")[0].values())[:4]
        ['Figure 5: lower error', '5 of 6', '4 / 0', 'reproduces']
    """
    if not isinstance(claims, Mapping):
        raise TypeError(
            f"claims must be a mapping of claims to WinTally, got "
            f"{type(claims).__name__}."
        )
    if not claims:
        raise ValueError("no claims: give at least one claim and its tally.")
    rows = []
    for claim, tally in claims.items():
        verdict, note = claim_verdict(tally)
        rows.append(
            {
                "the paper": claim,
                "ours: stratified better": str(tally),
                "beyond doubt: better / worse": (
                    f"{tally.clear_wins} / {tally.clear_losses}"
                ),
                "verdict": verdict,
                "note": note,
            }
        )
    return pd.DataFrame(rows)


# ----------------------------------------------------------------- the stored tables

#: The columns of the strat_synth results table.
TABLE_COLUMNS = (
    "dataset",
    "synthesizer",
    "strata",
    "epsilon",
    "seed",
    "metric",
    "grouping",
    "group",
    "value",
)
#: The columns of the synth_group_sizes results table.
SIZE_COLUMNS = ("dataset", "grouping", "group", "split", "count")
#: The synthesizers, in the book's order.
SYNTHESIZERS = ("MST", "AIM", "GEM")
#: The groupings a synthesizer can be stratified by, in the book's order.
GROUPINGS = ("SEX", "RAC1P", "SEX_RAC1P")
_CELL = ["dataset", "synthesizer", "strata", "epsilon", "seed"]


def _need(frame: object, columns: Iterable[str], what: str) -> pd.DataFrame:
    """Check that ``frame`` is a DataFrame with ``columns``; name the missing ones."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(
            f"{what} must be a pandas DataFrame, got {type(frame).__name__}."
        )
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} lacks the columns {missing}.")
    return frame


def _rows(
    tab: pd.DataFrame,
    metric: str,
    grouping: str,
    *,
    group: str = "all",
    dataset: str | None = None,
) -> pd.DataFrame:
    """The rows of one metric, grouping and group (and data set); never none."""
    _need(tab, TABLE_COLUMNS, "tab")
    keep = (tab.metric == metric) & (tab.grouping == grouping) & (tab.group == group)
    if dataset is not None:
        keep &= tab.dataset == dataset
    rows = tab[keep]
    if rows.empty:
        where = f" on {dataset!r}" if dataset is not None else ""
        raise ValueError(
            f"tab has no rows of metric {metric!r}, grouping {grouping!r} and group "
            f"{group!r}{where}; is it the strat_synth table of a run that computed it?"
        )
    return rows


def seed_lists(tab: pd.DataFrame) -> dict[str, list[int]]:
    """List each data set's seeds, checking that every seed is complete.

    Args:
        tab: The strat_synth table (as ``load_per_dataset`` gives it: complete seeds).

    Returns:
        From each data set, in order of appearance, to its sorted seeds.

    Raises:
        ValueError: If a column is missing, the table is empty, or a seed of a data
            set lacks cells (synthesizer, stratification, ε) another seed has: a
            partial result, whose means would mix seeds.

    Examples:
        >>> rows = pd.DataFrame({"dataset": "NY", "synthesizer": "MST",
        ...     "strata": "vanilla", "epsilon": 1.0, "seed": [1, 0]})
        >>> seed_lists(rows)
        {'NY': [0, 1]}
    """
    _need(tab, _CELL, "tab")
    if tab.empty:
        raise ValueError("tab is empty: no seed computed.")
    done = tab.drop_duplicates(_CELL)
    out = {}
    for d in pd.unique(done.dataset):
        part = done[done.dataset == d]
        cells = part.groupby("seed").size()
        short = sorted(int(s) for s in cells.index[cells < cells.max()])
        if short:
            raise ValueError(
                f"seeds {short} of {d!r} lack cells the others have (a partial run); "
                "keep complete seeds only (load_per_dataset does)."
            )
        out[str(d)] = sorted(int(x) for x in part.seed.unique())
    return out


def curve(
    tab: pd.DataFrame,
    metric: str,
    *,
    dataset: str,
    grouping: str = "overall",
    group: str = "all",
) -> pd.DataFrame:
    """Average a metric over seeds, per synthesizer, stratification and ε.

    Args:
        tab: The strat_synth table.
        metric: The metric (``"mean_parity_error"``).
        dataset: The data set.
        grouping: The grouping the metric is computed over.
        group: The group (``"all"``: over the grouping as a whole).

    Returns:
        A DataFrame indexed by (synthesizer, strata, epsilon) with the columns
        ``mean``, ``std`` (over seeds; NaN with one) and ``count`` (seeds).

    Raises:
        ValueError: If a column is missing or nothing matches.
    """
    rows = _rows(tab, metric, grouping, group=group, dataset=dataset)
    return rows.groupby(["synthesizer", "strata", "epsilon"])["value"].agg(
        ["mean", "std", "count"]
    )


def compare_metric(
    tab: pd.DataFrame,
    metric: str,
    grouping: str,
    *,
    strata: str | None = None,
    dataset: str | None = None,
    lower: bool = True,
    target: float | None = None,
) -> pd.DataFrame:
    """Compare stratified with unstratified synthesis on one metric of the table.

    Args:
        tab: The strat_synth table.
        metric: The metric compared.
        grouping: The grouping the metric is computed over (``"overall"``, or the
            groups of a parity error).
        strata: The stratification compared with none (default: ``grouping``).
        dataset: One data set, or None for every data set of ``tab``.
        lower: Whether lower is better (else higher); ignored with ``target``.
        target: A real-data value: closer to it is better.

    Returns:
        :func:`compare_strata`'s frame.

    Raises:
        ValueError: If a column is missing or nothing matches.
    """
    rows = _rows(tab, metric, grouping, dataset=dataset)
    return compare_strata(rows, strata or grouping, lower=lower, target=target)


def at_epsilon(compared: pd.DataFrame, epsilon: float = 1.0) -> pd.DataFrame:
    """Keep the comparisons at one ε (none if it is not computed)."""
    e = _real(epsilon, "epsilon")
    return compared[compared.index.get_level_values("epsilon") == e]


def largest_gap(compared: pd.DataFrame, *, epsilon: float = 1.0) -> float:
    """Return the largest absolute gap of the stratified and unstratified means.

    Raises:
        ValueError: If no comparison is at ``epsilon``.
    """
    at = at_epsilon(compared, epsilon)
    if at.empty:
        raise ValueError(f"no comparison at ε = {epsilon:g}.")
    return float((at.strat - at.vanilla).abs().max())


def ratio_range(compared: pd.DataFrame, *, epsilon: float = 1.0) -> tuple[float, float]:
    """Return the least and largest stratified / unstratified mean at ``epsilon``.

    Raises:
        ValueError: If no comparison is at ``epsilon``.
    """
    at = at_epsilon(compared, epsilon)
    if at.empty:
        raise ValueError(f"no comparison at ε = {epsilon:g}.")
    r = at.strat / at.vanilla
    return float(r.min()), float(r.max())


# ------------------------------------------------------------- real-data references


def real_value(
    real: pd.DataFrame, metric: str, *, grouping: str = "overall", group: str = "all"
) -> float:
    """Pick one value of an evaluation of the real data.

    Args:
        real: :func:`dpnotes.synth.evaluate.evaluate_synthetic`'s table for the real
            training split evaluated as if it were synthetic.
        metric, grouping, group: The value's keys.

    Returns:
        The value.

    Raises:
        ValueError: If a column is missing or no row (or more than one) matches.
    """
    _need(real, ("metric", "grouping", "group", "value"), "real")
    hit = real[
        (real.metric == metric) & (real.grouping == grouping) & (real.group == group)
    ]
    if len(hit) != 1:
        raise ValueError(
            f"real has {len(hit)} rows of metric {metric!r}, grouping {grouping!r} and "
            f"group {group!r}; expected one."
        )
    return float(hit.value.iloc[0])


def majority_rate(labels: pd.Series) -> float:
    """Return the accuracy of always predicting the majority class of 0/1 labels.

    Raises:
        ValueError: Without labels.

    Examples:
        >>> majority_rate(pd.Series([1, 0, 1, 1]))
        0.75
    """
    if len(labels) == 0:
        raise ValueError("no labels: the majority rate needs at least one.")
    rate = float(pd.Series(labels).mean())
    return max(rate, 1.0 - rate)


# ---------------------------------------------------------------------- group sizes


def group_name(
    grouping: str, code: object, *, labels: Mapping[str, list[str]] | None = None
) -> str:
    """Name a group of a grouping from its code (``"0-5"`` → ``"male × Asian"``).

    Args:
        grouping: ``"SEX"``, ``"RAC1P"`` or ``"SEX_RAC1P"``.
        code: The group's code as the tables store it: one integer, or two joined by
            ``-`` for sex × race.
        labels: The codes' labels (default
            :func:`~dpnotes.data.employment.employment_labels`).

    Returns:
        The group's name.

    Raises:
        ValueError: If the code does not fit the grouping.

    Examples:
        >>> group_name("SEX_RAC1P", "1-5")
        'female × Asian'
    """
    labels = employment_labels() if labels is None else labels
    parts = [int(c) for c in str(code).split("-")]
    attrs = ["SEX", "RAC1P"] if grouping == "SEX_RAC1P" else [grouping]
    if len(parts) != len(attrs) or any(
        not 0 <= c < len(labels[a]) for a, c in zip(attrs, parts, strict=True)
    ):
        raise ValueError(f"code {code!r} is not a group of {grouping!r}.")
    return " × ".join(labels[a][c] for a, c in zip(attrs, parts, strict=True))


def _sizes(sizes: pd.DataFrame) -> pd.DataFrame:
    return _need(sizes, SIZE_COLUMNS, "sizes")


def group_size_table(
    sizes: pd.DataFrame, *, datasets: Iterable[str] = tuple(ACS_DATASETS)
) -> pd.DataFrame:
    """Tabulate the sex and race groups' sizes per data set and split (Table 3).

    Args:
        sizes: The synth_group_sizes table.
        datasets: The data sets, in the order shown (those absent are skipped).

    Returns:
        One row per grouping and group (named), one column per data set and split
        (``"New York sample, train"``), counts with thousands separators.

    Raises:
        ValueError: If a column is missing.
    """
    st = _sizes(sizes)
    gsize = st[st.grouping != "SEX_RAC1P"].copy()
    gsize["group"] = [
        group_name(g, c) for g, c in zip(gsize.grouping, gsize.group, strict=True)
    ]
    wide = gsize.pivot_table(
        index=["grouping", "group"],
        columns=["dataset", "split"],
        values="count",
        sort=False,
    )
    wide = wide.reindex(
        columns=[
            (d, s)
            for d in datasets
            for s in ("train", "test")
            if (d, s) in wide.columns
        ]
    )
    wide.columns = [f"{ACS_SHORT[d]}, {s}" for d, s in wide.columns]
    return wide.map("{:,.0f}".format).reset_index()


def small_groups(
    sizes: pd.DataFrame,
    *,
    dataset: str,
    grouping: str,
    split: str = "train",
    below: int = 20,
) -> tuple[int, int]:
    """Count the groups of a grouping with fewer than ``below`` records in a split.

    Returns:
        The number of such groups and the number of groups.

    Raises:
        ValueError: If a column is missing or nothing matches.

    Examples:
        >>> sizes = pd.DataFrame({"dataset": "NY", "grouping": "SEX",
        ...     "group": ["0", "1"], "split": "test", "count": [5, 50]})
        >>> small_groups(sizes, dataset="NY", grouping="SEX", split="test")
        (1, 2)
    """
    st = _sizes(sizes)
    part = st[(st.dataset == dataset) & (st.grouping == grouping) & (st.split == split)]
    if part.empty:
        raise ValueError(f"sizes has no {split} rows of {grouping!r} on {dataset!r}.")
    return int((part["count"] < below).sum()), len(part)


# ------------------------------------------------- groups without test records (Fig. 5)


def absent_groups(train: pd.DataFrame, test: pd.DataFrame, grouping: str) -> list[int]:
    """List the groups (flat codes) with training records but none in the test split.

    Such a group has public weight 0, so the strata of its grouping release none of
    its rows.

    Raises:
        ValueError: If ``grouping`` is not one of the book's groupings.
    """
    if grouping not in EMPLOYMENT_GROUPINGS:
        raise ValueError(f"unknown grouping {grouping!r}; use one of {GROUPINGS}.")
    by = EMPLOYMENT_GROUPINGS[grouping]
    shape = tuple(EMPLOYMENT_DOMAIN[a] for a in by)
    rk, tk = group_keys(train, by), group_keys(test, by)
    return [
        i for i in range(int(np.prod(shape))) if np.any(rk == i) and not np.any(tk == i)
    ]


def absent_term_bound(
    train: pd.DataFrame, grouping: str, absent: Iterable[int], workload_error: float
) -> float:
    """Bound the parity-error term of groups scored with the synthetic overall means.

    A group of public weight 0 is scored with the synthetic overall mean f(S): its
    term is the mean over the ten variables of ``|f(D_i) − f(S)| / |f(D_i)|``. f(S) is
    not stored, so the term is bounded through the overall workload error W (the
    mean ℓ1 error of the 120 3-way marginals): a variable's 1-way ℓ1 error is at
    most that of each of the 36 3-way marginals holding it, so at most 120/36 W (and
    2); a mean of codes 1..d then moves by at most (d − 1)/2 times that error (and
    stays in [1, d]).

    Args:
        train: The real training split.
        grouping: The grouping of the groups.
        absent: Their flat codes (:func:`absent_groups`).
        workload_error: W of the run; 0 gives the term at the real overall means.

    Returns:
        The bound on the groups' term.
    """
    w = _real(workload_error, "workload_error")
    rk = group_keys(train, EMPLOYMENT_GROUPINGS[grouping])
    workload = all_kway(EMPLOYMENT_DOMAIN, 3)
    absent = list(absent)
    total = 0.0
    for a, size in EMPLOYMENT_DOMAIN.items():
        codes = train[a].to_numpy() + 1.0
        share = sum(a in q for q in workload)
        move = (size - 1) / 2 * min(2.0, len(workload) * w / share)
        for i in absent:
            fi = codes[rk == i].mean()
            total += min(abs(fi - codes.mean()) + move, max(fi - 1, size - fi)) / fi
    return total / len(EMPLOYMENT_DOMAIN)


@dataclass(frozen=True)
class AbsentCheck:
    """Could groups without test records have turned parity comparisons?

    Attributes:
        table: One row per data set and grouping with such groups (the chapter's
            table); no rows when there are none.
        above: Comparisons where stratifying raised the parity error by more than
            the bound on those groups' term.
        flips: Comparisons the term could turn in favour of stratifying (a rise
            within the bound).
        total: Comparisons of the groupings that have such groups.
        datasets: The data sets that have such groups.
    """

    table: pd.DataFrame
    above: int
    flips: int
    total: int
    datasets: tuple[str, ...]


def absent_check(
    tab: pd.DataFrame,
    splits: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]],
    *,
    groupings: Iterable[str] = ("RAC1P", "SEX_RAC1P"),
) -> AbsentCheck:
    """Bound what groups without test records do to the parity comparisons.

    Args:
        tab: The strat_synth table.
        splits: From each data set, in order, to its real (training, test) splits.
        groupings: The groupings checked.

    Returns:
        An :class:`AbsentCheck`.

    Raises:
        ValueError: If a column is missing or a data set with such groups has no
            parity error or workload error computed.
    """
    _need(tab, TABLE_COLUMNS, "tab")
    groupings = list(groupings)
    rows, parts, where = [], [], []
    for d, (train, test) in splits.items():
        for grouping in groupings:
            absent = absent_groups(train, test, grouping)
            if not absent:
                continue
            by = EMPLOYMENT_GROUPINGS[grouping]
            shape = tuple(EMPLOYMENT_DOMAIN[a] for a in by)
            rk = group_keys(train, by)
            codes = ["-".join(map(str, np.unravel_index(i, shape))) for i in absent]
            names = [
                f"{group_name(grouping, code)} ({int((rk == i).sum())})"
                for code, i in zip(codes, absent, strict=True)
            ]
            runs = _rows(tab, "workload_error", "overall", dataset=d)
            runs = runs[runs.strata == grouping]
            bound = (
                runs.assign(
                    b=runs.value.map(
                        lambda w, t=train, g=grouping, a=absent: absent_term_bound(
                            t, g, a, w
                        )
                    )
                )
                .groupby(["synthesizer", "epsilon"])
                .b.mean()
            )
            c = compare_metric(tab, "mean_parity_error", grouping, dataset=d)
            c = c.droplevel("dataset")
            diff = c.strat - c.vanilla
            b = bound.reindex(c.index)
            parts.append(pd.DataFrame({"diff": diff, "bound": b}))
            if d not in where:
                where.append(d)
            rows.append(
                {
                    "data": ACS_SHORT.get(d, d),
                    "strata": STRATA_LABEL[grouping],
                    "groups without test records (training records)": "; ".join(names),
                    "term at the real overall means": fmt(
                        absent_term_bound(train, grouping, absent, 0.0)
                    ),
                    "bound on the term": f"{fmt(b.min())} to {fmt(b.max())}",
                    "smallest rise by stratifying": fmt(diff.min()),
                    "rises above the bound": f"{int((diff > b).sum())} of {len(c)}",
                }
            )
    if not parts:
        return AbsentCheck(pd.DataFrame(rows), 0, 0, 0, ())
    ab = pd.concat(parts)
    return AbsentCheck(
        table=pd.DataFrame(rows),
        above=int((ab["diff"] > ab.bound).sum()),
        flips=int(((ab["diff"] > 0) & (ab["diff"] <= ab.bound)).sum()),
        total=len(ab),
        datasets=tuple(where),
    )


# ---------------------------------------- the authors' parity convention (Fig. 5, 7a)

#: The parity conventions, each name to its metrics (parity error, largest error).
CONVENTIONS = {
    "ours": ("mean_parity_error", "max_mean_error"),
    "authors": ("mean_parity_error_authors", "max_mean_error_authors"),
}


def whole_blocks(
    ct: pd.DataFrame,
    *,
    stratifications: Iterable[str],
    epsilons: Iterable[float],
    seeds: Iterable[int],
) -> tuple[pd.DataFrame, pd.Series]:
    """Keep the whole blocks of a partial run: no mean over seeds another lacks.

    A block is a data set and synthesizer; a seed of it is whole when every
    stratification and ε of the profile is computed, and a block counts when at
    least two seeds are whole (one, for a one-seed profile).

    Args:
        ct: The run's table (strat_synth, perhaps partial).
        stratifications, epsilons, seeds: The profile's settings (its config).

    Returns:
        The rows of the whole seeds of the counted blocks, and per (synthesizer,
        dataset) the number of cells computed outside them (pending).

    Raises:
        ValueError: If a column is missing or no seed is configured.
    """
    _need(ct, TABLE_COLUMNS, "ct")
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds is empty: pass the profile's seeds.")
    n_cells = len(list(stratifications)) * len(list(epsilons))
    per_seed = (
        ct.drop_duplicates(_CELL).groupby(["dataset", "synthesizer", "seed"]).size()
        == n_cells
    )
    whole = per_seed[per_seed].reset_index()[["dataset", "synthesizer", "seed"]]
    n_whole = whole.groupby(["dataset", "synthesizer"]).seed.transform("size")
    whole = whole[n_whole >= min(2, len(seeds))]
    pending = (
        ct.drop_duplicates(_CELL)
        .merge(whole, how="left", indicator=True)
        .query("_merge == 'left_only'")
        .groupby(["synthesizer", "dataset"])
        .size()
    )
    return ct.merge(whole, on=["dataset", "synthesizer", "seed"]), pending


def convention_comparisons(
    ct: pd.DataFrame, groupings: Iterable[str]
) -> dict[str, dict[str, pd.DataFrame]]:
    """Compare each stratification with none under both parity conventions.

    Returns:
        From ``"ours"`` and ``"authors"`` to a dict from grouping to
        :func:`compare_strata`'s frame (every data set), lower is better.
    """
    groupings = list(groupings)
    return {
        name: {g: compare_metric(ct, metric, g) for g in groupings}
        for name, (metric, _) in CONVENTIONS.items()
    }


@dataclass(frozen=True)
class ConventionTally:
    """Stratifying's wins on the same synthetic tables, scored both ways.

    Attributes:
        table: Per synthesizer, data set and grouping, then per synthesizer and in
            all, the wins under ``"our convention"`` and ``"authors' convention"``.
        by_synth: From each synthesizer to the data sets it covers and its tallies
            under both conventions.
        total: Both conventions' tallies over everything.
    """

    table: pd.DataFrame
    by_synth: dict[str, tuple[list[str], dict[str, WinTally]]]
    total: dict[str, WinTally]


def convention_tally(
    conv_c: Mapping[str, Mapping[str, pd.DataFrame]],
    *,
    datasets: Iterable[str],
    synthesizers: Iterable[str],
) -> ConventionTally:
    """Tally :func:`convention_comparisons` per synthesizer, data set and grouping.

    Args:
        conv_c: :func:`convention_comparisons`'s result.
        datasets, synthesizers: Those computed, in the order shown.

    Returns:
        A :class:`ConventionTally`.

    Raises:
        ValueError: If a convention is missing.
    """
    if set(conv_c) != set(CONVENTIONS):
        raise ValueError(f"conv_c must have the conventions {sorted(CONVENTIONS)}.")
    datasets, synthesizers = list(datasets), list(synthesizers)
    rows, by_synth = [], {}
    for syn in synthesizers:
        syn_data = [
            d
            for d in datasets
            if any(
                (d, syn)
                in zip(
                    c.index.get_level_values("dataset"),
                    c.index.get_level_values("synthesizer"),
                    strict=True,
                )
                for c in conv_c["ours"].values()
            )
        ]
        for d in syn_data:
            for g in conv_c["ours"]:
                row = {
                    "synthesizer": syn,
                    "data set": ACS_SHORT.get(d, d),
                    "grouping": STRATA_LABEL[g],
                }
                for name, label in [
                    ("ours", "our convention"),
                    ("authors", "authors' convention"),
                ]:
                    c = conv_c[name][g].xs(
                        (d, syn), level=("dataset", "synthesizer"), drop_level=False
                    )
                    row[label] = str(win_tally(c))
                rows.append(row)
        tallies = {
            name: win_tally(
                pd.concat(c.values()).xs(syn, level="synthesizer", drop_level=False)
            )
            for name, c in conv_c.items()
        }
        by_synth[syn] = (syn_data, tallies)
        rows.append(
            {
                "synthesizer": syn,
                "data set": "all",
                "grouping": "",
                "our convention": str(tallies["ours"]),
                "authors' convention": str(tallies["authors"]),
            }
        )
    total = {name: win_tally(pd.concat(c.values())) for name, c in conv_c.items()}
    if len(synthesizers) > 1:
        rows.append(
            {
                "synthesizer": "all",
                "data set": "",
                "grouping": "",
                "our convention": str(total["ours"]),
                "authors' convention": str(total["authors"]),
            }
        )
    return ConventionTally(pd.DataFrame(rows), by_synth, {k: total[k] for k in conv_c})


@dataclass(frozen=True)
class RefitCheck:
    """Are a derived run's synthetic tables those of the stored run?

    Attributes:
        rows: Rows of our convention's parity error found in both runs.
        conv_rows: Rows of it in the derived run.
        cell_same: Per cell (data set, synthesizer, strata, ε, seed), whether every
            such row is equal.
        gem_gap: GEM's median absolute difference, derived − stored, over those rows
            (NaN without GEM).
        seed_gap: For scale, the median absolute difference between the first two
            seeds of the stored GEM runs on the same data sets.
    """

    rows: int
    conv_rows: int
    cell_same: pd.Series
    gem_gap: float
    seed_gap: float

    @property
    def gem_same(self) -> pd.Series:
        """The GEM cells of :attr:`cell_same`."""
        is_gem = self.cell_same.index.get_level_values("synthesizer") == "GEM"
        return self.cell_same[is_gem]

    @property
    def others_same(self) -> bool:
        """Whether every cell of another synthesizer is equal."""
        is_gem = self.cell_same.index.get_level_values("synthesizer") == "GEM"
        return bool(self.cell_same[~is_gem].all())


def refit_check(
    ct: pd.DataFrame, tab: pd.DataFrame, *, seeds: Iterable[int]
) -> RefitCheck:
    """Compare a derived run's rows under our convention with the stored run's.

    Args:
        ct: The derived run's table (whole blocks).
        tab: The stored strat_synth table.
        seeds: The derived run's seeds; the first two give the seed-to-seed scale.

    Returns:
        A :class:`RefitCheck`.

    Raises:
        ValueError: If a column is missing or fewer than one seed is given.
    """
    _need(ct, TABLE_COLUMNS, "ct")
    _need(tab, TABLE_COLUMNS, "tab")
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds is empty.")
    same_cells = ct.merge(
        tab, on=[*_CELL, "metric", "grouping", "group"], suffixes=("", "_stored")
    )
    same_cells = same_cells[same_cells.metric == "mean_parity_error"]
    cell_same = (
        same_cells.assign(same=same_cells.value == same_cells.value_stored)
        .groupby(_CELL)
        .same.all()
    )
    gem_rows = same_cells[same_cells.synthesizer == "GEM"]
    gem_gap = (gem_rows.value - gem_rows.value_stored).abs().median()
    gem_fig = tab[
        (tab.synthesizer == "GEM")
        & (tab.metric == "mean_parity_error")
        & tab.dataset.isin(gem_rows.dataset.unique())
        & tab.seed.isin(seeds[:2])
    ]
    by_seed = gem_fig.pivot_table(
        index=["dataset", "strata", "epsilon", "grouping", "group"],
        columns="seed",
        values="value",
    )
    seed_gap = (
        (by_seed.iloc[:, 0] - by_seed.iloc[:, -1]).abs().median()
        if by_seed.shape[1]
        else math.nan
    )
    return RefitCheck(
        rows=len(same_cells),
        conv_rows=int((ct.metric == "mean_parity_error").sum()),
        cell_same=cell_same,
        gem_gap=float(gem_gap),
        seed_gap=float(seed_gap),
    )


def convention_flips(
    conv_c: Mapping[str, Mapping[str, pd.DataFrame]], *, top_epsilon: float
) -> tuple[pd.DataFrame, int, WinTally]:
    """Find the race comparisons the authors' convention turns in stratifying's favour.

    Args:
        conv_c: :func:`convention_comparisons`'s result.
        top_epsilon: The largest ε.

    Returns:
        The comparisons (race and sex × race strata) stratifying wins under the
        authors' convention but not under ours, how many of them are at
        ``top_epsilon``, and our convention's tally of the race comparisons.

    Raises:
        ValueError: If no race grouping is compared.
    """
    race = {name: [c[g] for g in c if g != "SEX"] for name, c in conv_c.items()}
    if not race["ours"]:
        raise ValueError("no race or sex × race comparison in conv_c.")
    race_c = {name: pd.concat(frames) for name, frames in race.items()}
    flips = race_c["authors"].better.to_numpy() & ~race_c["ours"].better.to_numpy()
    wins = race_c["authors"][flips]
    top = int((wins.index.get_level_values("epsilon") == top_epsilon).sum())
    return wins, top, win_tally(race_c["ours"])


def convention_maxima(ct: pd.DataFrame) -> dict[str, float]:
    """The largest parity error of a run under each convention (how erratic it is).

    Returns:
        From ``"ours"`` and ``"authors"`` to the largest value of the parity error
        scored that way, over every row.

    Raises:
        ValueError: If a column or a convention's metric is missing.
    """
    _need(ct, TABLE_COLUMNS, "ct")
    out = {}
    for name, (metric, _) in CONVENTIONS.items():
        values = ct.value[ct.metric == metric]
        if values.empty:
            raise ValueError(f"ct has no {metric!r} rows.")
        out[name] = float(values.max())
    return out


def remaining_fit_hours(
    tab: pd.DataFrame,
    todo: Iterable[tuple[str, str]],
    *,
    seeds: Iterable[int],
) -> float:
    """Estimate the hours of fitting left, from the stored runs' fit times.

    Args:
        tab: The stored strat_synth table (with its ``fit_seconds`` rows).
        todo: The (synthesizer, data set) blocks left to run.
        seeds: The seeds they are to run.

    Returns:
        The stored fit seconds of those blocks and seeds, in hours.
    """
    _need(tab, TABLE_COLUMNS, "tab")
    todo = list(todo)
    fits = tab[(tab.metric == "fit_seconds") & tab.seed.isin(list(seeds))]
    if not todo:
        return 0.0
    keys = pd.MultiIndex.from_frame(fits[["synthesizer", "dataset"]])
    return float(fits[keys.isin(todo)].value.sum() / 3600)


@dataclass(frozen=True)
class LargestError:
    """The paper's Figure 7a quantity: sex × race strata and none, both conventions.

    Attributes:
        table: One row per data set, synthesizer, convention and strata, one
            column per ε (:func:`~dpnotes.report.fmt`).
        curves: From (data set, synthesizer, convention, strata) to the means per ε;
            the convention is ``"ours"`` or ``"authors'"``.
    """

    table: pd.DataFrame
    curves: dict[tuple[str, str, str, str], pd.Series]

    @property
    def stratified(self) -> dict[tuple[str, str, str], pd.Series]:
        """The sex × race strata's curves, keyed (data set, synthesizer, convention)."""
        return {k[:3]: v for k, v in self.curves.items() if k[3] == "SEX_RAC1P"}

    @property
    def rises(self) -> dict[tuple[str, str, str], int]:
        """Per block, the steps of ε where the authors'-way error does not fall."""
        return {
            k: int((np.diff(v.to_numpy()) >= 0).sum())
            for k, v in self.stratified.items()
            if k[2] == "authors'"
        }

    @property
    def steps(self) -> int:
        """The most steps of ε in a block."""
        return max(len(v) - 1 for v in self.stratified.values())

    @property
    def factors(self) -> dict[tuple[str, str, str], float]:
        """Per block, the error at the smallest ε over that at the largest."""
        return {k: float(v.iloc[0] / v.iloc[-1]) for k, v in self.stratified.items()}

    @property
    def gradual(self) -> bool:
        """Whether every authors'-way block falls overall and rises at most once."""
        f = self.factors
        return all(f[k] > 1 and n <= 1 for k, n in self.rises.items())

    @property
    def stratified_above(self) -> bool:
        """Whether the strata's error is above the unstratified one at every ε."""
        return all(
            (
                self.curves[(d, s, c, "SEX_RAC1P")] > self.curves[(d, s, c, "vanilla")]
            ).all()
            for d, s, c in self.stratified
        )


def largest_error(ct: pd.DataFrame) -> LargestError:
    """Tabulate the largest relative error of a group's mean (the paper's Figure 7a).

    Args:
        ct: The derived run's table (whole blocks), with the ``max_mean_error`` and
            ``max_mean_error_authors`` metrics over the sex × race groups.

    Returns:
        A :class:`LargestError`.

    Raises:
        ValueError: If a column or a metric is missing.
    """
    rows, curves = [], {}
    for conv_name, (_, metric) in [
        ("ours", CONVENTIONS["ours"]),
        ("authors'", CONVENTIONS["authors"]),
    ]:
        sel = _rows(ct, metric, "SEX_RAC1P")
        m = sel.groupby(["dataset", "synthesizer", "strata", "epsilon"]).value.mean()
        for (d, syn, strata), per_eps in m.groupby(level=[0, 1, 2]):
            if strata not in ("vanilla", "SEX_RAC1P"):
                continue
            per_eps = per_eps.droplevel([0, 1, 2])
            curves[(d, syn, conv_name, strata)] = per_eps
            row = {
                "data set": ACS_SHORT.get(d, d),
                "synthesizer": syn,
                "convention": conv_name,
                "strata": STRATA_LABEL[strata],
            }
            row |= {f"ε = {e:g}": fmt(v) for e, v in per_eps.items()}
            rows.append(row)
    return LargestError(pd.DataFrame(rows), curves)


# ---------------------------------------------------- why stratifying can raise errors


def race_ratios(
    tab: pd.DataFrame, sizes: pd.DataFrame, *, epsilon: float = 1.0
) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """Per race group, the workload error inside it with race strata over none.

    Args:
        tab: The strat_synth table (workload error per race group).
        sizes: The synth_group_sizes table.
        epsilon: The ε compared; the largest computed one when it is not computed.

    Returns:
        One row per data set, synthesizer and race group with test records, with the
        means over seeds ``vanilla`` and ``RAC1P``, the group's ``train`` and ``test``
        counts, and ``ratio`` (race strata over none); then the groups left out, as
        they have no test records (public weight 0: race strata release none of
        their rows), one row per data set and group; and the ε compared.

    Raises:
        ValueError: If a column is missing or no workload error per race group is
            computed.
    """
    wl = _need(tab, TABLE_COLUMNS, "tab")
    st = _sizes(sizes)
    wl = wl[
        (wl.metric == "workload_error")
        & (wl.grouping == "RAC1P")
        & wl.strata.isin(["vanilla", "RAC1P"])
    ]
    if wl.empty:
        raise ValueError("tab has no workload error per race group.")
    e = _real(epsilon, "epsilon")
    eps_r = e if e in set(wl.epsilon) else float(wl.epsilon.max())
    ratio = (
        wl[wl.epsilon == eps_r]
        .groupby(["dataset", "synthesizer", "group", "strata"])["value"]
        .mean()
        .unstack("strata")
        .reindex(columns=["vanilla", "RAC1P"])
        .reset_index()
    )
    n_race = (
        st[st.grouping == "RAC1P"]
        .pivot_table(index=["dataset", "group"], columns="split", values="count")
        .reset_index()
    )
    ratio = ratio.merge(n_race, on=["dataset", "group"]).dropna(
        subset=["vanilla", "RAC1P"]
    )
    unweighted = ratio[ratio["test"] == 0].drop_duplicates(["dataset", "group"])
    ratio = ratio[ratio["test"] > 0].copy()
    ratio["ratio"] = ratio["RAC1P"] / ratio["vanilla"]
    return ratio, unweighted, eps_r


@dataclass(frozen=True)
class RatioSummary:
    """What race strata do to the race groups' workload error, by the group's size.

    Attributes:
        table: One row for the groups under ``small`` training records and one for
            the others (where there are any).
        small_raised: Small synthesizer–group pairs whose error race strata raise.
        small_total: Small pairs.
        large_raised: Larger pairs whose error race strata raise.
        large_total: Larger pairs.
        worst: The larger pair with the largest ratio (None without larger pairs).
        helped_min: The fewest training records of a group race strata help (NaN if
            none is helped).
        helped: Pairs whose error race strata lower.
        helped_of: Pairs of groups at least ``helped_min`` large.
        small_median: The small pairs' median ratio.
        helped_all_large: Whether some pair is helped and every helped pair's group
            has at least ``small`` training records.
    """

    table: pd.DataFrame
    small_raised: int
    small_total: int
    large_raised: int
    large_total: int
    worst: pd.Series | None
    helped_min: float
    helped: int
    helped_of: int
    small_median: float
    helped_all_large: bool


def ratio_summary(ratio: pd.DataFrame, *, small: int = 100) -> RatioSummary:
    """Sum up :func:`race_ratios` by the groups' training size.

    Raises:
        ValueError: If a column is missing.
    """
    _need(
        ratio,
        ("synthesizer", "dataset", "group", "train", "ratio", "RAC1P", "vanilla"),
        "ratio",
    )
    is_small = ratio["train"] < small
    rows = []
    for name, part in [
        (f"fewer than {small}", ratio[is_small]),
        (f"{small} or more", ratio[~is_small]),
    ]:
        if len(part):
            rows.append(
                {
                    "training records in the group": name,
                    "synthesizer–group pairs": len(part),
                    "race strata raise the error in": int((part["ratio"] > 1).sum()),
                    "median ratio": fmt(part["ratio"].median()),
                    "median error, race strata": fmt(part["RAC1P"].median()),
                    "median error, no strata": fmt(part["vanilla"].median()),
                }
            )
    ps, pl = ratio[is_small], ratio[~is_small]
    helped = ratio[ratio["ratio"] < 1]
    n_min = float(helped["train"].min()) if len(helped) else math.nan
    return RatioSummary(
        table=pd.DataFrame(rows),
        small_raised=int((ps["ratio"] > 1).sum()),
        small_total=len(ps),
        large_raised=int((pl["ratio"] > 1).sum()),
        large_total=len(pl),
        worst=pl.loc[pl["ratio"].idxmax()] if len(pl) else None,
        helped_min=n_min,
        helped=len(helped),
        helped_of=int((ratio["train"] >= n_min).sum()) if len(helped) else 0,
        small_median=float(ps["ratio"].median()) if len(ps) else math.nan,
        helped_all_large=bool(len(helped) and (helped["train"] >= small).all()),
    )


def group_shares(
    sizes: pd.DataFrame, *, dataset: str, grouping: str, split: str = "train"
) -> pd.Series:
    """Return each group's share of a split's records.

    Raises:
        ValueError: If a column is missing or nothing matches.
    """
    st = _sizes(sizes)
    part = st[(st.dataset == dataset) & (st.grouping == grouping) & (st.split == split)]
    if part.empty:
        raise ValueError(f"sizes has no {split} rows of {grouping!r} on {dataset!r}.")
    return (part["count"] / part["count"].sum()).set_axis(part.group.to_numpy())


def smallest_group(sizes: pd.DataFrame, *, grouping: str, split: str = "train") -> int:
    """Return the fewest records of a group of ``grouping`` in a split, any data set.

    Raises:
        ValueError: If a column is missing or nothing matches.
    """
    st = _sizes(sizes)
    part = st[(st.grouping == grouping) & (st.split == split)]
    if part.empty:
        raise ValueError(f"sizes has no {split} rows of {grouping!r}.")
    return int(part["count"].min())


def groups_below(
    sizes: pd.DataFrame,
    *,
    dataset: str,
    grouping: str,
    below: int,
    split: str = "train",
) -> list[tuple[str, int]]:
    """List the groups with fewer than ``below`` records, smallest first, named.

    Raises:
        ValueError: If a column is missing or nothing matches.
    """
    st = _sizes(sizes)
    part = st[(st.dataset == dataset) & (st.grouping == grouping) & (st.split == split)]
    if part.empty:
        raise ValueError(f"sizes has no {split} rows of {grouping!r} on {dataset!r}.")
    tiny = part[part["count"] < below].sort_values("count")
    return [
        (group_name(grouping, g), int(c))
        for g, c in zip(tiny.group, tiny["count"], strict=True)
    ]


def larger_groups(
    sizes: pd.DataFrame,
    *,
    dataset: str,
    than: str,
    grouping: str = "RAC1P",
    split: str = "train",
) -> list[str]:
    """Name the groups with more records in ``dataset`` than in ``than``.

    Raises:
        ValueError: If a column or a data set is missing.
    """
    st = _sizes(sizes)
    both = st[(st.grouping == grouping) & (st.split == split)].pivot_table(
        index="group", columns="dataset", values="count"
    )
    for d in (dataset, than):
        if d not in both.columns:
            raise ValueError(f"sizes has no {split} rows of {grouping!r} on {d!r}.")
    return [
        group_name(grouping, g)
        for g in both.index
        if both.loc[g, dataset] > both.loc[g, than]
    ]


def second_largest_group(
    sizes: pd.DataFrame, *, dataset: str, other: str, grouping: str = "RAC1P"
) -> tuple[str, float, float]:
    """Name a data set's second-largest group (training split), with both sizes.

    Returns:
        The group's name, its training records in ``dataset`` and in ``other``.

    Raises:
        ValueError: If a column or a data set is missing, or there are fewer than
            two groups.
    """
    st = _sizes(sizes)
    tr = st[(st.grouping == grouping) & (st.split == "train")].copy()
    tr["group"] = [group_name(grouping, c) for c in tr.group]
    race = tr.pivot_table(index="group", columns="dataset", values="count")
    for d in (dataset, other):
        if d not in race.columns:
            raise ValueError(f"sizes has no training rows of {grouping!r} on {d!r}.")
    order = race[dataset].sort_values(ascending=False)
    if len(order) < 2:
        raise ValueError(f"{dataset!r} has fewer than two groups of {grouping!r}.")
    second = order.index[1]
    return str(second), float(order.iloc[1]), float(race.loc[second, other])


# ------------------------------------------------------------- the paper beside ours


def own_grouping_comparisons(tab: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Compare each stratification with none by the parity error over its own groups.

    Returns:
        From each grouping computed (sex, race, sex × race) to :func:`compare_strata`'s
        frame over every data set (lower is better).

    Raises:
        ValueError: If a column is missing or no parity error is computed.
    """
    _need(tab, TABLE_COLUMNS, "tab")
    present = set(tab.grouping[tab.metric == "mean_parity_error"])
    if not present:
        raise ValueError("tab has no mean_parity_error rows.")
    return {
        g: compare_metric(tab, "mean_parity_error", g)
        for g in GROUPINGS
        if g in present
    }


def accuracy_gap(tab: pd.DataFrame, *, min_epsilon: float) -> float:
    """Return the largest absolute gap of mean logistic accuracy, stratified or not.

    Over every data set, synthesizer, stratification and ε ≥ ``min_epsilon``.

    Raises:
        ValueError: If a column is missing or nothing is computed there.
    """
    acc = _rows(tab, "logistic:accuracy", "overall")
    acc_m = (
        acc.groupby(["dataset", "synthesizer", "epsilon", "strata"])
        .value.mean()
        .unstack("strata")
    )
    acc_m = acc_m[acc_m.index.get_level_values("epsilon") >= min_epsilon]
    gaps = [
        (acc_m[c] - acc_m["vanilla"]).abs().max()
        for c in STRATA[1:]
        if c in acc_m.columns
    ]
    if acc_m.empty or "vanilla" not in acc_m.columns or not gaps:
        raise ValueError(f"no accuracy of both variants at ε ≥ {min_epsilon:g}.")
    return float(max(gaps))


def lowest_variants(
    tab: pd.DataFrame, *, dataset: str, grouping: str = "SEX_RAC1P"
) -> pd.DataFrame:
    """Per ε, the synthesizer and stratification with the lowest mean parity error.

    Raises:
        ValueError: If a column is missing or nothing matches.
    """
    pe = curve(tab, "mean_parity_error", dataset=dataset, grouping=grouping)
    pe = pe.reset_index()
    return pe.loc[pe.groupby("epsilon")["mean"].idxmin()]


def gem_reduction(
    tab: pd.DataFrame, *, dataset: str, min_epsilon: float = 0.05
) -> pd.Series:
    """GEM's parity error (sex × race) without strata over that with them, per ε.

    Raises:
        ValueError: If a column is missing or GEM is not computed.
    """
    c = compare_metric(tab, "mean_parity_error", "SEX_RAC1P", dataset=dataset)
    if "GEM" not in set(c.index.get_level_values("synthesizer")):
        raise ValueError(f"no GEM comparison on {dataset!r}.")
    c = c.xs("GEM", level="synthesizer")
    c = c[c.index.get_level_values("epsilon") >= min_epsilon]
    return c.vanilla / c.strat


def _tally_text(t: WinTally) -> str:
    return f"{t}; beyond doubt {t.clear_wins} better, {t.clear_losses} worse"


def _table3_fig4_checks(
    tab: pd.DataFrame, sizes: pd.DataFrame, *, real_accuracy: float
) -> list[PaperCheck]:
    """The rows of :func:`stratified_checks` on Table 3 and Figure 4."""
    pc, pa = paper_numbers.STRAT_CLAIMS, paper_numbers.STRAT_AUTHORS
    st = _sizes(sizes)
    checks = []
    t3 = paper_numbers.STRAT_TABLE3
    ny_train = st[
        (st.dataset == "NY-sample")
        & (st.split == "train")
        & (st.grouping == "SEX_RAC1P")
    ]
    checks.append(
        PaperCheck(
            "Table 3: New York's sex × race groups",
            f"{sum(t3.values()):,} records; smallest group {min(t3.values())}",
            f"NY sample: {int(ny_train['count'].sum()):,} training records; "
            f"{int((ny_train['count'] < 20).sum())} of 18 groups under 20",
            verdict="not comparable",
            note="a 20,000-row sample of ages 17–89, not the full file",
        )
    )
    checks.append(
        PaperCheck(
            "Figure 4: accuracy of a classifier trained on real data",
            pc["fig4-real"].values[0],
            _real(real_accuracy, "real_accuracy"),
            authors=f"{pa['fig4-real'].values[0]:g} (best synthetic variant; real not "
            "stored)",
            verdict="not comparable",
            decimals=3,
            note="logistic regression on ages 17–89 (the paper: all ages, random "
            "forest)",
        )
    )
    eps_min, gap_max = pc["fig4-gap"].values
    gap = accuracy_gap(tab, min_epsilon=eps_min)
    checks.append(
        PaperCheck(
            f"Figure 4: |stratified − unstratified| accuracy at ε ≥ {eps_min:g}",
            gap_max,
            gap,
            authors="MST, AIM, GEM: "
            + ", ".join(f"{v:g}" for v in pa["fig4-gap"].values),
            verdict="reproduces" if gap <= gap_max else "differs",
            decimals=4,
            note=f"at most {gap_max:g} as stated (logistic, both data sets)"
            if gap <= gap_max
            else "above the stated 2%",
        )
    )
    return checks


def _fig5_checks(
    tab: pd.DataFrame,
    *,
    dataset: str,
    convention: ConventionTally,
    conv_eps: list[float],
    conv_seeds: list[int],
) -> list[PaperCheck]:
    """The rows of :func:`stratified_checks` on Figure 5."""
    pc, pa = paper_numbers.STRAT_CLAIMS, paper_numbers.STRAT_AUTHORS
    conv_synths = list(convention.by_synth)
    own_wins = dict(zip(SYNTHESIZERS, pa["fig5-all"].values[1:], strict=True))
    a_all, _, a_aim, _ = pa["fig5-all"].values
    allc = pd.concat(own_grouping_comparisons(tab).values())
    tally = win_tally(allc)
    by_data = win_tally(allc, by="dataset")
    by_synth = win_tally(allc, by="synthesizer")
    checks = []
    verdict, why = claim_verdict(tally)
    per_data = "; ".join(f"{by_data[d]} on {ACS_SHORT.get(d, d)}" for d in by_data)
    checks.append(
        PaperCheck(
            "Figure 5: stratifying lowers the parity error over its own groups",
            pc["fig5-all"].claim,
            f"{tally} ({per_data}); "
            f"beyond doubt {tally.clear_wins} better, {tally.clear_losses} worse",
            authors=f"{a_all:g} of 54",
            verdict=verdict,
            note=why,
        )
    )
    for syn in SYNTHESIZERS:
        if syn in by_synth:
            v, w = claim_verdict(by_synth[syn])
            checks.append(
                PaperCheck(
                    f"Figure 5: the same, {syn}",
                    pc["fig5-all"].claim,
                    _tally_text(by_synth[syn]),
                    authors=f"{own_wins[syn]:g} of 18",
                    verdict=v,
                    note=w,
                )
            )
    best = lowest_variants(tab, dataset=dataset)
    gem_best = int((best.synthesizer == "GEM").sum())
    checks.append(
        PaperCheck(
            "Figure 5: GEM has the lowest parity error at nearly every ε",
            pc["fig5-gem-best"].claim,
            f"a GEM variant lowest (sex × race) at {gem_best} of {len(best)} ε, "
            f"{ACS_SHORT.get(dataset, dataset)}; "
            f"lowest: {', '.join(sorted(set(best.synthesizer)))}",
            authors="stratified GEM lowest at "
            f"{pa['fig5-gem-best'].values[0]:g} of 6 ε",
            verdict="reproduces" if 2 * gem_best > len(best) else "differs",
            note="our GEM is our own implementation; the authors' vanilla GEM barely "
            "improves with ε",
        )
    )
    gem_ratio = gem_reduction(tab, dataset=dataset)
    lo_a, hi_a = pa["fig5-reduction"].values
    checks.append(
        PaperCheck(
            "Figure 5: stratifying GEM divides its parity error (sex × race, ε ≥ 0.05)",
            "by 2 or more ('a reduction of ≥ 200%')",
            f"{gem_ratio.min():.2f} to {gem_ratio.max():.2f}",
            authors=f"{lo_a:g} to {hi_a:g}",
            verdict="differs"
            if gem_ratio.max() < pc["fig5-reduction"].values[0]
            else "reproduces",
            note="stratifying raises GEM's parity error here (a factor below 1)",
        )
    )
    aim_t = by_synth.get("AIM")
    checks.append(
        PaperCheck(
            "Figure 5: stratified AIM better at higher budgets",
            pc["fig5-aim"].claim,
            f"stratified AIM lower at {aim_t} comparisons",
            authors=f"{a_aim:g} of 18",
            verdict="differs"
            if aim_t is None or 2 * aim_t.wins < aim_t.total
            else "reproduces",
            note="unstratified AIM is lower at every budget here",
        )
    )
    conv_t = convention.total
    conv_verdict, conv_why = claim_verdict(conv_t["authors"])
    checks.append(
        PaperCheck(
            f"Figure 5 scored the authors' way: stratifying lowers the parity error "
            f"({', '.join(conv_synths)})",
            pc["fig5-all"].claim,
            f"{conv_t['authors']}, beyond doubt {conv_t['authors'].clear_wins} better, "
            f"{conv_t['authors'].clear_losses} worse "
            f"(our convention on the same tables: {conv_t['ours']})",
            authors=", ".join(f"{syn}: {own_wins[syn]:g} of 18" for syn in conv_synths),
            verdict=conv_verdict,
            note=conv_why + f"; {', '.join(conv_synths)}, "
            f"{len(conv_eps)} ε, {seeds_text(conv_seeds)}",
        )
    )
    return checks


def _fig7_fig9_checks(
    tab: pd.DataFrame,
    *,
    dataset: str,
    convention: ConventionTally,
    largest: LargestError,
    conv_seeds: list[int],
) -> list[PaperCheck]:
    """The rows of :func:`stratified_checks` on Figures 7 and 9 and the settings."""
    pc = paper_numbers.STRAT_CLAIMS
    conv_synths = list(convention.by_synth)
    seeds = seed_lists(tab)
    checks = []
    factors = ", ".join(
        f"{f:.0f} ({k[1]}, {ACS_SHORT.get(k[0], k[0])})"
        for k, f in largest.factors.items()
        if k[2] == "authors'"
    )
    rises = ", ".join(
        f"{n} ({k[1]}, {ACS_SHORT.get(k[0], k[0])})" for k, n in largest.rises.items()
    )
    checks.append(
        PaperCheck(
            "Figure 7a: the largest relative error of a group's mean falls with ε",
            pc["fig7a"].claim,
            f"sex × race strata, scored the authors' way: falls from the smallest to "
            f"the largest ε by a factor of {factors}, rising at {rises} of "
            f"{largest.steps} steps",
            verdict="reproduces" if largest.gradual else "differs",
            note=f"{', '.join(conv_synths)} only ({seeds_text(conv_seeds)}); "
            "'gradually' read as falling overall and rising at one step at most; "
            "scored our way it falls far less, and stratified stays above unstratified",
        )
    )
    for key, label, why7 in [
        (
            "fig7b",
            "Figure 7b: demographic parity",
            "the paper's is a ratio over sex × race groups; ours a difference "
            "over race groups",
        ),
        (
            "fig7c",
            "Figure 7c: the largest FNR difference",
            "a random forest over sex × race groups there; logistic over race groups "
            "here",
        ),
    ]:
        checks.append(
            PaperCheck(
                label,
                pc[key].claim,
                "Figures above",
                verdict="not comparable",
                note=why7,
            )
        )
    wl_pe = compare_metric(tab, "workload_parity_error", "RAC1P", dataset=dataset)
    wl_gem = win_tally(wl_pe.xs("GEM", level="synthesizer", drop_level=False))
    checks.append(
        PaperCheck(
            "Figure 9: stratified GEM has a low 3-way-marginal parity error",
            pc["fig9-gem"].claim,
            f"race strata lower GEM's at {wl_gem} ε",
            verdict=claim_verdict(wl_gem)[0],
            note=claim_verdict(wl_gem)[1]
            + "; the authors' repository has no Figure 9 numbers",
        )
    )
    wl_aim = wl_pe.xs("AIM", level="synthesizer")
    low = wl_aim[wl_aim.index.get_level_values("epsilon") < pc["fig9-aim"].values[0]]
    aim_low_wins = int(low.better.sum())
    checks.append(
        PaperCheck(
            "Figure 9: below ε = 1 unstratified AIM is much worse",
            pc["fig9-aim"].claim,
            f"race strata lower AIM's at {aim_low_wins} of {len(low)} ε below 1",
            verdict="differs" if 2 * aim_low_wins < len(low) else "reproduces",
            note="unstratified AIM has the lower workload parity error",
        )
    )
    grid = pc["synthesis-settings"].values[:-1]
    seeds_paper = pc["synthesis-settings"].values[-1]
    ours_grid = tuple(sorted(tab.epsilon.unique()))
    n_seed = min(len(v) for v in seeds.values())
    same = ours_grid == tuple(grid) and n_seed >= seeds_paper
    grid_text = ", ".join(f"{e:g}" for e in ours_grid)
    checks.append(
        PaperCheck(
            "Synthesis settings: ε grid and seeds",
            pc["synthesis-settings"].claim,
            f"ε in {{{grid_text}}}; {n_seed} or more seeds",
            verdict="reproduces" if same else "differs",
            note="" if same else "another grid",
        )
    )
    return checks


def stratified_checks(
    tab: pd.DataFrame,
    sizes: pd.DataFrame,
    *,
    dataset: str,
    real_accuracy: float,
    convention: ConventionTally,
    largest: LargestError,
    convention_epsilons: Iterable[float],
    convention_seeds: Iterable[int],
) -> list[PaperCheck]:
    """Put the stratification paper's synthesis claims beside the authors' and ours.

    One :class:`dpnotes.report.PaperCheck` per statement of its Table 3 and Figures
    4, 5, 7 and 9 (:data:`dpnotes.paper_numbers.STRAT_CLAIMS`), with the authors'
    stored numbers (:data:`dpnotes.paper_numbers.STRAT_AUTHORS`).

    Args:
        tab: The strat_synth table (complete seeds of every data set).
        sizes: The synth_group_sizes table.
        dataset: The data set of the single-data-set rows (New York's sample).
        real_accuracy: Logistic regression's accuracy trained on the real split.
        convention: :func:`convention_tally` of the authors'-convention run.
        largest: :func:`largest_error` of that run.
        convention_epsilons, convention_seeds: That run's ε and seeds.

    Returns:
        The rows, for :func:`dpnotes.report.paper_check_table`.

    Raises:
        ValueError: If a column is missing, a seed is partial, or a metric the rows
            need is not computed.
    """
    conv_eps, conv_seeds = list(convention_epsilons), list(convention_seeds)
    return [
        *_table3_fig4_checks(tab, sizes, real_accuracy=real_accuracy),
        *_fig5_checks(
            tab,
            dataset=dataset,
            convention=convention,
            conv_eps=conv_eps,
            conv_seeds=conv_seeds,
        ),
        *_fig7_fig9_checks(
            tab,
            dataset=dataset,
            convention=convention,
            largest=largest,
            conv_seeds=conv_seeds,
        ),
    ]


# --------------------------------------------- the synthesizers chapter (MST, AIM, GEM)


def domain_cells(domain: Mapping[str, int] = EMPLOYMENT_DOMAIN) -> int:
    """Count the cells of a domain's joint table: the product of its sizes.

    Examples:
        >>> domain_cells({"a": 2, "b": 3})
        6
    """
    if not domain:
        raise ValueError("the domain has no attribute.")
    return int(np.prod([int(v) for v in domain.values()]))


def whole_value_bins(attr: str, lo: int, hi: int) -> list[str]:
    """Show a binned attribute's bins as ranges of the whole values each one holds.

    Each whole value of the public range ``lo..hi`` is encoded by the package
    itself (:func:`dpnotes.data.employment.encode_employment`), so the ranges show
    where its bin edges fall.

    Args:
        attr: A binned attribute (``"AGEP"``, ``"SCHL"``).
        lo, hi: The public range of whole values.

    Returns:
        One ``"lo–hi"`` range per bin, in code order.

    Raises:
        ValueError: If ``attr`` is not an attribute, ``lo > hi``, or a bin holds no
            whole value of the range.

    Examples:
        >>> whole_value_bins("SCHL", 1, 24)
        ['1–5', '6–10', '11–14', '15–19', '20–24']
    """
    if attr not in EMPLOYMENT_DOMAIN:
        raise ValueError(
            f"unknown attribute {attr!r}; use one of {list(EMPLOYMENT_DOMAIN)}."
        )
    if lo > hi:
        raise ValueError(f"lo = {lo} is above hi = {hi}.")
    values = np.arange(lo, hi + 1)
    raw = pd.DataFrame({c: np.ones(len(values), dtype=int) for c in EMPLOYMENT_COLUMNS})
    raw["AGEP"] = 30  # any age of the population; the binned attribute is set next
    raw[attr] = values
    codes = encode_employment(raw)[attr].to_numpy()
    out = []
    for c in range(EMPLOYMENT_DOMAIN[attr]):
        held = values[codes == c]
        if held.size == 0:
            raise ValueError(f"bin {c} of {attr!r} holds no whole value of {lo}..{hi}.")
        out.append(f"{held.min()}–{held.max()}")
    return out


def table2_checks(sample: pd.DataFrame) -> list[PaperCheck]:
    """Put the paper's Table 2 column means beside a sample's, on the paper's scale.

    Our codes start at 0 for every attribute; the paper's lowest value is added
    back (:data:`dpnotes.paper_numbers.STRAT_TABLE2`). Every row is *not
    comparable*: the paper describes New York's full person file of all ages.

    Args:
        sample: Encoded records (training and test splits together).

    Returns:
        One row per attribute of Table 2.

    Raises:
        ValueError: If an attribute of Table 2 is missing or holds a code outside
            its domain.
    """
    t2 = paper_numbers.STRAT_TABLE2
    _need(sample, list(t2), "sample")
    for attr in t2:
        col = sample[attr]
        if col.min() < 0 or col.max() >= EMPLOYMENT_DOMAIN[attr]:
            raise ValueError(
                f"{attr} holds codes outside 0..{EMPLOYMENT_DOMAIN[attr] - 1}."
            )
    checks = []
    for attr, (mean, _sd, lo, hi, _median) in t2.items():
        ours = float(sample[attr].mean()) + lo  # code 0 is the paper's lowest value
        binned = attr in ("AGEP", "SCHL")
        checks.append(
            PaperCheck(
                f"Table 2: mean of {attr} (range {lo:g}–{hi:g})",
                mean,
                ours,
                verdict="not comparable",
                decimals=3,
                note=(
                    "five bins over public ranges (ages 17–89, codes 1–24); the "
                    "authors' bins split the observed range"
                    if binned
                    else "ages 17–89 (a 20,000-row sample), the paper all ages"
                ),
            )
        )
    return checks


def workload_summary(tab: pd.DataFrame) -> pd.DataFrame:
    """Average the unstratified synthesizers' overall workload error over seeds.

    Returns:
        The columns dataset, synthesizer, epsilon and value (the mean).

    Raises:
        ValueError: If a column is missing or no such error is computed.
    """
    rows = _rows(tab, "workload_error", "overall")
    van = rows[rows.strata == "vanilla"]
    if van.empty:
        raise ValueError("tab has no unstratified workload error.")
    return van.groupby(["dataset", "synthesizer", "epsilon"], as_index=False)[
        "value"
    ].mean()


def workload_table(
    summary: pd.DataFrame,
    *,
    datasets: Iterable[str],
    synthesizers: Iterable[str],
) -> pd.DataFrame:
    """Tabulate :func:`workload_summary` by data set and ε, one column per synthesizer.

    Args:
        summary: :func:`workload_summary`'s frame.
        datasets: The data sets in the order shown.
        synthesizers: The synthesizers in the order shown.

    Returns:
        The columns data, ε and one per synthesizer (three decimals; an en dash where
        not computed).
    """
    _need(summary, ("dataset", "synthesizer", "epsilon", "value"), "summary")
    order = [d for d in datasets if d in set(summary.dataset)]
    wide = summary.pivot_table(
        index=["dataset", "epsilon"], columns="synthesizer", values="value"
    )
    wide = wide.reindex(columns=list(synthesizers)).reset_index()
    wide.columns.name = None
    wide = wide.sort_values("dataset", key=lambda c: c.map(order.index), kind="stable")
    wide["dataset"] = wide["dataset"].map(lambda d: ACS_SHORT.get(d, d))
    wide["epsilon"] = wide["epsilon"].map("{:g}".format)
    wide = wide.rename(columns={"dataset": "data", "epsilon": "ε"})
    for col in wide.columns[2:]:
        wide[col] = wide[col].map(lambda v: "–" if pd.isna(v) else f"{v:.3f}")
    return wide


def errors_fall(summary: pd.DataFrame) -> bool:
    """Whether every synthesizer's error falls at each step of ε, on every data set."""
    _need(summary, ("dataset", "synthesizer", "epsilon", "value"), "summary")
    return all(
        bool(np.all(np.diff(g.sort_values("epsilon")["value"].to_numpy()) < 0))
        for _, g in summary.groupby(["dataset", "synthesizer"])
    )


def at_epsilon_wide(summary: pd.DataFrame, epsilon: float) -> pd.DataFrame:
    """The mean errors at one ε: one row per data set, one column per synthesizer.

    Raises:
        ValueError: If ``epsilon`` is not computed.
    """
    _need(summary, ("dataset", "synthesizer", "epsilon", "value"), "summary")
    at = summary[summary.epsilon == epsilon]
    if at.empty:
        raise ValueError(f"no workload error at ε = {epsilon:g}.")
    return at.pivot_table(index="dataset", columns="synthesizer", values="value")


def fall_shares(
    summary: pd.DataFrame, *, low: float, high: float, datasets: Iterable[str]
) -> pd.DataFrame:
    """How much each error falls from ε = ``low`` to ``high``, as a share of its value.

    Returns:
        One row per synthesizer, one column per data set, holding 1 − error(high) /
        error(low). Without ``low`` computed (a profile without it), NaN for MST only.
    """
    _need(summary, ("dataset", "synthesizer", "epsilon", "value"), "summary")
    order = list(datasets)
    if low not in set(summary.epsilon):
        return pd.DataFrame(
            np.nan, index=pd.Index(["MST"], name="synthesizer"), columns=order
        )
    span = summary[summary.epsilon.isin([low, high])].pivot_table(
        index=["synthesizer", "dataset"], columns="epsilon", values="value"
    )
    return (1 - span[high] / span[low]).unstack("dataset").reindex(columns=order)


def first_sigma_aim(*, rho: float, attributes: int) -> float:
    """The noise σ of AIM's first one-way measurements at zCDP ``rho``.

    AIM plans T = 16 d rounds and spends 0.9 of ρ on measurements, split over them:
    σ = sqrt(16 d / (2 · 0.9 ρ)).

    References:
        mckenna2022aim (Algorithm 2).
    """
    return math.sqrt(16 * attributes / (2 * 0.9 * _real(rho, "rho")))


def first_sigma_mst(*, rho: float, attributes: int) -> float:
    """The noise σ of MST's one-way measurements at zCDP ``rho``: a third of ρ over d.

    References:
        mckenna2021winning (Algorithm 1).
    """
    return math.sqrt(attributes / (2 * _real(rho, "rho") / 3))


@dataclass(frozen=True)
class Trails:
    """The cells where AIM's workload error is above MST's.

    Attributes:
        table: One row per such cell (formatted), no rows when there is none.
        cells: The cells (data set, ε) where both are computed.
        epsilons: The ε of the rows.
    """

    table: pd.DataFrame
    cells: int
    epsilons: tuple[float, ...]


def aim_trails(
    summary: pd.DataFrame,
    *,
    n_train: Mapping[str, int],
    delta: float,
    datasets: Iterable[str],
) -> Trails:
    """List the cells where AIM's error is above MST's, with each one's first noise.

    Args:
        summary: :func:`workload_summary`'s frame.
        n_train: Training records per data set.
        delta: The runs' δ, to convert each ε to ρ.
        datasets: The data sets' order.

    Returns:
        A :class:`Trails`: one row per such cell (data set, ε) with the training
        records, both errors and both σ.

    Raises:
        ValueError: If AIM or MST is not computed.
    """
    order = list(datasets)
    wide = summary.pivot_table(
        index=["dataset", "epsilon"], columns="synthesizer", values="value"
    )
    if not {"AIM", "MST"} <= set(wide.columns):
        raise ValueError("summary needs both AIM and MST.")
    trails = wide[wide["AIM"] > wide["MST"]].reset_index()
    trails = trails.sort_values(
        "dataset", key=lambda c: c.map(order.index), kind="stable"
    )
    d = len(EMPLOYMENT_DOMAIN)
    rows = []
    for r in trails.itertuples():
        rho = MST(epsilon=r.epsilon, delta=delta).rho  # the zCDP a fit spends
        rows.append(
            {
                "data": ACS_SHORT.get(r.dataset, r.dataset),
                "training records": f"{n_train[r.dataset]:,}",
                "ε": f"{r.epsilon:g}",
                "error, MST": fmt(r.MST),
                "error, AIM": fmt(r.AIM),
                "σ, MST": f"{first_sigma_mst(rho=rho, attributes=d):,.0f}",
                "σ, AIM": f"{first_sigma_aim(rho=rho, attributes=d):,.0f}",
            }
        )
    return Trails(
        table=pd.DataFrame(rows),
        cells=len(wide),
        epsilons=tuple(float(e) for e in trails.epsilon),
    )


def draw_added(errors: Mapping[float, Mapping[int, float]]) -> pd.DataFrame:
    """What drawing n records i.i.d. adds to the workload error, per ε.

    Args:
        errors: From ε to {1: the error of n draws, 30: that of 30 n draws}.

    Returns:
        The columns ε, ``n records (as released)``, ``30 n records``
        (:func:`~dpnotes.report.fmt`), ``added by the draw`` (a percentage) and
        ``added`` (the share, a float).

    Raises:
        ValueError: If an ε lacks the error of 1 or 30 draws.
    """
    rows = []
    for eps, e in errors.items():
        if not {1, 30} <= set(e):
            raise ValueError(f"errors[{eps:g}] needs the errors of 1 and 30 draws.")
        added = e[1] / e[30] - 1
        rows.append(
            {
                "ε": f"{eps:g}",
                "n records (as released)": fmt(e[1]),
                "30 n records": fmt(e[30]),
                "added by the draw": f"{added:.0%}",
                "added": added,
            }
        )
    return pd.DataFrame(rows)


def fit_times(
    tab: pd.DataFrame, *, dataset: str, synthesizers: Iterable[str]
) -> pd.DataFrame:
    """The median fit seconds per synthesizer and stratification on one data set.

    Returns:
        One row per synthesizer, one column per stratification (in the order of
        :data:`dpnotes.report.STRATA_LABEL`), medians over ε and seeds.

    Raises:
        ValueError: If a column is missing or no fit time is computed there.
    """
    fit = _rows(tab, "fit_seconds", "overall", dataset=dataset)
    times = fit.pivot_table(
        index="synthesizer", columns="strata", values="value", aggfunc="median"
    )
    return times.reindex(
        index=list(synthesizers),
        columns=[c for c in STRATA_LABEL if c in times.columns],
    )


def fit_times_by_epsilon(tab: pd.DataFrame, *, dataset: str) -> pd.DataFrame:
    """The median unstratified fit seconds per ε and synthesizer on one data set."""
    fit = _rows(tab, "fit_seconds", "overall", dataset=dataset)
    return (
        fit[fit.strata == "vanilla"]
        .pivot_table(
            index="epsilon", columns="synthesizer", values="value", aggfunc="median"
        )
        .reindex(columns=[s for s in SYNTHESIZERS if s in set(fit.synthesizer)])
    )


def stored_devices(metas: Iterable[Mapping[str, object]]) -> tuple[set[str], list[str]]:
    """The accelerators and CPUs stored runs ran on, from their provenance.

    Returns:
        The set of accelerators (``{"none"}`` without a GPU; ``"unknown"`` where a
        run does not say) and the sorted CPUs.
    """
    metas = list(metas)
    if not metas:
        raise ValueError("no stored run's metadata given.")
    devices = [m.get("device", {}) or {} for m in metas]
    accelerators = {str(d.get("accelerator", "unknown")) for d in devices}
    cpus = sorted({str(d.get("cpu", "unknown")) for d in devices})
    return accelerators, cpus


def gem_steps(params: Iterable[Mapping[str, object]]) -> tuple[int, bool]:
    """GEM's Adam steps per fit in stored runs, and whether every fit takes them all.

    Args:
        params: Each stored run's GEM parameters (its config's ``params["GEM"]``).

    Returns:
        (T + 1) × steps per round of the first run's GEM, and whether every run has
        the same parameters without early stopping.
    """
    params = [dict(p) for p in params]
    if not params:
        raise ValueError("no stored run's GEM parameters given.")
    # Imported here: torch is slow to import and nothing else here needs it.
    from dpnotes.synth.gem import GEM

    gem = GEM(epsilon=1.0, delta=1e-9, **params[0])
    same = gem.stop_factor == 0 and all(p == params[0] for p in params)
    return (gem.rounds + 1) * gem.steps_per_round, same
