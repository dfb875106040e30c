"""The files ref backend: loose refs under ``refs/``, ``packed-refs``, reflogs in ``logs/``.

Writes follow Git: a transaction first locks every ref it touches (``<ref>.lock``,
exclusive create, retried for ``core.filesRefLockTimeout``), checks the old values
under the locks and writes each new value into its lock; deletions of packed refs
hold ``packed-refs.lock`` and write the new ``packed-refs`` into ``packed-refs.new``
(an exclusive create, as Git's tempfile).  Only when all of that has succeeded are
reflog lines appended (``old new Name <email> time tz<TAB>message``) and the files
renamed into place, so a failure while preparing changes nothing.  A lock is only
ever removed by the writer that still owns it (``gitodb.lockfile``).

With ``core.preferSymlinkRefs`` a symref is written as a symlink to its target (with
Git 2.55's deprecation warning); a symlink naming a ref is read as a symref, and, as
in Git, listings skip a symlink that does not resolve (those below ``refs/``).

Durability is Git's: with ``core.fsync`` including ``reference`` (not by default),
a lock holding an object id and a new ``packed-refs`` are synced before their
rename; symref locks and reflog appends never are (Git does not sync them).
"""

from __future__ import annotations

import bisect
import errno
import os
import stat
import sys

from gitodb.errors import LockError, RefError, RefHookVetoError, RefWriteError
from gitodb.lazymod import lazy_module
from gitodb.objects.format import ObjectFormat
from gitodb.purepath import pure
from gitodb.refs.base import (
    NAME_CONFLICT,
    VETO,
    PlannedWrite,
    Ref,
    ReflogEntry,
    RefRejection,
    RefStore,
    RefTransaction,
    committer_identity,
    format_tz,
    is_root_ref,
    refname_format_ok,
    refname_is_safe,
    rewrite_old_ids,
    sorted_names,
)
from gitodb.refs.loose import ID_END, is_hex, read_ref_file
from gitodb.refs.packed import find, parse_plain, searchable, with_prefix
from gitodb.refs.table import RefTable, overlay, packed_table, table_of
from gitodb.refs.table import native as native_table
from gitodb.refs.worktree import CURRENT, OTHER, SHARED, locate
from gitodb.types import cached_property, cast

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from gitodb import durable, lockfile
    from gitodb.durable import FsyncPolicy
    from gitodb.lockfile import LockFile
else:
    # core.fsync is read when a ref is first written, and lock files are made only
    # for writing: listings need neither
    durable = lazy_module("gitodb.durable", globals(), "durable")
    lockfile = lazy_module("gitodb.lockfile", globals(), "lockfile")

PACKED_HEADER = b"# pack-refs with: peeled fully-peeled sorted \n"

#: Git 2.55's warning when it writes a symref as a symlink (once per ref store)
SYMLINK_REFS_WARNING = """\
warning: 'core.preferSymlinkRefs=true' is nominated for removal.
hint: The use of symbolic links for symbolic refs is deprecated
hint: and will be removed in Git 3.0. The configuration that
hint: tells Git to use them is thus going away. You can unset
hint: it with:
hint:
hint:\tgit config unset core.preferSymlinkRefs
hint:
hint: Git will then use the textual symref format instead.
"""


def parse_reflog_line(line: bytes, fmt: ObjectFormat) -> ReflogEntry | None:
    """One ``logs/`` line (without newline), or None if it is malformed (Git skips it)."""
    h = fmt.hexsz
    if len(line) < 2 * h + 2 or line[h : h + 1] != b" " or line[2 * h + 1 : 2 * h + 2] != b" ":
        return None
    try:
        old = bytes.fromhex(line[:h].decode("ascii"))
        new = bytes.fromhex(line[h + 1 : 2 * h + 1].decode("ascii"))
    except ValueError:
        return None
    rest = line[2 * h + 2 :]
    ident, tab, msg = rest.partition(b"\t")
    lt = ident.find(b"<")
    gt = ident.find(b">", lt)
    if lt < 0 or gt < 0:
        return None
    name = ident[:lt].rstrip(b" ").decode("utf-8", "surrogateescape")
    email = ident[lt + 1 : gt].decode("utf-8", "surrogateescape")
    parts = ident[gt + 1 :].split()
    try:
        ts = int(parts[0])
        tz = int(parts[1]) if len(parts) > 1 else 0
    except (ValueError, IndexError):
        return None
    return ReflogEntry(old, new, name, email, ts, tz, msg)


def format_reflog_line(e: ReflogEntry) -> bytes:
    """Inverse of ``parse_reflog_line``, newline included."""
    line = (
        f"{e.old.hex()} {e.new.hex()} {e.name} <{e.email}> {e.time} {format_tz(e.tz_offset)}"
    ).encode("utf-8", "surrogateescape")
    if e.message:
        line += b"\t" + e.message
    return line + b"\n"


def _stat_mode(path: str | Path) -> int:
    # Path.is_file() raises on ENAMETOOLONG and friends; a name that cannot be
    # stat'ed is not a ref in the way.
    try:
        return os.stat(path).st_mode
    except OSError:
        return 0


def _isfile(path: str | Path) -> bool:
    return stat.S_ISREG(_stat_mode(path))


def _isdir(path: str | Path) -> bool:
    return stat.S_ISDIR(_stat_mode(path))


