"""``gitodb`` entry point: global options like Git's, then one command module.

Global options: ``-C <path>``, ``--git-dir=<path>``, ``-c <key>=<value>``,
``--zlib-backend=<name>``.  Each command lives in ``gitodb.cli.<module>`` and
exposes ``run(argv: list[str], ctx: Context) -> int``.  Any ``GitodbError``
becomes one ``fatal:`` line on stderr and exit status 128, like Git.
"""

from __future__ import annotations

import gc
import os
import sys

from gitodb import errors
from gitodb.cli import output
from gitodb.cli.options import Option, OptionParser, UsageError, as_gitodb_usage
from gitodb.errors import (
    AllocationLimitError,
    GitodbError,
    ObjectCollisionError,
    ObjectIdCollisionError,
    out_of_memory_message,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from gitodb.repo import Repository

#: The trace2 session of the running command (``GIT_TRACE2_EVENT``), if any.
_TRACE2: Any = None

# command name -> module under gitodb.cli
COMMANDS = {
    "version": "version",
    "cat-file": "cat_file",
    "hash-object": "hash_object",
    "index-pack": "index_pack",
    "verify-pack": "verify_pack",
    "for-each-ref": "for_each_ref",
    "show-ref": "show_ref",
    "reflog": "reflog",
    "log": "log",
    "update-ref": "update_ref",
    "symbolic-ref": "symbolic_ref",
    "pack-refs": "pack_refs",
    "refs": "refs",
    "ls-tree": "ls_tree",
    "rev-list": "rev_list",
    "merge-base": "merge_base",
    "bulk": "bulk",
    "calibrate": "calibrate",
    "diff-tree": "diff_tree",
    "commit-graph": "commit_graph",
    "show-index": "show_index",
    "unpack-objects": "unpack_objects",
    "multi-pack-index": "multi_pack_index",
    "mktag": "mktag",
    "mktree": "mktree",
    "commit-tree": "commit_tree",
    "patch-id": "patch_id",
}

PARSER = OptionParser(
    "",
    [
        "[-C <path>] [--git-dir=<path>] [-c <name>=<value>] [--zlib-backend=<name>]\n"
        "<command> [<args>]",
    ],
    [
        Option(
            "C",
            None,
            "string",
            "run as if gitodb was started in <path>",
            argh="path",
            missing="no directory given for '-C' option",
        ),
        Option(
            None,
            "git-dir",
            "string",
            "set the path to the repository",
            argh="path",
            missing="no directory given for '--git-dir' option",
        ),
        Option(
            "c",
            None,
            "string",
            "pass a configuration parameter to the command",
            argh="name>=<value",
            missing="-c expects a configuration string",
        ),
        Option(
            None,
            "zlib-backend",
            "string",
            "zlib backend: auto, zlib, zlib-ng, isal, libdeflate",
            argh="name",
            missing="no backend given for '--zlib-backend' option",
        ),
        Option(
            None,
            "attr-source",
            "string",
            "read gitattributes from <tree-ish> instead of the work tree",
            argh="tree-ish",
            missing="no attribute source given for --attr-source",
        ),
        Option(None, "no-replace-objects", "bool", "do not use replacement refs"),
        Option(None, "version", "bool", "print the gitodb version"),
        Option(
            None,
            "shallow-file",
            "string",
            "the shallow file to read instead of the repository's (Git's internal option)",
            argh="file",
            hidden=True,
            missing="no file given for '--shallow-file' option",
        ),
    ],
    notes="commands: " + ", ".join(sorted(COMMANDS)),
)

USAGE = PARSER.usage_text(notes=True)


class Context:
    """Global options, passed to every command."""

    # A plain class: importing dataclasses costs more start-up time than it saves.
    def __init__(self) -> None:
        self.git_dir: str | None = None
        self.config_overrides: list[str] = []
        self.zlib_backend: str | None = None
        self.attr_source: str | None = None  # --attr-source (gitattributes from a tree)

    def open_repository(self) -> Repository:
        """Open the repository these options point at (discovery like Git)."""
        from gitodb.errors import ConfigError
        from gitodb.repo import Repository

        repo = Repository.discover(git_dir=self.git_dir, config_overrides=self.config_overrides)
        # Git reads core.fsync* with the rest of its config in every command and
        # warns about what it ignores; a value it cannot parse is fatal.
        if not repo.fsync_configured:
            return repo
        try:
            warnings = repo.fsync_policy.warnings
        except ConfigError as e:
            _warn(getattr(e, "warnings", ()))
            raise
        _warn(warnings)
        return repo


def _warn(messages: tuple[str, ...]) -> None:
    for message in messages:
        sys.stderr.write(f"warning: {message}\n")


def fatal(message: str) -> int:
    """Print Git's one ``fatal:`` line and return its exit status."""
    sys.stdout.flush()
    sys.stderr.write(f"fatal: {message}\n")
    return 128


def main(argv: list[str] | None = None) -> int:
    """Run ``gitodb`` with ``argv`` (default: ``sys.argv[1:]``); return the exit status.

    Run as the program (``argv`` None), a closed standard output ends the process
    by ``SIGPIPE`` as it ends Git; called with ``argv``, the status is 141.
    """
    global _TRACE2
    if argv is None:
        output.sanitize_std_fds()
        output.install()
    args = list(sys.argv[1:] if argv is None else argv)
    if os.environ.get("GIT_TRACE2_EVENT"):
        from gitodb.cli import trace2

        _TRACE2 = trace2.start([sys.argv[0], *args])
    # Damage worked around is Git's ``error:``/``warning:`` line on stderr, every
    # time it is met (errors.report); the library's callers get Python warnings.
    previous_reporter = errors.reporter
    errors.reporter = _report_line
    try:
        status = _main(args, program=argv is None)
    finally:
        errors.reporter = previous_reporter
    if argv is None:
        # The process ends now: the interpreter's last cyclic collection would only
        # traverse what the command built (a walk's records, thousands of refs),
        # which reference counting frees anyway; what is frozen is left out of it.
        gc.freeze()
    if _TRACE2 is not None:
        _TRACE2.finish(status)
        _TRACE2 = None
    if status == output.SIGPIPE_STATUS and argv is None:
        import signal  # (only here: every command's start-up counts)

        if not hasattr(signal, "SIGPIPE"):
            return status
        # Git's check_pipe(): restore the default action and die of the signal.
        sys.stderr.flush()
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGPIPE)
    return status


