"""The ``gitodb`` entry point: global options, unknown commands, fatal errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import git, git_env


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gitodb", *args],
        cwd=cwd,
        capture_output=True,
        env=git_env(),
        check=False,
    )


def test_unknown_command_is_like_git(tmp_path: Path) -> None:
    proc = run("bogus", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == b"gitodb: 'bogus' is not a gitodb command. See 'gitodb --help'.\n"


def test_dash_c_and_git_dir_select_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    git("init", "-q", repo)
    oid = git("hash-object", "-w", "--stdin", cwd=repo, input=b"x\n").strip().decode()
    assert run("-C", str(repo), "cat-file", "-p", oid).stdout == b"x\n"
    assert (
        run(f"--git-dir={repo / '.git'}", "cat-file", "-t", oid, cwd=tmp_path).stdout == b"blob\n"
    )


def test_outside_a_repository_is_one_fatal_line(tmp_path: Path) -> None:
    proc = run("cat-file", "-t", "HEAD", cwd=tmp_path)
    assert proc.returncode == 128
    assert proc.stderr.startswith(b"fatal: not a git repository")
    assert proc.stderr.count(b"\n") == 1


def _repo_with_pack(tmp_path: Path) -> Path:
    git("init", "-q", tmp_path)
    (tmp_path / "f").write_text("x\n")
    git("add", "f", cwd=tmp_path)
    git("commit", "-q", "-m", "c", cwd=tmp_path)
    git("repack", "-q", "-a", "-d", cwd=tmp_path)
    return tmp_path


def test_closed_stdout_writes_into_nothing_like_git(tmp_path: Path) -> None:
    # Git opens /dev/null on a closed fd 1 (sanitize_stdfds) and succeeds silently.
    repo = _repo_with_pack(tmp_path)
    for args in (["cat-file", "-p", "HEAD"], ["hash-object", "f"]):
        for tool in (["git"], [sys.executable, "-m", "gitodb"]):
            proc = subprocess.run(
                [*tool, *args],
                cwd=repo,
                env=git_env(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                preexec_fn=lambda: os.close(1),
            )
            assert (proc.returncode, proc.stderr) == (0, b""), (tool, args)


def test_verify_pack_on_a_full_stdout_exits_1_like_git(tmp_path: Path) -> None:
    repo = _repo_with_pack(tmp_path)
    (idx,) = (repo / ".git/objects/pack").glob("*.idx")
    with open("/dev/full", "wb") as full:
        for tool in (["git"], [sys.executable, "-m", "gitodb"]):
            proc = subprocess.run(
                [*tool, "verify-pack", "-v", str(idx)],
                cwd=repo,
                env=git_env(),
                stdout=full,
                stderr=subprocess.PIPE,
            )
            assert proc.returncode == 1, tool
            assert (
                proc.stderr == b"fatal: write failure on standard output: No space left on device\n"
            ), tool


EXIT_PROBE = """
import atexit, sys, threading, time
from gitodb.cli.main import exit_process
atexit.register(lambda: print("atexit ran"))
if sys.argv[1] == "thread":
    def late():
        time.sleep(0.2)
        print("thread done", flush=True)
    threading.Thread(target=late).start()
sys.stdout.write("unflushed ")  # exit_process flushes it
exit_process(int(sys.argv[2]))
"""


def test_exit_process_runs_atexit_flushes_and_keeps_the_status() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", EXIT_PROBE, "alone", "3"], capture_output=True, check=False
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (3, b"unflushed atexit ran\n", b"")


def test_exit_process_waits_for_a_running_thread() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", EXIT_PROBE, "thread", "5"], capture_output=True, check=False
    )
    # sys.exit's way: the thread is joined, then the atexit handlers run
    assert (proc.returncode, proc.stdout) == (5, b"unflushed thread done\natexit ran\n")
