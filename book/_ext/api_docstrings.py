"""Fail the book build on a public object of the API reference without a docstring.

Load it from jupyter-book's ``_config.yml``::

    sphinx:
      local_extensions:
        api_docstrings: book/_ext

Every module that an ``automodule`` directive documents with ``:members:`` is walked
as autodoc walks it: the names in its ``__all__`` (without ``__all__``: its public
names defined in it), and the public methods and properties each of its classes
defines. A function, class, method or property among them without a docstring of its
own is a Sphinx warning that names it and points at its source line, so that
``jupyter-book build -W`` fails::

    dpnotes/rng.py:73: WARNING: function dpnotes.rng.spawn_seeds has no docstring;
    the API reference documents it (write one)

Autodoc alone would not fail: it silently leaves out an undocumented member. A method
that inherits the docstring of the method it overrides counts as documented (autodoc
shows the inherited one); a dataclass or named tuple counts only with a docstring of
its own, not with the signature Python writes into ``__doc__`` in its place.

The extension also links the docstrings to the book's bibliography: a word of their
prose (any section, outside literals and code) that is a key of ``bibtex_bibfiles``
becomes a ``:cite:t:`` role (so ``bun2016concentrated, Proposition 1.6.`` reads "Bun
and Steinke [2016], Proposition 1.6." and links to the entry), and a word that looks
like a key (``name2020word``) but is none is a warning too
(``api_docstrings.citation``). The keys stay plain words in the source, where tests
and ``grep`` find them.

Rendering: a dataclass's signature shows a field's default factory as a call
(``dict()``) or ``...`` rather than ``<factory>`` or a function's repr; a class whose
only base is ``object`` gets no "Bases:" line.

The checks are plain functions (:func:`has_docstring`, :func:`undocumented`,
:func:`link_citations`, :func:`clean_dataclass_signature`) that import nothing from
Sphinx, so tests can call them.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

#: Warning type and subtypes, e.g. ``suppress_warnings: [api_docstrings.citation]``.
WARNING_TYPE = "api_docstrings"

#: A word shaped like a bibtex key of the book: ``author`` + year + ``word``.
KEY_SHAPE = re.compile(r"\b[a-z][a-z-]*(?:19|20)\d\d[a-z]+\b")

_SECTION = re.compile(r"^(\s*)([A-Z][A-Za-z ]*):\s*$")
# Roles, inline literals and interpreted text, as napoleon reads them (its
# ``_xref_or_code_regex``): colons inside these are not separators.
_LITERAL = re.compile(
    r"((?::(?:[a-zA-Z0-9]+[\-_+:.])*[a-zA-Z0-9]+:`.+?`)|(?:``.+?``)|(?:`.+?`))"
)
_BIB_KEY = re.compile(r"@\s*\w+\s*\{\s*([^,\s]+)\s*,")


def _is_generated_doc(obj: type) -> bool:
    """Return whether a class's ``__doc__`` is the signature Python wrote for it."""
    doc = obj.__dict__.get("__doc__")
    if not doc:
        return False
    if dataclasses.is_dataclass(obj):
        # dataclasses write ``Name(field: type, ...)`` where no docstring is given.
        try:
            signature = str(inspect.signature(obj)).replace(" -> None", "")
        except (TypeError, ValueError):
            return False
        return doc == obj.__name__ + signature
    fields = getattr(obj, "_fields", None)
    if isinstance(fields, tuple):
        # typing.NamedTuple and collections.namedtuple write ``Name(a, b)``.
        return doc == f"{obj.__name__}({', '.join(fields)})"
    return False


def has_docstring(obj: Any) -> bool:
    """Return whether ``obj`` has a docstring that autodoc would show as its own.

    A class needs one in its own body (not a base class's, not a dataclass's
    generated signature); a function or property its own ``__doc__``. (A method
    may inherit its base's docstring: :func:`undocumented` looks that up.)

    >>> def f():
    ...     "Do it."
    >>> def g():
    ...     pass
    >>> has_docstring(f), has_docstring(g)
    (True, False)
    """
    if inspect.isclass(obj):
        doc = obj.__dict__.get("__doc__")
        return isinstance(doc, str) and bool(doc.strip()) and not _is_generated_doc(obj)
    if isinstance(obj, (classmethod, staticmethod)):
        obj = obj.__func__
    doc = obj.fget.__doc__ if isinstance(obj, property) and obj.fget else None
    doc = getattr(obj, "__doc__", None) or doc
    return isinstance(doc, str) and bool(doc.strip())


