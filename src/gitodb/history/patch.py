"""Unified diffs (``git diff-tree -p``), byte for byte as Git prints them.

Two levels:

- ``unified(old, new)`` formats the hunks between two byte strings: Git's line
  diff (``gitodb.history.linediff``), changes closer than twice the context
  merged into one hunk, ``@@ -a,b +c,d @@`` headers followed by the last line
  before the hunk that starts with a letter, ``_`` or ``$`` (Git's default
  function-name rule, cut to 80 bytes and stripped of trailing blanks), and
  ``\\ No newline at end of file`` after a last line without one.
- ``PatchFormatter.file_patch(change)`` formats one changed path of a tree diff
  (``TreeChange`` or ``RenameChange``) with Git's headers: ``diff --git``, new,
  deleted and changed modes, similarity and rename lines, ``index`` with
  abbreviated ids, ``---``/``+++`` labels (``/dev/null`` for a missing side),
  ``Binary files ... differ`` (a NUL in the first 8000 bytes, or the ``-diff``
  / ``binary`` attribute), symlinks as their target, submodules as
  ``Subproject commit <id>``, a file-type change as a deletion and an addition.

``diff(repo, old, new)`` is the library entry point: the changes between two
trees (or commits), each a ``FileDiff`` whose ``patch()`` gives its text::

    from gitodb.history.patch import diff
    for fd in diff(repo, "HEAD~1", "HEAD", renames=True):
        print(fd.status, fd.path.decode(), fd.numstat())
        sys.stdout.buffer.write(fd.patch())
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gitodb.history.linediff import Edit, diff_data, diff_lines, native_hunks, split_lines
from gitodb.objects.pretty import quote_path

if TYPE_CHECKING:
    from gitodb.repo import Repository

FIRST_FEW_BYTES = 8000  # Git looks this far for a NUL to call a file binary
FUNC_LINE_MAX = 80  # the hunk header's function name is cut to this many bytes
_S_IFGITLINK = 0o160000
_S_IFMT = 0o170000
_SPACE = b" \t\n\r"  # Git's isspace()
_NO_NEWLINE = b"\n\\ No newline at end of file\n"


def is_binary(data: bytes) -> bool:
    """Git's ``buffer_is_binary``: a NUL within the first 8000 bytes."""
    return b"\0" in data[:FIRST_FEW_BYTES]


def side_content(mode: int | None, oid: bytes | None, read_blob: Callable[[bytes], bytes]) -> bytes:
    """What a diff compares for one side of a change: nothing where the path is
    missing, ``Subproject commit <id>`` for a submodule, else the object's content."""
    if not mode or oid is None:
        return b""
    if mode == _S_IFGITLINK:
        return b"Subproject commit %s\n" % oid.hex().encode()
    return read_blob(oid)


# Git's built-in diff drivers (userdiff.c): each brings its own function-name
# pattern, which gitodb does not have.
_BUILTIN_DRIVERS = frozenset(
    "ada bash bibtex cpp csharp css dts elixir fortran fountain golang html ini java "
    "kotlin markdown matlab objc pascal perl php python r ruby rust scheme tex".split()
)


def binary_by_attributes(repo: Repository, work_tree: str | None = None) -> Callable[[bytes], bool]:
    """``path -> bool``: whether the ``diff`` attribute makes a path binary
    (``-diff``, the ``binary`` macro, or a driver with ``diff.<driver>.binary``).

    A driver that changes what a patch looks like (a built-in one, or one with
    ``funcname`` or ``xfuncname`` configured) raises ``GitodbError``: gitodb
    would print different hunk headers than Git, so it refuses instead.
    (``textconv`` is not applied by ``diff-tree`` unless asked for, so it is not
    looked at.)
    """
    from gitodb.errors import GitodbError
    from gitodb.repo.attributes import AttributeReader

    reader = AttributeReader(repo, repo.config, work_tree=work_tree)
    config = repo.config

    def check(path: bytes) -> bool:
        value = reader.attributes(path.decode("utf-8", "surrogateescape")).get("diff")
        if value is False:
            return True
        if not isinstance(value, str):
            return False
        for key in ("funcname", "xfuncname"):
            if config.get(f"diff.{value}.{key}") is not None:
                raise GitodbError(f"gitodb does not support diff.{value}.{key}")
        if value in _BUILTIN_DRIVERS:
            raise GitodbError(f"gitodb does not support the built-in diff driver '{value}'")
        return bool(config.get_bool(f"diff.{value}.binary", False))

    return check


