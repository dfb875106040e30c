"""``gitodb bulk`` without its extras installed: one fatal line naming the extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# pyarrow (or distributed) made unimportable, then the CLI run as usual.
SCRIPT = """
import sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None
from gitodb.cli.main import main
raise SystemExit(main(sys.argv[2:]))
"""


def _run(tmp_path: Path, hidden: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, hidden, "bulk", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )


def test_without_pyarrow(tmp_path: Path) -> None:
    proc = _run(tmp_path, "pyarrow", "objects", "--repos", ".", "--out", "o")
    assert proc.returncode == 128
    assert proc.stderr.startswith(
        "fatal: gitodb bulk needs pyarrow and tqdm (pip install 'gitodb[bulk]')"
    )
    assert len(proc.stderr.splitlines()) == 1 and not (tmp_path / "o").exists()


def test_dask_engine_without_distributed(tmp_path: Path) -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return  # the first check answers before this one
    proc = _run(tmp_path, "distributed", "refs", "--repos", ".", "--out", "o", "--engine", "dask")
    assert proc.returncode == 128
    assert proc.stderr.startswith(
        "fatal: --engine dask needs dask and distributed (pip install 'gitodb[bulk,dask]')"
    )
    assert len(proc.stderr.splitlines()) == 1
