"""``rev-list --use-bitmap-index`` and ``--test-bitmap``: answers from the bitmaps.

As Git's ``try_bitmap_count`` and ``try_bitmap_traversal``: ``--count`` (commits,
or every object with ``--objects``) and the listing (ids only, type by type in
pack order, then the objects outside the bitmap) come from
``gitodb.history.bitmapwalk`` when the repository has a bitmap and the walk asks
only "reachable from these, minus those" as Git decides it.  Paths, filters and
limits the bitmap cannot know walk as without the option, and so does a
repository without a usable bitmap.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gitodb.cli.revopts import RevSettings
    from gitodb.history.revwalk import RevWalk
    from gitodb.repo import Repository

__all__ = ["bitmap_output", "test_bitmap"]

_ALL_TYPES = ("commit", "tree", "blob", "tag")


def _bitmap_can_answer(walk: RevWalk, settings: RevSettings) -> bool:
    """Git's ``prepare_bitmap_walk`` conditions on the options: no pathspec (nor
    anything else that prunes), and only object filters a bitmap result can be cut
    by (``bitmap_can_filter``; without ``--filter-print-omitted``, which the walk
    answers).  Like Git, the other options (orders, ``--parents``,
    ``--first-parent``, dates, ...) do not change a bitmap answer: ``git rev-list
    --use-bitmap-index`` ignores them.  ``--unpacked`` leaves the packed objects
    out of the answer (Git 2.55; 2.39 ignored it here); ``--no-kept-objects`` is
    answered by the walk."""
    if settings.filter is not None:
        from gitodb.history.bitmapwalk import bitmap_can_filter

        if settings.print_omitted or not bitmap_can_filter(settings.filter):
            return False
    return walk.limiter is None and not walk.no_kept_objects


def bitmap_output(repo: Repository, walk: RevWalk, settings: RevSettings) -> int | None:
    """Print what ``--use-bitmap-index`` asks with the bitmap; None when it cannot
    answer (the caller walks)."""
    from gitodb.history.bitmapwalk import open_repository_bitmap, reachable_with_bitmap

    objects = bool(settings.walk_kwargs.get("objects"))
    max_count = int(settings.walk_kwargs.get("max_count", -1))  # type: ignore[call-overload]
    if not _bitmap_can_answer(walk, settings):
        return None
    # A limit cuts a commit list whose order the bitmap does not know (Git: the
    # count of commits alone may be clamped); a marked count needs a real walk.
    if max_count >= 0 and (objects or not settings.count):
        return None
    if settings.left_right:
        return None  # a bitmap does not know the side of a commit: Git walks (t5310)
    include = [p.oid for p in walk.pending if not p.uninteresting]
    exclude = [p.oid for p in walk.pending if p.uninteresting]
    if not include:
        return None
    bitmap = open_repository_bitmap(repo.odb)
    if bitmap is None:
        return None
    # Git: excluded tips of which none is in the bitmap leave nothing to optimise
    if exclude and all(bitmap.position(oid) < 0 for oid in exclude):
        bitmap.close()
        return None
    reach = reachable_with_bitmap(repo.odb, include, exclude, bitmap=bitmap)
    assert reach is not None
    try:
        if walk.unpacked:
            # Git's filter_packed_objects_from_bitmap: every bitmapped object is in
            # a pack; of the others, those in any pack go too
            reach.bits = 0
            for oid in [o for o in reach.extra if isinstance(repo.odb.locate(o), tuple)]:
                del reach.extra[oid]
        if settings.filter is not None:
            from gitodb.history.bitmapwalk import filter_reach, peeled_tips

            tips = [] if settings.filter_provided else peeled_tips(repo.odb, include)
            filter_reach(reach, settings.filter, tips, lambda oid: repo.odb.read_header(oid)[1])
        types = _ALL_TYPES if objects else ("commit",)
        out = sys.stdout.buffer
        if settings.disk_usage is not None:
            from gitodb.cli.rev_list import disk_usage_line

            # Git sums the entries' sizes in the pack here: even the empty tree's,
            # which an object lookup gives as 0
            total = sum(_stored_size(repo, oid) for oid in reach.oids(types))
            out.write(disk_usage_line(total, settings).encode() + b"\n")
            return 0
        if settings.count:
            commits = reach.count(("commit",))
            if max_count >= 0:
                commits = min(commits, max_count)
            others = reach.count(_ALL_TYPES[1:]) if objects else 0
            out.write(b"%d\n" % (commits + others))
            return 0
        lines = []
        for oid in reach.oids(types):
            lines.append(oid.hex().encode() + b"\n")
            if len(lines) >= 4096:
                out.write(b"".join(lines))
                lines.clear()
        out.write(b"".join(lines))
        return 0
    finally:
        reach.bitmap.close()


def _stored_size(repo: Repository, oid: bytes) -> int:
    """The bytes ``oid`` takes where it is stored (0 if nowhere)."""
    where = repo.odb.locate(oid)
    if isinstance(where, tuple):
        return int(where[0].disk_size_at(where[1]))
    return int(where.disk_size(oid) or 0) if where is not None else 0


def test_bitmap(repo: Repository, walk: RevWalk) -> int:
    """``--test-bitmap <commit>``: check its stored bitmap against a full walk; Git's
    ``OK!`` on stderr, or its ``fatal:`` message."""
    from gitodb.history.bitmapwalk import check_commit_bitmap
    from gitodb.repo.revparse import peel_to

    names = {p.oid: p.name for p in walk.pending}
    entries, bits = check_commit_bitmap(
        repo.odb,
        [p.oid for p in walk.pending],
        lambda oid: peel_to(repo, oid, "commit", names[oid]),
    )
    sys.stderr.write(f"Bitmap v1 test ({entries} entries loaded)\n")
    sys.stderr.write(f"{bits} bits set\n")
    sys.stderr.write("OK!\n")
    return 0
