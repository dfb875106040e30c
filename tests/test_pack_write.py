"""The streaming pack writer and the big-file (bulk-checkin) path, checked with Git's tools."""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitodb import compress
from gitodb.errors import ObjectWriteError
from gitodb.loose import write as loose_write
from gitodb.objects import SHA1, format_by_name
from gitodb.pack import writer as pack_writer
from gitodb.pack.writer import PackWriter
from gitodb.repo import Repository
from gitodb.repo.write import ObjectWriter, WriteSettings, write_object_stream
from helpers import git, git_env, snapshot


def check_pack_with_git(repo_dir: Path, pack_path: str) -> None:
    """verify-pack passes, and index-pack rebuilds byte-identical .idx and .rev files."""
    git("verify-pack", pack_path[:-5] + ".idx", cwd=repo_dir)
    out_idx = repo_dir / "reindexed.idx"
    git("index-pack", "--rev-index", "-o", out_idx, pack_path, cwd=repo_dir)
    assert out_idx.read_bytes() == Path(pack_path[:-5] + ".idx").read_bytes()
    rev = Path(pack_path[:-5] + ".rev")
    if rev.exists():
        assert (repo_dir / "reindexed.rev").read_bytes() == rev.read_bytes()
    out_idx.unlink()
    (repo_dir / "reindexed.rev").unlink()


@pytest.mark.e2e
@pytest.mark.parametrize("fmt_name", ["sha1", "sha256"])
def test_pack_with_several_objects_passes_git_checks(tmp_path: Path, fmt_name: str) -> None:
    git("init", "-q", f"--object-format={fmt_name}", tmp_path)
    fmt = format_by_name(fmt_name)
    blobs = [b"", b"one\n", os.urandom(70_000), b"x" * 300_000]
    with PackWriter(tmp_path / ".git/objects/pack", fmt, level=9) as pack:
        oids = [pack.add_object("blob", b) for b in blobs[:2]]
        oids += [pack.add_stream("blob", io.BytesIO(b), len(b)) for b in blobs[2:]]
        tree = b"100644 a\0" + oids[1]
        oids.append(pack.add_object("tree", tree))
        result = pack.finish()
    assert result is not None and set(result.oids) == set(oids)
    assert Path(result.pack_path).name == f"pack-{result.checksum.hex()}.pack"
    check_pack_with_git(tmp_path, result.pack_path)
    for oid, data in zip(oids[: len(blobs)], blobs, strict=True):
        assert git("cat-file", "blob", oid.hex(), cwd=tmp_path) == data
    assert git("cat-file", "-t", oids[-1].hex(), cwd=tmp_path) == b"tree\n"
    git("fsck", "--strict", "--full", cwd=tmp_path)
    for suffix in (".pack", ".idx", ".rev"):
        assert Path(result.pack_path[:-5] + suffix).stat().st_mode & 0o222 == 0


def test_duplicates_and_existing_objects_are_cut_off(tmp_path: Path) -> None:
    git("init", "-q", tmp_path)
    pack_dir = tmp_path / ".git/objects/pack"
    with PackWriter(pack_dir, SHA1, expected_count=3) as pack:
        a = pack.add_object("blob", b"a")
        assert pack.add_object("blob", b"a") == a
        b = pack.add_object("blob", b"b", exists=lambda oid: True)
        c = pack.add_object("blob", b"c")
        result = pack.finish()
    assert result is not None and result.oids == (a, c)
    check_pack_with_git(tmp_path, result.pack_path)
    assert git("cat-file", "-e", b.hex(), cwd=tmp_path, check=False) == b""
    assert git("cat-file", "blob", c.hex(), cwd=tmp_path) == b"c"


def test_empty_pack_is_not_kept(tmp_path: Path) -> None:
    pack_dir = tmp_path / "pack"
    with PackWriter(pack_dir, SHA1) as pack:
        pack.add_object("blob", b"x", exists=lambda oid: True)
        assert pack.finish() is None
    assert list(pack_dir.iterdir()) == []
    with PackWriter(pack_dir, SHA1):
        pass  # never finished: nothing kept either
    assert list(pack_dir.iterdir()) == []


