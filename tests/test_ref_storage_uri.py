"""Git 2.55's ``extensions.refStorage = <format>://<path>`` and ``GIT_REFERENCE_BACKEND``
(t1423-ref-backend): the refs are stored at that path (relative to the common git
directory), a linked worktree's own under ``<path>/worktrees/<id>``, and the git
directory holds stubs.  The repositories are laid out by hand, so ``git`` 2.39 gives
the expected listings; Git 2.55 (``../shared``) checks its own layout where present.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import commit_at, git, git_env

GIT255 = Path(__file__).resolve().parents[2] / "shared" / "git-2.55" / "git" / "bin" / "git"


def _gitodb(cwd: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    p = subprocess.run(
        [sys.executable, "-m", "gitodb", *args],
        cwd=cwd,
        env={**git_env(), **(env or {})},
        capture_output=True,
    )
    return p.returncode, p.stdout, p.stderr


def _listing(path: Path) -> bytes:
    refs = _gitodb(path, "for-each-ref")
    head = _gitodb(path, "symbolic-ref", "HEAD")
    assert refs[0] == head[0] == 0 and refs[2] == head[2] == b""
    return refs[1] + head[1]


def _move_refs(repo: Path, where: str, refdir: Path) -> None:
    """Move a files-backend repository's refs to ``refdir`` as Git 2.55 keeps them."""
    gd = repo / ".git"
    refdir.mkdir(parents=True, exist_ok=True)
    for name in ("HEAD", "packed-refs", "refs", "logs"):
        if (gd / name).exists():
            shutil.move(gd / name, refdir / name)
    (gd / "HEAD").write_text("ref: refs/heads/.invalid\n")
    (gd / "refs").mkdir()
    (gd / "refs/heads").write_text("repository uses alternate refs storage\n")
    git("config", "core.repositoryformatversion", "1", cwd=repo)
    git("config", "extensions.refStorage", f"files://{where}", cwd=repo)


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, bytes]:
    """A repository with branches, tags, packed and loose refs; and git's listing."""
    path = tmp_path / "r"
    git("init", "-q", "-b", "main", path)
    for n in range(3):
        commit_at(path, f"c{n}", n)
        git("tag", f"t{n}", cwd=path)
    git("pack-refs", "--all", cwd=path)
    git("branch", "side", "t1", cwd=path)
    listing = git("for-each-ref", cwd=path) + git("symbolic-ref", "HEAD", cwd=path)
    return path, listing


@pytest.mark.parametrize("absolute", [True, False])
def test_files_refs_at_a_path_read_and_written(repo: tuple[Path, bytes], absolute: bool) -> None:
    path, listing = repo
    refdir = path.parent / "refdir"
    t0 = git("rev-parse", "t0", cwd=path).strip()
    _move_refs(path, str(refdir) if absolute else "../../refdir", refdir)
    assert _listing(path) == listing
    status, _out, err = _gitodb(path, "update-ref", "-m", "new", "refs/heads/new", "t0")
    assert (status, err) == (0, b"")
    assert (refdir / "refs/heads/new").is_file()
    assert (refdir / "logs/refs/heads/new").is_file()
    assert not (path / ".git/refs/heads/new").exists()
    out = _gitodb(path, "show-ref", "--verify", "refs/heads/new")[1]
    assert out.split()[0] == t0


def test_the_environment_wins_over_the_config(repo: tuple[Path, bytes], tmp_path: Path) -> None:
    """``GIT_REFERENCE_BACKEND`` names the storage over ``extensions.refStorage``
    (and in a version 0 repository too)."""
    path, listing = repo
    other = tmp_path / "other"
    shutil.copytree(path / ".git", other, ignore=shutil.ignore_patterns("objects"))
    (other / "refs/heads/only-there").write_bytes((other / "refs/heads/side").read_bytes())
    env = {"GIT_REFERENCE_BACKEND": f"files://{other}"}
    got = _gitodb(path, "for-each-ref", "--format=%(refname)", env=env)
    assert got[0] == 0 and b"refs/heads/only-there\n" in got[1]
    _move_refs(path, str(path.parent / "refdir"), path.parent / "refdir")
    assert _listing(path) == listing
    assert _gitodb(path, "for-each-ref", "--format=%(refname)", env=env) == got


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("db://x", b"fatal: unknown ref storage format: 'db'\n"),
        ("reftable:", b"fatal: unknown ref storage format: 'reftable:'\n"),
    ],
)
def test_a_bad_environment_value_is_fatal(
    repo: tuple[Path, bytes], value: str, message: bytes
) -> None:
    """Messages as Git 2.55 prints them."""
    path, _listing = repo
    got = _gitodb(path, "for-each-ref", env={"GIT_REFERENCE_BACKEND": value})
    assert got == (128, b"", message)


@pytest.mark.parametrize("value", ["reftable@/home/reftable", "reftable:", "db://.git", "files:x"])
def test_a_bad_config_value_is_refused(repo: tuple[Path, bytes], value: str) -> None:
    path, _listing = repo
    git("config", "core.repositoryformatversion", "1", cwd=path)
    git("config", "extensions.refStorage", value, cwd=path)
    status, _out, err = _gitodb(path, "for-each-ref")
    assert status == 128
    assert err.startswith(
        b"error: invalid value for 'extensions.refstorage': '%s'\n" % value.encode()
    )


@pytest.mark.skipif(not GIT255.exists(), reason="needs Git 2.55 (../shared)")
@pytest.mark.parametrize("fmt", ["files", "reftable"])
def test_git_255_layout_with_a_worktree(tmp_path: Path, fmt: str) -> None:
    """Git 2.55 makes the layout (``init`` with the environment, a linked worktree);
    gitodb lists what it lists, from the main and the linked worktree."""
    env = {**git_env(), "PATH": f"{GIT255.parent}{os.pathsep}{os.environ['PATH']}"}

    def g255(*args: str, cwd: Path) -> bytes:
        return subprocess.run(
            [str(GIT255), *args], cwd=cwd, env=env, capture_output=True, check=True
        ).stdout

    refdir = tmp_path / "refdir"
    refdir.mkdir()
    subprocess.run(
        [str(GIT255), "init", "-q", "-b", "main", str(tmp_path / "r")],
        env={**env, "GIT_REFERENCE_BACKEND": f"{fmt}://{refdir}"},
        check=True,
    )
    r = tmp_path / "r"
    g255("commit", "-q", "--allow-empty", "-m", "one", cwd=r)
    g255("tag", "one", cwd=r)
    g255("commit", "-q", "--allow-empty", "-m", "two", cwd=r)
    g255("worktree", "add", "-q", "../wt", "one", cwd=r)
    for cwd in (r, tmp_path / "wt"):
        want = g255("for-each-ref", "--include-root-refs", cwd=cwd)
        assert _gitodb(cwd, "for-each-ref", "--include-root-refs") == (0, want, b"")
        want = g255("rev-parse", "HEAD", cwd=cwd)
        assert _gitodb(cwd, "rev-list", "-1", "HEAD")[1] == want
