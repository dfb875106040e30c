"""History commands import only the machinery they use (a structural check, no timing).

A plain walk (``rev-list --count --all``, ``rev-list --all --objects``, ``log
--format``) has no paths: the path limiter and the tree diff it runs on
(``history.simplify``, ``history.treediff``) stay unloaded, and so does the object
filter parser without ``--filter``.  ``ls-tree -r HEAD`` through the native listing
does not load the Python listing (``history.treewalk``, ``history.paths``,
``objects.pretty``, ``repo.abbrev``).  Each command runs in a fresh interpreter
(``python -S``) that reports ``sys.modules``, and its output is checked against git's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitodb.history import native
from helpers import git, git_env

PROBE = """
import io, sys
from gitodb.cli.main import main
class Kept(io.BytesIO):
    def close(self):  # the CLI closes its standard output when it is done
        pass
out = sys.stdout
buf = Kept()
sys.stdout = io.TextIOWrapper(buf)
status = main(sys.argv[1:])
sys.stdout = out
modules = sorted(sys.modules)
import json  # after the snapshot
print(json.dumps([status, modules, buf.getvalue().decode("latin-1")]))
"""

PATH_LIMITING = {"gitodb.history.simplify", "gitodb.history.treediff"}
PYTHON_LISTING = {
    "gitodb.history.treewalk",
    "gitodb.history.paths",
    "gitodb.objects.pretty",
    "gitodb.repo.abbrev",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two commits, a tag, a branch, packed, with a commit-graph."""
    path = tmp_path_factory.mktemp("history-imports") / "r"
    git("init", "-q", str(path))
    (path / "dir").mkdir()
    (path / "a.txt").write_text("a\n")
    (path / "dir" / "b.txt").write_text("b\n")
    git("-C", str(path), "add", ".")
    git("-C", str(path), "commit", "-q", "-m", "one")
    (path / "a.txt").write_text("a\na\n")
    git("-C", str(path), "commit", "-q", "-am", "two")
    git("-C", str(path), "tag", "-a", "-m", "t", "v1")
    git("-C", str(path), "branch", "topic", "HEAD~1")
    git("-C", str(path), "gc", "-q")
    git("-C", str(path), "commit-graph", "write", "--reachable")
    return path


def run_probe(repo: Path, *args: str) -> tuple[set[str], bytes]:
    """(modules loaded, stdout) of ``gitodb <args>`` in a fresh interpreter."""
    environ = {**git_env(), "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    p = subprocess.run(
        [sys.executable, "-S", "-c", PROBE, f"--git-dir={repo / '.git'}", *args],
        env=environ,
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    status, modules, out = json.loads(p.stdout.splitlines()[-1])
    assert status == 0, p.stderr
    return set(modules), out.encode("latin-1")


@pytest.mark.parametrize(
    "args",
    [
        ["rev-list", "--count", "--all"],
        ["rev-list", "--all", "--objects"],
        ["rev-list", "--topo-order", "--parents", "--all"],
        ["log", "--format=%H%x00%s"],
    ],
    ids=" ".join,
)
def test_a_walk_without_paths_loads_no_path_limiter(repo: Path, args: list[str]) -> None:
    loaded, out = run_probe(repo, *args)
    assert out == git(*args, cwd=repo)
    assert not loaded & PATH_LIMITING
    assert "gitodb.objects.filter" not in loaded


def test_a_walk_with_paths_loads_it(repo: Path) -> None:
    """The check above can fail: with a path the limiter is loaded (and used)."""
    loaded, out = run_probe(repo, "rev-list", "--all", "--", "a.txt")
    assert out == git("rev-list", "--all", "--", "a.txt", cwd=repo)
    assert PATH_LIMITING <= loaded


@pytest.mark.skipif(not native.enabled(), reason="native core not built")
def test_ls_tree_through_the_native_listing_loads_no_python_listing(repo: Path) -> None:
    loaded, out = run_probe(repo, "ls-tree", "-r", "HEAD")
    assert out == git("ls-tree", "-r", "HEAD", cwd=repo)
    assert not loaded & PYTHON_LISTING
    # a pathspec takes the Python listing, with its modules
    loaded, out = run_probe(repo, "ls-tree", "-r", "HEAD", "dir")
    assert out == git("ls-tree", "-r", "HEAD", "dir", cwd=repo)
    assert {"gitodb.history.treewalk", "gitodb.history.paths"} <= loaded
