"""Build the benchmark repository deterministically: many slowly evolving text files.

A generator feeds ``git fast-import`` a linear history in which every commit edits a
few lines of a few files (source-like text in nested directories), then the repository
is repacked with long delta chains (``git repack -adf --depth=50 --window=...``).  The
result looks like a real project's history: hundreds of thousands of commits, trees and
blobs, most blobs stored as deltas in chains up to 50 deep.

Usage::

    python benchmarks/make_bench_repo.py            # full size (~300k objects)
    python benchmarks/make_bench_repo.py --quick    # small (~25k objects), seconds
    python benchmarks/make_bench_repo.py --commits 5000 --files 300 --out /tmp/r

The same arguments always give the same object ids and the same pack bytes
(fixed identities and dates, a seeded PRNG, ``pack.threads=1``).  Prints the path.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "work" / "bench-repo"

# Full size: ~25k commits x (4 blobs + ~4 trees + 1 commit) + initial files ~ 260k objects.
FULL = {"commits": 25000, "files": 600, "edits": 4}
QUICK = {"commits": 2500, "files": 150, "edits": 4}

WORDS = (
    "self return def class import from if else elif for while in not and or is None True "
    "False value result data buffer offset size index entry object pack delta base cache "
    "stream reader writer header type name path config error raise try except finally with "
    "as yield lambda list dict tuple int str bytes len range append extend update get items"
).split()

MAX_LINES = 250

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "TZ": "UTC",
    "LC_ALL": "C",
}


def _random_line(rng: random.Random) -> str:
    indent = "    " * rng.randrange(0, 4)
    n = rng.randrange(3, 12)
    return indent + " ".join(rng.choice(WORDS) for _ in range(n)) + "\n"


def _paths(rng: random.Random, nfiles: int) -> list[str]:
    """File paths spread over a two-level directory tree, like a Python package."""
    top = [f"pkg{i}" for i in range(max(2, nfiles // 120))]
    paths = []
    for i in range(nfiles):
        d = top[i % len(top)]
        sub = f"mod{(i // len(top)) % 6}"
        paths.append(f"src/{d}/{sub}/file{i:04d}.py")
    return sorted(paths)


def _evolve(rng: random.Random, lines: list[str]) -> None:
    """Edit a file a little: change, insert or delete a few lines.

    Files grow slowly up to ``MAX_LINES`` and then hover there.
    """
    for _ in range(rng.randrange(1, 4)):
        op = rng.random()
        pos = rng.randrange(0, len(lines) + 1)
        if op < 0.5 and lines:
            lines[min(pos, len(lines) - 1)] = _random_line(rng)
        elif (op < 0.85 and len(lines) < MAX_LINES) or len(lines) < 20:
            for _ in range(rng.randrange(1, 4)):
                lines.insert(pos, _random_line(rng))
        else:
            del lines[min(pos, len(lines) - 1) : min(pos + rng.randrange(1, 3), len(lines))]


def generate_stream(out, commits: int, nfiles: int, edits: int, seed: int = 1) -> None:
    """Write a ``git fast-import`` stream for the whole history to the binary file ``out``."""
    rng = random.Random(seed)
    paths = _paths(rng, nfiles)
    files = {p: [_random_line(rng) for _ in range(rng.randrange(40, 160))] for p in paths}
    date = 1_600_000_000
    w = out.write

    def data(payload: bytes) -> None:
        w(b"data %d\n" % len(payload))
        w(payload)
        w(b"\n")

    for n in range(commits):
        date += 60
        w(b"commit refs/heads/main\n")
        w(b"mark :%d\n" % (n + 1))
        w(b"author A U Thor <author@example.com> %d +0000\n" % date)
        w(b"committer C O Mitter <committer@example.com> %d +0000\n" % date)
        data(b"Change %d\n\nEdit a few lines in a few files.\n" % n)
        if n == 0:
            changed = paths
        else:
            w(b"from :%d\n" % n)
            # Favour a "hot" subset of files, like real projects do.
            hot = max(1, nfiles // 10)
            changed = sorted(
                {
                    paths[rng.randrange(hot) if rng.random() < 0.5 else rng.randrange(nfiles)]
                    for _ in range(edits)
                }
            )
        for p in changed:
            if n:
                _evolve(rng, files[p])
            w(b"M 100644 inline %s\n" % p.encode())
            data("".join(files[p]).encode())
        if n and n % 1000 == 0:
            w(b"reset refs/tags/v%d\nfrom :%d\n" % (n // 1000, n + 1))


def git(repo: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, **kw)


def build(
    out_dir: Path,
    commits: int,
    nfiles: int,
    edits: int,
    window: int,
    depth: int,
    verbose: bool = True,
) -> Path:
    """Create the repository at ``out_dir`` (replacing it) and return its path."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    subprocess.run(
        ["git", "init", "-q", "--bare", str(out_dir)], check=True, env={**os.environ, **GIT_ENV}
    )
    for key, value in (("gc.auto", "0"), ("pack.threads", "1")):
        git(out_dir, "config", key, value)
    env = {**os.environ, **GIT_ENV}
    proc = subprocess.Popen(
        ["git", "-C", str(out_dir), "fast-import", "--quiet"], stdin=subprocess.PIPE, env=env
    )
    assert proc.stdin is not None
    generate_stream(proc.stdin, commits, nfiles, edits)
    proc.stdin.close()
    if proc.wait() != 0:
        raise SystemExit("git fast-import failed")
    t1 = time.monotonic()
    if verbose:
        print(f"fast-import: {t1 - t0:.1f}s", file=sys.stderr)
    # pack.threads=1 keeps the pack byte-identical between runs.
    git(out_dir, "repack", "-adf", "-q", f"--depth={depth}", f"--window={window}")
    git(out_dir, "prune-packed")
    if verbose:
        print(f"repack: {time.monotonic() - t1:.1f}s", file=sys.stderr)
    return out_dir


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small repository (seconds)")
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"target directory (default {DEFAULT_OUT}, -quick for --quick)",
    )
    ap.add_argument("--commits", type=int)
    ap.add_argument("--files", type=int)
    ap.add_argument("--edits", type=int, help="files touched per commit")
    ap.add_argument("--window", type=int, default=50)
    ap.add_argument("--depth", type=int, default=50)
    args = ap.parse_args(argv)
    size = dict(QUICK if args.quick else FULL)
    for key in ("commits", "files", "edits"):
        if getattr(args, key) is not None:
            size[key] = getattr(args, key)
    out = args.out or (DEFAULT_OUT.with_name("bench-repo-quick") if args.quick else DEFAULT_OUT)
    build(out, size["commits"], size["files"], size["edits"], args.window, args.depth)
    count = subprocess.run(
        ["git", "-C", str(out), "count-objects", "-v"], check=True, capture_output=True, text=True
    ).stdout
    print(count, file=sys.stderr, end="")
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
