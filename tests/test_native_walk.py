"""The native history walks (``_native/histwalk.inc``) against the Python walk and Git.

Random histories (merges, octopuses, several roots, runs of equal dates, clock
skew, shared subtrees, submodule entries, annotated tags) are built with ``git
fast-import``, packed with deltas or left partly loose, with or without a
commit-graph; ``rev-list`` and ``log`` must print the same bytes through the native
walk, through the Python walk (``GITODB_PURE_WALK=1``, the reference) and through
Git.  Then the fallbacks: REF_DELTA entries, trees too large for the native reader,
loose objects, a missing tree, a malformed tree and a missing parent give the
Python path's result or error.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitodb.history import native
from gitodb.objects.headers import parse_headers, parse_headers_python
from gitodb.repo import Repository
from helpers import git, git_env

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "libgit2.git"

needs_native = pytest.mark.skipif(not native.enabled(), reason="native core not built")

# Names that ls-tree quotes (a quote, a byte over 0x7f) and one with a space.
PATHS = ["a", "b", "d/x", "d/y", "d/e/z", "f/g/h", "f/i", "sp ace", "\u00e9/x", 'q"x']
CONTENTS = [b"one\n", b"two\n", b"three\n" * 40, b""]
GITLINK = "1" * 40


@contextlib.contextmanager
def pure(on: bool) -> Iterator[None]:
    """The Python walk (reference) when ``on``, else the native one."""
    old = os.environ.get("GITODB_PURE_WALK")
    os.environ["GITODB_PURE_WALK"] = "1" if on else "0"
    try:
        yield
    finally:
        if old is None:
            del os.environ["GITODB_PURE_WALK"]
        else:
            os.environ["GITODB_PURE_WALK"] = old


def cli(repo: Path, *args: str, err: list[str] | None = None) -> tuple[int, bytes]:
    """gitodb's CLI in-process: (exit status, stdout); stderr's text into ``err``."""
    from gitodb.cli.main import main

    class Kept(io.BytesIO):
        def close(self) -> None:  # the CLI closes stdout when it is done
            pass

    old_out, old_err, old_cwd = sys.stdout, sys.stderr, os.getcwd()
    buf = Kept()
    sys.stdout = io.TextIOWrapper(buf, write_through=True)
    sys.stderr = errbuf = io.StringIO()
    try:
        os.chdir(repo)
        status = main(list(args))
        sys.stdout.flush()
    finally:
        sys.stdout, sys.stderr = old_out, old_err
        os.chdir(old_cwd)
    if err is not None:
        err.append(errbuf.getvalue())
    return status, buf.getvalue()


def fast_import(repo: Path, history: list[dict]) -> None:
    """Write ``history`` (commits with parents, date and files) with git fast-import."""
    out = []
    for i, c in enumerate(history):
        ref = f"refs/heads/b{c['branch']}"
        if not c["parents"]:
            out.append(f"reset {ref}")  # a new root, even on a branch that has commits
        out.append(f"commit {ref}")
        out.append(f"mark :{i + 1}")
        out.append(f"author A{i % 3} <a{i % 3}@example.com> {c['date']} +0100")
        out.append(f"committer C <c@example.com> {c['date']} +0000")
        msg = f"subject {i}\n\nbody {i}\n"
        out.append(f"data {len(msg)}")
        out.append(msg)
        if c["parents"]:
            out.append(f"from :{c['parents'][0] + 1}")
            for p in c["parents"][1:]:
                out.append(f"merge :{p + 1}")
        out.append("deleteall")
        for path, content in sorted(c["files"].items()):
            if content is None:
                out.append(f"M 160000 {GITLINK} {path}")
                continue
            out.append(f"M 100644 inline {path}")
            out.append(f"data {len(content)}")
            out.append(content.decode())
        out.append("")
    git("fast-import", "--quiet", cwd=repo, input="\n".join(out).encode())


@st.composite
def histories(draw: st.DrawFn) -> list[dict]:
    n = draw(st.integers(1, 14))
    commits: list[dict] = []
    for i in range(n):
        if i == 0:
            parents: list[int] = []
        else:
            k = draw(st.sampled_from([0, 1, 1, 1, 2, 3]))
            parents = sorted(set(draw(st.lists(st.integers(0, i - 1), min_size=k, max_size=k))))
        files = draw(
            st.dictionaries(st.sampled_from(PATHS), st.sampled_from([*CONTENTS, None]), min_size=1)
        )
        # A path cannot be a file and a directory at once.
        for p in list(files):
            if any(q.startswith(p + "/") for q in files):
                del files[p]
        commits.append(
            {
                "parents": parents,
                "date": 1_700_000_000 + draw(st.integers(0, 6)) * 100,
                "files": files,
                "branch": draw(st.integers(0, 2)),
            }
        )
    return commits


def build(tmp: Path, history: list[dict], layout: str, graph: bool) -> Path:
    repo = tmp / f"r{len(list(tmp.iterdir()))}"
    git("init", "-q", "--bare", repo)
    fast_import(repo, history)
    first = git("for-each-ref", "--count=1", "--format=%(refname)", cwd=repo).decode().strip()
    git("tag", "-a", "-m", "t", "t0", first, cwd=repo)
    git("tag", "-a", "-m", "tree", "t1", f"{first}^{{tree}}", cwd=repo)
    if layout == "repacked":
        git("repack", "-q", "-a", "-d", "-f", "--depth=4", cwd=repo)
    elif layout == "loose":
        git("repack", "-q", "-a", "-d", cwd=repo)
        packs = repo / "objects" / "pack"
        data = next(packs.glob("*.pack")).read_bytes()
        for f in packs.iterdir():
            f.unlink()
        git("unpack-objects", "-q", cwd=repo, input=data)
    if graph:
        git("commit-graph", "write", "--reachable", cwd=repo)
    return repo


COMMANDS = [
    ("rev-list", "--all"),
    ("rev-list", "--all", "--parents"),
    ("rev-list", "--all", "--objects"),
    ("rev-list", "--all", "--objects", "--no-object-names"),
    ("rev-list", "--first-parent", "--objects", "--all"),
    ("rev-list", "--objects", "b0", "--not", "b1"),
    ("rev-list", "--count", "--all", "--objects"),
    ("rev-list", "--max-count=3", "--skip=1", "--all"),
    ("rev-list", "--topo-order", "--parents", "--all"),
    ("rev-list", "--topo-order", "--objects", "--all"),
    ("rev-list", "--count", "--all"),
    ("rev-list", "--count", "--first-parent", "--all"),
    ("rev-list", "--count", "--topo-order", "--all"),
    ("log", "--format=%H %P %an %ae %at %s", "--all"),
    ("log", "--format=%H%x00%s%n%T %cn <%ce> %ct", "--all"),
    ("log", "--pretty=format:%s %H", "--all"),
    ("ls-tree", "-r", "t0"),
    ("ls-tree", "-r", "-t", "-z", "t0"),
    ("ls-tree", "-r", "-d", "--name-only", "t0"),
    ("ls-tree", "t0"),
    ("-c", "core.quotePath=false", "ls-tree", "-r", "t0"),
]


@needs_native
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    history=histories(),
    layout=st.sampled_from(["fast-import", "repacked", "loose"]),
    graph=st.booleans(),
)
def test_native_walk_matches_python_and_git(
    tmp_path: Path, history: list[dict], layout: str, graph: bool
) -> None:
    repo = build(tmp_path, history, layout, graph)
    for args in COMMANDS:
        if "b1" in args and not all((repo / "refs/heads" / b).exists() for b in ("b0", "b1")):
            continue
        expected = git(*args, cwd=repo)
        with pure(True):
            ref = cli(repo, *args)
        with pure(False):
            got = cli(repo, *args)
        assert ref == (0, expected), args
        assert got == ref, args


def _small_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "small"
    git("init", "-q", repo)
    for i in range(4):
        (repo / "d").mkdir(exist_ok=True)
        (repo / "d" / f"f{i}").write_text(f"{i}\n")
        (repo / "top").write_text(f"top {i}\n")
        git("add", ".", cwd=repo)
        git("commit", "-q", "-m", f"c{i}", cwd=repo)
    return repo


def _both(repo: Path, *args: str) -> tuple[tuple[int, bytes, str], tuple[int, bytes, str]]:
    """(status, stdout, stderr) of the Python walk and of the native one."""
    out = []
    for on in (True, False):
        err: list[str] = []
        with pure(on):
            status, stdout = cli(repo, *args, err=err)
        out.append((status, stdout, err[0]))
    return out[0], out[1]


@needs_native
def test_ref_delta_and_large_trees_fall_back(tmp_path: Path) -> None:
    """REF_DELTA entries and trees over the native reader's window are read by Python."""
    repo = tmp_path / "big"
    git("init", "-q", repo)
    (repo / "many").mkdir()
    for i in range(2500):  # a tree of ~90 KB: over the 64 KiB the native reader takes
        (repo / "many" / f"file-with-a-long-name-{i:05d}").write_text(f"{i % 7}\n")
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "big", cwd=repo)
    (repo / "many" / "file-with-a-long-name-00000").write_text("changed\n")
    git("commit", "-q", "-am", "change", cwd=repo)
    git("-c", "repack.useDeltaBaseOffset=false", "repack", "-q", "-a", "-d", "-f", cwd=repo)
    args = ("rev-list", "--all", "--objects")
    expected = git(*args, cwd=repo)
    ref, got = _both(repo, *args)
    assert ref == (0, expected, "")
    assert got == ref


