"""Dates as people write them in ``<ref>@{<date>}``: a subset of Git's ``approxidate``.

Read: ``@<seconds>``; ``now``; ``yesterday``; ``<n> <unit>[s] ago`` (``.`` or ``_``
may replace the blanks; units second, minute, hour, day, week, month, year); and
absolute dates made of a date (``yyyy-mm-dd``, ``mm/dd/yyyy``, ``dd.mm.yyyy``, or a
month name with a day and year), a time (``hh:mm[:ss]``) and a zone (``+hhmm``,
``-hhmm``, ``UTC``, ``GMT``, ``Z``; local time without one), in any order, separated
by blanks, dots or commas; and ISO 8601 with ``T`` between date and time and the
zone right after the time (``2005-04-07T22:13:13Z``, ``...22:13+02:00``).
Anything else raises ``GitodbError`` rather than be guessed differently from Git.
"""

from __future__ import annotations

import calendar
import re
import time

from gitodb.errors import GitodbError

_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_AGO = re.compile(r"(\d+)[ ._]+(second|minute|hour|day|week|month|year)s?[ ._]+ago")
_DATE = re.compile(r"(\d{1,4})([-/.])(\d{1,2})\2(\d{1,4})")
_TIME = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?")
_ISO = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[t ](\d{1,2}):(\d{2})(?::(\d{2}))?)?"
    r"\s*(z|[+-]\d{2}:?\d{2})?"
)
_ZONE = re.compile(r"(?:^|(?<=[ .,]))([+-])(\d{2}):?(\d{2})(?=$|[ .,])")


def _months_ago(now: int, months: int) -> int:
    tm = time.localtime(now)
    total = tm.tm_year * 12 + tm.tm_mon - 1 - months
    year, mon = divmod(total, 12)
    day = min(tm.tm_mday, calendar.monthrange(year, mon + 1)[1])
    return int(time.mktime((year, mon + 1, day, tm.tm_hour, tm.tm_min, tm.tm_sec, 0, 0, -1)))


def _iso8601(t: str) -> int | None:
    """The time of an ISO 8601 date (lower-cased ``t``), or None if it is not one."""
    m = _ISO.fullmatch(t)
    if m is None:
        return None
    y, mo, d, hh, mi, ss, zone = m.groups()
    parts = (int(y), int(mo), int(d), int(hh or 0), int(mi or 0), int(ss or 0))
    if not (1 <= parts[1] <= 12 and 1 <= parts[2] <= 31):
        return None  # not a date: the general reader reports it
    if zone is None:
        return int(time.mktime((*parts, 0, 0, -1)))
    stamp = calendar.timegm((*parts, 0, 0, 0))
    if zone != "z":
        z = zone.replace(":", "")
        offset = int(z[1:3]) * 3600 + int(z[3:5]) * 60
        stamp -= offset if z[0] == "+" else -offset
    return stamp


def _ymd(a: int, sep: str, b: int, c: int) -> tuple[int, int, int]:
    """Git's order of guesses: y-m-d, then (for '.') d.m.y, then m/d/y, then d/m/y."""
    guesses = []
    if a > 70 or len(str(a)) == 4:
        guesses.append((a, b, c))
    if sep == ".":
        guesses.append((c, b, a))
    guesses += [(c, a, b), (c, b, a)]
    for y, m, d in guesses:
        if y < 100:
            y += 1900 if y > 70 else 2000
        if 1 <= m <= 12 and 1 <= d <= 31:
            return y, m, d
    raise GitodbError(f"invalid date: {a}{sep}{b}{sep}{c}")


def approxidate(text: str, now: int | None = None) -> int:
    """Seconds since the epoch that ``text`` names (see the module docstring)."""
    base = int(time.time()) if now is None else now
    t = text.strip().lower()
    if t.startswith("@") and t[1:].isdigit():
        return int(t[1:])
    if t.isdigit() and len(t) >= 9:
        return int(t)
    iso = _iso8601(t)
    if iso is not None:
        return iso
    if t == "now":
        return base
    if t == "yesterday":
        return base - 86400
    m = _AGO.fullmatch(t)
    if m:
        n, unit = int(m.group(1)), m.group(2)
        if unit == "month":
            return _months_ago(base, n)
        if unit == "year":
            return _months_ago(base, 12 * n)
        return base - n * _UNITS[unit]
    zone = None
    zm = _ZONE.search(t)
    if zm:
        zone = (int(zm.group(2)) * 60 + int(zm.group(3))) * (-1 if zm.group(1) == "-" else 1)
        t = t[: zm.start()] + " " + t[zm.end() :]
    for word in ("utc", "gmt", "z"):
        if re.search(rf"(?:^|[ .,]){word}(?:$|[ .,])", t):
            zone = 0
            t = re.sub(rf"(?:^|(?<=[ .,])){word}(?=$|[ .,])", " ", t)
    hh = mi = ss = 0
    tm_ = _TIME.search(t)
    if tm_:
        hh, mi, ss = int(tm_.group(1)), int(tm_.group(2)), int(tm_.group(3) or 0)
        t = t[: tm_.start()] + " " + t[tm_.end() :]
    dm = _DATE.search(t)
    if dm:
        y, mo, d = _ymd(int(dm.group(1)), dm.group(2), int(dm.group(3)), int(dm.group(4)))
        rest = t[: dm.start()] + t[dm.end() :]
    else:
        words = [w for w in re.split(r"[ .,]+", t) if w]
        month = next(
            (i + 1 for w in words for i, name in enumerate(_MONTHS) if w.startswith(name)), None
        )
        nums = [int(w) for w in words if w.isdigit()]
        if month is None or len(nums) != 2:
            raise GitodbError(f"unsupported date format '{text}'")
        d, y = (nums[0], nums[1]) if nums[0] <= 31 else (nums[1], nums[0])
        mo = month
        rest = ""
    if re.sub(r"[ .,]+", "", rest) and not all(
        any(w.startswith(n) for n in ("mon", "tue", "wed", "thu", "fri", "sat", "sun"))
        for w in re.split(r"[ .,]+", rest)
        if w
    ):
        raise GitodbError(f"unsupported date format '{text}'")
    parts = (y, mo, d, hh, mi, ss)
    if zone is None:
        return int(time.mktime((*parts, 0, 0, -1)))
    return calendar.timegm((*parts, 0, 0, 0)) - zone * 60
