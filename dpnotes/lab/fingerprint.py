"""Source fingerprints: which code an experiment can run, and a digest of it.

A stored result is trusted only while the code that computed it is unchanged. The code
is the experiment's module and every ``dpnotes`` module it imports, transitively
(:func:`import_closure`, read from the ``import`` statements, never by importing), less
this package (``dpnotes.lab``), which runs and stores experiments but computes none of
their numbers. Each module enters through the sha256 of its :func:`normalized_source`,
so a corrected docstring or comment leaves stored results current while any change to
code does not; ``python -m dpnotes restamp`` is how a change that should not move any
number is shown not to.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import re
from collections.abc import Sequence
from pathlib import Path

__all__ = ["code_digests", "import_closure", "is_infrastructure", "normalized_source"]

#: The package that runs, stores and reads experiments: outside every config hash.
INFRASTRUCTURE_PACKAGE = "dpnotes.lab"


def is_infrastructure(module: str) -> bool:
    """Return whether ``module`` runs or stores experiments rather than computing them.

    That is ``dpnotes.lab`` and its modules, and the ``dpnotes.experiments`` package's
    ``__init__`` (which only lists the experiment modules).

    >>> is_infrastructure("dpnotes.lab.store"), is_infrastructure("dpnotes.metrics")
    (True, False)
    """
    return (
        module == INFRASTRUCTURE_PACKAGE
        or module.startswith(INFRASTRUCTURE_PACKAGE + ".")
        or module == "dpnotes.experiments"
    )


_NEWLINE = re.compile(r"\r\n|\r|\n")
_SPANS_LINES = re.compile(r"\"\"\"|'''|\\\r?\n")


def normalized_source(text: str) -> str:
    r"""Return Python source without the parts that cannot change what it computes.

    Removed: docstrings (every statement that is a plain string literal), comment-only
    lines, blank lines and trailing whitespace. Kept verbatim: every other line,
    indentation and end-of-line comments included, and every line of a multi-line
    string that is not a docstring (a blank line or a ``#`` in it is part of a
    value). So correcting a docstring or a comment leaves a stored result current,
    while any change to code does not. Only positions from :mod:`ast` are used,
    which every supported Python reports alike, so a file has one digest.

    >>> code = 'def f(x):\n    "Twice x."\n\n    # doubled\n    return 2 * x  # y\n'
    >>> normalized_source(code)
    'def f(x):\n    return 2 * x  # y'
    """
    tree = ast.parse(text)
    rows = _NEWLINE.split(text)

    # ast columns count UTF-8 bytes; rows are strings.
    def col(row: int, offset: int) -> int:
        return len(rows[row - 1].encode()[:offset].decode(errors="ignore"))

    docstrings = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ]
    skip = {id(node.value) for node in docstrings}
    # Rows of a string value that spans lines: a triple-quoted one, or one with a
    # backslash-newline. (Single-line literals concatenated over several lines are
    # not: their rows may hold comments and trailing spaces outside the quotes.)
    verbatim: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.Constant, ast.JoinedStr))
            and id(node) not in skip
            and isinstance(getattr(node, "value", ""), (str, bytes))
            and node.end_lineno is not None
            and node.end_lineno > node.lineno
            and _SPANS_LINES.search("\n".join(rows[node.lineno - 1 : node.end_lineno]))
        ):
            verbatim.update(range(node.lineno, node.end_lineno + 1))
    for node in docstrings:
        first, last = node.lineno, node.end_lineno or node.lineno
        a, b = col(first, node.col_offset), col(last, node.end_col_offset or 0)
        if first == last:
            rows[first - 1] = rows[first - 1][:a] + rows[first - 1][b:]
            continue
        rows[first - 1] = rows[first - 1][:a]
        for row in range(first + 1, last):
            rows[row - 1] = ""
            verbatim.discard(row)
        rows[last - 1] = rows[last - 1][b:]
        verbatim.discard(last)
    out = []
    for number, row in enumerate(rows, start=1):
        if number in verbatim:
            out.append(row)
            continue
        row = row.rstrip()
        if row and not row.lstrip().startswith("#"):
            out.append(row)
    return "\n".join(out)


#: The folder of the ``dpnotes`` package, whose modules are located by path.
_PACKAGE_ROOT = Path(__file__).resolve().parents[1]


def _module_file(name: str) -> Path | None:
    """Return the source file of a module (a package's ``__init__.py``), or None.

    A ``dpnotes`` module is found by path, without importing anything (importing a
    module to locate it would import torch to hash a census experiment); another
    module (an experiment registered outside the package) through its import spec.
    """
    parts = name.split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    if parts[0] != "dpnotes":
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            return None
        return Path(spec.origin)
    base = _PACKAGE_ROOT.joinpath(*parts[1:])
    for file in (base / "__init__.py", base.with_suffix(".py")):
        if file.is_file():
            return file
    return None


def _package_modules(name: str) -> list[str]:
    """Return ``name`` itself, or every module of the package ``name``."""
    file = _module_file(name)
    if file is None or file.name != "__init__.py":
        return [name]
    out = []
    for path in sorted(file.parent.rglob("*.py")):
        parts = path.relative_to(file.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append(".".join((name, *parts)))
    return out


def _module_digest(name: str) -> str:
    """Return the sha256 of a module's :func:`normalized_source`."""
    file = _module_file(name)
    if file is None:
        raise ValueError(f"no source file for module {name!r}.")
    stat = file.stat()
    return _normalized_digest(str(file), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=512)
def _normalized_digest(path: str, mtime_ns: int, size: int) -> str:
    """:func:`_module_digest` of one version of a file (time and size key the cache)."""
    del mtime_ns, size
    text = Path(path).read_text(encoding="utf-8")
    return hashlib.sha256(normalized_source(text).encode()).hexdigest()


def _imports_of(name: str) -> frozenset[str]:
    """Return the ``dpnotes`` modules that module ``name`` imports (read, not run).

    ``from dpnotes.a import b`` counts ``dpnotes.a.b`` when that is a module, else
    ``dpnotes.a``; relative imports are resolved against ``name``'s package.
    """
    file = _module_file(name)
    if file is None:
        return frozenset()
    stat = file.stat()
    return _parse_imports(name, str(file), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=512)
def _parse_imports(name: str, path: str, mtime_ns: int, size: int) -> frozenset[str]:
    """:func:`_imports_of` of one version of a file (time and size key the cache)."""
    del mtime_ns, size
    file = Path(path)
    tree = ast.parse(file.read_text(), filename=path)
    package = name if file.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                dpnotes = sub.startswith("dpnotes.")
                found.add(sub if dpnotes and _module_file(sub) is not None else target)
    return frozenset(m for m in found if m == "dpnotes" or m.startswith("dpnotes."))


def import_closure(names: Sequence[str]) -> set[str]:
    """Return every ``dpnotes`` module that the modules ``names`` import, transitively.

    A package in ``names`` stands for all of its modules. Modules are named as files:
    a package in the result means its ``__init__.py`` only. Imports are read from the
    source (the ``import`` statements anywhere in a file, including inside
    functions), so the result says which code a computation can run, which is what
    its config hash has to cover.

    >>> "dpnotes.validation" in import_closure(["dpnotes.rng"])
    False
    >>> "dpnotes.accounting" in import_closure(["dpnotes.mechanisms"])
    True
    """
    todo = [m for n in names for m in _package_modules(n)]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(_imports_of(name) - seen)
    return seen


def code_digests(names: Sequence[str]) -> dict[str, str]:
    """Return ``{module: digest}`` for the code that the modules ``names`` can run.

    The modules are :func:`import_closure` of ``names`` less the infrastructure
    (:func:`is_infrastructure`). Each digest is the sha256 of the module's
    :func:`normalized_source`, so editing a docstring or a comment changes none of them.
    """
    closure = import_closure([n for n in names if n])
    modules = sorted(m for m in closure if not is_infrastructure(m))
    return {name: _module_digest(name) for name in modules}
