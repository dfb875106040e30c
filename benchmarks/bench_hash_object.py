"""Benchmark ``gitodb hash-object`` against ``sha1sum`` and ``git hash-object`` in one run.

Reproduces Git's upstream experiment: one 64 MiB random file, ``core.bigFileThreshold``
32M (the file is streamed) and 64M (it is not), with and without ``-w``, given as
``<file>``, ``--stdin`` and ``--stdin-paths``, and as ``--literally -t commit``.
Every case is timed as a whole process (Python start-up included) for ``sha1sum``,
``git hash-object`` and ``gitodb hash-object``; with ``-w`` gitodb runs once per
installed zlib backend.  Each ``-w`` run gets a fresh repository, so it really writes.

    python benchmarks/bench_hash_object.py            # best of 5, writes the results file
    python benchmarks/bench_hash_object.py --quick    # best of 1, 32 MiB file

Prints a Markdown table and writes it to ``benchmarks/results/hash_object.md``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "hash_object.md"
MiB = 1 << 20


def env() -> dict[str, str]:
    # Byte-compiled modules are part of a normal installation's start-up: allow them.
    e = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GIT_", "GITODB_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    e.update(GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
    return e


def timed(
    cmd: list[str],
    cwd: Path,
    stdin_path: Path | None,
    stdin_text: bytes | None,
    prepare: object = None,
    repeat: int = 3,
) -> float:
    """Best wall-clock time of ``cmd`` over ``repeat`` runs (``prepare()`` before each)."""
    best = float("inf")
    for _ in range(repeat):
        if callable(prepare):
            prepare()
        stdin = open(stdin_path, "rb") if stdin_path else None  # noqa: SIM115
        try:
            t0 = time.perf_counter()
            if stdin is not None:
                proc = subprocess.run(cmd, cwd=cwd, stdin=stdin, capture_output=True, env=env())
            else:
                proc = subprocess.run(
                    cmd, cwd=cwd, input=stdin_text or b"", capture_output=True, env=env()
                )
            elapsed = time.perf_counter() - t0
        finally:
            if stdin is not None:
                stdin.close()
        if proc.returncode != 0:
            raise SystemExit(f"{cmd} failed: {proc.stderr.decode(errors='replace')}")
        best = min(best, elapsed)
    return best


def fresh_repo(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    subprocess.run(["git", "init", "-q", path], check=True, env=env())


def backends() -> list[str]:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from gitodb import compress; print(' '.join(compress.available_backends()))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one run each, 32 MiB file")
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--no-write-results", action="store_true")
    args = ap.parse_args()
    repeat = args.repeat or (1 if args.quick else 5)
    size = (32 if args.quick else 64) * MiB
    thresholds = ["16m", "32m"] if args.quick else ["32m", "64m"]

    tmp = Path(tempfile.mkdtemp(prefix="bench-hash-object-"))
    try:
        data_file = tmp / "random.bin"
        with open(data_file, "wb") as f:
            f.write(os.urandom(size))
        paths_file = tmp / "paths.txt"
        paths_file.write_bytes(f"{data_file}\n".encode())
        repo = tmp / "repo"
        fresh_repo(repo)
        script = Path(sys.executable).with_name("gitodb")
        gitodb = [str(script)] if script.exists() else [sys.executable, "-m", "gitodb"]
        subprocess.run(
            [*gitodb, "hash-object", str(paths_file)], env=env(), check=True, capture_output=True
        )  # warm-up: writes the __pycache__ files

        rows: list[str] = []
        py_start = timed([sys.executable, "-c", "pass"], tmp, None, b"", repeat=repeat)
        empty = tmp / "empty"
        empty.write_bytes(b"")
        start_git = timed(["git", "hash-object", str(empty)], repo, None, b"", repeat=repeat)
        start_ours = timed([*gitodb, "hash-object", str(empty)], repo, None, b"", repeat=repeat)

        modes = {
            "`<file>`": (["hash-object", str(data_file)], None),
            "`--stdin`": (["hash-object", "--stdin"], data_file),
            "`--stdin-paths`": (["hash-object", "--stdin-paths"], paths_file),
            "`--literally -t commit`": (
                ["hash-object", "--literally", "-t", "commit", str(data_file)],
                None,
            ),
        }
        all_backends = backends()
        for threshold in thresholds:
            for write in (False, True):
                for label, (argv, stdin_path) in modes.items():
                    argv = [argv[0], *(["-w"] if write else []), *argv[1:]]
                    conf = ["-c", f"core.bigFileThreshold={threshold}"]
                    prep = (lambda: fresh_repo(repo)) if write else None
                    t_git = timed(["git", *conf, *argv], repo, stdin_path, None, prep, repeat)
                    sha1 = timed(["sha1sum", str(data_file)], tmp, None, b"", repeat=repeat)
                    for backend in all_backends if write else [None]:
                        zlib = [f"--zlib-backend={backend}"] if backend else []
                        cmd = [*gitodb, *conf, *zlib, *argv]
                        t_ours = timed(cmd, repo, stdin_path, None, prep, repeat)
                        rows.append(
                            f"| {threshold} | {'-w' if write else ''} | {label} | "
                            f"{backend or '(none)'} | {sha1 * 1000:.0f} | "
                            f"{t_git * 1000:.0f} | {t_ours * 1000:.0f} | "
                            f"{t_ours / sha1:.2f} | {t_ours / t_git:.2f} |"
                        )
                        print(rows[-1], flush=True)

        table = [
            f"File: {size // MiB} MiB of random bytes; best of {repeat} run(s), wall clock in ms,"
            " whole process (start-up included).",
            "",
            "| bigFileThreshold | write | input | gitodb zlib backend | sha1sum | git | gitodb "
            "| gitodb/sha1sum | gitodb/git |",
            "|---|---|---|---|---:|---:|---:|---:|---:|",
            *rows,
            "",
            f"Start-up: `python -c pass` {py_start * 1000:.0f} ms, `gitodb hash-object <empty>` "
            f"{start_ours * 1000:.0f} ms, `git hash-object <empty>` {start_git * 1000:.0f} ms.",
            "",
        ]
        text = "\n".join(table)
        print()
        print(text)
        if not args.no_write_results:
            RESULTS.parent.mkdir(parents=True, exist_ok=True)
            header = RESULTS.read_text() if RESULTS.exists() else ""
            marker = "<!-- bench_hash_object.py results -->"
            keep = header.split(marker)[0] if marker in header else header
            RESULTS.write_text(
                keep.rstrip() + f"\n\n{marker}\n\n" + text
                if keep.strip()
                else f"{marker}\n\n" + text
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
