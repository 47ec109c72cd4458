"""Tests for dpnotes.synth.codebook and the synthesizers' refusal of label columns.

A :class:`Codebook` is a public specification: ordered labels per categorical column,
strictly increasing finite edges per binned column (bins ``[a, b)``, the last one
``[a, b]``). ``encode`` maps a user's DataFrame to the synthesizers' integer codes and
``decode`` maps sampled codes back; every bad input is refused with a message naming
the column and the offending value.
"""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnotes.synth import AIM, MST, Codebook, Stratified
from dpnotes.synth.domain import check_data

CB = Codebook(
    categories={"SEX": ["F", "M"], "RACE": ["A", "B", "C"]},
    bins={"AGE": [0, 18, 65, 100]},
)


def frame(**cols) -> pd.DataFrame:
    base = {"SEX": ["F", "M", "F"], "RACE": ["C", "A", "B"], "AGE": [17, 18, 100]}
    base.update(cols)
    return pd.DataFrame({k: v for k, v in base.items() if v is not None})


# --- construction ---------------------------------------------------------------------


def test_domain_sizes_and_order() -> None:
    # Categories first, in the order given, then bins; k + 1 edges give k codes.
    assert CB.domain == {"SEX": 2, "RACE": 3, "AGE": 3}
    assert list(CB.domain) == ["SEX", "RACE", "AGE"]
    assert CB.columns == ("SEX", "RACE", "AGE")
    cb = Codebook(bins={"Z": [0.0, 1.0]}, categories={"A": [3, 1, 2]})
    assert list(cb.domain) == ["A", "Z"]
    assert cb.domain == {"A": 3, "Z": 1}


def test_codebook_is_immutable_and_copies_its_inputs() -> None:
    labels = ["F", "M"]
    edges = [0, 1, 2]
    cb = Codebook(categories={"S": labels}, bins={"X": edges})
    labels.append("X")
    edges.append(3)
    assert cb.domain == {"S": 2, "X": 2}
    with pytest.raises(AttributeError, match="immutable"):
        cb.categories = {}
    with pytest.raises(AttributeError, match="immutable"):
        cb.new_attribute = 1
    with pytest.raises(AttributeError, match="immutable"):
        del cb._bins
    with pytest.raises(TypeError):
        cb.categories["S"] = ("F",)
    with pytest.raises(TypeError):
        cb.bins["X"] = (0, 5)
    cb.domain["S"] = 99  # a copy
    assert cb.domain == {"S": 2, "X": 2}
    assert cb.categories["S"] == ("F", "M")
    assert cb.bins["X"] == (0, 1, 2)


