"""Training with SGD, DPSGD, Naive or DPSGD-F: one loop around the rules.

:func:`train` checks its arguments once, plans the number of steps (a
``target_epsilon`` stops a run early: :func:`dpnotes.accounting.max_steps_within`),
then runs epochs of steps. Each step draws a batch, computes per-sample gradients (the
engine), applies the method's rule (:mod:`dpnotes.dpsgd.rules`) and takes a plain SGD
step; per-group diagnostics are summed along the way. :func:`sgd`, :func:`naive` and
:func:`dpsgd_f` are :func:`train` with the method fixed.

References:
    xu2021removing; abadi2016deep.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor, nn

from dpnotes.accounting import max_steps_within
from dpnotes.dpsgd.engine import (
    Backend,
    LossFn,
    PerSampleClipper,
    PerSampleGradients,
    as_tensor,
    cross_entropy_per_sample,
)
from dpnotes.dpsgd.rules import (
    PRIVATE_METHODS,
    DPSGDFRule,
    StepOutput,
    dpsgd_epsilon,
    dpsgd_f_step,
    dpsgd_step,
    largest_step_scales,
    naive_step,
    step_noise_multipliers,
)
from dpnotes.dpsgd.settings import (
    LR_SCHEDULES,
    Privacy,
    Schedule,
    from_keywords,
)
from dpnotes.rng import check_rng
from dpnotes.validation import (
    check_choice,
    check_int,
    check_positive,
)

__all__ = [
    "METHODS",
    "EpochStats",
    "TrainResult",
    "dpsgd_f",
    "naive",
    "sgd",
    "train",
]

Method = Literal["sgd", "dpsgd", "naive", "dpsgd_f"]
#: The methods :func:`train` runs: non-private SGD and the private methods.
METHODS: tuple[str, ...] = ("sgd", *PRIVATE_METHODS)


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
        epsilon_classic: The same with the classic RDP conversion (the paper's; see
            :func:`~dpnotes.dpsgd.rules.dpsgd_epsilon`).
        group_loss: Mean per-sample loss of each group.
        group_grad_norm: Mean unclipped per-sample gradient norm of each group.
        group_examples: Examples of each group drawn in the epoch.
        clip_bounds: Mean over the epoch's steps of each group's clipping bound
            (``C_k`` for DPSGD-F, ``C_0`` for DPSGD and Naive); ``None`` for SGD.
        group_weights: Naive only: mean over the steps of each ``theta_k``.
        group_clip_fraction: Share of each group's drawn examples whose gradient norm
            exceeded the bound it was clipped to in its step; ``None`` for SGD.
        sensitivity_ratio: Mean over the epoch's steps of each group's sensitivity
            over the step's largest (``C_k / max_j C_j`` for DPSGD-F,
            ``theta_k / max_j theta_j`` for Naive, 1 for DPSGD); ``None`` for SGD.
        step_share: Mean over the epoch's steps of each group's share of the step's
            clipped gradient mass: the sum of its examples' clipped norms
            ``min(|g_i|, C_k)`` (times ``theta_k`` for Naive) over the batch's;
            ``None`` for SGD.
        largest_bound: The largest bound any step of the epoch used (``max_k C_k``);
            ``None`` for SGD.
    """

    epoch: int
    steps: int
    epsilon: float
    epsilon_classic: float
    group_loss: tuple[float, ...]
    group_grad_norm: tuple[float, ...]
    group_examples: tuple[int, ...]
    clip_bounds: tuple[float, ...] | None
    group_weights: tuple[float, ...] | None = None
    group_clip_fraction: tuple[float, ...] | None = None
    sensitivity_ratio: tuple[float, ...] | None = None
    step_share: tuple[float, ...] | None = None
    largest_bound: float | None = None


