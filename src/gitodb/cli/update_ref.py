"""``gitodb update-ref [-m <msg>] [--no-deref] (-d <ref> [<old>] | <ref> <new> [<old>] |
--stdin [-z])``, like ``git update-ref``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any, BinaryIO

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


_ARGS = {"update": 2, "create": 1, "delete": 1, "verify": 1, "option": 0, "start": 0,
         "prepare": 0, "commit": 0, "abort": 0}
# Git's transaction states; "commit"/"abort" close, only "start" reopens.
_OPEN, _STARTED, _PREPARED, _CLOSED = 0, 1, 2, 3
_STATE = {"start": _STARTED, "prepare": _PREPARED, "commit": _CLOSED, "abort": _CLOSED}


def _read_z_token(stream: BinaryIO) -> bytes | None:
    """One NUL-terminated token (None at end of input)."""
    buf = bytearray()
    while True:
        c = stream.read(1)
        if not c:
            return bytes(buf) if buf else None
        if c == b"\0":
            return bytes(buf)
        buf += c


def _commands(stream: BinaryIO, z: bool) -> Iterator[list[str]]:
    """Commands one at a time as they arrive (a caller answering ``start: ok`` must not
    wait for the rest of the input, which may never come)."""
    def dec(b: bytes) -> str:
        return b.decode("utf-8", "surrogateescape")

    if not z:
        for raw in iter(stream.readline, b""):
            line = raw[:-1] if raw.endswith(b"\n") else raw
            if line:
                yield dec(line).split(" ")
        return
    while True:
        tok = _read_z_token(stream)
        if tok is None:
            return
        if not tok:
            continue
        verb, _, first = dec(tok).partition(" ")
        parts = [verb] + ([first] if first else [])
        for _ in range(_ARGS.get(verb, 0)):
            arg = _read_z_token(stream)
            if arg is None:
                break
            parts.append(dec(arg))
        yield parts


def _stdin(repo: Any, tx: RefTransaction, msg: str | None, no_deref: bool, z: bool,
           create_reflog: bool) -> int:
    """Git's ``--stdin`` protocol; on any error or end of input inside ``start`` the
    transaction is aborted, so no exit path leaves a lock or a partial change."""
    state = _OPEN
    next_no_deref = False
    try:
        for parts in _commands(sys.stdin.buffer, z):
            verb, args = parts[0], parts[1:]
            want = _STATE.get(verb, _OPEN)
            if state == _STARTED and want == _STARTED:
                raise GitodbError("cannot restart ongoing transaction")
            if state == _PREPARED and want != _CLOSED:
                raise GitodbError("prepared transactions can only be closed")
            if state == _CLOSED:
                if want != _STARTED:
                    raise GitodbError("transaction is closed")
                tx = tx.store.transaction()
                state = _STARTED
            elif state in (_OPEN, _STARTED):
                state = max(state, want)
            else:
                state = want
            if verb == "option":
                if args[:1] != ["no-deref"]:
                    raise GitodbError(f"option unknown: {' '.join(args)}")
                next_no_deref = True  # for the next command only, like Git
                continue
            _stdin_command(repo, tx, verb, args, parts, msg, no_deref or next_no_deref,
                           create_reflog)
            next_no_deref = False
            sys.stdout.flush()
        if state == _OPEN:
            tx.commit()  # no transaction requested: commit what was queued
    finally:
        if tx.state in ("open", "prepared"):
            tx.abort()
    return 0


def _stdin_command(repo: Any, tx: RefTransaction, verb: str, args: list[str],
                   parts: list[str], msg: str | None, no_deref: bool,
                   create_reflog: bool) -> None:
    fmt = repo.object_format

    def arg(k: int) -> str | None:
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
        new = _oid(repo, args[1])
        if not any(new):
            raise GitodbError(f"create {args[0]}: zero <new-oid>")
        tx.create(args[0], new, msg, create_reflog=create_reflog)
    elif verb == "delete":
        if arg(0) is None:
            raise GitodbError("delete: missing <ref>")
        old = arg(1)
        old_oid = _oid(repo, old) if old else None
        if old_oid is not None and not any(old_oid):
            raise GitodbError(f"delete {args[0]}: zero <old-oid>")
        tx.delete(args[0], old_oid, msg, no_deref=no_deref)
    elif verb == "verify":
        if arg(0) is None:
            raise GitodbError("verify: missing <ref>")
        old = arg(1)
        tx.verify(args[0], _oid(repo, old, True) if old is not None else fmt.null_oid)
    elif verb == "start":
        sys.stdout.write("start: ok\n")
    elif verb in ("prepare", "commit"):
        try:
            tx.prepare() if verb == "prepare" else tx.commit()
        except GitodbError as e:
            raise type(e)(f"{verb}: {e.message}", path=e.path, offset=e.offset) from None
        sys.stdout.write(f"{verb}: ok\n")
    elif verb == "abort":
        tx.abort()
        sys.stdout.write("abort: ok\n")
    else:
        raise GitodbError(f"unknown command: {' '.join(parts)}")


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
            if old is not None and not any(old):
                old = None  # Git: a null old value means "don't care" here
            try:
                tx.delete(pos[0], old, msg, no_deref=no_deref)
                tx.commit()
            except RefError as e:
                # Git's delete_ref reports an error and exits 1
                sys.stderr.write(f"error: {e}\n")
                return 1
            return 0
        if not 2 <= len(pos) <= 3:
            return _usage()
        new = _oid(repo, pos[1])
        old = _oid(repo, pos[2], True) if len(pos) == 3 else None
        try:
            _update(tx, pos[0], new, old, msg, no_deref, create_reflog)
            tx.commit()
        except RefError as e:
            raise RefError(f"update_ref failed for ref '{pos[0]}': {e}") from None
    finally:
        if tx.state in ("open", "prepared"):
            tx.abort()
    return 0
