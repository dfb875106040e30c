"""The native core against its pure-Python reference, and the compression waist.

* Differential (hypothesis): packs of random blobs and random deltas read with the
  native core and with every native hook switched off give the same bytes.
* The waist: no ctypes in the compression layer, nobody outside ``gitodb.compress``
  touches a backend's ``decompressobj`` or its exception classes.
* ``version --build-options`` says whether the native core is loaded; without it
  everything still reads (the fallback).
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gitodb
from gitodb.objects.format import SHA1
from gitodb.objects.header import OBJ_BLOB, hash_object
from gitodb.pack import cache as cache_module
from gitodb.pack import delta as delta_module
from gitodb.pack import entry as entry_module
from gitodb.pack import idx as idx_module
from gitodb.pack import reader as reader_module
from gitodb.pack import rev as rev_module
from gitodb.pack.reader import PackFile
from test_odb_support import PackBuilder, make_delta

SRC = Path(gitodb.__file__).parent


def _python_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch every native hook of the pack layer to the pure-Python reference."""
    monkeypatch.setattr(delta_module, "_c_apply_delta", None)
    monkeypatch.setattr(delta_module, "delta_sizes", delta_module.delta_sizes_python)
    monkeypatch.setattr(entry_module, "parse_entry_header", entry_module.parse_entry_header_python)
    monkeypatch.setattr(entry_module, "parse_ofs_distance", entry_module.parse_ofs_distance_python)
    monkeypatch.setattr(reader_module, "parse_entry_header", entry_module.parse_entry_header_python)
    monkeypatch.setattr(reader_module, "parse_ofs_distance", entry_module.parse_ofs_distance_python)
    monkeypatch.setattr(reader_module, "_scan_headers", None)
    monkeypatch.setattr(reader_module, "_ofs_base_counts", None)
    monkeypatch.setattr(reader_module, "_walk_pack", None)
    monkeypatch.setattr(reader_module, "_gather_u64", None)
    monkeypatch.setattr(rev_module, "_c_rev_order", None)
    monkeypatch.setattr(idx_module, "_find_oid", None)
    # the Python cache (the reference of _native.DeltaCache) for every PackFile opened
    monkeypatch.setattr(reader_module, "DeltaBaseCache", cache_module.PyDeltaBaseCache)


def _random_pack(tmp: Path, seed: int, count: int) -> tuple[Path, dict[bytes, bytes]]:
    """Random blobs, each either whole or a random delta on an earlier one."""
    rng = random.Random(seed)
    b = PackBuilder()
    objects: list[tuple[int, bytes]] = []
    expected: dict[bytes, bytes] = {}
    for _ in range(count):
        if objects and rng.random() < 0.7:
            base_off, base = rng.choice(objects)
            ops: list[tuple[str, int, int] | bytes] = []
            out = bytearray()
            for _ in range(rng.randint(1, 6)):
                if base and rng.random() < 0.6:
                    start = rng.randrange(len(base))
                    n = rng.randint(1, min(len(base) - start, 70_000))
                    ops.append(("copy", start, n))
                    out += base[start : start + n]
                else:
                    lit = rng.randbytes(rng.randint(1, 127))
                    ops.append(lit)
                    out += lit
            data = bytes(out)
            oid = hash_object(SHA1, "blob", data)
            if oid in expected:
                continue
            off = b.add_ofs_delta(base_off, make_delta(len(base), len(data), ops), oid=oid)
        else:
            data = (
                rng.randbytes(rng.randint(0, 100_000))
                if rng.random() < 0.3
                else b"".join(
                    b"line %d\n" % rng.randint(0, 50) for _ in range(rng.randint(0, 9000))
                )
            )
            oid = hash_object(SHA1, "blob", data)
            if oid in expected:
                continue
            off = b.add_object(OBJ_BLOB, data, oid=oid)
        objects.append((off, data))
        expected[oid] = data
    return b.write(tmp / f"p{seed}"), expected


def _read_all(
    path: Path,
) -> tuple[
    list[tuple[bytes, int, bytes]],
    list[tuple[int, int]],
    list[tuple[int, bytes]],
    list[tuple[int, int]],
]:
    pack = PackFile(path, SHA1)
    walked = [(oid, t, data) for oid, _off, t, data in pack.iter_objects()]
    offsets = [pack.find(oid) for oid, _t, _d in walked]
    headers = [pack.header_at(off) for off in offsets]
    fresh = PackFile(path, SHA1)
    points = [fresh.read_at(off) for off in reversed(offsets)]
    types, sizes = PackFile(path, SHA1).headers_by_position()
    counts = sorted((k - pack.key_base, n) for k, n in pack.ofs_base_counts().items())
    pack.close()
    fresh.close()
    return walked, headers + list(zip(types, sizes, strict=True)), points, counts


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 40))
def test_native_and_python_read_the_same(tmp_path: Path, seed: int, count: int) -> None:
    path, expected = _random_pack(tmp_path, seed, count)
    native = _read_all(path)
    with pytest.MonkeyPatch.context() as mp:
        _python_only(mp)
        python = _read_all(path)
    assert native == python
    assert {oid: data for oid, _t, data in native[0]} == expected


def test_compression_layer_uses_no_ctypes() -> None:
    code = (
        "import sys, zlib\n"
        "from gitodb import compress\n"
        "from gitodb.compress import backends\n"
        "for name in backends.BACKENDS:\n"
        "    if backends.load(name) is None: continue\n"
        "    compress.set_backend(name)\n"
        "    z = zlib.compress(b'x' * 100000)\n"
        "    assert compress.inflate(z, 100000) == b'x' * 100000\n"
        "    assert compress.inflate_prefix(z + b'junk', 100000)[1] == len(z)\n"
        "    assert compress.inflate_head(z, 20) == b'x' * 20\n"
        "    inf = compress.new_inflater(); inf.decompress(z); inf.reset()\n"
        "print('ctypes' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    assert out.stdout.strip() == b"False"
    for path in (SRC / "compress").rglob("*.py"):
        text = path.read_text()
        assert "import ctypes" not in text and "from ctypes" not in text, path


def test_only_the_waist_knows_a_backend() -> None:
    for path in SRC.rglob("*.py"):
        if "compress" in path.relative_to(SRC).parts:
            continue
        text = path.read_text()
        for word in ("decompressobj", "stream_errors", "zlib.error", "import zlib"):
            assert word not in text, (path, word)


def test_build_options_say_whether_the_native_core_is_loaded(tmp_path: Path) -> None:
    from helpers import make_pack

    out = subprocess.run(
        [sys.executable, "-m", "gitodb.cli.main", "version", "--build-options"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    assert "native core: loaded (" in out
    # Without the native core: said so, and a pack still reads (the fallback).
    pack = make_pack(tmp_path)
    code = (
        "import sys; sys.modules['gitodb._native'] = None\n"
        "from gitodb.compress import info\n"
        "print(info.native_core())\n"
        "from gitodb.objects import SHA1\n"
        "from gitodb.pack.reader import PackFile\n"
        f"p = PackFile({str(pack)!r}, SHA1)\n"
        "print(sum(len(d) for _o, _f, _t, d in p.iter_objects()))\n"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    line, total = got.stdout.decode().splitlines()
    assert line.startswith("not loaded")
    p = PackFile(pack, SHA1)
    assert int(total) == sum(len(d) for _o, _f, _t, d in p.iter_objects())
