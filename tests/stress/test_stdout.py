"""A full, closed or vanished stdout: cat-file, hash-object and verify-pack fail like Git.

Each trial runs one command twice, once with the git on PATH and once with
gitodb, with stdout

* ``/dev/full`` (every write fails with ENOSPC),
* closed (fd 1 not open at all; Git then writes to /dev/null),
* a pipe whose reader goes away after one byte (EPIPE / SIGPIPE; the output is
  made bigger than a pipe buffer so the writer must notice).

Asserted: the same exit status as Git (SIGPIPE death and status 141 count as the
same), no traceback, and where Git prints a ``fatal:`` line gitodb prints exactly
one, as its last line; where Git is silent, gitodb is too.
"""

from __future__ import annotations

import random
import subprocess
import threading
import time
from pathlib import Path

import pytest
from faultkit import Tally, env, git_run, gitodb_cmd

from conftest import stress_scale

pytestmark = pytest.mark.stress

MODES = ("full", "closed", "pipe")


def _run(cmd: list[str], mode: str, cwd: Path, stdin: bytes) -> tuple[int, bytes]:
    """(exit status, stderr) of ``cmd`` with stdout in ``mode``."""
    if mode == "full":
        with open("/dev/full", "wb") as full:
            p = subprocess.run(
                cmd,
                cwd=cwd,
                input=stdin,
                stdout=full,
                stderr=subprocess.PIPE,
                env=env(),
                check=False,
            )
        return p.returncode, p.stderr
    if mode == "closed":
        p = subprocess.run(
            ["sh", "-c", 'exec "$@" >&-', "sh", *cmd],
            cwd=cwd,
            input=stdin,
            stderr=subprocess.PIPE,
            env=env(),
            check=False,
        )
        return p.returncode, p.stderr
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(),
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None

    def feed() -> None:  # in a thread: the command may block on stdout meanwhile
        assert proc.stdin is not None
        try:
            proc.stdin.write(stdin)
            proc.stdin.close()
        except BrokenPipeError:
            pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    proc.stdout.read(1)
    proc.stdout.close()
    err = proc.stderr.read()
    code = proc.wait(timeout=600)
    feeder.join()
    return (141 if code == -13 else code), err


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("stdout")
    repo = root / "repo"
    assert git_run("init", "-q", str(repo), cwd=root).returncode == 0
    rng = random.Random(7)
    files = root / "files"
    files.mkdir()
    paths = []
    for i in range(3000):
        p = files / f"f{i}"
        p.write_bytes(b"%d %s\n" % (i, rng.randbytes(8).hex().encode()))
        paths.append(str(p))
    (root / "paths").write_text("\n".join(paths) + "\n")
    ids = git_run(
        "hash-object", "-w", "--stdin-paths", cwd=repo, stdin=(root / "paths").read_bytes()
    ).stdout
    git_run("pack-objects", "-q", ".git/objects/pack/pack", cwd=repo, stdin=ids)
    for size in (100, 300_000, 2_000_000):
        (root / f"blob{size}").write_bytes(rng.randbytes(size // 2) * 2)
        git_run("hash-object", "-w", str(root / f"blob{size}"), cwd=repo)
    return repo


def _command(what: str, repo: Path, rng: random.Random, mode: str) -> tuple[list[str], bytes]:
    root = repo.parent
    big = mode == "pipe" or rng.random() < 0.5
    if what == "cat-file-p":
        blob = root / ("blob2000000" if big else rng.choice(["blob100", "blob300000"]))
        oid = git_run("hash-object", str(blob), cwd=repo).stdout.decode().strip()
        return ["cat-file", "-p", oid], b""
    if what == "cat-file-batch":
        oid = git_run("hash-object", str(root / "blob300000"), cwd=repo).stdout
        return ["cat-file", "--batch"], oid * (rng.randint(1, 3) if not big else 5)
    if what == "hash-object":
        if big:
            return ["hash-object", "--stdin-paths"], (root / "paths").read_bytes()
        return ["hash-object", str(root / "blob100")], b""
    (idx,) = (repo / ".git/objects/pack").glob("*.idx")
    return ["verify-pack", "-v", str(idx)], b""


@pytest.mark.parametrize("what", ["cat-file-p", "cat-file-batch", "hash-object", "verify-pack"])
def test_broken_stdout_like_git(repo: Path, what: str) -> None:
    scale = stress_scale()
    rng = random.Random(f"{what}-{time.time_ns()}")
    tally = Tally(f"stdout/{what}")
    for trial in range(len(MODES) * scale):
        mode = MODES[trial % len(MODES)]
        args, stdin = _command(what, repo, rng, mode)
        git_code, git_err = _run(["git", *args], mode, repo, stdin)
        our_code, our_err = _run(gitodb_cmd(*args), mode, repo, stdin)
        with tally.trial(f"trial {trial} {what} stdout={mode} {args[:2]}") as problems:
            if our_code != git_code:
                problems.append(f"exit status {our_code}, git {git_code}")
            text = our_err.decode(errors="replace")
            if "Traceback" in text:
                problems.append("traceback: " + text[-300:])
            git_fatal = any(
                x.startswith("fatal: ") for x in git_err.decode(errors="replace").splitlines()
            )
            fatals = [x for x in text.splitlines() if x.startswith("fatal: ")]
            if git_fatal and (len(fatals) != 1 or not text.splitlines()[-1:] == fatals):
                problems.append(
                    f"want one final fatal: line like git's {git_err!r}, got {our_err[-300:]!r}"
                )
            if not git_err and our_err:
                problems.append(f"git is silent, gitodb says {our_err[-300:]!r}")
    tally.done()
