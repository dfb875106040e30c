"""The checks ``git hash-object`` (without ``--literally``) runs on commit, tree and tag content.

These follow Git 2.39, the reference Git of this project: a commit must parse the
way ``parse_commit_buffer`` parses it, a tree must walk with ``tree_entry``, a tag
must parse with ``parse_tag_buffer``.  Bad content raises ``ObjectCheckError``
whose ``message`` is Git's ``fatal:`` text and whose ``details`` are the
``error:`` lines Git prints first, so the CLI can print the same bytes.

Git keeps one table of every object id it has looked up during a run, with the
type it was looked up as; naming the same id as a tree in one place and as a
commit in another is refused.  ``ObjectChecker`` keeps that table, so one
checker per ``hash-object`` run reproduces Git's behaviour across files.
"""

from __future__ import annotations

from gitodb.errors import ObjectCheckError
from gitodb.objects.format import ObjectFormat

Buffer = bytes | bytearray | memoryview

_HEX = frozenset(b"0123456789abcdefABCDEF")
_TAG_TARGET_TYPES = (b"blob", b"tree", b"commit", b"tag")


def _parse_hex(buf: bytes, pos: int, hexsz: int) -> bytes | None:
    """Git's ``get_oid_hex``: exactly ``hexsz`` hex digits (either case) at ``pos``."""
    text = buf[pos:pos + hexsz]
    if len(text) != hexsz or not _HEX.issuperset(text):
        return None
    return bytes.fromhex(text.decode("ascii"))


class ObjectChecker:
    """Checks content like one ``git hash-object`` process (one id-to-type table per run)."""

    def __init__(self, fmt: ObjectFormat) -> None:
        self.fmt = fmt
        self._looked_up: dict[bytes, str] = {}

    def check(self, type_name: str, data: Buffer) -> None:
        """Raise ``ObjectCheckError`` if ``data`` is not acceptable content for ``type_name``.

        Blobs (and any other type) are always acceptable.
        """
        if type_name == "commit":
            self.check_commit(data)
        elif type_name == "tree":
            self.check_tree(data)
        elif type_name == "tag":
            self.check_tag(data)

    def _lookup(self, oid: bytes, type_name: str, errors: list[str]) -> bool:
        """Git's ``lookup_<type>``: an id already seen as another type is refused."""
        seen = self._looked_up.setdefault(oid, type_name)
        if seen != type_name:
            errors.append(f"object {oid.hex()} is a {seen}, not a {type_name}")
            return False
        return True

    def check_commit(self, data: Buffer) -> None:
        """Check a commit as Git 2.39's ``parse_commit_buffer`` does."""
        buf = bytes(data)
        hexsz = self.fmt.hexsz
        null = self.fmt.null_hex
        tree_len = hexsz + 5      # "tree " + hex
        parent_len = hexsz + 7    # "parent " + hex
        end = len(buf)
        errors: list[str] = []

        def fail(message: str) -> ObjectCheckError:
            errors.append(message)
            return ObjectCheckError("corrupt commit", details=errors)

        if end <= tree_len + 1 or buf[:5] != b"tree " or buf[tree_len] != 0x0A:
            raise fail(f"bogus commit object {null}")
        tree = _parse_hex(buf, 5, hexsz)
        if tree is None:
            raise fail(f"bad tree pointer in commit {null}")
        if not self._lookup(tree, "tree", errors):
            raise fail(f"bad tree pointer {tree.hex()} in commit {null}")
        pos = tree_len + 1
        while pos + parent_len < end and buf.startswith(b"parent ", pos):
            parent = _parse_hex(buf, pos + 7, hexsz)
            # Git also wants at least one byte after the parent line.
            if end <= pos + parent_len + 1 or parent is None or buf[pos + parent_len] != 0x0A:
                raise fail(f"bad parents in commit {null}")
            pos += parent_len + 1
            if not self._lookup(parent, "commit", errors):
                raise fail(f"bad parent {parent.hex()} in commit {null}")

    def check_tree(self, data: Buffer) -> None:
        """Check a tree as Git 2.39's ``init_tree_desc``/``tree_entry`` walk does."""
        buf = bytes(data)
        rawsz = self.fmt.rawsz
        end = len(buf)
        pos = 0
        while pos < end:
            size = end - pos
            # Git checks that the byte before the last id's place is the NUL ending a name.
            if size < rawsz + 3 or buf[end - rawsz - 1] != 0:
                raise ObjectCheckError("too-short tree object")
            if buf[pos] == 0x20:
                raise ObjectCheckError("malformed mode in tree entry")
            space = buf.find(b" ", pos)
            mode = buf[pos:space] if space >= 0 else buf[pos:]
            # A mode is octal digits up to the space; the NUL found above stops a runaway.
            if space < 0 or not mode.isdigit() or b"8" in mode or b"9" in mode:
                raise ObjectCheckError("malformed mode in tree entry")
            name = space + 1
            if buf[name] == 0:
                raise ObjectCheckError("empty filename in tree entry")
            # The NUL at end - rawsz - 1 guarantees one is found and the id fits.
            pos = buf.index(b"\0", name) + 1 + rawsz

    def check_tag(self, data: Buffer) -> None:
        """Check a tag as Git 2.39's ``parse_tag_buffer`` does."""
        buf = bytes(data)
        hexsz = self.fmt.hexsz
        null = self.fmt.null_hex
        end = len(buf)
        errors: list[str] = []
        corrupt = ObjectCheckError("corrupt tag", details=errors)

        if end < hexsz + 24 or buf[:7] != b"object ":
            raise corrupt
        target = _parse_hex(buf, 7, hexsz)
        if target is None or buf[7 + hexsz] != 0x0A:
            raise corrupt
        pos = 8 + hexsz
        if not buf.startswith(b"type ", pos):
            raise corrupt
        pos += 5
        nl = buf.find(b"\n", pos)
        if nl < 0 or nl - pos >= 20:
            raise corrupt
        # Git copies the type into a C string, so it ends at an embedded NUL.
        type_name = buf[pos:nl].split(b"\0", 1)[0]
        if type_name not in _TAG_TARGET_TYPES:
            errors.append(f"unknown tag type '{type_name.decode('utf-8', 'surrogateescape')}'"
                          f" in {null}")
            raise ObjectCheckError("corrupt tag", details=errors)
        if not self._lookup(target, type_name.decode("ascii"), errors):
            errors.append(f"bad tag pointer to {target.hex()} in {null}")
            raise ObjectCheckError("corrupt tag", details=errors)
        pos = nl + 1
        if not (pos + 4 < end and buf.startswith(b"tag ", pos)):
            raise corrupt
        if buf.find(b"\n", pos + 4) < 0:
            raise corrupt


def check_object(fmt: ObjectFormat, type_name: str, data: Buffer) -> None:
    """Check one object's content like ``git hash-object -t <type>``; raise ``ObjectCheckError``."""
    ObjectChecker(fmt).check(type_name, data)