@pytest.mark.parametrize("fail_on", ["pack", "idx", "place-idx"])
def test_failed_pack_write_leaves_repository_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_on: str
) -> None:
    git("init", "-q", tmp_path)
    repo = Repository(tmp_path, config_overrides=["core.bigFileThreshold=1k"])
    before = snapshot(tmp_path / ".git")
    data = os.urandom(3 * loose_write.CHUNK_SIZE)
    if fail_on == "pack":
        real_write = os.write
        calls = [0]

        def write(fd: int, buf: object) -> int:
            calls[0] += 1
            if calls[0] == 2:
                raise OSError(errno.ENOSPC, "No space left on device")
            return real_write(fd, buf)  # type: ignore[arg-type]

        monkeypatch.setattr(pack_writer.os, "write", write)
    elif fail_on == "idx":

        def bad_index(*args: object, **kwargs: object) -> bytes:
            raise MemoryError("injected")

        monkeypatch.setattr(pack_writer, "write_index_v2", bad_index)
    else:
        real_place = loose_write.link_into_place

        def place(src: str, dst: str) -> bool:
            if dst.endswith(".idx"):
                raise OSError(errno.EIO, "Input/output error")
            return real_place(src, dst)

        monkeypatch.setattr(loose_write, "link_into_place", place)  # Staging.place
    with pytest.raises((ObjectWriteError, MemoryError)):
        write_object_stream(repo, "blob", io.BytesIO(data), len(data))
    assert snapshot(tmp_path / ".git") == before


def test_big_blobs_go_to_a_pack_small_ones_stay_loose(tmp_path: Path) -> None:
    git("init", "-q", tmp_path)
    repo = Repository(tmp_path, config_overrides=["core.bigFileThreshold=100"])
    writer = ObjectWriter(repo)
    small = writer.write_stream("blob", io.BytesIO(b"s" * 100), 100)
    big = writer.write_stream("blob", io.BytesIO(b"b" * 101), 101)
    tree_data = b"100644 x\0" + big
    tree = writer.write_stream("tree", io.BytesIO(tree_data * 10), len(tree_data) * 10)
    objects = tmp_path / ".git/objects"
    assert (objects / small.hex()[:2] / small.hex()[2:]).exists()
    assert (objects / tree.hex()[:2] / tree.hex()[2:]).exists()  # only blobs are packed
    assert not (objects / big.hex()[:2]).exists()
    packs = list((objects / "pack").glob("*.pack"))
    assert len(packs) == 1
    check_pack_with_git(tmp_path, str(packs[0]))
    assert git("cat-file", "blob", big.hex(), cwd=tmp_path) == b"b" * 101
    # Writing it again: it exists, so no second pack.
    assert writer.write_stream("blob", io.BytesIO(b"b" * 101), 101) == big
    assert len(list((objects / "pack").glob("*.pack"))) == 1


def _pack_entry_flevel(pack: Path) -> int:
    data = pack.read_bytes()
    pos = 12
    while data[pos] & 0x80:
        pos += 1
    return data[pos + 2] >> 6


