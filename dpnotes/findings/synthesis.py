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

Beside the comparisons, every number the two synthesis chapters state (the stratified
chapter with its pages, which read the stored runs through :func:`stratified_runs`) is
computed here from the stored tables (strat_synth, synth_group_sizes) as the chapters
load them: group sizes (the paper's Table 3), the real-data references, the groups
without test records and the bound on what they can move, the authors' parity
convention (Figures 5 and 7a), the race groups' workload errors by size, the
paper-beside-ours rows, and the synthesizers chapter's workload errors, noise scales
and fit times. Functions refuse a table without the columns or rows they need
(``ValueError`` naming them) rather than return a value over fewer seeds than they say.

Privacy: plain post-processing of stored results; no privacy budget is spent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

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
from dpnotes.findings.verdict import LEVEL, Verdict, estimate
from dpnotes.report import (
    ACS_DATASETS,
    ACS_IN_PROSE,
    ACS_SHORT,
    STRATA,
    STRATA_LABEL,
    fmt,
    plural,
    seeds_caption,
    seeds_text,
)
from dpnotes.synth import MST
from dpnotes.synth.evaluate import CLASSIFIERS, evaluate_synthetic, group_keys
from dpnotes.synth.marginals import all_kway
from dpnotes.validation import check_choice

__all__ = [
    "ATTRIBUTE_MEANING",
    "CONVENTIONS",
    "CONVENTION_FALLBACK",
    "CONVENTION_PROFILES",
    "FIGURE_WIDTH",
    "GROUPINGS",
    "SIZE_COLUMNS",
    "SYNTHESIZERS",
    "TABLE_COLUMNS",
    "AbsentCheck",
    "ConventionSection",
    "ConventionTally",
    "LargestError",
    "RaceSection",
    "RatioSummary",
    "RealReference",
    "RefitCheck",
    "Section",
    "StratifiedRuns",
    "Trails",
    "WinTally",
    "absent_check",
    "absent_groups",
    "absent_term_bound",
    "absent_texts",
    "accuracy_gap",
    "accuracy_section",
    "aim_trails",
    "at_epsilon",
    "at_epsilon_wide",
    "attribute_table",
    "authors_own_text",
    "claim_table",
    "claim_verdict",
    "compare_metric",
    "compare_strata",
    "convention_comparisons",
    "convention_flips",
    "convention_maxima",
    "convention_section",
    "convention_tally",
    "curve",
    "domain_cells",
    "draw_added",
    "draw_section",
    "errors_fall",
    "fairness_section",
    "fall_section",
    "fall_shares",
    "first_sigma_aim",
    "first_sigma_mst",
    "fit_time_section",
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
    "largest_error_texts",
    "largest_gap",
    "lowest_variants",
    "majority_rate",
    "nm_section",
    "own_grouping_comparisons",
    "own_texts",
    "parity_section",
    "race_ratios",
    "race_section",
    "ratio_figure",
    "ratio_range",
    "ratio_summary",
    "real_references",
    "real_value",
    "refit_check",
    "remaining_fit_hours",
    "run_texts",
    "second_largest_group",
    "seed_lists",
    "size_texts",
    "small_groups",
    "smallest_group",
    "stored_devices",
    "stored_where",
    "strata_figure",
    "strata_wins_table",
    "strata_wins_text",
    "stratified_checks",
    "stratified_runs",
    "table2_checks",
    "trails_section",
    "whole_blocks",
    "whole_value_bins",
    "win_tally",
    "workload_section",
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
        and the stratified and unstratified means at ``at_epsilon`` in one column
        (``"0.400 / 0.500"``, :func:`~dpnotes.report.fmt`; an en dash where that ε is
        not computed), so that the table stays as narrow as the page. No rows when
        nothing is computed.

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
        ['sex strata', 'MST', '1 of 2 ε', 0, '0 / 0', '0.400 / 0.500']
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
    at = f"ε = {e:g}: stratified / none"
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
                    at: f"{fmt(w.loc[e, 'strat'])} / {fmt(w.loc[e, 'vanilla'])}"
                    if there
                    else "–",
                }
            )
    columns = [label] * keyed + [
        "synthesizer",
        "stratified better",
        "near ties",
        "beyond doubt: better / worse",
        at,
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
        f"{tally.undecided} of {n} undecided by our seeds: it could go either way",
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
            table): the groups with their training records, the ``term`` at the real
            overall means, the ``bound`` on it over the comparisons, the ``least
            rise`` of the parity error by stratifying, and how many rises are
            ``above the bound``; no rows when there are none.
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
                    "strata": f"{STRATA_LABEL[grouping]}, {ACS_SHORT.get(d, d)}",
                    "groups (training records)": "; ".join(names),
                    "term": fmt(absent_term_bound(train, grouping, absent, 0.0)),
                    "bound": f"{fmt(b.min())} to {fmt(b.max())}",
                    "least rise": fmt(diff.min()),
                    "above the bound": f"{int((diff > b).sum())} of {len(c)}",
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
                    "median error: race strata / none": f"{fmt(part['RAC1P'].median())}"
                    f" / {fmt(part['vanilla'].median())}",
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
    """Our side of a claim: ``"5 of 108 (5 better beyond doubt)"``."""
    return f"{t} ({t.clear_wins} better beyond doubt)"


def _claim(
    quantity: str,
    claim: str,
    tally: WinTally,
    *,
    seeds: int,
    authors: str = "",
    note: str = "",
) -> Verdict:
    """A claim that stratifying does better, judged by :func:`claim_verdict`."""
    outcome, why = claim_verdict(tally)
    return Verdict(
        quantity,
        None,
        None,
        outcome,
        why + (f"; {note}" if note else ""),
        claim=claim,
        ours_text=_tally_text(tally),
        authors=authors,
        extra={"seeds": str(seeds)},
    )


def _stated(
    quantity: str,
    claim: str,
    ours: str,
    outcome: str,
    why: str,
    *,
    seeds: int | None,
    authors: str = "",
) -> Verdict:
    """A claim whose our side is a text (a setting, a count read off the means)."""
    return Verdict(
        quantity,
        None,
        None,
        outcome,
        why,
        claim=claim,
        ours_text=ours,
        authors=authors,
        extra={"seeds": "–" if seeds is None else str(seeds)},
    )


