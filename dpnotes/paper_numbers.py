"""The numbers the reproduced papers report, as data, with the table and row of each.

A chapter that puts a paper's number beside ours takes it from here, never types it:
one place to read, cite and check (``tests/test_paper_numbers.py`` compares every value
with the paper's text where the text is available). Each value is a :class:`Reported`:
the paper (its bibliography key), where in the paper it stands, the data set, method,
group and quantity, and the value as printed.

So far: the DPSGD-F paper's Tables 1-3 and its epsilons (xu2021removing).

References:
    xu2021removing: Tables 1, 2 and 3, and section 6 (the epsilons of the settings).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pandas as pd

__all__ = [
    "DPSGDF_EPSILON",
    "DPSGDF_GROUPS",
    "DPSGDF_SAMPLE_SIZES",
    "DPSGDF_TABLE1",
    "DPSGDF_TABLE2",
    "DPSGDF_TABLE3",
    "Reported",
    "reported",
    "reported_frame",
]


@dataclass(frozen=True)
class Reported:
    """One number a paper reports.

    Attributes:
        paper: The paper's key in ``book/references.bib``.
        where: Where it stands, e.g. ``"Table 1, row 'DPSGD vs. SGD'"``.
        dataset: The data set (``"mnist"``, ``"adult"``, ``"dutch"``).
        method: The method (``"sgd"``, ``"dpsgd"``, ``"naive"``, ``"dpsgd_f"``).
        group: The group (``"all"``, ``"digit 2"``, ``"male"``, ...).
        quantity: What is reported: ``"accuracy"``, ``"delta"`` (private minus SGD
            accuracy), ``"loss"``, ``"grad_norm"`` or ``"epsilon"``.
        value: The value as printed.
        clip_norm: The clipping bound of the run (Table 3's ``C``), where it varies.
    """

    paper: str
    where: str
    dataset: str
    method: str
    group: str
    quantity: str
    value: float
    clip_norm: float | None = None


_XU = "xu2021removing"

#: The groups of the DPSGD-F paper's tables, in its column order, by data set: the
#: total, then (MNIST) classes 2 and 8 or (Adult, Dutch) male and female.
DPSGDF_GROUPS: Mapping[str, tuple[str, ...]] = {
    "mnist": ("all", "digit 2", "digit 8"),
    "adult": ("all", "male", "female"),
    "dutch": ("all", "male", "female"),
}

#: Table 1 of the DPSGD-F paper: per data set and method, the values for
#: :data:`DPSGDF_GROUPS`; row "SGD" is accuracy, rows "DPSGD / Naive / DPSGD-F vs. SGD"
#: are private minus SGD accuracy.
DPSGDF_TABLE1: Mapping[str, Mapping[str, tuple[float, float, float]]] = {
    "mnist": {
        "sgd": (0.9855, 0.9903, 0.9292),
        "dpsgd": (-0.1081, -0.0707, -0.6807),
        "naive": (-0.1500, -0.1512, -0.1510),
        "dpsgd_f": (-0.0293, -0.0281, -0.0432),
    },
    "adult": {
        "sgd": (0.8099, 0.7610, 0.9117),
        "dpsgd": (-0.0592, -0.0740, -0.0281),
        "naive": (-0.0593, -0.0742, -0.0281),
        "dpsgd_f": (-0.0254, -0.0298, -0.0161),
    },
    "dutch": {
        "sgd": (0.7879, 0.8013, 0.7744),
        "dpsgd": (-0.1001, -0.1534, -0.0466),
        "naive": (-0.1004, -0.1549, -0.0458),
        "dpsgd_f": (-0.0130, -0.0160, -0.0099),
    },
}

#: Table 2 of the DPSGD-F paper: per data set and method, the average loss and the
#: average gradient norm of the two groups (MNIST: classes 2 and 8; Adult, Dutch: male
#: and female) at the last training epoch, as ``(loss, loss, norm, norm)``.
DPSGDF_TABLE2: Mapping[str, Mapping[str, tuple[float, float, float, float]]] = {
    "mnist": {
        "sgd": (0.04, 0.04, 0.68, 4.76),
        "dpsgd": (0.41, 2.16, 13.53, 100.46),
        "naive": (3.08, 1.89, 0.83, 0.76),
        "dpsgd_f": (0.20, 0.42, 1.45, 2.53),
    },
    "adult": {
        "sgd": (0.48, 0.27, 0.08, 0.11),
        "dpsgd": (0.68, 0.31, 0.41, 0.12),
        "naive": (0.71, 0.32, 0.43, 0.13),
        "dpsgd_f": (0.50, 0.27, 0.12, 0.08),
    },
    "dutch": {
        "sgd": (0.52, 0.53, 0.19, 0.19),
        "dpsgd": (0.59, 0.53, 0.26, 0.12),
        "naive": (0.59, 0.53, 0.26, 0.12),
        "dpsgd_f": (0.51, 0.52, 0.19, 0.18),
    },
}

#: Table 3 of the DPSGD-F paper (MNIST): private minus SGD accuracy for the groups of
#: :data:`DPSGDF_GROUPS` ``["mnist"]``, by ``(method, clipping bound)``: DPSGD at
#: ``C = 1..5`` and DPSGD-F at ``C_0 = 1``.
DPSGDF_TABLE3: Mapping[tuple[str, float], tuple[float, float, float]] = {
    ("dpsgd", 1.0): (-0.1081, -0.0707, -0.6807),
    ("dpsgd", 2.0): (-0.0587, -0.0426, -0.3286),
    ("dpsgd", 3.0): (-0.0390, -0.0232, -0.2013),
    ("dpsgd", 4.0): (-0.0286, -0.0194, -0.1376),
    ("dpsgd", 5.0): (-0.0240, -0.0145, -0.1099),
    ("dpsgd_f", 1.0): (-0.0293, -0.0281, -0.0432),
}

#: Row "Sample size" of Table 1 of the DPSGD-F paper: the examples of each group of
#: :data:`DPSGDF_GROUPS` (MNIST: its training set; Adult and Dutch: all rows, training
#: and test). The sizes identify the groups: the paper's Dutch column "M" has the size
#: of the group with sex code 2, which the data's codebook calls female.
DPSGDF_SAMPLE_SIZES: Mapping[str, Mapping[str, int]] = {
    "mnist": {"all": 54649, "digit 2": 5958, "digit 8": 500},
    "adult": {"all": 45222, "male": 30527, "female": 14695},
    "dutch": {"all": 60420, "male": 30273, "female": 30147},
}

#: The epsilon of each data set's runs at delta = 1e-6 (captions of Tables 1 and 2,
#: section 6 of the DPSGD-F paper).
DPSGDF_EPSILON: Mapping[str, float] = {"mnist": 6.55, "adult": 3.1, "dutch": 2.66}

_ROW = {"sgd": "SGD", "dpsgd": "DPSGD", "naive": "Naïve", "dpsgd_f": "DPSGD-F"}


def _dpsgdf() -> Iterable[Reported]:
    for dataset, rows in DPSGDF_TABLE1.items():
        for method, values in rows.items():
            row = _ROW[method] if method == "sgd" else f"{_ROW[method]} vs. SGD"
            quantity = "accuracy" if method == "sgd" else "delta"
            for group, value in zip(DPSGDF_GROUPS[dataset], values, strict=True):
                where = f"Table 1, row '{row}'"
                yield Reported(_XU, where, dataset, method, group, quantity, value)
    for dataset, rows in DPSGDF_TABLE2.items():
        pair = DPSGDF_GROUPS[dataset][1:]
        for method, values in rows.items():
            where = f"Table 2, row '{_ROW[method]}'"
            for quantity, part in (("loss", values[:2]), ("grad_norm", values[2:])):
                for group, value in zip(pair, part, strict=True):
                    yield Reported(_XU, where, dataset, method, group, quantity, value)
    for (method, clip), values in DPSGDF_TABLE3.items():
        bound = "C" if method == "dpsgd" else "C_0"
        where = f"Table 3, row '{_ROW[method]} ({bound} = {clip:g}) vs. SGD'"
        for group, value in zip(DPSGDF_GROUPS["mnist"], values, strict=True):
            yield Reported(_XU, where, "mnist", method, group, "delta", value, clip)
    for dataset, value in DPSGDF_EPSILON.items():
        where = "Tables 1 and 2, captions (delta = 1e-6)"
        yield Reported(_XU, where, dataset, "dpsgd", "all", "epsilon", value)


def reported(**match: object) -> list[Reported]:
    """Return the reported numbers whose fields equal ``match``.

    Args:
        **match: Field values to select by, e.g. ``paper="xu2021removing"``,
            ``quantity="delta"``, ``dataset="mnist"``.

    Returns:
        The matching :class:`Reported` values, in the papers' order.

    Raises:
        ValueError: If a keyword is not a field of :class:`Reported`.

    Examples:
        >>> [r.value for r in reported(where="Table 1, row 'SGD'", dataset="adult")]
        [0.8099, 0.761, 0.9117]
    """
    fields = set(Reported.__dataclass_fields__)
    unknown = sorted(set(match) - fields)
    if unknown:
        raise ValueError(
            f"reported(): unknown field(s) {unknown}; select by {sorted(fields)}."
        )
    return [r for r in _dpsgdf() if all(getattr(r, k) == v for k, v in match.items())]


def reported_frame() -> pd.DataFrame:
    """Every reported number as a table, one row per :class:`Reported`."""
    return pd.DataFrame([r.__dict__ for r in _dpsgdf()])