@pytest.mark.e2e
@pytest.mark.parametrize(
    "settings, level, rev",
    [
        ([], -1, True),  # pack.compression defaults to -1
        (["core.compression=1"], 1, True),
        (["core.compression=1", "pack.compression=9", "pack.writeReverseIndex=false"], 9, False),
    ],
)
def test_cli_big_file_with_w_writes_a_pack(
    tmp_path: Path, settings: list[str], level: int, rev: bool
) -> None:
    git("init", "-q", tmp_path)
    big = tmp_path / "big"
    big.write_bytes(b"abc" * 2000 + os.urandom(5000))
    conf = [a for s in ["core.bigFileThreshold=4k", *settings] for a in ("-c", s)]
    proc = subprocess.run(
        [sys.executable, "-m", "gitodb", *conf, "hash-object", "-w", "big"],
        cwd=tmp_path,
        capture_output=True,
        env=git_env(),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == git("hash-object", "big", cwd=tmp_path)
    packs = list((tmp_path / ".git/objects/pack").glob("*.pack"))
    assert len(packs) == 1
    assert (packs[0].with_suffix(".rev")).exists() == rev
    # The zlib header's level bits, as the same backend writes them at that level.
    d = compress.Deflater(level)
    assert _pack_entry_flevel(packs[0]) == (d.compress(b"x" * 100) + d.flush())[1] >> 6
    check_pack_with_git(tmp_path, str(packs[0]))
    assert git("cat-file", "blob", proc.stdout.strip().decode(), cwd=tmp_path) == big.read_bytes()
    git("fsck", "--strict", "--full", cwd=tmp_path)


# Runs gitodb as its own child and reports that child's peak RSS.  The extra level
# matters: Linux carries a process's peak RSS across exec, so a child started
# straight from pytest would report pytest's own size.
MEMORY_PROBE = """
import resource, subprocess, sys
proc = subprocess.run([sys.executable, "-m", "gitodb", *sys.argv[1:]])
rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"{proc.returncode} {rss_kib}", file=sys.stderr)
"""


@pytest.mark.parametrize("write", [False, pytest.param(True, marks=pytest.mark.e2e)])
def test_two_gib_file_is_streamed_in_bounded_memory(tmp_path: Path, write: bool) -> None:
    """Hashing or packing a 2 GiB file keeps the process under 100 MiB resident."""
    git("init", "-q", tmp_path)
    big = tmp_path / "sparse"
    with open(big, "wb") as f:
        f.truncate(2 << 30)  # sparse: no disk used, reads as zeros
    args = [
        "-c",
        "core.bigFileThreshold=32m",
        "-c",
        "pack.compression=1",
        "hash-object",
        *(["-w"] if write else []),
        "sparse",
    ]
    proc = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, *args],
        cwd=tmp_path,
        capture_output=True,
        env=git_env(),
    )
    status, rss_kib = proc.stderr.decode().split()[-2:]
    assert status == "0", proc.stderr
    assert int(rss_kib) < 100 * 1024, proc.stderr
    # The id of 2 GiB of zeros, as `git hash-object` computes it.
    assert proc.stdout.strip() == b"77e9132b46cb9535f286f18974872f40049d1a89"
    if write:
        # (verify-pack would inflate all 2 GiB; pack checks are in the tests above.)
        assert len(list((tmp_path / ".git/objects/pack").glob("*.idx"))) == 1
        oid = proc.stdout.strip().decode()
        assert git("cat-file", "-s", oid, cwd=tmp_path) == b"2147483648\n"
        assert git("cat-file", "-t", oid, cwd=tmp_path) == b"blob\n"


def test_settings_from_config() -> None:
    from gitodb.durable import Component
    from gitodb.repo.config import Config

    c = Config()
    c.apply_overrides(
        [
            "core.compression=3",
            "core.bigFileThreshold=2m",
            "core.fsync=none",
            "core.fsyncObjectFiles=true",
        ]
    )
    s = WriteSettings.from_config(c)
    assert (s.loose_compression, s.pack_compression, s.big_file_threshold) == (3, 3, 2 << 20)
    assert (s.fsync.object_files, s.fsync.wants(Component.PACK)) == (True, False)
    c = Config()
    c.apply_overrides(["core.fsync=-pack,loose-object"])
    s = WriteSettings.from_config(c)
    assert (
        s.fsync.wants(Component.LOOSE_OBJECT),
        s.fsync.wants(Component.PACK),
        s.loose_compression,
        s.pack_compression,
    ) == (True, False, 1, -1)


@pytest.mark.e2e
@pytest.mark.parametrize("threshold", ["32m", "4g"])
def test_interrupted_hash_object_leaves_nothing_behind(tmp_path: Path, threshold: str) -> None:
    """SIGINT in the middle of a big write (pack or loose): no partial object, no temp file."""
    import signal
    import time

    git("init", "-q", tmp_path)
    big = tmp_path / "sparse"
    with open(big, "wb") as f:
        f.truncate(2 << 30)
    before = snapshot(tmp_path / ".git")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gitodb",
            "-c",
            f"core.bigFileThreshold={threshold}",
            "-c",
            "pack.compression=9",
            "-c",
            "core.compression=9",
            "hash-object",
            "-w",
            "sparse",
        ],
        cwd=tmp_path,
        env=git_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    objects = tmp_path / ".git" / "objects"
    for _ in range(600):  # wait until the temporary file exists (guard: 60 s)
        if any(p.name.startswith("tmp_") for p in objects.rglob("tmp_*")):
            break
        time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("no temporary file appeared")
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate()
    assert proc.returncode == 130, err
    assert snapshot(tmp_path / ".git") == before
