"""Findings of the stratified-estimation chapters (rosenblatt2024stratification).

Every number, table row and claim's outcome that the chapters *Stratified means: the
theory*, *COINPRESS and stratification* and *Census case study* state, as typed
functions of the tables their experiments store (``log_size_sum``,
``laplace_bound_check``, ``ny_race_alpha``, ``strat_mean_synthetic``,
``strat_mean_census``, ``census_descriptive``; read with ``load_or_run``). The
chapters call these functions, glue their values (``*_texts``), place the figures
drawn here (``*_figure``) and explain.

Each paper-beside-ours table is a list of
:class:`~dpnotes.findings.verdict.Verdict` rendered by :func:`.compact_frame`. Where the
tables store only a mean over runs and its standard error, ours is a
:class:`MonteCarloMean` (:func:`mc_mean`): mean ± sd over the runs with the 95%
interval of the mean.

The stored tables hold means over runs, one row per setting, with the number of runs
averaged in a ``runs`` column. A function that averages rows checks that every row
averages the same number of runs (or the number passed as ``runs``), so that it never
returns a value over fewer runs than it says; a table without a needed column, a
setting without one of the methods, or a selection without rows raises
:class:`ValueError` naming what is missing.

Plain post-processing of released results: no privacy budget is spent here.

References:
    rosenblatt2024stratification: Figures 1-3 and 6-8, Table 1, Thm. 9, Prop. 8, the
    New York race example.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.special import polygamma

from dpnotes import bounds, paper_numbers, plotting, report
from dpnotes.findings.verdict import (
    Estimate,
    Tally,
    Verdict,
    compare_value,
    estimate,
    tally,
)
from dpnotes.mean.compare import METHODS
from dpnotes.worst_case_gain import WorstCaseGain, gain_of_alpha, gain_of_sizes

__all__ = [
    "BASELINE",
    "COUNTS",
    "LEAKY",
    "RACE_FIT_NAMES",
    "RACE_SOURCES",
    "STRATIFIED",
    "SYNTHETIC_RATIOS",
    "BoundCheck",
    "CensusAuthors",
    "Fig1Interpolation",
    "LogSizeSumCheck",
    "MonteCarloMean",
    "ParityLower",
    "RaceAlpha",
    "RaceAlphaRow",
    "SpreadVariant",
    "SyntheticClaims",
    "Wins",
    "at_most",
    "bound_check",
    "bound_figure",
    "bound_texts",
    "census_authors",
    "census_checks",
    "census_figure",
    "census_mean",
    "census_ratio",
    "census_texts",
    "coinpress_bias_is_constant",
    "coinpress_checks",
    "compared_text",
    "descriptive_records",
    "descriptive_view",
    "error_at_largest_k",
    "error_ratio",
    "fig1_interpolation",
    "glue_texts",
    "log_size_figure",
    "log_size_sum_check",
    "log_size_sum_sd",
    "log_size_texts",
    "mc_mean",
    "overall_wins_view",
    "paper_race_counts",
    "parity_lower",
    "parity_view",
    "plain_log_ticks",
    "prior_view",
    "quantile_standard_error",
    "race_alpha",
    "race_alpha_view",
    "race_share_view",
    "race_texts",
    "settings_text",
    "spread_texts",
    "spread_variant_view",
    "spread_variants",
    "stored_gains_agree",
    "strata_with_age_best",
    "stratified_wins",
    "sweep",
    "sweep_figure",
    "synthetic_cells",
    "synthetic_claims",
    "synthetic_texts",
    "table3_alphas",
    "theory_checks",
    "unit_spread_texts",
    "unit_spread_view",
    "universe_size",
    "wins_tally",
]

#: The non-stratified baseline of every comparison.
BASELINE = METHODS[0]
#: The paper's StratCoinpress, true group sizes used as public (leaks them).
LEAKY = "StratCoinpress (paper, leaks sizes)"
#: StratCoinpress with noisy counts as sizes (private).
COUNTS = "StratCoinpress (DP counts)"
#: The three stratified methods, in the order of :data:`dpnotes.mean.compare.METHODS`.
STRATIFIED: tuple[str, ...] = tuple(m for m in METHODS if m != BASELINE)

#: How the race-example table names each way of fitting alpha.
RACE_FIT_NAMES: Mapping[str, str] = {
    "mle": "maximum likelihood",
    "mc-moment": "Monte Carlo, moments",
    "mc-sorted": "Monte Carlo, order statistics",
}
#: How the race-example table names each of our data sources.
RACE_SOURCES: Mapping[str, str] = {
    "NY-extract": "our NY sample (20,000 rows, ages 17–89)",
    "NM": "New Mexico, full file (ours)",
}

#: The paper's claims (:data:`dpnotes.paper_numbers.STRAT_CLAIMS`, by key) as the
#: checks tables show them: short, so that a table fits the page; the prose and
#: ``STRAT_CLAIMS`` give them in full.
_SHORT: Mapping[str, str] = {
    "fig2-overall": "stratifying sometimes lowers it",
    "fig2-pincp": "the hard case",
    "fig2-parity": "StratCoinpress keeps it low",
    "fig3-converge": "they converge",
    "abstract-coinpress": "stratifying can lower it",
    "fig7-k": "low and stable across k",
    "fig6": "no value stated",
}

_VARS = ("SCHL", "WKHP", "JWMNP", "PINCP")


# ----------------------------------------------------------------- shared checks


def _require(table: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    """Raise unless ``table`` is a non-empty frame with ``columns``."""
    if not isinstance(table, pd.DataFrame):
        raise ValueError(f"{what}: expected a DataFrame, got {type(table).__name__}.")
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValueError(
            f"{what}: the table lacks the columns {missing}; pass the stored table "
            "of the experiment (load_or_run(...).table)."
        )
    if table.empty:
        raise ValueError(f"{what}: the table has no rows.")


def _runs(table: pd.DataFrame, runs: int | None, what: str) -> int:
    """Return the runs every row averages; raise if rows differ or fall short."""
    counts = sorted({int(r) for r in table["runs"]})
    if runs is not None:
        short = [c for c in counts if c != runs]
        if short:
            raise ValueError(
                f"{what}: rows average {short} runs, not the {runs} expected; a "
                "partial result? Rerun the experiment to completion."
            )
    elif len(counts) > 1:
        raise ValueError(
            f"{what}: rows average different numbers of runs {counts}; a partial "
            "result? Rerun the experiment to completion or pass runs=..."
        )
    return counts[0]


def _methods_complete(
    table: pd.DataFrame, keys: Sequence[str], methods: Sequence[str], what: str
) -> None:
    """Raise unless every setting (``keys``) has a row of every method."""
    absent = sorted(set(methods) - set(table["method"]))
    if absent:
        raise ValueError(f"{what}: no rows of the methods {absent}.")
    have = table[table["method"].isin(methods)].groupby(list(keys))["method"].nunique()
    short = have[have < len(methods)]
    if len(short):
        raise ValueError(
            f"{what}: settings {list(short.index)[:5]} lack some of the methods "
            f"{list(methods)}; a partial result?"
        )


@dataclass(frozen=True)
class MonteCarloMean(Estimate):
    """Ours where only a Monte Carlo mean, its sd and its runs are stored.

    The stored tables of these experiments hold, per setting, the mean over runs and
    the standard deviation (or standard error) of the runs, not the runs themselves:
    this :class:`~dpnotes.findings.verdict.Estimate` takes those summaries, so that a
    verdict shows the mean ± sd over the runs and the Student-t 95% interval of the
    mean, as :func:`~dpnotes.findings.verdict.estimate` would from the runs.
    Build it with :func:`mc_mean`.

    Attributes:
        mc_mean: The mean over runs.
        mc_sd: The standard deviation of one run (None for one run).
        runs: The runs averaged (shown as the seeds).
    """

    mc_mean: float = 0.0
    mc_sd: float | None = None
    runs: int = 1

    @property
    def mean(self) -> float:
        """The mean over runs."""
        return self.mc_mean

    @property
    def sd(self) -> float | None:
        """The standard deviation over runs (None for one run)."""
        return self.mc_sd if self.runs > 1 else None

    @property
    def n_seeds(self) -> int:
        """The runs averaged."""
        return self.runs


def mc_mean(mean: float, *, se: float, runs: int) -> MonteCarloMean:
    """Build our estimate from a stored Monte Carlo mean and its standard error.

    Args:
        mean: The mean over runs.
        se: Its standard error (the sd of one run over ``sqrt(runs)``).
        runs: The runs averaged.

    Returns:
        The :class:`MonteCarloMean`.

    Raises:
        ValueError: If a value is not finite, ``se`` is negative or ``runs`` < 1.

    Examples:
        >>> e = mc_mean(0.5, se=0.01, runs=50)
        >>> round(e.sd, 4), e.n_seeds, e.interval_text()
        (0.0707, 50, '[0.480, 0.520]')
    """
    m, s = float(mean), float(se)
    if not (math.isfinite(m) and math.isfinite(s)) or s < 0:
        raise ValueError(f"mc_mean: mean and se must be finite, se >= 0 ({m}, {s}).")
    if int(runs) < 1:
        raise ValueError(f"mc_mean: runs must be at least 1, got {runs}.")
    runs = int(runs)
    return MonteCarloMean((m,), mc_mean=m, mc_sd=s * math.sqrt(runs), runs=runs)


def glue_texts(texts: Mapping[str, object]) -> dict[str, str]:
    """Check a chapter's glued texts: names non-empty, every value a non-empty text.

    Raises:
        ValueError: If a name or a text is empty, or a text reads "nan".
    """
    out = {}
    for name, text in texts.items():
        value = str(text)
        if not name or not value.strip() or "nan" in value.split():
            raise ValueError(f"glue_texts: {name!r} has no text ({value!r}).")
        out[name] = value
    return out


def compared_text(counts: Iterable[int]) -> str:
    """Say how many settings were compared: ``"11"`` or ``"9 to 11"``.

    Args:
        counts: The number of settings compared, one per row (variable).

    Returns:
        The text.

    Raises:
        ValueError: If ``counts`` is empty.

    Examples:
        >>> compared_text([11, 11]), compared_text([11, 9])
        ('11', '9 to 11')
    """
    values = sorted({int(c) for c in counts})
    if not values:
        raise ValueError("no counts to describe.")
    return str(values[0]) if len(values) == 1 else f"{values[0]} to {values[-1]}"


# ---------------------------------------------------------------- theory chapter


def log_size_sum_sd(alpha: float | np.ndarray, k: int | np.ndarray) -> np.ndarray:
    """Return the standard deviation of ``sum_i log g_i`` for ``g ~ Dirichlet(alpha)``.

    For a symmetric Dirichlet with ``k`` components of parameter ``alpha``,
    ``Var log g_i = psi1(alpha) - psi1(k alpha)`` and, for ``i != j``,
    ``Cov(log g_i, log g_j) = -psi1(k alpha)`` (``psi1``: the trigamma function), so
    ``Var sum_i log g_i = k psi1(alpha) - k**2 psi1(k alpha)``. Adding ``k log n``
    (the sum of ``log(n g_i)``, Thm. 9) leaves it unchanged.

    Args:
        alpha: The Dirichlet parameter(s), positive.
        k: The number(s) of groups, at least 2; broadcast against ``alpha``.

    Returns:
        The standard deviation(s), an array of the broadcast shape.

    Raises:
        ValueError: If an ``alpha`` is not positive or a ``k`` is below 2.

    References:
        rosenblatt2024stratification, Thm. 9; minka2000estimating.

    Examples:
        >>> round(float(log_size_sum_sd(1.0, 2)), 4)  # log U + log(1 - U), U uniform
        0.8427
    """
    a = np.asarray(alpha, dtype=float)
    kk = np.asarray(k, dtype=float)
    if np.any(~(a > 0)):
        raise ValueError("alpha must be positive.")
    if np.any(~(kk >= 2)):
        raise ValueError("k must be at least 2: one group has sum_i log g_i = 0.")
    var = kk * polygamma(1, a) - kk**2 * polygamma(1, kk * a)
    return np.sqrt(var)


@dataclass(frozen=True)
class LogSizeSumCheck:
    """The Monte Carlo check of Thm. 9 (the paper's Figure 1).

    Attributes:
        n: Records of every point.
        runs: Dirichlet draws averaged per point.
        points: Points (k, alpha) compared.
        max_z: Largest ``|MC mean - closed form|`` in standard errors (the draws'
            standard deviation over the square root of ``runs``).
        within_two: Share of points within two standard errors.
        max_k: The number of groups of the point with the largest deviation.
        max_alpha: Its Dirichlet parameter.
        max_sd_ratio: There, the draws' standard deviation over the exact one
            (:func:`log_size_sum_sd`).
        max_z_exact: Largest ``|MC mean - closed form|`` over all points in exact
            standard errors (:func:`log_size_sum_sd` over the square root of ``runs``).
    """

    n: int
    runs: int
    points: int
    max_z: float
    within_two: float
    max_k: int
    max_alpha: float
    max_sd_ratio: float
    max_z_exact: float


def log_size_sum_check(
    table: pd.DataFrame, *, runs: int | None = None
) -> LogSizeSumCheck:
    """Compare the Monte Carlo means of ``sum_i log n_i`` with Thm. 9's closed form.

    Args:
        table: The ``log_size_sum`` table.
        runs: The draws every point must average (default: whatever they share).

    Returns:
        The check's numbers.

    Raises:
        ValueError: If a column is missing, points average different numbers of
            draws or fewer than two (no standard error), or ``n`` differs.
    """
    what = "log_size_sum_check"
    _require(
        table,
        (
            "k",
            "alpha",
            "n",
            "runs",
            "expected",
            "mc_continuous_mean",
            "mc_continuous_sd",
        ),
        what,
    )
    r = _runs(table, runs, what)
    if r < 2:
        raise ValueError(f"{what}: {r} draw per point gives no standard error.")
    ns = sorted({int(v) for v in table["n"]})
    if len(ns) > 1:
        raise ValueError(f"{what}: points differ in n {ns}; pass one experiment.")
    se = table["mc_continuous_sd"] / np.sqrt(table["runs"])
    diff = (table["mc_continuous_mean"] - table["expected"]).abs()
    # A point without spread is on the formula exactly or infinitely far from it.
    gap = pd.Series(
        np.where(
            se > 0, diff / se.where(se > 0, 1.0), np.where(diff == 0, 0.0, np.inf)
        ),
        index=table.index,
    )
    exact_sd = log_size_sum_sd(table["alpha"].to_numpy(), table["k"].to_numpy())
    exact = diff.to_numpy() / (exact_sd / np.sqrt(table["runs"].to_numpy()))
    at = gap.idxmax()
    return LogSizeSumCheck(
        n=ns[0],
        runs=r,
        points=len(gap),
        max_z=float(gap.max()),
        within_two=float((gap < 2).mean()),
        max_k=int(table.at[at, "k"]),
        max_alpha=float(table.at[at, "alpha"]),
        max_sd_ratio=float(
            table.at[at, "mc_continuous_sd"] / exact_sd[table.index.get_loc(at)]
        ),
        max_z_exact=float(exact.max()),
    )


@dataclass(frozen=True)
class Fig1Interpolation:
    """Whether Thm. 9's term lies between the paper's bounds on an alpha range.

    Attributes:
        between: True when it does at every point.
        points: Points in the range.
        ks: The numbers of groups of those points.
    """

    between: bool
    points: int
    ks: tuple[int, ...]


def fig1_interpolation(
    table: pd.DataFrame, *, low: float, high: float
) -> Fig1Interpolation:
    """Check the paper's Figure 1 claim: best case < E < worst case for alpha in range.

    Args:
        table: The ``log_size_sum`` table.
        low: Smallest alpha of the range (included).
        high: End of the range (excluded).

    Returns:
        The outcome with the points it covers.

    Raises:
        ValueError: If a column is missing or no point lies in ``[low, high)``.
    """
    what = "fig1_interpolation"
    _require(table, ("k", "alpha", "expected", "worst", "best_paper"), what)
    inside = table[(table["alpha"] >= low) & (table["alpha"] < high)]
    if inside.empty:
        raise ValueError(f"{what}: no point with alpha in [{low}, {high}).")
    between = (
        (inside["expected"] < inside["worst"])
        & (inside["expected"] > inside["best_paper"])
    ).all()
    ks = tuple(sorted(int(k) for k in inside["k"].unique()))
    return Fig1Interpolation(between=bool(between), points=len(inside), ks=ks)


@dataclass(frozen=True)
class BoundCheck:
    """The observed error of the stratified mean against Prop. 8's bound.

    Attributes:
        slope: Log-log slope of the observed 95% quantile against k, for k >= 2.
        ratio_low: Smallest bound (data's sizes) / observed quantile, k >= 2.
        ratio_high: Largest such ratio.
        k1_observed: Observed quantile at k = 1.
        k1_bound: The bound at k = 1 (the exact Laplace quantile).
        releases: Releases behind the k = 1 quantile (runs x noise draws).
        k1_z: ``(k1_observed - k1_bound)`` in standard errors of the observed
            quantile (:func:`quantile_standard_error`); positive when the observed
            quantile is above the bound.
    """

    slope: float
    ratio_low: float
    ratio_high: float
    k1_observed: float
    k1_bound: float
    releases: int
    k1_z: float


def quantile_standard_error(scale: float, *, gamma: float, releases: int) -> float:
    """Return the standard error of the ``1 - gamma`` sample quantile of ``|Lap(b)|``.

    ``|Lap(b)|`` is exponential with mean ``b``; its ``1 - gamma`` quantile is
    ``b log(1 / gamma)``, where the density is ``gamma / b``. A sample quantile of
    ``N`` independent draws has the asymptotic variance ``p (1 - p) / (N f(q)**2)``,
    here ``b**2 (1 - gamma) / (gamma N)``.

    Args:
        scale: The Laplace scale ``b``, positive.
        gamma: One minus the quantile's level, in (0, 1).
        releases: The number ``N`` of independent draws, positive.

    Returns:
        The standard error.

    Raises:
        ValueError: If an argument is out of range.

    Examples:
        >>> round(quantile_standard_error(1.0, gamma=0.05, releases=100), 4)
        0.4359
    """
    if not scale > 0:
        raise ValueError(f"scale must be positive, got {scale}.")
    if not 0 < gamma < 1:
        raise ValueError(f"gamma must be in (0, 1), got {gamma}.")
    if releases < 1:
        raise ValueError(f"releases must be positive, got {releases}.")
    return float(scale * math.sqrt((1 - gamma) / (gamma * releases)))


def bound_check(
    table: pd.DataFrame, *, gamma: float, runs: int | None = None
) -> BoundCheck:
    """Summarise ``laplace_bound_check``: growth in k and the bound's slack.

    Args:
        table: The ``laplace_bound_check`` table.
        gamma: The experiment's ``gamma``: the quantile is the ``1 - gamma`` one, and
            at k = 1 the bound is that quantile of ``|Lap(b)|``, ``b log(1 / gamma)``.
        runs: The runs every row must average (default: whatever they share).

    Returns:
        The numbers the theory chapter states.

    Raises:
        ValueError: If a column is missing, rows average different runs, there is no
            row at k = 1, fewer than two rows with k >= 2, or ``gamma`` is not in
            (0, 1).
    """
    what = "bound_check"
    if not 0 < gamma < 1:
        raise ValueError(f"{what}: gamma must be in (0, 1), got {gamma}.")
    _require(table, ("k", "runs", "noise_draws", "error_quantile", "bound_data"), what)
    _runs(table, runs, what)
    tab = table.sort_values("k")
    many = tab[tab["k"] > 1]
    one = tab[tab["k"] == 1]
    if one.empty:
        raise ValueError(f"{what}: no row at k = 1.")
    if len(many) < 2:
        raise ValueError(f"{what}: a slope needs two rows with k >= 2.")
    slope = np.polyfit(np.log(many["k"]), np.log(many["error_quantile"]), 1)[0]
    ratio = many["bound_data"] / many["error_quantile"]
    first = one.iloc[0]
    releases = int(first["runs"] * first["noise_draws"])
    # At k = 1 every release is |Lap(b)| (up to rare clipping), i.i.d. over the runs
    # and draws, and the bound is its exact 1 - gamma quantile b log(1 / gamma).
    se = quantile_standard_error(
        float(first["bound_data"]) / math.log(1 / gamma),
        gamma=gamma,
        releases=releases,
    )
    return BoundCheck(
        slope=float(slope),
        ratio_low=float(ratio.min()),
        ratio_high=float(ratio.max()),
        k1_observed=float(first["error_quantile"]),
        k1_bound=float(first["bound_data"]),
        releases=releases,
        k1_z=float((first["error_quantile"] - first["bound_data"]) / se),
    )


def log_size_texts(check: LogSizeSumCheck) -> dict[str, str]:
    """The theory chapter's glued texts of :func:`log_size_sum_check`.

    Examples:
        >>> check = LogSizeSumCheck(10000, 50, 240, 3.84, 0.94, 3, 0.75, 0.616, 3.52)
        >>> t = log_size_texts(check)
        >>> t["log-size-maxz"], t["log-size-maxz-where"], t["log-size-maxz-sd"]
        ('3.8', 'k = 3 and α = 0.75', '0.62')
    """
    return glue_texts(
        {
            "log-size-n": f"{check.n:,}",
            "log-size-runs": f"{check.runs}",
            "log-size-maxz": f"{check.max_z:.1f}",
            "log-size-within2": f"{check.within_two:.0%}",
            "log-size-points": f"{check.points}",
            "log-size-maxz-where": f"k = {check.max_k} and α = {check.max_alpha:g}",
            "log-size-maxz-sd": f"{check.max_sd_ratio:.2f}",
            "log-size-maxz-exact": f"{check.max_z_exact:.1f}",
        }
    )


def bound_texts(check: BoundCheck) -> dict[str, str]:
    """The theory chapter's glued texts of :func:`bound_check`."""
    return glue_texts(
        {
            "bound-slope": f"{check.slope:.2f}",
            "bound-ratio-lo": f"{check.ratio_low:.1f}",
            "bound-ratio-hi": f"{check.ratio_high:.1f}",
            "bound-k1-observed": f"{check.k1_observed:.4f}",
            "bound-k1-bound": f"{check.k1_bound:.4f}",
            "bound-releases": f"{check.releases:,}",
            "bound-k1-z": f"{abs(check.k1_z):.1f}",
            "bound-k1-side": "above" if check.k1_z > 0 else "below",
        }
    )


def log_size_figure(table: pd.DataFrame) -> plt.Figure:
    """Draw the paper's Figure 1: sum of log sizes against alpha, one panel per k.

    Raises:
        ValueError: If a column is missing.
    """
    cols = ("k", "alpha", "runs", "expected", "worst", "best_paper", "min_exact")
    _require(
        table,
        (*cols, "mc_continuous_mean", "mc_continuous_sd", "mc_integer_mean"),
        "log_size_figure",
    )
    ks = sorted(table["k"].unique())
    fig, axes = plt.subplots(1, len(ks), figsize=(8.0, 4.6), squeeze=False)
    blue, orange = plotting.PALETTE[0], plotting.PALETTE[1]
    for ax, k in zip(axes[0], ks, strict=True):
        part = table[table["k"] == k].sort_values("alpha")
        a = part["alpha"]
        ax.plot(a, part["worst"], color="black", lw=1.2, label="worst case k log(n/k)")
        ax.plot(
            a,
            part["expected"],
            color=blue,
            lw=1.8,
            label="closed form k(ψ(α) − ψ(kα) + log n)",
        )
        se = part["mc_continuous_sd"] / np.sqrt(part["runs"])
        ax.errorbar(
            a,
            part["mc_continuous_mean"],
            yerr=se,
            fmt="o",
            ms=3,
            color=blue,
            label="Monte Carlo, sizes n·g",
        )
        ax.plot(
            a,
            part["mc_integer_mean"],
            "s",
            ms=3,
            color=orange,
            label="Monte Carlo, integer sizes ≥ 1",
        )
        ax.plot(
            a,
            part["best_paper"],
            "--",
            color="grey",
            lw=1,
            label="paper's best case (k−1) + log(n−k)",
        )
        ax.plot(
            a,
            part["min_exact"],
            ":",
            color="grey",
            lw=1,
            label="exact minimum log(n−k+1)",
        )
        ax.set(title=f"k = {k}", xlabel="Dirichlet α")
    axes[0][0].set_ylabel("Σ log |Gᵢ|")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=2)
    return fig


def plain_log_ticks(low: float, high: float) -> list[float]:
    """Ticks at 1, 2 and 5 per decade inside ``[low, high]`` (a log axis's labels).

    Raises:
        ValueError: Unless ``0 < low <= high``.

    Examples:
        >>> plain_log_ticks(0.0015, 0.03)
        [0.002, 0.005, 0.01, 0.02]
    """
    if not 0 < low <= high:
        raise ValueError(f"plain_log_ticks: need 0 < low <= high, got {low}, {high}.")
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    ticks = [float(f"{m}e{e}") for e in range(first, last + 1) for m in (1, 2, 5)]
    return [v for v in ticks if low <= v <= high]


def bound_figure(table: pd.DataFrame) -> plt.Figure:
    """Draw the observed error of the stratified mean beside Prop. 8's bounds.

    Raises:
        ValueError: If a column is missing.
    """
    bounds_ = ["bound_data", "bound_worst", "bound_expected"]
    _require(
        table,
        ("k", "error_quantile", *bounds_, "bound_unstratified"),
        "bound_figure",
    )
    tab = table.sort_values("k")
    palette = plotting.PALETTE
    fig, ax = plt.subplots(figsize=(8.0, 5.2))
    ax.plot(
        tab["k"],
        tab["error_quantile"],
        "o-",
        color=palette[0],
        label="observed 95% quantile of |error|",
    )
    # The three bounds nearly coincide: line styles and markers tell them apart.
    styles = [
        ("bound_worst", "-", {"color": "black", "lw": 1}, "worst-case sizes"),
        (
            "bound_data",
            "s--",
            {"color": palette[1], "ms": 9, "mfc": "none"},
            "the data's sizes",
        ),
        (
            "bound_expected",
            "^:",
            {"color": palette[2], "lw": 2, "ms": 4},
            "Dirichlet expectation",
        ),
    ]
    for column, fmt, style, name in styles:
        ax.plot(tab["k"], tab[column], fmt, label=f"bound, {name}", **style)
    ax.axhline(
        tab["bound_unstratified"].iloc[0],
        color="grey",
        lw=1,
        ls="-.",
        label="one Laplace estimate on all data",
    )
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="number of groups k",
        ylabel="absolute error of the overall mean",
    )
    ax.set_xticks(tab["k"], [str(k) for k in tab["k"]])
    curves = tab[["error_quantile", *bounds_]]
    low = 0.85 * min(curves.min().min(), tab["bound_unstratified"].min())
    high = 1.3 * curves.max().max()
    ticks = plain_log_ticks(low, high)
    ax.minorticks_off()
    ax.set_yticks(ticks, [f"{v:g}" for v in ticks])
    ax.set_ylim(low, high)
    fig.legend(loc="outside lower center", ncols=2)
    return fig


