"""``gitodb`` entry point: global options like Git's, then one command module.

Global options: ``-C <path>``, ``--git-dir=<path>``, ``-c <key>=<value>``,
``--zlib-backend=<name>``.  Each command lives in ``gitodb.cli.<module>`` and
exposes ``run(argv: list[str], ctx: Context) -> int``.  Any ``GitodbError``
becomes one ``fatal:`` line on stderr and exit status 128, like Git.
"""

from __future__ import annotations

import importlib
import os
import sys

from gitodb.errors import GitodbError

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
    "ls-tree": "ls_tree",
    "rev-list": "rev_list",
    "merge-base": "merge_base",
}

USAGE = """usage: gitodb [-C <path>] [--git-dir=<path>] [-c <name>=<value>] [--zlib-backend=<name>]
              <command> [<args>]

commands: """ + ", ".join(sorted(COMMANDS))


class Context:
    """Global options, passed to every command."""

    # A plain class: importing dataclasses costs more start-up time than it saves.
    def __init__(self) -> None:
        self.git_dir: str | None = None
        self.config_overrides: list[str] = []
        self.zlib_backend: str | None = None

    def open_repository(self):  # type: ignore[no-untyped-def]
        """Open the repository these options point at (discovery like Git)."""
        from gitodb.repo import Repository

        return Repository.discover(git_dir=self.git_dir, config_overrides=self.config_overrides)


def fatal(message: str) -> int:
    """Print Git's one ``fatal:`` line and return its exit status."""
    sys.stdout.flush()
    sys.stderr.write(f"fatal: {message}\n")
    return 128


def main(argv: list[str] | None = None) -> int:
    """Run ``gitodb`` with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    ctx = Context()
    try:
        while args and args[0].startswith("-"):
            opt = args.pop(0)
            if opt == "-C":
                if not args:
                    return fatal("no directory given for -C")
                os.chdir(args.pop(0))
            elif opt.startswith("--git-dir="):
                ctx.git_dir = opt.split("=", 1)[1]
            elif opt == "--git-dir":
                ctx.git_dir = args.pop(0)
            elif opt == "-c":
                if not args:
                    return fatal("no config key given for -c")
                ctx.config_overrides.append(args.pop(0))
            elif opt.startswith("--zlib-backend="):
                ctx.zlib_backend = opt.split("=", 1)[1]
            elif opt == "--zlib-backend":
                ctx.zlib_backend = args.pop(0)
            elif opt in ("-h", "--help"):
                print(USAGE)
                return 0
            elif opt == "--version":
                args.insert(0, "version")
                break
            else:
                sys.stderr.write(f"unknown option: {opt}\n{USAGE}\n")
                return 129
        if not args:
            sys.stderr.write(USAGE + "\n")
            return 1
        name = args.pop(0)
        if name not in COMMANDS:
            # Git's wording and status for an unknown command.
            sys.stderr.write(f"gitodb: '{name}' is not a gitodb command. See 'gitodb --help'.\n")
            return 1
        if ctx.zlib_backend is not None:
            from gitodb import compress

            compress.set_backend(ctx.zlib_backend)
        module = importlib.import_module(f"gitodb.cli.{COMMANDS[name]}")
        return int(module.run(args, ctx) or 0)
    except GitodbError as e:
        return fatal(str(e))
    except BrokenPipeError:
        # Like Git killed by SIGPIPE: quiet, and stop writing to the closed pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
