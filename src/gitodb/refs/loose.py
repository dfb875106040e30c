"""One loose ref file as Git reads it: ``ref: <target>``, an id, or a symlink.

The files backend reads its loose refs with ``read_ref_file``, and every backend reads
Git's special refs (``FETCH_HEAD``, ``MERGE_HEAD``: files in the git directory) with
it, so a reftable repository's ref listing loads nothing of the files backend.
"""

from __future__ import annotations

import errno
import os

from gitodb.errors import BrokenRefError, RefError
from gitodb.objects.format import ObjectFormat
from gitodb.refs.base import Ref, refname_format_ok

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def parse_ref_value(name: str, text: bytes, fmt: ObjectFormat, path: str | Path) -> Ref:
    if text.startswith(b"ref:"):
        return Ref(name, target=text[4:].strip().decode("utf-8", "surrogateescape"))
    # Git's parse_loose_ref_contents: exactly hexsz hex digits, then the end (a NUL
    # ends its C string too) or whitespace; anything else is a broken ref, not an id
    # with the junk ignored.
    h = fmt.hexsz
    hex_id = text[:h]
    if len(hex_id) < h or not is_hex(hex_id) or text[h : h + 1] not in ID_END:
        raise BrokenRefError(f"unable to resolve reference '{name}': reference broken", path=path)
    return Ref(name, oid=bytes.fromhex(hex_id.decode("ascii")))


def read_ref_file(path: str | Path, name: str, fmt: ObjectFormat) -> Ref | None:
    """The ref in the loose file ``path`` (None if there is none), as Git reads one.

    Also how Git reads its special refs ``FETCH_HEAD`` and ``MERGE_HEAD`` on every
    backend: files in the git directory, the first id of their first line.
    """
    try:
        try:
            # O_NOFOLLOW: a symlink is found without a second system call per ref
            fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC)
        except OSError as e:
            if e.errno != errno.ELOOP or not _O_NOFOLLOW:
                raise
            target = _symlink_target(path)
            if target is not None:
                return Ref(name, target=target)
            fd = os.open(path, os.O_RDONLY | _O_CLOEXEC)  # not a ref name: read what it names
        with open(fd, "rb") as f:
            data = f.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            return None  # cannot exist; creating it reports the error like Git
        raise RefError(f"unable to read '{path}': {e.strerror}", path=path) from None
    return parse_ref_value(name, data, fmt, path)


_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _symlink_target(path: str | Path) -> str | None:
    """A symlink ref's target if it names a ref (``refs/...``), as Git reads one (written
    with ``core.preferSymlinkRefs``); None for any other symlink, which is followed."""
    try:
        target = os.readlink(path)
    except OSError:
        return None
    if target.startswith("refs/") and refname_format_ok(target):
        return target
    return None


_HEXDIGITS = b"0123456789abcdefABCDEF"


def is_hex(text: bytes) -> bool:
    """``[0-9a-fA-F]+`` (a scan: reading a ref needs no ``re``)."""
    return text != b"" and not text.strip(_HEXDIGITS)


#: what may follow an id: the end, a NUL, or Git's isspace() (not \v or \f)
ID_END = (b"", b"\x00", b" ", b"\t", b"\n", b"\r")
