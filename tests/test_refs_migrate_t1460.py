"""``refs migrate`` against t1460-refs-migrate's expectations.

The runner sends ``refs migrate`` to Git, so t1460 cannot measure gitodb's; these
tests take its scenarios: the refs (root refs included) and every reflog entry
must be the same after migrating as before, the files left behind must be
Git's.  With Git 2.55 present (``../shared``), each scenario is also migrated by
Git and the results compared.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gitodb.repo import Repository
from helpers import GIT_ENV, git, run_cli

GIT255 = Path(__file__).resolve().parents[2] / "shared" / "git-2.55" / "git" / "bin" / "git"
FER = "--format=%(refname) %(objectname) %(symref)"


@pytest.fixture(autouse=True)
def _identity(git_identity: None) -> None:
    """Every test runs with the test identity alone (``conftest.git_identity``)."""


def _run(capfd: pytest.CaptureFixture[str], repo: Path, *args: str) -> tuple[int, str, str]:
    capfd.readouterr()
    status = run_cli(repo, *args)
    out, err = capfd.readouterr()
    return status, out, err


def _state(capfd: pytest.CaptureFixture[str], repo: Path) -> tuple[str, dict[str, object]]:
    status, refs, _ = _run(capfd, repo, "for-each-ref", "--include-root-refs", FER)
    assert status == 0
    r = Repository(repo)
    try:
        logs: dict[str, object] = {n: r.refs.reflog(n) for n in r.refs.reflog_names()}
    finally:
        r.close()
    return refs, logs


def _migrate_and_check(
    capfd: pytest.CaptureFixture[str], repo: Path, to: str, *options: str
) -> None:
    """t1460's ``test_migration``: refs and reflogs unchanged, the new format in use."""
    before = _state(capfd, repo)
    assert _run(capfd, repo, "refs", "migrate", f"--ref-format={to}", *options) == (0, "", "")
    after = _state(capfd, repo)
    assert after[0] == before[0]
    if "--no-reflog" in options:
        assert after[1] == {}
    else:
        assert after[1] == before[1]
    assert Repository(repo).ref_storage == to


def _files_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    git("init", "-q", "-b", "main", repo)
    return repo


def _setup(repo: Path, scenario: str) -> None:
    if scenario == "unborn":
        return
    (repo / "A").write_text("a\n")
    git("-C", repo, "add", "A")
    git("-C", repo, "commit", "-q", "-m", "initial")
    if scenario == "pseudo":
        git("-C", repo, "update-ref", "FOO_HEAD", "HEAD")
        git("-C", repo, "symbolic-ref", "BROKEN_HEAD", "refs/heads/nonexistent")
    elif scenario == "symref-target-deleted":
        git("-C", repo, "branch", "branch-1")
        git("-C", repo, "symbolic-ref", "refs/heads/symref", "refs/heads/branch-1")
        git("-C", repo, "update-ref", "--stdin", input=b"delete refs/heads/branch-1\n")
    elif scenario == "stash":
        for text in ("foo\n", "bar\n"):
            (repo / "A").write_text(text)
            git("-C", repo, "stash", "push", "-q")
    elif scenario == "bunch":
        git(
            "-C",
            repo,
            "update-ref",
            "--stdin",
            input=b"".join(
                f"create {n} HEAD\n".encode()
                for n in ("FOO_HEAD", "refs/heads/b1", "refs/heads/b2", "refs/tags/t1")
            ),
        )
        git("-C", repo, "pack-refs", "--all")
        git("-C", repo, "commit", "-q", "--allow-empty", "-m", "second")