def test_equality_hash_pickle_and_copy() -> None:
    same = Codebook(
        categories={"SEX": ("F", "M"), "RACE": np.array(["A", "B", "C"])},
        bins={"AGE": np.array([0, 18, 65, 100])},
    )
    assert same == CB and hash(same) == hash(CB)
    assert Codebook(categories={"SEX": ["M", "F"]}) != Codebook(
        categories={"SEX": ["F", "M"]}
    )
    for other in (pickle.loads(pickle.dumps(CB)), copy.deepcopy(CB), copy.copy(CB)):
        assert other == CB
        assert other.domain == CB.domain
    assert "Codebook(categories={'SEX': ['F', 'M']" in repr(CB)


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"categories": [("S", ["F"])]}, TypeError, "categories must be a mapping"),
        ({"bins": [0, 1]}, TypeError, "bins must be a mapping"),
        ({"categories": {1: ["F"]}}, TypeError, "non-empty strings.*got 1"),
        ({"bins": {"": [0, 1]}}, TypeError, "non-empty strings"),
        ({}, ValueError, "the codebook has no column"),
        ({"categories": {}, "bins": {}}, ValueError, "has no column"),
        (
            {"categories": {"X": ["a"]}, "bins": {"X": [0, 1]}},
            ValueError,
            r"column\(s\) \['X'\] are in both categories and bins",
        ),
        ({"categories": {"S": "FM"}}, TypeError, r"categories\['S'\].*not the string"),
        ({"categories": {"S": {"F", "M"}}}, TypeError, r"categories\['S'\].*ordered"),
        ({"categories": {"S": {"F": 0}}}, TypeError, r"categories\['S'\].*ordered"),
        ({"categories": {"S": 3}}, TypeError, r"categories\['S'\].*ordered"),
        ({"categories": {"S": []}}, ValueError, r"categories\['S'\] is empty"),
        (
            {"categories": {"S": ["F", "M", "F"]}},
            ValueError,
            r"categories\['S'\] lists the same label more than once: 'F'",
        ),
        (
            {"categories": {"S": [1, 2, True]}},
            ValueError,
            r"categories\['S'\] lists the same label.*1 and True",
        ),
        (
            {"categories": {"S": ["F", math.nan]}},
            ValueError,
            r"categories\['S'\] holds the missing value nan",
        ),
        (
            {"categories": {"S": ["F", None]}},
            ValueError,
            r"categories\['S'\] holds the missing value None",
        ),
        (
            {"categories": {"S": ["F", ["M"]]}},
            TypeError,
            r"categories\['S'\] holds \['M'\], which is not a single label",
        ),
        ({"bins": {"X": "0,1"}}, TypeError, r"bins\['X'\].*not the string"),
        (
            {"bins": {"X": [0, "1", 2]}},
            TypeError,
            r"bins\['X'\] holds non-numeric edge\(s\) \['1'\]",
        ),
        ({"bins": {"X": [0, True]}}, TypeError, r"bins\['X'\].*non-numeric.*True"),
        ({"bins": {"X": [0]}}, ValueError, r"bins\['X'\] has 1 edge\(s\)"),
        ({"bins": {"X": []}}, ValueError, r"bins\['X'\] has 0 edge\(s\)"),
        (
            {"bins": {"X": [0, 1, math.inf]}},
            ValueError,
            r"bins\['X'\] holds non-finite edge\(s\) \[inf\].*public bound",
        ),
        ({"bins": {"X": [math.nan, 1]}}, ValueError, r"non-finite edge\(s\) \[nan\]"),
        (
            {"bins": {"X": [0, 2, 1]}},
            ValueError,
            r"bins\['X'\] must be strictly increasing, but 2 is followed by 1",
        ),
        (
            {"bins": {"X": [0, 1, 1]}},
            ValueError,
            "strictly increasing, but 1 is followed by 1",
        ),
    ],
)
def test_construction_rejects(kwargs, err, match) -> None:
    with pytest.raises(err, match=match):
        Codebook(**kwargs)


def test_construction_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        Codebook({"S": ["F"]})  # type: ignore[misc]


# --- encode ---------------------------------------------------------------------------


def test_encode_codes_order_dtype_and_index() -> None:
    df = frame()[["AGE", "RACE", "SEX"]]
    df.index = [10, 20, 30]
    codes = CB.encode(df)
    assert list(codes.columns) == ["SEX", "RACE", "AGE"]
    assert all(codes[c].dtype == np.int64 for c in codes.columns)
    assert codes.index.tolist() == [10, 20, 30]
    assert codes.to_dict("list") == {
        "SEX": [0, 1, 0],
        "RACE": [2, 0, 1],
        "AGE": [0, 1, 2],
    }
    assert df["SEX"].tolist() == ["F", "M", "F"]  # the input is not modified


def test_encode_accepts_category_object_and_numeric_labels() -> None:
    cb = Codebook(categories={"S": ["F", "M"], "K": [0, 1, 2], "B": [False, True]})
    df = pd.DataFrame(
        {
            "S": pd.Series(["M", "F"], dtype="category"),
            "K": np.array([2, 0], dtype=np.int8),
            "B": [True, False],
        }
    )
    assert cb.encode(df).to_dict("list") == {"S": [1, 0], "K": [2, 0], "B": [1, 0]}
    obj = df.astype(object)
    assert cb.encode(obj).to_dict("list") == cb.encode(df).to_dict("list")


def test_bins_are_left_closed_except_the_last() -> None:
    cb = Codebook(bins={"AGE": [0, 18, 65, 100]})
    x = [0, 1e-9, 17.999, 18, 64.5, 65, 99.99, 100]
    got = cb.encode(pd.DataFrame({"AGE": x}))["AGE"].tolist()
    assert got == [0, 0, 0, 1, 1, 2, 2, 2]
    assert cb.intervals("AGE") == (
        pd.Interval(0, 18, closed="left"),
        pd.Interval(18, 65, closed="left"),
        pd.Interval(65, 100, closed="both"),
    )
    # The same codes as numpy.histogram, which has the same convention.
    for v, code in zip(x, got, strict=True):
        counts, _ = np.histogram([v], bins=[0, 18, 65, 100])
        assert int(np.argmax(counts)) == code
    with pytest.raises(KeyError, match="not a binned column"):
        cb.intervals("SEX")


