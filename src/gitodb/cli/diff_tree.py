"""``gitodb diff-tree``: compare two trees, or commits with their parents, like Git.

Raw output (``:<mode> <mode> <id> <id> <status>\\t<path>``), ``--name-only``,
``--name-status``, patches (``-p``/``-u``/``--patch``, ``-U<n>``/``--unified=<n>``,
``--patch-with-raw``, ``--raw``, ``-s``/``--no-patch``, ``--full-index``, ``-a``/``--text``,
``--src-prefix``/``--dst-prefix``/``--no-prefix``/``--default-prefix``,
``--inter-hunk-context``, ``--[no-]indent-heuristic``, ``--minimal``, ``--binary``), ``--numstat``,
``--shortstat``, ``-z``, ``-r``, ``-t``, ``-R``, ``--root``, ``-m``, ``--abbrev``,
``--no-commit-id``, ``--always``, ``--quiet``/``--exit-code``, ``--stdin``, path
limiting, rename and copy detection (``-M[<n>]``, ``--find-renames[=<n>]``, ``-C[<n>]``,
``--find-copies[=<n>]``, ``--find-copies-harder``, ``-l<n>``), whitespace options
(``-w``, ``-b``, ``--ignore-space-at-eol``, ``--ignore-cr-at-eol``), the pickaxe
(``-S``, ``-G``, ``--pickaxe-regex``, ``--pickaxe-all``).
A thin shell over ``gitodb.history.treediff``, ``gitodb.history.renames`` and
``gitodb.history.patch``.  An option Git has that gitodb does not implement
(``-c``, ``--cc``, ``-B``, ...) is refused with
Git's usage (exit 129), never ignored.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import TYPE_CHECKING, Any

from gitodb.cli.options import abbrev_length
from gitodb.errors import BadRevisionError, GitodbError, ObjectNotFoundError

if TYPE_CHECKING:
    from gitodb.cli.main import Context
    from gitodb.history.treediff import Change

USAGE = """\
usage: git diff-tree [--stdin] [-m] [-s] [-v] [--no-commit-id] [--pretty]
              [-t] [-r] [-c | --cc] [--combined-all-paths] [--root] [--merge-base]
              [<common-diff-options>] <tree-ish> [<tree-ish>] [<path>...]

  -r            diff recursively
  -c            show combined diff for merge commits
  --cc          show combined diff for merge commits removing uninteresting hunks
  --combined-all-paths
                show name of file in all parents for combined diffs
  --root        include the initial commit as diff against /dev/null

common diff options:
  -z            output diff-raw with lines terminated with NUL.
  -p            output patch format.
  -u            synonym for -p.
  --patch-with-raw
                output both a patch and the diff-raw format.
  --stat        show diffstat instead of patch.
  --numstat     show numeric diffstat instead of patch.
  --patch-with-stat
                output a patch and prepend its diffstat.
  --name-only   show only names of changed files.
  --name-status show names and status of changed files.
  --full-index  show full object name on index lines.
  --abbrev=<n>  abbreviate object names in diff-tree header and diff-raw.
  -R            swap input file pairs.
  -B            detect complete rewrites.
  -M            detect renames.
  -C            detect copies.
  --find-copies-harder
                try unchanged files as candidate for copy detection.
  -l<n>         limit rename attempts up to <n> paths.
  -O<file>      reorder diffs according to the <file>.
  -S<string>    find filepair whose only one side contains the string.
  --pickaxe-all
                show all files diff when -S is used and hit is found.
  -a  --text    treat all files as text.

"""

_FLAGS = {
    "-r": "recursive",
    "-t": "show_trees",
    "--root": "root",
    "-z": "nul",
    "-R": "reverse",
    "--no-commit-id": "no_commit_id",
    "-m": "merges",
    "--always": "always",
    "--quiet": "quiet",
    "--exit-code": "exit_code",
    "--stdin": "stdin",
    "--full-index": "full_index",
    "-a": "text",
    "--text": "text",
    "--minimal": "minimal",
}

#: the whitespace options: which ``linediff`` flag each sets
_WHITESPACE = {
    "-w": "WS_ALL",
    "--ignore-all-space": "WS_ALL",
    "-b": "WS_CHANGE",
    "--ignore-space-change": "WS_CHANGE",
    "--ignore-space-at-eol": "WS_AT_EOL",
    "--ignore-cr-at-eol": "WS_CR_AT_EOL",
}

# Output formats, in the order Git prints them (diff.c's diff_flush).
_FORMAT_OPTIONS = {
    "-p": ("patch",),
    "-u": ("patch",),
    "--patch": ("patch",),
    "--raw": ("raw",),
    "--patch-with-raw": ("patch", "raw"),
    "--numstat": ("numstat",),
    "--shortstat": ("shortstat",),
    "--stat": ("stat",),
    "--patch-with-stat": ("patch", "stat"),
    "--summary": ("summary",),
    "--compact-summary": ("stat",),
}


class _Usage(Exception):
    pass


class _BadValue(Exception):
    """An option value Git's option parser rejects: one ``error:`` line, exit 129."""


