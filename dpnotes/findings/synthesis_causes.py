"""The causes of the gap to the stratification authors' synthesis results, one by one.

Experiment ``strat_synth`` switches one difference of the authors' code on alone with
its ``cause`` setting (:data:`dpnotes.experiments.strat_synth.CAUSES`), or moves to
larger budgets (``epsilons``). Each cause run covers a few cells of the grid; this
module sets each beside our own run on the *same* cells and counts, per synthesizer,
the comparisons in which stratifying by a grouping lowers the parity error over that
grouping, scored the authors' way (``mean_parity_error_authors``), as the authors' own
stored results count them (26 of 54: MST 1, AIM 9, GEM 16 of 18).

A cause run replaces the cells it computed and keeps ours for the rest of its blocks
(:func:`with_cause`): ``recode_vanilla`` recomputes only the vanilla cells, which the
authors' evaluation re-codes, and compares them with our stratified ones, as the
authors' code does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpnotes import paper_numbers, report
from dpnotes.findings.synthesis import (
    FIGURE_WIDTH,
    GROUPINGS,
    SYNTHESIZERS,
    TABLE_COLUMNS,
    WinTally,
    compare_metric,
    win_tally,
)
from dpnotes.validation import check_columns

__all__ = [
    "CAUSE_LABELS",
    "CAUSE_RUNS",
    "CauseRow",
    "CauseSection",
    "cause_profile",
    "cause_rows",
    "cause_section",
    "cause_table",
    "completion_order_shift",
    "gem_vanilla_ours_text",
    "scale_comparison",
    "scale_figure",
    "scale_shares",
    "with_cause",
]

#: Records the authors' synthesizers fit on: New York's whole 2018 person file.
AUTHORS_RECORDS = 196_967
#: The budgets of the authors' stored results, in the order of their per-ε tallies.
AUTHORS_EPSILONS = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0)

#: How the cause table names each setting.
CAUSE_LABELS: dict[str, str] = {
    "none": "ours",
    "scale": "ε = 10, 20, 50 (scale)",
    "data_domains": "per-stratum domains from the data (not private)",
    "authors_gem": "the authors' GEM settings",
    "aim_2way": "AIM on 2-way marginals",
    "recode_vanilla": "vanilla samples re-coded (the authors' evaluation)",
    "completion_order": "stratum counts permuted (the ordering slip; not private)",
}

_COMMON = {"datasets": "NY-sample", "parity": "authors"}

#: The settings of each cause run the chapter reads (derived profiles of ``paper``:
#: ``python -m dpnotes run strat_synth --profile paper --set KEY=VALUE ...``), in the
#: order they are run: the cheapest first, seed 0 before seed 1.
CAUSE_RUNS: dict[str, dict[str, str]] = {
    "recode_vanilla": {
        **_COMMON,
        "cause": "recode_vanilla",
        "synthesizers": "MST+AIM",
        "stratifications": "vanilla",
        "seeds": "0+1",
    },
    "aim_2way": {**_COMMON, "cause": "aim_2way", "synthesizers": "AIM", "seeds": "0+1"},
    "completion_order": {
        **_COMMON,
        "cause": "completion_order",
        "synthesizers": "MST+AIM",
        "stratifications": "SEX+RAC1P+SEX_RAC1P",
        "seeds": "0+1",
    },
    "authors_gem": {
        **_COMMON,
        "cause": "authors_gem",
        "synthesizers": "GEM",
        "seeds": "0",
        "epsilons": "0.1+1+5",
    },
    "data_domains": {
        **_COMMON,
        "cause": "data_domains",
        "seeds": "0+1",
        "epsilons": "0.1+1+5",
    },
    "scale": {**_COMMON, "seeds": "0", "epsilons": "10+20+50"},
}


def cause_profile(cause: str) -> str:
    """The derived profile name of a cause run (:data:`CAUSE_RUNS`).

    >>> cause_profile("aim_2way")
    'paper@cause=aim_2way,datasets=NY-sample,parity=authors,seeds=0+1,synthesizers=AIM'
    """
    if cause not in CAUSE_RUNS:
        raise ValueError(f"unknown cause {cause!r}; choose from {list(CAUSE_RUNS)}.")
    settings = CAUSE_RUNS[cause]
    return "paper@" + ",".join(f"{k}={settings[k]}" for k in sorted(settings))


_BLOCK = ["dataset", "synthesizer", "epsilon", "seed"]
_KEY = ["dataset", "synthesizer", "epsilon"]
_CELL = [*_BLOCK, "strata"]
METRIC = "mean_parity_error_authors"


def with_cause(
    baseline: pd.DataFrame,
    cause: pd.DataFrame,
    *,
    stratifications: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Return the cause run's cells with ours for the stratifications it leaves alone.

    A block is a data set, synthesizer, ε and seed; its cells are the
    stratifications. The cause run's cells are kept; our cells are added for the
    stratifications the cause does not apply to (not in ``stratifications``, the
    cause run's grid; default the stratifications its table holds), so that a
    cause run that recomputes only the vanilla cells is compared with our stratified
    ones, while a cause run still missing some of its own cells leaves those blocks
    incomplete rather than filled with ours. Blocks the baseline does not have
    (larger budgets) are the cause run's alone.

    Raises:
        TypeError: If a table is not a DataFrame.
        ValueError: If a column is missing or the cause run is empty.
    """
    for name, frame in (("baseline", baseline), ("cause", cause)):
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"{name} must be a DataFrame, got {type(frame).__name__}.")
        check_columns(frame, TABLE_COLUMNS, name)
    if cause.empty:
        raise ValueError("the cause run has no rows yet: nothing to compare.")
    # Budgets read back as integers (10, 20, 50) are the baseline's floats.
    baseline, cause = _float_epsilon(baseline), _float_epsilon(cause)
    own = set(cause.strata) if stratifications is None else set(stratifications)
    blocks = cause[_BLOCK].drop_duplicates()
    ours = baseline.merge(blocks, on=_BLOCK)
    ours = ours[~ours.strata.isin(own)]
    return pd.concat([ours, cause], ignore_index=True)


