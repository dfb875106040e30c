"""Which backend runs which operation: the measured ``auto`` order and routing.

``auto`` walks each operation's ranking below and takes the first installed
backend that can do it.  A named backend does every operation it can; the
others go to the first backend in the ranking that can ("next best").  The
rankings come from ``benchmarks/bench_compress.py`` on the project machine
(AMD EPYC, 2 cores, sse4_2 pclmulqdq avx2 vpclmulqdq, no avx512f; Python 3.11;
zlib 1.2.13, zlib-ng 2.3.3, ISA-L 2.32.1, libdeflate from deflate 0.9.0);
each reason quotes the numbers that decided it.
"""

from __future__ import annotations

from gitodb.errors import BackendUnavailableError
from gitodb.types import NamedTuple

from . import backends
from .backends.base import GIT_LEVELS, Backend

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: The operations a backend is chosen for, in ``version --build-options`` order.
OPERATIONS = (
    "inflate",
    "inflate-prefix",
    "inflate-reuse",
    "inflate-stream",
    "inflate-head",
    "deflate",
    "deflate-stream",
    "crc32",
)

OPERATION_TITLES = {
    "inflate": "one-shot inflate",
    "inflate-prefix": "one-shot inflate reporting input consumed",
    "inflate-reuse": "reusable inflater (Inflater.inflate_prefix)",
    "inflate-stream": "streaming inflate",
    "inflate-head": "first bytes of a stream (delta headers)",
    "deflate": "one-shot deflate",
    "deflate-stream": "streaming deflate",
    "crc32": "crc32 and crc32_combine",
}

# Rankings for ``auto``, fastest first, with the measurement that decided them.
# Numbers: best CPU time (time.process_time) of 7 interleaved rounds on the
# project machine (2 shared cores, so absolute speeds are low; the order held
# in every round).  "small objects": 3,000 snippets of Python source, 60-3000
# bytes, like Git blobs/trees/commits; inputs compressed by the stdlib at level 6.
AUTO_RANKING: dict[str, tuple[list[str], str]] = {
    "inflate": (
        ["libdeflate", "isal", "zlib-ng", "zlib"],
        "ties isal on small objects (5.1 vs 5.2 us, the order flips between runs; "
        "zlib-ng 6.8, zlib 6.9) and leads at 4 KiB (8.2 us, isal 10.0, zlib-ng 12.4) "
        "and 1 MiB text (1.1-1.2 ms, isal 1.35-1.55, zlib-ng 1.6, zlib 4.6)",
    ),
    "inflate-prefix": (
        ["isal", "zlib-ng", "zlib"],
        "small objects with consumed count: isal 5.6 us, zlib-ng 6.2, zlib 7.0 "
        "(libdeflate's binding cannot report consumed input)",
    ),
    "inflate-reuse": (
        ["zlib-ng", "zlib", "isal"],
        "4 KiB reftable-like blocks, a new binding stream per block: zlib-ng sets up "
        "41 KiB, zlib 7 KiB plus its window, isal ~89 KiB (fastest per block, 12.8 us, "
        "but the most set-up); libdeflate's binding cannot report consumed input",
    ),
    "inflate-stream": (
        ["isal", "zlib-ng", "zlib"],
        "1 MiB text in 64 KiB chunks: isal 1.29 ms, zlib-ng 1.47, zlib 3.45; one "
        "stream per small object: isal 4.9 us, zlib-ng 5.2, zlib 6.6; libdeflate "
        "cannot stream",
    ),
    "inflate-head": (
        ["zlib-ng", "zlib", "isal"],
        "a new stream's first 20 output bytes (a delta's header; cat-file "
        "--batch-check reads one per delta): zlib 1.31 us, zlib-ng 1.34, isal 7.16 "
        "(ISA-L sets up ~90 KiB of state per stream); libdeflate cannot stream",
    ),
    "deflate": (
        ["isal", "libdeflate", "zlib-ng", "zlib"],
        "level 1 (Git's loose-object default): isal 2.5 ms/MiB at ratio 3.55 (zlib-ng "
        "4.4 ms at 2.82, libdeflate 5.1 ms, zlib 10.2 ms), 16 KiB 39 us (zlib-ng 54); "
        "isal has only levels 1-3, the others on libdeflate: level 6 13.9 ms/MiB "
        "(zlib-ng 19.0, zlib 35.8), 16 KiB 162 us (zlib-ng 193)",
    ),
    "deflate-stream": (
        ["isal", "zlib-ng", "zlib"],
        "1 MiB in 64 KiB chunks, level 1: isal 2.7 ms, zlib-ng 4.4, zlib 10.1; "
        "level 6 (isal cannot): zlib-ng 20.3 ms, zlib 37.7; libdeflate cannot stream",
    ),
    "crc32": (
        ["isal", "zlib-ng", "libdeflate", "zlib"],
        "lowest per-call cost and fastest up to 1 KiB, where most pack entries are: "
        "64 B 67 ns (zlib-ng 92, libdeflate 156, zlib 212), 1 KiB 155 ns (zlib-ng 170, "
        "libdeflate 198, zlib 524); at 1 MiB libdeflate 22.7 GB/s beats zlib-ng 14.7 "
        "and isal 11.9 (zlib 3.0)",
    ),
}


