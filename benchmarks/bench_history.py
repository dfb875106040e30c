"""Time gitodb's history commands against git (and its API against dulwich and pygit2).

On a repository (default: ``../shared/corpus/libgit2.git``, copied to a temporary
directory so a commit-graph can be written) it times, best of ``--repeat`` runs,
CPU time (user + sys of the process), wall time and the maximum resident set size
of each process, git and gitodb runs alternating:

* ``rev-list --all --objects``, ``rev-list --count --all`` (with a commit-graph),
  ``rev-list --topo-order --parents --all``, ``log --format=%H%x00%s`` (all history),
  ``ls-tree -r HEAD``, ``diff-tree -r --stdin`` over every first-parent commit of HEAD:
  ``git`` and ``gitodb`` on the same arguments, outputs compared byte for byte;
* through the Python APIs: walking every commit reachable from HEAD with author
  name and time (gitodb ``RevWalk``, dulwich ``Walker``, pygit2 ``walk``), and the
  changed paths of every first-parent commit (gitodb ``commit_changes``, dulwich
  ``tree_changes``, pygit2 ``Diff``), each in its own process.

gitodb runs as ``python -S <venv>/bin/gitodb`` with ``PYTHONPATH`` naming the source
tree and the site-packages directories (see ``SITE``); the API rows run ``python -c``
as a user's script would.

Prints a Markdown table (times and ratios to git, or to gitodb for the API rows).

    python benchmarks/bench_history.py [--repo PATH] [--repeat N] [--no-api] [--only TITLE]...
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

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent.parent / "shared" / "corpus" / "libgit2.git"
# Where git on PATH (2.39) and gitodb differ, the output is also compared with Git
# 2.55's, which gitodb follows (e.g. 2.55 pairs a small file's rename that 2.39
# reports as a delete and an add).
GIT_255 = HERE.parent.parent / "shared" / "git-2.55" / "git" / "bin" / "git"
ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
# Byte-code caches as an installed package has them: without them every run compiles
# gitodb's modules first (PYTHONDONTWRITEBYTECODE is set in some shells).
ENV.pop("PYTHONDONTWRITEBYTECODE", None)
# gitodb runs as ``python -S <venv>/bin/gitodb`` (the console script), as
# bench_startup.py runs it: ``-S`` leaves out the ``.pth`` start-up hooks of the
# machine's Python installation (the development machine has one that imports
# certifi at every interpreter start, 30-40 ms no user pays).  PYTHONPATH names the
# source tree and every site-packages directory (gitodb's dependencies: the zlib
# backends), which -S would otherwise leave out.
SITE = [p for p in sys.path if p.endswith("site-packages")]

COMMANDS = [
    ("rev-list --all --objects", ["rev-list", "--all", "--objects"], None),
    ("rev-list --count --all (commit-graph)", ["rev-list", "--count", "--all"], None),
    (
        "rev-list --topo-order --parents --all",
        ["rev-list", "--topo-order", "--parents", "--all"],
        None,
    ),
    ("rev-list --oneline --all", ["rev-list", "--oneline", "--all"], None),
    ("rev-list --abbrev-commit --all", ["rev-list", "--abbrev-commit", "--all"], None),
    ("log --format=%H%x00%s", ["log", "--format=%H%x00%s"], None),
    ("log --oneline --all", ["log", "--oneline", "--all"], None),
    ("log --format='%H %an %ae %at %s'", ["log", "--format=%H %an %ae %at %s"], None),
    ("ls-tree -r HEAD", ["ls-tree", "-r", "HEAD"], None),
    ("diff-tree -r --stdin (first parents)", ["diff-tree", "-r", "--stdin"], "pairs"),
    ("log -p --first-parent", ["log", "-p", "--first-parent"], None),
]

API = {
    "walk: gitodb RevWalk": """
