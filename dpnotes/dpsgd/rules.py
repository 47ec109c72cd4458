"""The rules of DPSGD-F (Xu, Du, Wu, KDD 2021): Algorithms 1-3, one step each.

Each algorithm is a per-step rule on top of the per-sample gradient engine
(:class:`~dpnotes.dpsgd.engine.PerSampleClipper`); :func:`dpnotes.dpsgd.loop.train`
runs them.

* DPSGD, Alg. 1 (abadi2016deep), :func:`dpsgd_step`: clip every per-sample gradient
  to ``C_0``, add ``N(0, (sigma_2 C_0)^2)`` to the sum, divide by the expected batch
  size.
* Naive, Alg. 3, :func:`naive_step`: release the group counts ``b_k`` of the batch
  with noise ``N(0, sigma_1^2)`` (:func:`release_counts`); weight group ``k`` by
  ``theta_k = (b/K) / b~_k`` (:func:`naive_weights`) so that every group contributes
  equally; clip to ``C_0``; noise ``sigma_2 C_0 max_k theta_k``.
* DPSGD-F, Alg. 2, :func:`dpsgd_f_step`: release, per group, the number ``m_k`` of
  examples whose gradient norm exceeds ``C_0`` and the number ``o_k`` of the others
  (:func:`clipped_counts`) with noise ``N(0, sigma_1^2)``;
  ``C_k = C_0 (1 + (m~_k / b~_k) / (m~ / b~))`` (:func:`dpsgd_f_clip_bounds`); clip
  each example to its group's ``C_k``; noise ``sigma_2 max_k C_k``.

Their privacy: :func:`step_noise_multipliers` (the releases of one step, with the
paper's count noise ``sigma_1 = COUNT_NOISE_FACTOR * sigma_2``) and
:func:`dpsgd_epsilon`.

Noisy counts can be zero or negative, especially for small groups with the paper's
``sigma_1 = 10 sigma_2``. The package post-processes them (no privacy cost) as follows:
every noisy count is first clipped at 0; Naive divides by ``max(b~_k, 1)`` (so
``theta_k <= b/K``); DPSGD-F uses the neutral ratio 1 -- i.e. ``C_k = 2 C_0``, the
value the rule gives a group whose clipped share equals the average -- whenever
``m~_k / b~_k`` or ``m~ / b~`` is undefined (a zero denominator).

The printed rule leaves that guard unstated, and a reader can take other steps of it
differently. :class:`DPSGDFRule` names each such choice as a switch, so that the
causes of a result can be tested one at a time: the guard on the noisy counts, the
denominator of the overall share (the noisy ``b~`` or the public ``b``), exact counts
(a non-private ablation), the gradient noise's scale (``max_k C_k``; the largest bound
of the batch's groups, or ``C_0``: both not private), and the reading of
:func:`fair_dp_clip_bounds` (an independent reimplementation's). The default rule is
the package's reading above; :attr:`DPSGDFRule.private` says whether a rule keeps
the guarantee :func:`dpsgd_epsilon` states.

References:
    xu2021removing; abadi2016deep; mironov2019sampled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor

from dpnotes.accounting import subsampled_gaussian_epsilon
from dpnotes.dpsgd.engine import PerSampleGradients
from dpnotes.validation import check_choice, check_positive

__all__ = [
    "COUNT_NOISE_FACTOR",
    "PRIVATE_METHODS",
    "DPSGDFRule",
    "StepOutput",
    "add_gaussian_noise",
    "clipped_counts",
    "dpsgd_epsilon",
    "dpsgd_f_clip_bounds",
    "dpsgd_f_step",
    "dpsgd_step",
    "fair_dp_clip_bounds",
    "largest_step_scales",
    "naive_step",
    "naive_weights",
    "release_counts",
    "rule_clip_bounds",
    "step_noise_multipliers",
]

#: The private methods, one per algorithm: DPSGD (Alg. 1), Naive (Alg. 3), DPSGD-F
#: (Alg. 2).
PRIVATE_METHODS: tuple[str, ...] = ("dpsgd", "naive", "dpsgd_f")

#: The paper's count noise: ``sigma_1 = COUNT_NOISE_FACTOR * sigma_2`` (section 6.1.3).
COUNT_NOISE_FACTOR: float = 10.0


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

    Examples:
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

    Examples:
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
# Readings of DPSGD-F's bound rule (the switches of the cause study)
# --------------------------------------------------------------------------------------

_SWITCHES: dict[str, tuple[str, ...]] = {
    "reading": ("paper", "fair_dp"),
    "guard": ("neutral", "clamp1", "clip"),
    "denominator": ("noisy", "public"),
    "counts": ("noisy", "exact"),
    "noise_scale": ("max_bound", "batch_max", "base_bound"),
}


@dataclass(frozen=True)
class DPSGDFRule:
    """One reading of DPSGD-F's bound rule (Alg. 2, lines 7-11): a switch per choice.

    The default is the package's reading (the module docstring). Each other value
    changes one step, so a result can be traced to the step that moves it:

    Attributes:
        reading: ``"paper"`` (``C_k = C_0 (1 + (m~_k / b~_k) / (m~ / b~))``, the
            printed formula) or ``"fair_dp"`` (:func:`fair_dp_clip_bounds`, the
            reading of the independent reimplementation of esipova2023disparate;
            it brings its own guard, so ``guard`` and ``denominator`` must keep
            their defaults).
        guard: What keeps the printed formula defined when noisy counts are zero or
            negative. ``"neutral"`` (ours): counts clipped at 0, and the neutral ratio
            1 where a denominator is 0. ``"clamp1"``: every noisy count clamped at 1,
            so every denominator is at least 2 and the ratio always defined.
            ``"clip"``: the formula on the raw noisy counts, its bounds clipped to
            ``[C_0, cap C_0]``.
        cap: The ``c`` of ``guard="clip"`` (required there, and above 1; else None).
        denominator: ``"noisy"`` (ours): the overall share is ``m~ / b~``, the noisy
            total; ``"public"``: ``m~ / b`` with the public expected batch size ``b``,
            as the paper prints it.
        counts: ``"noisy"``: released with ``N(0, sigma_1^2)``; ``"exact"``: no noise,
            a **non-private** ablation (the bounds, hence the noise scale, are then a
            function of the exact batch).
        noise_scale: The gradient noise is ``sigma_2`` times ``"max_bound"`` (ours and
            the paper's: ``max_k C_k`` over all ``K`` groups), ``"batch_max"`` (the
            largest bound of the groups present in the batch, as the reimplementation
            does: **not private**, the noise level reveals which groups the batch
            holds, and an added example of an absent group can exceed it) or
            ``"base_bound"`` (``C_0``: the slip of computing the scale once from the
            base bound; **not private**, the sensitivity is ``max_k C_k``).

    Raises:
        ValueError: For an unknown value of a switch, a ``cap`` that is missing,
            not finite or at most 1 with ``guard="clip"`` (the upper bound ``cap C_0``
            must lie above ``C_0``), a ``cap`` without ``guard="clip"``, or
            ``reading="fair_dp"`` with another guard or denominator.

    References:
        xu2021removing (Alg. 2); esipova2023disparate (its code's
        ``compute_clipping_bound_per_sample`` and ``DPSGDF_Optimizer``).

    Examples:
        >>> DPSGDFRule().private, DPSGDFRule(counts="exact").private
        (True, False)
        >>> DPSGDFRule(guard="clip", cap=3.0).label
        'guard=clip(cap=3)'
    """

    reading: str = "paper"
    guard: str = "neutral"
    cap: float | None = None
    denominator: str = "noisy"
    counts: str = "noisy"
    noise_scale: str = "max_bound"

    def __post_init__(self) -> None:
        for name, choices in _SWITCHES.items():
            check_choice(getattr(self, name), choices, f"DPSGDFRule.{name}")
        if self.guard == "clip":
            if self.cap is None:
                raise ValueError(
                    "guard='clip' clips the bounds to [C_0, cap * C_0]: pass cap > 1, "
                    "e.g. DPSGDFRule(guard='clip', cap=3.0)."
                )
            cap = check_positive(self.cap, "DPSGDFRule.cap")
            if cap <= 1.0:
                raise ValueError(
                    f"DPSGDFRule.cap={self.cap!r} puts the upper clamp cap * C_0 at or "
                    "below C_0; the bounds are clipped to [C_0, cap * C_0], so pass "
                    "cap > 1."
                )
            object.__setattr__(self, "cap", cap)
        elif self.cap is not None:
            raise ValueError(
                f"cap={self.cap!r} is the upper clamp of guard='clip' only; drop it "
                f"or set guard='clip' (got guard={self.guard!r})."
            )
        if self.reading == "fair_dp" and (
            self.guard != "neutral" or self.denominator != "noisy"
        ):
            raise ValueError(
                "reading='fair_dp' brings its own guard (counts truncated to integers "
                "at 0, an empty group's share 1) and divides by the mean of the "
                "groups' shares: leave guard and denominator at their defaults."
            )

    @property
    def private(self) -> bool:
        """Whether the rule keeps the guarantee :func:`dpsgd_epsilon` states."""
        return self.counts == "noisy" and self.noise_scale == "max_bound"

    @property
    def is_default(self) -> bool:
        """Whether this is the package's reading (every switch at its default)."""
        return self == DPSGDFRule()

    @property
    def label(self) -> str:
        """The switches that differ from the default, e.g. ``"counts=exact"``."""
        parts = []
        for name in _SWITCHES:
            value = getattr(self, name)
            if value != _SWITCHES[name][0]:
                if name == "guard" and value == "clip":
                    value = f"clip(cap={self.cap:g})"
                parts.append(f"{name}={value}")
        return ", ".join(parts) or "default"


