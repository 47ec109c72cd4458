"""Combining an experiment's stored profiles data set by data set."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpnotes.lab import Profile, load_stored, register, run
from dpnotes.lab.combine import (
    cells_left,
    complete_seeds,
    load_per_dataset,
    unfinished_text,
)


@dataclass(frozen=True)
class ToyCombineProfile(Profile):
    datasets: dict
    seeds: list
    methods: list = ("a", "b")


def _grid(config):
    return [
        {"dataset": d, "method": m, "seed": s}
        for s in config.seeds
        for d in config.datasets
        for m in ("a", "b")
    ]


@register(
    name="toy_combine",
    title="A toy experiment with data sets and seeds, for the tests",
    profiles={
        "smoke": ToyCombineProfile(**{"datasets": {"d1": {"n": 1}}, "seeds": [0]}),
        "quick": ToyCombineProfile(
            **{"datasets": {"d1": {"n": 3}, "d2": {"n": 2}}, "seeds": [0, 1, 2]}
        ),
        "paper": ToyCombineProfile(
            **{"datasets": {"d1": {"n": 3}, "d2": {"n": 5}}, "seeds": [0, 1]}
        ),
    },
    grid=_grid,
)
def toy_combine(config, cell, *, rng, cache=None, progress=False):
    if (
        os.environ.get("TOY_COMBINE_FAIL")
        == f"{cell['dataset']}-{cell['seed']}-{cell['method']}"
    ):
        raise RuntimeError("planted failure")
    n = config.datasets[cell["dataset"]]["n"]
    return pd.DataFrame({"draw": np.arange(n), "value": rng.normal(size=n)})


@register(
    name="toy_combine_new_data",
    title="A toy whose paper profile adds a data set the quick one lacks",
    profiles={
        "smoke": ToyCombineProfile(**{"datasets": {"d1": {"n": 1}}, "seeds": [0]}),
        "quick": ToyCombineProfile(**{"datasets": {"d1": {"n": 1}}, "seeds": [0]}),
        "paper": ToyCombineProfile(
            **{"datasets": {"d1": {"n": 2}, "d3": {"n": 2}}, "seeds": [0]}
        ),
    },
    grid=_grid,
)
def toy_combine_new_data(config, cell, *, rng, cache=None, progress=False):
    return toy_combine(config, cell, rng=rng)


def _list_grid(config):
    return [
        {"dataset": d, "method": m, "seed": s}
        for s in config.seeds
        for d in config.datasets
        for m in config.methods
    ]


@register(
    name="toy_combine_listed",
    title="A toy whose profiles list their data sets without per-data-set settings",
    profiles={
        "smoke": ToyCombineProfile(
            **{"datasets": ["d1"], "methods": ["a"], "seeds": [0]}
        ),
        "quick": ToyCombineProfile(
            **{"datasets": ["d1"], "methods": ["a"], "seeds": [0, 1, 2]}
        ),
        "paper": ToyCombineProfile(
            **{"datasets": ["d1"], "methods": ["a", "b"], "seeds": [0]}
        ),
    },
    grid=_list_grid,
)
def toy_combine_listed(config, cell, *, rng, cache=None, progress=False):
    return pd.DataFrame({"draw": [0], "value": rng.normal(size=1)})


@pytest.fixture
def stored(tmp_path, monkeypatch):
    run("toy_combine", "quick", root=tmp_path, progress=False)
    # The paper run stops in its last cell (d2, seed 1, method b): a partial result.
    monkeypatch.setenv("TOY_COMBINE_FAIL", "d2-1-b")
    with pytest.raises(RuntimeError, match="planted"):
        run("toy_combine", "paper", root=tmp_path, progress=False, checkpoint_s=0)
    monkeypatch.delenv("TOY_COMBINE_FAIL")
    return tmp_path


def test_complete_seeds_needs_every_cell_of_the_seed(stored):
    paper = load_stored("toy_combine", "paper", root=stored, allow_partial=True)
    assert paper.partial
    assert complete_seeds(paper, "d1") == [0, 1]
    assert complete_seeds(paper, "d2") == [0], "seed 1 lacks method b"
    assert complete_seeds(paper, "elsewhere") == []


def test_each_data_set_takes_its_best_profile(stored):
    combined = load_per_dataset("toy_combine", root=stored)
    src = combined.sources
    # d1 ran the same settings in both profiles; quick has more complete seeds.
    assert src["d1"].profile == "quick" and src["d1"].seeds == (0, 1, 2)
    # d2's settings differ: the paper profile's complete seed wins over quick.
    assert src["d2"].profile == "paper" and src["d2"].seeds == (0,)
    # The counts are d2's own: 3 of its 4 paper cells (the profile has 7 of 8).
    assert src["d2"].partial and (src["d2"].cells_done, src["d2"].cells) == (3, 4)
    t = combined.table
    d2 = t[t.dataset == "d2"]
    assert set(d2.seed) == {0} and len(d2) == 2 * 5, "paper rows, complete seed only"
    assert len(t[t.dataset == "d1"]) == 3 * 2 * 3
    caption = combined.caption({"d1": "First", "d2": "Second"})
    assert "First: profile quick, seeds 0, 1, 2" in caption
    assert "Second: profile paper (partial: 3 of 4 cells computed), seed 0" in caption
    assert "--profile paper" in caption and "--profile quick" in caption
    only = combined.caption({"d2": "Second"}, datasets=["d2"])
    assert "Second: profile paper" in only and "d1" not in only
    assert "--profile quick" not in only, "d2's rows come from the paper profile only"
    with pytest.raises(ValueError, match="no rows of data set"):
        combined.caption(datasets=["d9"])


def test_only_fallback_profile_is_computed_when_missing(tmp_path):
    combined = load_per_dataset(
        "toy_combine", profiles=("paper", "smoke"), root=tmp_path
    )
    assert load_stored("toy_combine", "paper", root=tmp_path) is None
    assert combined.profiles == ["smoke"] and combined.sources["d1"].seeds == (0,)


def test_bad_calls_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="profiles is empty"):
        load_per_dataset("toy_combine", profiles=(), root=tmp_path)
    with pytest.raises(ValueError, match="no dataset and seed"):
        load_per_dataset("toy_for_tests_nogrid", root=tmp_path)


@register(
    name="toy_for_tests_nogrid",
    title="A toy experiment whose cells name no data set",
    profiles={p: ToyCombineProfile({}, []) for p in ("smoke", "quick", "paper")},
    grid=lambda config: [{"arm": "x"}],
)
def toy_nogrid(config, cell, *, rng, cache=None, progress=False):
    return pd.DataFrame({"dataset": ["d"], "value": [rng.normal()]})


def test_only_runs_the_selected_cells_and_they_equal_a_full_runs(tmp_path, capsys):
    from dpnotes.lab.cli import main

    args = ["--results", str(tmp_path / "sel"), "run", "toy_combine", "--profile"]
    assert main([*args, "quick", "--only", "dataset=d2", "--only", "seed=1"]) == 0
    assert "partial: 2 of 12 cells computed" in capsys.readouterr().out
    part = load_stored(
        "toy_combine", "quick", root=tmp_path / "sel", allow_partial=True
    )
    assert set(
        map(tuple, part.table[["dataset", "seed"]].drop_duplicates().values)
    ) == {("d2", 1)}
    # Several values of one key, given as numbers; the rest completes the grid.
    run(
        "toy_combine",
        "quick",
        root=tmp_path / "sel",
        progress=False,
        only={"seed": [0, 2.0]},
    )
    done = run("toy_combine", "quick", root=tmp_path / "sel", progress=False)
    assert not done.partial and done.meta["cells_resumed"] == 10
    full = run("toy_combine", "quick", root=tmp_path / "full", progress=False)
    pd.testing.assert_frame_equal(done.table, full.table)


def test_only_rejects_unknown_keys_and_empty_selections(tmp_path):
    with pytest.raises(ValueError, match="not keys"):
        run("toy_combine", "quick", root=tmp_path, progress=False, only={"x": [1]})
    # The error names the values each selected key takes (a misspelt value is common).
    with pytest.raises(ValueError, match="no cell matches") as info:
        run(
            "toy_combine",
            "quick",
            root=tmp_path,
            progress=False,
            only={"dataset": ["d9"], "seed": [1]},
        )
    assert "dataset takes d1, d2; seed takes 0, 1, 2." in str(info.value)


def test_cli_only_needs_key_value(tmp_path, capsys):
    from dpnotes.lab.cli import main

    args = ["--results", str(tmp_path), "run", "toy_combine", "--only", "dataset"]
    assert main(args) == 2
    assert "KEY=VALUE" in capsys.readouterr().err


def test_a_data_set_only_a_partial_run_began_is_left_out(tmp_path, monkeypatch):
    monkeypatch.setenv("TOY_COMBINE_FAIL", "d3-0-b")
    with pytest.raises(RuntimeError, match="planted"):
        run("toy_combine_new_data", "paper", root=tmp_path, progress=False)
    monkeypatch.delenv("TOY_COMBINE_FAIL")
    paper = load_stored("toy_combine_new_data", "paper", root=tmp_path,
                        allow_partial=True)  # fmt: skip
    assert "d3" in set(paper.table.dataset), "d3 has begun"
    combined = load_per_dataset("toy_combine_new_data", root=tmp_path)
    assert list(combined.sources) == ["d1"]
    assert combined.sources["d1"].profile == "paper"
    assert set(combined.table.dataset) == {"d1"}
    # d1's own cells are all computed: its caption does not call it partial.
    assert paper.partial and combined.sources["d1"].partial
    assert combined.caption() == (
        "Experiment toy_combine_new_data; d1: profile paper, seed 0. "
        "Regenerate with: python -m dpnotes run toy_combine_new_data --profile paper."
    )


def test_profiles_without_data_set_settings_are_not_taken_as_the_same(tmp_path):
    # quick has more complete seeds, but nothing says it ran the paper's settings for
    # d1 (here it did not: one method instead of two), so the paper profile stays.
    run("toy_combine_listed", "quick", root=tmp_path, progress=False)
    run("toy_combine_listed", "paper", root=tmp_path, progress=False)
    combined = load_per_dataset("toy_combine_listed", root=tmp_path)
    assert combined.sources["d1"].profile == "paper"
    assert set(combined.table.method) == {"a", "b"}


def test_unfinished_text_names_each_partial_profile():
    from dpnotes.lab.store import StoredResult

    def result(done, cells, partial):
        meta = {"cells": cells, "cells_done": ["h"] * done}
        if partial:
            meta["partial"] = True
        return StoredResult("e", "paper", pd.DataFrame(), meta, Path("."))

    partial = result(62, 70, True)
    assert partial.partial
    texts = unfinished_text(
        {"dpsgdf_main": partial, "dpsgdf_census": result(80, 80, False), "x": None}
    )
    assert texts == "dpsgdf_main 62 of 70 cells; x not run; 8 cells left in all"
    assert unfinished_text({"dpsgdf_census": result(80, 80, False)}) == ""
    with pytest.raises(TypeError, match="not a stored result"):
        unfinished_text({"dpsgdf_main": pd.DataFrame()})
    # The cells the partial results lack, in all (a result not stored: not counted).
    both = {"dpsgdf_main": partial, "dpsgdf_clip": result(18, 30, True), "x": None}
    assert cells_left(both) == 8 + 12
    assert cells_left({"dpsgdf_census": result(80, 80, False)}) == 0
    with pytest.raises(TypeError, match="not a stored result"):
        cells_left({"dpsgdf_main": pd.DataFrame()})


def test_unfinished_text_names_the_whole_seeds_and_those_to_come():
    # A partial dpsgdf_budget: seeds 0-2 of both data sets whole, seed 3 of MNIST
    # begun, seed 4 of MNIST not begun, Adult whole: only MNIST is named.
    from dpnotes.lab import get_experiment
    from dpnotes.lab.store import StoredResult

    grid = get_experiment("dpsgdf_budget").cells("paper")
    cells = [
        c
        for c in grid
        if not (c["dataset"] == "mnist" and c["seed"] == 4)
        and not (
            c["dataset"] == "mnist" and c["seed"] == 3 and c["method"] == "dpsgd_f"
        )
    ]
    assert len(grid) - len(cells) > 1
    meta = {
        "cells": len(grid),
        "cells_done": ["h"] * len(cells),
        "partial": True,
        "config": {"seeds": [0, 1, 2, 3, 4], "datasets": {"mnist": {}, "adult": {}}},
    }
    result = StoredResult(
        "dpsgdf_budget", "paper", pd.DataFrame(cells), meta, Path(".")
    )
    left = len(grid) - len(cells)
    names = {"mnist": "MNIST"}
    assert unfinished_text({"dpsgdf_budget": result}, names) == (
        f"dpsgdf_budget {len(cells)} of {len(grid)} cells, MNIST seeds 0, 1, 2 "
        f"whole and seeds 3, 4 to come; {left} cells left in all"
    )
    assert ", mnist seeds 0, 1, 2 whole" in unfinished_text({"b": result})
    # No seed of MNIST whole; an experiment whose grid names no data set: counts only.
    first = [c for c in grid if c["dataset"] == "adult"]
    none = StoredResult(
        "dpsgdf_budget",
        "paper",
        pd.DataFrame(first),
        {**meta, "cells_done": first},
        Path("."),
    )
    assert ", MNIST no seed whole and seeds 0–4 to come;" in unfinished_text(
        {"b": none}, names
    )
    causes = StoredResult(
        "dpsgdf_causes", "paper", pd.DataFrame({"seed": [0]}), meta, Path(".")
    )
    assert unfinished_text({"c": causes}) == (
        f"c {len(cells)} of 130 cells; {left} cells left in all"
    )
