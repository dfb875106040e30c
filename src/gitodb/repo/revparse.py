"""Object names, as ``git rev-parse`` and ``git cat-file`` understand them.

Supported: full hex ids; abbreviated hex ids (4 or more digits; an ambiguous prefix
raises ``AmbiguousObjectNameError``); ``HEAD``, ``@``, full ref names and short names
in Git's search order (``<name>``, ``refs/<name>``, ``refs/tags/<name>``,
``refs/heads/<name>``, ``refs/remotes/<name>``, ``refs/remotes/<name>/HEAD``);
``<rev>^{<type>}`` and ``<rev>^{}`` peeling; ``<rev>^<n>`` and ``<rev>~<n>``;
``<rev>:<path>``.  As in Git, refs are tried before abbreviated ids.
"""

from __future__ import annotations

import sys

from gitodb.errors import (
    AmbiguousObjectNameError,
    BadRevisionError,
    GitodbError,
    ObjectNotFoundError,
)
from gitodb.lazyre import lazy
from gitodb.objects.commit import Commit
from gitodb.objects.tag import Tag
from gitodb.objects.tree import Tree
from gitodb.refs.peel import REV_PARSE_RULES
from gitodb.types import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitodb.repo import Repository

MINIMUM_ABBREV = 4
_HEXDIGITS = "0123456789abcdefABCDEF"
# Refs Git accepts as a bare top-level name besides HEAD (pseudorefs: all caps and _).
_PSEUDOREF_RE = lazy(r"[A-Z][A-Z_]*HEAD|[A-Z][A-Z_]*")
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _pseudoref_syntax(name: str) -> bool:
    """``_PSEUDOREF_RE.fullmatch(name)`` by a scan (its second branch holds the first):
    an upper-case letter, then upper-case letters and underscores."""
    return name[:1] in _UPPER and name != "" and not name.strip(_UPPER + "_")


#: Git's ref_rev_parse_rules (``gitodb.refs.peel``'s), the name merge-base imports
REF_RULES = REV_PARSE_RULES


class MissingPathError(BadRevisionError):
    """``<rev>:<path>`` names a path that is not in the tree."""


class Resolved(NamedTuple):
    """The result of resolving a name: the id, and for ``<rev>:<path>`` the mode.

    ``oid`` is always the id in the repository's (storage) format.  A name given
    in the compatibility format (``extensions.compatObjectFormat``) sets
    ``compat_oid``, the id in that format, which is how Git then prints it.
    """

    oid: bytes
    mode: int | None = None
    path: str | None = None
    compat_oid: bytes | None = None

    @property
    def name_oid(self) -> bytes:
        """The id in the format the name was given in."""
        return self.compat_oid if self.compat_oid is not None else self.oid


def resolve(repo: Repository, name: str, hint: str | None = None) -> bytes:
    """Return the binary id ``name`` refers to.

    Raises ``BadRevisionError`` when nothing matches (``MissingPathError`` for a
    missing path), ``AmbiguousObjectNameError`` for an ambiguous abbreviated id.
    A full hex id is returned even when no such object exists, as Git does.
    ``hint`` (``commit``, ``committish``, ``tree``, ``treeish``, ``blob``: see
    ``gitodb.repo.ambiguous``) is the kind of object wanted, which settles an
    abbreviation several objects share.
    """
    return resolve_full(repo, name, hint).oid


def resolve_full(repo: Repository, name: str, hint: str | None = None) -> Resolved:
    """As ``resolve``, also returning the tree-entry mode for ``<rev>:<path>``."""
    colon = _path_colon(name)
    if colon == 0:
        return _resolve_index_path(repo, name)
    if colon > 0:
        rev, path = name[:colon], name[colon + 1 :]
        oid, compat = _resolve_rev(repo, rev, "treeish")
        tree = peel_to(repo, oid, "tree", name)
        return _in_compat(repo, _lookup_path(repo, tree, path, rev), compat, name)
    oid, compat = _resolve_rev(repo, name, hint)
    return _in_compat(repo, Resolved(oid), compat, name)


