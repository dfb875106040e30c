"""Worker process of the hostile-input suite: runs ``gitodb`` commands in-process.

One request per line on stdin (JSON ``{"argv": [...], "out": path, "err": path,
"in": path or null}``, ``in`` being the command's standard input);
one JSON reply per line on the original stdout: ``{"rc": int, "tb": str | None,
"peak": int}``.  The command's file descriptors 1 and 2 point at the files
named in the request while it runs (``cat-file`` writes to fd 1 directly).
``peak`` is the most memory the command had allocated at once (``tracemalloc``);
``tb`` is a traceback that escaped ``gitodb.cli.main.main`` (a failure).  The
parent kills and restarts this process when a request does not finish in time.
An address-space limit (``argv[1]`` bytes, if given) backs the tracemalloc bound.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import traceback
import tracemalloc


def main() -> None:
    if len(sys.argv) > 1:
        limit = int(sys.argv[1])
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from gitodb.cli.main import main as gitodb_main

    reply = os.fdopen(os.dup(1), "w", buffering=1)
    requests = os.fdopen(os.dup(0), "r")
    saved = os.dup(1), os.dup(2)
    for line in requests:
        req = json.loads(line)
        # the command's standard input: the request's file, or nothing
        sys.stdin = open(
            req.get("in") or os.devnull,
            encoding="utf-8",  # noqa: SIM115
            errors="surrogateescape",
        )
        out = os.open(req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        err = os.open(req["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.close(out)
        os.close(err)
        tb = None
        rc = -1
        tracemalloc.start()
        try:
            rc = gitodb_main(req["argv"])
        except SystemExit as e:  # argparse-style usage exits are allowed
            rc = e.code if isinstance(e.code, int) else 1
        except BaseException:  # noqa: BLE001 - anything else escaping is the failure
            tb = traceback.format_exc()
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
        sys.stdin.close()
        reply.write(json.dumps({"rc": rc, "tb": tb, "peak": peak}) + "\n")


if __name__ == "__main__":
    main()
