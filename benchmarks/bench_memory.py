"""Issue 12's table: wall time, CPU time and max RSS of gitodb against Git, in one run.

For one repository (default: ``../shared/corpus/libgit2.git``; ``--repo`` for another,
e.g. the synthetic one from ``make_bench_repo.py``) it runs, ``--repeat`` times each
(the minimum is kept: the machine is shared):

* ``cat-file --batch-all-objects`` with ``--batch`` / ``--batch-check``, each with and
  without ``--unordered``;
* ``index-pack --threads=1`` and ``--threads=2`` on a copy of the repository's
  largest pack (``-o`` into a scratch directory; every tool uses SHA-1DC);
* ``for-each-ref``, ``cat-file -t``/``-p`` of a ref (point lookups in the big pack);
* reading every object through a Python API: gitodb, dulwich, pygit2;

with git 2.39 (``git`` on PATH, zlib), Git 2.55 (``../shared/git-2.55``, zlib-ng) and
gitodb on the ``zlib``, ``zlib-ng`` and ``auto`` backends.  Max RSS is each child's
own (``os.wait4``), not the maximum over all children.  Prints a Markdown table.

    python benchmarks/bench_memory.py --repeat 3
    python benchmarks/bench_memory.py --repo benchmarks/work/bench-repo-quick --repeat 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _measure import measure_best  # noqa: E402

ROOT = HERE.parent
SHARED = ROOT.parent / "shared"
GIT_255 = SHARED / "git-2.55" / "git" / "bin" / "git"
ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
ENV.pop("GITODB_ZLIB_BACKEND", None)
ENV.pop("PYTHONDONTWRITEBYTECODE", None)  # measure with compiled bytecode, as users run

PEERS = {
    "gitodb API": """
import sys
from gitodb.repo import Repository
n = 0
for oid, t, d in Repository(sys.argv[1]).odb.iter_objects():
    n += len(d)
print(n)
""",
    "dulwich": """
import sys
from dulwich.repo import Repo
store = Repo(sys.argv[1]).object_store
n = 0
for sha in store:
    n += len(store.get_raw(sha)[1])
print(n)
""",
    "pygit2": """
import sys
import pygit2
odb = pygit2.Repository(sys.argv[1]).odb
n = 0
for oid in odb:
    n += len(odb.read(oid)[1])
print(n)
""",
}


def best(cmd: list[str], repeat: int, **kw: object) -> tuple[float, float, int]:
    return measure_best(cmd, repeat, env=ENV, **kw)  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, default=SHARED / "corpus" / "libgit2.git")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--only", help="comma-separated row groups: cat-file, index-pack, point, api (default: all)"
    )
    args = ap.parse_args(argv)
    repo = str(args.repo)
    only = set(args.only.split(",")) if args.only else {"cat-file", "index-pack", "point", "api"}
    gitodb = [sys.executable, "-m", "gitodb"]
    tools: list[tuple[str, list[str]]] = [("git 2.39 (zlib)", ["git"])]
    if GIT_255.exists():
        tools.append(("git 2.55 (zlib-ng)", [str(GIT_255)]))
    for b in ("zlib", "zlib-ng", "auto"):
        tools.append((f"gitodb ({b})", [*gitodb, f"--zlib-backend={b}"]))
    count = subprocess.run(
        ["git", "-C", repo, "count-objects", "-v"],
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    stats = dict(line.split(": ") for line in count.splitlines())
    ref_lines = subprocess.run(
        ["git", "-C", repo, "for-each-ref", "--format=%(refname)"],
        env=ENV,
        capture_output=True,
        check=True,
    ).stdout.split()
    refs = len(ref_lines)
    a_ref = ref_lines[0].decode() if ref_lines else "HEAD"
    print(
        f"repository: {repo}: {stats['in-pack']} packed objects, {stats['size-pack']} KiB "
        f"of packs, {refs} refs; repeat {args.repeat}, minimum kept; "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at start\n"
    )

    rows: list[tuple[str, str, float, float, int]] = []

    def measure(label: str, argv_tail: list[str], **kw: object) -> None:
        for name, base in tools:
            cmd = [*base, "-C", repo, *argv_tail] if "-C" not in argv_tail else [*base, *argv_tail]
            try:
                w, c, m = best(cmd, args.repeat, **kw)
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
                print(f"  {label} / {name}: failed ({e})", file=sys.stderr)
                continue
            rows.append((label, name, w, c, m))
        print(f"  {label}: done", file=sys.stderr)

    if "cat-file" in only:
        for mode in ("--batch", "--batch-check"):
            for extra in (["--unordered"], []):
                measure(
                    " ".join(["cat-file", mode, *extra]),
                    ["cat-file", mode, "--batch-all-objects", *extra],
                )
    if "point" in only:
        measure("for-each-ref", ["for-each-ref"])
        measure("cat-file -t <ref>", ["cat-file", "-t", a_ref])
        measure("cat-file -p <ref>", ["cat-file", "-p", a_ref])
    if "index-pack" in only:
        packs = sorted(Path(repo, "objects", "pack").glob("*.pack"), key=lambda p: p.stat().st_size)
        with tempfile.TemporaryDirectory(prefix="bench-idx-") as scratch:
            pack = Path(scratch, "p.pack")
            shutil.copyfile(packs[-1], pack)
            for threads in (1, 2):
                label = f"index-pack --threads={threads}"
                for name, base in tools:
                    out = Path(scratch, "out.idx")
                    cmd = [*base, "index-pack", f"--threads={threads}", "-o", str(out), str(pack)]
                    try:
                        w, c, m = best(cmd, args.repeat, cwd=scratch)
                    except subprocess.CalledProcessError as e:
                        print(f"  {label} / {name}: failed ({e})", file=sys.stderr)
                        continue
                    rows.append((label, name, w, c, m))
                    out.unlink(missing_ok=True)
                print(f"  {label}: done", file=sys.stderr)
    if "api" in only:
        for name, script in PEERS.items():
            try:
                w, c, m = best([sys.executable, "-c", script, repo], args.repeat)
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
                print(f"  api / {name}: failed ({e})", file=sys.stderr)
                continue
            rows.append(("read every object (Python API)", name, w, c, m))
        print("  api: done", file=sys.stderr)

    print(
        "| command | tool | wall s | CPU s | max RSS MiB | CPU / git 2.39 | wall / git 2.39 "
        "| RSS / git 2.39 |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    ref = {label: (w, m) for label, name, w, _c, m in rows if name == "git 2.39 (zlib)"}
    cpu_ref = {label: c for label, name, _w, c, _m in rows if name == "git 2.39 (zlib)"}
    api_ref = next((w for label, name, w, _c, _m in rows if name == "pygit2"), None)
    for label, name, w, c, m in rows:
        rw, rm = ref.get(label, (None, None))
        rc = cpu_ref.get(label)
        if label.startswith("read every object") and api_ref:
            wr = f"{w / api_ref:.2f}x pygit2"
            mr = cr = "-"
        else:
            wr = f"{w / rw:.2f}x" if rw else "-"
            mr = f"{m / rm:.2f}x" if rm else "-"
            cr = f"{c / rc:.2f}x" if rc else "-"
        print(f"| {label} | {name} | {w:.2f} | {c:.2f} | {m / 1024:.0f} | {cr} | {wr} | {mr} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
