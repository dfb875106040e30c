"""``gitodb cat-file``: object contents, type, size and batch queries, like ``git cat-file``.

Modes: ``-t``, ``-s``, ``-e``, ``-p``, ``<type> <object>``, ``--textconv``/``--filters``
(``<rev>:<path>`` or ``--path``), ``--batch[=<format>]``, ``--batch-check[=<format>]``,
``--batch-command[=<format>]`` (``contents``, ``info``, ``flush``), with
``--batch-all-objects``, ``--unordered``, ``--buffer``, ``--follow-symlinks``,
``--filter=<spec>``, ``-z`` and ``-Z``.  Options, messages and exit codes are Git
2.55's (its t1006 is the reference).  A thin shell: the reads are
``gitodb.repo.catfile`` (one object) and ``gitodb.repo.batch`` (the batch modes and
their strategies); this module parses, checks the combination and prints.
"""

from __future__ import annotations

import os
import sys

from gitodb.cli import output
from gitodb.cli.options import Option, OptionParser, UsageError
from gitodb.errors import (
    AmbiguousObjectNameError,
    BadRevisionError,
    GitodbError,
    LooseObjectError,
    ObjectNotFoundError,
)
from gitodb.loose.read import INVALID_TYPE
from gitodb.objects.header import TYPE_NUMBERS
from gitodb.repo import work_tree_mailmap
from gitodb.repo.catfile import converted_content, object_header, peeled_content, pretty_content
from gitodb.repo.revparse import MissingPathError, Resolved, resolve_full, rev_of_path_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import SimpleNamespace

    from gitodb.cli.main import Context
    from gitodb.objects.mailmap import Mailmap
    from gitodb.repo import Repository
    from gitodb.repo.conversion import Conversion


def _batch_option(mode: str, help: str) -> Option:
    """``--batch``, ``--batch-check``, ``--batch-command``: one of them, with an
    optional format (Git's ``batch_option_callback``)."""

    def callback(values: SimpleNamespace, value: str | None, unset: bool) -> None:
        if values.batch is not None:
            raise OptionParser.error("only one batch option may be specified")
        values.batch = mode
        values.format = value

    return Option(
        None,
        mode,
        "callback",
        help,
        argh="format",
        takes_value=True,
        optional_value=True,
        negatable=False,
        callback=callback,
    )


def _filter_callback(values: SimpleNamespace, value: str | None, unset: bool) -> None:
    """``--filter=<spec>`` (combined with an earlier one as Git does); ``--no-filter``."""
    from gitodb.objects.filter import ObjectFilter

    values.filter = None if unset or value is None else ObjectFilter.parse(value, values.filter)


def _buffer_callback(values: SimpleNamespace, value: str | None, unset: bool) -> None:
    values.buffer = not unset  # None until given: the mode then decides


PARSER = OptionParser(
    "cat-file",
    [
        "<type> <object>",
        "(-e | -p | -t | -s) <object>",
        "(--textconv | --filters)\n[<rev>:<path|tree-ish> | --path=<path|tree-ish> <rev>]",
        "(--batch | --batch-check | --batch-command) [--batch-all-objects]\n"
        "[--buffer] [--follow-symlinks] [--unordered]\n"
        "[--textconv | --filters] [-Z]",
    ],
    [
        Option(None, None, "group", "Check object existence or emit object contents"),
        Option("e", None, "cmdmode", "check if <object> exists", dest="mode", const="e"),
        Option("p", None, "cmdmode", "pretty-print <object> content", dest="mode", const="p"),
        Option(None, None, "group", "Emit [broken] object attributes"),
        Option(
            "t",
            None,
            "cmdmode",
            "show object type (one of 'blob', 'tree', 'commit', 'tag', ...)",
            dest="mode",
            const="t",
        ),
        Option("s", None, "cmdmode", "show object size", dest="mode", const="s"),
        Option(None, "allow-unknown-type", "bool", "historical option -- no-op", hidden=True),
        Option(None, "use-mailmap", "bool", "use mail map file", dest="mailmap"),
        Option(None, "mailmap", "bool", dest="mailmap", alias_of="use-mailmap"),
        Option(None, None, "group", "Batch objects requested on stdin (or --batch-all-objects)"),
        _batch_option("batch", "show full <object> or <rev> contents"),
        _batch_option("batch-check", "like --batch, but don't emit <contents>"),
        Option("z", None, "bool", "stdin is NUL-terminated", dest="nul_input", hidden=True),
        Option("Z", None, "bool", "stdin and stdout is NUL-terminated", dest="nul_output"),
        _batch_option("batch-command", "read commands from stdin"),
        Option(
            None,
            "batch-all-objects",
            "cmdmode",
            "with --batch[-check]: ignores stdin, batches all known objects",
            dest="mode",
            const="b",
        ),
        Option(None, None, "group", "Change or optimize batch output"),
        Option(None, "buffer", "callback", "buffer --batch output", callback=_buffer_callback),
        Option(None, "follow-symlinks", "bool", "follow in-tree symlinks"),
        Option(None, "unordered", "bool", "do not order objects before emitting them"),
        Option(
            None,
            None,
            "group",
            "Emit object (blob or tree) with conversion or filter (stand-alone, or with batch)",
        ),
        Option(
            None, "textconv", "cmdmode", "run textconv on object's content", dest="mode", const="c"
        ),
        Option(
            None, "filters", "cmdmode", "run filters on object's content", dest="mode", const="w"
        ),
        Option(
            None,
            "path",
            "string",
            "use a <path> for (--textconv | --filters); Not with 'batch'",
            argh="blob|tree",
            literal_argh=True,
        ),
        Option(
            None,
            "filter",
            "callback",
            "object filtering",
            argh="args",
            takes_value=True,
            callback=_filter_callback,
        ),
    ],
    layout="2.55",
)

