"""The zlib backends gitodb can run on, and how to load them.

``BACKENDS`` maps each name to its module under this package and the pip
command that installs it.  ``load(name)`` imports a backend on first use and
returns its ``Backend``, or None when it is not installed.
"""

from __future__ import annotations

import sys

from .base import Backend

#: name -> (module, install hint); in the order ``version --build-options`` lists them
BACKENDS: dict[str, tuple[str, str]] = {
    "zlib": ("stdlib", "part of Python"),
    "zlib-ng": ("zlibng", "pip install zlib-ng"),
    "isal": ("isal", "pip install 'gitodb[isal]'"),
    "libdeflate": ("libdeflate", "pip install 'gitodb[libdeflate]'"),
}

_loaded: dict[str, Backend | None] = {}


def load(name: str) -> Backend | None:
    """The backend called ``name``, or None if its library is not installed."""
    if name not in _loaded:
        module_name = BACKENDS[name][0]
        try:
            path = f"{__name__}.{module_name}"
            __import__(path)  # (importlib itself would add to every start-up)
            module = sys.modules[path]
        except ImportError:
            _loaded[name] = None
        else:
            _loaded[name] = module.load()
    return _loaded[name]


def install_hint(name: str) -> str:
    """How to install backend ``name``."""
    return BACKENDS[name][1]
