"""How much better than the worst case a stratified mean's error term is expected to be.

The stratification paper's worked example (the race groups of New York) says that
under a Dirichlet model of the group shares the expected error of a stratified mean is
"approximately ~80% better than the worst case error, relative to the best case". The
statement admits several readings; this module computes each from the sum of log group
sizes that drives the error bound (Prop. 8 / Thm. 9):

* ``between``: ``(W - E) / (W - B)``, where ``E`` lies between the worst case
  ``W = k log(n/k)`` and the paper's best case ``B = (k - 1) + log(n - k)``;
* ``ratio``: ``1 - E / W``, the relative reduction of the sum itself;
* ``sqrt``: ``1 - sqrt(E / W)``, the relative reduction of the error bound's
  ``sqrt(k R^2 + sum log n_i)`` factor at ``R = 0``.

``E`` is the Dirichlet expectation :func:`dpnotes.bounds.expected_log_size_sum`, or
the observed ``sum_i log n_i`` of given group sizes. Plain math: no privacy budget.

References:
    rosenblatt2024stratification, the New York race example; Proposition 8 and
    Theorem 9 (AAAI numbering).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpnotes import bounds
from dpnotes.validation import check_array, check_positive

__all__ = ["WorstCaseGain", "gain_of_alpha", "gain_of_sizes"]


@dataclass(frozen=True)
class WorstCaseGain:
    """A sum of log group sizes against the worst and best cases, read three ways.

    Attributes:
        k: Number of groups.
        n: Number of records.
        worst: ``W = k log(n / k)``.
        best: The paper's best case ``B = (k - 1) + log(n - k)``.
        value: ``E``, the expected (or observed) ``sum_i log n_i``.

    Its three readings are the properties :attr:`between`, :attr:`ratio` and
    :attr:`sqrt`.
    """

    k: int
    n: float
    worst: float
    best: float
    value: float

    @property
    def between(self) -> float:
        """``(W - E) / (W - B)``: where ``E`` lies from the worst to the best case."""
        return (self.worst - self.value) / (self.worst - self.best)

    @property
    def ratio(self) -> float:
        """``1 - E / W``: the relative reduction of the sum."""
        return 1.0 - self.value / self.worst

    @property
    def sqrt(self) -> float:
        """``1 - sqrt(E / W)``: the relative reduction of the bound's root factor."""
        return 1.0 - math.sqrt(max(self.value, 0.0) / self.worst)


def _gain(k: int, n: float, value: float) -> WorstCaseGain:
    worst = bounds.worst_case_log_size_sum(k, n)
    best = bounds.best_case_log_size_sum(k, n)
    return WorstCaseGain(k=k, n=float(n), worst=worst, best=best, value=value)


def gain_of_alpha(alpha: float, k: int, n: float) -> WorstCaseGain:
    """Compare the Dirichlet expectation of ``sum_i log n_i`` with the extreme cases.

    Args:
        alpha: The symmetric Dirichlet parameter, positive.
        k: Number of groups, at least 1.
        n: Number of records, above ``k``.

    Returns:
        The three readings of the gain over the worst case.

    Raises:
        ValueError: If ``alpha <= 0``, ``k < 1`` or ``n <= k``.

    Examples:
        >>> g = gain_of_alpha(0.13, 9, 196_967)
        >>> round(g.between, 3), round(g.ratio, 3), round(g.sqrt, 3)
        (0.716, 0.555, 0.333)
    """
    value = bounds.expected_log_size_sum(alpha, k, n)
    return _gain(k, n, value)


def gain_of_sizes(sizes: np.ndarray, n: float | None = None) -> WorstCaseGain:
    """Compare the observed ``sum_i log n_i`` of group sizes with the extreme cases.

    Args:
        sizes: The ``k`` group sizes (counts), each at least 1.
        n: Evaluate at this many records, the shares kept (``n_i = n * share_i``);
            by default the sizes' own total.

    Returns:
        The three readings of the gain over the worst case.

    Raises:
        ValueError: If ``sizes`` is not one vector of at least two sizes, a size is
            below 1, or ``n`` is not above the number of groups.

    Examples:
        >>> round(gain_of_sizes([50, 50]).between, 3)
        0.0
    """
    s = check_array(sizes, "sizes")
    if s.ndim != 1 or s.size < 2:
        raise ValueError(
            f"sizes must be one vector of k >= 2 sizes, got shape {s.shape}."
        )
    if np.any(s < 1):
        raise ValueError(
            "every group size must be at least 1 (an empty group has no log size; "
            "drop it or add a pseudocount)."
        )
    total = float(s.sum())
    n = total if n is None else check_positive(n, "n")
    value = bounds.log_size_sum(s * (n / total))
    return _gain(int(s.size), n, float(value))
