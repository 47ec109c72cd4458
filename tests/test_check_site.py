"""Tests for scripts/check_site.py: static checks without a browser, one run with."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest
from script_loader import load_script


def _load():
    return load_script("scripts/check_site.py")


cs = _load()


def png_bytes(width: int = 4, height: int = 3) -> bytes:
    """Return a valid RGB PNG, written with the standard library only."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    rows = b"".join(b"\x00" + b"\xc0\x20\x20" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


SVG = (
    b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" '
    b'width="10" height="10"><rect width="10" height="10"/></svg>'
)


def page(title: str, body: str, *, mathjax: bool = False, next_page: str = "") -> str:
    script = (
        '<script defer src="_static/mathjax/es5/tex-mml-chtml.js"></script>'
        if mathjax
        else ""
    )
    nxt = f'<a class="right-next" href="{next_page}">next</a>' if next_page else ""
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title>{script}</head>"
        f'<body><main><section id="top"><h1>{title}</h1>{body}</section>'
        f"{nxt}</main></body></html>"
    )


def cell(output: str, *, tags: tuple[str, ...] = ()) -> str:
    tag_classes = "".join(f" tag_{t}" for t in tags)
    return (
        f'<div class="cell{tag_classes} docutils container">'
        '<div class="cell_input docutils container"><pre>x = 1</pre></div>'
        f'<div class="cell_output docutils container">{output}</div></div>'
    )


