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
from gitodb.refs.packed import find, parse_plain, searchable, with_prefix
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


# -- point lookups: a bisection of the file where Git searches it -------------------

HEADER = b"# pack-refs with: peeled fully-peeled sorted \n"


def _names_around(names: list[str]) -> set[str]:
    """Every name, and names just before, after and between them."""
    out = set(names) | {"refs/", "refs/HEAD", "refs/zzz", "refs/heads/HEAD"}
    for n in names:
        out |= {n + "a", n + "/", n + "~", n[:-1], n + "/x"}
    return out


def test_find_agrees_with_the_parse(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    git("init", "-q", str(repo))
    git("-C", str(repo), "commit", "-q", "--allow-empty", "-m", "x")
    for i in range(40):
        git("-C", str(repo), "tag", "-a", "-m", "t", f"v{i}")  # peeled lines
        git("-C", str(repo), "branch", f"topic/{i}/b")
    git("-C", str(repo), "pack-refs", "--all")
    data = (repo / ".git" / "packed-refs").read_bytes()
    assert searchable(data, 40)
    refs = parse_plain(data, 40)
    assert refs is not None and len(refs) == 81
    for name in _names_around(list(refs)):
        assert find(data, 40, name) == refs.get(name), name
        for prefix in (name, name[:-1], name[:-3], name[:7]):
            expected = {n: r for n, r in refs.items() if n.startswith(prefix)}
            assert with_prefix(data, 40, prefix) == expected, prefix


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab/-_", min_size=1, max_size=6), max_size=30), st.data())
def test_find_never_differs_from_the_parse(tails: list[str], draw: st.DataObject) -> None:
    names = sorted({f"refs/{t}" for t in tails}, key=str.encode)
    lines = []
    for n in names:
        lines.append(f"{A} {n}\n")
        if draw.draw(st.booleans()):
            lines.append(f"^{B}\n")
    data = HEADER + "".join(lines).encode()
    refs = parse_plain(data, 40)
    if refs is None or not searchable(data, 40):
        return
    for name in _names_around(names):
        assert find(data, 40, name) == refs.get(name), name
        for prefix in (name, name[:-1]):
            expected = {n: r for n, r in refs.items() if n.startswith(prefix)}
            assert with_prefix(data, 40, prefix) == expected, prefix


@pytest.mark.parametrize(
    "data",
    [
        f"{A} refs/heads/main\n".encode(),  # no header: Git sorts the file, we parse it
        b"# pack-refs with: peeled \n" + f"{A} refs/heads/main\n".encode(),  # not sorted
        HEADER + f"{A} refs/heads/main\n\n".encode(),  # a line the parse refuses
        HEADER + f"{A} refs/heads/ma..in\n".encode(),  # one for the reference parse
        HEADER + f"{A} refs/heads/main\n{A} refs/x".encode(),
    ],
)
def test_find_declines_what_git_would_not_search(data: bytes) -> None:
    assert not searchable(data, 40)


def test_read_searches_the_file_without_parsing_every_ref(tmp_path: Path) -> None:
    store = FilesRefStore(tmp_path, SHA1)
    body = "".join(f"{A} refs/heads/b{i:03d}\n" for i in range(300))
    (tmp_path / "packed-refs").write_bytes(
        HEADER + body.encode() + f"{B} refs/tags/t\n^{A}\n".encode()
    )
    ref = store.read("refs/heads/b123")
    assert ref is not None and ref.oid == bytes.fromhex(A)
    tag = store.read("refs/tags/t")
    assert tag is not None and tag.peeled == bytes.fromhex(A)
    assert store.read("refs/heads/b3000") is None
    assert [r.name for r in store.iter_refs("refs/tags/")] == ["refs/tags/t"]
    assert [r.name for r in store.iter_refs("refs/heads/b29")] == [
        f"refs/heads/b{i}" for i in range(290, 300)
    ]
    assert list(store.iter_refs("refs/replace/")) == []
    assert store._packed_cache is None  # noqa: SLF001  (no dict of every ref was built)
    # the file changed: read again, and the iteration builds the dict as before
    (tmp_path / "packed-refs").write_bytes(HEADER + f"{B} refs/heads/b123\n".encode())
    ref = store.read("refs/heads/b123")
    assert ref is not None and ref.oid == bytes.fromhex(B)
    assert [r.name for r in store.iter_refs()] == ["refs/heads/b123"]
    assert store._packed_cache is not None  # noqa: SLF001


def test_read_of_an_unsorted_file_parses_it(tmp_path: Path) -> None:
    store = FilesRefStore(tmp_path, SHA1)
    # Without the "sorted" trait Git sorts the file: a bisection would miss "a".
    (tmp_path / "packed-refs").write_bytes(
        f"# pack-refs with: peeled \n{A} refs/heads/z\n{B} refs/heads/a\n".encode()
    )
    ref = store.read("refs/heads/a")
    assert ref is not None and ref.oid == bytes.fromhex(B)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(LINE, max_size=6),
    st.text(alphabet="ab./-_@{}~^\n", max_size=12),
    st.sampled_from(["a.lock", "a.", ".a", "a..b", "a//b", "a/", "a./b", "a.b/c.d", "b"]),
)
def test_searchable_only_where_the_plain_parse_accepts(
    lines: list[str], name: str, last: str
) -> None:
    data = HEADER + ("".join(lines) + f"{A} refs/{name}\n{A} refs/{last}\n").encode()
    if searchable(data, 40):
        assert parse_plain(data, 40) is not None
    elif parse_plain(data, 40) is not None and data.isascii():
        pytest.fail("a file the plain parse accepts should be searchable")
