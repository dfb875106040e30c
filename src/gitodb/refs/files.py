"""The files ref backend: loose refs under ``refs/``, ``packed-refs``, reflogs in ``logs/``.

Writes follow Git 2.39: every changed ref is locked with ``<ref>.lock`` (exclusive
create), new content is written to the lock and renamed into place; deletions also
rewrite ``packed-refs`` through ``packed-refs.lock``; reflog lines are appended as
``old new Name <email> time tz<TAB>message``.

Durability is Git's: with ``core.fsync`` including ``reference`` (not by default),
a lock holding an object id and a new ``packed-refs`` are synced before their
rename; symref locks and reflog appends never are (Git does not sync them).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

from gitodb.durable import DEFAULT_POLICY, Component, FsyncPolicy
from gitodb.errors import LockError, RefError
from gitodb.objects.format import ObjectFormat
from gitodb.refs.base import (
    PlannedWrite,
    Ref,
    ReflogEntry,
    RefStore,
    RefTransaction,
    committer_identity,
    format_tz,
    is_root_ref,
)

PACKED_HEADER = b"# pack-refs with: peeled fully-peeled sorted \n"


def _parse_ref_value(name: str, text: bytes, fmt: ObjectFormat, path: Path) -> Ref:
    if text.startswith(b"ref:"):
        return Ref(name, target=text[4:].strip().decode("utf-8", "surrogateescape"))
    hex_id = text.strip()
    if len(hex_id) < fmt.hexsz:
        raise RefError(f"cannot lock ref '{name}': invalid ref content", path=path)
    try:
        return Ref(name, oid=bytes.fromhex(hex_id[: fmt.hexsz].decode("ascii")))
    except ValueError:
        raise RefError(f"invalid ref content in '{name}'", path=path) from None


def parse_reflog_line(line: bytes, fmt: ObjectFormat) -> ReflogEntry | None:
    """One ``logs/`` line (without newline), or None if it is malformed (Git skips it)."""
    h = fmt.hexsz
    if len(line) < 2 * h + 2 or line[h:h + 1] != b" " or line[2 * h + 1:2 * h + 2] != b" ":
        return None
    try:
        old = bytes.fromhex(line[:h].decode("ascii"))
        new = bytes.fromhex(line[h + 1:2 * h + 1].decode("ascii"))
    except ValueError:
        return None
    rest = line[2 * h + 2:]
    ident, tab, msg = rest.partition(b"\t")
    lt = ident.find(b"<")
    gt = ident.find(b">", lt)
    if lt < 0 or gt < 0:
        return None
    name = ident[:lt].rstrip(b" ").decode("utf-8", "surrogateescape")
    email = ident[lt + 1:gt].decode("utf-8", "surrogateescape")
    parts = ident[gt + 1:].split()
    try:
        ts = int(parts[0])
        tz = int(parts[1]) if len(parts) > 1 else 0
    except (ValueError, IndexError):
        return None
    return ReflogEntry(old, new, name, email, ts, tz, msg)


def format_reflog_line(e: ReflogEntry) -> bytes:
    """Inverse of ``parse_reflog_line``, newline included."""
    line = (f"{e.old.hex()} {e.new.hex()} {e.name} <{e.email}> {e.time} "
            f"{format_tz(e.tz_offset)}").encode("utf-8", "surrogateescape")
    if e.message:
        line += b"\t" + e.message
    return line + b"\n"


def _lock_file(path: Path) -> int:
    lock = Path(str(path) + ".lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        raise LockError(f"Unable to create '{lock}': File exists.", path=lock) from None
    except OSError as e:
        raise RefError(f"unable to create lock file '{lock}': {e.strerror}", path=lock) from None


def _unlink(path: Path | str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class FilesRefStore(RefStore):
    """Loose refs override ``packed-refs``; names are paths below the git directory."""

    def __init__(self, git_dir: str | os.PathLike[str], fmt: ObjectFormat,
                 config: object | None = None) -> None:
        self.git_dir = Path(git_dir)
        self.fmt = fmt
        self.config = config
        self.fsync: FsyncPolicy = FsyncPolicy.from_config(config) \
            if config is not None else DEFAULT_POLICY

    def _lock_complete(self, fd: int, lock_path: str | Path) -> None:
        """A lock file's content is complete: sync it per ``core.fsync=reference``."""
        self.fsync.sync(Component.REFERENCE, fd, str(lock_path))

    # -- packed-refs -------------------------------------------------------
    def _packed(self) -> dict[str, Ref]:
        path = self.git_dir / "packed-refs"
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return {}
        refs: dict[str, Ref] = {}
        last: str | None = None
        offset = 0
        for line in data.splitlines(keepends=True):
            text = line.rstrip(b"\n")
            if not text or text.startswith(b"#"):
                pass
            elif text.startswith(b"^"):
                if last is None:
                    raise RefError("packed-refs: peeled line without a ref", path=path,
                                   offset=offset)
                prev = refs[last]
                try:
                    peeled = bytes.fromhex(text[1:].decode("ascii"))
                except ValueError:
                    raise RefError("unexpected line in packed-refs", path=path,
                                   offset=offset) from None
                refs[last] = Ref(prev.name, oid=prev.oid, peeled=peeled)
            else:
                hex_id, sp, name_b = text.partition(b" ")
                if not sp or len(hex_id) != self.fmt.hexsz:
                    raise RefError("unexpected line in packed-refs", path=path, offset=offset)
                last = name_b.decode("utf-8", "surrogateescape")
                try:
                    refs[last] = Ref(last, oid=bytes.fromhex(hex_id.decode("ascii")))
                except ValueError:
                    raise RefError("unexpected line in packed-refs", path=path,
                                   offset=offset) from None
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
    def _read_loose(self, name: str) -> Ref | None:
        path = self.git_dir / name
        try:
            data = path.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        return _parse_ref_value(name, data, self.fmt, path)

    def read(self, name: str) -> Ref | None:
        """Return ``name`` from its loose file, else from ``packed-refs``."""
        if ".." in name.split("/") or name.startswith("/") or not name:
            return None
        ref = self._read_loose(name)
        if ref is not None:
            return ref
        if name.startswith("refs/"):
            return self._packed().get(name)
        return None

    def iter_refs(self, prefix: str = "") -> Iterator[Ref]:
        """All refs under ``refs/`` starting with ``prefix``, loose overriding packed."""
        merged = {n: r for n, r in self._packed().items() if n.startswith(prefix)}
        root = self.git_dir / "refs"
        for dirpath, _dirs, files in os.walk(root):
            for fname in files:
                full = Path(dirpath, fname)
                name = full.relative_to(self.git_dir).as_posix()
                if not name.startswith(prefix) or fname.endswith(".lock"):
                    continue
                ref = self._read_loose(name)
                if ref is not None:
                    merged[name] = ref
        for name in sorted(merged, key=lambda n: n.encode("utf-8", "surrogateescape")):
            yield merged[name]

    def iter_root_refs(self) -> Iterator[Ref]:
        """HEAD and pseudo refs stored as files in the git directory."""
        names = sorted(n for n in os.listdir(self.git_dir)
                       if is_root_ref(n) and (self.git_dir / n).is_file())
        for n in names:
            ref = self._read_loose(n)
            if ref is not None:
                yield ref

    # -- transactions ------------------------------------------------------
    def _prepare(self, tx: RefTransaction) -> object:
        locks: dict[str, int] = {}
        try:
            plan = self.plan(tx)
            for w in plan:
                if w.name not in locks:
                    locks[w.name] = _lock_file(self.git_dir / w.name)
            if any(w.ref is None for w in plan):
                locks["packed-refs"] = _lock_file(self.git_dir / "packed-refs")
            # re-check under the locks: another writer may have won meanwhile
            plan = self.plan(tx)
        except BaseException:
            self._release(locks)
            raise
        return plan, locks

    def _release(self, locks: dict[str, int]) -> None:
        for name, fd in locks.items():
            if fd >= 0:
                os.close(fd)
            _unlink(str(self.git_dir / name) + ".lock")

    def _abort(self, tx: RefTransaction, prepared: object) -> None:
        _plan, locks = cast(tuple[list[PlannedWrite], dict[str, int]], prepared)
        self._release(locks)

    def _commit(self, tx: RefTransaction, prepared: object) -> None:
        plan_l, locks = cast(tuple[list[PlannedWrite], dict[str, int]], prepared)
        try:
            ident = committer_identity(self.config)
            deletes = {w.name for w in plan_l if w.ref is None}
            if deletes:
                packed = self._packed()
                if deletes & packed.keys():
                    for n in deletes:
                        packed.pop(n, None)
                    fd = locks["packed-refs"]
                    os.write(fd, self._packed_bytes(packed))
                    self._lock_complete(fd, str(self.git_dir / "packed-refs") + ".lock")
                    os.close(fd)
                    locks["packed-refs"] = -1
                    os.rename(str(self.git_dir / "packed-refs") + ".lock",
                              self.git_dir / "packed-refs")
            for w in plan_l:
                path = self.git_dir / w.name
                fd = locks[w.name]
                if w.ref is None:
                    _unlink(path)
                    _unlink(self.git_dir / "logs" / w.name)
                    self._prune_dirs(path.parent, self.git_dir / "refs")
                    self._prune_dirs((self.git_dir / "logs" / w.name).parent,
                                     self.git_dir / "logs" / "refs")
                    continue
                if w.ref.target is not None:
                    content = f"ref: {w.ref.target}\n".encode("utf-8", "surrogateescape")
                else:
                    assert w.ref.oid is not None
                    content = w.ref.oid.hex().encode() + b"\n"
                os.write(fd, content)
                if w.ref.target is None:   # Git syncs id locks only, not symrefs
                    self._lock_complete(fd, str(path) + ".lock")
                os.close(fd)
                locks[w.name] = -1
                os.chmod(str(path) + ".lock", 0o644)
                os.rename(str(path) + ".lock", path)
                for logname, old, new in w.logs:
                    self._append_log(logname, ReflogEntry(old, new, ident[0], ident[1],
                                                          ident[2], ident[3], w.message))
        finally:
            self._release(locks)

    @staticmethod
    def _prune_dirs(d: Path, stop: Path) -> None:
        while d != stop and stop in d.parents:
            try:
                d.rmdir()
            except OSError:
                return
            d = d.parent

    def _append_log(self, name: str, entry: ReflogEntry) -> None:
        path = self.git_dir / "logs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as f:
            f.write(format_reflog_line(entry))

    # -- reflogs -----------------------------------------------------------
    def reflog(self, name: str) -> list[ReflogEntry]:
        """Entries of ``logs/<name>``, oldest first; malformed lines are skipped like Git."""
        try:
            data = (self.git_dir / "logs" / name).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return []
        out = []
        for line in data.split(b"\n"):
            e = parse_reflog_line(line, self.fmt) if line else None
            if e is not None:
                out.append(e)
        return out

    def reflog_exists(self, name: str) -> bool:
        return (self.git_dir / "logs" / name).is_file()

    def reflog_names(self) -> list[str]:
        names = []
        logs = self.git_dir / "logs"
        for dirpath, _dirs, files in os.walk(logs):
            for fname in files:
                name = Path(dirpath, fname).relative_to(logs).as_posix()
                if not fname.endswith(".lock"):
                    names.append(name)
        return sorted(names, key=lambda n: n.encode("utf-8", "surrogateescape"))

    def rewrite_reflog(self, name: str, keep: Callable[[int, ReflogEntry], bool]) -> int:
        path = self.git_dir / "logs" / name
        if not path.is_file():
            return 0
        fd = _lock_file(path)
        try:
            entries = self.reflog(name)
            kept = [e for i, e in enumerate(entries) if keep(i, e)]
            os.write(fd, b"".join(format_reflog_line(e) for e in kept))
            os.close(fd)
            fd = -1
            os.rename(str(path) + ".lock", path)
        finally:
            if fd >= 0:
                os.close(fd)
            _unlink(str(path) + ".lock")
        return len(entries) - len(kept)

    # -- packing -----------------------------------------------------------
    def pack_refs(self, all_refs: bool = True, prune: bool = True) -> None:
        """Move loose refs (all, or only tags like Git without ``--all``) into packed-refs.

        Peeled values come from ``self.peeler`` (Git's ``fully-peeled`` header).
        """
        fd = _lock_file(self.git_dir / "packed-refs")
        packed_loose: list[Path] = []
        ok = False
        try:
            packed = self._packed()
            merged: dict[str, Ref] = {}
            for ref in self.iter_refs():
                if ref.target is not None:
                    continue
                loose = (self.git_dir / ref.name).is_file()
                if loose and not (all_refs or ref.name.startswith("refs/tags/")) \
                        and ref.name not in packed:
                    continue
                assert ref.oid is not None
                peeled = self.peeler(ref.oid) if self.peeler is not None else ref.peeled
                merged[ref.name] = Ref(ref.name, oid=ref.oid, peeled=peeled)
                if loose:
                    packed_loose.append(self.git_dir / ref.name)
            os.write(fd, self._packed_bytes(merged))
            self._lock_complete(fd, str(self.git_dir / "packed-refs") + ".lock")
            os.close(fd)
            fd = -1
            os.chmod(str(self.git_dir / "packed-refs") + ".lock", 0o644)
            os.rename(str(self.git_dir / "packed-refs") + ".lock", self.git_dir / "packed-refs")
            ok = True
        finally:
            if fd >= 0:
                os.close(fd)
            if not ok:
                _unlink(str(self.git_dir / "packed-refs") + ".lock")
        if prune:
            for p in packed_loose:
                self._prune_loose(p, merged)

    def _prune_loose(self, path: Path, packed: dict[str, Ref]) -> None:
        """Remove a packed loose ref, under its lock, unless it changed meanwhile."""
        name = path.relative_to(self.git_dir).as_posix()
        try:
            fd = _lock_file(path)
        except RefError:
            return  # someone is updating it: keep the loose file, like Git
        try:
            current = self._read_loose(name)
            if current is not None and current.oid == packed[name].oid:
                _unlink(path)
        finally:
            os.close(fd)
            _unlink(str(path) + ".lock")
        self._prune_dirs(path.parent, self.git_dir / "refs")
