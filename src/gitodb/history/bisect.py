"""Git's bisection choice (``bisect.c``'s ``find_bisection``) over a limited walk.

Each interesting commit gets a weight: how many commits that change something
(not TREESAME) it reaches, itself included.  The best commit is the one whose
weight is nearest half of all; a commit exactly halfway (``2w - n`` in -1..1)
ends the search early, in the order Git counts (merges first by a full count,
then single-parent chains by adding one to the parent's weight).  ``find_all``
(``--bisect-all``) returns every counted commit by distance from the middle,
then by id.
"""

from __future__ import annotations

from gitodb.history.graph import UNINTERESTING, Node
from gitodb.history.simplify import TREESAME


def estimate_steps(total: int) -> int:
    """Git's ``estimate_bisect_steps``."""
    if total < 3:
        return 0
    n = total.bit_length() - 1
    e = 1 << n
    return n if e < 3 * (total - e) else n - 1


def find_bisection(
    listed: list[Node], *, first_parent: bool = False, find_all: bool = False
) -> tuple[list[tuple[Node, int]], int, int]:
    """``([(commit, weight or distance)], reaches, all)`` for the walk's commit list."""
    nodes = [n for n in listed if not n.flags & UNINTERESTING][::-1]
    nr = sum(1 for n in nodes if not n.flags & TREESAME)
    weight: dict[bytes, int] = {}

    def parents(n: Node) -> list[Node]:
        ps = [p for p in n.parents if not p.flags & UNINTERESTING]
        return ps[:1] if first_parent else ps

    def halfway(n: Node) -> bool:
        return not n.flags & TREESAME and -1 <= 2 * weight[n.id] - nr <= 1

    best: Node | None = None
    counted = 0
    for n in nodes:
        k = len(parents(n)) if not first_parent else min(1, len(parents(n)))
        if k == 0:
            weight[n.id] = 0
            if not n.flags & TREESAME:
                weight[n.id] = 1
                counted += 1
        else:
            weight[n.id] = -1 if k == 1 else -2
    for n in nodes:
        if weight[n.id] != -2:
            continue
        weight[n.id] = _count_distance(n)
        if not find_all and halfway(n):
            best = n
            break
        counted += 1
    while best is None and counted < nr:
        progress = False
        for n in nodes:
            if weight[n.id] >= 0:
                continue
            known = None
            for q in n.parents if not first_parent else n.parents[:1]:
                if q.flags & UNINTERESTING:
                    continue
                if weight.get(q.id, -1) >= 0:
                    known = q
                    break
            if known is None:
                continue
            progress = True
            if not n.flags & TREESAME:
                weight[n.id] = weight[known.id] + 1
                counted += 1
            else:
                weight[n.id] = weight[known.id]
            if not find_all and halfway(n):
                best = n
                break
        if not progress:
            break
    if best is not None:
        return [(best, weight[best.id])], weight[best.id], nr
    if not nodes:
        return [], 0, nr
    if not find_all:
        best, best_distance = nodes[0], -1
        for n in nodes:
            if n.flags & TREESAME:
                continue
            d = min(weight[n.id], nr - weight[n.id])
            if d > best_distance:
                best, best_distance = n, d
        return [(best, weight[best.id])], weight[best.id], nr
    scored = [(n, min(weight[n.id], nr - weight[n.id])) for n in nodes if not n.flags & TREESAME]
    scored.sort(key=lambda item: (-item[1], item[0].id))
    reaches = weight[scored[0][0].id] if scored else 0
    return scored, reaches, nr


def _count_distance(start: Node) -> int:
    """How many commits that change something ``start`` reaches (itself too)."""
    seen: set[bytes] = set()
    todo = [start]
    count = 0
    while todo:
        n = todo.pop()
        if n.flags & UNINTERESTING or n.id in seen:
            continue
        seen.add(n.id)
        if not n.flags & TREESAME:
            count += 1
        todo.extend(n.parents)
    return count