@needs_native
def test_missing_tree_same_error(tmp_path: Path) -> None:
    repo = _small_repo(tmp_path)
    sub = git("rev-parse", "HEAD~1:d", cwd=repo).decode().strip()
    os.unlink(repo / ".git/objects" / sub[:2] / sub[2:])
    ref, got = _both(repo, "rev-list", "--all", "--objects")
    assert ref[0] == 128 and sub in ref[2]
    assert got == ref
    ref, got = _both(repo, "ls-tree", "-r", "HEAD~1")
    # Git's: what comes before the subtree, then its error: line and status 1
    assert ref[0] == 1 and ref[2] == f"error: Could not read {sub}\n"
    assert got == ref


@needs_native
def test_missing_blob_same_error(tmp_path: Path) -> None:
    """The native listing checks its blobs after the walk; a missing one sends the
    listing to the Python walk, which prints Git's bytes and error."""
    repo = _small_repo(tmp_path)
    blob = git("rev-parse", "HEAD~2:d/f0", cwd=repo).decode().strip()
    os.unlink(repo / ".git/objects" / blob[:2] / blob[2:])
    ref, got = _both(repo, "rev-list", "--all", "--objects")
    assert ref[0] == 128 and blob in ref[2]
    assert got == ref
    assert (ref[0], ref[2]) == (128, f"fatal: missing blob object '{blob}'\n")