def fair_dp_clip_bounds(noisy_counts: Tensor, *, clip_norm: float) -> Tensor:
    """Return the bounds of the independent reimplementation's reading of Alg. 2.

    ``C_k = C_0 (1 + r_k / (mean_j r_j + 1e-8))`` with ``r_k = m~_k / b~_k`` the
    group's noisy clipped share, where each noisy count is first truncated to an
    integer and floored at 0, and a group with ``b~_k = 0`` counts as share 1. The
    paper divides by the batch's overall share ``m~ / b~`` instead of the mean of the
    groups' shares; with balanced groups the two agree.

    Args:
        noisy_counts: ``(m~_1..m~_K, o~_1..o~_K)``, shape ``(2K,)``.
        clip_norm: The base bound ``C_0``.

    Returns:
        ``C``, shape ``(K,)``, each in ``[C_0, C_0 (1 + K)]``.

    References:
        esipova2023disparate (code: ``trainers/trainer.py``,
        ``compute_clipping_bound_per_sample``); xu2021removing (Alg. 2, line 9).

    Examples:
        >>> c = fair_dp_clip_bounds(torch.tensor([1.0, 4.0, 9.0, -0.5]), clip_norm=1.0)
        >>> [round(v, 4) for v in c.tolist()]  # shares 0.1 and 1, mean 0.55
        [1.1818, 2.8182]
    """
    k = noisy_counts.shape[0] // 2
    counts = torch.trunc(noisy_counts).clamp_min(0.0)
    m, o = counts[:k], counts[k:]
    b_k = m + o
    share = torch.where(b_k > 0, m / torch.where(b_k > 0, b_k, 1.0), 1.0)
    return clip_norm * (1.0 + share / (share.mean() + 1e-8))


