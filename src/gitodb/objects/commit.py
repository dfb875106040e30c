"""Commit objects, parsed lazily and serialised back to the same bytes.

The tree and parent lines are read by the rules of Git's ``parse_commit_buffer``
(``tree`` first, ``parent`` lines right after it, exact id lengths); the committer
date for walking by ``parse_commit_date``.  Everything else comes from the header
block (``gitodb.objects.headers``), which keeps every byte.

Example::

    c = Commit(data, SHA1)              # content as stored, nothing parsed yet
    c.tree, c.parents, c.author.name, c.message
    c.serialize() == data               # rebuilt from the parsed headers
    new = Commit.create(tree=t, parents=[c.id], author=sig, committer=sig,
                        message=b"msg\\n")
"""

from __future__ import annotations

from gitodb.errors import ObjectParseError
from gitodb.objects.format import SHA1, ObjectFormat, as_oid
from gitodb.objects.headers import (
    Header,
    check_header,
    serialize_headers,
)
from gitodb.objects.signature import Signature
from gitodb.objects.stored import HeaderObject

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from gitodb.objects.tag import Tag

_HEX = frozenset(b"0123456789abcdefABCDEF")
# Headers with a typed accessor; the rest are ``extra_headers``.
_KNOWN = (b"author", b"committer", b"encoding", b"gpgsig", b"gpgsig-sha256", b"mergetag")


def parse_hex(buf: bytes, pos: int, hexsz: int) -> bytes | None:
    """Git's ``get_oid_hex``: exactly ``hexsz`` hex digits (either case) at ``pos``."""
    text = buf[pos : pos + hexsz]
    if len(text) != hexsz or not _HEX.issuperset(text):
        return None
    return bytes.fromhex(text.decode("ascii"))


_HEXDIGITS = b"0123456789abcdefABCDEF"


def parse_commit_links(buf: bytes, fmt: ObjectFormat) -> tuple[bytes, list[bytes], int]:
    """``(tree, parents, offset after them)`` by Git's ``parse_commit_buffer`` rules.

    Raises ``ObjectParseError`` with reason ``bogus``, ``bad-tree`` or ``bad-parents``
    (whose ``links`` are the tree and the parents before the bad line).
    """
    hexsz = fmt.hexsz
    # Fast path for the usual layout (``tree <hex>\n`` then ``parent <hex>\n`` lines,
    # something after them that is no other parent line); anything unusual takes the
    # exact rule-by-rule reading below.
    pos = hexsz + 6
    if buf.startswith(b"tree ") and buf[pos - 1 : pos] == b"\n":
        ids = [buf[5 : pos - 1]]
        while buf.startswith(b"parent ", pos) and buf[pos + hexsz + 7 : pos + hexsz + 8] == b"\n":
            ids.append(buf[pos + 7 : pos + hexsz + 7])
            pos += hexsz + 8
        if (
            pos < len(buf)
            and not buf.startswith(b"parent ", pos)
            and not any(i.strip(_HEXDIGITS) for i in ids)
        ):
            got = [bytes.fromhex(i.decode("ascii")) for i in ids]
            return got[0], got[1:], pos
    tree_len = hexsz + 5  # "tree " + hex
    parent_len = hexsz + 7  # "parent " + hex
    end = len(buf)
    if end <= tree_len + 1 or buf[:5] != b"tree " or buf[tree_len] != 0x0A:
        raise ObjectParseError("bogus commit object", reason="bogus", offset=0)
    tree = parse_hex(buf, 5, hexsz)
    if tree is None:
        raise ObjectParseError("bad tree pointer in commit", reason="bad-tree", offset=5)
    pos = tree_len + 1
    parents: list[bytes] = []
    while pos + parent_len < end and buf.startswith(b"parent ", pos):
        parent = parse_hex(buf, pos + 7, hexsz)
        # Git also wants at least one byte after the parent line.
        if end <= pos + parent_len + 1 or parent is None or buf[pos + parent_len] != 0x0A:
            raise ObjectParseError(
                "bad parents in commit", reason="bad-parents", offset=pos, links=(tree, parents)
            )
        parents.append(parent)
        pos += parent_len + 1
    return tree, parents, pos


def parse_commit_date(buf: bytes, pos: int) -> int:
    """Git's ``parse_commit_date``: the committer time, 0 when it cannot be read."""
    if not buf.startswith(b"author", pos):
        return 0
    nl = buf.find(b"\n", pos)
    if nl < 0 or not buf.startswith(b"committer", nl + 1):
        return 0
    start = nl + 1
    eol = buf.find(b"\n", start)
    if eol < 0:
        return 0
    gt = buf.rfind(b">", start, eol)
    if gt < 0:
        return 0
    p = gt + 1
    while p < eol and buf[p] in b" \t\r\x0b\x0c":
        p += 1
    q = p
    while q < eol and 0x30 <= buf[q] <= 0x39:
        q += 1
    if q == p:
        return 0
    return min(int(buf[p:q]), 2**64 - 1)


#: what Git trims from the end of a subject line
_TRAILING_WS = b" \t\n\r\x0b\x0c"


def subject_of(msg: bytes) -> bytes:
    """``%s``: the first paragraph's lines (right-trimmed) joined by spaces, without
    splitting the whole message (``split_message``'s subject, faster)."""
    n = len(msg)
    pos = 0
    parts: list[bytes] = []
    while pos < n:
        eol = msg.find(b"\n", pos)
        end = n if eol < 0 else eol + 1
        line = msg[pos:end].rstrip(_TRAILING_WS)
        pos = end
        if line:
            parts.append(line)
        elif parts:
            break
    return b" ".join(parts)