from gitodb.repo import Repository
from gitodb.history.graph import CommitGraph
from gitodb.history.revwalk import RevWalk
from gitodb.objects.commit import Commit
r = Repository(REPO)
w = RevWalk(r, graph=CommitGraph(r, keep_raw=True, use_commit_graph=False))
w.add(r.resolve("HEAD"))
n = 0
for node in w.commits():
    a = Commit(node.raw, r.object_format).author
    a.name, a.timestamp
    node.raw = None
    n += 1
print(n)
""",
    "walk: dulwich Walker": """
from dulwich.repo import Repo
r = Repo(REPO)
n = 0
for e in r.get_walker(include=[r.head()]):
    e.commit.author, e.commit.author_time
    n += 1
print(n)
""",
    "walk: pygit2 walk": """
import pygit2
r = pygit2.Repository(REPO)
n = 0
for c in r.walk(r.head.target, pygit2.enums.SortMode.TIME):
    c.author.name, c.author.time
    n += 1
print(n)
""",
    "changes: gitodb commit_changes": """
from gitodb.repo import Repository
from gitodb.history.treediff import commit_changes
r = Repository(REPO)
oid = r.resolve("HEAD")
n = 0
while True:
    n += len(commit_changes(r, oid))
    parents = r.odb.commit(oid).parents
    if not parents:
        break
    oid = parents[0]
print(n)
""",
    "changes: dulwich tree_changes": """
from dulwich.repo import Repo
r = Repo(REPO)
store = r.object_store
c = r[r.head()]
n = 0
while True:
    old = store[c.parents[0]].tree if c.parents else None
    n += sum(1 for _ in store.tree_changes(old, c.tree))
    if not c.parents:
        break
    c = store[c.parents[0]]
print(n)
""",
    "changes: pygit2 Diff": """
import pygit2
r = pygit2.Repository(REPO)
c = r[r.head.target]
n = 0
while True:
    if c.parents:
        d = c.parents[0].tree.diff_to_tree(c.tree)
    else:
        d = c.tree.diff_to_tree(swap=True)
    n += len(d)
    if not c.parents:
        break
    c = c.parents[0]
print(n)
""",
}


def best(
    cmd: list[str], cwd: Path, repeat: int, stdin: bytes | None = None
) -> tuple[float, float, int, bytes]:
    runs = [run_one(cmd, cwd, stdin) for _ in range(repeat)]
    return _best(runs)


def _best(runs: list[tuple[float, float, int, bytes]]) -> tuple[float, float, int, bytes]:
    """Best wall and best CPU time (user + sys) of the runs, their largest RSS."""
    return (
        min(r[0] for r in runs),
        min(r[1] for r in runs),
        max(r[2] for r in runs),
        runs[0][3],
    )


# A child's max RSS counts what it was forked from (Linux keeps the high-water mark
# across exec), so a command forked from this process would show this process's size.
# GNU time is a small launcher: the command is forked from it, and its %M is the
# command's own max RSS.  Without it, the RSS column is this process's size or more.
TIME = shutil.which("time", path="/usr/bin:/bin")


def run_one(cmd: list[str], cwd: Path, stdin: bytes | None) -> tuple[float, float, int, bytes]:
    """One timed run: wall, CPU (user + sys of the process and the launcher, from
    ``wait4``), max RSS in KiB (the launcher's report, else ``wait4``'s)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile() as rss:
        argv = [TIME, "-f", "%M", "-o", rss.name, *cmd] if TIME else cmd
        proc = subprocess.Popen(
            argv, cwd=cwd, env=ENV, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.DEVNULL
        )
        if stdin:
            assert proc.stdin is not None
            proc.stdin.write(stdin)
        assert proc.stdin is not None
        proc.stdin.close()
        _pid, _status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        maxrss = usage.ru_maxrss
        if TIME:
            text = Path(rss.name).read_text().split()
            maxrss = int(text[-1]) if text and text[-1].isdigit() else maxrss
        out.seek(0)
        return wall, usage.ru_utime + usage.ru_stime, maxrss, out.read()


