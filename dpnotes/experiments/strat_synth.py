"""Experiments of the stratified synthetic-data chapters (Figures 4, 5, 7, 9, Table 3).

One cell is one synthesizer (MST, AIM, GEM), one stratification (none, SEX, RAC1P,
SEX x RAC1P), one epsilon and one seed, on one data set. The cell fits on the training
split only, samples as many rows as the training split has, and evaluates against the
real data:

- workload error over all 3-way marginals, overall and within each group, and the
  parity error over it (appendix Figure 9);
- parity error of the means of all ten variables (Figure 5);
- classifiers trained on the synthetic rows and tested on the real test split:
  accuracy overall and per group, demographic parity, the largest false-negative-rate
  gap (Figure 4, appendix Figure 7 b-c), and the largest gap between group means of
  the label (appendix Figure 7 a);
- the fit time.

The split is fixed per data set (80/20, seed 0) so every cell sees the same training
records. The stratum weights are the proportions of the test split: a disjoint table
that no synthesizer sees, standing in for published population totals.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from dpnotes.data.employment import EMPLOYMENT_DOMAIN, load_employment
from dpnotes.experiments.registry import register
from dpnotes.metrics import classifier_group_metrics, max_mean_disparity, parity_error
from dpnotes.synth.marginals import all_kway, workload_error, workload_errors_by_group
from dpnotes.synth.stratified import Stratified, strata_of, stratum_weights

__all__ = [
    "GROUPINGS",
    "SYNTHESIZERS",
    "evaluate_synthetic",
    "make_synthesizer",
    "split",
]

#: Stratifications of the paper (and the groupings every method is evaluated on).
GROUPINGS: dict[str, list[str]] = {
    "SEX": ["SEX"],
    "RAC1P": ["RAC1P"],
    "SEX_RAC1P": ["SEX", "RAC1P"],
}
STRATIFICATIONS: tuple[str, ...] = ("vanilla", *GROUPINGS)
SYNTHESIZERS: tuple[str, ...] = ("MST", "AIM", "GEM")
LABEL = "ESR"
_DEPENDS = ("dpnotes.synth", "dpnotes.metrics", "dpnotes.data.employment")
_SOURCES = {
    "NY-sample": "acs/extracts/ACSEmployment_NY_2018_sample20000.csv",
    "NM": "acs/2018/1-Year/psam_p35.csv",
}


def split(source: str, *, test_share: float = 0.2, rows: int | None = None):
    """Return the fixed train/test split of a data set (seed 0, ``test_share``).

    ``rows`` keeps a fixed random subset first (smoke runs).
    """
    df = load_employment(source)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(df))
    if rows is not None:
        order = order[:rows]
    n_test = round(test_share * len(order))
    test = df.iloc[order[:n_test]].reset_index(drop=True)
    train = df.iloc[order[n_test:]].reset_index(drop=True)
    return train, test


def make_synthesizer(name: str, *, epsilon: float, delta: float, params: dict):
    """Build an unfitted synthesizer by name with its per-profile parameters."""
    if name == "MST":
        from dpnotes.synth.mst import MST

        return MST(epsilon=epsilon, delta=delta, **params.get("MST", {}))
    if name == "AIM":
        from dpnotes.synth.aim import AIM

        return AIM(epsilon=epsilon, delta=delta, **params.get("AIM", {}))
    if name == "GEM":
        from dpnotes.synth.gem import GEM

        return GEM(epsilon=epsilon, delta=delta, **params.get("GEM", {}))
    raise ValueError(f"unknown synthesizer {name!r}; choose one of {SYNTHESIZERS}.")


def _group_keys(df: pd.DataFrame, by: list[str]) -> np.ndarray:
    return np.ravel_multi_index(
        tuple(df[a].to_numpy() for a in by), tuple(EMPLOYMENT_DOMAIN[a] for a in by)
    )


def _features(df: pd.DataFrame) -> np.ndarray:
    # One-hot codes of the nine features; the domain is public, so every table gets the
    # same columns whatever values it happens to contain.
    cols = []
    for attr, size in EMPLOYMENT_DOMAIN.items():
        if attr == LABEL:
            continue
        cols.append(np.eye(size)[df[attr].to_numpy()])
    return np.hstack(cols)


def _classifier(kind: str, seed: int):
    if kind == "logistic":
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(max_iter=1000)
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(max_iter=100, random_state=seed)


def _mean_parity_error(
    real: pd.DataFrame, synth: pd.DataFrame, by: list[str], strata: list
) -> float:
    # Def. 10 per variable on values numbered from 1 (as the ACS codebook), averaged
    # over the ten variables. Groups absent from the real data are left out; a group
    # absent from the synthetic data is scored with the synthetic overall mean.
    rk, sk = _group_keys(real, by), _group_keys(synth, by)
    present = [i for i in range(len(strata)) if np.any(rk == i)]
    errors = []
    for attr in EMPLOYMENT_DOMAIN:
        rv = real[attr].to_numpy() + 1.0
        sv = synth[attr].to_numpy() + 1.0
        true_groups = np.array([rv[rk == i].mean() for i in present])
        est_all = sv.mean()
        est_groups = np.array(
            [sv[sk == i].mean() if np.any(sk == i) else est_all for i in present]
        )
        errors.append(
            parity_error(
                (rv.mean(), true_groups),
                (est_all, est_groups),
                omega=1.0 / len(strata),
            )
        )
    return float(np.mean(errors))


def evaluate_synthetic(
    train: pd.DataFrame,
    test: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    classifiers: list[str],
    seed: int = 0,
) -> pd.DataFrame:
    """Return the tidy evaluation rows of one synthetic table.

    Columns: ``metric``, ``grouping`` (``"overall"`` or a key of :data:`GROUPINGS`),
    ``group`` (a stratum code string, or ``"all"``), ``value``.
    """
    rows: list[dict[str, Any]] = []

    def add(metric: str, grouping: str, group: str, value: float) -> None:
        rows.append(
            {"metric": metric, "grouping": grouping, "group": group, "value": value}
        )

    workload = all_kway(EMPLOYMENT_DOMAIN, 3)
    overall_w = workload_error(train, synth, EMPLOYMENT_DOMAIN, workload)
    add("workload_error", "overall", "all", overall_w)
    for grouping, by in GROUPINGS.items():
        strata = strata_of(EMPLOYMENT_DOMAIN, by)
        per_group = workload_errors_by_group(
            train, synth, EMPLOYMENT_DOMAIN, by, strata, workload
        )
        finite = {g: v for g, v in per_group.items() if np.isfinite(v)}
        for g, v in per_group.items():
            add("workload_error", grouping, _code(g), v)
        add(
            "workload_parity_error",
            grouping,
            "all",
            overall_w / len(strata) + float(np.sum(list(finite.values()))),
        )
        add(
            "mean_parity_error",
            grouping,
            "all",
            _mean_parity_error(train, synth, by, strata),
        )
        sk = _group_keys(synth, by)
        add(
            "label_mean_disparity",
            grouping,
            "all",
            max_mean_disparity(synth[LABEL].to_numpy(float), sk),
        )
    x_train, y_train = _features(synth), synth[LABEL].to_numpy()
    x_test, y_test = _features(test), test[LABEL].to_numpy()
    for kind in classifiers:
        if np.unique(y_train).size < 2:
            # A synthetic table with one label value trains a constant predictor.
            y_pred = np.full_like(y_test, y_train[0] if y_train.size else 0)
        else:
            model = _classifier(kind, seed).fit(x_train, y_train)
            y_pred = model.predict(x_test)
        for grouping, by in GROUPINGS.items():
            res = classifier_group_metrics(y_test, y_pred, _group_keys(test, by))
            if grouping == "SEX":
                add(f"{kind}:accuracy", "overall", "all", res["accuracy"])
            for g, v in res["accuracy_by_group"].items():
                add(
                    f"{kind}:accuracy",
                    grouping,
                    _code(
                        np.unravel_index(
                            int(g), tuple(EMPLOYMENT_DOMAIN[a] for a in by)
                        )
                    ),
                    v,
                )
            add(
                f"{kind}:dp_difference",
                grouping,
                "all",
                res["demographic_parity_difference"],
            )
            add(f"{kind}:dp_ratio", grouping, "all", res["demographic_parity_ratio"])
            add(f"{kind}:fnr_difference", grouping, "all", res["fnr_difference"])
    return pd.DataFrame(rows)


def _code(group) -> str:
    return "-".join(str(int(c)) for c in np.atleast_1d(group))


# --- the grid ---------------------------------------------------------------------

_PAPER_EPSILONS = [0.01, 0.05, 0.1, 0.5, 1.0, 5.0]

_PROFILES = {
    "smoke": {
        "datasets": ["NY-sample"],
        "rows": 2000,
        "synthesizers": ["MST"],
        "stratifications": ["vanilla", "SEX"],
        "epsilons": [1.0],
        "seeds": [0],
        "delta": 1e-9,
        "classifiers": ["logistic"],
        "params": {},
    },
    "quick": {
        "datasets": ["NY-sample"],
        "rows": None,
        "synthesizers": ["MST", "AIM", "GEM"],
        "stratifications": list(STRATIFICATIONS),
        "epsilons": [1.0],
        "seeds": [0],
        "delta": 1e-9,
        "classifiers": ["logistic", "boosting"],
        "params": {},
    },
    "paper": {
        "datasets": ["NY-sample", "NM"],
        "rows": None,
        "synthesizers": list(SYNTHESIZERS),
        "stratifications": list(STRATIFICATIONS),
        "epsilons": _PAPER_EPSILONS,
        "seeds": [0, 1, 2, 3, 4],
        "delta": 1e-9,
        "classifiers": ["logistic", "boosting"],
        "params": {},
    },
}


def _grid(config) -> list[dict[str, Any]]:
    # Seeds vary slowest within a data set: a partial run of the paper profile then
    # covers every synthesizer, stratification and epsilon once before repeating.
    return [
        {
            "dataset": d,
            "synthesizer": s,
            "strata": st,
            "epsilon": e,
            "seed": seed,
        }
        for d in config["datasets"]
        for seed in config["seeds"]
        for s in config["synthesizers"]
        for st in config["stratifications"]
        for e in config["epsilons"]
    ]


_SPLITS: dict[tuple, tuple[pd.DataFrame, pd.DataFrame]] = {}


def _cached_split(source: str, rows: int | None):
    key = (source, rows)
    if key not in _SPLITS:
        _SPLITS[key] = split(source, rows=rows)
    return _SPLITS[key]


@register(
    name="strat_synth",
    title="MST, AIM and GEM, vanilla or stratified, evaluated on ACSEmployment",
    profiles=_PROFILES,
    grid=_grid,
    datasets=lambda config: [_SOURCES[d] for d in config["datasets"]],
    depends=_DEPENDS,
    figure="Figures 4, 5, 7, 9 of the stratification paper",
)
def run_cell(config, cell, *, rng: np.random.Generator) -> pd.DataFrame:
    train, test = _cached_split(cell["dataset"], config["rows"])
    base = make_synthesizer(
        cell["synthesizer"],
        epsilon=cell["epsilon"],
        delta=config["delta"],
        params=config["params"],
    )
    started = time.perf_counter()
    if cell["strata"] == "vanilla":
        model = base.fit(train, EMPLOYMENT_DOMAIN, rng=rng)
    else:
        by = GROUPINGS[cell["strata"]]
        weights = stratum_weights(test, EMPLOYMENT_DOMAIN, by)
        model = Stratified(base, by, weights).fit(train, EMPLOYMENT_DOMAIN, rng=rng)
    fit_s = time.perf_counter() - started
    synth = model.sample(len(train), rng=rng)
    rows = evaluate_synthetic(
        train, test, synth, classifiers=config["classifiers"], seed=cell["seed"]
    )
    extra = pd.DataFrame(
        [
            {
                "metric": "fit_seconds",
                "grouping": "overall",
                "group": "all",
                "value": fit_s,
            },
            {
                "metric": "rho_spent_share",
                "grouping": "overall",
                "group": "all",
                "value": model.rho_spent / base.rho,
            },
        ]
    )
    return pd.concat([rows, extra], ignore_index=True)


@register(
    name="synth_group_sizes",
    title="Group sizes of the stratification attributes (Table 3)",
    profiles={
        "smoke": {"datasets": ["NY-sample"]},
        "quick": {"datasets": ["NY-sample", "NM"]},
        "paper": {"datasets": ["NY-sample", "NM"]},
    },
    grid=lambda config: [{"dataset": d} for d in config["datasets"]],
    datasets=lambda config: [_SOURCES[d] for d in config["datasets"]],
    depends=("dpnotes.data.employment",),
    figure="Table 3 of the stratification paper",
)
def group_sizes_cell(config, cell, *, rng: np.random.Generator) -> pd.DataFrame:
    del rng  # descriptive, no randomness
    train, test = split(cell["dataset"])
    rows = []
    for grouping, by in GROUPINGS.items():
        for i, stratum in enumerate(strata_of(EMPLOYMENT_DOMAIN, by)):
            for name, part in (("train", train), ("test", test)):
                rows.append(
                    {
                        "grouping": grouping,
                        "group": _code(stratum),
                        "split": name,
                        "count": int(np.sum(_group_keys(part, by) == i)),
                        "rows": len(part),
                    }
                )
    return pd.DataFrame(rows)
