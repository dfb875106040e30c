"""``cat-file --batch --batch-all-objects`` (id order) into a pipe: built in id order.

For a fully packed repository the objects are built in id order with the cache
planned from the whole sequence of reads (``PackFile.iter_objects_id_order``,
``_native/idorder.c``) and written as they come: no spill file, whatever the output.
Each case is compared byte for byte with ``git`` on PATH reading into a pipe, on
packs with long OFS_DELTA chains, REF_DELTAs, loose objects beside the pack, caches
far smaller than the chains, a damaged entry, and every zlib backend.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitodb import compress
from gitodb.pack.cache import DeltaBaseCache
from gitodb.pack.reader import PackFile
from helpers import git, git_env

pytestmark = pytest.mark.e2e

ALL = ["cat-file", "--batch", "--batch-all-objects"]
BACKENDS = ["zlib", "zlib-ng", "isal", "libdeflate"]


def _native() -> bool:
    try:
        from gitodb._native import IdOrderWalk  # noqa: F401
    except ImportError:
        return False
    return True


needs_native = pytest.mark.skipif(not _native(), reason="built without the native core")


def _history(repo: Path, object_format: str = "sha1") -> None:
    """60 commits of 3 files that grow and change a little each time: long chains."""
    git("init", "-q", f"--object-format={object_format}", repo)
    for i in range(60):
        for f in range(3):
            lines = [f"line {j} of file {f}\n" for j in range(300 + 7 * i)]
            lines[(i * 13 + f) % len(lines)] = f"changed in commit {i}\n"
            (repo / f"f{f}.txt").write_text("".join(lines))
        (repo / "small.txt").write_text(f"{i}\n")
        git("add", ".", cwd=repo)
        git("commit", "-q", "-m", f"commit {i}", cwd=repo)


def _forest(repo: Path, object_format: str, seed: int = 7, count: int = 500) -> dict[str, int]:
    """A bare repository whose one pack is a random delta forest: whole blobs, and
    OFS_DELTAs and REF_DELTAs on earlier entries, mostly on the newest (chains of
    fifty and more).  Returns where a few entries end, by role."""
    import random

    from gitodb.objects.format import SHA1, SHA256
    from gitodb.objects.header import OBJ_BLOB, hash_object
    from test_odb_support import PackBuilder, make_delta

    fmt = SHA256 if object_format == "sha256" else SHA1
    git("init", "-q", "--bare", f"--object-format={object_format}", repo)
    rng = random.Random(seed)
    b = PackBuilder(fmt)
    made: list[tuple[bytes, int, bytes]] = []  # (oid, offset, data)
    children = [0] * count
    depth = [0] * count
    roles: dict[str, int] = {}
    for _ in range(count):
        if not made or rng.random() < 0.01:
            data = rng.randbytes(rng.randrange(200, 30_000))
            oid = hash_object(fmt, "blob", data)
            made.append((oid, b.add_object(OBJ_BLOB, data, oid=oid), data))
            continue
        j = len(made) - 1 if rng.random() < 0.85 else rng.randrange(len(made))
        base_oid, base_off, base = made[j]
        a = rng.randrange(len(base))
        cut = min(len(base) - a, rng.randrange(0, 400))
        lit = rng.randbytes(rng.randrange(1, 120))
        data = base[:a] + lit + base[a + cut :]
        ops: list[tuple[str, int, int] | bytes] = []
        if a:
            ops.append(("copy", 0, a))
        ops.append(lit)
        if a + cut < len(base):
            ops.append(("copy", a + cut, len(base) - a - cut))
        delta = make_delta(len(base), len(data), ops)
        oid = hash_object(fmt, "blob", data)
        if rng.random() < 0.2:
            off = b.add_ref_delta(base_oid, delta, oid=oid)
        else:
            off = b.add_ofs_delta(base_off, delta, oid=oid)
        children[j] += 1
        depth[len(made)] = depth[j] + 1
        made.append((oid, off, data))
    # a delta in the middle of a long chain, and a whole blob with many descendants
    mid = max(range(count), key=lambda k: (depth[k] > 0 and children[k] > 0, depth[k] // 2))
    roots = [k for k in range(count) if depth[k] == 0]
    for role, k in (("delta", mid), ("base", max(roots, key=lambda k: children[k]))):
        roles[role] = made[k + 1][1] if k + 1 < count else b.next_offset  # its end
    roles["depth"] = max(depth)
    b.write(repo / "objects" / "pack", "pack-forest")
    return roles


@pytest.fixture(scope="module", params=["forest-sha1", "forest-sha256", "git-ref"])
def repo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pack: a random forest of OFS and REF deltas with long chains (SHA-1,
    SHA-256), or Git's own REF_DELTA pack of a small history."""
    kind, fmt = request.param.split("-")
    work = tmp_path_factory.mktemp(f"idorder-{request.param}") / "repo"
    if kind == "forest":
        assert _forest(work, fmt)["depth"] >= 50
        return work
    _history(work)
    git("-c", "repack.useDeltaBaseOffset=false", "repack", "-q", "-a", "-d", "-f", cwd=work)
    git("prune-packed", cwd=work)
    assert not [p for p in (work / ".git/objects").iterdir() if len(p.name) == 2]
    return work


