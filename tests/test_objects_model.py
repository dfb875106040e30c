"""The object model (Commit, Tag, Tree, Blob, Signature) against Git's own reading."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitodb.errors import (
    ObjectCheckError,
    ObjectFormatError,
    ObjectNotFoundError,
    ObjectParseError,
    ObjectTypeError,
)
from gitodb.objects import SHA1, SHA256, Blob, Commit, Signature, Tag, Tree, parse_object
from gitodb.repo import Repository
from gitodb.repo.write import ObjectWriter
from helpers import git

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "libgit2.git"
SIG = b"-----BEGIN PGP SIGNATURE-----\n\niQEzBAABCAAdFiEE\n=abcd\n-----END PGP SIGNATURE-----"


def _hash(repo: Path, type_name: str, data: bytes, *extra: str) -> str:
    return (
        git("hash-object", *extra, "-t", type_name, "-w", "--stdin", cwd=repo, input=data)
        .decode()
        .strip()
    )


def build_repo(path: Path, object_format: str) -> Path:
    """Branches, merges, equal dates, encodings, signed-looking and odd objects."""
    git("init", "-q", f"--object-format={object_format}", path)
    (path / "a.txt").write_text("a\n")
    (path / "dir").mkdir()
    (path / "dir" / "b.txt").write_text("b\n")
    (path / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(path / "run.sh", 0o755)
    os.symlink("a.txt", path / "link")
    git("add", ".", cwd=path)
    git("commit", "-q", "-m", "first", cwd=path)
    git("checkout", "-q", "-b", "side", cwd=path)
    (path / "side.txt").write_text("side\n")
    git("add", ".", cwd=path)
    git(
        "commit",
        "-q",
        "-m",
        "side   with  spaces  \n\n\n  trailing\n",
        "--cleanup=verbatim",
        cwd=path,
    )
    git("checkout", "-q", "-", cwd=path)
    (path / "a.txt").write_text("a2\n")
    git("-c", "i18n.commitEncoding=ISO-8859-1", "commit", "-q", "-a", "-m", "latin", cwd=path)
    git("merge", "-q", "--no-ff", "-m", "merge side", "side", cwd=path)
    git("tag", "-a", "-m", "annotated", "v1", cwd=path)
    git("tag", "-a", "-m", "tag of a tag", "v1-outer", "v1", cwd=path)
    git("tag", "light", cwd=path)
    hexsz = 64 if object_format == "sha256" else 40
    head = git("rev-parse", "HEAD", cwd=path).decode().strip()
    tree = git("rev-parse", "HEAD^{tree}", cwd=path).decode().strip()
    assert len(head) == hexsz
    # A signed-looking tag and a tag without tagger.
    signed_tag = (
        (
            f"object {head}\ntype commit\ntag signed\n"
            "tagger T <t@example.com> 1700000000 +0130\n\nsigned tag\n"
        ).encode()
        + SIG
        + b"\n"
    )
    st = _hash(path, "tag", signed_tag)
    old_tag = f"object {head}\ntype commit\ntag old\n\nno tagger\n".encode()
    ot = _hash(path, "tag", old_tag)
    # A commit with gpgsig, gpgsig-sha256, a mergetag, unknown and odd headers.
    indented = b"\n ".join(signed_tag.rstrip(b"\n").split(b"\n"))
    odd = (
        f"tree {tree}\nparent {head}\n".encode()
        + b"author  Odd  Name   <odd@example.com>   1700000001   -0700\n"
        + b"committer C <c@example.com> 1700000002 +0000\n"
        + b"encoding ISO-8859-1\n"
        + b"mergetag "
        + indented
        + b"\n"
        + b"x-unknown first\n continued\n \n last\n"
        + b"nospace\n"
        + b"gpgsig "
        + b"\n ".join(SIG.split(b"\n"))
        + b"\n"
        + b"gpgsig-sha256 "
        + b"\n ".join(SIG.split(b"\n"))
        + b"\n"
        + b"\nodd commit\r\nwith CR\n\n"
    )
    oc = _hash(path, "commit", odd)
    no_message = f"tree {tree}\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n".encode()
    nm = _hash(path, "commit", no_message)
    broken_ident = f"tree {tree}\nauthor no email here\ncommitter <> x y\n\nm".encode()
    bi = _hash(path, "commit", broken_ident)
    # A tree with a zero-padded mode, as very old Git wrote.
    blob = git("rev-parse", "HEAD:a.txt", cwd=path).decode().strip()
    padded = b"040000 d\0" + bytes.fromhex(tree) + b"100644 z\0" + bytes.fromhex(blob)
    pt = _hash(path, "tree", padded)
    for name, oid in (
        ("signed", st),
        ("odd", oc),
        ("nomsg", nm),
        ("broken", bi),
        ("padded", pt),
        ("old", ot),
    ):
        git("update-ref", f"refs/odd/{name}", oid, cwd=path)
    return path


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def repo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_repo(tmp_path_factory.mktemp(request.param) / "r", request.param)


def _all_objects(path: Path) -> list[tuple[str, str]]:
    out = (
        git(
            "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)", cwd=path
        )
        .decode()
        .split("\n")
    )
    return [tuple(line.split()) for line in out if line]  # type: ignore[misc]


def test_every_object_serialises_to_its_bytes(repo: Path) -> None:
    r = Repository(repo)
    objs = _all_objects(repo)
    assert {t for _o, t in objs} == {"commit", "tree", "blob", "tag"}
    for oid, type_name in objs:
        obj = r.odb.get(oid)
        assert obj.type_name == type_name
        data = git("cat-file", type_name, oid, cwd=repo)
        assert obj.raw == data
        assert obj.serialize() == data, oid
        assert obj.id.hex() == oid
        # Parsing fresh bytes (no id given) hashes to the same id.
        assert parse_object(type_name, data, r.object_format).id.hex() == oid


def test_commit_fields_match_git(repo: Path) -> None:
    r = Repository(repo)
    fmt = "%H%x00%T%x00%P%x00%an%x00%ae%x00%at%x00%ad%x00%cn%x00%ce%x00%ct%x00%e%x00%B"
    out = git("log", "--all", "--date=raw", "--encoding=none", f"--format={fmt}%x01", cwd=repo)
    seen = 0
    for record in out.split(b"\x01\n"):
        if not record:
            continue
        h, t, p, an, ae, at, ad, cn, ce, ct, enc, body = record.split(b"\0")
        c = r.commit(h.decode())
        seen += 1
        assert c.tree.hex().encode() == t
        assert b" ".join(x.hex().encode() for x in c.parents) == p
        assert c.author is not None and c.committer is not None
        assert (c.author.name, c.author.email) == (an, ae)
        assert (c.committer.name, c.committer.email) == (cn, ce)
        assert (b"%d" % c.committer.timestamp if c.committer.timestamp is not None else b"") == ct
        if at:
            assert c.author.timestamp == int(at)
            tz = int(ad.split()[1])
            assert c.author.tz_offset == (1 if tz >= 0 else -1) * (
                abs(tz) // 100 * 60 + abs(tz) % 100
            )
        else:
            assert c.author.timestamp is None
        assert (c.encoding or b"") == enc
        assert c.commit_date == int(ct or b"0")
        # %B is the message (Git 2.39 prints stray bytes for a commit without one).
        if c.block.message is not None:
            assert c.message.rstrip(b"\n") == body.rstrip(b"\n")
    assert seen >= 7


def test_odd_commit_headers(repo: Path) -> None:
    r = Repository(repo)
    c = r.commit("refs/odd/odd")
    assert c.gpgsig == SIG and c.gpgsig_sha256 == SIG
    assert c.encoding == b"ISO-8859-1"
    assert c.extra_headers == [(b"x-unknown", b"first\ncontinued\n\nlast"), (b"nospace", None)]
    (mt,) = c.mergetags
    assert mt.name == b"signed" and mt.signature == SIG + b"\n" and mt.message == b"signed tag\n"
    assert mt.object == r.commit("HEAD").id
    assert c.author is not None
    assert c.author.name == b" Odd  Name" and c.author.email == b"odd@example.com"
    assert c.author.timestamp == 1700000001 and c.author.tz_offset == -420
    assert c.message == b"odd commit\r\nwith CR\n\n"
    nm = r.commit("refs/odd/nomsg")
    assert nm.message == b"" and nm.block.message is None and nm.parents == []
    broken = r.commit("refs/odd/broken")
    assert broken.author is not None and broken.author.timestamp is None
    assert broken.author.name == b"" and broken.author.raw == b"no email here"
    assert broken.commit_date == 0


def test_tags(repo: Path) -> None:
    r = Repository(repo)
    head = r.commit("HEAD").id
    v1 = r.tag("v1")
    assert (v1.object, v1.type, v1.name, v1.message) == (head, "commit", b"v1", b"annotated\n")
    assert v1.signature is None and v1.tagger is not None
    assert v1.tagger.name == b"C O Mitter"
    outer = r.tag("v1-outer")
    assert outer.type == "tag" and outer.object == v1.id
    assert r.commit("v1-outer").id == head  # peeled through both tags
    signed = r.tag("refs/odd/signed")
    assert signed.signature == SIG + b"\n" and signed.tagger is not None
    assert signed.tagger.tz_offset == 90
    old = r.tag("refs/odd/old")
    assert old.tagger is None and old.message == b"no tagger\n" and old.name == b"old"
    with pytest.raises(ObjectTypeError):
        r.tag("HEAD")


def test_trees(repo: Path) -> None:
    r = Repository(repo)
    t = r.tree("HEAD")
    listing = git("ls-tree", "HEAD", cwd=repo).decode().splitlines()
    assert len(t) == len(listing)
    for entry, line in zip(t, listing, strict=True):
        meta, name = line.split("\t")
        mode, kind, oid = meta.split()
        assert (f"{entry.mode:06o}", entry.object_type, entry.id.hex(), entry.name) == (
            mode,
            kind,
            oid,
            name.encode(),
        )
    assert t["dir"].is_tree and b"link" in t and t.get("nope") is None
    assert t["run.sh"].mode == 0o100755 and t["link"].mode == 0o120000
    with pytest.raises(KeyError):
        t["nope"]
    padded = r.tree("refs/odd/padded")
    assert [e.mode for e in padded] == [0o40000, 0o100644]
    assert padded.serialize().startswith(b"040000 d\0")
    assert r.blob("HEAD:a.txt").data == b"a2\n"
    assert r.blob(r.resolve("HEAD:dir/b.txt")).size == 2


def test_ids_as_hex_or_bytes(repo: Path) -> None:
    r = Repository(repo)
    head = r.resolve("HEAD")
    assert r.commit(head).id == r.commit(head.hex()).id == r.odb.commit(head.hex().encode()).id
    with pytest.raises(ObjectFormatError):
        r.odb.get(b"short")
    with pytest.raises(ObjectTypeError):
        r.odb.tree(head)


def _sig(t: int = 1700000000, tz: int = 0) -> Signature:
    return Signature.create("A U Thor", "author@example.com", t, tz)


def test_create_and_write_match_git(repo: Path, tmp_path: Path) -> None:
    r = Repository(repo)
    fmt = r.object_format
    w = ObjectWriter(r)
    blob = w.write_object(Blob.create(b"new\n", fmt))
    assert git("cat-file", "blob", blob.hex(), cwd=repo) == b"new\n"
    sub = r.tree("HEAD")["dir"].id
    tree = Tree.create(
        [(0o040000, "dir", sub), (0o100644, b"dir.txt", blob), (0o100755, "a", blob.hex())], fmt
    )
    assert [e.name for e in tree] == [b"a", b"dir.txt", b"dir"]  # Git's order
    tid = w.write_object(tree)
    mktree = git("mktree", cwd=repo, input=git("ls-tree", tid.hex(), cwd=repo)).decode().strip()
    assert mktree == tid.hex()
    head = r.resolve("HEAD")
    commit = Commit.create(
        tree=tid,
        parents=[head],
        author=_sig(tz=-300),
        committer=_sig(1700000100, 60),
        message="made\n",
        fmt=fmt,
    )
    cid = w.write_object(commit)
    env_out = git(
        "-c",
        "user.name=x",
        "commit-tree",
        tid.hex(),
        "-p",
        head.hex(),
        "-m",
        "made",
        cwd=repo,
        check=True,
    )
    assert git("cat-file", "-t", cid.hex(), cwd=repo) == b"commit\n"
    assert (
        git("show", "-s", "--format=%an %ae %ad", "--date=raw", cid.hex(), cwd=repo)
        == b"A U Thor author@example.com 1700000000 -0500\n"
    )
    assert env_out.strip()
    tag = Tag.create(
        object=cid,
        type="commit",
        name="made",
        tagger=_sig(),
        message=b"m\n",
        signature=SIG + b"\n",
        fmt=fmt,
    )
    tag_id = w.write_object(tag)
    assert git("cat-file", "tag", tag_id.hex(), cwd=repo) == tag.serialize()
    fsck = git("fsck", "--strict", "--no-dangling", cwd=repo, check=False)
    assert b"error" not in fsck
    assert r.tag(tag_id).signature == SIG + b"\n"


def test_write_refuses_bad_objects(repo: Path) -> None:
    r = Repository(repo)
    fmt = r.object_format
    w = ObjectWriter(r)
    blob = r.resolve("HEAD:a.txt")
    missing = bytes(range(fmt.rawsz))
    with pytest.raises(ObjectNotFoundError):
        w.write_object(Tree.create([(0o100644, "x", missing)], fmt))
    with pytest.raises(ObjectTypeError):
        w.write_object(Tree.create([(0o040000, "x", blob)], fmt))
    with pytest.raises(ObjectTypeError):
        w.write_object(
            Commit.create(tree=blob, author=_sig(), committer=_sig(), message=b"", fmt=fmt)
        )
    with pytest.raises(ObjectTypeError):
        w.write_object(Tag.create(object=blob, type="commit", name="t", message=b"", fmt=fmt))
    for bad in (
        [(0o100644, "", blob)],
        [(0o100644, "a/b", blob)],
        [(0o100600, "a", blob)],
        [(0o100644, "a", blob), (0o100755, "a", blob)],
        [(0o100644, "..", blob)],
    ):
        with pytest.raises(ObjectFormatError):
            Tree.create(bad, fmt)
    with pytest.raises(ObjectFormatError):
        Signature.create("a<b", "e", 1)
    with pytest.raises(ObjectCheckError):
        w.write_object(Commit(b"not a commit", fmt))
    other = SHA1 if fmt is SHA256 else SHA256
    with pytest.raises(ObjectFormatError):
        w.write_object(Blob(b"x", other))


def test_tree_parse_errors_are_gits() -> None:
    good = b"100644 a\0" + b"\1" * 20
    assert Tree(good).entries[0].name == b"a"
    for data, message in (
        (b"100644 a\0" + b"\1" * 19, "too-short tree object"),
        (b"10a644 a\0" + b"\1" * 20, "malformed mode in tree entry"),
        (b" 100644 a\0" + b"\1" * 20, "malformed mode in tree entry"),
        (b"100644 \0" + b"\1" * 20, "empty filename in tree entry"),
        (good + b"1", "too-short tree object"),
    ):
        with pytest.raises(ObjectParseError) as info:
            _ = Tree(data).entries
        assert info.value.message == message


def test_commit_parse_errors() -> None:
    for data, reason in (
        (b"tree x\n", "bogus"),
        (b"tree " + b"g" * 40 + b"\nx", "bad-tree"),
        (b"tree " + b"a" * 40 + b"\nparent " + b"z" * 40 + b"\nx", "bad-parents"),
    ):
        with pytest.raises(ObjectParseError) as info:
            _ = Commit(data).parents
        assert info.value.reason == reason


def test_round_trip_of_odd_layouts() -> None:
    for data in (
        b"",
        b"tree",
        b"tree x",
        b"a\n b\n",
        b" lead\n",
        b"k v\n\n",
        b"k v\n\n\n",
        b"nospace\n continuation\n",
        b"k v\n \n \n\nmsg",
    ):
        c = Commit(data)
        assert c.serialize() == data, data
        assert Tag(data).serialize() == data


@pytest.mark.skipif(not CORPUS.is_dir(), reason="corpus not present")
def test_corpus_round_trip() -> None:
    r = Repository(CORPUS)
    counts = {"commit": 0, "tree": 0, "tag": 0}
    for oid, type_name, data in r.odb.iter_objects():
        if type_name == "blob":
            continue
        obj = parse_object(type_name, data, r.object_format, oid)
        assert obj.serialize() == data, oid.hex()
        if isinstance(obj, Commit):
            obj.parents, obj.author, obj.extra_headers  # noqa: B018 - must parse
        elif isinstance(obj, Tag):
            obj.object, obj.tagger  # noqa: B018
        counts[type_name] += 1
    assert all(counts.values())


def test_index_pack_strict_checks_parse_with_the_model() -> None:
    from gitodb.errors import GitodbWarning, PackError
    from gitodb.objects import OBJ_COMMIT, OBJ_TREE
    from gitodb.objects.check import PackObjectChecker as StrictChecker

    check = StrictChecker(SHA1)
    good_tree = b"100644 a\0" + b"\1" * 20 + b"40000 d\0" + b"\2" * 20
    check(OBJ_TREE, good_tree, b"\0" * 20, 0)
    assert check.links == [b"\1" * 20, b"\2" * 20]
    for bad, reason in (
        (b"100644 a\0" + b"\1" * 19, "badTree"),
        (b"100644 b\0" + b"\1" * 20 + b"100644 a\0" + b"\1" * 20, "treeNotSorted"),
    ):
        with pytest.raises(PackError) as info:
            check(OBJ_TREE, bad, b"\0" * 20, 7)
        assert info.value.message == "fsck error in packed object"
        assert reason in info.value.details[0]
    # Git 2.55: a bad file mode is only reported (info), even by index-pack --strict
    with pytest.warns(GitodbWarning, match="badFilemode: contains bad file modes"):
        check(OBJ_TREE, b"100700 a\0" + b"\1" * 20, b"\0" * 20, 7)
    commit = (
        b"tree "
        + b"a" * 40
        + b"\nparent "
        + b"b" * 40
        + b"\nauthor A <a> 1 +0000\ncommitter A <a> 1 +0000\n\nm\n"
    )
    check(OBJ_COMMIT, commit, b"\0" * 20, 0)
    assert check.links[-2:] == [b"\xaa" * 20, b"\xbb" * 20]
    with pytest.raises(PackError) as info:
        check(OBJ_COMMIT, commit.replace(b"author", b"auth0r"), b"\0" * 20, 0)
    assert "missingAuthor" in info.value.details[0]
