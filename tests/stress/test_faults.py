"""Faults in object writers: ENOSPC and EIO from the file system.

Three ways to make the disk fail, from the most real to the most portable:

* a tiny file system (``mount -t tmpfs -o size=256k``; skipped when mount is not
  allowed) that the writes really fill up;
* ``strace -e inject=...`` turning one syscall on the object store (a write,
  fsync, link, rename, create ...) of a gitodb process into ENOSPC or EIO;
* in-process: ``os.write``/``os.fsync``/``os.link`` replaced by ones that fail
  after a random number of calls or bytes (needs neither root nor strace).

Asserted in every trial:

1. the command fails like Git: exit status 128, one final ``fatal:`` line, no
   traceback (library calls: a typed ``GitodbError``);
2. nothing stored is damaged and nothing is left behind: ``git fsck --full`` is
   clean, no temporary file or lock remains (gitodb removes its own on error, so
   unlike after a kill even ``tmp_obj_*`` is a failure here), and with the
   in-process and tmpfs variants the repository is byte for byte what it was;
3. the next command works: re-running the write without the fault succeeds and
   prints the ids git computes (on the full tmpfs, a small write still fits,
   which proves no space leaked).
"""

from __future__ import annotations

import errno
import io
import os
import random
import subprocess
import time
from pathlib import Path

import pytest
from faultkit import (
    STRACE,
    TEMP_NAMES,
    Tally,
    check_store,
    env,
    fatal_problems,
    git_run,
    gitodb_cmd,
    inject,
    random_files,
    replica,
    trace,
)

from conftest import stress_scale
from gitodb.durable import Component
from gitodb.errors import GitodbError
from helpers import snapshot

pytestmark = pytest.mark.stress

#: The errno each syscall is made to fail with (one picked per trial).
FAULTS = {
    "write": ("ENOSPC", "EIO"),
    "pwrite64": ("ENOSPC", "EIO"),
    "ftruncate": ("EIO",),
    "fsync": ("EIO",),
    "fdatasync": ("EIO",),
    "sync_file_range": ("EIO",),
    "link": ("EIO", "ENOSPC"),
    "linkat": ("EIO", "ENOSPC"),
    "rename": ("EIO", "ENOSPC"),
    "renameat": ("EIO",),
    "renameat2": ("EIO",),
    "openat": ("ENOSPC", "EIO"),
    "mkdir": ("ENOSPC",),
    "unlink": ("EIO",),
    "unlinkat": ("EIO",),
}

CONFIGS = (
    [],
    ["-c", "core.fsync=loose-object"],
    ["-c", "core.fsync=all"],
    ["-c", "core.fsync=objects", "-c", "core.fsyncMethod=batch"],
)


def _init(path: Path) -> Path:
    assert git_run("init", "-q", str(path), cwd=path.parent).returncode == 0
    return path


def _leftovers(git_dir: Path) -> list[str]:
    """Temporary files and locks (gitodb must remove its own when it fails)."""
    return [
        p.relative_to(git_dir).as_posix()
        for p in git_dir.rglob("*")
        if TEMP_NAMES.match(p.name) or p.name.endswith(".lock")
    ]


def _command(kind: str, work: Path, rng: random.Random) -> tuple[list[str], bytes, bytes]:
    """(gitodb arguments, stdin, what git prints for the same input)."""
    if kind == "loose":
        files = random_files(work / "in", rng, rng.randint(3, 12))
        stdin = b"".join(str(f).encode() + b"\n" for f in files)
        expected = git_run("hash-object", "--stdin-paths", cwd=work, stdin=stdin).stdout
        return ["hash-object", "-w", "--stdin-paths"], stdin, expected
    if kind == "bulk":
        files = random_files(work / "in", rng, 1, sizes=(200_000, 1_200_000))
        expected = git_run("hash-object", *map(str, files), cwd=work).stdout
        return (
            ["-c", "core.bigFileThreshold=64k", "hash-object", "-w", *map(str, files)],
            b"",
            expected,
        )
    src = _init(work / "src")
    random_files(src / "d", rng, rng.randint(3, 10))
    git_run("add", "-A", cwd=src)
    git_run("commit", "-q", "-m", "x", cwd=src)
    objs = git_run("rev-list", "--objects", "--all", cwd=src).stdout
    pack = git_run("pack-objects", "--stdout", "-q", cwd=src, stdin=objs).stdout
    ref = _init(work / "ref")
    expected = git_run("index-pack", "--stdin", cwd=ref, stdin=pack).stdout
    return ["index-pack", "--stdin", "--threads=1"], pack, expected


