"""Ref tables (``gitodb.refs.table``) and for-each-ref's plain formats built on them.

The native scan, overlay and formatter against their Python references on generated
input (hypothesis); ``FilesRefStore.ref_table`` against ``iter_refs``; and the CLI
against git on repositories with packed and loose refs, symbolic, dangling and broken
refs, annotated tags (peeled lines) and many refs.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitodb.refs import table as reftable_mod
from gitodb.refs.table import (
    RefTable,
    overlay_python,
    packed_table,
    packed_table_python,
    table_of,
)
from gitodb.repo import Repository
from helpers import commit_at, git, git_env, run_cli, run_gitodb

native = pytest.mark.skipif(not reftable_mod.native, reason="built without the native core")

HEX = "0123456789abcdef"
_ID = st.text(alphabet=HEX, min_size=40, max_size=40)
_NAME = st.lists(st.sampled_from(["a", "b", "heads", "x/y", "zz", "Z", "-", "9"]), min_size=1).map(
    lambda parts: "refs/" + "/".join(parts)
)
# lines a plain scan takes and lines it refuses (see test_ref_listing_native)
_ODD = st.sampled_from(
    ["# other\n", "\n", "x", f"{'A' * 40} refs/heads/x\n", f"{'1' * 39} refs/heads/x\n", "^12\n"]
)


def _packed(entries: list[tuple[str, str, str | None]], header: bool) -> str:
    text = "# pack-refs with: peeled fully-peeled sorted \n" if header else ""
    for oid, name, peeled in entries:
        text += f"{oid} {name}\n" + (f"^{peeled}\n" if peeled else "")
    return text


_ENTRY = st.tuples(_ID, _NAME, st.one_of(st.none(), _ID))


@native
@settings(max_examples=300, deadline=None)
@given(
    st.lists(_ENTRY, max_size=10),
    st.booleans(),
    st.sampled_from(["sorted", "shuffled", "odd"]),
    st.data(),
)
def test_packed_refs_table_equals_python(
    entries: list[tuple[str, str, str | None]], header: bool, order: str, data: st.DataObject
) -> None:
    if order == "sorted":  # the common file: sorted, each name once
        entries = sorted({e[1]: e for e in entries}.values(), key=lambda e: e[1])
    text = _packed(entries, header)
    if order == "odd":
        at = data.draw(st.integers(0, len(text)))
        text = text[:at] + data.draw(_ODD) + text[at:]
    raw = text.encode()
    want = packed_table_python(raw, 40)
    got = reftable_mod._packed_refs_table(raw, 40)  # noqa: SLF001
    assert got == want
    if order == "sorted":
        assert isinstance(got, tuple)  # the sorted file always has its table
        t = RefTable(got, 20)
        assert [(n, o.hex()) for n, o in t.items()] == [(n, o) for o, n, _ in entries]
        assert [t.peeled(i) for i in range(len(t))] == [
            bytes.fromhex(p) if p else None for _, _, p in entries
        ]


def test_packed_table_python_orders() -> None:
    a, b = "1" * 40, "2" * 40
    ok = f"{a} refs/a\n^{b}\n{b} refs/b\n".encode()
    got = packed_table_python(ok, 40)
    assert isinstance(got, tuple)
    assert RefTable(got, 20).names() == ["refs/a", "refs/b"]
    assert packed_table_python(f"{b} refs/b\n{a} refs/a\n".encode(), 40) is False
    assert packed_table_python(f"{a} refs/a\n{b} refs/a\n".encode(), 40) is False  # repeated
    assert packed_table_python(f"{a} refs/a b\n".encode(), 40) is None  # not plain


def _table(entries: list[tuple[bytes, bytes, bytes | None]]) -> RefTable:
    from gitodb.refs.base import Ref

    refs = [Ref(n.decode(), o, None, p) for n, o, p in entries]
    return table_of(refs, 20)


_BNAME = _NAME.map(str.encode)
_RAW = st.binary(min_size=20, max_size=20)


@native
@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(_BNAME, st.tuples(_RAW, st.one_of(st.none(), _RAW)), max_size=10),
    st.dictionaries(_BNAME, st.one_of(st.none(), _RAW), max_size=6),
)
def test_overlay_equals_python(
    base: dict[bytes, tuple[bytes, bytes | None]], over: dict[bytes, bytes | None]
) -> None:
    t = _table([(n, o, p) for n, (o, p) in sorted(base.items())])
    names = sorted(over)
    ids = [over[n] for n in names]
    got = reftable_mod._ref_table_overlay(t.parts, 20, names, ids)  # noqa: SLF001
    assert got == overlay_python(t.parts, 20, names, ids)
    merged = {n: o for n, (o, _) in base.items()}
    for n, o in over.items():
        if o is None:
            merged.pop(n, None)
        else:
            merged[n] = o
    assert [(n.encode(), o) for n, o in RefTable(got, 20).items()] == sorted(merged.items())


@native
def test_native_calls_refuse_inconsistent_input() -> None:
    from gitodb._native import format_ref_table, ref_table_overlay

    t = _table([(b"refs/a", b"\1" * 20, None), (b"refs/b", b"\2" * 20, None)])
    names, starts, ids, peeled, flags = t.parts
    for bad in (
        (names[:-1], starts, ids, peeled, flags),  # a name without its newline
        (names, starts, ids[:-1], peeled, flags),  # ids cut short
        (names, starts[:-4], ids, peeled, flags),
    ):
        with pytest.raises(ValueError):
            ref_table_overlay(bad, 20, [], [])
    with pytest.raises(ValueError):  # out of order
        ref_table_overlay(t.parts, 20, [b"refs/b", b"refs/a"], [None, None])
    with pytest.raises(ValueError):  # a range past the table
        format_ref_table(((1, b""),), t.parts, 20, 0, 3, False, bytes(3), bytes(24), False)
    with pytest.raises(ValueError):  # deref atoms have no peeled values here
        format_ref_table(((5, b""),), t.parts, 20, 0, 2, False, bytes(2), bytes(16), False)


@native
@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(_BNAME, _RAW, max_size=8),
    st.lists(st.sampled_from([(0, b" "), (0, b"\t"), (1, b""), (2, b""), (3, b""), (4, b"")])),
    st.data(),
)
def test_format_ref_table_equals_format_refs(
    refs: dict[bytes, bytes], plan: list[tuple[int, bytes]], data: st.DataObject
) -> None:
    from gitodb._native import format_ref_table, format_refs

    entries = sorted(refs.items())
    t = _table([(n, o, None) for n, o in entries])
    n = len(entries)
    lo = data.draw(st.integers(0, n))
    hi = data.draw(st.integers(lo, n))
    reverse = data.draw(st.booleans())
    omit_empty = data.draw(st.booleans())
    types = bytes(data.draw(st.lists(st.integers(1, 4), min_size=hi - lo, max_size=hi - lo)))
    sizes = b"".join(
        x.to_bytes(8, "little")
        for x in data.draw(st.lists(st.integers(0, 2**64 - 1), min_size=hi - lo, max_size=hi - lo))
    )
    got = format_ref_table(tuple(plan), t.parts, 20, lo, hi, reverse, types, sizes, omit_empty)
    order = list(range(hi - lo))[::-1] if reverse else list(range(hi - lo))
    size_view = memoryview(sizes).cast("Q")
    want = format_refs(
        tuple(plan),
        [entries[lo + j][0] for j in order],
        [entries[lo + j][1] for j in order],
        bytes(types[j] for j in order),
        b"".join(size_view[j].to_bytes(8, "little") for j in order),
        None,
        omit_empty,
    )
    assert got == want


# -- the store's table and the CLI against git ---------------------------------------


def _repo(path: Path) -> Path:
    git("init", "-q", str(path))
    for i in range(6):
        (path / "f").write_text(f"{i}\n")
        git("-C", str(path), "add", "-A")
        commit_at(path, f"commit {i}", i)
        git("-C", str(path), "branch", f"topic/{i}")
        git("-C", str(path), "tag", "-a", "-m", f"tag {i}", f"v{i}")
    for i in range(300):  # many refs
        git("-C", str(path), "update-ref", f"refs/many/{i:03d}", f"topic/{i % 6}")
    git("-C", str(path), "update-ref", "refs/misc/tree", "HEAD^{tree}")
    git("-C", str(path), "update-ref", "refs/misc/blob", "HEAD:f")
    git("-C", str(path), "pack-refs", "--all")
    # loose refs over packed ones and of their own; a loose commit; symbolic refs
    (path / "f").write_text("loose\n")
    git("-C", str(path), "add", "-A")
    commit_at(path, "loose", 50)
    git("-C", str(path), "update-ref", "refs/heads/topic/2", "HEAD")
    git("-C", str(path), "update-ref", "refs/heads/loose", "HEAD")
    git("-C", str(path), "update-ref", "refs/many/150", "v3")
    git("-C", str(path), "symbolic-ref", "refs/remotes/origin/HEAD", "refs/heads/topic/4")
    git("-C", str(path), "symbolic-ref", "refs/remotes/origin/gone", "refs/heads/nothere")
    return path


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _repo(tmp_path_factory.mktemp("reftable") / "r")


@native
def test_store_table_equals_iter_refs(repo: Path) -> None:
    r = Repository(repo)
    t = r.refs.ref_table()
    assert t is not None
    want = []
    for ref in r.refs.iter_refs():
        if ref.target is None:
            want.append((ref.name, ref.oid))
            continue
        resolved = r.refs.resolve_ref(ref.name)
        if resolved is not None and resolved[1] is not None:
            want.append((ref.name, resolved[1]))
    assert list(t.items()) == want
    assert len(t) == len(want) > 300
    assert t.ids == b"".join(o for _, o in want)
    # peeled lines kept for the packed refs that were not overridden
    packed = {n: ref.peeled for n, ref in r.refs._packed().items()}  # noqa: SLF001
    for i, name in enumerate(t.names()):
        if name in packed and name != "refs/many/150":
            assert t.peeled(i) == packed[name], name
    lo, hi = t.prefix_range(b"refs/tags/")
    assert t.names()[lo:hi] == [f"refs/tags/v{i}" for i in range(6)]


@native
def test_one_scan_of_packed_refs_per_version(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the point lookups of opening a repository and the listing share one scan
    calls = []
    real = reftable_mod._packed_refs_table  # noqa: SLF001

    def counting(data: bytes, hexsz: int) -> object:
        calls.append(len(data))
        return real(data, hexsz)

    monkeypatch.setattr(reftable_mod, "_packed_refs_table", counting)
    r = Repository(repo)
    assert r.refs.resolve("refs/tags/v1") is not None  # a packed lookup: bisected
    assert r.refs.ref_table() is not None
    assert r.refs.ref_table() is not None
    assert len(calls) == 1


FORMATS = [
    [],
    ["--format=%(refname) %(objectname) %(objecttype)"],
    ["--format=%(objectsize) %(refname)"],
    ["--format=%(refname)"],
    ["--sort=-refname"],
    ["--count=7"],
    ["--sort=-refname", "--count=4"],
    ["--sort=refname", "--format=%(objecttype)%00%(objectname)"],
    ["refs/tags/"],
    ["refs/heads", "refs/many/150", "refs/misc/tre"],
    ["--sort=-refname", "--count=3", "refs/many/", "refs/tags/v1"],
]


@pytest.mark.parametrize("args", FORMATS)
def test_cli_matches_git(
    repo: Path, capfdbinary: pytest.CaptureFixture[bytes], args: list[str]
) -> None:
    want = git("-C", str(repo), "for-each-ref", *args)
    capfdbinary.readouterr()
    assert run_cli(repo, "for-each-ref", *args) == 0
    assert capfdbinary.readouterr().out == want


@pytest.mark.parametrize("args", FORMATS[:3])
def test_cli_on_reftable_matches_git(
    repo: Path, tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes], args: list[str]
) -> None:
    table = tmp_path / "t"
    shutil.copytree(repo, table)
    proc = run_gitodb("refs", "migrate", "--ref-format=reftable", cwd=table)
    assert proc.returncode == 0, proc.stderr
    want = git("-C", str(repo), "for-each-ref", *args)
    capfdbinary.readouterr()
    assert run_cli(table, "for-each-ref", *args) == 0
    assert capfdbinary.readouterr().out == want


def test_broken_loose_refs_warn_and_are_left_out(repo: Path, tmp_path: Path) -> None:
    # Git's filter_one: "ignoring broken ref", the packed value hidden too; a symref to
    # it dangles and is left out quietly; then the missing object is fatal
    path = tmp_path / "r"
    shutil.copytree(repo, path)
    refs = path / ".git" / "refs"
    (refs / "heads" / "topic" / "4").write_text("junk\n")  # packed before, loose broken now
    (refs / "heads" / "broken").write_text("no id\n")
    for args in ([], ["--format=%(refname)"]):
        want = git("-C", str(path), "for-each-ref", *args)
        proc = run_gitodb("for-each-ref", *args, cwd=path)
        assert (proc.returncode, proc.stdout) == (0, want)
        assert proc.stderr == (
            b"warning: ignoring broken ref refs/heads/broken\n"
            b"warning: ignoring broken ref refs/heads/topic/4\n"
        )
        assert b"refs/heads/topic/4" not in proc.stdout
        assert b"refs/remotes/origin/HEAD" not in proc.stdout
    # with patterns: Git warns about the broken refs its iteration reaches (those
    # starting with a pattern), before any pattern test
    for args in (["refs/heads/b"], ["refs/heads/topic/"], ["refs/tags/"]):
        want = subprocess.run(
            ["git", "-C", str(path), "for-each-ref", *args], capture_output=True, env=git_env()
        )
        proc = run_gitodb("for-each-ref", *args, cwd=path)
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            want.returncode,
            want.stdout,
            want.stderr,
        )
    (refs / "heads" / "zz").write_text("1" * 40 + "\n")
    proc = run_gitodb("for-each-ref", cwd=path)
    assert proc.returncode == 128
    assert proc.stdout == b""
    assert proc.stderr.endswith(f"fatal: missing object {'1' * 40} for refs/heads/zz\n".encode())
    assert proc.stderr.count(b"warning: ignoring broken ref") == 2


def test_unsorted_or_odd_packed_refs_take_the_reference_path(repo: Path, tmp_path: Path) -> None:
    path = tmp_path / "r"
    shutil.copytree(repo, path)
    packed = path / ".git" / "packed-refs"
    lines = packed.read_bytes().splitlines(keepends=True)
    header, body = lines[0], lines[1:]
    # records (a ref line and its peeled line) reversed: plain, but out of order
    records: list[bytes] = []
    for line in body:
        if line.startswith(b"^"):
            records[-1] += line
        else:
            records.append(line)
    packed.write_bytes(b"# pack-refs with: peeled \n" + b"".join(reversed(records)))
    assert packed_table(packed.read_bytes(), 40) is False
    want = git("-C", str(path), "for-each-ref")
    proc = run_gitodb("for-each-ref", cwd=path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, want, b"")
    packed.write_bytes(header + b"".join(records) + b"\x00junk\n")
    want_err = git("-C", str(path), "for-each-ref", check=False)
    proc = run_gitodb("for-each-ref", cwd=path)
    assert proc.returncode == 128 and proc.stdout == want_err == b""
    assert proc.stderr.startswith(b"fatal: unexpected line in")


# -- reftable: one table's refs natively, a stack's newer tables over them -----------

_RT_NAME = st.lists(st.sampled_from(["a", "b", "heads", "x/y", "zz", "é"]), min_size=1).map(
    lambda parts: ("/".join(parts)).encode()
)


@native
@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from([b"refs/", b"", b"HEAD", b"refs/tags/"]), _RT_NAME)),
    st.lists(st.integers(0, 3), min_size=40, max_size=40),
    st.sampled_from([256, 512, 4096]),
    st.integers(1, 16),
    st.data(),
)
def test_ref_blocks_table_equals_iter_refs(
    names: list[tuple[bytes, bytes]],
    kinds: list[int],
    block_size: int,
    restart: int,
    data: st.DataObject,
) -> None:
    from gitodb.errors import ReftableError
    from gitodb.reftable.reader import TableReader
    from gitodb.reftable.records import RefRecord
    from gitodb.reftable.writer import TableWriter, WriteOptions

    recs = []
    for i, (name, kind) in enumerate(zip(sorted({a + b for a, b in names}), kinds, strict=False)):
        oid = bytes([i % 256]) * 20
        if kind == 1:
            recs.append(RefRecord(name, 1, 1, oid))
        elif kind == 2:
            recs.append(RefRecord(name, 1, 2, oid, bytes([(i + 1) % 256]) * 20))
        elif kind == 3:
            recs.append(RefRecord(name, 1, 3, target=b"refs/heads/" + name[-3:]))
        else:
            recs.append(RefRecord(name, 1, 0))
    opts = WriteOptions(block_size=block_size, restart_interval=restart)
    raw = bytearray(TableWriter(opts).write(recs, [], 1, 1))
    damaged = data.draw(st.booleans())
    if damaged:
        at = data.draw(st.integers(24, max(24, min(len(raw), block_size) - 1)))
        raw[at] = data.draw(st.integers(0, 255))
    try:
        r = TableReader(data=bytes(raw), name="t.ref")
        got = r.ref_table_parts()
        want = list(r.iter_refs(b"refs/"))
    except ReftableError:
        return  # framing, or a record the reference refuses (the native one declined)
    if got is None:
        assert damaged  # an intact table always has its native listing
        return
    parts, symrefs, deleted = got
    t = RefTable(parts, 20)
    assert [(n.encode("utf-8", "surrogateescape"), o) for n, o in t.items()] == [
        (x.name, x.oid) for x in want if x.value_type in (1, 2)
    ]
    assert [t.peeled(i) for i in range(len(t))] == [
        x.peeled for x in want if x.value_type in (1, 2)
    ]
    assert symrefs == [x.name for x in want if x.value_type == 3]
    assert deleted == [x.name for x in want if x.value_type == 0]


def test_reftable_stack_matches_files(
    repo: Path, tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    # newer tables over the migrated one: a deletion, an update, a new ref, a symref
    files, table = tmp_path / "f", tmp_path / "t"
    shutil.copytree(repo, files)
    shutil.copytree(repo, table)
    proc = run_gitodb("refs", "migrate", "--ref-format=reftable", cwd=table)
    assert proc.returncode == 0, proc.stderr
    steps = [
        ["update-ref", "-d", "refs/many/010"],
        ["update-ref", "refs/many/020", "v1"],
        ["update-ref", "refs/new/one", "topic/3"],
        ["symbolic-ref", "refs/remotes/origin/HEAD", "refs/heads/topic/1"],
        ["symbolic-ref", "refs/sym/other", "refs/many/020"],
    ]
    for step in steps:
        git("-C", str(files), *step)
        proc = run_gitodb(*step, cwd=table)
        assert proc.returncode == 0, proc.stderr
    r = Repository(table)
    assert len(r.refs.stack.readers) > 1  # type: ignore[attr-defined]
    assert r.refs.ref_table() is not None
    for args in ([], ["--format=%(refname) %(objectname)"], ["--sort=-refname"]):
        want = git("-C", str(files), "for-each-ref", *args)
        capfdbinary.readouterr()
        assert run_cli(table, "for-each-ref", *args) == 0
        assert capfdbinary.readouterr().out == want


# -- the table path against the formatter (the reference), on generated refs --------

_COMPONENT = st.text(alphabet="abcXYZ019-_.", min_size=1, max_size=5).filter(
    lambda c: not c.startswith(".") and ".." not in c and not c.endswith((".lock", "."))
)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory, repo: Path) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("scratch") / "r"
    shutil.copytree(repo, path)
    objects = sorted(set(git("-C", str(path), "rev-list", "--objects", "--all").decode().split()))
    return path, [o for o in objects if len(o) == 40]


@native
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_table_path_equals_formatter(scratch: tuple[Path, list[str]], data: st.DataObject) -> None:
    from gitodb.repo.refformat import RefFilter, render
    from gitodb.repo.refformat.table import render_table

    path, objects = scratch
    ids = [*objects, "1" * 40]  # and a missing object
    names = data.draw(
        st.lists(
            st.lists(_COMPONENT, min_size=1, max_size=3).map(lambda p: "refs/" + "/".join(p)),
            max_size=20,
            unique=True,
        )
    )
    names = [n for n in names if not any(o.startswith(n + "/") for o in names)]
    shutil.rmtree(path / ".git" / "refs")
    (path / ".git" / "refs").mkdir()
    packed, loose = [], []
    for n in names:
        where = data.draw(st.sampled_from(["packed", "loose", "both", "symref"]))
        oid = data.draw(st.sampled_from(ids))
        if where in ("packed", "both"):
            packed.append((n, oid))
        if where in ("loose", "both", "symref"):
            loose.append((n, oid if where != "symref" else None))
    text = "# pack-refs with: peeled fully-peeled sorted \n" + "".join(
        f"{o} {n}\n" for n, o in sorted(packed, key=lambda x: x[0].encode())
    )
    (path / ".git" / "packed-refs").write_text(text)
    for n, o in loose:
        f = path / ".git" / n
        f.parent.mkdir(parents=True, exist_ok=True)
        target = data.draw(st.sampled_from(names)) if names else "refs/none"
        f.write_text(f"{o}\n" if o is not None else f"ref: {target}\n")
    fmt = "".join(
        data.draw(
            st.lists(
                st.sampled_from(
                    ["%(refname)", "%(objectname)", "%(objecttype)", "%(objectsize)", " ", "%00"]
                ),
                min_size=1,
                max_size=5,
            )
        )
    )
    sort = data.draw(st.sampled_from([None, ["refname"], ["-refname"]]))
    count = data.draw(st.integers(0, 5))
    omit_empty = data.draw(st.booleans())
    patterns = data.draw(
        st.sampled_from([[], ["refs/a"], ["refs/a/"], ["refs/b", "refs/a"], ["refs/X/", "refs"]])
        | st.lists(st.sampled_from(names or ["refs/none"]), max_size=2)
    )

    def outcome(fn: object) -> object:
        try:
            return fn()  # type: ignore[operator]
        except Exception as e:  # noqa: BLE001 - the same error both ways
            return repr(e)

    got = outcome(
        lambda: render_table(
            Repository(path), fmt, patterns=patterns, sort=sort, count=count, omit_empty=omit_empty
        )
    )
    want = outcome(
        lambda: b"".join(
            render(
                Repository(path),
                fmt,
                RefFilter(patterns=list(patterns)),
                sort=sort,
                count=count,
                omit_empty=omit_empty,
                native=False,
            )
        )
    )
    assert got is not None  # the table path applies to every such format
    assert got == want


# -- show-ref from the table ------------------------------------------------------


@pytest.mark.parametrize(
    "args", [[], ["--heads"], ["--tags"], ["--tags", "--heads"], ["--head"], ["-s"], ["-q"]]
)
def test_show_ref_matches_git(repo: Path, args: list[str]) -> None:
    want = git("-C", str(repo), "show-ref", *args, check=False)
    proc = run_gitodb("show-ref", *args, cwd=repo)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, want, b"")


def test_show_ref_missing_object_and_no_refs_match_git(repo: Path, tmp_path: Path) -> None:
    path = tmp_path / "r"
    shutil.copytree(repo, path)
    (path / ".git" / "refs" / "heads" / "mm").write_text("1" * 40 + "\n")
    for args in ([], ["--heads"], ["--tags"]):  # (--branches: Git 2.46+)
        want = subprocess.run(
            ["git", "-C", str(path), "show-ref", *args], capture_output=True, env=git_env()
        )
        proc = run_gitodb("show-ref", *args, cwd=path)
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            want.returncode,
            want.stdout,
            want.stderr,
        )
        if args != ["--tags"]:  # the lines before it, then Git's fatal line
            assert proc.returncode == 128
            assert (
                proc.stderr == f"fatal: git show-ref: bad ref refs/heads/mm ({'1' * 40})\n".encode()
            )
            assert proc.stdout.endswith(b" refs/heads/master\n")
    empty = tmp_path / "e"
    git("init", "-q", str(empty))
    proc = run_gitodb("show-ref", cwd=empty)
    assert (proc.returncode, proc.stdout) == (1, b"")


def test_show_ref_listing_uses_the_natives_atom_codes() -> None:
    from gitodb.repo import reflist
    from gitodb.repo.refformat import native as codes

    assert (reflist._LITERAL, reflist._REFNAME, reflist._OBJECTNAME) == (  # noqa: SLF001
        codes.LITERAL,
        codes.REFNAME,
        codes.OBJECTNAME,
    )


@pytest.mark.parametrize("args", [[], ["refs/tags/"], ["--format=%(objectsize) %(refname)"]])
def test_without_the_native_tables_the_reference_paths_print_the_same(
    repo: Path,
    capfdbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
) -> None:
    from gitodb.refs import files, reftable_store
    from gitodb.repo import reflist
    from gitodb.repo.refformat import table as fast

    capfdbinary.readouterr()
    assert run_cli(repo, "for-each-ref", *args) == 0
    assert run_cli(repo, "show-ref") == 0
    with_tables = capfdbinary.readouterr().out
    monkeypatch.setattr(files, "native_table", False)
    monkeypatch.setattr(reftable_store, "native_table", False)
    monkeypatch.setattr(fast, "_format_ref_table", None)
    monkeypatch.setattr(reflist, "_format_ref_table", None)
    assert Repository(repo).refs.ref_table() is None
    assert fast.render_table(Repository(repo), "%(refname)") is None
    assert run_cli(repo, "for-each-ref", *args) == 0
    assert run_cli(repo, "show-ref") == 0
    assert capfdbinary.readouterr().out == with_tables
    want = git("-C", str(repo), "for-each-ref", *args) + git("-C", str(repo), "show-ref")
    assert with_tables == want


@pytest.mark.parametrize("prefix", ["", "refs/", "refs/heads/", "refs/tags/", "refs/many/1", "x"])
def test_ref_range_equals_the_iter_refs_loop(repo: Path, prefix: str) -> None:
    from gitodb.refs.table import ref_range

    refs = Repository(repo).refs
    want = []
    for ref in refs.iter_refs(prefix):
        oid = ref.oid if ref.target is None else refs.resolve(ref.name)
        if oid is not None:
            want.append((ref.name, oid))
    got = ref_range(refs, prefix)
    assert got.items() == want
    assert got.ids() == [oid for _name, oid in want]
    assert [got.name(i) for i in range(len(got))] == [name for name, _oid in want]
    assert want or prefix == "x"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.binary(min_size=1, max_size=4), unique=True, max_size=12),
    st.binary(max_size=3) | st.sampled_from([b"\xff", b"a\xff", b"\xff\xff"]),
)
def test_prefix_range_is_the_names_with_the_prefix(names: list[bytes], prefix: bytes) -> None:
    entries = [(n, bytes(20), None) for n in sorted(names) if b"\n" not in n]
    t = RefTable(
        reftable_mod._build(entries, 20),  # noqa: SLF001
        20,
    )
    lo, hi = t.prefix_range(prefix)
    assert [t.name_bytes(i) for i in range(lo, hi)] == [
        n for n, _, _ in entries if n.startswith(prefix)
    ]


class _CountingTable(RefTable):
    """A table that counts the names it is asked for."""

    __slots__ = ("reads",)

    def name_bytes(self, i: int) -> bytes:
        self.reads += 1
        return super().name_bytes(i)


@pytest.mark.parametrize("prefix", [b"", b"refs/", b"refs/tags/", b"\xff", b"refs/\xff"])
def test_prefix_range_is_two_bisections(prefix: bytes) -> None:
    """O(log n) names read for any prefix: an empty one (show-ref, for-each-ref with
    no pattern) read every name of the table in a Python loop."""
    names = sorted(b"refs/heads/b%05d" % i for i in range(4096))
    t = _CountingTable(reftable_mod._build([(n, bytes(20), None) for n in names], 20), 20)  # noqa: SLF001
    t.reads = 0
    lo, hi = t.prefix_range(prefix)
    assert [t.name_bytes(i) for i in range(lo, hi)] == [n for n in names if n.startswith(prefix)]
    # each bisection of 4,096 names reads at most 13
    assert t.reads - (hi - lo) <= 2 * 13, t.reads - (hi - lo)


@native
def test_ref_blocks_table_declines_a_block_whose_padding_is_damaged() -> None:
    """A non-zero byte right after a ref block makes it look unpadded, so a walk of the
    blocks stops there; ``iter_refs`` seeks through the index past it.  The native
    listing must then decline (None) rather than list fewer refs."""
    from gitodb.reftable.reader import TableReader
    from gitodb.reftable.records import RefRecord
    from gitodb.reftable.writer import TableWriter, WriteOptions

    recs = [RefRecord(b"HEAD%03d" % i, 1, 1, bytes([i]) * 20) for i in range(12)]
    recs += [RefRecord(b"refs/heads/b%03d" % i, 1, 1, bytes([i]) * 20) for i in range(60)]
    raw = bytearray(TableWriter(WriteOptions(block_size=256)).write(recs, [], 1, 1))
    intact = TableReader(data=bytes(raw), name="t.ref")
    first = next(intact.blocks(0, ord("r")))
    assert first.full_size == 256 and first.block_len < 256 and intact.ref_index_pos
    want = [r.name for r in intact.iter_refs(b"refs/")]
    assert len(want) == 60
    raw[first.block_len] = 1  # the first padding byte of block 0
    damaged = TableReader(data=bytes(raw), name="t.ref")
    assert [r.name for r in damaged.iter_refs(b"refs/")] == want
    assert damaged.ref_table_parts() is None