def _same_as_255(cmd: list[str], repo: Path, data: bytes | None, out: bytes) -> str:
    """``yes (as git 2.55)`` when Git 2.55 prints ``out`` for ``cmd``, else ``NO``."""
    if not GIT_255.exists():
        return "NO"
    got = subprocess.run(
        [str(GIT_255), *cmd], cwd=repo, env=ENV, input=data, capture_output=True
    ).stdout
    return "yes (as git 2.55)" if got == out else "NO"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, default=CORPUS)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--git", default="git")
    ap.add_argument("--no-api", action="store_true", help="skip the dulwich/pygit2 rows")
    ap.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="TITLE",
        help="run only the commands whose title starts with TITLE (repeatable)",
    )
    args = ap.parse_args()
    if not args.repo.exists():
        sys.exit(f"no repository at {args.repo}")
    import gitodb as _pkg

    src = Path(_pkg.__file__).resolve().parent.parent
    ENV["PYTHONPATH"] = os.pathsep.join([str(src), *SITE])
    script = Path(sys.executable).parent / "gitodb"
    gitodb = [sys.executable, "-S", *([str(script)] if script.exists() else ["-m", "gitodb"])]
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo.git"
        shutil.copytree(args.repo, repo, symlinks=True)
        subprocess.run(
            [args.git, "commit-graph", "write", "--reachable"],
            cwd=repo,
            env=ENV,
            check=True,
            capture_output=True,
        )
        pairs = subprocess.run(
            [args.git, "rev-list", "--first-parent", "--parents", "HEAD"],
            cwd=repo,
            env=ENV,
            check=True,
            capture_output=True,
        ).stdout
        pairs = b"".join(
            b" ".join(ln.split()[:2]) + b"\n" for ln in pairs.splitlines() if len(ln.split()) >= 2
        )
        run_one([*gitodb, "version"], repo, None)  # writes the byte-code caches
        rows = []
        load = os.getloadavg()[0]
        for title, cmd, stdin in COMMANDS:
            if args.only and not any(title.startswith(t) for t in args.only):
                continue
            data = pairs if stdin == "pairs" else None
            # git and gitodb alternate, so both see the same machine load.
            g_runs, o_runs = [], []
            for i in range(args.repeat):
                g_runs.append(run_one([args.git, *cmd], repo, data))
                o_runs.append(run_one([*gitodb, *cmd], repo, data))
                if i:  # keep one output of each
                    g_runs[-1] = (*g_runs[-1][:3], b"")
                    o_runs[-1] = (*o_runs[-1][:3], b"")
            gw, gc, gm, gout = _best(g_runs)
            ow, oc, om, oout = _best(o_runs)
            same = "yes" if gout == oout else _same_as_255(cmd, repo, data, oout)
            rows.append(
                f"| {title} | {gc:.3f} | {oc:.3f} | {oc / max(gc, 1e-3):.1f}x | {gw:.2f} | "
                f"{ow:.2f} | {gm / 1024:.0f} | {om / 1024:.0f} | {same} |"
            )
        print(
            f"Repository: {args.repo.name}, best of {args.repeat} (git and gitodb alternating); "
            f"CPU = user + sys seconds of the process; load average {load:.1f} -> "
            f"{os.getloadavg()[0]:.1f}\n"
        )
        print(
            "| command | git CPU s | gitodb CPU s | CPU ratio | git wall s | gitodb wall s "
            "| git MB | gitodb MB | same bytes |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        print("\n".join(rows))
        if args.no_api:
            return 0
        print("\n| API | CPU s | wall s | max RSS MB | CPU vs gitodb | result |")
        print("|---|---|---|---|---|---|")
        base: dict[str, float] = {}
        for title, script in API.items():
            code = f"REPO = {str(repo)!r}\n" + script
            w, c, m, out = best([sys.executable, "-c", code], repo, args.repeat)
            kind = title.split(":")[0]
            if "gitodb" in title:
                base[kind] = c
            ratio = c / base[kind] if kind in base else float("nan")
            print(
                f"| {title} | {c:.3f} | {w:.2f} | {m / 1024:.0f} | {ratio:.1f}x | "
                f"{out.decode().strip()} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
