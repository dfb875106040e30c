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
from gitodb.objects.fsck import (
    ATTR_MAX_FILE_SIZE,
    ATTR_MAX_LINE_LENGTH,
    ERROR,
    FATAL,
    IGNORE,
    INFO,
    WARN,
    Fsck,
    FsckSeverities,
    GitmodulesParser,
)
from gitodb.objects.header import TYPE_NAMES
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

    def lookup(self, oid: bytes, type_name: str, errors: list[str]) -> bool:
        """Git's ``lookup_<type>``: an id already seen as another type is refused
        (False, with Git's ``error:`` line added to ``errors``)."""
        seen = self._looked_up.setdefault(oid, type_name)
        if seen != type_name:
            errors.append(f"object {oid.hex()} is a {seen}, not a {type_name}")
            return False
        return True

    def check_commit(self, data: Buffer, oid: bytes | None = None) -> None:
        """Check a commit as Git 2.39's ``parse_commit_buffer`` does; the messages
        name ``oid`` (hash-object's: the null id)."""
        null = oid.hex() if oid is not None else self.fmt.null_hex
        errors: list[str] = []
        buf = bytes(data)
        try:
            tree, parents, _pos = parse_commit_links(buf, self.fmt)
            bad_line = None
        except ObjectParseError as e:
            text = {
                "bogus": f"bogus commit object {null}",
                "bad-tree": f"bad tree pointer in commit {null}",
            }.get(e.reason, f"bad parents in commit {null}")
            if e.reason != "bad-parents":
                raise ObjectCheckError("corrupt commit", details=[text]) from None
            # Git looks each parent up as it reads it: the ids before the bad line
            # are looked up (and may be refused) before that line is reported.
            assert e.links is not None  # parse_commit_links gives them with bad-parents
            tree, parents = e.links
            bad_line = text
        if not self.lookup(tree, "tree", errors):
            errors.append(f"bad tree pointer {tree.hex()} in commit {null}")
            raise ObjectCheckError("corrupt commit", details=errors)
        for parent in parents:
            if not self.lookup(parent, "commit", errors):
                errors.append(f"bad parent {parent.hex()} in commit {null}")
                raise ObjectCheckError("corrupt commit", details=errors)
        if bad_line is not None:
            raise ObjectCheckError("corrupt commit", details=[bad_line])

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

    def check_tag(self, data: Buffer, oid: bytes | None = None) -> None:
        """Check a tag as Git 2.39's ``parse_tag_buffer`` does; the messages name
        ``oid`` (hash-object's: the null id)."""
        null = oid.hex() if oid is not None else self.fmt.null_hex
        errors: list[str] = []
        try:
            target, type_name, _name = parse_tag_fields(bytes(data), self.fmt)
        except ObjectParseError as e:
            if e.reason == "unknown-type":
                errors.append(f"{e.message} in {null}")
            raise ObjectCheckError("corrupt tag", details=errors) from None
        if not self.lookup(target, type_name.decode("ascii"), errors):
            errors.append(f"bad tag pointer to {target.hex()} in {null}")
            raise ObjectCheckError("corrupt tag", details=errors)


class _CollectingFsck(Fsck):
    """Fsck whose findings are kept as ``(level, "<msgId>: <text>")`` (``git mktag``'s
    error function): a warning counts as an error unless ``strict`` is off."""

    def __init__(
        self,
        fmt: ObjectFormat,
        severities: FsckSeverities,
        refname_ok: Callable[[str], bool] | None,
        strict: bool,
    ) -> None:
        super().__init__(fmt, severities, refname_ok=refname_ok)
        self.strict_input = strict
        self.found: list[tuple[str, str]] = []

    def report(self, oid: bytes, msg_id: str, text: str) -> bool:
        severity = self.severities.of(msg_id)
        if severity == IGNORE:
            return False
        if severity == FATAL:
            severity = ERROR
        elif severity == INFO:
            severity = WARN
        if severity == WARN and not self.strict_input:
            self.found.append(("warning", f"{msg_id}: {text}"))
            return False
        self.found.append(("error", f"{msg_id}: {text}"))
        return True