def _resolve_index_path(repo: Repository, name: str) -> Resolved:
    """``:<path>`` and ``:<n>:<path>``: an entry of the index (stage 0 unless given)."""
    from gitodb.repo.index import index_path, read_index

    rest = name[1:]
    if rest.startswith("/"):
        raise BadRevisionError(f"commit message search is not supported: '{name}'")
    stage = 0
    if len(rest) >= 2 and rest[0] in "0123" and rest[1] == ":":
        stage, rest = int(rest[0]), rest[2:]
    want = rest.encode("utf-8", "surrogateescape")
    stages = []
    for e in read_index(index_path(repo), repo.object_format):
        if e.path == want:
            if e.stage == stage:
                return Resolved(e.oid, e.mode, rest)
            stages.append(e.stage)
    if stages:
        raise MissingPathError(f"path '{rest}' is in the index, but not at stage {stage}")
    raise MissingPathError(f"path '{rest}' does not exist (neither on disk nor in the index)")


def _in_compat(repo: Repository, got: Resolved, compat: bool, name: str) -> Resolved:
    """``got`` with its compatibility id when the name was given in that format."""
    if not compat or repo.compat is None:
        return got
    compat_oid = repo.compat.to_compat(got.oid)
    if compat_oid is None:
        raise BadRevisionError(f"ambiguous argument '{name}': unknown revision")
    return Resolved(got.oid, got.mode, got.path, compat_oid)


_SUFFIX_RE = lazy(r"(\^\{[^}]*\}|\^[0-9]*|~[0-9]*)$")
# <ref>@{<spec>}: a reflog entry, a previous branch, the upstream
_CHECKOUT = lazy(rb"checkout: moving from (.*) to ")
_AT_RE = lazy(r"(.*)@\{([^}]*)\}")


def _resolve_rev(repo: Repository, name: str, hint: str | None) -> tuple[bytes, bool]:
    """Resolve a name without ``:path``: a base name followed by ``^``/``~`` suffixes.

    Returns the id (storage format) and whether the base was a compatibility id.
    The base is resolved with the hint its first suffix gives (``^{tree}``: a
    tree-ish, ``^``/``~``/``^{commit}``: a commit-ish), else with ``hint``.
    """
    suffixes: list[str] = []
    base = name
    while True:
        # (no "^" or "~": no suffix, and no re for the plain names most commands get)
        m = _SUFFIX_RE.search(base) if "^" in base or "~" in base else None
        if not m or m.start() == 0:
            break
        suffixes.append(m.group(1))
        base = base[: m.start()]
    if suffixes:
        hint = _suffix_hint(suffixes[-1])
    oid, compat = _resolve_base(repo, base, hint)
    for suffix in reversed(suffixes):
        oid = _apply_suffix(repo, oid, suffix, name)
    return oid, compat


def _suffix_hint(suffix: str) -> str | None:
    """The kind of object a suffix needs of what it applies to, as Git asks for it."""
    if suffix == "^{tree}":
        return "treeish"
    if suffix == "^{commit}" or not suffix.startswith("^{"):
        return "committish"
    return None


def _apply_suffix(repo: Repository, oid: bytes, suffix: str, name: str) -> bytes:
    if suffix.startswith("^{"):
        want = suffix[2:-1]
        if want.startswith("/"):
            return _search_message(repo, oid, want[1:], name)
        if want == "":
            return _peel_tags(repo, oid, name)
        if want == "object":
            _read_or_bad(repo, oid, name)
            return oid
        if want in ("commit", "tree", "blob", "tag"):
            return peel_to(repo, oid, want, name)
        raise BadRevisionError(f"unknown peel target in '{name}'")
    n = int(suffix[1:]) if len(suffix) > 1 else 1
    commit_oid = peel_to(repo, oid, "commit", name)
    if suffix[0] == "^":
        if n == 0:
            return commit_oid
        parents = _parents(repo, commit_oid)
        if n > len(parents):
            raise BadRevisionError(f"ambiguous argument '{name}': unknown revision")
        return parents[n - 1]
    for _ in range(n):
        parents = _parents(repo, commit_oid)
        if not parents:
            raise BadRevisionError(f"ambiguous argument '{name}': unknown revision")
        commit_oid = parents[0]
    return commit_oid


