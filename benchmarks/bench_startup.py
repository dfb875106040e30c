"""Start-up of gitodb's commands, and the commands dominated by it, against git in one run.

Two measurements:

* **imports** (``python -X importtime``): the summed import time of every module a
  command loads (the interpreter's own start-up modules included, ``site`` and
  what it loads excluded), and the number of modules.  ``importtime`` measures wall
  time, which other processes on a shared machine inflate: the figure is the
  *minimum* over ``--repeat`` runs (the least disturbed one), with in brackets the sum
  over the modules of each one's least self time (steadier on a loaded machine), and it includes
  ``importtime``'s own overhead (about a third more than the same imports cost without it);
* **start-up CPU**: in one process, the CPU time to import the entry point and run
  the command once, minus a second run of it over a fresh ``Repository``: the
  imports and one-time set-up (median of ``--repeat``; CPU time is far less
  disturbed by other processes than ``importtime``'s wall time);
* **CPU** (user + sys of the process, from ``wait4``): median of ``--repeat`` runs of
  the whole command, git 2.55 and gitodb alternating run by run, their ratio, and the
  max RSS of each (median of three runs under ``/usr/bin/time``: see ``max_rss_kib``).

``rev-parse`` is not a gitodb command: its lookups are ``cat-file``'s (``-t``, ``-s``,
``-p`` of ``HEAD`` resolve the name the same way).

gitodb runs as ``python -S <venv>/bin/gitodb`` (the console script) with
``PYTHONPATH`` naming the source tree and the site-packages that hold its
dependencies: ``-S`` leaves out ``.pth`` start-up hooks of the machine's Python
installation (the development machine has one that imports ``certifi`` at every
interpreter start, 30-40 ms that no user pays).  Byte-code caches are written
first (``compileall``), as an installed wheel has them.  ``--src LABEL=DIR``
(repeatable) compares source trees, e.g. the code before a change
(``git archive <commit> src | tar -x -C /tmp/before``, with the built native
module copied in) against the working tree.

Repositories: ``../shared/corpus/libgit2.git`` (copied to a temporary directory
where git writes a commit-graph) and a refs repository built from it: the libgit2
pack plus 690,000 generated blobs repacked into one 851,981-object pack, and
4,500 refs (its 271 branches and tags plus 4,229 created with ``update-ref
--stdin``), packed with ``pack-refs --all``; and the same repository migrated to
reftable with git 2.55's ``refs migrate``.  They are built once under
``--work`` (default ``benchmarks/work/``).

``--versus-trees`` prints only the whole commands, the least CPU of ``--repeat`` runs
of git 2.55, the ``git`` on ``PATH`` and each ``--src`` tree, all alternating run by
run; ``--src LABEL=DIR@SCRIPT`` runs that tree through another launcher (pip's
console-script wrapper, to compare with the installed ``scripts/gitodb``).

    python benchmarks/bench_startup.py [--repeat N] [--src LABEL=DIR[@SCRIPT] ...]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import run  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus" / "libgit2.git"
GIT = SHARED / "git-2.55" / "git" / "bin" / "git"
ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
ENV.pop("PYTHONDONTWRITEBYTECODE", None)
# gitodb's dependencies (zlib-ng, isal, deflate) wherever this interpreter finds them
SITE = [p for p in sys.path if p.endswith("site-packages")]

STARTUP = [
    ("version", ["version"], "libgit2"),
    ("cat-file -t HEAD", ["cat-file", "-t", "HEAD"], "libgit2"),
    ("cat-file -s HEAD", ["cat-file", "-s", "HEAD"], "libgit2"),
    ("cat-file -p HEAD", ["cat-file", "-p", "HEAD"], "libgit2"),
    ("for-each-ref", ["for-each-ref"], "libgit2"),
    ("show-ref", ["show-ref"], "libgit2"),
    ("rev-list --count --all", ["rev-list", "--count", "--all"], "libgit2"),
    ("ls-tree -r HEAD", ["ls-tree", "-r", "HEAD"], "libgit2"),
    ("log --format=%H", ["log", "--format=%H"], "libgit2"),
]
VERSUS_GIT = [
    ("for-each-ref (files, 4,500 refs, 852k-object pack)", ["for-each-ref"], "refs"),
    ("for-each-ref (reftable, same)", ["for-each-ref"], "reftable"),
    ("show-ref (files, same)", ["show-ref"], "refs"),
    ("show-ref (reftable, same)", ["show-ref"], "reftable"),
    ("cat-file -t HEAD (files, same)", ["cat-file", "-t", "HEAD"], "refs"),
    ("cat-file -t HEAD (reftable, same)", ["cat-file", "-t", "HEAD"], "reftable"),
    ("cat-file -s HEAD (files, same)", ["cat-file", "-s", "HEAD"], "refs"),
    ("cat-file -p HEAD (files, same)", ["cat-file", "-p", "HEAD"], "refs"),
    ("for-each-ref (libgit2, 7,007 packed refs)", ["for-each-ref"], "libgit2"),
    ("cat-file -t HEAD (libgit2)", ["cat-file", "-t", "HEAD"], "libgit2"),
    ("rev-list --count --all (commit-graph)", ["rev-list", "--count", "--all"], "libgit2"),
    ("ls-tree -r HEAD", ["ls-tree", "-r", "HEAD"], "libgit2"),
]

_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)")


def git(*args: str, cwd: Path | None = None, stdin: bytes | None = None) -> bytes:
    """Run git 2.55; return its output."""
    return subprocess.run(
        [str(GIT), *args], cwd=cwd, input=stdin, env=ENV, check=True, capture_output=True
    ).stdout


def build_repos(work: Path) -> dict[str, Path]:
    """The benchmark repositories under ``work`` (built once)."""
    work.mkdir(parents=True, exist_ok=True)
    libgit2 = work / "libgit2.git"
    if not (libgit2 / "objects" / "info" / "commit-graph").exists():
        shutil.rmtree(libgit2, ignore_errors=True)
        shutil.copytree(CORPUS, libgit2)
        subprocess.run(["chmod", "-R", "u+w", str(libgit2)], check=True)
        git("commit-graph", "write", "--reachable", cwd=libgit2)
    refs = work / "refs.git"
    if not (refs / "done").exists():
        shutil.rmtree(refs, ignore_errors=True)
        shutil.copytree(CORPUS, refs)
        subprocess.run(["chmod", "-R", "u+w", str(refs)], check=True)
        blobs = b"".join(
            b"blob\ndata %d\n%s\n" % (len(d), d)
            for d in (b"synthetic blob %d\n" % i for i in range(690_000))
        )
        git("fast-import", "--quiet", cwd=refs, stdin=blobs)
        # -k keeps the unreachable blobs: one pack of every object
        git(
            "-c",
            "pack.writeReverseIndex=true",
            "-c",
            "repack.writeBitmaps=false",
            "repack",
            "-a",
            "-d",
            "-k",
            "--window=0",
            "-q",
            cwd=refs,
        )
        pulls = git("for-each-ref", "--format=delete %(refname)", "refs/pull", cwd=refs)
        git("update-ref", "--stdin", cwd=refs, stdin=pulls)
        kept = len(git("for-each-ref", cwd=refs).splitlines())
        commits = git("rev-list", "--all", cwd=refs).split()
        lines = [
            b"create refs/remotes/origin/pr/%05d %s\n" % (i, oid)
            for i, oid in enumerate(commits[: 4500 - kept])
        ]
        git("update-ref", "--stdin", cwd=refs, stdin=b"".join(lines))
        git("pack-refs", "--all", cwd=refs)
        (refs / "done").write_text("")
    reftable = work / "reftable.git"
    if not (reftable / "done").exists():
        shutil.rmtree(reftable, ignore_errors=True)
        shutil.copytree(refs, reftable)
        git("refs", "migrate", "--ref-format=reftable", cwd=reftable)
    return {"libgit2": libgit2, "refs": refs, "reftable": reftable}


def gitodb_cmd(repo: Path, args: list[str], *extra: str, script: str | None = None) -> list[str]:
    """The command line of one gitodb run: the installed ``gitodb`` command, as users run
    it (or ``script``: another launcher, e.g. pip's console-script wrapper)."""
    installed = Path(sys.executable).parent / "gitodb"
    entry = [script] if script else [str(installed)] if installed.exists() else ["-m", "gitodb"]
    return [sys.executable, "-S", *extra, *entry, f"--git-dir={repo}", *args]


def env_for(src: Path) -> dict[str, str]:
    """The environment that imports gitodb from ``src``."""
    return {**ENV, "PYTHONPATH": os.pathsep.join([str(src), *SITE])}


# In one process: CPU to import the entry point, then the command twice over a fresh
# Repository each time; imports and one-time set-up are what the first run costs more.
_PHASES = """
import io, sys, time
t0 = time.process_time()
from gitodb.cli.main import _main
t1 = time.process_time()
out, sys.stdout = sys.stdout, io.TextIOWrapper(io.BytesIO())
_main(sys.argv[1:])
t2 = time.process_time()
_main(sys.argv[1:])
t3 = time.process_time()
sys.stdout = out
print((t1 - t0) + (t2 - t1) - (t3 - t2))
"""


def startup_cpu(repo: Path, argv: list[str], env: dict[str, str]) -> float:
    """CPU seconds of a command's imports and one-time set-up (see ``_PHASES``)."""
    cmd = [sys.executable, "-S", "-c", _PHASES, f"--git-dir={repo}", *argv]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return float(p.stdout.split()[-1])


def import_times(cmd: list[str], env: dict[str, str]) -> dict[str, int]:
    """Each module's ``importtime`` self time in µs, outside ``site``."""
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    selfs: dict[str, int] = {}
    pending: list[tuple[str, int]] = []
    for line in p.stderr.splitlines():
        m = _IMPORT_LINE.match(line)
        if not m:
            continue
        pending.append((m.group(4), int(m.group(1))))
        if not m.group(3):  # a top-level import closes the tree above it
            if m.group(4) != "site":
                selfs.update(pending)
            pending = []
    return selfs


def import_time(cmd: list[str], env: dict[str, str]) -> tuple[float, int, set[str]]:
    """(summed import time in ms outside ``site``, number of modules, their names)."""
    selfs = import_times(cmd, env)
    return sum(selfs.values()) / 1000, len(selfs), set(selfs)


def least_import_time(runs: list[dict[str, int]]) -> float:
    """The summed least self time of each module over ``runs`` (ms): on a loaded machine
    each module's least disturbed import, steadier than the least total."""
    names = set().union(*runs)
    return sum(min(r.get(n, 0) for r in runs if n in r) for n in names) / 1000


def median_ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f}"