def _run(args: list[str], repo: Path, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        gitodb_cmd(*args), cwd=repo, input=stdin, capture_output=True, env=env(), check=False
    )


@pytest.mark.skipif(STRACE is None, reason="needs strace")
@pytest.mark.parametrize("kind", ["loose", "bulk", "index-pack-stdin"])
def test_injected_syscall_fault(tmp_path: Path, kind: str) -> None:
    scale = stress_scale()
    rng = random.Random(f"fault-{kind}-{time.time_ns()}")
    repo = _init(tmp_path / "repo")
    tally = Tally(f"faults/strace/{kind}")
    for trial in range(5 * scale):
        work = tmp_path / f"t{trial}"
        work.mkdir()
        args, stdin, expected = _command(kind, work, rng)
        args = [*rng.choice(CONFIGS), *args]
        scratch = replica(repo, work / "scratch")
        events = [
            e
            for e in trace(
                gitodb_cmd(*args),
                cwd=scratch,
                under=scratch / ".git" / "objects",
                stdin=stdin,
                log=work / "strace.log",
            )
            if e.name in FAULTS
            and str(scratch / ".git" / "objects") in e.text
            # writer faults only: opening files or directories to read them
            # is the readers' business
            and (e.name != "openat" or "O_CREAT" in e.text)
        ]
        event = rng.choice(events)
        action = rng.choice(FAULTS[event.name])
        litter = set(_leftovers(repo / ".git"))
        proc = inject(gitodb_cmd(*args), event, action, cwd=repo, stdin=stdin)
        tally.count("failed" if proc.returncode else "tolerated")
        desc = f"trial {trial} {kind} {args[:4]} {event.name}#{event.ordinal}={action}"
        with tally.trial(desc) as problems:
            if proc.returncode == 0:
                # a fault the writer may ride out (say, removing a temporary name)
                if proc.stdout != expected:
                    problems.append(f"status 0 but stdout {proc.stdout!r}, git {expected!r}")
            else:
                problems += fatal_problems(proc)
            new = set(_leftovers(repo / ".git")) - litter
            if event.name.startswith("unlink"):
                # the injected failure was the removal of a temporary name: that
                # one stays (Git too only warns), but no lock may
                new = {x for x in new if x.endswith(".lock")}
            problems += [f"left behind: {x}" for x in sorted(new)]
            problems += check_store(repo / ".git")
            again = _run(args, repo, stdin)
            if again.returncode != 0 or again.stdout != expected:
                problems.append(f"re-run: status {again.returncode} {again.stderr[-300:]!r}")
            problems += check_store(repo / ".git")
    tally.done()


