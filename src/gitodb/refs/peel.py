"""Peeling annotated tags and shortening ref names, shared by the ref commands."""

from __future__ import annotations

from typing import Any

from gitodb.errors import ObjectFormatError, ObjectNotFoundError
from gitodb.objects.format import SHA1, SHA256
from gitodb.objects.tag import Tag

MAX_TAG_DEPTH = 64


def tag_target(odb: Any, oid: bytes, hexsz: int) -> bytes | None:
    """The ``object`` line of tag ``oid``, or None if ``oid`` is not a tag (or unreadable)."""
    type_name, data = odb.read(oid)
    if type_name != "tag":
        return None
    try:
        return Tag(data, SHA256 if hexsz == SHA256.hexsz else SHA1).object
    except ObjectFormatError:
        return None


def peel_fully(odb: Any, oid: bytes, hexsz: int) -> bytes | None:
    """The non-tag object a tag (chain) points at, or None if ``oid`` is not a tag.

    Git 2.55 peels completely (tag of a tag goes down to the commit).
    """
    try:
        nxt = tag_target(odb, oid, hexsz)
        if nxt is None:
            return None
        for _ in range(MAX_TAG_DEPTH):
            deeper = tag_target(odb, nxt, hexsz)
            if deeper is None:
                return nxt
            nxt = deeper
    except ObjectNotFoundError:
        return None
    return nxt


def make_peeler(odb: Any, hexsz: int):  # type: ignore[no-untyped-def]
    """A ``RefStore.peeler`` for refs written through this object database."""
    return lambda oid: peel_fully(odb, oid, hexsz)


_SHORTEN = ("refs/heads/", "refs/tags/", "refs/remotes/", "refs/")


def shorten_ref(name: str, exists: Any = None) -> str:
    """Git's unambiguous short name: strip refs/heads/, refs/tags/, ... when unambiguous."""
    if name.startswith("refs/remotes/") and name.endswith("/HEAD") and name.count("/") == 3:
        return name[len("refs/remotes/"):-len("/HEAD")]
    for prefix in _SHORTEN:
        if name.startswith(prefix) and len(name) > len(prefix):
            short = name[len(prefix):]
            if exists is None:
                return short
            rules = [short, f"refs/{short}", f"refs/tags/{short}", f"refs/heads/{short}",
                     f"refs/remotes/{short}", f"refs/remotes/{short}/HEAD"]
            clash = [r for r in rules if r != name and exists(r)]
            # only rules tried before this one can make the short name ambiguous
            if not any(rules.index(c) < rules.index(name) if name in rules else True
                       for c in clash):
                return short
    return name
