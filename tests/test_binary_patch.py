"""``diff-tree --binary`` and ``gitodb.history.binpatch`` against Git: the delta
(Git's ``diff_delta``), literal and delta hunks, base85 lines, the zlib level, and
every kind of binary file change in a patch."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import stress_scale
from gitodb.history.binpatch import binary_patch, diff_delta
from gitodb.pack.delta import apply_delta
from helpers import git, git_env
from oracle import assert_same


def git_binary(tmp: Path, old: bytes, new: bytes, *config: str) -> bytes:
    """The ``GIT binary patch`` part of ``git diff --no-index --binary``."""
    (tmp / "a").write_bytes(old)
    (tmp / "b").write_bytes(new)
    args = ["git"]
    for c in config:
        args += ["-c", c]
    out = subprocess.run(
        [*args, "diff", "--no-index", "--binary", "a", "b"],
        cwd=tmp,
        capture_output=True,
        env=git_env(),
        check=False,
    ).stdout
    at = out.find(b"GIT binary patch\n")
    return out[at:] if at >= 0 else b""


def _edit(rnd: random.Random, data: bytes, alphabet: int) -> bytes:
    b = bytearray(data)
    for _ in range(rnd.randint(0, 20)):
        pos = rnd.randint(0, len(b))
        if rnd.random() < 0.5:
            b[pos:pos] = bytes(rnd.randrange(alphabet) for _ in range(rnd.randint(1, 300)))
        else:
            del b[pos : pos + rnd.randint(1, 300)]
    if rnd.random() < 0.2:
        b = b[len(b) // 2 :] + b[: len(b) // 2]
    return bytes(b)


def _sources(rnd: random.Random) -> bytes:
    """Random data, small alphabets, periodic data (many equal blocks: the index's
    dedup and its 64-per-bucket cull), runs of zeros, tiny files."""
    kind = rnd.randrange(6)
    if kind == 0:
        return bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 20000)))
    if kind == 1:
        return bytes(rnd.randrange(4) for _ in range(rnd.randint(0, 30000)))
    if kind == 2:
        period = bytes(rnd.getrandbits(8) for _ in range(rnd.choice([3, 17, 33, 100])))
        return period * rnd.randint(1, 2000)
    if kind == 3:
        return b"\0" * rnd.randint(0, 100000)
    if kind == 4:
        return bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 20)))
    return b"".join(b"line %d\n" % rnd.randrange(300) for _ in range(rnd.randint(0, 3000)))


def test_binary_patches_match_git(tmp_path: Path) -> None:
    rnd = random.Random(2024)
    for _ in range(40 * max(1, stress_scale())):
        alphabet = rnd.choice([2, 4, 256])
        old = b"\0" + _sources(rnd)
        new = b"\0" + _edit(rnd, old[1:], alphabet)
        if old == new:
            continue
        assert binary_patch(old, new) == git_binary(tmp_path, old, new)


def test_long_copies_and_big_files(tmp_path: Path) -> None:
    """Copies over 64 KiB (split into several opcodes) and matches past 4096 bytes."""
    rnd = random.Random(9)
    big = bytes(rnd.getrandbits(8) for _ in range(300_000))
    new = big[:100] + b"\0changed\0" + big[100:200_000] + big[250_000:]
    assert binary_patch(big, new) == git_binary(tmp_path, big, new)


def test_compression_level_is_gits(tmp_path: Path) -> None:
    rnd = random.Random(4)
    old = b"\0" + b"".join(b"%d " % rnd.randrange(50) for _ in range(5000))
    new = old[:3000] + old[4000:]
    for level in (-1, 0, 1, 9):
        want = git_binary(tmp_path, old, new, f"core.compression={level}")
        assert binary_patch(old, new, level) == want
    # core.looseCompression wins over core.compression, as in Git.
    want = git_binary(tmp_path, old, new, "core.compression=9", "core.looseCompression=0")
    assert binary_patch(old, new, 0) == want


@settings(
    max_examples=200 * max(1, stress_scale()),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(src=st.binary(max_size=3000), cut=st.integers(0, 3000), insert=st.binary(max_size=200))
def test_delta_applies(src: bytes, cut: int, insert: bytes) -> None:
    """Whatever diff_delta makes, the pack reader's apply_delta turns back into
    the target; a limit below its length means no delta."""
    trg = src[:cut] + insert + src[cut // 2 :]
    delta = diff_delta(src, trg)
    if not src or not trg:
        assert delta is None
        return
    assert delta is not None
    assert apply_delta(src, delta) == trg
    # Under a limit: the same delta, or none when it grew past the limit on the
    # way (Git checks as its buffer grows, before back-matching shrinks it).
    assert diff_delta(src, trg, len(delta)) in (delta, None)
    assert diff_delta(src, trg, 1 << 40) == delta
    assert diff_delta(src, trg, len(delta) - 1) is None


def build(path: Path) -> Path:
    git("init", "-q", path)
    rnd = random.Random(3)
    base = bytes(rnd.getrandbits(8) for _ in range(5000))
    files = {
        "bin": b"\0" + base,
        "gone.bin": b"\0gone" * 100,
        "text": b"hello\n",
        "mode.bin": b"\0x",
        "same-size": b"\0" + b"a" * 50,
        "tobin": b"plain\n",
        "sp ace.bin": b"\0\1\2",
        "link": None,
    }
    for name, data in files.items():
        if data is None:
            os.symlink("text", path / name)
        else:
            (path / name).write_bytes(data)
    git("add", "-A", cwd=path)
    git("commit", "-q", "-m", "one", cwd=path)
    (path / "bin").write_bytes(b"\0" + base[:2000] + b"NEW" * 10 + base[2000:])
    (path / "gone.bin").unlink()
    (path / "new.bin").write_bytes(b"\0new" * 300)
    (path / "empty-new").write_bytes(b"")
    (path / "text").write_bytes(b"hello\nworld\n")
    os.chmod(path / "mode.bin", 0o755)
    (path / "same-size").write_bytes(b"\0" + b"b" * 50)
    (path / "tobin").write_bytes(b"plain\0\n")
    (path / "sp ace.bin").write_bytes(b"\0\1\2\3")
    (path / "link").unlink()
    (path / "link").write_bytes(b"\0now binary")
    (path / ".gitattributes").write_bytes(b"text -diff\n")
    git("add", "-A", cwd=path)
    git("commit", "-q", "-m", "two", cwd=path)
    return path


@pytest.mark.parametrize(
    "options",
    [
        ["--binary"],
        ["--binary", "-R"],
        ["--binary", "--stat"],
        ["--binary", "--full-index"],
        ["--binary", "--abbrev=10"],
        ["--binary", "--raw"],
        ["--binary", "-U1"],
        ["--binary", "-M"],
        ["--binary", "--no-prefix"],
        ["--binary", "-p", "--root"],
    ],
)
def test_diff_tree_binary_matches_git(tmp_path: Path, options: list[str]) -> None:
    path = build(tmp_path / "r")
    assert_same(path, "diff-tree", *options, "HEAD^", "HEAD")
    assert_same(path, "diff-tree", *options, "--root", "HEAD^")


def test_binary_patch_honours_core_compression(tmp_path: Path) -> None:
    path = build(tmp_path / "r")
    for level in ("0", "9"):
        git("config", "core.compression", level, cwd=path)
        assert_same(path, "diff-tree", "--binary", "HEAD^", "HEAD")
    git("config", "core.looseCompression", "1", cwd=path)
    assert_same(path, "diff-tree", "--binary", "HEAD^", "HEAD")
