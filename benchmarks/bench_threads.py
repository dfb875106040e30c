"""Two threads of ``iter_objects`` over two packs: do they use both cores?

Opens the repository twice (two object databases, so two packs objects with a
delta-base cache each, as two threads reading two repositories would) and reads
every object of each pack's largest pack with ``PackFile.iter_objects``: first both
one after the other in one thread, then one per thread at the same time.  Scaling
is sequential wall time over parallel wall time (2.0: both cores used the whole
time; 1.0: the threads took turns).  The GIL is released around inflates and delta
applications of 4 KiB or more, so the scaling says how much of the walk is that.

    python benchmarks/bench_threads.py [--repo R] [--backend zlib] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from pathlib import Path

from gitodb import compress
from gitodb.repo import Repository

HERE = Path(__file__).resolve().parent
DEFAULT_REPO = HERE.parent.parent / "shared" / "corpus" / "libgit2.git"


def _walk(repo: str, out: list[int]) -> None:
    odb = Repository(repo).odb
    pack = max(odb.packs, key=lambda p: p.count)
    n = 0
    for _oid, _off, _t, data in pack.iter_objects():
        n += len(data)
    out.append(n)
    odb.close()


def _timed(fn: object) -> tuple[float, float]:
    w, c = time.perf_counter(), time.process_time()
    fn()  # type: ignore[operator]
    return time.perf_counter() - w, time.process_time() - c


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, default=DEFAULT_REPO)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    compress.set_backend(args.backend)
    repo = str(args.repo)

    def sequential() -> None:
        got: list[int] = []
        _walk(repo, got)
        _walk(repo, got)

    def parallel() -> None:
        got: list[int] = []
        threads = [threading.Thread(target=_walk, args=(repo, got)) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(got) == 2 and got[0] == got[1]

    seq = min((_timed(sequential) for _ in range(args.repeat)), key=lambda r: r[0])
    par = min((_timed(parallel) for _ in range(args.repeat)), key=lambda r: r[0])
    print(
        f"repository {repo}, backend {compress.active_backend('inflate')}, "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}, best of {args.repeat}\n"
    )
    print("| run | wall s | CPU s | CPU / wall |")
    print("|---|---:|---:|---:|")
    print(f"| 2 packs, 1 thread | {seq[0]:.2f} | {seq[1]:.2f} | {seq[1] / seq[0]:.2f} |")
    print(f"| 2 packs, 2 threads | {par[0]:.2f} | {par[1]:.2f} | {par[1] / par[0]:.2f} |")
    print(f"\nscaling (sequential wall / parallel wall): {seq[0] / par[0]:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
