"""The readings of "x% better than the worst case" for the stratified mean's error."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpnotes import bounds
from dpnotes.worst_case_gain import gain_of_alpha, gain_of_sizes


def test_gain_of_alpha_reads_the_closed_form_three_ways():
    k, n, alpha = 9, 196_967, 0.13
    g = gain_of_alpha(alpha, k, n)
    w, b = k * math.log(n / k), (k - 1) + math.log(n - k)
    e = bounds.expected_log_size_sum(alpha, k, n)
    assert (g.worst, g.best, g.value) == pytest.approx((w, b, e))
    assert g.between == pytest.approx((w - e) / (w - b))
    assert g.ratio == pytest.approx(1 - e / w)
    assert g.sqrt == pytest.approx(1 - math.sqrt(e / w))
    # The paper's example: about 72%, 56% and 33%, not 80%, under the three readings.
    assert (round(g.between, 2), round(g.ratio, 2), round(g.sqrt, 2)) == (
        0.72,
        0.56,
        0.33,
    )


def test_equal_groups_gain_nothing_and_large_alpha_approaches_them():
    assert gain_of_sizes([100, 100, 100]).between == pytest.approx(0.0, abs=1e-12)
    assert gain_of_alpha(1e6, 3, 300).between == pytest.approx(0.0, abs=1e-3)
    # Smaller alpha: sparser shares, a smaller expected sum, a larger gain.
    gains = [gain_of_alpha(a, 9, 10_000).between for a in (10.0, 1.0, 0.3, 0.1)]
    assert gains == sorted(gains)


def test_the_maximum_likelihood_alpha_matches_the_observed_sum():
    # The MLE solves psi(a) - psi(k a) = mean log p: E equals the observed sum.
    sizes = np.array([138474, 24024, 17030, 10964, 5646, 508, 244, 72, 5])
    alpha = bounds.fit_dirichlet_alpha(sizes)
    n = float(sizes.sum())
    assert gain_of_alpha(alpha, 9, n).value == pytest.approx(gain_of_sizes(sizes).value)


def test_gain_of_sizes_rescales_to_n():
    g = gain_of_sizes([30, 10], n=400)
    assert g.n == 400 and g.value == pytest.approx(math.log(300) + math.log(100))


@pytest.mark.parametrize(
    ("sizes", "match"),
    [([5], "k >= 2"), ([[1, 2], [3, 4]], "k >= 2"), ([0, 5], "at least 1")],
)
def test_gain_of_sizes_refuses_bad_sizes(sizes, match):
    with pytest.raises(ValueError, match=match):
        gain_of_sizes(sizes)


def test_gain_of_alpha_refuses_bad_settings():
    with pytest.raises(ValueError):
        gain_of_alpha(0.0, 3, 100)
    with pytest.raises(ValueError):
        gain_of_alpha(0.5, 3, 3)
    with pytest.raises(ValueError):
        gain_of_sizes([1, 2], n=-1.0)