def _kind(obj: Any) -> str | None:
    """Return the autodoc kind of a function or class, ``None`` for anything else."""
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.isroutine(obj):
        return "function"
    return None


def public_names(module: ModuleType) -> list[str]:
    """Return the names ``automodule`` with ``:members:`` documents for ``module``.

    Those in ``__all__``; without ``__all__``, the public names (no leading
    underscore) whose objects say they are defined in the module.
    """
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    return [
        name
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and getattr(obj, "__module__", None) == module.__name__
    ]


def _class_members(cls: type) -> Iterable[tuple[str, str, Any, bool]]:
    """Yield ``(name, kind, object, documented)`` of the public methods of ``cls``.

    Methods and properties the class defines in its own body, which autodoc
    documents by default. One without a docstring counts as documented when the
    attribute it overrides in a base class has one (autodoc shows that one).
    """
    fields = getattr(cls, "__dataclass_fields__", {})
    for name, attr in vars(cls).items():
        if name.startswith("_") or name in fields:
            # A dataclass field is data, even where its default is a function.
            continue
        if isinstance(attr, property):
            kind = "property"
        elif isinstance(attr, (classmethod, staticmethod)) or inspect.isfunction(attr):
            kind = "method"
        else:
            continue
        documented = any(
            name in vars(base) and has_docstring(vars(base)[name])
            for base in cls.__mro__
        )
        yield name, kind, attr, documented


def undocumented(
    module: ModuleType | str, names: Sequence[str] | None = None
) -> list[tuple[str, str, Any]]:
    """Return ``(qualified name, kind, object)`` of each undocumented public object.

    Args:
        module: The module, or its dotted name (then imported).
        names: The members to check; by default :func:`public_names`.

    Returns:
        The functions, classes, methods and properties among ``names`` and their
        classes' members that lack a docstring, in order. Constants and other
        data are not checked (autodoc documents those with a ``#:`` comment).
    """
    if isinstance(module, str):
        module = importlib.import_module(module)
    found: list[tuple[str, str, Any]] = []
    for name in public_names(module) if names is None else names:
        obj = getattr(module, name, None)
        kind = _kind(obj)
        if kind is None:
            continue
        qualname = f"{module.__name__}.{name}"
        if not has_docstring(obj):
            found.append((qualname, kind, obj))
        if inspect.isclass(obj):
            for member, member_kind, attr, documented in _class_members(obj):
                if not documented:
                    found.append((f"{qualname}.{member}", member_kind, attr))
    return found


def source_location(obj: Any) -> str | None:
    """Return ``path:line`` where ``obj`` is defined, or ``None`` if unknown."""
    target = obj.fget if isinstance(obj, property) else obj
    if isinstance(target, (classmethod, staticmethod)):
        target = target.__func__
    target = inspect.unwrap(target) if callable(target) else target
    try:
        path = inspect.getsourcefile(target)
        _, line = inspect.getsourcelines(target)
    except (OSError, TypeError):
        return None
    return f"{path}:{line}" if path else None


def bib_keys(paths: Iterable[str | Path]) -> set[str]:
    """Return the entry keys of the bibtex files at ``paths``."""
    keys: set[str] = set()
    for path in paths:
        keys.update(_BIB_KEY.findall(Path(path).read_text(encoding="utf-8")))
    return keys


def _link_line(line: str, keys: set[str], unknown: list[str]) -> str:
    """Turn the bibtex keys in one line into ``:cite:t:`` roles, outside literals."""
    parts = _LITERAL.split(line)
    for i in range(0, len(parts), 2):

        def replace(match: re.Match[str]) -> str:
            word = match.group(0)
            if word in keys:
                return f":cite:t:`{word}`"
            unknown.append(word)
            return word

        parts[i] = KEY_SHAPE.sub(replace, parts[i])
    return "".join(parts)


