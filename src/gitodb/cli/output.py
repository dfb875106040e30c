"""Standard output that says when *it* failed: a full disk or a closed pipe.

Git dies with ``fatal: write failure on standard output: <reason>`` (exit 128) when
its output cannot be written, and of ``SIGPIPE`` when the reader went away.  To
do the same for every command, the entry point must tell a failed write to
stdout apart from any other ``OSError``: writes to file descriptor 1 raise
``StdoutWriteError`` (an ``OSError``, so code that handles I/O errors still does).
"""

from __future__ import annotations

import io
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


class StdoutWriteError(OSError):
    """Writing to standard output failed (``errno`` says why)."""


class _BrokenStdout(StdoutWriteError, BrokenPipeError):
    """Standard output's reader has gone (EPIPE)."""


def _tagged(e: OSError) -> OSError:
    if isinstance(e, StdoutWriteError):
        return e
    cls = _BrokenStdout if isinstance(e, BrokenPipeError) else StdoutWriteError
    return cls(e.errno, e.strerror)


class _StdoutRaw(io.FileIO):
    """``FileIO`` on fd 1 whose write errors are ``StdoutWriteError``."""

    def write(self, b):  # type: ignore[no-untyped-def]
        try:
            return super().write(b)
        except OSError as e:
            raise _tagged(e) from None


def sanitize_std_fds() -> None:
    """Open ``/dev/null`` on whichever of fds 0, 1 and 2 the process started without.

    Git's ``sanitize_stdfds()`` does this so that a command run with a closed
    stdout writes into nothing (and succeeds) instead of into the first file it
    opens; Python then has ``sys.stdout`` (etc.) as None, which is mended here.
    """
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        if getattr(sys, name) is None:
            setattr(
                sys,
                name,
                open(
                    fd,
                    mode,
                    closefd=False,  # noqa: SIM115 - lives on
                    encoding="utf-8",
                    errors="surrogateescape",
                ),
            )


def stdout_failed(e: OSError) -> int:
    """Git's reaction to output that cannot be written; return the exit status.

    A reader that went away (EPIPE) is 141, Git's death by ``SIGPIPE`` (the
    entry point re-raises the signal); anything else is Git's ``fatal: write
    failure on standard output`` line and 128.  Nothing more reaches the broken
    stdout afterwards, not even at interpreter exit.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    if isinstance(e, BrokenPipeError):
        return SIGPIPE_STATUS
    sys.stderr.write(f"fatal: write failure on standard output: {e.strerror}\n")
    return 128


SIGPIPE_STATUS = 128 + 13


def install() -> None:
    """Make ``sys.stdout`` (and its ``buffer``) write through ``_StdoutRaw``."""
    old = sys.stdout
    try:
        fd = old.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (tests capturing output): nothing to tag
    if fd != 1:
        return
    old.flush()
    raw = _StdoutRaw(fd, "w", closefd=False)
    buffered = io.BufferedWriter(raw)
    sys.stdout = io.TextIOWrapper(
        buffered,
        encoding=old.encoding,
        errors=old.errors,
        newline=None,
        line_buffering=bool(old.line_buffering),
        write_through=False,
    )


def writev(fd: int, parts: Sequence[bytes | memoryview]) -> int:
    """``os.writev`` whose errors on fd 1 are ``StdoutWriteError``."""
    try:
        return os.writev(fd, parts)
    except OSError as e:
        raise _tagged(e) if fd == 1 else e from None


def write(fd: int, data: bytes | memoryview) -> int:
    """``os.write`` whose errors on fd 1 are ``StdoutWriteError``."""
    try:
        return os.write(fd, data)
    except OSError as e:
        raise _tagged(e) if fd == 1 else e from None


def pwritev(fd: int, parts: Sequence[bytes | memoryview], offset: int) -> int:
    """``os.pwritev`` whose errors on fd 1 are ``StdoutWriteError``."""
    try:
        return os.pwritev(fd, parts, offset)
    except OSError as e:
        raise _tagged(e) if fd == 1 else e from None


def sendfile(out_fd: int, in_fd: int, offset: int, count: int) -> int:
    """``os.sendfile`` whose errors on fd 1 are ``StdoutWriteError``."""
    try:
        return os.sendfile(out_fd, in_fd, offset, count)
    except OSError as e:
        raise _tagged(e) if out_fd == 1 else e from None


def report_ambiguity(e: BaseException) -> None:
    """Before a command's "not a valid name" error: Git's ``error:`` and ``hint:``
    lines when ``e`` is an ambiguous abbreviation (nothing otherwise)."""
    from gitodb.errors import AmbiguousObjectNameError

    if isinstance(e, AmbiguousObjectNameError):
        sys.stdout.flush()
        sys.stderr.write(e.report_text())