def test_encode_accepts_an_empty_frame() -> None:
    codes = CB.encode(frame().iloc[:0])
    assert codes.shape == (0, 3)
    assert all(codes[c].dtype == np.int64 for c in codes.columns)


@pytest.mark.parametrize(
    ("df", "err", "match"),
    [
        ({"SEX": ["F"]}, TypeError, "df must be a pandas DataFrame"),
        (np.zeros((2, 3)), TypeError, "df must be a pandas DataFrame"),
        (frame(RACE=None), ValueError, r"df lacks column\(s\) \['RACE'\]"),
        (
            frame(INCOME=[1, 2, 3]),
            ValueError,
            r"df has column\(s\) \['INCOME'\] that the codebook does not cover.*"
            r"df\[list\(codebook.columns\)\]",
        ),
        (
            frame(SEX=["F", "X", "Y"]),
            ValueError,
            r"column 'SEX' has 2 value\(s\) that are not among its labels, e\.g\. "
            r"\['X', 'Y'\]; the labels are \['F', 'M'\]",
        ),
        (
            frame(SEX=["F", "f", "F"]),
            ValueError,
            r"column 'SEX'.*\['f'\].*add them to categories\['SEX'\]",
        ),
        (
            frame(RACE=["A", None, "B"]),
            ValueError,
            r"column 'RACE' has 1 missing value\(s\) \(NaN/None\), "
            r"e\.g\. at rows \[1\]",
        ),
        (
            frame(AGE=[1.0, math.nan, math.nan]),
            ValueError,
            r"column 'AGE' has 2 missing value\(s\).*rows \[1, 2\]",
        ),
        (
            frame(AGE=[-1, 5, 101]),
            ValueError,
            r"column 'AGE' has 2 value\(s\) outside its bins \[0, 100\], e\.g\. "
            r"\[-1\.0, 101\.0\].*clip",
        ),
        (
            frame(AGE=[5, math.inf, 5]),
            ValueError,
            r"column 'AGE' has 1 value\(s\) outside its bins.*\[inf\]",
        ),
        (
            frame(AGE=["17", "18", "forty"]),
            TypeError,
            r"column 'AGE' is binned but holds value\(s\) that are not numbers, "
            r"e\.g\. \['17', '18', 'forty'\].*pd\.to_numeric",
        ),
        (
            frame(AGE=pd.Series([17, "forty", 3], dtype=object)),
            TypeError,
            r"column 'AGE' is binned.*\['forty'\]",
        ),
        (frame(AGE=[True, False, True]), TypeError, r"column 'AGE' is binned.*True"),
        (
            frame(AGE=pd.to_datetime(["2020-01-01"] * 3)),
            TypeError,
            r"column 'AGE' is binned.*Timestamp",
        ),
    ],
)
def test_encode_rejects(df, err, match) -> None:
    with pytest.raises(err, match=match):
        CB.encode(df)


def test_encode_rejects_repeated_columns() -> None:
    df = pd.concat([frame(), frame()[["SEX"]]], axis=1)
    with pytest.raises(ValueError, match=r"repeated column name\(s\) \[\"'SEX'\"\]"):
        CB.encode(df)


def test_encode_accepts_object_numbers_and_nullable_ints_in_bins() -> None:
    got = CB.encode(frame(AGE=pd.Series([17, 18.0, np.int64(100)], dtype=object)))
    assert got["AGE"].tolist() == [0, 1, 2]
    got = CB.encode(frame(AGE=pd.array([17, 18, 100], dtype="Int64")))
    assert got["AGE"].tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="'AGE' has 1 missing"):
        CB.encode(frame(AGE=pd.array([17, None, 100], dtype="Int64")))


# --- decode ---------------------------------------------------------------------------


def test_decode_intervals_and_midpoints() -> None:
    codes = pd.DataFrame({"AGE": [2, 0], "RACE": [0, 2], "SEX": [1, 1]}, index=[5, 6])
    out = CB.decode(codes)
    assert list(out.columns) == ["SEX", "RACE", "AGE"]
    assert out.index.tolist() == [5, 6]
    assert out["SEX"].tolist() == ["M", "M"]
    assert out["RACE"].tolist() == ["A", "C"]
    assert out["AGE"].tolist() == [
        pd.Interval(65, 100, closed="both"),
        pd.Interval(0, 18, closed="left"),
    ]
    mid = CB.decode(codes, bins_as="midpoint")
    assert mid["AGE"].dtype == np.float64
    assert mid["AGE"].tolist() == [82.5, 9.0]
    assert mid["SEX"].tolist() == ["M", "M"]