def _ref_content(ref: Ref) -> bytes:
    if ref.target is not None:
        return f"ref: {ref.target}\n".encode("utf-8", "surrogateescape")
    assert ref.oid is not None
    return ref.oid.hex().encode() + b"\n"


def _shown_path(path: Path) -> str:
    """A path as Git prints it: relative to the current directory when below it."""
    rel = os.path.relpath(path)
    return path.as_posix() if rel.startswith("..") else rel


def _packed_hook_lines(plan: list[PlannedWrite], null: bytes) -> list[bytes]:
    """What the hook reads of the packed-refs sub-transaction: each deletion."""
    zero = null.hex()
    return [
        f"{zero} {zero} {w.name}\n".encode("utf-8", "surrogateescape")
        for w in plan
        if w.ref is None
    ]


class _Prepared:
    """A prepared files transaction: its plan, and every lock it holds (content written)."""

    def __init__(self, plan: list[PlannedWrite]) -> None:
        self.plan = plan
        self.locks: dict[str, LockFile] = {}
        self.packed_lock: LockFile | None = None
        #: ``packed-refs.new`` when the transaction rewrites packed-refs
        self.packed_new: LockFile | None = None

    def release(self) -> None:
        """Roll back every lock still held (never one already renamed into place)."""
        for lock in self.locks.values():
            lock.rollback()
        if self.packed_new is not None:
            self.packed_new.rollback()
        if self.packed_lock is not None:
            self.packed_lock.rollback()


