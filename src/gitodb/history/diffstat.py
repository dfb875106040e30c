"""Diff statistics as Git prints them: ``--stat``, ``--numstat``, ``--shortstat``,
``--summary`` and ``--compact-summary``.

``file_stats(changes, read_blob)`` counts the lines each change adds and deletes
with Git's line diff (``gitodb.history.linediff``); for a binary file the counts
are the sizes in bytes, as Git's ``Bin <old> -> <new> bytes``.  The formatters
take those records and reproduce Git's layout: names shortened from the left
(``.../``) when they do not fit, the ``+``/``-`` graph scaled to the width, the
summary line's singulars and plurals.
"""

from __future__ import annotations

import stat
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gitodb.history.linediff import diff_data
from gitodb.history.patch import is_binary, side_content
from gitodb.objects.pretty import quote_path


@dataclass
class FileStat:
    """One file's counts: lines added and deleted (bytes new and old if binary)."""

    path: bytes
    old_path: bytes | None  # the source of a rename or copy
    added: int
    deleted: int
    binary: bool
    comment: str | None = None  # the --compact-summary note: "new", "gone", "mode +x", ...


def _compact_summary(change: Any, renamed: bool) -> str | None:
    """Git's ``get_compact_summary``."""
    one = change.old_mode or 0
    two = change.new_mode or 0
    if not renamed:
        if change.status == "A":
            if stat.S_ISLNK(two):
                return "new +l"
            return "new +x" if two & 0o777 == 0o755 else "new"
        if change.status == "D":
            return "gone"
    if stat.S_ISLNK(one) and not stat.S_ISLNK(two):
        return "mode -l"
    if not stat.S_ISLNK(one) and stat.S_ISLNK(two):
        return "mode +l"
    if one & 0o777 == 0o644 and two & 0o777 == 0o755:
        return "mode +x"
    if one & 0o777 == 0o755 and two & 0o777 == 0o644:
        return "mode -x"
    return None


def file_stats(
    changes: Sequence[Any],
    read_blob: Callable[[bytes], bytes],
    *,
    text: bool = False,
    binary_attr: Callable[[bytes], bool] | None = None,
    indent_heuristic: bool = True,
    minimal: bool = False,
    whitespace: int = 0,
) -> list[FileStat]:
    """The counts of each file change (trees are skipped); ``whitespace``:
    ``linediff.WS_*`` flags."""
    out = []
    for ch in changes:
        if stat.S_ISDIR(ch.old_mode or 0) or stat.S_ISDIR(ch.new_mode or 0):
            continue
        old_path = getattr(ch, "old_path", None)
        old = side_content(ch.old_mode, ch.old_id, read_blob)
        new = side_content(ch.new_mode, ch.new_id, read_blob)
        binary = False
        if not text:
            binary = (bool(ch.old_mode) and is_binary(old)) or (
                bool(ch.new_mode) and is_binary(new)
            )
            if not binary and binary_attr is not None:
                binary = binary_attr(old_path or ch.path) or binary_attr(ch.path)
        if binary:
            same = ch.old_id == ch.new_id
            added, deleted = (0, 0) if same else (len(new), len(old))
        elif ch.old_id == ch.new_id and ch.old_mode and ch.new_mode:
            added = deleted = 0
        else:
            edits = diff_data(
                old, new, indent_heuristic=indent_heuristic, minimal=minimal, whitespace=whitespace
            )
            added = sum(e.n2 for e in edits)
            deleted = sum(e.n1 for e in edits)
        fs = FileStat(ch.path, old_path, added, deleted, binary)
        fs.comment = _compact_summary(ch, old_path is not None)
        out.append(fs)
    return out