def link_references(lines: list[str], keys: set[str]) -> list[str]:
    """Link the bibtex keys of a Google-style ``References:`` section, in place.

    Args:
        lines: The docstring, one line per item (as autodoc passes it).
        keys: The known bibtex keys.

    Returns:
        The words of the section that look like a key but are not one.

    >>> doc = ["Sum.", "", "References:", "    bun2016concentrated, Prop. 1.6.", ""]
    >>> link_references(doc, {"bun2016concentrated"}), doc[3]
    ([], '    :cite:t:`bun2016concentrated`, Prop. 1.6.')
    """
    unknown: list[str] = []
    section_indent: int | None = None
    for i, line in enumerate(lines):
        header = _SECTION.match(line)
        indent = len(line) - len(line.lstrip())
        if header:
            section_indent = (
                len(header.group(1)) if header.group(2) == "References" else None
            )
            continue
        if section_indent is None or not line.strip():
            continue
        if indent <= section_indent:
            section_indent = None
            continue
        lines[i] = _link_line(line, keys, unknown)
    return unknown


def link_citations(lines: list[str], keys: set[str]) -> list[str]:
    """Link the bibtex keys anywhere in a docstring's prose, in place.

    Like :func:`link_references`, but in every section and in the text before
    them ("the classic rule (mironov2017renyi)"). Left alone: inline literals and
    roles, literal blocks (the indented lines after a paragraph ending in ``::``)
    and doctest blocks (``>>>`` up to the next blank line).

    Args:
        lines: The docstring, one line per item (as autodoc passes it).
        keys: The known bibtex keys.

    Returns:
        The words outside literals that look like a key but are not one.

    >>> doc = ["The rule (mironov2017renyi).", "", "Code::", "", "    mironov2017renyi"]
    >>> link_citations(doc, {"mironov2017renyi"}), doc[0], doc[4]
    ([], 'The rule (:cite:t:`mironov2017renyi`).', '    mironov2017renyi')
    """
    unknown: list[str] = []
    literal_indent: int | None = None  # inside a literal block deeper than this
    opens_literal: int | None = None  # the indent of a paragraph ending in ``::``
    in_doctest = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if not stripped:
            in_doctest = False
            if opens_literal is not None:
                literal_indent, opens_literal = opens_literal, None
            continue
        if literal_indent is not None:
            if indent > literal_indent:
                continue
            literal_indent = None
        if in_doctest or stripped.startswith(">>>"):
            in_doctest = True
            continue
        if stripped.endswith("::"):
            opens_literal = indent
        lines[i] = _link_line(line, keys, unknown)
    return unknown


#: The longest value (its ``repr``) a constant's entry shows.
MAX_VALUE_CHARS = 100

#: Stands in for a colon that napoleon must not read as ``type: description``.
COLON_STANDIN = "\ue000"

_SINGLE_COLON = re.compile(r"(?<!:):(?!:)")
_TYPE_LIKE = re.compile(
    r"^\s*[A-Za-z_][\w.]*(\[[^:]*\])?(\s*\|\s*[A-Za-z_][\w.]*(\[[^:]*\])?)*\s*$"
)


def _protect_line(line: str) -> str:
    """Hide the first colon of ``line`` from napoleon unless a type precedes it."""
    parts = _LITERAL.split(line)
    prefix = ""
    for i, part in enumerate(parts):
        match = _SINGLE_COLON.search(part) if i % 2 == 0 else None
        if match is None:
            prefix += part
            continue
        prefix += part[: match.start()]
        if _TYPE_LIKE.match(prefix):
            return line
        # Every colon from here on: napoleon would take the next one instead.
        for j in range(i, len(parts), 2):
            parts[j] = _SINGLE_COLON.sub(COLON_STANDIN, parts[j])
        return "".join(parts)
    return line


