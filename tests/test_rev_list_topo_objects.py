"""``rev-list --objects``/``--objects-edge`` with ``--topo-order``/``--date-order``,
several start points and a commit-graph: Git does not limit that walk, and the trees
it excludes are those of the commits its first exploration (``init_topo_walk``) has
marked excluded by then.  Two histories built so that the marking shows in the
objects listed, compared byte for byte with the ``git`` on PATH (and Git 2.55 when
it is there):

* ``deep``: the excluded tip's exploration reaches, two parents down, a commit whose
  parents it has parsed; Git marks that commit's parent too, which is the parent of
  the listed tip: its tree is excluded, and a blob the two share is not listed.
* ``tip``: a start commit is reached from the excluded one by the exploration: it
  is excluded then (its tree goes, its parents are no edges).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from helpers import as_gitodb, git_env, run_cli

GIT255 = Path(os.environ.get("GITODB_GIT_255", "/work/shared/git-2.55/git/bin/git"))


def _run(path: Path, *args: str, date: int | None = None) -> bytes:
    env = git_env()
    if date is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{1700000000 + date} +0000"
    return subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True).stdout


def _commit(path: Path, date: int, message: str, **files: str) -> None:
    for name, text in files.items():
        (path / name).write_text(text + "\n")
        _run(path, "add", name)
    _run(path, "commit", "-q", "-m", message, date=date)


@pytest.fixture(scope="module")
def deep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """P(10) <- Q(20) <- M(36) <- N(40) = n;  P <- X(35) = x (X keeps P's a)."""
    path = tmp_path_factory.mktemp("topodeep")
    _run(path, "init", "-q", "-b", "main")
    _commit(path, 10, "P", a="p")
    _run(path, "tag", "P")
    _commit(path, 20, "Q", a="q")
    _commit(path, 36, "M", a="m")
    _commit(path, 40, "N", a="n")
    _run(path, "branch", "n")
    _run(path, "checkout", "-q", "P")
    _commit(path, 35, "X", b="x")
    _run(path, "branch", "x")
    _run(path, "checkout", "-q", "main")
    _run(path, "commit-graph", "write", "--reachable")
    return path


@pytest.fixture(scope="module")
def tip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """P(10) <- Y(20) = y <- M(36) <- N(40) = n;  P <- X(35) = x (X has Y's a)."""
    path = tmp_path_factory.mktemp("topotip")
    _run(path, "init", "-q", "-b", "main")
    _commit(path, 10, "P", a="p")
    _run(path, "tag", "P")
    _commit(path, 20, "Y", a="y")
    _run(path, "branch", "y")
    _commit(path, 36, "M", a="m")
    _commit(path, 40, "N", a="n")
    _run(path, "branch", "n")
    _run(path, "checkout", "-q", "P")
    _commit(path, 35, "X", a="y", b="x")
    _run(path, "branch", "x")
    _run(path, "checkout", "-q", "main")
    _run(path, "commit-graph", "write", "--reachable")
    return path


CASES = [
    "--objects --topo-order x --not n",
    "--objects --date-order x --not n",
    "--objects-edge --topo-order x --not n",
    "--objects --topo-order x y --not n",
    "--objects --date-order y x --not n",
    "--objects-edge --topo-order x y --not n",
    "--objects --topo-order --all --not n",
    "--objects --topo-order x n --not P",
    "--objects x y --not n",  # the limited walk, for contrast
]


def _check(repo: Path, args: str, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    argv = ["rev-list", *args.split()]
    want = as_gitodb(_run(repo, *argv))
    if GIT255.exists():
        newer = subprocess.run(
            [str(GIT255), *argv], cwd=repo, env=git_env(), check=True, capture_output=True
        ).stdout
        assert as_gitodb(newer) == want
    capfdbinary.readouterr()
    status = run_cli(repo, *argv)
    out, err = capfdbinary.readouterr()
    assert (status, out, err) == (0, want, b"")


@pytest.mark.parametrize("args", [c for c in CASES if " y" not in c])
def test_deep_marking(deep: Path, args: str, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    _check(deep, args, capfdbinary)


@pytest.mark.parametrize("args", CASES)
def test_explored_tip(tip: Path, args: str, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    _check(tip, args, capfdbinary)


def test_cases_show_the_marking(deep: Path, tip: Path) -> None:
    """The histories do what they are for: Git leaves out the blob the listed tip
    shares with the commit its exploration marked."""
    listed = _run(deep, "rev-list", "--objects", "--topo-order", "x", "--not", "n")
    shared = _run(deep, "rev-parse", "P:a").strip()
    assert shared not in listed
    listed = _run(tip, "rev-list", "--objects", "--topo-order", "x", "y", "--not", "n")
    assert _run(tip, "rev-parse", "y:a").strip() not in listed