@needs_native
def test_all_zero_ids_in_trees(tmp_path: Path) -> None:
    """Trees naming the all-zero id (which the native seen set keeps apart from its
    free slots): as a gitlink it is skipped, as a blob it is missing, as Git says."""
    repo = _small_repo(tmp_path)
    zero = "0" * 40
    head = git("rev-parse", "HEAD^{tree}", cwd=repo).decode().strip()
    link = git(
        "mktree", cwd=repo, input=f"160000 commit {zero}\tm\n040000 tree {head}\tt\n".encode()
    )
    link_tree = link.decode().strip()
    commit = git("commit-tree", link_tree, "-p", "HEAD", "-m", "z", cwd=repo).decode().strip()
    git("update-ref", "refs/heads/zero-link", commit, cwd=repo)
    git("repack", "-q", "-a", "-d", cwd=repo)
    args = ("rev-list", "--all", "--objects")
    ref, got = _both(repo, *args)
    assert ref == (0, git(*args, cwd=repo), "")
    assert got == ref
    blob = git("mktree", "--missing", cwd=repo, input=f"100644 blob {zero}\tnull\n".encode())
    commit = git("commit-tree", blob.decode().strip(), "-m", "n", cwd=repo).decode().strip()
    git("update-ref", "refs/heads/zero-blob", commit, cwd=repo)
    ref, got = _both(repo, *args)
    assert ref[0] == 128 and zero in ref[2]
    assert got == ref


