"""The settings of one DP-SGD run, as typed, frozen records.

A run of :func:`dpnotes.dpsgd.train` is decided by three records, each checked when it
is made (a wrong value is refused where it is written, before any data is read):

* :class:`Privacy` -- what the run releases and how noisily: the gradient noise
  multiplier ``sigma_2``, the clip norm ``C_0``, the counts' multiplier ``sigma_1``
  (Naive and DPSGD-F), ``delta`` and the budget to stop at.
* :class:`Schedule` -- how it trains: learning rate, batch size, length, weight
  decay, momentum and how batches are drawn. None of it costs privacy except through
  the number of steps and the sample rate, which the accountant reads.
* :class:`~dpnotes.dpsgd.rules.DPSGDFRule` -- DPSGD-F only: the reading of its bound
  rule (the switches of the cause study).

An experiment builds them from its profile (``training_records`` in
:mod:`dpnotes.experiments.dpsgd_f`), :func:`~dpnotes.dpsgd.train` turns them into one
checked run, and the step functions of :mod:`dpnotes.dpsgd.rules` read the run: a
setting can be followed from the profile to the rule in three hops.
:func:`~dpnotes.dpsgd.train`'s flat keywords (``noise_multiplier=``, ``lr=``, ...) are
shorthand that builds the same records.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from dpnotes.validation import check_choice, check_delta, check_int, check_positive

__all__ = ["FLOAT32_MAX", "SAMPLINGS", "Privacy", "Schedule"]

#: float32's largest finite value (about 3.4e38): the clip norm and the noise scale
#: ``noise_multiplier * clip_norm`` of a :class:`Privacy` may not exceed it.
FLOAT32_MAX: float = float(np.finfo(np.float32).max)

#: How batches are drawn: Poisson subsampling (the accounting is exact) or the
#: paper's fixed-size batches of a shuffled epoch (the accounting approximate).
SAMPLINGS = ("poisson", "shuffle")


@dataclass(frozen=True)
class Privacy:
    """What a private run releases and how noisily.

    Attributes:
        noise_multiplier: ``sigma_2``, the gradient noise's standard deviation in units
            of the clip norm (DPSGD), or of the largest bound ``max_k C_k`` (DPSGD-F).
        clip_norm: ``C_0``, the clip norm (DPSGD-F's base bound).
        count_noise_multiplier: ``sigma_1`` of the counts Naive and DPSGD-F release;
            ``None``: ``COUNT_NOISE_FACTOR * noise_multiplier`` (10, the paper's;
            :func:`~dpnotes.dpsgd.rules.step_noise_multipliers`). Ignored by DPSGD.
        delta: The delta of the reported epsilon, in (0, 1).
        target_epsilon: Stop before the first step that would bring epsilon above
            this (to compare methods at one budget); ``None``: run the schedule out.

    Raises:
        ValueError: A multiplier or clip norm that is not finite and > 0, a delta
            outside (0, 1), a target epsilon that is not finite and > 0, or a clip
            norm whose bound or noise scale float32 cannot hold: ``clip_norm`` and
            ``noise_multiplier * clip_norm`` must both be at most
            :data:`FLOAT32_MAX` (about 3.4e38). A step clips to ``C_0`` in the
            model's dtype and adds noise of std ``sigma_2 C_0`` (DPSGD) to its
            float parameters; above the limit the bound overflows to ``inf`` (or a
            float32 tensor refuses it) and the model turns into NaN. float32 is the
            dtype of every model :mod:`dpnotes.dpsgd.models` builds and the
            narrowest one :func:`~dpnotes.dpsgd.train` takes; the record does not
            know the model, so the limit is float32's for all. Naive and DPSGD-F
            can use larger scales, checked against the model's dtype when training
            starts (:func:`~dpnotes.dpsgd.rules.largest_step_scales`).
        TypeError: A value that is not a number.

    >>> Privacy(noise_multiplier=0.8, clip_norm=1.0).delta
    1e-05
    """

    noise_multiplier: float
    clip_norm: float
    count_noise_multiplier: float | None = None
    delta: float = 1e-5
    target_epsilon: float | None = None

    def __post_init__(self) -> None:
        put = object.__setattr__
        put(
            self,
            "noise_multiplier",
            check_positive(self.noise_multiplier, "noise_multiplier"),
        )
        put(self, "clip_norm", check_positive(self.clip_norm, "clip_norm"))
        scale = self.noise_multiplier * self.clip_norm
        if max(self.clip_norm, scale) > FLOAT32_MAX:
            raise ValueError(
                f"clip_norm={self.clip_norm!r} with noise_multiplier="
                f"{self.noise_multiplier!r} puts the clip bound or the noise scale "
                f"noise_multiplier * clip_norm = {scale:.4g} above float32's largest "
                f"value {FLOAT32_MAX:.4g}, so the model's parameters cannot hold it. "
                "Lower clip_norm (rescale the loss if its gradients are that "
                "large)."
            )
        if self.count_noise_multiplier is not None:
            put(
                self,
                "count_noise_multiplier",
                check_positive(self.count_noise_multiplier, "count_noise_multiplier"),
            )
        put(self, "delta", check_delta(self.delta))
        if self.target_epsilon is not None:
            put(
                self,
                "target_epsilon",
                check_positive(self.target_epsilon, "target_epsilon"),
            )


@dataclass(frozen=True)
class Schedule:
    """How a run trains: the optimiser's settings and how batches are drawn.

    Attributes:
        lr: Learning rate: a positive float, a function of the step ``t`` (from 0;
            evaluated at every planned step before the first, and must be finite and
            positive at each), ``"1/sqrt(T)"`` (constant ``1/sqrt(T)``, ``T`` the
            number of steps the run will take) or ``"1/sqrt(t)"`` (``1/sqrt(t+1)``).
        batch_size: Expected batch size ``b`` (exact for ``"shuffle"``); the sample
            rate is ``b / n``.
        epochs: Number of epochs of ``n // b`` steps (default 1 when ``steps`` is not
            given either).
        steps: Number of steps instead of ``epochs``; the last epoch is then partial
            (e.g. ``ceil(60 n / 256)``, the count the DPSGD-F paper's epsilons use).
        weight_decay: L2 coefficient on every trainable parameter, outside the noisy
            sum; ``None``: the model's ``weight_decay`` attribute if it has one, else 0.
        momentum: Heavy-ball momentum in ``[0, 1)`` with ``torch.optim.SGD``'s
            semantics; it acts on the noised update (post-processing, no privacy cost).
        sampling: ``"poisson"`` (the accounting is exact) or ``"shuffle"`` (the
            paper's fixed-size batches of a shuffled epoch; the reported epsilon is
            then an approximation).

    Raises:
        ValueError: Both ``epochs`` and ``steps``; a length, batch size or learning
            rate that is not positive; a momentum outside ``[0, 1)``; a negative or
            non-finite weight decay; an unknown sampling or learning-rate schedule.
        TypeError: A value of the wrong type (e.g. ``epochs=1.5``).

    >>> Schedule(lr=0.5, batch_size=256, epochs=60).sampling
    'poisson'
    """

    lr: float | Callable[[int], float] | str = 0.1
    batch_size: int = 256
    epochs: int | None = None
    steps: int | None = None
    weight_decay: float | None = None
    momentum: float = 0.0
    sampling: Literal["poisson", "shuffle"] = "poisson"

    def __post_init__(self) -> None:
        put = object.__setattr__
        check_choice(self.sampling, SAMPLINGS, "sampling")
        if self.epochs is not None and self.steps is not None:
            raise ValueError(
                f"pass epochs or steps, not both (got epochs={self.epochs!r}, "
                f"steps={self.steps!r}): steps fixes the number of steps, and the last "
                "epoch is then partial."
            )
        if self.steps is not None:
            put(self, "steps", check_int(self.steps, "steps", minimum=1))
        if self.epochs is not None:
            put(self, "epochs", check_int(self.epochs, "epochs", minimum=1))
        put(self, "batch_size", check_int(self.batch_size, "batch_size", minimum=1))
        if isinstance(self.lr, str):
            check_choice(self.lr, LR_SCHEDULES, "lr schedule")
        elif not callable(self.lr):
            put(self, "lr", check_positive(self.lr, "lr"))
        if self.weight_decay is not None:
            wd = self.weight_decay
            if isinstance(wd, bool) or not isinstance(wd, (int, float)):
                raise TypeError(
                    f"weight_decay must be a number, got {type(wd).__name__}."
                )
            if wd < 0 or not math.isfinite(wd):
                raise ValueError(f"weight_decay must be finite and >= 0, got {wd!r}.")
            put(self, "weight_decay", float(wd))
        put(self, "momentum", check_momentum(self.momentum))


#: The learning-rate schedules :class:`Schedule` names by string.
LR_SCHEDULES = ("1/sqrt(T)", "1/sqrt(t)")


def check_momentum(momentum: Any) -> float:
    """Return ``momentum`` as a float in ``[0, 1)``, or say what is allowed."""
    if isinstance(momentum, bool) or not isinstance(momentum, (int, float)):
        raise TypeError(
            f"momentum must be a number in [0, 1), got {type(momentum).__name__}."
        )
    momentum = float(momentum)
    if not (math.isfinite(momentum) and 0.0 <= momentum < 1.0):
        raise ValueError(
            f"momentum must be in [0, 1) (0: plain SGD; 0.5 in the reference code), "
            f"got {momentum!r}."
        )
    return momentum


def from_keywords(
    record: type, given: Any, name: str, *, build_empty: bool = False, **keywords: Any
) -> Any:
    """Return ``given``, or the record built from the keywords that are not ``None``.

    With no record and no keyword, return ``record()`` (its defaults) if
    ``build_empty``, else ``None``.

    :func:`~dpnotes.dpsgd.train` takes each record or its fields as flat keywords, not
    both: a keyword beside its record would leave it unclear which one the run used.
    """
    passed = {k: v for k, v in keywords.items() if v is not None}
    if given is None:
        return record(**passed) if passed or build_empty else None
    if not isinstance(given, record):
        raise TypeError(
            f"{name} must be a dpnotes.dpsgd.{record.__name__} or None, got "
            f"{type(given).__name__}."
        )
    if passed:
        raise ValueError(
            f"pass {name}={record.__name__}(...) or its fields as keywords, not both "
            f"(got {name}= and {', '.join(sorted(passed))}=); move them into the "
            f"record, e.g. dataclasses.replace({name}, {min(passed)}=...)."
        )
    return given
