"""One exception hierarchy for everything gitodb raises on bad input or bad use.

Every error that comes from stored data names the file and, where it is known,
the byte offset in it, so a message can point at the damage.  The CLI turns any
``GitodbError`` into one ``fatal:`` line and exit status 128, like Git.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


class GitodbError(Exception):
    """Base class of every error gitodb raises on purpose.

    ``details`` holds the ``error:`` lines Git prints before its ``fatal:`` line.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | os.PathLike[str] | None = None,
        offset: int | None = None,
        details: list[str] | None = None,
    ) -> None:
        self.message = message
        self.details = list(details or [])
        self.path = os.fspath(path) if path is not None else None
        self.offset = offset
        super().__init__(self._render())

    def _render(self) -> str:
        where = ""
        # A message that already names the file (in Git's words) gets no suffix.
        named = self.offset is None and self.path is not None and self.path in self.message
        if self.path is not None and not named:
            where = self.path if self.offset is None else f"{self.path} at offset {self.offset}"
        elif self.offset is not None:
            where = f"offset {self.offset}"
        return f"{self.message} ({where})" if where else self.message

    @property
    def git_message(self) -> str:
        """The text of Git's ``fatal:`` line for this error.

        By default the message with the file and offset (Git's wording names the
        file where Git's does); a subclass whose messages are Git's own lines,
        which carry no location, returns the bare message, and the location stays
        in ``path``, ``offset`` and ``str()``.
        """
        return str(self)


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
    ``links``: for ``bad-parents``, the tree and the parents read before the bad line
    (Git looks each one up as it reads it, before it reaches that line).
    """

    def __init__(
        self,
        message: str,
        *,
        reason: str = "",
        path: str | os.PathLike[str] | None = None,
        offset: int | None = None,
        links: tuple[bytes, list[bytes]] | None = None,
    ) -> None:
        self.reason = reason
        self.links = links
        super().__init__(message, path=path, offset=offset)


class ObjectNotFoundError(GitodbError):
    """No object with this id exists in the object database."""


class ObjectTypeError(GitodbError):
    """An object is not of the type that was asked for (``object X is a tree, not a commit``)."""


class TreeDepthError(GitodbError):
    """A tree nests deeper than ``core.maxTreeDepth`` allows (Git's fail-safe:
    ``exceeded maximum allowed tree depth``)."""

    MESSAGE = "exceeded maximum allowed tree depth"


class UnreadableTreeError(GitodbError):
    """A tree names a subtree that is missing or is not a tree; the message is Git's
    ``error:`` line (``Could not read X``, ``Object X not a tree``), and ``oid`` the
    subtree's id."""

    def __init__(self, oid: bytes, missing: bool) -> None:
        self.oid = oid
        super().__init__(
            f"Could not read {oid.hex()}" if missing else f"Object {oid.hex()} not a tree"
        )


class BadRevisionError(GitodbError):
    """A revision expression cannot be resolved."""


class AmbiguousObjectNameError(BadRevisionError):
    """An abbreviated id or name matches more than one object: a name that does not
    resolve, as Git treats it.

    ``candidates`` are the ids it matches (those of the kind asked for, when a kind
    was); ``hints``, where the resolver made them, Git's ``hint:`` lines listing
    them (without the prefix).
    """

    candidates: list[bytes] = []
    hints: list[str] = []

    def report_text(self) -> str:
        """Git's ``error:`` line and ``hint:`` lines for this ambiguity."""
        return f"error: {self.message}\n" + "".join(f"hint: {h}\n" for h in self.hints)


class PackError(GitodbError):
    """A pack, pack index or reverse index is malformed or inconsistent."""


class RevIndexChecksumError(PackError):
    """A ``.rev`` whose trailing checksum does not match (Git ignores such a file)."""


class MultiPackIndexError(PackError):
    """A multi-pack-index is malformed.

    ``ignorable`` is set where Git prints an ``error:`` and reads the packs without
    the file (damaged header or chunk table); otherwise Git dies.
    """

    def __init__(self, message: str, *, ignorable: bool = False, **kw: object) -> None:
        self.ignorable = ignorable
        super().__init__(message, **kw)  # type: ignore[arg-type]

    @property
    def git_message(self) -> str:
        """Git's line: its multi-pack-index messages never name the file (t5319
        compares them whole); ``path`` and ``offset`` still say where."""
        return self.message


class DeltaError(PackError):
    """A delta is malformed, copies out of bounds, has the wrong size, or forms a cycle."""


class MissingDeltaBaseError(DeltaError, ObjectNotFoundError):
    """A REF_DELTA's base is in no pack and not loose (a thin pack indexed as it
    came): the object cannot be read, so to Git it is missing (``cat-file
    --batch`` says ``<id> missing`` and goes on).  Also an ``ObjectNotFoundError``."""


class LooseObjectError(GitodbError):
    """A loose object file is malformed."""


class RefError(GitodbError):
    """A ref is malformed, missing, or an update's old-value check failed."""


class BrokenRefError(RefError):
    """A loose ref file holds neither an object id nor a ``ref:`` line."""

    @property
    def git_message(self) -> str:
        """Git's line (``... reference broken``) names no file; ``path`` still does."""
        return self.message


class RefHookVetoError(RefError):
    """The ``reference-transaction`` hook refused a transaction: Git dies with it."""


class LockError(RefError):
    """A lock file is held by another writer."""


