"""Object filter specs (``--filter=<spec>``), as ``rev-list`` and ``cat-file`` take them.

Git's grammar: ``blob:none``, ``blob:limit=<n>[kmg]``, ``tree:<depth>``,
``sparse:oid=<blob-ish>``, ``object:type=<type>``, and ``combine:<spec>+<spec>...``
(each part URL-encoded); a second ``--filter`` combines with the first.
``sparse:path=`` is refused as Git refuses it.  Bad specs raise
``FilterSpecError`` with Git's message.

``ObjectFilter.excludes(type_name, size)`` answers for the filters that look at
one object alone (blob:none, blob:limit, object:type); the others depend on
where an object is reached in a walk, which is the walker's business.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote

from gitodb.errors import GitodbError

_TYPES = ("blob", "tree", "commit", "tag")
_ULONG = re.compile(r"([0-9]+)([kKmMgG]?)")
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


class FilterSpecError(GitodbError):
    """A ``--filter`` spec Git would refuse (the message is Git's)."""


def _parse_ulong(text: str) -> int | None:
    """Git's ``git_parse_ulong``: decimal digits with an optional k/m/g unit."""
    m = _ULONG.fullmatch(text)
    if m is None:
        return None
    return int(m.group(1)) * _UNITS[m.group(2).lower()]


@dataclass(frozen=True)
class ObjectFilter:
    """One parsed filter: ``kind`` is Git's choice name (``blob:none``, ``blob:limit``,
    ``tree``, ``sparse:oid``, ``object:type``, ``combine``)."""

    kind: str
    spec: str
    limit: int = 0  # blob:limit bytes, tree depth
    value: str = ""  # sparse:oid's object name, object:type's type
    parts: tuple[ObjectFilter, ...] = field(default=())

    @classmethod
    def parse(cls, spec: str, previous: ObjectFilter | None = None) -> ObjectFilter:
        """Parse ``spec``; with ``previous`` (an earlier ``--filter``) the two combine."""
        new = cls._parse_one(spec)
        if previous is None:
            return new
        parts = (previous.parts if previous.kind == "combine" else (previous,)) + (new,)
        return cls("combine", "combine:" + "+".join(p.spec for p in parts), parts=parts)

    @classmethod
    def _parse_one(cls, spec: str) -> ObjectFilter:
        if spec == "blob:none":
            return cls("blob:none", spec)
        if spec.startswith("blob:limit="):
            n = _parse_ulong(spec[len("blob:limit=") :])
            if n is None:
                raise FilterSpecError(f"invalid filter-spec '{spec}'")
            return cls("blob:limit", spec, limit=n)
        if spec.startswith("tree:"):
            n = _parse_ulong(spec[len("tree:") :])
            if n is None:
                raise FilterSpecError("expected 'tree:<depth>'")
            return cls("tree", spec, limit=n)
        if spec.startswith("sparse:oid="):
            return cls("sparse:oid", spec, value=spec[len("sparse:oid=") :])
        if spec.startswith("sparse:path="):
            raise FilterSpecError("sparse:path filters support has been dropped")
        if spec.startswith("object:type="):
            t = spec[len("object:type=") :]
            if t not in _TYPES:
                raise FilterSpecError(f"'{t}' for 'object:type=<type>' is not a valid object type")
            return cls("object:type", spec, value=t)
        if spec.startswith("combine:"):
            subs = spec[len("combine:") :].split("+")
            if not all(subs):
                raise FilterSpecError("expected something after combine:")
            parts = tuple(cls._parse_one(unquote(s)) for s in subs)
            return cls("combine", spec, parts=parts)
        raise FilterSpecError(f"invalid filter-spec '{spec}'")

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
