"""core.fsync / core.fsyncMethod / core.fsyncObjectFiles: parsing like Git and what is synced.

Every writer is run with ``os.fsync`` (and the write-out-only sync) replaced by a
recorder, so each test asserts exactly which files were flushed, and when (before
the rename or link that gives them their final name).
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gitodb import durable
from gitodb.durable import (
    ALL,
    DEFAULT_COMPONENTS,
    Component,
    FsyncPolicy,
    Method,
    parse_components,
)
from gitodb.errors import ConfigError, FsyncError
from gitodb.objects.format import SHA1
from gitodb.repo import Repository
from gitodb.repo.config import Config
from gitodb.repo.write import ObjectWriter
from helpers import git, git_env, make_pack

C = Component


# -- parsing -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected", "warnings"),
    [
        ("", DEFAULT_COMPONENTS, []),
        ("none", C.NONE, []),
        ("all", ALL, []),
        ("loose-object", DEFAULT_COMPONENTS | C.LOOSE_OBJECT, []),
        ("objects", DEFAULT_COMPONENTS | C.LOOSE_OBJECT, []),
        ("committed", DEFAULT_COMPONENTS | C.LOOSE_OBJECT | C.REFERENCE, []),
        ("added", DEFAULT_COMPONENTS | C.LOOSE_OBJECT | C.REFERENCE | C.INDEX, []),
        ("derived-metadata", DEFAULT_COMPONENTS, []),
        ("-pack-metadata", C.PACK | C.COMMIT_GRAPH, []),
        ("reference,-derived-metadata", C.PACK | C.REFERENCE, []),
        # additions win over removals, wherever they stand (Git: (current & ~neg) | pos)
        ("all,-loose-object", ALL, []),
        ("-reference,reference", DEFAULT_COMPONENTS | C.REFERENCE, []),
        # "none" counts only as the last item (Git compares the rest of the string)
        ("pack,none", C.PACK | C.PACK_METADATA, []),
        (
            "none,index",
            DEFAULT_COMPONENTS | C.INDEX,
            ["ignoring unknown core.fsync component 'none'"],
        ),
        # names match Git's table by prefix
        ("pack", DEFAULT_COMPONENTS, []),
        ("-pack", C.COMMIT_GRAPH, []),
        ("commit", DEFAULT_COMPONENTS | C.LOOSE_OBJECT | C.REFERENCE, []),
        ("ref, index", DEFAULT_COMPONENTS | C.REFERENCE | C.INDEX, []),
        ("bogus", DEFAULT_COMPONENTS, ["ignoring unknown core.fsync component 'bogus'"]),
        ("index ", DEFAULT_COMPONENTS, ["ignoring unknown core.fsync component 'index '"]),
        # a lone "-" warns and ends the list
        ("-,reference", DEFAULT_COMPONENTS, ["invalid value for variable core.fsync"]),
    ],
)
def test_parse_components_like_git(value: str, expected: Component, warnings: list[str]) -> None:
    got: list[str] = []
    assert parse_components(value, got) == expected
    assert got == warnings


def _policy(*pairs: str) -> FsyncPolicy:
    c = Config()
    c.apply_overrides(list(pairs))
    return FsyncPolicy.from_config(c)


def test_defaults_are_gits() -> None:
    p = _policy()
    assert p.components == C.PACK | C.PACK_METADATA | C.COMMIT_GRAPH
    assert (p.method, p.object_files, p.warnings) == (Method.FSYNC, None, ())
    assert not p.wants(C.LOOSE_OBJECT) and not p.wants(C.REFERENCE)


def test_config_values_and_errors() -> None:
    assert _policy("core.fsyncMethod=batch").method is Method.BATCH
    assert _policy("core.fsyncMethod=writeout-only").method is Method.WRITEOUT_ONLY
    p = _policy("core.fsyncMethod=Batch")
    assert p.method is Method.FSYNC
    assert p.warnings == ("ignoring unknown core.fsyncMethod value 'Batch'",)
    p = _policy("core.fsync=bogus", "core.fsync=reference")  # the last one counts
    assert p.components == DEFAULT_COMPONENTS | C.REFERENCE
    assert p.warnings == ("ignoring unknown core.fsync component 'bogus'",)
    p = _policy("core.fsyncObjectFiles=true")
    assert p.object_files is True
    assert p.warnings == ("core.fsyncObjectFiles is deprecated; use core.fsync instead",)
    with pytest.raises(ConfigError, match="missing value for 'core.fsync'"):
        _policy("core.fsync")
    with pytest.raises(ConfigError, match="missing value for 'core.fsyncmethod'"):
        _policy("core.fsyncMethod")
    with pytest.raises(
        ConfigError, match="bad boolean config value 'maybe' for 'core.fsyncobjectfiles'"
    ):
        _policy("core.fsyncObjectFiles=maybe")


def _gitodb(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gitodb", *args],
        cwd=cwd,
        capture_output=True,
        env=git_env(),
        check=False,
    )


@pytest.mark.parametrize(
    "config",
    [
        "core.fsync=bogus",
        "core.fsync=pack,bogus,-,reference",
        "core.fsync=none,index",
        "core.fsync=-",
        "core.fsyncMethod=bogus",
        "core.fsyncObjectFiles=true",
        "core.fsync=all",
        "core.fsync=",
        "core.fsyncObjectFiles=maybe",
        "core.fsync",
    ],
)
def test_warnings_and_errors_match_git(tmp_path: Path, config: str) -> None:
    """Same stderr lines (warnings, and the fatal line's gist) and status as the git on PATH."""
    git("init", "-q", tmp_path)
    (tmp_path / "f").write_bytes(b"x\n")
    theirs = subprocess.run(
        ["git", "-c", config, "hash-object", "-w", "f"],
        cwd=tmp_path,
        capture_output=True,
        env=git_env(),
        check=False,
    )
    if b"fsync" not in theirs.stderr and config != "core.fsync=all" and config != "core.fsync=":
        pytest.skip("the git on PATH predates core.fsync")
    ours = _gitodb("-c", config, "hash-object", "-w", "f", cwd=tmp_path)
    assert ours.returncode == theirs.returncode
    assert ours.stdout == theirs.stdout
    their_lines = theirs.stderr.decode().splitlines()
    our_lines = ours.stderr.decode().splitlines()
    assert [x for x in our_lines if x.startswith("warning:")] == [
        x for x in their_lines if x.startswith("warning:")
    ]
    if theirs.returncode:
        # Git prints "error: missing value ..." then a fatal line naming the config
        # source; gitodb prints the reason as its one fatal line.
        reason = next(x for x in their_lines if not x.startswith("warning:"))
        reason = reason.split(": ", 1)[1]
        assert our_lines[-1] == f"fatal: {reason}"


def test_git_test_fsync_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_TEST_FSYNC", "0")
    assert _policy().enabled is False
    monkeypatch.setenv("GIT_TEST_FSYNC", "true")
    assert _policy().enabled is True


# -- what gets synced ----------------------------------------------------------------------


class Recorder:
    """Stands in for os.fsync and the write-out sync; remembers (kind, path, final name seen)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, fail: int | None = None) -> None:
        self.calls: list[tuple[str, str]] = []
        self.fail = fail
        monkeypatch.setattr(os, "fsync", self._fsync)
        monkeypatch.setattr(durable, "writeout", self._writeout)

    @staticmethod
    def _path(fd: int) -> str:
        return os.readlink(f"/proc/self/fd/{fd}")

    def _fsync(self, fd: int) -> None:
        self.calls.append(("fsync", self._path(fd)))
        if self.fail is not None:
            raise OSError(self.fail, os.strerror(self.fail))

    def _writeout(self, fd: int) -> bool:
        self.calls.append(("writeout", self._path(fd)))
        return True

    def names(self, kind: str = "fsync") -> list[str]:
        """Base names of synced files with the random part cut (``tmp_obj_``...)."""
        out = []
        for k, path in self.calls:
            if k == kind:
                base = os.path.basename(path)
                m = re.match(r"tmp_[a-z]+_|bulk_fsync_", base)
                out.append(m.group(0) if m else base)
        return out


needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")


def _commit(repo: Repository) -> bytes:
    """A commit of the empty tree (branches may only point at commits)."""
    w = ObjectWriter(repo)
    tree = w.write("tree", b"")
    return w.write(
        "commit",
        b"tree %s\nauthor A <a@b> 0 +0000\ncommitter A <a@b> 0 +0000\n\nc\n" % tree.hex().encode(),
    )


def _repo(tmp_path: Path, *config: str) -> Repository:
    git("init", "-q", tmp_path / "r")
    return Repository(tmp_path / "r", config_overrides=list(config))


def _write_objects(repo: Repository) -> None:
    """Two loose objects (one from bytes, one streamed) and one big blob into a pack."""
    w = ObjectWriter(repo)
    w.write("blob", b"one\n")
    w.write_stream("blob", io.BytesIO(b"two\n"), 4)
    w.write_stream_to_pack("blob", io.BytesIO(b"big" * 1000), 3000)


@needs_proc
@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ((), ["tmp_pack_", "tmp_idx_", "tmp_rev_"]),
        (("core.fsync=none",), []),
        (
            ("core.fsync=loose-object",),
            ["tmp_obj_", "tmp_obj_", "tmp_pack_", "tmp_idx_", "tmp_rev_"],
        ),
        (("core.fsync=-pack-metadata",), ["tmp_pack_"]),
        (("core.fsync=-pack",), []),
        (("core.fsync=none", "core.fsyncObjectFiles=true"), ["tmp_obj_", "tmp_obj_"]),
        (("core.fsync=reference",), ["tmp_pack_", "tmp_idx_", "tmp_rev_"]),
        # batch outside a batch() block: a full fsync per loose object, as in Git
        (
            ("core.fsync=objects", "core.fsyncMethod=batch"),
            ["tmp_obj_", "tmp_obj_", "tmp_pack_", "tmp_idx_", "tmp_rev_"],
        ),
    ],
)
def test_object_writers_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: tuple[str, ...], expected: list[str]
) -> None:
    repo = _repo(tmp_path, *config)
    rec = Recorder(monkeypatch)
    _write_objects(repo)
    assert rec.names() == expected
    assert rec.names("writeout") == []


@needs_proc
def test_git_test_fsync_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_TEST_FSYNC", "0")
    repo = _repo(tmp_path, "core.fsync=all")
    rec = Recorder(monkeypatch)
    _write_objects(repo)
    assert rec.calls == []


@needs_proc
def test_writeout_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path, "core.fsync=objects", "core.fsyncMethod=writeout-only")
    rec = Recorder(monkeypatch)
    _write_objects(repo)
    assert rec.names("writeout") == ["tmp_obj_", "tmp_obj_", "tmp_pack_", "tmp_idx_", "tmp_rev_"]
    assert rec.names() == []


@needs_proc
def test_writeout_only_falls_back_to_fsync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path, "core.fsync=loose-object", "core.fsyncMethod=writeout-only")
    rec = Recorder(monkeypatch)
    monkeypatch.setattr(durable, "writeout", lambda fd: False)  # unsupported here
    ObjectWriter(repo).write("blob", b"x\n")
    assert rec.names() == ["tmp_obj_"]


@needs_proc
def test_batch_one_fsync_then_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path, "core.fsync=loose-object", "core.fsyncMethod=batch")
    rec = Recorder(monkeypatch)
    w = ObjectWriter(repo)
    objects = tmp_path / "r/.git/objects"
    with w.batch():
        a = w.write("blob", b"a\n")
        b = w.write_stream("blob", io.BytesIO(b"b\n"), 2)
        assert w.write("blob", b"a\n") == a  # pending in the batch: not written twice
        # nothing is visible under a final name before the batch's one fsync
        assert not (objects / a.hex()[:2] / a.hex()[2:]).exists()
        assert not (objects / b.hex()[:2] / b.hex()[2:]).exists()
        assert rec.names() == []
    assert rec.names("writeout") == ["tmp_obj_", "tmp_obj_"]
    assert rec.names() == ["bulk_fsync_"]
    assert git("cat-file", "-p", a.hex(), cwd=tmp_path / "r") == b"a\n"
    assert git("cat-file", "-p", b.hex(), cwd=tmp_path / "r") == b"b\n"
    leftovers = [p for p in objects.rglob("*") if p.name.startswith(("tmp_", "bulk_"))]
    assert leftovers == []


def test_batch_aborted_leaves_nothing(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "core.fsync=loose-object", "core.fsyncMethod=batch")
    w = ObjectWriter(repo)
    objects = tmp_path / "r/.git/objects"
    before = sorted(objects.rglob("*"))
    with pytest.raises(RuntimeError), w.batch():
        w.write("blob", b"a\n")
        raise RuntimeError("stop")
    assert sorted(p for p in objects.rglob("*") if p.is_file()) == sorted(
        p for p in before if p.is_file()
    )


def test_batch_without_batch_method_writes_at_once(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    w = ObjectWriter(repo)
    with w.batch():
        a = w.write("blob", b"a\n")
        assert (tmp_path / "r/.git/objects" / a.hex()[:2] / a.hex()[2:]).is_file()


@needs_proc
def test_index_pack_syncs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gitodb.pack.index_write import IndexPackOptions, index_pack_file, index_pack_stream

    pack = make_pack(tmp_path)
    dest = tmp_path / "dest"
    dest.mkdir()
    rec = Recorder(monkeypatch)
    opts = IndexPackOptions(rev_index=True)
    with open(pack, "rb") as f:
        index_pack_stream(f, SHA1, opts, pack_dir=str(dest), fsync=_policy())
    assert rec.names() == ["tmp_pack_", "tmp_idx_", "tmp_rev_"]
    # the pack was synced under its temporary name, before the rename
    assert all("tmp_" in path for _k, path in rec.calls)
    rec.calls.clear()
    copy = tmp_path / "copy.pack"
    copy.write_bytes(pack.read_bytes())
    index_pack_file(str(copy), SHA1, opts, fsync=_policy())
    assert rec.names() == ["tmp_idx_", "tmp_rev_"]  # the given pack is not rewritten
    rec.calls.clear()
    copy2 = tmp_path / "copy2.pack"
    copy2.write_bytes(pack.read_bytes())
    index_pack_file(str(copy2), SHA1, opts, fsync=_policy("core.fsync=-pack-metadata"))
    assert rec.calls == []


@needs_proc
@pytest.mark.parametrize("config", [(), ("core.fsync=reference",), ("core.fsync=committed",)])
def test_files_refs_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: tuple[str, ...]
) -> None:
    repo = _repo(tmp_path, *config)
    oid = _commit(repo)
    rec = Recorder(monkeypatch)
    repo.refs.update_ref("refs/heads/a", oid, message="m")
    repo.refs.set_symref("refs/heads/s", "refs/heads/a")
    repo.refs.pack_refs()
    repo.refs.update_ref("refs/heads/b", oid)
    repo.refs.delete_ref("refs/heads/a")
    synced = rec.names()
    if config:
        # id locks and packed-refs (written as packed-refs.new under packed-refs.lock,
        # as Git 2.55), before their renames; never a symref or a reflog
        assert synced == ["a.lock", "packed-refs.new", "b.lock", "packed-refs.new"]
        assert all(path.endswith((".lock", ".new")) for _k, path in rec.calls)
    else:
        assert synced == []


@needs_proc
@pytest.mark.parametrize("config", [(), ("core.fsync=reference",)])
def test_reftable_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: tuple[str, ...]
) -> None:
    from gitodb.reftable.records import RefRecord
    from gitodb.reftable.stack import Stack

    stack = Stack(tmp_path / "reftable", auto_compact=False, fsync=_policy(*config))
    rec = Recorder(monkeypatch)
    stack.modify(lambda s, ui: ([RefRecord(b"refs/heads/a", ui, 1, b"\1" * 20)], []))
    stack.modify(lambda s, ui: ([RefRecord(b"refs/heads/b", ui, 1, b"\2" * 20)], []))
    stack.compact()
    synced = [os.path.basename(p) for _k, p in rec.calls]
    if config:
        # each new table under its temporary name, then the new list in its lock
        assert [n.endswith(".tmp") for n in synced] == [True, False] * 3
        assert synced[1::2] == ["tables.list.lock"] * 3
    else:
        assert synced == []


# -- failures ------------------------------------------------------------------------------


@needs_proc
@pytest.mark.parametrize("what", ["loose", "pack", "ref"])
def test_fsync_failure_is_typed_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str
) -> None:
    import errno

    repo = _repo(tmp_path, "core.fsync=all")
    oid = _commit(repo) if what == "ref" else None
    gitdir = tmp_path / "r/.git"
    before = {p for p in gitdir.rglob("*") if p.is_file()}
    Recorder(monkeypatch, fail=errno.EIO)
    w = ObjectWriter(repo)
    with pytest.raises(
        FsyncError,
        match=r"fsync error on '.*tmp_.*|.*\.lock': "
        "Input/output error",
    ):
        if what == "loose":
            w.write("blob", b"new\n")
        elif what == "pack":
            w.write_stream_to_pack("blob", io.BytesIO(b"p" * 100), 100)
        else:
            assert oid is not None
            repo.refs.update_ref("refs/heads/x", oid)
    after = {p for p in gitdir.rglob("*") if p.is_file()}
    assert after == before


@needs_proc
def test_batch_fsync_failure_drops_the_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    repo = _repo(tmp_path, "core.fsync=loose-object", "core.fsyncMethod=batch")
    objects = tmp_path / "r/.git/objects"
    before = sorted(objects.rglob("*"))
    Recorder(monkeypatch, fail=errno.EIO)
    w = ObjectWriter(repo)
    with pytest.raises(FsyncError, match="bulk_fsync_"), w.batch():
        w.write("blob", b"a\n")
        w.write("blob", b"b\n")
    assert sorted(objects.rglob("*")) == before  # no temp file, no object, no fan-out dir


def test_component_bits_behave_as_an_int_flag() -> None:
    """``Component`` is a plain ``int`` subclass (no ``enum`` at start-up): its ``|``,
    ``&`` and ``~`` give what ``enum.IntFlag``'s give, and stay ``Component``."""
    import enum

    ref = enum.IntFlag(
        "Ref",
        [
            (n, 1 << i)
            for i, n in enumerate(
                ["LOOSE_OBJECT", "PACK", "PACK_METADATA", "COMMIT_GRAPH", "INDEX", "REFERENCE"]
            )
        ],
    )
    names = [m.name for m in ref]
    for a in names:
        x, rx = getattr(C, a), ref[a]
        assert int(~x) == int(~rx) and isinstance(~x, C)
        for b in names:
            y, ry = getattr(C, b), ref[b]
            assert int(x | y) == int(rx | ry) and isinstance(x | y, C)
            assert int(x & ~y) == int(rx & ~ry) and isinstance(x & ~y, C)
    assert int(C.NONE) == 0 and repr(C.PACK | C.INDEX) == "<Component.PACK|INDEX: 18>"


def test_method_lookup_as_an_enum() -> None:
    assert Method("batch") is Method.BATCH and Method.FSYNC.value == "fsync"
    with pytest.raises(ValueError):
        Method("Batch")
