"""Patch ids: a hash of what a change does, the same however it is committed.

Two ways in, as in Git:

- ``patch_ids_of_text(lines)`` reads patches as ``git patch-id`` does (the output
  of ``git log -p``, ``git show``, ``git format-patch``, ``git diff``) and gives
  ``(patch id, commit id)`` for each patch: every line of the diff, less
  whitespace, hashed, except the ``index`` lines, the ``@@`` hunk headers and
  ``\\ No newline at end of file``; a binary file counts as its two ids from the
  ``index`` line.  ``stable`` hashes each file on its own and adds the hashes
  (so reordering files keeps the id); ``verbatim`` keeps whitespace (and implies
  ``stable``).
- ``commit_patch_id(repo, commit)`` is Git's internal patch id of a commit
  against its parent (``diff_get_patch_id``, what ``rev-list --cherry-pick`` and
  ``format-patch --base`` use), computed from the tree diff and the line diff of
  ``gitodb.history.patch`` without formatting a patch: the paths, the mode lines
  and the hunk lines without their headers.  It equals ``git show --no-renames
  --no-indent-heuristic --full-index <commit> | git patch-id --stable`` (Git's
  internal diff has no rename detection and no indent heuristic, and hashes full
  ids for binary files).  A merge has no patch id (None), as in Git.

Ids use the repository's hash (SHA-1, or SHA-256 in a SHA-256 repository), as
Git's do.
"""

from __future__ import annotations

import re
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from gitodb.errors import GitodbError

if TYPE_CHECKING:
    from gitodb.repo import Repository

_SPACE = b" \t\n\r"  # Git's isspace()
_HEX = frozenset(b"0123456789abcdefABCDEF")
_NUMBER = re.compile(rb"[ \t\n\r\v\f]*[+-]?[0-9]+")
_NO_NEWLINE = b"\n\\ No newline at end of file\n"


def add_hash(result: bytearray, digest: bytes) -> None:
    """Git's ``flush_one_hunk``: add ``digest`` into ``result`` (bytes in order,
    each carrying into the next)."""
    carry = 0
    for i, b in enumerate(digest):
        carry += result[i] + b
        result[i] = carry & 0xFF
        carry >>= 8


def _strip(line: bytes) -> bytes:
    """Git's ``remove_space``: the line without its whitespace (up to a NUL)."""
    nul = line.find(b"\0")
    if nul >= 0:
        line = line[:nul]
    return line.translate(None, _SPACE)


def _oid_at(text: bytes, hexsz: int) -> bytes | None:
    """Git's ``get_oid_hex``: the id spelt by the first ``hexsz`` characters."""
    head = text[:hexsz]
    if len(head) != hexsz or not _HEX.issuperset(head):
        return None
    return bytes.fromhex(head.decode("ascii"))


def _hunk_counts(line: bytes) -> tuple[int | None, int | None, bool]:
    """Git's ``scan_hunk_header``: the old and new line counts of ``@@ -a,b +c,d``
    (a missing count is 1); a count that was set stays set when the rest is bad."""
    before: int | None = None
    after: int | None = None
    digits = re.compile(rb"[0-9]*")
    q = 4
    n = len(digits.match(line, q).group())  # type: ignore[union-attr]
    if line[q + n : q + n + 1] == b",":
        q += n + 1
        m = _NUMBER.match(line, q)
        if m is None or not -(2**31) <= int(m.group()) < 2**31:
            return before, after, False
        before = int(m.group())
        n = m.end() - q
    else:
        before = 1
    if n == 0 or line[q + n : q + n + 2] != b" +":
        return before, after, False
    r = q + n + 2
    n = len(digits.match(line, r).group())  # type: ignore[union-attr]
    if line[r + n : r + n + 1] == b",":
        r += n + 1
        m = _NUMBER.match(line, r)
        if m is None or not -(2**31) <= int(m.group()) < 2**31:
            return before, after, False
        after = int(m.group())
        n = m.end() - r
    else:
        after = 1
    return before, after, n != 0


