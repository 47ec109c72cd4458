"""An empirical privacy audit of DPSGD, Naive and DPSGD-F from a single training run.

The audits of :mod:`dpnotes.audit` run a mechanism thousands of times on two
neighbouring data sets. Training a model thousands of times is too slow, so this
module follows Steinke, Nasr and Jagielski (steinke2023privacy) instead: it adds ``m``
*canaries* to one run, each included independently with probability 1/2, and asks
how well an auditor who sees the run can tell which were in. A mechanism that is
``(epsilon, delta)``-DP with respect to each canary lets no auditor guess much better
than randomized response with ``epsilon`` (:func:`one_run_p_value`), so many correct
guesses prove a lower bound on epsilon (:func:`one_run_epsilon_lower_bound`).

The canaries here are *gradient canaries* in the *white-box* setting (the paper's
strongest auditor): canary ``i`` is an example whose gradient is the fixed vector
``canary_norm * e_{j_i}``, one coordinate of the model's weight that no real row
touches, and the auditor sees every step's noisy gradient sum, so it scores canary
``i`` by ``Y_i = sum_t <noisy_sum_t, e_{j_i}>``. :func:`canary_batch` appends the
sampled canaries to a batch of real examples, so that the package's own rules
(:func:`~dpnotes.dpsgd.rules.dpsgd_step`, :func:`~dpnotes.dpsgd.rules.naive_step`,
:func:`~dpnotes.dpsgd.rules.dpsgd_f_step`) clip, count, weight and noise them exactly
as they treat real examples; :func:`audit_training` runs the whole audit on a
synthetic two-group task, with Poisson sampling of the real rows and of the included
canaries at the same rate.

As with every audit, a lower bound below the claimed epsilon does not show that a
mechanism is private (only that this attack found no violation), while one above it
shows, with confidence ``1 - beta``, that it is not. The tests pair the three correct
rules with a deliberately broken one (:class:`~dpnotes.dpsgd.rules.DPSGDFRule` with
``noise_scale="base_bound"``: noise ``sigma_2 C_0`` against the sensitivity
``max_k C_k``) that the audit must catch.

References:
    steinke2023privacy; jagielski2020auditing; nasr2021adversary; xu2021removing.
"""

from __future__ import annotations

import math
import statistics
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy import special, stats
from torch import Tensor, nn

from dpnotes.audit import check_audit_delta
from dpnotes.dpsgd.engine import PerSampleClipper, PerSampleGradients
from dpnotes.dpsgd.rules import (
    COUNT_NOISE_FACTOR,
    PRIVATE_METHODS,
    DPSGDFRule,
    StepOutput,
    dpsgd_epsilon,
    dpsgd_f_step,
    dpsgd_step,
    naive_step,
)
from dpnotes.validation import (
    check_choice,
    check_delta,
    check_int,
    check_positive,
    check_probability,
)

__all__ = [
    "OneRunAudit",
    "audit_training",
    "canary_batch",
    "count_correct_guesses",
    "one_run_epsilon_lower_bound",
    "one_run_p_value",
]


# --------------------------------------------------------------------------------------
# The theorem: correct guesses against randomized response
# --------------------------------------------------------------------------------------


def _check_counts(correct: int, guesses: int, m: int) -> tuple[int, int, int]:
    m = check_int(m, "m", minimum=1)
    guesses = check_int(guesses, "guesses", minimum=0)
    correct = check_int(correct, "correct", minimum=0)
    if guesses > m:
        raise ValueError(
            f"guesses={guesses} exceeds the number of canaries m={m}: the auditor "
            "guesses at most once per canary."
        )
    if correct > guesses:
        raise ValueError(
            f"correct={correct} exceeds guesses={guesses}: count the correct guesses "
            "among the guesses made (abstentions excluded)."
        )
    return correct, guesses, m


def _p_value(v: int, r: int, m: int, epsilon: float, delta: float) -> float:
    # f(u) = P[Binomial(r, e^eps / (1 + e^eps)) >= u]; the theorem's delta term is
    # 2 m delta max_{1 <= i <= m} (f(v - i) - f(v)) / i. For i >= v, f(v - i) = 1, so
    # the ratio decreases in i and the maximum is reached at some i <= v.
    if v == 0:
        return 1.0
    q = float(special.expit(epsilon))
    tail = float(stats.binom.sf(v - 1, r, q))
    if delta == 0.0:
        return min(tail, 1.0)
    below = stats.binom.pmf(np.arange(v - 1, -1, -1), r, q)  # P[W' = v-1], ..., [= 0]
    alpha = float(np.max(np.cumsum(below) / np.arange(1, v + 1)))
    return min(tail + 2.0 * m * delta * alpha, 1.0)


