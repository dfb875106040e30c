"""``-h`` of the ref commands and their subcommands names ``gitodb``, with Git's text.

Each usage block is Git 2.55's with the program name changed and its continuation
lines moved right by as much (``as_gitodb_usage``); compared with Git 2.55 when
``../shared`` has it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gitodb.cli.options import as_gitodb_usage
from helpers import git, run_cli

GIT255 = Path(__file__).resolve().parents[2] / "shared" / "git-2.55" / "git" / "bin" / "git"
COMMANDS = [
    ["reflog", "show"],
    ["reflog", "expire"],
    ["reflog", "delete"],
    ["reflog", "exists"],
    ["reflog", "list"],
    ["reflog", "drop"],
    ["reflog", "write"],
    ["refs", "list"],
    ["refs", "optimize"],
    ["refs", "verify"],
    ["refs", "migrate"],
    ["refs", "exists"],
]


@pytest.mark.parametrize("cmd", COMMANDS, ids=" ".join)
def test_help_names_gitodb(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], cmd: list[str]
) -> None:
    git("init", "-q", tmp_path)
    capfd.readouterr()
    assert run_cli(tmp_path, *cmd, "-h") == 129
    out = capfd.readouterr().out
    first = out.split("\n", 1)[0]
    prog = "gitodb reflog" if cmd[0] == "reflog" and cmd[1] == "show" else "gitodb " + " ".join(cmd)
    assert first.startswith(f"usage: {prog}"), first
    assert "usage: git " not in out
    if GIT255.exists():
        want = subprocess.run(
            [str(GIT255), *cmd, "-h"], cwd=tmp_path, capture_output=True, check=False
        ).stdout.decode()
        assert out == as_gitodb_usage(want)
