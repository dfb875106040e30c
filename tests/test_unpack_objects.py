"""``gitodb unpack-objects`` and the index-pack options of issue 11, against Git."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env, make_pack


def run(cmd: list[str], cwd: Path, stdin: bytes) -> tuple[int, bytes, bytes]:
    p = subprocess.run(
        cmd, cwd=cwd, input=stdin, capture_output=True, env=git_env(), timeout=300, check=False
    )
    return p.returncode, p.stdout, p.stderr


def ours(args: list[str], cwd: Path, stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    return run([sys.executable, "-m", "gitodb", *args], cwd, stdin)


def loose(repo: Path) -> set[str]:
    return {p.parent.name + p.name for p in (repo / ".git/objects").glob("??/*")}


@pytest.fixture(scope="module")
def pack(tmp_path_factory) -> bytes:
    return make_pack(tmp_path_factory.mktemp("p")).read_bytes()  # OFS deltas inside


def _repo(tmp_path: Path, name: str) -> Path:
    r = tmp_path / name
    git("init", "-q", r)
    return r


def test_unpacks_what_git_unpacks(tmp_path, pack):
    mine, theirs = _repo(tmp_path, "mine"), _repo(tmp_path, "theirs")
    assert ours(["unpack-objects"], mine, pack + b"trailing") == (0, b"trailing", b"")
    assert run(["git", "unpack-objects"], theirs, pack)[0] == 0
    assert loose(mine) == loose(theirs) and len(loose(mine)) == 90
    for oid in sorted(loose(mine))[:20]:
        assert (mine / ".git/objects" / oid[:2] / oid[2:]).exists()
        assert git("cat-file", "-p", oid, cwd=mine) == git("cat-file", "-p", oid, cwd=theirs)
    # dry run writes nothing; a second run leaves the objects as they are
    dry = _repo(tmp_path, "dry")
    assert ours(["unpack-objects", "-n"], dry, pack)[0] == 0 and not loose(dry)
    assert ours(["unpack-objects", "-q"], mine, pack)[0] == 0


def test_ref_delta_pack_and_strict(tmp_path):
    src = _repo(tmp_path, "src")
    for i in range(3):
        (src / "f").write_text("".join(f"line {j}\n" for j in range(100 + i)))
        git("add", "f", cwd=src)
        git("commit", "-q", "-m", f"c{i}", cwd=src)
    data = git("pack-objects", "--all", "--stdout", "--no-delta-base-offset", cwd=src, input=b"")
    dst = _repo(tmp_path, "dst")
    assert ours(["unpack-objects", "--strict"], dst, data)[0] == 0
    assert loose(dst) == set(
        git("rev-list", "--objects", "--all", cwd=src).decode().split()[::1]
    ) - {"f"}


@pytest.mark.parametrize("cut, message", [(5, b"fatal: early EOF\n"), (100, b"fatal: early EOF\n")])
def test_short_and_bad_input_like_git(tmp_path, pack, cut, message):
    r = _repo(tmp_path, "r")
    got = ours(["unpack-objects"], r, pack[:cut])
    assert got == (128, b"", message) == run(["git", "unpack-objects"], r, pack[:cut])


def test_checksum_version_and_size_errors_like_git(tmp_path, pack):
    r = _repo(tmp_path, "r")
    bad = pack[:-1] + bytes([pack[-1] ^ 1])
    for data, args in (
        (bad, []),
        (b"PACK\0\0\0\4\0\0\0\0", []),
        (b"PACX\0\0\0\2\0\0\0\0", []),
        (pack, ["--max-input-size=100"]),
    ):
        assert ours(["unpack-objects", "-n", *args], r, data) == run(
            ["git", "unpack-objects", "-n", *args], r, data
        )


def test_index_pack_promisor_and_missing_pack_dir(tmp_path, pack):
    # t5300 'survive missing objects/pack directory'; --promisor[=<msg>] as --keep
    r = _repo(tmp_path, "r")
    (r / ".git/objects/pack").rmdir()
    status, out, err = ours(["index-pack", "--stdin", "--promisor=hello"], r, pack)
    assert (status, err) == (0, b""), err
    name = out.decode().split("\t")[1].strip()
    assert (r / f".git/objects/pack/pack-{name}.promisor").read_bytes() == b"hello\n"
    assert ours(["index-pack", "--promisor", "x.pack"], r) == (
        128,
        b"",
        b"fatal: --promisor cannot be used with a pack name\n",
    )


@pytest.mark.parametrize(
    "limit, shown", [("100", "100 bytes"), ("1k", "1 byte"), ("1500", "1.46 KiB")]
)
def test_index_pack_max_input_size(tmp_path, pack, limit, shown):
    # Git 2.55 reads the leading digits only, and prints the limit (recorded)
    r = _repo(tmp_path, "r")
    got = ours(["index-pack", "--stdin", f"--max-input-size={limit}"], r, pack)
    assert got == (128, b"", f"fatal: pack exceeds maximum allowed size ({shown})\n".encode())
    assert not list((r / ".git/objects/pack").iterdir())
    assert ours(["index-pack", "--stdin", "--max-input-size=abc"], r, pack)[0] == 0


@pytest.mark.parametrize("option", ["--strict", "--fsck-objects"])
def test_index_pack_warns_on_missing_tagger_like_git(tmp_path, option):
    r = _repo(tmp_path, "r")
    blob = git("hash-object", "-w", "--stdin", cwd=r, input=b"x\n").strip()
    tag = git(
        "hash-object",
        "-t",
        "tag",
        "-w",
        "--stdin",
        "--literally",
        cwd=r,
        input=b"object %s\ntype blob\ntag mytag\n\nThis is an invalid tag.\n" % blob,
    ).strip()
    name = git("pack-objects", "tt", cwd=r, input=tag + b"\n" + blob + b"\n").strip().decode()
    pack = f"tt-{name}.pack"
    (r / f"tt-{name}.idx").unlink()
    mine = ours(["index-pack", option, pack], r)
    (r / f"tt-{name}.idx").unlink()
    assert mine == run(["git", "index-pack", option, pack], r, b"")
    assert b"missingTaggerEntry" in mine[2]


EMPTY_TREE = b"4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def _raw_pack(entries: list[tuple[int, bytes]]) -> bytes:
    """A pack of whole objects in the order given (Git writes commits first)."""
    import hashlib
    import struct
    import zlib

    out = bytearray(b"PACK" + struct.pack(">II", 2, len(entries)))
    for type_num, data in entries:
        size = len(data)
        byte = (type_num << 4) | (size & 15)
        size >>= 4
        while size:
            out.append(byte | 0x80)
            byte, size = size & 0x7F, size >> 7
        out.append(byte)
        out += zlib.compress(data)
    return bytes(out + hashlib.sha1(out).digest())


def _strict_both(tmp_path: Path, data: bytes, *args: str) -> tuple[tuple, tuple]:
    """unpack-objects --strict by gitodb and by git, each into a new repository."""
    mine, theirs = _repo(tmp_path, "mine"), _repo(tmp_path, "theirs")
    got = ours(["unpack-objects", "--strict", *args], mine, data)
    want = run(["git", "unpack-objects", "--strict", *args], theirs, data)
    return (got, loose(mine)), (want, loose(theirs))


def test_strict_checks_gitmodules_of_an_oddly_ordered_pack(tmp_path):
    # t7450 13: the .gitmodules blob comes before the tree naming it
    blob = b'[submodule "../../x"]\n\tpath = x\n\turl = https://example.com/x\n'
    blob_id = bytes.fromhex(git("hash-object", "--stdin", input=blob).decode().strip())
    tree = b"100644 .gitmodules\0" + blob_id
    tree_id = git("hash-object", "-t", "tree", "--stdin", input=tree).decode().strip()
    commit = b"tree %s\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\nodd\n" % (
        tree_id.encode()
    )
    data = _raw_pack([(3, blob), (2, tree), (1, commit)])
    mine, theirs = _strict_both(tmp_path, data)
    assert mine == theirs
    assert mine[0][0] == 128 and b"gitmodulesName" in mine[0][2]


def test_strict_refuses_a_missing_link_and_keeps_only_the_blobs(tmp_path):
    src = _repo(tmp_path, "src")
    blob = git("hash-object", "-w", "--stdin", cwd=src, input=b"x\n").strip()
    tree = git("mktree", cwd=src, input=b"100644 blob %s\tf\n" % blob).strip()
    other = git("hash-object", "-w", "--stdin", cwd=src, input=b"y\n").strip()
    commit = git("commit-tree", "-m", "m", tree, cwd=src).strip()
    # the pack lacks the tree the commit names
    data = git("pack-objects", "--stdout", cwd=src, input=commit + b"\n" + other + b"\n")
    mine, theirs = _strict_both(tmp_path, data)
    assert mine == theirs
    assert mine[0][2] == b"fatal: object of unexpected type\n"
    assert mine[1] == {other.decode()}  # the commit was not written


def test_strict_fsck_messages_and_severities_like_git(tmp_path):
    blob = b"x\n"
    blob_id = git("hash-object", "--stdin", input=blob).strip()
    tag = b"object %s\ntype blob\ntag t\n\nno tagger\n" % blob_id
    data = _raw_pack([(4, tag), (3, blob)])
    mine, theirs = _strict_both(tmp_path, data)
    assert mine == theirs and b"missingTaggerEntry" in mine[0][2]
    mine, theirs = _strict_both(tmp_path, data, "--strict=missingTaggerEntry=ignore")
    assert mine == theirs and mine[0][0] == 0 and len(mine[1]) == 2


_BLOB = b"x\n"
_BLOB_ID = b"587be6b4c3f93f93c489c0111bba5596147a26cb"
_TREE_NAMING_BLOB_AS_TREE = b"40000 d\0" + bytes.fromhex(_BLOB_ID.decode())
_PERSON = b"A <a@b> 1 +0000"


def _commit(head: bytes) -> bytes:
    return head + b"author %s\ncommitter %s\n\nm\n" % (_PERSON, _PERSON)


def _tag(target: bytes, type_name: bytes) -> bytes:
    return b"object %s\ntype %s\ntag t\ntagger %s\n\nm\n" % (target, type_name, _PERSON)


@pytest.mark.parametrize(
    "entries",
    [
        [(3, _BLOB), (4, _tag(_BLOB_ID, b"commit"))],  # a tag naming a blob as a commit
        [(4, _tag(_BLOB_ID, b"commit")), (3, _BLOB)],  # ... the other way round
        [(4, _tag(_BLOB_ID, b"bogus")), (3, _BLOB)],  # an unknown tag type
        [(2, _TREE_NAMING_BLOB_AS_TREE), (3, _BLOB)],  # found when the tree is walked
        [(3, _BLOB), (1, _commit(b"tree %s\n" % _BLOB_ID))],
        [(3, _BLOB), (1, _commit(b"tree %s\nparent %s\n" % (EMPTY_TREE, _BLOB_ID)))],
        [(1, _commit(b""))],  # no tree line: a bogus commit
    ],
    ids=["blob-then-tag", "tag-then-blob", "tag-type", "tree", "commit-tree", "parent", "bogus"],
)
def test_strict_keeps_one_table_of_types_like_git(tmp_path, entries):
    # Git parses each commit and tag as it arrives, looking up what it names as the
    # type it is named as; an id met as two types is refused
    mine, theirs = _strict_both(tmp_path, _raw_pack(entries))
    assert mine == theirs
    assert mine[0][0] == 128 and mine[0][2].startswith(b"error: ")
