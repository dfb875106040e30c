"""Abbreviated ids that name several objects: Git's type hints and its list of candidates.

A command that wants an object of some kind tells the resolver (``hint``): Git's
``GET_OID_COMMIT`` (``commit``), ``GET_OID_COMMITTISH`` (``committish``: a commit or
a tag that peels to one), ``GET_OID_TREE`` (``tree``), ``GET_OID_TREEISH``
(``treeish``: a tree, or a commit or tag that peels to one) and ``GET_OID_BLOB``
(``blob``).  Without one, ``core.disambiguate`` gives the default.  When several
objects share the prefix, the one that passes the hint is chosen; otherwise the
name is ambiguous, and Git lists the candidates that pass it (all of them without
a hint) as ``hint:`` lines, tags first, then commits, trees and blobs, each kind
in id order.
"""

from __future__ import annotations

from gitodb.errors import ConfigError, GitodbError
from gitodb.objects.commit import Commit, subject_of
from gitodb.objects.datefmt import DateMode, show_date, tz_hhmm
from gitodb.objects.tag import Tag
from gitodb.repo.abbrev import Abbreviator, default_abbrev

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from gitodb.repo import Repository

#: the hints Git knows, as ``core.disambiguate`` spells them (``none``: no hint)
HINTS = ("commit", "committish", "tree", "treeish", "blob")

#: Git's order of the kinds in the list: an unreadable object, then tags, commits,
#: trees and blobs
_ORDER = {None: -1, "tag": 0, "commit": 1, "tree": 2, "blob": 3}

_SHORT = DateMode("short")


def default_hint(repo: Repository) -> str | None:
    """``core.disambiguate``: the hint of a name given without one (None: no hint)."""
    value = repo.config.get("core.disambiguate")
    if value is None or value.lower() == "none":
        return None
    if value.lower() not in HINTS:
        raise ConfigError(f"unknown hint type for 'core.disambiguate': {value}")
    return value.lower()


def _type_of(repo: Repository, oid: bytes) -> str | None:
    try:
        return repo.odb.read_header(oid)[0]
    except GitodbError:
        return None


def passes(repo: Repository, oid: bytes, hint: str) -> bool:
    """Whether the object ``oid`` is of the kind ``hint`` names (tags peeled)."""
    kind = _type_of(repo, oid)
    if hint in ("commit", "tree", "blob"):
        return kind == hint
    accepted = ("commit",) if hint == "committish" else ("commit", "tree")
    for _ in range(100):
        if kind in accepted:
            return True
        if kind != "tag":
            return False
        oid = Tag(repo.odb.read(oid)[1], repo.object_format).object
        kind = _type_of(repo, oid)
    return False


def choose(repo: Repository, matches: Sequence[bytes], hint: str | None) -> list[bytes]:
    """What ``hint`` leaves of ``matches``: one object is the answer; several make the
    name ambiguous, and are the candidates Git lists.  When none passes, all of them
    are (Git then lists every match)."""
    if len(matches) < 2 or hint is None:
        return list(matches)
    passing = [m for m in matches if passes(repo, m, hint)]
    return passing or list(matches)


def candidate_hints(repo: Repository, candidates: Sequence[bytes]) -> list[str]:
    """Git's ``hint:`` lines (without the prefix) listing ``candidates``."""
    abbrev = Abbreviator(repo, default_abbrev(repo))
    kinds = {oid: _type_of(repo, oid) for oid in candidates}
    lines = ["The candidates are:"]
    for oid in sorted(candidates, key=lambda o: (_ORDER.get(kinds[o], 4), o)):
        lines.append(f"  {_describe(repo, oid, kinds[oid], abbrev(oid))}")
    return lines


def _describe(repo: Repository, oid: bytes, kind: str | None, short: str) -> str:
    if kind is None:
        return f"{short} [bad object]"
    fmt = repo.object_format
    if kind == "commit":
        commit = Commit(repo.odb.read(oid)[1], fmt, oid)
        author = commit.author
        date = ""
        if author is not None and author.timestamp is not None:
            date = show_date(author.timestamp, tz_hhmm(author.tz_offset or 0), _SHORT)
        subject = subject_of(commit.message).decode("utf-8", "surrogateescape")
        return f"{short} commit {date} - {subject}"
    if kind == "tag":
        try:
            tag = Tag(repo.odb.read(oid)[1], fmt, oid)
            name = tag.name.decode("utf-8", "surrogateescape")
            tagger = tag.tagger
        except GitodbError:
            return f"{short} tag [tag could not be parsed]"
        when = tagger.timestamp if tagger is not None else None
        # Git shows a tag's date in UTC
        return f"{short} tag {show_date(when or 0, 0, _SHORT)} - {name}"
    return f"{short} {kind}"
