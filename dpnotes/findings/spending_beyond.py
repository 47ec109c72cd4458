"""Beyond the spending paper: New Mexico Employment, a capped threshold, AIM, the
authors' evaluation.

The stored result :data:`BEYOND_PROFILE` of experiment ``spending_e2e`` runs New Mexico
ACSEmployment (all ages, the paper's population definition) with two methods the paper
does not have (``fsq_fnr_cap``: FSQ with the threshold that maximises accuracy under a
cap on the black group's FNR; ``aim_target``: AIM with every (target, feature) pair as
its workload), the aggregate fidelity rows, and the authors' released evaluation
(``method@authors``: not private, selected on the test split). These functions turn it
into paired comparisons over seeds (:func:`dpnotes.findings.verdict.difference`, with
the test error of the records each metric counts) and the sentences the chapter
states.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from dpnotes.findings.spending import (
    E2E_COLUMNS,
    group_positives,
    group_test_counts,
)
from dpnotes.findings.verdict import Estimate, Verdict, difference

__all__ = [
    "BEYOND_PROFILE",
    "COMPARISONS",
    "Comparison",
    "base_rate",
    "beyond_frame",
    "beyond_texts",
    "fidelity_text",
    "paired",
    "stand_in_frame",
]

#: The stored profile these functions read.
BEYOND_PROFILE = (
    "paper@datasets=ACSEmployment-NM,evaluations=logistic+authors,fidelity=true,"
    "methods=real+real_dp+mst+sq+fsq_bal+fsq_fnr+fsq_fnr_cap+aim_target,seeds=0+1"
)

#: One comparison: its label, method ``a``, method ``b``, the metric and the group.
Comparison = tuple[str, str, str, str, str]

#: The comparisons of :func:`beyond_frame`, in the order the chapter discusses them.
COMPARISONS: tuple[Comparison, ...] = (
    ("SQ − MST, accuracy", "sq", "mst", "accuracy", "overall"),
    ("AIM on the target's pairs − SQ, accuracy", "aim_target", "sq", "accuracy",
     "overall"),
    ("AIM on the target's pairs − MST, accuracy", "aim_target", "mst", "accuracy",
     "overall"),
    ("FSQ-FNR, capped − penalty: accuracy", "fsq_fnr_cap", "fsq_fnr", "accuracy",
     "overall"),
    ("FSQ-FNR, capped − penalty: black FNR", "fsq_fnr_cap", "fsq_fnr", "fnr",
     "black"),
    ("FSQ-FNR, capped − penalty: black FPR", "fsq_fnr_cap", "fsq_fnr", "fpr",
     "black"),
    ("SQ − MST, accuracy, the authors' evaluation", "sq@authors", "mst@authors",
     "accuracy", "overall"),
)  # fmt: skip


def _table(table: object) -> pd.DataFrame:
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"expected a result table (DataFrame), got {type(table)!r}.")
    missing = [c for c in E2E_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"the result table lacks the columns {missing}.")
    return table


def _n_test(t: pd.DataFrame, method: str, group: str, metric: str) -> int | None:
    """The test records behind a method's metric: the group's records, or for FNR and
    FPR its positives or negatives (the authors' rows count their own subset)."""
    rows = t[(t["method"] == method) & (t["group"] == group)]
    counts = rows.loc[rows["metric"] == "count", "value"]
    if counts.empty:
        return None
    n = int(counts.iloc[0])
    if metric not in ("fnr", "fpr"):
        return n
    if "@" in method:
        return None
    plain = t[~t["method"].str.contains("@", regex=False)]
    positives = int(group_positives(plain, dataset=t["dataset"].iloc[0])[group])
    return positives if metric == "fnr" else n - positives


def paired(
    table: pd.DataFrame,
    *,
    dataset: str,
    a: str,
    b: str,
    metric: str = "accuracy",
    group: str = "overall",
) -> dict[float, Estimate]:
    """Return ``a − b`` per budget, paired over seeds, with the test error counted.

    Args:
        table: A ``spending_e2e`` result table.
        dataset: The data set.
        a, b: The two methods (e.g. ``"sq"`` and ``"mst"``).
        metric: A classifier metric.
        group: ``"overall"`` or a group.

    Returns:
        Budget -> the :class:`~dpnotes.findings.verdict.Estimate` of the difference.

    Raises:
        ValueError: If the table lacks a column, the data set, a method, or a seed of
            one method at a budget (the two must cover the same seeds).

    Examples:
        >>> rows = [("d", 1.0, s, m, "overall", "accuracy", v + 0.01 * s)
        ...         for s in (0, 1) for m, v in (("a", 0.8), ("b", 0.7))]
        >>> t = pd.DataFrame(rows, columns=list(E2E_COLUMNS))
        >>> round(paired(t, dataset="d", a="a", b="b")[1.0].mean, 3)
        0.1
    """
    t = _table(table)
    t = t[t["dataset"] == dataset]
    if t.empty:
        raise ValueError(f"the table has no rows of {dataset!r}.")
    absent = [m for m in (a, b) if m not in set(t["method"])]
    if absent:
        raise ValueError(f"{dataset}: the table has no rows of the methods {absent}.")
    rows = t[(t["metric"] == metric) & (t["group"] == group)]
    n_a, n_b = (_n_test(t, m, group, metric) for m in (a, b))
    out = {}
    for eps, part in rows.groupby("epsilon"):
        wide = part.pivot_table(index="seed", columns="method", values="value")
        for m in (a, b):
            if m not in wide or wide[m].isna().any():
                raise ValueError(
                    f"{dataset}, epsilon {eps:g}: {m} lacks {metric} of {group} for "
                    "a seed the other has; compare complete seeds only."
                )
        out[float(eps)] = difference(
            wide[a].to_numpy(float), wide[b].to_numpy(float), n_test_a=n_a,
            n_test_b=n_b,
        )  # fmt: skip
    if not out:
        raise ValueError(f"{dataset}: no rows of {metric} for the group {group!r}.")
    return out


def _cell(e: Estimate) -> str:
    beyond = e.low > 0 or e.high < 0
    return f"{e.mean:+.3f} [{e.low:+.3f}, {e.high:+.3f}]" + (" *" if beyond else "")


def _budget(eps: float) -> str:
    return f"e^{round(float(np.log(eps)))}"


def beyond_frame(
    table: pd.DataFrame,
    *,
    dataset: str = "ACSEmployment-NM",
    comparisons: Sequence[Comparison] = COMPARISONS,
) -> pd.DataFrame:
    """Return the comparisons as a table: one row each, one column per budget.

    A cell is the mean difference over seeds and its 95% interval; ``*`` marks an
    interval that excludes 0.

    Raises:
        ValueError: As :func:`paired`.
    """
    rows = []
    for label, a, b, metric, group in comparisons:
        est = paired(table, dataset=dataset, a=a, b=b, metric=metric, group=group)
        rows.append(
            {"comparison": label} | {_budget(e): _cell(v) for e, v in est.items()}
        )
    return pd.DataFrame(rows)


def base_rate(table: pd.DataFrame, *, dataset: str) -> float:
    """Return the share of positive records in the test split (from the stored rates).

    Raises:
        ValueError: As :func:`~dpnotes.findings.spending.group_positives`.
    """
    t = _table(table)
    t = t[~t["method"].str.contains("@", regex=False)]
    pos = group_positives(t, dataset=dataset)["overall"]
    n = t[
        (t["dataset"] == dataset) & (t["metric"] == "count") & (t["group"] == "overall")
    ]
    return float(pos / n["value"].iloc[0])


def stand_in_frame(
    stand_ins: Mapping[str, tuple[pd.DataFrame, str]], *, a: str = "sq", b: str = "mst"
) -> pd.DataFrame:
    """Return ``a − b`` accuracy per budget on each stand-in for California.

    Args:
        stand_ins: Label -> (its result table, its data set).
        a, b: The methods compared (SQ and MST).

    Returns:
        One row per stand-in: its test split's base rate, its seeds, and the paired
        difference per budget (as :func:`beyond_frame` writes it).
    """
    rows = []
    for label, (table, dataset) in stand_ins.items():
        est = paired(table, dataset=dataset, a=a, b=b)
        seeds = next(iter(est.values())).n_seeds
        rows.append(
            {"stand-in": label, "base rate": f"{base_rate(table, dataset=dataset):.3f}",
             "seeds": seeds}
            | {_budget(e): _cell(v) for e, v in est.items()}
        )  # fmt: skip
    return pd.DataFrame(rows)


def _above(est: Mapping[float, Estimate]) -> tuple[int, int, int]:
    means = [e.mean for e in est.values()]
    return (
        sum(m > 0 for m in means),
        sum(e.low > 0 for e in est.values()),
        len(means),
    )


def beyond_texts(
    table: pd.DataFrame, *, authors_margin: float, dataset: str = "ACSEmployment-NM"
) -> dict[str, str]:
    """Return the chapter's sentences about :data:`BEYOND_PROFILE`.

    Args:
        table: The result table of :data:`BEYOND_PROFILE`.
        authors_margin: The authors' stored SQ − MST accuracy margin at ``e^2``.
        dataset: The data set.

    Returns:
        ``{"sq-mst", "aim-sq", "margin-ours", "margin-authors-pipeline",
        "margin-paper", "cap-fnr", "black-n", "black-pos"}`` (the last two: the
        black group's test records and positives).
    """
    out = {}
    for key, a, b in (("sq-mst", "sq", "mst"), ("aim-sq", "aim_target", "sq")):
        above, sure, n = _above(paired(table, dataset=dataset, a=a, b=b))
        out[key] = f"above at {above} of {n} budgets ({sure} with an interval above 0)"
    e2 = float(np.exp(2))

    def at_e2(a: str, b: str) -> Estimate:
        est = paired(table, dataset=dataset, a=a, b=b)
        return est[min(est, key=lambda e: abs(e - e2))]

    ours, theirs = at_e2("sq", "mst"), at_e2("sq@authors", "mst@authors")
    out["margin-ours"] = f"{ours.mean * 100:+.1f} points {_points(ours)}"
    out["margin-authors-pipeline"] = (
        f"{theirs.mean * 100:+.1f} points {_points(theirs)}"
    )
    out["margin-paper"] = f"{authors_margin * 100:+.1f} points"
    cap = paired(table, dataset=dataset, a="fsq_fnr_cap", b="fsq_fnr", metric="fnr",
                 group="black")  # fmt: skip
    lower = sum(e.mean < 0 for e in cap.values())
    out["cap-fnr"] = f"lower at {lower} of {len(cap)} budgets"
    plain = table[~table["method"].str.contains("@", regex=False)]
    out["black-n"] = f"{group_test_counts(plain, dataset=dataset)['black']:,}"
    out["black-pos"] = f"{group_positives(plain, dataset=dataset)['black']:,}"
    return out


def _points(e: Estimate) -> str:
    return f"[{e.low * 100:+.1f}, {e.high * 100:+.1f}]"


def fidelity_text(verdicts: Sequence[Verdict]) -> str:
    """Summarise :func:`~dpnotes.findings.spending_checks.fidelity_check`'s verdicts.

    Returns:
        E.g. ``"MST is closer to the real training split than SQ in 23 of 25
        comparisons by the mean, 6 with an interval above 0"``.

    Raises:
        ValueError: If there are no verdicts, or one has no estimate.

    Examples:
        >>> from dpnotes.findings.verdict import compare_direction, estimate
        >>> v = compare_direction("x", "MST closer", estimate([0.1, 0.2]))
        >>> fidelity_text([v]).endswith("in 1 of 1 comparison by the mean, 0 with "
        ...                             "an interval above 0")
        True
    """
    if not verdicts or any(v.ours is None for v in verdicts):
        raise ValueError("fidelity_text needs verdicts with our estimates.")
    closer = sum(v.ours.mean > 0 for v in verdicts)
    sure = sum(v.ours.low > 0 for v in verdicts)
    n = len(verdicts)
    return (
        f"MST is closer to the real training split than SQ in {closer} of {n} "
        f"comparison{'s' if n != 1 else ''} by the mean, {sure} with an interval "
        "above 0"
    )
