"""Time ``gitodb cat-file`` against ``git cat-file``, dulwich and pygit2 in one run.

On the benchmark repository (``make_bench_repo.py``; built first if missing) it times

* ``--batch-check --batch-all-objects`` and ``--batch --batch-all-objects``, each with
  and without ``--unordered``: ``git cat-file`` and ``gitodb cat-file`` once per zlib
  backend (``--zlib-backend=``);
* reading every object through each library's Python API in id order and writing
  ``--batch`` output: gitodb, dulwich and pygit2.

Every command's output is checked against git's (sha256 of the bytes; for the
unordered modes, of the sorted records, since Git's order is only "pack order").
Prints a Markdown table with times and ratios to git.

    python benchmarks/bench_cat_file.py --quick     # small repository, 1 repetition
    python benchmarks/bench_cat_file.py             # full repository, best of 3
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import make_bench_repo  # noqa: E402
from _measure import measure_best  # noqa: E402

ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
ENV.pop("GITODB_ZLIB_BACKEND", None)

MODES = [
    ("--batch-check", False),
    ("--batch-check", True),
    ("--batch", False),
    ("--batch", True),
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


def run_timed(
    cmd: list[str], repeat: int, timeout: float | None = None
) -> tuple[float, float, int]:
    """Best (wall seconds, CPU seconds, max RSS KiB) of ``repeat`` runs, output to /dev/null.

    CPU time is the child's user + system time: on a machine shared with other
    work it is the steadier number, and the ratios in the table use it.  Max RSS
    is the child's own (``_measure.run`` reaps it with ``os.wait4``).
    """
    return measure_best(cmd, repeat, env=ENV, timeout=timeout or 1800.0)


def output_digest(cmd: list[str], unordered: bool, contents: bool) -> str:
    """sha256 of the command's output (of its sorted records when ``unordered``)."""
    out = subprocess.run(cmd, stdout=subprocess.PIPE, check=True, env=ENV).stdout
    if not unordered:
        return hashlib.sha256(out).hexdigest()
    records = split_records(out) if contents else out.splitlines(keepends=True)
    records.sort()
    return hashlib.sha256(b"".join(records)).hexdigest()


def split_records(out: bytes) -> list[bytes]:
    """Split ``--batch`` output (header line, content, newline) into one bytes per object."""
    records = []
    pos = 0
    n = len(out)
    while pos < n:
        nl = out.index(b"\n", pos)
        parts = out[pos:nl].split(b" ")
        end = nl + 1
        if len(parts) == 3 and parts[1] != b"missing":
            end += int(parts[2]) + 1
        records.append(out[pos:end])
        pos = end
    return records


def fmt_ratio(t: float, ref: float) -> str:
    return f"{t / ref:.2f}x"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small repository, 1 repetition")
    ap.add_argument("--repo", type=Path, help="use this repository instead")
    ap.add_argument("--repeat", type=int, help="repetitions per measurement (best is kept)")
    ap.add_argument("--backends", help="comma-separated zlib backends (default: all installed)")
    ap.add_argument("--no-peers", action="store_true", help="skip the Python API rows")
    ap.add_argument(
        "--modes",
        help="comma-separated subset of: batch-check, "
        "batch-check-unordered, batch, batch-unordered (default: all)",
    )
    ap.add_argument("--no-verify", action="store_true", help="skip output comparison")
    ap.add_argument(
        "--peer-timeout",
        type=float,
        default=900.0,
        help="give up on a Python API reader after this many seconds",
    )
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
    from gitodb import compress

    backends = args.backends.split(",") if args.backends else compress.available_backends()
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
    git_version = subprocess.run(
        ["git", "--version"], capture_output=True, text=True
    ).stdout.strip()
    print(
        f"{git_version}; python {sys.version.split()[0]}; repeat {repeat}; "
        f"backends: {', '.join(backends)}\n"
    )

    rows: list[tuple[str, str, float, float, int, str, str]] = []
    wanted = set(args.modes.split(",")) if args.modes else None
    for mode, unordered in MODES:
        if wanted is not None and mode[2:] + ("-unordered" if unordered else "") not in wanted:
            continue
        contents = mode == "--batch"
        label = f"{mode}{' --unordered' if unordered else ''}"
        extra = ["--unordered"] if unordered else []
        git_cmd = ["git", "-C", str(repo), "cat-file", mode, "--batch-all-objects", *extra]
        w_git, t_git, m_git = run_timed(git_cmd, repeat)
        ref = None if args.no_verify else output_digest(git_cmd, unordered, contents)
        rows.append((label, "git cat-file", w_git, t_git, m_git, "1.00x", "reference"))
        for b in backends:
            cmd = [
                sys.executable,
                "-m",
                "gitodb",
                f"--zlib-backend={b}",
                "-C",
                str(repo),
                "cat-file",
                mode,
                "--batch-all-objects",
                *extra,
            ]
            w, t, m = run_timed(cmd, repeat)
            same = (
                "-"
                if ref is None
                else ("yes" if output_digest(cmd, unordered, contents) == ref else "**NO**")
            )
            rows.append((label, f"gitodb ({b})", w, t, m, fmt_ratio(t, t_git), same))
        print(f"  {label}: done", file=sys.stderr)

    if not args.no_peers:
        git_cmd = ["git", "-C", str(repo), "cat-file", "--batch", "--batch-all-objects"]
        w_git, t_git, m_git = run_timed(git_cmd, repeat)
        ref = None if args.no_verify else output_digest(git_cmd, True, True)
        rows.append(
            (
                "read every object (API)",
                "git cat-file --batch",
                w_git,
                t_git,
                m_git,
                "1.00x",
                "reference",
            )
        )
        for name, script in PEER_SCRIPTS.items():
            cmd = [sys.executable, "-c", script, str(repo)]
            try:
                w, t, m = run_timed(cmd, repeat, timeout=args.peer_timeout)
            except subprocess.CalledProcessError:
                rows.append(
                    ("read every object (API)", name, float("nan"), float("nan"), 0, "-", "failed")
                )
                continue
            except subprocess.TimeoutExpired:
                rows.append(
                    (
                        "read every object (API)",
                        name,
                        float("nan"),
                        float("nan"),
                        0,
                        f"> {args.peer_timeout:.0f} s",
                        "timed out",
                    )
                )
                continue
            same = (
                "-"
                if ref is None
                else ("yes" if output_digest(cmd, True, True) == ref else "**NO**")
            )
            rows.append(("read every object (API)", name, w, t, m, fmt_ratio(t, t_git), same))

    print(
        "| mode | tool | wall s | CPU s | max RSS MiB | CPU / git | RSS / git | output identical |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---|")
    git_rss = {label: m for label, tool, _w, _t, m, _r, _s in rows if tool.startswith("git ")}
    for label, tool, w, t, m, ratio, same in rows:
        rss_ratio = f"{m / git_rss[label]:.2f}x" if git_rss.get(label) and m else "-"
        print(
            f"| {label} | {tool} | {w:.2f} | {t:.2f} | {m / 1024:.0f} | {ratio} | "
            f"{rss_ratio} | {same} |"
        )
    by = {(label, tool): t for label, tool, _w, t, _m, _r, _s in rows}
    print()
    for mode, unordered in MODES:
        label = f"{mode}{' --unordered' if unordered else ''}"
        z, ng = by.get((label, "gitodb (zlib)")), by.get((label, "gitodb (zlib-ng)"))
        if z and ng:
            print(
                f"- {label}: gitodb zlib-ng needs {ng / z:.2f}x the CPU time of gitodb zlib "
                f"({z / ng:.2f}x as fast)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
