"""Commit-graph files: written byte for byte as Git writes them, read in walks,
verified, and ignored (with Git's message) when damaged."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from helpers import git, run_cli
from oracle import both

GRAPH = Path(".git/objects/info/commit-graph")


def build(path: Path, object_format: str = "sha1") -> Path:
    """Linear history, a branch, a two-parent merge and an octopus merge, names with
    bytes >= 0x80 (Bloom v1's signed-char case), a large commit (> 512 paths)."""
    git("init", "-q", "-b", "main", f"--object-format={object_format}", path)
    for i in range(4):
        (path / f"d{i}" / "e").mkdir(parents=True)
        (path / f"d{i}" / "e" / f"f{i}").write_text(f"{i}\n")
        (path / f"caf\u00e9{i}").write_text(f"{i}\n")
        git("add", ".", cwd=path)
        git("commit", "-q", "-m", f"c{i}", cwd=path)
    git("checkout", "-q", "-b", "b1", "HEAD~1", cwd=path)
    (path / "b1").write_text("b1\n")
    git("add", ".", cwd=path)
    git("commit", "-q", "-m", "b1", cwd=path)
    git("checkout", "-q", "-b", "b2", "HEAD~1", cwd=path)
    (path / "b2").write_text("b2\n")
    git("add", ".", cwd=path)
    git("commit", "-q", "-m", "b2", cwd=path)
    git("checkout", "-q", "-b", "b3", "main~2", cwd=path)
    (path / "b3").write_text("b3\n")
    git("add", ".", cwd=path)
    git("commit", "-q", "-m", "b3", cwd=path)
    git("checkout", "-q", "main", cwd=path)
    git("merge", "-q", "-m", "octopus", "b1", "b2", "b3", cwd=path)
    git("merge", "-q", "--no-ff", "-m", "two", "b1", cwd=path)
    big = path / "big"
    big.mkdir()
    for i in range(520):
        (big / f"x{i}").write_text(f"{i}\n")
    git("add", ".", cwd=path)
    git("commit", "-q", "-m", "big", cwd=path)
    git("tag", "-a", "-m", "t", "v1", cwd=path)
    git("repack", "-q", "-a", "-d", cwd=path)
    return path


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def repo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp(request.param) / "r", request.param)


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


@pytest.mark.parametrize(
    "opts", [["--reachable"], [], ["--reachable", "--changed-paths"]], ids=" ".join
)
def test_write_like_git(repo: Path, tmp_path: Path, opts: list[str]) -> None:
    ours = _copy(repo, tmp_path / "ours")
    theirs = _copy(repo, tmp_path / "theirs")
    git("commit-graph", "write", *opts, cwd=theirs)
    assert run_cli(ours, "commit-graph", "write", *opts) == 0
    assert (ours / GRAPH).read_bytes() == (theirs / GRAPH).read_bytes()
    # Git accepts what was written.
    assert git("commit-graph", "verify", cwd=ours) == b""
    assert run_cli(ours, "commit-graph", "verify") == 0


def test_stdin_commits_and_packs(repo: Path, tmp_path: Path) -> None:
    ours = _copy(repo, tmp_path / "ours")
    theirs = _copy(repo, tmp_path / "theirs")
    tip = git("rev-parse", "b2", cwd=repo)
    git("commit-graph", "write", "--stdin-commits", cwd=theirs, input=tip)
    assert run_cli(ours, "commit-graph", "write", "--stdin-commits", stdin=tip) == 0
    assert (ours / GRAPH).read_bytes() == (theirs / GRAPH).read_bytes()
    pack = next((repo / ".git/objects/pack").glob("*.idx")).name.encode() + b"\n"
    git("commit-graph", "write", "--stdin-packs", cwd=theirs, input=pack)
    assert run_cli(ours, "commit-graph", "write", "--stdin-packs", stdin=pack) == 0
    assert (ours / GRAPH).read_bytes() == (theirs / GRAPH).read_bytes()


