"""The bulk tables' native paths (``_native/bulkcols.c``) against the Python paths and git."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")

from bulk_repos import build_history  # noqa: E402
from gitodb import bulk  # noqa: E402
from gitodb.bulk import commits  # noqa: E402
from helpers import git  # noqa: E402

native = pytest.importorskip("gitodb._native")  # a build without the native core

FORMATS = ["sha1", "sha256"]


@pytest.fixture(autouse=True)
def _native_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are of the native paths: a GITODB_PURE_WALK in the environment
    (a run of the suite on the Python walks) does not apply to them."""
    monkeypatch.delenv("GITODB_PURE_WALK", raising=False)


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bulknative")
    return {f: build_history(root / f, f) for f in FORMATS}


def _table(repo: Path, table: str, **options: object) -> pa.Table:
    batches = list(bulk.table_batches(repo, table, options=bulk.Options(**options)))
    return pa.Table.from_batches(batches, schema=bulk.schema(table))


def _both(
    monkeypatch: pytest.MonkeyPatch, repo: Path, table: str, **options: object
) -> tuple[pa.Table, pa.Table, int]:
    """(native table, Python table, batches the C parser accepted)."""
    accepted = []
    columns = native.commit_columns

    def counting(raws: list[bytes], rawsz: int, message: bool) -> object:
        got = columns(raws, rawsz, message)
        accepted.append(got is not None)
        return got

    with monkeypatch.context() as m:
        m.setattr(native, "commit_columns", counting)
        fast = _table(repo, table, **options)
    with monkeypatch.context() as m:
        m.setattr(commits, "_native_commit_rows", lambda *a, **k: None)
        slow = _table(repo, table, **options)
    return fast, slow, sum(accepted)


def _same(fast: pa.Table, slow: pa.Table) -> None:
    assert fast.schema == slow.schema
    assert fast.num_rows == slow.num_rows
    for name in fast.column_names:
        assert fast[name].to_pylist() == slow[name].to_pylist(), name


@pytest.mark.parametrize("fmt", FORMATS)
def test_native_commits_are_the_python_rows(
    monkeypatch: pytest.MonkeyPatch, repos: dict[str, Path], fmt: str
) -> None:
    repo = repos[fmt]
    fast, slow, accepted = _both(monkeypatch, repo, "commits", message=True)
    assert accepted >= 1  # the C parser built them
    _same(fast, slow)
    # and git's listing: rev-list --all --topo-order, with the parents
    listed = git("rev-list", "--all", "--topo-order", "--parents", cwd=repo).decode().split("\n")
    want = [line.split() for line in listed if line]
    got = [[r["id"], *r["parents"]] for r in fast.to_pylist()]
    assert got == want
    heads = {
        name: git("rev-list", name, cwd=repo).decode().split()
        for name in git("for-each-ref", "--format=%(refname)", cwd=repo).decode().split()
        if name.startswith(commits.LISTED_PREFIXES)
    }
    for r in fast.to_pylist():
        reach = {n for n, ids in heads.items() if r["id"] in ids}
        assert set(r["reachable_from"]) - {"HEAD"} == reach


@pytest.mark.parametrize("fmt", FORMATS)
def test_native_commits_in_small_batches(
    monkeypatch: pytest.MonkeyPatch, repos: dict[str, Path], fmt: str
) -> None:
    repo = repos[fmt]
    whole = _table(repo, "commits")
    batches = list(
        bulk.table_batches(repo, "commits", options=bulk.Options(batch_rows=2, batch_bytes=60))
    )
    assert len(batches) > 1
    assert all(b.num_rows <= 2 for b in batches)
    _same(pa.Table.from_batches(batches), whole)


