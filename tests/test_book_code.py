"""The chapters compute nothing a reader would cite: their code stays small.

CONVENTIONS rules 18 and 21: a chapter's numbers come from ``dpnotes.findings`` (and
the other package modules); chapters call, glue, plot and explain. These checks read
the chapters' code cells (nothing runs) and hold the line while the code moves out:
no function is defined in a chapter but small plotting helpers and the few listed
below, no function name is defined in two chapters, and the chapters' code stays under
a ceiling that only goes down (the issue asked for 1,500 lines at most).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Lines of chapter code (non-blank, non-comment lines of code cells, not counting the
#: Colab install cell every chapter starts with) at most. Raised from 1,000 by the setup
#: lines (imports, loads of the stored results, captions, glue) that splitting a chapter
#: into pages repeats, since glued values are per page: 29 for the DPSGD-F chapter's
#: three pages, 30 for its gaps chapter's three (the summary's values from the next page
#: among them), 39 for the stratified-synthesis chapter's four (each page's read of the
#: stored runs through dpnotes.findings.synthesis.stratified_runs, and the load of the
#: authors'-convention run on the chapter and the fairness page as well).
CEILING = 1_098

#: The first line of the Colab install cell (scripts/colab.py ``install_cell``, kept in
#: step by ``scripts/colab.py sync`` and tests/test_colab.py): boilerplate, not counted.
INSTALL_MARK = "# In Colab: install dpnotes"

#: Functions a chapter may define: plotting helpers, and those still to move into the
#: package (listed so that no new one appears unnoticed). None now: the last, the
#: stratified chapter's ``panel``, is dpnotes.findings.synthesis.StratifiedRuns.panel,
#: since each of that chapter's pages draws its figures.
ALLOWED: dict[str, set[str]] = {}

_DEF = re.compile(r"^\s*def ([A-Za-z_]\w*)\(")


def code_lines(text: str) -> list[str]:
    """The non-blank, non-comment lines of a MyST notebook's code cells, but the Colab
    install cell's."""
    lines: list[str] = []
    cell: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("```{code-cell}"):
            cell = []
            continue
        if cell is not None and line.startswith("```"):
            if not any(c.strip().startswith(INSTALL_MARK) for c in cell[:3]):
                lines.extend(
                    c
                    for c in cell
                    if c.strip()
                    and not c.strip().startswith("#")
                    and not c.startswith(":tags:")
                    and c.strip() != "---"
                )
            cell = None
            continue
        if cell is not None:
            cell.append(line)
    return lines


def chapters() -> dict[str, list[str]]:
    return {
        str(p.relative_to(ROOT)): code_lines(p.read_text())
        for p in sorted((ROOT / "book").rglob("*.md"))
        if "_build" not in p.parts
    }


def test_code_lines_counts_only_code_cells():
    text = "text\n```{code-cell} ipython3\n:tags: [x]\n\n# c\nx = 1\n```\ny = 2\n"
    assert code_lines(text) == ["x = 1"]
    install = (
        f"```{{code-cell}} ipython3\n:tags: [x]\n\n{INSTALL_MARK} ...\nz = 3\n```\n"
    )
    assert code_lines(install + text) == ["x = 1"]


def test_chapter_code_stays_under_the_ceiling():
    total = sum(len(lines) for lines in chapters().values())
    assert total <= CEILING, (
        f"{total} lines of chapter code, over {CEILING}: move computations into "
        "dpnotes.findings (or lower nothing: the ceiling only goes down)."
    )


def test_chapters_define_only_the_listed_functions():
    found = {
        path: {m.group(1) for line in lines if (m := _DEF.match(line))}
        for path, lines in chapters().items()
    }
    extra = {
        path: sorted(names - ALLOWED.get(path, set()))
        for path, names in found.items()
        if names - ALLOWED.get(path, set())
    }
    assert not extra, (
        f"functions defined in chapters: {extra}; put them in dpnotes.findings (or "
        "dpnotes.plotting), test them, and call them from the chapter."
    )


def test_no_function_is_defined_in_two_chapters():
    seen: dict[str, str] = {}
    twice = []
    for path, lines in chapters().items():
        for line in lines:
            if (
                (m := _DEF.match(line))
                and m.group(1) in seen
                and seen[m.group(1)] != path
            ):
                twice.append(f"{m.group(1)}: {seen[m.group(1)]} and {path}")
            elif m:
                seen[m.group(1)] = path
    assert not twice, f"helpers copied between chapters: {twice}"
