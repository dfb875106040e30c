"""Benchmark ``gitodb index-pack`` against ``git index-pack`` on the benchmark pack.

For every zlib backend and for 1 and 2 threads, index the pack of the cat-file
benchmark repository (``benchmarks/make_bench_repo.py``) with ``gitodb`` and with
``git`` in the same run, as processes (start-up included), best of ``--repeat``.
Then:

* a profile of one 1-thread run (cProfile), its time split into inflate,
  SHA-1/SHA-256, CRC-32, delta application and Python overhead;
* CRC-32's share of the whole run per backend: the same ``compress.crc32``
  calls over the same entry spans, timed alone, divided by that backend's
  1-thread run time.

Usage::

    python benchmarks/bench_index_pack.py            # full benchmark repository
    python benchmarks/bench_index_pack.py --quick    # the small one, one repeat
    python benchmarks/bench_index_pack.py --pack some.pack --out results.md

Prints a Markdown report and writes it to ``benchmarks/results/index_pack.md``.
"""

from __future__ import annotations

import argparse
import mmap
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))

from gitodb import compress  # noqa: E402
from gitodb.objects import SHA1  # noqa: E402
from gitodb.pack.indexer import PackIndexer  # noqa: E402

GIT_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "LC_ALL": "C",
}


def find_pack(quick: bool) -> Path:
    """The benchmark repository's pack, building the repository if it is missing."""
    name = "bench-repo-quick" if quick else "bench-repo"
    repo = HERE / "work" / name
    packs = sorted((repo / "objects" / "pack").glob("pack-*.pack")) if repo.exists() else []
    if not packs:
        args = [sys.executable, str(HERE / "make_bench_repo.py"), "--out", str(repo)]
        subprocess.run(args + (["--quick"] if quick else []), check=True)
        packs = sorted((repo / "objects" / "pack").glob("pack-*.pack"))
    return max(packs, key=lambda p: p.stat().st_size)


GIT_255 = ROOT.parent / "shared" / "git-2.55" / "git" / "bin" / "git"


# gitodb runs as ``python -S -m gitodb`` with PYTHONPATH naming the source tree and
# the site-packages holding its dependencies: -S leaves out the .pth start-up hooks
# of the machine's Python (this sandbox's imports certifi, ~35 ms, in every process),
# which are not gitodb's (bench_startup.py does the same).
SITE = [p for p in sys.path if p.endswith("site-packages")]
GITODB = [sys.executable, "-S", "-m", "gitodb"]


def run_once(
    cmd: list[str], env: dict[str, str], cwd: Path | None = None, stdin: Path | None = None
) -> tuple[float, float, int]:
    """Wall time, CPU time (user + system, from ``os.wait4``) and max RSS (bytes) of ``cmd``.

    Without ``cwd``, run outside any repository (no collision check); with it, in
    that repository, the pack read from ``stdin`` (``index-pack --stdin``), and
    whatever the run added to ``objects/pack`` removed afterwards.
    """
    pack_dir = cwd / "objects" / "pack" if cwd is not None else None
    before = set(os.listdir(pack_dir)) if pack_dir is not None else set()
    t0 = time.perf_counter()
    with open(stdin or os.devnull, "rb") as f:
        proc = subprocess.Popen(
            cmd, stdin=f, stdout=subprocess.DEVNULL, env=env, cwd=cwd or tempfile.gettempdir()
        )
        _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if pack_dir is not None:
        for name in set(os.listdir(pack_dir)) - before:
            os.unlink(pack_dir / name)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed with status {proc.returncode}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024


def sides(
    pack: Path, out_idx: Path, threads: int, backends: list[str]
) -> list[tuple[str, list[str], dict[str, str]]]:
    """(label, command, environment) of every program timed for ``threads``."""
    env = {k: v for k, v in GIT_ENV.items() if k != "PYTHONDONTWRITEBYTECODE"}
    genv = {**env, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *SITE])}
    args = ["index-pack", f"--threads={threads}", "-o", str(out_idx), str(pack)]
    out = [("git 2.39 (zlib, SHA1_DC)", ["git", *args], env)]
    if GIT_255.exists():
        out.append(("git 2.55 (zlib-ng, SHA1_DC)", [str(GIT_255), *args], env))
    for backend in backends:
        out.append(
            (f"gitodb {backend} (SHA1_DC)", [*GITODB, f"--zlib-backend={backend}", *args], genv)
        )
    out.append(("gitodb auto (plain SHA-1)", [*GITODB, *args], {**genv, "GITODB_SHA1": "plain"}))
    return out


