"""Object formats (SHA-1, SHA-256), object types, headers and ids; the object model.

The model (``Commit``, ``Tree``, ``Tag``, ``Blob``, ``Signature``) is imported
from its modules (``gitodb.objects.commit`` ...) or from here.  The names here are
loaded on first use: ``gitodb.objects.format`` (which every command needs) does
not bring the object model's parsers with it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gitodb.objects.blob import Blob, GitObject, parse_object
    from gitodb.objects.commit import Commit
    from gitodb.objects.format import (
        SHA1,
        SHA256,
        ObjectFormat,
        as_oid,
        format_by_name,
    )
    from gitodb.objects.header import (
        OBJ_BLOB,
        OBJ_COMMIT,
        OBJ_OFS_DELTA,
        OBJ_REF_DELTA,
        OBJ_TAG,
        OBJ_TREE,
        TYPE_NAMES,
        TYPE_NUMBERS,
        hash_object,
        object_header,
        parse_object_header,
    )
    from gitodb.objects.signature import Signature
    from gitodb.objects.tag import Tag
    from gitodb.objects.tree import Tree, TreeEntry

__all__ = [
    "SHA1",
    "SHA256",
    "ObjectFormat",
    "format_by_name",
    "OBJ_COMMIT",
    "OBJ_TREE",
    "OBJ_BLOB",
    "OBJ_TAG",
    "OBJ_OFS_DELTA",
    "OBJ_REF_DELTA",
    "TYPE_NAMES",
    "TYPE_NUMBERS",
    "object_header",
    "parse_object_header",
    "hash_object",
    "as_oid",
    "Commit",
    "Tree",
    "TreeEntry",
    "Tag",
    "Blob",
    "Signature",
    "GitObject",
    "parse_object",
]

# Public name -> the module under gitodb.objects that defines it.
_LAZY = {
    "Blob": "blob",
    "GitObject": "blob",
    "parse_object": "blob",
    "Commit": "commit",
    "SHA1": "format",
    "SHA256": "format",
    "ObjectFormat": "format",
    "as_oid": "format",
    "format_by_name": "format",
    "OBJ_BLOB": "header",
    "OBJ_COMMIT": "header",
    "OBJ_OFS_DELTA": "header",
    "OBJ_REF_DELTA": "header",
    "OBJ_TAG": "header",
    "OBJ_TREE": "header",
    "TYPE_NAMES": "header",
    "TYPE_NUMBERS": "header",
    "hash_object": "header",
    "object_header": "header",
    "parse_object_header": "header",
    "Signature": "signature",
    "Tag": "tag",
    "Tree": "tree",
    "TreeEntry": "tree",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gitodb.objects' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"gitodb.objects.{module}"), name)
    globals()[name] = value
    return value
