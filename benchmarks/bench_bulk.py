"""Time ``gitodb bulk`` tables over many repositories against the obvious alternatives.

Corpus: synthetic repositories made with ``make_bench_repo.build`` (different sizes,
reused between runs from ``benchmarks/work/bulk-corpus``) plus, when present,
``../shared/corpus/libgit2.git`` as the large one.  For the tables ``objects``,
``commits`` and ``files`` it times, in one run:

* gitodb's local engine with 1 and 2 worker processes (``gitodb.bulk.run_local``);
* gitodb on Dask (``gitodb.dask.write_table``) on a ``distributed.LocalCluster`` of 1
  and 2 worker processes (cluster start-up not counted);
* the same table built per repository in a process pool of 2 by: a ``git`` subprocess
  pipeline (``cat-file --batch-all-objects --batch-check``, ``log --all
  --topo-order`` and ``for-each-ref``, ``ls-tree -r -l``) parsed into Arrow; pygit2;
  dulwich.  Each writes the same Parquet schema.  ``commits``' ``reachable_from`` is
  built by each alternative the obvious way (``reach_column``: one topological walk
  handing ref bits down to parents, in Python); the ``objects`` columns an
  alternative cannot give cheaply are left null (said in the table).

Reported: seconds, repositories/s, rows/s, MB/s (bytes of the repositories' object
storage / s), the CPU seconds the tasks used (self and child processes, measured in
each task: on a shared machine this shows the work done when wall-clock scaling
cannot), the largest max RSS of a worker, and ratios.  Rows are checked to be
equal in number between gitodb and each alternative.

    python benchmarks/bench_bulk.py --quick          # 8 small repositories, no libgit2
    python benchmarks/bench_bulk.py                  # 30 repositories + libgit2
    python benchmarks/bench_bulk.py --out benchmarks/results/bulk.md
    python benchmarks/bench_bulk.py --check          # the alternatives' commits == gitodb's
    python benchmarks/bench_bulk.py --dask-repeats 7 # Dask's overhead, 7 interleaved pairs
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import make_bench_repo  # noqa: E402
from gitodb import bulk  # noqa: E402

LARGE = HERE.parent.parent / "shared" / "corpus" / "libgit2.git"
if not LARGE.exists():
    LARGE = Path("/work/shared/corpus/libgit2.git")
CORPUS = HERE / "work" / "bulk-corpus"
TABLES = ("objects", "commits", "files")
ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}


# -- corpus -----------------------------------------------------------------------------
def make_corpus(n: int, quick: bool) -> list[str]:
    """``n`` synthetic bare repositories of growing size (built once, then reused)."""
    out = []
    for i in range(n):
        commits = (40 + 15 * i) if quick else (120 + 40 * i)
        files = (20 + 2 * i) if quick else (40 + 4 * i)
        path = CORPUS / f"r{i:02d}-{commits}x{files}.git"
        if not (path / "bench-complete").exists():
            make_bench_repo.build(path, commits, files, 4, 50, 50, verbose=False)
            # fast-import wrote refs/heads/main; HEAD must name it for the files table.
            subprocess.run(
                ["git", "-C", str(path), "symbolic-ref", "HEAD", "refs/heads/main"],
                check=True,
                env=ENV,
            )
            (path / "bench-complete").write_text("")
        out.append(str(path))
    return out


def storage_bytes(repo: str) -> int:
    """Bytes of a repository's object storage (packs and loose objects)."""
    total = 0
    for dirpath, _dirs, files in os.walk(os.path.join(repo, "objects")):
        for f in files:
            total += os.path.getsize(os.path.join(dirpath, f))
    return total


# -- the alternatives, one repository per call, in pool workers ---------------------------
def _write(table: str, columns: dict[str, list[Any]], n: int, out: str) -> int:
    sch = bulk.schema(table)
    arrays = [
        pa.array(columns[f.name], f.type) if f.name in columns else pa.nulls(n, f.type) for f in sch
    ]
    pq.write_table(pa.Table.from_arrays(arrays, schema=sch), out, compression="zstd")
    return n


