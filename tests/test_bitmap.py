"""Reachability bitmaps: EWAH, the .bitmap reader (pack and MIDX), the bitmap walk.

Bitmaps are written by the ``git`` on PATH (``repack -adb``, ``multi-pack-index
write --bitmap``) and every stored bitmap is compared with ``git rev-list
--objects``; the walk is compared with ``git rev-list --use-bitmap-index``.
"""

from __future__ import annotations

import random
import struct
import subprocess
from pathlib import Path

import pytest

from gitodb.errors import GitodbError
from gitodb.history.bitmapwalk import open_repository_bitmap, reachable_with_bitmap
from gitodb.objects.format import format_by_name
from gitodb.pack.bitmap import BitmapIndex, BitmappedObjects, name_hash
from gitodb.pack.bitmap_write import BitmapEntry, encode_bitmap
from gitodb.pack.ewah import BitmapError, encode_ewah, iter_bits, read_ewah
from gitodb.repo.odb import ObjectDatabase
from helpers import git, git_env, run_gitodb

pytestmark = pytest.mark.e2e


def _commit(repo: Path, i: int) -> None:
    (repo / f"d{i % 3}").mkdir(exist_ok=True)
    (repo / f"d{i % 3}" / f"f{i}").write_text(f"{i}\n" * (i + 1))
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", f"c{i}", cwd=repo)


def make_repo(tmp_path: Path, fmt: str = "sha1", commits: int = 12) -> Path:
    repo = tmp_path / "repo"
    git("init", "-q", f"--object-format={fmt}", repo)
    for i in range(commits):
        _commit(repo, i)
        if i == commits // 2:
            git("branch", "side", cwd=repo)
            git("tag", "-a", "-m", "t", "v1", cwd=repo)
    return repo


def odb_of(repo: Path, fmt: str = "sha1") -> ObjectDatabase:
    return ObjectDatabase(repo / ".git/objects", format_by_name(fmt))


def rev_list(repo: Path, *args: str) -> list[str]:
    return git("rev-list", *args, cwd=repo).decode().split()


def oid(repo: Path, rev: str) -> bytes:
    return bytes.fromhex(git("rev-parse", rev, cwd=repo).decode().strip())


# -- EWAH ------------------------------------------------------------------------


def test_ewah_round_trips_runs_and_literals() -> None:
    rng = random.Random(5)
    for n in (0, 1, 63, 64, 65, 130, 1000):
        for density in (0.0, 0.02, 0.5, 0.98, 1.0):
            bits = sum(1 << i for i in range(n) if rng.random() < density)
            data = encode_ewah(bits, n)
            got, size, end = read_ewah(data, 0, path="x", max_bits=n)
            assert (got, size, end) == (bits, n, len(data))
            assert list(iter_bits(bits)) == [i for i in range(n) if bits >> i & 1]


def test_ewah_run_words_compress() -> None:
    ones = (1 << 640) - 1
    data = encode_ewah(ones, 640)
    # one run-length word for ten full words: header, one word, the RLW position
    assert len(data) == 4 + 4 + 8 + 4
    assert read_ewah(data, 0, path="x")[0] == ones


def test_ewah_bad_input_names_file_and_offset() -> None:
    good = encode_ewah(0b1011, 4)
    with pytest.raises(BitmapError) as ei:
        read_ewah(good[:-1], 0, path="f.bitmap")
    # Git's wording; the offset is where the cut-off part (the RLW position) starts
    assert ei.value.message == "corrupt ewah bitmap: eof before rlw"
    assert ei.value.path == "f.bitmap" and ei.value.offset == 24
    # a word count far past the file is refused before anything is sized by it
    huge = struct.pack(">II", 64, 0xFFFFFFF0) + b"\0" * 12
    with pytest.raises(BitmapError, match=r"eof in data \(34359738228 bytes short\)"):
        read_ewah(huge, 0, path="f.bitmap")
    # a run of 2^32-1 words in a 64-bit bitmap
    rlw = struct.pack(">Q", 1 | (0xFFFFFFFF << 1))
    bomb = struct.pack(">II", 64, 1) + rlw + struct.pack(">I", 0)
    with pytest.raises(BitmapError, match="expands past"):
        read_ewah(bomb, 0, path="f.bitmap")
    with pytest.raises(BitmapError, match="for 10 objects"):
        read_ewah(encode_ewah(1, 1000), 0, path="f.bitmap", max_bits=10)


