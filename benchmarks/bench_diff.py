"""Time ``gitodb diff-tree`` patches against git's on real history.

On a repository (default: ``../shared/corpus/libgit2.git``) the first-parent
chain of HEAD is fed to ``diff-tree --stdin`` as ``<commit> <first parent>`` lines
(so merges are diffed against their first parent, the root against nothing with
``--root``), for ``-p``, ``-p -M`` and ``--stat``.  Each command runs under git and
gitodb alternately, best of ``--repeat`` runs: CPU time (user + sys), wall time and
the maximum resident set size of the process; the outputs are compared byte for
byte first (a difference is an error).  Prints a Markdown table.  ``--pure`` also
times gitodb with ``GITODB_PURE_DIFF=1`` (the line diff in Python, the reference),
in the same alternation.

    python benchmarks/bench_diff.py [--repo PATH] [--repeat N] [--git GIT] [--limit N] [--pure]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _measure import measure_best

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent.parent / "shared" / "corpus" / "libgit2.git"
ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
ENV.pop("PYTHONDONTWRITEBYTECODE", None)
ENV.pop("COLUMNS", None)  # --stat lays out for 80 columns on both sides

COMMANDS = [
    ("diff-tree --stdin -p --root", ["diff-tree", "--stdin", "-p", "--root"]),
    ("diff-tree --stdin -p -M --root", ["diff-tree", "--stdin", "-p", "-M", "--root"]),
    ("diff-tree --stdin --stat --root", ["diff-tree", "--stdin", "--stat", "--root"]),
]


def first_parent_pairs(git: str, repo: Path, limit: int) -> bytes:
    """``<commit> [<first parent>]`` lines for HEAD's first-parent chain."""
    args = [git, "-C", str(repo), "rev-list", "--first-parent", "--parents", "HEAD"]
    if limit:
        args[4:4] = [f"-n{limit}"]
    out = subprocess.run(args, capture_output=True, check=True, env=ENV).stdout
    return b"".join(b" ".join(line.split()[:2]) + b"\n" for line in out.splitlines())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, default=CORPUS)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--git", default="git")
    ap.add_argument("--limit", type=int, default=0, help="only the first N commits")
    ap.add_argument("--pure", action="store_true", help="also time GITODB_PURE_DIFF=1")
    args = ap.parse_args()
    if not args.repo.is_dir():
        print(f"no repository at {args.repo}", file=sys.stderr)
        return 1
    gitodb = [sys.executable, "-m", "gitodb"]
    pairs = first_parent_pairs(args.git, args.repo, args.limit)
    version = subprocess.run([args.git, "version"], capture_output=True, text=True).stdout
    rows = []
    with tempfile.NamedTemporaryFile(suffix=".pairs") as f:
        f.write(pairs)
        f.flush()
        for label, cmd in COMMANDS:
            outs = []
            for prog in ([args.git], gitodb):
                with open(f.name, "rb") as fin:
                    outs.append(
                        subprocess.run(
                            [*prog, *cmd],
                            stdin=fin,
                            capture_output=True,
                            check=True,
                            env=ENV,
                            cwd=args.repo,
                        ).stdout
                    )
            if outs[0] != outs[1]:
                print(f"{label}: gitodb's output differs from git's", file=sys.stderr)
                return 1
            best: dict[str, tuple[float, float, int]] = {}
            progs = [("git", [args.git], ENV), ("gitodb", gitodb, ENV)]
            if args.pure:
                progs.append(("pure", gitodb, {**ENV, "GITODB_PURE_DIFF": "1"}))
            for _ in range(args.repeat):  # alternate, so all see the same load
                for name, prog, env in progs:
                    got = measure_best([*prog, *cmd], 1, env=env, cwd=str(args.repo), stdin=f.name)
                    old = best.get(name)
                    best[name] = got if old is None else tuple(map(min, old, got))  # type: ignore[assignment]
            rows.append((label, len(outs[0]), best["git"], best["gitodb"], best.get("pure")))
    commits = pairs.count(b"\n")
    print(
        f"{commits} first-parent commits of {args.repo.name}; {version.strip()}; "
        f"best of {args.repeat}\n"
    )
    pure_head = " pure-diff CPU s | pure ratio |" if args.pure else ""
    print(
        "| command | output | git CPU s | gitodb CPU s | CPU ratio |" + pure_head + " git wall s"
        " | gitodb wall s | git max RSS MiB | gitodb max RSS MiB |"
    )
    print("|---|---|---|---|---|" + ("---|---|" if args.pure else "") + "---|---|---|---|")
    for label, size, g, o, p in rows:
        pure = f" {p[1]:.2f} | {p[1] / g[1]:.1f}x |" if p is not None else ""
        print(
            f"| `{label}` | {size / 2**20:.1f} MiB | {g[1]:.2f} | {o[1]:.2f} | {o[1] / g[1]:.1f}x |"
            f"{pure} {g[0]:.2f} | {o[0]:.2f} | {g[2] / 1024:.0f} | {o[2] / 1024:.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