def _float_epsilon(table: pd.DataFrame) -> pd.DataFrame:
    return table.assign(epsilon=table["epsilon"].astype(float))


def _parts(run: object) -> tuple[pd.DataFrame, list[str] | None]:
    """A cause run's table and its grid's stratifications (a stored result's
    ``config``), or the table alone."""
    if isinstance(run, pd.DataFrame):
        return run, None
    table, config = getattr(run, "table", None), getattr(run, "config", None)
    if not isinstance(table, pd.DataFrame) or not isinstance(config, Mapping):
        raise TypeError(
            "a cause run must be its table or a stored result (.table, .config), "
            f"got {type(run).__name__}."
        )
    return table, list(config.get("stratifications") or []) or None


def _own_grouping(tab: pd.DataFrame) -> pd.DataFrame:
    """Stratifying by each grouping against none, over it: :func:`compare_metric`'s
    rows of every grouping, with the grouping as a column (empty without any)."""
    compared = [
        compare_metric(tab, METRIC, g).assign(grouping=g)
        for g in GROUPINGS
        if {g, "vanilla"} <= set(tab.strata)
    ]
    return pd.concat(compared) if compared else pd.DataFrame()


def _tallies(compared: pd.DataFrame) -> dict[str, WinTally]:
    return {} if compared.empty else win_tally(compared, by="synthesizer")


@dataclass(frozen=True)
class CauseRow:
    """One cause and synthesizer: stratifying's wins with the cause and without.

    Attributes:
        cause: A key of :data:`CAUSE_LABELS`.
        synthesizer: MST, AIM or GEM.
        with_cause: The tally on the cause run's cells.
        ours: Our tally on the same cells (None where we have no such cells).
        authors: The authors' stored tally over their 18 comparisons.
        seeds: The seeds compared.
        epsilons: The budgets compared.
    """

    cause: str
    synthesizer: str
    with_cause: WinTally
    ours: WinTally | None
    authors: int
    seeds: tuple[int, ...]
    epsilons: tuple[float, ...]

    @property
    def moved(self) -> int | None:
        """Wins gained with the cause (negative: lost), or None without ours."""
        return None if self.ours is None else self.with_cause.wins - self.ours.wins


def _authors_wins() -> dict[str, int]:
    wins = paper_numbers.STRAT_AUTHORS["fig5-all"].values
    return dict(zip(SYNTHESIZERS, wins[1:], strict=True))


