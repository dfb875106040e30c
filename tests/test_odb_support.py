"""Helpers shared by the object-database, pack-reading, revparse and cat-file tests.

Builds small repositories with the ``git`` on PATH (deterministic identities and
dates), runs ``gitodb`` in-process, and writes hand-made packs for bad-input tests.
Imported by the ``test_odb*``/``test_pack_read*``/``test_cat_file*``/``test_revparse*``
modules; it holds no tests itself.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

from gitodb import compress
from gitodb.objects.format import SHA1, ObjectFormat
from gitodb.objects.header import hash_object
from gitodb.pack.entry import encode_entry_header, encode_ofs_distance
from gitodb.pack.idx import write_index_v2

DATA = Path(__file__).parent / "data"

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "A U Thor",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "C O Mitter",
    "GIT_COMMITTER_EMAIL": "committer@example.com",
    "TZ": "UTC",
    "LC_ALL": "C",
}


def git_env(step: int = 0) -> dict[str, str]:
    """Environment for running git deterministically (date moves with ``step``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV)
    date = f"{1_700_000_000 + 60 * step} +0000"
    env["GIT_AUTHOR_DATE"] = date
    env["GIT_COMMITTER_DATE"] = date
    return env


def git(
    cwd: Path | str, *args: str, input: bytes | None = None, check: bool = True, step: int = 0
) -> subprocess.CompletedProcess[bytes]:
    """Run git in ``cwd``; return the completed process (stdout/stderr as bytes)."""
    return subprocess.run(
        ["git", *args], cwd=cwd, input=input, capture_output=True, check=check, env=git_env(step)
    )


def make_repo(root: Path, object_format: str = "sha1") -> Path:
    """A work-tree repository with history that exercises every object kind.

    Three commits on main plus a merge from a side branch; a subdirectory, an
    executable, a symlink and a non-ASCII file name; annotated tags of a commit,
    a tree, a blob and of another tag; a lightweight tag.  Objects end up in two
    packs (one of them idx v1 with REF_DELTA) plus loose objects.
    """
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", f"--object-format={object_format}", "-b", "main", ".")
    git(root, "config", "gc.auto", "0")
    step = 0

    def commit(msg: str) -> None:
        nonlocal step
        step += 1
        git(root, "add", "-A", step=step)
        git(root, "commit", "-q", "-m", msg, step=step)

    (root / "dir" / "sub").mkdir(parents=True)
    text = "".join(f"line {i} of a file that will be edited a little\n" for i in range(300))
    (root / "a.txt").write_text(text)
    (root / "dir" / "b.txt").write_text("bee\n")
    (root / "dir" / "sub" / "c.txt").write_text("sea\n" * 50)
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(root / "run.sh", 0o755)
    os.symlink("a.txt", root / "link")
    commit("first")
    (root / "a.txt").write_text(text.replace("line 7 ", "LINE 7 "))
    (root / "\u00fc.txt").write_text("umlaut\n")
    (root / "tab\there.txt").write_text("tab\n")
    commit("second")
    git(root, "checkout", "-q", "-b", "side")
    (root / "side.txt").write_text("side\n")
    commit("side work")
    git(root, "checkout", "-q", "main")
    (root / "a.txt").write_text(text.replace("line 9 ", "LINE 9 ") + "tail\n")
    commit("third")
    step += 1
    git(root, "merge", "-q", "--no-ff", "-m", "merge side", "side", step=step)
    git(root, "tag", "-a", "-m", "release 1", "v1", "HEAD~1", step=step)
    git(root, "tag", "-a", "-m", "outer", "v1-outer", "v1", step=step)
    git(root, "tag", "-a", "-m", "a tree", "tree-tag", "HEAD^{tree}", step=step)
    git(root, "tag", "-a", "-m", "a blob", "blob-tag", "HEAD:dir/b.txt", step=step)
    git(root, "tag", "light", "HEAD~2")
    # First pack: everything so far, idx v1 and REF_DELTA only.
    git(
        root, "-c", "pack.indexVersion=1", "-c", "repack.useDeltaBaseOffset=false", "repack", "-adq"
    )
    for p in (root / ".git" / "objects" / "pack").glob("*.rev"):
        p.unlink()
    (root / "a.txt").write_text(text.replace("line 11 ", "LINE 11 ") + "more\n")
    commit("fourth")
    # Second pack: only the new objects (incremental), OFS_DELTA, with .rev.
    git(root, "-c", "pack.writeReverseIndex=true", "repack", "-dq")
    (root / "dir" / "b.txt").write_text("bee bee\n")
    commit("fifth (loose)")
    git(root, "pack-refs", "--all")
    (root / "dir" / "b.txt").write_text("bee bee bee\n")
    commit("sixth (loose, loose ref)")
    git(root, "update-ref", "refs/heads/main", "HEAD")
    return root


def ambiguous_blobs(fmt: ObjectFormat = SHA1, nibbles: int = 4) -> tuple[str, bytes, bytes]:
    """Two blob contents whose ids share the first ``nibbles`` hex digits."""
    seen: dict[str, bytes] = {}
    i = 0
    while True:
        data = b"ambiguity candidate %d\n" % i
        h = hash_object(fmt, "blob", data).hex()[:nibbles]
        if h in seen:
            return h, seen[h], data
        seen[h] = data
        i += 1


