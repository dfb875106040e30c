"""Benchmark gitodb's reftable reader on the 1,000,002-entry reflog table.

    python benchmarks/bench_reftable.py [--quick] [--table PATH] [--output FILE.md]

Measures, in one run:

* iterating every reflog entry (``TableReader.iter_logs``), per zlib backend, with
  one reused inflater per table vs a new inflater per log block: wall time, and a
  heap summary from ``memray`` (native allocations: count, bytes, peak) of the same
  iteration in a child process; also the inflate step alone (blocks, no records);
* looking up one ref by name among the 1001 refs: cold (fresh open of the table,
  footer + index + one ref block) and warm (same reader), in microseconds;
* iterating all refs;
* peers: dulwich's ``ReftableReader`` (refs only; it has no reflog reader), and
  git (2.39 cannot read reftable; Git 2.55 takes ~19 s for
  ``git reflog show --all --format='%H %gd %gs'`` on this table, quoted from the issue).

``--quick`` iterates the first 100,000 entries per configuration instead of all
(the full iteration on the default backend is always run once).

Commands against git 2.55 in the same run (``--commands-only``: just these): CPU
(``wait4``, median of ``--repeat`` alternating runs), the ratio, and max RSS of each,
of ``for-each-ref``, ``show-ref`` and ``cat-file -t`` on the table's repository and on
``bench_startup``'s 4,500-ref reftable repository (built under ``--work``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_TABLE_DIR = Path("/work/shared/fixtures/reftable-reflog-1m/repo/reftable")
LOOKUP_REF = b"refs/heads/b/0500"
QUICK_ENTRIES = 100_000


def find_table(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    names = (DEFAULT_TABLE_DIR / "tables.list").read_text().split()
    return DEFAULT_TABLE_DIR / names[0]


# -- child process: one measured iteration ---------------------------------


def child(table: str, backend: str, reuse: bool, limit: int, what: str, memray_out: str) -> None:
    from gitodb import compress
    from gitodb.reftable.basics import BLOCK_LOG
    from gitodb.reftable.reader import TableReader

    compress.set_backend(backend)
    tracker = None
    if memray_out:
        import memray

        tracker = memray.Tracker(memray_out)
    reader = TableReader(table, reuse_inflater=reuse)
    n = 0
    blocks = 0
    t0 = time.perf_counter()
    c0 = time.process_time()
    if tracker is not None:
        tracker.__enter__()
    try:
        if what == "inflate":
            start = 0 if reader.logs_first else reader.log_pos
            for blk in reader.blocks(start, BLOCK_LOG):
                blocks += 1
                n += blk.restart_count
                if limit and blocks >= limit:
                    break
        else:
            it = reader.iter_logs()
            for _rec in itertools.islice(it, limit) if limit else it:
                n += 1
    finally:
        if tracker is not None:
            tracker.__exit__(None, None, None)
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0
    print(json.dumps({"n": n, "blocks": blocks, "seconds": elapsed, "cpu": cpu}))


def run_child(
    table: Path, backend: str, reuse: bool, limit: int, what: str, track: bool
) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "m.bin") if track else ""
        cmd = [
            sys.executable,
            __file__,
            "--child",
            str(table),
            backend,
            str(int(reuse)),
            str(limit),
            what,
            out,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr)
        res: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
        if track:
            import memray
            from memray import AllocatorType

            reader = memray.FileReader(out)
            allocs = {
                AllocatorType.MALLOC,
                AllocatorType.CALLOC,
                AllocatorType.REALLOC,
                AllocatorType.POSIX_MEMALIGN,
                AllocatorType.ALIGNED_ALLOC,
                AllocatorType.MEMALIGN,
                AllocatorType.VALLOC,
                AllocatorType.PVALLOC,
                AllocatorType.MMAP,
            }
            count = 0
            total = 0
            for rec in reader.get_allocation_records():
                if rec.allocator in allocs:
                    count += rec.n_allocations
                    total += rec.size
            res["allocations"] = count
            res["bytes"] = total
            res["peak"] = reader.metadata.peak_memory
        return res


# -- lookups and ref iteration ---------------------------------------------


def bench_lookup(table: Path, rounds: int) -> dict[str, float]:
    from gitodb.reftable.reader import TableReader

    cold = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        r = TableReader(table)
        rec = r.seek_ref(LOOKUP_REF)
        cold.append(time.perf_counter() - t0)
        assert rec is not None
        r.close()
    r = TableReader(table)
    warm = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        r.seek_ref(LOOKUP_REF)
        warm.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    n = sum(1 for _ in r.iter_refs())
    all_refs = time.perf_counter() - t0
    return {
        "cold_us": statistics.median(cold) * 1e6,
        "warm_us": statistics.median(warm) * 1e6,
        "all_refs_ms": all_refs * 1e3,
        "refs": n,
    }


def bench_stack_lookup(table: Path, rounds: int) -> float:
    """Cold lookup through the whole refs layer: read tables.list, open, seek."""
    from gitodb.objects.format import SHA1
    from gitodb.refs.reftable_store import ReftableRefStore

    git_dir = table.parent.parent
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        store = ReftableRefStore(git_dir, SHA1, None)
        store.read(LOOKUP_REF.decode())
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def bench_dulwich(table: Path, rounds: int) -> dict[str, object] | None:
    try:
        from dulwich.reftable import ReftableReader
    except ImportError:
        return None
    times = []
    refs: dict[bytes, object] = {}
    for _ in range(rounds):
        t0 = time.perf_counter()
        with open(table, "rb") as f:
            refs = ReftableReader(f).all_refs()
        times.append(time.perf_counter() - t0)
    return {
        "all_refs_ms": statistics.median(times) * 1e3,
        "refs": len(refs),
        "found": LOOKUP_REF in refs,
    }


def git_can_read(table: Path) -> str:
    git = shutil.which("git")
    if git is None:
        return "git not on PATH"
    version = subprocess.run([git, "--version"], capture_output=True, text=True).stdout.strip()
    proc = subprocess.run(
        [git, "--git-dir", str(table.parent.parent), "for-each-ref", "--count=1"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        return f"{version}: cannot read reftable ({proc.stderr.strip().splitlines()[0]})"
    return f"{version}: ok"


# -- commands against git ----------------------------------------------------


def bench_commands(table: Path, work: Path, repeat: int) -> list[str]:
    """Markdown: gitodb's ref commands against git 2.55 on reftable repositories."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_startup as bs

    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(bs.ROOT / "src")], check=True, env=bs.ENV
    )
    fixture = table.parent.parent
    big = bs.build_repos(work)["reftable"]
    rows = [
        ("for-each-ref (1M-reflog table, 1,001 refs)", ["for-each-ref"], fixture),
        ("show-ref (same)", ["show-ref"], fixture),
        (
            f"cat-file -t {LOOKUP_REF.decode()} (same)",
            ["cat-file", "-t", LOOKUP_REF.decode()],
            fixture,
        ),
        ("for-each-ref (4,500 refs, 852k-object pack)", ["for-each-ref"], big),
        ("show-ref (same)", ["show-ref"], big),
        ("cat-file -t HEAD (same)", ["cat-file", "-t", "HEAD"], big),
    ]
    load = os.getloadavg()[0]
    lines = [
        "### Ref commands against git 2.55 (reftable)",
        "",
        f"CPU = user + sys (`wait4`), median of {repeat} runs, git and gitodb alternating; "
        f"max RSS from `/usr/bin/time` (median of 3); load average {load:.1f} at the start.",
        "",
    ]
    lines += bs.versus_git(rows, bs.env_for(bs.ROOT / "src"), repeat)
    return lines + [""]


