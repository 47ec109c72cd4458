"""MST: the winning mechanism of the 2018 NIST synthetic-data challenge.

Pipeline (McKenna, Miklau, Sheldon 2021), with the zCDP budget split in thirds:

1. :func:`measure` every one-way marginal (``rho / 3``);
2. :func:`compress_domain`: values whose noisy count is below ``3 sigma`` are merged
   into one value (post-processing of step 1);
3. :func:`select_tree`: a maximum spanning tree over attribute pairs, each edge chosen
   with the exponential mechanism, scored by how badly the one-way model explains the
   pair (``rho / 3``);
4. measure the tree's two-way marginals (``rho / 3``);
5. estimate a graphical model with mbi and sample from it; merged values are expanded
   uniformly at random.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpnotes.mechanisms import exponential_mechanism, exponential_mechanism_epsilon
from dpnotes.synth import pgm
from dpnotes.synth.base import Synthesizer, measure
from dpnotes.synth.domain import Domain
from dpnotes.synth.marginals import Clique, marginal
from dpnotes.validation import check_int, check_positive

_OneWay = tuple[Clique, np.ndarray, float, "pgm.ScaledQuery | None"]

__all__ = ["MST", "Compression", "compress_domain", "select_tree"]


@dataclass(frozen=True)
class Compression:
    """How :func:`compress_domain` merged rare values of each attribute.

    Attributes:
        domain: The compressed domain.
        maps: ``attr -> array`` mapping each original code to its compressed code.
        merged: ``attr -> original codes`` merged into the last compressed value
            (empty when nothing was merged).
    """

    domain: dict[str, int]
    maps: dict[str, np.ndarray]
    merged: dict[str, np.ndarray]

    def transform(self, data: pd.DataFrame) -> pd.DataFrame:
        """Map original codes to compressed codes."""
        return pd.DataFrame({a: self.maps[a][data[a].to_numpy()] for a in self.domain})

    def expand(self, codes: dict[str, np.ndarray], rng) -> dict[str, np.ndarray]:
        """Map compressed codes back, drawing merged values uniformly at random."""
        out = {}
        for a, c in codes.items():
            merged = self.merged[a]
            if merged.size == 0:
                out[a] = c
                continue
            kept = np.flatnonzero(self.maps[a] < self.domain[a] - 1)
            kept = kept[np.argsort(self.maps[a][kept])]
            full = np.empty_like(c)
            is_merged = c == self.domain[a] - 1
            full[~is_merged] = kept[c[~is_merged]]
            full[is_merged] = rng.choice(merged, size=int(is_merged.sum()))
            out[a] = full
        return out


def compress_domain(
    domain: Domain,
    oneway: dict[Clique, np.ndarray],
    *,
    sigma: float,
    threshold: float = 3.0,
) -> tuple[Compression, list[_OneWay]]:
    """Merge values whose noisy one-way count is below ``threshold * sigma``.

    Args:
        domain: The public domain.
        oneway: ``{(attr,): noisy counts}`` for every attribute.
        sigma: The noise std of the one-way measurements.
        threshold: Merge values with noisy count ``< threshold * sigma``.

    Returns:
        The :class:`Compression` and the one-way measurements re-expressed on the
        compressed domain as ``(clique, y, sigma, query)``; the merged cell's sum is
        scaled by ``1/sqrt(m)`` (and so is the query), which keeps its noise std at
        ``sigma``.

    Privacy:
        Post-processing of the noisy one-way marginals.

    References:
        mckenna2021winning, Section 4 (domain compression).
    """
    new_domain, maps, merged, measured = {}, {}, {}, []
    for attr, size in domain.items():
        y = np.asarray(oneway[(attr,)], dtype=float)
        keep = y >= threshold * sigma
        if keep.all():
            new_domain[attr] = size
            maps[attr] = np.arange(size)
            merged[attr] = np.zeros(0, dtype=np.int64)
            measured.append(((attr,), y, sigma, None))
            continue
        k = int(keep.sum())
        mapping = np.full(size, k)
        mapping[keep] = np.arange(k)
        m = size - k
        scale = 1.0 / np.sqrt(m)
        y2 = np.append(y[keep], y[~keep].sum() * scale)
        weights = tuple([1.0] * k + [scale])
        new_domain[attr] = k + 1
        maps[attr] = mapping
        merged[attr] = np.flatnonzero(~keep)
        measured.append(((attr,), y2, sigma, pgm.ScaledQuery(weights)))
    return Compression(new_domain, maps, merged), measured


def independent_pair_marginals(
    model, domain: Domain, pairs: list[Clique]
) -> dict[Clique, np.ndarray]:
    """Return the pair marginals of a model whose cliques are single attributes.

    Such a model makes the attributes independent, so the marginal of ``(a, b)`` is the
    outer product of the two one-way marginals divided by the total: what mbi's
    projection of each pair gives, up to rounding, without compiling one program per
    pair (the cost of a cold MST fit on many attributes).

    Args:
        model: A fitted mbi model of one-way cliques only.
        domain: Its public domain.
        pairs: The pairs to answer, each in domain order.

    Returns:
        ``{pair: counts}``, flattened in C order (the layout of
        :func:`~dpnotes.synth.marginals.marginal`).

    Raises:
        ValueError: If a clique of the model has more than one attribute.
    """
    wide = [c for c in model.cliques if len(c) != 1]
    if wide:
        raise ValueError(
            f"the model has cliques {wide} of several attributes; its pair marginals "
            "are not products: use pgm.model_marginals"
        )
    oneway = pgm.model_marginals(model, domain, [(a,) for a in domain])
    total = float(model.total)
    return {
        (a, b): np.outer(oneway[(a,)], oneway[(b,)]).ravel() / total for a, b in pairs
    }


def select_tree(
    data: pd.DataFrame,
    domain: Domain,
    model_marginals: dict[Clique, np.ndarray],
    *,
    epsilon: float,
    rng: np.random.Generator,
) -> list[Clique]:
    """Choose a spanning tree edge by edge with the exponential mechanism.

    Each candidate pair ``(a, b)`` is scored by ``||M_ab(D) - M_ab(model)||_1``, how
    badly the current (one-way) model explains it; Kruskal's rule (never close a cycle)
    keeps the result a tree. ``d - 1`` selections are made.

    Args:
        data: Codes in ``domain``.
        domain: The (compressed) domain.
        model_marginals: The model's marginal of every attribute pair.
        epsilon: The epsilon of each selection.
        rng: The random generator.

    Returns:
        The selected edges, in the order chosen.

    Privacy:
        Each score has sensitivity 1 under adding or removing a record (the model is
        post-processing of earlier noisy measurements), so each selection is
        ``epsilon``-DP and ``epsilon**2 / 8``-zCDP.

    References:
        mckenna2021winning, Algorithm 1 (select step).
    """
    attrs = list(domain)
    pairs = list(itertools.combinations(attrs, 2))
    scores = np.array(
        [np.abs(marginal(data, domain, p) - model_marginals[p]).sum() for p in pairs]
    )
    component = {a: a for a in attrs}

    def root(a: str) -> str:
        while component[a] != a:
            component[a] = component[component[a]]
            a = component[a]
        return a

    chosen: list[Clique] = []
    for _ in range(len(attrs) - 1):
        open_idx = [i for i, (a, b) in enumerate(pairs) if root(a) != root(b)]
        pick = open_idx[
            int(
                exponential_mechanism(
                    scores[open_idx], epsilon=epsilon, sensitivity=1.0, rng=rng
                )
            )
        ]
        a, b = pairs[pick]
        component[root(a)] = root(b)
        chosen.append(pairs[pick])
    return chosen


class MST(Synthesizer):
    """MST synthesizer (one-way marginals plus a privately chosen tree of pairs).

    Args:
        epsilon: Privacy budget (with ``delta``), converted to zCDP.
        delta: Its delta, in (0, 1).
        iters: Mirror-descent iterations of the final mbi estimate.
        compress_threshold: Merge values with noisy count below this many ``sigma``.

    Privacy:
        ``(epsilon, delta)``-DP under adding or removing one record: three thirds of
        ``rho`` (one-way marginals, tree selection, two-way marginals), each spend
        recorded in ``accountant_``.

    References:
        mckenna2021winning.

    Examples:
        >>> import pandas as pd, numpy as np
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"A": rng.integers(0, 2, 500),
        ...                    "B": rng.integers(0, 3, 500)})
        >>> mst = MST(epsilon=1.0, delta=1e-6).fit(df, {"A": 2, "B": 3}, rng=rng)
        >>> mst.sample(10, rng=rng).shape
        (10, 2)
        >>> mst.rho_spent <= mst.rho * (1 + 1e-9)
        True
    """

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float,
        iters: int = 3000,
        compress_threshold: float = 3.0,
    ) -> None:
        super().__init__(epsilon=epsilon, delta=delta)
        self.iters = check_int(iters, "iters", minimum=1)
        self.compress_threshold = check_positive(
            compress_threshold, "compress_threshold"
        )

    def _fit(self, data: pd.DataFrame, domain: dict[str, int], rng) -> None:
        acc = self.accountant_
        d = len(domain)
        # With one attribute there is no tree: the whole budget measures it.
        share = self.rho / 3.0 if d > 1 else self.rho
        sigma1 = np.sqrt(d / (2.0 * share))
        acc.spend(d / (2.0 * sigma1**2), "one-way marginals")
        oneway = measure(data, domain, [(a,) for a in domain], sigma=sigma1, rng=rng)
        comp, oneway_measured = compress_domain(
            domain, oneway, sigma=sigma1, threshold=self.compress_threshold
        )
        cdata = comp.transform(data)
        log = pgm.MeasurementLog(comp.domain)
        for clique, y, sigma, query in oneway_measured:
            log.add(clique, y, sigma, query)
        self.tree_: list[Clique] = []
        if d > 1:
            model = pgm.estimate(log, iters=self.iters // 3)
            pairs = list(itertools.combinations(comp.domain, 2))
            est = independent_pair_marginals(model, comp.domain, pairs)
            eps_each = exponential_mechanism_epsilon(rho=share / (d - 1))
            for _ in range(d - 1):
                acc.spend(eps_each**2 / 8.0, "tree edge selection")
            self.tree_ = select_tree(cdata, comp.domain, est, epsilon=eps_each, rng=rng)
            sigma2 = np.sqrt((d - 1) / (2.0 * share))
            acc.spend((d - 1) / (2.0 * sigma2**2), "two-way marginals")
            for clique, y in measure(
                cdata, comp.domain, self.tree_, sigma=sigma2, rng=rng
            ).items():
                log.add(clique, y, sigma2)
        self.compression_ = comp
        self.log_ = log
        self.model_ = pgm.estimate(log, iters=self.iters)

    def _sample(self, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        codes = pgm.sample_model(self.model_, self.compression_.domain, n, rng=rng)
        return self.compression_.expand(codes, rng)
