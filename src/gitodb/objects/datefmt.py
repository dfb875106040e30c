"""Showing the dates of identity lines the way Git's ``show_date`` does.

``parse_date_mode("iso8601-local")`` reads a ``--date``/``%(authordate:...)``
format name (``default``, ``relative``, ``short``, ``local``, ``iso8601``/``iso``,
``iso8601-strict``/``iso-strict``, ``rfc2822``/``rfc``, ``raw``, ``unix``,
``format:<strftime>``, each with an optional ``-local``); ``show_date(ts, tz, mode)``
prints a timestamp with its zone (Git's signed ``+hhmm`` number, e.g. ``200``).

Example::

    show_date(1151968723, 200, parse_date_mode("default"))
    # 'Tue Jul 4 01:18:43 2006 +0200'
"""

from __future__ import annotations

import os
import time

from gitodb.errors import GitodbError
from gitodb.types import NamedTuple

_DAYS = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# Git's parse_date_type order: the first prefix that matches wins.
_TYPES = (
    ("relative", "relative"),
    ("iso8601-strict", "iso-strict"),
    ("iso-strict", "iso-strict"),
    ("iso8601", "iso"),
    ("iso", "iso"),
    ("rfc2822", "rfc"),
    ("rfc", "rfc"),
    ("short", "short"),
    ("default", "normal"),
    ("human", "human"),
    ("raw", "raw"),
    ("unix", "unix"),
    ("format", "strftime"),
)


class DateMode(NamedTuple):  # not a dataclass: importing dataclasses costs ~15 ms
    """A date format: ``kind`` (normal, relative, short, iso, iso-strict, rfc, raw,
    unix, strftime), ``local`` (show in the local zone) and the strftime format."""

    kind: str = "normal"
    local: bool = False
    strftime: str = ""


def parse_date_mode(text: str) -> DateMode:
    """Git's ``parse_date_format``; an unknown name raises ``GitodbError``."""
    fmt = text
    if fmt.startswith("auto:"):
        fmt = fmt[5:] if os.isatty(1) else "default"
    if fmt == "local":
        fmt = "default-local"
    found = next(((p, k) for p, k in _TYPES if fmt.startswith(p)), None)
    if found is None:
        raise GitodbError(f"unknown date format {text}")
    kind = found[1]
    rest = fmt[len(found[0]) :]
    if kind == "human":
        raise GitodbError("date format 'human' is not supported by gitodb")
    local = rest.startswith("-local")
    if local:
        rest = rest[6:]
    if kind == "strftime":
        if not rest.startswith(":"):
            raise GitodbError(f"date format missing colon separator: {text}")
        return DateMode(kind, local, rest[1:])
    if rest:
        raise GitodbError(f"unknown date format {text}")
    return DateMode(kind, local)


