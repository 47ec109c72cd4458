"""AIM: an adaptive and iterative mechanism for workload-aware synthetic data.

McKenna, Mullins, Sheldon, Miklau (2022), Algorithm 1, on mbi:

1. measure every one-way marginal;
2. repeat: pick the candidate marginal (the workload's downward closure, weighted by
   its overlap with the workload) that the current model answers worst, with the
   exponential mechanism, among candidates whose addition keeps the model under a
   size cap that grows with the budget spent; measure it with Gaussian noise;
   re-estimate the model (warm-started);
3. *anneal*: when re-estimation barely changed the model on the new clique (less than
   the noise could explain), halve ``sigma`` and double the selection ``epsilon``;
4. when the remaining budget covers at most two more rounds, spend it all on one last
   round; estimate the final model and sample from it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpnotes.mechanisms import exponential_mechanism
from dpnotes.synth import pgm
from dpnotes.synth.base import Synthesizer, measure
from dpnotes.synth.domain import domain_cells
from dpnotes.synth.marginals import (
    Clique,
    all_kway,
    canonical,
    downward_closure,
    marginal,
)
from dpnotes.validation import (
    check_int,
    check_positive,
    check_probability,
    check_workload,
)

__all__ = ["AIM", "allowed_candidates", "candidate_weights", "select_worst"]


def candidate_weights(
    workload: Sequence[Clique], domain: dict[str, int], weights: Sequence[float]
) -> dict[Clique, float]:
    """Weight every clique of the workload's downward closure by its overlap.

    ``w(r) = sum_{s in W} c_s |r & s|``: a marginal that shares more attributes with
    more workload marginals is worth more.

    Args:
        workload: The workload's cliques ``W``.
        domain: Number of codes per attribute.
        weights: The weight ``c_s`` of each workload clique, in the same order.

    Returns:
        The weight of every clique of the downward closure.

    References:
        mckenna2022aim, Section 4 (candidate set and weights).

    Examples:
        >>> candidate_weights([("A", "B")], {"A": 2, "B": 2}, [1.0])
        {('A',): 1.0, ('B',): 1.0, ('A', 'B'): 2.0}
    """
    out = {}
    for cand in downward_closure(workload, domain):
        out[cand] = float(
            sum(
                c * len(set(cand) & set(s))
                for s, c in zip(workload, weights, strict=True)
            )
        )
    return out


def allowed_candidates(
    candidates: Sequence[Clique],
    measured: Sequence[Clique],
    domain: dict[str, int],
    *,
    size_limit: float,
    size_cache: dict[frozenset, float] | None = None,
) -> list[Clique]:
    """Return the candidates a round may select without outgrowing the size cap.

    A candidate inside the downward closure of the measured cliques adds nothing to
    the model and is always allowed; any other is allowed when the junction tree of
    the measured cliques plus it takes at most ``size_limit`` megabytes.

    Args:
        candidates: The candidate cliques, in order.
        measured: The cliques measured so far.
        domain: The public domain.
        size_limit: The cap in megabytes for this round (AIM grows it with the
            budget spent: ``max_model_size * spent_after / rho``).
        size_cache: Model sizes already computed, keyed by the set of cliques;
            filled in as sizes are computed (they repeat from round to round).

    Returns:
        The allowed candidates, in the order given.

    Privacy:
        Reads only public information (the domain and the cliques already chosen).

    References:
        mckenna2022aim, Algorithm 1 (the model-size filter).
    """
    size_cache = {} if size_cache is None else size_cache
    measured = list(measured)
    free = set(downward_closure(measured, domain))
    allowed = []
    for cl in candidates:
        if cl in free:
            allowed.append(cl)
            continue
        key = frozenset([*measured, cl])
        if key not in size_cache:
            size_cache[key] = pgm.model_size_mb(domain, [*measured, cl])
        if size_cache[key] <= size_limit:
            allowed.append(cl)
    return allowed


def select_worst(
    errors: np.ndarray,
    weights: np.ndarray,
    *,
    epsilon: float,
    rng: np.random.Generator,
) -> int:
    """Pick the candidate with the largest weighted error, privately.

    Args:
        errors: ``||M_r(D) - M_r(model)||_1 - sqrt(2/pi) sigma n_r`` per candidate (the
            error in excess of what the noise of a new measurement would add).
        weights: Candidate weights ``w_r``.
        epsilon: The selection budget.
        rng: The random generator.

    Returns:
        The index of the chosen candidate.

    Privacy:
        The score ``w_r * errors_r`` changes by at most ``w_r`` when a record is added
        or removed, so the sensitivity is ``max_r w_r``: ``epsilon``-DP,
        ``epsilon**2 / 8``-zCDP.

    References:
        mckenna2022aim, Algorithm 1 (selection step).
    """
    return int(
        exponential_mechanism(
            weights * errors,
            epsilon=epsilon,
            sensitivity=float(np.max(weights)),
            rng=rng,
        )
    )


class AIM(Synthesizer):
    """AIM synthesizer: workload-aware selection, budget annealing, mbi estimation.

    Args:
        epsilon: Privacy budget (with ``delta``), converted to zCDP.
        delta: Its delta, in (0, 1).
        workload: Cliques to optimise for; default all 3-way marginals.
        workload_weights: Weight per workload clique; default 1.
        rounds: The initial number of rounds ``T`` that sets the first noise scales;
            default ``16 * d`` as in the paper (annealing usually ends sooner).
        max_model_size: Cap on the junction-tree size in megabytes (paper: 80).
        alpha: Share of each round's budget spent on measurement (paper: 0.9).
        iters: Mirror-descent iterations per round (warm-started).
        final_iters: Iterations of the final estimate.

    Privacy:
        ``(epsilon, delta)``-DP under adding or removing one record; every selection
        (``eps**2/8``) and measurement (``1/(2 sigma**2)``) is recorded in
        ``accountant_`` and the last round spends exactly what is left.

    References:
        mckenna2022aim.
    """

    def __init__(
        self,
        *,
        epsilon: float,
        delta: float,
        workload: Sequence[Sequence[str]] | None = None,
        workload_weights: Sequence[float] | None = None,
        rounds: int | None = None,
        max_model_size: float = 80.0,
        alpha: float = 0.9,
        iters: int = 1000,
        final_iters: int = 3000,
    ) -> None:
        super().__init__(epsilon=epsilon, delta=delta)
        self.workload = check_workload(workload)
        self.workload_weights = workload_weights
        self.rounds = None if rounds is None else check_int(rounds, "rounds", minimum=1)
        self.max_model_size = check_positive(max_model_size, "max_model_size")
        self.alpha = check_probability(alpha, "alpha")
        self.iters = check_int(iters, "iters", minimum=1)
        self.final_iters = check_int(final_iters, "final_iters", minimum=1)

    def _workload(self, domain: dict[str, int]) -> tuple[list[Clique], np.ndarray]:
        if self.workload is None:
            workload = all_kway(domain, 3)
        else:
            workload = [canonical(c, domain) for c in self.workload]
        c = (
            np.ones(len(workload))
            if self.workload_weights is None
            else np.asarray(self.workload_weights, dtype=float)
        )
        if c.shape != (len(workload),) or np.any(c < 0) or not np.all(np.isfinite(c)):
            raise ValueError(
                f"workload_weights must be {len(workload)} non-negative numbers, one "
                "per workload clique."
            )
        return workload, c

    def _fit(self, data: pd.DataFrame, domain: dict[str, int], rng) -> None:
        acc = self.accountant_
        rho, alpha = self.rho, self.alpha
        d = len(domain)
        workload, c = self._workload(domain)
        cand_w = candidate_weights(workload, domain, c)
        candidates = list(cand_w)
        answers = {cl: marginal(data, domain, cl) for cl in candidates}
        cells = {cl: domain_cells(domain, cl) for cl in candidates}

        rounds = self.rounds or 16 * d
        if rounds <= alpha * d:
            raise ValueError(
                f"rounds={rounds} must exceed alpha * d = {alpha * d:g}: the one-way "
                "marginals alone would use the whole budget. Use more rounds (the "
                "paper's default is 16 * d)."
            )
        sigma = math.sqrt(rounds / (2.0 * alpha * rho))
        epsilon = math.sqrt(8.0 * (1.0 - alpha) * rho / rounds)

        log = pgm.MeasurementLog(domain)
        oneway = [(a,) for a in domain]
        acc.spend(d / (2.0 * sigma**2), "one-way marginals")
        for clique, y in measure(data, domain, oneway, sigma=sigma, rng=rng).items():
            log.add(clique, y, sigma)
        model = pgm.estimate(log, iters=self.iters)

        self.history_: list[dict] = []
        size_cache: dict[frozenset, float] = {}
        terminate = False
        while not terminate:
            remaining = rho - acc.spent
            if remaining < 2.0 * (0.5 / sigma**2 + epsilon**2 / 8.0):
                # Spend everything that is left on one last round.
                sigma = math.sqrt(1.0 / (2.0 * alpha * remaining))
                epsilon = math.sqrt(8.0 * (1.0 - alpha) * remaining)
                terminate = True
            spent_after = acc.spent + 0.5 / sigma**2 + epsilon**2 / 8.0
            size_limit = self.max_model_size * spent_after / rho
            allowed = allowed_candidates(
                candidates,
                log.cliques,
                domain,
                size_limit=size_limit,
                size_cache=size_cache,
            )
            est = pgm.model_marginals(model, domain, allowed)
            bias = math.sqrt(2.0 / math.pi) * sigma
            errors = np.array(
                [
                    np.abs(answers[cl] - est[cl]).sum() - bias * cells[cl]
                    for cl in allowed
                ]
            )
            weights = np.array([cand_w[cl] for cl in allowed])
            acc.spend(epsilon**2 / 8.0, "select")
            pick = allowed[select_worst(errors, weights, epsilon=epsilon, rng=rng)]
            acc.spend(0.5 / sigma**2, f"measure {pick}")
            y = answers[pick] + rng.normal(0.0, sigma, size=cells[pick])
            log.add(pick, y, sigma)
            before = est[pick]
            model = pgm.estimate(log, iters=self.iters, warm_start=model)
            after = pgm.model_marginals(model, domain, [pick])[pick]
            change = float(np.abs(after - before).sum())
            annealed = (
                not terminate
                and change <= math.sqrt(2.0 / math.pi) * sigma * cells[pick]
            )
            self.history_.append(
                {"clique": pick, "sigma": sigma, "epsilon": epsilon, "anneal": annealed}
            )
            if annealed:
                sigma /= 2.0
                epsilon *= 2.0
        self.log_ = log
        self.model_ = pgm.estimate(log, iters=self.final_iters, warm_start=model)

    def _sample(self, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return pgm.sample_model(self.model_, self.domain_, n, rng=rng)
