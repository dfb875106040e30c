"""The checks ``git hash-object`` (without ``--literally``) runs on commit, tree and tag content.

These follow Git 2.39, the reference Git of this project: a commit must parse the
way ``parse_commit_buffer`` parses it, a tree must walk with ``tree_entry``, a tag
must parse with ``parse_tag_buffer``.  The parsing is the object model's own
(``parse_commit_links``, ``parse_entries``, ``parse_tag_fields``); this module adds
the id-to-type table and Git's error wording.  Bad content raises ``ObjectCheckError``
whose ``message`` is Git's ``fatal:`` text and whose ``details`` are the
``error:`` lines Git prints first, so the CLI can print the same bytes.

Git keeps one table of every object id it has looked up during a run, with the
type it was looked up as; naming the same id as a tree in one place and as a
commit in another is refused.  ``ObjectChecker`` keeps that table, so one
checker per ``hash-object`` run reproduces Git's behaviour across files.

``PackObjectChecker`` is the other checker Git runs: ``index-pack --strict``'s
fsck of every received object (syntax, tree order and modes, and links that
must resolve in the pack or the repository).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gitodb.errors import ObjectCheckError, ObjectParseError, PackError, report
from gitodb.objects.commit import parse_commit_links
from gitodb.objects.format import ObjectFormat
from gitodb.objects.header import TYPE_NAMES
from gitodb.objects.headers import parse_headers
from gitodb.objects.tag import parse_tag_fields
from gitodb.objects.tree import parse_entries
from gitodb.types import Buffer


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
        null = self.fmt.null_hex
        errors: list[str] = []
        try:
            tree, parents, _pos = parse_commit_links(bytes(data), self.fmt)
        except ObjectParseError as e:
            text = {
                "bogus": f"bogus commit object {null}",
                "bad-tree": f"bad tree pointer in commit {null}",
            }.get(e.reason, f"bad parents in commit {null}")
            raise ObjectCheckError("corrupt commit", details=[text]) from None
        if not self._lookup(tree, "tree", errors):
            errors.append(f"bad tree pointer {tree.hex()} in commit {null}")
            raise ObjectCheckError("corrupt commit", details=errors)
        for parent in parents:
            if not self._lookup(parent, "commit", errors):
                errors.append(f"bad parent {parent.hex()} in commit {null}")
                raise ObjectCheckError("corrupt commit", details=errors)

    def check_tree(self, data: Buffer) -> None:
        """Check a tree as Git 2.39's ``init_tree_desc``/``tree_entry`` walk does."""
        try:
            entries = parse_entries(bytes(data), self.fmt.rawsz)
        except ObjectParseError as e:
            raise ObjectCheckError(e.message) from None
        # Git 2.55 runs fsck on what hash-object writes; of its tree checks this one
        # is an error by default (the others are warnings or ignored there)
        names = [name for _mode, name, _oid in entries]
        if len(set(names)) != len(names):
            raise ObjectCheckError(
                "refusing to create malformed object",
                details=["object fails fsck: duplicateEntries: contains duplicate file entries"],
            )

    def check_tag(self, data: Buffer) -> None:
        """Check a tag as Git 2.39's ``parse_tag_buffer`` does."""
        null = self.fmt.null_hex
        errors: list[str] = []
        try:
            target, type_name, _name = parse_tag_fields(bytes(data), self.fmt)
        except ObjectParseError as e:
            if e.reason == "unknown-type":
                errors.append(f"{e.message} in {null}")
            raise ObjectCheckError("corrupt tag", details=errors) from None
        if not self._lookup(target, type_name.decode("ascii"), errors):
            errors.append(f"bad tag pointer to {target.hex()} in {null}")
            raise ObjectCheckError("corrupt tag", details=errors)


def check_object(fmt: ObjectFormat, type_name: str, data: Buffer) -> None:
    """Check one object's content like ``git hash-object -t <type>``; raise ``ObjectCheckError``."""
    ObjectChecker(fmt).check(type_name, data)


_COMMIT_HEADERS = (b"tree ", b"parent ", b"author ", b"committer ")
_TREE_MODES = {b"100644", b"100755", b"120000", b"40000", b"160000", b"100664", b"100600"}


