"""One option parser for every command, with Git's parse-options grammar and messages.

The grammar (Git 2.39's ``parse-options``, which the tests compare against):

- short options bundle (``-wt blob`` = ``-w -t blob``); a short option's value is
  the rest of its bundle or the next argument (``-tblob``, ``-t blob``); an
  optional value must be stuck (``-n5``);
- long options take ``--opt=value`` or ``--opt value`` (an optional value only
  ``--opt=value``); ``--no-opt`` negates (unless the option says it cannot), and an
  option named ``no-x`` is negated by ``--x``;
- a unique prefix of a long option (or of its ``no-`` form) stands for it; an exact
  name always wins; ``GIT_TEST_DISALLOW_ABBREVIATED_OPTIONS`` forbids prefixes, as
  in Git's test suite;
- options and arguments may be mixed; ``--`` ends the options (dropped unless
  ``keep_dashdash``), and so does ``--end-of-options`` (always dropped);
- ``-h`` (and ``--help``) print the usage to stdout, ``--help-all`` also the hidden
  options; exit status 129.

Errors are Git's: ``error: unknown option `x'`` / ``unknown switch `c'`` and the usage
on stderr; ``error: option `x' requires a value`` / ``takes no value`` / ``expects a
numerical value`` alone; an ambiguous prefix names two candidates, with the usage on
stdout (as Git 2.39 does); a second command mode is ``error: switch `e' is
incompatible with -p``.  Every one exits 129 through ``UsageError``, which
``gitodb.cli.main`` turns into the output and the exit status.

``layout="2.55"`` gives a command Git 2.55's wording where it differs from 2.39's
(``cat-file``, whose Git tests are 2.55's): negatable options listed as
``--[no-]name``, a second command mode ``error: options '-p' and '-e' cannot be used
together``, and an alias (``alias_of``) shown with ``...`` in the usage a command
prints after parsing, as Git 2.55 prints it.

A command declares its options once and parses with them::

    USAGE = ["[-v | --verbose] [-s | --stat-only] [--] <pack>.idx..."]
    PARSER = OptionParser("verify-pack", USAGE, [
        Option("v", "verbose", "bool", help="verbose"),
        Option("s", "stat-only", "bool", help="show statistics only"),
    ])

    def run(argv, ctx):
        opts, args = PARSER.parse(argv)
        if not args:
            raise PARSER.usage_error()      # the usage on stderr, exit 129
        ... opts.verbose, opts.stat_only ...

See docs/cli-options.md for the option kinds.
"""

from __future__ import annotations

import os
import sys

from gitodb.errors import GitodbError
from gitodb.lazyre import lazy
from gitodb.types import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import SimpleNamespace as SimpleNamespace
    from typing import Any
else:
    # ``types.SimpleNamespace`` is this very type (the ``types`` module takes it
    # from there too); importing ``types`` costs every command ~0.2 ms
    SimpleNamespace = type(sys.implementation)

__all__ = [
    "Option",
    "abbrev_length",
    "appender",
    "OptionParser",
    "UsageError",
    "PROGRAM",
    "as_gitodb_usage",
    "incompatible",
    "parse_int",
]

#: the program name the usage lines show
PROGRAM = "gitodb"

#: Git's layout: option names in a 24-column field, then two spaces, then the help
_OPTS_WIDTH = 24
_GAP = 2

#: what strtol reads in full: leading blanks, a sign, decimal digits
_DECIMAL = lazy(r"[ \t\n\v\f\r]*[+-]?[0-9]+")

#: the option kinds (Git's OPT_* families)
KINDS = frozenset({"bool", "count", "const", "cmdmode", "string", "int", "callback", "group"})


class UsageError(Exception):
    """A command line Git rejects (or ``-h``): what to print, and exit status 129."""

    def __init__(self, stderr: str = "", stdout: str = "", status: int = 129) -> None:
        super().__init__(stderr.strip() or stdout.strip())
        self.stderr = stderr
        self.stdout = stdout
        self.status = status


