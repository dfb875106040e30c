"""``unpack-objects`` with objects above ``core.bigFileThreshold`` (t5351), against Git.

A blob above the threshold is streamed into its loose object, so ``GIT_ALLOC_LIMIT``
below its size only stops the run when the threshold is above it; a later delta
against the streamed blob is resolved from what was written, in a batch too; the
whole pack is one ODB transaction, which under ``core.fsyncMethod=batch`` syncs each
object with a write-out and flushes once; a dry run holds nothing.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env

SIZE = 1_500_000
BATCH = ["-c", "core.fsync=loose-object", "-c", "core.fsyncmethod=batch"]


def _pack(tmp_path: Path, name: str, *, delta: bool) -> bytes:
    """Two commits of a 1.5 MB blob: a second random blob, or (``delta``) the first
    with a line added, which ``pack-objects`` stores as a delta against it."""
    src = tmp_path / name
    git("init", "-q", src)
    rng = random.Random(name)
    data = rng.randbytes(SIZE)
    for i in range(2):
        (src / "big").write_bytes(data)
        git("add", "big", cwd=src)
        git("commit", "-q", "-m", f"c{i}", cwd=src)
        data = data + b"more\n" if delta else rng.randbytes(SIZE)
    return git("pack-objects", "--revs", "--stdout", cwd=src, input=b"HEAD\n")


def _unpack(cmd: list[str], dest: Path, pack: bytes, *args: str, **env: str):
    """Run ``unpack-objects`` of ``cmd`` (gitodb's or git's) into a new bare ``dest``."""
    git("init", "-q", "--bare", dest)
    git("config", "core.bigFileThreshold", env.pop("threshold"), cwd=dest)
    return subprocess.run(
        [*cmd, "-C", str(dest), *args, "unpack-objects"],
        input=pack,
        capture_output=True,
        env={**git_env(), **env},
        check=False,
    )


def _both(tmp_path: Path, pack: bytes, *args: str, **env: str):
    mine = _unpack([sys.executable, "-m", "gitodb"], tmp_path / "mine.git", pack, *args, **env)
    theirs = _unpack(["git"], tmp_path / "theirs.git", pack, *args, **dict(env))
    return mine, theirs


def _objects(repo: Path) -> bytes:
    return git("cat-file", "--batch-check", "--batch-all-objects", cwd=repo)


@pytest.mark.parametrize("delta", [False, True], ids=["two-blobs", "delta"])
@pytest.mark.parametrize("batch", [False, True], ids=["fsync", "batch"])
def test_big_blobs_stream_under_the_allocation_limit(tmp_path: Path, delta: bool, batch: bool):
    pack = _pack(tmp_path, "src", delta=delta)
    # below the blobs' size; a delta's result is held whole, as in Git
    limit = "2m" if delta else "1m"
    mine, theirs = _both(
        tmp_path, pack, *(BATCH if batch else []), threshold="1m", GIT_ALLOC_LIMIT=limit
    )
    assert (mine.returncode, mine.stderr) == (theirs.returncode, theirs.stderr) == (0, b"")
    assert _objects(tmp_path / "mine.git") == _objects(tmp_path / "theirs.git")
    assert len(_objects(tmp_path / "mine.git").splitlines()) == 6
    assert not list((tmp_path / "mine.git/objects/pack").iterdir())
    git("fsck", "--no-dangling", cwd=tmp_path / "mine.git")


def test_a_blob_held_whole_meets_the_allocation_limit_like_git(tmp_path: Path):
    pack = _pack(tmp_path, "src", delta=False)
    mine, theirs = _both(tmp_path, pack, threshold="2m", GIT_ALLOC_LIMIT="1m")
    assert mine.returncode == theirs.returncode == 128
    assert mine.stderr == theirs.stderr
    assert mine.stderr.startswith(b"fatal: attempting to allocate 1500001 over limit 1048576")


def test_a_dry_run_writes_nothing_like_git(tmp_path: Path):
    """Under the default threshold nothing is streamed, and a dry run holds nothing."""
    pack = _pack(tmp_path, "src", delta=True)
    for cmd, name in (([sys.executable, "-m", "gitodb"], "mine"), (["git"], "theirs")):
        dest = tmp_path / f"{name}.git"
        git("init", "-q", "--bare", dest)
        p = subprocess.run(
            [*cmd, "-C", str(dest), "unpack-objects", "-n"],
            input=pack,
            capture_output=True,
            env={**git_env(), "GIT_ALLOC_LIMIT": "1m"},
            check=False,
        )
        assert (p.returncode, p.stderr) == (0, b"")
        assert not [f for f in (dest / "objects").rglob("*") if f.is_file()]


def _fsync_counts(trace: Path) -> dict[str, int]:
    counts = {}
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        if event.get("event") == "counter" and event.get("category") == "fsync":
            counts[event["name"]] = event["count"]
    return counts


GIT_255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"


def test_one_transaction_flushes_once_like_git(tmp_path: Path):
    """t5351's figures: six write-outs and one flush (Git 2.39 has no such counters;
    Git 2.55 is compared when ``../shared`` has it)."""
    pack = _pack(tmp_path, "src", delta=False)
    counts = []
    runs = [([sys.executable, "-m", "gitodb"], "mine")]
    if GIT_255.exists():
        runs.append(([str(GIT_255)], "theirs"))
    for cmd, name in runs:
        trace = tmp_path / f"{name}.trace"
        p = _unpack(
            cmd,
            tmp_path / f"{name}.git",
            pack,
            *BATCH,
            threshold="1m",
            GIT_TRACE2_EVENT=str(trace),
            GIT_TEST_FSYNC="true",
        )
        assert p.returncode == 0, p.stderr
        counts.append(_fsync_counts(trace))
    assert all(c == {"writeout-only": 6, "hardware-flush": 1} for c in counts)


def test_a_pack_read_from_a_pipe_in_pieces(tmp_path: Path):
    """The pack comes through a pipe in small writes; what follows it is copied out."""
    pack = _pack(tmp_path, "src", delta=True)
    dest = tmp_path / "piped.git"
    git("init", "-q", "--bare", dest)
    git("config", "core.bigFileThreshold", "1m", cwd=dest)
    proc = subprocess.Popen(
        [sys.executable, "-m", "gitodb", "-C", str(dest), "unpack-objects"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=git_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    for i in range(0, len(pack), 4093):
        proc.stdin.write(pack[i : i + 4093])
        proc.stdin.flush()
    proc.stdin.write(b"after the pack")
    proc.stdin.close()
    assert proc.stdout.read() == b"after the pack"
    assert proc.wait() == 0
    assert len(_objects(dest).splitlines()) == 6


@pytest.mark.parametrize("backend", ["zlib", "zlib-ng", "isal", "libdeflate"])
@pytest.mark.parametrize("threshold", ["200k", "512m"])
def test_a_highly_compressible_blob_under_every_backend(
    tmp_path: Path, backend: str, threshold: str
) -> None:
    # t1050: 2.5 MB of spaces deflate to ~2.4 KB, so the inflater reaches the
    # stream's end with input it had read ahead (ISA-L), which it gives back only
    # then; that input is the pack's trailer, and must be hashed as the trailer.
    from gitodb import compress

    if backend not in compress.available_backends():
        pytest.skip(f"{backend} is not installed")
    src = tmp_path / "src"
    git("init", "-q", src)
    (src / "huge").write_bytes(b" " * 2_499_999 + b"Y")
    git("add", "huge", cwd=src)
    git("commit", "-q", "-m", "huge", cwd=src)
    pack = git("pack-objects", "--revs", "--stdout", cwd=src, input=b"HEAD\n")
    mine, theirs = _both(tmp_path, pack, threshold=threshold, GITODB_ZLIB_BACKEND=backend)
    assert (mine.returncode, mine.stderr) == (theirs.returncode, theirs.stderr) == (0, b"")
    assert _objects(tmp_path / "mine.git") == _objects(tmp_path / "theirs.git")