class _Faulty:
    """Replacements for os.write/os.fsync/os.link that fail from the n-th call on."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, which: str, after: int, err: int) -> None:
        self.left = after
        self.err = err
        real = {"write": os.write, "fsync": os.fsync, "link": os.link}[which]

        def faulty(*a: object, **k: object) -> object:
            if self.left <= 0:
                raise OSError(self.err, os.strerror(self.err))
            self.left -= 1
            return real(*a, **k)  # type: ignore[operator]

        monkeypatch.setattr(os, which, faulty)


def test_in_process_faults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gitodb.repo import Repository
    from gitodb.repo.write import ObjectWriter, compute_object_id

    scale = stress_scale()
    rng = random.Random(f"inproc-{time.time_ns()}")
    tally = Tally("faults/in-process")
    repo_dir = _init(tmp_path / "repo")
    for trial in range(20 * scale):
        config = rng.choice(
            [
                [],
                ["core.fsync=all"],
                ["core.fsync=loose-object"],
                ["core.fsync=loose-object", "core.fsyncMethod=batch"],
            ]
        )
        repo = Repository(repo_dir, config_overrides=config)
        writer = ObjectWriter(repo)
        how = rng.choice(["bytes", "stream", "pack", "batch"])
        data = rng.randbytes(rng.choice([10, 5000, 300_000]))
        which = rng.choice(["write", "fsync", "link"])
        err = rng.choice([errno.ENOSPC, errno.EIO])
        before = snapshot(repo_dir / ".git")
        with tally.trial(
            f"trial {trial} {how} {which} {errno.errorcode[err]} {config}"
        ) as problems:
            with monkeypatch.context() as m:
                m.setattr(os, "fsync", lambda fd: None)  # no disk flushes in this loop
                _Faulty(m, which, rng.randint(0, 3), err)
                try:
                    if how == "bytes":
                        writer.write("blob", data)
                    elif how == "stream":
                        writer.write_stream("blob", io.BytesIO(data), len(data))
                    elif how == "pack":
                        writer.write_stream_to_pack("blob", io.BytesIO(data), len(data))
                    else:
                        with writer.batch():
                            writer.write("blob", data)
                            writer.write("blob", data + b"!")
                    raised = None
                except GitodbError as e:
                    raised = e
                except Exception as e:  # noqa: BLE001 - the point is to catch the untyped
                    problems.append(f"untyped {type(e).__name__}: {e}")
                    raised = e
            if raised is None:
                tally.count("tolerated")
                problems += check_store(repo_dir / ".git")  # the fault came too late
                continue
            tally.count("failed")
            after = snapshot(repo_dir / ".git")
            real_batch = writer.settings.fsync.batch_enabled(Component.LOOSE_OBJECT)
            if how == "batch" and (not real_batch or which == "link"):
                # Not a batch for real, or a link failed while the batch was being
                # published: objects already in place stay (check_store below proves
                # them complete); nothing else may have changed.
                for blob in (data, data + b"!"):
                    hexid = compute_object_id(repo.object_format, "blob", blob).hex()
                    for key in (f"objects/{hexid[:2]}", f"objects/{hexid[:2]}/{hexid[2:]}"):
                        if key not in before:
                            after.pop(key, None)
            if after != before:
                changed = sorted(set(after) ^ set(before)) or sorted(
                    k for k in after if after[k] != before.get(k)
                )
                problems.append(f"store changed: {changed[:5]}")
            problems += check_store(repo_dir / ".git")
    tally.done()


def _mount_tmpfs(path: Path, size: str) -> bool:
    path.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    return proc.returncode == 0


@pytest.mark.parametrize("kind", ["loose", "bulk", "index-pack-stdin"])
def test_full_file_system(tmp_path: Path, kind: str) -> None:
    mnt = tmp_path / "small"
    if not _mount_tmpfs(mnt, "256k"):
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        scale = stress_scale()
        rng = random.Random(f"tmpfs-{kind}-{time.time_ns()}")
        tally = Tally(f"faults/tmpfs/{kind}")
        repo = _init(mnt / "repo")
        for trial in range(3 * scale):
            work = tmp_path / f"t{trial}"
            work.mkdir()
            if kind == "loose":
                big = work / "big"
                big.write_bytes(rng.randbytes(rng.randint(300_000, 600_000)))
                args, stdin = ["hash-object", "-w", str(big)], b""
            elif kind == "bulk":
                big = work / "big"
                big.write_bytes(rng.randbytes(rng.randint(300_000, 600_000)))
                args, stdin = (
                    ["-c", "core.bigFileThreshold=64k", "hash-object", "-w", str(big)],
                    b"",
                )
            else:
                src = _init(work / "src")
                (src / "f").write_bytes(rng.randbytes(rng.randint(300_000, 600_000)))
                git_run("add", "f", cwd=src)
                git_run("commit", "-q", "-m", "x", cwd=src)
                objs = git_run("rev-list", "--objects", "--all", cwd=src).stdout
                stdin = git_run("pack-objects", "--stdout", "-q", cwd=src, stdin=objs).stdout
                args = ["index-pack", "--stdin", "--threads=1"]
            before = snapshot(repo / ".git")
            proc = _run(args, repo, stdin)
            with tally.trial(f"trial {trial} {kind}") as problems:
                problems += fatal_problems(proc)
                if b"No space left on device" not in proc.stderr:
                    problems.append(f"the error does not say why: {proc.stderr!r}")
                if snapshot(repo / ".git") != before:
                    problems.append("the repository changed")
                problems += check_store(repo / ".git")
                small = work / "small"
                small.write_bytes(rng.randbytes(50))
                ok = _run(["hash-object", "-w", str(small)], repo, b"")
                want = git_run("hash-object", str(small), cwd=work).stdout
                if ok.returncode != 0 or ok.stdout != want:
                    problems.append(f"a small write after the failure: {ok.stderr!r}")
                problems += check_store(repo / ".git")
        tally.done()
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True, check=False)