def check_tag_input(
    fmt: ObjectFormat,
    data: bytes,
    severities: FsckSeverities,
    *,
    strict: bool = True,
    refname_ok: Callable[[str], bool] | None = None,
) -> tuple[bool, list[tuple[str, str]]]:
    """Git's ``fsck_tag_standalone`` as ``git mktag`` runs it: whether the tag fails,
    and what was reported in order, ``("error"|"warning", "<msgId>: <text>")``.

    With ``strict`` (mktag's default) every finding reported as a warning is an
    error.  As in Git, the verdict is that of the last check that ran: a bad tagger
    line followed by a header that is only a warning passes, its error printed.
    """
    fsck = _CollectingFsck(fmt, severities, refname_ok, strict)
    failed = fsck.check("tag", data, bytes(fmt.rawsz))
    return failed, fsck.found


def check_object(fmt: ObjectFormat, type_name: str, data: Buffer) -> None:
    """Check one object's content like ``git hash-object -t <type>``; raise ``ObjectCheckError``."""
    ObjectChecker(fmt).check(type_name, data)


class PackObjectChecker:
    """What ``index-pack`` checks of received objects: Git's fsck of each object
    (``fsck``: ``--strict``, ``--fsck-objects``; see ``gitodb.objects.fsck`` for the
    message ids and severities), and the links every commit, tree and tag has,
    which :meth:`finish` requires to be in the pack or the repository.

    Called as ``checker(type_num, data, oid, offset)`` for every object (from
    several threads at once: it only adds to sets and lists).  An object with an
    error raises ``PackError("fsck error in packed object")`` whose details are
    Git's ``error:`` lines; warnings are printed as they are found.
    """

    def __init__(
        self,
        fmt: ObjectFormat,
        path: str | None = None,
        *,
        fsck: bool = True,
        severities: FsckSeverities | None = None,
        refname_ok: Callable[[str], bool] | None = None,
        gitmodules_parser: GitmodulesParser | None = None,
    ) -> None:
        self.fmt = fmt
        self.path = path
        self.fsck = Fsck(
            fmt,
            severities or FsckSeverities(strict=True),
            refname_ok=refname_ok,
            gitmodules_parser=gitmodules_parser,
        )
        self.run_fsck = fsck
        self.links: list[bytes] = []
        #: linked objects found in the repository rather than the pack (after finish)
        self.foreign = 0
        # blobs of the pack, and those a .gitattributes check would refuse: a tree
        # naming a blob as .gitattributes may come after it
        self._blobs: set[bytes] = set()
        self._attr_problems: dict[bytes, tuple[str, str]] = {}

    def __call__(self, type_num: int, data: bytes, oid: bytes, offset: int) -> None:
        name = TYPE_NAMES[type_num]
        if self.run_fsck:
            if name == "blob":
                self._note_blob(data, oid)
            errors: list[str] = []
            fsck = Fsck(
                self.fmt,
                self.fsck.severities,
                _split_reporter(errors),
                self.fsck.refname_ok,
                self.fsck.gitmodules_parser,
            )
            fsck.gitattributes_found = self.fsck.gitattributes_found
            fsck.gitmodules_found = self.fsck.gitmodules_found
            fsck.blobs_done = self.fsck.blobs_done
            if fsck.check(name, data, oid):
                # Git's bare line: the error: details name the object
                raise PackError("fsck error in packed object", details=errors)
        self.links.extend(_links(name, data, self.fmt))

    def _note_blob(self, data: bytes, oid: bytes) -> None:
        self._blobs.add(oid)
        if len(data) > ATTR_MAX_FILE_SIZE:
            self._attr_problems[oid] = ("gitattributesLarge", ".gitattributes too large to parse")
        elif len(data) >= ATTR_MAX_LINE_LENGTH:
            text = data.split(b"\0", 1)[0]
            if max(map(len, text.split(b"\n"))) >= ATTR_MAX_LINE_LENGTH:
                self._attr_problems[oid] = (
                    "gitattributesLineLength",
                    ".gitattributes has too long lines to parse",
                )

    def finish(self, pack_oids: Sequence[bytes], contains: Callable[[bytes], bool] | None) -> None:
        """Every linked object must be in the pack or (via ``contains``) the repository;
        ``foreign`` counts those only the repository has."""
        have = set(pack_oids)
        seen: set[bytes] = set()
        for link in self.links:
            if link in have or link in seen:
                continue
            if contains is not None and contains(link):
                seen.add(link)
                continue
            # Git's bare line (the pack is the one being indexed)
            raise PackError(f"did not receive expected object {link.hex()}")
        self.foreign = len(seen)

    def finish_blobs(self, read_blob: Callable[[bytes], tuple[str, bytes] | None] | None) -> None:
        """Git's ``fsck_finish``: the ``.gitattributes``/``.gitmodules`` blobs trees
        named and that were not checked when they arrived (``read_blob`` reads the
        repository's; None outside one).  Raises ``PackError`` on an error."""
        if not self.run_fsck:
            return
        errors: list[str] = []
        fsck = Fsck(
            self.fmt,
            self.fsck.severities,
            _split_reporter(errors),
            gitmodules_parser=self.fsck.gitmodules_parser,
        )
        fsck.gitattributes_found = self.fsck.gitattributes_found
        fsck.gitmodules_found = self.fsck.gitmodules_found
        fsck.blobs_done = self.fsck.blobs_done
        err = False
        # .gitattributes blobs of the pack were measured as they came; a .gitmodules
        # one is read back below (its content was not kept)
        for oid in [o for o, what in fsck.pending_blobs() if o in self._blobs]:
            if oid in fsck.gitmodules_found:
                continue
            fsck.blobs_done.add(oid)
            if oid in fsck.gitattributes_found and oid in self._attr_problems:
                err |= fsck.report(oid, *self._attr_problems[oid])
        if any(True for _ in fsck.pending_blobs()) and read_blob is None:
            raise PackError("cannot perform queued object checks outside of a repository")
        err |= fsck.finish(read_blob)
        if err:
            raise PackError("fsck error in pack objects", details=errors)