def _func_name(line: bytes) -> bytes | None:
    """Git's default ``find_func``: the line, if it starts like an identifier."""
    if not line:
        return None
    c = line[0]
    if not (65 <= c <= 90 or 97 <= c <= 122 or c == 95 or c == 36):
        return None
    got = line[:FUNC_LINE_MAX].rstrip(_SPACE)
    return got if got.isascii() else got[: utf8_prefix(got)]


def utf8_prefix(data: bytes) -> int:
    """The length of the longest prefix of ``data`` that is valid UTF-8 by Git's
    rules (no overlong forms, surrogates, U+FFFE/U+FFFF or code points past
    U+10FFFF); Git cuts a hunk header's function name there."""
    i = 0
    n = len(data)
    while i < n:
        c = data[i]
        if c < 0x80:
            i += 1
            continue
        if c & 0xE0 == 0xC0:
            size = 2
            ok = c & 0xFE != 0xC0
        elif c & 0xF0 == 0xE0:
            size = 3
            ok = True
        elif c & 0xF8 == 0xF0:
            size = 4
            ok = c <= 0xF4
        else:
            return i
        if i + size > n or not ok or any(b & 0xC0 != 0x80 for b in data[i + 1 : i + size]):
            return i
        c1 = data[i + 1]
        if size == 3 and (
            (c == 0xE0 and c1 & 0xE0 == 0x80)  # overlong
            or (c == 0xED and c1 & 0xE0 == 0xA0)  # surrogate
            or (c == 0xEF and c1 == 0xBF and data[i + 2] & 0xFE == 0xBE)  # U+FFFE, U+FFFF
        ):
            return i
        if size == 4 and ((c == 0xF0 and c1 & 0xF0 == 0x80) or (c == 0xF4 and c1 > 0x8F)):
            return i
        i += size
    return n


def _range(start: int, count: int) -> bytes:
    if count == 1:
        return b"%d" % start
    return b"%d,%d" % (start if count else start - 1, count)


def _trim_common_tail(a: bytes, b: bytes) -> tuple[bytes, bytes]:
    """Git's ``trim_common_tail`` (only with no context): drop equal 1 KiB blocks
    at the end, keeping the rest of the line the cut falls in."""
    blk = 1024
    trimmed = 0
    smaller = min(len(a), len(b))
    la, lb = len(a), len(b)
    while (
        blk + trimmed <= smaller
        and a[la - trimmed - blk : la - trimmed] == (b[lb - trimmed - blk : lb - trimmed])
    ):
        trimmed += blk
    recovered = 0
    ap = la - trimmed
    while recovered < trimmed:
        recovered += 1
        if a[ap + recovered - 1] == 10:
            break
    cut = trimmed - recovered
    return a[: la - cut], b[: lb - cut]


def hunks(
    a: Sequence[bytes],
    b: Sequence[bytes],
    edits: Sequence[Edit],
    context: int = 3,
    inter_hunk: int = 0,
) -> list[bytes]:
    """The hunks (header and lines, as byte strings in order) of ``edits`` between
    lines ``a`` and ``b``: Git's ``xdl_emit_diff`` with function names."""
    out: list[bytes] = []
    add = out.append
    n1 = len(a)
    n2 = len(b)
    max_common = 2 * context + inter_hunk
    func = b""
    func_prev = -1
    k = 0
    count = len(edits)
    while k < count:
        first = edits[k]
        j = k + 1
        while j < count:
            prev = edits[j - 1]
            if edits[j].i1 - (prev.i1 + prev.n1) > max_common:
                break
            j += 1
        last = edits[j - 1]
        s1 = max(first.i1 - context, 0)
        s2 = max(first.i2 - context, 0)
        lctx = min(context, n1 - (last.i1 + last.n1), n2 - (last.i2 + last.n2))
        e1 = last.i1 + last.n1 + lctx
        e2 = last.i2 + last.n2 + lctx
        # The function line: searched back from the hunk to where the previous
        # hunk's search began; when nothing is found the previous one stays.
        line = s1 - 1
        while line > func_prev and line >= 0:
            got = _func_name(a[line])
            if got is not None:
                func = got
                break
            line -= 1
        func_prev = s1 - 1
        header = b"@@ -%s +%s @@" % (_range(s1 + 1, e1 - s1), _range(s2 + 1, e2 - s2))
        add(header + b" " + func + b"\n" if func else header + b"\n")
        _lines(out, b" ", b, s2, first.i2)
        s1 = first.i1
        s2 = first.i2
        for e in edits[k:j]:
            # the unchanged lines since the previous change of the hunk
            gap = min(e.i1 - s1, e.i2 - s2)
            if gap > 0:
                _lines(out, b" ", b, s2, s2 + gap)
            _lines(out, b"-", a, e.i1, e.i1 + e.n1)
            _lines(out, b"+", b, e.i2, e.i2 + e.n2)
            s1 = e.i1 + e.n1
            s2 = e.i2 + e.n2
        _lines(out, b" ", b, last.i2 + last.n2, e2)
        k = j
    return out


