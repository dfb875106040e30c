"""``gitodb log -g [--format=<fmt>] <ref>``: walk a reflog like ``git log -g``.

Only the reflog walk is supported (it is what the ref backends provide).  Like Git,
entries whose new id is not a commit (deletions, tags) are skipped, but ``@{N}``
still counts them.  Placeholders: %H %h %gd %gD %gn %ge %gs %s %n %%.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from gitodb.errors import BadRevisionError, GitodbError, ObjectNotFoundError
from gitodb.refs.base import RefStore
from gitodb.refs.peel import shorten_ref

USAGE = "usage: git log -g [--format=<format>] [<ref>]"
_PLACEHOLDER = re.compile(rb"%(g[dDnesN]|[Hhsn%])")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"error: {message}\n{USAGE}\n")
        raise SystemExit(129)


def dwim_ref(refs: RefStore, name: str) -> str | None:
    """Expand a short ref name like Git: as given, refs/, refs/tags/, refs/heads/, ..."""
    for cand in (name, f"refs/{name}", f"refs/tags/{name}", f"refs/heads/{name}",
                 f"refs/remotes/{name}", f"refs/remotes/{name}/HEAD"):
        if refs.read(cand) is not None or refs.reflog_exists(cand):
            return cand
    return None


def walk_reflog(repo: Any, spec: str, fmt: bytes,
                paths: list[str] | None = None) -> bytes:
    """The ``log -g --format=fmt`` output for ``spec`` (a ref name, maybe short).

    With ``paths`` (what follows ``--``), only entries whose commit changes one of
    them against each of its parents are shown.
    """
    refs = repo.refs
    full = dwim_ref(refs, spec)
    if full is None:
        raise BadRevisionError(
            f"ambiguous argument '{spec}': unknown revision or path not in the working tree.")
    short = shorten_ref(full).encode("utf-8", "surrogateescape")
    entries = refs.reflog(full)
    odb = repo.odb
    out = []
    n = -1
    for e in reversed(entries):
        n += 1
        try:
            if not any(e.new) or odb.read_header(e.new)[0] != "commit":
                continue
        except ObjectNotFoundError:
            continue
        if paths and not _touches(repo, e.new, paths):
            continue

        def sub(m: re.Match[bytes], e: Any = e, n: int = n) -> bytes:
            code = m.group(1)
            if code == b"H":
                return e.new.hex().encode()
            if code == b"h":
                return e.new.hex()[:7].encode()
            if code == b"gd":
                return b"%s@{%d}" % (short, n)
            if code == b"gD":
                return b"%s@{%d}" % (full.encode("utf-8", "surrogateescape"), n)
            if code == b"gN":
                return b"%d" % n
            if code == b"gn":
                return str(e.name).encode("utf-8", "surrogateescape")
            if code == b"ge":
                return str(e.email).encode("utf-8", "surrogateescape")
            if code == b"gs":
                return bytes(e.message)
            if code == b"s":
                return odb.commit(e.new).message.split(b"\n", 1)[0]
            if code == b"n":
                return b"\n"
            return b"%"

        out.append(_PLACEHOLDER.sub(sub, fmt) + b"\n")
    return b"".join(out)


def _entry_at(repo: Any, tree: bytes | None, path: str) -> tuple[int, bytes] | None:
    """``(mode, id)`` of ``path`` in tree ``tree``, or None."""
    for part in [p for p in path.split("/") if p]:
        if tree is None:
            return None
        entry = repo.odb.tree(tree).get(part)
        if entry is None:
            return None
        found = (entry.mode, entry.oid)
        tree = entry.oid if entry.is_tree else None
    return found if path.strip("/") else None


def _touches(repo: Any, commit: bytes, paths: list[str]) -> bool:
    """Whether ``commit`` changes any of ``paths`` against every parent (not TREESAME)."""
    c = repo.odb.commit(commit)
    parents = [repo.odb.commit(p).tree for p in c.parents] or [None]
    return all(any(_entry_at(repo, c.tree, p) != _entry_at(repo, t, p) for p in paths)
               for t in parents)


def run(argv: list[str], ctx: Any) -> int:
    """Print the reflog of one ref, newest first."""
    parser = _Parser(prog="git log", add_help=False)
    parser.add_argument("-g", "--walk-reflogs", action="store_true")
    parser.add_argument("--format", "--pretty", dest="format", default=None)
    parser.add_argument("refs", nargs="*")
    args = parser.parse_args(argv)
    if not args.walk_reflogs:
        raise GitodbError("gitodb log supports only -g (--walk-reflogs)")
    fmt = args.format
    if fmt is None:
        fmt = "%H %gd: %gs"
    if fmt.startswith(("format:", "tformat:")):
        fmt = fmt.split(":", 1)[1]
    repo = ctx.open_repository()
    specs = args.refs or ["HEAD"]
    data = b"".join(walk_reflog(repo, s, fmt.encode("utf-8", "surrogateescape"))
                    for s in specs)
    sys.stdout.buffer.write(data)
    return 0