def _split_reporter(errors: list[str]) -> Callable[[str], None]:
    """Warnings go to stderr now; errors are kept for the ``PackError``'s details."""

    def reporter(line: str) -> None:
        if line.startswith("error: "):
            errors.append(line[len("error: ") :])
        else:
            report("warning", line[len("warning: ") :])

    return reporter


def _links(type_name: str, data: bytes, fmt: ObjectFormat) -> list[bytes]:
    """The ids a commit (tree, parents), tag (object) or tree (entries but gitlinks)
    names; what cannot be parsed names nothing (fsck has reported it)."""
    return [oid for oid, _type in typed_links(type_name, data, fmt)]


def typed_links(type_name: str, data: bytes, fmt: ObjectFormat) -> list[tuple[bytes, str]]:
    """``(id, type it must have)`` for each object a commit, tag or tree names, as
    Git's ``fsck_walk`` looks them up: a commit's tree and parents, a tag's object
    (as its ``type`` line says), a tree's entries but gitlinks.  What cannot be
    parsed names nothing (fsck has reported it)."""
    hexsz, rawsz = fmt.hexsz, fmt.rawsz
    out: list[tuple[bytes, str]] = []

    def hex_at(pos: int) -> bytes | None:
        text = data[pos : pos + hexsz]
        if len(text) != hexsz or text.strip(b"0123456789abcdef"):
            return None
        return bytes.fromhex(text.decode())

    if type_name == "commit":
        pos, key, kind = 0, b"tree ", "tree"
        while data.startswith(key, pos):
            got = hex_at(pos + len(key))
            if got is not None:
                out.append((got, kind))
            nl = data.find(b"\n", pos)
            if nl < 0:
                break
            pos, key, kind = nl + 1, b"parent ", "commit"
    elif type_name == "tag":
        if data.startswith(b"object "):
            got = hex_at(7)
            line = data[8 + hexsz :].split(b"\n", 1)[0]
            if got is not None and line.startswith(b"type "):
                out.append((got, line[5:].decode("ascii", "replace")))
    elif type_name == "tree":
        try:
            entries = parse_entries(data, rawsz)
        except ObjectParseError:
            return out
        out.extend(
            (entry_id, "tree" if mode.lstrip(b"0") == b"40000" else "blob")
            for mode, _name, entry_id in entries
            if mode != b"160000"
        )
    return out
