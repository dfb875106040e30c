"""Path strings spelled as ``pathlib`` spells them, without importing ``pathlib``.

``pathlib`` (with ``urllib.parse``, ``ipaddress``, ``fnmatch`` and ``re``) is a few
milliseconds of every command's start-up; the repository-opening and ref-reading
code works on ``str`` paths with ``os.path`` and uses these where the spelling must
stay ``Path``'s (messages, comparisons, ``Path``-valued public attributes built from
them later).
"""

from __future__ import annotations

import os


def pure(path: str) -> str:
    """``str(PurePath(path))``: '.' components, repeated and trailing slashes dropped,
    '..' kept, ``"."`` for an empty path."""
    if os.sep != "/":  # Windows' rules are pathlib's to know
        from pathlib import PurePath

        return str(PurePath(path))
    if path.startswith("/"):
        # POSIX keeps exactly two leading slashes (implementation-defined), as pathlib
        root = "//" if path.startswith("//") and not path.startswith("///") else "/"
    else:
        root = ""
    parts = [p for p in path.split("/") if p and p != "."]
    return root + "/".join(parts) or "."


def absolute(path: str) -> str:
    """``str(Path(path).absolute())``: joined to the cwd, not resolved (``pure``'s form)."""
    return pure(path if os.path.isabs(path) else os.path.join(os.getcwd(), path))
