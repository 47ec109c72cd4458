"""The experiment registry, the runner, the atomic results store and the CLI."""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

import dpnotes.lab.store as store_mod
from dpnotes.lab import (
    Profile,
    checkpoint,
    config_hash,
    get_experiment,
    list_experiments,
    load_or_run,
    load_stored,
    read_result,
    register,
    run,
    stable_hash,
    stale_reason,
)
from dpnotes.lab.cli import main

CALLS: list[dict] = []
CACHE_SEEN: list[str | None] = []  # the run cache folder each toy cell was handed


@dataclass(frozen=True)
class ToyProfile(Profile):
    arms: tuple[str, ...]
    draws: int


def _toy_grid(config):
    return [{"arm": a} for a in config.arms]


@register(
    name="toy_for_tests",
    title="A toy experiment used by the tests",
    profiles={
        "smoke": ToyProfile(arms=("a", "b", "c"), draws=5),
        "quick": ToyProfile(arms=("a", "b"), draws=50),
        "paper": ToyProfile(arms=("a", "b"), draws=500),
    },
    grid=_toy_grid,
)
def toy_for_tests(config, cell, *, rng, cache=None, progress=False):
    CALLS.append(dict(cell))
    CACHE_SEEN.append(None if cache is None else str(cache.folder))
    if os.environ.get("TOY_FAIL_ON") == cell["arm"]:
        raise RuntimeError(f"planted failure in cell {cell['arm']}")
    if os.environ.get("TOY_SIGTERM_ON") == cell["arm"]:
        import signal

        os.kill(os.getpid(), signal.SIGTERM)
    if os.environ.get("TOY_BAR"):
        # A bar of the cell's own, drawn whatever the run asked, as DP-SGD's
        # training-step bars are.
        from tqdm import tqdm

        for _ in tqdm(range(3), desc=os.environ["TOY_BAR"], disable=not progress):
            pass
    x = rng.normal(size=config.draws)
    return pd.DataFrame({"draw": np.arange(x.size), "value": x})


@pytest.fixture(autouse=True)
def _clear_calls():
    CALLS.clear()
    CACHE_SEEN.clear()
    yield
    CALLS.clear()
    CACHE_SEEN.clear()


def test_registry_lists_the_book_experiments():
    names = {e.name for e in list_experiments()}
    assert {"dp_mean_error", "dp_group_error"} <= names
    for exp in list_experiments():
        for profile in ("smoke", "quick", "paper"):
            assert exp.cells(profile), f"{exp.name}/{profile} has an empty grid"


def test_unknown_experiment_and_profile_are_clear_errors():
    with pytest.raises(ValueError, match="python -m dpnotes list"):
        get_experiment("no_such_experiment")
    with pytest.raises(ValueError, match="unknown profile"):
        run("toy_for_tests", "huge")


def test_register_requires_all_profiles():
    with pytest.raises(ValueError, match="lacks profile"):
        register(
            name="bad", title="", profiles={"smoke": ToyProfile((), 1)}, grid=_toy_grid
        )


def test_config_values_must_be_json_like():
    with pytest.raises(TypeError, match="JSON-like"):
        stable_hash({"f": object()})


def test_smoke_run_writes_a_valid_result(tmp_path):
    result = run("toy_for_tests", "smoke", seed=3, root=tmp_path, progress=False)
    folder = tmp_path / "toy_for_tests" / "smoke" / "seed-3"
    meta = json.loads((folder / "meta.json").read_text())
    for key in (
        "code_version",
        "config_hash",
        "packages",
        "device",
        "datasets",
        "wall_time_s",
        "date",
        "seed",
        "config",
        "table_sha256",
        "rows",
    ):
        assert key in meta, key
    assert meta["seed"] == 3 and meta["rows"] == 15 and meta["cells"] == 3
    assert meta["packages"]["numpy"] == np.__version__
    assert meta["config_hash"] == config_hash(get_experiment("toy_for_tests"), "smoke")
    assert list(result.table.columns) == ["arm", "draw", "value"]
    assert not (folder / "cells").exists(), (
        "cell files are removed after a complete run"
    )
    stored = read_result(folder, experiment="toy_for_tests", profile="smoke")
    pd.testing.assert_frame_equal(stored.table, result.table)


def test_real_smoke_profile_of_dp_mean_error(tmp_path):
    result = run("dp_mean_error", "smoke", root=tmp_path, progress=False)
    table = result.table
    assert set(table.mechanism) == {"laplace", "gaussian"}
    assert (table.rmse > 0).all()
    # The Laplace mean's MSE is 2 ((b - a) / (n eps))^2. With 200 trials a cell's
    # MSE has a relative standard deviation of sqrt(20 / 200) / 2 = 0.16, so the four
    # cells are pooled (sd 0.08) and checked within 0.3, almost four sd.
    lap = table[table.mechanism == "laplace"]
    ratio = lap.rmse / (np.sqrt(2) / (lap.n * lap.epsilon))
    assert abs(np.mean(ratio**2) - 1) < 0.3, ratio.tolist()


def test_same_seed_same_table_other_seed_other_table(tmp_path):
    a = run("toy_for_tests", "smoke", seed=1, root=tmp_path / "a", progress=False).table
    b = run("toy_for_tests", "smoke", seed=1, root=tmp_path / "b", progress=False).table
    c = run("toy_for_tests", "smoke", seed=2, root=tmp_path / "c", progress=False).table
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a.value, c.value)


