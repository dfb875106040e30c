"""One exception hierarchy for everything gitodb raises on bad input or bad use.

Every error that comes from stored data names the file and, where it is known,
the byte offset in it, so a message can point at the damage.  The CLI turns any
``GitodbError`` into one ``fatal:`` line and exit status 128, like Git.
"""

from __future__ import annotations

import os


class GitodbError(Exception):
    """Base class of every error gitodb raises on purpose."""

    def __init__(self, message: str, *, path: str | os.PathLike[str] | None = None,
                 offset: int | None = None) -> None:
        self.message = message
        self.path = os.fspath(path) if path is not None else None
        self.offset = offset
        super().__init__(self._render())

    def _render(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path if self.offset is None else f"{self.path} at offset {self.offset}"
        elif self.offset is not None:
            where = f"offset {self.offset}"
        return f"{self.message} ({where})" if where else self.message


class CompressionError(GitodbError):
    """A zlib stream is corrupt, truncated, or inflates to the wrong size."""


class BackendUnavailableError(GitodbError):
    """A zlib backend was named that is unknown or not installed."""


class ObjectFormatError(GitodbError):
    """An object's header or content is malformed."""


class ObjectParseError(ObjectFormatError):
    """A commit, tag or tree does not parse the way Git parses it.

    ``reason`` says which rule failed, in words Git's own messages use: for commits
    ``bogus`` (no ``tree`` line first), ``bad-tree``, ``bad-parents``; for tags
    ``corrupt`` or ``unknown-type``; for trees the message is Git's own text.
    """

    def __init__(self, message: str, *, reason: str = "",
                 path: str | os.PathLike[str] | None = None, offset: int | None = None) -> None:
        self.reason = reason
        super().__init__(message, path=path, offset=offset)


class ObjectNotFoundError(GitodbError):
    """No object with this id exists in the object database."""


class ObjectTypeError(GitodbError):
    """An object is not of the type that was asked for (``object X is a tree, not a commit``)."""


class AmbiguousObjectNameError(GitodbError):
    """An abbreviated id or name matches more than one object."""


class BadRevisionError(GitodbError):
    """A revision expression cannot be resolved."""


class PackError(GitodbError):
    """A pack, pack index or reverse index is malformed or inconsistent."""


class DeltaError(PackError):
    """A delta is malformed, copies out of bounds, has the wrong size, or forms a cycle."""


class LooseObjectError(GitodbError):
    """A loose object file is malformed."""


class RefError(GitodbError):
    """A ref is malformed, missing, or an update's old-value check failed."""


class LockError(RefError):
    """A lock file is held by another writer."""


class ReftableError(GitodbError):
    """A reftable table or stack is malformed."""


class RepositoryError(GitodbError):
    """No repository was found, or its layout or config is unusable."""


class ConfigError(RepositoryError):
    """A config file or a ``-c`` setting cannot be parsed."""


class ObjectCheckError(ObjectFormatError):
    """Commit, tree or tag content fails Git's checks before it is hashed or written.

    ``details`` holds the ``error:`` lines Git prints before its ``fatal:`` line.
    """

    def __init__(self, message: str, *, details: list[str] | None = None,
                 path: str | os.PathLike[str] | None = None, offset: int | None = None) -> None:
        self.details = list(details or [])
        super().__init__(message, path=path, offset=offset)


class ObjectWriteError(GitodbError):
    """An object could not be stored (read error on the source, I/O error on the store)."""
