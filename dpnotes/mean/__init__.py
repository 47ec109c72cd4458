"""Private mean estimation: COINPRESS and stratified estimates.

* :mod:`dpnotes.mean.coinpress` -- COINPRESS (UVM and UVMRec) for one population.
* :mod:`dpnotes.mean.stratified` -- per-group estimation with the full budget and
  recombination with public, holdout or privatised weights.
* :mod:`dpnotes.mean.compare` -- the stratification paper's four methods side by side.
* :mod:`dpnotes.mean.layout` -- many trials and groups as segments of one flat array.
"""

from dpnotes.mean.coinpress import (
    CoinpressResult,
    coinpress_mean,
    coinpress_schedule,
    step_budgets,
    uvm,
)
from dpnotes.mean.compare import METHODS, compare_methods, mixture_runs
from dpnotes.mean.stratified import (
    PRIVATE_SIZES,
    ClippedLaplace,
    Coinpress,
    PrivatisedCounts,
    StratifiedEstimate,
    holdout_weights,
    pub_strat_coinpress,
    split_holdout,
    strat_coinpress,
    stratified_mean,
)

__all__ = [
    "METHODS",
    "PRIVATE_SIZES",
    "ClippedLaplace",
    "Coinpress",
    "CoinpressResult",
    "PrivatisedCounts",
    "StratifiedEstimate",
    "coinpress_mean",
    "coinpress_schedule",
    "compare_methods",
    "holdout_weights",
    "mixture_runs",
    "pub_strat_coinpress",
    "split_holdout",
    "step_budgets",
    "strat_coinpress",
    "stratified_mean",
    "uvm",
]