def pprint_rename(old: bytes, new: bytes, quote_fully: bool = True) -> bytes:
    """Git's ``pprint_rename``: ``a/{b => c}/d``, the common leading and trailing
    directories outside the braces; both names quoted whole when either needs it."""
    qa, qb = quote_path(old, quote_fully), quote_path(new, quote_fully)
    if qa != old or qb != new:
        return qa + b" => " + qb
    len_a, len_b = len(old), len(new)
    pfx = 0
    i = 0
    while i < len_a and i < len_b and old[i] == new[i]:
        if old[i] == 0x2F:
            pfx = i + 1
        i += 1
    # From the terminating NUL backwards; with a prefix, one step into it to see
    # its slash.
    adjust = 1 if pfx else 0
    oa, ob = len_a, len_b
    sfx = 0
    while pfx - adjust <= oa and pfx - adjust <= ob:
        ca = old[oa] if oa < len_a else 0
        cb = new[ob] if ob < len_b else 0
        if ca != cb:
            break
        if ca == 0x2F:
            sfx = len_a - oa
        oa -= 1
        ob -= 1
    a_mid = max(len_a - pfx - sfx, 0)
    b_mid = max(len_b - pfx - sfx, 0)
    mid = old[pfx : pfx + a_mid] + b" => " + new[pfx : pfx + b_mid]
    if pfx + sfx:
        return old[:pfx] + b"{" + mid + b"}" + old[len_a - sfx :]
    return mid


def _print_name(fs: FileStat, quote_fully: bool) -> bytes:
    if fs.old_path is not None:
        name = pprint_rename(fs.old_path, fs.path, quote_fully)
    else:
        name = quote_path(fs.path, quote_fully)
    if fs.comment:
        name += b" (%s)" % fs.comment.encode()
    return name


def _char_width(c: str) -> int:
    if unicodedata.combining(c):
        return 0
    return 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1


def _width(name: bytes) -> int:
    """Display columns of a name (Git's ``utf8_strwidth``; bytes if not UTF-8)."""
    if name.isascii():
        return len(name)
    try:
        text = name.decode("utf-8")
    except UnicodeDecodeError:
        return len(name)
    return sum(_char_width(c) for c in text)


def _tail(name: bytes, columns: int) -> bytes:
    """The end of ``name`` that fits in ``columns`` (whole characters)."""
    if name.isascii():
        return name[len(name) - columns :] if columns else b""
    try:
        text = name.decode("utf-8")
    except UnicodeDecodeError:
        return name[len(name) - columns :] if columns else b""
    widths = [_char_width(c) for c in text]
    total = sum(widths)
    k = 0
    while k < len(text) and total > columns:
        total -= widths[k]
        k += 1
    return text[k:].encode()


def numstat(stats: Sequence[FileStat], nul: bool = False, quote_fully: bool = True) -> bytes:
    """``--numstat``: ``<added>\\t<deleted>\\t<path>`` (``-`` for binary files)."""
    out = []
    for fs in stats:
        num = b"-\t-\t" if fs.binary else b"%d\t%d\t" % (fs.added, fs.deleted)
        if nul:
            if fs.old_path is not None:
                out.append(num + b"\0" + fs.old_path + b"\0" + fs.path + b"\0")
            else:
                out.append(num + fs.path + b"\0")
        elif fs.old_path is not None:
            out.append(num + pprint_rename(fs.old_path, fs.path, quote_fully) + b"\n")
        else:
            out.append(num + quote_path(fs.path, quote_fully) + b"\n")
    return b"".join(out)


def shortstat(stats: Sequence[FileStat]) -> bytes:
    """The ``N files changed, X insertions(+), Y deletions(-)`` line."""
    if not stats:
        return b""
    files = len(stats)
    added = sum(fs.added for fs in stats if not fs.binary)
    deleted = sum(fs.deleted for fs in stats if not fs.binary)
    line = b" %d file%s changed" % (files, b"" if files == 1 else b"s")
    if added or not deleted:
        line += b", %d insertion%s(+)" % (added, b"" if added == 1 else b"s")
    if deleted or not added:
        line += b", %d deletion%s(-)" % (deleted, b"" if deleted == 1 else b"s")
    return line + b"\n"


def _scale(it: int, width: int, max_change: int) -> int:
    """Git's ``scale_linear``: at least one column for any change."""
    if not it:
        return 0
    return 1 + it * (width - 1) // max_change


