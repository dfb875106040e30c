"""``--graph`` for ``gitodb log`` and ``gitodb rev-list`` against ``git`` on PATH.

Histories are built in the test: octopus merges (skewed and not), merges fusing
with their neighbours, criss-cross merges, many branches at once (random DAGs
through ``git fast-import``), and path-limited history; libgit2 from the shared
corpus when it is there.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env
from oracle import assert_same, both

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "libgit2.git"


def _commit(repo: Path, name: str, path: str | None = None) -> None:
    (repo / (path or f"{name}.t")).write_text(name + "\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", name, cwd=repo)
    git("tag", f"t_{name}", cwd=repo)


def _merge(repo: Path, name: str, *heads: str) -> None:
    git("merge", "-q", "--no-ff", "-m", name, *heads, cwd=repo)
    git("tag", f"t_{name}", cwd=repo)


@pytest.fixture(scope="module")
def octopus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """t4214's history: an octopus merge of four branches, and a left-skewed one."""
    repo = tmp_path_factory.mktemp("octopus")
    git("init", "-q", "-b", "main", repo)
    _commit(repo, "initial")
    for i in "1234":
        git("checkout", "-q", "-b", f"b{i}", "main", cwd=repo)
        _commit(repo, f"c{i}")
    git("checkout", "-q", "-b", "merge", "b1", cwd=repo)
    _merge(repo, "octopus", "b2", "b3", "b4")
    _commit(repo, "after-merge")
    git("checkout", "-q", "-b", "left", "b1", cwd=repo)
    _commit(repo, "left")
    git("checkout", "-q", "-b", "crossover", "b4", cwd=repo)
    _commit(repo, "after-4")
    git("checkout", "-q", "-b", "more-left", "t_initial", cwd=repo)
    _commit(repo, "after-initial")
    return repo


@pytest.fixture(scope="module")
def skewed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Merges fusing with their left and right neighbours, and a criss-cross."""
    repo = tmp_path_factory.mktemp("skewed")
    git("init", "-q", "-b", "main", repo)
    _commit(repo, "A")
    git("checkout", "-q", "-b", "b", cwd=repo)
    _commit(repo, "B")
    git("checkout", "-q", "-b", "c", "t_A", cwd=repo)
    _commit(repo, "C")
    git("checkout", "-q", "main", cwd=repo)
    _commit(repo, "D")
    _merge(repo, "E", "b")
    git("checkout", "-q", "c", cwd=repo)
    _merge(repo, "F", "b")
    git("checkout", "-q", "main", cwd=repo)
    _merge(repo, "G", "c")
    # criss-cross: x and y merge each other twice
    git("checkout", "-q", "-b", "x", "t_A", cwd=repo)
    _commit(repo, "X1")
    git("checkout", "-q", "-b", "y", "t_A", cwd=repo)
    _commit(repo, "Y1")
    _merge(repo, "Y2", "t_X1")
    git("checkout", "-q", "x", cwd=repo)
    _merge(repo, "X2", "t_Y1")
    _commit(repo, "X3")
    git("checkout", "-q", "y", cwd=repo)
    _commit(repo, "Y3")
    _merge(repo, "Y4", "x")
    # an octopus skewed left onto a branch whose column is further left
    git("checkout", "-q", "-b", "o1", "t_A", cwd=repo)
    _commit(repo, "O1")
    git("checkout", "-q", "-b", "o2", "t_A", cwd=repo)
    _commit(repo, "O2")
    git("checkout", "-q", "-b", "o3", "t_B", cwd=repo)
    _commit(repo, "O3")
    _merge(repo, "OM", "o1", "o2", "t_D")
    return repo


def _random_history(repo: Path, seed: int, n: int, max_parents: int) -> None:
    """A DAG of ``n`` commits over ten branches, with merges of up to ``max_parents``
    parents and commit times out of order (``git fast-import``)."""
    rnd = random.Random(seed)
    git("init", "-q", repo)
    chunks = []
    when = 1_600_000_000
    for i in range(1, n + 1):
        k = rnd.random()
        marks = list(range(1, i))
        if not marks:
            parents = []
        elif k < 0.55:
            parents = [rnd.choice(marks[-8:])]
        elif k < 0.8:
            parents = [rnd.choice(marks)]
        elif k < 0.93:
            parents = rnd.sample(marks, min(2, len(marks)))
        else:
            parents = rnd.sample(marks, min(rnd.randint(3, max_parents), len(marks)))
        when += rnd.randint(-500, 3000)
        chunks.append(
            f"commit refs/heads/b{rnd.randint(0, 9)}\nmark :{i}\n"
            f"committer C <c@x> {when} +0000\ndata <<E\nc{i}\nE\n"
        )
        if parents:
            chunks.append(f"from :{parents[0]}\n")
            chunks.extend(f"merge :{p}\n" for p in parents[1:])
        else:
            chunks.append("deleteall\n")
        chunks.append(f"M 644 inline f{rnd.randint(0, 5)}\ndata <<E\n{i}\nE\n\n")
    git("fast-import", "--quiet", "--force", cwd=repo, input="".join(chunks).encode())


@pytest.fixture(scope="module", params=[(1, 40, 4), (5, 80, 6), (11, 120, 3)])
def dag(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    seed, n, most = request.param
    repo = tmp_path_factory.mktemp(f"dag{seed}")
    _random_history(repo, seed, n, most)
    return repo


@pytest.fixture(scope="module")
def simplify(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """t6016's history: branches A, B, C touching foo/bar/abc/xyz, an octopus."""
    repo = tmp_path_factory.mktemp("simplify")
    git("init", "-q", "-b", "A", repo)
    _commit(repo, "A1", "foo.txt")
    _commit(repo, "A2", "bar.txt")
    _commit(repo, "A3", "bar.txt")
    git("checkout", "-q", "-b", "B", "t_A1", cwd=repo)
    _commit(repo, "B1", "foo.txt")
    _commit(repo, "B2", "abc.txt")
    git("checkout", "-q", "-b", "C", "t_A2", cwd=repo)
    _commit(repo, "C1", "xyz.txt")
    _commit(repo, "C2", "xyz.txt")
    git("checkout", "-q", "A", cwd=repo)
    _merge(repo, "A4", "B", "C")
    _commit(repo, "A5", "bar.txt")
    git("checkout", "-q", "C", cwd=repo)
    _commit(repo, "C3", "foo.txt")
    _commit(repo, "C4", "bar.txt")
    git("checkout", "-q", "A", cwd=repo)
    git("merge", "-q", "-s", "ours", "-m", "A6", "C", cwd=repo)
    _commit(repo, "A7", "bar.txt")
    return repo