def _guarded_clip_bounds(
    noisy_counts: Tensor, *, clip_norm: float, rule: DPSGDFRule, batch_size: int
) -> Tensor:
    """The printed formula under ``rule``'s guard and denominator (not the default)."""
    k = noisy_counts.shape[0] // 2
    if rule.guard == "neutral":
        counts = noisy_counts.clamp_min(0.0)
    elif rule.guard == "clamp1":
        counts = noisy_counts.clamp_min(1.0)
    else:  # "clip": the raw noisy counts
        counts = noisy_counts
    m, o = counts[:k], counts[k:]
    b_k = m + o
    m_all = m.sum()
    b_all = b_k.sum() if rule.denominator == "noisy" else counts.new_tensor(batch_size)
    if rule.guard == "clip":
        bounds = clip_norm * (1.0 + (m / b_k) / (m_all / b_all))
        bounds = torch.nan_to_num(bounds, nan=clip_norm)
        return bounds.clamp(clip_norm, rule.cap * clip_norm)
    defined = (b_k > 0) & (m_all > 0) & (b_all > 0)
    share = torch.where(b_k > 0, m / torch.where(b_k > 0, b_k, 1.0), 0.0)
    overall = m_all / torch.where(b_all > 0, b_all, 1.0)
    ratio = torch.where(defined, share / torch.where(overall > 0, overall, 1.0), 1.0)
    return clip_norm * (1.0 + ratio)


