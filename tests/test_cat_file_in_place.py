"""``cat-file --batch --batch-all-objects`` into a regular file: records placed, no spill.

Output that is a regular file at its end (``> file``) gets each record written at
its place in id order while the objects are built in pack order; every other
output (append mode, a file not at its end, a pipe) goes through the spill.  Each
case is compared byte for byte with what ``git`` on PATH leaves in the file.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from helpers import git, git_env, make_pack

pytestmark = pytest.mark.e2e

ALL = ["cat-file", "--batch", "--batch-all-objects"]


@pytest.fixture(scope="module", params=["sha1", "sha256"])
def repo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A work tree whose objects are all in one pack, full of deltas."""
    pack = make_pack(tmp_path_factory.mktemp(f"inplace-{request.param}"), request.param)
    return pack.parents[3]


def _into_file(cmd: list[str], cwd: Path, path: Path, flags: int) -> tuple[int, bytes]:
    """Run ``cmd`` with stdout ``path`` opened with ``flags``; (status, stderr)."""
    fd = os.open(path, flags, 0o644)
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, stdout=fd, stderr=subprocess.PIPE, env=git_env(), check=False
        )
    finally:
        os.close(fd)
    return proc.returncode, proc.stderr


def _both(repo: Path, tmp_path: Path, flags: int, prefill: bytes) -> tuple[bytes, bytes]:
    """What git and gitodb leave in a file opened with ``flags`` holding ``prefill``."""
    got = []
    for name, cmd in (("git", ["git", *ALL]), ("gitodb", [sys.executable, "-m", "gitodb", *ALL])):
        out = tmp_path / f"{name}.out"
        out.write_bytes(prefill)
        status, err = _into_file(cmd, repo, out, flags)
        assert status == 0, err
        got.append(out.read_bytes())
    return got[0], got[1]


def test_new_file_gets_gits_bytes(repo: Path, tmp_path: Path) -> None:
    want, have = _both(repo, tmp_path, os.O_WRONLY | os.O_TRUNC, b"")
    assert have == want and len(want) > 50_000


def test_append_mode_appends_gits_bytes(repo: Path, tmp_path: Path) -> None:
    want, have = _both(repo, tmp_path, os.O_WRONLY | os.O_APPEND, b"before\n")
    assert have == want and want.startswith(b"before\n")


def test_file_not_at_its_end_is_overwritten_as_git_does(repo: Path, tmp_path: Path) -> None:
    # ``1<>file``: written from offset 0, the old tail past the output stays
    tail = b"x" * (1 << 20)
    want, have = _both(repo, tmp_path, os.O_WRONLY, tail)
    assert have == want and want.endswith(b"x")


def test_position_is_left_after_the_output(repo: Path, tmp_path: Path) -> None:
    """A shell's ``{ cat-file ...; echo end; } > file``: the next write follows."""
    out = tmp_path / "seq.out"
    script = f'{{ "$@"; echo end; }} > "{out}"'
    subprocess.run(
        ["sh", "-c", script, "sh", sys.executable, "-m", "gitodb", *ALL],
        cwd=repo,
        env=git_env(),
        check=True,
    )
    want = git(*ALL, cwd=repo) + b"end\n"
    assert out.read_bytes() == want


def test_no_spill_file_is_made(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The records go straight into the output: the spill's temporary file is not used."""
    from gitodb.repo import Repository
    from gitodb.repo.batch import BatchOptions, run_batch

    def no_spill(*_a: object, **_k: object) -> None:
        raise AssertionError("spilled")

    monkeypatch.setattr(tempfile, "TemporaryFile", no_spill)
    path = tmp_path / "lib.out"
    with open(path, "wb") as stdout:
        run_batch(
            Repository(repo),
            BatchOptions("batch", all_objects=True),
            io.BytesIO(),
            stdout,  # type: ignore[arg-type]
        )
    assert path.read_bytes() == git(*ALL, cwd=repo)


def test_damaged_entry_leaves_what_git_leaves(tmp_path: Path) -> None:
    """A blob whose zlib data is damaged: the output is cut where Git's is, and the
    command fails as Git does."""
    pack = make_pack(tmp_path)
    work = pack.parents[3]
    oid = git("rev-parse", "HEAD:f3.txt", cwd=work).decode().strip()
    index = git("show-index", cwd=work, input=pack.with_suffix(".idx").read_bytes())
    offset = next(int(f[0]) for f in map(bytes.split, index.splitlines()) if f[1] == oid.encode())
    data = bytearray(pack.read_bytes())
    for i in range(offset + 8, offset + 40):  # inside the entry's zlib stream
        data[i] ^= 0x55
    os.chmod(pack, 0o644)
    pack.write_bytes(bytes(data))
    results = []
    for name, cmd in (("git", ["git", *ALL]), ("gitodb", [sys.executable, "-m", "gitodb", *ALL])):
        out = tmp_path / f"{name}.out"
        status, _err = _into_file(cmd, work, out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        results.append((status != 0, out.read_bytes()))
    assert results[1] == results[0]
    assert results[0][0]  # git failed too
