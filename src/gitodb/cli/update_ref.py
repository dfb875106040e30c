"""``gitodb update-ref [-m <msg>] [--no-deref] (-d <ref> [<old>] | <ref> <new> [<old>] |
--stdin [-z])``, like ``git update-ref``."""

from __future__ import annotations

import sys
from typing import Any

from gitodb.cli.options import Option, OptionParser
from gitodb.cli.update_ref_stdin import CommandParser, read_commands
from gitodb.errors import BadRevisionError, GitodbError, RefError, RefHookVetoError
from gitodb.refs.base import RefTransaction
from gitodb.refs.peel import make_peeler
from gitodb.repo import revparse

PARSER = OptionParser(
    "update-ref",
    [
        "[<options>] -d <refname> [<old-oid>]",
        "[<options>]    <refname> <new-oid> [<old-oid>]",
        "[<options>] --stdin [-z] [--batch-updates]",
    ],
    [
        Option("m", None, "string", "reason of the update", argh="reason"),
        Option("d", None, "bool", "delete the reference", dest="delete", negatable=False),
        Option(
            None,
            "no-deref",
            "bool",
            "update <refname> not the one it points to",
            negatable=False,
        ),
        Option(
            None,
            "deref",
            "callback",
            "opposite of --no-deref",
            negatable=False,
            callback=lambda values, _value, _unset: setattr(values, "no_deref", False),
        ),
        Option("z", None, "bool", "stdin has NUL-terminated arguments", negatable=False),
        Option(None, "stdin", "bool", "read updates from stdin"),
        Option(None, "create-reflog", "bool", "create a reflog"),
        Option("0", "batch-updates", "bool", "batch reference updates"),
    ],
)


def _usage() -> int:
    raise PARSER.usage_error()


def _oid(repo: Any, value: str, allow_empty: bool = False) -> bytes:
    """Any revision Git accepts (hex id, ref, ``rev^``...); "" (if allowed) is the null id."""
    if value == "" and allow_empty:
        return bytes(repo.object_format.null_oid)
    try:
        return revparse.resolve(repo, value)
    except BadRevisionError:
        raise GitodbError(f"{value}: not a valid SHA1") from None


def _update(
    tx: RefTransaction,
    name: str,
    new: bytes,
    old: bytes | None,
    msg: str | None,
    no_deref: bool,
    create_reflog: bool,
) -> None:
    """``update`` with an all-zero new id deletes the ref, like Git."""
    if not any(new):
        tx.delete(name, old, msg, no_deref=no_deref)
    else:
        tx.update(name, new, old, msg, no_deref=no_deref, create_reflog=create_reflog)


def report_rejected(tx: RefTransaction, null: bytes) -> None:
    """Git's ``print_rejected_refs`` for a batch transaction: the reason on stderr, then
    ``rejected <ref> <new-oid> <old-oid> <reason>`` on stdout (absent ids as zeros)."""
    for r in tx.rejected:
        sys.stderr.write(f"error: {r.detail}\n")
        sys.stdout.write(
            f"rejected {r.refname} {(r.update.new or null).hex()} "
            f"{(r.update.old or null).hex()} {r.reason}\n"
        )


# Git's transaction states; "commit"/"abort" close, only "start" reopens.
_OPEN, _STARTED, _PREPARED, _CLOSED = 0, 1, 2, 3
_STATE = {"start": _STARTED, "prepare": _PREPARED, "commit": _CLOSED, "abort": _CLOSED}


def _stdin(
    repo: Any, tx: RefTransaction, msg: str | None, no_deref: bool, z: bool, create_reflog: bool
) -> int:
    """Git's ``--stdin`` protocol, one command at a time as input arrives; on any error,
    or end of input inside ``start``, the transaction is aborted, so no exit path
    leaves a lock or a partial change."""
    state = _OPEN
    next_no_deref = False
    null = bytes(repo.object_format.null_oid)

    def resolve(value: str) -> bytes | None:
        try:
            return revparse.resolve(repo, value)
        except GitodbError:
            return None

    try:
        for verb, rest in read_commands(sys.stdin.buffer, z):
            want = _STATE.get(verb, _OPEN)
            if state == _STARTED and want == _STARTED:
                raise GitodbError("cannot restart ongoing transaction")
            if state == _PREPARED and want != _CLOSED:
                raise GitodbError("prepared transactions can only be closed")
            if state == _CLOSED:
                if want != _STARTED:
                    raise GitodbError("transaction is closed")
                batch = tx.allow_failures
                tx = tx.store.transaction()
                tx.allow_failures = batch
                state = _STARTED
            elif state in (_OPEN, _STARTED):
                state = max(state, want)
            else:
                state = want
            p = CommandParser(rest, z, resolve, null)
            if verb == "option":
                if not (rest.startswith("no-deref") and rest[8:9] in ("", "\0", "\n")):
                    raise GitodbError(f"option unknown: {rest}")
                next_no_deref = True  # for the next command only, like Git
                continue
            _stdin_command(tx, verb, p, msg, no_deref or next_no_deref, create_reflog, null)
            next_no_deref = False
            sys.stdout.flush()
        if state == _OPEN:
            tx.commit()  # no transaction requested: commit what was queued
            report_rejected(tx, null)
    finally:
        if tx.state in ("open", "prepared"):
            tx.abort()
    return 0


