"""Shared tools of the crash and fault tests: syscall-level kills and faults, store checks.

* :func:`trace` runs a command under ``strace`` and lists the syscalls of interest
  it made on files of a directory (write, fsync, rename, link, unlink ...).
* :func:`inject` runs it again with ``strace -e inject=...`` so that the k-th
  call of one of those syscalls kills the process (SIGKILL, a crash at exactly
  that point) or fails with an errno (ENOSPC, EIO).  strace counts each syscall
  separately, so an event is named by (syscall, its ordinal among those calls).
* :func:`check_store` asserts what must hold after any crash: ``git fsck --full``
  is clean, nothing under a final name is partial, and the only extra files are
  the temporary names Git also leaves behind (``tmp_obj_*``, ``tmp_pack_*`` ...).
* :class:`Tally` counts trials and failures so a long run reports
  "trials N, failures 0"; failures are collected, not raised one by one.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from helpers import git_env

STRACE = shutil.which("strace")

#: Syscalls at which a writer is killed or made to fail.
SYSCALLS = (
    "write",
    "pwrite64",
    "fsync",
    "fdatasync",
    "sync_file_range",
    "ftruncate",
    "rename",
    "renameat",
    "renameat2",
    "link",
    "linkat",
    "unlink",
    "unlinkat",
    "openat",
    "mkdir",
)

_LINE = re.compile(r"^(\d+)\s+([a-z_0-9]+)\((.*)$")

# Temporary names a killed writer may leave (Git leaves the same ones).
TEMP_NAMES = re.compile(r"^(tmp_obj_|tmp_pack_|tmp_idx_|tmp_rev_|bulk_fsync_)")
LOOSE_NAME = re.compile(r"^[0-9a-f]{2}/[0-9a-f]{38}$")
PACK_NAME = re.compile(r"^pack/pack-([0-9a-f]{40})\.(pack|idx|rev|keep)$")


def gitodb_cmd(*args: str) -> list[str]:
    """The command line that runs this checkout's gitodb CLI."""
    return [sys.executable, "-m", "gitodb", *args]


def env() -> dict[str, str]:
    """Git's isolated test environment; no .pyc writes (they would add syscalls)."""
    e = git_env()
    e["PYTHONDONTWRITEBYTECODE"] = "1"
    return e


@dataclass(frozen=True)
class Event:
    """One syscall: its name, its ordinal among calls of that name, and the line."""

    name: str
    ordinal: int
    text: str


def trace(
    cmd: Sequence[str], *, cwd: Path, under: Path, stdin: bytes = b"", log: Path
) -> list[Event]:
    """Run ``cmd`` under strace; the events of :data:`SYSCALLS` that touch ``under``.

    Only the main process is counted (strace counts per process); ordinals count
    every call of a syscall, touching ``under`` or not, as ``inject`` will.
    """
    assert STRACE is not None
    subprocess.run(
        [STRACE, "-f", "-qq", "-y", "-o", str(log), "-e", "trace=" + ",".join(SYSCALLS), *cmd],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=env(),
        check=False,
    )
    counts: dict[str, int] = {}
    events: list[Event] = []
    main_pid = None
    marker = str(under)
    for line in log.read_text(errors="replace").splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        pid, name, rest = m.groups()
        if main_pid is None:
            main_pid = pid
        if pid != main_pid:
            continue
        counts[name] = counts.get(name, 0) + 1
        if marker in rest or name in ("write",) and rest.startswith(("1<", "1,")):
            events.append(Event(name, counts[name], line))
    return events


def replica(repo: Path, dest: Path) -> Path:
    """A copy of ``repo`` (its ``.git``) at ``dest``, for a dry run that makes the same
    syscalls as the real run will (same packs to open, same objects to find)."""
    shutil.copytree(repo / ".git", dest / ".git", symlinks=True)
    return dest