def can_do(backend: Backend, op: str) -> str | None:
    """None if ``backend`` can do ``op``, else why not."""
    if op in ("inflate-stream", "inflate-head") and backend.decompressobj is None:
        return f"{backend.name} cannot stream"
    if op == "inflate-head" and backend.decodes_past_max_length:
        return backend.decodes_past_max_length
    if op == "deflate-stream" and backend.compressobj is None:
        return f"{backend.name} cannot stream"
    if op == "deflate" and backend.deflate is None:
        return f"{backend.name} cannot deflate"
    if op == "inflate-prefix" and backend.inflate_prefix is None:
        return f"{backend.name} cannot report the input a stream used"
    if op == "inflate-reuse" and backend.new_prefix_context is None:
        return f"{backend.name} cannot report the input a stream used"
    return None


class Route(NamedTuple):
    """The backend for one operation, and why."""

    backend: Backend
    reason: str
    #: for deflate on a backend with fewer levels: who does the other Git levels
    level_fallback: Backend | None = None


class Routing(NamedTuple):
    """The outcome of ``set_backend``: a route per operation."""

    selected: str
    routes: dict[str, Route]

    def backend(self, op: str) -> Backend:
        return self.routes[op].backend


def installed() -> list[str]:
    """Names of the installed backends, in ``BACKENDS`` order."""
    return [name for name in backends.BACKENDS if backends.load(name) is not None]


def _check_name(name: str) -> Backend | None:
    """The backend for a user-given name (None for ``auto``); raise if unusable."""
    if name == "auto":
        return None
    if name not in backends.BACKENDS:
        names = ", ".join(["auto", *installed()])
        raise BackendUnavailableError(f"unknown zlib backend '{name}' (installed: {names})")
    backend = backends.load(name)
    if backend is None:
        # only now every backend is loaded, to list them: a named one loads only itself
        names = ", ".join(["auto", *installed()])
        raise BackendUnavailableError(
            f"zlib backend '{name}' is not installed ({backends.install_hint(name)};"
            f" installed: {names})"
        )
    return backend


def _best(
    op: str,
    exclude: str | None = None,
    all_levels: bool = False,
    ranking: dict[str, list[str]] | None = None,
) -> Backend:
    """The first installed backend in ``op``'s ranking that can do it."""
    order = ranking[op] if ranking is not None else AUTO_RANKING[op][0]
    # A calibrated ranking lists only what it measured: the built-in order follows.
    for name in [*order, *AUTO_RANKING[op][0]]:
        if name == exclude:
            continue
        b = backends.load(name)
        if (
            b is not None
            and can_do(b, op) is None
            and (not all_levels or b.deflate_levels == GIT_LEVELS)
        ):
            return b
    raise AssertionError("the standard library backend does everything")  # pragma: no cover


def route(
    name: str,
    calibrated: dict[str, Any] | None = None,
    describe: Callable[[dict[str, Any], str], str] | None = None,
) -> Routing:
    """Compute the routing for backend ``name`` (a backend name or ``auto``).

    ``calibrated``: a record of ``gitodb calibrate`` whose ranking ``auto`` then
    follows (``describe(record, op)`` gives its figures for the reason).
    """
    check_name(name)
    return Routing(name, {op: route_op(name, op, calibrated, describe) for op in OPERATIONS})


def check_name(name: str) -> None:
    """Raise ``BackendUnavailableError`` unless ``name`` is ``auto`` or an installed backend.

    Loads only that backend (the others only to list them in the error).
    """
    _check_name(name)


def route_op(
    name: str,
    op: str,
    calibrated: dict[str, Any] | None = None,
    describe: Callable[[dict[str, Any], str], str] | None = None,
) -> Route:
    """The route of one operation under backend ``name`` (see ``route``).

    Loads only the backends this operation's choice needs, so a process that never
    deflates never imports the library that would.
    """
    chosen = _check_name(name)
    ranking = calibrated["ranking"] if calibrated is not None else None
    if chosen is None and calibrated is not None:
        b = _best(op, ranking=ranking)
        figures = describe(calibrated, op) if describe is not None else ""
        reason = f"auto, calibrated {calibrated['measured']} on {calibrated['machine']}: {figures}"
    elif chosen is None:
        b = _best(op)
        reason = f"auto: {AUTO_RANKING[op][1]}"
    elif (why := can_do(chosen, op)) is None:
        b, reason = chosen, "selected"
    else:
        b = _best(op, exclude=chosen.name)
        reason = f"{why}; next best"
    fallback = None
    if op.startswith("deflate") and b.deflate_levels != GIT_LEVELS:
        fallback = _best(op, exclude=b.name, all_levels=True)
        others = ", ".join(str(n) for n in sorted(GIT_LEVELS - b.deflate_levels))
        reason += (
            f"; Git levels {others} on {fallback.name} (ISA-L levels 0-3 only)"
            if b.name == "isal"
            else f"; Git levels {others} on {fallback.name}"
        )
    return Route(b, reason, fallback)
