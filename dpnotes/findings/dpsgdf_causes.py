"""What makes the DPSGD-F paper's class 8 work: the cause table, from the stored runs.

Each variant of ``dpsgdf_causes`` (:data:`dpnotes.experiments.dpsgdf_causes.VARIANTS`)
changes one step of DPSGD-F's bound rule or of its count noise, on the reference loop
and its seeds. :func:`cause_table` sets them beside the reference experiment's own
DPSGD and DPSGD-F runs: per variant, the cost of privacy of digits 8 and 2 (private
minus SGD accuracy of the same seed), their gap, the bound ratio ``C_8 / max C`` and
digit 8's share of the step's clipped gradient mass over the late epochs, and the
epsilon the variant truly spends (inf where it is not private). :func:`cause_verdicts`
judges digit 8's cost and the gap against the paper's Table 1, with the intervals of
:mod:`dpnotes.findings.verdict` (seed spread and the binomial error of the test
accuracies).

References:
    xu2021removing (Table 1, Figure 2); esipova2023disparate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from dpnotes import paper_numbers, report
from dpnotes.findings.dpsgdf import (
    PAIRS,
    TOLERANCE,
    accuracy_error,
    cost_gap,
    final_wide,
    group_test_count,
    paper_gap,
    require_columns,
)
from dpnotes.findings.verdict import Estimate, Verdict, compare_value

__all__ = [
    "AUDITED",
    "BASELINES",
    "LATE_EPOCHS",
    "VARIANT_TEXT",
    "AuditSection",
    "CauseSection",
    "audit_section",
    "cause_section",
    "cause_table",
    "cause_verdicts",
    "causes_caption",
    "late_mean",
    "reproducing_text",
]

#: How many of the last epochs the bound diagnostics average over.
LATE_EPOCHS: int = 10

#: What each variant changes, in words (the keys of ``dpsgdf_causes``' variants).
VARIANT_TEXT: dict[str, str] = {
    "ours": "ours, for DPSGD's steps",
    "counts_sigma2": "counts' noise σ₁ = σ₂ (not 10 σ₂)",
    "counts_exact": "exact counts (not private)",
    "noise_base": "gradient noise σ₂ C₀ (not σ₂ max C_k; not private)",
    "guard_clamp1": "noisy counts clamped at 1",
    "guard_clip3": "raw counts, bounds clipped to [C₀, 3 C₀]",
    "denominator_public": "overall share m̃ / b (the public b)",
    "fair_dp": "fair-dp's reading, as its code runs (not private)",
    "fair_dp_bounds": "fair-dp's bounds, our noise scale",
    "dpsgd_shuffle": "DPSGD with shuffled fixed-size batches",
}

#: The reference experiment's own runs shown first: (label, method).
BASELINES: tuple[tuple[str, str], ...] = (
    ("DPSGD (reference loop)", "dpsgd"),
    ("DPSGD-F, ours (budget stop)", "dpsgd_f"),
)

_DIGITS = PAIRS["mnist"]  # ("digit 8", "digit 2")

#: Variants with fixed-size shuffled batches: the Poisson accountant's epsilon is only
#: an approximation for them.
SHUFFLED: frozenset[str] = frozenset({"dpsgd_shuffle"})


def late_mean(
    frame: pd.DataFrame, metric: str, group: str, *, epochs: int = LATE_EPOCHS
) -> pd.Series:
    """Return a per-epoch metric's mean over each run's last ``epochs`` epochs, by seed.

    Args:
        frame: The rows of one method or variant (columns ``seed``, ``metric``,
            ``group``, ``epoch``, ``value``).
        metric: A per-epoch metric, e.g. ``"sensitivity_ratio"``.
        group: The group, e.g. ``"digit 8"``.
        epochs: How many of the last epochs.

    Returns:
        The mean per seed (empty where the metric is absent).

    Raises:
        ValueError: If a column is missing or ``epochs`` is below 1.

    Examples:
        >>> t = pd.DataFrame({"seed": 0, "metric": "m", "group": "g",
        ...                   "epoch": [1, 2, 3], "value": [1.0, 2.0, 4.0]})
        >>> late_mean(t, "m", "g", epochs=2).tolist()
        [3.0]
    """
    require_columns(frame, ("seed", "metric", "group", "epoch", "value"), "late_mean")
    if epochs < 1:
        raise ValueError(f"epochs must be at least 1, got {epochs}.")
    d = frame[(frame.metric == metric) & (frame.group == group)]
    if d.empty:
        return pd.Series(dtype=float, name=metric)
    last = d.groupby("seed")["epoch"].transform("max")
    d = d[d.epoch > last - epochs]
    return d.groupby("seed")["value"].mean().rename(metric)


def _final_epsilon(frame: pd.DataFrame) -> float:
    eps = frame[(frame.metric == "epsilon") & (frame.group == "all")]
    if eps.empty:
        return math.nan
    last = eps[eps.epoch == eps.groupby("seed")["epoch"].transform("max")]
    return float(last["value"].max())


def _runs(
    causes: pd.DataFrame, reference: pd.DataFrame
) -> list[tuple[str, str, str, pd.DataFrame]]:
    """(label, key, method, rows) of each baseline and variant."""
    main = reference[reference.part == "main"]
    keep = ["method", "seed", "metric", "group", "epoch", "value"]
    out = []
    for label, method in BASELINES:
        rows = main[main.method == method]
        if len(rows):
            out.append((label, method, method, rows[keep]))
    for variant, rows in causes.groupby("variant", sort=False):
        method = str(rows["method"].iloc[0])
        out.append((VARIANT_TEXT.get(variant, variant), variant, method, rows[keep]))
    return out


def _check(causes: pd.DataFrame, reference: pd.DataFrame, what: str) -> None:
    columns = ("method", "seed", "metric", "group", "epoch", "value")
    require_columns(causes, ("variant", *columns), what)
    require_columns(reference, ("part", *columns), what)
    main = reference[reference.part == "main"]
    if not (main.method == "sgd").any():
        raise ValueError(
            f"{what}: the reference table has no SGD run (part 'main') to take the "
            "costs of privacy against."
        )


def _sgd(reference: pd.DataFrame) -> pd.DataFrame:
    main = reference[reference.part == "main"]
    return main[main.method == "sgd"][
        ["method", "seed", "metric", "group", "epoch", "value"]
    ]


def _estimates(
    rows: pd.DataFrame, sgd: pd.DataFrame, method: str, counts: Mapping[str, int | None]
) -> dict[str, Estimate] | None:
    """Costs of digits 8 and 2 and their gap, over the seeds SGD also has."""
    runs = pd.concat([rows, sgd], ignore_index=True)
    wide = final_wide(runs, "accuracy")
    seeds = set(rows.seed.unique()) & set(sgd.seed.unique())
    if not seeds:
        return None
    wide = wide.loc[sorted(seeds)]
    out = {}
    for g in _DIGITS:
        cost = wide[(method, g)] - wide[("sgd", g)]
        se = accuracy_error(
            (wide[(m, g)].mean(), counts.get(g)) for m in (method, "sgd")
        )
        out[g] = Estimate(tuple(cost.to_numpy(dtype=float)), se_test=se)
    out["gap"] = cost_gap(
        wide, wide, method, _DIGITS, tuple(counts.get(g) for g in _DIGITS)
    )
    return out


def cause_table(
    causes: pd.DataFrame,
    reference: pd.DataFrame,
    *,
    epochs: int = LATE_EPOCHS,
    decimals: int = 3,
) -> pd.DataFrame:
    """Return the cause table: one row per baseline and variant.

    Args:
        causes: The table of ``dpsgdf_causes``.
        reference: The table of ``dpsgdf_reference`` (its ``part="main"`` runs: SGD,
            whose accuracies the costs are taken against, and the baselines
            :data:`BASELINES`).
        epochs: The late epochs the bound diagnostics average over.
        decimals: Decimals of the numbers shown.

    Returns:
        Columns ``run``, ``variant``, ``private``, ``epsilon``, ``ε spent``,
        ``seeds``, ``Δ digit 8``, ``Δ digit 2``, ``gap 8 − 2`` (mean ± the
        half-width of its 95% interval, as text), ``C_8 / max C`` and ``digit 8's
        share`` (late epochs; blank for the baselines, which did not log them)
        and the numbers behind the text (``cost8``, ``cost2``, ``gap``,
        ``ratio8``, ``share8``).

    Raises:
        ValueError: If a column is missing or the reference has no SGD run.
    """
    _check(causes, reference, "cause_table")
    sgd = _sgd(reference)
    counts = {g: group_test_count(reference, g) for g in _DIGITS}
    rows = []
    for label, key, method, frame in _runs(causes, reference):
        est = _estimates(frame, sgd, method, counts)
        if est is None:
            continue
        ratio = late_mean(frame, "sensitivity_ratio", "digit 8", epochs=epochs)
        share = late_mean(frame, "step_share", "digit 8", epochs=epochs)
        eps = _final_epsilon(frame)
        private = math.isfinite(eps)
        rows.append(
            {
                "run": label,
                "variant": key,
                "private": "yes" if private else "no",
                "epsilon": f"{eps:.2f}" if private else "∞",
                "ε spent": (
                    "∞ (not private)"
                    if not private
                    else f"≈ {eps:.2f} (shuffled)"
                    if key in SHUFFLED
                    else f"{eps:.2f}"
                ),
                "seeds": est["gap"].n_seeds,
                "Δ digit 8": _text(est["digit 8"], decimals),
                "Δ digit 2": _text(est["digit 2"], decimals),
                "gap 8 − 2": _text(est["gap"], decimals),
                "C_8 / max C": f"{ratio.mean():.2f}" if len(ratio) else "",
                "digit 8's share": f"{share.mean():.3f}" if len(share) else "",
                "cost8": est["digit 8"].mean,
                "cost2": est["digit 2"].mean,
                "gap": est["gap"].mean,
                "ratio8": float(ratio.mean()) if len(ratio) else math.nan,
                "share8": float(share.mean()) if len(share) else math.nan,
            }
        )
    return pd.DataFrame(rows)


def _text(e: Estimate, decimals: int) -> str:
    # mean ± the half-width of its 95% interval: narrower than "[low, high]"
    return f"{e.mean:+.{decimals}f} ± {e.half_width:.{decimals}f}"


def cause_verdicts(
    causes: pd.DataFrame,
    reference: pd.DataFrame,
    *,
    variants: Sequence[str] | None = None,
) -> list[Verdict]:
    """Judge each DPSGD-F variant's digit-8 cost and 8/2 gap against Table 1.

    The paper's numbers are DPSGD-F's row of its Table 1 (class 8's Δ, and
    Δ(8) − Δ(2) from :func:`~dpnotes.findings.dpsgdf.paper_gap`); the tolerance is
    :data:`~dpnotes.findings.dpsgdf.TOLERANCE`. Verdicts name the variant in the
    quantity; variants that train DPSGD (not DPSGD-F) are left out.

    Args:
        causes: The table of ``dpsgdf_causes``.
        reference: The table of ``dpsgdf_reference``.
        variants: The variants to judge (default every DPSGD-F variant stored).

    Returns:
        Two verdicts per variant: digit 8's cost, then the gap.
    """
    _check(causes, reference, "cause_verdicts")
    sgd = _sgd(reference)
    counts = {g: group_test_count(reference, g) for g in _DIGITS}
    table1 = paper_numbers.DPSGDF_TABLE1["mnist"]["dpsgd_f"]
    paper8 = table1[paper_numbers.DPSGDF_GROUPS["mnist"].index("digit 8")]
    gap = paper_gap("mnist", "dpsgd_f")
    out = []
    for label, key, method, frame in _runs(causes, reference):
        if method != "dpsgd_f" or (variants is not None and key not in variants):
            continue
        est = _estimates(frame, sgd, method, counts)
        if est is None:
            continue
        out.append(
            compare_value(
                f"{label}: Δ digit 8 (Table 1)",
                paper8,
                est["digit 8"],
                tolerance=TOLERANCE,
            )
        )
        out.append(
            compare_value(
                f"{label}: Δ(8) − Δ(2) (Table 1)", gap, est["gap"], tolerance=TOLERANCE
            )
        )
    return out


def reproducing_text(verdicts: Sequence[Verdict], private: Mapping[str, bool]) -> str:
    """Say which variants' digit-8 cost reproduces the paper's, and their privacy.

    Args:
        verdicts: From :func:`cause_verdicts` (the digit-8 ones are read).
        private: Variant label (the text before ``":"`` in the quantity) -> whether
            it is private.

    Returns:
        A sentence.

    Examples:
        >>> from dpnotes.findings.verdict import compare_value, estimate
        >>> def v(name, cost):
        ...     return compare_value(f"{name}: Δ digit 8", -0.04, estimate([cost]),
        ...                          tolerance=0.02)
        >>> reproducing_text([v("a", -0.041), v("b", -0.3)], {"a": False})
        "Of 2 variants, one brings digit 8's cost within ±0.02 of the paper's: a (not private)."
        >>> reproducing_text([v("b", -0.3)], {"b": True})
        "The one variant computed leaves digit 8's cost outside the paper's tolerance."
    """  # noqa: E501
    eights = [v for v in verdicts if "Δ digit 8" in v.quantity]
    n = len(eights)
    if n == 0:
        return "No DPSGD-F variant is computed yet."
    hits = [v for v in eights if v.outcome == "reproduces"]
    if not hits:
        who = "The one variant computed leaves" if n == 1 else f"All {n} variants leave"
        return f"{who} digit 8's cost outside the paper's tolerance."
    head = "The one variant computed" if n == 1 else f"Of {n} variants,"
    names = []
    for v in hits:
        label = v.quantity.split(":")[0]
        flag = not private.get(label, True) and "not private" not in label
        names.append(label + (" (not private)" if flag else ""))
    tol = hits[0].tolerance
    which = (
        "brings"
        if n == 1
        else ("one brings" if len(hits) == 1 else f"{len(hits)} bring")
    )
    return (
        f"{head} {which} digit 8's cost within ±{tol:g} of the paper's: "
        + "; ".join(names)
        + "."
    )


def causes_caption(result: Any) -> str:
    """Say which profile of ``dpsgdf_causes`` is shown, how far it got, and the plan.

    Args:
        result: Its stored result (``profile``, ``partial``, ``meta``,
            ``cells_by_machine()``), or None.
    """
    plan = (
        "The plan: the paper profile (the reference loop's 60 epochs, seeds 0-2, "
        "seed 0 of every variant first; about 30 min a run on one CPU thread, "
        "minutes on a GPU), with `python -m dpnotes run dpsgdf_causes --profile "
        "paper`."
    )
    if result is None:
        return "No run of `dpsgdf_causes` is stored here. " + plan
    machines = result.cells_by_machine()
    where = "; ".join(f"{n} on {name}" for name, n in machines.items())
    if result.profile == "paper":
        done = len(result.meta.get("cells_done", [])) if result.partial else None
        total = result.meta.get("cells_total") or result.meta.get("cells")
        state = (
            f"{done} of {total} runs computed so far ({where})"
            if result.partial
            else f"all {total} runs computed ({where})"
        )
        return f"The paper profile of `dpsgdf_causes`: {state}." + (
            " " + plan if result.partial else ""
        )
    epochs = int(result.table["epoch"].max())
    return (
        f"The {result.profile} profile of `dpsgdf_causes`: the first "
        f"{report.plural(epochs, 'epoch')} of every variant, seed 0 ({where}), "
        "beside the reference loop's runs of the same profile: the start of the "
        "trajectories, not the late epochs where the paper's Table 1 is measured. "
        + plan
    )


@dataclass(frozen=True)
class CauseSection:
    """What the chapter shows of the cause study.

    Attributes:
        table: The cause table to display (:func:`cause_table`'s text columns).
        verdicts: :func:`cause_verdicts` (the paper profile only; empty for the
            others, which stop long before Table 1's 60 epochs).
        caption: :func:`causes_caption`.
        texts: Glue names -> text (``causes-reproducing``, ``causes-epochs``).
    """

    table: pd.DataFrame
    verdicts: list[Verdict]
    caption: str
    texts: dict[str, str] = field(default_factory=dict)


def cause_section(result: Any, reference: pd.DataFrame) -> CauseSection:
    """Build the cause study's table, verdicts and texts from the stored results.

    Args:
        result: The stored result of ``dpsgdf_causes`` (any profile; only the paper
            profile's runs are judged against Table 1).
        reference: The table of ``dpsgdf_reference`` of the same profile (its SGD
            runs give the costs; its DPSGD and DPSGD-F runs are the baselines).
    """
    full = cause_table(result.table, reference)
    # Table 1 is measured after 60 epochs: only the paper profile is judged against it.
    verdicts = (
        cause_verdicts(result.table, reference) if result.profile == "paper" else []
    )
    private = dict(zip(full["run"], full["private"] == "yes", strict=True))
    shown = full[
        [
            "run",
            "ε spent",
            "Δ digit 8",
            "Δ digit 2",
            "gap 8 − 2",
            "C_8 / max C",
        ]
    ].rename(columns={"C_8 / max C": "C₈ / max C"})
    # Narrow enough for the text column: a run that is not private says so in its
    # label, so its budget cell is just ∞; digit 8's share of the step goes into the
    # text (causes-share-range) rather than a seventh column.
    shown["ε spent"] = shown["ε spent"].str.replace(" (not private)", "", regex=False)
    shares = full["share8"].dropna()
    share_range = (
        f"from {shares.min():.3f} to {shares.max():.3f}"
        if len(shares)
        else "not logged by these runs"
    )
    epochs = int(result.table["epoch"].max())
    texts = {
        "causes-reproducing": reproducing_text(verdicts, private)
        if verdicts
        else "The paper's Table 1 is measured after 60 epochs, so this profile's runs "
        "are not judged against it.",
        "causes-epochs": f"{min(LATE_EPOCHS, epochs)}",
        "causes-share-range": share_range,
    }
    return CauseSection(shown, verdicts, causes_caption(result), texts)


# --------------------------------------------------------------------------------------
# The one-run audit of DP-SGD training


#: The audited rules: (label, method, the DPSGDFRule switches or None).
AUDITED: tuple[tuple[str, str, dict[str, str] | None], ...] = (
    ("DPSGD", "dpsgd", None),
    ("Naive", "naive", None),
    ("DPSGD-F", "dpsgd_f", None),
    ("DPSGD-F, noise σ₂ C₀ (the slip)", "dpsgd_f", {"noise_scale": "base_bound"}),
)


@dataclass(frozen=True)
class AuditSection:
    """The one-run audits the chapter shows.

    Attributes:
        table: One row per audited rule and seed (display text).
        audits: The :class:`~dpnotes.dpsgd.audit.OneRunAudit` results, in order.
        texts: Glue names -> text (``audit-m``, ``audit-r``, ``audit-claim``,
            ``audit-slip``, ``audit-slip-sigma``, ``audit-max``).
    """

    table: pd.DataFrame
    audits: tuple[Any, ...]
    texts: dict[str, str] = field(default_factory=dict)

    @property
    def as_expected(self) -> bool:
        """Whether every private rule passes and every slip fails its audit."""
        return all(a.passes() == a.private for a in self.audits)


def audit_section(seeds: Sequence[int] = (0, 1, 2)) -> AuditSection:
    """Audit DPSGD, Naive, DPSGD-F and the slip from one training run each, per seed.

    :func:`dpnotes.dpsgd.audit.audit_training` at its default settings (about half a
    second a run on one CPU thread).

    Args:
        seeds: The seeds of the runs (canaries' coins, data, batches and noise).

    Returns:
        The :class:`AuditSection`.

    Raises:
        ValueError: If no seed is given.
    """
    from dpnotes.dpsgd.audit import audit_training, one_run_epsilon_lower_bound
    from dpnotes.dpsgd.rules import DPSGDFRule

    if not len(seeds):
        raise ValueError("audit_section needs at least one seed.")
    audits, rows = [], []
    for label, method, switches in AUDITED:
        rule = None if switches is None else DPSGDFRule(**switches)
        found = [audit_training(method, rule=rule, seed=int(s)) for s in seeds]
        audits += found
        lows = [a.epsilon_lower for a in found]
        rows.append(
            {
                "rule": label,
                "private": "yes" if found[0].private else "no",
                "ε claimed": f"{found[0].claimed_epsilon:.2f}",
                "ε lower bound (one run)": ", ".join(f"{v:.2f}" for v in lows),
                "correct guesses": ", ".join(f"{a.correct}/{a.guesses}" for a in found),
                "passes": report.count_of(
                    sum(a.passes() for a in found), len(found), "seed"
                ),
            }
        )
    first = audits[0]
    slip = [a for a in audits if not a.private]
    best = one_run_epsilon_lower_bound(
        first.guesses, first.guesses, delta=first.delta, m=first.m, beta=first.beta
    )
    texts = {
        "audit-m": f"{first.m:,}",
        "audit-r": f"{first.guesses}",
        "audit-claim": f"{first.claimed_epsilon:.2f}",
        "audit-max": f"{best:.2f}",
        "audit-slip": f"{min(a.epsilon_lower for a in slip):.2f}",
        "audit-slip-sigma": f"{slip[0].effective_noise_multiplier:.2f}",
        "audit-slip-eps": f"{slip[0].effective_epsilon:.0f}",
    }
    return AuditSection(pd.DataFrame(rows), tuple(audits), texts)
