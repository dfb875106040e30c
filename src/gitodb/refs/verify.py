"""``refs verify``: Git 2.55's consistency checks of the ref store, in its words.

Files backend: every loose ref under ``refs/`` (in directory order, as Git walks
it) and every root ref is checked for its name (``badRefName``), its content
(``badRefContent``, ``refMissingNewline``, ``trailingRefContent``, an id of all
zeros ``badRefOid``) and, for a symref, its target (a ``HEAD`` that names no
branch ``badHeadTarget``, ``badReferentName``, ``symrefTargetIsNotARef``); then
``packed-refs`` line by line (``badPackedRefHeader``, ``badPackedRefEntry``,
``packedRefEntryNotTerminated``, ``badRefName``, ``emptyPackedRefsFile``,
``packedRefUnsorted`` under a ``sorted`` header); a symlink symref is
``symlinkRef``.
Reftable (Git 2.55's ``reftable_be_fsck``): each table's name in
``tables.list`` must be ``<hex>-<hex>-<hex>.ref|.log`` as ``strtoull`` reads it
(``badReftableTableName``); then every live ref of the merged stack: an id
that is all zeros is ``badRefOid``, a symref target is checked as on the files
backend (``badHeadTarget``, ``badReferentName``, ``symrefTargetIsNotARef``).  Linked worktrees'
stacks follow, their refs named ``worktrees/<id>/<ref>``.  A table that does
not open or read is reported as an error (Git 2.55 crashes there).

Each finding has Git's message id; its severity comes from ``FsckSeverities``
(defaults, ``--strict``, ``fsck.<id>`` config): ignored ones are not printed,
info ones print as warnings, and any error makes the check fail.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from gitodb.errors import GitodbError
from gitodb.objects.format import ObjectFormat
from gitodb.objects.fsck import DEFAULTS, ERROR, FATAL, IGNORE, FsckSeverities
from gitodb.refs.base import is_root_ref, refname_format_ok
from gitodb.refs.worktree import OTHER, locate

#: ``report(msg_id, where, text)``: print one finding; True when it is an error.
Report = Callable[[str, str, str], bool]
_HEADER = b"# pack-refs with: "


class Findings:
    """Git's ``fsck_report_ref``: prints ``<level>: <where>: <msgId>: <text>`` lines.

    ``failed`` is set once an error was printed; the command then exits 255.
    """

    def __init__(
        self, severities: FsckSeverities | None = None, write: Callable[[str], None] | None = None
    ) -> None:
        self.severities = severities or FsckSeverities()
        self.write = write or _stderr
        self.failed = False

    def __call__(self, msg_id: str, where: str, text: str) -> bool:
        # gitodb's own ids (a table that does not read) are errors, not configurable
        severity = self.severities.of(msg_id) if msg_id in DEFAULTS else ERROR
        if severity == IGNORE:
            return False
        error = severity in (ERROR, FATAL)
        self.write(f"{'error' if error else 'warning'}: {where}: {msg_id}: {text}")
        self.failed = self.failed or error
        return error


def _stderr(line: str) -> None:
    import sys

    sys.stdout.flush()
    sys.stderr.write(line + "\n")


def _show(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def _check_referent(name: str, referent: str, report: Report) -> None:
    """A symref's target (Git's ``refs_fsck_symref``): a ``HEAD`` (the main one or a
    worktree's) must name a branch; a bad name that is only a warning (by
    configuration) still goes on to the not-a-ref check."""
    kind, stored = locate(name)  # a worktree's HEAD is stored as "<id>/HEAD"
    if (
        (stored if kind != OTHER else stored.partition("/")[2]) == "HEAD"
        and not referent.startswith("refs/heads/")
        and report("badHeadTarget", name, f"HEAD points to non-branch '{referent}'")
    ):
        return
    if is_root_ref(referent):
        return
    if not refname_format_ok(referent) and report(
        "badReferentName", name, f"points to invalid refname '{referent}'"
    ):
        return
    if not referent.startswith(("refs/", "worktrees/")):
        report("symrefTargetIsNotARef", name, f"points to non-ref target '{referent}'")


def _check_content(name: str, data: bytes, fmt: ObjectFormat, report: Report) -> None:
    """One loose ref's bytes (Git's files_fsck_refs_content)."""
    if data.startswith(b"ref:"):
        body = data[4:].lstrip(b" \t")
        target = body.rstrip(b" \t\r\n")
        rest = body[len(target) :]
        if not rest:
            report("refMissingNewline", name, "misses LF at the end")
        elif rest != b"\n":
            report("trailingRefContent", name, "has trailing whitespaces or newlines")
        _check_referent(name, _show(target), report)
        return
    hexsz = fmt.hexsz
    head = data[:hexsz]
    if len(head) < hexsz or not re.fullmatch(rb"[0-9a-f]+", head):
        report("badRefContent", name, _show(data.rstrip()))
        return
    rest = data[hexsz:]
    if not rest:
        report("refMissingNewline", name, "misses LF at the end")
    elif rest != b"\n":
        # Git 2.55: anything but one LF after the id, whitespace too, is "garbage"
        report("trailingRefContent", name, f"has trailing garbage: '{_show(rest)}'")
    elif not head.strip(b"0"):  # checked, as by Git, only in an otherwise sound ref
        report("badRefOid", name, f"points to invalid object ID '{_show(head)}'")


def _walk(directory: Path, prefix: str) -> list[tuple[str, Path]]:
    """Regular files under ``directory`` in readdir order, depth first (Git's dir_iterator)."""
    out: list[tuple[str, Path]] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return out
    for entry in entries:
        name = f"{prefix}/{entry.name}"
        if entry.is_dir(follow_symlinks=False):
            out += _walk(Path(entry.path), name)
        elif not entry.name.endswith(".lock"):
            out.append((name, Path(entry.path)))
    return out


class _Seen:
    """A ``Report`` that remembers whether it reported an error."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.error = False

    def __call__(self, msg_id: str, where: str, text: str) -> bool:
        error = self.report(msg_id, where, text)
        self.error = self.error or error
        return error


def _verify_loose(
    directory: Path, prefix: str, fmt: ObjectFormat, report: Report, verbose: Callable[[str], None]
) -> None:
    """The loose refs under ``directory/refs``, then its root refs (names ``prefix + name``)."""
    for name, path in _walk(directory / "refs", "refs"):
        shown = prefix + name
        verbose(f"Checking {shown}")
        if not refname_format_ok(name, allow_onelevel=is_root_ref(name)):
            report("badRefName", shown, "invalid refname format")
        if path.is_symlink():
            report("symlinkRef", shown, "use deprecated symbolic link for symref")
            continue
        try:
            data = path.read_bytes()
        except OSError:
            report("badRefFiletype", shown, "unexpected file type")
            continue
        _check_content(shown, data, fmt, report)
    try:
        entries = [e.name for e in os.scandir(directory)]  # readdir order, as Git reads it
    except OSError:
        entries = []
    for entry in entries:
        # FETCH_HEAD and MERGE_HEAD are not refs of the store (Git's special refs)
        special = entry in ("FETCH_HEAD", "MERGE_HEAD")
        if is_root_ref(entry) and not special and (directory / entry).is_file():
            verbose(f"Checking {prefix}{entry}")
            seen = _Seen(report)
            _check_content(prefix + entry, (directory / entry).read_bytes(), fmt, seen)
            if seen.error:
                break  # Git 2.55 stops at the first root ref with an error


def verify_files(
    git_dir: Path, fmt: ObjectFormat, report: Report, verbose: Callable[[str], None], shown: str
) -> None:
    """Check a files backend at ``git_dir``, then each linked worktree's own refs
    (named ``worktrees/<id>/...``); ``shown`` is how Git names that directory."""
    _verify_loose(git_dir, "", fmt, report, verbose)
    packed = git_dir / "packed-refs"
    verbose(f"Checking packed-refs file {os.path.join(shown, 'packed-refs')}")
    try:
        data = packed.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        data = None
    if data is not None:
        _check_packed(data, fmt, report)
    for entry in _worktrees(git_dir):
        verbose("Checking references consistency")
        _verify_loose(Path(entry.path), f"worktrees/{entry.name}/", fmt, report, verbose)


def _worktrees(common_dir: Path) -> list[os.DirEntry[str]]:
    """Linked worktrees' directories in readdir order (Git's ``get_worktrees``)."""
    try:
        return [e for e in os.scandir(common_dir / "worktrees") if e.is_dir()]
    except OSError:
        return []


def _check_packed(data: bytes, fmt: ObjectFormat, report: Report) -> None:
    """Git's packed_fsck: each line of ``packed-refs``."""
    if not data:
        report("emptyPackedRefsFile", "packed-refs", "file is empty")
        return
    hexsz = fmt.hexsz
    lines = data.split(b"\n")
    terminated = lines[-1] == b""
    if terminated:
        lines.pop()
    start = 0
    sorted_trait = bool(lines) and lines[0].startswith(_HEADER) and b" sorted " in lines[0] + b" "
    if lines and lines[0].startswith(b"#"):
        if not lines[0].startswith(_HEADER):
            report(
                "badPackedRefHeader",
                "packed-refs.header",
                f"'{_show(lines[0])}' does not start with '# pack-refs with: '",
            )
        start = 1
    previous_was_ref = False
    names: list[tuple[int, bytes]] = []
    for i in range(start, len(lines)):
        line = lines[i]
        n = i + 1
        where = f"packed-refs line {n}"
        if not terminated and i == len(lines) - 1:
            report(
                "packedRefEntryNotTerminated",
                where,
                f"'{_show(line)}' is not terminated with a newline",
            )
        if line.startswith(b"^") and previous_was_ref:
            previous_was_ref = False
            peeled = line[1 : 1 + hexsz]
            if len(peeled) < hexsz or not re.fullmatch(rb"[0-9a-f]+", peeled):
                report("badPackedRefEntry", where, f"'{_show(line[1:])}' has invalid peeled oid")
            elif line[1 + hexsz :]:
                report(
                    "badPackedRefEntry",
                    where,
                    f"has trailing garbage after peeled oid '{_show(line[1 + hexsz :])}'",
                )
            continue
        oid = line[:hexsz]
        if len(oid) < hexsz or not re.fullmatch(rb"[0-9a-f]+", oid):
            report("badPackedRefEntry", where, f"'{_show(line)}' has invalid oid")
            previous_was_ref = False
            continue
        if line[hexsz : hexsz + 1] != b" ":
            report(
                "badPackedRefEntry",
                where,
                f"has no space after oid '{_show(oid)}' but with '{_show(line[hexsz:])}'",
            )
            previous_was_ref = False
            continue
        refname = _show(line[hexsz + 1 :])
        if not refname_format_ok(refname):
            report("badRefName", where, f"has bad refname '{refname}'")
        names.append((n, line[hexsz + 1 :]))
        previous_was_ref = True
    if sorted_trait:
        # a file that says "sorted" must be: Git names the first name out of order
        for (_, prev), (n, cur) in zip(names, names[1:], strict=False):
            if cur <= prev:
                report(
                    "packedRefUnsorted",
                    f"packed-refs line {n}",
                    f"refname '{_show(cur)}' is less than previous refname '{_show(prev)}'",
                )
                break