def _table3_fig4_checks(
    tab: pd.DataFrame,
    sizes: pd.DataFrame,
    *,
    real_accuracy: float,
    real_test_n: int,
    seeds: int,
) -> list[Verdict]:
    """The rows of :func:`stratified_checks` on Table 3 and Figure 4."""
    pc, pa = paper_numbers.STRAT_CLAIMS, paper_numbers.STRAT_AUTHORS
    st = _sizes(sizes)
    t3 = paper_numbers.STRAT_TABLE3
    ny_train = st[
        (st.dataset == "NY-sample")
        & (st.split == "train")
        & (st.grouping == "SEX_RAC1P")
    ]
    if ny_train.empty:
        raise ValueError("sizes has no training rows of SEX_RAC1P on 'NY-sample'.")
    checks = [
        _stated(
            "Table 3: sex × race groups",
            f"{sum(t3.values()):,} records; smallest group {min(t3.values())}",
            f"{int(ny_train['count'].sum()):,} training records; "
            f"{int((ny_train['count'] < 20).sum())} of 18 groups under 20",
            "not comparable",
            "a 20,000-row sample of ages 17–89, not the full file",
            seeds=None,
        )
    ]
    checks.append(
        Verdict(
            "Figure 4: accuracy trained on real data",
            pc["fig4-real"].values[0],
            estimate([_real(real_accuracy, "real_accuracy")], n_test=real_test_n),
            "not comparable",
            "logistic regression on ages 17–89; the paper: all ages, random forest",
            authors=f"{pa['fig4-real'].values[0]:g} (best synthetic; real not stored)",
        )
    )
    eps_min, gap_max = pc["fig4-gap"].values
    acc = pd.concat(
        compare_metric(tab, "logistic:accuracy", "overall", strata=g, lower=False)
        for g in GROUPINGS
        if g in set(tab.strata)
    )
    acc = acc[acc.index.get_level_values("epsilon") >= eps_min]
    if acc.empty or acc["low"].isna().any():
        raise ValueError(
            f"no paired accuracy comparison over two or more seeds at ε ≥ {eps_min:g}."
        )
    inside = int(((acc["low"] >= -gap_max) & (acc["high"] <= gap_max)).sum())
    outside = int(((acc["low"] > gap_max) | (acc["high"] < -gap_max)).sum())
    if inside == len(acc):
        outcome, why = "reproduces", f"every interval within ±{gap_max:g}"
    elif outside:
        outcome, why = "differs", f"{outside} intervals wholly beyond ±{gap_max:g}"
    else:
        outcome, why = "inconclusive", f"some intervals reach beyond ±{gap_max:g}"
    checks.append(
        _stated(
            f"Figure 4: accuracy gap, ε ≥ {eps_min:g}",
            f"at most {gap_max:g}",
            f"largest {fmt(accuracy_gap(tab, min_epsilon=eps_min), 2)}; "
            f"{inside} of {len(acc)} intervals within ±{gap_max:g}",
            outcome,
            why + " (logistic, both data sets)",
            seeds=seeds,
            authors=", ".join(f"{v:g}" for v in pa["fig4-gap"].values),
        )
    )
    # "Harms utility only for ε < 0.1": at ε = 0.1 itself, the finest strata (sex ×
    # race) against none, one paired comparison per synthesizer and data set.
    (eps_low,) = pc["fig4-low-eps"].values
    low = at_epsilon(
        compare_metric(
            tab, "logistic:accuracy", "overall", strata="SEX_RAC1P", lower=False
        ),
        eps_low,
    )
    if low.empty or low["low"].isna().any():
        raise ValueError(
            "no paired accuracy comparison of sex × race strata over two or more "
            f"seeds at ε = {eps_low:g}."
        )
    n, worse = len(low), int(low["clear_loss"].sum())
    lower = int((low["gain"] < 0).sum())
    if worse:
        outcome, why = "differs", f"lower beyond doubt in {worse} of {n}"
    else:
        outcome = "inconclusive" if 2 * lower > n else "reproduces"
        why = f"lower in {lower} of {n}, none beyond doubt"
    checks.append(
        _stated(
            f"Figure 4: accuracy with sex × race strata, ε = {eps_low:g}",
            f"harm only for ε < {eps_low:g}",
            f"stratified − none {low['gain'].min():+.4f} to "
            f"{low['gain'].max():+.4f}; {worse} of {n} worse beyond doubt",
            outcome,
            why + " (logistic, per synthesizer and data set)",
            seeds=seeds,
            authors=", ".join(f"{v:+.4f}" for v in pa["fig4-low-eps"].values),
        )
    )
    return checks


def _fig5_checks(
    tab: pd.DataFrame,
    *,
    dataset: str,
    convention: ConventionTally,
    seeds: int,
    conv_seeds: int,
) -> list[Verdict]:
    """The rows of :func:`stratified_checks` on Figure 5."""
    pc, pa = paper_numbers.STRAT_CLAIMS, paper_numbers.STRAT_AUTHORS
    claim = pc["fig5-all"].claim
    own_wins = dict(zip(SYNTHESIZERS, pa["fig5-all"].values[1:], strict=True))
    a_all = pa["fig5-all"].values[0]
    allc = pd.concat(own_grouping_comparisons(tab).values())
    by_synth = win_tally(allc, by="synthesizer")
    checks = [
        _claim(
            "Figure 5: own-group parity error, all",
            claim,
            win_tally(allc),
            seeds=seeds,
            authors=f"{a_all:g} of 54",
        )
    ]
    checks += [
        _claim(
            f"Figure 5: the same, {syn}",
            "the same",
            by_synth[syn],
            seeds=seeds,
            authors=f"{own_wins[syn]:g} of 18",
        )
        for syn in SYNTHESIZERS
        if syn in by_synth
    ]
    best = lowest_variants(tab, dataset=dataset)
    gem_best = int((best.synthesizer == "GEM").sum())
    checks.append(
        _stated(
            "Figure 5: GEM lowest (sex × race)",
            pc["fig5-gem-best"].claim,
            f"GEM at {gem_best} of {len(best)} ε; lowest: "
            + ", ".join(sorted(set(best.synthesizer))),
            "reproduces" if 2 * gem_best > len(best) else "differs",
            f"lowest mean, {ACS_SHORT.get(dataset, dataset)}; our GEM is our own "
            "implementation",
            seeds=seeds,
            authors=f"stratified GEM at {pa['fig5-gem-best'].values[0]:g} of 6 ε",
        )
    )
    gem = compare_metric(tab, "mean_parity_error", "SEX_RAC1P", dataset=dataset)
    gem = gem.xs("GEM", level="synthesizer", drop_level=False)
    gem = gem[gem.index.get_level_values("epsilon") >= 0.05]
    ratio = gem_reduction(tab, dataset=dataset, min_epsilon=0.05)
    gem_t = win_tally(gem)
    lo_a, hi_a = pa["fig5-reduction"].values
    if 2 * gem_t.clear_losses > gem_t.total:
        outcome, why = "differs", "stratifying raises it beyond doubt in most"
    elif gem_t.clear_wins == gem_t.total and ratio.min() >= 2:
        outcome, why = "reproduces", "lower beyond doubt, by 2 or more"
    else:
        outcome, why = "inconclusive", "not lower beyond doubt everywhere"
    checks.append(
        _stated(
            "Figure 5: GEM's error divided by stratifying (ε ≥ 0.05)",
            "by 2 or more",
            f"{ratio.min():.2f} to {ratio.max():.2f}; "
            f"{gem_t.clear_losses} of {gem_t.total} worse beyond doubt",
            outcome,
            why,
            seeds=seeds,
            authors=f"{lo_a:g} to {hi_a:g}",
        )
    )
    aim = by_synth.get("AIM")
    if aim is not None:
        aim_c = allc.xs("AIM", level="synthesizer", drop_level=False)
        high = aim_c[aim_c.index.get_level_values("epsilon") >= 1.0]
        checks.append(
            _claim(
                "Figure 5: stratified AIM better at ε ≥ 1",
                pc["fig5-aim"].claim,
                win_tally(high),
                seeds=seeds,
                authors=f"{pa['fig5-all'].values[2]:g} of 18 (all ε)",
            )
        )
    conv_t = convention.total
    checks.append(
        _claim(
            "Figure 5 scored the authors' way",
            claim,
            conv_t["authors"],
            seeds=conv_seeds,
            authors=", ".join(f"{syn} {own_wins[syn]:g}" for syn in convention.by_synth)
            + " of 18",
            note=f"scored our way: {conv_t['ours']}",
        )
    )
    return checks


def _fig7_fig9_checks(
    tab: pd.DataFrame,
    *,
    dataset: str,
    largest: LargestError,
    seeds: int,
    conv_seeds: int,
) -> list[Verdict]:
    """The rows of :func:`stratified_checks` on Figures 7 and 9 and the settings."""
    pc = paper_numbers.STRAT_CLAIMS
    authors_f = [f for k, f in largest.factors.items() if k[2] == "authors'"]
    ours_f = [f for k, f in largest.factors.items() if k[2] == "ours"]
    checks = [
        _stated(
            "Figure 7a: largest error of a group's mean",
            pc["fig7a"].claim,
            f"falls {min(authors_f):.0f} to {max(authors_f):.0f} times, "
            f"rising at ≤ {max(largest.rises.values())} of {largest.steps} steps",
            "reproduces" if largest.gradual else "differs",
            "scored the authors' way; our way it changes "
            f"{min(ours_f):.1f} to {max(ours_f):.1f} times",
            seeds=conv_seeds,
        )
    ]
    for key, label, why in [
        (
            "fig7b",
            "Figure 7b: demographic parity",
            "a ratio over sex × race groups there; a difference over race here",
        ),
        (
            "fig7c",
            "Figure 7c: largest FNR gap",
            "a random forest over sex × race groups there; logistic over race here",
        ),
    ]:
        checks.append(
            _stated(
                label,
                pc[key].claim,
                "figures above",
                "not comparable",
                why,
                seeds=seeds,
            )
        )
    wl_pe = compare_metric(tab, "workload_parity_error", "RAC1P", dataset=dataset)
    checks.append(
        _claim(
            "Figure 9: stratified GEM, workload parity error",
            pc["fig9-gem"].claim,
            win_tally(wl_pe.xs("GEM", level="synthesizer", drop_level=False)),
            seeds=seeds,
            note="race strata against none",
        )
    )
    aim = wl_pe.xs("AIM", level="synthesizer", drop_level=False)
    low = aim[aim.index.get_level_values("epsilon") < pc["fig9-aim"].values[0]]
    checks.append(
        _claim(
            "Figure 9: AIM below ε = 1",
            pc["fig9-aim"].claim,
            win_tally(low),
            seeds=seeds,
        )
    )
    grid = tuple(pc["synthesis-settings"].values[:-1])
    seeds_paper = pc["synthesis-settings"].values[-1]
    ours_grid = tuple(sorted(float(e) for e in tab.epsilon.unique()))
    same = ours_grid == grid and seeds >= seeds_paper
    checks.append(
        _stated(
            "Settings: ε grid and seeds",
            pc["synthesis-settings"].claim,
            f"ε in {{{', '.join(f'{e:g}' for e in ours_grid)}}}; {seeds} seeds",
            "reproduces" if same else "differs",
            "the same grid and seeds" if same else "another grid or fewer seeds",
            seeds=seeds,
        )
    )
    return checks


