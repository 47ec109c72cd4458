"""The store never loses a finished result: kills, interruptions, seeds, concurrency."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import lab_toy
import numpy as np
import pytest

from dpnotes.lab import inspect_result, load_stored, read_result, run
from dpnotes.lab.cli import main
from dpnotes.lab.store import RunLocked, result_folder, stored_seeds

ROOT = Path(__file__).resolve().parents[1]
NAME = lab_toy.NAME
_CLI = "import sys, lab_toy; from dpnotes.lab.cli import main; sys.exit(main())"


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _cli(root: Path, *args: str, sleep: float = 0.0) -> subprocess.Popen:
    """Start the command line in a new process, with the toy registered."""
    env = {**os.environ, "TOY_LAB_SLEEP": str(sleep), "PYTHONPATH": str(ROOT / "tests")}
    return subprocess.Popen(
        [sys.executable, "-c", _CLI, "--results", str(root), *args],
        cwd=ROOT,
        env=env,
        # Ctrl-C as a terminal delivers it: a test runner's worker (pytest-xdist)
        # ignores SIGINT, and a child would inherit that.
        preexec_fn=_default_sigint,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _table_bytes(folder: Path) -> bytes:
    return (folder / "results.csv").read_bytes() + (folder / "meta.json").read_bytes()


def _wait_for_cells(folder: Path, count: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(list(folder.glob("cells/*/*.csv"))) >= count:
            return
        time.sleep(0.02)
    raise AssertionError(f"no {count} finished cells under {folder} in {timeout} s")


@pytest.mark.slow
@pytest.mark.parametrize("how", ["SIGKILL", "SIGINT"])
def test_a_killed_rerun_never_replaces_the_complete_result(tmp_path, how):
    complete = run(NAME, "quick", root=tmp_path, progress=False)
    folder = complete.path
    before = _table_bytes(folder)
    rng = np.random.default_rng(7 if how == "SIGKILL" else 8)
    for _ in range(3):
        # A rerun of the same result (the same code), killed at a random moment
        # after it has finished at least one cell and checkpointed. Each starts from
        # none of the six cells (a rerun resumes from the cells an earlier one kept, and
        # with most of them kept it could finish before the signal: CI saw one exit 0),
        # so at least four cells (1.2 s) are left when the signal is sent.
        shutil.rmtree(folder / "cells", ignore_errors=True)
        proc = _cli(
            tmp_path, "run", NAME, "--profile", "quick", "--no-progress", sleep=0.3
        )
        _wait_for_cells(folder, 1)
        time.sleep(float(rng.uniform(0.0, 0.3)))
        proc.send_signal(getattr(signal, how))
        _, err = proc.communicate(timeout=60)
        assert proc.returncode != 0, f"the rerun finished before the {how}: {err}"
        assert _table_bytes(folder) == before, "the complete result was touched"
        stored = load_stored(NAME, "quick", root=tmp_path)
        assert stored is not None and not stored.partial
    # The interrupted reruns' cells are kept for a resume, which completes the run.
    again = run(NAME, "quick", root=tmp_path, progress=False)
    assert not again.partial and len(again.table) == len(complete.table)


@pytest.mark.slow
def test_another_seed_lives_beside_the_stored_result(tmp_path, capsys):
    run(NAME, "quick", root=tmp_path, progress=False)
    seed0 = result_folder(tmp_path, NAME, "quick", 0)
    before = _table_bytes(seed0)
    proc = _cli(
        tmp_path,
        "run",
        NAME,
        "--profile",
        "quick",
        "--seed",
        "1",
        "--no-progress",
        sleep=0.3,
    )
    seed1 = result_folder(tmp_path, NAME, "quick", 1)
    _wait_for_cells(seed1, 2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert _table_bytes(seed0) == before
    assert stored_seeds(tmp_path, NAME, "quick") == [0, 1]
    partial = load_stored(NAME, "quick", root=tmp_path, seed=1, allow_partial=True)
    assert partial is not None and partial.partial and partial.meta["seed"] == 1
    assert "--seed 1" in partial.caption()
    assert main(["--results", str(tmp_path), "list"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith(NAME)]
    assert any(" 0 " in x and "6/6" in x and "stale" not in x for x in lines), lines
    assert any(" 1 " in x and "partial" in x for x in lines), lines


@pytest.mark.slow
def test_a_second_run_of_the_same_result_refuses_while_one_runs(tmp_path, capsys):
    proc = _cli(tmp_path, "run", NAME, "--profile", "quick", "--no-progress", sleep=0.3)
    folder = result_folder(tmp_path, NAME, "quick")
    _wait_for_cells(folder, 1)
    args = ["--results", str(tmp_path), "run", NAME, "--profile", "quick"]
    assert main([*args, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "being written by another process" in err and "lock" in err
    with pytest.raises(RunLocked):
        run(NAME, "quick", root=tmp_path, progress=False)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    stored = load_stored(NAME, "quick", root=tmp_path)
    assert stored is not None and not stored.partial and stored.meta["cells"] == 6
    # Once the first is done, a waiting run goes ahead.
    assert not run(NAME, "quick", root=tmp_path, progress=False, wait=5).partial


def test_a_partial_never_replaces_a_complete_result(tmp_path, monkeypatch):
    complete = run(NAME, "quick", root=tmp_path, progress=False)
    before = _table_bytes(complete.path)

    monkeypatch.setenv("TOY_LAB_FAIL_ARM", "3")
    with pytest.raises(KeyboardInterrupt):
        run(NAME, "quick", root=tmp_path, progress=False, checkpoint_s=0)
    assert _table_bytes(complete.path) == before


def test_a_rerun_stopped_before_its_first_cell_leaves_the_partial_as_it_was(
    tmp_path, monkeypatch
):
    # Cells 0-6 of 12 stored; a rerun is stopped while computing cell 7, so it adds
    # nothing: the stored record (runs, start, wall time) must not be rewritten.
    monkeypatch.setenv("TOY_LAB_FAIL_ARM", "7")
    with pytest.raises(KeyboardInterrupt):
        run(NAME, "paper", root=tmp_path, progress=False)
    folder = result_folder(tmp_path, NAME, "paper", 0)
    before = (folder / "meta.json").read_bytes()
    assert json.loads(before)["partial"] and len(json.loads(before)["cells_done"]) == 7
    with pytest.raises(KeyboardInterrupt):
        run(NAME, "paper", root=tmp_path, progress=False)
    assert (folder / "meta.json").read_bytes() == before
    # One more cell, and the partial is updated.
    monkeypatch.setenv("TOY_LAB_FAIL_ARM", "8")
    with pytest.raises(KeyboardInterrupt):
        run(NAME, "paper", root=tmp_path, progress=False)
    assert len(json.loads((folder / "meta.json").read_text())["cells_done"]) == 8


def test_files_are_world_readable_and_damage_is_named(tmp_path, capsys):
    stored = run(NAME, "smoke", root=tmp_path, progress=False)
    for name in ("results.csv", "meta.json"):
        mode = stat.S_IMODE((stored.path / name).stat().st_mode)
        assert mode == 0o644, (name, oct(mode))
    # A table edited by hand: named as damaged, never used.
    table = stored.path / "results.csv"
    table.write_text(table.read_text().replace("draw", "drew", 1))
    result, why = inspect_result(stored.path, experiment=NAME, profile="smoke")
    assert result is None and "does not match the sha256" in why
    assert load_stored(NAME, "smoke", root=tmp_path) is None
    assert main(["--results", str(tmp_path), "list"]) == 0
    out = capsys.readouterr().out
    assert any(
        line.startswith(NAME) and "damaged: results.csv does not match" in line
        for line in out.splitlines()
    ), out
    # Metadata that does not parse is named too.
    (stored.path / "meta.json").write_text("{not json")
    assert (
        "does not parse"
        in inspect_result(stored.path, experiment=NAME, profile="smoke")[1]
    )
    assert read_result(stored.path, experiment=NAME, profile="smoke") is None


def test_gitattributes_keeps_stored_tables_byte_exact():
    out = subprocess.run(
        ["git", "check-attr", "text", "book/_results/x/paper/results.csv"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip().endswith("text: unset"), out


def test_lock_files_and_seed_folders_are_ignored_by_git():
    paths = [
        "book/_results/x/paper/.lock",
        "book/_results/x/paper/seed-2/cells/abc/1.csv",
    ]
    out = subprocess.run(
        ["git", "check-ignore", *paths], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    assert out == paths


def test_stored_meta_is_json_with_seed(tmp_path):
    stored = run(NAME, "smoke", seed=4, root=tmp_path, progress=False)
    assert stored.path == tmp_path / NAME / "smoke" / "seed-4"
    assert json.loads((stored.path / "meta.json").read_text())["seed"] == 4
    assert load_stored(NAME, "smoke", root=tmp_path) is None, "seed 0 is not seed 4"
    assert load_stored(NAME, "smoke", root=tmp_path, seed=4) is not None


def test_a_result_finished_over_several_runs_says_which_machine_computed_which_cells(
    tmp_path, monkeypatch
):
    import dpnotes.lab.runner as runner

    def machine(name: str):
        return lambda config=None: {"cpu": name, "accelerator": "none"}

    # First run, on machine A: interrupted after cells 0-6 of 12.
    monkeypatch.setattr(runner, "device_info", machine("A"))
    monkeypatch.setenv("TOY_LAB_FAIL_ARM", "7")
    with pytest.raises(KeyboardInterrupt):
        run(NAME, "paper", root=tmp_path, progress=False)
    first = read_result(
        result_folder(tmp_path, NAME, "paper", 0), experiment=NAME, profile="paper"
    )
    assert first is not None and first.partial and "runs" not in first.meta
    shutil.rmtree(first.path / "cells")  # as on another checkout: only the partial
    # Second run, on machine B: two more cells, then interrupted again.
    monkeypatch.setattr(runner, "device_info", machine("B"))
    monkeypatch.setenv("TOY_LAB_FAIL_ARM", "9")
    with pytest.raises(KeyboardInterrupt):
        run(NAME, "paper", root=tmp_path, progress=False)
    # Third run, on machine A again, finishes.
    monkeypatch.setattr(runner, "device_info", machine("A"))
    monkeypatch.delenv("TOY_LAB_FAIL_ARM")
    done = run(NAME, "paper", root=tmp_path, progress=False)
    assert not done.partial and done.meta["device"]["cpu"] == "A"
    runs = done.meta["runs"]
    assert [r["device"]["cpu"] for r in runs] == ["A", "B", "A"]
    assert [len(r["cells_done"]) for r in runs] == [7, 2, 3]
    every = [h for r in runs for h in r["cells_done"]]
    assert len(every) == len(set(every)) == 12
    assert all(r["code_version"] and r["started"] <= r["date"] for r in runs)
    assert "seed 0; cells computed on A: 10, B: 2; regenerate" in done.caption()
    assert done.cells_by_machine() == {"A": 10, "B": 2}
    # A result computed in one run names its machine once, with no run list.
    single = run(NAME, "quick", root=tmp_path, progress=False)
    assert "runs" not in single.meta and single.meta["device"]["cpu"] == "A"
    assert single.cells_by_machine() == {"A": single.meta["cells"]}
