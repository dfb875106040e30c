"""Replace refs: ``refs/replace/<id>`` makes reads of ``<id>`` return another object.

As in Git, replacement applies when an object is looked up by name (``cat-file -p``,
``--batch`` requests), not when every stored object is listed
(``--batch-all-objects``).  It is off with ``GIT_NO_REPLACE_OBJECTS`` set or
``core.useReplaceRefs=false``; ``GIT_REPLACE_REF_BASE`` moves the namespace.
A replacement may itself be replaced, up to Git's depth of 5.
"""

from __future__ import annotations

import os

from gitodb.errors import GitodbError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitodb.repo import Repository

#: Git's MAXREPLACEDEPTH
MAX_REPLACE_DEPTH = 5


class ReplaceDepthError(GitodbError):
    """A chain of replace refs longer than Git allows."""


def replace_map(repo: Repository) -> dict[bytes, bytes]:
    """``{replaced id: replacement id}`` for the repository (empty when disabled)."""
    if "GIT_NO_REPLACE_OBJECTS" in os.environ:
        return {}
    if not repo.config.get_bool("core.usereplacerefs", True):
        return {}
    base = os.environ.get("GIT_REPLACE_REF_BASE") or "refs/replace/"
    if not base.endswith("/"):
        base += "/"
    hexsz = repo.object_format.hexsz
    found: dict[bytes, bytes] = {}
    for ref in repo.refs.iter_refs(base):
        name = ref.name[len(base) :]
        if len(name) != hexsz or ref.oid is None:
            continue
        try:
            found[bytes.fromhex(name)] = ref.oid
        except ValueError:
            continue
    return found


def replaced(mapping: dict[bytes, bytes], oid: bytes) -> bytes:
    """The object to read for ``oid``: its replacement, followed to the end of the chain."""
    for _ in range(MAX_REPLACE_DEPTH):
        nxt = mapping.get(oid)
        if nxt is None:
            return oid
        oid = nxt
    if oid in mapping:
        raise ReplaceDepthError(f"replace depth too high for object {oid.hex()}")
    return oid
