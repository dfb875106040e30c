"""``rev-list --use-bitmap-index --objects [--filter=...] --all``: git against gitodb
(this tree) and, optionally, another gitodb source tree (``--old-src``: the code
before a change, its native module copied in), CPU = user + sys of each process,
best of ``--repeat``, the sides alternating run by run.

The repository needs a bitmap (``git repack -adb`` on a copy of the corpus).
Prints a Markdown table: the output is compared with git's as a set (the bitmap
lists ids only, and the order of objects outside the bitmap may differ).

    python benchmarks/bench_bitmap_filters.py --repo /tmp/lg2bm --old-src /tmp/oldsrc/src
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_startup import env_for, gitodb_cmd  # noqa: E402

SRC = Path(__file__).resolve().parents[1] / "src"
CASES = [
    [],
    ["--filter=blob:none"],
    ["--filter=blob:limit=1000"],
    ["--filter=tree:0"],
    ["--filter=object:type=commit"],
]


def _run(cmd: list[str], env: dict[str, str] | None) -> tuple[float, bytes]:
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert p.stdout is not None
    out = p.stdout.read()
    _pid, _status, ru = os.wait4(p.pid, 0)
    return ru.ru_utime + ru.ru_stime, out


def _ids(out: bytes) -> list[bytes]:
    return sorted(line.split()[0] for line in out.splitlines() if line)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--old-src", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}", end="")
    print("\n| filter | git CPU s | old CPU s | gitodb CPU s | ratio to git | objects | same set |")
    print("|---|---|---|---|---|---|---|")
    for case in CASES:
        args = ["rev-list", "--use-bitmap-index", "--objects", *case, "--all"]
        sides: dict[str, tuple[list[str], dict[str, str] | None]] = {
            "git": (["git", f"--git-dir={a.repo}", *args], None),
            "new": (gitodb_cmd(a.repo, args), env_for(SRC)),
        }
        if a.old_src is not None:
            sides["old"] = (gitodb_cmd(a.repo, args), env_for(a.old_src))
        best = dict.fromkeys(sides, float("inf"))
        outs: dict[str, bytes] = {}
        for _ in range(a.repeat):
            for k, (cmd, env) in sides.items():
                cpu, outs[k] = _run(cmd, env)
                best[k] = min(best[k], cpu)
        same = all(_ids(o) == _ids(outs["git"]) for o in outs.values())
        old = f"{best['old']:.3f}" if "old" in best else "-"
        ratio = best["new"] / best["git"]
        print(
            f"| {' '.join(case) or '(none)'} | {best['git']:.3f} | {old} | {best['new']:.3f} "
            f"| {ratio:.1f}x | {len(_ids(outs['git']))} | {'yes' if same else 'NO'} |"
        )
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
