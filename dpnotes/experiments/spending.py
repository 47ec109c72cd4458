"""DPSAGE against SAGE on the real data: the spending paper's Table 2 and Figure 3.

Rosenblatt, Allen and Stoyanovich (2022) compare the top 5 features of DPSAGE
(:func:`dpnotes.importance.dpsage`) with those of SAGE computed on the real data, by
nDCG, Jaccard similarity and MAP, at DPSAGE budgets epsilon = 0.2 and 1.0, over 10
runs (their Table 2), and draw the two sets of values for one run (their Figure 3).
Experiment ``spending_dpsage`` reruns that comparison.

One cell is one data set, one epsilon and one seed. It

1. fits DPSAGE on the training split with ``gamma * epsilon`` to MST and the rest to
   a DP logistic regression, once per way of labelling the explained rows
   (``labels``: S's sampled target, SAGE proper; or C's own probabilities). The fits
   of the two runs are the same (one seed stream, checked), so the labels are the only
   difference between them;
2. computes the **non-private** reference, SAGE of a logistic regression fitted on the
   real training rows (:func:`dpnotes.importance.real_sage`), and a second run of it
   with other Monte-Carlo draws: the agreement of the two is the ceiling of what any
   estimate can reach against the reference. Both depend on the data set and the seed
   only, not on epsilon; the run cache computes them once for the two epsilons;
3. scores each ranking against the reference's with the metrics of
   :mod:`dpnotes.importance.ranking` at ``k = 5``.

The splits are fixed in advance, never tuned on the data: the paper found the
DPSAGE-internal split best at an even ``{0.5 eps, 0.5 eps}`` at every budget it
tried (its section 5; ``dpnotes.paper_numbers.SPENDING_SPLITS`` holds gamma = 0.5
for every epsilon), so ``gamma = 0.5`` (:data:`GAMMA`). MST's delta is not reported;
``1e-9`` (:data:`DELTA`), as in the book's other synthesis experiments.

Data sets (:data:`DATASETS`): ACSPublicCoverage and ACSMobility on New Mexico, the
paper's own data; ACSEmployment on the 20,000-row New York sample in place of the
paper's California (not available offline) and, second, on New Mexico.

Result table: the cell's keys (``dataset``, ``epsilon``, ``seed``), then ``method``
(:data:`METHODS`), ``labels`` (``"synthetic"``, ``"model"``; ``"real"`` for the
reference), ``feature`` (a feature, or ``"all"`` for a number about the whole
ranking), ``metric`` (:data:`METRICS`) and ``value``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpnotes.data.acs import acs_person_file
from dpnotes.data.spending import SpendingTask, load_spending_task
from dpnotes.importance import (
    CodesClassifier,
    DPSAGEResult,
    SAGEResult,
    average_precision_at_k,
    dpsage,
    jaccard_at_k,
    ndcg_at_k,
    real_sage,
)
from dpnotes.lab.registry import Cache, Profile, register

__all__ = [
    "DATASETS",
    "DELTA",
    "GAMMA",
    "METHODS",
    "METRICS",
    "PAPER_DATASET",
    "RANKING_METRICS",
    "TABLE2_EPSILONS",
    "DPSAGEProfile",
    "data_files",
    "load_task",
    "score_ranking",
    "seed_major_grid",
]

#: Our data sets: name -> ``(task, source)`` of
#: :func:`~dpnotes.data.spending.load_spending_task`.
DATASETS: Mapping[str, tuple[str, str]] = {
    "ACSEmployment-NY-sample": ("ACSEmployment", "NY-sample"),
    "ACSEmployment-NM": ("ACSEmployment", "NM"),
    "ACSPublicCoverage-NM": ("ACSPublicCoverage", "NM"),
    "ACSMobility-NM": ("ACSMobility", "NM"),
}

#: The paper's data set (a key of ``dpnotes.paper_numbers.SPENDING_TABLE2``) that
#: each of ours stands for; ACSEmployment-CA is not available offline.
PAPER_DATASET: Mapping[str, str] = {
    "ACSEmployment-NY-sample": "ACSEmployment-CA",
    "ACSEmployment-NM": "ACSEmployment-CA",
    "ACSPublicCoverage-NM": "ACSPublicCoverage-NM",
    "ACSMobility-NM": "ACSMobility-NM",
}

#: DPSAGE's budgets of Table 2 ("epsilon_1 / epsilon_2"), as
#: ``dpnotes.paper_numbers.SPENDING_TABLE2_EPSILONS`` (a test checks they agree).
TABLE2_EPSILONS: tuple[float, float] = (0.2, 1.0)

#: MST's share of DPSAGE's budget: the paper's reported best split at every budget
#: (``dpnotes.paper_numbers.SPENDING_SPLITS``), fixed in advance.
GAMMA = 0.5

#: MST's delta (the paper reports none).
DELTA = 1e-9

#: ``method`` values: DPSAGE; the non-private reference (real SAGE); the reference's
#: second run, with other Monte-Carlo draws (the ceiling).
METHODS: tuple[str, ...] = ("dpsage", "real_sage", "real_sage_rerun")

#: Ranking metrics (``feature == "all"``), each against the reference's top ``k``:
#: nDCG with gains graded by the reference's rank, nDCG with the reference's SAGE
#: values as gains (negative ones as 0), Jaccard of the top-``k`` sets, AP@k (MAP is
#: its mean over seeds). Definitions: :mod:`dpnotes.importance.ranking`.
RANKING_METRICS: tuple[str, ...] = ("ndcg", "ndcg_sage", "jaccard", "ap")

#: Every ``metric`` of the result table. Per feature: ``sage_value``, ``sage_std``
#: and ``rank`` (1 = most important). Per ranking: :data:`RANKING_METRICS`,
#: ``test_accuracy`` (the explained classifier's accuracy on the real test split)
#: and, for DPSAGE, ``epsilon_spent`` and ``delta_spent``. Wall times: DPSAGE's
#: stages (``classifier_seconds``, ``synthesizer_seconds``, ``sampling_seconds``,
#: ``sage_seconds``) and the reference's ``sage_seconds``.
METRICS: tuple[str, ...] = (
    "sage_value",
    "sage_std",
    "rank",
    *RANKING_METRICS,
    "test_accuracy",
    "epsilon_spent",
    "delta_spent",
    "classifier_seconds",
    "synthesizer_seconds",
    "sampling_seconds",
    "sage_seconds",
)


@dataclass(frozen=True)
class DPSAGEProfile(Profile):
    """Settings of ``spending_dpsage``.

    Attributes:
        datasets: Keys of :data:`DATASETS`.
        seeds: Runs (each its own cells); the paper averages 10.
        epsilons: DPSAGE's total budgets.
        labels: Labels of the explained rows, of
            :data:`dpnotes.importance.LABELS` (one DPSAGE run each, same fits).
        rows: Keep this many rows of each data set before the split (None: all).
        gamma: MST's share of epsilon (:data:`GAMMA`).
        delta: MST's delta.
        k: Length of the compared top lists.
        n_samples: Rows sampled from S to explain.
        n_background: Background rows of the marginal imputer (DPSAGE and the
            reference).
        thresh: SAGE's convergence threshold.
        max_permutations: SAGE's cap on permutations.
        batch_size: SAGE's permutations per round.
        mst_iters: MST's mirror-descent iterations.
    """

    datasets: tuple[str, ...]
    seeds: tuple[int, ...]
    epsilons: tuple[float, ...] = TABLE2_EPSILONS
    labels: tuple[str, ...] = ("synthetic", "model")
    rows: int | None = None
    gamma: float = GAMMA
    delta: float = DELTA
    k: int = 5
    n_samples: int = 2048
    n_background: int = 128
    thresh: float = 0.025
    max_permutations: int = 16384
    batch_size: int = 512
    mst_iters: int = 3000


_PROFILES = {
    "smoke": DPSAGEProfile(
        datasets=("ACSMobility-NM",),
        seeds=(0,),
        rows=600,
        n_samples=256,
        n_background=16,
        thresh=0.2,
        max_permutations=256,
        batch_size=64,
        mst_iters=100,
    ),
    "quick": DPSAGEProfile(
        datasets=(
            "ACSEmployment-NY-sample",
            "ACSPublicCoverage-NM",
            "ACSMobility-NM",
        ),
        seeds=(0,),
    ),
    "paper": DPSAGEProfile(
        datasets=tuple(DATASETS),
        seeds=tuple(range(10)),
    ),
}


def seed_major_grid(config: Any) -> list[dict[str, Any]]:
    """The cells ``{dataset, epsilon, seed}`` of a profile, seeds varying slowest.

    A partial run of a paper profile then holds every data set and epsilon of its first
    seeds. ``config`` has ``datasets``, ``epsilons`` and ``seeds``.
    """
    return [
        {"dataset": d, "epsilon": float(e), "seed": int(s)}
        for s in config.seeds
        for d in config.datasets
        for e in config.epsilons
    ]


def data_files(config: Any) -> list[str]:
    """The data files (relative to the data root) that ``config.datasets`` read."""
    files = []
    for name in config.datasets:
        _, source = DATASETS[name]
        if source == "NY-sample":
            files.append("acs/extracts/ACSEmployment_NY_2018_sample20000.csv")
        else:
            files.append(acs_person_file(source, 2018).relpath)
    return list(dict.fromkeys(files))


_TASKS: dict[tuple[str, int | None], SpendingTask] = {}


def load_task(dataset: str, rows: int | None) -> SpendingTask:
    """Load a key of :data:`DATASETS` (first ``rows`` records), once per process."""
    key = (dataset, rows)
    if key not in _TASKS:
        task, source = DATASETS[dataset]
        _TASKS[key] = load_spending_task(task, source, rows=rows)
    return _TASKS[key]


def _accuracy(model: CodesClassifier, test: pd.DataFrame, target: str) -> float:
    predicted = model.predict(test[list(model.features_)])
    return float(np.mean(predicted == test[target].to_numpy()))


def _feature_rows(
    result: DPSAGEResult | SAGEResult, method: str, labels: str
) -> list[dict[str, Any]]:
    rank = {f: i + 1 for i, f in enumerate(result.ranking)}
    rows = []
    for feature in result.values.index:
        for metric, value in (
            ("sage_value", result.values[feature]),
            ("sage_std", result.std[feature]),
            ("rank", rank[feature]),
        ):
            rows.append(
                {
                    "method": method,
                    "labels": labels,
                    "feature": feature,
                    "metric": metric,
                    "value": float(value),
                }
            )
    return rows


def score_ranking(
    ranking: tuple[str, ...] | list[str],
    reference: tuple[str, ...] | list[str],
    reference_values: Mapping[str, float],
    *,
    k: int = 5,
) -> dict[str, float]:
    """Score a ranking against the reference's: :data:`RANKING_METRICS` at ``k``.

    Args:
        ranking: Features, most important first (e.g. DPSAGE's).
        reference: The reference ranking (SAGE on the real data).
        reference_values: The reference's SAGE value of each feature, the gains of
            ``"ndcg_sage"``.
        k: How many top features to compare.

    Returns:
        ``{metric: value}``; ``"ndcg_sage"`` is NaN when no top-``k`` feature of the
        reference has a positive value (its nDCG is then undefined).

    Raises:
        ValueError: As :func:`dpnotes.importance.ndcg_at_k` for rankings shorter
            than ``k`` or with duplicates.

    Examples:
        >>> scores = score_ranking(["a", "b", "c"], ["a", "c", "b"],
        ...                       {"a": 0.3, "b": 0.1, "c": 0.2}, k=2)
        >>> scores["jaccard"], round(scores["ap"], 3)
        (0.3333333333333333, 0.5)
    """
    top = list(reference)[:k]
    if any(float(reference_values[f]) > 0.0 for f in top):
        ndcg_sage = ndcg_at_k(ranking, reference, k=k, gains=dict(reference_values))
    else:
        ndcg_sage = float("nan")
    return {
        "ndcg": ndcg_at_k(ranking, reference, k=k),
        "ndcg_sage": ndcg_sage,
        "jaccard": jaccard_at_k(ranking, reference, k=k),
        "ap": average_precision_at_k(ranking, reference, k=k),
    }


def _scalar(method: str, labels: str, metric: str, value: float) -> dict[str, Any]:
    return {
        "method": method,
        "labels": labels,
        "feature": "all",
        "metric": metric,
        "value": float(value),
    }


def _sage_options(config: DPSAGEProfile) -> dict[str, Any]:
    return {
        "n_background": config.n_background,
        "thresh": config.thresh,
        "max_permutations": config.max_permutations,
        "batch_size": config.batch_size,
    }


def _reference(config: DPSAGEProfile, dataset: str, seed: int) -> pd.DataFrame:
    """Real SAGE (non-private) and its rerun, scored against each other."""
    task = load_task(dataset, config.rows)
    train, test = task.train, task.test
    # The reference depends on the data set and the seed, never on epsilon: its
    # streams come from the seed, so that both epsilons of a seed share it.
    first, second = np.random.SeedSequence([20220427, seed]).spawn(2)
    rows = []
    runs = {}
    for method, seq in (("real_sage", first), ("real_sage_rerun", second)):
        started = time.perf_counter()
        result = real_sage(
            train,
            dict(task.domain),
            target=task.target,
            rng=np.random.default_rng(seq),
            **_sage_options(config),
        )
        seconds = time.perf_counter() - started
        runs[method] = result
        rows += _feature_rows(result, method, "real")
        rows.append(
            _scalar(
                method,
                "real",
                "test_accuracy",
                _accuracy(result.model, test, task.target),
            )
        )
        rows.append(_scalar(method, "real", "sage_seconds", seconds))
    reference = runs["real_sage"]
    scores = score_ranking(
        runs["real_sage_rerun"].ranking,
        reference.ranking,
        reference.values.to_dict(),
        k=config.k,
    )
    rows += [_scalar("real_sage_rerun", "real", m, v) for m, v in scores.items()]
    return pd.DataFrame(rows)


def _same_fits(a: DPSAGEResult, b: DPSAGEResult) -> bool:
    if not np.array_equal(a.classifier.coef_, b.classifier.coef_):
        return False
    draws = [r.synthesizer.sample(64, rng=np.random.default_rng(0)) for r in (a, b)]
    return draws[0].equals(draws[1])


@register(
    name="spending_dpsage",
    title="DPSAGE's top 5 features against SAGE's on the real data, by nDCG, "
    "Jaccard and MAP",
    profiles=_PROFILES,
    grid=seed_major_grid,
    datasets=data_files,
    figure="Table 2 and Figure 3 of the spending paper (rosenblatt2022spending)",
)
def spending_dpsage(
    config: DPSAGEProfile,
    cell: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    cache: Cache | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Run DPSAGE under each labelling on one data set, epsilon and seed; score it.

    The fits see the training split only; the test split serves only the
    ``test_accuracy`` rows. The reference goes through the run cache (key: data set,
    seed and the SAGE settings), so both epsilons of a seed compare with the same
    reference.
    """
    dataset, epsilon, seed = cell["dataset"], float(cell["epsilon"]), int(cell["seed"])
    task = load_task(dataset, config.rows)
    train, test = task.train, task.test
    key = {"dataset": dataset, "seed": seed, "rows": config.rows, "k": config.k}
    key.update(_sage_options(config))
    if cache is None:
        reference_rows = _reference(config, dataset, seed)
    else:
        reference_rows = cache.table(
            "spending_dpsage_reference",
            key,
            lambda: _reference(config, dataset, seed),
            code=(__name__,),
        )
    ref = reference_rows[
        (reference_rows["method"] == "real_sage") & (reference_rows["feature"] != "all")
    ]
    ref_values = ref[ref["metric"] == "sage_value"].set_index("feature")["value"]
    ref_rank = ref[ref["metric"] == "rank"].set_index("feature")["value"]
    reference = tuple(ref_rank.sort_values(kind="stable").index)

    # One seed for every labelling: the fits are the same, the labels differ.
    entropy = int(rng.integers(0, 2**63 - 1))
    rows: list[dict[str, Any]] = []
    results = {}
    for labels in config.labels:
        result = dpsage(
            train,
            dict(task.domain),
            target=task.target,
            epsilon=epsilon,
            delta=config.delta,
            rng=np.random.default_rng(np.random.SeedSequence(entropy)),
            gamma=config.gamma,
            labels=labels,
            n_samples=config.n_samples,
            mst_options={"iters": config.mst_iters},
            **_sage_options(config),
        )
        if results and not _same_fits(next(iter(results.values())), result):
            raise RuntimeError(  # an invariant: one seed stream gives one fit
                "DPSAGE's fits differ between labellings of one seed; please report."
            )
        results[labels] = result
        rows += _feature_rows(result, "dpsage", labels)
        scores = score_ranking(
            result.ranking, reference, ref_values.to_dict(), k=config.k
        )
        rows += [_scalar("dpsage", labels, m, v) for m, v in scores.items()]
        rows.append(
            _scalar(
                "dpsage",
                labels,
                "test_accuracy",
                _accuracy(result.classifier, test, task.target),
            )
        )
        rows.append(_scalar("dpsage", labels, "epsilon_spent", result.budget.epsilon))
        rows.append(_scalar("dpsage", labels, "delta_spent", result.budget.delta))
        for stage, seconds in result.seconds.items():
            rows.append(_scalar("dpsage", labels, f"{stage}_seconds", seconds))
    out = pd.concat([reference_rows, pd.DataFrame(rows)], ignore_index=True)
    return out[["method", "labels", "feature", "metric", "value"]]