def stratified_checks(
    tab: pd.DataFrame,
    sizes: pd.DataFrame,
    *,
    dataset: str,
    real_accuracy: float,
    real_test_n: int,
    convention: ConventionTally,
    largest: LargestError,
    convention_seeds: Iterable[int],
) -> list[Verdict]:
    """Put the stratification paper's synthesis claims beside the authors' and ours.

    One :class:`~dpnotes.findings.verdict.Verdict` per statement of its Table 3 and
    Figures 4, 5, 7 and 9 (:data:`dpnotes.paper_numbers.STRAT_CLAIMS`), with the
    authors' stored numbers (:data:`dpnotes.paper_numbers.STRAT_AUTHORS`). A claim
    that stratifying does better is judged by :func:`claim_verdict` on the paired
    intervals of its comparisons; our side is the raw tally and the count better
    beyond doubt (``"5 of 108 (5 better beyond doubt)"``). The seeds column gives the
    seeds every comparison pairs.

    Args:
        tab: The strat_synth table (complete seeds of every data set).
        sizes: The synth_group_sizes table.
        dataset: The data set of the single-data-set rows (New York's sample).
        real_accuracy: Logistic regression's accuracy trained on the real split.
        real_test_n: The test records that accuracy is measured on.
        convention: :func:`convention_tally` of the authors'-convention run.
        largest: :func:`largest_error` of that run.
        convention_seeds: That run's seeds.

    Returns:
        The verdicts, for :func:`~dpnotes.findings.verdict.verdict_frame`.

    Raises:
        ValueError: If a column is missing, a seed is partial, or a metric the rows
            need is not computed.
    """
    seed_list = seed_lists(tab)
    seeds = min(len(v) for v in seed_list.values())
    conv_seeds = len(list(convention_seeds))
    if conv_seeds == 0:
        raise ValueError("convention_seeds is empty: pass the derived run's seeds.")
    return [
        *_table3_fig4_checks(
            tab,
            sizes,
            real_accuracy=real_accuracy,
            real_test_n=real_test_n,
            seeds=seeds,
        ),
        *_fig5_checks(
            tab,
            dataset=dataset,
            convention=convention,
            seeds=seeds,
            conv_seeds=conv_seeds,
        ),
        *_fig7_fig9_checks(
            tab, dataset=dataset, largest=largest, seeds=seeds, conv_seeds=conv_seeds
        ),
    ]


# ------------------------------------------- the stratified chapter: sections and texts


@dataclass(frozen=True)
class Section:
    """What a chapter section shows: its table and the texts its prose quotes.

    Attributes:
        table: The section's table (no rows when there is none to show).
        texts: From each glue name the prose uses to its text.
    """

    table: pd.DataFrame
    texts: dict[str, str]


def _and(items: Iterable[str]) -> str:
    """``"a, b and c"``."""
    items = list(items)
    return (
        " and ".join([", ".join(items[:-1]), items[-1]])
        if len(items) > 1
        else ("".join(items))
    )


def run_texts(
    tab: pd.DataFrame, profiles: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """The figures' captions per data set, and the seeds the counts compare.

    Args:
        tab: The strat_synth table (complete seeds).
        profiles: From each data set to the profile its rows come from.

    Returns:
        From each data set to its figures' last sentence (experiment, data set,
        profile, seeds), and the texts ``strat-short`` (the first data set's) and
        ``strat-nseeds`` (``"5 seeds for the New York sample; ..."``).

    Raises:
        ValueError: If a seed is partial or a data set has no profile.
    """
    seeds = seed_lists(tab)
    missing = [d for d in seeds if d not in profiles]
    if missing:
        raise ValueError(f"no profile given for the data sets {missing}.")
    order = [d for d in ACS_DATASETS if d in seeds] + [
        d for d in seeds if d not in ACS_DATASETS
    ]
    captions = {
        d: "Experiment strat_synth; "
        + seeds_caption(ACS_DATASETS.get(d, d), profiles[d], seeds[d])
        for d in order
    }
    texts = {
        "strat-short": captions[order[0]],
        "strat-nseeds": "; ".join(
            f"{plural(len(seeds[d]), 'seed')} for {ACS_IN_PROSE.get(d, d)}"
            for d in order
        ),
    }
    return captions, texts


@dataclass(frozen=True)
class RealReference:
    """A data set's real-data references: each metric on the real training split.

    The evaluation (:attr:`real`) trains the reference classifiers, the costliest
    part of a stratified page's set-up, so it runs the first time a page reads it
    (once per data set; a page that needs only the splits never pays for it).

    Attributes:
        train, test: The real splits.
        majority: The accuracy of always predicting the test split's majority class.
        classifiers: The classifiers :attr:`real` trains.
    """

    train: pd.DataFrame
    test: pd.DataFrame
    majority: float
    classifiers: tuple[str, ...] = ("logistic", "boosting")

    @cached_property
    def real(self) -> pd.DataFrame:
        """:func:`dpnotes.synth.evaluate.evaluate_synthetic` of the training split
        against the test split, as if it were synthetic (seed 0)."""
        return evaluate_synthetic(
            self.train, self.test, self.train, classifiers=list(self.classifiers),
            seed=0,
        )  # fmt: skip


def real_references(
    splits: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]],
    *,
    classifiers: Iterable[str] = ("logistic", "boosting"),
) -> dict[str, RealReference]:
    """Each data set's real-data references (the evaluation runs when first read).

    Raises:
        ValueError: If a test split has no ``ESR`` label, or a classifier is not one of
            :data:`dpnotes.synth.evaluate.CLASSIFIERS`.
    """
    classifiers = tuple(classifiers)
    for kind in classifiers:
        check_choice(kind, CLASSIFIERS, "classifier")
    out = {}
    for d, (train, test) in splits.items():
        _need(test, ["ESR"], f"the test split of {d!r}")
        out[d] = RealReference(train, test, majority_rate(test["ESR"]), classifiers)
    return out


#: The stored profiles of the authors'-parity-convention run, in the order the
#: stratified chapter's pages prefer them (``load_or_run``'s ``prefer``): the paper
#: grid for seeds 0 and 1, else the paper profile's partial five-seed run.
CONVENTION_PROFILES = ("paper@parity=authors,seeds=0+1", "paper@parity=authors")

#: The profile computed when none of :data:`CONVENTION_PROFILES` is stored.
CONVENTION_FALLBACK = "smoke@parity=authors"


