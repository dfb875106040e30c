"""Dates: ``--since``/``--until`` (the exact forms of Git's approxidate), and ``show_date``.

Accepted: ``@<seconds>``, a number of seconds (nine digits or more, as Git reads a
bare large number), ``YYYY-MM-DD`` with optional ``[T ]HH:MM[:SS]`` and zone
(``Z``, ``+hhmm``, ``+hh:mm``; local time without one), and ``<n> <unit>[s] ago``
(``.`` may replace spaces) for seconds, minutes, hours, days and weeks.  Anything
else raises ``GitodbError``: guessing would walk a different history than Git.
"""

from __future__ import annotations

import calendar
import re
import time

from gitodb.errors import GitodbError

_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2}))?)?"
                  r"\s*(Z|[+-]\d{2}:?\d{2})?$")
_AGO = re.compile(r"(\d+)[ .](second|minute|hour|day|week)s?[ .]ago$")
_UNIT = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400}


def parse_date(text: str, now: float | None = None) -> int:
    """Seconds since the epoch that ``text`` names (see the module docstring)."""
    t = text.strip()
    if t.startswith("@") and t[1:].isdigit():
        return int(t[1:])
    if t.isdigit() and len(t) >= 9:
        return int(t)
    m = _ISO.match(t)
    if m:
        y, mo, d, hh, mi, ss, zone = m.groups()
        parts = (int(y), int(mo), int(d), int(hh or 0), int(mi or 0), int(ss or 0))
        if zone is None:
            return int(time.mktime((*parts, 0, 0, -1)))
        stamp = calendar.timegm((*parts, 0, 0, 0))
        if zone != "Z":
            z = zone.replace(":", "")
            offset = int(z[1:3]) * 3600 + int(z[3:5]) * 60
            stamp -= offset if z[0] == "+" else -offset
        return stamp
    m = _AGO.match(t)
    if m:
        base = time.time() if now is None else now
        return int(base) - int(m.group(1)) * _UNIT[m.group(2)]
    raise GitodbError(f"unsupported date format '{text}' (gitodb reads @<seconds>, "
                      "ISO 8601 dates and '<n> <unit>s ago')")


# -- showing dates (Git's show_date) ------------------------------------------------

DATE_MODES = ("default", "iso", "iso8601", "iso-strict", "iso8601-strict", "rfc", "rfc2822",
              "short", "raw", "unix", "relative", "local")
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def parse_date_mode(text: str) -> str:
    """The ``--date=<mode>`` Git accepts, normalised (``format:`` kept whole);
    ``GitodbError`` ``unknown date format`` otherwise (``human`` is not supported)."""
    if text.startswith(("format:", "format-local:")):
        return text
    base, local = (text[:-6], True) if text.endswith("-local") else (text, False)
    base = {"iso8601": "iso", "iso8601-strict": "iso-strict", "rfc2822": "rfc",
            "normal": "default"}.get(base, base)
    if base not in DATE_MODES or (local and base in ("relative", "raw", "unix", "local")):
        raise GitodbError(f"unknown date format {text}")
    if base == "local":
        return "default-local"
    return base + ("-local" if local else "")


def _tz_hhmm(tz: int) -> int:
    """Minutes east of UTC as Git's decimal ``hhmm`` (-0530 is -530)."""
    sign = -1 if tz < 0 else 1
    h, m = divmod(abs(tz), 60)
    return sign * (h * 100 + m)


def _local_offset(timestamp: int) -> int:
    """The local zone's offset (minutes east of UTC) at ``timestamp``."""
    lt = time.localtime(timestamp)
    return (lt.tm_gmtoff or 0) // 60


def relative_date(timestamp: int, now: int) -> str:
    """Git's ``show_date_relative``: ``3 hours ago``, ``2 years, 1 month ago``."""
    if now < timestamp:
        return "in the future"
    diff = now - timestamp

    def unit(n: int, word: str) -> str:
        return f"{n} {word}" + ("" if n == 1 else "s")

    if diff < 90:
        return unit(diff, "second") + " ago"
    diff = (diff + 30) // 60
    if diff < 90:
        return unit(diff, "minute") + " ago"
    diff = (diff + 30) // 60
    if diff < 36:
        return unit(diff, "hour") + " ago"
    diff = (diff + 12) // 24
    if diff < 14:
        return unit(diff, "day") + " ago"
    if diff < 70:
        return unit((diff + 3) // 7, "week") + " ago"
    if diff < 365:
        return unit((diff + 15) // 30, "month") + " ago"
    if diff < 1825:
        total = (diff * 12 * 2 + 365) // (365 * 2)
        years, months = divmod(total, 12)
        if months:
            return f"{unit(years, 'year')}, {unit(months, 'month')} ago"
        return unit(years, "year") + " ago"
    return unit((diff + 183) // 365, "year") + " ago"


def show_date(timestamp: int, tz: int, mode: str = "default", now: float | None = None) -> str:
    """A date as Git prints it; ``tz`` in minutes east of UTC, ``mode`` from
    ``parse_date_mode``."""
    if mode == "unix":
        return str(timestamp)
    if mode == "raw":
        return f"{timestamp} {_tz_hhmm(tz):+05d}"
    if mode == "relative":
        return relative_date(timestamp, int(time.time() if now is None else now))
    local = mode.endswith("-local") or mode.startswith("format-local:")
    if local:
        tz = _local_offset(timestamp)
        mode = mode[:-6] if mode.endswith("-local") else "format:" + mode[13:]
    try:
        t = time.gmtime(timestamp + tz * 60)
    except (OverflowError, OSError, ValueError):
        t = time.gmtime(0)
        tz = 0
    hhmm = _tz_hhmm(tz)
    if mode.startswith("format:"):
        spec = (mode[7:].replace("%%", "\x01").replace("%z", f"{hhmm:+05d}")
                .replace("%Z", "" if not local else time.strftime("%Z", time.localtime(
                    timestamp))).replace("%s", str(timestamp)))
        return time.strftime(spec, t).replace("\x01", "%")
    if mode == "iso":
        return (f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d} "
                f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} {hhmm:+05d}")
    if mode == "iso-strict":
        base = (f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T"
                f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}")
        if tz == 0:
            return base + "Z"   # Git 2.45+
        sign = "-" if tz < 0 else "+"
        return f"{base}{sign}{abs(tz) // 60:02d}:{abs(tz) % 60:02d}"
    if mode == "rfc":
        return (f"{_DAYS[t.tm_wday]}, {t.tm_mday} {_MONTHS[t.tm_mon - 1]} {t.tm_year} "
                f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} {hhmm:+05d}")
    if mode == "short":
        return f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}"
    out = (f"{_DAYS[t.tm_wday]} {_MONTHS[t.tm_mon - 1]} {t.tm_mday} "
           f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} {t.tm_year}")
    return out if local else f"{out} {hhmm:+05d}"
