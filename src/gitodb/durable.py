"""Durability like Git's: which files are flushed to disk, and how (``core.fsync``).

Git 2.36+ names the parts of a repository that may be synced before they are
renamed into place (``core.fsync``)::

    loose-object  pack  pack-metadata  commit-graph  index  reference
    objects = loose-object,pack            derived-metadata = pack-metadata,commit-graph
    committed = objects,reference          added = committed,index
    all = everything                       none = start from nothing

The value is a comma-separated list read from left to right: it starts from the
platform default (on Linux ``pack``, ``pack-metadata`` and ``commit-graph`` —
loose objects and refs are *not* synced by default), ``none`` empties that start,
a name adds its bits and ``-name`` removes them.  Names match Git's table by
prefix, so ``pack`` also means ``pack-metadata`` and ``commit`` means both
``commit-graph`` and ``committed``; an unknown one is ignored with Git's warning.
``core.fsyncObjectFiles`` (deprecated, warned about) syncs loose objects whatever
``core.fsync`` says.

``core.fsyncMethod`` says how: ``fsync`` (a full ``fsync(2)``), ``writeout-only``
(``sync_file_range(2)``: start and wait for the write-out, no disk cache flush;
a full fsync when that is unavailable) or ``batch``: inside a
:class:`gitodb.loose.write.LooseBatch` (Git's ODB transaction) each loose object
gets a write-out only and one real fsync at the end makes them all durable
before any becomes visible under its final name; outside a batch it is a full
fsync, as in Git.  ``GIT_TEST_FSYNC=0`` turns every sync off (Git's test suite
uses it).  Git never syncs directories, reflog appends or symref lock files, and
neither does gitodb.

Writers call :meth:`FsyncPolicy.sync` at the single point where a temporary or
lock file's content is complete, before the rename or link that publishes it.
"""

from __future__ import annotations

import os

from gitodb import trace2
from gitodb.errors import ConfigError, FsyncError
from gitodb.types import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar


class Component(int):
    """Git's ``enum fsync_component`` bits: an ``int`` whose ``|``, ``&`` and ``~`` stay
    ``Component`` (``~`` within the defined bits, as an ``IntFlag``'s).

    A plain ``int`` subclass rather than ``enum.IntFlag``: ``enum`` (with ``functools``
    and ``collections``) and the flag class's creation are start-up time of every
    command, for a set of six bits.
    """

    __slots__ = ()

    NONE: ClassVar[Component]
    LOOSE_OBJECT: ClassVar[Component]
    PACK: ClassVar[Component]
    PACK_METADATA: ClassVar[Component]
    COMMIT_GRAPH: ClassVar[Component]
    INDEX: ClassVar[Component]
    REFERENCE: ClassVar[Component]

    def __or__(self, other: int) -> Component:
        return Component(int(self) | other)

    __ror__ = __or__

    def __and__(self, other: int) -> Component:
        return Component(int(self) & other)

    __rand__ = __and__

    def __invert__(self) -> Component:
        return Component(~int(self) & _ALL_BITS)

    def __repr__(self) -> str:
        names = [n for n, b in _BITS if int(self) & b] or ["NONE"]
        return f"<Component.{'|'.join(names)}: {int(self)}>"


_BITS = (
    ("LOOSE_OBJECT", 1 << 0),
    ("PACK", 1 << 1),
    ("PACK_METADATA", 1 << 2),
    ("COMMIT_GRAPH", 1 << 3),
    ("INDEX", 1 << 4),
    ("REFERENCE", 1 << 5),
)
_ALL_BITS = (1 << len(_BITS)) - 1
Component.NONE = Component(0)
for _name, _bit in _BITS:
    setattr(Component, _name, Component(_bit))

OBJECTS = Component.LOOSE_OBJECT | Component.PACK
DERIVED_METADATA = Component.PACK_METADATA | Component.COMMIT_GRAPH
#: Git's FSYNC_COMPONENTS_DEFAULT (and the platform default everywhere but Windows).
DEFAULT_COMPONENTS = (OBJECTS | DERIVED_METADATA) & ~Component.LOOSE_OBJECT
COMMITTED = OBJECTS | Component.REFERENCE
ADDED = COMMITTED | Component.INDEX
ALL = (
    Component.LOOSE_OBJECT
    | Component.PACK
    | Component.PACK_METADATA
    | Component.COMMIT_GRAPH
    | Component.INDEX
    | Component.REFERENCE
)

