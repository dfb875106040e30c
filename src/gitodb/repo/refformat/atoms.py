"""Parsing ``--format`` strings and sort keys into atoms, with Git's checks and messages.

A format is literal text (``%%`` is ``%``, ``%xx`` a hex byte) and atoms
``%([*]name[:args])``.  ``parse_format`` returns the pieces; every atom's arguments
are checked here, so that a bad one is a ``GitodbError`` before anything is listed.
"""

from __future__ import annotations

from gitodb.errors import GitodbError
from gitodb.lazyre import lazy
from gitodb.types import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gitodb.objects.trailers import TrailerOptions

#: atom name -> where its value comes from: "none" (the ref), "other" (the object's
#: header), "obj" (the object's content)
ATOMS = {
    "refname": "none",
    "objecttype": "other",
    "objectsize": "other",
    "objectname": "other",
    "deltabase": "other",
    "tree": "obj",
    "parent": "obj",
    "numparent": "obj",
    "object": "obj",
    "type": "obj",
    "tag": "obj",
    "author": "obj",
    "authorname": "obj",
    "authoremail": "obj",
    "authordate": "obj",
    "committer": "obj",
    "committername": "obj",
    "committeremail": "obj",
    "committerdate": "obj",
    "tagger": "obj",
    "taggername": "obj",
    "taggeremail": "obj",
    "taggerdate": "obj",
    "creator": "obj",
    "creatordate": "obj",
    "describe": "obj",
    "subject": "obj",
    "body": "obj",
    "trailers": "obj",
    "contents": "obj",
    "signature": "obj",
    "raw": "obj",
    "upstream": "none",
    "push": "none",
    "symref": "none",
    "HEAD": "none",
    "color": "none",
    "worktreepath": "none",
    "align": "none",
    "end": "none",
    "if": "none",
    "then": "none",
    "else": "none",
    "rest": "none",
    "ahead-behind": "other",
    "is-base": "other",
}
_DATES = ("authordate", "committerdate", "taggerdate", "creatordate")
_NAMES = ("authorname", "committername", "taggername")
_EMAILS = ("authoremail", "committeremail", "taggeremail")
_SIGNATURE_ARGS = ("grade", "signer", "key", "fingerprint", "primarykeyfingerprint", "trustlevel")

# (compiled where first used: most formats need none of them)
_INTEGER = lazy(r"[+-]?\d+")
_TO_COMMA_OR_PAREN = lazy(r"[^,)]*")
_TO_COMMA = lazy(r"[^,]*")
_HEX2 = lazy(rb"[0-9a-fA-F]{2}")


def bad_arg(name: str, arg: str) -> GitodbError:
    """Git's ``unrecognized %(atom) argument: <arg>``."""
    return GitodbError(f"unrecognized %({name}) argument: {arg}")


def _no_arg(name: str) -> GitodbError:
    return GitodbError(f"%({name}) does not take arguments")


