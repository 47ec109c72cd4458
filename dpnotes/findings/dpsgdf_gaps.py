"""DPSGD-F's gaps (gaps.md): the reference loop, the census encodings, Table 2's norms.

The chapter ``book/dpsgd/gaps.md`` (with its pages ``gaps_costs.md`` and
``gaps_census.md``) reruns the paper of xu2021removing with the settings its text leaves
out. Every table, verdict and number it states comes from the functions here, one per
section, each returning a frozen dataclass: the verdicts of its table
(:class:`~dpnotes.findings.verdict.Verdict`, rendered by the chapter with
:func:`~dpnotes.findings.verdict.verdict_columns` or
:func:`~dpnotes.findings.verdict.verdict_frame`), the table's note, and ``texts``: the
values the prose quotes, by their glue name. The measurements themselves are those of
:mod:`dpnotes.findings.dpsgdf`.

The runs come in one :class:`Runs` (:func:`runs_of`, or :func:`stored_runs` from the
stored results, as every page selects them): the text loop's MNIST runs of
``dpsgdf_main``, ``dpsgdf_budget`` and ``dpsgdf_clip``, the census runs of
``dpsgdf_census`` and the reference loop's ``dpsgdf_reference`` (None where it is not
stored: every section then says "not computed" instead of a number).
:func:`summary_texts` gives the chapter's summary the values it quotes from the
sections of its pages.

Plain post-processing of released results: no privacy budget is spent here.

References:
    xu2021removing: Tables 1-3 and Figures 1-3.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from dpnotes import paper_numbers, report
from dpnotes.data.mnist import MNIST_MEAN, MNIST_STD
from dpnotes.experiments.dpsgd_f import PAPER_SETTINGS, planned_steps
from dpnotes.experiments.dpsgdf_reference import REFERENCE_SETTINGS
from dpnotes.findings import dpsgdf as f
from dpnotes.findings.dpsgdf import LABEL, RELATIVE, TAU, TOLERANCE
from dpnotes.findings.dpsgdf_causes import CauseSection
from dpnotes.findings.verdict import Verdict, compare_value

__all__ = [
    "NOT_COMPUTED",
    "SEED",
    "SUMMARY_KEYS",
    "Ablation",
    "CensusEncodings",
    "Curves",
    "Figures",
    "QuickAblation",
    "Runs",
    "Setup",
    "Sweep",
    "Table1",
    "Table2",
    "Table3",
    "ablation",
    "census_encodings",
    "curves",
    "figures",
    "noise_sweeps",
    "quick_ablation",
    "reference_caption",
    "runs_of",
    "seeds_text",
    "setup",
    "stored_runs",
    "summary_texts",
    "table1",
    "table2",
    "table3",
]

#: What the prose shows for a number whose runs are not stored.
NOT_COMPUTED: str = "– (not computed)"
#: The seed of the chapter's single-seed views (sweeps, curves, ablation).
SEED: int = 0
_NBSP = "\u00a0"
_RUN_COLUMNS = ("method", "seed", "metric", "group", "epoch", "value")


def _require(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{what}: expected a DataFrame, got {type(frame).__name__}.")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{what}: the table has no column {', '.join(map(repr, missing))}; pass "
            "the result table as the experiment stores it."
        )


def _placeholders(keys: Sequence[str]) -> dict[str, str]:
    return dict.fromkeys(keys, NOT_COMPUTED)


def seeds_text(seeds: Sequence[int]) -> str:
    """List seeds as a note shows them: ``"0, 1, 2"``; ``"none"`` when empty.

    Examples:
        >>> seeds_text([2, 0, 1]), seeds_text([])
        ('0, 1, 2', 'none')
    """
    return ", ".join(str(int(s)) for s in sorted(seeds)) or "none"


# --------------------------------------------------------------------------- the runs


@dataclass(frozen=True)
class Runs:
    """The runs the chapter reads, selected once.

    Attributes:
        text: The text loop's MNIST runs (``dpsgdf_main``).
        text_sigma: The text loop's MNIST noise sweep (``dpsgdf_budget``, σ).
        text_clip: The text loop's MNIST clipping sweep (``dpsgdf_clip``).
        census: The census runs of ``dpsgdf_census`` (both encodings).
        reference: The whole table of ``dpsgdf_reference``, or None.
    """

    text: pd.DataFrame
    text_sigma: pd.DataFrame
    text_clip: pd.DataFrame
    census: pd.DataFrame
    reference: pd.DataFrame | None = None

    @property
    def ref_main(self) -> pd.DataFrame | None:
        """The reference loop's main runs (SGD, DPSGD, Naive, DPSGD-F), or None."""
        if self.reference is None:
            return None
        return self.reference[self.reference.part == "main"]

    def ref_part(self, *parts: str) -> pd.DataFrame:
        """The reference loop's runs of ``parts`` (it must be stored)."""
        if self.reference is None:
            raise ValueError("no run of the reference loop is stored.")
        return self.reference[self.reference.part.isin(parts)]