class Options:
    """Parsed ``diff-tree`` options."""

    def __init__(self) -> None:
        self.recursive = False
        self.show_trees = False
        self.root = False
        self.nul = False
        self.reverse = False
        self.no_commit_id = False
        self.merges = False
        self.always = False
        self.quiet = False
        self.exit_code = False
        self.stdin = False
        self.full_index = False
        self.binary = False
        self.text = False
        self.minimal = False
        self.indent_heuristic = True
        self.context = 3
        self.inter_hunk = 0
        self.src_prefix = b"a/"
        self.dst_prefix = b"b/"
        self.formats: set[str] = set()  # raw, patch, numstat, shortstat
        self.no_output = False  # -s
        self.output = "raw"  # raw, name-only, name-status
        self.name_option = ""
        self.compact_summary = False
        # --pretty/--format: (kind, user format, whether each entry is terminated)
        self.pretty: tuple[str, str | None, bool] | None = None
        self.stat_width: int | None = None  # None: the terminal's
        self.stat_name_width = 0
        self.stat_graph_width = 0
        self.stat_count = 0
        self.pickaxe: bytes | None = None  # -S<string>
        self.grep: bytes | None = None  # -G<regex>
        self.orderfile: str | None = None  # -O<orderfile>
        self.notes: Any = None  # history.notes.NotesOptions, once a notes option is given
        self.pickaxe_regex = False  # --pickaxe-regex
        self.pickaxe_all = False  # --pickaxe-all
        self.renames: int | None = None  # -M/-C: the minimum score (of 60000)
        self.copies = False  # -C: copies too
        self.copies_harder = False  # -C -C, --find-copies-harder: unchanged files too
        self.whitespace = 0  # -w, -b, --ignore-space-at-eol, ...: linediff.WS_* flags
        self.rename_limit: int | None = None  # -l<n>
        self.abbrev: int | None = 0  # 0: full ids; None: the default length
        self.args: list[str] = []
        self.paths: list[str] = []
        self.dashdash = False


