"""The experiments behind the book's figures and tables, one module per paper part.

Each module defines, per experiment, a frozen :class:`~dpnotes.lab.Profile` dataclass
with one instance per profile (``smoke``, ``quick``, ``paper``), a grid of cells and a
``run_cell(config, cell, *, rng, cache, progress)`` function, and registers them with
:func:`dpnotes.lab.register`. Running and storing them is the lab's job
(:mod:`dpnotes.lab`); these modules never touch its store or runner.

This file also declares how the experiments that do not draw from the runner's stream
are seeded (:func:`dpnotes.lab.registry.declare_seeding`), so that the runner refuses a
root seed that would not reach their numbers. It runs before any module of the package
registers, and it is outside every config hash: declaring this changes no stored result.
A new experiment says it in its own ``register(..., seeding=...)`` call instead.
"""

from dpnotes.lab.registry import declare_seeding

#: The experiments are reached through the registry (``python -m dpnotes list``), one
#: module each; this package exports nothing itself.
__all__: list[str] = []

declare_seeding(
    {
        # Each cell's ``seed`` key fixes its data, initialisation and training streams
        # (dpnotes.experiments.dpsgd_f.seed_streams), so that the methods of a seed are
        # paired; the ``rng`` the runner passes is never used.
        "dpsgdf_main": "grid",
        "dpsgdf_clip": "grid",
        "dpsgdf_budget": "grid",
        "dpsgdf_census": "grid",
        "dpsgdf_reference": "grid",
        # Descriptive tables of public data: no random numbers at all.
        "census_descriptive": "none",
        "synth_group_sizes": "none",
    }
)