def runs_of(
    main: pd.DataFrame,
    budget: pd.DataFrame,
    clip: pd.DataFrame,
    census: pd.DataFrame,
    reference: pd.DataFrame | None,
) -> Runs:
    """Select the chapter's runs from the stored tables of the five experiments.

    Raises:
        ValueError: If a table lacks a column it needs or has no MNIST run.
    """
    for frame, name, extra in (
        (main, "dpsgdf_main", ("dataset",)),
        (budget, "dpsgdf_budget", ("dataset", "vary", "noise_multiplier")),
        (clip, "dpsgdf_clip", ("dataset", "clip_norm")),
        (census, "dpsgdf_census", ("dataset", "encoding")),
    ):
        _require(frame, (*_RUN_COLUMNS, *extra), f"runs_of ({name})")
    if reference is not None:
        _require(
            reference,
            (*_RUN_COLUMNS, "part", "momentum", "normalize", "clip_norm"),
            "runs_of (dpsgdf_reference)",
        )
    text = main[main.dataset == "mnist"]
    if text.empty:
        raise ValueError("runs_of (dpsgdf_main): no MNIST run.")
    return Runs(
        text=text,
        text_sigma=budget[(budget.dataset == "mnist") & (budget.vary == "sigma")],
        text_clip=clip[clip.dataset == "mnist"],
        census=census,
        reference=reference,
    )


def stored_runs(
    main: Any, budget: Any, clip: Any, census: Any, reference: Any | None
) -> Runs:
    """Select the chapter's runs from the stored results of the five experiments.

    Every page of the chapter loads the same results and selects its runs here, so
    that all of them read the same runs (:func:`runs_of` on the results' tables).

    Args:
        main: The text loop's ``dpsgdf_main`` (``.table``, as
            :func:`dpnotes.lab.load_per_dataset` returns it).
        budget: The text loop's ``dpsgdf_budget``, likewise.
        clip: The text loop's ``dpsgdf_clip``, likewise.
        census: The stored result of ``dpsgdf_census``.
        reference: The stored paper result of ``dpsgdf_reference`` (partial ones
            included), or None where none is stored.

    Returns:
        The :class:`Runs`.

    Raises:
        ValueError: As :func:`runs_of`: a table without a column it needs, or no
            MNIST run of ``dpsgdf_main``.
    """
    return runs_of(
        main.table,
        budget.table,
        clip.table,
        census.table,
        None if reference is None else reference.table,
    )


# ------------------------------------------------------------------ the two loops


@dataclass(frozen=True)
class Setup:
    """The two loops side by side.

    Attributes:
        table: Optimiser, pixels and steps under the text and the reference loop.
        steps: The steps of a full run, by loop (``"text"``, ``"reference"``).
        texts: ``n-mnist``, ``ref-steps``, ``ref-eps-classic``.
    """

    table: pd.DataFrame
    steps: Mapping[str, int]
    texts: Mapping[str, str]


def setup(runs: Runs) -> Setup:
    """Return the settings in which the loops differ, and the reference loop's ε."""
    n = f.training_size(runs.text)
    steps = {
        "text": planned_steps(PAPER_SETTINGS["mnist"], n),
        "reference": planned_steps(REFERENCE_SETTINGS, n),
    }
    text, ref = "the paper's text (text loop)", "the reference code (reference loop)"
    table = pd.DataFrame(
        [
            {
                "setting": "optimiser",
                text: "SGD, learning rate 0.01",
                ref: f"SGD with momentum {REFERENCE_SETTINGS['momentum']:g}, "
                "learning rate 0.01",
            },
            {
                "setting": "pixels",
                text: "in [0, 1]",
                ref: f"standardised: (x − {MNIST_MEAN}) / {MNIST_STD}",
            },
            {
                "setting": "steps",
                text: f"60 × ⌊n / 256⌋ = {steps['text']:,}",
                ref: f"⌈60 n / 256⌉ = {steps['reference']:,}",
            },
        ]
    )
    eps = NOT_COMPUTED
    if runs.ref_main is not None:
        d = runs.ref_main[runs.ref_main.method == "dpsgd"]
        values = f.final(d, "epsilon_classic")["value"]
        if values.empty:
            raise ValueError("setup: the reference loop has no DPSGD ε.")
        eps = f"ε{_NBSP}={_NBSP}{values.mean():.2f}"
    texts = {
        "n-mnist": f"{n:,}",
        "ref-steps": f"{steps['reference']:,}",
        "ref-eps-classic": eps,
    }
    return Setup(table=table, steps=steps, texts=texts)


def reference_caption(result: Any) -> str:
    """Say which of the reference loop's runs are computed, and where.

    Args:
        result: The stored result of ``dpsgdf_reference`` (``table``, ``meta``,
            ``partial``, ``cells_by_machine()``), or None.
    """
    if result is None:
        return (
            "No run of the reference loop is stored here: compute them with "
            "`python -m dpnotes run dpsgdf_reference --profile paper` (a GPU helps)."
        )
    table = result.table
    main = table[table.part == "main"]
    done = main.groupby(["method", "seed"]).size().index.tolist()
    machines = result.cells_by_machine()
    where = (
        f"on {next(iter(machines))}"
        if len(machines) == 1
        else "; ".join(f"{n} on {name}" for name, n in machines.items())
    )
    computed = (
        f"{len(result.meta['cells_done'])} are computed so far"
        if result.partial
        else "all are computed"
    )
    methods = ", ".join(
        f"{LABEL[m]} ({report.seeds_text(s for mm, s in done if mm == m)})"
        for m in ("sgd", "dpsgd", "naive", "dpsgd_f")
        if any(mm == m for mm, _ in done)
    )
    end = "; the tables show the others as not computed." if result.partial else "."
    return (
        f"Of the reference loop's {result.meta['cells']} runs, {computed} ({where}); "
        f"of the main runs, {methods}{end}"
    )


