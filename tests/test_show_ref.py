"""show-ref's modes and options, compared with git on PATH (Git 2.55 wording where newer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import git, run_cli


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sr") / "r"
    git("init", "-q", "-b", "main", root)
    git("commit", "-q", "--allow-empty", "-m", "A", cwd=root)
    git("tag", "-a", "-m", "A", "A", cwd=root)
    git("checkout", "-q", "-b", "side", cwd=root)
    git("commit", "-q", "--allow-empty", "-m", "B", cwd=root)
    git("tag", "-a", "-m", "B", "B", cwd=root)
    git("checkout", "-q", "main", cwd=root)
    git("commit", "-q", "--allow-empty", "-m", "C", cwd=root)
    git("tag", "C", cwd=root)
    git("branch", "B", "A^0", cwd=root)
    return root


def ours(
    repo: Path, cap: pytest.CaptureFixture[bytes], *args: str, stdin: bytes | None = None
) -> tuple[int, bytes, bytes]:
    cap.readouterr()
    code = run_cli(repo, "show-ref", *args, stdin=stdin)
    got = cap.readouterr()
    return code, got.out, got.err


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["A"],
        ["tags/A"],
        ["-d", "A", "C"],
        ["--verify", "-d", "refs/tags/A", "refs/tags/C"],
        ["--head"],
        ["--head", "B"],
        ["--head", "-d", "B"],
        ["--tags"],
        ["--heads", "--tags"],
        ["-s"],
        ["--hash=6", "-d", "A"],
        ["--abbrev=5"],
        ["--abbrev"],
        ["-q", "A"],
        ["--verify", "HEAD"],
        ["--verify", "-q", "refs/tags/A"],
        ["D"],
    ],
)
def test_matches_git(
    repo: Path, capfdbinary: pytest.CaptureFixture[bytes], args: list[str]
) -> None:
    code, out, _ = ours(repo, capfdbinary, *args)
    want = git("show-ref", *args, cwd=repo, check=False)
    assert out == want
    assert code == (0 if want or "-q" in args and "D" not in args else 1)


def test_verify_failures(repo: Path, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    assert ours(repo, capfdbinary, "--verify", "A") == (128, b"", b"fatal: 'A' - not a valid ref\n")
    assert ours(repo, capfdbinary, "--verify", "-q", "A") == (1, b"", b"")
    assert ours(repo, capfdbinary, "--verify")[2] == b"fatal: --verify requires a reference\n"


def test_exists_and_modes(repo: Path, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    assert ours(repo, capfdbinary, "--exists", "refs/tags/A") == (0, b"", b"")
    assert ours(repo, capfdbinary, "--exists", "refs/tags/D") == (
        2,
        b"",
        b"error: reference does not exist\n",
    )
    git("symbolic-ref", "refs/heads/dangling", "refs/heads/nowhere", cwd=repo)
    try:
        assert ours(repo, capfdbinary, "--exists", "refs/heads/dangling")[0] == 0
    finally:
        git("symbolic-ref", "-d", "refs/heads/dangling", cwd=repo)
    code, _, err = ours(repo, capfdbinary, "--verify", "--exclude-existing")
    assert (code, err) == (
        128,
        b"fatal: options '--exclude-existing' and '--verify' cannot be used together\n",  # Git 2.55
    )
    assert ours(repo, capfdbinary, "--branches") == (0, git("show-ref", "--heads", cwd=repo), b"")
    code, out, _ = ours(repo, capfdbinary, "-h")
    assert (
        code == 129 and out.startswith(b"usage: gitodb show-ref [--head]") and b"--heads" not in out
    )


def test_exclude_existing(repo: Path, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    data = b"x refs/tags/A\ny refs/tags/Z^{}\nz foo\n\tw refs/heads/new\n"
    for args in ([], ["--exclude-existing=refs/t"]):
        args = args or ["--exclude-existing"]
        code, out, err = ours(repo, capfdbinary, *args, stdin=data)
        assert out == git("show-ref", *args, cwd=repo, input=data)
    assert err == b"" and code == 0