class Option(Record):
    """One option: ``short`` letter and/or ``long`` name, a ``kind``, where it goes.

    Kinds: ``bool`` (True; negated False), ``count`` (+1 each time; negated 0),
    ``const`` (sets ``const``; negated ``default``), ``cmdmode`` (sets ``const``; two
    different modes are an error; not negatable), ``string`` (a value; negated
    ``None``), ``int`` (a decimal value; negated 0), ``callback`` (``callback(values,
    value, unset)``; ``takes_value`` says whether it has a value), ``group`` (a
    heading in the usage, ``help`` is its text).  ``optional_value`` makes the value
    optional (``--abbrev[=<n>]``), ``default`` being used when it is absent.
    ``dest`` defaults to the long name (dashes as underscores), else the letter.
    """

    __slots__ = (
        "short",
        "long",
        "kind",
        "help",
        "argh",
        "dest",
        "default",
        "const",
        "optional_value",
        "negatable",
        "hidden",
        "literal_argh",
        "takes_value",
        "callback",
        "missing",
        "separate",
        "lastarg_default",
        "alias_of",
        "stuck",
        "initial",
    )
    short: str | None
    long: str | None
    kind: str
    help: str
    argh: str | None
    dest: str | None
    default: Any
    const: Any
    optional_value: bool
    negatable: bool
    hidden: bool
    literal_argh: bool
    takes_value: bool
    callback: Callable[[Any, str | None, bool], None] | None
    #: the message when the value is missing (the top-level ``gitodb`` options)
    missing: str | None
    #: for ``parse_exact``: the value is the next argument (``-o <file>``), given once
    separate: bool
    #: Git's ``PARSE_OPT_LASTARG_DEFAULT``: the value is the next argument, or
    #: ``default`` when the option comes last (``--merged [<commit>]``)
    lastarg_default: bool
    #: Git's ``OPT_ALIAS``: this option is another name of the long option given
    #: (declare it with the same kind and ``dest``); the help defaults to Git's text
    alias_of: str | None
    #: for ``parse_revision``: the value must be stuck (``--format=<fmt>``), as the
    #: revision options Git reads with ``skip_prefix`` (else the name is unknown)
    stuck: bool
    initial: Any

    def __init__(
        self,
        short: str | None,
        long: str | None,
        kind: str = "bool",
        help: str = "",
        argh: str | None = None,
        dest: str | None = None,
        default: Any = None,
        const: Any = None,
        optional_value: bool = False,
        negatable: bool = True,
        hidden: bool = False,
        literal_argh: bool = False,
        takes_value: bool = False,
        callback: Callable[[Any, str | None, bool], None] | None = None,
        missing: str | None = None,
        separate: bool = False,
        lastarg_default: bool = False,
        alias_of: str | None = None,
        stuck: bool = False,
        initial: Any = None,
    ) -> None:
        self.short = short
        self.long = long
        self.kind = kind
        self.help = help
        self.argh = argh
        self.dest = dest
        self.default = default
        self.const = const
        self.optional_value = optional_value
        self.negatable = negatable
        self.hidden = hidden
        self.literal_argh = literal_argh
        self.takes_value = takes_value
        self.callback = callback
        self.missing = missing
        self.separate = separate
        self.lastarg_default = lastarg_default
        self.alias_of = alias_of
        self.stuck = stuck
        self.initial = initial
        # derived defaults, and the check of the kind
        if self.kind not in KINDS:
            raise ValueError(f"unknown option kind {self.kind!r}")
        if self.dest is None and self.kind != "group":
            name = self.long or self.short or ""
            self.dest = name.replace("-", "_")
        if self.kind == "cmdmode":
            self.negatable = False
        if self.alias_of is not None and not self.help:
            self.help = f"alias of --{self.alias_of}"
        if self.kind in ("string", "int"):
            self.takes_value = True
            if self.argh is None:
                self.argh = "n" if self.kind == "int" else "value"

    @property
    def needs_value(self) -> bool:
        """True if a value must be given (not ``optional_value``)."""
        return self.takes_value and not self.optional_value

    def name(self, short: bool, unset: bool) -> str:
        """Git's ``optname``: ``switch `c'`` or ``option `[no-]name'``."""
        if short:
            return f"switch `{self.short}'"
        return f"option `{'no-' if unset else ''}{self.long}'"

    def shown(self) -> str:
        """How an incompatibility message names this option: ``--long``, else ``-c``."""
        return f"--{self.long}" if self.long else f"-{self.short}"