def add_ambiguous_pair(repo: Path, fmt: ObjectFormat = SHA1) -> str:
    """Write two loose blobs with a common 4-digit prefix; return the prefix."""
    prefix, a, b = ambiguous_blobs(fmt)
    for data in (a, b):
        git(repo, "hash-object", "-w", "--stdin", input=data)
    return prefix


def run_gitodb(args: list[str], stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    """Run ``gitodb <args>`` in-process; return (exit status, stdout, stderr)."""
    from gitodb.cli.main import main

    out = io.BytesIO()
    err = io.BytesIO()
    old = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    sys.stdout = io.TextIOWrapper(out, write_through=True)
    sys.stderr = io.TextIOWrapper(err, write_through=True)
    cwd = os.getcwd()
    wrappers = (sys.stdin, sys.stdout, sys.stderr)
    try:
        rc = main(args)
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        sys.stdin, sys.stdout, sys.stderr = old
        os.chdir(cwd)
        for w in wrappers:
            w.detach()  # keep the BytesIO objects open
    return rc, out.getvalue(), err.getvalue()


def run_git(git_dir: Path, args: list[str], stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    """Run ``git --git-dir=<git_dir> <args>``; return (exit status, stdout, stderr)."""
    p = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], input=stdin, capture_output=True, env=git_env()
    )
    return p.returncode, p.stdout, p.stderr


def copy_fixture(name: str, dest: Path) -> Path:
    """Copy ``tests/data/<name>`` (with siblings such as alt-objects) into ``dest``."""
    shutil.copytree(DATA / name, dest / name, symlinks=True)
    return dest / name / "repo"


# --------------------------------------------------------------------------- packs by hand
class PackBuilder:
    """Write a pack (and its v2 index) entry by entry, for bad-input tests.

    Ids are whatever the test says; nothing checks that they match the content,
    which is what lets a test build cycles and lies.
    """

    def __init__(self, fmt: ObjectFormat = SHA1) -> None:
        self.fmt = fmt
        self.body = bytearray()
        self.entries: list[tuple[bytes, int, int]] = []  # (oid, crc, offset)

    @property
    def next_offset(self) -> int:
        return 12 + len(self.body)

    def _add(self, oid: bytes, raw: bytes) -> int:
        off = self.next_offset
        self.body += raw
        self.entries.append((oid, compress.crc32(raw), off))
        return off

    def add_object(
        self,
        type_num: int,
        data: bytes,
        *,
        oid: bytes | None = None,
        declared_size: int | None = None,
        zdata: bytes | None = None,
    ) -> int:
        """A full object; ``declared_size``/``zdata`` let a test lie about it."""
        if oid is None:
            oid = hashlib.new(self.fmt.name, b"%d" % len(self.entries) + data).digest()
        size = len(data) if declared_size is None else declared_size
        z = compress.deflate(data) if zdata is None else zdata
        return self._add(oid, encode_entry_header(type_num, size) + z)

    def add_ofs_delta(self, base_offset: int, delta: bytes, *, oid: bytes) -> int:
        off = self.next_offset
        raw = (
            encode_entry_header(6, len(delta))
            + encode_ofs_distance(off - base_offset)
            + compress.deflate(delta)
        )
        return self._add(oid, raw)

    def add_ref_delta(self, base_oid: bytes, delta: bytes, *, oid: bytes) -> int:
        raw = encode_entry_header(7, len(delta)) + base_oid + compress.deflate(delta)
        return self._add(oid, raw)

    def write(self, pack_dir: Path, name: str = "pack-test") -> Path:
        """Write ``<name>.pack`` and ``<name>.idx`` into ``pack_dir``; return the pack path."""
        pack_dir.mkdir(parents=True, exist_ok=True)
        head = b"PACK" + (2).to_bytes(4, "big") + len(self.entries).to_bytes(4, "big")
        content = head + bytes(self.body)
        checksum = hashlib.new(self.fmt.name, content).digest()
        pack = pack_dir / f"{name}.pack"
        pack.write_bytes(content + checksum)
        (pack_dir / f"{name}.idx").write_bytes(write_index_v2(self.entries, checksum, self.fmt))
        return pack


def varint(n: int) -> bytes:
    """A delta-header size varint."""
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def make_delta(src_size: int, dst_size: int, ops: list[tuple[str, int, int] | bytes]) -> bytes:
    """A delta: ``("copy", offset, size)`` tuples and literal inserts (bytes)."""
    out = bytearray(varint(src_size) + varint(dst_size))
    for op in ops:
        if isinstance(op, bytes):
            out += bytes([len(op)]) + op
        else:
            _, off, size = op
            cmd = 0x80
            args = bytearray()
            for i in range(4):
                if (off >> (8 * i)) & 0xFF:
                    cmd |= 1 << i
                    args.append((off >> (8 * i)) & 0xFF)
            for i in range(3):
                if (size >> (8 * i)) & 0xFF:
                    cmd |= 0x10 << i
                    args.append((size >> (8 * i)) & 0xFF)
            out += bytes([cmd]) + args
    return bytes(out)