@dataclass(frozen=True)
class StratifiedRuns:
    """The stored strat_synth runs as the stratified chapter's pages read them.

    The chapter ``book/synthetic/stratified.md`` and its pages
    ``stratified_utility.md``, ``stratified_parity.md`` and ``stratified_fairness.md``
    read the same stored results, and each glues its own numbers (glued values belong
    to one notebook); this is what they share.

    Attributes:
        table: The strat_synth rows: per data set, the complete seeds of the profile
            :func:`dpnotes.lab.load_per_dataset` took.
        profiles: From each data set to that profile.
        captions: From each data set to its figures' last sentence
            (:func:`run_texts`).
        texts: The texts every page glues: ``strat-short`` and ``strat-nseeds``
            (:func:`run_texts`).
        synthesizers: The synthesizers the table holds, in :data:`SYNTHESIZERS`'
            order.
        refs: From each data set to its real-data references
            (:func:`real_references`).
    """

    table: pd.DataFrame
    profiles: dict[str, str]
    captions: dict[str, str]
    texts: dict[str, str]
    synthesizers: list[str]
    refs: dict[str, RealReference]

    @property
    def datasets(self) -> list[str]:
        """The data sets, the New York sample first (the order of :func:`run_texts`)."""
        return list(self.captions)

    @property
    def dataset(self) -> str:
        """The data set of the pages' main figures: the first of :attr:`datasets`."""
        return self.datasets[0]

    @property
    def n_train(self) -> dict[str, int]:
        """From each data set to its number of training records."""
        return {d: len(r.train) for d, r in self.refs.items()}

    def panel(
        self, metric: str, name: str, ylabel: str, *, dataset: str | None = None, **kw
    ) -> None:
        """Draw :func:`strata_figure` of :attr:`table` and glue it as ``name``.

        One panel per synthesizer, one curve per stratification; the figure is the
        cell's output and is saved as ``strat_synth-<name>``
        (:func:`dpnotes.plotting.glue_figure`).

        Args:
            metric, ylabel: As :func:`strata_figure`.
            name: The name the page's ``{glue:figure}`` refers to.
            dataset: The data set (default: :attr:`dataset`).
            **kw: ``grouping``, ``logy`` and ``refs`` of :func:`strata_figure`.

        Raises:
            ValueError: As :func:`strata_figure` (nothing matches) and
                :func:`~dpnotes.plotting.glue_figure` (a name that is not a plain
                file name).
        """
        from dpnotes.plotting import glue_figure

        fig = strata_figure(
            self.table, metric, ylabel, dataset=dataset or self.dataset, **kw
        )
        glue_figure(name, fig, source="strat_synth")


def stratified_runs(
    result: object,
    split: Callable[[str], tuple[pd.DataFrame, pd.DataFrame]],
    *,
    classifiers: Iterable[str] = ("logistic", "boosting"),
) -> StratifiedRuns:
    """Read the stored strat_synth rows as the stratified chapter's pages show them.

    Args:
        result: ``load_per_dataset("strat_synth")`` (a
            :class:`~dpnotes.lab.combine.Combined`: ``.table`` and ``.sources``, each
            source with its ``.profile``).
        split: From a data set to its real ``(train, test)`` splits
            (:func:`dpnotes.data.employment.split_employment`); called once per data
            set of the table.
        classifiers: The classifiers of the real-data references.

    Returns:
        The :class:`StratifiedRuns`.

    Raises:
        TypeError: If ``result`` has no ``table`` or ``sources``, or ``split`` is not
            callable.
        ValueError: As :func:`run_texts` (a partial seed, a data set without a
            profile) and :func:`real_references` (a test split without ``ESR``).
    """
    if not (hasattr(result, "table") and hasattr(result, "sources")):
        raise TypeError(
            "result must be what load_per_dataset('strat_synth') returns (with .table "
            f"and .sources), got {type(result).__name__}."
        )
    if not callable(split):
        raise TypeError(
            "split must map a data set to its (train, test) splits, such as "
            f"dpnotes.data.employment.split_employment; got {type(split).__name__}."
        )
    tab = result.table
    profiles = {d: src.profile for d, src in result.sources.items()}
    captions, texts = run_texts(tab, profiles)
    synths = [s for s in SYNTHESIZERS if s in set(tab.synthesizer)]
    refs = real_references({d: split(d) for d in captions}, classifiers=classifiers)
    return StratifiedRuns(tab, profiles, captions, texts, synths, refs)


def size_texts(sizes: pd.DataFrame, profile: str) -> dict[str, str]:
    """The group-size section's texts: its caption and the tiny sex × race strata.

    Raises:
        ValueError: If a column or the New York sample's sizes are missing.
    """
    st = _sizes(sizes)
    data = "; ".join(ACS_DATASETS[d] for d in ACS_DATASETS if d in set(st.dataset))
    tiny, _ = small_groups(st, dataset="NY-sample", grouping="SEX_RAC1P")
    return {
        "sizes-caption": f"Experiment synth_group_sizes, profile {profile}; data: "
        f"{data}.",
        "sizes-tiny": str(tiny),
    }


def _wins(compared: Mapping[str, pd.DataFrame], synthesizers, label: str):
    return strata_wins_table(compared, synthesizers, label=label)


def accuracy_section(
    tab: pd.DataFrame, *, dataset: str, synthesizers: Iterable[str]
) -> Section:
    """Figure 4: logistic accuracy with sex and with race strata against none.

    Returns:
        The wins table and the texts ``acc-ties`` and ``acc-gap`` (the largest gap of
        the means at ε = 1).
    """
    c = {
        STRATA_LABEL[g]: compare_metric(
            tab, "logistic:accuracy", "overall", strata=g, dataset=dataset, lower=False
        )
        for g in ("SEX", "RAC1P")
    }
    both = pd.concat(c.values())
    t = win_tally(both)
    return Section(
        _wins(c, synthesizers, "strata"),
        {
            "acc-ties": f"{t.ties} of the {t.total}",
            "acc-gap": fmt(largest_gap(both, epsilon=1.0), 1),
        },
    )


def parity_section(
    tab: pd.DataFrame, *, dataset: str, synthesizers: Iterable[str]
) -> Section:
    """Figure 5: each stratification against none by the parity error over its groups.

    Returns:
        The wins table and the texts ``pe-ratio`` (race strata over none at ε = 1),
        ``pe-sex-ties`` and ``pe-sex-wins``.
    """
    c = {
        g: compare_metric(tab, "mean_parity_error", g, dataset=dataset)
        for g in GROUPINGS
    }
    lo, hi = ratio_range(pd.concat([c["RAC1P"], c["SEX_RAC1P"]]), epsilon=1.0)
    sex = win_tally(c["SEX"])
    return Section(
        _wins({STRATA_LABEL[g]: v for g, v in c.items()}, synthesizers, "strata"),
        {
            "pe-ratio": f"{lo:.1f} to {hi:.1f}",
            "pe-sex-ties": f"{sex.ties} of its {sex.total}",
            "pe-sex-wins": str(sex.wins),
        },
    )


def fairness_section(
    tab: pd.DataFrame,
    *,
    dataset: str,
    synthesizers: Iterable[str],
    real: pd.DataFrame,
    sizes: pd.DataFrame,
    n_test: int,
) -> Section:
    """Figure 7a–c: race strata against none, closer to the real-data gap is better.

    Args:
        real: The real-data evaluation (:attr:`RealReference.real`).
        sizes: The synth_group_sizes table.
        n_test: The test split's records.

    Returns:
        The wins table and the texts ``fair-wins``, ``fair-ties``, the real-data
        gaps ``disp-real``, ``dp-real`` and ``fnr-real``, and what the gaps are
        measured on: ``test-small`` (race groups under 20 test records), ``test-n``
        and ``test-nseeds``.
    """
    metrics = {
        "employment-rate gap": ("label_mean_disparity", "disp-real"),
        "demographic parity gap": ("logistic:dp_difference", "dp-real"),
        "FNR gap": ("logistic:fnr_difference", "fnr-real"),
    }
    refs = {m: real_value(real, m, grouping="RAC1P") for m, _ in metrics.values()}
    c = {
        label: compare_metric(tab, m, "RAC1P", dataset=dataset, target=refs[m])
        for label, (m, _) in metrics.items()
    }
    t = win_tally(pd.concat(c.values()))
    texts = {"fair-wins": str(t), "fair-ties": str(t.ties)}
    texts |= {name: fmt(refs[m]) for m, name in metrics.values()}
    n_small, n_race = small_groups(
        sizes, dataset=dataset, grouping="RAC1P", split="test"
    )
    texts |= {
        "test-small": f"{n_small} of the {n_race}",
        "test-n": f"{n_test:,}",
        "test-nseeds": plural(len(seed_lists(tab)[dataset]), "seed"),
    }
    return Section(_wins(c, synthesizers, "gap (race strata)"), texts)


def workload_section(
    tab: pd.DataFrame, *, dataset: str, synthesizers: Iterable[str]
) -> Section:
    """Figure 9: race strata against none by the workload error and its parity error.

    Returns:
        The wins table and the texts ``wl-wins`` and ``wlpe-wins``.
    """
    c = {
        "workload error, overall": compare_metric(
            tab, "workload_error", "overall", strata="RAC1P", dataset=dataset
        ),
        "parity error over the workload": compare_metric(
            tab, "workload_parity_error", "RAC1P", dataset=dataset
        ),
    }
    t = [str(win_tally(v)) for v in c.values()]
    return Section(
        _wins(c, synthesizers, "measure (race strata)"),
        {"wl-wins": t[0], "wlpe-wins": t[1]},
    )


