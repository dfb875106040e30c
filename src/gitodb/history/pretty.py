"""Commits printed as ``git log`` prints them: ``--format`` placeholders and the
built-in ``--pretty`` formats.  One formatter for ``log``, ``log -g`` and ``reflog``.

``Formatter(repo, "%H %an %s")`` compiles a format once; ``format(oid, raw)``
expands it for one commit (``raw`` its content).  Placeholders (Git's meaning):
``%H %h %T %t %P %p``, ``%a``/``%c`` + ``n e l d D r t i I s`` (name, email, local
part, date in ``--date`` mode, RFC 2822, relative, unix, ISO, strict ISO, short),
``%s %f %b %B %e``, ``%d %D`` (ref names), ``%n %% %xNN``, colours (``%C...``,
off as for any output that is not a terminal), the ``+``/``-``/space modifiers,
``%aN %aE %aL`` (mailmap), and with ``extra`` the reflog's ``%g...`` (empty
outside a reflog walk, as in Git).  Placeholders Git has and gitodb does not
(notes, signatures, trailers, padding, human dates) raise ``GitodbError``;
anything else is copied as Git copies it.

``pretty_commit(kind, ...)`` is the ``oneline``/``short``/``medium``/``full``/
``fuller``/``raw`` body (``log`` adds the ``commit`` line and separators).

Example::

    f = Formatter(repo, b"%h %ad %s", date_mode="short")
    for node in walk.commits():
        out.write(f.format(node.id, repo.odb.read(node.id)[1]) + b"\\n")
"""

from __future__ import annotations

import codecs

from gitodb.errors import GitodbError
from gitodb.lazyre import lazy
from gitodb.objects.commit import parse_commit_links, subject_of
from gitodb.objects.datefmt import DateMode, parse_date_mode, show_date, tz_hhmm
from gitodb.objects.mailmap import Mailmap
from gitodb.objects.signature import Signature

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeAlias

    from gitodb.repo import Repository

# One placeholder after "%": the longest forms first.
_TOKEN = lazy(
    rb"%([+\- ]?)(n|%|x[0-9a-fA-F]{2}|C\([^)]*\)|Cred|Cgreen|Cblue|Creset|[ac][nNeElLdDrtiIsh]"
    rb"|g[dDnNeElLs]|G[GSKFPTU?]|[HhTtPpsfbBeNdDmSw]|[<>]\(|><\(|>>\(|\(trailers|\(describe"
    rb"|\(decorate)"
)
_UNSUPPORTED = {
    b"ah",
    b"ch",
    b"m",
    b"S",
    b"w",
    b"<(",
    b">(",
    b"><(",
    b">>(",
    b"(trailers",
    b"(describe",
    b"(decorate",
    b"gE",
    b"gL",
    b"GG",
    b"GS",
    b"GK",
    b"GF",
    b"GP",
    b"GT",
    b"GU",
    b"G?",
}
_WS = b" \t\n\r\x0b\x0c"
# The placeholders the native formatter expands (_native/histwalk.inc, FMT_*).
_NATIVE_CODES = {
    b"H": 0,
    b"T": 1,
    b"P": 2,
    b"s": 3,
    b"an": 4,
    b"ae": 5,
    b"at": 6,
    b"cn": 7,
    b"ce": 8,
    b"ct": 9,
    # abbreviated (the walk's format() is given Formatter.native_abbrev())
    b"h": 10,
    b"t": 11,
    b"p": 12,
}
_NATIVE_ABBREVIATED = (10, 11, 12)
# The fixed date formats of %aD %ar %ai %aI %as (and the committer's).
_PLACEHOLDER_DATES = {
    b"D": DateMode("rfc"),
    b"r": DateMode("relative"),
    b"i": DateMode("iso"),
    b"I": DateMode("iso-strict"),
    b"s": DateMode("short"),
}
_MESSAGE = lazy(rb"\n\n")


def _date_mode(mode: DateMode | str) -> DateMode:
    """``mode`` as a ``DateMode``; a name is read like ``--date=<name>``."""
    return parse_date_mode(mode) if isinstance(mode, str) else mode


