"""Adopt: a profile that narrows another's grid is stored from its checked rows."""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import shutil
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from dpnotes.lab import (
    Profile,
    adopt,
    declare_grid_settings,
    get_experiment,
    load_or_run,
    load_stored,
    register,
    run,
)
from dpnotes.lab.catalog import compute_by_machine, compute_text, stamped_by
from dpnotes.lab.cli import main
from dpnotes.lab.registry import Experiment
from dpnotes.lab.store import read_result, result_folder, write_result

NAME = "toy_adopt"
TARGET = "paper@seeds=0+1"
adopt_mod = importlib.import_module("dpnotes.lab.adopt")
runner_mod = importlib.import_module("dpnotes.lab.runner")
registry_mod = importlib.import_module("dpnotes.lab.registry")


@dataclass(frozen=True)
class ToyAdoptProfile(Profile):
    arms: tuple[int, ...]
    seeds: tuple[int, ...]
    draws: int = 4


def _grid(config: ToyAdoptProfile) -> list[dict]:
    return [{"seed": s, "arm": a} for s in config.seeds for a in config.arms]


@register(
    name=NAME,
    title="A toy whose seeds and arms only select cells of its grid",
    profiles={
        "smoke": ToyAdoptProfile(arms=(0, 1), seeds=(0,)),
        "quick": ToyAdoptProfile(arms=(0, 1), seeds=(0, 1)),
        "paper": ToyAdoptProfile(arms=(0, 1, 2), seeds=(0, 1, 2)),
    },
    grid=_grid,
)
def toy_adopt(config, cell, *, rng, cache=None, progress=False):
    value = rng.normal(size=config.draws) + float(
        os.environ.get("TOY_ADOPT_SHIFT", "0")
    )
    rows = pd.DataFrame(
        {"metric": "draw", "group": np.arange(config.draws), "value": value}
    )
    # Cell (seed s, arm a) claims 1 + 10 s + a seconds: the cheapest cells are known.
    timing = pd.DataFrame(
        {
            "metric": ["fit_seconds"],
            "group": [-1],
            "value": [1.0 + 10.0 * cell["seed"] + cell["arm"]],
        }
    )
    return pd.concat([rows, timing], ignore_index=True)


declare_grid_settings({NAME: ("arms", "seeds")})


@pytest.fixture
def committed(monkeypatch):
    """Code versions as a commit's (the worktree may hold uncommitted changes)."""
    monkeypatch.setattr(runner_mod, "code_version", lambda: "0.1.0+gabc123")
    monkeypatch.setattr(adopt_mod, "code_version", lambda: "0.1.0+gdef456")


@pytest.fixture
def source(tmp_path, committed):
    """The paper profile stored partial: seeds 0 and 1 of 0, 1, 2 (6 of 9 cells)."""
    result = run(NAME, "paper", root=tmp_path, progress=False, only={"seed": [0, 1]})
    assert result.partial and len(result.meta["cells_done"]) == 6
    return result


def _by_cell(table: pd.DataFrame) -> pd.DataFrame:
    keys = ["seed", "arm", "group"]
    return table.sort_values(keys, kind="stable").reset_index(drop=True)


def _target(root) -> os.PathLike:
    return result_folder(root, NAME, TARGET)


def test_a_seed_subset_is_adopted_and_loads_as_the_source_rows(
    source, tmp_path, capsys
):
    report = adopt(NAME, TARGET, source="paper", cells=2, root=tmp_path)
    assert report.equal and report.cells == 6 and len(report.checks) == 2
    assert report.path == _target(tmp_path)
    stored = load_stored(NAME, TARGET, root=tmp_path)
    assert stored is not None and not stored.partial
    assert stored.table.shape == source.table.shape
    pd.testing.assert_frame_equal(_by_cell(stored.table), _by_cell(source.table))
    # In the narrower grid's order, as a run writes it.
    cells = [(c["seed"], c["arm"]) for c in get_experiment(NAME).cells(TARGET)]
    order = list(dict.fromkeys(zip(stored.table.seed, stored.table.arm, strict=True)))
    assert order == cells
    # A chapter loads it without computing anything.
    loaded = load_or_run(
        NAME, prefer=("paper",), settings={"seeds": "0+1"}, root=tmp_path
    )
    assert loaded.meta["table_sha256"] == stored.meta["table_sha256"]
    meta = stored.meta
    entry = meta["adopted"]
    assert entry["source_profile"] == "paper"
    assert entry["source_config_hash"] == source.config_hash
    assert entry["source_code_version"] == "0.1.0+gabc123"
    assert entry["code_version"] == "0.1.0+gdef456"
    assert entry["settings_changed"] == {"seeds": [[0, 1, 2], [0, 1]]}
    assert len(entry["cells_checked"]) == 2 and entry["cells_adopted"] == 6
    # The cells' compute record is the source's.
    assert (
        meta["code_version"] == "0.1.0+gabc123"
        and meta["device"] == source.meta["device"]
    )
    assert meta["cells"] == 6 and meta["wall_time_s"] == source.meta["wall_time_s"]
    assert meta["config"]["seeds"] == [0, 1]
    assert sum(c for _, c, _ in compute_by_machine(meta)) == 6
    # The source was partial without its runs' history: only its last run's time.
    assert "(the last run: " in compute_text(meta)
    assert stamped_by(meta) == "adopt: 2 cells vs stored rows"
    assert main(["--results", str(tmp_path), "list"]) == 0
    listed = [line for line in capsys.readouterr().out.splitlines() if TARGET in line]
    assert len(listed) == 1 and "6/6" in listed[0] and listed[0].endswith("current")


