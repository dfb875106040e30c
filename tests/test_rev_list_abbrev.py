"""rev-list's ``--oneline``, ``--abbrev-commit``, ``--abbrev=<n>``, ``--no-abbrev`` and
``--no-abbrev-commit`` alone and with the options they combine with, byte for byte
against the ``git`` on PATH (2.39, which agrees with Git 2.55 on all of these), and
``-z`` with the options Git 2.55 refuses with it, against Git 2.55 (skipped without
``../shared/git-2.55``; 2.39 has no ``-z`` for rev-list).

gitodb runs in-process (``run_cli``) so that the many cases stay quick.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from helpers import as_gitodb, git, git_env, run_cli

GIT255 = Path(os.environ.get("GITODB_GIT_255", "/work/shared/git-2.55/git/bin/git"))


def _git(exe: str | Path, cwd: Path, args: list[str]) -> tuple[int, bytes, bytes]:
    proc = subprocess.run(
        [os.fspath(exe), *args], cwd=cwd, capture_output=True, env=git_env(), check=False
    )
    return proc.returncode, as_gitodb(proc.stdout), as_gitodb(proc.stderr)


def _ours(
    cwd: Path, capfd: pytest.CaptureFixture[bytes], args: list[str]
) -> tuple[int, bytes, bytes]:
    capfd.readouterr()
    status = run_cli(cwd, *args)
    out, err = capfd.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main: a, b, c, a merge of side (d), e with a body; side's tip is d."""
    path = tmp_path_factory.mktemp("revabbrev")
    git("init", "-q", "-b", "main", path)

    def commit(name: str, message: str | None = None) -> None:
        (path / name).write_text(name + "\n")
        git("add", name, cwd=path)
        git("commit", "-q", "-m", message or name, cwd=path)

    commit("a")
    commit("b")
    git("checkout", "-q", "-b", "side", cwd=path)
    commit("d")
    git("checkout", "-q", "main", cwd=path)
    commit("c")
    git("merge", "-q", "--no-edit", "side", cwd=path)
    commit("e", "e\n\nthe body")
    return path


#: where the two Gits agree (the ids of parents, children and objects stay full)
CASES = [
    "--oneline -2 HEAD",
    "--abbrev-commit HEAD",
    "--no-abbrev-commit HEAD",
    "--abbrev=10 HEAD",
    "--abbrev-commit --abbrev=10 HEAD",
    "--abbrev=10 --oneline HEAD",
    "--abbrev=10 --abbrev --oneline HEAD",
    "--no-abbrev --oneline HEAD",
    "--oneline --no-abbrev-commit HEAD",
    "--no-abbrev-commit --oneline HEAD",
    "--oneline --abbrev=10 --no-abbrev --abbrev-commit HEAD",
    "--abbrev 10 --oneline HEAD",
    "--oneline --parents HEAD",
    "--oneline --children HEAD",
    "--abbrev-commit --parents --reverse HEAD",
    "--oneline --boundary HEAD~1..HEAD",
    "--abbrev-commit --boundary HEAD~1..HEAD",
    "--oneline --objects HEAD",
    "--abbrev-commit --objects --no-object-names HEAD~1..HEAD",
    "--oneline --left-right main...side",
    "--abbrev-commit --left-right --boundary main...side",
    "--oneline --cherry-mark main...side",
    "--oneline --graph HEAD",
    "--abbrev-commit --graph --parents HEAD",
    "--oneline --graph --left-right --boundary main...side",
    "--abbrev-commit --pretty=medium --graph HEAD~2..HEAD",
    "--abbrev=8 --format=%h%n%p --graph HEAD",
    "--abbrev-commit --pretty HEAD",
    "--abbrev-commit --pretty=short -1 HEAD~1",
    "--no-abbrev --pretty=medium -1 HEAD~1",
    "--abbrev=12 --pretty=medium -1 HEAD~1",
    "--abbrev=5 --pretty=full -1 HEAD~1",
    "--abbrev-commit --pretty=raw -1 HEAD~1",
    "--no-abbrev --abbrev-commit --pretty=fuller -1 HEAD~1",
    "--abbrev-commit --format=%H:%h:%p HEAD",
    "--abbrev=10 --format=%h:%p:%t HEAD",
    "--no-abbrev --format=%h:%p:%t HEAD",
    "--oneline --format=%s HEAD",
    "--format=%s --oneline HEAD",
    "--oneline --pretty=short HEAD",
    "--pretty=short --oneline HEAD",
    "--abbrev-commit --header HEAD",
    "--oneline --header HEAD",
    "--abbrev-commit --timestamp HEAD",
    "--oneline --count HEAD",
    "--oneline --disk-usage HEAD",
    "--abbrev-commit --bisect-all HEAD ^HEAD~3",
    "--abbrev-commit --bisect-vars --bisect-all HEAD ^HEAD~3",
]


