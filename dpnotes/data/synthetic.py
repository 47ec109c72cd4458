"""Synthetic grouped data: a 1-d Gaussian mixture with Dirichlet group sizes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from dpnotes.rng import check_rng
from dpnotes.validation import check_choice, check_int, check_positive

__all__ = ["GaussianMixtureSample", "sample_gaussian_mixture"]


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


@dataclass(frozen=True)
class GaussianMixtureSample:
    """A sample of ``n`` points from ``k`` Gaussian groups (arrays are read-only).

    Attributes:
        x: The data, shape (n,), float64.
        groups: Group label of each point, shape (n,), int64 in ``0..k-1``.
        proportions: The Dirichlet draw ``g`` (population group proportions), shape
            (k,).
        sizes: Number of points in each group, shape (k,), summing to ``n``.
        means: Group means ``mu_i``, shape (k,).
        sds: Group standard deviations ``sigma_i``, shape (k,).
        public_groups: The public list of groups, ``(0, 1, ..., k-1)``; it is fixed by
            ``k``, not read off the data, so empty groups still appear in it.
    """

    x: np.ndarray
    groups: np.ndarray
    proportions: np.ndarray
    sizes: np.ndarray
    means: np.ndarray
    sds: np.ndarray
    public_groups: tuple[int, ...]

    @property
    def n(self) -> int:
        """Number of points."""
        return int(self.x.shape[0])

    @property
    def k(self) -> int:
        """Number of groups."""
        return len(self.public_groups)

    @property
    def mixture_mean(self) -> float:
        """Mean of the population mixture, ``sum_i g_i mu_i``."""
        return float(self.proportions @ self.means)


def _apportion(m: int, weights: np.ndarray) -> np.ndarray:
    """Split ``m`` into integers proportional to ``weights`` (largest remainder)."""
    quotas = m * weights
    base = np.floor(quotas).astype(np.int64)
    short = m - int(base.sum())
    if short > 0:
        # Stable sort on the negated remainders: ties go to the lower group index.
        order = np.argsort(-(quotas - base), kind="stable")
        base[order[:short]] += 1
    return base


def sample_gaussian_mixture(
    n: int,
    k: int,
    alpha: float,
    *,
    rng: np.random.Generator,
    sd: float | ArrayLike = 1.0,
    mean_distribution: Literal["normal", "uniform"] = "normal",
    mean_scale: float = 1.0,
    group_sizes: Literal["round", "multinomial"] = "round",
    min_group_size: int = 1,
    shuffle: bool = True,
) -> GaussianMixtureSample:
    """Sample grouped 1-d Gaussian data as in the stratification paper's experiments.

    The generative model of the stratification paper's synthetic mean-estimation
    experiments (COINPRESS, StratCoinpress, PubStratCoinpress):

    1. group proportions ``g ~ Dirichlet(alpha * 1_k)``;
    2. group sizes ``|G_i|``: ``n g_i`` rounded (default) or ``Multinomial(n, g)``,
       after reserving ``min_group_size`` points for every group;
    3. group means ``mu_i ~ N(0, mean_scale^2)`` (default) or
       ``Uniform(-mean_scale, mean_scale)``;
    4. ``x_j ~ N(mu_{G(j)}, sd_{G(j)}^2)``, independently.

    Where this comes from. The appendix text of the paper could not be consulted
    offline; the authors' released code (``lurosenb/stratify_dp``, ``utils.model``,
    used by ``coinpress_results.ipynb``) does exactly steps 1-4 with ``sd = 1``,
    ``mu_i ~ N(0, 1)`` and ``n = 10000, k = 3, alpha = 0.3`` in its worked example.
    It sets ``|G_i| = round(n g_i)`` with the last group absorbing the rounding
    remainder, and first adds 1 to every ``n g_i < 1`` (taking it from the largest
    group) so that no group is empty. We keep its choices as defaults with two
    clean-ups: rounding is by largest remainder (sizes sum to ``n`` exactly and no
    single group absorbs the error), and the non-empty guarantee is exact
    (``min_group_size`` points per group, the remaining ``n - k * min_group_size``
    apportioned by ``g``). Rounding rather than multinomial sampling is the default
    because it is what the code did and because the paper's Theorem 9 treats
    ``|G_i| = n g_i`` (``E[sum_i log |G_i|] = k (psi(alpha) - psi(k alpha) + log n)``
    is exact for ``n g_i``); ``group_sizes="multinomial"`` adds the extra sampling
    noise of an i.i.d. population. ``sd = 1`` matches COINPRESS' assumption of a
    known unit covariance. A uniform prior on the means, ``Uniform(-R, R)`` with ``R``
    the a-priori range that COINPRESS needs, is available as
    ``mean_distribution="uniform", mean_scale=R``; it is not the authors' default.

    Args:
        n: Number of points, ``n >= k * min_group_size``.
        k: Number of groups, ``k >= 1``.
        alpha: Dirichlet concentration, ``alpha > 0``; small values give very unequal
            groups, large values nearly equal ones.
        rng: The numpy generator that owns all randomness.
        sd: Standard deviation of every group (a positive float) or of each group
            (a length-``k`` array).
        mean_distribution: ``"normal"`` (authors' code) or ``"uniform"``.
        mean_scale: Standard deviation of the normal, or half-width ``R`` of the
            uniform, that the group means are drawn from; positive.
        group_sizes: ``"round"`` (``n g`` by largest remainder) or ``"multinomial"``.
        min_group_size: Points reserved for every group (``0`` allows empty groups).
        shuffle: Whether to return the points in random order (otherwise sorted by
            group); with ``shuffle=True`` any prefix is a random subsample.

    Returns:
        A :class:`GaussianMixtureSample`.

    Raises:
        TypeError: If ``n``, ``k`` or ``min_group_size`` is not an integer, or ``rng``
            is not a numpy Generator.
        ValueError: If ``n < 1``, ``k < 1``, ``alpha <= 0``, ``sd`` or ``mean_scale``
            is not positive and finite, ``n < k * min_group_size``, or an option is
            unknown.

    References:
        rosenblatt2024stratification (mean-estimation experiments, Theorem 9)

    Examples:
        >>> s = sample_gaussian_mixture(1000, 3, 0.5, rng=np.random.default_rng(0))
        >>> s.x.shape, int(s.sizes.sum()), s.public_groups
        ((1000,), 1000, (0, 1, 2))
    """
    rng = check_rng(rng)
    n = check_int(n, "n", minimum=1)
    k = check_int(k, "k", minimum=1)
    min_group_size = check_int(min_group_size, "min_group_size", minimum=0)
    alpha = check_positive(alpha, "alpha (the Dirichlet concentration)")
    mean_scale = check_positive(mean_scale, "mean_scale")
    check_choice(mean_distribution, ("normal", "uniform"), "mean_distribution")
    check_choice(group_sizes, ("round", "multinomial"), "group_sizes")
    if not isinstance(shuffle, bool):
        raise TypeError(f"shuffle must be True or False, got {shuffle!r}.")
    try:
        sds = np.broadcast_to(np.asarray(sd, dtype=np.float64), (k,)).copy()
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"sd must be a positive number or an array of {k} positive numbers (one "
            f"per group), got {sd!r}."
        ) from err
    if not np.all(np.isfinite(sds) & (sds > 0)):
        raise ValueError(f"sd must be positive and finite, got {sds.tolist()}.")
    if n < k * min_group_size:
        raise ValueError(
            f"n={n} is too small to give each of the k={k} groups min_group_size="
            f"{min_group_size} points; use n >= {k * min_group_size} or a smaller "
            "min_group_size (0 allows empty groups)."
        )

    proportions = rng.dirichlet(np.full(k, alpha))
    if not np.all(np.isfinite(proportions)):
        raise ValueError(
            f"the Dirichlet draw with alpha={alpha} underflowed; use a larger alpha."
        )
    spare = n - k * min_group_size
    if group_sizes == "round":
        sizes = _apportion(spare, proportions)
    else:
        # Normalise in float64 so multinomial never sees a sum slightly above one.
        sizes = rng.multinomial(spare, proportions / proportions.sum()).astype(np.int64)
    sizes = sizes + min_group_size

    if mean_distribution == "normal":
        means = rng.normal(0.0, mean_scale, size=k)
    else:
        means = rng.uniform(-mean_scale, mean_scale, size=k)

    groups = np.repeat(np.arange(k, dtype=np.int64), sizes)
    x = means[groups] + sds[groups] * rng.standard_normal(n)
    if shuffle:
        order = rng.permutation(n)
        x, groups = x[order], groups[order]
    return GaussianMixtureSample(
        x=_frozen(x),
        groups=_frozen(groups),
        proportions=_frozen(proportions),
        sizes=_frozen(sizes),
        means=_frozen(means),
        sds=_frozen(sds),
        public_groups=tuple(range(k)),
    )