def _lines(out: list[bytes], sign: bytes, lines: Sequence[bytes], start: int, end: int) -> None:
    """Lines ``start`` to ``end`` with ``sign`` before each; only the last line of a
    file can lack its newline, and gets Git's marker after it."""
    if start >= end:
        return
    if end == len(lines) and not lines[end - 1].endswith(b"\n"):
        if end - 1 > start:
            out.append(sign + sign.join(lines[start : end - 1]))
        out.append(sign + lines[end - 1] + _NO_NEWLINE)
    else:
        out.append(sign + sign.join(lines[start:end]))


def unified(
    old: bytes,
    new: bytes,
    *,
    context: int = 3,
    inter_hunk: int = 0,
    indent_heuristic: bool = True,
    minimal: bool = False,
    whitespace: int = 0,
) -> bytes:
    """The hunks of a unified diff from ``old`` to ``new`` (no file headers);
    ``whitespace``: ``linediff.WS_*`` flags (``-w``, ``-b``, ...)."""
    if context == 0:
        old, new = _trim_common_tail(old, new)
    return _hunk_text(old, new, context, inter_hunk, indent_heuristic, minimal, whitespace)


def _hunk_text(
    old: bytes,
    new: bytes,
    context: int,
    inter_hunk: int,
    indent_heuristic: bool,
    minimal: bool,
    whitespace: int = 0,
) -> bytes:
    """All the hunks of two files (``b""``: no change), in the native core when it
    is in use (and no whitespace is ignored), else through ``diff_lines`` and
    ``hunks``: unchanged lines are written as the new side has them, as xdiff does."""
    if not whitespace:
        body = native_hunks(
            old, new, context, inter_hunk, indent_heuristic=indent_heuristic, minimal=minimal
        )
        if body is not None:
            return body
    a = split_lines(old)
    b = split_lines(new)
    edits = diff_lines(
        a, b, indent_heuristic=indent_heuristic, minimal=minimal, whitespace=whitespace
    )
    return b"".join(hunks(a, b, edits, context, inter_hunk))


@dataclass
class PatchOptions:
    """How patches are written (the diff options of ``git diff-tree -p``)."""

    context: int = 3  # -U<n>
    inter_hunk: int = 0  # --inter-hunk-context
    src_prefix: bytes = b"a/"
    dst_prefix: bytes = b"b/"
    reverse: bool = False  # -R: the prefixes follow the sides
    text: bool = False  # -a: no binary detection
    indent_heuristic: bool = True
    minimal: bool = False
    quote_fully: bool = True  # core.quotePath
    abbrev: Callable[[bytes], str] | None = None  # index-line ids; None: full
    hexsz: int = 40
    binary: bool = False  # --binary: binary files as Git's binary patch
    whitespace: int = 0  # -w, -b, ...: linediff.WS_* flags
    compression: int = 1  # the binary patch's zlib level (core.looseCompression)


class _Side:
    """One side of a file pair: mode (0: missing), id and path."""

    __slots__ = ("mode", "oid", "path")

    def __init__(self, mode: int, oid: bytes | None, path: bytes) -> None:
        self.mode = mode
        self.oid = oid
        self.path = path

    @property
    def valid(self) -> bool:
        return self.mode != 0


