"""SHA-1 with collision detection: the native core against the pure-Python reference,
both against hashlib on ordinary data, and both on the SHAttered PDFs."""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitodb.errors import ObjectCollisionError
from gitodb.objects import sha1dc, sha1dc_ref
from helpers import DATA, git, git_env, snapshot

SHATTERED = [DATA / "sha1dc" / "shattered-1.pdf", DATA / "sha1dc" / "shattered-2.pdf"]
# The SHA-1 both PDFs share, and what the reference SHA-1DC's "safe hash" makes of each.
COLLIDING_SHA1 = "38762cf7f55934b34d179ae6a4c80cadccbb7f0a"
SAFE_HASHES = [
    "16e96b70000dd1e7c85b8368ee197754400e58ec",
    "e1761773e6a35916d99f891b77663e6405313587",
]
# The two collision blocks are 192..320; the pure-Python reference only needs a prefix.
PREFIX = 1024

try:
    from gitodb import _native

    NATIVE: Any = _native.sha1dc
except ImportError:  # pragma: no cover - the native core is optional
    NATIVE = None

needs_native = pytest.mark.skipif(NATIVE is None, reason="gitodb._native is not built")


def _kernels() -> list[str]:
    """The native compression kernels this CPU can run (SHA-NI only where it has it)."""
    if NATIVE is None:
        return ["portable"]
    found = []
    for name in ("portable", "sha-ni"):
        try:
            _native.use_sha1dc_kernel(name)
        except ValueError:
            continue
        found.append(name)
    _native.use_sha1dc_kernel(DEFAULT_KERNEL)
    return found


DEFAULT_KERNEL = _native.sha1dc_kernel() if NATIVE is not None else "portable"
KERNELS = _kernels()
each_kernel = pytest.mark.parametrize("kernel", KERNELS)


@contextlib.contextmanager
def kernel_in_use(name: str) -> Iterator[None]:
    """Run the native SHA-1DC on kernel ``name``, then go back to the default."""
    if NATIVE is not None:
        _native.use_sha1dc_kernel(name)
    try:
        yield
    finally:
        if NATIVE is not None:
            _native.use_sha1dc_kernel(DEFAULT_KERNEL)


def impls() -> list[Any]:
    """The reference, the pure-Python fallback (filtered by the UBCs), the native core."""
    return [sha1dc_ref.Sha1DCRef, sha1dc._RefHasher] + ([NATIVE] if NATIVE is not None else [])


def test_data_files_are_the_published_shattered_pair() -> None:
    one, two = (p.read_bytes() for p in SHATTERED)
    assert len(one) == len(two) == 422435 and one != two
    assert hashlib.sha1(one).hexdigest() == hashlib.sha1(two).hexdigest() == COLLIDING_SHA1
    assert hashlib.sha256(one).hexdigest().startswith("2bb787a73e37352f")
    assert hashlib.sha256(two).hexdigest().startswith("d4488775d29bdef7")


def test_disturbance_vectors_are_derived_consistently() -> None:
    # Every DV satisfies the message recurrence, so its message difference does
    # too: W ^ DW is again a valid expanded message.
    assert len(sha1dc_ref.DVS) == 33
    for (dv_type, k, b), (t, dw) in zip(sha1dc_ref.DVS, sha1dc_ref.DV_TABLES, strict=True):
        for i in range(16, 80):
            assert dw[i] == sha1dc_ref._rol(dw[i - 3] ^ dw[i - 8] ^ dw[i - 14] ^ dw[i - 16], 1)
        dv = sha1dc_ref.disturbance_vector(dv_type, k, b)
        assert t in (58, 65) and not any(dv[t - j] for j in range(1, 6))
    if NATIVE is not None:
        assert _native.SHA1DC_DV_COUNT == len(sha1dc_ref.DVS)


