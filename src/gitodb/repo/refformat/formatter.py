"""Atom values of refs and the expansion of a format for one ref (Git's ``ref-filter.c``).

``Formatter(repo, fmt)`` parses the format; ``format(item)`` gives the bytes of
one output line (without its newline), ``value(item, atom)`` one atom's value
(used for sorting).  Objects are read through the repository's object database
and parsed by the object model (``gitodb.objects``).
"""

from __future__ import annotations

import os
import sys

from gitodb.errors import GitodbError, ObjectNotFoundError
from gitodb.objects.blob import GitObject, parse_object
from gitodb.objects.commit import Commit
from gitodb.objects.header import TYPE_NUMBERS
from gitodb.objects.signature import Signature
from gitodb.objects.tag import Tag, signature_start
from gitodb.refs.peel import shorten_ref
from gitodb.repo.refformat.atoms import Atom, MalformedFormatError, Piece, parse_atom, parse_format
from gitodb.repo.refformat.color import RESET
from gitodb.repo.refformat.native import compile_plan
from gitodb.repo.refformat.quote import NONE, PERL, quote
from gitodb.repo.refformat.tracking import Tracking
from gitodb.types import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gitodb.objects.mailmap import Mailmap
    from gitodb.repo import Repository
    from gitodb.repo.refformat.describe import Describer

_SPACE = b" \t\n\r\x0b\x0c"


class RefItem(Record):
    """A ref to show: ``name``, the id it resolves to, its symref target if any."""

    __slots__ = ("name", "oid", "symref", "peeled", "values")
    name: str
    oid: bytes
    symref: str | None
    peeled: bytes | None  # known peeled value (packed-refs), if any
    values: dict[str, Value]

    def __init__(
        self,
        name: str,
        oid: bytes,
        symref: str | None = None,
        peeled: bytes | None = None,
        values: dict[str, Value] | None = None,
    ) -> None:
        self.name = name
        self.oid = oid
        self.symref = symref
        self.peeled = peeled
        self.values = {} if values is None else values


class Value(Record):
    """An atom's value: its text, its number (for numeric sorting), raw (may hold NULs)."""

    __slots__ = ("text", "number", "raw")
    text: bytes
    number: int
    raw: bool

    def __init__(self, text: bytes = b"", number: int = 0, raw: bool = False) -> None:
        self.text = text
        self.number = number
        self.raw = raw


class _Obj:
    def __init__(
        self,
        oid: bytes,
        type_name: str,
        size: int,
        raw: bytes,
        model: GitObject,
    ) -> None:
        self.oid = oid
        self.type_name = type_name
        self.size = size
        self.raw = raw
        self.model = model


