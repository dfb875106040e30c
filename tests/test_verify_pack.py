"""gitodb verify-pack against git, the fixtures, and damaged packs; scanner fuzzing."""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitodb import compress
from gitodb.errors import GitodbError
from gitodb.objects import OBJ_BLOB, OBJ_REF_DELTA, SHA1, hash_object
from gitodb.pack.entry import encode_entry_header
from gitodb.pack.indexer import PackIndexer
from helpers import DATA, git, git_env
from test_index_pack import gitodb, make_repo

FIXTURES = DATA / "index-pack"
pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = make_repo(tmp_path_factory.mktemp("vp") / "r", commits=15)
    git("repack", "-adq", cwd=r)
    return r


def stored_pack(repo: Path, dest: Path) -> Path:
    """Copy the repository's pack and index to ``dest``; return the .idx path."""
    dest.mkdir(exist_ok=True)
    (idx,) = (repo / ".git" / "objects" / "pack").glob("*.idx")
    for ext in (".idx", ".pack"):
        shutil.copy(idx.with_suffix(ext), dest / idx.with_suffix(ext).name)
        os.chmod(dest / idx.with_suffix(ext).name, 0o644)
    return dest / idx.name


@pytest.mark.parametrize("flags", [("-v",), ("-s",), (), ("-v", "-s")])
def test_output_identical_to_git(repo: Path, tmp_path: Path, flags: tuple[str, ...]) -> None:
    idx = stored_pack(repo, tmp_path / "p")
    ours = gitodb("verify-pack", *flags, idx.relative_to(tmp_path), cwd=tmp_path)
    theirs = git("verify-pack", *flags, idx.relative_to(tmp_path), cwd=tmp_path)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == theirs
    assert ours.stderr == b""


def fixture_cases() -> list[tuple[str, Path]]:
    cases = []
    for fx in ("packs-mixed", "packs-sha256"):
        for exp in sorted((FIXTURES / fx / "expected").glob("verify-pack-*.txt")):
            cases.append((fx, exp))
    return cases


