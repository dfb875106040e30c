"""``update-ref --stdin`` ``symref-update`` without ``--no-deref``: the ref at the end
of the symref chain becomes the symref, and each ref of the chain logs the change (old
resolved id -> new resolved id), also without ``-m``, like Git 2.55."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import git, run_cli

Z = "0" * 40


def _repo(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "r"
    git("init", "-q", str(repo))
    git("commit", "-q", "--allow-empty", "-m", "one", cwd=repo)
    a = git("rev-parse", "HEAD", cwd=repo).decode().strip()
    git("update-ref", "refs/heads/a", a, cwd=repo)
    return repo, a


def _log(repo: Path, ref: str) -> list[str]:
    return [line[:81] for line in (repo / ".git/logs" / ref).read_text().splitlines()]


def _symref(repo: Path, ref: str) -> str:
    return git("symbolic-ref", "--no-recurse", ref, cwd=repo).decode().strip()


def test_symref_update_creates_and_logs_without_message(tmp_path: Path) -> None:
    repo, a = _repo(tmp_path)
    assert (
        run_cli(
            repo, "update-ref", "--stdin", stdin=b"symref-update refs/heads/symref refs/heads/a\n"
        )
        == 0
    )
    assert _symref(repo, "refs/heads/symref") == "refs/heads/a"
    assert _log(repo, "refs/heads/symref") == [f"{Z} {a}"]


def test_symref_update_through_symref_rewrites_its_referent(tmp_path: Path) -> None:
    repo, a = _repo(tmp_path)
    git("update-ref", "refs/heads/symref2", a, cwd=repo)
    git("symbolic-ref", "refs/heads/symref", "refs/heads/symref2", cwd=repo)
    assert (
        run_cli(
            repo, "update-ref", "--stdin", stdin=b"symref-update refs/heads/symref refs/heads/a\n"
        )
        == 0
    )
    assert _symref(repo, "refs/heads/symref") == "refs/heads/symref2"
    assert _symref(repo, "refs/heads/symref2") == "refs/heads/a"
    assert _log(repo, "refs/heads/symref")[-1] == f"{a} {a}"
    assert _log(repo, "refs/heads/symref2")[-1] == f"{a} {a}"


def test_symref_update_regular_ref_with_old_oid(tmp_path: Path) -> None:
    repo, a = _repo(tmp_path)
    git("update-ref", "refs/heads/regular", a, cwd=repo)
    cmd = f"symref-update refs/heads/regular refs/heads/a oid {a}\n".encode()
    assert run_cli(repo, "update-ref", "--stdin", stdin=cmd) == 0
    assert _symref(repo, "refs/heads/regular") == "refs/heads/a"
    assert _log(repo, "refs/heads/regular")[-1] == f"{a} {a}"


def test_symref_update_zero_old_oid_through_symref(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    repo, a = _repo(tmp_path)
    git("update-ref", "refs/heads/target2", a, cwd=repo)
    git("symbolic-ref", "refs/heads/symref", "refs/heads/target2", cwd=repo)
    capfd.readouterr()
    cmd = f"symref-update refs/heads/symref refs/heads/a oid {Z}\n".encode()
    assert run_cli(repo, "update-ref", "--stdin", stdin=cmd) == 128
    assert capfd.readouterr().err == (
        "fatal: cannot lock ref 'refs/heads/symref': reference already exists\n"
    )
    assert _symref(repo, "refs/heads/symref") == "refs/heads/target2"
    # a dangling symref: its (missing) referent is created as the symref
    git("update-ref", "-d", "refs/heads/target2", cwd=repo)
    assert run_cli(repo, "update-ref", "--stdin", stdin=cmd) == 0
    assert _symref(repo, "refs/heads/target2") == "refs/heads/a"
    assert _symref(repo, "refs/heads/symref") == "refs/heads/target2"