def test_runs_are_cut_to_the_adopted_cells(tmp_path, committed):
    run(NAME, "paper", root=tmp_path, progress=False, only={"seed": [0]})
    time.sleep(1.1)  # two runs: a run's start is stamped to the second
    both = run(NAME, "paper", root=tmp_path, progress=False, only={"seed": [1]})
    assert [len(r["cells_done"]) for r in both.meta["runs"]] == [3, 3]
    assert adopt(NAME, "paper@seeds=1", source="paper", cells=1, root=tmp_path).equal
    meta = load_stored(NAME, "paper@seeds=1", root=tmp_path).meta
    assert [r["cells_done"] for r in meta["runs"]] == [
        both.meta["runs"][1]["cells_done"]
    ]
    # No adopted cell is the source's own last run's: its time is not counted.
    assert meta["wall_time_s"] == 0.0
    ((_, cells, _),) = compute_by_machine(meta)
    assert cells == 3


def test_checked_cells_are_the_cheapest_when_asked(source, tmp_path):
    report = adopt(NAME, TARGET, source="paper", cells=3, cheapest=True, root=tmp_path)
    assert [(c.cell["seed"], c.cell["arm"]) for c in report.checks] == [
        (0, 0),
        (0, 1),
        (0, 2),
    ]


def _nothing_written(root) -> bool:
    return not (_target(root) / "meta.json").exists()


def test_refusals_say_what_to_do_and_write_nothing(source, tmp_path, monkeypatch):
    def refused(match, target=TARGET, source="paper"):
        with pytest.raises(ValueError, match=match):
            adopt(NAME, target, source=source, root=tmp_path)
        assert not (result_folder(tmp_path, NAME, target) / "meta.json").exists()

    refused("nothing is stored .*run toy_adopt --profile quick", source="quick")
    with pytest.raises(ValueError, match="is both"):
        adopt(NAME, "paper", source="paper", root=tmp_path)
    with pytest.raises(ValueError, match="cells must be at least 1"):
        adopt(NAME, TARGET, source="paper", cells=0, root=tmp_path)
    # A setting the cells compute with, named.
    refused(r"settings its cells compute with \(draws: 4 there, 5 here\)",
            target="paper@draws=5,seeds=0+1")  # fmt: skip
    # A cell the source's grid does not have.
    refused(
        r"3 of the 6 cells .* not cells of \[paper\]'s grid", target="paper@seeds=1+7"
    )
    # Cells the source has not stored yet: how many, and the command.
    refused(
        r"3 of the 6 cells .* not stored in \[paper\] \(partial: 6 of 9 cells "
        r"stored.*run toy_adopt --profile paper --only seed=2",
        target="paper@seeds=1+2",
    )
    # An experiment that declares no grid settings: none may differ.
    monkeypatch.setitem(adopt_mod.GRID_SETTINGS, NAME, ())
    refused("declares no setting that only selects cells")
    monkeypatch.undo()
    # Uncommitted code does not check.
    monkeypatch.setattr(adopt_mod, "code_version", lambda: "0.1.0+gdef456.dirty")
    refused("uncommitted changes")


def test_a_stale_source_must_be_restamped_first(source, tmp_path, monkeypatch):
    real = Experiment.code_digests

    def changed(self):
        return {**real(self), "dpnotes.rng": "other code"}

    monkeypatch.setattr(Experiment, "code_digests", changed)
    with pytest.raises(
        ValueError, match=r"stale .*dpnotes\.rng.*restamp toy_adopt --profile paper"
    ):
        adopt(NAME, TARGET, source="paper", root=tmp_path)
    assert _nothing_written(tmp_path)


