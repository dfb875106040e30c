"""Loose object writes: Git reads them, they are atomic, and failures leave nothing behind."""

from __future__ import annotations

import errno
import io
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gitodb import compress
from gitodb.errors import ObjectWriteError
from gitodb.loose import write as loose_write
from gitodb.loose.write import loose_object_path, write_loose_object, write_loose_stream
from gitodb.objects import SHA1, SHA256, format_by_name
from gitodb.repo import Repository
from gitodb.repo.write import ObjectWriter, WriteSettings, compute_object_id, write_object
from helpers import git, snapshot


@pytest.fixture(params=["sha1", "sha256"])
def repo(request: pytest.FixtureRequest, tmp_path: Path) -> Repository:
    git("init", "-q", f"--object-format={request.param}", tmp_path / "r")
    return Repository(tmp_path / "r")


@pytest.mark.e2e
def test_git_reads_written_objects_and_fsck_is_clean(repo: Repository) -> None:
    fmt = repo.object_format
    blobs = [b"", b"hello\n", os.urandom(3000), b"z" * 200_000]
    oids = [write_object(repo, "blob", b) for b in blobs]
    for oid, data in zip(oids, blobs, strict=True):
        assert oid == compute_object_id(fmt, "blob", data)
        assert (
            git("hash-object", "--stdin", cwd=repo.git_dir, input=data).strip()
            == oid.hex().encode()
        )
        assert git("cat-file", "blob", oid.hex(), cwd=repo.git_dir) == data
        path = Path(loose_object_path(repo.git_dir / "objects", oid))
        assert stat.S_IMODE(path.stat().st_mode) == 0o444 & ~_umask()
    entry = b"100644 f\0" + oids[1]
    tree = write_object(repo, "tree", entry)
    commit = write_object(
        repo,
        "commit",
        b"tree %s\nauthor A <a@b> 1 +0000\n"
        b"committer A <a@b> 1 +0000\n\nmsg\n" % tree.hex().encode(),
    )
    assert git("cat-file", "-t", commit.hex(), cwd=repo.git_dir) == b"commit\n"
    assert (
        git("rev-parse", f"{commit.hex()}^{{tree}}", cwd=repo.git_dir).strip()
        == tree.hex().encode()
    )
    git("fsck", "--strict", "--full", cwd=repo.git_dir)
    leftovers = [p for p in (repo.git_dir / "objects").rglob("tmp_*")]
    assert leftovers == []


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_ids_match_git_in_both_formats(tmp_path: Path) -> None:
    for name in ("sha1", "sha256"):
        d = tmp_path / name
        git("init", "-q", f"--object-format={name}", d)
        for data in (b"", b"abc", os.urandom(5000)):
            expected = git("hash-object", "--stdin", cwd=d, input=data).strip().decode()
            assert compute_object_id(format_by_name(name), "blob", data).hex() == expected
            assert (
                compute_object_id(
                    format_by_name(name), "blob", stream=io.BytesIO(data), size=len(data)
                ).hex()
                == expected
            )


@pytest.mark.parametrize(
    "settings, level",
    [
        ([], 1),  # Git's default: best speed
        (["core.compression=9"], 9),
        (["core.compression=9", "core.looseCompression=3"], 3),
        (["core.looseCompression=-1"], -1),
        (["core.compression=0"], 0),
    ],
)
def test_loose_compression_follows_git_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: list[str], level: int
) -> None:
    git("init", "-q", tmp_path)
    repo = Repository(tmp_path, config_overrides=settings)
    levels: list[int] = []
    real = compress.Deflater

    def recording(lvl: int) -> object:
        levels.append(lvl)
        return real(lvl)

    monkeypatch.setattr(compress, "Deflater", recording)
    data = b"some compressible text " * 50
    oid = write_object(repo, "blob", data)
    assert levels == [level]
    assert git("cat-file", "blob", oid.hex(), cwd=tmp_path) == data
    if level == 0:  # stored blocks: the content is there verbatim
        assert data in Path(loose_object_path(repo.git_dir / "objects", oid)).read_bytes()


