"""Running a repository's hooks, as Git runs them.

A hook is the executable file ``<name>`` in ``core.hooksPath`` (relative to where
hooks run) or ``hooks/`` of the common git directory.  It runs from the top of the
work tree (the git directory of a bare repository), with its standard output sent
to standard error, as Git does.  So far gitodb runs one: ``reference-transaction``,
which its ref transactions call in each phase (``gitodb.refs.base``).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from gitodb.repo import Repository


def hook_path(repo: Repository, name: str) -> str | None:
    """The hook ``name`` of ``repo`` if it is installed and executable, else None."""
    configured = repo.config.get("core.hookspath")
    base = os.path.join(_run_dir(repo), configured) if configured else None
    directory = base or os.path.join(repo.commondir, "hooks")
    path = os.path.join(os.path.expanduser(directory), name)
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def _run_dir(repo: Repository) -> str:
    """Where Git runs hooks: the work tree top, else the git directory (bare)."""
    from gitodb.repo import find_work_tree_top

    return find_work_tree_top(repo, False) or repo.gitdir


def run_hook(repo: Repository, name: str, args: list[str], stdin: bytes = b"") -> int:
    """Run the hook ``name`` with ``args`` and ``stdin``; its exit status (0 when the
    repository has no such hook).  A hook that does not read its input is fine."""
    import subprocess  # only when a hook runs: kept off start-up

    path = hook_path(repo, name)
    if path is None:
        return 0
    sys.stdout.flush()
    sys.stderr.flush()
    proc = subprocess.Popen(
        [path, *args], cwd=_run_dir(repo), stdin=subprocess.PIPE, stdout=sys.stderr.fileno()
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(stdin)
        proc.stdin.close()
    except BrokenPipeError:
        pass  # Git ignores SIGPIPE from a hook that stopped reading
    return proc.wait()


def reference_transaction_hook(repo: Repository) -> Callable[[str, bytes], int] | None:
    """The ``RefStore.transaction_hook`` for ``repo``: None without the hook."""
    if hook_path(repo, "reference-transaction") is None:
        return None

    def run(state: str, lines: bytes) -> int:
        return run_hook(repo, "reference-transaction", [state], lines)

    return run