# ----------------------------------------------------------------- Table 1 (MNIST)


@dataclass(frozen=True)
class Table1:
    """The paper's MNIST Table 1 under both loops.

    Attributes:
        costs: ``{loop: verdicts}`` of SGD's accuracy and each method's Δ.
        costs_note: The costs table's note (seeds, interval).
        accuracy: ``{loop: verdicts}`` of each private method's accuracy beside the
            paper's implied one.
        accuracy_note: Its note.
        texts: The values the prose quotes.
    """

    costs: Mapping[str, list[Verdict]]
    costs_note: str
    accuracy: Mapping[str, list[Verdict]]
    accuracy_note: str
    texts: Mapping[str, str] = field(default_factory=dict)


def _count_text(rows: Sequence[Verdict]) -> str:
    return "{} of {}".format(*f.reproduced(rows))


def _sds(v: Verdict) -> str:
    """The paper's distance from our mean in our seeds' sds; "–" for one seed."""
    return "–" if not v.sd else f"{abs(f.sds_from_paper(v)):.1f}"


def _sd_text(v: Verdict) -> str:
    return "–" if v.sd is None else f"{v.sd:.3f}"


def _naive_texts(acc: Mapping[str, Verdict], ref_main: pd.DataFrame) -> dict[str, str]:
    naive = {g: acc[f"Naive, accuracy, {g}"] for g in ("total", "class 2", "class 8")}
    if naive["total"].mean is None:
        return {
            **{f"ref-naive-{g.replace(' ', '')}": NOT_COMPUTED for g in naive},
            **{f"paper-naive-{g.replace(' ', '')}": "–" for g in naive},
            "ref-naive-seeds": "no",
            **dict.fromkeys(("ref-naive-sds", "ref-naive-sd2", "ref-dpsgd-sd2"), "–"),
        }
    texts = {}
    for g, v in naive.items():
        texts[f"ref-naive-{g.replace(' ', '')}"] = f.mean_sd_text(
            v.ours.values, decimals=3
        )
        texts[f"paper-naive-{g.replace(' ', '')}"] = f"{v.paper:.3f}"
    pair = [naive[g] for g in ("class 2", "class 8")]
    sds = sorted(pair, key=lambda v: abs(f.sds_from_paper(v)) if v.sd else 0.0)
    texts["ref-naive-seeds"] = str(len(f.seeds_of(ref_main, "naive")))
    texts["ref-naive-sds"] = f"{_sds(sds[0])} and {_sds(sds[-1])}"
    texts["ref-naive-sd2"] = _sd_text(naive["class 2"])
    texts["ref-dpsgd-sd2"] = _sd_text(acc["DPSGD, accuracy, class 2"])
    return texts


