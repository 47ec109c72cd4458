"""Stratified synthesis: one synthesizer per stratum of a public list, then a mix.

The stratification paper's wrapper (Rosenblatt, Stoyanovich, Musco 2024, section
"Stratified Data Synthesis"): the records are split by the values of public attributes
(SEX, RAC1P, or both); a copy of the base synthesizer is fitted on each stratum with the
*full* budget, which parallel composition allows because every record is in exactly one
stratum; ``n * w_i`` rows are then sampled from stratum ``i``.

Two choices differ from the authors' code, both for privacy:

- The strata are every combination of the ``by`` attributes' public values. The
  authors dropped strata holding under 0.1% of the records, a decision read off the
  private data. Here every stratum is fitted, even an empty one (its synthesizer then
  releases noise only), and strata can only be left out through a zero public weight.
- The weights are public inputs: known population proportions, or proportions in a
  disjoint public holdout (:func:`stratum_weights`).

Inside a stratum the ``by`` attributes are constant, so each synthesizer models the
remaining attributes only and the constant values are written back when sampling.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping, Sequence
from numbers import Integral

import numpy as np
import pandas as pd

from dpnotes.rng import check_rng
from dpnotes.synth.base import Synthesizer
from dpnotes.synth.codebook import Codebook
from dpnotes.synth.domain import Domain, check_data, check_domain, drop_attributes
from dpnotes.validation import check_int, check_weights

__all__ = ["Stratified", "largest_remainder", "strata_of", "stratum_weights"]

Stratum = tuple[int, ...]


def strata_of(domain: Domain, by: Sequence[str]) -> list[Stratum]:
    """Return every combination of the ``by`` attributes' codes (the public strata).

    >>> strata_of({"SEX": 2, "RAC1P": 3, "AGEP": 5}, ["SEX", "RAC1P"])
    [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    """
    return list(itertools.product(*[range(domain[a]) for a in by]))


def stratum_weights(
    public: pd.DataFrame, domain: Domain, by: Sequence[str]
) -> dict[Stratum, float]:
    """Return the proportion of each stratum in a public table (e.g. a holdout).

    Args:
        public: Public records disjoint from the private ones (codes in ``domain``).
        domain: The public domain.
        by: The stratifying attributes.

    Returns:
        ``{stratum: proportion}`` over :func:`strata_of`, summing to one; a stratum
        absent from ``public`` gets weight zero.

    Privacy:
        None spent: the table must be public and disjoint from the data being
        synthesised.
    """
    domain = check_domain(domain)
    by = _check_by(by, domain)
    public = check_data(public, domain, "public")
    codes = np.ravel_multi_index(
        tuple(public[a].to_numpy() for a in by), tuple(domain[a] for a in by)
    )
    counts = np.bincount(codes, minlength=int(np.prod([domain[a] for a in by])))
    return {
        s: float(c) / len(public)
        for s, c in zip(strata_of(domain, by), counts, strict=True)
    }


def largest_remainder(n: int, weights: np.ndarray) -> np.ndarray:
    """Split ``n`` into integers proportional to ``weights`` (largest remainder).

    >>> largest_remainder(10, np.array([0.25, 0.25, 0.5])).tolist()
    [3, 2, 5]

    Raises:
        ValueError: If ``n`` is negative or ``weights`` are not finite, non-negative
            proportions summing to one.
    """
    n = check_int(n, "n", minimum=0)
    raw = n * check_weights(weights)
    counts = np.floor(raw).astype(np.int64)
    short = int(n - counts.sum())
    if short > 0:
        # Ties go to the earlier stratum (stable sort), so the split is deterministic.
        order = np.argsort(-(raw - counts), kind="stable")
        counts[order[:short]] += 1
    return counts


def _check_by(by: Sequence[str], domain: dict[str, int]) -> list[str]:
    if isinstance(by, str):
        by = [by]
    by = list(by)
    if not by:
        raise ValueError("by is empty; name at least one stratifying attribute.")
    unknown = [a for a in by if a not in domain]
    if unknown:
        raise ValueError(
            f"by names attribute(s) {unknown} that are not in the domain "
            f"{list(domain)}; stratify on declared attributes."
        )
    if len(set(by)) != len(by):
        raise ValueError(f"by lists an attribute twice: {by}.")
    if len(by) == len(domain):
        raise ValueError(
            "by covers every attribute, which leaves nothing to synthesise inside a "
            "stratum; stratify on fewer attributes."
        )
    return by


class Stratified:
    """Fit one copy of ``base`` per public stratum; sample ``n * w_i`` rows from each.

    Args:
        base: An unfitted synthesizer used as a template (each stratum gets a deep
            copy with the same budget and parameters).
        by: The stratifying attribute(s), e.g. ``"SEX"`` or ``["SEX", "RAC1P"]``.
        weights: The public stratum weights: a mapping ``stratum -> weight`` (a stratum
            is a tuple of codes of ``by``; a plain code is accepted for one attribute)
            covering every stratum of :func:`strata_of`, or a sequence in that order.
            They must sum to one.
        codebook: The public :class:`~dpnotes.synth.codebook.Codebook` the data were
            encoded with; given, the keys of a ``weights`` mapping are *labels* of the
            ``by`` attributes (``{"F": 0.51, "M": 0.49}``, or tuples of labels),
            translated to codes through it.

    Raises:
        TypeError: At :meth:`fit`, for weights keyed by labels without a
            ``codebook`` (the message says how to key them by codes).
        ValueError: At :meth:`fit`, for weights that miss or add a stratum, name a
            label the codebook lacks, or do not sum to one.

    Privacy:
        Adding or removing one record changes one stratum's data only, so by parallel
        composition the whole release has the base synthesizer's guarantee
        (``rho_spent`` is the largest spend of any stratum). The strata and the
        weights are public; nothing about which strata are empty is used.

    References:
        rosenblatt2024stratification (Stratified Data Synthesis); mcsherry2009privacy
        (parallel composition).
    """

    def __init__(
        self,
        base: Synthesizer,
        by: str | Sequence[str],
        weights: Mapping | Sequence[float] | np.ndarray,
        *,
        codebook: Codebook | None = None,
    ) -> None:
        if codebook is not None and not isinstance(codebook, Codebook):
            raise TypeError(
                f"codebook must be a dpnotes.synth.Codebook or None, got "
                f"{type(codebook).__name__}."
            )
        if not isinstance(base, Synthesizer):
            raise TypeError(
                "base must be an unfitted synthesizer such as MST(epsilon=1.0, "
                f"delta=1e-9), got {type(base).__name__}."
            )
        self.base = base
        self.by = [by] if isinstance(by, str) else list(by)
        self.weights = weights
        self.codebook = codebook
        self.synthesizers_: dict[Stratum, Synthesizer] | None = None
        self.domain_: dict[str, int] | None = None

    def _weights(self, strata: list[Stratum]) -> np.ndarray:
        w = self.weights
        if isinstance(w, Mapping):
            norm = {(k if isinstance(k, tuple) else (k,)): v for k, v in w.items()}
            norm = {self._stratum_of(k): v for k, v in norm.items()}
            missing = [s for s in strata if s not in norm]
            extra = [k for k in norm if k not in set(strata)]
            if missing or extra:
                raise ValueError(
                    f"weights do not cover the strata: missing {missing[:6]}, unknown "
                    f"{extra[:6]}. Give one weight per stratum of strata_of(domain, "
                    "by) (zero to leave a stratum out)."
                )
            arr = np.array([norm[s] for s in strata], dtype=float)
        else:
            arr = np.asarray(w, dtype=float)
            if arr.shape != (len(strata),):
                raise ValueError(
                    f"weights has {arr.size} entries but there are {len(strata)} "
                    "strata; give one per stratum of strata_of(domain, by), in order."
                )
        return check_weights(arr, len(strata))

    def _stratum_of(self, key: tuple) -> Stratum:
        """The codes of one key of ``weights``: codes as given, or labels translated."""
        if len(key) != len(self.by):
            raise ValueError(
                f"weights key {key!r} has {len(key)} part(s) but the strata are "
                f"combinations of {len(self.by)} attribute(s) {self.by}."
            )
        if self.codebook is None:
            bad = [c for c in key if isinstance(c, bool) or not isinstance(c, Integral)]
            if bad:
                raise TypeError(
                    f"weights are keyed by {key!r}, but a stratum is a tuple of codes "
                    f"0..d-1 of {self.by}; pass codebook= (the Codebook the data were "
                    "encoded with) to key the weights by labels, or key them by "
                    "codes: codebook.categories[attribute].index(label)."
                )
            return tuple(int(c) for c in key)
        codes = []
        for attribute, label in zip(self.by, key, strict=True):
            labels = self.codebook.categories.get(attribute)
            if labels is None:
                raise ValueError(
                    f"{attribute!r} is not a categorical column of the codebook "
                    f"(categorical: {list(self.codebook.categories)}); key its "
                    "weights by bin code, without codebook=."
                )
            if label not in labels:
                raise ValueError(
                    f"weights name label {label!r} of {attribute!r}, which the "
                    f"codebook does not list (labels: {list(labels)[:12]})."
                )
            codes.append(labels.index(label))
        return tuple(codes)

    def fit(
        self, df: pd.DataFrame, domain: Domain, *, rng: np.random.Generator
    ) -> Stratified:
        """Fit one synthesizer per stratum (each on its records, full budget)."""
        domain = check_domain(domain)
        rng = check_rng(rng)
        by = _check_by(self.by, domain)
        strata = strata_of(domain, by)
        self.weights_ = self._weights(strata)
        data = check_data(df, domain, allow_empty=True)
        inner = drop_attributes(domain, by)
        keys = np.ravel_multi_index(
            tuple(data[a].to_numpy() for a in by), tuple(domain[a] for a in by)
        )
        rest = data[list(inner)]
        self.synthesizers_ = {}
        for i, (stratum, child) in enumerate(
            zip(strata, rng.spawn(len(strata)), strict=True)
        ):
            synth = copy.deepcopy(self.base)
            synth.fit(rest[keys == i].reset_index(drop=True), inner, rng=child)
            self.synthesizers_[stratum] = synth
        self.strata_ = strata
        self.domain_ = domain
        return self

    @property
    def rho_spent(self) -> float:
        """The largest zCDP spend of any stratum (parallel composition)."""
        if not self.synthesizers_:
            return 0.0
        return max(s.rho_spent for s in self.synthesizers_.values())

    def _row_counts(self, n: int) -> np.ndarray:
        """The rows each stratum samples: ``n * w_i``, by largest remainder."""
        return largest_remainder(n, self.weights_)

    def sample(self, n: int, *, rng: np.random.Generator) -> pd.DataFrame:
        """Return ``n`` rows: ``n * w_i`` (largest remainder) from stratum ``i``."""
        if self.synthesizers_ is None:
            raise RuntimeError(
                "Stratified is not fitted; call fit(df, domain, rng=...) first."
            )
        n = check_int(n, "n", minimum=1)
        rng = check_rng(rng)
        counts = self._row_counts(n)
        parts = []
        for stratum, m, child in zip(
            self.strata_, counts, rng.spawn(len(self.strata_)), strict=True
        ):
            if m == 0:
                continue
            part = self.synthesizers_[stratum].sample(int(m), rng=child)
            for a, code in zip(self.by, stratum, strict=True):
                part[a] = code
            parts.append(part)
        out = pd.concat(parts, ignore_index=True)[list(self.domain_)]
        return out.iloc[rng.permutation(len(out))].reset_index(drop=True)

    def __repr__(self) -> str:
        return f"Stratified({self.base!r}, by={self.by})"
