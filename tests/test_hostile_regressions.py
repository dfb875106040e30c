"""Regression tests for damaged and hostile input: one per reported failure.

Each test builds the damaged file itself (from ``tests/data`` or a repository made
with the ``git`` on PATH) and asserts Git's behaviour: a typed ``GitodbError`` from
the library, one ``fatal:``/``error:`` line and Git's exit status from the CLI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import DATA, git, git_env

from gitodb.errors import GitodbError, ReftableError
from gitodb.reftable.reader import TableReader

SMALL = DATA / "reftable-small" / "repo"
SMALL_TABLE = "0x000000000001-0x000000000063-d9db9e39.ref"
SMALL_LOGS = [b"HEAD", b"refs/heads/feature-a", b"refs/heads/feature-b", b"refs/heads/main",
              b"refs/heads/release/0.3", b"refs/heads/topic/renamed", b"refs/notes/commits",
              b"refs/stash"]


def gitodb(*args: str | os.PathLike[str], cwd: str | os.PathLike[str] | None = None,
           input: bytes | None = None, stdout: int | None = subprocess.PIPE,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run the CLI in a subprocess (a hang guard timeout only, not a speed bound)."""
    return subprocess.run([sys.executable, "-m", "gitodb", *map(os.fspath, args)], cwd=cwd,
                          input=input, stdout=stdout, stderr=subprocess.PIPE,
                          env=env or git_env(), timeout=300, check=False)


def one_line(stderr: bytes, prefix: bytes = b"fatal: ") -> str:
    """The single diagnostic line; fails on a traceback or several lines."""
    assert b"Traceback" not in stderr, stderr.decode(errors="replace")
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(prefix), stderr
    return lines[0].decode(errors="replace")


# -- 1: reftable loops make progress ----------------------------------------------

def _flipped_small_table(tmp_path: Path, offset: int, bit: int) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(SMALL, repo)
    table = repo / "reftable" / SMALL_TABLE
    data = bytearray(table.read_bytes())
    data[offset] ^= bit
    table.write_bytes(bytes(data))
    return repo


def test_log_refnames_with_damaged_log_index_makes_progress(tmp_path, monkeypatch):
    # Byte 5693 lies in the log index: the seek for the next ref name used to land
    # on an earlier block and re-seek the same key forever.
    repo = _flipped_small_table(tmp_path, 5693, 0x01)
    calls = 0
    leaf_for = TableReader._leaf_for

    def counted(self, btype, key):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        assert calls < 100, "log walk does not make progress"
        return leaf_for(self, btype, key)

    monkeypatch.setattr(TableReader, "_leaf_for", counted)
    r = TableReader(repo / "reftable" / SMALL_TABLE)
    # Git's reflog list reads the log blocks in order and lists every name.
    assert r.log_refnames() == SMALL_LOGS


def test_reflog_list_with_damaged_log_index_matches_git(tmp_path):
    repo = _flipped_small_table(tmp_path, 5693, 0x01)
    p = gitodb("--git-dir", repo, "reflog", "list")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == SMALL_LOGS


def test_every_flip_in_log_index_terminates(tmp_path, monkeypatch):
    data = (SMALL / "reftable" / SMALL_TABLE).read_bytes()
    base = TableReader(data=data)
    calls = 0
    leaf_for = TableReader._leaf_for

    def counted(self, btype, key):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        assert calls < 1000, "log walk does not make progress"
        return leaf_for(self, btype, key)

    monkeypatch.setattr(TableReader, "_leaf_for", counted)
    for off in range(base.log_index_pos, base.footer_pos):
        for bit in (0x01, 0x10, 0x80):
            d = bytearray(data)
            d[off] ^= bit
            calls = 0
            try:
                t = TableReader(data=bytes(d))
                t.log_refnames()
                list(t.iter_logs())
            except ReftableError as e:
                assert e.offset is not None and e.path


# -- 2: empty and header-truncated loose objects ------------------------------------

def _loose_repo(tmp_path: Path, content: bytes = b"hello\n") -> tuple[Path, str, Path]:
    repo = tmp_path / "lr"
    git("init", "-q", repo)
    oid = git("hash-object", "-w", "--stdin", cwd=repo, input=content).decode().strip()
    path = repo / ".git" / "objects" / oid[:2] / oid[2:]
    path.chmod(0o644)
    return repo, oid, path


@pytest.mark.parametrize("keep", [0, 1, 2, 5])
@pytest.mark.parametrize("mode", ["-p", "-t", "-s"])
def test_cut_loose_object_is_a_typed_error(tmp_path, keep, mode):
    repo, oid, path = _loose_repo(tmp_path)
    path.write_bytes(path.read_bytes()[:keep])
    # Git refuses it too (exit 128).
    assert subprocess.run(["git", "cat-file", mode, oid], cwd=repo, env=git_env(),
                          capture_output=True).returncode == 128
    p = gitodb("cat-file", mode, oid, cwd=repo)
    assert p.returncode == 128
    line = one_line(p.stderr)
    assert str(path.relative_to(repo)) in line or str(path) in line
    assert ("is empty" if keep == 0 else "truncated") in line


def test_cut_loose_object_library_errors(tmp_path):
    from gitodb.errors import LooseObjectError
    from gitodb.repo import Repository

    repo, oid, path = _loose_repo(tmp_path)
    raw = path.read_bytes()
    for keep in (0, 1, 2, 5):
        path.write_bytes(raw[:keep])
        odb = Repository(repo).odb
        for call in (odb.read, odb.read_header, odb.open_stream):
            with pytest.raises(LooseObjectError) as ei:
                call(bytes.fromhex(oid))
            assert ei.value.path == str(path) and ei.value.offset == keep
