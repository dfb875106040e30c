"""Crash safety: gitodb writers killed (SIGKILL) at a random syscall leave a sound store.

Each trial runs one write command twice: first under ``strace`` to list the
syscalls it makes on the repository (writes, fsyncs, renames, links, unlinks,
creates), then again on the real repository with one of them, picked at random,
turned into SIGKILL.  Without strace the writer is killed after a random delay.

Asserted after every kill (:func:`faultkit.check_store`):

1. ``git fsck --full`` is clean;
2. nothing under a final name is partial: every loose object hashes right (fsck),
   every ``pack-*.pack`` ends in the checksum of its bytes and is named by it,
   every ``.idx``/``.rev`` is complete and sits beside its pack; the only other
   files are temporary names Git also leaves (``tmp_obj_*``, ``tmp_pack_*`` ...)
   and no ``*.lock``;
3. every id the killed run had already printed is stored (an id on stdout is a
   promise);
4. re-running the same command without a kill succeeds and prints the ids
   ``git`` computes for the same input, after which fsck is clean again.

The configuration of each trial is random: Git's default, loose objects synced,
``core.fsyncMethod=batch``, or ``core.fsync=none``.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from faultkit import (
    STRACE,
    Tally,
    check_store,
    git_run,
    gitodb_cmd,
    inject,
    kill_after,
    random_files,
    replica,
    trace,
)

from conftest import stress_scale

pytestmark = pytest.mark.stress

CONFIGS = (
    [],
    ["-c", "core.fsync=loose-object"],
    ["-c", "core.fsync=objects", "-c", "core.fsyncMethod=batch"],
    ["-c", "core.fsync=none"],
    ["-c", "core.fsync=all"],
)


def _init(path: Path) -> Path:
    assert git_run("init", "-q", str(path), cwd=path.parent).returncode == 0
    return path


def _source_pack(tmp: Path, rng: random.Random) -> bytes:
    """A new pack (deltas included) of fresh random files, made by git."""
    src = tmp / f"src{rng.getrandbits(32):08x}"
    _init(src)
    base = rng.randbytes(20000)
    for i in range(rng.randint(2, 5)):
        (src / "a").write_bytes(base + rng.randbytes(100) * i)
        random_files(src / "d", rng, 3)
        git_run("add", "-A", cwd=src)
        git_run("commit", "-q", "-m", f"c{i}", cwd=src)
    objs = git_run("rev-list", "--objects", "--all", cwd=src).stdout
    pack = git_run("pack-objects", "--stdout", "-q", cwd=src, stdin=objs).stdout
    assert pack.startswith(b"PACK")
    return pack


class Scenario:
    """One write command: its arguments, stdin and what git prints for the same input."""

    def __init__(self, kind: str, tmp: Path, rng: random.Random) -> None:
        self.kind = kind
        self.stdin = b""
        inputs = tmp / "inputs"
        if kind == "loose":
            files = random_files(inputs, rng, rng.randint(5, 25))
            self.stdin = b"".join(str(f).encode() + b"\n" for f in files)
            self.args = ["hash-object", "-w", "--stdin-paths"]
            self.expected = git_run(
                "hash-object", "--stdin-paths", cwd=tmp, stdin=self.stdin
            ).stdout
        elif kind == "bulk":
            files = random_files(inputs, rng, 2, sizes=(100, 3000))
            files += random_files(inputs, rng, 1, sizes=(300_000, 1_500_000))
            self.args = ["-c", "core.bigFileThreshold=64k", "hash-object", "-w", *map(str, files)]
            self.expected = git_run("hash-object", *map(str, files), cwd=tmp).stdout
        elif kind == "index-pack-stdin":
            self.stdin = _source_pack(tmp, rng)
            self.args = ["index-pack", "--stdin", "--threads=1"]
            ref = _init(tmp / f"ref{rng.getrandbits(32):08x}")
            self.expected = git_run("index-pack", "--stdin", cwd=ref, stdin=self.stdin).stdout
        else:  # index-pack of a pack file in place: writes <pack>.idx beside it
            data = _source_pack(tmp, rng)
            name = f"p{rng.getrandbits(32):08x}"
            self.pack = inputs / f"{name}.pack"
            inputs.mkdir(parents=True, exist_ok=True)
            self.pack.write_bytes(data)
            ref = inputs / f"{name}-ref.pack"
            ref.write_bytes(data)
            self.expected = git_run("index-pack", str(ref), cwd=tmp).stdout
            self.ref_idx = ref.with_suffix(".idx").read_bytes()
            self.args = ["index-pack", "--threads=1", str(self.pack)]

    def watched(self, repo: Path) -> Path:
        """The directory whose syscalls count as this command's writes."""
        return self.pack.parent if self.kind == "index-pack-file" else repo

    def check_after_kill(self, repo: Path, printed: bytes, problems: list[str]) -> None:
        problems += check_store(repo / ".git")
        if self.kind == "index-pack-file":
            idx = self.pack.with_suffix(".idx")
            if idx.exists() and idx.read_bytes() != self.ref_idx:
                problems.append(f"partial {idx.name} under its final name")
            for p in self.pack.parent.iterdir():
                if p.name.endswith(".lock"):
                    problems.append(f"lock left: {p.name}")
        # ids already printed are stored
        for line in printed.splitlines():
            oid = line.split(b"\t")[-1].decode()
            if self.kind in ("loose", "bulk") and len(line) == 40:
                if git_run("cat-file", "-e", oid, cwd=repo).returncode != 0:
                    problems.append(f"printed id {oid} is not stored")

    def check_rerun(self, repo: Path, problems: list[str]) -> None:
        proc = _run(self, repo)
        if proc.returncode != 0 or proc.stdout != self.expected:
            problems.append(
                f"re-run: status {proc.returncode}, stdout {proc.stdout!r} "
                f"(git: {self.expected!r}), stderr {proc.stderr[-300:]!r}"
            )
            return
        problems += check_store(repo / ".git")
        if (
            self.kind == "index-pack-file"
            and self.pack.with_suffix(".idx").read_bytes() != self.ref_idx
        ):
            problems.append("re-run wrote an .idx that differs from git's")


