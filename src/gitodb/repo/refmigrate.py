"""``refs migrate``: move a repository's refs and reflogs to the other ref storage format.

As Git 2.55 does it: every ref (root refs and pseudorefs included, the special
``FETCH_HEAD`` and ``MERGE_HEAD`` left alone) and every reflog is written into a
new store in ``<git-dir>/ref_migration.XXXXXX`` first; a dry run stops there and
names that directory.  Otherwise the old store's files are removed, the new ones
moved into place, the repository format set (``extensions.refStorage``, version
1 where a v1-only extension or a non-SHA-1 format needs it) and the temporary
directory removed.  Repositories with linked worktrees are refused, like Git.
"""

from __future__ import annotations

import os
import secrets
import shutil
import string
from pathlib import Path
from typing import TYPE_CHECKING

from gitodb.errors import RefError
from gitodb.refs import open_refs
from gitodb.refs.base import Ref, ReflogEntry
from gitodb.repo.config import Config, set_config_value
from gitodb.repo.extensions import V1_EXTENSIONS

if TYPE_CHECKING:
    from gitodb.repo import Repository

FORMATS = ("files", "reftable")
#: root refs Git keeps outside the ref store (is_special_ref)
SPECIAL_REFS = frozenset({"FETCH_HEAD", "MERGE_HEAD"})
_REFTABLE_HEAD = b"ref: refs/heads/.invalid\n"
_REFTABLE_STUB = b"this repository uses the reftable format\n"


class MigrationError(RefError):
    """``refs migrate`` refused or failed; Git prints it as ``error:`` and exits 255."""


def migrate_refs(
    repo: Repository, ref_format: str, *, dry_run: bool = False, reflogs: bool = True
) -> Path | None:
    """Migrate ``repo``'s refs to ``ref_format``; the dry run's directory, else None."""
    if ref_format not in FORMATS:
        raise MigrationError(f"unknown ref storage format '{ref_format}'")
    if repo.ref_storage == ref_format:
        raise MigrationError(f"repository already uses '{ref_format}' format")
    common = Path(repo.common_dir)
    worktrees = common / "worktrees"
    if worktrees.is_dir() and any(worktrees.iterdir()):
        raise MigrationError("migrating repositories with worktrees is not supported yet")
    source = repo.refs
    refs: list[Ref] = list(source.iter_refs())
    refs += [r for r in source.iter_root_refs() if r.name not in SPECIAL_REFS]
    logs: dict[str, list[ReflogEntry]] = {}
    if reflogs:
        for name in source.reflog_names():
            entries = source.reflog(name)
            if entries:
                logs[name] = entries
    tmp = _mkdtemp(common, "ref_migration.")
    if ref_format == "reftable":
        (tmp / "reftable").mkdir()
        (tmp / "reftable" / "tables.list").write_bytes(b"")
    target = open_refs(tmp, repo.object_format, ref_format, repo.config)
    try:
        target.import_refs(refs, logs)  # type: ignore[attr-defined]
    finally:
        target.close()
    if dry_run:
        return tmp
    repo.close()
    _remove_store(common, repo.ref_storage, [r.name for r in refs if "/" not in r.name])
    _move_store(tmp, common, ref_format)
    _set_format(common / "config", ref_format, repo.object_format.name)
    shutil.rmtree(tmp, ignore_errors=True)
    return None


_TEMP_CHARS = string.ascii_letters + string.digits


def _mkdtemp(directory: Path, prefix: str) -> Path:
    """Git's ``mkdtemp(<prefix>XXXXXX)``: six letters or digits, mode 0700."""
    for _ in range(100):
        path = directory / (prefix + "".join(secrets.choice(_TEMP_CHARS) for _ in range(6)))
        try:
            path.mkdir(0o700)
        except FileExistsError:
            continue
        except OSError as e:
            raise MigrationError(f"cannot create migration directory: {e.strerror}") from None
        return path
    raise MigrationError("cannot create migration directory: File exists")


def _remove_store(common: Path, storage: str, root_refs: list[str]) -> None:
    """Delete what the old backend stored (only its own files)."""
    if storage == "reftable":
        shutil.rmtree(common / "reftable", ignore_errors=True)
        for stub in (common / "refs" / "heads", common / "HEAD"):
            stub.unlink(missing_ok=True)
        return
    for name in root_refs:
        (common / name).unlink(missing_ok=True)
    (common / "packed-refs").unlink(missing_ok=True)
    shutil.rmtree(common / "logs", ignore_errors=True)
    refs_dir = common / "refs"
    if refs_dir.is_dir():
        for child in refs_dir.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()


def _move_store(tmp: Path, common: Path, storage: str) -> None:
    """Put the new backend's files where the repository expects them."""
    if storage == "reftable":
        os.replace(tmp / "reftable", common / "reftable")
        (common / "refs").mkdir(exist_ok=True)
        (common / "refs" / "heads").write_bytes(_REFTABLE_STUB)
        (common / "HEAD").write_bytes(_REFTABLE_HEAD)
        return
    for child in sorted(tmp.iterdir()):
        dest = common / child.name
        if child.name == "refs" and dest.is_dir():
            for sub in child.iterdir():
                os.replace(sub, dest / sub.name)
        else:
            os.replace(child, dest)
    for kind in ("heads", "tags"):
        (common / "refs" / kind).mkdir(parents=True, exist_ok=True)


def _set_format(config_path: Path, storage: str, object_format: str) -> None:
    """Git's ``initialize_repository_version`` on re-initialisation."""
    set_config_value(config_path, "extensions.refstorage", storage if storage != "files" else None)
    local = Config()
    local.read_file(config_path)
    v1 = object_format != "sha1" or any(
        k[len("extensions.") :] in V1_EXTENSIONS for k in local.keys("extensions.")
    )
    set_config_value(config_path, "core.repositoryformatversion", "1" if v1 else "0")