_C_SPACE = " \t\n\v\f\r"
_HEX = "0123456789abcdefABCDEF"


def _strtoull_end(text: str, pos: int, limit: int) -> int | None:
    """Where C's ``strtoull(text + pos, &end, 16)`` stops; None when it sets ``errno``.

    As glibc does: leading white space, a sign and a ``0x`` prefix (only when a hex
    digit follows) are taken; no digits at all is no conversion (``end`` is the
    start, errno unset); a value above ``limit`` is ``ERANGE``.
    """
    start = pos
    while pos < len(text) and text[pos] in _C_SPACE:
        pos += 1
    if pos < len(text) and text[pos] in "+-":
        pos += 1
    if text[pos : pos + 2].lower() == "0x" and text[pos + 2 : pos + 3] in tuple(_HEX):
        pos += 2
    digits = pos
    while pos < len(text) and text[pos] in _HEX:
        pos += 1
    if pos == digits:
        return start
    return None if int(text[digits:pos], 16) > limit else pos


def table_name_ok(name: str) -> bool:
    """Git 2.55's ``table_has_valid_name``: ``<min>-<max>-<suffix>.ref`` or ``.log``,
    each part read by ``strtoull``/``strtoul`` (64 bits), as the check reads them."""
    limit = (1 << 64) - 1
    pos: int | None = 0
    for last in (False, False, True):
        assert pos is not None
        pos = _strtoull_end(name, pos, limit)
        if pos is None:
            return False
        if last:
            break
        if name[pos : pos + 1] != "-":
            return False
        pos += 1
    assert pos is not None
    return name[pos:] in (".ref", ".log")