@pytest.fixture(scope="module")
def odd_refs(tmp_path_factory: pytest.TempPathFactory, repos: dict[str, Path]) -> Path:
    """build_history's repository with refs to a tree, a blob, a tag of a tag, a tag
    of a blob, an unlisted ref (refs/pull/) and a loose commit on top of the pack."""
    repo = tmp_path_factory.mktemp("oddrefs") / "repo"
    git("clone", "-q", "--mirror", repos["sha1"], repo)
    git("repack", "-q", "-adf", cwd=repo)
    # no commit-graph: every commit is read (and parsed in C) from the pack or loose
    for graph in (repo / "objects" / "info").glob("commit-graph*"):
        shutil.rmtree(graph) if graph.is_dir() else graph.unlink()
    tree = git("rev-parse", "HEAD^{tree}", cwd=repo).decode().strip()
    blob = git("rev-parse", "HEAD:README", cwd=repo).decode().strip()
    git("update-ref", "refs/tags/a-tree", tree, cwd=repo)
    git("update-ref", "refs/tags/a-blob", blob, cwd=repo)
    git("tag", "-a", "-m", "of a blob", "blob-tag", blob, cwd=repo)
    git("tag", "-a", "-m", "of a tag", "tag-of-tag", "v1", cwd=repo)
    loose = git("commit-tree", "-p", "HEAD", "-m", "loose", tree, cwd=repo).decode().strip()
    git("update-ref", "refs/pull/1/head", loose, cwd=repo)
    git("update-ref", "refs/heads/loose", loose, cwd=repo)
    return repo


def test_native_commits_start_from_the_header_table(
    monkeypatch: pytest.MonkeyPatch, odd_refs: Path
) -> None:
    """The native path finds its starts' types in one header table (no start commit
    parsed in Python) and lists what the Python walk and git list."""
    from gitodb.history.graph import CommitGraph
    from gitodb.repo.odb import ObjectDatabase

    repo = odd_refs
    parsed: list[str] = []
    node = CommitGraph.node

    def spied(self: CommitGraph, oid: bytes, *args: object) -> object:
        parsed.append(oid.hex())
        return node(self, oid, *args)  # type: ignore[arg-type]

    with monkeypatch.context() as m:
        tables = _spy(m, ObjectDatabase, "read_header_table")
        m.setattr(CommitGraph, "node", spied)
        fast = _table(repo, "commits")
    assert tables and not parsed
    with monkeypatch.context() as m:
        m.setattr(commits, "_native_commit_rows", lambda *a, **k: None)
        slow = _table(repo, "commits")
    _same(fast, slow)
    listed = git("rev-list", "--all", "--topo-order", cwd=repo).decode().split()
    assert fast["id"].to_pylist() == listed
    loose = git("rev-parse", "loose", cwd=repo).decode().strip()
    (row,) = [r for r in fast.to_pylist() if r["id"] == loose]
    assert row["reachable_from"] == ["refs/heads/loose"]  # refs/pull/ is not named
    v1 = git("rev-parse", "v1^{commit}", cwd=repo).decode().strip()
    (row,) = [r for r in fast.to_pylist() if r["id"] == v1]
    assert "refs/tags/tag-of-tag" in row["reachable_from"]


def _odd_commit(repo: Path, raw: bytes, ref: str) -> None:
    oid = git("hash-object", "-t", "commit", "-w", "--literally", "--stdin", cwd=repo, input=raw)
    git("update-ref", ref, oid.decode().strip(), cwd=repo)