def test_existing_object_is_not_rewritten(repo: Repository, tmp_path: Path) -> None:
    oid = write_object(repo, "blob", b"same")
    path = Path(loose_object_path(repo.git_dir / "objects", oid))
    os.utime(path, (1_000_000, 1_000_000))
    inode = path.stat().st_ino
    assert write_object(repo, "blob", b"same") == oid
    assert path.stat().st_ino == inode
    assert path.stat().st_mtime > 1_000_000  # freshened, like Git
    assert (
        write_loose_stream(
            repo.git_dir / "objects", repo.object_format, "blob", io.BytesIO(b"same"), 4
        )
        == oid
    )
    assert path.stat().st_ino == inode


def test_object_packed_already_is_not_written_loose(tmp_path: Path) -> None:
    git("init", "-q", tmp_path)
    oid = git("hash-object", "-w", "--stdin", cwd=tmp_path, input=b"packed").strip().decode()
    git("pack-objects", "-q", ".git/objects/pack/pack", cwd=tmp_path, input=oid.encode() + b"\n")
    git("prune-packed", cwd=tmp_path)
    assert not (tmp_path / ".git" / "objects" / oid[:2]).exists()
    repo = Repository(tmp_path)
    assert write_object(repo, "blob", b"packed").hex() == oid
    assert not (tmp_path / ".git" / "objects" / oid[:2]).exists()


class DiskFull(Exception):
    pass


def _fail_after(monkeypatch: pytest.MonkeyPatch, calls: int, exc: BaseException) -> None:
    """Make ``os.write`` inside the loose writer fail on its ``calls``-th call."""
    real_write = os.write
    count = [0]

    def write(fd: int, data: object) -> int:
        count[0] += 1
        if count[0] >= calls:
            raise exc
        return real_write(fd, data)  # type: ignore[arg-type]

    monkeypatch.setattr(loose_write.os, "write", write)


@pytest.mark.parametrize(
    "exc",
    [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt(), DiskFull("injected")],
)
@pytest.mark.parametrize("streamed", [False, True])
def test_failed_write_leaves_repository_as_it_was(
    repo: Repository, monkeypatch: pytest.MonkeyPatch, exc: BaseException, streamed: bool
) -> None:
    before = snapshot(repo.git_dir)
    data = os.urandom(3 * loose_write.CHUNK_SIZE)  # incompressible: several writes
    _fail_after(monkeypatch, 2, exc)
    expected = ObjectWriteError if isinstance(exc, OSError) else type(exc)
    with pytest.raises(expected):
        if streamed:
            ObjectWriter(repo).write_stream("blob", io.BytesIO(data), len(data))
        else:
            write_object(repo, "blob", data)
    assert snapshot(repo.git_dir) == before