def _run(sc: Scenario, repo: Path):  # type: ignore[no-untyped-def]
    import subprocess

    from faultkit import env

    return subprocess.run(
        gitodb_cmd(*sc.args), cwd=repo, input=sc.stdin, capture_output=True, env=env(), check=False
    )


@pytest.mark.parametrize("kind", ["loose", "bulk", "index-pack-stdin", "index-pack-file"])
def test_killed_writer_leaves_sound_store(tmp_path: Path, kind: str) -> None:
    scale = stress_scale()
    rng = random.Random(f"{kind}-{scale}-{time.time_ns()}")
    repo = _init(tmp_path / "repo")
    tally = Tally(f"crash/{kind}")
    for trial in range(4 * scale):
        trial_dir = tmp_path / f"t{trial}"
        trial_dir.mkdir()
        sc = Scenario(kind, trial_dir, rng)
        config = rng.choice(CONFIGS)
        sc.args = [*config, *sc.args]
        if STRACE is not None:
            scratch = replica(repo, trial_dir / "scratch")
            dry_args = sc.args
            if kind == "index-pack-file":
                # the dry run indexes its own copy of the pack, beside the real one
                dry_pack = sc.pack.with_name("dry-" + sc.pack.name)
                dry_pack.write_bytes(sc.pack.read_bytes())
                dry_args = [*sc.args[:-1], str(dry_pack)]
            events = trace(
                gitodb_cmd(*dry_args),
                cwd=scratch,
                under=sc.watched(scratch),
                stdin=sc.stdin,
                log=trial_dir / "strace.log",
            )
            if kind == "index-pack-file":
                events = [e for e in events if str(trial_dir / "inputs") in e.text]
            if not events:
                with tally.trial(f"trial {trial} {kind}") as problems:
                    problems.append("the dry run made no syscalls on the repository")
                continue
            event = rng.choice(events)
            where = f"{event.name}#{event.ordinal}"
            proc = inject(gitodb_cmd(*sc.args), event, "kill", cwd=repo, stdin=sc.stdin)
        else:
            delay = rng.uniform(0.0, 0.8)
            where = f"after {delay:.2f}s"
            proc = kill_after(gitodb_cmd(*sc.args), delay, cwd=repo, stdin=sc.stdin)
        tally.count("killed" if proc.returncode in (-9, 137) else "finished")
        with tally.trial(f"trial {trial} {kind} {config} killed at {where}") as problems:
            sc.check_after_kill(repo, proc.stdout, problems)
            sc.check_rerun(repo, problems)
    tally.done()