def rule_clip_bounds(
    noisy_counts: Tensor,
    *,
    clip_norm: float,
    rule: DPSGDFRule | None = None,
    batch_size: int | None = None,
) -> Tensor:
    """Return the bounds ``C_k`` of ``rule`` (default: :func:`dpsgd_f_clip_bounds`).

    Args:
        noisy_counts: ``(m~_1..m~_K, o~_1..o~_K)``, shape ``(2K,)``.
        clip_norm: ``C_0``.
        rule: The reading (:class:`DPSGDFRule`; None for the default).
        batch_size: The public expected batch size ``b`` (needed by
            ``denominator="public"``).

    Returns:
        ``C``, shape ``(K,)``.

    Examples:
        >>> counts = torch.tensor([1.0, 4.0, 9.0, 0.0])
        >>> [round(v, 4) for v in rule_clip_bounds(counts, clip_norm=1.0,
        ...     rule=DPSGDFRule(denominator="public"), batch_size=28).tolist()]
        [1.56, 6.6]
    """
    if rule is None or (
        rule.reading == "paper"
        and rule.guard == "neutral"
        and rule.denominator == "noisy"
    ):
        return dpsgd_f_clip_bounds(noisy_counts, clip_norm=clip_norm)
    if rule.reading == "fair_dp":
        return fair_dp_clip_bounds(noisy_counts, clip_norm=clip_norm)
    if rule.denominator == "public" and batch_size is None:
        raise ValueError("denominator='public' needs the public batch_size b.")
    return _guarded_clip_bounds(
        noisy_counts, clip_norm=clip_norm, rule=rule, batch_size=int(batch_size or 0)
    )


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