def _parents(repo: Repository, commit_oid: bytes) -> list[bytes]:
    _t, data = repo.odb.read(commit_oid)
    return Commit(data, repo.object_format, commit_oid).parents


def _read_or_bad(repo: Repository, oid: bytes, name: str) -> tuple[str, bytes]:
    try:
        return repo.odb.read(oid)
    except ObjectNotFoundError:
        raise BadRevisionError(f"ambiguous argument '{name}': unknown revision") from None


def _peel_tags(repo: Repository, oid: bytes, name: str) -> bytes:
    fmt = repo.object_format
    for _ in range(100):
        t, data = _read_or_bad(repo, oid, name)
        if t != "tag":
            return oid
        oid = Tag(data, fmt).object
    raise BadRevisionError(f"tag chain too long in '{name}'")


def peel_to(repo: Repository, oid: bytes, want: str, name: str) -> bytes:
    """Follow tags (and commit -> tree) until an object of type ``want``.

    Raises ``BadRevisionError`` (naming ``name``) when that is not possible.
    """
    return peel_to_object(repo, oid, want, name)[0]


def peel_to_object(repo: Repository, oid: bytes, want: str, name: str) -> tuple[bytes, bytes]:
    """``peel_to``, and the content of the object it ends at (read once: a caller
    that needs it does not read it again)."""
    fmt = repo.object_format
    for _ in range(100):
        t, data = _read_or_bad(repo, oid, name)
        if t == want:
            return oid, data
        if t == "tag":
            oid = Tag(data, fmt).object
        elif t == "commit" and want == "tree":
            oid = Commit(data, fmt).tree
        else:
            raise BadRevisionError(f"'{name}' cannot be peeled to a {want}")
    raise BadRevisionError(f"tag chain too long in '{name}'")


def _lookup_path(repo: Repository, tree: bytes, path: str, rev: str) -> Resolved:
    """Walk ``path`` from ``tree``; an empty path is the tree itself."""
    parts = [p for p in path.split("/") if p]
    fmt = repo.object_format
    oid, mode = tree, 0o040000
    for part in parts:
        if mode & 0o170000 != 0o040000:
            raise MissingPathError(f"path '{path}' does not exist in '{rev}'")
        _t, data = repo.odb.read(oid)
        entry = Tree(data, fmt).get(part)
        if entry is None:
            raise MissingPathError(f"path '{path}' does not exist in '{rev}'")
        oid, mode = entry.id, entry.mode
    return Resolved(oid, mode if parts else None, path)


def _resolve_base(repo: Repository, name: str, hint: str | None) -> tuple[bytes, bool]:
    if not name:
        raise BadRevisionError("empty object name")
    fmt = repo.object_format
    compat = repo.compat
    is_hex = not name.strip(_HEXDIGITS)  # [0-9a-fA-F]+ (name is not empty here)
    if is_hex and len(name) == fmt.hexsz:
        return bytes.fromhex(name), False
    if is_hex and compat is not None and len(name) == compat.compat.hexsz:
        # a full id in the compatibility format names an object only through the map
        oid = compat.to_main(bytes.fromhex(name))
        if oid is None:
            raise BadRevisionError(
                f"ambiguous argument '{name}': unknown revision or path not in the working tree."
            )
        return oid, True
    if name == "@":
        name = "HEAD"
    m = _AT_RE.fullmatch(name) if "@{" in name else None
    if m is not None:
        return _resolve_at(repo, m.group(1), m.group(2), name), False
    oid = dwim_ref(repo, name)
    if oid is not None:
        return oid, False
    longest = max(fmt.hexsz, compat.compat.hexsz if compat is not None else 0)
    if is_hex and MINIMUM_ABBREV <= len(name) < longest:
        return _resolve_abbrev_any(repo, name.lower(), hint)
    raise BadRevisionError(
        f"ambiguous argument '{name}': unknown revision or path not in the working tree."
    )