def table1(runs: Runs) -> Table1:
    """Return the paper's MNIST Table 1 and its implied accuracies under both loops."""
    ref_main = runs.ref_main
    costs = {
        "text loop": f.table1_rows(runs.text),
        "reference loop": f.table1_rows(ref_main),
    }
    accuracy = {
        "text loop": f.implied_accuracy_rows(runs.text),
        "reference loop": f.implied_accuracy_rows(ref_main),
    }
    text_seeds = seeds_text(f.seeds_of(runs.text, "sgd"))
    ref_note = (
        "not computed."
        if ref_main is None
        else "the costs over the seeds with an SGD run "
        f"({seeds_text(f.seeds_of(ref_main, 'sgd'))}; no ± for one seed)."
    )
    costs_note = (
        "Ours: mean ± sd and the 95% interval that adds each group's binomial test "
        "error (from its n test records) to the seed spread. "
        f"Text loop: seeds {text_seeds}; reference loop: {ref_note}"
    )
    ref_seeds = (
        {}
        if ref_main is None
        else {
            m: f.seeds_of(ref_main, m)
            for m in ("dpsgd", "naive", "dpsgd_f")
            if f.seeds_of(ref_main, m)
        }
    )
    accuracy_note = (
        "The paper's accuracy: its SGD accuracy plus its Δ (Table 1). Ours: mean ± sd "
        f"over seeds {text_seeds} (text loop)"
        + (
            "; "
            + "; ".join(
                f"{LABEL[m]} seeds {seeds_text(s)}" for m, s in ref_seeds.items()
            )
            + " (reference loop)."
            if ref_seeds
            else "."
        )
    )
    texts = {
        "tolerance": f"{TOLERANCE:g}",
        "t1-text": _count_text(costs["text loop"]),
        "t1-reference": _count_text(costs["reference loop"]),
        "t1-reference-clause": "the reference loop"
        + (
            ""
            if all(v.outcome != "not comparable" for v in costs["reference loop"])
            else ", with the runs computed so far,"
        )
        + " "
        + _count_text(costs["reference loop"]),
    }
    t = {v.quantity: v for v in accuracy["text loop"]}
    texts["text-acc8-dpsgd"] = f"{t['DPSGD, accuracy, class 8'].mean:.3f}"
    texts["text-acc8-f"] = f"{t['DPSGD-F, accuracy, class 8'].mean:.3f}"
    keys = ("ref-acc8-dpsgd", "paper-acc8-dpsgd", "ref-acc8-f", "paper-acc8-f",
            "ref-dpsgd-8", "paper-dpsgd-8", "ref-acc8-sgd", "paper-acc8-sgd",
            "ref-d8-sds", "ref-closed", "ref-dpsgd-seeds")  # fmt: skip
    a = {v.quantity: v for v in accuracy["reference loop"]}
    if ref_main is None:
        texts.update(_placeholders(keys))
        texts.update(_naive_texts(a, ref_main))
        return Table1(costs, costs_note, accuracy, accuracy_note, texts)
    r = {v.quantity: v for v in costs["reference loop"]}
    d8, f8 = a["DPSGD, accuracy, class 8"], a["DPSGD-F, accuracy, class 8"]
    sgd8 = r["SGD, accuracy, class 8"]
    start = t["DPSGD, accuracy, class 8"].mean
    closed = f.share_closed(start=start, reached=d8.mean, target=d8.paper)
    texts.update(
        {
            "ref-acc8-dpsgd": f.mean_sd_text(d8.ours.values, decimals=3),
            "ref-dpsgd-seeds": report.plural(d8.n_seeds, "seed"),
            "paper-acc8-dpsgd": f"{d8.paper:.3f}",
            "ref-acc8-f": f.mean_sd_text(f8.ours.values, decimals=3),
            "paper-acc8-f": f"{f8.paper:.3f}",
            "ref-dpsgd-8": f"{r['DPSGD, Δ, class 8'].mean:+.3f}",
            "paper-dpsgd-8": f"{r['DPSGD, Δ, class 8'].paper:+.4f}",
            "ref-acc8-sgd": f"{sgd8.mean:.3f}",
            "paper-acc8-sgd": f"{sgd8.paper:.3f}",
            "ref-d8-sds": _sds(d8),
            "ref-closed": f"{closed:.0%}",
        }
    )
    texts.update(_naive_texts(a, ref_main))
    return Table1(costs, costs_note, accuracy, accuracy_note, texts)


# ------------------------------------------------------ Figures 1-3 (reference loop)


@dataclass(frozen=True)
class Figures:
    """DPSGD-F's Figures 1, 2 and 3a claims under the reference loop.

    Attributes:
        verdicts: One verdict per figure (``FigureChecks.rows()``).
        note: The table's note (seeds, how costs are taken per epoch).
        checks: The measurements, or None without reference runs.
        texts: ``fig1-gap``, ``fig2-ck``, ``fig3a-gap``, ``fig3a-times``.
    """

    verdicts: list[Verdict]
    note: str
    checks: f.FigureChecks | None
    texts: Mapping[str, str]


_FIGURES = (
    ("largest gap between the ten digits' costs (Figure 1)", TAU),
    ("largest Cₖ/C₀ (Figure 2)", 3.0),
    ("|Δ(class 8) − Δ(class 2)| at its last whole epoch (Figure 3a)", TAU),
)


def figures(runs: Runs) -> Figures:
    """Measure the paper's Figures 1, 2 and 3a on the reference loop's main runs."""
    keys = ("fig1-gap", "fig2-ck", "fig3a-gap", "fig3a-times")
    if runs.ref_main is None:
        verdicts = [
            compare_value(f"DPSGD-F: {what}", paper, None, missing=f.NOT_RUN)
            for what, paper in _FIGURES
        ]
        return Figures(verdicts, "Not computed yet.", None, _placeholders(keys))
    checks = f.figure_checks(
        runs.ref_main, clip_norm=PAPER_SETTINGS["mnist"]["clip_norm"]
    )
    verdicts = list(checks.rows())
    note = (
        f"Seeds with an SGD run: {seeds_text(checks.seeds)} (Figures 1 and 3a); "
        f"Figure 2 over seeds {seeds_text(checks.largest_bound.index)}. Costs at "
        "each epoch are against SGD's accuracy at the same epoch, as when training for "
        "that many epochs (the learning rate is constant), at each whole epoch: "
        f"DPSGD-F's runs stop during epoch {checks.last_epoch + 1}, where their joint "
        "accounting reaches the budget, before the reference loop's last steps."
    )
    by = {v.quantity.split("(")[-1].rstrip(")"): v for v in verdicts}
    texts = {
        "fig1-gap": f"{by['Figure 1'].mean:.2f}",
        "fig2-ck": report.mean_sd(by["Figure 2"].mean, by["Figure 2"].sd, decimals=2),
        "fig3a-gap": f"{by['Figure 3a'].mean:.2f}",
        "fig3a-times": f"{by['Figure 3a'].mean / TAU:.0f}",
    }
    return Figures(verdicts, note, checks, texts)


# ------------------------------------------------------------ Figure 3b, the sweeps


