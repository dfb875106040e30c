"""The file-like reader shared by loose objects and pack entries."""

from __future__ import annotations

from abc import ABC, abstractmethod


class ObjectStream(ABC):
    """Reads one object's content as a subclass inflates it, chunk by chunk.

    A subclass sets ``type_name``, ``size`` and ``_pending`` (content already
    inflated) and ``_remaining`` (content still to come), and implements
    ``_next_chunk``, which inflates more, lowers ``_remaining`` and raises our
    error when the stored data is damaged.
    """

    CHUNK = 1 << 16
    type_name: str
    size: int
    _pending: bytes
    _remaining: int

    def read(self, n: int = -1) -> bytes:
        """Read up to ``n`` bytes of content (all remaining when ``n < 0``)."""
        parts = []
        want = n if n >= 0 else self.size + 1
        while want > 0:
            if self._pending:
                piece = self._pending[:want]
                self._pending = self._pending[len(piece) :]
                parts.append(piece)
                want -= len(piece)
                continue
            if self._remaining == 0:
                break
            self._pending = self._next_chunk()
        return b"".join(parts)

    @abstractmethod
    def _next_chunk(self) -> bytes:
        """Inflate and return the next non-empty piece of content."""

    @abstractmethod
    def close(self) -> None:
        """Release what the stream holds."""

    def __enter__(self) -> ObjectStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
