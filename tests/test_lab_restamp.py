"""Restamp: recompute a sample of stored cells; re-stamp only when all agree."""

from __future__ import annotations

import importlib
import json
import math

import lab_toy
import pytest

from dpnotes.lab import config_hash, get_experiment, load_stored, restamp, run
from dpnotes.lab.cli import main
from dpnotes.lab.registry import Experiment

NAME = lab_toy.NAME
# The module, not the function that ``dpnotes.lab`` exports under the same name.
restamp_mod = importlib.import_module("dpnotes.lab.restamp")


@pytest.fixture
def stored(tmp_path, monkeypatch):
    """A complete paper and smoke result of the toy, then a code change."""
    monkeypatch.setattr(restamp_mod, "code_version", lambda: "0.1.0+gabc123")
    paper = run(NAME, "paper", root=tmp_path, progress=False)
    smoke = run(NAME, "smoke", root=tmp_path, progress=False)
    real = Experiment.code_digests

    def refactored(self):
        digests = dict(real(self))
        if self.name == NAME:
            digests["dpnotes.rng"] = "moved-without-changing-numbers"
        return digests

    monkeypatch.setattr(Experiment, "code_digests", refactored)
    assert load_stored(NAME, "paper", root=tmp_path) is None, "now stale"
    return paper, smoke


def _files(result) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in result.path.iterdir() if p.is_file()}


def test_equal_cells_restamp_the_result_and_its_smoke(stored, tmp_path):
    paper, _ = stored
    table_before = (paper.path / "results.csv").read_bytes()
    report = restamp(NAME, "paper", cells=4, root=tmp_path)
    assert report.equal and report.restamped == ("paper", "smoke")
    checked = [c for c in report.checks if c.profile == "paper"]
    assert len(checked) == 4 and len(report.checks) == 4 + 3, "all smoke cells too"
    assert (paper.path / "results.csv").read_bytes() == table_before
    now = load_stored(NAME, "paper", root=tmp_path)
    assert now is not None
    assert now.config_hash == config_hash(get_experiment(NAME), "paper")
    entry = now.meta["restamped"][-1]
    assert (
        entry["old_hash"] == paper.config_hash and entry["new_hash"] == now.config_hash
    )
    assert entry["code_version"] == "0.1.0+gabc123" and entry["cells_stored"] == 12
    assert len(entry["cells_checked"]) == 7
    assert now.meta["code_version"] == "0.1.0+gabc123"
    assert load_stored(NAME, "smoke", root=tmp_path) is not None
    # Nothing left to do.
    again = restamp(NAME, "paper", root=tmp_path)
    assert "already current" in again.summary() and not again.checks


def test_a_differing_cell_changes_nothing_and_says_where(
    stored, tmp_path, monkeypatch, capsys
):
    paper, smoke = stored
    before = _files(paper), _files(smoke)
    monkeypatch.setenv("TOY_LAB_SHIFT", "1e-6")
    report = restamp(NAME, "paper", cells=2, root=tmp_path)
    assert not report.equal and report.restamped == ()
    assert (_files(paper), _files(smoke)) == before
    text = report.summary()
    assert "cells differ; nothing changed" in text and "column 'value'" in text
    # The wall time is not what differs: 4 of 5 rows (the draws) do.
    assert "4 of 5 rows differ" in text
    code = main(["--results", str(tmp_path), "restamp", NAME, "--cells", "2"])
    assert code == 1 and "cells differ" in capsys.readouterr().out
    assert (_files(paper), _files(smoke)) == before


def test_wall_times_are_not_compared(stored, tmp_path, monkeypatch):
    # Slower cells record other wall times; the numbers are the same.
    monkeypatch.setenv("TOY_LAB_SLEEP", "0.01")
    assert restamp(NAME, "paper", cells=2, root=tmp_path, write=False).equal


def test_cheapest_cells_first_and_seeded_random_choice(stored, tmp_path):
    cheap = restamp(NAME, "paper", cells=3, cheapest=True, root=tmp_path, write=False)
    arms = [c.cell["arm"] for c in cheap.checks if c.profile == "paper"]
    assert arms == [0, 1, 2], "arm i records i seconds"

    def chosen(seed):
        report = restamp(
            NAME, "paper", cells=3, sample_seed=seed, root=tmp_path, write=False
        )
        return [c.cell["arm"] for c in report.checks if c.profile == "paper"]

    assert chosen(5) == chosen(5) and chosen(5) != chosen(6)


def test_a_partial_result_is_split_by_its_recorded_cells(tmp_path, monkeypatch):
    monkeypatch.setattr(restamp_mod, "code_version", lambda: "0.1.0+gabc123")
    monkeypatch.setenv("TOY_LAB_FAIL_ARM", "7")
    with pytest.raises(KeyboardInterrupt):
        run(NAME, "paper", root=tmp_path, progress=False)
    monkeypatch.delenv("TOY_LAB_FAIL_ARM")
    meta_path = tmp_path / NAME / "paper" / "meta.json"
    meta = json.loads(meta_path.read_text())
    assert meta["partial"] and len(meta["cells_done"]) == 7
    meta["config_hash"] = "0" * 16  # as if stored by other code
    meta_path.write_text(json.dumps(meta))
    report = restamp(NAME, "paper", cells=100, root=tmp_path)
    assert report.equal
    assert len([c for c in report.checks if c.profile == "paper"]) == 7
    resumed = load_stored(NAME, "paper", root=tmp_path, allow_partial=True)
    assert resumed is not None and resumed.partial
    # The restamped partial resumes: only the five missing cells are computed.
    done = run(NAME, "paper", root=tmp_path, progress=False)
    assert done.meta["cells_resumed"] == 7 and "restamped" in done.meta