@pytest.mark.parametrize("args", CASES)
def test_abbreviation(repo: Path, capfdbinary: pytest.CaptureFixture[bytes], args: str) -> None:
    argv = ["rev-list", *shlex.split(args)]
    assert _ours(repo, capfdbinary, argv) == _git("git", repo, argv)


@pytest.mark.parametrize(
    "value", ["0", "3", "-0", "+6", "10x", " 12", "", "x", "-5", "99", "4294967301", "9" * 20]
)
def test_abbrev_value_read_as_revision_c(
    repo: Path, capfdbinary: pytest.CaptureFixture[bytes], value: str
) -> None:
    """``--abbrev=<n>`` is C's ``strtoul`` stored in an int: never an error (for log,
    a revision option too, the same)."""
    for argv in (
        ["rev-list", "--oneline", f"--abbrev={value}", "HEAD"],
        ["log", "--abbrev-commit", f"--abbrev={value}", "--format=%h %p %t", "HEAD"],
    ):
        assert _ours(repo, capfdbinary, argv) == _git("git", repo, argv), argv
    argv = ["rev-list", "--oneline", f"--abbrev={value}", "HEAD"]
    assert _ours(repo, capfdbinary, argv) == _git("git", repo, argv)


def test_core_abbrev(tmp_path: Path, repo: Path, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    """Without ``--abbrev=<n>`` the length is ``core.abbrev``'s."""
    clone = tmp_path / "clone"
    git("clone", "-q", repo, clone)
    git("config", "core.abbrev", "9", cwd=clone)
    for args in ("--oneline origin/main", "--pretty=medium origin/main", "--format=%h %p HEAD"):
        argv = ["rev-list", *args.split()]
        assert _ours(clone, capfdbinary, argv) == _git("git", clone, argv)


#: what Git 2.55 refuses with -z (and the order of its checks: a bad revision, a
#: filter without --objects first; -z before the missing-revision usage and before
#: the marked-counting check); and what it takes
Z_CASES = [
    "-z --oneline HEAD",
    "-z --pretty HEAD",
    "-z --format=%s HEAD",
    "-z --graph HEAD",
    "-z --header HEAD",
    "-z --timestamp HEAD",
    "-z --left-right main...side",
    "-z --cherry-mark main...side",
    "-z --cherry main...side",
    "-z --disk-usage HEAD",
    "-z --bisect HEAD ^HEAD~3",
    "-z --bisect-all HEAD ^HEAD~3",
    "-z --bisect-vars HEAD ^HEAD~3",
    "-z --use-bitmap-index HEAD",
    "-z --oneline",
    "-z --header nosuch",
    "-z --graph --filter=blob:none HEAD",
    "-z --count --left-right --objects HEAD...side",
    "-z --abbrev-commit HEAD",
    "-z --abbrev-commit --parents HEAD",
    "-z --abbrev-commit --boundary HEAD~1..HEAD",
    "-z --abbrev-commit --objects HEAD~1..HEAD",
    "-z --no-abbrev --abbrev-commit HEAD",
]


@pytest.mark.skipif(not GIT255.exists(), reason="needs ../shared/git-2.55")
@pytest.mark.parametrize("args", Z_CASES)
def test_nul_refusals(repo: Path, capfdbinary: pytest.CaptureFixture[bytes], args: str) -> None:
    argv = ["rev-list", *shlex.split(args)]
    ours = _ours(repo, capfdbinary, argv)
    theirs = _git(GIT255, repo, argv)
    if theirs[0] == 129:
        # usage: gitodb's list of options is not Git 2.55's
        assert ours[:2] == theirs[:2]
    else:
        assert ours == theirs
