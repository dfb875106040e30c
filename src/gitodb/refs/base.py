"""The one refs interface that both ref backends (files, reftable) implement.

Reading: ``read``, ``iter_refs``, ``resolve_ref``, ``resolve``.  Writing goes through
a ``RefTransaction`` (``store.transaction()``): queue updates with old-value checks,
``prepare`` (lock and check), ``commit``.  Reflogs: ``reflog``, ``reflog_names``,
``reflog_exists``, ``rewrite_reflog`` (expire/delete entries).  The planning of a
transaction (symref dereferencing, which reflogs get an entry, Git's error messages)
is shared here; each backend only stores the result.
"""

from __future__ import annotations

import os
import time
from abc import ABC, abstractmethod

from gitodb.errors import BrokenRefError, RefError, RefHookVetoError
from gitodb.lazyre import lazy
from gitodb.objects.format import ObjectFormat
from gitodb.types import NamedTuple, Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, TypeAlias

    from gitodb.refs.table import RefTable

SYMREF_MAX_DEPTH = 5
Peeler: TypeAlias = 'Callable[[bytes], "bytes | None"]'


class RefRejection(RefError):
    """A check that fails one update on its own (Git's ``enum ref_transaction_error``):
    with ``allow_failures`` the transaction drops that update and goes on.  ``reason`` is
    Git's text for the kind of failure; ``refname`` the ref it is reported against."""

    def __init__(
        self,
        message: str,
        reason: str = "",
        refname: str = "",
        *,
        path: str | os.PathLike[str] | None = None,
        offset: int | None = None,
        details: list[str] | None = None,
    ) -> None:
        super().__init__(message, path=path, offset=offset, details=details)
        self.reason = reason
        self.refname = refname


#: Git's ``ref_transaction_error_msg`` texts
NAME_CONFLICT = "refname conflict"
CREATE_EXISTS = "reference already exists"
NONEXISTENT_REF = "reference does not exist"
INCORRECT_OLD_VALUE = "incorrect old value provided"
INVALID_NEW_VALUE = "invalid new value provided"
EXPECTED_SYMREF = "expected symref but found regular ref"


class Rejected(Record):
    """One update a batch transaction (``allow_failures``) dropped, and why."""

    __slots__ = ("update", "refname", "reason", "detail")
    update: RefUpdate
    refname: str
    reason: str
    detail: str

    def __init__(self, update: RefUpdate, refname: str, reason: str, detail: str) -> None:
        self.update = update
        self.refname = refname
        self.reason = reason
        self.detail = detail


class Ref(NamedTuple):
    """A ref as stored: either an id (``oid``, maybe ``peeled``) or a symref ``target``."""

    name: str
    oid: bytes | None = None
    target: str | None = None
    peeled: bytes | None = None

    @property
    def is_symref(self) -> bool:
        return self.target is not None


class ReflogEntry(NamedTuple):
    """One reflog entry; ``tz_offset`` is Git's signed ``+HHMM`` number (e.g. 200, -500)."""

    old: bytes
    new: bytes
    name: str
    email: str
    time: int
    tz_offset: int
    message: bytes


def sorted_names(names: Iterable[str]) -> list[str]:
    """``names`` in Git's order: by their bytes (UTF-8, surrogate escapes as raw bytes).

    Code-point order is that order for names without surrogate escapes; ASCII names
    (nearly always all of them) sort as they are, without a key per name.
    """
    got = list(names)
    if "".join(got).isascii():
        got.sort()
        return got
    got.sort(key=lambda n: n.encode("utf-8", "surrogateescape"))
    return got


def rewrite_old_ids(entries: list[ReflogEntry], null: bytes) -> list[ReflogEntry]:
    """Entries whose old id is the new id of the one before (``--rewrite``)."""
    out = []
    last = null
    for e in entries:
        out.append(
            e
            if e.old == last
            else ReflogEntry(last, e.new, e.name, e.email, e.time, e.tz_offset, e.message)
        )
        last = e.new
    return out


# -- ref names ---------------------------------------------------------------

_ROOT_REF = lazy(r"[A-Z_]*HEAD")
_BAD_COMPONENT = lazy(r"(^\.|\.lock$|\.\.|@\{|[\x00-\x20\x7f~^:?*\[\\])")


def check_refname(name: str, *, allow_onelevel: bool = False) -> None:
    """Raise ``RefError`` unless ``name`` passes Git's ``check-ref-format`` rules."""
    if not refname_format_ok(name, allow_onelevel=allow_onelevel):
        raise RefError(f"refusing to update ref with bad name '{name}'")


