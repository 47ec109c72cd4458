"""Tests for dpnotes.dpsgd.models: sizes, seeded initialisation, opacus support."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from opacus import GradSampleModule
from opacus.validators import ModuleValidator
from torch import nn

from dpnotes.dpsgd.models import (
    MNIST_INPUT_SHAPE,
    PAPER_WEIGHT_DECAY,
    LogisticRegression,
    MNISTConvNet,
    count_parameters,
    init_parameters,
    paper_model,
)
from dpnotes.rng import torch_generator

torch.set_num_threads(1)


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def states_equal(a: nn.Module, b: nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_mnist_network_matches_the_paper() -> None:
    model = MNISTConvNet(generator=gen(0))
    # conv 1->20 5x5, conv 20->50 5x5, linear 800->500, linear 500->10
    expected = (20 * 25 + 20) + (50 * 20 * 25 + 50) + (800 * 500 + 500) + (5010)
    assert count_parameters(model) == expected == 431_080
    shapes = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    assert shapes == {
        "conv1.weight": (20, 1, 5, 5),
        "conv1.bias": (20,),
        "conv2.weight": (50, 20, 5, 5),
        "conv2.bias": (50,),
        "fc1.weight": (500, 800),
        "fc1.bias": (500,),
        "fc2.weight": (10, 500),
        "fc2.bias": (10,),
    }
    out = model(torch.rand(3, *MNIST_INPUT_SHAPE, generator=gen(1)))
    assert out.shape == (3, 10) and out.dtype == torch.float32
    assert torch.isfinite(out).all()
    assert model.weight_decay == 0.0


def test_logistic_regression_shape_and_weight_decay() -> None:
    model = LogisticRegression(104, generator=gen(0))
    assert count_parameters(model) == 2 * 105
    assert model(torch.zeros(5, 104)).shape == (5, 2)
    assert model.weight_decay == PAPER_WEIGHT_DECAY == 0.01
    assert LogisticRegression(3, 4, generator=gen(0), weight_decay=0).weight_decay == 0
    assert count_parameters(LogisticRegression(3, 4, generator=gen(0))) == 16


def test_count_parameters_trainable_only() -> None:
    model = LogisticRegression(3, generator=gen(0))
    model.linear.bias.requires_grad_(False)
    assert count_parameters(model) == 6
    assert count_parameters(model, trainable_only=False) == 8


@pytest.mark.parametrize(
    "build",
    [
        lambda g: MNISTConvNet(generator=g),
        lambda g: LogisticRegression(10, generator=g),
    ],
    ids=["cnn", "logistic"],
)
def test_seeded_initialisation_is_deterministic(build) -> None:
    assert states_equal(build(gen(7)), build(gen(7)))
    assert not states_equal(build(gen(7)), build(gen(8)))
    # A generator derived from a numpy seed is reproducible too.
    a = build(torch_generator(np.random.default_rng(3)))
    b = build(torch_generator(np.random.default_rng(3)))
    assert states_equal(a, b)


@pytest.mark.parametrize(
    "build",
    [
        lambda g: MNISTConvNet(generator=g),
        lambda g: LogisticRegression(10, generator=g),
        lambda g: paper_model("adult", n_features=10, generator=g),
    ],
    ids=["cnn", "logistic", "paper_model"],
)
def test_building_a_model_leaves_the_global_rng_alone(build) -> None:
    before = torch.random.get_rng_state()
    build(gen(0))
    assert torch.equal(torch.random.get_rng_state(), before)


def test_global_rng_check_catches_default_initialisation() -> None:
    # The check above can fail: torch's own layer construction draws from the
    # global generator.
    before = torch.random.get_rng_state()
    nn.Linear(10, 2)
    assert not torch.equal(torch.random.get_rng_state(), before)


def test_initialisation_equals_torch_default_for_the_same_seed() -> None:
    # Reference: torch's own reset_parameters after manual_seed, layer by layer in
    # the same order (in a forked global RNG, so the test leaves no trace).
    with torch.random.fork_rng():
        torch.manual_seed(11)
        reference = [
            nn.Conv2d(1, 20, 5),
            nn.Conv2d(20, 50, 5),
            nn.Linear(800, 500),
            nn.Linear(500, 10),
        ]
    model = MNISTConvNet(generator=gen(11))
    for ours, ref in zip(
        [model.conv1, model.conv2, model.fc1, model.fc2], reference, strict=True
    ):
        assert torch.equal(ours.weight, ref.weight)
        assert torch.equal(ours.bias, ref.bias)
    with torch.random.fork_rng():
        torch.manual_seed(5)
        ref_linear = nn.Linear(104, 2)
    ours_linear = LogisticRegression(104, generator=gen(5)).linear
    assert torch.equal(ours_linear.weight, ref_linear.weight)
    assert torch.equal(ours_linear.bias, ref_linear.bias)


def test_initial_weights_fill_the_default_interval() -> None:
    # Uniform on (-1/sqrt(fan_in), 1/sqrt(fan_in)): 400,000 draws for fc1, so the
    # extremes lie within 1e-4 of the bound and the mean and variance are close to
    # 0 and bound^2 / 3.
    w = MNISTConvNet(generator=gen(0)).fc1.weight.detach().double()
    bound = 1 / np.sqrt(800)
    assert w.abs().max() <= bound
    assert w.abs().max() > bound * (1 - 1e-4)
    assert abs(float(w.mean())) < 5 * bound / np.sqrt(3 * w.numel())
    assert float(w.var()) == pytest.approx(bound**2 / 3, rel=0.01)


def test_init_parameters_reinitialises_in_place() -> None:
    model = LogisticRegression(4, generator=gen(0))
    init_parameters(model, generator=gen(1))
    assert states_equal(model, LogisticRegression(4, generator=gen(1)))


def test_models_pass_the_opacus_validator() -> None:
    for model in (
        MNISTConvNet(generator=gen(0)),
        LogisticRegression(5, generator=None),
    ):
        assert ModuleValidator.validate(model, strict=False) == []


def test_opacus_per_sample_gradients_match_one_at_a_time() -> None:
    model = MNISTConvNet(generator=gen(0))
    x = torch.rand(3, *MNIST_INPUT_SHAPE, generator=gen(1))
    y = torch.tensor([8, 0, 3])
    wrapped = GradSampleModule(model, loss_reduction="sum")
    nn.functional.cross_entropy(wrapped(x), y, reduction="sum").backward()
    per_sample = {n: p.grad_sample.clone() for n, p in model.named_parameters()}
    wrapped._close()
    reference = MNISTConvNet(generator=gen(0))
    for i in range(3):
        reference.zero_grad()
        nn.functional.cross_entropy(reference(x[i : i + 1]), y[i : i + 1]).backward()
        for name, param in reference.named_parameters():
            torch.testing.assert_close(
                per_sample[name][i], param.grad, rtol=1e-4, atol=1e-6
            )


def test_paper_model_dispatch() -> None:
    assert isinstance(paper_model("mnist", generator=gen(0)), MNISTConvNet)
    model = paper_model("dutch", n_features=74, generator=gen(0))
    assert isinstance(model, LogisticRegression) and count_parameters(model) == 150
    assert model.weight_decay == PAPER_WEIGHT_DECAY


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: paper_model("cifar", generator=None), ValueError, "unknown dataset"),
        (lambda: paper_model("adult", generator=None), ValueError, "needs n_features"),
        (
            lambda: paper_model("mnist", n_features=5, generator=None),
            ValueError,
            "784",
        ),
        (
            lambda: MNISTConvNet(generator=np.random.default_rng(0)),
            TypeError,
            "torch.Generator",
        ),
        (lambda: MNISTConvNet(generator=0), TypeError, "torch_generator"),
        (lambda: LogisticRegression(0, generator=None), ValueError, "n_features"),
        (lambda: LogisticRegression(2.5, generator=None), TypeError, "n_features"),
        (lambda: LogisticRegression(3, 1, generator=None), ValueError, "n_classes"),
        (
            lambda: LogisticRegression(3, generator=None, weight_decay=-1.0),
            ValueError,
            "weight_decay",
        ),
        (
            lambda: LogisticRegression(3, generator=None, weight_decay=float("nan")),
            ValueError,
            "weight_decay",
        ),
    ],
    ids=[
        "dataset",
        "no-features",
        "mnist-features",
        "numpy-rng",
        "int-seed",
        "zero-features",
        "float-features",
        "one-class",
        "negative-decay",
        "nan-decay",
    ],
)
def test_input_validation(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()


@pytest.mark.gpu
def test_cuda_generator_is_refused() -> None:
    with pytest.raises(ValueError, match="CPU generator"):
        MNISTConvNet(generator=torch.Generator(device="cuda"))


def test_two_logit_regression_is_one_logit_at_bound_over_root_two() -> None:
    """The census model's two logits, in their difference, are one-logit DP-SGD.

    Each example's gradient rows are ``+-(p_1 - y) [x, 1]``, so its norm is sqrt(2)
    times the one-logit norm, and the clipped sum's row difference is twice the
    one-logit clipped sum at bound ``C / sqrt(2)`` (the DPSGD-F chapter states this).
    """
    from dpnotes.dpsgd.engine import PerSampleClipper

    d, b, c = 6, 32, 0.5
    model = LogisticRegression(d, generator=gen(3))
    with torch.no_grad():  # move away from the symmetric start, so p_1 varies
        model.linear.weight.normal_(0.0, 1.0, generator=gen(4))
    x = torch.randn(b, d, generator=gen(5))
    y = torch.randint(0, 2, (b,), generator=gen(6))
    with PerSampleClipper(model) as clipper:
        batch = clipper.compute(x, y)
        weight_sum, bias_sum = batch.clipped_sum(c)
    p1 = torch.softmax(model(x), dim=1)[:, 1].detach()
    one_logit = (p1 - y)[:, None] * torch.cat([x, torch.ones(b, 1)], dim=1)
    one_norms = one_logit.norm(dim=1)
    root2 = np.sqrt(2)
    torch.testing.assert_close(batch.norms, root2 * one_norms, rtol=1e-5, atol=1e-6)
    scale = torch.clamp((c / root2) / one_norms, max=1.0)
    expected = (scale[:, None] * one_logit).sum(dim=0)
    got = torch.cat([weight_sum[1] - weight_sum[0], (bias_sum[1] - bias_sum[0])[None]])
    torch.testing.assert_close(got, 2 * expected, rtol=1e-5, atol=1e-6)
    # Some examples clipped and some not, or the test could not tell the bounds apart.
    assert 0 < int((scale < 1).sum()) < b