@dataclass(frozen=True)
class Sweep:
    """DPSGD-F's costs on digits 2 and 8 over the noise sweep, under both loops.

    Attributes:
        sweeps: ``{loop: noise_sweep}`` (:func:`dpnotes.findings.dpsgdf.noise_sweep`)
            of the loops with runs at several σ.
        columns: ``{"<loop> loop": [Figure 3b verdict]}``.
        note: The σ of each loop.
        texts: The values the prose quotes (``sweep-*``).
    """

    sweeps: Mapping[str, pd.DataFrame]
    columns: Mapping[str, list[Verdict]]
    note: str
    texts: Mapping[str, str]


_SWEEP_KEYS = ("sweep-ref-gap", "sweep-ref-eps", "sweep-ref-times", "sweep-ref-ends",
               "sweep-ref-dpsgd-f8", "sweep-match-eps", "sweep-match-eps-epochs",
               "sweep-match-sigma", "sweep-match-epoch", "sweep-match-noise-gap",
               "sweep-match-epoch-gap", "sweep-eps-first-epoch")  # fmt: skip


def _range(values: pd.Series, sep: str = "–", decimals: int = 2) -> str:
    return f"{values.min():.{decimals}f}{sep}{values.max():.{decimals}f}"


def noise_sweeps(
    runs: Runs, checks: f.FigureChecks | None, *, seed: int = SEED
) -> Sweep:
    """Return both loops' noise sweeps of one seed and Figure 3b's verdicts.

    Args:
        runs: The chapter's runs.
        checks: The reference loop's :class:`Figures` measurements (their per-epoch
            gaps match more noise with fewer epochs), or None.
        seed: The seed.
    """
    sweeps = {"text": f.noise_sweep(runs.text_sigma, runs.text, seed=seed)}
    if runs.reference is not None:
        ref_sweep = f.noise_sweep(
            runs.ref_part("main", "sigma"), runs.ref_main, seed=seed
        )
        if len(ref_sweep) > 1:
            sweeps["reference"] = ref_sweep
    # The sweep holds costs: the test error of digits 2 and 8 bounds theirs.
    n_test = {
        "text": f.group_test_counts(runs.text),
        "reference": None
        if runs.ref_main is None
        else f.group_test_counts(runs.ref_main),
    }
    columns = {
        f"{loop} loop": [f.figure3b_row(sweeps.get(loop), n_test=n_test[loop])]
        for loop in ("text", "reference")
    }
    note = (
        "; ".join(
            f"{loop.capitalize()} loop: σ = "
            + ", ".join(f"{v:g}" for v in sorted(s["σ"]))
            for loop, s in sweeps.items()
        )
        + (
            ""
            if "reference" in sweeps
            else "; reference loop: its `sigma` runs are not computed yet"
        )
        + "."
    )
    texts = {"sweep-seed": f"{seed}", "sweep-text-gap": _range(sweeps["text"].gap)}
    whole = "reference" in sweeps and len(sweeps["reference"]) == len(sweeps["text"])
    if not whole or checks is None:
        return Sweep(sweeps, columns, note, {**texts, **_placeholders(_SWEEP_KEYS)})
    rs = sweeps["reference"].set_index("σ").sort_index()
    m = f.noise_or_epochs(
        sweeps["reference"],
        runs.ref_main,
        checks.epoch_gap[seed],
        seed=seed,
        noise_multiplier=PAPER_SETTINGS["mnist"]["noise_multiplier"],
    )
    texts.update(
        {
            "sweep-ref-gap": _range(rs.gap),
            "sweep-ref-eps": _range(rs["ε"], " to ", 1),
            "sweep-ref-times": f"{rs.gap.min() / TAU:.0f}",
            "sweep-ref-ends": f"{rs.gap.iloc[0]:.2f} at σ = {rs.index[0]:g} and "
            f"{rs.gap.iloc[-1]:.2f} at σ = {rs.index[-1]:g}",
            "sweep-ref-dpsgd-f8": _range(-rs["digit 8"], " to "),
            "sweep-match-eps": f"{m.epsilon_noise:.1f}",
            "sweep-match-eps-epochs": f"{m.epsilon_epochs:.1f}",
            "sweep-match-sigma": f"{m.sigma:g}",
            "sweep-match-epoch": f"{m.epoch}",
            "sweep-match-noise-gap": f"{m.gap_noise:.2f}",
            "sweep-match-epoch-gap": f"{m.gap_epochs:.2f}",
            "sweep-eps-first-epoch": f"{m.epsilon_first_epoch:.1f}",
        }
    )
    return Sweep(sweeps, columns, note, texts)


# ------------------------------------------------------------------------- Table 3


@dataclass(frozen=True)
class Table3:
    """The paper's Table 3 (DPSGD with larger bounds) under both loops.

    Attributes:
        columns: ``{loop: verdicts}`` of every row and group's Δ.
        note: The seeds of each loop and bound.
        texts: The values the prose quotes (``t3-*``).
    """

    columns: Mapping[str, list[Verdict]]
    note: str
    texts: Mapping[str, str]


_T3_KEYS = ("t3-ref-short-1", "t3-ref-short", "t3-ref-short-sds", "t3-ref-c8",
            "t3-paper-c8", "t3-ref-gaps", "t3-ref-gap-f", "t3-paper-gap-f",
            "t3-paper-gap-5", "t3-ref-below")  # fmt: skip


