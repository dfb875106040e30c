"""Which attribute files apply in a repository, read as Git reads them.

From lowest to highest precedence: the system file (``/etc/gitattributes``, not
with ``GIT_ATTR_NOSYSTEM``), the global file (``core.attributesFile``, default
``$XDG_CONFIG_HOME/git/attributes`` or ``~/.config/git/attributes``), the
``.gitattributes`` of each directory from the top down to the path's own, and
``$GIT_DIR/info/attributes``.

The in-tree files come from the *attribute source*: a tree when one is named
(``--attr-source``, ``GIT_ATTR_SOURCE``, else ``attr.tree``, which is ignored
when it names no tree), else the work tree, or the index when there is no work
tree (as inside ``.git``).  A bare repository without a source has no in-tree
attributes (Git 2.55 no longer defaults to ``HEAD`` there).  A
symlinked in-tree ``.gitattributes`` is not followed (Git's warning).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from gitodb.errors import BadRevisionError, GitodbError, ObjectNotFoundError
from gitodb.objects.attributes import AttrFile, AttributeStack, AttrValue, parse_file
from gitodb.objects.tree import Tree

if TYPE_CHECKING:
    from gitodb.repo import Repository
    from gitodb.repo.config import Config

GITATTRIBUTES = ".gitattributes"


def _env_bool(name: str) -> bool:
    return os.environ.get(name, "").lower() in ("1", "true", "yes", "on")


def _global_file(config: Config) -> str | None:
    path = config.get("core.attributesfile")
    if path:
        return os.path.expanduser(path)
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        return os.path.join(xdg, "git", "attributes")
    home = os.environ.get("HOME")
    return os.path.join(home, ".config", "git", "attributes") if home else None


def _read_outside(path: str) -> bytes | None:
    """An attribute file outside the tree: None when absent (Git warns on other errors)."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        sys.stderr.write(f"warning: unable to access '{path}': {e.strerror}\n")
        return None