def _positive(text: str, what: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise GitodbError(f"positive value expected {what}")
    return int(text)


def _integer(text: str, what: str) -> int:
    if not _INTEGER.fullmatch(text):
        raise GitodbError(f"Integer value expected {what}")
    return int(text)


class RefnameOpt(Record):
    """How a ref name is shown: ``kind`` "", "short", "lstrip" or "rstrip" with ``count``."""

    __slots__ = ("kind", "count")
    kind: str
    count: int

    def __init__(self, kind: str = "", count: int = 0) -> None:
        self.kind = kind
        self.count = count


class Atom(Record):
    """One used atom: its full text (``*objectname:short``), ``name``, ``deref``, options."""

    __slots__ = (
        "text",
        "name",
        "deref",
        "arg",
        "numeric",
        "option",
        "refname",
        "length",
        "nobracket",
        "email",
        "mailmap",
        "lines",
        "trailers",
        "extra",
    )
    text: str
    name: str
    deref: bool
    arg: str | None
    #: sort as a number (FIELD_ULONG / FIELD_TIME without a format)
    numeric: bool
    option: str
    refname: RefnameOpt
    length: int  # objectname:short=N (0: default abbreviation)
    nobracket: bool
    email: set[str]
    mailmap: bool
    lines: int
    trailers: TrailerOptions | None
    extra: dict[str, Any]

    def __init__(
        self,
        text: str,
        name: str,
        deref: bool,
        arg: str | None,
        numeric: bool = False,
        option: str = "",
        refname: RefnameOpt | None = None,
        length: int = 0,
        nobracket: bool = False,
        email: set[str] | None = None,
        mailmap: bool = False,
        lines: int = 0,
        trailers: TrailerOptions | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.text = text
        self.name = name
        self.deref = deref
        self.arg = arg
        self.numeric = numeric
        self.option = option
        self.refname = RefnameOpt() if refname is None else refname
        self.length = length
        self.nobracket = nobracket
        self.email = set() if email is None else email
        self.mailmap = mailmap
        self.lines = lines
        self.trailers = trailers
        self.extra = {} if extra is None else extra


def _refname_opt(name: str, arg: str) -> RefnameOpt:
    if arg == "short":
        return RefnameOpt("short")
    for key, kind in (("lstrip=", "lstrip"), ("strip=", "lstrip"), ("rstrip=", "rstrip")):
        if arg.startswith(key):
            return RefnameOpt(kind, _integer(arg[len(key) :], f"refname:{kind}={arg[len(key) :]}"))
    raise bad_arg(name, arg)


def _match_value(arg: str, key: str) -> tuple[bool, str | None, str]:
    """Git's ``match_placeholder_arg_value`` on ``arg`` (which ends in ``)``)."""
    if not arg.startswith(key):
        return False, None, arg
    p = arg[len(key) :]
    value = None
    if p.startswith("="):
        m = _TO_COMMA_OR_PAREN.match(p[1:])
        assert m is not None
        value = m.group(0)
        p = p[1 + len(value) :]
    elif not p.startswith((",", ")")):
        return False, None, arg
    if p.startswith(","):
        return True, value, p[1:]
    if p.startswith(")"):
        return True, value, p
    return False, None, arg


def _expand_literal(text: str) -> bytes:
    """``%n`` and ``%xNN`` in trailer separators (Git's ``strbuf_expand_literal``)."""
    out = bytearray()
    i = 0
    raw = text.encode("utf-8", "surrogateescape")
    while i < len(raw):
        if raw[i] == 0x25 and raw[i + 1 : i + 2] == b"n":
            out.append(0x0A)
            i += 2
        elif raw[i] == 0x25 and raw[i + 1 : i + 2] == b"x" and _HEX2.fullmatch(raw[i + 2 : i + 4]):
            out.append(int(raw[i + 2 : i + 4], 16))
            i += 4
        else:
            out.append(raw[i])
            i += 1
    return bytes(out)


def parse_trailer_options(arg: str | None) -> TrailerOptions:
    """``%(trailers:<options>)`` by Git's ``format_set_trailers_options``."""
    from gitodb.objects.trailers import TrailerOptions

    opts = TrailerOptions()
    if arg is None:
        return opts
    rest = arg + ")"
    while not rest.startswith(")"):
        ok, value, after = _match_value(rest, "key")
        if ok:
            if value is None:
                raise GitodbError("expected %(trailers:key=<value>)")
            key = value[:-1] if value.endswith(":") else value
            opts.keys.append(key.encode("utf-8", "surrogateescape"))
            opts.only = True
            rest = after
            continue
        ok, value, after = _match_value(rest, "separator")
        if ok:
            opts.separator = _expand_literal(value or "")
            rest = after
            continue
        ok, value, after = _match_value(rest, "key_value_separator")
        if ok:
            opts.key_value_separator = _expand_literal(value or "")
            rest = after
            continue
        for key in ("only", "unfold", "keyonly", "valueonly"):
            ok, value, after = _match_value(rest, key)
            if not ok:
                continue
            flag = True if value is None else _maybe_bool(value)
            if flag is None:
                continue
            setattr(opts, {"keyonly": "key_only", "valueonly": "value_only"}.get(key, key), flag)
            rest = after
            break
        else:
            bad = _TO_COMMA_OR_PAREN.match(rest)
            assert bad is not None
            raise GitodbError(f"unknown %(trailers) argument: {bad.group(0)}")
    return opts


def _maybe_bool(value: str) -> bool | None:
    v = value.lower()
    if v in ("true", "yes", "on", "1"):
        return True
    if v in ("false", "no", "off", "0", ""):
        return False
    if v.isdigit():
        return int(v) != 0
    return None


def _parse_args(atom: Atom) -> None:  # noqa: C901 - one branch per atom, like Git's table
    name, arg = atom.name, atom.arg
    if name in ("refname", "symref"):
        if arg is not None:
            atom.refname = _refname_opt(name, arg)
    elif name in ("upstream", "push"):
        if arg is not None:
            for param in arg.split(","):
                if param in ("track", "trackshort", "remotename", "remoteref"):
                    atom.option = param
                elif param == "nobracket":
                    atom.nobracket = True
                else:
                    atom.option = ""
                    atom.refname = _refname_opt(name, param)
    elif name == "objecttype":
        if arg is not None:
            raise _no_arg(name)
    elif name == "objectsize":
        atom.numeric = True
        if arg == "disk":
            atom.option = "disk"
        elif arg is not None:
            raise bad_arg(name, arg)
    elif name == "deltabase":
        if arg is not None:
            raise _no_arg(name)
    elif name in ("objectname", "tree", "parent"):
        if arg == "short":
            atom.option = "short"
        elif arg is not None and arg.startswith("short="):
            atom.option = "short"
            atom.length = max(4, _positive(arg[6:], f"'{arg[6:]}' in %({atom.text})"))
        elif arg is not None:
            raise bad_arg(name, arg)
    elif name == "numparent":
        atom.numeric = True
    elif name in _NAMES:
        if arg == "mailmap":
            atom.mailmap = True
        elif arg is not None:
            raise bad_arg(name, arg)
    elif name in _EMAILS:
        _parse_email(atom)
    elif name in _DATES:
        atom.numeric = arg is None
        if arg is not None:
            from gitodb.objects.datefmt import parse_date_mode

            atom.extra["date"] = parse_date_mode(arg)
    elif name == "subject":
        if arg == "sanitize":
            atom.option = "sanitize"
        elif arg is not None:
            raise bad_arg(name, arg)
    elif name == "body":
        if arg is not None:
            raise _no_arg(name)
    elif name == "trailers":
        atom.option = "trailers"
        atom.trailers = parse_trailer_options(arg)
    elif name == "contents":
        _parse_contents(atom)
    elif name == "raw":
        if arg == "size":
            atom.option = "size"
            atom.numeric = True
        elif arg is not None:
            raise bad_arg(name, arg)
    elif name == "signature":
        if arg is not None and arg not in _SIGNATURE_ARGS:
            raise GitodbError(f"unknown %(signature) argument: {arg}")
        atom.option = arg or ""
    elif name == "HEAD":
        if arg is not None:
            raise _no_arg(name)
    elif name == "color":
        from gitodb.repo.refformat.color import parse_color

        if arg is None:
            raise GitodbError("expected format: %(color:<color>)")
        color = parse_color(arg)
        if color is None:
            import sys

            sys.stderr.write(f"error: invalid color value: {arg}\n")
            raise GitodbError(f"unrecognized color: %(color:{arg})")
        atom.extra["color"] = color
    elif name == "align":
        _parse_align(atom)
    elif name == "if":
        if arg is not None:
            if arg.startswith("equals="):
                atom.option, atom.extra["str"] = "equals", arg[7:]
            elif arg.startswith("notequals="):
                atom.option, atom.extra["str"] = "notequals", arg[10:]
            else:
                raise bad_arg(name, arg)
    elif name == "rest":
        if arg is not None:
            raise _no_arg(name)
        raise GitodbError("this command reject atom %(rest)")
    elif name in ("ahead-behind", "is-base"):
        if arg is None:
            raise GitodbError(f"expected format: %({name}:<committish>)")
    elif name == "describe":
        _parse_describe(atom)


def _parse_email(atom: Atom) -> None:
    arg = atom.arg
    if arg is None:
        return
    rest = arg
    while True:
        for word in ("trim", "localpart", "mailmap"):
            if rest.startswith(word):
                rest = rest[len(word) :]
                if word == "mailmap":
                    atom.mailmap = True
                else:
                    atom.email.add(word)
                break
        else:
            raise bad_arg(atom.name, rest)
        if rest.startswith(","):
            rest = rest[1:]
        elif not rest:
            return
        else:
            raise bad_arg(atom.name, rest)


def _parse_contents(atom: Atom) -> None:
    arg = atom.arg
    if arg is None:
        atom.option = "bare"
    elif arg in ("body", "subject", "signature"):
        atom.option = arg
    elif arg == "size":
        atom.option = "size"
        atom.numeric = True
    elif arg.startswith("trailers"):
        rest = arg[8:]
        if rest and not rest.startswith(":"):
            raise bad_arg("contents", arg)
        atom.option = "trailers"
        atom.trailers = parse_trailer_options(rest[1:] or None if rest else None)
    elif arg.startswith("lines="):
        atom.option = "lines"
        if not arg[6:].isdigit():
            raise GitodbError(f"positive value expected contents:lines={arg[6:]}")
        atom.lines = int(arg[6:])
    else:
        raise bad_arg("contents", arg)


def _parse_align(atom: Atom) -> None:
    if atom.arg is None:
        raise GitodbError("expected format: %(align:<width>,<position>)")
    width = -1
    position = "left"
    for param in atom.arg.split(","):
        if param.startswith("position="):
            value = param[9:]
            if value not in ("left", "right", "middle"):
                raise GitodbError(f"unrecognized position:{value}")
            position = value
        elif param.startswith("width="):
            value = param[6:]
            if not value.isdigit():
                raise GitodbError(f"unrecognized width:{value}")
            width = int(value)
        elif param in ("left", "right", "middle"):
            position = param
        elif param.isdigit():
            width = int(param)
        else:
            raise bad_arg("align", param)
    if width < 0:
        raise GitodbError("positive width expected with the %(align) atom")
    atom.extra["width"] = width
    atom.extra["position"] = position


def _parse_describe(atom: Atom) -> None:
    opts: list[tuple[str, str | None]] = []
    rest = atom.arg
    while rest:
        matched = False
        for key, takes in (("tags", False), ("abbrev", True), ("match", True), ("exclude", True)):
            if not rest.startswith(key):
                continue
            p = rest[len(key) :]
            value: str | None = None
            if takes:
                if not p.startswith("="):
                    continue
                m = _TO_COMMA.match(p[1:])
                assert m is not None
                value = m.group(0)
                p = p[1 + len(value) :]
                if key == "abbrev" and not value.isdigit():
                    continue
            elif p and not p.startswith(","):
                continue
            if p and not p.startswith(","):
                continue
            opts.append((key, value))
            rest = p[1:] if p.startswith(",") else p
            matched = True
            break
        if not matched:
            raise bad_arg("describe", rest)
    atom.extra["describe"] = opts


def parse_atom(text: str) -> Atom:
    """The atom ``text`` (without ``%(`` and ``)``), its arguments checked."""
    deref = text.startswith("*")
    body = text[1:] if deref else text
    if not body:
        raise GitodbError(f"malformed field name: {text}")
    name, colon, arg = body.partition(":")
    if name not in ATOMS:
        raise GitodbError(f"unknown field name: {text}")
    atom = Atom(text, name, deref, arg if colon and arg else None)
    _parse_args(atom)
    return atom


class Piece(Record):
    """A piece of a format: literal bytes, or an atom."""

    __slots__ = ("literal", "atom")
    literal: bytes
    atom: Atom | None

    def __init__(self, literal: bytes = b"", atom: Atom | None = None) -> None:
        self.literal = literal
        self.atom = atom


def expand_literal(text: str) -> bytes:
    """Literal format text: ``%%`` is ``%``, ``%xx`` (two hex digits) is that byte."""
    raw = text.encode("utf-8", "surrogateescape")
    out = bytearray()
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == 0x25:
            if raw[i + 1 : i + 2] == b"%":
                out.append(0x25)
                i += 2
                continue
            if _HEX2.fullmatch(raw[i + 1 : i + 3]):
                out.append(int(raw[i + 1 : i + 3], 16))
                i += 3
                continue
        out.append(c)
        i += 1
    return bytes(out)


class MalformedFormatError(GitodbError):
    """A ``%(`` without its ``)``: Git prints an error and its usage (exit 129)."""


def parse_format(fmt: str) -> list[Piece]:
    """The pieces of format string ``fmt``; unknown atoms or bad arguments raise."""
    pieces: list[Piece] = []
    cache: dict[str, Atom] = {}
    i = 0
    lit_start = 0
    n = len(fmt)
    while i < n:
        if fmt[i] != "%":
            i += 1
            continue
        if fmt.startswith("%%", i):
            i += 2
            continue
        if not fmt.startswith("%(", i):
            i += 1
            continue
        end = fmt.find(")", i)
        if end < 0:
            raise MalformedFormatError(f"malformed format string {fmt[i:]}")
        if lit_start < i:
            pieces.append(Piece(literal=expand_literal(fmt[lit_start:i])))
        text = fmt[i + 2 : end]
        atom = cache.get(text)
        if atom is None:
            atom = cache[text] = parse_atom(text)
        pieces.append(Piece(atom=atom))
        i = lit_start = end + 1
    if lit_start < n:
        pieces.append(Piece(literal=expand_literal(fmt[lit_start:])))
    return pieces