def _git(repo: str, *args: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", repo, *args], check=True, capture_output=True, env=ENV
    ).stdout


#: the refs a ``reachable_from`` names besides HEAD (as gitodb.bulk.commits lists them)
LISTED = ("refs/heads/", "refs/tags/", "refs/remotes/")


def reach_column(
    ids: list[Any], parents: list[list[Any]], tips: list[tuple[str, Any]]
) -> list[list[str]]:
    """``reachable_from`` of commits listed children first (``ids``, ``parents``):
    one pass handing each commit's bit set of the refs that reach it (``tips``:
    ``(name, commit id)``, bit i for the i-th) down to its parents, the sets turned
    into name lists once per distinct set.  What a competent user of any of the
    alternatives writes: one topological walk propagating ref bits."""
    names = [name for name, _oid in tips]
    masks: dict[Any, int] = {}
    for i, (_name, oid) in enumerate(tips):
        masks[oid] = masks.get(oid, 0) | (1 << i)
    lists: dict[int, list[str]] = {0: []}
    out = []
    for oid, ps in zip(ids, parents, strict=True):
        m = masks.pop(oid, 0)
        for p in ps:
            masks[p] = masks.get(p, 0) | m
        got = lists.get(m)
        if got is None:
            got = lists[m] = [names[i] for i in range(m.bit_length()) if m >> i & 1]
        out.append(got)
    return out


def git_table(repo: str, table: str, out: str) -> int:
    """The table from git subprocesses, parsed in Python."""
    if table == "objects":
        text = _git(
            repo,
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objectname) "
            "%(objecttype) %(objectsize) %(objectsize:disk) %(deltabase)",
        ).decode()
        ids, kinds, sizes, disk, bases = [], [], [], [], []
        for line in text.splitlines():
            oid, t, s, d, b = line.split(" ")
            ids.append(oid)
            kinds.append(t)
            sizes.append(int(s))
            disk.append(int(d))
            bases.append(None if b.strip("0") == "" else b)
        return _write(
            table,
            {
                "repository": [repo] * len(ids),
                "id": ids,
                "type": kinds,
                "size": sizes,
                "size_on_disk": disk,
                "delta_base": bases,
            },
            len(ids),
            out,
        )
    if table == "commits":
        fmt = "%H%x1f%T%x1f%P%x1f%an%x1f%ae%x1f%ad%x1f%cn%x1f%ce%x1f%cd%x1f%s"
        raw = _git(
            repo, "log", "--all", "--topo-order", "--date=raw", "-z", f"--format={fmt}"
        ).decode("utf-8", "replace")
        cols: dict[str, list[Any]] = {
            k: []
            for k in (
                "id",
                "tree",
                "parents",
                "author_name",
                "author_email",
                "author_time",
                "author_tz",
                "committer_name",
                "committer_email",
                "committer_time",
                "committer_tz",
                "subject",
            )
        }
        for rec in raw.split("\0"):
            if not rec:
                continue
            h, t, p, an, ae, ad, cn, ce, cd, s = rec.split("\x1f")
            at, atz = ad.split(" ")
            ct, ctz = cd.split(" ")
            for k, v in (
                ("id", h),
                ("tree", t),
                ("parents", p.split()),
                ("author_name", an),
                ("author_email", ae),
                ("author_time", int(at)),
                ("author_tz", atz),
                ("committer_name", cn),
                ("committer_email", ce),
                ("committer_time", int(ct)),
                ("committer_tz", ctz),
                ("subject", s),
            ):
                cols[k].append(v)
        # The refs reachable_from names, peeled (HEAD first, then by name as
        # for-each-ref sorts them); a ref to anything but a commit has no history.
        tips = []
        head = subprocess.run(
            ["git", "--git-dir", repo, "rev-parse", "-q", "--verify", "HEAD^{commit}"],
            capture_output=True,
            env=ENV,
        ).stdout.decode()
        if head:
            tips.append(("HEAD", head.strip()))
        refs = _git(
            repo,
            "for-each-ref",
            "--format=%(objecttype) %(objectname) %(*objecttype) %(*objectname) %(refname)",
            *LISTED,
        ).decode("utf-8", "replace")
        for line in refs.splitlines():
            t, oid, pt, poid, name = line.split(" ", 4)
            if t == "commit":
                tips.append((name, oid))
            elif t == "tag" and pt == "commit":
                tips.append((name, poid))
        cols["reachable_from"] = reach_column(cols["id"], cols["parents"], tips)
        n = len(cols["id"])
        return _write(table, {"repository": [repo] * n, **cols}, n, out)
    raw = _git(repo, "ls-tree", "-r", "-l", "-z", "HEAD").decode("utf-8", "replace")
    head = _git(repo, "rev-parse", "HEAD").decode().strip()
    paths, modes, kinds, ids, sizes = [], [], [], [], []
    for rec in raw.split("\0"):
        if not rec:
            continue
        meta, path = rec.split("\t", 1)
        mode, kind, oid, size = meta.split()
        paths.append(path)
        modes.append(mode)
        kinds.append(kind)
        ids.append(oid)
        sizes.append(None if size == "-" else int(size))
    n = len(paths)
    return _write(
        table,
        {
            "repository": [repo] * n,
            "revision": ["HEAD"] * n,
            "commit": [head] * n,
            "path": paths,
            "mode": modes,
            "type": kinds,
            "id": ids,
            "size": sizes,
        },
        n,
        out,
    )


