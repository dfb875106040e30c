"""Repository: discovery like Git's, config, object format, refs and object database.

A ``Repository`` opens its object database and ref store when first used; ``close()``
(or leaving a ``with`` block) releases their mappings and file handles, and a later
use opens them again.  It pickles by path: the copy in another process reads the
configuration again there and opens the rest lazily, which is what process pools and
Dask need.
"""

from __future__ import annotations

import os

from gitodb.errors import RepositoryError
from gitodb.objects.format import ObjectFormat, format_by_name
from gitodb.purepath import absolute as _absolute
from gitodb.purepath import pure as _pure
from gitodb.refs import RefStore, open_refs
from gitodb.repo.config import Config, parse_file
from gitodb.repo.config_levels import load_config
from gitodb.repo.extensions import check_repository_format, split_ref_storage
from gitodb.types import cached_property

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from gitodb.durable import FsyncPolicy
    from gitodb.objects import Blob, Commit, GitObject, Tag, Tree
    from gitodb.objects.mailmap import Mailmap
    from gitodb.objects.oid import ObjectId, ObjectIdLike
    from gitodb.repo.compat import CompatObjects
    from gitodb.repo.odb import ObjectDatabase

__all__ = ["Repository", "Config", "find_work_tree_top", "work_tree_mailmap"]


def _is_git_dir(path: str) -> bool:
    """Git's check: HEAD, plus objects/ and refs/ (in the common dir for worktrees)."""
    return _git_dir_common(path) is not None


def _git_dir_common(path: str) -> str | None:
    """The common dir of git directory ``path``, or None if it is not one."""
    if not os.path.isfile(os.path.join(path, "HEAD")):
        return None
    common = _common_dir(path)
    if os.path.isdir(os.path.join(common, "objects")) and os.path.isdir(
        os.path.join(common, "refs")
    ):
        return common
    return None


def _common_dir(git_dir: str) -> str:
    try:
        with open(os.path.join(git_dir, "commondir")) as f:
            rel = f.read().strip()
    except FileNotFoundError:
        return git_dir
    return os.path.realpath(os.path.join(git_dir, rel))


def _read_gitfile(path: str) -> str:
    with open(path, errors="replace") as f:
        text = f.read().strip()
    if not text.startswith("gitdir:"):
        raise RepositoryError(f"invalid gitfile format: {_pure(path)}")
    target = _pure(text[len("gitdir:") :].strip())
    if os.path.isabs(target):
        return target
    return os.path.realpath(os.path.join(os.path.dirname(_pure(path)), target))