def test_decode_keeps_label_types() -> None:
    cb = Codebook(categories={"K": [0, 1, 2], "B": [False, True], "M": [1, "a"]})
    out = cb.decode(pd.DataFrame({"K": [2, 0], "B": [1, 0], "M": [1, 0]}))
    assert out["K"].dtype == np.int64 and out["K"].tolist() == [2, 0]
    assert out["B"].dtype == bool and out["B"].tolist() == [True, False]
    assert out["M"].tolist() == ["a", 1]


def test_decode_accepts_integral_floats() -> None:
    codes = pd.DataFrame({"SEX": [1.0], "RACE": [0.0], "AGE": [2.0]})
    assert CB.decode(codes)["SEX"].tolist() == ["M"]


@pytest.mark.parametrize(
    ("codes", "err", "match"),
    [
        ({"SEX": [0]}, TypeError, "codes must be a pandas DataFrame"),
        (pd.DataFrame({"SEX": [0], "RACE": [0]}), ValueError, r"lacks.*\['AGE'\]"),
        (
            pd.DataFrame({"SEX": [0], "RACE": [0], "AGE": [0], "X": [0]}),
            ValueError,
            r"codes has column\(s\) \['X'\] that the codebook does not cover",
        ),
        (
            pd.DataFrame({"SEX": [0, 2, 5], "RACE": [0, 0, 0], "AGE": [0, 0, 0]}),
            ValueError,
            r"codes\['SEX'\] has 2 code\(s\) outside 0\.\.1, e\.g\. \[2, 5\]",
        ),
        (
            pd.DataFrame({"SEX": [0], "RACE": [0], "AGE": [-1]}),
            ValueError,
            r"codes\['AGE'\] has 1 code\(s\) outside 0\.\.2, e\.g\. \[-1\]",
        ),
        (
            pd.DataFrame({"SEX": [0.5], "RACE": [0], "AGE": [0]}),
            ValueError,
            r"codes\['SEX'\] holds non-integer value\(s\) \[0\.5\]",
        ),
        (
            pd.DataFrame({"SEX": [math.nan], "RACE": [0], "AGE": [0]}),
            ValueError,
            r"codes\['SEX'\] holds non-integer",
        ),
        (
            pd.DataFrame({"SEX": ["F"], "RACE": [0], "AGE": [0]}),
            TypeError,
            r"codes\['SEX'\] must hold integer codes",
        ),
        (
            pd.DataFrame({"SEX": [True], "RACE": [0], "AGE": [0]}),
            TypeError,
            r"codes\['SEX'\] must hold integer codes",
        ),
    ],
)
def test_decode_rejects(codes, err, match) -> None:
    with pytest.raises(err, match=match):
        CB.decode(codes)


def test_decode_rejects_unknown_bins_as() -> None:
    with pytest.raises(ValueError, match="bins_as must be 'interval' or 'midpoint'"):
        CB.decode(CB.encode(frame()), bins_as="left")


# --- round trips ----------------------------------------------------------------------

LABEL = st.one_of(st.text(max_size=4), st.integers(-3, 3))


@st.composite
def codebook_and_frame(draw):
    labels = draw(st.lists(LABEL, min_size=1, max_size=5, unique=True))
    number = st.one_of(
        st.integers(-1000, 1000), st.floats(-1e6, 1e6, allow_nan=False, width=64)
    )
    edges = sorted(draw(st.lists(number, min_size=2, max_size=5, unique=True)))
    cb = Codebook(categories={"c": labels}, bins={"x": edges})
    n = draw(st.integers(0, 20))
    cats = draw(st.lists(st.sampled_from(labels), min_size=n, max_size=n))
    value = st.one_of(
        st.sampled_from(edges),
        st.floats(float(edges[0]), float(edges[-1]), allow_nan=False),
    )
    xs = draw(st.lists(value, min_size=n, max_size=n))
    return cb, pd.DataFrame({"x": pd.Series(xs, dtype=float), "c": cats})


@settings(max_examples=60, deadline=None)
@given(codebook_and_frame())
def test_round_trip(case) -> None:
    cb, df = case
    codes = cb.encode(df)
    assert ((codes >= 0) & (codes < pd.Series(cb.domain))).all().all()
    back = cb.decode(codes)
    # Categorical columns come back exactly, labels of the same type.
    assert back["c"].tolist() == df["c"].tolist()
    assert [type(v) for v in back["c"]] == [type(v) for v in df["c"]]
    # Each number comes back as the bin holding it, or that bin's midpoint.
    intervals = cb.intervals("x")
    mids = cb.decode(codes, bins_as="midpoint")["x"]
    for v, interval, mid in zip(df["x"], back["x"], mids, strict=True):
        assert v in interval
        assert interval in intervals
        assert sum(v in i for i in intervals) == 1  # the bins partition [e_0, e_k]
        assert mid == pytest.approx((interval.left + interval.right) / 2)
    # Encoding the decoded midpoints gives the same codes.
    assert cb.encode(back.assign(x=mids)).equals(codes)


