"""The papers' numbers kept as data agree with the papers' text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dpnotes import paper_numbers as pn

PAPER = Path(__file__).resolve().parents[2] / "shared" / "papers" / "dpsgdf-kdd2021.txt"


def _table(caption: str) -> dict[str, list[float]]:
    """Rows of the table whose caption line starts with ``caption``: label -> values."""
    if not PAPER.is_file():
        pytest.skip(
            f"{PAPER} is not here (the papers' text sits beside the repository)"
        )
    lines = PAPER.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(caption))
    rows: dict[str, list[float]] = {}
    for line in lines[start + 1 : start + 16]:
        if rows and not line.strip():
            break  # the blank line after the table
        cells = [c.strip() for c in line.strip().split("\t")]
        numbers = [c for c in cells[1:] if re.fullmatch(r"-?\d+\.\d+", c)]
        if numbers and len(numbers) == len(cells) - 1:
            rows[cells[0]] = [float(c) for c in numbers]
    return rows


def test_table_1_is_the_paper_s():
    rows = _table("Table 1:")
    for label, method in (
        ("SGD", "sgd"),
        ("DPSGD vs. SGD", "dpsgd"),
        ("Naïve vs. SGD", "naive"),
        ("DPSGD-F vs. SGD", "dpsgd_f"),
    ):
        ours = [
            v
            for ds in ("mnist", "adult", "dutch")
            for v in pn.DPSGDF_TABLE1[ds][method]
        ]
        assert ours == rows[label], label


def test_sample_sizes_are_the_paper_s():
    _table("Table 1:")  # skips without the paper's text
    line = next(
        ln for ln in PAPER.read_text().splitlines() if ln.startswith("Sample size")
    )
    numbers = [int(c) for c in line.split("\t")[1:] if c.strip()]
    ours = [
        pn.DPSGDF_SAMPLE_SIZES[ds][g]
        for ds in ("mnist", "adult", "dutch")
        for g in pn.DPSGDF_GROUPS[ds]
    ]
    assert ours == numbers


def test_table_2_is_the_paper_s():
    rows = _table("Table 2:")
    for label, method in (
        ("SGD", "sgd"),
        ("DPSGD", "dpsgd"),
        ("Naïve", "naive"),
        ("DPSGD-F", "dpsgd_f"),
    ):
        t = {ds: pn.DPSGDF_TABLE2[ds][method] for ds in ("mnist", "adult", "dutch")}
        # The paper's columns: losses of the three data sets, then their norms.
        ours = [v for ds in t for v in t[ds][:2]] + [v for ds in t for v in t[ds][2:]]
        assert ours == rows[label], label


def test_table_3_is_the_paper_s():
    rows = _table("Table 3:")
    for (method, clip), values in pn.DPSGDF_TABLE3.items():
        label = (
            f"DPSGD ($C = {clip:g}$) vs. SGD"
            if method == "dpsgd"
            else f"DPSGD-F ($C_0 = {clip:g}$) vs. SGD"
        )
        assert list(values) == rows[label], label


def test_epsilons_are_the_paper_s():
    text = PAPER.read_text() if PAPER.is_file() else pytest.skip("no paper text")
    caption = next(line for line in text.splitlines() if line.startswith("Table 1:"))
    found = [float(x) for x in re.findall(r"\\epsilon = ([\d.]+)", caption)]
    assert found == list(pn.DPSGDF_EPSILON.values())


def test_reported_selects_and_describes_each_number():
    rows = pn.reported(quantity="delta", dataset="mnist", group="digit 8")
    assert [r.value for r in rows] == [-0.6807, -0.1510, -0.0432] + [
        v[2] for v in pn.DPSGDF_TABLE3.values()
    ]
    assert rows[0].where == "Table 1, row 'DPSGD vs. SGD'"
    assert {r.clip_norm for r in rows[3:]} == {1.0, 2.0, 3.0, 4.0, 5.0}
    frame = pn.reported_frame()
    frame = frame[frame.paper == "xu2021removing"]
    # Tables 1 (36), 2 (48), 3 (18) and the three epsilons.
    assert len(frame) == 36 + 48 + 18 + 3
    assert frame.epsilon.isna().all() and frame.feature.isna().all()


def test_reported_refuses_an_unknown_field():
    with pytest.raises(ValueError, match="unknown field"):
        pn.reported(table=1)