def one_run_p_value(
    correct: int, guesses: int, *, epsilon: float, delta: float, m: int
) -> float:
    """Return the p-value of ``correct`` right guesses under ``(epsilon, delta)``-DP.

    The bound of steinke2023privacy's main theorem with its delta term (proved in its
    section 5; computed as in its appendix D):
    let a mechanism be ``(epsilon, delta)``-DP with respect to adding or removing each
    of ``m`` canaries, include each canary independently with probability 1/2
    (``S_i = +1`` in, ``-1`` out), and let an auditor who sees the output guess
    ``T_i in {-1, 0, +1}`` with at most ``r`` nonzero guesses. Then the number of
    correct guesses ``W = #{i : T_i = S_i}`` satisfies, for every ``v``,

        ``P[W >= v] <= f(v) + 2 m delta max_{i in 1..m} (f(v - i) - f(v)) / i``,

    where ``f(v) = P[Binomial(r, e^epsilon / (1 + e^epsilon)) >= v]``: with
    ``delta = 0``, ``W`` is no better than ``r`` independent guesses that are each
    right with probability ``e^epsilon / (1 + e^epsilon)`` (randomized response).

    Args:
        correct: ``v``, the number of correct guesses, ``0 <= v <= r``.
        guesses: ``r``, the number of guesses made (abstentions excluded), ``r <= m``.
        epsilon: The epsilon of the null hypothesis, ``>= 0``.
        delta: Its delta, in ``[0, 1)``.
        m: The number of canaries, at least 1.

    Returns:
        The right-hand side above at ``v = correct``, capped at 1.

    Raises:
        ValueError: If the counts are inconsistent or a parameter is out of range.
        TypeError: If a count is not an integer or a parameter not a real number.

    References:
        steinke2023privacy (main theorem; appendix D, ``p_value_DP_audit``).

    Examples:
        >>> round(one_run_p_value(10, 10, epsilon=0.0, delta=0.0, m=10), 6)  # 2**-10
        0.000977
    """
    v, r, m = _check_counts(correct, guesses, m)
    eps = float(epsilon) if not isinstance(epsilon, bool) else math.nan
    if math.isnan(eps) or eps < 0:
        raise ValueError(f"epsilon must be a number >= 0, got {epsilon!r}.")
    return _p_value(v, r, m, eps, check_audit_delta(delta))


def one_run_epsilon_lower_bound(
    correct: int, guesses: int, *, delta: float, m: int, beta: float = 0.05
) -> float:
    """Return the one-run audit's lower bound on epsilon at confidence ``1 - beta``.

    The largest epsilon that the p-value of :func:`one_run_p_value` rejects at level
    ``beta``: every ``epsilon`` below it makes ``correct`` right guesses out of
    ``guesses`` less likely than ``beta`` (steinke2023privacy, main theorem). It is
    found by bisection, as in the paper's appendix D (the p-value increases with
    epsilon over the range searched), to within ``1e-9``, and the lower end of the
    final bracket is returned (conservative). When even ``epsilon = 0`` is not
    rejected (e.g. no better than chance), the bound is 0.

    Args:
        correct: ``v``, the number of correct guesses.
        guesses: ``r``, the number of guesses made, ``v <= r <= m``.
        delta: The delta of the claim being audited, in ``[0, 1)``.
        m: The number of canaries (each included with probability 1/2).
        beta: The error probability, in (0, 1); the bound holds with probability at
            least ``1 - beta`` over the canaries' coins and the mechanism.

    Returns:
        The lower bound, ``>= 0``.

    Raises:
        ValueError: If the counts are inconsistent or a parameter is out of range.
        TypeError: If a count is not an integer.

    References:
        steinke2023privacy (main theorem; appendix D, ``get_eps_audit``).

    Examples:
        With ``delta = 0`` and every guess right, the bound solves
        ``(e^eps / (1 + e^eps))**r = beta``:

        >>> q = 0.05 ** (1 / 100)
        >>> bound = one_run_epsilon_lower_bound(100, 100, delta=0.0, m=1000)
        >>> abs(bound - math.log(q / (1 - q))) < 1e-8, round(bound, 4)
        (True, 3.493)
        >>> one_run_epsilon_lower_bound(50, 100, delta=1e-5, m=1000)  # chance
        0.0
    """
    v, r, m = _check_counts(correct, guesses, m)
    delta = check_audit_delta(delta)
    beta = check_probability(beta, "beta")
    if _p_value(v, r, m, 0.0, delta) >= beta:
        return 0.0
    lo, hi = 0.0, 1.0
    while _p_value(v, r, m, hi, delta) < beta:  # f(v) -> 1 as epsilon grows (v <= r)
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        if _p_value(v, r, m, mid, delta) < beta:
            lo = mid
        else:
            hi = mid
    return lo


