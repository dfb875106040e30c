"""Type aliases and protocols shared by every layer (the top layer: imports nothing).

``Buffer`` is what a parser or writer accepts as bytes; ``Hasher`` is what an object
format's ``new_hasher()`` returns; ``Progress`` is the callback a long library call
reports its progress through.
"""

from __future__ import annotations

import mmap
from typing import Any, Protocol

__all__ = ["Buffer", "Hasher", "Progress", "Record"]

#: Anything a reader or writer takes as bytes without copying it first.
Buffer = bytes | bytearray | memoryview | mmap.mmap


class Hasher(Protocol):
    """A hashlib-like hash in progress (``hashlib.sha256()``, SHA-1DC's hasher)."""

    def update(self, data: Buffer, /) -> None:
        """Add ``data`` to what is hashed."""

    def digest(self) -> bytes:
        """The hash of everything added so far."""

    def hexdigest(self) -> str:
        """``digest()`` in lowercase hex."""


class Progress(Protocol):
    """The progress protocol of long library calls (index-pack, verify, checks).

    Called as ``progress(title, done, total, finished)``: ``title`` names the phase
    as Git's progress line does (``"Indexing objects"``, ``"Resolving deltas"``...),
    ``done`` counts the units finished so far out of ``total`` (0 when unknown), and
    ``finished`` is True once, on the phase's last call.  A plain function with that
    signature satisfies it::

        def show(title: str, done: int, total: int, finished: bool) -> None:
            print(f"{title}: {done}/{total}", "done" if finished else "")
    """

    def __call__(self, title: str, done: int, total: int, finished: bool) -> None:
        """Report that ``done`` of ``total`` units of ``title`` are finished."""


class Record:
    """Base of a small mutable record: ``repr`` and ``==`` over its ``__slots__``, as a
    dataclass has them (a subclass lists its fields in ``__slots__`` and writes its
    ``__init__``).

    The records on every command's path are plain classes, not dataclasses: importing
    ``dataclasses`` (with ``inspect``, ``ast``, ``dis``, ``tokenize``) and generating each
    class's methods cost more than the rest of a short command's start-up.  Immutable
    records are ``typing.NamedTuple``.
    """

    __slots__: tuple[str, ...] = ()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__qualname__}({fields})"

    def __eq__(self, other: Any) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable: unhashable, as a dataclass
