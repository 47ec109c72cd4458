"""Write each chapter's Colab notebook: the chapter as a page Jupyter and Colab read.

A chapter is a MyST markdown notebook (``book/<part>/<chapter>.md``). Its notebook for
Colab, ``book/<part>/<chapter>.ipynb`` (what the book's launch button and the README
open), is generated from it, as QuantEcon and d2l publish plain notebooks:

* the code cells are the chapter's, the first one the install cell of
  :func:`install_cell`, which clones the repository named in ``_config.yml``;
* MyST that Jupyter cannot render becomes plain Markdown: citations become "Author
  (Year)" with a link, cross-references become text and links (to an anchor of the
  notebook, or to the other chapter's notebook in Colab), theorems and definitions
  become bold headings, admonitions block quotes, figure directives a caption under the
  figure's cell, listings the code they include, and glued numbers the values the book
  shows (read from the book build's ``<chapter>.glue.json``, and kept in the notebook's
  metadata so that the notebook can be checked against its chapter without a build).

Run: ``python scripts/colab.py sync`` after ``make book`` (``make sync`` does both), and
``python scripts/colab.py check [--build _build]`` to check every notebook against its
chapter (and, with a build, its numbers against the build's).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import jupytext
import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]

#: Roles and directives that must not survive into a Colab notebook.
RAW_MYST = re.compile(r"\{[a-z][a-z0-9:_-]*\}`|^\s*(```+|:::+)\s*\{[a-z]", re.M)

_ROLE = re.compile(r"\{([a-z][a-z0-9:_-]*)\}`([^`]*)`")
_FENCE = re.compile(r"^(\s*)(`{3,}|:{3,})\{([a-z][a-z0-9:_-]*)\}\s*(.*)$")
_TARGET = re.compile(r"^\(([A-Za-z0-9_.:-]+)\)=\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_EXPLICIT = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)

PRF_KINDS = {
    "prf:definition": "Definition",
    "prf:theorem": "Theorem",
    "prf:lemma": "Lemma",
    "prf:proposition": "Proposition",
    "prf:corollary": "Corollary",
    "prf:algorithm": "Algorithm",
    "prf:remark": "Remark",
    "prf:example": "Example",
}
ADMONITIONS = {
    "note": "Note",
    "tip": "Tip",
    "warning": "Warning",
    "important": "Important",
    "seealso": "See also",
    "caution": "Caution",
    "hint": "Hint",
    "attention": "Attention",
    "danger": "Danger",
    "error": "Error",
}


# --------------------------------------------------------------------------- the book


@dataclass
class Label:
    """A cross-reference target: where it is and what a reader calls it."""

    chapter: str  # path of the chapter's source, relative to the repository root
    text: str  # e.g. "Theorem (Parallel composition)" or a section title


@dataclass
class Book:
    """What converting a chapter needs to know about the whole book."""

    repository: str
    branch: str
    bib: dict[str, dict[str, str]]
    labels: dict[str, Label] = field(default_factory=dict)

    def colab_url(self, chapter: str) -> str:
        """Colab's address of a chapter's notebook (``chapter`` is its ``.md`` path)."""
        owner_repo = self.repository.removeprefix("https://github.com/").strip("/")
        notebook = Path(chapter).with_suffix(".ipynb").as_posix()
        return (
            f"https://colab.research.google.com/github/{owner_repo}/blob/"
            f"{self.branch}/{notebook}"
        )


def read_config(root: Path = ROOT) -> tuple[str, str]:
    """Return the repository URL and branch that ``_config.yml`` names."""
    config = yaml.safe_load((root / "_config.yml").read_text())
    repo = config["repository"]
    return repo["url"].rstrip("/"), repo.get("branch", "main")


def install_cell(repository: str) -> str:
    """The first cell of every chapter: in Colab, fetch and install dpnotes.

    Plain Python (no shell or magic lines), so it is valid everywhere; outside Colab it
    does nothing. The clone brings the stored results, which the chapters read through
    ``DPNOTES_RESULTS_DIR``.
    """
    return f'''# In Colab: install dpnotes with its stored results (elsewhere: nothing).
import os, subprocess, sys  # noqa: E401

REPOSITORY = "{repository}"  # _config.yml: repository.url
CLONE = f"git clone -q --depth 1 {{REPOSITORY}} /content/dpnotes"
INSTALL = f"{{sys.executable}} -m pip install -q /content/dpnotes"
if "google.colab" in sys.modules:
    if not os.path.isdir("/content/dpnotes"):
        subprocess.run(f"{{CLONE}} && {{INSTALL}}", shell=True, check=True)
    os.environ["DPNOTES_RESULTS_DIR"] = "/content/dpnotes/book/_results"'''


def _bib_entries(path: Path) -> dict[str, dict[str, str]]:
    from pybtex.database import parse_file

    entries = {}
    for key, entry in parse_file(str(path)).entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        last = [
            " ".join(p.last_names).replace("{", "").replace("}", "") for p in people
        ]
        if len(last) > 2:
            authors = f"{last[0]} et al."
        else:
            authors = " and ".join(last) or entry.fields.get("title", key)
        f = entry.fields
        url = ""
        if "doi" in f:
            url = f"https://doi.org/{f['doi']}"
        elif "url" in f:
            url = f["url"]
        elif f.get("archiveprefix", "").lower() == "arxiv" and "eprint" in f:
            url = f"https://arxiv.org/abs/{f['eprint']}"
        entries[key] = {"authors": authors, "year": f.get("year", "n.d."), "url": url}
    return entries


def _strip_roles(text: str) -> str:
    """Text of a heading, with roles and markup reduced to their words."""
    text = _ROLE.sub(lambda m: m.group(2), text)
    return re.sub(r"[*_`]", "", text).strip()


def chapters(root: Path = ROOT) -> list[Path]:
    """The chapter sources: MyST notebooks under ``book/``, in a stable order."""
    out = []
    for md in sorted((root / "book").rglob("*.md")):
        rel = md.relative_to(root / "book").parts
        if any(p.startswith(("_", ".")) for p in rel):
            continue
        if md.read_text().startswith("---\njupytext:"):
            out.append(md)
    return out


def _index_labels(book: Book, md: Path, root: Path) -> None:
    chapter = md.relative_to(root).as_posix()
    lines = md.read_text().splitlines()
    for i, line in enumerate(lines):
        target = _TARGET.match(line)
        if target:
            title = next(
                (
                    _strip_roles(h.group(2))
                    for h in map(_HEADING.match, lines[i + 1 : i + 4])
                    if h
                ),
                target.group(1),
            )
            book.labels[target.group(1)] = Label(chapter, title)
        fence = _FENCE.match(line)
        if not fence:
            continue
        name, argument = fence.group(3), fence.group(4).strip()
        options = _options(lines[i + 1 : i + 12])
        if name in PRF_KINDS and "label" in options:
            kind = PRF_KINDS[name]
            text = f"{kind} ({_strip_roles(argument)})" if argument else kind
            book.labels[options["label"]] = Label(chapter, text)
        elif name == "glue:figure":
            book.labels[options.get("name", argument)] = Label(chapter, "Figure")
        elif name == "math" and "label" in options:
            book.labels[options["label"]] = Label(chapter, "Equation")


def load_book(root: Path = ROOT) -> Book:
    """Read the repository, the bibliography and every chapter's labels."""
    repository, branch = read_config(root)
    book = Book(repository, branch, _bib_entries(root / "book" / "references.bib"))
    for md in chapters(root):
        _index_labels(book, md, root)
    return book


