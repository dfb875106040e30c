"""Time ``gitodb cat-file`` against ``git cat-file``, dulwich and pygit2 in one run.

On a repository (``--repo``, e.g. ``../shared/corpus/libgit2.git``; by default the
benchmark repository of ``make_bench_repo.py``, built first if missing) it times

* ``--batch-check --batch-all-objects`` and ``--batch --batch-all-objects``, each with
  and without ``--unordered``, output to /dev/null, and ``--batch`` into a pipe (this
  process reads and drops it) and, in id order, into a regular file (``file``: gitodb
  places the records) as well (the ``sink`` column): git 2.39 (``git`` on PATH, zlib),
  Git 2.55 (``../shared/git-2.55``, zlib-ng) and ``gitodb cat-file`` on each
  ``--backends`` (default ``zlib,zlib-ng,auto``);
* reading every object through each library's Python API: gitodb, dulwich, pygit2.

Runs alternate between the tools (round-robin, best of ``--repeat``).  Ratios are
of CPU time (user + system of the child, ``os.wait4``; the user and system times of
that same run are shown too); max RSS is the child's own.
Every output is checked against git 2.39's: sha256 of the bytes, streamed; for the
unordered modes and the API readers, a sum of the records' sha256 (order-free).

    python benchmarks/bench_cat_file.py --repo ../shared/corpus/libgit2.git --repeat 3
    python benchmarks/bench_cat_file.py --quick     # small repository, 1 repetition
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import make_bench_repo  # noqa: E402
from _measure import run  # noqa: E402

ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
ENV.pop("GITODB_ZLIB_BACKEND", None)

MODES = [  # (--modes key, option, --unordered, sink: /dev/null, pipe or file)
    ("batch-check", "--batch-check", False, "/dev/null"),
    ("batch-check-unordered", "--batch-check", True, "/dev/null"),
    ("batch", "--batch", False, "/dev/null"),
    ("batch-pipe", "--batch", False, "pipe"),
    ("batch-file", "--batch", False, "file"),
    ("batch-unordered", "--batch", True, "/dev/null"),
    ("batch-unordered-pipe", "--batch", True, "pipe"),
]

# Reading every object through a library's Python API, in the order the library
# offers (gitodb: pack order; dulwich and pygit2: their odb iteration order); each
# script writes ``git cat-file --batch`` records, compared with git's as a set.
PEER_SCRIPTS = {
    "gitodb API": """
import sys
from gitodb.repo import Repository
odb = Repository(sys.argv[1]).odb
w = sys.stdout.buffer.write
for oid, t, d in odb.iter_objects():
    w(b"%s %s %d\\n" % (oid.hex().encode(), t.encode(), len(d))); w(d); w(b"\\n")
""",
    "dulwich": """
import sys
from dulwich.repo import Repo
store = Repo(sys.argv[1]).object_store
w = sys.stdout.buffer.write
for sha in store:
    t, d = store.get_raw(sha)
    name = {1: b"commit", 2: b"tree", 3: b"blob", 4: b"tag"}[t]
    w(b"%s %s %d\\n" % (sha, name, len(d))); w(d); w(b"\\n")
""",
    "pygit2": """
import sys
import pygit2
odb = pygit2.Repository(sys.argv[1]).odb
w = sys.stdout.buffer.write
names = {1: b"commit", 2: b"tree", 3: b"blob", 4: b"tag"}
for oid in odb:
    t, d = odb.read(oid)
    w(b"%s %s %d\\n" % (str(oid).encode(), names[t], len(d))); w(d); w(b"\\n")
""",
}


GIT_255 = HERE.parent.parent / "shared" / "git-2.55" / "git" / "bin" / "git"
ENV.pop("PYTHONDONTWRITEBYTECODE", None)  # measure with compiled bytecode, as users run
_CHUNK = 1 << 22


class _Digest:
    """sha256 of a stream, or (``records``) an order-free sum of its records' sha256."""

    def __init__(self, records: bool, contents: bool) -> None:
        self.records = records
        self.contents = contents
        self.whole = hashlib.sha256()
        self.total = 0
        self.buf = bytearray()

    def feed(self, data: bytes) -> None:
        if not self.records:
            self.whole.update(data)
            return
        buf = self.buf
        buf += data
        pos = 0
        while True:
            nl = buf.find(b"\n", pos)
            if nl < 0:
                break
            end = nl + 1
            if self.contents:
                parts = buf[pos:nl].split(b" ")
                if len(parts) == 3 and parts[1] != b"missing":
                    end += int(parts[2]) + 1
            if end > len(buf):
                break
            self.total += int.from_bytes(hashlib.sha256(buf[pos:end]).digest(), "big")
            pos = end
        del buf[:pos]

    def hexdigest(self) -> str:
        if not self.records:
            return self.whole.hexdigest()
        return f"{self.total % (1 << 256):064x}/{len(self.buf)}"


