"""Input checks raise errors that say what to do."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpnotes import validation as v


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf")])
def test_epsilon_must_be_positive_and_finite(bad):
    with pytest.raises(ValueError, match="positive, finite privacy budget"):
        v.check_epsilon(bad)


def test_epsilon_type_and_good_value():
    assert v.check_epsilon(np.float32(0.5)) == 0.5
    with pytest.raises(TypeError):
        v.check_epsilon("1")
    with pytest.raises(TypeError):
        v.check_epsilon(True)


@pytest.mark.parametrize("bad", [0, 1, -1e-9, 1.5, float("nan")])
def test_delta_must_be_in_open_unit_interval(bad):
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        v.check_delta(bad)
    assert v.check_delta(1e-9) == 1e-9


def test_rho_and_positive_and_probability_and_int():
    with pytest.raises(ValueError, match="zCDP"):
        v.check_rho(0)
    with pytest.raises(ValueError):
        v.check_positive(-2, "scale")
    assert v.check_positive(float("inf"), "scale", allow_inf=True) == float("inf")
    assert v.check_probability(1.0, "q", closed_right=True) == 1.0
    with pytest.raises(ValueError, match=r"\(0, 1\)"):
        v.check_probability(1.0, "q")
    with pytest.raises(TypeError):
        v.check_int(2.0, "k")
    with pytest.raises(ValueError, match="at least 1"):
        v.check_int(0, "k", minimum=1)


def test_bounds():
    assert v.check_bounds(0, 1) == (0.0, 1.0)
    with pytest.raises(ValueError, match="smaller than upper"):
        v.check_bounds(1, 1)
    with pytest.raises(ValueError, match="domain knowledge"):
        v.check_bounds(0, float("inf"))


def test_array_rejects_nan_inf_empty_and_wrong_shape():
    with pytest.raises(ValueError, match="1 NaN and 1 infinite"):
        v.check_array([1.0, np.nan, np.inf])
    with pytest.raises(ValueError, match="empty"):
        v.check_array([])
    assert v.check_array([], allow_empty=True).size == 0
    with pytest.raises(ValueError, match="1-dimensional"):
        v.check_array([[1.0]], ndim=1)
    with pytest.raises(TypeError, match="numeric"):
        v.check_array(["a", "b"])


def test_weights_must_be_a_distribution():
    np.testing.assert_allclose(v.check_weights([0.25, 0.75], 2), [0.25, 0.75])
    with pytest.raises(ValueError, match="sum to 1"):
        v.check_weights([0.5, 0.6])
    with pytest.raises(ValueError, match="non-negative"):
        v.check_weights([1.5, -0.5])
    with pytest.raises(ValueError, match="3 groups"):
        v.check_weights([0.5, 0.5], 3)


def test_choice_columns_groups():
    assert v.check_choice("NM", ["NM", "NY"], "state") == "NM"
    with pytest.raises(ValueError, match="unknown state 'XX'; choose one of"):
        v.check_choice("XX", ["NM", "NY"], "state")
    frame = pd.DataFrame({"a": [1], "b": [2]})
    v.check_columns(frame, ["a"])
    with pytest.raises(ValueError, match=r"missing column\(s\) \['c'\]"):
        v.check_columns(frame, ["a", "c"])
    np.testing.assert_array_equal(v.check_groups([1, 2, 1], [1, 2, 3]), [1, 2, 1])
    with pytest.raises(ValueError, match="not in the public list"):
        v.check_groups([1, 4], [1, 2, 3])
    with pytest.raises(ValueError, match="duplicates"):
        v.check_groups([1], [1, 1])


def test_check_width_scale_result() -> None:
    assert v.check_width(-1e150, 1e150) == 2e150
    with pytest.raises(ValueError, match=r"width 2.00e\+308.*narrower public bounds"):
        v.check_width(-1e308, 1e308)
    with pytest.raises(ValueError, match="narrower public bounds"):
        v.check_width(np.array([0.0, -1e308]), 1e308)
    assert v.check_scale(1e-300, "s", advice="a") == 1e-300
    with pytest.raises(ValueError, match=r"the s overflows \(inf\).*; do this"):
        v.check_scale(np.inf, "s", advice="do this")
    with pytest.raises(ValueError, match=r"the s underflows to 0.*; do this"):
        v.check_scale(np.array([1.0, 0.0]), "s", advice="do this")
    with pytest.raises(ValueError, match=r"the r is not finite.*; do this"):
        v.check_result(np.nan, "r", advice="do this")


def test_check_workload() -> None:
    assert v.check_workload(None) is None
    assert v.check_workload([["A", "B"], ("C",)]) == [("A", "B"), ("C",)]
    with pytest.raises(TypeError, match=r"write \('SEX',\)"):
        v.check_workload(["SEX"])
    with pytest.raises(TypeError, match="list of cliques"):
        v.check_workload("SEX")
    with pytest.raises(ValueError, match="empty clique"):
        v.check_workload([("A",), ()])
