"""``gitodb merge-base``: best common ancestors like ``git merge-base`` (Git 2.39).

``--all``, ``--octopus``, ``--independent``, ``--is-ancestor`` and ``--fork-point``;
a thin shell over ``gitodb.history.graph``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from gitodb.cli import output
from gitodb.cli.options import Option, OptionParser, incompatible
from gitodb.errors import BadRevisionError, GitodbError, ObjectNotFoundError

if TYPE_CHECKING:
    from gitodb.cli.main import Context
    from gitodb.history.graph import CommitGraph, Node

PARSER = OptionParser(
    "merge-base",
    [
        "[-a | --all] <commit> <commit>...",
        "[-a | --all] --octopus <commit>...",
        "--is-ancestor <commit> <commit>",
        "--independent <commit>...",
        "--fork-point <ref> [<commit>]",
    ],
    [
        Option("a", "all", "bool", "output all common ancestors", dest="show_all"),
        Option(
            None,
            "octopus",
            "cmdmode",
            "find ancestors for a single n-way merge",
            dest="mode",
            const="octopus",
        ),
        Option(
            None,
            "independent",
            "cmdmode",
            "list revs not reachable from others",
            dest="mode",
            const="independent",
        ),
        Option(
            None,
            "is-ancestor",
            "cmdmode",
            "is the first one ancestor of the other?",
            dest="mode",
            const="is-ancestor",
        ),
        Option(
            None,
            "fork-point",
            "cmdmode",
            "find where <commit> forked from reflog of <ref>",
            dest="mode",
            const="fork-point",
        ),
    ],
)


def parse_args(argv: list[str]) -> tuple[bool, str | None, list[str]]:
    """``(--all, mode, commits)``; ``UsageError`` for Git's usage errors."""
    opts, rest = PARSER.parse(argv)
    return opts.show_all, opts.mode, rest


def _commit(repo: object, graph: CommitGraph, name: str) -> Node:
    """Git's ``get_commit_reference``: the commit ``name`` names (tags peeled)."""
    from gitodb.repo.revparse import peel_to

    try:
        oid = repo.resolve(name)  # type: ignore[attr-defined]
    except (BadRevisionError, ObjectNotFoundError) as e:
        output.report_ambiguity(e)
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
    show_all, mode, names = parse_args(argv)
    if mode == "is-ancestor":
        if len(names) < 2:
            raise PARSER.usage_error()
        if show_all:
            raise incompatible("--is-ancestor", "--all")
    if mode == "independent" and show_all:
        raise incompatible("--independent", "--all")
    if mode is None and len(names) < 2:
        raise PARSER.usage_error()
    if mode == "fork-point" and len(names) not in (1, 2):
        raise PARSER.usage_error()
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
            found.append(full)  # the name matched, not where a symref leads
    if not found:
        raise GitodbError(f"No such ref: '{ref}'")
    if len(found) > 1:
        raise GitodbError(f"Ambiguous refname: '{ref}'")
    point = fork_point(graph, found[0], derived)
    if point is None:
        return 1
    sys.stdout.buffer.write(point.id.hex().encode() + b"\n")
    return 0
