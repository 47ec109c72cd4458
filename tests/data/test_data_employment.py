"""ACSEmployment codes of the stratification paper's ten columns, on the real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpnotes.data.employment import EMPLOYMENT_DOMAIN, load_employment

pytestmark = pytest.mark.data


def test_new_york_sample_and_new_mexico(real_root: Path) -> None:
    ny = load_employment("NY-sample", root=real_root)
    assert ny.shape == (20000, 10)
    nm = load_employment("NM", root=real_root)
    assert len(nm) == 15458  # New Mexico 2018, ages 17 to 89
    for df in (ny, nm):
        for attr, size in EMPLOYMENT_DOMAIN.items():
            assert df[attr].between(0, size - 1).all()
    # Every race code occurs in New Mexico; the employment rate is plausible.
    assert nm["RAC1P"].nunique() == 9
    assert 0.4 < nm["ESR"].mean() < 0.7


def test_unknown_source_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown employment data source"):
        load_employment("ZZ")