class CommitText:
    """The parts of a commit's content a format reads, found on first use."""

    __slots__ = ("oid", "raw", "fmt", "_head_end", "_msg", "_idents", "_links", "message_recoded")

    def __init__(self, oid: bytes, raw: bytes, fmt: object) -> None:
        self.oid = oid
        self.raw = raw
        self.fmt = fmt
        end = raw.find(b"\n\n")
        self._head_end = len(raw) if end < 0 else end + 1
        self._msg: bytes | None = None
        self._idents: dict[bytes, Signature | None] = {}
        self._links: tuple[bytes, list[bytes], int] | None = None
        self.message_recoded = False

    def links(self) -> tuple[bytes, list[bytes], int]:
        if self._links is None:
            self._links = parse_commit_links(self.raw, self.fmt)  # type: ignore[arg-type]
        return self._links

    def header(self, key: bytes) -> bytes | None:
        """The value of the last ``key`` header line (Git's format reads the last)."""
        raw = self.raw
        found = None
        pos = 0
        needle = key + b" "
        end = self._head_end
        while True:
            at = raw.find(needle, pos, end)
            if at < 0:
                return found
            if at == 0 or raw[at - 1] == 0x0A:
                eol = raw.find(b"\n", at, end)
                found = raw[at + len(needle) : eol if eol >= 0 else end]
                pos = at + len(needle)
            else:
                pos = at + 1

    def ident(self, who: bytes) -> Signature | None:
        if who not in self._idents:
            value = self.header(b"author" if who == b"a" else b"committer")
            self._idents[who] = None if value is None else Signature(value)
        return self._idents[who]

    @property
    def message(self) -> bytes:
        """The message, re-encoded to UTF-8 when its ``encoding`` header names another."""
        if self._msg is None:
            msg = self.raw[self._head_end + 1 :] if self._head_end < len(self.raw) else b""
            enc = self.header(b"encoding")
            if enc is not None:
                if enc.lower() in (b"utf-8", b"utf8"):
                    self.message_recoded = True
                else:
                    got = _reencode(msg, enc)
                    self.message_recoded = got is not None
                    msg = msg if got is None else got
            self._msg = msg
        return self._msg


def _reencode(data: bytes, encoding: bytes) -> bytes | None:
    """``data`` converted from ``encoding`` to UTF-8; None when Git could not either."""
    try:
        name = encoding.decode("ascii")
        codecs.lookup(name)
        return data.decode(name).encode("utf-8")
    except (LookupError, UnicodeError):
        return None


def _lines(msg: bytes) -> list[bytes]:
    """The message's lines, each with its LF (the last may lack one); only LF ends a
    line, as in Git (a lone CR stays inside its line)."""
    if not msg:
        return []
    lines = [line + b"\n" for line in msg.split(b"\n")]
    last = lines.pop()
    if last != b"\n":
        lines.append(last[:-1])
    return lines


def _is_blank(line: bytes) -> bool:
    return not line.strip(_WS)


def split_message(msg: bytes) -> tuple[list[bytes], bytes]:
    """Git's subject and body: the first paragraph's lines (right-trimmed) after
    leading blank lines, and the rest after the blank lines that follow it."""
    lines = _lines(msg)
    i = 0
    while i < len(lines) and _is_blank(lines[i]):
        i += 1
    subject = []
    while i < len(lines) and not _is_blank(lines[i]):
        subject.append(lines[i].rstrip(_WS))
        i += 1
    while i < len(lines) and _is_blank(lines[i]):
        i += 1
    return subject, b"".join(lines[i:])


def sanitized_subject(subject: bytes) -> bytes:
    """``%f``: the subject as a file name (Git's ``format_sanitized_subject``)."""
    out = bytearray()
    space = 2
    i = 0
    n = len(subject)
    while i < n:
        c = subject[i]
        if (0x61 <= c <= 0x7A) or (0x41 <= c <= 0x5A) or (0x30 <= c <= 0x39) or c in b"._":
            if space == 1:
                out.append(0x2D)
            space = 0
            out.append(c)
            if c == 0x2E:
                while i + 1 < n and subject[i + 1] == 0x2E:
                    i += 1
        else:
            space |= 1
        i += 1
    return bytes(out).rstrip(b".-")


