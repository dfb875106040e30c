"""for-each-ref and show-ref over loose refs: gitodb source trees against git 2.55.

The repository is ``bench_startup``'s libgit2 one (its packed refs) with ``--loose``
more loose refs written under ``refs/heads/loose/`` and ``refs/tags/loose/`` (in a
copy under ``--copy-to``, by default ``--work``).  Listing them is a directory
scan plus one read per file, which is what a change to the loose-ref scan moves.
CPU (user + sys, ``wait4``) best of ``--repeat`` runs, every tool in turn run by
run, and max RSS; gitodb as
``python -S <venv>/bin/gitodb`` from each ``--src LABEL=DIR`` tree (default: this one).

    python benchmarks/bench_loose_refs.py [--loose N] [--repeat N] [--copy-to DIR]
        [--src LABEL=DIR ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import run  # noqa: E402
from bench_startup import ENV, GIT, HERE, ROOT, build_repos, env_for, gitodb_cmd  # noqa: E402

COMMANDS = [("for-each-ref", ["for-each-ref"]), ("show-ref", ["show-ref"])]


def _with_loose(src: Path, dest: Path, n: int) -> Path:
    """A copy of ``src`` with ``n`` loose refs (half branches, half tags) at its HEAD."""
    marker = dest / f"loose-{n}"
    if marker.exists():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest, symlinks=True)
    head = subprocess.run(
        [str(GIT), f"--git-dir={dest}", "rev-parse", "HEAD"],
        capture_output=True,
        check=True,
        env=ENV,
    ).stdout
    for kind in ("heads", "tags"):
        d = dest / "refs" / kind / "loose"
        d.mkdir(parents=True, exist_ok=True)
        for i in range(n // 2):
            (d / f"r{i:06d}").write_bytes(head)
    marker.write_text("")
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loose", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--src", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--work", type=Path, default=HERE / "work")
    parser.add_argument("--copy-to", type=Path, help="where the copy goes (default: --work)")
    args = parser.parse_args()
    srcs = [tuple(s.split("=", 1)) for s in args.src] or [("gitodb", str(ROOT / "src"))]
    for _, src in srcs:
        subprocess.run([sys.executable, "-m", "compileall", "-q", src], check=True, env=ENV)
    base = build_repos(args.work)["libgit2"]
    repo = _with_loose(base, (args.copy_to or args.work) / "loose-refs.git", args.loose)
    print(f"{args.loose} loose refs + the packed refs of {base.name}; git 2.55: {GIT}")
    print(f"CPU: best of {args.repeat}, run in turn; load average {os.getloadavg()[0]:.1f}\n")
    tools = [label for label, _ in srcs]
    head = ["command", "git 2.55 ms", *(f"{t} ms" for t in tools), *(f"{t} / git" for t in tools)]
    head += ["git MB", *(f"{t} MB" for t in tools), "same bytes"]
    print("| " + " | ".join(head) + " |")
    print("|---|" + "---:|" * (len(head) - 2) + "---|")
    for title, argv in COMMANDS:
        cmds = {"git": ([str(GIT), f"--git-dir={repo}", *argv], ENV)}
        for label, src in srcs:
            cmds[label] = (gitodb_cmd(repo, argv), env_for(Path(src)))
        want = subprocess.run(cmds["git"][0], env=ENV, capture_output=True, check=True).stdout
        same = all(
            subprocess.run(c, env=e, capture_output=True, check=True).stdout == want
            for k, (c, e) in cmds.items()
            if k != "git"
        )
        best = {k: float("inf") for k in cmds}
        rss = {k: 0 for k in cmds}
        for _ in range(args.repeat):
            for k, (c, e) in cmds.items():
                _wall, cpu, maxrss = run(c, env=e)
                best[k] = min(best[k], cpu)
                rss[k] = max(rss[k], maxrss)
        g = best["git"]
        cells = [title, f"{g * 1000:.1f}", *(f"{best[t] * 1000:.1f}" for t in tools)]
        cells += [f"{best[t] / g:.1f}x" for t in tools]
        cells += [f"{rss[k] / 1024:.1f}" for k in ("git", *tools)]
        cells.append("yes" if same else "NO")
        print("| " + " | ".join(cells) + " |")
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
