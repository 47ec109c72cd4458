"""Glue to private-pgm's estimation engine (``mbi`` 2.0, JAX).

Three things live here:

- :class:`MeasurementLog` keeps noisy marginals in a *canonical* form: measurements of
  the same clique (and query) are merged by inverse-variance weighting, which leaves
  the least-squares loss unchanged up to a constant, and the list handed to mbi is
  sorted. mbi compiles one program per clique structure (seconds); equal structures
  then hit JAX's cache (milliseconds), so canonical order is what lets strata, seeds
  and rounds with the same cliques reuse a compiled estimator.
- :func:`estimate` runs mbi's mirror descent.
- :func:`model_marginals` and :func:`sample_model` read marginals from, and sample
  records from, a fitted model with an explicit numpy generator (mbi's own sampler
  uses the global numpy state). For domains of at most :data:`FULL_JOINT_CELLS` cells
  the model's joint table is materialised once, which answers hundreds of marginal
  queries far faster than one variable elimination each.

Importing this module leaves the caller's JAX configuration alone. mbi needs double
precision, so every function here that hands data to mbi or JAX first calls
:func:`enable_float64`, and mbi itself is imported on first use, after it; JAX's
persistent compilation cache is then switched off unless the caller gave it a folder.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING

import jax
import numpy as np

from dpnotes.synth.domain import Domain, domain_cells
from dpnotes.synth.marginals import Clique

if TYPE_CHECKING:
    import mbi

__all__ = [
    "FULL_JOINT_CELLS",
    "MAX_COMPILED",
    "MeasurementLog",
    "ScaledQuery",
    "enable_float64",
    "estimate",
    "estimate_total",
    "joint_table",
    "mbi_domain",
    "model_marginals",
    "model_size_mb",
    "sample_model",
]


def enable_float64() -> None:
    """Turn on JAX's double precision, which mbi needs, if it is not on already.

    mbi needs double precision to converge on counts in the tens of thousands. The
    switch is made here, when estimation runs, rather than when :mod:`dpnotes.synth`
    is imported, so that importing the package leaves the caller's JAX configuration
    alone.
    """
    if not jax.config.jax_enable_x64:
        jax.config.update("jax_enable_x64", True)


@functools.cache
def _mbi() -> ModuleType:
    # Runs once, when estimation first needs mbi. mbi's maintainers advise against
    # JAX's persistent compilation cache for its many small programs: unless the
    # caller has given the cache a folder (as the experiment runner does in its
    # workers, where programs recur across processes), it is switched off here. mbi
    # is imported only after double precision is on, since every array it makes must
    # be float64; its warning about the cache is silenced where a folder was chosen.
    enable_float64()
    if not jax.config.jax_compilation_cache_dir:
        jax.config.update("jax_enable_compilation_cache", False)
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="JAX persistent compilation cache is enabled"
        )
        import mbi
        import mbi.estimation
        import mbi.junction_tree
        import mbi.marginal_loss
    return mbi


#: Domains up to this many cells are handled through the materialised joint table. A
#: speed setting only (a marginal has the same value either way); no environment
#: variable changes it: assign the module attribute to, as the tests do.
FULL_JOINT_CELLS = 1 << 22


@dataclasses.dataclass(frozen=True)
class ScaledQuery:
    """The marginal's cells multiplied by fixed weights (hashable by value).

    MST uses it to give a merged ("compressed") cell the same noise scale as the
    others. mbi's own ``WeightedQuery`` hashes by identity, which would force a new
    compilation for every fit; equal weights here give equal hashes.
    """

    weights: tuple[float, ...]

    def __call__(self, factor):
        return factor.datavector() * jax.numpy.asarray(self.weights)

    def op_norm_sq(self) -> float:
        """Return ``max(w**2)``, the squared operator norm mbi asks a query for."""
        return float(max(w * w for w in self.weights))


def mbi_domain(domain: Domain) -> mbi.Domain:
    """Return the mbi ``Domain`` of a public domain mapping.

    Args:
        domain: ``attribute -> number of codes``.

    Returns:
        The same domain as mbi's ``Domain``.
    """
    return _mbi().Domain(list(domain), [int(s) for s in domain.values()])


class MeasurementLog:
    """Noisy marginals gathered by a synthesizer, merged per clique.

    Each entry keeps the precision-weighted sum ``sum_i y_i / sigma_i**2`` and the
    total precision ``sum_i 1 / sigma_i**2``; the merged measurement is their ratio with
    standard deviation ``precision ** -0.5`` (the minimum-variance combination).
    """

    def __init__(self, domain: Domain) -> None:
        self.domain = dict(domain)
        self._entries: dict[tuple[Clique, ScaledQuery | None], list] = {}

    def add(
        self,
        clique: Clique,
        y: np.ndarray,
        sigma: float,
        query: ScaledQuery | None = None,
    ) -> None:
        """Record one noisy measurement ``y`` of ``clique`` with noise std ``sigma``."""
        key = (tuple(clique), query)
        precision = 1.0 / float(sigma) ** 2
        y = np.asarray(y, dtype=float)
        if key in self._entries:
            entry = self._entries[key]
            entry[0] = entry[0] + y * precision
            entry[1] += precision
        else:
            self._entries[key] = [y * precision, precision]

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def cliques(self) -> list[Clique]:
        """The distinct measured cliques, in canonical order."""
        return sorted({cl for cl, _ in self._entries}, key=self._order)

    def _order(self, clique: Clique) -> tuple:
        pos = {a: i for i, a in enumerate(self.domain)}
        return (len(clique), [pos[a] for a in clique])

    def value(self, clique: Clique) -> tuple[np.ndarray, float]:
        """Return the merged identity-query measurement of ``clique`` and its std."""
        weighted, precision = self._entries[(tuple(clique), None)]
        return weighted / precision, precision**-0.5

    def measurements(self) -> list[mbi.LinearMeasurement]:
        """Return the merged measurements as mbi objects, in canonical order."""
        keys = sorted(
            self._entries,
            key=lambda k: (self._order(k[0]), () if k[1] is None else k[1].weights),
        )
        out = []
        for clique, query in keys:
            weighted, precision = self._entries[(clique, query)]
            kwargs = {} if query is None else {"query": query}
            out.append(
                _mbi().LinearMeasurement(
                    weighted / precision, clique, stddev=precision**-0.5, **kwargs
                )
            )
        return out


@functools.cache
def _estimator():
    return _mbi().estimation.MirrorDescent()


#: Compiled estimators kept at most: each holds tens of megabytes of machine code, and
#: AIM compiles one per round, so a long experiment would otherwise run out of memory.
#: When a new structure would exceed the limit, the whole cache is dropped (JAX offers
#: no finer eviction); recently seen structures are then compiled again.
#: A memory setting only; assign the module attribute to change it.
MAX_COMPILED = 32
_COMPILED: set[tuple] = set()


@functools.partial(jax.jit, static_argnums=0)
def _mirror_descent(domain: mbi.Domain, loss_fn, total, potentials, iters):
    # The same steps as mbi's ``MirrorDescent().estimate``, compiled as one program:
    # mbi runs its initial and final steps eagerly, which costs a dozen small
    # compilations per new clique structure, and these dominate AIM's run time.
    estimator = _estimator()
    state = estimator._init(domain, loss_fn, total, warm_start=potentials)
    state = jax.lax.fori_loop(
        0, iters, lambda _, s: estimator._step(s, loss_fn, total, ()), state
    )
    return estimator._finalize(state, total)


def estimate_total(measurements: Sequence[mbi.LinearMeasurement]) -> float:
    """Return the inverse-variance average of the measurements' noisy totals.

    An identity query's total is ``sum(y)`` with variance ``sigma**2 * cells``; a
    :class:`ScaledQuery` with weights ``w`` measures ``w * x``, so its total is
    ``sum(y / w)`` with variance ``sigma**2 * sum(1 / w**2)``. mbi's own estimate skips
    scaled queries, which leaves a model of a single record when every one-way
    marginal was compressed. The result is floored at 1.
    """
    estimates, precisions = [], []
    for m in measurements:
        y = np.asarray(m.noisy_measurement, dtype=float)
        w = np.asarray(getattr(m.query, "weights", np.ones(y.size)), dtype=float)
        estimates.append(float(np.sum(y / w)))
        precisions.append(1.0 / (float(m.stddev) ** 2 * float(np.sum(1.0 / w**2))))
    if not estimates:
        return 1.0
    return max(1.0, float(np.average(estimates, weights=precisions)))


def estimate(
    log: MeasurementLog,
    *,
    iters: int,
    warm_start: mbi.MarkovRandomField | None = None,
) -> mbi.MarkovRandomField:
    """Fit a graphical model to the measurements with mbi's mirror descent.

    The steps are those of ``mbi.estimation.MirrorDescent().estimate`` (Armijo line
    search), compiled as a single program per clique structure.

    Args:
        log: The measurements.
        iters: Mirror-descent iterations.
        warm_start: A previous model whose potentials start the optimisation.

    Returns:
        mbi's ``MarkovRandomField``; its ``total`` is :func:`estimate_total`.
    """
    enable_float64()
    domain = mbi_domain(log.domain)
    measurements = log.measurements()
    total = estimate_total(measurements)
    loss_fn = _mbi().marginal_loss.from_linear_measurements(measurements, domain)
    potentials = None if warm_start is None else warm_start.potentials
    if potentials is not None:
        potentials = potentials.expand(loss_fn.cliques)
    key = (tuple(log.domain.items()), tuple(loss_fn.cliques), potentials is None)
    if key not in _COMPILED:
        if len(_COMPILED) >= MAX_COMPILED:
            _mirror_descent.clear_cache()
            _COMPILED.clear()
        _COMPILED.add(key)
    return _mirror_descent(domain, loss_fn, total, potentials, int(iters))


def model_size_mb(domain: Domain, cliques: Sequence[Clique]) -> float:
    """Return the size of the junction tree of ``cliques`` in megabytes (mbi's rule).

    Args:
        domain: The public domain.
        cliques: The model's cliques.

    Returns:
        The size mbi would allocate for the model's potentials, in megabytes.
    """
    return float(
        _mbi().junction_tree.hypothetical_model_size(mbi_domain(domain), cliques)
    )


def _log_joint(model: mbi.MarkovRandomField, domain: Domain) -> np.ndarray:
    attrs = list(domain)
    shape = tuple(domain[a] for a in attrs)
    log_p = np.zeros(shape)
    for _clique, factor in model.potentials.tables.items():
        values = np.asarray(factor.values)
        axes = [attrs.index(a) for a in factor.domain.attributes]
        order = np.argsort(axes)
        table = np.transpose(values, order)
        full_shape = [1] * len(attrs)
        for ax in sorted(axes):
            full_shape[ax] = shape[ax]
        log_p = log_p + table.reshape(full_shape)
    return log_p


def joint_table(model: mbi.MarkovRandomField, domain: Domain) -> np.ndarray:
    """Return the model's joint distribution over the whole domain (sums to 1).

    Args:
        model: A fitted mbi model.
        domain: Its public domain (the order of the axes).

    Returns:
        An array with one axis per attribute, in domain order.
    """
    log_p = _log_joint(model, domain)
    log_p = log_p - log_p.max()
    p = np.exp(log_p)
    return p / p.sum()


def _marginals_from_joint(
    p: np.ndarray, domain: Domain, cliques: Iterable[Clique]
) -> dict[Clique, np.ndarray]:
    attrs = list(domain)
    # Summing out one attribute first shrinks the table for every query that does not
    # need it; each query then reduces the smallest cached parent.
    parents: dict[str, np.ndarray] = {}
    out: dict[Clique, np.ndarray] = {}
    for clique in cliques:
        keep = {attrs.index(a) for a in clique}
        free = [a for a in attrs if a not in clique]
        if free:
            drop = max(free, key=lambda a: domain[a])
            if drop not in parents:
                parents[drop] = p.sum(axis=attrs.index(drop))
            base = parents[drop]
            base_attrs = [a for a in attrs if a != drop]
        else:
            base, base_attrs = p, attrs
        axes = tuple(i for i, a in enumerate(base_attrs) if a not in clique)
        table = base.sum(axis=axes) if axes else base
        # The remaining axes are in domain order, as canonical cliques are.
        assert len(keep) == table.ndim
        out[tuple(clique)] = table.reshape(-1)
    return out


def model_marginals(
    model: mbi.MarkovRandomField,
    domain: Domain,
    cliques: Iterable[Clique],
    *,
    joint: np.ndarray | None = None,
) -> dict[Clique, np.ndarray]:
    """Return the model's marginals (counts, scaled to ``model.total``) for ``cliques``.

    Small domains use the materialised joint table (pass ``joint`` to reuse one);
    larger ones mbi's variable elimination.

    Args:
        model: A fitted mbi model.
        domain: Its public domain.
        cliques: The cliques to answer, each in domain order.
        joint: The model's :func:`joint_table`, if already computed.

    Returns:
        ``{clique: counts}``, flattened in C order (the layout of
        :func:`~dpnotes.synth.marginals.marginal`).
    """
    enable_float64()
    cliques = [tuple(c) for c in cliques]
    total = float(model.total)
    if joint is not None or domain_cells(domain) <= FULL_JOINT_CELLS:
        p = joint_table(model, domain) if joint is None else joint
        return {
            c: v * total for c, v in _marginals_from_joint(p, domain, cliques).items()
        }
    return {c: np.asarray(model.project(c).datavector()) for c in cliques}


def sample_model(
    model: mbi.MarkovRandomField,
    domain: Domain,
    n: int,
    *,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """Draw ``n`` i.i.d. records from the model's distribution.

    Small domains sample cells of the joint table directly; larger ones sample one
    attribute at a time along mbi's junction-tree elimination order, each conditioned
    on the attributes it shares a maximal clique with (exact for the model).

    Args:
        model: A fitted mbi model.
        domain: Its public domain.
        n: The number of records.
        rng: The random generator (mbi's own sampler would use numpy's global one).

    Returns:
        ``{attribute: int64 codes of length n}``, in domain order.
    """
    enable_float64()
    attrs = list(domain)
    if n == 0:
        return {a: np.zeros(0, dtype=np.int64) for a in attrs}
    if domain_cells(domain) <= FULL_JOINT_CELLS:
        p = joint_table(model, domain).reshape(-1)
        flat = rng.choice(p.size, size=n, p=p)
        codes = np.unravel_index(flat, tuple(domain[a] for a in attrs))
        return {a: c.astype(np.int64) for a, c in zip(attrs, codes, strict=True)}
    return _sample_sequential(model, domain, n, rng)


def _sample_sequential(
    model: mbi.MarkovRandomField,
    domain: Domain,
    n: int,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    mdom = mbi_domain(domain)
    jtree, order = _mbi().junction_tree.make_junction_tree(mdom, list(model.cliques))
    maximal = [set(cl) for cl in jtree.nodes]
    data: dict[str, np.ndarray] = {}
    for col in order[::-1]:
        linked = set().union(*[cl for cl in maximal if col in cl])
        parents = [a for a in domain if a in data and a in linked]
        clique = tuple(a for a in domain if a in parents or a == col)
        table = np.asarray(model.project(clique).datavector(flatten=False), float)
        # Move ``col`` last so that rows are conditional distributions.
        table = np.moveaxis(table, clique.index(col), -1)
        table = np.maximum(table, 0.0)
        if parents:
            rows = table[tuple(data[a] for a in parents)]
        else:
            rows = np.broadcast_to(table, (n, table.shape[-1]))
        sums = rows.sum(axis=1, keepdims=True)
        uniform = np.full_like(rows, 1.0 / rows.shape[1])
        probs = np.where(sums > 0, rows / np.where(sums > 0, sums, 1.0), uniform)
        cdf = np.cumsum(probs, axis=1)
        u = rng.random((n, 1)) * cdf[:, -1:]
        data[col] = np.minimum((u > cdf).sum(axis=1), domain[col] - 1).astype(np.int64)
    return {a: data[a] for a in domain}