def test_walks_use_the_graph(repo: Path, tmp_path: Path) -> None:
    from gitodb.history.graph import CommitGraph
    from gitodb.repo import Repository

    r = _copy(repo, tmp_path / "r")
    git("commit-graph", "write", "--reachable", cwd=r)
    g = CommitGraph(Repository(r))
    assert g.file is not None and g.file.total_commits == 9
    node = g.node(bytes.fromhex(git("rev-parse", "main~1", cwd=r).decode().strip()))
    assert len(node.parent_ids) == 4  # the octopus, read from CDAT and EDGE
    for args in (
        ["--all"],
        ["--topo-order", "--parents", "--all"],
        ["--date-order", "main"],
        ["--count", "--all"],
        ["b1..main"],
        ["--all", "--objects"],
    ):
        theirs, ours = both(r, "rev-list", *args)
        assert ours == theirs
    # With core.commitGraph=false nothing is read from the file.
    assert CommitGraph(Repository(r, config_overrides=["core.commitGraph=false"])).file is None


def test_graph_is_the_source_of_parents(repo: Path, tmp_path: Path) -> None:
    """A walk trusts the graph like Git: a graph written for a grafted history
    (GIT_TEST-free way: drop a parent by hand) changes what rev-list lists."""
    from gitodb.history.commitgraph import load_commit_graph
    from gitodb.repo import Repository

    r = _copy(repo, tmp_path / "r")
    git("commit-graph", "write", "--reachable", cwd=r)
    g = load_commit_graph(str(r / ".git/objects"), Repository(r).object_format)
    assert g is not None
    head = bytes.fromhex(git("rev-parse", "main", cwd=r).decode().strip())
    pos = g.position(head)
    assert pos is not None
    tree, parents, date, level = g.commit_at(pos)
    assert tree.hex() == git("rev-parse", "main^{tree}", cwd=r).decode().strip()
    assert [g.oid_at(p).hex() for p in parents] == [
        git("rev-parse", "main~1", cwd=r).decode().strip()
    ]
    assert date == int(git("log", "-1", "--format=%ct", "main", cwd=r))
    assert level == 6


@pytest.mark.parametrize(
    "damage,message",
    [
        (
            lambda d: b"XGPH" + d[4:],
            "commit-graph signature 58475048 does not match signature 43475048",
        ),
        (lambda d: d[:4] + b"\x02" + d[5:], "commit-graph version 2 does not match version 1"),
        (lambda d: d[:20], "commit-graph file is too small"),
    ],
)
def test_damaged_graph_is_ignored(repo: Path, tmp_path: Path, damage, message: str) -> None:
    r = _copy(repo, tmp_path / "r")
    git("commit-graph", "write", "--reachable", cwd=r)
    path = r / GRAPH
    data = path.read_bytes()
    os.chmod(path, 0o644)
    path.write_bytes(damage(data))
    theirs, ours = both(r, "rev-list", "--count", "--all")
    assert ours[0] == theirs[0] == 0 and ours[1] == theirs[1]
    assert ours[2] == theirs[2] == f"error: {message}\n".encode()


def test_verify_finds_a_bad_checksum_and_bad_data(repo: Path, tmp_path: Path) -> None:
    r = _copy(repo, tmp_path / "r")
    git("commit-graph", "write", "--reachable", cwd=r)
    path = r / GRAPH
    data = bytearray(path.read_bytes())
    os.chmod(path, 0o644)
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    theirs, ours = both(r, "commit-graph", "verify")
    assert ours[0] == theirs[0] == 2
    assert (
        ours[2]
        == theirs[2]
        == (b"the commit-graph file has incorrect checksum and is likely corrupt\n")
    )
    # A commit date that does not match the object is reported with its id.
    from gitodb.history.commitgraph import load_commit_graph
    from gitodb.repo import Repository

    git("commit-graph", "write", "--reachable", cwd=r)
    data = bytearray(path.read_bytes())
    g = load_commit_graph(str(r / ".git/objects"), Repository(r).object_format)
    assert g is not None
    rawsz = Repository(r).object_format.rawsz
    off = g.chunks[b"CDAT"][0] + rawsz + 15  # the low byte of the first commit's date
    data[off] ^= 1
    os.chmod(path, 0o644)
    path.write_bytes(bytes(data))
    theirs, ours = both(r, "commit-graph", "verify")
    assert ours[0] == 3  # the checksum no longer matches either
    assert b"commit date for commit " + g.oid_at(0).hex().encode() in ours[2]


