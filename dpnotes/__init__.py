"""dpnotes: the computing behind an executable book on the disparate impact of DP.

Subpackages and modules:

- :mod:`dpnotes.accounting` — pure DP, zCDP and (epsilon, delta) conversions,
  composition, and the RDP accounting of DP-SGD.
- :mod:`dpnotes.mechanisms` — Laplace and Gaussian mechanisms, clipped means (including
  the stratification paper's Eq. 1).
- :mod:`dpnotes.mean` — COINPRESS and stratified private means (public, holdout or
  privatised group weights).
- :mod:`dpnotes.bounds` — worst, expected (Dirichlet) and best cases of the stratified
  error; Laplace tail bounds; fitting the Dirichlet parameter.
- :mod:`dpnotes.synth` — private synthetic data: MST, AIM, GEM and the stratified
  wrapper.
- :mod:`dpnotes.dpsgd` — DP-SGD with group-dependent clipping (DPSGD-F).
- :mod:`dpnotes.importance` — feature importance under DP (DPSAGE) and a DP logistic
  regression whose guarantee holds.
- :mod:`dpnotes.metrics` — relative and parity error, group metrics of classifiers.
- :mod:`dpnotes.audit` — empirical privacy audits (a lower bound on epsilon).
- :mod:`dpnotes.data` — loaders for the public data sets the book uses.
- :mod:`dpnotes.experiments` — the experiments behind the book's figures and tables.
- :mod:`dpnotes.lab` — the registry, runner and store of those experiments' results.
- :mod:`dpnotes.report` and :mod:`dpnotes.plotting` — the chapters' shared helpers and
  one figure style for the whole book.
- :mod:`dpnotes.rng` and :mod:`dpnotes.validation` — explicit randomness and input
  checks.
"""

#: The release, in one place: pyproject.toml reads it; CITATION.cff, CHANGELOG.md and
#: the README cite it (tests/test_release.py checks they agree).
__version__ = "0.2.0"
__all__ = ["__version__"]
