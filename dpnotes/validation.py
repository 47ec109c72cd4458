"""Input checks for public entry points.

Each check returns the cleaned value (a float, an array) or raises a ``ValueError`` /
``TypeError`` whose message says what the caller should do instead. Public
functions call these at their boundary; internal helpers trust their callers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from numbers import Real
from typing import Any

import numpy as np

__all__ = [
    "check_array",
    "check_bounds",
    "check_choice",
    "check_columns",
    "check_delta",
    "check_epsilon",
    "check_groups",
    "check_int",
    "check_options",
    "check_positive",
    "check_probability",
    "check_result",
    "check_rho",
    "check_scale",
    "check_weights",
    "check_width",
    "check_workload",
]


def _as_real(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (Real, np.number)):
        raise TypeError(
            f"{name} must be a real number, got {type(value).__name__} ({value!r})."
        )
    return float(value)


def check_positive(value: Any, name: str, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float if it is > 0 (and finite unless ``allow_inf``).

    >>> check_positive(2, "scale")
    2.0
    """
    x = _as_real(value, name)
    if math.isnan(x) or x <= 0 or (math.isinf(x) and not allow_inf):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}.")
    return x


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Return a privacy parameter epsilon as a float, requiring 0 < epsilon < inf.

    Raises:
        ValueError: If epsilon is not positive and finite. epsilon = 0 would need
            infinite noise; an infinite epsilon is no privacy at all, so a
            non-private computation should be called instead.
    """
    x = _as_real(epsilon, name)
    if math.isnan(x) or x <= 0 or math.isinf(x):
        raise ValueError(
            f"{name} must be a positive, finite privacy budget, got {epsilon!r}. Use "
            f"e.g. {name}=1.0; for a non-private baseline call the non-private "
            "estimator instead of passing an infinite or zero budget."
        )
    return x


def check_rho(rho: Any, name: str = "rho") -> float:
    """Return a zCDP parameter rho as a float, requiring 0 < rho < inf."""
    x = _as_real(rho, name)
    if math.isnan(x) or x <= 0 or math.isinf(x):
        raise ValueError(
            f"{name} must be a positive, finite zCDP budget, got {rho!r}. Convert an "
            "(epsilon, delta) target with dpnotes.accounting.epsilon_delta_to_rho."
        )
    return x


def check_delta(delta: Any, name: str = "delta") -> float:
    """Return delta as a float, requiring 0 < delta < 1.

    Raises:
        ValueError: If delta is outside the open interval (0, 1). A usual choice is
            a value much smaller than 1/n, such as 1e-6 or 1e-9.
    """
    x = _as_real(delta, name)
    if math.isnan(x) or not 0.0 < x < 1.0:
        raise ValueError(
            f"{name} must lie strictly between 0 and 1, got {delta!r}. Pick a value "
            "much smaller than 1/n, e.g. delta=1e-6; for pure DP use a Laplace "
            "mechanism, which takes no delta."
        )
    return x


def check_probability(value: Any, name: str, *, closed_right: bool = False) -> float:
    """Return ``value`` if it lies in (0, 1) (or (0, 1] with ``closed_right``)."""
    x = _as_real(value, name)
    ok = 0.0 < x <= 1.0 if closed_right else 0.0 < x < 1.0
    if math.isnan(x) or not ok:
        interval = "(0, 1]" if closed_right else "(0, 1)"
        raise ValueError(f"{name} must lie in {interval}, got {value!r}.")
    return x


def check_int(value: Any, name: str, *, minimum: int | None = None) -> int:
    """Return ``value`` as an int; it must be an integer and at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"{name} must be an integer, got {type(value).__name__} ({value!r})."
        )
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}.")
    return int(value)


