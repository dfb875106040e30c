"""``gitodb calibrate [--budget=<seconds>] [--show] [--remove]``: rank the zlib backends here.

A thin shell over ``gitodb.compress.calibrate``: measure every installed backend on
every operation (about ``--budget`` seconds, 10 by default), store the figures in
the user's cache directory, and print the ranking ``auto`` now follows.  ``--show``
prints the stored calibration, ``--remove`` deletes it (``auto`` then uses the
built-in ranking again).  gitodb's own command: Git has none like it.
"""

from __future__ import annotations

import sys

from gitodb.cli.options import Option, OptionParser, incompatible

PARSER = OptionParser(
    "calibrate",
    ["[--budget=<seconds>] [--show | --remove]"],
    [
        Option(
            None,
            "budget",
            "string",
            "seconds to spend measuring (0.1 to 600, default 10)",
            argh="seconds",
            negatable=False,
        ),
        Option(None, "show", "bool", "print the stored calibration"),
        Option(None, "remove", "bool", "delete the stored calibration"),
    ],
)


def run(argv: list[str], ctx: object) -> int:
    """Run ``calibrate`` with ``argv``; return the exit status."""
    from gitodb import compress
    from gitodb.compress import calibrate, selection

    opts, args = PARSER.parse(argv)
    if args:
        raise PARSER.usage_error(f"unexpected argument '{args[0]}'")
    budget = calibrate.DEFAULT_BUDGET
    if opts.budget is not None:
        try:
            budget = float(opts.budget)
        except ValueError:
            raise PARSER.error(
                f"option `budget' expects a number of seconds, not '{opts.budget}'"
            ) from None
        if not 0.1 <= budget <= 600:
            raise PARSER.error("option `budget' must be between 0.1 and 600 seconds")
    show, remove = opts.show, opts.remove
    if show and remove:
        raise incompatible("--show", "--remove")
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