# ----------------------------------------------------------------------- conversion


def _options(lines: list[str]) -> dict[str, str]:
    options = {}
    for line in lines:
        m = re.match(r"^\s*:([a-z-]+):\s*(.*)$", line)
        if not m:
            break
        options[m.group(1)] = m.group(2).strip()
    return options


class MissingValue(KeyError):
    """A glued value the conversion needs and does not have."""


@dataclass
class Converter:
    """Turns one chapter's MyST markdown into Markdown Jupyter renders."""

    book: Book
    chapter: str  # the chapter's .md path relative to the repository root
    glue: dict[str, dict[str, str]]  # name -> mime bundle, as in <chapter>.glue.json
    root: Path = ROOT
    #: Values already shown, by the role's content ("md:" before a {glue:md}'s): when
    #: given, they are used as they are (checking a committed notebook).
    values: dict[str, str] | None = None
    used: dict[str, str] = field(default_factory=dict)

    # ---- roles

    def _link(self, label: str, text: str | None) -> str:
        target = self.book.labels.get(label)
        if target is None:
            return text or label
        shown = text or target.text
        if target.chapter == self.chapter:
            return f"[{shown}](#{label})"
        return f"[{shown}]({self.book.colab_url(target.chapter)}#{label})"

    def _cite(self, keys: str, textual: bool) -> str:
        parts = []
        for key in (k.strip() for k in keys.split(",")):
            entry = self.book.bib.get(key)
            if entry is None:
                raise KeyError(f"{self.chapter}: unknown citation key {key!r}")
            authors, year, url = entry["authors"], entry["year"], entry["url"]
            year_text = f"[{year}]({url})" if url else year
            parts.append(
                f"{authors} ({year_text})" if textual else f"{authors} {year_text}"
            )
        return "; ".join(parts) if textual else "(" + "; ".join(parts) + ")"

    def _glue(self, spec: str, markdown: bool) -> str:
        from myst_nb.core.variables import format_plain_text

        shown = f"md:{spec}" if markdown else spec
        if self.values is not None:
            if shown not in self.values:
                raise MissingValue(
                    f"{self.chapter}: the notebook records no value for {shown!r}: "
                    "run `make sync`"
                )
            self.used[shown] = self.values[shown]
            return self.values[shown]
        key, _, fmt = spec.partition(":")
        if markdown:
            fmt = ""
        bundle = self.glue.get(key)
        if bundle is None:
            raise MissingValue(
                f"{self.chapter}: no glued value {key!r}; build the book first "
                "(make book), then run `python scripts/colab.py sync`"
            )
        if markdown and "text/markdown" in bundle:
            value = bundle["text/markdown"]
        else:
            value = format_plain_text(bundle["text/plain"], fmt) if fmt else None
            if value is None:
                value = bundle["text/plain"]
                if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                    value = value[1:-1]
        self.used[shown] = value
        return value

    def role(self, name: str, content: str) -> str:
        """Plain Markdown for one role."""
        explicit = _EXPLICIT.match(content)
        text, target = (
            (explicit.group(1), explicit.group(2)) if explicit else (None, content)
        )
        if name in ("cite", "cite:p", "cite:ps"):
            return self._cite(content, textual=False)
        if name in ("cite:t", "cite:ts"):
            return self._cite(content, textual=True)
        if name in ("ref", "numref", "prf:ref", "eq"):
            if text and "%s" in text:
                text = text.replace("%s", "").strip() or None
            return self._link(target, text)
        if name == "doc":
            return text or target.rsplit("/", 1)[-1]
        if name in ("glue", "glue:text", "glue:any"):
            return self._glue(content, markdown=False)
        if name == "glue:md":
            return self._glue(content, markdown=True)
        if name.startswith("py:"):
            return f"`{(text or target).lstrip('~')}`"
        if name == "math":
            return f"${content}$"
        if name == "download":
            return text or target
        if name in ("code", "command", "file", "kbd", "abbr", "term"):
            return f"`{text or target}`"
        raise ValueError(f"{self.chapter}: no plain form for the role {{{name}}}")

    def roles(self, text: str) -> str:
        return _ROLE.sub(lambda m: self.role(m.group(1), m.group(2)), text)

    # ---- directives

    def _literalinclude(self, argument: str, options: dict[str, str]) -> str:
        chapter_dir = (self.root / self.chapter).parent
        path = (chapter_dir / argument).resolve()
        source = path.read_text()
        if "pyobject" in options:
            source = _pyobject(source, options["pyobject"])
        source = _between(source, options)
        if "lines" in options:
            rows = source.splitlines()
            keep = []
            for part in options["lines"].split(","):
                a, dash, b = part.strip().partition("-")
                first = int(a) if a else 1
                last = (int(b) if b else len(rows)) if dash else first
                keep += rows[first - 1 : last]
            source = "\n".join(keep)
        language = options.get("language", "python")
        caption = (
            f"*{self.roles(options['caption'])}*\n\n" if "caption" in options else ""
        )
        return f"{caption}```{language}\n{source.rstrip()}\n```"

    def directive(self, name: str, argument: str, body: list[str]) -> str:
        """Plain Markdown for one directive, its body converted recursively."""
        options = _options(body)
        body = body[len(options) :]
        while body and not body[0].strip():
            body = body[1:]
        inner = self.markdown("\n".join(body)).strip()
        anchor = options.get("label") or options.get("name")
        head = f'<a id="{anchor}"></a>\n\n' if anchor else ""
        if name in PRF_KINDS:
            title = (
                f"{PRF_KINDS[name]} ({self.roles(argument)})"
                if argument
                else PRF_KINDS[name]
            )
            return f"{head}**{title}.** {inner}"
        if name == "prf:proof":
            return f"*Proof.* {inner} $\\blacksquare$"
        if name == "admonition":
            return head + _quote(f"**{self.roles(argument)}**\n\n{inner}")
        if name in ADMONITIONS:
            return head + _quote(f"**{ADMONITIONS[name]}.** {inner}")
        if name == "glue:figure":
            anchor = options.get("name", argument)
            caption = "\n".join(
                line for line in inner.splitlines() if not line.startswith("Download:")
            ).strip()
            lead = "**Figure.**"
            return f'<a id="{anchor}"></a>\n\n{lead} {caption}'
        if name == "literalinclude":
            return head + self._literalinclude(argument, options)
        if name == "bibliography":
            return "The references are listed in the book's bibliography."
        if name == "math":
            return f"{head}$$\n{chr(10).join(body).strip()}\n$$"
        if name in ("code-block", "code", "sourcecode"):
            return f"```{argument}\n{chr(10).join(body).rstrip()}\n```"
        if name in ("figure", "image"):
            alt = options.get("alt", "")
            return f"{head}![{alt}]({argument})\n\n{inner}".strip()
        if name in ("epigraph", "div", "container", "card", "dropdown", "toggle"):
            return head + inner
        raise ValueError(f"{self.chapter}: no plain form for the directive {{{name}}}")

    # ---- text

    def markdown(self, text: str) -> str:
        """Convert a Markdown cell's source."""
        lines = text.split("\n")
        out: list[str] = []
        i = 0
        in_code: str | None = None
        while i < len(lines):
            line = lines[i]
            if in_code is not None:
                out.append(line)
                if line.strip() == in_code:
                    in_code = None
                i += 1
                continue
            fence = _FENCE.match(line)
            if fence:
                _, marks, name, argument = fence.groups()
                close = re.compile(rf"^\s*{re.escape(marks)}\s*$")
                j = i + 1
                depth = 0
                while j < len(lines):
                    if (
                        _FENCE.match(lines[j])
                        and _FENCE.match(lines[j]).group(2) == marks
                    ):
                        depth += 1
                    elif close.match(lines[j]):
                        if depth == 0:
                            break
                        depth -= 1
                    j += 1
                out.append(self.directive(name, argument.strip(), lines[i + 1 : j]))
                i = j + 1
                continue
            plain_fence = re.match(r"^\s*(`{3,}|~{3,})", line)
            if plain_fence:
                in_code = plain_fence.group(1)
                out.append(line)
                i += 1
                continue
            target = _TARGET.match(line)
            if target:
                out.append(f'<a id="{target.group(1)}"></a>')
                i += 1
                continue
            out.append(self.roles(line) if "`" in line else line)
            i += 1
        return "\n".join(out)


