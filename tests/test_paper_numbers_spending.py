"""The spending paper's numbers kept as data: the printed values, and consistent."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from dpnotes import paper_numbers as pn

PAPER = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "papers"
    / "spending-budget-wisely-arxiv2204.12903.txt"
)
KEY = "rosenblatt2022spending"


def _text() -> str:
    if not PAPER.is_file():
        pytest.skip(
            f"{PAPER} is not here (the papers' text sits beside the repository)"
        )
    return PAPER.read_text()


def _plain(text: str) -> str:
    """The paper's text with its LaTeX written out and whitespace collapsed."""
    for old, new in (
        ("\\{", "{"), ("\\}", "}"), ("$", ""), ("\\epsilon", "epsilon"),
        ("ϵ", "epsilon"), ("\\in", "in"),
    ):  # fmt: skip
        text = text.replace(old, new)
    return re.sub(r"\s+", " ", text)


def _exponents(group: str) -> tuple[int, ...]:
    return tuple(int(k) for k in re.findall(r"e\^(\d)", group))


# ------------------------------------------------------------------------ Table 1


def test_table_1_is_the_papers() -> None:
    rows = {}
    for line in _text().splitlines():
        m = re.match(
            r"^(Overall|White|Black)\t([\d.]+)\t([\d.]+) ?/ ?(\d+)\t([\d.]+) ?/ ?(\d+)"
            r"\t([\d.]+) ?/ ?(\d+)",
            line,
        )
        if m:
            rows[m.group(1).lower()] = [float(x) for x in m.groups()[1:]]
    assert list(rows) == list(pn.SPENDING_TABLE1_GROUPS)
    for group, values in rows.items():
        assert values[0] == pn.SPENDING_TABLE1_BASE_RATES[group]
        ours = [
            v for m in ("real", "mst", "fsq_bal") for v in pn.SPENDING_TABLE1[m][group]
        ]
        assert ours == values[1:], group


def test_table_1_caption_and_text_are_the_papers() -> None:
    text = _plain(_text())
    white, black = re.search(
        r"data contains ([\d.]+)% white and ([\d.]+)% black", text
    ).groups()
    assert pn.SPENDING_TABLE1_SHARES == {"white": float(white), "black": float(black)}
    assert "with epsilon = e^3, average over 10 runs" in text
    stated = {
        ("real", "overall", "accuracy_pct"): r"accuracy on the real data is ([\d.]+)%",
        (
            "real",
            "white-black",
            "accuracy_gap_pct",
        ): r"it's ([\d.]+)% higher for the white",
        ("mst", "overall", "accuracy_pct"): r"substantially lower at ([\d.]+)% overall",
        ("mst", "white-black", "accuracy_gap_pct"): r"exacerbated ([\d.]+)% disparity",
        ("fsq_bal", "overall", "accuracy_pct"): r"high overall accuracy of ([\d.]+)%",
        ("fsq_bal", "overall", "fnr_pct"): r"overall and for both groups to ([\d.]+)%",
    }
    for key, pattern in stated.items():
        assert pn.SPENDING_TABLE1_TEXT[key] == float(re.search(pattern, text).group(1))
    for group in ("white", "black"):  # "for both groups to 9%"
        assert pn.SPENDING_TABLE1_TEXT["fsq_bal", group, "fnr_pct"] == 9.0


def test_table_1_is_internally_consistent() -> None:
    t, share = pn.SPENDING_TABLE1, pn.SPENDING_TABLE1_SHARES
    for row in t.values():
        for acc, fnr in row.values():
            assert 0 <= acc <= 100 and 0 <= fnr <= 100

    def white_and_black(white: float, black: float) -> float:
        w, b = share["white"], share["black"]
        return (w * white + b * black) / (w + b)

    # "Overall" accuracy is the mean over the white and black rows only (the paper's
    # evaluation kept those two groups): it holds for Real and FSQ-Bal, and for MST
    # with the text's 65.1; the table's 65.2 is 0.1 off.
    for method in ("real", "fsq_bal"):
        mixed = white_and_black(t[method]["white"][0], t[method]["black"][0])
        assert abs(mixed - t[method]["overall"][0]) < 0.05, method
    mst = white_and_black(t["mst"]["white"][0], t["mst"]["black"][0])
    assert abs(mst - pn.SPENDING_TABLE1_TEXT["mst", "overall", "accuracy_pct"]) < 0.05
    assert abs(mst - t["mst"]["overall"][0]) > 0.05
    # The base rate, instead, is over everyone: Table 3's mean of ESR.
    esr = pn.spending_description("ACSEmployment-CA").loc["mean", "ESR"]
    assert round(pn.SPENDING_TABLE1_BASE_RATES["overall"] / 100, 2) == esr
    # The gaps the text states are the table's.
    for method in ("real", "mst"):
        gap = t[method]["white"][0] - t[method]["black"][0]
        stated = pn.SPENDING_TABLE1_TEXT[method, "white-black", "accuracy_gap_pct"]
        assert gap == pytest.approx(stated, abs=1e-9)