def patch_ids_of_text(
    lines: Iterable[bytes],
    *,
    stable: bool = False,
    verbatim: bool = False,
    new_hash: Callable[[], Any] | None = None,
    hexsz: int = 40,
) -> Iterator[tuple[bytes, bytes]]:
    """``(patch id, commit id)`` of each patch in ``lines`` (each with its newline),
    as ``git patch-id`` prints them; the commit id is the one on the ``commit``
    or ``From`` line before the patch (zeros when there is none).  A patch with
    nothing hashed gives nothing."""
    import hashlib

    make = new_hash or hashlib.sha1
    it = iter(lines)
    oid = b"\0" * (hexsz // 2)
    done = False
    while not done:
        patchlen, result, nxt, done = _one_patch(it, stable, verbatim, make, hexsz)
        if patchlen:
            yield bytes(result), oid
        oid = nxt if nxt is not None else b"\0" * (hexsz // 2)


def _one_patch(
    it: Iterator[bytes], stable: bool, verbatim: bool, make: Callable[[], Any], hexsz: int
) -> tuple[int, bytearray, bytes | None, bool]:
    """Git's ``get_one_patchid``: read up to the next commit id (or the end)."""
    h = make()
    result = bytearray(h.digest_size)
    patchlen = 0
    before: int | None = -1
    after: int | None = -1
    binary = False
    pre = post = b""
    for line in it:
        if line.startswith(b"commit "):
            p = line[7:]
        elif line.startswith(b"From "):
            p = line[5:]
        else:
            p = line
            if line.startswith(b"\\ ") and len(line.split(b"\0", 1)[0]) > 12:
                if verbatim:
                    h.update(line.split(b"\0", 1)[0])
                continue
        nxt = _oid_at(p, hexsz)
        if nxt is not None:
            add_hash(result, h.digest())
            return patchlen, result, nxt, False
        if not patchlen and not line.startswith(b"diff "):
            continue  # the commit message, and anything else before a diff
        if before == -1:
            if line.startswith((b"GIT binary patch", b"Binary files")):
                binary = True
                before = 0
                h.update(pre)
                h.update(post)
                if stable:
                    add_hash(result, h.digest())
                    h = make()
                continue
            if line.startswith(b"index "):
                text = line.split(b"\0", 1)[0]
                dots = text.find(b"..")
                if dots >= 0:
                    end = text.find(b" ", dots)
                    if end < 0:
                        end = len(text) - 1
                    pre = text[6:dots][:hexsz]
                    post = text[dots + 2 : end][:hexsz]
                continue
            if line.startswith(b"--- "):
                before = after = 1
            elif not line[:1].isalpha():
                break
        if binary:
            if line.startswith(b"diff "):
                binary = False
                before = -1
            continue
        if before == 0 and after == 0:
            if line.startswith(b"@@ -"):
                before, after, _ok = _hunk_counts(line)
                continue
            if not line.startswith(b"diff "):
                break  # the end of the patch
            if stable:
                add_hash(result, h.digest())
                h = make()
            before = after = -1
        c = line[:1]
        if c in (b"-", b" ") and before is not None:
            before -= 1
        if c in (b"+", b" ") and after is not None:
            after -= 1
        data = line.split(b"\0", 1)[0] if verbatim else _strip(line)
        patchlen += len(data)
        h.update(data)
    else:
        add_hash(result, h.digest())
        return patchlen, result, None, True
    add_hash(result, h.digest())
    return patchlen, result, None, False


class CommitPatchIds:
    """Computes Git's internal patch ids of commits in one repository (reusing the
    attribute reader and the object reads); ``paths`` limits the diff like the
    pathspec of the walk does in Git."""

    def __init__(self, repo: Repository, paths: Sequence[bytes] = ()) -> None:
        self.repo = repo
        self.paths = list(paths)
        import hashlib

        # patch ids are not object ids: plain hashlib, no collision detection
        self._hasher: Callable[[], Any] = getattr(hashlib, repo.object_format.name)
        self._binary_attr: Callable[[bytes], bool] | None = None
        odb = repo.odb
        self._read: Callable[[bytes], bytes] = lambda oid: odb.read(oid)[1]

    def _binary(self, path: bytes) -> bool:
        if self._binary_attr is None:
            from gitodb.history.patch import binary_by_attributes

            self._binary_attr = binary_by_attributes(self.repo)
        try:
            return self._binary_attr(path)
        except GitodbError:
            return False  # a driver's hunk headers do not matter here: not binary

    def header_id(self, commit: bytes) -> bytes | None:
        """The id of the paths and modes only (Git's first, cheap comparison)."""
        return self._id(commit, header_only=True)

    def patch_id(self, commit: bytes) -> bytes | None:
        """The commit's patch id; None for a merge."""
        return self._id(commit, header_only=False)

    def _id(self, commit: bytes, header_only: bool) -> bytes | None:
        odb = self.repo.odb
        c = odb.commit(commit)
        if len(c.parents) > 1:
            return None
        old = odb.commit(c.parents[0]).tree if c.parents else None
        return self.of_trees(old, c.tree, header_only)

    def of_trees(self, old: bytes | None, new: bytes, header_only: bool = False) -> bytes:
        """The patch id of the change from tree ``old`` (None: empty) to ``new``."""
        from gitodb.history.treediff import diff_trees

        return self.of_changes(diff_trees(self.repo, old, new, self.paths), header_only)

    def of_changes(self, changes: Iterable[Any], header_only: bool = False) -> bytes:
        """Git's ``diff_get_patch_id`` over tree-diff changes."""
        h = self._hasher()
        result = bytearray(h.digest_size)
        for ch in changes:
            one_mode = ch.old_mode or 0
            two_mode = ch.new_mode or 0
            if stat.S_ISDIR(one_mode) or stat.S_ISDIR(two_mode):
                continue
            if one_mode == two_mode and ch.old_id == ch.new_id:
                continue
            path1 = _strip(getattr(ch, "old_path", None) or ch.path)
            path2 = _strip(ch.path)
            parts = [b"diff--gita/", path1, b"b/", path2]
            if not one_mode:
                parts.append(b"newfilemode%06o" % two_mode)
            elif not two_mode:
                parts.append(b"deletedfilemode%06o" % one_mode)
            elif one_mode != two_mode:
                parts.append(b"oldmode%06onewmode%06o" % (one_mode, two_mode))
            h.update(b"".join(parts))
            if not header_only:
                self._content(h, ch, one_mode, two_mode, path1, path2)
            add_hash(result, h.digest())
            h = self._hasher()
        return bytes(result)

    def _side(self, mode: int, oid: bytes | None) -> bytes:
        from gitodb.history.patch import side_content

        return side_content(mode, oid, self._read)

    def _content(
        self, h: Any, ch: Any, one_mode: int, two_mode: int, path1: bytes, path2: bytes
    ) -> None:
        """The rest of one file's hash: the ``---``/``+++`` lines and the hunk lines
        (without headers or whitespace), or both ids of a binary file."""
        from gitodb.history.linediff import diff_lines, split_lines
        from gitodb.history.patch import hunks, is_binary

        data1 = self._side(one_mode, ch.old_id)
        data2 = self._side(two_mode, ch.new_id)
        old_path = getattr(ch, "old_path", None) or ch.path
        if (one_mode and (self._binary(old_path) or is_binary(data1))) or (
            two_mode and (self._binary(ch.path) or is_binary(data2))
        ):
            null = "0" * (self.repo.object_format.hexsz)
            h.update((ch.old_id.hex() if one_mode and ch.old_id else null).encode())
            h.update((ch.new_id.hex() if two_mode and ch.new_id else null).encode())
            return
        if not one_mode:
            h.update(b"---/dev/null+++b/" + path2)
        elif not two_mode:
            h.update(b"---a/" + path1 + b"+++/dev/null")
        else:
            h.update(b"---a/" + path1 + b"+++b/" + path2)
        a = split_lines(data1)
        b = split_lines(data2)
        # Git's internal patch id diffs without the indent heuristic (xpp.flags 0)
        edits = diff_lines(a, b, indent_heuristic=False)
        for piece in hunks(a, b, edits, 3, 0):
            if piece[:1] == b"@":
                continue  # no hunk headers
            if piece.endswith(_NO_NEWLINE):
                piece = piece[: -len(_NO_NEWLINE)]
            h.update(piece.translate(None, _SPACE))


def commit_patch_id(repo: Repository, commit: Any, paths: Sequence[bytes] = ()) -> bytes | None:
    """Git's patch id of ``commit`` (a revision or id) against its parent, limited
    to ``paths``; None for a merge.  ``.hex()`` of it is what Git prints."""
    oid = repo._peeled(commit, "commit") if not isinstance(commit, bytes) else commit
    return CommitPatchIds(repo, paths).patch_id(oid)


def cherry_pick_list(
    repo: Repository, nodes: Sequence[Any], paths: Sequence[bytes] = (), mark: bool = False
) -> None:
    """Git's ``cherry_pick_list`` over the commits a symmetric-range walk listed:
    a commit on one side whose patch id some commit on the other side has is
    flagged, with those commits, ``PATCHSAME`` (``mark``, ``--cherry-mark``) or
    ``SHOWN`` (``--cherry-pick``: not shown).  Merges have no patch id.

    As in Git, the ids of the smaller side are taken first, keyed by the cheap id
    of paths and modes alone; the full id (which reads the blobs) is computed only
    for commits whose paths and modes match one of them.
    """
    from gitodb.history.graph import BOUNDARY, PATCHSAME, SHOWN, SYMMETRIC_LEFT

    listed = [n for n in nodes if not n.flags & BOUNDARY]
    left = sum(1 for n in listed if n.flags & SYMMETRIC_LEFT)
    if not left or left == len(listed):
        return
    left_first = left < len(listed) - left
    ids = CommitPatchIds(repo, paths)
    graph_node = listed[0].graph.node

    def trees(n: Any) -> tuple[bytes | None, bytes]:
        return (graph_node(n.parent_ids[0]).tree if n.parent_ids else None), n.tree

    full: dict[bytes, bytes] = {}

    def full_id(n: Any) -> bytes:
        got = full.get(n.id)
        if got is None:
            got = full[n.id] = ids.of_trees(*trees(n))
        return got

    table: dict[bytes, list[Any]] = {}
    for n in listed:
        if left_first != bool(n.flags & SYMMETRIC_LEFT) or len(n.parent_ids) > 1:
            continue
        table.setdefault(ids.of_trees(*trees(n), header_only=True), []).append(n)
    flag = PATCHSAME if mark else SHOWN
    for n in listed:
        if left_first == bool(n.flags & SYMMETRIC_LEFT) or len(n.parent_ids) > 1:
            continue
        candidates = table.get(ids.of_trees(*trees(n), header_only=True))
        if not candidates:
            continue
        pid = full_id(n)
        same = [c for c in candidates if full_id(c) == pid]
        if same:
            n.flags |= flag
            for c in same:
                c.flags |= flag
