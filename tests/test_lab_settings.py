"""Settings from the command line: derived profiles (``--set state=NY``)."""

from __future__ import annotations

import lab_toy
import pytest

from dpnotes.lab import (
    derived_profile,
    get_experiment,
    load_or_run,
    load_stored,
    profile_with,
    run,
    split_profile,
)
from dpnotes.lab.cli import main
from dpnotes.lab.store import result_folder

NAME = lab_toy.NAME


def test_profile_names_split_and_join():
    assert split_profile("paper") == ("paper", {})
    assert split_profile("quick@arms=2,draws=3") == (
        "quick",
        {"arms": "2", "draws": "3"},
    )
    assert (
        derived_profile("quick", {"draws": "3", "arms": "2"}) == "quick@arms=2,draws=3"
    )
    assert derived_profile("smoke", {}) == "smoke"
    for bad in (
        "fast",
        "fast@arms=2",
        "paper@",
        "paper@arms",
        "paper@=2",
        "paper@arms=",
    ):
        with pytest.raises(ValueError):
            split_profile(bad)
    for value in ("a,b", "a/b", "a b", "", "x@y"):
        with pytest.raises(ValueError, match="non-empty text"):
            derived_profile("paper", {"state": value})
    with pytest.raises(TypeError):
        split_profile(3)


def test_a_derived_profile_changes_only_its_settings_and_checks_them():
    toy = get_experiment(NAME)
    base = toy.config("quick")
    changed = toy.config("quick@arms=2")
    assert (changed.arms, changed.draws) == (2, base.draws)
    with pytest.raises(
        ValueError, match="has no setting colour; its settings are arms"
    ):
        toy.config("quick@colour=red")
    with pytest.raises(ValueError, match="not a int"):
        toy.config("quick@arms=two")
    census = get_experiment("strat_mean_census")
    assert census.config("paper@state=NY").state == "NY"
    assert census.config("paper@state=NY").runs == census.config("paper").runs
    with pytest.raises(ValueError, match="'XX' is not a value it knows"):
        census.config("paper@state=XX")
    synth = get_experiment("strat_synth")
    assert synth.config("quick@datasets=NM+NY-sample").datasets == ("NM", "NY-sample")
    # The paper's state: New York's full person file (downloaded where online).
    assert synth.datasets(synth.config("paper@datasets=NY")) == [
        "acs/2018/1-Year/psam_p36.csv"
    ]
    with pytest.raises(ValueError, match="'TX' is not a value it knows"):
        synth.config("paper@datasets=TX")


def test_a_derived_result_lives_beside_the_base_and_says_how_to_rerun(tmp_path, capsys):
    base = run(NAME, "smoke", root=tmp_path, progress=False)
    assert (
        main(
            [
                "--results",
                str(tmp_path),
                "run",
                NAME,
                "--profile",
                "smoke",
                "--set",
                "arms=2",
                "--no-progress",
            ]
        )
        == 0
    )
    derived = load_stored(NAME, "smoke@arms=2", root=tmp_path)
    assert derived is not None and derived.path == result_folder(
        tmp_path, NAME, "smoke@arms=2"
    )
    assert derived.table["arm"].nunique() == 2
    assert load_stored(NAME, "smoke", root=tmp_path).table.equals(base.table)
    assert "--profile smoke --set arms=2." in derived.caption()
    capsys.readouterr()
    assert main(["--results", str(tmp_path), "list"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith(NAME)]
    assert any("smoke@arms=2" in x and "2/2" in x for x in lines), lines
    # Bad settings are refused before anything runs or is stored.
    for args, says in (
        (["--set", "arms"], "KEY=VALUE"),
        (["--set", "colour=red"], "no setting colour"),
        (["--set", "arms=2", "--set", "arms=3"], "given twice"),
    ):
        code = main(
            ["--results", str(tmp_path), "run", NAME, "--profile", "smoke", *args]
        )
        assert code != 0 and says in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / NAME).iterdir()) == [
        "smoke",
        "smoke@arms=2",
    ]


def test_a_chapter_names_the_settings_it_loads(tmp_path, monkeypatch):
    run(NAME, "smoke", root=tmp_path, progress=False)
    assert profile_with(NAME, "smoke", {"arms": 2}) == "smoke@arms=2"
    assert profile_with(NAME, "smoke@arms=1", {"arms": 2}) == "smoke@arms=1"
    assert profile_with(NAME, "smoke", None) == "smoke"
    assert profile_with("strat_mean_census", "paper", {"state": "NY"}) == (
        "paper@state=NY"
    )
    loaded = load_or_run(
        NAME, prefer=("smoke",), fallback="smoke", root=tmp_path, settings={"arms": 2}
    )
    assert loaded.profile == "smoke@arms=2" and loaded.table["arm"].nunique() == 2
    # Without settings the base profile loads: nothing in the environment moves it.
    monkeypatch.setenv("DPNOTES_SET", "arms=2")
    plain = load_or_run(NAME, prefer=("smoke",), fallback="smoke", root=tmp_path)
    assert plain.profile == "smoke" and plain.table["arm"].nunique() != 2
    with pytest.raises(ValueError, match="no setting state"):
        profile_with(NAME, "smoke", {"state": "NY"})
    with pytest.raises(TypeError, match="mapping"):
        profile_with(NAME, "smoke", ["arms=2"])


def test_lists_of_numbers_are_set_with_plus_signs():
    exp = get_experiment("spending_e2e")
    config = exp.config("paper@seeds=0+1,epsilons=1.0+2.5,fidelity=true")
    assert config.seeds == (0, 1) and config.epsilons == (1.0, 2.5)
    assert config.fidelity is True
    assert all(type(s) is int for s in config.seeds)
    with pytest.raises(ValueError, match=r"--set seeds=0\+x: not a tuple"):
        exp.config("paper@seeds=0+x")
