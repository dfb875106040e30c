"""A user's script built from the README's examples; ``mypy --strict`` must pass on it.

tests/test_api.py type-checks it (it is never run: the README's own blocks are run by
tests/test_doc_examples.py).
"""

from __future__ import annotations

import pickle

import gitodb
from gitodb import compress
from gitodb.history.revwalk import RevWalk
from gitodb.objects import Blob, Commit, Signature, Tree
from gitodb.repo.write import ObjectWriter, compute_object_id


def read_things(path: str) -> list[str]:
    with gitodb.open(path) as repo:
        odb = repo.odb
        oid: gitodb.ObjectId = repo.resolve("HEAD~2:README.md")
        type_name, data = odb.read(oid)
        type_name, size = odb.read_header(str(oid)[:7])
        assert odb.contains(oid)
        info: gitodb.ObjectInfo = odb.info(oid)
        print(info.oid, info.size, info.disk_size, info.delta_base, info.pack, info.offset)
        with odb.open_stream(oid) as stream:
            while chunk := stream.read(1 << 16):
                print(len(chunk))
        for some_id, type_name, data in odb.iter_objects(types={"commit"}):
            print(some_id.hex(), type_name, len(data))
        sorted_ids: list[bytes] = list(odb.iter_oids())
        print(len(sorted_ids), pickle.dumps(repo))
        return [r.name for r in repo.refs.iter_refs("refs/tags/")]


def write_things(repo: gitodb.Repository) -> bytes:
    new_id = ObjectWriter(repo).write("blob", b"hello\n")
    assert compute_object_id(repo.object_format, "blob", b"hello\n") == new_id
    c: Commit = repo.commit("main~2")
    tree_id: bytes = c.tree
    parents: list[bytes] = list(c.parents)
    if c.author is not None:  # None only in a damaged commit
        print(c.author.name, c.author.email, c.author.timestamp, c.author.tz_offset)
    print(tree_id, parents, c.message)
    for entry in repo.tree("HEAD"):
        print(entry.mode, entry.name, entry.id, entry.object_type)
    print(repo.blob("HEAD:README.md").data)
    w = ObjectWriter(repo)
    blob = w.write_object(Blob.create(b"hello\n", repo.object_format))
    tree = w.write_object(Tree.create([(0o100644, "hello.txt", blob)], repo.object_format))
    me = Signature.create("A U Thor", "a@example.com", 1700000000, tz_offset=60)
    new = w.write_object(
        Commit.create(
            tree=tree,
            parents=[c.id],
            author=me,
            committer=me,
            message="hello\n",
            fmt=repo.object_format,
        )
    )
    old_id = repo.refs.resolve("refs/heads/main")
    tx = repo.refs.transaction()
    tx.update("refs/heads/main", new, old_id, "rewind")
    tx.commit()
    for e in repo.refs.reflog("refs/heads/main"):
        print(e.old.hex(), e.new.hex(), e.message)
    walk = RevWalk(repo, order="topo", max_count=10)
    walk.add(repo.resolve("main"))
    for node in walk.commits():
        print(node.id.hex(), [p.hex() for p in node.parent_ids])
    compress.set_backend("zlib-ng")
    return new


def progress(title: str, done: int, total: int, finished: bool) -> None:
    print(title, done, total, finished)


callback: gitodb.Progress = progress