def _between(source: str, options: dict[str, str]) -> str:
    """Apply ``start-at``/``start-after``/``end-at``/``end-before`` as Sphinx does."""
    rows = source.splitlines()
    for option, after in (("start-at", False), ("start-after", True)):
        if option in options:
            hit = [i for i, r in enumerate(rows) if options[option] in r]
            if not hit:
                raise ValueError(
                    f"literalinclude: {option} {options[option]!r} not found"
                )
            rows = rows[hit[0] + after :]
    for option, inclusive in (("end-at", True), ("end-before", False)):
        if option in options:
            hit = [i for i, r in enumerate(rows) if options[option] in r]
            if not hit:
                raise ValueError(
                    f"literalinclude: {option} {options[option]!r} not found"
                )
            rows = rows[: hit[0] + inclusive]
    if options.get("dedent"):
        width = int(options["dedent"])
        rows = [r[width:] for r in rows]
    return "\n".join(rows)


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())


def _pyobject(source: str, name: str) -> str:
    """Source of ``name`` (a function, class or ``Class.method``) in ``source``."""
    tree = ast.parse(source)
    nodes: list[ast.AST] = [tree]
    for part in name.split("."):
        found = None
        for node in nodes[-1].body:  # type: ignore[attr-defined]
            if (
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and node.name == part
            ):
                found = node
        if found is None:
            raise ValueError(f"literalinclude: no {name!r} in the file")
        nodes.append(found)
    node = nodes[-1]
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])  # type: ignore[attr-defined]
    # Indented as in the file, as Sphinx shows it (``:dedent:`` removes it).
    rows = source.splitlines()[first - 1 : node.end_lineno]  # type: ignore[attr-defined]
    return "\n".join(rows)