def nm_section(
    tab: pd.DataFrame,
    sizes: pd.DataFrame,
    *,
    synthesizers: Iterable[str],
    n_train: int,
) -> Section:
    """New Mexico: each stratification against none, and the section's texts.

    Args:
        n_train: New Mexico's training records.

    Returns:
        The wins table and the texts ``nm-intro`` and ``nm-reading``.

    Raises:
        ValueError: If New Mexico or the New York sample is not computed.
    """
    c = {
        f"parity error, {STRATA_LABEL[g]} strata": compare_metric(
            tab, "mean_parity_error", g, dataset="NM"
        )
        for g in GROUPINGS
    }
    c["logistic accuracy, RAC1P strata"] = compare_metric(
        tab, "logistic:accuracy", "overall", strata="RAC1P", lower=False, dataset="NM"
    )
    small = win_tally(pd.concat(list(c.values())[1:3]))
    acc = win_tally(c["logistic accuracy, RAC1P strata"])
    second, n_nm, n_ny = second_largest_group(sizes, dataset="NM", other="NY-sample")
    return Section(
        _wins(c, synthesizers, "comparison"),
        {
            "nm-intro": f"New Mexico's race groups differ from New York's: its "
            f"second-largest is {second}, with {n_nm:,.0f} training records against "
            f"{n_ny:,.0f} in the New York sample (the table in the section on group "
            "sizes). The figures below repeat the experiment on its full 2018 person "
            f"file (training split of {n_train:,} records).",
            "nm-reading": "As on the New York sample, race and sex × race strata raise "
            "the parity error over their own groups (stratifying wins "
            f"{small} comparisons), and the accuracy comparisons are near ties "
            f"({acc.ties} of {acc.total}).",
        },
    )


def own_texts(tab: pd.DataFrame) -> dict[str, str]:
    """The headline: stratifying against none by the parity error over its own groups.

    Returns:
        The texts ``own-total``, ``own-clear``, ``own-by-data``, ``own-scope``,
        ``sex-own`` and ``authors-own`` (:func:`authors_own_text`).

    Raises:
        ValueError: If a column is missing or no parity error is computed.
    """
    own = own_grouping_comparisons(tab)
    allc = pd.concat(own.values())
    t = win_tally(allc)
    by_data = win_tally(allc, by="dataset")
    order = [d for d in ACS_DATASETS if d in by_data] + [
        d for d in by_data if d not in ACS_DATASETS
    ]
    per_data = [f"{by_data[d]} on {ACS_IN_PROSE.get(d, d)}" for d in order]
    synths = tab.synthesizer.nunique()
    return {
        "own-total": str(t),
        "own-clear": f"{t.clear_wins} better and {t.clear_losses} worse",
        "own-by-data": " and ".join(per_data).replace(" on ", " comparisons on ", 1),
        "own-scope": f"{plural(len(order), 'data set')}, {synths} synthesizers and "
        f"{tab.epsilon.nunique()} values of ε",
        "sex-own": str(win_tally(own["SEX"])) if "SEX" in own else "none",
        "authors-own": authors_own_text(),
    }


def authors_own_text() -> str:
    """Say how many of their 54 own-group comparisons the authors' stored results win.

    From :data:`dpnotes.paper_numbers.STRAT_AUTHORS` (``fig5-all``: all, then per
    synthesizer), most wins first.

    >>> authors_own_text()
    '26 of the 54 comparisons: 16 with GEM, 9 with AIM and 1 with MST'
    """
    values = paper_numbers.STRAT_AUTHORS["fig5-all"].values
    per = sorted(zip(SYNTHESIZERS, values[1:], strict=True), key=lambda kv: -kv[1])
    parts = [f"{v:g} with {syn}" for syn, v in per]
    listed = ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"{values[0]:g} of the 54 comparisons: {listed}"


def absent_texts(check: AbsentCheck, datasets: Iterable[str]) -> dict[str, str]:
    """Say what groups without test records could do to the parity comparisons.

    Args:
        check: :func:`absent_check`'s result.
        datasets: The data sets computed, in order.

    Returns:
        The texts ``absent-above`` (comparisons where stratifying raised the parity
        error by more than the bound), ``absent-flips`` and ``absent-clean`` (the data
        sets without such groups).

    Examples:
        >>> empty = AbsentCheck(pd.DataFrame(), 0, 0, 0, ())
        >>> absent_texts(empty, ["NM"])["absent-clean"]
        'Every group with training records also has test records.'
    """
    if not isinstance(check, AbsentCheck):
        raise TypeError(f"check must be an AbsentCheck, got {type(check).__name__}.")
    flips = (
        "could not turn any of them in favour of stratifying"
        if check.flips == 0
        else f"could turn at most {check.flips} of them in favour of stratifying"
    )
    if not check.total:
        return {
            "absent-above": "none of the",
            "absent-flips": flips,
            "absent-clean": "Every group with training records also has test records.",
        }
    clean = [ACS_IN_PROSE.get(d, d) for d in datasets if d not in check.datasets]
    text = _and(clean)
    return {
        "absent-above": f"{check.above} of these {check.total}",
        "absent-flips": flips,
        "absent-clean": text[:1].upper()
        + text[1:]
        + (" have" if len(clean) > 1 else " has")
        + " no such group."
        if clean
        else "",
    }


@dataclass(frozen=True)
class ConventionSection:
    """The authors'-parity-convention run, counted over its whole blocks.

    Attributes:
        ct: The rows of its whole blocks (:func:`whole_blocks`).
        tally: :func:`convention_tally` of them.
        seeds, epsilons: The seeds and ε of those rows.
        texts: The texts the section's prose quotes (``conv-*``).
    """

    ct: pd.DataFrame
    tally: ConventionTally
    seeds: list[int]
    epsilons: list[float]
    texts: dict[str, str]


def _refit_text(refit: RefitCheck, seeds: list[int]) -> str:
    gem_same = refit.gem_same
    if gem_same.all():
        return ""
    same = (
        f"none of its {len(gem_same)} cells here equals the stored one exactly; "
        "they are "
        if not gem_same.any()
        else f"{int(gem_same.sum())} of its {len(gem_same)} cells here equal the "
        "stored ones exactly, and the others are "
    )
    return (
        ", except GEM's. GEM trains in float32, whose sums differ between processors, "
        "and part of the stored GEM cells were computed on another machine's CPU: "
        + same
        + "refits of the same code and seed on this machine, whose parity errors (our "
        f"convention) differ from the figures' by a median of {fmt(refit.gem_gap)}, "
        f"against {fmt(refit.seed_gap)} between seeds "
        f"{' and '.join(str(x) for x in seeds[:2])} of the figures' own runs. Both "
        "conventions score the same refit"
    )