def paper_race_counts(
    table3: Mapping[tuple[int, int], int] | None = None,
    *,
    total: int | None = None,
) -> pd.Series:
    """Sum the paper's Table 3 (sex x race counts, New York) over sex.

    Args:
        table3: ``(sex, race) -> count``; default
            :data:`dpnotes.paper_numbers.STRAT_TABLE3`.
        total: The records the counts must add up to; default the race example's
            ``n`` when ``table3`` is the default, else no check.

    Returns:
        The counts of race codes 1-9, indexed by code (0 for a code absent).

    Raises:
        ValueError: If the counts do not add up to ``total``.

    Examples:
        >>> paper_race_counts({(1, 1): 3, (2, 1): 4, (2, 9): 1}).tolist()
        [7, 0, 0, 0, 0, 0, 0, 0, 1]
    """
    if table3 is None:
        table3 = paper_numbers.STRAT_TABLE3
        total = paper_numbers.STRAT_NY_RACE.n if total is None else total
    counts = (
        pd.Series(dict(table3))
        .groupby(level=1)
        .sum()
        .reindex(range(1, 10), fill_value=0)
    )
    if total is not None and int(counts.sum()) != total:
        raise ValueError(
            f"paper_race_counts: the counts add up to {int(counts.sum()):,}, not "
            f"{total:,}."
        )
    return counts


