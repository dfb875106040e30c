"""Bounded memory: the one delta-base cache accounts what it holds, and every read path
stays within ``core.deltaBaseCacheLimit`` + the index + the objects in flight.

The packs here are the hard case for accounting: large objects built by small deltas
(an entry header then declares the delta's few bytes, not the megabytes it builds).
Memory is measured as the peak RSS of a child process, against a bound computed from
the limit and the sizes of the pack, its index and its largest object; never a clock.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from gitodb.objects.format import SHA1
from gitodb.objects.header import OBJ_BLOB, hash_object
from gitodb.pack.cache import DeltaBaseCache
from gitodb.pack.indexer import PackIndexer
from gitodb.pack.reader import PackFile
from test_odb_support import PackBuilder, git, make_delta

MIB = 1 << 20


def _chain_pack(pack_dir: Path, size: int, count: int, seed: int = 1) -> tuple[Path, list[bytes]]:
    """A pack of one ``size``-byte blob and ``count`` OFS_DELTAs, each a 12-byte delta
    on the previous version that builds another ``size``-byte blob."""
    rng = random.Random(seed)
    base = rng.randbytes(size)
    b = PackBuilder()
    off = b.add_object(OBJ_BLOB, base, oid=hash_object(SHA1, "blob", base))
    oids = [hash_object(SHA1, "blob", base)]
    prev = base
    for i in range(count):
        tail = b"%08d" % i
        new = prev[: size - 8] + tail
        delta = make_delta(size, size, [("copy", 0, size - 8), tail])
        oid = hash_object(SHA1, "blob", new)
        off = b.add_ofs_delta(off, delta, oid=oid)
        oids.append(oid)
        prev = new
    return b.write(pack_dir), oids


def _held(cache: DeltaBaseCache) -> int:
    return sum(len(data) for _t, data in cache.entries.values())


def test_iter_objects_accounts_results_not_delta_sizes(tmp_path: Path) -> None:
    path, oids = _chain_pack(tmp_path, 256 * 1024, 40)
    cache = DeltaBaseCache(limit=MIB)
    pack = PackFile(path, SHA1, cache=cache)
    seen = 0
    for oid, _off, t, data in pack.iter_objects():
        assert t == OBJ_BLOB and hash_object(SHA1, "blob", data) == oid
        assert cache.size == _held(cache) <= cache.limit
        seen += 1
    assert seen == len(oids)
    pack.close()


def test_read_at_accounts_results(tmp_path: Path) -> None:
    path, oids = _chain_pack(tmp_path, 256 * 1024, 40)
    cache = DeltaBaseCache(limit=MIB)
    pack = PackFile(path, SHA1, cache=cache)
    for oid in reversed(oids):
        t, data = pack.read_at(pack.find(oid))
        assert hash_object(SHA1, "blob", data) == oid
        assert cache.size == _held(cache) <= cache.limit
    pack.close()


def test_indexer_keeps_entries_within_its_budget(tmp_path: Path) -> None:
    path, oids = _chain_pack(tmp_path, 256 * 1024, 40)
    indexer = PackIndexer(path.read_bytes(), SHA1, path=str(path), cache_budget=MIB)
    st = indexer.scan()
    assert st.cache.size == _held(st.cache) <= MIB
    result = PackIndexer(path.read_bytes(), SHA1, path=str(path), cache_budget=MIB).run()
    assert sorted(result.oids) == sorted(oids)


def test_cache_pop_and_discard_keep_the_count(tmp_path: Path) -> None:
    cache = DeltaBaseCache(limit=100)
    cache.put(1, 3, b"a" * 40)
    cache.put(2, 3, b"b" * 40)
    cache.put(3, 3, b"c" * 40)  # evicts 1
    assert 1 not in cache and cache.size == 80
    assert cache.pop(2) == (3, b"b" * 40) and cache.size == 40
    cache.put(4, 3, b"d" * 101)  # larger than the limit: never kept
    assert 4 not in cache
    cache.discard_if(lambda k: k == 3)
    assert cache.size == 0 and len(cache) == 0


# -- peak memory of whole walks --------------------------------------------------------

_CHILD = r"""
import os, resource, sys
from gitodb.cli.main import main
mode, repo = sys.argv[1], sys.argv[2]
if mode == "sorted-file":  # a regular file: the records are placed, not spilled
    null = os.open(os.path.join(repo, "cat-file.out"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
elif mode == "sorted-pipe":  # a pipe, drained by a thread: built in id order, no spill
    import threading
    r, null = os.pipe()
    threading.Thread(target=lambda: [None for _ in iter(lambda: os.read(r, 1 << 16), b"")],
                     daemon=True).start()
else:
    null = os.open(os.devnull, os.O_WRONLY)
os.dup2(null, 1)
if mode == "baseline":
    from gitodb.repo import Repository
    odb = Repository(repo).odb
    for p in odb.packs:  # the pack's pages are counted in the walks' RSS too
        sum(p.buf[i] for i in range(0, len(p.buf), 4096))
    status = 0
else:
    argv = {
        "unordered": ["cat-file", "--batch-all-objects", "--batch", "--unordered"],
        "sorted": ["cat-file", "--batch-all-objects", "--batch"],
        "sorted-file": ["cat-file", "--batch-all-objects", "--batch"],
        "sorted-pipe": ["cat-file", "--batch-all-objects", "--batch"],
        "verify-pack": ["verify-pack", *sys.argv[3:]],
        "library": None,
    }[mode]
    if argv is None:
        from gitodb.repo import Repository
        n = sum(1 for _ in Repository(repo).odb.iter_objects())
        status = 0 if n else 1
    else:
        status = main(["-C", repo, *argv])
sys.stderr.write("%d %d\n" % (status, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
"""


def _peak_kib(mode: str, repo: Path, *extra: str) -> int:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, mode, str(repo), *extra], capture_output=True, check=False
    )
    status, peak = proc.stderr.decode().split()[-2:]
    assert status == "0", proc.stderr.decode()
    return int(peak)


@pytest.fixture(scope="module")
def big_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    """A bare repository whose one pack holds 150 x 2 MiB of blobs built by tiny deltas."""
    root = tmp_path_factory.mktemp("mem")
    git(root, "init", "-q", "--bare", "r.git")
    repo = root / "r.git"
    git(repo, "config", "core.deltaBaseCacheLimit", str(16 * MIB))
    path, _oids = _chain_pack(repo / "objects" / "pack", 2 * MIB, 150)
    return repo, path, 2 * MIB


@pytest.mark.parametrize(
    "mode", ["library", "unordered", "sorted", "sorted-file", "sorted-pipe", "verify-pack"]
)
def test_peak_memory_of_a_walk_is_bounded_by_the_limit(
    big_repo: tuple[Path, Path, int], mode: str
) -> None:
    repo, pack, largest = big_repo
    extra = [str(pack.with_suffix(".idx"))] if mode == "verify-pack" else []
    baseline = _peak_kib("baseline", repo)
    peak = _peak_kib(mode, repo, *extra)
    limit = 16 * MIB
    index = os.path.getsize(pack.with_suffix(".idx"))
    # In flight: the object being built, its base, the delta, and one output batch
    # (1 MiB) holding a copy; plus allocator slack.  300 MiB of objects went through.
    bound = baseline * 1024 + limit + index + os.path.getsize(pack) + 4 * largest + 24 * MIB
    assert peak * 1024 <= bound, (mode, peak // 1024, bound // MIB)


def _fan_pack(pack_dir: Path, size: int, fans: int, fillers: int) -> Path:
    """``fans`` blobs, each followed by ``fillers`` unrelated blobs (that nothing is a
    delta against) and then by a delta on it: an LRU of recent objects loses each base
    to the fillers before its delta comes."""
    rng = random.Random(7)
    b = PackBuilder()
    for i in range(fans):
        base = rng.randbytes(size)
        off = b.add_object(OBJ_BLOB, base, oid=hash_object(SHA1, "blob", base))
        for _ in range(fillers):
            filler = rng.randbytes(size)
            b.add_object(OBJ_BLOB, filler, oid=hash_object(SHA1, "blob", filler))
        new = base[: size - 8] + b"%08d" % i
        delta = make_delta(size, size, [("copy", 0, size - 8), b"%08d" % i])
        b.add_ofs_delta(off, delta, oid=hash_object(SHA1, "blob", new))
    return b.write(pack_dir)


def test_iter_objects_keeps_the_bases_still_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The cache holds 4 objects; 6 fillers come between each base and its delta.
    path = _fan_pack(tmp_path, 64 * 1024, fans=20, fillers=6)
    cache = DeltaBaseCache(limit=4 * 64 * 1024)
    pack = PackFile(path, SHA1, cache=cache)
    rebuilt: list[int] = []
    read_at = pack.read_at

    def counting_read_at(off: int) -> tuple[int, bytes]:
        rebuilt.append(off)
        return read_at(off)

    monkeypatch.setattr(pack, "read_at", counting_read_at)
    seen = 0
    for oid, _off, _t, data in pack.iter_objects():
        assert hash_object(SHA1, "blob", data) == oid
        assert cache.size == _held(cache) <= cache.limit
        seen += 1
    assert seen == 20 * 8
    assert rebuilt == []  # every delta found its base in the cache
    assert cache.size == 0  # and each base left once its last delta was built
    pack.close()


# VmHWM, not ru_maxrss: the latter keeps the parent's peak across fork and exec.
_INDEX_CHILD = r"""
import sys
import zlib
from gitodb.objects.format import SHA1
from gitodb.pack.index_write import IndexPackOptions, index_pack_file
pack, out, limit, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if out != "-":
    opts = IndexPackOptions(threads=threads, delta_base_cache_limit=limit)
    index_pack_file(pack, SHA1, opts, index_path=out)
with open("/proc/self/status") as f:
    sys.stderr.write([line.split()[1] for line in f if line.startswith("VmHWM:")][0] + "\n")
"""


def _index_peak_kib(pack: Path, out: str, limit: int, threads: int) -> int:
    proc = subprocess.run(
        [sys.executable, "-c", _INDEX_CHILD, str(pack), out, str(limit), str(threads)],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return int(proc.stderr.decode().split()[-1])


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux's VmHWM")
@pytest.mark.parametrize("threads", [1, 2])
def test_index_pack_memory_is_bounded_by_the_limit_not_the_pack(
    tmp_path: Path, threads: int
) -> None:
    # 96 MiB of incompressible blobs (so the pack is as large as its objects): the
    # pack's mapped pages must not all stay in memory, nor the entries beyond the limit.
    rng = random.Random(3)
    b = PackBuilder()
    for _ in range(96):
        data = rng.randbytes(MIB)
        b.add_object(OBJ_BLOB, data, oid=hash_object(SHA1, "blob", data))
    pack = b.write(tmp_path)
    limit = 8 * MIB
    baseline = _index_peak_kib(pack, "-", limit, threads)
    peak = _index_peak_kib(pack, str(tmp_path / "out.idx"), limit, threads)
    assert (tmp_path / "out.idx").read_bytes() == pack.with_suffix(".idx").read_bytes()
    # The limit, the object in flight (and its copy in the cache), one 16 MiB piece of
    # the mapping per reader (the scan and the trailer hash), and allocator slack.
    bound = baseline * 1024 + limit + 3 * MIB + 2 * 16 * MIB + 16 * MIB
    assert peak * 1024 <= bound, (peak // 1024, bound // MIB)


# index-pack --stdin inside a repository, the CLI in-process: the pack comes on stdin
# and the repository already holds every object, so each is compared with its stored copy.
_STDIN_CHILD = r"""
import sys
import zlib
from gitodb.cli.main import main
repo, limit = sys.argv[1], sys.argv[2]
status = 0
if repo != "-":
    status = main(["-c", "core.deltaBaseCacheLimit=" + limit, "--git-dir=" + repo,
                   "index-pack", "--stdin", "--threads=" + sys.argv[3]])
with open("/proc/self/status") as f:
    peak = [line.split()[1] for line in f if line.startswith("VmHWM:")][0]
sys.stderr.write("%d %s\n" % (status, peak))
"""


def _stdin_peak_kib(repo: str, pack: Path, limit: int, threads: int) -> int:
    with open(pack, "rb") as stdin:
        proc = subprocess.run(
            [sys.executable, "-c", _STDIN_CHILD, repo, str(limit), str(threads)],
            stdin=stdin,
            capture_output=True,
            check=False,
        )
    status, peak = proc.stderr.decode().split()[-2:]
    assert status == "0", proc.stderr.decode()
    return int(peak)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux's VmHWM")
@pytest.mark.parametrize("stored", ["same-entries", "recompressed"])
def test_index_pack_in_a_repository_holding_the_objects_is_bounded(
    tmp_path: Path, stored: str
) -> None:
    # 96 MiB of incompressible blobs that the repository already holds: in a pack of
    # the very same entries (nothing need be read again), or deflated at another level
    # (every object read from both sides and compared).  Neither the received pack,
    # nor the stored one, nor the objects beyond the limit may stay in memory.
    rng = random.Random(5)
    incoming, held = PackBuilder(), PackBuilder()
    for _ in range(96):
        data = rng.randbytes(MIB)
        oid = hash_object(SHA1, "blob", data)
        incoming.add_object(OBJ_BLOB, data, oid=oid)
        z = zlib.compress(data, 1) if stored == "recompressed" else None
        held.add_object(OBJ_BLOB, data, oid=oid, zdata=z)
    pack = incoming.write(tmp_path / "in")
    git(tmp_path, "init", "-q", "--bare", "r.git")
    repo = tmp_path / "r.git"
    held.write(repo / "objects" / "pack", name="pack-held")
    limit = 8 * MIB
    baseline = _stdin_peak_kib("-", pack, limit, 1)
    for threads in (1, 2):
        peak = _stdin_peak_kib(str(repo), pack, limit, threads)
        written = sorted(p.name for p in (repo / "objects" / "pack").glob("pack-*.idx"))
        assert len(written) == 2, written
        # The limit, an object from each side in flight, the received pack's pages
        # (the check's walk scans its entry headers first, which maps every page at
        # once), one 16 MiB piece of a mapping being read, and slack: not both packs.
        bound = baseline * 1024 + limit + 4 * MIB + os.path.getsize(pack) + 16 * MIB + 16 * MIB
        assert peak * 1024 <= bound, (threads, peak // 1024, bound // MIB)
