"""Concurrent and interrupted ref writers, on both ref backends.

- compare-and-swap: N processes / N threads advance one ref along a chain of commits,
  each step ``update_ref(name, next, old=current)``.  Every successful CAS moves the
  ref exactly one step, so the final position must equal the number of successes
  (no lost update); every read must see a valid ref (never empty or broken); the
  only failures allowed are typed (``LockError``, or the old-value check).
- distinct refs: N processes each create their own refs; with long lock retries
  (``core.filesRefLockTimeout`` / ``reftable.lockTimeout``) none may fail.
- crash: ``update-ref --stdin`` with hundreds of refs killed by SIGKILL at random
  moments: no ref is empty or corrupt, ``git fsck`` is clean, a reftable transaction
  is all-or-nothing, and after removing stale locks (Git leaves them too) the next
  gitodb command works.

Sized by ``GITODB_STRESS`` (``stress_scale()``); bounded by counts, not time.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import stress_scale
from gitodb.errors import GitodbError, LockError, RefError
from gitodb.repo import Repository
from helpers import git_env

GIT255 = Path(__file__).resolve().parents[3] / "shared" / "git-2.55" / "git" / "bin" / "git"
BACKENDS = ["files", "reftable"]


def _env() -> dict[str, str]:
    env = git_env()
    if GIT255.exists():
        env["PATH"] = f"{GIT255.parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _git(path: Path, *args: str, backend: str = "files", input: bytes | None = None) -> bytes:
    exe = str(GIT255) if backend == "reftable" else "git"
    proc = subprocess.run(
        [exe, *args], cwd=path, env=_env(), input=input, capture_output=True, check=False
    )
    assert proc.returncode == 0, (args, proc.stderr.decode(errors="replace"))
    return proc.stdout


def _make_repo(path: Path, backend: str, commits: int) -> list[str]:
    """A repository whose main branch is a chain of ``commits`` commits; their ids."""
    if backend == "reftable" and not GIT255.exists():
        pytest.skip("needs Git 2.55 to create a reftable repository")
    fmt = ["--ref-format=reftable"] if backend == "reftable" else []
    _git(path.parent, "init", "-q", "-b", "main", *fmt, str(path), backend=backend)
    _git(path, "config", "maintenance.auto", "false", backend=backend)
    stream = []
    for i in range(commits):
        stream.append(
            f"commit refs/heads/main\nmark :{i + 1}\n"
            f"committer C <c@x> {1700000000 + i} +0000\ndata 3\nc{i % 10}\n"
            + (f"from :{i}\n" if i else "")
            + "\n"
        )
    _git(path, "fast-import", "--quiet", input="".join(stream).encode(), backend=backend)
    out = _git(path, "rev-list", "--reverse", "main", backend=backend).decode().split()
    assert len(out) == commits
    return out


def _check_repo(path: Path, backend: str) -> None:
    """Git's own checks, where the Git that can read this backend is present."""
    if backend == "files":
        _git(path, "fsck", "--no-progress", "--strict")
    if GIT255.exists():
        _git(path, "refs", "verify", backend="reftable")
        if backend == "reftable":
            _git(path, "fsck", "--no-progress", backend="reftable")


# -- compare-and-swap on one ref --------------------------------------------------


def _cas_worker(args: tuple[str, list[str], int, str]) -> tuple[int, int, list[str]]:
    """(successes, typed failures, unexpected errors) of ``attempts`` CAS steps."""
    path, chain, attempts, ref = args
    index = {c: i for i, c in enumerate(chain)}
    ok = typed = 0
    bad: list[str] = []
    refs = Repository(path).refs
    for _ in range(attempts):
        try:
            cur = refs.resolve(ref)
            if cur is None:
                bad.append("ref vanished")
                continue
            i = index.get(cur.hex())
            if i is None:
                bad.append(f"ref has a value never written: {cur.hex()}")
                continue
            if i + 1 >= len(chain):
                break
            refs.update_ref(ref, bytes.fromhex(chain[i + 1]), cur)
            ok += 1
        except LockError:
            typed += 1
        except RefError as e:
            if "but expected" in e.message or "is at" in e.message:
                typed += 1
            else:
                bad.append(f"{type(e).__name__}: {e}")
        except Exception as e:  # noqa: BLE001 - anything untyped is the bug we look for
            bad.append(f"{type(e).__name__}: {e}")
    return ok, typed, bad


def _assert_cas_result(
    path: Path, chain: list[str], results: list[tuple[int, int, list[str]]], backend: str
) -> None:
    problems = [b for _, _, bad in results for b in bad]
    assert not problems, problems[:5]
    successes = sum(ok for ok, _, _ in results)
    final = Repository(path).refs.resolve("refs/heads/main")
    assert final is not None
    assert chain.index(final.hex()) == successes, "lost update"
    assert successes > 0
    assert not list(path.rglob("*.lock"))
    _check_repo(path, backend)


@pytest.mark.stress
@pytest.mark.parametrize("backend", BACKENDS)
def test_cas_processes_one_ref(tmp_path: Path, backend: str) -> None:
    scale = stress_scale()
    workers, attempts = 8, 15 * scale
    repo = tmp_path / "r"
    chain = _make_repo(repo, backend, workers * attempts + 2)
    _git(repo, "update-ref", "refs/heads/main", chain[0], backend=backend)
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        results = pool.map(_cas_worker, [(str(repo), chain, attempts, "refs/heads/main")] * workers)
    _assert_cas_result(repo, chain, results, backend)


