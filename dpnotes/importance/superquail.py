"""SuperQUAIL, FSQ-Bal and FSQ-FNR (Rosenblatt, Allen, Stoyanovich 2022), made private.

**SuperQUAIL** (Algorithm 2) spends its budget where the prediction task needs it:

1. ``alpha * epsilon`` goes to DPSAGE (:func:`dpnotes.importance.dpsage`): an MST
   synthesizer S with ``gamma * alpha * epsilon`` (and all of ``delta``) and a DP
   logistic regression C of the target with ``(1 - gamma) * alpha * epsilon``; SAGE on
   C, explained with S's samples, ranks the features.
2. The remaining ``(1 - alpha) * epsilon`` is split evenly over ``beta`` DP logistic
   regressions, one per top-``beta`` feature, each predicting its feature from all the
   other columns (the target included). The paper prints ``1 (alpha epsilon)``; its
   Theorem 4 has the same typo. Both mean ``(1 - alpha) * epsilon``.
3. Sampling: each row is drawn from S. Then, in a random order per row, each of those
   ``beta`` features and the target is replaced by its classifier's prediction on the
   row as it stands (the most probable class, the paper's section 3.2).

**FSQ-Bal and FSQ-FNR** (section 4) change three things:

1. DPSAGE fits one target classifier per group of the ``sensitive`` attribute, each
   on that group's training records only, and ranks the features once per group
   (SAGE on the group's classifier, explained with S's samples of that group).
2. The ``beta`` features are chosen round-robin from the per-group rankings
   (:func:`round_robin`), the protected group last.
3. The target's probability threshold ``p`` is tuned for accuracy under equal
   false-negative rates across groups (Bal) or a low false-negative rate of the
   protected group (FNR) (:func:`threshold_objective`, :func:`tune_threshold`).

Readings of what the paper leaves open or unbudgeted (each is a choice of this module):

* **Groups.** A *public* partition of the sensitive attribute's codes that covers every
  code (``groups``; default: the protected code against every other code). Every
  record belongs to exactly one group by a fixed rule, so the per-group classifiers
  compose in parallel under adding or removing one record: each gets the whole
  ``(1 - gamma) * alpha * epsilon`` and the release costs the largest of them
  (``group_split="parallel"``, the default). The paper "divides the DPSAGE budget
  between the classifiers": ``group_split="even"`` gives each ``1 / G`` of it and
  adds them up (sequential composition, valid and conservative).
* **The threshold's data.** Tuning needs true labels. The paper does not say which or
  budget them. Default ``threshold_source="histogram"``: one noisy histogram of the
  real *training* records by group x true label x score bin (the score is the
  record's group classifier's probability of the positive class; ``bins`` equal bins
  on [0, 1]). Adding or removing one record changes one cell by one, so the L1 and
  L2 sensitivities are 1; Laplace noise of scale ``1 / epsilon_T`` gives
  ``epsilon_T``-DP, Gaussian noise (``histogram_noise="gaussian"``) the analytic
  Gaussian mechanism at ``(epsilon_T, delta / 2)`` (MST then gets ``delta / 2``).
  ``epsilon_T = threshold_share * (1 - alpha) * epsilon`` is taken from the feature
  classifiers' share (they split the rest) and is a line of the ledger. Options that
  cost nothing: ``"synthetic"`` (the same histogram from ``n_threshold`` rows of S,
  S's target as the truth: it tunes agreement with S, not with reality) and
  ``"holdout"`` (exact counts of a disjoint *public* holdout passed to ``fit``; never
  the test split: the package cannot check that, the caller must).
* **The objective.** Every threshold and objective is post-processing of that one
  histogram: accuracy, and each group's false-negative rate, at every bin edge
  ``k / bins``. Bal maximises ``accuracy - w |FNR_protected - FNR_reference|``, FNR
  maximises ``accuracy - w FNR_protected`` (``w = fairness_weight``, 1 by default;
  the reference is the ``privileged`` group, or everyone outside the protected group
  when it is ``None``). Ties go to the edge nearest 0.5 (the paper "starts at p = 0.5
  and perturbs"). One threshold for all groups, as the paper tunes one ``p``.
* **A constrained threshold** (not in the paper; ``fairness="fnr_cap"``): maximise
  accuracy subject to ``FNR_protected <= fnr_target``, a public number. The penalty
  objective of FSQ-FNR weighs one protected positive (``1 / P_protected`` of FNR)
  against one record of accuracy (``1 / N``): with a small protected group it lowers
  the threshold until everyone is predicted positive. The constraint stops at the
  first edge that meets the target. The edge 0 (everyone positive) always meets it,
  so the problem is always feasible.
* **Splits fixed in advance.** ``alpha`` defaults to the paper's reported choice
  (0.7 for ``epsilon <= e^2``, 0.5 above; :func:`paper_alpha`), ``gamma`` to 0.5;
  ``beta`` is not reported: the default 3 is the middle of the paper's grid
  {2, 3, 4, 5}, and with FSQ's three default groups of the book one round of the
  round-robin. A grid search over them on real data would be a non-private study.
* **SAGE reads synthetic rows only** (background, explained rows and their labels all
  from S), so rankings are post-processing of S and the classifiers.
* **Per-group SAGE rows.** S's samples of group ``g`` are drawn by rejection (up to
  ``16 * n_samples`` rows of S); if S yields fewer than 32 rows of a group, S's rows
  are used with the sensitive attribute set to the group's codes (drawn uniformly).
  Both read S only.
* **The number of rows** drawn by ``sample`` is a public input.

* **Groups without records.** A group of the public partition with no training
  records (or a data set whose records all fall in one group) is fitted like any
  other: its target classifier sees the fixed anchor rows alone
  (:meth:`~dpnotes.importance.DPLogisticRegression.fit` with ``allow_empty``), its
  SAGE rows come from S. No outcome of ``fit`` reveals which groups have records.
* **A collapsed target.** ``sample`` warns (:class:`CollapsedTargetWarning`) when every
  one of at least :data:`COLLAPSE_MIN_ROWS` sampled rows gets the same target class:
  a weak classifier's argmax, or a threshold at an edge, can do that.

Accounting: basic composition in ``(epsilon, delta)``; ``delta`` comes from MST alone
(and the Gaussian histogram, if chosen). Routing the large pure epsilons through zCDP
would inflate the total several-fold at these budgets. The input check of ``fit`` that
reads the data (values outside the public domain) stops the curator on invalid input
before any release and releases nothing.

References:
    rosenblatt2022spending, Algorithm 2, section 4 and Theorem 4;
    mckenna2021winning; chaudhuri2011differentially; covert2020understanding;
    mcsherry2009privacy (parallel composition); dwork2014algorithmic, Theorem 3.16.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from dpnotes.accounting import (
    ApproxBudget,
    compose_sequential_approx,
)
from dpnotes.importance.classifier import DPLogisticRegression
from dpnotes.importance.dpsage import (
    CLASSIFIER_OPTIONS,
    GROUP_SPLITS,
    LABELS,
    MST_OPTIONS,
    check_groups,
    check_n_background,
    check_target_column,
    dpsage,
    dpsage_groups,
)
from dpnotes.mechanisms import gaussian_sigma, laplace_scale
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
    "COLLAPSE_MIN_ROWS",
    "FAIRNESS",
    "HISTOGRAM_NOISE",
    "OBJECTIVES",
    "THRESHOLD_SOURCES",
    "CollapsedTargetWarning",
    "NotFittedError",
    "SuperQUAIL",
    "check_fnr_target",
    "paper_alpha",
    "release_histogram",
    "round_robin",
    "score_histogram",
    "threshold_objective",
    "tune_threshold",
]

#: The fair variants: ``None`` (SuperQUAIL), ``"bal"`` (FSQ-Bal), ``"fnr"`` (FSQ-FNR)
#: and ``"fnr_cap"`` (FSQ with the constrained threshold; not in the paper).
FAIRNESS: tuple[str | None, ...] = (None, "bal", "fnr", "fnr_cap")
#: The objectives of :func:`threshold_objective`.
OBJECTIVES: tuple[str, ...] = ("bal", "fnr", "fnr_cap")
#: ``sample`` warns when at least this many rows all get one target class (fewer
#: rows may hold one class by chance).
COLLAPSE_MIN_ROWS = 100
#: Where FSQ's threshold histogram comes from.
THRESHOLD_SOURCES: tuple[str, ...] = ("histogram", "synthetic", "holdout")
#: The noise of the private threshold histogram.
HISTOGRAM_NOISE: tuple[str, ...] = ("laplace", "gaussian")


#: What ``sample``'s collapse warning suggests, per fair variant.
_COLLAPSE_ADVICE: Mapping[str | None, str] = MappingProxyType(
    {
        None: "SuperQUAIL's target takes the most probable class; a fair variant "
        "(fairness='bal' or 'fnr_cap') tunes a threshold instead, or give the fit "
        "a larger epsilon.",
        "bal": "Try a larger epsilon, more score bins, or fairness='fnr_cap'.",
        "fnr": "FSQ-FNR's penalty objective can lower the threshold until everyone "
        "is positive; fairness='fnr_cap' with an fnr_target maximises accuracy "
        "under a cap instead.",
        "fnr_cap": "The cap may be too strict for this budget: raise fnr_target or "
        "epsilon.",
    }
)


class NotFittedError(RuntimeError, ValueError):
    """Raised by :meth:`SuperQUAIL.sample` before ``fit`` (a RuntimeError, as the
    other synthesizers raise, and a ValueError)."""


class CollapsedTargetWarning(UserWarning):
    """Every sampled row got the same target class (see :meth:`SuperQUAIL.sample`)."""


def paper_alpha(epsilon: float) -> float:
    """Return the paper's reported DPSAGE share: 0.7 at ``epsilon <= e^2``, else 0.5.

    The paper found ``alpha = 0.7`` best "often" at ``epsilon`` in {e^0, e^2} and an
    even split at {e^3, e^4}; between e^2 and e^3 this takes the even split. A fixed
    rule of the public ``epsilon``, not a search on data.

    Args:
        epsilon: The total budget.

    Returns:
        ``alpha``.

    Examples:
        >>> paper_alpha(1.0), paper_alpha(20.0)
        (0.7, 0.5)
    """
    epsilon = check_epsilon(epsilon)
    return 0.7 if epsilon <= math.exp(2) * (1 + 1e-12) else 0.5


# --- the threshold histogram and its post-processing ---


def score_histogram(
    group: np.ndarray, label: np.ndarray, score: np.ndarray, *, groups: int, bins: int
) -> np.ndarray:
    """Count records by group, true label and score bin (exact, not private).

    Args:
        group: Group index of each record, in ``0 .. groups - 1``.
        label: True label of each record, 0 or 1.
        score: The classifier's probability of the positive class, in [0, 1].
        groups: Number of groups.
        bins: Number of equal-width score bins on [0, 1]; a score of exactly 1 falls
            in the last bin.

    Returns:
        Counts of shape ``(groups, 2, bins)``. Each record adds 1 to one cell, so
        adding or removing one record changes the histogram by 1 in L1 and L2.

    Raises:
        ValueError: If the arrays differ in length or hold values out of range.

    Examples:
        >>> score_histogram(np.array([0, 1]), np.array([1, 0]), np.array([0.9, 0.1]),
        ...                 groups=2, bins=2).tolist()
        [[[0.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 0.0]]]
    """
    groups = check_int(groups, "groups", minimum=1)
    bins = check_int(bins, "bins", minimum=2)
    g, y, s = (np.asarray(a) for a in (group, label, score))
    if not (g.shape == y.shape == s.shape) or g.ndim != 1:
        raise ValueError(
            "group, label and score must be 1-D arrays of one length; got shapes "
            f"{g.shape}, {y.shape} and {s.shape}."
        )
    if g.size and (g.min() < 0 or g.max() >= groups):
        raise ValueError(f"group indices must lie in 0..{groups - 1}.")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("labels must be 0 or 1 (a binary target).")
    if not np.all((s >= 0.0) & (s <= 1.0)):
        raise ValueError("scores must be probabilities in [0, 1].")
    b = np.minimum((s * bins).astype(np.int64), bins - 1)
    flat = (g.astype(np.int64) * 2 + y.astype(np.int64)) * bins + b
    counts = np.bincount(flat, minlength=groups * 2 * bins).astype(float)
    return counts.reshape(groups, 2, bins)


def release_histogram(
    counts: np.ndarray,
    *,
    epsilon: float,
    rng: np.random.Generator,
    noise: str = "laplace",
    delta: float | None = None,
) -> tuple[np.ndarray, float]:
    """Release a histogram of sensitivity 1 with Laplace or Gaussian noise per cell.

    Args:
        counts: Exact counts (any shape); one record changes one cell by 1.
        epsilon: The budget of the release.
        rng: The random generator.
        noise: ``"laplace"`` (pure ``epsilon``-DP) or ``"gaussian"`` (analytic
            Gaussian, ``(epsilon, delta)``-DP).
        delta: Required for Gaussian noise, ignored otherwise.

    Returns:
        ``(noisy counts, noise scale)``: the Laplace scale ``1 / epsilon`` or the
        Gaussian standard deviation.

    Raises:
        ValueError: For a budget out of range, an unknown noise, a missing delta or
            counts that are not finite.

    Privacy:
        ``epsilon``-DP (Laplace) or ``(epsilon, delta)``-DP (Gaussian) under adding or
        removing one record, for a histogram in which a record falls in one cell (L1
        and L2 sensitivity 1).

    References:
        dwork2014algorithmic, Theorem 3.6; balle2018improving, Theorem 8.
    """
    epsilon = check_epsilon(epsilon)
    noise = check_choice(noise, HISTOGRAM_NOISE, "histogram noise")
    rng = check_rng(rng)
    x = np.asarray(counts, dtype=float)
    if not np.all(np.isfinite(x)):
        raise ValueError(
            "counts must be finite numbers (exact counts of records); got NaN or "
            "infinite values. Build them with score_histogram."
        )
    if noise == "laplace":
        scale = laplace_scale(sensitivity=1.0, epsilon=epsilon)
        return x + rng.laplace(0.0, scale, size=x.shape), scale
    if delta is None:
        raise ValueError("Gaussian noise needs a delta; pass delta=... in (0, 1).")
    sigma = gaussian_sigma(sensitivity=1.0, epsilon=epsilon, delta=check_delta(delta))
    return x + rng.normal(0.0, sigma, size=x.shape), sigma


def check_fnr_target(fnr_target: object, objective: str | None) -> float | None:
    """Check the constrained objective's cap: required by ``"fnr_cap"`` only.

    Args:
        fnr_target: The largest protected false-negative rate accepted, or ``None``.
        objective: The objective (``"fnr_cap"``) or fair variant it goes with.

    Returns:
        The cap as a float in [0, 1], or ``None`` for the other objectives.

    Raises:
        ValueError: If ``"fnr_cap"`` lacks a cap, another objective is given one, or
            the cap is not a number in [0, 1].
        TypeError: If the cap is not a real number.
    """
    if objective != "fnr_cap":
        if fnr_target is not None:
            raise ValueError(
                f"fnr_target applies to the constrained threshold only; pass "
                f"fairness='fnr_cap' (objective 'fnr_cap'), or drop fnr_target "
                f"(got {fnr_target!r} with {objective!r})."
            )
        return None
    if fnr_target is None:
        raise ValueError(
            "the constrained threshold 'fnr_cap' needs fnr_target=<the largest "
            "false-negative rate of the protected group to accept, in [0, 1]>."
        )
    if isinstance(fnr_target, bool) or not isinstance(fnr_target, (int, float)):
        raise TypeError(f"fnr_target must be a number in [0, 1], got {fnr_target!r}.")
    value = float(fnr_target)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"fnr_target must lie in [0, 1], got {fnr_target!r}.")
    return value


def threshold_objective(
    histogram: np.ndarray,
    *,
    objective: str,
    protected: int,
    reference: int | None = None,
    weight: float = 1.0,
    fnr_target: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Score every bin-edge threshold of a (noisy) histogram: post-processing only.

    A record is predicted positive when its score bin is at or above the edge ``k``
    (threshold ``k / bins``). Noisy counts are clipped at 0 first.

    Args:
        histogram: Counts of shape ``(groups, 2, bins)`` (:func:`score_histogram`,
            after :func:`release_histogram`).
        objective: ``"bal"``: ``accuracy - weight * |FNR_protected - FNR_reference|``;
            ``"fnr"``: ``accuracy - weight * FNR_protected``; ``"fnr_cap"``:
            ``accuracy`` where ``FNR_protected <= fnr_target``, ``-inf`` elsewhere
            (the edge 0 always qualifies).
        protected: Index of the protected group.
        reference: Index of the group Bal compares with; ``None``: every other group
            pooled.
        weight: The weight of the false-negative term, non-negative (not used by
            ``"fnr_cap"``).
        fnr_target: The largest protected FNR ``"fnr_cap"`` accepts, in [0, 1];
            required by it, refused by the other objectives.

    Returns:
        ``(thresholds, values)``: the ``bins + 1`` edges ``0, 1 / bins, ..., 1`` and
        the objective at each.

    Raises:
        ValueError: For a histogram of the wrong shape, an unknown objective, group
            indices out of range, or a missing, needless or out-of-range
            ``fnr_target``.

    Examples:
        >>> h = np.zeros((2, 2, 4)); h[0, 0, 0] = 50; h[0, 1, 3] = 50
        >>> h[1, 1, 1] = 2; h[1, 1, 3] = 2; h[1, 0, 1] = 6
        >>> edges, v = threshold_objective(h, objective="fnr_cap", protected=1,
        ...                                fnr_target=0.0)
        >>> float(edges[np.argmax(v)])
        0.25
    """
    h = np.asarray(histogram, dtype=float)
    if h.ndim != 3 or h.shape[1] != 2 or h.shape[2] < 2:
        raise ValueError(
            f"histogram must have shape (groups, 2, bins), got {h.shape}; build it "
            "with score_histogram."
        )
    check_choice(objective, OBJECTIVES, "objective")
    fnr_target = check_fnr_target(fnr_target, objective)
    n_groups = h.shape[0]
    for name, idx in (("protected", protected), ("reference", reference)):
        if idx is not None and not 0 <= idx < n_groups:
            raise ValueError(f"{name} must be a group index in 0..{n_groups - 1}.")
    if reference is not None and reference == protected:
        raise ValueError("reference must differ from the protected group.")
    weight = float(weight)
    if not weight >= 0.0:
        raise ValueError(f"weight must be non-negative, got {weight!r}.")
    h = np.maximum(h, 0.0)
    # below[g, y, k]: records of group g, label y, with score bin < k (predicted 0).
    below = np.concatenate([np.zeros((*h.shape[:2], 1)), np.cumsum(h, axis=2)], axis=2)
    total = h.sum(axis=2, keepdims=True)
    tn, fn = below[:, 0, :], below[:, 1, :]
    tp = total[:, 1, :] - fn
    accuracy = (tp + tn).sum(axis=0) / max(float(h.sum()), 1.0)

    def fnr(rows: np.ndarray) -> np.ndarray:
        pos = total[rows, 1, 0].sum()
        return fn[rows].sum(axis=0) / max(float(pos), 1.0)

    fnr_p = fnr(np.array([protected]))
    if objective == "fnr_cap":
        # The edge 0 predicts everyone positive: FNR 0, always within the cap.
        values = np.where(fnr_p <= fnr_target + 1e-12, accuracy, -np.inf)
    elif objective == "fnr":
        values = accuracy - weight * fnr_p
    else:
        others = (
            np.array([reference])
            if reference is not None
            else np.array([g for g in range(n_groups) if g != protected])
        )
        values = accuracy - weight * np.abs(fnr_p - fnr(others))
    return np.linspace(0.0, 1.0, h.shape[2] + 1), values


