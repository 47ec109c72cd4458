"""The chapters' helpers: number formats, seed lists, captions, tables and verdicts.

A number the book states is formatted here, once, so that every chapter writes it the
same way, and the sentences made from verdict counts are built here. The paper-vs-ours
tables themselves are :class:`~dpnotes.findings.verdict.Verdict` tables
(:mod:`dpnotes.findings.verdict`). Figures keep their style in :mod:`dpnotes.plotting`.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Mapping
from typing import Any

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
    "as_sentence",
    "better_at",
    "count_of",
    "decimals_for",
    "e_to_the",
    "fmt",
    "is_number_text",
    "machine_name",
    "markdown_table",
    "match_groups_by_size",
    "mean_sd",
    "number_breaks",
    "plural",
    "seeds_caption",
    "seeds_text",
    "spread_text",
    "verdict_counts",
    "verdict_counts_text",
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


#: The characters of a written number besides its digits.
_NUMBER_SIGNS = frozenset(".,±+-−–%()[]/×≈<>=\u00a0\u2060")


def is_number_text(text: str) -> bool:
    """Whether ``text`` is a written number or a few: digits and the signs of numbers
    make at least 60% of its characters other than spaces.

    >>> is_number_text("0.52 ± 0.01 [0.50, 0.54]"), is_number_text("ε = 1: none")
    (True, False)
    """
    core = "".join(str(text).split())
    if not any(c.isdigit() for c in core):
        return False
    signs = sum(c.isdigit() or c in _NUMBER_SIGNS for c in core)
    return signs >= 0.6 * len(core)


def number_breaks(text: str) -> str:
    """Keep a written number on one line: a line may break only before an interval's
    ``[`` or after a comma between items (outside brackets).

    Every other space becomes a no-break space, and a word joiner follows each en dash
    so that a range (``17–89``) does not break after its dash either.

    >>> number_breaks("0.52 ± 0.01 [0.50, 0.54]").split(" ")
    ['0.52\xa0±\xa00.01', '[0.50,\xa00.54]']
    >>> number_breaks("17–31, 32–45").split(" ")
    ['17–\u206031,', '32–\u206045']
    """
    out, depth = [], 0
    for i, c in enumerate(text):
        if c in "[(":
            depth += 1
        elif c in ")]":
            depth = max(depth - 1, 0)
        if c == " ":
            after_comma = i > 0 and text[i - 1] == ","
            before_interval = text[i + 1 : i + 2] == "["
            keep = depth == 0 and (after_comma or before_interval)
            out.append(" " if keep else "\u00a0")
        elif c == "–":
            out.append("–\u2060")
        else:
            out.append(c)
    return "".join(out)


def markdown_table(frame: pd.DataFrame, *, code_columns: Iterable[str] = ()) -> str:
    """Render a small DataFrame as a Markdown table (for ``display(Markdown(...))``).

    The book's theme styles Markdown tables (and lets wide ones scroll), which reads
    better than a raw HTML dump of the frame. Cells of ``code_columns`` are set in code
    font; pipes in cell text are escaped; the space after a ``±`` becomes a no-break
    space, so that a narrow column breaks a mean and its spread before the ``±``
    rather than leaving it at the end of a line; and a number cell
    (:func:`is_number_text`: ``0.52 ± 0.01 [0.50, 0.54]``) may break only before its
    interval or between the items of a list (:func:`number_breaks`), never inside a
    number, its spread or its interval.

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
        if is_number_text(text):
            text = number_breaks(text)
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


def verdict_counts(verdicts: Iterable[object] | pd.DataFrame) -> dict[str, int]:
    """Count verdicts by class, every class of :data:`VERDICTS` included (zeros too).

    Args:
        verdicts: A table with a ``verdict`` column
            (:func:`dpnotes.findings.verdict.verdict_frame`), verdict names, or
            objects with an ``outcome`` (a findings ``Verdict``).

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


def machine_name(device: Mapping[str, Any] | None) -> str:
    """A machine's name in a caption: its accelerator, else its CPU.

    The vendor's marks and filler words go: ``"Intel(R) Xeon(R) Processor"`` is named
    ``"Intel Xeon"``.

    Examples:
        >>> machine_name({"accelerator": "none", "cpu": "Intel(R) Xeon(R) Processor"})
        'Intel Xeon'
        >>> machine_name({"accelerator": "NVIDIA H200", "cpu": "AMD EPYC"})
        'NVIDIA H200'
    """
    device = device or {}
    accelerator = device.get("accelerator")
    if accelerator not in (None, "none"):
        return str(accelerator)
    name = re.sub(r"\((R|TM|tm)\)", "", str(device.get("cpu") or "unknown"))
    name = re.sub(r"\b(Processor|CPU)\b", "", name)
    return " ".join(name.split()) or "unknown"