def test_load_or_run_uses_a_current_stored_result(tmp_path):
    run("toy_for_tests", "quick", root=tmp_path, progress=False)
    CALLS.clear()
    loaded = load_or_run("toy_for_tests", root=tmp_path)
    assert loaded.profile == "quick" and CALLS == []


def test_load_or_run_prefers_paper(tmp_path):
    run("toy_for_tests", "quick", root=tmp_path, progress=False)
    run("toy_for_tests", "paper", root=tmp_path, progress=False)
    assert load_or_run("toy_for_tests", root=tmp_path).profile == "paper"


def test_stale_config_hash_is_detected(tmp_path):
    run("toy_for_tests", "quick", root=tmp_path, progress=False)
    meta_path = tmp_path / "toy_for_tests" / "quick" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["config_hash"] = "0" * 16  # as if produced by other code or settings
    meta_path.write_text(json.dumps(meta))
    assert load_stored("toy_for_tests", "quick", root=tmp_path) is None
    CALLS.clear()
    fresh = load_or_run("toy_for_tests", root=tmp_path)
    assert len(CALLS) == 2, "a stale result must be recomputed, not used"
    assert fresh.config_hash == config_hash(get_experiment("toy_for_tests"), "quick")


def test_config_hash_follows_code_and_settings(monkeypatch):
    exp = get_experiment("toy_for_tests")
    base = config_hash(exp, "quick")
    assert config_hash(exp, "smoke") != base
    monkeypatch.setattr(type(exp), "code_digest", lambda self: "changed-code")
    assert config_hash(exp, "quick") != base


def test_list_says_why_a_stored_result_is_stale(tmp_path, monkeypatch, capsys):
    from dpnotes.lab.registry import Experiment

    args = ["--results", str(tmp_path), "list"]
    assert stale_reason("toy_for_tests", "quick", root=tmp_path) is None, "none stored"
    stored = run("toy_for_tests", "quick", root=tmp_path, progress=False)
    assert stored.meta["code_digests"] == get_experiment("toy_for_tests").code_digests()
    assert stale_reason("toy_for_tests", "quick", root=tmp_path) is None, "current"
    real = Experiment.code_digests

    def edited(self):
        digests = dict(real(self))
        if self.name == "toy_for_tests":
            digests["dpnotes.rng"] = "edited"
        return digests

    monkeypatch.setattr(Experiment, "code_digests", edited)
    assert load_stored("toy_for_tests", "quick", root=tmp_path) is None
    why = stale_reason("toy_for_tests", "quick", root=tmp_path)
    assert why == "code changed in dpnotes.rng"
    assert main(args) == 0
    listed = [line for line in capsys.readouterr().out.splitlines() if "quick" in line]
    assert any(
        "toy_for_tests" in line and "stale: code changed in dpnotes.rng" in line
        for line in listed
    )
    monkeypatch.undo()
    # A result stored before runs recorded their digests: only the settings can be
    # compared.
    meta_path = tmp_path / "toy_for_tests" / "quick" / "meta.json"
    meta = json.loads(meta_path.read_text())
    del meta["code_digests"]
    meta["config_hash"] = "0" * 16
    meta_path.write_text(json.dumps(meta))
    assert stale_reason("toy_for_tests", "quick", root=tmp_path) == (
        "code, settings or version changed"
    )
    meta["config"] = {**meta["config"], "draws": 51}
    meta_path.write_text(json.dumps(meta))
    assert stale_reason("toy_for_tests", "quick", root=tmp_path) == "settings changed"


def test_interrupted_write_keeps_the_previous_result(tmp_path, monkeypatch):
    first = run("toy_for_tests", "quick", seed=0, root=tmp_path, progress=False)
    folder = tmp_path / "toy_for_tests" / "quick"
    real_write = store_mod.atomic_write_bytes

    def crash_on_meta(path, data):
        if path.name == "meta.json":
            raise KeyboardInterrupt("killed while writing meta.json")
        real_write(path, data)

    monkeypatch.setattr(store_mod, "atomic_write_bytes", crash_on_meta)
    with pytest.raises(KeyboardInterrupt):
        run("toy_for_tests", "quick", seed=0, root=tmp_path, progress=False)
    monkeypatch.undo()
    # The old meta.json and its table were never touched: the result is still there.
    kept = load_stored("toy_for_tests", "quick", root=tmp_path)
    assert kept is not None
    pd.testing.assert_frame_equal(kept.table, first.table)
    assert read_result(folder, experiment="toy_for_tests", profile="quick") is not None


