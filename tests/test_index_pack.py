"""gitodb index-pack against git 2.39 on PATH and the recorded fixtures (Git 2.55)."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from gitodb import compress
from gitodb.objects import SHA1, SHA256
from gitodb.pack.indexer import PackIndexer, default_thread_count
from helpers import DATA, git, git_env

FIXTURES = DATA / "index-pack"
pytestmark = pytest.mark.e2e


def gitodb(
    *args: str | os.PathLike[str],
    cwd: str | os.PathLike[str] | None = None,
    input: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run the gitodb CLI in a subprocess (as a user would).

    Without ``cwd`` it runs outside any repository (the system temp directory):
    index-pack in a repository compares objects with the ones stored there,
    which would make these tests depend on the checkout they run from.
    """
    if cwd is None:
        cwd = tempfile.gettempdir()
    return subprocess.run(
        [sys.executable, "-m", "gitodb", *map(os.fspath, args)],
        cwd=cwd,
        input=input,
        capture_output=True,
        env=git_env(),
        check=False,
    )


def make_repo(path: Path, object_format: str = "sha1", commits: int = 25) -> Path:
    """A repository with many small edits so that repacking makes delta chains."""
    git("init", "-q", f"--object-format={object_format}", path)
    rng = random.Random(7)
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
    files = {
        f"d{i % 3}/f{i}.txt": [" ".join(rng.choices(words, k=8)) + "\n" for _ in range(120)]
        for i in range(12)
    }
    for c in range(commits):
        for name in rng.sample(sorted(files), 3):
            files[name][rng.randrange(120)] = " ".join(rng.choices(words, k=8)) + "\n"
        for name, lines in files.items():
            (path / name).parent.mkdir(exist_ok=True)
            (path / name).write_text("".join(lines))
        git("add", "-A", cwd=path)
        git("commit", "-q", "-m", f"commit {c}", cwd=path)
    git("tag", "-a", "-m", "a tag", "v1", cwd=path)
    return path


@pytest.fixture(scope="module")
def repo_sha1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("sha1") / "r")


@pytest.fixture(scope="module")
def repo_sha256(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("sha256") / "r", "sha256", commits=12)


def pack_of(repo: Path, *extra: str) -> bytes:
    """A full pack of the repository from ``git pack-objects --stdout``."""
    return git("pack-objects", "--stdout", "--revs", "--all", *extra, cwd=repo, input=b"")


def git_index(tmp: Path, pack: bytes, *args: str) -> tuple[bytes, bytes, Path]:
    """Index ``pack`` with git; return (stdout, idx bytes, pack path)."""
    p = tmp / "git.pack"
    p.write_bytes(pack)
    out = git("index-pack", *args, "-o", tmp / "git.idx", p)
    return out, (tmp / "git.idx").read_bytes(), p


@pytest.mark.parametrize("extra", [(), ("--no-delta-base-offset",)], ids=["ofs", "ref"])
@pytest.mark.parametrize("threads", [1, 2])
def test_idx_identical_to_git_sha1(
    repo_sha1: Path, tmp_path: Path, extra: tuple[str, ...], threads: int
) -> None:
    pack = pack_of(repo_sha1, *extra)
    out, expected, _ = git_index(tmp_path, pack, "--rev-index")
    result = PackIndexer(pack, SHA1, threads=threads).run()
    assert result.index_bytes() == expected
    assert result.rev_bytes() == (tmp_path / "git.rev").read_bytes()
    assert result.pack_checksum.hex() + "\n" == out.decode()
    assert sum(1 for d in result.depths if d) > 50  # the pack really has deltas


def test_idx_identical_to_git_sha256(repo_sha256: Path, tmp_path: Path) -> None:
    pack = pack_of(repo_sha256)
    p = tmp_path / "x.pack"
    p.write_bytes(pack)
    proc = gitodb("index-pack", "--rev-index", "-o", tmp_path / "ours.idx", p, cwd=repo_sha256)
    assert proc.returncode == 0, proc.stderr
    git("index-pack", "--rev-index", "-o", tmp_path / "git.idx", p, cwd=repo_sha256)
    assert (tmp_path / "ours.idx").read_bytes() == (tmp_path / "git.idx").read_bytes()
    assert (tmp_path / "ours.rev").read_bytes() == (tmp_path / "git.rev").read_bytes()
    assert proc.stdout == hashlib.sha256(pack[:-32]).hexdigest().encode() + b"\n"