ODD = {
    # no blank line: no message
    "nomessage": b"author A <a@x> 1 +0000\ncommitter C <c@x> 2 +0000\n",
    # idents Git cannot split, or without a date or zone
    "noemail": b"author Just A Name 5 +0000\ncommitter C <c@x>\n\nsubject\n",
    "nozone": b"author A  \t<a@x> 7\ncommitter C <c@x> 8 0100\n\nsubject\n",
    "stray": b"author A <a@x> <b> 9 -0130\ncommitter C <c> x> 10 +1400\n"
    b"\n\n \n  two\t\n lines \n\nbody\n",
    # whitespace of every kind around the subject, a CR
    "spaces": b"author A <a@x> 11 +0000\ncommitter C <c@x> 12 +0000\n"
    b"\n\t\x0b\r\n  s1 \r\n\ts2\n\x0c\nb\n",
    # other headers, a continued one, an encoding
    "headers": b"author A <a@x> 13 +0000\ncommitter C <c@x> 14 +0000\nencoding ISO-8859-1\n"
    b"gpgsig -----BEGIN-----\n line\n -----END-----\nx-odd\n\nsig\n",
    # invalid UTF-8: a surrogate, an overlong, a truncated sequence
    "bytes": b"author \xed\xa0\x80 <\xc0\xaf@x> 15 +0000\n"
    b"committer C\xe2\x82 <c@x> 16 +0000\n\n\xf4\x90\x80\x80\n",
    "utf8": "author Zoë 😀 <z@x> 17 +0000\ncommitter C <c@x> 18 +0000\n\nété\n".encode(),
    # the C parser leaves these to Python: a continued author line, a time past int64
    "continued": b"author A <a@x> 19 +0000\n more\ncommitter C <c@x> 20 +0000\n\ns\n",
    "bigtime": b"author A <a@x> 99999999999999999999 +0000\ncommitter C <c@x> 21 +0000\n\ns\n",
}


@pytest.fixture(scope="module")
def odd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("odd") / "repo"
    git("init", "-q", repo)
    (repo / "f").write_text("x\n")
    git("add", "f", cwd=repo)
    git("commit", "-q", "-m", "base", cwd=repo)
    tree = git("rev-parse", "HEAD^{tree}", cwd=repo).strip()
    for name, body in ODD.items():
        _odd_commit(repo, b"tree " + tree + b"\n" + body, f"refs/heads/{name}")
    return repo


@pytest.mark.parametrize("name", [n for n in ODD if n != "bigtime"])
def test_odd_commits_native_and_python_agree(
    monkeypatch: pytest.MonkeyPatch, odd: Path, name: str
) -> None:
    fast, slow, accepted = _both(monkeypatch, odd, "commits", rev=name, message=True)
    assert fast.num_rows == 1
    assert accepted == (0 if name == "continued" else 1)
    _same(fast, slow)


def test_odd_commit_values(odd: Path) -> None:
    def row(name: str) -> dict[str, object]:
        (r,) = _table(odd, "commits", rev=name, message=True).to_pylist()
        return r  # type: ignore[no-any-return]

    r = row("nomessage")
    assert (r["subject"], r["message"], r["author_time"], r["author_tz"]) == ("", "", 1, "+0000")
    r = row("noemail")
    assert (r["author_name"], r["author_email"], r["author_time"], r["author_tz"]) == (
        "",
        "",
        None,
        None,
    )
    assert (r["committer_time"], r["committer_tz"]) == (None, None)
    r = row("nozone")
    assert (r["author_name"], r["author_time"], r["committer_time"]) == ("A", None, None)
    r = row("stray")
    assert (r["author_email"], r["author_time"], r["author_tz"]) == ("a@x", 9, "-0130")
    assert (r["committer_email"], r["committer_time"], r["subject"]) == ("c", 10, "  two  lines")
    assert row("spaces")["subject"] == "  s1 \ts2"
    r = row("bytes")
    assert r["author_name_bytes"] == b"\xed\xa0\x80"
    assert r["author_email_bytes"] == b"\xc0\xaf@x"
    assert r["committer_name_bytes"] == b"C\xe2\x82"
    assert r["subject_bytes"] == b"\xf4\x90\x80\x80"
    assert r["committer_email_bytes"] is None
    r = row("utf8")
    assert (r["author_name"], r["subject"], r["author_name_bytes"]) == ("Zoë 😀", "été", None)
    # git log agrees on the parts it prints ("spaces" not: Git's isspace leaves out
    # \v and \f, history.pretty.subject_of trims them; the table follows gitodb's %s)
    for name in ("stray", "utf8"):
        shown = git("log", "-1", "--format=%an%x00%ae%x00%s", name, cwd=odd).rstrip(b"\n")
        r = row(name)
        assert shown.split(b"\0") == [
            str(r[c]).encode() for c in ("author_name", "author_email", "subject")
        ]


