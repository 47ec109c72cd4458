#!/usr/bin/env python3
"""Look at the built book in a real (headless) browser and fail on visible defects.

Usage::

    python scripts/check_site.py _build/html --out _build/screenshots [--install]

Every content page of the built site is served from a local ``http.server`` (under
a sub-path, so root-absolute links break here as they would on a project site),
opened in Debian's ``chromium-headless-shell`` driven over the DevTools protocol
(``--remote-debugging-pipe``; no Python dependency), given time for MathJax, fonts
and images, and photographed from top to bottom, whole: a page taller than one
image can be (:data:`MAX_SHOT_HEIGHT`) is taken as consecutive segments,
``page-01.png``, ``page-02.png`` ... ``<out>/index.html`` shows every screenshot for
a human to review.

A page fails (exit status 1) when it shows

- an error from a notebook cell: a traceback or error output, a stderr stream
  (``--allow-stderr`` makes that a warning), "Traceback (most recent call last)"
  or a line such as ``NameError: ...`` in a cell output. Cells tagged
  ``raises-exception`` may show a traceback (a warning);
- a broken image: the ``src`` does not resolve to a file of the build, the file is
  empty or not a valid PNG/JPEG/GIF/WebP/SVG, the browser could not decode it, or
  the local server answered it with an error status;
- a broken internal link or anchor, or a root-absolute path;
- a Sphinx ``problematic`` node, a ``system-message``, an unresolved cross-reference
  (``span.xref`` outside a link), or a MathJax error (``mjx-merror``);
- raw MyST markup shown as text outside code: a role (``{cite}`x```,
  ``{glue:text}`x```, ``{py:func}`x```), a directive fence (```` ```{note} ````) or
  a directive name such as ``{prf:theorem}``;
- a table wider than its container that does not scroll (cut off by an ancestor
  with hidden overflow, or spilling out of the text column), or a code listing
  (``pre``) whose lines are cut off (wider than its box and no scroll bar). A
  table or listing that scrolls sideways is a warning;
- a figure image shown at another width than the one ``dpnotes.plotting`` checks
  its text sizes at: the figure column of the page (the width a figure image gets
  in the article, measured with a probe) must be ``PAGE_WIDTH_PX`` (within
  :data:`WIDTH_TOLERANCE_PX`), and each figure image must fill it, or show at its
  own size when narrower (``--page-width-px`` overrides the constant);
- TeX shown as text outside math (e.g. ``$$`` inside a paragraph), or math that
  is not typeset while no MathJax is configured at all. When MathJax is configured
  but did not run (e.g. it comes from a CDN and the browser is offline), that is a
  warning; so are Markdown backticks shown as text and ``--option`` turned into
  ``–option`` by smartquotes.

The browser cannot reach any host but 127.0.0.1 (``--allow-network`` lifts that),
so the check also shows what an offline reader sees.

Pages are rendered in ``--jobs`` browsers at once (default: one per core, at most
four); each page has a browser to itself, so the findings do not depend on the number,
and the report keeps the pages' order.

Without a browser, ``--static-only`` runs the checks that need none. Exit status:
0 clean (warnings allowed), 1 defects found, 2 usage or set-up problem.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import concurrent.futures
import contextlib
import fcntl
import functools
import html as html_lib
import http.server
import io
import json
import os
import queue
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

try:  # Pillow comes with matplotlib; the checks degrade gracefully without it.
    from PIL import Image
except ImportError:  # pragma: no cover - exercised only without Pillow
    Image = None

BROWSER_CANDIDATES = (
    "chromium-headless-shell",
    "/usr/lib/chromium/headless_shell",
    "chromium",
    "/usr/bin/chromium",
)
SKIP_PAGES = {"search.html", "genindex.html"}
WIDTH = 1280
MIN_HEIGHT = 900
# The tallest single screenshot: GPU textures (and so some Chromium builds) stop at
# 16,384 pixels. A taller page is photographed in segments of equal height.
MAX_SHOT_HEIGHT = 16000
# A figure image may show this many CSS pixels off the width plotting assumes.
WIDTH_TOLERANCE_PX = 4.0
# Page length, in screens of MIN_HEIGHT at WIDTH. A chapter over SCREENS_WARN screens
# reads as a long report: split it into sub-pages. Over SCREENS_MAX it fails (the long
# chapters are split: every page was at most 15 screens when the limit was set). The
# API reference (reference material, read by search) is exempt.
SCREENS_WARN = 15
SCREENS_MAX = 18
SCREENS_EXEMPT = ("book/api/",)
PLOTTING_MODULE = Path(__file__).resolve().parents[1] / "dpnotes" / "plotting.py"
SITE_PREFIX = "/site/"  # Served under a sub-path to catch root-absolute URLs.
EXCEPTION_LINE = re.compile(
    r"^\s*(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Interrupt)\b:",
    re.MULTILINE,
)
TRACEBACK_TEXT = "Traceback (most recent call last)"
# A matplotlib figure whose output had no image format (e.g. a kernel started with a
# non-inline backend) shows up as its text repr instead of a picture.
UNRENDERED_FIGURE = re.compile(
    r"<(?:Figure size \d+(?:\.\d+)?x\d+(?:\.\d+)? with \d+ Axes|"
    r"matplotlib\.figure\.Figure at 0x[0-9a-f]+)>"
)
# TeX left in prose: a control word, or $...$ around a sub- or superscript.
RAW_TEX = re.compile(r"\\[A-Za-z]{2,}|\$[^$\s][^$]*[\^_{}][^$]*\$")
# Markdown code that was not rendered, and a "--option" that smartquotes turned
# into an en dash (a command copied from the page would then fail).
RAW_BACKTICKS = re.compile(r"`[^`\s][^`]*`")
EN_DASH_OPTION = re.compile(r"(?:^|\s)\u2013[a-z][\w-]+")
# A Markdown table rendered as a paragraph (e.g. a cell output in a format without
# tables): its delimiter row "|---|---|" shows up in the text.
RAW_TABLE = re.compile(r"\|\s*:?-{3,}:?\s*\|")
# MyST markup that was not parsed: a role with its backtick ({cite}`, {glue:text}`,
# {py:func}`), a directive fence (```{note}, :::{prf:theorem}), or the name of a
# role or directive of the book's extensions in braces (a backtick can turn into a
# <code> element, see check_myst).
_MYST_NAME = r"\{[A-Za-z][\w-]*(?::[\w-]+)*\}"
RAW_MYST = re.compile(
    _MYST_NAME + r"`"
    r"|(?:`{3,}|~{3,}|:{3,})\s*" + _MYST_NAME + r"|\{(?:prf|glue|cite|numref|"
    r"py|std|math|eq|ref|doc|download|term|bibliography|literalinclude|"
    r"code-cell|admonition)(?::[\w-]+)*\}"
)
# Script errors that every jupyter-book 1.0 page raises, not caused by the book:
# sphinx-thebe's inline "const THEBE_JS_URL = ..." ends up twice in each page.
KNOWN_JS_NOISE = ("Identifier 'THEBE_JS_URL' has already been declared",)
# Elements whose text may hold backslashes or dollars legitimately.
RAW_TEX_SKIP_TAGS = {"head", "script", "style", "code", "pre", "kbd", "samp", "tt"}
RAW_TEX_SKIP_TAGS |= {"textarea", "mjx-container", "math", "svg"}
RAW_TEX_SKIP_CLASSES = {"math", "highlight", "output", "cell_input", "cell_output"}
RAW_TEX_SKIP_CLASSES |= {"literal-block", "notranslate"}
# Where raw MyST text is legitimate: code, and math.
RAW_MYST_SKIP_TAGS = {"head", "script", "style", "code", "pre", "kbd", "samp", "tt"}
RAW_MYST_SKIP_TAGS |= {"textarea", "mjx-container", "math", "svg"}
RAW_MYST_SKIP_CLASSES = {"math", "highlight", "literal-block", "cell_input"}
# Cross-reference domains whose unresolved targets are only a warning: Python
# objects from libraries without intersphinx render as plain code, which is fine.
SOFT_XREF_CLASSES = {"py", "c", "cpp", "js", "rst"}
VOID_TAGS = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "param",
    "source",
    "track",
    "wbr",
}


# --------------------------------------------------------------------------- #
# Results
# --------------------------------------------------------------------------- #


@dataclass
class Findings:
    """Errors (the page fails) and warnings (shown, not fatal) about one page."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def extend(self, other: Findings) -> None:
        """Add another set of findings, dropping exact duplicates."""
        self.errors.extend(e for e in other.errors if e not in self.errors)
        self.warnings.extend(w for w in other.warnings if w not in self.warnings)

    @property
    def status(self) -> str:
        """Return ``FAIL``, ``WARN`` or ``OK``."""
        if self.errors:
            return "FAIL"
        return "WARN" if self.warnings else "OK"


