"""Which worktree a ref belongs to, like Git's ``parse_worktree_ref``.

Every worktree has its own HEAD, pseudorefs (``ORIG_HEAD``, ``FOO_HEAD``...) and refs
under ``refs/bisect/``, ``refs/worktree/`` and ``refs/rewritten/``; all other refs
are shared.  Another worktree's per-worktree refs are named
``main-worktree/<ref>`` (the main worktree's) and ``worktrees/<id>/<ref>``.
"""

from __future__ import annotations

SHARED = "shared"
CURRENT = "current"
MAIN = "main"
OTHER = "other"

_PER_WORKTREE_PREFIXES = ("refs/worktree/", "refs/bisect/", "refs/rewritten/")
#: ``[A-Z_-]+``'s characters (a scan: every ref lookup asks)
_PSEUDOREF_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ_-"


def is_per_worktree(name: str) -> bool:
    """Whether ``name`` (no ``main-worktree/``/``worktrees/`` prefix) is per worktree."""
    return name.startswith(_PER_WORKTREE_PREFIXES) or (
        name != "" and not name.strip(_PSEUDOREF_CHARS)
    )


def locate(name: str) -> tuple[str, str]:
    """(kind, name as stored): kind is SHARED, CURRENT, MAIN or OTHER.

    For OTHER the stored name is ``<id>/<ref>``; for MAIN it is the main worktree's ref.
    Prefixed names of refs that are not per-worktree are plain shared names, like Git.
    """
    if name.startswith("main-worktree/"):
        rest = name[len("main-worktree/") :]
        if is_per_worktree(rest):
            return MAIN, rest
        return SHARED, name
    if name.startswith("worktrees/"):
        wt_id, slash, rest = name[len("worktrees/") :].partition("/")
        if wt_id and slash and is_per_worktree(rest):
            return OTHER, f"{wt_id}/{rest}"
        return SHARED, name
    if is_per_worktree(name):
        return CURRENT, name
    return SHARED, name
