"""``working-tree-encoding``: hash-object and cat-file --filters against ``git``, and
the encoding rules on random input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitodb.objects.wtencoding import (
    EncodingError,
    attribute_encoding,
    encode_to_git,
    encode_to_worktree,
    same_encoding,
)
from helpers import git_env

TEXT = "hallo there!\ncan you read me? ÄÖÜ\n"
FILES = {
    "a.utf16": b"\xff\xfe" + TEXT.encode("utf-16-le"),
    "nobom.utf16": TEXT.encode("utf-16-be"),
    "bom.utf16le": b"\xff\xfe" + TEXT.encode("utf-16-le"),
    "a.utf16le": TEXT.encode("utf-16-le"),
    "a.utf32": b"\xff\xfe\0\0" + TEXT.encode("utf-32-le"),
    "a.lebom": b"\xff\xfe" + TEXT.encode("utf-16-le"),
    "a.latin1": TEXT.encode("latin-1"),
    "a.sjis": "日本語\n".encode("shift_jis"),
    "bad.sjis": b"\x81\x00\n",
    "a.bogus": b"x\n",
    "empty.utf16": b"",
}
ATTRS = """\
*.utf16 text working-tree-encoding=utf-16
*.utf16le working-tree-encoding=UTF16LE
*.utf32 working-tree-encoding=UTF-32
*.lebom working-tree-encoding=UTF-16LE-BOM
*.latin1 working-tree-encoding=ISO-8859-1
*.sjis working-tree-encoding=SHIFT-JIS
*.bogus working-tree-encoding=NO-SUCH-ENCODING
"""


def _env(tmp: Path) -> dict[str, str]:
    env = git_env()
    env["XDG_CONFIG_HOME"] = str(tmp / "xdg")
    env["GIT_ATTR_NOSYSTEM"] = "1"
    return env


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("enc") / "r"
    subprocess.run(["git", "init", "-q", str(r)], check=True, env=_env(r.parent))
    subprocess.run(["git", "config", "core.eol", "lf"], cwd=r, check=True)
    (r / ".gitattributes").write_text(ATTRS)
    for name, data in FILES.items():
        (r / name).write_bytes(data)
    return r


def _both(r: Path, args: list[str]) -> tuple:
    out = []
    for cmd in ([sys.executable, "-m", "gitodb"], ["git"]):
        p = subprocess.run([*cmd, *args], cwd=r, capture_output=True, env=_env(r.parent))
        out.append((p.returncode, p.stdout, p.stderr))
    assert out[0] == out[1], (args, out)
    return out[0]


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(FILES))
@pytest.mark.parametrize("write", [False, True])
def test_hash_object_encodes_like_git(work: Path, name: str, write: bool) -> None:
    _both(work, ["hash-object", *(["-w"] if write else []), name])


@pytest.mark.e2e
@pytest.mark.parametrize("path", ["x.utf16", "x.utf16le", "x.utf32", "x.lebom", "x.latin1"])
def test_cat_file_filters_encodes_like_git(work: Path, path: str) -> None:
    p = subprocess.run(
        ["git", "hash-object", "-w", "--no-filters", "--stdin"],
        cwd=work,
        input=TEXT.encode(),
        capture_output=True,
        check=True,
    )
    blob = p.stdout.decode().strip()
    got = _both(work, ["cat-file", "--filters", f"--path={path}", blob])
    assert got[0] == 0 and got[1] != TEXT.encode()


@pytest.mark.e2e
def test_round_trip_check_for_listed_encodings(work: Path) -> None:
    # latin-1 converts back unchanged, but listing it must still pass; a file that
    # does not decode is refused when written
    _both(work, ["-c", "core.checkRoundtripEncoding=ISO-8859-1", "hash-object", "-w", "a.latin1"])
    status = _both(work, ["hash-object", "-w", "bad.sjis"])[0]
    assert status == 128


def test_encoding_names_and_attribute_values() -> None:
    assert same_encoding("utf-8", "UTF8") and same_encoding("UTF16LE", "utf-16le")
    assert not same_encoding("UTF-16", "UTF-16LE") and same_encoding("latin1", "LATIN1")
    assert attribute_encoding("UTF-8") is None and attribute_encoding(None) is None
    assert attribute_encoding("utf-16") == "utf-16"
    with pytest.raises(EncodingError, match="true/false"):
        attribute_encoding(True)


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=40),
    st.sampled_from(["UTF-16", "UTF-16LE", "UTF-32BE", "UTF-16LE-BOM", "SHIFT-JIS", "latin1", "x"]),
    st.booleans(),
)
def test_random_content_converts_or_fails_typed(data: bytes, enc: str, write: bool) -> None:
    said: list[str] = []
    try:
        out = encode_to_git("p", data, enc, write=write, say=said.append)
    except EncodingError:
        assert write
        return
    assert out == data or not said
    back = encode_to_worktree("p", out, enc, say=said.append)
    assert isinstance(back, bytes)
