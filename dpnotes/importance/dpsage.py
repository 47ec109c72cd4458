"""DPSAGE: private feature importance (Rosenblatt, Allen, Stoyanovich 2022, Alg. 1).

SAGE (Covert, Lundberg and Lee 2020) scores each feature by how much a model's loss
drops, on average over random orders of the features, when the feature is revealed.
DPSAGE makes it private by never letting SAGE touch the real records:

1. split the budget: ``gamma * epsilon`` (with ``delta``) to a synthesizer S (MST),
   ``(1 - gamma) * epsilon`` to a DP logistic regression C of the target (the paper
   prints ``1 (gamma epsilon)``; its proof of Theorem 3 has ``(1 - gamma) epsilon``);
2. fit C (:class:`~dpnotes.importance.classifier.DPLogisticRegression`) and S
   (:class:`~dpnotes.synth.mst.MST`) on the real records;
3. run SAGE's permutation estimator with the marginal imputer and the cross-entropy
   loss on C, with rows **sampled from S** as the background and as the records to
   explain; their labels are S's synthetic target (``labels="synthetic"``) or C's own
   probabilities (``labels="model"``: SAGE's "Shapley effects", no labels needed).

Step 3 reads only (S, C), so it is post-processing: the result costs exactly what
steps 1-2 spend, ``(gamma epsilon, delta) + ((1 - gamma) epsilon, 0)`` by basic
composition, with ``delta`` from MST alone. The fitted S and C are returned for reuse
(SuperQUAIL samples from S and replaces the target with C).

:func:`real_sage` runs SAGE on a **non-private** logistic regression with the **real**
records: the reference that the paper's Table 2 compares DPSAGE with. It is not
private and must never be released as if it were.

The cost of SAGE is bounded by ``n_background`` (rows averaged over per imputation),
``batch_size`` (permutations per round) and ``max_permutations``; it stops earlier when
the largest standard error falls below ``thresh`` times the spread of the values.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from dpnotes.accounting import (
    ApproxBudget,
    compose_parallel,
    compose_sequential_approx,
)
from dpnotes.importance.classifier import (
    CodesClassifier,
    DPLogisticRegression,
    NonPrivateLogisticRegression,
)
from dpnotes.rng import check_rng
from dpnotes.synth.domain import Domain, check_data, check_domain
from dpnotes.synth.mst import MST
from dpnotes.validation import (
    check_choice,
    check_delta,
    check_epsilon,
    check_int,
    check_options,
    check_probability,
)

__all__ = [
    "GROUP_SPLITS",
    "LABELS",
    "DPSAGEResult",
    "GroupDPSAGEResult",
    "SAGEResult",
    "check_groups",
    "dpsage",
    "dpsage_groups",
    "real_sage",
]

#: Where the labels of the explained rows come from (see :func:`dpsage`).
LABELS: tuple[str, ...] = ("synthetic", "model")

#: The keywords ``mst_options`` may pass on to :class:`~dpnotes.synth.mst.MST` (here
#: and in :class:`~dpnotes.importance.superquail.SuperQUAIL`).
MST_OPTIONS = ("iters", "compress_threshold")
#: The keywords ``classifier_options`` may pass on to the DP logistic regression.
CLASSIFIER_OPTIONS = ("C", "max_iter", "tol")
_MAX_BACKGROUND = 1024  # sage warns above this; the cost grows linearly with it
#: How :func:`dpsage_groups`'s per-group classifiers share the classifier budget.
GROUP_SPLITS: tuple[str, ...] = ("parallel", "even")
_MIN_GROUP_ROWS = 32  # fewer of S's rows of a group than this: use the fallback
_MAX_DRAW_FACTOR = 16  # rejection sampling draws at most this many times


@dataclass(frozen=True)
class SAGEResult:
    """SAGE values of a model: the **non-private** reference of :func:`real_sage`.

    Attributes:
        ranking: The features, most important first (ties keep the domain's order).
        values: SAGE value per feature (index: features in the domain's order).
        std: The estimator's standard error per feature.
        model: The explained (non-private) classifier.
        private: Always ``False``: computed on the real records without noise.
    """

    ranking: tuple[str, ...]
    values: pd.Series
    std: pd.Series
    model: CodesClassifier
    private: bool = False


@dataclass(frozen=True)
class DPSAGEResult:
    """The output of :func:`dpsage`.

    Attributes:
        ranking: The features, most important first (ties keep the domain's order).
        values: SAGE value per feature (index: features in the domain's order).
        std: The estimator's standard error per feature.
        synthesizer: The fitted MST (``gamma * epsilon``), for reuse.
        classifier: The fitted DP logistic regression of the target
            (``(1 - gamma) * epsilon``), for reuse.
        budget: The ``(epsilon, delta)`` spent, by basic composition.
        ledger: ``(what, ApproxBudget)`` for each release, in the order made.
        target: The target column.
        gamma: The synthesizer's share of ``epsilon``.
        labels: ``"synthetic"`` or ``"model"`` (see :func:`dpsage`).
        seconds: Wall time of each stage: ``"classifier"``, ``"synthesizer"``,
            ``"sampling"`` and ``"sage"``.
    """

    ranking: tuple[str, ...]
    values: pd.Series
    std: pd.Series
    synthesizer: MST
    classifier: DPLogisticRegression
    budget: ApproxBudget
    ledger: tuple[tuple[str, ApproxBudget], ...]
    target: str
    gamma: float
    labels: str
    seconds: Mapping[str, float]


@dataclass(frozen=True)
class GroupDPSAGEResult:
    """The output of :func:`dpsage_groups`: one ranking per group, one S for all.

    Attributes:
        rankings: Group name -> the features, most important first.
        values: Group name -> SAGE value per feature (a Series).
        synthesizer: The fitted MST (``gamma * epsilon``), shared by the groups.
        classifiers: Group name -> its DP logistic regression of the target.
        budget: The ``(epsilon, delta)`` spent.
        ledger: ``(what, ApproxBudget)`` for each release, in the order made.
        target: The target column.
        gamma: The synthesizer's share of ``epsilon``.
        group_split: ``"parallel"`` or ``"even"`` (see :func:`dpsage_groups`).
        seconds: Wall time of each stage: ``"synthesizer"``, ``"classifiers"`` and
            ``"sage"``.
    """

    rankings: Mapping[str, tuple[str, ...]]
    values: Mapping[str, pd.Series]
    synthesizer: MST
    classifiers: Mapping[str, DPLogisticRegression]
    budget: ApproxBudget
    ledger: tuple[tuple[str, ApproxBudget], ...]
    target: str
    gamma: float
    group_split: str
    seconds: Mapping[str, float]


def check_n_background(n_background: int) -> int:
    """Return SAGE's number of background rows, checked: an integer in 1..1024.

    Shared by :func:`dpsage`, :func:`dpsage_groups`, :func:`real_sage` and
    :class:`~dpnotes.importance.superquail.SuperQUAIL`.

    Raises:
        TypeError: If ``n_background`` is not an integer.
        ValueError: If it is below 1 or above 1024 (SAGE's cost grows linearly with
            it).
    """
    n_background = check_int(n_background, "n_background", minimum=1)
    if n_background > _MAX_BACKGROUND:
        raise ValueError(
            f"n_background={n_background} is above {_MAX_BACKGROUND}: SAGE's cost "
            "grows linearly with it and 128 to 512 rows are usually enough. Pass a "
            "smaller value."
        )
    return n_background


def _check_sage_cost(
    n_background: int, thresh: float, max_permutations: int, batch_size: int
) -> tuple[int, float, int, int]:
    n_background = check_n_background(n_background)
    thresh = check_probability(thresh, "thresh")
    max_permutations = check_int(max_permutations, "max_permutations", minimum=1)
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    return n_background, thresh, max_permutations, batch_size


def check_target_column(domain: Mapping[str, int], target: object) -> str:
    """Return ``target``, checked to be the name of an attribute of ``domain``.

    Shared by :func:`dpsage`, :func:`dpsage_groups`, :func:`real_sage` and
    :class:`~dpnotes.importance.superquail.SuperQUAIL`.

    Raises:
        TypeError: If ``target`` is not a string.
        ValueError: If it is not an attribute of ``domain``.
    """
    if not isinstance(target, str):
        raise TypeError(
            f"target must be a column name (a string), got {type(target).__name__}."
        )
    if target not in domain:
        raise ValueError(
            f"target {target!r} is not an attribute of the domain {list(domain)}; "
            "pass one of its attributes."
        )
    return target


def _check_target(domain: dict[str, int], target: object) -> str:
    target = check_target_column(domain, target)
    if len(domain) < 2:
        raise ValueError(
            "the domain holds only the target; SAGE needs at least one feature."
        )
    return target


def _sage(
    predict_proba: Callable[[np.ndarray], np.ndarray],
    x: np.ndarray,
    y: np.ndarray | None,
    background: np.ndarray,
    *,
    rng: np.random.Generator,
    thresh: float,
    max_permutations: int,
    batch_size: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Run SAGE's permutation estimator (marginal imputer, cross-entropy loss)."""
    import sage

    imputer = sage.MarginalImputer(predict_proba, background)
    estimator = sage.PermutationEstimator(
        imputer, "cross entropy", random_state=int(rng.integers(0, 2**31 - 1))
    )
    # sage prints a line when it explains the model's own output (y is None).
    with contextlib.redirect_stdout(io.StringIO()):
        explanation = estimator(
            x,
            y,
            batch_size=batch_size,
            detect_convergence=True,
            thresh=thresh,
            n_permutations=max_permutations,
            bar=False,
        )
    return np.asarray(explanation.values), np.asarray(explanation.std)


def _ranking(features: Sequence[str], values: np.ndarray) -> tuple[str, ...]:
    order = np.argsort(-values, kind="stable")
    return tuple(features[i] for i in order)


class _Arguments(NamedTuple):
    """The checked arguments :func:`dpsage` and :func:`dpsage_groups` share."""

    epsilon: float
    delta: float
    gamma: float
    labels: str
    n_samples: int
    sage_cost: tuple[int, float, int, int]
    mst_kw: dict[str, Any]
    clf_kw: dict[str, Any]
    rng: np.random.Generator


def _check_arguments(
    epsilon: object,
    delta: object,
    gamma: object,
    labels: object,
    n_samples: object,
    sage_cost: tuple[object, object, object, object],
    mst_options: Mapping[str, Any] | None,
    classifier_options: Mapping[str, Any] | None,
    rng: object,
) -> _Arguments:
    """Check the budget, SAGE cost, options and generator (before any fit)."""
    return _Arguments(
        epsilon=check_epsilon(epsilon),
        delta=check_delta(delta),
        gamma=check_probability(gamma, "gamma"),
        labels=check_choice(labels, LABELS, "labels"),
        n_samples=check_int(n_samples, "n_samples", minimum=1),
        sage_cost=_check_sage_cost(*sage_cost),
        mst_kw=check_options(mst_options, MST_OPTIONS, "mst_options"),
        clf_kw=check_options(
            classifier_options, CLASSIFIER_OPTIONS, "classifier_options"
        ),
        rng=check_rng(rng),
    )


def dpsage(
    df: pd.DataFrame,
    domain: Domain,
    *,
    target: str,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    gamma: float = 0.5,
    labels: str = "synthetic",
    n_samples: int = 2048,
    n_background: int = 128,
    thresh: float = 0.025,
    max_permutations: int = 16384,
    batch_size: int = 512,
    mst_options: Mapping[str, Any] | None = None,
    classifier_options: Mapping[str, Any] | None = None,
) -> DPSAGEResult:
    """Rank the features by their SAGE values, privately (DPSAGE, Algorithm 1).

    Args:
        df: The private (training) records: exactly the domain's columns, as codes.
        domain: The public domain (attribute -> number of codes).
        target: The column C predicts; every other attribute is a feature.
        epsilon: The total budget.
        delta: MST's delta (the only approximate part).
        rng: The random generator; the fits, the samples and SAGE's permutations
            each get an independent child stream.
        gamma: The synthesizer's share of ``epsilon``, in (0, 1); C gets the rest.
        labels: ``"synthetic"``: the explained rows keep S's sampled target (SAGE
            proper). ``"model"``: C's probabilities on the rows serve as soft labels
            (SAGE's Shapley effects; useful when S's target is poor).
        n_samples: Rows sampled from S to explain (a public number).
        n_background: Rows sampled from S for the marginal imputer, at most 1024.
        thresh: Stop when the largest standard error is below ``thresh`` times the
            spread of the values, in (0, 1).
        max_permutations: Stop after at least this many permutations anyway.
        batch_size: Permutations per round (SAGE checks convergence every round).
        mst_options: Keyword arguments of :class:`~dpnotes.synth.mst.MST`
            (``iters``, ``compress_threshold``).
        classifier_options: Keyword arguments of
            :class:`~dpnotes.importance.classifier.DPLogisticRegression` (``C``,
            ``max_iter``, ``tol``).

    Returns:
        A :class:`DPSAGEResult` with the ranking, the values, S, C and the budget.

    Raises:
        ValueError: For an empty frame, columns that differ from the domain, values
            outside it, an unknown target, a budget or share out of range, unknown
            options, or an unknown ``labels``; all before any fit.
        TypeError: If ``rng`` is not a numpy Generator or ``df`` not a DataFrame.

    Privacy:
        ``(epsilon, delta)``-DP under adding or removing one record, by basic
        composition of MST (``(gamma epsilon, delta)``-DP, accounted in zCDP and
        converted) and the DP logistic regression (``(1 - gamma) epsilon``-DP, a
        conservative claim under this relation); SAGE is post-processing of the two
        (it reads synthetic rows and C only). ``result.budget`` is what was spent.

    References:
        rosenblatt2022spending, Algorithm 1 and Theorem 3; covert2020understanding;
        mckenna2021winning; chaudhuri2011differentially.
    """
    domain = check_domain(domain)
    target = _check_target(domain, target)
    a = _check_arguments(
        epsilon, delta, gamma, labels, n_samples,
        (n_background, thresh, max_permutations, batch_size),
        mst_options, classifier_options, rng,
    )  # fmt: skip
    epsilon, delta, gamma, labels, n_samples = (
        a.epsilon, a.delta, a.gamma, a.labels, a.n_samples
    )  # fmt: skip
    n_background, thresh, max_permutations, batch_size = a.sage_cost
    mst_kw, clf_kw, rng = a.mst_kw, a.clf_kw, a.rng
    data = check_data(df, domain)
    synthesizer = MST(epsilon=gamma * epsilon, delta=delta, **mst_kw)
    # (1 - gamma) epsilon, written so that the two shares add up to epsilon in floats.
    classifier = DPLogisticRegression(epsilon=epsilon - synthesizer.epsilon, **clf_kw)
    r_clf, r_mst, r_sample, r_sage = rng.spawn(4)

    seconds = {}
    start = time.perf_counter()
    classifier.fit(data, domain, target=target, rng=r_clf)
    seconds["classifier"] = time.perf_counter() - start
    start = time.perf_counter()
    synthesizer.fit(data, domain, rng=r_mst)
    seconds["synthesizer"] = time.perf_counter() - start

    # From here on only S and C are read: post-processing.
    start = time.perf_counter()
    features = list(classifier.features_)
    explained = synthesizer.sample(n_samples, rng=r_sample)
    background = synthesizer.sample(n_background, rng=r_sample)
    x = explained[features].to_numpy()
    y = explained[target].to_numpy() if labels == "synthetic" else None
    seconds["sampling"] = time.perf_counter() - start
    start = time.perf_counter()
    values, std = _sage(
        classifier.predict_proba,
        x,
        y,
        background[features].to_numpy(),
        rng=r_sage,
        thresh=thresh,
        max_permutations=max_permutations,
        batch_size=batch_size,
    )
    seconds["sage"] = time.perf_counter() - start

    spent_c = ApproxBudget(classifier.epsilon_spent, 0.0)
    ledger = (
        ("synthesizer S (MST)", ApproxBudget(synthesizer.epsilon_spent, delta)),
        ("classifier C (DP logistic regression)", spent_c),
    )
    budget = compose_sequential_approx([b for _, b in ledger])
    if budget.epsilon > epsilon * (1.0 + 1e-9) or budget.delta > delta:
        raise RuntimeError(  # an invariant: the shares are fixed before any fit
            f"DPSAGE spent {budget} of ({epsilon}, {delta}); please report this bug."
        )
    return DPSAGEResult(
        ranking=_ranking(features, values),
        values=pd.Series(values, index=features, name="sage"),
        std=pd.Series(std, index=features, name="std"),
        synthesizer=synthesizer,
        classifier=classifier,
        budget=budget,
        ledger=ledger,
        target=target,
        gamma=gamma,
        labels=labels,
        seconds=MappingProxyType(seconds),
    )


def check_groups(
    groups: Mapping[str, Sequence[int]] | None,
    size: int,
    protected: int | None,
    name: str,
) -> dict[str, tuple[int, ...]]:
    """Return the public partition of a sensitive attribute's codes into groups.

    Args:
        groups: Group name -> codes of the attribute; None: the ``protected`` code
            against all the others (``{"protected": ..., "other": ...}``).
        size: The attribute's number of codes.
        protected: The protected group's code (used when ``groups`` is None).
        name: The attribute's name, for messages.

    Raises:
        TypeError: If ``groups`` is not a non-empty mapping.
        ValueError: If a group has no codes, or the groups do not partition the codes
            ``0..size - 1`` (parallel composition needs a public partition of
            everyone).
    """
    if groups is None:
        if protected is None:
            raise ValueError("give groups, or the protected code to split off.")
        rest = tuple(c for c in range(size) if c != protected)
        return {"protected": (protected,), "other": rest}
    if not isinstance(groups, Mapping) or not groups:
        raise TypeError(
            "groups must be a non-empty mapping of group name -> codes of the "
            "sensitive attribute, e.g. {'white': (0,), 'black': (1,), ...}."
        )
    out, seen = {}, []
    for g, codes in groups.items():
        members = tuple(int(c) for c in codes)
        if not members:
            raise ValueError(f"group {g!r} has no codes; every group needs one.")
        out[str(g)] = members
        seen.extend(members)
    if sorted(seen) != list(range(size)):
        raise ValueError(
            f"groups must partition the codes 0..{size - 1} of {name!r}: every code "
            f"in exactly one group (got {sorted(seen)}). Parallel composition needs "
            "a public partition that covers everyone; add an 'other' group."
        )
    return out


def _group_pools(
    synthesizer: MST,
    sensitive: str,
    code_group: np.ndarray,
    groups: Mapping[str, tuple[int, ...]],
    want: int,
    rng: np.random.Generator,
) -> dict[str, pd.DataFrame]:
    """``want`` rows of S per group: rejection sampling, with a fallback (S only).

    A group of which S yields fewer than ``_MIN_GROUP_ROWS`` rows in
    ``_MAX_DRAW_FACTOR`` draws gets S's first rows with its codes written in.
    """
    names = list(groups)
    drawn: list[pd.DataFrame] = []
    counts = np.zeros(len(names), dtype=np.int64)
    r_draw, r_fill = rng.spawn(2)
    for _ in range(_MAX_DRAW_FACTOR):
        batch = synthesizer.sample(want, rng=r_draw)
        drawn.append(batch)
        g = code_group[batch[sensitive].to_numpy()]
        counts += np.bincount(g, minlength=len(names))
        if counts.min() >= want:
            break
    rows = pd.concat(drawn, ignore_index=True)
    g = code_group[rows[sensitive].to_numpy()]
    pools = {}
    for i, name in enumerate(names):
        mine = rows[g == i]
        if len(mine) < _MIN_GROUP_ROWS:
            mine = rows.iloc[:want].copy()
            codes = np.asarray(groups[name])
            mine[sensitive] = r_fill.choice(codes, size=len(mine))
        pools[name] = mine.iloc[:want].reset_index(drop=True)
    return pools


def _check_sensitive(
    domain: dict[str, int], target: str, sensitive: object, groups: object
) -> dict[str, tuple[int, ...]]:
    """Check the sensitive attribute and return its public partition into groups."""
    if not isinstance(sensitive, str) or sensitive not in domain:
        raise ValueError(
            f"sensitive={sensitive!r} is not an attribute of the domain "
            f"{list(domain)}; pass one of its attributes."
        )
    if sensitive == target:
        raise ValueError("the sensitive attribute cannot be the target.")
    return check_groups(groups, domain[sensitive], None, sensitive)  # type: ignore[arg-type]


def _explain_groups(
    classifiers: Mapping[str, DPLogisticRegression],
    pools: Mapping[str, pd.DataFrame],
    target: str,
    n_background: int,
    rng: np.random.Generator,
    *,
    labels: str = "synthetic",
    **sage_options: Any,
) -> tuple[dict[str, tuple[str, ...]], dict[str, pd.Series]]:
    """SAGE of each group's classifier on its pool of S's rows (post-processing).

    The first ``n_background`` rows of a pool are the background, the rest are
    explained with S's target as labels (``labels="synthetic"``; the classifier's own
    output where those hold one class: sage refuses labels of one class) or with
    the classifier's own output (``labels="model"``).
    """
    rankings, values = {}, {}
    for (name, clf), r in zip(
        classifiers.items(), rng.spawn(len(classifiers)), strict=True
    ):
        pool = pools[name]
        features = list(clf.features_)
        explained, background = pool.iloc[n_background:], pool.iloc[:n_background]
        y = explained[target].to_numpy()
        own = labels == "model" or np.unique(y).size < 2
        v, _ = _sage(
            clf.predict_proba,
            explained[features].to_numpy(),
            None if own else y,
            background[features].to_numpy(),
            rng=r,
            **sage_options,
        )
        values[name] = pd.Series(v, index=features, name="sage")
        rankings[name] = _ranking(features, v)
    return rankings, values


def _group_ledger(
    mst: MST,
    classifiers: Mapping[str, DPLogisticRegression],
    group_split: str,
    epsilon: float,
    delta: float,
) -> tuple[tuple[tuple[str, ApproxBudget], ...], ApproxBudget]:
    """The releases of :func:`dpsage_groups` and their total, checked with the plan."""
    per_group = [ApproxBudget(c.epsilon_spent, 0.0) for c in classifiers.values()]
    if group_split == "parallel":
        how, combined = "parallel: max", compose_parallel(per_group)
    else:
        how, combined = "even split: sum", compose_sequential_approx(per_group)
    ledger = (
        ("synthesizer S (MST)", ApproxBudget(mst.epsilon_spent, delta)),
        (
            f"target classifiers C_f*,g, one per group {list(classifiers)} ({how})",
            combined,
        ),
    )
    budget = compose_sequential_approx([b for _, b in ledger])
    if budget.epsilon > epsilon * (1.0 + 1e-9) or budget.delta > delta:
        raise RuntimeError(  # an invariant: the shares are fixed before any fit
            f"DPSAGE spent {budget} of ({epsilon}, {delta}); please report this bug."
        )
    return ledger, budget


def dpsage_groups(
    df: pd.DataFrame,
    domain: Domain,
    *,
    target: str,
    sensitive: str,
    groups: Mapping[str, Sequence[int]],
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    gamma: float = 0.5,
    group_split: str = "parallel",
    n_samples: int = 2048,
    n_background: int = 128,
    thresh: float = 0.025,
    max_permutations: int = 16384,
    batch_size: int = 512,
    mst_options: Mapping[str, Any] | None = None,
    classifier_options: Mapping[str, Any] | None = None,
    labels: str = "synthetic",
) -> GroupDPSAGEResult:
    """DPSAGE per group: one synthesizer S, one classifier and one ranking per group.

    FSQ's first step (rosenblatt2022spending, Section 4): S (MST, ``gamma *
    epsilon``) is fitted once on all records; each group ``g`` of the public
    partition ``groups`` of ``sensitive`` gets its own DP logistic regression
    ``C_g`` of the target, fitted on the group's records; SAGE explains ``C_g`` on
    rows of S whose ``sensitive`` code is in ``g`` (``n_background`` of them as the
    background, ``n_samples`` explained, with S's target as labels, or ``C_g``'s own
    output where those labels hold one class or ``labels="model"``).

    A group without training records still gets its classifier, fitted on the fixed
    anchor rows alone (:meth:`DPLogisticRegression.fit` with ``allow_empty``): which
    groups have records is never revealed by an outcome of the fit.

    Args:
        df: The private (training) records: exactly the domain's columns, as codes.
        domain: The public domain.
        target: The column each ``C_g`` predicts; every other attribute is a feature.
        sensitive: The attribute whose codes the groups partition (not the target).
        groups: Group name -> codes of ``sensitive``: a public partition of all its
            codes (:func:`check_groups`).
        epsilon: The total budget.
        delta: MST's delta (the only approximate part).
        rng: The random generator; S, the classifiers, the sampling and SAGE each
            get an independent child stream.
        gamma: S's share of ``epsilon``, in (0, 1); the classifiers get the rest.
        group_split: ``"parallel"``: each ``C_g`` gets the whole classifier share,
            by parallel composition over the disjoint groups (the default);
            ``"even"``: each gets the share divided by the number of groups (the
            paper's words, "divides the DPSAGE budget", read as sequential
            composition).
        n_samples, n_background, thresh, max_permutations, batch_size: As
            :func:`dpsage`.
        mst_options, classifier_options: As :func:`dpsage`.
        labels: ``"synthetic"`` (S's sampled target; ``C_g``'s own output for a
            group whose sampled target holds one class) or ``"model"`` (``C_g``'s
            probabilities for every group), as :func:`dpsage`.

    Returns:
        A :class:`GroupDPSAGEResult`.

    Raises:
        ValueError: For an empty frame, columns that differ from the domain, an
            unknown target or sensitive attribute, groups that do not partition its
            codes, a budget or share out of range, unknown options, an unknown
            ``group_split`` or ``labels``; all before any fit.
        TypeError: If ``rng`` is not a numpy Generator or ``groups`` not a mapping.

    Privacy:
        ``(epsilon, delta)``-DP under adding or removing one record: S is
        ``(gamma epsilon, delta)``-DP; the classifiers are fitted on disjoint
        records chosen by a public partition, so together they cost the largest of
        their budgets (``"parallel"``) or, at most, their sum (``"even"``); SAGE
        reads only S's rows and the classifiers (post-processing). A group without
        records is fitted like any other (on the anchors alone), so no outcome
        depends on which groups have records.

    References:
        rosenblatt2022spending, Algorithm 1 and Section 4; covert2020understanding.
    """
    domain = check_domain(domain)
    target = _check_target(domain, target)
    parts = _check_sensitive(domain, target, sensitive, groups)
    group_split = check_choice(group_split, GROUP_SPLITS, "group_split")
    a = _check_arguments(
        epsilon, delta, gamma, labels, n_samples,
        (n_background, thresh, max_permutations, batch_size),
        mst_options, classifier_options, rng,
    )  # fmt: skip
    epsilon, delta, gamma, labels = a.epsilon, a.delta, a.gamma, a.labels
    n_samples = a.n_samples
    n_background, thresh, max_permutations, batch_size = a.sage_cost
    mst_kw, clf_kw, rng = a.mst_kw, a.clf_kw, a.rng
    data = check_data(df, domain)
    names = list(parts)
    code_group = np.empty(domain[sensitive], dtype=np.int64)
    for i, codes in enumerate(parts.values()):
        code_group[list(codes)] = i
    group_of = code_group[data[sensitive].to_numpy()]
    mst = MST(epsilon=gamma * epsilon, delta=delta, **mst_kw)
    share = epsilon - mst.epsilon
    each = share / len(names) if group_split == "even" else share
    r_mst, r_clf, r_sample, r_sage = rng.spawn(4)

    seconds = {}
    start = time.perf_counter()
    mst.fit(data, domain, rng=r_mst)
    seconds["synthesizer"] = time.perf_counter() - start
    start = time.perf_counter()
    classifiers = {}
    for i, (name, r) in enumerate(zip(names, r_clf.spawn(len(names)), strict=True)):
        rows = data[group_of == i].reset_index(drop=True)
        classifiers[name] = DPLogisticRegression(epsilon=each, **clf_kw).fit(
            rows, domain, target=target, rng=r, allow_empty=True
        )
    seconds["classifiers"] = time.perf_counter() - start

    # From here on only S and the classifiers are read: post-processing.
    start = time.perf_counter()
    pools = _group_pools(
        mst, sensitive, code_group, parts, n_background + n_samples, r_sample
    )
    rankings, values = _explain_groups(
        classifiers,
        pools,
        target,
        n_background,
        r_sage,
        labels=labels,
        thresh=thresh,
        max_permutations=max_permutations,
        batch_size=batch_size,
    )
    seconds["sage"] = time.perf_counter() - start

    ledger, budget = _group_ledger(mst, classifiers, group_split, epsilon, delta)
    return GroupDPSAGEResult(
        rankings=MappingProxyType(rankings),
        values=MappingProxyType(values),
        synthesizer=mst,
        classifiers=MappingProxyType(classifiers),
        budget=budget,
        ledger=ledger,
        target=target,
        gamma=gamma,
        group_split=group_split,
        seconds=MappingProxyType(seconds),
    )


def real_sage(
    df: pd.DataFrame,
    domain: Domain,
    *,
    target: str,
    rng: np.random.Generator,
    n_background: int = 128,
    thresh: float = 0.025,
    max_permutations: int = 16384,
    batch_size: int = 512,
    C: float = 1.0,
) -> SAGEResult:
    """SAGE values of a non-private logistic regression on the real records.

    **Not private.** The reference of the paper's Table 2: a logistic regression fitted
    without noise on ``df``, explained with ``df``'s own rows (background drawn from
    them without replacement, labels the real target). Compare DPSAGE with it; never
    release it as a private result.

    Args:
        df: The records: exactly the domain's columns, as codes.
        domain: The public domain.
        target: The column to predict; every other attribute is a feature.
        rng: The random generator (background rows and SAGE's permutations).
        n_background: Background rows, at most 1024 (and at most ``len(df)``).
        thresh: As :func:`dpsage`.
        max_permutations: As :func:`dpsage`.
        batch_size: As :func:`dpsage`.
        C: Inverse regularisation strength of the logistic regression.

    Returns:
        A :class:`SAGEResult` (``private`` is ``False``).

    Raises:
        ValueError: As :func:`dpsage` for the data, target and cost parameters.

    Privacy:
        None: a non-private reference computed on the real records.

    References:
        covert2020understanding; rosenblatt2022spending, Table 2.
    """
    domain = check_domain(domain)
    target = _check_target(domain, target)
    n_background, thresh, max_permutations, batch_size = _check_sage_cost(
        n_background, thresh, max_permutations, batch_size
    )
    rng = check_rng(rng)
    data = check_data(df, domain)
    model = NonPrivateLogisticRegression(C=C).fit(data, domain, target=target)
    features = list(model.features_)
    x = data[features].to_numpy()
    rows = rng.choice(len(data), size=min(n_background, len(data)), replace=False)
    values, std = _sage(
        model.predict_proba,
        x,
        data[target].to_numpy(),
        x[np.sort(rows)],
        rng=rng,
        thresh=thresh,
        max_permutations=max_permutations,
        batch_size=batch_size,
    )
    return SAGEResult(
        ranking=_ranking(features, values),
        values=pd.Series(values, index=features, name="sage"),
        std=pd.Series(std, index=features, name="std"),
        model=model,
    )