class Repository:
    """A Git repository: ``git_dir``, ``common_dir``, ``config``, ``refs`` and ``odb``.

    ``git_dir`` and ``common_dir`` are ``pathlib.Path``s; ``gitdir`` and ``commondir``
    are the same directories as strings (what the library's own code uses: a command
    that never asks for a ``Path`` never imports ``pathlib``).
    """

    def __init__(
        self, path: str | os.PathLike[str] = ".", *, config_overrides: list[str] | None = None
    ) -> None:
        """Open the repository at ``path``: a work tree, a ``.git`` dir/file, or a bare repo."""
        self._config_overrides = list(config_overrides or [])  # kept for pickling
        p = _pure(os.fspath(path))
        dotgit = _pure(os.path.join(p, ".git"))
        if os.path.isfile(dotgit):
            git_dir = _read_gitfile(dotgit)
        elif _is_git_dir(dotgit):
            git_dir = dotgit
        elif os.path.isfile(p):
            git_dir = _read_gitfile(p)
        else:
            git_dir = p
        common = _git_dir_common(git_dir)
        if common is None:
            raise RepositoryError(f"not a git repository: '{path}'")
        self.gitdir: str = _absolute(git_dir)
        # the common dir found by the check (read once), made absolute as before
        self.commondir: str = common if common != git_dir else self.gitdir
        local = (
            os.path.join(self.commondir, "config"),
            _config_display(path, git_dir, self.commondir),
        )
        # Git learns the repository format from the repository's own file alone:
        # no includes, no other level, no -c.  The file is parsed once: its entries
        # are the local level of the whole configuration below too.
        got_entries = parse_file(*local)
        local_entries = list(got_entries) if got_entries is not None else None
        repo_format = Config()
        repo_format.add_entries(local_entries, *local)
        version = check_repository_format(repo_format)
        self.object_format: ObjectFormat = format_by_name(
            (repo_format.get("extensions.objectformat") or "sha1") if version == 1 else "sha1"
        )
        storage = (repo_format.get("extensions.refstorage") or "files") if version == 1 else "files"
        # Git 2.55: the environment names the ref storage over the config
        storage = os.environ.get("GIT_REFERENCE_BACKEND") or storage
        got = split_ref_storage(storage)
        if got is None:
            raise RepositoryError(f"unknown ref storage format: '{storage.partition('://')[0]}'")
        self.ref_storage: str = got[0]
        #: where the refs are stored when the ref storage names a path
        #: (``<format>://<path>``); None: in the git directories themselves
        self.ref_dir: str | None = (
            None if got[1] is None else os.path.normpath(os.path.join(self.commondir, got[1]))
        )
        worktree = None
        if repo_format.get_bool("extensions.worktreeconfig"):
            # Git reads the worktree's own config after the common one (before -c).
            wt = os.path.join(self.gitdir, "config.worktree")
            worktree = (wt, wt)
        self.config = load_config(
            git_dir=self.gitdir,
            local=local,
            worktree=worktree,
            overrides=self._config_overrides,
            head_branch=self._head_branch,
            local_entries=local_entries,
        )
        _check_core_config(self.config)

    @cached_property
    def git_dir(self) -> Path:
        """The git directory (absolute; for a linked worktree its private one)."""
        from pathlib import Path

        return Path(self.gitdir)

    @cached_property
    def common_dir(self) -> Path:
        """The common git directory (resolved): the git directory but in linked worktrees."""
        from pathlib import Path

        return Path(self.commondir)

    def _linked(self) -> bool:
        if self.gitdir == self.commondir:  # no commondir file: no realpath walk
            return False
        return os.path.realpath(self.gitdir) != os.path.realpath(self.commondir)

    def _head_branch(self) -> str | None:
        """The branch HEAD names (``includeIf.onbranch:``), None if detached or unborn-less."""
        store = self._open_refs(Config())
        try:
            head = store.read("HEAD")
        finally:
            store.close()
        if head is None or head.target is None or not head.target.startswith("refs/heads/"):
            return None
        return head.target[len("refs/heads/") :]

    @classmethod
    def discover(
        cls,
        start: str | os.PathLike[str] | None = None,
        *,
        git_dir: str | os.PathLike[str] | None = None,
        config_overrides: list[str] | None = None,
    ) -> Repository:
        """Find the repository like Git: ``git_dir``/``GIT_DIR``, else walk up from ``start``."""
        explicit = git_dir if git_dir is not None else os.environ.get("GIT_DIR")
        if explicit:
            p = _pure(os.fspath(explicit))
            if os.path.isfile(p):
                p = _read_gitfile(p)
            if not _is_git_dir(p):
                raise RepositoryError(f"not a git repository: '{explicit}'")
            return cls(p, config_overrides=config_overrides)
        here = _absolute(os.fspath(start) if start is not None else os.getcwd())
        ceilings = _ceiling_dirs()
        d = here
        while True:
            if d != here and d in ceilings:
                break  # Git does not go up into a GIT_CEILING_DIRECTORIES entry
            dotgit = os.path.join(d, ".git")
            if os.path.isfile(dotgit) or _is_git_dir(dotgit) or _is_git_dir(d):
                return cls(d, config_overrides=config_overrides)
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
        raise RepositoryError("not a git repository (or any of the parent directories): .git")

    def __repr__(self) -> str:
        return f"<Repository {self.gitdir!r}>"

    def close(self) -> None:
        """Release the object database's pack mappings and the ref store's files.

        The repository stays usable: what a later call needs is opened again.
        """
        odb = self.__dict__.pop("odb", None)
        if odb is not None:
            odb.close()
        refs = self.__dict__.pop("refs", None)
        if refs is not None:
            refs.close()

    def __enter__(self) -> Repository:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __reduce__(self) -> tuple[object, tuple[str, list[str]]]:
        # By path: the object database holds mmaps, which do not pickle.
        return _reopen, (self.gitdir, self._config_overrides)

    @cached_property
    def fsync_policy(self) -> FsyncPolicy:
        """``core.fsync``, ``core.fsyncMethod``, ``core.fsyncObjectFiles`` (``gitodb.durable``)."""
        from gitodb.durable import FsyncPolicy

        return FsyncPolicy.from_config(self.config)

    @property
    def fsync_configured(self) -> bool:
        """Whether the configuration sets any of ``fsync_policy``'s keys (without them
        the policy is Git's default, and nothing needs reading)."""
        raw = self.config.get_raw_all
        return any(raw(key) for key in ("core.fsync", "core.fsyncmethod", "core.fsyncobjectfiles"))

    @cached_property
    def refs(self) -> RefStore:
        """The ref store chosen by ``extensions.refStorage``, seen from this worktree.

        Writes through it are checked against the object database like Git's: a ref
        must point at an existing object, a branch at a commit.
        """
        store = self._open_refs(self.config)
        store.object_type = self._object_type
        store.transaction_hook_finder = self._transaction_hook
        return store

    def _transaction_hook(self) -> Callable[[str, bytes], int] | None:
        from gitodb.repo.hooks import reference_transaction_hook

        return reference_transaction_hook(self)

    def _open_refs(self, config: Config) -> RefStore:
        """The ref store, in the git directories or where ``ref_dir`` says (there a
        linked worktree's own refs are under ``worktrees/<id>``, as Git keeps them)."""
        worktree_dir: str | None = None
        if self._linked():
            worktree_dir = (
                self.gitdir
                if self.ref_dir is None
                else os.path.join(self.ref_dir, "worktrees", os.path.basename(self.gitdir))
            )
        return open_refs(
            self.ref_dir or self.commondir,
            self.object_format,
            self.ref_storage,
            config,
            worktree_dir=worktree_dir,
        )

    def _object_type(self, oid: bytes) -> str | None:
        """The type of object ``oid``, or None if the object database lacks it."""
        from gitodb.errors import ObjectNotFoundError

        try:
            return str(self.odb.read_header(oid)[0])
        except ObjectNotFoundError:
            return None

    @cached_property
    def odb(self) -> ObjectDatabase:
        """The object database: loose objects, packs and alternates."""
        from gitodb.repo.odb import ObjectDatabase

        return ObjectDatabase.for_repository(self)

    @cached_property
    def compat(self) -> CompatObjects | None:
        """Ids in ``extensions.compatObjectFormat`` (``gitodb.repo.compat``), or None."""
        # Every name lookup asks; without the setting the mapping's code is not loaded.
        if not self.config.get("extensions.compatobjectformat"):
            return None
        from gitodb.repo.compat import open_compat

        return open_compat(self)

    def resolve(self, name: str) -> ObjectId:
        """The id of the object ``name`` names (see ``gitodb.repo.revparse``).

        ``name`` is anything Git's ``rev-parse`` takes: ids (abbreviated too), refs,
        ``<rev>~<n>``, ``<rev>^<n>``, ``<rev>^{<type>}``, ``<rev>:<path>``...
        """
        from gitodb.objects.oid import ObjectId
        from gitodb.repo.revparse import resolve

        return ObjectId(resolve(self, name))

    def _oid_of(self, rev: str | ObjectIdLike) -> bytes:
        if isinstance(rev, (bytes, bytearray, memoryview)):
            return self.odb.object_id(rev)
        return self.resolve(rev)

    def _peeled(self, rev: str | ObjectIdLike, want: str) -> bytes:
        from gitodb.repo.revparse import peel_to

        oid = self._oid_of(rev)
        return peel_to(self, oid, want, rev if isinstance(rev, str) else oid.hex())

    def object(self, rev: str | ObjectIdLike) -> GitObject:
        """The typed object ``rev`` names (a revision, hex id or binary id), not peeled."""
        return self.odb.get(self._oid_of(rev))

    def commit(self, rev: str | ObjectIdLike) -> Commit:
        """The commit ``rev`` names; annotated tags are peeled (``<rev>^{commit}``)."""
        return self.odb.commit(self._peeled(rev, "commit"))

    def tree(self, rev: str | ObjectIdLike) -> Tree:
        """The tree ``rev`` names; tags and commits are peeled (``<rev>^{tree}``)."""
        return self.odb.tree(self._peeled(rev, "tree"))

    def tag(self, rev: str | ObjectIdLike) -> Tag:
        """The annotated tag ``rev`` names (``ObjectTypeError`` if it is not a tag)."""
        return self.odb.tag(self._oid_of(rev))

    def blob(self, rev: str | ObjectIdLike) -> Blob:
        """The blob ``rev`` names (``HEAD:README``, an id...); tags are peeled."""
        return self.odb.blob(self._peeled(rev, "blob"))

    def read_object(self, name: str) -> tuple[str, bytes]:
        """``(type_name, data)`` of the object ``name`` names (an id, ref, ``rev:path``...)."""
        return self.odb.read(self.resolve(name))


