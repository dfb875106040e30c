"""Converting an object's content between object formats (``extensions.compatObjectFormat``).

A repository with a compatibility format names every object twice: by the hash of
its content in the storage format, and by the hash of its content as it would be
in the compatibility format.  A blob's content is the same in both; a tree, commit
or tag names other objects, and in the other format it names them by their ids in
that format.  ``convert_object`` rewrites those names, asking ``map_oid`` for each.

The rules are Git's (``hash-function-transition``):

- tree: every entry keeps its mode and name, its id is mapped;
- commit: the ``tree`` and ``parent`` header ids are mapped, a ``mergetag``
  header holds a tag that is converted in turn; ``author``, ``committer``,
  ``encoding`` and ``gpgsig*`` headers (with their continuation lines) and the
  message are kept; any other header could embed an id, so it is refused;
- tag: the ``object`` line is mapped, the rest is kept.

A signed tag's signature moves between the trailer and a header on conversion in
Git; gitodb does not convert signed tags (``ObjectConvertError``).
"""

from __future__ import annotations

from collections.abc import Callable

from gitodb.errors import ObjectFormatError
from gitodb.objects.format import ObjectFormat

#: maps one binary id of the source format to the target format's id, or None
OidMapper = Callable[[bytes], "bytes | None"]

# Lines that start a signature block at the end of a tag (Git's signature types).
_SIGNATURE_STARTS = (
    b"-----BEGIN PGP SIGNATURE-----",
    b"-----BEGIN PGP MESSAGE-----",
    b"-----BEGIN SSH SIGNATURE-----",
    b"-----BEGIN SIGNED MESSAGE-----",
)
_KEPT_COMMIT_HEADERS = (b"author ", b"committer ", b"encoding ", b"gpgsig")


class ObjectConvertError(ObjectFormatError):
    """An object cannot be expressed in the other object format.

    ``detail`` is Git's ``error:`` line (which id could not be mapped, or what is
    malformed); the message is Git's ``Failed to convert object from X to Y``.
    """

    def __init__(self, detail: str, src: ObjectFormat, dst: ObjectFormat) -> None:
        super().__init__(
            f"Failed to convert object from {src.name} to {dst.name}", details=[detail]
        )
        self.detail = detail


def convert_object(
    type_name: str, data: bytes, src: ObjectFormat, dst: ObjectFormat, map_oid: OidMapper
) -> bytes:
    """``data`` (an object of ``type_name`` in format ``src``) as it is in format ``dst``.

    Raises ``ObjectConvertError`` when an id has no mapping or the content is not
    a well-formed object of its type.
    """
    if src is dst or type_name == "blob":
        return data
    if type_name == "tree":
        return _convert_tree(data, src, dst, map_oid)
    if type_name == "commit":
        return _convert_commit(data, src, dst, map_oid)
    if type_name == "tag":
        return _convert_tag(data, src, dst, map_oid)
    raise ObjectConvertError(f"cannot convert an object of type '{type_name}'", src, dst)


def _mapped(
    oid: bytes, what: str, src: ObjectFormat, dst: ObjectFormat, map_oid: OidMapper
) -> bytes:
    got = map_oid(oid)
    if got is None:
        raise ObjectConvertError(what.format(oid.hex()), src, dst)
    return got


def _convert_tree(data: bytes, src: ObjectFormat, dst: ObjectFormat, map_oid: OidMapper) -> bytes:
    out = bytearray()
    pos, end, rawsz = 0, len(data), src.rawsz
    while pos < end:
        space = data.find(b" ", pos, end)
        nul = data.find(b"\0", space + 1 if space >= 0 else pos, end)
        if space <= pos or nul < 0 or nul == space + 1 or nul + 1 + rawsz > end:
            raise ObjectConvertError("failed to decode tree entry", src, dst)
        oid = data[nul + 1 : nul + 1 + rawsz]
        out += data[pos : nul + 1]
        out += _mapped(oid, "failed to map tree entry for {}", src, dst, map_oid)
        pos = nul + 1 + rawsz
    return bytes(out)


