"""Benchmark the compression layer's backends on this machine.

    python benchmarks/bench_compress.py [--quick] [--plot PATH]

Measures, per backend (zlib, zlib-ng, isal, libdeflate), through gitodb's own
wrappers (what the rest of gitodb really calls):

* CRC-32 throughput at 64 B, 1 KiB, 16 KiB and 1 MiB (GB/s);
* one-shot inflate of 1 MiB of text (MB/s) and of 10,000 small streams
  (objects/s, sizes like Git objects);
* deflate at levels 1 and 6 (MB/s and ratio);
* per-stream cost of a new inflater vs one inflater reused with
  ``inflate_prefix`` (reftable log blocks of ~4 KiB), with the peak memory
  tracemalloc sees per stream;
* the streaming inflater's ``reset()``: a new binding stream per stream vs one
  ctypes-driven stream reused (``inflateReset``), in the pack scanner's
  pattern, for 100 B, 1 KiB, 16 KiB and 1 MiB outputs, with tracemalloc peaks.

Prints one Markdown table (with ratios to the standard library) and the CPU
model, and saves a PNG plot of CRC-32 throughput against size per backend.
Times are CPU time of this process (``time.process_time``), best of several
repeats; the machine should still be quiet.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import sysconfig
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from gitodb import compress
from gitodb.compress import backends, info

BACKEND_ORDER = list(backends.BACKENDS)
CRC_SIZES = [64, 1024, 16 * 1024, 1024 * 1024]
PLOT_SIZES = [64, 256, 1024, 4096, 16384, 65536, 262144, 1048576]
MiB = 1 << 20


# CPU time of this process, not wall time: on a shared machine, time spent
# waiting for a core is not the code's cost.  Best of several runs.
clock = time.process_time


def best_time(fn: Callable[[], object], min_time: float, repeat: int) -> tuple[float, int]:
    """Best seconds per call of ``fn`` over ``repeat`` runs of at least ``min_time``."""
    number = 1
    while True:  # calibrate the batch size
        t0 = clock()
        for _ in range(number):
            fn()
        dt = clock() - t0
        if dt >= min_time / 4:
            break
        number *= 4
    number = max(1, int(number * min_time / max(dt, 1e-9)))
    best = float("inf")
    for _ in range(repeat):
        t0 = clock()
        for _ in range(number):
            fn()
        best = min(best, (clock() - t0) / number)
    return best, number


def sample_text(n: int) -> bytes:
    """``n`` bytes of real text: the Python standard library's own sources."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    parts, total = [], 0
    for path in sorted(stdlib.glob("*.py")):
        data = path.read_bytes()
        parts.append(data)
        total += len(data)
        if total >= n:
            break
    return b"".join(parts)[:n]


def small_objects(text: bytes, count: int) -> list[bytes]:
    """``count`` text snippets of 60-3000 bytes, like blobs, trees and commits."""
    rng = random.Random(42)
    out = []
    for _ in range(count):
        size = int(rng.lognormvariate(6.3, 0.9)) % 3000 + 60
        start = rng.randrange(0, len(text) - size)
        out.append(text[start : start + size])
    return out


def fmt(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:,.{digits}f}"


#: (output size, entries in the pack-like buffer) for the streaming reset rows
STREAM_SIZES = [(100, 200), (1024, 100), (16 * 1024, 32), (MiB, 4)]


def size_label(size: int) -> str:
    return "1 MiB" if size == MiB else f"{size // 1024} KiB" if size >= 1024 else f"{size} B"