def race_share_view(counts: pd.Series, *, labels: Mapping[int, str]) -> pd.DataFrame:
    """Render race counts with their labels and shares (text shares, 4 decimals).

    Args:
        counts: Records per race code, indexed by code.
        labels: Race code -> label.

    Returns:
        Columns ``RAC1P``, ``group``, ``records (NY sample)``, ``share``.

    Raises:
        ValueError: If the counts are empty or sum to zero, or a code has no label.

    Examples:
        >>> view = race_share_view(pd.Series({1: 3, 2: 1}), labels={1: "a", 2: "b"})
        >>> view.share.tolist()
        ['0.7500', '0.2500']
    """
    total = float(np.sum(counts))
    if len(counts) == 0 or total <= 0:
        raise ValueError("race_share_view: no records to share out.")
    unknown = sorted(set(counts.index) - set(labels))
    if unknown:
        raise ValueError(f"race_share_view: no label for the codes {unknown}.")
    return pd.DataFrame(
        {
            "RAC1P": counts.index,
            "group": [labels[c] for c in counts.index],
            "records (NY sample)": counts.to_numpy(),
            "share": [f"{v:.4f}" for v in counts.to_numpy() / counts.sum()],
        }
    )


def table3_alphas(counts: pd.Series, *, rng: np.random.Generator) -> dict[str, float]:
    """Fit the Dirichlet alpha to race counts by likelihood and by order statistics.

    Args:
        counts: Group counts (:func:`paper_race_counts`), all positive.
        rng: Generator of the order-statistics fit (the chapter: seed 2024).

    Returns:
        ``{"mle": ..., "mc-sorted": ...}``.
    """
    values = np.asarray(counts, dtype=float)
    return {
        "mle": bounds.fit_dirichlet_alpha(values),
        "mc-sorted": bounds.fit_dirichlet_alpha(values, method="mc-sorted", rng=rng),
    }


@dataclass(frozen=True)
class RaceAlphaRow:
    """One row of the race example: an alpha, where it comes from, and its gain.

    Attributes:
        label: Where the alpha comes from.
        data: The data it describes.
        alpha: The alpha, or None for the observed shares (no model).
        gain: The gain over the worst case at the paper's n and k.
    """

    label: str
    data: str
    alpha: float | None
    gain: WorstCaseGain


@dataclass(frozen=True)
class RaceAlpha:
    """The New York race example, every alpha and gain the theory chapter states.

    Attributes:
        rows: The paper's alpha, the fits of Table 3, the stored fits, the observed
            shares, in the table's order.
        table3_alpha: The fits of the paper's Table 3 by method.
        stored_alpha: The stored fits by ``(source, method)``.
    """

    rows: tuple[RaceAlphaRow, ...]
    table3_alpha: Mapping[str, float]
    stored_alpha: Mapping[tuple[str, str], float]

    @property
    def paper_gain(self) -> WorstCaseGain:
        """The gain at the paper's own alpha."""
        return self.rows[0].gain

    @property
    def mle_gain(self) -> WorstCaseGain:
        """The gain at the likelihood fit of the paper's Table 3."""
        return self.rows[1].gain

    @property
    def observed_gain(self) -> WorstCaseGain:
        """The gain of Table 3's own race counts (no model)."""
        return self.rows[-1].gain


def race_alpha(
    table: pd.DataFrame,
    *,
    counts: pd.Series,
    table3_fits: Mapping[str, float],
    example: paper_numbers.NyRaceExample = paper_numbers.STRAT_NY_RACE,
) -> RaceAlpha:
    """Collect the race example's alphas and their gains over the worst case.

    Args:
        table: The ``ny_race_alpha`` table.
        counts: The paper's Table 3 race counts (:func:`paper_race_counts`).
        table3_fits: :func:`table3_alphas` of ``counts``.
        example: The paper's race example (its n, k and alpha).

    Returns:
        The rows of the chapter's table and the alphas it quotes.

    Raises:
        ValueError: If a column is missing, ``table3_fits`` lacks ``"mle"``, or a
            stored source or fit method is unknown.
    """
    what = "race_alpha"
    _require(table, ("source", "method", "alpha"), what)
    if "mle" not in table3_fits:
        raise ValueError(f"{what}: table3_fits lacks the 'mle' fit.")
    unknown = sorted(set(table["source"]) - set(RACE_SOURCES))
    if unknown:
        raise ValueError(
            f"{what}: unknown sources {unknown}; known {list(RACE_SOURCES)}."
        )
    methods = sorted(set(table["method"]) - set(RACE_FIT_NAMES) - {"paper"})
    if methods:
        raise ValueError(f"{what}: unknown fit methods {methods}.")
    # The likelihood fit comes first: the chapter quotes it as the second row.
    fits = dict(sorted(table3_fits.items(), key=lambda kv: kv[0] != "mle"))
    rows = [
        (
            "the paper's value (its Monte Carlo fit)",
            "NY, full file (paper)",
            example.alpha,
        )
    ]
    rows += [
        (
            f"{RACE_FIT_NAMES[m]}, on the paper's Table 3",
            "NY, full file (paper's counts)",
            a,
        )
        for m, a in fits.items()
    ]
    stored = table.drop_duplicates(["source", "method"])
    rows += [
        (
            f"{RACE_FIT_NAMES[r.method]}, stored fit",
            RACE_SOURCES[r.source],
            float(r.alpha),
        )
        for r in stored.itertuples()
        if r.method != "paper"
    ]
    out = [
        RaceAlphaRow(lab, d, a, gain_of_alpha(a, example.k, example.n))
        for lab, d, a in rows
    ]
    out.append(
        RaceAlphaRow(
            "observed shares, no model",
            "NY, full file (paper's counts)",
            None,
            gain_of_sizes(np.asarray(counts, dtype=float)),
        )
    )
    return RaceAlpha(
        rows=tuple(out),
        table3_alpha=dict(fits),
        stored_alpha={
            (r.source, r.method): float(r.alpha) for r in stored.itertuples()
        },
    )


