"""Where the book's repository is: the folders stored results and figures default to.

A file-system helper shared by :mod:`dpnotes.lab.store` (stored results, in
``book/_results``) and :mod:`dpnotes.plotting` (figure files, in ``book/_figures``).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["repository_root"]


def repository_root(start: Path | None = None) -> Path | None:
    """Return the book's repository that contains ``start``, or None outside one.

    The repository is the nearest folder, ``start`` itself or one above it, that holds
    ``_toc.yml`` and a ``book/`` folder.

    Args:
        start: Where to look from; default the current directory.

    Returns:
        The repository's root folder, resolved, or None.

    Examples:
        >>> repository_root(Path("/")) is None
        True
    """
    here = (Path.cwd() if start is None else Path(start)).resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").is_file() and (folder / "book").is_dir():
            return folder
    return None