class Commit(HeaderObject):
    """A commit: ``tree``, ``parents``, ``author``, ``committer``, ``encoding``,
    ``gpgsig``, ``gpgsig_sha256``, ``mergetags``, ``extra_headers``, ``message``.

    ``raw`` is the content as given; ``serialize()`` rebuilds it from the parsed
    header block.  Ids are binary (``fmt.rawsz`` bytes).
    """

    type_name = "commit"
    __slots__ = ("_links",)

    def __init__(self, data: bytes, fmt: ObjectFormat = SHA1, oid: bytes | None = None) -> None:
        super().__init__(data, fmt, oid)
        self._links: tuple[bytes, list[bytes], int] | None = None

    def _get_links(self) -> tuple[bytes, list[bytes], int]:
        if self._links is None:
            self._links = parse_commit_links(self.raw, self.fmt)
        return self._links

    @property
    def tree(self) -> bytes:
        """The id of the commit's tree."""
        return self._get_links()[0]

    @property
    def parents(self) -> list[bytes]:
        """Parent ids in order (the ``parent`` lines right after ``tree``, as Git reads)."""
        return self._get_links()[1]

    @property
    def commit_date(self) -> int:
        """The committer timestamp as Git's revision walk reads it (0 if unreadable)."""
        return parse_commit_date(self.raw, self._get_links()[2])

    @property
    def headers(self) -> list[Header]:
        """Every header as ``(key, value)``, in order; value None for a line without space."""
        return self.block.headers

    def _signature(self, key: bytes) -> Signature | None:
        value = self.block.get(key)
        return None if value is None else Signature(value)

    @property
    def author(self) -> Signature | None:
        """The first ``author`` line."""
        return self._signature(b"author")

    @property
    def committer(self) -> Signature | None:
        """The first ``committer`` line."""
        return self._signature(b"committer")

    @property
    def encoding(self) -> bytes | None:
        """The ``encoding`` header (None means UTF-8)."""
        return self.block.get(b"encoding")

    @property
    def gpgsig(self) -> bytes | None:
        """The ``gpgsig`` header (signature over the SHA-1 form), lines joined by LF."""
        return self.block.get(b"gpgsig")

    @property
    def gpgsig_sha256(self) -> bytes | None:
        """The ``gpgsig-sha256`` header (signature over the SHA-256 form)."""
        return self.block.get(b"gpgsig-sha256")

    @property
    def mergetags(self) -> list[Tag]:
        """The tags of merged signed tags (``mergetag`` headers), as ``Tag`` objects."""
        from gitodb.objects.tag import Tag

        return [Tag(v + b"\n", self.fmt) for v in self.block.get_all(b"mergetag")]

    @property
    def extra_headers(self) -> list[Header]:
        """Headers without a typed accessor, in order (duplicates of typed ones too)."""
        out: list[Header] = []
        seen: set[bytes] = set()
        _tree, parents, _pos = self._get_links()
        skip = 1 + len(parents)  # the tree and parent lines read by the link rules
        for i, (key, value) in enumerate(self.block.headers):
            if i < skip:
                continue
            if key in _KNOWN and (key == b"mergetag" or key not in seen):
                seen.add(key)
                continue
            out.append((key, value))
        return out

    @property
    def message(self) -> bytes:
        """The message after the blank line (b"" when there is none)."""
        return self.block.message or b""

    def serialize(self) -> bytes:
        """The content, rebuilt from the parsed header block."""
        b = self.block
        return serialize_headers(b.headers, b.message, b.terminated)

    def __repr__(self) -> str:
        return f"Commit({self.id.hex()})"

    @classmethod
    def create(
        cls,
        *,
        tree: str | bytes,
        author: Signature,
        committer: Signature,
        message: bytes | str,
        parents: Sequence[str | bytes] = (),
        encoding: bytes | str | None = None,
        mergetags: Iterable[bytes] = (),
        extra_headers: Iterable[Header] = (),
        gpgsig: bytes | None = None,
        gpgsig_sha256: bytes | None = None,
        fmt: ObjectFormat = SHA1,
    ) -> Commit:
        """A new commit, headers in Git's order: tree, parents, author, committer,
        encoding, mergetags, extra headers, signatures.

        ``mergetags`` are tag object contents.  Ids may be hex or binary.  Raises
        ``ObjectFormatError`` for a header that would not read back.
        """
        headers: list[Header] = [(b"tree", as_oid(fmt, tree).hex().encode())]
        headers += [(b"parent", as_oid(fmt, p).hex().encode()) for p in parents]
        headers.append((b"author", author.raw))
        headers.append((b"committer", committer.raw))
        if encoding is not None:
            headers.append(
                (b"encoding", encoding.encode() if isinstance(encoding, str) else encoding)
            )
        headers += [(b"mergetag", t[:-1] if t.endswith(b"\n") else t) for t in mergetags]
        headers += list(extra_headers)
        if gpgsig is not None:
            headers.append((b"gpgsig", gpgsig.rstrip(b"\n")))
        if gpgsig_sha256 is not None:
            headers.append((b"gpgsig-sha256", gpgsig_sha256.rstrip(b"\n")))
        for key, value in headers:
            check_header(key, value or b"")
        body = message.encode("utf-8", "surrogateescape") if isinstance(message, str) else message
        return cls(serialize_headers(headers, body), fmt)
