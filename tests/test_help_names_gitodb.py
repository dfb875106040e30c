"""``-h`` of the ref commands and their subcommands names ``gitodb``, with Git's text.

Each usage block is Git 2.55's with the program name changed and its continuation
lines moved right by as much (``as_gitodb_usage``); compared with Git 2.55 when
``../shared`` has it.  gitodb's option lines are laid out as Git 2.39 lays them out
(``--name``, not 2.55's ``--[no-]name``), like every other command's ``-h``, which the
tests compare with the ``git`` on PATH; ``as_239_options`` turns 2.55's into those.
"""

from __future__ import annotations

import re
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


def as_239_options(text: str) -> str:
    """Git 2.55's ``--[no-]name`` option lines as Git 2.39 prints them (``--name``,
    the help re-aligned at column 26, or on the next line when the names are long)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        # the names (``-n, --[no-]name <arg>``), then the help after one space or more
        m = re.fullmatch(r"    ((?:-\w, )?--\S+(?: <[^>]*>)?)(?: +(.*))?", line)
        if m is None or "[no-]" not in m.group(1):
            out.append(line)
            continue
        names, help_text = m.group(1).replace("--[no-]", "--"), m.group(2)
        if help_text is None:  # the help is on the next line
            help_text = lines[i].strip()
            i += 1
        head = "    " + names
        if len(head) <= 24:
            out.append(head + " " * (26 - len(head)) + help_text)
        else:
            out += [head, " " * 26 + help_text]
    return "\n".join(out)


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
        assert out == as_239_options(as_gitodb_usage(want))
