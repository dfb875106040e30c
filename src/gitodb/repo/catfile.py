"""One object read the ways ``git cat-file`` reads it, as library calls.

Each function takes a name already resolved (``revparse.resolve_full``) and
applies what Git applies before printing: replace refs, the compatibility object
format when the name was given in it (``extensions.compatObjectFormat``),
peeling to a wanted type (``cat-file <type> <object>``), the tree listing of
``-p``, and the attribute-driven conversions of ``--filters``/``--textconv``.
The batch modes are ``gitodb.repo.batch``.
"""

from __future__ import annotations

import os

from gitodb.errors import GitodbError, MissingDeltaBaseError, ObjectNotFoundError
from gitodb.objects.commit import Commit
from gitodb.objects.mailmap import map_idents
from gitodb.objects.pretty import format_tree
from gitodb.objects.tag import Tag
from gitodb.objects.tree import Tree
from gitodb.repo.replace import replace_map, replaced

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitodb.objects.mailmap import Mailmap
    from gitodb.repo import Repository
    from gitodb.repo.conversion import Conversion
    from gitodb.repo.revparse import Resolved

__all__ = [
    "object_header",
    "peeled_content",
    "pretty_content",
    "converted_content",
    "read_with_reference",
    "to_compat",
]

#: how far ``read_with_reference`` follows tags before it gives up (Git loops on)
_MAX_PEEL = 100


def _target(repo: Repository, got: Resolved) -> bytes:
    """The object to read for ``got``: its replacement when a replace ref names one."""
    return replaced(replace_map(repo), got.oid)


def to_compat(repo: Repository, type_name: str, data: bytes) -> bytes:
    """Content read in the storage format, as it is in the compatibility format."""
    compat = repo.compat
    if compat is None:
        return data
    return compat.convert_to_compat(type_name, data)


def read_with_reference(repo: Repository, oid: bytes, want: str) -> bytes | None:
    """Git's ``read_object_with_reference``: peel tags (and commit -> tree) to ``want``.

    Returns the content of the object of type ``want`` reached, or None when the
    chain ends elsewhere or an object is missing.
    """
    fmt = repo.object_format
    for _ in range(_MAX_PEEL):
        try:
            t, data = repo.odb.read(oid)
        except MissingDeltaBaseError as e:
            # Git found the entry, so to it the object is there and its pack is bad
            path = os.path.relpath(e.path) if e.path else ""
            where = e.path if path.startswith("..") else path
            raise GitodbError(f"packed object {oid.hex()} (stored in {where}) is corrupt") from None
        except ObjectNotFoundError:
            return None
        if t == want:
            return data
        if t == "tag":
            oid = Tag(data, fmt).object
        elif t == "commit" and want == "tree":
            oid = Commit(data, fmt).tree
        else:
            return None
    return None


def peeled_content(
    repo: Repository, got: Resolved, type_name: str, mailmap: Mailmap | None = None
) -> bytes | None:
    """``cat-file <type> <object>``: the content of the ``type_name`` object ``got``
    leads to (in the compatibility format when named in it), or None.  With
    ``mailmap`` (``--use-mailmap``) a commit's or tag's identities are mapped."""
    data = read_with_reference(repo, _target(repo, got), type_name)
    if data is not None and got.compat_oid is not None:
        data = to_compat(repo, type_name, data)
    if data is not None and mailmap is not None:
        data = map_idents(mailmap, type_name, data)
    return data


def object_header(
    repo: Repository, got: Resolved, mailmap: Mailmap | None = None
) -> tuple[str, int]:
    """``-t``/``-s``: the object's type and size (the size in the compatibility
    format when named in it, or with ``mailmap`` of the commit or tag with its
    identities mapped, as ``-p`` would print it).  Raises ``ObjectNotFoundError``."""
    oid = _target(repo, got)
    t, size = repo.odb.read_header(oid)
    if (got.compat_oid is not None and t != "blob") or (
        mailmap is not None and t in ("commit", "tag")
    ):
        data = repo.odb.read(oid)[1]
        if got.compat_oid is not None:
            data = to_compat(repo, t, data)
        if mailmap is not None:
            data = map_idents(mailmap, t, data)
        size = len(data)
    return t, size


def pretty_content(repo: Repository, got: Resolved, mailmap: Mailmap | None = None) -> bytes:
    """``-p``: the object's content, a tree as Git lists it (``core.quotePath``
    honoured), a commit's or tag's identities mapped with ``mailmap``.  Raises
    ``ObjectNotFoundError``."""
    t, data = repo.odb.read(_target(repo, got))
    fmt = repo.object_format
    if got.compat_oid is not None:
        data = to_compat(repo, t, data)
        assert repo.compat is not None  # a compatibility id implies the mapping
        fmt = repo.compat.compat
    if mailmap is not None:
        data = map_idents(mailmap, t, data)
    if t != "tree":
        return data
    quote = repo.config.get_bool("core.quotepath", True)
    return format_tree(Tree(data, fmt, got.name_oid), quote_fully=quote)


def converted_content(
    repo: Repository, got: Resolved, path: str, conversion: Conversion, transform: str
) -> bytes | None:
    """``--filters`` (``transform="filters"``) or ``--textconv``: the object's content
    converted for ``path``.  Only a regular-file blob is converted; ``--filters``
    gives other objects as they are.  None for ``--textconv`` when no driver
    applies (Git then prints the object as ``-p`` does).  Raises
    ``ObjectNotFoundError``."""
    if transform not in ("filters", "textconv"):
        raise ValueError(f"unknown transform {transform!r}")
    mode = got.mode or 0o100644
    t, data = repo.odb.read(_target(repo, got))
    regular_blob = t == "blob" and mode & 0o170000 == 0o100000
    if transform == "filters":
        return conversion.to_worktree(path, data) if regular_blob else data
    return conversion.textconv(path, data) if regular_blob else None