class PackObjectChecker:
    """What ``index-pack --strict`` checks (Git's fsck of received objects): each
    object is well formed, and every object a commit, tree or tag points at is in
    the pack or the repository.  Errors are ``PackError`` naming the pack and offset.

    Called as ``checker(type_num, data, oid, offset)`` for every object (from
    several threads at once: it only appends); :meth:`finish` checks the links.
    """

    def __init__(self, fmt: ObjectFormat, path: str | None = None) -> None:
        self.fmt = fmt
        self.path = path
        self.links: list[bytes] = []

    def _fail(self, oid: bytes, offset: int, reason: str) -> PackError:
        return PackError(
            f"fsck error in packed object {oid.hex()}: {reason}", path=self.path, offset=offset
        )

    def _hex_id(self, text: bytes, oid: bytes, offset: int, what: str) -> bytes:
        hexsz = self.fmt.hexsz
        if len(text) != hexsz or text.strip(b"0123456789abcdef"):
            raise self._fail(oid, offset, f"invalid {what} id '{text.decode(errors='replace')}'")
        return bytes.fromhex(text.decode())

    def __call__(self, type_num: int, data: bytes, oid: bytes, offset: int) -> None:
        name = TYPE_NAMES[type_num]
        if name == "commit":
            self._check_commit(data, oid, offset)
        elif name == "tree":
            self._check_tree(data, oid, offset)
        elif name == "tag":
            self._check_tag(data, oid, offset)

    def _headers(self, data: bytes, oid: bytes, offset: int) -> list[tuple[bytes, bytes | None]]:
        """The header lines (continuations joined), parsed by the object model."""
        block = parse_headers(data)
        if block.message is None and not data.endswith(b"\n"):
            raise self._fail(oid, offset, "unterminated header")
        return block.headers

    def _check_commit(self, data: bytes, oid: bytes, offset: int) -> None:
        headers = self._headers(data, oid, offset)
        if not headers or headers[0][0] != b"tree" or headers[0][1] is None:
            raise self._fail(oid, offset, "missingTree: invalid format - expected 'tree' line")
        self.links.append(self._hex_id(headers[0][1], oid, offset, "tree"))
        i = 1
        while i < len(headers) and headers[i][0] == b"parent" and headers[i][1] is not None:
            self.links.append(self._hex_id(headers[i][1] or b"", oid, offset, "parent"))
            i += 1
        if i >= len(headers) or headers[i][0] != b"author" or headers[i][1] is None:
            raise self._fail(oid, offset, "missingAuthor: invalid format - expected 'author' line")
        if i + 1 >= len(headers) or headers[i + 1][0] != b"committer" or headers[i + 1][1] is None:
            raise self._fail(
                oid, offset, "missingCommitter: invalid format - expected 'committer' line"
            )

    def _check_tag(self, data: bytes, oid: bytes, offset: int) -> None:
        headers = self._headers(data, oid, offset)
        if len(headers) < 3 or headers[0][0] != b"object" or headers[0][1] is None:
            raise self._fail(oid, offset, "missingObject: invalid format - expected 'object' line")
        self.links.append(self._hex_id(headers[0][1], oid, offset, "object"))
        if headers[1][0] != b"type" or (headers[1][1] or b"").decode(errors="replace") not in (
            TYPE_NAMES.values()
        ):
            raise self._fail(oid, offset, "badType: invalid 'type' value")
        if headers[2][0] != b"tag" or not headers[2][1]:
            raise self._fail(oid, offset, "missingTagEntry: invalid format - expected 'tag' line")
        if len(headers) < 4 or headers[3][0] != b"tagger":  # a warning in Git's fsck
            report(
                "warning",
                f"object {oid.hex()}: missingTaggerEntry: invalid format - expected 'tagger' line",
            )

    def _check_tree(self, data: bytes, oid: bytes, offset: int) -> None:
        try:
            entries = parse_entries(data, self.fmt.rawsz)
        except ObjectParseError:
            raise self._fail(oid, offset, "badTree: truncated tree entry") from None
        prev: bytes | None = None
        for mode, name, entry_id in entries:
            if mode not in _TREE_MODES:
                raise self._fail(
                    oid, offset, f"badFilemode: bad mode {mode.decode(errors='replace')}"
                )
            if b"/" in name or name in (b".", b"..", b".git"):
                raise self._fail(oid, offset, f"badTreeName: bad entry name {name!r}")
            key = name + b"/" if mode == b"40000" else name
            if prev is not None and key <= prev:
                raise self._fail(oid, offset, "treeNotSorted: not properly sorted or duplicate")
            prev = key
            if mode != b"160000":
                self.links.append(entry_id)

    def finish(self, pack_oids: Sequence[bytes], contains: Callable[[bytes], bool] | None) -> None:
        """Every linked object must be in the pack or (via ``contains``) the repository."""
        have = set(pack_oids)
        for link in self.links:
            if link in have:
                continue
            if contains is not None and contains(link):
                have.add(link)
                continue
            raise PackError(f"did not receive expected object {link.hex()}", path=self.path)
