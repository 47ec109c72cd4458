"""The book's figure style."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt

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
