"""for-each-ref and show-ref against git 2.55 and 2.39 on 4,500 refs, an 852k-object pack.

The repositories are ``bench_startup``'s (built once under ``--work``): the libgit2
pack plus 690,000 generated blobs in one 851,981-object pack with 4,500 packed refs,
and the same migrated to reftable with git 2.55 (git 2.39 cannot read reftable).

For each ref backend and format: CPU (user + sys of the child, from ``wait4``), the
best of ``--repeat`` runs, gitodb and the gits alternating run by run, start-up
included; the ratio to git 2.55; max RSS as ``/usr/bin/time`` reports it (median of
three); and whether the output bytes are git 2.55's.  gitodb runs as
``python -S <venv>/bin/gitodb`` (no ``.pth`` start-up hooks of the machine's Python;
see ``bench_startup``), from each ``--src LABEL=DIR`` source tree (default: this
one), e.g. the code before a change with the built native module copied in;
``LABEL=DIR@SCRIPT`` runs that tree through another launcher (the ``scripts/gitodb``
of its time).

    python benchmarks/bench_for_each_ref.py [--repeat N] [--src LABEL=DIR[@SCRIPT] ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import run  # noqa: E402
from bench_startup import (  # noqa: E402
    ENV,
    GIT,
    HERE,
    ROOT,
    build_repos,
    env_for,
    gitodb_cmd,
    max_rss_kib,
)

#: (title, command line after the global options): for-each-ref's formats, then
#: show-ref (the same listing with an existence check per ref)
FORMATS = [
    ("default", ["for-each-ref"]),
    (
        "refname objectname objecttype",
        ["for-each-ref", "--format=%(refname) %(objectname) %(objecttype)"],
    ),
    ("objectsize", ["for-each-ref", "--format=%(objectsize) %(refname)"]),
    ("*objectname (peeled)", ["for-each-ref", "--format=%(refname) %(*objectname)"]),
    ("refs/tags/ (a pattern)", ["for-each-ref", "refs/tags/"]),
    ("show-ref", ["show-ref"]),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--src", action="append", default=[], metavar="LABEL=DIR[@SCRIPT]")
    parser.add_argument("--work", type=Path, default=HERE / "work")
    parser.add_argument("--git239", default="git", help="git 2.39 (default: git on PATH)")
    args = parser.parse_args()
    srcs = [tuple(s.split("=", 1)) for s in args.src] or [("gitodb", str(ROOT / "src"))]
    for _, src in srcs:
        tree = src.partition("@")[0]
        subprocess.run([sys.executable, "-m", "compileall", "-q", tree], check=True, env=ENV)
    repos = build_repos(args.work)
    git239 = subprocess.run(
        [args.git239, "--version"], capture_output=True, text=True, check=True
    ).stdout.split()[-1]
    print(f"python {sys.version.split()[0]}; git 2.55: {GIT}; git {git239}: {args.git239}")
    print(
        f"CPU: best of {args.repeat} alternating runs; max RSS: median of 3; "
        f"load average {os.getloadavg()[0]:.1f} at the start\n"
    )
    tools = [label for label, _ in srcs]
    head = ["refs", "format", "git 2.55 ms", f"git {git239} ms"]
    head += [f"{t} ms" for t in tools] + [f"{t} / git 2.55" for t in tools]
    head += ["git 2.55 MB"] + [f"{t} MB" for t in tools] + ["same bytes"]
    print("| " + " | ".join(head) + " |")
    print("|---|---|" + "---:|" * (len(head) - 3) + "---|")
    for backend in ("refs", "reftable"):
        repo = repos[backend]
        for title, argv in FORMATS:
            cmds: dict[str, tuple[list[str], dict[str, str]]] = {
                "git": ([str(GIT), f"--git-dir={repo}", *argv], ENV)
            }
            if backend == "refs":
                cmds["old"] = ([args.git239, f"--git-dir={repo}", *argv], ENV)
            for label, src in srcs:
                # DIR@SCRIPT: that tree through another launcher (an older scripts/gitodb)
                tree, _, script = src.partition("@")
                cmds[label] = (gitodb_cmd(repo, argv, script=script or None), env_for(Path(tree)))
            want = subprocess.run(cmds["git"][0], env=ENV, capture_output=True, check=True)
            same = all(
                subprocess.run(c, env=e, capture_output=True, check=True).stdout == want.stdout
                for k, (c, e) in cmds.items()
                if k in tools
            )
            best = {k: float("inf") for k in cmds}
            for _ in range(args.repeat):
                for k, (c, e) in cmds.items():
                    best[k] = min(best[k], run(c, env=e)[1])
            rss = {
                k: sorted(max_rss_kib(c, e) for _ in range(3))[1] / 1024
                for k, (c, e) in cmds.items()
                if k == "git" or k in tools
            }
            g = best["git"]
            cells = [
                "files" if backend == "refs" else "reftable",
                title,
                f"{g * 1000:.1f}",
                f"{best['old'] * 1000:.1f}" if "old" in best else "(cannot read reftable)",
            ]
            cells += [f"{best[t] * 1000:.1f}" for t in tools]
            cells += [f"{best[t] / g:.1f}x" for t in tools]
            cells += [f"{rss['git']:.1f}"] + [f"{rss[t]:.1f}" for t in tools]
            cells.append("yes" if same else "NO")
            print("| " + " | ".join(cells) + " |")
    bare = min(run([sys.executable, "-S", "-c", "pass"])[1] for _ in range(args.repeat))
    print(f"\n`python -S -c pass`: {bare * 1000:.1f} ms CPU (best of {args.repeat})")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
