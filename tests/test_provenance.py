"""Which code a stored result's config hash covers: the import closure and its pins."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from dpnotes.experiments import get_experiment, list_experiments
from dpnotes.experiments import registry as reg

# Source digests of the modules that the experiments in
# ``registry._PREDATE_IMPORT_HASHING`` import but do not hash. Their stored paper
# results took hours to days of training, so their config hash was kept as it was
# when the import closure started to be hashed (for every other experiment). If this
# test fails, a module below changed, or such an experiment imports a new one:
#
# - if the change can alter what the experiment computes (a mechanism, a sampler, a
#   validation that rejects or rounds differently), remove the experiment's name from
#   ``_PREDATE_IMPORT_HASHING`` and recompute its results;
# - if it cannot (a docstring, an error message, a function the experiment does not
#   call), update the digest here, and say why in the commit message.
PINNED = {
    "dpnotes.accounting": (
        "55d451656ad4a9d816a48ec3ce3744842743ac4008470d166c564f637900eb29"
    ),
    "dpnotes.data._files": (
        "a6f21d44aea88e3643c57a9117431d998f44ec85738e9a8e4f21afc2f9b01ec4"
    ),
    "dpnotes.data.acs": (
        "6949e6996f001361565cf511817b2b4a2e23e5e3a1ab36193dbd2172f97240f2"
    ),
    "dpnotes.mechanisms": (
        "dc87bcce17331e5d3d20bb653870d6e0e297d44f36d5c3785cca29b5a1fde507"
    ),
    "dpnotes.rng": "fe928eefe7dd491da3f19bfc9e0755ce0bc9cefc83fced5f1d0c4cca9e098238",
    "dpnotes.validation": (
        "03f1ee7e4a071eb89e735998b372c426e029343962fa77cef3b23a49627b479a"
    ),
}


def test_legacy_experiments_are_registered():
    names = {e.name for e in list_experiments()}
    assert reg._PREDATE_IMPORT_HASHING <= names
    for name in reg._PREDATE_IMPORT_HASHING:
        assert not get_experiment(name).hash_imports


@pytest.mark.parametrize("name", sorted(reg._PREDATE_IMPORT_HASHING))
def test_unhashed_imports_of_legacy_experiments_are_pinned(name):
    unhashed = get_experiment(name).unhashed_imports()
    assert unhashed, "a legacy experiment with no unhashed import can leave the list"
    new = sorted(set(unhashed) - set(PINNED))
    assert not new, (
        f"{name} now imports {new} outside its config hash; see the comment on PINNED."
    )
    changed = sorted(m for m, digest in unhashed.items() if PINNED[m] != digest)
    assert not changed, (
        f"{changed} changed, but {name}'s stored results do not see it; see the "
        "comment on PINNED."
    )


def test_other_experiments_hash_their_whole_import_closure():
    for e in list_experiments():
        if e.name in reg._PREDATE_IMPORT_HASHING:
            continue
        assert e.hash_imports, e.name
        assert e.unhashed_imports() == {}


def test_closure_follows_imports_transitively():
    # stratified_mean imports dpnotes.mean, which imports validation and rng; none of
    # them is in the experiment's depends.
    closure = reg.import_closure(["dpnotes.experiments.stratified_mean"])
    assert {"dpnotes.mean", "dpnotes.validation", "dpnotes.rng"} <= closure
    hashed = get_experiment("strat_mean_census").hashed_imports()
    assert {"dpnotes.validation", "dpnotes.rng", "dpnotes.accounting"} <= set(hashed)
    # A package in ``names`` stands for all of its modules.
    assert {"dpnotes.synth.gem", "dpnotes.synth.mst"} <= reg.import_closure(
        ["dpnotes.synth"]
    )
    # Infrastructure stays out of the hash.
    assert "dpnotes.experiments.registry" not in hashed


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


def _redirect(monkeypatch, module, tmp_path):
    """Make ``module``'s source read from a changed copy."""
    original = reg._module_file(module)
    copy = tmp_path / Path(original).name
    copy.write_bytes(original.read_bytes() + b"\n# a change\n")
    real = reg._module_file
    monkeypatch.setattr(
        reg, "_module_file", lambda name: copy if name == module else real(name)
    )
    return hashlib.sha256(copy.read_bytes()).hexdigest()


def test_a_change_in_an_imported_module_changes_the_hash(monkeypatch, tmp_path):
    e = get_experiment("strat_mean_census")
    before = e.code_digest()
    digest = _redirect(monkeypatch, "dpnotes.validation", tmp_path)
    assert e.hashed_imports()["dpnotes.validation"] == digest
    assert e.code_digest() != before


def test_the_pins_catch_what_a_legacy_hash_misses(monkeypatch, tmp_path):
    e = get_experiment("strat_synth")
    before = e.code_digest()
    digest = _redirect(monkeypatch, "dpnotes.mechanisms", tmp_path)
    assert e.code_digest() == before  # the config hash does not see it ...
    assert (
        e.unhashed_imports()["dpnotes.mechanisms"]
        == digest
        != PINNED["dpnotes.mechanisms"]
    )  # ... so the pin test above would fail