def table3(runs: Runs) -> Table3:
    """Return the paper's Table 3 beside both loops, and the reading of the reference's.

    The reference loop's DPSGD at C = 1 and DPSGD-F at C₀ = 1 are its main runs; its
    clipping sweep (part ``clip``) has C = 2..5.
    """
    ref_main = runs.ref_main
    ref_clip = None if ref_main is None else runs.ref_part("main", "clip")
    columns = {
        "text loop": f.table3_rows(runs.text_clip, runs.text),
        "reference loop": f.table3_rows(ref_clip, ref_main),
    }
    bounds = "C = 2..5: not computed yet"
    if ref_clip is not None:
        acc = f.final(
            ref_clip[(ref_clip.method == "dpsgd") & (ref_clip.clip_norm > 1)],
            "accuracy",
        )
        bounds = (
            "; ".join(
                f"C = {cn:g}: seed{'s' if g.seed.nunique() > 1 else ''} "
                f"{seeds_text(g.seed.unique())}"
                for cn, g in acc.groupby("clip_norm")
            )
            or bounds
        )
    note = (
        "Mean ± sd over seeds; the text loop's runs are those of the previous chapter "
        f"(seeds {seeds_text(runs.text_clip.seed.unique())}). Reference loop, C = 1 "
        "and DPSGD-F: seeds "
        + (
            seeds_text(f.seeds_of(ref_main, "dpsgd"))
            if ref_main is not None
            else "none"
        )
        + f"; {bounds}."
    )
    texts = {
        f"t3-{loop.split()[0]}": _count_text(rows) for loop, rows in columns.items()
    }
    try:
        t3r = f.table3_reading(columns["reference loop"], ref_clip, ref_main)
    except (ValueError, TypeError, KeyError):  # fewer than two bounds computed
        return Table3(columns, note, {**texts, **_placeholders(_T3_KEYS)})
    short = list(t3r.shortfall.values())
    c8 = {cn: t3r.rows[cn]["class 8"] for cn in t3r.bounds}
    lo, hi = t3r.bounds[0], t3r.bounds[-1]
    paper5 = paper_numbers.DPSGDF_TABLE3[("dpsgd", 5.0)]
    texts.update(
        {
            "t3-ref-short-1": f"{short[0]:.2f}",
            "t3-ref-short": f"{min(short[1:]):.2f}–{max(short[1:]):.2f}",
            "t3-ref-short-sds": f"{min(t3r.shortfall_sds.values()):.1f}"
            if t3r.shortfall_sds
            else "–",
            "t3-ref-c8": f"{c8[lo].mean:.2f} at C{_NBSP}={_NBSP}{lo:g} to "
            f"{c8[hi].mean:.2f} at C{_NBSP}={_NBSP}{hi:g}",
            "t3-paper-c8": f"{c8[lo].paper:.2f} to {c8[hi].paper:.2f}",
            "t3-ref-gaps": ", ".join(
                f"{f.mean_sd_text(g)} at C{_NBSP}={_NBSP}{cn:g}"
                for cn, g in t3r.gaps.items()
            ),
            "t3-ref-gap-f": f.mean_sd_text(t3r.gap_f),
            "t3-paper-gap-f": f"{t3r.paper_gap_f:.2f}",
            "t3-paper-gap-5": f"{abs(paper5[2] - paper5[1]):.2f}",
            "t3-ref-below": f"C{_NBSP}={_NBSP}{t3r.as_equal[0]:g}"
            if t3r.as_equal
            else "–",
        }
    )
    return Table3(columns, note, texts)


# ------------------------------------------------ the curves and the ablation


@dataclass(frozen=True)
class Curves:
    """DPSGD-F's bounds and losses of digits 2 and 8 per epoch, under each loop.

    Attributes:
        bound: ``{loop: mean C_k / C_0 per epoch}``, one column per digit.
        loss: ``{loop: mean training loss per epoch}``.
        texts: ``ck8-*`` and ``loss8-*``: digit 8's at the last epoch.
    """

    bound: Mapping[str, pd.DataFrame]
    loss: Mapping[str, pd.DataFrame]
    texts: Mapping[str, str]


def curves(
    runs: Runs, *, groups: Sequence[str] = ("digit 2", "digit 8"), seed: int = SEED
) -> Curves:
    """Return DPSGD-F's per-epoch bounds (in units of C₀) and losses of one seed."""
    sources = {"text": runs.text}
    if runs.ref_main is not None:
        sources["reference"] = runs.ref_main
    c0 = PAPER_SETTINGS["mnist"]["clip_norm"]
    bound = {
        loop: f.epoch_curves(d, "clip_bound", groups=list(groups), seed=seed) / c0
        for loop, d in sources.items()
    }
    loss = {
        loop: f.epoch_curves(d, "train_loss", groups=list(groups), seed=seed)
        for loop, d in sources.items()
    }
    texts = _placeholders(("ck8-ref", "loss8-ref"))
    for loop, short in (("text", "text"), ("reference", "ref")):
        if loop in sources:
            texts[f"ck8-{short}"] = f"{bound[loop]['digit 8'].iloc[-1]:.2f}"
            texts[f"loss8-{short}"] = f"{loss[loop]['digit 8'].iloc[-1]:.2f}"
    return Curves(bound, loss, texts)