def parse_args(argv: list[str]) -> Options:
    """Options and arguments as Git's ``setup_revisions`` reads them for diff-tree."""
    o = Options()
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            o.dashdash = True
            o.paths += argv[i:]
            break
        if not arg.startswith("-") or arg == "-":
            o.args.append(arg)
            continue
        if arg in _FLAGS:
            setattr(o, _FLAGS[arg], True)
        elif arg in _FORMAT_OPTIONS:
            o.formats.update(_FORMAT_OPTIONS[arg])
            o.no_output = False
            if arg == "--compact-summary":
                o.compact_summary = True
        elif arg == "--binary":
            # Git's binary patches for binary files; implies -p.
            o.binary = True
            o.formats.add("patch")
            o.no_output = False
        elif arg in ("--pretty", "-v") or arg.startswith(("--pretty=", "--format=")):
            o.pretty = _pretty(arg)
        elif arg == "--oneline":  # diff-tree prints whole ids all the same
            o.pretty = _pretty("--pretty=oneline")
        elif arg.startswith("--stat="):
            # --stat=<width>[,<name-width>[,<count>]]
            parts = arg[7:].split(",")
            if len(parts) > 3 or not all(p.isdigit() for p in parts):
                raise _Usage(arg)
            o.stat_width = int(parts[0])
            if len(parts) > 1:
                o.stat_name_width = int(parts[1])
            if len(parts) > 2:
                o.stat_count = int(parts[2])
            o.formats.add("stat")
            o.no_output = False
        elif (
            arg.split("=")[0]
            in (
                "--stat-width",
                "--stat-name-width",
                "--stat-graph-width",
                "--stat-count",
            )
            and "=" in arg
        ):
            name, _eq, value = arg.partition("=")
            if not value.isdigit():
                raise _BadValue(f"error: {name} expects a numerical value")
            setattr(o, name[2:].replace("-", "_"), int(value))
            o.formats.add("stat")
            o.no_output = False
        elif arg in ("-s", "--no-patch"):
            # Git 2.55: everything given so far is dropped; later formats count again.
            o.formats.clear()
            o.output = "raw"
            o.no_output = True
        elif arg.startswith("-U") or arg.startswith("--unified="):
            value = arg[2:] if arg.startswith("-U") else arg[10:]
            if value and not value.isdigit():  # empty is 0, as strtol reads it
                raise _BadValue("error: --unified expects a numerical value")
            o.context = int(value or "0")
            o.formats.add("patch")
            o.no_output = False
        elif arg.startswith("--inter-hunk-context="):
            if not arg[21:].isdigit():
                raise _BadValue(
                    "error: option `inter-hunk-context' expects a non-negative integer value"
                    " with an optional k/m/g suffix"
                )
            o.inter_hunk = int(arg[21:])
        elif arg in ("--indent-heuristic", "--no-indent-heuristic"):
            o.indent_heuristic = arg == "--indent-heuristic"
        elif arg.startswith("--src-prefix="):
            o.src_prefix = os.fsencode(arg[13:])
        elif arg.startswith("--dst-prefix="):
            o.dst_prefix = os.fsencode(arg[13:])
        elif arg == "--no-prefix":
            o.src_prefix = o.dst_prefix = b""
        elif arg == "--default-prefix":
            o.src_prefix, o.dst_prefix = b"a/", b"b/"
        elif arg in ("--name-only", "--name-status"):
            if o.name_option and o.name_option != arg:
                raise GitodbError(
                    "options '--name-only', '--name-status', '--check', and '-s' cannot be "
                    "used together"
                )
            o.name_option = arg
            o.output = arg[2:]
            o.no_output = False
        elif arg == "--abbrev":
            o.abbrev = None
        elif arg.startswith("--abbrev="):
            o.abbrev = abbrev_length(arg[9:])
        elif arg == "--no-abbrev":
            o.abbrev = 0
        elif arg.startswith("-M") or arg == "--find-renames" or arg.startswith("--find-renames="):
            o.renames = _rename_score(arg, "-M", "find-renames")
            o.copies = False  # -M after -C asks for renames only, as in Git
        elif arg.startswith("-C") or arg == "--find-copies" or arg.startswith("--find-copies="):
            o.renames = _rename_score(arg, "-C", "find-copies")
            if o.copies:  # given twice: unchanged files are copy sources too
                o.copies_harder = True
            o.copies = True
        elif arg == "--find-copies-harder":
            o.copies_harder = True
        elif arg.startswith(("--notes", "--show-notes", "--no-notes")) or arg.endswith(
            "standard-notes"
        ):
            from gitodb.history.notes import NotesOptions

            if o.notes is None:
                o.notes = NotesOptions()
            if not o.notes.take(arg):
                raise _Usage(arg)
        elif arg.startswith("-O"):
            if arg == "-O":  # the file is the next argument
                if i == len(argv):
                    raise _BadValue("error: switch `O' requires a value")
                arg += argv[i]
                i += 1
            o.orderfile = arg[2:]
        elif arg == "--check":
            o.formats.add("check")
            o.no_output = False
        elif arg in _WHITESPACE:
            from gitodb.history import linediff

            o.whitespace |= getattr(linediff, _WHITESPACE[arg])
        elif arg == "--no-renames":
            o.renames = None
            o.copies = False
        elif arg in ("--no-ext-diff", "--no-textconv"):
            pass  # diff-tree runs neither an external diff nor textconv unless told to
        elif arg.startswith("-l"):
            if arg == "-l":  # the value is the next argument
                if i == len(argv):
                    raise _BadValue("error: switch `l' requires a value")
                arg = "-l" + argv[i]
                i += 1
            o.rename_limit = _switch_int(arg[2:], "l")
        elif arg.startswith(("-S", "-G")):
            if arg in ("-S", "-G"):  # the value is the next argument
                if i == len(argv):
                    raise _BadValue(f"error: switch `{arg[1]}' requires a value")
                arg += argv[i]
                i += 1
            if len(arg) == 2:
                raise _BadValue(f"error: {arg} requires a non-empty argument")
            if arg[1] == "S":
                o.pickaxe = os.fsencode(arg[2:])
            else:
                o.grep = os.fsencode(arg[2:])
        elif arg in ("--pickaxe-all", "--pickaxe-regex"):
            setattr(o, arg[2:].replace("-", "_"), True)
        else:
            raise _Usage(arg)
    if o.copies_harder:  # Git's diff_setup_done: copy detection, whatever came last
        from gitodb.history.renames import DEFAULT_MIN_SCORE

        o.copies = True
        if o.renames is None:
            o.renames = DEFAULT_MIN_SCORE
    if "check" in o.formats and o.name_option:
        raise GitodbError(
            "options '--name-only', '--name-status', '--check', and '-s' cannot be used together"
        )
    if "check" in o.formats:
        o.formats = {"check"}  # --check prints nothing else, whatever else is asked
    if o.grep is not None and o.pickaxe is not None:
        raise GitodbError("options '-G', '-S', and '--find-object' cannot be used together")
    if o.grep is not None and o.pickaxe_regex:
        raise GitodbError(
            "options '-G' and '--pickaxe-regex' cannot be used together, use "
            "'--pickaxe-regex' with '-S'"
        )
    if o.show_trees or o.pickaxe is not None or o.grep is not None:
        o.recursive = True  # -t implies -r, and the pickaxe looks at files
    if o.output != "raw":
        o.formats.clear()  # names replace every other format (diff_setup_done)
    elif not o.formats and not o.no_output:
        o.formats.add("raw")
    if o.formats - {"raw"}:
        o.recursive = True  # patches and stats always look at files
    return o