def convention_section(
    run: pd.DataFrame, config: Mapping[str, object], tab: pd.DataFrame
) -> ConventionSection:
    """Count the authors'-convention run's whole blocks and say what they show.

    Args:
        run: The run's table (``strat_synth`` with ``parity=authors``, perhaps
            partial).
        config: Its profile's config (stratifications, epsilons, seeds, synthesizers,
            datasets).
        tab: The stored strat_synth table (the figures' runs, for the refit check and
            the fit times of the blocks left to run).

    Returns:
        A :class:`ConventionSection`.

    Raises:
        ValueError: If the config lacks a setting, or no whole block is computed.
    """
    need = ["stratifications", "epsilons", "seeds", "synthesizers", "datasets"]
    lacking = [k for k in need if k not in config]
    if lacking:
        raise ValueError(f"config lacks the settings {lacking}.")
    ct, pending = whole_blocks(
        run,
        stratifications=config["stratifications"],
        epsilons=config["epsilons"],
        seeds=config["seeds"],
    )
    if ct.empty:
        raise ValueError("no whole block in the run yet: nothing to count.")
    seeds = sorted(int(x) for x in ct.seed.unique())
    eps = sorted(float(e) for e in ct.epsilon.unique())
    data = [d for d in ACS_DATASETS if d in set(ct.dataset)]
    synths = [x for x in SYNTHESIZERS if x in set(ct.synthesizer)]
    groupings = [g for g in GROUPINGS if g in set(ct.grouping)]
    conv_c = convention_comparisons(ct, groupings)
    conv_t = convention_tally(conv_c, datasets=data, synthesizers=synths)
    by_synth = conv_t.by_synth
    the = {d: ACS_IN_PROSE.get(d, d) for d in ACS_IN_PROSE}
    all_data = all(len(ds) == len(data) for ds, _ in by_synth.values())
    scope = (
        f"{_and(synths)} on {' and '.join(the[d] for d in data)}"
        if all_data and len(synths) > 1
        else ", ".join(
            f"{s} on {' and '.join(the[d] for d in ds)}"
            for s, (ds, _) in by_synth.items()
        )
    ) + f", at ε = {', '.join(f'{e:g}' for e in eps)} with {seeds_text(seeds)}"
    todo = [
        (s, d)
        for s in config["synthesizers"]
        for d in config["datasets"]
        if not ((ct.synthesizer == s) & (ct.dataset == d)).any()
    ]
    todo_by = {s: [the.get(d, d) for s_, d in todo if s_ == s] for s, _ in todo}
    own_wins = dict(
        zip(
            SYNTHESIZERS,
            paper_numbers.STRAT_AUTHORS["fig5-all"].values[1:],
            strict=True,
        )
    )
    race_wins, race_top, _ = convention_flips(conv_c, top_epsilon=max(eps))
    maxima = convention_maxima(ct)
    texts = {
        "conv-pending": ""
        if pending.empty
        else "Not counted yet, as their runs are unfinished: "
        + "; ".join(
            f"{s} on {the.get(d, d)}, {n} cells so far" for (s, d), n in pending.items()
        )
        + ".",
        "conv-ours": str(conv_t.total["ours"]),
        "conv-authors": str(conv_t.total["authors"]),
        "conv-by-synth": "; ".join(
            s
            + ("" if len(ds) == len(data) else ", " + _and(ACS_SHORT[d] for d in ds))
            + f": {t['ours'].wins} and {t['authors'].wins} of {t['ours'].total}"
            for s, (ds, t) in by_synth.items()
        ),
        "conv-synths": " or ".join(filter(None, [", ".join(synths[:-1]), synths[-1]])),
        "conv-scope": scope,
        "conv-todo": "nothing"
        if not todo
        else ", ".join(f"{s} on {' and '.join(ds)}" for s, ds in todo_by.items())
        + f", about {remaining_fit_hours(tab, todo, seeds=seeds):.0f} hours of "
        "fitting on one core by the stored fit times",
        "conv-authors-own": " and ".join(
            f"{own_wins[s]:g} of 18 comparisons for {s}" for s in synths
        ),
        "conv-refit": _refit_text(refit_check(ct, tab, seeds=seeds), seeds),
        "conv-race-flips": str(len(race_wins)),
        "conv-race-top": str(race_top),
        "conv-max-ours": fmt(maxima["ours"]),
        "conv-max-authors": fmt(maxima["authors"]),
    }
    return ConventionSection(ct, conv_t, seeds, eps, texts)


def largest_error_texts(f7: LargestError) -> dict[str, str]:
    """The Figure 7a paragraph's texts: how the largest error falls, both ways.

    Returns:
        ``f7-rises``, ``f7-steps``, ``f7-authors-factor`` and ``f7-ours-factor``.
    """
    if not isinstance(f7, LargestError):
        raise TypeError(f"f7 must be a LargestError, got {type(f7).__name__}.")
    short = {k: f"{k[1]}, {ACS_SHORT.get(k[0], k[0])}" for k in f7.factors}
    return {
        "f7-rises": ", ".join(f"{n} ({short[k]})" for k, n in f7.rises.items()),
        "f7-steps": str(f7.steps),
        "f7-authors-factor": ", ".join(
            f"{f:.0f} ({short[k]})" for k, f in f7.factors.items() if k[2] == "authors'"
        ),
        "f7-ours-factor": ", ".join(
            f"{f:.1f}" for k, f in f7.factors.items() if k[2] == "ours"
        ),
    }


@dataclass(frozen=True)
class RaceSection:
    """Why stratifying can raise errors: the race groups' workload errors by size.

    Attributes:
        ratio: :func:`race_ratios`'s per-group rows.
        summary: :func:`ratio_summary` of them (its table is the section's).
        texts: The texts the prose quotes.
    """

    ratio: pd.DataFrame
    summary: RatioSummary
    texts: dict[str, str]


def race_section(
    tab: pd.DataFrame,
    sizes: pd.DataFrame,
    *,
    profiles: Mapping[str, str],
    n_train: Mapping[str, int],
    small: int = 100,
    epsilon: float = 1.0,
) -> RaceSection:
    """The race groups' workload errors with race strata and without, and the texts.

    Args:
        tab: The strat_synth table (complete seeds).
        sizes: The synth_group_sizes table.
        profiles: From each data set to the profile its rows come from.
        n_train: Training records per data set.
        small: The training size below which a group counts as small.
        epsilon: The ε compared.

    Returns:
        A :class:`RaceSection`.

    Raises:
        ValueError: If a column, a data set's profile or the sizes are missing.
    """
    ratio, unweighted, eps = race_ratios(tab, sizes, epsilon=epsilon)
    rs = ratio_summary(ratio, small=small)
    seeds = seed_lists(tab)
    ds = [d for d in ACS_DATASETS if d in set(ratio.dataset)]
    the = dict(ACS_IN_PROSE)
    described = {(profiles[d], tuple(seeds[d])) for d in ds}
    if len(described) == 1:
        profile, s = next(iter(described))
        source = (
            f"Experiment strat_synth, profile {profile}; "
            f"{'; '.join(ACS_DATASETS[d] for d in ds)}; "
            f"each point a {seeds_text(s, mean_over=True)}."
        )
    else:
        source = (
            "Experiment strat_synth; "
            + "; ".join(
                f"{ACS_DATASETS[d]}: profile {profiles[d]}, "
                f"{seeds_text(seeds[d], mean_over=True)}"
                for d in ds
            )
            + "."
        )
    left_out = (
        "No group is left out."
        if unweighted.empty
        else "Groups without test records get public weight 0, so race strata "
        "release none of their rows; they are left out ("
        + ", ".join(
            f"{group_name('RAC1P', g)} in {the.get(d, d)}"
            for d, g in zip(unweighted.dataset, unweighted.group, strict=True)
        )
        + ")."
    )
    shares = group_shares(sizes, dataset="NY-sample", grouping="SEX")
    texts = {
        "ratio-eps": f"{eps:g}",
        "ratio-small": str(small),
        "ratio-source": source,
        "ratio-left-out": left_out,
        "ratio-small-raised": f"{rs.small_raised} of {rs.small_total}",
        "ratio-large-raised": f"{rs.large_raised} of {rs.large_total}",
        "ratio-worst": "–" if rs.worst is None else fmt(rs.worst["ratio"]),
        "ratio-worst-where": "no larger group computed"
        if rs.worst is None
        else f"{rs.worst['synthesizer']}, {group_name('RAC1P', rs.worst['group'])} "
        f"in {the.get(rs.worst['dataset'])}, {rs.worst['train']:,.0f} training records",
        "ratio-help-min": f"{rs.helped_min:,.0f}",
        "ratio-helped": f"{rs.helped} of the {rs.helped_of}",
        "sex-min": f"{smallest_group(sizes, grouping='SEX'):,}",
        "sex-shares": f"{fmt(100 * shares.min())}% and {fmt(100 * shares.max())}%",
        "tiny-race": ", ".join(
            f"{name} ({c:,})"
            for name, c in groups_below(
                sizes, dataset="NY-sample", grouping="RAC1P", below=small
            )
        )
        or "none",
    }
    if {"NY-sample", "NM"} <= set(n_train) and "NM" in set(sizes.dataset):
        more = larger_groups(sizes, dataset="NM", than="NY-sample")
        nm, ny = n_train["NM"], n_train["NY-sample"]
        texts["nm-sizes"] = (
            f"has {'fewer' if nm < ny else 'more'} training records than the sample "
            f"({nm:,} against {ny:,}), and "
            + (
                f"more only in its {_and(more)} group{'s' if len(more) > 1 else ''}"
                if more
                else "no race group with more records"
            )
        )
    else:
        texts["nm-sizes"] = "is not computed yet"
    return RaceSection(ratio, rs, texts)


# --------------------------------------------------- the stratified chapter's figures

#: A figure's width in inches: the page shows figures about 610 px wide.
FIGURE_WIDTH = 6.4
_STRATA_COLOR = dict(zip(STRATA, ["0.2", "#1b9e77", "#d95f02", "#7570b3"], strict=True))
_REF_STYLES = ["--", ":", "-."]


