"""Git's lock files: ``<path>.lock`` created exclusively, written, then renamed or removed.

A ``LockFile`` is held from a successful exclusive create until ``commit`` (rename
over the target) or ``rollback`` (remove).  It never removes a lock file it no
longer owns: after ``commit`` the ``.lock`` name is free and may already be another
writer's lock, and ``rollback`` checks that the ``.lock`` on disk is still the file
it created (same device and inode) before unlinking it.

A held lock is retried for ``timeout_ms`` with Git's backoff (``lock_file_timeout``):
waits of about 1, 4, 9, 16... ms (each randomised to 75-125%), capped at 1 s.

Every OS error becomes a typed error: ``LockError`` when the lock is held by
someone else, ``RefWriteError`` (with Git's wording and the file named) otherwise.
"""

from __future__ import annotations

import os
import stat
import time

from gitodb.errors import LockError, RefWriteError

LOCK_SUFFIX = ".lock"
_BACKOFF_MAX_MULTIPLIER = 1000
_INITIAL_BACKOFF_MS = 1


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (the one write path of the ref writers).

    Raises ``OSError``; callers turn it into a typed error naming their file.
    """
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _strerror(e: OSError) -> str:
    return e.strerror or os.strerror(e.errno or 0) or str(e)


class LockFile:
    """An exclusively created ``<path>.lock``; ``commit()`` renames it onto ``path``."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        timeout_ms: int = 0,
        mode: int = 0o666,
        final_mode: int | None = 0o644,
        suffix: str = LOCK_SUFFIX,
    ) -> None:
        """Take the lock (waiting up to ``timeout_ms``; -1 waits forever).

        ``suffix`` names the file written beside ``path`` (Git's ``packed-refs.new``
        is such a file: created exclusively, written, renamed into place).
        """
        self.path = os.fspath(path)
        self.lock_path = self.path + suffix
        self.final_mode = final_mode
        self.fd = -1
        self._ident: tuple[int, int] | None = None
        self._acquire(timeout_ms, mode)

    def _try_create(self, mode: int) -> bool:
        try:
            self.fd = os.open(
                self.lock_path,
                os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                mode,
            )
        except FileExistsError:
            return False
        except OSError as e:
            raise RefWriteError(
                f"Unable to create '{self.lock_path}': {_strerror(e)}", path=self.lock_path
            ) from None
        st = os.fstat(self.fd)
        self._ident = (st.st_dev, st.st_ino)
        return True

    def _acquire(self, timeout_ms: int, mode: int) -> None:
        n = 1
        multiplier = 1
        remaining: float = timeout_ms
        while not self._try_create(mode):
            if timeout_ms == 0 or (timeout_ms > 0 and remaining <= 0):
                raise LockError(
                    f"Unable to create '{self.lock_path}': File exists.", path=self.lock_path
                )
            backoff = multiplier * _INITIAL_BACKOFF_MS
            import random  # only a contended lock waits

            wait_ms = (750 + random.randrange(500)) * backoff / 1000
            time.sleep(wait_ms / 1000)
            remaining -= wait_ms
            multiplier += 2 * n + 1
            if multiplier > _BACKOFF_MAX_MULTIPLIER:
                multiplier = _BACKOFF_MAX_MULTIPLIER
            else:
                n += 1

    @property
    def held(self) -> bool:
        """Whether this object still owns its ``.lock`` file."""
        return self._ident is not None

    def write(self, data: bytes) -> None:
        """Append ``data`` to the lock file (``RefWriteError`` on any OS error).

        A lock whose descriptor was closed (``close_fd``, so that a transaction of
        thousands of refs does not run out of descriptors) is reopened first, after
        checking that the ``.lock`` on disk is still ours.
        """
        try:
            if self.fd < 0:
                self._reopen()
            write_all(self.fd, data)
        except OSError as e:
            raise RefWriteError(
                f"couldn't write '{self.lock_path}': {_strerror(e)}", path=self.lock_path
            ) from None

    def _reopen(self) -> None:
        if self._ident is None:
            raise RefWriteError(f"lock '{self.lock_path}' is not held", path=self.lock_path)
        fd = os.open(self.lock_path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0))
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != self._ident:
            os.close(fd)
            self._ident = None
            raise LockError(
                f"lock '{self.lock_path}' was taken over by another process", path=self.lock_path
            )
        self.fd = fd

    def close_fd(self) -> None:
        """Close the descriptor (the lock stays held)."""
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            try:
                os.close(fd)
            except OSError as e:
                raise RefWriteError(
                    f"couldn't close '{self.lock_path}': {_strerror(e)}", path=self.lock_path
                ) from None

    def commit(self) -> None:
        """Rename the lock over the target; afterwards the lock is no longer ours."""
        if not self.held:
            raise RefWriteError(f"lock '{self.lock_path}' is not held", path=self.lock_path)
        self.close_fd()
        try:
            if self.final_mode is not None:
                os.chmod(self.lock_path, self.final_mode)
            os.rename(self.lock_path, self.path)
        except OSError as e:
            raise RefWriteError(
                f"unable to rename '{self.lock_path}' to '{self.path}': {_strerror(e)}",
                path=self.lock_path,
            ) from None
        self._ident = None

    def rollback(self) -> None:
        """Remove the lock if we still own it; never raises."""
        try:
            self.close_fd()
        except RefWriteError:
            pass
        ident, self._ident = self._ident, None
        if ident is None:
            return
        try:
            st = os.lstat(self.lock_path)
        except OSError:
            return
        if (st.st_dev, st.st_ino) != ident:
            return  # someone removed our lock and took a new one: it is theirs
        try:
            os.unlink(self.lock_path)
        except OSError:
            pass  # rollback runs on error paths: the first error is the one to report

    def __enter__(self) -> LockFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.rollback()