def _reopen(git_dir: str, config_overrides: list[str]) -> Repository:
    """Unpickle a ``Repository``: open the same git directory again."""
    return Repository(git_dir, config_overrides=config_overrides)


def _ceiling_dirs() -> set[str]:
    """``GIT_CEILING_DIRECTORIES``: absolute paths (others ignored), resolved."""
    found = set()
    for entry in os.environ.get("GIT_CEILING_DIRECTORIES", "").split(os.pathsep):
        if entry and os.path.isabs(entry):
            found.add(_pure(os.path.realpath(entry)))
            found.add(_pure(os.path.normpath(entry)))
    return found


def _config_display(path: str | os.PathLike[str], git_dir: str, common_dir: str) -> str:
    """The repository config file's name as Git prints it in messages.

    Git names it from the git directory as it knows it: ``.git/config`` for a
    work tree (Git works from its top), the ``--git-dir`` as given otherwise.
    """
    if common_dir != _absolute(git_dir):
        return os.path.join(common_dir, "config")
    if os.path.basename(git_dir) == ".git" and _pure(os.fspath(path)) != git_dir:
        return ".git/config"
    if _absolute(git_dir) == os.getcwd():
        return "config"
    return os.path.join(os.fspath(path), "config")


#: settings Git parses at the start of every command (git_default_config), and dies on
_CORE_BOOLS = (
    "core.bare",
    "core.filemode",
    "core.ignorecase",
    "core.symlinks",
    "core.quotepath",
    "core.trustctime",
    "core.precomposeunicode",
    "core.warnambiguousrefs",
    "core.prefersymlinkrefs",
    "core.protecthfs",
    "core.protectntfs",
    "core.sparsecheckout",
    "core.multipackindex",
)
_CORE_BOOL_OR = (
    ("core.logallrefupdates", ("always",)),
    ("core.autocrlf", ("input",)),
    ("core.safecrlf", ("warn",)),
)
_CORE_INTS = ("core.compression", "core.loosecompression", "pack.compression")
_CORE_ULONGS = ("core.packedgitwindowsize", "core.packedgitlimit", "core.deltabasecachelimit")