def cause_rows(baseline: pd.DataFrame, causes: Mapping[str, object]) -> list[CauseRow]:
    """Tally every cause run beside ours on the same cells, per synthesizer.

    Args:
        baseline: Our strat_synth run scored the authors' way (``parity=authors``).
        causes: From a key of :data:`CAUSE_LABELS` to its run: a stored result
            (``.table``, ``.config``: its grid's stratifications decide which of our
            cells complete its blocks, :func:`with_cause`) or its table. Partial
            runs are fine: only blocks with vanilla and a stratification count.

    Returns:
        One :class:`CauseRow` per cause and synthesizer, in the order given.

    Raises:
        ValueError: For an unknown cause, a run without the authors' parity rows,
            or a missing column.
    """
    unknown = [c for c in causes if c not in CAUSE_LABELS]
    if unknown:
        raise ValueError(
            f"unknown causes {unknown}; choose from {sorted(CAUSE_LABELS)}."
        )
    authors = _authors_wins()
    out = []
    for cause, stored in causes.items():
        run, stratifications = _parts(stored)
        if not (run["metric"] == METRIC).any():
            raise ValueError(
                f"the {cause!r} run has no {METRIC!r} rows; run it with "
                "--set parity=authors."
            )
        tab = with_cause(baseline, run, stratifications=stratifications)
        with_c = _own_grouping(tab)
        blocks = _float_epsilon(run)[_BLOCK].drop_duplicates()
        ours_tab = _float_epsilon(baseline).merge(blocks, on=_BLOCK)
        ours_c = _own_grouping(ours_tab) if not ours_tab.empty else pd.DataFrame()
        if not with_c.empty and not ours_c.empty:
            # Ours on exactly the comparisons the cause run makes.
            keys = with_c.reset_index()[[*_KEY, "grouping"]]
            ours_c = (
                ours_c.reset_index().merge(keys, on=[*_KEY, "grouping"]).set_index(_KEY)
            )
        mine, ours = _tallies(with_c), _tallies(ours_c)
        for syn, tally in sorted(
            mine.items(), key=lambda kv: SYNTHESIZERS.index(kv[0])
        ):
            cells = tab[tab.synthesizer == syn]
            out.append(
                CauseRow(
                    cause=cause,
                    synthesizer=syn,
                    with_cause=tally,
                    ours=ours.get(syn),
                    authors=authors[syn],
                    seeds=tuple(sorted(int(s) for s in cells.seed.unique())),
                    epsilons=tuple(sorted(float(e) for e in cells.epsilon.unique())),
                )
            )
    return out


def _tally_cell(t: WinTally | None) -> str:
    if t is None:
        return "—"
    if t.clear_wins or t.clear_losses or t.total > t.undecided:
        return f"{t} ({t.clear_wins} / {t.clear_losses} beyond doubt)"
    return str(t)


def cause_table(rows: Iterable[CauseRow]) -> pd.DataFrame:
    """The cause table: per cause and synthesizer, stratifying's wins with the cause
    and in our run on the same cells, beside the authors' stored wins.

    A tally reads "wins of comparisons"; where two or more seeds pair a comparison,
    the brackets count those whose 95% interval lies wholly on stratifying's side
    and wholly on the other. With one seed no comparison has an interval, and the
    change is a count, not a verdict.
    """
    records = []
    for r in rows:
        seeds = ", ".join(map(str, r.seeds))
        records.append(
            {
                "setting": CAUSE_LABELS[r.cause],
                "synthesizer": r.synthesizer,
                "ε": ", ".join(f"{e:g}" for e in r.epsilons),
                "seeds": seeds,
                "with the setting": _tally_cell(r.with_cause),
                "ours, same cells": _tally_cell(r.ours),
                "change": "—" if r.moved is None else f"{r.moved:+d}",
                "authors (of 18)": str(r.authors),
            }
        )
    return pd.DataFrame(records)


