"""Property tests: ``unpack_objects`` on damaged packs, with and without ``strict``.

Only gitodb's own errors may come out (the CLI turns them into one ``fatal:``
line), whatever byte of the pack is changed or however it is cut.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitodb.errors import GitodbError
from gitodb.repo import Repository
from helpers import git
from test_unpack_objects import _commit, _raw_pack, _tag

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_TMP = tempfile.TemporaryDirectory(prefix="gitodb-unpack-fuzz-")
_REPO = Path(_TMP.name) / "r"
git("init", "-q", "--bare", _REPO)
_BLOB = b'[submodule "x"]\n\tpath = x\n\turl = https://example.com/x\n'
_BLOB_ID = git("hash-object", "--stdin", input=_BLOB).strip()
_TREE = b"100644 .gitmodules\0" + bytes.fromhex(_BLOB_ID.decode())
_TREE_ID = git("hash-object", "-t", "tree", "--stdin", input=_TREE).strip()
_COMMIT = _commit(b"tree %s\n" % _TREE_ID)
_COMMIT_ID = git("hash-object", "-t", "commit", "--stdin", input=_COMMIT).strip()
PACK = _raw_pack([(3, _BLOB), (2, _TREE), (1, _COMMIT), (4, _tag(_COMMIT_ID, b"commit"))])


def _unpack(data: bytes, strict: bool) -> None:
    from gitodb.repo.unpack import unpack_objects

    with Repository(_REPO) as repo:
        try:
            unpack_objects(repo, data, dry_run=True, strict=strict)
        except GitodbError:
            pass


def test_the_pack_is_good() -> None:
    from gitodb.repo.unpack import unpack_objects

    with Repository(_REPO) as repo:
        assert len(unpack_objects(repo, PACK, dry_run=True, strict=True).written) == 4


@FUZZ
@given(st.integers(0, len(PACK) - 1), st.integers(0, 255), st.booleans())
def test_one_changed_byte(pos: int, value: int, strict: bool) -> None:
    data = bytearray(PACK)
    data[pos] = value
    _unpack(bytes(data), strict)


@FUZZ
@given(st.integers(0, len(PACK)), st.binary(max_size=30), st.booleans())
def test_cut_and_extended(cut: int, tail: bytes, strict: bool) -> None:
    _unpack(PACK[:cut] + tail, strict)