# -- main ------------------------------------------------------------------


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        a = sys.argv[2:]
        child(a[0], a[1], bool(int(a[2])), int(a[3]), a[4], a[5])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--table")
    ap.add_argument("--output", help="also write the Markdown to this file")
    ap.add_argument("--commands-only", action="store_true")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--work", type=Path, default=Path(__file__).resolve().parent / "work")
    args = ap.parse_args()
    table = find_table(args.table)
    if not table.exists():
        sys.exit(f"table not found: {table}")
    if args.commands_only:
        text = "\n".join(bench_commands(table, args.work, args.repeat))
        print(text)
        if args.output:
            Path(args.output).write_text(text)
        return
    from gitodb import compress

    backends = compress.available_backends()
    compress.set_backend(None)
    auto_reuse = compress.active_backend("inflate-reuse")
    limit = QUICK_ENTRIES if args.quick else 0
    import timeit

    calib = min(timeit.repeat("sum(range(1_000_000))", number=1, repeat=5)) * 1e3
    lines = [
        f"Machine speed: `sum(range(1_000_000))` best of 5 = {calib:.1f} ms "
        "(a quiet recent x86 core: ~12-15 ms).",
        "",
        f"Table: `{table.name}` ({table.stat().st_size:,} bytes); "
        f"Python {sys.version.split()[0]}; backends: {', '.join(backends)}; "
        f"{f'quick: first {limit:,} entries per row' if limit else 'all entries'}.",
        "",
    ]

    full = run_child(table, "auto", True, 0, "entries", False)
    full_mem = run_child(table, "auto", True, 0, "entries", True)
    part_mem = run_child(table, "auto", True, QUICK_ENTRIES, "entries", True)
    lines += [
        f"### Iterate every reflog entry (default backend: auto, reusable inflater "
        f"on {auto_reuse})",
        "",
        "| entries | wall s | CPU s | CPU µs/entry | entries/s | native allocations "
        "| MB allocated | peak MB | target |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|",
        f"| {full['n']:,} | {full['seconds']:.2f} | {full['cpu']:.2f} | "
        f"{full['cpu'] / full['n'] * 1e6:.2f} | "
        f"{full['n'] / full['seconds']:,.0f} | {int(full_mem['allocations']):,} | "
        f"{full_mem['bytes'] / 1e6:.1f} | {full_mem['peak'] / 1e6:.2f} "
        f"| < 3 s; Git 2.55 `reflog show --all`: ~19 s (issue) |",
        f"| {int(part_mem['n']):,} | | | | | {int(part_mem['allocations']):,} | "
        f"{part_mem['bytes'] / 1e6:.1f} | {part_mem['peak'] / 1e6:.2f} "
        "| peak must not grow with entries |",
        "",
    ]

    lines += [
        "### Per backend: reused inflater vs a new inflater per log block",
        "",
        "Heap: native allocations recorded by memray during the iteration "
        "(the inflate output of each block is one of them).",
        "",
        "Times are CPU seconds of the child process (the machine is shared); "
        "`inflate` rows decode blocks only, `entries` rows every record.",
        "",
        "| backend | inflater | what | entries (blocks) | CPU s | allocations | "
        "alloc/block | MB allocated | peak MB | CPU ratio new/reused |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for be in backends:
        for what in ("entries", "inflate"):
            lim = limit if what == "entries" else (limit // 10 if limit else 0)
            row = {}
            for reuse in (True, False):
                timed = run_child(table, be, reuse, lim, what, False)
                tracked = run_child(table, be, reuse, lim, what, True)
                row[reuse] = (timed, tracked)
            for reuse in (True, False):
                timed, tracked = row[reuse]
                # entries rows: ~42.06 records per log block in this table
                blocks = tracked["blocks"] or max(1, round(tracked["n"] / 42.06))
                ratio = row[False][0]["cpu"] / row[True][0]["cpu"]
                lines.append(
                    f"| {be} | {'reused' if reuse else 'new per block'} | {what} | "
                    f"{int(tracked['n']) if what == 'entries' else int(blocks):,}"
                    f"{' blocks' if what == 'inflate' else ''} | "
                    f"{timed['cpu']:.2f} | {int(tracked['allocations']):,} | "
                    f"{tracked['allocations'] / blocks:.2f} | {tracked['bytes'] / 1e6:.1f} | "
                    f"{tracked['peak'] / 1e6:.2f} | {'' if reuse else f'{ratio:.2f}x'} |"
                )
    lines.append("")

    rounds = 50 if args.quick else 200
    lk = bench_lookup(table, rounds)
    stack_us = bench_stack_lookup(table, rounds)
    dw = bench_dulwich(table, 5 if args.quick else 20)
    lines += [
        f"### Refs ({lk['refs']} refs in the table)",
        "",
        "| operation | gitodb | dulwich | note |",
        "|---|---:|---:|---|",
        f"| look up `{LOOKUP_REF.decode()}`, cold (open table + seek) | "
        f"{lk['cold_us']:.0f} µs | | target well under 1 ms |",
        f"| same, cold through the refs layer (tables.list + open + seek) | "
        f"{stack_us:.0f} µs | | |",
        f"| same, warm (reader open) | {lk['warm_us']:.0f} µs | | |",
    ]
    if dw is not None:
        lines.append(
            f"| iterate all refs | {lk['all_refs_ms']:.1f} ms | "
            f"{dw['all_refs_ms']:.1f} ms | dulwich returns {dw['refs']} of "
            f"{lk['refs']} refs (found lookup ref: {dw['found']}); it has no "
            f"reflog reader |"
        )
    else:
        lines.append(f"| iterate all refs | {lk['all_refs_ms']:.1f} ms | n/a | |")
    lines += ["", f"git: {git_can_read(table)}.", ""]
    lines += bench_commands(table, args.work, args.repeat)
    text = "\n".join(lines)
    print(text)
    if args.output:
        Path(args.output).write_text(text)


if __name__ == "__main__":
    main()
