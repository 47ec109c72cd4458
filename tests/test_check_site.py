"""Tests for scripts/check_site.py: static checks without a browser, one run with."""

from __future__ import annotations

import importlib.util
import struct
import sys
import zlib
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "check_site.py"


def _load():
    spec = importlib.util.spec_from_file_location("check_site", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_site"] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


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
    results = {
        r.page: r
        for r in cs.check_site(site, out, browser_path=browser, allow_stderr=False)
    }
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