def repo_runs(
    pack: Path, holding: Path | None, backends: list[str], repeat: int, tmp: Path
) -> list[dict[str, object]]:
    """``index-pack --stdin`` of ``pack`` inside a bare repository (the fetch case, with
    Git's collision check against the repository): one holding ``holding``'s objects
    (a copy of it) and one empty; best of ``repeat``, the sides alternating."""
    import shutil

    env = {k: v for k, v in GIT_ENV.items() if k != "PYTHONDONTWRITEBYTECODE"}
    genv = {**env, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *SITE])}
    repos = []
    if holding is not None:
        dest = tmp / "holding.git"
        shutil.copytree(holding, dest)
        for p in dest.rglob("*"):
            p.chmod(0o755 if p.is_dir() else 0o644)
        repos.append(("holding its objects", dest))
    empty = tmp / "empty.git"
    subprocess.run(["git", "init", "-q", "--bare", str(empty)], check=True, env=env)
    repos.append(("empty", empty))
    rows = []
    for what, repo in repos:
        for threads in (1, 2):
            args = ["index-pack", "--stdin", f"--threads={threads}"]
            progs = [("git 2.39 (zlib, SHA1_DC)", ["git", *args], env)]
            if GIT_255.exists():
                progs.append(("git 2.55 (zlib-ng, SHA1_DC)", [str(GIT_255), *args], env))
            for backend in backends:
                progs.append(
                    (
                        f"gitodb {backend} (SHA1_DC)",
                        [*GITODB, f"--zlib-backend={backend}", *args],
                        genv,
                    )
                )
            best = {label: [float("inf"), float("inf"), 0] for label, _, _ in progs}
            for _ in range(repeat):
                for label, cmd, penv in progs:
                    wall, cpu, rss = run_once(cmd, penv, cwd=repo, stdin=pack)
                    b = best[label]
                    b[0], b[1] = min(b[0], wall), min(b[1], cpu)
                    b[2] = rss if not b[2] else min(b[2], rss)
            for label, _, _ in progs:
                wall, cpu, rss = best[label]
                rows.append(
                    {
                        "repo": what,
                        "threads": threads,
                        "side": label,
                        "wall": wall,
                        "cpu": cpu,
                        "rss": rss,
                    }
                )
    return rows


def time_runs(pack: Path, backends: list[str], repeat: int, tmp: Path) -> list[dict[str, object]]:
    """Best of ``repeat`` of every side, the sides alternating within each repeat."""
    rows = []
    out_idx = tmp / "x.idx"
    for threads in (1, 2):
        progs = sides(pack, out_idx, threads, backends)
        best = {label: [float("inf"), float("inf"), 0] for label, _, _ in progs}
        for _ in range(repeat):
            for label, cmd, env in progs:
                wall, cpu, rss = run_once(cmd, env)
                b = best[label]
                b[0], b[1] = min(b[0], wall), min(b[1], cpu)
                b[2] = rss if not b[2] else min(b[2], rss)
        for label, _, _ in progs:
            wall, cpu, rss = best[label]
            rows.append({"threads": threads, "side": label, "wall": wall, "cpu": cpu, "rss": rss})
    return rows


def crc_alone(
    pack_buf: mmap.mmap, spans: list[tuple[int, int]], backend: str
) -> tuple[float, float]:
    """CPU seconds of the run's ``compress.crc32`` calls over the same entry spans.

    Returns ``(crc, loop)``: the CRC calls with the bare loop (iterating the
    prepared slices and calling ``len``) subtracted, and the bare loop itself,
    which the indexer pays per entry anyway.  CPU time, best of 3.
    """
    compress.set_backend(backend)
    crc32 = compress.crc32
    view = memoryview(pack_buf)
    views = [view[start:end] for start, end in spans]

    def timed(fn: object) -> float:
        best = float("inf")
        for _ in range(3):
            t0 = time.process_time()
            for v in views:
                fn(v)  # type: ignore[operator]
            best = min(best, time.process_time() - t0)
        return best

    loop = timed(len)
    crc = timed(crc32)
    for v in views:
        v.release()
    view.release()
    compress.set_backend(None)
    return max(crc - loop, 0.0), loop


def micro_table() -> list[str]:
    """The CRC-32 rows of the compression layer's micro-benchmark, if it has been run."""
    path = HERE / "results" / "compress.md"
    if not path.exists():
        return []
    rows = path.read_text().splitlines()
    head = [i for i, line in enumerate(rows) if line.startswith("| measurement")]
    if not head:
        return []
    i = head[0]
    return rows[i : i + 2] + [line for line in rows if line.startswith("| crc32 ")]


