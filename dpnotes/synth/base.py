"""The synthesizer interface and the measurement step shared by MST, AIM and GEM.

Every synthesizer is constructed with its budget (``epsilon``, ``delta``; converted to
zCDP once) and its own parameters, fitted with ``fit(df, domain, *, rng)`` and sampled
with ``sample(n, *, rng)``. The domain is a public input; the data are integer codes
inside it (:mod:`dpnotes.synth.domain`).

Neighbouring relation: two tables differ by adding or removing one record (unbounded
DP), as in the MST, AIM and GEM papers. A marginal then changes by one count in one
cell, so its L1 and L2 sensitivities are 1. Replacing a record is a removal and an
addition, and the two kinds of step pay for it differently: a Gaussian measurement's L2
sensitivity becomes sqrt(2), which doubles its ``rho``, while a selection score (an L1
error) can move by 2, which quadruples the exponential mechanism's ``epsilon**2 / 8``.
Under replacement a fit therefore costs between 2 and 4 times its ``rho``, depending
on the share of the budget spent on selection.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from dpnotes.accounting import ZCDPAccountant, epsilon_delta_to_rho, rho_to_epsilon
from dpnotes.rng import check_rng
from dpnotes.synth.domain import Domain, check_data, check_domain
from dpnotes.synth.marginals import Clique, marginal
from dpnotes.validation import check_delta, check_epsilon, check_int

__all__ = ["Synthesizer", "measure"]


def measure(
    data: pd.DataFrame | Mapping[str, np.ndarray],
    domain: Domain,
    cliques: Iterable[Clique],
    *,
    sigma: float,
    rng: np.random.Generator,
) -> dict[Clique, np.ndarray]:
    """Release each clique's marginal with independent Gaussian noise of std ``sigma``.

    Args:
        data: Codes inside ``domain``.
        domain: The public domain.
        cliques: The cliques to measure (in domain order).
        sigma: Noise standard deviation per cell.
        rng: The random generator.

    Returns:
        ``{clique: noisy counts}``.

    Privacy:
        Each marginal has L2 sensitivity 1 under adding or removing a record, so ``m``
        marginals cost ``m / (2 sigma**2)`` of zCDP (the caller records it).

    References:
        bun2016concentrated, Proposition 1.6; mckenna2021winning.
    """
    out = {}
    for clique in cliques:
        x = marginal(data, domain, clique)
        out[tuple(clique)] = x + rng.normal(0.0, sigma, size=x.shape)
    return out


class Synthesizer(abc.ABC):
    """Base class: budget bookkeeping, input checks, and the fit/sample contract.

    Attributes:
        epsilon: The (epsilon, delta) target.
        delta: Its delta.
        rho: The zCDP budget it converts to (the synthesizers account in zCDP).
        accountant_: After ``fit``, the :class:`~dpnotes.accounting.ZCDPAccountant`
            with every spend.
        domain_: After ``fit``, the domain it was fitted on.
    """

    def __init__(self, *, epsilon: float, delta: float) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.rho = epsilon_delta_to_rho(self.epsilon, self.delta)
        self.accountant_: ZCDPAccountant | None = None
        self.domain_: dict[str, int] | None = None

    def fit(
        self, df: pd.DataFrame, domain: Domain, *, rng: np.random.Generator
    ) -> Synthesizer:
        """Fit to ``df`` (codes inside the public ``domain``) and return ``self``.

        An empty table is accepted: the fit then releases noise only. The stratified
        wrapper relies on this, because skipping a stratum that happens to be empty
        would reveal that it is empty.

        Raises:
            ValueError: If the columns do not match the domain, or a value is missing
                or outside it.
            TypeError: If ``rng`` is not a numpy Generator, or a column holds labels
                instead of numbers (encode them with
                :class:`~dpnotes.synth.codebook.Codebook`).
        """
        domain = check_domain(domain)
        rng = check_rng(rng)
        data = check_data(df, domain, allow_empty=True)
        self.accountant_ = ZCDPAccountant(rho=self.rho)
        self._fit(data, domain, rng)
        self.domain_ = domain
        return self

    def sample(self, n: int, *, rng: np.random.Generator) -> pd.DataFrame:
        """Return ``n`` synthetic records (codes in the fitted domain).

        Raises:
            ValueError: If ``n`` is not a positive integer.
            RuntimeError: If called before ``fit``.
        """
        if self.domain_ is None:
            raise RuntimeError(
                f"{type(self).__name__} is not fitted; call fit(df, domain, rng=...) "
                "first."
            )
        n = check_int(n, "n", minimum=1)
        rng = check_rng(rng)
        codes = self._sample(n, rng)
        return pd.DataFrame(
            {a: np.asarray(codes[a], dtype=np.int64) for a in self.domain_}
        )

    @property
    def rho_spent(self) -> float:
        """The zCDP budget spent by the last ``fit`` (0 before fitting)."""
        return 0.0 if self.accountant_ is None else self.accountant_.spent

    @property
    def epsilon_spent(self) -> float:
        """The epsilon at ``delta`` of the budget spent by the last ``fit``."""
        spent = self.rho_spent
        return 0.0 if spent == 0.0 else rho_to_epsilon(spent, self.delta)

    @abc.abstractmethod
    def _fit(self, data: pd.DataFrame, domain: dict[str, int], rng) -> None: ...

    @abc.abstractmethod
    def _sample(self, n: int, rng: np.random.Generator) -> Mapping[str, np.ndarray]: ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}(epsilon={self.epsilon:g}, delta={self.delta:g})"