def tune_threshold(
    histogram: np.ndarray,
    *,
    objective: str,
    protected: int,
    reference: int | None = None,
    weight: float = 1.0,
    fnr_target: float | None = None,
) -> float:
    """Return the bin edge that maximises :func:`threshold_objective` (ties: near 0.5).

    A function of the histogram alone: on a private histogram, post-processing.

    Args:
        histogram: As :func:`threshold_objective`.
        objective: As :func:`threshold_objective`.
        protected: As :func:`threshold_objective`.
        reference: As :func:`threshold_objective`.
        weight: As :func:`threshold_objective`.
        fnr_target: As :func:`threshold_objective`.

    Returns:
        The threshold ``p``: predict positive when the score is at least ``p``.

    Examples:
        >>> h = np.zeros((2, 2, 4)); h[:, 0, 0] = 10; h[:, 1, 3] = 10
        >>> tune_threshold(h, objective="fnr", protected=1)
        0.5
    """
    edges, values = threshold_objective(
        histogram,
        objective=objective,
        protected=protected,
        reference=reference,
        weight=weight,
        fnr_target=fnr_target,
    )
    best = values >= values.max() - 1e-12
    candidates = np.flatnonzero(best)
    return float(edges[candidates[np.argmin(np.abs(edges[candidates] - 0.5))]])


