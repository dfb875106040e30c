"""Writing changed-path Bloom filters as Git does (t4216): ``--max-new-filters`` and
``commitGraph.maxNewFilters``, filters reused from the graph being replaced, the
settings a graph keeps, the trace2 counts, layers whose settings disagree, and
``commitGraph.changedPathsVersion``.

Each case runs the same commands on two copies of a repository, one with gitodb
and one with Git (2.39 on PATH; 2.55 for what 2.39 does not have, skipped without
``../shared``), and compares the graph files byte for byte, the trace2 counts and
the warnings.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env

GIT255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"
needs_255 = pytest.mark.skipif(not GIT255.exists(), reason="needs ../shared/git-2.55")
GRAPH = "objects/info/commit-graph"


def _commits(repo: Path, files: list[str]) -> None:
    for i, name in enumerate(files):
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{i}\n")
        git("add", "-A", cwd=repo)
        git("commit", "-q", "--allow-empty", "-m", f"c{i}", cwd=repo)


def _run(tool: list[str], repo: Path, *args: str, env: dict[str, str] | None = None):
    """Run ``tool args`` in ``repo``; (status, stderr, the trace2 data of the run)."""
    trace = repo / "trace.json"
    trace.unlink(missing_ok=True)
    e = {**git_env(), "GIT_TRACE2_EVENT": str(trace), **(env or {})}
    p = subprocess.run([*tool, *args], cwd=repo, env=e, capture_output=True)
    data = {}
    if trace.exists():
        for line in trace.read_text().splitlines():
            ev = json.loads(line)
            if ev["event"] in ("data", "data_json") and ev["category"] in ("commit-graph", "bloom"):
                data[ev["key"]] = ev["value"]
    trace.unlink(missing_ok=True)
    return p.returncode, p.stderr, data


GITODB = [sys.executable, "-m", "gitodb"]


def _pair(tmp_path: Path, files: list[str]) -> tuple[Path, Path]:
    a = tmp_path / "mine"
    git("init", "-q", a)
    _commits(a, files)
    b = tmp_path / "theirs"
    shutil.copytree(a, b)
    return a, b


def _same(mine: Path, theirs: Path, git_cmd: list[str], *args: str, **env: str) -> dict:
    """Run ``commit-graph write args`` on both; assert the same outcome and files."""
    ours = _run(GITODB, mine, "commit-graph", "write", *args, env=env)
    ref = _run(git_cmd, theirs, "commit-graph", "write", *args, env=env)
    if "filter-upgraded" not in ref[2]:  # Git 2.39 did not count upgrades yet
        ours[2].pop("filter-upgraded", None)
    assert ours == ref, (args, ours, ref)
    for rel in (".git/" + GRAPH,):
        a, b = mine / rel, theirs / rel
        assert a.exists() == b.exists()
        if a.exists():
            assert a.read_bytes() == b.read_bytes(), args
    return ref[2]


def test_max_new_filters_backfills_a_few_at_a_time(tmp_path: Path) -> None:
    mine, theirs = _pair(tmp_path, ["a", "b/c", "b/d", "e", "f/g/h", "a"])
    for _ in range(3):
        got = _same(mine, theirs, ["git"], "--reachable", "--changed-paths", "--max-new-filters=2")
        assert (got["filter-computed"], got["filter-not-computed"]) in (("2", "4"), ("2", "2"))
    got = _same(mine, theirs, ["git"], "--reachable", "--changed-paths", "--max-new-filters=2")
    assert got["filter-computed"] == "0"


def test_the_configured_limit_and_the_option_that_overrides_it(tmp_path: Path) -> None:
    mine, theirs = _pair(tmp_path, ["a", "b", "c"])
    for repo in (mine, theirs):
        git("config", "commitGraph.maxNewFilters", "1", cwd=repo)
    got = _same(mine, theirs, ["git"], "--reachable", "--changed-paths")
    assert got["filter-computed"] == "1"
    got = _same(mine, theirs, ["git"], "--reachable", "--changed-paths", "--max-new-filters=5")
    assert got["filter-computed"] == "2"
    _same(mine, theirs, ["git"], "--reachable", "--changed-paths", "--no-max-new-filters")


def test_settings_persist_and_limits_truncate(tmp_path: Path) -> None:
    mine, theirs = _pair(tmp_path, ["d/e/1", "d/e/2", "d/1", "d/2", "m/s", "f/b", "f.txt"])
    env = {
        "GIT_TEST_BLOOM_SETTINGS_NUM_HASHES": "9",
        "GIT_TEST_BLOOM_SETTINGS_BITS_PER_ENTRY": "15",
    }
    got = _same(mine, theirs, ["git"], "--reachable", "--changed-paths", **env)
    # the graph's settings win over the defaults in the next write
    _same(mine, theirs, ["git"], "--reachable")
    for repo in (mine, theirs):
        (repo / ".git" / GRAPH).unlink()
    got = _same(
        mine,
        theirs,
        ["git"],
        "--reachable",
        "--changed-paths",
        GIT_TEST_BLOOM_SETTINGS_MAX_CHANGED_PATHS="2",
    )
    assert got["filter-trunc-large"] != "0"


def test_empty_commits_get_the_one_byte_filter(tmp_path: Path) -> None:
    mine, theirs = _pair(tmp_path, [])
    for repo in (mine, theirs):
        git("commit", "-q", "--allow-empty", "-m", "empty", cwd=repo)
    got = _same(mine, theirs, ["git"], "--reachable", "--changed-paths")
    assert got["filter-trunc-empty"] == "1"


@needs_255
def test_layers_with_other_settings_are_read_without_their_filters(tmp_path: Path) -> None:
    mine, theirs = _pair(tmp_path, ["file", "file", "file"])
    runs = [
        (
            ["--stdin-commits", "--changed-paths", "--split"],
            "HEAD~2",
            {"GIT_TEST_BLOOM_SETTINGS_NUM_HASHES": "3"},
        ),
        (["--stdin-commits", "--no-changed-paths", "--split=no-merge"], "HEAD~1", {}),
        (["--stdin-commits", "--changed-paths", "--split=no-merge"], "HEAD", {}),
    ]
    for args, rev, env in runs:
        for tool, repo in ((GITODB, mine), ([str(GIT255)], theirs)):
            oid = git("rev-parse", rev, cwd=repo)
            p = subprocess.run(
                [*tool, "commit-graph", "write", *args],
                cwd=repo,
                input=oid,
                env={**git_env(), **env},
                capture_output=True,
            )
            assert p.returncode == 0, p.stderr
    log = ["log", "--oneline", "--no-decorate", "--", "file"]
    ours = _run(GITODB, mine, *log)
    ref = _run([str(GIT255)], theirs, *log)
    assert ours[:2] == ref[:2]
    assert b"disabling Bloom filters for commit-graph layer" in ref[1]
    # merging the layers keeps the top's settings and drops the odd layer's filters
    got = _same(mine, theirs, [str(GIT255)], "--reachable", "--changed-paths")
    assert got["settings"]["num_hashes"] == 7


@needs_255
def test_changed_paths_versions(tmp_path: Path) -> None:
    cent = "\u00a2"
    mine, theirs = _pair(tmp_path, ["plain", f"high{cent}"])
    g = [str(GIT255)]
    for repo in (mine, theirs):
        git("config", "commitGraph.changedPathsVersion", "1", cwd=repo)
    _same(mine, theirs, g, "--reachable", "--changed-paths")
    for v in ("-2", "3"):
        for repo in (mine, theirs):
            git("config", "commitGraph.changedPathsVersion", v, cwd=repo)
        _same(mine, theirs, g, "--reachable", "--changed-paths")
    for repo in (mine, theirs):
        git("config", "commitGraph.changedPathsVersion", "2", cwd=repo)
    # the plain commit's filter is taken as version 2; the other is computed again
    got = _same(mine, theirs, g, "--reachable", "--changed-paths")
    assert (got["filter-upgraded"], got["filter-computed"]) == ("1", "1")
    got = _same(
        mine, theirs, g, "--reachable", "--changed-paths", GIT_TEST_UPGRADE_BLOOM_FILTERS="0"
    )
    assert os.path.exists(mine / ".git" / GRAPH)