#: Git's ``fsync_component_names`` table, in its order (prefix matching walks all of it).
COMPONENT_NAMES: tuple[tuple[str, Component], ...] = (
    ("loose-object", Component.LOOSE_OBJECT),
    ("pack", Component.PACK),
    ("pack-metadata", Component.PACK_METADATA),
    ("commit-graph", Component.COMMIT_GRAPH),
    ("index", Component.INDEX),
    ("objects", OBJECTS),
    ("reference", Component.REFERENCE),
    ("derived-metadata", DERIVED_METADATA),
    ("committed", COMMITTED),
    ("added", ADDED),
    ("all", ALL),
)


class Method(str):
    """``core.fsyncMethod``: ``Method.FSYNC``, ``WRITEOUT_ONLY`` or ``BATCH``, one
    instance each (compare with ``is``); ``Method(value)`` is the one spelled ``value``
    (``ValueError`` for an unknown one), as with ``enum.Enum``, without importing it."""

    __slots__ = ()

    FSYNC: ClassVar[Method]
    WRITEOUT_ONLY: ClassVar[Method]
    BATCH: ClassVar[Method]

    def __new__(cls, value: str) -> Method:
        try:
            return _METHODS[value]
        except (KeyError, TypeError):
            raise ValueError(f"{value!r} is not a valid Method") from None

    @property
    def value(self) -> str:
        """The configuration's spelling (``enum.Enum``'s ``value``)."""
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"<Method.{_METHOD_NAMES[self]}: {str.__repr__(self)}>"


_METHOD_NAMES = {"fsync": "FSYNC", "writeout-only": "WRITEOUT_ONLY", "batch": "BATCH"}
_METHODS: dict[str, Method] = {}
for _value, _name in _METHOD_NAMES.items():
    _METHODS[_value] = str.__new__(Method, _value)
    setattr(Method, _name, _METHODS[_value])
del _value, _name, _bit


def parse_components(
    value: str, warnings: list[str] | None = None, var: str = "core.fsync"
) -> Component:
    """Parse a ``core.fsync`` value exactly as Git's ``parse_fsync_components`` does.

    Warnings Git prints (without the ``warning: `` prefix) are appended to ``warnings``.
    Git's quirks are kept: separators are ``,`` (leading blanks of an item are
    skipped, trailing ones are part of it), ``none`` is recognised only as the last
    item, names match by prefix, and a lone ``-`` stops the parse.
    """
    warn = warnings if warnings is not None else []
    current = DEFAULT_COMPONENTS
    positive = negative = Component.NONE
    pos = 0
    while True:
        while pos < len(value) and value[pos] in ", \t\n\r":
            pos += 1
        end = value.find(",", pos)
        if end < 0:
            end = len(value)
        if value[pos:] == "none":  # strcmp on the rest of the string, as Git does
            current = Component.NONE
            pos = end
            continue
        item = value[pos:end]
        negated = item.startswith("-")
        if negated:
            item = item[1:]
            if not item:
                warn.append(f"invalid value for variable {var}")
        if not item:
            break
        found = False
        for name, bits in COMPONENT_NAMES:
            if name.startswith(item):  # strncmp(name, item, len(item))
                found = True
                if negated:
                    negative |= bits
                else:
                    positive |= bits
        if not found:
            warn.append(f"ignoring unknown core.fsync component '{item}'")
        pos = end
    return (current & ~negative) | positive


def env_bool(name: str, default: bool) -> bool:
    """``git_env_bool``: unset means ``default``; a bad value is Git's fatal error."""
    text = os.environ.get(name)
    if text is None:
        return default
    low = text.strip().lower()
    if low in ("true", "yes", "on", ""):
        return True
    if low in ("false", "no", "off"):
        return False
    try:
        return int(low) != 0
    except ValueError:
        raise ConfigError(f"bad boolean config value '{text}' for '{name}'") from None


