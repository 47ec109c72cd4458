"""Experiments of the part "Stratified mean estimation" (Rosenblatt et al., 2024).

- ``log_size_sum``: Figure 1, ``E[sum_i log |G_i|]`` against the Dirichlet ``alpha``,
  with the worst and best cases and a Monte Carlo overlay.
- ``laplace_bound_check``: the stratified clipped-Laplace error against its bounds
  (Prop. 8 and Thm. 9) as the number of groups grows.
- ``ny_race_alpha``: the worked example of the race groups of New York: ``alpha``
  fitted three ways and the paper's "better than the worst case" claim recomputed.
- ``strat_mean_synthetic``: Figures 3, 6 and 7, COINPRESS and its stratified variants
  on Gaussian mixtures, against ``n``, ``k`` and ``alpha``.
- ``strat_mean_census``: Figures 2 and 8, the same methods on four ACS variables with
  groups from intersections of sex, race, age and disability.
- ``census_descriptive``: the appendix D descriptive table of the state used.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpnotes import bounds
from dpnotes.data import sample_gaussian_mixture
from dpnotes.lab.registry import Cache, Profile, register
from dpnotes.mean import ClippedLaplace, stratified_mean
from dpnotes.mean.compare import compare_methods, mixture_runs
from dpnotes.metrics import parity_error
from dpnotes.validation import check_choice

__all__ = [
    "AGE_EDGES",
    "ATTRIBUTE_LEVELS",
    "CENSUS_VARIABLES",
    "GROUP_SPREADS",
    "RACE_LABELS",
    "SPREADS",
    "AlphaProfile",
    "BoundCheckProfile",
    "CensusProfile",
    "DescriptiveProfile",
    "LogSizeSumProfile",
    "SyntheticMeanProfile",
    "census_descriptive",
    "census_groups",
    "laplace_bound_check",
    "log_size_sum",
    "ny_race_alpha",
    "race_counts",
    "strat_mean_census",
    "strat_mean_synthetic",
]

# --------------------------------------------------------------------------- Figure 1


@dataclass(frozen=True)
class LogSizeSumProfile(Profile):
    """Settings of ``log_size_sum``: k groups, n people, Dirichlet(alpha) proportions.

    Attributes:
        ks: Numbers of groups (one cell each).
        alphas: Dirichlet concentrations.
        n: People.
        runs: Monte Carlo draws of the proportions.
    """

    ks: tuple[int, ...]
    alphas: tuple[float, ...]
    n: int = 10_000
    runs: int = 50


def _rounded(values: np.ndarray) -> tuple[float, ...]:
    return tuple(np.round(values, 4).tolist())


_LOG_SUM_PROFILES = {
    "smoke": LogSizeSumProfile(ks=(5,), alphas=(0.2, 0.5, 0.9)),
    "quick": LogSizeSumProfile(
        ks=(3, 10, 30), alphas=_rounded(np.linspace(0.2, 0.95, 16))
    ),
    "paper": LogSizeSumProfile(
        ks=(3, 10, 30), alphas=_rounded(np.linspace(0.2, 0.99, 80))
    ),
}


@register(
    name="log_size_sum",
    title="Figure 1: E[sum log|G_i|] under Dirichlet group proportions",
    profiles=_LOG_SUM_PROFILES,
    grid=lambda config: [{"k": int(k)} for k in config.ks],
    figure="fig-log-size-sum",
)
def log_size_sum(
    config: LogSizeSumProfile,
    cell: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    cache: Cache | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Compare the closed form of Thm. 9 with Monte Carlo draws, for one ``k``.

    Each of ``runs`` draws is ``g ~ Dirichlet(alpha)``. The continuous sizes ``n g_i``
    are what Thm. 9 is about (the formula is exact for them); the integer sizes are
    what a data set has: ``n g`` rounded by largest remainder with every group given at
    least one record (the sizes :func:`dpnotes.data.sample_gaussian_mixture` uses).
    """
    k, n, runs = int(cell["k"]), int(config.n), int(config.runs)
    rows = []
    for alpha in config.alphas:
        sample = [
            sample_gaussian_mixture(n, k, alpha, rng=rng, shuffle=False)
            for _ in range(runs)
        ]
        continuous = np.array([np.log(n * s.proportions).sum() for s in sample])
        integer = np.array([np.log(s.sizes).sum() for s in sample])
        rows.append(
            {
                "alpha": float(alpha),
                "n": n,
                "runs": runs,
                "expected": bounds.expected_log_size_sum(alpha, k, n),
                "worst": bounds.worst_case_log_size_sum(k, n),
                "best_paper": bounds.best_case_log_size_sum(k, n),
                "min_exact": bounds.min_log_size_sum(k, n),
                "mc_continuous_mean": float(continuous.mean()),
                "mc_continuous_sd": float(continuous.std(ddof=1)),
                "mc_integer_mean": float(integer.mean()),
                "mc_integer_sd": float(integer.std(ddof=1)),
            }
        )
    return pd.DataFrame(rows)