def pygit2_table(repo_path: str, table: str, out: str) -> int:
    """The table through pygit2 (libgit2)."""
    import pygit2

    repo = pygit2.Repository(repo_path)
    if table == "objects":
        names = {
            pygit2.GIT_OBJECT_COMMIT: "commit",
            pygit2.GIT_OBJECT_TREE: "tree",
            pygit2.GIT_OBJECT_BLOB: "blob",
            pygit2.GIT_OBJECT_TAG: "tag",
        }
        ids, kinds, sizes = [], [], []
        for oid in repo.odb:
            t, size = repo.odb.read_header(oid)
            ids.append(str(oid))
            kinds.append(names[t])
            sizes.append(size)
        n = len(ids)
        return _write(
            table, {"repository": [repo_path] * n, "id": ids, "type": kinds, "size": sizes}, n, out
        )
    if table == "commits":
        walker = repo.walk(None, pygit2.enums.SortMode.TOPOLOGICAL)
        tips = []
        if not repo.head_is_unborn:
            head_commit = repo.head.peel(pygit2.Commit)
            walker.push(head_commit.id)
            tips.append(("HEAD", head_commit.id))
        listed = []
        for ref in repo.references.objects:
            try:
                target = ref.peel(pygit2.Commit)
            except (pygit2.InvalidSpecError, ValueError, KeyError):
                continue
            walker.push(target.id)
            if ref.name.startswith(LISTED):
                listed.append((ref.name, target.id))
        tips += sorted(listed)  # HEAD, then by name, as for-each-ref lists them
        ids, parent_ids = [], []
        cols: dict[str, list[Any]] = {
            k: []
            for k in (
                "id",
                "tree",
                "parents",
                "author_name",
                "author_email",
                "author_time",
                "author_tz",
                "committer_name",
                "committer_email",
                "committer_time",
                "committer_tz",
                "subject",
            )
        }
        for c in walker:
            a, m = c.author, c.committer
            ids.append(c.id)
            parent_ids.append(c.parent_ids)
            for k, v in (
                ("id", str(c.id)),
                ("tree", str(c.tree_id)),
                ("parents", [str(p) for p in c.parent_ids]),
                ("author_name", a.name),
                ("author_email", a.email),
                ("author_time", a.time),
                ("author_tz", _tz(a.offset)),
                ("committer_name", m.name),
                ("committer_email", m.email),
                ("committer_time", m.time),
                ("committer_tz", _tz(m.offset)),
                ("subject", " ".join(c.message.split("\n\n", 1)[0].split("\n"))),
            ):
                cols[k].append(v)
        cols["reachable_from"] = reach_column(ids, parent_ids, tips)
        n = len(cols["id"])
        return _write(table, {"repository": [repo_path] * n, **cols}, n, out)
    head = repo.head.peel(pygit2.Commit)
    paths, modes, kinds, ids, sizes = [], [], [], [], []
    stack = [(head.tree, "")]
    while stack:
        tree, base = stack.pop()
        for e in tree:
            if e.type_str == "tree":
                stack.append((repo[e.id], base + e.name + "/"))
                continue
            paths.append(base + e.name)
            modes.append(f"{e.filemode:06o}")
            kinds.append(e.type_str)
            ids.append(str(e.id))
            sizes.append(repo.odb.read_header(e.id)[1] if e.type_str == "blob" else None)
    n = len(paths)
    return _write(
        table,
        {
            "repository": [repo_path] * n,
            "revision": ["HEAD"] * n,
            "commit": [str(head.id)] * n,
            "path": paths,
            "mode": modes,
            "type": kinds,
            "id": ids,
            "size": sizes,
        },
        n,
        out,
    )