def max_rss_kib(cmd: list[str], env: dict[str, str]) -> int:
    """The max RSS of ``cmd`` as ``/usr/bin/time`` reports it.

    ``wait4``'s ``ru_maxrss`` of a child of this process counts the pages it had as
    a copy of this interpreter before ``exec`` (about 22 MB here, more than a short
    git command uses); ``time`` is a small process, so its child's figure is the
    command's own.
    """
    p = subprocess.run(
        ["/usr/bin/time", "-f", "%M", *cmd],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    return int(p.stderr.split()[-1])


def versus_git(
    rows: list[tuple[str, list[str], Path]], env: dict[str, str], repeat: int
) -> list[str]:
    """Markdown rows: each command under git 2.55 and gitodb, alternating run by run:
    median CPU of each, the ratio, max RSS of each (median of ``max_rss_kib``), and
    whether the output bytes are git's."""
    out = [
        "| command | git 2.55 CPU ms | gitodb CPU ms | CPU ratio | git max RSS MB "
        "| gitodb max RSS MB | RSS ratio | same bytes |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for title, argv, repo in rows:
        gcmd = [str(GIT), f"--git-dir={repo}", *argv]
        ocmd = gitodb_cmd(repo, argv)
        same = (
            subprocess.run(gcmd, env=ENV, capture_output=True, check=True).stdout
            == subprocess.run(ocmd, env=env, capture_output=True, check=True).stdout
        )
        g, o = [], []
        for _ in range(repeat):
            g.append(run(gcmd, env=ENV))
            o.append(run(ocmd, env=env))
        g_cpu = statistics.median(r[1] for r in g)
        o_cpu = statistics.median(r[1] for r in o)
        g_rss = statistics.median(max_rss_kib(gcmd, ENV) for _ in range(3)) / 1024
        o_rss = statistics.median(max_rss_kib(ocmd, env) for _ in range(3)) / 1024
        out.append(
            f"| {title} | {g_cpu * 1000:.1f} | {o_cpu * 1000:.1f} | {o_cpu / g_cpu:.1f}x | "
            f"{g_rss:.1f} | {o_rss:.1f} | {o_rss / g_rss:.1f}x | {'yes' if same else 'NO'} |"
        )
    return out


def versus_trees(
    rows: list[tuple[str, list[str], Path]], srcs: list[tuple[str, str]], repeat: int
) -> list[str]:
    """Markdown rows: the least CPU of ``repeat`` runs of each command under git 2.55,
    the ``git`` on PATH (not for reftable) and each source tree (``DIR[@SCRIPT]``: the
    tree run through that launcher), all alternating run by run; ratios to git 2.55."""
    labels = [label for label, _ in srcs]
    out = [
        "| command | git 2.55 ms | git (PATH) ms | "
        + " | ".join(f"{lb} ms" for lb in labels)
        + " | "
        + " | ".join(f"{lb} / git 2.55" for lb in labels)
        + " |",
        "|---|---:|---:|" + "---:|" * (2 * len(labels)),
    ]
    for title, argv, repo in rows:
        cmds = [(str(GIT), [str(GIT), f"--git-dir={repo}", *argv], ENV)]
        if "reftable" not in repo.name:
            cmds.append(("git", ["git", f"--git-dir={repo}", *argv], ENV))
        for label, src in srcs:
            tree, _, script = src.partition("@")
            cmds.append((label, gitodb_cmd(repo, argv, script=script or None), env_for(Path(tree))))
        best = dict.fromkeys((c[0] for c in cmds), float("inf"))
        for _ in range(repeat):
            for label, cmd, env in cmds:
                best[label] = min(best[label], run(cmd, env=env)[1])
        g = best[str(GIT)]
        cells = [f"{g * 1000:.1f}", f"{best['git'] * 1000:.1f}" if "git" in best else "-"]
        cells += [f"{best[lb] * 1000:.1f}" for lb in labels]
        cells += [f"{best[lb] / g:.1f}x" for lb in labels]
        out.append(f"| {title} | " + " | ".join(cells) + " |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--src", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--work", type=Path, default=HERE / "work")
    parser.add_argument(
        "--versus-trees",
        action="store_true",
        help="only the whole commands: least CPU of each tree (--src DIR[@SCRIPT]) and git",
    )
    args = parser.parse_args()
    srcs = [tuple(s.split("=", 1)) for s in args.src] or [("now", str(ROOT / "src"))]
    for _, src in srcs:
        tree = src.partition("@")[0]
        subprocess.run([sys.executable, "-m", "compileall", "-q", tree], check=True, env=ENV)
    repos = build_repos(args.work)
    if args.versus_trees:
        print(f"least CPU of {args.repeat} runs; load average {os.getloadavg()[0]:.1f}")
        rows = [(title, argv, repos[repo]) for title, argv, repo in VERSUS_GIT + STARTUP[-3:]]
        print("\n".join(versus_trees(rows, srcs, args.repeat)))
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
        return
    load = os.getloadavg()[0]
    print(f"python {sys.version.split()[0]}, {GIT} ({git('--version').decode().strip()})")
    print(
        f"CPU: median of {args.repeat} runs; imports: minimum of {args.repeat}; "
        f"load average {load:.1f} at the start\n"
    )

    # Start-up: imports and CPU of each command, per source tree.
    head = ["command"] + [f"{label} modules" for label, _ in srcs]
    head += [f"{label} importtime ms (per-module least)" for label, _ in srcs]
    head += [f"{label} start-up CPU ms" for label, _ in srcs]
    head += [f"{label} CPU ms" for label, _ in srcs] + ["`python -S -c pass` CPU ms"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    bare = [run([sys.executable, "-S", "-c", "pass"])[1] for _ in range(args.repeat)]
    for title, argv, repo in STARTUP:
        counts, imports, starts, cpus = [], [], [], []
        for _label, src in srcs:
            tree, _, script = src.partition("@")
            env = env_for(Path(tree))
            cmd = gitodb_cmd(repos[repo], argv, script=script or None)
            runs = [
                import_times(
                    gitodb_cmd(repos[repo], argv, "-X", "importtime", script=script or None), env
                )
                for _ in range(args.repeat)
            ]
            counts.append(str(len(runs[-1])))
            imports.append(
                f"{min(sum(r.values()) for r in runs) / 1000:.1f} ({least_import_time(runs):.1f})"
            )
            starts.append(
                median_ms([startup_cpu(repos[repo], argv, env) for _ in range(args.repeat)])
            )
            cpus.append(median_ms([run(cmd, env=env)[1] for _ in range(args.repeat)]))
        cells = counts + imports + starts + cpus
        print(f"| {title} | " + " | ".join(cells) + f" | {median_ms(bare)} |")

    # Whole commands against git, alternating.
    label, src = srcs[-1]
    env = env_for(Path(src.partition("@")[0]))
    print(f"\nWhole commands against git 2.55 ({label}):\n")
    rows = [(title, argv, repos[repo]) for title, argv, repo in VERSUS_GIT]
    print("\n".join(versus_git(rows, env, args.repeat)))
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