def _check_core_config(config: Config) -> None:
    """Refuse the core settings Git parses (and dies on) in every command."""
    for key in _CORE_BOOLS:
        config.get_bool(key)
    for key, words in _CORE_BOOL_OR:
        config.get_bool_or_str(key, words)
    for key in _CORE_INTS:
        config.get_int(key, 0)
    for key in _CORE_ULONGS:
        config.get_ulong(key, 0)


def work_tree_mailmap(repo: Repository) -> Mailmap:
    """The mailmap Git reads in this process: the work tree's ``.mailmap`` (none with
    ``GIT_DIR`` set), ``mailmap.blob`` and ``mailmap.file``."""
    from gitodb.objects.mailmap import repository_mailmap

    return repository_mailmap(
        repo, find_work_tree_top(repo, explicit_git_dir="GIT_DIR" in os.environ)
    )


def find_work_tree_top(repo: Repository, explicit_git_dir: bool) -> str | None:
    """The work tree top when the cwd is inside one (Git then works from there), else None.

    None too with an explicit ``--git-dir``/``GIT_DIR``, in a bare repository, or
    inside the git directory itself.
    """
    if explicit_git_dir or repo.config.get_bool("core.bare", False):
        return None
    d = os.getcwd()
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        if os.path.isfile(os.path.join(d, "HEAD")) and os.path.isdir(os.path.join(d, "objects")):
            return None  # inside the git directory itself
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent
