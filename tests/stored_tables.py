"""Read a stored result's table as the store does: by its meta.json, checked.

Findings tests run on the stored paper results. They read them through
:func:`dpnotes.lab.store.read_result`, never by a file name: a result's table may be
``results.csv``, ``results.1.csv`` or either compressed, and a table whose sha256 does
not match its ``meta.json`` must fail the test rather than be read.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dpnotes.lab.combine import complete_seeds
from dpnotes.lab.store import StoredResult, read_result

RESULTS = Path(__file__).resolve().parents[1] / "book" / "_results"


def stored_result(experiment: str, profile: str = "paper") -> StoredResult:
    """The trusted stored result of ``experiment``/``profile`` (root seed 0)."""
    result = read_result(
        RESULTS / experiment / profile, experiment=experiment, profile=profile
    )
    if result is None:
        raise FileNotFoundError(
            f"no trusted stored result of {experiment} [{profile}] under {RESULTS}."
        )
    return result


def stored_table(experiment: str, profile: str = "paper") -> pd.DataFrame:
    """The table of :func:`stored_result`."""
    return stored_result(experiment, profile).table


def whole_seeds_table(experiment: str, profile: str = "paper") -> pd.DataFrame:
    """The table of :func:`stored_result`, each data set cut to its complete seeds.

    Chapters read a partial paper result this way (``load_per_dataset``): a seed whose
    cells are only partly stored is left out until all of them are. Tests that check
    the chapters' numbers read the same rows, so a run storing part of a new seed
    leaves them unchanged.
    """
    result = stored_result(experiment, profile)
    table = result.table
    whole = {d: complete_seeds(result, d) for d in table["dataset"].unique()}
    pairs = zip(table["dataset"], table["seed"], strict=True)
    keep = [seed in whole[d] for d, seed in pairs]
    # The rows keep their order and index: for a complete result, the table itself.
    return table[keep]
