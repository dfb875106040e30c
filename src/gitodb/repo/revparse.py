"""Object names, as ``git rev-parse`` and ``git cat-file`` understand them.

Supported: full hex ids; abbreviated hex ids (4 or more digits; an ambiguous prefix
raises ``AmbiguousObjectNameError``); ``HEAD``, ``@``, full ref names and short names
in Git's search order (``<name>``, ``refs/<name>``, ``refs/tags/<name>``,
``refs/heads/<name>``, ``refs/remotes/<name>``, ``refs/remotes/<name>/HEAD``);
``<rev>^{<type>}`` and ``<rev>^{}`` peeling; ``<rev>^<n>`` and ``<rev>~<n>``;
``<rev>:<path>``.  As in Git, refs are tried before abbreviated ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gitodb.errors import (
    AmbiguousObjectNameError,
    BadRevisionError,
    GitodbError,
    ObjectNotFoundError,
)
from gitodb.objects.commit import Commit
from gitodb.objects.tag import Tag
from gitodb.objects.tree import Tree

if TYPE_CHECKING:
    from gitodb.repo import Repository

MINIMUM_ABBREV = 4
_HEX_RE = re.compile(r"[0-9a-fA-F]+")
# Refs Git accepts as a bare top-level name besides HEAD (pseudorefs: all caps and _).
_PSEUDOREF_RE = re.compile(r"[A-Z][A-Z_]*HEAD|[A-Z][A-Z_]*")
REF_RULES = ("{}", "refs/{}", "refs/tags/{}", "refs/heads/{}", "refs/remotes/{}",
             "refs/remotes/{}/HEAD")


class MissingPathError(BadRevisionError):
    """``<rev>:<path>`` names a path that is not in the tree."""


@dataclass(frozen=True)
class Resolved:
    """The result of resolving a name: the id, and for ``<rev>:<path>`` the mode."""

    oid: bytes
    mode: int | None = None
    path: str | None = None


def resolve(repo: Repository, name: str) -> bytes:
    """Return the binary id ``name`` refers to.

    Raises ``BadRevisionError`` when nothing matches (``MissingPathError`` for a
    missing path), ``AmbiguousObjectNameError`` for an ambiguous abbreviated id.
    A full hex id is returned even when no such object exists, as Git does.
    """
    return resolve_full(repo, name).oid


def resolve_full(repo: Repository, name: str) -> Resolved:
    """As ``resolve``, also returning the tree-entry mode for ``<rev>:<path>``."""
    depth = 0
    colon = -1
    for i, ch in enumerate(name):
        if ch == "{":
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
        elif ch == ":" and not depth:
            colon = i
            break
    if colon == 0:
        raise BadRevisionError(f"index paths are not supported: '{name}'")
    if colon > 0:
        rev, path = name[:colon], name[colon + 1:]
        tree = peel_to(repo, _resolve_rev(repo, rev), "tree", name)
        return _lookup_path(repo, tree, path, rev)
    return Resolved(_resolve_rev(repo, name))


_SUFFIX_RE = re.compile(r"(\^\{[^}]*\}|\^[0-9]*|~[0-9]*)$")


def _resolve_rev(repo: Repository, name: str) -> bytes:
    """Resolve a name without ``:path``: a base name followed by ``^``/``~`` suffixes."""
    suffixes: list[str] = []
    base = name
    while True:
        m = _SUFFIX_RE.search(base)
        if not m or m.start() == 0:
            break
        suffixes.append(m.group(1))
        base = base[:m.start()]
    oid = _resolve_base(repo, base)
    for suffix in reversed(suffixes):
        oid = _apply_suffix(repo, oid, suffix, name)
    return oid


def _apply_suffix(repo: Repository, oid: bytes, suffix: str, name: str) -> bytes:
    if suffix.startswith("^{"):
        want = suffix[2:-1]
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
    fmt = repo.object_format
    for _ in range(100):
        t, data = _read_or_bad(repo, oid, name)
        if t == want:
            return oid
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


def _resolve_base(repo: Repository, name: str) -> bytes:
    if not name:
        raise BadRevisionError("empty object name")
    fmt = repo.object_format
    is_hex = _HEX_RE.fullmatch(name) is not None
    if is_hex and len(name) == fmt.hexsz:
        return bytes.fromhex(name)
    if name == "@":
        name = "HEAD"
    oid = dwim_ref(repo, name)
    if oid is not None:
        return oid
    if is_hex and MINIMUM_ABBREV <= len(name) < fmt.hexsz:
        return resolve_abbrev(repo, name.lower())
    raise BadRevisionError(f"ambiguous argument '{name}': unknown revision or path not in the "
                           "working tree.")


def dwim_ref(repo: Repository, name: str) -> bytes | None:
    """The id of the first ref matching ``name`` in Git's search order, or None."""
    if not _plausible_refname(name):
        return None
    refs = repo.refs
    for rule in REF_RULES:
        full = rule.format(name)
        if rule == "{}" and not (full.startswith("refs/") or _PSEUDOREF_RE.fullmatch(full)):
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
    return not (any(b in name for b in bad) or name.endswith((".", "/", ".lock"))
                or name.startswith(("/", ".")) or any(ord(c) < 0x20 for c in name))


def resolve_abbrev(repo: Repository, hex_prefix: str) -> bytes:
    """The one object whose id starts with ``hex_prefix``; Git's errors otherwise."""
    matches = repo.odb.find_prefix(hex_prefix)
    if not matches:
        raise BadRevisionError(f"ambiguous argument '{hex_prefix}': unknown revision or path "
                               "not in the working tree.")
    if len(matches) > 1:
        err = AmbiguousObjectNameError(f"short object ID {hex_prefix} is ambiguous")
        err.candidates = matches  # type: ignore[attr-defined]
        raise err
    return matches[0]
