"""The native walks' id lookups (``hw_oid_search`` in ``_native/histwalk.inc``).

The pack index lookup of the native reader and the commit-graph lookup interpolate
on the ids' first bytes before they bisect.  On a repository large enough for the
interpolation to run (fan-out buckets of dozens of ids, a graph of thousands of
commits), every id must be found where it is and no other: ids taken from the
repository, and the same ids with one byte changed (near misses that share a
prefix with a stored id, which is where a wrong bound would show), compared with
the Python index and graph lookups.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitodb.errors import ObjectNotFoundError
from gitodb.history import native
from gitodb.history.graph import CommitGraph
from gitodb.repo import Repository
from helpers import git

pytestmark = pytest.mark.skipif(not native.enabled(), reason="native core not built")

COMMITS = 3000  # 9,000 objects: ~35 ids per fan-out bucket


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Repository, list[bytes]]]:
    """A packed repository of 3,000 commits (a tree and a blob each) with a
    commit-graph, and its ids in ``rev-list --objects`` order."""
    repo = tmp_path_factory.mktemp("lookup") / "big.git"
    git("init", "-q", "--bare", repo)
    stream = []
    for i in range(COMMITS):
        blob = f"blob {i}\n".encode()
        msg = f"c{i}\n".encode()
        stream.append(b"commit refs/heads/main\n")
        stream.append(b"committer C <c@x> %d +0000\n" % (1_000_000 + i))
        stream.append(b"data %d\n%s" % (len(msg), msg))
        stream.append(b"M 100644 inline f\ndata %d\n%s\n" % (len(blob), blob))
    git("fast-import", "--quiet", cwd=repo, input=b"".join(stream))
    git("repack", "-q", "-a", "-d", cwd=repo)
    git("commit-graph", "write", "--reachable", cwd=repo)
    ids = [
        bytes.fromhex(line.split()[0].decode())
        for line in git("rev-list", "--all", "--objects", cwd=repo).splitlines()
    ]
    r = Repository(repo)
    yield r, ids
    r.odb.close()


def _near(oid: bytes, at: int, delta: int) -> bytes:
    """oid with byte ``at`` moved by ``delta`` (mod 256): usually an id not stored."""
    b = bytearray(oid)
    b[at] = (b[at] + delta) % 256
    return bytes(b)


LOOKUPS = st.lists(
    st.tuples(st.integers(0, 3 * COMMITS - 1), st.integers(0, 19), st.integers(-2, 2)),
    min_size=1,
    max_size=40,
)


@given(LOOKUPS)
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_pack_lookup_finds_exactly_the_stored_ids(
    big: tuple[Repository, list[bytes]], picks: list[tuple[int, int, int]]
) -> None:
    """The reader asks its Python fallback for an id only when no pack index of it
    holds the id: the fallback's calls are exactly the ids the index lacks."""
    r, ids = big
    odb = r.odb
    read = odb.read
    asked: list[bytes] = []

    def recording(oid: bytes, *args: object, **kwargs: object) -> object:
        asked.append(oid)
        return read(oid, *args, **kwargs)

    odb.read = recording  # type: ignore[method-assign]
    try:
        reader = native.reader(r)
    finally:
        del odb.read  # the reader holds the recording function
    assert reader is not None
    idx = [p.idx for p in odb.packs]
    try:
        for i, at, delta in picks:
            oid = _near(ids[i], at, delta)
            stored = any(x.find(oid) >= 0 for x in idx)
            del asked[:]
            try:
                got = reader.read(oid)
            except ObjectNotFoundError:
                got = None
            assert (got is not None) == stored
            # a stored id is read from the pack, never through the fallback
            assert asked == ([] if stored else [oid])
            if stored:
                assert got[1] == read(oid)[1]
    finally:
        reader.close()


