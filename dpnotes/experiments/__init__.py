"""Experiments: one entry per figure or table, three profiles each, stored results.

Use ``python -m dpnotes list`` and ``python -m dpnotes run NAME --profile P`` from a
shell, and :func:`load_or_run` from a notebook.
"""

from dpnotes.experiments.combine import Combined, load_per_dataset
from dpnotes.experiments.registry import (
    PROFILES,
    Experiment,
    config_hash,
    get_experiment,
    list_experiments,
    register,
    stable_hash,
)
from dpnotes.experiments.runner import (
    load_or_run,
    load_stored,
    provenance,
    run,
    stale_reason,
)
from dpnotes.experiments.store import (
    StoredResult,
    read_result,
    results_root,
    write_result,
)

__all__ = [
    "PROFILES",
    "Combined",
    "Experiment",
    "StoredResult",
    "config_hash",
    "get_experiment",
    "list_experiments",
    "load_or_run",
    "load_per_dataset",
    "load_stored",
    "provenance",
    "read_result",
    "register",
    "results_root",
    "run",
    "stable_hash",
    "stale_reason",
    "write_result",
]
