"""``gitodb calibrate``: measure the installed backends here, so ``auto`` ranks them here.

The built-in ``selection.AUTO_RANKING`` was measured on one development VM.  A
calibration times every installed backend on every operation at the sizes that
matter in Git storage (small objects, 4 KiB blocks, 1 MiB blobs), within a time
budget (10 s by default), and stores the figures with a description of the
machine in the user's cache directory (``$XDG_CACHE_HOME/gitodb/calibration.json``,
default ``~/.cache``).  When that file exists and was made for the installed set of
backends, ``auto`` uses its ranking; ``version --build-options`` says which
ranking is in force and shows the figures.

Each operation's score for a backend is the sum over sizes of its best time divided
by the fastest backend's best time at that size (1.0 per size is the best possible),
so one very large size cannot hide a slow small one.
"""

from __future__ import annotations

import os

from . import backends, selection

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

CACHE_ENV = "XDG_CACHE_HOME"
FILE_NAME = "calibration.json"
FORMAT_VERSION = 1
DEFAULT_BUDGET = 10.0

_SIZES = {"small": 300, "4 KiB": 4096, "1 MiB": 1 << 20}


def cache_path() -> Path:
    """Where the calibration is stored."""
    from pathlib import Path

    return Path(_cache_file())


def _cache_file() -> str:
    # (one formula for this module and the package's check for a record)
    from gitodb.compress import calibration_file

    return calibration_file()


def _text(n: int, seed: int) -> bytes:
    import random

    rng = random.Random(seed)
    words = [
        bytes(rng.choices(b"abcdefghijklmnopqrstuvwxyz_()", k=rng.randint(1, 9)))
        for _ in range(300)
    ]
    out = bytearray()
    while len(out) < n:
        out += rng.choice(words) + rng.choice([b" ", b"\n", b"    "])
    return bytes(out[:n])


def _best(fn: Callable[[], object], seconds: float) -> float:
    """Best time of ``fn`` over repeated calls for about ``seconds`` (at least 3 calls)."""
    import time

    fn()  # warm up
    best = float("inf")
    end = time.perf_counter() + seconds
    calls = 0
    while calls < 3 or time.perf_counter() < end:
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
        calls += 1
    return best


def _workloads(b: Any, op: str, data: bytes, z: bytes) -> Callable[[], object] | None:
    """A callable doing ``op`` once on ``data`` (``z``: its zlib stream), or None."""
    n = len(data)
    if selection.can_do(b, op) is not None:
        return None
    if op == "inflate":
        return lambda: b.inflate(z, n)
    if op == "inflate-prefix":
        return lambda: b.inflate_prefix(z, n)
    if op == "inflate-reuse":
        ctx = b.new_prefix_context()
        return lambda: ctx.inflate_prefix(z, n)
    if op == "inflate-stream":
        step = 1 << 16

        def stream() -> None:
            d = b.decompressobj()
            for i in range(0, len(z), step):
                d.decompress(z[i : i + step])

        return stream
    if op == "inflate-head":
        return lambda: b.decompressobj().decompress(z, 20)
    if op == "deflate":
        if 1 not in b.deflate_levels:
            return None
        return lambda: b.deflate(data, 1)
    if op == "deflate-stream":
        if 1 not in b.deflate_levels:
            return None

        def deflate_stream() -> None:
            c = b.compressobj(1)
            for i in range(0, n, 1 << 16):
                c.compress(data[i : i + (1 << 16)])
            c.flush()

        return deflate_stream
    if op == "crc32":
        return lambda: b.crc32(data)
    return None


def measure(budget: float = DEFAULT_BUDGET) -> dict[str, Any]:
    """Time every installed backend on every operation; return the calibration record."""
    # Imported here, not at the top: every command that inflates loads this module
    # to read a stored record, and none of these is needed for that.
    import platform
    import time
    import zlib

    from .info import cpu_model  # info reads the routing: not needed to load a record

    names = selection.installed()
    loaded = {n: backends.load(n) for n in names}
    inputs = {label: _text(size, i) for i, (label, size) in enumerate(_SIZES.items())}
    streams = {label: zlib.compress(d, 6) for label, d in inputs.items()}
    slots = len(selection.OPERATIONS) * len(_SIZES) * max(1, len(names))
    per = max(0.005, budget / slots * 0.8)  # warm-ups and set-up take the rest
    figures: dict[str, dict[str, dict[str, float]]] = {}
    for op in selection.OPERATIONS:
        figures[op] = {}
        for label in _SIZES:
            row: dict[str, float] = {}
            for name, b in loaded.items():
                fn = _workloads(b, op, inputs[label], streams[label])
                if fn is not None:
                    row[name] = _best(fn, per)
            figures[op][label] = row
    ranking: dict[str, list[str]] = {}
    for op, by_size in figures.items():
        score: dict[str, float] = {}
        for row in by_size.values():
            if not row:
                continue
            fastest = min(row.values())
            for name, t in row.items():
                score[name] = score.get(name, 0.0) + t / fastest
        ranking[op] = sorted(score, key=score.__getitem__)
    return {
        "format": FORMAT_VERSION,
        "machine": f"{platform.node()}: {platform.machine()} ({cpu_model()}), "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}",
        "measured": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "backends": {n: b.library_version for n, b in loaded.items() if b is not None},
        "figures": figures,
        "ranking": ranking,
    }


def save(record: dict[str, Any], path: Path | None = None) -> Path:
    """Write ``record`` atomically to ``path`` (default: ``cache_path()``)."""
    import json

    path = path or cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)
    return path


def load(path: Path | None = None) -> dict[str, Any] | None:
    """The stored calibration if it is usable with the installed backends, else None.

    Unusable: missing, unreadable, another format, or made for other backends or
    library versions (the figures would describe other code).
    """
    try:
        with open(path or _cache_file()) as f:
            text = f.read()
    except (OSError, ValueError):
        return None
    import json  # only when there is a record: most machines have none

    try:
        record = json.loads(text)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("format") != FORMAT_VERSION:
        return None
    current = {
        n: b.library_version for n in selection.installed() if (b := backends.load(n)) is not None
    }
    if record.get("backends") != current:
        return None
    ranking = record.get("ranking")
    if not isinstance(ranking, dict) or any(
        not isinstance(ranking.get(op), list) for op in selection.OPERATIONS
    ):
        return None
    return record


def summary(record: dict[str, Any], op: str) -> str:
    """One line of figures for ``op``: each size, backends fastest first, in µs."""
    parts = []
    for label, row in record["figures"].get(op, {}).items():
        if row:
            timed = ", ".join(
                f"{n} {t * 1e6:.1f}" for n, t in sorted(row.items(), key=lambda kv: kv[1])
            )
            parts.append(f"{label}: {timed}")
    return "; ".join(parts) + " (µs)"


__all__ = ["DEFAULT_BUDGET", "cache_path", "load", "measure", "save", "summary"]