@dataclass(frozen=True)
class TrainResult:
    """The outcome of :func:`train`.

    Attributes:
        model: The trained model (a copy; the input model is left unchanged).
        method: ``"sgd"``, ``"dpsgd"``, ``"naive"`` or ``"dpsgd_f"``.
        epsilon: Privacy spent at ``delta`` (``inf`` for SGD, and for DPSGD-F under a
            rule that is not private: :attr:`~dpnotes.dpsgd.rules.DPSGDFRule.private`).
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
        rule: DPSGD-F's reading of the bound rule
            (:class:`~dpnotes.dpsgd.rules.DPSGDFRule`; None for the default and for
            the other methods).
        largest_bound: The largest bound any step used (``None`` for SGD).
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
    rule: DPSGDFRule | None = None
    largest_bound: float | None = None

    @property
    def private(self) -> bool:
        """Whether :attr:`epsilon` is a guarantee (not SGD, not a non-private rule)."""
        return self.method != "sgd" and (self.rule is None or self.rule.private)

    @property
    def epsilon_classic(self) -> float:
        """Epsilon of the same run with the classic RDP conversion (mironov2017renyi).

        The conversion the DPSGD-F paper's reported epsilons used (TF Privacy, 2020);
        see :func:`dpsgd_epsilon`. ``inf`` for SGD, 0 when no step was taken.
        """
        if not self.private:
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
                        "sensitivity_ratio": (
                            h.sensitivity_ratio[k]
                            if h.sensitivity_ratio is not None
                            else np.nan
                        ),
                        "step_share": (
                            h.step_share[k] if h.step_share is not None else np.nan
                        ),
                    }
                )
        return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------
# Argument checks (the one place train validates its input)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Run:
    """The checked arguments of one training run."""

    method: str
    x: Tensor
    y: Tensor
    groups: Tensor
    num_groups: int
    batch_size: int
    epochs: int
    steps: int | None
    delta: float
    sigma2: float | None
    sigma1: float | None
    c0: float | None
    weight_decay: float
    momentum: float
    sampling: str
    target_epsilon: float | None
    on_epoch_end: Callable[[int, nn.Module], None] | None
    rule: DPSGDFRule | None = None
    privacy: Privacy | None = None  # the records the run was made from
    schedule: Schedule | None = None

    @property
    def private(self) -> bool:
        return self.method != "sgd"

    @property
    def accounted(self) -> bool:
        """Whether the accountant's epsilon is a guarantee for this run."""
        return self.private and (self.rule is None or self.rule.private)

    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    @property
    def sample_rate(self) -> float:
        return self.batch_size / self.n

    @property
    def steps_per_epoch(self) -> int:
        return self.n // self.batch_size

    @property
    def planned_steps(self) -> int:
        if self.steps is not None:
            return self.steps
        return self.epochs * self.steps_per_epoch