@needs_native
def test_malformed_tree_same_error(tmp_path: Path) -> None:
    repo = _small_repo(tmp_path)
    bad = (
        git(
            "hash-object",
            "-t",
            "tree",
            "-w",
            "--literally",
            "--stdin",
            cwd=repo,
            input=b"100644 x\0short",
        )
        .decode()
        .strip()
    )
    commit = git("commit-tree", bad, "-p", "HEAD", "-m", "bad", cwd=repo).decode().strip()
    git("update-ref", "refs/heads/bad", commit, cwd=repo)
    ref, got = _both(repo, "rev-list", "--all", "--objects")
    assert ref[0] == 128 and ref[2].startswith("fatal: ")
    assert got == ref
    wrapper = git("mktree", cwd=repo, input=f"040000 tree {bad}\tsub\n".encode()).decode().strip()
    ref, got = _both(repo, "ls-tree", "-r", wrapper)
    assert ref[0] == 128 and ref[2].startswith("fatal: ")
    assert got == ref


@needs_native
def test_missing_parent_same_error(tmp_path: Path) -> None:
    repo = _small_repo(tmp_path)
    parent = git("rev-parse", "HEAD~2", cwd=repo).decode().strip()
    os.unlink(repo / ".git/objects" / parent[:2] / parent[2:])
    ref, got = _both(repo, "rev-list", "HEAD")
    assert ref[0] == 128 and ref[2].startswith("fatal: ")
    assert got == ref


@needs_native
@pytest.mark.parametrize("order", [(), ("--topo-order",)])
def test_missing_parent_same_error_in_the_listing(tmp_path: Path, order: tuple[str, ...]) -> None:
    """The plain listing in C prints what Git prints before the error (default
    order) or nothing (--topo-order limits the walk first), then Git's message."""
    repo = _small_repo(tmp_path)
    parent = git("rev-parse", "HEAD~2", cwd=repo).decode().strip()
    os.unlink(repo / ".git/objects" / parent[:2] / parent[2:])
    ref, got = _both(repo, "rev-list", *order, "--parents", "--all")
    assert ref[0] == 128 and ref[2].startswith("fatal: ")
    assert got == ref


