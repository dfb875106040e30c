"""A damaged ``.bitmap`` is reported in Git's words and not used (t5310), and the
bitmap chosen among several is reported to trace2 as Git does."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env

GIT255 = Path(os.environ.get("GITODB_GIT_255", "/work/shared/git-2.55/git/bin/git"))
GITODB = [sys.executable, "-m", "gitodb"]
COUNT = ["rev-list", "--use-bitmap-index", "--count", "--all"]


def _repo(tmp_path: Path, commits: int = 30) -> Path:
    repo = tmp_path / "r"
    git("init", "-q", repo)
    for i in range(commits):
        (repo / f"f{i}").write_text(f"{i}\n")
        git("add", ".", cwd=repo)
        git("commit", "-q", "-m", f"c{i}", cwd=repo)
    return repo


def _run(cmd: list[str], repo: Path, *args: str, env: dict[str, str] | None = None):
    return subprocess.run(
        [*cmd, *args], cwd=repo, env=env or git_env(), capture_output=True, check=False
    )


@pytest.mark.skipif(not GIT255.exists(), reason="needs ../shared/git-2.55")
@pytest.mark.parametrize(
    ("config", "keep"),
    [
        (["pack.writebitmaphashcache=false", "pack.writebitmaplookuptable=false"], 256),
        (["pack.writebitmaphashcache=false", "pack.writebitmaplookuptable=false"], 600),
        (["pack.writebitmaplookuptable=false"], 512),
        (["pack.writebitmaplookuptable=false"], 100),
        (["pack.writebitmaplookuptable=true"], 512),
        ([], 40),
    ],
)
def test_a_truncated_bitmap_is_reported_like_git(
    tmp_path: Path, config: list[str], keep: int
) -> None:
    repo = _repo(tmp_path)
    opts = [a for c in config for a in ("-c", c)]
    git(*opts, "repack", "-adbq", cwd=repo)
    (bitmap,) = (repo / ".git/objects/pack").glob("*.bitmap")
    data = bitmap.read_bytes()
    bitmap.chmod(0o644)
    bitmap.write_bytes(data[:keep])
    theirs = _run([str(GIT255)], repo, *COUNT)
    ours = _run(GITODB, repo, *COUNT)
    assert ours.returncode == theirs.returncode == 0
    assert ours.stdout == theirs.stdout
    # Git loads the bitmap twice here and says it twice; gitodb names file and offset
    want = list(dict.fromkeys(theirs.stderr.decode().splitlines()))
    got = [
        re.sub(r" \(\S+\.bitmap at offset \d+\)$", "", ln)
        for ln in ours.stderr.decode().splitlines()
    ]
    assert got == want
    assert want and all(ln.startswith("error: corrupt") or "bitmap" in ln for ln in want)


def test_extra_bitmaps_are_reported_to_trace2(tmp_path: Path) -> None:
    """t5310 'complains about multiple pack bitmaps'."""
    repo = _repo(tmp_path, 1)
    git("repack", "-adbq", cwd=repo)
    (first,) = (repo / ".git/objects/pack").glob("*.bitmap")
    first.rename(first.with_suffix(".bak"))
    (repo / "other").write_text("x\n")
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "other", cwd=repo)
    git("repack", "-abq", cwd=repo)
    first.with_suffix(".bak").rename(first)
    assert len(list((repo / ".git/objects/pack").glob("*.bitmap"))) == 2
    trace = tmp_path / "trace.json"
    env = {**git_env(), "GIT_TRACE2_EVENT": str(trace)}
    ours = _run(GITODB, repo, "rev-list", "--use-bitmap-index", "HEAD", env=env)
    assert ours.returncode == 0
    assert ours.stdout == git("rev-list", "HEAD", cwd=repo)
    events = [json.loads(ln) for ln in trace.read_text().splitlines()]
    keys = [e["key"] for e in events if e.get("category") == "bitmap" and "key" in e]
    assert keys.count("opened bitmap file") == 1
    assert keys.count("ignoring extra bitmap file") == 1
