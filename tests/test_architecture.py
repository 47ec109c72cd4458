"""The package's layers: what may import what, private names, function sizes.

DESIGN.md's rules, checked by reading the source (nothing is imported):

* layers import downward only: the ground floor (validation, rng); then accounting,
  mechanisms, bounds, metrics, audit, data, report, plotting; then the science (mean,
  synth, dpsgd, importance); then experiments and findings; then lab. The one
  exception: an experiment module registers itself with ``dpnotes.lab.registry``;
* the package's parts (``dpnotes.<part>``) import one another without a cycle;
* no module imports another module's private name (``_x``) or a private module;
* science modules never import ``dpnotes.experiments`` or ``dpnotes.lab``;
* no public function is longer than about 100 lines of code (docstring aside);
* benchmarks use public names only.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dpnotes"

#: Longest public function allowed, in lines of code without its docstring.
MAX_PUBLIC_FUNCTION_LINES = 100

_LAYERS = {
    "validation": 0,
    "rng": 0,
    "paths": 0,
    "calibration": 1,
    "accounting": 1,
    "mechanisms": 1,
    "bounds": 1,
    "metrics": 1,
    "audit": 1,
    "data": 1,
    "report": 1,
    "paper_numbers": 1,
    "worst_case_gain": 1,
    "pld": 1,
    "plotting": 1,
    "mean": 2,
    "synth": 2,
    "dpsgd": 2,
    "importance": 2,
    "experiments": 3,
    "findings": 3,
    "lab": 4,
    "__main__": 5,
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return _LAYERS.get(parts[1]) if len(parts) > 1 else None


def _sources(folder: Path) -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(folder.rglob("*.py")):
        yield _module_name(path), ast.parse(path.read_text(), filename=str(path))


def _imports(tree: ast.Module, module: str) -> Iterator[tuple[str, list[str]]]:
    """Yield ``(imported module, names)`` for every dpnotes import in ``tree``."""
    package = module if module.count(".") == 0 else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("dpnotes"):
                    yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            target = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, target] if target else base)
            if target.startswith("dpnotes"):
                yield target, [a.name for a in node.names]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _package_of(module: str) -> str:
    return module.rpartition(".")[0]


def test_no_module_imports_a_private_name_of_another():
    found = []
    for module, tree in _sources(PACKAGE):
        for target, names in _imports(tree, module):
            if any(_private(part) for part in target.split(".")):
                found.append(f"{module} imports the private module {target}")
            found.extend(
                f"{module} imports {target}.{n}"
                for n in names
                if _private(n) and target != module
            )
    assert found == []


def test_layers_import_downward_only():
    found = []
    for module, tree in _sources(PACKAGE):
        mine = _layer(module)
        if mine is None:
            continue
        for target, _ in _imports(tree, module):
            theirs = _layer(target)
            if theirs is None or theirs <= mine:
                continue
            registering = module.startswith("dpnotes.experiments") and (
                target == "dpnotes.lab.registry"
            )
            if not registering:
                found.append(f"{module} (layer {mine}) imports {target} ({theirs})")
    assert found == []


def _package_graph() -> dict[str, set[str]]:
    """Which of the package's parts (``dpnotes.<part>``) import which others."""
    graph: dict[str, set[str]] = {}
    for module, tree in _sources(PACKAGE):
        parts = module.split(".")
        if len(parts) < 2:
            continue
        for target, _ in _imports(tree, module):
            theirs = target.split(".")
            if len(theirs) > 1 and theirs[1] != parts[1]:
                graph.setdefault(parts[1], set()).add(theirs[1])
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """Return one cycle of ``graph`` as a path, or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_packages_parts_import_each_other_without_a_cycle():
    # Imports inside functions count too: a lazy import hides a cycle, it does not
    # remove it. The one allowed edge upward, an experiment registering itself with
    # the lab, is not a cycle as long as the lab never imports an experiment.
    cycle = _cycle(_package_graph())
    assert cycle is None, " -> ".join(cycle)


def test_the_cycle_check_finds_a_planted_cycle():
    assert _cycle({"synth": {"importance"}, "importance": {"synth"}}) == [
        "importance",
        "synth",
        "importance",
    ]
    assert _cycle({"a": {"b"}, "b": {"c"}}) is None


def test_science_never_imports_experiments_or_the_lab():
    found = [
        f"{module} imports {target}"
        for module, tree in _sources(PACKAGE)
        if (_layer(module) or 0) < 3
        for target, _ in _imports(tree, module)
        if target.startswith(("dpnotes.experiments", "dpnotes.lab"))
    ]
    assert found == []


def _function_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = node.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        start = body[1].lineno if len(body) > 1 else node.end_lineno
        return (
            (node.end_lineno or 0) - (start or 0) + 1 + (body[0].lineno - node.lineno)
        )
    return (node.end_lineno or 0) - node.lineno + 1


def public_function_sizes() -> list[tuple[int, str]]:
    """Return ``(lines of code, name)`` of every public function, longest first."""
    sizes = []
    for module, tree in _sources(PACKAGE):
        for node in tree.body:
            functions = [node]
            if isinstance(node, ast.ClassDef) and not _private(node.name):
                functions = list(node.body)
            for fn in functions:
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and not (
                    _private(fn.name)
                ):
                    sizes.append((_function_lines(fn), f"{module}.{fn.name}"))
    return sorted(sizes, reverse=True)


def test_no_public_function_is_over_about_100_lines():
    long = [f"{name}: {n}" for n, name in public_function_sizes()]
    long = long[
        : sum(n > MAX_PUBLIC_FUNCTION_LINES for n, _ in public_function_sizes())
    ]
    assert long == []


@pytest.mark.parametrize("folder", ["benchmarks", "book"])
def test_benchmarks_and_chapters_use_public_names_only(folder):
    found = []
    paths = sorted((ROOT / folder).rglob("*.py"))
    if folder == "book":
        paths = sorted((ROOT / "book").rglob("*.md"))
    for path in paths:
        text = path.read_text()
        if folder == "book":
            import re

            lines = re.findall(r"^(?:from|import) dpnotes.*$", text, re.MULTILINE)
            names = [
                (m.group(1), [x.strip() for x in m.group(2).split(",")])
                for line in lines
                if (m := re.match(r"from (\S+) import \(?([^)]*)\)?", line))
            ]
        else:
            names = list(_imports(ast.parse(text), "benchmarks.x"))
        for target, imported in names:
            if any(_private(p) for p in target.split(".")) or any(
                _private(n) for n in imported
            ):
                found.append(f"{path.relative_to(ROOT)}: {target} {imported}")
    assert found == []
