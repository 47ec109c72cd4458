"""Serve MathJax 3 from the built site instead of a CDN, when a local copy exists.

Load it from jupyter-book's ``_config.yml``::

    sphinx:
      local_extensions:
        local_mathjax: book/_ext

Fetch the copy first with ``scripts/fetch_mathjax.sh _build/.mathjax/mathjax``.

Where the copy lives, first match wins:

1. the Sphinx config value ``local_mathjax_dir`` (``sphinx: config:`` in
   ``_config.yml``);
2. the environment variable ``DPNOTES_MATHJAX_DIR``;
3. ``_build/.mathjax`` under the book root (Sphinx's source directory).

A relative path is taken from the book root. The folder must contain
``mathjax/tex-mml-chtml.js``; it is added to ``html_static_path``, so the file
ends up at ``_static/mathjax/tex-mml-chtml.js`` and ``mathjax_path`` points there.
Without the folder the extension changes nothing and the book loads MathJax from
the CDN (Sphinx's default). ``mathjax3_config`` (e.g. TeX macros) applies either
way.

The folder must not be a ``_static`` folder at the book root: jupyter-book adds
every ``.js`` file found there to every page.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.util import logging

logger = logging.getLogger(__name__)

ENV_VAR = "DPNOTES_MATHJAX_DIR"
DEFAULT_DIR = "_build/.mathjax"
ENTRY = "mathjax/tex-mml-chtml.js"


def _mathjax_dir(app: Sphinx, config: Config) -> Path:
    """Return the folder that should hold ``mathjax/tex-mml-chtml.js``."""
    raw = config.local_mathjax_dir or os.environ.get(ENV_VAR) or DEFAULT_DIR
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = Path(app.srcdir) / path
    return path.resolve()


def _configure(app: Sphinx, config: Config) -> None:
    """Point ``mathjax_path`` at the local copy when there is one."""
    folder = _mathjax_dir(app, config)
    if not (folder / ENTRY).is_file():
        logger.info(
            "local_mathjax: no %s under %s; MathJax loads from %s",
            ENTRY,
            folder,
            config.mathjax_path,
        )
        return
    static = [str(p) for p in config.html_static_path]
    if str(folder) not in static:
        config.html_static_path = [*static, str(folder)]
    config.mathjax_path = ENTRY
    logger.info("local_mathjax: serving MathJax from %s", folder / ENTRY)


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the config value and the hook (Sphinx extension entry point)."""
    app.setup_extension("sphinx.ext.mathjax")
    app.add_config_value("local_mathjax_dir", "", "html", [str])
    # Run after jupyter-book and the theme have set their values.
    app.connect("config-inited", _configure, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
