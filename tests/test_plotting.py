"""The book's figure style."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib as mpl
import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import numpy as np
import pytest

from dpnotes import plotting


def test_palette_is_valid_and_distinct():
    assert len(set(plotting.PALETTE)) == len(plotting.PALETTE)
    for color in (*plotting.PALETTE, *plotting.METHOD_COLORS.values()):
        assert mcolors.is_color_like(color)


def test_set_style_applies_the_palette():
    plotting.set_style()
    cycle = [c["color"] for c in plt.rcParams["axes.prop_cycle"]]
    assert [mcolors.to_hex(c) for c in cycle[:3]] == [
        c.lower() for c in plotting.PALETTE[:3]
    ]
    assert plt.rcParams["axes.spines.top"] is False


def test_color_for_is_stable():
    assert plotting.color_for("DPSGD-F") == plotting.METHOD_COLORS["DPSGD-F"]
    assert plotting.color_for("something new") == plotting.color_for("something new")
    assert list(plotting.group_palette(["a", "b"]).values()) == list(
        plotting.PALETTE[:2]
    )


def test_figure_sizes_are_positive():
    for width, height in plotting.FIGSIZE.values():
        assert width > 0 and height > 0


def test_figure_image_is_a_png_whatever_the_backend():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    image = plotting.figure_image(fig)
    plt.close(fig)
    assert image.format == "png"
    assert image.data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(image.data) > 1000


# --------------------------------------------------------------------------- #
# The figure checks of glue_figure (Agg; no kernel: glue is recorded, not sent)
# --------------------------------------------------------------------------- #


@pytest.fixture
def style():
    """The book's style, restored afterwards."""
    with mpl.rc_context():
        plotting.set_style()
        yield


@pytest.fixture
def figs(tmp_path, monkeypatch):
    """DPNOTES_FIGURES_DIR in a temporary folder; glue only recorded."""
    folder = tmp_path / "figures"
    monkeypatch.setenv(plotting.FIGURES_ENV, str(folder))
    glued = []
    monkeypatch.setattr(
        plotting, "glue", lambda name, value, display=False: glued.append(name)
    )
    return SimpleNamespace(folder=folder, glued=glued)


def book_figure(size: str = "wide", *, seed: int = 0) -> plt.Figure:
    """A figure as a chapter draws one: title, axis labels, ticks and a legend."""
    rng = np.random.default_rng(seed)
    fig, ax = plt.subplots(figsize=plotting.FIGSIZE[size])
    x = np.linspace(0.1, 10, 50)
    for i, method in enumerate(("laplace", "gaussian")):
        ax.plot(x, (i + 1) / x + 0.01 * rng.standard_normal(50), label=method)
    ax.set_title("Error against the privacy budget")
    ax.set_xlabel(r"privacy budget $\varepsilon$")
    ax.set_ylabel("mean absolute error")
    ax.legend(title="mechanism")
    return fig


def test_glue_figure_refuses_tiny_text(style, figs):
    fig, ax = plt.subplots(figsize=(12, 4))
    ax.plot([0, 1], [0, 1])
    ax.tick_params(labelsize=6)
    with pytest.raises(ValueError, match=r"figure 'fig-tiny' is not legible.*px"):
        plotting.glue_figure("fig-tiny", fig, source="tests")
    assert not figs.folder.exists() or not any(figs.folder.iterdir())
    assert figs.glued == []
    assert not plt.fignum_exists(fig.number)  # closed all the same


def test_glue_figure_passes_a_book_figure(style, figs):
    fig = book_figure("wide")
    assert plotting.smallest_font_px(fig) >= plotting.MIN_FONT_PX
    assert plotting.glue_figure("fig-ok", fig, source="tests") is None
    assert (figs.folder / "tests-fig-ok.svg").is_file()
    assert figs.glued == ["fig-ok"]


