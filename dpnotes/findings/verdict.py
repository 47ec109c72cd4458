"""Verdicts with their uncertainty: ours with a 95% interval beside the paper's value.

A reproduced number is a mean over seeds of a metric measured on one test set. Two
sources of error separate it from the quantity the paper estimates:

* **the seed spread**: the mechanism's and the training's noise, estimated by the
  standard deviation over seeds (standard error ``sd / sqrt(n)``);
* **the test set's sampling error**: the metric is a proportion of a finite test group
  (36 black records in New Mexico PublicCoverage), so even a model without noise would
  score differently on another draw of test records. Every seed uses the same test
  records, so this error does not average out over seeds.

:func:`estimate` combines both as independent sources in
:attr:`Estimate.half_width` (each source's own 95% half-width, Student's t with
``n - 1`` degrees of freedom for the seeds and normal for the test records, added in
quadrature). The test error is binomial, with
the Agresti–Coull adjustment so that an accuracy of 0 or 1 still has an error: the
stored tables hold each group's metric and its test count, not the predictions, so a
bootstrap over test records cannot be run on them, while the binomial error of a
proportion is exact under random sampling of test records and needs only the count.

A :class:`Verdict` compares the paper's value (or a claimed direction) with such an
estimate and classifies it as DESIGN.md's "Verdicts" says:

* *reproduces*: the paper's value is inside our interval or within the stated
  tolerance; for a direction ("A beats B"), the interval of the paired difference lies
  on the claimed side of zero;
* *differs*: outside both; for a direction, the interval lies on the other side;
* *inconclusive*: our interval is wider than the difference the claim is about (the
  paper's value is inside it only because it is wide; a direction's interval holds 0);
* *degenerate*: the model predicts one class, or its values do not move across seeds
  (:func:`degenerate_reason` detects both from the stored metrics);
* *not comparable*: a number is missing on one side, with the reason.

Plain post-processing of released results: no privacy budget is spent here.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from dpnotes.report import (
    VERDICTS,
    count_of,
    mean_sd,
)

__all__ = [
    "LEVEL",
    "Estimate",
    "Tally",
    "Verdict",
    "compact_frame",
    "compare_direction",
    "compare_value",
    "degenerate_reason",
    "difference",
    "estimate",
    "one_class_seeds",
    "tally",
    "values_of_seeds",
    "verdict_columns",
    "verdict_frame",
    "without_shared_reason",
]

#: The coverage of every interval the book shows.
LEVEL = 0.95

_NBSP = "\u00a0"

# Values closer than this count as equal (metrics are stored as floats).
_EQUAL = 1e-12


def _real(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}.")
    return float(value)


def _count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral | float):
        raise TypeError(f"{name} must be a whole count, got {type(value).__name__}.")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"{name} must be a whole count, got {value}.")
    if value < 1:
        raise ValueError(
            f"{name} must be at least 1 (a group with no test records has no metric), "
            f"got {value}."
        )
    return int(value)


def _values(values: Iterable[float], name: str = "values") -> tuple[float, ...]:
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise TypeError(
            f"{name} must be an iterable of numbers, one per seed, got "
            f"{type(values).__name__}."
        )
    found = tuple(_real(v, f"each of {name}") for v in values)
    if not found:
        raise ValueError(f"{name} is empty: give one value per seed.")
    bad = [v for v in found if not math.isfinite(v)]
    if bad:
        raise ValueError(
            f"{name} holds {len(bad)} non-finite value(s) ({bad[0]}): drop the seeds "
            "that have no value and say so, rather than averaging over fewer seeds."
        )
    return found


def _binomial_se(p: float, n: int) -> float:
    """Standard error of a proportion over ``n`` records (Agresti–Coull)."""
    adjusted = (p * n + 2.0) / (n + 4.0)
    return math.sqrt(adjusted * (1.0 - adjusted) / (n + 4.0))


@dataclass(frozen=True)
class Estimate:
    """Ours: a mean over seeds with a 95% interval counting seeds and test records.

    Build it with :func:`estimate` (one metric) or :func:`difference` (a paired
    difference of two); the fields are what the tables show.

    Attributes:
        values: The value of each seed, in seed order.
        se_test: The test set's sampling error of the mean (0 where none is counted).
        n_test: The test records behind the metric (the group's test count), if known.
        level: The interval's coverage.
        proportion: Whether the metric is a proportion: its interval is then cut to
            [0, 1], where every value it can take lies.
    """

    values: tuple[float, ...]
    se_test: float = 0.0
    n_test: int | None = None
    level: float = LEVEL
    proportion: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", _values(self.values))
        se = _real(self.se_test, "se_test")
        if not math.isfinite(se) or se < 0:
            raise ValueError(f"se_test must be finite and >= 0, got {se}.")
        if self.n_test is not None:
            object.__setattr__(self, "n_test", _count(self.n_test, "n_test"))
        if not 0 < self.level < 1:
            raise ValueError(f"level must be in (0, 1), got {self.level}.")

    @property
    def n_seeds(self) -> int:
        """How many seeds the mean averages."""
        return len(self.values)

    @property
    def mean(self) -> float:
        """The mean over seeds."""
        return math.fsum(self.values) / self.n_seeds

    @property
    def sd(self) -> float | None:
        """The sample standard deviation over seeds; None for one seed."""
        if self.n_seeds < 2:
            return None
        m = self.mean
        return math.sqrt(
            math.fsum((v - m) ** 2 for v in self.values) / (self.n_seeds - 1)
        )

    @property
    def seed_spread_counted(self) -> bool:
        """Whether the interval counts the seed spread (it needs two seeds)."""
        return self.n_seeds > 1

    @property
    def se(self) -> float:
        """The standard error of the mean: seed spread and test error together."""
        seed_var = (self.sd or 0.0) ** 2 / self.n_seeds
        return math.sqrt(seed_var + self.se_test**2)

    @property
    def half_width(self) -> float:
        """Half the interval's width: each source's own half-width, in quadrature.

        The seed part is Student's t with ``n - 1`` degrees of freedom times
        ``sd / sqrt(n)``; the test part the normal quantile times the binomial
        error. Adding them in quadrature keeps the width growing with either source
        (a Welch–Satterthwaite t on the summed variance can narrow the interval when
        test error is added, as its degrees of freedom rise).
        """
        q = 0.5 + self.level / 2
        seed = 0.0
        if self.n_seeds > 1 and self.sd:
            seed = (
                float(stats.t.ppf(q, self.n_seeds - 1))
                * self.sd
                / math.sqrt(self.n_seeds)
            )
        test = float(stats.norm.ppf(q)) * self.se_test
        return math.hypot(seed, test)

    @property
    def low(self) -> float:
        """The interval's lower end."""
        low = self.mean - self.half_width
        return max(low, 0.0) if self.proportion else low

    @property
    def high(self) -> float:
        """The interval's upper end."""
        high = self.mean + self.half_width
        return min(high, 1.0) if self.proportion else high

    def contains(self, value: float) -> bool:
        """Return whether ``value`` lies in the interval (ends included)."""
        return self.low - _EQUAL <= value <= self.high + _EQUAL

    def interval_text(self, decimals: int = 3) -> str:
        """The interval as a table shows it, e.g. ``"[0.612, 0.744]"``."""
        return f"[{self.low:.{decimals}f}, {self.high:.{decimals}f}]"


def estimate(
    values: Iterable[float],
    *,
    n_test: int | None = None,
    proportion: bool = True,
    level: float = LEVEL,
) -> Estimate:
    """Build our side of a verdict from per-seed values of one metric.

    Args:
        values: The metric of each seed (accuracy, a rate, an error).
        n_test: The test records the metric is a proportion of (a group's test count;
            for FNR the group's positives). None: no test error is counted (a number
            that is not measured on test records, such as an epsilon).
        proportion: Whether the metric is a proportion of ``n_test`` records (then its
            test error is binomial); False for other metrics, which then need
            ``n_test=None``.
        level: The interval's coverage.

    Returns:
        The :class:`Estimate`.

    Raises:
        TypeError: If a value or ``n_test`` has the wrong type.
        ValueError: If there are no values, a value is not finite, a proportion lies
            outside [0, 1], or ``n_test`` is given for a metric that is no proportion.

    Examples:
        >>> e = estimate([0.80, 0.82, 0.81], n_test=1000)
        >>> round(e.mean, 3), e.n_seeds, e.interval_text()
        (0.81, 3, '[0.775, 0.845]')
        >>> estimate([0.5], n_test=36).interval_text()   # one seed: test error only
        '[0.345, 0.655]'
    """
    found = _values(values)
    se_test = 0.0
    if n_test is not None:
        if not proportion:
            raise ValueError(
                "n_test is the denominator of a proportion: pass proportion=True, or "
                "n_test=None for a metric measured otherwise."
            )
        n = _count(n_test, "n_test")
        outside = [v for v in found if not -_EQUAL <= v <= 1 + _EQUAL]
        if outside:
            raise ValueError(
                f"a proportion lies in [0, 1]; got {outside[0]}: pass percentages "
                "divided by 100."
            )
        se_test = _binomial_se(math.fsum(found) / len(found), n)
    return Estimate(
        found,
        se_test=se_test,
        n_test=n_test,
        level=level,
        proportion=n_test is not None,
    )


def difference(
    a: Iterable[float],
    b: Iterable[float],
    *,
    n_test_a: int | None = None,
    n_test_b: int | None = None,
    level: float = LEVEL,
) -> Estimate:
    """Build the paired difference ``a - b`` over seeds, e.g. "A beats B".

    Seed ``i`` of ``a`` is paired with seed ``i`` of ``b`` (the same data and split),
    so the seed spread is that of the differences. The test errors of the two metrics
    are added as independent variances: exact for two disjoint groups (a gap between
    groups), and an upper bound for two models on the same records when their errors
    are positively correlated, as models trained on the same data are.

    Args:
        a: The first metric, one value per seed.
        b: The second, one value per seed, in the same seed order.
        n_test_a: Test records behind ``a`` (None: no test error for it).
        n_test_b: Test records behind ``b``.
        level: The interval's coverage.

    Returns:
        The :class:`Estimate` of the differences; its ``n_test`` is the smaller count.

    Raises:
        ValueError: If the two have different numbers of seeds (pair them first: a
            difference over fewer seeds than either has is not what it says).

    Examples:
        >>> d = difference([0.70, 0.72, 0.71], [0.60, 0.61, 0.62])
        >>> round(d.mean, 3), d.low > 0
        (0.1, True)
    """
    va, vb = _values(a, "a"), _values(b, "b")
    if len(va) != len(vb):
        raise ValueError(
            f"a has {len(va)} seeds and b {len(vb)}: give both over the same seeds, "
            "in the same order."
        )
    variance = 0.0
    for values, n in ((va, n_test_a), (vb, n_test_b)):
        if n is not None:
            variance += estimate(values, n_test=n).se_test ** 2
    counts = [n for n in (n_test_a, n_test_b) if n is not None]
    return Estimate(
        tuple(x - y for x, y in zip(va, vb, strict=True)),
        se_test=math.sqrt(variance),
        n_test=min(counts) if counts else None,
        level=level,
    )


# ------------------------------------------------------------------------ degenerate


def one_class_seeds(fnr: Iterable[float], fpr: Iterable[float]) -> int:
    """Count the seeds whose model predicts a single class for a group.

    A model predicts only "positive" when its false-negative rate is 0 and its
    false-positive rate 1, and only "negative" in the reverse case.

    Args:
        fnr: The group's false-negative rate, one value per seed.
        fpr: Its false-positive rate, in the same seed order.

    Returns:
        The number of such seeds.

    Examples:
        >>> one_class_seeds([0.0, 0.1], [1.0, 0.4])
        1
    """
    f_n, f_p = _values(fnr, "fnr"), _values(fpr, "fpr")
    if len(f_n) != len(f_p):
        raise ValueError("fnr and fpr must hold the same seeds, in the same order.")
    return sum(
        (abs(n) <= _EQUAL and abs(p - 1) <= _EQUAL)
        or (abs(n - 1) <= _EQUAL and abs(p) <= _EQUAL)
        for n, p in zip(f_n, f_p, strict=True)
    )


def degenerate_reason(
    values: Iterable[float],
    *,
    one_class: int = 0,
    deterministic: bool = False,
) -> str:
    """Say why a model's results are degenerate, or return "" when they are not.

    Detected from the stored metrics, never labelled by hand:

    * its values are identical in every seed (two or more): the model's predictions do
      not move across seeds, so the seed spread is zero by construction and a mean
      over seeds is one number repeated (pass ``deterministic=True`` for a method that
      has no randomness, such as a non-private model on a fixed split);
    * it predicts a single class in some seed (``one_class``, from
      :func:`one_class_seeds`).

    Args:
        values: The compared metric of each seed.
        one_class: Seeds in which the model predicts one class.
        deterministic: Whether the method is deterministic by design.

    Returns:
        The reason, or "" when nothing is degenerate.

    Examples:
        >>> degenerate_reason([0.678, 0.678, 0.678])
        'the same value in all 3 seeds: its predictions do not move across seeds'
        >>> degenerate_reason([0.6, 0.7], one_class=1)
        'predicts one class in 1 of 2 seeds'
        >>> degenerate_reason([0.6, 0.7])
        ''
    """
    found = _values(values)
    n = len(found)
    if isinstance(one_class, bool) or not isinstance(one_class, numbers.Integral):
        raise TypeError("one_class must be a count of seeds.")
    if not 0 <= one_class <= n:
        raise ValueError(
            f"one_class must be between 0 and {n} (the seeds), got {one_class}."
        )
    if one_class:
        return f"predicts one class in {count_of(int(one_class), n, 'seed')}"
    if n > 1 and not deterministic and max(found) - min(found) <= _EQUAL:
        return (
            f"the same value in all {n} seeds: its predictions do not move across seeds"
        )
    return ""


# --------------------------------------------------------------------------- verdicts


@dataclass(frozen=True)
class Verdict:
    """One row of a paper-beside-ours table: the paper's value, ours, and the class.

    Build it with :func:`compare_value` (the paper gives a number) or
    :func:`compare_direction` (the paper claims a direction, "A beats B").

    Attributes:
        quantity: What is compared, with the paper's table or figure and row.
        paper: The paper's number (a value claim), or None.
        ours: Our estimate, or None where we have none.
        outcome: One of :data:`VERDICTS`.
        reason: Why, in a phrase a table shows.
        claim: For a direction, what the paper claims (``"SQ above MST"``); "".
        tolerance: The stated tolerance of a value claim.
        decimals: Decimals of the numbers shown.
        ours_text: Our side as text where it is not one number (a tally, "5 of
            108, 3 beyond doubt"); shown instead of the estimate.
        authors: The number or claim of the authors' released files, as text ("" for
            none); the table shows the column only when a row has one.
        extra: Further columns, by name, as text.
    """

    quantity: str
    paper: float | None
    ours: Estimate | None
    outcome: str
    reason: str
    claim: str = ""
    tolerance: float | None = None
    decimals: int = 3
    extra: Mapping[str, str] = field(default_factory=dict)
    ours_text: str = ""
    authors: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.quantity, str) or not self.quantity.strip():
            raise TypeError(
                "quantity must be a non-empty string naming what is compared."
            )
        for name in ("reason", "claim", "ours_text", "authors"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a string, got {type(value).__name__}.")
        if self.outcome not in VERDICTS:
            raise ValueError(
                f"outcome must be one of {VERDICTS}, got {self.outcome!r}."
            )
        if self.outcome != "reproduces" and not self.reason.strip():
            raise ValueError(
                f"a {self.outcome!r} verdict needs a reason ({self.quantity!r})."
            )

    @property
    def mean(self) -> float | None:
        """Our mean over seeds, or None without a run."""
        return None if self.ours is None else self.ours.mean

    @property
    def sd(self) -> float | None:
        """Our standard deviation over seeds, or None (no run, or one seed)."""
        return None if self.ours is None else self.ours.sd

    @property
    def n_seeds(self) -> int:
        """How many seeds our mean averages (0 without a run)."""
        return 0 if self.ours is None else self.ours.n_seeds

    def row(self) -> dict[str, object]:
        """Return the row as a table shows it (every cell text but ``seeds``)."""
        d = self.decimals
        o = self.ours
        paper = self.claim or ("–" if self.paper is None else f"{self.paper:,.15g}")
        return {
            "quantity": self.quantity,
            "paper": paper,
            # No-break spaces: a narrow column wraps between numbers, never inside one.
            "authors' files": self.authors or "–",
            "ours (mean ± sd)": self.ours_text
            or (
                "–"
                if o is None
                else mean_sd(o.mean, o.sd, decimals=d).replace(" ", _NBSP)
            ),
            "95% interval": "–"
            if o is None or self.ours_text
            else o.interval_text(d).replace(" ", _NBSP),
            "seeds": 0 if o is None else o.n_seeds,
            "test n": "–" if o is None or o.n_test is None else f"{o.n_test:,}",
            "verdict": self.outcome,
            "why": self.reason,
            **self.extra,
        }


def _quantity(quantity: str) -> str:
    if not isinstance(quantity, str) or not quantity.strip():
        raise TypeError("quantity must be a non-empty string naming what is compared.")
    return quantity


def compare_value(
    quantity: str,
    paper: float | None,
    ours: Estimate | None,
    *,
    tolerance: float | None = None,
    degenerate: str = "",
    missing: str = "",
    decimals: int = 3,
) -> Verdict:
    """Judge our estimate of a number against the paper's.

    In this order: *not comparable* when either side is missing; *degenerate* when a
    reason is given (:func:`degenerate_reason`); *reproduces* when our mean is within
    ``tolerance`` of the paper's value; *differs* when the paper's value lies outside
    our interval (and beyond the tolerance); otherwise the paper's value is inside our
    interval: *inconclusive* when a tolerance is stated (the interval is then wider
    than the tolerance, the difference the claim is about), else *reproduces*.

    Args:
        quantity: What is compared, with the paper's table and row.
        paper: The paper's number, or None.
        ours: Our :class:`Estimate`, or None.
        tolerance: Largest absolute difference of our mean that reproduces.
        degenerate: A reason from :func:`degenerate_reason`, or "".
        missing: Why a side is missing (shown for *not comparable*).
        decimals: Decimals of the numbers shown.

    Returns:
        The :class:`Verdict`.

    Raises:
        TypeError: If ``ours`` is not an Estimate or a number has the wrong type.
        ValueError: If ``tolerance`` is negative or not finite.

    Examples:
        >>> compare_value("accuracy", 0.80, estimate([0.79, 0.795], n_test=5000),
        ...               tolerance=0.02).outcome
        'reproduces'
        >>> v = compare_value("black FNR", 0.09, estimate([0.20, 0.25], n_test=36),
        ...                   tolerance=0.02)
        >>> v.outcome, v.ours.interval_text()
        ('inconclusive', '[0.000, 0.570]')
    """
    quantity = _quantity(quantity)
    tol = None
    if tolerance is not None:
        tol = _real(tolerance, "tolerance")
        if not math.isfinite(tol) or tol < 0:
            raise ValueError(f"tolerance must be finite and >= 0, got {tol}.")
    if ours is not None and not isinstance(ours, Estimate):
        raise TypeError(
            f"ours must be an Estimate (see estimate()), got {type(ours).__name__}."
        )
    p = (
        None
        if paper is None or (isinstance(paper, float) and math.isnan(paper))
        else paper
    )
    if p is not None:
        p = _real(p, "paper")

    def verdict(outcome: str, reason: str) -> Verdict:
        return Verdict(
            quantity, p, ours, outcome, reason, tolerance=tol, decimals=decimals
        )

    if p is None or ours is None:
        side = "the paper gives no number" if p is None else "no run of ours"
        return verdict("not comparable", missing or side)
    if degenerate:
        return verdict("degenerate", degenerate)
    diff = ours.mean - p
    if tol is not None and (
        abs(diff) <= tol or math.isclose(abs(diff), tol, abs_tol=1e-12)
    ):
        return verdict("reproduces", f"our mean within ±{tol:g}")
    if not ours.contains(p):
        return verdict(
            "differs",
            "outside our interval" + (f" and ±{tol:g}" if tol is not None else ""),
        )
    if tol is not None:
        return verdict(
            "inconclusive",
            f"inside our interval, which is wider than ±{tol:g}",
        )
    return verdict("reproduces", "inside our interval")


def compare_direction(
    quantity: str,
    claim: str,
    ours: Estimate | None,
    *,
    degenerate: str = "",
    missing: str = "",
    decimals: int = 3,
) -> Verdict:
    """Judge a claimed direction ("A beats B") by the interval of a paired difference.

    ``ours`` is oriented so that a positive value is what the paper claims (build it
    with :func:`difference`, claimed-better first; for "lower is better" metrics
    swap the two).

    Args:
        quantity: What is compared.
        claim: The paper's claim as a table shows it (``"SQ above MST"``).
        ours: The paired difference, positive where the claim holds; or None.
        degenerate: A reason from :func:`degenerate_reason`, or "".
        missing: Why our side is missing.
        decimals: Decimals of the numbers shown.

    Returns:
        *reproduces* when the whole interval is above zero, *differs* when it is below,
        *inconclusive* when it holds zero (the difference is smaller than our
        uncertainty), *degenerate* or *not comparable* as for :func:`compare_value`.

    Examples:
        >>> compare_direction("F1", "SQ above MST",
        ...                   difference([0.70, 0.71], [0.705, 0.70])).outcome
        'inconclusive'
    """
    quantity = _quantity(quantity)
    if not isinstance(claim, str) or not claim.strip():
        raise TypeError(
            "claim must be a non-empty string saying what the paper claims."
        )
    if ours is not None and not isinstance(ours, Estimate):
        raise TypeError(
            f"ours must be an Estimate (see difference()), got {type(ours).__name__}."
        )

    def verdict(outcome: str, reason: str) -> Verdict:
        return Verdict(
            quantity, None, ours, outcome, reason, claim=claim, decimals=decimals
        )

    if ours is None:
        return verdict("not comparable", missing or "no run of ours")
    if degenerate:
        return verdict("degenerate", degenerate)
    text = ours.interval_text(decimals)
    if ours.low > _EQUAL:
        return verdict("reproduces", f"the difference’s interval {text} is above 0")
    if ours.high < -_EQUAL:
        return verdict("differs", f"the difference’s interval {text} is below 0")
    return verdict(
        "inconclusive",
        f"the difference’s interval {text} holds 0: smaller than our uncertainty",
    )


def verdict_frame(verdicts: Iterable[Verdict]) -> pd.DataFrame:
    """Tabulate verdicts, one row each, leaving out columns empty in every row.

    The columns: quantity, paper, ours (mean ± sd and the 95% interval in one cell),
    seeds, test n, verdict and why (and the authors' files after the paper where a
    row has them). ``test n`` is dropped when no row has a test count, ``paper`` when
    no row has a paper's number or claim, ``authors' files`` when no row has them.

    Raises:
        TypeError: If an item is not a :class:`Verdict`.
        ValueError: If there are none.
    """
    rows = []
    for v in verdicts:
        if not isinstance(v, Verdict):
            raise TypeError(f"each item must be a Verdict, got {type(v).__name__}.")
        rows.append(v.row())
    if not rows:
        raise ValueError("no verdicts: give at least one.")
    frame = pd.DataFrame(rows)
    # One cell for ours: the mean ± sd, then the interval (a column narrower than both
    # numbers wraps between them, never inside one).
    has_interval = frame["95% interval"] != "–"
    ours = frame["ours (mean ± sd)"].where(
        ~has_interval, frame["ours (mean ± sd)"] + " " + frame["95% interval"]
    )
    frame = frame.drop(columns=["ours (mean ± sd)", "95% interval"])
    at = list(frame.columns).index("authors' files") + 1
    frame.insert(at, "ours: mean ± sd [95% interval]", ours)
    for column in ("authors' files", "test n", "paper", "why"):
        if (frame[column].astype(str).str.strip().isin(["–", ""])).all():
            frame = frame.drop(columns=column)
    return frame


def compact_frame(
    verdicts: Iterable[Verdict], *, seeds_label: str = "seeds"
) -> pd.DataFrame:
    """Tabulate verdicts as narrow as the page allows (:func:`verdict_frame`, folded).

    A row's test count joins its quantity (``"accuracy (n = 4,000)"``) instead of a
    column of its own; a row without runs behind it (a tally, a data statistic) shows
    "–" for its seeds, and when no row has runs the seeds column goes and ours is
    headed plain "ours".

    Args:
        verdicts: The verdicts.
        seeds_label: The seeds column's heading (``"runs"`` for Monte Carlo runs).

    Raises:
        TypeError: If an item is not a :class:`Verdict`.
        ValueError: If there are none.
    """
    frame = verdict_frame(verdicts)
    seeds = frame.pop("seeds").map(lambda n: "–" if str(n) in ("0", "–") else str(n))
    if (seeds != "–").any():
        frame.insert(list(frame.columns).index("verdict"), seeds_label, seeds)
    else:
        frame = frame.rename(columns={"ours: mean ± sd [95% interval]": "ours"})
    if "test n" in frame.columns:
        # The test count goes with the quantity: a column of its own widens the table.
        n = frame.pop("test n")
        frame["quantity"] = [
            q if c == "–" else f"{q} (n{_NBSP}={_NBSP}{c})"
            for q, c in zip(frame["quantity"], n, strict=True)
        ]
    return frame


def verdict_columns(columns: Mapping[str, Sequence[Verdict]]) -> pd.DataFrame:
    """One table of the paper's numbers beside several of ours: a column pair per run.

    Each entry is one way of computing our side (a training loop, an encoding), as
    verdicts of the same quantities in the same order. Our cell shows the mean ± sd
    and the 95% interval; the verdict column its class.

    Args:
        columns: ``{run name: verdicts}``, every list over the same quantities.

    Returns:
        The columns quantity (with the group's test count, ``"(n = 974)"``, where
        known), paper, then ``<name>`` and ``<name>: verdict`` for each run.

    Raises:
        ValueError: If there are no columns, or the lists differ in their quantities
            or the paper's numbers.
    """
    if not columns:
        raise ValueError("no columns: give at least one list of verdicts.")
    taken = sorted({"quantity", "paper", "test n"} & set(columns))
    if taken:
        raise ValueError(
            f"run names {taken} are the table's own columns: name the runs otherwise "
            '(e.g. "paper\'s encoding").'
        )
    first_name, first = next(iter(columns.items()))
    keys = [(v.quantity, v.paper) for v in first]
    out = [{"quantity": v.quantity, "paper": v.row()["paper"]} for v in first]
    counts = ["–"] * len(first)
    for name, verdicts in columns.items():
        if [(v.quantity, v.paper) for v in verdicts] != keys:
            raise ValueError(
                f"column {name!r} compares other quantities than {first_name!r}: give "
                "every column the same quantities, in the same order."
            )
        for i, (row, v) in enumerate(zip(out, verdicts, strict=True)):
            cells = v.row()
            ours = cells["ours (mean ± sd)"]
            if v.ours is not None and v.ours.half_width > 0:
                ours += " " + cells["95% interval"]
            row[name] = ours
            row[f"{name}: verdict"] = v.outcome
            if counts[i] == "–":
                counts[i] = cells["test n"]
    # The group's test count goes with its name: a column of its own would push the
    # table wider than the text.
    for row, n in zip(out, counts, strict=True):
        if n != "–":
            row["quantity"] += f" (n{_NBSP}={_NBSP}{n})"
    return pd.DataFrame(out)


# ---------------------------------------------------------------------------- tallies


@dataclass(frozen=True)
class Tally:
    """Wins of a claimed direction over many comparisons, raw and beyond doubt.

    Attributes:
        total: Comparisons made.
        wins: Those whose mean difference lies on the claimed side (the raw count).
        clear_wins: Those whose interval lies wholly on the claimed side.
        clear_losses: Those whose interval lies wholly on the other side.
    """

    total: int
    wins: int
    clear_wins: int
    clear_losses: int

    @property
    def undecided(self) -> int:
        """Comparisons whose interval holds zero."""
        return self.total - self.clear_wins - self.clear_losses

    def __str__(self) -> str:
        """``"9 of 108 (3 beyond doubt)"``."""
        return f"{self.wins} of {self.total} ({self.clear_wins} beyond doubt)"


def tally(differences: Sequence[Estimate]) -> Tally:
    """Count how many paired differences favour the claim, raw and beyond doubt.

    Args:
        differences: One :class:`Estimate` per comparison, positive where the claim
            holds (:func:`difference`).

    Returns:
        The :class:`Tally`.

    Examples:
        >>> t = tally([difference([0.7, 0.71], [0.6, 0.6]),
        ...            difference([0.7, 0.71], [0.705, 0.70])])
        >>> t.wins, t.clear_wins, t.undecided
        (2, 1, 1)
    """
    found = list(differences)
    for d in found:
        if not isinstance(d, Estimate):
            raise TypeError(
                f"each difference must be an Estimate, got {type(d).__name__}."
            )
    return Tally(
        total=len(found),
        wins=sum(d.mean > 0 for d in found),
        clear_wins=sum(d.low > _EQUAL for d in found),
        clear_losses=sum(d.high < -_EQUAL for d in found),
    )


def values_of_seeds(
    values: pd.Series | Mapping[int, float], seeds: Sequence[int]
) -> np.ndarray:
    """Return the values of exactly ``seeds``, in order, or say which are missing."""
    series = pd.Series(values)
    missing = [s for s in seeds if s not in series.index]
    if missing:
        raise ValueError(
            f"no value for seeds {missing} (have {sorted(series.index)}): a verdict "
            "over fewer seeds than it says would mislead; compute them or name fewer "
            "seeds."
        )
    return series.loc[list(seeds)].to_numpy(dtype=float)


def without_shared_reason(frame: pd.DataFrame, reason: str) -> tuple[pd.DataFrame, str]:
    """Take a reason every row of :func:`verdict_frame`'s table begins with out of it.

    A table whose every "why" starts with the same words (``"New York sample, not
    California; ..."``) says them once, in its caption, and its rows keep the rest.

    Args:
        frame: :func:`verdict_frame`'s table.
        reason: The shared first part of the reasons (up to its ``"; "``).

    Returns:
        The table with the shared part removed from every reason, and a sentence for
        the caption (``""`` where not every row begins with it: the table unchanged).

    Examples:
        >>> t = pd.DataFrame({"why": ["a; b", "a; c"]})
        >>> rows, said = without_shared_reason(t, "a")
        >>> rows["why"].tolist(), said
        (['b', 'c'], "Every row's reason begins: a.")
    """
    prefix = f"{reason}; "
    why = frame["why"].astype(str) if "why" in frame else None
    if not reason or why is None or frame.empty or not why.str.startswith(prefix).all():
        return frame, ""
    return frame.assign(
        why=why.str.removeprefix(prefix)
    ), f"Every row's reason begins: {reason}."