def _resolve_at(repo: Repository, ref: str, spec: str, name: str) -> bytes:
    """``<ref>@{<n>}``, ``@{-<n>}``, ``<branch>@{upstream}`` (``@{u}``)."""
    unknown = BadRevisionError(
        f"ambiguous argument '{name}': unknown revision or path not in the working tree."
    )
    if spec.startswith("-") and spec[1:].isdigit() and not ref:
        branch = _previous_branch(repo, int(spec[1:]))
        if branch is None:
            raise unknown
        got = dwim_ref(repo, branch)
        if got is None:
            raise unknown
        return got
    full = _full_ref_name(repo, ref or "HEAD")
    if full is None:
        raise unknown
    if spec.lower() in ("u", "upstream"):
        upstream = _upstream(repo, full)
        if upstream is None:
            raise unknown
        got = dwim_ref(repo, upstream)
        if got is None:
            raise unknown
        return got
    if not ref:
        # @{n} / @{<date>} alone is the current branch's reflog
        target = repo.refs.read("HEAD")
        if target is not None and target.target is not None:
            full = target.target
    if not spec.isdigit():
        # Imported here: dates (and their calendar modules) only for @{<date>}
        from gitodb.objects.approxidate import approxidate
        from gitodb.refs.reflog_at import value_at_time

        try:
            when = approxidate(spec)
        except GitodbError:
            raise unknown from None
        # Git's warning names the ref as written, or the current branch's short name
        shown = ref or (full[11:] if full.startswith("refs/heads/") else full)
        at = value_at_time(repo.refs, full, when, shown=shown)
        if at.note is not None:
            sys.stderr.write(f"warning: {at.note}\n")  # Git warns and goes on
        return at.oid
    n = int(spec)
    entries = repo.refs.reflog(full)
    if n < len(entries):
        return entries[-1 - n].new
    if n == len(entries) and entries and entries[0].old.strip(b"\0"):
        return entries[0].old  # the value before the oldest entry, when there was one
    # fatal in Git even in batch mode: not a BadRevisionError ("missing")
    raise GitodbError(f"log for '{ref or full}' only has {len(entries)} entries")


def _full_ref_name(repo: Repository, name: str) -> str | None:
    """The ref ``name`` stands for, in Git's search order (``HEAD`` stays ``HEAD``)."""
    if not _plausible_refname(name):
        return None
    for rule in REF_RULES:
        full = rule.format(name)
        if rule == "{}" and not (full.startswith("refs/") or _pseudoref_syntax(full)):
            continue
        try:
            got = repo.refs.resolve_ref(full)
        except GitodbError:
            continue
        if got is not None:
            return full
    return None


def _previous_branch(repo: Repository, n: int) -> str | None:
    """The branch checked out ``n`` switches ago (``@{-n}``), from HEAD's reflog."""
    if n <= 0:
        return None
    seen = 0
    for entry in reversed(repo.refs.reflog("HEAD")):
        m = _CHECKOUT.match(entry.message)
        if m is None:
            continue
        seen += 1
        if seen == n:
            return m.group(1).decode("utf-8", "surrogateescape")
    return None


def _upstream(repo: Repository, full: str) -> str | None:
    """``branch.<name>.remote`` and ``.merge`` as a remote-tracking ref (or a local one)."""
    if full == "HEAD":
        head = repo.refs.read("HEAD")
        if head is None or head.target is None:
            return None
        full = head.target
    if not full.startswith("refs/heads/"):
        return None
    branch = full[len("refs/heads/") :]
    remote = repo.config.get(f"branch.{branch}.remote")
    merge = repo.config.get(f"branch.{branch}.merge")
    if not remote or not merge:
        return None
    if remote == ".":
        return merge
    if merge.startswith("refs/heads/"):
        return f"refs/remotes/{remote}/{merge[len('refs/heads/') :]}"
    return None