class FilesRefStore(RefStore):
    """Loose refs override ``packed-refs``; names are paths below the git directory.

    In a linked worktree, ``worktree_dir`` is its private git directory: HEAD,
    pseudorefs and ``refs/{bisect,worktree,rewritten}/`` live there (see
    ``gitodb.refs.worktree``); everything else in ``git_dir`` (the common dir).
    """

    def __init__(
        self,
        git_dir: str | os.PathLike[str],
        fmt: ObjectFormat,
        config: object | None = None,
        *,
        worktree_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        # str paths, spelled as Path spells them: reading refs needs no pathlib (the
        # Path attributes below are made on first use, for the writing code)
        self.gitdir = pure(os.fspath(git_dir))
        self.worktreedir = pure(os.fspath(worktree_dir)) if worktree_dir is not None else None
        self.fmt = fmt
        self.config = config
        self._warned_symlinks = False
        self._packed_cache: tuple[tuple[int, int, int], dict[str, Ref], list[str]] | None = None
        #: packed-refs read once per version of the file: (its stat key, its bytes, its
        #: ref table -- or False/None as ``table.packed_table`` says -- and whether
        #: ``find`` may search it); shared by point lookups and listings
        self._packed_file: (
            tuple[tuple[int, int, int], bytes, RefTable | bool | None, bool] | None
        ) = None

    @cached_property
    def _shared_perm(self) -> int:
        """``core.sharedRepository`` as ``lockfile.parse_shared_repository`` reads it."""
        raw_all = getattr(self.config, "get_raw_all", None)
        shared = raw_all("core.sharedrepository") if raw_all is not None else []
        return lockfile.parse_shared_repository(
            shared[-1] if shared else None, present=bool(shared)
        )

    # Git: every ref, reflog, packed-refs and lock file gets calc_shared_perm(0666 &
    # ~umask); the directories made for them adjust_shared_perm (set-gid included).
    # Worked out at the first write: reading refs needs neither.
    @cached_property
    def file_mode(self) -> int:
        """The mode of the ref files written."""
        return lockfile.shared_file_mode(self._shared_perm)

    @cached_property
    def dir_mode(self) -> int | None:
        """The mode of the directories made for them (None: the umask's)."""
        return lockfile.shared_dir_mode(self._shared_perm)

    @cached_property
    def git_dir(self) -> Path:
        """The (common) git directory holding the shared refs."""
        from pathlib import Path

        return Path(self.gitdir)

    @cached_property
    def worktree_dir(self) -> Path | None:
        """A linked worktree's private git directory, or None."""
        from pathlib import Path

        return Path(self.worktreedir) if self.worktreedir is not None else None

    def _lockfile(self, path: Path, timeout_ms: int = 0, suffix: str = ".lock") -> LockFile:
        """``<path>.lock`` created (and later renamed) with the repository's file mode."""
        lock = lockfile.LockFile(
            path,
            timeout_ms=timeout_ms,
            mode=self.file_mode,
            final_mode=self.file_mode,
            suffix=suffix,
        )
        if self.dir_mode is not None:
            os.fchmod(lock.fd, self.file_mode)  # Git adjusts a new lock file's mode at once
        return lock

    def _packed_lock(self) -> LockFile:
        """Hold ``packed-refs.lock`` (``core.packedRefsTimeout``); it stays empty."""
        return self._lockfile(
            self._packed_path(), timeout_ms=self._timeout("core.packedrefstimeout", 1000)
        )

    def _packed_new(self, data: bytes) -> LockFile:
        """The new ``packed-refs`` written into ``packed-refs.new``, ready to rename.

        Git writes it there (an exclusive create, never retried) while it holds
        ``packed-refs.lock``, so a stale ``.new`` fails the write cleanly.
        """
        path = self._packed_path()
        try:
            new = self._lockfile(path, suffix=".new")
        except LockError:
            shown = os.path.abspath(f"{path}.new")
            raise RefWriteError(
                f"unable to create file {shown}: File exists", path=f"{path}.new"
            ) from None
        try:
            new.write(data)
            self._lock_complete(new)
        except BaseException:
            new.rollback()
            raise
        return new

    def _replace_packed(self, data: bytes) -> None:
        """Write and rename a new ``packed-refs`` (``packed-refs.lock`` held by the caller)."""
        new = self._packed_new(data)
        try:
            new.commit()
        finally:
            new.rollback()

    def _make_dirs(self, directory: Path) -> None:
        """Create ``directory`` and missing parents, each with the shared directory mode."""
        missing = []
        d = directory
        while not d.is_dir():
            missing.append(d)
            if d.parent == d:
                break
            d = d.parent
        for d in reversed(missing):
            try:
                d.mkdir()
            except FileExistsError:
                if not d.is_dir():
                    raise
                continue
            if self.dir_mode is not None:
                os.chmod(d, self.dir_mode)

    @cached_property
    def fsync(self) -> FsyncPolicy:
        """``core.fsync``'s policy for this store's writes (read at the first write)."""
        if self.config is None:
            return durable.DEFAULT_POLICY
        return durable.FsyncPolicy.from_config(self.config)

    def _lock_complete(self, lock: LockFile) -> None:
        """A lock file's content is complete: sync it per ``core.fsync=reference``."""
        self.fsync.sync(durable.Component.REFERENCE, lock.fd, str(lock.lock_path))

    # -- paths -------------------------------------------------------------
    def _base(self, name: str) -> tuple[Path, str]:
        """(directory, name inside it) where ref ``name`` and its reflog are stored."""
        where, rel = locate(name)
        if where == CURRENT and self.worktree_dir is not None:
            return self.worktree_dir, rel
        if where == OTHER:
            wt_id, _, rest = rel.partition("/")
            return self.git_dir / "worktrees" / wt_id, rest
        return self.git_dir, rel

    def _path(self, name: str) -> Path:
        base, rel = self._base(name)
        return base / rel

    def _log_path(self, name: str) -> Path:
        base, rel = self._base(name)
        return base / "logs" / rel

    def _timeout(self, key: str, default: int) -> int:
        get_int = getattr(self.config, "get_int", None)
        return int(get_int(key, default)) if get_int else default

    # -- packed-refs -------------------------------------------------------
    def _packed(self) -> dict[str, Ref]:
        return self._packed_state()[0]

    def _packed_state(self) -> tuple[dict[str, Ref], list[str]]:
        """packed-refs parsed (and its names sorted), re-read only when the file changed."""
        path = os.path.join(self.gitdir, "packed-refs")
        try:
            st = os.stat(path)
        except FileNotFoundError:
            self._packed_cache = None
            return {}, []
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        if self._packed_cache is not None and self._packed_cache[0] == key:
            return self._packed_cache[1], self._packed_cache[2]
        try:
            with open(path, "rb") as f:
                data = f.read()
        except IsADirectoryError:
            raise RefError(f"unable to read '{path}': Is a directory", path=path) from None
        refs = self._parse_packed(data, path)
        names = sorted(refs)
        self._packed_cache = (key, refs, names)
        return refs, names

    def _display(self, path: str | Path) -> str:
        """``path`` as Git names it in messages: from ``.git`` when it works from a
        work tree's top, from ``$GIT_DIR`` as given, else in full."""
        from pathlib import Path  # (a message's: not on the reading path)

        path = Path(path)
        env = os.environ.get("GIT_DIR")
        here = Path.cwd()
        rel = path.relative_to(self.git_dir).as_posix()
        if env and Path(env).absolute() == self.git_dir.absolute():
            return os.path.join(env, rel)
        if self.git_dir.name == ".git" and (
            here == self.git_dir.parent or self.git_dir.parent in here.parents
        ):
            return f".git/{rel}"
        if self.git_dir.absolute() == here:
            return rel
        return str(path)

    def _parse_packed(self, data: bytes, path: str | Path) -> dict[str, Ref]:
        """``packed-refs`` read by the rules of Git's packed backend, which dies on any
        line it does not expect rather than guess what it meant.

        The message names the file as Git does; the error's ``path`` and ``offset``
        say where exactly.
        """
        plain = parse_plain(data, self.fmt.hexsz)  # the common file, in one pass
        if plain is not None:
            return plain
        shown = self._display(path)

        def located(err: RefError, at: int) -> RefError:
            err.path, err.offset = str(path), at  # after rendering: Git's exact message
            return err

        def unexpected(line: bytes, at: int) -> RefError:
            text = line.rstrip(b"\n").decode("utf-8", "surrogateescape")
            return located(RefError(f"unexpected line in {shown}: {text}"), at)

        h = self.fmt.hexsz
        refs: dict[str, Ref] = {}
        last_name: str | None = None
        offset = 0
        for i, line in enumerate(data.splitlines(keepends=True)):
            if not line.endswith(b"\n"):
                text = line.decode("utf-8", "surrogateescape")
                raise located(RefError(f"unterminated line in {shown}: {text}"), offset)
            if i == 0 and line.startswith(b"#"):
                # Only a first line may be the header, and only this one.
                if not line.startswith(b"# pack-refs with: "):
                    raise unexpected(line, offset)
            elif line.startswith(b"^"):
                hex_id = line[1 : 1 + h]
                if last_name is None or len(line) != h + 2 or not is_hex(hex_id):
                    raise unexpected(line, offset)
                prev = refs[last_name]
                refs[last_name] = Ref(
                    prev.name, oid=prev.oid, peeled=bytes.fromhex(hex_id.decode("ascii"))
                )
                last_name = None  # one peeled line per ref
            else:
                hex_id = line[:h]
                if len(line) < h + 2 or not is_hex(hex_id) or line[h : h + 1] not in ID_END[2:]:
                    raise unexpected(line, offset)
                last_name = line[h + 1 : -1].decode("utf-8", "surrogateescape")
                if not refname_format_ok(last_name, allow_onelevel=True) and not refname_is_safe(
                    last_name
                ):
                    raise RefError(
                        f"packed refname is dangerous: {last_name}", path=path, offset=offset
                    )
                refs[last_name] = Ref(last_name, oid=bytes.fromhex(hex_id.decode("ascii")))
            offset += len(line)
        return refs

    def _packed_bytes(self, refs: dict[str, Ref]) -> bytes:
        out = [PACKED_HEADER]
        for name in sorted(refs, key=lambda n: n.encode("utf-8", "surrogateescape")):
            r = refs[name]
            assert r.oid is not None
            out.append(f"{r.oid.hex()} {name}\n".encode("utf-8", "surrogateescape"))
            if r.peeled is not None:
                out.append(f"^{r.peeled.hex()}\n".encode())
        return b"".join(out)

    # -- reading -----------------------------------------------------------
    def _file(self, name: str) -> str:
        """``str(self._path(name))`` without pathlib (the read path's)."""
        where, rel = locate(name)
        rel = pure(rel)  # Path's spelling: "a//b", "a/./b" and "a/" as "a/b", "a/b", "a"
        if where == CURRENT and self.worktreedir is not None:
            return os.path.join(self.worktreedir, rel)
        if where == OTHER:
            wt_id, _, rest = rel.partition("/")
            return pure(os.path.join(self.gitdir, "worktrees", wt_id, rest))
        return os.path.join(self.gitdir, rel)

    def _read_loose(self, name: str) -> Ref | None:
        return read_ref_file(self._file(name), name, self.fmt)

    def read(self, name: str) -> Ref | None:
        """Return ``name`` from its loose file, else from ``packed-refs``."""
        if ".." in name.split("/") or name.startswith("/") or not name:
            return None
        ref = self._read_loose(name)
        if ref is not None:
            return ref
        if name.startswith("refs/") and not (
            self.worktreedir is not None and locate(name)[0] == CURRENT
        ):
            return self._packed_lookup(name)
        return None

    def _packed_searchable(self) -> tuple[dict[str, Ref] | None, bytes | None]:
        """For a lookup in packed-refs: (the parsed refs, if parsed already; else the
        file's bytes if ``gitodb.refs.packed`` may search them where Git searches them,
        or None: then the caller parses the file)."""
        path = os.path.join(self.gitdir, "packed-refs")
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return {}, None
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        if self._packed_cache is not None and self._packed_cache[0] == key:
            return self._packed_cache[1], None
        _key, data, _table, search = self._packed_scan(path, key)
        return None, data if search else None

    def _packed_scan(
        self, path: str, key: tuple[int, int, int]
    ) -> tuple[tuple[int, int, int], bytes, RefTable | bool | None, bool]:
        """packed-refs (whose stat says ``key``) read and scanned once: its bytes, its
        ref table (``packed_table``), and whether ``find`` may bisect it.

        The native scan that builds the table also proves every line plain, so a file
        it accepts is ``searchable`` when its header declares ``sorted``, with no
        second pass over the file.
        """
        got = self._packed_file
        if got is not None and got[0] == key:
            return got
        try:
            with open(path, "rb") as f:
                data = f.read()
        except IsADirectoryError:
            raise RefError(f"unable to read '{path}': Is a directory", path=path) from None
        hexsz = self.fmt.hexsz
        if native_table:
            table = packed_table(data, hexsz)
            end = data.find(b"\n")
            search = (
                table is not None
                and data.startswith(b"# pack-refs with: ")
                and b"sorted" in data[:end].split(b" ")[3:]
            )
        else:
            table, search = None, searchable(data, hexsz)
        self._packed_file = got = (key, data, table, search)
        return got

    def ref_table(self, broken: list[str] | None = None) -> RefTable | None:
        """Every ref under ``refs/`` as a ``RefTable`` (loose refs over packed ones,
        symbolic refs resolved, dangling ones left out), or None where the listing must
        come from ``iter_refs``: a linked worktree, or a packed-refs file the plain
        native scan does not accept as sorted (the reference parse reports it).

        A loose ref that cannot be read raises its ``RefError``, as ``iter_refs`` does;
        with ``broken`` given, its name is appended there instead and it is left out,
        its packed value hidden too (Git's ``REF_ISBROKEN``: ``for-each-ref`` warns
        "ignoring broken ref" and goes on).
        """
        if self.worktreedir is not None or not native_table:
            return None
        path = os.path.join(self.gitdir, "packed-refs")
        try:
            st = os.stat(path)
        except FileNotFoundError:
            table: RefTable | bool | None = table_of([], self.fmt.rawsz)
        else:
            table = self._packed_scan(path, (st.st_ino, st.st_size, st.st_mtime_ns))[2]
        if not isinstance(table, RefTable):
            return None
        names: list[bytes] = []
        ids: list[bytes | None] = []
        loose = sorted(
            (n.encode("utf-8", "surrogateescape"), n) for n in self._walk_loose(self.gitdir, "")
        )
        for raw, name in loose:
            try:
                ref = self._read_loose(name)
            except RefError:
                if broken is None:
                    raise
                broken.append(name)
                ref = Ref(name, None)
            if ref is None:
                continue  # as iter_refs: the packed ref (if any) stays
            if ref.target is not None:
                try:
                    resolved = self.resolve_ref(name)
                except RefError:
                    if broken is None:
                        raise
                    resolved = None  # to a broken ref: dangling, left out quietly
                oid = resolved[1] if resolved is not None else None
            else:
                oid = ref.oid
            names.append(raw)
            ids.append(oid)
        return overlay(table, names, ids)

    def _packed_lookup(self, name: str) -> Ref | None:
        """``name`` in packed-refs, by a bisection of the file where Git searches it,
        without parsing every ref; else from the whole parse."""
        refs, data = self._packed_searchable()
        if data is not None:
            return find(data, self.fmt.hexsz, name)
        return (refs if refs is not None else self._packed()).get(name)

    def _packed_with_prefix(self, prefix: str) -> tuple[dict[str, Ref], list[str]]:
        """packed-refs' refs starting with ``prefix`` (with the sorted names), read from
        where a bisection finds the first of them when the file allows it."""
        if prefix and prefix != "refs/":
            refs, data = self._packed_searchable()
            if data is not None:
                found = with_prefix(data, self.fmt.hexsz, prefix)
                return found, list(found)
        return self._packed_state()

    def _walk_loose(self, base: str, prefix: str) -> Iterator[str]:
        """Names of loose ref files under ``base`` (a ``pure`` path) whose name starts
        with ``prefix``."""
        top = prefix.rpartition("/")[0] or "refs"
        if not top.startswith("refs"):
            top = "refs"
        start = len(base) + 1 if base != "/" else 1  # what the scan puts before the name
        # Git's loose_fill_ref_dir stats through a symlink: one that resolves to a file
        # is listed, a dangling one is not -- as a core.preferSymlinkRefs symref below
        # refs/ is (its target is relative to the git directory); read when named
        stack = [os.path.join(base, pure(top))]
        while stack:
            try:
                it = os.scandir(stack.pop())
            except OSError:
                continue
            with it:
                for entry in it:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.is_file() and not entry.name.endswith(".lock"):
                        name = entry.path[start:]
                        if name.startswith(prefix):
                            yield name

    def iter_refs(self, prefix: str = "") -> Iterator[Ref]:
        """All refs under ``refs/`` starting with ``prefix``, loose overriding packed."""
        linked = self.worktreedir is not None
        packed, names = self._packed_with_prefix(prefix)
        lo = bisect.bisect_left(names, prefix)
        merged: dict[str, Ref] = {}
        for n in names[lo:]:
            if not n.startswith(prefix):
                break
            if not (linked and locate(n)[0] == CURRENT):
                merged[n] = packed[n]
        for name in self._walk_loose(self.gitdir, prefix):
            if linked and locate(name)[0] == CURRENT:
                continue
            ref = self._read_loose(name)
            if ref is not None:
                merged[name] = ref
        if self.worktreedir is not None:
            for name in self._walk_loose(self.worktreedir, prefix):
                if locate(name)[0] == CURRENT:
                    ref = self._read_loose(name)
                    if ref is not None:
                        merged[name] = ref
        yield from (merged[name] for name in sorted_names(merged))

    def iter_root_refs(self) -> Iterator[Ref]:
        """HEAD and pseudo refs stored as files in the (worktree's) git directory."""
        base = self.worktreedir or self.gitdir
        # FETCH_HEAD and MERGE_HEAD are Git's special refs: files, but not in the store
        names = sorted(
            n
            for n in os.listdir(base)
            if is_root_ref(n)
            and n not in ("FETCH_HEAD", "MERGE_HEAD")
            and _isfile(os.path.join(base, n))
        )
        for n in names:
            ref = self._read_loose(n)
            if ref is not None:
                yield ref

    def _check_df_conflict(self, name: str, deleting: set[str]) -> None:
        """Refuse ``a/b`` next to an existing ``a`` and vice versa (loose or packed)."""
        parts = name.split("/")
        packed, names = self._packed_state()
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if parent in deleting:
                continue
            if _isfile(self._path(parent)) or parent in packed:
                raise self._df_error(name, parent)
        child = None
        d = self._path(name)
        if _isdir(d):
            from pathlib import Path

            base, rel = self._base(name)
            for dirpath, _dirs, files in os.walk(d):
                for fname in sorted(files):
                    other = Path(dirpath, fname).relative_to(base).as_posix()
                    if not fname.endswith(".lock") and other not in deleting:
                        child = other if child is None else min(child, other)
        lo = bisect.bisect_left(names, name + "/")
        for other in names[lo:]:
            if not other.startswith(name + "/"):
                break
            if other not in deleting:
                child = other if child is None else min(child, other)
                break
        if child is not None:
            raise self._df_error(name, child)

    @staticmethod
    def _df_error(name: str, existing: str) -> RefError:
        return RefRejection(
            f"cannot lock ref '{name}': '{existing}' exists; cannot create '{name}'",
            NAME_CONFLICT,
            name,
        )

    # -- transactions ------------------------------------------------------
    def _lock(self, name: str, timeout_ms: int, shown: str | None = None) -> LockFile:
        """Lock ref ``name``, making its directory (and clearing empty dirs in the way).

        ``shown`` is the name the update was given (a symref reaching ``name``), which
        Git's errors name first."""
        path = self._path(name)
        try:
            self._make_dirs(path.parent)
            if _isdir(path):
                # Git removes empty directories left where a ref is to be created
                for dirpath, _dirs, _files in os.walk(path, topdown=False):
                    os.rmdir(dirpath)
        except OSError as e:
            if e.errno == errno.ENOTEMPTY and _isdir(path):
                where = _shown_path(path)  # named in the message: no location suffix
                raise RefWriteError(
                    f"cannot lock ref '{shown or name}': there is a non-empty directory "
                    f"'{where}' blocking reference '{name}'",
                    path=where,
                ) from None
            raise RefWriteError(
                f"cannot lock ref '{name}': unable to create directory for '{path}': {e.strerror}",
                path=path,
            ) from None
        try:
            return self._lockfile(path, timeout_ms=timeout_ms)
        except RefError as e:
            raise type(e)(f"cannot lock ref '{name}': {e.message}", path=e.path) from None

    def _prepare(self, tx: RefTransaction) -> object:
        """Lock every ref, check old values under the locks and write each new value into
        its lock; packed-refs deletions are written into ``packed-refs.lock``.  Nothing is
        renamed yet, so a failure here (any OSError included) changes nothing."""
        prep = _Prepared(self.plan(tx))
        try:
            timeout = self._timeout("core.filesreflocktimeout", 100)
            names = {w.name for w in prep.plan}
            names.update(u.name for u in tx.updates if u.verify)
            given: dict[str, str] = {}
            for u in tx.updates:
                given.setdefault(tx._reached.get(u.name, u.name), u.name)
            for name in sorted(names):
                prep.locks[name] = self._lock(name, timeout, given.get(name))
                prep.locks[name].close_fd()  # reopened to write: no descriptor per ref
            deletes = {w.name for w in prep.plan if w.ref is None}
            if deletes:
                prep.packed_lock = self._packed_lock()
            # re-check under the locks: another writer may have won meanwhile
            prep.plan = self.plan(tx)
            for w in prep.plan:
                if w.name not in prep.locks:
                    raise LockError(
                        f"cannot lock ref '{w.name}': reference changed while it was being locked"
                    )
                if w.ref is not None:
                    prep.locks[w.name].write(_ref_content(w.ref))
                    if w.ref.target is None:  # Git syncs id locks only, not symrefs
                        self._lock_complete(prep.locks[w.name])
                    prep.locks[w.name].close_fd()
            if prep.packed_lock is not None:
                packed = dict(self._packed())
                # Git's packed-refs sub-transaction, which the hook sees too: run when
                # a deleted ref is packed, else dropped
                hooked = self.transaction_hook is not None
                hook_lines = _packed_hook_lines(prep.plan, self.fmt.null_oid) if hooked else []
                if deletes & packed.keys():
                    for state in ("preparing", "prepared"):
                        if tx.run_hook(state, hook_lines):
                            raise RefHookVetoError(VETO.format(state))
                    for n in deletes:
                        packed.pop(n, None)
                    prep.packed_new = self._packed_new(self._packed_bytes(packed))
                else:
                    tx.run_hook("aborted", hook_lines)
        except BaseException:
            self._release(prep)
            raise
        return prep

    def _abort(self, tx: RefTransaction, prepared: object) -> None:
        self._release(cast(_Prepared, prepared))

    def _release(self, prep: _Prepared) -> None:
        """Unlock, and remove directories made for refs that were not written (Git)."""
        prep.release()
        for name in prep.locks:
            path = self._path(name)
            if not _isfile(path):
                self._prune_dirs(path.parent, self._base(name)[0] / "refs")

    def _commit(self, tx: RefTransaction, prepared: object) -> None:
        """Write reflogs and rename the locks into place (Git's order: updates, then
        reflog deletions, then packed-refs, then loose deletions); always unlock."""
        prep = cast(_Prepared, prepared)
        try:
            ident = committer_identity(self.config)
            get_bool = getattr(self.config, "get_bool", None)
            symlinks = bool(get_bool and get_bool("core.prefersymlinkrefs", False))
            for w in prep.plan:
                if w.ref is None:
                    continue
                for logname, old, new in w.logs:
                    self._append_log(
                        logname,
                        ReflogEntry(old, new, ident[0], ident[1], ident[2], ident[3], w.message),
                    )
                old_ref = w.old_ref
                if (
                    w.ref.target is None
                    and old_ref is not None
                    and old_ref.target is None
                    and old_ref.oid == w.ref.oid
                ):
                    continue  # Git writes nothing when the value does not change
                if w.ref.target is not None and symlinks:
                    if not self._warned_symlinks:
                        sys.stderr.write(SYMLINK_REFS_WARNING)
                        self._warned_symlinks = True
                    if self._write_symlink(w.name, w.ref.target):
                        continue  # the lock is dropped by the release below
                prep.locks[w.name].commit()
            deletes = [w.name for w in prep.plan if w.ref is None]
            for w in prep.plan:
                if w.ref is None:
                    for logname, old, new in w.logs:
                        self._append_log(
                            logname,
                            ReflogEntry(
                                old, new, ident[0], ident[1], ident[2], ident[3], w.message
                            ),
                        )
            for name in deletes:
                self._remove(self._log_path(name))
            if prep.packed_new is not None:
                prep.packed_new.commit()
                if self.transaction_hook is not None:
                    tx.run_hook("committed", _packed_hook_lines(prep.plan, self.fmt.null_oid))
            for name in deletes:
                path = self._path(name)
                self._remove(path)
                self._prune_dirs(path.parent, self._base(name)[0] / "refs")
                log = self._log_path(name)
                self._prune_dirs(log.parent, self._base(name)[0] / "logs" / "refs")
        finally:
            self._release(prep)

    def _write_symlink(self, name: str, target: str) -> bool:
        """Replace ref ``name`` by a symlink to ``target`` (its lock held); False, with
        Git's message, where no symlink can be made (the caller writes the file)."""
        path = self._path(name)
        try:
            self._remove(path)
            os.symlink(target, path)
        except (OSError, RefWriteError):
            sys.stderr.write("no symlink - falling back to symbolic ref\n")
            return False
        return True

    @staticmethod
    def _remove(path: Path) -> None:
        try:
            os.unlink(path)
        except (FileNotFoundError, NotADirectoryError):
            pass
        except OSError as e:
            raise RefWriteError(f"unable to remove '{path}': {e.strerror}", path=path) from None

    @staticmethod
    def _prune_dirs(d: Path, stop: Path) -> None:
        # like Git, never below the top level under stop (refs/heads stays)
        while d != stop and stop in d.parents and d.parent != stop:
            try:
                d.rmdir()
            except OSError:
                return
            d = d.parent

    def _append_log(self, name: str, entry: ReflogEntry) -> None:
        path = self._log_path(name)
        try:
            self._make_dirs(path.parent)
            created = not os.path.lexists(path)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            try:
                if created and self.dir_mode is not None:
                    os.fchmod(fd, self.file_mode)  # Git's adjust_shared_perm on a new log
                lockfile.write_all(fd, format_reflog_line(entry))
            finally:
                os.close(fd)
        except OSError as e:
            raise RefWriteError(f"unable to append to '{path}': {e.strerror}", path=path) from None

    # -- reflogs -----------------------------------------------------------
    def reflog(self, name: str) -> list[ReflogEntry]:
        """Entries of ``logs/<name>``, oldest first; malformed lines are skipped like Git."""
        try:
            data = self._log_path(name).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return []
        out = []
        for line in data.split(b"\n"):
            e = parse_reflog_line(line, self.fmt) if line else None
            if e is not None:
                out.append(e)
        return out

    def reflog_exists(self, name: str) -> bool:
        return _isfile(self._log_path(name))

    def reflog_names(self) -> list[str]:
        from pathlib import Path

        names = set()
        bases = [self.git_dir] + ([self.worktree_dir] if self.worktree_dir else [])
        for base in bases:
            logs = base / "logs"
            for dirpath, _dirs, files in os.walk(logs):
                for fname in files:
                    name = Path(dirpath, fname).relative_to(logs).as_posix()
                    if fname.endswith(".lock"):
                        continue
                    current = locate(name)[0] == CURRENT
                    if self.worktree_dir is None or current == (base == self.worktree_dir):
                        names.add(name)
        return sorted(names, key=lambda n: n.encode("utf-8", "surrogateescape"))

    def other_worktree_reflog_names(self) -> list[str]:
        from pathlib import Path

        out: list[str] = []
        wts = self.git_dir / "worktrees"
        here = self.worktree_dir.resolve() if self.worktree_dir is not None else None
        places = [] if here is None else [(self.git_dir, "main-worktree/")]
        if _isdir(wts):
            for wt_id in sorted(os.listdir(wts)):
                if (wts / wt_id).resolve() != here:
                    places.append((wts / wt_id, f"worktrees/{wt_id}/"))
        for base, prefix in places:
            logs = base / "logs"
            for dirpath, _dirs, files in os.walk(logs):
                for fname in files:
                    name = Path(dirpath, fname).relative_to(logs).as_posix()
                    if not fname.endswith(".lock") and locate(name)[0] == CURRENT:
                        out.append(prefix + name)
        return sorted(out)

    def rewrite_reflog(
        self, name: str, keep: Callable[[int, ReflogEntry], bool], *, rewrite: bool = False
    ) -> int:
        path = self._log_path(name)
        if not _isfile(path):
            return 0
        lock = self._lockfile(path, timeout_ms=self._timeout("core.filesreflocktimeout", 100))
        try:
            entries = self.reflog(name)
            kept = [e for i, e in enumerate(entries) if keep(i, e)]
            if rewrite:
                kept = rewrite_old_ids(kept, self.fmt.null_oid)
            lock.write(b"".join(format_reflog_line(e) for e in kept))
            lock.commit()
        finally:
            lock.rollback()
        return len(entries) - len(kept)

    def drop_reflog(self, name: str) -> bool:
        path = self._log_path(name)
        if not _isfile(path):
            return False
        lock = self._lockfile(path, timeout_ms=self._timeout("core.filesreflocktimeout", 100))
        try:
            self._remove(path)
        finally:
            lock.rollback()
        self._prune_dirs(path.parent, self._base(name)[0] / "logs" / "refs")
        return True

    def append_reflog(self, name: str, entry: ReflogEntry) -> None:
        lock = self._lockfile(
            self._log_path(name), timeout_ms=self._timeout("core.filesreflocktimeout", 100)
        )
        try:
            self._append_log(name, entry)
        finally:
            lock.rollback()

    # -- migration ---------------------------------------------------------
    def import_refs(self, refs: list[Ref], logs: dict[str, list[ReflogEntry]]) -> None:
        """Fill an empty store at once, as Git's initial transaction does.

        Ids under ``refs/`` go into ``packed-refs`` (written even when empty, as
        Git does); symrefs and root refs (HEAD,
        pseudorefs) are loose files; each reflog is written whole.  Nothing is
        checked against the object database: the refs are copied, not created.
        """
        packed = {r.name: r for r in refs if r.target is None and r.name.startswith("refs/")}
        for ref in refs:
            if ref.name not in packed:
                self._write_new(self._path(ref.name), _ref_content(ref))
        # Git's initial transaction writes packed-refs (its header at least) even empty
        lock = self._packed_lock()
        try:
            self._replace_packed(self._packed_bytes(packed))
        finally:
            lock.rollback()
        for name, entries in logs.items():
            self._write_new(self._log_path(name), b"".join(format_reflog_line(e) for e in entries))

    def _write_new(self, path: Path, data: bytes) -> None:
        """Write a whole file through its lock (parent directories made as needed)."""
        try:
            self._make_dirs(path.parent)
        except OSError as e:
            raise RefWriteError(
                f"unable to create '{path.parent}': {e.strerror}", path=path
            ) from None
        lock = self._lockfile(path)
        try:
            lock.write(data)
            self._lock_complete(lock)
            lock.commit()
        finally:
            lock.rollback()

    # -- packing -----------------------------------------------------------
    def _packed_path(self) -> Path:
        """Where ``packed-refs`` is written: through a symlink to its target, like Git."""
        from pathlib import Path

        path = self.git_dir / "packed-refs"
        return Path(os.path.realpath(path)) if path.is_symlink() else path

    def _packable(self, ref: Ref, wanted: Callable[[str], bool]) -> bool:
        """Git's ``should_pack_ref``: shared, not a symref, resolvable, and selected."""
        if ref.target is not None or ref.oid is None or locate(ref.name)[0] != SHARED:
            return False
        if self.object_type is not None and self.object_type(ref.oid) is None:
            return False
        return wanted(ref.name)

    def pack_refs(
        self,
        all_refs: bool = True,
        prune: bool = True,
        *,
        includes: list[str] | None = None,
        excludes: list[str] | None = None,
        auto: bool = False,
    ) -> bool:
        """Move loose refs into packed-refs (Git's ``pack-refs``); True if it packed.

        Selected are refs matching ``includes`` (globs; ``*`` with ``all_refs``; by
        default ``refs/tags/*``) and no ``excludes``.  With ``auto`` nothing happens
        until there are at least ``max(16, 5 * log2(size of packed-refs / 100))``
        such loose refs.  Peeled values come from ``self.peeler``.
        """
        from gitodb.refs.wildmatch import wildmatch

        pats = list(includes or []) + (["*"] if all_refs else [])
        pats = pats or ["refs/tags/*"]
        excl = list(excludes or [])

        def wanted(name: str) -> bool:
            return not any(wildmatch(p, name) for p in excl) and any(
                wildmatch(p, name) for p in pats
            )

        loose_refs = [r for r in self.iter_refs() if _isfile(self._path(r.name))]
        if auto:
            try:
                size = os.stat(self.git_dir / "packed-refs").st_size
            except OSError:
                size = 0
            limit = max(16, max((size // 100).bit_length() - 1, 0) * 5)
            if sum(1 for r in loose_refs if self._packable(r, wanted)) < limit:
                return False
        lock = self._packed_lock()
        packed_loose: list[str] = []
        try:
            merged: dict[str, Ref] = dict(self._packed())
            for ref in loose_refs:
                if not self._packable(ref, wanted):
                    continue
                assert ref.oid is not None
                peeled = self.peeler(ref.oid) if self.peeler is not None else ref.peeled
                merged[ref.name] = Ref(ref.name, oid=ref.oid, peeled=peeled)
                packed_loose.append(ref.name)
            self._replace_packed(self._packed_bytes(merged))
        finally:
            lock.rollback()
        if prune:
            for name in packed_loose:
                self._prune_loose(name, merged)
        return True

    def _prune_loose(self, name: str, packed: dict[str, Ref]) -> None:
        """Remove a packed loose ref, under its lock, unless it changed meanwhile."""
        path = self._path(name)
        try:
            lock = lockfile.LockFile(path)
        except RefError:
            return  # someone is updating it: keep the loose file, like Git
        try:
            current = self._read_loose(name)
            if current is not None and current.oid == packed[name].oid:
                self._remove(path)
        finally:
            lock.rollback()
        self._prune_dirs(path.parent, self.git_dir / "refs")