def output_digest(cmd: list[str], unordered: bool, contents: bool) -> str:
    """The digest of the command's output (order-free when ``unordered``)."""
    d = _Digest(unordered, contents)
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, env=ENV) as p:
        assert p.stdout is not None
        while chunk := p.stdout.read(_CHUNK):
            d.feed(chunk)
    if p.returncode:
        raise subprocess.CalledProcessError(p.returncode, cmd)
    return d.hexdigest()


def file_digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


Usage = tuple[float, float, int, float, float]  # wall, CPU, max RSS KiB, user, sys


def run_sink(cmd: list[str], sink: str, path: str | None, timeout: float) -> Usage:
    """One run of ``cmd`` with its output to /dev/null, the file ``path`` or a pipe that
    this process drains (and drops); the child's own usage (``os.wait4``)."""
    t0 = time.perf_counter()
    if sink == "pipe":
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=ENV)
        assert p.stdout is not None
        while p.stdout.read(_CHUNK):
            if time.perf_counter() - t0 > timeout:
                p.kill()
        p.stdout.close()
    else:
        with open(path if sink == "file" else os.devnull, "wb") as out:  # type: ignore[arg-type]
            p = subprocess.Popen(cmd, stdout=out, env=ENV)
    _pid, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if wall > timeout:
        raise subprocess.TimeoutExpired(cmd, timeout)
    if p.returncode:
        raise subprocess.CalledProcessError(p.returncode, cmd)
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, ru.ru_utime, ru.ru_stime