def test_a_source_of_uncommitted_code_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(runner_mod, "code_version", lambda: "0.1.0+gabc123.dirty")
    run(NAME, "paper", root=tmp_path, progress=False, only={"seed": [0, 1]})
    monkeypatch.setattr(adopt_mod, "code_version", lambda: "0.1.0+gdef456")
    with pytest.raises(ValueError, match="computed by uncommitted code"):
        adopt(NAME, TARGET, source="paper", root=tmp_path)
    assert _nothing_written(tmp_path)


def test_a_tampered_row_fails_the_check_and_nothing_is_written(
    source, tmp_path, capsys
):
    # A stored row that the code does not compute (its checksum made consistent, as
    # a run of other code would have stored it): cell seed 0, arm 0, the cheapest.
    table = source.table.copy()
    row = int(
        np.flatnonzero((table.seed == 0) & (table.arm == 0) & (table.group == 2))[0]
    )
    table.loc[row, "value"] += 1e-6
    write_result(source.path, table, source.meta)
    report = adopt(NAME, TARGET, source="paper", cells=1, cheapest=True, root=tmp_path)
    assert not report.equal and report.path is None
    assert not _target(tmp_path).exists(), "not even an empty folder"
    text = report.summary()
    assert "nothing written" in text and "{'arm': 0, 'seed': 0}" in text
    assert "column 'value': 1 of 5 rows differ (first at row 2" in text
    # Another cell, not tampered with, passes: the check is what failed.
    other = adopt(NAME, TARGET, source="paper", cells=1, sample_seed=3, root=tmp_path)
    assert other.equal and other.checks[0].cell != {"seed": 0, "arm": 0}
    # An interrupted first write (a table, no meta.json) is replaced; a damaged
    # meta.json is not.
    (_target(tmp_path) / "meta.json").unlink()
    assert adopt(NAME, TARGET, source="paper", cells=1, root=tmp_path).equal
    (_target(tmp_path) / "meta.json").write_text("{")
    with pytest.raises(ValueError, match=r"damaged result .*does not parse"):
        adopt(NAME, TARGET, source="paper", cells=1, root=tmp_path)
    shutil.rmtree(_target(tmp_path))
    args = ["--results", str(tmp_path), "adopt", NAME, "--profile", "paper"]
    code = main(
        [*args, "--set", "seeds=0+1", "--from", "paper", "--cheapest", "--cells", "1"]
    )
    assert code == 1 and "cells differ" in capsys.readouterr().out
    assert _nothing_written(tmp_path)


def test_a_complete_target_is_never_replaced(source, tmp_path):
    first = adopt(NAME, TARGET, source="paper", cells=1, root=tmp_path)
    files = {p.name: p.read_bytes() for p in first.path.iterdir() if p.is_file()}
    with pytest.raises(ValueError, match="stored complete already"):
        adopt(NAME, TARGET, source="paper", cells=1, root=tmp_path)
    assert {
        p.name: p.read_bytes() for p in first.path.iterdir() if p.is_file()
    } == files


def test_a_computed_complete_target_is_kept_and_a_partial_one_completed(
    source, tmp_path
):
    # A partial target (one arm computed on its own) is less complete: adopted over.
    run(NAME, TARGET, root=tmp_path, progress=False, only={"arm": [0]})
    assert load_stored(NAME, TARGET, root=tmp_path, allow_partial=True).partial
    report = adopt(NAME, TARGET, source="paper", cells=1, root=tmp_path)
    assert report.equal and not load_stored(NAME, TARGET, root=tmp_path).partial
    # A complete computed one is kept.
    run(NAME, "paper@seeds=0", root=tmp_path, progress=False)
    with pytest.raises(ValueError, match="stored complete already"):
        adopt(NAME, "paper@seeds=0", source="paper", root=tmp_path)


def test_the_command_line_adopts_and_reports(source, tmp_path, capsys):
    args = ["--results", str(tmp_path), "adopt", NAME, "--profile", "paper"]
    assert main([*args, "--set", "seeds=0+1", "--from", "paper", "--cells", "1"]) == 0
    out = capsys.readouterr().out
    assert "1 of 6 cells recomputed under the current code equal" in out
    assert "adopted all 6 cells" in out
    stored = read_result(_target(tmp_path), experiment=NAME, profile=TARGET)
    assert stored is not None and json.loads((stored.path / "meta.json").read_text())
    assert main([*args, "--set", "seeds=0+1", "--from", "paper"]) == 2
    assert "stored complete already" in capsys.readouterr().err
    assert main([*args, "--set", "seeds=2", "--from", "paper"]) == 2
    assert "not stored in [paper]" in capsys.readouterr().err


def _arms(arms) -> str:
    return "paper@arms=" + "+".join(map(str, arms))


