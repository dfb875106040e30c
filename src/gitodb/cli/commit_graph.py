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

from gitodb.cli.options import Option, OptionParser, UsageError
from gitodb.errors import GitodbError


def _max_new_filters(values: Any, value: str | None, unset: bool) -> None:
    """``--max-new-filters=<n>`` (a negative one: no limit); ``--no-max-new-filters``."""
    if unset:
        values.max_new_filters = -1
        return
    assert value is not None
    try:
        values.max_new_filters = int(value, 10)
    except ValueError:
        raise UsageError(
            stderr="error: option `max-new-filters' expects a numerical value\n"
        ) from None


_OBJECT_DIR = Option(
    None, "object-dir", "string", "the object directory to store the graph", argh="dir"
)
_PROGRESS = Option(None, "progress", "bool", "force progress reporting", default=None)


def _set_split(values: Any, value: str | None, unset: bool) -> None:
    if value is not None and value not in ("no-merge", "replace"):
        raise GitodbError(f"unrecognized --split argument, {value}")
    values.split = value or "merge"


PARSER = OptionParser(
    "commit-graph",
    [
        "verify [--object-dir <dir>] [--shallow] [--[no-]progress]",
        "write [--object-dir <dir>] [--append]\n"
        "                       [--split[=<strategy>]] [--reachable | --stdin-packs | "
        "--stdin-commits]\n"
        "                       [--changed-paths] [--[no-]max-new-filters <n>] [--[no-]progress]\n"
        "                       <split-options>",
    ],
    [_OBJECT_DIR],
)
WRITE_PARSER = OptionParser(
    "commit-graph write",
    [
        "[--object-dir <dir>] [--append]\n"
        "[--split[=<strategy>]] [--reachable | --stdin-packs | --stdin-commits]\n"
        "[--changed-paths] [--[no-]max-new-filters <n>] [--[no-]progress]\n"
        "<split-options>",
    ],
    [
        _OBJECT_DIR,
        Option(None, "reachable", "bool", "start walk at all refs"),
        Option(None, "stdin-packs", "bool", "scan pack-indexes listed by stdin for commits"),
        Option(None, "stdin-commits", "bool", "start walk at commits listed by stdin"),
        Option(None, "append", "bool", "include all commits already in the commit-graph file"),
        Option(
            None,
            "changed-paths",
            "callback",
            "enable computation for changed paths",
            callback=lambda values, _v, unset: setattr(values, "changed_paths", not unset),
        ),
        Option(
            None,
            "split",
            "callback",
            "allow writing an incremental commit-graph file",
            argh="...",
            literal_argh=True,
            takes_value=True,
            optional_value=True,
            negatable=False,
            callback=_set_split,
        ),
        Option(
            None,
            "max-commits",
            "string",
            "maximum number of commits in a non-base split commit-graph",
            argh="n",
        ),
        Option(
            None,
            "size-multiple",
            "string",
            "maximum ratio between two levels of a split commit-graph",
            argh="n",
        ),
        Option(
            None,
            "expire-time",
            "string",
            "only expire files older than a given date-time",
            argh="expiry-date",
        ),
        Option(
            None,
            "max-new-filters",
            "callback",
            "maximum number of changed-path Bloom filters to compute",
            argh="...",
            literal_argh=True,
            takes_value=True,
            callback=_max_new_filters,
        ),
        _PROGRESS,
    ],
)
VERIFY_PARSER = OptionParser(
    "commit-graph verify",
    ["[--object-dir <dir>] [--shallow] [--[no-]progress]"],
    [
        _OBJECT_DIR,
        Option(None, "shallow", "bool", "if the commit-graph is split, only verify the tip file"),
        _PROGRESS,
    ],
)


def _object_dir(repo: Any, value: str | None) -> str:
    """The repository's object directory ``--object-dir`` names: its own or one of its
    alternates (as Git, compared as real paths); the own without the option."""
    if value is None:
        return str(repo.odb.objects_dir)
    want = os.path.realpath(value)
    for d in repo.odb.dirs:
        if os.path.realpath(d.path) == want:
            return str(d.path)
    raise GitodbError(f"could not find object directory matching {value}")


def run(argv: list[str], ctx: Any) -> int:
    """Dispatch ``write`` and ``verify``."""
    # Git's top-level options come before the subcommand (only --object-dir)
    values = PARSER.defaults()
    _opts, rest = OptionParser(
        "commit-graph", PARSER.usage, PARSER.options, stop_at_non_option=True
    ).parse(argv, values)
    if not rest:
        raise PARSER.usage_error("need a subcommand")
    sub, rest = rest[0], rest[1:]
    if sub not in ("write", "verify"):
        raise PARSER.usage_error(f"unknown subcommand: `{sub}'")
    parser = WRITE_PARSER if sub == "write" else VERIFY_PARSER
    sub_values = parser.defaults()
    sub_values.object_dir = values.object_dir
    opts, args = parser.parse(rest, sub_values)
    if args:
        raise parser.usage_error()
    if opts.progress is None:
        opts.progress = sys.stderr.isatty()
    return (_write if sub == "write" else _verify)(opts, ctx)


def _write(opts: Any, ctx: Any) -> int:
    from gitodb.history.commitgraph_write import write_commit_graph

    flags = {
        "reachable": opts.reachable,
        "stdin-packs": opts.stdin_packs,
        "stdin-commits": opts.stdin_commits,
        "append": opts.append,
    }
    changed: bool | None = getattr(opts, "changed_paths", None)
    show_progress: bool = opts.progress
    split: str | None = getattr(opts, "split", None)
    object_dir: str | None = opts.object_dir
    split_opts = {
        f"--{name}": getattr(opts, name.replace("-", "_"))
        for name in ("max-commits", "size-multiple", "expire-time")
        if getattr(opts, name.replace("-", "_"), None) is not None
    }
    if sum(flags[k] for k in ("reachable", "stdin-packs", "stdin-commits")) > 1:
        raise GitodbError("use at most one of --reachable, --stdin-commits, or --stdin-packs")
    repo = ctx.open_repository()
    objects_dir = _object_dir(repo, object_dir)
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
        _progress(title, n, n, True)
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
            max_new_filters=getattr(opts, "max_new_filters", None),
            progress=_progress if show_progress else None,
            objects_dir=objects_dir,
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


def _progress(title: str, done: int, total: int, finished: bool) -> None:
    """Git's final progress line of a phase (the meter itself is not animated)."""
    if finished:
        sys.stderr.write(f"{title}: 100% ({done}/{total}), done.\n")


def _verify(opts: Any, ctx: Any) -> int:
    from gitodb.history.commitgraph_write import verify_commit_graph

    shallow: bool = opts.shallow
    show_progress: bool = opts.progress
    object_dir: str | None = opts.object_dir
    repo = ctx.open_repository()
    objects_dir = _object_dir(repo, object_dir)
    sys.stdout.flush()
    # Git prints verify's findings as bare lines, and exits with their kinds as bits.
    _lines, status = verify_commit_graph(
        repo,
        shallow=shallow,
        emit=_emit,
        progress=_progress if show_progress else None,
        objects_dir=objects_dir,
    )
    return status
