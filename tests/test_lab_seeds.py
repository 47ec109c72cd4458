"""One seed story: the root seed reaches every experiment's numbers, or is refused.

For every registered experiment of the package, either its smoke profile's first cell
gives other numbers under root seeds 0 and 1 (``seeding == "root"``), or a root seed
other than 0 is refused with a ValueError before any work, and its cells indeed do not
touch the stream the runner hands them (``"grid"``: the DPSGD-F experiments seed
themselves from their grid's ``seed`` key; ``"none"``: descriptive tables). Never are
seed 0's numbers stored under another seed's name.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from dpnotes.data import data_root
from dpnotes.lab import (
    Experiment,
    Profile,
    checkpoint,
    get_experiment,
    list_experiments,
    load_or_run,
    load_stored,
    register,
    run,
    run_cell,
    stale_reason,
)
from dpnotes.lab import runner as runner_mod
from dpnotes.lab.cli import main
from dpnotes.lab.registry import SEEDINGS, declare_seeding

#: The package's experiments (toys that other test modules register are left out).
EXPERIMENTS = [
    e for e in list_experiments() if e.module.startswith("dpnotes.experiments.")
]
#: The profile whose first cell is compared, where the smoke profile's cannot show
#: the seed. spending_e2e's smoke cell (600 rows of ACSMobility-NM) is degenerate:
#: every private model predicts the majority class (FPR 1, FNR 0) under any seed, so
#: its metrics coincide although its stream is used; DP logistic regression on the
#: New York sample does move with the seed (and takes a second).
PROFILE = {"spending_e2e": "smoke@datasets=ACSEmployment-NY-sample,methods=real_dp"}
#: What each experiment's cells were found to do with the runner's stream, by reading
#: their run_cell: the DPSGD-F experiments seed themselves from the cell's ``seed``
#: (dpsgd_f.seed_streams), the two descriptive tables draw nothing.
EXPECTED_FIXED = {
    "dpsgdf_main": "grid",
    "dpsgdf_clip": "grid",
    "dpsgdf_budget": "grid",
    "dpsgdf_census": "grid",
    "dpsgdf_reference": "grid",
    "dpsgdf_causes": "grid",
    "census_descriptive": "none",
    "synth_group_sizes": "none",
}


def _param(exp: Experiment) -> pytest.param:
    marks = []
    if list(exp.datasets(exp.config(PROFILE.get(exp.name, "smoke")))):
        marks.append(pytest.mark.data)
    return pytest.param(exp.name, marks=marks, id=exp.name)


#: Root-seeded experiments whose cells another test already runs under two streams
#: (their cells take seconds each): spending_dpsage in
#: tests/test_experiments_spending.py::test_cell_is_deterministic, strat_synth in
#: tests/test_experiments_conventions.py (the parity-convention test). That the
#: runner's root seed reaches a cell's stream is shown here on the others.
ELSEWHERE = {"spending_dpsage", "strat_synth"}
ROOT = [
    _param(e) for e in EXPERIMENTS if e.seeding == "root" and e.name not in ELSEWHERE
]
FIXED = [_param(e) for e in EXPERIMENTS if e.seeding != "root"]


def _skip_without_data(name: str, profile: str = "smoke") -> None:
    exp = get_experiment(name)
    root = data_root()
    missing = [n for n in exp.datasets(exp.config(profile)) if not (root / n).is_file()]
    if missing:
        pytest.skip(f"{name} reads {missing}; set DPNOTES_DATA_DIR to the data folder")


def _numbers(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows without wall times (which differ from run to run)."""
    keep = [c for c in rows.columns if not Experiment.is_timing(c)]
    rows = rows[keep]
    if "metric" in rows.columns:
        rows = rows[~rows["metric"].astype(str).map(Experiment.is_timing)]
    return rows.reset_index(drop=True)


def test_every_experiment_declares_its_seeding_as_its_code_does():
    assert {e.seeding for e in EXPERIMENTS} <= set(SEEDINGS)
    fixed = {e.name: e.seeding for e in EXPERIMENTS if e.seeding != "root"}
    assert fixed == EXPECTED_FIXED
    assert len(ROOT) + len(ELSEWHERE) + len(FIXED) == len(EXPERIMENTS) >= 17
    assert {get_experiment(n).seeding for n in ELSEWHERE} == {"root"}