def test_split_chain_is_read_by_git(repo: Path, tmp_path: Path) -> None:
    r = _copy(repo, tmp_path / "r")
    git("commit-graph", "write", "--stdin-commits", cwd=r, input=git("rev-parse", "main~3", cwd=r))
    # no-merge: bare --split would fold the small base into the new layer, as Git
    assert run_cli(r, "commit-graph", "write", "--reachable", "--split=no-merge") == 0
    chain = r / ".git/objects/info/commit-graphs/commit-graph-chain"
    assert len(chain.read_text().split()) == 2
    assert not (r / GRAPH).exists()
    assert git("commit-graph", "verify", cwd=r) == b""
    theirs, ours = both(r, "rev-list", "--topo-order", "--parents", "--all")
    assert ours == theirs
    # A layer Git adds on top of ours reads back too.
    (r / "new").write_text("n\n")
    git("add", ".", cwd=r)
    git("commit", "-q", "-m", "new", cwd=r)
    git("commit-graph", "write", "--reachable", "--split=no-merge", cwd=r)
    assert run_cli(r, "commit-graph", "verify") == 0
    theirs, ours = both(r, "rev-list", "--count", "--all")
    assert ours == theirs


def test_usage_errors(repo: Path) -> None:
    for args in (
        ["commit-graph"],
        ["commit-graph", "bogus"],
        ["commit-graph", "write", "--bogus"],
        ["commit-graph", "write", "--reachable", "--stdin-packs"],
    ):
        theirs, ours = both(repo, *args)
        assert ours[0] == theirs[0], args
        assert ours[2].splitlines()[:1] == theirs[2].splitlines()[:1], args


def test_bloom_hashes() -> None:
    from gitodb.history.bloom import murmur3

    # Values from Git's t/helper/test-bloom (t0095-bloom.sh).
    assert murmur3(0, b"", 1) == 0
    assert murmur3(0, b"Hello world!", 1) == 0x627B0C2C
    assert murmur3(0, b"The quick brown fox jumps over the lazy dog", 1) == 0x2E4FF723
    assert murmur3(0, b"\x99\xaa\xbb\xcc\xdd\xee\xff", 2) == 0xA183CCFD
    # v1 and v2 differ only for trailing bytes >= 0x80.
    assert murmur3(0, b"abcd", 1) == murmur3(0, b"abcd", 2)
    assert murmur3(0, b"ab\xe9", 1) != murmur3(0, b"ab\xe9", 2)


def test_grafts_and_shallow_prevent_writing_replace_refs_do_not(repo: Path, tmp_path: Path) -> None:
    r = _copy(repo, tmp_path / "r")
    (r / ".git/info").mkdir(exist_ok=True)
    grafts = r / ".git/info/grafts"
    grafts.write_text(git("rev-parse", "main", cwd=r).decode())
    assert run_cli(r, "commit-graph", "write", "--reachable") == 0
    assert not (r / GRAPH).exists()
    grafts.unlink()
    git("replace", "main~1", "main~2", cwd=r)
    assert run_cli(r, "commit-graph", "write", "--reachable") == 0
    assert (r / GRAPH).exists()  # git commit-graph ignores replace refs
    from gitodb.history.graph import CommitGraph
    from gitodb.repo import Repository

    assert CommitGraph(Repository(r)).file is None  # ... but walks do not use the graph


