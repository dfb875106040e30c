"""``filter.<driver>.process`` (Git's long-running filter protocol) in hash-object
and cat-file --filters, against ``git`` with the same filter process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git_env

pytestmark = pytest.mark.e2e

FILTER = Path(__file__).parent / "data" / "filter_process.py"
GIT_255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"
FILES = {
    "a.up": b"hello\n",
    "b.up": b"x" * 70000 + b"\n",  # more than one pkt-line of content
    "e.up": b"error here\n",
    "z.up": b"abort here\n",
    "d.up": b"die here\n",
    "empty.up": b"",
}


def _env(tmp_path: Path) -> dict[str, str]:
    env = git_env()
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    env["GIT_ATTR_NOSYSTEM"] = "1"
    return env


def _run(cmd: list[str], cwd: Path, stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    p = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, env=_env(cwd), check=False)
    return p.returncode, p.stdout, p.stderr


def _repo(tmp_path: Path, process: str, required: bool = False) -> Path:
    r = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(r)], check=True, env=_env(tmp_path))
    (r / ".gitattributes").write_text("*.up filter=up\n")
    for name, data in FILES.items():
        (r / name).write_bytes(data)
    subprocess.run(["git", "config", "filter.up.process", process], cwd=r, check=True)
    if required:
        subprocess.run(["git", "config", "filter.up.required", "true"], cwd=r, check=True)
    return r


def _both(r: Path, args: list[str], stdin: bytes = b"") -> tuple[tuple, tuple]:
    """``(ours, git's)`` results and the filter's log lines of each run."""
    log = r / "log"
    out = []
    for cmd in ([sys.executable, "-m", "gitodb"], ["git"]):
        log.write_text("")
        got = _run([*cmd, *args], r, stdin)
        out.append((got, log.read_text()))
    return out[0], out[1]


def _process(capabilities: str = "clean smudge") -> str:
    return f"{sys.executable} {FILTER} log {capabilities}"


def test_hash_object_through_a_filter_process_like_git(tmp_path):
    r = _repo(tmp_path, _process())
    names = ["a.up", "b.up", "empty.up", "e.up", "z.up", "a.up"]
    ours, theirs = _both(r, ["hash-object", *names])
    assert ours == theirs
    # one process for the run: started once, stopped at the end
    assert ours[1].count("START") == 1 and ours[1].endswith("STOP\n")
    # after "abort" the filter is not asked again: the second a.up is stored as is
    log_lines = ours[1].splitlines()
    assert sum("pathname=a.up" in line for line in log_lines) == 1


def test_a_process_that_dies_is_restarted_for_the_next_file(tmp_path):
    r = _repo(tmp_path, _process())
    ours, theirs = _both(r, ["hash-object", "d.up", "a.up"])
    assert ours == theirs
    assert ours[1].count("START") == 2
    assert b"error: external filter" in ours[0][2]


def test_required_process_filter_failure_is_fatal(tmp_path):
    r = _repo(tmp_path, _process(), required=True)
    ours, theirs = _both(r, ["hash-object", "e.up"])
    assert ours == theirs
    assert ours[0][0] == 128 and ours[0][2].endswith(b"fatal: e.up: clean filter 'up' failed\n")


def test_only_the_capabilities_the_process_has(tmp_path):
    # a process without "clean" leaves hash-object's input alone
    r = _repo(tmp_path, _process("smudge"))
    ours, theirs = _both(r, ["hash-object", "a.up"])
    assert ours == theirs
    assert "command=" not in ours[1]


def test_cat_file_filters_smudges_through_the_process(tmp_path):
    r = _repo(tmp_path, _process())
    blob = _run(["git", "hash-object", "-w", "--no-filters", "--stdin"], r, b"MiXeD\n")[1]
    blob = blob.decode().strip()
    ours, theirs = _both(r, ["cat-file", "--filters", "--path=a.up", blob])
    assert ours == theirs
    assert ours[0][1] == b"mixed\n" and f"blob={blob}" in ours[1]


@pytest.mark.skipif(not GIT_255.exists(), reason="Git 2.55 (../shared) is not here")
@pytest.mark.parametrize("process", ["cat", "sh -c 'exit 0'", "no-such-command-here"])
def test_a_process_that_does_not_greet_is_reported_like_git_255(tmp_path, process):
    # 2.55 reports a process gone before its greeting instead of dying (2.39 dies)
    r = _repo(tmp_path, process, required=True)
    ours = _run([sys.executable, "-m", "gitodb", "hash-object", "a.up"], r)
    theirs = _run([str(GIT_255), "hash-object", "a.up"], r)
    if process == "sh -c 'exit 0'":
        # A process that exits at once races the greeting: whether writing it
        # fails (EPIPE) or reading the answer finds EOF depends on which runs
        # first, for Git as for gitodb. Both of Git's reports are right.
        reports = _early_exit_reports(process)
        assert theirs[:2] == ours[:2] == (128, b"")
        assert theirs[2] in reports and ours[2] in reports
    else:
        assert ours == theirs
    assert ours[2].endswith(b"fatal: a.up: clean filter 'up' failed\n")


def _early_exit_reports(process):
    """The two reports Git 2.55 gives for a filter process gone before its greeting."""
    tail = (
        f"error: initialization for subprocess '{process}' failed\n"
        "fatal: a.up: clean filter 'up' failed\n"
    )
    return {
        (f"error: could not read greeting from subprocess '{process}'\n" + tail).encode(),
        (
            "error: packet write with format failed\n"
            "error: Could not write client identification\n" + tail
        ).encode(),
    }
