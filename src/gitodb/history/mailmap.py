"""``.mailmap``: canonical names and emails for the identities in commits.

Read like Git's ``read_mailmap``: the work tree's ``.mailmap``, the blob
``mailmap.blob`` names (``HEAD:.mailmap`` by default in a bare repository), and the
file ``mailmap.file``; later entries override earlier ones.  Emails and names
are matched case-insensitively, as Git does.

Example::

    mm = Mailmap.for_repository(repo)
    name, email = mm.map(b"A U Thor", b"old@example.com")
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from gitodb.errors import GitodbError

if TYPE_CHECKING:
    from gitodb.repo import Repository

_WS = b" \t\n\r\x0b\x0c"


def _name_and_email(buf: bytes, allow_empty_email: bool
                    ) -> tuple[bytes | None, bytes | None, bytes | None]:
    """Git's ``parse_name_and_email``: ``(name, email, rest)``; email None if none."""
    left = buf.find(b"<")
    if left < 0:
        return None, None, None
    right = buf.find(b">", left + 1)
    if right < 0 or (not allow_empty_email and right == left + 1):
        return None, None, None
    name = buf[:left].strip(_WS) or None
    return name, buf[left + 1:right], buf[right + 1:]


class Mailmap:
    """Old email (and maybe old name) -> proper name and email."""

    def __init__(self) -> None:
        # email (lower) -> [(default name, default email), {name (lower): (name, email)}]
        self._map: dict[bytes, tuple[list[bytes | None], dict[bytes, tuple[bytes | None,
                                                                          bytes | None]]]] = {}

    def __bool__(self) -> bool:
        return bool(self._map)

    def add(self, new_name: bytes | None, new_email: bytes | None, old_name: bytes | None,
            old_email: bytes | None) -> None:
        """Git's ``add_mapping``."""
        if old_email is None:
            old_email, new_email = new_email, None
        assert old_email is not None
        entry = self._map.setdefault(old_email.lower(), ([None, None], {}))
        if old_name is None:
            if new_name is not None:
                entry[0][0] = new_name
            if new_email is not None:
                entry[0][1] = new_email
        else:
            entry[1][old_name.lower()] = (new_name, new_email)

    def read(self, data: bytes) -> None:
        """Add the entries of one mailmap file's content."""
        for line in data.split(b"\n"):
            if line[:1] == b"#":
                continue
            name1, email1, rest = _name_and_email(line, False)
            if email1 is None:
                continue
            name2, email2, _rest = _name_and_email(rest or b"", True)
            if email2 is not None:
                self.add(name1, email1, name2, email2)
            else:
                self.add(name1, email1, None, None)

    def map(self, name: bytes, email: bytes) -> tuple[bytes, bytes]:
        """Git's ``map_user``: the proper ``(name, email)`` (unchanged when unmapped)."""
        entry = self._map.get(email.lower())
        if entry is None:
            return name, email
        new_name, new_email = entry[0]
        sub = entry[1].get(name.lower()) if entry[1] else None
        if sub is not None:
            new_name, new_email = sub
        return (new_name if new_name is not None else name,
                new_email if new_email is not None else email)

    @classmethod
    def for_repository(cls, repo: Repository) -> Mailmap:
        """The mailmap Git would read for ``repo``."""
        from gitodb.repo import find_work_tree_top

        mm = cls()
        top = find_work_tree_top(repo, explicit_git_dir="GIT_DIR" in os.environ)
        if top is not None:
            _read_file(mm, os.path.join(top, ".mailmap"))
        blob = repo.config.get("mailmap.blob")
        if blob is None and top is None:
            blob = "HEAD:.mailmap"
        if blob:
            try:
                oid = repo.resolve(blob)
                type_name, data = repo.odb.read(oid)
                if type_name == "blob":
                    mm.read(data)
            except GitodbError:
                pass   # Git ignores a missing mailmap blob
        path = repo.config.get("mailmap.file")
        if path:
            _read_file(mm, os.path.expanduser(path))
        return mm


def _read_file(mm: Mailmap, path: str) -> None:
    try:
        with open(path, "rb") as f:
            mm.read(f.read())
    except OSError:
        pass   # no such file: nothing to map