# --- the synthesizers refuse labels and take a codebook's codes -----------------------


def test_synthesizers_refuse_label_columns_before_any_work() -> None:
    df = frame()
    for synth in (MST(epsilon=1.0, delta=1e-6), AIM(epsilon=1.0, delta=1e-6)):
        with pytest.raises(
            TypeError,
            match=r"data column\(s\) \['SEX', 'RACE'\] hold values that are not "
            r"numbers \(e\.g\. \{'SEX': \['F', 'M'\], 'RACE': \['C', 'A', 'B'\]\}\).*"
            r"dpnotes\.synth\.Codebook",
        ):
            synth.fit(df, CB.domain, rng=np.random.default_rng(0))
        assert synth.accountant_ is None and synth.domain_ is None
    strat = Stratified(MST(epsilon=1.0, delta=1e-6), by=["SEX"], weights=[0.5, 0.5])
    with pytest.raises(TypeError, match="Codebook"):
        strat.fit(df, CB.domain, rng=np.random.default_rng(0))


def test_check_data_names_label_columns_and_keeps_numeric_behaviour() -> None:
    domain = {"A": 3, "B": 2}
    with pytest.raises(TypeError, match=r"real column\(s\) \['B'\].*\['x', 'y'\]"):
        check_data(
            pd.DataFrame({"A": [0, 1, 2], "B": pd.Series(["x", None, "y"])}),
            domain,
            "real",
        )
    with pytest.raises(TypeError, match=r"\['B'\].*\['x'\]"):
        check_data(
            pd.DataFrame({"A": [0, 1], "B": pd.Series(["x", "x"], dtype="category")}),
            domain,
        )
    # Inputs accepted before (numbers in object columns, numeric strings, bools)
    # are accepted alike.
    ok = pd.DataFrame(
        {"A": pd.Series([0, 2.0, "1"], dtype=object), "B": [True, False, True]}
    )
    assert check_data(ok, domain).to_dict("list") == {"A": [0, 2, 1], "B": [1, 0, 1]}
    empty = pd.DataFrame({"A": pd.Series([], dtype=object), "B": []})
    assert check_data(empty, domain, allow_empty=True).shape == (0, 2)


def test_mst_end_to_end_with_a_codebook() -> None:
    rng = np.random.default_rng(7)
    n = 400
    sex = rng.choice(["F", "M"], size=n)
    df = pd.DataFrame(
        {
            "sex": sex,
            # Age depends on sex so that the tree has something to find.
            "age": np.where(
                sex == "F", rng.integers(0, 40, n), rng.integers(30, 91, n)
            ),
            "state": rng.choice(["CA", "NY", "TX"], size=n, p=[0.5, 0.3, 0.2]),
        }
    )
    cb = Codebook(
        categories={"sex": ["F", "M"], "state": ["CA", "NY", "TX", "WA"]},
        bins={"age": [0, 18, 30, 45, 65, 90]},
    )

    def run(seed: int) -> tuple[MST, pd.DataFrame]:
        gen = np.random.default_rng(seed)
        mst = MST(epsilon=1.0, delta=1e-6, iters=200).fit(
            cb.encode(df), cb.domain, rng=gen
        )
        return mst, mst.sample(300, rng=gen)

    mst, codes = run(0)
    assert mst.rho_spent <= mst.rho * (1 + 1e-9)
    out = cb.decode(codes)
    assert list(out.columns) == ["sex", "state", "age"]
    assert len(out) == 300
    assert pd.api.types.is_string_dtype(out["sex"])
    assert set(out["sex"]) <= {"F", "M"}
    assert set(out["state"]) <= {"CA", "NY", "TX", "WA"}
    assert set(out["age"]) <= set(cb.intervals("age"))
    mid = cb.decode(codes, bins_as="midpoint")
    assert mid["age"].dtype == np.float64
    assert set(mid["age"]) <= {9.0, 24.0, 37.5, 55.0, 77.5}
    # Seeded: the same seed gives the same rows.
    assert cb.decode(run(0)[1]).equals(out)
