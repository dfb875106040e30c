"""Git's strict date parser (``parse_date`` of date.c), for ``GIT_AUTHOR_DATE`` and
``GIT_COMMITTER_DATE``.

Written from the behaviour of Git's ``parse_date_basic``: the string is read left to
right; a word may be a month or weekday name (three letters or more), a zone name
(``UTC``, ``PST``...), ``AM``/``PM``, or the ``T`` of ISO 8601; a number may be
seconds since the epoch (nine digits or more, before any other date part),
``hh:mm[:ss]``, a date ``y-m-d``/``m/d/y``/``d.m.y`` (with Git's guesses between
the orders), ``YYYYMMDD``/``HHMMSS``, a year, a day or a month; ``+hhmm``/``-hh:mm``
is the zone.  ``@<seconds> <+/-hhmm>`` is the raw form.  Anything else is skipped.
Without a zone the time is local.  The result must have a date and a time in
1970-2099, else the date is invalid (``None``), as in Git.
"""

from __future__ import annotations

import re
import time

__all__ = ["parse_date", "format_date"]

_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_WEEKDAYS = "sunday monday tuesday wednesday thursday friday saturday".split()
#: (name, hours east of UTC, daylight saving) as Git's table has them
_ZONES = (
    ("IDLW", -12, 0), ("NT", -11, 0), ("CAT", -10, 0), ("HST", -10, 0), ("HDT", -10, 1),
    ("YST", -9, 0), ("YDT", -9, 1), ("PST", -8, 0), ("PDT", -8, 1), ("MST", -7, 0),
    ("MDT", -7, 1), ("CST", -6, 0), ("CDT", -6, 1), ("EST", -5, 0), ("EDT", -5, 1),
    ("AST", -3, 0), ("ADT", -3, 1), ("WAT", -1, 0), ("GMT", 0, 0), ("UTC", 0, 0),
    ("Z", 0, 0), ("WET", 0, 0), ("BST", 0, 1), ("CET", 1, 0), ("MET", 1, 0),
    ("MEWT", 1, 0), ("MEST", 1, 1), ("CEST", 1, 1), ("MESZ", 1, 1), ("FWT", 1, 0),
    ("FST", 1, 1), ("EET", 2, 0), ("EEST", 2, 1), ("WAST", 7, 0), ("WADT", 7, 1),
    ("CCT", 8, 0), ("JST", 9, 0), ("EAST", 10, 0), ("EADT", 10, 1), ("GST", 10, 0),
    ("NZT", 12, 0), ("NZST", 12, 0), ("NZDT", 12, 1), ("IDLE", 12, 0),
)  # fmt: skip
_MDAYS = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)
_NUMBER = re.compile(rb"[0-9]+")


class _Tm:
    """The fields found so far (-1: not given), like C's ``struct tm``."""

    __slots__ = ("year", "mon", "mday", "hour", "min", "sec")

    def __init__(self) -> None:
        self.year = self.mon = self.mday = self.hour = self.min = self.sec = -1

    def nodate(self) -> bool:
        return all(v < 0 for v in (self.year, self.mon, self.mday, self.hour, self.min, self.sec))


def _tm_to_time_t(tm: _Tm) -> int:
    """Git's ``tm_to_time_t``: seconds for a UTC date in 1970-2099, else -1."""
    year = tm.year - 70
    if year < 0 or year > 129 or tm.mon < 0 or tm.mon > 11:
        return -1
    day = tm.mday
    if tm.mon < 2 or (year + 2) % 4:
        day -= 1
    if tm.hour < 0 or tm.min < 0 or tm.sec < 0:
        return -1
    days = year * 365 + (year + 1) // 4 + _MDAYS[tm.mon] + day
    return days * 86400 + tm.hour * 3600 + tm.min * 60 + tm.sec


def _match_string(date: bytes, i: int, word: str) -> int:
    """How many characters at ``date[i:]`` match ``word`` (0 if a letter differs)."""
    n = 0
    target = word.encode()
    while i + n < len(date):
        c = date[i + n : i + n + 1]
        if n < len(target) and c.upper() == target[n : n + 1].upper():
            n += 1
            continue
        if c.isalnum():
            return 0
        break
    return n


