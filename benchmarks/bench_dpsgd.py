"""Training throughput of DPSGD-F against non-private SGD and opacus' DP-SGD.

Run: ``.venv/bin/python benchmarks/bench_dpsgd.py [--threads 1] [--steps 8]
[--device cuda]``.

The paper's MNIST network (431,080 parameters) at batch size 256 on the CPU (or on
``--device``; then absolute times are meaningful too), random
28x28 inputs in two groups. Each variant trains for ``--steps`` steps (one epoch of
``steps * batch`` examples), all in the same process with the same thread count;
the variants take turns and each keeps its fastest of ``--repeats`` epochs, so that a
background load affects them alike. Throughput is examples per second.

* ``sgd`` -- plain PyTorch: forward, mean loss, backward, ``torch.optim.SGD``.
* ``dpsgd_f[bookkeeping]``, ``dpsgd_f[ghost]``, ``dpsgd_f[functorch]`` --
  :func:`dpnotes.dpsgd.train` with ``method="dpsgd_f"`` and Poisson sampling (set-up
  and accounting included) on each engine backend.
* ``opacus_dpsgd`` -- opacus' ``PrivacyEngine.make_private`` (per-sample gradients by
  hooks, Poisson sampling); ``opacus_ghost`` -- the same with
  ``grad_sample_mode="ghost"`` (two backward passes).

The target: DPSGD-F on the bookkeeping backend at 0.9 times the throughput of
non-private SGD (MNIST CNN, batch 256, one thread). The last line is
machine-readable, for the bookkeeping backend:
``ratio dpsgd_f_vs_sgd=<x> dpsgd_f_vs_opacus_dpsgd=<y>``. With ``--profile`` it then
prints where a step of each spends its time, operator by operator.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F
from _timing import machine_line
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from dpnotes.dpsgd import train
from dpnotes.dpsgd.models import MNISTConvNet

DEVICE = torch.device("cpu")


def _sync() -> None:
    # CUDA kernels run asynchronously; time only finished work.
    if DEVICE.type == "cuda":
        torch.cuda.synchronize()


def paper_cnn(seed: int) -> nn.Module:
    """The paper's MNIST CNN, initialised from ``seed``, on the benchmark's device."""
    return MNISTConvNet(generator=torch.Generator().manual_seed(seed)).to(DEVICE)


def time_sgd(x: torch.Tensor, y: torch.Tensor, batch: int) -> float:
    model = paper_cnn(0)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    start = time.perf_counter()
    for i in range(0, x.shape[0], batch):
        opt.zero_grad()
        F.cross_entropy(model(x[i : i + batch]), y[i : i + batch]).backward()
        opt.step()
    _sync()
    return time.perf_counter() - start


def time_dpsgd_f(
    x: torch.Tensor, y: torch.Tensor, groups: torch.Tensor, batch: int, backend: str
) -> float:
    model = paper_cnn(0)
    start = time.perf_counter()
    train(
        model, x, y, groups, num_groups=2, method="dpsgd_f", backend=backend,
        noise_multiplier=1.0, clip_norm=1.0, lr=0.01, batch_size=batch, epochs=1,
        rng=np.random.default_rng(0), device=DEVICE,
    )  # fmt: skip
    _sync()
    return time.perf_counter() - start


def time_opacus(x: torch.Tensor, y: torch.Tensor, batch: int, mode: str) -> float:
    from opacus import PrivacyEngine

    model = paper_cnn(0)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(TensorDataset(x, y), batch_size=batch)
    with warnings.catch_warnings():  # opacus warns that secure_mode is off
        warnings.simplefilter("ignore")
        engine = PrivacyEngine(accountant="rdp")
        out = engine.make_private(
            module=model, optimizer=opt, data_loader=loader, noise_multiplier=1.0,
            max_grad_norm=1.0, poisson_sampling=True, grad_sample_mode=mode,
            criterion=nn.CrossEntropyLoss(),
        )  # fmt: skip
    if mode == "ghost":
        model, opt, criterion, loader = out
    else:
        model, opt, loader = out
        criterion = nn.CrossEntropyLoss()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for xb, yb in loader:
            opt.zero_grad()
            criterion(model(xb), yb).backward()
            opt.step()
    _sync()
    return time.perf_counter() - start


def profile_steps(
    variants: dict[str, Callable[[], float]], names: list[str], steps: int, repeats: int
) -> None:
    """Print, per step, each operator's self CPU time for ``names`` side by side.

    Each variant's epoch is profiled ``repeats`` times, taking turns, and each
    operator keeps its smallest total: a background load inflates single epochs
    unevenly, and the minimum is the steadier estimate (as for the throughputs).
    """
    from torch.profiler import ProfilerActivity, profile

    best: dict[str, dict[str, float]] = {name: {} for name in names}
    for _ in range(repeats):
        for name in names:
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                variants[name]()
            for e in prof.key_averages():
                ms = e.self_cpu_time_total / 1e3 / steps
                best[name][e.key] = min(best[name].get(e.key, float("inf")), ms)
    ops = sorted(
        set().union(*best.values()),
        key=lambda k: -max(b.get(k, 0) for b in best.values()),
    )
    print("self CPU time per step (ms), fastest of", repeats, "profiled epochs:")
    print(f"  {'operator':42s}" + "".join(f"{n:>22s}" for n in names))
    for op in ops[:14]:
        cells = "".join(f"{best[n].get(op, 0.0):22.1f}" for n in names)
        print(f"  {op[:42]:42s}{cells}")
    totals = "".join(f"{sum(best[n].values()):22.1f}" for n in names)
    print(f"  {'all operators':42s}{totals}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-functorch", action="store_true")
    parser.add_argument("--device", default="cpu", help="torch device, e.g. cuda")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also print where a step of SGD and of DPSGD-F (bookkeeping) spends time",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    global DEVICE
    DEVICE = torch.device(args.device)

    n = args.batch * args.steps
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(n, 1, 28, 28, generator=gen)
    y = torch.randint(0, 10, (n,), generator=gen)
    groups = torch.randint(0, 2, (n,), generator=gen)
    x, y, groups = x.to(DEVICE), y.to(DEVICE), groups.to(DEVICE)
    variants: dict[str, Callable[[], float]] = {
        "sgd": lambda: time_sgd(x, y, args.batch),
        "dpsgd_f[bookkeeping]": lambda: time_dpsgd_f(
            x, y, groups, args.batch, "bookkeeping"
        ),
        "dpsgd_f[ghost]": lambda: time_dpsgd_f(x, y, groups, args.batch, "ghost"),
        "opacus_dpsgd": lambda: time_opacus(x, y, args.batch, "hooks"),
        "opacus_ghost": lambda: time_opacus(x, y, args.batch, "ghost"),
    }
    if not args.skip_functorch:
        variants["dpsgd_f[functorch]"] = lambda: time_dpsgd_f(
            x, y, groups, args.batch, "functorch"
        )
    n_params = sum(p.numel() for p in paper_cnn(0).parameters())
    print(machine_line())
    print(
        f"paper MNIST CNN ({n_params:,} parameters), batch {args.batch}, "
        f"{args.steps} steps per epoch, {torch.get_num_threads()} thread(s)"
    )
    for fn in variants.values():  # warm-up (imports, allocator, first-call costs)
        fn()
    best = dict.fromkeys(variants, float("inf"))
    for _ in range(args.repeats):
        for name, fn in variants.items():
            best[name] = min(best[name], fn())
    rate = {name: n / t for name, t in best.items()}
    for name, r in rate.items():
        ms = 1e3 * best[name] / args.steps
        print(f"  {name:20s} {r:8.0f} examples/s  ({ms:7.1f} ms/step)")
    for name in variants:
        if name != "sgd":
            print(f"  {name} / sgd = {rate[name] / rate['sgd']:.3f}")
    vs_sgd = rate["dpsgd_f[bookkeeping]"] / rate["sgd"]
    vs_opacus = rate["dpsgd_f[bookkeeping]"] / rate["opacus_dpsgd"]
    print(f"ratio dpsgd_f_vs_sgd={vs_sgd:.3f} dpsgd_f_vs_opacus_dpsgd={vs_opacus:.3f}")
    print(f"after: {machine_line()}")
    if args.profile:
        profile_steps(
            variants, ["sgd", "dpsgd_f[bookkeeping]"], args.steps, args.repeats
        )


if __name__ == "__main__":
    main()
