"""Experiments of the DPSGD-F chapters: Xu, Du, Wu (KDD 2021), section 6.

Three registered experiments, each a grid of training runs:

- ``dpsgdf_main`` (Tables 1-2, Figures 1-2): SGD, DPSGD, Naive and DPSGD-F on
  unbalanced MNIST, Adult and Dutch; on Adult and Dutch also DPSGD with the bound
  ``2 C_0`` (method ``dpsgd_2c0``), the bound DPSGD-F gives a group clipped at the
  average rate, to separate DPSGD-F's per-group bounds from its larger bound (MNIST
  has that comparison in ``dpsgdf_clip``).
- ``dpsgdf_clip`` (Table 3): DPSGD on MNIST with a larger clipping bound
  ``C in {1, ..., 5}`` against DPSGD-F with ``C_0 = 1``.
- ``dpsgdf_budget`` (Figure 3): per-group accuracy as epsilon grows, (a) through the
  epochs of one run (test accuracy after every epoch) and (b) through the noise
  multiplier at the paper's number of epochs.

Settings (:data:`PAPER_SETTINGS`). MNIST: learning rate 0.01, expected batch 256,
60 epochs, ``sigma_2 = 0.8``, ``C_0 = 1``; Adult and Dutch: learning rate
``1/sqrt(T)`` (``T`` the number of steps of the run), batch 256, 20 epochs,
``sigma_2 = 1``, ``C_0 = 0.5``; everywhere ``delta = 1e-6`` and the count noise
``sigma_1 = 10 sigma_2``. An epoch is ``n // 256`` steps.

Sampling. The runs use Poisson sampling (each example joins a batch independently with
rate ``q = 256 / n``), for which the RDP accountant is exact. The paper describes
fixed-size batches and reports the epsilons of Poisson sampling; fixed-size batches
remain available (``sampling="shuffle"``), without that guarantee.

Budget rule. As in the paper, Naive and DPSGD-F are compared with DPSGD at the same
budget: their ``target_epsilon`` is DPSGD's epsilon for the full run
(:func:`dpsgd_budget`, computed from the settings, not from a DPSGD run). Their
count releases, on the same batches as the gradients, are accounted jointly with them
(:func:`dpnotes.accounting.joint_noise_multiplier`) and cost about 1% of epsilon, so
they stop shortly before the last epoch ends.
Epsilons are reported with the improved RDP conversion (what the runs stop on) and
with the classic one (``epsilon_classic``), which reproduces the paper's numbers
(6.55, 3.1, 2.66 for MNIST, Adult, Dutch); see
:func:`dpnotes.dpsgd.rules.dpsgd_epsilon`.

Seeds. A cell's ``seed`` fixes three streams, spawned from
``SeedSequence([2021, seed, index of the data set])``: the data (the MNIST minority
subset or the census train/test split, and the smoke profile's row subsample), the
initial model, and the training (Poisson batches, count noise, gradient noise). They
do not depend on the method, so every method of one seed trains on the same split,
from the same initial weights, on the same batches with the same standardised noise
(common random numbers): the cost of privacy ``Delta_k`` = private accuracy minus
SGD accuracy is a paired difference within a seed. The runner's root seed does not
enter these experiments.

Result tables (long format). Columns: the cell's keys (``dataset``, ``method``,
``seed``; ``clip_norm`` in ``dpsgdf_clip``; ``vary`` and ``noise_multiplier`` in
``dpsgdf_budget``), then ``metric``, ``group``, ``epoch``, ``value``. ``group`` is a
group name (``"male"``, ``"female"``; ``"digit 0"`` .. ``"digit 9"`` for MNIST) or
``"all"``. Metrics are listed in :data:`METRICS`; "final" ones carry the last epoch of
the run in ``epoch``.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dpnotes.lab.registry import Cache, Profile, register

if TYPE_CHECKING:  # the records' module imports no torch, the rule's does
    from dpnotes.dpsgd.rules import DPSGDFRule
    from dpnotes.dpsgd.settings import Privacy, Schedule

__all__ = [
    "DATASET_FILES",
    "DOUBLE_CLIP",
    "METHODS",
    "METRICS",
    "PAPER_SETTINGS",
    "RUN_OPTIONS",
    "STEP_RULES",
    "dpsgd_budget",
    "group_gradient_diagnostics",
    "load_cell_data",
    "planned_steps",
    "seed_streams",
    "train_and_evaluate",
]

#: The methods of the paper's tables and figures, in their order.
METHODS: tuple[str, ...] = ("sgd", "dpsgd", "naive", "dpsgd_f")
_DATASETS: tuple[str, ...] = ("mnist", "adult", "dutch")

#: The paper's training settings per data set (section 6).
PAPER_SETTINGS: dict[str, dict[str, Any]] = {
    "mnist": {
        "lr": 0.01,
        "batch_size": 256,
        "epochs": 60,
        "noise_multiplier": 0.8,
        "clip_norm": 1.0,
        "delta": 1e-6,
    },
    "adult": {
        "lr": "1/sqrt(T)",
        "batch_size": 256,
        "epochs": 20,
        "noise_multiplier": 1.0,
        "clip_norm": 0.5,
        "delta": 1e-6,
    },
    "dutch": {
        "lr": "1/sqrt(T)",
        "batch_size": 256,
        "epochs": 20,
        "noise_multiplier": 1.0,
        "clip_norm": 0.5,
        "delta": 1e-6,
    },
}

#: The data files each data set reads (relative to the data root; for provenance).
DATASET_FILES: dict[str, tuple[str, ...]] = {
    "mnist": (
        "mnist/train-images-idx3-ubyte.gz",
        "mnist/train-labels-idx1-ubyte.gz",
        "mnist/t10k-images-idx3-ubyte.gz",
        "mnist/t10k-labels-idx1-ubyte.gz",
    ),
    "adult": ("adult/adult.data", "adult/adult.test"),
    "dutch": ("dutch/dutch_census_2001.arff",),
}

#: The options a data set's settings may carry beyond :data:`PAPER_SETTINGS`
#: (absent: the paper's text and the package's default encoding): ``momentum``
#: (heavy-ball, after the noise), ``normalize`` (MNIST pixels standardised by public
#: constants), ``step_rule`` (:data:`STEP_RULES`), ``encoding`` (of the census
#: sets: :data:`dpnotes.data.blocks.ENCODINGS`), ``rule`` (DPSGD-F's bound rule
#: read another way: the switches of :class:`dpnotes.dpsgd.rules.DPSGDFRule` as a
#: dict; the run then takes DPSGD's steps, with no budget stop, and logs its bounds),
#: ``count_noise_factor`` (sigma_1 / sigma_2, instead of the profile's) and
#: ``sampling`` (instead of the profile's).
RUN_OPTIONS: tuple[str, ...] = (
    "momentum",
    "normalize",
    "step_rule",
    "encoding",
    "rule",
    "count_noise_factor",
    "sampling",
)

#: The metrics of the result tables: name -> (group, when, meaning).
METRICS: dict[str, str] = {
    "accuracy": "per group and 'all'; final (dpsgdf_main, dpsgdf_clip, and the "
    "sigma sweep of dpsgdf_budget) or after every epoch (the epochs sweep of "
    "dpsgdf_budget): test accuracy",
    "train_loss": "per group, every epoch: mean per-sample training loss over the "
    "epoch's batches (before each step's update)",
    "grad_norm": "per group, every epoch: mean unclipped per-sample gradient norm",
    "clip_bound": "per group, every epoch, private methods: mean over the epoch's "
    "steps of the clipping bound (C_k for DPSGD-F, C_0 for DPSGD and Naive)",
    "clip_fraction": "per group, every epoch, private methods: share of the group's "
    "drawn examples whose gradient norm exceeded the bound it was clipped to",
    "group_weight": "per group, every epoch, Naive only: mean theta_k",
    "epsilon": "'all', every epoch, private methods: epsilon spent so far "
    "(improved RDP conversion; counts and gradients of a step accounted jointly)",
    "epsilon_classic": "'all', every epoch, private methods: the same with the "
    "classic conversion (the paper's)",
    "steps": "'all', every epoch: steps taken so far",
    "target_epsilon": "'all', final, private methods: the budget (DPSGD's epsilon "
    "for the full run)",
    "group_epsilon": "per group, final, private methods: the paper's per-group "
    "statement (C_k / max C) * epsilon (not a DP guarantee)",
    "stopped_early": "'all', final: 1 if the budget ended the run before its epochs",
    "wall_seconds": "'all', final: training and evaluation time of the run (of the "
    "cell that computed it, when the run cache gave it to several cells)",
    "n_train": "per group, final: training examples",
    "mean_grad_norm": "per group, final, where diagnosed: norm of the gradient of "
    "the group's mean training loss (the norm of its average per-sample gradient)",
    "full_loss": "per group, final, where diagnosed: mean training loss of the "
    "trained model over all of the group's training rows",
    "n_test": "per group, final: test examples",
    "sensitivity_ratio": "per group, every epoch, runs under a bound rule "
    "(settings['rule']): mean over the epoch's steps of C_k / max_j C_j",
    "step_share": "per group, every epoch, runs under a bound rule: mean over the "
    "epoch's steps of the group's share of the summed clipped norms",
    "largest_bound": "'all', every epoch, runs under a bound rule: the largest C_k "
    "any step of the epoch used",
}

_STREAM_ROOT = 2021


# --------------------------------------------------------------------------------------
# Pieces shared by the three experiments
# --------------------------------------------------------------------------------------


def seed_streams(dataset: str, seed: int) -> list[np.random.Generator]:
    """Return the data, model-initialisation and training streams of one seed.

    They depend on the data set and the seed only, never on the method, so that all
    methods of a seed share the split, the initial model and the batches.
    """
    index = _DATASETS.index(dataset)
    children = np.random.SeedSequence([_STREAM_ROOT, int(seed), index]).spawn(3)
    return [np.random.default_rng(c) for c in children]


@functools.lru_cache(maxsize=2)
def load_cell_data(
    dataset: str,
    seed: int,
    train_rows: int | None = None,
    test_rows: int | None = None,
    normalize: bool = False,
    encoding: str | None = None,
):
    """Return the :class:`~dpnotes.data.splits.GroupedSplit` of a data set and seed.

    The split (or the MNIST minority subset) is drawn from the seed's data stream;
    ``train_rows`` / ``test_rows`` keep a random subset of that many rows (smoke
    runs). ``normalize`` (MNIST only) standardises the pixels of both sides with the
    public constants :data:`dpnotes.data.mnist.MNIST_MEAN` and
    :data:`~dpnotes.data.mnist.MNIST_STD` (:func:`dpnotes.data.mnist.normalize`),
    as the reference code of the paper's MNIST setting does. ``encoding`` (census
    only; None: the loader's default) selects the census encoding
    (:data:`dpnotes.data.blocks.ENCODINGS`); it changes the columns, never the
    rows of the split. Cached: the methods of one seed run one after the other.
    """
    from dpnotes.data.dpsgdf import load_grouped_split
    from dpnotes.data.splits import GroupedSplit

    if normalize and dataset != "mnist":
        raise ValueError(
            f"normalize applies to MNIST's pixels only, not to {dataset!r}, whose "
            "features are already scaled by public bounds."
        )
    if encoding is not None and dataset == "mnist":
        raise ValueError("encoding applies to the census sets, not to MNIST.")
    data_rng = seed_streams(dataset, seed)[0]
    options = {} if encoding is None else {"encoding": encoding}
    split = load_grouped_split(dataset, rng=data_rng, **options)
    if normalize:
        from dpnotes.data.mnist import normalize as standardise

        split = dataclasses.replace(
            split,
            x_train=standardise(split.x_train),
            x_test=standardise(split.x_test),
        )
    if train_rows is None and test_rows is None:
        return split
    parts = {}
    for side, rows in (("train", train_rows), ("test", test_rows)):
        x, y, g = (getattr(split, f"{a}_{side}") for a in "xyg")
        if rows is not None and rows < len(y):
            keep = np.sort(data_rng.permutation(len(y))[:rows])
            x, y, g = x[keep], y[keep], g[keep]
        parts.update({f"x_{side}": x, f"y_{side}": y, f"g_{side}": g})
    return GroupedSplit(
        name=split.name,
        group_names=split.group_names,
        label_names=split.label_names,
        feature_names=split.feature_names,
        **parts,
    )


def _group_labels(split) -> list[str]:
    # MNIST's groups are the digits; a prefix keeps the group column a column of
    # strings when a large table is read back from CSV.
    if split.name == "mnist":
        return [f"digit {name}" for name in split.group_names]
    return list(split.group_names)


#: How a run's number of steps follows from its epochs: ``"floor"`` takes
#: ``epochs * (n // b)`` steps (an epoch is ``n // b`` steps; the paper's text),
#: ``"ceil"`` takes ``ceil(epochs * n / b)`` (the count behind the paper's
#: epsilons, from the reference code's accountant; the last epoch is partial).
STEP_RULES: tuple[str, ...] = ("floor", "ceil")


def planned_steps(settings: Mapping[str, Any], n_train: int) -> int:
    """Return the number of steps of a full run of ``settings`` on ``n_train`` rows.

    ``settings["step_rule"]`` (default ``"floor"``) is one of :data:`STEP_RULES`.
    """
    from dpnotes.validation import check_choice

    b, epochs = int(settings["batch_size"]), int(settings["epochs"])
    rule = check_choice(settings.get("step_rule", "floor"), STEP_RULES, "step_rule")
    if rule == "ceil":
        return -(-epochs * n_train // b)
    return epochs * (n_train // b)


def dpsgd_budget(settings: Mapping[str, Any], n_train: int) -> float:
    """Return DPSGD's epsilon for a full run: the budget of Naive and DPSGD-F.

    :func:`planned_steps` Poisson-subsampled Gaussian steps with rate
    ``batch_size / n_train`` and multiplier ``noise_multiplier``, improved RDP
    conversion.
    """
    from dpnotes.dpsgd.rules import dpsgd_epsilon

    b = int(settings["batch_size"])
    return dpsgd_epsilon(
        method="dpsgd",
        sample_rate=b / n_train,
        noise_multiplier=float(settings["noise_multiplier"]),
        steps=planned_steps(settings, n_train),
        delta=float(settings["delta"]),
    )


def _device(config: Mapping[str, Any]) -> str:
    import torch

    if config.device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return str(config.device)


def _accuracies(model, split) -> tuple[np.ndarray, float]:
    from dpnotes.dpsgd.evaluate import accuracies

    acc = accuracies(
        model, split.x_test, split.y_test, split.g_test, num_groups=split.n_groups
    )
    return acc.by_group, acc.overall


def run_key(
    config: TrainingProfile,
    *,
    dataset: str,
    method: str,
    seed: int,
    settings: Mapping[str, Any],
) -> dict[str, Any]:
    """Return everything one training run depends on, for the run cache.

    Two cells with equal keys are the same computation: the same data, streams,
    method, hyperparameters and code. SGD ignores the noise and clipping settings,
    and only Naive and DPSGD-F release counts, so those enter only where they are
    used; the device enters because CPU and GPU arithmetic differ. The code (this
    module and what it imports) is added by the cache (``code=`` of
    :meth:`~dpnotes.lab.registry.Cache.table`).
    """
    private = method != "sgd"
    keys = ("lr", "batch_size", "epochs", "delta")
    keys += ("noise_multiplier", "clip_norm") if private else ()
    # The options enter only when set, so that the keys of runs made before they
    # existed (plain SGD, pixels in [0, 1], floor steps, full encoding) are unchanged.
    keys += tuple(k for k in RUN_OPTIONS if k in settings)
    return {
        "dataset": dataset,
        "method": method,
        "seed": int(seed),
        "settings": {k: settings[k] for k in keys},
        "count_noise_factor": (
            _count_noise_factor(config, settings)
            if method in ("naive", "dpsgd_f")
            else None
        ),
        "sampling": config.sampling,
        "train_rows": config.train_rows,
        "test_rows": config.test_rows,
        "device": _device(config),
    }


def train_and_evaluate(
    config: TrainingProfile,
    *,
    dataset: str,
    method: str,
    seed: int,
    settings: Mapping[str, Any],
    every_epoch: bool = False,
    cache: Cache | None = None,
    progress: bool = False,
    diagnose: bool = False,
) -> pd.DataFrame:
    """Train one model and return its tidy rows (``metric, group, epoch, value``).

    The test accuracy is measured after every epoch (evaluation on held-out data;
    it does not touch the training), and the run goes through the run cache
    (``cache``, key ``run_key(...)``): the
    DPSGD run of Table 1 is also Table 3's ``C = 1`` row and a run of both sweeps of
    Figure 3, and is trained once. ``every_epoch=False`` keeps the last epoch's
    accuracy only; the rows are those of a run that evaluated at the end alone.

    Args:
        config: The profile (``train_rows``, ``test_rows``, ``sampling``,
            ``count_noise_factor``, ``device``).
        dataset: ``"mnist"``, ``"adult"`` or ``"dutch"``.
        method: ``"sgd"``, ``"dpsgd"``, ``"naive"`` or ``"dpsgd_f"``.
        seed: Selects the data, initialisation and training streams
            (:func:`seed_streams`).
        settings: ``lr``, ``batch_size``, ``epochs``, ``noise_multiplier``,
            ``clip_norm``, ``delta``; optionally the options of
            :data:`RUN_OPTIONS`: ``momentum``, ``normalize``, ``step_rule``,
            ``encoding``.
        every_epoch: Return the test accuracy after every epoch (else at the end).
        cache: The run cache (:class:`~dpnotes.lab.registry.Cache`), or None to
            train every time.
        progress: Show a progress bar over the training steps.
        diagnose: Add the final ``mean_grad_norm`` and ``full_loss`` rows
            (:func:`group_gradient_diagnostics`).

    Returns:
        The rows; see :data:`METRICS`. ``wall_seconds`` is the time of the run that
        computed them, also when they come from the cache.
    """
    key = run_key(config, dataset=dataset, method=method, seed=seed, settings=settings)
    if diagnose:
        key["diagnose"] = True

    def compute() -> pd.DataFrame:
        return _train_and_evaluate(
            config,
            dataset=dataset,
            method=method,
            seed=seed,
            settings=settings,
            progress=progress,
            diagnose=diagnose,
        )

    # Through the CSV form either way, so cached and computed rows are equal.
    if cache is None:
        rows = compute()
    else:
        rows = cache.table("dpsgd_f", key, compute, code=(__name__,))
    if cache is None:
        text = rows.to_csv(index=False, float_format="%.10g", lineterminator="\n")
        rows = pd.read_csv(io.StringIO(text))
    if every_epoch:
        return rows
    accuracy = rows["metric"] == "accuracy"
    last = rows.loc[accuracy, "epoch"].max()
    return rows[~accuracy | (rows["epoch"] == last)].reset_index(drop=True)


def _count_noise_factor(config: TrainingProfile, settings: Mapping[str, Any]) -> float:
    # sigma_1 / sigma_2: the profile's, unless the run's settings name another.
    return float(settings.get("count_noise_factor", config.count_noise_factor))


def _train_and_evaluate(
    config: TrainingProfile,
    *,
    dataset: str,
    method: str,
    seed: int,
    settings: Mapping[str, Any],
    progress: bool = False,
    diagnose: bool = False,
) -> pd.DataFrame:
    """Train one run, test accuracy after every epoch: :func:`train_and_evaluate`."""
    from dpnotes.dpsgd.loop import train
    from dpnotes.dpsgd.models import paper_model
    from dpnotes.rng import torch_generator

    started = time.perf_counter()
    split = load_cell_data(
        dataset,
        int(seed),
        config.train_rows,
        config.test_rows,
        bool(settings.get("normalize", False)),
        settings.get("encoding"),
    )
    _, init_rng, train_rng = seed_streams(dataset, int(seed))
    names = _group_labels(split)
    n_train = len(split.y_train)
    private = method != "sgd"
    model = paper_model(
        dataset, n_features=split.n_features, generator=torch_generator(init_rng)
    )
    per_epoch: dict[int, tuple[np.ndarray, float]] = {}

    def record(epoch: int, net) -> None:
        per_epoch[epoch] = _accuracies(net, split)

    privacy, schedule, rule = training_records(
        config, settings, method=method, n_train=n_train
    )
    result = train(
        model,
        split.x_train,
        split.y_train,
        split.g_train,
        num_groups=split.n_groups,
        method=method,
        privacy=privacy,
        schedule=schedule,
        rule=rule,
        rng=train_rng,
        device=_device(config),
        progress=progress,
        on_epoch_end=record,
    )
    last = result.history[-1].epoch

    rows: list[tuple[str, str, int, float]] = []
    for epoch, (groups, overall) in sorted(per_epoch.items()):
        rows += [
            ("accuracy", g, epoch, float(v)) for g, v in zip(names, groups, strict=True)
        ]
        rows.append(("accuracy", "all", epoch, overall))
    for h in result.history:
        for k, g in enumerate(names):
            rows.append(("train_loss", g, h.epoch, h.group_loss[k]))
            rows.append(("grad_norm", g, h.epoch, h.group_grad_norm[k]))
            if h.clip_bounds is not None:
                rows.append(("clip_bound", g, h.epoch, h.clip_bounds[k]))
            if h.group_clip_fraction is not None:
                rows.append(("clip_fraction", g, h.epoch, h.group_clip_fraction[k]))
            if h.group_weights is not None:
                rows.append(("group_weight", g, h.epoch, h.group_weights[k]))
            if rule is not None:
                rows.append(("sensitivity_ratio", g, h.epoch, h.sensitivity_ratio[k]))
                rows.append(("step_share", g, h.epoch, h.step_share[k]))
        rows.append(("steps", "all", h.epoch, float(h.steps)))
        if rule is not None:
            rows.append(("largest_bound", "all", h.epoch, float(h.largest_bound)))
        if private and h.steps > 0:
            rows.append(("epsilon", "all", h.epoch, h.epsilon))
            rows.append(("epsilon_classic", "all", h.epoch, h.epsilon_classic))
    if private and rule is None:
        rows.append(("target_epsilon", "all", last, dpsgd_budget(settings, n_train)))
    if result.group_epsilon is not None:
        rows += [
            ("group_epsilon", g, last, float(e))
            for g, e in zip(names, result.group_epsilon, strict=True)
        ]
    rows.append(("stopped_early", "all", last, float(result.stopped_early)))
    if diagnose:
        diag = group_gradient_diagnostics(result.model, split)
        for metric, values in diag.items():
            rows += [
                (metric, g, last, float(v)) for g, v in zip(names, values, strict=True)
            ]
    for side in ("train", "test"):
        counts = np.bincount(getattr(split, f"g_{side}"), minlength=split.n_groups)
        rows += [
            (f"n_{side}", g, last, float(c)) for g, c in zip(names, counts, strict=True)
        ]
    rows.append(("wall_seconds", "all", last, time.perf_counter() - started))
    return pd.DataFrame(rows, columns=["metric", "group", "epoch", "value"])


def training_records(
    config: TrainingProfile,
    settings: Mapping[str, Any],
    *,
    method: str,
    n_train: int,
) -> tuple[Privacy | None, Schedule, DPSGDFRule | None]:
    """Return the records one run of a profile trains with: privacy, schedule, rule.

    The one place a profile's settings of a data set become what
    :func:`dpnotes.dpsgd.train` reads (:mod:`dpnotes.dpsgd.settings`): the noise
    multiplier, clip norm and delta as given; the counts' multiplier from the
    profile's ``count_noise_factor`` (or the run's own); Naive and DPSGD-F stop at
    DPSGD's epsilon for the same steps (:func:`dpsgd_budget`), except under a bound
    ``rule`` of the cause study, which runs DPSGD's steps whatever it spends.

    >>> from dpnotes.lab.registry import get_experiment
    >>> config = get_experiment("dpsgdf_reference").config("paper")
    >>> settings = config.datasets["mnist"]
    >>> privacy, schedule, rule = training_records(
    ...     config, settings, method="dpsgd", n_train=54649)
    >>> privacy.noise_multiplier, privacy.clip_norm, schedule.momentum, rule
    (0.8, 1.0, 0.5, None)
    """
    from dpnotes.dpsgd.rules import DPSGDFRule, step_noise_multipliers
    from dpnotes.dpsgd.settings import Privacy, Schedule

    # A bound rule (the cause study): DPSGD-F read another way, for DPSGD's steps.
    rule = DPSGDFRule(**settings["rule"]) if "rule" in settings else None
    schedule = Schedule(
        lr=settings["lr"],
        batch_size=int(settings["batch_size"]),
        **_length(settings, n_train),
        momentum=float(settings.get("momentum", 0.0)),
        sampling=settings.get("sampling", config.sampling),
    )
    if method == "sgd":
        return None, schedule, rule
    sigma = float(settings["noise_multiplier"])
    counted = method in ("naive", "dpsgd_f")
    privacy = Privacy(
        noise_multiplier=sigma,
        clip_norm=float(settings["clip_norm"]),
        count_noise_multiplier=(
            step_noise_multipliers(
                method,
                noise_multiplier=sigma,
                count_noise_factor=_count_noise_factor(config, settings),
            )[1]
            if counted
            else None
        ),
        delta=float(settings["delta"]),
        target_epsilon=(
            dpsgd_budget(settings, n_train) if counted and rule is None else None
        ),
    )
    return privacy, schedule, rule


def _length(settings: Mapping[str, Any], n_train: int) -> dict[str, int]:
    # The length of the run as train() takes it: epochs (floor rule, as before the
    # rule existed), or the number of steps.
    if settings.get("step_rule", "floor") == "floor":
        return {"epochs": int(settings["epochs"])}
    return {"steps": planned_steps(settings, n_train)}


def group_gradient_diagnostics(model, split) -> dict[str, np.ndarray]:
    """Return two per-group quantities of a trained model on its training rows.

    ``mean_grad_norm``: the norm of the gradient of the group's mean loss, i.e. of
    the group's *average* per-sample gradient, over all of the group's training
    rows; ``full_loss``: that mean loss. The per-epoch ``grad_norm`` rows are the
    other reading of "average gradient norm" (the mean of the per-sample norms,
    over the epoch's batches); by the triangle inequality it is at least
    ``mean_grad_norm``. Computed on private data, for diagnosis (not released).
    """
    import torch
    import torch.nn.functional as F

    param = next(model.parameters())
    was_training = model.training
    model.eval()
    params = [p for p in model.parameters() if p.requires_grad]
    norms, losses = [], []
    try:
        for k in range(split.n_groups):
            rows = np.flatnonzero(split.g_train == k)
            grads = [torch.zeros_like(p) for p in params]
            total = 0.0
            for start in range(0, len(rows), 4096):
                part = rows[start : start + 4096]
                x = torch.as_tensor(split.x_train[part], device=param.device)
                y = torch.as_tensor(split.y_train[part], device=param.device)
                with torch.enable_grad():
                    loss = F.cross_entropy(model(x), y, reduction="sum")
                    parts = torch.autograd.grad(loss, params)
                for g, p in zip(grads, parts, strict=True):
                    g += p
                total += float(loss.detach())
            sq = sum(float((g / len(rows)).double().pow(2).sum()) for g in grads)
            norms.append(math.sqrt(sq))
            losses.append(total / len(rows))
    finally:
        model.train(was_training)
    return {"mean_grad_norm": np.array(norms), "full_loss": np.array(losses)}


def _datasets_of(config: TrainingProfile) -> list[str]:
    return [f for d in config.datasets for f in DATASET_FILES[d]]


def _settings(config: TrainingProfile, dataset: str) -> dict[str, Any]:
    return dict(config.datasets[dataset])


@dataclass(frozen=True)
class TrainingProfile(Profile):
    """Settings every DPSGD-F experiment shares.

    Attributes:
        datasets: ``{dataset: settings}``, the training settings of each data set
            (``lr``, ``batch_size``, ``epochs``, ``noise_multiplier``, ``clip_norm``,
            ``delta``; :data:`PAPER_SETTINGS`).
        sampling: ``"poisson"`` (the paper shuffled and took fixed-size batches; see
            the module docstring) or ``"shuffle"``.
        count_noise_factor: sigma_1 / sigma_2 of the counts Naive and DPSGD-F release
            (:data:`dpnotes.dpsgd.rules.COUNT_NOISE_FACTOR`, written as a number so
            that loading the registry does not import torch).
        device: ``"cpu"``, or ``"auto"`` (CUDA when available).
        train_rows: Keep a random subset of this many training rows (None: all).
        test_rows: The same for the test rows.
    """

    datasets: Mapping[str, Mapping[str, Any]]
    sampling: str = "poisson"
    count_noise_factor: float = 10.0
    device: str = "cpu"
    train_rows: int | None = None
    test_rows: int | None = None


def _with_epochs(dataset: str, epochs: int) -> dict[str, Any]:
    return {**PAPER_SETTINGS[dataset], "epochs": epochs}


# --------------------------------------------------------------------------------------
# dpsgdf_main: Tables 1-2, Figures 1-2
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MainProfile(TrainingProfile):
    """Settings of ``dpsgdf_main``.

    Attributes:
        methods: The methods trained on every data set.
        seeds: ``{dataset: seeds}``.
        double_clip: Data sets that also train DPSGD at twice the bound
            (:data:`DOUBLE_CLIP`).
    """

    methods: tuple[str, ...] = tuple(METHODS)
    seeds: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    double_clip: tuple[str, ...] = ()


_MAIN_PROFILES = {
    "smoke": MainProfile(
        datasets={"adult": _with_epochs("adult", 1)},
        methods=("dpsgd", "dpsgd_f"),
        seeds={"adult": (0,)},
        train_rows=5000,
    ),
    # Adult and Dutch at the paper's settings; MNIST for 2 epochs only (the paper
    # trains 60), so its accuracies and epsilon are far from the paper's.
    "quick": MainProfile(
        datasets={
            "adult": dict(PAPER_SETTINGS["adult"]),
            "dutch": dict(PAPER_SETTINGS["dutch"]),
            "mnist": _with_epochs("mnist", 2),
        },
        double_clip=("adult", "dutch"),
        seeds={"adult": (0, 1, 2), "dutch": (0, 1, 2), "mnist": (0,)},
    ),
    "paper": MainProfile(
        datasets={d: dict(PAPER_SETTINGS[d]) for d in _DATASETS},
        device="auto",
        double_clip=("adult", "dutch"),
        seeds={d: (0, 1, 2, 3, 4) for d in _DATASETS},
    ),
}


#: The main grid's extra method: DPSGD with twice the base bound (``C = 2 C_0``).
DOUBLE_CLIP = "dpsgd_2c0"


def _main_grid(config: MainProfile) -> list[dict[str, Any]]:
    # Seeds vary slowest, so that a partial result holds whole seeds.
    seeds = sorted({s for d in config.datasets for s in config.seeds[d]})
    double = set(config.double_clip)
    return [
        {"dataset": d, "method": m, "seed": int(s)}
        for s in seeds
        for d in config.datasets
        if s in config.seeds[d]
        for m in [*config.methods, *([DOUBLE_CLIP] if d in double else [])]
    ]


@register(
    name="dpsgdf_main",
    title="SGD, DPSGD, Naive, DPSGD-F per group on MNIST, Adult, Dutch",
    profiles=_MAIN_PROFILES,
    grid=_main_grid,
    datasets=_datasets_of,
    figure="Table 1, Table 2, Figures 1-2 of the DPSGD-F paper (xu2021removing)",
)
def dpsgdf_main(
    config: TrainingProfile,
    cell: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    cache: Cache | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Train one method on one data set with one seed; final and per-epoch rows.

    The streams come from the cell's ``seed`` (:func:`seed_streams`), not from
    ``rng``, so that the methods of a seed are paired. Method :data:`DOUBLE_CLIP` is
    DPSGD with ``clip_norm`` doubled.
    """
    d = cell["dataset"]
    settings = _settings(config, d)
    method = cell["method"]
    if method == DOUBLE_CLIP:
        method = "dpsgd"
        settings["clip_norm"] = 2.0 * float(settings["clip_norm"])
    return train_and_evaluate(
        config,
        dataset=d,
        method=method,
        seed=cell["seed"],
        settings=settings,
        cache=cache,
        progress=progress,
    )


# --------------------------------------------------------------------------------------
# dpsgdf_clip: Table 3
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClipProfile(TrainingProfile):
    """Settings of ``dpsgdf_clip`` (MNIST only).

    Attributes:
        dpsgd_clip_norms: DPSGD's clipping bounds C; DPSGD-F runs at the data set's
            ``clip_norm`` (C_0).
        seeds: The seeds.
    """

    dpsgd_clip_norms: tuple[float, ...] = (1.0, 2.0, 3.0, 4.0, 5.0)
    seeds: tuple[int, ...] = (0,)


_CLIP_PROFILES = {
    "smoke": ClipProfile(
        datasets={"mnist": _with_epochs("mnist", 1)},
        dpsgd_clip_norms=(1.0, 2.0),
        train_rows=1024,
        test_rows=1000,
    ),
    # 2 epochs instead of the paper's 60 (about 25 s per epoch on one CPU thread).
    "quick": ClipProfile(datasets={"mnist": _with_epochs("mnist", 2)}),
    "paper": ClipProfile(
        datasets={"mnist": dict(PAPER_SETTINGS["mnist"])},
        device="auto",
        seeds=(0, 1, 2, 3, 4),
    ),
}


def _clip_grid(config: ClipProfile) -> list[dict[str, Any]]:
    base = float(config.datasets["mnist"]["clip_norm"])
    cells = []
    for s in config.seeds:
        cells += [
            {"dataset": "mnist", "method": "dpsgd", "clip_norm": float(c), "seed": s}
            for c in config.dpsgd_clip_norms
        ]
        cells.append(
            {"dataset": "mnist", "method": "dpsgd_f", "clip_norm": base, "seed": s}
        )
    return cells


@register(
    name="dpsgdf_clip",
    title="MNIST: DPSGD with a larger clipping bound C vs DPSGD-F (C_0 = 1)",
    profiles=_CLIP_PROFILES,
    grid=_clip_grid,
    datasets=_datasets_of,
    figure="Table 3 of the DPSGD-F paper (xu2021removing)",
)
def dpsgdf_clip(
    config: TrainingProfile,
    cell: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    cache: Cache | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Train DPSGD with bound ``clip_norm`` or DPSGD-F with ``C_0 = clip_norm``.

    Epsilon does not depend on the clipping bound, so every cell of a seed has the
    same budget; DPSGD-F's target is DPSGD's epsilon, as in ``dpsgdf_main``.
    """
    settings = {**_settings(config, "mnist"), "clip_norm": float(cell["clip_norm"])}
    return train_and_evaluate(
        config,
        dataset="mnist",
        method=cell["method"],
        seed=cell["seed"],
        settings=settings,
        cache=cache,
        progress=progress,
    )


# --------------------------------------------------------------------------------------
# dpsgdf_budget: Figure 3
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BudgetProfile(TrainingProfile):
    """Settings of ``dpsgdf_budget``.

    Attributes:
        noise_multipliers: ``{dataset: sigmas}`` of the sweep over sigma.
        methods: The methods trained.
        seeds: The seeds.
    """

    noise_multipliers: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    methods: tuple[str, ...] = ("sgd", "dpsgd", "dpsgd_f")
    seeds: tuple[int, ...] = (0,)


_SIGMAS = (0.6, 0.8, 1.0, 1.5, 2.0)
_BUDGET_PROFILES = {
    "smoke": BudgetProfile(
        datasets={"adult": _with_epochs("adult", 2)},
        noise_multipliers={"adult": (1.0, 2.0)},
        train_rows=5000,
    ),
    "quick": BudgetProfile(
        datasets={"adult": dict(PAPER_SETTINGS["adult"])},
        noise_multipliers={"adult": _SIGMAS},
        seeds=(0, 1),
    ),
    "paper": BudgetProfile(
        datasets={
            "mnist": dict(PAPER_SETTINGS["mnist"]),
            "adult": dict(PAPER_SETTINGS["adult"]),
        },
        noise_multipliers={"mnist": _SIGMAS, "adult": _SIGMAS},
        device="auto",
        seeds=(0, 1, 2, 3, 4),
    ),
}


def _budget_grid(config: BudgetProfile) -> list[dict[str, Any]]:
    cells = []
    for s in config.seeds:
        for d, settings in config.datasets.items():
            # (a) One run per method at the paper's sigma; accuracy after each epoch.
            for m in config.methods:
                sigma = None if m == "sgd" else float(settings["noise_multiplier"])
                cells.append(
                    {
                        "dataset": d,
                        "vary": "epochs",
                        "method": m,
                        "noise_multiplier": sigma,
                        "seed": s,
                    }
                )
            # (b) The private methods at each sigma, for the paper's epochs. SGD's
            # reference is the last epoch of its run in (a).
            for sigma in config.noise_multipliers[d]:
                for m in config.methods:
                    if m != "sgd":
                        cells.append(
                            {
                                "dataset": d,
                                "vary": "sigma",
                                "method": m,
                                "noise_multiplier": float(sigma),
                                "seed": s,
                            }
                        )
    return cells


@register(
    name="dpsgdf_budget",
    title="Per-group accuracy as epsilon grows, through epochs and through sigma",
    profiles=_BUDGET_PROFILES,
    grid=_budget_grid,
    datasets=_datasets_of,
    figure="Figure 3 of the DPSGD-F paper (xu2021removing)",
)
def dpsgdf_budget(
    config: TrainingProfile,
    cell: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    cache: Cache | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Train one method at one noise multiplier; accuracy per epoch or at the end.

    ``vary="epochs"``: the paper's settings, test accuracy after every epoch (with
    the epsilon spent by then in the ``epsilon`` rows of the same epoch).
    ``vary="sigma"``: ``noise_multiplier`` (and ``sigma_1 = 10 sigma_2``) replaced,
    final accuracy; DPSGD-F's budget is DPSGD's epsilon at the same sigma.
    """
    d = cell["dataset"]
    settings = _settings(config, d)
    if cell["noise_multiplier"] is not None and not (
        isinstance(cell["noise_multiplier"], float)
        and math.isnan(cell["noise_multiplier"])
    ):
        settings["noise_multiplier"] = float(cell["noise_multiplier"])
    return train_and_evaluate(
        config,
        dataset=d,
        method=cell["method"],
        seed=cell["seed"],
        settings=settings,
        every_epoch=cell["vary"] == "epochs",
        cache=cache,
        progress=progress,
    )