def _plain_log_ticks(ax, which: str = "y") -> None:
    """Label a log axis with plain numbers (0.2, 0.5, 1, 2) instead of powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    lo, hi = ax.get_ylim() if which == "y" else ax.get_xlim()
    decades = np.log10(hi / lo)
    subs = (1.0, 2.0, 3.0, 5.0) if decades <= 0.9 else (1.0, 2.0, 5.0)
    if decades > 2:
        subs = (1.0,)
    axis = ax.yaxis if which == "y" else ax.xaxis
    axis.set_major_locator(LogLocator(subs=subs))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _figure_legend(fig, ax, first_row: set[str]) -> None:
    """One legend under the figure: the labels in first_row, then the others below."""
    from matplotlib.lines import Line2D

    pairs = list(zip(*ax.get_legend_handles_labels(), strict=True))
    top = [p for p in pairs if p[1] in first_row]
    rest = [p for p in pairs if p[1] not in first_row]
    ncols = max(len(top), len(rest))
    if rest:
        # The legend fills column by column: interleave the two rows, padded.
        blank = (Line2D([], [], linestyle="none"), "")
        top += [blank] * (ncols - len(top))
        rest += [blank] * (ncols - len(rest))
        top = [item for pair in zip(top, rest, strict=True) for item in pair]
    fig.legend(
        [h for h, _ in top],
        [lab for _, lab in top],
        loc="outside lower center",
        ncols=ncols,
        fontsize="medium",
    )


def strata_figure(
    tab: pd.DataFrame,
    metric: str,
    ylabel: str,
    *,
    dataset: str,
    grouping: str = "overall",
    logy: bool = False,
    refs: Iterable[tuple[float, str]] = (),
):
    """One panel per synthesizer, one curve per stratification (mean ± sd over seeds).

    Args:
        tab: The strat_synth table.
        metric, grouping: The metric plotted and the grouping it is computed over.
        ylabel: The y axis's label.
        dataset: The data set.
        logy: Whether the y axis is logarithmic.
        refs: Real-data references, (value, label), drawn as black lines.

    Returns:
        The matplotlib figure.

    Raises:
        ValueError: If nothing matches.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    agg = curve(tab, metric, dataset=dataset, grouping=grouping).reset_index()
    epsilons = sorted(agg.epsilon.unique())
    shown = [s for s in SYNTHESIZERS if s in set(agg.synthesizer)]
    fig, axes = plt.subplots(
        1, len(shown), figsize=(FIGURE_WIDTH, 3.4), sharey=True, squeeze=False
    )
    for ax, syn in zip(axes[0], shown, strict=True):
        part = agg[agg.synthesizer == syn]
        for j, strata in enumerate(STRATA):
            d = part[part.strata == strata].sort_values("epsilon")
            if d.empty:
                continue
            # One ε (a quick run): strata side by side; several: curves over ε.
            x = [j] if len(epsilons) == 1 else d.epsilon
            ax.errorbar(
                x,
                d["mean"],
                yerr=d["std"].fillna(0.0),
                marker="o",
                ms=4,
                lw=1.4,
                capsize=2,
                color=_STRATA_COLOR[strata],
                label=STRATA_LABEL[strata],
            )
        for (value, label), style in zip(refs, _REF_STYLES, strict=False):
            ax.axhline(value, color="black", ls=style, lw=1.2, label=label)
        if len(epsilons) == 1:
            ax.set_xticks(
                range(len(STRATA)), [STRATA_LABEL[s] for s in STRATA], rotation=90
            )
            ax.set_xlim(-0.5, len(STRATA) - 0.5)
            ax.set_title(f"{syn}, ε = {epsilons[0]:g}")
        else:
            # Labels at the powers of ten and the largest ε; the others unlabelled.
            decade = [
                e for e in epsilons if np.isclose(np.log10(e), np.round(np.log10(e)))
            ]
            marked = sorted(set(decade) | {max(epsilons)})
            ax.set(xscale="log", title=syn, xlabel="ε")
            ax.set_xticks(marked, [f"{e:g}" for e in marked])
            ax.set_xticks([e for e in epsilons if e not in marked], minor=True)
            ax.xaxis.set_minor_formatter(NullFormatter())
        if logy:
            ax.set_yscale("log")
    if logy:
        _plain_log_ticks(axes[0][0])
    axes[0][0].set_ylabel(ylabel)
    _figure_legend(fig, axes[0][0], set(STRATA_LABEL.values()))
    return fig


def ratio_figure(ratio: pd.DataFrame, *, small: int = 100):
    """Per race group and synthesizer: race strata's workload error over none's.

    Args:
        ratio: :func:`race_ratios`'s rows.
        small: Where a dotted line marks the small groups.

    Returns:
        The matplotlib figure, one panel per data set.
    """
    import matplotlib.pyplot as plt

    from dpnotes.plotting import PALETTE

    _need(ratio, ("dataset", "synthesizer", "train", "ratio"), "ratio")
    ds = [d for d in ACS_DATASETS if d in set(ratio.dataset)]
    synths = [s for s in SYNTHESIZERS if s in set(ratio.synthesizer)]
    fig, axes = plt.subplots(
        1, len(ds), figsize=(FIGURE_WIDTH, 3.2), sharey=True, squeeze=False
    )
    markers = {"MST": "o", "AIM": "s", "GEM": "^"}
    for ax, d in zip(axes[0], ds, strict=True):
        part = ratio[ratio.dataset == d]
        for j, syn in enumerate(synths):
            p = part[part.synthesizer == syn]
            ax.scatter(p["train"], p["ratio"], marker=markers[syn], s=40,
                       alpha=0.85, color=PALETTE[j], label=syn)  # fmt: skip
        ax.axhline(1.0, color="black", ls="--", lw=1.2, label="no change")
        ax.axvline(small, color="0.55", ls=":", lw=1.0)
        ax.set(xscale="log", yscale="log", title=ACS_SHORT[d])
        ax.set_xlabel("training records in the group")
        _plain_log_ticks(ax, "x")
    lo, hi = axes[0][0].get_ylim()
    axes[0][0].set_ylim(min(lo, 0.45), max(hi, 2.2))  # so that 0.5, 1 and 2 show
    _plain_log_ticks(axes[0][0])
    axes[0][0].set_ylabel("workload error,\nrace strata / no strata")
    _figure_legend(fig, axes[0][0], set(synths) | {"no change"})
    return fig


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


