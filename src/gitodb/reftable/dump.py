"""Text dumps of tables and stacks in the layout of Git's ``test-tool dump-reftable``.

Used by tests to compare what gitodb reads (and writes) with what Git recorded.
"""

from __future__ import annotations

from collections.abc import Iterable

from gitodb.reftable.records import LogRecord, RefRecord


def format_ref(rec: RefRecord) -> bytes:
    """``ref{NAME(UPDATE_INDEX) ...}`` for one ref record."""
    head = b"ref{%s(%d) " % (rec.name, rec.update_index)
    if rec.value_type == 0:
        body = b"delete"
    elif rec.value_type == 3:
        body = b"=> " + (rec.target or b"")
    elif rec.value_type == 2:
        body = b"val 2 %s(T %s)" % (
            (rec.oid or b"").hex().encode(),
            (rec.peeled or b"").hex().encode(),
        )
    else:
        body = b"val 1 " + (rec.oid or b"").hex().encode()
    return head + body + b"}\n"


def format_log(rec: LogRecord) -> bytes:
    """``log{NAME(UPDATE_INDEX) ...}`` for one log record (``delete`` for a tombstone)."""
    if rec.value_type == 0:
        return b"log{%s(%d) delete\n" % (rec.refname, rec.update_index)
    return b"log{%s(%d) %s <%s> %d %04d\n%s => %s\n\n%s\n}\n" % (
        rec.refname,
        rec.update_index,
        rec.name,
        rec.email,
        rec.time,
        rec.tz_offset,
        rec.old.hex().encode(),
        rec.new.hex().encode(),
        rec.message,
    )


def format_records(refs: Iterable[RefRecord], logs: Iterable[LogRecord]) -> bytes:
    """All ref records, then all log records, as the dump prints them."""
    return b"".join([format_ref(r) for r in refs] + [format_log(g) for g in logs])


def format_blocks(summary: list[tuple[str, int, int]], block_size: int) -> str:
    """The ``dump-reftable -b`` layout from ``TableReader.block_summary()``."""
    lines = ["header:", f"  block_size: {block_size}"]
    prev = None
    for section, length, restarts in summary:
        if section != prev:
            lines.append(f"{section}:")
            prev = section
        lines.append(f"  - length: {length}")
        lines.append(f"    restarts: {restarts}")
    return "\n".join(lines) + "\n"
