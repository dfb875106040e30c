"""The native delta-base cache and the native walk's inflate against their references.

* ``_native.DeltaCache`` / ``_native.PendingBases`` (``_native/cache.c``) against
  ``PyDeltaBaseCache`` / ``PendingBases`` (``gitodb.pack.cache``) under random
  sequences of operations (hypothesis): same answers, same account, same order.
* ``PackFile.iter_objects`` through the native walk with zlib's C API, with the
  chosen backend's binding, and through the Python loop on the Python cache: the
  same objects, and for damaged entries the same error (read_at's, naming the
  offset).
* ``compress.native_inflate()`` names the chosen backend's own C API (zlib, libdeflate) or None.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitodb import _native, compress
from gitodb.errors import GitodbError
from gitodb.objects.format import SHA1
from gitodb.pack import cache as cache_module
from gitodb.pack.cache import PendingBases, PyDeltaBaseCache
from gitodb.pack.reader import PackFile
from test_native_core import _python_only, _random_pack

needs_native_cache = pytest.mark.skipif(
    getattr(_native, "DeltaCache", None) is None, reason="native core not built"
)

_KEYS = st.integers(0, 12)
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("put"), _KEYS, st.integers(1, 4), st.integers(0, 40)),
        st.tuples(st.just("get"), _KEYS),
        st.tuples(st.just("pop"), _KEYS),
        st.tuples(st.just("contains"), _KEYS),
        st.tuples(st.just("discard"), st.integers(2, 5)),
        st.tuples(st.just("clear")),
    ),
    max_size=80,
)


def _state(c: object) -> tuple[int, int, list[tuple[int, tuple[int, bytes]]]]:
    return c.size, len(c), list(c.entries.items())  # type: ignore[attr-defined,arg-type]


@needs_native_cache
@settings(max_examples=300, deadline=None)
@given(limit=st.integers(-5, 120), ops=_OPS)
def test_native_cache_matches_python(limit: int, ops: list[tuple]) -> None:  # type: ignore[type-arg]
    native = _native.DeltaCache(limit)
    python = PyDeltaBaseCache(limit)
    assert native.limit == python.limit
    for op in ops:
        if op[0] == "put":
            _, key, t, n = op
            data = bytes([key]) * n
            assert native.put(key, t, data) is python.put(key, t, data) is None
        elif op[0] == "get":
            assert native.get(op[1]) == python.get(op[1])
        elif op[0] == "pop":
            assert native.pop(op[1]) == python.pop(op[1])
        elif op[0] == "contains":
            assert (op[1] in native) == (op[1] in python)
        elif op[0] == "discard":
            m = op[1]
            native.discard_if(lambda k, m=m: k % m == 0)
            python.discard_if(lambda k, m=m: k % m == 0)
        else:
            native.clear()
            python.clear()
        assert _state(native) == _state(python)
        assert native.size <= max(0, limit)
    assert native.new_pack_key() == python.new_pack_key() == cache_module.KEY_STRIDE


@needs_native_cache
@settings(max_examples=300, deadline=None)
@given(
    limit=st.integers(0, 120),
    counts=st.dictionaries(_KEYS, st.integers(1, 3), max_size=8),
    ops=st.lists(
        st.one_of(
            st.tuples(st.just("put"), _KEYS, st.integers(1, 4), st.integers(0, 40)),
            st.tuples(st.just("get"), _KEYS),
        ),
        max_size=60,
    ),
)
def test_native_pending_bases_match_python(
    limit: int,
    counts: dict[int, int],
    ops: list[tuple],  # type: ignore[type-arg]
) -> None:
    nc, pc = _native.DeltaCache(limit), PyDeltaBaseCache(limit)
    native = cache_module.pending_bases(nc, dict(counts))
    python = cache_module.pending_bases(pc, dict(counts))
    assert type(native) is _native.PendingBases
    assert type(python) is PendingBases
    for op in ops:
        if op[0] == "put":
            _, key, t, n = op
            native.put(key, t, bytes([key]) * n)
            python.put(key, t, bytes([key]) * n)
        else:
            assert native.get(op[1]) == python.get(op[1])
        assert _state(nc) == _state(pc)
        assert native.pending == python.pending  # type: ignore[attr-defined]


def test_keys_a_cache_cannot_hold_are_refused() -> None:
    if getattr(_native, "DeltaCache", None) is None:
        pytest.skip("native core not built")
    c = _native.DeltaCache(100)
    with pytest.raises(OverflowError):
        c.put(-1, 1, b"x")
    with pytest.raises(OverflowError):
        c.put(1 << 64, 1, b"x")
    assert -1 not in c and len(c) == 0 and c.size == 0


def _walk(path: Path) -> list[tuple[bytes, int, int, bytes]] | str:
    """Every object of the pack in pack order, or the error's text."""
    pack = PackFile(path, SHA1)
    try:
        return list(pack.iter_objects())
    except GitodbError as e:
        return f"{type(e).__name__}: {e}"
    finally:
        pack.close()