def _check_reftable_record(where: str, rec: object, report: Report) -> None:
    from gitodb.reftable.records import RefRecord

    assert isinstance(rec, RefRecord)
    if rec.value_type in (1, 2):
        if rec.oid is not None and not any(rec.oid):
            report("badRefOid", where, f"points to invalid object ID '{rec.oid.hex()}'")
    elif rec.value_type == 3 and rec.target is not None:
        _check_referent(where, _show(rec.target), report)


def _verify_stack(
    reftable_dir: Path, prefix: str, report: Report, verbose: Callable[[str], None]
) -> None:
    from gitodb.reftable.reader import TableReader
    from gitodb.reftable.stack import Stack

    try:
        text = (reftable_dir / "tables.list").read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        text = ""  # no list is an empty stack, as Git reads it
    except OSError as e:
        report("badReftableTable", "tables.list", f"cannot read: {e.strerror}")
        return
    names = [line for line in text.split("\n") if line]
    readable = True
    for name in names:
        verbose(f"Checking table: {name}")
        if not table_name_ok(name):
            report("badReftableTableName", name, "invalid reftable table name")
        try:
            table = TableReader(reftable_dir / name)
            try:
                for _ in table.iter_refs():
                    pass
                for _ in table.iter_logs():
                    pass
            finally:
                table.close()
        except (GitodbError, OSError) as e:
            readable = False
            report("badReftableTable", name, str(e))
    if not readable or not names:
        return
    try:
        stack = Stack(reftable_dir, auto_compact=False)
    except (GitodbError, OSError) as e:  # changed under us: report, do not crash
        report("badReftableTable", "tables.list", str(e))
        return
    try:
        for rec in stack.iter_refs():
            _check_reftable_record(prefix + _show(rec.name), rec, report)
    finally:
        stack.close()


def verify_reftable(common_dir: Path, report: Report, verbose: Callable[[str], None]) -> None:
    """Check the main stack, then each linked worktree's (Git's per-worktree ``refs_fsck``).

    ``report`` gets ``badReftableTableName``, ``badRefOid``, ``badReferentName``,
    ``symrefTargetIsNotARef``; a table that cannot be read is ``badReftableTable``
    (gitodb's id: Git 2.55 crashes on it), always an error.
    """
    _verify_stack(common_dir / "reftable", "", report, verbose)
    for entry in _worktrees(common_dir):
        verbose("Checking references consistency")
        _verify_stack(Path(entry.path) / "reftable", f"worktrees/{entry.name}/", report, verbose)
