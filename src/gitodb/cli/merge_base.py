"""``gitodb merge-base``: best common ancestors like ``git merge-base`` (Git 2.39).

``--all``, ``--octopus``, ``--independent``, ``--is-ancestor`` and ``--fork-point``;
a thin shell over ``gitodb.history.graph``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from gitodb.errors import BadRevisionError, GitodbError, ObjectNotFoundError

if TYPE_CHECKING:
    from gitodb.cli.main import Context
    from gitodb.history.graph import CommitGraph, Node

USAGE = """\
usage: git merge-base [-a | --all] <commit> <commit>...
   or: git merge-base [-a | --all] --octopus <commit>...
   or: git merge-base --is-ancestor <commit> <commit>
   or: git merge-base --independent <commit>...
   or: git merge-base --fork-point <ref> [<commit>]

    -a, --all             output all common ancestors
    --octopus             find ancestors for a single n-way merge
    --independent         list revs not reachable from others
    --is-ancestor         is the first one ancestor of the other?
    --fork-point          find where <commit> forked from reflog of <ref>

"""
_MODES = {"octopus": "octopus", "independent": "independent", "is-ancestor": "is-ancestor",
          "fork-point": "fork-point"}
_LONG = ("all", "octopus", "independent", "is-ancestor", "fork-point")


class _Usage(Exception):
    def __init__(self, message: str | None = None, show_usage: bool = True) -> None:
        self.message = message
        self.show_usage = show_usage


def parse_args(argv: list[str]) -> tuple[bool, str | None, list[str]]:
    """``(--all, mode, commits)``; ``_Usage`` for Git's usage errors."""
    show_all = False
    mode: str | None = None
    rest: list[str] = []
    only_args = False
    for arg in argv:
        if only_args or not arg.startswith("-") or arg == "-":
            rest.append(arg)
            continue
        if arg == "--":
            only_args = True
            continue
        if arg.startswith("--"):
            name = arg[2:]
            hits = [o for o in _LONG if o == name] or [o for o in _LONG if o.startswith(name)]
            if name.startswith("no-") and name[3:] == "all":
                show_all = False
                continue
            if len(hits) != 1:
                if hits:
                    raise _Usage(f"error: ambiguous option: {name} (could be --{hits[0]} or "
                                 f"--{hits[1]})")
                raise _Usage(f"error: unknown option `{name}'")
            name = hits[0]
            if name == "all":
                show_all = True
                continue
            if mode is not None and mode != name:
                raise _Usage(f"error: option `{name}' is incompatible with --{mode}",
                             show_usage=False)
            mode = name
            continue
        for ch in arg[1:]:
            if ch == "a":
                show_all = True
            elif ch == "h":
                raise _Usage()
            else:
                raise _Usage(f"error: unknown switch `{ch}'")
    return show_all, mode, rest


def _commit(repo: object, graph: CommitGraph, name: str) -> Node:
    """Git's ``get_commit_reference``: the commit ``name`` names (tags peeled)."""
    from gitodb.repo.revparse import peel_to

    try:
        oid = repo.resolve(name)  # type: ignore[attr-defined]
    except (BadRevisionError, ObjectNotFoundError):
        raise GitodbError(f"Not a valid object name {name}") from None
    try:
        commit = peel_to(repo, oid, "commit", name)  # type: ignore[arg-type]
    except BadRevisionError:
        try:
            t = repo.odb.read_header(oid)[0]  # type: ignore[attr-defined]
        except ObjectNotFoundError:
            raise GitodbError(f"Not a valid object name {name}") from None
        sys.stderr.write(f"error: object {oid.hex()} is a {t}, not a commit\n")
        raise GitodbError(f"Not a valid commit name {name}") from None
    return graph.node(commit)


def run(argv: list[str], ctx: Context) -> int:
    """Print merge bases (or answer ``--is-ancestor`` by exit status)."""
    try:
        show_all, mode, names = parse_args(argv)
        if mode == "is-ancestor":
            if len(names) < 2:
                raise _Usage()
            if show_all:
                raise GitodbError("options '--is-ancestor' and '--all' cannot be used together")
        if mode == "independent" and show_all:
            raise GitodbError("options '--independent' and '--all' cannot be used together")
        if mode is None and len(names) < 2:
            raise _Usage()
    except _Usage as u:
        if u.message:
            sys.stderr.write(u.message + "\n")
        if u.show_usage:
            out = sys.stdout if u.message is None and "-h" in argv else sys.stderr
            out.write(USAGE)
        return 129
    if mode == "fork-point" and len(names) not in (1, 2):
        sys.stderr.write(USAGE)
        return 129
    from gitodb.history.graph import (
        CommitGraph,
        in_merge_bases,
        merge_bases,
        octopus_merge_bases,
        reduce_heads,
    )

    repo = ctx.open_repository()
    graph = CommitGraph(repo)
    if mode == "fork-point":
        return _fork_point(repo, graph, names)
    if mode == "is-ancestor":
        if len(names) != 2:
            raise GitodbError("--is-ancestor takes exactly two commits")
        one, two = (_commit(repo, graph, n) for n in names)
        return 0 if in_merge_bases(graph, one, [two]) else 1
    commits = [_commit(repo, graph, n) for n in names]
    if mode == "independent":
        result = reduce_heads(graph, commits)
        show_all = True
    elif mode == "octopus":
        result = reduce_heads(graph, octopus_merge_bases(graph, commits))
    else:
        result = merge_bases(graph, commits[0], commits[1:])
    if not result:
        return 1
    shown = result if show_all else result[:1]
    sys.stdout.buffer.write(b"".join(n.id.hex().encode() + b"\n" for n in shown))
    return 0


def _fork_point(repo: object, graph: CommitGraph, names: list[str]) -> int:
    from gitodb.history.graph import fork_point
    from gitodb.repo.revparse import REF_RULES

    ref = names[0]
    target = names[1] if len(names) > 1 else "HEAD"
    try:
        oid = repo.resolve(target)  # type: ignore[attr-defined]
    except (BadRevisionError, ObjectNotFoundError):
        raise GitodbError(f"Not a valid object name: '{target}'") from None
    derived = _commit(repo, graph, oid.hex())
    refs = repo.refs  # type: ignore[attr-defined]
    found = []
    for rule in REF_RULES:
        full = rule.format(ref)
        try:
            got = refs.resolve_ref(full)
        except GitodbError:
            continue
        if got is not None and got[1] is not None:
            found.append(full)   # the name matched, not where a symref leads
    if not found:
        raise GitodbError(f"No such ref: '{ref}'")
    if len(found) > 1:
        raise GitodbError(f"Ambiguous refname: '{ref}'")
    point = fork_point(graph, found[0], derived)
    if point is None:
        return 1
    sys.stdout.buffer.write(point.id.hex().encode() + b"\n")
    return 0