def completion_order_shift(
    records: pd.DataFrame, by: Iterable[str], *, smallest: float = 0.001
) -> float:
    """How far the authors' ordering slip moves the strata's row counts.

    The authors number the strata by first appearance in the records, keep those
    above ``smallest`` of the records, give each ``n * size / total`` rows, and
    sample stratum ``i``'s count from the ``i``-th model to complete; completion is
    emulated as increasing stratum size
    (:func:`~dpnotes.synth.authors.completion_order_counts`).

    Returns:
        The total variation distance between the strata's intended shares and the
        shares they get (0: nothing moves; 1: all rows in other strata).

    Raises:
        ValueError: If a column of ``by`` is missing or there are no records.
    """
    from dpnotes.synth.authors import completion_order_counts

    by = list(by)
    missing = [a for a in by if a not in records.columns]
    if missing:
        raise ValueError(f"records lack the columns {missing}.")
    if records.empty:
        raise ValueError("records is empty.")
    first = records[by].drop_duplicates()
    sizes = (
        records.groupby(by, sort=False)
        .size()
        .reindex(
            pd.MultiIndex.from_frame(first) if len(by) > 1 else first[by[0]].to_numpy()
        )
    )
    sizes = sizes[sizes > smallest * len(records)].to_numpy()
    moved = completion_order_counts(sizes, sizes)
    share, got = sizes / sizes.sum(), moved / moved.sum()
    return float(0.5 * np.abs(share - got).sum())


def _gem_vanilla_text() -> str:
    """The authors' vanilla GEM's parity error over sex, smallest to largest budget."""
    v = paper_numbers.STRAT_AUTHORS["gem-vanilla-sex-parity"].values
    return (
        f"{v[0]:.2f} at ε = 0.01 and {v[-1]:.2f} at ε = 5 "
        f"({min(v):.2f}–{max(v):.2f} over the six budgets)"
    )


def gem_vanilla_ours_text(run: object) -> str:
    """Our vanilla GEM's parity error over sex with the authors' GEM settings.

    The authors' score (``METRIC``, over sex) of the vanilla GEM cells of the
    ``authors_gem`` run, mean over its seeds, at each budget, and how far it falls from
    the smallest budget to the largest: set beside the authors' own vanilla GEM
    (``causes-gem-vanilla``, 0.34-0.43 at every budget), it says whether their settings
    alone make a vanilla GEM as flat across ε as theirs.

    Args:
        run: The ``authors_gem`` run (its table or stored result).

    Raises:
        ValueError: If the run has no vanilla GEM cell scored over sex.
    """
    table = _parts(run)[0]
    cells = table[
        (table["metric"] == METRIC)
        & (table["strata"] == "vanilla")
        & (table["synthesizer"] == "GEM")
        & (table["grouping"] == "SEX")
    ]
    if cells.empty:
        raise ValueError(
            "the authors' GEM run has no vanilla GEM cell scored over sex: run the "
            f"setting whole ({_run_command('authors_gem')})."
        )
    by_eps = cells.groupby("epsilon")["value"].mean().sort_index()
    values = ", ".join(f"{v:.2f} at ε = {e:g}" for e, v in by_eps.items())
    fold = by_eps.iloc[0] / by_eps.iloc[-1] if by_eps.iloc[-1] > 0 else float("inf")
    seeds = report.seeds_text(cells["seed"].unique())
    return (
        f"{values} ({fold:.0f}-fold from the smallest budget to the largest; {seeds})"
    )


def _toward_text(rows: Sequence[CauseRow]) -> str:
    """Which settings move stratifying's share of wins toward the authors' share.

    A setting moves a synthesizer *toward* the authors when its share of wins on its
    cells is closer to the authors' share (of their 18 comparisons) than ours on the
    same cells, *away* when farther; equal distances are left out.
    """
    toward, away = [], []
    for r in rows:
        if r.ours is None or r.ours.total == 0 or r.with_cause.total == 0:
            continue
        target = r.authors / 18
        now = abs(r.with_cause.wins / r.with_cause.total - target)
        before = abs(r.ours.wins / r.ours.total - target)
        label = f"{CAUSE_LABELS[r.cause]} ({r.synthesizer})"
        if now < before:
            toward.append(label)
        elif now > before:
            away.append(label)
    return (
        f"toward the authors' share of wins: {'; '.join(toward) or 'none'}; away from "
        f"it: {'; '.join(away) or 'none'}"
    )


def _closest_text(rows: Sequence[CauseRow]) -> str:
    """Per synthesizer, the setting whose share of wins is closest to the authors'."""
    parts = []
    for syn in SYNTHESIZERS:
        mine = [r for r in rows if r.synthesizer == syn and r.with_cause.total > 0]
        if not mine:
            continue
        target = mine[0].authors / 18
        best = min(
            mine, key=lambda r: abs(r.with_cause.wins / r.with_cause.total - target)
        )
        parts.append(
            f"{syn}, {CAUSE_LABELS[best.cause]} with {best.with_cause.wins} of "
            f"{best.with_cause.total} against the authors' {best.authors} of 18"
        )
    return "; ".join(parts) if parts else "no setting run yet"


