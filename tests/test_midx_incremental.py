"""Incremental MIDX chains (t5334): ``multi-pack-index write --incremental [--bitmap]``
writes the same layers, layer bitmaps and chain file as Git 2.55, each reads the
other's, and a chain is verified layer by layer."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, git_env

GIT255 = Path(os.environ.get("GITODB_GIT_255", "/work/shared/git-2.55/git/bin/git"))
needs_255 = pytest.mark.skipif(not GIT255.exists(), reason="needs ../shared/git-2.55")
GITODB = [sys.executable, "-m", "gitodb"]
CHAIN = ".git/objects/pack/multi-pack-index.d/multi-pack-index-chain"


def _run(cmd: list[str], repo: Path, *args: str) -> tuple[int, bytes, bytes]:
    p = subprocess.run([*cmd, *args], cwd=repo, env=git_env(), capture_output=True, check=False)
    return p.returncode, p.stdout, p.stderr


def _commit_packs(repo: Path, tag: str, n: int = 2) -> None:
    for i in range(n):
        (repo / f"{tag}{i}").write_text(f"{tag} {i}\n")
        git("add", ".", cwd=repo)
        git("commit", "-q", "-m", f"{tag}{i}", cwd=repo)
        git("repack", "-d", "-q", cwd=repo)


def _pack_files(repo: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under objects/pack: content and mode."""
    top = repo / ".git/objects/pack"
    out = {}
    for p in sorted(top.rglob("*")):
        if p.is_file():
            out[str(p.relative_to(top))] = (p.read_bytes(), p.stat().st_mode & 0o777)
    return out


def _both(tmp_path: Path, repo: Path, *steps: tuple[str, ...]) -> None:
    """Run ``steps`` with Git 2.55 on one copy of ``repo`` and gitodb on another: same
    output, same exit codes, same files."""
    copies = []
    for name, cmd in (("git", [str(GIT255)]), ("gitodb", GITODB)):
        copy = tmp_path / name
        shutil.copytree(repo, copy, symlinks=True)  # copy2: pack mtimes kept
        outs = [_run(cmd, copy, *step)[:2] for step in steps]
        copies.append((outs, _pack_files(copy)))
    assert copies[1][0] == copies[0][0]
    assert copies[1][1] == copies[0][1]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "src"
    git("init", "-q", r)
    git("config", "maintenance.auto", "false", cwd=r)
    _commit_packs(r, "a")
    return r


@needs_255
def test_a_single_midx_becomes_the_chain_base_like_git(tmp_path: Path, repo: Path) -> None:
    git("multi-pack-index", "write", cwd=repo)
    _commit_packs(repo, "b")
    _both(tmp_path, repo, ("multi-pack-index", "write", "--incremental"))
    assert not (tmp_path / "gitodb/.git/objects/pack/multi-pack-index").exists()
    assert len((tmp_path / "gitodb" / CHAIN).read_text().split()) == 2


@needs_255
def test_layers_leave_out_objects_the_chain_holds_like_git(tmp_path: Path, repo: Path) -> None:
    _run(GITODB, repo, "multi-pack-index", "write", "--incremental")
    _commit_packs(repo, "b", 1)
    # a pack repeating every object of the chain, and one new commit's objects
    objs = git("rev-list", "--objects", "--all", cwd=repo)
    subprocess.run(
        ["git", "pack-objects", "-q", ".git/objects/pack/pack"],
        cwd=repo,
        input=objs,
        env=git_env(),
        check=True,
        capture_output=True,
    )
    _both(
        tmp_path,
        repo,
        ("multi-pack-index", "write", "--incremental", "--no-write-chain-file"),
        ("multi-pack-index", "write", "--incremental", "--no-write-chain-file", "--base=none"),
        ("multi-pack-index", "write", "--incremental"),
        ("multi-pack-index", "write", "--incremental"),  # nothing new: nothing written
        ("multi-pack-index", "verify"),
        ("cat-file", "--batch-all-objects", "--batch-check"),
        ("multi-pack-index", "write"),  # the chain covers every pack: kept
    )


@needs_255
def test_a_full_write_replaces_the_chain_like_git(tmp_path: Path, repo: Path) -> None:
    for tag in ("b", "c"):
        _commit_packs(repo, tag)
        assert _run(GITODB, repo, "multi-pack-index", "write", "--incremental")[0] == 0
    assert _run([str(GIT255)], repo, "multi-pack-index", "verify")[0] == 0
    _commit_packs(repo, "d", 1)
    _both(tmp_path, repo, ("multi-pack-index", "write"))
    assert os.listdir(tmp_path / "gitodb/.git/objects/pack/multi-pack-index.d") == []