def refname_format_ok(name: str, *, allow_onelevel: bool = False) -> bool:
    """Git's ``check_refname_format`` (without ``REFNAME_REFSPEC_PATTERN``)."""
    ok = bool(name) and name != "@" and not name.endswith((".", "/")) and not name.startswith("/")
    if ok:
        for comp in name.split("/"):
            if not comp or _BAD_COMPONENT.search(comp):
                return False
    if ok and "/" not in name and not allow_onelevel and not is_root_ref(name):
        return False
    return ok


def refname_is_safe(name: str) -> bool:
    """Git's ``refname_is_safe``: what may be deleted or verified.

    ``refs/...`` that does not escape ``refs/`` (no empty, ``.`` or ``..`` components),
    or a one-level name of upper-case letters and underscores.  Paths such as
    ``logs/HEAD``, ``shallow`` or ``hooks`` are not refs and are refused.
    """
    if name.startswith("refs/"):
        rest = name[len("refs/") :]
        if not rest or rest.startswith("/") or rest.endswith("/"):
            return False
        return all(c not in ("", ".", "..") for c in rest.split("/"))
    return bool(name) and all(c.isupper() or c == "_" for c in name) and name.isascii()


def check_update_name(name: str, *, writes_value: bool) -> None:
    """Refuse a bad name like Git's ``ref_transaction_add_update``.

    A name that gets a value must pass ``check-ref-format`` (one level allowed);
    a deletion or verification only needs ``refname_is_safe``; the pseudorefs
    ``FETCH_HEAD`` and ``MERGE_HEAD`` are never written through a ref store.
    """
    ok = refname_format_ok(name, allow_onelevel=True) if writes_value else refname_is_safe(name)
    if not ok:
        raise RefError(f"refusing to update ref with bad name '{name}'")
    if name in PSEUDO_REFS:
        # Git 2.55's is_pseudo_ref: files only Git's own commands write
        raise RefError(f"refusing to update pseudoref '{name}'")


#: Git's pseudorefs (``is_pseudo_ref``), kept as files outside every ref store
PSEUDO_REFS = frozenset({"FETCH_HEAD", "MERGE_HEAD"})


def is_root_ref(name: str) -> bool:
    """HEAD and pseudo refs like ORIG_HEAD: all caps/underscores, ending in HEAD."""
    return bool(_ROOT_REF.fullmatch(name)) or name in (
        "AUTO_MERGE",
        "BISECT_EXPECTED_REV",
        "NOTES_MERGE_PARTIAL",
        "NOTES_MERGE_REF",
        "MERGE_AUTOSTASH",
    )


# -- reflog helpers ----------------------------------------------------------


def normalize_reflog_message(msg: str | bytes | None) -> bytes:
    """Git's ``copy_reflog_msg``: drop leading space, squeeze whitespace runs, rtrim."""
    if not msg:
        return b""
    data = msg.encode("utf-8", "surrogateescape") if isinstance(msg, str) else msg
    out = bytearray()
    was_space = True
    for c in data:
        space = c in b" \t\n\r\x0b\x0c"
        if was_space and space:
            continue
        was_space = space
        out.append(0x20 if space else c)
    return bytes(out).rstrip(b" ")