def count_correct_guesses(
    scores: Sequence[float] | np.ndarray | Tensor,
    included: Sequence[bool] | np.ndarray | Tensor,
    *,
    k_plus: int,
    k_minus: int,
) -> int:
    """Guess "in" for the ``k_plus`` highest scores, "out" for the ``k_minus`` lowest.

    The auditor of steinke2023privacy (Algorithm 1): it abstains on the other
    canaries, so it makes ``k_plus + k_minus`` guesses. Ties are broken by index
    (a stable sort), which does not depend on the coins.

    Args:
        scores: One score per canary, shape ``(m,)``; higher means "more likely in".
        included: Whether each canary was included (the coins ``S_i = +1``).
        k_plus: Number of "in" guesses, ``>= 0``.
        k_minus: Number of "out" guesses, ``>= 0``; ``k_plus + k_minus <= m``.

    Returns:
        The number of correct guesses ``W``.

    Raises:
        ValueError: If the shapes differ, a score is NaN, or the k's are out of range.

    Examples:
        >>> count_correct_guesses([3.0, -1.0, 2.0, 0.0], [True, False, False, True],
        ...                       k_plus=1, k_minus=1)
        2
    """
    y = np.asarray(torch.as_tensor(scores).detach().cpu(), dtype=float)
    s = np.asarray(torch.as_tensor(included).detach().cpu(), dtype=bool)
    if y.ndim != 1 or s.shape != y.shape:
        raise ValueError(
            f"scores and included must be 1-D of the same length, got shapes "
            f"{y.shape} and {s.shape}."
        )
    if np.isnan(y).any():
        raise ValueError("scores has NaN entries; every canary needs a score.")
    k_plus, k_minus = _check_ks(k_plus, k_minus, y.shape[0])
    order = np.argsort(y, kind="stable")
    low, high = order[:k_minus], order[y.shape[0] - k_plus :]
    return int(s[high].sum() + (~s[low]).sum())


def _check_ks(k_plus: int, k_minus: int, m: int) -> tuple[int, int]:
    k_plus = check_int(k_plus, "k_plus", minimum=0)
    k_minus = check_int(k_minus, "k_minus", minimum=0)
    if k_plus + k_minus == 0:
        raise ValueError("k_plus + k_minus must be at least 1: make some guesses.")
    if k_plus + k_minus > m:
        raise ValueError(
            f"k_plus + k_minus = {k_plus + k_minus} exceeds the m={m} canaries: the "
            "auditor guesses at most once per canary."
        )
    return k_plus, k_minus


# --------------------------------------------------------------------------------------
# Gradient canaries inside a batch
# --------------------------------------------------------------------------------------


