"""SGD, DPSGD, Naive and DPSGD-F: training with group-dependent clipping.

The algorithms of Xu, Du, Wu (KDD 2021), each a per-step rule on top of the per-sample
gradient engine (:class:`~dpnotes.dpsgd.engine.PerSampleClipper`):

* ``"sgd"`` -- non-private mini-batch SGD (the reference for the costs of privacy).
* ``"dpsgd"`` -- Alg. 1 (abadi2016deep): clip every per-sample gradient to ``C_0``,
  add ``N(0, (sigma_2 C_0)^2)`` to the sum, divide by the expected batch size.
* ``"naive"`` -- Alg. 3: release the group counts ``b_k`` of the batch with noise
  ``N(0, sigma_1^2)``; weight group ``k`` by ``theta_k = (b/K) / b~_k`` so that every
  group contributes equally; clip to ``C_0``; noise ``sigma_2 C_0 max_k theta_k``.
* ``"dpsgd_f"`` -- Alg. 2: release, per group, the number ``m_k`` of examples whose
  gradient norm exceeds ``C_0`` and the number ``o_k`` of the others with noise
  ``N(0, sigma_1^2)``; ``C_k = C_0 (1 + (m~_k / b~_k) / (m~ / b~))``; clip each
  example to its group's ``C_k``; noise ``sigma_2 max_k C_k``.

:func:`train` runs one of them; :func:`dpsgd_step`, :func:`naive_step` and
:func:`dpsgd_f_step` are the per-step rules (the book includes their source), and
:func:`naive_weights`, :func:`dpsgd_f_clip_bounds`, :func:`clipped_counts` and
:func:`release_counts` their pieces.

Noisy counts can be zero or negative, especially for small groups with the paper's
``sigma_1 = 10 sigma_2``. The package post-processes them (no privacy cost) as follows:
every noisy count is first clipped at 0; Naive divides by ``max(b~_k, 1)`` (so
``theta_k <= b/K``); DPSGD-F uses the neutral ratio 1 -- i.e. ``C_k = 2 C_0``, the
value the rule gives a group whose clipped share equals the average -- whenever
``m~_k / b~_k`` or ``m~ / b~`` is undefined (a zero denominator).
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor, nn

from dpnotes.accounting import joint_noise_multiplier, rdp_epsilon
from dpnotes.dpsgd.engine import (
    Backend,
    LossFn,
    PerSampleClipper,
    PerSampleGradients,
    cross_entropy_per_sample,
)
from dpnotes.rng import check_rng
from dpnotes.validation import (
    check_choice,
    check_delta,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
)

__all__ = [
    "METHODS",
    "EpochStats",
    "TrainResult",
    "classic_rdp_conversion",
    "clipped_counts",
    "dpsgd_epsilon",
    "dpsgd_f",
    "dpsgd_f_clip_bounds",
    "dpsgd_f_step",
    "dpsgd_step",
    "group_accuracy",
    "max_steps_within",
    "naive",
    "naive_step",
    "naive_weights",
    "predict",
    "release_counts",
    "sgd",
    "train",
]

Method = Literal["sgd", "dpsgd", "naive", "dpsgd_f"]
METHODS: tuple[str, ...] = ("sgd", "dpsgd", "naive", "dpsgd_f")
_LR_SCHEDULES = ("1/sqrt(T)", "1/sqrt(t)")


# --------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EpochStats:
    """Per-group diagnostics of one epoch (computed on private data; not released).

    Losses and gradient norms are averaged over the examples drawn in the epoch's
    batches (about the whole training set once), before each step's update.

    Attributes:
        epoch: Epoch number, from 1.
        steps: Steps taken so far (cumulative).
        epsilon: Privacy spent so far (``inf`` for ``"sgd"``).
        group_loss: Mean per-sample loss of each group.
        group_grad_norm: Mean unclipped per-sample gradient norm of each group.
        group_examples: Examples of each group drawn in the epoch.
        clip_bounds: Mean over the epoch's steps of each group's clipping bound
            (``C_k`` for DPSGD-F, ``C_0`` for DPSGD and Naive); ``None`` for SGD.
        group_weights: Naive only: mean over the steps of each ``theta_k``.
        group_clip_fraction: Share of each group's drawn examples whose gradient norm
            exceeded the bound it was clipped to in its step; ``None`` for SGD.
    """

    epoch: int
    steps: int
    epsilon: float
    group_loss: tuple[float, ...]
    group_grad_norm: tuple[float, ...]
    group_examples: tuple[int, ...]
    clip_bounds: tuple[float, ...] | None
    group_weights: tuple[float, ...] | None = None
    group_clip_fraction: tuple[float, ...] | None = None


@dataclass(frozen=True)
class TrainResult:
    """The outcome of :func:`train`.

    Attributes:
        model: The trained model (a copy; the input model is left unchanged).
        method: ``"sgd"``, ``"dpsgd"``, ``"naive"`` or ``"dpsgd_f"``.
        epsilon: Privacy spent at ``delta`` (``inf`` for SGD).
        delta: The target delta.
        steps: Steps taken.
        sample_rate: ``q = batch_size / n``.
        sampling: ``"poisson"`` or ``"shuffle"``.
        noise_multiplier: ``sigma_2`` (``None`` for SGD).
        count_noise_multiplier: ``sigma_1`` (Naive and DPSGD-F, else ``None``).
        clip_norm: ``C_0`` (``None`` for SGD).
        group_epsilon: The paper's per-group guarantee ``(r_k) * epsilon`` with
            ``r_k`` the mean over steps of ``C_k / max_j C_j`` (DPSGD-F) or
            ``theta_k / max_j theta_j`` (Naive); ``epsilon`` for every group under
            DPSGD; ``None`` for SGD. See :func:`train` for what this assumes.
        stopped_early: Whether ``target_epsilon`` ended training before ``epochs``.
        history: One :class:`EpochStats` per (possibly partial) epoch.
    """

    model: nn.Module
    method: str
    epsilon: float
    delta: float
    steps: int
    sample_rate: float
    sampling: str
    noise_multiplier: float | None
    count_noise_multiplier: float | None
    clip_norm: float | None
    group_epsilon: tuple[float, ...] | None
    stopped_early: bool
    history: tuple[EpochStats, ...]

    @property
    def epsilon_classic(self) -> float:
        """Epsilon of the same run with the classic RDP conversion (mironov2017renyi).

        The conversion the DPSGD-F paper's reported epsilons used (TF Privacy, 2020);
        see :func:`dpsgd_epsilon`. ``inf`` for SGD, 0 when no step was taken.
        """
        if self.method == "sgd":
            return math.inf
        if self.steps == 0:
            return 0.0
        return dpsgd_epsilon(
            method=self.method,
            sample_rate=self.sample_rate,
            noise_multiplier=self.noise_multiplier,
            count_noise_multiplier=self.count_noise_multiplier,
            steps=self.steps,
            delta=self.delta,
            conversion="classic",
        )

    def history_frame(self) -> Any:
        """Return the history as a tidy ``pandas.DataFrame``, a row per epoch, group."""
        import pandas as pd

        rows = []
        for h in self.history:
            for k in range(len(h.group_loss)):
                rows.append(
                    {
                        "epoch": h.epoch,
                        "steps": h.steps,
                        "epsilon": h.epsilon,
                        "group": k,
                        "loss": h.group_loss[k],
                        "grad_norm": h.group_grad_norm[k],
                        "examples": h.group_examples[k],
                        "clip_bound": (
                            h.clip_bounds[k] if h.clip_bounds is not None else np.nan
                        ),
                        "weight": (
                            h.group_weights[k]
                            if h.group_weights is not None
                            else np.nan
                        ),
                        "clip_fraction": (
                            h.group_clip_fraction[k]
                            if h.group_clip_fraction is not None
                            else np.nan
                        ),
                    }
                )
        return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# Pieces of the per-step rules (pure functions)
# --------------------------------------------------------------------------------------


def release_counts(
    counts: Tensor, *, noise_multiplier: float, generator: torch.Generator
) -> Tensor:
    """Add ``N(0, noise_multiplier**2)`` noise to each count (sensitivity-1 vector).

    Args:
        counts: Counts, any shape; each example adds 1 to exactly one entry.
        noise_multiplier: ``sigma_1``, the noise std per unit of sensitivity.
        generator: The source of the noise (on the device of ``counts``).

    Returns:
        The noisy counts as floats (may be negative; see the module docstring).

    Privacy:
        The Gaussian mechanism with L2 sensitivity 1 under add/remove-one neighbours:
        ``1 / (2 sigma_1**2)``-zCDP; inside training it is accounted as a subsampled
        Gaussian with multiplier ``sigma_1`` per step.

    References:
        xu2021removing (Alg. 2 and 3); mironov2019sampled.
    """
    c = counts.to(torch.float64)
    noise = torch.randn(c.shape, generator=generator, device=c.device, dtype=c.dtype)
    return c + noise_multiplier * noise


def clipped_counts(
    norms: Tensor, groups: Tensor, *, clip_norm: float, num_groups: int
) -> Tensor:
    """Return ``(m_1..m_K, o_1..o_K)``: per group, counts above and below ``C_0``.

    Each example adds 1 to exactly one of the ``2K`` entries, so the vector has L2
    sensitivity 1 under adding or removing one example.

    >>> clipped_counts(torch.tensor([0.5, 2.0, 3.0]), torch.tensor([0, 0, 1]),
    ...                clip_norm=1.0, num_groups=2).tolist()
    [1, 1, 1, 0]
    """
    over = norms > clip_norm
    m = torch.bincount(groups[over], minlength=num_groups)
    o = torch.bincount(groups[~over], minlength=num_groups)
    return torch.cat([m, o])


def naive_weights(noisy_counts: Tensor, *, batch_size: int, num_groups: int) -> Tensor:
    """Return Naive's group weights ``theta_k = (b / K) / max(b~_k, 1)``.

    With exact counts, ``sum_i theta_{g(i)} = b``: every group contributes the same
    total weight ``b / K``. Dividing by ``max(b~_k, 1)`` (post-processing) keeps the
    weights positive and at most ``b / K`` when a noisy count is below one.

    Args:
        noisy_counts: Noisy per-group counts of the batch ``b~_k``, shape ``(K,)``.
        batch_size: The expected batch size ``b`` (public).
        num_groups: ``K``.

    Returns:
        ``theta``, shape ``(K,)``.

    References:
        xu2021removing (Alg. 3).

    >>> naive_weights(torch.tensor([10.0, 30.0, -2.0]), batch_size=60,
    ...               num_groups=3).tolist()
    [2.0, 0.6666666865348816, 20.0]
    """
    return (batch_size / num_groups) / noisy_counts.clamp_min(1.0)


def dpsgd_f_clip_bounds(noisy_counts: Tensor, *, clip_norm: float) -> Tensor:
    """Return DPSGD-F's bounds ``C_k = C_0 (1 + (m~_k / b~_k) / (m~ / b~))``.

    Args:
        noisy_counts: ``(m~_1..m~_K, o~_1..o~_K)``, shape ``(2K,)``, as released by
            :func:`release_counts` on :func:`clipped_counts`.
        clip_norm: The base bound ``C_0``.

    Returns:
        ``C``, shape ``(K,)``, each in ``[C_0, C_0 (1 + b~ / b~_k)]``.

    Noisy counts are clipped at 0, ``b~_k = m~_k + o~_k``, ``m~ = sum m~_k``,
    ``b~ = sum b~_k``. Where ``b~_k = 0`` or ``m~ = 0`` the ratio is undefined and
    the neutral value 1 is used (``C_k = 2 C_0``).

    References:
        xu2021removing (Alg. 2, line 9).

    >>> c = dpsgd_f_clip_bounds(torch.tensor([1.0, 4.0, 9.0, 0.0]), clip_norm=1.0)
    >>> [round(v, 4) for v in c.tolist()]  # shares 0.1 and 1 against 5/14
    [1.28, 3.8]
    """
    k = noisy_counts.shape[0] // 2
    counts = noisy_counts.clamp_min(0.0)
    m, o = counts[:k], counts[k:]
    b_k = m + o
    m_all, b_all = m.sum(), b_k.sum()
    defined = (b_k > 0) & (m_all > 0)
    share = torch.where(b_k > 0, m / torch.where(b_k > 0, b_k, 1.0), 0.0)
    overall = m_all / torch.where(b_all > 0, b_all, 1.0)
    ratio = torch.where(defined, share / torch.where(overall > 0, overall, 1.0), 1.0)
    return clip_norm * (1.0 + ratio)


# --------------------------------------------------------------------------------------
# The per-step rules
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepOutput:
    """The noisy gradient sum of one step, and what the step chose.

    Attributes:
        noisy_sum: One tensor per trainable parameter: clipped sum plus noise.
        noise_std: Standard deviation of the Gaussian noise on each coordinate.
        clip_bounds: Per-group bounds used (``C_k``; ``C_0`` for DPSGD/Naive).
        group_weights: Naive's ``theta_k`` (else ``None``).
        sensitivity_ratio: Per group, its sensitivity over the maximum:
            ``C_k / max C`` or ``theta_k / max theta``.
    """

    noisy_sum: list[Tensor]
    noise_std: float
    clip_bounds: Tensor
    group_weights: Tensor | None
    sensitivity_ratio: Tensor


def _add_noise(
    sums: list[Tensor], std: float, generator: torch.Generator
) -> list[Tensor]:
    out = []
    for s in sums:
        z = torch.randn(s.shape, generator=generator, device=s.device, dtype=s.dtype)
        out.append(s + std * z)
    return out


def dpsgd_step(
    batch: PerSampleGradients,
    groups: Tensor,
    *,
    num_groups: int,
    noise_multiplier: float,
    clip_norm: float,
    generator: torch.Generator,
) -> StepOutput:
    """DPSGD (Alg. 1): clip every per-sample gradient to ``C_0``, add Gaussian noise.

    Args:
        batch: Per-sample norms and gradients of the batch (from the engine).
        groups: Group label of each example of the batch, shape ``(b,)``.
        num_groups: ``K`` (only for the reported per-group bounds).
        noise_multiplier: ``sigma_2``.
        clip_norm: ``C_0``.
        generator: Source of the gradient noise.

    Returns:
        A :class:`StepOutput`; divide ``noisy_sum`` by the expected batch size.

    Privacy:
        One Gaussian with L2 sensitivity ``C_0`` and std ``sigma_2 C_0`` on the
        batch (add/remove-one); with Poisson sampling, a subsampled Gaussian of
        multiplier ``sigma_2``.

    References:
        abadi2016deep (Alg. 1); xu2021removing (Alg. 1).
    """
    sums = batch.clipped_sum(clip_norm, set_grad=False)
    std = noise_multiplier * clip_norm
    bounds = torch.full((num_groups,), clip_norm, device=batch.norms.device)
    return StepOutput(
        noisy_sum=_add_noise(sums, std, generator),
        noise_std=float(std),
        clip_bounds=bounds,
        group_weights=None,
        sensitivity_ratio=torch.ones(num_groups, device=batch.norms.device),
    )


def naive_step(
    batch: PerSampleGradients,
    groups: Tensor,
    *,
    num_groups: int,
    batch_size: int,
    noise_multiplier: float,
    count_noise_multiplier: float,
    clip_norm: float,
    generator: torch.Generator,
    count_generator: torch.Generator,
) -> StepOutput:
    """Naive (Alg. 3): reweight groups by noisy counts, clip to ``C_0``, add noise.

    Args:
        batch: Per-sample norms and gradients of the batch.
        groups: Group label of each example of the batch, shape ``(b,)``.
        num_groups: ``K``.
        batch_size: The expected batch size ``b`` (public).
        noise_multiplier: ``sigma_2``.
        count_noise_multiplier: ``sigma_1``.
        clip_norm: ``C_0``.
        generator: Source of the gradient noise.
        count_generator: Source of the count noise.

    Returns:
        A :class:`StepOutput`; divide ``noisy_sum`` by the expected batch size.

    Privacy:
        The group counts (sensitivity 1) with std ``sigma_1``, then, given them, the
        weighted clipped sum with sensitivity ``C_0 max_k theta_k`` and std
        ``sigma_2 C_0 max_k theta_k``: two Gaussians on the same batch
        (add/remove-one), accounted as one with multiplier
        ``(sigma_1**-2 + sigma_2**-2) ** -0.5`` (:func:`dpsgd_epsilon`).

    References:
        xu2021removing (Alg. 3).
    """
    counts = torch.bincount(groups, minlength=num_groups)
    noisy = release_counts(
        counts, noise_multiplier=count_noise_multiplier, generator=count_generator
    )
    theta = naive_weights(noisy, batch_size=batch_size, num_groups=num_groups)
    std = noise_multiplier * clip_norm * float(theta.max())
    weights = theta.to(batch.norms.dtype)[groups]
    sums = batch.clipped_sum(clip_norm, weights=weights, set_grad=False)
    return StepOutput(
        noisy_sum=_add_noise(sums, std, generator),
        noise_std=float(std),
        clip_bounds=torch.full((num_groups,), clip_norm, device=theta.device),
        group_weights=theta,
        sensitivity_ratio=theta / theta.max(),
    )


def dpsgd_f_step(
    batch: PerSampleGradients,
    groups: Tensor,
    *,
    num_groups: int,
    noise_multiplier: float,
    count_noise_multiplier: float,
    clip_norm: float,
    generator: torch.Generator,
    count_generator: torch.Generator,
) -> StepOutput:
    """DPSGD-F (Alg. 2): group bounds from noisy clipped counts, then clip and noise.

    Args:
        batch: Per-sample norms and gradients of the batch.
        groups: Group label of each example of the batch, shape ``(b,)``.
        num_groups: ``K``.
        noise_multiplier: ``sigma_2``.
        count_noise_multiplier: ``sigma_1``.
        clip_norm: ``C_0``.
        generator: Source of the gradient noise.
        count_generator: Source of the count noise.

    Returns:
        A :class:`StepOutput`; divide ``noisy_sum`` by the expected batch size.

    Privacy:
        The ``2K`` counts ``(m_k, o_k)`` (sensitivity 1) with std ``sigma_1``, then,
        given them, the sum of gradients clipped to ``C_k`` with sensitivity
        ``max_k C_k`` and std ``sigma_2 max_k C_k``: two Gaussians on the same batch,
        accounted as one with multiplier ``(sigma_1**-2 + sigma_2**-2) ** -0.5``
        (:func:`dpsgd_epsilon`).

    References:
        xu2021removing (Alg. 2).
    """
    counts = clipped_counts(
        batch.norms, groups, clip_norm=clip_norm, num_groups=num_groups
    )
    noisy = release_counts(
        counts, noise_multiplier=count_noise_multiplier, generator=count_generator
    )
    bounds = dpsgd_f_clip_bounds(noisy, clip_norm=clip_norm)
    std = noise_multiplier * float(bounds.max())
    sums = batch.clipped_sum(bounds.to(batch.norms.dtype)[groups], set_grad=False)
    return StepOutput(
        noisy_sum=_add_noise(sums, std, generator),
        noise_std=float(std),
        clip_bounds=bounds,
        group_weights=None,
        sensitivity_ratio=bounds / bounds.max(),
    )


# --------------------------------------------------------------------------------------
# Accounting
# --------------------------------------------------------------------------------------


def _sigmas(method: str, noise_multiplier: float, count_noise: float | None) -> list:
    if method == "dpsgd":
        return [noise_multiplier]
    return [noise_multiplier, count_noise]


def dpsgd_epsilon(
    *,
    method: str,
    sample_rate: float,
    noise_multiplier: float,
    count_noise_multiplier: float | None = None,
    steps: int,
    delta: float,
    conversion: Literal["improved", "classic"] = "improved",
) -> float:
    """Return the epsilon of ``steps`` steps of DPSGD, Naive or DPSGD-F.

    DPSGD releases one Poisson-subsampled Gaussian per step (multiplier
    ``sigma_2``); Naive and DPSGD-F also release their counts (multiplier
    ``sigma_1``, sensitivity 1) computed on the same batch. An example is then in
    both releases of a step or in neither, so the two are one Gaussian mechanism of
    multiplier ``(sigma_1**-2 + sigma_2**-2) ** -0.5``
    (:func:`dpnotes.accounting.joint_noise_multiplier`), amplified by subsampling
    once. (Amplifying each release and adding their RDP curves, as the DPSGD-F paper
    does, understates the cost of the counts: on MNIST's settings it puts them at
    0.011 of epsilon instead of 0.076.) The curve is converted once.

    Two conversions from RDP to ``(epsilon, delta)`` are offered, both minimised over
    opacus' default orders ``alpha`` (``RDPAccountant.DEFAULT_ALPHAS``, 1.1 to 63):

    * ``"improved"`` (default; what :func:`train` reports and stops on): opacus'
      ``get_privacy_spent``, i.e. ``RDP(alpha) + log((alpha - 1) / alpha)
      - (log delta + log alpha) / (alpha - 1)`` (balle2020hypothesis, Thm. 21),
      via :func:`dpnotes.accounting.rdp_epsilon`.
    * ``"classic"``: ``RDP(alpha) + log(1 / delta) / (alpha - 1)``
      (mironov2017renyi, Prop. 3), the conversion of TF Privacy in 2020 and hence
      the one behind the epsilons the DPSGD-F paper reports. It is never smaller.

    Args:
        method: ``"dpsgd"``, ``"naive"`` or ``"dpsgd_f"``.
        sample_rate: Poisson rate ``q`` in (0, 1].
        noise_multiplier: ``sigma_2``.
        count_noise_multiplier: ``sigma_1`` (Naive and DPSGD-F).
        steps: Number of steps, at least 1.
        delta: Target delta.
        conversion: ``"improved"`` or ``"classic"``.

    Returns:
        Epsilon at ``delta``.

    Raises:
        ValueError: For an unknown method or conversion, or an argument out of range.

    Privacy:
        ``(epsilon, delta)``-DP under add/remove-one neighbours, for Poisson sampling
        (either conversion is a valid bound; the improved one is tighter).

    References:
        mironov2017renyi (Prop. 3); mironov2019sampled; balle2020hypothesis;
        abadi2016deep; andrew2021differentially; xu2021removing (section 6: epsilon
        6.55, 3.1, 2.66).

    >>> round(dpsgd_epsilon(method="dpsgd", sample_rate=256 / 36178,
    ...       noise_multiplier=1.0, steps=2826, delta=1e-6, conversion="classic"), 2)
    3.08
    """
    check_choice(method, METHODS[1:], "method")
    check_choice(conversion, ("improved", "classic"), "conversion")
    sigmas = tuple(_sigmas(method, noise_multiplier, count_noise_multiplier))
    if conversion == "classic":
        return _classic_epsilon_cached(sample_rate, sigmas, steps, delta)
    return _rdp_epsilon_cached(sample_rate, sigmas, steps, delta)


def classic_rdp_conversion(
    rdp: np.ndarray | list[float], orders: np.ndarray | list[float], *, delta: float
) -> float:
    """Convert an RDP curve to epsilon with the classic rule (mironov2017renyi).

    ``epsilon = min over alpha of RDP(alpha) + log(1 / delta) / (alpha - 1)``.

    Args:
        rdp: RDP values, one per order.
        orders: Rényi orders ``alpha > 1``, as many as ``rdp``.
        delta: Target delta in (0, 1).

    Returns:
        The smallest epsilon over the orders.

    Privacy:
        An ``(alpha, r)``-RDP mechanism is ``(r + log(1/delta)/(alpha-1), delta)``-DP.

    References:
        mironov2017renyi (Prop. 3).

    >>> round(classic_rdp_conversion([0.5, 1.0], [2.0, 5.0], delta=1e-5), 4)
    3.8782
    """
    delta = check_delta(delta)
    r = np.asarray(rdp, dtype=float)
    a = np.asarray(orders, dtype=float)
    if r.shape != a.shape or r.ndim != 1 or r.size == 0 or not np.all(a > 1.0):
        raise ValueError(
            "rdp and orders must be non-empty 1-D arrays of the same length, with "
            "every order greater than 1."
        )
    return float(np.min(r + math.log(1.0 / delta) / (a - 1.0)))


@functools.lru_cache(maxsize=4096)
def _classic_epsilon_cached(
    sample_rate: float, sigmas: tuple[float, ...], steps: int, delta: float
) -> float:
    from opacus.accountants import RDPAccountant
    from opacus.accountants.analysis.rdp import compute_rdp

    q = check_probability(sample_rate, "sample_rate", closed_right=True)
    steps = check_int(steps, "steps", minimum=1)
    orders = np.asarray(RDPAccountant.DEFAULT_ALPHAS, dtype=float)
    rdp = compute_rdp(
        q=q,
        noise_multiplier=joint_noise_multiplier(sigmas),
        steps=steps,
        orders=orders,
    )
    return classic_rdp_conversion(np.asarray(rdp), orders, delta=delta)


@functools.lru_cache(maxsize=4096)
def _rdp_epsilon_cached(
    sample_rate: float, sigmas: tuple[float, ...], steps: int, delta: float
) -> float:
    # opacus' RDP of fractional orders is slow pure Python (~0.1 s per curve); runs
    # that repeat a configuration (seeds, methods, the target-epsilon bisection)
    # reuse the value.
    return rdp_epsilon(
        sample_rate=sample_rate,
        noise_multipliers=list(sigmas),
        steps=steps,
        delta=delta,
        same_sample=True,
    )


def max_steps_within(
    target_epsilon: float,
    *,
    method: str,
    sample_rate: float,
    noise_multiplier: float,
    count_noise_multiplier: float | None = None,
    delta: float,
    limit: int,
) -> int:
    """Return the largest ``t <= limit`` whose epsilon is at most ``target_epsilon``.

    Epsilon increases with the number of steps, so a bisection finds it. Returns 0
    when a single step already exceeds the target.
    """
    target_epsilon = check_epsilon(target_epsilon, "target_epsilon")

    def eps(t: int) -> float:
        return dpsgd_epsilon(
            method=method,
            sample_rate=sample_rate,
            noise_multiplier=noise_multiplier,
            count_noise_multiplier=count_noise_multiplier,
            steps=t,
            delta=delta,
        )

    if eps(limit) <= target_epsilon:
        return limit
    lo, hi = 0, limit  # eps(lo) <= target (or lo == 0), eps(hi) > target
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if eps(mid) <= target_epsilon:
            lo = mid
        else:
            hi = mid
    return lo


# --------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------


def _as_tensor(a: Any, name: str) -> Tensor:
    if isinstance(a, Tensor):
        return a
    try:
        return torch.as_tensor(np.asarray(a))
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a tensor or array-like: {err}") from err


def _check_groups(groups: Any, n: int, num_groups: int) -> Tensor:
    g = _as_tensor(groups, "groups")
    if g.dim() != 1 or g.shape[0] != n:
        raise ValueError(
            f"groups must have one label per example, shape ({n},), got "
            f"{tuple(g.shape)}."
        )
    if g.is_floating_point() or g.is_complex() or g.dtype == torch.bool:
        raise TypeError(
            f"groups must hold integer labels 0..K-1, got dtype {g.dtype}; map the "
            "groups of the public specification to integers first."
        )
    g = g.long()
    bad = (g < 0) | (g >= num_groups)
    if bool(bad.any()):
        unknown = sorted(set(g[bad].tolist()))[:10]
        raise ValueError(
            f"groups contains labels {unknown} outside 0..{num_groups - 1}; the public "
            f"number of groups is num_groups={num_groups}. Fix num_groups or map the "
            "labels to 0..K-1."
        )
    present = torch.bincount(g, minlength=num_groups)
    missing = [k for k in range(num_groups) if int(present[k]) == 0]
    if missing:
        raise ValueError(
            f"group(s) {missing} have no training examples, although "
            f"num_groups={num_groups}. Pass the number of groups that occur, or "
            "merge the empty groups."
        )
    return g


def _resolve_lr(
    lr: float | Callable[[int], float] | str, total_steps: int
) -> Callable[[int], float]:
    if isinstance(lr, str):
        check_choice(lr, _LR_SCHEDULES, "lr schedule")
        if lr == "1/sqrt(T)":
            const = 1.0 / math.sqrt(max(total_steps, 1))
            return lambda t: const
        return lambda t: 1.0 / math.sqrt(t + 1)
    if callable(lr):
        return lr
    value = check_positive(lr, "lr")
    return lambda t: value


def _stream_generators(
    rng: np.random.Generator | None,
    generator: torch.Generator | None,
    device: torch.device,
) -> tuple[torch.Generator, torch.Generator, torch.Generator]:
    # Three independent streams: batch sampling, count noise, gradient noise. Keeping
    # them apart makes DPSGD, Naive and DPSGD-F draw the same batches and the same
    # standardised gradient noise from the same seed.
    if (rng is None) == (generator is None):
        raise TypeError(
            "pass exactly one source of randomness: rng=numpy.random.default_rng(seed) "
            "or generator=torch.Generator().manual_seed(seed); training never uses the "
            "global random state."
        )
    if rng is not None:
        seeds = check_rng(rng).integers(0, 2**62, size=3).tolist()
    else:
        if not isinstance(generator, torch.Generator):
            raise TypeError(
                f"generator must be a torch.Generator, got {type(generator).__name__}."
            )
        seeds = torch.randint(
            0, 2**62, (3,), generator=generator, device=generator.device
        ).tolist()
    sample = torch.Generator(device="cpu").manual_seed(int(seeds[0]))
    counts = torch.Generator(device=device).manual_seed(int(seeds[1]))
    noise = torch.Generator(device=device).manual_seed(int(seeds[2]))
    return sample, counts, noise


def train(
    model: nn.Module,
    x: Tensor,
    y: Tensor,
    groups: Tensor,
    *,
    num_groups: int,
    method: Method = "dpsgd_f",
    noise_multiplier: float | None = None,
    clip_norm: float | None = None,
    count_noise_multiplier: float | None = None,
    lr: float | Callable[[int], float] | str = 0.1,
    batch_size: int = 256,
    epochs: int = 1,
    delta: float = 1e-5,
    target_epsilon: float | None = None,
    weight_decay: float | None = None,
    sampling: Literal["poisson", "shuffle"] = "poisson",
    loss_fn: LossFn | None = None,
    backend: Backend = "ghost",
    rng: np.random.Generator | None = None,
    generator: torch.Generator | None = None,
    device: str | torch.device | None = None,
    progress: bool = False,
    on_epoch_end: Callable[[int, nn.Module], None] | None = None,
) -> TrainResult:
    """Train a copy of ``model`` with SGD, DPSGD, Naive or DPSGD-F.

    Each step draws a batch (Poisson sampling with rate ``q = batch_size / n`` by
    default), applies the method's rule (:func:`dpsgd_step`, :func:`naive_step`,
    :func:`dpsgd_f_step`), divides the noisy sum by the expected batch size
    ``batch_size``, adds ``weight_decay * w`` (data-independent L2 regularisation,
    outside the noisy sum) and takes a plain SGD step. An epoch is
    ``n // batch_size`` steps.

    Args:
        model: The model to train (copied; the input is not modified).
        x: Training inputs, ``(n, ...)``.
        y: Training targets, ``(n,)`` (class indices for the default loss).
        groups: Group label ``0..num_groups-1`` of each example, ``(n,)``.
        num_groups: The public number of groups ``K``; every group must occur.
        method: ``"sgd"``, ``"dpsgd"``, ``"naive"`` or ``"dpsgd_f"``.
        noise_multiplier: ``sigma_2`` (required unless ``method="sgd"``, where the
            privacy arguments are ignored).
        clip_norm: ``C_0`` (required unless ``method="sgd"``).
        count_noise_multiplier: ``sigma_1`` for Naive and DPSGD-F; default
            ``10 * noise_multiplier``, as in the paper.
        lr: Learning rate: a positive float, a function of the step ``t`` (from 0),
            ``"1/sqrt(T)"`` (constant ``1/sqrt(T)``, ``T`` the number of steps the
            run will take) or ``"1/sqrt(t)"`` (``1/sqrt(t+1)``).
        batch_size: Expected batch size ``b`` (exact for ``"shuffle"``), ``<= n``.
        epochs: Number of epochs.
        delta: Target delta of the reported epsilon.
        target_epsilon: Stop before the first step that would bring epsilon above
            this value (to compare methods at one budget).
        weight_decay: L2 coefficient, applied to every trainable parameter; default
            the model's ``weight_decay`` attribute if it has one, else 0.
        sampling: ``"poisson"`` (default; the accounting is exact) or
            ``"shuffle"`` (the paper's fixed-size batches of a shuffled epoch; the
            reported RDP epsilon is then only an approximation, since the subsampled
            Gaussian analysis assumes Poisson sampling).
        loss_fn: Per-sample loss ``loss_fn(output, target) -> (b,)``; default
            cross-entropy.
        backend: Per-sample gradient engine backend, ``"ghost"`` or
            ``"functorch"``.
        rng: A numpy Generator; or pass ``generator`` (exactly one of the two).
        generator: A torch Generator, the alternative to ``rng``.
        device: Where to train (default: the model's device).
        progress: Show a tqdm progress bar over the steps.
        on_epoch_end: Called as ``on_epoch_end(epoch, model)`` after every epoch
            (numbered from 1), including a last partial epoch ended by
            ``target_epsilon``: once per entry of the history. The model is the one
            being trained, in eval mode and inside ``torch.no_grad()``; train mode is
            restored afterwards. Use it to evaluate (e.g. per-group test accuracy
            after each epoch); it must not modify the model. Evaluating on held-out
            data costs no privacy.

    Returns:
        A :class:`TrainResult` with the trained model, epsilon, steps, per-group
        epsilons and the per-epoch history.

    Raises:
        ValueError: For an unknown method or sampling, inconsistent lengths,
            group labels outside ``0..num_groups-1``, a group without examples, a
            batch size giving a sample rate outside (0, 1], a non-positive noise
            multiplier or clip norm, a model without trainable parameters, or a
            ``target_epsilon`` that a single step exceeds.
        TypeError: For a wrong type, or not exactly one of ``rng``/``generator``.

    Privacy:
        ``(epsilon, delta)``-DP under add/remove-one neighbours (Poisson sampling),
        with epsilon from the RDP accountant over ``steps`` subsampled Gaussians. For
        DPSGD the multiplier is ``sigma_2``; for Naive and DPSGD-F, whose counts and
        gradient sum read the same batch, each step is one Gaussian of the joint
        multiplier ``(sigma_1**-2 + sigma_2**-2) ** -0.5`` (:func:`dpsgd_epsilon`).
        The group labels are treated as part of each example (private); ``K`` is
        public. ``group_epsilon`` repeats the paper's per-group statement
        ``(C_k / max_j C_j) * epsilon`` with the mean over steps of the ratio. It is
        *not* a DP guarantee: it assumes epsilon scales linearly with the per-step
        sensitivity of a group's examples, that averaging the per-step ratios is the
        same as composing them, and it ignores the count releases (whose cost is the
        same for every group). The history
        (losses, gradient norms) is computed on private data and is for diagnosis,
        not for release.

    References:
        xu2021removing (Alg. 1, 2, 3; Theorem 2 for the per-group statement);
        abadi2016deep; mironov2019sampled.
    """
    from tqdm import tqdm

    check_choice(method, METHODS, "method")
    check_choice(sampling, ("poisson", "shuffle"), "sampling")
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}.")
    num_groups = check_int(num_groups, "num_groups", minimum=1)
    epochs = check_int(epochs, "epochs", minimum=1)
    batch_size = check_int(batch_size, "batch_size")
    delta = check_delta(delta)
    x_t, y_t = _as_tensor(x, "x"), _as_tensor(y, "y")
    n = int(x_t.shape[0]) if x_t.dim() > 0 else 0
    if n == 0 or y_t.dim() == 0 or y_t.shape[0] != n:
        raise ValueError(
            f"x and y must hold the same positive number of examples, got "
            f"{tuple(x_t.shape)} and {tuple(y_t.shape)}."
        )
    g_t = _check_groups(groups, n, num_groups)
    if not 0 < batch_size <= n:
        raise ValueError(
            f"batch_size={batch_size} gives the sample rate q = batch_size / n = "
            f"{batch_size}/{n}, outside (0, 1]; pick 1 <= batch_size <= n."
        )
    private = method != "sgd"
    sigma2 = sigma1 = c0 = None
    if private:
        if noise_multiplier is None or clip_norm is None:
            raise ValueError(
                f"method={method!r} needs noise_multiplier and clip_norm, e.g. "
                "noise_multiplier=1.0, clip_norm=1.0."
            )
        sigma2 = check_positive(noise_multiplier, "noise_multiplier")
        c0 = check_positive(clip_norm, "clip_norm")
        if method in ("naive", "dpsgd_f"):
            sigma1 = (
                10.0 * sigma2
                if count_noise_multiplier is None
                else check_positive(count_noise_multiplier, "count_noise_multiplier")
            )
    elif target_epsilon is not None:
        raise ValueError(
            "method='sgd' is not private, so target_epsilon has no meaning; drop it."
        )
    if on_epoch_end is not None and not callable(on_epoch_end):
        raise TypeError(
            "on_epoch_end must be a function on_epoch_end(epoch, model) or None, got "
            f"{type(on_epoch_end).__name__}."
        )
    if weight_decay is None:
        weight_decay = float(getattr(model, "weight_decay", 0.0))
    if weight_decay < 0 or not math.isfinite(weight_decay):
        raise ValueError(f"weight_decay must be finite and >= 0, got {weight_decay!r}.")

    dev = torch.device(device) if device is not None else None
    if dev is None:
        first = next(model.parameters(), None)
        dev = first.device if first is not None else torch.device("cpu")
    net = copy.deepcopy(model).to(dev)
    net.train()
    clipper = PerSampleClipper(
        net, loss_fn or cross_entropy_per_sample, backend=backend
    )
    g_sample, g_count, g_noise = _stream_generators(rng, generator, dev)

    q = batch_size / n
    steps_per_epoch = n // batch_size
    planned = epochs * steps_per_epoch
    total = planned
    if target_epsilon is not None:
        total = max_steps_within(
            target_epsilon,
            method=method,
            sample_rate=q,
            noise_multiplier=sigma2,
            count_noise_multiplier=sigma1,
            delta=delta,
            limit=planned,
        )
        if total == 0:
            raise ValueError(
                f"a single step of {method} already spends more than "
                f"target_epsilon={target_epsilon}; raise the noise multipliers or "
                "lower the batch size."
            )
    lr_of = _resolve_lr(lr, total)

    def account(t: int) -> float:
        if not private or t == 0:
            return math.inf if not private else 0.0
        return dpsgd_epsilon(
            method=method,
            sample_rate=q,
            noise_multiplier=sigma2,
            count_noise_multiplier=sigma1,
            steps=t,
            delta=delta,
        )

    x_d, y_d, g_d = x_t.to(dev), y_t.to(dev), g_t.to(dev)
    params = clipper.parameters
    ratio_sum = torch.zeros(num_groups, dtype=torch.float64, device=dev)
    history: list[EpochStats] = []
    bar = tqdm(total=total, desc=method, disable=not progress, leave=False)
    step = 0
    try:
        for epoch in range(1, epochs + 1):
            if step >= total:
                break
            loss_sum = torch.zeros(num_groups, dtype=torch.float64, device=dev)
            norm_sum = torch.zeros_like(loss_sum)
            seen = torch.zeros_like(loss_sum)
            bound_sum = torch.zeros_like(loss_sum)
            weight_sum = torch.zeros_like(loss_sum)
            clipped = torch.zeros_like(loss_sum)
            epoch_steps = 0
            perm = (
                torch.randperm(n, generator=g_sample) if sampling == "shuffle" else None
            )
            for j in range(steps_per_epoch):
                if step >= total:
                    break
                if perm is None:  # Poisson: each example independently with rate q
                    chosen = torch.rand(n, generator=g_sample) < q
                    idx = chosen.nonzero().squeeze(1)
                else:
                    idx = perm[j * batch_size : (j + 1) * batch_size]
                idx = idx.to(dev)
                xb, yb, gb = x_d[idx], y_d[idx], g_d[idx]
                batch = clipper.compute(xb, yb)
                if method == "sgd":
                    ones = torch.ones_like(batch.norms)
                    sums = batch.weighted_sum(ones, set_grad=False)
                    denom = max(batch.batch_size, 1)
                    out = None
                else:
                    out = _private_step(
                        method,
                        batch,
                        gb,
                        num_groups,
                        batch_size,
                        sigma2,
                        sigma1,
                        c0,
                        g_noise,
                        g_count,
                    )
                    sums, denom = out.noisy_sum, batch_size
                lr_t = float(lr_of(step))
                with torch.no_grad():
                    for p, s in zip(params, sums, strict=True):
                        upd = s.view_as(p).to(p.dtype) / denom
                        if weight_decay:
                            upd = upd + weight_decay * p
                        p.sub_(lr_t * upd)
                # Diagnostics (private, not released).
                loss_sum.index_add_(0, gb, batch.losses.double())
                norm_sum.index_add_(0, gb, batch.norms.double())
                seen.index_add_(
                    0, gb, torch.ones_like(batch.norms, dtype=torch.float64)
                )
                if out is not None:
                    bound_sum += out.clip_bounds.double()
                    over = batch.norms > out.clip_bounds.to(batch.norms.dtype)[gb]
                    clipped.index_add_(0, gb, over.double())
                    ratio_sum += out.sensitivity_ratio.double()
                    if out.group_weights is not None:
                        weight_sum += out.group_weights.double()
                step += 1
                epoch_steps += 1
                bar.update(1)
            with np.errstate(invalid="ignore", divide="ignore"):
                seen_np = seen.cpu().numpy()
                mean_loss = loss_sum.cpu().numpy() / seen_np
                mean_norm = norm_sum.cpu().numpy() / seen_np
                clip_share = clipped.cpu().numpy() / seen_np
            history.append(
                EpochStats(
                    epoch=epoch,
                    steps=step,
                    epsilon=account(step),
                    group_loss=tuple(float(v) for v in mean_loss),
                    group_grad_norm=tuple(float(v) for v in mean_norm),
                    group_examples=tuple(int(v) for v in seen_np),
                    clip_bounds=(
                        tuple(
                            float(v) for v in (bound_sum / max(epoch_steps, 1)).tolist()
                        )
                        if private
                        else None
                    ),
                    group_weights=(
                        tuple(
                            float(v)
                            for v in (weight_sum / max(epoch_steps, 1)).tolist()
                        )
                        if method == "naive"
                        else None
                    ),
                    group_clip_fraction=(
                        tuple(float(v) for v in clip_share) if private else None
                    ),
                )
            )
            if on_epoch_end is not None:
                net.eval()
                try:
                    with torch.no_grad():
                        on_epoch_end(epoch, net)
                finally:
                    net.train()
    finally:
        bar.close()
        clipper.close()
    epsilon = account(step)
    group_eps = None
    if private:
        mean_ratio = (ratio_sum / max(step, 1)).cpu().numpy()
        group_eps = tuple(float(r * epsilon) for r in mean_ratio)
    return TrainResult(
        model=net,
        method=method,
        epsilon=epsilon,
        delta=delta,
        steps=step,
        sample_rate=q,
        sampling=sampling,
        noise_multiplier=sigma2,
        count_noise_multiplier=sigma1,
        clip_norm=c0,
        group_epsilon=group_eps,
        stopped_early=step < planned,
        history=tuple(history),
    )


def _private_step(
    method: str,
    batch: PerSampleGradients,
    groups: Tensor,
    num_groups: int,
    batch_size: int,
    sigma2: float,
    sigma1: float | None,
    c0: float,
    g_noise: torch.Generator,
    g_count: torch.Generator,
) -> StepOutput:
    if method == "dpsgd":
        return dpsgd_step(
            batch,
            groups,
            num_groups=num_groups,
            noise_multiplier=sigma2,
            clip_norm=c0,
            generator=g_noise,
        )
    if method == "naive":
        return naive_step(
            batch,
            groups,
            num_groups=num_groups,
            batch_size=batch_size,
            noise_multiplier=sigma2,
            count_noise_multiplier=sigma1,
            clip_norm=c0,
            generator=g_noise,
            count_generator=g_count,
        )
    return dpsgd_f_step(
        batch,
        groups,
        num_groups=num_groups,
        noise_multiplier=sigma2,
        count_noise_multiplier=sigma1,
        clip_norm=c0,
        generator=g_noise,
        count_generator=g_count,
    )


def sgd(
    model: nn.Module, x: Tensor, y: Tensor, groups: Tensor, **kwargs: Any
) -> TrainResult:
    """Train with non-private SGD: :func:`train` with ``method="sgd"``."""
    return train(model, x, y, groups, method="sgd", **kwargs)


def naive(
    model: nn.Module, x: Tensor, y: Tensor, groups: Tensor, **kwargs: Any
) -> TrainResult:
    """Train with Naive (Alg. 3): :func:`train` with ``method="naive"``."""
    return train(model, x, y, groups, method="naive", **kwargs)


def dpsgd_f(
    model: nn.Module, x: Tensor, y: Tensor, groups: Tensor, **kwargs: Any
) -> TrainResult:
    """Train with DPSGD-F (Alg. 2): :func:`train` with ``method="dpsgd_f"``."""
    return train(model, x, y, groups, method="dpsgd_f", **kwargs)


# --------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------


def predict(model: nn.Module, x: Tensor, *, batch_size: int = 4096) -> Tensor:
    """Return predicted class labels: argmax of the logits (one logit: ``> 0``).

    The model's training/eval mode is restored afterwards.
    """
    x_t = _as_tensor(x, "x")
    dev = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        preds = []
        with torch.no_grad():
            for start in range(0, x_t.shape[0], batch_size):
                out = model(x_t[start : start + batch_size].to(dev))
                if out.dim() == 1 or out.shape[-1] == 1:
                    preds.append((out.reshape(-1) > 0).long())
                else:
                    preds.append(out.argmax(dim=-1))
    finally:
        model.train(was_training)
    if not preds:
        return torch.zeros(0, dtype=torch.long)
    return torch.cat(preds).cpu()


def group_accuracy(
    model: nn.Module,
    x: Tensor,
    y: Tensor,
    groups: Tensor,
    *,
    num_groups: int,
    batch_size: int = 4096,
) -> np.ndarray:
    """Return the accuracy of ``model`` on each group (NaN for a group without data).

    Args:
        model: A classifier.
        x: Test inputs, ``(n, ...)``.
        y: Test labels, ``(n,)``.
        groups: Group labels ``0..num_groups-1``, ``(n,)``.
        num_groups: ``K``.
        batch_size: Evaluation batch size.

    Returns:
        Array of shape ``(K,)``.

    Raises:
        ValueError: If lengths differ or a label is outside ``0..num_groups-1``.
    """
    num_groups = check_int(num_groups, "num_groups", minimum=1)
    y_t = _as_tensor(y, "y").reshape(-1).cpu()
    g_t = _as_tensor(groups, "groups").reshape(-1).cpu().long()
    n = int(y_t.shape[0])
    if g_t.shape[0] != n or _as_tensor(x, "x").shape[0] != n:
        raise ValueError("x, y and groups must have the same number of examples.")
    if n and (int(g_t.min()) < 0 or int(g_t.max()) >= num_groups):
        raise ValueError(f"groups has labels outside 0..{num_groups - 1}.")
    correct = (predict(model, x, batch_size=batch_size) == y_t).double()
    hits = torch.zeros(num_groups, dtype=torch.float64).index_add_(0, g_t, correct)
    counts = torch.bincount(g_t, minlength=num_groups).double()
    with np.errstate(invalid="ignore", divide="ignore"):
        return (hits / counts).numpy()