def _switch_int(text: str, switch: str) -> int:
    """An ``OPT_INTEGER`` value as Git's option parser reads it (C's number syntax
    and a k/m/g unit); ``_BadValue`` with Git's message otherwise."""
    from gitodb.errors import ConfigError
    from gitodb.repo.config import parse_int

    lo, hi = -(1 << 31), (1 << 31) - 1  # a C int
    try:
        value = parse_int(text)
    except ConfigError:
        raise _BadValue(
            f"error: switch `{switch}' expects an integer value with an optional k/m/g suffix"
        ) from None
    if not lo <= value <= hi:
        raise _BadValue(f"error: value {text} for switch `{switch}' not in range [{lo},{hi}]")
    return value


def _rename_score(arg: str, short: str, name: str) -> int:
    """The minimum score of ``-M[<n>]``/``--find-renames[=<n>]`` (``-C``,
    ``--find-copies``): Git's default without a value (or with 0), an error for text
    after it."""
    from gitodb.history.renames import DEFAULT_MIN_SCORE, parse_rename_score, rename_score_length

    value = arg[len(short) :] if arg.startswith(short) else arg.partition("=")[2]
    if not value:
        return DEFAULT_MIN_SCORE
    if rename_score_length(value) != len(value):
        raise _BadValue(f"error: invalid argument to {name}")
    return parse_rename_score(value) or DEFAULT_MIN_SCORE  # 0 is Git's "the default"


def _print_usage(to_stdout: bool = False) -> int:
    (sys.stdout if to_stdout else sys.stderr).write(USAGE)
    return 129


_BUILTIN_FORMATS = ("oneline", "short", "medium", "full", "fuller", "raw")


def _pretty(arg: str) -> tuple[str, str | None, bool]:
    """``--pretty[=<format>]``, ``--format=<format>``, ``-v`` as Git reads them."""
    if arg in ("--pretty", "-v"):
        return "medium", None, False
    name, _eq, value = arg.partition("=")
    if value in _BUILTIN_FORMATS:
        return value, None, value == "oneline"
    if value.startswith("format:"):
        return "user", value[7:], False
    if value.startswith("tformat:"):
        return "user", value[8:], True
    if name == "--format" or "%" in value:
        return "user", value, True
    if not value:
        return "medium", None, False
    raise GitodbError(f"invalid --pretty format: {value}")


def _term_columns() -> int:
    """Git's ``term_columns``: ``$COLUMNS``, else the terminal's width, else 80."""
    try:
        n = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        n = 0
    if n > 0:
        return n
    try:
        return os.get_terminal_size(1).columns or 80
    except OSError:
        return 80