def exit_process(status: int) -> NoReturn:
    """End the program (``scripts/gitodb``) with ``status``, as ``sys.exit`` would.

    The interpreter's teardown frees every module, function and class one by one,
    which costs a short command more than some of its work, and frees nothing the
    operating system would not.  So when no other thread is running and no process
    pool was started (their shutdown needs the teardown), the ``atexit`` handlers
    run, the standard streams are flushed, and the process ends at once.  Anything
    unusual (a stream that fails to flush) takes ``sys.exit``'s way."""
    threading = sys.modules.get("threading")
    if (threading is not None and threading.active_count() > 1) or (
        "multiprocessing" in sys.modules
    ):
        sys.exit(status)
    import atexit

    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        sys.exit(status)
    os._exit(status)


def _report_line(level: str, message: str) -> None:
    """Print reported damage as Git's ``error:``/``warning:`` line."""
    sys.stdout.flush()
    sys.stderr.write(f"{level}: {message}\n")


def _main(args: list[str], *, program: bool = False) -> int:
    """Run one command; ``program``: as the process itself (``scripts/gitodb``, which
    starts with the cyclic collector off, see there: it is turned on, for the command's
    own work, once the command's module is imported)."""
    ctx = Context()
    try:
        given, args = PARSER.parse_wrapper(args)
        for opt, value in given:
            assert value is not None or not opt.takes_value
            if opt.short == "C":
                if value:  # Git: an empty -C is no change of directory
                    os.chdir(value)
            elif opt.long == "git-dir":
                ctx.git_dir = value
            elif opt.short == "c":
                ctx.config_overrides.append(value or "")
            elif opt.long == "zlib-backend":
                ctx.zlib_backend = value
            elif opt.long == "attr-source":
                ctx.attr_source = value
            elif opt.long == "shallow-file":
                # Git's set_alternate_shallow_file; GIT_SHALLOW_FILE carries it, as in
                # Git, to what reads the shallow file (gitodb.history.grafts)
                os.environ["GIT_SHALLOW_FILE"] = value or ""
            elif opt.long == "no-replace-objects":
                # Git's read_replace_refs = 0, carried to what it runs as Git does
                os.environ["GIT_NO_REPLACE_OBJECTS"] = "1"
            elif opt.long == "version":
                args.insert(0, "version")
                break
        if not args:
            sys.stderr.write(USAGE)
            return 1
        name = args.pop(0)
        if _TRACE2 is not None:
            _TRACE2.command = name
        if name not in COMMANDS:
            # Git's wording and status for an unknown command.
            sys.stderr.write(f"gitodb: '{name}' is not a gitodb command. See 'gitodb --help'.\n")
            return 1
        if ctx.zlib_backend is not None:
            from gitodb import compress

            compress.set_backend(ctx.zlib_backend)
        # (__import__ and sys.modules: importlib itself would add to every start-up)
        path = f"gitodb.cli.{COMMANDS[name]}"
        __import__(path)
        module = sys.modules[path]
        if args in (["-h"], ["--help"]) and not hasattr(module, "PARSER"):
            # Every command answers a lone -h as Git's do, before touching a repository.
            raise UsageError(stdout=command_usage(name, module))
        if program:
            # what start-up made is long-lived: out of every later collection's way
            gc.freeze()
            gc.enable()
        status = int(module.run(args, ctx) or 0)
        # Output still buffered must be written now, while a failure can be reported.
        sys.stdout.flush()
        return status
    except UsageError as e:
        return _usage_exit(e)
    except (ObjectCollisionError, ObjectIdCollisionError) as e:
        # Git's exact line; the file and offset stay on the exception.
        return fatal(e.git_message)
    except AllocationLimitError as e:
        return fatal(e.message)
    except MemoryError as e:
        # Git's xmalloc() dies with this line; the size is known where a reader
        # raised OutOfMemoryError for an object it was building.
        return fatal(out_of_memory_message(getattr(e, "size", None)))
    except GitodbError as e:
        try:
            sys.stdout.flush()
            sys.stderr.write("".join(f"error: {d}\n" for d in e.details))
            return fatal(e.git_message)
        except output.StdoutWriteError as e2:
            return output.stdout_failed(e2)
    except output.StdoutWriteError as e:
        return output.stdout_failed(e)
    except BrokenPipeError as e:
        return output.stdout_failed(e)
    except KeyboardInterrupt:
        return 130


def _usage_exit(e: UsageError) -> int:
    """Print what a usage error or ``-h`` prints; return its exit status."""
    if e.stdout:
        sys.stdout.write(e.stdout)
        sys.stdout.flush()
    if e.stderr:
        sys.stderr.write(e.stderr)
        sys.stderr.flush()
    return e.status


def command_usage(name: str, module: object) -> str:
    """The usage of a command that has no ``OptionParser`` yet, from its ``USAGE`` text.

    Its text is Git's (``usage: git <cmd> ...``); ``as_gitodb_usage`` names gitodb.
    """
    text = str(getattr(module, "USAGE", f"usage: git {name}"))
    return as_gitodb_usage(text.rstrip("\n") + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
