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


@pytest.mark.parametrize("mode", ["library", "unordered", "sorted", "verify-pack"])
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
