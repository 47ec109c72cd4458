"""The foundations chapter's findings, on the stored results and on hand-made inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from stored_tables import stored_table

from dpnotes import accounting
from dpnotes import rng as dprng
from dpnotes.findings import foundations as f

RESULTS = Path(__file__).resolve().parents[1] / "book" / "_results"


def test_zcdp_conversion_the_tight_conversion_never_loses():
    t = f.zcdp_conversion(np.logspace(-4, 1, 60), (1e-5, 1e-9))
    assert len(t) == 120 and list(t.columns) == ["rho", "delta", "tight", "simple"]
    assert (t["simple"] >= t["tight"] - 1e-12).all()
    # the saving is largest at small rho (the chapter's reading of the figure)
    part = t[t["delta"] == 1e-5].sort_values("rho")
    ratio = (part["simple"] / part["tight"]).to_numpy()
    assert ratio[0] > ratio[-1] > 1
    row = t.iloc[0]
    assert row["tight"] == pytest.approx(accounting.rho_to_epsilon(row["rho"], 1e-5))
    with pytest.raises(ValueError):
        f.zcdp_conversion([], [1e-5])


def test_noise_comparison_and_its_crossover():
    nc = f.noise_comparison(epsilon=1.0, delta=1e-6)
    assert nc.crossover == 11 and f"{nc.sigma:.2f}" == "4.22"
    assert nc.laplace_scale == 1.0
    assert nc.sd_laplace[0] == pytest.approx(np.sqrt(2))
    # below the crossover Laplace is smaller, from it on the Gaussian
    k = nc.crossover
    assert (nc.sd_gauss[: k - 1] >= nc.sd_laplace[: k - 1]).all()
    assert (nc.sd_gauss[k - 1 :] < nc.sd_laplace[k - 1 :]).all()
    # one release only: the Gaussian never wins
    assert f.noise_comparison(epsilon=1.0, delta=1e-6, ks=[1]).crossover is None
    with pytest.raises(ValueError, match="at least 1"):
        f.noise_comparison(epsilon=1.0, delta=1e-6, ks=[0, 1])
    with pytest.raises(ValueError):
        f.noise_comparison(epsilon=1.0, delta=1e-6, ks=[])


def test_group_error_texts_on_the_stored_results():
    table = stored_table("dp_group_error", "paper")
    texts = f.group_error_texts(table)
    assert texts == {
        "smallest-group": "Other",
        "global-bias-small": "5.1",
        "ratio-small-large": "103",
    }


def _groups(maes, sizes=None):
    sizes = sizes or {"big": 100, "small": 10}
    rows = [
        {"strategy": s, "epsilon": 1.0, "group": g, "group_size": sizes[g], "mae": m}
        for (s, g), m in maes.items()
    ]
    return pd.DataFrame(rows)


def test_group_error_texts_on_hand_made_tables():
    maes = {
        ("global", "big"): 0.1,
        ("global", "small"): 2.0,
        ("per-group (parallel)", "big"): 0.05,
        ("per-group (parallel)", "small"): 0.5,
    }
    texts = f.group_error_texts(_groups(maes))
    assert texts == {
        "smallest-group": "small",
        "global-bias-small": "2.0",
        "ratio-small-large": "10",
    }
    table = _groups(maes)
    with pytest.raises(ValueError, match="epsilon = 2"):
        f.group_error_texts(table, epsilon=2.0)
    with pytest.raises(ValueError, match="'mae'"):
        f.group_error_texts(table.drop(columns="mae"))
    no_global = table[table["strategy"] != "global"]
    with pytest.raises(ValueError, match="global"):
        f.group_error_texts(no_global)


def test_audit_catches_the_broken_variant():
    t = f.audit_laplace((0.5, 1.0), trials=100_000, rng=dprng.as_generator(2024))
    assert list(t["variant"]) == ["correct", "broken: half the noise"] * 2
    correct = t[t["variant"] == "correct"]
    broken = t[t["variant"] != "correct"]
    # the correct mechanism stays below its claim, the broken one exceeds it
    assert (correct["audited lower bound on ε"] <= correct["claimed ε"]).all()
    assert (broken["audited lower bound on ε"] > broken["claimed ε"]).all()
    again = f.audit_laplace((0.5, 1.0), trials=100_000, rng=dprng.as_generator(2024))
    pd.testing.assert_frame_equal(t, again)  # seeded: the same table