# ------------------------------------------------------------------------ notebooks


def notebook(
    md: Path,
    book: Book,
    glue: dict[str, dict[str, str]],
    root: Path = ROOT,
    values: dict[str, str] | None = None,
) -> nbformat.NotebookNode:
    """The Colab notebook of chapter ``md``, with glued values from ``glue``.

    With ``values`` (the shown values a notebook records), those are used instead.
    """
    chapter = md.relative_to(root).as_posix()
    converter = Converter(book, chapter, glue, root, values)
    source = jupytext.read(md)
    cells = []
    first_code = True
    for cell in source.cells:
        if cell.cell_type == "markdown":
            text = converter.markdown(cell.source).strip()
            if text:
                cells.append(nbformat.v4.new_markdown_cell(text))
        elif cell.cell_type == "code":
            code = cell.source
            if first_code:
                code = install_cell(book.repository)
                first_code = False
            tags = [t for t in cell.metadata.get("tags", []) if t != "remove-cell"]
            meta = {"tags": tags} if tags else {}
            cells.append(nbformat.v4.new_code_cell(code, metadata=meta))
    header = (
        f"*This notebook is generated from `{chapter}`. Run the first cell in Colab to "
        "install `dpnotes`. Each figure is the output of a code cell, and its caption "
        "follows it; the book shows the same page with numbered figures and theorems.*"
    )
    cells.insert(0, nbformat.v4.new_markdown_cell(header))
    for index, cell in enumerate(cells):
        cell["id"] = f"cell-{index:03d}"
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata = {
        "kernelspec": {
            "display_name": "Python 3",
            "language": "python",
            "name": "python3",
        },
        "language_info": {"name": "python"},
        "colab": {"provenance": []},
        "dpnotes": {"source": chapter, "glue": dict(sorted(converter.used.items()))},
    }
    return nb