def _run_command(cause: str) -> str:
    settings = CAUSE_RUNS[cause]
    sets = " ".join(f"--set {k}={v}" for k, v in settings.items())
    return f"python -m dpnotes run strat_synth --profile paper {sets}"


@dataclass(frozen=True)
class CauseSection:
    """What the chapter shows of the cause runs.

    Attributes:
        rows: Every cause and synthesizer run so far (:func:`cause_rows`).
        table: :func:`cause_table` of them.
        texts: Glue texts: ``causes-done`` (the causes run), ``causes-pending`` (those
            not yet run, with their commands), ``causes-moved`` (per cause, the wins
            it moves, by synthesizer), ``causes-largest`` (the cause that moves the
            most wins, or that none does), ``causes-gem-vanilla`` (the authors'
            vanilla GEM's parity over sex), ``causes-slip-*`` (the ordering slip's
            shift of the strata's shares), and per cause ``causes-<cause>`` (its
            tallies beside ours, or "not run yet").
    """

    rows: list[CauseRow]
    table: pd.DataFrame
    texts: dict[str, str]


def cause_section(
    baseline: pd.DataFrame,
    runs: Mapping[str, object | None],
    *,
    records: pd.DataFrame,
) -> CauseSection:
    """Build the cause table and its texts from the runs stored so far.

    Args:
        baseline: Our authors'-convention run (``strat_synth``, ``parity=authors``).
        runs: From each key of :data:`CAUSE_RUNS` to its stored result (or table),
            or None where it is not stored yet.
        records: The records whose strata the ordering slip is measured on
            (:func:`completion_order_shift`; texts ``causes-slip-sex``,
            ``causes-slip-race``, ``causes-slip-sex-race``), and the training
            records here and the authors' (``scale-records``, ``scale-authors``).

    Raises:
        ValueError: As :func:`cause_rows`, or if no run is stored.
    """
    done = {c: r for c, r in runs.items() if r is not None and not _parts(r)[0].empty}
    if not done:
        raise ValueError("no cause run is stored yet: nothing to show.")
    rows = cause_rows(baseline, done)
    # Not run, or stored partial (a stored result's ``partial``): both still to run.
    pending = [
        c for c in CAUSE_RUNS if c not in done or getattr(done[c], "partial", False)
    ]
    moved = []
    for cause in done:
        mine = [r for r in rows if r.cause == cause]
        parts = [
            f"{r.synthesizer} {r.moved:+d} of {r.with_cause.total}"
            for r in mine
            if r.moved is not None
        ]
        if parts:
            moved.append(f"{CAUSE_LABELS[cause]}: {', '.join(parts)}")
    gains = {
        c: sum(r.moved for r in rows if r.cause == c and r.moved is not None)
        for c in done
        if c != "scale"
    }
    best = max(gains, key=lambda c: gains[c], default=None)
    largest = (
        f"{CAUSE_LABELS[best]} ({gains[best]:+d} wins over its synthesizers)"
        if best is not None and gains[best] > 0
        else "none of the settings run so far (none gains stratifying a win)"
    )
    texts = {
        "causes-toward": _toward_text(rows),
        "causes-closest": _closest_text(rows),
        "causes-done": "; ".join(CAUSE_LABELS[c] for c in done),
        "causes-pending": (
            "every cause setting is run"
            if not pending
            else "still to run: "
            + "; ".join(f"{CAUSE_LABELS[c]} ({_run_command(c)})" for c in pending)
        ),
        "causes-moved": "; ".join(moved) if moved else "no cell of ours to compare",
        "causes-largest": largest,
        "causes-gem-vanilla": _gem_vanilla_text(),
        "causes-gem-ours-vanilla": (
            gem_vanilla_ours_text(done["authors_gem"])
            if "authors_gem" in done
            else "not run yet"
        ),
        "causes-open": (
            "What else the gap is made of stays open until the settings still to "
            "run (listed under the table) are in."
            if pending
            else "Every setting is run, each alone; what none of them closes is the "
            "rest of each synthesizer's gap to the authors' tally above."
        ),
        "scale-records": f"{len(records):,}",
        "scale-authors": f"{AUTHORS_RECORDS:,}",
        "scale-match": (
            "not computed"
            if runs.get("scale") is None
            else scale_comparison(runs["scale"], records=records)
        ),
    }
    for cause in CAUSE_RUNS:
        mine = [r for r in rows if r.cause == cause]
        texts[f"causes-{cause}"] = (
            ", ".join(
                f"{r.synthesizer} {_tally_cell(r.with_cause)}"
                + ("" if r.ours is None else f" against {r.ours.wins} without it")
                for r in mine
            )
            + f" ({report.seeds_text(s for r in mine for s in r.seeds)})"
            if mine
            else (
                "no comparison yet (its stratified cells are still to run)"
                if cause in done
                else "not run yet"
            )
        )
    for key, by in {
        "sex": ["SEX"],
        "race": ["RAC1P"],
        "sex-race": ["SEX", "RAC1P"],
    }.items():
        texts[f"causes-slip-{key}"] = f"{completion_order_shift(records, by):.2f}"
    return CauseSection(rows, cause_table(rows), texts)