def _table(sel: list[dict[str, object]]) -> list[str]:
    """The rows of one table: wall, CPU, CPU against each git, max RSS."""
    base = {str(r["side"]): r for r in sel if str(r["side"]).startswith("git ")}
    g39 = base.get("git 2.39 (zlib, SHA1_DC)")
    g55 = base.get("git 2.55 (zlib-ng, SHA1_DC)")
    lines = [
        "| program | wall (s) | CPU (s) | CPU / git 2.39 | CPU / git 2.55 "
        "| wall / git 2.39 | max RSS (MB) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in sel:
        cpu = float(r["cpu"])  # type: ignore[arg-type]
        wall = float(r["wall"])  # type: ignore[arg-type]
        r39 = f"{cpu / float(g39['cpu']):.2f}x" if g39 else "-"  # type: ignore[arg-type]
        r55 = f"{cpu / float(g55['cpu']):.2f}x" if g55 else "-"  # type: ignore[arg-type]
        w39 = f"{wall / float(g39['wall']):.2f}x" if g39 else "-"  # type: ignore[arg-type]
        lines.append(
            f"| {r['side']} | {wall:.2f} | {cpu:.2f} | {r39} | {r55} | {w39} "
            f"| {int(r['rss']) / 1e6:.0f} |"  # type: ignore[call-overload]
        )
    return lines


def report(
    pack: Path,
    nobj: int,
    rows: list[dict[str, object]],
    crc_rows: list[tuple[str, str, float, float, float]],
    repeat: int,
    repo_rows: list[dict[str, object]] | None = None,
    holding: Path | None = None,
) -> str:
    size_mb = pack.stat().st_size / 1e6
    lines = [
        "# index-pack benchmark",
        "",
        f"Pack: `{pack}` ({size_mb:.1f} MB, {nobj} objects), "
        f"`python benchmarks/bench_index_pack.py --pack {pack} --repeat {repeat}"
        + (f" --holding {holding}" if holding else "")
        + "`. "
        "Whole processes (start-up included), every side run in turn in each of the "
        f"{repeat} repeats, best of them; CPU is user + system of the process "
        "(`os.wait4`), max RSS its peak resident memory. "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} (1-minute average) at the end.",
        "",
        "Both gits hash with SHA1_DC (git 2.39 on PATH has no `SHA-1:` line in "
        "`version --build-options`, links no OpenSSL and so uses its default, SHA1_DC; "
        "git 2.55 says `SHA-1: SHA1_DC`). gitodb's SHA1_DC is its native core "
        "(`_native/sha1dc.c`); `GITODB_SHA1=plain` switches detection off (no git here "
        "can), shown as the last row of each table for comparison.",
        "",
    ]
    lines += [
        "gitodb runs as `python -S -m gitodb` (PYTHONPATH: the source tree and the "
        "site-packages of its dependencies), so the machine's `.pth` start-up hooks (this "
        "sandbox's imports certifi, ~35 ms) are left out; start-up is otherwise included.",
        "",
    ]
    for threads in (1, 2):
        sel = [r for r in rows if r["threads"] == threads]
        lines += [f"## --threads={threads}", "", *_table(sel), ""]
    if repo_rows:
        lines += [
            "## Inside a repository (the fetch case)",
            "",
            "`index-pack --stdin --threads=<n>` with the pack on stdin, run in a bare "
            "repository: Git then checks every received object the repository already has "
            "against the stored one (`SHA1 COLLISION FOUND WITH <id> !` when they differ). "
            f'"holding its objects" is a copy of `{holding}`, whose pack is this very pack '
            "(every object present; gitodb proves them equal by their identical stored "
            'entries); "empty" holds no objects.  What each run added to `objects/pack` '
            "is removed before the next.",
            "",
        ]
        for what in dict.fromkeys(str(r["repo"]) for r in repo_rows):
            for threads in (1, 2):
                sel = [r for r in repo_rows if r["repo"] == what and r["threads"] == threads]
                lines += [f"### {what}, --threads={threads}", "", *_table(sel), ""]
    lines += [
        "## CRC-32's share of the run",
        "",
        "The run's `compress.crc32` calls (one per entry, over its raw bytes: "
        f"{nobj} calls) timed alone on each backend in CPU time, minus the bare loop over "
        "the same slices, against that backend's 1-thread index-pack CPU time.",
        "",
        "| backend | CRC-32 implementation | CRC-32 calls (ms) | bare loop (ms) "
        "| share of the run |",
        "|---|---|---:|---:|---:|",
    ]
    for backend, impl, crc_s, loop_s, share in crc_rows:
        lines.append(
            f"| {backend} | {impl} | {1000 * crc_s:.1f} | {1000 * loop_s:.1f} "
            f"| {100 * share:.2f}% |"
        )
    lines += ["", "Target: CRC-32 under 1% of the run with a SIMD backend (zlib-ng, ISA-L).", ""]
    micro = micro_table()
    if micro:
        lines += [
            "The compression layer's CRC-32 micro-benchmark (`benchmarks/results/compress.md`):",
            "",
            *micro,
            "",
        ]
    lines += USAGE.splitlines()
    return "\n".join(lines)


