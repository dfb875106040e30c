"""``gitodb calibrate [--budget=<seconds>] [--show] [--remove]``: rank the zlib backends here.

A thin shell over ``gitodb.compress.calibrate``: measure every installed backend on
every operation (about ``--budget`` seconds, 10 by default), store the figures in
the user's cache directory, and print the ranking ``auto`` now follows.  ``--show``
prints the stored calibration, ``--remove`` deletes it (``auto`` then uses the
built-in ranking again).  gitodb's own command: Git has none like it.
"""

from __future__ import annotations

import sys

USAGE = "usage: gitodb calibrate [--budget=<seconds>] [--show | --remove]"


def _usage(message: str) -> int:
    sys.stderr.write(f"error: {message}\n{USAGE}\n")
    return 129


def run(argv: list[str], ctx: object) -> int:
    """Run ``calibrate`` with ``argv``; return the exit status."""
    from gitodb import compress
    from gitodb.compress import calibrate, selection

    budget = calibrate.DEFAULT_BUDGET
    show = remove = False
    args = list(argv)
    while args:
        a = args.pop(0)
        if a in ("-h", "--help"):
            sys.stdout.write(USAGE + "\n")
            return 129
        if a == "--show":
            show = True
        elif a == "--remove":
            remove = True
        elif a == "--budget" or a.startswith("--budget="):
            if a == "--budget":
                if not args:
                    return _usage("option `budget' requires a value")
                value = args.pop(0)
            else:
                value = a.split("=", 1)[1]
            try:
                budget = float(value)
            except ValueError:
                return _usage(f"option `budget' expects a number of seconds, not '{value}'")
            if not 0.1 <= budget <= 600:
                return _usage("option `budget' must be between 0.1 and 600 seconds")
        elif a.startswith("-"):
            return _usage(f"unknown option `{a.lstrip('-')}'")
        else:
            return _usage(f"unexpected argument '{a}'")
    if show and remove:
        return _usage("--show and --remove cannot be used together")
    path = calibrate.cache_path()
    if remove:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        compress.reload_calibration()
        sys.stdout.write(f"removed {path}; auto uses the built-in ranking\n")
        return 0
    if show:
        record = calibrate.load()
        if record is None:
            sys.stdout.write(f"no usable calibration at {path}; auto uses the built-in ranking\n")
            return 0
    else:
        record = calibrate.measure(budget)
        calibrate.save(record, path)
        compress.reload_calibration()
    out = [
        f"calibration: {path}\n",
        f"machine: {record['machine']}\n",
        f"measured: {record['measured']}\n",
    ]
    for op in selection.OPERATIONS:
        out.append(
            f"{selection.OPERATION_TITLES[op]}: {' > '.join(record['ranking'][op])}"
            f" [{calibrate.summary(record, op)}]\n"
        )
    sys.stdout.write("".join(out))
    return 0
