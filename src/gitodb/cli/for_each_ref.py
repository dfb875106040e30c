"""``gitodb for-each-ref [--format=<fmt>] [--include-root-refs] [<pattern>...]``."""

from __future__ import annotations

import argparse
import fnmatch
import re
import sys
from typing import Any

from gitodb.errors import GitodbError, ObjectNotFoundError
from gitodb.refs.base import Ref
from gitodb.refs.peel import peel_fully, shorten_ref

USAGE = "usage: git for-each-ref [<options>] [<pattern>]"
DEFAULT_FORMAT = "%(objectname) %(objecttype)\t%(refname)"
_ATOM = re.compile(r"%\((\*?)([a-z]+)(?::([a-z]+))?\)|%%|%([0-9a-fA-F]{2})")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"error: {message}\n{USAGE}\n")
        raise SystemExit(129)


def ref_matches(name: str, patterns: list[str]) -> bool:
    """Git's for-each-ref matching: a path prefix, or a wildmatch glob."""
    if not patterns:
        return True
    for p in patterns:
        if any(c in p for c in "*?["):
            if fnmatch.fnmatchcase(name, p):
                return True
        elif name == p or name.startswith(p if p.endswith("/") else p + "/"):
            return True
    return False


class Formatter:
    """Expands a ``--format`` string for one ref; object lookups go through the odb."""

    def __init__(self, fmt: str, repo: Any) -> None:
        self.fmt = fmt
        self.repo = repo
        self.hexsz = repo.object_format.hexsz
        for m in _ATOM.finditer(fmt):
            if m.group(2) and m.group(2) not in ("refname", "objectname", "objecttype",
                                                 "symref", "objectsize", "HEAD"):
                raise GitodbError(f"unknown field name: {m.group(2)}")

    def _type(self, oid: bytes) -> str:
        try:
            return str(self.repo.odb.read_header(oid)[0])
        except ObjectNotFoundError:
            raise GitodbError(f"missing object {oid.hex()}") from None

    def expand(self, name: str, ref: Ref, oid: bytes, head_target: str | None) -> bytes:
        peeled: list[bytes | None] = []

        def deref() -> bytes | None:
            if not peeled:
                p = ref.peeled if ref.target is None and ref.peeled is not None else None
                if p is None and self._type(oid) == "tag":
                    p = peel_fully(self.repo.odb, oid, self.hexsz)
                peeled.append(p)
            return peeled[0]

        def sub(m: re.Match[str]) -> str:
            if m.group(0) == "%%":
                return "%"
            if m.group(4):
                return chr(int(m.group(4), 16))
            star, atom, mod = m.group(1), m.group(2), m.group(3)
            target = oid
            if star:
                d = deref()
                if d is None:
                    return ""
                target = d
            if atom == "refname":
                return shorten_ref(name) if mod == "short" else name
            if atom == "objectname":
                return target.hex()[:7] if mod == "short" else target.hex()
            if atom == "objecttype":
                return self._type(target)
            if atom == "objectsize":
                return str(self.repo.odb.read_header(target)[1])
            if atom == "symref":
                t = ref.target or ""
                return shorten_ref(t) if mod == "short" and t else t
            if atom == "HEAD":
                return "*" if head_target == name else " "
            return ""

        return _ATOM.sub(sub, self.fmt).encode("utf-8", "surrogateescape")


def run(argv: list[str], ctx: Any) -> int:
    """List refs with their ids, sorted by name."""
    parser = _Parser(prog="git for-each-ref", add_help=False)
    parser.add_argument("--format", default=DEFAULT_FORMAT)
    parser.add_argument("--include-root-refs", action="store_true")
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("patterns", nargs="*")
    args = parser.parse_args(argv)
    repo = ctx.open_repository()
    refs = repo.refs
    fmt = Formatter(args.format, repo)
    head = refs.read("HEAD")
    head_target = refs.resolve_ref("HEAD")[0] if head is not None and refs.resolve_ref(
        "HEAD") else None
    items = list(refs.iter_refs())
    if args.include_root_refs:
        items = sorted(list(refs.iter_root_refs()) + items,
                       key=lambda r: r.name.encode("utf-8", "surrogateescape"))
    out = []
    for ref in items:
        if not ref_matches(ref.name, args.patterns):
            continue
        if ref.target is not None:
            resolved = refs.resolve_ref(ref.name)
            if resolved is None or resolved[1] is None:
                continue
            oid = resolved[1]
        else:
            assert ref.oid is not None
            oid = ref.oid
        out.append(fmt.expand(ref.name, ref, oid, head_target) + b"\n")
        if args.count and len(out) >= args.count:
            break
    sys.stdout.buffer.write(b"".join(out))
    return 0