def _damage(path: Path, seed: int) -> None:
    """Overwrite a few bytes inside the pack's entries (not its header or trailer)."""
    rng = random.Random(seed)
    raw = bytearray(path.read_bytes())
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(12, len(raw) - 20)
        raw[at] ^= rng.randint(1, 255)
    path.write_bytes(bytes(raw))


def _three_ways(path: Path) -> tuple[object, object, object]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(compress, "native_inflate", lambda: "zlib")
        c_zlib = _walk(path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(compress, "native_inflate", lambda: None)
        binding = _walk(path)
    with pytest.MonkeyPatch.context() as mp:
        _python_only(mp)
        python = _walk(path)
    return c_zlib, binding, python


@pytest.mark.e2e
@pytest.mark.skipif(
    getattr(_native, "ZLIB_RUNTIME_VERSION", None) is None
    or getattr(_native, "DeltaCache", None) is None,
    reason="native core built without zlib",
)
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 30), damage=st.booleans())
def test_walk_inflates_alike_in_c_through_the_binding_and_in_python(
    tmp_path: Path, seed: int, count: int, damage: bool
) -> None:
    path, expected = _random_pack(tmp_path, seed, count)
    if damage:
        _damage(path, seed)
    c_zlib, binding, python = _three_ways(path)
    assert c_zlib == binding == python
    if not damage:
        assert isinstance(python, list)
        assert {oid: data for oid, _off, _t, data in python} == expected


@pytest.mark.e2e
def test_native_inflate_names_the_chosen_backends_own_library() -> None:
    old = compress.active_backend()
    try:
        for name in compress.available_backends():
            compress.set_backend(name)
            chosen = compress.routing().backend("inflate")
            native_zlib = getattr(_native, "ZLIB_RUNTIME_VERSION", None)
            if chosen.name == "zlib" and chosen.library_version == native_zlib:
                want = "zlib"
            elif chosen.name == "libdeflate":
                want = "libdeflate"
                assert os.path.exists(compress.native_inflate_library())
            else:
                want = None
            assert compress.native_inflate() == want
            if name not in ("zlib", "libdeflate", "auto"):
                assert compress.native_inflate() is None
    finally:
        compress.set_backend(old)


@given(values=st.lists(st.integers(0, 2**64 - 1), max_size=40), sort=st.booleans())
def test_increasing_check_matches_python(values: list[int], sort: bool) -> None:
    from array import array

    from gitodb.pack import reader as reader_module

    a = array("Q", sorted(set(values)) if sort else values)
    want = all(x < y for x, y in zip(a, a[1:], strict=False))
    assert reader_module._increasing(a) is want
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reader_module, "_first_unordered_u64", None)
        assert reader_module._increasing(a) is want


@given(values=st.lists(st.integers(0, 2**32 - 1), max_size=40), count=st.integers(0, 2**32))
def test_rev_range_check_matches_python(values: list[int], count: int) -> None:
    from array import array

    from gitodb.pack import rev as rev_module

    a = array("I", values)
    want = next((i for i, v in enumerate(a) if v >= count), -1)
    assert rev_module._first_out_of_range(a, count) == want
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rev_module, "_first_at_least_u32", None)
        assert rev_module._first_out_of_range(a, count) == want