def test_a_chain_is_verified_layer_by_layer(repo: Path) -> None:
    assert _run(GITODB, repo, "multi-pack-index", "write", "--incremental")[0] == 0
    _commit_packs(repo, "b")
    rc, out, _ = _run(
        GITODB, repo, "multi-pack-index", "write", "--incremental", "--no-write-chain-file"
    )
    assert rc == 0
    layer = out.decode().strip()
    assert (repo / CHAIN).read_text().split() != [layer]
    with open(repo / CHAIN, "a") as f:
        f.write(f"{layer}\n")
    assert _run(GITODB, repo, "multi-pack-index", "verify") == (0, b"", b"")
    path = repo / f".git/objects/pack/multi-pack-index.d/multi-pack-index-{layer}.midx"
    data = bytearray(path.read_bytes())
    data[-30] ^= 1  # inside the OOFF chunk, before the checksum
    path.chmod(0o644)
    path.write_bytes(bytes(data))
    rc, _, err = _run(GITODB, repo, "multi-pack-index", "verify")
    assert rc == 1 and b"incorrect checksum" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--no-write-chain-file"], b"cannot use --no-write-chain-file without --incremental"),
        (["--incremental", "--base=none"], b"cannot use --base without --no-write-chain-file"),
    ],
)
def test_option_errors_are_gits(repo: Path, args: list[str], message: bytes) -> None:
    rc, _, err = _run(GITODB, repo, "multi-pack-index", "write", *args)
    assert rc == 129
    assert err.startswith(b"error: " + message + b"\n")


@needs_255
def test_layer_bitmaps_are_gits(tmp_path: Path, repo: Path) -> None:
    git("tag", "tip-a", cwd=repo)
    _both(tmp_path, repo, ("multi-pack-index", "write", "--incremental", "--bitmap"))
    # the next layer over the same (Git's) base, by both
    shutil.rmtree(tmp_path / "gitodb")
    base = tmp_path / "git"
    _commit_packs(base, "b")
    git("tag", "tip-b", cwd=base)
    shutil.rmtree(tmp_path / "src")
    shutil.move(base, tmp_path / "src")
    _both(tmp_path, tmp_path / "src", ("multi-pack-index", "write", "--incremental", "--bitmap"))
    ours = tmp_path / "gitodb"
    assert len((ours / CHAIN).read_text().split()) == 2
    for tip in ("tip-a", "tip-b"):  # Git checks gitodb's layer bitmaps, and gitodb Git's
        assert _run([str(GIT255)], ours, "rev-list", "--test-bitmap", tip)[0] == 0
        assert _run(GITODB, tmp_path / "git", "rev-list", "--test-bitmap", tip)[0] == 0
    for args in (["--objects", "--all"], ["--count", "--objects", "tip-b", "^tip-a"]):
        want = _run([str(GIT255)], ours, "rev-list", "--use-bitmap-index", *args)
        assert _run(GITODB, ours, "rev-list", "--use-bitmap-index", *args)[:2] == want[:2]


def _layers(repo: Path, tags: str) -> list[str]:
    """One pack and one layer (with its bitmap) per tag, written by Git 2.55."""
    for tag in tags:
        (repo / f"{tag}.t").write_text(f"{tag}\n")
        git("add", ".", cwd=repo)
        git("commit", "-q", "-m", tag, cwd=repo)
        git("tag", f"tip-{tag}", cwd=repo)
        subprocess.run(
            [
                str(GIT255),
                "pack-objects",
                "-q",
                "--all",
                "--unpacked",
                f".git/objects/pack/pack-{tag}",
            ],
            cwd=repo,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=True,
        )
        git("prune-packed", cwd=repo)
        write = ("multi-pack-index", "write", "--incremental", "--bitmap")
        assert _run([str(GIT255)], repo, *write)[0] == 0
    return (repo / CHAIN).read_text().split()


@needs_255
@pytest.mark.parametrize(
    "how",
    [
        ["--bitmap", "{1}", "{3}"],
        ["--base={0}", "{2}", "{3}"],
        ["--base=none", "{0}", "{1}"],
        ["--no-write-chain-file", "--base={0}", "{1}", "{2}"],
    ],
)
def test_compaction_is_gits(tmp_path: Path, how: list[str]) -> None:
    """t5335: the layer replacing a run of layers keeps their packs in order, their
    objects where they were and their pseudo-pack order (the layers above stay)."""
    repo = tmp_path / "src"
    git("init", "-q", repo)
    chain = _layers(repo, "DCABE")
    args = [a.format(*chain) for a in how]
    _both(
        tmp_path,
        repo,
        ("multi-pack-index", "compact", "--incremental", *args),
        ("multi-pack-index", "verify"),
    )
    if "--bitmap" in how:  # the new layer's bitmap, and those above it, still hold
        ours = tmp_path / "gitodb"
        for tag in "DCABE":
            assert _run([str(GIT255)], ours, "rev-list", "--test-bitmap", f"tip-{tag}")[0] == 0


