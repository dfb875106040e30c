"""The loose object map: ``objects/loose-object-idx``, each object's id in both formats.

A repository with ``extensions.compatObjectFormat`` stores its objects in the
main format and keeps, for each object written, its id in the compatibility
format.  Git 2.55 keeps that mapping in a text file in the objects directory::

    # loose-object-idx
    <main id hex> <compat id hex>
    ...

One line is appended per object written (under ``loose-object-idx.lock``, held
only as a mutex: the file itself is appended to, as Git does).  The empty tree,
the empty blob and the null id map to their counterparts without a line.

Reading follows Git: a file whose first line is not the header is ignored, and
reading stops at the first malformed line (what came before it counts).
"""

from __future__ import annotations

import os

from gitodb.errors import ObjectWriteError
from gitodb.lockfile import LockFile
from gitodb.objects.format import ObjectFormat

MAP_NAME = "loose-object-idx"
HEADER = b"# loose-object-idx\n"
# Git waits for the lock without limit; a stale lock left by a crash must not hang us.
LOCK_TIMEOUT_MS = 10_000


def _well_known(fmt: ObjectFormat) -> list[bytes]:
    """The empty tree, the empty blob and the null id of ``fmt`` (always mapped)."""
    return [
        fmt.new_hasher(b"tree 0\0").digest(),
        fmt.new_hasher(b"blob 0\0").digest(),
        fmt.null_oid,
    ]


class LooseObjectMap:
    """The id mapping of one objects directory (see the module docstring)."""

    def __init__(
        self, objects_dir: str | os.PathLike[str], main: ObjectFormat, compat: ObjectFormat
    ) -> None:
        self.objects_dir = os.fspath(objects_dir)
        self.path = os.path.join(self.objects_dir, MAP_NAME)
        self.main = main
        self.compat = compat
        self._to_compat: dict[bytes, bytes] = {}
        self._to_main: dict[bytes, bytes] = {}
        self._stamp: tuple[int, int, int] | None = None
        for a, b in zip(_well_known(main), _well_known(compat), strict=True):
            self._insert(a, b)
        self.reload()

    def _insert(self, main_oid: bytes, compat_oid: bytes) -> bool:
        # The first mapping of an id wins, in both directions, as in Git.
        added = False
        if main_oid not in self._to_compat:
            self._to_compat[main_oid] = compat_oid
            added = True
        if compat_oid not in self._to_main:
            self._to_main[compat_oid] = main_oid
            added = True
        return added

    def reload(self) -> None:
        """Read lines another process appended since the last read."""
        try:
            st = os.stat(self.path)
        except (FileNotFoundError, NotADirectoryError):
            return
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        if stamp == self._stamp:
            return
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except OSError:
            return
        self._stamp = stamp
        if not data.startswith(HEADER):
            return
        want = self.main.hexsz + 1 + self.compat.hexsz
        for line in data[len(HEADER) :].split(b"\n")[:-1]:  # an unterminated tail is partial
            pair = _parse_line(line, want, self.main.hexsz)
            if pair is None:
                return
            self._insert(*pair)

    def to_compat(self, main_oid: bytes) -> bytes | None:
        """The compatibility id of ``main_oid``, or None if it is not mapped."""
        got = self._to_compat.get(main_oid)
        if got is None:
            self.reload()  # another process (the writer of a pipe into us) may have added it
            got = self._to_compat.get(main_oid)
        return got

    def to_main(self, compat_oid: bytes) -> bytes | None:
        """The main-format id of ``compat_oid``, or None if it is not mapped."""
        got = self._to_main.get(compat_oid)
        if got is None:
            self.reload()
            got = self._to_main.get(compat_oid)
        return got

    def compat_ids(self) -> list[bytes]:
        """Every compatibility id known (for abbreviated-id lookups)."""
        self.reload()
        return list(self._to_main)

    def add(self, main_oid: bytes, compat_oid: bytes) -> None:
        """Record a pair: appended to the file unless it is known already.

        Raises ``ObjectWriteError`` naming the file when it cannot be written.
        """
        if self._to_compat.get(main_oid) == compat_oid:
            return
        if not self._insert(main_oid, compat_oid):
            return
        line = b"%s %s\n" % (main_oid.hex().encode(), compat_oid.hex().encode())
        lock = LockFile(self.path, timeout_ms=LOCK_TIMEOUT_MS)
        try:
            fd = os.open(
                self.path,
                os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0),
                0o666,
            )
            try:
                if os.fstat(fd).st_size == 0:
                    line = HEADER + line
                view = memoryview(line)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
        except OSError as e:
            raise ObjectWriteError(
                f"failed to write loose object index {self.path}: {e.strerror or e}"
            ) from None
        finally:
            lock.rollback()


def _parse_line(line: bytes, want: int, main_hexsz: int) -> tuple[bytes, bytes] | None:
    if len(line) != want or line[main_hexsz : main_hexsz + 1] != b" ":
        return None
    a, b = line[:main_hexsz], line[main_hexsz + 1 :]
    if not (_is_hex(a) and _is_hex(b)):
        return None
    return bytes.fromhex(a.decode("ascii")), bytes.fromhex(b.decode("ascii"))


_HEX_DIGITS = frozenset(b"0123456789abcdefABCDEF")


def _is_hex(text: bytes) -> bool:
    return all(c in _HEX_DIGITS for c in text)