def _initial(opt: Option) -> Any:
    if opt.initial is not None:
        return opt.initial
    if opt.kind == "bool":
        return False
    if opt.kind == "count":
        return 0
    if opt.kind == "int":
        return opt.default if opt.default is not None and not opt.optional_value else 0
    return opt.default if opt.kind in ("const", "cmdmode") else None


class _Match:
    """A long option found for an argument: the option, negated or not, its value."""

    __slots__ = ("opt", "unset", "value")

    def __init__(self, opt: Option, unset: bool, value: str | None) -> None:
        self.opt = opt
        self.unset = unset
        self.value = value


class OptionParser:
    """Parse a command's arguments by Git's rules (see the module docstring).

    ``usage`` holds the usage lines after ``gitodb <command> `` (the first is
    ``usage:``, the others ``or:``; a line may continue after ``\\n``, indented under
    the command name, or, when it starts with spaces, as Git's literal text is:
    those spaces after the ``usage: `` column, moved right as far as ``gitodb`` is
    longer than ``git``).  ``notes`` is printed after the options by ``--help``.
    ``stop_at_non_option`` ends parsing at the first argument; ``keep_dashdash``
    keeps ``--`` among the arguments.
    """

    def __init__(
        self,
        command: str,
        usage: Sequence[str],
        options: Sequence[Option],
        *,
        notes: str = "",
        stop_at_non_option: bool = False,
        keep_dashdash: bool = False,
        layout: str = "2.39",
        keep_unknown: bool = False,
        literal_usage: str | None = None,
    ) -> None:
        if layout not in ("2.39", "2.55"):
            raise ValueError(f"unknown layout {layout!r}")
        self.layout = layout
        self.command = command
        self.usage = list(usage)
        self.options = list(options)
        self.notes = notes
        self.stop_at_non_option = stop_at_non_option
        self.keep_dashdash = keep_dashdash
        self.keep_unknown = keep_unknown
        self.literal_usage = literal_usage
        self._short = {o.short: o for o in self.options if o.short and o.kind != "group"}
        self._long = [o for o in self.options if o.long and o.kind != "group"]

    # -- the usage text ---------------------------------------------------------------
    def usage_text(self, *, full: bool = False, notes: bool = False, parsed: bool = False) -> str:
        """Git's usage block: usage lines, a blank line, the options, a blank line
        (or, for a command whose usage Git writes by hand, ``literal_usage`` with
        ``gitodb`` for ``git``).

        ``parsed``: the usage a command prints once parsing is done (Git 2.55 then
        shows an alias option with ``...``).
        """
        if self.literal_usage is not None:
            return as_gitodb_usage(self.literal_usage.rstrip("\n") + "\n")
        prog = f"{PROGRAM} {self.command}" if self.command else PROGRAM
        lines = []
        for i, entry in enumerate(self.usage):
            prefix = "usage: " if i == 0 else "   or: "
            first, *rest = entry.split("\n")
            lines.append(f"{prefix}{prog} {first}".rstrip())
            indent = " " * (len(prefix) + len(prog) + 1)
            # A continuation written with its own indentation is Git's literal text
            # (aligned under "git <command> "): it moves right as far as the name grew.
            shift = " " * (len(prefix) + len(PROGRAM) - len("git"))
            lines.extend(
                f"{shift}{line}" if line.startswith(" ") else f"{indent}{line}" for line in rest
            )
        out = "\n".join(lines) + "\n"
        shown = [o for o in self.options if full or not o.hidden]
        # Git leaves one blank line after the usage, with options or without; a
        # group heading brings its own
        if not shown or shown[0].kind != "group":
            out += "\n"
        for o in shown:
            if o.kind == "group":
                out += "\n" + (f"{o.help}\n" if o.help else "")
                continue
            out += self._option_line(o, parsed)
        if shown:
            out += "\n"
        if notes and self.notes:
            out += self.notes.rstrip("\n") + "\n"
        return out

    def _option_line(self, o: Option, parsed: bool = False) -> str:
        text = "    "
        if o.short:
            text += f"-{o.short}"
            if o.long:
                text += ", "
        if o.long:
            if self.layout == "2.55" and o.negatable and not o.long.startswith("no-"):
                text += f"--[no-]{o.long}"
            else:
                text += f"--{o.long}"
        if self.layout == "2.55" and o.alias_of is not None and parsed:
            text += " ..."
        elif o.takes_value and o.argh:
            argh = o.argh if o.literal_argh else f"<{o.argh}>"
            if o.optional_value:
                text += f"[={argh}]" if o.long else f"[{argh}]"
            else:
                text += f" {argh}"
        if len(text) <= _OPTS_WIDTH:
            text += " " * (_OPTS_WIDTH - len(text) + _GAP)
        elif len(text) == _OPTS_WIDTH + 1 and self.layout == "2.55":
            text += " "  # one column over: Git 2.55 keeps the help on the line
        else:
            text += "\n" + " " * (_OPTS_WIDTH + _GAP)
        return text + o.help + "\n"

    def help_exit(self, *, full: bool = False, notes: bool = False) -> UsageError:
        """``-h``: the usage on stdout, exit 129."""
        return UsageError(stdout=self.usage_text(full=full, notes=notes))

    def usage_error(self, message: str | None = None, *, parsed: bool = True) -> UsageError:
        """``error: <message>`` (if any) and the usage on stderr, exit 129.

        ``parsed=False`` while parsing (an unknown option), where it matters (see
        ``usage_text``)."""
        head = f"error: {message}\n" if message else ""
        return UsageError(stderr=head + self.usage_text(parsed=parsed))

    def usage_fatal(self, message: str) -> UsageError:
        """Git's ``usage_msg_opt``: ``fatal: <message>``, a blank line, the usage; 129."""
        return UsageError(stderr=f"fatal: {message}\n\n{self.usage_text(parsed=True)}")

    @staticmethod
    def error(message: str) -> UsageError:
        """``error: <message>`` alone, exit 129 (Git's bad-value errors)."""
        return UsageError(stderr=f"error: {message}\n")

    # -- parsing ------------------------------------------------------------------------
    def defaults(self) -> SimpleNamespace:
        """The values before any argument is seen."""
        values = SimpleNamespace()
        for o in self.options:
            if o.dest is not None and not hasattr(values, o.dest):
                setattr(values, o.dest, _initial(o))
        return values

    def parse(
        self, argv: Sequence[str], values: SimpleNamespace | None = None
    ) -> tuple[SimpleNamespace, list[str]]:
        """Parse ``argv``: the option values and the other arguments, in order.

        Raises ``UsageError`` as Git's parse-options would exit.
        """
        if values is None:
            values = self.defaults()
        modes: dict[str, tuple[Option, str]] = {}
        args: list[str] = []
        argv = list(argv)
        i = 0
        while i < len(argv):
            arg = argv[i]
            i += 1
            if not arg.startswith("-") or arg == "-":
                if self.stop_at_non_option:
                    args.extend(argv[i - 1 :])
                    return values, args
                args.append(arg)
                continue
            if arg == "--":
                args.extend(argv[i - 1 if self.keep_dashdash else i :])
                return values, args
            if arg == "--end-of-options":
                # kept for the next parser when unknown options are passed on
                args.extend(argv[i - 1 if self.keep_unknown else i :])
                return values, args
            if arg == "-h" and (len(argv) == 1 or self.keep_unknown):
                raise self.help_exit()  # a lone -h asks for help, always
            if arg[1] != "-":
                if self.keep_unknown and arg[1] not in self._short:
                    args.append(arg)
                    continue
                i = self._parse_short(arg, argv, i, values, modes)
                continue
            name = arg[2:]
            if name == "help-all":
                raise self.help_exit(full=True)
            if name == "help":
                raise self.help_exit(notes=True)
            match = self._find_exact(name) if self.keep_unknown else self._find_long(name)
            if match is None:
                if self.keep_unknown:
                    args.append(arg)
                    continue
                raise self.usage_error(f"unknown option `{name}'", parsed=False)
            value = match.value
            opt = match.opt
            if match.unset and value is not None:
                raise self.error(f"{opt.name(False, True)} takes no value")
            if value is not None and not opt.takes_value:
                raise self.error(f"{opt.name(False, match.unset)} takes no value")
            if opt.needs_value and value is None and not match.unset:
                if i >= len(argv):
                    if opt.lastarg_default:
                        self._apply(opt, opt.default, False, False, values, modes)
                        continue
                    raise self.error(opt.missing or f"{opt.name(False, False)} requires a value")
                value = argv[i]
                i += 1
            self._apply(opt, value, match.unset, False, values, modes)
        return values, args

    def parse_revision(
        self,
        argv: Sequence[str],
        values: SimpleNamespace | None = None,
        *,
        on_arg: Callable[[Any, str], None] | None = None,
    ) -> tuple[SimpleNamespace, list[str], list[str] | None]:
        """Parse by the rules of Git's ``setup_revisions`` (rev-list's and log's options).

        Names are exact (no prefixes, no bundles, no ``--no-`` forms but those
        declared); a long option's value is ``--opt=value`` or the next argument
        (Git's ``parse_long_opt``; ``fatal: Option '--opt' requires a value``, exit
        128, when there is none), stuck only with ``stuck`` or ``optional_value``; a
        short one's ``-n5`` or ``-n 5`` (its ``missing`` message, exit 128, when there
        is none); ``-<digits>`` is ``-n <digits>``.  Every other argument is a
        revision, given to ``on_arg`` in order (so that pseudo-options like ``--not``
        stay where they were); after ``--end-of-options`` all are revisions.  Returns
        the values, the options not declared (in order, for the command to judge)
        and the paths after ``--`` (None without ``--``).
        """
        if values is None:
            values = self.defaults()
        modes: dict[str, tuple[Option, str]] = {}
        unknown: list[str] = []
        argv = list(argv)
        only_revs = False
        i = 0

        def revision(arg: str) -> None:
            if on_arg is None:
                unknown.append(arg)
            else:
                on_arg(values, arg)

        while i < len(argv):
            arg = argv[i]
            i += 1
            if arg == "--":
                return values, unknown, argv[i:]
            if only_revs or not arg.startswith("-") or arg == "-":
                revision(arg)
                continue
            if arg == "--end-of-options":
                only_revs = True
                continue
            if arg[1] != "-":
                short = self._short.get(arg[1])
                if arg[1].isdigit() and "n" in self._short:  # -<n>, "-1q" too (Git's error)
                    short, arg = self._short["n"], "-n" + arg[1:]
                if short is None or (len(arg) > 2 and not short.takes_value):
                    unknown.append(arg)
                    continue
                value: str | None = arg[2:] or None
                if short.takes_value and value is None:
                    if i >= len(argv):
                        message = short.missing or f"-{short.short} requires an argument"
                        raise UsageError(stderr=f"error: {message}\n", status=128)
                    value = argv[i]
                    i += 1
                self._apply(short, value, False, True, values, modes)
                continue
            name, eq, value_text = arg[2:].partition("=")
            opt = next((o for o in self._long if o.long == name), None)
            if opt is None or (eq and not opt.takes_value):
                unknown.append(arg)
                continue
            value = value_text if eq else None
            if value is None and opt.needs_value:
                if opt.stuck:
                    unknown.append(arg)
                    continue
                if i >= len(argv):
                    raise UsageError(
                        stderr=f"fatal: Option '--{name}' requires a value\n", status=128
                    )
                value = argv[i]
                i += 1
            self._apply(opt, value, False, False, values, modes)
        return values, unknown, None

    def parse_wrapper(
        self, argv: Sequence[str]
    ) -> tuple[list[tuple[Option, str | None]], list[str]]:
        """The top-level ``gitodb`` options, by the rules of Git's own ``git`` wrapper.

        Unlike a command's: options come before the command only, names are exact
        (no prefixes, no bundles), a short option's value is the next argument, a
        long one's ``--opt=value`` or ``--opt value``.  Returns the options in the
        order given, with their values, and the arguments from the command on.
        ``-h``/``--help`` print the usage and exit 0; an unknown option is
        ``unknown option: <arg>`` and a missing value the option's ``missing``
        message, each followed by the usage on stderr, exit 129.
        """
        seen: list[tuple[Option, str | None]] = []
        argv = list(argv)
        i = 0
        while i < len(argv) and argv[i].startswith("-"):
            arg = argv[i]
            i += 1
            if arg in ("-h", "--help"):
                raise UsageError(stdout=self.usage_text(notes=True), status=0)
            if arg.startswith("--"):
                name, eq, value_text = arg[2:].partition("=")
                opt = next((o for o in self._long if o.long == name), None)
                value = value_text if eq else None
                if opt is not None and eq and not opt.takes_value:
                    opt = None
            else:
                opt = self._short.get(arg[1:]) if len(arg) == 2 else None
                value = None
            if opt is None:
                raise UsageError(stderr=f"unknown option: {arg}\n{self.usage_text()}")
            if opt.takes_value and value is None:
                if i >= len(argv):
                    message = opt.missing or f"no value given for '{arg}' option"
                    raise UsageError(stderr=f"{message}\n{self.usage_text()}")
                value = argv[i]
                i += 1
            seen.append((opt, value))
        return seen, argv[i:]

    def parse_exact(
        self, argv: Sequence[str], values: SimpleNamespace | None = None
    ) -> tuple[SimpleNamespace, list[str]]:
        """Parse by the rules of Git's commands that read ``argv`` by hand (``index-pack``).

        Names are exact (no prefixes, no bundles, no ``--no-`` forms but those
        declared, no ``--``); a value is stuck (``--threads=<n>``), optional where
        the option says so (``--keep[=<msg>]``), or with ``separate`` the next
        argument, given once (``-o <file>``).  Options and arguments mix.  Anything
        else is Git's ``usage()``: the usage lines on stderr, exit 129; a lone
        ``-h`` prints them on stdout.
        """
        if values is None:
            values = self.defaults()
        modes: dict[str, tuple[Option, str]] = {}
        seen: set[str] = set()
        args: list[str] = []
        usage = UsageError(stderr=self.usage_lines())
        if list(argv) == ["-h"]:
            raise UsageError(stdout=self.usage_lines())
        i = 0
        while i < len(argv):
            arg = argv[i]
            i += 1
            if not arg.startswith("-") or arg == "-":
                args.append(arg)
                continue
            if arg.startswith("--"):
                name, eq, value_text = arg[2:].partition("=")
                opt = next((o for o in self._long if o.long == name), None)
                short = False
            else:
                name, eq, value_text = arg[1:], "", ""
                opt = self._short.get(name) if len(name) == 1 else None
                short = True
            if opt is None:
                raise usage
            value: str | None = value_text if eq else None
            if opt.separate:
                if eq or i >= len(argv) or opt.dest in seen:
                    raise usage
                value = argv[i]
                i += 1
                seen.add(opt.dest or "")
            elif value is not None and not opt.takes_value:
                raise usage
            elif opt.needs_value and value is None:
                raise usage
            self._apply(opt, value, False, short, values, modes)
        return values, args

    def usage_lines(self) -> str:
        """Only the usage lines (what Git's ``usage()`` prints), no option list."""
        return self.usage_text().split("\n\n", 1)[0].rstrip("\n") + "\n"

    def _parse_short(
        self,
        arg: str,
        argv: list[str],
        i: int,
        values: SimpleNamespace,
        modes: dict[str, tuple[Option, str]],
    ) -> int:
        j = 1
        while j < len(arg):
            c = arg[j]
            opt = self._short.get(c)
            if opt is None:
                if j == 1:
                    self._check_typos(arg[1:])
                if c == "h":
                    raise self.help_exit()
                raise self.usage_error(f"unknown switch `{c}'", parsed=False)
            j += 1
            rest = arg[j:] or None
            if not opt.takes_value:
                self._apply(opt, None, False, True, values, modes)
                if j == 2 and rest is not None:
                    self._check_typos(arg[1:])
                continue
            if rest is None and opt.needs_value:
                if i >= len(argv):
                    if opt.lastarg_default:
                        self._apply(opt, opt.default, False, True, values, modes)
                        return i
                    raise self.error(opt.missing or f"{opt.name(True, False)} requires a value")
                rest = argv[i]
                i += 1
            self._apply(opt, rest, False, True, values, modes)
            return i
        return i

    def _check_typos(self, word: str) -> None:
        """Git's hint for ``-long-option`` typed with one dash."""
        if len(word) < 3:
            return
        if word.startswith("no-"):
            raise self.error(f"did you mean `--{word}` (with two dashes)?")
        for o in self._long:
            if o.long and o.long.startswith(word):
                raise self.error(f"did you mean `--{word}` (with two dashes)?")

    def _find_exact(self, arg: str) -> _Match | None:
        """A long option named exactly (or its exact ``no-`` form), else None."""
        name, eq, value_text = arg.partition("=")
        value = value_text if eq else None
        for o in self._long:
            assert o.long is not None
            for candidate, unset in self._spellings(o.long, o.negatable, name):
                if candidate == name:
                    return _Match(o, unset, value)
        return None

    def _find_long(self, arg: str) -> _Match | None:
        """Git's ``parse_long_opt``: an exact name, else one unique prefix, else None."""
        name, eq, value_text = arg.partition("=")
        value = value_text if eq else None
        abbrev: _Match | None = None
        ambiguous: _Match | None = None
        for o in self._long:
            long = o.long
            assert long is not None
            for candidate, unset in self._spellings(long, o.negatable, name):
                if candidate == name:
                    return _Match(o, unset, value)
                if candidate.startswith(name):
                    if abbrev is not None and abbrev.opt is not o:
                        ambiguous = abbrev
                    abbrev = _Match(o, unset, value)
                    break
        if abbrev is not None and _abbreviations_disallowed():
            raise UsageError(
                stderr=f"fatal: disallowed abbreviated or ambiguous option '{name}'\n", status=128
            )
        if ambiguous is not None and abbrev is not None:
            a = ("no-" if ambiguous.unset else "") + (ambiguous.opt.long or "")
            b = ("no-" if abbrev.unset else "") + (abbrev.opt.long or "")
            raise UsageError(
                stderr=f"error: ambiguous option: {arg} (could be --{a} or --{b})\n",
                stdout=self.usage_text(),
            )
        return abbrev

    @staticmethod
    def _spellings(long: str, negatable: bool, arg: str) -> list[tuple[str, bool]]:
        """The names ``long`` answers to, with whether each negates it, in Git's order.

        ``name``; for a negatable option ``no-name`` (tried when the argument starts
        with ``no-`` or is a prefix of ``no-``); an option called ``no-x`` answers
        to ``x`` as its negation.
        """
        out = [(long, False)]
        if not negatable:
            return out
        if "no-".startswith(arg) or arg.startswith("no-"):
            out.append(("no-" + long, True))
        elif long.startswith("no-"):
            out.append((long[3:], True))
        return out

    def _apply(
        self,
        opt: Option,
        value: str | None,
        unset: bool,
        short: bool,
        values: SimpleNamespace,
        modes: dict[str, tuple[Option, str]],
    ) -> None:
        dest = opt.dest
        assert dest is not None
        kind = opt.kind
        if kind == "bool":
            setattr(values, dest, not unset)
        elif kind == "count":
            setattr(values, dest, 0 if unset else getattr(values, dest) + 1)
        elif kind == "const":
            setattr(values, dest, opt.default if unset else opt.const)
        elif kind == "cmdmode":
            given = f"-{opt.short}" if short else f"--{opt.long}"
            earlier, earlier_given = modes.get(dest, (None, ""))
            if earlier is not None and earlier.const != opt.const:
                if self.layout == "2.55":
                    raise self.error(
                        f"options '{given}' and '{earlier_given}' cannot be used together"
                    )
                raise self.error(f"{opt.name(short, False)} is incompatible with {earlier.shown()}")
            modes[dest] = (opt, given)
            setattr(values, dest, opt.const)
        elif kind == "string":
            setattr(values, dest, None if unset else (opt.default if value is None else value))
        elif kind == "int":
            if unset:
                setattr(values, dest, 0)
            elif value is None:
                setattr(values, dest, opt.default)
            else:
                setattr(values, dest, self._int(opt, value, short))
        elif kind == "callback":
            assert opt.callback is not None
            opt.callback(values, value, unset)

    def _int(self, opt: Option, value: str, short: bool) -> int:
        return parse_int(value, opt.name(short, False))