@dataclass
class PageResult:
    """What the check found on one page, and where its screenshot is."""

    page: str
    findings: Findings
    screenshots: list[Path] = field(default_factory=list)
    height: int = 0
    seconds: float = 0.0
    layout: dict = field(default_factory=dict)

    @property
    def screenshot(self) -> Path | None:
        """The first (often the only) screenshot of the page."""
        return self.screenshots[0] if self.screenshots else None


# --------------------------------------------------------------------------- #
# A small DOM built with the standard library's HTML parser
# --------------------------------------------------------------------------- #


@dataclass(eq=False)
class Node:
    """An element (or the document, with ``tag == "#root"``)."""

    tag: str
    attrs: dict[str, str]
    parent: Node | None = None
    children: list[Node | str] = field(default_factory=list)

    @functools.cached_property
    def classes(self) -> frozenset[str]:
        return frozenset(self.attrs.get("class", "").split())

    def iter(self) -> Iterator[Node]:
        """Yield this node and every element below it, in document order."""
        stack: list[Node] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(c for c in reversed(node.children) if isinstance(c, Node))

    def ancestors(self) -> Iterator[Node]:
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def text(self) -> str:
        parts: list[str] = []
        stack: list[Node | str] = [self]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                parts.append(item)
            elif item.tag not in ("script", "style", "button"):
                stack.extend(reversed(item.children))
        return "".join(parts)


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        parent = self.stack[-1]
        node = Node(tag, {k: v or "" for k, v in attrs}, parent)
        parent.children.append(node)
        if tag not in VOID_TAGS:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        parent = self.stack[-1]
        parent.children.append(Node(tag, {k: v or "" for k, v in attrs}, parent))

    def handle_endtag(self, tag: str) -> None:
        # Close up to the matching open element; ignore stray end tags.
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse_html(text: str) -> Node:
    """Parse HTML into a tree of :class:`Node` (tolerant, standard library only)."""
    builder = _TreeBuilder()
    builder.feed(text)
    builder.close()
    return builder.root