def _enc(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


def lstrip_ref(name: str, count: int) -> str:
    """``refname:lstrip=N``: drop N leading components (keep -N when negative)."""
    parts = name.split("/")
    n = count if count >= 0 else len(parts) + count
    if n <= 0:
        return name
    return "" if n >= len(parts) else "/".join(parts[n:])


def rstrip_ref(name: str, count: int) -> str:
    """``refname:rstrip=N``: drop N trailing components (keep -N when negative)."""
    parts = name.split("/")
    n = count if count >= 0 else len(parts) + count
    if n <= 0:
        return name
    return "" if n >= len(parts) else "/".join(parts[: len(parts) - n])


def copy_name(line: bytes) -> bytes:
    """The name of an identity line: the bytes before `` <`` (empty without one)."""
    pos = line.find(b" <")
    return line[:pos] if pos >= 0 else b""


def copy_email(line: bytes, options: set[str]) -> bytes:
    """``<email>``, or as ``trim`` (no brackets) / ``localpart`` (before ``@``) say."""
    start = line.find(b"<")
    if start < 0:
        return b""
    if "localpart" in options:
        start += 1
        end = line.find(b"@", start)
        if end < 0:
            end = line.find(b">", start)
    elif "trim" in options:
        start += 1
        end = line.find(b">", start)
    else:
        end = line.find(b">", start)
        if end >= 0:
            end += 1
    return b"" if end < 0 else line[start:end]


def copy_subject(sub: bytes) -> bytes:
    """The subject on one line: CR of CRLF dropped, newlines become spaces."""
    return sub.replace(b"\r\n", b"\n").replace(b"\n", b" ")


def sanitized_subject(sub: bytes) -> bytes:
    """Git's ``format_sanitized_subject``: a file-name friendly subject."""
    out = bytearray()
    space = 2
    i = 0
    data = sub.replace(b"\n", b" ")
    while i < len(data):
        c = data[i]
        if chr(c).isascii() and (chr(c).isalnum() or c in b"._"):
            if space == 1:
                out.append(0x2D)
            space = 0
            out.append(c)
            if c == 0x2E:
                while i + 1 < len(data) and data[i + 1] == 0x2E:
                    i += 1
        else:
            space |= 1
        i += 1
    return bytes(out).rstrip(b".-")


def split_message(buf: bytes) -> tuple[bytes, bytes, bytes, bytes]:
    """``(subject, body, body without signature, signature)`` of an object's content.

    Git's ``find_subpos``: the subject is the first paragraph of the message, the
    body what follows, the signature the block ``parse_signed_buffer`` finds.
    """
    sig_all = signature_start(buf)
    signature = buf[sig_all:] if sig_all < len(buf) else b""
    msg = buf[_message_start(buf) :]
    sigstart = signature_start(msg)
    eol = msg.find(b"\n\n")
    if eol < 0:
        eol = msg.find(b"\r\n\r\n")
    eol = min(eol, sigstart) if eol >= 0 else sigstart
    sub = msg[:eol].rstrip(b"\r\n")
    rest = eol
    while rest < len(msg) and msg[rest] in (0x0A, 0x0D):
        rest += 1
    body = msg[rest:]
    nonsig = msg[rest:sigstart] if sigstart > rest else b""
    return sub, body, nonsig, signature


def _display_width(text: bytes) -> int:
    s = text.decode("utf-8", "replace")
    if s.isascii():
        return len(s)  # no combining or wide characters (nor unicodedata's import)
    import unicodedata  # (here: ~2 ms of start-up, for non-ASCII text only)

    width = 0
    for ch in s:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def _align(text: bytes, width: int, position: str) -> bytes:
    pad = width - _display_width(text)
    if pad <= 0:
        return text
    if position == "left":
        return text + b" " * pad
    if position == "right":
        return b" " * pad + text
    left = pad // 2
    return b" " * left + text + b" " * (pad - left)


class _Frame:
    __slots__ = ("out", "kind", "data")

    def __init__(self, kind: str = "", data: dict[str, Any] | None = None) -> None:
        self.out = bytearray()
        self.kind = kind
        self.data: dict[str, Any] = data if data is not None else {}


class Formatter:
    """Expands ``fmt`` for refs of ``repo``; ``quote_style`` is "", shell, perl, python, tcl.

    ``color`` says whether ``%(color:...)`` atoms print their escape sequences.
    """

    def __init__(
        self, repo: Repository, fmt: str, *, quote_style: str = NONE, color: bool = False
    ) -> None:
        self.repo = repo
        self.fmt_text = fmt
        self.quote_style = quote_style
        self.color = color
        self.pieces: list[Piece] = parse_format(fmt)
        self.atoms: dict[str, Atom] = {}
        last_color = None
        for p in self.pieces:
            if p.atom is not None:
                self.atoms.setdefault(p.atom.text, p.atom)
                if (
                    quote_style
                    and quote_style != PERL
                    and p.atom.name == "raw"
                    and p.atom.option == ""
                ):
                    raise GitodbError(
                        f"--format={p.atom.text} cannot be used with --python, --shell, --tcl"
                    )
                if p.atom.name == "color":
                    last_color = p.atom.arg
        self.reset_at_eol = color and last_color is not None and last_color != "reset"
        self._objects: dict[bytes, _Obj | None] = {}
        self._headers: dict[bytes, tuple[str, int]] = {}
        self._mailmap: Mailmap | None = None
        self._tracking = Tracking(repo.config)
        self._abbrev: dict[int, Any] = {}
        self._head: str | None | bool = False
        self._worktrees: dict[str, str] | None = None
        self._ancestors: dict[bytes, set[bytes]] = {}
        self._describer: Describer | None = None
        self._signatures: dict[bytes, Any] = {}
        self._strict = repo.config.get_bool("core.warnambiguousrefs", True)
        self.native_plan = compile_plan(self.pieces, quote_style, self.reset_at_eol)

    # -- atoms used for sorting ---------------------------------------------------
    def atom(self, text: str) -> Atom:
        """The atom ``text`` names (parsed and remembered: sort keys use this)."""
        got = self.atoms.get(text)
        if got is None:
            got = self.atoms[text] = parse_atom(text)
        return got

    # -- object access ------------------------------------------------------------
    def _object(self, oid: bytes, refname: str) -> _Obj:
        if oid in self._objects:
            got = self._objects[oid]
            assert got is not None
            return got
        try:
            type_name, data = self.repo.odb.read(oid)
        except ObjectNotFoundError:
            raise GitodbError(f"missing object {oid.hex()} for {refname}") from None
        model = parse_object(type_name, data, self.repo.object_format, oid)
        try:
            if isinstance(model, Commit):
                model.tree  # noqa: B018 - Git parses the commit's links here
            elif isinstance(model, Tag):
                model.object  # noqa: B018
        except GitodbError:
            raise GitodbError(f"parse_object_buffer failed on {oid.hex()} for {refname}") from None
        obj = _Obj(oid, type_name, len(data), data, model)
        self._objects[oid] = obj
        return obj

    def header(self, oid: bytes, refname: str) -> tuple[str, int]:
        """``(type, size)`` of ``oid`` (from the object already read, if it was)."""
        obj = self._objects.get(oid)
        if obj is not None:
            return obj.type_name, obj.size
        got = self._headers.get(oid)
        if got is None:
            try:
                got = self._headers[oid] = self.repo.odb.read_header(oid)
            except ObjectNotFoundError:
                raise GitodbError(f"missing object {oid.hex()} for {refname}") from None
        return got

    def _peel(self, obj: _Obj, item: RefItem) -> _Obj:
        """The object a tag (chain) points at.

        Each target must have the type its tag names, as Git's object lookup demands
        (so a peeled value stored with the ref is not trusted over the objects).
        """
        cur = obj
        for _ in range(64):
            if not isinstance(cur.model, Tag):
                return cur
            target = cur.model.object
            want = cur.model.type
            try:
                kind, _size = self.repo.odb.read_header(target)
            except ObjectNotFoundError:
                raise GitodbError(f"missing object {target.hex()} for {item.name}") from None
            if kind != want:
                # Git's parse_tag_buffer: the lookup fails, then the tag is bad
                sys.stderr.write(
                    f"error: object {target.hex()} is a {kind}, not a {want}\n"
                    f"error: bad tag pointer to {target.hex()} in "
                    f"{cur.oid.hex()}\n"
                )
                raise GitodbError("bad tag")
            cur = self._object(target, item.name)
        raise GitodbError(f"bad tag: {item.name}")

    def peeled(self, item: RefItem) -> tuple[bytes, int, int] | None:
        """``(id, type number, size)`` of the object the tag ``item`` names peels to
        (what ``%(*objectname)``, ``%(*objecttype)``, ``%(*objectsize)`` show), or
        None when ``item`` is not a tag."""
        obj = self._object(item.oid, item.name)
        if obj.type_name != "tag":
            return None
        obj = self._peel(obj, item)
        return obj.oid, TYPE_NUMBERS[obj.type_name], obj.size

    def _abbrev_of(self, oid: bytes, length: int) -> str:
        from gitodb.repo.abbrev import Abbreviator, default_abbrev

        if length == 0:
            length = default_abbrev(self.repo)
        ab = self._abbrev.get(length)
        if ab is None:
            ab = self._abbrev[length] = Abbreviator(self.repo, length)
        return str(ab(oid))

    def _oid_text(self, oid: bytes, atom: Atom) -> bytes:
        return _enc(self._abbrev_of(oid, atom.length) if atom.option == "short" else oid.hex())

    # -- ref-level helpers ----------------------------------------------------------
    def _exists(self, name: str) -> bool:
        try:
            return self.repo.refs.resolve(name) is not None
        except GitodbError:
            return False

    def show_refname(self, atom: Atom, name: str) -> str:
        """A ref name as ``:short``, ``:lstrip=N`` or ``:rstrip=N`` of ``atom`` say."""
        opt = atom.refname
        if opt.kind == "short":
            return shorten_ref(name, self._exists, strict=self._strict)
        if opt.kind == "lstrip":
            return lstrip_ref(name, opt.count)
        if opt.kind == "rstrip":
            return rstrip_ref(name, opt.count)
        return name

    def head_ref(self) -> str | None:
        """The ref HEAD points at (``HEAD`` itself when detached), or None."""
        if self._head is False:
            try:
                got = self.repo.refs.resolve_ref("HEAD")
            except GitodbError:
                got = None
            self._head = got[0] if got else None
        return self._head if isinstance(self._head, str) else None

    def mailmap(self) -> Mailmap:
        """The repository's mailmap (``.mailmap``, ``mailmap.blob``, ``mailmap.file``)."""
        if self._mailmap is None:
            from gitodb.repo import find_work_tree_top

            bare = self.repo.config.get_bool("core.bare", False)
            top = None if bare else find_work_tree_top(self.repo, False)
            if top is None and not bare and self.repo.git_dir.name == ".git":
                top = str(self.repo.git_dir.parent)
            from gitodb.objects.mailmap import repository_mailmap

            self._mailmap = repository_mailmap(self.repo, top)
        return self._mailmap

    def _commit_of(self, oid: bytes) -> bytes | None:
        from gitodb.repo.reach import commit_of

        return commit_of(self.repo.odb, oid, self.repo.object_format.hexsz)

    def ancestors(self, commit: bytes) -> set[bytes]:
        """Every commit reachable from ``commit`` (itself included), remembered."""
        from gitodb.repo.reach import ancestors

        got = self._ancestors.get(commit)
        if got is None:
            got = self._ancestors[commit] = ancestors(
                self.repo.odb, [commit], self.repo.object_format.hexsz
            )
        return got

    def ahead_behind(self, ours: bytes, theirs: bytes) -> tuple[int, int]:
        """Commits in ``ours`` not in ``theirs``, and the other way round."""
        a, b = self.ancestors(ours), self.ancestors(theirs)
        return len(a - b), len(b - a)

    def _tracking_values(self, atom: Atom, item: RefItem) -> bytes:
        if not item.name.startswith("refs/heads/"):
            return b""
        branch = item.name[len("refs/heads/") :]
        push = atom.name == "push"
        tr = self._tracking
        if atom.option == "remotename":
            remote, explicit = (
                tr.pushremote_for_branch(branch) if push else tr.remote_for_branch(branch)
            )
            if not push and tr.upstream(branch) is None:
                return b""
            return _enc(remote) if explicit else b""
        if atom.option == "remoteref":
            if not push and tr.upstream(branch) is None:
                return b""
            return _enc(tr.remote_ref(branch, push) or "")
        base = tr.push(branch) if push else tr.upstream(branch)
        if base is None:
            return b""
        if atom.option in ("track", "trackshort"):
            counts = None
            theirs = self.repo.refs.resolve(base) if self._exists(base) else None
            if theirs is not None:
                tc = self._commit_of(theirs)
                oc = self._commit_of(item.oid)
                if tc is not None and oc is not None:
                    counts = (0, 0) if tc == oc else self.ahead_behind(oc, tc)
            if atom.option == "trackshort":
                if counts is None:
                    return b""
                ahead, behind = counts
                return (
                    b"="
                    if not ahead and not behind
                    else b"<"
                    if not ahead
                    else b">"
                    if not behind
                    else b"<>"
                )
            if counts is None:
                text = "gone"
            else:
                ahead, behind = counts
                text = (
                    ""
                    if not ahead and not behind
                    else f"behind {behind}"
                    if not ahead
                    else f"ahead {ahead}"
                    if not behind
                    else f"ahead {ahead}, behind {behind}"
                )
            if text and not atom.nobracket:
                text = f"[{text}]"
            return _enc(text)
        return _enc(self.show_refname(atom, base))

    def worktree_path(self, refname: str) -> bytes:
        """The work tree that has ``refname`` checked out, or empty."""
        if self._worktrees is None:
            self._worktrees = {}
            common = self.repo.common_dir
            if not self.repo.config.get_bool("core.bare", False):
                head = _read_symref(common / "HEAD")
                if head:
                    self._worktrees[head] = str(common.parent if common.name == ".git" else common)
            wt_dir = common / "worktrees"
            if wt_dir.is_dir():
                for d in sorted(wt_dir.iterdir()):
                    head = _read_symref(d / "HEAD")
                    try:
                        gitdir = (d / "gitdir").read_text().strip()
                    except OSError:
                        continue
                    if head:
                        self._worktrees.setdefault(head, os.path.dirname(gitdir))
        return _enc(self._worktrees.get(refname, ""))

    # -- values ---------------------------------------------------------------------
    def value(self, item: RefItem, atom: Atom) -> Value:
        """The value of ``atom`` for ``item`` (computed once per item)."""
        got = item.values.get(atom.text)
        if got is None:
            got = item.values[atom.text] = self._compute(item, atom)
        return got

    def _compute(self, item: RefItem, atom: Atom) -> Value:  # noqa: C901
        name = atom.name
        if name in ("refname", "symref"):
            base = item.name if name == "refname" else item.symref
            text = self.show_refname(atom, base) if base else ""
            return Value(_enc(text + "^{}" if atom.deref else text))
        if name in ("upstream", "push"):
            return Value(self._tracking_values(atom, item))
        if name == "HEAD":
            return Value(b"*" if self.head_ref() == item.name else b" ")
        if name == "color":
            return Value(_enc(atom.extra["color"]) if self.color else b"")
        if name == "worktreepath":
            return Value(self.worktree_path(item.name))
        if name in ("align", "end", "if", "then", "else"):
            return Value()
        if name == "objectname" and not atom.deref:
            return Value(self._oid_text(item.oid, atom))
        if name == "ahead-behind":
            return Value(self._ahead_behind(item, atom))
        if name == "is-base":
            return Value(self._is_base(item, atom))
        if not atom.deref and (
            name == "objecttype" or (name == "objectsize" and atom.option != "disk")
        ):
            # As Git: these come from the object's header, without reading it whole.
            type_name, size = self.header(item.oid, item.name)
            if name == "objecttype":
                return Value(_enc(type_name))
            return Value(str(size).encode(), size)
        obj = self._object(item.oid, item.name)
        if atom.deref:
            if obj.type_name != "tag":
                return Value()
            obj = self._peel(obj, item)
        return self._object_value(obj, atom)

    def _object_value(self, obj: _Obj, atom: Atom) -> Value:  # noqa: C901
        name = atom.name
        model = obj.model
        if name == "objecttype":
            return Value(_enc(obj.type_name))
        if name == "objectsize":
            size = obj.size if atom.option != "disk" else self.repo.odb.info(obj.oid).disk_size
            return Value(str(size).encode(), size)
        if name == "objectname":
            return Value(self._oid_text(obj.oid, atom))
        if name == "deltabase":
            base = self.repo.odb.info(obj.oid).delta_base
            return Value((base or bytes(len(obj.oid))).hex().encode())
        if name == "raw":
            if atom.option == "size":
                return Value(str(obj.size).encode(), obj.size)
            return Value(obj.raw, raw=True)
        if not isinstance(model, (Commit, Tag)):
            return Value()
        if isinstance(model, Tag) and name in ("tag", "type", "object"):
            text = {
                "tag": model.name,
                "type": model.type.encode(),
                "object": model.object.hex().encode(),
            }[name]
            return Value(_cstr(text))
        if isinstance(model, Commit) and name in ("tree", "parent", "numparent"):
            if name == "tree":
                return Value(self._oid_text(model.tree, atom))
            if name == "numparent":
                return Value(str(len(model.parents)).encode(), len(model.parents))
            return Value(b" ".join(self._oid_text(p, atom) for p in model.parents))
        for who in ("author", "committer", "tagger", "creator"):
            if name.startswith(who):
                return self._person(model, who, name[len(who) :], atom)
        if name in ("subject", "body", "contents", "trailers"):
            return self._contents(obj.raw, atom)
        if name == "describe":
            return Value(_enc(self._describe(obj.oid, atom) or ""))
        if name == "signature":
            if not isinstance(model, Commit):
                return Value()
            from gitodb.repo.refformat.signature import check_commit, signature_value

            sc = self._signatures.get(obj.oid)
            if sc is None:
                sc = self._signatures[obj.oid] = check_commit(model, self.repo.config)
            return Value(signature_value(sc, atom.option))
        return Value()

    def _person(self, model: Commit | Tag, who: str, part: str, atom: Atom) -> Value:
        if who == "creator":
            line = (
                model.block.get(b"committer")
                if isinstance(model, Commit)
                else model.block.get(b"tagger")
            )
        else:
            line = model.block.get(who.encode())
        if line is None:
            return Value()
        if part == "date":
            sig = Signature(line)
            if sig.timestamp is None or sig.tz is None:
                return Value()
            # dates, mailmaps and trailers load with the first atom that needs them
            from gitodb.objects.datefmt import DateMode, show_date

            mode = atom.extra["date"] if "date" in atom.extra else DateMode()
            try:
                tz = int(sig.tz)
            except ValueError:
                return Value()
            return Value(_enc(show_date(sig.timestamp, tz, mode)), sig.timestamp)
        if atom.mailmap:
            sig = Signature(line)
            new_name, new_email = self.mailmap().map(sig.name, sig.email)
            if (new_name, new_email) != (sig.name, sig.email):
                rest = line[line.find(b">", line.find(b"<") + 1) + 1 :]
                line = new_name + b" <" + new_email + b">" + rest
        if part == "name":
            return Value(_cstr(copy_name(line)))
        if part == "email":
            return Value(_cstr(copy_email(line, atom.email)))
        return Value(_cstr(line))

    def _contents(self, buf: bytes, atom: Atom) -> Value:
        sub, body, nonsig, sig = split_message(buf)
        name, opt = atom.name, atom.option
        if name == "subject":
            return Value(_cstr(sanitized_subject(sub) if opt == "sanitize" else copy_subject(sub)))
        if name == "body":
            return Value(_cstr(body))
        if name == "trailers" or opt == "trailers":
            assert atom.trailers is not None
            msg = buf[_message_start(buf) : len(buf) - len(body) + len(nonsig)]
            from gitodb.objects.trailers import format_trailers

            return Value(_cstr(format_trailers(msg, atom.trailers)))
        if opt == "subject":
            return Value(_cstr(copy_subject(sub)))
        if opt == "body":
            return Value(_cstr(nonsig))
        if opt == "signature":
            return Value(_cstr(sig))
        start = _message_start(buf)
        if opt == "size":
            n = len(buf[start:].split(b"\0", 1)[0])
            return Value(str(n).encode(), n)
        if opt == "lines":
            end = len(buf) - len(body) + len(nonsig)
            return Value(_cstr(_lines(buf[start:end], atom.lines)))
        return Value(_cstr(buf[start:]))

    def _describe(self, oid: bytes, atom: Atom) -> str | None:
        from gitodb.repo.refformat.describe import Describer

        if self._describer is None:
            self._describer = Describer(self.repo)
        opts = atom.extra.get("describe", [])
        tags = any(k == "tags" for k, _ in opts)
        abbrev = None
        for k, v in opts:
            if k == "abbrev" and v is not None:
                abbrev = int(v)
        match = tuple(v for k, v in opts if k == "match" and v is not None)
        exclude = tuple(v for k, v in opts if k == "exclude" and v is not None)
        try:
            return self._describer.describe(
                oid, tags=tags, abbrev=abbrev, match=match, exclude=exclude
            )
        except GitodbError:
            return None

    def _ahead_behind(self, item: RefItem, atom: Atom) -> bytes:
        base = self._resolve_commit(atom.arg or "")
        ours = self._commit_of(item.oid)
        if ours is None:
            return b""
        ahead, behind = self.ahead_behind(ours, base)
        return f"{ahead} {behind}".encode()

    def _resolve_commit(self, rev: str) -> bytes:
        try:
            oid = self.repo.resolve(rev)
        except GitodbError:
            raise GitodbError(f"failed to find '{rev}'") from None
        commit = self._commit_of(oid)
        if commit is None:
            raise GitodbError(f"failed to find '{rev}'")
        return commit

    def _is_base(self, item: RefItem, atom: Atom) -> bytes:
        best = self.atom_state(atom)
        return _enc(f"({atom.arg})") if best == item.name else b""

    #: the ref chosen by each %(is-base:<rev>), computed over all listed refs
    is_base_winners: dict[str, str | None]

    def atom_state(self, atom: Atom) -> str | None:
        """The ref ``%(is-base:...)`` marks (set by ``prepare`` over all items)."""
        return getattr(self, "is_base_winners", {}).get(atom.text)

    def prefetch(self, items: list[RefItem]) -> None:
        """Before ``format`` shows ``items``: when the format shows ``%(objecttype)`` or
        ``%(objectsize)``, the headers of all their objects in one ``read_headers``."""
        if any(
            a.name in ("objecttype", "objectsize") and not a.deref and not a.option
            for a in self.atoms.values()
        ):
            self._headers.update(self.repo.odb.read_headers(i.oid for i in items))

    def prepare(self, items: list[RefItem]) -> None:
        """Work that needs every listed ref: the winners of ``%(is-base:<rev>)``."""
        self.is_base_winners = {}
        for atom in self.atoms.values():
            if atom.name != "is-base":
                continue
            tip = self._resolve_commit(atom.arg or "")
            self.is_base_winners[atom.text] = self._base_for_tip(tip, items)

    def _first_parents(self, commit: bytes) -> list[bytes]:
        chain = []
        seen = set()
        cur: bytes | None = commit
        while cur is not None and cur not in seen:
            seen.add(cur)
            chain.append(cur)
            try:
                c = self.repo.odb.commit(cur)
                cur = c.parents[0] if c.parents else None
            except GitodbError:
                break
        return chain

    def _base_for_tip(self, tip: bytes, items: list[RefItem]) -> str | None:
        """The ref whose first-parent history meets ``tip``'s soonest (Git's is-base)."""
        order = {c: i for i, c in enumerate(self._first_parents(tip))}
        best: tuple[int, str] | None = None
        for it in items:
            commit = self._commit_of_reporting(it)
            if commit is None:
                continue
            for c in self._first_parents(commit):
                if c in order:
                    if best is None or order[c] < best[0]:
                        best = (order[c], it.name)
                    break
        return best[1] if best else None

    def _commit_of_reporting(self, item: RefItem) -> bytes | None:
        try:
            kind, data = self.repo.odb.read(item.oid)
        except GitodbError:
            return None
        if kind == "tag":
            try:
                obj = self._peel(self._object(item.oid, item.name), item)
            except GitodbError:
                return None  # _peel said why
            return obj.oid if obj.type_name == "commit" else None
        return item.oid if kind == "commit" else None

    # -- output -----------------------------------------------------------------------
    def format(self, item: RefItem) -> bytes:
        """The expanded format for ``item`` (no newline)."""
        stack = [_Frame()]
        for piece in self.pieces:
            atom = piece.atom
            if atom is None:
                stack[-1].out += piece.literal
                continue
            handler = _CONTROL.get(atom.name)
            if handler is not None:
                handler(self, stack, atom)
                continue
            v = self.value(item, atom)
            self._append(stack, v.text)
        if len(stack) > 1:
            raise GitodbError("format: %(end) atom missing")
        if self.reset_at_eol:
            self._append(stack, RESET.encode())
        return bytes(stack[0].out)

    def _append(self, stack: list[_Frame], text: bytes) -> None:
        if len(stack) == 1:
            stack[0].out += quote(text, self.quote_style)
        else:
            stack[-1].out += text

    def _align(self, stack: list[_Frame], atom: Atom) -> None:
        stack.append(_Frame("align", dict(atom.extra)))

    def _if(self, stack: list[_Frame], atom: Atom) -> None:
        stack.append(
            _Frame(
                "if",
                {
                    "cmp": atom.option,
                    "str": atom.extra.get("str"),
                    "then": False,
                    "else": False,
                    "ok": False,
                },
            )
        )

    def _then(self, stack: list[_Frame], atom: Atom) -> None:
        cur = stack[-1]
        if cur.kind != "if":
            raise GitodbError("format: %(then) atom used without a %(if) atom")
        d = cur.data
        if d["then"]:
            raise GitodbError("format: %(then) atom used more than once")
        if d["else"]:
            raise GitodbError("format: %(then) atom used after %(else)")
        d["then"] = True
        out = bytes(cur.out)
        want = d["str"]
        if want is not None:
            equal = out == _enc(want)
            d["ok"] = equal if d["cmp"] == "equals" else not equal
        else:
            d["ok"] = bool(out) and out.strip(_SPACE) != b""
        cur.out.clear()

    def _else(self, stack: list[_Frame], atom: Atom) -> None:
        cur = stack[-1]
        if cur.kind != "if":
            raise GitodbError("format: %(else) atom used without a %(if) atom")
        d = cur.data
        if not d["then"]:
            raise GitodbError("format: %(else) atom used without a %(then) atom")
        if d["else"]:
            raise GitodbError("format: %(else) atom used more than once")
        d["else"] = True
        stack.append(_Frame("if", d))

    def _end(self, stack: list[_Frame], atom: Atom) -> None:
        cur = stack[-1]
        if not cur.kind:
            raise GitodbError("format: %(end) atom used without corresponding atom")
        if cur.kind == "align":
            cur.out[:] = _align(bytes(cur.out), cur.data["width"], cur.data["position"])
        else:
            d = cur.data
            if not d["then"]:
                raise GitodbError("format: %(if) atom used without a %(then) atom")
            if d["else"]:
                prev = stack[-2]
                if not d["ok"]:
                    prev.out[:] = cur.out
                stack.pop()
            elif not d["ok"]:
                cur.out.clear()
            cur = stack[-1]
        if len(stack) == 2:
            cur.out[:] = quote(bytes(cur.out), self.quote_style)
        stack.pop()
        stack[-1].out += cur.out


_CONTROL = {
    "align": Formatter._align,
    "if": Formatter._if,
    "then": Formatter._then,
    "else": Formatter._else,
    "end": Formatter._end,
}


def _cstr(text: bytes) -> bytes:
    """A value as Git's C strings carry it: up to the first NUL."""
    return text.split(b"\0", 1)[0]


def _message_start(buf: bytes) -> int:
    """Where the message starts: past the header, its empty line and any more."""
    pos = 0
    while pos < len(buf) and buf[pos] != 0x0A:
        nl = buf.find(b"\n", pos)
        pos = len(buf) if nl < 0 else nl + 1
    while pos < len(buf) and buf[pos] == 0x0A:
        pos += 1
    return pos


def _lines(buf: bytes, count: int) -> bytes:
    """Git's ``append_lines``: the first ``count`` lines, each after the first indented."""
    out = bytearray()
    pos = 0
    for i in range(count):
        if pos >= len(buf):
            break
        if i:
            out += b"\n    "
        nl = buf.find(b"\n", pos)
        out += buf[pos : nl if nl >= 0 else len(buf)]
        if nl < 0:
            break
        pos = nl + 1
    return bytes(out)


def _read_symref(path: Any) -> str | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return text[5:].strip() if text.startswith("ref:") else None


__all__ = [
    "Formatter",
    "RefItem",
    "Value",
    "MalformedFormatError",
    "lstrip_ref",
    "rstrip_ref",
    "split_message",
    "sanitized_subject",
]
