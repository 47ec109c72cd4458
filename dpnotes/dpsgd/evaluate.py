"""Evaluation of trained classifiers: predictions and accuracy per group.

The one implementation of per-group accuracy in the package: :func:`group_accuracy`
(and :func:`accuracies`, which also returns the overall accuracy) is what the
experiments and the chapters call. Evaluating on held-out data costs no privacy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from dpnotes.dpsgd.engine import as_tensor
from dpnotes.validation import check_int

__all__ = ["Accuracies", "accuracies", "group_accuracy", "predict"]


def predict(model: nn.Module, x: Tensor, *, batch_size: int = 4096) -> Tensor:
    """Return predicted class labels: argmax of the logits (one logit: ``> 0``).

    The model's training/eval mode is restored afterwards.

    Args:
        model: A classifier.
        x: Inputs, ``(n, ...)``.
        batch_size: Evaluation batch size.

    Returns:
        int64 labels, shape ``(n,)``, on the CPU.
    """
    x_t = as_tensor(x, "x")
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


@dataclass(frozen=True, eq=False)
class Accuracies:
    """Accuracy of a classifier on each group and overall.

    Attributes:
        by_group: Shape ``(K,)``; NaN for a group without examples.
        overall: Accuracy on all examples.
    """

    by_group: np.ndarray
    overall: float


def accuracies(
    model: nn.Module,
    x: Tensor,
    y: Tensor,
    groups: Tensor,
    *,
    num_groups: int,
    batch_size: int = 4096,
) -> Accuracies:
    """Return the accuracy of ``model`` on each group and overall.

    Args:
        model: A classifier.
        x: Test inputs, ``(n, ...)``.
        y: Test labels, ``(n,)``.
        groups: Group labels ``0..num_groups-1``, ``(n,)``.
        num_groups: ``K``.
        batch_size: Evaluation batch size.

    Returns:
        :class:`Accuracies`.

    Raises:
        ValueError: If lengths differ or a label is outside ``0..num_groups-1``.

    Examples:
        >>> net = nn.Linear(1, 2)
        >>> with torch.no_grad():
        ...     _ = net.weight.copy_(torch.tensor([[-1.0], [1.0]])), net.bias.zero_()
        >>> a = accuracies(net, torch.tensor([[1.0], [-1.0], [2.0]]),
        ...                torch.tensor([1, 1, 1]), torch.tensor([0, 0, 1]),
        ...                num_groups=2)
        >>> a.by_group.tolist(), a.overall
        ([0.5, 1.0], 0.6666666666666666)
    """
    num_groups = check_int(num_groups, "num_groups", minimum=1)
    y_t = as_tensor(y, "y").reshape(-1).cpu()
    g_t = as_tensor(groups, "groups").reshape(-1).cpu().long()
    n = int(y_t.shape[0])
    if g_t.shape[0] != n or as_tensor(x, "x").shape[0] != n:
        raise ValueError("x, y and groups must have the same number of examples.")
    if n and (int(g_t.min()) < 0 or int(g_t.max()) >= num_groups):
        raise ValueError(f"groups has labels outside 0..{num_groups - 1}.")
    correct = (predict(model, x, batch_size=batch_size) == y_t).double()
    hits = torch.zeros(num_groups, dtype=torch.float64).index_add_(0, g_t, correct)
    counts = torch.bincount(g_t, minlength=num_groups).double()
    with np.errstate(invalid="ignore", divide="ignore"):
        by_group = (hits / counts).numpy()
    # Sums of zeros and ones are exact, so this is the mean of ``correct``.
    overall = float(hits.sum() / n) if n else float("nan")
    return Accuracies(by_group=by_group, overall=overall)


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
        Array of shape ``(K,)`` (:attr:`Accuracies.by_group` of :func:`accuracies`).

    Raises:
        ValueError: If lengths differ or a label is outside ``0..num_groups-1``.
    """
    return accuracies(
        model, x, y, groups, num_groups=num_groups, batch_size=batch_size
    ).by_group