def _check_arguments(
    model: Any,
    x: Any,
    y: Any,
    groups: Any,
    *,
    num_groups: Any,
    method: str,
    privacy: Privacy | None,
    schedule: Schedule,
    on_epoch_end: Any,
    class_labels: bool,
    rule: Any = None,
) -> _Run:
    """Check the data against the settings records; see :func:`train` for the rules.

    The records checked their own fields when they were made (:mod:`.settings`); what
    is left needs the model, the data or several records at once.
    """
    target_epsilon = privacy.target_epsilon if privacy is not None else None
    rule = _check_rule(rule, method, target_epsilon)
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}.")
    num_groups = check_int(num_groups, "num_groups", minimum=1)
    steps = schedule.steps
    epochs = 1 if schedule.epochs is None and steps is None else schedule.epochs
    batch_size = schedule.batch_size
    x_t = _check_inputs(model, x)
    n = int(x_t.shape[0])
    y_t = _check_targets(y, n, class_labels)
    g_t = _check_groups(groups, n, num_groups)
    if not 0 < batch_size <= n:
        raise ValueError(
            f"batch_size={batch_size} gives the sample rate q = batch_size / n = "
            f"{batch_size}/{n}, outside (0, 1]; pick 1 <= batch_size <= n."
        )
    if steps is not None:
        epochs = -(-steps // (n // batch_size))
    sigma2 = sigma1 = c0 = None
    if privacy is not None:
        sigma2, c0 = privacy.noise_multiplier, privacy.clip_norm
        if method in ("naive", "dpsgd_f"):
            _, sigma1 = step_noise_multipliers(
                method,
                noise_multiplier=sigma2,
                count_noise_multiplier=privacy.count_noise_multiplier,
            )
    if privacy is not None:
        _check_step_scales(method, privacy, batch_size, num_groups, rule, x_t.dtype)
    if on_epoch_end is not None and not callable(on_epoch_end):
        raise TypeError(
            "on_epoch_end must be a function on_epoch_end(epoch, model) or None, got "
            f"{type(on_epoch_end).__name__}."
        )
    weight_decay = schedule.weight_decay
    if weight_decay is None:
        weight_decay = float(getattr(model, "weight_decay", 0.0))
        if weight_decay < 0 or not math.isfinite(weight_decay):
            raise ValueError(
                f"the model's weight_decay attribute must be finite and >= 0, got "
                f"{weight_decay!r}."
            )
    return _Run(
        method=method,
        x=x_t,
        y=y_t,
        groups=g_t,
        num_groups=num_groups,
        batch_size=batch_size,
        epochs=epochs,
        steps=steps,
        delta=privacy.delta if privacy is not None else Privacy.delta,
        sigma2=sigma2,
        sigma1=sigma1,
        c0=c0,
        weight_decay=weight_decay,
        momentum=schedule.momentum,
        sampling=schedule.sampling,
        target_epsilon=target_epsilon,
        on_epoch_end=on_epoch_end,
        rule=rule,
        privacy=privacy,
        schedule=schedule,
    )


def _privacy_of(method: str, privacy: Any, **keywords: Any) -> Privacy | None:
    """The run's :class:`Privacy` (``None`` for SGD), from the record or keywords."""
    if method == "sgd":
        asked = keywords["target_epsilon"] is not None or (
            isinstance(privacy, Privacy) and privacy.target_epsilon is not None
        )
        if asked:
            raise ValueError(
                "method='sgd' is not private, so target_epsilon has no meaning; "
                "drop it."
            )
        return None  # SGD releases nothing noisy: its privacy settings are ignored
    if privacy is None and (
        keywords["noise_multiplier"] is None or keywords["clip_norm"] is None
    ):
        raise ValueError(
            f"method={method!r} needs noise_multiplier and clip_norm, e.g. "
            "privacy=Privacy(noise_multiplier=1.0, clip_norm=1.0) (or the keywords "
            "noise_multiplier=1.0, clip_norm=1.0)."
        )
    return from_keywords(Privacy, privacy, "privacy", **keywords)


def _check_rule(rule: Any, method: Any, target_epsilon: Any) -> DPSGDFRule | None:
    if rule is None:
        return None
    if not isinstance(rule, DPSGDFRule):
        raise TypeError(
            "rule must be a dpnotes.dpsgd.rules.DPSGDFRule (e.g. "
            f"DPSGDFRule(counts='exact')) or None, got {type(rule).__name__}."
        )
    if method != "dpsgd_f":
        raise ValueError(
            f"rule={rule.label!r} is a reading of DPSGD-F's bound rule; it has no "
            f"meaning for method={method!r}: drop it or use method='dpsgd_f'."
        )
    if not rule.private and target_epsilon is not None:
        raise ValueError(
            f"rule={rule.label!r} is not private (DPSGDFRule.private is False), so it "
            f"spends no finite epsilon to stop at: drop target_epsilon="
            f"{target_epsilon!r} and train for a fixed number of epochs or steps."
        )
    return None if rule.is_default else rule


def _check_step_scales(
    method: str,
    privacy: Privacy,
    batch_size: int,
    num_groups: int,
    rule: DPSGDFRule | None,
    dtype: torch.dtype,
) -> None:
    """Refuse a clip bound or noise std that the model's dtype cannot hold.

    :class:`Privacy` already bounds ``C_0`` and ``sigma_2 C_0`` by float32's largest
    value; Naive's and DPSGD-F's steps can scale them up (by ``b / K``, ``cap``,
    ``1 + K``, at least 2: :func:`~dpnotes.dpsgd.rules.largest_step_scales`).
    """
    bound, std = largest_step_scales(
        method,
        noise_multiplier=privacy.noise_multiplier,
        clip_norm=privacy.clip_norm,
        batch_size=batch_size,
        num_groups=num_groups,
        rule=rule,
    )
    limit = float(torch.finfo(dtype).max)
    if max(bound, std) > limit:
        raise ValueError(
            f"method={method!r} with clip_norm={privacy.clip_norm:g} and "
            f"noise_multiplier={privacy.noise_multiplier:g} can use a clip bound of "
            f"{bound:.4g} and a noise std of {std:.4g} in a step (see "
            f"dpnotes.dpsgd.rules.largest_step_scales), above the largest {dtype} "
            f"value {limit:.4g}: the model would turn into NaN. Lower clip_norm (or "
            "noise_multiplier), or train a float64 model."
        )


def _model_dtype(model: nn.Module) -> torch.dtype:
    first = next((p for p in model.parameters() if p.requires_grad), None)
    if first is None:
        raise ValueError(
            "the model has no trainable parameters; nothing would be trained."
        )
    return first.dtype


def _nonfinite_rows(t: Tensor) -> list[int]:
    flat = t.reshape(t.shape[0], -1) if t.dim() > 1 else t.reshape(-1, 1)
    bad = ~torch.isfinite(flat).all(dim=1)
    return bad.nonzero().squeeze(1)[:5].tolist()


def _check_inputs(model: nn.Module, x: Any) -> Tensor:
    """Return ``x`` as a tensor of the model's dtype, after the input checks.

    A non-finite input would make every parameter NaN after one step while the run
    still reports its epsilon, so it is refused here, before any step.
    """
    x_t = as_tensor(x, "x")
    if x_t.dim() == 0 or x_t.shape[0] == 0:
        raise ValueError(
            f"x must hold a positive number of examples along its first axis, got "
            f"shape {tuple(x_t.shape)}."
        )
    if not x_t.is_floating_point():
        raise TypeError(
            f"x must hold floating-point features, got dtype {x_t.dtype}; convert "
            "first, e.g. x.float() (and divide pixel values 0..255 by 255)."
        )
    dtype = _model_dtype(model)
    if x_t.dtype != dtype:
        # A float64 array for a float32 model (numpy's default) is converted, as
        # the model's first layer would otherwise refuse it.
        x_t = x_t.to(dtype)
    bad = _nonfinite_rows(x_t)
    if bad:
        raise ValueError(
            f"x holds non-finite values (NaN or inf), first in rows {bad}; one such "
            "record would turn the whole model into NaN. Drop or impute those rows "
            "(with a rule that does not look at the other records) before training."
        )
    return x_t


def _check_targets(y: Any, n: int, class_labels: bool) -> Tensor:
    """Return ``y`` as a tensor; class indices must be integers (range: :func:`_probe`).

    ``class_labels``: the default cross-entropy loss, which takes class indices.
    """
    y_t = as_tensor(y, "y")
    if y_t.dim() == 0 or y_t.shape[0] != n:
        raise ValueError(
            f"x and y must hold the same positive number of examples, got {n} "
            f"examples in x and y of shape {tuple(y_t.shape)}."
        )
    if class_labels:
        if y_t.is_floating_point() or y_t.is_complex() or y_t.dtype == torch.bool:
            raise TypeError(
                f"y must hold integer class indices 0..C-1 for the default "
                f"cross-entropy loss, got dtype {y_t.dtype}; pass y.long() after "
                "mapping the labels of the public class list to integers."
            )
        return y_t.long()
    if y_t.is_floating_point() and _nonfinite_rows(y_t):
        raise ValueError(
            f"y holds non-finite values, first in rows {_nonfinite_rows(y_t)}; drop "
            "or impute them before training."
        )
    return y_t


def _probe(net: nn.Module, run: _Run, device: torch.device, class_labels: bool) -> None:
    """Run the model on two examples to check the input width and the label range.

    The output is looked at only for its shape and never released.
    """
    was_training = net.training
    net.eval()
    try:
        with torch.no_grad():
            out = net(run.x[:2].to(device))
    except RuntimeError as err:
        raise ValueError(
            f"the model cannot take inputs of shape {tuple(run.x.shape[1:])} (one "
            f"example); check the feature width against the model's first layer "
            f"({err})."
        ) from err
    finally:
        net.train(was_training)
    if not class_labels:
        return
    if out.dim() != 2:
        raise ValueError(
            f"the default cross-entropy loss needs outputs of shape (batch, classes), "
            f"got {tuple(out.shape)}; pass loss_fn for other outputs."
        )
    classes = int(out.shape[1])
    bad = (run.y < 0) | (run.y >= classes)
    if bool(bad.any()):
        unknown = sorted(set(run.y[bad].tolist()))[:10]
        raise ValueError(
            f"y contains labels {unknown} outside 0..{classes - 1}, the classes of "
            f"the model's {classes} outputs; map the labels of the public class list "
            "to 0..C-1, or build the model with one output per class."
        )


def _probe_loss(
    net: nn.Module, run: _Run, device: torch.device, loss_fn: LossFn
) -> None:
    """Refuse a loss that is not finite on a probe built without the private data.

    The engine gives an example whose gradient norm is not finite weight 0
    (:func:`~dpnotes.dpsgd.engine.clip_factors`), so a loss that is NaN for every
    example would train on noise alone and still report its epsilon. Looking at the
    private examples' losses would make the run's outcome depend on them; the probe
    is data-free instead: one all-zeros input of the (public) feature shape, and
    target 0 (the first class; zeros of the targets' trailing shape and dtype for a
    custom loss), through the model as handed in (chosen before training, as
    public as the architecture). A model whose output on the probe is not finite
    says nothing about the loss, and the check is skipped. Eval mode and no
    gradients: no random draw, no change to the model, so a run's numbers are
    those of a run without the probe.
    """
    x0 = torch.zeros((1, *run.x.shape[1:]), dtype=run.x.dtype, device=device)
    y0 = torch.zeros((1, *run.y.shape[1:]), dtype=run.y.dtype, device=device)
    was_training = net.training
    net.eval()
    try:
        with torch.no_grad():
            out = net(x0)
            if not bool(torch.isfinite(out).all()):
                return
            loss = loss_fn(out, y0)
    finally:
        net.train(was_training)
    if not bool(torch.isfinite(torch.as_tensor(loss)).all()):
        raise ValueError(
            f"loss_fn returns {torch.as_tensor(loss).reshape(-1)[:3].tolist()} (not "
            "finite) on a data-free probe: the model's output for an all-zeros "
            "input, with target 0. Training gives every example whose loss or "
            "gradient is not finite weight 0, so such a loss would train on noise "
            "alone. Make the loss finite (e.g. clamp before a log, avoid 0 / 0)."
        )


def _check_groups(groups: Any, n: int, num_groups: int) -> Tensor:
    g = as_tensor(groups, "groups")
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
    """Return the learning rate of each step, checked for all steps before the first.

    A schedule that returns a non-finite or non-positive rate at any planned step is
    refused here rather than ending (or corrupting) a run midway.
    """
    if isinstance(lr, str):
        check_choice(lr, LR_SCHEDULES, "lr schedule")
        if lr == "1/sqrt(T)":
            const = 1.0 / math.sqrt(max(total_steps, 1))
            return lambda t: const
        return lambda t: 1.0 / math.sqrt(t + 1)
    if not callable(lr):
        value = check_positive(lr, "lr")
        return lambda t: value
    rates = []
    for t in range(total_steps):
        try:
            rate = float(lr(t))
        except (TypeError, ValueError) as err:
            raise TypeError(
                f"the learning-rate schedule must return a number for step t={t} "
                f"(counted from 0): {err}"
            ) from err
        if not (math.isfinite(rate) and rate > 0):
            raise ValueError(
                f"the learning-rate schedule returned {rate!r} at step t={t} "
                f"(counted from 0; {total_steps} planned); every rate must be finite "
                "and > 0."
            )
        rates.append(rate)
    return rates.__getitem__


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


# --------------------------------------------------------------------------------------
# Pieces of the loop
# --------------------------------------------------------------------------------------


def _device_of(model: nn.Module, device: str | torch.device | None) -> torch.device:
    if device is not None:
        return torch.device(device)
    first = next(model.parameters(), None)
    return first.device if first is not None else torch.device("cpu")


def _epsilon(run: _Run, steps: int, conversion: str = "improved") -> float:
    """Privacy spent after ``steps`` steps (``inf`` unaccounted, 0 before any step)."""
    if not run.accounted:
        return math.inf
    if steps == 0:
        return 0.0
    return dpsgd_epsilon(
        method=run.method,
        sample_rate=run.sample_rate,
        noise_multiplier=run.sigma2,
        count_noise_multiplier=run.sigma1,
        steps=steps,
        delta=run.delta,
        conversion=conversion,
    )


def _plan_steps(run: _Run) -> int:
    """The steps the run will take: all epochs, or fewer within ``target_epsilon``."""
    if run.target_epsilon is None:
        return run.planned_steps
    total = max_steps_within(
        run.target_epsilon,
        sample_rate=run.sample_rate,
        noise_multipliers=step_noise_multipliers(
            run.method,
            noise_multiplier=run.sigma2,
            count_noise_multiplier=run.sigma1,
        ),
        delta=run.delta,
        limit=run.planned_steps,
    )
    if total == 0:
        raise ValueError(
            f"a single step of {run.method} already spends more than "
            f"target_epsilon={run.target_epsilon}; raise the noise multipliers or "
            "lower the batch size."
        )
    return total


def _batches(run: _Run, steps: int, generator: torch.Generator) -> Iterator[Tensor]:
    """Yield the indices of the next ``steps`` batches of an epoch (``steps >= 1``)."""
    if run.sampling == "shuffle":
        perm = torch.randperm(run.n, generator=generator)
        for j in range(steps):
            yield perm[j * run.batch_size : (j + 1) * run.batch_size]
        return
    for _ in range(steps):  # Poisson: each example independently with rate q
        chosen = torch.rand(run.n, generator=generator) < run.sample_rate
        yield chosen.nonzero().squeeze(1)


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
    rule: DPSGDFRule | None = None,
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
        rule=rule,
        batch_size=batch_size,
    )


