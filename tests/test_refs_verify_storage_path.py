"""``refs verify`` checks the refs where a ref storage naming a path puts them
(``extensions.refStorage=<format>://<path>``, Git 2.55), not the git directory's stubs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git_env

GIT255 = Path(os.environ.get("GITODB_GIT_255", "/work/shared/git-2.55/git/bin/git"))
pytestmark = pytest.mark.skipif(not GIT255.exists(), reason="needs ../shared/git-2.55")
GITODB = [sys.executable, "-m", "gitodb"]


def _run(cmd: list[str], repo: Path, *args: str) -> tuple[int, bytes]:
    p = subprocess.run([*cmd, *args], cwd=repo, env=git_env(), capture_output=True, check=False)
    return p.returncode, p.stderr


@pytest.mark.parametrize(("source", "target"), [("reftable", "files"), ("files", "reftable")])
@pytest.mark.parametrize("absolute", [True, False])
def test_verify_checks_the_ref_storage_path_like_git(
    tmp_path: Path, source: str, target: str, absolute: bool
) -> None:
    repo = tmp_path / "r"
    subprocess.run([str(GIT255), "init", "-q", f"--ref-format={source}", str(repo)], check=True)
    g255 = [str(GIT255), "-C", str(repo)]
    for args in (["commit", "-q", "--allow-empty", "-m", "a"], ["tag", "t"]):
        subprocess.run([*g255, *args], env=git_env(), check=True, capture_output=True)
    subprocess.run(
        [str(GIT255), "refs", "migrate", "--dry-run", f"--ref-format={target}"],
        cwd=repo,
        check=True,
        capture_output=True,
    )
    (moved,) = (repo / ".git").glob("ref_migration.*")
    # the refs elsewhere; the git directory keeps its own refs (of the other format)
    shutil.copytree(moved, tmp_path / "refdir")
    refdir = tmp_path / "refdir"
    uri = f"{target}://{refdir if absolute else os.path.relpath(refdir, repo / '.git')}"
    for args in (["core.repositoryformatversion", "1"], ["extensions.refStorage", uri]):
        subprocess.run([*g255, "config", *args], env=git_env(), check=True)
    args = ("refs", "verify", "--verbose")
    good = _run([str(GIT255)], repo, *args)
    assert good[0] == 0
    assert _run(GITODB, repo, *args) == good
    if target == "files":
        (refdir / "refs/heads/bad").write_text("garbage\n")
    else:
        with open(refdir / "reftable/tables.list", "a") as f:
            f.write("0x000000000001-0x000000000002-zzzz.ref\n")
    bad = _run(GITODB, repo, *args)
    assert bad[0] == 255
    if target == "files":  # Git 2.55 crashes on a table that does not exist
        assert bad == _run([str(GIT255)], repo, *args)
        assert b"error: refs/heads/bad: badRefContent: garbage" in bad[1]
    else:
        assert b"badReftableTableName" in bad[1]
