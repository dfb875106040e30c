"""A reftable writer's options, in a module of their own: every command that opens a
reftable stack makes them (from the repository's config), and only one that writes
needs ``gitodb.reftable.writer``."""

from __future__ import annotations

from gitodb.errors import ReftableError
from gitodb.objects.format import SHA1, ObjectFormat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class WriteOptions:
    """``reftable.blockSize``, ``reftable.restartInterval``, the object format, obj index.

    Immutable, compared and hashed by its fields (a plain class, not a dataclass: the
    refs of every command that opens a reftable stack make one).
    """

    __slots__ = ("block_size", "restart_interval", "fmt", "write_obj_index")
    block_size: int
    restart_interval: int
    fmt: ObjectFormat
    write_obj_index: bool

    def __init__(
        self,
        block_size: int = 4096,
        restart_interval: int = 16,
        fmt: ObjectFormat = SHA1,
        write_obj_index: bool = True,
    ) -> None:
        if not 0 < block_size < (1 << 24):
            raise ReftableError(f"invalid reftable block size {block_size}")
        if not 0 < restart_interval <= 0xFFFF:
            raise ReftableError(f"invalid restart interval {restart_interval}")
        for name, value in zip(
            self.__slots__, (block_size, restart_interval, fmt, write_obj_index), strict=True
        ):
            object.__setattr__(self, name, value)

    def _fields(self) -> tuple[int, int, ObjectFormat, bool]:
        return (self.block_size, self.restart_interval, self.fmt, self.write_obj_index)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field '{name}'")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field '{name}'")

    def __repr__(self) -> str:
        return (
            f"WriteOptions(block_size={self.block_size!r}, "
            f"restart_interval={self.restart_interval!r}, fmt={self.fmt!r}, "
            f"write_obj_index={self.write_obj_index!r})"
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, WriteOptions)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())