# -------------------------------------------------------- bounds vs observed error


@dataclass(frozen=True)
class BoundCheckProfile(Profile):
    """Settings of ``laplace_bound_check``.

    Attributes:
        ks: Numbers of groups (one cell each).
        runs: Data sets drawn per k.
        noise_draws: Releases per data set.
        n: People per data set.
        alpha: Dirichlet concentration of the group proportions.
        R: Group means are uniform on [-R, R].
        gamma: The bounds hold with probability 1 - gamma.
        epsilon: Each group's Laplace budget.
    """

    ks: tuple[int, ...]
    runs: int
    noise_draws: int
    n: int = 10_000
    alpha: float = 0.5
    R: float = 3.0
    gamma: float = 0.05
    epsilon: float = 1.0


_BOUND_PROFILES = {
    "smoke": BoundCheckProfile(ks=(1, 4), runs=20, noise_draws=10, n=5_000),
    "quick": BoundCheckProfile(ks=(1, 2, 4, 8, 16, 32, 64), runs=50, noise_draws=20),
    "paper": BoundCheckProfile(
        ks=(1, 2, 4, 8, 16, 32, 64, 128), runs=50, noise_draws=40
    ),
}


@register(
    name="laplace_bound_check",
    title="Stratified clipped-Laplace error against the bounds of Prop. 8 and Thm. 9",
    profiles=_BOUND_PROFILES,
    grid=lambda config: [{"k": int(k)} for k in config.ks],
    figure="fig-bound-check",
)
def laplace_bound_check(
    config: BoundCheckProfile,
    cell: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    cache: Cache | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Measure the ``1 - gamma`` quantile of the error and the bounds at one ``k``.

    ``runs`` mixtures (Dirichlet(alpha) sizes, means uniform in ``[-R, R]``); on each,
    ``noise_draws`` releases of the stratified estimator of the theory (Eq. 1 in every
    group, the true sizes as weights, as analysed in Prop. 8). The error is measured
    against the data mean, so it is the cost of privacy alone.
    """
    k, n = int(cell["k"]), int(config.n)
    R, gamma, eps = float(config.R), float(config.gamma), float(config.epsilon)
    runs, draws = int(config.runs), int(config.noise_draws)
    errors, data_bounds = [], []
    for _ in range(runs):
        s = sample_gaussian_mixture(
            n, k, config.alpha, rng=rng, mean_distribution="uniform", mean_scale=R
        )
        x = np.broadcast_to(s.x, (draws, n))
        res = stratified_mean(
            x,
            s.groups,
            public_groups=s.public_groups,
            estimator=ClippedLaplace(R=R, gamma=gamma),
            weights="private_sizes",
            leak_group_sizes=True,
            epsilon=eps,
            rng=rng,
        )
        errors.append(np.abs(res.estimate - s.x.mean()))
        data_bounds.append(
            bounds.stratified_laplace_error_bound(
                s.sizes[s.sizes > 0], R=R, gamma=gamma, epsilon=eps
            )
        )
    err = np.concatenate(errors)
    return pd.DataFrame(
        [
            {
                "n": n,
                "runs": runs,
                "noise_draws": draws,
                "error_quantile": float(np.quantile(err, 1 - gamma)),
                "error_mean": float(err.mean()),
                "bound_data": float(np.mean(data_bounds)),
                "bound_worst": bounds.worst_case_error_bound(
                    k, n, R=R, gamma=gamma, epsilon=eps
                ),
                "bound_expected": bounds.expected_case_error_bound(
                    config.alpha, k, n, R=R, gamma=gamma, epsilon=eps
                ),
                "bound_unstratified": bounds.laplace_tail_bound(
                    2 * (R + math.sqrt(math.log(n / gamma))) / (n * eps), gamma=gamma
                ),
            }
        ]
    )


# ------------------------------------------------------------ New York race example

#: RAC1P codes 1-9 (ACS PUMS 2018 data dictionary), the public list of race groups.
RACE_LABELS: dict[int, str] = {
    1: "White alone",
    2: "Black or African American alone",
    3: "American Indian alone",
    4: "Alaska Native alone",
    5: "American Indian and Alaska Native tribes specified",
    6: "Asian alone",
    7: "Native Hawaiian and Other Pacific Islander alone",
    8: "Some Other Race alone",
    9: "Two or More Races",
}


@dataclass(frozen=True)
class AlphaProfile(Profile):
    """Settings of ``ny_race_alpha``.

    Attributes:
        sources: Data sets whose race counts are fitted.
        draws: Monte Carlo draws of the alpha fits.
        reference_n: Population sizes the bounds are evaluated at (besides the data's).
        paper_alpha: The paper's fitted alpha for New York.
    """

    sources: tuple[str, ...]
    draws: int
    reference_n: tuple[int, ...] = (20_000, 200_000)
    paper_alpha: float = 0.13


_ALPHA_PROFILES = {
    "smoke": AlphaProfile(sources=("NY-extract",), draws=1_000, reference_n=(200_000,)),
    "quick": AlphaProfile(sources=("NY-extract", "NM"), draws=5_000),
    "paper": AlphaProfile(sources=("NY-extract", "NM"), draws=20_000),
}


def _alpha_datasets(config: AlphaProfile) -> list[str]:
    out = []
    for source in config.sources:
        if source == "NY-extract":
            out.append("acs/extracts/ACSEmployment_NY_2018_sample20000.csv")
        else:
            out.append(f"acs/2018/1-Year/psam_p{_state_fips(source)}.csv")
    return out


def _state_fips(state: str) -> str:
    from dpnotes.data.acs import ACS_STATE_CODES

    return ACS_STATE_CODES[state]


def race_counts(source: str) -> pd.Series:
    """Return the RAC1P counts (all nine codes, zeros kept) of a data source.

    Args:
        source: ``"NY-extract"`` (the 20,000-row New York ACSEmployment sample) or a
            state abbreviation whose 2018 person file is available.
    """
    if source == "NY-extract":
        from dpnotes.data import load_acs_extract

        frame = load_acs_extract()
    else:
        frame = _person_table(source)
    counts = frame["RAC1P"].astype(int).value_counts()
    return counts.reindex(list(RACE_LABELS), fill_value=0).rename("count")


@register(
    name="ny_race_alpha",
    title="Dirichlet alpha of the race groups, and the paper's 80% claim",
    profiles=_ALPHA_PROFILES,
    grid=lambda config: [{"source": s} for s in config.sources],
    datasets=_alpha_datasets,
)
def ny_race_alpha(
    config: AlphaProfile,
    cell: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    cache: Cache | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Fit ``alpha`` to the race proportions and recompute "better than worst case".

    For every fit and every reference ``n`` the table has the worst case
    ``W = k log(n/k)``, the Dirichlet expectation ``E``, the paper's best case ``B``
    and three readings of "x% better than the worst case": ``(W - E) / (W - B)`` (the
    position of ``E`` between the worst and best case), ``1 - E / W``, and the relative
    reduction of the ``sqrt(k R^2 + sum log n_i)`` factor of the error bound at
    ``R = 0`` (``1 - sqrt(E / W)``).
    """
    counts = race_counts(cell["source"])
    k = len(counts)
    p = counts.to_numpy(dtype=float)
    fits = {
        "mle": bounds.fit_dirichlet_alpha(p, method="mle", pseudocount=0.5),
        "mc-moment": bounds.fit_dirichlet_alpha(
            p, method="mc-moment", pseudocount=0.5, rng=rng, draws=config.draws
        ),
        "mc-sorted": bounds.fit_dirichlet_alpha(
            p, method="mc-sorted", pseudocount=0.5, rng=rng, draws=config.draws
        ),
        # The paper's reported value, to evaluate its claim under each reading.
        "paper": float(config.paper_alpha),
    }
    rows = []
    for method, alpha in fits.items():
        for n_ref in sorted({int(counts.sum()), *config.reference_n}):
            W = bounds.worst_case_log_size_sum(k, n_ref)
            B = bounds.best_case_log_size_sum(k, n_ref)
            E = bounds.expected_log_size_sum(alpha, k, n_ref)
            rows.append(
                {
                    "source": cell["source"],
                    "records": int(counts.sum()),
                    "k": k,
                    "empty_groups": int((counts == 0).sum()),
                    "method": method,
                    "alpha": alpha,
                    "n": n_ref,
                    "worst": W,
                    "expected": E,
                    "best_paper": B,
                    "observed": float(np.log(np.maximum(p, 0.5)).sum())
                    + math.log(n_ref / counts.sum()) * k,
                    "gain_between": (W - E) / (W - B),
                    "gain_ratio": 1 - E / W,
                    "gain_sqrt": 1 - math.sqrt(max(E, 0.0) / W),
                }
            )
    return pd.DataFrame(rows)


# ------------------------------------------------------------ Figures 3, 6 and 7


@dataclass(frozen=True)
class SyntheticMeanProfile(Profile):
    """Settings of ``strat_mean_synthetic`` (COINPRESS methods on Gaussian mixtures).

    Attributes:
        runs: Data sets per cell.
        sweeps: ``{"n" | "k" | "alpha": values}``; one cell per value, the other two
            settings held at ``fixed``.
        fixed: The n, k and alpha held fixed while one is swept.
        rho: zCDP budget of each estimate.
        t: COINPRESS iterations.
        interval: Public interval that holds every group's mean.
        sigma: Public bound on the standard deviation of a unit-variance group.
        beta: Failure probability of COINPRESS' intervals.
        count_share: Share of rho spent on the noisy group counts (where counted).
        group_spreads: The groups' standard deviations, a key of
            :data:`GROUP_SPREADS`: ``"unit"`` (every group 1, as the authors' code
            ``utils.model`` in ``lurosenb/stratify_dp`` draws them; our default) or
            ``"uniform-0.1-2"`` (each group's drawn from U(0.1, 2) in every run, as
            the paper's appendix B states).
        spread: The spread bound COINPRESS is given, a key of :data:`SPREADS`:
            ``"cover"`` (our default: ``sigma`` times the largest standard deviation
            the groups can have, a public fact of the generative model, so the bound
            covers every group) or ``"unit"`` (1 whatever the data, as the authors'
            COINPRESS, ``multivariate_mean_iterative`` in ``helpers/utils.py`` lines
            115-143, which assumes unit variance). With unit-variance groups the two
            coincide.
    """

    runs: int
    sweeps: Mapping[str, tuple[float, ...]]
    fixed: Mapping[str, float] = field(
        default_factory=lambda: {"n": 10_000, "k": 3, "alpha": 0.3}
    )
    rho: float = 0.5
    t: int = 2
    interval: tuple[float, float] = (-3.0, 3.0)
    sigma: float = 1.0
    beta: float = 0.01
    count_share: float = 0.1
    group_spreads: str = "unit"
    spread: str = "cover"


#: The groups' standard deviations in ``strat_mean_synthetic``: ``None`` for unit
#: variance, else the range of the uniform they are drawn from.
GROUP_SPREADS: dict[str, tuple[float, float] | None] = {
    "unit": None,
    "uniform-0.1-2": (0.1, 2.0),
}

#: How the census and mixture experiments choose COINPRESS' public spread bound:
#: ``"cover"`` (a bound that covers the data: ours) or ``"unit"`` (1, the authors').
SPREADS: tuple[str, ...] = ("cover", "unit")


def _spread_bound(config: SyntheticMeanProfile) -> float:
    """The public spread bound COINPRESS gets on the mixtures (see the profile)."""
    if config.spread == "unit":
        return 1.0
    spreads = GROUP_SPREADS[config.group_spreads]
    return float(config.sigma) * (1.0 if spreads is None else spreads[1])


_SYNTH_PROFILES = {
    "smoke": SyntheticMeanProfile(
        runs=10,
        sweeps={"n": (2_000, 10_000), "k": (3, 12), "alpha": (0.1, 10.0)},
    ),
    "quick": SyntheticMeanProfile(
        runs=20,
        sweeps={
            "n": (2_000, 4_000, 6_000, 8_000, 10_000),
            "k": (2, 3, 6, 12, 24, 48),
            "alpha": (0.01, 0.1, 1.0, 10.0, 100.0),
        },
    ),
    "paper": SyntheticMeanProfile(
        runs=50,
        sweeps={
            "n": (2_000, 4_000, 6_000, 8_000, 10_000, 20_000, 50_000),
            "k": (2, 3, 4, 6, 8, 12, 16, 24, 32, 48),
            "alpha": _rounded(np.logspace(-2, 2, 9)),
        },
    ),
}


def _synth_grid(config: SyntheticMeanProfile) -> list[dict[str, Any]]:
    check_choice(config.group_spreads, GROUP_SPREADS, "group_spreads")
    check_choice(config.spread, SPREADS, "spread")
    return [
        {"sweep": sweep, "value": value}
        for sweep, values in config.sweeps.items()
        for value in values
    ]


@register(
    name="strat_mean_synthetic",
    title="Figures 3, 6, 7: COINPRESS and stratified COINPRESS on Gaussian mixtures",
    profiles=_SYNTH_PROFILES,
    grid=_synth_grid,
    figure="fig-synthetic-n",
)
def strat_mean_synthetic(
    config: SyntheticMeanProfile,
    cell: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    cache: Cache | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Error of the four methods at one setting of ``(n, k, alpha)``.

    Every run draws a new mixture of ``2 n`` points (Dirichlet(alpha) proportions,
    group means N(0, 1), unit variance or the spreads of ``group_spreads``); the first
    ``n`` points (a random half, the data are shuffled) are private, the rest is the
    public holdout that only PubStratCoinpress uses. The error is the absolute
    difference to the private half's mean.
    """
    setting = dict(config.fixed)
    setting[cell["sweep"]] = cell["value"]
    n, k, alpha = int(setting["n"]), int(setting["k"]), float(setting["alpha"])
    runs = int(config.runs)
    x, g, g_pub = mixture_runs(
        n, k, alpha, runs, rng=rng, sd_range=GROUP_SPREADS[config.group_spreads]
    )
    truth = x.mean(axis=1)
    lower, upper = config.interval
    results = compare_methods(
        x,
        g,
        g_pub,
        public_groups=tuple(range(k)),
        rho=config.rho,
        lower=lower,
        upper=upper,
        t=config.t,
        sigma=_spread_bound(config),
        beta=config.beta,
        count_share=config.count_share,
        rng=rng,
    )
    rows = []
    for method, (overall, _) in results.items():
        err = np.abs(overall - truth)
        rows.append(
            {
                "n": n,
                "k": k,
                "alpha": alpha,
                "method": method,
                "mae": float(err.mean()),
                "sd": float(err.std(ddof=1)),
                "se": float(err.std(ddof=1) / math.sqrt(runs)),
                "runs": runs,
            }
        )
    return pd.DataFrame(rows)


# ------------------------------------------------------------ Figures 2 and 8

#: Public age buckets (years): [0, 18), [18, 30), [30, 45), [45, 65), [65, inf).
AGE_EDGES: tuple[int, ...] = (18, 30, 45, 65)

#: Levels of each grouping attribute, fixed by the ACS code lists (not by the data).
ATTRIBUTE_LEVELS: dict[str, int] = {"SEX": 2, "RAC1P": 9, "AGE": 5, "DIS": 2}

#: Per variable: a public interval for the mean and a public bound on the spread.
#: The intervals come from the variables' code ranges in the PUMS data dictionary; the
#: spreads are generous round numbers from domain knowledge.
CENSUS_VARIABLES: dict[str, dict[str, float]] = {
    "SCHL": {"lower": 1.0, "upper": 24.0, "sigma": 6.0},
    "WKHP": {"lower": 1.0, "upper": 99.0, "sigma": 20.0},
    "JWMNP": {"lower": 1.0, "upper": 200.0, "sigma": 30.0},
    "PINCP": {"lower": -20_000.0, "upper": 1_000_000.0, "sigma": 60_000.0},
}


@dataclass(frozen=True)
class CensusProfile(Profile):
    """Settings of ``strat_mean_census``.

    Attributes:
        runs: Releases per cell.
        subsets: The attribute sets stratified by (one cell each, per variable).
        variables: ``{variable: public bounds and spread}``.
        state: The ACS state (the papers used New York; the offline build New Mexico).
        year: The ACS year.
        rho: zCDP budget of each estimate.
        t: COINPRESS iterations.
        beta: Failure probability of COINPRESS' intervals.
        count_share: Share of rho spent on the noisy group counts (where counted).
        public_fraction: Share of the records held out as the public sample.
        spread: The spread bound COINPRESS is given, a key of :data:`SPREADS`:
            ``"cover"`` (our default: each variable's ``sigma``, a bound that covers
            its spread) or ``"unit"`` (1 for every variable on its raw scale, as the
            authors' code: ``multivariate_mean_iterative`` of ``helpers/utils.py``,
            lines 115-143 in ``lurosenb/stratify_dp``, assumes unit variance, and
            ``coinpress_results.ipynb`` runs it on the unscaled census variables with
            the prior intervals of its ``mean_apriori``). A unit bound clips every
            value more than a few units from the first step's estimate, which biases
            the overall mean of a skewed variable; narrower strata are clipped less.
    """

    runs: int
    subsets: tuple[tuple[str, ...], ...]
    variables: Mapping[str, Mapping[str, float]] = field(
        default_factory=lambda: dict(CENSUS_VARIABLES)
    )
    state: str = "NM"
    year: int = 2018
    rho: float = 0.5
    t: int = 2
    beta: float = 0.01
    count_share: float = 0.1
    public_fraction: float = 0.5
    spread: str = "cover"


_ALL_SUBSETS = tuple(
    c
    for r in range(1, 5)
    for c in itertools.combinations(["SEX", "RAC1P", "AGE", "DIS"], r)
)

_CENSUS_PROFILES = {
    "smoke": CensusProfile(
        runs=5,
        variables={"SCHL": CENSUS_VARIABLES["SCHL"]},
        subsets=(("SEX",), ("SEX", "RAC1P")),
    ),
    "quick": CensusProfile(runs=20, subsets=_ALL_SUBSETS),
    "paper": CensusProfile(runs=50, subsets=_ALL_SUBSETS),
}


@functools.lru_cache(maxsize=4)
def _person_table(state: str, year: int = 2018) -> pd.DataFrame:
    from dpnotes.data import load_acs_person

    return load_acs_person(state, year)


def census_groups(frame: pd.DataFrame, attributes: Sequence[str]) -> np.ndarray:
    """Return each person's group code for the intersection of ``attributes``.

    The code is the mixed-radix number of the attribute levels (SEX 1-2, RAC1P 1-9,
    AGE bucket 0-4 from :data:`AGE_EDGES`, DIS 1-2), so the public list of groups is
    ``range(prod of the levels)`` whether or not a group occurs in the data.
    """
    codes = np.zeros(len(frame), dtype=np.int64)
    for attr in attributes:
        if attr == "AGE":
            level = np.searchsorted(AGE_EDGES, frame["AGEP"].to_numpy(), side="right")
        else:
            level = frame[attr].to_numpy(dtype=np.int64) - 1
        codes = codes * ATTRIBUTE_LEVELS[attr] + level
    return codes


def _census_datasets(config: CensusProfile | DescriptiveProfile) -> list[str]:
    return [f"acs/{config.year}/1-Year/psam_p{_state_fips(config.state)}.csv"]


def _census_grid(config: CensusProfile) -> list[dict[str, Any]]:
    check_choice(config.spread, SPREADS, "spread")
    return [
        {"variable": v, "attributes": list(s)}
        for v in config.variables
        for s in config.subsets
    ]


@register(
    name="strat_mean_census",
    title="Figures 2 and 8: stratified COINPRESS on ACS variables, k by intersections",
    profiles=_CENSUS_PROFILES,
    grid=_census_grid,
    datasets=_census_datasets,
    figure="fig-census-error",
)
def strat_mean_census(
    config: CensusProfile,
    cell: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    cache: Cache | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Normalised error and parity error of the four methods, one variable and grouping.

    Records where the variable is missing ("not applicable": e.g. WKHP for people who
    did not work in the past 12 months, JWMNP for people who did not commute) are
    outside the variable's universe and are dropped, as in the paper; the size of each
    universe is treated as public. Each run splits the remaining records at random into
    a private half (used by every method) and a public holdout (used only for the
    weights of PubStratCoinpress). Errors are against the private half: the normalised
    error is ``|estimate - mean| / |mean|`` and the parity error is Definition 10 over
    the groups present in the private half.
    """
    frame = _person_table(config.state, config.year)
    variable, attributes = cell["variable"], list(cell["attributes"])
    spec = config.variables[variable]
    keep = frame[variable].notna().to_numpy()
    values = frame[variable].to_numpy(dtype=float)[keep]
    groups_all = census_groups(frame, attributes)[keep]
    k = int(np.prod([ATTRIBUTE_LEVELS[a] for a in attributes]))
    runs, n_all = int(config.runs), values.size
    n_pub = round(config.public_fraction * n_all)
    order = np.argsort(rng.random((runs, n_all)), axis=1)
    priv, pub = order[:, n_pub:], order[:, :n_pub]
    x, g, g_pub = values[priv], groups_all[priv], groups_all[pub]
    results = compare_methods(
        x,
        g,
        g_pub,
        public_groups=tuple(range(k)),
        rho=config.rho,
        lower=spec["lower"],
        upper=spec["upper"],
        t=config.t,
        sigma=spec["sigma"] if config.spread == "cover" else 1.0,
        beta=config.beta,
        count_share=config.count_share,
        rng=rng,
    )
    # True values per run: the private half's overall and group means.
    truth = x.mean(axis=1)
    seg = (np.arange(runs)[:, None] * k + g).reshape(-1)
    sums = np.bincount(seg, weights=x.reshape(-1), minlength=runs * k).reshape(runs, k)
    counts = np.bincount(seg, minlength=runs * k).reshape(runs, k)
    rows = []
    for method, (overall, group_est) in results.items():
        norm_err = np.abs(overall - truth) / np.abs(truth)
        pe, mean_group = [], []
        for r in range(runs):
            present = counts[r] > 0
            true_groups = sums[r, present] / counts[r, present]
            nonzero = true_groups != 0
            est_groups = np.nan_to_num(group_est[r, present], nan=overall[r])
            pe.append(
                parity_error(
                    (truth[r], true_groups[nonzero]),
                    (overall[r], est_groups[nonzero]),
                    omega=1.0 / k,
                )
            )
            mean_group.append(
                np.mean(
                    np.abs(est_groups[nonzero] - true_groups[nonzero])
                    / np.abs(true_groups[nonzero])
                )
            )
        rows.append(
            {
                "state": config.state,
                "variable": variable,
                "attributes": "×".join(attributes),
                "k": k,
                "k_present": int((counts > 0).sum(axis=1).mean()),
                "n_private": int(x.shape[1]),
                "method": method,
                "normalised_error": float(norm_err.mean()),
                "normalised_error_se": float(norm_err.std(ddof=1) / math.sqrt(runs)),
                "parity_error": float(np.mean(pe)),
                "parity_error_se": float(np.std(pe, ddof=1) / math.sqrt(runs)),
                "mean_group_error": float(np.mean(mean_group)),
                "runs": runs,
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class DescriptiveProfile(Profile):
    """Settings of ``census_descriptive``: the state, year and variables described."""

    state: str = "NM"
    year: int = 2018
    variables: tuple[str, ...] = tuple(CENSUS_VARIABLES)


_DESCRIPTIVE_PROFILES = {p: DescriptiveProfile() for p in ("smoke", "quick", "paper")}


@register(
    name="census_descriptive",
    title="Appendix D: descriptive statistics of the census variables",
    profiles=_DESCRIPTIVE_PROFILES,
    grid=lambda config: [{"variable": v} for v in config.variables],
    datasets=_census_datasets,
)
def census_descriptive(
    config: DescriptiveProfile,
    cell: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    cache: Cache | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Describe one variable of the state's person file (no privacy; public data)."""
    frame = _person_table(config.state, config.year)
    col = frame[cell["variable"]]
    v = col.dropna()
    return pd.DataFrame(
        [
            {
                "state": config.state,
                "variable": cell["variable"],
                "records": len(col),
                "missing": int(col.isna().sum()),
                "mean": float(v.mean()),
                "sd": float(v.std()),
                "min": float(v.min()),
                "median": float(v.median()),
                "max": float(v.max()),
            }
        ]
    )
