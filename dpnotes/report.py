"""The chapters' helpers: number formats, seed lists, captions, tables and verdicts.

A number the book states is formatted here, once, so that every chapter writes it the
same way; the paper-vs-ours tables and the synthesis chapter's win counts are computed
here and tested, not in chapter code. Figures keep their style in
:mod:`dpnotes.plotting`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields

import pandas as pd

__all__ = [
    "ACS_DATASETS",
    "ACS_IN_PROSE",
    "ACS_SHORT",
    "DPSGD_METHOD_LABEL",
    "STRATA",
    "STRATA_LABEL",
    "STRATA_PROSE",
    "VERDICTS",
    "Comparison",
    "PaperCheck",
    "as_sentence",
    "better_at",
    "comparison_over_seeds",
    "count_of",
    "decimals_for",
    "e_to_the",
    "fmt",
    "judge",
    "markdown_table",
    "match_groups_by_size",
    "mean_sd",
    "paper_check_table",
    "plural",
    "seeds_caption",
    "seeds_text",
    "spread_text",
    "verdict_columns",
    "verdict_counts",
    "verdict_counts_text",
    "verdict_table",
]

# ----------------------------------------------------------------------------- labels

#: The stratifications of the synthesis experiments, in the book's order.
STRATA: tuple[str, ...] = ("vanilla", "SEX", "RAC1P", "SEX_RAC1P")

#: How a stratification is labelled in figures and tables.
STRATA_LABEL: Mapping[str, str] = {
    "vanilla": "no strata",
    "SEX": "SEX",
    "RAC1P": "RAC1P",
    "SEX_RAC1P": "SEX × RAC1P",
}

#: How a grouping is named inside a sentence ("the race groups").
STRATA_PROSE: Mapping[str, str] = {
    "RAC1P": "race",
    "SEX": "sex",
    "SEX_RAC1P": "sex × race",
}

#: The ACS data sets of the synthesis experiments, as a caption names them.
ACS_DATASETS: Mapping[str, str] = {
    "NY-sample": "New York 2018, 20,000-row sample",
    "NM": "New Mexico 2018",
}

#: The same, short (figure titles, table cells).
ACS_SHORT: Mapping[str, str] = {"NY-sample": "New York sample", "NM": "New Mexico"}

#: The same, inside a sentence ("on the New York sample").
ACS_IN_PROSE: Mapping[str, str] = {
    "NY-sample": "the New York sample",
    "NM": "New Mexico",
}

#: The DPSGD-F chapters' training methods.
DPSGD_METHOD_LABEL: Mapping[str, str] = {
    "sgd": "SGD",
    "dpsgd": "DPSGD",
    "dpsgd_2c0": "DPSGD, 2C₀",
    "naive": "Naive",
    "dpsgd_f": "DPSGD-F",
}

# ---------------------------------------------------------------------------- numbers


def _real(value: object, name: str) -> float:
    """Return ``value`` as a float, or raise a TypeError naming the argument."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}.")
    return float(value)


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, numbers.Real) and math.isnan(value))


def fmt(x: float, digits: int = 3) -> str:
    """Format a number for prose: ``digits`` significant digits, trailing zeros kept.

    Numbers that need no fraction at that precision (``10**digits`` and above) are
    written whole, with thousands separators. A missing value (NaN) is an en dash.

    Args:
        x: The number.
        digits: Significant digits, at least 1.

    Returns:
        The text.

    Raises:
        TypeError: If ``x`` is not a real number.
        ValueError: If ``digits`` is below 1.

    Examples:
        >>> fmt(4), fmt(0.73), fmt(0.0123456), fmt(999.6), fmt(12345.6), fmt(
        ...     float("nan"))
        ('4.00', '0.730', '0.0123', '1,000', '12,346', '–')
    """
    value = _real(x, "x")
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"digits must be an integer of at least 1, got {digits!r}.")
    if math.isnan(value):
        return "–"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    text = f"{value:#.{digits}g}"
    if abs(value) >= 10**digits or abs(float(text)) >= 10**digits:
        return f"{value:,.0f}"
    return text.rstrip(".")


def decimals_for(x: float) -> int:
    """Return decimals that keep a column narrow: 3 below 10, 1 below 100, else 0.

    >>> decimals_for(0.5), decimals_for(12.3), decimals_for(450.0)
    (3, 1, 0)
    """
    size = abs(_real(x, "x"))
    return 3 if size < 10 else 1 if size < 100 else 0