#: how Git names each command mode in its messages
_MODE_NAMES = {"e": "-e", "p": "-p", "t": "-t", "s": "-s", "c": "--textconv", "w": "--filters"}
#: the library's names of the conversions
_TRANSFORMS = {"c": "textconv", "w": "filters"}


def parse_args(argv: list[str]) -> tuple[SimpleNamespace, list[str]]:
    """Parse and check ``argv`` as Git 2.55's ``cat-file`` does (``UsageError``)."""
    values = PARSER.defaults()
    values.batch = None
    values.format = None
    o, args = PARSER.parse(argv, values)
    check_args(o, args)
    return o, args


def check_args(o: SimpleNamespace, args: list[str]) -> None:
    """Git's checks of the option combination, in Git's order (``UsageError``)."""
    mode = o.mode
    transform = mode in ("c", "w")
    if o.filter is not None and o.filter.kind not in ("blob:none", "blob:limit", "object:type"):
        raise UsageError(stderr=f"usage: objects filter not supported: '{o.filter.kind}'\n")
    if o.path is not None and not transform:
        raise PARSER.usage_fatal("'--path=<path|tree-ish>' needs '--filters' or '--textconv'")
    if o.batch is None:
        for flag, on in (
            ("--follow-symlinks", o.follow_symlinks),
            ("--buffer", o.buffer is not None),
            ("--batch-all-objects", mode == "b"),
            ("-z", o.nul_input),
            ("-Z", o.nul_output),
        ):
            if on:
                raise PARSER.usage_fatal(f"'{flag}' requires a batch mode")
        if o.filter is not None:
            raise UsageError(stderr="usage: objects filter only supported in batch mode\n")
    else:
        if mode is not None and not transform and mode != "b":
            raise PARSER.usage_fatal(f"'-{mode}' is incompatible with batch mode")
        if args:
            raise PARSER.usage_fatal("batch modes take no arguments")
        return
    if mode is not None:
        if not args:
            if transform:
                raise PARSER.usage_fatal(f"<rev> required with '{_MODE_NAMES[mode]}'")
            raise PARSER.usage_fatal(f"<object> required with '-{mode}'")
        if len(args) > 1:
            raise PARSER.usage_fatal("too many arguments")
    elif not args:
        raise PARSER.usage_error()
    elif len(args) != 2:
        raise PARSER.usage_fatal(
            f"only two arguments allowed in <type> <object> mode, not {len(args)}"
        )


def run(argv: list[str], ctx: Context) -> int:
    """Entry point for ``gitodb cat-file``."""
    o, args = parse_args(argv)
    repo = ctx.open_repository()
    conversion = _conversion(repo, ctx) if o.mode in ("c", "w") else None
    if o.batch is not None:
        # The batch machinery is loaded for batch modes only: a single lookup's
        # start-up is most of its cost.
        from gitodb.repo.batch import BatchOptions, run_batch

        options = BatchOptions(
            o.batch,
            format=o.format,
            all_objects=o.mode == "b",
            unordered=o.unordered,
            buffer=o.buffer,
            nul_input=o.nul_input,
            nul_output=o.nul_output,
            follow_symlinks=o.follow_symlinks,
            object_filter=o.filter,
            transform=_TRANSFORMS.get(o.mode),
            mailmap=bool(o.mailmap),
        )
        return run_batch(
            repo,
            options,
            sys.stdin.buffer,
            sys.stdout.buffer,
            conversion=conversion,
            writev=output.writev,
            write=output.write,
            pwritev=output.pwritev if hasattr(os, "pwritev") else None,
            sendfile=output.sendfile if hasattr(os, "sendfile") else None,
        )
    if conversion is not None:
        return _run_transform(repo, o, args, conversion)
    return _run_single(repo, o.mode, args, work_tree_mailmap(repo) if o.mailmap else None)