def canary_batch(
    batch: PerSampleGradients, canary_directions: Tensor, canary_norm: float
) -> PerSampleGradients:
    """Return ``batch`` with gradient canaries appended as extra examples.

    Canary ``j`` is an example whose gradient is the fixed vector
    ``canary_norm * canary_directions[j]`` over the trainable parameters (flattened
    and concatenated in the order of ``batch.parameters``). The result's norms are the
    batch's followed by ``canary_norm`` per canary, and its weighted sums are the
    batch's weighted sum of the first ``b`` coefficients plus each canary's
    coefficient times its gradient, so a rule clips, counts (DPSGD-F's ``m_k``, if
    ``canary_norm`` exceeds ``C_0``; Naive's ``b_k``), weights and noises the
    canaries exactly as it treats real examples. Give the rule one group label per
    example, the canaries' last.

    Args:
        batch: Per-sample gradients of the real examples (from
            :meth:`~dpnotes.dpsgd.engine.PerSampleClipper.compute`).
        canary_directions: Unit vectors, shape ``(c, P)`` with ``P`` the number of
            trainable parameter entries; ``c`` may be 0.
        canary_norm: The canaries' gradient norm, positive.

    Returns:
        A :class:`~dpnotes.dpsgd.engine.PerSampleGradients` of ``b + c`` examples
        (the canaries' losses are 0), valid as long as ``batch`` is.

    Raises:
        ValueError: If the directions do not have shape ``(c, P)``, are not finite or
            not of unit norm, or ``canary_norm`` is not positive.

    Privacy:
        Each canary is one example of norm ``canary_norm``: the rules' sensitivity
        analysis covers it like any other, so an audit with canaries audits the rules.

    Examples:
        >>> model = nn.utils.skip_init(nn.Linear, 3, 2)
        >>> _ = [nn.init.zeros_(p) for p in model.parameters()]
        >>> x, y = torch.ones(2, 3), torch.tensor([0, 1])
        >>> with PerSampleClipper(model) as clipper:
        ...     batch = clipper.compute(x, y)
        ...     canary = torch.zeros(1, 8)
        ...     canary[0, 5] = 1.0  # weight[1, 2]
        ...     aug = canary_batch(batch, canary, 100.0)
        ...     weight, bias = aug.clipped_sum(1.0, set_grad=False)
        >>> aug.batch_size, float(aug.norms[-1]), round(float(weight[1, 2]), 4)
        (3, 100.0, 1.0)
    """
    norm = check_positive(canary_norm, "canary_norm")
    shapes = [p.shape for p in batch.parameters]
    sizes = [math.prod(s) for s in shapes]
    dtype, device = batch.norms.dtype, batch.norms.device
    dirs = torch.as_tensor(canary_directions).to(dtype=dtype, device=device)
    if dirs.dim() != 2 or dirs.shape[1] != sum(sizes):
        raise ValueError(
            f"canary_directions must have shape (c, {sum(sizes)}): one unit vector "
            "per canary over the flattened trainable parameters, got "
            f"{tuple(dirs.shape)}."
        )
    if not bool(torch.isfinite(dirs).all()) or not torch.allclose(
        dirs.norm(dim=1), torch.ones(dirs.shape[0], dtype=dtype, device=device)
    ):
        raise ValueError(
            "every canary direction must be a finite unit vector (L2 norm 1); the "
            "gradient's size is canary_norm."
        )
    b, c = batch.batch_size, dirs.shape[0]
    grads = norm * dirs

    def weighted(coef: Tensor) -> list[Tensor]:
        sums = batch.weighted_sum(coef[:b], set_grad=False)
        if c == 0:
            return sums
        extra = torch.split(coef[b:].to(dtype) @ grads, sizes)
        return [s + e.view_as(s) for s, e in zip(sums, extra, strict=True)]

    return PerSampleGradients(
        norms=torch.cat(
            [batch.norms, torch.full((c,), norm, dtype=dtype, device=device)]
        ),
        losses=torch.cat(
            [batch.losses, torch.zeros(c, dtype=batch.losses.dtype, device=device)]
        ),
        parameters=batch.parameters,
        _weighted=weighted,
    )