def test_bad_input_is_a_clear_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(restamp_mod, "code_version", lambda: "0.1.0+gabc123")
    with pytest.raises(ValueError, match="no experiment named"):
        restamp("no_such_experiment", root=tmp_path)
    with pytest.raises(ValueError, match="nothing is stored"):
        restamp(NAME, "paper", root=tmp_path)
    with pytest.raises(ValueError, match="positive integer"):
        restamp(NAME, "paper", cells=0, root=tmp_path)
    with pytest.raises(ValueError, match="unknown profile"):
        restamp(NAME, "huge", root=tmp_path)
    assert main(["--results", str(tmp_path), "restamp", NAME, "--cells", "0"]) == 2
    assert "positive integer" in capsys.readouterr().err
    assert main(["--results", str(tmp_path), "restamp", NAME]) == 2
    assert "nothing is stored" in capsys.readouterr().err
    stored = run(NAME, "smoke", root=tmp_path, progress=False)
    table = stored.path / "results.csv"
    table.write_bytes(table.read_bytes().replace(b"draw", b"drew", 1))
    with pytest.raises(ValueError, match="damaged"):
        restamp(NAME, "smoke", root=tmp_path)
    monkeypatch.setattr(restamp_mod, "code_version", lambda: "0.1.0+gabc123.dirty")
    run(NAME, "quick", root=tmp_path, progress=False)
    with pytest.raises(ValueError, match="commit them first"):
        restamp(NAME, "quick", root=tmp_path)


def test_a_grid_that_changed_cannot_be_restamped(stored, tmp_path, monkeypatch):
    exp = get_experiment(NAME)
    monkeypatch.setitem(exp.profiles, "paper", lab_toy.ToyLabProfile(arms=13, draws=4))
    with pytest.raises(ValueError, match="recompute this result"):
        restamp(NAME, "paper", root=tmp_path)


def test_a_stated_tolerance_covers_last_digit_differences(
    stored, tmp_path, monkeypatch
):
    # As floating-point sums on another CPU: the 9th and 10th digits move.
    monkeypatch.setenv("TOY_LAB_SHIFT", "3e-9")
    assert not restamp(NAME, "paper", cells=2, root=tmp_path, write=False).equal
    report = restamp(NAME, "paper", cells=2, root=tmp_path, rtol=1e-6)
    assert report.equal and "largest relative difference" in report.summary()
    entry = load_stored(NAME, "paper", root=tmp_path).meta["restamped"][-1]
    assert entry["rtol"] == 1e-6 and 0 < entry["max_relative_difference"] < 1e-6
    with pytest.raises(ValueError, match="rtol"):
        restamp(NAME, "paper", root=tmp_path, rtol=0.01)