def race_alpha_view(result: RaceAlpha) -> pd.DataFrame:
    """Render :func:`race_alpha`'s rows as the chapter's table (text cells).

    Args:
        result: The race example.

    Returns:
        One row per alpha: its source, data, value, E and the three readings.
    """

    def pct(v: float) -> str:
        return f"{v:.0%}"

    return pd.DataFrame(
        [
            {
                "α from": r.label,
                "data": r.data,
                "α": "–" if r.alpha is None else f"{r.alpha:.3f}",
                "E": f"{r.gain.value:.1f}",
                "(a) (W − E)/(W − B)": pct(r.gain.between),
                "(b) 1 − E/W": pct(r.gain.ratio),
                "(c) 1 − √(E/W)": pct(r.gain.sqrt),
            }
            for r in result.rows
        ]
    )


def stored_gains_agree(table: pd.DataFrame, *, n: int = 200_000) -> bool:
    """Whether the stored gains at ``n`` records are :func:`gain_of_alpha`'s readings.

    Args:
        table: The ``ny_race_alpha`` table.
        n: The reference size whose rows are checked.

    Returns:
        True when every row at ``n`` matches (``numpy.isclose``).

    Raises:
        ValueError: If a column is missing or no row has ``n`` records.
    """
    what = "stored_gains_agree"
    cols = ("alpha", "k", "n", "gain_between", "gain_ratio", "gain_sqrt")
    _require(table, cols, what)
    part = table[table["n"] == n]
    if part.empty:
        raise ValueError(f"{what}: no row with n = {n:,}.")
    for r in part.itertuples():
        g = gain_of_alpha(r.alpha, int(r.k), r.n)
        if not (
            np.isclose(g.between, r.gain_between)
            and np.isclose(g.ratio, r.gain_ratio)
            and np.isclose(g.sqrt, r.gain_sqrt)
        ):
            return False
    return True


def race_texts(race: RaceAlpha) -> dict[str, str]:
    """The theory chapter's glued texts of the race example (:func:`race_alpha`).

    Raises:
        ValueError: If a fit the chapter quotes is missing.
    """
    need = [("NY-extract", "mle"), ("NM", "mle")]
    missing = [k for k in need if k not in race.stored_alpha]
    missing += [m for m in ("mle", "mc-sorted") if m not in race.table3_alpha]
    if missing:
        raise ValueError(f"race_texts: the race example lacks the fits {missing}.")
    return glue_texts(
        {
            "table3-alpha": f"{race.table3_alpha['mle']:.2f}",
            "table3-alpha-sorted": f"{race.table3_alpha['mc-sorted']:.2f}",
            "paper-gain-a": f"{race.paper_gain.between:.0%}",
            "mle-gain-a": f"{race.mle_gain.between:.0%}",
            "ny-alpha-mle": f"{race.stored_alpha['NY-extract', 'mle']:.2f}",
            "nm-alpha-mle": f"{race.stored_alpha['NM', 'mle']:.2f}",
        }
    )


def _exact(
    quantity: str, paper: float, ours: float, *, tolerance: float, why: str
) -> Verdict:
    """Judge an exact computation (no runs, so no interval) against the paper."""
    v = compare_value(quantity, paper, estimate([ours]), tolerance=tolerance)
    reason = (
        f"{why}; off by {abs(ours - paper):.2f}" if v.outcome != "reproduces" else why
    )
    # One exact number: no runs, no interval to show.
    return replace(v, ours=None, reason=reason, ours_text=f"{ours:.2f}")


def _braces(values: Iterable[float]) -> str:
    return "{" + ", ".join(f"{v:g}" for v in values) + "}"


def theory_checks(
    log_size_table: pd.DataFrame,
    race: RaceAlpha,
    *,
    simplex_alphas: Sequence[float],
    simplex_k: int = 3,
    simplex_draws: int = 600,
    claims: Mapping[str, paper_numbers.Claim] = paper_numbers.STRAT_CLAIMS,
    example: paper_numbers.NyRaceExample = paper_numbers.STRAT_NY_RACE,
) -> list[Verdict]:
    """Judge the paper's claims of the theory chapter: Figs. 1 and 10, the race example.

    The race example's alphas and gains are exact computations on the paper's own
    counts (no runs): each is shown as one number, and it reproduces when it is within
    the tolerance of the paper's (0.005 for alpha, 0.05 for a gain).

    Args:
        log_size_table: The ``log_size_sum`` table.
        race: :func:`race_alpha`'s result (with the ``"mc-sorted"`` fit).
        simplex_alphas: The alphas of the chapter's simplex figure.
        simplex_k: Its number of groups.
        simplex_draws: Its draws per panel.
        claims: The paper's claims.
        example: The paper's race example.

    Returns:
        The eight verdicts (render them with :func:`.compact_frame`).

    Raises:
        ValueError: If a table lacks a column or ``race`` lacks a fit.
    """
    lo, hi = claims["fig1-interpolation"].values
    fig1 = fig1_interpolation(log_size_table, low=lo, high=hi)
    _, k3, *alphas_fig10 = claims["fig10"].values
    alphas = tuple(simplex_alphas)
    if "mc-sorted" not in race.table3_alpha:
        raise ValueError("theory_checks: race lacks the 'mc-sorted' fit of Table 3.")
    same = k3 == simplex_k and tuple(alphas_fig10) == alphas
    ks = ", ".join(map(str, fig1.ks))
    checks = [
        Verdict(
            f"Fig. 1: Thm. 9 between the bounds, α in [{lo:g}, {hi:g})",
            None,
            None,
            "reproduces" if fig1.between else "differs",
            "a closed form: no interval"
            if fig1.between
            else "the closed form leaves the band",
            claim="between them",
            ours_text=f"at all {fig1.points} points (k = {ks})",
        ),
        Verdict(
            "Fig. 10: Dirichlet draws on the simplex",
            None,
            None,
            "reproduces" if same else "differs",
            f"the same setting, {simplex_draws} draws instead of 100"
            if same
            else "another setting than the paper's",
            claim=f"k = {k3:g}, α in {_braces(alphas_fig10)}",
            ours_text=f"k = {simplex_k}, α in {_braces(alphas)}",
        ),
        _exact(
            "NY race: α, likelihood fit of Table 3",
            example.alpha,
            race.table3_alpha["mle"],
            tolerance=0.005,
            why="the paper's own counts give about twice its α",
        ),
        _exact(
            "NY race: α, order-statistics fit of Table 3",
            example.alpha,
            race.table3_alpha["mc-sorted"],
            tolerance=0.005,
            why="our reconstruction; the paper's fit is not described",
        ),
    ]
    for label, attr in (
        ("(a) (W − E)/(W − B)", "between"),
        ("(b) 1 − E/W", "ratio"),
        ("(c) 1 − √(E/W)", "sqrt"),
    ):
        checks.append(
            _exact(
                f"NY race: gain {label}, the paper's α",
                example.gain,
                getattr(race.paper_gain, attr),
                tolerance=0.05,
                why="at the paper's n, k and α",
            )
        )
    checks.append(
        _exact(
            "NY race: gain (a), the likelihood α",
            example.gain,
            race.mle_gain.between,
            tolerance=0.05,
            why="the α its counts support",
        )
    )
    return checks


# ------------------------------------------------------------- COINPRESS chapter


_SYNTH_KEYS = ("n", "k", "alpha")


def synthetic_cells(
    table: pd.DataFrame,
    *,
    runs: int | None = None,
    methods: Sequence[str] = METHODS,
) -> pd.DataFrame:
    """Average the repeated cells of ``strat_mean_synthetic`` (one row per setting).

    The default setting is a point of every sweep, so it is stored once per sweep;
    its rows are averaged.

    Args:
        table: The ``strat_mean_synthetic`` table (any profile).
        runs: The runs every row must average (default: whatever they share).
        methods: The methods every setting must have.

    Returns:
        Columns ``n, k, alpha, method, mae, se``.

    Raises:
        ValueError: If a column is missing, rows average different runs, or a
            setting lacks a method.
    """
    what = "synthetic_cells"
    _require(table, (*_SYNTH_KEYS, "method", "mae", "se", "runs"), what)
    _runs(table, runs, what)
    _methods_complete(table, _SYNTH_KEYS, methods, what)
    return table.groupby([*_SYNTH_KEYS, "method"], as_index=False)[["mae", "se"]].mean()


def sweep(
    cells: pd.DataFrame,
    *,
    var: str,
    sweeps: Mapping[str, Sequence[float]],
    fixed: Mapping[str, float],
) -> pd.DataFrame:
    """Select one sweep: ``var`` over its grid, the other settings at the defaults.

    Args:
        cells: :func:`synthetic_cells`.
        var: ``"n"``, ``"k"`` or ``"alpha"``.
        sweeps: The experiment's grids (``config["sweeps"]``).
        fixed: The defaults (``config["fixed"]``).

    Returns:
        The rows of the sweep.

    Raises:
        ValueError: If ``var`` is unknown, a column or a default is missing, or the
            sweep has no rows.
    """
    if var not in _SYNTH_KEYS or var not in sweeps:
        raise ValueError(f"sweep: var must be one of {_SYNTH_KEYS} with a grid.")
    _require_settings(fixed, "sweep")
    _require(cells, (*_SYNTH_KEYS, "method", "mae"), "sweep")
    mask = np.isin(cells[var], sweeps[var])
    for key in _SYNTH_KEYS:
        if key != var:
            mask &= np.isclose(cells[key], fixed[key])
    part = cells[mask]
    if part.empty:
        raise ValueError(f"sweep: no rows of the sweep over {var}.")
    return part


def _require_settings(fixed: Mapping[str, float], what: str) -> None:
    missing = [k for k in _SYNTH_KEYS if k not in fixed]
    if missing:
        raise ValueError(f"{what}: the defaults lack {missing} (config['fixed']).")


