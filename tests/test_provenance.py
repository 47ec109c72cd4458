"""Which code a stored result's config hash covers: the import closure, normalised."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpnotes.experiments import get_experiment, list_experiments
from dpnotes.experiments import registry as reg
from dpnotes.experiments.registry import normalized_source


def test_closure_follows_imports_transitively():
    # stratified_mean imports dpnotes.mean, which imports validation and rng; none of
    # them is in the experiment's depends.
    closure = reg.import_closure(["dpnotes.experiments.stratified_mean"])
    assert {"dpnotes.mean", "dpnotes.validation", "dpnotes.rng"} <= closure
    hashed = get_experiment("strat_mean_census").code_digests()
    assert {"dpnotes.validation", "dpnotes.rng", "dpnotes.accounting"} <= set(hashed)
    # A package in ``names`` stands for all of its modules.
    assert {"dpnotes.synth.gem", "dpnotes.synth.mst"} <= reg.import_closure(
        ["dpnotes.synth"]
    )
    # Infrastructure stays out of the hash.
    assert "dpnotes.experiments.registry" not in hashed
    assert "dpnotes.experiments.store" not in hashed


def test_every_experiment_hashes_what_it_imports():
    for e in list_experiments():
        hashed = set(e.code_digests())
        assert e.module in hashed, e.name
        assert reg.import_closure([e.module, *e.depends]) - reg._INFRASTRUCTURE == (
            hashed
        ), e.name
    # The helpers the long-running experiments call through other modules.
    for name in ("strat_synth", "dpsgdf_main", "dpsgdf_clip", "dpsgdf_budget"):
        hashed = get_experiment(name).code_digests()
        assert {"dpnotes.accounting", "dpnotes.rng", "dpnotes.validation"} <= set(
            hashed
        ), name
    assert "dpnotes.mechanisms" in get_experiment("strat_synth").code_digests()


def test_the_run_cache_key_covers_the_imported_code():
    from dpnotes.experiments import dpsgd_f

    config = get_experiment("dpsgdf_main").config("smoke")
    key = dpsgd_f.run_key(
        config,
        dataset="adult",
        method="dpsgd",
        seed=0,
        settings=config["datasets"]["adult"],
    )
    assert {"dpnotes.dpsgd.train", "dpnotes.accounting", "dpnotes.rng"} <= set(
        key["code"]
    )


def test_relative_imports_are_resolved(tmp_path):
    src = tmp_path / "fake.py"
    src.write_text(
        "from .base import Synthesizer\n"
        "from . import mst\n"
        "from ..validation import check_int\n"
        "import numpy as np\n"
        "def f():\n"
        "    from dpnotes.rng import check_rng\n"
    )
    found = reg._parse_imports("dpnotes.synth.fake", str(src), 0, 0)
    assert found == {
        "dpnotes.synth.base",
        "dpnotes.synth.mst",
        "dpnotes.validation",
        "dpnotes.rng",
    }


def _redirect(monkeypatch, module, tmp_path, edit):
    """Make ``module``'s source read from a copy changed by ``edit(text)``."""
    original = reg._module_file(module)
    copy = tmp_path / Path(original).name
    copy.write_text(edit(original.read_text(encoding="utf-8")), encoding="utf-8")
    real = reg._module_file
    monkeypatch.setattr(
        reg, "_module_file", lambda name: copy if name == module else real(name)
    )


def test_a_code_change_in_an_imported_module_changes_the_hash(monkeypatch, tmp_path):
    e = get_experiment("strat_synth")
    before = e.code_digest()
    _redirect(monkeypatch, "dpnotes.mechanisms", tmp_path, lambda t: t + "\nX = 1\n")
    assert e.code_digest() != before


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace('"""', '"""Reworded. ', 1),  # the module docstring
        lambda t: t.replace("\n\n", "\n\n# a new comment line\n\n\n", 3),
        lambda t: t.replace("\n", "   \n"),  # trailing whitespace everywhere
    ],
    ids=["docstring", "comments-and-blank-lines", "trailing-whitespace"],
)
def test_docstrings_and_comments_do_not_change_the_hash(monkeypatch, tmp_path, edit):
    e = get_experiment("strat_synth")
    before = e.code_digest()
    _redirect(monkeypatch, "dpnotes.mechanisms", tmp_path, edit)
    assert reg._module_file("dpnotes.mechanisms").parent == tmp_path
    assert e.code_digest() == before


def test_normalized_source_drops_documentation_only():
    code = (
        '"""Module docstring,\n\nover lines."""\n'
        "\n"
        "# a comment line\n"
        "import math  # kept: on a code line\n"
        "\n"
        "\n"
        "class A:\n"
        "    'Class docstring (ε ≥ 0).'\n"
        "    x = 1\n"
        "    'attribute docstring'\n"
        "\n"
        "    def f(self):   \n"
        '        """Say ε."""; return "ε"\n'
    )
    assert normalized_source(code) == (
        "import math  # kept: on a code line\n"
        "class A:\n"
        "    x = 1\n"
        "    def f(self):\n"
        '        ; return "ε"'
    )


def test_normalized_source_keeps_every_string_value_verbatim():
    # Blank lines, "#" lines and trailing spaces inside a multi-line string are part
    # of a value, as is a string that is an argument or an f-string statement.
    code = (
        "TEMPLATE = '''first   \n"
        "\n"
        "# not a comment\n"
        "last'''\n"
        "print('''a\n"
        "\n"
        "b''')\n"
        'f"{print(1)}"\n'
    )
    assert normalized_source(code) == code.rstrip("\n")
    changed = code.replace("# not a comment", "# not a comment!")
    assert normalized_source(changed) != normalized_source(code)
    spaced = code.replace("first   ", "first")
    assert normalized_source(spaced) != normalized_source(code)


def test_literals_concatenated_over_lines_are_code_lines():
    code = 'MSG = (\n    "one "  \n    # why\n    f"two {1}"\n)\nS = "a\\\nb"\n'
    assert (
        normalized_source(code)
        == 'MSG = (\n    "one "\n    f"two {1}"\n)\nS = "a\\\nb"'
    )


def test_normalized_source_sees_code_changes():
    a = "def f(x):\n    'Doc.'\n    return x + 1\n"
    for changed in (
        "def f(x):\n    'Doc.'\n    return x + 2\n",
        "def f(x):\n    'Doc.'\n    if x:\n        return x + 1\n",
        "def f(x):\n  'Doc.'\n  return x + 1\n",  # indentation is code in Python
    ):
        assert normalized_source(changed) != normalized_source(a)


def test_hashing_imports_no_heavy_dependency():
    # Locating modules by path keeps a census chapter from importing torch (about
    # ten seconds cold) only to check whether its stored result is current.
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from dpnotes.experiments import config_hash, list_experiments\n"
        "for e in list_experiments():\n"
        "    config_hash(e, 'paper')\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"