class PatchFormatter:
    """Formats the patches of tree-diff changes; ``read_blob(oid)`` gives a blob's
    bytes, ``binary_attr(path)`` whether attributes say ``-diff`` (optional)."""

    def __init__(
        self,
        read_blob: Callable[[bytes], bytes],
        options: PatchOptions | None = None,
        binary_attr: Callable[[bytes], bool] | None = None,
    ) -> None:
        self.read_blob = read_blob
        self.o = options or PatchOptions()
        self.binary_attr = binary_attr
        self.null = b"\0" * (self.o.hexsz // 2)

    def _content(self, side: _Side) -> bytes:
        if not side.valid:
            return b""
        return side_content(side.mode, side.oid, self.read_blob)

    def _abbrev(self, oid: bytes | None) -> bytes:
        oid = oid or self.null
        if self.o.abbrev is None:
            return oid.hex().encode()
        return self.o.abbrev(oid).encode()

    def _quote(self, prefix: bytes, name: bytes) -> bytes:
        return quote_path(prefix + name, self.o.quote_fully)

    def _is_binary(self, side: _Side, data: bytes) -> bool:
        if not side.valid:
            return False
        if self.binary_attr is not None and self.binary_attr(side.path):
            return True
        return is_binary(data)

    def file_patch(self, change: Any) -> bytes:
        """The patch text of one change (``TreeChange``/``RenameChange``); empty for
        trees (Git shows no tree diffs in patches)."""
        old_mode = change.old_mode or 0
        new_mode = change.new_mode or 0
        if stat.S_ISDIR(old_mode) or stat.S_ISDIR(new_mode):
            return b""
        old_path = getattr(change, "old_path", None) or change.path
        one = _Side(old_mode, change.old_id, old_path)
        two = _Side(new_mode, change.new_id, change.path)
        if one.valid and two.valid and (old_mode ^ new_mode) & _S_IFMT:
            # A file that became a symlink (or the like) is shown as a deletion
            # and a creation.
            return self._pair(one, _Side(0, None, two.path), change) + self._pair(
                _Side(0, None, one.path), two, change
            )
        return self._pair(one, two, change)

    def _meta(
        self, one: _Side, two: _Side, change: Any, full_index: bool = False
    ) -> tuple[bytes, bool]:
        """Git's ``fill_metainfo``: similarity/rename lines and the index line
        (``full_index``: whole ids, as Git writes them for a binary patch)."""
        out = b""
        must_show = False
        status = change.status
        if status in ("R", "C"):
            must_show = True
            verb = b"rename" if status == "R" else b"copy"
            out += b"similarity index %d%%\n%s from %s\n%s to %s\n" % (
                change.similarity,
                verb,
                quote_path(one.path, self.o.quote_fully),
                verb,
                quote_path(two.path, self.o.quote_fully),
            )
        a = one.oid if one.valid else None
        b = two.oid if two.valid else None
        if (a or self.null) != (b or self.null):
            if full_index:
                out += b"index %s..%s" % (
                    (a or self.null).hex().encode(),
                    (b or self.null).hex().encode(),
                )
            else:
                out += b"index %s..%s" % (self._abbrev(a), self._abbrev(b))
            if one.mode == two.mode:
                out += b" %06o" % one.mode
            out += b"\n"
        return out, must_show

    def _pair(self, one: _Side, two: _Side, change: Any) -> bytes:
        o = self.o
        a_prefix, b_prefix = (
            (o.dst_prefix, o.src_prefix) if o.reverse else (o.src_prefix, o.dst_prefix)
        )
        a_one = self._quote(a_prefix, one.path)
        b_two = self._quote(b_prefix, two.path)
        lbl0 = a_one if one.valid else b"/dev/null"
        lbl1 = b_two if two.valid else b"/dev/null"
        data: tuple[bytes, bytes] | None = None
        full_index = False
        if o.binary and not (one.valid and two.valid and (one.mode ^ two.mode) & _S_IFMT):
            # With --binary, a binary side makes the index line show whole ids.
            data = self._content(one), self._content(two)
            full_index = self._is_binary(one, data[0]) or self._is_binary(two, data[1])
        meta, must_show = self._meta(one, two, change, full_index)
        header = b"diff --git %s %s\n" % (a_one, b_two)
        if not one.valid:
            header += b"new file mode %06o\n" % two.mode + meta
            must_show = True
        elif not two.valid:
            header += b"deleted file mode %06o\n" % one.mode + meta
            must_show = True
        else:
            if one.mode != two.mode:
                header += b"old mode %06o\nnew mode %06o\n" % (one.mode, two.mode)
                must_show = True
            header += meta
            if (one.mode ^ two.mode) & _S_IFMT:
                return header
        data1, data2 = data if data is not None else (self._content(one), self._content(two))
        if not o.text and (self._is_binary(one, data1) or self._is_binary(two, data2)):
            if data1 == data2 and one.valid == two.valid:
                return header if must_show else b""
            if o.binary:
                from gitodb.history.binpatch import binary_patch

                return header + binary_patch(data1, data2, o.compression)
            return header + b"Binary files %s and %s differ\n" % (lbl0, lbl1)
        if o.context == 0:
            data1, data2 = _trim_common_tail(data1, data2)
        body = _hunk_text(
            data1, data2, o.context, o.inter_hunk, o.indent_heuristic, o.minimal, o.whitespace
        )
        if not body:
            return header if must_show else b""
        tab0 = b"\t" if b" " in lbl0 else b""
        tab1 = b"\t" if b" " in lbl1 else b""
        return b"".join([header, b"--- %s%s\n+++ %s%s\n" % (lbl0, tab0, lbl1, tab1), body])


def line_counts(
    change: Any, read_blob: Callable[[bytes], bytes], text: bool = False
) -> tuple[int, int] | None:
    """Lines added and deleted by a change (``--numstat``), None for binary files."""
    sides = [
        side_content(change.old_mode, change.old_id, read_blob),
        side_content(change.new_mode, change.new_id, read_blob),
    ]
    if not text and (is_binary(sides[0]) or is_binary(sides[1])):
        return None
    edits = diff_data(sides[0], sides[1])
    return sum(e.n2 for e in edits), sum(e.n1 for e in edits)


class FileDiff:
    """One changed path between two trees, with its patch on demand.

    ``status`` is Git's letter (A, D, M, T, R), ``path`` the new path (the old one
    for a deletion) and ``old_path`` the source of a rename; ``change`` is the
    underlying ``TreeChange``/``RenameChange``.
    """

    def __init__(self, repo: Repository, change: Any) -> None:
        self.repo = repo
        self.change = change

    @property
    def status(self) -> str:
        return str(self.change.status)

    @property
    def path(self) -> bytes:
        return bytes(self.change.path)

    @property
    def old_path(self) -> bytes:
        return bytes(getattr(self.change, "old_path", None) or self.change.path)

    def __repr__(self) -> str:
        return f"FileDiff({self.status} {self.path!r})"

    def _read(self, oid: bytes) -> bytes:
        return self.repo.odb.read(oid)[1]

    def patch(self, options: PatchOptions | None = None, **kwargs: Any) -> bytes:
        """The patch text, as ``git diff-tree -p`` prints it for this path.

        Options are a ``PatchOptions`` or its fields as keywords (``context=5``,
        ``text=True``, ...); ids on the ``index`` line are abbreviated like Git's
        default unless ``abbrev`` says otherwise.
        """
        if options is None:
            from gitodb.repo.abbrev import Abbreviator, default_abbrev

            repo = self.repo
            kwargs.setdefault("abbrev", Abbreviator(repo, default_abbrev(repo)))
            kwargs.setdefault("hexsz", repo.object_format.hexsz)
            options = PatchOptions(**kwargs)
        return PatchFormatter(
            self._read, options, binary_attr=binary_by_attributes(self.repo)
        ).file_patch(self.change)

    unified = patch

    def numstat(self) -> tuple[int, int] | None:
        """(lines added, lines deleted), or None for a binary file."""
        return line_counts(self.change, self._read)


def diff(
    repo: Repository,
    old: Any,
    new: Any,
    paths: Sequence[bytes] = (),
    *,
    renames: bool | int = False,
    rename_limit: int = 1000,
) -> list[FileDiff]:
    """The changed files from ``old`` to ``new`` (revisions, commit or tree ids,
    or None for the empty tree), recursively, in Git's order.  ``renames``:
    detect renames (True: Git's default 50%; an int: the minimum score of 60000)."""
    from gitodb.history.renames import DEFAULT_MIN_SCORE, detect_renames
    from gitodb.history.treediff import diff_trees

    def tree_of(rev: Any) -> bytes | None:
        if rev is None:
            return None
        return repo._peeled(rev, "tree")

    changes: list[Any] = diff_trees(repo, tree_of(old), tree_of(new), paths)
    if renames is not False:
        minimum = DEFAULT_MIN_SCORE if renames is True else int(renames)
        changes = detect_renames(
            changes, lambda oid: repo.odb.read(oid)[1], minimum=minimum, limit=rename_limit
        )
    return [FileDiff(repo, c) for c in changes]