def protect_prose_colons(lines: list[str], what: str) -> None:
    """Keep napoleon from reading a prose lead-in as a type, in place.

    Napoleon reads the first line of an attribute's docstring, and the first line
    of a ``Returns:`` or ``Yields:`` section, as ``type: description``. The
    package's docstrings take types from the annotations and write prose there
    ("The public domain: number of codes per column."), so a colon after anything
    but a type expression is replaced by :data:`COLON_STANDIN`, which
    :func:`restore_colons` turns back after napoleon has run.

    >>> doc = ["The public domain: codes per column."]
    >>> protect_prose_colons(doc, "data")
    >>> doc == ["The public domain" + COLON_STANDIN + " codes per column."]
    True
    >>> doc = ["int: The count."]
    >>> protect_prose_colons(doc, "attribute"); doc
    ['int: The count.']
    """
    if what in ("data", "attribute", "property") and lines:
        lines[0] = _protect_line(lines[0])
    for i, line in enumerate(lines[:-1]):
        header = _SECTION.match(line)
        if header and header.group(2) in ("Returns", "Return", "Yields", "Yield"):
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j < len(lines):
                lines[j] = _protect_line(lines[j])


def restore_colons(lines: list[str]) -> None:
    """Undo :func:`protect_prose_colons` on napoleon's output, in place."""
    for i, line in enumerate(lines):
        if COLON_STANDIN in line:
            lines[i] = line.replace(COLON_STANDIN, ":")


def is_namedtuple_field(obj: Any) -> bool:
    """Return whether ``obj`` is the accessor Python makes for a named tuple's field.

    Its docstring is "Alias for field number N"; the class's ``Attributes:``
    section documents the field, so autodoc skips the accessor (two descriptions
    of one name are a Sphinx warning).
    """
    doc = getattr(obj, "__doc__", None) or ""
    return type(obj).__name__ == "_tuplegetter" or bool(
        re.fullmatch(r"Alias for field number \d+", doc)
    )


def canonical_name(target: str) -> str | None:
    """Return where a ``dpnotes`` object reached by ``target`` is defined.

    ``dpnotes.data.data_root`` (a re-export) gives ``dpnotes.data.files.data_root``:
    a function or class by its ``__module__`` and ``__qualname__``, a constant by
    the imported module whose ``__all__`` lists it under that name and holds the
    same object. ``None`` if ``target`` does not import, or the object is defined
    in the module ``target`` names already.

    >>> canonical_name("dpnotes.mean.coinpress_mean")
    'dpnotes.mean.coinpress.coinpress_mean'
    """
    import sys

    parts = target.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        modname = ".".join(parts[:cut])
        try:
            obj: Any = importlib.import_module(modname)
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        break
    else:
        return None
    if inspect.isclass(obj) or inspect.isroutine(obj):
        module = getattr(obj, "__module__", None)
        qualname = getattr(obj, "__qualname__", None)
        found = f"{module}.{qualname}" if module and qualname else None
    else:
        name = parts[-1]
        found = None
        for module_name, module in sorted(sys.modules.items()):
            if (
                module_name.startswith(parts[0] + ".")
                and name in (getattr(module, "__all__", None) or ())
                and getattr(module, name, None) is obj
                and not hasattr(module, "__path__")
            ):
                found = f"{module_name}.{name}"
                break
    return found if found and found != target else None


class _Shown:
    """A default value that prints as the text it was given."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _default_text(cls: Any, name: str, default: Any) -> str:
    """Return how a dataclass's signature shows the default of field ``name``."""
    spec = getattr(cls, "__dataclass_fields__", {}).get(name)
    factory = getattr(spec, "default_factory", dataclasses.MISSING)
    if factory is not dataclasses.MISSING:
        label = getattr(factory, "__qualname__", "")
        return f"{label}()" if label.isidentifier() else "..."
    text = repr(default)
    return "..." if text.startswith("<") else text