# --------------------------------------------------------------------------------------
# The audit of one training run
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OneRunAudit:
    """The outcome of :func:`audit_training`: one run, its canaries and the bound.

    Attributes:
        method: ``"dpsgd"``, ``"naive"`` or ``"dpsgd_f"``.
        rule: DPSGD-F's reading (:attr:`~dpnotes.dpsgd.rules.DPSGDFRule.label`,
            ``"default"`` for the package's; ``"default"`` for the other methods).
        private: Whether the rule keeps the guarantee the accountant states.
        claimed_epsilon: The accountant's epsilon for these settings at ``delta``
            (:func:`~dpnotes.dpsgd.rules.dpsgd_epsilon`), what the audit tests.
        epsilon_lower: The audit's lower bound at confidence ``1 - beta``.
        correct: ``W``, the number of correct guesses.
        guesses: ``r = k_plus + k_minus``.
        m: The number of canaries.
        k_plus: "In" guesses (the highest scores).
        k_minus: "Out" guesses (the lowest scores).
        included: How many canaries the coins put in.
        delta: The delta of the claim.
        beta: The audit's error probability.
        effective_noise_multiplier: The median over steps of the gradient noise's
            std over the step's sensitivity (``max_k C_k``, times ``max_k theta_k``
            for Naive): ``sigma_2`` for a private rule; ``sigma_2 C_0 / max_k C_k``
            for ``noise_scale="base_bound"``.
        effective_epsilon: The accountant's epsilon at ``effective_noise_multiplier``
            (the counts' multiplier unchanged); equal to ``claimed_epsilon`` for a
            private rule.
        note: What the result means for this rule, in words.
        steps: Training steps.
        sample_rate: Poisson rate ``q`` of real rows and included canaries.
        noise_multiplier: ``sigma_2``.
        count_noise_multiplier: ``sigma_1`` (None for DPSGD).
        clip_norm: ``C_0``.
        canary_norm: The canaries' gradient norm.
        canary_group: The group the canaries belong to.
        seed: The seed of the run.
        seconds: Wall-clock time of the run and the bound.
    """

    method: str
    rule: str
    private: bool
    claimed_epsilon: float
    epsilon_lower: float
    correct: int
    guesses: int
    m: int
    k_plus: int
    k_minus: int
    included: int
    delta: float
    beta: float
    effective_noise_multiplier: float
    effective_epsilon: float
    note: str
    steps: int
    sample_rate: float
    noise_multiplier: float
    count_noise_multiplier: float | None
    clip_norm: float
    canary_norm: float
    canary_group: int
    seed: int
    seconds: float

    def passes(self) -> bool:
        """Whether the audit found no violation (lower bound <= claimed epsilon)."""
        return self.epsilon_lower <= self.claimed_epsilon

    def summary(self) -> str:
        """Return a one-line description of the result."""
        verdict = "passes" if self.passes() else "FAILS"
        rule = "" if self.rule == "default" else f" ({self.rule})"
        return (
            f"{self.method}{rule}: epsilon >= {self.epsilon_lower:.3f} at "
            f"{1 - self.beta:.0%} confidence vs claimed {self.claimed_epsilon:.3f} "
            f"(delta={self.delta:g}): {verdict}; {self.correct}/{self.guesses} "
            f"guesses right, {self.included}/{self.m} canaries in; "
            f"{self.seconds:.1f} s"
        )


@dataclass(frozen=True)
class _Task:
    x: Tensor  # (n, features), the real rows' features
    y: Tensor  # (n,)
    groups: Tensor  # (n,)
    features: int


def _synthetic_task(group_sizes: Sequence[int], features: int, seed) -> _Task:
    # Two groups with their own linear labelling (10% of labels flipped). Group 0's
    # features have norm about 0.5, so its gradients stay below C_0 = 1; group 1's
    # about 4, so its gradients are mostly clipped, as for a minority the model fits
    # worse. The canaries' coordinates are not among these features.
    g = torch.Generator().manual_seed(int(seed.generate_state(1)[0]))
    xs, ys, gs = [], [], []
    for k, (n, scale) in enumerate(zip(group_sizes, (0.5, 4.0), strict=True)):
        x = scale * torch.randn(n, features, generator=g) / math.sqrt(features)
        w = torch.randn(features, generator=g)
        flip = torch.rand(n, generator=g) < 0.1
        xs.append(x)
        ys.append(((x @ w > 0) ^ flip).long())
        gs.append(torch.full((n,), k, dtype=torch.long))
    return _Task(torch.cat(xs), torch.cat(ys), torch.cat(gs), features)


def _rule_step(
    method: str, batch: PerSampleGradients, groups: Tensor, settings: dict
) -> StepOutput:
    # The package's rule functions, called as the training loop calls them.
    common = {
        "num_groups": 2,
        "noise_multiplier": settings["sigma2"],
        "clip_norm": settings["c0"],
        "generator": settings["g_noise"],
    }
    if method == "dpsgd":
        return dpsgd_step(batch, groups, **common)
    common["count_noise_multiplier"] = settings["sigma1"]
    common["count_generator"] = settings["g_count"]
    if method == "naive":
        return naive_step(batch, groups, batch_size=settings["b"], **common)
    return dpsgd_f_step(
        batch, groups, rule=settings["rule"], batch_size=settings["b"], **common
    )


