"""Read a stored result's table as the store does: by its meta.json, checked.

Findings tests run on the stored paper results. They read them through
:func:`dpnotes.lab.store.read_result`, never by a file name: a result's table may be
``results.csv``, ``results.1.csv`` or either compressed, and a table whose sha256 does
not match its ``meta.json`` must fail the test rather than be read.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

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