def _tz(minutes: int) -> str:
    sign = "-" if minutes < 0 else "+"
    minutes = abs(minutes)
    return f"{sign}{minutes // 60:02d}{minutes % 60:02d}"


def dulwich_table(repo_path: str, table: str, out: str) -> int:
    """The table through dulwich."""
    from dulwich.objects import Commit, Tree
    from dulwich.repo import Repo

    repo = Repo(repo_path)
    store = repo.object_store
    if table == "objects":
        names = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}
        ids, kinds, sizes = [], [], []
        for sha in store:
            t, raw = store.get_raw(sha)
            ids.append(sha.decode())
            kinds.append(names[t])
            sizes.append(len(raw))
        n = len(ids)
        return _write(
            table, {"repository": [repo_path] * n, "id": ids, "type": kinds, "size": sizes}, n, out
        )
    if table == "commits":
        from dulwich.walk import ORDER_TOPO

        heads = []
        tips = []
        refs = repo.get_refs()
        for name in ([b"HEAD"] if b"HEAD" in refs else []) + sorted(refs.keys() - {b"HEAD"}):
            obj = store[refs[name]]
            while obj.type_name == b"tag":
                obj = store[obj.object[1]]
            if isinstance(obj, Commit):
                heads.append(obj.id)
                text = name.decode("utf-8", "replace")
                if name == b"HEAD" or text.startswith(LISTED):
                    tips.append((text, obj.id))
        ids, parent_ids = [], []
        cols: dict[str, list[Any]] = {
            k: []
            for k in (
                "id",
                "tree",
                "parents",
                "author_name",
                "author_email",
                "author_time",
                "author_tz",
                "committer_name",
                "committer_email",
                "committer_time",
                "committer_tz",
                "subject",
            )
        }
        for entry in repo.get_walker(include=sorted(set(heads)), order=ORDER_TOPO):
            c = entry.commit
            ids.append(c.id)
            parent_ids.append(c.parents)
            an, _, ae = c.author.decode("utf-8", "replace").rpartition(" <")
            cn, _, ce = c.committer.decode("utf-8", "replace").rpartition(" <")
            msg = c.message.decode("utf-8", "replace")
            for k, v in (
                ("id", c.id.decode()),
                ("tree", c.tree.decode()),
                ("parents", [p.decode() for p in c.parents]),
                ("author_name", an),
                ("author_email", ae.rstrip(">")),
                ("author_time", c.author_time),
                ("author_tz", _tz(c.author_timezone // 60)),
                ("committer_name", cn),
                ("committer_email", ce.rstrip(">")),
                ("committer_time", c.commit_time),
                ("committer_tz", _tz(c.commit_timezone // 60)),
                ("subject", " ".join(msg.split("\n\n", 1)[0].split("\n"))),
            ):
                cols[k].append(v)
        cols["reachable_from"] = reach_column(ids, parent_ids, tips)
        n = len(cols["id"])
        return _write(table, {"repository": [repo_path] * n, **cols}, n, out)
    head = repo[repo.head()]
    paths, modes, kinds, ids, sizes = [], [], [], [], []
    stack = [(store[head.tree], b"")]
    while stack:
        tree, base = stack.pop()
        assert isinstance(tree, Tree)
        for e in tree.iteritems():
            if e.mode & 0o170000 == 0o040000:
                stack.append((store[e.sha], base + e.path + b"/"))
                continue
            paths.append((base + e.path).decode("utf-8", "replace"))
            modes.append(f"{e.mode:06o}")
            gitlink = e.mode & 0o170000 == 0o160000
            kinds.append("commit" if gitlink else "blob")
            ids.append(e.sha.decode())
            sizes.append(None if gitlink else len(store.get_raw(e.sha)[1]))
    n = len(paths)
    return _write(
        table,
        {
            "repository": [repo_path] * n,
            "revision": ["HEAD"] * n,
            "commit": [head.id.decode()] * n,
            "path": paths,
            "mode": modes,
            "type": kinds,
            "id": ids,
            "size": sizes,
        },
        n,
        out,
    )


ALTERNATIVES: dict[str, Callable[[str, str, str], int]] = {
    "git subprocesses": git_table,
    "pygit2": pygit2_table,
    "dulwich": dulwich_table,
}


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _alt_warm_up(name: str) -> None:
    """Import what an alternative needs (and pyarrow's pandas shim), then hold the
    worker a moment so that each worker of the pool gets one of these."""
    if name == "pygit2":
        import pygit2  # noqa: F401
    elif name == "dulwich":
        import dulwich.repo  # noqa: F401
    pa.array(["warm"])
    time.sleep(0.3)


def _alt_task(args: tuple[str, str, str, str]) -> tuple[int, int, float]:
    name, repo, table, out = args
    cpu = _cpu()
    rows = ALTERNATIVES[name](repo, table, out)
    return rows, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, _cpu() - cpu


# -- runs ---------------------------------------------------------------------------------
@dataclass
class Run:
    table: str
    engine: str
    workers: int
    seconds: float
    rows: int
    max_rss: int
    cpu: float
    note: str = ""
    task_cpu: list[float] = field(default_factory=list)
    load: float = 0.0


def lpt_makespan(costs: list[float], workers: int) -> float:
    """The finishing time of ``costs`` started largest first on ``workers`` idle
    workers (what the local engine does): the wall-clock bound of a CPU-bound run."""
    ends = [0.0] * workers
    for c in sorted(costs, reverse=True):
        i = ends.index(min(ends))
        ends[i] += c
    return max(ends) if ends else 0.0


def _local_child(repos_file: str, table: str, jobs: int) -> None:
    """In a fresh driver process (as ``gitodb bulk`` runs): time ``run_local``, print JSON."""
    import json

    import gitodb.bulk.preload  # noqa: F401  (loaded before timing, as the alternatives)
    from gitodb.bulk.runner import run_local

    repos = Path(repos_file).read_text().split("\n")
    with tempfile.TemporaryDirectory(prefix="bench-bulk-") as out:
        t0 = time.perf_counter()
        summary = run_local([r for r in repos if r], table, out, jobs=jobs)
        seconds = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "seconds": seconds,
                "rows": summary.rows,
                "failed": summary.failed,
                "max_rss": summary.max_rss,
                "cpu": summary.cpu_seconds,
                "workers": len({r.pid for r in summary.results}),
                "tasks": summary.tasks,
                "task_cpu": [r.cpu_seconds for r in summary.results],
            }
        )
    )


def run_gitodb_local(repos: list[str], table: str, jobs: int) -> Run:
    """The local engine in its own driver process (the bench process holds Dask's
    threads and pygit2: a fork of it is not what a user's run would fork)."""
    import json

    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write("\n".join(repos))
        f.flush()
        code = (
            f"import sys; sys.path.insert(0, {str(HERE)!r}); import bench_bulk; "
            f"bench_bulk._local_child({f.name!r}, {table!r}, {jobs})"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code], check=True, capture_output=True, text=True
        )
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    if got["failed"]:
        raise SystemExit(f"gitodb {table}: {got['failed']} tasks failed")
    return Run(
        table,
        "gitodb local",
        jobs,
        got["seconds"],
        got["rows"],
        got["max_rss"],
        got["cpu"],
        note=f"{got['tasks']} tasks",
        task_cpu=got["task_cpu"],
        load=os.getloadavg()[0],
    )