def _train_with_canaries(
    task: _Task,
    included: Tensor,
    method: str,
    settings: dict,
) -> tuple[np.ndarray, list[float]]:
    """Train ``steps`` steps; return each canary's score and each step's multiplier."""
    m, f = included.shape[0], task.features
    model = nn.utils.skip_init(nn.Linear, f + m, 2)
    for p in model.parameters():
        nn.init.zeros_(p)
    total = sum(p.numel() for p in model.parameters())
    index = torch.arange(f, f + m)  # canary i: weight[0, f + i], flattened
    scores = torch.zeros(m, dtype=torch.float64)
    multipliers = []
    q, g_sample = settings["q"], settings["g_sample"]
    with PerSampleClipper(model) as clipper:
        for _ in range(settings["steps"]):
            rows = (torch.rand(task.x.shape[0], generator=g_sample) < q).nonzero()[:, 0]
            chosen = (torch.rand(m, generator=g_sample) < q) & included
            canaries = chosen.nonzero()[:, 0]
            x = torch.zeros(rows.shape[0], f + m)
            x[:, :f] = task.x[rows]
            batch = clipper.compute(x, task.y[rows])
            directions = torch.zeros(canaries.shape[0], total)
            directions[torch.arange(canaries.shape[0]), index[canaries]] = 1.0
            aug = canary_batch(batch, directions, settings["canary_norm"])
            groups = torch.cat(
                [task.groups[rows], torch.full_like(canaries, settings["group"])]
            )
            out = _rule_step(method, aug, groups, settings)
            flat = torch.cat([s.reshape(-1) for s in out.noisy_sum])
            scores += flat[index].to(torch.float64)
            weights = 1.0 if out.group_weights is None else out.group_weights
            sensitivity = float((out.clip_bounds * weights).max())
            multipliers.append(out.noise_std / sensitivity)
            with torch.no_grad():
                for p, s in zip(model.parameters(), out.noisy_sum, strict=True):
                    p -= settings["lr"] * s.view_as(p) / settings["b"]
    return scores.numpy(), multipliers


def _check_rule(method: str, rule: DPSGDFRule | None) -> DPSGDFRule | None:
    check_choice(method, PRIVATE_METHODS, "method")
    if rule is None:
        return None
    if not isinstance(rule, DPSGDFRule):
        raise TypeError(
            f"rule must be a DPSGDFRule (or None), got {type(rule).__name__}."
        )
    if method != "dpsgd_f":
        raise ValueError(
            f"rule={rule.label!r} is a reading of DPSGD-F's bound rule; it needs "
            f"method='dpsgd_f', got method={method!r}."
        )
    return rule


def _check_settings(
    method: str,
    *,
    steps: int,
    sample_rate: float,
    noise_multiplier: float,
    count_noise_multiplier: float | None,
    clip_norm: float,
    canary_norm: float | None,
    canary_group: int,
    learning_rate: float,
) -> dict:
    sigma2 = check_positive(noise_multiplier, "noise_multiplier")
    sigma1 = None
    if method != "dpsgd":
        sigma1 = check_positive(
            COUNT_NOISE_FACTOR * sigma2
            if count_noise_multiplier is None
            else count_noise_multiplier,
            "count_noise_multiplier",
        )
    c0 = check_positive(clip_norm, "clip_norm")
    check_choice(canary_group, (0, 1), "canary_group")
    return {
        "steps": check_int(steps, "steps", minimum=1),
        "q": check_probability(sample_rate, "sample_rate", closed_right=True),
        "sigma2": sigma2,
        "sigma1": sigma1,
        "c0": c0,
        "canary_norm": check_positive(
            100.0 * c0 if canary_norm is None else canary_norm, "canary_norm"
        ),
        "group": canary_group,
        "lr": check_positive(learning_rate, "learning_rate"),
    }