class AttributeReader:
    """Answers ``attributes(path)`` for one repository (or none: global and system only).

    ``work_tree`` is the top of the work tree (None for none); ``source`` names
    the tree to read in-tree files from (a revision), overriding the work tree.
    In-tree files are read once per directory and kept.
    """

    def __init__(
        self,
        repo: Repository | None,
        config: Config,
        *,
        work_tree: str | None = None,
        source: str | None = None,
    ) -> None:
        self.repo = repo
        self.work_tree = work_tree
        self.casefold = config.get_bool("core.ignorecase", False)
        self._tree = self._source_tree(repo, config, source) if repo is not None else None
        self._outer: list[AttrFile] = []
        if not _env_bool("GIT_ATTR_NOSYSTEM"):
            self._add_outside(self._outer, "/etc/gitattributes")
        global_file = _global_file(config)
        if global_file:
            self._add_outside(self._outer, global_file)
        self._info: list[AttrFile] = []
        if repo is not None:
            self._add_outside(self._info, os.path.join(repo.commondir, "info", "attributes"))
        self._dirs: dict[str, AttrFile | None] = {}
        self._index: dict[bytes, bytes] | None = None  # staged .gitattributes: id by path
        self._stacks: dict[str, AttributeStack] = {}  # by directory (batch modes ask often)

    @staticmethod
    def _add_outside(files: list[AttrFile], path: str) -> None:
        data = _read_outside(path)
        if data is not None:
            files.append(parse_file(data, path))

    @staticmethod
    def _source_tree(repo: Repository, config: Config, source: str | None) -> bytes | None:
        """The tree in-tree attributes come from, or None for the work tree."""
        from gitodb.repo.revparse import peel_to, resolve

        ignore_bad = False
        if source is None:
            source = os.environ.get("GIT_ATTR_SOURCE")
        if source is None and config.get("attr.tree"):
            source, ignore_bad = config.get("attr.tree"), True
        if source is None:
            return None
        try:
            return peel_to(repo, resolve(repo, source), "tree", source)
        except (BadRevisionError, ObjectNotFoundError):
            if ignore_bad:
                return b""  # no tree: no in-tree attributes
            raise GitodbError("bad --attr-source or GIT_ATTR_SOURCE") from None

    def _in_tree(self, directory: str) -> AttrFile | None:
        if directory in self._dirs:
            return self._dirs[directory]
        rel = f"{directory}/{GITATTRIBUTES}" if directory else GITATTRIBUTES
        data = self._read_in_tree(rel)
        got = None
        if data is not None:
            got = parse_file(data, rel, origin=directory, macro_ok=not directory)
        self._dirs[directory] = got
        return got

    def _read_in_tree(self, rel: str) -> bytes | None:
        if self._tree is not None:
            return self._read_from_tree(rel) if self._tree else None
        if self.work_tree is None:
            return self._read_from_index(rel)
        return self._read_from_work_tree(rel)

    def _read_from_index(self, rel: str) -> bytes | None:
        """Without a work tree (as inside ``.git``), Git reads the staged file.

        (Git also falls back to the index for a file a sparse work tree lacks; that
        would parse the whole index on every command that reads attributes, 30 ms
        for 15,000 files, so it is not done.)"""
        if self.repo is None:
            return None
        if self._index is None:
            from gitodb.repo.index import index_path, read_index

            self._index = {}
            # none in a bare repository, or before anything is staged
            for e in read_index(index_path(self.repo), self.repo.object_format):
                if e.stage == 0 and e.path.rsplit(b"/", 1)[-1] == GITATTRIBUTES.encode():
                    self._index[e.path] = e.oid
        oid = self._index.get(rel.encode("utf-8", "surrogateescape"))
        if oid is None:
            return None
        kind, data = self.repo.odb.read(oid)
        return bytes(data) if kind == "blob" else None

    def _read_from_work_tree(self, rel: str) -> bytes | None:
        assert self.work_tree is not None
        path = os.path.join(self.work_tree, rel)
        try:
            if os.path.islink(path):
                # Git opens in-tree attribute files with O_NOFOLLOW
                sys.stderr.write(
                    f"warning: unable to access '{rel}': Too many levels of symbolic links\n"
                )
                return None
            with open(path, "rb") as f:
                return f.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except OSError as e:
            sys.stderr.write(f"warning: unable to access '{rel}': {e.strerror}\n")
            return None

    def _read_from_tree(self, rel: str) -> bytes | None:
        assert self.repo is not None and self._tree
        fmt = self.repo.object_format
        oid, mode = self._tree, 0o040000
        for part in rel.split("/"):
            if mode & 0o170000 != 0o040000:
                return None
            try:
                _t, data = self.repo.odb.read(oid)
            except ObjectNotFoundError:
                return None
            entry = Tree(data, fmt).get(part)
            if entry is None:
                return None
            oid, mode = entry.id, entry.mode
        if mode & 0o170000 != 0o100000:
            return None  # a symlink (or anything but a file) is not followed
        try:
            t, data = self.repo.odb.read(oid)
        except ObjectNotFoundError:
            return None
        return data if t == "blob" else None

    def stack_for(self, path: str) -> AttributeStack:
        """The attribute files that apply to ``path``, lowest precedence first."""
        directory = path.rpartition("/")[0]
        cached = self._stacks.get(directory)
        if cached is not None:
            return cached
        files = list(self._outer)
        parts = path.split("/")[:-1]
        for depth in range(len(parts) + 1):
            got = self._in_tree("/".join(parts[:depth]))
            if got is not None:
                files.append(got)
        files.extend(self._info)
        stack = self._stacks[directory] = AttributeStack(files, casefold=self.casefold)
        return stack

    def attributes(self, path: str) -> dict[str, AttrValue]:
        """The attributes determined for the file ``path`` (relative to the top)."""
        return self.stack_for(path).check(path)
