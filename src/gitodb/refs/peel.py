"""Peeling annotated tags and shortening ref names, shared by the ref commands."""

from __future__ import annotations

from gitodb.errors import ObjectFormatError, ObjectNotFoundError
from gitodb.objects.format import SHA1, SHA256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_TAG_DEPTH = 64


def tag_target(odb: Any, oid: bytes, hexsz: int) -> bytes | None:
    """The ``object`` line of tag ``oid``, or None if ``oid`` is not a tag (or unreadable)."""
    got = _tag_line(odb, oid, hexsz)
    return got[0] if got is not None else None


def _tag_line(odb: Any, oid: bytes, hexsz: int) -> tuple[bytes, str] | None:
    type_name, data = odb.read(oid)
    if type_name != "tag":
        return None
    # here: listing refs reads no tag unless a ref is one (and then asks to peel it)
    from gitodb.objects.tag import Tag

    try:
        tag = Tag(data, SHA256 if hexsz == SHA256.hexsz else SHA1)
        return tag.object, tag.type
    except ObjectFormatError:
        return None


def peel_fully(odb: Any, oid: bytes, hexsz: int) -> bytes | None:
    """The non-tag object a tag (chain) points at, or None if ``oid`` is not a tag.

    Git 2.55 peels completely (tag of a tag goes down to the commit).  A tag whose
    object has another type than the tag says (or is missing) does not peel: Git
    stores no peeled value for it.
    """
    try:
        got = _tag_line(odb, oid, hexsz)
        for _ in range(MAX_TAG_DEPTH):
            if got is None:
                return None
            target, want = got
            if odb.read_header(target)[0] != want:
                return None
            got = _tag_line(odb, target, hexsz)
            if got is None:
                return target
    except ObjectNotFoundError:
        return None
    return None


def make_peeler(odb: Any, hexsz: int):  # type: ignore[no-untyped-def]
    """A ``RefStore.peeler`` for refs written through this object database."""
    return lambda oid: peel_fully(odb, oid, hexsz)


#: Git's ref_rev_parse_rules: how a short name is looked up, in order.
REV_PARSE_RULES = (
    "{}",
    "refs/{}",
    "refs/tags/{}",
    "refs/heads/{}",
    "refs/remotes/{}",
    "refs/remotes/{}/HEAD",
)


def _match_rule(name: str, rule: str) -> str | None:
    head, _, tail = rule.partition("{}")
    if len(name) > len(head) + len(tail) and name.startswith(head) and name.endswith(tail):
        return name[len(head) : len(name) - len(tail)]
    return None


def shorten_ref(name: str, exists: Any = None, strict: bool = False) -> str:
    """Git's ``shorten_unambiguous_ref``: the shortest name that still means ``name``.

    ``exists(refname)`` says whether a ref exists; a short name is refused when an
    earlier lookup rule (every other rule if ``strict``, Git's
    ``core.warnAmbiguousRefs``) finds another ref.  Without ``exists`` no name is
    ambiguous.
    """
    for i in range(len(REV_PARSE_RULES) - 1, 0, -1):
        short = _match_rule(name, REV_PARSE_RULES[i])
        if short is None:
            continue
        if exists is None:
            return short
        upto = len(REV_PARSE_RULES) if strict else i
        if not any(j != i and exists(REV_PARSE_RULES[j].format(short)) for j in range(upto)):
            return short
    return name
