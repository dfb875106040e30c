"""The native abbreviation (``_native.abbrev_lengths`` through ``Abbreviator``) against
its pure-Python reference (``Abbreviator.reference_length``, a prefix search of the
object database) and against git, on repositories whose ids share long prefixes on
purpose: objects chosen from many candidates by their ids, spread over several
packs, a multi-pack-index and loose files.

The commands that abbreviate many ids (``rev-list --abbrev-commit``/``--oneline``,
``log --oneline``, ``%h %t %p``, ``ls-tree --abbrev``, ``rev-parse --short``) are
compared byte for byte with the ``git`` on PATH.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitodb.repo import Repository
from gitodb.repo.abbrev import Abbreviator, default_abbrev
from helpers import as_gitodb, git, run_cli

native = pytest.importorskip("gitodb._native")


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _colliding_blobs() -> list[bytes]:
    """Blob contents whose ids share 4 to 8 hex digits with another's, in clusters
    (found by hashing candidates), and some unrelated ones."""
    by_prefix: dict[str, list[bytes]] = {}
    chosen: list[bytes] = []
    want = {4: 6, 5: 6, 6: 5, 7: 3, 8: 2}  # common length -> pairs wanted
    i = 0
    while any(want.values()) and i < 400_000:
        data = b"candidate %d\n" % i
        i += 1
        h = _blob_id(data)
        bucket = by_prefix.setdefault(h[:4], [])
        for other in bucket:
            k = 4
            oh = _blob_id(other)
            while k < 40 and oh[k] == h[k]:
                k += 1
            if want.get(k):
                want[k] -= 1
                chosen += [other, data]
                break
        bucket.append(data)
    chosen += [b"plain %d\n" % n for n in range(20)]
    return list(dict.fromkeys(chosen))


BLOBS = _colliding_blobs()


def _hash_objects(path: Path, blobs: list[bytes]) -> list[str]:
    """Write ``blobs`` as loose objects; their ids."""
    (path / "in").mkdir(exist_ok=True)
    names = []
    for n, data in enumerate(blobs):
        f = path / "in" / str(n)
        f.write_bytes(data)
        names.append(str(f))
    out = git("hash-object", "-w", "--stdin-paths", cwd=path, input="\n".join(names).encode())
    shutil.rmtree(path / "in")
    return out.decode().split()


def _pack(path: Path, ids: list[str], drop_loose: bool) -> None:
    """Pack ``ids`` into a new pack; remove their loose files if ``drop_loose``."""
    git(
        "pack-objects",
        "-q",
        str(path / "objects" / "pack" / "pack"),
        cwd=path,
        input=("\n".join(ids) + "\n").encode(),
    )
    if drop_loose:
        for h in ids:
            f = path / "objects" / h[:2] / h[2:]
            if f.exists():
                f.unlink()


# -- the native path against the reference -------------------------------------------
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    where=st.lists(st.integers(0, 4), min_size=len(BLOBS), max_size=len(BLOBS)),
    midx=st.booleans(),
    length=st.sampled_from([4, 5, 6, 7, 8, 12, 40]),
    absent=st.lists(st.binary(min_size=20, max_size=20), max_size=5),
)
def test_native_matches_reference(
    tmp_path_factory: pytest.TempPathFactory,
    where: list[int],
    midx: bool,
    length: int,
    absent: list[bytes],
) -> None:
    """Each object goes to pack 1, 2 or 3, stays loose only, or is both loose and in
    pack 1 (0-4); with or without a multi-pack-index over the packs.  Every id, and
    ids of no object (some sharing a prefix with one), abbreviate alike."""
    path = tmp_path_factory.mktemp("abbrevdiff")
    git("init", "-q", "--bare", path)
    ids = _hash_objects(path, BLOBS)
    for p in (1, 2, 3):
        members = [h for h, w in zip(ids, where, strict=True) if w == p or (p == 1 and w == 4)]
        if members:
            _pack(path, members, drop_loose=p != 1)
    for h, w in zip(ids, where, strict=True):
        f = path / "objects" / h[:2] / h[2:]
        if w == 1 and f.exists():
            f.unlink()  # packed only
    if midx and any(w in (1, 2, 3, 4) for w in where):
        git("multi-pack-index", "write", cwd=path)
    repo = Repository(str(path))
    queries = [bytes.fromhex(h) for h in ids]
    queries += absent
    # absent ids that share 6 to 9 digits with a real one
    queries += [q[:3] + bytes([q[3] ^ 0x0F]) + q[4:] for q in queries[:6]]
    queries += [q[:4] + bytes([q[4] ^ 0x01]) + q[5:] for q in queries[6:12]]
    ab = Abbreviator(repo, length)
    got = ab.lengths(queries)
    ref = Abbreviator(repo, length)
    assert list(got) == [ref.reference_length(q) for q in queries]
    one = Abbreviator(repo, length)
    assert [one(q) for q in queries] == [q.hex()[:n] for q, n in zip(queries, got, strict=True)]


def test_native_table_bounds(tmp_path: Path) -> None:
    """A table reaching outside its buffer is refused, not read."""
    ids = b"".join(sorted(os.urandom(20) for _ in range(4)))
    assert len(native.abbrev_lengths(([(ids, -1, 0, 20, 4)], 7), 20, ids)) == 4
    with pytest.raises(ValueError):
        native.abbrev_lengths(([(ids, -1, 0, 20, 5)], 7), 20, ids)
    with pytest.raises(ValueError):
        native.abbrev_lengths(([(ids, 0, 0, 20, 4)], 7), 20, ids)  # no room for a fan-out
    with pytest.raises(ValueError):
        native.abbrev_lengths(([(ids, -1, 0, 20, 4)], 7), 20, ids[:-1])


# -- the commands against git ----------------------------------------------------------
def _commit_body(tree: str, parent: str | None, message: bytes) -> bytes:
    who = b"A U Thor <author@example.com> 1700000000 +0000"
    head = b"tree %s\n" % tree.encode()
    if parent:
        head += b"parent %s\n" % parent.encode()
    return head + b"author " + who + b"\ncommitter " + who + b"\n\n" + message


@pytest.fixture(scope="module", params=["packs", "midx"])
def colliding(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Blobs with colliding ids (some packed in two packs, some loose), a tree of
    them, and a chain of commits each chosen to share 5 or 6 hex digits with an
    earlier object; half the commits packed.  ``midx``: a multi-pack-index too."""
    path = tmp_path_factory.mktemp("abbrevgit")
    git("init", "-q", "--bare", path)
    ids = _hash_objects(path, BLOBS)
    entries = b"".join(b"100644 blob %s\tf%d\n" % (h.encode(), n) for n, h in enumerate(ids))
    tree = git("mktree", cwd=path, input=entries).decode().strip()
    known = [*ids, tree]
    parent = None
    commits = []
    for n in range(24):
        k = 6 if n % 8 == 7 else 5  # a 6-digit match takes ~200k tries
        prefixes = {h[:k] for h in known}
        i = 0
        while True:
            body = _commit_body(tree, parent, b"commit %d try %d\n" % (n, i))
            h = hashlib.sha1(b"commit %d\0" % len(body) + body).hexdigest()
            if h[:k] in prefixes:
                break
            i += 1
        got = git("hash-object", "-t", "commit", "-w", "--stdin", cwd=path, input=body)
        assert got.decode().strip() == h
        commits.append(h)
        known.append(h)
        parent = h
    git("update-ref", "refs/heads/main", commits[-1], cwd=path)
    git("update-ref", "refs/heads/side", commits[10], cwd=path)
    git("symbolic-ref", "HEAD", "refs/heads/main", cwd=path)
    _pack(path, ids[::2] + commits[::2] + [tree], drop_loose=True)
    _pack(path, ids[1::4] + commits[1::4], drop_loose=True)
    if request.param == "midx":
        git("multi-pack-index", "write", cwd=path)
    return path


