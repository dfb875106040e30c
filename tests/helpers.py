"""Shared test helpers (import as `from helpers import git`): run git in isolation."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

DATA = Path(__file__).parent / "data"

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "A U Thor",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "C O Mitter",
    "GIT_COMMITTER_EMAIL": "committer@example.com",
    "GIT_AUTHOR_DATE": "1700000000 +0000",
    "GIT_COMMITTER_DATE": "1700000000 +0000",
    "LC_ALL": "C",
    "TZ": "UTC",
}


def git_env() -> dict[str, str]:
    """The process environment with Git isolated from user and system config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV)
    return env


def git(
    *args: str | os.PathLike[str],
    cwd: str | os.PathLike[str] | None = None,
    input: bytes | None = None,
    check: bool = True,
) -> bytes:
    """Run ``git`` and return its stdout."""
    proc = subprocess.run(
        ["git", *map(os.fspath, args)],
        cwd=cwd,
        input=input,
        capture_output=True,
        env=git_env(),
        check=False,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {args} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout


def commit_at(path: str | os.PathLike[str], message: str, n: int) -> None:
    """Commit (possibly empty) in ``path`` with author and committer time
    1700000000 + 100 * ``n``: histories whose order does not depend on the clock."""
    date = f"{1700000000 + n * 100} +0000"
    env = dict(git_env(), GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", message],
        cwd=path,
        env=env,
        check=True,
        capture_output=True,
    )


def make_pack(tmp_path: Path, object_format: str = "sha1", *git_options: str) -> Path:
    """A repository of 30 commits of 7 growing files, repacked; return its one pack."""
    repo = tmp_path / "repo"
    git("init", "-q", f"--object-format={object_format}", repo)
    for i in range(30):
        (repo / f"f{i % 7}.txt").write_text("".join(f"line {j} {i}\n" for j in range(200 + i)))
        git("add", ".", cwd=repo)
        git("commit", "-q", "-m", f"c{i}", cwd=repo)
    git(*git_options, "repack", "-q", "-a", "-d", "-f", cwd=repo)
    (pack,) = (repo / ".git/objects/pack").glob("*.pack")
    return pack


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its content (None for directories)."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), root)] = None
        for f in filenames:
            p = os.path.join(dirpath, f)
            out[os.path.relpath(p, root)] = Path(p).read_bytes()
    return out


def literal_tree(repo: str | os.PathLike[str], *entries: tuple[str, str, str]) -> str:
    """A tree written with ``hash-object --literally``, so without mktree's checks:
    ``(mode, name, hex id)`` entries as given, in that order, duplicates included."""
    data = b"".join(f"{m} {n}".encode() + b"\0" + bytes.fromhex(o) for m, n, o in entries)
    out = git("hash-object", "--literally", "-w", "-t", "tree", "--stdin", cwd=repo, input=data)
    return out.decode().strip()


def run_cli(path: str | os.PathLike[str], *args: str, stdin: bytes | None = None) -> int:
    """Run gitodb's CLI in-process from directory ``path`` (``stdin`` as its input)."""
    import io
    import sys

    from gitodb.cli.main import main

    old = os.getcwd()
    try:
        os.chdir(path)
        if stdin is not None:
            sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
        return main(list(args))
    finally:
        sys.stdin = sys.__stdin__
        os.chdir(old)


def run_gitodb(
    *args: str, cwd: str | os.PathLike[str], stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run ``python -m gitodb`` in a child process from ``cwd`` with git's isolated
    environment; the exit status and output are the caller's to check."""
    import sys

    return subprocess.run(
        [sys.executable, "-m", "gitodb", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=git_env(),
        check=False,
    )


def as_gitodb(output: bytes) -> bytes:
    """Git's output as gitodb prints it: usage lines name ``gitodb``, not ``git``."""
    from gitodb.cli.options import as_gitodb_usage

    return as_gitodb_usage(output.decode("utf-8", "surrogateescape")).encode(
        "utf-8", "surrogateescape"
    )