def test_paranoia_and_commits_known_only_from_the_graph(tmp_path: Path) -> None:
    r = tmp_path / "r"
    git("init", "-q", r)
    for name in ("A", "B"):
        (r / name).write_text(name)
        git("add", ".", cwd=r)
        git("commit", "-q", "-m", name, cwd=r)
    git("tag", "tagB", cwd=r)
    git("commit-graph", "write", "--reachable", cwd=r)
    expected = git("rev-list", "tagB", cwd=r)
    oid = git("rev-parse", "tagB", cwd=r).decode().strip()
    (r / ".git/objects" / oid[:2] / oid[2:]).unlink()
    # Git 2.55 (t5318 'stale commit cannot be parsed when given directly') lists it from
    # the graph; Git 2.39 did not yet.
    _theirs, ours = both(r, "rev-list", "tagB")
    assert ours[0] == 0 and ours[1] == expected
    import subprocess
    import sys

    from helpers import git_env

    env = dict(git_env(), GIT_COMMIT_GRAPH_PARANOIA="true")
    proc = subprocess.run(
        [sys.executable, "-m", "gitodb", "rev-list", "-1", "tagB"],
        cwd=r,
        env=env,
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 128


def test_verify_dies_on_a_parent_outside_the_graph(repo: Path, tmp_path: Path) -> None:
    from gitodb.history.commitgraph import load_commit_graph
    from gitodb.repo import Repository

    r = _copy(repo, tmp_path / "r")
    git("commit-graph", "write", "--reachable", cwd=r)
    g = load_commit_graph(str(r / ".git/objects"), Repository(r).object_format)
    assert g is not None
    rawsz = Repository(r).object_format.rawsz
    # The first commit with a parent: make its first parent position huge.
    i = next(i for i in range(g.num_commits) if g.commit_at(i)[1])
    off = g.chunks[b"CDAT"][0] + i * (rawsz + 16) + rawsz
    path = r / GRAPH
    data = bytearray(path.read_bytes())
    data[off : off + 4] = (0x01000000).to_bytes(4, "big")
    os.chmod(path, 0o644)
    path.write_bytes(bytes(data))
    theirs, ours = both(r, "commit-graph", "verify")
    assert ours[0] == theirs[0] == 128
    assert ours[2] == theirs[2]


def test_verify_reports_an_unreadable_graph(repo: Path, tmp_path: Path) -> None:
    r = _copy(repo, tmp_path / "r")
    (r / ".git/objects/info").mkdir(exist_ok=True)
    (r / GRAPH).write_text("a small graph\n")
    theirs, ours = both(r, "commit-graph", "verify")
    assert ours[0] == 1 and ours[2] == b"error: commit-graph file is too small\n"


def test_object_dir_names_an_alternate(repo: Path, tmp_path: Path) -> None:
    """``--object-dir`` finds the repository's own directory or one of its alternates
    (as real paths), and writes or checks that directory's graph: ``git fsck``
    verifies each alternate's graph this way (t1450 2)."""
    base = _copy(repo, tmp_path / "base")
    git("commit-graph", "write", "--reachable", cwd=base)
    borrower = tmp_path / "borrower"
    fmt = git("rev-parse", "--show-object-format", cwd=base).decode().strip()
    git("init", "-q", f"--object-format={fmt}", borrower)
    alternate = borrower / ".git" / "objects" / "info" / "alternates"
    alternate.write_text("../../../base/.git/objects\n")  # relative, not normalised
    base_objects = str(base / ".git" / "objects")
    for args in (
        ["commit-graph", "verify", "--object-dir", base_objects],
        ["commit-graph", "verify", "--object-dir", str(borrower / ".git" / "objects")],
        ["commit-graph", "verify", "--object-dir", str(tmp_path / "elsewhere")],
    ):
        theirs, ours = both(borrower, *args)
        assert ours == theirs, args
    assert both(borrower, "commit-graph", "verify", "--object-dir", "nope")[1][0] == 128
    # A damaged alternate graph is found through the option.
    graph = base / GRAPH
    data = bytearray(graph.read_bytes())
    data[-1] ^= 1
    os.chmod(graph, 0o644)
    graph.write_bytes(bytes(data))
    theirs, ours = both(borrower, "commit-graph", "verify", "--object-dir", base_objects)
    assert ours == theirs and ours[0] != 0
    # Writing through it writes the alternate's graph.
    os.unlink(graph)
    tip = git("rev-parse", "main", cwd=base)
    assert (
        run_cli(
            borrower,
            "commit-graph",
            "write",
            "--object-dir",
            base_objects,
            "--stdin-commits",
            stdin=tip,
        )
        == 0
    )
    assert graph.exists() and not (borrower / GRAPH).exists()
    assert git("commit-graph", "verify", cwd=base) == b""
