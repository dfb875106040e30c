"""``update-ref --stdin --batch-updates``: failing updates are rejected one by one
(``rejected <ref> <new> <old> <reason>`` on stdout, the cause as ``error:`` on stderr)
while the others commit, like Git 2.55."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers import git, git_env, run_cli

GIT255 = Path(__file__).resolve().parents[2] / "shared" / "git-2.55" / "git" / "bin" / "git"
Z = "0" * 40
MISSING = "1" * 40


def _repo(tmp_path: Path, name: str, git_cmd: str = "git", fmt: str = "files") -> Path:
    repo = tmp_path / name
    args = ["init", "-q"] + ([f"--ref-format={fmt}"] if fmt != "files" else []) + [str(repo)]
    subprocess.run([git_cmd, *args], check=True, env=git_env())
    for msg in ("one", "two"):
        subprocess.run(
            [git_cmd, "-C", str(repo), "commit", "-q", "--allow-empty", "-m", msg],
            check=True,
            env=git_env(),
        )
    head = _rev(repo, "HEAD", git_cmd)
    for ref in ("ref1", "ref2"):
        subprocess.run(
            [git_cmd, "-C", str(repo), "update-ref", f"refs/heads/{ref}", head],
            check=True,
            env=git_env(),
        )
    subprocess.run(
        [git_cmd, "-C", str(repo), "update-ref", "refs/heads/dir/x", head],
        check=True,
        env=git_env(),
    )
    subprocess.run(
        [git_cmd, "-C", str(repo), "symbolic-ref", "refs/heads/sym", "refs/heads/nonexist"],
        check=True,
        env=git_env(),
    )
    return repo


def _rev(repo: Path, rev: str, git_cmd: str = "git") -> str:
    return subprocess.run(
        [git_cmd, "-C", str(repo), "rev-parse", rev],
        check=True,
        capture_output=True,
        text=True,
        env=git_env(),
    ).stdout.strip()


def _commands(repo: Path, git_cmd: str = "git") -> tuple[bytes, str, str, str]:
    old, head = _rev(repo, "HEAD~", git_cmd), _rev(repo, "HEAD", git_cmd)
    tree = _rev(repo, "HEAD^{tree}", git_cmd)
    text = (
        f"update refs/heads/ref1 {old} {head}\n"  # commits
        f"update refs/heads/ref2 {MISSING} {head}\n"  # nonexistent object
        f"update refs/heads/master {tree} {head}\n"  # tree to a branch
        f"delete refs/heads/sym {head}\n"  # dangling symref, derefs
        f"update refs/heads/ref3 {old} {head}\n"  # missing, old value given
        f"update refs/heads/ref1x {old} {Z}\n"  # created
        f"update refs/heads/dir {old} {Z}\n"  # D/F conflict
        f"create refs/heads/ref2x {old}\n"  # created
        f"update refs/heads/dir/x {head} {old}\n"
    )  # wrong old value
    return text.encode(), old, head, tree


def _expected(old: str, head: str, tree: str) -> str:
    out = (
        f"rejected refs/heads/ref2 {MISSING} {head} invalid new value provided\n"
        f"rejected refs/heads/master {tree} {head} invalid new value provided\n"
        f"rejected refs/heads/ref3 {old} {head} reference does not exist\n"
        f"rejected refs/heads/dir {old} {Z} refname conflict\n"
        f"rejected refs/heads/dir/x {head} {old} incorrect old value provided\n"
        f"rejected refs/heads/nonexist {Z} {head} reference does not exist\n"
    )
    return out


def test_batch_updates_rejects_each_failure(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    repo = _repo(tmp_path, "r")
    stdin, old, head, tree = _commands(repo)
    capfd.readouterr()
    assert run_cli(repo, "update-ref", "--stdin", "--batch-updates", stdin=stdin) == 0
    out, err = capfd.readouterr()
    assert out == _expected(old, head, tree)
    assert (
        f"error: trying to write ref 'refs/heads/ref2' with nonexistent object {MISSING}\n" in err
    )
    assert f"error: trying to write non-commit object {tree} to branch 'refs/heads/master'\n" in err
    assert f"error: cannot lock ref 'refs/heads/dir/x': is at {head} but expected {old}\n" in err
    assert (
        "error: cannot lock ref 'refs/heads/sym': unable to resolve reference "
        "'refs/heads/nonexist'\n" in err
    )
    # the accepted updates committed, the rejected ones changed nothing
    assert _rev(repo, "refs/heads/ref1") == old
    assert _rev(repo, "refs/heads/ref1x") == old
    assert _rev(repo, "refs/heads/ref2x") == old
    assert _rev(repo, "refs/heads/ref2") == head
    assert _rev(repo, "refs/heads/dir/x") == head
    assert git("symbolic-ref", "refs/heads/sym", cwd=repo).strip() == b"refs/heads/nonexist"


def test_batch_updates_inside_start_commit(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    repo = _repo(tmp_path, "r")
    head = _rev(repo, "HEAD")
    capfd.readouterr()
    stdin = f"start\nupdate refs/heads/ref1 {head} {Z}\ncommit\n".encode()
    assert run_cli(repo, "update-ref", "--stdin", "--batch-updates", stdin=stdin) == 0
    out, _ = capfd.readouterr()
    assert out == (
        f"start: ok\nrejected refs/heads/ref1 {head} {Z} reference already exists\ncommit: ok\n"
    )


def test_batch_updates_needs_stdin(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path, "r")
    assert run_cli(repo, "update-ref", "--batch-updates", "refs/heads/x", "HEAD") == 128
    assert capfd.readouterr().err == "fatal: --batch-updates can only be used with --stdin\n"


def test_without_batch_updates_one_failure_fails_all(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    repo = _repo(tmp_path, "r")
    old, head = _rev(repo, "HEAD~"), _rev(repo, "HEAD")
    stdin = f"update refs/heads/ref1 {old} {head}\nupdate refs/heads/ref3 {old} {head}\n"
    assert run_cli(repo, "update-ref", "--stdin", stdin=stdin.encode()) == 128
    assert _rev(repo, "refs/heads/ref1") == head


@pytest.mark.parametrize("fmt", ["files", "reftable"])
def test_batch_updates_matches_git_255(
    tmp_path: Path, fmt: str, capfd: pytest.CaptureFixture[str]
) -> None:
    if not GIT255.exists():
        pytest.skip("needs ../shared/git-2.55")
    theirs = _repo(tmp_path, "theirs", str(GIT255), fmt)
    ours = _repo(tmp_path, "ours", str(GIT255), fmt)
    # fixed dates: the same ids
    assert _rev(theirs, "HEAD", str(GIT255)) == _rev(ours, "HEAD", str(GIT255))
    stdin, *_ = _commands(theirs, str(GIT255))
    want = subprocess.run(
        [str(GIT255), "-C", str(theirs), "update-ref", "--stdin", "--batch-updates"],
        input=stdin,
        capture_output=True,
        env=git_env(),
    )
    capfd.readouterr()
    code = run_cli(ours, "update-ref", "--stdin", "--batch-updates", stdin=stdin)
    out, err = capfd.readouterr()
    assert code == want.returncode
    # Git's reftable backend checks name conflicts last, so only the files order is exact
    if fmt == "files":
        assert out == want.stdout.decode()
    assert sorted(out.splitlines()) == sorted(want.stdout.decode().splitlines())
    assert sorted(err.splitlines()) == sorted(want.stderr.decode().splitlines())
    for ref in ("ref1", "ref1x", "ref2", "ref2x", "dir/x"):
        assert _rev(ours, f"refs/heads/{ref}", str(GIT255)) == _rev(
            theirs, f"refs/heads/{ref}", str(GIT255)
        )