def test_failure_inside_the_compressor_leaves_nothing(
    repo: Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(repo.git_dir)

    class Broken:
        def __init__(self, level: int) -> None:
            self.n = 0

        def compress(self, data: object) -> bytes:
            self.n += 1
            if self.n > 1:
                raise DiskFull("compressor died")
            return b"x"

        def flush(self) -> bytes:
            return b""

    monkeypatch.setattr(compress, "Deflater", Broken)
    with pytest.raises(DiskFull):
        write_object(repo, "blob", b"data")
    assert snapshot(repo.git_dir) == before


def test_short_stream_is_an_error_and_leaves_nothing(repo: Repository) -> None:
    before = snapshot(repo.git_dir)
    with pytest.raises(ObjectWriteError, match="failed to read 10 bytes"):
        ObjectWriter(repo).write_stream("blob", io.BytesIO(b"short"), 10)
    assert snapshot(repo.git_dir) == before


def test_link_race_with_another_writer_both_succeed(
    repo: Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process puts the same object in place between our write and our link."""
    data = b"raced object\n"
    objects = repo.git_dir / "objects"
    real_link = os.link
    raced = []

    def link(src: str, dst: str) -> None:
        if not raced:
            raced.append(dst)
            monkeypatch.setattr(loose_write.os, "link", real_link)
            write_loose_object(objects, repo.object_format, "blob", data)  # the other writer
        real_link(src, dst)

    monkeypatch.setattr(loose_write.os, "link", link)
    oid = write_loose_object(objects, repo.object_format, "blob", data)
    assert raced
    assert git("cat-file", "blob", oid.hex(), cwd=repo.git_dir) == data
    assert [p.name for p in Path(raced[0]).parent.iterdir()] == [oid.hex()[2:]]


def test_no_hard_links_falls_back_to_rename(
    repo: Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    def link(src: str, dst: str) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(loose_write.os, "link", link)
    oid = write_object(repo, "blob", b"renamed")
    assert git("cat-file", "blob", oid.hex(), cwd=repo.git_dir) == b"renamed"
    assert not list((repo.git_dir / "objects").rglob("tmp_*"))


CONCURRENT = """
import sys
from gitodb.repo import Repository
from gitodb.repo.write import write_object
repo = Repository(sys.argv[1])
data = bytes(range(256)) * 40000
for _ in range(int(sys.argv[2])):
    write_object(repo, "blob", data)
    write_object(repo, "blob", data + sys.argv[3].encode())
print("ok")
"""


@pytest.mark.e2e
def test_two_processes_writing_the_same_objects(tmp_path: Path) -> None:
    git("init", "-q", tmp_path / "r")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT, str(tmp_path / "r"), "20", "same"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    results = [p.communicate() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    git("fsck", "--strict", "--full", cwd=tmp_path / "r")
    objects = [p for p in (tmp_path / "r" / ".git" / "objects").rglob("*") if p.is_file()]
    assert len(objects) == 2 and not [p for p in objects if p.name.startswith("tmp_")]


def test_literal_types_and_settings_validation(tmp_path: Path) -> None:
    git("init", "-q", tmp_path)
    repo = Repository(tmp_path)
    oid = ObjectWriter(repo).write("frob", b"xyz")
    assert (
        oid.hex()
        == git("hash-object", "--literally", "-t", "frob", "--stdin", input=b"xyz").strip().decode()
    )
    assert WriteSettings.from_config(repo.config).loose_compression == 1
    assert SHA1.rawsz == 20 and SHA256.rawsz == 32


def test_stream_from_a_file_object_reads_from_its_position(
    repo: Repository, tmp_path: Path
) -> None:
    """A regular file is read with pread from where the stream stands, and left after it."""
    src = tmp_path / "src.bin"
    payload = os.urandom(8 * loose_write.CHUNK_SIZE + 12345)  # spans several reads
    src.write_bytes(b"skip" + payload + b"tail")
    with open(src, "rb") as f:
        assert f.read(4) == b"skip"
        oid = ObjectWriter(repo).write_stream("blob", f, len(payload))
        assert f.read() == b"tail"
    assert oid == compute_object_id(repo.object_format, "blob", payload)
    assert git("cat-file", "blob", oid.hex(), cwd=repo.git_dir) == payload
    with open(src, "rb") as f, pytest.raises(ObjectWriteError, match="failed to read"):
        ObjectWriter(repo).write_stream("blob", f, src.stat().st_size + 1)


def test_staging_places_without_replacing_and_aborts_cleanly(tmp_path: Path) -> None:
    from gitodb.loose.write import Staging

    (tmp_path / "existing").write_bytes(b"old")
    staging = Staging()
    first = staging.write(str(tmp_path), "tmp_x_", b"new")
    second = staging.write(str(tmp_path), "tmp_y_", b"kept name")
    assert staging.place(first, str(tmp_path / "existing")) is False  # same name: kept
    assert (tmp_path / "existing").read_bytes() == b"old"
    assert staging.place(second, str(tmp_path / "placed")) is True
    fd, _third = staging.temp(str(tmp_path), "tmp_z_")
    os.close(fd)
    staging.abort()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing"]
