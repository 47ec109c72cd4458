"""Explicit random number generation.

Library code never touches global random state. Every random function takes a keyword
``rng: numpy.random.Generator`` (torch code: ``generator: torch.Generator | None``), and
independent streams for trials, seeds or strata are spawned from one root seed with
:class:`numpy.random.SeedSequence`, so a result is reproducible from a single integer.
"""

from __future__ import annotations

import numpy as np

__all__ = ["as_generator", "check_rng", "spawn", "spawn_seeds", "torch_generator"]


def check_rng(rng: object, *, name: str = "rng") -> np.random.Generator:
    """Return ``rng`` if it is a numpy Generator, else say what to pass instead.

    Args:
        rng: The object a caller passed as a random generator.
        name: The argument name used in the error message.

    Returns:
        The same generator.

    Raises:
        TypeError: If ``rng`` is not a :class:`numpy.random.Generator`.

    Examples:
        >>> check_rng(np.random.default_rng(0)).__class__.__name__
        'Generator'
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"{name} must be a numpy.random.Generator, got {type(rng).__name__}. "
            "Pass rng=numpy.random.default_rng(seed) with an integer seed; library "
            "code never uses the global numpy random state."
        )
    return rng


def as_generator(
    seed: int | np.random.SeedSequence | np.random.Generator,
) -> np.random.Generator:
    """Build a generator from an integer seed or SeedSequence; pass a Generator through.

    Args:
        seed: A non-negative integer, a :class:`numpy.random.SeedSequence` or a
            Generator.

    Returns:
        A :class:`numpy.random.Generator` (PCG64).

    Raises:
        TypeError: For any other type (floats and ``None`` included: an implicit,
            unseeded generator would make a run impossible to reproduce).
        ValueError: For a negative integer.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed}.")
        return np.random.default_rng(int(seed))
    raise TypeError(
        f"seed must be a non-negative int, SeedSequence or Generator, got "
        f"{type(seed).__name__}. Pass an explicit integer seed to make the run "
        "reproducible."
    )


def spawn_seeds(
    seed: int | np.random.SeedSequence, n: int
) -> list[np.random.SeedSequence]:
    """Spawn ``n`` independent child seed sequences from one root seed.

    Args:
        seed: The root seed (integer or SeedSequence).
        n: Number of children, ``n >= 0``.

    Returns:
        A list of ``n`` :class:`numpy.random.SeedSequence` objects.

    Examples:
        >>> [s.generate_state(1)[0] for s in spawn_seeds(0, 2)] == [
        ...     s.generate_state(1)[0] for s in spawn_seeds(0, 2)]
        True
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}.")
    root = (
        seed
        if isinstance(seed, np.random.SeedSequence)
        else np.random.SeedSequence(seed)
    )
    if not isinstance(seed, np.random.SeedSequence):
        as_generator(seed)  # validates the integer
    return list(root.spawn(int(n)))


def spawn(seed: int | np.random.SeedSequence, n: int) -> list[np.random.Generator]:
    """Spawn ``n`` independent generators from one root seed (per trial or stratum)."""
    return [np.random.default_rng(s) for s in spawn_seeds(seed, n)]


def torch_generator(rng: np.random.Generator, device: str | None = None):
    """Derive a seeded ``torch.Generator`` from a numpy generator.

    The torch seed is drawn from ``rng``, so the torch stream is reproducible from the
    same root seed as everything else, and advancing ``rng`` gives a different torch
    stream.

    Args:
        rng: The numpy generator that owns the randomness.
        device: Device of the generator (``"cpu"``, ``"cuda"``); default CPU.

    Returns:
        A seeded :class:`torch.Generator`.
    """
    import torch

    check_rng(rng)
    g = torch.Generator(device=device or "cpu")
    g.manual_seed(int(rng.integers(0, 2**63 - 1)))
    return g
