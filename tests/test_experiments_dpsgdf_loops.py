"""Tests for the reference-loop and census-encoding DPSGD-F experiments."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from dpnotes.data.mnist import MNIST_MEAN, MNIST_STD, normalize
from dpnotes.data.splits import GroupedSplit
from dpnotes.dpsgd.engine import PerSampleClipper, cross_entropy_per_sample
from dpnotes.dpsgd.models import MNISTConvNet
from dpnotes.dpsgd.rules import dpsgd_epsilon
from dpnotes.experiments.dpsgd_f import (
    PAPER_SETTINGS,
    dpsgd_budget,
    group_gradient_diagnostics,
    load_cell_data,
    planned_steps,
    run_key,
)
from dpnotes.experiments.dpsgdf_reference import REFERENCE_SETTINGS
from dpnotes.lab import get_experiment, run

torch.set_num_threads(1)


# --- the reference loop's settings ---------------------------------------------------


def test_step_rules_and_the_papers_epsilon() -> None:
    n = 54_649  # the unbalanced MNIST training set
    assert planned_steps(PAPER_SETTINGS["mnist"], n) == 60 * 213 == 12_780
    assert planned_steps(REFERENCE_SETTINGS, n) == math.ceil(60 * n / 256) == 12_809
    with pytest.raises(ValueError, match="step_rule"):
        planned_steps({**REFERENCE_SETTINGS, "step_rule": "round"}, n)
    # The reference step count with the classic conversion is the paper's 6.55.
    classic = dpsgd_epsilon(
        method="dpsgd", sample_rate=256 / n, noise_multiplier=0.8, steps=12_809,
        delta=1e-6, conversion="classic",
    )  # fmt: skip
    assert round(classic, 2) == 6.55
    assert dpsgd_budget(REFERENCE_SETTINGS, n) > dpsgd_budget(
        PAPER_SETTINGS["mnist"], n
    )


def test_the_reference_settings_change_only_the_loop() -> None:
    text = PAPER_SETTINGS["mnist"]
    changed = {k for k, v in REFERENCE_SETTINGS.items() if text.get(k) != v}
    assert changed == {"momentum", "normalize", "step_rule"}
    assert REFERENCE_SETTINGS["momentum"] == 0.5 and REFERENCE_SETTINGS["normalize"]


def test_run_keys_of_the_text_loop_are_unchanged_by_the_options() -> None:
    config = get_experiment("dpsgdf_main").config("quick")
    text = run_key(
        config, dataset="mnist", method="dpsgd", seed=0,
        settings=PAPER_SETTINGS["mnist"],
    )  # fmt: skip
    assert set(text["settings"]) == {
        "lr", "batch_size", "epochs", "delta", "noise_multiplier", "clip_norm",
    }  # fmt: skip
    options = {"momentum": 0.5, "normalize": True, "step_rule": "ceil"}
    for option, value in options.items():
        other = run_key(
            config, dataset="mnist", method="dpsgd", seed=0,
            settings={**PAPER_SETTINGS["mnist"], option: value},
        )  # fmt: skip
        assert other != text and other["settings"][option] == value


def test_normalize_uses_the_public_constants() -> None:
    x = np.array([[0.0, MNIST_MEAN, 1.0]])
    z = normalize(x)
    assert z.dtype == np.float32
    np.testing.assert_allclose(
        z, [[-MNIST_MEAN / MNIST_STD, 0.0, (1 - MNIST_MEAN) / MNIST_STD]], rtol=1e-6
    )
    with pytest.raises(ValueError, match=r"divide 0\.\.255"):
        normalize(np.array([0.0, 255.0]))


def test_load_cell_data_options_are_checked() -> None:
    with pytest.raises(ValueError, match="MNIST's pixels only"):
        load_cell_data("adult", 0, normalize=True)
    with pytest.raises(ValueError, match="census sets"):
        load_cell_data("mnist", 0, encoding="paper")


# --- grids ---------------------------------------------------------------------------


def test_reference_grid() -> None:
    exp = get_experiment("dpsgdf_reference")
    cells = exp.cells("paper")
    parts = pd.Series([c["part"] for c in cells]).value_counts().to_dict()
    # 4 methods x 3 seeds; 3 one-at-a-time settings x 2 methods; C = 2..5 x 3 seeds;
    # 4 other sigmas x 2 methods.
    assert parts == {"main": 12, "ablation": 6, "clip": 12, "sigma": 8}
    assert len({tuple(sorted(c.items())) for c in cells}) == len(cells)
    ablation = {
        (c["momentum"], c["normalize"]) for c in cells if c["part"] == "ablation"
    }
    assert ablation == {(0.5, False), (0.0, True), (0.0, False)}
    # The main cells of every seed come first, so a partial run holds Table 1.
    assert [c["part"] for c in cells[:12]] == ["main"] * 12
    assert (
        get_experiment("dpsgdf_census").cells("paper")
        and len(get_experiment("dpsgdf_census").cells("paper")) == 2 * 2 * 4 * 5
    )


def test_smoke_runs_of_both_experiments(tmp_path) -> None:
    ref = run("dpsgdf_reference", "smoke", root=tmp_path, progress=False).table
    assert {"momentum", "normalize", "part"} <= set(ref.columns)
    main = ref[ref["part"] == "main"]
    assert set(main["momentum"]) == {0.5} and set(main["normalize"]) == {True}
    # ceil(1 * 1024 / 256) = 4 steps; SGD takes all of them.
    sgd_steps = main[(main["method"] == "sgd") & (main["metric"] == "steps")]
    assert sgd_steps["value"].max() == 4
    for metric in ("mean_grad_norm", "full_loss"):
        assert (ref["metric"] == metric).sum() == 10 * ref.groupby(
            ["part", "method", "clip_norm", "noise_multiplier", "momentum"],
            dropna=False,
        ).ngroups
    census = run("dpsgdf_census", "smoke", root=tmp_path, progress=False).table
    assert set(census["encoding"]) == {"paper", "full"}
    assert {"mean_grad_norm", "full_loss", "accuracy"} <= set(census["metric"])


# --- Table 2's two readings of "average gradient norm" -------------------------------


def test_group_gradient_diagnostics_against_per_sample_gradients() -> None:
    gen = torch.Generator().manual_seed(0)
    model = MNISTConvNet(generator=gen).double()
    x = torch.rand(24, 1, 28, 28, generator=gen, dtype=torch.float64)
    y = torch.randint(0, 10, (24,), generator=gen)
    g = torch.arange(24) % 3
    split = GroupedSplit(
        name="mnist", x_train=x.numpy(), y_train=y.numpy(), g_train=g.numpy(),
        x_test=x.numpy(), y_test=y.numpy(), g_test=g.numpy(),
        group_names=("a", "b", "c"), label_names=tuple("0123456789"),
        feature_names=tuple(f"p{i}" for i in range(784)),
    )  # fmt: skip
    diag = group_gradient_diagnostics(model, split)
    batch = PerSampleClipper(model, cross_entropy_per_sample).compute(x, y)
    for k in range(3):
        rows = (g == k).double()
        # The norm of the group's average gradient, from the per-sample gradients.
        mean = batch.weighted_sum(rows / rows.sum(), set_grad=False)
        norm = math.sqrt(sum(float(t.pow(2).sum()) for t in mean))
        assert diag["mean_grad_norm"][k] == pytest.approx(norm, rel=1e-9)
        assert diag["full_loss"][k] == pytest.approx(
            float(batch.losses[g == k].mean()), rel=1e-12
        )
        # Triangle inequality: never above the mean of the per-sample norms.
        assert diag["mean_grad_norm"][k] <= float(batch.norms[g == k].mean())