class Decorations:
    """Ref names per object, as ``%d``/``--decorate`` show them (Git's
    ``load_ref_decorations``): newest added first, ``HEAD -> <branch>`` combined;
    ``every_ref`` also names the refs outside heads, remotes and tags (full names)."""

    def __init__(self, repo: Repository, *, full: bool = False, every_ref: bool = False) -> None:
        from gitodb.objects.tag import Tag

        self.names: dict[bytes, list[tuple[str, str]]] = {}
        refs = repo.refs
        odb = repo.odb
        fmt = repo.object_format

        def add(oid: bytes, kind: str, name: str) -> None:
            self.names.setdefault(oid, []).insert(0, (kind, name))

        for ref in refs.iter_refs("refs/"):
            name = ref.name
            oid = ref.oid if ref.target is None else refs.resolve(name)
            if oid is None:
                continue
            if name.startswith("refs/heads/"):
                kind, shown = "branch", name[11:]
            elif name.startswith("refs/remotes/"):
                kind, shown = "remote", name[13:]
            elif name.startswith("refs/tags/"):
                kind, shown = "tag", name[10:]
            elif name == "refs/stash" or every_ref:
                kind, shown = "ref", name  # every_ref: no filter (rev-list --bisect-all)
            else:
                continue  # Git's default decoration filter: other namespaces are hidden
            if full:
                shown = name
            add(oid, kind, shown)
            seen = 0
            while kind == "tag" and seen < 100:
                try:
                    t, data = odb.read(oid)
                except GitodbError:
                    break
                if t != "tag":
                    break
                oid = Tag(data, fmt, oid).object
                add(oid, kind, shown)
                seen += 1
        self.head_branch: str | None = None
        head = refs.resolve("HEAD")
        if head is not None:
            add(head, "head", "HEAD")
            target = refs.read("HEAD")
            sym = getattr(target, "target", None)
            if isinstance(sym, str) and sym.startswith("refs/heads/"):
                self.head_branch = sym if full else sym[11:]

    def of(self, oid: bytes) -> list[str]:
        """The decorations of ``oid`` in Git's order."""
        names = self.names.get(oid)
        if not names:
            return []
        out = []
        head_here = any(k == "head" for k, _n in names)
        for kind, name in names:
            if kind == "head":
                out.append(
                    f"HEAD -> {self.head_branch}"
                    if self.head_branch
                    and any(k == "branch" and n == self.head_branch for k, n in names)
                    else "HEAD"
                )
            elif kind == "branch" and head_here and name == self.head_branch:
                continue
            elif kind == "tag":
                out.append("tag: " + name)
            else:
                out.append(name)
        return out


Extra: TypeAlias = "Callable[[bytes], bytes | None]"


def log_mailmap(repo: Repository) -> Mailmap:
    """The mailmap ``git log`` reads: the work tree's (none with ``GIT_DIR`` set)."""
    from gitodb.repo import work_tree_mailmap

    return work_tree_mailmap(repo)


def _constant(code: bytes) -> bytes | None:
    """What a placeholder that depends on no commit expands to (``%n``, ``%%``,
    ``%xNN``), else None."""
    if code == b"n":
        return b"\n"
    if code == b"%":
        return b"%"
    if code[:1] == b"x" and len(code) == 3:
        try:
            return bytes([int(code[1:], 16)])
        except ValueError:
            return None
    return None


