"""Explicit randomness: generators, spawned streams, torch generators."""

from __future__ import annotations

import numpy as np
import pytest

from dpnotes.rng import as_generator, check_rng, spawn, spawn_seeds, torch_generator


def test_check_rng_rejects_legacy_state_and_none():
    assert isinstance(check_rng(np.random.default_rng(0)), np.random.Generator)
    for bad in (None, 0, np.random.RandomState(0)):
        with pytest.raises(TypeError, match="default_rng"):
            check_rng(bad)


def test_as_generator_is_reproducible_and_validates():
    assert as_generator(7).random() == as_generator(7).random()
    g = np.random.default_rng(1)
    assert as_generator(g) is g
    with pytest.raises(ValueError, match="non-negative"):
        as_generator(-1)
    for bad in (None, 1.5, "3", True):
        with pytest.raises(TypeError):
            as_generator(bad)


def test_spawned_streams_are_reproducible_and_distinct():
    a = [g.random() for g in spawn(42, 4)]
    b = [g.random() for g in spawn(42, 4)]
    assert a == b
    assert len(set(a)) == 4
    assert [g.random() for g in spawn(43, 4)] != a
    assert spawn_seeds(0, 0) == []
    with pytest.raises(ValueError):
        spawn_seeds(0, -1)


def test_torch_generator_follows_the_numpy_stream():
    import torch

    t1 = torch.randn(3, generator=torch_generator(np.random.default_rng(5)))
    t2 = torch.randn(3, generator=torch_generator(np.random.default_rng(5)))
    t3 = torch.randn(3, generator=torch_generator(np.random.default_rng(6)))
    assert torch.equal(t1, t2) and not torch.equal(t1, t3)