@pytest.mark.parametrize("name", ROOT)
def test_a_root_seeded_cell_gives_other_numbers_under_another_root_seed(name):
    profile = PROFILE.get(name, "smoke")
    _skip_without_data(name, profile)
    cell = get_experiment(name).cells(profile)[0]
    zero = _numbers(run_cell(name, profile, 0, cell))
    one = _numbers(run_cell(name, profile, 1, cell))
    again = _numbers(run_cell(name, profile, 1, cell))
    pd.testing.assert_frame_equal(one, again)  # the seed, not chance, moves them
    assert list(zero.columns) == list(one.columns) and len(zero) == len(one)
    assert not zero.equals(one), f"{name}: root seeds 0 and 1 gave the same numbers"


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if a run lays out a result folder or computes a cell."""

    def refuse(*args, **kwargs):
        raise AssertionError("work began before the seed was checked")

    monkeypatch.setattr(runner_mod, "_layout", refuse)
    monkeypatch.setattr(runner_mod, "provenance", refuse)
    monkeypatch.setattr(runner_mod, "_compute", refuse)


@pytest.mark.parametrize("name", FIXED)
def test_a_fixed_seed_experiment_refuses_another_root_seed_before_any_work(
    name, tmp_path, no_work
):
    exp = get_experiment(name)
    why = "fixes its seeds in its grid" if exp.seeding == "grid" else "draws no random"
    with pytest.raises(ValueError, match=why) as err:
        run(name, "smoke", seed=1, root=tmp_path, progress=False)
    assert f"{name} " in str(err.value) and "seed 0" in str(err.value)
    if exp.seeding == "grid":
        assert "--only seed=1 instead of --seed" in str(err.value)
    cell = exp.cells("smoke")[0]
    for call in (
        lambda: load_or_run(name, seed=1, root=tmp_path),
        lambda: load_stored(name, "smoke", seed=1, root=tmp_path, allow_partial=True),
        lambda: checkpoint(name, "smoke", seed=1, root=tmp_path),
        lambda: stale_reason(name, "smoke", seed=1, root=tmp_path),
        lambda: run_cell(name, "smoke", 2, cell),
    ):
        with pytest.raises(ValueError, match=why):
            call()
    assert list(tmp_path.iterdir()) == []
    assert exp.check_seed(0) == 0


@pytest.mark.parametrize("name", FIXED)
def test_a_fixed_seed_experiment_truly_ignores_the_runners_stream(name):
    """The declaration is true: a cell neither draws from ``rng`` nor depends on it."""
    _skip_without_data(name)
    exp = get_experiment(name)
    if exp.seeding == "grid":
        for profile in ("smoke", "quick", "paper"):
            assert all("seed" in cell for cell in exp.cells(profile)), profile
    config, cell = exp.config("smoke"), exp.cells("smoke")[0]
    # One run: a stream neither drawn from nor spawned from cannot reach the numbers.
    rng = np.random.default_rng(1)
    state = rng.bit_generator.state
    rows = exp.run_cell(config, cell, rng=rng, cache=None, progress=False)
    assert rng.bit_generator.state == state
    assert rng.bit_generator.seed_seq.n_children_spawned == 0
    assert len(_numbers(rows))


def test_the_command_line_refuses_seed_with_what_to_do_instead(tmp_path, capsys):
    base = ["--results", str(tmp_path)]
    args = [*base, "run", "dpsgdf_main", "--profile", "smoke", "--no-progress"]
    assert main([*args, "--seed", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: dpsgdf_main fixes its seeds in its grid")
    assert "(the 'seed' key of its cells)" in err
    assert "select seeds with --only seed=1 instead of --seed" in err
    assert "Traceback" not in err
    assert main([*base, "run", "census_descriptive", "--seed", "3"]) == 2
    assert "census_descriptive draws no random numbers" in capsys.readouterr().err
    for command in (
        ["checkpoint", "dpsgdf_clip", "--seed", "2"],
        ["restamp", "dpsgdf_budget", "--seed", "2", "--check"],
        ["attribute", "dpsgdf_reference", "--seed", "2", "--commit", "HEAD"],
    ):
        assert main([*base, *command]) == 2, command
        assert "fixes its seeds in its grid" in capsys.readouterr().err
    assert not (tmp_path / "dpsgdf_main").exists()


def test_list_flags_a_folder_of_a_seed_the_experiment_cannot_have(tmp_path, capsys):
    # Such folders were written before runs refused the seed: seed 0's numbers.
    (tmp_path / "dpsgdf_main" / "smoke" / "seed-1").mkdir(parents=True)
    assert main(["--results", str(tmp_path), "list"]) == 0
    line = next(row for row in capsys.readouterr().out.splitlines() if "seed-1" in row)
    assert line.startswith("dpsgdf_main") and "not a seed of this experiment" in line


# -- the registry's side: declaring, and the runner's check of undeclared ones ---------


@dataclass(frozen=True)
class _Toy(Profile):
    draws: int = 3


_TOY_PROFILES = {p: _Toy() for p in ("smoke", "quick", "paper")}


@register(
    name="toy_seeds_ignores_rng",
    title="A toy that seeds itself from its grid but does not say so",
    profiles=_TOY_PROFILES,
    grid=lambda config: [{"seed": 0}, {"seed": 1}],
)
def _ignores_rng(config, cell, *, rng, cache=None, progress=False):
    values = np.random.default_rng(cell["seed"]).normal(size=config.draws)
    return pd.DataFrame({"value": values})


@register(
    name="toy_seeds_grid",
    title="A toy that seeds itself from its grid and says so",
    profiles=_TOY_PROFILES,
    grid=lambda config: [{"seed": 0}, {"seed": 1}],
    seeding="grid",
)
def _says_grid(config, cell, *, rng, cache=None, progress=False):
    return _ignores_rng(config, cell, rng=rng)


def test_register_takes_a_seeding_and_declarations_must_agree():
    assert get_experiment("toy_seeds_grid").seeding == "grid"
    assert get_experiment("toy_seeds_ignores_rng").seeding == "root"
    with pytest.raises(ValueError, match="fixes its seeds in its grid"):
        run("toy_seeds_grid", "smoke", seed=1, progress=False)
    with pytest.raises(ValueError, match="seeding must be one of"):
        register(
            name="toy_seeds_bad",
            title="bad",
            profiles=_TOY_PROFILES,
            grid=lambda config: [{}],
            seeding="cell",
        )
    with pytest.raises(ValueError, match="is 'grid' already"):
        declare_seeding({"toy_seeds_grid": "none"})
    with pytest.raises(ValueError, match="is 'grid' already"):
        declare_seeding({"dpsgdf_main": "root"})
    declare_seeding({"dpsgdf_main": "grid"})  # the same again: nothing changes
    assert get_experiment("dpsgdf_main").seeding == "grid"