def run_gitodb_dask(repos: list[str], table: str, client: Any, workers: int) -> Run:
    import gitodb.dask as gdask

    # Long-lived workers: loaded once, as the local engine's driver does before forking.
    client.run(lambda: __import__("gitodb.bulk.preload"))
    with tempfile.TemporaryDirectory(prefix="bench-bulk-dask-") as out:
        t0 = time.perf_counter()
        result = gdask.write_table(repos, table, out, client=client)
        seconds = time.perf_counter() - t0
    rss = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    return Run(
        table,
        "gitodb dask",
        workers,
        seconds,
        result["rows"],
        max(rss.values()),
        sum(r.cpu_seconds for r in result["results"]),
    )


def run_alternative(name: str, repos: list[str], table: str, jobs: int) -> Run:
    with tempfile.TemporaryDirectory(prefix="bench-bulk-alt-") as out:
        tasks = [(name, r, table, os.path.join(out, f"{i}.parquet")) for i, r in enumerate(repos)]
        with ProcessPoolExecutor(jobs, mp_context=get_context("forkserver")) as pool:
            # Workers started and their imports done before timing, as for gitodb
            # (its driver loads before forking; Dask's workers are warmed).
            list(pool.map(_alt_warm_up, [name] * jobs))
            t0 = time.perf_counter()
            results = list(pool.map(_alt_task, tasks))
            seconds = time.perf_counter() - t0
    return Run(
        table,
        name,
        jobs,
        seconds,
        sum(r for r, _m, _c in results),
        max(m for _r, m, _c in results),
        sum(c for _r, _m, c in results),
    )