def scale_shares(table: pd.DataFrame) -> pd.DataFrame:
    """Per synthesizer and ε, the groupings compared and those stratifying wins.

    A win as :func:`cause_rows` counts it: stratifying by a grouping lowers the
    parity error over that grouping (the authors' convention), the seeds' mean.

    Args:
        table: A strat_synth run scored the authors' way (``parity=authors``).

    Returns:
        Columns ``synthesizer``, ``epsilon``, ``wins``, ``compared`` and ``share``
        (empty where no block holds vanilla and a stratification).

    Raises:
        ValueError: If a column is missing.
    """
    check_columns(table, TABLE_COLUMNS, "table")
    compared = _own_grouping(table)
    columns = ["synthesizer", "epsilon", "wins", "compared", "share"]
    if compared.empty:
        return pd.DataFrame(columns=columns)
    out = (
        compared.reset_index()
        .groupby(["synthesizer", "epsilon"], sort=True)["better"]
        .agg(wins="sum", compared="size")
        .reset_index()
    )
    out["wins"] = out["wins"].astype(int)
    out["share"] = out["wins"] / out["compared"]
    return out[columns]


def _sci(x: float) -> str:
    """``160000`` -> ``1.6·10⁵`` (two significant digits)."""
    exponent = int(np.floor(np.log10(x)))
    sup = str(exponent).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{x / 10**exponent:.1f}·10{sup}"


def _authors_wins_by_budget() -> np.ndarray:
    """The authors' stored wins of the 3 groupings: (budget, synthesizer) array."""
    return np.reshape(
        paper_numbers.STRAT_AUTHORS["fig5-by-epsilon"].values,
        (len(AUTHORS_EPSILONS), len(SYNTHESIZERS)),
    )


def scale_comparison(
    larger: object,
    *,
    records: int | pd.DataFrame,
    authors_records: int = AUTHORS_RECORDS,
    factor: float = 2.0,
) -> str:
    """Our wins at larger ε beside the authors' at the same records × ε, as a text.

    The authors' budgets compared are those whose records × ε lie within ``factor``
    of the span our larger budgets cover (the noise of a stratum's marginals falls
    as 1/(n_i ε)). Only budgets with all three groupings compared count.

    Args:
        larger: Our run at larger budgets (a stored result or its table).
        records: Our training records (or the training split itself).
        authors_records: The records the authors fit on.
        factor: How far outside our span an authors' budget may lie.

    Returns:
        Per synthesizer, ours against theirs, then the budgets and the span; or
        ``"not computed"`` when no larger budget has every grouping compared.

    Raises:
        ValueError: If ``factor`` is below 1.
    """
    if not factor >= 1.0:
        raise ValueError(f"factor must be at least 1, got {factor!r}.")
    if isinstance(records, pd.DataFrame):
        records = len(records)
    shares = scale_shares(_parts(larger)[0])
    shares = shares[shares["compared"] == len(GROUPINGS)]
    if shares.empty:
        return "not computed"
    x = records * shares["epsilon"].astype(float)
    lo, hi = float(x.min()), float(x.max())
    theirs = _authors_wins_by_budget()
    near = [
        i
        for i, e in enumerate(AUTHORS_EPSILONS)
        if lo / factor <= authors_records * e <= hi * factor
    ]
    if not near:
        return "no budget of the authors' stands at the same records × ε"
    parts = []
    for j, syn in enumerate(SYNTHESIZERS):
        mine = shares[shares["synthesizer"] == syn]
        if mine.empty:
            continue
        ours_text = f"{int(mine['wins'].sum())} of {int(mine['compared'].sum())}"
        their = int(sum(theirs[i, j] for i in near))
        parts.append(
            f"{syn} {ours_text} against the authors' {their} of "
            f"{len(GROUPINGS) * len(near)}"
        )
    ours_eps = ", ".join(f"{e:g}" for e in sorted(shares["epsilon"].unique()))
    their_eps = ", ".join(f"{AUTHORS_EPSILONS[i]:g}" for i in near)
    span = authors_records * np.asarray([AUTHORS_EPSILONS[i] for i in near])
    return (
        "; ".join(parts)
        + f" (ours at ε = {ours_eps}, {_sci(lo)} to {_sci(hi)} records × ε; theirs at"
        f" ε = {their_eps}, {_sci(span.min())} to {_sci(span.max())})"
    )


