"""for-each-ref's native path (``_native.pack_headers``, ``_native.format_refs``).

Against git on files and reftable refs (every object type, tag chains, OFS and
REF deltas, loose objects, symrefs), against the Python formatter on generated
refs and formats (hypothesis), and the header table against the pack reader on
every object of a pack.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitodb.objects.header import TYPE_NUMBERS
from gitodb.pack.entry import parse_entry_header
from gitodb.repo import Repository
from gitodb.repo.refformat import RefFilter, render
from gitodb.repo.refformat.native import available as native_available
from helpers import commit_at, git, git_env, run_cli, run_gitodb

pytestmark = pytest.mark.skipif(not native_available(), reason="built without the native core")

# Git before 2.45 peels a tag of a tag only once for %(*objectname); the reference Git
# (2.55, in ../shared when present) peels fully, as gitodb does: with the older Git
# only, the fixtures have no tag of a tag (the differential test still has one).
GIT_255 = Path(__file__).resolve().parents[2] / "shared" / "git-2.55" / "git" / "bin" / "git"


def reference_git(path: Path, *args: str) -> bytes:
    """``git -C path args`` with the reference Git when it is here, else git on PATH."""
    if not GIT_255.exists():
        return git("-C", str(path), *args)
    return subprocess.run(
        [str(GIT_255), "-C", str(path), *args], capture_output=True, env=git_env(), check=True
    ).stdout


FORMATS = [
    "%(objectname) %(objecttype)\t%(refname)",
    "%(refname) %(objectname) %(objecttype)",
    "%(objectsize) %(refname)",
    "%(refname) %(*objectname) %(*objecttype) %(*objectsize)",
    "[%(objecttype)|%(*objecttype)]%%%00%(objectsize)%x09",
]


def _build(path: Path, *config: str) -> Path:
    git("init", "-q", str(path))
    for i in range(12):
        # similar contents over many commits: the repack makes deltas of them
        (path / "f").write_text("".join(f"line {j}\n" for j in range(200)) + f"{i}\n" * i)
        (path / f"g{i % 3}").write_text(f"{i}\n" * 50)
        git("-C", str(path), "add", "-A")
        commit_at(path, f"commit {i}\n\nbody {i}", i)
        if i % 4 == 0:
            git("-C", str(path), "tag", "-a", "-m", f"tag {i}", f"v{i}")
            git("-C", str(path), "branch", f"topic/{i}")
    tree = git("-C", str(path), "rev-parse", "HEAD^{tree}").decode().strip()
    blob = git("-C", str(path), "rev-parse", "HEAD:f").decode().strip()
    if GIT_255.exists():
        git("-C", str(path), "tag", "-a", "-m", "of a tag", "chain", "v8")  # tag of a tag
    git("-C", str(path), "tag", "-a", "-m", "of a tree", "treetag", tree)
    git("-C", str(path), "tag", "-a", "-m", "of a blob", "blobtag", blob)
    git("-C", str(path), "tag", "light", "v4")  # a lightweight tag naming a tag object
    git("-C", str(path), "update-ref", "refs/misc/tree", tree)
    git("-C", str(path), "update-ref", "refs/misc/blob", blob)
    git("-C", str(path), "symbolic-ref", "refs/remotes/origin/HEAD", "refs/heads/topic/4")
    git("-C", str(path), *config, "repack", "-a", "-d", "-f", "--depth=20", "--window=20", "-q")
    git("-C", str(path), "pack-refs", "--all")
    # after the repack: a loose commit and a loose ref to it
    (path / "f").write_text("loose\n")
    git("-C", str(path), "add", "-A")
    commit_at(path, "loose", 50)
    git("-C", str(path), "branch", "loose-branch")
    return path


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("native")
    ofs = _build(base / "ofs")
    ref = _build(base / "ref", "-c", "repack.useDeltaBaseOffset=false")  # REF_DELTA entries
    table = base / "reftable"
    shutil.copytree(ofs, table)
    proc = run_gitodb("refs", "migrate", "--ref-format=reftable", cwd=table)
    assert proc.returncode == 0, proc.stderr
    return {"ofs": ofs, "ref": ref, "reftable": table}


def test_fixture_has_deltas(repos: dict[str, Path]) -> None:
    for name, want in (("ofs", 6), ("ref", 7)):
        (pack,) = Repository(repos[name]).odb.packs
        kinds = {
            parse_entry_header(pack.buf, pack.idx.offset_at(i))[0] for i in range(pack.idx.count)
        }
        assert want in kinds, (name, kinds)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("extra", [[], ["--sort=-refname"], ["--count=5"], ["refs/tags/"]])
@pytest.mark.parametrize("which", ["ofs", "ref", "reftable"])
def test_native_formats_match_git(
    repos: dict[str, Path],
    capfdbinary: pytest.CaptureFixture[bytes],
    which: str,
    fmt: str,
    extra: list[str],
) -> None:
    # the reftable copy has the refs of "ofs": git on PATH (files) gives its bytes
    expected = reference_git(
        repos["ref" if which == "ref" else "ofs"], "for-each-ref", f"--format={fmt}", *extra
    )
    assert Formatter_plan(repos[which], fmt) is not None
    capfdbinary.readouterr()
    assert run_cli(repos[which], "for-each-ref", f"--format={fmt}", *extra) == 0
    assert capfdbinary.readouterr().out == expected


def Formatter_plan(path: Path, fmt: str) -> object:  # noqa: N802 - reads as the attribute
    from gitodb.repo.refformat import Formatter

    return Formatter(Repository(path), fmt).native_plan


@pytest.mark.skipif(not GIT_255.exists(), reason="--omit-empty is Git 2.42+: ../shared/git-2.55")
def test_omit_empty_matches_git(
    repos: dict[str, Path], capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    args = ["--omit-empty", "--format=%(*objectname)"]
    expected = reference_git(repos["ofs"], "for-each-ref", *args)
    assert expected.count(b"\n") < len(git("-C", str(repos["ofs"]), "for-each-ref").splitlines())
    for which in ("ofs", "reftable"):
        capfdbinary.readouterr()
        assert run_cli(repos[which], "for-each-ref", *args) == 0
        assert capfdbinary.readouterr().out == expected


def test_header_table_matches_the_pack_reader(repos: dict[str, Path]) -> None:
    for name in ("ofs", "ref"):
        repo = Repository(repos[name])
        odb = repo.odb
        (pack,) = odb.packs
        oids = [pack.idx.oid_at(i) for i in range(pack.idx.count)]
        loose = bytes.fromhex(git("-C", str(repos[name]), "rev-parse", "HEAD").decode().strip())
        missing = b"\x01" * 20
        table = odb.read_header_table([*oids, loose, missing, b"short"])
        assert table is not None
        types, sizes = table
        got = memoryview(sizes).cast("Q")
        for i, oid in enumerate(oids):
            t, size = pack.header_at(pack.idx.offset_at(pack.idx.find(oid)))
            assert (types[i], got[i]) == (t, size), oid.hex()
        assert types[-3:] == b"\0\0\0"  # loose, missing, malformed: read_header decides


def test_damaged_entry_is_left_to_python(tmp_path: Path, repos: dict[str, Path]) -> None:
    path = tmp_path / "r"
    shutil.copytree(repos["ofs"], path)
    packfile = next((path / ".git" / "objects" / "pack").glob("*.pack"))
    repo = Repository(path)
    (pack,) = repo.odb.packs
    # the entry of a delta: its header byte becomes the reserved type 5
    i = next(
        i
        for i in range(pack.idx.count)
        if parse_entry_header(pack.buf, pack.idx.offset_at(i))[0] == 6
    )
    oid, off = pack.idx.oid_at(i), pack.idx.offset_at(i)
    repo.close()
    packfile.chmod(0o644)
    data = bytearray(packfile.read_bytes())
    data[off] = (data[off] & 0x8F) | (5 << 4)
    packfile.write_bytes(bytes(data))
    table = Repository(path).odb.read_header_table([oid])
    assert table is not None and table[0] == b"\0"


def test_missing_object_prints_nothing_as_git(tmp_path: Path) -> None:
    # Git computes every ref's atoms when it sorts, so it dies before the first line
    path = tmp_path / "r"
    git("init", "-q", str(path))
    commit_at(path, "one", 1)
    head = git("-C", str(path), "rev-parse", "HEAD").decode().strip()
    packed = "# pack-refs with: peeled fully-peeled sorted \n"
    packed += f"{head} refs/heads/a\n{'1' * 40} refs/heads/b\n{head} refs/heads/c\n"
    (path / ".git" / "packed-refs").write_text(packed)
    for fmt in ("%(refname) %(objecttype)", "%(refname) %(*objectname)", "%(subject)"):
        want = git("-C", str(path), "for-each-ref", f"--format={fmt}", check=False)
        proc = run_gitodb("for-each-ref", f"--format={fmt}", cwd=path)
        assert proc.stdout == want == b""
        assert proc.returncode == 128
        assert proc.stderr == f"fatal: missing object {'1' * 40} for refs/heads/b\n".encode()


# -- native against the Python formatter, on generated refs and formats -------------------

_ATOMS = [
    "%(refname)",
    "%(objectname)",
    "%(objecttype)",
    "%(objectsize)",
    "%(*objectname)",
    "%(*objecttype)",
    "%(*objectsize)",
]
_PIECES = st.one_of(
    st.sampled_from(_ATOMS),
    st.sampled_from([" ", "\t", "%%", "%00", "x", "é", "%(", "::"]),
)
_COMPONENT = st.text(alphabet="abcXYZ019-_.é", min_size=1, max_size=6).filter(
    lambda c: not c.startswith(".") and ".." not in c and not c.endswith(".lock")
)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory, repos: dict[str, Path]) -> Path:
    path = tmp_path_factory.mktemp("scratch") / "r"
    shutil.copytree(repos["ref"], path)
    git("-C", str(path), "tag", "-a", "-m", "of a tag", "chain2", "v8")  # a tag of a tag
    # its id, kept for the test (the refs are replaced by each example's)
    (path / ".git" / "chain-id").write_bytes(git("-C", str(path), "rev-parse", "chain2").strip())
    shutil.rmtree(path / ".git" / "refs")
    (path / ".git" / "refs").mkdir()
    return path


_OBJECTS: list[bytes] = []


def _objects(path: Path) -> list[bytes]:
    """Some ids of every type, each ref's target among them (computed once)."""
    if not _OBJECTS:
        listed = git("-C", str(path), "rev-list", "--objects", "--all").split()
        _OBJECTS.extend(
            sorted(
                {x for x in listed if len(x) == 40}
                | set(git("-C", str(path), "for-each-ref", "--format=%(objectname)").split())
            )
        )
    return _OBJECTS


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_native_equals_python(scratch: Path, repos: dict[str, Path], data: st.DataObject) -> None:
    objects = [*_objects(repos["ref"]), (scratch / ".git" / "chain-id").read_bytes()]
    names = data.draw(
        st.lists(
            st.lists(_COMPONENT, min_size=1, max_size=3).map(
                lambda parts: "refs/" + "/".join(parts)
            ),
            min_size=0,
            max_size=25,
            unique=True,
        )
    )
    # no ref may be a directory of another
    names = [n for n in names if not any(o.startswith(n + "/") for o in names)]
    lines = [f"{data.draw(st.sampled_from(objects)).decode()} {n}\n" for n in names]
    packed = "# pack-refs with: peeled fully-peeled sorted \n" + "".join(
        sorted(lines, key=lambda line: line.split(" ", 1)[1].encode())
    )
    (scratch / ".git" / "packed-refs").write_bytes(packed.encode())
    fmt = "".join(data.draw(st.lists(_PIECES, min_size=1, max_size=8)))
    sort = data.draw(st.sampled_from([None, ["-refname"], ["objecttype"], ["-objectsize"]]))
    count = data.draw(st.integers(0, 4))
    omit_empty = data.draw(st.booleans())
    patterns = data.draw(st.sampled_from([[], ["refs/a"], ["refs/*"], ["refs/b*/"]]))
    outs = []
    for native in (True, False):
        try:
            got = b"".join(
                render(
                    Repository(scratch),
                    fmt,
                    RefFilter(patterns=list(patterns)),
                    sort=sort,
                    count=count,
                    omit_empty=omit_empty,
                    native=native,
                )
            )
        except Exception as e:  # the same error both ways
            got = repr(e).encode()
        outs.append(got)
    assert outs[0] == outs[1]


