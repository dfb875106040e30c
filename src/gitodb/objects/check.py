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
"""

from __future__ import annotations

from gitodb.errors import ObjectCheckError, ObjectParseError
from gitodb.objects.commit import parse_commit_links
from gitodb.objects.format import ObjectFormat
from gitodb.objects.tag import parse_tag_fields
from gitodb.objects.tree import parse_entries

Buffer = bytes | bytearray | memoryview


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
            text = {"bogus": f"bogus commit object {null}",
                    "bad-tree": f"bad tree pointer in commit {null}"}.get(
                        e.reason, f"bad parents in commit {null}")
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
            raise ObjectCheckError("refusing to create malformed object", details=[
                "object fails fsck: duplicateEntries: contains duplicate file entries"])

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
