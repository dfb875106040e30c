"""Dates for ``--since``/``--until``: the forms of Git's approxidate that are exact.

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
