"""Repository discovery and configuration, compared with Git's rules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitodb.errors import RepositoryError
from gitodb.objects.format import SHA1, SHA256
from gitodb.repo import Repository
from test_odb_support import DATA, git, make_repo, run_gitodb


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("repo") / "w")


def test_discover_from_subdirectory(work: Path) -> None:
    repo = Repository.discover(work / "dir" / "sub")
    assert repo.git_dir == (work / ".git").absolute()
    assert repo.object_format is SHA1


def test_discover_bare_and_inside_git_dir() -> None:
    bare = DATA / "packs-sha256" / "repo"
    assert Repository.discover(bare).git_dir == bare.absolute()
    assert Repository.discover(bare / "objects" / "pack").git_dir == bare.absolute()
    assert Repository.discover(bare).object_format is SHA256


def test_gitfile(work: Path, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".git").write_text(f"gitdir: {work / '.git'}\n")
    assert Repository.discover(linked).git_dir == (work / ".git")
    assert Repository(linked).git_dir == (work / ".git")


def test_worktree_common_dir(work: Path, tmp_path: Path) -> None:
    git(work, "worktree", "add", "-q", str(tmp_path / "wt"), "side")
    repo = Repository.discover(tmp_path / "wt")
    assert repo.common_dir == (work / ".git").resolve()
    assert repo.resolve("HEAD") == bytes.fromhex(
        git(tmp_path / "wt", "rev-parse", "HEAD").stdout.decode().strip()
    )
    git(work, "worktree", "remove", "--force", str(tmp_path / "wt"))


def test_git_dir_env_and_option(
    work: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GIT_DIR", str(work / ".git"))
    assert Repository.discover(tmp_path).git_dir == work / ".git"
    monkeypatch.delenv("GIT_DIR")
    with pytest.raises(RepositoryError, match="not a git repository"):
        Repository.discover(tmp_path)
    with pytest.raises(RepositoryError):
        Repository.discover(git_dir=tmp_path)


@pytest.mark.e2e
def test_cli_dash_c_and_errors(work: Path, tmp_path: Path) -> None:
    rc, out, _ = run_gitodb(["-C", str(work / "dir"), "cat-file", "-t", "HEAD"])
    assert (rc, out) == (0, b"commit\n")
    rc, out, err = run_gitodb(["-C", str(tmp_path), "cat-file", "-t", "HEAD"])
    assert rc == 128 and out == b""
    assert err == b"fatal: not a git repository (or any of the parent directories): .git\n"


def test_config_override_precedence(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIT_CONFIG_COUNT is applied first, -c last (it wins), both over the file.
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.deltaBaseCacheLimit")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "2k")
    repo = Repository(work)
    assert repo.odb.cache.limit == 2048
    repo = Repository(work, config_overrides=["core.deltaBaseCacheLimit=3k"])
    assert repo.odb.cache.limit == 3072
    git_says = git(
        work,
        "-c",
        "core.deltaBaseCacheLimit=3k",
        "config",
        "--get",
        "core.deltaBaseCacheLimit",
        check=False,
    )
    assert git_says.stdout.strip() == b"3k"
    assert os.environ["GIT_CONFIG_COUNT"] == "1"