def round_robin(
    rankings: Mapping[str, Sequence[str]], beta: int, *, protected: str
) -> tuple[str, ...]:
    """Pick ``beta`` features round-robin from per-group rankings, protected last.

    Each round, every group in turn takes its best feature not yet taken; the
    protected group takes its turn last. In a last round with fewer free slots than
    groups the protected group goes first ("preferentially choose the protected group
    on the last round", the paper's section 4).

    Args:
        rankings: Group name -> its features, most important first (in the order the
            other groups take their turns).
        beta: How many features to pick.
        protected: The protected group's name (a key of ``rankings``).

    Returns:
        The features in the order picked.

    Raises:
        ValueError: If ``protected`` is not a group, or the rankings hold fewer than
            ``beta`` distinct features.

    Examples:
        >>> round_robin({"w": ["A", "B", "C"], "b": ["A", "C", "B"]}, 3, protected="b")
        ('A', 'C', 'B')
    """
    beta = check_int(beta, "beta", minimum=1)
    if protected not in rankings:
        raise ValueError(
            f"protected {protected!r} is not one of the groups {list(rankings)}."
        )
    distinct = {f for r in rankings.values() for f in r}
    if len(distinct) < beta:
        raise ValueError(
            f"the rankings hold {len(distinct)} features, fewer than beta={beta}."
        )
    order = [g for g in rankings if g != protected] + [protected]
    chosen: list[str] = []
    while len(chosen) < beta:
        left = beta - len(chosen)
        turn = order if left >= len(order) else [protected, *order[:-1]]
        for g in turn:
            if len(chosen) == beta:
                break
            pick = next((f for f in rankings[g] if f not in chosen), None)
            if pick is not None:
                chosen.append(pick)
    return tuple(chosen)