def test_type_numbers_are_the_natives() -> None:
    # refformat.c prints type_names[1..4]; the Python side hands it these numbers
    assert TYPE_NUMBERS == {"commit": 1, "tree": 2, "blob": 3, "tag": 4}


@pytest.mark.parametrize("which", ["ofs", "reftable"])
def test_without_the_native_core_the_python_paths_print_the_same(
    repos: dict[str, Path],
    capfdbinary: pytest.CaptureFixture[bytes],
    monkeypatch: pytest.MonkeyPatch,
    which: str,
) -> None:
    from gitodb.refs import packed
    from gitodb.reftable import reader
    from gitodb.repo import odb
    from gitodb.repo.refformat import native

    fmt = "--format=%(objectname) %(objecttype) %(objectsize) %(*objectname) %(refname)"
    capfdbinary.readouterr()
    assert run_cli(repos[which], "for-each-ref", fmt) == 0
    with_native = capfdbinary.readouterr().out
    monkeypatch.setattr(native, "_format_refs", None)
    monkeypatch.setattr(odb, "_pack_headers", None)
    monkeypatch.setattr(packed, "_packed_refs_plain", None)
    monkeypatch.setattr(reader, "_ref_block_records", None)
    assert Formatter_plan(repos[which], fmt[len("--format=") :]) is None
    assert Repository(repos[which]).odb.read_header_table([b"\0" * 20]) is None
    assert run_cli(repos[which], "for-each-ref", fmt) == 0
    assert (
        capfdbinary.readouterr().out
        == with_native
        == reference_git(repos["ofs"], "for-each-ref", fmt)
    )