def _plain_values(nb: nbformat.NotebookNode) -> dict[str, str]:
    return dict(nb.metadata.get("dpnotes", {}).get("glue", {}))


def build_glue(md: Path, build: Path, root: Path = ROOT) -> dict[str, dict[str, str]]:
    """The glued values a book build recorded for chapter ``md``."""
    rel = md.relative_to(root).with_suffix(".glue.json")
    path = build / "jupyter_execute" / rel
    if not path.is_file() and path.with_suffix("").with_suffix(".ipynb").is_file():
        return {}  # executed, and glued nothing
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: build the book first (make book)")
    outputs = json.loads(path.read_text())
    return {name: output.get("data", {}) for name, output in outputs.items()}


def render(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


_FIRST_CODE_CELL = re.compile(
    r"(```\{code-cell\}[^\n]*\n(?::[^\n]*\n)*\n?)(.*?)(\n```)", re.S
)


def chapter_install_cell(md: Path) -> str | None:
    """The source of the first code cell of chapter ``md`` (its install cell)."""
    match = _FIRST_CODE_CELL.search(md.read_text())
    return match.group(2) if match else None


def set_install_cells(root: Path) -> list[Path]:
    """Make every chapter's first code cell :func:`install_cell` of ``_config.yml``."""
    cell = install_cell(read_config(root)[0])
    changed = []
    for md in chapters(root):
        text = md.read_text()
        new = _FIRST_CODE_CELL.sub(
            lambda m: m.group(1) + cell + m.group(3), text, count=1
        )
        if new != text:
            md.write_text(new)
            changed.append(md)
    return changed


def sync(root: Path, build: Path) -> list[Path]:
    """Write every chapter's notebook from its source and the build's glued values.

    The chapters' install cells are brought in step with ``_config.yml`` first.
    """
    written = set_install_cells(root)
    book = load_book(root)
    for md in chapters(root):
        nb = notebook(md, book, build_glue(md, build, root), root)
        path = md.with_suffix(".ipynb")
        text = render(nb)
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
            written.append(path)
    return written


def check(root: Path, build: Path | None) -> list[str]:
    """Return what is wrong with the committed notebooks (empty: all in step).

    Each notebook must equal the one generated from its chapter with the values it
    records; with ``build``, those values should also be the build's (a difference is
    reported as a warning, prefixed ``warning:``).
    """
    book = load_book(root)
    problems = []
    for md in chapters(root):
        path = md.with_suffix(".ipynb")
        rel = path.relative_to(root)
        if not path.is_file():
            problems.append(f"{rel} is missing: run `make sync`")
            continue
        committed = nbformat.reads(path.read_text(), as_version=4)
        values = _plain_values(committed)
        try:
            expected = notebook(md, book, {}, root, values)
        except MissingValue as error:
            problems.append(f"{rel}: {error.args[0]}")
            continue
        if render(expected) != path.read_text():
            problems.append(f"{rel} differs from its chapter: run `make sync`")
        for cell in committed.cells:
            if cell.cell_type == "markdown" and RAW_MYST.search(cell.source):
                problems.append(
                    f"{rel}: raw MyST in a markdown cell: {cell.source[:80]!r}"
                )
                break
        if build is not None:
            built = notebook(md, book, build_glue(md, build, root), root)
            stale = {
                k: (v, built.metadata["dpnotes"]["glue"].get(k))
                for k, v in values.items()
                if built.metadata["dpnotes"]["glue"].get(k) != v
            }
            if stale:
                first = ", ".join(
                    f"{k}: {a!r} -> {b!r}" for k, (a, b) in list(stale.items())[:3]
                )
                problems.append(
                    f"warning: {rel}: {len(stale)} number(s) differ from the book "
                    f"build ({first}): run `make sync`"
                )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["sync", "check"])
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument(
        "--strict", action="store_true", help="numbers that differ from the build fail"
    )
    parser.add_argument(
        "--build", type=Path, default=None, help="the book build folder"
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.command == "sync":
        written = sync(root, args.build or root / "_build")
        for path in written:
            print(f"wrote {path.relative_to(root)}")
        print(f"{len(written)} notebook(s) written, {len(chapters(root))} chapters")
        return 0
    problems = check(root, args.build)
    for problem in problems:
        print(problem, file=sys.stderr)
    # A number that differs from this build's is a warning unless --strict: the last
    # digit of a float can differ between CPUs, and the page itself is right.
    errors = [p for p in problems if args.strict or not p.startswith("warning:")]
    if not errors:
        print(f"{len(chapters(root))} Colab notebooks are in step with their chapters")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