def scale_figure(
    ours: pd.DataFrame,
    larger: object | None,
    *,
    records: int | pd.DataFrame,
    dataset: str = "NY-sample",
    seeds: Sequence[int] = (0,),
    authors_records: int = AUTHORS_RECORDS,
):
    """Stratifying's share of wins against records × ε: ours, at larger ε, theirs.

    The noise of a stratum's marginals falls as 1/(n_i ε); with the strata's shares
    alike in both data sets, records × ε puts the two runs on one scale.

    Args:
        ours: Our run on the paper's budgets (``parity=authors``); its cells of
            ``dataset`` and ``seeds`` are shown.
        larger: Our run at larger budgets (the scale setting: a stored result or its
            table), or None.
        records: Our training records (or the training split itself).
        dataset: The data set shown.
        seeds: The seeds shown (the larger run's).
        authors_records: The records the authors fit on.

    Returns:
        A figure: one panel per synthesizer, share of the three groupings won
        against records × ε (log scale).
    """
    import matplotlib.pyplot as plt

    from dpnotes.plotting import PALETTE

    if isinstance(records, pd.DataFrame):
        records = len(records)
    ours = ours[(ours["dataset"] == dataset) & ours["seed"].isin(list(seeds))]
    larger = None if larger is None else _parts(larger)[0]

    theirs = _authors_wins_by_budget()
    runs = [
        (scale_shares(ours), "ours (ε 0.01 to 5)", "o", "-"),
        (
            scale_shares(larger) if larger is not None else None,
            "ours (ε 10, 20, 50)",
            "s",
            "--",
        ),
    ]
    fig, axes = plt.subplots(
        1, len(SYNTHESIZERS), figsize=(FIGURE_WIDTH, 3.0), sharey=True,
        layout="constrained",
    )  # fmt: skip
    for j, (ax, syn) in enumerate(zip(axes, SYNTHESIZERS, strict=True)):
        for k, (shares, label, marker, ls) in enumerate(runs):
            if shares is None or shares.empty:
                continue
            # Only budgets with every grouping compared (a partial run has others).
            full = shares["compared"] == len(GROUPINGS)
            mine = shares[(shares.synthesizer == syn) & full]
            ax.plot(records * mine["epsilon"], mine["share"], marker=marker, ls=ls,
                    color=PALETTE[0], alpha=1.0 - 0.3 * k, label=label)  # fmt: skip
        x = authors_records * np.asarray(AUTHORS_EPSILONS)
        ax.plot(x, theirs[:, j] / 3, marker="^", color=PALETTE[1],
                label="authors' stored (5 seeds)")  # fmt: skip
        ax.set(xscale="log", title=syn, ylim=(-0.05, 1.05))
        ax.set_xlabel("records × ε")
        # Ticks away from the panels' edges, where neighbours' labels would meet.
        ax.set(xlim=(40, 4e6), xticks=[1e3, 1e5])
    axes[0].set_ylabel("share of the 3 groupings\nstratifying wins")
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="outside lower center", ncols=3)
    return fig