def streaming_reset_rows(
    names: list[str], text: bytes, min_time: float, repeat: int
) -> list[tuple[str, dict[str, str]]]:
    """Streaming ``Inflater``: one binding stream per entry, the pack scanner's pattern.

    A buffer of back-to-back zlib streams (entries of one size, text at level 6);
    per entry ``inf.reset()``, then ``inf.decompress(view_of_the_rest, size + 1)``
    and ``pos += inf.consumed``.  The copy of the rest into ``unused_data`` (as
    the bindings do) is included.
    """
    import zlib

    rows: list[tuple[str, dict[str, str]]] = []
    rng = random.Random(7)
    try:
        for size, count in STREAM_SIZES:
            entries = []
            for _ in range(count):
                start = rng.randrange(0, len(text))
                entries.append(zlib.compress((text[start:] + text[:start])[:size], 6))
            view = memoryview(b"".join(entries))
            row, mem = {}, {}
            for n in names:
                b = backends.load(n)
                assert b is not None
                if b.decompressobj is None:
                    row[n] = mem[n] = "n/a"
                    continue
                compress.set_backend(n)
                inf = compress.new_inflater()

                def scan(inf=inf, view=view, size=size, count=count) -> None:
                    pos = 0
                    for _ in range(count):
                        inf.reset()
                        inf.decompress(view[pos:], size + 1)
                        pos += inf.consumed
                    assert pos == len(view) and inf.eof

                scan()
                t, _ = best_time(scan, min_time, repeat)
                row[n] = fmt(t / count * 1e6, 1)
                last = view[len(view) - len(entries[-1]) :]
                tracemalloc.start()
                tracemalloc.reset_peak()
                base = tracemalloc.get_traced_memory()[0]
                inf.reset()
                out = inf.decompress(last, size + 1)
                mem[n] = fmt((tracemalloc.get_traced_memory()[1] - base) / 1024, 1)
                tracemalloc.stop()
                assert len(out) == size and inf.eof
                del out, last
            label = size_label(size)
            rows.append((f"streaming {label}, a stream per entry (µs/stream)", row))
            rows.append((f"  peak traced KiB per {label} stream", mem))
    finally:
        compress.set_backend(None)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short runs (noisier)")
    parser.add_argument(
        "--plot",
        default=str(Path(__file__).parent / "results" / "crc32.png"),
        help="where to save the CRC-32 plot (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    min_time, repeat = (0.02, 2) if args.quick else (0.2, 5)
    n_small = 2000 if args.quick else 10000

    names = [n for n in BACKEND_ORDER if backends.load(n) is not None]
    loaded = {n: backends.load(n) for n in names}
    rows: list[tuple[str, dict[str, str]]] = []

    # -- CRC-32 ---------------------------------------------------------------
    crc_gbps: dict[str, dict[int, float]] = {n: {} for n in names}
    rng = random.Random(1)
    buf = rng.randbytes(MiB)
    for size in sorted(set(CRC_SIZES) | set(PLOT_SIZES)):
        data = buf[:size]
        for n in names:
            crc = loaded[n].crc32  # type: ignore[union-attr]
            t, _ = best_time(lambda crc=crc, data=data: crc(data), min_time, repeat)
            crc_gbps[n][size] = size / t / 1e9
    for size in CRC_SIZES:
        label = (
            f"{size // 1024} KiB"
            if size >= 1024 and size < MiB
            else ("1 MiB" if size == MiB else f"{size} B")
        )
        rows.append((f"crc32 {label} (GB/s)", {n: fmt(crc_gbps[n][size]) for n in names}))

    # -- inflate -------------------------------------------------------------
    import zlib  # the reference compressor for the inputs (same bytes for everyone)

    text = sample_text(MiB)
    ztext = zlib.compress(text, 6)
    row = {}
    for n in names:
        inflate = loaded[n].inflate  # type: ignore[union-attr]
        assert inflate(ztext, len(text)) == text
        t, _ = best_time(lambda inflate=inflate: inflate(ztext, len(text)), min_time, repeat)
        row[n] = fmt(len(text) / t / 1e6, 0)
    rows.append(("inflate 1 MiB text (MB/s)", row))

    objs = small_objects(text, n_small)
    zobjs = [(zlib.compress(o, 6), len(o)) for o in objs]
    row = {}
    for n in names:
        inflate = loaded[n].inflate  # type: ignore[union-attr]

        def run(inflate=inflate) -> None:
            for z, size in zobjs:
                inflate(z, size)

        t, _ = best_time(run, min_time * 5, repeat)
        row[n] = fmt(len(zobjs) / t, 0)
    rows.append((f"inflate {len(zobjs):,} small streams (objects/s)", row))

    # -- deflate -------------------------------------------------------------
    for level in (1, 6):
        speed, ratio = {}, {}
        for n in names:
            b = loaded[n]
            if b.deflate is None or level not in b.deflate_levels:  # type: ignore[union-attr]
                speed[n] = ratio[n] = "n/a"
                continue
            deflate = b.deflate  # type: ignore[union-attr]
            out = deflate(text, level)
            assert zlib.decompress(out) == text
            t, _ = best_time(
                lambda deflate=deflate, level=level: deflate(text, level), min_time, repeat
            )
            speed[n] = fmt(len(text) / t / 1e6, 0)
            ratio[n] = fmt(len(text) / len(out), 2)
        rows.append((f"deflate level {level} (MB/s)", speed))
        rows.append((f"deflate level {level} ratio", ratio))

    # -- reset-and-reuse vs new inflater per stream --------------------------
    blocks = []
    for i in range(64):
        raw = text[i * 4096 : (i + 1) * 4096]
        blocks.append((zlib.compress(raw, 9), len(raw)))
    new_row, reuse_row, new_mem, reuse_mem = {}, {}, {}, {}
    for n in names:
        b = loaded[n]
        if b.new_prefix_context is None:  # type: ignore[union-attr]
            new_row[n] = reuse_row[n] = new_mem[n] = reuse_mem[n] = "n/a"
            continue
        new_ctx = b.new_prefix_context  # type: ignore[union-attr]
        if b.decompressobj is not None:  # type: ignore[union-attr]
            dobj = b.decompressobj  # type: ignore[union-attr]

            def one_fresh(z: bytes, size: int, dobj=dobj) -> None:
                dobj().decompress(z, size + 1)
        else:
            # libdeflate's binding: a new decompressor per call (C malloc, untraced)
            one_fresh = b.inflate  # type: ignore[union-attr,assignment]

        def fresh(one_fresh=one_fresh) -> None:
            # what a reader without reuse does: a new stream for every block
            for z, size in blocks:
                one_fresh(z, size)

        ctx = new_ctx()

        def reused(ctx=ctx) -> None:
            for z, size in blocks:
                ctx.inflate_prefix(z, size)

        t_new, _ = best_time(fresh, min_time, repeat)
        t_reuse, _ = best_time(reused, min_time, repeat)
        new_row[n] = fmt(t_new / len(blocks) * 1e6, 1)
        reuse_row[n] = fmt(t_reuse / len(blocks) * 1e6, 1) + (
            "" if ctx.reuses_state else " (no reuse)"
        )
        for label, fn, dest in (("new", fresh, new_mem), ("reuse", reused, reuse_mem)):
            fn()  # warm up: first-call buffers are not per-stream costs
            tracemalloc.start()
            tracemalloc.reset_peak()
            base = tracemalloc.get_traced_memory()[0]
            z, size = blocks[0]
            if label == "new":
                one_fresh(z, size)
            else:
                ctx.inflate_prefix(z, size)
            dest[n] = fmt((tracemalloc.get_traced_memory()[1] - base) / 1024, 1)
            tracemalloc.stop()
    rows.append(("4 KiB block, new stream each (µs/stream)", new_row))
    rows.append(("4 KiB block, reused inflater (µs/stream)", reuse_row))
    rows.append(("  peak traced KiB per stream, new", new_mem))
    rows.append(("  peak traced KiB per stream, reused", reuse_mem))
    rows += streaming_reset_rows(names, text, min_time, repeat)

    # -- output --------------------------------------------------------------
    print(
        f"CPU: {info.cpu_model()} ({os.cpu_count()} cores); features: "
        + " ".join(k for k, v in (info.cpu_features() or {}).items() if v)
    )
    print(
        f"Python {platform.python_version()}; timer: CPU time, best of {repeat}; "
        + "; ".join(f"{n} {loaded[n].library_version}" for n in names)  # type: ignore
        + f"; mode: {'quick' if args.quick else 'full'}"
    )
    print(
        "auto picks: "
        + ", ".join(
            f"{op} → {compress.routing().routes[op].backend.name}"
            for op in compress.selection.OPERATIONS
        )
    )
    print()
    print("| measurement | " + " | ".join(names) + " | best vs zlib |")
    print("|---|" + "---:|" * (len(names) + 1))
    for label, values in rows:
        ratio = ""
        try:
            nums = {
                n: float(values[n].split()[0].replace(",", "")) for n in names if values[n] != "n/a"
            }
            lower_is_better = "µs" in label or "peak traced" in label
            best = min(nums.values()) if lower_is_better else max(nums.values())
            base = nums.get("zlib")
            if base and best and "ratio" not in label:
                ratio = f"{(base / best if lower_is_better else best / base):.1f}x"
        except (ValueError, KeyError):
            pass
        print(f"| {label} | " + " | ".join(values[n] for n in names) + f" | {ratio} |")

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\n(matplotlib not installed: no plot; pip install 'gitodb[bench]')", file=sys.stderr)
        return 0
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for n in names:
        ax.plot(PLOT_SIZES, [crc_gbps[n][s] for s in PLOT_SIZES], marker="o", label=n)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("buffer size (bytes)")
    ax.set_ylabel("CRC-32 throughput (GB/s)")
    ax.set_title(f"gitodb.compress crc32 per backend — {info.cpu_model()}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.plot, dpi=100)
    print(f"\nplot: {args.plot}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