class _Parser:
    def __init__(self, date: bytes, now: float) -> None:
        self.date = date
        self.now = now
        self.tm = _Tm()
        self.offset = -1
        self.gmt = False

    def alpha(self, i: int) -> int:
        d, tm = self.date, self.tm
        for n, name in enumerate(_MONTHS):
            m = _match_string(d, i, name)
            if m >= 3:
                tm.mon = n
                return m
        for name in _WEEKDAYS:
            m = _match_string(d, i, name)
            if m >= 3:
                return m
        for name, hours, dst in _ZONES:
            m = _match_string(d, i, name)
            if m >= 3 or m == len(name):
                if self.offset == -1:
                    self.offset = 60 * (hours + dst)
                return m
        if _match_string(d, i, "PM") == 2:
            tm.hour = (tm.hour % 12) + 12
            return 2
        if _match_string(d, i, "AM") == 2:
            tm.hour = tm.hour % 12
            return 2
        if d[i : i + 1] == b"T" and d[i + 1 : i + 2].isdigit() and tm.hour == -1:
            tm.min = tm.sec = 0
            return 1
        n = 1
        while d[i + n : i + n + 1].isalpha():
            n += 1
        return n

    def _set_date(self, year: int, month: int, day: int, refuse_future: bool) -> bool:
        """Git's ``set_date``: True when the fields were taken."""
        tm = self.tm
        if not (0 < month < 13 and 0 < day < 32):
            return False
        r = _Tm()
        r.year, r.hour, r.min, r.sec = tm.year, tm.hour, tm.min, tm.sec
        r.mon, r.mday = month - 1, day
        if year == -1:
            if not refuse_future:
                return False
            r.year = time.gmtime(self.now).tm_year - 1900
        elif 1970 <= year < 2100:
            r.year = year - 1900
        elif 70 < year < 100:
            r.year = year
        elif year < 38:
            r.year = year + 100
        else:
            return False
        if refuse_future:
            specified = _tm_to_time_t(r)
            # a date more than ten days ahead is not what was meant
            if specified != -1 and self.now + 10 * 86400 < specified:
                return False
        tm.mon, tm.mday = r.mon, r.mday
        if year != -1:
            tm.year = r.year
        return True

    def _multi(self, num: int, sep: bytes, i: int, end: int) -> int:
        """Git's ``match_multi_number``: the length used, or 0."""
        d, tm = self.date, self.tm
        m = _NUMBER.match(d, end + 1)
        assert m is not None
        num2 = int(m.group())
        end = m.end()
        num3 = -1
        if d[end : end + 1] == sep and d[end + 1 : end + 2].isdigit():
            m = _NUMBER.match(d, end + 1)
            assert m is not None
            num3 = int(m.group())
            end = m.end()
        if sep == b":":
            if num3 < 0:
                num3 = 0
            if num < 25 and 0 <= num2 < 60 and 0 <= num3 <= 60:
                tm.hour, tm.min, tm.sec = num, num2, num3
                return end - i
            return 0
        if num > 70 and (
            self._set_date(num, num2, num3, False) or self._set_date(num, num3, num2, False)
        ):
            return end - i
        if sep != b"." and self._set_date(num3, num, num2, True):
            return end - i
        if self._set_date(num3, num2, num, True):
            return end - i
        if sep == b"." and self._set_date(num3, num, num2, True):
            return end - i
        return 0

    def digit(self, i: int) -> int:
        d, tm = self.date, self.tm
        m = _NUMBER.match(d, i)
        assert m is not None
        num, end = int(m.group()), m.end()
        if num >= 100000000 and tm.nodate():
            try:
                g = time.gmtime(num)
            except (OverflowError, OSError, ValueError):
                g = None
            if g is not None:
                tm.year, tm.mon, tm.mday = g.tm_year - 1900, g.tm_mon - 1, g.tm_mday
                tm.hour, tm.min, tm.sec = g.tm_hour, g.tm_min, g.tm_sec
                self.gmt = True
                return end - i
        sep = d[end : end + 1]
        if sep in (b":", b".", b"/", b"-") and d[end + 1 : end + 2].isdigit():
            used = self._multi(num, sep, i, end)
            if used:
                return used
        n = end - i
        if n in (8, 6):
            a, b, c = num // 10000, (num % 10000) // 100, num % 100
            if n == 8:
                self._set_date(a, b, c, False)
            elif 0 <= a <= 24 and 0 <= b < 60 and 0 <= c <= 60:
                tm.hour, tm.min, tm.sec = a, b, c
                if sep == b"." and d[end + 1 : end + 2].isdigit():
                    m2 = _NUMBER.match(d, end + 1)
                    assert m2 is not None
                    end = m2.end()
            return end - i
        if n == 4:
            if num <= 1400 and self.offset == -1:
                self.offset = (num // 100) * 60 + num % 100
            elif 1900 < num < 2100:
                tm.year = num - 1900
            return n
        if n > 2:
            return n
        if 0 < num < 32 and tm.mday < 0:
            tm.mday = num
            return n
        if n == 2 and tm.year < 0:
            if num < 10 and tm.mday >= 0:
                tm.year = num + 100
                return n
            if num >= 70:
                tm.year = num
                return n
        if 0 < num < 13 and tm.mon < 0:
            tm.mon = num - 1
        return n

    def tz(self, i: int) -> int:
        d = self.date
        m = _NUMBER.match(d, i + 1)
        assert m is not None
        hour, end = int(m.group()), m.end()
        n = end - (i + 1)
        minutes = 0
        if n == 4:
            minutes, hour = hour % 100, hour // 100
        elif n != 2:
            minutes = 99
        elif d[end : end + 1] == b":":
            m2 = _NUMBER.match(d, end + 1)
            if m2 is None:
                minutes, end = 99, end + 1
            else:
                minutes, end = int(m2.group()), m2.end()
                if end - (i + 1) != 5:
                    minutes = 99
        if minutes < 60 and hour < 24:
            offset = hour * 60 + minutes
            self.offset = -offset if d[i : i + 1] == b"-" else offset
        return end - i


def _raw(date: bytes) -> tuple[int, int] | None:
    """Git's ``match_object_header_date``: ``<seconds> <+/-hhmm>`` exactly."""
    m = re.fullmatch(rb"([0-9]+) ([+-])([0-9]{4})\n?", date)
    if m is None or int(m.group(1)) >= 1 << 64:
        return None
    ofs = int(m.group(3))
    ofs = (ofs // 100) * 60 + ofs % 100
    return int(m.group(1)), -ofs if m.group(2) == b"-" else ofs


def parse_date(text: str | bytes, now: float | None = None) -> tuple[int, int] | None:
    """``(timestamp, offset in minutes east of UTC)`` for ``text``, or None where Git
    says ``invalid date format``.  ``now`` (default: the clock) bounds guesses."""
    date = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    if date.startswith(b"@"):
        got = _raw(date[1:])
        if got is not None:
            return got
    p = _Parser(date, time.time() if now is None else now)
    i = 0
    while i < len(date):
        c = date[i : i + 1]
        if c in (b"", b"\n"):
            break
        used = 0
        if c.isalpha():
            used = p.alpha(i)
        elif c.isdigit():
            used = p.digit(i)
        elif c in (b"-", b"+") and date[i + 1 : i + 2].isdigit():
            used = p.tz(i)
        i += used or 1
        if c == b"\n":
            break
    tm = p.tm
    timestamp = _tm_to_time_t(tm)
    if timestamp == -1:
        return None
    offset = p.offset
    if offset == -1:
        # the local zone's offset at that time (mktime)
        local = time.mktime(
            (tm.year + 1900, tm.mon + 1, tm.mday, tm.hour, tm.min, tm.sec, 0, 0, -1)
        )
        offset = (
            int((timestamp - local) // 60) if timestamp > local else -int((local - timestamp) // 60)
        )
    if not p.gmt:
        timestamp -= offset * 60
    return timestamp, offset


def format_date(timestamp: int, offset: int) -> str:
    """Git's ``date_string``: ``<seconds> <+|->hhmm``."""
    sign = "-" if offset < 0 else "+"
    offset = abs(offset)
    return f"{timestamp} {sign}{offset // 60:02d}{offset % 60:02d}"
