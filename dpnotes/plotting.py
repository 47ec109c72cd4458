"""One figure style for the whole book: theme, colour-blind-safe palette, sizes, glue.

Every chapter calls :func:`set_style` once and draws with the palette and sizes defined
here, so that a method has the same colour in every figure of the book. Tables, number
formats and captions are :mod:`dpnotes.report`'s.

Every figure leaves a chapter through :func:`glue_figure`, which

* shows it as an ordinary ``image/png`` output of its cell (what Jupyter and Colab
  display), and glues it for the book, where a ``{glue:figure}`` directive numbers and
  captions it;
* writes it as SVG and PDF under a stable name, ``<source>-<name>``, in
  :func:`figures_folder`, for citing and for print;
* refuses a figure a reader could not read at the width the page shows it: text
  smaller than :data:`MIN_FONT_PX` rendered pixels (:func:`smallest_font_px`), or tick
  labels that collide (:func:`colliding_ticks`).
"""

from __future__ import annotations

import io
import itertools
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from dpnotes.paths import repository_root

__all__ = [
    "FIGSIZE",
    "FIGURES_ENV",
    "METHOD_COLORS",
    "MIN_FONT_PX",
    "PAGE_WIDTH_PX",
    "PALETTE",
    "colliding_ticks",
    "color_for",
    "figure_image",
    "figures_folder",
    "glue",
    "glue_figure",
    "group_palette",
    "set_style",
    "simplex_coordinates",
    "smallest_font_px",
]

#: Width in CSS pixels that a figure image is shown at: the book's text column, where a
#: figure is shown, at a 1280-pixel-wide window (sphinx-book-theme's article column is
#: 688 px there, less the figure's 8 px padding on each side). ``scripts/check_site.py``
#: measures it on every page and fails when it or a figure image differs. A figure
#: narrower than this in pixels is shown at its own size.
PAGE_WIDTH_PX = 672

#: Smallest legible text in a figure, in rendered CSS pixels (body text is 16).
MIN_FONT_PX = 11.0

#: Resolution of the PNG a chapter shows (and of :func:`figure_image`).
PNG_DPI = 150

#: Environment variable: the folder :func:`glue_figure` writes SVG and PDF files to.
FIGURES_ENV = "DPNOTES_FIGURES_DIR"

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
            "savefig.dpi": PNG_DPI,
            # Fixed ids in SVG files: an unchanged figure is an unchanged file.
            "svg.hashsalt": "dpnotes",
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


def figure_image(fig: plt.Figure, *, dpi: int = PNG_DPI):
    """Render ``fig`` to a PNG :class:`IPython.display.Image`.

    Showing the image rather than the figure object makes the output independent of the
    kernel's matplotlib backend: with a non-inline backend (``MPLBACKEND=Agg``, say)
    a figure object has only a text repr, and the book would show
    ``<Figure size ...>`` instead of the picture.
    """
    from IPython.display import Image

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return Image(data=buffer.getvalue(), format="png")


def _saved_width_inches(fig: plt.Figure) -> float:
    """Width of ``fig`` as saved with ``bbox_inches="tight"``, in inches."""
    fig.canvas.draw()
    bbox = fig.get_tightbbox(fig.canvas.get_renderer())
    return float(bbox.width)


def _texts(fig: plt.Figure):
    """The visible, non-empty text artists of ``fig``."""
    from matplotlib.text import Text

    for text in fig.findobj(Text):
        if (
            text.get_visible()
            and text.get_text().strip()
            # Text in a subfigure belongs to it; its root is the figure.
            and text.get_figure(root=True) is fig
        ):
            axes = text.axes
            if axes is None or axes.get_visible():
                yield text