def local_tz(timestamp: int) -> int:
    """The local zone at ``timestamp`` as Git's signed ``hhmm`` number."""
    return tz_hhmm((time.localtime(timestamp).tm_gmtoff or 0) // 60)


def tz_hhmm(minutes: int) -> int:
    """Minutes east of UTC as Git's signed ``hhmm`` number (-330 minutes is -530)."""
    sign = -1 if minutes < 0 else 1
    hours, mins = divmod(abs(minutes), 60)
    return sign * (hours * 100 + mins)


def _tz_minutes(tz: int) -> int:
    sign = -1 if tz < 0 else 1
    return sign * ((abs(tz) // 100) * 60 + abs(tz) % 100)


def _tm(timestamp: int, tz: int) -> tuple[time.struct_time, int]:
    """The broken-down time at ``timestamp`` in zone ``tz``, and the zone; like Git,
    the epoch in UTC when the time cannot be represented."""
    try:
        return time.gmtime(timestamp + _tz_minutes(tz) * 60), tz
    except (OverflowError, OSError, ValueError):
        return time.gmtime(0), 0


def relative_date(timestamp: int, now: int | None = None) -> str:
    """Git's ``show_date_relative``: ``3 hours ago``, ``2 years, 1 month ago``..."""
    if now is None:
        env = os.environ.get("GIT_TEST_DATE_NOW")
        now = int(env) if env and env.isdigit() else int(time.time())
    if now < timestamp:
        return "in the future"
    diff = now - timestamp

    def ago(n: int, unit: str) -> str:
        return f"{n} {unit}{'' if n == 1 else 's'} ago"

    if diff < 90:
        return ago(diff, "second")
    diff = (diff + 30) // 60
    if diff < 90:
        return ago(diff, "minute")
    diff = (diff + 30) // 60
    if diff < 36:
        return ago(diff, "hour")
    diff = (diff + 12) // 24
    if diff < 14:
        return ago(diff, "day")
    if diff < 70:
        return ago((diff + 3) // 7, "week")
    if diff < 365:
        return ago((diff + 15) // 30, "month")
    if diff < 1825:
        total = (diff * 12 * 2 + 365) // (365 * 2)
        years, months = divmod(total, 12)
        if months:
            return f"{years} year{'' if years == 1 else 's'}, " + ago(months, "month")
        return ago(years, "year")
    return ago((diff + 183) // 365, "year")


def _strftime(fmt: str, tm: time.struct_time, timestamp: int, tz: int, local: bool) -> str:
    """Git's ``strbuf_addftime``: ``%z`` is the commit's zone, ``%s`` the timestamp."""
    out = []
    i = 0
    while i < len(fmt):
        c = fmt[i]
        if c != "%" or i + 1 >= len(fmt):
            out.append(c)
            i += 1
            continue
        spec = fmt[i + 1]
        i += 2
        if spec == "%":
            out.append("%")
        elif spec == "z":
            out.append(f"{'-' if tz < 0 else '+'}{abs(tz):04d}")
        elif spec == "Z":
            out.append(time.strftime("%Z", time.localtime(timestamp)) if local else "")
        elif spec == "s":
            out.append(str(timestamp))
        else:
            out.append(time.strftime("%" + spec, tm))
    return "".join(out)


def show_date(timestamp: int, tz: int, mode: DateMode) -> str:
    """``timestamp`` with zone ``tz`` (signed ``hhmm``) printed as ``mode`` says."""
    if mode.kind == "unix":
        return str(timestamp)
    if mode.local:
        tz = local_tz(timestamp)
    if mode.kind == "raw":
        return f"{timestamp} {'-' if tz < 0 else '+'}{abs(tz):04d}"
    if mode.kind == "relative":
        return relative_date(timestamp)
    tm, tz = _tm(timestamp, tz)
    sign = "-" if tz < 0 else "+"
    zone = f"{sign}{abs(tz):04d}"
    if mode.kind == "short":
        return f"{tm.tm_year:04d}-{tm.tm_mon:02d}-{tm.tm_mday:02d}"
    hms = f"{tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d}"
    if mode.kind == "iso":
        return f"{tm.tm_year:04d}-{tm.tm_mon:02d}-{tm.tm_mday:02d} {hms} {zone}"
    if mode.kind == "iso-strict":
        suffix = "Z" if tz == 0 else f"{sign}{abs(tz) // 100:02d}:{abs(tz) % 100:02d}"
        return f"{tm.tm_year:04d}-{tm.tm_mon:02d}-{tm.tm_mday:02d}T{hms}{suffix}"
    day = _DAYS[(tm.tm_wday + 1) % 7]
    month = _MONTHS[tm.tm_mon - 1]
    if mode.kind == "rfc":
        return f"{day}, {tm.tm_mday} {month} {tm.tm_year} {hms} {zone}"
    if mode.kind == "strftime":
        return _strftime(mode.strftime, tm, timestamp, tz, mode.local)
    text = f"{day} {month} {tm.tm_mday} {hms} {tm.tm_year}"
    return text if mode.local else f"{text} {zone}"
