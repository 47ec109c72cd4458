"""Per-sample gradient norms and sums of clipped per-sample gradients, in batch.

DP-SGD and its group-aware variants need, for a batch of ``b`` examples, the norm of
every per-sample gradient ``||grad_i||`` and the sum ``sum_i w_i c_i grad_i`` with
clipping coefficients ``c_i = min(1, C_i / ||grad_i||)`` whose bounds ``C_i`` may differ
by example (DPSGD-F gives each group its own bound, chosen *after* seeing noisy counts
of the norms). :class:`PerSampleClipper` splits the work in two so that the bounds can
be chosen in between::

    clipper = PerSampleClipper(model, loss_fn)  # backend="ghost"
    batch = clipper.compute(x, y)        # one forward, one backward
    bounds = choose_bounds(batch.norms)  # e.g. DPSGD-F's C_k
    # the sum of w_i c_i grad_i over the batch:
    grads = batch.clipped_sum(bounds[groups], weights=w)

No Python loop runs over the examples. Three backends:

``"ghost"`` (default)
    Forward hooks on every module that owns trainable parameters record the module's
    input and (through a tensor hook) the gradient of the summed per-sample losses with
    respect to its output. One backward pass that stops at the layer outputs (no
    parameter gradients) gives these. Per layer, (input, output gradient) then give
    the per-sample norms: ``nn.Linear`` by *ghost clipping* (``||g a^T||_F =
    ||g|| ||a||``; opacus' registered norm sampler for sequence inputs; nothing of the
    weight's size per sample); ``nn.Conv2d`` by unfolded input patches times output
    gradients, a chunk of examples at a time (opacus' own Conv2d sampler does the same
    with an einsum that was about three times slower on the CPU); other layers opacus
    supports (``Conv1d/3d``, ``Embedding``, ``LayerNorm``, ``GroupNorm``, ...) by
    opacus' registered per-sample gradient samplers; any other module by
    ``torch.func`` (vmap of grad) on that module alone. The clipped sum needs no
    second backward pass: the per-sample gradient of a linear layer is an outer
    product, so ``sum_i c_i g_i a_i^T`` is one matrix product with rescaled output
    gradients (book-keeping, as in Bu et al.'s "BK" algorithm), and materialised
    per-sample gradients are contracted with the coefficients. Cost on the paper's
    MNIST CNN (CPU, batch 256): about 1.5 times a non-private step. Parameters shared
    between modules, or a module called twice per forward, are refused (use
    ``"functorch"``).

``"bookkeeping"``
    Book-keeping (Bu et al. 2023): one forward and one backward pass (to the layer
    outputs, as the ghost backend), the same hooks, and per layer the cheaper of the
    ghost norm and an explicit per-sample gradient by a cost rule
    (``_ghost_cheaper``, the paper's hybrid rule with the cost of the sum
    added): ``nn.Linear`` on one position by ghost norm; ``nn.Conv2d`` (and a
    ``Linear`` on long sequences) by per-sample gradients (input patches times
    output gradients, into buffers reused from step to step), which the clipped
    sum then reuses (a product with the coefficients); a ghost-norm layer's sum is
    one product with rescaled output gradients. Only ``nn.Linear`` and ``nn.Conv2d``
    with trainable parameters are supported (others are refused, naming the
    layer). A batch's activations, output gradients and per-sample gradients live
    until the next ``compute`` (or ``close``), which frees them. Cost on the
    paper's MNIST CNN (CPU, batch 256, one thread): about 1.15 times a
    non-private step, DPSGD-F at 0.86 of SGD's throughput against 0.81 with
    ``"ghost"`` (``benchmarks/bench_dpsgd.py``).

``"functorch"``
    ``torch.func.vmap(torch.func.grad_and_value(...))`` of the loss of one example
    over the batch: materialises every per-sample gradient (``b`` times the model's
    size in memory), works for any functional module. The reference the tests check
    the ghost backend against.

All backends need per-sample independence: a layer mixing examples (BatchNorm in
training mode) breaks it and is refused. An empty batch (Poisson sampling can draw
none) gives empty norms and a zero sum without calling the model.

A record whose per-sample norm is not finite (a NaN or infinite feature, or a
gradient that overflows) gets clip factor 0 and contributes exactly 0 to every
weighted or clipped sum, in every backend: its rows of activations, output
gradients and per-sample gradients are replaced by zeros with ``torch.where`` (a
product would give ``0 * inf = NaN``), which leaves the other rows bit-identical.
Without this, one such record would turn the whole model into NaN while the run
still reported its epsilon. Zeroing is a per-record operation, so the sensitivity
of a clipped sum stays at its clip bound.

References:
    opacus (yousefpour2021opacus), ``GradSampleModuleFastGradientClipping`` and its
    layer-wise grad and norm samplers; goodfellow2015efficient and li2022large (ghost
    clipping); bu2023differentially (book-keeping, Algorithm 1, and its hybrid
    ghost-norm / per-sample-gradient rule); abadi2016deep (per-sample clipping).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = [
    "Backend",
    "PerSampleClipper",
    "PerSampleGradients",
    "as_tensor",
    "clip_factors",
    "cross_entropy_per_sample",
]

#: How :class:`PerSampleClipper` computes per-sample gradients and their norms.
Backend = Literal["ghost", "functorch", "bookkeeping"]
LossFn = Callable[[Tensor, Tensor], Tensor]


def cross_entropy_per_sample(output: Tensor, target: Tensor) -> Tensor:
    """Return one cross-entropy loss per example (``reduction="none"``)."""
    return F.cross_entropy(output, target, reduction="none")


def clip_factors(norms: Tensor, clip_norms: Tensor | float) -> Tensor:
    """Return the clipping coefficients ``min(1, C_i / ||grad_i||)``.

    A zero gradient gets coefficient 1 (nothing to clip), so ``c_i ||grad_i|| <= C_i``
    holds for every example. A norm that is not finite (NaN or infinite: a record
    with a non-finite value, or one whose gradient overflows) gets coefficient 0: that
    example is dropped from the sum rather than turning every parameter into NaN.

    Args:
        norms: Per-sample gradient norms, shape ``(b,)``.
        clip_norms: One bound for all examples or one per example, shape ``(b,)``;
            positive.

    Returns:
        The coefficients, shape ``(b,)``, in ``(0, 1]`` for finite norms, 0 for the
        others.

    Privacy:
        Zeroing an example's coefficient is a per-record operation (it depends on
        that example alone), so every term still has norm at most ``C_i`` and the
        sensitivity of a clipped sum stays at the clip bound.

    Examples:
        >>> clip_factors(torch.tensor([0.0, 0.5, 4.0, float("nan")]), 1.0).tolist()
        [1.0, 1.0, 0.25, 0.0]
    """
    c = torch.as_tensor(clip_norms, dtype=norms.dtype, device=norms.device)
    scale = c / torch.where(norms > 0, norms, torch.ones_like(norms))
    factors = torch.where(norms > c, scale, torch.ones_like(norms))
    return torch.where(torch.isfinite(norms), factors, torch.zeros_like(norms))


def _row_mask(t: Tensor, keep: Tensor) -> Tensor:
    # Zero the rows (examples) of ``t`` where ``keep`` is False. torch.where, not a
    # product: 0 * inf is NaN, and the kept rows stay bit-identical.
    return torch.where(keep.view(-1, *([1] * (t.dim() - 1))), t, torch.zeros_like(t))


def as_tensor(a: Any, name: str) -> Tensor:
    """Return ``a`` as a tensor: a tensor as is, an array-like through numpy.

    Args:
        a: A tensor or anything ``numpy.asarray`` accepts.
        name: The argument's name, for the error message.

    Returns:
        The tensor (sharing memory with a numpy input where possible).

    Raises:
        TypeError: If ``a`` cannot be converted.

    Examples:
        >>> as_tensor([1, 2], "x").tolist()
        [1, 2]
    """
    if isinstance(a, Tensor):
        return a
    try:
        return torch.as_tensor(np.asarray(a))
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a tensor or array-like: {err}") from err


# --------------------------------------------------------------------------------------
# Per-layer rules of the ghost backend
# --------------------------------------------------------------------------------------


def _opacus_samplers() -> tuple[dict, dict]:
    # Importing opacus.grad_sample registers the layer-wise samplers.
    from opacus.grad_sample import (
        GradSampleHooks,
        GradSampleHooksFastGradientClipping,
    )

    return (
        GradSampleHooks.GRAD_SAMPLERS,
        GradSampleHooksFastGradientClipping.NORM_SAMPLERS,
    )


@dataclass
class _Record:
    """What the hooks of one module captured for one batch."""

    inputs: list[Tensor]
    kwargs: dict[str, Any]
    output: Tensor
    version: int
    grad: Tensor | None = None


@dataclass
class _Unit:
    """A module that owns trainable parameters, with the rule for its gradients."""

    name: str
    module: nn.Module
    params: list[nn.Parameter]
    rule: str  # "linear", "conv2d", "opacus" or "func"
    record: _Record | None = None
    handle: Any = None


def _sq_norms(flat: Tensor) -> Tensor:
    # Row-wise squared norms without a temporary of the size of ``flat``.
    return torch.linalg.vector_norm(flat, dim=1).square()


def _linear_norms_sq(unit: _Unit, a: Tensor, g: Tensor, norm_sampler) -> Tensor:
    layer = unit.module
    if g.dim() > 2:  # a sequence axis: opacus' ghost norm with g g^T and a a^T
        norms = norm_sampler(layer, [a], g)
        return sum(norms[p].to(g.dtype) ** 2 for p in unit.params)
    # ||g_i a_i^T||_F^2 = ||g_i||^2 ||a_i||^2 (the same formula, without einsum's
    # batched matrix products, which are slow on the CPU for vectors).
    g2 = (g * g).sum(1)
    sq = torch.zeros_like(g2)
    if layer.weight.requires_grad:
        a = a.to(g.dtype)
        sq = sq + g2 * (a * a).sum(1)
    if layer.bias is not None and layer.bias.requires_grad:
        sq = sq + g2
    return sq


def _conv2d_supported(layer: nn.Module) -> bool:
    return (
        type(layer) is nn.Conv2d
        and layer.padding_mode == "zeros"
        and not isinstance(layer.padding, str)
    )


#: Examples per chunk when unfolding convolution inputs: keeps the patch buffers small
#: (allocator reuse, cache locality) without changing the result.
_CONV_CHUNK = 32


def _conv2d_grad_samples(unit: _Unit, a: Tensor, g: Tensor) -> dict:
    # Per-sample weight gradients of a 2-D convolution: the output gradients
    # (n, O, L) times the unfolded input patches (n, C/G * kh * kw, L), per group G,
    # written chunk by chunk into one (n * G, O/G, C/G * kh * kw) buffer.
    layer = unit.module
    n, groups = a.shape[0], layer.groups
    out = {}
    if layer.weight.requires_grad:
        w = layer.weight
        per = torch.empty(
            (n * groups, w.shape[0] // groups, w[0].numel()),
            dtype=g.dtype,
            device=g.device,
        )
        gg = g.reshape(n * groups, w.shape[0] // groups, -1)
        for s in range(0, n, _CONV_CHUNK):
            e = min(s + _CONV_CHUNK, n)
            patches = F.unfold(
                a[s:e].to(g.dtype),
                layer.kernel_size,
                dilation=layer.dilation,
                padding=layer.padding,
                stride=layer.stride,
            )
            pp = patches.reshape((e - s) * groups, -1, patches.shape[-1])
            torch.bmm(
                gg[s * groups : e * groups],
                pp.transpose(1, 2),
                out=per[s * groups : e * groups],
            )
        out[w] = per.reshape(n, *w.shape)
    if layer.bias is not None and layer.bias.requires_grad:
        out[layer.bias] = g.reshape(n, g.shape[1], -1).sum(-1)
    return out


def _linear_weighted(unit: _Unit, a: Tensor, g: Tensor, coef: Tensor) -> list[Tensor]:
    # sum_i c_i grad_i(W) = sum_i c_i g_i a_i^T: one product with rescaled g.
    gc = g * coef.view(-1, *([1] * (g.dim() - 1)))
    out = {}
    layer = unit.module
    if layer.weight.requires_grad:
        if gc.dim() == 2:
            out[layer.weight] = gc.T @ a.to(g.dtype)
        else:
            out[layer.weight] = torch.einsum("n...i,n...j->ij", gc, a.to(g.dtype))
    if layer.bias is not None and layer.bias.requires_grad:
        out[layer.bias] = gc.reshape(-1, gc.shape[-1]).sum(0)
    return [out[p] for p in unit.params]


def _func_grad_samples(unit: _Unit, rec: _Record, g: Tensor) -> dict:
    # torch.func on this module alone: d/dtheta <module(a_i), g_i> for each i.
    from torch.func import functional_call, grad, vmap

    names = [n for n, p in unit.module.named_parameters() if p.requires_grad]
    params = {
        n: p.detach() for n, p in unit.module.named_parameters() if p.requires_grad
    }
    kwargs = rec.kwargs

    def inner(theta: dict, inputs: tuple, gi: Tensor) -> Tensor:
        batched = tuple(t.unsqueeze(0) for t in inputs)
        out = functional_call(unit.module, theta, batched, kwargs)
        return (out * gi.unsqueeze(0)).sum()

    gs = vmap(grad(inner), in_dims=(None, 0, 0))(params, tuple(rec.inputs), g)
    by_name = dict(unit.module.named_parameters())
    return {by_name[n]: gs[n] for n in names}


# --------------------------------------------------------------------------------------
# Per-layer rules of the bookkeeping backend
# --------------------------------------------------------------------------------------

#: Layers the bookkeeping backend supports (exact types; see :func:`_bk_supported`).
_BK_LAYERS = "nn.Linear and nn.Conv2d (zero padding given as numbers)"


#: ``buffer(name, shape, like)``: a tensor of that shape, dtype and device of ``like``,
#: whose memory is reused from one batch to the next.
_Buffers = Callable[[str, tuple[int, ...], Tensor], Tensor]


def _bk_supported(layer: nn.Module) -> bool:
    return type(layer) is nn.Linear or _conv2d_supported(layer)


def _ghost_cheaper(t: int, d: int, p: int) -> bool:
    """Return whether a layer's norm is cheaper by ghost norm than by its gradients.

    Per example and group, a layer with ``t`` positions (sequence length, or output
    pixels of a convolution), ``d`` inputs and ``p`` outputs costs, in
    multiply-adds, ``t^2 (d + p)`` for the ghost norm (the two ``t x t`` Gram
    matrices) plus ``t p d`` for its share of the clipped sum (one product with
    rescaled output gradients), against ``t p d`` to materialise its per-sample
    gradient plus ``2 p d`` for its norm and its share of the sum (a product with
    the coefficients). Bu et al.'s hybrid rule ``2 t^2 < p d`` compares the norms
    alone, because their sum is a product with the output gradients either way; here
    a materialised gradient is reused for the sum, hence ``t^2 (d + p) <= 2 p d``.
    """
    return t * t * (d + p) <= 2 * p * d


def _bk_linear(layer: nn.Linear, a: Tensor, g: Tensor) -> tuple[Tensor, dict]:
    # Squared per-sample norms of a linear layer and, per parameter, the function of
    # the coefficients that gives its weighted sum (data captured as arguments).
    b, p_out = g.shape[0], g.shape[-1]
    a = a.to(g.dtype)
    w_on = layer.weight.requires_grad
    bias_on = layer.bias is not None and layer.bias.requires_grad
    sums: dict = {}
    if g.dim() == 2:  # one position: ||g_i a_i^T||^2 = ||g_i||^2 ||a_i||^2
        g2 = (g * g).sum(1)
        sq = g2 * (a * a).sum(1) if w_on else torch.zeros_like(g2)
        if bias_on:
            sq = sq + g2
            sums[layer.bias] = (_coef_rows, g)
        if w_on:
            sums[layer.weight] = (_outer_sum, g, a)
        return sq, sums
    a = a.reshape(b, -1, a.shape[-1])
    g = g.reshape(b, -1, p_out)
    sq = torch.zeros(b, dtype=g.dtype, device=g.device)
    if bias_on:
        gb = g.sum(1)
        sq = sq + (gb * gb).sum(1)
        sums[layer.bias] = (_coef_rows, gb)
    if w_on:
        if _ghost_cheaper(g.shape[1], a.shape[-1], p_out):
            gram = torch.bmm(g, g.transpose(1, 2))
            sq = sq + (torch.bmm(a, a.transpose(1, 2)) * gram).sum((1, 2))
            sums[layer.weight] = (_outer_sum, g, a)
        else:
            per = torch.bmm(g.transpose(1, 2), a).reshape(b, -1)
            sq = sq + _sq_norms(per)
            sums[layer.weight] = (_coef_rows, per)
    return sq, sums


def _bk_conv2d(
    layer: nn.Conv2d, a: Tensor, g: Tensor, buffer: _Buffers
) -> tuple[Tensor, dict]:
    # As _bk_linear, for a 2-D convolution: per group, t output pixels, d = C/G kh kw
    # inputs per pixel, p = O/G outputs.
    b, groups = g.shape[0], layer.groups
    a = a.to(g.dtype)
    w = layer.weight
    sq = torch.zeros(b, dtype=g.dtype, device=g.device)
    sums: dict = {}
    if layer.bias is not None and layer.bias.requires_grad:
        gb = g.sum((2, 3))
        sq = sq + (gb * gb).sum(1)
        sums[layer.bias] = (_coef_rows, gb)
    if w.requires_grad:
        t, d, p = g.shape[2] * g.shape[3], w[0].numel(), w.shape[0] // groups
        if _ghost_cheaper(t, d, p):
            patches = F.unfold(
                a,
                layer.kernel_size,
                dilation=layer.dilation,
                padding=layer.padding,
                stride=layer.stride,
            ).reshape(b * groups, d, t)
            gg = g.reshape(b * groups, p, t)
            gram = torch.bmm(gg.transpose(1, 2), gg)
            prod = torch.bmm(patches.transpose(1, 2), patches) * gram
            sq = sq + prod.sum((1, 2)).view(b, groups).sum(1)
            sums[w] = (_conv_sum, layer, g, a)
        else:
            per = _conv2d_per_sample(layer, a, g, buffer)
            sq = sq + _sq_norms(per)
            sums[w] = (_coef_rows, per)
    return sq, sums


def _conv2d_per_sample(
    layer: nn.Conv2d, a: Tensor, g: Tensor, buffer: _Buffers
) -> Tensor:
    # Per-sample weight gradients of a 2-D convolution, (b, O C/G kh kw): per
    # group, the output gradients (O/G, t) times the input patches (t, C/G kh kw),
    # a chunk of examples at a time. The patches are copied from a strided view of
    # the (padded) input, laid out as im2col lays them out (channel, kernel row,
    # kernel column; then output pixel): on the paper's CNN (20 -> 50 channels,
    # 5x5) the copy costs a tenth of the product, where aten::im2col cost two thirds
    # of it (one thread, CPU). The patches and the result live in buffers reused
    # from step to step: allocating them afresh cost more in page faults than the
    # products themselves (CPU, glibc). Also measured on the paper's CNN: the batch
    # folded into the groups of one convolution backward (allocates twice the
    # result's memory per call) and one grouped forward convolution with the output
    # gradients as kernels (as fast as im2col, but allocates).
    b, groups = a.shape[0], layer.groups
    w = layer.weight
    o, ho, wo = g.shape[1:]
    cg, kh, kw = w.shape[1:]
    c = groups * cg
    per = buffer("per", (b * groups, o // groups, cg * kh * kw), g)
    gg = g.reshape(b * groups, o // groups, ho * wo)
    ph, pw = layer.padding
    ap = F.pad(a, (pw, pw, ph, ph)) if ph or pw else a.contiguous()
    sn, sc, sh, sw = ap.stride()
    (dh, dw), (th, tw) = layer.dilation, layer.stride
    for s in range(0, b, _CONV_CHUNK):
        e = min(s + _CONV_CHUNK, b)
        patches = buffer("patches", (e - s, c * kh * kw, ho * wo), g)
        view = ap[s:e].as_strided(
            (e - s, c, kh, kw, ho, wo),
            (sn, sc, dh * sh, dw * sw, th * sh, tw * sw),
            ap.storage_offset() + s * sn,
        )
        patches.view(view.shape).copy_(view)
        torch.bmm(
            gg[s * groups : e * groups],
            patches.view((e - s) * groups, cg * kh * kw, ho * wo).transpose(1, 2),
            out=per[s * groups : e * groups],
        )
    return per.view(b, -1)


def _coef_rows(coef: Tensor, rows: Tensor) -> Tensor:
    # sum_i c_i rows_i for materialised per-sample rows.
    return coef @ rows


def _outer_sum(coef: Tensor, g: Tensor, a: Tensor) -> Tensor:
    # sum_i c_i sum_t g_it a_it^T: one product with rescaled output gradients.
    gc = g * coef.view(-1, *([1] * (g.dim() - 1)))
    return gc.reshape(-1, g.shape[-1]).T @ a.reshape(-1, a.shape[-1])


def _conv_sum(coef: Tensor, layer: nn.Conv2d, g: Tensor, a: Tensor) -> Tensor:
    # sum_i c_i grad_i of a convolution's weight: the weight gradient of the batch
    # with rescaled output gradients.
    return torch.nn.grad.conv2d_weight(
        a,
        layer.weight.shape,
        g * coef.view(-1, 1, 1, 1),
        stride=layer.stride,
        padding=layer.padding,
        dilation=layer.dilation,
        groups=layer.groups,
    )


# --------------------------------------------------------------------------------------
# The result of one batch
# --------------------------------------------------------------------------------------


@dataclass
class PerSampleGradients:
    """Per-sample norms and losses of one batch; makes weighted sums of its gradients.

    Made by :meth:`PerSampleClipper.compute`; valid until the next ``compute`` call
    on the same clipper.

    Attributes:
        norms: ``||grad_i||`` over all trainable parameters, shape ``(b,)``.
        losses: The per-sample losses (detached), shape ``(b,)``.
        parameters: The trainable parameters, in the order of the returned sums.
    """

    norms: Tensor
    losses: Tensor
    parameters: tuple[nn.Parameter, ...]
    _weighted: Callable[[Tensor], list[Tensor]] = field(repr=False)

    @property
    def batch_size(self) -> int:
        """Return the number of examples ``b``."""
        return int(self.norms.shape[0])

    def weighted_sum(
        self, coefficients: Tensor, *, set_grad: bool = True
    ) -> list[Tensor]:
        """Return ``sum_i coefficients_i * grad_i``, one tensor per parameter.

        Args:
            coefficients: One real coefficient per example, shape ``(b,)``.
            set_grad: Also store the sums in ``p.grad`` (overwriting it).

        An example whose norm is not finite contributes exactly 0, whatever its
        coefficient.

        Returns:
            The sums, in the order of :attr:`parameters`.

        Raises:
            ValueError: If ``coefficients`` does not have shape ``(b,)``.
            RuntimeError: Under the bookkeeping backend, if the clipper has computed
                another batch since (which freed this one's activations).

        Privacy:
            Zeroing a non-finite example is a per-record operation: the sum's
            sensitivity is ``max_i |coefficients_i| ||grad_i||`` over the finite
            examples.
        """
        coef = torch.as_tensor(coefficients, device=self.norms.device)
        if coef.shape != (self.batch_size,):
            raise ValueError(
                f"coefficients must have shape ({self.batch_size},), one per example, "
                f"got {tuple(coef.shape)}."
            )
        if self.batch_size == 0:
            sums = [torch.zeros_like(p) for p in self.parameters]
        else:
            sums = self._weighted(coef.to(self.norms.dtype))
        if set_grad:
            for p, s in zip(self.parameters, sums, strict=True):
                p.grad = s.detach().view_as(p).to(p.dtype)
        return sums

    def clipped_sum(
        self,
        clip_norms: Tensor | float,
        *,
        weights: Tensor | None = None,
        set_grad: bool = True,
    ) -> list[Tensor]:
        """Return ``sum_i w_i min(1, C_i / ||grad_i||) grad_i``, one sum per parameter.

        Args:
            clip_norms: The bound ``C_i``: one for all, or one per example ``(b,)``.
            weights: Optional per-example weights ``w_i`` (default 1), shape ``(b,)``.
            set_grad: Also store the sums in ``p.grad`` (overwriting it).

        Returns:
            The sums, in the order of :attr:`parameters`. Each clipped, weighted term
            has norm at most ``|w_i| C_i``: the L2 sensitivity of the sum under
            adding or removing one example is ``max_i |w_i| C_i``. An example with a
            non-finite norm gets coefficient 0 (:func:`clip_factors`) and adds
            exactly 0.

        Privacy:
            Each term is clipped (or zeroed) on its own record, so the L2
            sensitivity under add/remove-one neighbours is ``max_i |w_i| C_i``.

        Raises:
            ValueError: If a bound is not positive or a shape is wrong.
        """
        c = torch.as_tensor(
            clip_norms, dtype=self.norms.dtype, device=self.norms.device
        )
        if c.dim() not in (0, 1) or (c.dim() == 1 and c.shape[0] != self.batch_size):
            raise ValueError(
                "clip_norms must be a scalar or have one bound per example, shape "
                f"({self.batch_size},); got {tuple(c.shape)}."
            )
        if c.numel() and not bool(torch.all(c > 0)):
            raise ValueError("clip_norms must be positive; pass e.g. clip_norm=1.0.")
        coef = clip_factors(self.norms, c)
        if weights is not None:
            coef = coef * torch.as_tensor(weights, dtype=coef.dtype, device=coef.device)
        return self.weighted_sum(coef, set_grad=set_grad)


# --------------------------------------------------------------------------------------
# The engine
# --------------------------------------------------------------------------------------


class PerSampleClipper:
    """Per-sample gradient norms and clipped sums for a ``torch.nn.Module``.

    The object holds state (hooks on the model, the layer plan), so it is a class; the
    algorithms that use it are functions (:mod:`dpnotes.dpsgd.rules`).

    Args:
        model: The model; its trainable parameters are those with
            ``requires_grad``. The ghost backend adds forward hooks to its modules;
            :meth:`close` (or leaving a ``with`` block) removes them.
        loss_fn: ``loss_fn(output, target)`` returning one loss per example, shape
            ``(b,)`` (e.g. a criterion with ``reduction="none"``); default
            :func:`cross_entropy_per_sample`.
        backend: ``"ghost"`` (default), ``"bookkeeping"`` (fastest; ``nn.Linear``
            and ``nn.Conv2d`` only) or ``"functorch"``; see the module docstring.

    Raises:
        ValueError: If the model has no trainable parameters, contains BatchNorm
            (mixes examples; use GroupNorm), shares parameters between modules under
            the ghost or bookkeeping backend, has a trainable layer other than
            ``nn.Linear``/``nn.Conv2d`` under the bookkeeping backend, or
            ``backend`` is unknown.
        TypeError: If ``model`` is not an ``nn.Module`` or ``loss_fn`` not callable.

    Privacy:
        None by itself: this computes exact, non-private quantities. The sum of
        clipped gradients with bounds ``C_i`` and weights ``w_i`` has L2 sensitivity
        ``max_i |w_i| C_i`` under add/remove-one neighbours, which the caller
        calibrates noise to. An example with a non-finite gradient norm is left out
        of every sum (coefficient 0): a per-record operation, so the sensitivity
        stays at the clip bound.

    References:
        yousefpour2021opacus; li2022large; bu2023differentially; abadi2016deep.

    Examples:
        >>> model = nn.utils.skip_init(nn.Linear, 3, 2)  # no global-RNG initialisation
        >>> _ = [nn.init.constant_(p, 0.1) for p in model.parameters()]
        >>> x = torch.randn(4, 3, generator=torch.Generator().manual_seed(0))
        >>> y = torch.tensor([0, 1, 1, 0])
        >>> with PerSampleClipper(model) as clipper:
        ...     batch = clipper.compute(x, y)
        ...     sums = batch.clipped_sum(1.0)
        >>> batch.norms.shape, [tuple(s.shape) for s in sums]
        (torch.Size([4]), [(2, 3), (2,)])
    """

    def __init__(
        self,
        model: nn.Module,
        loss_fn: LossFn | None = None,
        *,
        backend: Backend = "ghost",
    ) -> None:
        if not isinstance(model, nn.Module):
            raise TypeError(
                f"model must be a torch.nn.Module, got {type(model).__name__}."
            )
        if loss_fn is None:
            loss_fn = cross_entropy_per_sample
        if not callable(loss_fn):
            raise TypeError("loss_fn must be callable as loss_fn(output, target).")
        if backend not in ("ghost", "functorch", "bookkeeping"):
            raise ValueError(
                f"unknown backend {backend!r}; choose 'ghost' (default), "
                "'bookkeeping' (fastest; Linear and Conv2d layers only) or "
                "'functorch' (materialises per-sample gradients, any functional model)."
            )
        params = [p for p in model.parameters() if p.requires_grad]
        if not params:
            raise ValueError(
                "the model has no trainable parameters (none with requires_grad=True); "
                "there is nothing to train."
            )
        for name, m in model.named_modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                raise ValueError(
                    f"module {name!r} is {type(m).__name__}, which mixes the examples "
                    "of a batch, so per-sample gradients (and DP-SGD's sensitivity) "
                    "are undefined. Replace it with nn.GroupNorm or nn.LayerNorm."
                )
        self.model = model
        self.loss_fn = loss_fn
        self.backend: Backend = backend
        self.parameters: tuple[nn.Parameter, ...] = tuple(params)
        self._units: list[_Unit] = []
        self._active = False
        self._closed = False
        self._last_sums: list[dict] | None = None
        self._buffers: dict[tuple[str, str], Tensor] = {}
        if backend != "functorch":
            self._plan_units()

    # -- context manager -------------------------------------------------------------

    def __enter__(self) -> PerSampleClipper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove the hooks from the model (idempotent); the clipper is then spent."""
        self._closed = True
        for u in self._units:
            if u.handle is not None:
                u.handle.remove()
                u.handle = None
            u.record = None
        self._release()
        self._buffers.clear()

    def _buffer_for(self, unit: str) -> _Buffers:
        # Buffers of the bookkeeping backend, per layer and name, reused from batch to
        # batch (one batch's worth of memory): grown to a new largest batch, viewed
        # to a smaller one (Poisson sampling varies the batch size).
        def buffer(name: str, shape: tuple[int, ...], like: Tensor) -> Tensor:
            key = (unit, name)
            n = math.prod(shape)
            buf = self._buffers.get(key)
            if (
                buf is None
                or buf.numel() < n
                or buf.dtype != like.dtype
                or buf.device != like.device
            ):
                # Headroom, so that a slightly larger batch does not reallocate.
                size = n + n // 8
                buf = torch.empty(size, dtype=like.dtype, device=like.device)
                self._buffers[key] = buf
            return buf[:n].view(shape)

        return buffer

    def _release(self) -> None:
        # The bookkeeping backend keeps one batch's activations and output gradients,
        # until the next batch (or close) frees them.
        if self._last_sums is not None:
            self._last_sums.clear()
            self._last_sums = None

    # -- ghost backend: plan ---------------------------------------------------------

    def _plan_units(self) -> None:
        bk = self.backend == "bookkeeping"
        if bk:
            grad_samplers: dict = {}
            norm_samplers: dict = {}
        else:
            grad_samplers, norm_samplers = _opacus_samplers()
        self._grad_samplers, self._norm_samplers = grad_samplers, norm_samplers
        covered: set[int] = set()

        def visit(name: str, m: nn.Module) -> None:
            own = [p for p in m.parameters(recurse=False) if p.requires_grad]
            if own and bk and not _bk_supported(m):
                raise ValueError(
                    f"module {name or 'the model'!r} ({type(m).__name__}) has "
                    f"trainable parameters, but backend='bookkeeping' supports only "
                    f"{_BK_LAYERS}. Use backend='ghost' (opacus' per-layer samplers, "
                    "torch.func for other layers) or backend='functorch' (any "
                    "functional model)."
                )
            if own:
                if bk:
                    rule = "linear" if type(m) is nn.Linear else "conv2d"
                elif type(m) is nn.Linear and nn.Linear in norm_samplers:
                    rule = "linear"
                elif _conv2d_supported(m):
                    rule = "conv2d"
                elif type(m) in grad_samplers:
                    rule = "opacus"
                else:
                    rule = "func"
                # A module handled by torch.func owns its whole subtree, as in opacus.
                plist = (
                    [p for p in m.parameters() if p.requires_grad]
                    if rule == "func"
                    else own
                )
                if rule == "opacus" and any(
                    p.requires_grad for c in m.children() for p in c.parameters()
                ):
                    rule = "func"
                    plist = [p for p in m.parameters() if p.requires_grad]
                for p in plist:
                    if id(p) in covered:
                        raise ValueError(
                            f"a parameter of module {name!r} is shared with another "
                            f"module; the {self.backend} backend needs each parameter "
                            "in one module. Use backend='functorch'."
                        )
                    covered.add(id(p))
                unit = _Unit(name=name, module=m, params=plist, rule=rule)
                unit.handle = m.register_forward_hook(
                    self._make_hook(unit), with_kwargs=True
                )
                self._units.append(unit)
                if rule == "func":
                    return
            for child_name, child in m.named_children():
                visit(f"{name}.{child_name}" if name else child_name, child)

        visit("", self.model)
        missing = [p for p in self.parameters if id(p) not in covered]
        if missing:  # pragma: no cover - every parameter belongs to some module
            raise ValueError("some trainable parameters belong to no module.")
        self._param_index = {id(p): i for i, p in enumerate(self.parameters)}

    def _make_hook(self, unit: _Unit) -> Callable:
        def hook(module: nn.Module, args: tuple, kwargs: dict, output: Any) -> None:
            if not self._active or not torch.is_grad_enabled():
                return
            if unit.record is not None:
                raise ValueError(
                    f"module {unit.name!r} ran twice in one forward pass (a reused "
                    f"layer or tied weights); the {self.backend} backend cannot split "
                    "its per-sample gradient. Use backend='functorch'."
                )
            if not isinstance(output, Tensor):
                raise ValueError(
                    f"module {unit.name!r} returned {type(output).__name__}, not a "
                    f"tensor; the {self.backend} backend needs tensor outputs. Use "
                    "backend='functorch'."
                )
            inputs = [a.detach() for a in args if isinstance(a, Tensor)]
            if len(inputs) != len(args) and unit.rule != "linear":
                raise ValueError(
                    f"module {unit.name!r} takes non-tensor positional arguments; use "
                    "backend='functorch'."
                )
            rec = _Record(inputs=inputs, kwargs=kwargs, output=output, version=0)
            rec.version = output._version
            # The hook holds the record weakly: a strong reference would close the
            # cycle record -> output -> tensor hook -> record, which Python's garbage
            # collector cannot see through, and every batch's graph would leak.
            ref = weakref.ref(rec)

            def grab(g: Tensor) -> None:
                target = ref()
                if target is not None:
                    target.grad = g

            if output.requires_grad:
                output.register_hook(grab)
            unit.record = rec

        return hook

    # -- computing ---------------------------------------------------------------------

    def compute(self, x: Tensor, y: Tensor) -> PerSampleGradients:
        """Run the model on a batch: per-sample losses and gradient norms.

        Args:
            x: Inputs with the examples along the first axis, ``(b, ...)``.
            y: Targets, ``(b, ...)``.

        Returns:
            A :class:`PerSampleGradients` with ``norms``, ``losses`` and the methods
            that make (clipped) sums of the per-sample gradients.

        Raises:
            ValueError: If ``x`` and ``y`` differ in length or ``loss_fn`` does not
                return one loss per example.
        """
        if self._closed:
            raise RuntimeError(
                "this PerSampleClipper is closed (hooks removed); make a new one."
            )
        if x.shape[0] != y.shape[0]:
            raise ValueError(
                f"x has {x.shape[0]} examples but y has {y.shape[0]}; pass one target "
                "per example."
            )
        p0 = self.parameters[0]
        b = int(x.shape[0])
        if b == 0:
            empty = torch.zeros(0, dtype=p0.dtype, device=p0.device)
            return PerSampleGradients(
                empty, empty.clone(), self.parameters, lambda c: []
            )
        if self.backend == "functorch":
            return self._compute_functorch(x, y)
        if self.backend == "bookkeeping":
            return self._compute_bookkeeping(x, y)
        return self._compute_ghost(x, y)

    def _check_losses(self, losses: Tensor, b: int) -> Tensor:
        if losses.shape != (b,):
            raise ValueError(
                f"loss_fn returned shape {tuple(losses.shape)}; it must return one "
                f"loss per example, shape ({b},) (use reduction='none')."
            )
        return losses

    def _forward_backward(self, x: Tensor, y: Tensor) -> tuple[Tensor, list[_Unit]]:
        # One forward pass with the hooks on, then one backward pass to the outputs
        # of the hooked layers: their inputs and output gradients are then recorded.
        b = int(x.shape[0])
        for u in self._units:
            u.record = None
        self._active = True
        try:
            with torch.enable_grad():
                output = self.model(x)
                losses = self._check_losses(self.loss_fn(output, y), b)
        finally:
            self._active = False
        units = [u for u in self._units if u.record is not None]
        # Differentiate w.r.t. the layer outputs, not the parameters: the backward pass
        # stops there. An output changed in place later (e.g. ReLU(inplace=True)) is
        # replaced by a parameter of its layer, so that autograd passes through the
        # layer and the tensor hook sees the gradient of the unmodified output.
        targets = []
        for u in units:
            rec = u.record
            if rec.output.requires_grad and rec.output._version == rec.version:
                targets.append(rec.output)
            else:
                targets.append(u.params[0])
        if targets:
            torch.autograd.grad(losses.sum(), targets, allow_unused=True)
        return losses, units

    def _compute_ghost(self, x: Tensor, y: Tensor) -> PerSampleGradients:
        b = int(x.shape[0])
        losses, units = self._forward_backward(x, y)
        dtype = losses.dtype
        sq = torch.zeros(b, dtype=dtype, device=losses.device)
        cache: list[tuple[_Unit, Any]] = []
        for u in units:
            rec = u.record
            g = rec.grad
            if g is None:  # the layer does not influence the loss
                continue
            g = g.detach()
            if u.rule == "linear":
                a = rec.inputs[0]
                sq = sq + _linear_norms_sq(u, a, g, self._norm_samplers[nn.Linear])
                cache.append((u, (a, g)))
            else:
                if u.rule == "conv2d":
                    gs = _conv2d_grad_samples(u, rec.inputs[0], g)
                elif u.rule == "opacus":
                    gs = self._grad_samplers[type(u.module)](u.module, rec.inputs, g)
                else:
                    gs = _func_grad_samples(u, rec, g)
                flat = [gs[p].reshape(b, -1) for p in u.params]
                for f in flat:
                    sq = sq + _sq_norms(f).to(dtype)
                cache.append((u, flat))
            u.record = None  # drop the graph references
        norms = sq.clamp_min(0).sqrt()
        finite = torch.isfinite(norms)
        all_finite = bool(finite.all())
        if not all_finite:  # such examples contribute exactly 0 to every sum
            cache = [(u, [_row_mask(t, finite) for t in data]) for u, data in cache]

        def weighted(coef: Tensor) -> list[Tensor]:
            if not all_finite:
                coef = torch.where(finite, coef, torch.zeros_like(coef))
            out = [torch.zeros_like(p) for p in self.parameters]
            for u, data in cache:
                if u.rule == "linear":
                    a, g = data
                    sums = _linear_weighted(u, a, g, coef)
                else:
                    sums = [coef.to(f.dtype) @ f for f in data]
                for p, s in zip(u.params, sums, strict=True):
                    out[self._param_index[id(p)]] = s.view_as(p)
            return out

        return PerSampleGradients(
            norms.detach(), losses.detach(), self.parameters, weighted
        )

    def _compute_functorch(self, x: Tensor, y: Tensor) -> PerSampleGradients:
        from torch.func import functional_call, grad_and_value, vmap

        model, loss_fn = self.model, self.loss_fn
        names = [n for n, p in model.named_parameters() if p.requires_grad]
        params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}

        def loss_one(theta: dict, xi: Tensor, yi: Tensor) -> Tensor:
            out = functional_call(model, theta, (xi.unsqueeze(0),))
            loss = loss_fn(out, yi.unsqueeze(0))
            if loss.shape != (1,):  # a reducing loss gives () on a batch of one
                self._check_losses(loss, 1)
            return loss.sum()

        grads, losses = vmap(grad_and_value(loss_one), in_dims=(None, 0, 0))(
            params, x, y
        )
        b = int(x.shape[0])
        flat = [grads[n].reshape(b, -1) for n in names]
        norms = torch.sqrt(sum(_sq_norms(f) for f in flat))
        finite = torch.isfinite(norms)
        all_finite = bool(finite.all())
        if not all_finite:  # such examples contribute exactly 0 to every sum
            flat = [_row_mask(f, finite) for f in flat]

        def weighted(coef: Tensor) -> list[Tensor]:
            if not all_finite:
                coef = torch.where(finite, coef, torch.zeros_like(coef))
            return [
                (coef.to(f.dtype) @ f).view_as(p)
                for f, p in zip(flat, self.parameters, strict=True)
            ]

        return PerSampleGradients(
            norms.detach(), losses.detach(), self.parameters, weighted
        )

    def _compute_bookkeeping(self, x: Tensor, y: Tensor) -> PerSampleGradients:
        self._release()  # the previous batch's activations go before this forward
        b = int(x.shape[0])
        losses, units = self._forward_backward(x, y)
        sq = torch.zeros(b, dtype=losses.dtype, device=losses.device)
        # Per parameter: (function of the coefficients, its per-example data...).
        sums: dict[int, tuple] = {}
        for u in units:
            rec = u.record
            u.record = None  # drop the graph references
            if rec.grad is None:  # the layer does not influence the loss
                continue
            g = rec.grad.detach()
            if u.rule == "linear":
                layer_sq, layer_sums = _bk_linear(u.module, rec.inputs[0], g)
            else:
                layer_sq, layer_sums = _bk_conv2d(
                    u.module, rec.inputs[0], g, self._buffer_for(u.name)
                )
            sq = sq + layer_sq.to(sq.dtype)
            for p, entry in layer_sums.items():
                sums[self._param_index[id(p)]] = entry
        norms = sq.clamp_min(0).sqrt()
        finite = torch.isfinite(norms)
        all_finite = bool(finite.all())
        if not all_finite:  # such examples contribute exactly 0 to every sum
            sums = {
                i: tuple(
                    _row_mask(t, finite) if isinstance(t, Tensor) else t for t in entry
                )
                for i, entry in sums.items()
            }
        holder = [sums]  # emptied by _release
        self._last_sums = holder
        del sums
        params = self.parameters

        def weighted(coef: Tensor) -> list[Tensor]:
            if not holder:
                raise RuntimeError(
                    "this batch's activations were freed by the next compute() (or "
                    "close()); make its sums before computing the next batch."
                )
            if not all_finite:
                coef = torch.where(finite, coef, torch.zeros_like(coef))
            out = []
            for i, p in enumerate(params):
                entry = holder[0].get(i)
                if entry is None:  # the parameter does not influence the loss
                    out.append(torch.zeros_like(p))
                else:
                    fn, *data = entry
                    out.append(fn(coef.to(sq.dtype), *data).view_as(p))
            return out

        return PerSampleGradients(norms.detach(), losses.detach(), params, weighted)
