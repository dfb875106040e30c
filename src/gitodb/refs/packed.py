"""A fast parse of ``packed-refs`` for the common file: one regular expression pass.

``FilesRefStore`` reads ``packed-refs`` line by line with Git's rules and its exact
messages for every line it refuses; that is the reference, and it costs several
microseconds per ref (a repository with thousands of refs pays it in every command
that reads a ref).  ``parse_plain`` accepts only files in which every line is
plainly valid -- an optional ``# pack-refs with: `` header, then ``<hex id> refs/...``
lines with lower-case ids, ASCII names from a conservative character set and none
of the sequences the ref-name rules forbid, each optionally followed by one
``^<hex id>`` peeled line -- and returns None for anything else, so that the
reference parse decides (and reports) it.  On the files it accepts, both give the
same refs.

A point lookup (``FilesRefStore.read``) need not parse the file: where Git itself
searches it (the header declares the ``sorted`` trait) and every line is plainly
valid (``searchable``, one regular-expression match, no object per ref), ``find``
bisects it, as Git's ``find_reference_location`` does, in O(log n) per name.
"""

from __future__ import annotations

from gitodb.refs.base import Ref

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

try:
    from gitodb._native import packed_refs_plain as _packed_refs_plain
except ImportError:  # built without a C compiler
    _packed_refs_plain = None  # type: ignore[assignment]
try:
    from gitodb._native import packed_refs_lines_plain as _lines_plain
except ImportError:
    _lines_plain = None  # type: ignore[assignment]

#: Characters a ref name may hold here: printable ASCII without space and the
#: ones ``check_refname_format`` refuses (``~ ^ : ? * [ \``, ``{`` for ``@{``).
_NAME = r"[A-Za-z0-9!\"#$%&'()+,\-./;<=>@\]_`|}]"
#: Sequences after which a name may break a rule (``..``, a component starting
#: with a dot or empty, a ``.lock`` component, a name ending in ``.`` or ``/``):
#: a file holding any of them goes to the reference parse.
_SUSPECT = ("..", "/.", "//", ".lock\n", ".lock/", ".\n", "/\n")

_LINES: dict[int, re.Pattern[str]] = {}


def _pattern(hexsz: int) -> re.Pattern[str]:
    got = _LINES.get(hexsz)
    if got is None:
        import re  # (the reference parse's, for a file the native pass declines)

        got = _LINES[hexsz] = re.compile(
            rf"([0-9a-f]{{{hexsz}}}) (refs/{_NAME}+)\n(?:\^([0-9a-f]{{{hexsz}}})\n)?"
        )
    return got


def parse_plain(data: bytes, hexsz: int) -> dict[str, Ref] | None:
    """The refs of ``packed-refs`` ``data`` if every line is plainly valid, else None.

    In one native pass where the native core is built (``parse_plain_python`` is its
    reference: the same contract, the same refs).
    """
    if _packed_refs_plain is not None:
        return _packed_refs_plain(data, hexsz, Ref)
    return parse_plain_python(data, hexsz)


