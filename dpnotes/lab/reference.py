"""The code that computed a stored result, run again on this machine.

A stored result computed on another CPU cannot be recomputed bit for bit here, even by
the same code: floating-point sums come out differently in their last digits, and a long
training run (60 epochs of DP-SGD on MNIST) carries those differences into its
accuracies. To show that a refactor moved no number, :func:`dpnotes.lab.restamp`
(``--reference``) then compares the current code with the *reference* code, the commit
that computed the result, both run here on the same cells: that comparison is exact.
The reference is checked out with ``git worktree`` and run in a subprocess with its own
``dpnotes`` first on the path; its module digests must equal those the stored result
recorded, so the reference is provably the code that computed it.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["reference_commit", "reference_rows", "reference_tree"]

#: The repository that holds this package (where ``git worktree`` runs).
_REPOSITORY = Path(__file__).resolve().parents[2]

# Runs one cell with whichever runner API the reference commit has: the lab's
# ``run_cell`` or, before the lab existed, ``dpnotes.experiments.runner._run_one``
# (whose caller added the cell's keys as columns).
_SCRIPT = r"""
import json, os, sys
# Only the reference's own modules: an editable install of the current checkout would
# otherwise answer for the subpackages that the reference lacks.
sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
args = json.load(sys.stdin)
cell = args["cell"]
if os.path.exists(os.path.join(args["tree"], "dpnotes", "lab", "runner.py")):
    from dpnotes.lab import get_experiment
    from dpnotes.lab.runner import run_cell
    rows = run_cell(args["name"], args["profile"], args["seed"], cell, cache=None)
else:
    from dpnotes.experiments import get_experiment
    from dpnotes.experiments.runner import _run_one
    rows = _run_one(args["name"], args["profile"], args["seed"], cell)
    for key, value in reversed(list(cell.items())):
        if key not in rows.columns:
            rows.insert(0, key, value if not isinstance(value, list) else str(value))
import dpnotes
text = rows.to_csv(index=False, float_format="%.10g", lineterminator="\n")
digests = get_experiment(args["name"]).code_digests()
json.dump({"csv": text, "digests": digests, "file": dpnotes.__file__}, sys.stdout)
"""


def reference_commit(code_version: str) -> str:
    """Return the commit of a stored ``code_version`` (``0.1.0+g<commit>[.dirty]``).

    Raises:
        ValueError: If the version names no commit.
    """
    commit = code_version.rpartition("+g")[2].removesuffix(".dirty")
    if "+g" not in code_version or not commit:
        raise ValueError(
            f"code version {code_version!r} names no git commit to run as the "
            "reference; pass one with --reference COMMIT."
        )
    return commit


@contextlib.contextmanager
def reference_tree(commit: str) -> Iterator[Path]:
    """Check out ``commit`` into a temporary worktree; yield its folder.

    Raises:
        ValueError: If git cannot check the commit out.
    """
    with tempfile.TemporaryDirectory(prefix="dpnotes-reference-") as folder:
        tree = Path(folder) / "tree"
        done = subprocess.run(
            ["git", "-C", str(_REPOSITORY), "worktree", "add", "--detach", str(tree),
             commit],
            capture_output=True,
            text=True,
        )  # fmt: skip
        if done.returncode != 0:
            raise ValueError(
                f"cannot check out the reference commit {commit!r}: "
                f"{done.stderr.strip()}"
            )
        try:
            yield tree
        finally:
            subprocess.run(
                ["git", "-C", str(_REPOSITORY), "worktree", "remove", "--force",
                 str(tree)],
                capture_output=True,
            )  # fmt: skip


def reference_rows(
    tree: Path, name: str, profile: str, seed: int, cell: Mapping[str, Any]
) -> tuple[pd.DataFrame, dict[str, str]]:
    """Compute one cell with the reference code in ``tree``, in a subprocess.

    Returns:
        The cell's rows (through their CSV form) and the reference's module digests
        for the experiment.

    Raises:
        RuntimeError: If the reference run fails (its error output is included).
    """
    env = {**os.environ, "PYTHONPATH": str(tree)}
    env.pop("DPNOTES_RUN_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        input=json.dumps(
            {
                "name": name,
                "profile": profile,
                "seed": seed,
                "cell": dict(cell),
                "tree": str(tree),
            }
        ),
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the reference run failed:\n{done.stderr[-3000:]}")
    out = json.loads(done.stdout)
    if not Path(out["file"]).resolve().is_relative_to(tree.resolve()):
        raise RuntimeError(
            f"the reference run imported dpnotes from {out['file']}, not from {tree}."
        )
    return pd.read_csv(io.StringIO(out["csv"])), dict(out["digests"])