class _Printer:
    """Formats changes as raw lines, names or names with status."""

    def __init__(self, repo: Any, o: Options) -> None:
        from gitodb.objects.pretty import quote_path
        from gitodb.repo.abbrev import Abbreviator, default_abbrev

        self.o = o
        self.quote = quote_path
        self.quote_fully = repo.config.get_bool("core.quotepath", True)
        length = default_abbrev(repo) if o.abbrev is None else o.abbrev
        self.abbrev = Abbreviator(repo, length)
        self.null = repo.object_format.null_oid
        self.term = b"\0" if o.nul else b"\n"
        self.changed = False
        self.repo = repo
        self._patcher: Any = None
        self._formatter: Any = None
        self._binary_attr: Any = None
        self._check_state: tuple[int, Any] | None = None  # --check's rule, attributes
        self._notes: tuple[Any] | None = None  # (DisplayNotes or None,), once loaded
        self.check_failed = False  # --check found something: exit status 2
        self.shown_one = False

    def patcher(self) -> Any:
        """The patch formatter, made when the first patch is wanted."""
        if self._patcher is None:
            from gitodb.history.patch import PatchFormatter, PatchOptions
            from gitodb.repo.abbrev import Abbreviator, default_abbrev
            from gitodb.repo.write import WriteSettings

            o = self.o
            repo = self.repo
            hexsz = repo.object_format.hexsz
            # The index line abbreviates like Git's default unless told otherwise.
            length = hexsz if o.full_index else (o.abbrev or default_abbrev(repo))
            options = PatchOptions(
                context=o.context,
                inter_hunk=o.inter_hunk,
                src_prefix=o.src_prefix,
                dst_prefix=o.dst_prefix,
                reverse=o.reverse,
                text=o.text,
                indent_heuristic=o.indent_heuristic,
                minimal=o.minimal,
                quote_fully=self.quote_fully,
                abbrev=Abbreviator(repo, length),
                hexsz=hexsz,
                binary=o.binary,
                whitespace=o.whitespace,
                compression=WriteSettings.from_config(repo.config).loose_compression
                if o.binary
                else 1,
            )
            odb = repo.odb
            self._patcher = PatchFormatter(
                lambda oid: odb.read(oid)[1], options, binary_attr=self.binary_attr()
            )
        return self._patcher

    def binary_attr(self) -> Any:
        """``path -> bool``: whether attributes make the path binary (``-diff``)."""
        if self._binary_attr is None:
            self._binary_attr = self._make_binary_attr()
        return self._binary_attr

    def _make_binary_attr(self) -> Any:
        from gitodb.history.patch import binary_by_attributes

        return binary_by_attributes(self.repo, self.work_tree)

    work_tree: str | None = None

    def _id(self, oid: bytes | None) -> bytes:
        hexsz = self.repo.object_format.hexsz
        if self.abbrev.length >= hexsz:
            return (oid or self.null).hex().encode()
        text = self.abbrev(oid or self.null).encode()
        if os.environ.get("GIT_PRINT_SHA1_ELLIPSIS", "").lower() != "yes":
            return text
        # Git's diff_aligned_abbrev: dots to line up with the requested length
        # (always three when the length was left to Git).
        want = self.o.abbrev
        if len(text) >= hexsz - 3:
            return (oid or self.null).hex().encode()
        if want is not None and want < len(text) <= want + 2:
            return text + b"." * (want + 3 - len(text))
        return text + b"..."

    def log_entry(self, oid: bytes, parent: bytes | None) -> bytes:
        """Git's ``show_log`` with ``--pretty``/``--format`` and the blank line (or
        ``---``) that ``log_tree_diff_flush`` puts between message and diff."""
        from gitodb.history.pretty import Formatter, pretty_commit

        o = self.o
        assert o.pretty is not None
        kind, fmt, terminator = o.pretty
        out = [self.term] if self.shown_one and not terminator else []
        self.shown_one = True
        raw = self.repo.odb.read(oid)[1]
        ident = oid.hex().encode()
        if parent is not None:
            ident += b" (from %s)" % parent.hex().encode()
        empty = False
        if kind == "user":
            if self._formatter is None:
                # diff-tree abbreviates nothing unless told: %h is the full id.
                self._formatter = Formatter(self.repo, fmt or "", abbrev=self.o.abbrev)
                notes = self._display_notes(self._formatter.wants_notes)
                if notes is not None:
                    self._formatter.notes = lambda oid: notes.text(oid, raw=True)
            out.append(self._formatter.format(oid, raw))
            empty = self._formatter.empty
        else:
            notes = self._display_notes(False)
            note = notes.text(oid) if notes else b""
            if kind == "oneline":
                out.append(ident + b" " + pretty_commit(kind, self.repo, oid, raw) + note)
            else:
                message = pretty_commit(kind, self.repo, oid, raw)
                out.append(b"commit " + ident + b"\n" + message + note)
        if terminator and not empty:
            out.append(self.term)
        if (o.formats or o.output != "raw") and kind != "oneline" and not empty:
            if {"patch", "stat"} <= o.formats:
                out.append(b"---")
            out.append(b"\n")
        return b"".join(out)

    def _display_notes(self, wanted: bool) -> Any:
        """The notes a commit's message is shown with (``--notes``, or ``%N`` in a
        format; diff-tree shows none by default), loaded once."""
        if self._notes is None:
            from gitodb.history.notes import NotesOptions

            options = self.o.notes or NotesOptions()
            self._notes = (options.display(self.repo, wanted),)
        return self._notes[0]

    def lines(self, changes: list[Change], header: tuple[bytes, bytes | None] | None) -> bytes:
        """The output of one diff, after the commit's line or log message when it
        is a commit's (``header``: the commit and the parent to name, if any)."""
        o = self.o
        if not changes and not (o.always and header is not None):
            return b""
        if changes:
            self.changed = True
        out = []
        if header is not None and not o.no_commit_id:
            if o.pretty is None:
                out.append(header[0].hex().encode() + self.term)
            else:
                out.append(self.log_entry(*header))
        if o.quiet:
            return b"".join(out)
        separator = False
        if "check" in o.formats:  # in place of the raw lines, as Git's flush_one_pair
            self._check(changes, out)
            separator = True
        elif o.output != "raw" or "raw" in o.formats:
            self._raw(changes, out)
            separator = True
        if o.formats & {"numstat", "stat", "shortstat"}:
            self._stats(changes, out)
            separator = True
        if "summary" in o.formats:
            from gitodb.history.diffstat import summary

            text = summary(changes, self.quote_fully)
            if text:
                out.append(text)
                separator = True
        if "patch" in o.formats:
            if separator:
                out.append(self.term)
            patch = self.patcher().file_patch
            for ch in changes:
                out.append(patch(ch))
        return b"".join(out)

    def _check(self, changes: list[Change], out: list[bytes]) -> None:
        """``--check``: whitespace errors and conflict markers that each file's new
        side adds (``history.wscheck``); a binary new side is not checked (``-a``
        does not change that: Git's ``builtin_checkdiff``)."""
        from gitodb.history.patch import is_binary, side_content
        from gitodb.history.wscheck import check_file, marker_size, path_rule

        core_rule, attributes = self._check_settings()
        binary_attr = self.binary_attr()
        odb = self.repo.odb

        def read(oid: bytes) -> bytes:
            return odb.read(oid)[1]  # type: ignore[no-any-return]

        for ch in changes:
            mode = ch.new_mode or 0
            if not mode or stat.S_ISDIR(mode) or stat.S_ISDIR(ch.old_mode or 0):
                continue
            new = side_content(mode, ch.new_id, read)
            if binary_attr(ch.path) or is_binary(new):  # even with -a, as in Git
                continue
            old = side_content(ch.old_mode or 0, ch.old_id, read)
            attrs = attributes.attributes(ch.path.decode("utf-8", "surrogateescape"))
            rule = path_rule(attrs.get("whitespace"), core_rule)
            text, found = check_file(
                ch.path, old, new, rule, marker_size(attrs.get("conflict-marker-size"))
            )
            out.append(text)
            self.check_failed |= found

    def _check_settings(self) -> tuple[int, Any]:
        """``core.whitespace``'s rule and the attribute reader, made once a run."""
        if self._check_state is None:
            from gitodb.errors import report
            from gitodb.history.wscheck import parse_rule
            from gitodb.repo.attributes import AttributeReader

            repo = self.repo
            rule = parse_rule(repo.config.get("core.whitespace"), lambda m: report("warning", m))
            reader = AttributeReader(repo, repo.config, work_tree=self.work_tree)
            self._check_state = (rule, reader)
        return self._check_state

    def _stats(self, changes: list[Change], out: list[bytes]) -> None:
        """``--numstat``, ``--stat``, ``--shortstat`` (in Git's order)."""
        from gitodb.history import diffstat

        o = self.o
        odb = self.repo.odb
        stats = diffstat.file_stats(
            changes,
            lambda oid: odb.read(oid)[1],
            text=o.text,
            binary_attr=self.binary_attr(),
            indent_heuristic=o.indent_heuristic,
            minimal=o.minimal,
            whitespace=o.whitespace,
        )
        if not o.compact_summary:
            for fs in stats:
                fs.comment = None
        if "numstat" in o.formats:
            out.append(diffstat.numstat(stats, o.nul, self.quote_fully))
        if "stat" in o.formats:
            width = o.stat_width if o.stat_width is not None else _term_columns()
            out.append(
                diffstat.diffstat(
                    stats,
                    width=width,
                    name_width=o.stat_name_width,
                    graph_width=o.stat_graph_width,
                    count=o.stat_count,
                    quote_fully=self.quote_fully,
                )
            )
        if "shortstat" in o.formats:
            out.append(diffstat.shortstat(stats))

    def _raw(self, changes: list[Change], out: list[bytes]) -> None:
        o = self.o
        nul = o.nul
        term = self.term
        sep = b"\0" if nul else b"\t"
        for ch in changes:
            path = ch.path if nul else self.quote(ch.path, self.quote_fully)
            status = ch.status.encode()
            old_path = getattr(ch, "old_path", None)
            if old_path is not None:
                status += b"%03d" % ch.similarity  # type: ignore[attr-defined]
                path = (old_path if nul else self.quote(old_path, self.quote_fully)) + sep + path
            if o.output == "name-only":
                out.append((ch.path if nul else self.quote(ch.path, self.quote_fully)) + term)
            elif o.output == "name-status":
                out.append(status + sep + path + term)
            else:
                out.append(
                    b":%06o %06o %s %s %s%s%s%s"
                    % (
                        ch.old_mode or 0,
                        ch.new_mode or 0,
                        self._id(ch.old_id),
                        self._id(ch.new_id),
                        status,
                        sep,
                        path,
                        term,
                    )
                )


