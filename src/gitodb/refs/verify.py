"""``refs verify``: Git 2.55's consistency checks of the ref store, in its words.

Files backend: every loose ref under ``refs/`` (in directory order, as Git walks
it) and every root ref is checked for its name (``badRefName``), its content
(``badRefContent``, ``refMissingNewline``, ``trailingRefContent``) and, for a
symref, its target (``badReferentName``, ``symrefTargetIsNotARef``); then
``packed-refs`` line by line (``badPackedRefHeader``, ``badPackedRefEntry``,
``packedRefEntryNotTerminated``, ``badRefName``, ``emptyPackedRefsFile``,
``packedRefUnsorted`` under a ``sorted`` header); a symlink symref is
``symlinkRef``.
Reftable: every table of the stack must open and read.

Each finding is ``(level, message)`` with level ``error`` or ``warning``; the
caller prints them, and any error makes the check fail.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from gitodb.errors import GitodbError
from gitodb.objects.format import ObjectFormat
from gitodb.refs.base import is_root_ref, refname_format_ok

Report = Callable[[str, str], None]
_HEADER = b"# pack-refs with: "


def _show(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def _check_name(name: str, report: Report) -> None:
    if not refname_format_ok(name, allow_onelevel=is_root_ref(name)):
        report("error", f"{name}: badRefName: invalid refname format")


def _check_content(name: str, data: bytes, fmt: ObjectFormat, report: Report) -> None:
    """One loose ref's bytes (Git's files_fsck_refs_content)."""
    if data.startswith(b"ref:"):
        body = data[4:].lstrip(b" \t")
        target = body.rstrip(b" \t\r\n")
        rest = body[len(target) :]
        if not rest:
            report("warning", f"{name}: refMissingNewline: misses LF at the end")
        elif rest != b"\n":
            report("warning", f"{name}: trailingRefContent: has trailing whitespaces or newlines")
        referent = _show(target)
        if not is_root_ref(referent) and not refname_format_ok(referent):
            report("error", f"{name}: badReferentName: points to invalid refname '{referent}'")
        elif not is_root_ref(referent) and not referent.startswith(("refs/", "worktrees/")):
            report(
                "warning", f"{name}: symrefTargetIsNotARef: points to non-ref target '{referent}'"
            )
        return
    hexsz = fmt.hexsz
    head = data[:hexsz]
    if len(head) < hexsz or not re.fullmatch(rb"[0-9a-f]+", head):
        report("error", f"{name}: badRefContent: {_show(data.rstrip())}")
        return
    rest = data[hexsz:]
    if not rest:
        report("warning", f"{name}: refMissingNewline: misses LF at the end")
    elif rest != b"\n":
        if rest.strip(b" \t\r\n"):
            report("warning", f"{name}: trailingRefContent: has trailing garbage: '{_show(rest)}'")
        else:
            report("warning", f"{name}: trailingRefContent: has trailing whitespaces or newlines")


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


def verify_files(
    git_dir: Path, fmt: ObjectFormat, report: Report, verbose: Callable[[str], None], shown: str
) -> None:
    """Check a files backend at ``git_dir``; ``shown`` is how Git names that directory."""
    for name, path in _walk(git_dir / "refs", "refs"):
        verbose(f"Checking {name}")
        _check_name(name, report)
        if path.is_symlink():
            report("warning", f"{name}: symlinkRef: use deprecated symbolic link for symref")
            continue
        try:
            data = path.read_bytes()
        except OSError:
            report("error", f"{name}: badRefFiletype: unexpected file type")
            continue
        _check_content(name, data, fmt, report)
    for entry in sorted(os.listdir(git_dir)):
        # FETCH_HEAD and MERGE_HEAD are not refs of the store (Git's special refs)
        special = entry in ("FETCH_HEAD", "MERGE_HEAD")
        if is_root_ref(entry) and not special and (git_dir / entry).is_file():
            verbose(f"Checking {entry}")
            _check_content(entry, (git_dir / entry).read_bytes(), fmt, report)
    packed = git_dir / "packed-refs"
    verbose(f"Checking packed-refs file {os.path.join(shown, 'packed-refs')}")
    try:
        data = packed.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return
    _check_packed(data, fmt, report)


def _check_packed(data: bytes, fmt: ObjectFormat, report: Report) -> None:
    """Git's packed_fsck: each line of ``packed-refs``."""
    if not data:
        report("warning", "packed-refs: emptyPackedRefsFile: file is empty")
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
                "error",
                f"packed-refs.header: badPackedRefHeader: '{_show(lines[0])}' does not start "
                "with '# pack-refs with: '",
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
                "error",
                f"{where}: packedRefEntryNotTerminated: '{_show(line)}' is not terminated "
                "with a newline",
            )
        if line.startswith(b"^") and previous_was_ref:
            previous_was_ref = False
            peeled = line[1 : 1 + hexsz]
            if len(peeled) < hexsz or not re.fullmatch(rb"[0-9a-f]+", peeled):
                report(
                    "error",
                    f"{where}: badPackedRefEntry: '{_show(line[1:])}' has invalid peeled oid",
                )
            elif line[1 + hexsz :]:
                report(
                    "error",
                    f"{where}: badPackedRefEntry: has trailing garbage after peeled oid "
                    f"'{_show(line[1 + hexsz :])}'",
                )
            continue
        oid = line[:hexsz]
        if len(oid) < hexsz or not re.fullmatch(rb"[0-9a-f]+", oid):
            report("error", f"{where}: badPackedRefEntry: '{_show(line)}' has invalid oid")
            previous_was_ref = False
            continue
        if line[hexsz : hexsz + 1] != b" ":
            report(
                "error",
                f"{where}: badPackedRefEntry: has no space after oid '{_show(oid)}' but with "
                f"'{_show(line[hexsz:])}'",
            )
            previous_was_ref = False
            continue
        refname = _show(line[hexsz + 1 :])
        if not refname_format_ok(refname):
            report("error", f"{where}: badRefName: has bad refname '{refname}'")
        names.append((n, line[hexsz + 1 :]))
        previous_was_ref = True
    if sorted_trait:
        # a file that says "sorted" must be: Git names the first name out of order
        for (_, prev), (n, cur) in zip(names, names[1:], strict=False):
            if cur <= prev:
                report(
                    "error",
                    f"packed-refs line {n}: packedRefUnsorted: refname '{_show(cur)}' is less "
                    f"than previous refname '{_show(prev)}'",
                )
                break


def verify_reftable(reftable_dir: Path, report: Report, verbose: Callable[[str], None]) -> None:
    """Check that every table the stack lists opens and reads."""
    from gitodb.reftable.reader import TableReader

    try:
        names = (reftable_dir / "tables.list").read_text().split()
    except OSError as e:
        report("error", f"tables.list: badReftableTableName: {e.strerror}")
        return
    for name in names:
        verbose(f"Checking table: {name}")
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
            report("error", f"{name}: badReftableTable: {e}")