def mean_sd(mean: float, sd: float | None = None, *, decimals: int | None = 3) -> str:
    """Format "mean ± sd" with fixed decimals; just the mean when ``sd`` is missing.

    A standard deviation over one seed is NaN (pandas' ``std``), so a single seed gives
    no ``±``.

    Args:
        mean: The mean over seeds.
        sd: Their standard deviation, or None / NaN.
        decimals: Digits after the point for both; None picks them from the mean's size
            (:func:`decimals_for`).

    Returns:
        The text, e.g. ``"0.784 ± 0.002"``.

    Raises:
        TypeError: If ``mean`` or ``sd`` is not a real number.
        ValueError: If ``decimals`` is negative or ``sd`` is negative.

    Examples:
        >>> mean_sd(0.78412, 0.0021), mean_sd(0.78412, float("nan"))
        ('0.784 ± 0.002', '0.784')
        >>> mean_sd(123.4, 5.6, decimals=None)
        '123 ± 6'
    """
    m = _real(mean, "mean")
    d = decimals_for(m) if decimals is None else decimals
    if isinstance(d, bool) or not isinstance(d, int) or d < 0:
        raise ValueError(f"decimals must be a non-negative integer or None, got {d!r}.")
    text = f"{m:.{d}f}"
    if _missing(sd):
        return text
    s = _real(sd, "sd")
    if s < 0:
        raise ValueError(
            f"sd must be >= 0, got {s}; pass the standard deviation itself."
        )
    return f"{text} ± {s:.{d}f}"


def plural(n: int, word: str, many: str | None = None) -> str:
    """Return ``"1 seed"`` or ``"3 seeds"``: the count and the word in the right number.

    >>> plural(1, "seed"), plural(2, "near tie"), plural(0, "data set", "data sets")
    ('1 seed', '2 near ties', '0 data sets')
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"n must be an integer count, got {type(n).__name__}.")
    return f"{n} {word if n == 1 else (many or word + 's')}"


# ------------------------------------------------------------------ seeds and captions


def _seed_list(seeds: Iterable[int]) -> list[int]:
    if isinstance(seeds, str | bytes) or not isinstance(seeds, Iterable):
        raise TypeError(
            f"seeds must be an iterable of integers (a list, a tuple, a column), "
            f"got {type(seeds).__name__}."
        )
    found = list(seeds)
    for s in found:
        if isinstance(s, bool) or not isinstance(s, numbers.Integral):
            raise TypeError(f"seeds must be integers, got {s!r}.")
    if not found:
        raise ValueError(
            "seeds is empty: a result with no seed has nothing to describe."
        )
    return sorted({int(s) for s in found})


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def e_to_the(k: int) -> str:
    """Write the budget e^k as plain text with a superscript, for glued text and tables.

    Glued text is not typeset as math, so ``$e^2$`` would show its dollars.

    Raises:
        TypeError: If ``k`` is not an integer.

    Examples:
        >>> e_to_the(2), e_to_the(0), e_to_the(-1)
        ('e²', 'e⁰', 'e⁻¹')
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(
            f"k must be an integer exponent, got {k!r}; round log(epsilon)."
        )
    return "e" + str(int(k)).translate(_SUPERSCRIPT)


def seeds_text(seeds: Iterable[int], *, mean_over: bool = False) -> str:
    """Name the seeds: ``"seed 0"``, ``"seeds 0, 1, 2"``, ``"seeds 0–9"`` (each once).

    Four or more consecutive seeds are written as a range.

    Args:
        seeds: The seeds, e.g. ``Source.seeds`` or a table's ``seed`` column.
        mean_over: Prefix ``"mean over "`` when there are several seeds.

    Returns:
        The text.

    Raises:
        TypeError: If the seeds are not integers.
        ValueError: If there are none.

    Examples:
        >>> (seeds_text([2, 0, 1, 0]), seeds_text((3,)),
        ...  seeds_text([0, 1], mean_over=True))
        ('seeds 0, 1, 2', 'seed 3', 'mean over seeds 0, 1')
        >>> seeds_text(range(10)), seeds_text([0, 1, 2, 3, 5, 7])
        ('seeds 0–9', 'seeds 0–3, 5, 7')
    """
    found = _seed_list(seeds)
    several = len(found) > 1
    runs: list[list[int]] = []
    for s in found:
        if runs and s == runs[-1][-1] + 1:
            runs[-1].append(s)
        else:
            runs.append([s])
    parts = [f"{r[0]}–{r[-1]}" if len(r) >= 4 else ", ".join(map(str, r)) for r in runs]
    text = ("seeds " if several else "seed ") + ", ".join(parts)
    return ("mean over " if mean_over and several else "") + text


def spread_text(n_seeds: int) -> str:
    """Say what a figure's error bars are, given how many seeds it averages.

    >>> spread_text(3), spread_text(1)
    ('mean ± sd over seeds', 'a single seed, so no error bars')
    """
    if isinstance(n_seeds, bool) or not isinstance(n_seeds, numbers.Integral):
        raise TypeError(f"n_seeds must be an integer, got {type(n_seeds).__name__}.")
    if n_seeds < 1:
        raise ValueError(f"n_seeds must be at least 1, got {n_seeds}.")
    return "mean ± sd over seeds" if n_seeds > 1 else "a single seed, so no error bars"


