"""The experiments behind the book's figures and tables, one module per paper part.

Each module defines, per experiment, a frozen :class:`~dpnotes.lab.Profile` dataclass
with one instance per profile (``smoke``, ``quick``, ``paper``), a grid of cells and a
``run_cell(config, cell, *, rng, cache, progress)`` function, and registers them with
:func:`dpnotes.lab.register`. Running and storing them is the lab's job
(:mod:`dpnotes.lab`); these modules never touch its store or runner.
"""
