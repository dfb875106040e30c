"""The checker Git runs on the objects of a received pack (``--strict``).

``index-pack --strict`` and ``unpack-objects --strict`` run Git's fsck on every
object with warnings raised to errors, take ``<msg-id>=<severity>`` lists to
change that, check refnames in tags and parse ``.gitmodules`` blobs.  This module
builds that ``PackObjectChecker`` once for both.
"""

from __future__ import annotations

from collections.abc import Iterable

from gitodb.errors import PackError
from gitodb.objects.check import PackObjectChecker
from gitodb.objects.format import ObjectFormat


def received_pack_checker(
    fmt: ObjectFormat, msg_lists: Iterable[str] = (), *, fsck: bool = True
) -> PackObjectChecker:
    """The checker of a received pack: Git's strict fsck, changed by each
    ``<msg-id>=<severity>[,...]`` list (a bad one raises ``PackError``); with
    ``fsck`` False only the links are checked."""
    from gitodb.objects.fsck import FsckConfigError, FsckSeverities
    from gitodb.refs.base import refname_format_ok
    from gitodb.repo.gitmodules import parse_gitmodules

    severities = FsckSeverities(strict=True)  # a received pack's fsck: warnings are errors
    try:
        for values in msg_lists:
            severities.parse(values)
    except FsckConfigError as e:
        raise PackError(e.message) from None
    return PackObjectChecker(
        fmt,
        fsck=fsck,
        severities=severities,
        refname_ok=refname_format_ok,
        gitmodules_parser=parse_gitmodules,
    )
