"""The settings records of a DP-SGD run: checked where written, the path to train."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from torch import nn

from dpnotes.dpsgd import DPSGDFRule, Privacy, Schedule, train
from dpnotes.experiments.dpsgd_f import dpsgd_budget, training_records
from dpnotes.lab.registry import get_experiment


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"noise_multiplier": 0.0, "clip_norm": 1.0}, ValueError, "noise_multiplier"),
        ({"noise_multiplier": 1.0, "clip_norm": -1.0}, ValueError, "clip_norm"),
        ({"noise_multiplier": float("nan"), "clip_norm": 1.0}, ValueError, "noise"),
        ({"noise_multiplier": "1", "clip_norm": 1.0}, TypeError, "noise_multiplier"),
        (
            {"noise_multiplier": 1.0, "clip_norm": 1.0, "count_noise_multiplier": 0},
            ValueError,
            "count_noise_multiplier",
        ),
        (
            {"noise_multiplier": 1.0, "clip_norm": 1.0, "delta": 1.0},
            ValueError,
            "delta",
        ),
        (
            {"noise_multiplier": 1.0, "clip_norm": 1.0, "target_epsilon": float("inf")},
            ValueError,
            "target_epsilon",
        ),
    ],
)
def test_privacy_is_checked_where_it_is_written(kwargs, error, match):
    with pytest.raises(error, match=match):
        Privacy(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epochs": 2, "steps": 10}, ValueError, "not both"),
        ({"epochs": 1.5}, TypeError, "epochs"),
        ({"steps": 0}, ValueError, "steps"),
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"lr": -0.1}, ValueError, "lr"),
        ({"lr": "cosine"}, ValueError, "1/sqrt"),
        ({"momentum": 1.0}, ValueError, r"\[0, 1\)"),
        ({"momentum": True}, TypeError, "momentum"),
        ({"weight_decay": float("inf")}, ValueError, "weight_decay"),
        ({"weight_decay": "0.1"}, TypeError, "weight_decay"),
        ({"sampling": "fixed"}, ValueError, "poisson"),
    ],
)
def test_schedule_is_checked_where_it_is_written(kwargs, error, match):
    with pytest.raises(error, match=match):
        Schedule(**kwargs)


def test_records_are_frozen_and_normalised():
    p = Privacy(noise_multiplier=1, clip_norm=2)
    assert isinstance(p.noise_multiplier, float) and p.delta == 1e-5
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.clip_norm = 3.0  # type: ignore[misc]
    s = Schedule(momentum=0, weight_decay=0)
    assert s.momentum == 0.0 and isinstance(s.weight_decay, float)


@pytest.fixture(scope="module")
def data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(120, 5, generator=g, dtype=torch.float64)
    y = (x[:, 0] > 0).long()
    groups = (torch.arange(120) % 4 == 0).long()
    return x, y, groups


def model():
    torch.manual_seed(0)
    return nn.Linear(5, 2).double()


def test_records_and_their_shorthand_train_the_same_run(data):
    x, y, groups = data
    common = {"num_groups": 2, "method": "dpsgd_f"}
    by_records = train(
        model(), x, y, groups, **common, rng=np.random.default_rng(3),
        privacy=Privacy(noise_multiplier=1.1, clip_norm=0.7, delta=1e-4),
        schedule=Schedule(lr=0.3, batch_size=30, epochs=2, momentum=0.5),
    )  # fmt: skip
    by_keywords = train(
        model(), x, y, groups, **common, rng=np.random.default_rng(3),
        noise_multiplier=1.1, clip_norm=0.7, delta=1e-4,
        lr=0.3, batch_size=30, epochs=2, momentum=0.5,
    )  # fmt: skip
    for a, b in zip(
        by_records.model.parameters(), by_keywords.model.parameters(), strict=True
    ):
        assert torch.equal(a, b)
    assert by_records.epsilon == by_keywords.epsilon
    # ...and another schedule does change the run (the records are read).
    other = train(
        model(), x, y, groups, **common, rng=np.random.default_rng(3),
        privacy=Privacy(noise_multiplier=1.1, clip_norm=0.7, delta=1e-4),
        schedule=Schedule(lr=0.3, batch_size=30, epochs=2, momentum=0.0),
    )  # fmt: skip
    assert not torch.equal(other.model.weight, by_records.model.weight)


@pytest.mark.parametrize(
    ("extra", "error", "match"),
    [
        (
            {"privacy": Privacy(noise_multiplier=1.0, clip_norm=1.0), "clip_norm": 2.0},
            ValueError,
            "not both",
        ),
        (
            {"schedule": Schedule(epochs=1), "lr": 0.5}
            | {"noise_multiplier": 1.0, "clip_norm": 1.0},
            ValueError,
            "not both",
        ),
        ({"privacy": {"noise_multiplier": 1.0}}, TypeError, "Privacy"),
        (
            {"schedule": {"epochs": 1}, "noise_multiplier": 1.0, "clip_norm": 1.0},
            TypeError,
            "Schedule",
        ),
        ({}, ValueError, "needs noise_multiplier and clip_norm"),
        ({"noise_multiplier": 1.0}, ValueError, "needs noise_multiplier and clip_norm"),
    ],
)
def test_a_record_beside_its_keywords_or_of_the_wrong_type_is_refused(
    data, extra, error, match
):
    x, y, groups = data
    with pytest.raises(error, match=match):
        train(
            model(), x, y, groups, num_groups=2, method="dpsgd",
            rng=np.random.default_rng(0), **extra,
        )  # fmt: skip


def test_sgd_ignores_privacy_but_refuses_a_budget(data):
    x, y, groups = data
    run = train(
        model(), x, y, groups, num_groups=2, method="sgd",
        privacy=Privacy(noise_multiplier=1.0, clip_norm=1.0),
        schedule=Schedule(epochs=1, batch_size=30), rng=np.random.default_rng(0),
    )  # fmt: skip
    assert run.epsilon in (None, 0.0) or not np.isfinite(run.epsilon)
    with pytest.raises(ValueError, match="not private"):
        train(
            model(), x, y, groups, num_groups=2, method="sgd",
            privacy=Privacy(noise_multiplier=1.0, clip_norm=1.0, target_epsilon=1.0),
            rng=np.random.default_rng(0),
        )  # fmt: skip


def test_a_profile_becomes_the_records_train_reads():
    # The reference loop's MNIST settings: what the profile says is what train gets.
    exp = get_experiment("dpsgdf_reference")
    config = exp.config("paper")
    settings = config.datasets["mnist"]
    n = 54649
    p, s, rule = training_records(config, settings, method="dpsgd_f", n_train=n)
    assert p.noise_multiplier == settings["noise_multiplier"]
    assert p.clip_norm == settings["clip_norm"] and p.delta == settings["delta"]
    assert p.count_noise_multiplier == pytest.approx(
        config.count_noise_factor * settings["noise_multiplier"]
    )
    assert p.target_epsilon == dpsgd_budget(settings, n) and rule is None
    assert s.batch_size == settings["batch_size"] and s.lr == settings["lr"]
    assert s.sampling == settings.get("sampling", config.sampling)
    assert (s.epochs, s.steps).count(None) == 1
    p_sgd, _, _ = training_records(config, settings, method="sgd", n_train=n)
    p_dpsgd, _, _ = training_records(config, settings, method="dpsgd", n_train=n)
    assert p_sgd is None and p_dpsgd.count_noise_multiplier is None
    assert p_dpsgd.target_epsilon is None
    # A cause-study rule: DPSGD's steps whatever it spends, so no budget to stop at.
    with_rule = {**settings, "rule": {"counts": "exact"}}
    p_rule, _, rule = training_records(config, with_rule, method="dpsgd_f", n_train=n)
    assert rule == DPSGDFRule(counts="exact") and p_rule.target_epsilon is None
