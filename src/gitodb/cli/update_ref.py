"""``gitodb update-ref [-m <msg>] [--no-deref] (-d <ref> [<old>] | <ref> <new> [<old>] |
--stdin [-z])``, like ``git update-ref``."""

from __future__ import annotations

import sys
from typing import Any

from gitodb.errors import BadRevisionError, GitodbError, RefError
from gitodb.refs.base import RefTransaction
from gitodb.refs.peel import make_peeler
from gitodb.repo import revparse

USAGE = ("usage: git update-ref [<options>] -d <refname> [<old-val>]\n"
         "   or: git update-ref [<options>]    <refname> <new-val> [<old-val>]\n"
         "   or: git update-ref [<options>] --stdin [-z]")


def _usage() -> int:
    sys.stderr.write(USAGE + "\n")
    return 129


def _oid(repo: Any, value: str, allow_empty: bool = False) -> bytes:
    """Any revision Git accepts (hex id, ref, ``rev^``...); "" (if allowed) is the null id."""
    if value == "" and allow_empty:
        return bytes(repo.object_format.null_oid)
    try:
        return revparse.resolve(repo, value)
    except BadRevisionError:
        raise GitodbError(f"{value}: not a valid SHA1") from None


def _update(tx: RefTransaction, name: str, new: bytes, old: bytes | None, msg: str | None,
            no_deref: bool, create_reflog: bool) -> None:
    """``update`` with an all-zero new id deletes the ref, like Git."""
    if not any(new):
        tx.delete(name, old, msg, no_deref=no_deref)
    else:
        tx.update(name, new, old, msg, no_deref=no_deref, create_reflog=create_reflog)


def _stdin(repo: Any, tx: RefTransaction, msg: str | None, no_deref: bool, z: bool,
           create_reflog: bool) -> int:
    data = sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
    if z:
        tokens = data.split("\0")
        lines = []
        i = 0
        while i < len(tokens):
            cmd = tokens[i]
            if not cmd:
                i += 1
                continue
            verb, _, first = cmd.partition(" ")
            n = {"update": 2, "create": 1, "delete": 1, "verify": 1}.get(verb, 0)
            lines.append([verb, first, *tokens[i + 1:i + 1 + n]])
            i += 1 + n
    else:
        lines = [line.split(" ") for line in data.split("\n") if line]
    fmt = repo.object_format
    for parts in lines:
        verb, args = parts[0], parts[1:]

        def arg(k: int, args: list[str] = args) -> str | None:
            return args[k] if len(args) > k else None

        if verb == "update":
            if arg(0) is None or arg(1) is None:
                raise GitodbError(f"update: missing <new-oid>: {' '.join(parts)}")
            old = arg(2)
            _update(tx, args[0], _oid(repo, args[1], True),
                    _oid(repo, old, True) if old is not None else None, msg, no_deref,
                    create_reflog)
        elif verb == "create":
            if arg(1) is None:
                raise GitodbError(f"create: missing <new-oid>: {' '.join(parts)}")
            tx.create(args[0], _oid(repo, args[1]), msg, create_reflog=create_reflog)
        elif verb == "delete":
            old = arg(1)
            tx.delete(args[0], _oid(repo, old) if old else None, msg, no_deref=no_deref)
        elif verb == "verify":
            old = arg(1)
            tx.verify(args[0], _oid(repo, old, True) if old is not None else fmt.null_oid)
        elif verb == "option":
            if arg(0) == "no-deref":
                no_deref = True
            else:
                raise GitodbError(f"option unknown: {arg(0)}")
        elif verb == "start":
            sys.stdout.write("start: ok\n")
        elif verb == "prepare":
            tx.prepare()
            sys.stdout.write("prepare: ok\n")
        elif verb == "commit":
            tx.commit()
            sys.stdout.write("commit: ok\n")
            tx = tx.store.transaction()
        elif verb == "abort":
            tx.abort()
            sys.stdout.write("abort: ok\n")
            tx = tx.store.transaction()
        else:
            raise GitodbError(f"unknown command: {' '.join(parts)}")
        sys.stdout.flush()
    if tx.updates and tx.state in ("open", "prepared"):
        tx.commit()
    return 0


def run(argv: list[str], ctx: Any) -> int:
    """Update, create or delete refs, with optional old-value checks."""
    msg = None
    delete = stdin = z = no_deref = create_reflog = False
    pos: list[str] = []
    it = iter(argv)
    for a in it:
        if a == "-m":
            msg = next(it, None)
            if msg is None:
                return _usage()
        elif a.startswith("-m") and len(a) > 2:
            msg = a[2:]
        elif a == "-d":
            delete = True
        elif a == "--stdin":
            stdin = True
        elif a == "-z":
            z = True
        elif a == "--no-deref":
            no_deref = True
        elif a == "--create-reflog":
            create_reflog = True
        elif a.startswith("-") and a != "-":
            return _usage()
        else:
            pos.append(a)
    repo = ctx.open_repository()
    refs = repo.refs
    refs.peeler = make_peeler(repo.odb, repo.object_format.hexsz)
    tx = refs.transaction()
    try:
        if stdin:
            if pos or delete:
                return _usage()
            return _stdin(repo, tx, msg, no_deref, z, create_reflog)
        if delete:
            if not 1 <= len(pos) <= 2:
                return _usage()
            old = _oid(repo, pos[1]) if len(pos) == 2 else None
            tx.delete(pos[0], old, msg, no_deref=no_deref)
        else:
            if not 2 <= len(pos) <= 3:
                return _usage()
            new = _oid(repo, pos[1])
            old = _oid(repo, pos[2], True) if len(pos) == 3 else None
            _update(tx, pos[0], new, old, msg, no_deref, create_reflog)
        tx.commit()
    except RefError:
        if tx.state == "prepared":
            tx.abort()
        raise
    return 0