class _DiffTree:
    """One ``diff-tree`` run: the library calls behind each way of naming commits."""

    def __init__(self, repo: Any, o: Options, paths: list[bytes]) -> None:
        self.repo = repo
        self.o = o
        self.paths = paths
        self.printer = _Printer(repo, o)
        self.write = sys.stdout.buffer.write
        self.rename_limit: Any = None  # renames.RenameLimit, with -M or -C
        self._order: list[str] | None = None  # -O's patterns, read at the first diff
        # Parents given on --stdin replace the commit's own for the rest of the run,
        # as Git grafts them onto its in-memory commit.
        self.grafts: dict[bytes, list[bytes]] = {}

    def trees(self, old: bytes | None, new: bytes | None) -> list[Change]:
        from gitodb.history.treediff import diff_trees

        changes = diff_trees(
            self.repo,
            old,
            new,
            self.paths,
            recursive=self.o.recursive,
            show_trees=self.o.show_trees,
            unchanged=self.o.copies_harder,
        )
        if self.o.reverse:
            changes = [c.reversed() for c in changes]
        odb = self.repo.odb

        def read_blob(oid: bytes) -> bytes:
            return odb.read(oid)[1]  # type: ignore[no-any-return]

        def after_pairing(changes: list[Change]) -> list[Change]:
            return self._after_pairing(changes, read_blob)

        if self.o.renames is not None:
            from gitodb.history.renames import RenameLimit, detect_renames

            if self.rename_limit is None:
                self.rename_limit = RenameLimit()
            limit = self.o.rename_limit
            if limit is None:
                limit = self.repo.config.get_ulong("diff.renamelimit", 1000)
            changes = detect_renames(
                changes,
                read_blob,
                minimum=self.o.renames,
                limit=limit if limit > 0 else 32767,  # 0 or less: no limit
                copies=self.o.copies,
                report=self.rename_limit,
                then=after_pairing,
            )
        else:
            changes = after_pairing(changes)
        if self.o.whitespace:
            changes = [c for c in changes if not self._whitespace_only(c, read_blob)]
        return changes

    def _after_pairing(self, changes: list[Change], read_blob: Any) -> list[Change]:
        """``-S``, ``-G``, then ``-O``: Git's diffcore steps after rename detection,
        before renames and copies are told apart."""
        if self.o.pickaxe is not None:
            from gitodb.history.pickaxe import pickaxe

            changes = pickaxe(
                changes,
                read_blob,
                self.o.pickaxe,
                regex=self.o.pickaxe_regex,
                all_changes=self.o.pickaxe_all,
            )
        if self.o.grep is not None:
            from gitodb.history.pickaxe import grep_changes

            changes = grep_changes(
                changes,
                read_blob,
                self.o.grep,
                all_changes=self.o.pickaxe_all,
                text=self.o.text,
                binary_path=self.printer.binary_attr(),
            )
        if self.o.orderfile is not None:
            from gitodb.history.difforder import order_changes, read_orderfile

            if self._order is None:
                self._order = read_orderfile(self.o.orderfile)
            changes = order_changes(changes, self._order)
        return changes

    def _whitespace_only(self, change: Change, read_blob: Any) -> bool:
        """Git 2.55 with a whitespace option: a modification whose only change is
        whitespace that is ignored (same mode, text on both sides) is no change, in
        every output format and for ``--exit-code`` (Git 2.39 still listed it in the
        raw output)."""
        from gitodb.history.linediff import same_lines
        from gitodb.history.patch import is_binary, side_content

        if change.status != "M" or change.old_mode != change.new_mode:
            return False
        if not self.o.text and self.printer.binary_attr()(change.path):
            return False
        old = side_content(change.old_mode, change.old_id, read_blob)
        new = side_content(change.new_mode, change.new_id, read_blob)
        if not self.o.text and (is_binary(old) or is_binary(new)):
            return False
        return same_lines(old, new, self.o.whitespace)

    def warn_rename_limit(self) -> None:
        """Git's ``diff_warn_rename_limit``, once at the end of a run: what the rename
        limit left out (nothing when it left nothing out)."""
        lines = self.rename_limit.warnings() if self.rename_limit is not None else []
        if lines:
            sys.stdout.flush()
            sys.stderr.write("".join(f"warning: {line}\n" for line in lines))

    def commit(self, oid: bytes, parents: list[bytes] | None = None) -> None:
        """Git's ``log_tree_commit`` for diff-tree: against each parent (merges only
        with ``-m``), a root commit only with ``--root``."""
        odb = self.repo.odb
        c = odb.commit(oid)
        if parents is None:
            parents = c.parents
        if not parents:
            # a root commit: its diff against nothing with --root, else with --always
            # only its header, as Git's log_tree_commit shows it
            changes = self.trees(None, c.tree) if self.o.root else []
            self.write(self.printer.lines(changes, (oid, None)))
            return
        if len(parents) > 1 and not self.o.merges:
            return
        for p in parents:
            # A merge's log names the parent each diff is against.
            header = (oid, p if len(parents) > 1 else None)
            self.write(self.printer.lines(self.trees(odb.commit(p).tree, c.tree), header))

    def _is_commit(self, oid: bytes) -> bool:
        try:
            return self.repo.odb.read_header(oid)[0] == "commit"  # type: ignore[no-any-return]
        except ObjectNotFoundError:
            return False

    def stdin_line(self, line: bytes) -> None:
        """Git's ``diff_tree_stdin``: ``<commit> [<parent>...]`` or ``<tree> <tree>``."""
        hexsz = self.repo.object_format.hexsz
        text = line.rstrip(b"\n")
        oid = _hex(text[:hexsz], hexsz)
        if oid is None or not line.endswith(b"\n"):
            return
        try:
            type_name = self.repo.odb.read_header(oid)[0]
        except ObjectNotFoundError:
            return
        rest = text[hexsz:]
        if type_name == "commit":
            parents: list[bytes] | None = None
            # Git grafts the ids that follow (each after one blank) as the parents.
            while rest[:1].isspace():
                p = _hex(rest[1 : 1 + hexsz], hexsz)
                if p is None:
                    break
                parents = parents if parents is not None else []
                if self._is_commit(p):
                    parents.append(p)
                rest = rest[1 + hexsz :]
            if parents is not None:
                self.grafts[oid] = parents
            self.commit(oid, self.grafts.get(oid))
            return
        if type_name == "tree":
            other = _hex(rest[1 : 1 + hexsz], hexsz)
            if not rest[:1].isspace() or other is None or len(rest) != 1 + hexsz:
                sys.stdout.flush()
                sys.stderr.write("error: Need exactly two trees, separated by a space\n")
                return
            self.write(b"%s %s\n" % (oid.hex().encode(), other.hex().encode()))
            self.write(self.printer.lines(self.trees(oid, other), None))
            return
        sys.stdout.flush()
        sys.stderr.write(f"error: Object {oid.hex()} is a {type_name}, not a commit or tree\n")