def clean_dataclass_signature(cls: Any, signature: str) -> str:
    """Return a dataclass's signature as names and readable defaults.

    Python's signature of a dataclass shows a field's ``default_factory`` as
    ``<factory>`` and a function default as ``<function Cls.<lambda>>``: a named
    factory becomes its call (``dict()``), anything else in angle brackets ``...``.
    A private field (``_name``, which the package's own code fills in) is left out,
    and so are the annotations (the class's ``Attributes:`` list the types).

    >>> from dataclasses import dataclass, field
    >>> @dataclass
    ... class P:
    ...     a: dict = field(default_factory=dict)
    ...     b: dict = field(default_factory=lambda: {"n": 1})
    ...     f: object = lambda x: x
    ...     _g: int = 0
    >>> clean_dataclass_signature(P, "(a: dict = <factory>, ...)")
    '(a=dict(), b=..., f=...)'
    """
    if not signature or not dataclasses.is_dataclass(cls):
        return signature
    try:
        parsed = inspect.signature(cls)
    except (TypeError, ValueError):
        return signature
    parameters = [
        parameter.replace(
            annotation=inspect.Parameter.empty,
            default=parameter.default
            if parameter.default is inspect.Parameter.empty
            else _Shown(_default_text(cls, parameter.name, parameter.default)),
        )
        for parameter in parsed.parameters.values()
        if not parameter.name.startswith("_")
    ]
    return str(
        parsed.replace(parameters=parameters, return_annotation=inspect.Signature.empty)
    )


def only_object_bases(cls: type) -> bool:
    """Return whether autodoc would list no base of ``cls`` but ``object``."""
    bases = getattr(cls, "__orig_bases__", None) or getattr(cls, "__bases__", ())
    return all(base is object for base in bases)


# --------------------------------------------------------------------------------------
# Sphinx glue
# --------------------------------------------------------------------------------------


def _warner(app: Any) -> Callable[..., None]:
    from sphinx.util import logging

    logger = logging.getLogger(__name__)

    def warn(message: str, subtype: str, location: Any) -> None:
        logger.warning(message, type=WARNING_TYPE, subtype=subtype, location=location)

    return warn


def _check_module(app: Any, name: str, module: Any, options: Any) -> None:
    """Warn for each undocumented object an ``automodule`` directive documents."""
    from sphinx.ext.autodoc import ALL

    members = options.get("members")
    if not members or not isinstance(module, ModuleType):
        return  # ``:no-members:``: the module's docstring only.
    names = None if members is ALL else list(members)
    warn = _warner(app)
    seen: set[str] = app.env.temp_data.setdefault("api_docstrings_seen", set())
    for qualname, kind, obj in undocumented(module, names):
        if qualname in seen:
            continue
        seen.add(qualname)
        location = source_location(obj) or (app.env.docname, None)
        warn(
            f"{kind} {qualname} has no docstring; the API reference documents it "
            "(write one)",
            "missing",
            location,
        )


