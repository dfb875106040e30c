"""``gitodb show-ref [--head] [-d|--dereference] [-s] [--verify] [<pattern>...]``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gitodb.errors import GitodbError
from gitodb.refs.base import refname_is_safe
from gitodb.refs.peel import peel_fully

USAGE = "usage: git show-ref [--head] [-d | --dereference] [-s | --hash] [<pattern>...]"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"error: {message}\n{USAGE}\n")
        raise SystemExit(129)


def _tail_match(name: str, patterns: list[str]) -> bool:
    if not patterns:
        return True
    return any(name == p or name.endswith("/" + p) for p in patterns)


def run(argv: list[str], ctx: Any) -> int:
    """List refs (and HEAD with ``--head``); ``-d`` adds ``^{}`` lines for tags."""
    parser = _Parser(prog="git show-ref", add_help=False)
    parser.add_argument("--head", action="store_true")
    parser.add_argument("-d", "--dereference", action="store_true")
    parser.add_argument("-s", "--hash", action="store_true")
    parser.add_argument("--verify", action="store_true")
    parser.add_argument("-q", "--quiet", action="store_true")
    parser.add_argument("patterns", nargs="*")
    args = parser.parse_args(argv)
    repo = ctx.open_repository()
    refs = repo.refs
    hexsz = repo.object_format.hexsz
    lines: list[bytes] = []

    def emit(name: str, oid: bytes, peeled: bytes | None, is_tagish: bool) -> None:
        if args.quiet:
            return
        # Git prints names as C strings: a NUL (only in a damaged table) ends one.
        name = name.partition("\0")[0]
        lines.append((oid.hex() if args.hash else f"{oid.hex()} {name}").encode(
            "utf-8", "surrogateescape") + b"\n")
        if args.dereference:
            p = peeled
            if p is None and is_tagish:
                p = peel_fully(repo.odb, oid, hexsz)
            if p is not None:
                lines.append((p.hex() if args.hash else f"{p.hex()} {name}^{{}}").encode(
                    "utf-8", "surrogateescape") + b"\n")

    def is_tag(oid: bytes) -> bool:
        return bool(repo.odb.read_header(oid)[0] == "tag")

    def check_object(name: str, oid: bytes) -> None:
        # Git lists a ref only if its object exists; what came before is still printed.
        if not repo.odb.contains(oid):
            sys.stdout.buffer.write(b"".join(lines))
            raise GitodbError(f"git show-ref: bad ref {name} ({oid.hex()})")

    found = 0
    if args.verify:
        for name in args.patterns:
            # Git: refs/... or a safe one-level name (HEAD, pseudorefs like FOO_HEAD)
            r = refs.resolve_ref(name) if name.startswith("refs/") or refname_is_safe(
                name) else None
            if r is None or r[1] is None:
                if not args.quiet:
                    sys.stderr.write(f"fatal: '{name}' - not a valid ref\n")
                return 128
            ref = refs.read(r[0])
            emit(name, r[1], ref.peeled if ref else None, args.dereference and is_tag(r[1]))
            found += 1
    else:
        if args.head and (not args.patterns or _tail_match("HEAD", args.patterns)):
            head = refs.resolve("HEAD")
            if head is not None:
                check_object("HEAD", head)
                emit("HEAD", head, None, args.dereference and is_tag(head))
                found += 1
        for ref in refs.iter_refs():
            if not _tail_match(ref.name, args.patterns):
                continue
            oid = ref.oid if ref.target is None else refs.resolve(ref.name)
            if oid is None:
                continue
            check_object(ref.name, oid)
            peeled = ref.peeled if ref.target is None else None
            emit(ref.name, oid, peeled, args.dereference and peeled is None and is_tag(oid))
            found += 1
    sys.stdout.buffer.write(b"".join(lines))
    return 0 if found else 1
