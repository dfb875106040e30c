"""Grafts and shallow commits: the parents a walk sees instead of the stored ones.

Git reads ``info/grafts`` (``GIT_GRAFT_FILE`` if set; lines ``<commit> [<parent>...]``,
``#`` comments) and then the shallow file (``GIT_SHALLOW_FILE`` if set, which ``git
--shallow-file <file>`` sets too, empty meaning none; else ``shallow``): one commit a
line, whose history is cut there (no parents).  A shallow entry replaces a graft of
the same commit.  With either present Git ignores the commit-graph file, and so does
``gitodb.history.graph.CommitGraph``.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gitodb.repo import Repository

__all__ = ["load_grafts", "shallow_path"]


def shallow_path(repo: Repository) -> str | None:
    """The shallow file Git reads, or None when an empty ``GIT_SHALLOW_FILE`` says none."""
    override = os.environ.get("GIT_SHALLOW_FILE")
    if override is not None:
        return override or None
    return os.path.join(repo.commondir, "shallow")


def _graft_path(repo: Repository) -> str:
    return os.environ.get("GIT_GRAFT_FILE") or os.path.join(repo.commondir, "info", "grafts")


#: Git 2.55's advice when it reads a graft file (each walk's commit graph reads it once)
_GRAFT_ADVICE = (
    "hint: Support for <GIT_DIR>/info/grafts is deprecated\n"
    "hint: and will be removed in a future Git version.\n"
    "hint:\n"
    'hint: Please use "git replace --convert-graft-file"\n'
    "hint: to convert the grafts into replace refs.\n"
    "hint:\n"
    "hint: Turn this message off by running\n"
    'hint: "git config set advice.graftFileDeprecated false"\n'
)


def _read(path: str | None) -> list[bytes] | None:
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            return f.read().split(b"\n")
    except OSError:
        return None


def load_grafts(repo: Repository) -> dict[bytes, list[bytes]]:
    """Commit id -> the parents to use instead of its own (none for a shallow one)."""
    hexsz = repo.object_format.hexsz
    grafts: dict[bytes, list[bytes]] = {}
    lines = _read(_graft_path(repo))
    if lines is not None:
        if repo.config.get_bool("advice.graftfiledeprecated", True):
            sys.stderr.write(_GRAFT_ADVICE)
    for line in lines or ():
        text = line.rstrip(b"\r")
        if not text or text.startswith(b"#"):
            continue
        ids = text.split(b" ")
        try:
            if any(len(i) != hexsz for i in ids):
                raise ValueError
            oids = [bytes.fromhex(i.decode("ascii")) for i in ids]
        except ValueError:
            sys.stderr.write(f"error: bad graft data: {text.decode('utf-8', 'replace')}\n")
            continue
        grafts[oids[0]] = oids[1:]
    for line in _read(shallow_path(repo)) or ():
        text = line.strip()
        if len(text) != hexsz:
            continue
        try:
            grafts[bytes.fromhex(text.decode("ascii"))] = []
        except ValueError:
            continue
    return grafts