def _hex(text: bytes, hexsz: int) -> bytes | None:
    if len(text) != hexsz:
        return None
    try:
        return bytes.fromhex(text.decode("ascii"))
    except ValueError:
        return None


def _revisions(repo: Any, o: Options) -> list[tuple[bytes, bool]]:
    """``(id, uninteresting)`` of the revision arguments; the rest become paths."""
    revs: list[tuple[bytes, bool]] = []
    for n, arg in enumerate(o.args):
        got = _resolve_arg(repo, arg)
        if got is not None:
            revs += got
            continue
        if o.dashdash:
            raise GitodbError(f"bad revision '{arg}'")
        # Not a revision: a path, if it exists in the work tree (Git's verify_filename).
        for a in o.args[n:]:
            if not os.path.lexists(a):
                raise GitodbError(
                    f"ambiguous argument '{a}': unknown revision or path not in the working "
                    "tree.\nUse '--' to separate paths from revisions, like this:\n"
                    "'git <command> [<revision>...] -- [<file>...]'"
                )
        o.paths = o.args[n:] + o.paths
        break
    return revs


def _resolve_arg(repo: Any, arg: str) -> list[tuple[bytes, bool]] | None:
    """The objects one revision argument names (a range names two), or None."""

    def one(name: str) -> bytes | None:
        try:
            return repo.resolve(name or "HEAD")  # type: ignore[no-any-return]
        except (BadRevisionError, ObjectNotFoundError):
            return None

    dots = arg.find("..")
    if dots >= 0 and arg[dots : dots + 3] != "...":
        a, b = one(arg[:dots]), one(arg[dots + 2 :])
        if a is not None and b is not None:
            return [(a, True), (b, False)]
    if arg.startswith("^"):
        oid = one(arg[1:])
        return None if oid is None else [(oid, True)]
    oid = one(arg)
    return None if oid is None else [(oid, False)]