def test_glue_figure_writes_nothing_outside_the_repository(
    style, tmp_path, monkeypatch
):
    monkeypatch.delenv(plotting.FIGURES_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(plotting, "glue", lambda name, value, display=False: None)
    assert plotting.figures_folder() is None
    plotting.glue_figure("fig-ok", book_figure(), source="tests")
    assert list(tmp_path.iterdir()) == []


def test_glue_figure_writes_stable_svg_and_pdf(style, figs):
    plotting.glue_figure("fig-noise", book_figure(), source="dp_basics")
    files = sorted(p.name for p in figs.folder.iterdir())
    assert files == ["dp_basics-fig-noise.pdf", "dp_basics-fig-noise.svg"]
    first = {name: (figs.folder / name).read_bytes() for name in files}
    assert first["dp_basics-fig-noise.svg"].lstrip().startswith(b"<?xml")
    assert first["dp_basics-fig-noise.pdf"].startswith(b"%PDF")
    # The same figure drawn again gives the same bytes: no dates, no random ids.
    plotting.glue_figure("fig-noise", book_figure(), source="dp_basics")
    assert {name: (figs.folder / name).read_bytes() for name in files} == first


@pytest.mark.parametrize(
    ("name", "source", "which"),
    [
        ("fig noise", "tests", "name"),
        ("../fig", "tests", "name"),
        ("", "tests", "name"),
        ("fig-ok", "a/b", "source"),
        ("fig-ok", "-x", "source"),
    ],
)
def test_glue_figure_refuses_unstable_names(style, figs, name, source, which):
    fig = book_figure()
    with pytest.raises(ValueError, match=f"glue_figure: {which}"):
        plotting.glue_figure(name, fig, source=source)
    assert not plt.fignum_exists(fig.number)
    assert not figs.folder.exists()


def test_colliding_ticks(style):
    fig, ax = plt.subplots(figsize=(3, 2))
    labels = [f"a long label {i}" for i in range(40)]
    ax.set_xticks(range(40), labels)
    found = plotting.colliding_ticks(fig)
    plt.close(fig)
    assert found
    assert found[0].startswith("axes 0, x: 'a long label")
    fig = book_figure()
    assert plotting.colliding_ticks(fig) == []
    plt.close(fig)


def test_glue_is_silent_without_myst_nb_unless_displayed(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "myst_nb", None)  # import fails as in Colab
    plotting.glue("gauss-sigma", 4.8)
    assert capsys.readouterr().out == ""
    plotting.glue("a-table", "shown", display=True)
    assert "shown" in capsys.readouterr().out


@pytest.mark.parametrize("size", sorted(plotting.FIGSIZE))
def test_style_is_legible_at_every_figsize(style, size):
    # What text a figure can be measured for: the sizes set_style gives titles,
    # labels, ticks and legends must stay legible at every FIGSIZE width, shown at
    # the page width.
    fig = book_figure(size)
    smallest = plotting.smallest_font_px(fig)
    plt.close(fig)
    assert smallest >= plotting.MIN_FONT_PX, (size, smallest)


def test_text_in_subfigures_is_measured():
    fig = plt.figure(figsize=plotting.FIGSIZE["wide"])
    left, _right = fig.subfigures(1, 2)
    ax = left.subplots()
    ax.set_title("tiny", fontsize=4)
    assert plotting.smallest_font_px(fig) < plotting.MIN_FONT_PX
    plt.close(fig)


def test_tick_labels_of_neighbouring_panels_that_touch_collide():
    plotting.set_style()
    fig, axes = plt.subplots(1, 3, figsize=(4.5, 2), sharey=True)
    fig.get_layout_engine().set(wspace=0, w_pad=0)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlim(1e-2, 1e1)
        ax.set_xticks([1e-2, 1e1], ["0.01", "10"])
    assert any(
        " and " in c and "axes 0 and 1" in c for c in plotting.colliding_ticks(fig)
    )
    fig.get_layout_engine().set(wspace=0.3)
    assert not plotting.colliding_ticks(fig)
    plt.close(fig)