def _conversion(repo: Repository, ctx: Context) -> Conversion:
    """The attribute-driven conversions for ``--filters``/``--textconv``."""
    from gitodb.repo.conversion import conversion_for

    explicit = bool(ctx.git_dir or os.environ.get("GIT_DIR"))
    return conversion_for(repo, repo.config, explicit_git_dir=explicit, attr_source=ctx.attr_source)


def _run_transform(
    repo: Repository, o: SimpleNamespace, args: list[str], conversion: Conversion
) -> int:
    """``--filters`` / ``--textconv`` on one object: ``<rev>:<path>`` or ``--path``."""
    name = args[0]
    got = _resolve_or_die(repo, name)
    path = o.path if o.path is not None else got.path
    if path is None:
        raise GitodbError(f"<object>:<path> required, only <object> '{name}' given")
    try:
        data = converted_content(repo, got, path, conversion, _TRANSFORMS[o.mode])
    except ObjectNotFoundError:
        raise GitodbError(f"Not a valid object name {name}") from None
    if data is None:  # no textconv driver: Git prints the object as -p does
        return _run_single(repo, "p", args, work_tree_mailmap(repo) if o.mailmap else None)
    sys.stdout.buffer.write(data)
    return 0


def _resolve_or_die(repo: Repository, name: str) -> Resolved:
    """``name`` resolved, or Git's error for it: of ``<rev>:<path>`` whose ``<rev>``
    does not resolve, ``invalid object name '<rev>'.`` (Git's diagnosis of a name
    it must resolve or die), else ``Not a valid object name <name>``; an ambiguity
    first prints its error and the candidates."""
    try:
        return resolve_full(repo, name)
    except MissingPathError:
        raise
    except BadRevisionError as e:
        output.report_ambiguity(e)
        rev = rev_of_path_name(name)
        if rev is not None and (
            isinstance(e, AmbiguousObjectNameError) or not _resolves(repo, rev)
        ):
            raise BadRevisionError(f"invalid object name '{rev}'.") from None
        raise BadRevisionError(f"Not a valid object name {name}") from None


def _resolves(repo: Repository, rev: str) -> bool:
    try:
        resolve_full(repo, rev, "treeish")
    except BadRevisionError:
        return False
    return True


def _run_single(
    repo: Repository, mode: str | None, args: list[str], mailmap: Mailmap | None = None
) -> int:
    try:
        return _run_single_checked(repo, mode, args, mailmap)
    except LooseObjectError as e:
        if e.message == INVALID_TYPE:
            raise GitodbError(INVALID_TYPE) from None  # Git names no file here
        from gitodb.repo.batch import loose_error_lines, loose_hex, shown_path

        lines = loose_error_lines(e)
        if lines is None:
            raise
        sys.stderr.write("".join(f"error: {line}\n" for line in lines))
        name = args[-1]
        if mode in ("t", "s"):
            raise GitodbError("git cat-file: could not get object info") from None
        if mode == "p":
            raise GitodbError(f"Not a valid object name {name}") from None
        oid_hex = loose_hex(e.path or "")
        raise GitodbError(
            f"loose object {oid_hex} (stored in {shown_path(e.path or '')}) is corrupt"
        ) from None


def _run_single_checked(
    repo: Repository, mode: str | None, args: list[str], mailmap: Mailmap | None
) -> int:
    out = sys.stdout.buffer
    if mode is None:
        type_name, name = args
        if type_name not in TYPE_NUMBERS:
            raise GitodbError(f'invalid object type "{type_name}"')
        data = peeled_content(repo, _resolve_or_die(repo, name), type_name, mailmap)
        if data is None:
            raise GitodbError(f"git cat-file {name}: bad file")
        out.write(data)
        return 0
    name = args[0]
    got = _resolve_or_die(repo, name)
    if mode == "e":
        return 0 if repo.odb.contains(got.oid) else 1
    if mode in ("t", "s"):
        try:
            t, size = object_header(repo, got, mailmap)
        except ObjectNotFoundError:
            raise GitodbError("git cat-file: could not get object info") from None
        out.write(b"%s\n" % (t.encode() if mode == "t" else b"%d" % size))
        return 0
    try:
        out.write(pretty_content(repo, got, mailmap))
    except ObjectNotFoundError:
        raise GitodbError(f"Not a valid object name {name}") from None
    return 0


__all__ = ["run", "parse_args", "check_args", "PARSER"]
