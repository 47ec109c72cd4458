"""Private mean estimation: COINPRESS and stratified estimates.

* :mod:`dpnotes.mean.coinpress` -- COINPRESS (UVM and UVMRec) for one population.
* :mod:`dpnotes.mean.stratified` -- per-group estimation with the full budget and
  recombination with public, holdout or privatised weights.
"""

from dpnotes.mean.coinpress import (
    CoinpressResult,
    coinpress_mean,
    coinpress_schedule,
    uvm,
)
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
    "PRIVATE_SIZES",
    "ClippedLaplace",
    "Coinpress",
    "CoinpressResult",
    "PrivatisedCounts",
    "StratifiedEstimate",
    "coinpress_mean",
    "coinpress_schedule",
    "holdout_weights",
    "pub_strat_coinpress",
    "split_holdout",
    "strat_coinpress",
    "stratified_mean",
    "uvm",
]