LOG_ARGS = [
    ["log", "--graph", "--oneline", "--all"],
    ["log", "--graph", "--all", "--format=%s"],
    ["log", "--graph", "--all", "--format=format:%s"],
    ["log", "--graph", "--all", "--format=%s%n%b"],
    ["log", "--graph", "--all"],
    ["log", "--graph", "--all", "--pretty=short", "--decorate"],
    ["log", "--graph", "--all", "--date-order", "--format=%s"],
    ["log", "--graph", "--all", "--first-parent", "--oneline"],
    ["log", "--graph", "--all", "--oneline", "--parents"],
    ["log", "--graph", "--all", "--oneline", "--no-merges"],
    ["log", "--graph", "--all", "--oneline", "-n", "7"],
    ["log", "--graph", "--all", "--oneline", "--skip=3", "-n", "9"],
    ["log", "--graph", "--all", "--format="],
]

REV_LIST_ARGS = [
    ["rev-list", "--graph", "--all"],
    ["rev-list", "--graph", "--all", "--parents"],
    ["rev-list", "--graph", "--all", "--format=%s"],
    ["rev-list", "--graph", "--all", "--pretty=medium"],
    ["rev-list", "--graph", "--all", "--count"],
    ["rev-list", "--graph", "--all", "--first-parent"],
    ["rev-list", "--graph", "--all", "--date-order", "--timestamp"],
]


@pytest.mark.parametrize("args", LOG_ARGS + REV_LIST_ARGS, ids=" ".join)
def test_octopus(octopus: Path, args: list[str]) -> None:
    assert_same(octopus, *args)


@pytest.mark.parametrize(
    "args",
    [
        ["log", "--graph", "--format=%s", "left", "octopus"],
        ["log", "--graph", "--date-order", "--format=%s", "left", "octopus", "after-4"],
        ["log", "--graph", "--format=%s", "merge", "crossover", "more-left"],
        ["log", "--graph", "--left-right", "--oneline", "left...crossover"],
        ["log", "--graph", "--boundary", "--oneline", "t_initial..merge"],
        ["rev-list", "--graph", "--boundary", "t_c1..merge"],
        ["rev-list", "--graph", "--left-right", "--format=%s", "left...crossover"],
    ],
    ids=" ".join,
)
def test_octopus_ranges(octopus: Path, args: list[str]) -> None:
    assert_same(octopus, *args)


@pytest.mark.parametrize("args", LOG_ARGS + REV_LIST_ARGS, ids=" ".join)
def test_skewed_and_criss_cross(skewed: Path, args: list[str]) -> None:
    assert_same(skewed, *args)


@pytest.mark.parametrize("args", LOG_ARGS + REV_LIST_ARGS, ids=" ".join)
def test_many_branches(dag: Path, args: list[str]) -> None:
    assert_same(dag, *args)