def check_bounds(lower: Any, upper: Any) -> tuple[float, float]:
    """Return finite ``(lower, upper)`` with ``lower < upper``.

    The bounds of a clipped statistic must be public: choose them from domain knowledge
    (e.g. 0 and 100 for an age), never from the data.
    """
    lo, hi = _as_real(lower, "lower"), _as_real(upper, "upper")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(
            f"lower and upper must be finite, got lower={lower!r}, upper={upper!r}. "
            "Choose public bounds from domain knowledge, not from the data."
        )
    if lo >= hi:
        raise ValueError(
            f"lower must be smaller than upper, got lower={lower!r}, upper={upper!r}. "
            "Swap them, or widen the interval if they are equal."
        )
    return lo, hi


def check_width(lower: Any, upper: Any, *, what: str = "the bounds'") -> Any:
    """Return ``upper - lower``, requiring it to be finite (a float, or an array).

    Finite bounds can still be too far apart for floating point: ``1e308 - (-1e308)``
    overflows to infinity, and every noise scale computed from it would too.

    >>> check_width(-1.0, 3.0)
    4.0

    Raises:
        ValueError: If the width overflows; the message says to rescale the data or to
            pass narrower public bounds.
    """
    lo, hi = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        width = hi - lo
    if not np.all(np.isfinite(width)):
        bad = int(np.flatnonzero(~np.isfinite(np.atleast_1d(width)))[0])
        lo_b = float(np.broadcast_to(lo, np.shape(width)).reshape(-1)[bad])
        hi_b = float(np.broadcast_to(hi, np.shape(width)).reshape(-1)[bad])
        finite = math.isfinite(lo_b) and math.isfinite(hi_b)
        exact = Decimal(hi_b) - Decimal(lo_b) if finite else Decimal(hi_b - lo_b)
        raise ValueError(
            f"{what} width {exact:.3g} (from {lo_b:g} to {hi_b:g}) overflows floating "
            "point; rescale the data (e.g. to other units) or pass narrower public "
            "bounds."
        )
    return float(width) if np.ndim(width) == 0 else width


def check_scale(value: Any, name: str, *, advice: str) -> Any:
    """Return a computed noise scale if every entry is finite and positive.

    A noise scale computed from valid inputs can still overflow to infinity (a tiny
    budget, a huge sensitivity) or underflow to zero, which would release no noise
    at all. Call this before drawing the noise.

    >>> check_scale(2.0, "noise scale", advice="use a larger epsilon")
    2.0

    Raises:
        ValueError: If an entry is infinite, NaN or not positive; ``advice`` says what
            to do instead.
    """
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr) & (arr > 0)):
        flat = arr.reshape(-1)
        bad = flat[~(np.isfinite(flat) & (flat > 0))]
        kind = "underflows to 0" if bad[0] == 0 else f"overflows ({float(bad[0])!r})"
        raise ValueError(f"the {name} {kind} in floating point; {advice}.")
    return value


def check_result(value: Any, name: str, *, advice: str) -> Any:
    """Return a computed result if every entry is finite, else say what to do.

    >>> check_result(0.5, "rho", advice="use a smaller epsilon")
    0.5

    Raises:
        ValueError: If an entry is infinite or NaN.
    """
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            f"the {name} is not finite ({int((~np.isfinite(arr)).sum())} value(s) "
            f"overflowed or are NaN); {advice}."
        )
    return value


#: Scalars an object array may hold: real numbers (Python's, numpy's, Decimal) and
#: numpy booleans (numbers.Real leaves out np.bool_ and Decimal).
_REAL_SCALARS = (Real, np.bool_, Decimal)

#: What an array of each non-numeric dtype kind holds, for the error message.
_NON_NUMERIC_KINDS = {
    "U": "strings",
    "S": "bytes",
    "M": "datetimes",
    "m": "time deltas",
    "V": "structured records",
}