class Formatter:
    """A compiled ``--format`` (see the module docstring)."""

    def __init__(
        self,
        repo: Repository,
        fmt: bytes | str,
        *,
        date_mode: DateMode | str = "default",
        abbrev: int | None = None,
        decorations: Decorations | None = None,
        extra_codes: frozenset[bytes] = frozenset(),
        notes: Callable[[bytes], bytes] | None = None,
    ) -> None:
        from gitodb.repo.abbrev import Abbreviator, default_abbrev

        #: ``%N``: a commit's notes as ``history.notes.DisplayNotes.text(raw=True)``
        #: gives them (None: no notes shown)
        self.notes = notes
        self.repo = repo
        self.date_mode = _date_mode(date_mode)
        self.abbrev = Abbreviator(repo, default_abbrev(repo) if abbrev is None else abbrev)
        self._decorations = decorations
        self._mailmap: Mailmap | None = None
        self._parents: list[bytes] | None = None  # the walk's parents of this commit
        self.fmt = repo.object_format
        raw = fmt.encode("utf-8", "surrogateescape") if isinstance(fmt, str) else fmt
        self.parts: list[bytes | tuple[bytes, bytes]] = []
        pos = 0
        for m in _TOKEN.finditer(raw):
            if m.start() < pos:
                continue
            code = m.group(2)
            if code in _UNSUPPORTED and (code[:1] != b"g" or extra_codes):
                raise GitodbError(
                    f"gitodb does not support the format placeholder "
                    f"'%{code.decode('utf-8', 'replace')}'"
                )
            if m.start() > pos:
                self.parts.append(raw[pos : m.start()])
            constant = _constant(code) if m.group(1) == b"" else None
            self.parts.append((m.group(1), code) if constant is None else constant)
            pos = m.end()
        if pos < len(raw):
            self.parts.append(raw[pos:])
        # adjacent literal parts as one (a %x00 or %n between literals costs nothing)
        merged: list[bytes | tuple[bytes, bytes]] = []
        for part in self.parts:
            if isinstance(part, bytes) and merged and isinstance(merged[-1], bytes):
                merged[-1] += part
            else:
                merged.append(part)
        self.parts = merged
        self.empty = not raw

    @property
    def wants_notes(self) -> bool:
        """Whether the format has ``%N`` (Git's ``userformat_want.notes``)."""
        return any(not isinstance(p, bytes) and p[1] == b"N" for p in self.parts)

    def native_parts(self) -> list[bytes | int] | None:
        """The format for the native core's formatter (``CommitWalk.format``):
        literals and the codes of ``%H %T %P %h %t %p %s %an %ae %at %cn %ce %ct``, or
        None when it uses anything else (then ``format`` expands it)."""
        out: list[bytes | int] = []
        for part in self.parts:
            if isinstance(part, bytes):
                out.append(part)
                continue
            mod, code = part
            native = _NATIVE_CODES.get(code)
            if mod or native is None:
                return None
            out.append(native)
        return out

    def native_abbrev(self, parts: list[bytes | int]) -> tuple[list[Any], int] | None:
        """The abbreviations the native ``parts`` need (``Abbreviator.native_spec``
        for ``%h %t %p``), or None."""
        if any(p in _NATIVE_ABBREVIATED for p in parts if isinstance(p, int)):
            return self.abbrev.native_spec()
        return None

    @property
    def decorations(self) -> Decorations:
        if self._decorations is None:
            self._decorations = Decorations(self.repo)
        return self._decorations

    @property
    def mailmap(self) -> Mailmap:
        if self._mailmap is None:
            self._mailmap = log_mailmap(self.repo)
        return self._mailmap

    def format(
        self, oid: bytes, raw: bytes, extra: Extra | None = None, parents: list[bytes] | None = None
    ) -> bytes:
        """The format expanded for commit ``oid`` with content ``raw``; ``parents``
        are the parents a path-limited walk rewrote (``%P``/``%p`` show them)."""
        c = CommitText(oid, raw, self.fmt)
        self._parents = parents
        out: list[bytes] = []
        for part in self.parts:
            if isinstance(part, bytes):
                out.append(part)
                continue
            mod, code = part
            value = self._expand(code, c, extra)
            if mod == b"":
                out.append(value)
            elif mod == b"+":
                if value:
                    out.append(b"\n" + value)
            elif mod == b" ":
                if value:
                    out.append(b" " + value)
            else:  # "-": an empty expansion also removes the line breaks before it
                if value:
                    out.append(value)
                else:
                    while out and out[-1].endswith(b"\n"):
                        out[-1] = out[-1].rstrip(b"\n")
                        if out[-1]:
                            break
                        out.pop()
        return b"".join(out)

    def _expand(self, code: bytes, c: CommitText, extra: Extra | None) -> bytes:
        first = code[:1]
        if code == b"n":
            return b"\n"
        if code == b"%":
            return b"%"
        if first == b"x":
            return bytes([int(code[1:], 16)])
        if first == b"C":
            return b""  # colours are off: output is not a terminal and --color is not given
        if first == b"g":
            got = extra(code) if extra is not None else None
            return got if got is not None else b""
        if code == b"N":  # without notes shown, Git leaves "%N" as it is
            return self.notes(c.oid) if self.notes is not None else b"%N"
        if code == b"H":
            return c.oid.hex().encode()
        if code == b"h":
            return self.abbrev(c.oid).encode()
        if code == b"T":
            return c.links()[0].hex().encode()
        if code == b"t":
            return self.abbrev(c.links()[0]).encode()
        if code == b"P":
            ps = c.links()[1] if self._parents is None else self._parents
            return b" ".join(p.hex().encode() for p in ps)
        if code == b"p":
            ps = c.links()[1] if self._parents is None else self._parents
            return b" ".join(self.abbrev(p).encode() for p in ps)
        if first in (b"a", b"c") and len(code) == 2:
            return self._person(c.ident(first), code[1:2])
        if code == b"s":
            return subject_of(c.message)
        if code == b"f":
            subject = split_message(c.message)[0]  # Git sanitises the first line only
            return sanitized_subject(subject[0]) if subject else b""
        if code == b"b":
            return split_message(c.message)[1]
        if code == b"B":
            return c.message
        if code == b"e":
            return c.header(b"encoding") or b""
        if code in (b"d", b"D"):
            names = self.decorations.of(c.oid)
            if not names:
                return b""
            joined = ", ".join(names).encode("utf-8", "surrogateescape")
            return b" (" + joined + b")" if code == b"d" else joined
        raise AssertionError(code)  # pragma: no cover - the token regex lists every code

    def _person(self, sig: Signature | None, part: bytes) -> bytes:
        if sig is None:
            return b""
        if part in (b"N", b"E", b"L"):
            name, email = self.mailmap.map(sig.name, sig.email)
            part = part.lower()
        else:
            name, email = sig.name, sig.email
        if part == b"n":
            return name
        if part == b"e":
            return email
        if part == b"l":
            return email.split(b"@", 1)[0]
        ts = sig.timestamp
        if ts is None:
            return b""
        if part == b"t":
            return sig.timestamp_text or b""  # the digits as written, as Git copies them
        mode = self.date_mode if part == b"d" else _PLACEHOLDER_DATES[part]
        return show_date(ts, tz_hhmm(sig.tz_offset or 0), mode).encode()