@pytest.mark.parametrize("fx,expected", fixture_cases(), ids=lambda v: getattr(v, "stem", v))
def test_fixture_verify_pack_output(fx: str, expected: Path) -> None:
    """``git verify-pack -v objects/.../pack-X.idx`` as recorded by Git 2.55 (cwd = repo)."""
    last = expected.read_bytes().splitlines()[-1].decode()
    pack_arg = last[: -len(": ok")]
    idx_arg = pack_arg[: -len(".pack")] + ".idx"
    fmt = "sha256" if fx == "packs-sha256" else "sha1"
    proc = gitodb(
        "verify-pack", f"--object-format={fmt}", "-v", idx_arg, cwd=FIXTURES / fx / "repo"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected.read_bytes()


def test_several_packs_and_missing_one(repo: Path, tmp_path: Path) -> None:
    idx = stored_pack(repo, tmp_path / "p")
    for args in ((idx, tmp_path / "nope.idx"), ("-v", tmp_path / "nope.idx")):
        ours = gitodb("verify-pack", *args)
        theirs = git_run("verify-pack", *args)
        assert ours.returncode == theirs.returncode == 1
        assert ours.stdout == theirs.stdout
        assert ours.stderr == theirs.stderr  # "fatal: Cannot open existing pack file '...'"


# -- damaged packs -------------------------------------------------------------------


def git_run(*args: str | os.PathLike[str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", *map(os.fspath, args)], capture_output=True, env=git_env(), check=False
    )


def damage(idx: Path, pack_edit: object = None, idx_edit: object = None) -> None:
    if pack_edit is not None:
        p = idx.with_suffix(".pack")
        data = bytearray(p.read_bytes())
        pack_edit(data)  # type: ignore[operator]
        p.write_bytes(bytes(data))
    if idx_edit is not None:
        data = bytearray(idx.read_bytes())
        idx_edit(data)  # type: ignore[operator]
        idx.write_bytes(bytes(data))


def first_blob_offset(idx: Path) -> int:
    out = git("verify-pack", "-v", idx).decode().splitlines()
    return next(int(line.split()[4]) for line in out if " blob " in line)


def _flip_entry(data: bytearray, at: int) -> None:
    data[at + 10] ^= 0x04


def _wrong_crc(data: bytearray) -> None:
    count = struct.unpack(">I", data[8 + 1020 : 8 + 1024])[0]
    data[8 + 1024 + 20 * count + 4 * 3] ^= 0x01


CASES = {
    "flipped-bit": (lambda d, off: _flip_entry(d, off), None, b"bad object at offset"),
    "truncated": (lambda d, off: d.__delitem__(slice(len(d) // 2, None)), None, b"early EOF"),
    "wrong-trailer": (
        lambda d, off: d.__setitem__(-1, d[-1] ^ 0xFF),
        None,
        b"pack is corrupted (SHA1 mismatch)",
    ),
    "wrong-crc-in-index": (None, _wrong_crc, b"CRC-32 of"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_damaged_pack_verify_pack(repo: Path, tmp_path: Path, case: str) -> None:
    idx = stored_pack(repo, tmp_path / "p")
    pack_edit, idx_edit, message = CASES[case]
    off = first_blob_offset(idx)
    damage(idx, (lambda d: pack_edit(d, off)) if pack_edit else None, idx_edit)
    before = sorted(os.listdir(idx.parent))
    theirs = git("verify-pack", "-v", idx, check=False)
    ours = gitodb("verify-pack", "-v", idx)
    assert ours.returncode == 1  # git verify-pack's status
    assert ours.stdout.endswith(b": bad\n")
    assert theirs.endswith(b": bad\n")
    lines = ours.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(b"fatal: ") and message in lines[0], lines
    assert sorted(os.listdir(idx.parent)) == before


@pytest.mark.parametrize("case", ["flipped-bit", "truncated", "wrong-trailer"])
def test_damaged_pack_index_pack_leaves_nothing(repo: Path, tmp_path: Path, case: str) -> None:
    idx = stored_pack(repo, tmp_path / "p")
    pack_edit, _, message = CASES[case]
    off = first_blob_offset(idx)
    damage(idx, lambda d: pack_edit(d, off))
    pack = idx.with_suffix(".pack")
    out = tmp_path / "out"
    out.mkdir()
    theirs = git_run("index-pack", "-o", out / "g.idx", pack)
    ours = gitodb("index-pack", "--rev-index", "-o", out / "x.idx", pack)
    assert ours.returncode == theirs.returncode == 128
    assert ours.stderr.count(b"\n") == 1 and message in ours.stderr
    assert b"offset" in ours.stderr
    assert os.listdir(out) == []
    # --stdin into a repository: no tmp_pack_* either
    dest = tmp_path / "dest"
    git("init", "-q", "--bare", dest)
    ours = gitodb("index-pack", "--stdin", cwd=dest, input=pack.read_bytes())
    assert ours.returncode == 128
    assert os.listdir(dest / "objects" / "pack") == []


def _pack(entries: list[bytes]) -> bytes:
    body = b"PACK" + struct.pack(">II", 2, len(entries)) + b"".join(entries)
    return body + hashlib.sha1(body).digest()


def _blob_entry(data: bytes) -> bytes:
    return encode_entry_header(OBJ_BLOB, len(data)) + compress.deflate(data)


def _insert_delta(base_size: int, result: bytes) -> bytes:
    """A delta that ignores its base and inserts ``result`` literally."""

    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            b = n & 0x7F
            n >>= 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)

    body = b"".join(
        bytes([len(result[i : i + 127])]) + result[i : i + 127] for i in range(0, len(result), 127)
    )
    return varint(base_size) + varint(len(result)) + body


def _ref_delta_entry(base_oid: bytes, delta: bytes) -> bytes:
    return encode_entry_header(OBJ_REF_DELTA, len(delta)) + base_oid + compress.deflate(delta)


def test_delta_with_missing_base(tmp_path: Path) -> None:
    missing = hash_object(SHA1, "blob", b"not in the pack\n")
    first = _blob_entry(b"hello\n")
    pack = _pack([first, _ref_delta_entry(missing, _insert_delta(16, b"result\n"))])
    p = tmp_path / "m.pack"
    p.write_bytes(pack)
    theirs = git("index-pack", "-o", tmp_path / "g.idx", p, check=False)
    assert theirs == b""
    ours = gitodb("index-pack", p)
    assert ours.returncode == 128
    assert ours.stderr.startswith(b"fatal: pack has 1 unresolved delta: ")
    assert missing.hex().encode() in ours.stderr
    assert b"at offset %d" % (12 + len(first)) in ours.stderr
    assert sorted(os.listdir(tmp_path)) == ["m.pack"]


def test_delta_cycle(tmp_path: Path) -> None:
    """Two REF_DELTAs, each naming the other's result as its base."""
    a, b = b"object a\n", b"object b\n"
    oid_a, oid_b = hash_object(SHA1, "blob", a), hash_object(SHA1, "blob", b)
    pack = _pack(
        [
            _ref_delta_entry(oid_b, _insert_delta(len(b), a)),
            _ref_delta_entry(oid_a, _insert_delta(len(a), b)),
        ]
    )
    p = tmp_path / "c.pack"
    p.write_bytes(pack)
    ours = gitodb("index-pack", p)
    assert ours.returncode == 128
    assert ours.stderr.startswith(b"fatal: pack has 2 unresolved deltas: ")
    assert b"cycle" in ours.stderr
    assert sorted(os.listdir(tmp_path)) == ["c.pack"]
    # Either base present makes the pack resolvable: the checks are not over-eager.
    ok = _pack([_blob_entry(b), _ref_delta_entry(oid_b, _insert_delta(len(b), a))])
    result = PackIndexer(ok, SHA1).run()
    assert set(result.oids) == {oid_a, oid_b}


def test_size_bomb_entry_is_rejected() -> None:
    """An entry whose stream inflates past its declared size stops at size + 1."""
    data = b"\0" * 1_000_000
    entry = encode_entry_header(OBJ_BLOB, 10) + compress.deflate(data)
    with pytest.raises(GitodbError) as e:
        PackIndexer(_pack([entry]), SHA1).run()
    assert "offset 12" in str(e.value)


# -- fuzz ---------------------------------------------------------------------------


def _small_pack() -> bytes:
    base = b"".join(b"line %d of the base object\n" % i for i in range(40))
    oid = hash_object(SHA1, "blob", base)
    return _pack(
        [
            _blob_entry(base),
            _blob_entry(b"x" * 300),
            _ref_delta_entry(oid, _insert_delta(len(base), b"new content\n" * 3)),
        ]
    )


SMALL_PACK = _small_pack()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.integers(0, len(SMALL_PACK) - 1), st.integers(1, 255)), min_size=1, max_size=4
    ),
    st.integers(0, len(SMALL_PACK)),
    st.booleans(),
)
def test_fuzz_scanner_on_mutated_packs(
    flips: list[tuple[int, int]], cut: int, fix_trailer: bool
) -> None:
    data = bytearray(SMALL_PACK)
    for at, mask in flips:
        data[at] ^= mask
    data = data[:cut] if cut < len(data) - 20 else data
    if fix_trailer and len(data) > 20:
        # Recompute the checksum so the damage reaches the entry parser.
        data[-20:] = hashlib.sha1(bytes(data[:-20])).digest()
    try:
        result = PackIndexer(bytes(data), SHA1, threads=2).run()
    except GitodbError:
        return
    assert len(result.oids) == struct.unpack(">I", data[8:12])[0]
    assert all(len(o) == 20 for o in result.oids)


# -- forked resolver (--threads > 1 on packs with many delta trees) -------------------


def test_forked_resolver_matches_single_thread(monkeypatch: pytest.MonkeyPatch, repo: Path) -> None:
    import gitodb.pack.index_resolve as indexer

    pack = git("pack-objects", "--stdout", "--revs", "--all", cwd=repo, input=b"")
    expected = PackIndexer(pack, SHA1, threads=1).run()
    monkeypatch.setattr(indexer, "FORK_MIN_ROOTS", 1)
    for threads in (2, 3):
        got = PackIndexer(pack, SHA1, threads=threads).run()
        assert got.index_bytes() == expected.index_bytes()
        assert (got.depths, got.bases, got.real_types, got.object_sizes) == (
            expected.depths,
            expected.bases,
            expected.real_types,
            expected.object_sizes,
        )


def test_forked_resolver_reports_a_childs_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import gitodb.pack.index_resolve as indexer

    monkeypatch.setattr(indexer, "FORK_MIN_ROOTS", 1)
    entries = []
    for k in range(4):
        base = b"base object number %d\n" % k * 4
        oid = hash_object(SHA1, "blob", base)
        # the last tree's delta claims a wrong base size: only its process fails
        size = len(base) + (1 if k == 3 else 0)
        entries += [_blob_entry(base), _ref_delta_entry(oid, _insert_delta(size, b"r%d\n" % k))]
    with pytest.raises(GitodbError) as e:
        PackIndexer(_pack(entries), SHA1, threads=2).run()
    assert "delta base size mismatch" in str(e.value)
    assert "offset" in str(e.value)
