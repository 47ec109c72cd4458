"""SuperQUAIL and FSQ end to end: the spending paper's Table 1, Figures 2, 4, 5.

Rosenblatt, Allen and Stoyanovich (2022) train a logistic regression on real and on
DP synthetic data and report its accuracy, F1, false-negative and false-positive
rates on real test data, overall and for the white and black groups (their Table 1 at
``epsilon = e^3``; Figures 2, 4 and 5 against ``epsilon``). Experiment
``spending_e2e`` reruns that evaluation.

One cell is one data set, one epsilon and one seed. Methods (:data:`METHODS`):

* ``real``: a **non-private** logistic regression
  (:class:`~dpnotes.importance.NonPrivateLogisticRegression`) on the real training
  split: the reference, not a release;
* ``real_dp``: :class:`~dpnotes.importance.DPLogisticRegression` with the cell's
  epsilon on the real training split;
* ``mst``: :class:`~dpnotes.synth.mst.MST` with the cell's ``(epsilon, delta)``;
* ``sq``, ``fsq_bal``, ``fsq_fnr``: :class:`~dpnotes.importance.superquail.SuperQUAIL`
  with the cell's ``(epsilon, delta)``, plain and with ``fairness="bal"`` /
  ``"fnr"`` (its defaults: ``alpha`` from
  :func:`~dpnotes.importance.superquail.paper_alpha`,
  ``gamma = 0.5``, ``beta = 3``, the threshold from one noisy histogram of the
  training records); the groups are the task's public partition of RAC1P (white /
  black / other), the protected group black, the privileged group white.

Methods beyond the paper (:data:`EXTRA_METHODS`; a profile runs them when it lists
them):

* ``fsq_fnr_cap``: FSQ with the constrained threshold (``fairness="fnr_cap"``):
  maximise accuracy subject to the black group's FNR at most ``fnr_target`` (a public
  number fixed in advance, 0.1 by default), beside FSQ-FNR's penalty objective;
* ``aim_target``: :class:`~dpnotes.synth.aim.AIM` with the cell's ``(epsilon,
  delta)`` and a workload focused on the task: every ``(target, feature)`` pair. It
  spends the whole budget on the marginals a classifier of the target needs, the
  question SuperQUAIL answers with feature importance.

Options beyond the paper, off by default so that a profile without them computes
what it always did:

* ``fidelity``: aggregate fidelity of each synthetic set against the real training
  split (rows ``target_share``, and the total variation distance of every one- and
  two-way marginal as ``tvd_1way_mean``, ``tvd_1way_max``, ``tvd_2way_mean``,
  ``tvd_2way_max``); the real training split's ``target_share`` under ``real``;
* ``evaluations``: ``"logistic"`` (the book's evaluation, below) and
  ``"authors"``, the authors' released evaluation pipeline as a **labelled,
  non-private, test-selected** option (:mod:`dpnotes.importance.evaluation`); its
  rows carry the method name suffixed ``@authors``.

Every synthesizer is fitted on the training split only and draws as many rows as the
training split has (a public number). **The evaluation classifier.** The paper trains
"DPLogisticRegression" on the synthetic data but does not give its epsilon. Synthetic
data is post-processing of the synthesizer's release, so by default
(``eval_epsilon=None``) the classifier on synthetic rows is the non-private logistic
regression: it spends nothing and shows what the synthetic data supports; a profile
may set ``eval_epsilon`` to train a DP one instead. Every classifier is tested on the
real test split, never seen by a fit.

Metrics (:data:`METRICS`) come from fairlearn's ``MetricFrame``, overall and per group
(:data:`GROUPS`); the positive class is the task's target code 1.

Data sets (:data:`DATASETS`): as ``spending_dpsage``: ACSEmployment in place of the
paper's California (not available offline) on the 20,000-row New York sample (ages
17-89 only, base rate 0.575) and on New Mexico (all ages, the paper's population
definition: folktables' ACSEmployment has no age filter), and ACSPublicCoverage and
ACSMobility on New Mexico, the paper's data.

Profiles: ``smoke`` (ACSMobility on 600 New Mexico rows, ``e^2``, tiny SAGE and MST
settings; seconds), ``quick`` (ACSEmployment on 10,000 rows of the New York sample,
``e^0`` and ``e^3``, one seed, smaller SAGE settings and 1,000 MST iterations; about
40 s on one core of the development machine) and ``paper`` (four data sets: both
ACSEmployment stand-ins, ACSPublicCoverage and ACSMobility; the five epsilons, 10 seeds,
all rows and the package's default SAGE and MST settings: 200 cells. With ``--jobs 2``
on a 2-core machine the three data sets other than New Mexico Employment took 71.5
minutes and New Mexico Employment's 50 cells about 48 minutes: two hours in all).

Result table: the cell's keys (``dataset``, ``epsilon``, ``seed``), then ``method``,
``group`` (a group of :data:`GROUPS`; ``"overall"`` for the whole test split and for
the numbers about a fit), ``metric`` and ``value``.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpnotes.data.spending import SpendingTask
from dpnotes.experiments.spending import DATASETS as _SPENDING_DATASETS
from dpnotes.experiments.spending import PAPER_DATASET as _PAPER_DATASET
from dpnotes.experiments.spending import data_files, load_task, seed_major_grid
from dpnotes.importance import (
    CodesClassifier,
    DPLogisticRegression,
    NonPrivateLogisticRegression,
)
from dpnotes.importance.evaluation import (
    AUTHORS_SUBSET,
    CLASSIFIERS,
    authors_evaluation,
)
from dpnotes.importance.superquail import CollapsedTargetWarning, SuperQUAIL
from dpnotes.lab.registry import Cache, Profile, register
from dpnotes.synth.aim import AIM
from dpnotes.synth.marginals import all_kway, marginal
from dpnotes.synth.mst import MST

__all__ = [
    "CLASSIFIER_METRICS",
    "DATASETS",
    "DELTA",
    "EPSILONS",
    "EVALUATIONS",
    "EXTRA_METHODS",
    "FIDELITY_METRICS",
    "GROUPS",
    "METHODS",
    "METRICS",
    "PAPER_DATASET",
    "PAPER_METHODS",
    "E2EProfile",
    "fidelity_rows",
    "group_metrics",
]

#: Our data sets (keys of :data:`dpnotes.experiments.spending.DATASETS`, whose
#: ``(task, source)`` they load): the paper's three tasks, ACSEmployment on the New
#: York sample and on New Mexico in place of California.
DATASETS: Mapping[str, tuple[str, str]] = {
    name: _SPENDING_DATASETS[name]
    for name in (
        "ACSEmployment-NY-sample",
        "ACSEmployment-NM",
        "ACSPublicCoverage-NM",
        "ACSMobility-NM",
    )
}

#: The paper's data set that each of ours stands for; ACSEmployment-CA is not
#: available offline, so ACSEmployment numbers are not comparable with the paper's.
PAPER_DATASET: Mapping[str, str] = {name: _PAPER_DATASET[name] for name in DATASETS}

#: The paper's grid ``e^0 .. e^4`` (exact powers of e; the paper prints them rounded,
#: ``dpnotes.paper_numbers.SPENDING_EPSILONS``).
EPSILONS: tuple[float, ...] = tuple(math.e**k for k in range(5))

#: The synthesizers' delta (the paper reports none), as the book's other synthesis
#: experiments.
DELTA = 1e-9

#: The paper's methods, in the order of its figures.
PAPER_METHODS: tuple[str, ...] = ("real", "real_dp", "mst", "sq", "fsq_bal", "fsq_fnr")

#: Methods beyond the paper (module docstring).
EXTRA_METHODS: tuple[str, ...] = ("fsq_fnr_cap", "aim_target")

#: Every ``method`` value. Each method's random stream is its position here, so new
#: methods go at the end.
METHODS: tuple[str, ...] = (*PAPER_METHODS, *EXTRA_METHODS)

#: The synthesizers' ``evaluations``: the book's logistic regression, and the
#: authors' released pipeline (rows of ``method@authors``).
EVALUATIONS: tuple[str, ...] = ("logistic", "authors")

#: Aggregate fidelity rows of the ``fidelity`` option (group ``"overall"``).
FIDELITY_METRICS: tuple[str, ...] = (
    "target_share",
    "tvd_1way_mean",
    "tvd_1way_max",
    "tvd_2way_mean",
    "tvd_2way_max",
)

#: ``group`` values: the whole test split, then the task's public groups.
GROUPS: tuple[str, ...] = ("overall", "white", "black", "other")

#: Metrics of the evaluation classifier on the real test split, per group.
CLASSIFIER_METRICS: tuple[str, ...] = ("accuracy", "f1", "fnr", "fpr", "count")

#: Every ``metric``: :data:`CLASSIFIER_METRICS` per group; about the fit
#: (``group == "overall"``): ``epsilon_spent`` and ``delta_spent`` (private methods
#: only) and the wall times ``fit_seconds`` (the synthesizer's or the real
#: classifier's), ``sample_seconds`` and ``eval_seconds`` (the classifier trained on
#: synthetic rows; synthesizers only); with the options, :data:`FIDELITY_METRICS`
#: and, for ``method@authors``, ``chosen`` (the index of the winning classifier in
#: :data:`dpnotes.importance.evaluation.CLASSIFIERS`; -1: the training rows held one
#: label, so the prediction is that label).
METRICS: tuple[str, ...] = (
    *CLASSIFIER_METRICS,
    "epsilon_spent",
    "delta_spent",
    "fit_seconds",
    "sample_seconds",
    "eval_seconds",
    *FIDELITY_METRICS,
    "chosen",
)


@dataclass(frozen=True)
class E2EProfile(Profile):
    """Settings of ``spending_e2e``.

    Attributes:
        datasets: Keys of :data:`DATASETS`.
        seeds: Runs (each its own cells); the paper averages 10.
        epsilons: Total budgets of every private method.
        methods: Of :data:`METHODS` (default: the paper's, :data:`PAPER_METHODS`).
        rows: Keep this many rows of each data set before the split (None: all).
        delta: The synthesizers' delta.
        eval_epsilon: Epsilon of the classifier trained on synthetic rows; ``None``:
            a non-private one (post-processing of the synthetic data).
        n_samples: Rows of S that SAGE explains (SuperQUAIL's ``n_samples``).
        n_background: SAGE's background rows.
        sage_thresh: SAGE's convergence threshold.
        max_permutations: SAGE's cap on permutations.
        batch_size: SAGE's permutations per round.
        mst_iters: Mirror-descent iterations of every MST (alone and inside SQ).
        fnr_target: ``fsq_fnr_cap``'s cap on the black group's FNR (public, fixed
            in advance).
        aim_iters: Mirror-descent iterations of ``aim_target``'s rounds.
        fidelity: Add the aggregate fidelity rows (:data:`FIDELITY_METRICS`).
        evaluations: Of :data:`EVALUATIONS`; the first is ``"logistic"``.
    """

    datasets: tuple[str, ...]
    seeds: tuple[int, ...]
    epsilons: tuple[float, ...] = EPSILONS
    methods: tuple[str, ...] = PAPER_METHODS
    rows: int | None = None
    delta: float = DELTA
    eval_epsilon: float | None = None
    n_samples: int = 2048
    n_background: int = 128
    sage_thresh: float = 0.025
    max_permutations: int = 16384
    batch_size: int = 512
    mst_iters: int = 3000
    fnr_target: float = 0.1
    aim_iters: int = 1000
    fidelity: bool = False
    evaluations: tuple[str, ...] = ("logistic",)


_PROFILES = {
    "smoke": E2EProfile(
        datasets=("ACSMobility-NM",),
        seeds=(0,),
        epsilons=(EPSILONS[2],),
        rows=600,
        n_samples=128,
        n_background=16,
        sage_thresh=0.2,
        max_permutations=128,
        batch_size=64,
        mst_iters=100,
    ),
    "quick": E2EProfile(
        datasets=("ACSEmployment-NY-sample",),
        seeds=(0,),
        epsilons=(EPSILONS[0], EPSILONS[3]),
        rows=10000,
        n_samples=512,
        n_background=32,
        sage_thresh=0.05,
        max_permutations=1024,
        batch_size=256,
        mst_iters=1000,
    ),
    # Two stand-ins for the paper's California ACSEmployment: the New York sample
    # (ages 17-89) and New Mexico's whole file (all ages, the paper's population).
    "paper": E2EProfile(
        datasets=(
            "ACSEmployment-NY-sample",
            "ACSEmployment-NM",
            "ACSPublicCoverage-NM",
            "ACSMobility-NM",
        ),
        seeds=tuple(range(10)),
    ),
}


def _check_config(config: E2EProfile) -> None:
    unknown = [d for d in config.datasets if d not in DATASETS]
    if unknown or not config.datasets:
        raise ValueError(
            f"datasets must be keys of DATASETS ({', '.join(DATASETS)}), got "
            f"{list(config.datasets)!r}."
        )
    bad = [m for m in config.methods if m not in METHODS]
    if bad or not config.methods:
        raise ValueError(f"methods must be of {METHODS}, got {list(config.methods)!r}.")
    if (
        not config.evaluations
        or config.evaluations[0] != "logistic"
        or any(e not in EVALUATIONS for e in config.evaluations)
        or len(set(config.evaluations)) != len(config.evaluations)
    ):
        raise ValueError(
            f"evaluations must start with 'logistic' and hold distinct values of "
            f"{EVALUATIONS}, got {list(config.evaluations)!r}."
        )
    if not 0.0 <= config.fnr_target <= 1.0:
        raise ValueError(f"fnr_target must lie in [0, 1], got {config.fnr_target!r}.")
    if not config.epsilons or not all(
        isinstance(e, (int, float)) and math.isfinite(e) and e > 0
        for e in config.epsilons
    ):
        raise ValueError(
            f"epsilons must be positive finite numbers, got {config.epsilons!r}."
        )


def _grid(config: E2EProfile) -> list[dict[str, Any]]:
    _check_config(config)
    return seed_major_grid(config)


def group_metrics(
    y_true: np.ndarray, y_pred: np.ndarray, groups: np.ndarray
) -> pd.DataFrame:
    """Return accuracy, F1, FNR, FPR and count, overall and per group.

    Args:
        y_true: True 0/1 labels.
        y_pred: Predicted 0/1 labels.
        groups: Group name of each record.

    Returns:
        A frame with columns ``group`` (``"overall"``, then the groups in order of
        first appearance sorted by name), ``metric`` (:data:`CLASSIFIER_METRICS`) and
        ``value``. A rate with an empty denominator (e.g. the FNR of a group without
        positives) is NaN; F1 without predicted or true positives is 0.

    Raises:
        ValueError: If the arrays differ in length or are empty.

    Examples:
        >>> out = group_metrics(np.array([1, 0, 1, 0]), np.array([1, 0, 0, 0]),
        ...                     np.array(["a", "a", "b", "b"]))
        >>> float(out.set_index(["group", "metric"]).loc[("b", "fnr"), "value"])
        1.0
    """
    from fairlearn.metrics import (
        MetricFrame,
        count,
        false_negative_rate,
        false_positive_rate,
    )
    from sklearn.metrics import accuracy_score, f1_score

    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    groups = np.asarray(groups)
    if not (len(y_true) == len(y_pred) == len(groups)) or len(y_true) == 0:
        raise ValueError(
            "y_true, y_pred and groups must be non-empty and of equal length, got "
            f"{len(y_true)}, {len(y_pred)}, {len(groups)}."
        )

    def rate(fn):
        def metric(t, p):
            positives = np.sum(t == 1) if fn is false_negative_rate else np.sum(t == 0)
            return float(fn(t, p, pos_label=1)) if positives else float("nan")

        return metric

    frame = MetricFrame(
        metrics={
            "accuracy": accuracy_score,
            "f1": lambda t, p: f1_score(t, p, pos_label=1, zero_division=0),
            "fnr": rate(false_negative_rate),
            "fpr": rate(false_positive_rate),
            "count": count,
        },
        y_true=y_true,
        y_pred=y_pred,
        sensitive_features=groups,
    )
    rows = []
    for metric in CLASSIFIER_METRICS:
        rows.append(
            {
                "group": "overall",
                "metric": metric,
                "value": float(frame.overall[metric]),
            }
        )
        for group, value in frame.by_group[metric].items():
            rows.append({"group": str(group), "metric": metric, "value": float(value)})
    return pd.DataFrame(rows)


def _evaluate(
    model: CodesClassifier, task: SpendingTask, method: str
) -> list[dict[str, Any]]:
    test = task.test
    predicted = model.predict(test[list(model.features_)])
    out = group_metrics(
        test[task.target].to_numpy(), predicted, task.group_of(test).to_numpy()
    )
    out.insert(0, "method", method)
    return out.to_dict("records")


def _scalar(method: str, metric: str, value: float) -> dict[str, Any]:
    return {
        "method": method,
        "group": "overall",
        "metric": metric,
        "value": float(value),
    }


def _synthesizer(
    config: E2EProfile, method: str, task: SpendingTask, epsilon: float
) -> MST | AIM | SuperQUAIL:
    if method == "mst":
        return MST(epsilon=epsilon, delta=config.delta, iters=config.mst_iters)
    if method == "aim_target":
        features = [c for c in task.domain if c != task.target]
        return AIM(
            epsilon=epsilon,
            delta=config.delta,
            workload=[(task.target, f) for f in features],
            iters=config.aim_iters,
        )
    fair: dict[str, Any] = {}
    if method != "sq":
        groups = dict(task.groups)
        fairness = method.removeprefix("fsq_")
        fair = {
            "fairness": fairness,
            "sensitive": task.sensitive,
            "protected": int(groups[task.protected][0]),
            "groups": groups,
            "privileged": "white",
        }
        if fairness == "fnr_cap":
            fair["fnr_target"] = config.fnr_target
    return SuperQUAIL(
        epsilon=epsilon,
        delta=config.delta,
        n_samples=config.n_samples,
        n_background=config.n_background,
        sage_thresh=config.sage_thresh,
        max_permutations=config.max_permutations,
        batch_size=config.batch_size,
        mst_options={"iters": config.mst_iters},
        **fair,
    )


def fidelity_rows(
    method: str, rows: pd.DataFrame, train: pd.DataFrame, task: SpendingTask
) -> list[dict[str, Any]]:
    """Aggregate fidelity of ``rows`` against the real training split.

    Args:
        method: The method whose rows these are.
        rows: Synthetic rows (codes of the task's domain).
        train: The real training split the synthesizer was fitted on.
        task: The task (its domain and target).

    Returns:
        Rows of :data:`FIDELITY_METRICS` (group ``"overall"``): the share of the
        target's code 1 in ``rows``, and the mean and largest total variation distance
        (half the L1 distance of proportions) over every one-way and every two-way
        marginal. An evaluation statistic of the real data, not a release.

    Examples:
        >>> from types import SimpleNamespace
        >>> t = SimpleNamespace(domain={"A": 2, "Y": 2}, target="Y")
        >>> real = pd.DataFrame({"A": [0, 1, 1, 1], "Y": [0, 1, 1, 0]})
        >>> out = fidelity_rows("m", real.assign(Y=1), real, t)
        >>> {r["metric"]: r["value"] for r in out}["tvd_1way_max"]
        0.5
    """
    domain = dict(task.domain)
    out = [_scalar(method, "target_share", float(np.mean(rows[task.target] == 1)))]
    for k in (1, 2):
        tvd = [_tvd(rows, train, domain, c) for c in all_kway(domain, k)]
        out.append(_scalar(method, f"tvd_{k}way_mean", float(np.mean(tvd))))
        out.append(_scalar(method, f"tvd_{k}way_max", float(np.max(tvd))))
    return out


def _tvd(a: pd.DataFrame, b: pd.DataFrame, domain: dict[str, int], clique) -> float:
    pa, pb = (marginal(x, domain, clique).astype(float) for x in (a, b))
    return 0.5 * float(np.abs(pa / max(pa.sum(), 1.0) - pb / max(pb.sum(), 1.0)).sum())


def _authors_rows(
    method: str, rows: pd.DataFrame, task: SpendingTask, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """The authors' evaluation of ``rows`` (not private, selected on test): rows of
    ``method@authors``, the metrics of the white and black test records.

    A training set of one label (a collapsed synthetic target) cannot be upsampled or
    fitted; any classifier trained on it predicts that label, and so does this row.
    """
    name = f"{method}@authors"
    test = task.test
    features = [c for c in task.domain if c != task.target]
    groups = task.group_of(test).to_numpy()
    kept = np.isin(groups, AUTHORS_SUBSET)
    one = np.unique(rows[task.target].to_numpy())
    started = time.perf_counter()
    if one.size < 2:
        labels = test[task.target].to_numpy()[kept]
        predicted, groups, chosen = np.full(kept.sum(), one[0]), groups[kept], -1.0
    else:
        ev = authors_evaluation(
            rows,
            test,
            target=task.target,
            features=features,
            rng=rng,
            train_groups=task.group_of(rows).to_numpy(),
            test_groups=groups,
        )
        labels, predicted, groups = ev.labels, ev.predictions, ev.groups
        chosen = float(CLASSIFIERS.index(ev.chosen))
    out = group_metrics(labels, predicted, groups)
    out.insert(0, "method", name)
    return [
        _scalar(name, "eval_seconds", time.perf_counter() - started),
        _scalar(name, "chosen", chosen),
        *out.to_dict("records"),
    ]


def _eval_classifier(
    config: E2EProfile, rows: pd.DataFrame, task: SpendingTask, rng
) -> CodesClassifier:
    if config.eval_epsilon is None:
        return NonPrivateLogisticRegression().fit(
            rows, dict(task.domain), target=task.target
        )
    return DPLogisticRegression(epsilon=config.eval_epsilon).fit(
        rows, dict(task.domain), target=task.target, rng=rng
    )


@register(
    name="spending_e2e",
    title="Logistic regression trained on real, MST, SuperQUAIL and FSQ data: "
    "accuracy, F1, FNR and FPR per group against epsilon",
    profiles=_PROFILES,
    grid=_grid,
    datasets=data_files,
    figure="Table 1 and Figures 2, 4, 5 of the spending paper (rosenblatt2022spending)",
)
def spending_e2e(
    config: E2EProfile,
    cell: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    cache: Cache | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Fit every method on one data set, epsilon and seed; test on the real test split.

    Fits see the training split only; the test split serves only the metrics. Each
    method gets its own child stream of ``rng`` (in :data:`METHODS` order, whichever
    methods the profile runs), so a method's numbers do not depend on the others.
    """
    _check_config(config)
    dataset, epsilon = cell["dataset"], float(cell["epsilon"])
    task = load_task(dataset, config.rows)
    train = task.train
    domain = dict(task.domain)
    streams = dict(zip(METHODS, rng.spawn(len(METHODS)), strict=True))
    rows: list[dict[str, Any]] = []
    for method in config.methods:
        r = streams[method]
        started = time.perf_counter()
        if method == "real":
            model = NonPrivateLogisticRegression().fit(
                train, domain, target=task.target
            )
            rows.append(_scalar(method, "fit_seconds", time.perf_counter() - started))
            rows += _evaluate(model, task, method)
            if config.fidelity:
                share = float(np.mean(train[task.target] == 1))
                rows.append(_scalar(method, "target_share", share))
            if "authors" in config.evaluations:
                rows += _authors_rows(method, train, task, r.spawn(1)[0])
            continue
        if method == "real_dp":
            model = DPLogisticRegression(epsilon=epsilon).fit(
                train, domain, target=task.target, rng=r
            )
            rows.append(_scalar(method, "fit_seconds", time.perf_counter() - started))
            rows.append(_scalar(method, "epsilon_spent", model.epsilon_spent))
            rows.append(_scalar(method, "delta_spent", 0.0))
            rows += _evaluate(model, task, method)
            continue
        r_fit, r_sample, r_eval = r.spawn(3)
        synth = _synthesizer(config, method, task, epsilon)
        if method in ("mst", "aim_target"):
            synth.fit(train, domain, rng=r_fit)
            spent_eps = min(synth.epsilon, synth.epsilon_spent)
            spent_delta = synth.delta
        else:
            synth.fit(train, domain, target=task.target, rng=r_fit)
            spent_eps, spent_delta = synth.epsilon_spent, synth.delta_spent
        fitted = time.perf_counter()
        # The number of synthetic rows is the training size, taken as public (under
        # adding or removing a record, n itself is not protected: an assumption).
        # A target collapsed to one class is recorded by the metrics (one predicted
        # class), so SuperQUAIL's warning is not repeated here.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CollapsedTargetWarning)
            synthetic = synth.sample(len(train), rng=r_sample)
        sampled = time.perf_counter()
        model = _eval_classifier(config, synthetic, task, r_eval)
        evaluated = time.perf_counter()
        rows.append(_scalar(method, "fit_seconds", fitted - started))
        rows.append(_scalar(method, "sample_seconds", sampled - fitted))
        rows.append(_scalar(method, "eval_seconds", evaluated - sampled))
        # Training on synthetic rows is post-processing of the synthesizer's
        # release; a DP evaluation classifier (eval_epsilon) would only add noise.
        rows.append(_scalar(method, "epsilon_spent", spent_eps))
        rows.append(_scalar(method, "delta_spent", spent_delta))
        rows += _evaluate(model, task, method)
        if config.fidelity:
            rows += fidelity_rows(method, synthetic, train, task)
        if "authors" in config.evaluations:
            rows += _authors_rows(method, synthetic, task, r.spawn(1)[0])
    return pd.DataFrame(rows)[["method", "group", "metric", "value"]]