# ------------------------------------------------------------------------ Table 2


def test_table_2_is_the_papers() -> None:
    rows = {}
    for line in _text().splitlines():
        m = re.match(r"^(ACS\w+)\t0\.2/1\.0\t(.+)$", line)
        if m:
            pairs = [tuple(map(float, c.split("/"))) for c in m.group(2).split("\t")]
            rows[m.group(1)] = pairs
    assert pn.SPENDING_TABLE2_EPSILONS == (0.2, 1.0)
    assert list(rows) == [d.split("-")[0] for d in pn.SPENDING_TABLE2]
    for dataset, metrics in pn.SPENDING_TABLE2.items():
        assert list(metrics) == ["ndcg", "jaccard", "map"]
        assert list(metrics.values()) == rows[dataset.split("-")[0]], dataset
        for low, high in metrics.values():
            assert 0 <= low <= high <= 1  # as printed: more budget, closer to SAGE


# -------------------------------------------------------------------- Tables 3-5


def _printed_tables() -> dict[int, tuple[list[str], dict[str, list[float]], int]]:
    lines = _text().splitlines()
    out = {}
    for i, line in enumerate(lines):
        m = re.match(
            r"^Table (\d): ACS\w+ scenario data description\. Count=(\d+)", line
        )
        if not m:
            continue
        start = i
        while not lines[start].startswith("\tMAR\t"):
            start -= 1
        header = lines[start].strip().split("\t")
        rows = {}
        for row in lines[start + 1 : i]:
            cells = row.split("\t")
            if cells[0] in pn.SPENDING_DESCRIPTION_STATS:
                rows[cells[0]] = [float(c) for c in cells[1:]]
        out[int(m.group(1))] = (header, rows, int(m.group(2)))
    return out


def test_tables_3_to_5_are_the_papers() -> None:
    printed = _printed_tables()
    assert sorted(printed) == [3, 4, 5]
    for table, dataset in (
        (3, "ACSEmployment-CA"),
        (4, "ACSMobility-NM"),
        (5, "ACSPublicCoverage-NM"),
    ):
        header, rows, count = printed[table]
        assert header == [h for h, _ in pn.SPENDING_DESCRIPTION_COLUMNS[dataset]]
        assert count == pn.SPENDING_DESCRIPTION_COUNTS[dataset]
        assert list(rows) == list(pn.SPENDING_DESCRIPTION_STATS)
        for stat, values in pn.SPENDING_DESCRIPTIONS[dataset].items():
            assert list(values) == rows[stat], (table, stat)


def _binary_std_range(mean: float, n: int) -> tuple[float, float]:
    """The stds a 0/1 column can have when its mean prints as ``mean``."""
    p = np.clip(np.linspace(mean - 0.005, mean + 0.005, 101), 0.0, 1.0)
    sd = np.sqrt(p * (1 - p) * n / (n - 1))
    return float(sd.min()) - 0.005, float(sd.max()) + 0.005


def test_tables_3_to_5_are_internally_consistent() -> None:
    for dataset in pn.SPENDING_DESCRIPTIONS:
        frame = pn.spending_description(dataset)
        n = pn.SPENDING_DESCRIPTION_COUNTS[dataset]
        assert frame.shape == (8, len(pn.SPENDING_DESCRIPTION_COLUMNS[dataset]))
        assert (frame.loc["count"] == n).all()
        order = frame.loc[["min", "25%", "50%", "75%", "max"]].to_numpy()
        assert (np.diff(order, axis=0) >= 0).all(), dataset
        assert (frame.loc["min"] <= frame.loc["mean"]).all()
        assert (frame.loc["mean"] <= frame.loc["max"]).all()
        assert (frame.loc["std"] >= 0).all()
        for column in frame.columns:
            if (frame.loc["min", column], frame.loc["max", column]) == (0.0, 1.0):
                low, high = _binary_std_range(frame.loc["mean", column], n)
                assert low <= frame.loc["std", column] <= high, (dataset, column)
    # Table 4's target: 25% of 3,443 rows is a half-way quartile (0.50) exactly when
    # 861 rows are 0, which is 25.0%: the printed mean 0.75.
    mob = pn.spending_description("ACSMobility-NM")
    assert mob.loc["25%", "MIG"] == 0.5 and mob.loc["mean", "MIG"] == 0.75


