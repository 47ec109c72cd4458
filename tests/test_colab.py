"""The Colab notebooks: plain Markdown from MyST, and committed notebooks that run.

The conversion (``scripts/colab.py``) is tested on small chapters; two committed
notebooks are executed in a fresh kernel as a reader in Jupyter or Colab would run them,
one reading the stored results and one with no stored results (it recomputes the quick
profiles), offline.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import nbformat
import pytest
from script_loader import load_script

ROOT = Path(__file__).resolve().parents[1]


colab = load_script("scripts/colab.py")

BIB = {
    "dwork2006": {
        "authors": "Dwork et al.",
        "year": "2006",
        "url": "https://doi.org/x",
    },
    "xu2021": {"authors": "Xu et al.", "year": "2021", "url": ""},
}


def _converter(tmp_path: Path, glue=None, values=None):
    book = colab.Book("https://github.com/o/r", "main", BIB)
    book.labels = {
        "fig-a": colab.Label("book/part/here.md", "Figure"),
        "thm-b": colab.Label("book/part/here.md", "Theorem (Composition)"),
        "chap-other": colab.Label("book/other/there.md", "Another chapter"),
    }
    (tmp_path / "book" / "part").mkdir(parents=True, exist_ok=True)
    return colab.Converter(
        book, "book/part/here.md", glue or {}, root=tmp_path, values=values
    )


def test_citations_become_author_year_with_links(tmp_path):
    c = _converter(tmp_path)
    assert c.roles("as {cite}`dwork2006` shows") == (
        "as (Dwork et al. [2006](https://doi.org/x)) shows"
    )
    assert c.roles("{cite:t}`xu2021`") == "Xu et al. (2021)"
    assert c.roles("{cite}`dwork2006,xu2021`").count(";") == 1
    with pytest.raises(KeyError, match="nokey"):
        c.roles("{cite}`nokey`")


def test_references_become_links_here_or_to_the_other_notebook(tmp_path):
    c = _converter(tmp_path)
    assert c.roles("{numref}`fig-a`") == "[Figure](#fig-a)"
    assert c.roles("{prf:ref}`thm-b`") == "[Theorem (Composition)](#thm-b)"
    assert c.roles("{ref}`the other <chap-other>`") == (
        "[the other](https://colab.research.google.com/github/o/r/blob/main/"
        "book/other/there.ipynb#chap-other)"
    )
    assert c.roles("{numref}`Figure %s <fig-a>`") == "[Figure](#fig-a)"
    assert c.roles("{py:func}`~dpnotes.mechanisms.laplace_mechanism`") == (
        "`dpnotes.mechanisms.laplace_mechanism`"
    )
    assert c.roles("{math}`x^2`") == "$x^2$"


def test_glued_values_are_the_book_s(tmp_path):
    glue = {
        "sigma": {"text/plain": "'4.22'"},
        "k": {"text/plain": "11.0"},
        "finding": {"text/markdown": "**bold**", "text/plain": "<md>"},
    }
    c = _converter(tmp_path, glue)
    assert (
        c.roles("σ = {glue:text}`sigma`, k = {glue:text}`k:.0f`") == "σ = 4.22, k = 11"
    )
    assert c.roles("{glue:md}`finding:myst`") == "**bold**"
    assert c.used == {"sigma": "4.22", "k:.0f": "11", "md:finding:myst": "**bold**"}
    with pytest.raises(colab.MissingValue, match="make book"):
        c.roles("{glue:text}`absent`")
    # Checking a committed notebook uses the values it recorded, as they are.
    checked = _converter(tmp_path, values=c.used)
    assert checked.roles("{glue:text}`k:.0f`") == "11"


def test_directives_become_plain_markdown(tmp_path):
    c = _converter(tmp_path)
    text = "\n".join(
        [
            "(sec-x)=",
            "## Title",
            "```{prf:theorem} Composition",
            ":label: thm-b",
            "",
            "Budgets {cite}`xu2021` add.",
            "```",
            "```{prf:proof}",
            "Obvious.",
            "```",
            ":::{admonition} Learning objectives",
            ":class: tip",
            "",
            "- one",
            ":::",
            "```{glue:figure} fig-a",
            ":name: fig-a",
            ":alt: A chart.",
            "",
            "The caption.",
            "Download: {download}`SVG <../_figures/e-fig-a.svg>`.",
            "```",
            "```python",
            "x = '{cite}`kept in code`'",
            "```",
        ]
    )
    out = c.markdown(text)
    assert '<a id="sec-x"></a>' in out and "## Title" in out
    assert '<a id="thm-b"></a>' in out
    assert "**Theorem (Composition).** Budgets Xu et al. 2021 add." in out.replace(
        "(Xu et al. 2021)", "Xu et al. 2021"
    )
    assert "*Proof.* Obvious." in out
    assert "> **Learning objectives**" in out and "> - one" in out
    assert "**Figure.** The caption." in out and "Download" not in out
    assert "x = '{cite}`kept in code`'" in out  # code is left alone
    assert not colab.RAW_MYST.search(out.replace("{cite}`kept in code`", ""))


def test_listings_include_the_object_or_lines(tmp_path):
    (tmp_path / "book" / "part").mkdir(parents=True)
    (tmp_path / "mod.py").write_text(
        "import os\n\n\nclass A:\n    def f(self):\n        return 1\n\n"
        "    def g(self):\n        return 2\n"
    )
    c = _converter(tmp_path)
    out = c.markdown(
        "```{literalinclude} ../../mod.py\n:pyobject: A.g\n:dedent: 4\n```"
    )
    assert out == "```python\ndef g(self):\n    return 2\n```"
    out = c.markdown("```{literalinclude} ../../mod.py\n:lines: 1,4-5\n```")
    assert out == "```python\nimport os\nclass A:\n    def f(self):\n```"
    out = c.markdown(
        "```{literalinclude} ../../mod.py\n:pyobject: A\n:start-at: def g\n"
        ":end-at: return 2\n```"
    )
    assert out == "```python\n    def g(self):\n        return 2\n```"
    with pytest.raises(ValueError, match=r"no 'A\.h'"):
        c.markdown("```{literalinclude} ../../mod.py\n:pyobject: A.h\n```")


def test_unknown_roles_and_directives_are_errors_not_raw_text(tmp_path):
    c = _converter(tmp_path)
    with pytest.raises(ValueError, match="role"):
        c.roles("{unknownrole}`x`")
    with pytest.raises(ValueError, match="directive"):
        c.markdown("```{unknowndirective}\nbody\n```")


def test_raw_myst_detector():
    for raw in (
        "see {cite}`a`",
        "```{note}\nx\n```",
        ":::{admonition} T",
        "{glue:text}`k`",
    ):
        assert colab.RAW_MYST.search(raw), raw
    for plain in ("plain `code` text", "```python\nx = 1\n```", "a {set} of `x`"):
        assert not colab.RAW_MYST.search(plain), plain


def test_install_cell_is_plain_python_that_names_the_repository():
    cell = colab.install_cell("https://github.com/o/r")
    compile(cell, "cell", "exec")
    assert 'REPOSITORY = "https://github.com/o/r"' in cell
    assert all(len(line) <= 88 for line in cell.splitlines())
    assert "google.colab" in cell
    # Outside Colab it does nothing: no clone, no install, no setting.
    before = dict(os.environ)
    exec(cell, {})
    assert dict(os.environ) == before


def test_install_cell_in_colab_clones_installs_and_points_at_the_results(
    monkeypatch,
):
    import subprocess
    import sys
    import types

    calls = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append((a, k)))
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    # Set, then deleted: both recorded, so teardown restores the variable as it was
    # (a plain delenv of an unset variable records nothing, and the cell's setting
    # would leak into every later test).
    monkeypatch.setenv("DPNOTES_RESULTS_DIR", "unset")
    monkeypatch.delenv("DPNOTES_RESULTS_DIR")
    exec(colab.install_cell("https://github.com/o/r"), {})
    ((command,), options) = calls[0]
    assert len(calls) == 1 and options == {"shell": True, "check": True}
    assert command == (
        "git clone -q --depth 1 https://github.com/o/r /content/dpnotes && "
        f"{sys.executable} -m pip install -q /content/dpnotes"
    )
    assert os.environ["DPNOTES_RESULTS_DIR"] == "/content/dpnotes/book/_results"


# ---------------------------------------------------------- executing two notebooks


def _stored_files() -> dict[Path, float]:
    results = ROOT / "book" / "_results"
    return {
        p: p.stat().st_mtime
        for p in results.rglob("*")
        if p.is_file() and ".run_cache" not in p.parts and p.name != ".lock"
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    ("notebook", "stored"),
    [
        ("book/stratification/theory.ipynb", True),
        ("book/foundations/dp_basics.ipynb", False),
    ],
    ids=["stored-results", "no-results-recomputes-quick"],
)
def test_a_committed_notebook_runs_in_a_fresh_kernel(
    notebook, stored, tmp_path, monkeypatch
):
    nbclient = pytest.importorskip("nbclient")
    if not os.environ.get("DPNOTES_DATA_DIR", "").strip():
        pytest.skip("set DPNOTES_DATA_DIR: the notebooks read the data sets")
    monkeypatch.setenv("DPNOTES_OFFLINE", "1")
    monkeypatch.setenv("DPNOTES_FIGURES_DIR", str(tmp_path / "figures"))
    if not stored:
        monkeypatch.setenv("DPNOTES_RESULTS_DIR", str(tmp_path / "results"))
    else:
        monkeypatch.delenv("DPNOTES_RESULTS_DIR", raising=False)
    path = ROOT / notebook
    nb = nbformat.read(path, as_version=4)
    before = _stored_files()
    start = time.perf_counter()
    client = nbclient.NotebookClient(
        nb,
        timeout=900,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()  # raises CellExecutionError, with the traceback, on any error
    took = time.perf_counter() - start

    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    # Nothing the book hides: no warnings or other text on stderr, no stray
    # ``Out[]`` values (a figure cell returns nothing).
    stderr = [
        o.text for o in outputs if o.output_type == "stream" and o.name == "stderr"
    ]
    assert not stderr, f"{notebook}: stderr output {stderr[0][:300]!r}"
    stray = [o for o in outputs if o.output_type == "execute_result"]
    assert not stray, f"{notebook}: {stray[0].get('data', {}).get('text/plain')!r}"
    images = sum("image/png" in o.get("data", {}) for o in outputs)
    captions = sum(
        c.source.count("**Figure.**") for c in nb.cells if c.cell_type == "markdown"
    )
    assert captions > 0
    assert images >= captions, f"{notebook}: {images} images for {captions} figures"
    for o in outputs:
        text = o.get("data", {}).get("text/markdown", "")
        assert not colab.RAW_MYST.search(text), f"raw MyST in an output: {text[:120]!r}"
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            assert not colab.RAW_MYST.search(cell.source), cell.source[:120]
    # Each figure was also written as SVG and PDF.
    svgs = sorted((tmp_path / "figures").glob("*.svg"))
    assert len(svgs) >= captions
    assert len(list((tmp_path / "figures").glob("*.pdf"))) == len(svgs)
    if stored:
        # Read, not recomputed: no stored result was written.
        assert _stored_files() == before
    else:
        assert any((tmp_path / "results").rglob("results.csv")), "nothing recomputed"
    print(f"{notebook}: {images} images, {captions} figures, {took:.0f} s")