@pytest.mark.parametrize("path", SHATTERED, ids=["shattered-1", "shattered-2"])
def test_both_pdfs_are_detected_by_the_reference(path: Path) -> None:
    data = path.read_bytes()
    clean = sha1dc_ref.Sha1DCRef(data[:192])
    assert not clean.collision
    h = sha1dc_ref.Sha1DCRef(data[:PREFIX])
    assert h.collision
    # The hash itself is still plain SHA-1 unless safe hashing is asked for.
    assert h.result() == (hashlib.sha1(data[:PREFIX]).digest(), True)


@needs_native
@each_kernel
@pytest.mark.parametrize("index", [0, 1], ids=["shattered-1", "shattered-2"])
def test_both_pdfs_are_detected_by_the_native_core(index: int, kernel: str) -> None:
    with kernel_in_use(kernel):
        _pdf_is_detected(index)


def _pdf_is_detected(index: int) -> None:
    data = SHATTERED[index].read_bytes()
    # Whole (the attack blocks go through the eight-block filter) and in pieces
    # smaller than eight blocks (each block filtered alone).
    for piece in (64, 100, 511):
        h = NATIVE()
        for at in range(0, len(data), piece):
            h.update(data[at : at + piece])
        assert h.result() == (bytes.fromhex(COLLIDING_SHA1), True), piece
    h = NATIVE(data)
    assert h.collision
    assert h.result() == (bytes.fromhex(COLLIDING_SHA1), True)
    with pytest.raises(ObjectCollisionError) as info:
        h.digest()
    assert info.value.hexdigest == COLLIDING_SHA1
    assert info.value.git_message == (
        f"SHA-1 appears to be part of a collision attack: {COLLIDING_SHA1}"
    )
    with pytest.raises(ObjectCollisionError):
        h.hexdigest()
    assert NATIVE(data, safe_hash=True).result() == (bytes.fromhex(SAFE_HASHES[index]), True)
    # Plain mode hashes the same bytes without looking.
    assert NATIVE(data, detect=False).digest() == bytes.fromhex(COLLIDING_SHA1)


@needs_native
@pytest.mark.parametrize("path", SHATTERED, ids=["shattered-1", "shattered-2"])
@each_kernel
def test_native_and_reference_agree_on_the_attack_blocks(path: Path, kernel: str) -> None:
    data = path.read_bytes()[:PREFIX]
    with kernel_in_use(kernel):
        for safe in (False, True):
            assert (
                NATIVE(data, safe_hash=safe).result()
                == sha1dc_ref.Sha1DCRef(data, safe_hash=safe).result()
            )


def test_reference_safe_hash_matches_published_value() -> None:
    # The safe hash of the whole file is the reference implementation's known output;
    # rather than hash 400 KB in Python, hash the prefix and finish with hashlib-free
    # native state when available, else check the prefix's safe hash differs.
    data = SHATTERED[0].read_bytes()[:PREFIX]
    safe = sha1dc_ref.Sha1DCRef(data, safe_hash=True).result()
    assert safe[1] and safe[0] != hashlib.sha1(data).digest()


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300), st.lists(st.integers(0, 300), max_size=4))
def test_plain_inputs_hash_like_hashlib(data: bytes, cuts: list[int]) -> None:
    expected = hashlib.sha1(data).digest()
    for impl in impls():
        h = impl()
        last = 0
        for cut in sorted(c for c in cuts if c <= len(data)):
            h.update(data[last:cut])
            last = cut
        h.update(memoryview(data)[last:])
        assert h.result() == (expected, False)
        assert h.digest() == expected and h.hexdigest() == expected.hex()


@needs_native
@each_kernel
@settings(max_examples=25, deadline=None)
@given(data=st.binary(min_size=0, max_size=70000))
def test_native_matches_hashlib_on_larger_inputs(kernel: str, data: bytes) -> None:
    # Large enough to take the GIL-released path.
    with kernel_in_use(kernel):
        assert NATIVE(bytearray(data)).digest() == hashlib.sha1(data).digest()
        assert NATIVE(data, detect=False).digest() == hashlib.sha1(data).digest()