TRACEBACK = (
    '<div class="output traceback highlight-ipythontb notranslate">'
    '<div class="highlight"><pre><span class="ne">NameError</span>'
    "   Traceback (most recent call last)\n----&gt; 1 foo\n\n"
    "<span>NameError</span>: name 'foo' is not defined\n</pre></div></div>"
)
STDOUT = (
    '<div class="output stream highlight-myst-ansi notranslate">'
    "<pre>mean 0.42</pre></div>"
)
STDERR = (
    '<div class="output stderr highlight-myst-ansi"><pre>UserWarning: x</pre></div>'
)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A tiny built site: one clean page and one page per defect."""
    root = tmp_path / "html"
    (root / "_images").mkdir(parents=True)
    (root / "_static").mkdir()
    (root / "_images" / "fig.png").write_bytes(png_bytes())
    (root / "_images" / "fig.svg").write_bytes(SVG)
    (root / "_images" / "truncated.png").write_bytes(png_bytes()[:40])
    (root / "_images" / "empty.png").write_bytes(b"")
    (root / "_images" / "text.png").write_bytes(b"this is not an image\n")
    (root / "_static" / "helper.html").write_text(page("static", "<p>x</p>"))
    (root / "index.html").write_text(
        '<meta http-equiv="Refresh" content="0; url=clean.html" />'
    )
    for name in ("search.html", "genindex.html"):
        (root / name).write_text(page(name, "<p>index</p>"))
    (root / "clean.html").write_text(
        page(
            "Clean",
            '<p>See <a class="reference internal" href="traceback.html#top">'
            '<span class="xref std std-ref">the next page</span></a>.</p>'
            '<img src="_images/fig.png" alt="a figure">'
            '<img src="_images/fig.svg" alt="a vector figure">' + cell(STDOUT),
            next_page="traceback.html",
        )
    )
    (root / "traceback.html").write_text(page("Traceback", cell(TRACEBACK)))
    (root / "missing.html").write_text(
        page("Missing", '<img src="_images/nowhere.png" alt="gone">')
    )
    (root / "corrupt.html").write_text(
        page(
            "Corrupt",
            '<img src="_images/truncated.png"><img src="_images/empty.png">'
            '<img src="_images/text.png">',
        )
    )
    return root


def static(site: Path, name: str, **kwargs) -> cs.Findings:
    findings, _ = cs.check_page_static(site / name, site, **kwargs)
    return findings


# --------------------------------------------------------------------------- #
# Static checks
# --------------------------------------------------------------------------- #


def test_clean_page_passes(site: Path) -> None:
    findings = static(site, "clean.html")
    assert findings.errors == []
    assert findings.warnings == []
    assert findings.status == "OK"


def test_traceback_output_fails(site: Path) -> None:
    findings = static(site, "traceback.html")
    assert len(findings.errors) == 1
    assert "cell error output" in findings.errors[0]
    assert "NameError" in findings.errors[0]


def test_traceback_in_raises_exception_cell_is_a_warning() -> None:
    root = cs.parse_html(page("t", cell(TRACEBACK, tags=("raises-exception",))))
    findings = cs.check_outputs(root)
    assert findings.errors == []
    assert len(findings.warnings) == 1
    assert "raises-exception" in findings.warnings[0]


def test_stderr_output_fails_unless_allowed() -> None:
    root = cs.parse_html(page("s", cell(STDERR)))
    assert len(cs.check_outputs(root).errors) == 1
    allowed = cs.check_outputs(root, allow_stderr=True)
    assert allowed.errors == []
    assert len(allowed.warnings) == 1


@pytest.mark.parametrize(
    "text",
    [
        "Traceback (most recent call last):\n  File x\nValueError: bad",
        "ModuleNotFoundError: No module named 'opacus'",
        "torch.cuda.OutOfMemoryError: CUDA out of memory",
    ],
)
def test_exception_text_in_plain_output_fails(text: str) -> None:
    output = f'<div class="output stream"><pre>{text}</pre></div>'
    findings = cs.check_outputs(cs.parse_html(page("e", cell(output))))
    assert len(findings.errors) == 1


def test_error_words_inside_a_sentence_pass() -> None:
    output = '<div class="output stream"><pre>The ValueError: case is handled</pre>'
    output += "<pre>mean squared error: 0.1</pre></div>"
    findings = cs.check_outputs(cs.parse_html(page("e", cell(output))))
    assert findings.errors == []


def test_missing_image_fails(site: Path) -> None:
    findings = static(site, "missing.html")
    assert findings.errors == [
        "broken image '_images/nowhere.png': no such file in the build"
    ]


def test_corrupt_images_fail(site: Path) -> None:
    errors = static(site, "corrupt.html").errors
    assert len(errors) == 3
    truncated, empty, text = errors
    assert "truncated.png" in truncated
    assert "PNG" in truncated
    assert "empty file" in empty
    assert "not a PNG" in text


@pytest.mark.parametrize(
    ("data", "valid"),
    [
        (png_bytes(), True),
        (SVG, True),
        (b"\xff\xd8\xff\xe0" + b"\0" * 20, False),  # JPEG header, no image
        (b"<?xml version='1.0'?><html/>", False),  # XML, but not SVG
        (b"<svg><rect></svg>", False),  # malformed SVG
        (b"", False),
    ],
)
def test_check_image_bytes(data: bytes, valid: bool) -> None:
    assert (cs.check_image_bytes(data) is None) is valid


def test_data_uri_images() -> None:
    import base64

    good = base64.b64encode(png_bytes()).decode()
    bad = base64.b64encode(b"nope").decode()
    html = page(
        "d",
        f'<img src="data:image/png;base64,{good}">'
        f'<img src="data:image/png;base64,{bad}">',
    )
    findings = cs.check_images(cs.parse_html(html), Path("/x/p.html"), Path("/x"))
    assert len(findings.errors) == 1
    assert "data: URI" in findings.errors[0]


def test_root_absolute_and_external_images(tmp_path: Path) -> None:
    html = page("a", '<img src="/_images/fig.png"><img src="https://x.org/a.png">')
    findings = cs.check_images(cs.parse_html(html), tmp_path / "a.html", tmp_path)
    assert len(findings.errors) == 1
    assert "root-absolute" in findings.errors[0]
    assert len(findings.warnings) == 1


def test_references_and_problematic_nodes() -> None:
    body = (
        '<p><span class="xref std std-ref">no-such-label</span> '
        '<code class="xref eq docutils literal"><span>nope</span></code> '
        '<a class="reference internal" href="#top"><span class="xref myst">ok</span>'
        '</a> <code class="xref py py-class docutils literal">numpy.ndarray</code> '
        '<a href="#id1"><span class="problematic" id="id2">{cite}`x`</span></a></p>'
        '<div class="system-message"><p>Unknown directive type</p></div>'
    )
    findings = cs.check_references(cs.parse_html(page("r", body)))
    assert len(findings.errors) == 4
    assert any("no-such-label" in e for e in findings.errors)
    assert any("nope" in e for e in findings.errors)
    assert any("problematic" in e for e in findings.errors)
    assert any("system message" in e for e in findings.errors)
    assert findings.warnings == ["unlinked cross-reference: 'numpy.ndarray'"]


def test_broken_links(site: Path) -> None:
    (site / "links.html").write_text(
        page(
            "Links",
            '<a href="clean.html">ok</a><a href="clean.html#top">ok</a>'
            '<a href="#top">ok</a><a href="#">ok</a><a href="https://x.org">ok</a>'
            '<a href="#nowhere">bad anchor</a><a href="gone.html">bad file</a>'
            '<a href="/clean.html">absolute</a><a href="../../etc">outside</a>',
        )
    )
    errors = static(site, "links.html").errors
    assert len(errors) == 4
    assert "no such anchor" in errors[0]
    assert "no such file" in errors[1]
    assert "root-absolute" in errors[2]
    assert "outside the site" in errors[3]


RAW_MATH = '<span class="math notranslate nohighlight">\\(x^2\\)</span>'
TYPESET_MATH = (
    '<span class="math notranslate nohighlight"><mjx-container class="MathJax">'
    "<mjx-math></mjx-math></mjx-container></span>"
)


def test_math_typeset_passes() -> None:
    findings = cs.check_math(cs.parse_html(page("m", TYPESET_MATH, mathjax=True)))
    assert findings.errors == []
    assert findings.warnings == []


def test_raw_math_is_a_warning_when_mathjax_is_configured() -> None:
    findings = cs.check_math(cs.parse_html(page("m", RAW_MATH, mathjax=True)))
    assert findings.errors == []
    assert len(findings.warnings) == 1
    assert "did not load" in findings.warnings[0]


def test_raw_math_without_mathjax_fails() -> None:
    findings = cs.check_math(cs.parse_html(page("m", RAW_MATH)))
    assert len(findings.errors) == 1


def test_mathjax_errors_fail() -> None:
    body = (
        '<span class="math"><mjx-container><mjx-merror data-mjx-error='
        '"Missing close brace"></mjx-merror></mjx-container></span>'
        '<span class="math"><mjx-container><math><mtext mathcolor="red">'
        "\\undefinedmacro</mtext></math></mjx-container></span>"
    )
    findings = cs.check_math(cs.parse_html(page("m", body, mathjax=True)))
    assert findings.errors == [
        "MathJax error: Missing close brace",
        "undefined TeX macro \\undefinedmacro",
    ]


def test_text_checks() -> None:
    body = (
        "<p>every set of outputs, $(\\varepsilon, \\delta)\\Pr[M(D)]$.</p>"
        "<p>Regenerate with `python -m dpnotes run x \u2013profile quick`.</p>"
        "<p>Fine: costs $5 and $10, a-b \u2013 c, <code>\\alpha `x`</code>, "
        f"{RAW_MATH}</p><pre>C:\\Users\\me</pre>"
        '<div class="cell_output"><pre>\\begin{tabular}</pre></div>'
    )
    findings = cs.check_text(cs.parse_html(page("t", body)))
    assert len(findings.errors) == 1
    assert findings.errors[0].startswith("raw TeX in text")
    assert len(findings.warnings) == 2
    assert "backticks" in findings.warnings[0]
    assert "en dash" in findings.warnings[1]


def test_list_pages_order_and_exclusions(site: Path) -> None:
    pages = [p.name for p in cs.list_pages(site)]
    # clean.html is the redirect target and links to traceback.html; the rest
    # follow by name. Redirects, search, genindex and _static are left out.
    assert pages == ["clean.html", "traceback.html", "corrupt.html", "missing.html"]


def test_screenshot_name() -> None:
    assert cs.screenshot_name("intro.html") == "intro.png"
    assert cs.screenshot_name("part 1/ch.2.html") == "part__1__ch.2.png"


def test_main_static_only(site: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "shots"
    assert cs.main([str(site), "--out", str(out), "--static-only"]) == 1
    printed = capsys.readouterr().out
    assert "ERROR   missing.html" in printed
    assert "clean.html" in printed
    assert (out / "index.html").is_file()
    for name in ("missing.html", "corrupt.html"):
        (site / name).unlink()
    (site / "traceback.html").write_text(page("Fixed", cell(STDOUT)))
    assert cs.main([str(site), "--out", str(out), "--static-only"]) == 0


def test_install_needs_root(monkeypatch) -> None:
    monkeypatch.setattr(cs.os, "geteuid", lambda: 1000)
    with pytest.raises(RuntimeError, match="not root"):
        cs.install_browser()


def test_jobs_below_one_is_refused(site: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        cs.check_site(site, tmp_path / "s", browser_path=None, jobs=0)
    with pytest.raises(SystemExit):
        cs.main([str(site), "--out", str(tmp_path / "s"), "--jobs", "0"])


def test_no_browser_is_a_setup_error(site: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(cs, "find_browser", lambda: None)
    assert cs.main([str(site), "--out", str(tmp_path / "s")]) == 2


# --------------------------------------------------------------------------- #
# The browser
# --------------------------------------------------------------------------- #


@pytest.mark.slow
def test_browser_run(site: Path, tmp_path: Path) -> None:
    browser = cs.find_browser()
    if browser is None:
        pytest.skip("no headless Chromium (apt-get install chromium-headless-shell)")
    out = tmp_path / "shots"
    # Two browsers at once: every page is checked once, in the pages' own order.
    listed = cs.check_site(site, out, browser_path=browser, allow_stderr=False, jobs=2)
    pages = [p.relative_to(site.resolve()).as_posix() for p in cs.list_pages(site)]
    assert [r.page for r in listed] == pages
    results = {r.page: r for r in listed}
    assert set(results) == {
        "clean.html",
        "traceback.html",
        "missing.html",
        "corrupt.html",
    }
    clean = results["clean.html"]
    assert clean.findings.errors == []
    assert clean.screenshot is not None
    assert cs.check_image_file(clean.screenshot) is None
    assert clean.screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    missing = results["missing.html"].findings.errors
    assert any("no such file" in e for e in missing)
    assert any("browser could not display" in e for e in missing)
    assert any("HTTP 404" in e for e in missing)
    corrupt = results["corrupt.html"].findings.errors
    assert any("browser could not display" in e for e in corrupt)
    index = cs.write_index(list(results.values()), out, site)
    assert "clean.png" in index.read_text()


def test_figure_shown_as_text_fails() -> None:
    # What a glued matplotlib figure becomes when the kernel has no image formatter.
    body = cell(
        '<div class="output text_plain highlight-myst-ansi notranslate">'
        "<pre>&lt;Figure size 1100x418 with 2 Axes&gt;</pre></div>"
    )
    findings = cs.check_figures(cs.parse_html(page("f", body)))
    assert len(findings.errors) == 1
    assert "Figure size 1100x418 with 2 Axes" in findings.errors[0]
    assert (
        cs.check_figures(cs.parse_html(page("ok", cell("<pre>1</pre>")))).errors == []
    )


def test_markdown_table_shown_as_text_fails() -> None:
    raw = '<div class="cell_output"><p>| a | b | |---|---| | 1 | 2 |</p></div>'
    findings = cs.check_tables(cs.parse_html(page("t", raw)))
    assert len(findings.errors) == 1
    assert findings.errors[0].startswith("Markdown table shown as text")
    rendered = (
        "<table><tr><th>a</th></tr><tr><td>1</td></tr></table>"
        "<pre>| a |\n|---|</pre><p>a | b, not a table</p>"
    )
    assert not cs.check_tables(cs.parse_html(page("t", rendered))).errors


# --------------------------------------------------------------------------- #
# Raw MyST markup (static)
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    "body",
    [
        "<p>as shown by {cite}`dwork2014`.</p>",
        "<p>The noise is {glue:text}`gauss-sigma`.</p>",
        "<p>See {numref}`fig-noise`.</p>",
        "<p>See {numref}<code>fig-noise</code>.</p>",
        "<p>```{prf:theorem} Composition</p>",
        "<p>{prf:theorem} Composition</p>",
        "<p>:::{note}</p>",
        "<p>Call {py:func}`dpnotes.mechanisms.laplace`.</p>",
        # Markdown that a cell generated: raw roles there are defects too.
        '<div class="cell_output"><div class="output text_markdown">'
        "<p>ours against {cite:t}`paper`</p></div></div>",
    ],
)
def test_raw_myst_markup_fails(body: str) -> None:
    findings = cs.check_myst(cs.parse_html(page("m", body)))
    assert len(findings.errors) == 1
    assert findings.errors[0].startswith("raw MyST markup shown as text")


def test_myst_markup_in_code_and_math_passes() -> None:
    body = (
        "<p>Write <code>{cite}`key`</code> or <code>```{note}</code>.</p>"
        "<pre>```{code-cell} ipython3\n{glue:text}`x`\n```</pre>"
        '<div class="highlight-md notranslate"><div class="highlight"><pre>'
        "<span>{numref}`fig`</span></pre></div></div>"
        '<div class="cell_input"><div>{py:func}`f`</div></div>'
        '<span class="math">\\{x\\}</span>'
        "<p>A set {a, b}, a dict {'k': 1}, a field {name}.</p>"
    )
    assert cs.check_myst(cs.parse_html(page("ok", body))).errors == []


def test_static_checks_include_raw_myst(site: Path) -> None:
    (site / "raw.html").write_text(page("Raw", "<p>see {cite}`x`</p>"))
    errors = static(site, "raw.html").errors
    assert any("raw MyST markup" in e for e in errors)


# --------------------------------------------------------------------------- #
# Layout findings (what LAYOUT_JS measured), judged without a browser
# --------------------------------------------------------------------------- #


def layout(**kwargs) -> dict:
    base = {"column": 688.0, "figure": 672.0, "tables": [], "listings": []}
    return {**base, "images": [], **kwargs}


def box(state: str, hidden: float = 100.0) -> dict:
    return {"state": state, "hidden": hidden, "width": 800.0, "by": "div.x"}


def test_check_layout_tables_and_listings() -> None:
    tables = [box("clipped"), box("spills"), box("scrolls") | {"text": "a | b"}]
    for t in tables:
        t.setdefault("text", "a | b")
    listings = [box("clipped") | {"text": "x = 1"}, box("spills") | {"text": "y"}]
    listings += [box("scrolls", 30) | {"text": "z"}, box("scrolls", 80) | {"text": "w"}]
    found = cs.check_layout(layout(tables=tables, listings=listings), page_width_px=672)
    assert len(found.errors) == 4
    assert "cut off by div.x" in found.errors[0]
    assert "spills 100 px out of the text column" in found.errors[1]
    assert any("code listing" in e and "cut off" in e for e in found.errors)
    assert len(found.warnings) == 2
    assert "scrolls sideways" in found.warnings[0]
    assert found.warnings[1].startswith("2 code listing(s) scroll sideways")
    assert "hides 80 px" in found.warnings[1]


def test_check_length_warns_then_fails_and_spares_the_api() -> None:
    screen = cs.MIN_HEIGHT
    assert cs.check_length("book/x.html", 10 * screen).warnings == []
    long = cs.check_length("book/x.html", (cs.SCREENS_WARN + 1) * screen)
    assert long.errors == [] and "split it into sub-pages" in long.warnings[0]
    too_long = cs.check_length("book/x.html", (cs.SCREENS_MAX + 1) * screen)
    assert "over the limit" in too_long.errors[0]
    api = cs.check_length("book/api/findings.html", 300 * screen)
    assert api.errors == api.warnings == []


def test_check_layout_figure_widths() -> None:
    wide = {"src": "a.png", "natural": 1200, "shown": 672.0}
    narrow = {"src": "b.png", "natural": 500, "shown": 500.0}
    ok = layout(images=[wide, narrow])
    assert cs.check_layout(ok, page_width_px=672).errors == []
    assert cs.check_layout(ok, page_width_px=674).errors == []  # within tolerance
    # The column is not what plotting assumes: one error for the page.
    errors = cs.check_layout(ok, page_width_px=720).errors
    assert len(errors) == 1
    assert "PAGE_WIDTH_PX = 720" in errors[0]
    assert "672 px" in errors[0]
    # A figure shown narrower than the column (e.g. inside an admonition).
    squeezed = layout(images=[wide | {"shown": 600.0}])
    errors = cs.check_layout(squeezed, page_width_px=672).errors
    assert len(errors) == 1
    assert "shows 600 px wide, not 672 px" in errors[0]
    # Without figures, the column is only reported.
    assert cs.check_layout(layout(), page_width_px=720).errors == []
    assert cs.check_layout(ok, page_width_px=None).errors == []


def test_plotting_page_width_is_read_from_the_source() -> None:
    # The assignment as Python parses it (importing dpnotes.plotting takes seconds).
    import ast

    tree = ast.parse(cs.PLOTTING_MODULE.read_text())
    (value,) = [
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and [getattr(t, "id", None) for t in node.targets] == ["PAGE_WIDTH_PX"]
    ]
    assert cs.plotting_page_width() == value


# --------------------------------------------------------------------------- #
# Layout and screenshots in the browser (fast; skipped without one)
# --------------------------------------------------------------------------- #

LONG = "x" * 200
WIDE_CELLS = "".join(f"<td>{'word' * 12}{i}</td>" for i in range(6))


def layout_page(body: str) -> str:
    # A 400 px text column; figures get the column less 2 x 8 px of padding.
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><style>'
        "body{margin:0;font:16px sans-serif}"
        "article{width:400px;padding:0 20px}figure{margin:0;padding:0 8px}"
        "img{max-width:100%;height:auto}pre{margin:0}</style></head>"
        f'<body><main><article class="bd-article"><section id="s">{body}'
        "</section></article></main></body></html>"
    )


LAYOUT_PAGES = {
    "clipped_table.html": '<div style="overflow:hidden"><table><tr>'
    f"{WIDE_CELLS}</tr></table></div>",
    "scrolling_table.html": '<div style="overflow-x:auto"><table><tr>'
    f"{WIDE_CELLS}</tr></table></div>",
    "spilling_table.html": f"<table><tr>{WIDE_CELLS}</tr></table>",
    "fitting_table.html": "<table><tr><td>a</td><td>b</td></tr></table>",
    "clipped_pre.html": f'<pre style="overflow:hidden">{LONG}</pre>',
    "scrolling_pre.html": f'<pre style="overflow-x:auto">{LONG}</pre>',
    "wrapped_pre.html": f'<pre style="white-space:pre-wrap;word-break:break-all">'
    f"{LONG}</pre>",
    "figures.html": '<figure><img src="wide.png" alt="wide"></figure>'
    '<figure><img src="narrow.png" alt="narrow"></figure>',
    "squeezed_figure.html": '<figure><img src="wide.png" style="width:50%" '
    'alt="half"></figure>',
    "tall.html": '<div style="height:2500px;background:linear-gradient(red,blue)">'
    "</div>",
    # A 60 px column: the number breaks inside its spread; the text cell may wrap.
    "wrapped_number.html": '<table><tr><td style="width:60px">0.52 ± 0.01 '
    '[0.50, 0.54]</td><td style="width:60px">a long label of words</td></tr>'
    "</table>",
    # Broken only where report.number_breaks allows: before the interval.
    "unbroken_number.html": '<table><tr><td style="width:60px">0.52\u00a0±\u00a0'
    "0.01 [0.50,\u00a00.54]</td></tr></table>",
}


@pytest.fixture(scope="module")
def browser():
    path = cs.find_browser()
    if path is None:
        pytest.skip("no headless Chromium (apt-get install chromium-headless-shell)")
    instance = cs.Browser(path)
    yield instance
    instance.close()


@pytest.fixture(scope="module")
def layout_site(tmp_path_factory, browser):
    root = tmp_path_factory.mktemp("layout")
    for name, body in LAYOUT_PAGES.items():
        (root / name).write_text(layout_page(body))
    (root / "wide.png").write_bytes(png_bytes(1000, 20))
    (root / "narrow.png").write_bytes(png_bytes(200, 20))
    shots = tmp_path_factory.mktemp("shots")
    rendered = {}
    with cs.serve(root) as base:
        for name in LAYOUT_PAGES:
            _, info, seen = cs.render_page(
                browser, base + name, shots / (name + ".png"), max_shot_height=1000
            )
            assert seen.errors == []
            rendered[name] = info
    return rendered


def judged(layout_site, name: str, page_width_px: float = 384) -> cs.Findings:
    return cs.check_layout(layout_site[name]["layout"], page_width_px=page_width_px)


def test_column_widths_are_measured(layout_site) -> None:
    measured = layout_site["fitting_table.html"]["layout"]
    assert measured["column"] == 400
    assert measured["figure"] == 384


def test_clipped_table_fails(layout_site) -> None:
    errors = judged(layout_site, "clipped_table.html").errors
    assert len(errors) == 1
    assert "is cut off by div" in errors[0]


def test_scrolling_table_passes_with_a_warning(layout_site) -> None:
    found = judged(layout_site, "scrolling_table.html")
    assert found.errors == []
    assert len(found.warnings) == 1
    assert "scrolls sideways" in found.warnings[0]


def test_table_spilling_out_of_the_column_fails(layout_site) -> None:
    errors = judged(layout_site, "spilling_table.html").errors
    assert len(errors) == 1
    assert "out of the text column" in errors[0]


def test_fitting_table_passes(layout_site) -> None:
    found = judged(layout_site, "fitting_table.html")
    assert found.errors == found.warnings == []


def test_cut_off_listing_fails(layout_site) -> None:
    errors = judged(layout_site, "clipped_pre.html").errors
    assert len(errors) == 1
    assert errors[0].startswith("code listing at #s")
    assert "cut off by pre" in errors[0]


def test_scrolling_and_wrapped_listings_pass(layout_site) -> None:
    scrolling = judged(layout_site, "scrolling_pre.html")
    assert scrolling.errors == []
    assert "1 code listing(s) scroll sideways" in scrolling.warnings[0]
    wrapped = judged(layout_site, "wrapped_pre.html")
    assert wrapped.errors == wrapped.warnings == []


def test_a_number_wrapped_in_a_table_cell_fails(layout_site) -> None:
    errors = judged(layout_site, "wrapped_number.html").errors
    assert len(errors) == 1, errors
    assert errors[0].startswith("1 table cell(s) split inside a number")
    assert "0.52 ± ⏎0.01" in errors[0]
    assert judged(layout_site, "unbroken_number.html").errors == []


def test_figure_widths_in_the_browser(layout_site) -> None:
    images = layout_site["figures.html"]["layout"]["images"]
    assert [(i["natural"], round(i["shown"])) for i in images] == [
        (1000, 384),
        (200, 200),
    ]
    assert judged(layout_site, "figures.html").errors == []
    errors = judged(layout_site, "figures.html", page_width_px=720).errors
    assert len(errors) == 1
    assert "PAGE_WIDTH_PX = 720" in errors[0]
    errors = judged(layout_site, "squeezed_figure.html").errors
    assert len(errors) == 1
    assert "shows 192 px wide, not 384 px" in errors[0]


def test_tall_page_is_photographed_whole_in_segments(layout_site) -> None:
    info = layout_site["tall.html"]
    assert info["height"] >= 2500
    shots = info["screenshots"]
    assert [s.name for s in shots] == [f"tall.html-0{i}.png" for i in (1, 2, 3)]
    heights = []
    for shot in shots:
        assert cs.check_image_file(shot) is None
        with cs.Image.open(shot) as im:
            assert im.width == cs.WIDTH
            heights.append(im.height)
    assert sum(heights) == info["height"]
    assert max(heights) <= 1000
    # A short page is one image, named after the page.
    assert [s.name for s in layout_site["fitting_table.html"]["screenshots"]] == [
        "fitting_table.html.png"
    ]