NOTES = {
    ("objects", "git subprocesses"): "no pack, offset, depth",
    ("objects", "pygit2"): "type and size only",
    ("objects", "dulwich"): "type and size only (objects inflated)",
    ("commits", "git subprocesses"): "log --all --topo-order; reachable_from propagated in Python",
    ("commits", "pygit2"): "topological walk; reachable_from propagated in Python",
    ("commits", "dulwich"): "topological walk; reachable_from propagated in Python",
}


def report(runs: list[Run], repos: list[str], storage: int, header: str) -> str:
    lines = [
        header,
        "",
        "| table | engine | workers | seconds | repos/s | rows/s | MB/s | task CPU s "
        "| max RSS/worker | time vs gitodb 2 workers | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        base = next(
            x for x in runs if x.table == r.table and x.engine == "gitodb local" and x.workers == 2
        )
        lines.append(
            f"| {r.table} | {r.engine} | {r.workers} | {r.seconds:.2f} | "
            f"{len(repos) / r.seconds:.1f} | {r.rows / r.seconds:,.0f} | "
            f"{storage / 1e6 / r.seconds:.1f} | {r.cpu:.2f} | {r.max_rss / 2**20:.0f} MiB | "
            f"{r.seconds / base.seconds:.2f}x | {r.note or NOTES.get((r.table, r.engine), '')} |"
        )
    lines.append("")
    for table in sorted({r.table for r in runs}):
        g1 = next(
            r for r in runs if r.table == table and r.engine == "gitodb local" and r.workers == 1
        )
        g2 = next(
            r for r in runs if r.table == table and r.engine == "gitodb local" and r.workers == 2
        )
        d2 = [r for r in runs if r.table == table and r.engine == "gitodb dask" and r.workers == 2]
        alts = [r for r in runs if r.table == table and r.engine in ALTERNATIVES]
        # the fastest by task CPU: wall-clock is not a measure on a shared machine
        best = min(alts, key=lambda r: r.cpu) if alts else None
        ideal = sum(g2.task_cpu) / lpt_makespan(g2.task_cpu, 2) if g2.task_cpu else 0.0
        biggest = max(g1.task_cpu) / sum(g1.task_cpu) if g1.task_cpu else 0.0
        parts = [
            f"**{table}**: speed-up 2 workers / 1 worker = {g1.seconds / g2.seconds:.2f}x "
            f"wall-clock (load {g1.load:.1f} / {g2.load:.1f}); task CPU {g2.cpu / g1.cpu:.2f}x "
            f"of 1 worker's; on 2 idle cores the 2-worker tasks' CPU seconds, largest "
            f"first, give {g1.cpu / lpt_makespan(g2.task_cpu, 2) if g2.task_cpu else 0:.2f}x "
            f"(the 2-worker split alone {ideal:.2f}x; largest task {biggest:.0%} of the CPU)"
        ]
        if d2:
            parts.append(
                f"Dask overhead vs local (2 workers) = "
                f"{(d2[0].seconds / g2.seconds - 1) * 100:+.0f}%"
            )
        if best is not None:
            parts.append(
                f"fastest alternative by task CPU ({best.engine}) CPU / gitodb CPU = "
                f"{best.cpu / g2.cpu:.2f}x (time {best.seconds / g2.seconds:.2f}x)"
            )
        lines.append("- " + "; ".join(parts))
    return "\n".join(lines) + "\n"