@needs_native
@each_kernel
@settings(max_examples=40, deadline=None)
@given(data=st.binary(max_size=200), safe=st.booleans())
def test_native_equals_reference(kernel: str, data: bytes, safe: bool) -> None:
    # Random data around the attack blocks: splice it after a SHAttered prefix.
    attack = SHATTERED[1].read_bytes()[:384]
    with kernel_in_use(kernel):
        for body in (data, attack + data):
            assert (
                NATIVE(body, safe_hash=safe).result()
                == sha1dc_ref.Sha1DCRef(body, safe_hash=safe).result()
            )


@needs_native
def test_kernel_is_chosen_from_the_cpu() -> None:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists() and sys.platform == "linux" and os.uname().machine == "x86_64":
        has_sha = " sha_ni" in cpuinfo.read_text()
        assert DEFAULT_KERNEL == ("sha-ni" if has_sha else "portable")
    assert "portable" in KERNELS
    with pytest.raises(ValueError, match="bogus"):
        _native.use_sha1dc_kernel("bogus")
    assert _native.sha1dc_kernel() == DEFAULT_KERNEL


@pytest.mark.parametrize("impl", impls(), ids=lambda i: i.__name__)
def test_copy_is_independent(impl: Any) -> None:
    h = impl(b"abc")
    c = h.copy()
    c.update(b"def")
    assert h.digest() == hashlib.sha1(b"abc").digest()
    assert c.digest() == hashlib.sha1(b"abcdef").digest()
    attack = impl(SHATTERED[0].read_bytes()[:PREFIX])
    assert attack.copy().collision
    assert type(attack.copy()) is type(attack)


def test_fallback_detects_like_the_reference() -> None:
    # The fallback skips DVs by their unavoidable bit conditions; on the attack
    # blocks it must still find the collision, with the same (safe) hashes.
    for path in SHATTERED:
        data = path.read_bytes()[:PREFIX]
        for safe in (False, True):
            assert (
                sha1dc._RefHasher(data, safe_hash=safe).result()
                == sha1dc_ref.Sha1DCRef(data, safe_hash=safe).result()
            )
        with pytest.raises(ObjectCollisionError):
            sha1dc._RefHasher(data).digest()


@needs_native
def test_native_rejects_text_and_bad_arguments() -> None:
    with pytest.raises(TypeError):
        NATIVE("text")
    with pytest.raises(TypeError):
        NATIVE(b"", bogus=True)