def _short(text: str, limit: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --------------------------------------------------------------------------- #
# Checks on HTML (the built file or the DOM after scripts ran)
# --------------------------------------------------------------------------- #


def _cell_tags(node: Node) -> frozenset[str]:
    for anc in node.ancestors():
        if "cell" in anc.classes:
            return frozenset(c[4:] for c in anc.classes if c.startswith("tag_"))
    return frozenset()


def check_outputs(root: Node, *, allow_stderr: bool = False) -> Findings:
    """Find error, traceback and stderr outputs of notebook cells (myst-nb classes)."""
    found = Findings()
    for node in root.iter():
        cls = node.classes
        if "output" not in cls:
            continue
        text = node.text()
        snippet = _short(text.strip().splitlines()[-1] if text.strip() else "")
        expected = "raises-exception" in _cell_tags(node)
        if cls & {"traceback", "error"}:
            msg = f"cell error output: {snippet}"
            (found.warnings if expected else found.errors).append(
                msg + (" (cell tagged raises-exception)" if expected else "")
            )
        elif "stderr" in cls:
            msg = f"cell stderr output: {_short(text)}"
            (found.warnings if allow_stderr else found.errors).append(msg)
        elif TRACEBACK_TEXT in text or EXCEPTION_LINE.search(text):
            match = EXCEPTION_LINE.search(text)
            line = match.group(0) if match else TRACEBACK_TEXT
            msg = f"cell output shows an exception: {_short(line)}"
            (found.warnings if expected else found.errors).append(msg)
    return found


def check_figures(root: Node) -> Findings:
    """Find figures that were rendered as their text repr instead of an image."""
    found = Findings()
    for match in UNRENDERED_FIGURE.finditer(root.text()):
        found.errors.append(f"figure shown as text, not as an image: {match.group(0)}")
    return found


def check_references(root: Node) -> Findings:
    """Find Sphinx problematic nodes, system messages and unresolved references."""
    found = Findings()
    for node in root.iter():
        cls = node.classes
        if "problematic" in cls:
            found.errors.append(f"problematic node: {_short(node.text())!r}")
        elif "system-message" in cls:
            found.errors.append(f"system message: {_short(node.text())!r}")
        elif "xref" in cls:
            if node.tag == "a" or any(a.tag == "a" for a in node.ancestors()):
                continue
            target = _short(node.text(), 60)
            if cls & SOFT_XREF_CLASSES:
                found.warnings.append(f"unlinked cross-reference: {target!r}")
            else:
                found.errors.append(f"unresolved cross-reference: {target!r}")
    return found


def check_tables(root: Node) -> Findings:
    """Find Markdown tables shown as text, in prose and in cell outputs alike."""
    found = Findings()
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        if node.tag in RAW_TEX_SKIP_TAGS:
            continue
        text = "".join(c for c in node.children if isinstance(c, str))
        if match := RAW_TABLE.search(text):
            start = max(match.start() - 40, 0)
            snippet = _short(text[start : match.end() + 20], 90)
            found.errors.append(f"Markdown table shown as text: “{snippet}”")
        stack.extend(c for c in node.children if isinstance(c, Node))
    return found


def check_text(root: Node) -> Findings:
    """Find markup shown as prose.

    TeX outside math (e.g. from ``$$`` inside a paragraph) is an error; Markdown
    backticks and ``--options`` that smartquotes turned into en dashes are
    warnings.
    """
    found = Findings()
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        if node.tag in RAW_TEX_SKIP_TAGS or node.classes & RAW_TEX_SKIP_CLASSES:
            continue
        text = "".join(c for c in node.children if isinstance(c, str))
        for pattern, what, target in (
            (RAW_TEX, "raw TeX in text", found.errors),
            (RAW_BACKTICKS, "Markdown backticks shown as text", found.warnings),
            (EN_DASH_OPTION, "en dash where '--' was meant", found.warnings),
        ):
            if match := pattern.search(text):
                start = max(match.start() - 30, 0)
                snippet = _short(text[start : match.end() + 40], 90)
                target.append(f"{what}: “{snippet}”")
        stack.extend(c for c in node.children if isinstance(c, Node))
    return found


def check_myst(root: Node) -> Findings:
    """Find MyST roles and directives shown as text instead of being rendered.

    Text inside code (``code``, ``pre``, highlighted blocks, cell inputs) and math
    is left alone, but cell outputs are looked at: Markdown that a cell generates
    is where an unparsed ``{cite}`` shows up. An inline ``<code>`` element counts
    as a backtick, for a role whose target was rendered as code (``{cite}x``).
    """
    found = Findings()
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        if node.tag in RAW_MYST_SKIP_TAGS or node.classes & RAW_MYST_SKIP_CLASSES:
            continue
        text = "".join(
            c if isinstance(c, str) else ("`" if c.tag in ("code", "tt") else " ")
            for c in node.children
        )
        for match in RAW_MYST.finditer(text):
            start = max(match.start() - 30, 0)
            snippet = _short(text[start : match.end() + 40], 90)
            found.errors.append(f"raw MyST markup shown as text: “{snippet}”")
            break
        stack.extend(c for c in node.children if isinstance(c, Node))
    return found


def mathjax_scripts(root: Node) -> list[str]:
    """Return the ``src`` of every script that loads MathJax."""
    return [
        n.attrs["src"]
        for n in root.iter()
        if n.tag == "script" and "mathjax" in n.attrs.get("src", "").lower()
    ]


def check_math(root: Node, *, mathjax_version: str | None = None) -> Findings:
    """Check that math was typeset (call on the DOM after MathJax ran)."""
    found = Findings()
    for node in root.iter():
        if node.tag == "mjx-merror":
            error = node.attrs.get("data-mjx-error") or node.text()
            found.errors.append(f"MathJax error: {_short(error)}")
        elif (
            # MathJax's noundefined package shows an unknown macro as red text;
            # the assistive MathML next to the rendering says so explicitly.
            node.tag == "mtext"
            and node.attrs.get("mathcolor") == "red"
            and node.text().startswith("\\")
        ):
            found.errors.append(f"undefined TeX macro {_short(node.text(), 40)}")
    raw = [
        n
        for n in root.iter()
        if "math" in n.classes
        and n.tag in ("span", "div")
        and not any(d.tag == "mjx-container" for d in n.iter())
    ]
    if raw:
        example = _short(raw[0].text(), 60)
        scripts = mathjax_scripts(root)
        if not scripts:
            found.errors.append(
                f"{len(raw)} math element(s) shown as raw TeX and no MathJax "
                f"configured, e.g. “{example}”"
            )
        else:
            state = (
                f"MathJax {mathjax_version} loaded"
                if mathjax_version
                else f"MathJax did not load from {scripts[0]}"
            )
            found.warnings.append(
                f"{len(raw)} math element(s) not typeset ({state}), e.g. “{example}”"
            )
    return found


# --------------------------------------------------------------------------- #
# Images and links
# --------------------------------------------------------------------------- #


def sniff_image(data: bytes) -> str | None:
    """Return ``png``, ``jpeg``, ``gif``, ``webp`` or ``svg`` from the bytes."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    head = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith((b"<?xml", b"<svg", b"<!--", b"<!doctype svg")):
        return "svg"
    return None


def check_image_bytes(data: bytes) -> str | None:
    """Return why the bytes are not a valid image, or ``None`` when they are."""
    if not data:
        return "empty file"
    kind = sniff_image(data)
    if kind is None:
        return "not a PNG, JPEG, GIF, WebP or SVG file"
    if kind == "svg":
        try:
            root = ET.fromstring(data)
        except ET.ParseError as exc:
            return f"invalid SVG: {exc}"
        if root.tag.rsplit("}", 1)[-1] != "svg":
            return f"XML file whose root is <{root.tag}>, not <svg>"
        return None
    if Image is not None:
        try:
            with Image.open(io.BytesIO(data)) as im:
                im.verify()
            with Image.open(io.BytesIO(data)) as im:
                im.load()
                if im.width == 0 or im.height == 0:
                    return "image has zero size"
        except Exception as exc:  # Pillow raises many types for bad data.
            return f"corrupt {kind.upper()}: {exc}"
        return None
    if kind == "png" and b"IEND" not in data[-16:]:
        return "truncated PNG (no IEND chunk)"
    if kind == "jpeg" and not data.rstrip(b"\0").endswith(b"\xff\xd9"):
        return "truncated JPEG (no end marker)"
    return None


@functools.cache
def check_image_file(path: Path) -> str | None:
    """Return why the file is not a valid image, or ``None`` when it is."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return f"unreadable: {exc}"
    return check_image_bytes(data)


def resolve_local(url: str, page: Path, site: Path) -> tuple[Path | None, str]:
    """Map a relative URL on ``page`` to a file under ``site``.

    Returns the file (``None`` when the URL escapes the site) and the fragment.
    """
    parts = urlsplit(url)
    path = unquote(parts.path)
    if not path:
        return page, parts.fragment
    target = (page.parent / path).resolve()
    try:
        target.relative_to(site.resolve())
    except ValueError:
        return None, parts.fragment
    if target.is_dir():
        target = target / "index.html"
    return target, parts.fragment


def _is_external(url: str) -> bool:
    parts = urlsplit(url)
    return bool(parts.scheme or parts.netloc)


def check_images(root: Node, page: Path, site: Path) -> Findings:
    """Check that every ``<img>`` resolves to a valid image file in the build."""
    found = Findings()
    for node in root.iter():
        if node.tag != "img":
            continue
        src = node.attrs.get("src", "").strip()
        if not src:
            found.errors.append("image without src")
            continue
        if src.startswith("data:"):
            header, _, payload = src.partition(",")
            try:
                if header.endswith(";base64"):
                    data = base64.b64decode(payload, validate=True)
                else:
                    data = unquote(payload).encode()
            except (binascii.Error, ValueError):
                found.errors.append("broken image: undecodable data: URI")
                continue
            if reason := check_image_bytes(data):
                found.errors.append(f"broken image (data: URI): {reason}")
            continue
        if _is_external(src):
            found.warnings.append(f"external image, not checked: {_short(src, 80)}")
            continue
        if src.startswith("/"):
            found.errors.append(f"root-absolute image path {src!r}")
            continue
        target, _ = resolve_local(src, page, site)
        if target is None:
            found.errors.append(f"broken image {src!r}: points outside the site")
        elif not target.is_file():
            found.errors.append(f"broken image {src!r}: no such file in the build")
        elif reason := check_image_file(target):
            found.errors.append(f"broken image {src!r}: {reason}")
    return found


@functools.lru_cache(maxsize=256)
def _anchors(path: Path) -> frozenset[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    ids = re.findall(r"""\s(?:id|name)\s*=\s*["']([^"']+)["']""", text)
    return frozenset(html_lib.unescape(i) for i in ids)


def check_links(root: Node, page: Path, site: Path) -> Findings:
    """Check internal ``<a href>`` targets: the file exists and has the anchor."""
    found = Findings()
    for node in root.iter():
        if node.tag != "a" or "href" not in node.attrs:
            continue
        href = node.attrs["href"].strip()
        if not href or href == "#" or _is_external(href) or href.startswith("data:"):
            continue
        if href.startswith("javascript:"):
            continue
        if href.startswith("/"):
            found.errors.append(f"root-absolute link {href!r}")
            continue
        target, fragment = resolve_local(href, page, site)
        if target is None:
            found.errors.append(f"link {href!r} points outside the site")
        elif not target.exists():
            found.errors.append(f"broken link {href!r}: no such file in the build")
        elif fragment and target.suffix == ".html":
            if unquote(fragment) not in _anchors(target):
                found.errors.append(f"broken link {href!r}: no such anchor")
    return found


def check_page_static(
    page: Path, site: Path, *, allow_stderr: bool = False
) -> tuple[Findings, Node]:
    """Run every check that needs no browser on a built page."""
    root = parse_html(page.read_text(encoding="utf-8", errors="replace"))
    found = Findings()
    found.extend(check_outputs(root, allow_stderr=allow_stderr))
    found.extend(check_figures(root))
    found.extend(check_references(root))
    found.extend(check_text(root))
    found.extend(check_myst(root))
    found.extend(check_tables(root))
    found.extend(check_images(root, page, site))
    found.extend(check_links(root, page, site))
    return found, root


def check_dom(
    dom: str, *, allow_stderr: bool = False, mathjax_version: str | None = None
) -> Findings:
    """Run the checks on the DOM after scripts ran (outputs, references, math)."""
    root = parse_html(dom)
    found = Findings()
    found.extend(check_outputs(root, allow_stderr=allow_stderr))
    found.extend(check_figures(root))
    found.extend(check_references(root))
    found.extend(check_math(root, mathjax_version=mathjax_version))
    return found


# --------------------------------------------------------------------------- #
# Pages of the site
# --------------------------------------------------------------------------- #


def redirect_target(page: Path) -> str | None:
    """Return the URL of a ``<meta http-equiv="refresh">`` page, else ``None``."""
    head = page.read_text(encoding="utf-8", errors="replace")[:2048]
    match = re.search(
        r"""<meta[^>]+http-equiv=["']?refresh["']?[^>]*content=["'][^"']*url=([^"']+)""",
        head,
        re.IGNORECASE,
    )
    return match.group(1).strip() if match else None


def list_pages(site: Path, exclude: Sequence[Path] = ()) -> list[Path]:
    """Return the content pages of a built site, in reading order where known.

    Skips search, the general index, module indexes, redirects and everything
    under folders whose name starts with ``_`` or ``.`` (``_static``,
    ``_sources``, ``_images`` ...). Pages reachable from the first page through
    "next" links come first, in that order; the rest follow by name.
    """
    site = site.resolve()
    excluded = [p.resolve() for p in exclude]
    pages = []
    for path in sorted(site.rglob("*.html")):
        rel = path.relative_to(site)
        if any(part.startswith(("_", ".")) for part in rel.parts[:-1]):
            continue
        if rel.name in SKIP_PAGES or rel.name.endswith("modindex.html"):
            continue
        if any(path.is_relative_to(e) for e in excluded):
            continue
        if redirect_target(path) is not None:
            continue
        pages.append(path)
    order: list[Path] = []
    start = site / "index.html"
    if start.is_file() and (url := redirect_target(start)):
        start, _ = resolve_local(url, start, site)
    current = start if start in pages else (pages[0] if pages else None)
    while current is not None and current in pages and current not in order:
        order.append(current)
        text = current.read_text(encoding="utf-8", errors="replace")
        match = re.search(
            r"""<a\s+class=["'][^"']*\bright-next\b[^"']*["']\s+href=["']([^"']+)""",
            text,
        )
        current = resolve_local(match.group(1), current, site)[0] if match else None
    return order + [p for p in pages if p not in order]


# --------------------------------------------------------------------------- #
# The browser
# --------------------------------------------------------------------------- #


def find_browser() -> str | None:
    """Return the first headless Chromium binary found, else ``None``."""
    env = os.environ.get("CHECK_SITE_BROWSER")
    for name in (env, *BROWSER_CANDIDATES) if env else BROWSER_CANDIDATES:
        path = shutil.which(name) if "/" not in name else name
        if path and os.access(path, os.X_OK) and Path(path).is_file():
            return path
    return None


def install_browser() -> str:
    """Install Debian's ``chromium-headless-shell`` and return its path.

    Raises:
        RuntimeError: when not root, without apt-get, or when apt fails.
    """
    if os.geteuid() != 0:
        raise RuntimeError(
            "no browser found and not root: run 'sudo apt-get install -y "
            "--no-install-recommends chromium-headless-shell' (Debian/Ubuntu) or "
            "set CHECK_SITE_BROWSER to a headless Chromium binary"
        )
    if shutil.which("apt-get") is None:
        raise RuntimeError(
            "no browser found and no apt-get: install chromium-headless-shell "
            "(or any Chromium) and set CHECK_SITE_BROWSER to its path"
        )
    print("check_site: installing chromium-headless-shell with apt-get ...", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (
        ["apt-get", "update"],
        [
            "apt-get",
            "install",
            "-y",
            "--no-install-recommends",
            "chromium-headless-shell",
        ],
    ):
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
            raise RuntimeError(f"'{' '.join(cmd)}' failed:\n{tail}")
    browser = find_browser()
    if browser is None:
        raise RuntimeError("apt-get succeeded but no chromium-headless-shell found")
    return browser


class CDPError(RuntimeError):
    """The browser answered a DevTools command with an error, or went away."""


class Browser:
    """A headless Chromium driven over the DevTools protocol on a pipe."""

    def __init__(self, binary: str, *, allow_network: bool = False) -> None:
        self.profile = tempfile.mkdtemp(prefix="check_site_profile_")
        flags = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            # Scroll bars take no room, so the layout is the same whether or not the
            # page scrolls (a probe must not change it); scrolling is reported.
            "--hide-scrollbars",
            "--mute-audio",
            "--force-color-profile=srgb",
            f"--window-size={WIDTH},{MIN_HEIGHT}",
            f"--user-data-dir={self.profile}",
            "--remote-debugging-pipe",
        ]
        if not allow_network:
            flags.append("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1")
        # The browser reads commands on fd 3 and writes replies on fd 4. Move our
        # pipe ends out of the way and let bash place them, which is safe with the
        # server thread running (no preexec_fn; dash takes only one-digit fds).
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        high_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
        high_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
        os.close(to_child_r)
        os.close(from_child_w)
        self.log_path = Path(self.profile) / "browser.log"
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [
                shutil.which("bash") or "/bin/bash",
                "-c",
                f'exec "$0" "$@" 3<&{high_r} 4>&{high_w} {high_r}<&- {high_w}>&-',
                binary,
                *flags,
                "about:blank",
            ],
            pass_fds=(high_r, high_w),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        os.close(high_r)
        os.close(high_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        self.session = ""
        try:
            target = self.call("Target.createTarget", {"url": "about:blank"}, sid=None)
            attached = self.call(
                "Target.attachToTarget",
                {"targetId": target["targetId"], "flatten": True},
                sid=None,
            )
        except (CDPError, TimeoutError) as exc:
            tail = self.log_tail()
            self.close()
            raise CDPError(f"{exc}\n{tail}") from exc
        self.session = attached["sessionId"]
        for domain in ("Page", "Network", "Runtime"):
            self.call(f"{domain}.enable")

    def log_tail(self, lines: int = 8) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("browser did not answer in time")
            ready, _, _ = select.select([self._from_child], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise CDPError("browser closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(
        self,
        method: str,
        params: dict | None = None,
        *,
        sid: str | None = "",
        timeout: float = 30.0,
    ) -> dict:
        """Send a command (to the page session unless ``sid=None``), await reply."""
        self._next_id += 1
        msg: dict = {"id": self._next_id, "method": method, "params": params or {}}
        session = self.session if sid == "" else sid
        if session:
            msg["sessionId"] = session
        try:
            os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        except BrokenPipeError as exc:
            raise CDPError("browser is gone") from exc
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method: str, timeout: float) -> dict | None:
        """Wait for an event of the page session; ``None`` on timeout."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for event in self.events[seen:]:
                if event.get("method") == method:
                    return event
            seen = len(self.events)
            try:
                reply = self._read_message(deadline)
            except TimeoutError:
                return None
            if "method" in reply:
                self.events.append(reply)

    def evaluate(self, expression: str, timeout: float = 30.0) -> object:
        """Evaluate JavaScript in the page, awaiting a promise, return its value."""
        result = self.call(
            "Runtime.evaluate",
            {
                "expression": expression,
                "awaitPromise": True,
                "returnByValue": True,
                "timeout": int(timeout * 1000),
            },
            timeout=timeout + 5,
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            what = details.get("exception", {}).get("description") or details.get(
                "text"
            )
            raise CDPError(f"script failed: {_short(str(what), 200)}")
        return result.get("result", {}).get("value")

    def close(self) -> None:
        with contextlib.suppress(CDPError, TimeoutError, OSError):
            if self.proc.poll() is None:
                self.call("Browser.close", sid=None, timeout=5)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


# Wait for MathJax, fonts and images, then report what a reader would see.
SETTLE_JS = r"""
(async () => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const within = (p, ms) => Promise.race([p, sleep(ms)]);
  const mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) {
    try { await within(mj.startup.promise, 15000); } catch (e) {}
  }
  try { await within(document.fonts.ready, 5000); } catch (e) {}
  await within(Promise.all([...document.images].map((img) => img.complete ? 0 :
    new Promise((r) => { img.addEventListener('load', r);
                         img.addEventListener('error', r); }))), 10000);
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const broken = [...document.images]
    .filter((img) => img.complete && img.naturalWidth === 0 && img.getAttribute('src'))
    .map((img) => img.getAttribute('src'));
  const doc = document.documentElement;
  return {
    height: Math.max(doc.scrollHeight, document.body ? document.body.scrollHeight : 0),
    mathjax: (mj && mj.version) || null,
    broken: broken,
  };
})()
"""


# Measure the layout: the width of the text column and of the figure column (a
# probe paragraph and a probe figure holding a very wide image, appended to the
# article and removed), each figure image as shown, and every table and code
# listing that does not fit its box: whether it scrolls, is cut off by an ancestor
# with hidden overflow, or spills out of the text column.
LAYOUT_JS = r"""
(() => {
  const article = document.querySelector('article.bd-article, article[role=main]')
    || document.querySelector('article') || document.querySelector('[role=main]')
    || document.querySelector('main') || document.body;
  const host = article.querySelector('section') || article;
  const r1 = (x) => Math.round(x * 10) / 10;
  const probe = (html) => {
    const box = document.createElement('div');
    box.innerHTML = html;
    const el = box.firstElementChild;
    host.appendChild(el);
    const target = el.querySelector('[data-probe]') || el;
    const width = target.getBoundingClientRect().width;
    el.remove();
    return width;
  };
  const column = probe('<p style="height:0;margin:0;padding:0;border:0"></p>');
  const wide = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' " +
    "width='4000' height='10'/%3E";
  const figure = probe('<figure class="align-default" style="margin-top:0;' +
    'margin-bottom:0"><img data-probe alt="" width="4000" height="10" src="' +
    wide + '"></figure>');
  const shown = (el) => el.getClientRects().length > 0;
  const where = (el) => {
    const sec = el.closest('section[id]');
    return sec ? '#' + sec.id : '';
  };
  const label = (el) => (el.innerText || el.textContent || '').trim()
    .split(/\n/).map((l) => l.trim()).filter(Boolean).slice(0, 3).join(' | ')
    .slice(0, 80);
  // Follow content that reaches from `left` to `right` (CSS px) up the ancestors:
  // the first one with non-visible overflow that it does not fit decides.
  const reach = (el, left, right) => {
    for (let a = el.parentElement; a; a = a.parentElement) {
      const rect = a.getBoundingClientRect();
      const boxLeft = rect.left + a.clientLeft;
      const boxRight = boxLeft + a.clientWidth;
      const fits = right <= boxRight + 1 && left >= boxLeft - 1;
      const overflow = getComputedStyle(a).overflowX;
      if (!fits && overflow !== 'visible') {
        const scrolls = overflow === 'auto' || overflow === 'scroll';
        const cls = String(a.className || '').trim().split(/\s+/)[0];
        return {state: scrolls ? 'scrolls' : 'clipped', hidden: r1(right - boxRight),
                by: a.tagName.toLowerCase() + (cls ? '.' + cls : '')};
      }
      if (a === article) {
        return fits ? null : {state: 'spills', hidden: r1(right - boxRight),
                              by: 'the text column'};
      }
    }
    return null;
  };
  const tables = [];
  for (const t of article.querySelectorAll('table')) {
    if (!shown(t)) continue;
    const rect = t.getBoundingClientRect();
    const right = Math.max(rect.right, rect.left + t.scrollWidth);
    const found = reach(t, rect.left, right);
    if (found) tables.push({...found, width: r1(right - rect.left), where: where(t),
                            text: label(t.querySelector('tr') || t)});
  }
  const listings = [];
  for (const pre of article.querySelectorAll('pre')) {
    if (!shown(pre)) continue;
    const style = getComputedStyle(pre);
    const rect = pre.getBoundingClientRect();
    const extra = pre.scrollWidth - pre.clientWidth;
    const text = label(pre);
    let found = null;
    if (extra > 1 && style.overflowX !== 'visible') {
      const scrolls = style.overflowX === 'auto' || style.overflowX === 'scroll';
      found = {state: scrolls ? 'scrolls' : 'clipped', hidden: r1(extra), by: 'pre'};
    } else if (pre.scrollHeight - pre.clientHeight > 1 &&
               !['visible', 'auto', 'scroll'].includes(style.overflowY)) {
      found = {state: 'clipped', hidden: r1(pre.scrollHeight - pre.clientHeight),
               by: 'pre (at the bottom)'};
    } else {
      const contentRight = rect.left + pre.clientLeft + pre.scrollWidth;
      found = reach(pre, rect.left, Math.max(rect.right, contentRight));
    }
    if (found) listings.push({...found, width: r1(pre.scrollWidth), where: where(pre),
                              text: text});
  }
  // Number cells (most of the text digits and signs) split where they should not
  // be: anywhere but at a plain space before an interval or after a list's comma
  // (where report.number_breaks leaves one), e.g. "0.52" above "± 0.01".
  const wraps = [];
  for (const cell of article.querySelectorAll('td')) {
    const text = (cell.innerText || '').trim();
    if (!shown(cell) || !text) continue;
    const core = text.replace(/\s/g, '');
    const signs = (core.match(/[\d.,±+\-−–%()\[\]\/×≈<>=\u2060]/g) || []).length;
    const number = /\d/.test(core) && signs >= 0.6 * core.length;
    if (!number) continue;
    // Each visible character with its line (the middle of its box), in order.
    const chars = [];
    const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
      const t = node.textContent;
      for (let i = 0; i < t.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const r = range.getBoundingClientRect();
        chars.push({c: t[i], mid: (r.top + r.bottom) / 2, h: r.height,
                    w: r.width});
      }
    }
    // A number may break only at a plain space before an interval's "[" or after a
    // comma, outside brackets (the rule of report.number_breaks).
    const allowed = (i) => {
      let depth = 0;
      for (let j = 0; j < i - 1; j++) {
        if ('[('.includes(chars[j].c)) depth += 1;
        else if (')]'.includes(chars[j].c)) depth = Math.max(depth - 1, 0);
      }
      const space = chars[i - 1].c === ' ';
      return space && depth === 0 &&
        (chars[i].c === '[' || (i >= 2 && chars[i - 2].c === ','));
    };
    let last = null, bad = null;
    for (let i = 0; i < chars.length; i++) {
      const ch = chars[i];
      if (ch.w <= 0 || ch.h <= 0) continue;
      if (last !== null && ch.mid - chars[last].mid > ch.h / 2) {
        if (number && !allowed(i)) {
          bad = chars.slice(Math.max(0, i - 12), i).map((x) => x.c).join('') + '⏎' +
            chars.slice(i, i + 12).map((x) => x.c).join('');
          break;
        }
      }
      last = i;
    }
    if (bad) wraps.push({where: where(cell), text: bad.replace(/\s+/g, ' ')});
  }
  const images = [];
  for (const img of article.querySelectorAll('img')) {
    if (!shown(img) || !img.closest('figure, .cell_output, .output')) continue;
    const src = img.currentSrc || img.src || '';
    if (!/^data:image\/(png|jpeg|gif|webp)|\.(png|jpe?g|gif|webp)([?#]|$)/i.test(src))
      continue;
    if (!img.naturalWidth) continue;
    images.push({src: img.getAttribute('src') || '', natural: img.naturalWidth,
                 shown: r1(img.getBoundingClientRect().width), where: where(img)});
  }
  return {column: r1(column), figure: r1(figure), tables, listings, images, wraps,
          height: Math.max(document.documentElement.scrollHeight,
                           document.body ? document.body.scrollHeight : 0)};
})()
"""


def check_length(page: str, height: float) -> Findings:
    """Judge a page's length: a warning over :data:`SCREENS_WARN` screens, an error
    over :data:`SCREENS_MAX` (pages under :data:`SCREENS_EXEMPT` are not judged)."""
    found = Findings()
    if any(page.startswith(prefix) for prefix in SCREENS_EXEMPT):
        return found
    screens = height / MIN_HEIGHT
    what = (
        f"page is {screens:.0f} screens long ({height:.0f} px at {WIDTH} x "
        f"{MIN_HEIGHT} px)"
    )
    if screens > SCREENS_MAX:
        found.errors.append(f"{what}, over the limit of {SCREENS_MAX}: split it")
    elif screens > SCREENS_WARN:
        found.warnings.append(
            f"{what}: over {SCREENS_WARN}, it reads as a long report; split it into "
            "sub-pages"
        )
    return found


def check_layout(
    layout: dict, *, page_width_px: float | None, tolerance: float = WIDTH_TOLERANCE_PX
) -> Findings:
    """Judge what :data:`LAYOUT_JS` measured on a page.

    Errors: a table that is cut off or spills out of the text column, a table
    cell split inside a number, a code
    listing that is cut off, a page with figure images whose figure column is not
    ``page_width_px`` wide, and a figure image that does not fill that column (or
    show at its own size, when narrower). A table or listing that scrolls sideways
    is a warning (one per page for listings).
    """
    found = Findings()
    for table in layout.get("tables", []):
        at = f" at {table['where']}" if table.get("where") else ""
        what = f"table{at} ({table['width']:.0f} px wide: “{table['text']}”)"
        if table["state"] == "scrolls":
            found.warnings.append(
                f"{what} scrolls sideways in {table['by']}: "
                f"{table['hidden']:.0f} px hidden until scrolled"
            )
        elif table["state"] == "clipped":
            found.errors.append(
                f"{what} is cut off by {table['by']}, {table['hidden']:.0f} px "
                "hidden with no scroll bar"
            )
        else:
            found.errors.append(
                f"{what} spills {table['hidden']:.0f} px out of the text column "
                "without a scroll bar"
            )
    scrolling = []
    for listing in layout.get("listings", []):
        at = f" at {listing['where']}" if listing.get("where") else ""
        what = f"code listing{at} (“{listing['text']}”)"
        if listing["state"] == "scrolls":
            scrolling.append(listing)
        elif listing["state"] == "clipped":
            found.errors.append(
                f"{what} is cut off by {listing['by']}: {listing['hidden']:.0f} px "
                "hidden with no scroll bar"
            )
        else:
            found.errors.append(
                f"{what} spills {listing['hidden']:.0f} px out of the text column"
            )
    if scrolling:
        widest = max(scrolling, key=lambda x: x["hidden"])
        found.warnings.append(
            f"{len(scrolling)} code listing(s) scroll sideways; the widest hides "
            f"{widest['hidden']:.0f} px: “{widest['text']}”"
            + (f" at {widest['where']}" if widest.get("where") else "")
        )
    wraps = layout.get("wraps", [])
    if wraps:
        first = wraps[0]
        at = f" at {first['where']}" if first.get("where") else ""
        found.errors.append(
            f"{len(wraps)} table cell(s) split inside a number, "
            f"e.g. “{first['text']}”{at} (⏎: the line break): format numbers with "
            "dpnotes.report.markdown_table, or give the table fewer columns"
        )
    images = layout.get("images", [])
    column = layout.get("figure")
    if images and column and page_width_px is not None:
        if abs(column - page_width_px) > tolerance:
            found.errors.append(
                f"figures show in a column {column:.0f} px wide at a {WIDTH} px "
                f"window, but dpnotes.plotting.PAGE_WIDTH_PX = {page_width_px:g} "
                "checks their text sizes at that width: set it to the column"
            )
    for image in images if column else []:
        expected = min(float(image["natural"]), column)
        if abs(image["shown"] - expected) > tolerance:
            at = f" at {image['where']}" if image.get("where") else ""
            found.errors.append(
                f"figure image{at} shows {image['shown']:.0f} px wide, not "
                f"{expected:.0f} px (its own width {image['natural']} px, the figure "
                f"column {column:.0f} px): its text is not the size glue_figure "
                f"checked: {_short(image['src'], 60)}"
            )
    return found


def capture_segments(
    browser: Browser, shot: Path, height: int, *, max_height: int = MAX_SHOT_HEIGHT
) -> list[Path]:
    """Photograph the page (its viewport is ``height`` tall) from top to bottom.

    One image ``shot`` when the page fits in ``max_height`` pixels, otherwise
    segments of equal height ``<stem>-01.png``, ``<stem>-02.png`` ... Returns the
    files written.
    """
    count = max(1, -(-height // max_height))
    step = -(-height // count)
    paths = []
    for i in range(count):
        top = i * step
        clip = {"x": 0, "y": top, "width": WIDTH, "height": min(step, height - top)}
        data = browser.call(
            "Page.captureScreenshot",
            {"format": "png", "fromSurface": True, "clip": {**clip, "scale": 1}},
            timeout=60,
        )
        path = shot if count == 1 else shot.with_name(f"{shot.stem}-{i + 1:02d}.png")
        path.write_bytes(base64.b64decode(data["data"]))
        paths.append(path)
    return paths


def _set_viewport(browser: Browser, height: int) -> None:
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        {"width": WIDTH, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )
    browser.evaluate(
        "new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
    )


def render_page(
    browser: Browser,
    url: str,
    shot: Path,
    *,
    load_timeout: float = 20.0,
    max_shot_height: int = MAX_SHOT_HEIGHT,
) -> tuple[str, dict, Findings]:
    """Load ``url``, wait until it settles, measure its layout, photograph it whole.

    The viewport is made as tall as the page, so the layout is the one of a
    reader's window and nothing scrolls but the page's own scroll containers;
    see :func:`capture_segments` for the files. Returns the DOM after scripts ran,
    facts from the page (``height``, ``mathjax``, ``broken``, ``layout`` from
    :data:`LAYOUT_JS`, ``screenshots``) and what the browser saw go wrong (failed
    requests, script exceptions).
    """
    found = Findings()
    browser.events.clear()
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        {"width": WIDTH, "height": MIN_HEIGHT, "deviceScaleFactor": 1, "mobile": False},
    )
    nav = browser.call("Page.navigate", {"url": url})
    if nav.get("errorText"):
        found.errors.append(f"could not load page: {nav['errorText']}")
    if browser.wait_event("Page.loadEventFired", load_timeout) is None:
        found.warnings.append(f"page did not finish loading in {load_timeout:.0f} s")
    info = browser.evaluate(SETTLE_JS, timeout=45) or {}
    dom = browser.evaluate("document.documentElement.outerHTML") or ""
    height = max(int(info.get("height") or MIN_HEIGHT), MIN_HEIGHT)
    _set_viewport(browser, height)
    layout = browser.evaluate(LAYOUT_JS, timeout=30) or {}
    if int(layout.get("height") or 0) > height:  # The taller window grew the page.
        height = int(layout["height"])
        _set_viewport(browser, height)
        layout = browser.evaluate(LAYOUT_JS, timeout=30) or {}
    info["height"] = height
    info["layout"] = layout
    info["screenshots"] = capture_segments(
        browser, shot, height, max_height=max_shot_height
    )

    for src in info.get("broken", []):
        found.errors.append(f"browser could not display image {src!r}")
    requests: dict[str, str] = {}
    origin = urlsplit(url).netloc
    for event in browser.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Network.requestWillBeSent":
            requests[params["requestId"]] = params["request"]["url"]
        elif method == "Network.responseReceived":
            response = params["response"]
            status, res_url = int(response.get("status", 0)), response.get("url", "")
            if status >= 400 and not res_url.endswith("/favicon.ico"):
                where = "local" if urlsplit(res_url).netloc == origin else "external"
                target = found.errors if where == "local" else found.warnings
                target.append(f"HTTP {status} for {where} resource {_short(res_url)}")
        elif method == "Network.loadingFailed":
            if params.get("canceled"):
                continue
            res_url = requests.get(params["requestId"], "?")
            if res_url.endswith("/favicon.ico"):
                continue
            reason = params.get("errorText", "failed")
            if urlsplit(res_url).netloc == origin:
                found.errors.append(f"could not load {_short(res_url)}: {reason}")
            else:
                found.warnings.append(
                    f"external resource not loaded (offline?): {_short(res_url)}"
                )
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get(
                "text", ""
            )
            if not any(noise in text for noise in KNOWN_JS_NOISE):
                found.warnings.append(f"JavaScript exception: {_short(text)}")
    return dom, info, found


# --------------------------------------------------------------------------- #
# Local server
# --------------------------------------------------------------------------- #


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def translate_path(self, path: str) -> str:
        parsed = urlsplit(path).path
        if not parsed.startswith(SITE_PREFIX):
            return str(Path(self.directory) / "__not_under_site_prefix__")
        return super().translate_path("/" + parsed[len(SITE_PREFIX) :])

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def serve(site: Path) -> Iterator[str]:
    """Serve ``site`` on 127.0.0.1 (free port) in a thread; yield the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{SITE_PREFIX}"
    finally:
        server.shutdown()
        server.server_close()


# --------------------------------------------------------------------------- #
# Report
# --------------------------------------------------------------------------- #


def format_table(results: Sequence[PageResult], out: Path) -> str:
    """Return the summary table: page, status, seconds, screenshot, counts."""
    rows = [("page", "status", "s", "screenshot", "errors", "warnings")]
    for r in results:
        shot = os.path.relpath(r.screenshot) if r.screenshot else "-"
        if len(r.screenshots) > 1:
            shot += f" (+{len(r.screenshots) - 1} more)"
        rows.append(
            (
                r.page,
                r.findings.status,
                f"{r.seconds:.1f}",
                shot,
                str(len(r.findings.errors)),
                str(len(r.findings.warnings)),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def write_index(results: Sequence[PageResult], out: Path, site: Path) -> Path:
    """Write ``out/index.html`` showing every screenshot and its findings."""
    colour = {"OK": "#1a7f37", "WARN": "#9a6700", "FAIL": "#cf222e"}
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        "<title>check_site screenshots</title><style>",
        "body{font-family:system-ui,sans-serif;margin:1.5rem;background:#f6f8fa}",
        "section{background:#fff;border:1px solid #d0d7de;border-radius:6px;",
        "padding:1rem;margin-bottom:1.5rem}",
        "h2{margin:0 0 .5rem;font-size:1.1rem}",
        ".status{font-weight:bold;padding:0 .4rem;border-radius:4px;color:#fff}",
        "img{width:min(100%,760px);border:1px solid #d0d7de;display:block}",
        "ul{margin:.3rem 0}li.e{color:#cf222e}li.w{color:#9a6700}",
        "nav a{margin-right:1rem}",
        "</style></head><body>",
        f"<h1>{html_lib.escape(str(site))}</h1><nav>",
    ]
    for i, r in enumerate(results):
        parts.append(f"<a href='#p{i}'>{html_lib.escape(r.page)}</a>")
    parts.append("</nav>")
    for i, r in enumerate(results):
        status = r.findings.status
        parts.append(
            f"<section id='p{i}'><h2><span class='status' "
            f"style='background:{colour[status]}'>{status}</span> "
            f"{html_lib.escape(r.page)}</h2>"
        )
        if r.findings.errors or r.findings.warnings:
            parts.append("<ul>")
            parts += [
                f"<li class='e'>{html_lib.escape(e)}</li>" for e in r.findings.errors
            ]
            parts += [
                f"<li class='w'>{html_lib.escape(w)}</li>" for w in r.findings.warnings
            ]
            parts.append("</ul>")
        if r.screenshots:
            count = len(r.screenshots)
            note = f" in {count} segments" if count > 1 else ""
            column = r.layout.get("column")
            if column:
                note += (
                    f"; text column {column:.0f} px, figure column "
                    f"{r.layout.get('figure', 0):.0f} px"
                )
            parts.append(f"<p>{WIDTH}×{r.height}px{note}, {r.seconds:.1f} s</p>")
            for i, shot in enumerate(r.screenshots, 1):
                rel = html_lib.escape(os.path.relpath(shot, out))
                part = f", part {i} of {count}" if count > 1 else ""
                parts.append(
                    f"<a href='{rel}'><img src='{rel}' loading='lazy' "
                    f"alt='screenshot of {html_lib.escape(r.page)}{part}'></a>"
                )
        parts.append("</section>")
    parts.append("</body></html>")
    index = out / "index.html"
    index.write_text("\n".join(parts), encoding="utf-8")
    return index


def screenshot_name(rel: str) -> str:
    """Return a flat PNG file name for a page path (``a/b.html`` -> ``a__b.png``)."""
    stem = rel[: -len(".html")] if rel.endswith(".html") else rel
    return re.sub(r"[^\w.-]+", "__", stem) + ".png"


# --------------------------------------------------------------------------- #
# Main
# --------------------------------------------------------------------------- #


def _check_one(
    page: Path,
    site: Path,
    out: Path,
    base: str,
    browser: Browser | None,
    *,
    allow_stderr: bool,
    page_width_px: float | None,
) -> PageResult:
    """Check one page: the built file, then (with a browser) the rendered page."""
    t0 = time.monotonic()
    rel = page.relative_to(site).as_posix()
    findings, _ = check_page_static(page, site, allow_stderr=allow_stderr)
    result = PageResult(rel, findings)
    if browser is not None:
        shot = out / screenshot_name(rel)
        try:
            dom, info, seen = render_page(browser, urljoin(base, rel), shot)
        except (CDPError, TimeoutError) as exc:
            findings.errors.append(f"browser failed: {exc}")
        else:
            findings.extend(seen)
            findings.extend(
                check_dom(
                    dom, allow_stderr=allow_stderr, mathjax_version=info.get("mathjax")
                )
            )
            findings.extend(check_layout(info["layout"], page_width_px=page_width_px))
            findings.extend(check_length(rel, info["height"]))
            result.screenshots = info["screenshots"]
            result.height = info["height"]
            result.layout = info["layout"]
    result.seconds = time.monotonic() - t0
    return result


def check_site(
    site: Path,
    out: Path,
    *,
    browser_path: str | None,
    allow_stderr: bool = False,
    allow_network: bool = False,
    page_width_px: float | None = None,
    jobs: int = 1,
) -> list[PageResult]:
    """Check every page of ``site``; with a browser, also render and screenshot.

    ``page_width_px`` is the width figures are assumed to show at (see
    :func:`check_layout`); ``None`` skips that comparison. With a browser, ``jobs``
    browsers render pages at once (each page in one browser, which it has to itself);
    the results come back in the pages' order whatever the number.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    site = site.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.png"):
        old.unlink()
    pages = list_pages(site, exclude=[out])
    options = {"allow_stderr": allow_stderr, "page_width_px": page_width_px}
    if not browser_path:
        return [_check_one(p, site, out, "", None, **options) for p in pages]
    jobs = min(jobs, max(1, len(pages)))
    browsers: list[Browser] = []
    try:
        for _ in range(jobs):
            browsers.append(Browser(browser_path, allow_network=allow_network))
        idle: queue.Queue[Browser] = queue.Queue()
        for b in browsers:
            idle.put(b)
        with serve(site) as base:

            def check(page: Path) -> PageResult:
                browser = idle.get()
                try:
                    return _check_one(page, site, out, base, browser, **options)
                finally:
                    idle.put(browser)

            with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
                return list(pool.map(check, pages))
    finally:
        for b in browsers:
            b.close()


def plotting_page_width() -> float | None:
    """Return ``dpnotes.plotting.PAGE_WIDTH_PX``, read from the source next to this
    script (no import: matplotlib is not needed), else imported, else ``None``."""
    with contextlib.suppress(OSError):
        text = PLOTTING_MODULE.read_text(encoding="utf-8")
        if match := re.search(r"^PAGE_WIDTH_PX\s*=\s*([\d.]+)", text, re.MULTILINE):
            return float(match.group(1))
    try:
        from dpnotes.plotting import PAGE_WIDTH_PX
    except ImportError:
        return None
    return float(PAGE_WIDTH_PX)


def layout_summary(results: Sequence[PageResult]) -> str:
    """Say how wide the text and figure columns measured, on how many pages."""
    counts: dict[tuple[float, float], int] = {}
    for r in results:
        if r.layout.get("column"):
            key = (round(r.layout["column"]), round(r.layout.get("figure") or 0))
            counts[key] = counts.get(key, 0) + 1
    if not counts:
        return ""
    parts = [
        f"text column {c} px, figure column {f} px on {n} page(s)"
        for (c, f), n in sorted(counts.items(), key=lambda kv: -kv[1])
    ]
    return f"at a {WIDTH} px window: " + "; ".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("site", type=Path, help="built HTML folder, e.g. _build/html")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("_build/screenshots"),
        help="folder for the screenshots and index.html (default: %(default)s)",
    )
    parser.add_argument(
        "--install",
        action="store_true",
        help="install chromium-headless-shell with apt-get when no browser is found",
    )
    parser.add_argument(
        "--static-only",
        action="store_true",
        help="skip the browser: only the checks on the built files",
    )
    parser.add_argument(
        "--allow-stderr",
        action="store_true",
        help="report stderr cell outputs (warnings, progress bars) as warnings",
    )
    parser.add_argument(
        "--allow-network",
        action="store_true",
        help="let the browser reach hosts other than 127.0.0.1 (e.g. a CDN)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="browsers rendering pages at once (default: the cores, at most 4)",
    )
    parser.add_argument(
        "--page-width-px",
        type=float,
        default=None,
        help="width in CSS px that figures are drawn for (default: "
        "dpnotes.plotting.PAGE_WIDTH_PX)",
    )
    args = parser.parse_args(argv)
    jobs = args.jobs if args.jobs is not None else min(4, os.cpu_count() or 1)
    if jobs < 1:
        parser.error(f"--jobs must be at least 1, got {jobs}")

    site: Path = args.site
    if not (site / "index.html").is_file() and not any(site.glob("*.html")):
        print(f"check_site: {site} holds no built HTML; build the book first")
        return 2
    browser = None
    if not args.static_only:
        browser = find_browser()
        if browser is None and args.install:
            try:
                browser = install_browser()
            except RuntimeError as exc:
                print(f"check_site: {exc}", file=sys.stderr)
                return 2
        if browser is None:
            print(
                "check_site: no headless Chromium found (looked for "
                f"{', '.join(BROWSER_CANDIDATES)}); pass --install to install "
                "chromium-headless-shell, or --static-only to skip the browser",
                file=sys.stderr,
            )
            return 2

    page_width = args.page_width_px or plotting_page_width()
    t0 = time.monotonic()
    try:
        results = check_site(
            site,
            args.out,
            browser_path=browser,
            allow_stderr=args.allow_stderr,
            allow_network=args.allow_network,
            page_width_px=page_width,
            jobs=jobs,
        )
    except CDPError as exc:
        print(f"check_site: could not drive the browser {browser}: {exc}")
        return 2
    elapsed = time.monotonic() - t0
    if not results:
        print(f"check_site: no content pages found in {site}")
        return 2
    index = write_index(results, args.out, site)

    print(format_table(results, args.out))
    for r in results:
        for e in r.findings.errors:
            print(f"ERROR   {r.page}: {e}")
        for w in r.findings.warnings:
            print(f"warning {r.page}: {w}")
    failed = [r for r in results if r.findings.errors]
    mode = (
        "static checks only"
        if browser is None
        else f"browser {browser}, {jobs} at once"
    )
    if summary := layout_summary(results):
        width = "unknown" if page_width is None else f"{page_width:g} px"
        print(f"check_site: {summary}; PAGE_WIDTH_PX = {width}")
    print(
        f"check_site: {len(results)} page(s), {len(failed)} failed, "
        f"{elapsed:.1f} s ({mode}); review {index}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
