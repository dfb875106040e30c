"""index-pack arguments fetch-pack passes: --pack_header=<version>,<entries>, --promisor."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git_env

pytestmark = pytest.mark.e2e


def _run(cmd: list[str], cwd: Path, stdin: bytes = b"") -> tuple:
    p = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, env=git_env())
    return p.returncode, p.stdout, p.stderr


def test_pack_header_given_on_the_command_line(tmp_path: Path) -> None:
    # fetch-pack reads the 12-byte header to choose index-pack, then passes its numbers
    src = tmp_path / "src"
    subprocess.run(["git", "init", "-q", str(src)], check=True, env=git_env())
    (src / "f").write_text("x\n")
    _run(["git", "add", "f"], src)
    _run(["git", "commit", "-qm", "m"], src)
    pack = _run(["git", "pack-objects", "--revs", "--stdout"], src, b"HEAD\n")[1]
    entries = int.from_bytes(pack[8:12], "big")
    results = []
    for cmd in (["git"], [sys.executable, "-m", "gitodb"]):
        dest = tmp_path / f"dest{len(results)}"
        subprocess.run(["git", "init", "-q", str(dest)], check=True, env=git_env())
        args = ["index-pack", "--stdin", f"--pack_header=2,{entries}", "--promisor"]
        got = _run([*cmd, *args], dest, pack[12:])
        files = sorted(p.name for p in (dest / ".git" / "objects" / "pack").iterdir())
        results.append((got, files))
    assert results[0] == results[1]
    assert results[1][0][0] == 0 and any(f.endswith(".promisor") for f in results[1][1])