@needs_native
def test_native_hasher_is_safe_across_threads() -> None:
    import threading

    h = NATIVE()
    chunk = os.urandom(1 << 16)
    threads = [
        threading.Thread(target=lambda: [h.update(chunk) for _ in range(8)]) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert h.digest() == hashlib.sha1(chunk * 32).digest()


def test_choice_of_sha1(monkeypatch: pytest.MonkeyPatch) -> None:
    from gitodb.errors import ConfigError
    from gitodb.objects import SHA1

    monkeypatch.setattr(sha1dc, "_factory", None)
    monkeypatch.setenv("GITODB_SHA1", "plain")
    assert sha1dc.sha1_factory() is hashlib.sha1
    assert SHA1.new_hasher(b"x").digest() == hashlib.sha1(b"x").digest()
    monkeypatch.setattr(sha1dc, "_factory", None)
    monkeypatch.setenv("GITODB_SHA1", "sha1")
    with pytest.raises(ConfigError):
        sha1dc.sha1_factory()
    monkeypatch.setattr(sha1dc, "_factory", None)
    monkeypatch.delenv("GITODB_SHA1")
    assert sha1dc.sha1_name() == ("SHA1_DC" if NATIVE is not None else "SHA1_DC (pure Python)")
    # Without the native core, the pure-Python reference is the fallback, same semantics.
    monkeypatch.setattr(sha1dc, "_factory", None)
    monkeypatch.setattr(sha1dc, "_native_sha1dc", None)
    assert sha1dc.sha1_name() == "SHA1_DC (pure Python)"
    assert SHA1.new_hasher(b"blob 1\0x").digest() == hashlib.sha1(b"blob 1\0x").digest()
    with pytest.raises(ObjectCollisionError):
        SHA1.new_hasher(SHATTERED[0].read_bytes()[:PREFIX]).digest()


def _gitodb(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gitodb", *args], cwd=cwd, capture_output=True, env=env or git_env()
    )


def test_version_build_options_names_the_sha1(tmp_path: Path) -> None:
    out = _gitodb("version", "--build-options", cwd=tmp_path)
    assert out.returncode == 0
    expected = "SHA1_DC" if NATIVE is not None else "SHA1_DC (pure Python)"
    assert f"\nSHA-1: {expected}\n".encode() in out.stdout
    assert b"\nSHA-256: " in out.stdout
    plain = _gitodb(
        "version", "--build-options", cwd=tmp_path, env={**git_env(), "GITODB_SHA1": "plain"}
    )
    assert b"\nSHA-1: SHA1_DC" not in plain.stdout and b"\nSHA-1: " in plain.stdout
    bad = _gitodb("hash-object", "--stdin", cwd=tmp_path, env={**git_env(), "GITODB_SHA1": "nope"})
    assert (bad.returncode, bad.stdout) == (128, b"")
    assert bad.stderr == (b"fatal: bad GITODB_SHA1 value 'nope' (expected one of: sha1dc, plain)\n")


@needs_native
@pytest.mark.parametrize("write", [False, True], ids=["hash", "write"])
def test_hash_object_on_shattered_matches_git(tmp_path: Path, write: bool) -> None:
    # As a blob, the "blob <size>\0" header shifts the attack blocks: no collision,
    # and Git (SHA-1DC too) stores them.  gitodb must do exactly the same.
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for r in (ours, theirs):
        git("init", "-q", r)
    args = (["-w"] if write else []) + [str(p) for p in SHATTERED]
    expected = subprocess.run(
        ["git", "hash-object", *args], cwd=theirs, capture_output=True, env=git_env()
    )
    got = _gitodb("hash-object", *args, cwd=ours)
    assert (got.returncode, got.stdout, got.stderr) == (
        expected.returncode,
        expected.stdout,
        expected.stderr,
    )
    assert expected.returncode == 0 and len(expected.stdout.split()) == 2
    if write:
        for line in got.stdout.split():
            assert (
                git("cat-file", "blob", line.decode(), cwd=ours)
                == SHATTERED[got.stdout.split().index(line)].read_bytes()
            )


class _HeaderBlind:
    """SHA-1DC that skips the ``<type> <size>\\0`` header given to the constructor.

    Object hashing puts the header in front of the content, which (as Git's tests
    know) moves the SHAttered blocks off their alignment.  Dropping the header lets
    the real detector see real attack blocks through every object-hashing path.
    """

    def __init__(self, data: bytes | bytearray | memoryview = b"") -> None:
        self._h = NATIVE()
        if not (len(data) < 32 and bytes(data).endswith(b"\0")):
            self._h.update(data)

    def update(self, data: bytes | bytearray | memoryview) -> None:
        self._h.update(data)

    def digest(self) -> bytes:
        return self._h.digest()  # type: ignore[no-any-return]

    def hexdigest(self) -> str:
        return self._h.hexdigest()  # type: ignore[no-any-return]

    def copy(self) -> Any:
        other = _HeaderBlind()
        other._h = self._h.copy()
        return other


@pytest.fixture
def header_blind(monkeypatch: pytest.MonkeyPatch) -> None:
    if NATIVE is None:
        pytest.skip("gitodb._native is not built")
    monkeypatch.setattr(sha1dc, "_factory", _HeaderBlind)
    monkeypatch.setattr(sha1dc, "_name", "test")


def _main(
    argv: list[str], cwd: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str]:
    from gitodb.cli.main import main

    monkeypatch.chdir(cwd)
    code = main(argv)
    sys.stdout.flush()
    out, err = capfd.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "args",
    [[], ["-w"], ["-w", "--literally", "-t", "blob"], ["-c", "core.bigFileThreshold=1k", "-w"]],
    ids=["hash", "write", "literally", "bulk-checkin"],
)
def test_collision_in_object_hashing_is_fatal_like_git(
    tmp_path: Path,
    header_blind: None,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
) -> None:
    repo = tmp_path / "r"
    git("init", "-q", repo)
    before = sorted(p for p in (repo / ".git/objects").rglob("*"))
    pre, post = (args[:2], args[2:]) if args[:1] == ["-c"] else ([], args)
    code, out, err = _main(
        [*pre, "hash-object", *post, str(SHATTERED[0])], repo, capfd, monkeypatch
    )
    assert (code, out) == (128, "")
    assert err == f"fatal: SHA-1 appears to be part of a collision attack: {COLLIDING_SHA1}\n"
    # Nothing stored, no temporary file or pack left behind.
    assert sorted(p for p in (repo / ".git/objects").rglob("*")) == before