def _sgd_step(
    run: _Run,
    batch: PerSampleGradients,
    groups: Tensor,
    generators: tuple[torch.Generator, torch.Generator],
) -> tuple[list[Tensor], int, StepOutput | None]:
    """Return the step's gradient sum, its divisor and the rule's output (private)."""
    if not run.private:
        ones = torch.ones_like(batch.norms)
        sums = batch.weighted_sum(ones, set_grad=False)
        return sums, max(batch.batch_size, 1), None
    g_noise, g_count = generators
    out = _private_step(
        run.method,
        batch,
        groups,
        run.num_groups,
        run.batch_size,
        run.sigma2,
        run.sigma1,
        run.c0,
        g_noise,
        g_count,
        run.rule,
    )
    return out.noisy_sum, run.batch_size, out


def _apply_update(
    params: list[Tensor],
    sums: list[Tensor],
    denom: int,
    lr: float,
    weight_decay: float,
    momentum: float = 0.0,
    velocity: list[Tensor] | None = None,
) -> None:
    """SGD: ``p -= lr * (sum / denom + weight_decay * p)``, with heavy-ball momentum.

    With ``momentum`` ``mu > 0`` the step is ``torch.optim.SGD``'s: ``v = mu v + d``
    (``v = d`` at the first step), ``p -= lr * v``, where ``d`` is the bracket
    above; ``velocity`` holds ``v`` (empty before the first step).
    """
    with torch.no_grad():
        for i, (p, s) in enumerate(zip(params, sums, strict=True)):
            upd = s.view_as(p).to(p.dtype) / denom
            if weight_decay:
                upd = upd + weight_decay * p
            if momentum:
                if len(velocity) <= i:
                    velocity.append(upd.clone())
                else:
                    velocity[i].mul_(momentum).add_(upd)
                upd = velocity[i]
            p.sub_(lr * upd)