# --- helpers ---


def _check_fair_arguments(
    fairness: str | None,
    sensitive: object,
    protected: object,
    groups: object,
    privileged: object,
) -> None:
    if fairness is None:
        given = [
            n
            for n, v in (
                ("sensitive", sensitive),
                ("protected", protected),
                ("groups", groups),
                ("privileged", privileged),
            )
            if v is not None
        ]
        if given:
            raise ValueError(
                f"{given} apply to the fair variants only; pass fairness='bal', "
                "'fnr' or 'fnr_cap', or leave them out for SuperQUAIL."
            )
    else:
        if not isinstance(sensitive, str):
            raise TypeError(
                f"fairness={fairness!r} needs sensitive=<attribute name>, "
                f"got {sensitive!r}."
            )
        if isinstance(protected, bool) or not isinstance(protected, (int, np.integer)):
            raise TypeError(
                "fairness needs protected=<the integer code of the protected "
                f"group in {sensitive!r}>, got {protected!r}."
            )


class SuperQUAIL:
    """SuperQUAIL and its fair variants FSQ-Bal and FSQ-FNR (a synthesizer).

    Same contract as :class:`~dpnotes.synth.base.Synthesizer` (``fit``, ``sample``,
    ``epsilon_spent``) but not a subclass: it accounts in ``(epsilon, delta)`` by basic
    composition, not in zCDP. See the module docstring for the algorithm and for every
    reading of the paper made here.

    Args:
        epsilon: The total budget.
        delta: The total delta (MST's; with a Gaussian histogram, half each).
        alpha: DPSAGE's share of ``epsilon``, in (0, 1); ``None``: :func:`paper_alpha`.
        gamma: MST's share of DPSAGE's budget, in (0, 1).
        beta: How many features get a classifier (at least 1, at most the number of
            features).
        fairness: ``None`` (SuperQUAIL), ``"bal"`` (FSQ-Bal), ``"fnr"`` (FSQ-FNR) or
            ``"fnr_cap"`` (the constrained threshold, not in the paper).
        fnr_target: The largest false-negative rate of the protected group that
            ``"fnr_cap"`` accepts, in [0, 1] (a public choice); only with it.
        labels: DPSAGE's labels of the explained rows: ``"synthetic"`` (S's sampled
            target, SAGE proper; the default) or ``"model"`` (the target
            classifier's own probabilities, SAGE's "Shapley effects"; see
            :func:`~dpnotes.importance.dpsage`).
        sensitive: The sensitive attribute (FSQ only).
        protected: The code of the protected group in ``sensitive`` (FSQ only).
        groups: Public partition of ``sensitive``'s codes (name -> codes) covering
            every code; ``None``: ``{"protected": (protected,), "other": rest}``.
        privileged: The group FSQ-Bal compares the protected group with; ``None``:
            everyone outside the protected group.
        threshold_source: ``"histogram"`` (default, private), ``"synthetic"`` or
            ``"holdout"`` (see the module docstring).
        group_split: ``"parallel"`` (default) or ``"even"`` (the paper's split).
        histogram_noise: ``"laplace"`` (default) or ``"gaussian"``.
        threshold_share: The histogram's share of the classifiers' budget, in (0, 1).
        bins: Score bins of the histogram (at least 2).
        fairness_weight: Weight of the false-negative term of the objective.
        n_threshold: Rows of S that make the ``"synthetic"`` histogram.
        n_samples: Rows of S that SAGE explains (per group for FSQ).
        n_background: Rows of S in SAGE's marginal imputer (at most 1024).
        sage_thresh: SAGE's convergence threshold, in (0, 1).
        max_permutations: SAGE's cap on permutations.
        batch_size: SAGE's permutations per round.
        mst_options: :class:`~dpnotes.synth.mst.MST` keywords (``iters``,
            ``compress_threshold``).
        classifier_options: :class:`~dpnotes.importance.DPLogisticRegression`
            keywords (``C``, ``max_iter``, ``tol``).

    Attributes:
        ledger_: ``(what, ApproxBudget)`` per release; their basic composition is
            ``budget_``.
        budget_: The ``(epsilon, delta)`` spent.
        synthesizer_: The fitted MST.
        target_classifiers_: Group name -> the target's classifier (SuperQUAIL: one,
            under the name ``"all"``).
        classifiers_: Feature -> its classifier, for the ``beta`` selected features.
        selected_: The selected features, in the order chosen.
        rankings_: Group name -> the DPSAGE ranking (``"all"`` for SuperQUAIL).
        values_: Group name -> the SAGE values (a Series).
        histogram_: FSQ's released histogram ``(groups, 2, bins)``.
        histogram_scale_: Its noise scale (0 for the free sources).
        thresholds_: ``{"bal": p, "fnr": p}`` (and ``"fnr_cap"`` with a
            ``fnr_target``), all tuned on ``histogram_``.
        threshold_: The threshold this model samples with (0.5 for SuperQUAIL, whose
            target takes the most probable class).
        seconds_: Wall time of each stage of ``fit``.

    Privacy:
        ``(epsilon, delta)``-DP under adding or removing one record, by basic
        composition of MST, the DP logistic regressions (per-group ones in parallel,
        or evenly split) and the threshold histogram; SAGE, the rankings, the
        thresholds and sampling are post-processing. ``budget_`` is what was spent.

    References:
        rosenblatt2022spending, Algorithm 2, section 4, Theorem 4.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"A": rng.integers(0, 3, 300),
        ...                    "B": rng.integers(0, 2, 300),
        ...                    "Y": rng.integers(0, 2, 300)})
        >>> sq = SuperQUAIL(epsilon=5.0, delta=1e-6, beta=1, n_samples=64,
        ...                 n_background=8, max_permutations=64, batch_size=32,
        ...                 mst_options={"iters": 20})
        >>> sq = sq.fit(df, {"A": 3, "B": 2, "Y": 2}, target="Y", rng=rng)
        >>> sq.sample(4, rng=rng).shape, sq.epsilon_spent <= 5.0
        ((4, 3), True)
    """

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float,
        alpha: float | None = None,
        gamma: float = 0.5,
        beta: int = 3,
        fairness: str | None = None,
        fnr_target: float | None = None,
        labels: str = "synthetic",
        sensitive: str | None = None,
        protected: int | None = None,
        groups: Mapping[str, Sequence[int]] | None = None,
        privileged: str | None = None,
        threshold_source: str = "histogram",
        group_split: str = "parallel",
        histogram_noise: str = "laplace",
        threshold_share: float = 0.1,
        bins: int = 20,
        fairness_weight: float = 1.0,
        n_threshold: int = 8192,
        n_samples: int = 2048,
        n_background: int = 128,
        sage_thresh: float = 0.025,
        max_permutations: int = 16384,
        batch_size: int = 512,
        mst_options: Mapping[str, Any] | None = None,
        classifier_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.alpha = (
            paper_alpha(self.epsilon)
            if alpha is None
            else check_probability(alpha, "alpha")
        )
        self.gamma = check_probability(gamma, "gamma")
        self.beta = check_int(beta, "beta", minimum=1)
        self.fairness = check_choice(fairness, FAIRNESS, "fairness")
        self.fnr_target = check_fnr_target(fnr_target, self.fairness)
        self.labels = check_choice(labels, LABELS, "labels")
        _check_fair_arguments(self.fairness, sensitive, protected, groups, privileged)
        self.sensitive, self.protected = sensitive, protected
        self.groups, self.privileged = groups, privileged
        self.threshold_source = check_choice(
            threshold_source, THRESHOLD_SOURCES, "threshold_source"
        )
        self.group_split = check_choice(group_split, GROUP_SPLITS, "group_split")
        self.histogram_noise = check_choice(
            histogram_noise, HISTOGRAM_NOISE, "histogram_noise"
        )
        self.threshold_share = check_probability(threshold_share, "threshold_share")
        self.bins = check_int(bins, "bins", minimum=2)
        self.fairness_weight = float(fairness_weight)
        if not self.fairness_weight >= 0.0:
            raise ValueError(
                f"fairness_weight must be non-negative, got {fairness_weight!r}."
            )
        self.n_threshold = check_int(n_threshold, "n_threshold", minimum=1)
        self.n_samples = check_int(n_samples, "n_samples", minimum=1)
        self.n_background = check_n_background(n_background)
        self.sage_thresh = check_probability(sage_thresh, "sage_thresh")
        self.max_permutations = check_int(
            max_permutations, "max_permutations", minimum=1
        )
        self.batch_size = check_int(batch_size, "batch_size", minimum=1)
        self.mst_options = check_options(mst_options, MST_OPTIONS, "mst_options")
        self.classifier_options = check_options(
            classifier_options, CLASSIFIER_OPTIONS, "classifier_options"
        )
        # Check the options' values now (an MST or classifier refuses bad ones).
        MST(epsilon=1.0, delta=0.5, **self.mst_options)
        DPLogisticRegression(epsilon=1.0, **self.classifier_options)
        self.domain_: dict[str, int] | None = None
        self.budget_: ApproxBudget | None = None

    # --- budget ---

    def shares(self, n_groups: int = 1) -> dict[str, float]:
        """Return the planned budget of each part (fixed before any data is read).

        Args:
            n_groups: Number of groups (FSQ's ``"even"`` split divides by it).

        Returns:
            ``{"mst", "mst_delta", "target_each", "histogram", "histogram_delta",
            "feature_each"}``: epsilons (and deltas) per release; ``target_each`` is
            each target classifier's.
        """
        eps = self.epsilon
        fair = self.fairness is not None
        dpsage_eps = self.alpha * eps
        mst = self.gamma * dpsage_eps
        target = dpsage_eps - mst
        if fair and self.group_split == "even":
            target = target / n_groups
        rest = eps - dpsage_eps
        private_hist = fair and self.threshold_source == "histogram"
        hist = self.threshold_share * rest if private_hist else 0.0
        gauss = private_hist and self.histogram_noise == "gaussian"
        hist_delta = self.delta / 2.0 if gauss else 0.0
        feature = (rest - hist) / self.beta
        n_target = n_groups if fair and self.group_split == "even" else 1

        def total(f: float) -> float:
            return math.fsum([mst, *[target] * n_target, hist, *[f] * self.beta])

        # Floating-point sums may exceed epsilon by an ulp: shave the last share.
        while total(feature) > eps:
            feature = math.nextafter(feature, 0.0)
        return {
            "mst": mst,
            "mst_delta": self.delta - hist_delta,
            "target_each": target,
            "histogram": hist,
            "histogram_delta": hist_delta,
            "feature_each": feature,
        }

    @property
    def epsilon_spent(self) -> float:
        """The epsilon spent by the last ``fit`` (0 before fitting)."""
        return 0.0 if self.budget_ is None else self.budget_.epsilon

    @property
    def delta_spent(self) -> float:
        """The delta spent by the last ``fit`` (0 before fitting)."""
        return 0.0 if self.budget_ is None else self.budget_.delta

    # --- fit ---

    def _validate(
        self,
        df: pd.DataFrame,
        domain: Domain,
        target: object,
        holdout: pd.DataFrame | None,
    ) -> tuple[dict[str, int], pd.DataFrame, pd.DataFrame | None]:
        domain = check_domain(domain)
        target = check_target_column(domain, target)
        n_features = len(domain) - 1
        if self.beta > n_features:
            raise ValueError(
                f"beta={self.beta} is above the number of features ({n_features}); "
                f"pass beta between 1 and {n_features}."
            )
        if self.fairness is not None:
            self._validate_fair(domain, target)
        if self.threshold_source == "holdout" and self.fairness is not None:
            if holdout is None:
                raise ValueError(
                    "threshold_source='holdout' needs holdout=<a disjoint public "
                    "frame> (never the test split); or use 'histogram'."
                )
        elif holdout is not None:
            raise ValueError(
                "holdout is used only by FSQ with threshold_source='holdout'; drop it."
            )
        data = check_data(df, domain)
        public = None if holdout is None else check_data(holdout, domain, "holdout")
        # Groups without records are fitted on the anchors alone (module docstring):
        # refusing them would be an outcome that depends on the data.
        return domain, data, public

    def _validate_fair(self, domain: dict[str, int], target: str) -> None:
        if self.sensitive not in domain:
            raise ValueError(
                f"the sensitive attribute {self.sensitive!r} is not in the domain "
                f"{list(domain)}; pass one of its attributes."
            )
        if self.sensitive == target:
            raise ValueError("the sensitive attribute cannot be the target.")
        if domain[target] != 2:
            raise ValueError(
                f"FSQ tunes a probability threshold, so the target must be binary; "
                f"{target!r} has {domain[target]} codes."
            )
        size = domain[self.sensitive]
        if not 0 <= self.protected < size:
            raise ValueError(
                f"protected={self.protected} is not a code of {self.sensitive!r} "
                f"(0..{size - 1}); pass the protected group's code."
            )
        self._groups = check_groups(self.groups, size, self.protected, self.sensitive)
        if len(self._groups) < 2:
            raise ValueError(
                f"the public partition of {self.sensitive!r} has one group "
                f"({list(self._groups)}); FSQ compares groups, so it needs at least "
                "two groups. Use SuperQUAIL (fairness=None) or split the codes."
            )
        self._code_group = np.empty(size, dtype=np.int64)
        for i, codes in enumerate(self._groups.values()):
            self._code_group[list(codes)] = i
        names = list(self._groups)
        self._protected_name = names[self._code_group[self.protected]]
        if self.privileged is not None:
            if self.privileged not in self._groups:
                raise ValueError(
                    f"privileged {self.privileged!r} is not one of the groups {names}."
                )
            if self.privileged == self._protected_name:
                raise ValueError("privileged must differ from the protected group.")

    def _group_name(self, code: int) -> str:
        return list(self._groups)[self._code_group[int(code)]]

    def fit(
        self,
        df: pd.DataFrame,
        domain: Domain,
        *,
        target: str,
        rng: np.random.Generator,
        holdout: pd.DataFrame | None = None,
    ) -> SuperQUAIL:
        """Fit on the private training records ``df`` (codes of the public domain).

        Args:
            df: The training records: exactly the domain's columns, at least one row.
            domain: The public domain (attribute -> number of codes).
            target: The column to predict.
            rng: The random generator; each fit and sample gets a child stream.
            holdout: A disjoint public frame, only with
                ``threshold_source="holdout"`` (never the test split).

        Returns:
            ``self``.

        Raises:
            ValueError: For an empty frame, values outside the domain, an unknown
                target or sensitive attribute, a protected code outside its domain,
                ``beta`` above the number of features, a missing or needless
                holdout; all before any fit. A group of the partition without
                training records is not an error (see the module docstring).
            TypeError: For a target that is not a string or an ``rng`` that is not a
                numpy Generator.
        """
        domain, data, public = self._validate(df, domain, target, holdout)
        rng = check_rng(rng)
        self.budget_ = None  # not fitted until the whole fit succeeds
        self.domain_, self.target_ = domain, target
        self.seconds_: dict[str, float] = {}
        r_dpsage, r_features, r_threshold = rng.spawn(3)
        if self.fairness is None:
            self._fit_dpsage(data, domain, target, r_dpsage)
        else:
            self._fit_groups(data, domain, target, r_dpsage)
        self._fit_features(data, domain, target, r_features)
        if self.fairness is None:
            self.histogram_, self.histogram_scale_ = None, 0.0
            self.thresholds_, self.threshold_ = MappingProxyType({}), 0.5
        else:
            self._fit_threshold(data, public, target, r_threshold)
        budget = compose_sequential_approx([b for _, b in self.ledger_])
        if budget.epsilon > self.epsilon or budget.delta > self.delta:
            raise RuntimeError(  # an invariant: the shares are fixed before any fit
                f"SuperQUAIL spent {budget} of ({self.epsilon}, {self.delta}); "
                "please report this bug."
            )
        self.ledger_ = tuple(self.ledger_)
        self.budget_ = budget
        return self

    def _mst_budget(self, mst: MST) -> ApproxBudget:
        # MST is (epsilon, delta)-DP at its nominal epsilon (its rho spent is at most
        # the rho that pair converts to); its converted spend is as valid.
        if mst.rho_spent > mst.rho * (1 + 1e-9):
            raise RuntimeError("MST overspent its budget; please report this bug.")
        return ApproxBudget(min(mst.epsilon, mst.epsilon_spent), mst.delta)

    def _dpsage_options(self) -> dict[str, Any]:
        """The settings DPSAGE gets, alone or per group."""
        return {
            "gamma": self.gamma,
            "n_samples": self.n_samples,
            "n_background": self.n_background,
            "thresh": self.sage_thresh,
            "max_permutations": self.max_permutations,
            "batch_size": self.batch_size,
            "mst_options": self.mst_options,
            "classifier_options": self.classifier_options,
            "labels": self.labels,
        }

    def _fit_dpsage(self, data, domain, target, rng) -> None:
        shares = self.shares()
        start = time.perf_counter()
        res = dpsage(
            data,
            domain,
            target=target,
            epsilon=self.alpha * self.epsilon,
            delta=shares["mst_delta"],
            rng=rng,
            **self._dpsage_options(),
        )
        self.seconds_["dpsage"] = time.perf_counter() - start
        self.synthesizer_ = res.synthesizer
        self.target_classifiers_ = MappingProxyType({"all": res.classifier})
        self.rankings_ = MappingProxyType({"all": res.ranking})
        self.values_ = MappingProxyType({"all": res.values})
        self.selected_ = tuple(res.ranking[: self.beta])
        self.ledger_ = [
            ("synthesizer S (MST)", self._mst_budget(res.synthesizer)),
            (
                "target classifier C_f* (DP logistic regression)",
                ApproxBudget(res.classifier.epsilon_spent, 0.0),
            ),
        ]

    def _fit_groups(self, data, domain, target, rng) -> None:
        shares = self.shares()
        start = time.perf_counter()
        res = dpsage_groups(
            data,
            domain,
            target=target,
            sensitive=self.sensitive,
            groups=self._groups,
            epsilon=self.alpha * self.epsilon,
            delta=shares["mst_delta"],
            rng=rng,
            group_split=self.group_split,
            **self._dpsage_options(),
        )
        self.seconds_["dpsage"] = time.perf_counter() - start
        self.synthesizer_ = res.synthesizer
        self.target_classifiers_ = res.classifiers
        self.rankings_ = res.rankings
        self.values_ = res.values
        ordered = {n: res.rankings[n] for n in self._groups}
        self.selected_ = round_robin(ordered, self.beta, protected=self._protected_name)
        self.ledger_ = [
            ("synthesizer S (MST)", self._mst_budget(res.synthesizer)),
            res.ledger[1],
        ]

    def _fit_features(self, data, domain, target, rng) -> None:
        shares = self.shares(len(self.target_classifiers_))
        start = time.perf_counter()
        classifiers = {}
        for f, r in zip(self.selected_, rng.spawn(len(self.selected_)), strict=True):
            clf = DPLogisticRegression(
                epsilon=shares["feature_each"], **self.classifier_options
            )
            classifiers[f] = clf.fit(data, domain, target=f, rng=r)
            self.ledger_.append(
                (f"feature classifier C_{f}", ApproxBudget(clf.epsilon_spent, 0.0))
            )
        self.classifiers_ = MappingProxyType(classifiers)
        self.seconds_["feature_classifiers"] = time.perf_counter() - start

    def target_scores(self, rows: pd.DataFrame) -> np.ndarray:
        """Return each row's probability of the positive class (its group's model).

        Args:
            rows: Codes of the fitted domain.

        Returns:
            An array of shape ``(len(rows),)``.
        """
        if self.fairness is None:
            return self.target_classifiers_["all"].predict_proba(rows)[:, 1]
        g = self._code_group[rows[self.sensitive].to_numpy()]
        out = np.zeros(len(rows))
        for i, clf in enumerate(self.target_classifiers_.values()):
            mask = g == i
            if mask.any():
                out[mask] = clf.predict_proba(rows[mask])[:, 1]
        return out

    def _fit_threshold(self, data, public, target, rng) -> None:
        start = time.perf_counter()
        shares = self.shares(len(self._groups))
        r_rows, r_noise = rng.spawn(2)
        if self.threshold_source == "histogram":
            rows = data
        elif self.threshold_source == "holdout":
            rows = public
        else:
            rows = self.synthesizer_.sample(self.n_threshold, rng=r_rows)
        counts = self.histogram_of(rows)
        if self.threshold_source == "histogram":
            noisy, scale = release_histogram(
                counts,
                epsilon=shares["histogram"],
                rng=r_noise,
                noise=self.histogram_noise,
                delta=shares["histogram_delta"] or None,
            )
            self.ledger_.append(
                (
                    f"threshold histogram (group x label x {self.bins} score bins, "
                    f"{self.histogram_noise}, sensitivity 1)",
                    ApproxBudget(shares["histogram"], shares["histogram_delta"]),
                )
            )
        else:
            noisy, scale = counts, 0.0
        self.histogram_, self.histogram_scale_ = noisy, scale
        self.thresholds_ = MappingProxyType(self.thresholds_of(noisy))
        self.threshold_ = self.thresholds_[self.fairness]
        self.seconds_["threshold"] = time.perf_counter() - start

    def histogram_of(self, rows: pd.DataFrame) -> np.ndarray:
        """Count ``rows`` by group, true label and score bin (exact, not private).

        The score is the row's group classifier's probability of the positive class,
        so a row falls in one cell: adding or removing a row changes one count by 1.
        ``fit`` releases this histogram of the training records with noise
        (:func:`release_histogram`).

        Args:
            rows: Codes of the fitted domain, the target included.

        Returns:
            Counts of shape ``(groups, 2, bins)`` in the groups' order.
        """
        return score_histogram(
            self._code_group[rows[self.sensitive].to_numpy()],
            rows[self.target_].to_numpy(),
            self.target_scores(rows),
            groups=len(self._groups),
            bins=self.bins,
        )

    def thresholds_of(self, histogram: np.ndarray) -> dict[str, float]:
        """Return the Bal and FNR thresholds of a histogram (post-processing only).

        Args:
            histogram: Counts of shape ``(groups, 2, bins)`` in the fitted groups'
                order.

        Returns:
            ``{"bal": p, "fnr": p}``, and ``"fnr_cap"`` when ``fnr_target`` is set.
        """
        names = list(self._groups)
        protected = names.index(self._protected_name)
        reference = None if self.privileged is None else names.index(self.privileged)
        objectives = [
            o for o in OBJECTIVES if o != "fnr_cap" or self.fnr_target is not None
        ]
        return {
            obj: tune_threshold(
                histogram,
                objective=obj,
                protected=protected,
                reference=reference,
                weight=self.fairness_weight,
                fnr_target=self.fnr_target if obj == "fnr_cap" else None,
            )
            for obj in objectives
        }

    # --- sample ---

    def sample(self, n: int, *, rng: np.random.Generator) -> pd.DataFrame:
        """Return ``n`` synthetic records (codes of the fitted domain).

        Each row is drawn from S; then the ``beta`` selected features and the target
        are replaced, in a random order per row, by their classifiers' predictions
        (the most probable class; the target of FSQ: score at least ``threshold_``).

        Args:
            n: How many rows (a public number), at least 1.
            rng: The random generator.

        Returns:
            A DataFrame with the domain's columns.

        Warns:
            CollapsedTargetWarning: If ``n >= COLLAPSE_MIN_ROWS`` and every row got
                the same target class (a model trained on these rows can only
                predict that class). FSQ's ``fairness="fnr_cap"`` (a constrained
                threshold), ``"bal"``, or a larger budget may help.

        Raises:
            ValueError: If ``n`` is not a positive integer.
            TypeError: If ``rng`` is not a numpy Generator.
            NotFittedError: If called before ``fit`` (a RuntimeError and a
                ValueError).
        """
        if self.budget_ is None:
            raise NotFittedError(
                "SuperQUAIL is not fitted; call fit(df, domain, target=..., rng=...) "
                "first."
            )
        n = check_int(n, "n", minimum=1)
        rng = check_rng(rng)
        r_rows, r_order = rng.spawn(2)
        rows = self.synthesizer_.sample(n, rng=r_rows)
        steps = [*self.selected_, self.target_]
        order = r_order.permuted(np.tile(np.arange(len(steps)), (n, 1)), axis=1)
        for position in range(len(steps)):
            for j, column in enumerate(steps):
                mask = order[:, position] == j
                if not mask.any():
                    continue
                current = rows[mask]
                if column == self.target_:
                    if self.fairness is None:
                        new = self.target_classifiers_["all"].predict(current)
                    else:
                        new = (self.target_scores(current) >= self.threshold_) * 1
                else:
                    new = self.classifiers_[column].predict(current)
                rows.loc[mask, column] = np.asarray(new, dtype=np.int64)
        classes = np.unique(rows[self.target_].to_numpy())
        if n >= COLLAPSE_MIN_ROWS and classes.size == 1:
            warnings.warn(
                f"every one of the {n} sampled rows has {self.target_} = "
                f"{int(classes[0])}: the synthetic target collapsed to one class, so a "
                "model trained on these rows predicts only that class. "
                + _COLLAPSE_ADVICE[self.fairness],
                CollapsedTargetWarning,
                stacklevel=2,
            )
        return rows

    def __repr__(self) -> str:
        name = {
            None: "SQ",
            "bal": "FSQ-Bal",
            "fnr": "FSQ-FNR",
            "fnr_cap": f"FSQ-FNR<={self.fnr_target:g}",
        }[self.fairness]
        return (
            f"SuperQUAIL({name}, epsilon={self.epsilon:g}, delta={self.delta:g}, "
            f"alpha={self.alpha:g}, gamma={self.gamma:g}, beta={self.beta})"
        )
