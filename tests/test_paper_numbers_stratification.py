"""The stratification paper's numbers kept as data: consistent, and the paper's text."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from dpnotes import paper_numbers as pn

PAPERS = Path(__file__).resolve().parents[2] / "shared" / "papers"
ARXIV = PAPERS / "stratification-arxiv2312.11712-with-appendix.txt"


def _text() -> str:
    if not ARXIV.is_file():
        pytest.skip(
            f"{ARXIV} is not here (the papers' text sits beside the repository)"
        )
    return ARXIV.read_text()


def _table3_margins() -> tuple[int, np.ndarray, np.ndarray]:
    counts = np.array(list(pn.STRAT_TABLE3.values()))
    sex = np.array([s for s, _ in pn.STRAT_TABLE3])
    race = np.array([r for _, r in pn.STRAT_TABLE3])
    n = int(counts.sum())
    by_sex = np.bincount(sex, weights=counts, minlength=3)[1:]
    by_race = np.bincount(race, weights=counts, minlength=10)[1:]
    return n, by_sex, by_race


def test_table3_covers_every_sex_and_race_once_and_sums_to_the_file():
    assert sorted(pn.STRAT_TABLE3) == [(s, r) for s in (1, 2) for r in range(1, 10)]
    n, _, _ = _table3_margins()
    assert n == pn.STRAT_NY_RACE.n == pn.STRAT_TABLE2_COUNT
    assert n == pn.STRAT_TABLE1["SEX"][0] == pn.STRAT_TABLE1["RAC1P"][0]


def test_table3_gives_tables_1_and_2_sex_and_race_moments():
    n, by_sex, by_race = _table3_margins()
    codes = np.arange(1, 10)
    for table in (pn.STRAT_TABLE1, pn.STRAT_TABLE2):
        sex_mean = 1 + by_sex[1] / n
        assert round(sex_mean, 3) == table["SEX"][-5]
        race_mean = float((codes * by_race).sum() / n)
        race_sd = float(np.sqrt((by_race * (codes - race_mean) ** 2).sum() / (n - 1)))
        assert round(race_mean, 3) == table["RAC1P"][-5]
        assert round(race_sd, 3) == table["RAC1P"][-4]


def test_table3_gives_the_race_example_s_shares():
    n, _, by_race = _table3_margins()
    shares = np.sort(by_race / n)[::-1]
    printed = pn.STRAT_NY_RACE.shares
    for share, value in zip(shares, printed, strict=False):
        digits = len(str(value).split(".")[1])
        assert round(share, digits) == value
    assert pn.STRAT_NY_RACE.k == len(by_race) == len(pn.STRAT_RACE_CODES)


def test_descriptive_tables_are_ordered_and_in_range():
    for count, mean, sd, lo, hi, median in pn.STRAT_TABLE1.values():
        assert 0 < count <= pn.STRAT_TABLE2_COUNT
        assert lo <= median <= hi and lo <= mean <= hi and sd > 0
    for mean, sd, lo, hi, median in pn.STRAT_TABLE2.values():
        assert lo <= median <= hi and lo <= mean <= hi and sd > 0
        # A variable confined to [lo, hi] has sd at most half the range.
        assert sd <= (hi - lo) / 2 + 1e-9
    for column in ("SEX", "DIS", "RAC1P"):
        assert pn.STRAT_TABLE1[column][1:] == (
            pn.STRAT_TABLE2[column][0],
            pn.STRAT_TABLE2[column][1],
            *pn.STRAT_TABLE2[column][2:],
        )


def test_the_authors_census_sizes_are_table_1_s_counts():
    sizes = pn.STRAT_AUTHORS["table1-sizes"].values
    assert sizes == tuple(
        pn.STRAT_TABLE1[v][0] for v in ("SCHL", "WKHP", "JWMNP", "PINCP")
    )
    means = pn.STRAT_AUTHORS["table1-means"].values
    for value, column in zip(means, ("SCHL", "WKHP", "JWMNP", "PINCP"), strict=True):
        assert value == pytest.approx(pn.STRAT_TABLE1[column][1], abs=0.001)
    bias = pn.STRAT_AUTHORS["fig2-coinpress-bias"].values
    relative = pn.STRAT_AUTHORS["fig2-coinpress-relative"].values
    means = [pn.STRAT_TABLE1[v][1] for v in ("SCHL", "WKHP", "JWMNP")]
    for b, r, m in zip(bias, relative, means, strict=True):
        assert abs(b) / m == pytest.approx(r, abs=0.001)


def test_the_authors_tallies_add_up():
    total, *per_synth = pn.STRAT_AUTHORS["fig5-all"].values
    assert total == sum(per_synth) and all(0 <= w <= 18 for w in per_synth)
    wins, cells = pn.STRAT_AUTHORS["fig3-below"].values
    assert 0 <= wins <= cells
    assert all(0 <= w <= 31 for w in pn.STRAT_AUTHORS["fig2-overall"].values)
    by_epsilon = np.reshape(pn.STRAT_AUTHORS["fig5-by-epsilon"].values, (6, 3))
    assert by_epsilon.sum(axis=0).tolist() == per_synth and by_epsilon.max() <= 3
    low, high = pn.STRAT_AUTHORS["fig5-reduction"].values
    assert 1 < low < high < pn.STRAT_CLAIMS["fig5-reduction"].values[0] + 3
    assert set(pn.STRAT_AUTHORS) - {
        "table1-sizes",
        "table1-means",
        "fig2-coinpress-bias",
        "fig2-coinpress-relative",
        "fig3-strat-error",
        "fig3-below",
        "gem-vanilla-sex-parity",  # a baseline's numbers, not a claim's
        "fig5-by-epsilon",  # fig5-all split by epsilon
    } <= set(pn.STRAT_CLAIMS)
    assert re.fullmatch(r"[0-9a-f]{40}", pn.STRAT_AUTHORS_COMMIT)


def test_table_1_is_the_paper_s():
    lines = _text().splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("SEX DIS NATIVITY"))
    columns = lines[head].split()
    rows = {ln.split()[0]: ln for ln in lines[head + 1 : head + 6]}
    counts = [int(v) for v in rows["Count"].split()[1:]]
    means = [float(v) for v in rows["Mean"].split()[1:]]
    sds = [float(v) for v in rows["Std"].split()[1:]]
    medians = [float(v) for v in rows["Median"].split()[1:]]
    ranges = re.findall(r"\[(-?\d+) , (-?\d+)\]", rows["Range"])
    for j, column in enumerate(columns):
        count, mean, sd, lo, hi, median = pn.STRAT_TABLE1[column]
        assert (count, mean, sd, median) == (counts[j], means[j], sds[j], medians[j])
        assert (lo, hi) == tuple(int(v) for v in ranges[j])


def test_table_2_is_the_paper_s():
    lines = _text().splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("AGEP SCHL MAR"))
    columns = lines[head].split()
    rows = {ln.split()[0]: ln for ln in lines[head + 1 : head + 5]}
    ranges = re.findall(r"\[(-?\d+) , (-?\d+)\]", rows["Range"])
    assert columns == list(pn.STRAT_TABLE2)
    for j, column in enumerate(columns):
        mean, sd, lo, hi, median = pn.STRAT_TABLE2[column]
        assert mean == float(rows["Mean"].split()[1 + j])
        assert sd == float(rows["Std"].split()[1 + j])
        assert median == float(rows["Median"].split()[1 + j])
        assert (lo, hi) == tuple(int(v) for v in ranges[j])
    assert f"count ={pn.STRAT_TABLE2_COUNT}" in _text().replace("= ", "=")


def test_table_3_is_the_paper_s():
    lines = _text().splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("SEX RAC1P Count"))
    sex = {"Male": 1, "Female": 2}
    printed = {}
    for line in lines[head + 1 : head + 19]:
        first, rest = line.split(" ", 1)
        label, count = rest.rsplit(" ", 1)
        printed[(sex[first], pn.STRAT_RACE_CODES[label])] = int(count)
    assert list(printed.items()) == list(pn.STRAT_TABLE3.items())


def test_the_race_example_is_the_paper_s():
    text = _text()
    ex = pn.STRAT_NY_RACE
    assert f"n={ex.n}" in text.replace(" ", "")
    assert f"k={ex.k}" in text.replace(" ", "")
    shares = ",".join(f"{v:g}" for v in ex.shares).replace("0.7,", "0.70,")
    assert shares in text.replace(" ", "")
    assert f"\\alpha\\approx {ex.alpha}" in text
    assert f"\\sim {ex.gain:.0%}".replace("%", "\\%") in text


def test_every_claim_s_number_is_printed_in_the_paper():
    text = _text()
    for key, claim in pn.STRAT_CLAIMS.items():
        assert claim.where and claim.claim, key
        for value in claim.values:
            forms = {f"{value:g}", f"{value:.1f}", f"{value:.0f}", f"{value:,.0f}"}
            if value < 1:
                forms |= {f"{value:.0%}".replace("%", "\\%")}
            if value == 2.0:
                forms |= {"200\\%"}
            assert any(f in text for f in forms), (key, value)


def test_reported_lists_the_stratification_numbers():
    rows = pn.reported(paper="rosenblatt2024stratification", quantity="alpha")
    assert [r.value for r in rows] == [0.13]
    frame = pn.reported_frame()
    strat = frame[frame.paper == "rosenblatt2024stratification"]
    n_claims = sum(len(c.values) for c in pn.STRAT_CLAIMS.values())
    assert len(strat) == 9 * 6 + 10 * 5 + 18 + 3 + n_claims
    table3 = pn.reported(where="Table 3, row 'Male Alaska Native alone'")
    assert [r.value for r in table3] == [2]