def _check_finite_parameters(
    params: tuple[Tensor, ...], *, step: int, epoch: int
) -> None:
    """Stop a run whose model has a NaN or infinite parameter after ``step``.

    The parameters after a step are a function of the released noisy sums and of
    public settings (post-processing), so looking at them costs no privacy: stopping
    here is a function of what the run releases anyway. (A check of per-example
    values would not be.) Once non-finite, a parameter stays so under SGD updates,
    so checking every step names the step that diverged. One ``aminmax`` per tensor
    (NaN propagates into both ends, an infinity into one) and one synchronisation:
    about 0.2 ms a step on the paper's MNIST CNN (431,080 parameters, one CPU
    thread), against 80 to 100 ms for the step (``benchmarks/bench_dpsgd.py``).
    """
    with torch.no_grad():
        ends = [torch.stack(torch.aminmax(p)) for p in params if p.numel()]
        if ends and not bool(torch.isfinite(torch.cat(ends)).all()):
            raise FloatingPointError(
                f"training diverged at step {step} (epoch {epoch}): a model "
                "parameter became NaN or infinite, so no model or epsilon is "
                "returned. Lower lr or clip_norm; with a custom loss_fn, check that "
                "its gradients are finite."
            )


class _EpochTotals:
    """Per-group sums of one epoch's diagnostics (private data; not released)."""

    def __init__(self, num_groups: int, device: torch.device) -> None:
        self.loss = torch.zeros(num_groups, dtype=torch.float64, device=device)
        self.norm = torch.zeros_like(self.loss)
        self.seen = torch.zeros_like(self.loss)
        self.bound = torch.zeros_like(self.loss)
        self.weight = torch.zeros_like(self.loss)
        self.clipped = torch.zeros_like(self.loss)
        self.ratio = torch.zeros_like(self.loss)
        self.share = torch.zeros_like(self.loss)
        self.largest = torch.zeros((), dtype=torch.float64, device=device)
        self.steps = 0

    def add(
        self, batch: PerSampleGradients, groups: Tensor, out: StepOutput | None
    ) -> None:
        self.loss.index_add_(0, groups, batch.losses.double())
        self.norm.index_add_(0, groups, batch.norms.double())
        self.seen.index_add_(
            0, groups, torch.ones_like(batch.norms, dtype=torch.float64)
        )
        if out is not None:
            self.bound += out.clip_bounds.double()
            bound_i = out.clip_bounds.to(batch.norms.dtype)[groups]
            over = batch.norms > bound_i
            self.clipped.index_add_(0, groups, over.double())
            if out.group_weights is not None:
                self.weight += out.group_weights.double()
            self.ratio += out.sensitivity_ratio.double()
            mass = torch.minimum(batch.norms, bound_i).double()
            if out.group_weights is not None:
                mass = mass * out.group_weights.double()[groups]
            total = mass.sum()
            if total > 0:
                self.share.index_add_(0, groups, mass / total)
            self.largest = torch.maximum(self.largest, out.clip_bounds.max().double())
        self.steps += 1

    def stats(self, run: _Run, *, epoch: int, steps: int) -> EpochStats:
        with np.errstate(invalid="ignore", divide="ignore"):
            seen_np = self.seen.cpu().numpy()
            mean_loss = self.loss.cpu().numpy() / seen_np
            mean_norm = self.norm.cpu().numpy() / seen_np
            clip_share = self.clipped.cpu().numpy() / seen_np
        per_step = max(self.steps, 1)
        return EpochStats(
            epoch=epoch,
            steps=steps,
            epsilon=_epsilon(run, steps),
            epsilon_classic=_epsilon(run, steps, "classic"),
            group_loss=tuple(float(v) for v in mean_loss),
            group_grad_norm=tuple(float(v) for v in mean_norm),
            group_examples=tuple(int(v) for v in seen_np),
            clip_bounds=(
                tuple(float(v) for v in (self.bound / per_step).tolist())
                if run.private
                else None
            ),
            group_weights=(
                tuple(float(v) for v in (self.weight / per_step).tolist())
                if run.method == "naive"
                else None
            ),
            group_clip_fraction=(
                tuple(float(v) for v in clip_share) if run.private else None
            ),
            sensitivity_ratio=(
                tuple(float(v) for v in (self.ratio / per_step).tolist())
                if run.private
                else None
            ),
            step_share=(
                tuple(float(v) for v in (self.share / per_step).tolist())
                if run.private
                else None
            ),
            largest_bound=float(self.largest) if run.private else None,
        )