def _symref_command(
    tx: RefTransaction,
    verb: str,
    ref: str,
    p: CommandParser,
    msg: str | None,
    create_reflog: bool,
    no_deref: bool,
) -> None:
    """``symref-verify|delete|create|update``: symref changes with old-target checks."""
    if verb == "symref-verify":
        old_target = p.target()
        p.extra(f"{verb} {ref}")
        tx.verify_symref(ref, old_target)
    elif verb == "symref-delete":
        old_target = p.target()
        p.extra(f"{verb} {ref}")
        tx.delete_symref(ref, old_target, msg)
    elif verb == "symref-create":
        new = p.target()
        if new is None:
            raise GitodbError(f"{verb} {ref}: missing <new-target>")
        p.extra(f"{verb} {ref}")
        tx.set_symref(ref, new, msg, old=p.null, create_reflog=create_reflog)
    else:
        new = p.target()
        if new is None:
            raise GitodbError(f"{verb} {ref}: missing <new-target>")
        kind = p.next_arg()
        old_oid = old_target = None
        if kind == "ref":
            old_target = p.target()
            if old_target is None:
                raise GitodbError(f"{verb} {ref}: expected old value")
        elif kind == "oid":
            arg = p.next_arg()
            if arg is None:
                raise GitodbError(f"{verb} {ref}: expected old value")
            old_oid = p.resolve(arg)
            if old_oid is None:
                raise GitodbError(f"{verb} {ref}: invalid oid: {arg}")
        elif kind is not None:
            raise GitodbError(f"{verb} {ref}: invalid arg '{kind}' for old value")
        p.extra(f"{verb} {ref}")
        tx.set_symref(
            ref,
            new,
            msg,
            old=old_oid,
            old_target=old_target,
            create_reflog=create_reflog,
            no_deref=no_deref,
        )


def _stdin_command(
    tx: RefTransaction,
    verb: str,
    p: CommandParser,
    msg: str | None,
    no_deref: bool,
    create_reflog: bool,
    null: bytes,
) -> None:
    """One parsed command, with Git's checks and messages."""
    if verb in ("start", "prepare", "commit", "abort"):
        p.extra(verb)
        if verb in ("prepare", "commit"):
            try:
                tx.prepare() if verb == "prepare" else tx.commit()
            except GitodbError as e:
                raise type(e)(f"{verb}: {e.message}", path=e.path, offset=e.offset) from None
            if verb == "commit":
                report_rejected(tx, null)
        elif verb == "abort":
            tx.abort()
        sys.stdout.write(f"{verb}: ok\n")
        return
    if (
        verb.startswith("symref-")
        and verb != "symref-update"
        and not no_deref
        and verb != "symref-create"
    ):
        raise GitodbError(f"{verb}: cannot operate with deref mode")
    ref = p.refname()
    if ref is None:
        raise GitodbError(f"{verb}: missing <ref>")
    if verb.startswith("symref-"):
        _symref_command(tx, verb, ref, p, msg, create_reflog, no_deref)
    elif verb == "update":
        new = p.oid("update", ref, old=False, allow_empty=True)
        if new is None:
            raise GitodbError(f"update {ref}: missing <new-oid>")
        old = p.oid("update", ref, old=True)
        p.extra(f"update {ref}")
        _update(tx, ref, new, old, msg, no_deref, create_reflog)
    elif verb == "create":
        new = p.oid("create", ref, old=False)
        if new is None:
            raise GitodbError(f"create {ref}: missing <new-oid>")
        if new == null:
            raise GitodbError(f"create {ref}: zero <new-oid>")
        p.extra(f"create {ref}")
        tx.create(ref, new, msg, create_reflog=create_reflog, no_deref=no_deref)
    elif verb == "delete":
        old = p.oid("delete", ref, old=True)
        if old == null:
            raise GitodbError(f"delete {ref}: zero <old-oid>")
        p.extra(f"delete {ref}")
        tx.delete(ref, old, msg, no_deref=no_deref)
    elif verb == "verify":
        old = p.oid("verify", ref, old=True)
        p.extra(f"verify {ref}")
        tx.verify(ref, old if old is not None else null)


def run(argv: list[str], ctx: Any) -> int:
    """Update, create or delete refs, with optional old-value checks."""
    opts, pos = PARSER.parse(argv)
    msg: str | None = opts.m
    delete, stdin, z, no_deref = opts.delete, opts.stdin, opts.z, opts.no_deref
    create_reflog, batch = opts.create_reflog, opts.batch_updates
    if batch and not stdin:
        raise GitodbError("--batch-updates can only be used with --stdin")
    repo = ctx.open_repository()
    refs = repo.refs
    refs.peeler = make_peeler(repo.odb, repo.object_format.hexsz)
    tx = refs.transaction()
    try:
        if stdin:
            if pos or delete:
                return _usage()
            tx.allow_failures = batch
            return _stdin(repo, tx, msg, no_deref, z, create_reflog)
        if z:
            return _usage()  # -z only makes sense with --stdin
        if delete:
            if not 1 <= len(pos) <= 2:
                return _usage()
            old = _oid(repo, pos[1]) if len(pos) == 2 else None
            if old is not None and not any(old):
                old = None  # Git: a null old value means "don't care" here
            try:
                tx.delete(pos[0], old, msg, no_deref=no_deref)
                tx.commit()
            except RefHookVetoError:
                raise  # Git dies of a veto
            except RefError as e:
                # Git's delete_ref reports an error and exits 1
                sys.stderr.write(f"error: {e.git_message}\n")
                return 1
            return 0
        if not 2 <= len(pos) <= 3:
            return _usage()
        new = _oid(repo, pos[1])
        old = _oid(repo, pos[2], True) if len(pos) == 3 else None
        try:
            _update(tx, pos[0], new, old, msg, no_deref, create_reflog)
            tx.commit()
        except RefHookVetoError:
            raise  # Git dies of a veto
        except RefError as e:
            raise RefError(f"update_ref failed for ref '{pos[0]}': {e.git_message}") from None
    finally:
        if tx.state in ("open", "prepared"):
            tx.abort()
    return 0
