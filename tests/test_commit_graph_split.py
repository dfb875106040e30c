"""Split commit-graph chains: layers merged on write (``--split``, ``--size-multiple``,
``--max-commits``), ``--split=no-merge|replace``, expiry of unused layers
(``--expire-time``), compared file for file with the ``git`` on PATH."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from helpers import git, run_cli

CDIR = Path(".git/objects/info/commit-graphs")


def _commit(repo: Path, n: int, tag: str) -> None:
    for i in range(n):
        (repo / "f").write_text(f"{tag} {i}\n")
        git("add", ".", cwd=repo)
        git("commit", "-q", "-m", f"{tag}{i}", cwd=repo)


def _state(repo: Path) -> dict[str, bytes]:
    d = repo / CDIR
    out = {n: (d / n).read_bytes() for n in sorted(os.listdir(d))} if d.exists() else {}
    single = repo / ".git/objects/info/commit-graph"
    if single.exists():
        out["commit-graph"] = single.read_bytes()
    return out


@pytest.fixture
def twins(tmp_path: Path) -> tuple[Path, Path]:
    ours = tmp_path / "ours"
    git("init", "-q", ours)
    _commit(ours, 3, "a")
    theirs = tmp_path / "theirs"
    shutil.copytree(ours, theirs, symlinks=True)
    return ours, theirs


# Each step: commits to add, then the write's arguments.
SCENARIOS = {
    "merge-by-size": [(3, ["--split"]), (1, ["--split"]), (2, ["--split"]), (9, ["--split"])],
    "no-merge": [(3, ["--split"]), (2, ["--split=no-merge"]), (8, ["--split=no-merge"])],
    "size-multiple": [
        (3, ["--split"]),
        (1, ["--split", "--size-multiple=5"]),
        (1, ["--split", "--size-multiple=5"]),
        (1, ["--split", "--size-multiple=1"]),
    ],
    "max-commits": [
        (2, ["--split=no-merge"]),
        (2, ["--split=no-merge"]),
        (1, ["--split", "--size-multiple=100000", "--max-commits=2"]),
        (3, ["--split", "--max-commits", "1"]),
    ],
    "replace": [(2, ["--split"]), (2, ["--split=no-merge"]), (1, ["--split=replace"])],
    "single-after-chain": [(2, ["--split"]), (2, ["--split=no-merge"]), (1, [])],
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_chain_matches_git(name: str, twins: tuple[Path, Path]) -> None:
    ours, theirs = twins
    git("commit-graph", "write", "--reachable", cwd=theirs)
    git("commit-graph", "write", "--reachable", cwd=ours)
    for step, (n, args) in enumerate(SCENARIOS[name]):
        for r in (ours, theirs):
            _commit(r, n, f"s{step}")
        git("commit-graph", "write", "--reachable", *args, cwd=theirs)
        assert run_cli(ours, "commit-graph", "write", "--reachable", *args) == 0
        assert _state(ours) == _state(theirs), (step, args)
    assert git("commit-graph", "verify", cwd=ours) == b""
    assert run_cli(ours, "commit-graph", "verify") == 0


@pytest.mark.parametrize("expire", ["2000000000", "1000000000"])
def test_expire_time_decides_about_unused_layers(expire: str, twins: tuple[Path, Path]) -> None:
    ours, theirs = twins
    for r in (ours, theirs):
        git("commit-graph", "write", "--reachable", "--split", cwd=r)
        _commit(r, 1, "x")
        git("commit-graph", "write", "--reachable", "--split=no-merge", cwd=r)
        _commit(r, 3, "y")
        # Stale files no chain lists: one old, one "from the future".
        (layer,) = [p for p in (r / CDIR).glob("graph-*.graph")][:1]
        for name, when in (("0" * 40, 1_000_000), ("f" * 40, 4_000_000_000)):
            stale = r / CDIR / f"graph-{name}.graph"
            stale.write_bytes(layer.read_bytes())
            os.utime(stale, (when, when))
    # Both layers are merged into the new one: Git stamps them with the time now,
    # so a past --expire-time keeps them and a later one removes them.
    args = ["--reachable", "--split", f"--expire-time={expire}"]
    git("commit-graph", "write", *args, cwd=theirs)
    assert run_cli(ours, "commit-graph", "write", *args) == 0
    assert sorted(_state(ours)) == sorted(_state(theirs))
    assert _state(ours) == _state(theirs)
    names = {p.name for p in (ours / CDIR).glob("graph-*.graph")}
    assert f"graph-{'f' * 40}.graph" in names and f"graph-{'0' * 40}.graph" not in names
    assert len(names) == (2 if expire == "2000000000" else 4)


def test_bad_split_values_are_errors(twins: tuple[Path, Path]) -> None:
    ours, _theirs = twins
    assert run_cli(ours, "commit-graph", "write", "--split", "--size-multiple=x") == 128
    assert run_cli(ours, "commit-graph", "write", "--split", "--max-commits") == 129
