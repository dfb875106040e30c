"""gitodb.fileio: positional reads and writes, and their fallback where os lacks them.

Windows has no ``os.pread``/``preadv``/``readv``/``pwrite``; each test runs with the
functions present and with them taken away, and the results must be the same.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitodb import fileio
from helpers import git

POSIX_ONLY = ("pread", "preadv", "readv", "pwrite")


@pytest.fixture(params=["native", "fallback"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "fallback":
        for name in POSIX_ONLY:
            monkeypatch.delattr(os, name, raising=False)
        assert not any(hasattr(os, name) for name in POSIX_ONLY)
    return str(request.param)


def _fd(tmp_path: Path, data: bytes) -> int:
    path = tmp_path / "f"
    path.write_bytes(data)
    return os.open(path, os.O_RDWR)


def test_pread_reads_at_an_offset_and_keeps_the_position(tmp_path: Path, mode: str) -> None:
    fd = _fd(tmp_path, b"0123456789")
    try:
        os.lseek(fd, 3, os.SEEK_SET)
        assert fileio.pread(fd, 4, 5) == b"5678"
        assert fileio.pread(fd, 4, 8) == b"89"  # short at the end
        assert fileio.pread(fd, 4, 20) == b""
        assert os.lseek(fd, 0, os.SEEK_CUR) == 3
        buf = bytearray(6)
        assert fileio.preadinto(fd, memoryview(buf), 2) == 6
        assert bytes(buf) == b"234567"
        assert fileio.preadinto(fd, memoryview(buf)[:4], 8) == 2
        assert bytes(buf) == b"894567"
        assert os.lseek(fd, 0, os.SEEK_CUR) == 3
        assert fileio.readinto(fd, memoryview(buf)) == 6  # from the position, moving it
        assert bytes(buf) == b"345678"
        assert os.lseek(fd, 0, os.SEEK_CUR) == 9
    finally:
        os.close(fd)


def test_pwrite_writes_at_an_offset_and_keeps_the_position(tmp_path: Path, mode: str) -> None:
    fd = _fd(tmp_path, b"0123456789")
    try:
        os.lseek(fd, 1, os.SEEK_SET)
        assert fileio.pwrite(fd, b"ab", 4) == 2
        assert fileio.pwrite(fd, memoryview(b"XYZ"), 9) == 3  # past the end: grows
        assert os.lseek(fd, 0, os.SEEK_CUR) == 1
    finally:
        os.close(fd)
    assert (tmp_path / "f").read_bytes() == b"0123ab678XYZ"


def test_storing_a_file_and_fixing_a_pack_header_work_without_them(
    tmp_path: Path, mode: str
) -> None:
    """The callers: hash-object -w of a file (preadv), a pack whose count changed
    (pwrite, pread), each read back by git."""
    from gitodb.objects.format import SHA1
    from gitodb.pack.writer import PackWriter
    from gitodb.repo import Repository
    from gitodb.repo.write import write_object_stream

    git("init", "-q", tmp_path / "r")
    data = os.urandom(3000) * 5
    src = tmp_path / "big"
    src.write_bytes(data)
    with Repository(tmp_path / "r") as repo, open(src, "rb") as f:
        oid = write_object_stream(repo, "blob", f, len(data))
    assert git("cat-file", "blob", oid.hex(), cwd=tmp_path / "r") == data
    pack_dir = tmp_path / "r/.git/objects/pack"
    with PackWriter(pack_dir, SHA1, expected_count=5) as w:
        w.add_object("blob", b"one\n")
        w.add_object("blob", b"two\n")
        written = w.finish()
    assert written is not None
    out = git("verify-pack", "-v", written.idx_path)
    assert b"non delta: 2 objects" in out


def test_hash_object_of_files_works_without_them(
    tmp_path: Path, mode: str, capfd: pytest.CaptureFixture[str]
) -> None:
    from helpers import run_cli

    repo = tmp_path / "r"
    git("init", "-q", repo)
    small, big = repo / "small", repo / "big"
    small.write_bytes(b"some content\n" * 100)
    big.write_bytes(os.urandom(1 << 16) * 40)  # past the 1 MiB read chunk
    capfd.readouterr()
    assert run_cli(repo, "hash-object", "-w", "small", "big") == 0
    assert run_cli(repo, "-c", "core.bigFileThreshold=1k", "hash-object", "-w", "big") == 0
    out = capfd.readouterr().out
    expected = git("hash-object", "small", "big", "big", cwd=repo).decode()
    assert out == expected
    for line in out.split():
        git("cat-file", "-e", line, cwd=repo)
