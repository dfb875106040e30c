"""``gitodb refs migrate|verify|list|exists|optimize``: Git 2.55's ``git refs``.

``list`` is ``for-each-ref`` and ``optimize`` is ``pack-refs`` under other names;
``exists`` checks one ref; ``verify`` and ``migrate`` are in ``gitodb.refs.verify``
and ``gitodb.repo.refmigrate``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from gitodb.cli.options import Option, OptionParser, UsageError, as_gitodb_usage

_MIGRATE = "usage: git refs migrate --ref-format=<format> [--no-reflog] [--dry-run]"
_VERIFY = "usage: git refs verify [--strict] [--verbose]"
_EXISTS = "usage: git refs exists <ref>"

USAGE = """\
usage: git refs migrate --ref-format=<format> [--no-reflog] [--dry-run]
   or: git refs verify [--strict] [--verbose]
   or: git refs list [--count=<count>] [--shell|--perl|--python|--tcl]
                                [(--sort=<key>)...] [--format=<format>]
                                [--include-root-refs] [--points-at=<object>]
                                [--merged[=<object>]] [--no-merged[=<object>]]
                                [--contains[=<object>]] [--no-contains[=<object>]]
                                [(--exclude=<pattern>)...] [--start-after=<marker>]
                                [ --stdin | (<pattern>...)]
   or: git refs exists <ref>
   or: git refs optimize [--all] [--no-prune] [--auto] [--include <pattern>] [--exclude <pattern>]

"""

MIGRATE_USAGE = f"""\
{_MIGRATE}

    --ref-format <format> specify the reference format to convert to
    --dry-run             perform a non-destructive dry-run
    --no-reflog           drop reflogs entirely during the migration
    --reflog              opposite of --no-reflog

"""

VERIFY_USAGE = f"""\
{_VERIFY}

    --verbose             be verbose
    --strict              enable strict checking

"""

EXISTS_USAGE = f"{_EXISTS}\n\n"


def _usage_exit(text: str, message: str | None, *, error: bool = True) -> int:
    """Git's parse-options exit: ``-h`` to stdout, an error and the usage to stderr."""
    text = as_gitodb_usage(text)
    if message is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return 129
    sys.stderr.write((f"error: {message}\n" if error else "") + text)
    return 129


def _parse(argv: list[str], options: list[Option], text: str) -> tuple[Any, list[str]]:
    """Parse by Git's rules; usage texts are Git 2.55's own (``git refs`` is new there)."""
    try:
        return OptionParser("refs", [], options).parse(argv)
    except UsageError as e:
        if e.stdout:
            raise UsageError(stdout=as_gitodb_usage(text)) from None
        head = e.stderr.split("\n", 1)[0] + "\n" if e.stderr.startswith("error: ") else ""
        raise UsageError(stderr=head + as_gitodb_usage(text)) from None


def run(argv: list[str], ctx: Any) -> int:
    """Dispatch ``refs <subcommand>``."""
    if not argv or argv[0] in ("-h", "--help", "--help-all"):
        if not argv:
            return _usage_exit(USAGE, "need a subcommand")
        return _usage_exit(USAGE, None)
    sub, rest = argv[0], argv[1:]
    if sub == "list":
        from gitodb.cli import for_each_ref

        return for_each_ref.run(rest, ctx, command="refs list")
    if sub == "optimize":
        from gitodb.cli import pack_refs

        return pack_refs.run(rest, ctx, command="refs optimize")
    if sub == "exists":
        return _exists(rest, ctx)
    if sub == "verify":
        return _verify(rest, ctx)
    if sub == "migrate":
        return _migrate(rest, ctx)
    return _usage_exit(USAGE, f"unknown subcommand: `{sub}'")


def _exists(argv: list[str], ctx: Any) -> int:
    from gitodb.errors import GitodbError, RefError

    _opts, args = _parse(argv, [], EXISTS_USAGE)
    if len(args) != 1:
        raise GitodbError("'git refs exists' requires a reference")
    repo = ctx.open_repository()
    try:
        found = repo.refs.read(args[0]) is not None
    except RefError:
        found = False
    if not found:
        sys.stderr.write("error: reference does not exist\n")
        return 2
    return 0


def _verify(argv: list[str], ctx: Any) -> int:
    from gitodb.objects.fsck import FsckSeverities
    from gitodb.refs.verify import Findings, verify_files, verify_reftable

    opts, args = _parse(argv, [Option(None, "verbose"), Option(None, "strict")], VERIFY_USAGE)
    if args:
        return _usage_exit(VERIFY_USAGE, "too many arguments")
    verbose = opts.verbose
    repo = ctx.open_repository()
    # --strict makes warnings errors; fsck.<msg-id> settings override both (Git's order)
    severities = FsckSeverities(strict=opts.strict)
    severities.apply_config(repo.config, "fsck.")
    report = Findings(severities)

    def say(message: str) -> None:
        if verbose:
            sys.stderr.write(message + "\n")

    say("Checking references consistency")
    # where the refs are: a ref storage naming a path (<format>://<path>) puts them there
    ref_dir = Path(repo.ref_dir) if repo.ref_dir is not None else Path(repo.common_dir)
    if repo.ref_storage == "reftable":
        verify_reftable(ref_dir, report, say)
    else:
        shown = repo.ref_dir if repo.ref_dir is not None else _git_dir_as_shown(repo)
        verify_files(ref_dir, repo.object_format, report, say, shown)
    return 255 if report.failed else 0


def _git_dir_as_shown(repo: Any) -> str:
    """The git directory as Git names it after setup: ``.git`` from a work tree."""
    from gitodb.repo import find_work_tree_top

    top = find_work_tree_top(repo, bool(os.environ.get("GIT_DIR")))
    base = top if top is not None else os.getcwd()
    rel = os.path.relpath(repo.commondir, base)
    return rel


def _migrate(argv: list[str], ctx: Any) -> int:
    from gitodb.repo.refmigrate import MigrationError, migrate_refs

    options = [
        Option(None, "ref-format", "string", negatable=False),
        Option(None, "dry-run"),
        Option(None, "reflog", default=True, initial=True),
    ]
    opts, args = _parse(argv, options, MIGRATE_USAGE)
    if args:
        sys.stderr.write("usage: too many arguments\n")
        return 129
    ref_format, dry_run, reflogs = opts.ref_format, opts.dry_run, opts.reflog
    if ref_format is None:
        sys.stderr.write("usage: missing --ref-format=<format>\n")
        return 129
    repo = ctx.open_repository()
    try:
        where = migrate_refs(repo, ref_format, dry_run=dry_run, reflogs=reflogs)
    except MigrationError as e:
        sys.stderr.write(f"error: {e.message}\n")
        return 255
    if where is not None:
        shown = os.path.join(_git_dir_as_shown(repo), where.name)
        sys.stdout.write(
            f"Finished dry-run migration of refs, the result can be found at '{shown}'\n"
        )
    return 0