def run(argv: list[str], ctx: Context) -> int:
    """Compare trees or commits; see ``git diff-tree``."""
    if argv == ["-h"]:
        return _print_usage(to_stdout=True)
    try:
        o = parse_args(argv)
    except _Usage:
        return _print_usage()
    except _BadValue as e:
        sys.stderr.write(f"{e}\n")
        return 129
    from gitodb.cli.ls_tree import _work_tree_prefix
    from gitodb.history.paths import normalize_pathspec
    from gitodb.repo.revparse import peel_to

    repo = ctx.open_repository()
    prefix, top = _work_tree_prefix(repo, ctx)
    revs = _revisions(repo, o)
    if not revs and not o.stdin:
        return _print_usage()
    paths = [normalize_pathspec(p, prefix, top).encode("utf-8", "surrogateescape") for p in o.paths]
    d = _DiffTree(repo, o, paths)
    if o.formats - {"raw"} or o.grep is not None or o.whitespace:
        # the attributes (binary files) are read from the work tree, as Git reads them
        from gitodb.repo import find_work_tree_top

        d.printer.work_tree = find_work_tree_top(
            repo, explicit_git_dir=ctx.git_dir is not None or "GIT_DIR" in os.environ
        )
    if len(revs) == 1:
        oid = revs[0][0]
        try:
            commit = peel_to(repo, oid, "commit", oid.hex())
        except BadRevisionError:
            sys.stderr.write(
                f"error: object {oid.hex()} is a {repo.odb.read_header(oid)[0]}, not a commit\n"
            )
        else:
            d.commit(commit)
    elif len(revs) == 2:
        (one, _u1), (two, u2) = revs
        if u2:
            one, two = two, one
        trees = [peel_to(repo, x, "tree", x.hex()) for x in (one, two)]
        d.write(d.printer.lines(d.trees(trees[0], trees[1]), None))
    if o.stdin:
        for line in sys.stdin.buffer:
            hexsz = repo.object_format.hexsz
            if _hex(line[:hexsz], hexsz) is None:
                d.write(line)
                continue
            d.stdin_line(line)
    d.warn_rename_limit()
    status = 2 if d.printer.check_failed else 0
    if (o.exit_code or o.quiet) and d.printer.changed:
        status |= 1
    return status
