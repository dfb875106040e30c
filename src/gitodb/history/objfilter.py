"""Object filters in a walk: Git's ``list-objects-filter.c`` and the filtered traversal.

``rev-list --objects --filter=<spec>`` lists trees and blobs through a filter that
is asked at each step — a tree begins (``BEGIN_TREE``), a tree ends
(``END_TREE``), a blob, a commit, a tag — and answers with Git's bits:
``MARK_SEEN`` (never ask about this object again), ``DO_SHOW`` (list it),
``SKIP_TREE`` (do not open the tree).  The filters are Git's:

- ``blob:none`` omits every blob; ``blob:limit=<n>`` the blobs of ``n`` bytes or
  more (a blob whose size is unknown is shown);
- ``tree:<depth>`` omits trees and blobs ``depth`` levels down or deeper (the
  root tree is level 0); an object seen deep is asked about again when it is
  reached higher up;
- ``object:type=<type>`` lists only objects of that type (trees are not opened
  for ``commit``/``tag``);
- ``sparse:oid=<blob-ish>`` keeps the blobs a sparse-checkout pattern file
  (non-cone, gitignore syntax) includes;
- ``combine:`` shows what every part shows, each part keeping its own seen set.

Objects named on the command line are not filtered unless
``filter_provided`` (``--filter-provided-objects``).  Omitted objects are
collected (``--filter-print-omitted``) in an ``OidSet``, which iterates in the
order Git's ``oidset`` (khash) does, so ``~<id>`` lines come out as Git prints
them.  Missing objects are reported per ``missing`` (``error``, ``allow-any``,
``allow-promisor``, ``print``, ``print-info``) with Git's messages.
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING

from gitodb.errors import BadRevisionError, GitodbError, ObjectNotFoundError, TreeDepthError
from gitodb.history.treewalk import entry_interesting
from gitodb.objects.filter import ObjectFilter, trace
from gitodb.objects.tree import max_tree_depth, parse_entries
from gitodb.refs.wildmatch import wildmatch

if TYPE_CHECKING:
    from gitodb.history.revwalk import RevWalk
    from gitodb.repo import Repository

ZERO, MARK_SEEN, DO_SHOW, SKIP_TREE = 0, 1, 2, 4
BEGIN_TREE, END_TREE, BLOB, COMMIT, TAG = "begin", "end", "blob", "commit", "tag"
MISSING_ACTIONS = ("error", "allow-any", "allow-promisor", "print", "print-info")
#: Git's DEFAULT_OIDSET_SIZE, the size rev-list gives its omitted set
OMITS_SIZE = 16 * 1024
_PATTERN_BLOB_MAX = 100 * 1024 * 1024


class OidSet:
    """A set of object ids that iterates like Git's ``oidset`` (khash, hash = the
    first four bytes of the id, quadratic probing, in-place rehash)."""

    _EMPTY, _DELETED, _USED = 2, 1, 0

    def __init__(self, initial: int = 0) -> None:
        self.n_buckets = 0
        self.size = 0
        self._occupied = 0
        self._upper = 0
        self._keys: list[bytes | None] = []
        self._flags: list[int] = []
        if initial:
            self._resize(initial)

    @staticmethod
    def _hash(oid: bytes) -> int:
        return int.from_bytes(oid[:4], "little")

    def _resize(self, want: int) -> None:
        want -= 1
        for s in (1, 2, 4, 8, 16):
            want |= want >> s
        want = max(want + 1, 4)
        if self.size >= int(want * 0.77 + 0.5):
            return
        new_flags = [self._EMPTY] * want
        if self.n_buckets < want:
            self._keys += [None] * (want - self.n_buckets)
            self._flags += [self._EMPTY] * (want - self.n_buckets)
        mask = want - 1
        keys, flags, old_n = self._keys, self._flags, self.n_buckets
        for j in range(old_n):
            if flags[j] != self._USED:
                continue
            key = keys[j]
            flags[j] = self._DELETED
            while True:  # khash's kick-out rehash
                assert key is not None
                i = self._hash(key) & mask
                step = 0
                while new_flags[i] != self._EMPTY:
                    step += 1
                    i = (i + step) & mask
                new_flags[i] = self._USED
                if i < old_n and flags[i] == self._USED:
                    key, keys[i] = keys[i], key
                    flags[i] = self._DELETED
                else:
                    keys[i] = key
                    break
        del keys[want:]
        self._flags = new_flags
        self.n_buckets = want
        self._occupied = self.size
        self._upper = int(want * 0.77 + 0.5)

    def _find(self, oid: bytes) -> int:
        if not self.n_buckets:
            return -1
        mask = self.n_buckets - 1
        i = last = self._hash(oid) & mask
        step = 0
        flags, keys = self._flags, self._keys
        while flags[i] != self._EMPTY and (flags[i] == self._DELETED or keys[i] != oid):
            step += 1
            i = (i + step) & mask
            if i == last:
                return -1
        return i if flags[i] == self._USED else -1

    def __contains__(self, oid: object) -> bool:
        return isinstance(oid, bytes) and self._find(oid) >= 0

    def __len__(self) -> int:
        return self.size

    def add(self, oid: bytes) -> bool:
        """Insert ``oid``; True if it was there already (Git's ``oidset_insert``)."""
        if self._occupied >= self._upper:
            self._resize(
                self.n_buckets - 1 if self.n_buckets > (self.size << 1) else self.n_buckets + 1
            )
        n = self.n_buckets
        mask = n - 1
        flags, keys = self._flags, self._keys
        i = self._hash(oid) & mask
        x = site = n
        if flags[i] == self._EMPTY:
            x = i
        else:
            last = i
            step = 0
            while flags[i] != self._EMPTY and (flags[i] == self._DELETED or keys[i] != oid):
                if flags[i] == self._DELETED:
                    site = i
                step += 1
                i = (i + step) & mask
                if i == last:
                    x = site
                    break
            if x == n:
                x = site if flags[i] == self._EMPTY and site != n else i
        if flags[x] == self._USED:
            return True
        if flags[x] == self._EMPTY:
            self._occupied += 1
        keys[x] = oid
        flags[x] = self._USED
        self.size += 1
        return False

    def remove(self, oid: bytes) -> bool:
        """Remove ``oid``; True if it was there (Git's ``oidset_remove``)."""
        i = self._find(oid)
        if i < 0:
            return False
        self._flags[i] = self._DELETED
        self.size -= 1
        return True

    def __iter__(self) -> Iterator[bytes]:
        for i in range(self.n_buckets):
            if self._flags[i] == self._USED:
                key = self._keys[i]
                assert key is not None
                yield key


# -- sparse-checkout patterns (non-cone), as Git's dir.c matches them ----------------
class _Pattern:
    __slots__ = ("text", "negative", "must_be_dir", "no_dir", "literal")

    def __init__(self, line: str) -> None:
        self.negative = line.startswith("!")
        if self.negative:
            line = line[1:]
        self.must_be_dir = line.endswith("/")
        if self.must_be_dir:
            line = line[:-1]
        self.no_dir = "/" not in line
        if not self.no_dir and line.startswith("/"):
            line = line[1:]
        self.text = line
        self.literal = not any(c in line for c in "*?[\\")

    def matches(self, path: str, basename: str, is_dir: bool) -> bool:
        if self.must_be_dir and not is_dir:
            return False
        if self.no_dir:
            if self.literal:
                return basename == self.text
            return wildmatch(self.text, basename)
        if self.literal:
            return path == self.text
        return wildmatch(self.text, path, pathname=True)


def _strip_trailing_spaces(line: str) -> str:
    end = len(line)
    while end and line[end - 1] == " " and not (end > 1 and line[end - 2] == "\\"):
        end -= 1
    return line[:end]


def parse_patterns(data: bytes) -> list[_Pattern]:
    """The patterns of a sparse-checkout (gitignore-syntax) file."""
    out = []
    text = data.decode("utf-8", "surrogateescape")
    if text.startswith("\ufeff"):
        text = text[1:]
    for line in text.split("\n"):
        line = line.rstrip("\r")
        if not line or line.startswith("#"):
            continue
        line = _strip_trailing_spaces(line)
        if line:
            out.append(_Pattern(line))
    return out


# -- the filters ----------------------------------------------------------------------
class _Filter(ABC):
    """One filter; ``omits`` collects the omitted ids when asked to."""

    def __init__(self, omits: OidSet | None) -> None:
        self.omits = omits

    @abstractmethod
    def __call__(self, situation: str, oid: bytes, path: str, name: str) -> int:
        """Git's filter callback: what to do with ``oid`` met in ``situation``."""

    def finish(self) -> None:  # noqa: B027 (a hook: only combine: has parts to merge)
        """Git's ``finalize_omits``: merge what the parts collected."""


class _BlobsNone(_Filter):
    def __call__(self, situation: str, oid: bytes, path: str, name: str) -> int:
        if situation == END_TREE:
            return ZERO
        if situation == BLOB:
            if self.omits is not None:
                self.omits.add(oid)
            return MARK_SEEN
        return MARK_SEEN | DO_SHOW


class _BlobsLimit(_Filter):
    def __init__(self, omits: OidSet | None, repo: Repository, limit: int) -> None:
        super().__init__(omits)
        self.repo = repo
        self.limit = limit

    def __call__(self, situation: str, oid: bytes, path: str, name: str) -> int:
        if situation == END_TREE:
            return ZERO
        if situation != BLOB:
            return MARK_SEEN | DO_SHOW
        try:
            type_name, size = self.repo.odb.read_header(oid)
        except ObjectNotFoundError:
            type_name, size = "", 0
        if type_name == "blob" and size >= self.limit:
            if self.omits is not None:
                self.omits.add(oid)
            return MARK_SEEN
        # not a blob we have (or small enough): shown, as Git cannot judge it
        if self.omits is not None:
            self.omits.remove(oid)
        return MARK_SEEN | DO_SHOW


class _TreesDepth(_Filter):
    def __init__(self, omits: OidSet | None, depth: int) -> None:
        super().__init__(omits)
        self.exclude_depth = depth
        self.current = 0
        self.seen_at: dict[bytes, int] = {}

    def _update_omits(self, oid: bytes, include: bool) -> bool:
        if self.omits is None:
            return False
        return self.omits.remove(oid) if include else self.omits.add(oid)

    def __call__(self, situation: str, oid: bytes, path: str, name: str) -> int:
        # No MARK_SEEN for trees and blobs: one seen deep may be reached higher up.
        include = self.current < self.exclude_depth
        if situation == END_TREE:
            self.current -= 1
            return ZERO
        if situation == BLOB:
            self._update_omits(oid, include)
            return MARK_SEEN | DO_SHOW if include else ZERO
        if situation != BEGIN_TREE:
            return MARK_SEEN | DO_SHOW
        depth = self.seen_at.get(oid)
        if depth is None:
            self.seen_at[oid] = self.current
            already = False
        else:
            already = self.current >= depth
        if already:
            result = SKIP_TREE
        else:
            omitted_before = self._update_omits(oid, include)
            self.seen_at[oid] = self.current
            if include:
                result = DO_SHOW
            elif self.omits is not None and not omitted_before:
                result = ZERO  # its children have to be marked omitted too
            else:
                result = SKIP_TREE
        self.current += 1
        return result


class _ObjectType(_Filter):
    def __init__(self, omits: OidSet | None, type_name: str) -> None:
        super().__init__(omits)
        self.type_name = type_name

    def __call__(self, situation: str, oid: bytes, path: str, name: str) -> int:
        want = self.type_name
        if situation == END_TREE:
            return ZERO
        if situation == BEGIN_TREE:
            if want in ("commit", "tag"):
                return SKIP_TREE
            return MARK_SEEN | DO_SHOW if want == "tree" else MARK_SEEN
        return MARK_SEEN | DO_SHOW if want == situation else MARK_SEEN


class _Sparse(_Filter):
    def __init__(self, omits: OidSet | None, repo: Repository, name: str) -> None:
        super().__init__(omits)
        from gitodb.repo.revparse import resolve_full

        try:
            oid = resolve_full(repo, name).oid
            type_name, size = repo.odb.read_header(oid)
        except (BadRevisionError, ObjectNotFoundError, GitodbError):
            raise GitodbError(f"unable to access sparse blob in '{name}'") from None
        if type_name != "blob":
            raise GitodbError(f"unable to parse sparse filter data in {oid.hex()}")
        if size > _PATTERN_BLOB_MAX:
            sys.stderr.write(f"warning: ignoring excessively large pattern blob: {oid.hex()}\n")
            raise GitodbError(f"unable to parse sparse filter data in {oid.hex()}")
        self.patterns = parse_patterns(repo.odb.read(oid)[1])
        # frames: [default match, a child provisionally omitted]; the root's default
        # is "not matched"
        self.frames: list[list[int]] = [[0, 0]]
        self.shown_trees: set[bytes] = set()

    def _match(self, path: str, name: str, is_dir: bool) -> int:
        """1 matched, 0 not matched, -1 undecided (Git's path_matches_pattern_list)."""
        for p in reversed(self.patterns):
            if p.matches(path, name, is_dir):
                return 0 if p.negative else 1
        return -1

    def __call__(self, situation: str, oid: bytes, path: str, name: str) -> int:
        if situation == BEGIN_TREE:
            match = self._match(path, name, True)
            if match < 0:
                match = self.frames[-1][0]
            self.frames.append([match, 0])
            # a tree may be reached again by another path: shown once, never "seen"
            if oid in self.shown_trees:
                return ZERO
            self.shown_trees.add(oid)
            return DO_SHOW
        if situation == END_TREE:
            frame = self.frames.pop()
            self.frames[-1][1] |= frame[1]
            return ZERO if frame[1] else MARK_SEEN
        if situation == BLOB:
            frame = self.frames[-1]
            match = self._match(path, name, False)
            if match < 0:
                match = frame[0]
            if match == 1:
                if self.omits is not None:
                    self.omits.remove(oid)
                return MARK_SEEN | DO_SHOW
            # provisionally omitted: the blob may be reached by a path that keeps it
            if self.omits is not None:
                self.omits.add(oid)
            frame[1] = 1
            return ZERO
        return MARK_SEEN | DO_SHOW


class _Sub:
    __slots__ = ("filter", "seen", "skipping", "omits")

    def __init__(self, flt: _Filter, omits: OidSet | None) -> None:
        self.filter = flt
        self.omits = omits
        self.seen: set[bytes] = set()
        self.skipping: bytes | None = None


class _Combine(_Filter):
    def __init__(self, omits: OidSet | None, subs: list[_Sub]) -> None:
        super().__init__(omits)
        self.subs = subs

    def __call__(self, situation: str, oid: bytes, path: str, name: str) -> int:
        combined = DO_SHOW | MARK_SEEN | SKIP_TREE
        for sub in self.subs:
            if sub.skipping is not None:
                if situation == END_TREE and sub.skipping == oid:
                    sub.skipping = None
                else:
                    combined &= ~(DO_SHOW | MARK_SEEN | SKIP_TREE)
                    continue
            if oid in sub.seen:
                combined &= ~(DO_SHOW | MARK_SEEN | SKIP_TREE)
                continue
            r = sub.filter(situation, oid, path, name)
            if r & MARK_SEEN:
                sub.seen.add(oid)
            if r & SKIP_TREE:
                sub.skipping = oid
            combined &= r | ~(DO_SHOW | MARK_SEEN | SKIP_TREE)
        return combined

    def finish(self) -> None:
        for sub in self.subs:
            sub.filter.finish()
            if self.omits is not None and sub.omits is not None:
                for oid in sub.omits:
                    self.omits.add(oid)


def build_filter(spec: ObjectFilter, repo: Repository, omits: OidSet | None) -> _Filter:
    """The walk-time filter of ``spec``, collecting omitted ids into ``omits``."""
    if spec.kind == "blob:none":
        return _BlobsNone(omits)
    if spec.kind == "blob:limit":
        return _BlobsLimit(omits, repo, spec.limit)
    if spec.kind == "tree":
        return _TreesDepth(omits, spec.limit)
    if spec.kind == "object:type":
        return _ObjectType(omits, spec.value)
    if spec.kind == "sparse:oid":
        return _Sparse(omits, repo, spec.value)
    subs = []
    for part in spec.parts:
        sub_omits = OidSet() if omits is not None else None
        subs.append(_Sub(build_filter(part, repo, sub_omits), sub_omits))
    return _Combine(omits, subs)


class MissingObjects:
    """What ``--missing=`` does when an object is not in the repository."""

    def __init__(self, action: str) -> None:
        if action not in MISSING_ACTIONS:
            raise GitodbError("invalid value for '--missing'")
        self.action = action
        self.found: dict[bytes, tuple[str, str]] = {}  # id -> (path, type)

    def handle(self, oid: bytes, type_name: str, path: str) -> None:
        """An object to list is missing: die, allow it, or remember it for printing."""
        if self.action == "error":
            raise GitodbError(f"missing {type_name} object '{oid.hex()}'")
        if self.action == "allow-promisor":
            raise GitodbError(f"unexpected missing {type_name} object '{oid.hex()}'")
        if self.action in ("print", "print-info"):
            self.found.setdefault(oid, (path, type_name))

    def lines(self, nul: bool = False) -> list[bytes]:
        """The ``?<id>`` lines (with ``path=``/``type=`` for print-info); with ``nul``
        (``-z``) ``<id>NUL missing=yes NUL`` and NUL-ended fields."""
        if self.action not in ("print", "print-info"):
            return []
        out = []
        info = self.action == "print-info"
        for oid, (path, type_name) in self.found.items():
            hex_id = oid.hex().encode()
            raw = path.encode("utf-8", "surrogateescape")
            if nul:
                line = hex_id + b"\0missing=yes\0"
                if info:
                    line += (
                        (b"path=" + raw + b"\0" if path else b"")
                        + b"type="
                        + type_name.encode()
                        + b"\0"
                    )
                out.append(line)
                continue
            line = b"?" + hex_id
            if info:
                if path:
                    line += b" path=" + _quote(path)
                line += b" type=" + type_name.encode()
            out.append(line + b"\n")
        return out


def _quote(path: str) -> bytes:
    """Git's ``quote_path(…, QUOTE_PATH_QUOTE_SP)``: C-quoted when it needs to be,
    and in quotes when it holds a space."""
    raw = path.encode("utf-8", "surrogateescape")
    special = {
        0x22: b'\\"',
        0x5C: b"\\\\",
        0x07: b"\\a",
        0x08: b"\\b",
        0x0C: b"\\f",
        0x0A: b"\\n",
        0x0D: b"\\r",
        0x09: b"\\t",
        0x0B: b"\\v",
    }
    out = bytearray()
    quoted = False
    for b in raw:
        if b in special:
            out += special[b]
            quoted = True
        elif b < 0x20 or b >= 0x7F:
            out += b"\\%03o" % b
            quoted = True
        else:
            out.append(b)
            if b == 0x20:
                quoted = True
    return b'"' + bytes(out) + b'"' if quoted else bytes(out)


class _OpenTree:
    """A tree ``FilteredObjects._tree`` has opened: its id, name, path + "/" (or ""),
    the entries still to visit, and ``entry_interesting``'s state (2: all match)."""

    __slots__ = ("oid", "name", "inner", "entries", "match")

    def __init__(
        self,
        oid: bytes,
        name: str,
        inner: str,
        entries: Iterator[tuple[bytes, bytes, bytes]],
        match: int,
    ) -> None:
        self.oid = oid
        self.name = name
        self.inner = inner
        self.entries = entries
        self.match = match


class FilteredObjects:
    """Git's ``traverse_commit_list_filtered`` over a walk's commits: which commits to
    show, then the tags, trees and blobs, through ``spec`` (or none) and ``missing``."""

    def __init__(
        self,
        walk: RevWalk,
        spec: ObjectFilter | None,
        *,
        filter_provided: bool = False,
        collect_omits: bool = False,
        missing: MissingObjects | None = None,
    ) -> None:
        self.walk = walk
        self.paths = walk.paths  # the pathspecs limit what trees list, as in Git
        self.repo = walk.repo
        self.omits = OidSet(OMITS_SIZE) if collect_omits and spec is not None else None
        self.filter = build_filter(spec, self.repo, self.omits) if spec is not None else None
        self.missing = missing or MissingObjects("error")
        self.seen: set[bytes] = set()
        self.user_given = set() if filter_provided else self._provided()

    def _provided(self) -> set[bytes]:
        """The objects named on the command line, tags peeled (their targets too)."""
        from gitodb.objects.tag import Tag

        out = set()
        odb = self.repo.odb
        for p in self.walk.pending:
            oid = p.oid
            out.add(oid)
            for _ in range(64):
                try:
                    type_name, data = odb.read(oid)
                except ObjectNotFoundError:
                    break
                if type_name != "tag":
                    break
                oid = Tag(data, self.repo.object_format, oid).object
                out.add(oid)
        return out

    def _ask(self, situation: str, oid: bytes, path: str, name: str) -> int:
        """Git's ``list_objects_filter__filter_object``: named objects pass unasked."""
        if self.filter is not None and oid not in self.user_given:
            return self.filter(situation, oid, path, name)
        return ZERO if situation == END_TREE else MARK_SEEN | DO_SHOW

    def show_commit(self, oid: bytes) -> bool:
        """Whether a commit of the walk is listed (the filter's ``COMMIT`` step)."""
        return bool(self._ask(COMMIT, oid, "", "") & DO_SHOW)

    def objects(self) -> Iterator[tuple[bytes, str, bytes]]:
        """``(id, type, name)`` of the tags, trees and blobs to list, after ``commits()``."""
        walk = self.walk
        uninteresting: set[bytes] = set()
        for tree in walk._uninteresting_trees:
            walk._mark_tree_uninteresting(tree, uninteresting)
        self.uninteresting = uninteresting
        pending = list(walk._object_pending) + [(t, "tree", b"") for t in walk.shown_trees()]
        for oid, type_name, name in pending:
            if oid in uninteresting or oid in self.seen:
                continue
            text = name.decode("utf-8", "surrogateescape")
            if type_name == "tag":
                r = self._ask(TAG, oid, "", "")
                if r & MARK_SEEN:
                    self.seen.add(oid)
                if r & DO_SHOW:
                    yield from self._show(oid, "tag", text)
            elif type_name == "tree":
                yield from self._tree(oid, "", text)
            else:
                yield from self._blob(oid, "", text)
        if self.filter is not None:
            self.filter.finish()

    def _show(self, oid: bytes, type_name: str, path: str) -> Iterator[tuple[bytes, str, bytes]]:
        # Git's finish_object: a listed object must exist (or --missing says what to do)
        if type_name != "tree" and not self.repo.odb.contains(oid):
            self.missing.handle(oid, type_name, path)
            return
        yield oid, type_name, path.encode("utf-8", "surrogateescape")

    def _blob(self, oid: bytes, base: str, name: str) -> Iterator[tuple[bytes, str, bytes]]:
        if oid in self.uninteresting or oid in self.seen:
            return
        path = base + name
        r = self._ask(BLOB, oid, path, name)
        if r & MARK_SEEN:
            self.seen.add(oid)
        if r & DO_SHOW:
            yield from self._show(oid, "blob", path)

    def _tree(self, root: bytes, base: str, name: str) -> Iterator[tuple[bytes, str, bytes]]:
        """Git's ``process_tree`` from ``root``: ask, show, open (unless skipped), ask
        at the end, for every tree below it too, depth first.

        Iterative, with one frame per open tree (``core.maxTreeDepth`` allows trees
        deeper than Python's recursion limit); a tree deeper than that setting below
        ``root`` raises ``TreeDepthError``, as the unfiltered walk does."""
        max_depth = max_tree_depth(self.repo.config)
        rawsz = self.repo.object_format.rawsz
        stack: list[_OpenTree] = []
        todo: tuple[bytes, str, str] | None = (root, base, name)
        while True:
            if todo is not None:
                oid, base, name = todo
                todo = None
                if len(stack) > max_depth:
                    raise TreeDepthError(TreeDepthError.MESSAGE)
                frame = yield from self._open_tree(oid, base, name, rawsz)
                if frame is not None:
                    stack.append(frame)
            if not stack:
                return
            frame = stack[-1]
            inner, match = frame.inner, frame.match
            for mode, entry_name, entry in frame.entries:
                if match != 2:
                    match = entry_interesting(
                        inner.encode("utf-8", "surrogateescape"),
                        entry_name,
                        int(mode, 8),
                        self.paths,
                        wildcards=True,
                    )
                    if not match:
                        continue
                text = entry_name.decode("utf-8", "surrogateescape")
                if mode == b"160000":
                    continue  # submodules are not followed
                if mode in (b"40000", b"040000"):
                    frame.match = match
                    todo = (entry, inner, text)
                    break
                yield from self._blob(entry, inner, text)
            else:
                stack.pop()
                r = self._ask(END_TREE, frame.oid, inner, frame.name)
                if r & MARK_SEEN:
                    self.seen.add(frame.oid)

    def _open_tree(
        self, oid: bytes, base: str, name: str, rawsz: int
    ) -> Generator[tuple[bytes, str, bytes], None, _OpenTree | None]:
        """The start of ``process_tree`` for one tree: read it, ask, show it; its frame
        for ``_tree`` (entries empty when skipped or unreadable), None when the tree is
        uninteresting or seen."""
        if oid in self.uninteresting or oid in self.seen:
            return None
        try:
            type_name, data = self.repo.odb.read(oid)
        except ObjectNotFoundError:
            type_name, data = "", b""
        failed = type_name != "tree"
        if failed and self.missing.action == "error":
            raise GitodbError(f"bad tree object {oid.hex()}")
        path = base + name
        r = self._ask(BEGIN_TREE, oid, path, name)
        if r & MARK_SEEN:
            self.seen.add(oid)
        if r & DO_SHOW:
            if failed:
                self.missing.handle(oid, "tree", path)
            else:
                yield oid, "tree", path.encode("utf-8", "surrogateescape")
        inner = path + "/" if path else ""
        entries: Iterator[tuple[bytes, bytes, bytes]] = iter(())
        if r & SKIP_TREE:
            trace(f"Skipping contents of tree {inner}...", "list-objects.c")
        elif not failed:
            entries = iter(parse_entries(data, rawsz))
        return _OpenTree(oid, name, inner, entries, 0 if self.paths else 2)

    def omitted_lines(self) -> list[bytes]:
        """The ``~<id>`` lines of ``--filter-print-omitted``, in Git's order."""
        if self.omits is None:
            return []
        return [b"~" + oid.hex().encode() + b"\n" for oid in self.omits]
