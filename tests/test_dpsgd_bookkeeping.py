"""Tests for the bookkeeping backend and for non-finite records in every backend."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from dpnotes.dpsgd import engine
from dpnotes.dpsgd.engine import PerSampleClipper, clip_factors
from dpnotes.dpsgd.loop import train
from dpnotes.dpsgd.models import MNISTConvNet, paper_model

torch.set_num_threads(1)
BACKENDS = ("ghost", "functorch", "bookkeeping")


def flat(tensors) -> torch.Tensor:
    return torch.cat([t.reshape(-1) for t in tensors])


def mnist_cnn(seed: int = 0) -> nn.Module:
    return MNISTConvNet(generator=torch.Generator().manual_seed(seed)).double()


def census(n_features: int, seed: int = 0) -> nn.Module:
    gen = torch.Generator().manual_seed(seed)
    return paper_model("adult", n_features=n_features, generator=gen).double()


def mlp(seed: int = 0) -> nn.Module:
    """Only Linear layers, one of them without a bias."""
    gen = torch.Generator().manual_seed(seed)
    model = nn.Sequential(
        nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 5, bias=False), nn.ReLU(),
        nn.Linear(5, 3),
    ).double()  # fmt: skip
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(0.5 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
    return model


def conv_zoo(seed: int = 0) -> nn.Module:
    """Padding, stride, dilation, groups (of one and of two channels), a frozen bias
    and a sequence Linear."""
    gen = torch.Generator().manual_seed(seed)
    model = nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1, groups=2),
        nn.ReLU(),
        nn.Conv2d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2),
        nn.Tanh(),
        nn.Conv2d(6, 8, 2),  # one output pixel: the ghost-norm rule
        nn.Flatten(2),
        nn.Linear(1, 5),  # a sequence (b, 8, 1): per-sample gradients
        nn.Flatten(),
        nn.Unflatten(1, (2, 20)),
        nn.Linear(20, 10),  # a sequence (b, 2, 20): the ghost norm
        nn.Flatten(),
        nn.Linear(20, 3),
    ).double()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(0.5 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
    model[2].bias.requires_grad_(False)
    return model


def batch_of(shape, classes: int, seed: int = 1):
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(shape, generator=gen, dtype=torch.float64)
    return x, torch.randint(0, classes, (shape[0],), generator=gen)


CASES = {
    "mnist_cnn": (mnist_cnn, (8, 1, 28, 28), 10),
    "adult_logreg": (lambda: census(104), (16, 104), 2),
    "dutch_logreg": (lambda: census(59), (16, 59), 2),
    "mlp": (mlp, (9, 6), 3),
    "conv_zoo": (conv_zoo, (6, 2, 5, 5), 3),
}


def run_backend(model, x, y, backend, coef, bounds):
    with PerSampleClipper(model, backend=backend) as clipper:
        batch = clipper.compute(x, y)
        weighted = flat(batch.weighted_sum(coef, set_grad=False))
        clipped = flat(batch.clipped_sum(bounds, weights=coef, set_grad=False))
    return batch.norms, batch.losses, weighted, clipped


@pytest.mark.parametrize("case", sorted(CASES))
def test_bookkeeping_agrees_with_ghost_and_functorch(case: str) -> None:
    build, shape, classes = CASES[case]
    model = build()
    x, y = batch_of(shape, classes)
    gen = torch.Generator().manual_seed(2)
    coef = torch.randn(shape[0], generator=gen, dtype=torch.float64)
    bounds = torch.rand(shape[0], generator=gen, dtype=torch.float64) + 0.01
    out = {b: run_backend(model, x, y, b, coef, bounds) for b in BACKENDS}
    for ref in ("ghost", "functorch"):
        for got, want in zip(out["bookkeeping"], out[ref], strict=True):
            torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-13)
    # The clipped sum is one: the bounds bind for some examples only.
    norms = out["ghost"][0]
    assert bool((norms > bounds).any()) or case == "mlp"


@pytest.mark.parametrize("chunk", [1, 4, 64])
def test_conv_chunks_do_not_change_the_sums(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The patches are copied a chunk of examples at a time (6 = 6 x 1, 4 + 2, one
    # short chunk), into buffers reused across chunks and batches: every chunking
    # gives functorch's norms and sums, and a second, smaller batch reuses the
    # larger one's buffers without reading stale rows.
    monkeypatch.setattr(engine, "_CONV_CHUNK", chunk)
    model = conv_zoo()
    x, y = batch_of((6, 2, 5, 5), 3)
    coef = torch.linspace(-1.0, 2.0, 6, dtype=torch.float64)
    with PerSampleClipper(model, backend="bookkeeping") as clipper:
        for rows in (slice(0, 6), slice(1, 4)):
            batch = clipper.compute(x[rows], y[rows])
            got = flat(batch.weighted_sum(coef[rows], set_grad=False))
            want = run_backend(model, x[rows], y[rows], "functorch", coef[rows], 1.0)
            torch.testing.assert_close(batch.norms, want[0], rtol=1e-10, atol=1e-13)
            torch.testing.assert_close(got, want[2], rtol=1e-10, atol=1e-13)


def test_hybrid_rule_picks_per_layer() -> None:
    # The paper's CNN: per-sample gradients for both convolutions, ghost norm for
    # the linear layers; a 1x1 convolution on few pixels takes the ghost norm.
    assert not engine._ghost_cheaper(24 * 24, 25, 20)
    assert not engine._ghost_cheaper(8 * 8, 500, 50)
    assert engine._ghost_cheaper(1, 800, 500)
    assert engine._ghost_cheaper(1, 24, 8)  # conv_zoo's last convolution
    assert engine._ghost_cheaper(2, 20, 10)  # conv_zoo's ghost sequence Linear
    assert not engine._ghost_cheaper(8, 1, 5)


def test_ghost_norm_conv_path_is_used_and_exact() -> None:
    # conv_zoo's 1x1 convolution takes the ghost-norm rule; a spy checks that, and
    # the agreement test above checks its numbers.
    calls = []
    orig = engine._conv_sum

    def spy(*args):
        calls.append(args[1])
        return orig(*args)

    model = conv_zoo()
    x, y = batch_of((5, 2, 5, 5), 3)
    engine_sum = engine._conv_sum
    try:
        engine._conv_sum = spy
        with PerSampleClipper(model, backend="bookkeeping") as clipper:
            clipper.compute(x, y).clipped_sum(1.0)
    finally:
        engine._conv_sum = engine_sum
    assert [type(m) for m in calls] == [nn.Conv2d] and calls[0].kernel_size == (2, 2)


@pytest.mark.parametrize("method", ["dpsgd", "naive", "dpsgd_f"])
def test_train_with_bookkeeping_matches_other_backends(method: str) -> None:
    gen = torch.Generator().manual_seed(3)
    n = 48
    x = torch.rand(n, 1, 28, 28, generator=gen, dtype=torch.float64)
    y = torch.randint(0, 10, (n,), generator=gen)
    groups = torch.randint(0, 2, (n,), generator=gen)
    final = {}
    for backend in BACKENDS:
        result = train(
            mnist_cnn(4), x, y, groups, num_groups=2, method=method,
            noise_multiplier=0.5, clip_norm=0.5, lr=0.1, batch_size=16, epochs=1,
            backend=backend, rng=np.random.default_rng(0),
        )  # fmt: skip
        assert result.steps == 3
        final[backend] = flat(p.detach() for p in result.model.parameters())
    for ref in ("ghost", "functorch"):
        torch.testing.assert_close(
            final["bookkeeping"], final[ref], rtol=1e-9, atol=1e-11
        )


def test_a_batch_is_released_by_the_next() -> None:
    model = mlp()
    x, y = batch_of((9, 6), 3)
    with PerSampleClipper(model, backend="bookkeeping") as clipper:
        first = clipper.compute(x, y)
        first.clipped_sum(1.0)
        second = clipper.compute(x, y)
        with pytest.raises(RuntimeError, match="freed"):
            first.clipped_sum(1.0)
        torch.testing.assert_close(
            flat(second.clipped_sum(1.0)), flat(p.grad for p in model.parameters())
        )


def test_varying_batch_sizes_reuse_buffers_correctly() -> None:
    # Poisson sampling varies the batch size; the reused buffers must not leak rows
    # of a larger batch into a smaller one.
    model = mnist_cnn(1)
    x, y = batch_of((7, 1, 28, 28), 10)
    with PerSampleClipper(model, backend="functorch") as ref:
        expect = {m: flat(ref.compute(x[:m], y[:m]).clipped_sum(0.3)) for m in (3, 7)}
    with PerSampleClipper(model, backend="bookkeeping") as clipper:
        for m in (3, 7, 3, 5, 7):
            got = flat(clipper.compute(x[:m], y[:m]).clipped_sum(0.3))
            if m in expect:
                torch.testing.assert_close(got, expect[m], rtol=1e-10, atol=1e-13)


# --- unsupported layers ---------------------------------------------------------------


@pytest.mark.parametrize(
    "layer",
    [
        nn.LayerNorm(4),
        nn.Embedding(5, 4),
        nn.Conv1d(1, 2, 3),
        nn.Conv2d(1, 2, 3, padding="same"),
    ],
)
def test_bookkeeping_refuses_other_layers(layer: nn.Module) -> None:
    model = nn.Sequential(nn.Identity(), layer)
    with pytest.raises(ValueError, match=type(layer).__name__) as err:
        PerSampleClipper(model, backend="bookkeeping")
    message = str(err.value)
    assert "'1'" in message  # the module's name in the model
    assert "backend='ghost'" in message and "backend='functorch'" in message


def test_bookkeeping_accepts_a_frozen_unsupported_layer() -> None:
    model = nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4), nn.Linear(4, 2)).double()
    model[1].requires_grad_(False)
    x, y = batch_of((5, 4), 2)
    out = {
        b: run_backend(model, x, y, b, torch.ones(5, dtype=torch.float64), 0.1)
        for b in ("ghost", "bookkeeping")
    }
    for got, want in zip(out["bookkeeping"], out["ghost"], strict=True):
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-13)


# --- non-finite records ---------------------------------------------------------------


def test_clip_factors_of_non_finite_norms_are_zero() -> None:
    norms = torch.tensor([0.5, float("nan"), float("inf"), 4.0])
    torch.testing.assert_close(
        clip_factors(norms, 1.0), torch.tensor([1.0, 0.0, 0.0, 0.25])
    )


def _poisoned(case: str, value: float, dtype: torch.dtype):
    build, shape, classes = CASES[case]
    model = build().to(dtype)
    x, y = batch_of(shape, classes)
    x = x.to(dtype)
    bad = x.clone()
    bad.view(shape[0], -1)[2, 3] = value
    return model, x, bad, y


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ["mnist_cnn", "adult_logreg"])
@pytest.mark.parametrize(
    ("value", "dtype"),
    [
        (float("nan"), torch.float64),
        (float("inf"), torch.float64),
        (-float("inf"), torch.float32),
        (1e30, torch.float64),
        (1e30, torch.float32),  # overflows in the squared norm
        (3e38, torch.float32),  # overflows in the forward pass
    ],
)
def test_a_non_finite_record_cannot_pass_clipping(
    backend: str, case: str, value: float, dtype: torch.dtype
) -> None:
    model, x, bad, y = _poisoned(case, value, dtype)
    clip = 0.5
    with PerSampleClipper(model, backend=backend) as clipper:
        clean = clipper.compute(x, y)
        clean_norms = clean.norms.clone()
        others = [i for i in range(len(y)) if i != 2]
        without = flat(clipper.compute(x[others], y[others]).clipped_sum(clip))
        batch = clipper.compute(bad, y)
        norms = batch.norms
        summed = flat(batch.clipped_sum(clip))
        weighted = flat(batch.weighted_sum(torch.ones_like(norms)))
    keep = torch.tensor([True, True, False] + [True] * (len(y) - 3))
    assert torch.equal(norms[keep], clean_norms[keep])
    factor = clip_factors(norms, clip)[2]
    if torch.isfinite(norms[2]):
        assert float(factor) * float(norms[2]) <= clip * (1 + 1e-6)
    else:
        assert float(factor) == 0.0
        # Without clipping too, the record contributes exactly nothing.
        ones = torch.ones(len(y), dtype=norms.dtype)
        ones[2] = 0.0
        with PerSampleClipper(model, backend=backend) as clipper:
            ref = flat(clipper.compute(x, y).weighted_sum(ones))
        torch.testing.assert_close(weighted, ref, rtol=1e-5, atol=1e-6)
    assert bool(torch.isfinite(summed).all())
    # Its contribution is one clipped term: at most the clip bound. Float32 sums
    # in another order differ by rounding, hence the tolerance.
    extra = float((summed - without).norm())
    assert extra <= clip * (1 + 1e-4) + 1e-5


@pytest.mark.parametrize("backend", BACKENDS)
def test_non_finite_rows_are_masked_without_touching_the_others(backend: str) -> None:
    # Any coefficient of a NaN record is ignored; the other rows' sum is the sum
    # of the clean batch with that record's coefficient set to zero.
    model, x, bad, y = _poisoned("mlp", float("nan"), torch.float64)
    coef = torch.linspace(0.5, 1.5, len(y), dtype=torch.float64)
    with PerSampleClipper(model, backend=backend) as clipper:
        got = flat(clipper.compute(bad, y).weighted_sum(coef))
        coef[2] = 0.0
        want = flat(clipper.compute(x, y).weighted_sum(coef))
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-14)
