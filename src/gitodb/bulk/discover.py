"""Finding the repositories of a run: list files and directory trees.

A ``--repos`` argument that is a file lists one repository path per line (blank
lines and ``#`` comments skipped; relative paths are taken from the current
directory).  A directory is either a repository itself, or searched top-down for
repositories: a directory holding ``.git`` (a work tree) or ``HEAD``, ``objects/``
and ``refs/`` (a bare repository) is taken and not descended into, so a
repository's own files, work tree and submodules are never listed.  Symbolic
links to directories are not followed.  Anything else named on the command line
is still a repository to try (its task reports that it cannot be read).
"""

from __future__ import annotations

import os
from collections.abc import Iterable


def is_repository_dir(path: str) -> bool:
    """True for a work tree with ``.git`` or a bare repository layout (no parsing)."""
    if os.path.lexists(os.path.join(path, ".git")):
        return True
    return (
        os.path.isfile(os.path.join(path, "HEAD"))
        and os.path.isdir(os.path.join(path, "objects"))
        and os.path.isdir(os.path.join(path, "refs"))
    )


def _search(top: str) -> list[str]:
    found: list[str] = []
    for dirpath, dirnames, _files in os.walk(top):
        if is_repository_dir(dirpath):
            found.append(dirpath)
            dirnames[:] = []
            continue
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
    return found


def _read_list(path: str) -> list[str]:
    out = []
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n").rstrip("\r")
            if line.strip() and not line.lstrip().startswith("#"):
                out.append(line.strip())
    return out


def discover(sources: Iterable[str]) -> list[str]:
    """Absolute repository paths named by ``sources`` (files and directories), each once,
    in the order found."""
    seen: set[str] = set()
    out: list[str] = []

    def add(p: str) -> None:
        p = os.path.abspath(p)
        if p not in seen:
            seen.add(p)
            out.append(p)

    for src in sources:
        if os.path.isdir(src):
            if is_repository_dir(src):
                add(src)
            else:
                for p in _search(src):
                    add(p)
        elif os.path.isfile(src) and not os.path.basename(src) == ".git":
            for p in _read_list(src):
                add(p)
        else:
            add(src)  # missing or unreadable: its task says why
    return out