def settings_text(fixed: Mapping[str, float], *, omit: str | None = None) -> str:
    """Write the default settings, e.g. ``"n = 10,000, k = 3, α = 0.3"``.

    Args:
        fixed: The defaults (``config["fixed"]``) with ``n``, ``k`` and ``alpha``.
        omit: A setting to leave out (the one a sweep varies).

    Returns:
        The text.

    Raises:
        ValueError: If a default is missing.

    Examples:
        >>> settings_text({"n": 10000, "k": 3, "alpha": 0.3}, omit="n")
        'k = 3, α = 0.3'
    """
    _require_settings(fixed, "settings_text")
    text = {
        "n": f"n = {fixed['n']:,}",
        "k": f"k = {fixed['k']}",
        "alpha": f"α = {fixed['alpha']}",
    }
    return ", ".join(t for v, t in text.items() if v != omit)


def error_ratio(
    part: pd.DataFrame,
    *,
    var: str,
    value: float,
    method: str,
    baseline: str = BASELINE,
) -> float:
    """Return ``method``'s error over ``baseline``'s at one point of a sweep.

    Args:
        part: A :func:`sweep`.
        var: The swept setting.
        value: The point.
        method: The method in the numerator.
        baseline: The method in the denominator.

    Returns:
        The ratio of mean absolute errors.

    Raises:
        ValueError: If a column, the point or a method is absent.
    """
    _require(part, (var, "method", "mae"), "error_ratio")
    row = part[np.isclose(part[var], value)].set_index("method")["mae"]
    for m in (method, baseline):
        if m not in row.index:
            raise ValueError(f"error_ratio: no {m!r} at {var} = {value}.")
    return float(row[method] / row[baseline])


#: The points of the sweeps whose error ratios the COINPRESS chapter quotes: glue
#: name -> (swept setting, value, method, format), each against COINPRESS.
SYNTHETIC_RATIOS: Mapping[str, tuple[str, float, str, str]] = {
    "ratio-k2": ("k", 2, LEAKY, ".1f"),
    "ratio-k48": ("k", 48, LEAKY, ".0f"),
    "ratio-a100": ("alpha", 100, LEAKY, ".1f"),
    "ratio-a001": ("alpha", 0.01, LEAKY, ".0f"),
    "ratio-dp-a03": ("k", 3, COUNTS, ".1f"),
    "ratio-pub-a100": ("alpha", 100, "PubStratCoinpress", ".0f"),
}

_AXIS_NAMES = {
    "n": "private sample size n",
    "k": "number of groups k",
    "alpha": "Dirichlet α",
}


def synthetic_texts(
    cells: pd.DataFrame,
    *,
    sweeps: Mapping[str, Sequence[float]],
    fixed: Mapping[str, float],
    ratios: Mapping[str, tuple[str, float, str, str]] = SYNTHETIC_RATIOS,
) -> dict[str, str]:
    """The COINPRESS chapter's glued texts: each sweep's fixed settings and the ratios.

    Args:
        cells: :func:`synthetic_cells`.
        sweeps: The experiment's grids.
        fixed: The defaults.
        ratios: Glue name -> (setting, value, method, format), as
            :data:`SYNTHETIC_RATIOS`.

    Returns:
        ``synth-fixed-<var>`` for each sweep and one text per ratio.

    Raises:
        ValueError: If a sweep, a point or a method is missing.
    """
    out = {f"synth-fixed-{v}": settings_text(fixed, omit=v) for v in _SYNTH_KEYS}
    for name, (var, value, method, spec) in ratios.items():
        part = sweep(cells, var=var, sweeps=sweeps, fixed=fixed)
        r = error_ratio(part, var=var, value=value, method=method)
        out[name] = format(r, spec)
    return glue_texts(out)


def sweep_figure(
    cells: pd.DataFrame,
    *,
    var: str,
    sweeps: Mapping[str, Sequence[float]],
    fixed: Mapping[str, float],
    methods: Sequence[str] = METHODS,
) -> plt.Figure:
    """Draw one sweep of ``strat_mean_synthetic``: each method's error, ±1 se.

    Raises:
        ValueError: As :func:`sweep`.
    """
    part = sweep(cells, var=var, sweeps=sweeps, fixed=fixed)
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    for method in methods:
        d = part[part["method"] == method].sort_values(var)
        ax.errorbar(
            d[var],
            d["mae"],
            yerr=d["se"],
            marker="o",
            ms=3,
            capsize=2,
            color=plotting.color_for(method),
            label=method,
        )
    ax.set(
        yscale="log",
        xscale="log",
        xlabel=_AXIS_NAMES[var],
        ylabel="mean absolute error of the overall mean",
    )
    # The y range covers every error bar; ticks at 1, 2, 5 per decade.
    low = 0.8 * (part["mae"] - part["se"]).clip(lower=0.5 * part["mae"]).min()
    high = 1.25 * (part["mae"] + part["se"]).max()
    ticks = plain_log_ticks(low, high)
    ax.set_yticks(ticks, [f"{v:g}" for v in ticks], minor=False)
    ax.yaxis.set_minor_locator(plt.NullLocator())
    ax.set_ylim(low, high)
    if var != "alpha":
        # A tick at every setting; n is labelled at a subset, so no labels collide.
        xs = sorted(part[var].unique())
        shown = {2_000, 4_000, 10_000, 20_000, 50_000} if var == "n" else set(xs)
        ax.minorticks_off()
        ax.set_xticks(xs, [f"{v:,.0f}" if v in shown else "" for v in xs])
    fig.legend(loc="outside lower center", ncols=2)
    return fig


@dataclass(frozen=True)
class SpreadVariant:
    """One convention of spreads, at the defaults and over every setting.

    Attributes:
        label: The convention.
        coinpress: COINPRESS's error at the defaults.
        leaky: The leaky StratCoinpress's error at the defaults.
        smallest_ratio: The smallest stratified / COINPRESS ratio over all settings.
        below: Settings where a stratified variant is below COINPRESS.
        settings: Settings compared.
    """

    label: str
    coinpress: float
    leaky: float
    smallest_ratio: float
    below: int
    settings: int

    @property
    def ratio(self) -> float:
        """The leaky StratCoinpress's error as a multiple of COINPRESS's."""
        return self.leaky / self.coinpress


def spread_variants(
    tables: Mapping[str, pd.DataFrame],
    *,
    fixed: Mapping[str, float],
    runs: int | None = None,
) -> list[SpreadVariant]:
    """Compare COINPRESS and the stratified variants under conventions of spread.

    Args:
        tables: Label -> ``strat_mean_synthetic`` table of that convention.
        fixed: The defaults (``config["fixed"]``).
        runs: The runs every row must average (default: each table's own).

    Returns:
        One :class:`SpreadVariant` per table, in order.

    Raises:
        ValueError: If a table is invalid (see :func:`synthetic_cells`) or lacks the
            default setting.
    """
    out = []
    for label, table in tables.items():
        cells = synthetic_cells(table, runs=runs)
        c = cells.pivot_table(index=list(_SYNTH_KEYS), columns="method", values="mae")
        key = (fixed["n"], fixed["k"], fixed["alpha"])
        if key not in c.index:
            raise ValueError(f"spread_variants: {label!r} lacks the default {key}.")
        d = c.loc[key]
        lowest = c[list(STRATIFIED)].min(axis=1)
        out.append(
            SpreadVariant(
                label=label,
                coinpress=float(d[BASELINE]),
                leaky=float(d[LEAKY]),
                smallest_ratio=float((lowest / c[BASELINE]).min()),
                below=int((lowest < c[BASELINE]).sum()),
                settings=len(c),
            )
        )
    return out


def spread_variant_view(variants: Sequence[SpreadVariant]) -> pd.DataFrame:
    """Render :func:`spread_variants` as the chapter's table (text cells).

    Args:
        variants: The conventions.

    Returns:
        One row per convention.
    """
    return pd.DataFrame(
        [
            {
                "groups and bound": v.label,
                "COINPRESS": report.fmt(v.coinpress, 2),
                "StratCoinpress (leaky)": report.fmt(v.leaky, 2),
                "ratio": f"{v.ratio:.1f}",
                "smallest ratio, any variant": f"{v.smallest_ratio:.2f}",
                "stratified below COINPRESS": f"{v.below} of {v.settings}",
            }
            for v in variants
        ]
    )


def spread_texts(
    variants: Sequence[SpreadVariant], *, fixed: Mapping[str, float]
) -> dict[str, str]:
    """The COINPRESS chapter's glued texts of :func:`spread_variants`.

    Args:
        variants: The three conventions, in the chapter's order (unit spreads; the
            appendix's spreads with our bound; with the authors' unit bound).
        fixed: The defaults.

    Raises:
        ValueError: Unless there are three conventions.
    """
    if len(variants) != 3:
        raise ValueError(f"spread_texts: expected 3 conventions, got {len(variants)}.")
    return glue_texts(
        {
            "spread-settings": str(variants[-1].settings),
            "spread-default": settings_text(fixed),
            "spread-unit-cp": report.fmt(variants[2].coinpress, 2),
            "spread-cover-cp": report.fmt(variants[1].coinpress, 2),
        }
    )


@dataclass(frozen=True)
class SyntheticClaims:
    """What the COINPRESS chapter says about the paper's synthetic claims.

    Attributes:
        runs: Runs per point.
        n_min: The paper's "n >= ..." of Figure 3.
        err_max: The paper's largest error at those n.
        worst_error: Our largest error at those n, any method (a mean over runs).
        worst_se: Its standard error over the runs.
        worst_method: The method that has it.
        ratio_n: Leaky StratCoinpress / COINPRESS over the n sweep (indexed by n).
        ratio_k: The same over the k sweep (indexed by k).
        below: Settings where a stratified variant is below COINPRESS.
        settings: Settings compared.
    """

    runs: int
    n_min: float
    err_max: float
    worst_error: float
    worst_se: float
    worst_method: str
    ratio_n: pd.Series
    ratio_k: pd.Series
    below: int
    settings: int


def synthetic_claims(
    cells: pd.DataFrame,
    *,
    sweeps: Mapping[str, Sequence[float]],
    fixed: Mapping[str, float],
    runs: int,
    claims: Mapping[str, paper_numbers.Claim] = paper_numbers.STRAT_CLAIMS,
) -> SyntheticClaims:
    """Evaluate the paper's Figure 3 and 7 and abstract claims on our mixtures.

    Args:
        cells: :func:`synthetic_cells` of the default convention.
        sweeps: The experiment's grids.
        fixed: The defaults.
        runs: The runs per point (``config["runs"]``).
        claims: The paper's claims.

    Returns:
        The numbers the claims are judged on.

    Raises:
        ValueError: If a sweep has no rows or no point reaches the paper's n.
    """
    n_min, err_max = claims["fig3-error"].values
    by_n = sweep(cells, var="n", sweeps=sweeps, fixed=fixed)
    by_k = sweep(cells, var="k", sweeps=sweeps, fixed=fixed)
    large = by_n[by_n["n"] >= n_min]
    if large.empty:
        raise ValueError(f"synthetic_claims: no point with n >= {n_min:,.0f}.")
    worst = large.loc[large["mae"].idxmax()]

    def ratios(part: pd.DataFrame, var: str) -> pd.Series:
        wide = part.pivot_table(index=var, columns="method", values="mae")
        return wide[LEAKY] / wide[BASELINE]

    c = cells.pivot_table(index=list(_SYNTH_KEYS), columns="method", values="mae")
    return SyntheticClaims(
        runs=int(runs),
        n_min=float(n_min),
        err_max=float(err_max),
        worst_error=float(worst["mae"]),
        worst_se=float(worst["se"]),
        worst_method=str(worst["method"]),
        ratio_n=ratios(by_n, "n"),
        ratio_k=ratios(by_k, "k"),
        below=int((c[list(STRATIFIED)].min(axis=1) < c[BASELINE]).sum()),
        settings=len(c),
    )