def _expand_tabs(line: bytes) -> bytes:
    """Git's ``strbuf_add_tabexpand`` (tab stops every 8 display columns)."""
    if b"\t" not in line:
        return line
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        text = line.decode("latin-1")
        width_of = None
    else:
        width_of = _char_width
    out = []
    col = 0
    for ch in text:
        if ch == "\t":
            n = 8 - col % 8
            out.append(" " * n)
            col += n
            continue
        out.append(ch)
        col += 1 if width_of is None else width_of(ch)
    joined = "".join(out)
    return joined.encode("utf-8" if width_of is not None else "latin-1")


def _char_width(ch: str) -> int:
    import unicodedata

    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def oneline_parts(abbreviated: bool) -> list[bytes | int]:
    """``--oneline``'s ``<id> <subject>`` as native format parts: ``%h %s`` (or
    ``%H %s``); ``pretty_commit("oneline")`` is the subject ``%s`` expands to."""
    return [_NATIVE_CODES[b"h" if abbreviated else b"H"], b" ", _NATIVE_CODES[b"s"]]


def pretty_commit(
    kind: str,
    repo: Repository,
    oid: bytes,
    raw: bytes,
    *,
    date_mode: DateMode | str = "default",
    abbrev: Callable[[bytes], str] | None = None,
    mailmap: Mailmap | None = None,
) -> bytes:
    """The body of a built-in format (``oneline``: the title line without LF; the
    others: headers, a blank line, the indented message, one LF at the end)."""
    mode = _date_mode(date_mode)
    c = CommitText(oid, raw, repo.object_format)
    msg = c.message
    if kind == "oneline":
        return b" ".join(split_message(msg)[0]).rstrip(_WS)
    out: list[bytes] = []
    _tree, parents, _pos = c.links()
    if kind == "raw":
        head = raw[: c._head_end]
        if c.header(b"encoding") is not None and c.message_recoded:
            # Git drops the header of a message it has re-encoded to UTF-8.
            head = b"".join(
                ln for ln in head.splitlines(keepends=True) if not ln.startswith(b"encoding ")
            )
        out.append(head)
    else:
        if len(parents) > 1:
            short = abbrev or (lambda o: o.hex())
            out.append(b"Merge: " + b" ".join(short(p).encode() for p in parents) + b"\n")
        pad = b"    " if kind == "fuller" else b""
        for who, label in ((b"a", b"Author"), (b"c", b"Commit")):
            if who == b"c" and kind in ("short", "medium"):
                break
            sig = c.ident(who)
            if sig is None:
                continue
            name, email = (
                (sig.name, sig.email) if mailmap is None else mailmap.map(sig.name, sig.email)
            )
            out.append(b"%s: %s%s <%s>\n" % (label, pad, name, email))
            if kind == "medium" and sig.timestamp is not None:
                out.append(
                    b"Date:   %s\n"
                    % show_date(sig.timestamp, tz_hhmm(sig.tz_offset or 0), mode).encode()
                )
            elif kind == "fuller" and sig.timestamp is not None:
                out.append(
                    b"%sDate: %s\n"
                    % (label, show_date(sig.timestamp, tz_hhmm(sig.tz_offset or 0), mode).encode())
                )
    out.append(b"\n")
    lines = _lines(msg)
    i = 0
    while i < len(lines) and _is_blank(lines[i]):
        i += 1
    first = True
    for line in lines[i:]:
        if _is_blank(line):
            if kind == "short" and not first:
                break
        first = False
        text = line.rstrip(_WS)
        if kind in ("medium", "full", "fuller"):
            text = _expand_tabs(text)
        out.append(b"    " + text + b"\n")
    return b"".join(out).rstrip(_WS) + b"\n"
