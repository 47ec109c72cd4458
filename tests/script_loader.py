"""Import a file of ``scripts/`` or ``book/_ext/`` as a module, once per session."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_script(relative: str) -> ModuleType:
    """Import ``ROOT / relative`` under its file stem, registered in ``sys.modules``.

    Registering matters: dataclasses look their module up there. A second call returns
    the module the first one imported.
    """
    path = ROOT / relative
    name = path.stem
    loaded = sys.modules.get(name)
    if loaded is not None and Path(getattr(loaded, "__file__", "")) == path:
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
