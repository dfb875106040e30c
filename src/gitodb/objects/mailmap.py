"""``.mailmap`` files: canonical names and emails for the identities in commits and tags.

``repository_mailmap(repo, top)`` reads what Git's ``read_mailmap`` reads, later
entries overriding earlier ones: ``<top>/.mailmap`` (the work tree's), the blob
``mailmap.blob`` names (``HEAD:.mailmap`` by default when there is no work tree),
and the file ``mailmap.file``.

Lines are read by Git's rules (``read_mailmap_line``): ``Proper Name <proper@email>``,
``<proper@email> <commit@email>``, ``Proper Name <proper@email> Commit Name
<commit@email>``; ``#`` starts a comment line.  Emails and names compare
case-insensitively.

Example::

    m = Mailmap()
    m.read(b"A Thor <athor@example.com> A U Thor <author@example.com>\\n")
    m.map(b"A U Thor", b"author@example.com")    # (b"A Thor", b"athor@example.com")
"""

from __future__ import annotations

import os

from gitodb.errors import GitodbError
from gitodb.types import Protocol

_SPACE = b" \t\n\r\x0b\x0c"


def _name_and_email(
    buf: bytes, allow_empty_email: bool
) -> tuple[bytes | None, bytes, bytes] | None:
    """``(name or None, email, rest after '>')`` of the first ``name <email>``, or None."""
    left = buf.find(b"<")
    if left < 0:
        return None
    right = buf.find(b">", left + 1)
    if right < 0:
        return None
    if not allow_empty_email and right == left + 1:
        return None
    name = buf[:left].strip(_SPACE)
    return (name or None), buf[left + 1 : right], buf[right + 1 :]


class _Entry:
    __slots__ = ("name", "email", "names")

    def __init__(self) -> None:
        self.name: bytes | None = None
        self.email: bytes | None = None
        self.names: dict[bytes, tuple[bytes | None, bytes | None]] = {}


class Mailmap:
    """A mailmap: ``read`` adds the lines of a file, ``map`` rewrites an identity."""

    def __init__(self) -> None:
        self._entries: dict[bytes, _Entry] = {}

    def __bool__(self) -> bool:
        return bool(self._entries)

    def read(self, data: bytes) -> None:
        """Add the mappings of one mailmap file's content."""
        for line in data.split(b"\n"):
            if line.startswith(b"#"):
                continue
            first = _name_and_email(line, False)
            if first is None:
                continue
            name1, email1, rest = first
            name2: bytes | None = None
            email2: bytes | None = None
            if rest.strip(b"\r") and rest != b"":
                second = _name_and_email(rest, True)
                if second is not None:
                    name2, email2, _ = second
            self._add(name1, email1, name2, email2)

    def read_file(self, path: str) -> None:
        """Add the mappings of the file at ``path``; a missing file is no error in Git."""
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return
        self.read(data)

    def _add(
        self,
        new_name: bytes | None,
        new_email: bytes | None,
        old_name: bytes | None,
        old_email: bytes | None,
    ) -> None:
        if old_email is None:
            old_email, new_email = new_email, None
        assert old_email is not None
        entry = self._entries.setdefault(old_email.lower(), _Entry())
        if old_name is None:
            if new_name is not None:
                entry.name = new_name
            if new_email is not None:
                entry.email = new_email
        else:
            entry.names[old_name.lower()] = (new_name, new_email)

    def map(self, name: bytes, email: bytes) -> tuple[bytes, bytes]:
        """The canonical ``(name, email)`` for an identity (unchanged if not mapped)."""
        found = self.find(name, email)
        return (name, email) if found is None else found

    def find(self, name: bytes, email: bytes) -> tuple[bytes, bytes] | None:
        """The canonical ``(name, email)`` if an entry maps this identity, else None
        (Git's ``map_user`` returning 0)."""
        entry = self._entries.get(email.lower())
        if entry is None:
            return None
        sub = entry.names.get(name.lower())
        if sub is not None:
            new_name, new_email = sub
        elif entry.name is not None or entry.email is not None:
            new_name, new_email = entry.name, entry.email
        else:
            return None
        return (
            new_name if new_name is not None else name,
            new_email if new_email is not None else email,
        )


#: the header lines whose identities a mailmap rewrites, per object type
_IDENT_HEADERS = {"commit": (b"author ", b"committer "), "tag": (b"tagger ",)}


def map_idents(mailmap: Mailmap, type_name: str, data: bytes) -> bytes:
    """A commit's or tag's content with the identities of its header rewritten by
    ``mailmap`` (Git's ``replace_idents_using_mailmap``, as ``cat-file --use-mailmap``
    prints it): ``author``/``committer`` lines of a commit, ``tagger`` of a tag.
    Each mapped ``Name <email>`` becomes the canonical one, the rest of the line
    (date and zone) stays; other objects, and a header without a mapped identity,
    come back unchanged."""
    headers = _IDENT_HEADERS.get(type_name)
    if headers is None or not mailmap:
        return data
    out: list[bytes] = []
    pos = 0
    changed = False
    while pos < len(data) and data[pos : pos + 1] != b"\n":  # the header ends at a blank line
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end + 1
        line = data[pos:end]
        for h in headers:
            if line.startswith(h):
                mapped = _map_ident_line(mailmap, line, len(h))
                if mapped is not None:
                    line, changed = mapped, True
                break
        out.append(line)
        pos = end
    if not changed:
        return data
    out.append(data[pos:])
    return b"".join(out)


def _map_ident_line(mailmap: Mailmap, line: bytes, start: int) -> bytes | None:
    """``line`` (``<header> Name <email> <date> <tz>``) with its identity mapped, or
    None when it has none to map (Git's ``split_ident_line`` and ``map_user``)."""
    lt = line.find(b"<", start)
    if lt < 0:
        return None
    gt = line.find(b">", lt + 1)
    if gt < 0:
        return None
    name = line[start:lt].rstrip(_SPACE)
    found = mailmap.find(name, line[lt + 1 : gt])
    if found is None:
        return None
    return line[:start] + b"%s <%s>" % found + line[gt + 1 :]


class _Config(Protocol):
    def get(self, key: str) -> str | None: ...


class _Repository(Protocol):
    """What ``repository_mailmap`` needs of a repository (objects sits below repo)."""

    @property
    def config(self) -> _Config: ...

    def read_object(self, name: str) -> tuple[str, bytes]: ...


def repository_mailmap(repo: _Repository, top: str | None) -> Mailmap:
    """The mailmap Git reads for ``repo`` whose work tree top is ``top`` (None: none)."""
    m = Mailmap()
    if top is not None:
        m.read_file(os.path.join(top, ".mailmap"))
    blob = repo.config.get("mailmap.blob")
    if blob is None and top is None:
        blob = "HEAD:.mailmap"
    if blob:
        try:
            kind, data = repo.read_object(blob)
        except GitodbError:
            kind, data = "", b""  # Git ignores a missing mailmap blob
        if kind == "blob":
            m.read(data)
    path = repo.config.get("mailmap.file")
    if path:
        m.read_file(os.path.expanduser(path))
    return m