def inject(
    cmd: Sequence[str], event: Event, action: str, *, cwd: Path, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    """Run ``cmd`` with ``event``'s call turned into ``action``.

    ``action`` is ``"kill"`` (SIGKILL at that syscall: a crash) or an errno name
    such as ``"ENOSPC"`` (that one call fails; later calls work).
    """
    assert STRACE is not None
    what = "signal=SIGKILL" if action == "kill" else f"error={action}"
    return subprocess.run(
        [
            STRACE,
            "-f",
            "-qq",
            "-o",
            os.devnull,
            "-e",
            f"trace={event.name}",
            "-e",
            f"inject={event.name}:{what}:when={event.ordinal}",
            *cmd,
        ],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=env(),
        check=False,
    )


def kill_after(
    cmd: Sequence[str], delay: float, *, cwd: Path, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    """Without strace: SIGKILL ``cmd`` after ``delay`` seconds (if still running)."""
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(),
    )
    try:
        out, err = proc.communicate(stdin, timeout=delay)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def git_run(*args: str, cwd: Path, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """Run the git on PATH (isolated from user config)."""
    return subprocess.run(
        ["git", *args], cwd=cwd, input=stdin, capture_output=True, env=env(), check=False
    )


def check_store(git_dir: Path) -> list[str]:
    """Problems of the object store after a crash or fault (empty: all good).

    ``git fsck --full`` must pass (it inflates and hashes every loose object and
    checks every indexed pack); every other file under ``objects/`` must be a
    temporary name, or a complete pack (trailer = checksum of its bytes, name =
    its checksum), ``.idx``/``.rev`` only beside their pack and naming it.
    """
    problems: list[str] = []
    fsck = git_run("fsck", "--full", "--no-dangling", cwd=git_dir)
    if fsck.returncode != 0:
        problems.append(f"git fsck --full failed: {fsck.stderr.decode(errors='replace')}")
    objects = git_dir / "objects"
    for path in sorted(p for p in objects.rglob("*") if p.is_file()):
        rel = path.relative_to(objects).as_posix()
        if TEMP_NAMES.match(path.name) or rel.startswith("info/"):
            continue
        if LOOSE_NAME.match(rel):
            continue  # fsck --full has checked it
        m = PACK_NAME.match(rel)
        if not m:
            problems.append(f"unexpected file {rel}")
            continue
        checksum, ext = m.groups()
        pack = path.with_suffix(".pack")
        if ext == "pack":
            data = path.read_bytes()
            if (
                len(data) < 32
                or hashlib.sha1(data[:-20]).hexdigest() != data[-20:].hex()
                or data[-20:].hex() != checksum
            ):
                problems.append(f"partial or misnamed pack {rel}")
        elif ext in ("idx", "rev"):
            data = path.read_bytes()
            if not pack.exists():
                problems.append(f"{rel} without its pack")
            elif (
                len(data) < 40
                or data[-40:-20].hex() != checksum
                or hashlib.sha1(data[:-20]).hexdigest() != data[-20:].hex()
            ):
                problems.append(f"partial {rel}")
    for lock in git_dir.rglob("*.lock"):
        problems.append(f"lock left behind: {lock.relative_to(git_dir)}")
    return problems


def fatal_problems(proc: subprocess.CompletedProcess[bytes]) -> list[str]:
    """A failed command must fail like Git: status 128, one ``fatal:`` line, no traceback."""
    err = proc.stderr.decode(errors="replace")
    problems = []
    if proc.returncode != 128:
        problems.append(f"exit status {proc.returncode}, expected 128")
    if "Traceback" in err:
        problems.append("traceback on stderr")
    fatals = [x for x in err.splitlines() if x.startswith("fatal: ")]
    if len(fatals) != 1 or not err.splitlines()[-1].startswith("fatal: "):
        problems.append(f"expected one final fatal: line, got {err!r}")
    return problems


@dataclass
class Tally:
    """Trials and failures of one stress test; :meth:`done` reports and asserts."""

    name: str
    trials: int = 0
    failures: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def count(self, key: str) -> None:
        """Count an outcome (say, "killed" or "finished") for the report line."""
        self.counts[key] = self.counts.get(key, 0) + 1

    @contextmanager
    def trial(self, description: str) -> Iterator[list[str]]:
        """One trial: append problems to the yielded list (or raise AssertionError)."""
        self.trials += 1
        problems: list[str] = []
        try:
            yield problems
        except AssertionError as e:
            problems.append(str(e))
        if problems:
            self.failures.append(f"{description}: " + "; ".join(problems))

    def done(self) -> None:
        """Print ``trials N, failures F`` (and append it to $GITODB_STRESS_REPORT)."""
        line = f"{self.name}: trials {self.trials}, failures {len(self.failures)}"
        if self.counts:
            line += " (" + ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items())) + ")"
        print(line)
        report = os.environ.get("GITODB_STRESS_REPORT")
        if report:
            with open(report, "a", encoding="utf-8") as f:
                f.write(
                    json.dumps(
                        {
                            "test": self.name,
                            "trials": self.trials,
                            "failures": len(self.failures),
                            "counts": self.counts,
                            "first_failures": self.failures[:5],
                        }
                    )
                    + "\n"
                )
        assert not self.failures, line + "\n" + "\n".join(self.failures[:10])


def random_files(
    root: Path, rng: random.Random, count: int, *, sizes: Sequence[int] = (0, 1, 100, 5000, 70000)
) -> list[Path]:
    """``count`` new files of random (partly compressible) content under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    out = []
    for _ in range(count):
        size = rng.choice(sizes)
        half = size // 2
        data = rng.randbytes(half) + bytes([rng.choice(b"ab\n")]) * (size - half)
        path = root / f"f{rng.getrandbits(48):012x}"
        path.write_bytes(data)
        out.append(path)
    return out