@needs_native
def test_plain_listings_come_from_the_native_text(tmp_path: Path) -> None:
    """native_text answers the plain listings (else the tests above compare the
    Python walk with itself), and its topological order is Git's."""
    from gitodb.history.revwalk import RevWalk

    repo = _small_repo(tmp_path)
    git("checkout", "-q", "-b", "side", "HEAD~2", cwd=repo)
    (repo / "side").write_text("side\n")
    git("add", "side", cwd=repo)
    git("commit", "-q", "-m", "side", cwd=repo)
    git("checkout", "-q", "master", cwd=repo)
    git("merge", "-q", "--no-ff", "-m", "merge", "side", cwd=repo)
    r = Repository(repo)
    for order, flag in (("default", []), ("topo", ["--topo-order"])):
        with pure(False):
            w = RevWalk(r, order=order)
            for name in ("refs/heads/master", "refs/heads/side"):
                w.add(r.resolve(name))
            got = w.native_text(True)
        assert got is not None
        count, text, error = got
        want = git("rev-list", *flag, "--parents", "master", "side", "--", cwd=repo)
        assert (count, text, error) == (len(want.splitlines()), want, None)
    with pure(False):
        w = RevWalk(r, order="topo")
        w.add(r.resolve("HEAD~1"), uninteresting=True)
        w.add(r.resolve("HEAD"))
        assert w.native_text(False) is None  # an exclusion: the Python walk
    from gitodb.history.graph import CommitGraph
    from gitodb.history.pretty import Formatter

    parts = Formatter(r, "%H %s").native_parts()
    assert parts is not None
    # %h is the native core's abbreviation; %d (decorations) is Python's alone
    assert Formatter(r, "%h %s").native_parts() == [10, b" ", 3]
    assert Formatter(r, "%d %s").native_parts() is None
    with pure(False):
        w = RevWalk(r, graph=CommitGraph(r, keep_raw=True))
        w.add(r.resolve("HEAD"))
        got_log = w.native_format(parts, b"\n", b"", lambda oid, raw: b"")
    assert got_log is not None
    assert got_log[1] == git("log", "--format=%H %s", cwd=repo)
    r.odb.close()


@needs_native
@pytest.mark.parametrize("backend", ["zlib", "zlib-ng", "isal", "libdeflate"])
def test_reader_inflates_alike_on_every_backend(tmp_path: Path, backend: str) -> None:
    """The reader inflates through the backend's C API where the compression layer
    names one (zlib, libdeflate), else its binding: the same objects either way."""
    from gitodb import compress

    if backend not in compress.available_backends():
        pytest.skip(f"{backend} not installed")
    repo = _small_repo(tmp_path)
    git("repack", "-q", "-a", "-d", cwd=repo)
    old = compress.active_backend()
    compress.set_backend(backend)
    try:
        r = Repository(repo)
        reader = native.reader(r)
        assert reader is not None
        try:
            for h in git("rev-list", "--all", "--objects", cwd=repo).split():
                if len(h) == 40:
                    oid = bytes.fromhex(h.decode())
                    assert reader.read(oid)[1] == r.odb.read(oid)[1]
        finally:
            reader.close()
        r.odb.close()
    finally:
        compress.set_backend(old)


@needs_native
def test_walk_keeps_within_its_cache_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader leaves at most WALK_CACHE_BUDGET bytes of what it cached in the
    shared delta-base cache (its oldest entries go first), and lists the same
    objects as without a budget and as Git."""
    repo = tmp_path / "deltas"
    git("init", "-q", "--bare", repo)
    stream = []
    for i in range(60):  # trees that are deltas of each other, two levels deep
        stream.append(b"commit refs/heads/main\n")
        stream.append(b"committer C <c@x> %d +0000\ndata 2\nc\n" % (1_000_000 + i))
        for j in range(40):
            blob = b"%d %d\n" % (j, i if j % 7 == i % 7 else 0)
            stream.append(
                b"M 100644 inline d%d/e/f%03d\ndata %d\n%s\n" % (j % 3, j, len(blob), blob)
            )
    git("fast-import", "--quiet", cwd=repo, input=b"".join(stream))
    git("repack", "-q", "-a", "-d", "-f", cwd=repo)
    expected = git("rev-list", "--all", "--objects", cwd=repo)
    trees = [
        bytes.fromhex(line.decode())
        for line in git("log", "--format=%T", "main", cwd=repo).splitlines()
    ]
    budget = 2048
    outputs = []
    for limit in (budget, 0):
        monkeypatch.setattr(native, "WALK_CACHE_BUDGET", limit)
        r = Repository(repo)
        reader = native.reader(r)
        assert reader is not None
        try:
            count, text = reader.objects_text(
                [], [(t, "tree", b"") for t in trees], True, r.odb.contains
            )
        finally:
            reader.close()
        held = r.odb.cache.size
        r.odb.close()
        outputs.append(text)
        if limit:
            assert 0 < held <= budget
        else:
            assert held > 4 * budget  # without the budget the walk keeps every tree
    assert outputs[0] == outputs[1]
    listed = {line.split()[0] for line in outputs[0].splitlines()}
    assert listed == {line.split()[0] for line in expected.splitlines()[60:]}


@needs_native
def test_split_commit_graph_uses_python_walk(tmp_path: Path) -> None:
    """A commit-graph chain is not read natively; the output is still Git's."""
    repo = _small_repo(tmp_path)
    git("commit-graph", "write", "--reachable", "--split", cwd=repo)
    (repo / "top").write_text("more\n")
    git("commit", "-q", "-am", "more", cwd=repo)
    git("commit-graph", "write", "--reachable", "--split=no-merge", cwd=repo)
    r = Repository(repo)
    from gitodb.history.graph import CommitGraph

    g = CommitGraph(r)
    assert g.file is not None and g.file.base is not None
    assert native.commit_walk(g, [r.resolve("HEAD")], False) is None
    ref, got = _both(repo, "rev-list", "--parents", "HEAD")
    assert ref == (0, git("rev-list", "--parents", "HEAD", cwd=repo), "")
    assert got == ref


@needs_native
def test_reader_reads_like_odb(tmp_path: Path) -> None:
    repo = _small_repo(tmp_path)
    git("repack", "-q", "-a", "-d", cwd=repo)
    (repo / "loose").write_text("loose\n")
    git("add", "loose", cwd=repo)
    git("commit", "-q", "-m", "loose", cwd=repo)  # these objects stay loose
    r = Repository(repo)
    reader = native.reader(r)
    assert reader is not None
    try:
        ids = git("rev-list", "--all", "--objects", cwd=repo).split()
        for h in ids[::1]:
            if len(h) != 40:
                continue
            oid = bytes.fromhex(h.decode())
            t, data = r.odb.read(oid)
            got = reader.read(oid)
            assert got[1] == data
            assert {1: "commit", 2: "tree", 3: "blob", 4: "tag"}[got[0]] == t
    finally:
        reader.close()
    r.odb.close()  # the maps close: the reader released its buffers


HEADER_BYTES = st.binary(max_size=60).map(lambda b: bytes(b" a\nbk"[c % 5] for c in b))


@given(HEADER_BYTES)
@settings(max_examples=400)
def test_parse_headers_native_matches_python(data: bytes) -> None:
    got = parse_headers(data)
    ref = parse_headers_python(data)
    assert (got.headers, got.message, got.terminated) == (
        ref.headers,
        ref.message,
        ref.terminated,
    )


@needs_native
@pytest.mark.skipif(not CORPUS.is_dir(), reason="corpus not present")
@pytest.mark.parametrize(
    "args",
    [
        ("rev-list", "--all", "--objects"),
        ("rev-list", "--count", "--all"),
        ("rev-list", "--topo-order", "--parents", "--all"),
        ("log", "--format=%H %an %ae %at %s"),
    ],
)
def test_corpus_native_matches_git(args: tuple[str, ...]) -> None:
    with pure(False):
        status, out = cli(CORPUS, *args)
    assert status == 0
    assert out == git(*args, cwd=CORPUS)


@needs_native
def test_graph_count_and_contains_match_the_walk(tmp_path: Path) -> None:
    """``graph_count`` (the commits reached over the commit-graph alone) against the
    Python walk's count, and ``graph_contains`` against the graph file's lookup; a
    start the graph does not hold (a commit made after it) gives None, and the CLI's
    count then comes from the walk, as git's does."""
    from gitodb.history.graph import CommitGraph
    from gitodb.history.revwalk import RevWalk

    repo = _small_repo(tmp_path)
    git("checkout", "-q", "-b", "side", "HEAD~2", cwd=repo)
    for i in range(3):
        (repo / "s").write_text(f"{i}\n")
        git("add", "s", cwd=repo)
        git("commit", "-q", "-m", f"s{i}", cwd=repo)
    git("checkout", "-q", "-", cwd=repo)
    git("merge", "-q", "--no-ff", "-m", "m", "side", cwd=repo)
    git("commit-graph", "write", "--reachable", cwd=repo)
    r = Repository(repo)
    graph = CommitGraph(r)
    tips = [r.resolve("HEAD"), r.resolve("side")]
    for first_parent in (False, True):
        with pure(True):
            walk = RevWalk(r, first_parent=first_parent)
            for t in tips:
                walk.add(t)
            expected = sum(1 for _ in walk.commits())
        assert native.graph_count(graph, tips, first_parent) == expected
    blob = bytes.fromhex(git("rev-parse", "HEAD:top", cwd=repo).decode().strip())
    ids = [*tips, blob, tips[0]]
    f = graph.file
    assert f is not None
    assert native.graph_contains(graph, ids) == bytes(f.position(i) is not None for i in ids)
    assert native.graph_count(graph, [blob], False) is None
    (repo / "top").write_text("after the graph\n")
    git("commit", "-q", "-am", "new", cwd=repo)
    head = r.resolve("HEAD")
    assert native.graph_count(CommitGraph(r), [head], False) is None
    for args in (("rev-list", "--count", "--all"), ("rev-list", "--count", "HEAD")):
        with pure(False):
            assert cli(repo, *args) == (0, git(*args, cwd=repo)), args


@needs_native
def test_suspended_walk_holds_no_pack_buffer(tmp_path: Path) -> None:
    """Between batches the native walk holds no buffer of the packs: they can close."""
    from gitodb.history.revwalk import RevWalk

    repo = _small_repo(tmp_path)
    git("repack", "-q", "-a", "-d", cwd=repo)
    r = Repository(repo)
    walk = RevWalk(r)
    walk.add(r.resolve("HEAD"))
    it = walk.commits()
    first = next(it)
    assert first.id == r.resolve("HEAD")
    for pack in list(r.odb.packs):
        pack.close()
        assert pack._map.closed  # a buffer the walk held would keep the map open
    r.odb.packs.clear()
    r.odb.rescan_packs()
    rest = [n.id.hex() for n in it]
    assert rest == git("rev-list", "HEAD~1", cwd=repo).decode().split()


@needs_native
def test_native_log_format_on_odd_commits(tmp_path: Path) -> None:
    """The C formatter expands like the Python one (and Git) on identities without a
    date or with a zero-padded one, multi-line subjects and an encoding header,
    which it leaves to the Python formatter."""
    repo = _small_repo(tmp_path)
    tree = git("rev-parse", "HEAD^{tree}", cwd=repo).decode().strip()
    parent = git("rev-parse", "HEAD", cwd=repo).decode().strip()
    bodies = [
        b"author  Spaced  Name   <a@b> 0001700000000 +0100\n"
        b"committer C <c@d>\n\n\n  first line  \nsecond\t\n\nbody\n",
        b"author NoMail 12 +0000\ncommitter C <c@d> 5 -0130\nencoding ISO-8859-1\n\n"
        b"caf\xe9 subject\n",
        b"author A <a@b> 7 +0000\ncommitter C <c@d> 8 +0000\n",  # no message at all
    ]
    for body in bodies:
        raw = b"tree %s\nparent %s\n" % (tree.encode(), parent.encode()) + body
        out = git(
            "hash-object", "-t", "commit", "-w", "--literally", "--stdin", input=raw, cwd=repo
        )
        parent = out.decode().strip()
    git("update-ref", "refs/heads/odd", parent, cwd=repo)
    args = ("log", "--format=%H|%an|%ae|%at|%cn|%ce|%ct|%s|%P|%T", "odd")
    ref, got = _both(repo, *args)
    assert ref == (0, git(*args, cwd=repo), "")
    assert got == ref


