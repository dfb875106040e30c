"""One measured run of a command: wall time, CPU time and the child's own max RSS."""

from __future__ import annotations

import os
import subprocess
import time


def run(
    cmd: list[str],
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    stdin: str | None = None,
    timeout: float = 1800,
    stdout: str | None = None,
) -> tuple[float, float, int]:
    """(wall s, CPU s, max RSS KiB) of one run of ``cmd``, output to /dev/null (or
    to the file ``stdout``, created or truncated).

    The child is reaped with ``os.wait4``, so the usage (and the max RSS) is its
    own, not the maximum over every child this process has had.
    """
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL  # noqa: SIM115
    fout = open(stdout, "wb") if stdout else subprocess.DEVNULL  # noqa: SIM115
    t0 = time.perf_counter()
    try:
        p = subprocess.Popen(cmd, stdout=fout, stdin=fin, env=env, cwd=cwd)
    finally:
        if stdout:
            fout.close()  # type: ignore[union-attr]
    deadline = t0 + timeout
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            p.kill()
            os.wait4(p.pid, 0)
            p.returncode = -9
            raise subprocess.TimeoutExpired(cmd, timeout)
        time.sleep(0.002)
    wall = time.perf_counter() - t0
    if stdin:
        fin.close()  # type: ignore[union-attr]
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise subprocess.CalledProcessError(p.returncode, cmd)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def measure_best(cmd: list[str], repeat: int, **kw: object) -> tuple[float, float, int]:
    """The minimum wall, CPU and max RSS over ``repeat`` runs (the machine is shared)."""
    runs = [run(cmd, **kw) for _ in range(repeat)]  # type: ignore[arg-type]
    return min(r[0] for r in runs), min(r[1] for r in runs), min(r[2] for r in runs)