def _hex_id(line: bytes, prefix: bytes, fmt: ObjectFormat) -> bytes | None:
    """The id of a ``<prefix><hex>`` line (without its newline), or None if malformed."""
    text = line[len(prefix) :]
    if len(text) != fmt.hexsz:
        return None
    try:
        oid = bytes.fromhex(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None
    # bytes.fromhex accepts upper case and spaces; Git's parser takes lower-case hex only
    return oid if oid.hex().encode() == text else None


def _convert_commit(data: bytes, src: ObjectFormat, dst: ObjectFormat, map_oid: OidMapper) -> bytes:
    out = bytearray()
    pos, end = 0, len(data)
    while pos < end and data[pos : pos + 1] != b"\n":
        eol = data.find(b"\n", pos)
        if eol < 0:
            raise ObjectConvertError("bad line in commit", src, dst)
        line = data[pos:eol]
        for key in (b"tree", b"parent"):
            if line.startswith(key + b" ") and len(line) > len(key) + 1:
                oid = _hex_id(line, key + b" ", src)
                if oid is None:
                    raise ObjectConvertError(f"bad {key.decode()} in commit", src, dst)
                new = _mapped(
                    oid, f"unable to map {key.decode()} {{}} in commit object", src, dst, map_oid
                )
                out += key + b" " + new.hex().encode() + b"\n"
                pos = eol + 1
                break
        else:
            if line.startswith(b"mergetag ") and len(line) > 9:
                tag = bytearray(line[9:] + b"\n")
                pos = eol + 1
                while pos < end and data[pos : pos + 1] == b" ":
                    eol = data.find(b"\n", pos)
                    if eol < 0:
                        raise ObjectConvertError("bad mergetag continuation in commit", src, dst)
                    tag += data[pos + 1 : eol + 1]
                    pos = eol + 1
                new_tag = _convert_tag(bytes(tag), src, dst, map_oid)
                out += b"mergetag"
                for tag_line in new_tag.splitlines(keepends=True):
                    out += b" " + tag_line
                if not new_tag.endswith(b"\n"):
                    out += b"\n"
                continue
            if not line.startswith(_KEPT_COMMIT_HEADERS):
                # an unknown header might embed an id: Git refuses to guess
                raise ObjectConvertError(
                    f"unknown header in commit: "
                    f"{line.split(b' ', 1)[0].decode('utf-8', 'replace')}",
                    src,
                    dst,
                )
            out += data[pos : eol + 1]
            pos = eol + 1
        while pos < end and data[pos : pos + 1] == b" ":  # continuation lines
            eol = data.find(b"\n", pos)
            if eol < 0:
                raise ObjectConvertError("bad continuation in commit", src, dst)
            out += data[pos : eol + 1]
            pos = eol + 1
    out += data[pos:]
    return bytes(out)


def _convert_tag(data: bytes, src: ObjectFormat, dst: ObjectFormat, map_oid: OidMapper) -> bytes:
    eol = data.find(b"\n")
    if eol < 0 or not data.startswith(b"object ") or eol != 7 + src.hexsz:
        raise ObjectConvertError("bogus tag object", src, dst)
    oid = _hex_id(data[:eol], b"object ", src)
    if oid is None:
        raise ObjectConvertError("bad tag object ID", src, dst)
    rest = data[eol + 1 :]
    if _is_signed(rest):
        raise ObjectConvertError("cannot convert a signed tag", src, dst)
    new = _mapped(oid, "unable to map tree {} in tag object", src, dst, map_oid)
    return b"object " + new.hex().encode() + b"\n" + rest


def _is_signed(rest: bytes) -> bool:
    """Whether a tag has a signature: a trailer block, or a ``gpgsig*`` header."""
    header_end = rest.find(b"\n\n")
    headers = rest if header_end < 0 else rest[: header_end + 1]
    if b"\ngpgsig" in b"\n" + headers:
        return True
    return any(rest.startswith(s) or b"\n" + s in rest for s in _SIGNATURE_STARTS)
