"""A toy experiment for the lab's tests, importable by their subprocesses.

Its cells draw normal numbers and a wall-time row; environment variables make them
slow (``TOY_LAB_SLEEP`` seconds each), interrupt one (``TOY_LAB_FAIL_ARM``) or shift
their values (``TOY_LAB_SHIFT``), as a code change would.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpnotes.lab import Profile, register

NAME = "toy_lab"


@dataclass(frozen=True)
class ToyLabProfile(Profile):
    arms: int
    draws: int


def _grid(config: ToyLabProfile) -> list[dict]:
    return [{"arm": i, "label": f"arm-{i}"} for i in range(config.arms)]


@register(
    name=NAME,
    title="A toy experiment for the lab's tests",
    profiles={
        "smoke": ToyLabProfile(arms=3, draws=4),
        "quick": ToyLabProfile(arms=6, draws=4),
        "paper": ToyLabProfile(arms=12, draws=4),
    },
    grid=_grid,
)
def toy_lab(config, cell, *, rng, cache=None, progress=False):
    started = time.perf_counter()
    if os.environ.get("TOY_LAB_FAIL_ARM") == str(cell["arm"]):
        raise KeyboardInterrupt(f"planted interruption at arm {cell['arm']}")
    time.sleep(float(os.environ.get("TOY_LAB_SLEEP", "0")))
    value = rng.normal(size=config.draws) + float(os.environ.get("TOY_LAB_SHIFT", "0"))
    rows = pd.DataFrame(
        {"metric": "draw", "group": np.arange(config.draws), "value": value}
    )
    # A wall time: cell "arm" i claims i seconds, so the cheapest cells are known.
    seconds = float(cell["arm"]) + time.perf_counter() - started
    timing = pd.DataFrame(
        {"metric": ["fit_seconds"], "group": [-1], "value": [seconds]}
    )
    return pd.concat([rows, timing], ignore_index=True)


def _key_grid(config: ToyLabProfile) -> list[dict]:
    return [{"attrs": ["a", "b"][: 1 + i % 2], "arm": i} for i in range(config.arms)]


@register(
    name="toy_lab_keys",
    title="A toy whose rows write a grid key in their own format",
    profiles={
        "smoke": ToyLabProfile(arms=2, draws=3),
        "quick": ToyLabProfile(arms=4, draws=3),
        "paper": ToyLabProfile(arms=6, draws=3),
    },
    grid=_key_grid,
)
def toy_lab_keys(config, cell, *, rng, cache=None, progress=False):
    value = rng.normal(size=config.draws) + float(os.environ.get("TOY_LAB_SHIFT", "0"))
    return pd.DataFrame({"attrs": "×".join(cell["attrs"]), "value": value})


def _float_grid(config: ToyLabProfile) -> list[dict]:
    return [{"epsilon": math.e**i} for i in range(config.arms)]


@register(
    name="toy_lab_floats",
    title="A toy whose grid key is a float that the store rounds (e**k)",
    profiles={
        "smoke": ToyLabProfile(arms=2, draws=3),
        "quick": ToyLabProfile(arms=3, draws=3),
        "paper": ToyLabProfile(arms=4, draws=3),
    },
    grid=_float_grid,
)
def toy_lab_floats(config, cell, *, rng, cache=None, progress=False):
    value = rng.normal(size=config.draws) + float(os.environ.get("TOY_LAB_SHIFT", "0"))
    return pd.DataFrame({"metric": "draw", "value": value})