def test_spending_description_refuses_another_table() -> None:
    with pytest.raises(ValueError, match="unknown data set 'ACSIncome-CA'"):
        pn.spending_description("ACSIncome-CA")


# -------------------------------------------------- epsilons, splits, data, claims


def test_epsilons_are_the_papers_and_cut_from_e_to_the_k() -> None:
    text = _plain(_text())
    printed = re.search(r"epsilon \\approx ([\d., ]+?), respectively", text).group(1)
    assert [float(x) for x in printed.split(",")] == list(pn.SPENDING_EPSILONS.values())
    assert (
        _exponents(re.search(r"use values of ([^,]+(?:, e\^\d)+)", text).group(1))
        == (pn.SPENDING_EPSILON_GRIDS["Section 3.3"])
    )
    for k, value in pn.SPENDING_EPSILONS.items():
        assert value == math.floor(math.exp(k) * 100) / 100  # cut, not rounded


def test_epsilon_grids_are_the_papers() -> None:
    text = _plain(_text())
    grids = pn.SPENDING_EPSILON_GRIDS
    settings = re.search(r"range of privacy budgets, epsilon in ({[^}]+})", text)
    assert _exponents(settings.group(1)) == grids["Section 5, Settings"]
    detailed = re.search(r"detailed results for epsilon in ({[^}]+})", text)
    assert (
        _exponents(detailed.group(1)) == grids["Section 5, Settings (detailed results)"]
    )
    captions: dict[str, set[tuple[int, ...]]] = {}
    for found in re.finditer(
        r"at varying epsilon in ({[^}]+}) on (?:the )?([\w ]+?)\.", text
    ):
        name = found.group(2).replace(" ", "")
        captions.setdefault(name, set()).add(_exponents(found.group(1)))
    assert captions == {
        "ACSEmployment": {grids["Figure 2, captions"]},
        "ACSMobility": {grids["Figure 4, captions"]},
        "ACSPublicCoverage": {grids["Figure 5, captions"]},
    }
    for figure, key in (
        ("4a-4d", "Appendix A.1 (Figure 4)"),
        ("5a-5d", "Appendix A.2 (Figure 5)"),
    ):
        found = re.search(
            rf"Figures {figure} contain results .*? epsilon in ({{[^}}]+}})", text
        )
        assert _exponents(found.group(1)) == grids[key]
    assert "Real SAGE and DPSAGE at epsilon = 1.0 for ACSEmployment" in text
    assert pn.reported(where="Figure 3, caption")[0].value == 1.0


def test_splits_and_grids_are_the_papers() -> None:
    text = _plain(_text())
    low = re.search(
        r"split of {([\d.]+)epsilon, ([\d.]+)epsilon} between DP-SAGE", text
    )
    gamma = re.search(r"most often best at {([\d.]+)epsilon, ([\d.]+)epsilon}", text)
    even = re.search(
        r"even split \({([\d.]+)epsilon, ([\d.]+)epsilon}\) across all", text
    )
    for k, (alpha, g) in pn.SPENDING_SPLITS.items():
        found = low if k <= 2 else even
        assert alpha == float(found.group(1)) == 1 - float(found.group(2))
        assert g == float((gamma if k <= 2 else even).group(1))
    lo, hi, step = pn.SPENDING_SPLIT_GRID
    assert f"grid search over [{lo}, {hi}] at intervals of {step}" in text
    beta = re.search(r"beta in {([\d, ]+)}", text).group(1)
    assert tuple(int(b) for b in beta.split(",")) == pn.SPENDING_BETA_GRID