def _process_docstring(
    app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """autodoc-process-docstring: check modules, link References to the bibliography."""
    if what == "module":
        _check_module(app, name, obj, options)
    keys = app.env.temp_data.get("api_docstrings_keys")
    if keys is None:
        srcdir = Path(app.srcdir)
        bibfiles = getattr(app.config, "bibtex_bibfiles", None) or []
        keys = bib_keys(srcdir / path for path in bibfiles)
        app.env.temp_data["api_docstrings_keys"] = keys
    protect_prose_colons(lines, what)
    for word in link_citations(lines, keys):
        _warner(app)(
            f"The docstring of {name} names {word!r}, which is no key of "
            f"{', '.join(getattr(app.config, 'bibtex_bibfiles', None) or [])}",
            "citation",
            source_location(obj) or (app.env.docname, None),
        )


def _restore_colons(
    app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """autodoc-process-docstring, after napoleon: put the protected colons back."""
    restore_colons(lines)


def _skip_member(
    app: Any, what: str, name: str, obj: Any, skip: bool, options: Any
) -> bool | None:
    """autodoc-skip-member: leave out named-tuple field accessors."""
    if what in ("class", "exception") and is_namedtuple_field(obj):
        return True
    return None


def _resolve_reexport(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """missing-reference: resolve a re-exported name to the object's defining module.

    ``dpnotes.data.data_root``, or ``holdout_split`` in the docstring of the package
    ``dpnotes.data``, is documented as ``dpnotes.data.files.data_root`` and
    ``dpnotes.data.splits.holdout_split``: the name is looked up as Python
    would, in the current module and then in its parent packages.
    """
    if node.get("refdomain") != "py":
        return None
    from sphinx.util.nodes import make_refnode

    target = node["reftarget"].lstrip(".~")
    module = node.get("py:module") or ""
    candidates = [target] if target.startswith("dpnotes.") else []
    while module:
        candidates.append(f"{module}.{target}")
        module = module.rpartition(".")[0]
    objects = env.get_domain("py").objects
    for candidate in candidates:
        if not candidate.startswith("dpnotes."):
            continue
        name = canonical_name(candidate)
        if name is None and candidate in objects and candidate != target:
            name = candidate
        if name in objects:
            entry = objects[name]
            return make_refnode(
                app.builder,
                node["refdoc"],
                entry.docname,
                entry.node_id,
                contnode,
                name,
            )
    return None


def _drop_object_base(
    app: Any, name: str, obj: Any, options: Any, bases: list[Any]
) -> None:
    """autodoc-process-bases: say nothing rather than "Bases: object"."""
    bases[:] = [base for base in bases if base is not object]


def _process_signature(
    app: Any,
    what: str,
    name: str,
    obj: Any,
    options: Any,
    signature: str | None,
    return_annotation: str | None,
) -> tuple[str | None, str | None] | None:
    """autodoc-process-signature: readable defaults in a dataclass's signature."""
    if what == "class" and signature and dataclasses.is_dataclass(obj):
        return clean_dataclass_signature(obj, signature), return_annotation
    return None


def _add_class_documenter(app: Any) -> None:
    """Leave out the "Bases:" line of a class whose only base is ``object``.

    Autodoc writes "Bases: " followed by the bases that ``autodoc-process-bases``
    leaves, so dropping ``object`` there alone leaves an empty line.
    """
    from sphinx.ext.autodoc import ClassDocumenter

    class BaselessClassDocumenter(ClassDocumenter):
        def add_directive_header(self, sig: str) -> None:
            shown = self.options.get("show-inheritance")
            if (
                shown
                and inspect.isclass(self.object)
                and only_object_bases(self.object)
            ):
                self.options["show-inheritance"] = False
            try:
                super().add_directive_header(sig)
            finally:
                if shown is None:
                    self.options.pop("show-inheritance", None)
                else:
                    self.options["show-inheritance"] = shown

    app.add_autodocumenter(BaselessClassDocumenter, override=True)


def _add_short_value_documenters(app: Any) -> None:
    """Show a constant's value only when it is short (it is in the source otherwise).

    A table of known files or a data set's domain runs to thousands of characters
    in one signature line; the ``#:`` comment says what it holds.
    """
    from sphinx.ext.autodoc import AttributeDocumenter, DataDocumenter
    from sphinx.util.inspect import object_description

    def too_long(documenter: Any) -> bool:
        try:
            return len(object_description(documenter.object)) > MAX_VALUE_CHARS
        except Exception:  # an unprintable value is not shown either
            return True

    class ShortValueDataDocumenter(DataDocumenter):
        def should_suppress_value_header(self) -> bool:
            return super().should_suppress_value_header() or too_long(self)

    class ShortValueAttributeDocumenter(AttributeDocumenter):
        def should_suppress_value_header(self) -> bool:
            return super().should_suppress_value_header() or too_long(self)

    app.add_autodocumenter(ShortValueDataDocumenter, override=True)
    app.add_autodocumenter(ShortValueAttributeDocumenter, override=True)


def _import_from_book(app: Any) -> None:
    """Document the package of the book being built, not one installed elsewhere."""
    import sys

    root = str(Path(app.srcdir).resolve())
    if root not in sys.path:
        sys.path.insert(0, root)


def setup(app: Any) -> dict[str, Any]:
    """Register the hook (Sphinx extension entry point)."""
    app.setup_extension("sphinx.ext.autodoc")
    app.setup_extension("sphinx.ext.napoleon")
    # Before napoleon (priority 500) turns the Google sections into reST.
    _import_from_book(app)
    app.connect("autodoc-process-docstring", _process_docstring, priority=400)
    app.connect("autodoc-process-docstring", _restore_colons, priority=600)
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("autodoc-process-bases", _drop_object_base)
    app.connect("autodoc-process-signature", _process_signature)
    _add_class_documenter(app)
    _add_short_value_documenters(app)
    app.connect("missing-reference", _resolve_reexport)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