def _search_message(repo: Repository, start: bytes, pattern: str, name: str) -> bytes:
    """``<rev>^{/<regex>}``: the youngest commit reachable from ``start`` whose message
    matches (``!!`` escapes a leading ``!``; ``!-`` negates, as in Git)."""
    import heapq

    negate = False
    if pattern.startswith("!-"):
        negate, pattern = True, pattern[2:]
    elif pattern.startswith("!!"):
        pattern = pattern[1:]
    import re  # (only here: a ":/<text>" search)

    try:
        rx = re.compile(pattern.encode("utf-8", "surrogateescape"))
    except re.error:
        raise BadRevisionError(f"bad regex in '{name}'") from None
    fmt = repo.object_format
    first = peel_to(repo, start, "commit", name)
    seen = {first}
    queue: list[tuple[int, bytes]] = []

    def push(oid: bytes) -> None:
        _t, data = repo.odb.read(oid)
        c = Commit(data, fmt, oid)
        heapq.heappush(queue, (-c.commit_date, oid))

    push(first)
    while queue:
        _d, oid = heapq.heappop(queue)
        _t, data = repo.odb.read(oid)
        c = Commit(data, fmt, oid)
        if (rx.search(c.message) is not None) != negate:
            return oid
        for parent in c.parents:
            if parent not in seen:
                seen.add(parent)
                push(parent)
    raise BadRevisionError(
        f"ambiguous argument '{name}': unknown revision or path not in the working tree."
    )


def dwim_ref(repo: Repository, name: str) -> bytes | None:
    """The id of the first ref matching ``name`` in Git's search order, or None."""
    if not _plausible_refname(name):
        return None
    refs = repo.refs
    for rule in REF_RULES:
        full = rule.format(name)
        if rule == "{}" and not (full.startswith("refs/") or _pseudoref_syntax(full)):
            continue
        try:
            got = refs.resolve_ref(full)  # per-worktree refs are routed by the store
        except GitodbError:
            continue
        if got is not None and got[1] is not None:
            return got[1]
    return None


def _plausible_refname(name: str) -> bool:
    # Names Git's check_refname_format would reject never match a ref.
    bad = ("..", "@{", "//", "\\", " ", "~", "^", ":", "?", "*", "[")
    return not (
        any(b in name for b in bad)
        or name.endswith((".", "/", ".lock"))
        or name.startswith(("/", "."))
        or any(ord(c) < 0x20 for c in name)
    )


def _resolve_abbrev_any(repo: Repository, hex_prefix: str, hint: str | None) -> tuple[bytes, bool]:
    """An abbreviated id of either format: ``(storage id, named in compat format)``."""
    compat = repo.compat
    if compat is None:
        return resolve_abbrev(repo, hex_prefix, hint), False
    main = repo.odb.find_prefix(hex_prefix) if len(hex_prefix) < repo.object_format.hexsz else []
    other = compat.find_prefix(hex_prefix) if len(hex_prefix) < compat.compat.hexsz else []
    if len(main) + len(other) > 1:
        err = AmbiguousObjectNameError(f"short object ID {hex_prefix} is ambiguous")
        err.candidates = main + other
        raise err
    if main:
        return main[0], False
    if other:
        got = compat.to_main(other[0])
        if got is not None:
            return got, True
    raise BadRevisionError(
        f"ambiguous argument '{hex_prefix}': unknown revision or path not in the working tree."
    )


