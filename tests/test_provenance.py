"""Which code a stored result's config hash covers: the import closure, normalised."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpnotes.lab import fingerprint as reg
from dpnotes.lab import get_experiment, list_experiments
from dpnotes.lab.fingerprint import normalized_source


def test_closure_follows_imports_transitively():
    # stratified_mean imports dpnotes.mean, which imports validation and rng.
    closure = reg.import_closure(["dpnotes.experiments.stratified_mean"])
    assert {"dpnotes.mean", "dpnotes.validation", "dpnotes.rng"} <= closure
    hashed = get_experiment("strat_mean_census").code_digests()
    assert {"dpnotes.validation", "dpnotes.rng", "dpnotes.accounting"} <= set(hashed)
    # A package in ``names`` stands for all of its modules.
    assert {"dpnotes.synth.gem", "dpnotes.synth.mst"} <= reg.import_closure(
        ["dpnotes.synth"]
    )
    # Infrastructure stays out of the hash.
    assert not {m for m in hashed if m.startswith("dpnotes.lab")}
    assert "dpnotes.experiments" not in hashed


def test_every_experiment_hashes_what_it_imports():
    for e in list_experiments():
        hashed = set(e.code_digests())
        assert e.module in hashed, e.name
        closure = reg.import_closure([e.module])
        assert {m for m in closure if not reg.is_infrastructure(m)} == hashed, e.name
    # The helpers the long-running experiments call through other modules.
    for name in ("strat_synth", "dpsgdf_main", "dpsgdf_clip", "dpsgdf_budget"):
        hashed = get_experiment(name).code_digests()
        assert {"dpnotes.accounting", "dpnotes.rng", "dpnotes.validation"} <= set(
            hashed
        ), name
    assert "dpnotes.mechanisms" in get_experiment("strat_synth").code_digests()


def test_the_run_cache_key_covers_the_imported_code(tmp_path):
    import json

    import pandas as pd

    from dpnotes.lab import RunCache

    cache = RunCache(tmp_path)
    table = pd.DataFrame({"x": [1]})
    cache.table("ns", {"k": 1}, lambda: table, code=("dpnotes.experiments.dpsgd_f",))
    (meta,) = [json.loads(p.read_text()) for p in tmp_path.glob("ns/*/meta.json")]
    assert {"dpnotes.dpsgd.loop", "dpnotes.accounting", "dpnotes.rng"} <= set(
        meta["key"]["code"]
    )
    # Without code, another entry: the code is part of the key.
    cache.table("ns", {"k": 1}, lambda: table)
    assert len(list(tmp_path.glob("ns/*/meta.json"))) == 2


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
        "from dpnotes.lab import config_hash, list_experiments\n"
        "for e in list_experiments():\n"
        "    config_hash(e, 'paper')\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def _other_pythons() -> dict[str, str]:
    """Return ``{"3.X": path}`` for supported interpreters other than this one."""
    import glob
    import os
    import shutil
    import subprocess
    import sys

    found: dict[str, str] = {}
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [shutil.which(f"python3.{m}") for m in range(10, 15)]
    candidates += sorted(
        glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3"))
    )
    for path in filter(None, candidates):
        try:
            out = subprocess.run(
                [path, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        version = out.stdout.strip()
        # A pyenv shim of an inactive version fails; 3.9 and older cannot run dpnotes.
        if (
            out.returncode == 0
            and version != here
            and tuple(map(int, version.split("."))) >= (3, 10)
        ):
            found.setdefault(version, path)
    return found


# Sources whose ast positions changed between Python versions (f-strings are parsed
# by the tokenizer since 3.12) or that need the byte-to-character column conversion.
_TRICKY_SOURCES = [
    'x = f"""a\n# not a comment\n\n{1 + 1}"""\n',
    'def f():\n    f"""Not a docstring: {1}."""\n    return f"{x!r:>{w}}" f"b"\n',
    's = ("é" + "ü")  ;  "doc"  # é\ny = 1\n',
    "b = b'''raw\n  bytes'''\nc = f'{\"q\"}' \\\n    'd'\n",
    'y = (f"a"  \n     # why\n     f"{b}")\n',
    'class A:\n    "Doc é."\n\n    def g(self):  # ü\n        return rf"\\d{{2}}"\n',
]


@pytest.mark.slow
def test_digests_agree_across_python_versions():
    # A result stored on this machine (Python 3.11) must stay current where the book
    # is rebuilt on another supported Python (Colab's, say): every module's digest is
    # computed again there and compared. The function is run from its own source, so
    # the check needs no dependency installed in the other interpreter.
    import hashlib
    import inspect
    import json
    import subprocess

    pythons = _other_pythons()
    if not pythons:
        pytest.skip("no other Python 3.10+ interpreter on this machine")
    files = sorted(str(p) for p in Path(reg.__file__).parents[1].rglob("*.py"))
    script = (
        "import ast, hashlib, json, re, sys\n"
        f"_NEWLINE = re.compile({reg._NEWLINE.pattern!r})\n"
        f"_SPANS_LINES = re.compile({reg._SPANS_LINES.pattern!r})\n"
        + inspect.getsource(normalized_source)
        + "files, snippets = json.loads(sys.stdin.read())\n"
        "out = [hashlib.sha256(normalized_source(open(f, encoding='utf-8').read())"
        ".encode()).hexdigest() for f in files]\n"
        "print(json.dumps([out, [normalized_source(s) for s in snippets]]))\n"
    )
    here = [
        [
            hashlib.sha256(normalized_source(Path(f).read_text()).encode()).hexdigest()
            for f in files
        ],
        [normalized_source(s) for s in _TRICKY_SOURCES],
    ]
    assert len(files) > 30
    for version, path in pythons.items():
        out = subprocess.run(
            [path, "-c", script],
            input=json.dumps([files, _TRICKY_SOURCES]),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, (version, out.stderr)
        there = json.loads(out.stdout)
        assert there[1] == here[1], version
        differ = [f for f, a, b in zip(files, here[0], there[0], strict=True) if a != b]
        assert not differ, f"Python {version} digests differ for {differ}"
