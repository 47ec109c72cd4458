"""Findings of the foundations chapter *Differential privacy: the basics*.

The numbers that chapter states, as typed functions: how much the tight zCDP to
(epsilon, delta) conversion saves over the simple bound, where Gaussian noise becomes
smaller than Laplace noise when releases share a budget, the per-group errors of the
stored ``dp_group_error`` table, and the empirical audit of the Laplace mechanism. The
chapter calls them, glues their values, plots and explains.

A function handed a table without the columns it needs, or a selection without rows,
raises :class:`ValueError` naming what is missing.

References:
    dwork2014algorithmic (Laplace and Gaussian mechanisms, composition);
    bun2016concentrated (zCDP); jagielski2020auditing (auditing).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpnotes import accounting
from dpnotes.audit import audit_epsilon
from dpnotes.mechanisms import laplace_mechanism

__all__ = [
    "AUDIT_VARIANTS",
    "NoiseComparison",
    "audit_laplace",
    "group_error_texts",
    "noise_comparison",
    "zcdp_conversion",
]

#: The audited variants of the Laplace mechanism: name -> the sensitivity its noise
#: is calibrated to, for a query of true sensitivity 1 (half: half the noise).
AUDIT_VARIANTS: dict[str, float] = {"correct": 1.0, "broken: half the noise": 0.5}


def zcdp_conversion(rhos: Iterable[float], deltas: Iterable[float]) -> pd.DataFrame:
    """Convert rho-zCDP to epsilon at each delta, tightly and by the simple bound.

    The simple bound is ``rho + 2 sqrt(rho log(1/delta))`` (Bun and Steinke's
    Prop. 1.3); the tight conversion is :func:`dpnotes.accounting.rho_to_epsilon`.

    Args:
        rhos: The zCDP parameters.
        deltas: The deltas.

    Returns:
        Columns ``rho, delta, tight, simple``, one row per (delta, rho).

    Raises:
        ValueError: If ``rhos`` or ``deltas`` is empty.

    Examples:
        >>> t = zcdp_conversion([0.5], [1e-5])
        >>> bool((t.simple >= t.tight).all())
        True
    """
    rhos, deltas = list(rhos), list(deltas)
    if not rhos or not deltas:
        raise ValueError("zcdp_conversion: give at least one rho and one delta.")
    rows = [
        {
            "rho": rho,
            "delta": delta,
            "tight": accounting.rho_to_epsilon(rho, delta),
            "simple": rho + 2 * np.sqrt(rho * np.log(1 / delta)),
        }
        for delta in deltas
        for rho in rhos
    ]
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class NoiseComparison:
    """Laplace against Gaussian noise when ``k`` releases share one budget.

    Attributes:
        ks: The numbers of releases.
        sd_laplace: Noise sd per release, Laplace with epsilon / k each.
        sd_gauss: Noise sd per release, Gaussian with rho / k each.
        sigma: The analytic Gaussian's sigma for one release at (epsilon, delta).
        laplace_scale: The Laplace scale for one release.
    """

    ks: np.ndarray
    sd_laplace: np.ndarray
    sd_gauss: np.ndarray
    sigma: float
    laplace_scale: float

    @property
    def crossover(self) -> int | None:
        """The smallest k from which Gaussian noise is smaller (None if never)."""
        below = self.sd_gauss < self.sd_laplace
        return int(self.ks[np.argmax(below)]) if below.any() else None


def noise_comparison(
    *,
    epsilon: float,
    delta: float,
    sensitivity: float = 1.0,
    ks: Sequence[int] | np.ndarray = tuple(range(1, 101)),
) -> NoiseComparison:
    """Compare the two mechanisms' noise for one release and for ``k`` sharing a budget.

    Laplace splits epsilon (sequential composition of pure DP: ``Lap(k Δ/ε)`` has sd
    ``√2 k Δ/ε``); the Gaussian splits the rho that ``(epsilon, delta)`` converts to
    (zCDP composition).

    Args:
        epsilon: The total epsilon.
        delta: The total delta.
        sensitivity: The query's sensitivity.
        ks: The numbers of releases.

    Returns:
        The :class:`NoiseComparison`.

    Raises:
        ValueError: If ``ks`` is empty or holds a value below 1.

    Examples:
        >>> noise_comparison(epsilon=1.0, delta=1e-6).crossover
        11
    """
    k = np.asarray(ks, dtype=int)
    if k.size == 0 or (k < 1).any():
        raise ValueError("noise_comparison: ks must be releases, at least 1 each.")
    rho = accounting.epsilon_delta_to_rho(epsilon, delta)
    sd_gauss = np.array(
        [
            accounting.gaussian_sigma_for_rho(sensitivity=sensitivity, rho=rho / i)
            for i in k
        ]
    )
    return NoiseComparison(
        ks=k,
        sd_laplace=np.sqrt(2) * sensitivity * k / epsilon,
        sd_gauss=sd_gauss,
        sigma=accounting.analytic_gaussian_sigma(
            epsilon=epsilon, delta=delta, sensitivity=sensitivity
        ),
        laplace_scale=sensitivity / epsilon,
    )


def group_error_texts(table: pd.DataFrame, *, epsilon: float = 1.0) -> dict[str, str]:
    """The chapter's numbers of ``dp_group_error`` at one budget.

    Args:
        table: The ``dp_group_error`` table.
        epsilon: The budget the numbers are read at.

    Returns:
        ``smallest-group`` (its name), ``global-bias-small`` (the global estimate's
        error for it, years) and ``ratio-small-large`` (the smallest group's error
        over the largest's, per-group estimates with parallel composition).

    Raises:
        ValueError: If a column, the budget or a strategy's row of a group is missing.
    """
    need = ["strategy", "epsilon", "group", "group_size", "mae"]
    missing = [c for c in need if c not in table.columns]
    if missing:
        raise ValueError(f"group_error_texts: the table lacks the columns {missing}.")
    at = table[np.isclose(table["epsilon"], epsilon)]
    if at.empty:
        raise ValueError(f"group_error_texts: no rows at epsilon = {epsilon:g}.")
    sizes = at.drop_duplicates("group").sort_values("group_size")
    smallest, largest = sizes["group"].iloc[0], sizes["group"].iloc[-1]
    mae = at.set_index(["strategy", "group"])["mae"]
    keys = [
        ("global", smallest),
        ("per-group (parallel)", smallest),
        ("per-group (parallel)", largest),
    ]
    absent = [k for k in keys if k not in mae.index]
    if absent:
        raise ValueError(f"group_error_texts: no rows of {absent}.")
    parallel = "per-group (parallel)"
    ratio = mae[parallel, smallest] / mae[parallel, largest]
    return {
        "smallest-group": str(smallest),
        "global-bias-small": f"{mae['global', smallest]:.1f}",
        "ratio-small-large": f"{ratio:.0f}",
    }


def audit_laplace(
    claimed: Sequence[float],
    *,
    trials: int,
    rng: np.random.Generator,
    variants: dict[str, float] = AUDIT_VARIANTS,
) -> pd.DataFrame:
    """Audit the Laplace mechanism and broken variants at each claimed epsilon.

    Each variant releases a sensitivity-1 query (inputs 0 and 1) with Laplace noise
    calibrated to its own sensitivity; :func:`dpnotes.audit.audit_epsilon` gives a
    95% lower bound on the epsilon it truly has, from ``trials`` runs per input.

    Args:
        claimed: The claimed epsilons.
        trials: Runs per input.
        rng: The generator (the chapter: ``dpnotes.rng.as_generator(2024)``); the
            audits draw from it in the table's order.
        variants: Name -> the sensitivity its noise is calibrated to.

    Returns:
        Columns ``claimed ε``, ``variant``, ``audited lower bound on ε``.

    Privacy:
        The audit measures a mechanism's privacy; it spends none.
    """
    rows = []
    for eps in claimed:
        for variant, scale in variants.items():

            def mechanism(value, n, rng, eps=eps, scale=scale):
                return laplace_mechanism(
                    np.full(n, value), sensitivity=scale, epsilon=eps, rng=rng
                )

            result = audit_epsilon(mechanism, 0.0, 1.0, trials=trials, rng=rng)
            rows.append(
                {
                    "claimed ε": eps,
                    "variant": variant,
                    "audited lower bound on ε": result.epsilon_lower,
                }
            )
    return pd.DataFrame(rows)