def parse_plain_python(data: bytes, hexsz: int) -> dict[str, Ref] | None:
    """``parse_plain`` in Python: one regular-expression pass."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return None
    if text.startswith("#"):
        end = text.find("\n")
        if end < 0 or not text.startswith("# pack-refs with: "):
            return None
        text = text[end + 1 :]
    if any(s in text for s in _SUSPECT):
        return None
    refs: dict[str, Ref] = {}
    fromhex = bytes.fromhex
    covered = 0
    line = hexsz + 2  # "<id> " and the newline, around the name
    peeled_line = hexsz + 2  # "^<id>\n"
    for oid, name, peeled in _pattern(hexsz).findall(text):
        # A later line for the same name wins, as in the reference parse.
        if peeled:
            refs[name] = Ref(name, fromhex(oid), None, fromhex(peeled))
            covered += line + len(name) + peeled_line
        else:
            refs[name] = Ref(name, fromhex(oid), None, None)
            covered += line + len(name)
    # The matches do not overlap: if they cover every character, no line was skipped.
    return refs if covered == len(text) else None


_WHOLE: dict[int, re.Pattern[bytes]] = {}
#: a name's characters without "/": the whole-file pattern spells the components out,
#: which refuses "//", a "/" at the end and an empty component as ``_SUSPECT`` does
_PART = _NAME.replace("/", "").encode("ascii") + b"+"
#: past this many dots, ``_dots_plain`` looks for the sequences instead of at each dot
_FEW_DOTS = 1000


def _whole(hexsz: int) -> re.Pattern[bytes]:
    got = _WHOLE.get(hexsz)
    if got is None:
        import re  # (the reference check's, where the native core is missing)

        hexid = b"[0-9a-f]{%d}" % hexsz
        line = hexid + b" refs/(?:" + _PART + b"/)*" + _PART + b"\n(?:\\^" + hexid + b"\n)?"
        got = _WHOLE[hexsz] = re.compile(b"(?:" + line + b")*")
    return got


def _dots_plain(data: bytes, start: int) -> bool:
    """No ``_SUSPECT`` sequence with a dot ("..", "/.", ".lock" ending a component,
    a "." ending a name) from ``start`` on: a look at each dot, as dots are few."""
    if data.count(b".", start) > _FEW_DOTS:
        return not any(data.find(s.encode("ascii"), start) >= 0 for s in _SUSPECT if "." in s)
    i = data.find(b".", start)
    while i >= 0:
        after = data[i + 1 : i + 2]
        if data[i - 1] == 0x2F or after in (b".", b"\n"):
            return False
        if after == b"l" and data.startswith(b".lock", i) and data[i + 5 : i + 6] in (b"\n", b"/"):
            return False
        i = data.find(b".", i + 1)
    return True


def searchable(data: bytes, hexsz: int) -> bool:
    """True if ``find`` may answer for ``data``: Git's header with the ``sorted`` trait
    (Git then searches the file rather than sorting it) and every line as
    ``parse_plain`` accepts them (so that a file it declines still goes to the
    reference parse, and its message)."""
    end = data.find(b"\n")
    if end < 0 or not data.startswith(b"# pack-refs with: "):
        return False
    if b"sorted" not in data[:end].split(b" ")[3:]:
        return False
    if not data.isascii() or not _dots_plain(data, end + 1):
        return False
    if _lines_plain is not None:
        # every command's first ref lookup passes here: one native pass (the
        # expression below is its reference) rather than ~0.6 us per ref
        return _lines_plain(data, end + 1, hexsz)
    return lines_plain_python(data, end + 1, hexsz)


def lines_plain_python(data: bytes, start: int, hexsz: int) -> bool:
    """Whether ``data[start:]`` holds only plain records (``searchable``'s line check;
    the reference of the native ``packed_refs_lines_plain``)."""
    return _whole(hexsz).fullmatch(data, start) is not None


def _lower_bound(data: bytes, hexsz: int, want: bytes) -> int:
    """The offset of the first record of ``data`` whose name is not below ``want``
    (``len(data)`` if none is): a bisection over line starts."""
    lo = data.find(b"\n") + 1  # the first record (after the header)
    hi = len(data)
    start = hexsz + 1  # "<id> " before the name
    while lo < hi:
        mid = (lo + hi) // 2
        rec = data.rfind(b"\n", lo, mid) + 1 or lo
        if data[rec] == 0x5E:  # "^": the peeled line of the record before
            rec = data.rfind(b"\n", lo, rec - 1) + 1 or lo
        eol = data.index(b"\n", rec)
        if data[rec + start : eol] < want:
            lo = eol + 1
            if data[lo : lo + 1] == b"^":
                lo = data.index(b"\n", lo) + 1
        else:
            hi = rec
    return lo


def _record(data: bytes, hexsz: int, rec: int) -> tuple[Ref, int]:
    """The ref whose record starts at ``rec``, and where the next record starts."""
    eol = data.index(b"\n", rec)
    name = data[rec + hexsz + 1 : eol].decode("ascii")
    oid = bytes.fromhex(data[rec : rec + hexsz].decode("ascii"))
    if data[eol + 1 : eol + 2] == b"^":
        peeled = bytes.fromhex(data[eol + 2 : eol + 2 + hexsz].decode("ascii"))
        return Ref(name, oid, None, peeled), eol + hexsz + 3
    return Ref(name, oid, None, None), eol + 1


def find(data: bytes, hexsz: int, name: str) -> Ref | None:
    """The ref ``name`` of a ``searchable`` packed-refs ``data``, by bisection."""
    want = name.encode("ascii", "surrogateescape")
    rec = _lower_bound(data, hexsz, want)
    if rec == len(data) or not data.startswith(want + b"\n", rec + hexsz + 1):
        return None
    return _record(data, hexsz, rec)[0]


def with_prefix(data: bytes, hexsz: int, prefix: str) -> dict[str, Ref]:
    """The refs of a ``searchable`` ``data`` whose names start with ``prefix``, read
    from where a bisection finds the first of them (Git's packed-refs iterator seeks
    the same way): O(log n + matches)."""
    want = prefix.encode("ascii", "surrogateescape")
    rec = _lower_bound(data, hexsz, want)
    out: dict[str, Ref] = {}
    end = len(data)
    while rec < end and data.startswith(want, rec + hexsz + 1):
        ref, rec = _record(data, hexsz, rec)
        out[ref.name] = ref
    return out
