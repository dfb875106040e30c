"""Run ``git`` and ``gitodb`` on the same arguments and compare (import as ``from oracle``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import as_gitodb, git_env


def run(
    cmd: list[str], cwd: str | os.PathLike[str], input: bytes | None = None
) -> tuple[int, bytes, bytes]:
    """``(exit status, stdout, stderr)`` of ``cmd`` in ``cwd`` with Git isolated."""
    proc = subprocess.run(
        cmd, cwd=cwd, input=input, capture_output=True, env=git_env(), check=False
    )
    return proc.returncode, proc.stdout, proc.stderr


def both(
    cwd: str | os.PathLike[str], *args: str, input: bytes | None = None
) -> tuple[tuple[int, bytes, bytes], tuple[int, bytes, bytes]]:
    """The results of ``git <args>`` and ``gitodb <args>`` (this checkout's gitodb)."""
    ours = [sys.executable, "-m", "gitodb", *args]
    return run(["git", *args], cwd, input), run(ours, cwd, input)


def assert_same(
    cwd: str | os.PathLike[str] | Path, *args: str, input: bytes | None = None, stderr: bool = True
) -> bytes:
    """Assert gitodb prints Git's bytes and exits like it; return Git's stdout.

    Usage lines are compared with the program name as gitodb prints it (``gitodb``
    for ``git``, continuation lines moved right as far) on both sides.
    """
    theirs, ours = both(cwd, *args, input=input)
    theirs = (theirs[0], as_gitodb(theirs[1]), as_gitodb(theirs[2]))
    ours = (ours[0], as_gitodb(ours[1]), as_gitodb(ours[2]))
    assert ours[0] == theirs[0], (args, theirs, ours)
    assert ours[1] == theirs[1], (args, theirs[1][:2000], ours[1][:2000])
    if stderr:
        assert ours[2] == theirs[2], (args, theirs[2], ours[2])
    return theirs[1]