def appender(dest: str) -> Callable[[Any, str | None, bool], None]:
    """The callback of a repeatable option (Git's string lists, ``--sort``,
    ``--exclude``): each value is appended to the list ``dest`` (None until the
    option is seen); ``--no-<opt>`` empties it."""

    def callback(values: Any, value: str | None, unset: bool) -> None:
        items = getattr(values, dest) or []
        setattr(values, dest, [] if unset else [*items, value or ""])

    return callback


def parse_int(value: str, what: str) -> int:
    """A decimal as C's ``strtol`` reads it whole; else ``<what> expects a numerical value``."""
    if _DECIMAL.fullmatch(value) is None:
        raise OptionParser.error(f"{what} expects a numerical value")
    return int(value)


def abbrev_length(text: str) -> int:
    """The ``<n>`` of log's and diff-tree's ``--abbrev=<n>``: 0 (full ids) or at least 4;
    ``GitodbError`` ``'<text>': not an integer`` when it is no number."""
    try:
        n = int(text)
    except ValueError:
        raise GitodbError(f"'{text}': not an integer") from None
    return max(n, 4) if n else 0


def _abbreviations_disallowed() -> bool:
    """Git's test suite sets this: an abbreviated option is then fatal."""
    value = os.environ.get("GIT_TEST_DISALLOW_ABBREVIATED_OPTIONS", "")
    return value.lower() in ("1", "true", "yes", "on")