USAGE = """
## Usage (README text)

```
gitodb index-pack [-v] [-o <index-file>] [--keep[=<msg>]] [--rev-index] <pack-file>
gitodb index-pack --stdin [--fix-thin] [--keep[=<msg>]] [--strict] [<pack-file>]
gitodb index-pack --verify <pack-file>
gitodb verify-pack [-v] [-s] <pack>.idx...
```

`index-pack` writes an `.idx` (v2, or v1 with `--index-version=1`) and, with
`--rev-index` or `pack.writeReverseIndex=true`, a `.rev`, byte-identical to
`git index-pack`; it prints the pack hash (`pack\\t<hash>`/`keep\\t<hash>` with
`--stdin`).  `--threads=<n>` resolves delta trees in parallel (default as Git:
all CPUs up to 3, then half, at most 20): with the native core, in threads that
release the GIL around inflate, hashing and delta application; in the pure-Python
reference (and where the native path hands over: damage, --strict, a thin pack
with --fix-thin) in forked processes for packs with many delta trees.
Inside a repository (the fetch case) the native path indexes the pack and then
runs Git's collision check: the received ids the repository already has are
found in bulk, and each such object must be the same there (`fatal: SHA1
COLLISION FOUND WITH <id> !` otherwise).
Damage (bad zlib stream, wrong trailer, truncated pack, unresolved or cyclic
deltas) gives one `fatal:` line naming the offset and exit status 128, and
leaves no file behind.
`verify-pack -v`/`-s` print Git's per-object lines and chain histogram.
From Python: `gitodb.pack.indexer.PackIndexer(buf, fmt).run()`,
`index_pack_file(...)`, `index_pack_stream(...)`, `gitodb.pack.verify.verify_pack(...)`.
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small repository, one repeat")
    ap.add_argument("--pack", type=Path, help="index this pack instead")
    ap.add_argument("--repeat", type=int)
    ap.add_argument("--backends", help="comma-separated gitodb backends (default: auto and all)")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "index_pack.md")
    ap.add_argument(
        "--holding",
        type=Path,
        help="a bare repository holding the pack's objects, for the inside-a-repository rows",
    )
    ap.add_argument(
        "--repo-backends", default="auto", help="gitodb backends for the inside-a-repository rows"
    )
    ap.add_argument("--no-repo", action="store_true", help="skip the inside-a-repository rows")
    args = ap.parse_args(argv)
    pack = args.pack or find_pack(args.quick)
    repeat = args.repeat or (1 if args.quick else 3)
    backends = (
        args.backends.split(",") if args.backends else ["auto", *compress.available_backends()]
    )
    with tempfile.TemporaryDirectory(prefix="bench-index-pack-") as tmp:
        rows = time_runs(pack, backends, repeat, Path(tmp))
        repo_rows = None
        if not args.no_repo:
            repo_rows = repo_runs(
                pack, args.holding, args.repo_backends.split(","), repeat, Path(tmp)
            )
    with open(pack, "rb") as f:
        buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    result = PackIndexer(buf, SHA1, threads=1).run()
    spans = list(zip(result.offsets, result.ends, strict=True))
    compress.set_backend(None)
    one_thread = {
        str(r["side"]).split()[1]: float(r["cpu"])  # type: ignore[arg-type]
        for r in rows
        if r["threads"] == 1
        and str(r["side"]).endswith("(SHA1_DC)")
        and str(r["side"]).startswith("gitodb")
    }
    crc_rows = []
    for backend in backends:
        compress.set_backend(backend)
        impl = compress.active_backend("crc32")
        compress.set_backend(None)
        crc_s, loop_s = crc_alone(buf, spans, backend)
        crc_rows.append((backend, str(impl), crc_s, loop_s, crc_s / one_thread[backend]))
    text = report(pack, len(result.oids), rows, crc_rows, repeat, repo_rows, args.holding)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
