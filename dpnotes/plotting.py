"""One figure style for the whole book: theme, colour-blind-safe palette, sizes, glue.

Every chapter calls :func:`set_style` once and draws with the palette and sizes defined
here, so that a method has the same colour in every figure of the book. Tables, number
formats and captions are :mod:`dpnotes.report`'s.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

__all__ = [
    "FIGSIZE",
    "METHOD_COLORS",
    "PALETTE",
    "color_for",
    "figure_image",
    "glue_figure",
    "group_palette",
    "set_style",
    "simplex_coordinates",
]

#: The Okabe–Ito palette (Okabe & Ito 2008), distinguishable under the common forms of
#: colour-vision deficiency; black is left out so it stays free for reference lines.
PALETTE: tuple[str, ...] = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#D55E00",  # vermillion
    "#F0E442",  # yellow
    "#999999",  # grey
)

#: Fixed colours for the methods that recur across chapters.
METHOD_COLORS: Mapping[str, str] = {
    "non-private": "#000000",
    "laplace": PALETTE[0],
    "gaussian": PALETTE[1],
    "global": PALETTE[7],
    "per-group (parallel)": PALETTE[2],
    "per-group (sequential)": PALETTE[5],
    "vanilla": PALETTE[7],
    "stratified": PALETTE[2],
    "COINPRESS": PALETTE[0],
    "StratCoinpress": PALETTE[2],
    "PubStratCoinpress": PALETTE[3],
    "StratCoinpress (paper, leaks sizes)": PALETTE[5],
    "StratCoinpress (DP counts)": PALETTE[2],
    "DPSGD": PALETTE[0],
    "DPSGD-F": PALETTE[2],
    "Naive": PALETTE[1],
    "SGD": "#000000",
}

#: Figure sizes in inches: one column of the book's text width, full width, and square.
FIGSIZE: Mapping[str, tuple[float, float]] = {
    "single": (6.4, 4.0),
    "wide": (8.0, 3.4),
    "tall": (8.0, 6.4),
    "square": (4.8, 4.8),
}


def set_style(context: str = "notebook") -> None:
    """Apply the book's seaborn theme, palette and matplotlib settings."""
    sns.set_theme(context=context, style="whitegrid", palette=list(PALETTE))
    mpl.rcParams.update(
        {
            "figure.dpi": 110,
            "savefig.dpi": 150,
            "savefig.bbox": "tight",
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.titlesize": "medium",
            "axes.titleweight": "bold",
            "legend.frameon": False,
            "figure.constrained_layout.use": True,
        }
    )


def color_for(name: str) -> str:
    """Return the fixed colour of a method, or a palette colour chosen by its name."""
    if name in METHOD_COLORS:
        return METHOD_COLORS[name]
    return PALETTE[sum(map(ord, name)) % len(PALETTE)]


def group_palette(groups: Iterable[object]) -> dict[object, str]:
    """Map ordered group labels onto the palette (cycling if there are more)."""
    return {g: PALETTE[i % len(PALETTE)] for i, g in enumerate(groups)}


def figure_image(fig: plt.Figure, *, dpi: int = 150):
    """Render ``fig`` to a PNG :class:`IPython.display.Image`.

    Gluing the image rather than the figure object makes the output independent of the
    kernel's matplotlib backend: with a non-inline backend (``MPLBACKEND=Agg``, say)
    a figure object has only a text repr, and the book would show
    ``<Figure size ...>`` instead of the picture.
    """
    from IPython.display import Image

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return Image(data=buffer.getvalue(), format="png")


def glue_figure(name: str, fig: plt.Figure, *, display: bool = False) -> None:
    """Register ``fig`` with myst-nb's glue under ``name`` as a PNG, and close it.

    The chapter then places it with a ``{glue:figure}`` directive that gives it a
    caption and a ``:name:`` so it is numbered and can be cited.
    """
    from myst_nb import glue

    glue(name, figure_image(fig), display=display)
    plt.close(fig)


def simplex_coordinates(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Map points of the probability simplex in three coordinates to the plane.

    The corners ``(1, 0, 0)``, ``(0, 1, 0)``, ``(0, 0, 1)`` go to the vertices of an
    equilateral triangle with unit sides: ``(0, 0)``, ``(1, 0)``, ``(1/2, sqrt(3)/2)``.

    Args:
        points: Array of shape ``(m, 3)`` whose rows sum to one.

    Returns:
        The ``x`` and ``y`` coordinates, each of shape ``(m,)``.

    >>> x, y = simplex_coordinates(np.array([[1 / 3, 1 / 3, 1 / 3]]))
    >>> round(float(x[0]), 3), round(float(y[0]), 3)
    (0.5, 0.289)
    """
    p = np.asarray(points, dtype=float)
    if p.ndim != 2 or p.shape[1] != 3:
        raise ValueError(f"points must have shape (m, 3), got {p.shape}.")
    return p[:, 1] + 0.5 * p[:, 2], (np.sqrt(3.0) / 2.0) * p[:, 2]
