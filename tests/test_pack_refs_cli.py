"""pack-refs: --include/--exclude/--auto, symlinked packed-refs, broken tags not peeled."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import git, run_cli


def _repo(tmp_path: Path, *branches: str) -> Path:
    root = tmp_path / "r"
    git("init", "-q", "-b", "main", root)
    git("commit", "-q", "--allow-empty", "-m", "x", cwd=root)
    for b in branches:
        git("branch", b, cwd=root)
    return root


def _loose(root: Path, name: str) -> bool:
    return (root / ".git" / name).is_file()


def test_include_exclude(tmp_path: Path) -> None:
    root = _repo(tmp_path, "dont_pack1", "pack_this", "keep")
    git("tag", "t1", cwd=root)
    assert run_cli(root, "pack-refs", "--all", "--exclude", "refs/heads/dont_pack*") == 0
    assert _loose(root, "refs/heads/dont_pack1") and not _loose(root, "refs/heads/pack_this")
    git("branch", "p1", cwd=root)
    git("branch", "p2", cwd=root)
    git("tag", "t2", cwd=root)
    assert run_cli(root, "pack-refs", "--include", "refs/heads/p1") == 0
    assert not _loose(root, "refs/heads/p1") and _loose(root, "refs/heads/p2")
    assert _loose(root, "refs/tags/t2")  # --include replaces the default tags
    assert run_cli(root, "pack-refs", "--include", "refs/heads/p*", "--no-include") == 0
    assert _loose(root, "refs/heads/p2") and not _loose(root, "refs/tags/t2")
    assert run_cli(root, "pack-refs", "--include", "refs/heads/*", "--exclude", "refs/heads/*") == 0
    assert _loose(root, "refs/heads/p2")
    assert git("for-each-ref", cwd=root).count(b"\n") == 8


def test_auto_threshold(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    data = "".join(f"create refs/heads/loose-{i} HEAD\n" for i in range(14)).encode()
    git("update-ref", "--stdin", cwd=root, input=data)
    assert run_cli(root, "pack-refs", "--auto", "--all") == 0
    assert not (root / ".git/packed-refs").exists()  # 15 loose refs: below 16
    git("update-ref", "refs/heads/loose-15", "HEAD", cwd=root)
    assert run_cli(root, "pack-refs", "--auto", "--all") == 0
    assert (root / ".git/packed-refs").exists()


def test_symlinked_packed_refs_stays_a_link(tmp_path: Path) -> None:
    root = _repo(tmp_path, "a")
    git("pack-refs", "--all", cwd=root)
    gd = root / ".git"
    (gd / "packed-refs").rename(gd / "deviant")
    os.symlink("deviant", gd / "packed-refs")
    git("branch", "b", cwd=root)
    before = git("for-each-ref", cwd=root)
    assert run_cli(root, "pack-refs", "--all") == 0
    assert (gd / "packed-refs").is_symlink() and os.readlink(gd / "packed-refs") == "deviant"
    assert git("for-each-ref", cwd=root) == before


def test_broken_tag_gets_no_peeled_value(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    blob = git("hash-object", "-w", "--stdin", cwd=root, input=b"garbage\n").decode().strip()
    tag = (
        f"object {blob}\ntype commit\ntag bad\n"
        "tagger C O Mitter <c@example.com> 1112354055 +0200\n\nannotated\n"
    ).encode()
    oid = (
        git("hash-object", "-w", "-t", "tag", "--stdin", "--literally", cwd=root, input=tag)
        .decode()
        .strip()
    )
    git("update-ref", "refs/tags/bad", oid, cwd=root)
    assert run_cli(root, "pack-refs", "--all") == 0
    assert b"\n^" not in (root / ".git/packed-refs").read_bytes()


def test_unterminated_packed_refs_named_like_git(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    root = _repo(tmp_path, "a")
    git("pack-refs", "--all", cwd=root)
    head = git("rev-parse", "HEAD", cwd=root).decode().strip()
    with open(root / ".git/packed-refs", "a") as f:
        f.write(f"{head} refs/zzzzz")
    capfdbinary.readouterr()
    assert run_cli(root, "for-each-ref") == 128
    assert (
        capfdbinary.readouterr().err
        == (f"fatal: unterminated line in .git/packed-refs: {head} refs/zzzzz\n").encode()
    )


def test_usage(tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    root = _repo(tmp_path)
    assert run_cli(root, "pack-refs", "--bogus") == 129
    assert run_cli(root, "pack-refs", "extra") == 129


def test_unchanged_update_keeps_ref_packed(tmp_path: Path) -> None:
    root = _repo(tmp_path, "q")
    git("pack-refs", "--all", cwd=root)
    head = git("rev-parse", "HEAD", cwd=root).decode().strip()
    assert run_cli(root, "update-ref", "refs/heads/q", "refs/heads/q") == 0
    assert not _loose(root, "refs/heads/q")
    assert run_cli(root, "update-ref", "-m", "same", "refs/heads/main", head) == 0
    assert not _loose(root, "refs/heads/main")
    assert git("reflog", "show", "--format=%gs", "main", cwd=root).startswith(b"same\n")