def test_data_facts_are_the_papers() -> None:
    text = _plain(_text())
    facts = pn.SPENDING_DATA
    for dataset, state in (
        ("ACSEmployment-CA", "CA"),
        ("ACSPublicCoverage-NM", "NM"),
        ("ACSMobility-NM", "NM"),
    ):
        task = dataset.split("-")[0].replace("ACS", "ACS ?")
        found = re.search(rf"on {task} \(state={state}, (\d+) features\)", text)
        assert float(found.group(1)) == facts[dataset, "features"][0], dataset
    assert "which has n=378,817 samples" in text and "which has n=7,693 samples" in text
    assert facts["ACSEmployment-CA", "rows"][0] == 378817
    assert facts["ACSPublicCoverage-NM", "rows"][0] == 7693
    assert "between the ages of 18 and 35" in text
    assert (
        facts["ACSMobility-NM", "age_lower"][0],
        facts["ACSMobility-NM", "age_upper"][0],
    ) == (18, 35)
    assert "under the age of 65 making less than \\30,000" in text
    assert facts["ACSPublicCoverage-NM", "age_upper"][0] == 65
    assert facts["ACSPublicCoverage-NM", "income_upper"][0] == 30000
    assert "with 10 runs per experiment" in text and facts["all", "runs"][0] == 10


def test_claims_are_quoted_and_well_formed() -> None:
    text = _plain(_text())
    assert len(pn.SPENDING_CLAIMS) == 10
    for claim in pn.SPENDING_CLAIMS:
        assert claim.paper == KEY
        assert claim.text in text, claim.text
        assert all(re.fullmatch(r"[245][a-d]", f) for f in claim.figures)
        assert set(claim.metrics) <= {"accuracy", "f1", "fnr", "fpr"}
        assert set(claim.methods) <= {"real", "mst", "sq", "fsq_bal", "fsq_fnr"}
        assert set(claim.groups) <= {"overall", "white", "black"}
        assert set(claim.log_epsilons) <= {0, 1, 2, 3, 4}
        data = {
            "2": "ACSEmployment-CA",
            "4": "ACSMobility-NM",
            "5": "ACSPublicCoverage-NM",
        }
        assert {data[f[0]] for f in claim.figures} == {claim.dataset}


def test_reported_lists_every_spending_number_once() -> None:
    rows = pn.reported(paper=KEY)
    # Table 1: 18 cells, 3 base rates, 2 shares, 8 values in the text; Table 2: 18;
    # Tables 3-5: 3 counts and 7 x (14 + 14 + 16) cells; 4 epsilons, Figure 3's
    # epsilon, 4 x 2 splits, 10 data facts.
    assert len(rows) == 18 + 3 + 2 + 8 + 18 + 3 + 7 * 44 + 4 + 1 + 8 + 10
    keys = [
        (r.where, r.dataset, r.method, r.group, r.quantity, r.epsilon, r.feature)
        for r in rows
    ]
    assert len(set(keys)) == len(keys)
    [cell] = pn.reported(paper=KEY, where="Table 4, row 'mean', column 'MIG'")
    assert (cell.value, cell.feature, cell.dataset) == (0.75, "MIG", "ACSMobility-NM")
    [cell] = pn.reported(
        paper=KEY, where="Table 5, row 'std', column 'DER'", quantity="std"
    )
    assert (cell.value, cell.feature) == (0.18, "DEAR")
    fnr = pn.reported(paper=KEY, method="mst", group="black", quantity="fnr_pct")
    assert [(r.value, r.epsilon) for r in fnr] == [(21.0, 20.08)]
    ndcg = pn.reported(paper=KEY, quantity="ndcg", dataset="ACSMobility-NM")
    assert [(r.epsilon, r.value) for r in ndcg] == [(0.2, 0.96), (1.0, 0.98)]
    frame = pn.reported_frame()
    assert (frame.paper == KEY).sum() == len(rows)


def test_the_authors_stored_metrics_are_well_formed() -> None:
    # Four methods, each (accuracy, F1, FPR, FNR) as fractions; the authors' runs put
    # SQ 7.5 points above MST in accuracy, and FSQ's FNR above SQ's (their evaluation).
    assert set(pn.SPENDING_AUTHORS_E2) == {"mst", "sq", "fsq_bal", "fsq_fnr"}
    for values in pn.SPENDING_AUTHORS_E2.values():
        assert len(values) == 4 and all(0 < v < 1 for v in values)
    acc = {m: v[0] for m, v in pn.SPENDING_AUTHORS_E2.items()}
    assert math.isclose(acc["sq"] - acc["mst"], 0.075, abs_tol=1e-9)
    fnr = {m: v[3] for m, v in pn.SPENDING_AUTHORS_E2.items()}
    assert fnr["fsq_bal"] > fnr["sq"] and fnr["fsq_fnr"] > fnr["sq"]
    assert re.fullmatch(r"[0-9a-f]{40}", pn.SPENDING_AUTHORS_COMMIT)
    assert pn.SPENDING_AUTHORS_REPOSITORY == "lurosenb/sq_supplementary_materials"