def _parse_date(value: str) -> tuple[int, int]:
    v = value.strip()
    if v.startswith("@"):
        v = v[1:]
    parts = v.split()
    try:
        ts = int(parts[0])
        tz = int(parts[1]) if len(parts) > 1 else 0
        return ts, tz
    except (ValueError, IndexError):
        pass
    from datetime import datetime

    try:
        dt = datetime.fromisoformat(v)
    except ValueError:
        raise RefError(f"invalid date format: {value}") from None
    off = dt.utcoffset()
    mins = int(off.total_seconds() // 60) if off is not None else 0
    return int(dt.timestamp()), (mins // 60) * 100 + (mins % 60) * (1 if mins >= 0 else -1)


def _is_crud(c: str) -> bool:
    return ord(c) <= 32 or c in ",:;<>\"\\'"


def strip_crud(text: str) -> str:
    """Git's ``strbuf_addstr_without_crud``: trim control/space/punctuation crud at both
    ends and drop ``\\n``, ``<`` and ``>`` inside, so an identity cannot break a line."""
    i, j = 0, len(text)
    while i < j and _is_crud(text[i]):
        i += 1
    while j > i and _is_crud(text[j - 1]):
        j -= 1
    return "".join(c for c in text[i:j] if c not in "\n<>")


def committer_identity(config: object | None) -> tuple[str, str, int, int]:
    """(name, email, time, tz) like Git's committer ident: environment, then config."""
    get = getattr(config, "get", None)
    name = os.environ.get("GIT_COMMITTER_NAME") or (get("user.name") if get else None)
    email = os.environ.get("GIT_COMMITTER_EMAIL") or (get("user.email") if get else None)
    if not name:
        import getpass

        try:
            name = getpass.getuser()
        except (KeyError, OSError):
            name = "unknown"
    if not email:
        import socket

        email = f"{name}@{socket.gethostname()}"
    name, email = strip_crud(name), strip_crud(email)
    date = os.environ.get("GIT_COMMITTER_DATE")
    if date:
        ts, tz = _parse_date(date)
    else:
        ts = int(time.time())
        off = -(time.altzone if time.localtime(ts).tm_isdst > 0 else time.timezone)
        mins = abs(off) // 60
        tz = (mins // 60 * 100 + mins % 60) * (1 if off >= 0 else -1)
    return name, email, ts, tz


def format_tz(tz: int) -> str:
    """``+HHMM``/``-HHMM`` from Git's signed number."""
    return f"{'-' if tz < 0 else '+'}{abs(tz):04d}"


# -- transactions ------------------------------------------------------------


class RefUpdate(Record):
    """One queued change.  ``new`` None with ``delete``: remove; ``old``: expected value
    (None: no check, null id: must not exist); ``verify``: only check ``old``.

    ``skip_log``: write the ref without any reflog entry (``reflog delete/expire
    --updateref``); ``old_target``: expected symref target (``symref-verify``/``-delete``/
    ``-update ref``).
    """

    __slots__ = (
        "name",
        "new",
        "old",
        "target",
        "message",
        "delete",
        "verify",
        "no_deref",
        "create_reflog",
        "skip_log",
        "old_target",
    )
    name: str
    new: bytes | None
    old: bytes | None
    target: str | None
    message: str | bytes | None
    delete: bool
    verify: bool
    no_deref: bool
    create_reflog: bool
    skip_log: bool
    old_target: str | None

    def __init__(
        self,
        name: str,
        new: bytes | None = None,
        old: bytes | None = None,
        target: str | None = None,
        message: str | bytes | None = None,
        delete: bool = False,
        verify: bool = False,
        no_deref: bool = False,
        create_reflog: bool = False,
        skip_log: bool = False,
        old_target: str | None = None,
    ) -> None:
        self.name = name
        self.new = new
        self.old = old
        self.target = target
        self.message = message
        self.delete = delete
        self.verify = verify
        self.no_deref = no_deref
        self.create_reflog = create_reflog
        self.skip_log = skip_log
        self.old_target = old_target


class PlannedWrite(Record):
    """What the backend must store: the ref's new state (None = delete) and log entries
    (``logs``: (refname, old, new))."""

    __slots__ = ("name", "ref", "logs", "message", "old_ref")
    name: str
    ref: Ref | None
    logs: list[tuple[str, bytes, bytes]]
    message: bytes
    old_ref: Ref | None

    def __init__(
        self,
        name: str,
        ref: Ref | None,
        logs: list[tuple[str, bytes, bytes]] | None = None,
        message: bytes = b"",
        old_ref: Ref | None = None,
    ) -> None:
        self.name = name
        self.ref = ref
        self.logs = [] if logs is None else logs
        self.message = message
        self.old_ref = old_ref


#: Git's words when the ``reference-transaction`` hook vetoes a phase
VETO = "in '{}' phase, update aborted by the reference-transaction hook"


class RefTransaction:
    """Queue updates, then ``prepare()`` (lock + check) and ``commit()``; or ``abort()``."""

    def __init__(self, store: RefStore) -> None:
        self.store = store
        self.updates: list[RefUpdate] = []
        self.state = "open"
        self._prepared: object = None
        self._names: set[str] = set()
        #: Git's ``REF_TRANSACTION_ALLOW_FAILURE`` (``update-ref --batch-updates``): an
        #: update failing a ref-specific check is dropped into ``rejected`` instead of
        #: failing the whole transaction
        self.allow_failures = False
        self._queue_rejected: list[Rejected] = []
        self._plan_rejected: list[Rejected] = []
        #: set by the store's plan: the ref each update reaches through symrefs
        self._reached: dict[str, str] = {}

    @property
    def rejected(self) -> list[Rejected]:
        """The updates dropped so far, in Git's order (an update reached through a
        symref is reported after the others, as Git appends the split-off update)."""
        every = self._queue_rejected + self._plan_rejected
        return sorted(every, key=lambda r: r.refname != r.update.name)

    def _reject(self, upd: RefUpdate, e: RefRejection, *, queued: bool) -> None:
        if not self.allow_failures:
            raise e
        (self._queue_rejected if queued else self._plan_rejected).append(
            Rejected(upd, e.refname, e.reason, e.message)
        )

    def _add(self, upd: RefUpdate) -> None:
        if self.state != "open":
            raise RefError(f"transaction is {self.state}")
        check_update_name(upd.name, writes_value=not (upd.delete or upd.verify))
        if upd.new is not None and any(upd.new):
            try:
                self.store._check_object(upd.name, upd.new)
            except RefRejection as e:
                self._reject(upd, e, queued=True)
                return
        if upd.name in self._names:
            raise RefError(f"multiple updates for ref '{upd.name}' not allowed")
        self._names.add(upd.name)
        self.updates.append(upd)

    def update(
        self,
        name: str,
        new: bytes,
        old: bytes | None = None,
        message: str | bytes | None = None,
        *,
        no_deref: bool = False,
        create_reflog: bool = False,
        log: bool = True,
    ) -> None:
        """Set ``name`` to ``new`` if it currently is ``old`` (None: any value).

        ``create_reflog`` logs the update even where ``core.logAllRefUpdates`` would not;
        ``log=False`` writes no reflog entry at all.
        """
        self._add(
            RefUpdate(
                name,
                new=new,
                old=old,
                message=message,
                no_deref=no_deref,
                create_reflog=create_reflog,
                skip_log=not log,
            )
        )

    def create(
        self,
        name: str,
        new: bytes,
        message: str | bytes | None = None,
        *,
        create_reflog: bool = False,
        no_deref: bool = False,
    ) -> None:
        """Create ``name``; fails if it exists (with ``no_deref``: also a dangling symref)."""
        self.update(
            name,
            new,
            self.store.fmt.null_oid,
            message,
            create_reflog=create_reflog,
            no_deref=no_deref,
        )

    def delete(
        self,
        name: str,
        old: bytes | None = None,
        message: str | bytes | None = None,
        *,
        no_deref: bool = False,
    ) -> None:
        """Delete ``name`` (if it is ``old``, when given)."""
        self._add(RefUpdate(name, old=old, message=message, delete=True, no_deref=no_deref))

    def verify(self, name: str, old: bytes | None) -> None:
        """Check that ``name`` is ``old`` (null id: does not exist) when committing."""
        self._add(
            RefUpdate(name, old=old if old is not None else self.store.fmt.null_oid, verify=True)
        )

    def set_symref(
        self,
        name: str,
        target: str,
        message: str | bytes | None = None,
        *,
        old: bytes | None = None,
        old_target: str | None = None,
        create_reflog: bool = False,
        no_deref: bool = True,
    ) -> None:
        """Make ``name`` a symref to ``target`` (if it is ``old`` / points at
        ``old_target``, when given; a null ``old``: it must not exist).  With
        ``no_deref=False`` (``update-ref --stdin``'s ``symref-update`` without
        ``--no-deref``) the ref ``name`` resolves to is the one rewritten, as in Git."""
        check_refname(target, allow_onelevel=True)
        # an old-target check is about ``name`` itself, so it never dereferences
        self._add(
            RefUpdate(
                name,
                target=target,
                message=message,
                no_deref=no_deref or old_target is not None,
                old=old,
                old_target=old_target,
                create_reflog=create_reflog,
            )
        )

    def verify_symref(self, name: str, old_target: str | None) -> None:
        """Check that ``name`` is a symref to ``old_target`` (None: does not exist)."""
        if old_target is None:
            self._add(RefUpdate(name, old=self.store.fmt.null_oid, verify=True, no_deref=True))
        else:
            self._add(RefUpdate(name, verify=True, no_deref=True, old_target=old_target))

    def delete_symref(
        self, name: str, old_target: str | None, message: str | bytes | None = None
    ) -> None:
        """Delete ``name`` (no deref), checking it points at ``old_target`` if given."""
        self._add(
            RefUpdate(name, delete=True, no_deref=True, old_target=old_target, message=message)
        )

    def prepare(self) -> None:
        """Lock everything and check old values; errors leave nothing locked.

        The ``reference-transaction`` hook (``store.transaction_hook``) is told
        ``preparing`` before and ``prepared`` after; a veto in either phase fails
        the transaction with Git's message.
        """
        if self.state == "prepared":
            return
        if self.state != "open":
            raise RefError(f"transaction is {self.state}")
        if self.run_hook("preparing"):
            raise RefHookVetoError(VETO.format("preparing"))
        self._prepared = self.store._prepare(self)
        self.state = "prepared"
        if self.run_hook("prepared"):
            self.abort()
            raise RefHookVetoError(VETO.format("prepared"))

    def commit(self) -> None:
        """Apply all updates atomically (prepares first if needed)."""
        self.prepare()
        try:
            self.store._commit(self, self._prepared)
        except BaseException:
            self.state = "failed"  # the backend has released its locks
            raise
        self.state = "committed"
        self.run_hook("committed")

    def abort(self) -> None:
        """Release locks; change nothing."""
        if self.state == "prepared":
            self.store._abort(self, self._prepared)
        self.state = "aborted"
        self.run_hook("aborted")

    def run_hook(self, state: str, lines: list[bytes] | None = None) -> int:
        """Tell the ``reference-transaction`` hook, if any, that the transaction is in
        ``state``; its exit status.  It reads Git's ``<old> <new> <refname>`` lines:
        ``lines``, else one per update (``ref:<target>`` for a symref, the null id for
        none; once prepared, named by the ref each update reaches through symrefs)."""
        hook = self.store.transaction_hook
        if hook is None:
            return 0
        if lines is None:
            lines = [self._hook_line(u) for u in self.updates]
        return hook(state, b"".join(lines))

    def _hook_line(self, u: RefUpdate) -> bytes:
        null = self.store.fmt.null_oid.hex()
        if u.old_target is not None:
            old = f"ref:{u.old_target}"
        else:
            old = u.old.hex() if u.old is not None else null
        if u.target is not None:
            new = f"ref:{u.target}"
        else:
            new = u.new.hex() if u.new is not None and not u.delete else null
        name = self._reached.get(u.name, u.name) if self.state != "open" else u.name
        return f"{old} {new} {name}\n".encode("utf-8", "surrogateescape")


class RefStore(ABC):
    """Read and write refs and reflogs of one repository."""

    fmt: ObjectFormat
    config: object | None = None
    #: maps an object id to the id it peels to (None if not a tag); set by callers
    #: that have an object database, used to store peeled values of annotated tags.
    peeler: Peeler | None = None
    #: maps an object id to its type name, or None if the object does not exist; set by
    #: callers that have an object database, so that refs to missing objects and
    #: branches pointing at non-commits are refused like Git does.
    object_type: Callable[[bytes], str | None] | None = None
    _transaction_hook: Callable[[str, bytes], int] | None = None
    #: set by callers that have a repository (``gitodb.repo.hooks``): finds the hook
    #: when a transaction first asks, so that a command that only reads never looks
    transaction_hook_finder: Callable[[], Callable[[str, bytes], int] | None] | None = None

    @property
    def transaction_hook(self) -> Callable[[str, bytes], int] | None:
        """Runs Git's ``reference-transaction`` hook: ``(state, stdin) -> exit status``;
        None: no hook."""
        finder = self.transaction_hook_finder
        if finder is not None:
            self.transaction_hook_finder = None
            self._transaction_hook = finder()
        return self._transaction_hook

    @transaction_hook.setter
    def transaction_hook(self, hook: Callable[[str, bytes], int] | None) -> None:
        self.transaction_hook_finder = None
        self._transaction_hook = hook

    @abstractmethod
    def read(self, name: str) -> Ref | None:
        """Return the ref ``name`` as stored (symrefs not followed), or None."""

    @abstractmethod
    def iter_refs(self, prefix: str = "") -> Iterator[Ref]:
        """Yield refs under ``refs/`` whose name starts with ``prefix``, sorted by name."""

    @abstractmethod
    def iter_root_refs(self) -> Iterator[Ref]:
        """Yield HEAD and pseudo refs (ORIG_HEAD, ...) stored in this backend, sorted."""

    def ref_table(self, broken: list[str] | None = None) -> RefTable | None:
        """Every ref under ``refs/`` as a ``gitodb.refs.table.RefTable`` (no object per
        ref: symbolic refs resolved, dangling ones left out), or None where this store
        cannot give one cheaply: then ``iter_refs`` is the listing.

        A ref that cannot be read raises, unless ``broken`` is given: then its name is
        appended there and it is left out."""
        return None

    def close(self) -> None:
        """Release the mappings and file handles the store holds (none for loose files).

        The store is not to be used afterwards; ``Repository.refs`` opens a fresh one
        after ``Repository.close()``.
        """
        return None  # the files backend holds nothing open between calls

    def resolve_ref(self, name: str) -> tuple[str, bytes | None] | None:
        """Follow symrefs from ``name``; return (final ref name, id or None if unborn)."""
        for _ in range(SYMREF_MAX_DEPTH + 1):
            ref = self.read(name)
            if ref is None:
                return None
            if ref.target is None:
                return ref.name, ref.oid
            name = ref.target
            if self.read(name) is None:
                return name, None
        return None

    def resolve(self, name: str) -> bytes | None:
        """Return the id ``name`` points at after following symrefs, or None."""
        r = self.resolve_ref(name)
        return r[1] if r else None

    # -- writing ----------------------------------------------------------
    def transaction(self) -> RefTransaction:
        """A new transaction on this store."""
        return RefTransaction(self)

    def update_ref(
        self,
        name: str,
        new: bytes,
        old: bytes | None = None,
        message: str | bytes | None = None,
        *,
        no_deref: bool = False,
    ) -> None:
        """One-update transaction: set ``name`` (following symrefs unless ``no_deref``)."""
        tx = self.transaction()
        tx.update(name, new, old, message, no_deref=no_deref)
        tx.commit()

    def delete_ref(
        self,
        name: str,
        old: bytes | None = None,
        message: str | bytes | None = None,
        *,
        no_deref: bool = False,
    ) -> None:
        """One-update transaction: delete ``name``."""
        tx = self.transaction()
        tx.delete(name, old, message, no_deref=no_deref)
        tx.commit()

    def set_symref(self, name: str, target: str, message: str | bytes | None = None) -> None:
        """One-update transaction: make ``name`` point at ``target``."""
        tx = self.transaction()
        tx.set_symref(name, target, message)
        tx.commit()

    @abstractmethod
    def _prepare(self, tx: RefTransaction) -> object: ...

    @abstractmethod
    def _commit(self, tx: RefTransaction, prepared: object) -> None: ...

    @abstractmethod
    def _abort(self, tx: RefTransaction, prepared: object) -> None: ...

    # -- reflogs ----------------------------------------------------------
    @abstractmethod
    def reflog(self, name: str) -> list[ReflogEntry]:
        """Entries of ``name``'s reflog, oldest first (empty if none)."""

    @abstractmethod
    def reflog_exists(self, name: str) -> bool:
        """Whether ``name`` has a reflog (possibly empty after expiry)."""

    @abstractmethod
    def reflog_names(self) -> list[str]:
        """Names of all refs with a reflog, sorted."""

    @abstractmethod
    def rewrite_reflog(
        self, name: str, keep: Callable[[int, ReflogEntry], bool], *, rewrite: bool = False
    ) -> int:
        """Drop the entries (index from oldest, entry) for which ``keep`` is False.

        With ``rewrite`` each kept entry's old id becomes the new id of the kept entry
        before it (null for the first), as ``reflog expire --rewrite`` does.  Returns
        how many were dropped.  Used by ``reflog delete`` and ``expire``.
        """

    @abstractmethod
    def drop_reflog(self, name: str) -> bool:
        """Delete ``name``'s reflog entirely (``git reflog drop``); False if it had none."""

    @abstractmethod
    def append_reflog(self, name: str, entry: ReflogEntry) -> None:
        """Add ``entry`` to ``name``'s reflog, creating it (``git reflog write``)."""

    def other_worktree_reflog_names(self) -> list[str]:
        """Per-worktree reflogs of the other worktrees, by their prefixed names
        (``worktrees/<id>/HEAD``, ``main-worktree/HEAD``), as ``reflog expire --all``
        processes them."""
        return []

    def expire_reflog(self, name: str, expire_before: int) -> int:
        """Drop entries of ``name`` older than ``expire_before`` (a Unix time)."""
        return self.rewrite_reflog(name, lambda _i, e: e.time >= expire_before)

    # -- shared planning --------------------------------------------------
    def should_log(self, name: str) -> bool:
        """``core.logAllRefUpdates`` (default: true unless bare), or an existing reflog."""
        config: Any = self.config
        if hasattr(config, "get_bool_or_str"):
            # Git's parse: a boolean or "always"; "" (``-c key=``) is false
            default = not config.get_bool("core.bare", False)
            mode = config.get_bool_or_str("core.logallrefupdates", ("always",), default)
        else:  # a plain mapping-like config without Git's typed getters
            get = getattr(config, "get", None)
            value = get("core.logallrefupdates") if get else None
            mode = value.lower() if value is not None else True
            mode = mode if mode == "always" else mode in (True, "true", "yes", "on", "1")
        if mode == "always":
            return True
        if mode is True:
            if name == "HEAD" or name.startswith(("refs/heads/", "refs/remotes/", "refs/notes/")):
                return True
        return self.reflog_exists(name)

    def _check_df_conflict(self, name: str, deleting: set[str]) -> None:
        """Git refuses ``a/b`` next to ``a`` (and vice versa) in both backends, unless the
        one in the way is deleted by the same transaction."""
        parts = name.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if parent not in deleting and self.read(parent) is not None:
                raise self._df_error(name, parent)
        for other in self.iter_refs(name + "/"):
            if other.name not in deleting:
                raise self._df_error(name, other.name)

    @staticmethod
    def _df_error(name: str, existing: str) -> RefError:
        return RefRejection(f"'{existing}' exists; cannot create '{name}'", NAME_CONFLICT, name)

    def _resolve_for_log(self, name: str) -> bytes:
        """The id for a reflog entry; a missing or broken ref logs as the null id."""
        try:
            return self.resolve(name) or self.fmt.null_oid
        except RefError:
            return self.fmt.null_oid

    def _check_object(self, name: str, oid: bytes) -> None:
        """Git's check when an update is queued: ``oid`` exists, and a branch (or HEAD)
        gets a commit."""
        if self.object_type is None:
            return
        kind = self.object_type(oid)
        if kind is None:
            raise RefRejection(
                f"trying to write ref '{name}' with nonexistent object {oid.hex()}",
                INVALID_NEW_VALUE,
                name,
            )
        if kind != "commit" and (name == "HEAD" or name.startswith("refs/heads/")):
            raise RefRejection(
                f"trying to write non-commit object {oid.hex()} to branch '{name}'",
                INVALID_NEW_VALUE,
                name,
            )

    def plan(self, tx: RefTransaction) -> list[PlannedWrite]:
        """Check old values and work out every write and reflog entry of ``tx``.

        Raises ``RefError`` with Git's wording when a check fails.
        """
        null = self.fmt.null_oid
        writes: list[PlannedWrite] = []
        head = self.read("HEAD")
        head_target = head.target if head is not None else None
        touched = {u.name for u in tx.updates}
        # Git refuses a D/F conflict even with a ref the same transaction deletes
        deleting: set[str] = set()
        finals: dict[str, str] = {}
        tx._plan_rejected = []
        for u in tx.updates:
            try:
                chain = [u.name]
                try:
                    cur = self.read(u.name)
                    if not u.no_deref:
                        depth = 0
                        while cur is not None and cur.target is not None:
                            depth += 1
                            if cur.target in chain:
                                # Git splits the update at each symref and then finds two
                                # updates for one ref
                                raise RefError(
                                    f"multiple updates for '{cur.target}' (including "
                                    f"one via symref '{chain[-1]}') are not allowed"
                                )
                            if depth > SYMREF_MAX_DEPTH:
                                raise RefError(f"cannot lock ref '{u.name}': symref loop")
                            chain.append(cur.target)
                            cur = self.read(cur.target)
                except RefError as e:
                    if e.message.startswith(("cannot lock ref", "multiple updates")):
                        raise
                    # a broken ref stays one: Git's line does not name its file
                    kind = BrokenRefError if isinstance(e, BrokenRefError) else RefError
                    raise kind(f"cannot lock ref '{u.name}': {e.message}", path=e.path) from None
                final = chain[-1]
                tx._reached[u.name] = final
                if not u.verify:
                    first = finals.setdefault(final, u.name)
                    if first != u.name:
                        via = u.name if u.name != final else first
                        raise RefError(
                            f"multiple updates for '{final}' (including one via symref "
                            f"'{via}') are not allowed"
                        )
                cur_oid = cur.oid if cur is not None and cur.target is None else None
                if (
                    u.no_deref
                    and cur is not None
                    and cur.target is not None
                    and u.old is not None
                    and u.old != null
                ):
                    # Git checks the old value of a symref updated with no-deref against
                    # the id it resolves to
                    resolved = self._resolve_for_log(u.name)
                    cur_oid = resolved if resolved != null else None
                if (
                    head_target is not None
                    and final == head_target
                    and "HEAD" not in chain
                    and "HEAD" in touched
                    and not u.verify
                ):
                    raise RefError(
                        f"multiple updates for 'HEAD' (including one via its referent "
                        f"'{final}') are not allowed"
                    )
                if u.old_target is not None:
                    if cur is None:
                        raise RefRejection(
                            f"cannot lock ref '{u.name}': unable to resolve reference '{u.name}'",
                            NONEXISTENT_REF,
                            u.name,
                        )
                    if cur.target is None:
                        raise RefRejection(
                            f"cannot lock ref '{u.name}': expected symref with "
                            f"target '{u.old_target}': but is a regular ref",
                            EXPECTED_SYMREF,
                            u.name,
                        )
                    if cur.target != u.old_target:
                        raise RefRejection(
                            f"verifying symref target: '{u.name}': is at "
                            f"{cur.target} but expected {u.old_target}",
                            INCORRECT_OLD_VALUE,
                            u.name,
                        )
                if u.old is not None:
                    if u.old == null:
                        if cur is not None and (cur_oid is not None or u.no_deref):
                            what = (
                                "dangling symref"
                                if cur.target is not None and cur_oid is None
                                else "reference"
                            )
                            raise RefRejection(
                                f"cannot lock ref '{u.name}': {what} already exists",
                                CREATE_EXISTS,
                                final,
                            )
                    elif cur_oid is None and u.no_deref and cur is not None:
                        # a dangling symref updated in place
                        raise RefRejection(
                            f"cannot lock ref '{u.name}': reference is missing "
                            f"but expected {u.old.hex()}",
                            NONEXISTENT_REF,
                            final,
                        )
                    elif cur_oid is None:
                        raise RefRejection(
                            f"cannot lock ref '{u.name}': unable to resolve reference '{final}'",
                            NONEXISTENT_REF,
                            final,
                        )
                    elif cur_oid != u.old:
                        raise RefRejection(
                            f"cannot lock ref '{u.name}': is at {cur_oid.hex()} "
                            f"but expected {u.old.hex()}",
                            INCORRECT_OLD_VALUE,
                            final,
                        )
                if u.verify:
                    continue
                msg = normalize_reflog_message(u.message)
                if u.target is not None:
                    # without no-deref, ``final`` (the end of the symref chain) is rewritten
                    # and every ref of the chain logs the change, like Git
                    if cur is None:
                        self._check_df_conflict(final, deleting)
                    new_ref: Ref | None = Ref(final, target=u.target)
                    old_oid = self._resolve_for_log(u.name)
                    new_oid = self._resolve_for_log(u.target)
                    pw = PlannedWrite(final, new_ref, message=msg, old_ref=self.read(final))
                    for name in chain:
                        if new_oid != null and (u.create_reflog or self.should_log(name)):
                            pw.logs.append((name, old_oid, new_oid))
                    writes.append(pw)
                    continue
                if u.delete:
                    if cur is None:
                        self._check_df_conflict(final, deleting)
                    # deleting a missing ref without an old value succeeds silently, like Git
                    pw = PlannedWrite(final, None, message=msg, old_ref=cur)
                    # the symrefs it was reached through, and HEAD if it points here, log
                    # the deletion (old -> null), like Git
                    for name in chain[:-1]:
                        if self.should_log(name):
                            pw.logs.append((name, cur_oid or null, null))
                    if (
                        cur_oid is not None
                        and head_target == final
                        and "HEAD" not in chain
                        and "HEAD" not in touched
                        and self.should_log("HEAD")
                    ):
                        pw.logs.append(("HEAD", cur_oid, null))
                    writes.append(pw)
                    continue
                assert u.new is not None
                if cur is None:
                    self._check_df_conflict(final, deleting)
                peeled = self.peeler(u.new) if self.peeler is not None else None
                pw = PlannedWrite(
                    final, Ref(final, oid=u.new, peeled=peeled), message=msg, old_ref=cur
                )
                old_oid = cur_oid or null
                for name in chain:
                    if u.skip_log:
                        break
                    if (u.create_reflog and name == final) or self.should_log(name):
                        pw.logs.append((name, old_oid, u.new))
                if (
                    not u.skip_log
                    and head_target == final
                    and "HEAD" not in chain
                    and "HEAD" not in touched
                    and self.should_log("HEAD")
                ):
                    pw.logs.append(("HEAD", old_oid, u.new))
                writes.append(pw)
            except RefRejection as e:
                tx._reject(u, e, queued=False)
        return writes