def test_collision_error_names_the_file(tmp_path: Path, header_blind: None) -> None:
    from gitodb.objects import SHA1
    from gitodb.repo.write import compute_object_id

    with pytest.raises(ObjectCollisionError) as info:
        with open(SHATTERED[1], "rb") as f:
            compute_object_id(SHA1, "blob", stream=f, size=SHATTERED[1].stat().st_size)
    assert info.value.hexdigest == COLLIDING_SHA1
    assert info.value.located("x.pdf").path == "x.pdf"


def test_index_pack_refuses_a_pack_with_a_colliding_object(
    tmp_path: Path,
    header_blind: None,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gitodb.objects import SHA1
    from gitodb.pack.index_write import IndexPackOptions, index_pack_file

    src = tmp_path / "src"
    git("init", "-q", src)
    (src / "a.txt").write_text("hello\n")
    (src / "shattered.pdf").write_bytes(SHATTERED[0].read_bytes())
    git("add", ".", cwd=src)
    git("commit", "-q", "-m", "m", cwd=src)
    git("repack", "-q", "-a", "-d", cwd=src)
    (pack,) = (src / ".git/objects/pack").glob("*.pack")
    blob = git("rev-parse", "HEAD:shattered.pdf", cwd=src).decode().strip()
    offset = next(
        int(line.split()[4])
        for line in git("verify-pack", "-v", str(pack.with_suffix(".idx")), cwd=src)
        .decode()
        .splitlines()
        if line.startswith(blob)
    )
    work = tmp_path / "work"
    work.mkdir()
    copy = work / "p.pack"
    copy.write_bytes(pack.read_bytes())
    for threads in (1, 2):
        with pytest.raises(ObjectCollisionError) as info:
            index_pack_file(str(copy), SHA1, IndexPackOptions(threads=threads))
        assert (info.value.path, info.value.offset) == (str(copy), offset)
        assert info.value.hexdigest == COLLIDING_SHA1
    code, out, err = _main(["index-pack", str(copy)], work, capfd, monkeypatch)
    assert (code, out) == (128, "")
    assert err == f"fatal: SHA-1 appears to be part of a collision attack: {COLLIDING_SHA1}\n"
    assert sorted(os.listdir(work)) == ["p.pack"]


def _faked_id_collision(tmp_path: Path) -> tuple[Path, Path, str]:
    """t5300's fake collision: a repository whose object b holds a's content, and a
    pack (made elsewhere) with the real b."""
    (tmp_path / "a").write_bytes(b"aaa\n")
    (tmp_path / "b").write_bytes(b"bbbb\n")
    clean = tmp_path / "clean"
    git("init", "-q", clean)
    ids = git("hash-object", "-w", "../a", "../b", cwd=clean).decode().split()
    prefix = tmp_path / "pk"
    name = git("pack-objects", str(prefix), cwd=clean, input="\n".join(ids).encode() + b"\n")
    pack = Path(f"{prefix}-{name.decode().strip()}.pack")
    corrupt = tmp_path / "corrupt"
    git("init", "-q", corrupt)
    git("hash-object", "-w", "../a", "../b", cwd=corrupt)
    loose = corrupt / ".git/objects"
    (loose / ids[1][:2] / ids[1][2:]).chmod(0o644)
    (loose / ids[1][:2] / ids[1][2:]).write_bytes((loose / ids[0][:2] / ids[0][2:]).read_bytes())
    return corrupt, pack, ids[1]


@pytest.mark.parametrize(
    "args",
    [
        ["-o", "../bad.idx"],
        ["-c", "core.bigfilethreshold=1"],
        ["--stdin"],
        ["--stdin", "--threads=4"],
    ],
    ids=["file", "bigfile", "stdin", "stdin-threads"],
)
def test_index_pack_detects_an_object_id_collision_like_git(
    tmp_path: Path, args: list[str]
) -> None:
    corrupt, pack, b_id = _faked_id_collision(tmp_path)
    pre, post = (args[:2], args[2:]) if args[0] == "-c" else ([], args)
    cmd = [*pre, "index-pack", *post] + ([] if "--stdin" in args else [str(pack)])
    stdin = pack.read_bytes() if "--stdin" in args else None
    expected = subprocess.run(
        ["git", *cmd], cwd=corrupt, input=stdin, capture_output=True, env=git_env()
    )
    # (Git leaves its tmp_pack_* behind on this error; gitodb must add nothing.)
    before = snapshot(corrupt / ".git")
    assert expected.returncode == 128
    assert expected.stderr == f"fatal: SHA1 COLLISION FOUND WITH {b_id} !\n".encode()
    got = subprocess.run(
        [sys.executable, "-m", "gitodb", *cmd],
        cwd=corrupt,
        input=stdin,
        capture_output=True,
        env=git_env(),
    )
    assert (got.returncode, got.stdout, got.stderr) == (128, b"", expected.stderr)
    assert snapshot(corrupt / ".git") == before
    assert not (tmp_path / "bad.idx").exists()


def test_index_pack_accepts_objects_the_repository_has_unchanged(tmp_path: Path) -> None:
    corrupt, pack, _ = _faked_id_collision(tmp_path)
    good = tmp_path / "good"
    git("init", "-q", good)
    git("hash-object", "-w", "../a", "../b", cwd=good)
    got = subprocess.run(
        [sys.executable, "-m", "gitodb", "index-pack", "-o", "../ok.idx", str(pack)],
        cwd=good,
        capture_output=True,
        env=git_env(),
    )
    assert (got.returncode, got.stderr) == (0, b"")
    assert (tmp_path / "ok.idx").read_bytes() == pack.with_suffix(".idx").read_bytes()


# -- unavoidable bit conditions (the native core's filter) ---------------------------


def test_generated_ubc_table_is_the_derivation() -> None:
    from gitodb.objects import sha1dc_ubc

    header = Path(__file__).parent.parent / "src" / "gitodb" / "_native" / "sha1dc_ubc.h"
    assert header.read_text() == sha1dc_ubc.c_header(sha1dc_ubc.all_conditions())
    if NATIVE is not None:
        assert _native.SHA1DC_UBC_COUNT == len(
            sha1dc_ubc.ordered_distinct(sha1dc_ubc.all_conditions())
        )


def test_ubcs_hold_on_every_shattered_attack_block() -> None:
    # SHAttered's two near-collision blocks (offsets 192 and 256) in both files are
    # attack blocks on II(52,0): every derived condition must hold on all four.
    from gitodb.objects import sha1dc_ubc

    conditions = sha1dc_ubc.derive(2, 52, 0)
    assert len(conditions) >= 10
    for path in SHATTERED:
        data = path.read_bytes()
        for offset in (192, 256):
            assert sha1dc_ubc.satisfied(sha1dc_ref.expand(data[offset : offset + 64]), conditions)


def test_ubcs_rule_out_almost_every_ordinary_block() -> None:
    import random

    from gitodb.objects import sha1dc_ubc

    per_dv = sha1dc_ubc.all_conditions()
    assert min(len(c) for c in per_dv) >= 8
    rnd = random.Random(7)
    left = 0
    for _ in range(300):
        w = sha1dc_ref.expand(rnd.randbytes(64))
        left += sum(sha1dc_ubc.satisfied(w, c) for c in per_dv)
    assert left <= 10  # about 33 * 2**-11 per block at most


def _block_meeting(conditions: list[tuple[int, int, int, int, int]], seed: int) -> bytes:
    """A random 64-byte block whose expansion meets ``conditions`` (GF(2) elimination)."""
    import random

    # Each expanded bit as a linear form over the 512 message bits.
    forms = [[1 << (32 * i + b) for b in range(32)] for i in range(16)]
    for i in range(16, 80):
        forms.append(
            [
                forms[i - 3][(b - 1) % 32]
                ^ forms[i - 8][(b - 1) % 32]
                ^ forms[i - 14][(b - 1) % 32]
                ^ forms[i - 16][(b - 1) % 32]
                for b in range(32)
            ]
        )
    rows: list[tuple[int, int]] = []
    for w1, b1, w2, b2, parity in conditions:
        form, value = forms[w1][b1] ^ forms[w2][b2], parity
        for pivot_form, pivot_value in rows:
            top = pivot_form.bit_length() - 1
            if form >> top & 1:
                form, value = form ^ pivot_form, value ^ pivot_value
        assert form, "conditions are dependent or contradictory"
        rows.append((form, value))
    rnd = random.Random(seed)
    bits = rnd.getrandbits(512)
    # Fix each row's top bit (not used by earlier rows, by construction) last to first.
    for form, value in reversed(rows):
        top = form.bit_length() - 1
        if bin(form & bits).count("1") % 2 != value:
            bits ^= 1 << top
    words = [(bits >> (32 * i)) & 0xFFFFFFFF for i in range(16)]
    return b"".join(w.to_bytes(4, "big") for w in words)


@needs_native
def test_blocks_that_pass_the_filter_are_checked_like_the_reference() -> None:
    # Blocks crafted to meet a DV's conditions make the native core run the full
    # recompression for that DV; the answer must still be the reference's.
    from gitodb.objects import sha1dc_ubc

    per_dv = sha1dc_ubc.all_conditions()
    for n, conditions in enumerate(per_dv):
        block = _block_meeting(conditions, n)
        assert sha1dc_ubc.satisfied(sha1dc_ref.expand(block), conditions)
        data = block * 2
        expected = sha1dc_ref.Sha1DCRef(data).result()
        assert expected == (hashlib.sha1(data).digest(), False)
        assert NATIVE(data).result() == NATIVE(data, detect_all=True).result() == expected


@needs_native
@pytest.mark.parametrize("index", [0, 1], ids=["shattered-1", "shattered-2"])
def test_filtered_and_unfiltered_native_agree_on_shattered(index: int) -> None:
    data = SHATTERED[index].read_bytes()
    assert (
        NATIVE(data).result()
        == NATIVE(data, detect_all=True).result()
        == (bytes.fromhex(COLLIDING_SHA1), True)
    )


def test_verify_pack_reports_a_colliding_object(
    tmp_path: Path,
    header_blind: None,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The fsck-style check re-hashes every object with SHA-1DC as well.
    src = tmp_path / "src"
    git("init", "-q", src)
    (src / "shattered.pdf").write_bytes(SHATTERED[1].read_bytes())
    git("add", ".", cwd=src)
    git("commit", "-q", "-m", "m", cwd=src)
    git("repack", "-q", "-a", "-d", cwd=src)
    (idx,) = (src / ".git/objects/pack").glob("*.idx")
    code, out, err = _main(["verify-pack", str(idx)], src, capfd, monkeypatch)
    assert code != 0
    assert err == f"fatal: SHA-1 appears to be part of a collision attack: {COLLIDING_SHA1}\n"