class _Loop:
    """The state of a run between steps: model, engine, streams, step count."""

    def __init__(
        self,
        run: _Run,
        net: nn.Module,
        clipper: PerSampleClipper,
        streams: tuple[torch.Generator, torch.Generator, torch.Generator],
        *,
        total: int,
        lr: Callable[[int], float],
        device: torch.device,
    ) -> None:
        self.run, self.net, self.clipper = run, net, clipper
        self.g_sample, self.g_count, self.g_noise = streams
        self.total, self.lr, self.device = total, lr, device
        self.x, self.y, self.groups = (
            run.x.to(device),
            run.y.to(device),
            run.groups.to(device),
        )
        self.ratio_sum = torch.zeros(run.num_groups, dtype=torch.float64, device=device)
        self.largest_bound = 0.0
        self.velocity: list[Tensor] = []
        self.step = 0

    def epoch(self, epoch: int, on_step: Callable[[], Any]) -> EpochStats:
        """Run the epoch's steps (fewer if the plan ends first); return its stats."""
        run = self.run
        totals = _EpochTotals(run.num_groups, self.device)
        steps = min(run.steps_per_epoch, self.total - self.step)
        for idx in _batches(run, steps, self.g_sample):
            idx = idx.to(self.device)
            gb = self.groups[idx]
            batch = self.clipper.compute(self.x[idx], self.y[idx])
            sums, denom, out = _sgd_step(run, batch, gb, (self.g_noise, self.g_count))
            lr_t = float(self.lr(self.step))
            _apply_update(
                self.clipper.parameters,
                sums,
                denom,
                lr_t,
                run.weight_decay,
                run.momentum,
                self.velocity,
            )
            totals.add(batch, gb, out)
            if out is not None:
                self.ratio_sum += out.sensitivity_ratio.double()
            self.step += 1
            _check_finite_parameters(
                self.clipper.parameters, step=self.step, epoch=epoch
            )
            on_step()
        stats = totals.stats(run, epoch=epoch, steps=self.step)
        if stats.largest_bound is not None:
            self.largest_bound = max(self.largest_bound, stats.largest_bound)
        return stats

    def end_of_epoch(self, epoch: int) -> None:
        """Call ``on_epoch_end(epoch, model)`` in eval mode, without gradients."""
        if self.run.on_epoch_end is None:
            return
        self.net.eval()
        try:
            with torch.no_grad():
                self.run.on_epoch_end(epoch, self.net)
        finally:
            self.net.train()

    def result(self, history: list[EpochStats]) -> TrainResult:
        run, step = self.run, self.step
        epsilon = _epsilon(run, step)
        group_eps = None
        if run.accounted:
            mean_ratio = (self.ratio_sum / max(step, 1)).cpu().numpy()
            group_eps = tuple(float(r * epsilon) for r in mean_ratio)
        return TrainResult(
            model=self.net,
            method=run.method,
            epsilon=epsilon,
            delta=run.delta,
            steps=step,
            sample_rate=run.sample_rate,
            sampling=run.sampling,
            noise_multiplier=run.sigma2,
            count_noise_multiplier=run.sigma1,
            clip_norm=run.c0,
            group_epsilon=group_eps,
            stopped_early=step < run.planned_steps,
            history=tuple(history),
            rule=run.rule,
            largest_bound=self.largest_bound if run.private else None,
        )