SCENARIOS = ["unborn", "single", "pseudo", "symref-target-deleted", "stash", "bunch"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_round_trip(tmp_path: Path, capfd: pytest.CaptureFixture[str], scenario: str) -> None:
    repo = _files_repo(tmp_path)
    _setup(repo, scenario)
    _migrate_and_check(capfd, repo, "reftable")
    assert (repo / ".git" / "HEAD").read_bytes() == b"ref: refs/heads/.invalid\n"
    assert (repo / ".git" / "refs" / "heads").read_bytes() == (
        b"this repository uses the reftable format\n"
    )
    assert not (repo / ".git" / "logs").exists()
    assert not (repo / ".git" / "packed-refs").exists()
    _migrate_and_check(capfd, repo, "files")
    assert not (repo / ".git" / "reftable").exists()
    # Git's initial transaction writes packed-refs, its header at least, even with no refs
    assert (
        (repo / ".git" / "packed-refs")
        .read_bytes()
        .startswith(b"# pack-refs with: peeled fully-peeled sorted \n")
    )


def test_no_reflog(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = _files_repo(tmp_path)
    _setup(repo, "single")
    _migrate_and_check(capfd, repo, "reftable", "--no-reflog")


def test_special_refs_left_alone(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = _files_repo(tmp_path)
    _setup(repo, "single")
    head = git("-C", repo, "rev-parse", "HEAD")
    (repo / ".git" / "MERGE_HEAD").write_bytes(head)
    (repo / ".git" / "FETCH_HEAD").write_bytes(head)
    git("-C", repo, "update-ref", "ORIG_HEAD", "HEAD")
    _migrate_and_check(capfd, repo, "reftable")
    assert (repo / ".git" / "MERGE_HEAD").read_bytes() == head
    assert (repo / ".git" / "FETCH_HEAD").read_bytes() == head
    assert not (repo / ".git" / "ORIG_HEAD").exists()


def test_many_refs_in_several_blocks(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """t1460's 'multiple reftable blocks with multiple entries' (scaled down)."""
    repo = _files_repo(tmp_path)
    _setup(repo, "single")
    git(
        "-C",
        repo,
        "update-ref",
        "--stdin",
        input=b"".join(b"create refs/heads/ref-%d HEAD\n" % i for i in range(1500)),
    )
    git("-C", repo, "commit", "-q", "--allow-empty", "-m", "second")
    git(
        "-C",
        repo,
        "update-ref",
        "--stdin",
        input=b"".join(b"update refs/heads/ref-%d HEAD\n" % i for i in range(900)),
    )
    _migrate_and_check(capfd, repo, "reftable")
    _migrate_and_check(capfd, repo, "files")


def _git255_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    env["PATH"] = f"{GIT255.parent}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.mark.skipif(not GIT255.exists(), reason="needs Git 2.55")
@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("direction", [("files", "reftable"), ("reftable", "files")])
def test_same_as_git_255(
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    scenario: str,
    direction: tuple[str, str],
) -> None:
    start, to = direction
    repo = _files_repo(tmp_path)
    _setup(repo, scenario)
    if start == "reftable":
        assert _run(capfd, repo, "refs", "migrate", "--ref-format=reftable")[0] == 0
    theirs = tmp_path / "theirs"
    shutil.copytree(repo, theirs, symlinks=True)
    subprocess.run(
        [str(GIT255), "refs", "migrate", f"--ref-format={to}"],
        cwd=theirs,
        env=_git255_env(),
        check=True,
        capture_output=True,
    )
    assert _run(capfd, repo, "refs", "migrate", f"--ref-format={to}")[0] == 0
    assert _state(capfd, repo) == _state(capfd, theirs)
    assert sorted(p.name for p in (repo / ".git").iterdir()) == sorted(
        p.name for p in (theirs / ".git").iterdir()
    )
    if to == "files":
        assert (repo / ".git" / "packed-refs").read_bytes() == (
            theirs / ".git" / "packed-refs"
        ).read_bytes()


def test_dry_run_directory_is_gits(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """t1460's dry run: the store is left alone and the result named, as
    ``ref_migration.XXXXXX`` (Git's mkdtemp: six letters or digits)."""
    import re

    repo = _files_repo(tmp_path)
    _setup(repo, "single")
    status, out, err = _run(capfd, repo, "refs", "migrate", "--dry-run", "--ref-format=reftable")
    assert (status, err) == (0, "")
    m = re.fullmatch(
        r"Finished dry-run migration of refs, the result can be found at "
        r"'\.git/(ref_migration\.[A-Za-z0-9]{6})'\n",
        out,
    )
    assert m, out
    assert (repo / ".git" / m.group(1) / "reftable" / "tables.list").is_file()
    assert Repository(repo).ref_storage == "files"
    os.chmod(repo / ".git", 0o555)
    try:
        if os.access(repo / ".git", os.W_OK):
            pytest.skip("running as root: permissions are not enforced")
        status, out, err = _run(capfd, repo, "refs", "migrate", "--ref-format=reftable")
        assert (status, err) == (
            255,
            "error: cannot create migration directory: Permission denied\n",
        )
    finally:
        os.chmod(repo / ".git", 0o755)