def table2_checks(sample: pd.DataFrame) -> list[Verdict]:
    """Put the paper's Table 2 column means beside a sample's, on the paper's scale.

    Our codes start at 0 for every attribute; the paper's lowest value is added
    back (:data:`dpnotes.paper_numbers.STRAT_TABLE2`). Every row is *not
    comparable*: the paper describes New York's full person file of all ages. Our
    side is one column mean of the data (no seeds), shown as text.

    Args:
        sample: Encoded records (training and test splits together).

    Returns:
        One verdict per attribute of Table 2.

    Raises:
        ValueError: If an attribute of Table 2 is missing or holds a code outside
            its domain, or the sample is empty.
    """
    t2 = paper_numbers.STRAT_TABLE2
    _need(sample, list(t2), "sample")
    if sample.empty:
        raise ValueError("sample is empty.")
    for attr in t2:
        col = sample[attr]
        if col.min() < 0 or col.max() >= EMPLOYMENT_DOMAIN[attr]:
            raise ValueError(
                f"{attr} holds codes outside 0..{EMPLOYMENT_DOMAIN[attr] - 1}."
            )
    checks = []
    for attr, (mean, _sd, lo, hi, _median) in t2.items():
        ours = float(sample[attr].mean()) + lo  # code 0 is the paper's lowest value
        why = (
            "our five bins span public ranges; the authors' the observed one"
            if attr in ("AGEP", "SCHL")
            else "ages 17–89 in a 20,000-row sample; the paper: all ages"
        )
        checks.append(
            Verdict(
                f"mean of {attr} ({lo:g}–{hi:g})",
                mean,
                None,
                "not comparable",
                why,
                ours_text=f"{ours:.3f}",
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


#: What each attribute of the employment domain means (the synthesizers chapter).
ATTRIBUTE_MEANING = {
    "AGEP": "age in years",
    "SCHL": "schooling: ACS code, 1 (none) to 24 (doctorate)",
    "MAR": "marital status",
    "DIS": "disability",
    "ESP": "employment status of parents",
    "MIL": "military service",
    "DREM": "cognitive difficulty",
    "SEX": "sex",
    "RAC1P": "race (AI/AN: American Indian or Alaska Native; NH/PI: Native Hawaiian "
    "or Pacific Islander)",
    "ESR": "employment status (the label)",
}


def attribute_table() -> pd.DataFrame:
    """Describe the employment domain: each attribute's meaning, levels and values.

    The binned attributes show the whole values each bin holds over their public
    ranges (:func:`whole_value_bins`: ages 17–89, schooling codes 1–24).

    Returns:
        The columns attribute, meaning, levels and values, one row per attribute.
    """
    labels = employment_labels()
    shown = {a: ", ".join(labels[a]) for a in EMPLOYMENT_DOMAIN}
    shown["AGEP"] = ", ".join(whole_value_bins("AGEP", 17, 89))
    shown["SCHL"] = ", ".join(whole_value_bins("SCHL", 1, 24))
    shown["ESP"] = (
        "n/a (not living with a parent in the household), and 8 codes: which "
        "parents the person lives with, and which of them are in the labour force"
    )
    return pd.DataFrame(
        {
            "attribute": list(EMPLOYMENT_DOMAIN),
            "meaning": [ATTRIBUTE_MEANING[a] for a in EMPLOYMENT_DOMAIN],
            "levels": list(EMPLOYMENT_DOMAIN.values()),
            "values": [shown[a] for a in EMPLOYMENT_DOMAIN],
        }
    )


def stored_where(sources: Mapping[str, object]) -> str:
    """Say where a combined result's rows come from, once when all share it.

    Args:
        sources: From each data set, in order, to its source (with ``profile``,
            ``seeds`` and ``describe()``, as :class:`dpnotes.lab.combine.Source`).

    Returns:
        E.g. ``"Experiment strat_synth, profile paper, seeds 0–4 of each data set
        (New York 2018, 20,000-row sample; New Mexico 2018)."``

    Raises:
        ValueError: Without sources.
    """
    if not sources:
        raise ValueError("no source given.")
    described = {(s.profile, tuple(s.seeds)) for s in sources.values()}
    if len(described) == 1:
        profile, seeds = described.pop()
        where = (
            f"profile {profile}, {seeds_text(seeds)} of each data set "
            f"({'; '.join(ACS_DATASETS.get(d, d) for d in sources)})"
        )
    else:
        where = "; ".join(
            f"{ACS_DATASETS.get(d, d)}: {s.describe()}" for d, s in sources.items()
        )
    return f"Experiment strat_synth, {where}."


def fall_section(summary: pd.DataFrame, *, datasets: Iterable[str]) -> Section:
    """What the last tenfold of budget buys each synthesizer.

    Returns:
        The table of falls (one row per synthesizer, a percentage per data set) and
        the texts ``wl-e-max``, ``wl-e-low``, ``wl-aim-max`` (AIM's error at the
        largest ε) and ``wl-mst-fall``.

    Raises:
        ValueError: If a column is missing or AIM is not computed at the largest ε.
    """
    _need(summary, ("dataset", "synthesizer", "epsilon", "value"), "summary")
    order = [d for d in datasets if d in set(summary.dataset)]
    e_max = float(summary.epsilon.max())
    e_low = e_max / 10
    at_max = at_epsilon_wide(summary, e_max)
    if "AIM" not in at_max.columns:
        raise ValueError(f"no AIM error at ε = {e_max:g}.")
    fall = fall_shares(summary, low=e_low, high=e_max, datasets=order)
    synths = [s for s in SYNTHESIZERS if s in set(summary.synthesizer)]
    view = fall.reindex(index=synths).map("{:.0%}".format).reset_index()
    view.columns = ["synthesizer"] + [f"fall, {ACS_SHORT.get(d, d)}" for d in order]
    return Section(
        view,
        {
            "wl-e-max": f"{e_max:g}",
            "wl-e-low": f"{e_low:g}",
            "wl-aim-max": " and ".join(
                f"{fmt(at_max.loc[d, 'AIM'])} on {ACS_IN_PROSE.get(d, d)}"
                for d in order
                if d in at_max.index
            ),
            "wl-mst-fall": " and ".join(f"{fall.loc['MST', d]:.0%}" for d in order),
        },
    )


def trails_section(
    summary: pd.DataFrame,
    *,
    n_train: Mapping[str, int],
    delta: float,
    datasets: Iterable[str],
) -> Section:
    """Where AIM trails MST, and the noise each puts on its first one-way counts.

    Returns:
        :func:`aim_trails`'s table and the texts ``aim-trails``, ``aim-rounds`` and
        ``aim-noise-ratio`` (AIM's first σ over MST's, the same at any ρ).
    """
    trails = aim_trails(summary, n_train=n_train, delta=delta, datasets=datasets)
    d = len(EMPLOYMENT_DOMAIN)
    ratio = first_sigma_aim(rho=1.0, attributes=d) / first_sigma_mst(
        rho=1.0, attributes=d
    )
    return Section(
        trails.table,
        {
            "aim-noise-ratio": fmt(ratio, 2),
            "aim-rounds": str(16 * d),
            "aim-trails": f"{len(trails.table)} of the {trails.cells}",
        },
    )


def draw_section(
    train: pd.DataFrame, *, epsilons: Iterable[float] = (1.0, 5.0), delta: float = 1e-9
) -> Section:
    """What drawing n records i.i.d. adds to MST's workload error (one fit per ε).

    MST is fitted on ``train`` with seed 0; its n draws are scored against 30 n
    draws, whose marginals are close to the model's own.

    Returns:
        :func:`draw_added`'s table (without the float column) and the text
        ``synth-draw-range``.
    """
    from dpnotes.synth.marginals import workload_error

    three_way = all_kway(EMPLOYMENT_DOMAIN, 3)
    errors = {}
    for eps in epsilons:
        mst = MST(epsilon=eps, delta=delta).fit(
            train, EMPLOYMENT_DOMAIN, rng=np.random.default_rng(0)
        )
        errors[eps] = {
            k: workload_error(
                train,
                mst.sample(k * len(train), rng=np.random.default_rng(k)),
                EMPLOYMENT_DOMAIN,
                three_way,
            )
            for k in (1, 30)
        }
    draws = draw_added(errors)
    shares = sorted(set(draws["added by the draw"]), key=lambda s: float(s[:-1]))
    return Section(
        draws.drop(columns="added"),
        {
            "synth-draw-range": f"{shares[0]} to {shares[-1]}"
            if len(shares) > 1
            else shares[0]
        },
    )


def fit_time_section(
    tab: pd.DataFrame,
    metas: Iterable[Mapping[str, object]],
    *,
    dataset: str = "NY-sample",
) -> tuple[Section, pd.DataFrame]:
    """The fits' cost: median seconds by stratification and by ε, and the devices.

    Args:
        tab: The strat_synth table.
        metas: The stored runs' metadata (provenance and config).
        dataset: The data set timed.

    Returns:
        The section (median seconds per synthesizer and stratification; the texts
        ``synth-device``, ``gem-device`` and ``gem-steps``) and the unstratified
        medians per ε (formatted).
    """
    metas = list(metas)
    synths = [s for s in SYNTHESIZERS if s in set(tab.synthesizer)]
    times = fit_times(tab, dataset=dataset, synthesizers=synths)
    times = times.rename(columns=STRATA_LABEL).reset_index()
    for col in times.columns[1:]:
        times[col] = times[col].map(lambda v: "–" if pd.isna(v) else f"{v:.1f}")
    accelerators, cpus = stored_devices(metas)
    steps, _ = gem_steps(
        m.get("config", {}).get("params", {}).get("GEM", {}) for m in metas
    )
    cpu_only = accelerators == {"none"}
    devices = ", ".join(sorted(accelerators))
    texts = {
        "synth-device": f"The stored runs had no GPU: every fit ran on the CPU "
        f"({', '.join(cpus)}), one thread per fit."
        if cpu_only
        else f"The stored runs' devices: {devices}.",
        "gem-device": "the stored runs ran on the CPU"
        if cpu_only
        else f"the stored runs ran on {devices}",
        "gem-steps": f"{steps:,}",
    }
    by_eps = fit_times_by_epsilon(tab, dataset=dataset).map("{:.1f}".format)
    by_eps = by_eps.reset_index()
    by_eps["epsilon"] = by_eps["epsilon"].map("{:g}".format)
    return Section(times, texts), by_eps.rename(columns={"epsilon": "ε"})