@pytest.mark.stress
@pytest.mark.parametrize("backend", BACKENDS)
def test_cas_threads_one_ref(tmp_path: Path, backend: str) -> None:
    scale = stress_scale()
    workers, attempts = 8, 15 * scale
    repo = tmp_path / "r"
    chain = _make_repo(repo, backend, workers * attempts + 2)
    _git(repo, "update-ref", "refs/heads/main", chain[0], backend=backend)
    results: list[tuple[int, int, list[str]]] = []
    lock = threading.Lock()

    def run() -> None:
        got = _cas_worker((str(repo), chain, attempts, "refs/heads/main"))
        with lock:
            results.append(got)

    threads = [threading.Thread(target=run) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _assert_cas_result(repo, chain, results, backend)


# -- distinct refs ---------------------------------------------------------------

# Git itself times out under heavy contention at the default 100 ms (measured: 141 of
# 240 simultaneous `git update-ref` failed on 2 loaded cores); with a long timeout
# every writer must get through, which is what these tests check.
LONG_WAIT = ["reftable.lockTimeout=20000", "core.filesRefLockTimeout=20000"]


def _distinct_worker(args: tuple[str, str, int, int]) -> list[str]:
    path, oid, who, count = args
    refs = Repository(path, config_overrides=LONG_WAIT).refs
    bad = []
    for i in range(count):
        try:
            refs.update_ref(f"refs/heads/w{who:02d}/r{i:03d}", bytes.fromhex(oid))
        except GitodbError as e:
            bad.append(f"{type(e).__name__}: {e}")
        except Exception as e:  # noqa: BLE001
            bad.append(f"untyped {type(e).__name__}: {e}")
    return bad


@pytest.mark.stress
@pytest.mark.parametrize("backend", BACKENDS)
def test_distinct_refs_processes_none_fail(tmp_path: Path, backend: str) -> None:
    scale = stress_scale()
    workers, count = 8, 20 * scale
    repo = tmp_path / "r"
    chain = _make_repo(repo, backend, 2)
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        results = pool.map(
            _distinct_worker, [(str(repo), chain[1], w, count) for w in range(workers)]
        )
    problems = [b for bad in results for b in bad]
    assert not problems, problems[:5]
    refs = Repository(repo).refs
    names = [r.name for r in refs.iter_refs("refs/heads/w")]
    assert len(names) == workers * count
    assert all(refs.resolve(n) == bytes.fromhex(chain[1]) for n in names)
    assert not list(repo.rglob("*.lock"))
    _check_repo(repo, backend)


@pytest.mark.stress
@pytest.mark.parametrize("backend", BACKENDS)
def test_distinct_refs_cli_processes_none_fail(tmp_path: Path, backend: str) -> None:
    """Many concurrent ``gitodb update-ref`` commands, as Git's users run them."""
    n = 20 * stress_scale()
    repo = tmp_path / "r"
    chain = _make_repo(repo, backend, 2)
    wait = [x for c in LONG_WAIT for x in ("-c", c)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "gitodb", *wait, "update-ref", f"refs/heads/p{i:04d}", chain[1]],
            cwd=repo,
            env=_env(),
            stderr=subprocess.PIPE,
        )
        for i in range(n)
    ]
    errors = []
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            errors.append(err.decode(errors="replace"))
    assert not errors, errors[:3]
    assert len(list(Repository(repo).refs.iter_refs("refs/heads/p"))) == n
    _check_repo(repo, backend)


# -- SIGKILL during a big transaction --------------------------------------------


@pytest.mark.stress
@pytest.mark.parametrize("backend", BACKENDS)
def test_killed_transaction(tmp_path: Path, backend: str) -> None:
    scale = stress_scale()
    repo = tmp_path / "r"
    chain = _make_repo(repo, backend, 3)
    nrefs = 300
    create = "".join(f"create refs/heads/k{i:03d} {chain[1]}\n" for i in range(nrefs))
    _git(repo, "update-ref", "--stdin", input=create.encode(), backend=backend)
    update = "".join(
        f"update refs/heads/k{i:03d} {chain[2]} {chain[1]}\n" for i in range(nrefs)
    ).encode()
    rng = random.Random(1234)
    outcomes = set()
    for _trial in range(3 * scale):
        proc = subprocess.Popen(
            [sys.executable, "-m", "gitodb", "update-ref", "--stdin"],
            cwd=repo,
            env=_env(),
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdin is not None
        proc.stdin.write(update)
        proc.stdin.close()
        time.sleep(rng.uniform(0.05, 1.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        for lock in repo.rglob("*.lock"):  # Git also leaves its locks after SIGKILL
            lock.unlink()
        refs = Repository(repo).refs
        values = {r.name: r.oid for r in refs.iter_refs("refs/heads/k")}
        assert len(values) == nrefs, "a ref vanished"
        changed = sum(v == bytes.fromhex(chain[2]) for v in values.values())
        assert all(
            v in (bytes.fromhex(chain[1]), bytes.fromhex(chain[2])) for v in values.values()
        ), "a ref has a value never written"
        if backend == "reftable":
            assert changed in (0, nrefs), f"reftable transaction half applied: {changed}"
        outcomes.add(changed == nrefs)
        _check_repo(repo, backend)
        # the next command works, and puts everything back for the next trial
        back = "".join(f"update refs/heads/k{i:03d} {chain[1]}\n" for i in range(nrefs))
        proc2 = subprocess.run(
            [sys.executable, "-m", "gitodb", "update-ref", "--stdin"],
            cwd=repo,
            env=_env(),
            input=back.encode(),
            capture_output=True,
        )
        assert proc2.returncode == 0, proc2.stderr
        for p in (repo / ".git").rglob("*"):
            if p.is_file() and "refs" in p.parts and not p.name.endswith(".lock"):
                assert p.stat().st_size > 0 or "reftable" in p.parts, f"empty ref {p}"