def seeds_caption(data: str, profile: str, seeds: Iterable[int]) -> str:
    """Return a figure caption's last sentence: data set, profile, seeds and error bars.

    >>> seeds_caption("New Mexico 2018", "paper", [0, 1])
    'New Mexico 2018; profile paper, seeds 0, 1; mean ± sd over seeds.'
    """
    found = _seed_list(seeds)
    return f"{data}; profile {profile}, {seeds_text(found)}; {spread_text(len(found))}."


# ------------------------------------------------------------------------------ tables


def markdown_table(frame: pd.DataFrame, *, code_columns: Iterable[str] = ()) -> str:
    """Render a small DataFrame as a Markdown table (for ``display(Markdown(...))``).

    The book's theme styles Markdown tables (and lets wide ones scroll), which reads
    better than a raw HTML dump of the frame. Cells of ``code_columns`` are set in code
    font; pipes in cell text are escaped; the space after a ``±`` becomes a no-break
    space, so that a narrow column breaks a mean and its spread before the ``±``
    rather than leaving it at the end of a line.

    Args:
        frame: The table; its index is not shown (``reset_index()`` first to show it).
        code_columns: Names of the columns whose cells are code.

    Returns:
        The Markdown text.

    Raises:
        TypeError: If ``frame`` is not a DataFrame.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(
            f"frame must be a pandas DataFrame, got {type(frame).__name__}; "
            "wrap rows with pd.DataFrame(rows)."
        )
    code = set(code_columns)

    def cell(column: str, value: object) -> str:
        text = "" if value is None else str(value)
        text = text.replace("|", "\\|").replace("\n", " ")
        text = text.replace(" ± ", " ±\u00a0")
        return f"`{text}`" if column in code and text else text

    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = [
        "| "
        + " | ".join(cell(c, v) for c, v in zip(frame.columns, row, strict=True))
        + " |"
        for row in frame.itertuples(index=False)
    ]
    return "\n".join([header, rule, *rows])


# ------------------------------------------------------------------- paper against ours

#: The verdict classes of a paper-vs-ours comparison (DESIGN.md, "Verdicts"), in the
#: order tables count them.
VERDICTS: tuple[str, ...] = (
    "reproduces",
    "differs",
    "inconclusive",
    "degenerate",
    "not comparable",
)


def judge(
    paper: float | None,
    ours: float | None,
    *,
    tolerance: float | None = None,
    verdict: str | None = None,
) -> str:
    """Decide whether our number reproduces the paper's.

    With a ``tolerance``, the verdict is "reproduces" when ``|ours - paper|`` is at most
    the tolerance (inclusive, up to floating-point rounding), else "differs"; a missing
    number on either side is "not comparable". An explicit ``verdict`` is returned as
    is, for comparisons a number cannot settle (a different setup, a claim read off a
    plot).

    Args:
        paper: The paper's number, or None / NaN if it gives none.
        ours: Our number (a mean over seeds), or None / NaN.
        tolerance: The largest absolute difference that still reproduces.
        verdict: One of :data:`VERDICTS`, instead of a tolerance.

    Returns:
        One of :data:`VERDICTS`.

    Raises:
        ValueError: If both or neither of ``tolerance`` and ``verdict`` are given, the
            verdict is unknown, or the tolerance is negative or not finite.
        TypeError: If a number is not a real number.

    Examples:
        >>> judge(0.80, 0.78, tolerance=0.02), judge(0.80, 0.77, tolerance=0.02)
        ('reproduces', 'differs')
    """
    if (tolerance is None) == (verdict is None):
        raise ValueError(
            "give either a tolerance (the verdict is then computed) or an explicit "
            "verdict, not both and not neither."
        )
    if verdict is not None:
        if verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {verdict!r}.")
        return verdict
    tol = _real(tolerance, "tolerance")
    if not math.isfinite(tol) or tol < 0:
        raise ValueError(f"tolerance must be finite and >= 0, got {tol}.")
    if _missing(paper) or _missing(ours):
        return "not comparable"
    diff = abs(_real(ours, "ours") - _real(paper, "paper"))
    within = diff <= tol or math.isclose(diff, tol, rel_tol=1e-9, abs_tol=1e-12)
    return "reproduces" if within else "differs"


@dataclass(frozen=True)
class Comparison:
    """One row of a paper-vs-ours table.

    Attributes:
        quantity: What is compared, with the paper's table and row ("Table 1, Adult,
            DPSGD accuracy").
        paper: The paper's number, or None where it gives none.
        mean: Our mean over seeds, or None where we have none.
        sd: Our standard deviation over seeds (None or NaN for one seed).
        n_seeds: How many seeds ``mean`` averages; 1 also for a deterministic number.
        tolerance: Largest absolute difference that reproduces; or give ``verdict``.
        verdict: An explicit verdict (one of :data:`VERDICTS`) instead of a tolerance.
        note: Why, for a row that differs or is not comparable; required when such a
            verdict is given explicitly.
        decimals: Decimals of our mean, sd and the difference (the paper's number is
            shown as given).
    """

    quantity: str
    paper: float | None
    mean: float | None
    sd: float | None = None
    n_seeds: int = 1
    tolerance: float | None = None
    verdict: str | None = None
    note: str = ""
    decimals: int = 3

    def __post_init__(self) -> None:
        if not isinstance(self.quantity, str) or not self.quantity.strip():
            raise TypeError(
                "quantity must be a non-empty string naming what is compared."
            )
        for name in ("paper", "mean", "sd"):
            value = getattr(self, name)
            if not _missing(value):
                _real(value, name)
        n = self.n_seeds
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"n_seeds must be an integer of at least 1, got {n!r}.")
        if not _missing(self.sd):
            if n == 1:
                raise ValueError(
                    "a single seed has no standard deviation: pass sd=None, or give "
                    "n_seeds, the number of seeds the sd is taken over."
                )
            if self.sd < 0:
                raise ValueError(f"sd must be >= 0, got {self.sd}.")
        if not isinstance(self.note, str):
            raise TypeError(f"note must be a string, got {type(self.note).__name__}.")
        if self.verdict in VERDICTS[1:] and not self.note.strip():
            raise ValueError(
                f"an explicit verdict {self.verdict!r} needs a note that says why "
                f"({self.quantity!r})."
            )
        if isinstance(self.decimals, bool) or not isinstance(self.decimals, int):
            raise TypeError("decimals must be an integer.")
        if self.decimals < 0:
            raise ValueError(f"decimals must be >= 0, got {self.decimals}.")
        self.outcome  # noqa: B018  (checks tolerance and verdict now, not at rendering)

    @property
    def outcome(self) -> str:
        """The verdict: the explicit one, or the one the tolerance gives."""
        return judge(
            self.paper, self.mean, tolerance=self.tolerance, verdict=self.verdict
        )

    def row(self) -> dict[str, object]:
        """Return the row as the table shows it (all cells text, but ``seeds``)."""
        d = self.decimals
        comparable = not (_missing(self.paper) or _missing(self.mean))
        note = self.note
        if not note and self.outcome == "not comparable":
            note = "no number on one side"
        return {
            "quantity": self.quantity,
            "paper": "–" if _missing(self.paper) else f"{float(self.paper):,.15g}",
            "ours (mean ± sd)": "–"
            if _missing(self.mean)
            else mean_sd(self.mean, self.sd, decimals=d),
            "seeds": self.n_seeds,
            "difference": f"{float(self.mean) - float(self.paper):+.{d}f}"
            if comparable
            else "–",
            "verdict": self.outcome,
            "note": note,
        }


def _as_comparison(row: Comparison | Mapping[str, object]) -> Comparison:
    if isinstance(row, Comparison):
        return row
    if not isinstance(row, Mapping):
        raise TypeError(
            f"each row must be a Comparison or a mapping of its fields, "
            f"got {type(row).__name__}."
        )
    known = {f.name for f in fields(Comparison)}
    unknown = sorted(set(row) - known)
    if unknown:
        raise ValueError(f"unknown fields {unknown}; a row takes {sorted(known)}.")
    missing = sorted({"quantity", "paper", "mean"} - set(row))
    if missing:
        raise ValueError(f"row {dict(row)!r} lacks {missing}; give None for no number.")
    return Comparison(**row)  # type: ignore[arg-type]


def verdict_table(rows: Iterable[Comparison | Mapping[str, object]]) -> pd.DataFrame:
    """Tabulate the paper's numbers beside ours, with the difference and a verdict.

    Args:
        rows: :class:`Comparison` objects, or mappings with its fields.

    Returns:
        A DataFrame with the columns quantity, paper, ours (mean ± sd), seeds,
        difference (ours minus paper), verdict and note, one row per comparison; render
        it with :func:`markdown_table`. The note column is left out when no row has a
        note, so that a rendered table carries no empty column.

    Raises:
        TypeError: If a row is neither a Comparison nor a mapping, or has a wrong type.
        ValueError: If there are no rows, or a row is invalid (see :class:`Comparison`).

    Examples:
        >>> t = verdict_table([{"quantity": "ε, MNIST", "paper": 6.55, "mean": 6.5512,
        ...                     "tolerance": 0.01}])
        >>> t.loc[0, ["paper", "ours (mean ± sd)", "difference", "verdict"]].tolist()
        ['6.55', '6.551', '+0.001', 'reproduces']
        >>> "note" in t.columns
        False
    """
    if isinstance(rows, Mapping | Comparison):
        rows = [rows]
    table = [_as_comparison(r).row() for r in rows]
    if not table:
        raise ValueError("no rows: give at least one comparison.")
    frame = pd.DataFrame(table)
    if not frame["note"].str.strip().astype(bool).any():
        frame = frame.drop(columns="note")
    return frame


def verdict_columns(
    columns: Mapping[str, Iterable[Comparison | Mapping[str, object]]],
) -> pd.DataFrame:
    """One table of the paper's numbers beside several of ours: a column pair per run.

    Each entry of ``columns`` is one way of computing our side (a training loop, an
    encoding) as a list of comparisons of the same quantities in the same order; the
    table has the quantity and the paper's number once, then ours and its verdict for
    each.

    Args:
        columns: ``{column name: comparisons}``, every list over the same quantities.

    Returns:
        A DataFrame with the columns quantity, paper, then ``<name>`` and
        ``<name>: verdict`` for each name; render it with :func:`markdown_table`.

    Raises:
        ValueError: If there are no columns, or the lists differ in their quantities or
            the paper's numbers.

    Examples:
        >>> row = {"quantity": "Δ, total", "paper": -0.10, "tolerance": 0.02}
        >>> a, b = [{**row, "mean": -0.09}], [{**row, "mean": -0.04}]
        >>> verdict_columns({"ours": a, "full": b}).iloc[0].tolist()
        ['Δ, total', '-0.1', '-0.090', 'reproduces', '-0.040', 'differs']
    """
    tables = {n: [_as_comparison(r).row() for r in rows] for n, rows in columns.items()}
    if not tables:
        raise ValueError("no columns: give at least one list of comparisons.")
    first_name, first = next(iter(tables.items()))
    out = [{"quantity": r["quantity"], "paper": r["paper"]} for r in first]
    for name, rows in tables.items():
        keys = [(r["quantity"], r["paper"]) for r in rows]
        if keys != [(r["quantity"], r["paper"]) for r in first]:
            raise ValueError(
                f"column {name!r} compares other quantities than {first_name!r}: give "
                "every column the same quantities, in the same order."
            )
        for row, r in zip(out, rows, strict=True):
            row[name] = r["ours (mean ± sd)"]
            row[f"{name}: verdict"] = r["verdict"]
    return pd.DataFrame(out)


# ---------------------------------------------------------- one method against another


def better_at(
    rows: pd.DataFrame,
    *,
    x: str,
    value: str,
    method: str,
    baseline: str,
    by: str | None = None,
    lower: bool = True,
) -> pd.DataFrame:
    """List the settings at which one method beats another, e.g. the k of each variable.

    Rows that share a setting (``by``, ``x``) and a method are averaged first (several
    stratifications with the same number of groups, say); a setting counts when both
    methods have a mean there.

    Args:
        rows: Tidy results with the columns ``method``, ``x``, ``value`` (and ``by``).
        x: The column of the settings, e.g. ``"k"``.
        value: The column compared, e.g. ``"parity_error"``.
        method: The method whose wins are listed.
        baseline: The method it is compared with.
        by: A column to list the wins separately for (``"variable"``), in order of
            appearance; None for one row.
        lower: Whether a lower value is better (else higher).

    Returns:
        One row per value of ``by``: ``by`` (when given), ``better at`` (the settings
        where ``method``'s mean beats ``baseline``'s, ascending, as a list) and
        ``compared`` (how many settings both have).

    Raises:
        ValueError: If a column is missing or a method has no rows.

    Examples:
        >>> rows = pd.DataFrame({"method": ["a", "b"] * 3, "k": [2, 2, 4, 4, 8, 8],
        ...                      "err": [1.0, 2.0, 3.0, 2.0, 1.0, 5.0]})
        >>> out = better_at(rows, x="k", value="err", method="a", baseline="b")
        >>> out.loc[0, "better at"], int(out.loc[0, "compared"])
        ([2, 8], 3)
    """
    needed = {"method", x, value} | ({by} if by is not None else set())
    missing = sorted(needed - set(rows.columns))
    if missing:
        raise ValueError(f"rows lack the columns {missing}.")
    for name in (method, baseline):
        if not (rows["method"] == name).any():
            raise ValueError(
                f"no rows of method {name!r}; the methods are "
                f"{sorted(rows['method'].unique())}."
            )
    keys = [by, x] if by is not None else [x]
    means = (
        rows[rows["method"].isin([method, baseline])]
        .groupby([*keys, "method"], sort=False)[value]
        .mean()
        .unstack("method")
        .dropna(subset=[method, baseline])
    )
    wins = means[method] < means[baseline] if lower else means[method] > means[baseline]
    out = []
    groups = pd.unique(rows[by]) if by is not None else [None]
    for group in groups:
        w = wins if by is None else wins[wins.index.get_level_values(by) == group]
        settings = w.index.get_level_values(x)
        better = sorted(
            s.item() if hasattr(s, "item") else s for s in settings[w.to_numpy()]
        )
        row = {} if by is None else {by: group}
        out.append({**row, "better at": better, "compared": len(w)})
    return pd.DataFrame(out)


# --------------------------------------------------------- the paper against our seeds


def comparison_over_seeds(
    quantity: str,
    paper: float | None,
    values: Iterable[float],
    *,
    tolerance: float | None = None,
    verdict: str | None = None,
    note: str = "",
    decimals: int = 3,
) -> Comparison:
    """Build a :class:`Comparison` from our per-seed values: their mean, sd and count.

    The standard deviation is the sample one (``ddof=1``, as pandas' ``std``); a single
    seed has none. Missing values (NaN) are dropped first; with none left, our side is
    missing and the row is "not comparable" under a tolerance.

    Args:
        quantity: What is compared, with the paper's table and row.
        paper: The paper's number, or None where it gives none.
        values: Our value of each seed (a list, an array, a column).
        tolerance: Largest absolute difference of the mean that still reproduces.
        verdict: An explicit verdict instead of a tolerance (see :func:`judge`).
        note: Why, for a row that differs or is not comparable.
        decimals: Decimals of our mean, sd and the difference.

    Returns:
        The comparison, a row for :func:`verdict_table`.

    Raises:
        TypeError: If a value is not a real number.
        ValueError: As :class:`Comparison` does (tolerance and verdict, note).

    Examples:
        >>> c = comparison_over_seeds("Δ, class 8", -0.68, [-0.88, -0.90, -0.89],
        ...                           tolerance=0.02)
        >>> c.row()["ours (mean ± sd)"], c.n_seeds, c.outcome
        ('-0.890 ± 0.010', 3, 'differs')
    """
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise TypeError(
            f"values must be an iterable of numbers (one per seed), "
            f"got {type(values).__name__}."
        )
    found = [_real(v, "each value") for v in values]
    found = [v for v in found if not math.isnan(v)]
    n = len(found)
    mean = math.fsum(found) / n if n else None
    sd = None
    if n > 1:
        sd = math.sqrt(math.fsum((v - mean) ** 2 for v in found) / (n - 1))
    return Comparison(
        quantity=quantity,
        paper=paper,
        mean=mean,
        sd=sd,
        n_seeds=max(n, 1),
        tolerance=tolerance,
        verdict=verdict,
        note=note,
        decimals=decimals,
    )


def match_groups_by_size(
    ours: Mapping[str, int], paper: Mapping[str, int]
) -> dict[str, str]:
    """Match a paper's groups to ours by their sizes: ``{paper's group: our group}``.

    A paper that names its groups without their codes can still be matched by the number
    of people it reports for each (the DPSGD-F paper's "Sample size" row, for one): each
    of its groups goes to the one group of ours with exactly that many members.

    Args:
        ours: Our groups' sizes (members in the data, all splits together).
        paper: The paper's groups' sizes, as it reports them.

    Returns:
        For each of the paper's groups, the group of ours of the same size.

    Raises:
        ValueError: If a paper's group has no group of ours of its size, or several
            (then sizes cannot say which is which: match by a codebook instead).

    Examples:
        >>> match_groups_by_size({"male": 30273, "female": 30147},
        ...                      {"M": 30147, "F": 30273})
        {'M': 'female', 'F': 'male'}
    """
    matched = {}
    for group, size in paper.items():
        found = [g for g, n in ours.items() if int(n) == int(size)]
        if len(found) != 1:
            raise ValueError(
                f"the paper's group {group!r} has {int(size):,} members and "
                f"{len(found)} of our groups have as many ({dict(ours)}): sizes cannot "
                "match it; match the groups by a codebook instead"
            )
        matched[group] = found[0]
    return matched


# ------------------------------------------- the paper, the authors' files and ours


def _cell(value: object, decimals: int | None) -> str:
    """A number or a text as a table cell: numbers as given, or to ``decimals``."""
    if _missing(value):
        return "–"
    if isinstance(value, str):
        return value
    x = _real(value, "value")
    return f"{x:,.15g}" if decimals is None else f"{x:,.{decimals}f}"


@dataclass(frozen=True)
class PaperCheck:
    """One row of a paper / authors' files / ours table, for numbers and claims alike.

    Where both the paper and we give a number, a ``tolerance`` decides the verdict as
    in :func:`judge`; a claim without a number (a direction, a comparison) takes an
    explicit ``verdict`` and a ``note`` saying why.

    Attributes:
        item: What is compared, with the paper's table, figure or section.
        paper: The paper's number, or its claim as text.
        ours: Our number (a mean over seeds where ``n_seeds > 1``), our result as text
            (``"2 of 54"``), or None where we have none.
        authors: The number the authors' released files give (as text, with the file
            named in ``note`` or the chapter), or None.
        sd: Our standard deviation over seeds, for a numeric ``ours``.
        n_seeds: How many seeds ``ours`` averages.
        tolerance: Largest absolute difference that reproduces (numbers only).
        verdict: An explicit verdict (one of :data:`VERDICTS`) instead of a tolerance.
        note: Why; required for an explicit "differs" or "not comparable".
        decimals: Decimals of a numeric ``ours``.
    """

    item: str
    paper: str | float | None
    ours: str | float | None
    authors: str | float | None = None
    sd: float | None = None
    n_seeds: int = 1
    tolerance: float | None = None
    verdict: str | None = None
    note: str = ""
    decimals: int = 3

    def __post_init__(self) -> None:
        if not isinstance(self.item, str) or not self.item.strip():
            raise TypeError("item must be a non-empty string naming what is compared.")
        for name in ("paper", "ours", "authors"):
            value = getattr(self, name)
            if not (value is None or isinstance(value, str)):
                _real(value, name)
        if not isinstance(self.note, str):
            raise TypeError(f"note must be a string, got {type(self.note).__name__}.")
        if self.tolerance is not None and (
            isinstance(self.paper, str) or isinstance(self.ours, str)
        ):
            raise ValueError(
                f"{self.item!r}: a tolerance compares two numbers; for a claim given "
                "as text pass verdict=... and a note instead."
            )
        if self.verdict in VERDICTS[1:] and not self.note.strip():
            raise ValueError(
                f"an explicit verdict {self.verdict!r} needs a note that says why "
                f"({self.item!r})."
            )
        if self.sd is not None:
            # The same rules for seeds and spread as a Comparison row.
            Comparison(
                "sd", None, None, sd=self.sd, n_seeds=self.n_seeds, verdict="reproduces"
            )
        if isinstance(self.decimals, bool) or not isinstance(self.decimals, int):
            raise TypeError("decimals must be an integer.")
        self.outcome  # noqa: B018  (checks tolerance and verdict now)

    @property
    def outcome(self) -> str:
        """The verdict: the explicit one, or the one the tolerance gives."""
        paper = None if isinstance(self.paper, str) else self.paper
        ours = None if isinstance(self.ours, str) else self.ours
        return judge(paper, ours, tolerance=self.tolerance, verdict=self.verdict)

    def row(self) -> dict[str, str]:
        """Return the row as the table shows it."""
        if isinstance(self.ours, str) or _missing(self.ours):
            ours = _cell(self.ours, None)
        else:
            ours = mean_sd(float(self.ours), self.sd, decimals=self.decimals)
            if self.n_seeds > 1:
                ours += f" ({self.n_seeds} seeds)"
        note = self.note or (
            "no number on one side" if self.outcome == "not comparable" else ""
        )
        return {
            "item": self.item,
            "paper": _cell(self.paper, None),
            "authors' files": _cell(self.authors, None),
            "ours": ours,
            "verdict": self.outcome,
            "why": note,
        }


def paper_check_table(
    rows: Iterable[PaperCheck | Mapping[str, object]],
) -> pd.DataFrame:
    """Tabulate the paper's numbers and claims, the authors' files' numbers and ours.

    Args:
        rows: :class:`PaperCheck` objects, or mappings with its fields.

    Returns:
        A DataFrame with the columns item, paper, authors' files, ours, verdict and
        why, one row per check (render it with :func:`markdown_table`). The authors'
        column is left out when no row has a number there.

    Raises:
        TypeError: If a row is neither a PaperCheck nor a mapping, or has a wrong type.
        ValueError: If there are no rows, or a row is invalid (see :class:`PaperCheck`).

    Examples:
        >>> t = paper_check_table([
        ...     PaperCheck("Fig. 3: error, n >= 10,000", 0.01, 0.0062, tolerance=0.01),
        ...     PaperCheck("Fig. 5: all synthesizers gain", "stratifying lowers it",
        ...                "2 of 54", authors="26 of 54", verdict="differs",
        ...                note="loses most comparisons")])
        >>> t.verdict.tolist(), t["authors' files"].tolist()
        (['reproduces', 'differs'], ['–', '26 of 54'])
    """
    if isinstance(rows, Mapping | PaperCheck):
        rows = [rows]
    table = []
    for row in rows:
        if isinstance(row, Mapping):
            known = {f.name for f in fields(PaperCheck)}
            unknown = sorted(set(row) - known)
            if unknown:
                raise ValueError(
                    f"unknown fields {unknown}; a row takes {sorted(known)}."
                )
            row = PaperCheck(**row)  # type: ignore[arg-type]
        elif not isinstance(row, PaperCheck):
            raise TypeError(
                f"each row must be a PaperCheck or a mapping of its fields, "
                f"got {type(row).__name__}."
            )
        table.append(row.row())
    if not table:
        raise ValueError("no rows: give at least one check.")
    frame = pd.DataFrame(table)
    if (frame["authors' files"] == "–").all():
        frame = frame.drop(columns="authors' files")
    return frame


def verdict_counts(verdicts: Iterable[object] | pd.DataFrame) -> dict[str, int]:
    """Count verdicts by class, every class of :data:`VERDICTS` included (zeros too).

    Args:
        verdicts: A table with a ``verdict`` column (:func:`paper_check_table`,
            :func:`verdict_table`, ``verdict_frame``), verdict names, or objects with
            an ``outcome`` (a :class:`PaperCheck`, a findings ``Verdict``).

    Raises:
        ValueError: For an unknown verdict or a table without a verdict column.
    """
    if isinstance(verdicts, pd.DataFrame):
        if "verdict" not in verdicts.columns:
            raise ValueError("the table has no 'verdict' column.")
        found = verdicts["verdict"].tolist()
    else:
        found = [v if isinstance(v, str) else v.outcome for v in verdicts]
    unknown = sorted(set(found) - set(VERDICTS))
    if unknown:
        raise ValueError(f"unknown verdicts {unknown}; expected {VERDICTS}.")
    return {v: found.count(v) for v in VERDICTS}


_VERB = {
    "reproduces": ("reproduces", "reproduce"),
    "differs": ("differs", "differ"),
    "inconclusive": ("is inconclusive", "are inconclusive"),
    "degenerate": ("is degenerate", "are degenerate"),
    "not comparable": ("is not comparable", "are not comparable"),
}


def verdict_counts_text(
    verdicts: Iterable[object] | pd.DataFrame, *, noun: str = "comparison"
) -> str:
    """Say how the verdicts fall, naming only the classes that occur.

    Right at one verdict, at one class and at several; the verbs agree with their
    counts. Capitalise the first letter to start a sentence with it.

    Args:
        verdicts: As :func:`verdict_counts` takes them.
        noun: What each verdict judges, singular (``"statement"``); an ``s`` makes
            the plural.

    Examples:
        >>> verdict_counts_text(pd.DataFrame({"verdict": ["differs", "reproduces"]}))
        'of 2 comparisons, 1 reproduces and 1 differs'
        >>> verdict_counts_text(pd.DataFrame({"verdict": ["differs"] * 3}))
        'all 3 comparisons differ'
        >>> verdict_counts_text(["reproduces"], noun="statement")
        'the one statement reproduces'
        >>> verdict_counts_text(["reproduces", "differs", "differs", "inconclusive"])
        'of 4 comparisons, 1 reproduces, 2 differ and 1 is inconclusive'
    """
    counts = {k: n for k, n in verdict_counts(verdicts).items() if n}
    total = sum(counts.values())
    if total == 0:
        return f"no {noun} yet"
    if len(counts) == 1:
        ((kind, _),) = counts.items()
        one, many = _VERB[kind]
        return f"the one {noun} {one}" if total == 1 else f"all {total} {noun}s {many}"
    parts = [f"{n} {_VERB[k][0] if n == 1 else _VERB[k][1]}" for k, n in counts.items()]
    return f"of {total} {noun}s, " + ", ".join(parts[:-1]) + " and " + parts[-1]


def as_sentence(text: str) -> str:
    """Make a clause a sentence: its first letter capitalised, a full stop at the end.

    >>> as_sentence("of 3 comparisons, 2 differ and 1 reproduces")
    'Of 3 comparisons, 2 differ and 1 reproduces.'
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("text must be a non-empty string.")
    text = text.strip()
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")


def count_of(k: int, n: int, noun: str, many: str | None = None) -> str:
    """Say "k of n nouns", right at 0, 1 and all.

    Examples:
        >>> count_of(0, 16, "loss", "losses"), count_of(16, 16, "loss", "losses")
        ('none of the 16 losses', 'all 16 losses')
        >>> count_of(1, 1, "seed"), count_of(3, 16, "loss", "losses")
        ('the one seed', '3 of 16 losses')
        >>> count_of(1, 5, "seed"), count_of(0, 0, "seed")
        ('1 of 5 seeds', 'no seeds')
    """
    for name, x in (("k", k), ("n", n)):
        if isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < 0:
            raise TypeError(f"{name} must be a non-negative integer count, got {x!r}.")
    if k > n:
        raise ValueError(f"k ({k}) cannot exceed n ({n}).")
    plural = many or noun + "s"
    if n == 0:
        return f"no {plural}"
    if n == 1:
        return f"the one {noun}" if k == 1 else f"not the one {noun}"
    if k == 0:
        return f"none of the {n} {plural}"
    if k == n:
        return f"all {n} {plural}"
    return f"{k} of {n} {plural}"