def test_a_time_past_int64_is_an_error_either_way(
    monkeypatch: pytest.MonkeyPatch, odd: Path
) -> None:
    with pytest.raises(OverflowError):
        _table(odd, "commits", rev="bigtime")
    monkeypatch.setattr(commits, "_native_commit_rows", lambda *a, **k: None)
    with pytest.raises(OverflowError):
        _table(odd, "commits", rev="bigtime")


def test_all_odd_commits_in_one_walk(monkeypatch: pytest.MonkeyPatch, odd: Path) -> None:
    git("update-ref", "-d", "refs/heads/bigtime", cwd=odd)
    try:
        fast, slow, _accepted = _both(monkeypatch, odd, "commits", message=True)
        _same(fast, slow)
        # (the order of these undated tips is the Python walk's, which the native
        # listing follows; the set is git's)
        want = git("rev-list", "--all", "--topo-order", cwd=odd).decode().split()
        assert sorted(fast["id"].to_pylist()) == sorted(want)
    finally:
        tree = git("rev-parse", "HEAD^{tree}", cwd=odd).strip()
        _odd_commit(odd, b"tree " + tree + b"\n" + ODD["bigtime"], "refs/heads/bigtime")


def test_commit_columns_buffers() -> None:
    tree = b"ab" * 20
    raws = [
        b"tree " + tree + b"\nauthor A B <a@b> 5 +0100\ncommitter C <c> 6 -0200\n\nhi\n\nbody\n",
        b"tree " + tree.upper() + b"\nauthor X <x>\ncommitter Y <y> 7 +0000\n\n",
    ]
    cols = native.commit_columns(raws, 20, True)
    tree_hex, an, ae, at, atz, cn, ce, ct, ctz, subj, msg = cols
    assert tree_hex == tree + tree  # lower-cased
    assert an == (b"\0\0\0\0\x03\0\0\0\x04\0\0\0", b"A BX", None, False)
    assert at[1] == b"\x01"  # the second author has no time: null
    assert at[0][:8] == (5).to_bytes(8, "little")
    assert atz == (b"\0\0\0\0\x05\0\0\0\x05\0\0\0", b"+0100", b"\x01", False)
    assert subj[1] == b"hi"
    assert msg[1] == b"hi\n\nbody\n"
    assert (
        native.commit_columns([raws[0].replace(b"\n\nhi", b"\nx-other v\n more\n\nhi")], 20, 0)
        is not None
    )
    assert native.commit_columns([raws[0].replace(b"author A", b"author A\n B")], 20, 0) is None
    assert native.commit_columns([b"tree zz\n"], 20, 0) is None
    with pytest.raises(TypeError):
        native.commit_columns([memoryview(raws[0])], 20, 0)


def test_reach_walk_hands_down_the_bits() -> None:
    ids = [bytes([i]) * 20 for i in range(1, 5)]
    h = [i.hex().encode() for i in ids]
    # 1 -> 2 -> 4, 3 -> 4 (topological: children first)
    text = (
        h[0]
        + b" "
        + h[1]
        + b"\n"
        + h[2]
        + b" "
        + h[3]
        + b"\n"
        + h[1]
        + b" "
        + h[3]
        + b"\n"
        + h[3]
        + b"\n"
    )
    w = native.ReachWalk(text, 20, [(ids[0], 0), (ids[2], 70)], 71)
    first = w.next(2, 1000)
    assert first[0] == 2 and first[1] == h[0] + h[2]
    assert first[3] == h[1] + h[3]
    rest = w.next(10, 1000)
    assert rest[0] == 2

    def ints(b: bytes) -> list[int]:
        return memoryview(b).cast("i").tolist()

    assert (ints(first[4]), ints(first[5])) == ([0, 1, 2], [0, 70])
    assert (ints(rest[4]), ints(rest[5])) == ([0, 1, 3], [0, 0, 70])  # per batch
    assert w.next(1, 1) is None
    assert first[6] == rest[6] == b""  # no names given: the indices
    with pytest.raises(ValueError):
        native.ReachWalk(b"xyz\n", 20, [], 0)
    with pytest.raises(ValueError):  # one name per bit
        native.ReachWalk(text, 20, [], 2, ["HEAD"])