def _check_real_entries(raw: np.ndarray, name: str) -> None:
    """Refuse an array whose entries are not real numbers, before any cast to float.

    ``np.asarray(x, dtype=float)`` would keep only the real part of complex numbers
    (with a warning, not an error) and parse numeric strings, so ``check_array``
    looks at the entries first.
    """
    kind = raw.dtype.kind
    if kind == "c":
        raise TypeError(
            f"{name} must be real numeric array-like, got complex values (dtype "
            f"{raw.dtype}); pass the real quantity you mean, e.g. np.real({name}) or "
            f"np.abs({name})."
        )
    if kind in _NON_NUMERIC_KINDS:
        raise TypeError(
            f"{name} must be numeric array-like, got {_NON_NUMERIC_KINDS[kind]} "
            f"(dtype {raw.dtype}); convert them to numbers first (with a public "
            "encoding for categories)."
        )
    if kind == "O":
        bad = [v for v in raw.reshape(-1) if not isinstance(v, _REAL_SCALARS)]
        if bad:
            first = bad[0]
            if isinstance(first, complex | np.complexfloating):
                advice = "pass the real quantity you mean, e.g. its real part"
            elif first is None:
                advice = (
                    "drop or impute missing values before calling (with a rule fixed "
                    "in advance, not chosen by looking at the private data)"
                )
            else:
                advice = (
                    "convert them to numbers first (with a public encoding for "
                    "categories)"
                )
            raise TypeError(
                f"{name} must be real numeric array-like, but {len(bad)} of its "
                f"{raw.size} entries are not real numbers, the first {first!r} "
                f"({type(first).__name__}); {advice}."
            )


def check_array(
    x: Any,
    name: str = "x",
    *,
    ndim: int | None = None,
    allow_empty: bool = False,
    dtype: type = np.float64,
) -> np.ndarray:
    """Return ``x`` as a finite numpy array.

    Args:
        x: Array-like data.
        name: Name used in error messages.
        ndim: Required number of dimensions, if any.
        allow_empty: Whether a zero-size array is acceptable.
        dtype: Target dtype.

    Raises:
        TypeError: If ``x`` cannot be converted to a numeric array, or holds complex
            numbers, strings, dates or other entries that are not real numbers
            (a cast to float would drop an imaginary part or parse text silently).
        ValueError: If it has NaN or infinite entries, the wrong shape, or is empty.

    >>> check_array([1, 2.5])
    array([1. , 2.5])
    """
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError, OverflowError) as err:
        raise TypeError(f"{name} must be numeric array-like: {err}") from err
    _check_real_entries(raw, name)
    try:
        arr = np.asarray(raw, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as err:
        raise TypeError(f"{name} must be numeric array-like: {err}") from err
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}.")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} is empty; pass at least one value.")
    if np.issubdtype(arr.dtype, np.floating) and not np.all(np.isfinite(arr)):
        n_nan = int(np.isnan(arr).sum())
        n_inf = int(np.isinf(arr).sum())
        raise ValueError(
            f"{name} has {n_nan} NaN and {n_inf} infinite values. Drop or impute them "
            "before calling (with a rule fixed in advance, not chosen by looking at "
            "the private data)."
        )
    return arr


def check_weights(
    weights: Any, k: int | None = None, *, atol: float = 1e-8
) -> np.ndarray:
    """Return group weights as an array of non-negative floats summing to one.

    Raises:
        ValueError: If there are NaN/inf, negative entries, the wrong count, or the sum
            differs from one by more than ``atol`` (normalise them: ``w / w.sum()``).
    """
    w = check_array(weights, "weights", ndim=1)
    if k is not None and w.shape[0] != k:
        raise ValueError(f"weights has {w.shape[0]} entries but there are {k} groups.")
    if np.any(w < 0):
        raise ValueError(f"weights must be non-negative, got {w.tolist()}.")
    total = float(w.sum())
    if abs(total - 1.0) > atol:
        raise ValueError(
            f"weights must sum to 1, got a sum of {total:.10g}. Normalise them first "
            "(weights / weights.sum())."
        )
    return w


def check_choice(value: Any, choices: Iterable[Any], name: str) -> Any:
    """Return ``value`` if it is one of ``choices``, else say which are allowed."""
    options = list(choices)
    if value not in options:
        shown = ", ".join(map(repr, options[:60])) + (
            " ..." if len(options) > 60 else ""
        )
        raise ValueError(f"unknown {name} {value!r}; choose one of: {shown}.")
    return value


