"""The diff side of ``gitodb log``: which arguments are diff options, and each
commit's diff after its message, as ``git log`` prints them.

The options are ``diff-tree``'s (``gitodb.cli.diff_tree.parse_args`` reads them and
its printer writes the raw lines, names, stats, summary and patches), with log's
defaults: no diff unless a format is asked for (``-p``/``-u``/``--patch``,
``-U<n>``, ``--raw``, ``--stat``, ``--numstat``, ``--shortstat``, ``--summary``,
``--name-only``, ``--name-status``, ``--patch-with-stat``, ``--patch-with-raw``),
always recursive, renames found unless ``diff.renames`` is false or
``--no-renames`` is given (copies too with ``diff.renames=copies`` or ``-C``), a
root commit shown against the empty tree unless ``log.showRoot`` is false.  Merges
show no diff unless ``-m`` (each parent, the header repeated with ``(from
<parent>)``) or ``--first-parent`` (the first parent, no ``(from ...)``) or
``--diff-merges=`` says so; combined diffs (``-c``, ``--cc``,
``--diff-merges=combined``...) are refused with a usage error.
"""

from __future__ import annotations

import os

from gitodb.cli.options import UsageError
from gitodb.errors import GitodbError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: diff-tree's option words that ``git log`` also reads as diff options
_EXACT = frozenset(
    {
        "-p",
        "-u",
        "--patch",
        "--raw",
        "--patch-with-raw",
        "--numstat",
        "--shortstat",
        "--stat",
        "--patch-with-stat",
        "--summary",
        "--compact-summary",
        "--name-only",
        "--name-status",
        "-s",
        "--no-patch",
        "--full-index",
        "-a",
        "--text",
        "--minimal",
        "--indent-heuristic",
        "--no-indent-heuristic",
        "--no-prefix",
        "--default-prefix",
        "-R",
        "--root",
        "-r",
        "-t",
        "--find-renames",
        "--find-copies",
        "--find-copies-harder",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "--pickaxe-all",
        "--pickaxe-regex",
        "-w",
        "--ignore-all-space",
        "-b",
        "--ignore-space-change",
        "--ignore-space-at-eol",
        "--ignore-cr-at-eol",
        "--check",
    }
)
_PREFIXES = (
    "-U",
    "--unified=",
    "--stat=",
    "--stat-width=",
    "--stat-name-width=",
    "--stat-graph-width=",
    "--stat-count=",
    "--inter-hunk-context=",
    "--src-prefix=",
    "--dst-prefix=",
    "-M",
    "--find-renames=",
    "-C",
    "--find-copies=",
    "-l",
    "-O",
)
#: combined diffs: not built, refused
_COMBINED = frozenset({"-c", "--cc", "--combined-all-paths", "--dd", "--remerge-diff"})
_MERGE_MODES = {
    "off": "off",
    "none": "off",
    "first-parent": "first-parent",
    "1": "first-parent",
    "separate": "separate",
    "m": "separate",
    "on": "separate",
}


def _usage(message: str) -> UsageError:
    return UsageError(stderr=f"error: {message}\n")


def split_args(argv: list[str]) -> tuple[list[str], list[str], str | None]:
    """``(diff options, the other arguments, merge mode)`` of a log command line
    (nothing after ``--`` is looked at); the merge mode is ``-m``'s
    ``"separate"``, ``--diff-merges=``'s, or None."""
    diff: list[str] = []
    rest: list[str] = []
    merges: str | None = None
    quiet = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            rest += argv[i - 1 :]
            break
        if arg in ("-S", "-G", "-l", "-O"):  # each takes the next argument as its value
            if i == len(argv):
                raise _usage(f"switch `{arg[1]}' requires a value")
            diff.append(arg + argv[i])
            i += 1
            continue
        if arg in _COMBINED or arg.startswith(("--diff-merges=c", "--diff-merges=d")):
            raise _usage(f"gitodb log does not support {arg} (combined diffs are not built)")
        if arg in ("-q", "--quiet"):
            quiet = True  # Git 2.55: as if -s came first
        elif arg == "-m":
            merges = "separate"
        elif arg.startswith("--diff-merges="):
            value = arg[len("--diff-merges=") :]
            if value in ("remerge", "r", "dense-combined", "combined"):
                raise _usage(f"gitodb log does not support {arg}")
            if value not in _MERGE_MODES:
                raise GitodbError(f"invalid value for '--diff-merges': '{value}'")
            merges = _MERGE_MODES[value]
        elif arg == "--no-diff-merges":
            merges = "off"
        elif arg in _EXACT or arg.startswith(_PREFIXES) or arg.startswith(("-S", "-G")):
            diff.append(arg)
        else:
            rest.append(arg)
    if quiet:
        diff.insert(0, "-s")
    _check_no_output(diff)
    return diff, rest, merges


def _check_no_output(diff: list[str]) -> None:
    """Git 2.55's check: ``-s`` (or ``-q``) still in force when ``--name-only`` or
    ``--name-status`` is given (a patch option lifts it) is an error."""
    no_output = False
    for arg in diff:
        if arg in ("-s", "--no-patch"):
            no_output = True
        elif arg in ("-p", "-u", "--patch", "--patch-with-raw", "--patch-with-stat") or (
            arg.startswith(("-U", "--unified="))
        ):
            no_output = False
        elif arg in ("--name-only", "--name-status") and no_output:
            raise GitodbError(
                "options '--name-only', '--name-status', '--check', and '-s' cannot be used "
                "together"
            )


