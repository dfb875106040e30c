"""The Python API a user meets: ids as hex or bytes, lifecycle, pickling, typed iteration."""

from __future__ import annotations

import gc
import os
import pickle
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

import gitodb
from gitodb.errors import AmbiguousObjectNameError, ObjectFormatError, ObjectNotFoundError
from gitodb.objects.oid import ObjectId
from gitodb.repo.odb import ObjectDatabase
from helpers import git


@pytest.fixture(scope="module")
def repo_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three commits (a blob, a tree, a commit each), half loose and half packed."""
    path = tmp_path_factory.mktemp("api") / "repo"
    git("init", "-q", "-b", "main", path)
    for i in range(3):
        (path / "f.txt").write_text(f"version {i}\n" * (50 + i))
        git("add", ".", cwd=path)
        git("commit", "-q", "-m", f"c{i}", cwd=path)
        if i == 1:
            git("repack", "-q", "-a", "-d", cwd=path)
    git("tag", "-a", "-m", "tag", "v1", cwd=path)
    return path


def _head(path: Path, rev: str = "HEAD") -> str:
    return git("rev-parse", rev, cwd=path).decode().strip()


def _open_fds() -> set[str]:
    fd_dir = f"/proc/{os.getpid()}/fd"
    out = set()
    for fd in os.listdir(fd_dir):
        try:
            out.add(os.readlink(os.path.join(fd_dir, fd)))
        except OSError:
            continue
    return out


def _maps() -> str:
    return Path(f"/proc/{os.getpid()}/maps").read_text()


# -- ObjectId and the ids every call takes ------------------------------------------


def test_object_id_prints_as_hex() -> None:
    hex_id = "922b6ba8" + "0" * 32
    oid = ObjectId(hex_id)
    assert oid == bytes.fromhex(hex_id)  # it is the binary id
    assert repr(oid) == f"ObjectId('{hex_id}')" and str(oid) == hex_id
    assert ObjectId(bytes.fromhex(hex_id)) == oid
    assert {oid: 1}[bytes.fromhex(hex_id)] == 1  # hashes as bytes
    assert pickle.loads(pickle.dumps(oid)) == oid
    for bad in ("922b", "zz" * 20, b"\0" * 5):
        with pytest.raises(ObjectFormatError):
            ObjectId(bad)


def test_hex_abbreviated_and_binary_ids_accepted(repo_path: Path) -> None:
    full = _head(repo_path)
    raw = bytes.fromhex(full)
    with gitodb.open(repo_path) as repo:
        odb = repo.odb
        expected = odb.read(raw)
        for form in (
            full,
            full.upper(),
            full[:7],
            full[:4],
            ObjectId(full),
            raw,
            bytearray(raw),
            memoryview(raw),
            full.encode(),
        ):
            assert odb.read(form) == expected, form
            assert odb.read_header(form) == ("commit", len(expected[1]))
            assert odb.contains(form)
            assert odb.info(form).oid == raw
            assert repo.commit(form).id == raw
            with odb.open_stream(form) as stream:
                assert stream.read() == expected[1]
        tree = _head(repo_path, "HEAD^{tree}")
        assert repo.tree(tree[:6]).id.hex() == tree
        assert odb.tree(tree[:6]).id.hex() == tree
        tag = _head(repo_path, "v1")
        assert repo.tag(tag).id.hex() == tag and odb.tag(tag[:8]).id.hex() == tag
        assert odb.object_id(full[:10]) == raw and isinstance(odb.object_id(raw), ObjectId)


def test_bad_and_unknown_ids(repo_path: Path) -> None:
    with gitodb.open(repo_path) as repo:
        odb = repo.odb
        assert not odb.contains("0000000")
        with pytest.raises(ObjectNotFoundError):
            odb.read("0000000")
        for bad in ("abc", "xyz1234", "", b"abc", 42):
            with pytest.raises(ObjectFormatError):
                odb.read(bad)  # type: ignore[arg-type]


def test_ambiguous_abbreviation_lists_candidates(tmp_path: Path) -> None:
    git("init", "-q", tmp_path)
    # Blobs until two ids share their first four digits (a few hundred at most).
    seen: dict[str, str] = {}
    i = 0
    while True:
        oid = (
            git("hash-object", "-w", "--stdin", cwd=tmp_path, input=f"{i}\n".encode())
            .decode()
            .strip()
        )
        if oid[:4] in seen:
            break
        seen[oid[:4]] = oid
        i += 1
    prefix = oid[:4]
    odb = gitodb.open(tmp_path).odb
    with pytest.raises(
        AmbiguousObjectNameError, match=f"short object ID {prefix} is ambiguous"
    ) as e:
        odb.read(prefix)
    assert sorted(c.hex() for c in e.value.candidates) == sorted([oid, seen[prefix]])
    with pytest.raises(AmbiguousObjectNameError):
        odb.contains(prefix)


def test_object_info_repr_is_hex(repo_path: Path) -> None:
    full = _head(repo_path, "HEAD:f.txt")
    info = gitodb.open(repo_path).odb.info(full)
    assert isinstance(info.oid, ObjectId)
    assert f"oid=ObjectId('{full}')" in repr(info) and "\\x" not in repr(info)


def test_resolve_returns_object_id(repo_path: Path) -> None:
    oid = gitodb.open(repo_path).resolve("HEAD~2:f.txt")
    assert isinstance(oid, ObjectId) and str(oid) == _head(repo_path, "HEAD~2:f.txt")


# -- lifecycle: with, close() ------------------------------------------------------


def test_repository_is_a_context_manager_and_close_unmaps(repo_path: Path) -> None:
    pack_dir = str(repo_path / ".git/objects/pack")
    with gitodb.Repository(repo_path) as repo:
        assert repo.odb.read(_head(repo_path, "HEAD~2"))[0] == "commit"  # packed
        assert pack_dir in _maps()
    gc.collect()
    assert pack_dir not in _maps()
    assert not any(p.startswith(pack_dir) for p in _open_fds())
    # Still usable: what is needed opens again.
    assert repo.commit("HEAD~2").message == b"c0\n"
    repo.close()
    assert pack_dir not in _maps()


def test_object_database_context_manager(repo_path: Path) -> None:
    from gitodb.objects.format import SHA1

    pack_dir = str(repo_path / ".git/objects/pack")
    with ObjectDatabase(repo_path / ".git/objects", SHA1) as odb:
        assert odb.read(_head(repo_path, "HEAD~1"))[0] == "commit"
        assert pack_dir in _maps()
    gc.collect()
    assert pack_dir not in _maps()


def test_close_releases_reftable_maps(tmp_path: Path) -> None:
    import hashlib
    import shutil

    from helpers import DATA

    shutil.copytree(DATA / "reftable-small" / "repo", tmp_path / "r")
    repo = gitodb.open(tmp_path / "r")
    head = repo.refs.resolve("HEAD")
    assert head is not None
    tx = repo.refs.transaction()
    # Names that do not share prefixes, so the table is large enough to be mapped.
    names = [f"refs/tags/{hashlib.sha256(str(i).encode()).hexdigest() * 2}" for i in range(700)]
    for name in names:
        tx.update(name, head)
    tx.commit()
    repo.close()
    table_dir = str(tmp_path / "r/reftable")
    repo = gitodb.open(tmp_path / "r")
    assert len(list(repo.refs.iter_refs("refs/tags/"))) >= 700
    assert table_dir in _maps()
    repo.close()
    gc.collect()
    assert table_dir not in _maps()
    assert len(list(repo.refs.iter_refs("refs/tags/"))) >= 700  # a fresh store


def test_many_repositories_do_not_pile_up_maps(repo_path: Path) -> None:
    before = _maps().count(str(repo_path))
    for _ in range(50):
        with gitodb.open(repo_path) as repo:
            repo.odb.read(_head(repo_path, "HEAD~2"))
    gc.collect()
    assert _maps().count(str(repo_path)) == before


# -- pickling by path ------------------------------------------------------------------


def _read_in_child(repo: gitodb.Repository, rev: str) -> tuple[str, int]:
    return repo.odb.read_header(repo.resolve(rev))


def test_pickle_after_odb_use(repo_path: Path) -> None:
    repo = gitodb.open(repo_path)
    repo.odb.read(_head(repo_path, "HEAD~2"))  # packs are mapped now
    copy = pickle.loads(pickle.dumps(repo))
    assert copy.git_dir == repo.git_dir
    assert "odb" not in copy.__dict__  # opened lazily
    assert copy.commit("HEAD~2").message == b"c0\n"
    odb_copy = pickle.loads(pickle.dumps(repo.odb))
    assert odb_copy.read(_head(repo_path, "HEAD~2")) == repo.odb.read(_head(repo_path, "HEAD~2"))
    assert odb_copy.fmt is repo.object_format


def test_pickle_keeps_config_overrides(repo_path: Path) -> None:
    repo = gitodb.Repository(repo_path, config_overrides=["core.abbrev=12"])
    assert pickle.loads(pickle.dumps(repo)).config.get("core.abbrev") == "12"


def test_process_pool(repo_path: Path) -> None:
    repo = gitodb.open(repo_path)
    repo.odb.read(_head(repo_path))
    with ProcessPoolExecutor(1) as pool:
        got = pool.submit(_read_in_child, repo, "HEAD:f.txt").result()
    assert got == repo.odb.read_header(repo.resolve("HEAD:f.txt"))


# -- iter_objects(types=...) -----------------------------------------------------------


@pytest.mark.parametrize("order", ["pack", "sorted"])
def test_iter_objects_types_skips_other_types(
    repo_path: Path, order: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gitodb.loose.read import LooseObjectStore
    from gitodb.pack.reader import PackFile

    repo = gitodb.open(repo_path)
    everything = {oid: (t, data) for oid, t, data in repo.odb.iter_objects(order)}
    read_types: list[str] = []
    real_pack_read, real_loose_read = PackFile.read_at, LooseObjectStore.read

    def pack_read(self: PackFile, offset: int) -> tuple[int, bytes]:
        got = real_pack_read(self, offset)
        read_types.append(("", "commit", "tree", "blob", "tag")[got[0]])
        return got

    def loose_read(self: LooseObjectStore, oid: bytes) -> tuple[str, bytes] | None:
        got = real_loose_read(self, oid)
        if got is not None:
            read_types.append(got[0])
        return got

    monkeypatch.setattr(PackFile, "read_at", pack_read)
    monkeypatch.setattr(LooseObjectStore, "read", loose_read)
    fresh = gitodb.open(repo_path)
    commits = {oid: (t, d) for oid, t, d in fresh.odb.iter_objects(order, types={"commit"})}
    assert commits == {o: v for o, v in everything.items() if v[0] == "commit"}
    assert len(commits) == 3
    assert set(read_types) == {"commit"}  # no tree, blob or tag was inflated
    got = {o for o, _t, _d in fresh.odb.iter_objects(order, types=["tree", "tag"])}
    assert got == {o for o, v in everything.items() if v[0] in ("tree", "tag")}
    with pytest.raises(ValueError, match="unknown object type"):
        list(fresh.odb.iter_objects(types=["commits"]))


# -- the README's examples, type-checked --------------------------------------------


def test_readme_style_script_passes_mypy_strict(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    script = Path(__file__).parent / "data" / "typed_user_script.py"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(script),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- progress -----------------------------------------------------------------------------


def test_verify_pack_reports_progress(tmp_path: Path) -> None:
    from gitodb.objects.format import SHA1
    from gitodb.pack.verify import verify_pack
    from helpers import make_pack

    pack = make_pack(tmp_path)
    calls: list[tuple[str, int, int, bool]] = []

    def progress(title: str, done: int, total: int, finished: bool) -> None:
        calls.append((title, done, total, finished))

    result = verify_pack(str(pack), SHA1, progress=progress)
    count = len(result.oids)
    finished = [c for c in calls if c[3]]
    assert ("Indexing objects", count, count, True) in finished
    assert any(t == "Resolving deltas" and d == n and n > 0 for t, d, n, _f in finished)
    indexing = [d for t, d, _n, _f in calls if t == "Indexing objects"]
    assert indexing == sorted(indexing)


def test_index_pack_library_call_reports_progress(tmp_path: Path) -> None:
    import shutil

    from gitodb.objects.format import SHA1
    from gitodb.pack.index_write import IndexPackOptions, index_pack_file
    from helpers import make_pack

    pack = make_pack(tmp_path)
    copy = tmp_path / "copy.pack"
    shutil.copy(pack, copy)
    titles: set[str] = set()
    opts = IndexPackOptions(progress=lambda title, done, total, finished: titles.add(title))
    index_pack_file(str(copy), SHA1, opts)
    assert (tmp_path / "copy.idx").read_bytes() == pack.with_suffix(".idx").read_bytes()
    assert titles == {"Indexing objects", "Resolving deltas"}


def test_unpack_and_commit_graph_calls_report_progress_by_the_one_protocol(
    tmp_path: Path,
) -> None:
    """unpack_objects, write_commit_graph and verify_commit_graph call a
    ``gitodb.types.Progress`` as index-pack and verify do."""
    from gitodb.history.commitgraph_write import verify_commit_graph, write_commit_graph
    from gitodb.repo.unpack import unpack_objects
    from helpers import git, make_pack

    pack = make_pack(tmp_path)
    source = tmp_path / "repo"
    calls: list[tuple[str, int, int, bool]] = []

    def progress(title: str, done: int, total: int, finished: bool) -> None:
        calls.append((title, done, total, finished))

    target = tmp_path / "target"
    git("init", "-q", target)
    with gitodb.open(target) as repo:
        unpack_objects(repo, pack.read_bytes(), progress=progress)
    count = int(git("count-objects", "-v", cwd=target).split(b"count: ")[1].split(b"\n")[0])
    unpacking = [c for c in calls if c[0] == "Unpacking objects"]
    assert len(unpacking) == count == unpacking[-1][2] > 0
    assert [c[1] for c in unpacking] == list(range(1, count + 1))
    assert [c[3] for c in unpacking] == [False] * (count - 1) + [True]
    calls.clear()
    with gitodb.open(source) as repo:
        write_commit_graph(repo, reachable=True, progress=progress)
        assert ("Writing out commit graph in 4 passes", 120, 120, True) in calls
        assert all(c[3] and c[1] == c[2] for c in calls)
        calls.clear()
        assert verify_commit_graph(repo, progress=progress) == ([], 0)
    assert calls == [("Verifying commits in commit graph", 30, 30, True)]