def test_name_hash_is_gits() -> None:
    # pack_name_hash("a/b.c") by hand: skip nothing, (h >> 2) + (c << 24) per byte
    h = 0
    for c in b"a/b.c":
        h = ((h >> 2) + (c << 24)) & 0xFFFFFFFF
    assert name_hash(b"a/b.c") == h
    assert name_hash(b"a b") == name_hash(b"ab")


# -- the reader on Git's files ---------------------------------------------------


def _check_every_bitmap(repo: Path, bm: BitmappedObjects) -> int:
    for pos in bm.index.commit_positions():
        commit = bm._oid_at_index(pos).hex()
        stored = bm.index.bitmap(pos)
        assert stored is not None
        got = sorted(o.hex() for o in bm.oids(stored))
        assert got == sorted(
            line.split()[0]
            for line in git("rev-list", "--objects", commit, cwd=repo).decode().splitlines()
        )
    return bm.index.count


@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
def test_pack_bitmap_written_by_git_reads_back(tmp_path: Path, fmt: str) -> None:
    repo = make_repo(tmp_path, fmt)
    git("repack", "-adbq", cwd=repo)
    with odb_of(repo, fmt) as odb:
        bm = open_repository_bitmap(odb)
        assert bm is not None and bm.index.path.endswith(".bitmap")
        assert _check_every_bitmap(repo, bm) > 0
        # the type bitmaps partition the pack
        assert sum(t.bit_count() for t in bm.types) == bm.count
        assert bm.types[0].bit_count() == len(rev_list(repo, "--all"))
        bm.close()


@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
def test_midx_bitmap_written_by_git_reads_back(tmp_path: Path, fmt: str) -> None:
    repo = make_repo(tmp_path, fmt)
    git("repack", "-adq", cwd=repo)
    _commit(repo, 100)
    git("repack", "-dq", cwd=repo)  # a second pack
    git("multi-pack-index", "write", "--bitmap", cwd=repo)
    with odb_of(repo, fmt) as odb:
        bm = open_repository_bitmap(odb)
        assert bm is not None and "multi-pack-index-" in bm.index.path
        assert len(bm.pack_paths) == 2
        assert _check_every_bitmap(repo, bm) > 0
        assert bm.index.name_hash_at(0) is not None
        bm.close()


