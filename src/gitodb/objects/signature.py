"""Identities in commits and tags: ``Name <email> <timestamp> <+hhmm>``.

``Signature`` keeps the raw bytes of the line (so serialising gives them back)
and splits them on demand the way Git's ``split_ident_line`` does: the name ends
before the first ``<``, the email runs to the next ``>``, and the date and zone
follow the last ``>``.  A line Git would call broken still round-trips; what
Git cannot read of it is then empty (name, email) or None (timestamp, zone).

Example::

    sig = Signature.create("A U Thor", "author@example.com", 1700000000, -300)
    sig.raw          # b"A U Thor <author@example.com> 1700000000 -0500"
    Signature(b"A <a@b> 5 +0130").tz_offset   # 90 (minutes east of UTC)
"""

from __future__ import annotations

from gitodb.errors import ObjectFormatError

_SPACE = b" \t\n\r\x0b\x0c"
_DIGITS = b"0123456789"


def _span(data: bytes, pos: int, chars: bytes) -> int:
    end = pos
    n = len(data)
    while end < n and data[end] in chars:
        end += 1
    return end


class Signature:
    """One identity line; ``raw`` as stored, the parts parsed lazily like Git."""

    __slots__ = ("raw", "_split")

    def __init__(self, raw: bytes) -> None:
        self.raw = bytes(raw)
        self._split: tuple[bytes, bytes, int | None, bytes | None] | None = None

    @classmethod
    def create(
        cls, name: str | bytes, email: str | bytes, timestamp: int, tz_offset: int = 0
    ) -> Signature:
        """A signature from its parts; ``tz_offset`` in minutes east of UTC.

        Raises ``ObjectFormatError`` for parts Git could not read back (``<``, ``>``
        or a newline in the name or email, a negative timestamp).
        """
        bname = name.encode("utf-8", "surrogateescape") if isinstance(name, str) else name
        bmail = email.encode("utf-8", "surrogateescape") if isinstance(email, str) else email
        for part, what in ((bname, "name"), (bmail, "email")):
            if any(c in part for c in b"<>\n\0"):
                raise ObjectFormatError(f"invalid {what} in identity: {part!r}")
        if timestamp < 0:
            raise ObjectFormatError(f"invalid timestamp in identity: {timestamp}")
        sign = b"-" if tz_offset < 0 else b"+"
        hours, minutes = divmod(abs(tz_offset), 60)
        return cls(b"%s <%s> %d %s%02d%02d" % (bname, bmail, timestamp, sign, hours, minutes))

    def _parts(self) -> tuple[bytes, bytes, int | None, bytes | None]:
        if self._split is None:
            self._split = _split_ident(self.raw)
        return self._split

    @property
    def name(self) -> bytes:
        """The name (bytes before `` <``, trailing spaces dropped)."""
        return self._parts()[0]

    @property
    def email(self) -> bytes:
        """The email between ``<`` and ``>``."""
        return self._parts()[1]

    @property
    def timestamp(self) -> int | None:
        """Seconds since the epoch, or None if the line has no readable date."""
        return self._parts()[2]

    @property
    def timestamp_text(self) -> bytes | None:
        """The timestamp's digits as written (Git's ``%at`` shows them so, zeros and
        all), or None with the timestamp."""
        if self._parts()[2] is None:
            return None
        line = self.raw
        pos = _span(line, line.rfind(b">") + 1, _SPACE)
        return line[pos : _span(line, pos, _DIGITS)]

    @property
    def tz(self) -> bytes | None:
        """The zone as written (``+0130``), or None."""
        return self._parts()[3]

    @property
    def tz_offset(self) -> int | None:
        """The zone in minutes east of UTC (``+0130`` is 90), or None."""
        tz = self._parts()[3]
        if tz is None:
            return None
        value = int(tz[1:])
        minutes = (value // 100) * 60 + value % 100
        return -minutes if tz[:1] == b"-" else minutes

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Signature) and other.raw == self.raw

    def __hash__(self) -> int:
        return hash(self.raw)

    def __repr__(self) -> str:
        return f"Signature({self.raw!r})"


def _split_ident(line: bytes) -> tuple[bytes, bytes, int | None, bytes | None]:
    """Git's ``split_ident_line``: (name, email, timestamp or None, zone or None)."""
    lt = line.find(b"<")
    gt = line.find(b">", lt + 1) if lt >= 0 else -1
    if gt < 0:
        return b"", b"", None, None  # Git cannot split it: nothing is known
    name = line[:lt].rstrip(_SPACE)
    email = line[lt + 1 : gt]
    # The date follows the last '>' (helps with a stray '>' inside the email).
    last = line.rfind(b">")
    pos = _span(line, last + 1, _SPACE)
    date_end = _span(line, pos, _DIGITS)
    if date_end == pos:
        return name, email, None, None
    zone = _span(line, date_end, _SPACE)
    if zone >= len(line) or line[zone] not in b"+-":
        return name, email, None, None
    zone_end = _span(line, zone + 1, _DIGITS)
    if zone_end == zone + 1:
        return name, email, None, None
    return name, email, int(line[pos:date_end]), line[zone:zone_end]
