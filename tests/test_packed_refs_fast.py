"""The one-pass packed-refs parse gives the reference parse's refs, or declines."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitodb.errors import GitodbError
from gitodb.objects.format import SHA1
from gitodb.refs import files
from gitodb.refs.files import FilesRefStore
from gitodb.refs.packed import parse_plain
from helpers import git

A = "a" * 40
B = "0123456789abcdef" * 2 + "01234567"


def reference(tmp_path: Path, data: bytes) -> dict[str, object] | str:
    """The reference (line by line) parse of ``data``: its refs, or its error message."""
    store = FilesRefStore(tmp_path, SHA1)
    saved = files.parse_plain
    files.parse_plain = lambda data, hexsz: None  # type: ignore[assignment]
    try:
        return dict(store._parse_packed(data, tmp_path / "packed-refs"))  # noqa: SLF001
    except GitodbError as e:
        return str(e)
    finally:
        files.parse_plain = saved


def test_git_written_file_takes_the_fast_parse(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    git("init", "-q", str(repo))
    git("-C", str(repo), "commit", "-q", "--allow-empty", "-m", "x")
    git("-C", str(repo), "tag", "-a", "-m", "t", "v1.0")
    for i in range(50):
        git("-C", str(repo), "branch", f"topic/b-{i}")
    git("-C", str(repo), "pack-refs", "--all")
    data = (repo / ".git" / "packed-refs").read_bytes()
    plain = parse_plain(data, 40)
    assert plain is not None
    assert plain == reference(tmp_path, data)
    assert plain["refs/tags/v1.0"].peeled is not None
    assert len(plain) == 52


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"# pack-refs with: peeled fully-peeled sorted \n",
        f"{A} refs/heads/main\n^{B}\n{B} refs/heads/x\n".encode(),
        f"{A} refs/heads/dup\n{B} refs/heads/dup\n".encode(),
        f"{A} refs/heads/dup\n^{B}\n{B} refs/heads/dup\n".encode(),
        f"{A} refs/heads/a.b/c-d_e@f\n".encode(),
    ],
)
def test_plain_files_parse_alike(tmp_path: Path, data: bytes) -> None:
    plain = parse_plain(data, 40)
    assert plain is not None
    assert plain == reference(tmp_path, data)


@pytest.mark.parametrize(
    "data",
    [
        b"# comment\n",  # a header other than Git's: an error of the reference parse
        f"{A} refs/heads/main".encode(),  # unterminated
        f"^{B}\n".encode(),  # peeled line without a ref
        f"{A} refs/heads/main\n^{B}\n^{B}\n".encode(),
        f"{A.upper()} refs/heads/main\n".encode(),  # upper-case: valid, the reference decides
        f"{A}\trefs/heads/main\n".encode(),
        f"{A} refs/heads/ma..in\n".encode(),
        f"{A} refs/heads/.main\n".encode(),
        f"{A} refs/heads/main.lock\n".encode(),
        f"{A} refs/heads/main.\n".encode(),
        f"{A} refs/heads//main\n".encode(),
        f"{A} refs/heads/m~ain\n".encode(),
        f"{A} refs/heads/m@{{ain\n".encode(),
        f"{A} refs/heads/ma in\n".encode(),
        f"{A} refs/heads/m\u00e4in\n".encode(),
        f"{A} HEAD\n".encode(),
        f"{A} logs/HEAD\n".encode(),
        f"{A[:-1]} refs/heads/main\n".encode(),
        f"{A} refs/heads/main\r\n".encode(),
    ],
)
def test_other_files_go_to_the_reference(tmp_path: Path, data: bytes) -> None:
    assert parse_plain(data, 40) is None


LINE = st.sampled_from(
    [
        f"{A} refs/heads/main\n",
        f"{B} refs/tags/v1\n",
        f"^{B}\n",
        f"{A} refs/x/.y\n",
        f"{A} refs/x/y.lock\n",
        f"{A} refs/x..y\n",
        f"{A.upper()} refs/heads/u\n",
        f"{A} refs/heads/sp ace\n",
        "# pack-refs with: peeled \n",
        f"{A} refs/heads/n",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(LINE, max_size=6), st.text(alphabet="ab./-_@{}~^\n", max_size=12))
def test_never_differs_from_the_reference(lines: list[str], name: str) -> None:
    import tempfile

    data = ("".join(lines) + f"{A} refs/{name}\n").encode()
    plain = parse_plain(data, 40)
    if plain is not None:
        with tempfile.TemporaryDirectory() as d:
            assert plain == reference(Path(d), data)