def measure_round_robin(
    cmds: dict[str, list[str]],
    repeat: int,
    sink: str = "/dev/null",
    path: str | None = None,
    timeout: float = 1800.0,
) -> dict[str, Usage | str]:
    """Per tool, the run of least CPU time (wall, CPU, max RSS KiB, user, sys of that
    run; RSS the least of all runs), the tools alternating in each round; a tool
    that fails or times out gets the reason instead."""
    runs: dict[str, list[Usage]] = {k: [] for k in cmds}
    failed: dict[str, str] = {}
    for _ in range(repeat):
        for name, cmd in cmds.items():
            if name in failed:
                continue
            try:
                runs[name].append(run_sink(cmd, sink, path, timeout))
            except subprocess.CalledProcessError:
                failed[name] = "failed"
            except subprocess.TimeoutExpired:
                failed[name] = f"> {timeout:.0f} s"
    out: dict[str, Usage | str] = {}
    for name, rs in runs.items():
        if name in failed:
            out[name] = failed[name]
        else:
            best = min(rs, key=lambda r: r[1])
            out[name] = (min(r[0] for r in rs), best[1], min(r[2] for r in rs), best[3], best[4])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small repository, 1 repetition")
    ap.add_argument("--repo", type=Path, help="use this repository instead")
    ap.add_argument("--repeat", type=int, help="repetitions per measurement (best is kept)")
    ap.add_argument("--peer-repeat", type=int, default=1, help="repetitions of the API rows")
    ap.add_argument("--backends", default="zlib,zlib-ng,auto", help="comma-separated backends")
    ap.add_argument("--no-peers", action="store_true", help="skip the Python API rows")
    ap.add_argument(
        "--modes",
        help="comma-separated subset of: batch-check, batch-check-unordered, batch, "
        "batch-pipe, batch-file, batch-unordered, batch-unordered-pipe (default: all)",
    )
    ap.add_argument("--no-verify", action="store_true", help="skip output comparison")
    ap.add_argument("--peer-timeout", type=float, default=900.0)
    args = ap.parse_args(argv)
    repeat = args.repeat or (1 if args.quick else 3)

    repo = args.repo
    if repo is None:
        repo = make_bench_repo.DEFAULT_OUT
        if args.quick:
            repo = repo.with_name("bench-repo-quick")
        if not (repo / "objects").is_dir():
            size = make_bench_repo.QUICK if args.quick else make_bench_repo.FULL
            make_bench_repo.build(repo, size["commits"], size["files"], size["edits"], 50, 50)
    backends = args.backends.split(",")
    count = subprocess.run(
        ["git", "-C", str(repo), "count-objects", "-v"],
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    stats = dict(line.split(": ") for line in count.splitlines())
    objects = int(stats["count"]) + int(stats["in-pack"])
    print(f"repository: {repo} ({objects} objects, {stats['size-pack']} KiB of packs)")
    gits = {"git 2.39": "git"}
    if GIT_255.exists():
        gits["git 2.55"] = str(GIT_255)
    versions = "; ".join(
        subprocess.run([g, "--version"], capture_output=True, text=True).stdout.strip()
        for g in gits.values()
    )
    print(f"{versions}; python {sys.version.split()[0]}; repeat {repeat}; load {os.getloadavg()}\n")

    # (mode label, sink, tool, (wall, CPU, RSS KiB, user, sys), identical)
    rows: list[tuple[str, str, str, Usage, str]] = []
    nan = float("nan")
    wanted = set(args.modes.split(",")) if args.modes else None
    scratch = tempfile.mkdtemp(prefix="bench-cat-file-")
    try:
        for key, mode, unordered, sink_kind in MODES:
            if wanted is not None and key not in wanted:
                continue
            contents = mode == "--batch"
            to_file = sink_kind == "file"
            label = f"{mode}{' --unordered' if unordered else ''}"
            extra = ["--unordered"] if unordered else []
            tail = ["-C", str(repo), "cat-file", mode, "--batch-all-objects", *extra]
            cmds = {name: [g, *tail] for name, g in gits.items()}
            for b in backends:
                cmds[f"gitodb ({b})"] = [
                    sys.executable,
                    "-m",
                    "gitodb",
                    f"--zlib-backend={b}",
                    *tail,
                ]
            sink = os.path.join(scratch, "out") if to_file else None
            got = measure_round_robin(cmds, repeat, sink_kind, sink)
            ref = None
            for name, cmd in cmds.items():
                same = "-"
                if not args.no_verify:
                    if to_file:
                        run(cmd, env=ENV, stdout=sink)
                        digest = file_digest(sink)  # type: ignore[arg-type]
                    else:
                        digest = output_digest(cmd, unordered, contents)
                    if ref is None:
                        ref, same = digest, "reference"
                    else:
                        same = "yes" if digest == ref else "**NO**"
                r = got[name]
                if isinstance(r, str):
                    rows.append((label, sink_kind, name, (nan, nan, 0, nan, nan), r))
                else:
                    rows.append((label, sink_kind, name, r, same))
            if sink:
                os.unlink(sink)
            print(f"  {label} ({sink_kind}): done", file=sys.stderr)

        if not args.no_peers:
            label = "read every object (API)"
            cmds = {
                name: [sys.executable, "-c", script, str(repo)]
                for name, script in PEER_SCRIPTS.items()
            }
            got = measure_round_robin(cmds, args.peer_repeat, timeout=args.peer_timeout)
            git_cmd = ["git", "-C", str(repo), "cat-file", "--batch", "--batch-all-objects"]
            ref = None if args.no_verify else output_digest(git_cmd, True, True)
            for name, cmd in cmds.items():
                r = got[name]
                if isinstance(r, str):
                    rows.append((label, "/dev/null", name, (nan, nan, 0, nan, nan), r))
                    continue
                same = "-"
                if ref is not None:
                    same = "yes" if output_digest(cmd, True, True) == ref else "**NO**"
                rows.append((label, "/dev/null", name, r, same))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    print(
        "| mode | sink | tool | wall s | CPU s | user s | sys s | max RSS MiB "
        "| CPU / git 2.39 | CPU / git 2.55 | RSS / git 2.39 | output identical |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    ref_cpu = {(lb, sk, t): u[1] for lb, sk, t, u, _s in rows}
    ref_rss = {(lb, sk, t): u[2] for lb, sk, t, u, _s in rows}
    api = ref_cpu.get(("read every object (API)", "/dev/null", "gitodb API"))
    for label, sk, tool, (w, t, m, us, sy), same in rows:
        g39, g55 = ref_cpu.get((label, sk, "git 2.39")), ref_cpu.get((label, sk, "git 2.55"))
        r39 = f"{t / g39:.2f}x" if g39 else "-"
        r55 = f"{t / g55:.2f}x" if g55 else "-"
        rss39 = ref_rss.get((label, sk, "git 2.39"))
        rr = f"{m / rss39:.2f}x" if rss39 and m else "-"
        if label == "read every object (API)" and api:
            r39 = f"{t / api:.2f}x gitodb"
        cells = [label, sk, tool, f"{w:.2f}", f"{t:.2f}", f"{us:.2f}", f"{sy:.2f}"]
        cells += [f"{m / 1024:.0f}", r39, r55, rr, same]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
