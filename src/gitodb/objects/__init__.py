"""Object formats (SHA-1, SHA-256), object types, headers and ids; the object model.

The model (``Commit``, ``Tree``, ``Tag``, ``Blob``, ``Signature``) is imported
from its modules (``gitodb.objects.commit`` ...) or from here.
"""

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
