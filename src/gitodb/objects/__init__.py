"""Object formats (SHA-1, SHA-256), object types, headers and ids."""

from gitodb.objects.format import (
    SHA1,
    SHA256,
    ObjectFormat,
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

__all__ = [
    "SHA1", "SHA256", "ObjectFormat", "format_by_name",
    "OBJ_COMMIT", "OBJ_TREE", "OBJ_BLOB", "OBJ_TAG", "OBJ_OFS_DELTA", "OBJ_REF_DELTA",
    "TYPE_NAMES", "TYPE_NUMBERS", "object_header", "parse_object_header", "hash_object",
]