def dask_overhead(repos: list[str], tables: list[str], client: Any, repeats: int) -> str:
    """Dask's overhead against the local engine (2 workers each), ``repeats`` runs of
    each, interleaved (local, Dask, local, ...) so that the load drifts over both:
    the median, min and max of the per-pair ratios, by wall-clock and by task CPU."""
    import statistics

    lines = [
        f"Dask overhead vs local, 2 workers, {repeats} interleaved pairs per table:",
        "",
        "| table | local s (median) | dask s (median) | wall-clock overhead median [min, max] "
        "| task CPU overhead median [min, max] | load |",
        "|---|---|---|---|---|---|",
    ]
    for table in tables:
        pairs = []
        for _ in range(repeats):
            local = run_gitodb_local(repos, table, 2)
            dask = run_gitodb_dask(repos, table, client, 2)
            pairs.append((local, dask))
            print(local.seconds, dask.seconds, local.cpu, dask.cpu, file=sys.stderr)
        wall = [d.seconds / g.seconds - 1 for g, d in pairs]
        cpu = [d.cpu / g.cpu - 1 for g, d in pairs]
        lines.append(
            f"| {table} | {statistics.median(g.seconds for g, _d in pairs):.2f} "
            f"| {statistics.median(d.seconds for _g, d in pairs):.2f} "
            f"| {statistics.median(wall):+.0%} [{min(wall):+.0%}, {max(wall):+.0%}] "
            f"| {statistics.median(cpu):+.0%} [{min(cpu):+.0%}, {max(cpu):+.0%}] "
            f"| {os.getloadavg()[0]:.1f} |"
        )
    return "\n".join(lines) + "\n"