def at_most(
    quantity: str, bound: float, ours: Estimate, *, note: str = "", decimals: int = 3
) -> Verdict:
    """Judge a claim "at most ``bound``" by our interval.

    It reproduces when the whole interval is at most ``bound``, differs when the whole
    interval is above it, and is inconclusive when the interval holds it.

    Args:
        quantity: What is compared.
        bound: The paper's bound.
        ours: Our estimate.
        note: Appended to the reason (e.g. which method has the value).
        decimals: Decimals of the numbers shown.

    Returns:
        The :class:`~dpnotes.findings.verdict.Verdict`.

    Examples:
        >>> at_most("error", 0.01, mc_mean(0.006, se=0.001, runs=50)).outcome
        'reproduces'
        >>> at_most("error", 0.01, mc_mean(0.0095, se=0.001, runs=50)).outcome
        'inconclusive'
    """
    if ours.high <= bound:
        outcome, why = "reproduces", "our interval is below it"
    elif ours.low > bound:
        outcome, why = "differs", "our interval is above it"
    else:
        outcome, why = "inconclusive", f"our interval holds {bound:g}"
    return Verdict(
        quantity,
        float(bound),
        ours,
        outcome,
        f"{why} ({note})" if note else why,
        claim=f"at most {bound:g}",
        decimals=decimals,
    )


def coinpress_checks(
    result: SyntheticClaims,
    *,
    claims: Mapping[str, paper_numbers.Claim] = paper_numbers.STRAT_CLAIMS,
    authors: Mapping[str, paper_numbers.AuthorsNumber] = paper_numbers.STRAT_AUTHORS,
) -> list[Verdict]:
    """Judge the paper's claims about its synthetic experiments (Figures 3, 6, 7).

    The largest error at large n is our Monte Carlo mean with its interval (it
    reproduces when the whole interval is below the paper's bound); the other claims
    are directions and counts, judged as the reasons say.

    Args:
        result: :func:`synthetic_claims`.
        claims: The paper's claims.
        authors: The numbers of the authors' files.

    Returns:
        The seven verdicts (render them with :func:`.compact_frame`).
    """
    r = result

    def fmt_a(key: str) -> str:
        return ", ".join(f"{v:g}" for v in authors[key].values)

    rn, rk = r.ratio_n, r.ratio_k
    paper_runs = int(claims["fig3-runs"].values[0])
    worst = mc_mean(r.worst_error, se=r.worst_se, runs=r.runs)
    return [
        Verdict(
            "Fig. 3: runs per point",
            float(paper_runs),
            None,
            "reproduces" if r.runs == paper_runs else "differs",
            "the same" if r.runs == paper_runs else "fewer runs than the paper",
            ours_text=f"{r.runs}",
            authors=fmt_a("fig3-runs"),
        ),
        replace(
            at_most(
                f"Fig. 3: largest error at n ≥ {r.n_min:,.0f}",
                r.err_max,
                worst,
                note=r.worst_method,
                decimals=4,
            ),
            authors=f"{fmt_a('fig3-error')} (three methods)",
        ),
        Verdict(
            "Fig. 3: stratified against COINPRESS as n grows",
            None,
            None,
            "differs" if rn.iloc[-1] >= rn.iloc[0] else "reproduces",
            "the cost does not shrink with n"
            if rn.iloc[-1] >= rn.iloc[0]
            else "the cost shrinks with n",
            claim=_SHORT["fig3-converge"],
            ours_text=f"leaky / COINPRESS: {rn.iloc[0]:.1f}× at n = {rn.index[0]:,}, "
            f"{rn.iloc[-1]:.1f}× at {rn.index[-1]:,}",
            authors=f"StratCoinpress {fmt_a('fig3-strat-error')}, flat in n",
        ),
        Verdict(
            "Abstract: COINPRESS's error, stratified",
            None,
            None,
            "differs" if 2 * r.below < r.settings else "reproduces",
            "noise in every group adds error (about √k)"
            if 2 * r.below < r.settings
            else "below in most settings",
            claim=_SHORT["abstract-coinpress"],
            ours_text=f"a stratified variant below in {r.below} of {r.settings} "
            "settings",
            authors="StratCoinpress below in "
            f"{fmt_a('fig3-below').replace(', ', ' of ')} cells",
        ),
        Verdict(
            "Fig. 7: error against k",
            None,
            None,
            "differs" if rk.iloc[-1] > 3 * rk.iloc[0] else "reproduces",
            "grows with k, faster than √k once groups get tiny"
            if rk.iloc[-1] > 3 * rk.iloc[0]
            else "stable across k",
            claim=_SHORT["fig7-k"],
            ours_text=f"leaky / COINPRESS: {rk.iloc[0]:.1f}× at k = {rk.index[0]}, "
            f"{rk.iloc[-1]:.0f}× at k = {rk.index[-1]}",
            authors="StratCoinpress below in most cells",
        ),
        Verdict(
            "Fig. 6: complete synthetic results",
            None,
            None,
            "not comparable",
            "no value stated, and we cannot see the figure",
            claim=_SHORT["fig6"],
            ours_text="the figures above",
        ),
        Verdict(
            "Appendix B: spread of each group",
            None,
            None,
            "reproduces",
            "both computed (the table above); no conclusion changes",
            claim="σᵢ drawn from U(0.1, 2)",
            ours_text="σᵢ = 1 by default; U(0.1, 2) as a setting",
            authors="σᵢ = 1 (helpers/utils.py)",
        ),
    ]


# ---------------------------------------------------------------- census chapter


_CENSUS_COLUMNS = ("variable", "attributes", "k", "method", "runs")


def _number(v: float) -> str:
    return f"{v:,.0f}" if float(v).is_integer() else report.fmt(v, 3)


def descriptive_view(table: pd.DataFrame) -> pd.DataFrame:
    """Render ``census_descriptive`` as the chapter's appendix-D table (text cells).

    Args:
        table: The ``census_descriptive`` table.

    Returns:
        Per variable: records outside its universe (count and share) and its
        statistics over the universe.

    Raises:
        ValueError: If a column is missing.
    """
    cols = ("variable", "records", "missing", "mean", "sd", "min", "median", "max")
    _require(table, cols, "descriptive_view")
    t = table
    return pd.DataFrame(
        {
            "variable": t["variable"],
            "not applicable": [
                f"{m:,} ({m / r:.0%})"
                for m, r in zip(t["missing"], t["records"], strict=True)
            ],
            **{c: t[c].map(_number) for c in ("mean", "sd", "min", "median", "max")},
        }
    )


def universe_size(table: pd.DataFrame, *, variable: str) -> int:
    """Return how many records have a value of ``variable`` (records - missing).

    Raises:
        ValueError: If a column or the variable is missing.
    """
    _require(table, ("variable", "records", "missing"), "universe_size")
    row = table[table["variable"] == variable]
    if row.empty:
        raise ValueError(f"universe_size: no row of {variable!r}.")
    return int(row["records"].iloc[0] - row["missing"].iloc[0])


def descriptive_records(table: pd.DataFrame) -> int:
    """Return the records of the state's person file.

    Raises:
        ValueError: If a column is missing or the variables disagree.
    """
    _require(table, ("records",), "descriptive_records")
    values = sorted({int(v) for v in table["records"]})
    if len(values) > 1:
        raise ValueError(f"descriptive_records: variables disagree: {values}.")
    return values[0]


def prior_view(variables: Mapping[str, Mapping[str, float]]) -> pd.DataFrame:
    """Render the public prior intervals and spreads of the census variables.

    Args:
        variables: ``variable -> {"lower", "upper", "sigma"}`` (the experiment's
            ``CENSUS_VARIABLES``).

    Returns:
        One row per variable (text cells).
    """
    return pd.DataFrame(
        [
            {
                "variable": v,
                "prior interval for the mean": (
                    f"[{s['lower']:,.0f}, {s['upper']:,.0f}]"
                ),
                "σ (public spread bound)": f"{s['sigma']:,.0f}",
            }
            for v, s in variables.items()
        ]
    )


def census_mean(
    table: pd.DataFrame,
    *,
    variable: str,
    method: str = BASELINE,
    column: str = "normalised_error",
    attributes: str | None = None,
    runs: int | None = None,
) -> float:
    """Mean of ``column`` over one method's rows of a variable (one attribute set).

    Each row is already a mean over runs; rows are averaged with equal weight
    (attribute sets, or the one set ``attributes`` such as ``"SEX×AGE"``).

    Args:
        table: A ``strat_mean_census`` table.
        variable: ``"SCHL"``, ``"WKHP"``, ``"JWMNP"`` or ``"PINCP"``.
        method: The method.
        column: ``"normalised_error"`` or ``"parity_error"``.
        attributes: One attribute set, or None for the mean over all.
        runs: The runs every row must average (default: whatever they share).

    Returns:
        The mean.

    Raises:
        ValueError: If a column is missing, rows average different runs, or no row
            matches.
    """
    what = "census_mean"
    _require(table, (*_CENSUS_COLUMNS, column), what)
    _runs(table, runs, what)
    part = table[(table["variable"] == variable) & (table["method"] == method)]
    if attributes is not None:
        part = part[part["attributes"] == attributes]
    if part.empty:
        raise ValueError(
            f"{what}: no rows of {method!r} for {variable!r}"
            + (f" stratified by {attributes!r}." if attributes else ".")
        )
    return float(part[column].mean())


def census_ratio(
    table: pd.DataFrame,
    *,
    variable: str,
    method: str,
    baseline: str = BASELINE,
    column: str = "normalised_error",
    attributes: str | None = None,
) -> float:
    """Return ``method``'s :func:`census_mean` over ``baseline``'s.

    Args:
        table: A ``strat_mean_census`` table.
        variable: The variable.
        method: The method in the numerator.
        baseline: The method in the denominator.
        column: ``"normalised_error"`` or ``"parity_error"``.
        attributes: One attribute set, or None for the mean over all.

    Returns:
        The ratio.

    Raises:
        ValueError: As :func:`census_mean`.
    """
    options = {"variable": variable, "column": column, "attributes": attributes}
    ours = census_mean(table, method=method, **options)
    return ours / census_mean(table, method=baseline, **options)