@given(LOOKUPS)
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_graph_lookup_matches_the_graph_file(
    big: tuple[Repository, list[bytes]], picks: list[tuple[int, int, int]]
) -> None:
    """``graph_contains`` (the native graph lookup) against the file's own lookup."""
    r, ids = big
    graph = CommitGraph(r)
    f = graph.file
    assert f is not None and f.num_commits == COMMITS
    wanted = [_near(ids[i], at, delta) for i, at, delta in picks]
    assert native.graph_contains(graph, wanted) == bytes(
        f.position(oid) is not None for oid in wanted
    )


def test_every_commit_and_the_first_and_last_ids(big: tuple[Repository, list[bytes]]) -> None:
    """Every commit is in the graph; the lowest and highest ids of each fan-out bucket
    are found in the pack (the ends, where an interpolation's bounds are tight)."""
    r, ids = big
    graph = CommitGraph(r)
    commits = ids[:COMMITS]  # rev-list lists the commits first
    assert native.graph_contains(graph, commits) == b"\x01" * COMMITS
    ends = []
    ordered = sorted(ids)
    for first in range(256):
        bucket = [o for o in ordered if o[0] == first]
        ends += bucket[:1] + bucket[-1:]
    reader = native.reader(r)
    assert reader is not None
    try:
        for oid in ends:
            assert reader.read(oid)[1] == r.odb.read(oid)[1]
    finally:
        reader.close()
    outside = [b"\x00" * 20, b"\xff" * 20]
    assert native.graph_contains(graph, outside) == bytes(
        graph.file.position(o) is not None
        for o in outside  # type: ignore[union-attr]
    )


def test_two_byte_fanout_after_many_lookups(big: tuple[Repository, list[bytes]]) -> None:
    """Once a reader has looked up count/16 ids of a pack it narrows its lookups with
    a fan-out on the ids' first two bytes: after every id has been read, every id is
    still found, and near misses in the first, second and last bytes (across and
    inside those buckets) go to the fallback exactly when no index holds them."""
    r, ids = big
    odb = r.odb
    read = odb.read
    asked: list[bytes] = []

    def recording(oid: bytes, *args: object, **kwargs: object) -> object:
        asked.append(oid)
        return read(oid, *args, **kwargs)

    odb.read = recording  # type: ignore[method-assign]
    try:
        reader = native.reader(r)
    finally:
        del odb.read
    assert reader is not None
    idx = [p.idx for p in odb.packs]
    try:
        for oid in ids:
            assert reader.read(oid)[1] == read(oid)[1]
        assert asked == []
        ordered = sorted(ids)
        ends = {}
        for oid in ordered:  # the first and last id of every two-byte bucket
            ends.setdefault(oid[:2], [oid, oid])[1] = oid
        probes = [o for pair in ends.values() for o in pair]
        probes += [_near(o, at, d) for o in ordered[::7] for at in (0, 1, 19) for d in (-1, 1)]
        for oid in probes:
            stored = any(x.find(oid) >= 0 for x in idx)
            del asked[:]
            try:
                got = reader.read(oid)
            except ObjectNotFoundError:
                got = None
            assert (got is not None) == stored
            assert asked == ([] if stored else [oid])
    finally:
        reader.close()


def test_objects_listing_on_a_large_pack(
    big: tuple[Repository, list[bytes]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """rev-list --objects on a pack large enough for the two-byte fan-out and the
    blob checks after the walk, with one blob outside the pack (loose): git's bytes."""
    from test_native_walk import cli, pure

    r, _ids = big
    repo = Path(r.gitdir)
    args = ("rev-list", "--all", "--objects")
    with pure(False):
        assert cli(repo, *args) == (0, git(*args, cwd=repo))
    work = tmp_path_factory.mktemp("loose") / "loose.git"
    git("clone", "-q", "--bare", "--no-local", repo, work)
    blob = git("hash-object", "-w", "--stdin", cwd=work, input=b"loose blob\n").decode().strip()
    tree = git("mktree", cwd=work, input=f"100644 blob {blob}\tloose\n".encode()).decode().strip()
    commit = git("commit-tree", tree, "-p", "main", "-m", "loose", cwd=work).decode().strip()
    git("update-ref", "refs/heads/main", commit, cwd=work)
    with pure(False):
        assert cli(work, *args) == (0, git(*args, cwd=work))
