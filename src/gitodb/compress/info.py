"""What ``gitodb version --build-options`` reports about compression.

Every backend (installed or not, with its library version and install hint),
which backend runs each operation and why, whether an inflater's reset really
reuses state, and the CPU features the fast paths depend on.
"""

from __future__ import annotations

import platform

from . import backends, routing, selection
from .backends.base import GIT_LEVELS

#: CPU flags that the backends' fast paths use (CRC-32 folding, SIMD inflate)
CPU_FEATURES = ("sse4_2", "pclmulqdq", "avx2", "avx512f", "vpclmulqdq")


def cpu_model(cpuinfo: str = "/proc/cpuinfo") -> str:
    """The CPU's model name from the OS, or the platform's processor string."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def cpu_features(cpuinfo: str = "/proc/cpuinfo") -> dict[str, bool] | None:
    """Which of ``CPU_FEATURES`` the OS reports, or None if it reports no flags."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    flags = set(line.split(":", 1)[1].split())
                    return {name: name in flags for name in CPU_FEATURES}
    except OSError:
        pass
    return None


#: what the native core does when it is loaded (the pure-Python code is the reference)
NATIVE_PARTS = (
    "SHA-1DC",
    "delta application",
    "entry headers",
    "header walk",
    "index lookups",
    "cat-file record formatting",
    "pending-base counts",
)


def native_core() -> str:
    """Whether ``gitodb._native`` is loaded, and what runs on it (else the fallback)."""
    try:
        from gitodb import _native
    except ImportError as e:
        return f"not loaded ({e}): everything runs on the pure-Python reference"
    missing = [
        n
        for n in (
            "sha1dc",
            "apply_delta",
            "parse_entry_header",
            "scan_headers",
            "find_oid",
            "check_lines",
            "ofs_base_counts",
        )
        if not hasattr(_native, n)
    ]
    if missing:
        return f"incomplete ({_native.__file__} lacks {', '.join(missing)}): rebuild it"
    return f"loaded ({', '.join(NATIVE_PARTS)}) from {_native.__file__}"


def native_heads() -> str:
    """Whether the native core reads delta heads itself (zlib found at build time)."""
    try:
        from gitodb import _native
    except ImportError:
        return "no (no native core): read on the chosen backend"
    version = getattr(_native, "ZLIB_VERSION", None)
    if version is None:
        return "no (built without zlib): read on the chosen backend"
    return (
        f"zlib {version} (whole-pack header scans; a head it rejects is read again "
        "on the chosen backend, which reports the damage)"
    )


def build_options() -> list[tuple[str, str]]:
    """``(key, value)`` lines describing the native core and the compression layer."""
    lines: list[tuple[str, str]] = [("native core", native_core())]
    lines.append(("native delta heads", native_heads()))
    feats = cpu_features()
    lines.append(("cpu", f"{platform.machine()} ({cpu_model()})"))
    if feats is None:
        lines.append(("cpu-features", "unknown (no /proc/cpuinfo flags)"))
    else:
        have = [n for n in CPU_FEATURES if feats[n]]
        missing = [n for n in CPU_FEATURES if not feats[n]]
        text = " ".join(have) or "none"
        if missing:
            text += f" (missing: {' '.join(missing)})"
        lines.append(("cpu-features", text))
    for name in backends.BACKENDS:
        b = backends.load(name)
        if b is None:
            lines.append((f"backend {name}", f"not installed ({backends.install_hint(name)})"))
            continue
        lines.append(
            (f"backend {name}", f"available, library {b.library_version}, binding {b.binding}")
        )
        lines.append((f"backend {name} inflate_prefix reuse", b.reuse_note))
        if b.deflate_levels != GIT_LEVELS:
            lines.append((f"backend {name} levels", b.deflate_levels_note))
        for note in b.notes:
            lines.append((f"backend {name} note", note))
    r = routing()
    lines.append(("zlib-backend", r.selected))
    from . import _calibration, calibrate

    record = _calibration()
    lines.append(
        (
            "auto ranking",
            "built-in (measured on the project's development VM, see selection.AUTO_RANKING)"
            if record is None
            else f"calibrated {record['measured']} on {record['machine']} "
            f"({calibrate.cache_path()})",
        )
    )
    for op in selection.OPERATIONS:
        route = r.routes[op]
        lines.append(
            (f"{selection.OPERATION_TITLES[op]}", f"{route.backend.name} ({route.reason})")
        )
    return lines
