"""The catalogue of stored results and data files that the appendices display."""

from __future__ import annotations

import pandas as pd
import pytest

from dpnotes.lab import catalog, config_hash, get_experiment
from dpnotes.lab.store import write_result


def test_short_name_names_each_kind_of_file():
    assert catalog.short_name("acs/2018/1-Year/psam_p35.csv") == "ACS 2018 NM"
    assert catalog.short_name("acs/2018/1-Year/psam_p99.csv") == "ACS 2018 99"
    assert catalog.short_name("acs/extracts/anything.csv") == "ACS NY sample"
    assert catalog.short_name("dutch/dutch.csv") == "Dutch"
    assert catalog.short_name("elsewhere/file.csv") == "elsewhere/file.csv"
    names = ["adult/adult.data", "mnist/a", "adult/adult.test"]
    assert catalog.data_names(names) == "Adult, MNIST"
    assert catalog.data_names([]) == "synthetic"


def test_device_wall_and_stamp_texts():
    assert catalog.device_text({"device": {"accelerator": "NVIDIA H200"}}) == (
        "NVIDIA H200"
    )
    assert catalog.device_text({"device": {"cpu_count": 16}}) == "CPU ×16"
    assert catalog.device_text({}) == "CPU ×None"
    assert [catalog.wall_text(s) for s in (3600, 59.6, 60, None, 0)] == [
        "1.0 h",
        "60 s",
        "1 min",
        "",
        "0 s",
    ]
    check = {"cells_checked": [{"profile": "paper"}] * 3, "reference": "abc"}
    meta = {"profile": "paper", "restamped": [{"old": "x"}, check]}
    assert catalog.stamped_by(meta) == "restamp: 3 cells vs its own code"
    # an entry without cells checked (the older kind of restamp) is not a check
    assert catalog.stamped_by({"profile": "paper", "restamped": [{"old": "x"}]}) == (
        "run"
    )


def test_stored_results_on_the_store():
    exp = get_experiment("log_size_sum")
    table = catalog.stored_results(experiments=[exp])
    row = table.set_index("profile").loc["paper"]
    assert row["status"] == "complete" and row["data"] == "synthetic"
    assert row["config hash"] == config_hash(exp, "paper")
    assert len(row["commit"]) == 8
    assert set(catalog.WHAT_COLUMNS) | set(catalog.STAMP_COLUMNS) <= set(table)


def _store(root, exp, *, config_hash_, partial=False):
    meta = {
        "experiment": exp.name,
        "profile": "paper",
        "config_hash": config_hash_,
        "code_version": "0.1.0+g0123456789ab",
        "seed": 0,
        "device": {"accelerator": "none", "cpu_count": 2},
        "wall_time_s": 125.0,
        "datasets": [{"name": "acs/2018/1-Year/psam_p35.csv"}],
        "partial": partial,
        "cells": 5,
        "cells_done": ["a", "b"] if partial else None,
    }
    write_result(root / exp.name / "paper", pd.DataFrame({"x": [1.0]}), meta)


def test_stored_results_on_a_hand_made_store(tmp_path):
    exp = get_experiment("log_size_sum")
    assert catalog.stored_results(tmp_path, experiments=[exp]).empty
    _store(tmp_path, exp, config_hash_=config_hash(exp, "paper"), partial=True)
    row = catalog.stored_results(tmp_path, experiments=[exp]).iloc[0]
    assert row["status"] == "partial: 2 of 5 cells"
    assert (row["data"], row["wall time"], row["commit"]) == (
        "ACS 2018 NM",
        "2 min",
        "01234567",
    )
    assert row["stamped by"] == "run" and row["device"] == "CPU ×2"
    assert row["computed on"] == "CPU ×2: 2 cells (the last run: 2 min)"
    _store(tmp_path, exp, config_hash_="0" * 16)
    row = catalog.stored_results(tmp_path, experiments=[exp]).iloc[0]
    assert row["status"].startswith("stale (")


def test_citation_text():
    table = pd.DataFrame(
        {
            "experiment": ["dp_mean_error", "dp_mean_error"],
            "profile": ["quick", "paper"],
            "commit": ["aaaa", "bbbb"],
            "config hash": ["h1", "h2"],
        }
    )
    text = catalog.citation_text(table, version="1.2")
    assert "commit `bbbb`, config hash `h2`), dpnotes 1.2" in text
    assert catalog.citation_text(table.iloc[:1], version="1.2") == ""
    with pytest.raises(ValueError, match="config hash"):
        catalog.citation_text(table.drop(columns="config hash"), version="1.2")


def test_data_file_tables():
    files = catalog.data_files()
    row = files.set_index("file").loc["psam_p35.csv"]
    assert row["what"].startswith("in `acs/2018/1-Year/`: ") and row["rows"] == "19,247"
    lic = catalog.licences()
    assert lic["folder"].str.contains("`mnist/`").sum() == 1
    lines = catalog.sha256_lines().splitlines()
    assert all(len(line.split("  ")[0]) == 64 for line in lines)
    assert any(line.endswith("  acs/2018/1-Year/psam_p35.csv") for line in lines)
    used = catalog.experiment_data([get_experiment("log_size_sum")])
    assert used.iloc[0]["data"] == "synthetic"


def test_compute_is_summed_per_machine_over_runs():
    run = {
        "device": {"accelerator": "none", "cpu": "AMD EPYC", "cpu_count": 2},
        "started": "2026-01-01T00:00:00+00:00",
        "date": "2026-01-01T02:00:00+00:00",
    }
    meta = {
        "device": {"accelerator": "NVIDIA H200", "cpu_count": 16},
        "wall_time_s": 600.0,
        "cells_done": list("abcdef"),
        "runs": [
            {**run, "cells_done": ["a", "b"]},
            {**run, "cells_done": ["c"], "date": "2026-01-01T01:00:00+00:00"},
            {**run, "device": {"accelerator": "NVIDIA H200"}, "cells_done": ["d"],
             "date": "2026-01-01T00:30:00+00:00"},
        ],
    }  # fmt: skip
    assert catalog.compute_by_machine(meta) == [
        ("AMD EPYC ×2", 3, 3 * 3600.0),
        ("NVIDIA H200", 3, 1800.0 + 600.0),
    ]
    assert catalog.compute_text(meta) == (
        "AMD EPYC ×2: 3 cells, 3.0 h; NVIDIA H200: 3 cells, 40 min"
    )
    # A run without times counts its cells, not a made-up duration.
    del meta["runs"][0]["started"]
    assert catalog.compute_by_machine(meta)[0] == ("AMD EPYC ×2", 3, 3600.0)
    table = pd.DataFrame(
        {"computed on": [catalog.compute_text(meta), "CPU ×2: 1 cell, 3 s"]}
    )
    assert catalog.machines(table) == ["AMD EPYC ×2", "CPU ×2", "NVIDIA H200"]


def test_the_stored_results_name_every_machine():
    table = catalog.stored_results(experiments=[get_experiment("dpsgdf_reference")])
    text = table.set_index("profile").loc["paper", "computed on"]
    assert "NVIDIA H200" in text and "Intel Xeon ×2" in text and "AMD EPYC ×2" in text
    assert "0 s" not in text
    main = catalog.stored_results(experiments=[get_experiment("dpsgdf_main")])
    # Its first 62 cells came from a partial stored without its runs' history: only
    # the last of those runs' time is known, a lower bound.
    text = main.set_index("profile").loc["paper", "computed on"]
    assert "Intel Xeon ×2: 62 cells, at least 37 min" in text
