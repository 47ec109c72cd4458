"""Tests for the stratified wrapper, the ACSEmployment codes and the group metrics."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd
import pytest

from dpnotes.data.employment import (
    EMPLOYMENT_COLUMNS,
    EMPLOYMENT_DOMAIN,
    encode_employment,
)
from dpnotes.metrics import classifier_group_metrics, max_mean_disparity
from dpnotes.synth import MST, Stratified, strata_of, stratum_weights
from dpnotes.synth.base import Synthesizer
from dpnotes.synth.codebook import Codebook
from dpnotes.synth.stratified import largest_remainder

DOMAIN = {"G": 3, "A": 2, "B": 3}


class Recorder(Synthesizer):
    """A stand-in synthesizer that records what it was fitted on (no privacy cost)."""

    fitted: ClassVar[list] = []

    def _fit(self, data, domain, rng):
        Recorder.fitted.append((len(data), dict(domain)))
        self.accountant_.spend(self.rho, "everything")
        self.value_ = int(data["A"].sum() > 0) if len(data) else 0

    def _sample(self, n, rng):
        return {a: np.full(n, self.value_ if a == "A" else 0) for a in self.domain_}


def make_data(n=600, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(2, size=n, p=[0.7, 0.3])  # stratum 2 is empty on purpose
    return pd.DataFrame(
        {"G": g, "A": (g == 1).astype(int), "B": rng.integers(0, 3, size=n)}
    )


def test_strata_are_the_public_product_and_weights_from_a_holdout() -> None:
    assert strata_of(DOMAIN, ["G"]) == [(0,), (1,), (2,)]
    w = stratum_weights(make_data(1000, seed=1), DOMAIN, ["G"])
    assert set(w) == {(0,), (1,), (2,)}
    assert w[(2,)] == 0.0
    assert sum(w.values()) == pytest.approx(1.0)
    assert w[(0,)] == pytest.approx(0.7, abs=0.05)


def test_every_stratum_is_fitted_even_an_empty_one() -> None:
    Recorder.fitted = []
    data = make_data()
    model = Stratified(Recorder(epsilon=1.0, delta=1e-6), "G", [0.5, 0.3, 0.2])
    model.fit(data, DOMAIN, rng=np.random.default_rng(0))
    sizes = [n for n, _ in Recorder.fitted]
    assert len(sizes) == 3 and sizes[2] == 0
    assert sum(sizes) == len(data)
    # The stratifying attribute is constant inside a stratum and is not modelled.
    assert all(dom == {"A": 2, "B": 3} for _, dom in Recorder.fitted)
    assert model.rho_spent == pytest.approx(model.base.rho)


def test_sample_sizes_follow_the_weights_and_strata_are_written_back() -> None:
    data = make_data()
    model = Stratified(
        Recorder(epsilon=1.0, delta=1e-6), ["G"], {0: 0.5, 1: 0.3, 2: 0.2}
    )
    model.fit(data, DOMAIN, rng=np.random.default_rng(0))
    out = model.sample(1001, rng=np.random.default_rng(1))
    assert list(out.columns) == list(DOMAIN)
    counts = out["G"].value_counts().to_dict()
    assert counts == {0: 501, 1: 300, 2: 200}
    # Stratum 1 has A == 1 for every record, stratum 0 never.
    assert (out.loc[out.G == 1, "A"] == 1).all() and (
        out.loc[out.G == 0, "A"] == 0
    ).all()


CODEBOOK = Codebook(
    categories={"G": ["F", "M", "X"], "A": ["no", "yes"], "B": ["lo", "mid", "hi"]}
)
BINNED = Codebook(categories={"G": ["F", "M", "X"]}, bins={"B": [0, 1, 2, 3]})


def test_weights_keyed_by_labels_through_the_codebook() -> None:
    data = make_data()
    by_labels = Stratified(
        Recorder(epsilon=1.0, delta=1e-6), "G", {"F": 0.5, "M": 0.3, "X": 0.2},
        codebook=CODEBOOK,
    )  # fmt: skip
    by_codes = Stratified(
        Recorder(epsilon=1.0, delta=1e-6), "G", {(0,): 0.5, (1,): 0.3, (2,): 0.2}
    )
    for m in (by_labels, by_codes):
        m.fit(data, DOMAIN, rng=np.random.default_rng(0))
    assert np.array_equal(by_labels.weights_, by_codes.weights_)
    two = Stratified(
        Recorder(epsilon=1.0, delta=1e-6), ["G", "B"],
        {(g, b): 1 / 9 for g in ("F", "M", "X") for b in ("lo", "mid", "hi")},
        codebook=CODEBOOK,
    )  # fmt: skip
    two.fit(data, DOMAIN, rng=np.random.default_rng(0))
    assert two.weights_ == pytest.approx(np.full(9, 1 / 9))


@pytest.mark.parametrize(
    ("by", "weights", "codebook", "error", "match"),
    [
        ("G", {"F": 0.5, "M": 0.3, "X": 0.2}, None, TypeError, "pass codebook="),
        ("G", {"F": 0.5, "M": 0.3, "Z": 0.2}, CODEBOOK, ValueError, "does not list"),
        ("G", {("F", "no"): 1.0}, CODEBOOK, ValueError, "2 part"),
        ("B", {0: 0.5, 1: 0.3, 2: 0.2}, BINNED, ValueError, "bin code"),
    ],
)
def test_label_weights_without_or_beyond_the_codebook_are_clear_errors(
    by, weights, codebook, error, match
) -> None:
    model = Stratified(MST(epsilon=1.0, delta=1e-6), by, weights, codebook=codebook)
    with pytest.raises(error, match=match):
        model.fit(make_data(), DOMAIN, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="Codebook"):
        Stratified(MST(epsilon=1.0, delta=1e-6), "G", [1, 0, 0], codebook={"G": []})


def test_largest_remainder_sums_to_n() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        w = rng.dirichlet(np.ones(7))
        n = int(rng.integers(1, 500))
        counts = largest_remainder(n, w)
        assert counts.sum() == n and np.all(np.abs(counts - n * w) < 1)


@pytest.mark.parametrize(
    ("by", "weights", "match"),
    [
        ("X", [1.0], "not in the domain"),
        (["G", "G"], [1.0] * 9, "twice"),
        (["G", "A", "B"], [1.0], "every attribute"),
        ("G", [0.5, 0.5], "3 strata"),
        ("G", [0.5, 0.3, 0.3], "sum to 1"),
        ("G", {0: 0.5, 1: 0.5}, "missing"),
        ("G", {0: 0.5, 1: 0.3, 2: 0.2, 7: 0.0}, "unknown"),
        ("G", [0.5, np.nan, 0.5], "NaN"),
    ],
)
def test_bad_strata_and_weights_are_clear_errors(by, weights, match) -> None:
    model = Stratified(MST(epsilon=1.0, delta=1e-6), by, weights)
    with pytest.raises(ValueError, match=match):
        model.fit(make_data(), DOMAIN, rng=np.random.default_rng(0))


def test_base_must_be_a_synthesizer_and_sample_needs_fit() -> None:
    with pytest.raises(TypeError, match="unfitted synthesizer"):
        Stratified("MST", "G", [1 / 3] * 3)
    model = Stratified(MST(epsilon=1.0, delta=1e-6), "G", [1 / 3] * 3)
    with pytest.raises(RuntimeError, match="not fitted"):
        model.sample(10, rng=np.random.default_rng(0))


def test_stratified_mst_is_deterministic_and_spends_its_budget() -> None:
    data = make_data(400)
    outs = []
    for _ in range(2):
        m = Stratified(MST(epsilon=2.0, delta=1e-6), "G", [0.6, 0.3, 0.1])
        m.fit(data, DOMAIN, rng=np.random.default_rng(5))
        outs.append(m.sample(300, rng=np.random.default_rng(6)))
        assert m.rho_spent == pytest.approx(m.base.rho, rel=1e-9)
    pd.testing.assert_frame_equal(outs[0], outs[1])
    with pytest.raises(ValueError, match="n must be"):
        m.sample(0, rng=np.random.default_rng(0))


def test_employment_codes_follow_the_public_codebook() -> None:
    raw = pd.DataFrame(
        {
            "AGEP": [17, 31, 32, 89],
            "SCHL": [1, 5, 6, 24],
            "MAR": [1, 2, 5, 3],
            "DIS": [1, 2, 2, 1],
            "ESP": [0, 8, 1, 0],
            "MIL": [np.nan, 4, 0, -1],
            "DREM": [0, 1, 2, np.nan],
            "SEX": [1, 2, 1, 2],
            "RAC1P": [1, 9, 2, 6],
            "ESR": [True, False, True, False],
        }
    )
    codes = encode_employment(raw)
    assert list(codes.columns) == list(EMPLOYMENT_COLUMNS)
    assert codes.AGEP.tolist() == [0, 0, 1, 4]  # bins (17, 31.4], (31.4, 45.8] ...
    assert codes.SCHL.tolist() == [0, 0, 1, 4]
    assert codes.MIL.tolist() == [0, 4, 0, 0]
    assert codes.DREM.tolist() == [0, 1, 2, 0]
    assert codes.RAC1P.tolist() == [0, 8, 1, 5]
    assert codes.ESR.tolist() == [1, 0, 1, 0]
    for attr, size in EMPLOYMENT_DOMAIN.items():
        assert codes[attr].between(0, size - 1).all()


@pytest.mark.parametrize(
    ("column", "value", "match"),
    [("AGEP", 12, "public range"), ("MAR", 7, "codebook"), ("RAC1P", 0, "codebook")],
)
def test_employment_values_outside_the_codebook_are_errors(column, value, match):
    raw = pd.DataFrame({c: [1] for c in EMPLOYMENT_COLUMNS}).assign(AGEP=40, ESR=1)
    raw[column] = value
    with pytest.raises(ValueError, match=match):
        encode_employment(raw)
    with pytest.raises(ValueError, match="lacks column"):
        encode_employment(raw.drop(columns=["SEX"]))


def test_group_metrics_use_fairlearn_definitions() -> None:
    y = np.array([1, 1, 0, 0, 1, 1, 0, 0])
    p = np.array([1, 0, 0, 0, 1, 1, 1, 0])
    g = np.array(["a"] * 4 + ["b"] * 4)
    res = classifier_group_metrics(y, p, g)
    assert res["accuracy"] == pytest.approx(6 / 8)
    assert res["accuracy_by_group"] == {"a": 0.75, "b": 0.75}
    # Selection rates 1/4 and 3/4; false-negative rates 1/2 and 0.
    assert res["demographic_parity_difference"] == pytest.approx(0.5)
    assert res["demographic_parity_ratio"] == pytest.approx(1 / 3)
    assert res["fnr_difference"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="equal length"):
        classifier_group_metrics(y, p[:3], g)
    assert max_mean_disparity(np.array([0.0, 1.0, 1.0]), np.array([0, 1, 1])) == 1.0