def check_same(repos: list[str]) -> int:
    """Compare each alternative's ``commits`` rows with gitodb's by id: the same ids,
    parents and ``reachable_from`` (in any row order: pygit2's and dulwich's
    topological orders are not Git's).  The number of differences (each printed)."""
    bad = 0
    for repo in repos:
        want = pa.Table.from_batches(
            list(bulk.table_batches(repo, "commits")), schema=bulk.schema("commits")
        )
        rows = dict(
            zip(
                want["id"].to_pylist(),
                zip(want["parents"].to_pylist(), want["reachable_from"].to_pylist(), strict=True),
                strict=True,
            )
        )
        for name, fn in ALTERNATIVES.items():
            with tempfile.TemporaryDirectory(prefix="bench-bulk-check-") as d:
                out = os.path.join(d, "t.parquet")
                fn(repo, "commits", out)
                got = pq.read_table(out)
            theirs = dict(
                zip(
                    got["id"].to_pylist(),
                    zip(got["parents"].to_pylist(), got["reachable_from"].to_pylist(), strict=True),
                    strict=True,
                )
            )
            if theirs != rows:
                print(f"differs: {name} {repo}", file=sys.stderr)
                bad += 1
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="8 small repositories, no libgit2")
    ap.add_argument("--repos", type=int, help="number of synthetic repositories (30)")
    ap.add_argument("--tables", default=",".join(TABLES))
    ap.add_argument("--no-large", action="store_true", help="leave libgit2.git out")
    ap.add_argument("--no-alternatives", action="store_true")
    ap.add_argument("--no-dask", action="store_true")
    ap.add_argument("--out", type=Path, help="also write the Markdown report here")
    ap.add_argument(
        "--check",
        action="store_true",
        help="only compare the alternatives' commits tables with gitodb's (no timing)",
    )
    ap.add_argument(
        "--dask-repeats",
        type=int,
        metavar="N",
        help="only measure Dask's overhead against the local engine: N interleaved pairs",
    )
    args = ap.parse_args(argv)
    n = args.repos or (8 if args.quick else 30)
    repos = make_corpus(n, args.quick)
    if not args.quick and not args.no_large and LARGE.exists():
        repos.append(str(LARGE))
    if args.check:
        bad = check_same(repos)
        print(f"commits: {len(repos)} repositories, {bad} differences")
        return 1 if bad else 0
    storage = sum(storage_bytes(r) for r in repos)
    tables = [t for t in args.tables.split(",") if t]
    if args.dask_repeats:
        from distributed import Client

        from gitodb.dask import local_cluster

        cluster = local_cluster(2)
        client = Client(cluster)
        try:
            text = dask_overhead(repos, tables, client, args.dask_repeats)
        finally:
            client.close()
            cluster.close()
        print(text)
        if args.out:
            args.out.write_text(text)
        return 0
    runs: list[Run] = []
    clusters: dict[int, Any] = {}
    if not args.no_dask:
        from distributed import Client

        from gitodb.dask import local_cluster

        for w in (1, 2):
            cluster = local_cluster(w)
            clusters[w] = (cluster, Client(cluster))
    try:
        for table in tables:
            for jobs in (1, 2):
                runs.append(run_gitodb_local(repos, table, jobs))
                print(runs[-1], file=sys.stderr)
            for w, (_cluster, client) in clusters.items():
                runs.append(run_gitodb_dask(repos, table, client, w))
                print(runs[-1], file=sys.stderr)
            if not args.no_alternatives:
                for name in ALTERNATIVES:
                    runs.append(run_alternative(name, repos, table, 2))
                    print(runs[-1], file=sys.stderr)
    finally:
        for cluster, client in clusters.values():
            client.close()
            cluster.close()
    for table in tables:  # every engine listed the same number of rows
        counts = {r.engine: r.rows for r in runs if r.table == table}
        if len(set(counts.values())) != 1:
            print(f"warning: {table}: row counts differ: {counts}", file=sys.stderr)
    load = os.getloadavg()[0]
    header = (
        f"Corpus: {len(repos)} repositories ({n} synthetic"
        f"{' + libgit2.git' if str(LARGE) in repos else ''}), "
        f"{storage / 1e6:.1f} MB of object storage; {os.cpu_count()} cores, "
        f"load average {load:.1f} at the end (the machine is shared: expect noise)."
    )
    text = report(runs, repos, storage, header)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
