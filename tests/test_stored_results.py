"""The committed results are trusted, current and cite a commit that exists.

A stored result is evidence only while the code behind it is unchanged. A change to
that code must either restamp the result (``python -m dpnotes restamp``: recompute a
sample of cells and compare) or recompute it; this test fails until one of the two is
done, so a stale figure never lands.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from dpnotes.lab import config_hash, inspect_result, list_experiments, result_folder
from dpnotes.lab.registry import PROFILES
from dpnotes.lab.store import stored_seeds

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "book" / "_results"

STORED = [
    (exp, profile, seed)
    for exp in list_experiments()
    for profile in PROFILES
    for seed in stored_seeds(RESULTS, exp.name, profile)
]


def test_there_are_stored_results():
    assert len(STORED) >= 20


@pytest.mark.parametrize(
    ("exp", "profile", "seed"),
    STORED,
    ids=[f"{e.name}-{p}-{s}" for e, p, s in STORED],
)
def test_stored_result_is_trusted_current_and_committed(exp, profile, seed):
    folder = result_folder(RESULTS, exp.name, profile, seed)
    result, why = inspect_result(folder, experiment=exp.name, profile=profile)
    assert result is not None, f"damaged: {why}"
    assert result.config_hash == config_hash(exp, profile), (
        f"stale: restamp it (python -m dpnotes restamp {exp.name} --profile "
        f"{profile}) or recompute it"
    )
    version = str(result.meta.get("code_version", ""))
    assert not version.endswith(".dirty"), "computed by uncommitted code"
    commit = version.rpartition("+g")[2]
    if (ROOT / ".git").exists() and commit:
        # A shallow clone may lack old commits; only a full history can tell.
        shallow = (ROOT / ".git" / "shallow").exists()
        found = subprocess.run(
            ["git", "-C", str(ROOT), "cat-file", "-e", f"{commit}^{{commit}}"],
            capture_output=True,
        )
        assert shallow or found.returncode == 0, f"commit {commit} does not exist"