@settings(max_examples=60, deadline=None)
@given(
    parents=st.lists(st.lists(st.integers(0, 40), max_size=3), min_size=1, max_size=40),
    tips=st.lists(st.tuples(st.integers(0, 39), st.integers(0, 69)), max_size=20),
    rows=st.integers(1, 7),
    items=st.integers(1, 30),
)
def test_reach_walk_names_are_the_indices_names(
    parents: list[list[int]], tips: list[tuple[int, int]], rows: int, items: int
) -> None:
    """With the bits' names, next() gives reachable_from's strings: the same as the
    names of its indices (what a take of the names made before), batch by batch."""
    n = len(parents)
    ids = [i.to_bytes(2, "big") * 10 for i in range(n)]
    # a topological listing: each commit's parents come after it
    text = b"".join(
        ids[i].hex().encode()
        + b"".join(b" " + ids[p].hex().encode() for p in sorted({i + 1 + q for q in ps}) if p < n)
        + b"\n"
        for i, ps in enumerate(parents)
    )
    names = [f"refs/tags/v{b}-é" if b % 3 else f"refs/heads/b{b}" for b in range(70)]
    bits = [(ids[r % n], b) for r, b in tips]
    plain = native.ReachWalk(text, 20, bits, 70)
    named = native.ReachWalk(text, 20, bits, 70, names)
    while True:
        a, b = plain.next(rows, items), named.next(rows, items)
        if a is None:
            assert b is None
            break
        assert b is not None and a[:5] == b[:5] and a[6] == b""
        idx = memoryview(a[5]).cast("i").tolist()
        got = pa.StringArray.from_buffers(
            len(b[5]) // 4 - 1, pa.py_buffer(b[5]), pa.py_buffer(b[6])
        ).to_pylist()
        assert got == [names[i] for i in idx]


@settings(max_examples=60, deadline=None)
@given(
    parents=st.lists(st.lists(st.integers(0, 40), max_size=3), min_size=1, max_size=40),
    tips=st.lists(st.tuples(st.integers(0, 39), st.integers(0, 69)), max_size=20),
    skip=st.integers(0, 45),
    rows=st.integers(1, 7),
)
def test_reach_walk_skip_then_next_is_the_rest(
    parents: list[list[int]], tips: list[tuple[int, int]], skip: int, rows: int
) -> None:
    """skip(k) passes over k rows (their bits handed down): the rows after it are the
    ones a walk from the start hands out there, reachable_from included."""
    n = len(parents)
    ids = [i.to_bytes(2, "big") * 10 for i in range(n)]
    text = b"".join(
        ids[i].hex().encode()
        + b"".join(b" " + ids[p].hex().encode() for p in sorted({i + 1 + q for q in ps}) if p < n)
        + b"\n"
        for i, ps in enumerate(parents)
    )
    bits = [(ids[r % n], b) for r, b in tips]

    def rest(w: object, first: int) -> list[tuple[bytes, list[int], list[int]]]:
        out = []
        while True:
            got = w.next(rows, 1000)  # type: ignore[attr-defined]
            if got is None:
                return out[first:]
            k, ids_hex, _pe, _ph, ends, idx, _ = got
            e, ix = memoryview(ends).cast("i").tolist(), memoryview(idx).cast("i").tolist()
            for j in range(k):
                out.append((ids_hex[40 * j : 40 * j + 40], ix[e[j] : e[j + 1]], []))

    whole = native.ReachWalk(text, 20, bits, 70)
    assert len(whole) == n
    want = rest(whole, min(skip, n))
    part = native.ReachWalk(text, 20, bits, 70)
    assert part.skip(skip) == min(skip, n)
    assert rest(part, 0) == want
    assert part.skip(1) == 0  # at the end


