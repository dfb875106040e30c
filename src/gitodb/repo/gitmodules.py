"""A ``.gitmodules`` blob read as Git's fsck reads it: with the config parser.

``parse_gitmodules(data)`` gives the ``(key, value)`` entries (``submodule.<name>.
<var>``) for ``gitodb.objects.fsck`` to check, or None when the blob is not a
config file Git can parse (fsck's ``gitmodulesParse``).  The one config parser,
``gitodb.repo.config.Config``, reads files: the blob is given to it as a private
temporary file, removed at once.
"""

from __future__ import annotations

import os
import tempfile

from gitodb.errors import ConfigError
from gitodb.repo.config import Config

__all__ = ["parse_gitmodules"]


def parse_gitmodules(data: bytes) -> list[tuple[str, str | None]] | None:
    """The entries of a ``.gitmodules`` blob, or None if it does not parse."""
    fd, path = tempfile.mkstemp(prefix="gitodb-gitmodules-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        config = Config()
        try:
            config.read_file(path, ".gitmodules")
        except ConfigError:
            return None
        return [(key, value) for key in config.keys() for value in config.get_raw_all(key)]
    finally:
        os.unlink(path)
