"""Small repositories for the bulk tests, built with git, and git's view of them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from helpers import git, git_env

GIT_255 = Path(os.environ.get("GITODB_GIT_255", "/work/shared/git-2.55/git/bin/git"))


def _env(git_bin: str) -> dict[str, str]:
    """git's isolated environment; a git other than PATH's comes first on PATH (its
    own sub-processes must be that git too)."""
    env = git_env()
    if git_bin != "git":
        env["PATH"] = os.path.dirname(git_bin) + os.pathsep + env.get("PATH", "")
    return env


def _commit(
    repo: Path, message: str, git_bin: str = "git", date: int = 0, add: bool = True
) -> None:
    env = _env(git_bin)
    stamp = f"{1700000000 + date} +0{date % 10}00"
    env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
    if add:
        subprocess.run([git_bin, "add", "-A"], cwd=repo, env=env, check=True)
    subprocess.run(
        [git_bin, "commit", "-q", "--allow-empty", "-m", message], cwd=repo, env=env, check=True
    )


def build_history(
    repo: Path, object_format: str = "sha1", git_bin: str = "git", ref_format: str | None = None
) -> Path:
    """A work tree with directories, modes, a symlink, a submodule entry, a file that
    becomes a directory, a merge, tags; packed, then loose objects on top."""
    args = [git_bin, "init", "-q", f"--object-format={object_format}"]
    if ref_format:
        args.append(f"--ref-format={ref_format}")
    subprocess.run([*args, str(repo)], env=_env(git_bin), check=True)

    def run(*a: str) -> bytes:
        return subprocess.run(
            [git_bin, *a], cwd=repo, env=_env(git_bin), check=True, capture_output=True
        ).stdout

    run("config", "user.name", "A U Thor")
    run("config", "user.email", "author@example.com")
    (repo / "src").mkdir()
    for i in range(4):
        (repo / "src" / f"m{i}.py").write_text("".join(f"line {j}\n" for j in range(50 + i)))
    (repo / "README").write_text("hello\n")
    (repo / "old").write_text("a file, later a directory\n")
    _commit(repo, "first\n\nwith a body\nof two lines", git_bin, 1)
    (repo / "src" / "m0.py").write_text("changed\n" * 40)
    (repo / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(repo / "run.sh", 0o755)
    os.symlink("README", repo / "link")
    (repo / "old").unlink()
    (repo / "old").mkdir()
    (repo / "old" / "inside").write_text("now a directory\n")
    _commit(repo, "second: modes, symlink, file to directory", git_bin, 2)
    run("tag", "-a", "v1", "-m", "version one")
    run("tag", "light")
    run("checkout", "-q", "-b", "side")
    (repo / "side.txt").write_text("side\n")
    (repo / "src" / "m1.py").unlink()
    _commit(repo, "side work", git_bin, 3)
    run("checkout", "-q", "-")
    (repo / "src" / "m2.py").write_text("main line\n")
    os.chmod(repo / "README", 0o755)
    _commit(repo, "main work", git_bin, 4)
    env = _env(git_bin)
    env.update(GIT_AUTHOR_DATE="1700000005 -0130", GIT_COMMITTER_DATE="1700000005 -0130")
    subprocess.run([git_bin, "merge", "-q", "--no-edit", "side"], cwd=repo, env=env, check=True)
    commit = run("rev-parse", "HEAD").decode().strip()
    # A submodule entry (a gitlink) pointing at a commit id.
    run("update-index", "--add", "--cacheinfo", f"160000,{commit},sub")
    (repo / "link").unlink()
    (repo / "link").write_text("a file now\n")  # symlink -> file: a type change
    run("add", "link")
    _commit(repo, "submodule entry; link becomes a file", git_bin, 6, add=False)
    run("gc", "-q")
    (repo / "late.txt").write_text("x" * 5000)
    run("add", "late.txt")
    _commit(repo, "late, loose", git_bin, 7, add=False)
    run("symbolic-ref", "refs/heads/alias", "refs/heads/side")
    run("update-ref", "refs/pull/1/head", "HEAD~2")  # walked, not named in reachable_from
    return repo


def corrupt_copy(src: Path, dest: Path) -> Path:
    """A copy of ``src`` whose pack is cut short (the index no longer matches it)."""
    shutil.copytree(src, dest, symlinks=True)
    (pack,) = (dest / ".git" / "objects" / "pack").glob("*.pack")
    data = pack.read_bytes()
    os.chmod(pack, 0o644)
    pack.write_bytes(data[: len(data) // 2] + bytes(len(data) - len(data) // 2))
    return dest


def gitc(repo: Path, *args: str) -> str:
    """git's output in ``repo`` as text (Git 2.55 for a reftable repository)."""
    if (repo / ".git" / "reftable").is_dir():
        return subprocess.run(
            [str(GIT_255), *args], cwd=repo, env=_env(str(GIT_255)), check=True, capture_output=True
        ).stdout.decode("utf-8")
    return git(*args, cwd=repo).decode("utf-8")