@pytest.mark.parametrize(
    "args",
    [
        "rev-list --abbrev-commit --all",
        "rev-list --abbrev-commit --abbrev=4 --all",
        "rev-list --abbrev-commit --abbrev=5 --parents main",
        "rev-list --abbrev-commit --topo-order --all",
        "rev-list --oneline --all",
        "rev-list --oneline --abbrev=4 main",
        "rev-list --abbrev-commit --objects --abbrev=4 main",
        "log --oneline --all",
        "log --oneline --abbrev=4 --all",
        "log --abbrev-commit --abbrev=4 -3 main",
        "log --format=%h%x20%t%x20%p --abbrev=4 --all",
        "log --format=%h%x20%p --first-parent main",
        "log --format=%H%x20%h --no-abbrev main",
        "ls-tree --abbrev=4 main",
        "ls-tree --abbrev main",
        "ls-tree -r --abbrev=5 --format=%(objectname) main",
        "-c core.abbrev=4 log --oneline --all",
        "-c core.abbrev=5 rev-list --abbrev-commit --all",
        "show-ref --abbrev=4",
        "for-each-ref --format=%(objectname:short)",
    ],
)
def test_commands_match_git(
    colliding: Path, capfdbinary: pytest.CaptureFixture[bytes], args: str
) -> None:
    argv = args.split()
    want = as_gitodb(git(*argv, cwd=colliding))
    assert len(set(want.split())) > 1
    capfdbinary.readouterr()
    status = run_cli(colliding, *argv)
    out, err = capfdbinary.readouterr()
    assert (status, out, err) == (0, want, b"")


def test_rev_parse_short_matches_git(colliding: Path) -> None:
    """``Abbreviator`` of one id at a time is what ``git rev-parse --short=<n>`` says
    (gitodb has no rev-parse command: this is the library call one would make)."""
    repo = Repository(str(colliding))
    ids = git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=colliding)
    for n in (4, 6):
        ab = Abbreviator(repo, n)
        for h in ids.decode().split()[::3]:
            want = git("rev-parse", f"--short={n}", h, cwd=colliding).decode().strip()
            assert ab(bytes.fromhex(h)) == want


def test_colliding_repository_is_colliding(colliding: Path) -> None:
    """The fixture does what it says: some abbreviations are longer than asked."""
    repo = Repository(str(colliding))
    ids = git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=colliding)
    raw = [bytes.fromhex(h) for h in ids.decode().split()]
    got = Abbreviator(repo, 4).lengths(raw)
    assert max(got) >= 8 and min(got) == 4
    assert default_abbrev(repo) == 7