@pytest.mark.parametrize("fmt", FORMATS)
def test_native_slices_are_the_python_slices(
    monkeypatch: pytest.MonkeyPatch, repos: dict[str, Path], fmt: str
) -> None:
    """Each slice of a split commits table, native and Python, and together the
    unsplit table (order included)."""
    repo = repos[fmt]
    whole = _table(repo, "commits")
    tables = []
    for part in bulk.parts(str(repo), "commits", bulk.Options(split_bytes=1)):
        fast = pa.Table.from_batches(
            list(bulk.table_batches(repo, "commits", part)), bulk.schema("commits")
        )
        with monkeypatch.context() as m:
            m.setattr(commits, "_native_commit_rows", lambda *a, **k: None)
            slow = pa.Table.from_batches(
                list(bulk.table_batches(repo, "commits", part)), bulk.schema("commits")
            )
        _same(fast, slow)
        tables.append(fast)
    assert len(tables) == 2 and all(t.num_rows > 0 for t in tables)
    _same(pa.concat_tables(tables), whole)


def test_pure_walk_uses_the_python_rows(
    monkeypatch: pytest.MonkeyPatch, repos: dict[str, Path]
) -> None:
    repo = repos["sha1"]
    fast = _table(repo, "commits", message=True)
    monkeypatch.setenv("GITODB_PURE_WALK", "1")
    monkeypatch.setattr(native, "commit_columns", None)  # would fail if called
    _same(_table(repo, "commits", message=True), fast)


