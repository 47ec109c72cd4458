"""The API reference (book/api): every public module on a page, every object documented.

The book build (``jupyter-book build . -W -n``) renders the pages; these tests check
what it relies on without building the book: which modules the pages name, that
each object is documented once, at its defining module, that the chapters' ``{py:...}``
roles point there, and that the docstring checker ``book/_ext/api_docstrings.py``
(which fails the build on an undocumented public object) finds what it should.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import subprocess
import sys
import textwrap
import types
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from script_loader import load_script

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dpnotes"
API = ROOT / "book" / "api"
EXT = ROOT / "book" / "_ext" / "api_docstrings.py"

_AUTOMODULE = re.compile(
    r"^(?:\.\. automodule::|```\{automodule\})\s*(\S+)\s*\n((?:[ \t]*:[^\n]*\n)*)",
    re.MULTILINE,
)
_ROLE = re.compile(r"\{py:(\w+)\}`(?:[^`<]*<)?~?([\w.]+)>?`")


@cache
def checker() -> types.ModuleType:
    """Import ``book/_ext/api_docstrings.py`` (it needs no Sphinx at import)."""
    return load_script(str(EXT.relative_to(ROOT)))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def source_modules() -> dict[str, ast.Module]:
    """Every module of the package, parsed (not imported)."""
    return {
        module_name(path): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def declared_all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            return list(ast.literal_eval(node.value))
    return None


def imported_names(tree: ast.Module) -> set[str]:
    """Names a module binds by ``from ... import`` at its top level."""
    return {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def public_modules() -> list[str]:
    """Modules with ``__all__`` and no private part in their name."""
    return [
        name
        for name, tree in source_modules().items()
        if declared_all(tree) is not None
        and not any(part.startswith("_") for part in name.split("."))
    ]


@cache
def automodules() -> dict[str, list[tuple[str, str]]]:
    """``module -> [(page, options)]`` for every automodule directive in book/api."""
    found: dict[str, list[tuple[str, str]]] = {}
    for page in sorted(API.glob("*.md")):
        for match in _AUTOMODULE.finditer(page.read_text(encoding="utf-8")):
            found.setdefault(match.group(1), []).append((page.name, match.group(2)))
    return found


def with_members(options: str) -> bool:
    return ":members:" in options and ":no-members:" not in options


def test_every_public_module_is_on_a_page():
    assert len(public_modules()) > 40
    missing = sorted(set(public_modules()) - set(automodules()))
    assert not missing, f"add an automodule for each to a page of book/api: {missing}"


def test_every_automodule_names_a_module_once():
    modules = source_modules()
    unknown = sorted(set(automodules()) - set(modules))
    assert not unknown, f"book/api documents modules that do not exist: {unknown}"
    twice = {name: pages for name, pages in automodules().items() if len(pages) > 1}
    assert not twice, f"documented more than once: {twice}"


def test_each_object_is_documented_at_its_defining_module():
    # A package's __init__ re-exports its modules' names; documenting its members
    # too would describe each object twice, under two names.
    for name, [(page, options)] in automodules().items():
        if not with_members(options):
            continue
        tree = source_modules()[name]
        reexported = sorted(set(declared_all(tree) or ()) & imported_names(tree))
        assert not reexported, (
            f"{page}: automodule {name} has :members: but re-exports {reexported}; "
            "use :no-members: and document them where they are defined"
        )


def test_packages_that_reexport_show_only_their_docstring():
    for name, pages in automodules().items():
        tree = source_modules()[name]
        if set(declared_all(tree) or ()) & imported_names(tree):
            assert all(not with_members(options) for _, options in pages), name


def test_chapter_roles_name_documented_objects_at_their_defining_module():
    modules = source_modules()
    roles = [
        (page, kind, target)
        for page in sorted((ROOT / "book").rglob("*.md"))
        if "_build" not in page.parts
        for kind, target in _ROLE.findall(page.read_text(encoding="utf-8"))
        if target.startswith("dpnotes")
    ]
    bad = []
    for page, kind, target in roles:
        parts = target.split(".")
        cut = max(
            (i for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in modules),
            default=0,
        )
        if not cut:
            bad.append(f"{page.relative_to(ROOT)}: {{py:{kind}}}`{target}`")
            continue
        module, rest = ".".join(parts[:cut]), parts[cut:]
        pages = automodules().get(module)
        if kind == "mod":
            ok = bool(pages) and not rest
        else:
            tree = modules[module]
            names = declared_all(tree) or []
            ok = (
                bool(pages)
                and any(with_members(options) for _, options in pages)
                and bool(rest)
                and rest[0] in names
                and rest[0] not in imported_names(tree)
            )
        if not ok:
            bad.append(f"{page.relative_to(ROOT)}: {{py:{kind}}}`{target}`")
    assert not bad, (
        "roles must name a public object by its defining module (e.g. dpnotes.mean."
        f"coinpress.coinpress_mean, not dpnotes.mean.coinpress_mean): {bad}"
    )


def test_no_public_object_lacks_a_docstring():
    # The same check the book build makes, without building the book.
    found = []
    for name, pages in sorted(automodules().items()):
        if any(with_members(options) for _, options in pages):
            module = importlib.import_module(name)
            found += [
                f"{kind} {qualname}"
                for qualname, kind, _ in checker().undocumented(module)
            ]
    assert not found, f"write a docstring for each: {found}"


# --------------------------------------------------------------------------------------
# The checker itself: it must flag what lacks a docstring and nothing else.
# --------------------------------------------------------------------------------------


def _planted_module() -> types.ModuleType:
    code = textwrap.dedent(
        '''
        from dataclasses import dataclass

        __all__ = ["Base", "Child", "Fields", "Plain", "documented", "undocumented",
                   "CONSTANT"]

        CONSTANT = 3

        def documented():
            """Do it."""

        def undocumented():
            pass

        def _private():
            pass

        class Base:
            """A base."""

            def run(self):
                """Run."""

            def bare(self):
                pass

            @property
            def size(self):
                return 1

        class Child(Base):
            def run(self):
                pass

        @dataclass(frozen=True)
        class Fields:
            x: int
            f: object = lambda: None

        @dataclass(frozen=True)
        class Plain:
            """Documented."""

            y: int = 0
        '''
    )
    module = types.ModuleType("planted")
    # dataclasses look the module up while they build the class.
    sys.modules["planted"] = module
    try:
        exec(compile(code, "planted.py", "exec"), module.__dict__)
    finally:
        del sys.modules["planted"]
    return module


def test_checker_flags_exactly_the_undocumented_objects():
    found = {name: kind for name, kind, _ in checker().undocumented(_planted_module())}
    assert found == {
        "planted.undocumented": "function",
        "planted.Base.bare": "method",
        "planted.Base.size": "property",
        # Child.run inherits Base.run's docstring, as autodoc shows it; the class
        # itself has none of its own.
        "planted.Child": "class",
        # The signature dataclasses write into __doc__ is no docstring.
        "planted.Fields": "class",
    }


def test_checker_follows_explicit_member_lists():
    module = _planted_module()
    assert checker().undocumented(module, ["documented", "Plain"]) == []
    names = [n for n, _, _ in checker().undocumented(module, ["undocumented"])]
    assert names == ["planted.undocumented"]


def test_checker_reads_names_without_all():
    module = _planted_module()
    del module.__all__
    names = checker().public_names(module)
    assert "undocumented" in names and "_private" not in names
    assert "dataclass" not in names  # imported, not defined here


@dataclass
class _Built:
    returncode: int
    output: str


def _build(tmp_path: Path, source: str) -> _Built:
    pytest.importorskip("sphinx")
    (tmp_path / "planted_api.py").write_text(textwrap.dedent(source), encoding="utf-8")
    (tmp_path / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(EXT.parent)!r})\n"
        "extensions = ['api_docstrings']\n"
        "napoleon_custom_sections = ['Privacy']\n",
        encoding="utf-8",
    )
    (tmp_path / "index.rst").write_text(
        "API\n===\n\n.. automodule:: planted_api\n   :members:\n", encoding="utf-8"
    )
    doctrees, html = tmp_path / "doctrees", tmp_path / "html"
    command = [sys.executable, "-m", "sphinx", "-W", "-n", "-q", "-b", "html"]
    run = subprocess.run(
        [*command, "-d", str(doctrees), str(tmp_path), str(html)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    index = html / "index.html"
    text = index.read_text(encoding="utf-8") if index.exists() else ""
    return _Built(run.returncode, run.stdout + run.stderr + text)


def test_build_fails_naming_an_undocumented_function(tmp_path):
    built = _build(
        tmp_path,
        '''
        """A module."""

        __all__ = ["ok", "forgotten"]

        def ok():
            """Fine."""

        def forgotten(x):
            return x
        ''',
    )
    assert built.returncode != 0
    assert "function planted_api.forgotten has no docstring" in built.output
    assert "planted_api.py:" in built.output  # points at the source line


def test_build_renders_privacy_and_references_as_sections(tmp_path):
    built = _build(
        tmp_path,
        '''
        """A module."""

        __all__ = ["release"]

        def release(x: float, *, epsilon: float) -> float:
            """Release ``x``.

            Args:
                x: The value.
                epsilon: The budget.

            Returns:
                The value itself: nothing is hidden.

            Privacy:
                None at all.

            References:
                Nowhere, Section 1.
            """
            return x
        ''',
    )
    assert built.returncode == 0, built.output
    for title in ("Privacy", "References"):
        assert f'<p class="rubric">{title}</p>' in built.output
    # "The value itself:" is prose, not a type napoleon should split off.
    assert "The value itself: nothing is hidden." in built.output


def test_references_link_known_keys_and_report_unknown_ones():
    doc = [
        "Sum.",
        "",
        "References:",
        "    bun2016concentrated, Proposition 1.6; ``smith2020code`` stays.",
        "    nobody2021missing.",
        "",
        "Returns:",
        "    bun2016concentrated is not linked outside References.",
    ]
    unknown = checker().link_references(doc, {"bun2016concentrated"})
    assert doc[3].startswith("    :cite:t:`bun2016concentrated`, Proposition 1.6;")
    assert "``smith2020code``" in doc[3]
    assert unknown == ["nobody2021missing"]
    assert doc[7] == "    bun2016concentrated is not linked outside References."


def test_citations_link_keys_in_every_section_but_not_in_code():
    doc = [
        "The classic rule (bun2016concentrated, Lemma 1.7); ``bun2016concentrated``.",
        "",
        "Layout::",
        "",
        "    bun2016concentrated/results.csv",
        "",
        "Args:",
        "    x: As bun2016concentrated, Thm. 1; nobody2021missing.",
        "",
        "Examples:",
        "    >>> bun2016concentrated = 1",
        "    >>> bun2016concentrated",
        "    1",
    ]
    before = list(doc)
    unknown = checker().link_citations(doc, {"bun2016concentrated"})
    assert doc[0] == (
        "The classic rule (:cite:t:`bun2016concentrated`, Lemma 1.7); "
        "``bun2016concentrated``."
    )
    assert (
        doc[7] == "    x: As :cite:t:`bun2016concentrated`, Thm. 1; nobody2021missing."
    )
    assert unknown == ["nobody2021missing"]
    assert doc[4] == before[4] and doc[10:] == before[10:]  # literal and doctest


def test_dataclass_signatures_show_no_factory_or_function_reprs():
    from dataclasses import dataclass, field

    @dataclass
    class Profile:
        seeds: dict = field(default_factory=dict)
        fixed: dict = field(default_factory=lambda: {"n": 1})
        datasets: object = field(default=lambda config: ())
        _private: object = None

    signature = "(seeds: dict = <factory>, fixed: dict = <factory>, ...)"
    assert checker().clean_dataclass_signature(Profile, signature) == (
        "(seeds=dict(), fixed=..., datasets=...)"
    )


def test_docstring_reference_keys_are_in_the_bibliography():
    keys = checker().bib_keys([ROOT / "book" / "references.bib"])
    unknown = {}
    for name, tree in source_modules().items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    missing = checker().link_references(doc.splitlines(), keys)
                    if missing:
                        unknown[f"{name}.{getattr(node, 'name', '')}"] = missing
    assert not unknown, f"References name keys missing from references.bib: {unknown}"


def test_config_loads_the_extension_and_the_docstring_sections():
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    sphinx = config["sphinx"]
    assert sphinx["local_extensions"]["api_docstrings"] == "book/_ext"
    assert {"sphinx.ext.autodoc", "sphinx.ext.napoleon"} <= set(
        sphinx["extra_extensions"]
    )
    assert "Privacy" in sphinx["config"]["napoleon_custom_sections"]
    assert sphinx["config"].get("nitpicky") is not False
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    listed = {c["file"] for part in toc["parts"] for c in part["chapters"]}
    pages = {f"book/api/{page.stem}" for page in API.glob("*.md")}
    assert pages <= listed, f"book/api pages missing from _toc.yml: {pages - listed}"
