"""The stratification authors' code conventions, emulated on the package's synthesizers.

The authors' synthesis results (``lurosenb/stratify_dp``, read at commit ``a4b7078``)
differ from ours in ways their paper does not describe. Each piece here reproduces one
of them on our synthesizers, so that experiment ``strat_synth`` can switch it on alone
(its ``cause`` setting) and show what it moves. They are for measuring the gap, not for
use: the ones marked *not private* read the private records outside any budget.

- :class:`DataDomain` (**not private**): a synthesizer fitted on the domain of the
  values present in its records, as SmartNoise infers it when called without column
  types (``stratified_dataset.py``, ``StratifiedSynthesizer.fit`` calls
  ``synth.fit(strata_df)``).
  Inside a stratum it leaves out every value the stratum does not hold, which only the
  stratified variants gain from.
- :func:`completion_order_counts` and :class:`CompletionOrderStratified` (**not
  private**): ``ParallelStratifiedSynthesizer`` (used for MST and AIM) appends the
  stratum models in the order their fits *complete* (``as_completed``) but samples
  them zipped with the strata in index order, so stratum ``i``'s row count goes to
  another stratum's model. Completion order is emulated as increasing stratum size
  (a smaller stratum fits sooner), read from the training records.
- :func:`recode_present`: the authors' evaluation re-codes a *vanilla* MST or AIM
  sample with category codes computed on the sample itself
  (``generate_results_from_synth_data.py``, ``force_data_categorical_to_numeric``),
  which shifts every code above a value the sample happens not to hold.
- :data:`AUTHORS_GEM`: the settings of the authors' GEM (``gem_synthesizer.py``:
  ``T = 100`` rounds, ``K = 1000`` components, ``alpha = 0.67``, learning rate
  ``1e-4``, 100 steps a round, a 512-wide noise input) on our GEM; and
  :class:`TwoWayWorkload`, AIM with SmartNoise's default workload (every 2-way
  marginal of the domain it is fitted on, :func:`two_way_workload`) where ours fits
  every 3-way one. Both keep the synthesizer private.

References:
    rosenblatt2024stratification; mckenna2022aim; liu2021iterative.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpnotes.synth.base import Synthesizer
from dpnotes.synth.domain import Domain, check_domain
from dpnotes.synth.marginals import Clique, all_kway
from dpnotes.synth.stratified import Stratified, largest_remainder

__all__ = [
    "AUTHORS_GEM",
    "CompletionOrderStratified",
    "DataDomain",
    "TwoWayWorkload",
    "completion_order_counts",
    "recode_present",
    "two_way_workload",
]

#: The authors' GEM settings (``gem_synthesizer.py``, ``GEMSynthesizer.fit``) as
#: keyword arguments of :class:`~dpnotes.synth.gem.GEM`. Their generator's hidden
#: layers and their EMA of the weights have no counterpart here.
AUTHORS_GEM: dict[str, object] = {
    "rounds": 100,
    "components": 1000,
    "alpha": 0.67,
    "lr": 1e-4,
    "steps_per_round": 100,
    "noise_dim": 512,
}


def two_way_workload(domain: Domain) -> list[Clique]:
    """Every 2-way marginal of ``domain``: SmartNoise AIM's default workload.

    >>> two_way_workload({"A": 2, "B": 3, "C": 2})
    [('A', 'B'), ('A', 'C'), ('B', 'C')]
    """
    return all_kway(check_domain(domain), 2)


def recode_present(synth: pd.DataFrame) -> pd.DataFrame:
    """Re-code each column by rank among the values present in it (the authors'
    vanilla re-coding): codes are unchanged where every value occurs, shifted down
    above each value that does not.

    >>> recode_present(pd.DataFrame({"A": [0, 2, 2, 3]}))["A"].tolist()
    [0, 1, 1, 2]
    """
    if not isinstance(synth, pd.DataFrame):
        raise TypeError(f"synth must be a DataFrame, got {type(synth).__name__}.")
    return pd.DataFrame(
        {a: np.unique(synth[a].to_numpy(), return_inverse=True)[1] for a in synth},
        index=synth.index,
    )


class _Wrapper(Synthesizer):
    """A synthesizer that fits a deep copy of ``base`` its own way (same budget)."""

    def __init__(self, base: Synthesizer) -> None:
        self._check_base(base)
        super().__init__(epsilon=base.epsilon, delta=base.delta)
        self.base = base

    @staticmethod
    def _check_base(base: object) -> None:
        if not isinstance(base, Synthesizer):
            raise TypeError(
                f"base must be an unfitted synthesizer, got {type(base).__name__}."
            )

    def _fit_inner(
        self, inner: Synthesizer, data: pd.DataFrame, domain: dict[str, int], rng
    ) -> None:
        self.inner_ = inner.fit(data, domain, rng=rng)
        self.accountant_ = self.inner_.accountant_

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base!r})"


class DataDomain(_Wrapper):
    """**Not private**: ``base`` fitted on the domain of the values its records hold.

    Each attribute's values present in the records are renumbered ``0..m-1``,
    ``base`` (a deep copy) is fitted on that smaller domain, and sampled codes are
    mapped back. An attribute with no records keeps its public size. The budget
    ``base`` spends is accounted as usual, but the domain itself is read from the
    data outside it, so the release is not differentially private.
    """

    def _fit(
        self, data: pd.DataFrame, domain: dict[str, int], rng: np.random.Generator
    ) -> None:
        self.values_ = {
            a: np.unique(data[a].to_numpy()) if len(data) else np.arange(size)
            for a, size in domain.items()
        }
        inner = {a: len(v) for a, v in self.values_.items()}
        codes = pd.DataFrame(
            {a: np.searchsorted(self.values_[a], data[a].to_numpy()) for a in domain}
        )
        self._fit_inner(copy.deepcopy(self.base), codes, inner, rng)

    def _sample(self, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        sample = self.inner_.sample(n, rng=rng)
        return {a: v[sample[a].to_numpy()] for a, v in self.values_.items()}


class TwoWayWorkload(_Wrapper):
    """``base`` (an AIM or another workload-driven synthesizer) fitted with every 2-way
    marginal of the domain it is given as its workload.

    The workload follows the domain, so that inside a stratum, whose domain lacks the
    stratifying attributes, it is the stratum's pairs. The workload is public (it
    depends on the public domain only), so the release stays private.
    """

    @staticmethod
    def _check_base(base: object) -> None:
        if not isinstance(base, Synthesizer) or not hasattr(base, "workload"):
            raise TypeError(
                "base must be an unfitted synthesizer with a workload, such as "
                f"AIM(epsilon=1.0, delta=1e-9); got {type(base).__name__}."
            )

    def _fit(
        self, data: pd.DataFrame, domain: dict[str, int], rng: np.random.Generator
    ) -> None:
        inner = copy.deepcopy(self.base)
        inner.workload = two_way_workload(domain)
        self._fit_inner(inner, data, domain, rng)

    def _sample(self, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        sample = self.inner_.sample(n, rng=rng)
        return {a: sample[a].to_numpy() for a in sample}


def completion_order_counts(
    counts: Sequence[int] | np.ndarray, sizes: Sequence[int] | np.ndarray
) -> np.ndarray:
    """Return the row counts each stratum gets under the authors' ordering slip.

    The stratum models are listed in completion order, emulated as increasing
    ``sizes`` (ties in index order), and zipped with the strata in index order: the
    model listed ``i``-th, stratum ``order[i]``'s, samples ``counts[i]`` rows.

    >>> completion_order_counts([1, 2, 7], sizes=[50, 30, 10]).tolist()
    [7, 2, 1]

    Raises:
        ValueError: If the lengths differ, or a count or size is negative.
    """
    c = np.asarray(counts, dtype=np.int64)
    s = np.asarray(sizes)
    if c.shape != s.shape or c.ndim != 1:
        raise ValueError(
            f"counts and sizes need one entry per stratum; got shapes {c.shape} "
            f"and {s.shape}."
        )
    if (c < 0).any() or (s < 0).any():
        raise ValueError("counts and sizes must be non-negative.")
    out = np.empty_like(c)
    out[np.argsort(s, kind="stable")] = c
    return out


class CompletionOrderStratified(Stratified):
    """**Not private**: :class:`~dpnotes.synth.stratified.Stratified` with the
    authors' ordering slip (:func:`completion_order_counts`), emulating completion
    order by the strata's training sizes, which are read from the private records."""

    def fit(
        self, df: pd.DataFrame, domain: Domain, *, rng: np.random.Generator
    ) -> CompletionOrderStratified:
        super().fit(df, domain, rng=rng)
        keys = np.ravel_multi_index(
            tuple(df[a].to_numpy(dtype=np.int64) for a in self.by),
            tuple(self.domain_[a] for a in self.by),
        )
        self.sizes_ = np.bincount(keys, minlength=len(self.strata_))
        return self

    def _row_counts(self, n: int) -> np.ndarray:
        return completion_order_counts(largest_remainder(n, self.weights_), self.sizes_)

    def __repr__(self) -> str:
        return f"CompletionOrderStratified({self.base!r}, by={self.by})"
