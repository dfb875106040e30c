"""``core.repositoryFormatVersion`` and ``extensions.*``: what may open a repository.

Git (2.55) knows two kinds of extensions.  Those of the first list below are
honoured in a version 0 repository too (older Git ignored extensions there);
the others exist only from version 1 on, and Git refuses a version 0
repository that sets one.  An extension Git does not know makes it refuse a
version 1 repository and is ignored in a version 0 one.

``compatObjectFormat`` is honoured for loose objects (``gitodb.repo.compat``
keeps each written object's second id in the loose object map); a pack carries
no such mapping, so storing a received pack in such a repository is refused
(``check_object_writes``) rather than leaving objects that only one id names.
"""

from __future__ import annotations

from gitodb.errors import ConfigError, RepositoryError
from gitodb.repo.config import Config

#: known to Git 2.55 in version 0 and 1 repositories; gitodb honours them all
#: (it never prunes objects, a partial clone's missing objects are just missing,
#: ``worktreeConfig`` makes ``config.worktree`` be read)
V0_EXTENSIONS = ("noop", "preciousobjects", "partialclone", "worktreeconfig")
#: known to Git 2.55 only from version 1 on
V1_EXTENSIONS = (
    "noop-v1",
    "objectformat",
    "compatobjectformat",
    "refstorage",
    "relativeworktrees",
    "submodulepathconfig",
)
#: of ``V1_EXTENSIONS``, those under which gitodb must not store received packs
NO_OBJECT_WRITES = frozenset({"compatobjectformat"})

_VALUES = {"objectformat": ("sha1", "sha256"), "refstorage": ("files", "reftable")}


def split_ref_storage(value: str) -> tuple[str, str | None] | None:
    """An ``extensions.refStorage`` (or ``GIT_REFERENCE_BACKEND``) value: ``<format>``,
    or Git 2.55's ``<format>://<path>`` naming where the refs are stored (relative
    to the common git directory; empty: that directory).  Returns ``(format,
    path or None)``, or None for a value Git refuses (``reftable:``, ``db://x``)."""
    name, sep, path = value.partition("://")
    if not sep:
        name = name.lower()  # a plain name as before; a URI's is exact, as Git's
    if name not in _VALUES["refstorage"]:
        return None
    return name, path if sep else None


def _list(title: str, names: list[str]) -> str:
    s = "s" if len(names) > 1 else ""
    return title.format(s=s) + "".join(f"\n\t{n}" for n in names)


def check_repository_format(config: Config) -> int:
    """Refuse the repository like Git's ``verify_repository_format``; return its version."""
    version = config.get_int("core.repositoryformatversion", 0)
    if version > 1:
        raise RepositoryError(f"Expected git repo version <= 1, found {version}")
    unknown: list[str] = []
    v1_only: list[str] = []
    for key in config.keys("extensions."):
        name = key[len("extensions.") :]
        value = config.get(key)
        if name == "refstorage":
            bad = value is not None and split_ref_storage(value) is None
        else:
            bad = name in _VALUES and value is not None and value.lower() not in _VALUES[name]
        if bad:
            origin = config.origin(key)
            where = "" if origin is None else f" line {origin[1]} in file {origin[0]}"
            raise ConfigError(
                f"bad config{where}" if origin else "unable to parse command-line config",
                details=[f"invalid value for '{key}': '{value}'"],
            )
        if name in V0_EXTENSIONS:
            continue
        if name in V1_EXTENSIONS:
            if version == 0:
                v1_only.append(name)
            continue
        if version >= 1:
            unknown.append(name)
    if unknown:
        raise RepositoryError(_list("unknown repository extension{s} found:", unknown))
    if v1_only:
        raise RepositoryError(_list("repo version is 0, but v1-only extension{s} found:", v1_only))
    return version


def check_object_writes(config: Config) -> None:
    """Refuse to store a pack where its objects would have only one of their ids."""
    for name in sorted(NO_OBJECT_WRITES):
        if config.get(f"extensions.{name}") is not None:
            raise RepositoryError(
                f"cannot store a pack: extensions.{name} needs the "
                f"second id of each object, which a pack does not carry"
            )