# -- files ---------------------------------------------------------------------------
def _spy(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[int]:
    """Count the calls of ``module.name``."""
    calls: list[int] = []
    real = getattr(module, name)

    def counting(*args: object) -> object:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(module, name, counting)
    return calls


@pytest.fixture(scope="module")
def odd_paths(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tree with a Latin-1 file name, a symlink, an executable, nested directories."""
    repo = tmp_path_factory.mktemp("paths") / "repo"
    git("init", "-q", repo)
    (repo / "d" / "e").mkdir(parents=True)
    (repo / "d" / "e" / "deep.txt").write_text("deep\n" * 100)
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "link").symlink_to("run.sh")
    with open(bytes(repo) + b"/caf\xe9.txt", "wb") as f:
        f.write(b"latin-1 name\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "paths", cwd=repo)
    (repo / "d" / "e" / "deep.txt").write_text("deep\n" * 101)  # a delta in the pack
    git("commit", "-q", "-am", "again", cwd=repo)
    git("repack", "-q", "-adf", cwd=repo)
    return repo


@pytest.mark.parametrize("which", ["sha1", "sha256", "paths"])
def test_native_files_are_the_python_rows(
    monkeypatch: pytest.MonkeyPatch, repos: dict[str, Path], odd_paths: Path, which: str
) -> None:
    from gitodb.bulk import files

    repo = odd_paths if which == "paths" else repos[which]
    with monkeypatch.context() as m:
        calls = _spy(m, native, "ls_tree_columns")
        fast = _table(repo, "files")
        assert calls
    with monkeypatch.context() as m:
        m.setattr(files, "_native_file_rows", lambda *a, **k: None)
        slow = _table(repo, "files")
    _same(fast, slow)
    # and git: ls-tree -r -l
    listed = git("ls-tree", "-r", "-l", "-z", "HEAD", cwd=repo).split(b"\0")
    want = []
    for rec in listed:
        if rec:
            meta, path = rec.split(b"\t", 1)
            mode, kind, oid, size = meta.decode().split()
            want.append((path, mode, kind, oid, None if size == "-" else int(size)))
    got = [
        (
            r["path_bytes"] if r["path_bytes"] is not None else r["path"].encode(),
            r["mode"],
            r["type"],
            r["id"],
            r["size"],
        )
        for r in fast.to_pylist()
    ]
    assert got == want


@pytest.fixture(scope="module")
def mixed_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tree whose blobs are packed (some as deltas) and loose, with a submodule."""
    repo = tmp_path_factory.mktemp("mixed") / "repo"
    git("init", "-q", repo)
    for i in range(6):
        (repo / f"p{i}.txt").write_text(f"packed {i}\n" * (50 + i))
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "packed", cwd=repo)
    (repo / "p0.txt").write_text("packed 0\n" * 51)  # a delta on the old p0
    git("commit", "-q", "-am", "delta", cwd=repo)
    git("repack", "-q", "-adf", cwd=repo)
    (repo / "loose-a.txt").write_text("loose a\n")
    (repo / "loose-b.txt").write_text("loose b\n" * 3)
    sub = "1" * 40
    git("update-index", "--add", "--cacheinfo", f"160000,{sub},sub", cwd=repo)
    git("add", "loose-a.txt", "loose-b.txt", cwd=repo)
    git("commit", "-q", "-m", "loose and a submodule", cwd=repo)
    return repo


def test_native_file_sizes_in_one_call_per_pack(
    monkeypatch: pytest.MonkeyPatch, mixed_store: Path
) -> None:
    """The packed blobs' sizes come from the packs' header table; only the loose
    ones are asked one by one (read_header), and the rows are the Python rows."""
    from gitodb.bulk import files
    from gitodb.repo.odb import ObjectDatabase

    repo = mixed_store
    with monkeypatch.context() as m:
        calls = _spy(m, ObjectDatabase, "read_header")
        tables = _spy(m, ObjectDatabase, "read_header_table")
        fast = _table(repo, "files")
    assert len(calls) == 2  # loose-a.txt, loose-b.txt
    assert tables
    with monkeypatch.context() as m:
        m.setattr(files, "_native_file_rows", lambda *a, **k: None)
        slow = _table(repo, "files")
    _same(fast, slow)
    want = {}
    for rec in git("ls-tree", "-r", "-l", "-z", "HEAD", cwd=repo).split(b"\0"):
        if rec:
            meta, path = rec.split(b"\t", 1)
            size = meta.split()[3]
            want[path.decode()] = None if size == b"-" else int(size)
    assert {r["path"]: r["size"] for r in fast.to_pylist()} == want
    assert want["sub"] is None


def test_native_files_in_batches(repos: dict[str, Path]) -> None:
    repo = repos["sha1"]
    whole = _table(repo, "files")
    batches = list(bulk.table_batches(repo, "files", options=bulk.Options(batch_rows=3)))
    assert len(batches) > 1 and all(b.num_rows <= 3 for b in batches)
    _same(pa.Table.from_batches(batches), whole)


def test_ls_tree_columns_refuses_what_is_not_a_listing() -> None:
    with pytest.raises(ValueError):
        native.ls_tree_columns(b"100644 blob abc\tx\0", 20)
    n, path, mode, kind, ids, blobs = native.ls_tree_columns(
        b"100644 blob " + b"a" * 40 + b"\tx y\0" + b"160000 commit " + b"b" * 40 + b"\tsub\0", 20
    )
    assert (n, path[1], mode[1], kind[1], ids, blobs) == (
        2,
        b"x ysub",
        b"100644160000",
        b"blobcommit",
        b"a" * 40 + b"b" * 40,
        b"\x01\x00",
    )


# -- objects -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ref_deltas(tmp_path_factory: pytest.TempPathFactory, repos: dict[str, Path]) -> Path:
    """The sha1 history repacked with REF_DELTA entries (no delta base offsets)."""
    import shutil

    repo = tmp_path_factory.mktemp("refdelta") / "repo"
    shutil.copytree(repos["sha1"], repo, symlinks=True)
    git("-c", "repack.useDeltaBaseOffset=false", "repack", "-q", "-adf", cwd=repo)
    return repo


@pytest.mark.parametrize("which", ["sha1", "sha256", "refdelta"])
def test_native_objects_are_the_python_rows(
    monkeypatch: pytest.MonkeyPatch, repos: dict[str, Path], ref_deltas: Path, which: str
) -> None:
    from gitodb.bulk import objects

    repo = ref_deltas if which == "refdelta" else repos[which]
    (pack,) = (repo / ".git/objects/pack").glob("*.pack")
    for options in (
        bulk.Options(),
        bulk.Options(split_bytes=1, range_bytes=max(1, pack.stat().st_size // 4)),
    ):
        parts = bulk.parts(str(repo), "objects", options)

        def table(parts: list[str] = parts, options: bulk.Options = options) -> pa.Table:
            return pa.Table.from_batches(
                [b for p in parts for b in bulk.table_batches(repo, "objects", p, options)],
                schema=bulk.schema("objects"),
            )

        with monkeypatch.context() as m:
            calls = _spy(m, objects, "_pack_columns")
            fast = table()
            assert calls
        with monkeypatch.context() as m:
            m.setattr(objects, "_pack_columns", None)
            slow = table()
        _same(fast, slow)
    # and git: every packed object with its delta base, as verify-pack -v lists them
    # (its size column is the delta's own for a delta: compared for the others only)
    idx = str(pack).replace(".pack", ".idx")
    verified = git("verify-pack", "-v", idx, cwd=repo).decode().splitlines()
    want = {}
    for line in verified:
        f = line.split()
        if len(f) >= 5 and len(f[0]) == len(fast["id"][0].as_py()):
            base = f[6] if len(f) > 6 else None
            want[f[0]] = (f[1], None if base else int(f[2]), int(f[4]), base)
    got = {
        r["id"]: (r["type"], None if r["delta_base"] else r["size"], r["offset"], r["delta_base"])
        for r in fast.to_pylist()
        if r["pack"] is not None
    }
    assert got == want
    if which == "refdelta":
        assert any(r["delta_base"] for r in fast.to_pylist())


def test_reach_walk_counts_are_the_names_each_row_lists() -> None:
    """counts() gives, per row, how many names next() would list for it."""
    ids = [i.to_bytes(2, "big") * 10 for i in range(6)]
    h = [i.hex().encode() for i in ids]
    links = {0: [1, 2], 1: [3], 2: [3], 3: [4], 4: [], 5: [4]}
    text = b"".join(h[i] + b"".join(b" " + h[p] for p in links[i]) + b"\n" for i in range(6))
    bits = [(ids[0], 0), (ids[2], 1), (ids[5], 2), (ids[5], 70)]
    counts = memoryview(native.ReachWalk(text, 20, bits, 71).counts()).cast("i").tolist()
    w = native.ReachWalk(text, 20, bits, 71)
    got = w.next(10, 1000)
    ends = memoryview(got[4]).cast("i").tolist()
    assert counts == [b - a for a, b in zip(ends, ends[1:], strict=False)] == [1, 1, 2, 2, 2, 2]


@pytest.mark.parametrize(
    ("counts", "n"), [([], 2), ([0] * 10, 2), ([0] * 9 + [5000], 2), ([3] * 7, 3), ([1], 4)]
)
def test_slices_cover_the_listing_once_in_order(counts: list[int], n: int) -> None:
    bounds = [commits.slice_bounds(counts, (k, n)) for k in range(n)]
    assert bounds[0][0] == 0 and bounds[-1][1] == len(counts)
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:], strict=False))
    assert all(start <= stop for start, stop in bounds)
    if counts == [0] * 10:  # equal rows: equal slices
        assert bounds == [(0, 5), (5, 10)]
    if counts == [0] * 9 + [5000]:  # the heavy last row is a slice of its own
        assert bounds[1] == (9, 10)