def smallest_font_px(fig: plt.Figure, *, page_width_px: float = PAGE_WIDTH_PX) -> float:
    """Return the size in rendered CSS pixels of the smallest text in ``fig``.

    The book shows a figure's PNG (``PNG_DPI``) at the width of the text column,
    or at its own width if that is smaller, so a font of ``s`` points is drawn at
    ``s * shown / (72 * width)`` pixels, with ``width`` the saved figure's width in
    inches and ``shown = min(page_width_px, PNG_DPI * width)``.

    >>> fig, ax = plt.subplots(figsize=(10, 3), layout="constrained")
    >>> _ = ax.set_xticks([0, 1], ["0", "1"], fontsize=8)
    >>> round(smallest_font_px(fig, page_width_px=720))  # 8 pt on 10 in at 720 px
    8
    >>> plt.close(fig)
    """
    width = _saved_width_inches(fig)
    shown = min(float(page_width_px), PNG_DPI * width)
    sizes = [float(t.get_fontsize()) for t in _texts(fig)]
    if not sizes:
        return float("inf")
    return min(sizes) * shown / (72.0 * width)


def _overlap(a, b, gap: float) -> bool:
    """Whether boxes ``a`` and ``b``, each grown by ``gap`` pixels, overlap."""
    return (
        a.x1 + gap > b.x0
        and b.x1 + gap > a.x0
        and a.y1 + gap > b.y0
        and b.y1 + gap > a.y0
    )


def _drawn_ticklabels(axis):
    """The non-empty tick labels ``axis`` draws: major and minor, inside its limits."""
    low, high = sorted(axis.get_view_interval())
    span = (high - low) * 1e-9
    for minor in (False, True):
        locations = axis.get_ticklocs(minor=minor)
        labels = axis.get_ticklabels(minor=minor)
        for location, label in zip(locations, labels, strict=False):
            inside = low - span <= location <= high + span
            if inside and label.get_visible() and label.get_text().strip():
                yield label


#: Tick labels of different panels closer than this many display pixels read as one.
PANEL_GAP_PX = 4.0


