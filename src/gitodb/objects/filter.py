"""Object filter specs (``--filter=<spec>``), as ``rev-list`` and ``cat-file`` take them.

Git's grammar (``list-objects-filter-options.c``): ``blob:none``,
``blob:limit=<n>[kmg]``, ``tree:<depth>``, ``sparse:oid=<blob-ish>``,
``object:type=<type>``, and ``combine:<spec>+<spec>...`` where each part is
URL-encoded: a part holding a space, a control character or one of
``~`!@#$^&*()[]{}\\;'",<>?`` unencoded is refused, ``%XX`` is decoded once.  A
second ``--filter`` combines with the first: the spec becomes ``combine:`` and the
parts, each encoded (lower-case ``%xx`` for everything but the characters above,
``%`` and ``+``).  ``sparse:path=`` is refused as Git refuses it.  Bad specs raise
``FilterSpecError`` with Git's message.

``ObjectFilter.excludes(type_name, size)`` answers for the filters that look at
one object alone (blob:none, blob:limit, object:type); the others depend on
where an object is reached in a walk (``gitodb.history.objfilter``).
"""

from __future__ import annotations

import os
import sys

from gitodb.errors import GitodbError
from gitodb.lazyre import lazy
from gitodb.types import NamedTuple

_TYPES = ("blob", "tree", "commit", "tag")
#: what strtoumax(…, 0) reads: blanks, a sign, then hex, octal or decimal digits
_ULONG = lazy(r"[ \t\n\v\f\r]*\+?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
_ULONG_MAX = (1 << 64) - 1
#: Git's RESERVED_NON_WS: characters a combine: part must escape
RESERVED = "~`!@#$^&*()[]{}\\;'\",<>?"
_PERCENT = lazy(rb"%([0-9a-fA-F]{2})")


class FilterSpecError(GitodbError):
    """A ``--filter`` spec Git would refuse (the message is Git's)."""


def parse_ulong(text: str) -> int | None:
    """Git's ``git_parse_ulong``: a number (base 0, as strtoumax) with a k/m/g unit."""
    if not text or "-" in text:
        return None
    m = _ULONG.match(text)
    if m is None:
        return None
    digits = m.group(1)
    value = (
        int(digits, 16)
        if digits[:2] in ("0x", "0X")
        else int(digits, 8 if len(digits) > 1 and digits[0] == "0" else 10)
    )
    unit = text[m.end() :].lower()
    if unit not in _UNITS:
        return None
    value *= _UNITS[unit]
    return value if value <= _ULONG_MAX else None


def url_decode(text: str) -> str:
    """Git's ``url_percent_decode``: ``%XX`` decoded, anything else kept."""
    raw = text.encode("utf-8", "surrogateescape")
    return _PERCENT.sub(lambda m: bytes([int(m.group(1), 16)]), raw).decode(
        "utf-8", "surrogateescape"
    )


def url_encode(text: str) -> str:
    """How Git encodes a part it adds to a ``combine:`` spec (``%xx``, lower case)."""
    out = []
    for b in text.encode("utf-8", "surrogateescape"):
        c = chr(b)
        if b <= 0x20 or b >= 0x7F or c in RESERVED or c in "%+":
            out.append(f"%{b:02x}")
        else:
            out.append(c)
    return "".join(out)


def trace(message: str, source: str = "list-objects-filter-options.c") -> None:
    """A ``trace_printf`` line when ``GIT_TRACE`` asks for one: to stderr for
    ``1``/``2``/``true``, appended to the file for an absolute path; without
    ``GIT_TRACE_BARE`` after a time stamp and the ``source`` it stands for."""
    target = os.environ.get("GIT_TRACE", "")
    if target.lower() in ("", "0", "false", "no", "off"):
        return
    line = message + "\n"
    if not os.environ.get("GIT_TRACE_BARE"):
        import time

        now = time.time()
        stamp = time.strftime("%H:%M:%S", time.localtime(now))
        line = f"{stamp}.{int(now * 1e6) % 1000000:06d} {source} {line}"
    if target.startswith("/"):
        with open(target, "a", encoding="utf-8", errors="surrogateescape") as f:
            f.write(line)
        return
    sys.stderr.flush()
    sys.stderr.write(line)
    sys.stderr.flush()


class ObjectFilter(NamedTuple):
    """One parsed filter: ``kind`` is Git's choice name (``blob:none``, ``blob:limit``,
    ``tree``, ``sparse:oid``, ``object:type``, ``combine``); ``spec`` is Git's
    ``filter_spec`` text (what ``--filter`` gave, or the combined form)."""

    kind: str
    spec: str
    limit: int = 0  # blob:limit bytes, tree depth
    value: str = ""  # sparse:oid's object name, object:type's type
    parts: tuple[ObjectFilter, ...] = ()

    @classmethod
    def parse(cls, spec: str, previous: ObjectFilter | None = None) -> ObjectFilter:
        """Parse ``spec``; with ``previous`` (an earlier ``--filter``) the two combine."""
        if previous is None:
            return cls._parse_one(spec)
        if previous.kind == "combine":
            parts, text = previous.parts, previous.spec
        else:
            encoded = url_encode(previous.spec)
            trace(f"Add to combine filter-spec: {encoded}")
            parts, text = (previous,), "combine:" + encoded
        encoded = url_encode(spec)
        trace(f"Add to combine filter-spec: {encoded}")
        new = cls._parse_one(spec)
        return cls("combine", text + "+" + encoded, parts=parts + (new,))

    @classmethod
    def _parse_one(cls, spec: str) -> ObjectFilter:
        if spec == "blob:none":
            return cls("blob:none", spec)
        if spec.startswith("blob:limit="):
            n = parse_ulong(spec[len("blob:limit=") :])
            if n is not None:
                return cls("blob:limit", spec, limit=n)
        elif spec.startswith("tree:"):
            n = parse_ulong(spec[len("tree:") :])
            if n is None:
                raise FilterSpecError("expected 'tree:<depth>'")
            return cls("tree", spec, limit=n)
        elif spec.startswith("sparse:oid="):
            return cls("sparse:oid", spec, value=spec[len("sparse:oid=") :])
        elif spec.startswith("sparse:path="):
            raise FilterSpecError("sparse:path filters support has been dropped")
        elif spec.startswith("object:type="):
            t = spec[len("object:type=") :]
            if t not in _TYPES:
                raise FilterSpecError(f"'{t}' for 'object:type=<type>' is not a valid object type")
            return cls("object:type", spec, value=t)
        elif spec.startswith("combine:"):
            return cls._parse_combine(spec)
        raise FilterSpecError(f"invalid filter-spec '{spec}'")

    @classmethod
    def _parse_combine(cls, spec: str) -> ObjectFilter:
        rest = spec[len("combine:") :]
        if not rest:
            raise FilterSpecError("expected something after combine:")
        parts = []
        for sub in rest.split("+"):
            for c in sub:
                if c <= " " or c in RESERVED:
                    raise FilterSpecError(f"must escape char in sub-filter-spec: '{c}'")
            parts.append(cls._parse_one(url_decode(sub)))
        return cls("combine", spec, parts=tuple(parts))

    def excludes(self, type_name: str, size: int) -> bool:
        """Whether an object of this type and size is filtered out (per-object filters)."""
        if self.kind == "blob:none":
            return type_name == "blob"
        if self.kind == "blob:limit":
            return type_name == "blob" and size >= self.limit
        if self.kind == "object:type":
            return type_name != self.value
        if self.kind == "combine":
            return any(p.excludes(type_name, size) for p in self.parts)
        raise ValueError(f"the {self.kind} filter depends on the walk, not on one object")