# --------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------


def train(
    model: nn.Module,
    x: Tensor,
    y: Tensor,
    groups: Tensor,
    *,
    num_groups: int,
    method: Method = "dpsgd_f",
    privacy: Privacy | None = None,
    schedule: Schedule | None = None,
    rule: DPSGDFRule | None = None,
    loss_fn: LossFn | None = None,
    backend: Backend = "ghost",
    rng: np.random.Generator | None = None,
    generator: torch.Generator | None = None,
    device: str | torch.device | None = None,
    progress: bool = False,
    on_epoch_end: Callable[[int, nn.Module], None] | None = None,
    noise_multiplier: float | None = None,
    clip_norm: float | None = None,
    count_noise_multiplier: float | None = None,
    delta: float | None = None,
    target_epsilon: float | None = None,
    lr: float | Callable[[int], float] | str | None = None,
    batch_size: int | None = None,
    epochs: int | None = None,
    steps: int | None = None,
    weight_decay: float | None = None,
    momentum: float | None = None,
    sampling: Literal["poisson", "shuffle"] | None = None,
) -> TrainResult:
    """Train a copy of ``model`` with SGD, DPSGD, Naive or DPSGD-F.

    A run is three frozen records (:mod:`dpnotes.dpsgd.settings`): ``privacy``,
    ``schedule`` and, for DPSGD-F, its bound ``rule``. Each step draws a batch
    (Poisson sampling with rate ``q = batch_size / n`` by default), applies the
    method's rule (:func:`~dpnotes.dpsgd.rules.dpsgd_step`,
    :func:`~dpnotes.dpsgd.rules.naive_step`,
    :func:`~dpnotes.dpsgd.rules.dpsgd_f_step`), divides the noisy sum by the expected
    batch size ``batch_size``, adds ``weight_decay * w`` (data-independent L2
    regularisation, outside the noisy sum) and takes a plain SGD step. An epoch is
    ``n // batch_size`` steps.

    Args:
        model: The model to train (copied; the input is not modified).
        x: Training inputs, ``(n, ...)``, floating point and finite; converted to
            the model's dtype (e.g. a float64 numpy array for a float32 model).
        y: Training targets, ``(n,)``: integer class indices ``0..C-1`` for the
            default loss, ``C`` the model's number of outputs.
        groups: Group label ``0..num_groups-1`` of each example, ``(n,)``.
        num_groups: The public number of groups ``K``; every group must occur.
        method: ``"sgd"``, ``"dpsgd"``, ``"naive"`` or ``"dpsgd_f"``.
        privacy: What the run releases and how noisily
            (:class:`~dpnotes.dpsgd.settings.Privacy`: ``sigma_2``, ``C_0``,
            ``sigma_1``, ``delta``, ``target_epsilon``); required unless
            ``method="sgd"``, which ignores it.
        schedule: How it trains (:class:`~dpnotes.dpsgd.settings.Schedule`: learning
            rate, batch size, epochs or steps, weight decay, momentum, sampling);
            default ``Schedule()``.
        loss_fn: Per-sample loss ``loss_fn(output, target) -> (b,)``; default
            cross-entropy.
        backend: Per-sample gradient engine backend
            (:class:`~dpnotes.dpsgd.engine.PerSampleClipper`).
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
        noise_multiplier, clip_norm, count_noise_multiplier, delta, target_epsilon:
            Shorthand for ``privacy=Privacy(...)`` with these fields (not both).
        lr, batch_size, epochs, steps, weight_decay, momentum, sampling: Shorthand
            for ``schedule=Schedule(...)`` with these fields (not both).

    Returns:
        A :class:`TrainResult` with the trained model, epsilon, steps, per-group
        epsilons and the per-epoch history.

    Raises:
        ValueError: Before any step, for an unknown method or sampling,
            inconsistent lengths, non-finite inputs (or non-finite targets of a
            custom loss), class labels outside the model's outputs, inputs of a
            shape the model cannot take, group labels outside
            ``0..num_groups-1``, a group without examples, a batch size giving a
            sample rate outside (0, 1], a non-positive noise multiplier or clip
            norm, a clip bound or noise std a step can use that the model's dtype
            cannot hold (:func:`~dpnotes.dpsgd.rules.largest_step_scales`), a
            ``loss_fn`` that is not finite on a data-free probe (an all-zeros input,
            target 0), a momentum outside [0, 1), a learning-rate schedule that
            returns a non-finite or non-positive rate at a planned step, both
            ``epochs`` and ``steps``, a model without trainable parameters, a
            ``target_epsilon`` that a single step exceeds, a ``rule`` with a method
            other than DPSGD-F, a ``target_epsilon`` with a rule that is not
            private, or a record beside its own shorthand keywords.
        TypeError: For a wrong type (integer inputs, non-integer class labels or
            group labels, a ``rule``, ``privacy`` or ``schedule`` that is not its
            record), or not exactly one of ``rng``/``generator``.
        FloatingPointError: After the step at which a model parameter became NaN or
            infinite (a learning rate or clip norm too large for the model); no
            result is returned. Checking the parameters, which are released
            anyway, costs no privacy.

    Privacy:
        ``(epsilon, delta)``-DP under add/remove-one neighbours (Poisson sampling),
        with epsilon from the RDP accountant over ``steps`` subsampled Gaussians. For
        DPSGD the multiplier is ``sigma_2``; for Naive and DPSGD-F, whose counts and
        gradient sum read the same batch, each step is one Gaussian of the joint
        multiplier ``(sigma_1**-2 + sigma_2**-2) ** -0.5``
        (:func:`~dpnotes.dpsgd.rules.dpsgd_epsilon`).
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
    privacy = _privacy_of(
        method,
        privacy,
        noise_multiplier=noise_multiplier,
        clip_norm=clip_norm,
        count_noise_multiplier=count_noise_multiplier,
        delta=delta,
        target_epsilon=target_epsilon,
    )
    schedule = from_keywords(
        Schedule,
        schedule,
        "schedule",
        build_empty=True,
        lr=lr,
        batch_size=batch_size,
        epochs=epochs,
        steps=steps,
        weight_decay=weight_decay,
        momentum=momentum,
        sampling=sampling,
    )
    run = _check_arguments(
        model,
        x,
        y,
        groups,
        num_groups=num_groups,
        method=method,
        privacy=privacy,
        schedule=schedule,
        on_epoch_end=on_epoch_end,
        class_labels=loss_fn is None,
        rule=rule,
    )
    dev = _device_of(model, device)
    net = copy.deepcopy(model).to(dev)
    _probe(net, run, dev, class_labels=loss_fn is None)
    _probe_loss(net, run, dev, loss_fn or cross_entropy_per_sample)
    net.train()
    total = _plan_steps(run)
    rate = _resolve_lr(schedule.lr, total)
    streams = _stream_generators(rng, generator, dev)
    clipper = PerSampleClipper(
        net, loss_fn or cross_entropy_per_sample, backend=backend
    )
    loop = _Loop(run, net, clipper, streams, total=total, lr=rate, device=dev)
    history: list[EpochStats] = []
    bar = tqdm(total=total, desc=run.method, disable=not progress, leave=False)
    try:
        for epoch in range(1, run.epochs + 1):
            if loop.step >= total:
                break
            history.append(loop.epoch(epoch, lambda: bar.update(1)))
            loop.end_of_epoch(epoch)
    finally:
        bar.close()
        clipper.close()
    return loop.result(history)


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