@dataclass(frozen=True)
class Wins:
    """Per variable and stratified method: the settings where it beats COINPRESS.

    Attributes:
        better_at: ``method -> variable -> settings`` (ascending) where the method's
            mean is below COINPRESS's.
        compared: ``method -> variable -> settings`` both have.
    """

    better_at: Mapping[str, Mapping[str, tuple]]
    compared: Mapping[str, Mapping[str, int]]

    @property
    def variables(self) -> tuple[str, ...]:
        """The variables, in the table's order."""
        return tuple(next(iter(self.compared.values())))

    def wins(self, variable: str) -> int:
        """(Method, setting) pairs of ``variable`` where a stratified method wins."""
        return sum(len(b[variable]) for b in self.better_at.values())

    def pairs(self, variable: str) -> int:
        """(Method, setting) pairs of ``variable`` compared."""
        return sum(c[variable] for c in self.compared.values())

    def text(self, variable: str) -> str:
        """``"wins of pairs"``, e.g. ``"36 of 45"``."""
        return f"{self.wins(variable)} of {self.pairs(variable)}"

    @property
    def total_wins(self) -> int:
        """Wins over every variable."""
        return sum(self.wins(v) for v in self.variables)

    @property
    def total_pairs(self) -> int:
        """Pairs over every variable."""
        return sum(self.pairs(v) for v in self.variables)


def stratified_wins(
    table: pd.DataFrame,
    *,
    x: str = "k",
    value: str = "normalised_error",
    methods: Sequence[str] = STRATIFIED,
    baseline: str = BASELINE,
    runs: int | None = None,
) -> Wins:
    """List, per variable, where each stratified method beats COINPRESS.

    Rows sharing a setting ``x`` (several attribute sets with the same ``k``) are
    averaged first (:func:`dpnotes.report.better_at`).

    Args:
        table: A ``strat_mean_census`` table.
        x: ``"k"`` or ``"attributes"``.
        value: ``"normalised_error"`` or ``"parity_error"`` (lower is better).
        methods: The stratified methods.
        baseline: The method they are compared with.
        runs: The runs every row must average (default: whatever they share).

    Returns:
        The wins.

    Raises:
        ValueError: If a column is missing, rows average different runs, or a
            setting lacks a method.
    """
    what = "stratified_wins"
    _require(table, (*_CENSUS_COLUMNS, value), what)
    _runs(table, runs, what)
    _methods_complete(table, ("variable", "attributes"), (baseline, *methods), what)
    better, compared = {}, {}
    for m in methods:
        w = report.better_at(
            table, x=x, value=value, method=m, baseline=baseline, by="variable"
        )
        names = list(w["variable"])
        better[m] = dict(zip(names, map(tuple, w["better at"]), strict=True))
        compared[m] = dict(zip(names, map(int, w["compared"]), strict=True))
    return Wins(better_at=better, compared=compared)


def overall_wins_view(wins: Wins) -> pd.DataFrame:
    """Render :func:`stratified_wins` as a table of the winning settings per method.

    Args:
        wins: The wins.

    Returns:
        Per variable, one text column per method (``"none"`` without a win).
    """
    return pd.DataFrame(
        {"variable": list(wins.variables)}
        | {
            m: [", ".join(map(str, b[v])) or "none" for v in wins.variables]
            for m, b in wins.better_at.items()
        }
    )


def error_at_largest_k(table: pd.DataFrame) -> pd.DataFrame:
    """Mean normalised error per variable and method at the largest k.

    Args:
        table: A ``strat_mean_census`` table.

    Returns:
        Variables as rows, methods as columns.

    Raises:
        ValueError: If a column is missing.
    """
    _require(table, (*_CENSUS_COLUMNS, "normalised_error"), "error_at_largest_k")
    top = table[table["k"] == table["k"].max()]
    return (
        top.groupby(["variable", "method"], sort=False)["normalised_error"]
        .mean()
        .unstack()
    )


@dataclass(frozen=True)
class ParityLower:
    """Where a stratified method's parity error is below COINPRESS's.

    Attributes:
        lower_at: ``variable -> k`` values where it is lower.
        compared: ``variable -> k`` values compared.
        at_k: ``variable -> (COINPRESS, method)`` mean parity errors at the coarse k.
    """

    lower_at: Mapping[str, tuple[int, ...]]
    compared: Mapping[str, int]
    at_k: Mapping[str, tuple[float, float]]

    @property
    def k_top(self) -> int:
        """The largest k at which it is lower (0 if none)."""
        return max((max(ks, default=0) for ks in self.lower_at.values()), default=0)

    @property
    def coarse(self) -> bool:
        """Lower only for groupings without race (k at most 20)."""
        return self.k_top <= 20


def parity_lower(
    table: pd.DataFrame,
    *,
    method: str = COUNTS,
    k: int = 2,
    runs: int | None = None,
) -> ParityLower:
    """Compare a stratified method's parity error with COINPRESS's, per variable.

    Args:
        table: A ``strat_mean_census`` table.
        method: The stratified method.
        k: The coarse grouping whose means are reported (2: sex or disability alone,
            averaged).
        runs: The runs every row must average (default: whatever they share).

    Returns:
        The comparison.

    Raises:
        ValueError: If a column is missing, rows average different runs, a setting
            lacks a method, or no row has ``k`` groups for a variable.
    """
    w = stratified_wins(table, value="parity_error", methods=(method,), runs=runs)
    two = table[table["k"] == k].groupby(["variable", "method"])["parity_error"].mean()
    at_k = {}
    for v in w.variables:
        if (v, BASELINE) not in two.index or (v, method) not in two.index:
            raise ValueError(f"parity_lower: no rows of {v!r} with k = {k}.")
        at_k[v] = (float(two[v, BASELINE]), float(two[v, method]))
    return ParityLower(
        lower_at=dict(w.better_at[method]), compared=dict(w.compared[method]), at_k=at_k
    )


def parity_view(result: ParityLower) -> pd.DataFrame:
    """Render :func:`parity_lower` as the chapter's table (text cells)."""
    return pd.DataFrame(
        {
            "variable": list(result.lower_at),
            "COINPRESS": [report.fmt(result.at_k[v][0], 2) for v in result.lower_at],
            "DP counts": [report.fmt(result.at_k[v][1], 2) for v in result.lower_at],
            "DP counts lower at": [
                ", ".join(map(str, ks)) or "none" for ks in result.lower_at.values()
            ],
        }
    )


@dataclass(frozen=True)
class CensusAuthors:
    """The authors' stored New York run, per variable (``stratified_data_means.db``).

    Attributes:
        means: Exact overall means.
        sizes: Records of each variable.
        wins: Attribute sets (of 31) where the stratified estimate is closer.
        bias: COINPRESS's overall estimate minus the exact mean (no PINCP).
        relative: The same as a share of the mean (no PINCP).
    """

    means: Mapping[str, float]
    sizes: Mapping[str, float]
    wins: Mapping[str, float]
    bias: Mapping[str, float]
    relative: Mapping[str, float]


def census_authors(
    authors: Mapping[str, paper_numbers.AuthorsNumber] = paper_numbers.STRAT_AUTHORS,
) -> CensusAuthors:
    """Key the authors' census numbers by variable.

    Args:
        authors: The numbers of the authors' files.

    Returns:
        The numbers by variable.
    """

    def by_var(key: str, variables: Sequence[str] = _VARS) -> dict[str, float]:
        return dict(zip(variables, authors[key].values, strict=True))

    return CensusAuthors(
        means=by_var("table1-means"),
        sizes=by_var("table1-sizes"),
        wins=by_var("fig2-overall"),
        bias=by_var("fig2-coinpress-bias", _VARS[:3]),
        relative=by_var("fig2-coinpress-relative", _VARS[:3]),
    )


def wins_tally(
    table: pd.DataFrame,
    *,
    variable: str,
    x: str = "k",
    value: str = "normalised_error",
    methods: Sequence[str] = STRATIFIED,
    baseline: str = BASELINE,
    runs: int | None = None,
) -> Tally:
    """Count the (method, setting) pairs where a stratified method beats COINPRESS.

    Rows sharing a setting ``x`` are averaged (as :func:`stratified_wins` does), with
    the standard error of that average from the rows' ``<value>_se``; the difference
    COINPRESS minus the method is positive where the method wins, and its interval
    counts both standard errors as independent (the methods' runs share data, so
    this is a conservative width when their errors move together).

    Args:
        table: A ``strat_mean_census`` table with ``<value>_se``.
        variable: The variable.
        x: ``"k"`` or ``"attributes"``.
        value: ``"normalised_error"`` or ``"parity_error"`` (lower is better).
        methods: The stratified methods.
        baseline: The method they are compared with.
        runs: The runs every row must average (default: whatever they share).

    Returns:
        The :class:`~dpnotes.findings.verdict.Tally`: raw wins and wins beyond doubt.

    Raises:
        ValueError: If a column is missing, rows average different runs, a setting
            lacks a method, or the variable has no rows.
    """
    what = "wins_tally"
    _require(table, (*_CENSUS_COLUMNS, value, f"{value}_se"), what)
    r = _runs(table, runs, what)
    part = table[table["variable"] == variable]
    if part.empty:
        raise ValueError(f"{what}: no rows of {variable!r}.")
    _methods_complete(part, ("attributes",), (baseline, *methods), what)
    grouped = part.groupby(["method", x])
    mean = grouped[value].mean()
    se = grouped[f"{value}_se"].apply(lambda v: math.sqrt((v**2).sum()) / len(v))
    diffs = []
    for m in methods:
        for setting in sorted(mean[baseline].index):
            d = mean[baseline, setting] - mean[m, setting]
            e = math.hypot(se[baseline, setting], se[m, setting])
            diffs.append(mc_mean(d, se=e, runs=r))
    return tally(diffs)


