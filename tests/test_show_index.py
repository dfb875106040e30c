"""``gitodb show-index`` against ``git show-index``: v1, v2, 64-bit offsets, short input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env, make_pack


def show(idx: bytes, *args: str, cwd: Path) -> tuple[int, bytes, bytes]:
    p = subprocess.run(
        [sys.executable, "-m", "gitodb", "show-index", *args],
        cwd=cwd,
        input=idx,
        capture_output=True,
        env=git_env(),
        timeout=300,
        check=False,
    )
    return p.returncode, p.stdout, p.stderr


def theirs(idx: bytes, *args: str, cwd: Path) -> tuple[int, bytes, bytes]:
    p = subprocess.run(
        ["git", "show-index", *args],
        cwd=cwd,
        input=idx,
        capture_output=True,
        env=git_env(),
        check=False,
    )
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize("version", ["1", "2", "2,0x100"])
def test_same_as_git(tmp_path, version):
    pack = make_pack(tmp_path)
    out = tmp_path / "x.idx"
    git("index-pack", f"--index-version={version}", "-o", out, pack)
    data = out.read_bytes()
    assert show(data, cwd=tmp_path) == theirs(data, cwd=tmp_path)
    if version == "2,0x100":
        assert b"\x80\x00\x00\x00" in data  # 64-bit offsets were used
    # cut short anywhere: Git's message for the table that ran out
    for n in (0, 3, 8, 500, 1032, 1040, len(data) // 2, len(data) - 45):
        assert show(data[:n], cwd=tmp_path) == theirs(data[:n], cwd=tmp_path), n


def test_sha256_and_errors(tmp_path):
    pack = make_pack(tmp_path, "sha256")
    idx = pack.with_suffix(".idx").read_bytes()
    assert show(idx, "--object-format=sha256", cwd=tmp_path) == theirs(
        idx, "--object-format=sha256", cwd=tmp_path
    )
    assert show(b"\377tOc\0\0\0\3", cwd=tmp_path) == (128, b"", b"fatal: unknown index version\n")
    assert show(b"", "--object-format=md5", cwd=tmp_path) == (
        128,
        b"",
        b"fatal: Unknown hash algorithm\n",
    )
