"""Which reflog entries ``reflog expire`` drops, like Git's expiry policy.

Times come from ``--expire``/``--expire-unreachable``, else the first
``gc.<pattern>.reflogExpire[Unreachable]`` whose pattern matches the ref, else
``gc.reflogExpire`` (default 90 days) and ``gc.reflogExpireUnreachable`` (30 days);
``refs/stash`` never expires unless configured.  ``never``/``false`` keep everything,
``now``/``all`` drop everything.  An entry older than the unreachable limit is also
dropped when its old or new commit is not reachable from the ref's tip (from every
ref's tip for HEAD).
"""

from __future__ import annotations

import fnmatch
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from gitodb.errors import GitodbError
from gitodb.refs.base import ReflogEntry

NEVER = 0
ALL = 1 << 62
_UNITS = {
    "second": 1,
    "minute": 60,
    "hour": 3600,
    "day": 86400,
    "week": 604800,
    "month": 30 * 86400,
    "year": 365 * 86400,
}
_RELATIVE = re.compile(r"(\d+)[.\s]*(second|minute|hour|day|week|month|year)s?(?:[.\s]*ago)?")


def parse_expiry(value: str, now: int | None = None) -> int:
    """Git's ``parse_expiry_date``: a Unix time before which entries expire."""
    v = value.strip().lower()
    if v in ("never", "false"):
        return NEVER
    if v in ("now", "all"):
        return ALL
    if re.fullmatch(r"@?\d+", v):
        return int(v.lstrip("@"))
    m = _RELATIVE.fullmatch(v)
    if not m:
        raise GitodbError(f"invalid date format: {value}")
    base = int(time.time()) if now is None else now
    return base - int(m.group(1)) * _UNITS[m.group(2)]


@dataclass
class ExpiryPolicy:
    """Expiry limits from config, resolved per ref by ``limits``."""

    default_total: int
    default_unreachable: int
    patterns: list[tuple[str, int, int]] = field(default_factory=list)

    @classmethod
    def from_config(cls, config: object | None, now: int | None = None) -> ExpiryPolicy:
        """Read ``gc.reflogExpire*`` and the per-pattern ``gc.<pattern>.reflogExpire*``."""
        base = int(time.time()) if now is None else now
        get = getattr(config, "get", None)

        def value(key: str, default: str) -> int:
            raw = get(key) if get else None
            return parse_expiry(raw if raw is not None else default, base)

        policy = cls(
            value("gc.reflogexpire", "90.days.ago"),
            value("gc.reflogexpireunreachable", "30.days.ago"),
        )
        by_pattern: dict[str, list[int]] = {}
        names = getattr(config, "names", None)
        for key in names() if names else []:
            section, _, rest = key.partition(".")
            pattern, _, var = rest.rpartition(".")
            if (
                section != "gc"
                or not pattern
                or var not in ("reflogexpire", "reflogexpireunreachable")
            ):
                continue
            # an entry starts with both limits at 0 ("never") like Git's
            ent = by_pattern.setdefault(pattern, [NEVER, NEVER])
            raw = get(key) if get else None
            ent[0 if var == "reflogexpire" else 1] = parse_expiry(raw or "", base)
        policy.patterns = [(p, t, u) for p, (t, u) in by_pattern.items()]
        return policy

    def limits(
        self, refname: str, total: int | None = None, unreachable: int | None = None
    ) -> tuple[int, int]:
        """(total, unreachable) limits for ``refname``; explicit values win."""
        for pattern, t, u in self.patterns:
            if fnmatch.fnmatchcase(refname, pattern):
                return (t if total is None else total, u if unreachable is None else unreachable)
        if refname == "refs/stash":
            return (
                NEVER if total is None else total,
                NEVER if unreachable is None else unreachable,
            )
        return (
            self.default_total if total is None else total,
            self.default_unreachable if unreachable is None else unreachable,
        )


def expiry_filter(
    total: int, unreachable: int, null_oid: bytes, is_reachable: Callable[[bytes], bool] | None
) -> Callable[[int, ReflogEntry], bool]:
    """A ``rewrite_reflog`` keep-function for these limits.

    ``is_reachable`` (None: the tip is no commit, treat all as unreachable) says whether
    a commit is reachable from the tip(s).
    """
    always = is_reachable is None or unreachable <= total

    def keep(_i: int, e: ReflogEntry) -> bool:
        if e.time < total:
            return False
        if e.time < unreachable:
            if always:
                return False
            assert is_reachable is not None
            for oid in (e.old, e.new):
                if oid != null_oid and not is_reachable(oid):
                    return False
        return True

    return keep