def _epsilons(
    method: str, settings: dict, effective: float, private: bool, delta: float
) -> tuple[float, float]:
    """The claimed epsilon and the accountant's epsilon at the effective multiplier."""
    accounting = {
        "method": method,
        "sample_rate": settings["q"],
        "count_noise_multiplier": settings["sigma1"],
        "steps": settings["steps"],
        "delta": delta,
    }
    claimed = dpsgd_epsilon(noise_multiplier=settings["sigma2"], **accounting)
    if private:
        return claimed, claimed
    with warnings.catch_warnings():  # opacus: a small multiplier wants larger orders
        warnings.simplefilter("ignore", UserWarning)
        return claimed, dpsgd_epsilon(noise_multiplier=effective, **accounting)


def _note(private: bool, multiplier: float, epsilon: float, sigma2: float) -> str:
    if private:
        return (
            "private: the audit can refute the claim only by chance (probability at "
            "most beta)."
        )
    return (
        f"not private: the gradient noise is {multiplier:.3g} times the step's "
        f"sensitivity (median over steps) instead of sigma_2 = {sigma2:g}, which an "
        f"accountant would put at epsilon {epsilon:.3g}; the noise-to-sensitivity "
        "ratio varies with the batch and has no positive floor, so no finite "
        "epsilon holds in the worst case."
    )


