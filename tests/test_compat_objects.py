"""extensions.compatObjectFormat: objects written with their second id, read by either id.

The oracle for the compatibility ids is the `git` on PATH in a repository of the
other format: the compatibility id of an object is the id the same object has
there (its content with every named id in that format).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitodb.loose.objmap import HEADER, LooseObjectMap
from gitodb.objects.convert import ObjectConvertError, convert_object
from gitodb.objects.format import SHA1, SHA256
from helpers import git, git_env


def gitodb(*args: str, cwd: Path, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gitodb", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        env=git_env(),
        timeout=300,
        check=False,
    )


def _ok(*args: str, cwd: Path, input: bytes | None = None) -> bytes:
    p = gitodb(*args, cwd=cwd, input=input)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _compat_repo(tmp_path: Path, main: str = "sha1", compat: str = "sha256") -> Path:
    repo = tmp_path / f"compat-{main}"
    git("init", "-q", f"--object-format={main}", repo)
    git("config", "core.repositoryformatversion", "1", cwd=repo)
    git("config", "extensions.objectformat", main, cwd=repo)
    # written by hand: the git on PATH may not know this extension
    with open(repo / ".git/config", "a") as f:
        f.write(f"[extensions]\n\tcompatobjectformat = {compat}\n")
    return repo


TAG = (
    b"object %s\ntype blob\ntag hellotag\ntagger C O Mitter <c@example.com> 0 +0000\n"
    b"\nThis is a tag"
)


def _build(tmp_path: Path, main: str, compat: str) -> dict[str, tuple[str, str]]:
    """Blob, tree, commit and tag written by gitodb in a compat repository and by git
    in a plain repository of the compatibility format: name -> (compat id, git's id)."""
    repo = _compat_repo(tmp_path, main, compat)
    other = tmp_path / f"plain-{compat}"
    git("init", "-q", f"--object-format={compat}", other)
    out = {}
    for where, run in ((repo, _ok), (other, None)):

        def h(*args: str, data: bytes, where: Path = where, run=run) -> str:
            if run is None:
                return git("hash-object", *args, "--stdin", cwd=where, input=data).decode().strip()
            return run("hash-object", *args, "--stdin", cwd=where, input=data).decode().strip()

        blob = h("-w", data=b"Hello World")
        tree = h(
            "-w",
            "-t",
            "tree",
            data=b"100644 hello\0"
            + bytes.fromhex(blob)
            + b"100755 path with spaces\0"
            + bytes.fromhex(blob),
        )
        commit = h(
            "-w",
            "-t",
            "commit",
            data=b"tree %s\nauthor A <a@b> 1 +0000\n"
            b"committer C <c@d> 2 +0000\n\nInitial commit\n" % tree.encode(),
        )
        tag = h("-w", "-t", "tag", data=TAG % blob.encode())
        out[where] = {"blob": blob, "tree": tree, "commit": commit, "tag": tag}
    idx = (repo / ".git/objects/loose-object-idx").read_bytes()
    assert idx.startswith(HEADER)
    pairs = dict(line.split(" ") for line in idx[len(HEADER) :].decode().splitlines())
    result = {name: (pairs[out[repo][name]], out[other][name]) for name in out[repo]}
    result["_main"] = ("", "")
    result["_repo"] = (str(repo), str(other))
    result.update({f"main-{k}": (v, v) for k, v in out[repo].items()})
    return result


@pytest.mark.parametrize("main, compat", [("sha1", "sha256"), ("sha256", "sha1")])
def test_writes_record_the_compat_id_git_computes(tmp_path, main, compat):
    # Regression: gitodb refused to write objects in such a repository (t1006 lost 30).
    got = _build(tmp_path, main, compat)
    for name in ("blob", "tree", "commit", "tag"):
        mine, gits = got[name]
        assert mine == gits, name


@pytest.mark.parametrize("main, compat", [("sha1", "sha256"), ("sha256", "sha1")])
def test_objects_are_read_by_compat_id_as_in_the_other_format(tmp_path, main, compat):
    got = _build(tmp_path, main, compat)
    repo, other = (Path(p) for p in got["_repo"])
    names = [got[n][0] for n in ("blob", "tree", "commit", "tag")]
    batch_in = "".join(f"{n}\n" for n in names).encode()
    # --batch by compat id prints what git prints in the other-format repository
    assert _ok("cat-file", "--batch", cwd=repo, input=batch_in) == git(
        "cat-file", "--batch", cwd=other, input=batch_in
    )
    for n in names:
        for mode in ("-t", "-s", "-p"):
            assert _ok("cat-file", mode, n, cwd=repo) == git("cat-file", mode, n, cwd=other)
    tree = got["tree"][0]
    blob = got["blob"][0]
    line = _ok("cat-file", "--batch-check", cwd=repo, input=f"{tree}:hello\n".encode())
    assert line == f"{blob} blob 11\n".encode()
    # abbreviated compat ids resolve too; main ids still print in the main format
    assert _ok("cat-file", "-t", blob[:12], cwd=repo) == b"blob\n"
    main_tree = got["main-tree"][0]
    assert (
        _ok("cat-file", "--batch-check", cwd=repo, input=main_tree.encode())
        == f"{main_tree} tree {_size(main, 2)}\n".encode()
    )


def _size(fmt: str, entries: int) -> int:
    rawsz = 20 if fmt == "sha1" else 32
    return entries * rawsz + len(b"100644 hello\0") + len(b"100755 path with spaces\0")


def test_unknown_compat_id_is_not_a_valid_name(tmp_path):
    repo = _compat_repo(tmp_path)
    bogus = "12" * 32
    p = gitodb("cat-file", "-t", bogus, cwd=repo)
    assert (p.returncode, p.stderr) == (128, f"fatal: Not a valid object name {bogus}\n".encode())
    assert (
        _ok("cat-file", "--batch-check", cwd=repo, input=bogus.encode())
        == f"{bogus} missing\n".encode()
    )


def test_unmappable_object_is_refused_with_gits_messages(tmp_path):
    repo = _compat_repo(tmp_path)
    before = sorted(p.name for p in (repo / ".git/objects").rglob("*"))
    p = gitodb("hash-object", "-w", "-t", "tag", "--stdin", cwd=repo, input=TAG % (b"1" * 40))
    assert p.returncode == 128
    assert p.stderr == (
        b"error: unable to map tree " + b"1" * 40 + b" in tag object\n"
        b"fatal: Failed to convert object from sha1 to sha256\n"
    )
    assert sorted(p.name for p in (repo / ".git/objects").rglob("*")) == before


def test_streamed_and_packed_blobs_are_mapped(tmp_path):
    repo = _compat_repo(tmp_path)
    data = os.urandom(5000)
    (repo / "big").write_bytes(data)
    oid = _ok("-c", "core.bigFileThreshold=100", "hash-object", "-w", "big", cwd=repo).strip()
    assert list((repo / ".git/objects/pack").glob("*.pack"))
    want = hashlib.sha256(b"blob 5000\0" + data).hexdigest()
    m = LooseObjectMap(repo / ".git/objects", SHA1, SHA256)
    assert m.to_compat(bytes.fromhex(oid.decode())) == bytes.fromhex(want)


def test_map_reading_stops_at_a_malformed_line_like_git(tmp_path):
    objects = tmp_path / "objects"
    objects.mkdir()
    a, b = "ab" * 20, "cd" * 32
    (objects / "loose-object-idx").write_bytes(
        HEADER + f"{a} {b}\n".encode() + b"garbage\n" + f"{'01' * 20} {'02' * 32}\n".encode()
    )
    m = LooseObjectMap(objects, SHA1, SHA256)
    assert m.to_compat(bytes.fromhex(a)) == bytes.fromhex(b)
    assert m.to_compat(bytes.fromhex("01" * 20)) is None
    # the empty tree and blob are always mapped
    empty_tree = hashlib.sha1(b"tree 0\0").digest()
    assert m.to_compat(empty_tree) == hashlib.sha256(b"tree 0\0").digest()
    (objects / "loose-object-idx").write_bytes(b"# not the header\n" + f"{a} {b}\n".encode())
    assert LooseObjectMap(objects, SHA1, SHA256).to_compat(bytes.fromhex(a)) is None


def test_commit_conversion_maps_mergetag_and_refuses_unknown_headers():
    ids = {bytes([i]) * 20: bytes([i]) * 32 for i in range(1, 4)}
    tag = b"object " + (b"03" * 20) + b"\ntype commit\ntag t\ntagger T <t> 0 +0000\n\nmsg\n"
    commit = (
        b"tree " + b"01" * 20 + b"\nparent " + b"02" * 20 + b"\nauthor A <a> 0 +0000\n"
        b"committer C <c> 0 +0000\nmergetag "
        + tag.replace(b"\n", b"\n ").rstrip(b" ")
        + b"\nbody\n"
    )
    got = convert_object("commit", commit, SHA1, SHA256, ids.get)
    assert got == (
        b"tree " + b"01" * 32 + b"\nparent " + b"02" * 32 + b"\nauthor A <a> 0 +0000\n"
        b"committer C <c> 0 +0000\nmergetag "
        + tag.replace(b"03" * 20, b"03" * 32).replace(b"\n", b"\n ").rstrip(b" ")
        + b"\nbody\n"
    )
    with pytest.raises(ObjectConvertError):
        convert_object("commit", b"tree " + b"01" * 20 + b"\nodd header\n\n", SHA1, SHA256, ids.get)
    with pytest.raises(ObjectConvertError) as e:
        convert_object("tree", b"100644 a\0" + b"\x09" * 20, SHA1, SHA256, ids.get)
    assert e.value.detail == "failed to map tree entry for " + "09" * 20