def incompatible(*names: str) -> UsageError:
    """Git's ``die_for_incompatible_opt``: ``fatal: options 'a' and 'b' cannot be used
    together`` (exit 128); three names read ``options 'a', 'b', and 'c'``."""
    if len(names) == 2:
        text = f"options '{names[0]}' and '{names[1]}' cannot be used together"
    else:
        quoted = ", ".join(f"'{n}'" for n in names[:-1])
        text = f"options {quoted}, and '{names[-1]}' cannot be used together"
    return UsageError(stderr=f"fatal: {text}\n", status=128)


def as_gitodb_usage(text: str) -> str:
    """Git's usage text with ``gitodb`` for ``git``: what gitodb prints for the same.

    In each usage block (``usage: git ...``, then ``   or: git ...`` lines and
    indented continuation lines, up to a blank line) the program name changes and
    continuation lines move right by as much, as Git indents them.
    """
    out = []
    in_usage = False
    shift = " " * (len(PROGRAM) - len("git"))
    for line in text.split("\n"):
        if line.startswith(("usage: git ", "   or: git ")):
            in_usage = True
            line = f"{line[:7]}{PROGRAM} {line[len('usage: git ') :]}"
        elif in_usage and line.startswith(" "):
            line = shift + line
        else:
            in_usage = False
        out.append(line)
    return "\n".join(out)