def audit_training(
    method: str = "dpsgd_f",
    *,
    rule: DPSGDFRule | None = None,
    m: int = 1000,
    k_plus: int = 100,
    k_minus: int = 100,
    steps: int = 200,
    sample_rate: float = 0.05,
    noise_multiplier: float = 2.0,
    count_noise_multiplier: float | None = None,
    clip_norm: float = 1.0,
    canary_norm: float | None = None,
    canary_group: int = 1,
    group_sizes: tuple[int, int] = (8000, 1000),
    features: int = 20,
    learning_rate: float = 0.5,
    delta: float = 1e-5,
    beta: float = 0.05,
    seed: int = 0,
) -> OneRunAudit:
    """Audit one training run of ``method`` with ``m`` white-box gradient canaries.

    Draws a synthetic two-group task (``group_sizes`` real rows, group 1 with larger
    gradients) and a coin per canary (in with probability 1/2), then trains
    ``nn.Linear(features + m, 2)`` for ``steps`` steps: each step Poisson-samples
    the real rows and the included canaries with rate ``sample_rate``, computes the
    real rows' per-sample gradients, appends the sampled canaries
    (:func:`canary_batch`; canary ``i``'s gradient is ``canary_norm`` times the unit
    vector of ``weight[0, features + i]``, a coordinate no real row touches) and
    applies the package's rule (:func:`~dpnotes.dpsgd.rules.dpsgd_step`,
    :func:`~dpnotes.dpsgd.rules.naive_step` or
    :func:`~dpnotes.dpsgd.rules.dpsgd_f_step` with ``rule``) and an SGD step. The
    auditor scores canary ``i`` by the sum over steps of the noisy gradient sum's
    coordinate ``features + i``, guesses (:func:`count_correct_guesses`) and bounds
    epsilon (:func:`one_run_epsilon_lower_bound`).

    The defaults claim epsilon 1.72 (DPSGD) or 1.73 (Naive, DPSGD-F, whose counts
    add a little) at ``delta = 1e-5``, and one run takes about a second on one CPU
    thread. Group 0's gradients stay below ``C_0`` while group 1 and the canaries are
    clipped, so DPSGD-F's ``C_1`` is several times ``C_0`` (median about 6.6): the
    correct rule noises the canaries with ``sigma_2 C_1``, while
    ``noise_scale="base_bound"`` noises them with ``sigma_2 C_0``, an effective
    multiplier of about 0.3 instead of 2. Each canary is in about 10 of the 200
    batches, so a correct rule leaves its score a weak signal (the bound stays well
    below the claim) and the broken one a strong one (bound about 3 or more, out of
    at most 4.17 for 200 guesses).

    Args:
        method: ``"dpsgd"``, ``"naive"`` or ``"dpsgd_f"``.
        rule: DPSGD-F's reading (:class:`~dpnotes.dpsgd.rules.DPSGDFRule`); only
            with ``method="dpsgd_f"``.
        m: Number of canaries.
        k_plus: "In" guesses.
        k_minus: "Out" guesses; ``k_plus + k_minus <= m``.
        steps: Training steps.
        sample_rate: Poisson rate ``q`` in (0, 1].
        noise_multiplier: ``sigma_2``.
        count_noise_multiplier: ``sigma_1`` (Naive, DPSGD-F); default
            ``COUNT_NOISE_FACTOR * sigma_2``.
        clip_norm: ``C_0``.
        canary_norm: The canaries' gradient norm; default ``100 C_0``, so that they
            are always clipped (and DPSGD-F counts them in ``m_k``).
        canary_group: The canaries' group, 0 or 1 (1: the minority, where DPSGD-F's
            bound ``C_k`` is largest).
        group_sizes: Real rows per group.
        features: Features of the real rows.
        learning_rate: The SGD step size (the gradient canaries do not depend on the
            model; training keeps the real rows' gradients realistic).
        delta: The delta of the claim.
        beta: The audit's error probability.
        seed: Seeds the data, the coins, the sampling and both noises.

    Returns:
        A :class:`OneRunAudit`.

    Raises:
        ValueError: For an unknown method, a rule with a method other than
            ``"dpsgd_f"``, ``k_plus + k_minus`` outside ``[1, m]``, or an argument
            out of range.
        TypeError: If ``rule`` is not a :class:`~dpnotes.dpsgd.rules.DPSGDFRule`, or
            a count or the seed is not an integer.

    Privacy:
        The audit is a statistical test: a bound above ``claimed_epsilon`` shows, with
        confidence ``1 - beta``, that the rule breaks its claim; a bound below shows
        nothing more than that this attack found no violation.

    References:
        steinke2023privacy (Algorithm 1 with gradient canaries, white box);
        xu2021removing.
    """
    start = time.perf_counter()
    rule = _check_rule(method, rule)
    m = check_int(m, "m", minimum=1)
    k_plus, k_minus = _check_ks(k_plus, k_minus, m)
    delta = check_delta(delta)
    beta = check_probability(beta, "beta")
    seed = check_int(seed, "seed", minimum=0)
    settings = _check_settings(
        method,
        steps=steps,
        sample_rate=sample_rate,
        noise_multiplier=noise_multiplier,
        count_noise_multiplier=count_noise_multiplier,
        clip_norm=clip_norm,
        canary_norm=canary_norm,
        canary_group=canary_group,
        learning_rate=learning_rate,
    )
    sizes = [check_int(n, "group_sizes[k]", minimum=1) for n in group_sizes]
    if len(sizes) != 2:
        raise ValueError(f"group_sizes must give the two groups' sizes, got {sizes}.")
    features = check_int(features, "features", minimum=1)

    data_seed, coin_seed, *stream_seeds = np.random.SeedSequence(seed).spawn(5)
    task = _synthetic_task(sizes, features, data_seed)
    included = torch.from_numpy(np.random.default_rng(coin_seed).random(m) < 0.5)
    g_sample, g_count, g_noise = (
        torch.Generator().manual_seed(int(s.generate_state(1)[0])) for s in stream_seeds
    )
    settings.update(
        rule=rule,
        b=max(1, round(settings["q"] * (sum(sizes) + m / 2))),  # public, expected
        g_sample=g_sample,
        g_count=g_count,
        g_noise=g_noise,
    )
    scores, multipliers = _train_with_canaries(task, included, method, settings)
    correct = count_correct_guesses(scores, included, k_plus=k_plus, k_minus=k_minus)
    bound = one_run_epsilon_lower_bound(
        correct, k_plus + k_minus, delta=delta, m=m, beta=beta
    )
    private = rule is None or rule.private
    effective = statistics.median(multipliers)
    claimed, eff_epsilon = _epsilons(method, settings, effective, private, delta)
    return OneRunAudit(
        method=method,
        rule="default" if rule is None else rule.label,
        private=private,
        claimed_epsilon=claimed,
        epsilon_lower=bound,
        correct=correct,
        guesses=k_plus + k_minus,
        m=m,
        k_plus=k_plus,
        k_minus=k_minus,
        included=int(included.sum()),
        delta=delta,
        beta=beta,
        effective_noise_multiplier=effective,
        effective_epsilon=eff_epsilon,
        note=_note(private, effective, eff_epsilon, settings["sigma2"]),
        steps=settings["steps"],
        sample_rate=settings["q"],
        noise_multiplier=settings["sigma2"],
        count_noise_multiplier=settings["sigma1"],
        clip_norm=settings["c0"],
        canary_norm=settings["canary_norm"],
        canary_group=canary_group,
        seed=seed,
        seconds=time.perf_counter() - start,
    )