def add_gaussian_noise(
    sums: Sequence[Tensor], *, std: float, generator: torch.Generator
) -> list[Tensor]:
    """Return each tensor plus independent ``N(0, std**2)`` noise per coordinate.

    Args:
        sums: One tensor per trainable parameter (the clipped gradient sum).
        std: The noise standard deviation (the multiplier times the sensitivity).
        generator: The source of the noise (on the tensors' device).

    Returns:
        The noisy tensors, in the order of ``sums``.

    Privacy:
        The Gaussian mechanism: with L2 sensitivity ``s``, ``s**2 / (2 std**2)``-zCDP.
    """
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
        noisy_sum=add_gaussian_noise(sums, std=std, generator=generator),
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
        noisy_sum=add_gaussian_noise(sums, std=std, generator=generator),
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
    rule: DPSGDFRule | None = None,
    batch_size: int | None = None,
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
        rule: The reading of the bound rule (:class:`DPSGDFRule`; None or the
            default for the package's). A rule whose ``private`` is False voids the
            guarantee below.
        batch_size: The public expected batch size ``b`` (for
            ``rule.denominator="public"``).

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
    if rule is not None and not rule.is_default:
        return _rule_step(
            batch,
            groups,
            counts,
            noise_multiplier=noise_multiplier,
            count_noise_multiplier=count_noise_multiplier,
            clip_norm=clip_norm,
            generator=generator,
            count_generator=count_generator,
            rule=rule,
            batch_size=batch_size,
        )
    noisy = release_counts(
        counts, noise_multiplier=count_noise_multiplier, generator=count_generator
    )
    bounds = dpsgd_f_clip_bounds(noisy, clip_norm=clip_norm)
    std = noise_multiplier * float(bounds.max())
    sums = batch.clipped_sum(bounds.to(batch.norms.dtype)[groups], set_grad=False)
    return StepOutput(
        noisy_sum=add_gaussian_noise(sums, std=std, generator=generator),
        noise_std=float(std),
        clip_bounds=bounds,
        group_weights=None,
        sensitivity_ratio=bounds / bounds.max(),
    )


def _rule_step(
    batch: PerSampleGradients,
    groups: Tensor,
    counts: Tensor,
    *,
    noise_multiplier: float,
    count_noise_multiplier: float,
    clip_norm: float,
    generator: torch.Generator,
    count_generator: torch.Generator,
    rule: DPSGDFRule,
    batch_size: int | None,
) -> StepOutput:
    # DPSGD-F under a reading other than the default: the same draws from the same
    # streams (the count noise is drawn even for exact counts, so that every reading
    # sees the same gradient noise), another bound rule or noise scale.
    noisy = release_counts(
        counts, noise_multiplier=count_noise_multiplier, generator=count_generator
    )
    if rule.counts == "exact":
        noisy = counts.to(torch.float64)
    bounds = rule_clip_bounds(
        noisy, clip_norm=clip_norm, rule=rule, batch_size=batch_size
    )
    if rule.noise_scale == "base_bound":
        scale = clip_norm
    elif rule.noise_scale == "batch_max" and groups.numel() > 0:
        scale = float(bounds[groups.unique()].max())
    else:
        scale = float(bounds.max())
    std = noise_multiplier * scale
    sums = batch.clipped_sum(bounds.to(batch.norms.dtype)[groups], set_grad=False)
    return StepOutput(
        noisy_sum=add_gaussian_noise(sums, std=std, generator=generator),
        noise_std=float(std),
        clip_bounds=bounds,
        group_weights=None,
        sensitivity_ratio=bounds / bounds.max(),
    )


def largest_step_scales(
    method: str,
    *,
    noise_multiplier: float,
    clip_norm: float,
    batch_size: int,
    num_groups: int,
    rule: DPSGDFRule | None = None,
) -> tuple[float, float]:
    """Return the largest clip bound and noise std a step of ``method`` can use.

    A step casts its clip bounds to the dtype of the model and adds noise of that std
    to its gradient sum, so both must be finite there (at most
    ``torch.finfo(dtype).max``); :func:`~dpnotes.dpsgd.train` checks them before the
    first step. From the public settings alone (``sigma_2``, ``C_0``, ``b``, ``K``):

    * DPSGD: bound ``C_0``, std ``sigma_2 C_0``.
    * Naive: bound ``C_0``, std ``sigma_2 C_0 b / K``: ``theta_k = (b / K) /
      max(b~_k, 1)`` reaches ``b / K`` whenever a noisy count falls to 1 or below,
      which has positive probability at every step.
    * DPSGD-F with ``guard="clip"``: bound ``cap C_0`` (reached with positive
      probability: the raw noisy counts can put a ratio above ``cap - 1``).
    * DPSGD-F with ``reading="fair_dp"``: bound ``C_0 (1 + K)``, the supremum
      (``r_k / (mean_j r_j + 1e-8) < K``; one group with share 1, the others 0).
    * DPSGD-F otherwise (the package's default reading, ``guard="clamp1"``, exact
      counts, the public denominator) has **no finite largest bound**:
      ``C_k <= C_0 (1 + b~ / b~_k)`` with a noisy ``b~_k`` that can come arbitrarily
      close to 0. What is certain is returned instead: with the noisy denominator
      ``m~ / b~`` is a mean of the groups' shares weighted by ``b~_k``, so the
      largest ratio is at least 1 (an undefined one is 1) and every step's largest
      bound is at least ``2 C_0``; with the public denominator, at least ``C_0``.
      A run past these passes the check and is stopped by the divergence check
      of :func:`~dpnotes.dpsgd.train` if a step's noise overflows.
    * The std is ``sigma_2`` times the bound, except ``noise_scale="base_bound"``
      (``sigma_2 C_0``) and ``"batch_max"`` (the largest bound of the groups in the
      batch: the same maximum where the rule has one, else only ``C_0`` is
      certain).

    Args:
        method: ``"dpsgd"``, ``"naive"`` or ``"dpsgd_f"``.
        noise_multiplier: ``sigma_2``.
        clip_norm: ``C_0``.
        batch_size: The expected batch size ``b`` (public).
        num_groups: ``K``.
        rule: DPSGD-F's reading (None for the default).

    Returns:
        ``(bound, std)``, each the largest value a step can use where the rule has
        one, else the least value its largest is certain to reach.

    Examples:
        >>> largest_step_scales("naive", noise_multiplier=1.0, clip_norm=1.0,
        ...                     batch_size=256, num_groups=2)
        (1.0, 128.0)
        >>> largest_step_scales("dpsgd_f", noise_multiplier=1.0, clip_norm=1.0,
        ...                     batch_size=256, num_groups=2,
        ...                     rule=DPSGDFRule(guard="clip", cap=3.0))
        (3.0, 3.0)
    """
    check_choice(method, PRIVATE_METHODS, "method")
    if method == "dpsgd":
        return clip_norm, noise_multiplier * clip_norm
    if method == "naive":
        return clip_norm, noise_multiplier * clip_norm * (batch_size / num_groups)
    rule = rule or DPSGDFRule()
    if rule.reading == "fair_dp":
        factor, is_max = 1.0 + num_groups, True
    elif rule.guard == "clip":
        factor, is_max = rule.cap, True
    elif rule.denominator == "noisy":
        factor, is_max = 2.0, False
    else:
        factor, is_max = 1.0, False
    bound = factor * clip_norm
    if rule.noise_scale == "base_bound" or (
        rule.noise_scale == "batch_max" and not is_max
    ):
        return bound, noise_multiplier * clip_norm
    return bound, noise_multiplier * bound


# --------------------------------------------------------------------------------------
# Their privacy
# --------------------------------------------------------------------------------------


def step_noise_multipliers(
    method: str,
    *,
    noise_multiplier: float,
    count_noise_multiplier: float | None = None,
    count_noise_factor: float | None = None,
) -> tuple[float, ...]:
    """Return the noise multipliers of the releases one step of ``method`` makes.

    DPSGD releases the gradient sum only: ``(sigma_2,)``. Naive and DPSGD-F also
    release their counts (sensitivity 1): ``(sigma_2, sigma_1)``, with ``sigma_1``
    given, or ``count_noise_factor * sigma_2`` (default the paper's
    :data:`COUNT_NOISE_FACTOR`, 10).

    Args:
        method: ``"dpsgd"``, ``"naive"`` or ``"dpsgd_f"``.
        noise_multiplier: ``sigma_2``.
        count_noise_multiplier: ``sigma_1`` (Naive and DPSGD-F; ignored for DPSGD).
        count_noise_factor: ``sigma_1 / sigma_2`` when ``sigma_1`` is not given.

    Returns:
        The multipliers, gradient first.

    Raises:
        ValueError: For an unknown method, or both ``count_noise_multiplier`` and
            ``count_noise_factor``.

    References:
        xu2021removing (section 6.1.3: ``sigma_1 = 10 sigma_2``).

    Examples:
        >>> step_noise_multipliers("dpsgd_f", noise_multiplier=0.8)
        (0.8, 8.0)
    """
    check_choice(method, PRIVATE_METHODS, "method")
    if method == "dpsgd":
        return (noise_multiplier,)
    if count_noise_multiplier is not None:
        if count_noise_factor is not None:
            raise ValueError(
                "pass count_noise_multiplier (sigma_1) or count_noise_factor "
                "(sigma_1 / sigma_2), not both."
            )
        return (noise_multiplier, count_noise_multiplier)
    factor = COUNT_NOISE_FACTOR if count_noise_factor is None else count_noise_factor
    return (noise_multiplier, factor * noise_multiplier)


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

    * ``"improved"`` (default; what :func:`dpnotes.dpsgd.loop.train` reports and
      stops on): opacus' ``get_privacy_spent``, i.e.
      ``RDP(alpha) + log((alpha - 1) / alpha) - (log delta + log alpha) / (alpha - 1)``
      (balle2020hypothesis, Thm. 21),
      via :func:`dpnotes.accounting.rdp_epsilon`.
      :func:`dpnotes.accounting.subsampled_gaussian_epsilon` computes (and caches)
      both.
    * ``"classic"``: ``RDP(alpha) + log(1 / delta) / (alpha - 1)``
      (mironov2017renyi, Prop. 3), the conversion of TF Privacy in 2020 and hence
      the one behind the epsilons the DPSGD-F paper reports. It is never smaller.

    Args:
        method: ``"dpsgd"``, ``"naive"`` or ``"dpsgd_f"``.
        sample_rate: Poisson rate ``q`` in (0, 1].
        noise_multiplier: ``sigma_2``.
        count_noise_multiplier: ``sigma_1`` (Naive and DPSGD-F); default
            ``COUNT_NOISE_FACTOR * noise_multiplier`` (:func:`step_noise_multipliers`).
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

    Examples:
        >>> round(dpsgd_epsilon(method="dpsgd", sample_rate=256 / 36178,
        ...       noise_multiplier=1.0, steps=2826, delta=1e-6,
        ...       conversion="classic"), 2)
        3.08
    """
    check_choice(method, PRIVATE_METHODS, "method")
    check_choice(conversion, ("improved", "classic"), "conversion")
    sigmas = step_noise_multipliers(
        method,
        noise_multiplier=noise_multiplier,
        count_noise_multiplier=count_noise_multiplier,
    )
    return subsampled_gaussian_epsilon(
        sample_rate=sample_rate,
        noise_multipliers=sigmas,
        steps=steps,
        delta=delta,
        conversion=conversion,
    )
