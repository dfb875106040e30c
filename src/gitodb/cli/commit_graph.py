"""``gitodb commit-graph write|verify``: Git's commit-graph files, like ``git commit-graph``.

``write`` takes ``--reachable``, ``--stdin-commits``, ``--stdin-packs`` (default:
the commits of every pack), ``--append``, ``--[no-]changed-paths``,
``--split[=no-merge|replace]`` with ``--size-multiple``, ``--max-commits`` and
``--expire-time``, and ``--object-dir``; ``verify`` takes ``--shallow``
and ``--object-dir``.  ``--progress`` (default: when stderr is a terminal) prints
each phase's final progress line.
A thin shell over ``gitodb.history.commitgraph_write``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from gitodb.errors import GitodbError

USAGE = """\
usage: git commit-graph verify [--object-dir <dir>] [--shallow] [--[no-]progress]
   or: git commit-graph write [--object-dir <dir>] [--append]
                              [--split[=<strategy>]] [--reachable | --stdin-packs | --stdin-commits]
                              [--changed-paths] [--[no-]max-new-filters <n>] [--[no-]progress]
                              <split-options>

    --[no-]object-dir <dir>
                          the object directory to store the graph

"""

WRITE_USAGE = """\
usage: git commit-graph write [--object-dir <dir>] [--append]
                              [--split[=<strategy>]] [--reachable | --stdin-packs | --stdin-commits]
                              [--changed-paths] [--[no-]max-new-filters <n>] [--[no-]progress]
                              <split-options>

    --[no-]object-dir <dir>
                          the object directory to store the graph
    --[no-]reachable      start walk at all refs
    --[no-]stdin-packs    scan pack-indexes listed by stdin for commits
    --[no-]stdin-commits  start walk at commits listed by stdin
    --[no-]append         include all commits already in the commit-graph file
    --[no-]changed-paths  enable computation for changed paths
    --split[=...]         allow writing an incremental commit-graph file
    --[no-]max-commits <n>
                          maximum number of commits in a non-base split commit-graph
    --[no-]size-multiple <n>
                          maximum ratio between two levels of a split commit-graph
    --[no-]expire-time <expiry-date>
                          only expire files older than a given date-time
    --[no-]max-new-filters ...
                          maximum number of changed-path Bloom filters to compute
    --[no-]progress       force progress reporting

"""

VERIFY_USAGE = """\
usage: git commit-graph verify [--object-dir <dir>] [--shallow] [--[no-]progress]

    --[no-]object-dir <dir>
                          the object directory to store the graph
    --[no-]shallow        if the commit-graph is split, only verify the tip file
    --[no-]progress       force progress reporting