# -- core.sharedRepository ----------------------------------------------------------
PERM_UMASK = 0
PERM_GROUP = 0o660
PERM_EVERYBODY = 0o664


def parse_shared_repository(value: str | None, present: bool = True) -> int:
    """Git's ``git_config_perm``: 0 (umask), ``0o660`` (group), ``0o664`` (everybody),
    or ``-mode`` for an explicit ``0xxx`` file mode."""
    if not present:
        return PERM_UMASK
    if value is None:
        return PERM_GROUP
    v = value.strip()
    if v == "umask":
        return PERM_UMASK
    if v == "group":
        return PERM_GROUP
    if v in ("all", "world", "everybody"):
        return PERM_EVERYBODY
    try:
        i = int(v, 8)
    except ValueError:
        truthy = v.lower() in ("true", "yes", "on")
        if not truthy and v.lower() not in ("false", "no", "off", ""):
            from gitodb.errors import ConfigError

            raise ConfigError(
                f"bad boolean config value '{value}' for 'core.sharedrepository'"
            ) from None
        return PERM_GROUP if truthy else PERM_UMASK
    if i in (0, 1, 2):
        return (PERM_UMASK, PERM_GROUP, PERM_EVERYBODY)[i]
    if i & 0o600 != 0o600:
        from gitodb.errors import ConfigError

        raise ConfigError(
            f"problem with core.sharedRepository filemode value (0{i:03o}).\n"
            "The owner of files must always have read and write permissions."
        )
    return -(i & 0o666)


def shared_file_mode(perm: int, mode: int | None = None) -> int:
    """Git's ``calc_shared_perm`` for a new file: ``mode`` (default ``0666 & ~umask``)
    adjusted for the ``core.sharedRepository`` value ``perm``."""
    if mode is None:
        mask = os.umask(0)
        os.umask(mask)
        mode = 0o666 & ~mask
    tweak = -perm if perm < 0 else perm
    if not mode & 0o200:
        tweak &= ~0o222
    if mode & 0o100:
        tweak |= (tweak & 0o444) >> 2
    return (mode & ~0o777) | tweak if perm < 0 else mode | tweak


def shared_dir_mode(perm: int) -> int | None:
    """Git's ``adjust_shared_perm`` for a new directory: its mode, None to keep the umask's.

    The file rule applied to ``0777 & ~umask``, executable where readable, and set-gid
    (where the group has access) so that files made inside keep the directory's group.
    """
    if perm == PERM_UMASK:
        return None
    mask = os.umask(0)
    os.umask(mask)
    mode = shared_file_mode(perm, 0o777 & ~mask)
    mode |= (mode & 0o444) >> 2
    # set-gid matters only where the group is granted something
    return mode | stat.S_ISGID if mode & 0o060 else mode