@pytest.mark.parametrize(
    "args",
    [
        ["log", "--graph", "--oneline", "--all", "--boundary", "^b3"],
        ["log", "--graph", "--oneline", "--left-right", "b1...b2"],
        ["log", "--graph", "--oneline", "--all", "--", "f1"],
        ["log", "--graph", "--oneline", "--all", "--full-history", "--", "f1"],
        ["log", "--graph", "--oneline", "--all", "--simplify-merges", "--", "f2"],
        ["rev-list", "--graph", "--all", "--boundary", "^b2"],
        ["rev-list", "--graph", "--all", "--", "f3"],
    ],
    ids=" ".join,
)
def test_many_branches_limited(dag: Path, args: list[str]) -> None:
    assert_same(dag, *args)


@pytest.mark.parametrize(
    "args",
    [
        ["log", "--graph", "--format=%s", "--all"],
        ["log", "--graph", "--format=%s", "--all", "--simplify-by-decoration"],
        ["log", "--graph", "--format=%s", "--all", "--", "bar.txt"],
        ["log", "--graph", "--format=%s", "--all", "--full-history", "--", "bar.txt"],
        ["log", "--graph", "--format=%s", "--all", "--sparse", "--", "bar.txt"],
        ["log", "--graph", "--format=%s", "--all", "--simplify-merges", "--", "bar.txt"],
        ["log", "--graph", "--format=%s", "--all", "--", "foo.txt"],
        ["log", "--graph", "--format=%s", "--all", "--boundary", "^t_A3", "^t_C2"],
        ["rev-list", "--graph", "--format=%s", "--all", "--", "bar.txt"],
        ["rev-list", "--graph", "--all", "--boundary", "^t_A3", "--", "foo.txt"],
    ],
    ids=" ".join,
)
def test_history_simplification(simplify: Path, args: list[str]) -> None:
    assert_same(simplify, *args)


def test_graph_colors(octopus: Path) -> None:
    """``log.graphColors`` (an invalid name is warned about) and Git's default colours."""
    assert_same(octopus, "log", "--graph", "--color=always", "--format=%s", "--all")
    assert_same(
        octopus,
        "-c",
        "log.graphColors= blue,invalid-color, cyan, red  , ",
        "log",
        "--graph",
        "--color",
        "--date-order",
        "--format=%s",
        "--all",
    )
    assert_same(octopus, "log", "--graph", "--color=never", "--oneline", "--all")


def test_color_refused_where_more_is_coloured(octopus: Path) -> None:
    """Git colours the header of built-in formats: gitodb refuses rather than
    print those uncoloured."""
    _theirs, ours = both(octopus, "log", "--graph", "--color=always", "--oneline")
    assert ours[0] == 129 and ours[1] == b""
    _theirs, ours = both(octopus, "log", "--graph", "--color=always", "--format=%C(red)%s")
    assert ours[0] == 129 and ours[1] == b""


def test_graph_with_reverse_is_refused(octopus: Path) -> None:
    """Git 2.55's wording (2.39 names the options the other way round)."""
    _theirs, ours = both(octopus, "rev-list", "--graph", "--reverse", "HEAD")
    assert ours[0] == 128
    assert ours[2] == b"fatal: options '--graph' and '--reverse' cannot be used together\n"


def test_no_graph_keeps_the_topological_order(dag: Path) -> None:
    assert_same(dag, "rev-list", "--graph", "--no-graph", "--all")
    assert_same(dag, "log", "--graph", "--no-graph", "--format=%s", "--all")


def test_drawer_octopus_rows() -> None:
    """The drawer alone: an octopus merge of three parents, each with a commit."""
    from gitodb.history.graphdraw import GraphDrawer

    d = GraphDrawer()
    rows = []
    for commit, parents in [
        ("m", ["p1", "p2", "p3"]),
        ("p3", ["r"]),
        ("p2", ["r"]),
        ("p1", ["r"]),
        ("r", []),
    ]:
        d.update(commit, parents)
        rows.append(d.show_commit() + commit.encode())
        rest, shown = d.show_remainder()
        if shown:
            rows.append(rest)
    text = b"\n".join(r.rstrip() for r in b"\n".join(rows).split(b"\n"))
    assert text == (b"*-.   m\n|\\ \\\n| | * p3\n| * | p2\n| |/\n* / p1\n|/\n* r"), text.decode()


@pytest.mark.skipif(not CORPUS.exists(), reason="the shared corpus is not here")
def test_libgit2_log_graph_oneline_all() -> None:
    if shutil.which("git") is None:
        pytest.skip("no git")
    args = ["log", "--graph", "--oneline", "--all"]
    env = git_env()
    theirs = subprocess.run(
        ["git", f"--git-dir={CORPUS}", *args], capture_output=True, env=env, check=True
    ).stdout
    ours = subprocess.run(
        [sys.executable, "-m", "gitodb", f"--git-dir={CORPUS}", *args],
        capture_output=True,
        env=env,
        check=False,
    )
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == theirs


def test_graph_with_walk_reflogs_is_refused(octopus: Path) -> None:
    assert_same(octopus, "log", "-g", "--graph")