class RefWriteError(RefError):
    """A ref, reflog or lock file could not be written (disk full, I/O error, bad path)."""


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

    def __init__(
        self,
        message: str,
        *,
        details: list[str] | None = None,
        path: str | os.PathLike[str] | None = None,
        offset: int | None = None,
    ) -> None:
        super().__init__(message, path=path, offset=offset, details=details)


class ObjectWriteError(GitodbError):
    """An object could not be stored (read error on the source, I/O error on the store)."""


class FsyncError(GitodbError):
    """Flushing a finished file to disk failed (Git: ``fsync error on '<path>'``)."""

    def _render(self) -> str:
        # The message already names the file, as Git's does.
        return self.message


class ObjectCollisionError(GitodbError):
    """Data hashed with SHA-1 completes a known collision attack (SHA-1DC detected it).

    ``hexdigest`` is the SHA-1 the attack aimed for; ``git_message`` is the
    line Git prints after ``fatal:``.
    """

    def __init__(
        self,
        hexdigest: str,
        *,
        path: str | os.PathLike[str] | None = None,
        offset: int | None = None,
    ) -> None:
        self.hexdigest = hexdigest
        super().__init__(
            f"SHA-1 appears to be part of a collision attack: {hexdigest}", path=path, offset=offset
        )

    @property
    def git_message(self) -> str:
        """Git's message, without gitodb's location suffix."""
        return self.message

    def located(
        self, path: str | os.PathLike[str] | None, offset: int | None = None
    ) -> ObjectCollisionError:
        """The same error, naming where the colliding data was read from."""
        return ObjectCollisionError(self.hexdigest, path=path, offset=offset)


class ObjectIdCollisionError(PackError):
    """A pack holds an object whose id the repository already has with other content.

    That is two different objects with one id (Git: ``SHA1 COLLISION FOUND WITH
    <id> !``); ``git_message`` is Git's line.
    """

    def __init__(
        self, oid_hex: str, *, path: str | os.PathLike[str] | None = None, offset: int | None = None
    ) -> None:
        self.oid_hex = oid_hex
        super().__init__(f"SHA1 COLLISION FOUND WITH {oid_hex} !", path=path, offset=offset)

    @property
    def git_message(self) -> str:
        """Git's message, without gitodb's location suffix."""
        return self.message


class OutOfMemoryError(GitodbError, MemoryError):
    """An object (of ``size`` bytes, when known) does not fit in memory."""

    def __init__(
        self,
        size: int | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        offset: int | None = None,
    ) -> None:
        self.size = size
        super().__init__(out_of_memory_message(size), path=path, offset=offset)


class AllocationLimitError(OutOfMemoryError):
    """A buffer of ``size`` bytes would exceed ``GIT_ALLOC_LIMIT`` (Git's test knob)."""

    def __init__(self, size: int, limit: int) -> None:
        GitodbError.__init__(self, f"attempting to allocate {size} over limit {limit}")
        self.size = size
        self.limit = limit


def check_allocation(size: int) -> None:
    """Refuse a whole-object buffer of ``size`` bytes above ``GIT_ALLOC_LIMIT``.

    Git checks every allocation against that variable (bytes, with an optional
    ``k``/``m``/``g`` suffix; unset or 0 means no limit) and reports the size it
    asked for: for an object's content one byte more than its size, for the NUL it
    appends.  gitodb checks where it would hold a whole object whose size a pack
    declares, so a test can prove a large object is streamed instead.
    """
    text = os.environ.get("GIT_ALLOC_LIMIT", "")
    if not text:
        return
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    scale = units.get(text[-1:].lower(), 1)
    digits = text[:-1] if scale != 1 else text
    limit = int(digits) * scale if digits.isdigit() else 0
    if limit and size + 1 > limit:
        raise AllocationLimitError(size + 1, limit)


def out_of_memory_message(size: int | None) -> str:
    """Git's words for a failed allocation."""
    if size is None:
        return "Out of memory, malloc failed"
    return f"Out of memory, malloc failed (tried to allocate {size} bytes)"


class GitodbWarning(UserWarning):
    """Damage gitodb works around, reported where Git prints an ``error:`` or ``warning:``.

    ``level`` is ``"error"`` or ``"warning"`` (Git's prefix).  The CLI prints each as
    Git's line; library users get them as ordinary Python warnings.
    """

    def __init__(self, level: str, message: str) -> None:
        self.level = level
        self.message = message
        super().__init__(f"{level}: {message}")


class NativeCoreMissingWarning(UserWarning):
    """gitodb runs without its native core (``gitodb._native``): correct, but slow.

    Raised once, when the pure-Python SHA-1DC is first chosen.  A wheel built where
    no C compiler worked is pure Python (``py3-none-any``); ``gitodb version
    --build-options`` says what is built.  The CLI does not print it (its output is
    Git's); install a binary wheel, or build with a C compiler, to get the speed.
    """


#: Where ``report`` sends ``(level, message)`` instead of ``warnings.warn``: the CLI
#: sets it, for the length of a command, to print Git's line (so that no command
#: imports ``warnings`` before it has damage to report).
reporter: Callable[[str, str], None] | None = None


def report(level: str, message: str) -> None:
    """Report damage that is worked around (see ``GitodbWarning``)."""
    if reporter is not None:
        reporter(level, message)
        return
    import warnings

    warnings.warn(GitodbWarning(level, message), stacklevel=3)


def warn_native_core_missing(message: str) -> None:
    """Warn once that the native core is missing (``NativeCoreMissingWarning``); a
    command (``reporter`` set) says nothing: its output is Git's."""
    if reporter is not None:
        return
    import warnings

    warnings.warn(NativeCoreMissingWarning(message), stacklevel=4)