def test_name_hash_cache_matches_paths(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    git("repack", "-adbq", cwd=repo)
    names = {}
    for line in git("rev-list", "--objects", "--all", cwd=repo).decode().splitlines():
        parts = line.split(" ", 1)
        if len(parts) == 2 and parts[1]:
            names[bytes.fromhex(parts[0])] = parts[1]  # the path the object was packed by
    with odb_of(repo) as odb:
        bm = open_repository_bitmap(odb)
        assert bm is not None
        checked = 0
        (pack,) = odb.packs
        for oid_, leaf in names.items():
            pos = pack.idx.find(oid_)
            h = bm.index.name_hash_at(pos)
            if h:  # blobs and trees reached by a path
                assert h == name_hash(leaf.encode())
                checked += 1
        assert checked
        bm.close()


# -- the walk --------------------------------------------------------------------

RANGES = [
    ["HEAD"],
    ["--all"],
    ["HEAD", "^side"],
    ["side", "^HEAD~2"],
    ["v1", "^HEAD~8"],
    ["HEAD", "^v1"],
]


def _resolve(repo: Path, spec: list[str]) -> tuple[list[bytes], list[bytes]]:
    include: list[bytes] = []
    exclude: list[bytes] = []
    for s in spec:
        if s == "--all":
            include += [bytes.fromhex(x) for x in rev_list(repo, "--all", "--no-walk=unsorted")]
            include += [oid(repo, "v1")]
        elif s.startswith("^"):
            exclude.append(oid(repo, s[1:]))
        else:
            include.append(oid(repo, s))
    return include, exclude


@pytest.mark.parametrize("kind", ["pack", "midx"])
@pytest.mark.parametrize("spec", RANGES, ids=" ".join)
def test_walk_matches_git_use_bitmap_index(tmp_path: Path, kind: str, spec: list[str]) -> None:
    repo = make_repo(tmp_path)
    if kind == "pack":
        git("repack", "-adbq", cwd=repo)
    else:
        git("repack", "-adq", cwd=repo)
        git("multi-pack-index", "write", "--bitmap", cwd=repo)
    _commit(repo, 50)  # loose objects beyond the bitmap
    git("branch", "-f", "side", cwd=repo)
    include, exclude = _resolve(repo, spec)
    with odb_of(repo) as odb:
        res = reachable_with_bitmap(odb, include, exclude)
        assert res is not None
        objs = sorted(o.hex() for o in res.oids())
        commits = [o.hex() for o in res.oids(["commit"])]
        count = res.count()
        res.bitmap.close()
    expect = rev_list(repo, "--objects", "--use-bitmap-index", *spec)
    assert objs == sorted(expect)
    assert sorted(commits) == sorted(rev_list(repo, "--use-bitmap-index", *spec))
    assert count == int(rev_list(repo, "--count", "--objects", "--use-bitmap-index", *spec)[0])


def test_walk_order_is_gits_for_bitmapped_objects(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    git("repack", "-adbq", cwd=repo)
    include, exclude = _resolve(repo, ["HEAD", "^HEAD~4"])
    with odb_of(repo) as odb:
        res = reachable_with_bitmap(odb, include, exclude)
        assert res is not None and not res.extra
        got = [o.hex() for o in res.oids()]
        res.bitmap.close()
    assert got == rev_list(repo, "--objects", "--use-bitmap-index", "HEAD", "^HEAD~4")


def test_no_bitmap_is_none(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, commits=2)
    git("repack", "-adq", cwd=repo)
    with odb_of(repo) as odb:
        assert reachable_with_bitmap(odb, [oid(repo, "HEAD")]) is None


def test_damaged_bitmap_is_reported_and_not_used(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, commits=3)
    git("repack", "-adbq", cwd=repo)
    (bitmap,) = (repo / ".git/objects/pack").glob("*.bitmap")
    raw = bytearray(bitmap.read_bytes())
    raw[12] ^= 0xFF  # the pack checksum in the header
    bitmap.chmod(0o644)
    bitmap.write_bytes(bytes(raw))
    with odb_of(repo) as odb, pytest.warns(UserWarning, match="checksum doesn't match"):
        assert open_repository_bitmap(odb) is None


# -- the serialiser ---------------------------------------------------------------


def test_encoded_bitmap_reads_back_with_xor_lookup_and_hash_cache(tmp_path: Path) -> None:
    fmt = format_by_name("sha1")
    n = 300
    rng = random.Random(3)
    full = [sum(1 << i for i in range(n) if rng.random() < 0.3) for _ in range(6)]
    entries = [
        BitmapEntry(index_pos=10 * k + 1, bits=b, xor_offset=(1 if k % 2 else 0))
        for k, b in enumerate(full)
    ]
    types = (0b1, 0b10, (1 << n) - 4, 0)
    checksum = b"\x07" * 20
    cache = [rng.getrandbits(32) for _ in range(n)]
    data = encode_bitmap(fmt, checksum, n, types, entries, hash_cache=cache, lookup_table=True)
    p = tmp_path / "x.bitmap"
    p.write_bytes(data)
    idx = BitmapIndex(p, fmt, num_objects=n, checksum=checksum)
    assert idx.types == types
    for e in entries:
        assert idx.bitmap(e.index_pos) == e.bits
    assert idx.bitmap(2) is None
    assert [idx.name_hash_at(i) for i in range(n)] == cache
    idx.close()
    with pytest.raises(BitmapError, match="checksum doesn't match"):
        BitmapIndex(p, fmt, num_objects=n, checksum=b"\0" * 20)
    with pytest.raises(GitodbError):
        BitmapIndex(p, fmt, num_objects=5, checksum=checksum)


def test_git_reads_a_bitmap_gitodb_encodes(tmp_path: Path) -> None:
    # Re-encode Git's pack bitmap from what the reader decoded: Git's own
    # --test-bitmap then checks every stored bitmap against a real walk.
    repo = make_repo(tmp_path)
    git("repack", "-adbq", cwd=repo)
    (bitmap,) = (repo / ".git/objects/pack").glob("*.bitmap")
    fmt = format_by_name("sha1")
    with odb_of(repo) as odb:
        bm = open_repository_bitmap(odb)
        assert bm is not None
        (pack,) = odb.packs
        positions = bm.index.commit_positions()
        entries = [
            BitmapEntry(pos, bm.index.bitmap(pos) or 0, xor_offset=1 if i % 3 == 2 else 0)
            for i, pos in enumerate(positions)
        ]
        cache = [bm.index.name_hash_at(i) or 0 for i in range(bm.count)]
        data = encode_bitmap(
            fmt, pack.idx.pack_checksum, bm.count, bm.types, entries, hash_cache=cache
        )
        bm.close()
    bitmap.chmod(0o644)
    bitmap.write_bytes(data)
    r = subprocess.run(
        ["git", "rev-list", "--test-bitmap", "HEAD"], cwd=repo, capture_output=True, env=git_env()
    )
    assert r.returncode == 0, r.stderr
    assert b"OK!" in r.stderr


# -- multi-pack-index write --bitmap ----------------------------------------------

GIT255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"


_gitodb = run_gitodb


def _multi_pack_repo(tmp_path: Path, name: str = "repo") -> Path:
    repo = tmp_path / name
    git("init", "-q", repo)
    for i in range(6):
        _commit(repo, i)
        git("repack", "-dq", cwd=repo)  # one pack per commit
    git("tag", "-a", "-m", "t", "v1", "HEAD~2", cwd=repo)
    return repo


def _midx_files(repo: Path) -> dict[str, bytes]:
    pack = repo / ".git/objects/pack"
    return {p.name: p.read_bytes() for p in pack.glob("multi-pack-index*") if p.is_file()}


def test_write_bitmap_is_accepted_by_git(tmp_path: Path) -> None:
    repo = _multi_pack_repo(tmp_path)
    r = _gitodb("multi-pack-index", "write", "--bitmap", cwd=repo)
    assert r.returncode == 0, r.stderr
    files = _midx_files(repo)
    assert any(n.endswith(".bitmap") for n in files)
    t = subprocess.run(
        ["git", "rev-list", "--test-bitmap", "HEAD"], cwd=repo, capture_output=True, env=git_env()
    )
    assert t.returncode == 0 and b"OK!" in t.stderr, t.stderr
    for spec in (["--all"], ["HEAD", "^HEAD~3"]):
        with_bm = rev_list(repo, "--objects", "--use-bitmap-index", *spec)
        assert sorted(with_bm) == sorted(
            line.split()[0]
            for line in git("rev-list", "--objects", *spec, cwd=repo).decode().splitlines()
        )
    if GIT255.exists():
        t = subprocess.run(
            [str(GIT255), "rev-list", "--test-bitmap", "HEAD"],
            cwd=repo,
            capture_output=True,
            env=git_env(),
        )
        assert t.returncode == 0 and b"OK!" in t.stderr, t.stderr


@pytest.mark.skipif(not GIT255.exists(), reason="needs ../shared/git-2.55")
def test_write_bitmap_is_byte_identical_to_git_255(tmp_path: Path) -> None:
    repo = _multi_pack_repo(tmp_path)
    git("repack", "-adbq", cwd=repo)  # one pack with a bitmap (its name hashes are reused)
    _commit(repo, 20)
    git("repack", "-dq", cwd=repo)
    env = git_env()
    subprocess.run(
        [str(GIT255), "multi-pack-index", "write", "--bitmap"], cwd=repo, env=env, check=True
    )
    theirs = _midx_files(repo)
    for n in theirs:
        (repo / ".git/objects/pack" / n).unlink()
    r = _gitodb("multi-pack-index", "write", "--bitmap", cwd=repo)
    assert r.returncode == 0, r.stderr
    assert _midx_files(repo) == theirs


def test_write_without_bitmap_drops_a_kept_midx_bitmap(tmp_path: Path) -> None:
    repo = _multi_pack_repo(tmp_path)
    assert _gitodb("multi-pack-index", "write", "--bitmap", cwd=repo).returncode == 0
    before = _midx_files(repo)
    assert len(before) == 2
    # up to date and a bitmap: kept as it is
    assert _gitodb("multi-pack-index", "write", "--bitmap", cwd=repo).returncode == 0
    assert _midx_files(repo) == before
    r = _gitodb("multi-pack-index", "write", "--no-bitmap", cwd=repo)
    assert r.returncode == 0
    assert _midx_files(repo) == {"multi-pack-index": before["multi-pack-index"]}


def test_refs_snapshot_picks_the_starting_points(tmp_path: Path) -> None:
    repo = _multi_pack_repo(tmp_path)
    snap = tmp_path / "snapshot"
    snap.write_text("+" + git("rev-parse", "HEAD~3", cwd=repo).decode())
    r = _gitodb("multi-pack-index", "write", "--bitmap", f"--refs-snapshot={snap}", cwd=repo)
    assert r.returncode == 0, r.stderr
    with odb_of(repo) as odb:
        bm = open_repository_bitmap(odb)
        assert bm is not None
        bitmapped = {bm._oid_at_index(p).hex() for p in bm.index.commit_positions()}
        bm.close()
    # only HEAD~3 and what it reaches: 3 commits, every one bitmapped (fewer than 100)
    assert bitmapped == set(rev_list(repo, "HEAD~3"))


def test_write_option_grammar_as_git(tmp_path: Path) -> None:
    repo = _multi_pack_repo(tmp_path)
    objdir = str(repo / ".git/objects")
    # --opt value, --no-opt, a stuck value
    r = _gitodb("multi-pack-index", "--object-dir", objdir, "write", "--no-stdin-packs", cwd=repo)
    assert r.returncode == 0, r.stderr
    r = _gitodb("multi-pack-index", "write", "--base=abc", cwd=repo)
    assert r.returncode == 129
    assert r.stderr.startswith(b"error: cannot use --base without --no-write-chain-file\n")
    r = _gitodb("multi-pack-index", "write", "--bogus", cwd=repo)
    assert r.returncode == 129 and r.stderr.startswith(b"error: unknown option `bogus'\n")
    r = _gitodb("multi-pack-index", cwd=repo)
    assert r.returncode == 129 and r.stderr.startswith(b"error: need a subcommand\n")
    for args in (["write", "--bogus"], ["--bogus"], []):
        g = subprocess.run(
            ["git", "multi-pack-index", *args], cwd=repo, capture_output=True, env=git_env()
        )
        ours = _gitodb("multi-pack-index", *args, cwd=repo)
        assert ours.returncode == g.returncode
        assert ours.stderr.splitlines()[0] == g.stderr.splitlines()[0]


def test_git_ewah_xor_decodes_to_the_xor() -> None:
    from gitodb.pack.ewah import git_ewah_of, git_ewah_xor

    rng = random.Random(11)
    for _ in range(200):
        n = rng.choice([1, 64, 200, 1000, 5000])
        dens = rng.choice([0.0, 0.01, 0.5, 0.99, 1.0])
        a = sum(1 << i for i in range(n) if rng.random() < dens)
        b = a ^ sum(1 << i for i in range(n) if rng.random() < 0.02)
        ea, eb = git_ewah_of(a), git_ewah_of(b)
        assert read_ewah(ea.serialise(), 0, path="x")[0] == a
        x = git_ewah_xor(ea, eb).serialise()
        assert read_ewah(x, 0, path="x")[0] == a ^ b


def _linear_history(repo: Path, n: int) -> None:
    """``n`` empty commits with distinct committer dates, by fast-import."""
    git("init", "-q", repo)
    lines = []
    for i in range(1, n + 1):
        msg = f"c{i}\n"
        lines.append(
            f"commit refs/heads/main\nmark :{i}\n"
            f"committer C <c@example.com> {1700000000 + i} +0000\n"
            f"data {len(msg)}\n{msg}"
        )
        if i > 1:
            lines.append(f"from :{i - 1}\n")
        lines.append("\n")
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=repo,
        input="".join(lines).encode(),
        env=git_env(),
        check=True,
    )
    git("symbolic-ref", "HEAD", "refs/heads/main", cwd=repo)
    git("repack", "-adq", cwd=repo)


@pytest.mark.skipif(not GIT255.exists(), reason="needs ../shared/git-2.55")
def test_spaced_selection_and_xor_entries_are_gits(tmp_path: Path) -> None:
    # 130 commits: the first 101 are all bitmapped, then Git's strides; Git stores
    # some entries XORed against a neighbour, built as its ewah_xor builds them.
    repo = tmp_path / "line"
    _linear_history(repo, 130)
    env = git_env()
    subprocess.run(
        [str(GIT255), "multi-pack-index", "write", "--bitmap"], cwd=repo, env=env, check=True
    )
    theirs = _midx_files(repo)
    for name in theirs:
        (repo / ".git/objects/pack" / name).unlink()
    r = _gitodb("multi-pack-index", "write", "--bitmap", cwd=repo)
    assert r.returncode == 0, r.stderr
    ours = _midx_files(repo)
    assert ours == theirs
    with odb_of(repo) as odb:
        bm = open_repository_bitmap(odb)
        assert bm is not None and bm.index.count == 104
        assert any(e.xor_offset for e in bm.index._entries)
        bm.close()


def test_write_bitmap_without_full_closure_fails_and_keeps_no_midx(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    git("init", "-q", repo)
    _commit(repo, 0)
    _commit(repo, 1)
    parent = git("rev-parse", "HEAD~1", cwd=repo).decode().strip()
    # a pack of the tip commit alone: its parent stays loose
    subprocess.run(
        ["git", "pack-objects", "-q", str(repo / ".git/objects/pack/pack")],
        cwd=repo,
        input=git("rev-parse", "HEAD", cwd=repo),
        capture_output=True,
        env=git_env(),
        check=True,
    )
    r = _gitodb("multi-pack-index", "write", "--bitmap", cwd=repo)
    assert r.returncode == 255
    assert (
        r.stderr
        == (
            "warning: Failed to write bitmap index. Packfile doesn't have full closure "
            f"(object {parent} is missing)\nerror: could not write multi-pack bitmap\n"
        ).encode()
    )
    assert _midx_files(repo) == {}
    assert not list((repo / ".git/objects/pack").glob("*.lock"))
    if GIT255.exists():
        g = subprocess.run(
            [str(GIT255), "multi-pack-index", "write", "--bitmap"],
            cwd=repo,
            capture_output=True,
            env=git_env(),
        )
        assert (g.returncode, g.stderr) == (r.returncode, r.stderr)


def test_write_bitmap_of_no_objects_writes_only_the_midx(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    git("init", "-q", repo)
    empty = (
        subprocess.run(
            ["git", "pack-objects", "-q", str(repo / ".git/objects/pack/pack")],
            cwd=repo,
            input=b"",
            capture_output=True,
            env=git_env(),
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    r = _gitodb(
        "multi-pack-index",
        "write",
        "--bitmap",
        "--stdin-packs",
        cwd=repo,
        stdin=f"pack-{empty}.idx\n".encode(),
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr == b"warning: refusing to write multi-pack .bitmap without any objects\n"
    assert list(_midx_files(repo)) == ["multi-pack-index"]


def test_lookup_table_when_configured(tmp_path: Path) -> None:
    repo = _multi_pack_repo(tmp_path)
    git("config", "pack.writeBitmapLookupTable", "true", cwd=repo)
    r = _gitodb("multi-pack-index", "write", "--bitmap", cwd=repo)
    assert r.returncode == 0, r.stderr
    with odb_of(repo) as odb:
        bm = open_repository_bitmap(odb)
        assert bm is not None and bm.index.options & 0x10
        bm.close()
    t = subprocess.run(
        ["git", "rev-list", "--test-bitmap", "HEAD"], cwd=repo, capture_output=True, env=git_env()
    )
    assert t.returncode == 0 and b"OK!" in t.stderr, t.stderr
    if GIT255.exists():
        theirs = _midx_files(repo)
        for name in theirs:
            (repo / ".git/objects/pack" / name).unlink()
        subprocess.run(
            [str(GIT255), "multi-pack-index", "write", "--bitmap"],
            cwd=repo,
            env=git_env(),
            check=True,
        )
        assert _midx_files(repo) == theirs
