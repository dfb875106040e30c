"""Wrong answers of issue 11 (reading what Git reads), each fixed with its test."""

from __future__ import annotations

import subprocess
import sys

from helpers import git, git_env


def _ok(*args: str, cwd) -> bytes:  # type: ignore[no-untyped-def]
    p = subprocess.run([sys.executable, "-m", "gitodb", *args], cwd=cwd, capture_output=True,
                       env=git_env(), timeout=300, check=False)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_pack_with_any_name_is_read(tmp_path):
    # Git reads every <name>.pack that has a <name>.idx (t5300 'use packed objects')
    src = tmp_path / "src"
    git("init", "-q", src)
    git("commit", "-q", "--allow-empty", "-m", "one", cwd=src)
    head = git("rev-parse", "HEAD", cwd=src).strip().decode()
    name = git("pack-objects", str(tmp_path / "test-1"), cwd=src, input=head.encode()).strip()
    dst = tmp_path / "dst"
    git("init", "-q", "--bare", dst)
    for ext in ("pack", "idx"):
        (dst / "objects/pack" / f"test-1-{name.decode()}.{ext}").write_bytes(
            (tmp_path / f"test-1-{name.decode()}.{ext}").read_bytes())
    assert _ok("cat-file", "-t", head, cwd=dst) == b"commit\n"


def test_index_pack_stdin_respects_ceiling_directories(tmp_path):
    # Git: --stdin requires a git repository; the parent repository is above the ceiling
    git("init", "-q", tmp_path)
    (tmp_path / "non-repo").mkdir()
    env = git_env()
    env["GIT_CEILING_DIRECTORIES"] = str(tmp_path)
    p = subprocess.run([sys.executable, "-m", "gitodb", "index-pack", "--stdin"],
                       cwd=tmp_path / "non-repo", input=b"", capture_output=True, env=env,
                       timeout=300, check=False)
    assert (p.returncode, p.stderr) == (128, b"fatal: --stdin requires a git repository\n")
    assert not list((tmp_path / ".git/objects/pack").iterdir())