def test_truncated_table_is_not_trusted(tmp_path):
    run("toy_for_tests", "quick", root=tmp_path, progress=False)
    table = tmp_path / "toy_for_tests" / "quick" / "results.csv"
    data = table.read_bytes()
    table.write_bytes(data[: len(data) // 2])
    assert load_stored("toy_for_tests", "quick", root=tmp_path) is None


def _big_table(rows=10_000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {"epoch": np.arange(rows) % 60, "group": "g", "loss": rng.random(rows).round(3)}
    )


@pytest.fixture
def small_threshold(monkeypatch):
    """Compress tables above 50 kB, so that the tests need no megabyte tables."""
    monkeypatch.setattr(store_mod, "COMPRESS_ABOVE", 50_000)


def test_large_tables_are_stored_compressed_and_read_back(tmp_path, small_threshold):
    import gzip

    folder = tmp_path / "exp" / "paper"
    meta = {"experiment": "exp", "profile": "paper"}
    table = _big_table()
    assert len(store_mod.table_to_bytes(table)) > store_mod.COMPRESS_ABOVE
    written = store_mod.write_result(folder, table, meta)
    assert sorted(p.name for p in folder.iterdir()) == ["meta.json", "results.csv.gz"]
    assert written.meta["table"] == "results.csv.gz"
    packed = (folder / "results.csv.gz").read_bytes()
    # The checksum is that of the CSV text, not of the compressed bytes.
    text = gzip.decompress(packed)
    assert written.meta["table_sha256"] == store_mod.sha256_bytes(text)
    assert len(packed) < len(text) / 2
    back = read_result(folder, experiment="exp", profile="paper")
    assert back is not None
    pd.testing.assert_frame_equal(back.table, written.table)
    # Deterministic bytes (no timestamp in the gzip header): a rerun changes nothing.
    store_mod.write_result(folder, table, meta)
    assert (folder / "results.csv.gz").read_bytes() == packed
    # A small table replaces it as plain CSV, and the old compressed file goes.
    small = store_mod.write_result(folder, table.head(5), meta)
    assert small.meta["table"] == "results.csv"
    assert sorted(p.name for p in folder.iterdir()) == ["meta.json", "results.csv"]
    # ... and back again: the stale plain table is removed.
    store_mod.write_result(folder, table, meta)
    assert sorted(p.name for p in folder.iterdir()) == ["meta.json", "results.csv.gz"]


def test_a_write_killed_at_any_moment_leaves_a_complete_result(tmp_path, monkeypatch):
    folder = tmp_path / "exp" / "paper"
    meta = {"experiment": "exp", "profile": "paper"}
    old = _big_table(50)
    store_mod.write_result(folder, old, meta)
    new = _big_table(60, seed=1)
    real_replace = store_mod.os.replace
    # Kill after the k-th replace (k = 1: the new table is in place, meta not yet).
    for k in (1, 2):
        calls = []

        def dying(src, dst, k=k, calls=calls):
            calls.append(dst)
            if len(calls) > k:
                raise KeyboardInterrupt("killed")
            return real_replace(src, dst)

        monkeypatch.setattr(store_mod.os, "replace", dying)
        if k == 1:
            with pytest.raises(KeyboardInterrupt):
                store_mod.write_result(folder, new, meta)
            back = read_result(folder, experiment="exp", profile="paper")
            # The old result is still trusted: its table was never touched.
            assert back is not None and len(back.table) == 50
        else:
            store_mod.write_result(folder, new, meta)
        monkeypatch.setattr(store_mod.os, "replace", real_replace)
    back = read_result(folder, experiment="exp", profile="paper")
    assert back is not None and len(back.table) == 60
    # The new table went to the other name; the old one is gone once meta switched.
    assert back.meta["table"] == "results.1.csv"
    assert sorted(p.name for p in folder.iterdir()) == ["meta.json", "results.1.csv"]
    # An equal table keeps its file (no rename for git to see); another one swaps back.
    store_mod.write_result(folder, new, meta)
    assert (folder / "results.1.csv").is_file()
    store_mod.write_result(folder, old, meta)
    assert sorted(p.name for p in folder.iterdir()) == ["meta.json", "results.csv"]


def test_damaged_compressed_table_is_not_trusted(tmp_path, small_threshold):
    import gzip

    folder = tmp_path / "exp" / "paper"
    meta = {"experiment": "exp", "profile": "paper"}
    store_mod.write_result(folder, _big_table(), meta)
    path = folder / "results.csv.gz"
    packed = path.read_bytes()
    good = read_result(folder, experiment="exp", profile="paper")
    assert good is not None
    # Truncated in transit, bytes flipped, another table swapped in, not gzip at all.
    for damaged in (
        packed[: len(packed) // 2],
        packed[:100] + bytes(b ^ 0xFF for b in packed[100:200]) + packed[200:],
        gzip.compress(store_mod.table_to_bytes(_big_table(seed=1))),
        b"<html><body>Not found</body></html>",
    ):
        path.write_bytes(damaged)
        assert read_result(folder, experiment="exp", profile="paper") is None
    path.write_bytes(packed)
    assert read_result(folder, experiment="exp", profile="paper") is not None
    # The table name in meta.json must be one of the store's own two, even when
    # the file it names holds the right table.
    meta_path = folder / "meta.json"
    stored = json.loads(meta_path.read_text())
    for name in ("../elsewhere.csv", "results.txt"):
        (folder / name).write_bytes(gzip.decompress(packed))
        meta_path.write_text(json.dumps({**stored, "table": name}))
        assert read_result(folder, experiment="exp", profile="paper") is None


def test_results_written_before_compression_are_still_read(tmp_path):
    # meta.json files from before compression have no "table" entry.
    folder = tmp_path / "exp" / "paper"
    written = store_mod.write_result(
        folder, _big_table(100), {"experiment": "exp", "profile": "paper"}
    )
    meta = dict(written.meta)
    del meta["table"]
    (folder / "meta.json").write_text(json.dumps(meta))
    back = read_result(folder, experiment="exp", profile="paper")
    assert back is not None and len(back.table) == 100


def test_atomic_write_leaves_no_partial_file(tmp_path, monkeypatch):
    target = tmp_path / "x.csv"
    target.write_bytes(b"old")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(store_mod.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        store_mod.atomic_write_bytes(target, b"new contents")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.csv"], (
        "temporary file left behind"
    )


def test_interrupted_run_resumes_from_stored_cells(tmp_path, monkeypatch):
    monkeypatch.setenv("TOY_FAIL_ON", "c")
    with pytest.raises(RuntimeError, match="planted failure"):
        run("toy_for_tests", "smoke", seed=0, root=tmp_path, progress=False)
    assert load_stored("toy_for_tests", "smoke", root=tmp_path) is None
    monkeypatch.delenv("TOY_FAIL_ON")
    CALLS.clear()
    resumed = run("toy_for_tests", "smoke", seed=0, root=tmp_path, progress=False)
    assert CALLS == [{"arm": "c"}], "finished cells must not be recomputed"
    assert resumed.meta["cells_resumed"] == 2
    assert resumed.meta["workers"] == "1 local process(es)"
    fresh = run(
        "toy_for_tests", "smoke", seed=0, root=tmp_path / "fresh", progress=False
    )
    pd.testing.assert_frame_equal(resumed.table, fresh.table)


def test_partial_checkpoint_is_shown_on_request_and_resumed_elsewhere(
    tmp_path, monkeypatch, capsys
):
    # Cell "c" fails after "a" and "b" are done; with checkpoint_s=0 each finished
    # cell updates a partial result, which is not trusted by default.
    monkeypatch.setenv("TOY_FAIL_ON", "c")
    with pytest.raises(RuntimeError, match="planted failure"):
        run(
            "toy_for_tests",
            "smoke",
            seed=0,
            root=tmp_path,
            progress=False,
            checkpoint_s=0,
        )
    assert load_stored("toy_for_tests", "smoke", root=tmp_path) is None
    partial = load_stored("toy_for_tests", "smoke", root=tmp_path, allow_partial=True)
    assert partial is not None and partial.partial
    assert len(partial.table) == 10 and sorted(partial.table["arm"].unique()) == [
        "a",
        "b",
    ]
    assert "partial: 2 of 3 cells" in partial.caption()
    main(["--results", str(tmp_path), "list"])
    listed = [
        line for line in capsys.readouterr().out.splitlines() if "toy_for" in line
    ]
    assert "smoke" in listed[0] and "2/3" in listed[0] and "partial" in listed[0]
    shown = load_or_run(
        "toy_for_tests", prefer=("smoke",), root=tmp_path, allow_partial=True
    )
    assert shown.partial
    # Another checkout has the partial result but not the per-cell files: it resumes
    # from the table and computes only the missing cell.
    import shutil

    shutil.rmtree(tmp_path / "toy_for_tests" / "smoke" / "cells")
    monkeypatch.delenv("TOY_FAIL_ON")
    CALLS.clear()
    done = run("toy_for_tests", "smoke", seed=0, root=tmp_path, progress=False)
    assert CALLS == [{"arm": "c"}]
    assert not done.partial and done.meta["cells_resumed"] == 2
    fresh = run(
        "toy_for_tests", "smoke", seed=0, root=tmp_path / "fresh", progress=False
    )
    pd.testing.assert_frame_equal(done.table, fresh.table)
    # A partial result of another root seed is not resumed.
    monkeypatch.setenv("TOY_FAIL_ON", "c")
    with pytest.raises(RuntimeError):
        run(
            "toy_for_tests",
            "smoke",
            seed=6,
            root=tmp_path / "s6",
            progress=False,
            checkpoint_s=0,
        )
    shutil.rmtree(tmp_path / "s6" / "toy_for_tests" / "smoke" / "seed-6" / "cells")
    monkeypatch.delenv("TOY_FAIL_ON")
    CALLS.clear()
    run("toy_for_tests", "smoke", seed=7, root=tmp_path / "s6", progress=False)
    assert len(CALLS) == 3


def test_cli_list_and_run(tmp_path, capsys):
    assert main(["--results", str(tmp_path), "list"]) == 0
    out = capsys.readouterr().out
    assert "dp_mean_error" in out and "toy_for_tests" in out
    code = main(
        [
            "--results",
            str(tmp_path),
            "run",
            "toy_for_tests",
            "--profile",
            "smoke",
            "--seed",
            "4",
            "--no-progress",
        ]
    )
    assert code == 0
    assert "stored 15 rows" in capsys.readouterr().out
    assert main(["--results", str(tmp_path), "list"]) == 0
    assert "smoke" in capsys.readouterr().out


def test_cli_reports_unknown_experiment(capsys, tmp_path):
    assert main(["--results", str(tmp_path), "run", "nope", "--profile", "smoke"]) == 2
    assert "no experiment named 'nope'" in capsys.readouterr().err


def test_cli_module_entry_point(tmp_path):
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "dpnotes", "--results", str(tmp_path), "list"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "dp_group_error" in out


def test_results_root_finds_the_repository(monkeypatch, tmp_path):
    from dpnotes.lab import results_root

    monkeypatch.delenv("DPNOTES_RESULTS_DIR", raising=False)
    (tmp_path / "book" / "sub").mkdir(parents=True)
    (tmp_path / "_toc.yml").write_text("root: x\n")
    monkeypatch.chdir(tmp_path / "book" / "sub")
    assert results_root() == (tmp_path / "book" / "_results").resolve()
    monkeypatch.setenv("DPNOTES_RESULTS_DIR", str(tmp_path / "elsewhere"))
    assert results_root() == tmp_path / "elsewhere"


def test_parallel_jobs_give_the_same_table(tmp_path):
    one = run("dp_group_error", "smoke", root=tmp_path / "a", progress=False).table
    two = run(
        "dp_group_error", "smoke", root=tmp_path / "b", progress=False, jobs=2
    ).table
    pd.testing.assert_frame_equal(one, two)


def test_jobs_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="jobs"):
        run("toy_for_tests", "smoke", root=tmp_path, progress=False, jobs=0)


def test_failed_run_keeps_every_finished_cell(tmp_path, monkeypatch):
    # Without any checkpoint interval elapsing, a failure still stores the finished
    # cells as a partial result.
    monkeypatch.setenv("TOY_FAIL_ON", "c")
    with pytest.raises(RuntimeError, match="planted failure"):
        run("toy_for_tests", "smoke", seed=0, root=tmp_path, progress=False)
    partial = load_stored("toy_for_tests", "smoke", root=tmp_path, allow_partial=True)
    assert partial is not None and partial.partial
    assert sorted(partial.table["arm"].unique()) == ["a", "b"]


def test_sigterm_stops_the_cli_run_and_keeps_finished_cells(
    tmp_path, monkeypatch, capsys
):
    import signal

    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setenv("TOY_SIGTERM_ON", "b")
    args = ["--results", str(tmp_path), "run", "toy_for_tests", "--profile", "smoke"]
    assert main([*args, "--no-progress"]) == 130
    err = capsys.readouterr().err
    assert "interrupted (signal 15)" in err and "run the same command again" in err
    assert "1 of 3 cells are stored as a partial result" in err
    assert signal.getsignal(signal.SIGTERM) is before, "handler must be restored"
    partial = load_stored("toy_for_tests", "smoke", root=tmp_path, allow_partial=True)
    assert partial is not None and list(partial.table["arm"].unique()) == ["a"]


def test_an_interrupt_before_any_cell_says_nothing_was_stored(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("TOY_SIGTERM_ON", "a")
    args = ["--results", str(tmp_path), "run", "toy_for_tests", "--profile", "smoke"]
    assert main([*args, "--seed", "2", "--no-progress"]) == 130
    err = capsys.readouterr().err
    assert "no cell finished, so nothing was stored" in err
    assert "partial result" not in err


def test_a_negative_or_endless_wait_is_refused_before_anything(tmp_path, capsys):
    for wait in (-5, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="finite number of seconds >= 0"):
            run("toy_for_tests", "smoke", root=tmp_path, progress=False, wait=wait)
    args = ["--results", str(tmp_path), "run", "toy_for_tests", "--profile", "smoke"]
    assert main([*args, "--wait", "-5"]) == 2
    assert "finite number of seconds >= 0" in capsys.readouterr().err
    assert not any(tmp_path.iterdir()), "nothing stored, no folder made"


def test_list_names_the_results_folder_it_reads(tmp_path, capsys):
    assert main(["--results", str(tmp_path), "list"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"results folder: {tmp_path}"


def test_no_progress_hides_the_bars_that_cells_draw(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("TOY_BAR", "toy-steps")
    quiet = run("toy_for_tests", "smoke", seed=1, root=tmp_path / "a", progress=False)
    assert "toy-steps" not in capfd.readouterr().err
    shown = run("toy_for_tests", "smoke", seed=1, root=tmp_path / "b", progress=True)
    assert capfd.readouterr().err.count("toy-steps") >= 3, "one bar per cell"
    pd.testing.assert_frame_equal(quiet.table, shown.table)
    # The same through the command line.
    args = ["--results", str(tmp_path / "c"), "run", "toy_for_tests"]
    assert main([*args, "--profile", "smoke", "--no-progress"]) == 0
    assert "toy-steps" not in capfd.readouterr().err


def test_a_worker_killed_mid_run_is_reported_and_finished_cells_kept(
    tmp_path, monkeypatch, capsys
):
    import concurrent.futures.process

    from dpnotes.lab import runner

    def pool_losing_a_worker(name, profile, seed, cells, todo, store, *args):
        # The first cell finishes; then a worker dies, as when the kernel kills it.
        store(todo[0], runner.run_cell(name, profile, seed, cells[todo[0]]))
        raise concurrent.futures.process.BrokenProcessPool("a worker died")

    monkeypatch.setattr(runner, "_compute", pool_losing_a_worker)
    args = ["--results", str(tmp_path), "run", "toy_for_tests", "--profile", "smoke"]
    assert main([*args, "--jobs", "2", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "worker process ended abruptly" in err and "run the same command" in err
    assert "Traceback" not in err
    partial = load_stored("toy_for_tests", "smoke", root=tmp_path, allow_partial=True)
    assert partial is not None and list(partial.table["arm"].unique()) == ["a"]


def test_cells_resumed_from_a_restamped_partial_keep_its_history(tmp_path, monkeypatch):
    import shutil

    monkeypatch.setenv("TOY_FAIL_ON", "c")
    with pytest.raises(RuntimeError):
        run("toy_for_tests", "smoke", seed=3, root=tmp_path, progress=False)
    monkeypatch.delenv("TOY_FAIL_ON")
    folder = tmp_path / "toy_for_tests" / "smoke" / "seed-3"
    meta_path = folder / "meta.json"
    meta = json.loads(meta_path.read_text())
    history = [{"from": "0" * 16, "to": meta["config_hash"], "why": "a test"}]
    meta_path.write_text(json.dumps({**meta, "restamped": history}))
    shutil.rmtree(folder / "cells")  # as on another checkout: only the partial
    CALLS.clear()
    done = run("toy_for_tests", "smoke", seed=3, root=tmp_path, progress=False)
    assert CALLS == [{"arm": "c"}]
    assert done.meta["restamped"] == history
    # A run that computes every cell itself has no such history.
    fresh = run("toy_for_tests", "smoke", seed=3, root=tmp_path / "b", progress=False)
    assert "restamped" not in fresh.meta
    pd.testing.assert_frame_equal(done.table, fresh.table)


def _failed_run_without_partial(tmp_path, monkeypatch, seed):
    """A toy run that fails at cell "c", its partial result then dropped.

    What stays is what another process's unfinished run leaves: its cell files and its
    run record. Returns the result's folder.
    """
    monkeypatch.setenv("TOY_FAIL_ON", "c")
    with pytest.raises(RuntimeError):
        run("toy_for_tests", "smoke", seed=seed, root=tmp_path, progress=False)
    folder = tmp_path / "toy_for_tests" / "smoke" / f"seed-{seed}"
    (folder / store_mod.META).unlink()
    (folder / store_mod.TABLE).unlink()
    return folder


def test_checkpoint_stores_finished_cells_without_computing(
    tmp_path, monkeypatch, capsys
):
    args = ["--results", str(tmp_path), "checkpoint", "toy_for_tests", "--profile"]
    assert main([*args, "smoke", "--seed", "5"]) == 0
    assert "nothing stored" in capsys.readouterr().out
    _failed_run_without_partial(tmp_path, monkeypatch, seed=5)
    CALLS.clear()
    assert main([*args, "smoke", "--seed", "5"]) == 0
    assert "partial: 2 of 3 cells computed" in capsys.readouterr().out
    assert CALLS == [], "checkpoint computes nothing"
    partial = load_stored(
        "toy_for_tests", "smoke", root=tmp_path, seed=5, allow_partial=True
    )
    assert partial.partial and len(partial.table) == 10
    # Another seed's cells are not this seed's checkpoint.
    assert main([*args, "smoke", "--seed", "6"]) == 0
    assert "nothing stored" in capsys.readouterr().out
    monkeypatch.delenv("TOY_FAIL_ON")
    done = run("toy_for_tests", "smoke", seed=5, root=tmp_path, progress=False)
    assert main([*args, "smoke", "--seed", "5"]) == 0
    assert "is complete" in capsys.readouterr().out
    again = load_stored("toy_for_tests", "smoke", root=tmp_path, seed=5)
    assert again is not None and again.meta["date"] == done.meta["date"]


def test_checkpoint_credits_the_cells_to_the_run_computing_them(tmp_path, monkeypatch):
    # A run in another process (here: one that failed, leaving its cells and its
    # record) computed the cells; checkpoint says so, with that run's machine and start.
    folder = _failed_run_without_partial(tmp_path, monkeypatch, seed=8)
    (record_path,) = folder.glob("cells/*/run.json")
    record = json.loads(record_path.read_text())
    assert record["workers"] == "1 local process(es)"
    record.update(device="the run's machine", started="2026-01-02T03:04:05+00:00")
    record_path.write_text(json.dumps(record))
    partial = checkpoint("toy_for_tests", "smoke", seed=8, root=tmp_path)
    assert partial.partial and len(partial.table) == 10
    assert partial.meta["device"] == "the run's machine"
    assert partial.meta["workers"] == "1 local process(es)"
    assert partial.meta["started"] == "2026-01-02T03:04:05+00:00"
    assert partial.meta["wall_time_s"] > 3600, "wall time from the run's own start"
    # Without a readable record the cells are the checkpoint's own, started now.
    (folder / store_mod.META).unlink()
    record_path.write_text("{not json")
    partial = checkpoint("toy_for_tests", "smoke", seed=8, root=tmp_path)
    assert partial.meta["device"] != "the run's machine"
    assert partial.meta["started"] > "2026-01-02T03:04:05+00:00"
    assert partial.meta["wall_time_s"] < 60


def test_a_resumed_run_credits_found_cells_to_the_run_that_wrote_them(
    tmp_path, monkeypatch
):
    # A run on another machine stopped after cells "a" and "b" (its partial dropped):
    # the run that resumes computes only "c", and says so. Its own entry must not claim
    # the found cells, nor the catalog count its time twice.
    from dpnotes.lab import catalog

    folder = _failed_run_without_partial(tmp_path, monkeypatch, seed=11)
    (record_path,) = folder.glob("cells/*/run.json")
    record = json.loads(record_path.read_text())
    record.update(
        device={"cpu": "Old CPU", "cpu_count": 2}, started="2026-01-02T03:00:00+00:00"
    )
    record_path.write_text(json.dumps(record))
    ended = 1767326400.0  # 2026-01-02T04:00:00Z: the newest cell file
    for cell in folder.glob("cells/*/*.csv"):
        os.utime(cell, (ended - 600, ended - 600))
    os.utime(max(folder.glob("cells/*/*.csv")), (ended, ended))
    monkeypatch.delenv("TOY_FAIL_ON")
    CALLS.clear()
    done = run("toy_for_tests", "smoke", seed=11, root=tmp_path, progress=False)
    assert CALLS == [{"arm": "c"}] and not done.partial
    first, mine = done.meta["runs"]
    assert len(first["cells_done"]) == 2 and len(mine["cells_done"]) == 1
    assert first["device"] == {"cpu": "Old CPU", "cpu_count": 2}
    assert (first["started"], first["date"]) == (
        "2026-01-02T03:00:00+00:00",
        "2026-01-02T04:00:00+00:00",
    )
    assert mine["started"] == done.meta["started"] and mine["device"] != first["device"]
    by_machine = dict((m, (c, t)) for m, c, t in catalog.compute_by_machine(done.meta))
    assert by_machine["Old CPU ×2"] == (2, 3600.0)
    (machine,) = set(by_machine) - {"Old CPU ×2"}
    assert by_machine[machine][0] == 1
    assert by_machine[machine][1] < 60, "the storing run's time counted once"
    # Without a record the found cells stay the resuming run's (older checkouts).
    folder = _failed_run_without_partial(tmp_path, monkeypatch, seed=12)
    (record_path,) = folder.glob("cells/*/run.json")
    record_path.unlink()
    monkeypatch.delenv("TOY_FAIL_ON")
    done = run("toy_for_tests", "smoke", seed=12, root=tmp_path, progress=False)
    assert "runs" not in done.meta and done.meta["cells_resumed"] == 2


def test_times_of_runs_stored_without_history_are_lower_bounds():
    from dpnotes.lab import catalog
    from dpnotes.lab.runner import _earlier_runs

    old = {"device": {"cpu": "Intel(R) Xeon(R) Processor", "cpu_count": 2},
           "partial": True, "cells_done": ["a", "b"],
           "started": "2026-01-01T00:00:00+00:00", "date": "2026-01-01T00:30:00+00:00",
           "wall_time_s": 1800.0}  # fmt: skip
    (entry,) = _earlier_runs(old)
    assert entry["last_run_only"] and entry["cells_done"] == ["a", "b"]
    meta = {"device": {"cpu": "AMD EPYC", "cpu_count": 2},
            "cells_done": ["a", "b", "c"], "started": "2026-01-02T00:00:00+00:00",
            "wall_time_s": 60.0, "runs": [entry]}  # fmt: skip
    assert catalog.compute_text(meta) == (
        "Intel Xeon ×2: 2 cells, at least 30 min; AMD EPYC ×2: 1 cell, 1 min"
    )


def test_a_checkpoint_of_the_same_run_extends_its_entry():
    import datetime as dt

    from dpnotes.lab.runner import _runs

    def entry(started, cells):
        return {"device": "m", "workers": "2", "code_version": "v", "started": started,
                "date": started, "cells_done": cells}  # fmt: skip

    start = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    now = start + dt.timedelta(hours=1)
    earlier = [
        entry("2026-01-01T00:00:00+00:00", ["a"]),
        entry(start.isoformat(), ["b"]),
    ]
    meta = {"device": "m", "workers": "2", "code_version": "v", "runs": earlier}
    runs = _runs(meta, ["a", "b", "c"], start, now)["runs"]
    assert [r["cells_done"] for r in runs] == [["a"], ["b", "c"]]
    assert runs[-1]["date"] == now.isoformat(timespec="seconds")
    # Another start is another run.
    later = start + dt.timedelta(minutes=1)
    runs = _runs(meta, ["a", "b", "c"], later, now)["runs"]
    assert [r["cells_done"] for r in runs] == [["a"], ["b"], ["c"]]


def test_cells_slower_than_the_interval_each_get_a_partial(tmp_path, monkeypatch):
    # Two long cells finish a second apart: the second must not wait in cells/ for a
    # third finish before it is in the partial result.
    import types

    from dpnotes.lab import runner

    clock = [0.0]
    monkeypatch.setattr(
        runner, "time", types.SimpleNamespace(perf_counter=lambda: clock[0])
    )
    seen = []

    def two_slow_then_fail(name, profile, seed, cells, todo, store, *args):
        for i, at in zip(todo[:2], (1000.0, 1001.0), strict=True):
            clock[0] = at
            store(i, runner.run_cell(name, profile, seed, cells[i]))
            stored = load_stored(
                "toy_for_tests", "smoke", root=tmp_path, seed=9, allow_partial=True
            )
            seen.append(0 if stored is None else len(stored.meta["cells_done"]))
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "_compute", two_slow_then_fail)
    with pytest.raises(KeyboardInterrupt):
        run("toy_for_tests", "smoke", seed=9, root=tmp_path, progress=False)
    assert seen == [1, 2]
    # Quick cells are written at most once per interval.
    clock[0], seen[:] = 0.0, []

    def two_quick_then_fail(name, profile, seed, cells, todo, store, *args):
        for i in todo[:2]:
            clock[0] += 1.0
            store(i, runner.run_cell(name, profile, seed, cells[i]))
            stored = load_stored(
                "toy_for_tests", "smoke", root=tmp_path / "q", allow_partial=True
            )
            seen.append(0 if stored is None else len(stored.meta["cells_done"]))
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "_compute", two_quick_then_fail)
    with pytest.raises(KeyboardInterrupt):
        run("toy_for_tests", "smoke", root=tmp_path / "q", progress=False)
    assert seen == [0, 0]


def test_run_cache_computes_once_per_key(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return pd.DataFrame({"x": [0.1, 1 / 3], "g": ["a", "b"]})

    cache = store_mod.RunCache(tmp_path)
    a = cache.table("ns", {"k": 1}, compute)
    b = cache.table("ns", {"k": 1}, compute)
    assert len(calls) == 1
    pd.testing.assert_frame_equal(b, a)
    expected = pd.read_csv(io.BytesIO(store_mod.table_to_bytes(compute())))
    (
        pd.testing.assert_frame_equal(a, expected),
        "computed and cached tables go through CSV",
    )
    calls.clear()
    cache.table("ns", {"k": 2}, compute)
    assert len(calls) == 1, "another key is another computation"
    entry = tmp_path / "ns" / stable_hash({"k": 1})
    assert json.loads((entry / "meta.json").read_text())["key"] == {"k": 1}
    # A damaged entry is not trusted: it is computed again and repaired.
    (entry / "results.csv").write_text("x,g\n0.1,a\n")
    pd.testing.assert_frame_equal(cache.table("ns", {"k": 1}, compute), a)
    assert len(calls) == 2
    cache.table("ns", {"k": 1}, compute)
    assert len(calls) == 2


def test_run_hands_its_cells_the_stores_run_cache(tmp_path):
    run("toy_for_tests", "smoke", root=tmp_path, progress=False)
    assert CACHE_SEEN == [str(tmp_path / ".run_cache")] * 3
    assert "DPNOTES_RUN_CACHE" not in os.environ


_CACHED_FIT = """
import hashlib, json
import jax
import numpy as np
import pandas as pd
import sys
from pathlib import Path
from dpnotes.lab import runner
from dpnotes.synth import MST

hits = []
jax.monitoring.register_event_listener(
    lambda event, **kw: hits.append(event)
    if event == "/jax/compilation_cache/cache_hits" else None
)
runner._compilation_cache_on(Path(sys.argv[1]))
r = np.random.default_rng(0)
a = r.integers(0, 3, 400)
df = pd.DataFrame({"A": a, "B": (a + r.integers(0, 2, 400)) % 3, "C": a % 2})
model = MST(epsilon=2.0, delta=1e-6).fit(df, {"A": 3, "B": 3, "C": 2}, rng=r)
rows = model.sample(300, rng=np.random.default_rng(1)).to_numpy()
print(json.dumps({
    "sample": hashlib.sha256(rows.tobytes()).hexdigest(),
    "hits": len(hits),
    "enabled": bool(jax.config.jax_enable_compilation_cache),
}))
"""


@pytest.mark.slow
def test_workers_load_compiled_programs_and_results_do_not_change(tmp_path):
    import subprocess
    import sys

    env = dict(os.environ)
    # Cache every program, however short its compilation (the default skips < 1 s).
    env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
    env.pop("DPNOTES_COMPILATION_CACHE", None)

    def fit(**extra) -> dict:
        out = subprocess.run(
            [sys.executable, "-c", _CACHED_FIT, str(tmp_path)],
            env={**env, **extra},
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    first = fit()
    assert first["enabled"] and first["hits"] == 0
    assert list((tmp_path / "jax").iterdir()), "the first process writes programs"
    second = fit()
    assert second["hits"] > 0, "a later process loads them instead of compiling"
    assert second["sample"] == first["sample"]
    stored = sorted((tmp_path / "jax").iterdir())
    # Turned off: nothing loaded, nothing written, the same records.
    off = fit(DPNOTES_COMPILATION_CACHE="0")
    assert not off["enabled"] and off["hits"] == 0
    assert off["sample"] == first["sample"]
    assert sorted((tmp_path / "jax").iterdir()) == stored


def test_worker_cells_turn_the_compilation_cache_on(tmp_path, monkeypatch):
    from dpnotes.lab import runner

    calls = []
    monkeypatch.setattr(runner, "_compilation_cache_on", lambda cache: calls.append(1))
    run("toy_for_tests", "smoke", root=tmp_path / "a", progress=False)
    assert calls == [], "not in the caller's process"
    monkeypatch.setattr(runner, "_IN_WORKER", True)
    run("toy_for_tests", "smoke", root=tmp_path / "b", progress=False)
    assert len(calls) == 3, "before every cell of a worker"


def test_in_process_runs_leave_the_callers_jax_settings_alone(tmp_path):
    import jax

    import dpnotes.synth  # noqa: F401

    before = (
        jax.config.jax_enable_compilation_cache,
        jax.config.jax_compilation_cache_dir,
    )
    run("toy_for_tests", "smoke", root=tmp_path, progress=False)
    after = (
        jax.config.jax_enable_compilation_cache,
        jax.config.jax_compilation_cache_dir,
    )
    assert after == before
    assert not (tmp_path / ".run_cache" / "jax").exists()