def diffstat(
    stats: Sequence[FileStat],
    *,
    width: int = 80,
    name_width: int = 0,
    graph_width: int = 0,
    count: int = 0,
    quote_fully: bool = True,
) -> bytes:
    """``--stat``: Git's ``show_stats`` (``width`` the total columns; ``name_width``
    and ``graph_width`` caps, 0 for none; ``count`` the files shown, 0 for all)."""
    if not stats:
        return b""
    shown = list(stats[: count or len(stats)])
    names = [_print_name(fs, quote_fully) for fs in shown]
    max_len = max((_width(n) for n in names), default=0)
    max_change = 0
    number_width = 0
    bin_width = 0
    for fs in shown:
        if fs.binary:
            bin_width = max(bin_width, 14 + len(str(fs.added)) + len(str(fs.deleted)))
            number_width = 3
        else:
            max_change = max(max_change, fs.added + fs.deleted)
    number_width = max(len(str(max_change)), number_width)
    width = max(width, 16 + 6 + number_width)
    graph = max_change if max_change + 4 > bin_width else bin_width - 4
    if graph_width and graph_width < graph:
        graph = graph_width
    name_w = name_width if 0 < name_width < max_len else max_len
    if name_w + number_width + 6 + graph > width:
        if graph > width * 3 // 8 - number_width - 6:
            graph = max(width * 3 // 8 - number_width - 6, 6)
        if graph_width and graph > graph_width:
            graph = graph_width
        if name_w > width - number_width - 6 - graph:
            name_w = width - number_width - 6 - graph
        else:
            graph = width - number_width - 6 - name_w
    out = []
    for fs, name in zip(shown, names, strict=True):
        prefix = b""
        room = name_w
        if name_w < _width(name):
            prefix = b"..."
            room = max(room - 3, 0)
            name = _tail(name, room)
            slash = name.find(b"/")
            if slash >= 0:
                name = name[slash:]
        pad = b" " * max(room - _width(name), 0)
        if fs.binary:
            line = b" %s%s%s | %*s" % (prefix, name, pad, number_width, b"Bin")
            if fs.added or fs.deleted:
                line += b" %d -> %d bytes" % (fs.deleted, fs.added)
            out.append(line + b"\n")
            continue
        add, dele = fs.added, fs.deleted
        if graph <= max_change:
            total = _scale(add + dele, graph, max_change)
            if total < 2 and add and dele:
                total = 2
            if add < dele:
                add = _scale(add, graph, max_change)
                dele = total - add
            else:
                dele = _scale(dele, graph, max_change)
                add = total - dele
        changed = fs.added + fs.deleted
        out.append(
            b" %s%s%s | %*d%s%s%s\n"
            % (
                prefix,
                name,
                pad,
                number_width,
                changed,
                b" " if changed else b"",
                b"+" * add,
                b"-" * dele,
            )
        )
    if len(shown) < len(stats):
        out.append(b" ...\n")
    out.append(shortstat(stats))
    return b"".join(out)


def summary(changes: Sequence[Any], quote_fully: bool = True) -> bytes:
    """``--summary``: creations, deletions, renames and mode changes."""
    out = []
    for ch in changes:
        old_path = getattr(ch, "old_path", None)
        one = ch.old_mode or 0
        two = ch.new_mode or 0
        if ch.status == "D":
            out.append(b" delete mode %06o %s\n" % (one, quote_path(ch.path, quote_fully)))
        elif ch.status == "A":
            out.append(b" create mode %06o %s\n" % (two, quote_path(ch.path, quote_fully)))
        elif ch.status in ("R", "C") and old_path is not None:
            verb = b"rename" if ch.status == "R" else b"copy"
            names = pprint_rename(old_path, ch.path, quote_fully)
            out.append(b" %s %s (%d%%)\n" % (verb, names, ch.similarity))
            if one and two and one != two:
                out.append(b" mode change %06o => %06o\n" % (one, two))
        elif one and two and one != two:
            out.append(
                b" mode change %06o => %06o %s\n" % (one, two, quote_path(ch.path, quote_fully))
            )
    return b"".join(out)