"""

_UNSUPPORTED = ("--max-new-filters",)
_SPLIT_VALUES = ("--max-commits", "--size-multiple", "--expire-time")


def _usage(text: str, message: str | None = None, to_stdout: bool = False) -> int:
    if message:
        sys.stderr.write(f"error: {message}\n")
    (sys.stdout if to_stdout else sys.stderr).write(text)
    return 129


def _check_object_dir(repo: Any, value: str | None) -> None:
    if value is None:
        return
    if os.path.realpath(value) != os.path.realpath(repo.odb.objects_dir):
        raise GitodbError(f"could not find object directory matching {value}")


def run(argv: list[str], ctx: Any) -> int:
    """Dispatch ``write`` and ``verify``."""
    if not argv:
        return _usage(USAGE, "need a subcommand")
    if argv[0] in ("-h", "--help"):
        return _usage(USAGE, to_stdout=True)
    sub, rest = argv[0], argv[1:]
    if sub == "write":
        return _write(rest, ctx)
    if sub == "verify":
        return _verify(rest, ctx)
    return _usage(USAGE, f"unknown subcommand: `{sub}'")


def _write(argv: list[str], ctx: Any) -> int:
    from gitodb.history.commitgraph_write import write_commit_graph

    if argv == ["-h"]:
        return _usage(WRITE_USAGE, to_stdout=True)
    flags = {"reachable": False, "stdin-packs": False, "stdin-commits": False, "append": False}
    changed: bool | None = None
    show_progress = sys.stderr.isatty()
    split: str | None = None
    split_opts: dict[str, str] = {}
    object_dir: str | None = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        name = arg[2:] if arg.startswith("--") else None
        if name in flags:
            flags[name] = True
        elif name is not None and name.startswith("no-") and name[3:] in flags:
            flags[name[3:]] = False
        elif arg == "--changed-paths":
            changed = True
        elif arg == "--no-changed-paths":
            changed = False
        elif arg in ("--progress", "--no-progress"):
            show_progress = arg == "--progress"
        elif arg == "--split":
            split = "merge"
        elif arg.startswith("--split="):
            split = arg[8:]
            if split not in ("no-merge", "replace"):
                raise GitodbError(f"unrecognized --split argument, {split}")
        elif arg == "--object-dir" and i < len(argv):
            object_dir = argv[i]
            i += 1
        elif arg.startswith("--object-dir="):
            object_dir = arg[13:]
        elif arg.split("=", 1)[0] in _SPLIT_VALUES:
            key = arg.split("=", 1)[0]
            if "=" in arg:
                split_opts[key] = arg.split("=", 1)[1]
            elif i < len(argv):
                split_opts[key] = argv[i]
                i += 1
            else:
                return _usage(WRITE_USAGE, f"option `{key[2:]}' requires a value")
        elif arg.split("=", 1)[0] in _UNSUPPORTED:
            raise GitodbError(f"gitodb commit-graph write does not support {arg.split('=')[0]}")
        else:
            what = (
                f"unknown option `{arg[2:]}'"
                if arg.startswith("--")
                else (f"unknown switch `{arg[1:2]}'" if arg.startswith("-") else None)
            )
            return _usage(WRITE_USAGE, what)
    if sum(flags[k] for k in ("reachable", "stdin-packs", "stdin-commits")) > 1:
        raise GitodbError("use at most one of --reachable, --stdin-commits, or --stdin-packs")
    repo = ctx.open_repository()
    _check_object_dir(repo, object_dir)
    commits = packs = None
    if show_progress:
        title = (
            "Collecting referenced commits"
            if flags["reachable"]
            else "Collecting commits from input"
            if flags["stdin-commits"]
            else "Finding commits for commit graph among packed objects"
        )
    if flags["stdin-commits"]:
        hexsz = repo.object_format.hexsz
        commits = []
        for raw in sys.stdin.buffer.read().split(b"\n"):
            line = raw.strip()
            if not line:
                continue
            text = line.decode("utf-8", "surrogateescape")
            try:
                if len(text) < hexsz:
                    raise ValueError(text)
                commits.append(bytes.fromhex(text[:hexsz]))
            except ValueError:
                sys.stderr.write(f"error: unexpected non-hex object ID: {text}\n")
                return 1
    elif flags["stdin-packs"]:
        packs = [
            ln.decode("utf-8", "surrogateescape").strip()
            for ln in sys.stdin.buffer.read().split(b"\n")
            if ln.strip()
        ]
    from gitodb.history.commitgraph_write import CommitGraphInputError

    if show_progress:
        n = len(commits) if commits is not None else len(packs) if packs is not None else 0
        _progress(title, n)
    try:
        write_commit_graph(
            repo,
            reachable=flags["reachable"],
            commits=commits,
            packs=packs,
            changed_paths=changed,
            split=split is not None,
            replace=split == "replace",
            merge=split == "merge",
            **_split_values(split_opts),
            append=flags["append"],
            progress=_progress if show_progress else None,
        )
    except CommitGraphInputError as e:
        sys.stderr.write(f"error: {e.message}\n")
        return 1
    return 0


def _split_values(opts: dict[str, str]) -> dict[str, Any]:
    """``--size-multiple``, ``--max-commits`` (integers) and ``--expire-time`` (a date)."""
    from gitodb.refs.expire import parse_expiry

    out: dict[str, Any] = {}
    for key, name in (("--size-multiple", "size_multiple"), ("--max-commits", "max_commits")):
        if key in opts:
            try:
                out[name] = int(opts[key], 0)
            except ValueError:
                raise GitodbError(f"option `{key[2:]}' expects an integer value") from None
    if "--expire-time" in opts:
        # Git reads 0 ("never") as unset: the default, now.
        out["expire_time"] = parse_expiry(opts["--expire-time"]) or None
    return out


def _emit(line: str) -> None:
    sys.stderr.write(line + "\n")


def _progress(title: str, count: int) -> None:
    """Git's final progress line of a phase (the meter itself is not animated)."""
    sys.stderr.write(f"{title}: 100% ({count}/{count}), done.\n")


def _verify(argv: list[str], ctx: Any) -> int:
    from gitodb.history.commitgraph_write import verify_commit_graph

    if argv == ["-h"]:
        return _usage(VERIFY_USAGE, to_stdout=True)
    shallow = False
    show_progress = sys.stderr.isatty()
    object_dir: str | None = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--shallow":
            shallow = True
        elif arg == "--no-shallow":
            shallow = False
        elif arg in ("--progress", "--no-progress"):
            show_progress = arg == "--progress"
        elif arg == "--object-dir" and i < len(argv):
            object_dir = argv[i]
            i += 1
        elif arg.startswith("--object-dir="):
            object_dir = arg[13:]
        else:
            what = (
                f"unknown option `{arg[2:]}'"
                if arg.startswith("--")
                else (f"unknown switch `{arg[1:2]}'" if arg.startswith("-") else None)
            )
            return _usage(VERIFY_USAGE, what)
    repo = ctx.open_repository()
    _check_object_dir(repo, object_dir)
    sys.stdout.flush()
    # Git prints verify's findings as bare lines, and exits with their kinds as bits.
    _lines, status = verify_commit_graph(repo, shallow=shallow, emit=_emit)
    if show_progress:
        from gitodb.history.commitgraph import load_commit_graph

        g = load_commit_graph(repo.odb.objects_dir, repo.object_format)
        if g is not None:
            _progress("Verifying commits in commit graph", g.total_commits)
    return status
