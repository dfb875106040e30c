"""zlib errors in Git's words (``inflate: <status> (<zlib's message>)``), on every backend.

Git 2.55's t1006 "object reading handles zlib dictionary": a loose object whose
stream asks for a preset dictionary is reported as ``inflate: needs dictionary``.
Git 2.39 (on PATH) dies with a BUG there, so the expected lines are Git 2.55's.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitodb import compress
from gitodb.compress import backends
from gitodb.errors import CompressionError
from helpers import git, run_cli

INSTALLED = [n for n in backends.BACKENDS if backends.load(n) is not None]
# zlib header with FDICT set, then the dictionary's Adler-32 (t1006's bytes)
NEEDS_DICT = b"\170\273\017\112\003\143"


@pytest.fixture(autouse=True)
def _restore_backend():
    yield
    compress.set_backend(None)


@pytest.mark.parametrize("name", INSTALLED)
def test_inflate_error_names_zlib_status(name: str) -> None:
    compress.set_backend(name)
    with pytest.raises(CompressionError) as info:
        compress.inflate(b"abcdef", 10)
    if name != "libdeflate":  # libdeflate tells no status apart
        assert info.value.message.startswith("inflate: data stream error (")
    with pytest.raises(CompressionError) as info:
        compress.inflate(NEEDS_DICT, 10)
    if name != "libdeflate":
        assert info.value.message == "inflate: needs dictionary (no message)"


@pytest.mark.e2e
@pytest.mark.parametrize("name", INSTALLED)
def test_loose_object_needing_dictionary(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], name: str
) -> None:
    git("init", "-q", str(tmp_path))
    (tmp_path / "file").write_bytes(b"content that will be recompressed\n")
    blob = git("hash-object", "-w", "file", cwd=tmp_path).decode().strip()
    objpath = tmp_path / ".git" / "objects" / blob[:2] / blob[2:]
    os.chmod(objpath, 0o644)
    objpath.write_bytes(NEEDS_DICT)
    compress.set_backend(name)
    capfd.readouterr()
    assert run_cli(tmp_path, "cat-file", "blob", blob) == 128
    err = capfd.readouterr().err
    assert err == (
        "error: inflate: needs dictionary (no message)\n"
        f"error: unable to unpack {blob} header\n"
        f"fatal: loose object {blob} (stored in .git/objects/{blob[:2]}/{blob[2:]}) is corrupt\n"
    )