@dataclass(frozen=True)
class Ablation:
    """The reference loop's settings one at a time, after all its epochs (one seed).

    Attributes:
        table: One row per method and setting: losses and accuracies.
        note: What the runs are and which stand in or are missing.
        texts: ``abl60-*`` (DPSGD's digit 8) and ``abl60f-*`` (DPSGD-F's), with
            ``abl60f-gain`` (both settings' gain) and ``abl60f-sum`` (the two single
            gains added).
    """

    table: pd.DataFrame
    note: str
    texts: Mapping[str, str]


_SETTING_KEYS = ("neither", "momentum", "pixels", "both")


def ablation(runs: Runs, steps: Mapping[str, int], *, seed: int = SEED) -> Ablation:
    """Gather the ablation after 60 epochs (:func:`dpnotes.findings.dpsgdf.ablation`).

    Args:
        runs: The chapter's runs.
        steps: The steps of a full run by loop (:attr:`Setup.steps`).
        seed: The seed.
    """
    empty = {
        **_placeholders([f"abl60-{k}" for k in _SETTING_KEYS]),
        **_placeholders([f"abl60f-{k}" for k in (*_SETTING_KEYS, "sum", "gain")]),
    }
    if runs.reference is None:
        columns = ["method", "setting", "accuracy, all", "accuracy, digit 8"]
        return Ablation(pd.DataFrame(columns=columns), "Not computed yet.", empty)
    abl = f.ablation(runs.reference, runs.text, seed=seed)
    note = "Seed 0, after 60 epochs: mean training loss over the batches of the last "
    note += "whole epoch, and test accuracy at the end."
    if abl.stand_in:
        note += (
            f" For *neither* with {' and '.join(LABEL[m] for m in abl.stand_in)}, the "
            "text loop's run stands in: the same seed, batches and noise, "
            f"{steps['reference'] - steps['text']} steps fewer ({steps['text']:,})."
        )
    if abl.missing:
        note += f" Not computed yet: {', '.join(abl.missing)}."
    texts = dict(empty)
    for method, prefix in (("dpsgd", "abl60"), ("dpsgd_f", "abl60f")):
        digit8 = abl.digit8(method)
        if len(digit8) == len(_SETTING_KEYS):
            for key, value in zip(_SETTING_KEYS, digit8, strict=True):
                texts[f"{prefix}-{key}"] = f"{value:.3f}"
    f8 = abl.digit8("dpsgd_f")
    if len(f8) == len(_SETTING_KEYS):
        neither, momentum, pixels, both = f8
        texts["abl60f-sum"] = f"{(momentum - neither) + (pixels - neither):.3f}"
        texts["abl60f-gain"] = f"{both - neither:.3f}"
    return Ablation(abl.table(), note, texts)


@dataclass(frozen=True)
class QuickAblation:
    """The ablation's first epochs (the quick profile, on one CPU).

    Attributes:
        table: One row per method and setting after :attr:`epochs` epochs.
        epochs: The profile's whole epochs.
        note: The table's note, with the stored result's caption.
        texts: ``abl-epochs``.
    """

    table: pd.DataFrame
    epochs: int
    note: str
    texts: Mapping[str, str]


def quick_ablation(result: Any) -> QuickAblation:
    """Tabulate the quick profile's ablation at its last whole epoch.

    The profile's whole epochs: the ceil rule adds a partial epoch of two steps after
    them, whose loss (over two batches) is not comparable.

    Args:
        result: The stored quick result of ``dpsgdf_reference`` (``table``, ``meta``,
            ``caption()``).

    Raises:
        ValueError: If the result has no DPSGD or DPSGD-F run at that epoch.
    """
    epochs = int(result.meta["config"]["datasets"]["mnist"]["epochs"])
    quick = result.table
    _require(quick, (*_RUN_COLUMNS, "momentum", "normalize"), "quick_ablation")
    at = quick[quick.method.isin(["dpsgd", "dpsgd_f"]) & (quick.epoch == epochs)]
    if at.empty:
        raise ValueError(f"quick_ablation: no DPSGD or DPSGD-F run at epoch {epochs}.")
    rows = pd.DataFrame(f.setting_rows(at, "quick"))
    note = (
        f"Seed 0, after {epochs} epochs; mean loss over the epoch's batches and "
        f"test accuracy. {result.caption()}"
    )
    table = f.settings_table(rows.drop(columns="run"))
    return QuickAblation(table, epochs, note, {"abl-epochs": f"{epochs}"})


# --------------------------------------------------------------- Table 2, the norms


@dataclass(frozen=True)
class Table2:
    """The paper's Table 2 under both readings of its "average gradient norm".

    Attributes:
        census: ``{heading: verdicts}`` per census data set (the paper's encoding,
            its groups matched by size).
        mnist: The verdicts of the reference loop's MNIST runs.
        texts: The values the prose quotes (``t2-*``, ``ratio-*``, ``mnist-*``).
    """

    census: Mapping[str, list[Verdict]]
    mnist: list[Verdict]
    texts: Mapping[str, str]