def _grow_paper(monkeypatch, arms) -> None:
    """Give the toy's paper profile another grid, as an edited profile would."""
    experiment = get_experiment(NAME)
    grown = ToyAdoptProfile(arms=tuple(arms), seeds=(0, 1, 2))
    profiles = {**experiment.profiles, "paper": grown}
    changed = dataclasses.replace(experiment, profiles=profiles)
    monkeypatch.setitem(registry_mod._REGISTRY, NAME, changed)


def test_a_grown_grid_is_joined_from_its_old_result_and_the_new_cells(
    tmp_path, committed, monkeypatch, capsys
):
    # The paper profile had arms 0 and 1; it is stored complete.
    _grow_paper(monkeypatch, (0, 1))
    old = run(NAME, "paper", root=tmp_path, progress=False)
    # Kept whole under the name of its grid, then the grid grows by arm 2.
    assert adopt(NAME, _arms((0, 1)), source="paper", cells=1, root=tmp_path).equal
    _grow_paper(monkeypatch, (0, 1, 2))
    new = run(NAME, _arms((2,)), root=tmp_path, progress=False)
    sources = [_arms((0, 1)), _arms((2,))]
    # A source naming no cell of the grid's remainder, repeated, or missing: refused.
    with pytest.raises(ValueError, match="more than once"):
        adopt(NAME, "paper", source=[sources[0]] * 2, root=tmp_path)
    run(NAME, "paper@arms=0", root=tmp_path, progress=False)
    with pytest.raises(ValueError, match=r"3 of the 9 cells .* not cells of the grids"):
        adopt(NAME, "paper", source=[sources[0], "paper@arms=0"], root=tmp_path)
    run(NAME, "paper@arms=1+2", root=tmp_path, progress=False, only={"seed": [0]})
    with pytest.raises(ValueError, match=r"2 of the 9 cells .* not stored in any"):
        adopt(NAME, "paper", source=[sources[0], "paper@arms=1+2"], root=tmp_path)
    with pytest.raises(ValueError, match=r"no cell .* is taken from \['paper@arms=0'"):
        adopt(NAME, "paper", source=[*sources, "paper@arms=0"], root=tmp_path)
    assert load_stored(NAME, "paper", root=tmp_path) is None  # stale: not loaded
    report = adopt(NAME, "paper", source=sources, cells=1, root=tmp_path)
    assert report.equal and report.cells == 9 and len(report.checks) == 2
    # One cell recomputed from each source.
    assert sorted(c.cell["arm"] == 2 for c in report.checks) == [False, True]
    assert "the stored rows of [paper@arms=0+1] and [paper@arms=2]" in report.summary()
    stored = load_stored(NAME, "paper", root=tmp_path)
    assert stored is not None and not stored.partial
    both = pd.concat([old.table, new.table], ignore_index=True)
    pd.testing.assert_frame_equal(_by_cell(stored.table), _by_cell(both))
    # Every cell is listed under the run that computed it; nothing under adopt's.
    runs = stored.meta["runs"]
    assert [len(r["cells_done"]) for r in runs] == [6, 3]
    assert runs[0]["started"] == old.meta["started"]
    assert runs[1]["started"] == new.meta["started"]
    assert sum(c for _, c, _ in compute_by_machine(stored.meta)) == 9
    entry = stored.meta["adopted"]
    assert [s["source_profile"] for s in entry["sources"]] == sources
    assert [s["cells_adopted"] for s in entry["sources"]] == [6, 3]
    assert entry["cells_adopted"] == 9 and len(entry["cells_checked"]) == 2
    # It is current and complete now: never replaced again.
    with pytest.raises(ValueError, match="stored complete already"):
        adopt(NAME, "paper", source=sources, root=tmp_path)
    # The command line joins the same way (--from repeated).
    shutil.rmtree(result_folder(tmp_path, NAME, "paper"))
    args = ["--results", str(tmp_path), "adopt", NAME, "--profile", "paper"]
    assert main([*args, "--from", sources[0], "--from", sources[1]]) == 0
    assert "adopted all 9 cells" in capsys.readouterr().out


def test_a_complete_result_of_an_older_grid_not_kept_whole_is_never_replaced(
    tmp_path, committed, monkeypatch
):
    _grow_paper(monkeypatch, (0, 1))
    run(NAME, "paper", root=tmp_path, progress=False)
    folder = result_folder(tmp_path, NAME, "paper")
    before = (folder / "meta.json").read_bytes()
    _grow_paper(monkeypatch, (0, 1, 2))
    # Its cells recomputed under other names, not adopted from it: it stays.
    run(NAME, _arms((0, 1)), root=tmp_path, progress=False)
    run(NAME, _arms((2,)), root=tmp_path, progress=False)
    with pytest.raises(ValueError, match="grid grew, first adopt"):
        adopt(NAME, "paper", source=[_arms((0, 1)), _arms((2,))], root=tmp_path)
    assert (folder / "meta.json").read_bytes() == before