def colliding_ticks(fig: plt.Figure) -> list[str]:
    """Return the tick labels of ``fig`` that collide with another tick label.

    Labels of one axis collide when they overlap (touching is allowed); labels of
    different panels when they come within ``PANEL_GAP_PX`` (4) pixels, where the
    last tick of one panel would read as part of the first of the next. Each entry
    reads ``"axes N, x: '0.5' and '1'"``; labels are compared as drawn, by their
    bounding boxes in display coordinates.
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found = []
    labelled = []  # (axes number, axis name, text, box) of every visible tick label
    for number, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            boxes = [
                (t.get_text(), t.get_window_extent(renderer))
                for t in _drawn_ticklabels(axis)
            ]
            labelled += [(number, name, text, box) for text, box in boxes]
            key = (lambda b: b[1].x0) if name == "x" else (lambda b: b[1].y0)
            boxes.sort(key=key)
            for (text_a, a), (text_b, b) in itertools.pairwise(boxes):
                # Boxes are shrunk by half a pixel: touching is not colliding.
                if _overlap(a, b, -0.5):
                    found.append(f"axes {number}, {name}: {text_a!r} and {text_b!r}")
    for (n_a, axis_a, text_a, a), (n_b, _, text_b, b) in itertools.combinations(
        labelled, 2
    ):
        if n_a != n_b and _overlap(a, b, PANEL_GAP_PX):
            found.append(f"axes {n_a} and {n_b}, {axis_a}: {text_a!r} and {text_b!r}")
    return found


def figures_folder() -> Path | None:
    """Return the folder :func:`glue_figure` writes SVG and PDF files to, if any.

    ``$DPNOTES_FIGURES_DIR`` if set; else ``book/_figures`` of the repository that
    contains the current directory (a folder with ``_toc.yml`` and ``book/``, where the
    chapters link to them); else None: a notebook run elsewhere (downloaded, or in
    Colab) writes no files unless asked to with ``$DPNOTES_FIGURES_DIR``.
    """
    env = os.environ.get(FIGURES_ENV)
    if env:
        return Path(env)
    root = repository_root()
    return root / "book" / "_figures" if root else None


_STABLE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def glue_figure(
    name: str,
    fig: plt.Figure,
    *,
    source: str,
    page_width_px: float = PAGE_WIDTH_PX,
) -> None:
    """Show ``fig`` as its cell's PNG output, glue it under ``name``, save it, close it.

    The output is an ordinary ``image/png`` (Jupyter and Colab show it); the book
    places it with a ``{glue:figure}`` directive that captions and numbers it. The
    figure is also written as ``<source>-<name>.svg`` and ``.pdf`` in
    :func:`figures_folder` (when there is one), names that stay the same from build to
    build, so that a caption can link them and a reader can cite them. It returns
    nothing, so that a notebook cell ending with it shows only the figure.

    Args:
        name: The name the chapter's ``{glue:figure}`` directive refers to, e.g.
            ``"fig-noise"``.
        fig: The figure; it is closed afterwards.
        source: The experiment the figure shows (e.g. ``"dp_mean_error"``), or the
            chapter's name for a figure of pure computation.
        page_width_px: Width the figure is shown at, in CSS pixels.

    Raises:
        ValueError: If a name is not a plain file name, if text in the figure would be
            rendered smaller than :data:`MIN_FONT_PX`, or if tick labels collide:
            enlarge the font (the sizes :func:`set_style` sets are legible at the
            :data:`FIGSIZE` widths) or narrow the figure, and thin the ticks.
    """
    for label, value in (("name", name), ("source", source)):
        if not _STABLE_NAME.fullmatch(value):
            plt.close(fig)
            raise ValueError(
                f"glue_figure: {label} {value!r} must be a file name of letters, "
                "digits, '.', '_' and '-'."
            )
    problems = []
    smallest = smallest_font_px(fig, page_width_px=page_width_px)
    if smallest < MIN_FONT_PX:
        problems.append(
            f"its smallest text is {smallest:.1f} px at a page width of "
            f"{page_width_px:g} px "
            f"(at least {MIN_FONT_PX:g} px needed)"
        )
    problems += [f"tick labels collide ({c})" for c in colliding_ticks(fig)]
    if problems:
        plt.close(fig)
        raise ValueError(
            f"figure {name!r} is not legible: " + "; ".join(problems) + ". Use larger "
            "fonts or a narrower figure (plotting.FIGSIZE), and fewer ticks."
        )
    folder = figures_folder()
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        stem = folder / f"{source}-{name}"
        # No creation date in the files: an unchanged figure gives unchanged bytes.
        fig.savefig(stem.with_suffix(".svg"), format="svg", metadata={"Date": None})
        fig.savefig(
            stem.with_suffix(".pdf"), format="pdf", metadata={"CreationDate": None}
        )
    glue(name, figure_image(fig), display=True)
    plt.close(fig)


def glue(name: str, value: object, *, display: bool = False) -> None:
    """Glue ``value`` under ``name`` for the book; outside the book, only display it.

    In a book build (myst-nb installed) this is :func:`myst_nb.glue`. Without myst-nb,
    as in Colab after a core install, a value glued with ``display=True`` (a figure, a
    table) is shown, and any other is silent: the notebook's text already carries the
    book's values (``scripts/colab.py`` writes them in, saying they come from the
    stored results).
    """
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        if display:
            from IPython.display import display as show

            show(value)
        return
    myst_glue(name, value, display=display)


def simplex_coordinates(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Map points of the probability simplex in three coordinates to the plane.

    The corners ``(1, 0, 0)``, ``(0, 1, 0)``, ``(0, 0, 1)`` go to the vertices of an
    equilateral triangle with unit sides: ``(0, 0)``, ``(1, 0)``, ``(1/2, sqrt(3)/2)``.

    Args:
        points: Array of shape ``(m, 3)`` whose rows sum to one.

    Returns:
        The ``x`` and ``y`` coordinates, each of shape ``(m,)``.

    Examples:
        >>> x, y = simplex_coordinates(np.array([[1 / 3, 1 / 3, 1 / 3]]))
        >>> round(float(x[0]), 3), round(float(y[0]), 3)
        (0.5, 0.289)
    """
    p = np.asarray(points, dtype=float)
    if p.ndim != 2 or p.shape[1] != 3:
        raise ValueError(f"points must have shape (m, 3), got {p.shape}.")
    return p[:, 1] + 0.5 * p[:, 2], (np.sqrt(3.0) / 2.0) * p[:, 2]