def _readings(rows: Sequence[Verdict]) -> dict[str, str]:
    texts = {}
    for what in ("loss", "per-example norm", "norm of the average"):
        mine = [v for v in rows if v.quantity.endswith(what)]
        key = what.split()[0]
        ratios = f.paper_ratios(mine, what)
        texts[f"t2-{key}"] = _count_text(mine)
        texts[f"t2-{key}-factor"] = f"{ratios.median():.1f}"
        texts[f"t2-{key}-range"] = _range(ratios, " to ", 1)
    losses = f.reproduced(v for v in rows if v.quantity.endswith("loss"))
    texts["t2-losses"] = report.as_sentence(
        report.count_of(*losses, "loss", "losses") + f" reproduce within {RELATIVE:.0%}"
    )
    return texts


def table2(runs: Runs) -> Table2:
    """Return Table 2 on the census data (the paper's encoding) and on MNIST."""
    census = runs.census
    match = f.match_paper_groups(census)
    tables, every = {}, []
    for dataset in ("adult", "dutch"):
        frame = census[(census.dataset == dataset) & (census.encoding == "paper")]
        groups = [match[dataset][g] for g in ("male", "female")]
        rows = f.table2_rows(frame, dataset, groups, ("M", "F"))
        heading = (
            f"**{dataset.capitalize()}**, the paper's encoding; the paper's M is our "
            f"`{groups[0]}`, its F our `{groups[1]}`"
        )
        tables[heading] = rows
        every += rows
    ref_main = runs.ref_main
    mnist = f.table2_rows(
        ref_main, "mnist", ("digit 2", "digit 8"), ("class 2", "class 8")
    )
    texts = {
        "relative": f"{RELATIVE:.0%}",
        "dutch-paper-male": f"{paper_numbers.DPSGDF_SAMPLE_SIZES['dutch']['male']:,}",
        **_readings(every),
    }
    mnist_keys = ("ratio-mnist", "ratio-census", "mnist-dpsgd-norms", "mnist-f-loss8",
                  "mnist-f-loss8-paper")  # fmt: skip
    if ref_main is None:
        return Table2(tables, mnist, {**texts, **_placeholders(mnist_keys)})
    by = {v.quantity: v for v in mnist}
    ratio_census = f.norm_ratios(census[census.encoding == "paper"])
    ratio_mnist = f.norm_ratios(ref_main)
    dpsgd = {by[f"DPSGD, class {k}, norm of the average"].outcome for k in (2, 8)}
    loss8 = by["DPSGD-F, class 8, loss"]
    texts.update(
        {
            "ratio-mnist": _range(ratio_mnist, " to ", 1),
            "ratio-census": _range(ratio_census, " to ", 1),
            "mnist-dpsgd-norms": "reproduce"
            if dpsgd == {"reproduces"}
            else "do not all reproduce",
            "mnist-f-loss8": f"{loss8.mean:.2f}",
            "mnist-f-loss8-paper": f"{loss8.paper:.2f}",
        }
    )
    return Table2(tables, mnist, texts)


# ------------------------------------------------------ the census encodings


@dataclass(frozen=True)
class CensusEncodings:
    """Table 1 on the census data under the paper's encoding and the full one.

    Attributes:
        rows: ``{(dataset, encoding): verdicts}``.
        texts: ``t1-<dataset>-<encoding>`` ("7 of 12") and Dutch DPSGD's cost for the
            paper's "M" under each encoding.
    """

    rows: Mapping[tuple[str, str], list[Verdict]]
    texts: Mapping[str, str]


def census_encodings(runs: Runs) -> CensusEncodings:
    """Count the census Table 1 numbers each encoding reproduces."""
    rows = {
        (d, e): f.census_table1(runs.census, d, e)
        for d in ("adult", "dutch")
        for e in ("paper", "full")
    }
    texts = {f"t1-{d}-{e}": _count_text(r) for (d, e), r in rows.items()}
    male = {
        e: next(v for v in rows[("dutch", e)] if v.quantity == "DPSGD, Δ, male")
        for e in ("paper", "full")
    }
    for e, v in male.items():
        texts[f"dutch-dpsgd-m-{e}"] = (
            NOT_COMPUTED if v.mean is None else f"{v.mean:+.3f}"
        )
    texts["dutch-dpsgd-m"] = f"{male['paper'].paper:+.4f}"
    return CensusEncodings(rows, texts)


# ------------------------------------------------------------ the chapter's summary

#: The glue names the chapter's summary quotes from the sections of its pages.
SUMMARY_KEYS: tuple[str, ...] = (
    "causes-reproducing",
    "t3-ref-below",
    "sweep-ref-gap",
    "sweep-text-gap",
)


def summary_texts(runs: Runs, cause: CauseSection) -> dict[str, str]:
    """Return the values the chapter's summary quotes from its pages' sections.

    Glued values are per page: the summary, on the chapter's first page, quotes
    numbers that the cause table, Table 3 and the noise sweep (on the page
    ``gaps_costs.md``) show. They come from the same functions, on the same runs:
    :func:`table3`, :func:`noise_sweeps` (with :func:`figures`' measurements) and the
    cause study's texts.

    Args:
        runs: The chapter's runs (:func:`stored_runs`).
        cause: The cause study as
            :func:`dpnotes.findings.dpsgdf_causes.cause_section` returns it.

    Returns:
        Glue name -> text, for the names of :data:`SUMMARY_KEYS`.
    """
    sweep = noise_sweeps(runs, figures(runs).checks).texts
    texts = {**cause.texts, **table3(runs).texts, **sweep}
    return {key: texts[key] for key in SUMMARY_KEYS}
