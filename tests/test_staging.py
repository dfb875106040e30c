"""One staging mechanism for every writer: what each does with a file already there.

Git's writers differ: loose objects keep an existing file; ``index-pack --stdin``
and bulk-checkin keep an identical pack/idx/rev and fail on a different one (Git
2.48+'s collision check); ``index-pack <pack>`` and ``-o <idx>`` replace the index;
``index-pack --stdin <pack>`` refuses an existing pack.  Each test runs Git and
gitodb on the same situation where the git on PATH behaves like Git 2.55.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitodb.errors import ObjectWriteError
from gitodb.loose.write import Existing, Staging
from helpers import git, git_env, make_pack

GIT_255 = Path(__file__).resolve().parents[2] / "shared/git-2.55/git/bin/git"


def _gitodb(
    *args: str, cwd: Path, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "gitodb.cli.main", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        env=git_env(),
        check=False,
    )


def _junk(path: Path) -> None:
    path.chmod(0o644)
    path.write_bytes(b"junk\n")


@pytest.mark.parametrize("existing", list(Existing))
def test_place_on_a_free_name_creates_it(tmp_path: Path, existing: Existing) -> None:
    staging = Staging(existing=existing)
    tmp = staging.write(str(tmp_path), "tmp_a_", b"data")
    assert staging.place(tmp, str(tmp_path / "final")) is True
    assert (tmp_path / "final").read_bytes() == b"data"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["final"]


@pytest.mark.parametrize(
    ("existing", "same", "outcome"),
    [
        (Existing.KEEP, False, "old"),
        (Existing.KEEP, True, "old"),
        (Existing.CHECK, True, "old"),
        (Existing.CHECK, False, "error"),
        (Existing.REPLACE, False, "new"),
        (Existing.REFUSE, True, "error"),
    ],
)
def test_place_on_a_taken_name(
    tmp_path: Path, existing: Existing, same: bool, outcome: str
) -> None:
    final = tmp_path / "final.idx"
    final.write_bytes(b"same" if same else b"old")
    staging = Staging(existing=existing)
    tmp = staging.write(str(tmp_path), "tmp_a_", b"same" if same else b"new")
    if outcome == "error":
        with pytest.raises(ObjectWriteError):
            staging.place(tmp, str(final))
        staging.abort()
    else:
        assert staging.place(tmp, str(final)) is (outcome == "new")
    assert final.read_bytes() == (b"new" if outcome == "new" else b"same" if same else b"old")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["final.idx"]


def test_abort_removes_created_files_but_not_replaced_or_kept_ones(tmp_path: Path) -> None:
    (tmp_path / "kept").write_bytes(b"k")
    (tmp_path / "replaced").write_bytes(b"r")
    staging = Staging(existing=Existing.KEEP)
    staging.place(staging.write(str(tmp_path), "t", b"x"), str(tmp_path / "kept"))
    staging.place(staging.write(str(tmp_path), "t", b"x"), str(tmp_path / "created"))
    staging.place(
        staging.write(str(tmp_path), "t", b"new"), str(tmp_path / "replaced"), Existing.REPLACE
    )
    staging.temp(str(tmp_path), "t")
    staging.abort()
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {
        "kept": b"k",
        "replaced": b"new",
    }


def _store_pack(tmp_path: Path) -> tuple[Path, Path, Path]:
    pack = make_pack(tmp_path)
    return tmp_path / "repo", pack, pack.with_suffix(".idx")


def test_index_pack_stdin_keeps_an_identical_pack_and_index(tmp_path: Path) -> None:
    repo, pack, idx = _store_pack(tmp_path)
    git("index-pack", "--rev-index", pack, cwd=repo)  # as Git wrote them
    stat_before = {p.name: p.stat().st_ino for p in pack.parent.iterdir()}
    data = pack.read_bytes()
    proc = _gitodb("index-pack", "--stdin", "--rev-index", cwd=repo, stdin=data)
    assert proc.returncode == 0, proc.stderr
    assert {p.name: p.stat().st_ino for p in pack.parent.iterdir()} == stat_before


def test_index_pack_stdin_fails_on_a_different_index_in_the_store(tmp_path: Path) -> None:
    repo, pack, idx = _store_pack(tmp_path)
    _junk(idx)
    proc = _gitodb("index-pack", "--stdin", cwd=repo, stdin=pack.read_bytes())
    assert proc.returncode == 128
    # (Git, too, first reports the damaged index it finds while checking for collisions)
    assert proc.stderr.endswith(
        f"\nfatal: unable to rename temporary '*.idx' file to '{idx}'\n".encode()
    )
    assert idx.read_bytes() == b"junk\n"
    assert not [p for p in pack.parent.iterdir() if p.name.startswith("tmp_")]
    if GIT_255.exists():  # Git 2.55 fails the same way (2.39 had no collision check)
        ref = subprocess.run(
            [GIT_255, "index-pack", "--stdin"],
            cwd=repo,
            input=pack.read_bytes(),
            capture_output=True,
            env=git_env(),
            check=False,
        )
        assert ref.returncode == 128
        name = idx.relative_to(repo)
        assert ref.stderr.endswith(
            f"fatal: unable to rename temporary '*.idx' file to '{name}'\n".encode()
        )


def test_index_pack_of_a_pack_file_replaces_its_index_like_git(tmp_path: Path) -> None:
    _repo, pack, _idx = _store_pack(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    for tool in ("git", "gitodb"):
        work = out / tool
        work.mkdir()
        shutil.copy(pack, work / "p.pack")
        (work / "p.idx").write_bytes(b"junk\n")
        (work / "o.idx").write_bytes(b"junk\n")
        if tool == "git":
            git("index-pack", "p.pack", cwd=work)
            git("index-pack", "-o", "o.idx", "p.pack", cwd=work)
        else:
            assert _gitodb("index-pack", "p.pack", cwd=work).returncode == 0
            assert _gitodb("index-pack", "-o", "o.idx", "p.pack", cwd=work).returncode == 0
    for name in ("p.idx", "o.idx"):
        assert (out / "gitodb" / name).read_bytes() == (out / "git" / name).read_bytes()
        assert (out / "git" / name).read_bytes() != b"junk\n"


def test_index_pack_stdin_refuses_an_existing_named_pack(tmp_path: Path) -> None:
    repo, pack, _idx = _store_pack(tmp_path)
    target = tmp_path / "named.pack"
    target.write_bytes(b"old")
    ref = subprocess.run(
        ["git", "index-pack", "--stdin", target],
        cwd=repo,
        input=pack.read_bytes(),
        capture_output=True,
        env=git_env(),
        check=False,
    )
    proc = _gitodb("index-pack", "--stdin", str(target), cwd=repo, stdin=pack.read_bytes())
    assert (proc.returncode, proc.stderr) == (ref.returncode, ref.stderr)
    assert proc.stderr == f"fatal: unable to create '{target}': File exists\n".encode()
    assert target.read_bytes() == b"old"
    assert not (tmp_path / "named.idx").exists()


def test_pack_writer_keeps_an_identical_pack_and_fails_on_a_different_one(tmp_path: Path) -> None:
    from gitodb.objects.format import SHA1
    from gitodb.pack.writer import PackWriter

    pack_dir = tmp_path / "pack"

    def write() -> str:
        with PackWriter(pack_dir, SHA1) as w:
            w.add_object("blob", b"hello\n")
            written = w.finish()
            assert written is not None
            return written.idx_path

    idx = Path(write())
    inode = idx.stat().st_ino
    write()  # the same pack again: kept as it is
    assert idx.stat().st_ino == inode
    _junk(idx)
    with pytest.raises(ObjectWriteError, match=r"unable to rename temporary '\*\.idx' file"):
        write()
    assert idx.read_bytes() == b"junk\n"
    assert sorted(p.suffix for p in pack_dir.iterdir()) == [".idx", ".pack", ".rev"]


def test_loose_objects_keep_an_existing_file(tmp_path: Path) -> None:
    from gitodb.repo import Repository
    from gitodb.repo.write import write_object

    git("init", "-q", tmp_path)
    oid = git("hash-object", "-w", "--stdin", cwd=tmp_path, input=b"x\n").strip().decode()
    path = tmp_path / ".git/objects" / oid[:2] / oid[2:]
    inode = path.stat().st_ino
    with Repository(tmp_path) as repo:
        assert write_object(repo, "blob", b"x\n").hex() == oid
    assert path.stat().st_ino == inode
    assert os.listdir(path.parent) == [oid[2:]]