def test_index_version_1(repo_sha1: Path, tmp_path: Path) -> None:
    pack = pack_of(repo_sha1)
    _, expected, p = git_index(tmp_path, pack, "--index-version=1")
    proc = gitodb("index-pack", "--index-version=1", "-o", tmp_path / "o.idx", p)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "o.idx").read_bytes() == expected


def fixture_packs() -> list[tuple[str, Path]]:
    out = []
    for fx in ("packs-mixed", "packs-sha256"):
        for p in sorted((FIXTURES / fx).glob("*/**/pack-*.pack")):
            out.append((fx, p))
    return out


@pytest.mark.parametrize("fx,pack", fixture_packs(), ids=lambda v: getattr(v, "stem", v))
def test_fixture_expected_idx_rev_out(fx: str, pack: Path, tmp_path: Path) -> None:
    """The recorded index-pack outputs of Git 2.55 (which writes .rev by default)."""
    expected = FIXTURES / fx / "expected"
    name = pack.stem
    shutil.copy(pack, tmp_path / pack.name)
    fmt = "sha256" if fx == "packs-sha256" else "sha1"
    proc = gitodb(
        "index-pack",
        f"--object-format={fmt}",
        "--rev-index",
        "-o",
        tmp_path / "x.idx",
        tmp_path / pack.name,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (expected / f"index-pack-{name}.out").read_bytes()
    assert (tmp_path / "x.idx").read_bytes() == (expected / f"index-pack-{name}.idx").read_bytes()
    assert (tmp_path / "x.rev").read_bytes() == (expected / f"index-pack-{name}.rev").read_bytes()
    v1 = expected / f"index-pack-{name}.v1.idx"
    if v1.exists():
        proc = gitodb(
            "index-pack", "--index-version=1", "-o", tmp_path / "v1.idx", tmp_path / pack.name
        )
        assert proc.returncode == 0, proc.stderr
        assert (tmp_path / "v1.idx").read_bytes() == v1.read_bytes()
        # and it is what the repository stores
        assert (tmp_path / "v1.idx").read_bytes() == pack.with_suffix(".idx").read_bytes()


def test_default_writes_idx_next_to_pack_without_rev(repo_sha1: Path, tmp_path: Path) -> None:
    pack = pack_of(repo_sha1)
    p = tmp_path / "a.pack"
    p.write_bytes(pack)
    proc = gitodb("index-pack", p)
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["a.idx", "a.pack"]  # 2.39: no .rev by default
    assert oct((tmp_path / "a.idx").stat().st_mode & 0o777) == oct(0o444)
    proc = gitodb("-c", "pack.writeReverseIndex=true", "index-pack", p, cwd=repo_sha1)
    assert (tmp_path / "a.rev").exists()


def test_stdin_keep_and_output(repo_sha1: Path, tmp_path: Path) -> None:
    pack = pack_of(repo_sha1)
    dest = tmp_path / "dest"
    git("init", "-q", "--bare", dest)
    name = hashlib.sha1(pack[:-20]).hexdigest()
    proc = gitodb("index-pack", "--stdin", "--keep=fetched by test", cwd=dest, input=pack)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"keep\t{name}\n".encode()
    packdir = dest / "objects" / "pack"
    assert sorted(os.listdir(packdir)) == [f"pack-{name}.{e}" for e in ("idx", "keep", "pack")]
    assert (packdir / f"pack-{name}.keep").read_text() == "fetched by test\n"
    # A second run finds the .keep already there: Git then reports "pack".
    proc = gitodb("index-pack", "--stdin", "--keep", cwd=dest, input=pack)
    assert proc.stdout == f"pack\t{name}\n".encode()
    assert git("fsck", "--full", "--no-dangling", cwd=dest) == b""


def test_stdin_without_repository_is_an_error(tmp_path: Path, repo_sha1: Path) -> None:
    proc = gitodb("index-pack", "--stdin", cwd=tmp_path, input=pack_of(repo_sha1))
    assert proc.returncode == 128
    assert proc.stderr.startswith(b"fatal: ")
    assert os.listdir(tmp_path) == []


def test_fix_thin_completes_pack_like_git(repo_sha1: Path, tmp_path: Path) -> None:
    """A thin pack against a base the receiver has: completed, identical to Git's."""
    base = git("rev-parse", "HEAD~6", cwd=repo_sha1).strip().decode()
    thin = git(
        "pack-objects",
        "--thin",
        "--stdout",
        "--revs",
        cwd=repo_sha1,
        input=f"HEAD\n^{base}\n".encode(),
    )
    receivers = []
    for who in ("git", "ours"):
        r = tmp_path / who
        git("init", "-q", "--bare", r)
        part = git("pack-objects", "--stdout", "--revs", cwd=repo_sha1, input=f"{base}\n".encode())
        git("index-pack", "--stdin", cwd=r, input=part)
        git("update-ref", "refs/heads/main", base, cwd=r)
        receivers.append(r)
    # Without --fix-thin the thin pack cannot be indexed: its bases are missing.
    p = tmp_path / "thin.pack"
    p.write_bytes(thin)
    proc = gitodb("index-pack", "-o", tmp_path / "thin.idx", p)
    assert proc.returncode == 128
    assert b"unresolved delta" in proc.stderr and b"is missing" in proc.stderr
    assert not (tmp_path / "thin.idx").exists()

    out_git = git("index-pack", "--stdin", "--fix-thin", cwd=receivers[0], input=thin)
    proc = gitodb("index-pack", "--stdin", "--fix-thin", cwd=receivers[1], input=thin)
    assert proc.returncode == 0, proc.stderr
    packs = sorted((receivers[1] / "objects" / "pack").glob("pack-*.pack"))
    name = proc.stdout.decode().split("\t")[1].strip()
    new_pack = receivers[1] / "objects" / "pack" / f"pack-{name}.pack"
    assert new_pack in packs
    # Git verifies what we wrote; the pack and index agree.
    git("verify-pack", new_pack.with_suffix(".idx"))
    git("update-ref", "refs/heads/main", "HEAD", cwd=receivers[1], check=False)
    head = git("rev-parse", "HEAD", cwd=repo_sha1).strip()
    git("update-ref", "refs/heads/main", head, cwd=receivers[1])
    assert git("fsck", "--full", "--strict", cwd=receivers[1]) == b""
    if compress.active_backend("deflate") == "zlib":
        # Same zlib as git: the appended bases deflate to the same bytes.
        assert proc.stdout == out_git


def test_fix_thin_identical_bytes_with_stdlib_zlib(repo_sha1: Path, tmp_path: Path) -> None:
    base = git("rev-parse", "HEAD~4", cwd=repo_sha1).strip().decode()
    thin = git(
        "pack-objects",
        "--thin",
        "--stdout",
        "--revs",
        cwd=repo_sha1,
        input=f"HEAD\n^{base}\n".encode(),
    )
    outs = []
    for who in ("git", "ours"):
        r = tmp_path / who
        git("init", "-q", "--bare", r)
        part = git("pack-objects", "--stdout", "--revs", cwd=repo_sha1, input=f"{base}\n".encode())
        git("index-pack", "--stdin", cwd=r, input=part)
        if who == "git":
            outs.append(git("index-pack", "--stdin", "--fix-thin", cwd=r, input=thin))
        else:
            proc = gitodb(
                "--zlib-backend=zlib", "index-pack", "--stdin", "--fix-thin", cwd=r, input=thin
            )
            assert proc.returncode == 0, proc.stderr
            outs.append(proc.stdout)
    assert outs[0] == outs[1]
    name = outs[0].decode().split("\t")[1].strip()
    for ext in ("pack", "idx"):
        a = tmp_path / "git" / "objects" / "pack" / f"pack-{name}.{ext}"
        b = tmp_path / "ours" / "objects" / "pack" / f"pack-{name}.{ext}"
        assert a.read_bytes() == b.read_bytes()


def test_verify_flag(repo_sha1: Path, tmp_path: Path) -> None:
    pack = pack_of(repo_sha1)
    _, _, p = git_index(tmp_path, pack)
    shutil.copy(tmp_path / "git.idx", tmp_path / "git2.idx")
    os.replace(tmp_path / "git2.idx", p.with_suffix(".idx"))
    proc = gitodb("index-pack", "--verify", p)
    assert proc.returncode == 0, proc.stderr
    idx = bytearray(p.with_suffix(".idx").read_bytes())
    idx[8 + 1024 + 20 * (len(idx) // 100)] ^= 1  # somewhere in the id table
    os.chmod(p.with_suffix(".idx"), 0o644)
    p.with_suffix(".idx").write_bytes(bytes(idx))
    proc = gitodb("index-pack", "--verify", p)
    assert proc.returncode == 128
    assert b"validation error" in proc.stderr


def test_strict_checks_links(repo_sha1: Path, tmp_path: Path) -> None:
    """A pack with only a commit: its tree is missing, which --strict refuses."""
    head = git("rev-parse", "HEAD", cwd=repo_sha1)
    lonely = git("pack-objects", "--stdout", cwd=repo_sha1, input=head)
    dest = tmp_path / "dest"
    git("init", "-q", "--bare", dest)
    proc = gitodb("index-pack", "--stdin", "--strict", cwd=dest, input=lonely)
    assert proc.returncode == 128
    assert b"did not receive expected object" in proc.stderr
    assert list((dest / "objects" / "pack").iterdir()) == []
    proc = gitodb("index-pack", "--stdin", cwd=dest, input=lonely)
    assert proc.returncode == 0
    full = pack_of(repo_sha1)
    proc = gitodb("index-pack", "--stdin", "--strict", cwd=dest, input=full)
    assert proc.returncode == 0, proc.stderr


def test_progress_lines_in_git_style(repo_sha1: Path, tmp_path: Path) -> None:
    pack = pack_of(repo_sha1)
    p = tmp_path / "a.pack"
    p.write_bytes(pack)
    proc = gitodb("index-pack", "--progress", p)
    err = proc.stderr.decode()
    n = int(git("count-objects", "-v", cwd=repo_sha1).split()[5]) or len(
        PackIndexer(pack, SHA1).run().oids
    )
    assert f"Indexing objects: 100% ({n}/{n}), done.\n" in err
    assert "Resolving deltas: 100% (" in err and err.endswith(", done.\n")
    proc = gitodb("index-pack", "-v", "--no-progress", p)
    assert proc.stderr == b""


def test_usage_errors_exit_129(tmp_path: Path) -> None:
    assert gitodb("index-pack", cwd=tmp_path).returncode == 129
    assert gitodb("index-pack", "--bogus", "x.pack", cwd=tmp_path).returncode == 129


def test_bad_names_and_fix_thin_without_stdin(repo_sha1: Path, tmp_path: Path) -> None:
    p = tmp_path / "a.pk"
    p.write_bytes(pack_of(repo_sha1))
    proc = gitodb("index-pack", p)
    assert proc.returncode == 128 and b"does not end with '.pack'" in proc.stderr
    proc = gitodb("index-pack", "--fix-thin", p)
    assert proc.returncode == 128
    assert os.listdir(tmp_path) == ["a.pk"]


def test_default_threads_follow_git() -> None:
    assert [default_thread_count(n) for n in (1, 2, 3, 4, 5, 6, 16, 39, 40, 64)] == [
        1,
        2,
        3,
        3,
        3,
        3,
        8,
        19,
        20,
        20,
    ]


def test_sha256_pack_in_sha256_repo_stdin(repo_sha256: Path, tmp_path: Path) -> None:
    pack = pack_of(repo_sha256)
    dest = tmp_path / "d"
    git("init", "-q", "--bare", "--object-format=sha256", dest)
    proc = gitodb("index-pack", "--stdin", cwd=dest, input=pack)
    assert proc.returncode == 0, proc.stderr
    name = hashlib.sha256(pack[:-32]).hexdigest()
    assert proc.stdout == f"pack\t{name}\n".encode()
    git("verify-pack", dest / "objects" / "pack" / f"pack-{name}.idx", cwd=dest)
    assert PackIndexer(pack, SHA256, threads=2).run().pack_checksum.hex() == name


def test_stdin_with_pack_file_writes_the_copy_there(repo_sha1: Path, tmp_path: Path) -> None:
    pack = pack_of(repo_sha1)
    dest = tmp_path / "d"
    git("init", "-q", "--bare", dest)
    out_git = git("index-pack", "--stdin", tmp_path / "g.pack", cwd=dest, input=pack)
    proc = gitodb("index-pack", "--stdin", tmp_path / "o.pack", cwd=dest, input=pack)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == out_git
    assert (tmp_path / "o.pack").read_bytes() == pack
    assert (tmp_path / "o.idx").read_bytes() == (tmp_path / "g.idx").read_bytes()
    assert list((dest / "objects" / "pack").iterdir()) == []