class LogDiff:
    """Prints the diffs of the commits ``git log`` shows (one per commit, or one
    per parent of a merge)."""

    def __init__(
        self, repo: Any, diff_args: list[str], abbrev: int | None, merges: str | None
    ) -> None:
        from gitodb.cli import diff_tree

        self.repo = repo
        try:
            o = diff_tree.parse_args(diff_args)
        except diff_tree._Usage as e:  # cannot happen for the words split_args takes
            raise _usage(f"unknown diff option {e}") from None
        except diff_tree._BadValue as e:
            raise UsageError(stderr=f"{e}\n") from None
        # diff-tree shows raw lines when asked for nothing; log shows no diff
        if not any(a in ("--raw", "--patch-with-raw") for a in diff_args):
            o.formats.discard("raw")
        self.wanted = bool(o.formats) or o.output != "raw"
        #: ``-S``: a commit whose diff keeps no change is not shown (Git turns off
        #: ``always_show_header`` for a pickaxe), whether or not a diff is printed
        self.filters = o.pickaxe is not None or o.grep is not None
        o.recursive = True  # log always looks inside directories
        o.abbrev = abbrev  # log's --abbrev (and its default) shortens raw ids too
        config = repo.config
        if not any(a.startswith(("-U", "--unified=")) for a in diff_args):
            o.context = config.get_int("diff.context", 3)
        if not any(a in ("--no-prefix", "--default-prefix") for a in diff_args) and (
            config.get_bool("diff.noprefix", False)
        ):
            o.src_prefix = o.dst_prefix = b""
        algorithm = config.get("diff.algorithm")
        if algorithm and algorithm.lower() not in ("myers", "default"):
            raise GitodbError(f"gitodb log does not support diff.algorithm={algorithm}")
        explicit_renames = any(
            a.startswith(("-M", "--find-renames", "-C", "--find-copies")) or a == "--no-renames"
            for a in diff_args
        )
        if not explicit_renames:
            from gitodb.history.renames import DEFAULT_MIN_SCORE

            value = (config.get("diff.renames") or "true").lower()
            if value in ("copies", "copy"):
                o.renames, o.copies = DEFAULT_MIN_SCORE, True
            elif config.get_bool("diff.renames", True):
                o.renames = DEFAULT_MIN_SCORE
        self.show_root = "--root" in diff_args or config.get_bool("log.showroot", True)
        self.merges = merges
        self.o = o
        self._tree: Any = None

    def finish(self) -> int:
        """After the last commit: Git's rename-limit warnings, if the limit left
        pairs out; the exit status: 2 if ``--check`` found something, else 0."""
        if self._tree is None:
            return 0
        self._tree.warn_rename_limit()
        return 2 if self._tree.printer.check_failed else 0

    def bind(self, paths: list[bytes], work_tree: str | None) -> None:
        """The walk's pathspecs (the diff shows only those paths) and the work tree
        the attributes are read from."""
        from gitodb.cli.diff_tree import _DiffTree

        if self.o.orderfile is None:  # diff.orderFile: relative to the work tree's top
            path = self.repo.config.get("diff.orderfile")
            if path:
                path = os.path.expanduser(path)
                if not os.path.isabs(path) and work_tree is not None:
                    path = os.path.join(work_tree, path)
                self.o.orderfile = path
        self._tree = _DiffTree(self.repo, self.o, list(paths))
        self._tree.printer.work_tree = work_tree

    @property
    def dashes(self) -> bool:
        """Whether ``---`` goes between message and diff (a patch with its stat)."""
        return {"patch", "stat"} <= self.o.formats

    def parent_diffs(
        self, node: Any, first_parent: bool
    ) -> list[tuple[bytes | None, bytes | None]]:
        """``(parent to name, diff text)`` for each diff of the commit that log
        shows; the text is None when nothing changed (Git then shows no entry for
        it), and may be empty when something changed but the formats print
        nothing for it (``--summary`` of a modification: the entry is shown)."""
        odb = self.repo.odb
        parents = node.parent_ids
        tree = node.tree
        if not parents:
            return [(None, self._text(None, tree))] if self.show_root else []
        if len(parents) == 1:
            return [(None, self._text(odb.commit(parents[0]).tree, tree))]
        mode = self.merges
        if mode is None:
            mode = "first-parent" if first_parent else "off"
        if mode == "off":
            return []
        if mode == "first-parent" or first_parent:
            return [(None, self._text(odb.commit(parents[0]).tree, tree))]
        return [(p, self._text(odb.commit(p).tree, tree)) for p in parents]

    def _text(self, old: bytes | None, new: bytes) -> bytes | None:
        """The diff's output; None when nothing changed (an empty output is b"")."""
        d = self._tree
        changes = d.trees(old, new)
        if not changes:
            return None
        if not self.wanted:
            return b""  # -S alone: the commit is shown, with no diff
        return d.printer.lines(changes, None)  # type: ignore[no-any-return]
