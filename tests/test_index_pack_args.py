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


USAGE = (
    "usage: gitodb index-pack [-v] [-o <index-file>] [--keep | --keep=<msg>] [--[no-]rev-index]"
    " [--verify] [--strict[=<msg-id>=<severity>...]] [--fsck-objects[=<msg-id>=<severity>...]]"
    " (<pack-file> | --stdin [--fix-thin] [<pack-file>])\n"
)
# Git's index-pack reads its arguments by hand: exact names, stuck values, no bundles
ARGS = [
    ["--stri"],
    ["--bogus"],
    ["-vo", "x.idx"],
    ["--threads=abc"],
    ["--threads"],
    ["--threads=0x2"],
    ["--"],
    ["-o"],
    ["-o", "y.idx", "-o", "z.idx"],
    ["--progress-title"],
    ["--progress-title", "T"],
    ["--keep="],
    ["--no-strict"],
    ["--strict=missingEmail=ignore"],
    ["--rev-index"],
    ["--no-rev-index"],
    ["--index-version=3"],
    ["-o", "y.idx", "extra.pack"],
]


@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("args") / "src"
    subprocess.run(["git", "init", "-q", str(src)], check=True, env=git_env())
    (src / "f").write_text("x\n")
    _run(["git", "add", "f"], src)
    _run(["git", "commit", "-qm", "m"], src)
    (src / "p.pack").write_bytes(
        _run(["git", "pack-objects", "--revs", "--stdout"], src, b"HEAD\n")[1]
    )
    return src


@pytest.mark.parametrize("args", ARGS, ids=" ".join)
def test_arguments_parsed_like_git(packed: Path, args: list[str]) -> None:
    theirs = _run(["git", "index-pack", *args, "p.pack"], packed)
    ours = _run([sys.executable, "-m", "gitodb", "index-pack", *args, "p.pack"], packed)
    assert ours[:2] == theirs[:2]
    if theirs[0] == 129:
        assert ours[2] == USAGE.encode()


def test_lone_h_prints_the_usage_on_stdout(packed: Path) -> None:
    assert _run([sys.executable, "-m", "gitodb", "index-pack", "-h"], packed) == (
        129,
        USAGE.encode(),
        b"",
    )


def test_unpack_objects_takes_the_pack_header_too(packed: Path, tmp_path: Path) -> None:
    # receive-pack (t5300 "prefetch objects") passes --pack_header to unpack-objects
    pack = (packed / "p.pack").read_bytes()
    entries = int.from_bytes(pack[8:12], "big")
    counts = []
    for cmd in (["git"], [sys.executable, "-m", "gitodb"]):
        dest = tmp_path / f"u{len(counts)}"
        subprocess.run(["git", "init", "-q", str(dest)], check=True, env=git_env())
        got = _run([*cmd, "unpack-objects", f"--pack_header=2,{entries}", "-q"], dest, pack[12:])
        assert got[0] == 0, got
        counts.append(_run(["git", "count-objects"], dest)[1].split(b",")[0])
    assert counts[0] == counts[1] == b"%d objects" % entries
