"""Differentially private synthetic data: MST, AIM, GEM, stratification.

- :class:`MST`, :class:`AIM` (graphical models estimated with private-pgm's ``mbi``)
  and :class:`GEM` (a torch generator of product distributions) share the interface
  of :class:`~dpnotes.synth.base.Synthesizer`: ``fit(df, domain, *, rng)`` and
  ``sample(n, *, rng)``.
- :class:`Stratified` fits one synthesizer per stratum of a public list and samples
  ``n * w_i`` rows from stratum ``i``.
- :class:`~dpnotes.synth.codebook.Codebook` encodes a user's own table (labels and
  numbers) into the integer codes of a public domain and decodes synthetic rows back.
- :mod:`dpnotes.synth.marginals` computes marginals, workloads and workload errors.
- :mod:`dpnotes.synth.pgm` is the glue to private-pgm's estimator (MST and AIM).
- :mod:`dpnotes.synth.evaluate` scores a synthetic table against the real data.

Importing the package leaves the caller's JAX configuration alone; estimation switches
on double precision when it first runs (:func:`dpnotes.synth.pgm.enable_float64`).
"""

from dpnotes.synth.aim import AIM
from dpnotes.synth.base import Synthesizer, measure
from dpnotes.synth.codebook import Codebook
from dpnotes.synth.domain import check_data, check_domain
from dpnotes.synth.marginals import all_kway, marginal, workload_error
from dpnotes.synth.mst import MST
from dpnotes.synth.stratified import Stratified, strata_of, stratum_weights

__all__ = [
    "AIM",
    "GEM",
    "MST",
    "Codebook",
    "Stratified",
    "Synthesizer",
    "all_kway",
    "check_data",
    "check_domain",
    "marginal",
    "measure",
    "strata_of",
    "stratum_weights",
    "workload_error",
]


def __getattr__(name: str):
    # GEM needs torch; import it only when asked for, so MST and AIM users do not pay
    # for loading torch.
    if name == "GEM":
        from dpnotes.synth.gem import GEM

        return GEM
    raise AttributeError(f"module 'dpnotes.synth' has no attribute {name!r}")
