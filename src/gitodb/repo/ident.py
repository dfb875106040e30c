"""Author and committer identities as Git forms them for a new commit (ident.c).

Name and email come from ``GIT_AUTHOR_NAME``/``GIT_AUTHOR_EMAIL`` (committer:
``GIT_COMMITTER_*``), else ``author.name``/``author.email`` (``committer.*``), else
``user.name``/``user.email``, else ``EMAIL`` for the email.  The date is
``GIT_AUTHOR_DATE``/``GIT_COMMITTER_DATE`` read by Git's strict date parser, else
now in the local zone.  Git's clean-up applies: leading and trailing "crud" and the
delimiters ``<``, ``>`` and newlines are dropped.  Where Git would guess a name or
an address from the system (the password database, the host name), gitodb asks
for the configuration instead, with Git's "Author identity unknown" message.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from gitodb.errors import GitodbError
from gitodb.objects.parsedate import format_date, parse_date

if TYPE_CHECKING:
    from gitodb.repo.config import Config

__all__ = ["IdentityError", "ident_line", "strip_crud"]

_CRUD = frozenset(b" ,:;<>\"\\'") | frozenset(range(33))

_UNKNOWN = """{who} identity unknown

*** Please tell me who you are.

Run

  git config --global user.email "you@example.com"
  git config --global user.name "Your Name"

to set your account's default identity.
Omit --global to set the identity only in this repository.
"""


class IdentityError(GitodbError):
    """No name or email for a commit identity; ``details_text`` is Git's advice."""

    def __init__(self, message: str, advice: str) -> None:
        super().__init__(message)
        self.advice = advice


def strip_crud(value: bytes) -> bytes:
    """Git's ``strbuf_addstr_without_crud``."""
    start, end = 0, len(value)
    while start < end and value[start] in _CRUD:
        start += 1
    while end > start and value[end - 1] in _CRUD:
        end -= 1
    return bytes(c for c in value[start:end] if c not in b"\n<>")


def _first(*values: str | None) -> str | None:
    return next((v for v in values if v is not None), None)


def ident_line(config: Config, who: str, now: float | None = None) -> bytes:
    """``Name <email> <seconds> <+hhmm>`` for ``who`` (``"author"`` or ``"committer"``).

    Raises ``IdentityError`` without a name or email, ``GitodbError`` (``invalid
    date format: ...``) for a date Git cannot read.
    """
    env = "GIT_AUTHOR" if who == "author" else "GIT_COMMITTER"
    name = _first(os.environ.get(f"{env}_NAME"), config.get(f"{who}.name"), config.get("user.name"))
    email = _first(
        os.environ.get(f"{env}_EMAIL"),
        config.get(f"{who}.email"),
        config.get("user.email"),
        os.environ.get("EMAIL"),
    )
    title = "Author" if who == "author" else "Committer"
    if email is None:
        raise IdentityError("unable to auto-detect email address", _UNKNOWN.format(who=title))
    email_b = strip_crud(email.encode("utf-8", "surrogateescape"))
    if name is None:
        raise IdentityError("unable to auto-detect name", _UNKNOWN.format(who=title))
    if not name:
        shown = email_b.decode("utf-8", "replace")
        raise GitodbError(f"empty ident name (for <{shown}>) not allowed")
    name_b = strip_crud(name.encode("utf-8", "surrogateescape"))
    if not name_b:
        raise GitodbError(f"name consists only of disallowed characters: {name}")
    date_text = os.environ.get(f"{env}_DATE")
    if date_text:
        got = parse_date(date_text)
        if got is None:
            raise GitodbError(f"invalid date format: {date_text}")
        date = format_date(*got)
    else:
        stamp = int(time.time() if now is None else now)
        local = time.localtime(stamp)
        date = format_date(stamp, (local.tm_gmtoff or 0) // 60)
    return b"%s <%s> %s" % (name_b, email_b, date.encode())
