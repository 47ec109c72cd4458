"""Text checks of the stratification chapters against the paper they reproduce.

Each test pins a statement that an earlier edition got wrong (issue 27): which of
the paper's figures a figure of ours corresponds to, what the paper claims, and the
corrections listed on the errata page. The chapters are read as text, not executed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
COINPRESS = BOOK / "stratification" / "coinpress.md"
CENSUS = BOOK / "stratification" / "census.md"
THEORY = BOOK / "stratification" / "theory.md"
ERRATA = BOOK / "appendix" / "errata.md"


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _flat(text: str) -> str:
    """Collapse whitespace, so that a phrase may wrap across lines."""
    return re.sub(r"\s+", " ", text)


def caption(path: Path, name: str) -> str:
    """Return the body of the ``glue:figure`` (or ``figure``) block named ``name``."""
    text = _text(path)
    match = re.search(
        r"```\{(?:glue:)?figure\}[^\n]*\n(?::[^\n]*\n)*?:name: "
        + re.escape(name)
        + r"\n(.*?)\n```",
        text,
        flags=re.S,
    )
    assert match, f"no figure named {name} in {path.name}"
    body = re.sub(r"^:[a-z]+:.*$", "", match.group(1), flags=re.M)  # drop options
    return _flat(body)


def section(path: Path, heading: str) -> str:
    """Return the text from a ``## heading`` up to the next heading of level 1 or 2."""
    text = _text(path)
    start = text.index(heading)
    rest = text[start + len(heading) :]
    end = re.search(r"^#{1,2} ", rest, flags=re.M)
    return _flat(rest[: end.start()] if end else rest)


# --- COINPRESS chapter ---


def test_k_sweep_is_the_papers_figure_7():
    # The paper's appendix Figure 7 varies k; its Figure 6 is "complete results".
    text = caption(COINPRESS, "fig-synthetic-k")
    assert "Figure 7" in text
    assert "Figure 6" not in text


def test_alpha_sweep_is_not_labelled_as_the_k_figure():
    text = caption(COINPRESS, "fig-synthetic-alpha")
    assert "(the paper's Figure 7)" not in text
    # it names the paper's k figure instead; which one Figure 6 is stays open
    assert "Figure 7 is the sweep over $k$" in text
    assert "Figure 6" in text


def test_synthetic_mixtures_mention_the_appendix_spreads():
    text = _flat(_text(COINPRESS))
    assert r"\sigma_i \sim \mathcal{U}(0.1, 2)" in text
    assert "standard deviation 1" in text


# --- census chapter ---


@pytest.mark.parametrize(
    ("name", "row"),
    [("fig-census-error", "top rows"), ("fig-census-parity", "bottom rows")],
)
def test_census_figures_name_the_row_of_both_paper_figures(name, row):
    # The paper's Figures 2 and 8 each have an error row (top) and a parity row.
    text = caption(CENSUS, name)
    assert row in text
    assert "Figure 2" in text and "Figure 8" in text


def test_census_section_headings_name_both_paper_figures():
    text = _text(CENSUS)
    assert (
        "## Error of the overall mean (top rows of the paper's Figures 2 and 8)" in text
    )
    assert "## Parity error (bottom rows of the paper's Figures 2 and 8)" in text
    assert "(the paper's Figure 8)" not in text


def test_census_agreement_states_the_papers_claim_on_the_overall_mean():
    text = section(CENSUS, "## Agreement with the paper, and the differences")
    # The paper: the overall error stays controlled, sometimes *smaller* with
    # stratification; it does not show a cost growing with k.
    assert "grows with $k$, as in the paper" not in text
    assert "sometimes makes it *smaller*" in text
    assert "We find the opposite" in text


def test_census_overall_error_claim_has_a_tested_check():
    # The chapter takes its wins from the findings, whose test pins the claim.
    assert "findings.stratified_wins(tab)" in _text(CENSUS)
    tests = (ROOT / "tests" / "test_findings_stratification.py").read_text()
    assert "assert overall.total_wins <= 0.1 * overall.total_pairs" in tests


def test_census_strata_mention_the_authors_nativity_attribute():
    text = section(CENSUS, "## Data, groups and the state")
    assert "`NATIVITY`" in text


# --- theory chapter ---


def test_theory_describes_the_new_york_sample_by_its_ages():
    text = _flat(_text(THEORY))
    assert "all persons" not in text
    assert "aged 17 to 89" in text


# --- errata ---

NEW_ERRATA = [
    'Def. 10, "average" or sum',
    "zCDP to DP",
    "Equation references",
    "Algorithms 2 and 3, budgets and return value",
    "Appendix B, group spreads",
    "Two Figures 7",
    'Figure 8 caption, "Mobility"',
    '"A reduction of ≥ 200%"',
    "Synthetic experiment, number of runs (code)",
    "Census COINPRESS with unit spread (code)",
    'Census "public" holdout overlaps the private data (code)',
    "PubStratCoinpress census weights attached to other strata (code)",
    "Synthesizers fitted on the test rows (code)",
    r"$\omega = 1/12$ for every grouping (code)",
]
STATUSES = ("found", "derived", "code", "reported")


def _stratification_errata() -> str:
    text = _text(ERRATA)
    # The stratification paper's errata; the other papers' are on sub-pages.
    assert "## DPSGD-F" not in text and "## Spending" not in text
    return text[text.index("## Stratification") :]


def _entries(part: str) -> dict[str, tuple[str, str]]:
    """Map each entry's bold title to (status, the rest of its first line)."""
    out = {}
    for title, status, where in re.findall(
        r"^- \*\*(.+?)\*\* \((.+?); shown in (.+)\)$", part, flags=re.M
    ):
        out[title] = (status.strip(), where)
    return out


def test_errata_lists_the_missing_stratification_items():
    entries = _entries(_stratification_errata())
    missing = [t for t in NEW_ERRATA if t not in entries]
    assert not missing, missing


def test_every_stratification_erratum_has_the_entry_format():
    part = _stratification_errata()
    entries = _entries(part)
    items = re.findall(r"^- \*\*", part, flags=re.M)
    assert len(entries) == len(items), "an entry lacks '(status; shown in ...)'"
    for title, (status, _) in entries.items():
        # a status names how the item was established, e.g. "found and code"
        assert any(word in status for word in STATUSES), (title, status)
    blocks = re.split(r"^- \*\*", part, flags=re.M)[1:]
    for block in blocks:
        assert "*As printed or implemented:*" in block, block[:60]
        assert "*Corrected:*" in block, block[:60]


def _targets() -> tuple[set[str], set[str], set[str]]:
    refs, labels, names = set(), set(), set()
    for md in BOOK.rglob("*.md"):
        if "_build" in md.parts:
            continue
        text = _text(md)
        refs |= set(re.findall(r"^\(([\w-]+)\)=$", text, flags=re.M))
        labels |= set(re.findall(r"^:label: ([\w-]+)$", text, flags=re.M))
        names |= set(re.findall(r"^:name: ([\w-]+)$", text, flags=re.M))
    return refs, labels, names


@pytest.mark.parametrize("page", ["errata", "errata_dpsgdf", "errata_spending"])
def test_errata_cross_references_resolve(page):
    text = _text(ERRATA.with_name(f"{page}.md"))
    refs, labels, names = _targets()
    for target in re.findall(r"\{ref\}`([\w-]+)`", text):
        assert target in refs, target
    for target in re.findall(r"\{prf:ref\}`([\w-]+)`", text):
        assert target in labels, target
    for target in re.findall(r"\{numref\}`([\w-]+)`", text):
        assert target in names | labels, target