@needs_native
def test_many_ref_tips_with_tags_among_them(tmp_path: Path) -> None:
    """``--all`` over many refs takes their ids in one block (``_quick_pending``):
    annotated tags of commits and of a tree, and commits the commit-graph does not
    hold (made after it), sit among the refs and are handled in their place; the
    lines and counts are git's, and ``graph_contains`` agrees with the file's own
    lookup for ids of every first byte (the fanout's ranges, 0x00 and 0xff too)."""
    from gitodb.history.graph import CommitGraph

    repo = _small_repo(tmp_path)
    commits = git("rev-list", "HEAD", cwd=repo).decode().split()
    tree = git("rev-parse", "HEAD^{tree}", cwd=repo).decode().strip()
    # commits of one date, each named by one ref alone (branches and tags): how the
    # walk orders them is its tie-break, which git's output fixes
    same_date = {"GIT_COMMITTER_DATE": "1500000000 +0000", "GIT_AUTHOR_DATE": "1500000000 +0000"}
    refs = [f"create refs/heads/b{i:03d} {commits[i % len(commits)]}\n" for i in range(300)]
    tips = []
    for i in range(8):
        made = subprocess.run(
            ["git", "commit-tree", "-p", commits[-1], "-m", f"s{i}", tree],
            cwd=repo,
            env={**git_env(), **same_date},
            capture_output=True,
            check=True,
        )
        tips.append(made.stdout.decode().strip())
    for i, tip in zip((20, 60, 100, 140), tips[:4], strict=True):
        refs.append(f"create refs/heads/b{i:03d}s {tip}\n")
    git("update-ref", "--stdin", cwd=repo, input="".join(refs).encode())
    for i, tip in zip((5, 80, 150, 299), tips[4:], strict=True):
        git("tag", "-a", "-m", "t", f"refs/heads/b{i:03d}t", tip, cwd=repo)
    git("tag", "-a", "-m", "tree", "tree-tag", "HEAD^{tree}", cwd=repo)
    git("pack-refs", "--all", cwd=repo)
    git("commit-graph", "write", "--reachable", cwd=repo)
    (repo / "top").write_text("after the graph\n")
    git("commit", "-q", "-am", "after", cwd=repo)
    git("branch", "b150x", cwd=repo)  # a tip the graph does not hold, mid-list
    for args in (
        ("rev-list", "--all"),
        ("rev-list", "--count", "--all"),
        ("rev-list", "--all", "--parents"),
        ("rev-list", "--all", "--objects"),
        ("log", "--format=%H %P %s", "--all"),
    ):
        with pure(False):
            assert cli(repo, *args) == (0, git(*args, cwd=repo)), args
    r = Repository(repo)
    graph = CommitGraph(r)
    f = graph.file
    assert f is not None
    held = [bytes.fromhex(c) for c in commits]
    ids = held + [bytes([b]) + held[0][1:] for b in range(256)] + [b"\0" * 20, b"\xff" * 20]
    assert native.graph_contains(graph, ids) == bytes(f.position(i) is not None for i in ids)


@needs_native
def test_left_start_without_exclusions_counts_like_git(tmp_path: Path) -> None:
    """A start marked as a symmetric range's left side (``RevWalk.add(left=True)``)
    with nothing excluded is walked and counted: the native listing used to drop it."""
    from gitodb.history.revwalk import RevWalk

    repo = _small_repo(tmp_path)
    git("commit-graph", "write", "--reachable", cwd=repo)
    r = Repository(repo)
    head, older = r.resolve("HEAD"), r.resolve("HEAD~2")
    want = int(git("rev-list", "--count", "HEAD", "HEAD~2", cwd=repo))
    for want_text in (False, True):
        walk = RevWalk(r)
        walk.add(head, left=True)
        walk.add(older)
        got = walk.native_text(False, want_text)
        count = got[0] if got is not None else sum(1 for _ in walk.commits())
        assert count == want