def _pack_of(repo: Path) -> Path:
    (path,) = (repo / ("objects" if (repo / "objects").is_dir() else ".git/objects")).glob(
        "pack/*.pack"
    )
    return path


def _piped(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, bytes, bytes]:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, env=env, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def _gitodb_env(backend: str | None = None) -> dict[str, str]:
    env = git_env()
    if backend is not None:
        env["GITODB_ZLIB_BACKEND"] = backend
    return env


def _cli() -> list[str]:
    return [sys.executable, "-m", "gitodb"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_pipe_gets_gits_bytes_on_every_backend(repo: Path, backend: str) -> None:
    if backend not in compress.available_backends():
        pytest.skip(f"{backend} not installed")
    want = _piped(["git", *ALL], repo, git_env())
    have = _piped([*_cli(), *ALL], repo, _gitodb_env(backend))
    assert have == want and len(want[1]) > 200_000


@pytest.mark.parametrize("limit", ["0", "3000", "40000", "400000"])
def test_pipe_gets_gits_bytes_with_a_small_cache(repo: Path, limit: str) -> None:
    """A cache far smaller than the chains: most bases are rebuilt, in the plan's order."""
    opts = ["-c", f"core.deltaBaseCacheLimit={limit}"]
    want = _piped(["git", *opts, *ALL], repo, git_env())
    have = _piped([*_cli(), *opts, *ALL], repo, _gitodb_env())
    assert have == want


@needs_native
@pytest.mark.parametrize("limit", [0, 1, 5000, 60_000, 96 << 20])
def test_walk_matches_read_at_and_stays_within_the_limit(repo: Path, limit: int) -> None:
    """The native id-order walk gives what ``read_at`` gives, in index order, and its
    cache never holds more than the limit (counted as len(data))."""
    from gitodb.repo import Repository

    path = _pack_of(repo)
    fmt = Repository(repo).object_format
    pack = PackFile(path, fmt, cache=DeltaBaseCache(limit=limit))
    ref = PackFile(path, fmt)
    walk = pack.id_order_walk()
    assert walk is not None and walk.limit == limit
    got = []
    while items := walk.next(7, 1 << 16):
        assert walk.size <= limit
        got.extend(items)
    oids = ref.idx.oid_list()
    assert [g[0] for g in got] == oids
    for (oid, off, t, data), i in zip(got, range(len(oids)), strict=True):
        assert off == ref.offsets[i]
        assert data is not None, "no fallback on an undamaged pack"
        assert (t, data) == ref.read_at(off), oid.hex()


def test_pure_reference_matches(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the native core, ``iter_objects_id_order`` reads with ``read_at``."""
    from gitodb.pack import reader
    from gitodb.repo import Repository

    path = _pack_of(repo)
    fmt = Repository(repo).object_format
    native = list(PackFile(path, fmt).iter_objects_id_order())
    monkeypatch.setattr(reader, "_IdOrderWalk", None)
    pure = list(PackFile(path, fmt).iter_objects_id_order())
    assert native == pure and len(pure) > 200


def _drain(fd: int, sink: list[bytes]) -> None:
    while chunk := os.read(fd, 1 << 16):
        sink.append(chunk)
    os.close(fd)


def test_no_spill_file_for_a_pipe(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Into a pipe, the records go out as they are built: no temporary file."""
    from gitodb.repo import Repository
    from gitodb.repo.batch import BatchOptions, run_batch

    def no_spill(*_a: object, **_k: object) -> None:
        raise AssertionError("spilled")

    monkeypatch.setattr(tempfile, "TemporaryFile", no_spill)
    r, w = os.pipe()
    sink: list[bytes] = []
    reader = threading.Thread(target=_drain, args=(r, sink))
    reader.start()
    try:
        with open(w, "wb") as stdout:
            run_batch(
                Repository(repo),
                BatchOptions("batch", all_objects=True),
                io.BytesIO(),
                stdout,  # type: ignore[arg-type]
            )
    finally:
        reader.join()
    assert b"".join(sink) == git(*ALL, cwd=repo)


def test_loose_objects_beside_the_pack(repo: Path, tmp_path: Path) -> None:
    """Loose objects too (the spill's case): still Git's bytes into a pipe."""
    work = tmp_path / "work"
    git("clone", "-q", "--no-local", str(repo), str(work))
    (work / "new.txt").write_text("a loose blob\n" * 100)
    git("add", "new.txt", cwd=work)
    git("commit", "-q", "-m", "loose", cwd=work)
    want = _piped(["git", *ALL], work, git_env())
    have = _piped([*_cli(), *ALL], work, _gitodb_env())
    assert have == want


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("target", ["delta", "base"])
def test_damaged_entry_stops_where_git_stops(tmp_path: Path, backend: str, target: str) -> None:
    """A delta in the middle of a long chain, or a whole blob many deltas are built
    on, whose zlib data is damaged: into a pipe the output stops where Git's does,
    with Git's exit code, and one ``fatal:`` line."""
    if backend not in compress.available_backends():
        pytest.skip(f"{backend} not installed")
    work = tmp_path / "repo"
    end = _forest(work, "sha1")[target]
    pack = _pack_of(work)
    data = bytearray(pack.read_bytes())
    for i in range(end - 12, end - 4):  # the last bytes of the entry's zlib stream
        data[i] ^= 0x55
    pack.write_bytes(bytes(data))
    status, out, _err = _piped(["git", *ALL], work, git_env())
    have_status, have_out, have_err = _piped([*_cli(), *ALL], work, _gitodb_env(backend))
    assert status != 0 and (have_status, have_out) == (status, out)
    fatal = [line for line in have_err.splitlines() if line.startswith(b"fatal:")]
    assert len(fatal) == 1 and b"Traceback" not in have_err, have_err


@needs_native
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    count=st.integers(1, 80),
    limit=st.sampled_from([0, 1, 700, 5000, 40_000, 1 << 30]),
)
def test_walk_matches_read_at_on_random_forests(seed: int, count: int, limit: int) -> None:
    """Random delta forests (OFS and REF, chains of any depth) and cache limits: the
    planned walk gives ``read_at``'s objects in index order, within the limit."""
    from gitodb.objects.format import SHA1

    with tempfile.TemporaryDirectory() as tmp:
        _forest(Path(tmp) / "r.git", "sha1", seed=seed, count=count)
        path = _pack_of(Path(tmp) / "r.git")
        walk = PackFile(path, SHA1, cache=DeltaBaseCache(limit=limit)).id_order_walk()
        ref = PackFile(path, SHA1)
        assert walk is not None
        got = []
        while items := walk.next(5, 1 << 14):
            assert walk.size <= limit
            got.extend(items)
        want = [(oid, off, *ref.read_at(off)) for oid, off in ref.iter_sorted()]
        assert got == want