def test_rows_with_a_key_in_their_own_format_are_found_by_their_text(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(restamp_mod, "code_version", lambda: "0.1.0+gabc123")
    stored = run("toy_lab_keys", "paper", root=tmp_path, progress=False)
    assert set(stored.table["attrs"]) == {"a", "a×b"}
    split = restamp_mod.stored_cells(get_experiment("toy_lab_keys"), stored)
    assert all(rows is None for _, rows in split), "found after recomputing"
    report = restamp("toy_lab_keys", "paper", cells=6, root=tmp_path, write=False)
    assert report.equal and len(report.checks) == 2 + 6
    monkeypatch.setenv("TOY_LAB_SHIFT", "1e-3")
    report = restamp("toy_lab_keys", "paper", cells=2, root=tmp_path, write=False)
    assert not report.equal and "column 'value'" in report.summary()


def test_float_keys_are_matched_as_the_store_wrote_them(tmp_path, monkeypatch):
    # e**3 is written with ten significant digits (20.08553692): the stored rows of
    # each cell must still be found by its key, not lost to an ambiguous text match.
    monkeypatch.setattr(restamp_mod, "code_version", lambda: "0.1.0+gabc123")
    stored = run("toy_lab_floats", "paper", root=tmp_path, progress=False)
    assert stored.table["epsilon"].max() != math.e**3  # rounded on disk
    split = restamp_mod.stored_cells(get_experiment("toy_lab_floats"), stored)
    assert [len(rows) for _, rows in split] == [3, 3, 3, 3]
    report = restamp("toy_lab_floats", "paper", cells=4, root=tmp_path, write=False)
    assert report.equal and len(report.checks) == 2 + 4
    monkeypatch.setenv("TOY_LAB_SHIFT", "1e-3")
    report = restamp("toy_lab_floats", "paper", cells=1, root=tmp_path, write=False)
    assert not report.equal and "column 'value'" in report.summary()


def test_a_smoke_result_replaced_during_the_restamp_is_left_alone(
    stored, tmp_path, monkeypatch
):
    real = restamp_mod._smoke_checks

    def checks_then_a_new_run(*args, **kwargs):
        out = real(*args, **kwargs)
        # Another process reruns the smoke profile while the paper cells are checked.
        monkeypatch.setenv("TOY_LAB_SHIFT", "0.5")
        run(NAME, "smoke", root=tmp_path, progress=False)
        monkeypatch.delenv("TOY_LAB_SHIFT")
        return out

    monkeypatch.setattr(restamp_mod, "_smoke_checks", checks_then_a_new_run)
    report = restamp(NAME, "paper", cells=1, root=tmp_path)
    assert report.restamped == ("paper",)
    smoke = load_stored(NAME, "smoke", root=tmp_path)
    assert smoke is not None and "restamped" not in smoke.meta


@pytest.mark.slow
@pytest.mark.data
def test_the_reference_code_run_here_is_compared_exactly(tmp_path):
    import subprocess

    # A real experiment: the reference subprocess knows only the package's own.
    stored = run("dp_group_error", "smoke", root=tmp_path, progress=False)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    report = restamp(
        "dp_group_error",
        "smoke",
        cells=2,
        root=tmp_path,
        write=False,
        allow_dirty=True,
        reference=head,
    )
    checks = [c for c in report.checks if c.profile == "smoke"]
    clean = not subprocess.run(
        ["git", "status", "--porcelain", "--", "dpnotes"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if clean:  # the committed code is the code that computed the result
        assert report.equal, report.summary()
    assert all(c.stored_relative_difference == 0.0 for c in checks)
    assert all(c.max_relative_difference == 0.0 for c in checks)
    # A commit whose code is not the stored result's is named as such.
    meta = dict(stored.meta, code_digests={"dpnotes.rng": "other"})
    (stored.path / "meta.json").write_text(json.dumps(meta))
    other = restamp(
        "dp_group_error",
        "smoke",
        cells=1,
        root=tmp_path,
        write=False,
        allow_dirty=True,
        reference=head,
    )
    assert not other.equal and "not the code the stored result is" in other.summary()


def test_a_reference_that_git_cannot_check_out_is_a_clear_error(stored, tmp_path):
    with pytest.raises(ValueError, match="cannot check out the reference commit"):
        restamp(NAME, "paper", cells=1, root=tmp_path, reference="no-such-commit")


def _with_runs(result, runs) -> None:
    """Rewrite a stored result's meta as if several machines computed its cells."""
    meta_path = result.path / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["runs"] = runs
    meta_path.write_text(json.dumps(meta))


def test_machine_restricts_the_check_to_the_cells_it_computed(stored, tmp_path):
    from dpnotes.lab.registry import stable_hash
    from dpnotes.lab.restamp import stored_cells

    paper, _ = stored
    cells = [c for c, _ in stored_cells(get_experiment(NAME), paper)]
    gpu = {"accelerator": "NVIDIA H200", "cpu": "Intel(R) Xeon(R) Processor"}
    cpu = {"accelerator": "none", "cpu": "Intel(R) Xeon(R) Processor"}
    _with_runs(paper, [
        {"device": gpu, "cells_done": [stable_hash(c) for c in cells[:9]]},
        {"device": cpu, "cells_done": [stable_hash(c) for c in cells[9:]]},
    ])  # fmt: skip
    report = restamp(NAME, "paper", cells=10, root=tmp_path, machine="Intel Xeon")
    checked = [c.cell for c in report.checks if c.profile == "paper"]
    assert report.equal and checked and all(c in cells[9:] for c in checked)
    assert len(checked) == len(cells[9:])


def test_an_unknown_machine_is_a_clear_error(stored, tmp_path):
    with pytest.raises(ValueError, match="computed on 'NVIDIA H100'"):
        restamp(NAME, "paper", root=tmp_path, machine="NVIDIA H100")


def test_a_smoke_result_from_another_machine_is_run_not_compared(
    stored, tmp_path, monkeypatch
):
    # The stored smoke rows came from another kind of machine: its last digits may
    # differ here, so the restamp runs the smoke profile without comparing it and
    # leaves the smoke result to be restamped on its own.
    from dpnotes.lab.registry import stable_hash

    _, smoke = stored
    hashes = [stable_hash(c) for c in get_experiment(NAME).cells("smoke")]
    _with_runs(smoke, [{"device": {"accelerator": "none", "cpu": "AMD EPYC"},
                        "cells_done": hashes}])  # fmt: skip
    monkeypatch.setattr(
        restamp_mod, "device_info", lambda: {"accelerator": "none", "cpu": "Intel Xeon"}
    )
    report = restamp(NAME, "paper", cells=2, root=tmp_path)
    runs = [c for c in report.checks if c.profile == "smoke"]
    assert report.equal and runs and not any(c.compared for c in runs)
    assert report.restamped == ("paper",)