@needs_255
def test_compaction_errors_are_gits(tmp_path: Path) -> None:
    repo = tmp_path / "src"
    git("init", "-q", repo)
    a, b, c = _layers(repo, "ABC")
    for args, message in [
        (["<missing>", b], b"could not find MIDX: <missing>"),
        ([b, "<missing>"], b"could not find MIDX: <missing>"),
        ([c, a], f"MIDX {c} must be an ancestor of {a}".encode()),
        ([c, c], b"MIDX compaction endpoints must be unique"),
        (["--base=deadbeef", b, c], b"could not find base MIDX"),
    ]:
        theirs = _run([str(GIT255)], repo, "multi-pack-index", "compact", "--incremental", *args)
        ours = _run(GITODB, repo, "multi-pack-index", "compact", "--incremental", *args)
        assert theirs[0] != 0 and ours[0] != 0
        assert message in theirs[2] and message in ours[2]
    v1 = ("-c", "midx.version=1", "multi-pack-index", "compact", a, b)
    assert _run(GITODB, repo, *v1)[::2] == (
        128,
        b"fatal: cannot perform MIDX compaction with v1 format\n",
    )
    assert _run([str(GIT255)], repo, *v1)[0] == 128


@needs_255
def test_stdin_packs_limit_the_new_layer_like_git(tmp_path: Path, repo: Path) -> None:
    _commit_packs(repo, "b", 1)
    packs = sorted(p.name for p in (repo / ".git/objects/pack").glob("*.idx"))
    copies = []
    for name, cmd in (("git", [str(GIT255)]), ("gitodb", GITODB)):
        copy = tmp_path / name
        shutil.copytree(repo, copy, symlinks=True)
        for pack in packs[:2]:  # one layer per pack, as named on stdin
            p = subprocess.run(
                [*cmd, "multi-pack-index", "write", "--incremental", "--stdin-packs"],
                cwd=copy,
                env=git_env(),
                input=f"{pack}\n".encode(),
                capture_output=True,
                check=False,
            )
            assert p.returncode == 0, p.stderr
        copies.append(_pack_files(copy))
    assert copies[1] == copies[0]
    assert len((tmp_path / "gitodb" / CHAIN).read_text().split()) == 2


def test_a_damaged_single_midx_is_rewritten(repo: Path) -> None:
    # A MIDX ignored for its checksum is replaced, never taken for an up-to-date
    # chain (t5319 48); git 2.39 then verifies the new one.
    git("multi-pack-index", "write", cwd=repo)
    midx = repo / ".git/objects/pack/multi-pack-index"
    data = bytearray(midx.read_bytes())
    data[-30] ^= 0xFF  # inside the checksum: the contents stay readable
    midx.write_bytes(bytes(data))
    assert _run(["git"], repo, "multi-pack-index", "verify")[0] != 0
    code, _out, err = _run(GITODB, repo, "multi-pack-index", "write")
    assert code == 0
    assert b"ignoring existing multi-pack-index; checksum mismatch" in err
    assert _run(["git"], repo, "multi-pack-index", "verify")[0] == 0


def test_a_new_pack_wins_over_what_the_midx_holds_like_git(tmp_path: Path, repo: Path) -> None:
    # Git counts an object the MIDX already has as from an "old" pack (mtime 0):
    # a new pack's copy wins, whatever the mtimes, and expire then drops the packs
    # left unreferenced (t5319 79-83). Every pack here holds the same objects.
    git("repack", "-a", "-d", "-q", cwd=repo)
    pack_dir = repo / ".git/objects/pack"
    git("pack-objects", "-q", "--revs", str(pack_dir / "z-pack"), cwd=repo, input=b"HEAD\n")
    git("multi-pack-index", "write", cwd=repo)
    git("pack-objects", "-q", "--revs", str(pack_dir / "pack-all"), cwd=repo, input=b"HEAD\n")
    for pack in pack_dir.glob("*.pack"):
        os.utime(pack, (1_700_000_000, 1_700_000_000))  # one second for every pack
    left = []
    for name, cmd in (("git", ["git"]), ("gitodb", GITODB)):
        copy = tmp_path / name
        shutil.copytree(repo, copy, symlinks=True)
        for step in (("multi-pack-index", "write"), ("multi-pack-index", "expire")):
            assert _run(cmd, copy, *step)[0] == 0
        left.append(sorted(p.name for p in (copy / ".git/objects/pack").glob("*.pack")))
    assert left[1] == left[0]
    assert len(left[0]) == 1 and left[0][0].startswith("pack-all-")