def check_options(options: object, allowed: tuple[str, ...], name: str) -> dict:
    """Return the keyword options a caller passes on to a part, checked by name.

    Shared by :func:`~dpnotes.importance.dpsage.dpsage` and
    :class:`~dpnotes.importance.superquail.SuperQUAIL` (their ``mst_options`` and
    ``classifier_options``).

    Args:
        options: A mapping of keyword arguments, or None for none.
        allowed: The keywords the part takes.
        name: The argument's name, for the error message.

    Returns:
        A new dict of the options.

    Raises:
        TypeError: If ``options`` is not a mapping.
        ValueError: If it names a keyword outside ``allowed``.
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(
            f"{name} must be a mapping of keyword arguments such as "
            f"{{{allowed[0]!r}: ...}}, got {type(options).__name__}."
        )
    unknown = [k for k in options if k not in allowed]
    if unknown:
        raise ValueError(
            f"{name} has unknown option(s) {unknown}; the allowed ones are "
            f"{list(allowed)}."
        )
    return dict(options)


def check_workload(
    workload: Any, name: str = "workload"
) -> list[tuple[str, ...]] | None:
    """Return a workload as a list of cliques (tuples of column names), or ``None``.

    A bare string is a sequence too: ``["SEX"]`` would silently become the clique
    ``("S", "E", "X")`` and ``"SEX"`` the cliques ``("S",), ("E",), ("X",)``.

    >>> check_workload([("SEX", "AGEP"), ["PUMA"]])
    [('SEX', 'AGEP'), ('PUMA',)]

    Raises:
        TypeError: If the workload or one of its cliques is a string or not a sequence.
        ValueError: If the workload or a clique is empty.
    """
    if workload is None:
        return None
    if isinstance(workload, (str, bytes)) or not isinstance(workload, Iterable):
        raise TypeError(
            f"{name} must be a list of cliques (tuples of column names), got "
            f'{workload!r}; write e.g. [("SEX", "AGEP"), ("PUMA",)].'
        )
    cliques = []
    for i, clique in enumerate(workload):
        if isinstance(clique, (str, bytes)) or not isinstance(clique, Iterable):
            raise TypeError(
                f"{name}[{i}] is {clique!r}, not a clique: a clique is a tuple of "
                f"column names, so write ({clique!r},) for a one-way marginal."
            )
        clique = tuple(clique)
        if not clique:
            raise ValueError(
                f"{name}[{i}] is an empty clique; every clique needs an attribute."
            )
        cliques.append(clique)
    if not cliques:
        raise ValueError(f"{name} is empty; pass at least one clique or None.")
    return cliques


def check_columns(frame: Any, required: Sequence[str], name: str = "data") -> None:
    """Raise if the DataFrame ``frame`` lacks any of the ``required`` columns."""
    present = set(map(str, frame.columns))
    missing = [c for c in required if c not in present]
    if missing:
        raise ValueError(
            f"{name} is missing column(s) {missing}; it has {sorted(present)[:40]}. "
            "Load it with the dpnotes loader or rename the columns."
        )


def check_groups(
    groups: Any, public_groups: Sequence[Any], name: str = "groups"
) -> np.ndarray:
    """Return group labels as an array, requiring every label to be in the public list.

    The list of groups is public (a specification chosen in advance); a label outside it
    would mean the set of groups depends on the data.
    """
    g = np.asarray(groups)
    if g.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {g.shape}.")
    allowed = list(public_groups)
    if len(set(allowed)) != len(allowed):
        raise ValueError(f"the public list of {name} has duplicates: {allowed}.")
    unknown = sorted(set(g.tolist()) - set(allowed), key=repr)
    if unknown:
        raise ValueError(
            f"{name} contains labels {unknown[:10]} that are not in the public list "
            f"{allowed[:20]}. Add them to the public specification or map them to a "
            "listed group before calling."
        )
    return g
