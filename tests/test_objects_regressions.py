"""Wrong answers of issue 11 (reading what Git reads), each fixed with its test."""

from __future__ import annotations

import subprocess
import sys

from helpers import git, git_env


def _ok(*args: str, cwd) -> bytes:  # type: ignore[no-untyped-def]
    p = subprocess.run(
        [sys.executable, "-m", "gitodb", *args],
        cwd=cwd,
        capture_output=True,
        env=git_env(),
        timeout=300,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_pack_with_any_name_is_read(tmp_path):
    # Git reads every <name>.pack that has a <name>.idx (t5300 'use packed objects')
    src = tmp_path / "src"
    git("init", "-q", src)
    git("commit", "-q", "--allow-empty", "-m", "one", cwd=src)
    head = git("rev-parse", "HEAD", cwd=src).strip().decode()
    name = git("pack-objects", str(tmp_path / "test-1"), cwd=src, input=head.encode()).strip()
    dst = tmp_path / "dst"
    git("init", "-q", "--bare", dst)
    for ext in ("pack", "idx"):
        (dst / "objects/pack" / f"test-1-{name.decode()}.{ext}").write_bytes(
            (tmp_path / f"test-1-{name.decode()}.{ext}").read_bytes()
        )
    assert _ok("cat-file", "-t", head, cwd=dst) == b"commit\n"


def test_index_pack_stdin_respects_ceiling_directories(tmp_path):
    # Git: --stdin requires a git repository; the parent repository is above the ceiling
    git("init", "-q", tmp_path)
    (tmp_path / "non-repo").mkdir()
    env = git_env()
    env["GIT_CEILING_DIRECTORIES"] = str(tmp_path)
    p = subprocess.run(
        [sys.executable, "-m", "gitodb", "index-pack", "--stdin"],
        cwd=tmp_path / "non-repo",
        input=b"",
        capture_output=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert (p.returncode, p.stderr) == (128, b"fatal: --stdin requires a git repository\n")
    assert not list((tmp_path / ".git/objects/pack").iterdir())


def test_verify_accepts_an_index_with_64_bit_offsets(tmp_path):
    # t5302: an .idx written with --index-version=2,<limit> was "layout differs"
    from helpers import make_pack

    pack = make_pack(tmp_path)
    git("index-pack", "--index-version=2,0x100", pack)
    assert b"\x80\x00\x00\x00" in pack.with_suffix(".idx").read_bytes()
    for args in (
        ["index-pack", "--verify", str(pack)],
        ["index-pack", "--verify", "--index-version=2,0x100", str(pack)],
        ["verify-pack", str(pack.with_suffix(".idx"))],
    ):
        _ok(*args, cwd=tmp_path)


def test_objects_are_read_through_an_index_with_a_bad_crc(tmp_path):
    # t5302 'verify-pack detects CRC mismatch': reading works, verify-pack complains
    from helpers import make_pack

    pack = make_pack(tmp_path)
    repo = pack.parents[3]
    idx = pack.with_suffix(".idx")
    data = bytearray(idx.read_bytes())
    nr = int.from_bytes(data[8 + 1020 : 8 + 1024], "big")
    data[8 + 1024 + nr * 20 : 8 + 1024 + nr * 20 + 4] = b"xxxx"
    idx.chmod(0o644)
    idx.write_bytes(bytes(data))
    for oid in git("rev-list", "--objects", "--all", cwd=repo).split()[:10]:
        if len(oid) == 40:
            _ok("cat-file", "-p", oid.decode(), cwd=repo)
    p = subprocess.run(
        [sys.executable, "-m", "gitodb", "verify-pack", str(idx)],
        cwd=repo,
        capture_output=True,
        env=git_env(),
        timeout=300,
        check=False,
    )
    assert p.returncode != 0


def test_index_pack_strict_finds_links_in_the_repository(tmp_path):
    # issue 11: "--strict on a pack whose objects the repository already has says
    # did not receive expected object" (t5302 32)
    repo = tmp_path / "r"
    git("init", "-q", repo)
    git("commit", "-q", "--allow-empty", "-m", "one", cwd=repo)
    head = git("rev-parse", "HEAD", cwd=repo).strip()
    name = git("pack-objects", "only-commit", cwd=repo, input=head + b"\n").strip().decode()
    (repo / f"only-commit-{name}.idx").unlink()
    assert (
        _ok("index-pack", "--strict", f"only-commit-{name}.pack", cwd=repo) == f"{name}\n".encode()
    )
