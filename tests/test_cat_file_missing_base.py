"""A REF_DELTA whose base is nowhere (a thin pack indexed as it came): to Git the
object is missing, so ``cat-file --batch`` prints ``<id> missing`` for it and goes
on; compared with the ``git`` on PATH, in every batch mode and output path."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env
from test_odb_support import PackBuilder, make_delta

BASE = b"base content here\n" * 4
TARGET = BASE + b"more\n"


def _oid(data: bytes) -> bytes:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).digest()


@pytest.fixture(scope="module", params=["one-pack", "mixed"])
def repo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A pack of a blob, a delta against a blob that is not there, another blob;
    ``mixed`` adds loose objects and a second pack (the other output paths)."""
    path = tmp_path_factory.mktemp("thin")
    git("init", "-q", path)
    pb = PackBuilder()
    for data in (b"first blob\n", b"last blob\n"):
        pb.add_object(3, data, oid=_oid(data))
    delta = make_delta(len(BASE), len(TARGET), [("copy", 0, len(BASE)), b"more\n"])
    pb.add_ref_delta(_oid(BASE), delta, oid=_oid(TARGET))
    pb.write(path / ".git/objects/pack")
    if request.param == "mixed":
        git("hash-object", "-w", "--stdin", cwd=path, input=b"loose\n")
        packed = git("hash-object", "-w", "--stdin", cwd=path, input=b"packed\n")
        git("pack-objects", "-q", path / ".git/objects/pack/pack", cwd=path, input=packed)
        git("prune-packed", cwd=path)  # packed only: a loose copy too reads otherwise
    return path


def _both(repo: Path, args: list[str], stdin: bytes = b"") -> None:
    runs = []
    for cmd in (["git"], [sys.executable, "-m", "gitodb"]):
        p = subprocess.run(
            [*cmd, "cat-file", *args], cwd=repo, env=git_env(), input=stdin, capture_output=True
        )
        runs.append((p.returncode, p.stdout, p.stderr))
    assert runs[1] == runs[0], args


@pytest.mark.parametrize(
    "args",
    [
        ["--batch"],
        ["--batch", "--buffer"],
        ["--batch-check"],
        ["--batch-check=%(objectname)"],
        ["--batch-check=%(objectsize) %(objectname)"],
        ["--batch-check=%(objectname) %(objectsize:disk) %(deltabase)"],
        ["--batch=%(objecttype)"],
    ],
)
@pytest.mark.parametrize(
    "everything", [[], ["--batch-all-objects"], ["--batch-all-objects", "--unordered"]]
)
def test_batch_says_missing_and_goes_on(repo: Path, args: list[str], everything: list[str]) -> None:
    ids = git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=repo)
    assert _oid(TARGET).hex().encode() in ids
    _both(repo, [*args, *everything], b"" if everything else ids)


def test_batch_command(repo: Path) -> None:
    x = _oid(TARGET).hex().encode()
    _both(repo, ["--batch-command", "--buffer"], b"info %s\ncontents %s\nflush\n" % (x, x))


@pytest.mark.parametrize("mode", ["-t", "-s", "-e", "-p", "blob"])
def test_single_object(repo: Path, mode: str) -> None:
    _both(repo, [mode, _oid(TARGET).hex()])
