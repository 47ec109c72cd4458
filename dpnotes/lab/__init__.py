"""The lab: registry, source fingerprints, runner, store, restamp and command line.

It runs the experiments of :mod:`dpnotes.experiments` and keeps their results with
provenance; it computes none of their numbers, so it is outside every config hash.
Use ``python -m dpnotes list``, ``run NAME --profile P``, ``restamp NAME`` and
``adopt NAME --profile P --set KEY=VALUE --from SOURCE`` from a shell, and
:func:`load_or_run` from a notebook.
"""

from dpnotes.lab.adopt import AdoptReport, adopt, declare_grid_settings
from dpnotes.lab.combine import Combined, load_per_dataset, unfinished_text
from dpnotes.lab.fingerprint import code_digests, import_closure, normalized_source
from dpnotes.lab.registry import (
    PROFILES,
    Cache,
    Experiment,
    Profile,
    check_profile,
    config_hash,
    derived_profile,
    get_experiment,
    list_experiments,
    register,
    split_profile,
    stable_hash,
)
from dpnotes.lab.restamp import RestampReport, restamp
from dpnotes.lab.runner import (
    checkpoint,
    load_or_run,
    load_stored,
    profile_with,
    provenance,
    run,
    run_cell,
    stale_reason,
)
from dpnotes.lab.store import (
    RunCache,
    RunLocked,
    StoredResult,
    inspect_result,
    read_result,
    result_folder,
    results_root,
    write_result,
)

__all__ = [
    "PROFILES",
    "AdoptReport",
    "Cache",
    "Combined",
    "Experiment",
    "Profile",
    "RestampReport",
    "RunCache",
    "RunLocked",
    "StoredResult",
    "adopt",
    "check_profile",
    "checkpoint",
    "code_digests",
    "config_hash",
    "declare_grid_settings",
    "derived_profile",
    "get_experiment",
    "import_closure",
    "inspect_result",
    "list_experiments",
    "load_or_run",
    "load_per_dataset",
    "load_stored",
    "normalized_source",
    "profile_with",
    "provenance",
    "read_result",
    "register",
    "restamp",
    "result_folder",
    "results_root",
    "run",
    "run_cell",
    "split_profile",
    "stable_hash",
    "stale_reason",
    "unfinished_text",
    "write_result",
]