def census_checks(
    table: pd.DataFrame,
    descriptive: pd.DataFrame,
    *,
    state_name: str,
    claims: Mapping[str, paper_numbers.Claim] = paper_numbers.STRAT_CLAIMS,
    authors: Mapping[str, paper_numbers.AuthorsNumber] = paper_numbers.STRAT_AUTHORS,
    table1: Mapping[str, tuple] = paper_numbers.STRAT_TABLE1,
) -> list[Verdict]:
    """Judge the paper's Table 1 and its claims about Figures 2 and 8.

    Table 1 is New York's; ours is another state's, so its rows are not comparable.
    A claim about the overall mean is judged on the (method, k) pairs where a
    stratified variant is below COINPRESS: most of them reproduce "sometimes
    improves", fewer differ; the count beyond doubt (:func:`wins_tally`) is shown.

    Args:
        table: The ``strat_mean_census`` table (our spreads).
        descriptive: The ``census_descriptive`` table of the same state.
        state_name: The state's name, for the reasons.
        claims: The paper's claims.
        authors: The numbers of the authors' files.
        table1: The paper's Table 1.

    Returns:
        The ten verdicts (render them with :func:`.compact_frame`).

    Raises:
        ValueError: If a table is invalid or lacks one of the four variables.
    """
    a = census_authors(authors)
    _require(table, _CENSUS_COLUMNS, "census_checks")
    _require(descriptive, ("variable", "mean", "records", "missing"), "census_checks")
    ours = descriptive.set_index("variable")
    absent = [v for v in _VARS if v not in ours.index]
    if absent:
        raise ValueError(f"census_checks: the descriptive table lacks {absent}.")
    checks = [
        Verdict(
            f"Table 1: mean of {var} (records)",
            None,
            None,
            "not comparable",
            f"{state_name}, not New York",
            claim=f"{table1[var][1]:,.15g} ({table1[var][0]:,})",
            ours_text=f"{report.fmt(ours.loc[var, 'mean'], 4)} "
            f"({universe_size(descriptive, variable=var):,})",
            authors=f"{a.means[var]:,.15g} ({a.sizes[var]:,.0f})",
        )
        for var in _VARS
    ]
    # The finest stratification crosses every attribute: its k is the product of
    # the level counts.
    levels = [int(v) for v in claims["fig2-groups"].values]
    same = int(table["k"].max()) == math.prod(levels)
    checks.append(
        Verdict(
            "Fig. 2: the stratifying attributes (levels)",
            None,
            None,
            "reproduces" if same else "differs",
            "the text's four; the authors' code adds nativity"
            if same
            else "other levels than the paper's",
            claim=f"sex, race, age, disability ({', '.join(map(str, levels))})",
            ours_text=f"the same, fixed age buckets: k up to {int(table['k'].max())}",
            authors="the same and nativity: 31 sets",
        )
    )
    w = stratified_wins(table)
    absent = [v for v in _VARS if v not in w.variables]
    if absent:
        raise ValueError(f"census_checks: no rows of the variables {absent}.")
    for var in _VARS:
        t = wins_tally(table, variable=var)
        hard = var == "PINCP"
        loses = 2 * t.wins < t.total
        checks.append(
            Verdict(
                f"Fig. 2/8, top: overall mean of {var}",
                None,
                None,
                "reproduces" if loses == hard else "differs",
                ("stratifying rarely wins on PINCP, as on every variable here")
                if hard
                else (
                    "no clipping bias to remove with spreads that cover the data"
                    if loses
                    else "below COINPRESS at most k"
                ),
                claim=_SHORT[("fig2-pincp" if hard else "fig2-overall")],
                ours_text=f"stratified below at {t.wins} of {t.total} (method, k) "
                f"({t.clear_wins} beyond doubt)",
                authors=f"closer in {a.wins[var]:g} of 31 sets"
                + ("" if hard else f"; COINPRESS off by {a.relative[var]:.1%}"),
            )
        )
    pe = parity_lower(table)
    checks.append(
        Verdict(
            "Fig. 2/8, bottom: parity error",
            None,
            None,
            "differs" if pe.coarse else "reproduces",
            "tiny intersections make it explode"
            if pe.coarse
            else "lower for fine groupings too",
            claim=_SHORT["fig2-parity"],
            ours_text=f"DP counts lower only at k ≤ {pe.k_top} (of "
            f"{max(pe.compared.values())} values of k)",
        )
    )
    return checks


def census_figure(
    table: pd.DataFrame, *, column: str, ylabel: str, methods: Sequence[str] = METHODS
) -> plt.Figure:
    """Draw ``column`` against k for every method, one panel per variable.

    Settings with the same k (several attribute sets) are averaged.

    Raises:
        ValueError: If a column is missing.
    """
    _require(table, (*_CENSUS_COLUMNS, column), "census_figure")
    variables = list(dict.fromkeys(table["variable"]))
    ncols = 2 if len(variables) > 1 else 1
    nrows = -(-len(variables) // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(8.0, 2.9 * nrows + 1.0), squeeze=False, sharex=True
    )
    for ax, var in zip(axes.flat, variables, strict=False):
        part = table[table["variable"] == var]
        for method in methods:
            d = part[part["method"] == method].groupby("k", as_index=False)[column]
            d = d.mean()
            ax.plot(
                d["k"],
                d[column],
                "o-",
                ms=4,
                lw=1.5,
                color=plotting.color_for(method),
                label=method,
            )
        ax.set(xscale="log", yscale="log", title=var)
        ax.set_xticks([2, 10, 100], ["2", "10", "100"])
        ax.minorticks_off()
    for ax in axes[-1]:
        ax.set_xlabel("number of groups k")
    for row in axes:
        row[0].set_ylabel(ylabel)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=2)
    return fig


def census_texts(
    table: pd.DataFrame,
    descriptive: pd.DataFrame,
    *,
    variable: str = "SCHL",
    finest: str = "SEX×RAC1P×AGE×DIS",
) -> dict[str, str]:
    """The census chapter's glued headline numbers (our spreads).

    The leaky StratCoinpress against COINPRESS for ``variable``: its normalised error
    with sex alone and with every attribute (``finest``), its parity error with sex
    and with sex × age; the records of the state and of WKHP's universe; the number
    of k values compared for the overall mean and for parity.

    Raises:
        ValueError: As :func:`census_mean`, :func:`stratified_wins` and
            :func:`parity_lower`.
    """
    mean = census_mean
    err = {"variable": variable, "column": "normalised_error"}
    pe = {"variable": variable, "column": "parity_error"}
    texts = {
        "schl-k2-strat": f"{mean(table, **err, attributes='SEX', method=LEAKY):.2%}",
        "schl-k2-cp": f"{mean(table, **err, attributes='SEX'):.2%}",
        "schl-k180-strat": f"{mean(table, **err, attributes=finest, method=LEAKY):.2%}",
        "schl-k180-ratio": report.fmt(
            census_ratio(table, **err, attributes=finest, method=LEAKY), 2
        ),
        "wkhp-n": f"{universe_size(descriptive, variable='WKHP'):,}",
        "desc-records": f"{descriptive_records(descriptive):,}",
        "overall-k-compared": compared_text(
            stratified_wins(table).compared[LEAKY].values()
        ),
        "parity-k-compared": compared_text(parity_lower(table).compared.values()),
    }
    for name, attributes in (("k2", "SEX"), ("k10", "SEX×AGE")):
        strat = mean(table, **pe, attributes=attributes, method=LEAKY)
        texts[f"schl-pe-{name}-strat"] = report.fmt(strat, 2)
        texts[f"schl-pe-{name}-cp"] = report.fmt(
            mean(table, **pe, attributes=attributes), 2
        )
    return glue_texts(texts)


def unit_spread_texts(
    table: pd.DataFrame, unit: pd.DataFrame, *, authors: CensusAuthors
) -> dict[str, str]:
    """The census chapter's glued numbers of the unit-spread comparison.

    Args:
        table: ``strat_mean_census`` with our spreads.
        unit: ``strat_mean_census`` with ``spread=unit``.
        authors: :func:`census_authors`.

    Returns:
        COINPRESS's error with σ = 1 and in the authors' run (SCHL, WKHP, JWMNP), the
        leaky StratCoinpress by age with σ = 1 (SCHL, WKHP), the wins per attribute
        set with σ = 1 (every variable), COINPRESS's SCHL error and the wins per
        variable with our spreads.

    Raises:
        ValueError: If a table is invalid or lacks a variable.
    """
    texts = {}
    for v in _VARS[:3]:
        texts[f"unit-{v}"] = f"{census_mean(unit, variable=v):.1%}"
        texts[f"unit-{v}-authors"] = f"{authors.relative[v]:.1%}"
    for v in _VARS[:2]:
        by_age = census_mean(unit, variable=v, method=LEAKY, attributes="AGE")
        texts[f"unit-{v}-age"] = f"{by_age:.1%}"
    texts["cover-SCHL"] = f"{census_mean(table, variable='SCHL'):.2%}"
    wins_unit = stratified_wins(unit, x="attributes")
    wins_cover = stratified_wins(table, x="attributes")
    for v in _VARS:
        texts[f"unit-{v}-wins"] = wins_unit.text(v)
    texts["cover-wins"] = ", ".join(
        f"{v} {wins_cover.wins(v)}" for v in wins_cover.variables
    )
    return glue_texts(texts)


def unit_spread_view(
    table: pd.DataFrame,
    unit: pd.DataFrame,
    *,
    authors: CensusAuthors,
) -> pd.DataFrame:
    """Render our spreads, the authors' unit spread and their stored run side by side.

    Args:
        table: ``strat_mean_census`` with our spreads.
        unit: ``strat_mean_census`` with ``spread=unit``.
        authors: :func:`census_authors`.

    Returns:
        Per variable: COINPRESS's normalised error (ours, unit, the authors'), the
        leaky StratCoinpress by age with the unit spread, and the wins per attribute
        set of each (text cells).

    Raises:
        ValueError: If a table is invalid or lacks a variable the other has.
    """
    ours = stratified_wins(table, x="attributes")
    with_unit = stratified_wins(unit, x="attributes")
    rows = []
    for var in ours.variables:
        rel = authors.relative.get(var)
        by_age = census_mean(unit, variable=var, method=LEAKY, attributes="AGE")
        rows.append(
            {
                "variable": var,
                "COINPRESS: ours": f"{census_mean(table, variable=var):.2%}",
                "COINPRESS: unit": f"{census_mean(unit, variable=var):.2%}",
                "COINPRESS: authors": "–" if rel is None else f"{rel:.1%}",
                "by age: unit": f"{by_age:.2%}",
                "wins: ours": ours.text(var),
                "wins: unit": with_unit.text(var),
                "wins: authors": f"{authors.wins[var]} of 31",
            }
        )
    return pd.DataFrame(rows)


def coinpress_bias_is_constant(
    table: pd.DataFrame, *, variable: str, tolerance: float = 0.1
) -> bool:
    """Whether COINPRESS's error is the same in every attribute set (a bias).

    Args:
        table: A ``strat_mean_census`` table.
        variable: The variable.
        tolerance: Largest relative spread (max below ``(1 + tolerance) * min``).

    Returns:
        True when the error barely moves across attribute sets.

    Raises:
        ValueError: If a column or the variable's COINPRESS rows are missing.
    """
    _require(
        table, (*_CENSUS_COLUMNS, "normalised_error"), "coinpress_bias_is_constant"
    )
    part = table[(table["variable"] == variable) & (table["method"] == BASELINE)]
    if part.empty:
        raise ValueError(
            f"coinpress_bias_is_constant: no COINPRESS rows of {variable!r}."
        )
    err = part["normalised_error"]
    return bool(err.max() < (1 + tolerance) * err.min())


def strata_with_age_best(table: pd.DataFrame, *, variable: str) -> bool:
    """Whether the smallest stratified error of ``variable`` is in a grouping with age.

    Args:
        table: A ``strat_mean_census`` table.
        variable: The variable.

    Returns:
        True when some attribute set with ``AGE`` beats every set without it.

    Raises:
        ValueError: If a column is missing or the variable has no stratified rows
            with and without age.
    """
    _require(table, (*_CENSUS_COLUMNS, "normalised_error"), "strata_with_age_best")
    part = table[(table["variable"] == variable) & (table["method"] != BASELINE)]
    with_age = part["attributes"].str.contains("AGE")
    if not with_age.any() or with_age.all():
        raise ValueError(
            f"strata_with_age_best: {variable!r} needs stratified rows with and "
            "without AGE."
        )
    return bool(
        part[with_age]["normalised_error"].min()
        < part[~with_age]["normalised_error"].min()
    )