def resolve_abbrev(repo: Repository, hex_prefix: str, hint: str | None = None) -> bytes:
    """The one object whose id starts with ``hex_prefix`` (among several, the one of
    the kind ``hint`` names, or ``core.disambiguate`` without one); Git's errors
    otherwise, an ambiguity with the candidates and Git's hints listing them."""
    matches = repo.odb.find_prefix(hex_prefix)
    if not matches:
        raise BadRevisionError(
            f"ambiguous argument '{hex_prefix}': unknown revision or path not in the working tree."
        )
    if len(matches) == 1:
        return matches[0]
    from gitodb.repo import ambiguous  # only for a shared prefix: kept off start-up

    hint = hint or ambiguous.default_hint(repo)
    left = ambiguous.choose(repo, matches, hint)
    if len(left) == 1:
        return left[0]
    err = AmbiguousObjectNameError(f"short object ID {hex_prefix} is ambiguous")
    err.candidates = left
    err.hints = ambiguous.candidate_hints(repo, left)
    raise err


#: Git's GET_TREE_ENTRY_FOLLOW_SYMLINKS_MAX_LINKS
MAX_SYMLINKS = 40


class SymlinkOutcome(NamedTuple):
    """Why ``<rev>:<path>`` with ``--follow-symlinks`` names no object in the tree.

    ``status`` is ``missing``, ``dangling``, ``loop``, ``notdir`` (each printed by
    Git with the name as given) or ``symlink`` (the link leads out of the tree:
    ``path`` is where, as Git prints it).
    """

    status: str
    path: str = ""


def resolve_follow_symlinks(repo: Repository, name: str) -> Resolved | SymlinkOutcome:
    """Resolve ``name``, following symbolic links inside the tree for ``<rev>:<path>``.

    A link is followed from the directory that holds it; ``..`` goes up the
    directories actually walked, so a link to a directory then ``..`` lands in
    the link target's parent, as in a file system.  Names without a path resolve
    as ``resolve_full`` does.
    """
    colon = _path_colon(name)
    if colon <= 0:
        return resolve_full(repo, name)
    rev, path = name[:colon], name[colon + 1 :]
    oid, compat = _resolve_rev(repo, rev, "treeish")
    fmt = repo.object_format
    stack = [peel_to(repo, oid, "tree", name)]
    todo = path.split("/")
    followed = 0
    while True:
        while todo and todo[0] in ("", "."):
            todo.pop(0)
        if not todo:
            return _in_compat(repo, Resolved(stack[-1], 0o040000, path), compat, name)
        part = todo.pop(0)
        if part == "..":
            if len(stack) == 1:
                return SymlinkOutcome("symlink", "/".join(["..", *todo]))
            stack.pop()
            continue
        _t, data = repo.odb.read(stack[-1])
        entry = Tree(data, fmt).get(part)
        if entry is None:
            return SymlinkOutcome("dangling" if followed else "missing")
        if entry.mode & 0o170000 == 0o040000:
            stack.append(entry.id)
            continue
        if entry.mode & 0o170000 == 0o120000:
            followed += 1
            if followed > MAX_SYMLINKS:
                return SymlinkOutcome("loop")
            _t, target = repo.odb.read(entry.id)
            text = target.decode("utf-8", "surrogateescape")
            if text.startswith("/"):
                return SymlinkOutcome("symlink", text)
            todo = text.split("/") + todo
            continue
        if any(p not in ("", ".") for p in todo):
            return SymlinkOutcome("notdir")
        return _in_compat(repo, Resolved(entry.id, entry.mode, path), compat, name)


def rev_of_path_name(name: str) -> str | None:
    """The ``<rev>`` of a ``<rev>:<path>`` name; None for any other name (``:<path>``
    of the index included)."""
    colon = _path_colon(name)
    return name[:colon] if colon > 0 else None


def _path_colon(name: str) -> int:
    """Where ``<rev>:<path>`` splits (-1 if it does not): the first colon outside
    the braces of ``^{...}`` and ``@{...}``."""
    depth = 0
    for i, ch in enumerate(name):
        if ch == "{" and i and name[i - 1] in "^@":
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
        elif ch == ":" and not depth:
            return i
    return -1