class FsyncPolicy(NamedTuple):
    """What gets synced and how; :meth:`from_config` reads it like Git.

    ``object_files`` is the legacy ``core.fsyncObjectFiles`` (None when unset),
    ``enabled`` is false under ``GIT_TEST_FSYNC=0``, and ``warnings`` holds the
    messages Git prints while reading these settings.
    """

    components: Component = DEFAULT_COMPONENTS
    method: Method = Method.FSYNC
    object_files: bool | None = None
    enabled: bool = True
    warnings: tuple[str, ...] = ()

    @classmethod
    def from_config(cls, config: Any) -> FsyncPolicy:
        """Read ``core.fsync``, ``core.fsyncObjectFiles`` and ``core.fsyncMethod``.

        ``config`` is a :class:`gitodb.repo.config.Config` (or anything with its
        ``get_raw_all``/``get_bool``).  A key without a value, or a bad boolean,
        raises ``ConfigError`` with Git's message (its ``warnings`` attribute, when
        set, holds the warnings Git prints before it); unknown names are warnings.
        """
        warnings: list[str] = []
        raw = getattr(config, "get_raw_all", None)
        components = DEFAULT_COMPONENTS
        method = Method.FSYNC
        object_files: bool | None = None
        if raw is not None:
            for value in raw("core.fsync"):
                if value is None:
                    raise ConfigError("missing value for 'core.fsync'")
                components = parse_components(value, warnings)
            if raw("core.fsyncobjectfiles"):
                warnings.append("core.fsyncObjectFiles is deprecated; use core.fsync instead")
                try:
                    object_files = bool(config.get_bool("core.fsyncobjectfiles", False))
                except ConfigError as e:
                    # Git has printed the deprecation warning before it dies.
                    e.warnings = tuple(warnings)  # type: ignore[attr-defined]
                    raise
            for value in raw("core.fsyncmethod"):
                if value is None:
                    raise ConfigError("missing value for 'core.fsyncmethod'")
                try:
                    method = Method(value)
                except ValueError:
                    warnings.append(f"ignoring unknown core.fsyncMethod value '{value}'")
        return cls(
            components, method, object_files, env_bool("GIT_TEST_FSYNC", True), tuple(warnings)
        )

    def wants(self, component: Component) -> bool:
        """Whether files of ``component`` are synced (Git's ``fsync_components & c``)."""
        return bool(self.components & component)

    def batch_enabled(self, component: Component) -> bool:
        """Git's ``batch_fsync_enabled``: ``component`` is synced and the method is batch."""
        return self.wants(component) and self.method is Method.BATCH

    def sync(self, component: Component, fd: int, path: str) -> None:
        """Sync ``fd`` (the file at ``path``) if ``component`` is configured to be."""
        if self.wants(component):
            self.sync_now(fd, path)

    def sync_loose(self, fd: int, path: str, *, in_batch: bool = False) -> None:
        """Sync a finished loose object file as Git's ``close_loose_object`` does.

        ``in_batch``: the object is written inside a batch that ends with one
        real fsync (``LooseBatch``), so a write-out is enough here.
        """
        if self.batch_enabled(Component.LOOSE_OBJECT):
            if in_batch and self.enabled and writeout(fd):
                return
            self.sync_now(fd, path)
        elif self.object_files:
            self.sync_now(fd, path)
        else:
            self.sync(Component.LOOSE_OBJECT, fd, path)

    def sync_now(self, fd: int, path: str) -> None:
        """Git's ``fsync_or_die``: write-out only if so configured, else a full fsync.

        A failure raises ``FsyncError`` (Git: ``fatal: fsync error on '<path>'``).
        """
        if not self.enabled:
            return
        if self.method is Method.WRITEOUT_ONLY and writeout(fd):
            return
        full_sync(fd, path)


#: Git's defaults: packs and their indexes synced with fsync(2), nothing else.
DEFAULT_POLICY = FsyncPolicy()

#: Sync nothing (``core.fsync=none``), for callers that make scratch files.
NO_SYNC = FsyncPolicy(components=Component.NONE)


# Git's order of the fsync counters in its trace2 output
trace2.count("fsync", "writeout-only", 0)
trace2.count("fsync", "hardware-flush", 0)


def full_sync(fd: int, path: str) -> None:
    """``fsync(2)`` on ``fd``; an error raises ``FsyncError`` naming ``path``."""
    trace2.count("fsync", "hardware-flush")
    try:
        os.fsync(fd)
    except OSError as e:
        raise FsyncError(f"fsync error on '{path}': {e.strerror}", path=path) from e


_SYNC_FILE_RANGE: Any = None


def writeout(fd: int) -> bool:
    """Write ``fd``'s dirty pages out and wait (no disk cache flush); False if unsupported.

    Git's ``FSYNC_WRITEOUT_ONLY`` on Linux: ``sync_file_range(fd, 0, 0,
    WAIT_BEFORE | WRITE | WAIT_AFTER)``.  Python has no binding, so libc's is
    called through ctypes; where it is missing the caller falls back to fsync.
    """
    global _SYNC_FILE_RANGE
    trace2.count("fsync", "writeout-only")  # Git counts the attempt, supported or not
    if _SYNC_FILE_RANGE is None:
        _SYNC_FILE_RANGE = _load_sync_file_range() or False
    if not _SYNC_FILE_RANGE:
        return False
    flags = 1 | 2 | 4  # SYNC_FILE_RANGE_WAIT_BEFORE | _WRITE | _WAIT_AFTER
    return bool(_SYNC_FILE_RANGE(fd, 0, 0, flags) == 0)


def _load_sync_file_range() -> Any:
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        func = libc.sync_file_range
    except (OSError, AttributeError, ImportError):
        return None
    func.argtypes = (ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint)
    func.restype = ctypes.c_int
    return func
